/* nspace.c - register/deregister a job: ingest, derive and pack job data */
#include "config.h"
#include "core/server/coll.h"
#include "core/server/nswait.h"
#include "core/server/regex.h"
#include "core/util/directive.h"
#include "core/server/server_int.h"
#include "pnet/pnet.h"
#include "core/util/alloc.h"
#include "core/util/attr_type.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ID UINT32_MAX

/* ---- lookup and lifetime ---- */

rdp_srv_nspace_t *rdp_srv_nspace_find(const char *name)
{
    rdp_srv_nspace_t *ns;

    rdp_list_for_each(ns, &rdp_srv.nspaces, link) {
        if (strncmp(ns->name, name, PMIX_MAX_NSLEN) == 0) {
            return ns;
        }
    }
    return NULL;
}

pmix_status_t rdp_srv_nspace_get(const char *name, rdp_srv_nspace_t **ns_p)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(name);
    pmix_status_t status;

    if (ns != NULL) {
        *ns_p = ns;
        return PMIX_SUCCESS;
    }
    ns = rdp_calloc(1, sizeof(*ns));
    if (ns == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_LOAD_NSPACE(ns->name, name);
    rdp_list_init(&ns->cleanups);
    status = rdp_hash_init(&ns->clients, 0);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }
    status = rdp_kvs_create(&ns->info);
    if (status != PMIX_SUCCESS) {
        goto err_hash;
    }
    rdp_list_push_back(&rdp_srv.nspaces, &ns->link);
    *ns_p = ns;
    return PMIX_SUCCESS;

err_hash:
    rdp_hash_cleanup(&ns->clients);
err_free:
    rdp_free(ns);
    return status;
}

static void free_nodes(rdp_srv_node_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rdp_free(nodes[i].name);
    }
    rdp_free(nodes);
}

static void invalidate_cache(rdp_srv_nspace_t *ns)
{
    rdp_free(ns->sections);
    ns->sections       = NULL;
    ns->sections_len   = 0;
    ns->nsections      = 0;
    ns->sections_valid = false;
    if (ns->connect_blob != NULL) {
        rdp_ipc_blob_unref(ns->connect_blob);
        ns->connect_blob = NULL;
    }
}

/* Forget everything registered (not the clients). */
static void reset_job_data(rdp_srv_nspace_t *ns)
{
    invalidate_cache(ns);
    rdp_kvs_remove_nspace(ns->info, RDP_SRV_KVS_JOB);
    rdp_kvs_remove_nspace(ns->info, RDP_SRV_KVS_APP);
    rdp_kvs_remove_nspace(ns->info, RDP_SRV_KVS_NODE);
    free_nodes(ns->nodes, ns->nnodes);
    rdp_free(ns->local_ranks);
    rdp_free(ns->appnums);
    ns->nodes       = NULL;
    ns->nnodes      = 0;
    ns->local_ranks = NULL;
    ns->nlocal      = 0;
    ns->appnums     = NULL;
    ns->napps       = 0;
    ns->size        = 0;
    ns->nodata      = false;
    ns->registered  = false;
}

void rdp_srv_nspace_destroy(rdp_srv_nspace_t *ns)
{
    rdp_hash_entry_t *ent;
    size_t i, n = 0;
    rdp_srv_client_t **all;

    if (ns == NULL) {
        return;
    }
    all = rdp_calloc(ns->clients.count + 1, sizeof(*all));
    if (all != NULL) {
        rdp_hash_for_each(ent, &ns->clients, i) {
            all[n++] = ent->value;
        }
        for (i = 0; i < n; i++) {
            rdp_srv_client_destroy(all[i]);
        }
        rdp_free(all);
    } else {
        rdp_log_error(SERVER, "out of memory freeing clients of %s", ns->name);
    }
    rdp_hash_cleanup(&ns->clients);
    rdp_srv_cleanup_discard(ns);
    reset_job_data(ns);
    rdp_srv_bcast_destroy(ns->bcast);
    rdp_kvs_destroy(ns->info);
    rdp_free(ns);
}

static int cmp_rank(const void *a, const void *b)
{
    pmix_rank_t x = *(const pmix_rank_t *)a, y = *(const pmix_rank_t *)b;

    return x < y ? -1 : (x > y ? 1 : 0);
}

bool rdp_srv_nspace_is_local(const rdp_srv_nspace_t *ns, pmix_rank_t rank)
{
    return ns->nlocal > 0
           && bsearch(&rank, ns->local_ranks, ns->nlocal, sizeof(pmix_rank_t),
                      cmp_rank)
                  != NULL;
}

/* Id of the rank's app or node section, from its PROC section. */
static bool section_of(const rdp_srv_nspace_t *ns, pmix_rank_t rank,
                       const char *idkey, uint32_t *id_p)
{
    const pmix_value_t *v =
        rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, rank, idkey);
    uint64_t u;

    if (v == NULL || !rdp_srv_value_to_u64(v, &u) || u > UINT32_MAX) {
        return false;
    }
    *id_p = (uint32_t)u;
    return true;
}

bool rdp_srv_nspace_has_key(const rdp_srv_nspace_t *ns, pmix_rank_t rank,
                            const char *key)
{
    uint32_t id;

    if (key == NULL) {
        return false;
    }
    if (rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, PMIX_RANK_WILDCARD, key)
        != NULL) {
        return true;
    }
    if (rank == PMIX_RANK_WILDCARD) {
        return false;
    }
    if (rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, rank, key) != NULL) {
        return true;
    }
    /* app- and node-level keys asked about one of their procs */
    if (section_of(ns, rank, PMIX_APPNUM, &id)
        && rdp_kvs_peek(ns->info, RDP_SRV_KVS_APP, id, key) != NULL) {
        return true;
    }
    return section_of(ns, rank, PMIX_NODEID, &id)
           && rdp_kvs_peek(ns->info, RDP_SRV_KVS_NODE, id, key) != NULL;
}

/* ---- the map being built from the host's info ---- */

typedef struct app_ent {
    uint32_t appnum;
    uint64_t size; /* 0 if not given */
    uint64_t ldr;  /* NO_ID if not given */
} app_ent_t;

typedef struct map_build {
    rdp_srv_node_t *nodes;
    size_t nnodes, ncap;
    rdp_hash_t by_name;   /* name -> index + 1 */
    rdp_hash_t by_id;     /* id -> index + 1 */
    uint32_t *rank_node;  /* index per rank, NO_ID unknown */
    uint32_t *rank_app;   /* appnum per rank, NO_ID unknown */
    uint32_t *rank_claim; /* node id a named rank's proc data claims */
    size_t nranks;        /* max rank seen + 1 */
    size_t rcap;
    app_ent_t *apps;
    size_t napps, acap;
    pmix_rank_t *peers; /* PMIX_LOCAL_PEERS from the host */
    size_t npeers;
    bool have_peers;
    uint64_t job_size; /* 0 if not given */
    uint64_t num_apps; /* 0 if not given */
    const char *node_map;
    const char *proc_map;
} map_build_t;

static void map_cleanup(map_build_t *mb)
{
    free_nodes(mb->nodes, mb->nnodes);
    rdp_hash_cleanup(&mb->by_name);
    rdp_hash_cleanup(&mb->by_id);
    rdp_free(mb->rank_node);
    rdp_free(mb->rank_app);
    rdp_free(mb->rank_claim);
    rdp_free(mb->apps);
    rdp_free(mb->peers);
}

