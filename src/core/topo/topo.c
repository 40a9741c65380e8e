/* topo.c - the process topology, locality strings and cpusets (hwloc) */
#include "config.h"

#include "core/topo/topo.h"

#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <hwloc.h>

/* ------------------------------------------------------------------ */
/* process topology                                                     */
/* ------------------------------------------------------------------ */

/* Guards proc_topo.  hwloc topologies are safe to query concurrently once
 * loaded, so the lock only covers loading, swapping and releasing. */
static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static pmix_topology_t proc_topo; /* source "hwloc" or NULL when unloaded */

static bool is_hwloc_source(const char *source)
{
    return source != NULL && strcasecmp(source, RDP_TOPO_SOURCE) == 0;
}

/* ---- opaque value hooks (deep copies of cpuset/topology values) ---- */

static void *ops_cpuset_copy(const char *source, const void *bitmap)
{
    if (!is_hwloc_source(source)) {
        rdp_log_error(CORE, "cannot copy a cpuset of source %s",
                      source != NULL ? source : "(none)");
        return NULL;
    }
    return hwloc_bitmap_dup((hwloc_const_bitmap_t)bitmap);
}

static void ops_cpuset_free(const char *source, void *bitmap)
{
    if (!is_hwloc_source(source)) {
        rdp_log_warn(CORE, "not freeing a cpuset of source %s",
                     source != NULL ? source : "(none)");
        return;
    }
    hwloc_bitmap_free((hwloc_bitmap_t)bitmap);
}

static bool is_proc_topology(const void *topology)
{
    bool same;

    pthread_mutex_lock(&topo_lock);
    same = (topology == proc_topo.topology);
    pthread_mutex_unlock(&topo_lock);
    return same;
}

/* The process topology is shared (it lives until rdp_topo_cleanup); any
 * other hwloc topology is duplicated, so every copy owns its object. */
static void *ops_topology_copy(const char *source, void *topology)
{
    hwloc_topology_t dup;

    if (!is_hwloc_source(source)) {
        rdp_log_error(CORE, "cannot copy a topology of source %s",
                      source != NULL ? source : "(none)");
        return NULL;
    }
    if (is_proc_topology(topology)) {
        return topology;
    }
    if (hwloc_topology_dup(&dup, (hwloc_topology_t)topology) != 0) {
        rdp_log_error(CORE, "cannot duplicate an hwloc topology: %m");
        return NULL;
    }
    return dup;
}

static void ops_topology_free(const char *source, void *topology)
{
    if (!is_hwloc_source(source)) {
        rdp_log_warn(CORE, "not freeing a topology of source %s",
                     source != NULL ? source : "(none)");
        return;
    }
    if (is_proc_topology(topology)) {
        return;
    }
    hwloc_topology_destroy((hwloc_topology_t)topology);
}

static const rdp_value_opaque_ops_t topo_opaque_ops = {
    .cpuset_copy   = ops_cpuset_copy,
    .cpuset_free   = ops_cpuset_free,
    .topology_copy = ops_topology_copy,
    .topology_free = ops_topology_free,
};

static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static void register_ops(void)
{
    rdp_value_set_opaque_ops(&topo_opaque_ops);
}

/* Every entry point that can create an hwloc object calls this; the
 * constructor covers values built by the host before any of them. */
static void ensure_ops(void)
{
    pthread_once(&ops_once, register_ops);
}

__attribute__((constructor)) static void topo_constructor(void)
{
    ensure_ops();
}

/* ---- loading ---- */

enum load_kind {
    LOAD_DISCOVER,
    LOAD_XML_BUFFER,
    LOAD_XML_FILE,
    LOAD_SYNTHETIC
};

