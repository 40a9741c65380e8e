/* value.c - deep copy, destruction and comparison of PMIx Standard data */
#include "config.h"
#include "core/util/value.h"
#include "core/util/alloc.h"

#include <stdint.h>
#include <string.h>

static const rdp_value_opaque_ops_t *opaque_ops;

void rdp_value_set_opaque_ops(const rdp_value_opaque_ops_t *ops)
{
    opaque_ops = ops;
}

bool rdp_value_held_by_pointer(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_VALUE:
    case PMIX_PROC:
    case PMIX_APP:
    case PMIX_INFO:
    case PMIX_PDATA:
    case PMIX_PROC_INFO:
    case PMIX_DATA_ARRAY:
    case PMIX_QUERY:
    case PMIX_COORD:
    case PMIX_REGATTR:
    case PMIX_PROC_CPUSET:
    case PMIX_GEOMETRY:
    case PMIX_DEVICE_DIST:
    case PMIX_ENDPOINT:
    case PMIX_TOPO:
    case PMIX_PROC_NSPACE:
    case PMIX_PROC_STATS:
    case PMIX_DISK_STATS:
    case PMIX_NET_STATS:
    case PMIX_NODE_STATS:
    case PMIX_DATA_BUFFER:
        return true;
    default:
        return false;
    }
}

/* Element types that own no memory: a bytewise copy is a deep copy. */
static bool is_flat(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_STRING:
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
    case PMIX_ENVAR:
        return false;
    case PMIX_PROC:
    case PMIX_PROC_NSPACE:
        return true;
    default:
        return !rdp_value_held_by_pointer(type)
               && rdpmix_darray_elem_size(type) != 0;
    }
}

/* Status for a type we cannot copy. */
static pmix_status_t unsupported(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_BUFFER:
    case PMIX_KVAL:
    case PMIX_COMMAND:
        return PMIX_ERR_NOT_SUPPORTED;
    default:
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
}

/* ------------------------------------------------------------------ */
/* small owned-memory helpers                                           */
/* ------------------------------------------------------------------ */