static pmix_status_t map_node_add(map_build_t *mb, const char *name,
                                  uint32_t *idx_p)
{
    void *v;
    pmix_status_t status;

    if (name != NULL) {
        v = rdp_hash_get_str(&mb->by_name, name);
        if (v != NULL) {
            *idx_p = (uint32_t)((uintptr_t)v - 1);
            return PMIX_SUCCESS;
        }
    }
    if (mb->nnodes >= RDP_REGEX_MAX_NODES) {
        rdp_log_error(SERVER, "job has more than %u nodes",
                      RDP_REGEX_MAX_NODES);
        return PMIX_ERR_BAD_PARAM;
    }
    if (mb->nnodes == mb->ncap) {
        size_t ncap       = mb->ncap == 0 ? 16 : mb->ncap * 2;
        rdp_srv_node_t *p = rdp_realloc(mb->nodes, ncap * sizeof(*p));

        if (p == NULL) {
            return PMIX_ERR_NOMEM;
        }
        mb->nodes = p;
        mb->ncap  = ncap;
    }
    mb->nodes[mb->nnodes].name   = NULL;
    mb->nodes[mb->nnodes].id     = NO_ID;
    mb->nodes[mb->nnodes].nranks = 0;
    if (name != NULL) {
        mb->nodes[mb->nnodes].name = rdp_strdup(name);
        if (mb->nodes[mb->nnodes].name == NULL) {
            return PMIX_ERR_NOMEM;
        }
        status = rdp_hash_set_str(&mb->by_name, name,
                                  (void *)(uintptr_t)(mb->nnodes + 1), NULL);
        if (status != PMIX_SUCCESS) {
            rdp_free(mb->nodes[mb->nnodes].name);
            return status;
        }
    }
    *idx_p = (uint32_t)mb->nnodes++;
    return PMIX_SUCCESS;
}

static pmix_status_t map_node_set_id(map_build_t *mb, uint32_t idx, uint32_t id)
{
    void *v = rdp_hash_get_u64(&mb->by_id, id);

    if (v != NULL && (uint32_t)((uintptr_t)v - 1) != idx) {
        rdp_log_error(SERVER, "node id %u given to two different nodes", id);
        return PMIX_ERR_BAD_PARAM;
    }
    if (mb->nodes[idx].id != NO_ID && mb->nodes[idx].id != id) {
        rdp_log_error(SERVER, "node %s has two ids (%u and %u)",
                      mb->nodes[idx].name ? mb->nodes[idx].name : "?",
                      mb->nodes[idx].id, id);
        return PMIX_ERR_BAD_PARAM;
    }
    mb->nodes[idx].id = id;
    return rdp_hash_set_u64(&mb->by_id, id, (void *)(uintptr_t)(idx + 1), NULL);
}

/* Make room for rank @a r in the per-rank tables. */
static pmix_status_t map_rank_reserve(map_build_t *mb, pmix_rank_t r)
{
    if (r >= RDP_PPN_MAX_RANKS) {
        rdp_log_error(SERVER, "rank %u is beyond the supported job size %u", r,
                      RDP_PPN_MAX_RANKS);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((size_t)r >= mb->rcap) {
        size_t ncap = mb->rcap == 0 ? 64 : mb->rcap;
        uint32_t *a, *b, *c;

        while (ncap <= (size_t)r) {
            ncap *= 2;
        }
        a = rdp_realloc(mb->rank_node, ncap * sizeof(*a));
        if (a == NULL) {
            return PMIX_ERR_NOMEM;
        }
        mb->rank_node = a;
        b             = rdp_realloc(mb->rank_app, ncap * sizeof(*b));
        if (b == NULL) {
            return PMIX_ERR_NOMEM;
        }
        mb->rank_app = b;
        c            = rdp_realloc(mb->rank_claim, ncap * sizeof(*c));
        if (c == NULL) {
            return PMIX_ERR_NOMEM;
        }
        mb->rank_claim = c;
        for (size_t i = mb->rcap; i < ncap; i++) {
            mb->rank_node[i]  = NO_ID;
            mb->rank_app[i]   = NO_ID;
            mb->rank_claim[i] = NO_ID;
        }
        mb->rcap = ncap;
    }
    if ((size_t)r + 1 > mb->nranks) {
        mb->nranks = (size_t)r + 1;
    }
    return PMIX_SUCCESS;
}

static app_ent_t *map_app(map_build_t *mb, uint32_t appnum)
{
    for (size_t i = 0; i < mb->napps; i++) {
        if (mb->apps[i].appnum == appnum) {
            return &mb->apps[i];
        }
    }
    if (mb->napps == mb->acap) {
        size_t ncap  = mb->acap == 0 ? 4 : mb->acap * 2;
        app_ent_t *p = rdp_realloc(mb->apps, ncap * sizeof(*p));

        if (p == NULL) {
            return NULL;
        }
        mb->apps = p;
        mb->acap = ncap;
    }
    mb->apps[mb->napps].appnum = appnum;
    mb->apps[mb->napps].size   = 0;
    mb->apps[mb->napps].ldr    = NO_ID;
    return &mb->apps[mb->napps++];
}

/* Parse a comma list of ranks (PMIX_LOCAL_PEERS). */
static pmix_status_t parse_rank_list(const char *s, pmix_rank_t **ranks_p,
                                     size_t *n_p)
{
    rdp_server_ppn_t ppn;
    pmix_status_t status;

    if (strchr(s, ';') != NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = rdp_server_ppn_parse(s, &ppn);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    *ranks_p  = ppn.ranks;
    *n_p      = ppn.nranks;
    ppn.ranks = NULL;
    rdp_server_ppn_cleanup(&ppn);
    return PMIX_SUCCESS;
}

static const pmix_info_t *darray_infos(const pmix_value_t *v, size_t *n_p)
{
    if (v->type != PMIX_DATA_ARRAY || v->data.darray == NULL
        || v->data.darray->type != PMIX_INFO
        || (v->data.darray->size > 0 && v->data.darray->array == NULL)) {
        return NULL;
    }
    *n_p = v->data.darray->size;
    return (const pmix_info_t *)v->data.darray->array;
}

static bool info_u32(const pmix_info_t *in, uint32_t *out_p)
{
    uint64_t u;

    if (!rdp_srv_value_to_u64(&in->value, &u) || u > UINT32_MAX) {
        return false;
    }
    *out_p = (uint32_t)u;
    return true;
}

/* ---- storing what the host gave ---- */

/* One warning per key and process: hosts repeat themselves every job. */
static void warn_converted_once(const char *key, pmix_data_type_t from,
                                pmix_data_type_t to)
{
    static rdp_hash_t warned;
    static bool ready;

    if (!ready) {
        ready = rdp_hash_init(&warned, 0) == PMIX_SUCCESS;
    }
    if (ready && rdp_hash_get_str(&warned, key) != NULL) {
        return;
    }
    if (ready) {
        (void)rdp_hash_set_str(&warned, key, (void *)1, NULL);
    }
    rdp_log_warn(SERVER,
                 "the host registers %s as %s where the Standard says %s: "
                 "converted",
                 key, PMIx_Data_type_string(from), PMIx_Data_type_string(to));
}

/*
 * Store a value the host registered, in the Standard's type when the key is
 * a Standard integer or boolean attribute.  Hosts are not always exact
 * (Slurm 22.05 registers PMIX_APPNUM as PMIX_INT where the Standard says
 * uint32), and a program that reads the value by the Standard reads the
 * union member of the Standard's type.  Lossless conversions only; a value
 * that cannot be converted fails the registration, naming the key.
 */
static pmix_status_t put_host_value(rdp_srv_nspace_t *ns, const char *sect,
                                    pmix_rank_t id, const pmix_info_t *in)
{
    pmix_data_type_t std    = rdp_attr_std_type(in->key);
    const pmix_value_t *val = &in->value;
    pmix_value_t conv;
    pmix_status_t status;

    if (std != PMIX_UNDEF && val->type != std) {
        if (rdp_value_convert_scalar(val, std, &conv) != PMIX_SUCCESS) {
            rdp_log_error(SERVER,
                          "%s: the host registers %s as %s, which cannot "
                          "be converted to the Standard's %s",
                          ns->name, in->key, PMIx_Data_type_string(val->type),
                          PMIx_Data_type_string(std));
            return PMIX_ERR_BAD_PARAM;
        }
        warn_converted_once(in->key, val->type, std);
        val = &conv;
    }
    status = rdp_kvs_put(ns->info, sect, id, in->key, PMIX_SCOPE_UNDEF, val);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "%s: cannot store %s: %s", ns->name, in->key,
                      rdp_status_name(status));
    }
    return status;
}

