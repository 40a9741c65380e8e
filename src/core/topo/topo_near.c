/* topo_near.c - the network devices (HCAs) nearest a process's binding */
#include "config.h"

#include "core/topo/topo_near.h"

#include "core/topo/topo.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

/* The topology with its I/O devices, kept for the source it came from
 * (NULL: this machine).  The lock covers loading and every query, which
 * are short (a walk over the OS devices). */
static struct {
    pthread_mutex_t lock;
    bool loaded;
    char *source;
    hwloc_topology_t t;
} io = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void io_forget(void)
{
    if (io.loaded) {
        hwloc_topology_destroy(io.t);
    }
    rdp_free(io.source);
    io.source = NULL;
    io.loaded = false;
}

static bool same_source(const char *a, const char *b)
{
    return (a == NULL && b == NULL)
           || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Load the topology of @a xml_path (NULL: discover) with the I/O devices
 * that matter (hwloc drops them all by default).  Under io.lock. */
static pmix_status_t io_load(const char *xml_path)
{
    hwloc_topology_t t;

    if (io.loaded && same_source(io.source, xml_path)) {
        return PMIX_SUCCESS;
    }
    io_forget();
    if (hwloc_topology_init(&t) != 0) {
        rdp_log_error(CORE, "cannot initialise an hwloc topology: %m");
        return PMIX_ERR_NOMEM;
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (xml_path != NULL && hwloc_topology_set_xml(t, xml_path) != 0) {
        rdp_log_error(CORE, "hwloc cannot read the topology file %s: %m",
                      xml_path);
        goto err_destroy;
    }
    if (hwloc_topology_load(t) != 0) {
        rdp_log_error(CORE, "cannot load the hwloc topology%s%s: %m",
                      xml_path != NULL ? " of " : "",
                      xml_path != NULL ? xml_path : "");
        goto err_destroy;
    }
    io.source = xml_path != NULL ? rdp_strdup(xml_path) : NULL;
    if (xml_path != NULL && io.source == NULL) {
        hwloc_topology_destroy(t);
        return PMIX_ERR_NOMEM;
    }
    io.t      = t;
    io.loaded = true;
    return PMIX_SUCCESS;

err_destroy:
    hwloc_topology_destroy(t);
    return PMIX_ERR_BAD_PARAM;
}

/* The object type a locality-string field prefix names (topo.h) */
static bool prefix_type(const char *p, hwloc_obj_type_t *type_p)
{
    static const struct {
        char prefix[3];
        hwloc_obj_type_t type;
    } types[] = {
        {"NM", HWLOC_OBJ_NUMANODE}, {"SK", HWLOC_OBJ_PACKAGE},
        {"L3", HWLOC_OBJ_L3CACHE},  {"L2", HWLOC_OBJ_L2CACHE},
        {"L1", HWLOC_OBJ_L1CACHE},  {"CR", HWLOC_OBJ_CORE},
        {"HT", HWLOC_OBJ_PU},
    };

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strncmp(p, types[i].prefix, 2) == 0) {
            *type_p = types[i].type;
            return true;
        }
    }
    return false;
}

/* The cpus of the objects the last (deepest) field of @a locality names,
 * into @a bm.  A string's logical indexes only mean something in the
 * topology it was made from: the host's and this one must agree. */