static pmix_status_t str_dup(const char *src, char **dst_p)
{
    *dst_p = NULL;
    if (src == NULL) {
        return PMIX_SUCCESS;
    }
    *dst_p = rdp_strdup(src);
    return (*dst_p == NULL) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static pmix_status_t bytes_dup(const void *src, size_t n, void **dst_p)
{
    *dst_p = NULL;
    if (src == NULL || n == 0) {
        return PMIX_SUCCESS;
    }
    *dst_p = rdp_malloc_to_fill(n);
    if (*dst_p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(*dst_p, src, n);
    return PMIX_SUCCESS;
}

static pmix_status_t argv_dup(char **src, char ***dst_p)
{
    *dst_p = NULL;
    if (src == NULL) {
        return PMIX_SUCCESS;
    }
    *dst_p = pmix_argv_copy(src);
    return (*dst_p == NULL) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static pmix_status_t bo_copy(pmix_byte_object_t *dst,
                             const pmix_byte_object_t *src)
{
    pmix_status_t st = bytes_dup(src->bytes, src->size, (void **)&dst->bytes);

    dst->size = (st == PMIX_SUCCESS && dst->bytes != NULL) ? src->size : 0;
    return st;
}

/* Allocate *@a dst_p and deep copy @a n elements into it (NULL for none). */
static pmix_status_t array_dup(pmix_data_type_t type, const void *src, size_t n,
                               void **dst_p)
{
    size_t esize = rdpmix_darray_elem_size(type);
    pmix_status_t st;
    void *dst;

    *dst_p = NULL;
    if (src == NULL || n == 0) {
        return PMIX_SUCCESS;
    }
    if (esize == 0) {
        return unsupported(type);
    }
    dst = rdp_calloc(n, esize);
    if (dst == NULL) {
        return PMIX_ERR_NOMEM;
    }
    st = rdp_elems_copy(type, dst, src, n);
    if (st != PMIX_SUCCESS) {
        rdp_free(dst);
        return st;
    }
    *dst_p = dst;
    return PMIX_SUCCESS;
}

/* Destruct @a n elements and free the array. */
static void array_free(pmix_data_type_t type, void *array, size_t n)
{
    if (array == NULL) {
        return;
    }
    rdp_elems_destruct(type, array, n);
    rdp_free(array);
}

/* ------------------------------------------------------------------ */
/* one element                                                          */
/* ------------------------------------------------------------------ */

static pmix_status_t info_copy_deep(pmix_info_t *dst, const pmix_info_t *src)
{
    PMIX_LOAD_KEY(dst->key, src->key);
    dst->flags = src->flags & ~(pmix_info_directives_t)PMIX_INFO_PERSISTENT;
    return rdp_value_copy(&dst->value, &src->value);
}

static pmix_status_t app_copy(pmix_app_t *dst, const pmix_app_t *src)
{
    pmix_status_t st;

    dst->maxprocs = src->maxprocs;
    st            = str_dup(src->cmd, &dst->cmd);
    if (st == PMIX_SUCCESS) {
        st = argv_dup(src->argv, &dst->argv);
    }
    if (st == PMIX_SUCCESS) {
        st = argv_dup(src->env, &dst->env);
    }
    if (st == PMIX_SUCCESS) {
        st = str_dup(src->cwd, &dst->cwd);
    }
    if (st == PMIX_SUCCESS) {
        st         = rdp_info_array_copy(&dst->info, src->info, src->ninfo);
        dst->ninfo = (dst->info != NULL) ? src->ninfo : 0;
    }
    return st;
}

static pmix_status_t darray_copy_into(pmix_data_array_t *dst,
                                      const pmix_data_array_t *src)
{
    pmix_status_t st;

    dst->type = src->type;
    st        = array_dup(src->type, src->array, src->size, &dst->array);
    dst->size = (dst->array != NULL) ? src->size : 0;
    return st;
}

static pmix_status_t geometry_copy(pmix_geometry_t *dst,
                                   const pmix_geometry_t *src)
{
    pmix_status_t st;

    dst->fabric = src->fabric;
    st          = str_dup(src->uuid, &dst->uuid);
    if (st == PMIX_SUCCESS) {
        st = str_dup(src->osname, &dst->osname);
    }
    if (st == PMIX_SUCCESS) {
        st           = array_dup(PMIX_COORD, src->coordinates, src->ncoords,
                                 (void **)&dst->coordinates);
        dst->ncoords = (dst->coordinates != NULL) ? src->ncoords : 0;
    }
    return st;
}

static pmix_status_t node_stats_copy(pmix_node_stats_t *dst,
                                     const pmix_node_stats_t *src)
{
    pmix_status_t st;

    *dst            = *src;
    dst->node       = NULL;
    dst->diskstats  = NULL;
    dst->ndiskstats = 0;
    dst->netstats   = NULL;
    dst->nnetstats  = 0;
    st              = str_dup(src->node, &dst->node);
    if (st == PMIX_SUCCESS) {
        st = array_dup(PMIX_DISK_STATS, src->diskstats, src->ndiskstats,
                       (void **)&dst->diskstats);
        dst->ndiskstats = (dst->diskstats != NULL) ? src->ndiskstats : 0;
    }
    if (st == PMIX_SUCCESS) {
        st = array_dup(PMIX_NET_STATS, src->netstats, src->nnetstats,
                       (void **)&dst->netstats);
        dst->nnetstats = (dst->netstats != NULL) ? src->nnetstats : 0;
    }
    return st;
}

static pmix_status_t dbuf_copy(pmix_data_buffer_t *dst,
                               const pmix_data_buffer_t *src)
{
    size_t used = src->bytes_used;
    pmix_status_t st;

    if (src->base_ptr == NULL || used == 0) {
        return PMIX_SUCCESS;
    }
    st = bytes_dup(src->base_ptr, used, (void **)&dst->base_ptr);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    dst->bytes_allocated = used;
    dst->bytes_used      = used;
    dst->pack_ptr        = dst->base_ptr + used;
    dst->unpack_ptr      = dst->base_ptr;
    if (src->unpack_ptr != NULL && src->unpack_ptr >= src->base_ptr
        && (size_t)(src->unpack_ptr - src->base_ptr) <= used) {
        dst->unpack_ptr += src->unpack_ptr - src->base_ptr;
    }
    return PMIX_SUCCESS;
}

/* Deep copy one element; @a dst is zeroed.  On error @a dst may be
 * partially filled (elem_destruct cleans it). */
static pmix_status_t elem_copy(pmix_data_type_t type, void *dst,
                               const void *src)
{
    pmix_status_t st = PMIX_SUCCESS;

    switch (type) {
    case PMIX_STRING:
        return str_dup(*(char *const *)src, (char **)dst);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        return bo_copy(dst, src);
    case PMIX_ENVAR: {
        const pmix_envar_t *s = src;
        pmix_envar_t *d       = dst;
        d->separator          = s->separator;
        st                    = str_dup(s->envar, &d->envar);
        return (st == PMIX_SUCCESS) ? str_dup(s->value, &d->value) : st;
    }
    case PMIX_VALUE:
        return rdp_value_copy(dst, src);
    case PMIX_INFO:
        return info_copy_deep(dst, src);
    case PMIX_PDATA: {
        const pmix_pdata_t *s = src;
        pmix_pdata_t *d       = dst;
        d->proc               = s->proc;
        PMIX_LOAD_KEY(d->key, s->key);
        return rdp_value_copy(&d->value, &s->value);
    }
    case PMIX_APP:
        return app_copy(dst, src);
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *s = src;
        pmix_proc_info_t *d       = dst;
        d->proc                   = s->proc;
        d->pid                    = s->pid;
        d->exit_code              = s->exit_code;
        d->state                  = s->state;
        st                        = str_dup(s->hostname, &d->hostname);
        if (st == PMIX_SUCCESS) {
            st = str_dup(s->executable_name, &d->executable_name);
        }
        return st;
    }
    case PMIX_DATA_ARRAY:
        return darray_copy_into(dst, src);
    case PMIX_QUERY: {
        const pmix_query_t *s = src;
        pmix_query_t *d       = dst;
        st                    = argv_dup(s->keys, &d->keys);
        if (st == PMIX_SUCCESS) {
            st = rdp_info_array_copy(&d->qualifiers, s->qualifiers, s->nqual);
            d->nqual = (d->qualifiers != NULL) ? s->nqual : 0;
        }
        return st;
    }
    case PMIX_COORD: {
        const pmix_coord_t *s = src;
        pmix_coord_t *d       = dst;
        d->view               = s->view;
        st =
            bytes_dup(s->coord, s->dims * sizeof(uint32_t), (void **)&d->coord);
        d->dims = (d->coord != NULL) ? s->dims : 0;
        return st;
    }
    case PMIX_REGATTR: {
        const pmix_regattr_t *s = src;
        pmix_regattr_t *d       = dst;
        PMIX_LOAD_KEY(d->string, s->string);
        d->type = s->type;
        st      = str_dup(s->name, &d->name);
        return (st == PMIX_SUCCESS) ? argv_dup(s->description, &d->description)
                                    : st;
    }
    case PMIX_PROC_CPUSET: {
        const pmix_cpuset_t *s = src;
        pmix_cpuset_t *d       = dst;
        st                     = str_dup(s->source, &d->source);
        if (st == PMIX_SUCCESS && s->bitmap != NULL && opaque_ops != NULL
            && opaque_ops->cpuset_copy != NULL) {
            d->bitmap = opaque_ops->cpuset_copy(s->source, s->bitmap);
            st        = (d->bitmap == NULL) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
        }
        return st;
    }
    case PMIX_TOPO: {
        const pmix_topology_t *s = src;
        pmix_topology_t *d       = dst;
        st                       = str_dup(s->source, &d->source);
        if (st == PMIX_SUCCESS && s->topology != NULL && opaque_ops != NULL
            && opaque_ops->topology_copy != NULL) {
            d->topology = opaque_ops->topology_copy(s->source, s->topology);
            st          = (d->topology == NULL) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
        }
        return st;
    }
    case PMIX_GEOMETRY:
        return geometry_copy(dst, src);
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *s = src;
        pmix_device_distance_t *d       = dst;
        d->type                         = s->type;
        d->mindist                      = s->mindist;
        d->maxdist                      = s->maxdist;
        st                              = str_dup(s->uuid, &d->uuid);
        return (st == PMIX_SUCCESS) ? str_dup(s->osname, &d->osname) : st;
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *s = src;
        pmix_endpoint_t *d       = dst;
        st                       = str_dup(s->uuid, &d->uuid);
        if (st == PMIX_SUCCESS) {
            st = str_dup(s->osname, &d->osname);
        }
        return (st == PMIX_SUCCESS) ? bo_copy(&d->endpt, &s->endpt) : st;
    }
    case PMIX_PROC_STATS: {
        const pmix_proc_stats_t *s = src;
        pmix_proc_stats_t *d       = dst;
        *d                         = *s;
        d->node                    = NULL;
        d->cmd                     = NULL;
        st                         = str_dup(s->node, &d->node);
        return (st == PMIX_SUCCESS) ? str_dup(s->cmd, &d->cmd) : st;
    }
    case PMIX_DISK_STATS: {
        const pmix_disk_stats_t *s = src;
        pmix_disk_stats_t *d       = dst;
        *d                         = *s;
        d->disk                    = NULL;
        return str_dup(s->disk, &d->disk);
    }
    case PMIX_NET_STATS: {
        const pmix_net_stats_t *s = src;
        pmix_net_stats_t *d       = dst;
        *d                        = *s;
        d->net_interface          = NULL;
        return str_dup(s->net_interface, &d->net_interface);
    }
    case PMIX_NODE_STATS:
        return node_stats_copy(dst, src);
    case PMIX_DATA_BUFFER:
        return dbuf_copy(dst, src);
    default:
        if (!is_flat(type)) {
            return unsupported(type);
        }
        memcpy(dst, src, rdpmix_darray_elem_size(type));
        return PMIX_SUCCESS;
    }
}

/* Free what one element owns (the element storage itself is kept). */
static void elem_destruct(pmix_data_type_t type, void *elem)
{
    switch (type) {
    case PMIX_STRING:
        rdp_free(*(char **)elem);
        break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        rdp_free(((pmix_byte_object_t *)elem)->bytes);
        break;
    case PMIX_ENVAR:
        rdp_free(((pmix_envar_t *)elem)->envar);
        rdp_free(((pmix_envar_t *)elem)->value);
        break;
    case PMIX_VALUE:
        rdp_value_destruct(elem);
        break;
    case PMIX_INFO:
        if (!PMIX_INFO_IS_PERSISTENT((pmix_info_t *)elem)) {
            rdp_value_destruct(&((pmix_info_t *)elem)->value);
        }
        break;
    case PMIX_PDATA:
        rdp_value_destruct(&((pmix_pdata_t *)elem)->value);
        break;
    case PMIX_APP: {
        pmix_app_t *a = elem;
        rdp_free(a->cmd);
        pmix_argv_free(a->argv);
        pmix_argv_free(a->env);
        rdp_free(a->cwd);
        rdp_info_array_free(a->info, a->ninfo);
        break;
    }
    case PMIX_PROC_INFO:
        rdp_free(((pmix_proc_info_t *)elem)->hostname);
        rdp_free(((pmix_proc_info_t *)elem)->executable_name);
        break;
    case PMIX_DATA_ARRAY:
        rdp_data_array_destruct(elem);
        break;
    case PMIX_QUERY:
        pmix_argv_free(((pmix_query_t *)elem)->keys);
        rdp_info_array_free(((pmix_query_t *)elem)->qualifiers,
                            ((pmix_query_t *)elem)->nqual);
        break;
    case PMIX_COORD:
        rdp_free(((pmix_coord_t *)elem)->coord);
        break;
    case PMIX_REGATTR:
        rdp_free(((pmix_regattr_t *)elem)->name);
        pmix_argv_free(((pmix_regattr_t *)elem)->description);
        break;
    case PMIX_PROC_CPUSET: {
        pmix_cpuset_t *c = elem;
        if (c->bitmap != NULL && opaque_ops != NULL
            && opaque_ops->cpuset_free != NULL) {
            opaque_ops->cpuset_free(c->source, c->bitmap);
        }
        rdp_free(c->source);
        break;
    }
    case PMIX_TOPO: {
        pmix_topology_t *t = elem;
        if (t->topology != NULL && opaque_ops != NULL
            && opaque_ops->topology_free != NULL) {
            opaque_ops->topology_free(t->source, t->topology);
        }
        rdp_free(t->source);
        break;
    }
    case PMIX_GEOMETRY: {
        pmix_geometry_t *g = elem;
        rdp_free(g->uuid);
        rdp_free(g->osname);
        array_free(PMIX_COORD, g->coordinates, g->ncoords);
        break;
    }
    case PMIX_DEVICE_DIST:
        rdp_free(((pmix_device_distance_t *)elem)->uuid);
        rdp_free(((pmix_device_distance_t *)elem)->osname);
        break;
    case PMIX_ENDPOINT:
        rdp_free(((pmix_endpoint_t *)elem)->uuid);
        rdp_free(((pmix_endpoint_t *)elem)->osname);
        rdp_free(((pmix_endpoint_t *)elem)->endpt.bytes);
        break;
    case PMIX_PROC_STATS:
        rdp_free(((pmix_proc_stats_t *)elem)->node);
        rdp_free(((pmix_proc_stats_t *)elem)->cmd);
        break;
    case PMIX_DISK_STATS:
        rdp_free(((pmix_disk_stats_t *)elem)->disk);
        break;
    case PMIX_NET_STATS:
        rdp_free(((pmix_net_stats_t *)elem)->net_interface);
        break;
    case PMIX_NODE_STATS: {
        pmix_node_stats_t *n = elem;
        rdp_free(n->node);
        array_free(PMIX_DISK_STATS, n->diskstats, n->ndiskstats);
        array_free(PMIX_NET_STATS, n->netstats, n->nnetstats);
        break;
    }
    case PMIX_DATA_BUFFER:
        rdp_free(((pmix_data_buffer_t *)elem)->base_ptr);
        break;
    default:
        break; /* flat or unknown: owns nothing we know of */
    }
}

/* ------------------------------------------------------------------ */
/* element arrays                                                       */
/* ------------------------------------------------------------------ */

pmix_status_t rdp_elems_copy(pmix_data_type_t type, void *dst, const void *src,
                             size_t n)
{
    size_t esize  = rdpmix_darray_elem_size(type);
    const char *s = src;
    char *d       = dst;
    pmix_status_t st;
    size_t i;

    if (n == 0) {
        return PMIX_SUCCESS;
    }
    if (esize == 0) {
        return unsupported(type);
    }
    if (is_flat(type)) {
        memcpy(dst, src, n * esize);
        return PMIX_SUCCESS;
    }
    memset(dst, 0, n * esize);
    for (i = 0; i < n; i++) {
        st = elem_copy(type, d + i * esize, s + i * esize);
        if (st != PMIX_SUCCESS) {
            rdp_elems_destruct(type, dst, i + 1);
            return st;
        }
    }
    return PMIX_SUCCESS;
}

void rdp_elems_destruct(pmix_data_type_t type, void *elems, size_t n)
{
    size_t esize = rdpmix_darray_elem_size(type);
    char *p      = elems;
    size_t i;

    if (elems == NULL || esize == 0) {
        return;
    }
    if (!is_flat(type)) {
        for (i = 0; i < n; i++) {
            elem_destruct(type, p + i * esize);
        }
    }
    memset(elems, 0, n * esize);
}

/* ------------------------------------------------------------------ */
/* values, infos and data arrays                                        */
/* ------------------------------------------------------------------ */

pmix_status_t rdp_value_copy(pmix_value_t *dst, const pmix_value_t *src)
{
    pmix_value_t tmp;
    pmix_status_t st;

    memset(&tmp, 0, sizeof(tmp));
    tmp.type = src->type;
    if (src->type == PMIX_UNDEF) {
        st = PMIX_SUCCESS;
    } else if (src->type == PMIX_POINTER) {
        tmp.data.ptr = src->data.ptr;
        st           = PMIX_SUCCESS;
    } else if (rdp_value_held_by_pointer(src->type)) {
        st = array_dup(src->type, src->data.ptr, 1, &tmp.data.ptr);
    } else {
        st = rdp_elems_copy(src->type, &tmp.data, &src->data, 1);
    }
    if (st != PMIX_SUCCESS) {
        memset(dst, 0, sizeof(*dst));
        dst->type = PMIX_UNDEF;
        return st;
    }
    *dst = tmp;
    return PMIX_SUCCESS;
}

void rdp_value_destruct(pmix_value_t *v)
{
    if (v == NULL) {
        return;
    }
    if (v->type == PMIX_POINTER) {
        /* never ours */
    } else if (rdp_value_held_by_pointer(v->type)) {
        array_free(v->type, v->data.ptr, 1);
    } else {
        rdp_elems_destruct(v->type, &v->data, 1);
    }
    memset(&v->data, 0, sizeof(v->data));
    v->type = PMIX_UNDEF;
}

pmix_status_t rdp_info_copy(pmix_info_t *dst, const pmix_info_t *src)
{
    pmix_status_t st = info_copy_deep(dst, src);

    if (st != PMIX_SUCCESS) {
        PMIX_INFO_CONSTRUCT(dst);
    }
    return st;
}

pmix_status_t rdp_info_array_copy(pmix_info_t **dst_p, const pmix_info_t *src,
                                  size_t n)
{
    pmix_info_t *dst;
    pmix_status_t st;
    size_t i;

    *dst_p = NULL;
    st     = array_dup(PMIX_INFO, src, n, (void **)&dst);
    if (st != PMIX_SUCCESS || dst == NULL) {
        return st;
    }
    for (i = 0; i < n; i++) {
        dst[i].flags &= ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END;
    }
    PMIX_INFO_SET_END(&dst[n - 1]);
    *dst_p = dst;
    return PMIX_SUCCESS;
}

void rdp_info_array_free(pmix_info_t *info, size_t n)
{
    array_free(PMIX_INFO, info, n);
}

pmix_status_t rdp_data_array_copy(pmix_data_array_t **dst_p,
                                  const pmix_data_array_t *src)
{
    return array_dup(PMIX_DATA_ARRAY, src, 1, (void **)dst_p);
}

void rdp_data_array_destruct(pmix_data_array_t *da)
{
    if (da == NULL) {
        return;
    }
    if (da->array != NULL) {
        rdp_elems_destruct(da->type, da->array, da->size);
        rdp_free(da->array);
    }
    da->array = NULL;
    da->size  = 0;
}

void rdp_data_array_free(pmix_data_array_t *da)
{
    rdp_data_array_destruct(da);
    rdp_free(da);
}

/* ------------------------------------------------------------------ */
/* comparison                                                           */
/* ------------------------------------------------------------------ */

/* -1, 0 or 1 */
#define CMP_NUM(a, b) (((a) > (b)) - ((a) < (b)))

/* return the first non-zero comparison */
#define RETURN_IF_DIFF(expr) \
    do {                     \
        int _d = (expr);     \
        if (_d != 0) {       \
            return _d;       \
        }                    \
    } while (0)

static int cmp_str(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return CMP_NUM(a != NULL, b != NULL);
    }
    return CMP_NUM(strcmp(a, b), 0);
}

