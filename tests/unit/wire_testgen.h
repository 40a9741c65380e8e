/* wire_testgen.h - deterministic builders of PMIx values of every type, for
 * the wire/kvs unit tests (header-only, test code) */
#ifndef RDP_TESTS_UNIT_WIRE_TESTGEN_H
#define RDP_TESTS_UNIT_WIRE_TESTGEN_H

#include "core/util/value.h"
#include <pmix_common.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every type the wire carries (inside a data array or a value). */
static const pmix_data_type_t gen_all_types[] = {
    PMIX_BOOL,
    PMIX_BYTE,
    PMIX_STRING,
    PMIX_SIZE,
    PMIX_PID,
    PMIX_INT,
    PMIX_INT8,
    PMIX_INT16,
    PMIX_INT32,
    PMIX_INT64,
    PMIX_UINT,
    PMIX_UINT8,
    PMIX_UINT16,
    PMIX_UINT32,
    PMIX_UINT64,
    PMIX_FLOAT,
    PMIX_DOUBLE,
    PMIX_TIMEVAL,
    PMIX_TIME,
    PMIX_STATUS,
    PMIX_VALUE,
    PMIX_PROC,
    PMIX_APP,
    PMIX_INFO,
    PMIX_PDATA,
    PMIX_BYTE_OBJECT,
    PMIX_PERSIST,
    PMIX_SCOPE,
    PMIX_DATA_RANGE,
    PMIX_INFO_DIRECTIVES,
    PMIX_DATA_TYPE,
    PMIX_PROC_STATE,
    PMIX_PROC_INFO,
    PMIX_DATA_ARRAY,
    PMIX_PROC_RANK,
    PMIX_QUERY,
    PMIX_COMPRESSED_STRING,
    PMIX_ALLOC_DIRECTIVE,
    PMIX_IOF_CHANNEL,
    PMIX_ENVAR,
    PMIX_COORD,
    PMIX_REGATTR,
    PMIX_REGEX,
    PMIX_JOB_STATE,
    PMIX_LINK_STATE,
    PMIX_PROC_CPUSET,
    PMIX_GEOMETRY,
    PMIX_DEVICE_DIST,
    PMIX_ENDPOINT,
    PMIX_TOPO,
    PMIX_DEVTYPE,
    PMIX_LOCTYPE,
    PMIX_COMPRESSED_BYTE_OBJECT,
    PMIX_PROC_NSPACE,
    PMIX_PROC_STATS,
    PMIX_DISK_STATS,
    PMIX_NET_STATS,
    PMIX_NODE_STATS,
    PMIX_DATA_BUFFER,
    PMIX_STOR_MEDIUM,
    PMIX_STOR_ACCESS,
    PMIX_STOR_PERSIST,
    PMIX_STOR_ACCESS_TYPE,
};
#define GEN_NTYPES (sizeof(gen_all_types) / sizeof(gen_all_types[0]))

/* types whose elements contain further values (bounded by depth) */
static inline int gen_is_container(pmix_data_type_t t)
{
    return t == PMIX_VALUE || t == PMIX_INFO || t == PMIX_PDATA || t == PMIX_APP
           || t == PMIX_QUERY || t == PMIX_DATA_ARRAY;
}

/* how a pmix_value_t holds a type: 1 behind data.ptr, 0 inline (the
 * library's own answer, so tests and library never disagree) */
static inline int gen_value_by_ptr(pmix_data_type_t t)
{
    return rdp_value_held_by_pointer(t) ? 1 : 0;
}

/* 0 for scalars that live in the union itself */
static inline int gen_is_scalar(pmix_data_type_t t)
{
    switch (t) {
    case PMIX_STRING:
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_ENVAR:
        return 0;
    default:
        return !gen_value_by_ptr(t);
    }
}

static inline char *gen_str(const char *prefix, unsigned seed)
{
    char tmp[64];

    snprintf(tmp, sizeof(tmp), "%s%u", prefix, seed);
    return strdup(tmp);
}

static inline void gen_bytes(pmix_byte_object_t *bo, unsigned seed)
{
    bo->size  = seed % 7 + 1;
    bo->bytes = malloc(bo->size);
    for (size_t i = 0; i < bo->size; i++) {
        bo->bytes[i] = (char)(seed * 13 + i);
    }
}

static inline char **gen_argv(unsigned seed, unsigned n)
{
    char **argv = calloc(n + 1, sizeof(*argv));

    for (unsigned i = 0; i < n; i++) {
        argv[i] = gen_str("arg", seed + i);
    }
    return argv;
}

static void gen_value(pmix_value_t *v, pmix_data_type_t t, unsigned seed,
                      int depth);
static void gen_elem(pmix_data_type_t t, void *e, unsigned seed, int depth);