/* ---- pass 1: job-level keys and maps ---- */

static bool is_array_key(const pmix_info_t *in)
{
    return PMIX_CHECK_KEY(in, PMIX_PROC_DATA)
           || PMIX_CHECK_KEY(in, PMIX_APP_INFO)
           || PMIX_CHECK_KEY(in, PMIX_NODE_INFO);
}

static pmix_status_t ingest_job_keys(rdp_srv_nspace_t *ns, map_build_t *mb,
                                     const pmix_info_t *info, size_t ninfo)
{
    pmix_status_t status;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (is_array_key(in) || PMIX_CHECK_KEY(in, PMIX_REGISTER_NODATA)) {
            continue;
        }
        if (PMIX_CHECK_KEY(in, PMIX_JOB_SIZE)) {
            uint32_t v;

            if (!info_u32(in, &v)) {
                rdp_log_error(SERVER, "%s: %s is not an integer", ns->name,
                              PMIX_JOB_SIZE);
                return PMIX_ERR_BAD_PARAM;
            }
            mb->job_size = v;
        } else if (PMIX_CHECK_KEY(in, PMIX_JOB_NUM_APPS)) {
            uint32_t v;

            if (info_u32(in, &v)) {
                mb->num_apps = v;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_NODE_MAP)) {
            if (in->value.type != PMIX_STRING && in->value.type != PMIX_REGEX) {
                rdp_log_error(SERVER, "%s: %s is not a string", ns->name,
                              PMIX_NODE_MAP);
                return PMIX_ERR_BAD_PARAM;
            }
            if (in->value.type == PMIX_REGEX) {
                rdp_log_error(SERVER,
                              "%s: %s given as a PMIX_REGEX blob is "
                              "not supported; pass the string",
                              ns->name, PMIX_NODE_MAP);
                return PMIX_ERR_NOT_SUPPORTED;
            }
            mb->node_map = in->value.data.string;
        } else if (PMIX_CHECK_KEY(in, PMIX_PROC_MAP)) {
            if (in->value.type != PMIX_STRING) {
                rdp_log_error(SERVER, "%s: %s must be a string", ns->name,
                              PMIX_PROC_MAP);
                return PMIX_ERR_NOT_SUPPORTED;
            }
            mb->proc_map = in->value.data.string;
        } else if (PMIX_CHECK_KEY(in, PMIX_LOCAL_PEERS)
                   && in->value.type == PMIX_STRING
                   && in->value.data.string != NULL) {
            status =
                parse_rank_list(in->value.data.string, &mb->peers, &mb->npeers);
            if (status != PMIX_SUCCESS) {
                rdp_log_error(SERVER, "%s: cannot parse %s \"%.64s\"", ns->name,
                              PMIX_LOCAL_PEERS, in->value.data.string);
                return status;
            }
            mb->have_peers = true;
        }
        if ((in->value.type == PMIX_STRING && in->value.data.string == NULL)) {
            continue;
        }
        status = put_host_value(ns, RDP_SRV_KVS_JOB, PMIX_RANK_WILDCARD, in);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t ingest_maps(rdp_srv_nspace_t *ns, map_build_t *mb)
{
    char **names  = NULL;
    size_t nnames = 0;
    rdp_server_ppn_t ppn;
    pmix_status_t status;

    if (mb->node_map != NULL) {
        status = rdp_server_regex_parse(mb->node_map, &names, &nnames);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(SERVER, "%s: cannot parse %s \"%.64s\"", ns->name,
                          PMIX_NODE_MAP, mb->node_map);
            return status;
        }
        for (size_t i = 0; i < nnames; i++) {
            uint32_t idx;

            status = map_node_add(mb, names[i], &idx);
            if (status != PMIX_SUCCESS) {
                pmix_argv_free(names);
                return status;
            }
        }
        pmix_argv_free(names);
    }
    if (mb->proc_map == NULL) {
        return PMIX_SUCCESS;
    }
    memset(&ppn, 0, sizeof(ppn));
    status = rdp_server_ppn_parse(mb->proc_map, &ppn);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "%s: cannot parse %s \"%.64s\"", ns->name,
                      PMIX_PROC_MAP, mb->proc_map);
        return status;
    }
    if (mb->node_map != NULL && ppn.nnodes != nnames) {
        rdp_log_error(SERVER, "%s: %s lists %zu nodes but %s has %zu", ns->name,
                      PMIX_PROC_MAP, ppn.nnodes, PMIX_NODE_MAP, nnames);
        status = PMIX_ERR_BAD_PARAM;
        goto out;
    }
    for (size_t node = 0; node < ppn.nnodes; node++) {
        uint32_t idx = (uint32_t)node;

        if (mb->node_map == NULL) {
            /* ranks grouped per node but nodes unnamed */
            status = map_node_add(mb, NULL, &idx);
            if (status != PMIX_SUCCESS) {
                goto out;
            }
        }
        for (size_t i = ppn.first[node]; i < ppn.first[node + 1]; i++) {
            pmix_rank_t r = ppn.ranks[i];

            status = map_rank_reserve(mb, r);
            if (status != PMIX_SUCCESS) {
                goto out;
            }
            if (mb->rank_node[r] != NO_ID) {
                rdp_log_error(SERVER, "%s: rank %u is on two nodes in %s",
                              ns->name, r, PMIX_PROC_MAP);
                status = PMIX_ERR_BAD_PARAM;
                goto out;
            }
            mb->rank_node[r] = idx;
        }
    }
    status = PMIX_SUCCESS;
out:
    rdp_server_ppn_cleanup(&ppn);
    return status;
}

/* ---- pass 2: per-proc, per-app and per-node arrays ---- */