static int cmp_bytes(const void *a, size_t na, const void *b, size_t nb)
{
    RETURN_IF_DIFF(CMP_NUM(na, nb));
    if (na == 0 || a == NULL || b == NULL) {
        return CMP_NUM(a != NULL, b != NULL);
    }
    return CMP_NUM(memcmp(a, b, na), 0);
}

static int cmp_argv(char **a, char **b)
{
    int i;

    if (a == NULL || b == NULL) {
        return CMP_NUM(a != NULL, b != NULL);
    }
    for (i = 0; a[i] != NULL && b[i] != NULL; i++) {
        RETURN_IF_DIFF(cmp_str(a[i], b[i]));
    }
    return CMP_NUM(a[i] != NULL, b[i] != NULL);
}

static int cmp_elems(pmix_data_type_t type, const void *a, const void *b,
                     size_t n);
static int cmp_value(const pmix_value_t *a, const pmix_value_t *b);

static int cmp_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    RETURN_IF_DIFF(CMP_NUM(strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN), 0));
    return CMP_NUM(a->rank, b->rank);
}

static int cmp_info(const pmix_info_t *a, const pmix_info_t *b)
{
    RETURN_IF_DIFF(CMP_NUM(strncmp(a->key, b->key, PMIX_MAX_KEYLEN), 0));
    return cmp_value(&a->value, &b->value);
}