static pmix_status_t locality_cpus(const char *locality, hwloc_bitmap_t bm)
{
    const char *field = strrchr(locality, ':');
    hwloc_obj_type_t type;
    hwloc_bitmap_t idx;
    int i;

    field = field != NULL ? field + 1 : locality;
    if (!prefix_type(field, &type) || field[2] == '\0') {
        goto err_malformed;
    }
    idx = hwloc_bitmap_alloc();
    if (idx == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (hwloc_bitmap_list_sscanf(idx, field + 2) != 0) {
        hwloc_bitmap_free(idx);
        goto err_malformed;
    }
    hwloc_bitmap_zero(bm);
    hwloc_bitmap_foreach_begin(i, idx)
    {
        hwloc_obj_t obj = hwloc_get_obj_by_type(io.t, type, (unsigned)i);

        if (obj != NULL && obj->cpuset != NULL) {
            hwloc_bitmap_or(bm, bm, obj->cpuset);
        }
    }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(idx);
    return PMIX_SUCCESS;

err_malformed:
    rdp_log_error(CORE, "malformed locality string \"%.64s\"", locality);
    return PMIX_ERR_BAD_PARAM;
}

/* The process's cpus into @a bm (under io.lock, topology loaded) */
static pmix_status_t binding_cpus(const char *cpuset, const char *locality,
                                  hwloc_bitmap_t bm)
{
    pmix_cpuset_t cs = {NULL, NULL};
    pmix_status_t st;

    if (cpuset == NULL) {
        return locality_cpus(locality, bm);
    }
    st = rdp_topo_cpuset_parse(cpuset, &cs);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    hwloc_bitmap_copy(bm, (hwloc_const_bitmap_t)cs.bitmap);
    hwloc_bitmap_free((hwloc_bitmap_t)cs.bitmap);
    rdp_free(cs.source);
    return PMIX_SUCCESS;
}

/* The ports of @a dev that are up ("PortNState" 4 is ACTIVE in the
 * kernel's numbering), appended to @a f as ",dev:N"; a device without
 * port infos is taken as port 1.  Returns how many it wrote. */
static unsigned emit_ports(FILE *f, hwloc_obj_t dev, unsigned written)
{
    unsigned described = 0, n = 0;

    for (unsigned i = 0; i < dev->infos_count; i++) {
        const struct hwloc_info_s *info = &dev->infos[i];
        unsigned port;
        int end = 0;

        if (sscanf(info->name, "Port%uState%n", &port, &end) != 1
            || info->name[end] != '\0') {
            continue;
        }
        described++;
        if (info->value[0] == '4') {
            fprintf(f, "%s%s:%u", written + n > 0 ? "," : "", dev->name, port);
            n++;
        }
    }
    if (described == 0) {
        fprintf(f, "%s%s:1", written > 0 ? "," : "", dev->name);
        n = 1;
    }
    return n;
}

/* How near @a dev is to @a where: the depth of their common ancestor */
static int nearness(hwloc_obj_t where, hwloc_obj_t dev)
{
    hwloc_obj_t home = hwloc_get_non_io_ancestor_obj(io.t, dev);

    return (int)hwloc_get_common_ancestor_obj(io.t, where, home)->depth;
}

static bool is_hca(hwloc_obj_t osdev)
{
    return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS
           && osdev->name != NULL;
}

/* Every port of the HCAs nearest @a cpus into *@a devices_p (NULL: none) */
static pmix_status_t nearest_of(hwloc_const_bitmap_t cpus, char **devices_p)
{
    hwloc_obj_t where = hwloc_get_obj_covering_cpuset(io.t, cpus);
    hwloc_obj_t dev   = NULL;
    int best          = -1;
    unsigned written  = 0;
    char *text        = NULL;
    size_t len        = 0;
    FILE *f;

    while ((dev = hwloc_get_next_osdev(io.t, dev)) != NULL) {
        if (is_hca(dev) && nearness(where, dev) > best) {
            best = nearness(where, dev);
        }
    }
    if (best < 0) {
        *devices_p = NULL;
        return PMIX_SUCCESS;
    }
    f = open_memstream(&text, &len);
    if (f == NULL) {
        return PMIX_ERR_NOMEM;
    }
    while ((dev = hwloc_get_next_osdev(io.t, dev)) != NULL) {
        if (is_hca(dev) && nearness(where, dev) == best) {
            written += emit_ports(f, dev, written);
        }
    }
    if (fclose(f) != 0) {
        free(text);
        return PMIX_ERR_NOMEM;
    }
    if (written == 0) {
        free(text);
        text = NULL;
    }
    *devices_p = text;
    return PMIX_SUCCESS;
}

static bool unbound(const char *s)
{
    return s == NULL || s[0] == '\0';
}

pmix_status_t rdp_topo_near_hcas(const char *xml_path, const char *cpuset,
                                 const char *locality, char **devices_p)
{
    hwloc_bitmap_t cpus;
    hwloc_const_bitmap_t all;
    pmix_status_t st;

    if (unbound(cpuset) && unbound(locality)) {
        *devices_p = NULL;
        return PMIX_SUCCESS;
    }
    cpus = hwloc_bitmap_alloc();
    if (cpus == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pthread_mutex_lock(&io.lock);
    st = io_load(xml_path);
    if (st == PMIX_SUCCESS) {
        st = binding_cpus(unbound(cpuset) ? NULL : cpuset, locality, cpus);
    }
    if (st == PMIX_SUCCESS) {
        all = hwloc_topology_get_topology_cpuset(io.t);
        hwloc_bitmap_and(cpus, cpus, all);
        if (hwloc_bitmap_iszero(cpus)) {
            rdp_log_error(CORE, "binding %.64s has no PU in the topology",
                          unbound(cpuset) ? locality : cpuset);
            st = PMIX_ERR_BAD_PARAM;
        } else if (hwloc_bitmap_isequal(cpus, all)) {
            *devices_p = NULL; /* every PU: nothing to choose by */
        } else {
            st = nearest_of(cpus, devices_p);
        }
    }
    pthread_mutex_unlock(&io.lock);
    hwloc_bitmap_free(cpus);
    return st;
}

void rdp_topo_near_cleanup(void)
{
    pthread_mutex_lock(&io.lock);
    io_forget();
    pthread_mutex_unlock(&io.lock);
}