static pmix_status_t ingest_proc_data(rdp_srv_nspace_t *ns, map_build_t *mb,
                                      const pmix_info_t *arr, size_t n)
{
    pmix_rank_t rank = PMIX_RANK_UNDEF;
    const char *host = NULL;
    uint32_t nodeid = NO_ID, appnum = NO_ID, idx;
    pmix_status_t status;

    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&arr[i], PMIX_RANK)) {
            uint32_t v;

            if (!info_u32(&arr[i], &v) || v >= PMIX_RANK_VALID) {
                break;
            }
            rank = v;
            break;
        }
    }
    if (rank == PMIX_RANK_UNDEF) {
        rdp_log_error(SERVER, "%s: a %s array has no valid %s", ns->name,
                      PMIX_PROC_DATA, PMIX_RANK);
        return PMIX_ERR_BAD_PARAM;
    }
    status = map_rank_reserve(mb, rank);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (size_t i = 0; i < n; i++) {
        const pmix_info_t *in = &arr[i];

        if (PMIX_CHECK_KEY(in, PMIX_RANK)) {
            continue;
        }
        if (PMIX_CHECK_KEY(in, PMIX_HOSTNAME) && in->value.type == PMIX_STRING
            && in->value.data.string != NULL) {
            host = in->value.data.string;
        } else if (PMIX_CHECK_KEY(in, PMIX_NODEID)) {
            if (!info_u32(in, &nodeid)) {
                rdp_log_error(SERVER, "%s: rank %u: bad %s", ns->name, rank,
                              PMIX_NODEID);
                return PMIX_ERR_BAD_PARAM;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_APPNUM)) {
            if (!info_u32(in, &appnum)) {
                rdp_log_error(SERVER, "%s: rank %u: bad %s", ns->name, rank,
                              PMIX_APPNUM);
                return PMIX_ERR_BAD_PARAM;
            }
        }
        if ((in->value.type == PMIX_STRING && in->value.data.string == NULL)
            || PMIX_CHECK_KEY(in, PMIX_NODEID)) {
            continue; /* the node id is derived once the map is settled */
        }
        status = put_host_value(ns, RDP_SRV_KVS_JOB, rank, in);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    if (host != NULL) {
        status = map_node_add(mb, host, &idx);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        mb->rank_node[rank]  = idx;
        mb->rank_claim[rank] = nodeid; /* checked by apply_node_claims */
    } else if (nodeid != NO_ID) {
        void *v = rdp_hash_get_u64(&mb->by_id, nodeid);

        if (v == NULL) {
            status = map_node_add(mb, NULL, &idx);
            if (status == PMIX_SUCCESS) {
                status = map_node_set_id(mb, idx, nodeid);
            }
            if (status != PMIX_SUCCESS) {
                return status;
            }
        } else {
            idx = (uint32_t)((uintptr_t)v - 1);
        }
        mb->rank_node[rank] = idx;
    }
    if (appnum != NO_ID) {
        mb->rank_app[rank] = appnum;
        if (map_app(mb, appnum) == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    return PMIX_SUCCESS;
}

/* The node id a rank's proc data claims for the rank's named node, or
 * NO_ID when there is none or it contradicts what is known.  @a ids maps
 * node index -> claimed id and @a owners id -> node index + 1. */
static bool claim_fits(const map_build_t *mb, pmix_rank_t r, uint32_t *ids,
                       rdp_hash_t *owners, pmix_status_t *status_p)
{
    uint32_t idx = mb->rank_node[r], id = mb->rank_claim[r];
    void *owner = rdp_hash_get_u64(&mb->by_id, id);

    if (mb->nodes[idx].id != NO_ID && mb->nodes[idx].id != id) {
        return false; /* a node info array says otherwise */
    }
    if (owner != NULL && (uintptr_t)owner - 1 != idx) {
        return false; /* that id belongs to another node already */
    }
    if (ids[idx] != NO_ID && ids[idx] != id) {
        return false; /* two ids for one node */
    }
    owner = rdp_hash_get_u64(owners, id);
    if (owner != NULL && (uintptr_t)owner - 1 != idx) {
        return false; /* one id for two nodes */
    }
    ids[idx] = id;
    *status_p =
        rdp_hash_set_u64(owners, id, (void *)(uintptr_t)(idx + 1), NULL);
    return *status_p == PMIX_SUCCESS;
}

/*
 * Node ids that proc data gives next to a hostname.  Hosts are not always
 * consistent here: Slurm 22.05 gives every rank its own node's PMIX_NODEID
 * next to the rank's right PMIX_HOSTNAME.  OpenPMIx accepts that, and so
 * do we: if the claims contradict each other or the node info arrays, all
 * of them are ignored (one warning) and node ids come from the node info
 * arrays and the node map, the same on every node.
 */
static pmix_status_t apply_node_claims(rdp_srv_nspace_t *ns, map_build_t *mb)
{
    static bool warned;
    uint32_t *ids;
    rdp_hash_t owners;
    pmix_rank_t bad      = PMIX_RANK_UNDEF;
    pmix_status_t status = PMIX_SUCCESS;

    ids = rdp_calloc(mb->nnodes + 1, sizeof(*ids));
    if (ids == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < mb->nnodes; i++) {
        ids[i] = NO_ID;
    }
    status = rdp_hash_init(&owners, 0);
    for (size_t r = 0; status == PMIX_SUCCESS && r < mb->nranks; r++) {
        if (mb->rank_claim[r] == NO_ID || mb->rank_node[r] == NO_ID) {
            continue;
        }
        if (!claim_fits(mb, (pmix_rank_t)r, ids, &owners, &status)
            && status == PMIX_SUCCESS) {
            bad = (pmix_rank_t)r;
            break;
        }
    }
    if (status == PMIX_SUCCESS && bad != PMIX_RANK_UNDEF) {
        if (!warned) {
            warned = true;
            rdp_log_warn(SERVER,
                         "%s: the host's per-process %s values contradict "
                         "its hostnames (rank %u on %s claims node %u): "
                         "ignoring them and numbering nodes by the node "
                         "map",
                         ns->name, PMIX_NODEID, bad,
                         mb->nodes[mb->rank_node[bad]].name,
                         mb->rank_claim[bad]);
        }
    } else {
        for (size_t i = 0; status == PMIX_SUCCESS && i < mb->nnodes; i++) {
            if (ids[i] != NO_ID) {
                status = map_node_set_id(mb, (uint32_t)i, ids[i]);
            }
        }
    }
    rdp_hash_cleanup(&owners);
    rdp_free(ids);
    return status;
}

static pmix_status_t ingest_app_info(rdp_srv_nspace_t *ns, map_build_t *mb,
                                     const pmix_info_t *arr, size_t n)
{
    uint32_t appnum = NO_ID;
    app_ent_t *app;
    pmix_status_t status;

    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&arr[i], PMIX_APPNUM)) {
            if (!info_u32(&arr[i], &appnum)) {
                appnum = NO_ID;
            }
            break;
        }
    }
    if (appnum == NO_ID) {
        rdp_log_error(SERVER, "%s: a %s array has no valid %s", ns->name,
                      PMIX_APP_INFO, PMIX_APPNUM);
        return PMIX_ERR_BAD_PARAM;
    }
    app = map_app(mb, appnum);
    if (app == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const pmix_info_t *in = &arr[i];
        uint32_t v;

        if (PMIX_CHECK_KEY(in, PMIX_APP_SIZE) && info_u32(in, &v)) {
            app->size = v;
        } else if (PMIX_CHECK_KEY(in, PMIX_APPLDR) && info_u32(in, &v)) {
            app->ldr = v;
        }
        if (in->value.type == PMIX_STRING && in->value.data.string == NULL) {
            continue;
        }
        status = put_host_value(ns, RDP_SRV_KVS_APP, appnum, in);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

/* Node arrays only resolve the node here; their keys are stored once every
 * node has an id (store_node_info). */
static pmix_status_t ingest_node_info(rdp_srv_nspace_t *ns, map_build_t *mb,
                                      const pmix_info_t *arr, size_t n)
{
    const char *host = NULL;
    uint32_t nodeid  = NO_ID, idx;
    pmix_status_t status;

    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&arr[i], PMIX_HOSTNAME)
            && arr[i].value.type == PMIX_STRING) {
            host = arr[i].value.data.string;
        } else if (PMIX_CHECK_KEY(&arr[i], PMIX_NODEID)
                   && !info_u32(&arr[i], &nodeid)) {
            nodeid = NO_ID;
        }
    }
    if (host == NULL && nodeid == NO_ID) {
        rdp_log_error(SERVER, "%s: a %s array has neither %s nor %s", ns->name,
                      PMIX_NODE_INFO, PMIX_HOSTNAME, PMIX_NODEID);
        return PMIX_ERR_BAD_PARAM;
    }
    if (host != NULL) {
        status = map_node_add(mb, host, &idx);
    } else {
        void *v = rdp_hash_get_u64(&mb->by_id, nodeid);

        status = PMIX_SUCCESS;
        if (v != NULL) {
            idx = (uint32_t)((uintptr_t)v - 1);
        } else {
            status = map_node_add(mb, NULL, &idx);
        }
    }
    if (status == PMIX_SUCCESS && nodeid != NO_ID) {
        status = map_node_set_id(mb, idx, nodeid);
    }
    return status;
}