static int cmp_counted(pmix_data_type_t type, const void *a, size_t na,
                       const void *b, size_t nb)
{
    RETURN_IF_DIFF(CMP_NUM(na, nb));
    if (a == NULL || b == NULL) {
        return CMP_NUM(a != NULL, b != NULL);
    }
    return cmp_elems(type, a, b, na);
}

/* unsigned scalars of every width */
static int cmp_unsigned(const void *a, const void *b, size_t width)
{
    switch (width) {
    case 1:
        return CMP_NUM(*(const uint8_t *)a, *(const uint8_t *)b);
    case 2:
        return CMP_NUM(*(const uint16_t *)a, *(const uint16_t *)b);
    case 4:
        return CMP_NUM(*(const uint32_t *)a, *(const uint32_t *)b);
    case 8:
        return CMP_NUM(*(const uint64_t *)a, *(const uint64_t *)b);
    default:
        return 0;
    }
}

static int cmp_elem(pmix_data_type_t type, const void *a, const void *b);

static int cmp_proc_stats(const pmix_proc_stats_t *x,
                          const pmix_proc_stats_t *y)
{
    RETURN_IF_DIFF(cmp_str(x->node, y->node));
    RETURN_IF_DIFF(cmp_proc(&x->proc, &y->proc));
    RETURN_IF_DIFF(CMP_NUM(x->pid, y->pid));
    RETURN_IF_DIFF(cmp_str(x->cmd, y->cmd));
    RETURN_IF_DIFF(CMP_NUM(x->state, y->state));
    RETURN_IF_DIFF(cmp_elem(PMIX_TIMEVAL, &x->time, &y->time));
    RETURN_IF_DIFF(CMP_NUM(x->percent_cpu, y->percent_cpu));
    RETURN_IF_DIFF(CMP_NUM(x->priority, y->priority));
    RETURN_IF_DIFF(CMP_NUM(x->num_threads, y->num_threads));
    RETURN_IF_DIFF(CMP_NUM(x->pss, y->pss));
    RETURN_IF_DIFF(CMP_NUM(x->vsize, y->vsize));
    RETURN_IF_DIFF(CMP_NUM(x->rss, y->rss));
    RETURN_IF_DIFF(CMP_NUM(x->peak_vsize, y->peak_vsize));
    RETURN_IF_DIFF(CMP_NUM(x->processor, y->processor));
    return cmp_elem(PMIX_TIMEVAL, &x->sample_time, &y->sample_time);
}