static pmix_status_t load_new(enum load_kind kind, const char *arg,
                              hwloc_topology_t *topo_p)
{
    hwloc_topology_t t;
    int rc = 0;

    if (hwloc_topology_init(&t) != 0) {
        rdp_log_error(CORE, "cannot initialise an hwloc topology: %m");
        return PMIX_ERR_NOMEM;
    }
    switch (kind) {
    case LOAD_DISCOVER:
        break;
    case LOAD_XML_BUFFER:
        rc = hwloc_topology_set_xmlbuffer(t, arg, (int)strlen(arg) + 1);
        break;
    case LOAD_XML_FILE:
        rc = hwloc_topology_set_xml(t, arg);
        break;
    case LOAD_SYNTHETIC:
        rc = hwloc_topology_set_synthetic(t, arg);
        break;
    }
    if (rc != 0) {
        rdp_log_error(CORE, "hwloc rejected the topology description: %m");
        goto err_destroy;
    }
    /* XML given at init describes this machine: keep binding working */
    if (kind == LOAD_XML_BUFFER || kind == LOAD_XML_FILE) {
        hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    }
    if (hwloc_topology_load(t) != 0) {
        rdp_log_error(CORE, "cannot load the hwloc topology: %m");
        goto err_destroy;
    }
    *topo_p = t;
    return PMIX_SUCCESS;

err_destroy:
    hwloc_topology_destroy(t);
    return PMIX_ERR_BAD_PARAM;
}

/* Fill @a topo with source "hwloc" and @a t; takes @a t (destroyed on
 * error). */
static pmix_status_t fill_topology(pmix_topology_t *topo, hwloc_topology_t t)
{
    char *source = rdp_strdup(RDP_TOPO_SOURCE);

    if (source == NULL) {
        hwloc_topology_destroy(t);
        return PMIX_ERR_NOMEM;
    }
    topo->source   = source;
    topo->topology = t;
    return PMIX_SUCCESS;
}

/* Fill @a cpuset with source "hwloc" and @a bm; takes @a bm (freed on
 * error). */