static pmix_status_t store_node_info(rdp_srv_nspace_t *ns, map_build_t *mb,
                                     const pmix_info_t *arr, size_t n)
{
    const char *host = NULL;
    uint32_t nodeid  = NO_ID, id;
    pmix_status_t status;
    void *v;

    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&arr[i], PMIX_HOSTNAME)
            && arr[i].value.type == PMIX_STRING) {
            host = arr[i].value.data.string;
        } else if (PMIX_CHECK_KEY(&arr[i], PMIX_NODEID)
                   && !info_u32(&arr[i], &nodeid)) {
            nodeid = NO_ID;
        }
    }
    if (host != NULL) {
        v = rdp_hash_get_str(&mb->by_name, host);
    } else {
        v = rdp_hash_get_u64(&mb->by_id, nodeid);
    }
    if (v == NULL) {
        return PMIX_ERR_NOT_FOUND; /* cannot happen after ingest_node_info */
    }
    id = mb->nodes[(uintptr_t)v - 1].id;
    for (size_t i = 0; i < n; i++) {
        if (arr[i].value.type == PMIX_STRING
            && arr[i].value.data.string == NULL) {
            continue;
        }
        status = put_host_value(ns, RDP_SRV_KVS_NODE, id, &arr[i]);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

typedef pmix_status_t (*array_fn_t)(rdp_srv_nspace_t *ns, map_build_t *mb,
                                    const pmix_info_t *arr, size_t n);

static pmix_status_t for_each_array(rdp_srv_nspace_t *ns, map_build_t *mb,
                                    const pmix_info_t *info, size_t ninfo,
                                    const char *key, array_fn_t fn)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *arr;
        size_t n = 0;
        pmix_status_t status;

        if (!PMIX_CHECK_KEY(&info[i], key)) {
            continue;
        }
        arr = darray_infos(&info[i].value, &n);
        if (arr == NULL) {
            rdp_log_error(SERVER,
                          "%s: %s must be a data array of "
                          "pmix_info_t",
                          ns->name, key);
            return PMIX_ERR_BAD_PARAM;
        }
        status = fn(ns, mb, arr, n);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

/* ---- derivation ---- */

static pmix_status_t put_absent(rdp_srv_nspace_t *ns, const char *sect,
                                pmix_rank_t id, const char *key,
                                pmix_value_t *val)
{
    if (rdp_kvs_peek(ns->info, sect, id, key) != NULL) {
        return PMIX_SUCCESS; /* what the host gave wins */
    }
    return rdp_kvs_put(ns->info, sect, id, key, PMIX_SCOPE_UNDEF, val);
}

static pmix_status_t put_u32(rdp_srv_nspace_t *ns, const char *sect,
                             pmix_rank_t id, const char *key, uint32_t v)
{
    pmix_value_t val;

    val.type        = PMIX_UINT32;
    val.data.uint32 = v;
    return put_absent(ns, sect, id, key, &val);
}

static pmix_status_t put_u16(rdp_srv_nspace_t *ns, const char *sect,
                             pmix_rank_t id, const char *key, uint16_t v)
{
    pmix_value_t val;

    val.type        = PMIX_UINT16;
    val.data.uint16 = v;
    return put_absent(ns, sect, id, key, &val);
}

static pmix_status_t put_rank(rdp_srv_nspace_t *ns, const char *sect,
                              pmix_rank_t id, const char *key, pmix_rank_t v)
{
    pmix_value_t val;

    val.type      = PMIX_PROC_RANK;
    val.data.rank = v;
    return put_absent(ns, sect, id, key, &val);
}

static pmix_status_t put_str(rdp_srv_nspace_t *ns, const char *sect,
                             pmix_rank_t id, const char *key, const char *s)
{
    pmix_value_t val;

    val.type        = PMIX_STRING;
    val.data.string = (char *)s;
    return put_absent(ns, sect, id, key, &val);
}

/* "r0,r1,..." of @a n ranks; malloc'ed. */
static char *ranks_string(const pmix_rank_t *r, size_t n)
{
    size_t cap = n * 11 + 1, len = 0;
    char *s = rdp_malloc(cap);

    if (s == NULL) {
        return NULL;
    }
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        len +=
            (size_t)snprintf(s + len, cap - len, i == 0 ? "%u" : ",%u", r[i]);
    }
    return s;
}

/* PMIX_NODE_LIST: "host1,host2,..." of the named nodes hosting ranks of
 * the job, in node map order (the Standard's job-level key; OpenPMIx
 * servers derive it from the node map too). */