static int cmp_elem(pmix_data_type_t type, const void *a, const void *b)
{
    switch (type) {
    case PMIX_BOOL:
        return CMP_NUM(*(const bool *)a, *(const bool *)b);
    case PMIX_INT8:
        return CMP_NUM(*(const int8_t *)a, *(const int8_t *)b);
    case PMIX_INT16:
        return CMP_NUM(*(const int16_t *)a, *(const int16_t *)b);
    case PMIX_INT:
    case PMIX_INT32:
    case PMIX_STATUS:
    case PMIX_PID:
        return CMP_NUM(*(const int32_t *)a, *(const int32_t *)b);
    case PMIX_INT64:
    case PMIX_TIME:
        return CMP_NUM(*(const int64_t *)a, *(const int64_t *)b);
    case PMIX_FLOAT:
        return CMP_NUM(*(const float *)a, *(const float *)b);
    case PMIX_DOUBLE:
        return CMP_NUM(*(const double *)a, *(const double *)b);
    case PMIX_TIMEVAL: {
        const struct timeval *x = a, *y = b;
        RETURN_IF_DIFF(CMP_NUM(x->tv_sec, y->tv_sec));
        return CMP_NUM(x->tv_usec, y->tv_usec);
    }
    case PMIX_POINTER:
        return CMP_NUM(*(const uintptr_t *)a, *(const uintptr_t *)b);
    case PMIX_STRING:
        return cmp_str(*(char *const *)a, *(char *const *)b);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX: {
        const pmix_byte_object_t *x = a, *y = b;
        return cmp_bytes(x->bytes, x->size, y->bytes, y->size);
    }
    case PMIX_ENVAR: {
        const pmix_envar_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->envar, y->envar));
        RETURN_IF_DIFF(cmp_str(x->value, y->value));
        return CMP_NUM(x->separator, y->separator);
    }
    case PMIX_PROC:
        return cmp_proc(a, b);
    case PMIX_PROC_NSPACE:
        return CMP_NUM(strncmp(a, b, PMIX_MAX_NSLEN), 0);
    case PMIX_VALUE:
        return cmp_value(a, b);
    case PMIX_INFO:
        return cmp_info(a, b);
    case PMIX_PDATA: {
        const pmix_pdata_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_proc(&x->proc, &y->proc));
        RETURN_IF_DIFF(CMP_NUM(strncmp(x->key, y->key, PMIX_MAX_KEYLEN), 0));
        return cmp_value(&x->value, &y->value);
    }
    case PMIX_APP: {
        const pmix_app_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->cmd, y->cmd));
        RETURN_IF_DIFF(cmp_argv(x->argv, y->argv));
        RETURN_IF_DIFF(cmp_argv(x->env, y->env));
        RETURN_IF_DIFF(cmp_str(x->cwd, y->cwd));
        RETURN_IF_DIFF(CMP_NUM(x->maxprocs, y->maxprocs));
        return cmp_counted(PMIX_INFO, x->info, x->ninfo, y->info, y->ninfo);
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_proc(&x->proc, &y->proc));
        RETURN_IF_DIFF(cmp_str(x->hostname, y->hostname));
        RETURN_IF_DIFF(cmp_str(x->executable_name, y->executable_name));
        RETURN_IF_DIFF(CMP_NUM(x->pid, y->pid));
        RETURN_IF_DIFF(CMP_NUM(x->exit_code, y->exit_code));
        return CMP_NUM(x->state, y->state);
    }
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *x = a, *y = b;
        RETURN_IF_DIFF(CMP_NUM(x->type, y->type));
        return cmp_counted(x->type, x->array, x->size, y->array, y->size);
    }
    case PMIX_QUERY: {
        const pmix_query_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_argv(x->keys, y->keys));
        return cmp_counted(PMIX_INFO, x->qualifiers, x->nqual, y->qualifiers,
                           y->nqual);
    }
    case PMIX_COORD: {
        const pmix_coord_t *x = a, *y = b;
        RETURN_IF_DIFF(CMP_NUM(x->view, y->view));
        return cmp_counted(PMIX_UINT32, x->coord, x->dims, y->coord, y->dims);
    }
    case PMIX_REGATTR: {
        const pmix_regattr_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->name, y->name));
        RETURN_IF_DIFF(
            CMP_NUM(strncmp(x->string, y->string, PMIX_MAX_KEYLEN), 0));
        RETURN_IF_DIFF(CMP_NUM(x->type, y->type));
        return cmp_argv(x->description, y->description);
    }
    case PMIX_PROC_CPUSET: /* the opaque bitmap is not compared */
        return cmp_str(((const pmix_cpuset_t *)a)->source,
                       ((const pmix_cpuset_t *)b)->source);
    case PMIX_TOPO: /* the opaque topology is not compared */
        return cmp_str(((const pmix_topology_t *)a)->source,
                       ((const pmix_topology_t *)b)->source);
    case PMIX_GEOMETRY: {
        const pmix_geometry_t *x = a, *y = b;
        RETURN_IF_DIFF(CMP_NUM(x->fabric, y->fabric));
        RETURN_IF_DIFF(cmp_str(x->uuid, y->uuid));
        RETURN_IF_DIFF(cmp_str(x->osname, y->osname));
        return cmp_counted(PMIX_COORD, x->coordinates, x->ncoords,
                           y->coordinates, y->ncoords);
    }
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->uuid, y->uuid));
        RETURN_IF_DIFF(cmp_str(x->osname, y->osname));
        RETURN_IF_DIFF(CMP_NUM(x->type, y->type));
        RETURN_IF_DIFF(CMP_NUM(x->mindist, y->mindist));
        return CMP_NUM(x->maxdist, y->maxdist);
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->uuid, y->uuid));
        RETURN_IF_DIFF(cmp_str(x->osname, y->osname));
        return cmp_bytes(x->endpt.bytes, x->endpt.size, y->endpt.bytes,
                         y->endpt.size);
    }
    case PMIX_PROC_STATS:
        return cmp_proc_stats(a, b);
    case PMIX_DISK_STATS: {
        const pmix_disk_stats_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->disk, y->disk));
        /* eleven consecutive uint64_t counters */
        return cmp_elems(PMIX_UINT64, &x->num_reads_completed,
                         &y->num_reads_completed, 11);
    }
    case PMIX_NET_STATS: {
        const pmix_net_stats_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->net_interface, y->net_interface));
        /* six consecutive uint64_t counters */
        return cmp_elems(PMIX_UINT64, &x->num_bytes_recvd, &y->num_bytes_recvd,
                         6);
    }
    case PMIX_NODE_STATS: {
        const pmix_node_stats_t *x = a, *y = b;
        RETURN_IF_DIFF(cmp_str(x->node, y->node));
        /* eleven consecutive floats, la to mapped */
        RETURN_IF_DIFF(cmp_elems(PMIX_FLOAT, &x->la, &y->la, 11));
        RETURN_IF_DIFF(
            cmp_elem(PMIX_TIMEVAL, &x->sample_time, &y->sample_time));
        RETURN_IF_DIFF(cmp_counted(PMIX_DISK_STATS, x->diskstats, x->ndiskstats,
                                   y->diskstats, y->ndiskstats));
        return cmp_counted(PMIX_NET_STATS, x->netstats, x->nnetstats,
                           y->netstats, y->nnetstats);
    }
    case PMIX_DATA_BUFFER: {
        const pmix_data_buffer_t *x = a, *y = b;
        return cmp_bytes(x->base_ptr, x->bytes_used, y->base_ptr,
                         y->bytes_used);
    }
    default:
        return cmp_unsigned(a, b, rdpmix_darray_elem_size(type));
    }
}