static pmix_status_t fill_cpuset(pmix_cpuset_t *cpuset, hwloc_bitmap_t bm)
{
    char *source = rdp_strdup(RDP_TOPO_SOURCE);

    if (source == NULL) {
        hwloc_bitmap_free(bm);
        return PMIX_ERR_NOMEM;
    }
    cpuset->source = source;
    cpuset->bitmap = bm;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_topo_get(const pmix_topology_t **topo_p)
{
    hwloc_topology_t t;
    pmix_status_t st = PMIX_SUCCESS;

    ensure_ops();
    pthread_mutex_lock(&topo_lock);
    if (proc_topo.topology == NULL) {
        st = load_new(LOAD_DISCOVER, NULL, &t);
        if (st == PMIX_SUCCESS) {
            st = fill_topology(&proc_topo, t);
        } else {
            st = PMIX_ERR_NOT_AVAILABLE;
        }
    }
    pthread_mutex_unlock(&topo_lock);
    if (st == PMIX_SUCCESS) {
        *topo_p = &proc_topo;
    }
    return st;
}

/* Resolve @a topo (NULL: the process topology) to an hwloc topology. */
static pmix_status_t resolve(const pmix_topology_t *topo, hwloc_topology_t *t_p)
{
    const pmix_topology_t *pt = topo;
    pmix_status_t st;

    if (pt == NULL) {
        st = rdp_topo_get(&pt);
        if (st != PMIX_SUCCESS) {
            return st;
        }
    }
    if (!is_hwloc_source(pt->source)) {
        rdp_log_debug(CORE, "topology of source %s is not supported",
                      pt->source != NULL ? pt->source : "(none)");
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (pt->topology == NULL) {
        rdp_log_error(CORE, "topology has no hwloc object");
        return PMIX_ERR_BAD_PARAM;
    }
    *t_p = (hwloc_topology_t)pt->topology;
    return PMIX_SUCCESS;
}

/* Keys of init info that give the process topology, in priority order. */
static const char *const init_keys[] = {
    PMIX_TOPOLOGY2,    PMIX_TOPOLOGY,     PMIX_HWLOC_XML_V2,
    PMIX_TOPOLOGY_XML, PMIX_HWLOC_XML_V1, PMIX_TOPOLOGY_FILE,
};

static pmix_status_t topology_from_info(const pmix_info_t *info,
                                        hwloc_topology_t *t_p)
{
    const pmix_value_t *v = &info->value;
    const char *key       = info->key;

    if (PMIX_CHECK_KEY(info, PMIX_TOPOLOGY2)) {
        const pmix_topology_t *pt = v->data.topo;

        if (v->type != PMIX_TOPO || pt == NULL || pt->topology == NULL) {
            rdp_log_error(CORE, "%s must be a pmix_topology_t", key);
            return PMIX_ERR_BAD_PARAM;
        }
        if (!is_hwloc_source(pt->source)) {
            rdp_log_error(CORE, "%s: topology source %s is not supported", key,
                          pt->source != NULL ? pt->source : "(none)");
            return PMIX_ERR_NOT_SUPPORTED;
        }
        if (hwloc_topology_dup(t_p, (hwloc_topology_t)pt->topology) != 0) {
            rdp_log_error(CORE, "cannot duplicate the %s topology: %m", key);
            return PMIX_ERR_NOMEM;
        }
        return PMIX_SUCCESS;
    }
    if (PMIX_CHECK_KEY(info, PMIX_TOPOLOGY)) {
        if (v->type != PMIX_POINTER || v->data.ptr == NULL) {
            rdp_log_error(CORE, "%s must be an hwloc_topology_t pointer", key);
            return PMIX_ERR_BAD_PARAM;
        }
        if (hwloc_topology_dup(t_p, (hwloc_topology_t)v->data.ptr) != 0) {
            rdp_log_error(CORE, "cannot duplicate the %s topology: %m", key);
            return PMIX_ERR_NOMEM;
        }
        return PMIX_SUCCESS;
    }
    if (v->type != PMIX_STRING || v->data.string == NULL) {
        rdp_log_error(CORE, "%s must be a string", key);
        return PMIX_ERR_BAD_PARAM;
    }
    if (PMIX_CHECK_KEY(info, PMIX_TOPOLOGY_FILE)) {
        return load_new(LOAD_XML_FILE, v->data.string, t_p);
    }
    return load_new(LOAD_XML_BUFFER, v->data.string, t_p);
}

pmix_status_t rdp_topo_init(const pmix_info_t info[], size_t ninfo)
{
    const pmix_info_t *chosen = NULL;
    hwloc_topology_t t;
    pmix_status_t st;

    ensure_ops();
    if (info == NULL && ninfo != 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t k = 0; k < sizeof(init_keys) / sizeof(init_keys[0]); k++) {
        for (size_t i = 0; i < ninfo && chosen == NULL; i++) {
            if (PMIX_CHECK_KEY(&info[i], init_keys[k])) {
                chosen = &info[i];
            }
        }
    }
    if (chosen == NULL) {
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&topo_lock);
    if (proc_topo.topology != NULL) {
        pthread_mutex_unlock(&topo_lock);
        rdp_log_debug(CORE, "topology already loaded: ignoring %s",
                      chosen->key);
        return PMIX_SUCCESS;
    }
    st = topology_from_info(chosen, &t);
    if (st == PMIX_SUCCESS) {
        st = fill_topology(&proc_topo, t);
    }
    pthread_mutex_unlock(&topo_lock);
    if (st == PMIX_SUCCESS) {
        rdp_log_debug(CORE, "topology loaded from %s", chosen->key);
    }
    return st;
}

void rdp_topo_cleanup(void)
{
    pthread_mutex_lock(&topo_lock);
    if (proc_topo.topology != NULL) {
        hwloc_topology_destroy((hwloc_topology_t)proc_topo.topology);
    }
    rdp_free(proc_topo.source);
    proc_topo.source   = NULL;
    proc_topo.topology = NULL;
    pthread_mutex_unlock(&topo_lock);
}

pmix_status_t rdp_topo_load_synthetic(const char *desc, pmix_topology_t *topo)
{
    hwloc_topology_t t;
    pmix_status_t st;

    ensure_ops();
    if (desc == NULL || topo == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = load_new(LOAD_SYNTHETIC, desc, &t);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    return fill_topology(topo, t);
}

pmix_status_t rdp_topo_export_xml(const pmix_topology_t *topo, bool v1,
                                  char **xml_p)
{
    hwloc_topology_t t;
    char *buf;
    char *out;
    int len;
    pmix_status_t st;

    if (xml_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = resolve(topo, &t);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (hwloc_topology_export_xmlbuffer(
            t, &buf, &len, v1 ? HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1 : 0)
        != 0) {
        rdp_log_error(CORE, "cannot export the topology as XML: %m");
        return PMIX_ERROR;
    }
    /* hwloc's buffer must go back to hwloc; ours is libc's */
    out = rdp_strdup(buf);
    hwloc_free_xmlbuffer(t, buf);
    if (out == NULL) {
        return PMIX_ERR_NOMEM;
    }
    *xml_p = out;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_topo_machine_xml(char **xml_p)
{
    char source[]      = RDP_TOPO_SOURCE;
    pmix_topology_t pt = {NULL, NULL};
    hwloc_topology_t t;
    pmix_status_t st;

    if (xml_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (hwloc_topology_init(&t) != 0) {
        rdp_log_error(CORE, "cannot initialise an hwloc topology: %m");
        return PMIX_ERR_NOMEM;
    }
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT)
            != 0
        || hwloc_topology_load(t) != 0) {
        rdp_log_error(CORE, "cannot discover this machine's topology: %m");
        hwloc_topology_destroy(t);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    pt.source   = source;
    pt.topology = t;
    st          = rdp_topo_export_xml(&pt, false, xml_p);
    hwloc_topology_destroy(t);
    return st;
}

/* ------------------------------------------------------------------ */
/* index lists ("0-3,8")                                                */
/* ------------------------------------------------------------------ */

static bool parse_index(const char **p, const char *end, unsigned *v_p)
{
    unsigned long v = 0;
    const char *s   = *p;

    if (s == end || *s < '0' || *s > '9') {
        return false;
    }
    while (s < end && *s >= '0' && *s <= '9') {
        v = v * 10 + (unsigned long)(*s - '0');
        if (v >= RDP_TOPO_MAX_INDEX) {
            return false;
        }
        s++;
    }
    *p   = s;
    *v_p = (unsigned)v;
    return true;
}

/* Strictly parse the list in [s, end) into @a bm (emptied first). */
static bool parse_list(const char *s, const char *end, hwloc_bitmap_t bm)
{
    unsigned lo, hi;

    hwloc_bitmap_zero(bm);
    for (;;) {
        if (!parse_index(&s, end, &lo)) {
            return false;
        }
        hi = lo;
        if (s < end && *s == '-') {
            s++;
            if (!parse_index(&s, end, &hi) || hi < lo) {
                return false;
            }
        }
        if (hwloc_bitmap_set_range(bm, lo, (int)hi) != 0) {
            return false;
        }
        if (s == end) {
            return true;
        }
        if (*s != ',') {
            return false;
        }
        s++;
    }
}

/* Parse a cpuset string (optional "hwloc:" prefix) into a new bitmap.
 * *@a bm_p is NULL for an unbound process (NULL or empty string) when
 * @a allow_unbound. */
static pmix_status_t cpuset_string_parse(const char *str, bool allow_unbound,
                                         hwloc_bitmap_t *bm_p)
{
    const char *colon;
    const char *list = str;
    hwloc_bitmap_t bm;

    if (str == NULL || str[0] == '\0') {
        if (allow_unbound) {
            *bm_p = NULL;
            return PMIX_SUCCESS;
        }
        rdp_log_error(CORE, "empty cpuset string");
        return PMIX_ERR_BAD_PARAM;
    }
    colon = strchr(str, ':');
    if (colon != NULL) {
        if ((size_t)(colon - str) != strlen(RDP_TOPO_SOURCE)
            || strncasecmp(str, RDP_TOPO_SOURCE, strlen(RDP_TOPO_SOURCE))
                   != 0) {
            rdp_log_debug(CORE, "cpuset string \"%.32s\": unknown source", str);
            return PMIX_ERR_NOT_SUPPORTED;
        }
        list = colon + 1;
    }
    bm = hwloc_bitmap_alloc();
    if (bm == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (!parse_list(list, list + strlen(list), bm)) {
        rdp_log_error(CORE, "malformed cpuset string \"%.64s\"", str);
        hwloc_bitmap_free(bm);
        return PMIX_ERR_BAD_PARAM;
    }
    *bm_p = bm;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_topo_cpuset_parse(const char *str, pmix_cpuset_t *cpuset)
{
    hwloc_bitmap_t bm;
    pmix_status_t st;

    ensure_ops();
    if (cpuset == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = cpuset_string_parse(str, false, &bm);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    return fill_cpuset(cpuset, bm);
}

pmix_status_t rdp_topo_cpuset_print(const pmix_cpuset_t *cpuset, char **str_p)
{
    char *list;
    char *out;

    if (cpuset == NULL || str_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!is_hwloc_source(cpuset->source)) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (cpuset->bitmap == NULL) {
        rdp_log_error(CORE, "cpuset has no bitmap");
        return PMIX_ERR_BAD_PARAM;
    }
    if (hwloc_bitmap_list_asprintf(&list, cpuset->bitmap) < 0) {
        return PMIX_ERR_NOMEM;
    }
    if (asprintf(&out, "%s:%s", RDP_TOPO_SOURCE, list) < 0) {
        free(list);
        return PMIX_ERR_NOMEM;
    }
    free(list);
    *str_p = out;
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* locality strings                                                     */
/* ------------------------------------------------------------------ */

/* The object types of a locality string, their prefixes and the bit each
 * sets in a relative locality. */
typedef struct loc_field {
    const char *prefix;
    hwloc_obj_type_t type;
    pmix_locality_t bit;
} loc_field_t;

static const loc_field_t loc_fields[] = {
    {"NM", HWLOC_OBJ_NUMANODE, PMIX_LOCALITY_SHARE_NUMA},
    {"SK", HWLOC_OBJ_PACKAGE, PMIX_LOCALITY_SHARE_PACKAGE},
    {"L3", HWLOC_OBJ_L3CACHE, PMIX_LOCALITY_SHARE_L3CACHE},
    {"L2", HWLOC_OBJ_L2CACHE, PMIX_LOCALITY_SHARE_L2CACHE},
    {"L1", HWLOC_OBJ_L1CACHE, PMIX_LOCALITY_SHARE_L1CACHE},
    {"CR", HWLOC_OBJ_CORE, PMIX_LOCALITY_SHARE_CORE},
    {"HT", HWLOC_OBJ_PU, PMIX_LOCALITY_SHARE_HWTHREAD},
};

#define NFIELDS (sizeof(loc_fields) / sizeof(loc_fields[0]))

static const loc_field_t *field_of_type(hwloc_obj_type_t type)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        if (loc_fields[i].type == type) {
            return &loc_fields[i];
        }
    }
    return NULL;
}

/* Append "<prefix><list of objects of @a depth meeting @a cpus>" to @a f
 * when at least one does. */
static pmix_status_t emit_depth(FILE *f, hwloc_topology_t t, int depth,
                                const char *prefix, hwloc_const_bitmap_t cpus,
                                hwloc_bitmap_t scratch, bool *first)
{
    unsigned n = (unsigned)hwloc_get_nbobjs_by_depth(t, depth);
    char *list;

    hwloc_bitmap_zero(scratch);
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(t, depth, i);
        if (obj != NULL && obj->cpuset != NULL
            && hwloc_bitmap_intersects(obj->cpuset, cpus)) {
            hwloc_bitmap_set(scratch, obj->logical_index);
        }
    }
    if (hwloc_bitmap_iszero(scratch)) {
        return PMIX_SUCCESS;
    }
    if (hwloc_bitmap_list_asprintf(&list, scratch) < 0) {
        return PMIX_ERR_NOMEM;
    }
    fprintf(f, "%s%s%s", *first ? "" : ":", prefix, list);
    free(list);
    *first = false;
    return PMIX_SUCCESS;
}

/* Locality string of @a cpus in @a t; NULL when it covers every PU. */
static pmix_status_t locality_of(hwloc_topology_t t, hwloc_const_bitmap_t cpus,
                                 char **locality_p)
{
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(t);
    hwloc_bitmap_t scratch;
    bool first = true;
    char *out  = NULL;
    size_t outlen;
    FILE *f;
    int depth;
    pmix_status_t st = PMIX_SUCCESS;

    if (!hwloc_bitmap_intersects(all, cpus)) {
        rdp_log_error(CORE, "cpuset has no processing unit in the topology");
        return PMIX_ERR_BAD_PARAM;
    }
    if (hwloc_bitmap_isincluded(all, cpus)) {
        *locality_p = NULL; /* bound everywhere: not bound */
        return PMIX_SUCCESS;
    }
    scratch = hwloc_bitmap_alloc();
    if (scratch == NULL) {
        return PMIX_ERR_NOMEM;
    }
    f = open_memstream(&out, &outlen);
    if (f == NULL) {
        hwloc_bitmap_free(scratch);
        return PMIX_ERR_NOMEM;
    }
    /* NUMA nodes live at a virtual depth in hwloc 2: emit them first */
    depth = hwloc_get_type_depth(t, HWLOC_OBJ_NUMANODE);
    if (depth != HWLOC_TYPE_DEPTH_UNKNOWN
        && depth != HWLOC_TYPE_DEPTH_MULTIPLE) {
        st = emit_depth(f, t, depth, "NM", cpus, scratch, &first);
    }
    depth = hwloc_topology_get_depth(t);
    for (int d = 1; d < depth && st == PMIX_SUCCESS; d++) {
        const loc_field_t *lf = field_of_type(hwloc_get_depth_type(t, d));
        if (lf != NULL && lf->type != HWLOC_OBJ_NUMANODE) {
            st = emit_depth(f, t, d, lf->prefix, cpus, scratch, &first);
        }
    }
    hwloc_bitmap_free(scratch);
    if (fclose(f) != 0 && st == PMIX_SUCCESS) {
        st = PMIX_ERR_NOMEM;
    }
    if (st != PMIX_SUCCESS) {
        free(out);
        return st;
    }
    *locality_p = out;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_topo_locality_string(const pmix_topology_t *topo,
                                       const char *cpuset, char **locality_p)
{
    hwloc_topology_t t;
    hwloc_bitmap_t bm;
    pmix_status_t st;

    if (locality_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = cpuset_string_parse(cpuset, true, &bm);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (bm == NULL) {
        *locality_p = NULL;
        return PMIX_SUCCESS;
    }
    st = resolve(topo, &t);
    if (st == PMIX_SUCCESS) {
        st = locality_of(t, bm, locality_p);
    }
    hwloc_bitmap_free(bm);
    return st;
}

pmix_status_t rdp_topo_cpuset_locality(const pmix_cpuset_t *cpuset,
                                       char **locality_p)
{
    hwloc_topology_t t;
    pmix_status_t st;

    if (cpuset == NULL || locality_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (cpuset->source != NULL && !is_hwloc_source(cpuset->source)) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (cpuset->bitmap == NULL) {
        *locality_p = NULL;
        return PMIX_SUCCESS;
    }
    st = resolve(NULL, &t);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    return locality_of(t, (hwloc_const_bitmap_t)cpuset->bitmap, locality_p);
}

/* Parse a locality string: for each known prefix, the first field's list
 * into bms[i] (present[i] set).  Every field must be a two-character
 * prefix and a list; unknown prefixes are skipped. */
static pmix_status_t parse_locality(const char *loc, hwloc_bitmap_t bms[],
                                    bool present[], hwloc_bitmap_t scratch)
{
    const char *p = loc;

    if (loc == NULL || loc[0] == '\0') {
        return PMIX_SUCCESS;
    }
    for (;;) {
        const char *end       = strchr(p, ':');
        const loc_field_t *lf = NULL;
        size_t i;

        if (end == NULL) {
            end = p + strlen(p);
        }
        if (end - p < 3) {
            goto err_malformed;
        }
        for (i = 0; i < NFIELDS; i++) {
            if (strncmp(p, loc_fields[i].prefix, 2) == 0) {
                lf = &loc_fields[i];
                break;
            }
        }
        if (lf != NULL && !present[i]) {
            if (!parse_list(p + 2, end, bms[i])) {
                goto err_malformed;
            }
            present[i] = true;
        } else if (!parse_list(p + 2, end, scratch)) {
            goto err_malformed;
        }
        if (*end == '\0') {
            return PMIX_SUCCESS;
        }
        p = end + 1;
    }

err_malformed:
    rdp_log_error(CORE, "malformed locality string \"%.64s\"", loc);
    return PMIX_ERR_BAD_PARAM;
}

pmix_status_t rdp_topo_relative_locality(const char *loc1, const char *loc2,
                                         pmix_locality_t *locality_p)
{
    hwloc_bitmap_t b1[NFIELDS] = {NULL};
    hwloc_bitmap_t b2[NFIELDS] = {NULL};
    bool p1[NFIELDS]           = {false};
    bool p2[NFIELDS]           = {false};
    hwloc_bitmap_t scratch;
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE;
    pmix_status_t st    = PMIX_ERR_NOMEM;

    if (locality_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    scratch = hwloc_bitmap_alloc();
    if (scratch == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        b1[i] = hwloc_bitmap_alloc();
        b2[i] = hwloc_bitmap_alloc();
        if (b1[i] == NULL || b2[i] == NULL) {
            goto out_free;
        }
    }
    st = parse_locality(loc1, b1, p1, scratch);
    if (st == PMIX_SUCCESS) {
        st = parse_locality(loc2, b2, p2, scratch);
    }
    if (st != PMIX_SUCCESS) {
        goto out_free;
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        if (p1[i] && p2[i] && hwloc_bitmap_intersects(b1[i], b2[i])) {
            loc |= loc_fields[i].bit;
        }
    }
    *locality_p = loc;

out_free:
    for (size_t i = 0; i < NFIELDS; i++) {
        hwloc_bitmap_free(b1[i]);
        hwloc_bitmap_free(b2[i]);
    }
    hwloc_bitmap_free(scratch);
    return st;
}

pmix_status_t rdp_topo_count(const pmix_topology_t *topo, pmix_locality_t type,
                             unsigned *count_p)
{
    const loc_field_t *lf = NULL;
    hwloc_topology_t t;
    int n;
    pmix_status_t st;

    for (size_t i = 0; i < NFIELDS; i++) {
        if (loc_fields[i].bit == type) {
            lf = &loc_fields[i];
        }
    }
    if (lf == NULL || count_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = resolve(topo, &t);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    n        = hwloc_get_nbobjs_by_type(t, lf->type);
    *count_p = (n > 0) ? (unsigned)n : 0;
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* binding of the caller                                                */
/* ------------------------------------------------------------------ */

pmix_status_t rdp_topo_get_binding(bool thread, pmix_cpuset_t *cpuset)
{
    hwloc_topology_t t;
    hwloc_bitmap_t bm;
    pmix_status_t st;

    st = resolve(NULL, &t);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    bm = hwloc_bitmap_alloc();
    if (bm == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (hwloc_get_cpubind(t, bm,
                          thread ? HWLOC_CPUBIND_THREAD : HWLOC_CPUBIND_PROCESS)
        != 0) {
        rdp_log_error(CORE, "cannot read the %s binding: %m",
                      thread ? "thread" : "process");
        hwloc_bitmap_free(bm);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    return fill_cpuset(cpuset, bm);
}