static pmix_status_t put_node_list(rdp_srv_nspace_t *ns, const map_build_t *mb,
                                   const size_t *count)
{
    size_t len = 0;
    pmix_status_t status;
    char *list;

    for (size_t i = 0; i < mb->nnodes; i++) {
        if (count[i] > 0 && mb->nodes[i].name != NULL) {
            len += strlen(mb->nodes[i].name) + 1;
        }
    }
    if (len == 0) {
        return PMIX_SUCCESS;
    }
    list = rdp_malloc(len);
    if (list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    len = 0;
    for (size_t i = 0; i < mb->nnodes; i++) {
        if (count[i] > 0 && mb->nodes[i].name != NULL) {
            size_t n = strlen(mb->nodes[i].name);

            memcpy(list + len, mb->nodes[i].name, n);
            list[len + n] = ',';
            len += n + 1;
        }
    }
    list[len - 1] = '\0'; /* the last comma */
    status =
        put_str(ns, RDP_SRV_KVS_JOB, PMIX_RANK_WILDCARD, PMIX_NODE_LIST, list);
    rdp_free(list);
    return status;
}

/* Keys every node gets: name, id, this job's procs there. */
static pmix_status_t derive_node(rdp_srv_nspace_t *ns, const rdp_srv_node_t *nd,
                                 const pmix_rank_t *ranks, size_t n)
{
    const char *sect     = RDP_SRV_KVS_NODE;
    pmix_status_t status = PMIX_SUCCESS;
    char *peers;

    if (nd->name != NULL) {
        status = put_str(ns, sect, nd->id, PMIX_HOSTNAME, nd->name);
    }
    if (status == PMIX_SUCCESS) {
        status = put_u32(ns, sect, nd->id, PMIX_NODEID, nd->id);
    }
    if (status != PMIX_SUCCESS || n == 0) {
        return status;
    }
    peers = ranks_string(ranks, n);
    if (peers == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = put_str(ns, sect, nd->id, PMIX_LOCAL_PEERS, peers);
    rdp_free(peers);
    if (status == PMIX_SUCCESS) {
        status = put_u32(ns, sect, nd->id, PMIX_LOCAL_SIZE, (uint32_t)n);
    }
    if (status == PMIX_SUCCESS) {
        status = put_u32(ns, sect, nd->id, PMIX_NODE_SIZE, (uint32_t)n);
    }
    if (status == PMIX_SUCCESS) {
        status = put_rank(ns, sect, nd->id, PMIX_LOCALLDR, ranks[0]);
    }
    return status;
}

/* Appnum of @a r when the host gave no per-proc appnum. */
static uint32_t app_of_rank(const map_build_t *mb, pmix_rank_t r)
{
    if (r < mb->nranks && mb->rank_app[r] != NO_ID) {
        return mb->rank_app[r];
    }
    for (size_t i = 0; i < mb->napps; i++) {
        const app_ent_t *a = &mb->apps[i];

        if (a->ldr != NO_ID && a->size > 0 && r >= a->ldr
            && r < a->ldr + a->size) {
            return a->appnum;
        }
    }
    return 0;
}

static pmix_status_t derive(rdp_srv_nspace_t *ns, map_build_t *mb)
{
    const char *J = RDP_SRV_KVS_JOB;
    size_t *count = NULL, *start = NULL, *fill = NULL;
    pmix_rank_t *bynode = NULL;
    size_t nused        = 0;
    pmix_status_t status;
    char *peers;

    /* ranks per node, ascending, in one array */
    count  = rdp_calloc(mb->nnodes + 1, sizeof(size_t));
    start  = rdp_calloc(mb->nnodes + 1, sizeof(size_t));
    fill   = rdp_calloc(mb->nnodes + 1, sizeof(size_t));
    bynode = rdp_calloc(ns->size + 1, sizeof(pmix_rank_t));
    if (count == NULL || start == NULL || fill == NULL || bynode == NULL) {
        status = PMIX_ERR_NOMEM;
        goto out;
    }
    for (size_t r = 0; r < ns->size && r < mb->nranks; r++) {
        if (mb->rank_node[r] != NO_ID) {
            count[mb->rank_node[r]]++;
        }
    }
    for (size_t i = 0; i < mb->nnodes; i++) {
        start[i + 1] = start[i] + count[i];
        fill[i]      = start[i];
        nused += count[i] > 0;
    }
    for (size_t r = 0; r < ns->size && r < mb->nranks; r++) {
        if (mb->rank_node[r] != NO_ID) {
            bynode[fill[mb->rank_node[r]]++] = (pmix_rank_t)r;
        }
    }

    /* per rank */
    for (size_t r = 0; r < ns->size; r++) {
        uint32_t nidx = r < mb->nranks ? mb->rank_node[r] : NO_ID;

        status = put_u32(ns, J, (pmix_rank_t)r, PMIX_APPNUM,
                         app_of_rank(mb, (pmix_rank_t)r));
        if (status != PMIX_SUCCESS) {
            goto out;
        }
        if (nidx == NO_ID) {
            continue;
        }
        if (mb->nodes[nidx].name != NULL) {
            status = put_str(ns, J, (pmix_rank_t)r, PMIX_HOSTNAME,
                             mb->nodes[nidx].name);
            if (status != PMIX_SUCCESS) {
                goto out;
            }
        }
        status =
            put_u32(ns, J, (pmix_rank_t)r, PMIX_NODEID, mb->nodes[nidx].id);
        if (status != PMIX_SUCCESS) {
            goto out;
        }
        /* position among this job's ranks on that node */
        {
            const pmix_rank_t *lst = &bynode[start[nidx]];
            size_t n = count[nidx], lo = 0, hi = n;

            while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (lst[mid] < r) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if (lo <= UINT16_MAX) {
                status = put_u16(ns, J, (pmix_rank_t)r, PMIX_LOCAL_RANK,
                                 (uint16_t)lo);
                if (status == PMIX_SUCCESS) {
                    status = put_u16(ns, J, (pmix_rank_t)r, PMIX_NODE_RANK,
                                     (uint16_t)lo);
                }
                if (status != PMIX_SUCCESS) {
                    goto out;
                }
            }
        }
    }

    /* per node */
    for (size_t i = 0; i < mb->nnodes; i++) {
        mb->nodes[i].nranks = (uint32_t)count[i];
        status = derive_node(ns, &mb->nodes[i], &bynode[start[i]], count[i]);
        if (status != PMIX_SUCCESS) {
            goto out;
        }
    }

    /* per app */
    if (mb->napps == 0 && mb->num_apps <= 1 && map_app(mb, 0) == NULL) {
        status = PMIX_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < mb->napps; i++) {
        app_ent_t *a   = &mb->apps[i];
        uint32_t size  = 0;
        pmix_rank_t ld = PMIX_RANK_UNDEF;

        for (size_t r = 0; r < ns->size; r++) {
            if (app_of_rank(mb, (pmix_rank_t)r) == a->appnum) {
                size++;
                if (ld == PMIX_RANK_UNDEF) {
                    ld = (pmix_rank_t)r;
                }
            }
        }
        status =
            put_u32(ns, RDP_SRV_KVS_APP, a->appnum, PMIX_APPNUM, a->appnum);
        if (status == PMIX_SUCCESS) {
            status =
                put_u32(ns, RDP_SRV_KVS_APP, a->appnum, PMIX_APP_SIZE, size);
        }
        if (status == PMIX_SUCCESS && ld != PMIX_RANK_UNDEF) {
            status = put_rank(ns, RDP_SRV_KVS_APP, a->appnum, PMIX_APPLDR, ld);
        }
        if (status != PMIX_SUCCESS) {
            goto out;
        }
    }

    /* job level */
    status = put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, ns->size);
    if (status == PMIX_SUCCESS) {
        status = put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_MAX_PROCS, ns->size);
    }
    if (status == PMIX_SUCCESS) {
        status = put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, ns->size);
    }
    if (status == PMIX_SUCCESS) {
        status =
            put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_JOB_NUM_APPS,
                    (uint32_t)(mb->num_apps > 0 ? mb->num_apps : mb->napps));
    }
    if (status == PMIX_SUCCESS && nused > 0) {
        status =
            put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, (uint32_t)nused);
    }
    if (status == PMIX_SUCCESS) {
        status = put_node_list(ns, mb, count);
    }
    if (status == PMIX_SUCCESS && ns->nlocal > 0) {
        peers = ranks_string(ns->local_ranks, ns->nlocal);
        if (peers == NULL) {
            status = PMIX_ERR_NOMEM;
            goto out;
        }
        status = put_str(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, peers);
        rdp_free(peers);
        if (status == PMIX_SUCCESS) {
            status = put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE,
                             (uint32_t)ns->nlocal);
        }
        if (status == PMIX_SUCCESS) {
            status = put_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_NODE_SIZE,
                             (uint32_t)ns->nlocal);
        }
        if (status == PMIX_SUCCESS) {
            status = put_rank(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCALLDR,
                              ns->local_ranks[0]);
        }
    }
out:
    rdp_free(count);
    rdp_free(start);
    rdp_free(fill);
    rdp_free(bynode);
    return status;
}