static int cmp_elems(pmix_data_type_t type, const void *a, const void *b,
                     size_t n)
{
    size_t esize = rdpmix_darray_elem_size(type);
    size_t i;

    for (i = 0; i < n; i++) {
        RETURN_IF_DIFF(cmp_elem(type, (const char *)a + i * esize,
                                (const char *)b + i * esize));
    }
    return 0;
}

/* Total order of two values: by type, then contents. */
static int cmp_value(const pmix_value_t *a, const pmix_value_t *b)
{
    RETURN_IF_DIFF(CMP_NUM(a->type, b->type));
    if (a->type == PMIX_UNDEF || rdpmix_darray_elem_size(a->type) == 0) {
        return 0;
    }
    if (a->type != PMIX_POINTER && rdp_value_held_by_pointer(a->type)) {
        return cmp_counted(a->type, a->data.ptr, 1, b->data.ptr, 1);
    }
    return cmp_elem(a->type, &a->data, &b->data);
}

bool rdp_value_equal(const pmix_value_t *a, const pmix_value_t *b)
{
    if (a->type != PMIX_UNDEF && rdpmix_darray_elem_size(a->type) == 0) {
        return false; /* nothing known about the contents */
    }
    return cmp_value(a, b) == 0;
}

pmix_value_cmp_t rdp_value_compare(const pmix_value_t *a, const pmix_value_t *b)
{
    int d;

    if (a->type != b->type) {
        return PMIX_VALUE_TYPE_DIFFERENT;
    }
    if (a->type != PMIX_UNDEF && rdpmix_darray_elem_size(a->type) == 0) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
    d = cmp_value(a, b);
    if (d == 0) {
        return PMIX_EQUAL;
    }
    return (d > 0) ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER;
}