/* a type to nest at @a depth: containers only while depth allows */
static inline pmix_data_type_t gen_pick_type(unsigned seed, int depth)
{
    pmix_data_type_t t = gen_all_types[seed % GEN_NTYPES];

    if (depth >= 6 && gen_is_container(t)) {
        t = PMIX_UINT32;
    }
    return t;
}

static inline void gen_darray(pmix_data_array_t *da, pmix_data_type_t t,
                              size_t n, unsigned seed, int depth)
{
    size_t es = rdpmix_darray_elem_size(t);

    da->type  = t;
    da->size  = n;
    da->array = (n != 0) ? calloc(n, es) : NULL;
    for (size_t i = 0; i < n; i++) {
        gen_elem(t, (char *)da->array + i * es, seed + (unsigned)i * 7,
                 depth + 1);
    }
}

static inline void gen_infos(pmix_info_t **info_p, size_t *n_p, size_t n,
                             unsigned seed, int depth)
{
    pmix_info_t *info = (n != 0) ? calloc(n, sizeof(*info)) : NULL;

    for (size_t i = 0; i < n; i++) {
        gen_elem(PMIX_INFO, &info[i], seed + (unsigned)i, depth);
    }
    *info_p = info;
    *n_p    = n;
}

static void gen_elem(pmix_data_type_t t, void *e, unsigned seed, int depth)
{
    size_t es = rdpmix_darray_elem_size(t);

    switch (t) {
    case PMIX_BOOL:
        *(bool *)e = seed & 1;
        return;
    case PMIX_STRING:
        *(char **)e = gen_str("str", seed);
        return;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
        gen_bytes(e, seed);
        return;
    case PMIX_PROC_NSPACE:
        snprintf((char *)e, sizeof(pmix_nspace_t), "ns%u", seed);
        return;
    case PMIX_PROC: {
        pmix_proc_t *p = e;
        snprintf(p->nspace, sizeof(p->nspace), "job%u", seed);
        p->rank = seed * 3;
        return;
    }
    case PMIX_VALUE:
        gen_value(e, gen_pick_type(seed * 5 + 1, depth), seed, depth + 1);
        return;
    case PMIX_INFO: {
        pmix_info_t *info = e;
        snprintf(info->key, sizeof(info->key), "pmix.key.%u", seed);
        info->flags = seed % 3;
        gen_value(&info->value, gen_pick_type(seed * 11 + 3, depth), seed,
                  depth + 1);
        return;
    }
    case PMIX_PDATA: {
        pmix_pdata_t *pd = e;
        gen_elem(PMIX_PROC, &pd->proc, seed, depth);
        snprintf(pd->key, sizeof(pd->key), "pd.%u", seed);
        gen_value(&pd->value, gen_pick_type(seed * 3 + 2, depth), seed,
                  depth + 1);
        return;
    }
    case PMIX_APP: {
        pmix_app_t *app = e;
        app->cmd        = gen_str("/bin/app", seed);
        app->argv       = gen_argv(seed, 2);
        app->env        = gen_argv(seed + 10, 1);
        app->cwd        = gen_str("/tmp/", seed);
        app->maxprocs   = (int)seed;
        gen_infos(&app->info, &app->ninfo, depth < 6 ? 2 : 0, seed, depth + 1);
        return;
    }
    case PMIX_QUERY: {
        pmix_query_t *q = e;
        q->keys         = gen_argv(seed, 3);
        gen_infos(&q->qualifiers, &q->nqual, depth < 6 ? 1 : 0, seed,
                  depth + 1);
        return;
    }
    case PMIX_PROC_INFO: {
        pmix_proc_info_t *pi = e;
        gen_elem(PMIX_PROC, &pi->proc, seed, depth);
        pi->hostname        = gen_str("node", seed);
        pi->executable_name = (seed & 1) ? NULL : gen_str("exe", seed);
        pi->pid             = (pid_t)(1000 + seed);
        pi->exit_code       = -(int)seed;
        pi->state           = (pmix_proc_state_t)(seed % 60);
        return;
    }
    case PMIX_DATA_ARRAY:
        gen_darray(e, gen_pick_type(seed * 17 + 5, depth), seed % 3, seed,
                   depth);
        return;
    case PMIX_ENVAR: {
        pmix_envar_t *ev = e;
        ev->envar        = gen_str("VAR", seed);
        ev->value        = gen_str("val", seed);
        ev->separator    = ':';
        return;
    }
    case PMIX_COORD: {
        pmix_coord_t *c = e;
        c->view         = PMIX_COORD_LOGICAL_VIEW;
        c->dims         = 3;
        c->coord        = calloc(3, sizeof(uint32_t));
        for (int i = 0; i < 3; i++) {
            c->coord[i] = seed + (unsigned)i;
        }
        return;
    }
    case PMIX_REGATTR: {
        pmix_regattr_t *ra = e;
        ra->name           = gen_str("PMIX_ATTR", seed);
        snprintf(ra->string, sizeof(ra->string), "pmix.attr.%u", seed);
        ra->type        = PMIX_INT;
        ra->description = gen_argv(seed, 2);
        return;
    }
    case PMIX_PROC_CPUSET:
        ((pmix_cpuset_t *)e)->source = gen_str("hwloc", seed);
        return;
    case PMIX_TOPO:
        ((pmix_topology_t *)e)->source = gen_str("hwloc", seed);
        return;
    case PMIX_GEOMETRY: {
        pmix_geometry_t *g = e;
        g->fabric          = seed;
        g->uuid            = gen_str("uuid", seed);
        g->osname          = gen_str("ib", seed);
        g->ncoords         = 2;
        g->coordinates     = calloc(2, sizeof(pmix_coord_t));
        gen_elem(PMIX_COORD, &g->coordinates[0], seed, depth);
        gen_elem(PMIX_COORD, &g->coordinates[1], seed + 1, depth);
        return;
    }
    case PMIX_DEVICE_DIST: {
        pmix_device_distance_t *d = e;
        d->uuid                   = gen_str("dev", seed);
        d->osname                 = gen_str("mlx5_", seed);
        d->type                   = PMIX_DEVTYPE_NETWORK;
        d->mindist                = (uint16_t)seed;
        d->maxdist                = (uint16_t)(seed + 9);
        return;
    }
    case PMIX_ENDPOINT: {
        pmix_endpoint_t *ep = e;
        ep->uuid            = gen_str("ep", seed);
        ep->osname          = NULL;
        gen_bytes(&ep->endpt, seed);
        return;
    }
    case PMIX_DATA_BUFFER: {
        pmix_data_buffer_t *db = e;
        db->bytes_used         = seed % 5 + 1;
        db->bytes_allocated    = db->bytes_used;
        db->base_ptr           = malloc(db->bytes_used);
        memset(db->base_ptr, (int)seed, db->bytes_used);
        db->pack_ptr   = db->base_ptr + db->bytes_used;
        db->unpack_ptr = db->base_ptr;
        return;
    }
    case PMIX_PROC_STATS: {
        pmix_proc_stats_t *ps = e;
        ps->node              = gen_str("node", seed);
        gen_elem(PMIX_PROC, &ps->proc, seed, depth);
        ps->pid                = 42;
        ps->cmd                = gen_str("cmd", seed);
        ps->state              = 'R';
        ps->time.tv_sec        = seed;
        ps->time.tv_usec       = 7;
        ps->percent_cpu        = 12.5f;
        ps->priority           = -3;
        ps->num_threads        = 4;
        ps->pss                = 1.0f;
        ps->vsize              = 2.0f;
        ps->rss                = 3.0f;
        ps->peak_vsize         = 4.0f;
        ps->processor          = 5;
        ps->sample_time.tv_sec = 99;
        return;
    }
    case PMIX_DISK_STATS: {
        pmix_disk_stats_t *d        = e;
        d->disk                     = gen_str("sda", seed);
        d->num_reads_completed      = 1;
        d->weighted_milliseconds_io = seed;
        return;
    }
    case PMIX_NET_STATS: {
        pmix_net_stats_t *ns = e;
        ns->net_interface    = gen_str("eth", seed);
        ns->num_bytes_recvd  = seed;
        ns->num_send_errs    = 3;
        return;
    }
    case PMIX_NODE_STATS: {
        pmix_node_stats_t *nd  = e;
        nd->node               = gen_str("node", seed);
        nd->la                 = 0.5f;
        nd->mapped             = 7.0f;
        nd->sample_time.tv_sec = seed;
        nd->ndiskstats         = 1;
        nd->diskstats          = calloc(1, sizeof(pmix_disk_stats_t));
        gen_elem(PMIX_DISK_STATS, nd->diskstats, seed, depth);
        nd->nnetstats = 2;
        nd->netstats  = calloc(2, sizeof(pmix_net_stats_t));
        gen_elem(PMIX_NET_STATS, &nd->netstats[0], seed, depth);
        gen_elem(PMIX_NET_STATS, &nd->netstats[1], seed + 1, depth);
        return;
    }
    default:
        /* fixed-width scalar: a byte pattern */
        for (size_t i = 0; i < es; i++) {
            ((uint8_t *)e)[i] = (uint8_t)(seed * 31 + i * 7 + 1);
        }
        return;
    }
}

static void gen_value(pmix_value_t *v, pmix_data_type_t t, unsigned seed,
                      int depth)
{
    memset(v, 0, sizeof(*v));
    v->type = t;
    if (gen_value_by_ptr(t)) {
        void *p = calloc(1, rdpmix_darray_elem_size(t));
        gen_elem(t, p, seed, depth);
        v->data.ptr = p;
    } else {
        gen_elem(t, &v->data, seed, depth);
    }
}

#endif