/* Decide the job size, this node's ranks and the node ids. */
static pmix_status_t resolve(rdp_srv_nspace_t *ns, map_build_t *mb)
{
    uint32_t mynode = NO_ID, next_id = 0;
    bool any_mapped = false;
    pmix_status_t status;

    if (mb->job_size > 0) {
        if (mb->nranks > mb->job_size) {
            rdp_log_error(SERVER, "%s: rank %zu is mapped but %s is %" PRIu64,
                          ns->name, mb->nranks - 1, PMIX_JOB_SIZE,
                          mb->job_size);
            return PMIX_ERR_BAD_PARAM;
        }
        ns->size = (uint32_t)mb->job_size;
    } else if (mb->nranks > 0) {
        ns->size = (uint32_t)mb->nranks;
    } else if (mb->have_peers && mb->npeers > 0) {
        ns->size = 0;
        for (size_t i = 0; i < mb->npeers; i++) {
            if (mb->peers[i] + 1 > ns->size) {
                ns->size = mb->peers[i] + 1;
            }
        }
    } else {
        ns->size = ns->nlocalprocs > 0 ? (uint32_t)ns->nlocalprocs : 0;
    }
    if (ns->size > RDP_PPN_MAX_RANKS) {
        rdp_log_error(SERVER, "%s: job size %u is beyond the supported %u",
                      ns->name, ns->size, RDP_PPN_MAX_RANKS);
        return PMIX_ERR_BAD_PARAM;
    }
    /* make sure per-rank tables cover the whole job */
    if (ns->size > 0) {
        size_t keep = mb->nranks;

        status = map_rank_reserve(mb, ns->size - 1);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        mb->nranks = keep > ns->size ? keep : ns->size;
    }
    for (size_t r = 0; r < mb->nranks; r++) {
        if (mb->rank_node[r] != NO_ID) {
            any_mapped = true;
            break;
        }
    }

    /* this node */
    for (size_t i = 0; i < mb->nnodes; i++) {
        if (rdp_srv_host_eq(mb->nodes[i].name, rdp_srv.hostname)) {
            mynode = (uint32_t)i;
            break;
        }
    }
    if (!any_mapped) {
        /* no map: the host's local peers, else the first nlocalprocs */
        size_t n = 0;

        if (!mb->have_peers) {
            int nl = ns->nlocalprocs < 0 ? 0 : ns->nlocalprocs;

            if ((uint32_t)nl < ns->size) {
                rdp_log_warn(SERVER,
                             "%s: no map and no %s: assuming ranks "
                             "0..%d are the local ones",
                             ns->name, PMIX_LOCAL_PEERS, nl - 1);
            }
            n = (uint32_t)nl < ns->size ? (size_t)nl : ns->size;
        } else {
            n = mb->npeers;
        }
        if (n > 0 && mynode == NO_ID) {
            status = map_node_add(mb, rdp_srv.hostname, &mynode);
            if (status != PMIX_SUCCESS) {
                return status;
            }
        }
        for (size_t i = 0; i < n; i++) {
            pmix_rank_t r = mb->have_peers ? mb->peers[i] : (pmix_rank_t)i;

            if (r >= ns->size) {
                rdp_log_error(SERVER,
                              "%s: local peer %u is beyond the job "
                              "size %u",
                              ns->name, r, ns->size);
                return PMIX_ERR_BAD_PARAM;
            }
            mb->rank_node[r] = mynode;
        }
    }

    /* node ids: the host's, else the map position when free */
    for (size_t i = 0; i < mb->nnodes; i++) {
        if (mb->nodes[i].id != NO_ID) {
            continue;
        }
        if (rdp_hash_get_u64(&mb->by_id, i) == NULL) {
            status = map_node_set_id(mb, (uint32_t)i, (uint32_t)i);
        } else {
            while (rdp_hash_get_u64(&mb->by_id, next_id) != NULL) {
                next_id++;
            }
            status = map_node_set_id(mb, (uint32_t)i, next_id);
        }
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }

    /* this node's ranks, ascending */
    ns->nlocal = 0;
    if (mynode != NO_ID) {
        ns->local_ranks = rdp_calloc(ns->size + 1, sizeof(pmix_rank_t));
        if (ns->local_ranks == NULL) {
            return PMIX_ERR_NOMEM;
        }
        for (size_t r = 0; r < ns->size; r++) {
            if (mb->rank_node[r] == mynode) {
                ns->local_ranks[ns->nlocal++] = (pmix_rank_t)r;
            }
        }
    }
    if (ns->nlocalprocs >= 0 && (size_t)ns->nlocalprocs != ns->nlocal) {
        rdp_log_debug(SERVER,
                      "%s: host said %d local procs, the map puts "
                      "%zu on %s",
                      ns->name, ns->nlocalprocs, ns->nlocal, rdp_srv.hostname);
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_nspace_ingest(rdp_srv_nspace_t *ns, int nlocalprocs,
                                    const pmix_info_t *info, size_t ninfo)
{
    map_build_t mb;
    pmix_status_t status;

    memset(&mb, 0, sizeof(mb));
    ns->nlocalprocs = nlocalprocs;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_REGISTER_NODATA)
            && PMIX_INFO_TRUE(&info[i])) {
            ns->nodata     = true;
            ns->registered = true;
            return PMIX_SUCCESS;
        }
    }
    status = rdp_hash_init(&mb.by_name, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&mb.by_id, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = ingest_job_keys(ns, &mb, info, ninfo);
    }
    if (status == PMIX_SUCCESS) {
        status = ingest_maps(ns, &mb);
    }
    if (status == PMIX_SUCCESS) {
        status = for_each_array(ns, &mb, info, ninfo, PMIX_PROC_DATA,
                                ingest_proc_data);
    }
    if (status == PMIX_SUCCESS) {
        status = for_each_array(ns, &mb, info, ninfo, PMIX_APP_INFO,
                                ingest_app_info);
    }
    if (status == PMIX_SUCCESS) {
        status = for_each_array(ns, &mb, info, ninfo, PMIX_NODE_INFO,
                                ingest_node_info);
    }
    if (status == PMIX_SUCCESS) {
        status = apply_node_claims(ns, &mb);
    }
    if (status == PMIX_SUCCESS) {
        status = resolve(ns, &mb);
    }
    if (status == PMIX_SUCCESS) {
        status = for_each_array(ns, &mb, info, ninfo, PMIX_NODE_INFO,
                                store_node_info);
    }
    if (status == PMIX_SUCCESS) {
        status = derive(ns, &mb);
    }
    if (status != PMIX_SUCCESS) {
        map_cleanup(&mb);
        reset_job_data(ns);
        return status;
    }
    /* keep the node table and the app list for packing */
    ns->nodes   = mb.nodes;
    ns->nnodes  = mb.nnodes;
    mb.nodes    = NULL;
    mb.nnodes   = 0;
    ns->appnums = rdp_calloc(mb.napps + 1, sizeof(uint32_t));
    if (ns->appnums == NULL) {
        map_cleanup(&mb);
        reset_job_data(ns);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < mb.napps; i++) {
        ns->appnums[i] = mb.apps[i].appnum;
    }
    ns->napps = mb.napps;
    map_cleanup(&mb);
    ns->registered = true;
    return PMIX_SUCCESS;
}

/* ---- packing ---- */

static pmix_status_t pack_section(rdp_srv_nspace_t *ns, uint8_t kind,
                                  const char *sect, uint32_t id,
                                  const char *name, rdp_buf_t *buf)
{
    size_t mark;
    pmix_status_t status = rdp_sect_pack_begin(buf, kind, id, name, &mark);

    if (status == PMIX_SUCCESS) {
        status = rdp_kvs_pack_rank(ns->info, sect, id, RDP_SCOPES_ALL, buf);
    }
    if (status == PMIX_SUCCESS) {
        rdp_sect_pack_end(buf, mark);
    }
    return status;
}