/* ------------------------------------------------------------------ */
/* exported Standard helpers                                            */
/* ------------------------------------------------------------------ */

/* Copy one element given the way the API passes it (@a data points to the
 * element, except for strings and pointers where it is the datum) into
 * @a dst (zeroed, rdpmix_darray_elem_size(type) bytes). */
static pmix_status_t load_elem(pmix_data_type_t type, void *dst,
                               const void *data)
{
    switch (type) {
    case PMIX_STRING:
        return str_dup(data, (char **)dst);
    case PMIX_POINTER:
        *(const void **)dst = data;
        return PMIX_SUCCESS;
    case PMIX_PROC_NSPACE:
        /* callers often pass a plain string: never read past its end */
        pmix_strncpy(dst, data, PMIX_MAX_NSLEN);
        return PMIX_SUCCESS;
    default:
        return rdp_elems_copy(type, dst, data, 1);
    }
}

pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
                              pmix_data_type_t type)
{
    size_t esize = rdpmix_darray_elem_size(type);
    pmix_status_t st;
    void *elem;

    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    memset(val, 0, sizeof(*val));
    if (type == PMIX_UNDEF) {
        return PMIX_SUCCESS;
    }
    if (esize == 0) {
        return unsupported(type);
    }
    if (data == NULL) {
        /* the type with empty data; a bare boolean attribute means true */
        val->type = type;
        if (type == PMIX_BOOL) {
            val->data.flag = true;
        }
        return PMIX_SUCCESS;
    }
    if (type == PMIX_POINTER || !rdp_value_held_by_pointer(type)) {
        st = load_elem(type, &val->data, data);
    } else {
        elem = rdp_calloc(1, esize);
        if (elem == NULL) {
            return PMIX_ERR_NOMEM;
        }
        st = load_elem(type, elem, data);
        if (st != PMIX_SUCCESS) {
            rdp_free(elem);
        } else {
            val->data.ptr = elem;
        }
    }
    if (st == PMIX_SUCCESS) {
        val->type = type;
    }
    return st;
}

pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz)
{
    const void *elem;
    pmix_status_t st;
    size_t esize;
    void *dst;

    if (val == NULL || data == NULL || sz == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    esize = rdpmix_darray_elem_size(val->type);
    if (val->type == PMIX_UNDEF || esize == 0) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    switch (val->type) {
    case PMIX_STRING:
        st = str_dup(val->data.string, (char **)data);
        if (st == PMIX_SUCCESS) {
            *sz = (*data == NULL) ? 0 : strlen(*data);
        }
        return st;
    case PMIX_POINTER:
        *data = val->data.ptr;
        *sz   = sizeof(void *);
        return PMIX_SUCCESS;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        st = bytes_dup(val->data.bo.bytes, val->data.bo.size, data);
        if (st == PMIX_SUCCESS) {
            *sz = (*data == NULL) ? 0 : val->data.bo.size;
        }
        return st;
    default:
        break;
    }
    /* everything else: one element, into the caller's storage if given */
    elem = rdp_value_held_by_pointer(val->type) ? val->data.ptr
                                                : (const void *)&val->data;
    dst  = (*data != NULL) ? *data : rdp_calloc(1, esize);
    if (dst == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (elem == NULL) {
        memset(dst, 0, esize);
        st = PMIX_SUCCESS;
    } else {
        st = rdp_elems_copy(val->type, dst, elem, 1);
    }
    if (st != PMIX_SUCCESS) {
        if (dst != *data) {
            rdp_free(dst);
        }
        return st;
    }
    *data = dst;
    *sz   = esize;
    return PMIX_SUCCESS;
}

void PMIx_Value_destruct(pmix_value_t *val)
{
    rdp_value_destruct(val);
}

pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src)
{
    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_value_copy(dest, src);
}

pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2)
{
    if (v1 == NULL || v2 == NULL) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
    return rdp_value_compare(v1, v2);
}

void PMIx_Data_array_destruct(pmix_data_array_t *d)
{
    rdp_data_array_destruct(d);
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
                             const void *data, pmix_data_type_t type)
{
    if (info == NULL || key == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIX_LOAD_KEY(info->key, key);
    info->flags = 0;
    return PMIx_Value_load(&info->value, data, type);
}

pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src)
{
    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (PMIX_INFO_IS_PERSISTENT(src)) {
        /* the value stays owned by the source: share it */
        PMIX_LOAD_KEY(dest->key, src->key);
        dest->flags = src->flags;
        dest->value = src->value;
        return PMIX_SUCCESS;
    }
    return rdp_info_copy(dest, src);
}

pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type)
{
    size_t esize = rdpmix_darray_elem_size(type);
    pmix_status_t st;
    void *elem;

    if (dest == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    *dest = NULL;
    if (type == PMIX_POINTER) {
        *dest = src;
        return PMIX_SUCCESS;
    }
    if (src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (type == PMIX_STRING) {
        return str_dup(src, (char **)dest);
    }
    if (esize == 0) {
        return unsupported(type);
    }
    elem = rdp_calloc(1, esize);
    if (elem == NULL) {
        return PMIX_ERR_NOMEM;
    }
    st = load_elem(type, elem, src);
    if (st != PMIX_SUCCESS) {
        rdp_free(elem);
        return st;
    }
    *dest = elem;
    return PMIX_SUCCESS;
}

const char *rdp_query_nspace(const pmix_query_t *q, const char *dflt)
{
    for (size_t i = 0; i < q->nqual; i++) {
        if (PMIX_CHECK_KEY(&q->qualifiers[i], PMIX_NSPACE)
            && q->qualifiers[i].value.type == PMIX_STRING
            && q->qualifiers[i].value.data.string != NULL) {
            return q->qualifiers[i].value.data.string;
        }
    }
    return dflt;
}