static pmix_status_t build_sections(rdp_srv_nspace_t *ns)
{
    rdp_buf_t buf;
    uint32_t n           = 0;
    pmix_status_t status = PMIX_SUCCESS;

    rdp_buf_init(&buf);
    if (!ns->nodata && ns->registered) {
        status = pack_section(ns, RDP_SECT_JOB, RDP_SRV_KVS_JOB,
                              PMIX_RANK_WILDCARD, NULL, &buf);
        n++;
        for (size_t i = 0; status == PMIX_SUCCESS && i < ns->napps; i++) {
            status = pack_section(ns, RDP_SECT_APP, RDP_SRV_KVS_APP,
                                  ns->appnums[i], NULL, &buf);
            n++;
        }
        for (size_t i = 0; status == PMIX_SUCCESS && i < ns->nnodes; i++) {
            status = pack_section(ns, RDP_SECT_NODE, RDP_SRV_KVS_NODE,
                                  ns->nodes[i].id, ns->nodes[i].name, &buf);
            n++;
        }
        for (uint32_t r = 0; status == PMIX_SUCCESS && r < ns->size; r++) {
            if (rdp_kvs_has_rank(ns->info, RDP_SRV_KVS_JOB, r)) {
                status = pack_section(ns, RDP_SECT_PROC, RDP_SRV_KVS_JOB, r,
                                      NULL, &buf);
                n++;
            }
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "%s: cannot pack job data: %s", ns->name,
                      rdp_status_name(status));
        rdp_buf_cleanup(&buf);
        return status;
    }
    ns->sections       = rdp_buf_take(&buf, &ns->sections_len);
    ns->nsections      = n;
    ns->sections_valid = true;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_nspace_pack_set(rdp_srv_nspace_t *ns,
                                      const rdp_buf_t *extra, uint32_t nextra,
                                      rdp_buf_t *buf)
{
    pmix_status_t status = PMIX_SUCCESS;

    if (!ns->sections_valid) {
        status = build_sections(ns);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, ns->name);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, ns->nsections + nextra);
    }
    if (status == PMIX_SUCCESS && ns->sections_len > 0) {
        status = rdp_buf_append(buf, ns->sections, ns->sections_len);
    }
    if (status == PMIX_SUCCESS && extra != NULL && extra->size > 0) {
        status = rdp_buf_append(buf, extra->data, extra->size);
    }
    return status;
}

void rdp_srv_nspace_invalidate(rdp_srv_nspace_t *ns)
{
    invalidate_cache(ns);
}

/* Only the job's own clients get this: it carries the job's pnet values
 * (pnetval.c), which no other nspace's bundle does. */
rdp_ipc_blob_t *rdp_srv_nspace_connect_blob(rdp_srv_nspace_t *ns)
{
    rdp_buf_t buf, own;
    uint32_t nown = 0;

    if (ns->connect_blob != NULL) {
        return ns->connect_blob;
    }
    rdp_buf_init(&buf);
    rdp_buf_init(&own);
    if (rdp_srv_pnet_pack_values(ns->name, &own, &nown) != PMIX_SUCCESS
        || rdp_pack_i32(&buf, PMIX_SUCCESS) != PMIX_SUCCESS
        || rdp_pack_u32(&buf, 1) != PMIX_SUCCESS
        || rdp_srv_nspace_pack_set(ns, &own, nown, &buf) != PMIX_SUCCESS
        || rdp_ipc_blob_create(&buf, &ns->connect_blob) != PMIX_SUCCESS) {
        ns->connect_blob = NULL;
        rdp_buf_cleanup(&buf);
    }
    if (own.size > 0) {
        explicit_bzero(own.data, own.size); /* it may hold a key */
    }
    rdp_buf_cleanup(&own);
    return ns->connect_blob;
}

/* ---- the API ---- */

typedef struct reg_req {
    pmix_nspace_t nspace;
    int nlocalprocs;
    pmix_info_t *info; /* the host's, borrowed until cbfunc */
    size_t ninfo;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} reg_req_t;

static void register_on_loop(void *arg)
{
    reg_req_t *req = arg;
    rdp_srv_nspace_t *ns;
    pmix_status_t status;

    if (!rdp_srv.active) {
        status = PMIX_ERR_INIT;
        goto done;
    }
    status = rdp_srv_nspace_get(req->nspace, &ns);
    if (status != PMIX_SUCCESS) {
        goto done;
    }
    if (ns->registered) {
        rdp_log_error(SERVER, "nspace %s is already registered", ns->name);
        status = PMIX_ERR_EXISTS;
        goto done;
    }
    /* RFC0012 without a head-node step (Slurm): keys derived here */
    status = rdp_pnet_derive(ns->name);
    if (status == PMIX_SUCCESS) {
        /* what each bound process gets alone (ib: its nearest HCAs) */
        status = rdp_pnet_setup_procs(ns->name, req->info, req->ninfo);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_srv_nspace_ingest(ns, req->nlocalprocs, req->info, req->ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "registering nspace %s failed: %s", ns->name,
                      rdp_status_name(status));
        if (ns->clients.count == 0) {
            rdp_list_del(&ns->link);
            rdp_srv_nspace_destroy(ns);
        }
        goto done;
    }
    rdp_log_debug(SERVER, "nspace %s registered: %u procs, %zu here", ns->name,
                  ns->size, ns->nlocal);
    /* what other servers sent for it before (nswait.h) */
    rdp_srv_nswait_registered();
done:
    if (req->cbfunc != NULL) {
        req->cbfunc(status, req->cbdata);
    }
    rdp_free(req);
}

pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace,
                                          int nlocalprocs, pmix_info_t info[],
                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata)
{
    reg_req_t *req;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    if (nspace == NULL || nspace[0] == '\0'
        || strnlen(nspace, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN
        || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_LOAD_NSPACE(req->nspace, nspace);
    req->nlocalprocs = nlocalprocs;
    req->info        = info;
    req->ninfo       = ninfo;
    req->cbfunc      = cbfunc;
    req->cbdata      = cbdata;
    status           = rdp_loop_post(rdp_rt.loop, register_on_loop, req);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
    }
    return status;
}

static void deregister_on_loop(void *arg)
{
    reg_req_t *req = arg;
    rdp_srv_nspace_t *ns;

    ns = rdp_srv.active ? rdp_srv_nspace_find(req->nspace) : NULL;
    if (ns != NULL) {
        rdp_hash_entry_t *ent;
        size_t i, n = 0;
        rdp_srv_client_t **all;

        rdp_list_del(&ns->link);
        /* the job's clients are gone for everyone waiting on them */
        all = rdp_calloc(ns->clients.count + 1, sizeof(*all));
        if (all != NULL) {
            rdp_hash_for_each(ent, &ns->clients, i) {
                all[n++] = ent->value;
            }
            for (i = 0; i < n; i++) {
                rdp_srv_client_gone(all[i], PMIX_ERR_NOT_FOUND);
            }
            rdp_free(all);
        }
        rdp_srv_coll_nspace_gone(ns);
        rdp_srv_modex_fail(ns->name, PMIX_RANK_WILDCARD, PMIX_ERR_NOT_FOUND);
        rdp_srv_cleanup_run(ns);
        rdp_kvs_remove_nspace(rdp_srv.modex, ns->name);
        rdp_log_debug(SERVER, "nspace %s deregistered", ns->name);
        rdp_srv_nspace_destroy(ns);
    } else {
        rdp_log_debug(SERVER, "deregister of unknown nspace %s ignored",
                      req->nspace);
    }
    /* known here or not (a head node sets up jobs it does not host) */
    rdp_pnet_job_end(req->nspace);
    if (req->cbfunc != NULL) {
        req->cbfunc(PMIX_SUCCESS, req->cbdata);
    }
    rdp_free(req);
}

void PMIx_server_deregister_nspace(const pmix_nspace_t nspace,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    reg_req_t *req = NULL;

    if (rdp_srv_initialized() && nspace != NULL) {
        req = rdp_calloc(1, sizeof(*req));
    }
    if (req == NULL) {
        /* a void API must still complete: without a loop there is no
         * later point to do it, so this is the one inline callback */
        rdp_log_error(SERVER, "deregister_nspace: %s",
                      nspace == NULL ? "NULL nspace" : "server not running");
        if (cbfunc != NULL) {
            cbfunc(nspace == NULL ? PMIX_ERR_BAD_PARAM : PMIX_ERR_INIT, cbdata);
        }
        return;
    }
    PMIX_LOAD_NSPACE(req->nspace, nspace);
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    if (rdp_loop_post(rdp_rt.loop, deregister_on_loop, req) != PMIX_SUCCESS) {
        rdp_free(req);
        if (cbfunc != NULL) {
            cbfunc(PMIX_ERR_NOMEM, cbdata);
        }
    }
}
