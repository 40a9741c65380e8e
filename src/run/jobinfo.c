/* jobinfo.c - the job description rdpmixd registers with its PMIx server */
#include "config.h"
#include "run/jobinfo.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <string.h>

/* growable info array */
typedef struct ilist {
    pmix_info_t *info;
    size_t n;
    size_t cap;
    pmix_status_t status; /* first error; later adds are no-ops */
} ilist_t;

static pmix_info_t *ilist_next(ilist_t *l)
{
    if (l->status != PMIX_SUCCESS) {
        return NULL;
    }
    if (l->n == l->cap) {
        size_t cap     = l->cap ? 2 * l->cap : 32;
        pmix_info_t *p = rdp_realloc(l->info, cap * sizeof(*p));

        if (p == NULL) {
            l->status = PMIX_ERR_NOMEM;
            return NULL;
        }
        l->info = p;
        l->cap  = cap;
    }
    PMIX_INFO_CONSTRUCT(&l->info[l->n]);
    return &l->info[l->n];
}

static void ilist_add(ilist_t *l, const char *key, const void *data,
                      pmix_data_type_t type)
{
    pmix_info_t *info = ilist_next(l);
    pmix_status_t status;

    if (info == NULL) {
        return;
    }
    status = PMIx_Info_load(info, key, data, type);
    if (status != PMIX_SUCCESS) {
        l->status = status;
        return;
    }
    l->n++;
}

static void ilist_u32(ilist_t *l, const char *key, uint32_t v)
{
    ilist_add(l, key, &v, PMIX_UINT32);
}

static void ilist_u16(ilist_t *l, const char *key, uint16_t v)
{
    ilist_add(l, key, &v, PMIX_UINT16);
}

static void ilist_rank(ilist_t *l, const char *key, pmix_rank_t v)
{
    ilist_add(l, key, &v, PMIX_PROC_RANK);
}

static void ilist_str(ilist_t *l, const char *key, const char *v)
{
    ilist_add(l, key, v, PMIX_STRING);
}

static void ilist_free(ilist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        PMIX_INFO_DESTRUCT(&l->info[i]);
    }
    rdp_free(l->info);
    memset(l, 0, sizeof(*l));
}

/* Move the entries of @a sub into a PMIX_DATA_ARRAY of pmix_info_t stored
 * under @a key in @a l; @a sub is left empty. */
static void ilist_add_array(ilist_t *l, const char *key, ilist_t *sub)
{
    pmix_data_array_t *darray;
    pmix_info_t *info;

    if (sub->status != PMIX_SUCCESS) {
        if (l->status == PMIX_SUCCESS) {
            l->status = sub->status;
        }
        ilist_free(sub);
        return;
    }
    info = ilist_next(l);
    if (info == NULL) {
        ilist_free(sub);
        return;
    }
    darray = rdp_calloc(1, sizeof(*darray));
    if (darray == NULL) {
        l->status = PMIX_ERR_NOMEM;
        ilist_free(sub);
        return;
    }
    darray->type  = PMIX_INFO;
    darray->size  = sub->n;
    darray->array = sub->info;
    if (sub->n > 0) {
        sub->info[sub->n - 1].flags |= PMIX_INFO_ARRAY_END;
    }
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type        = PMIX_DATA_ARRAY;
    info->value.data.darray = darray;
    memset(sub, 0, sizeof(*sub));
    l->n++;
}

int rdp_run_jobinfo_locate(const rdp_ctl_launch_t *launch, uint32_t rank,
                           uint32_t *node_p, uint32_t *local_rank_p)
{
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        for (uint32_t i = 0; i < launch->nodes[n].nranks; i++) {
            if (launch->nodes[n].ranks[i] == rank) {
                *node_p       = n;
                *local_rank_p = i;
                return 0;
            }
        }
    }
    return -1;
}

/* "a,b,c" of the node names, or "0,1,2;3,4" of the ranks per node */
static char *join_nodes(const rdp_ctl_launch_t *launch)
{
    size_t len = 1;
    char *s, *p;

    for (uint32_t n = 0; n < launch->nnodes; n++) {
        len += strlen(launch->nodes[n].name) + 1;
    }
    s = rdp_malloc(len);
    if (s == NULL) {
        return NULL;
    }
    p = s;
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        p += sprintf(p, "%s%s", n ? "," : "", launch->nodes[n].name);
    }
    *p = '\0';
    return s;
}

static char *join_ranks(const rdp_ctl_node_t *node, char *p)
{
    for (uint32_t i = 0; i < node->nranks; i++) {
        p += sprintf(p, "%s%u", i ? "," : "", node->ranks[i]);
    }
    *p = '\0';
    return p;
}

static char *join_ppn(const rdp_ctl_launch_t *launch)
{
    size_t len = 1;
    char *s, *p;

    for (uint32_t n = 0; n < launch->nnodes; n++) {
        len += (size_t)launch->nodes[n].nranks * 11 + 1;
    }
    s = rdp_malloc(len);
    if (s == NULL) {
        return NULL;
    }
    p = s;
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        if (n > 0) {
            *p++ = ';';
        }
        p = join_ranks(&launch->nodes[n], p);
    }
    *p = '\0';
    return s;
}

static char *local_peers(const rdp_ctl_node_t *node)
{
    char *s = rdp_malloc((size_t)node->nranks * 11 + 1);

    if (s != NULL) {
        join_ranks(node, s);
    }
    return s;
}

static pmix_rank_t lowest_rank(const rdp_ctl_node_t *node)
{
    pmix_rank_t low = PMIX_RANK_UNDEF;

    for (uint32_t i = 0; i < node->nranks; i++) {
        if (node->ranks[i] < low) {
            low = node->ranks[i];
        }
    }
    return low;
}

/* The locality keys of one node, shared by the job level (this node) and
 * the node info arrays. */
static void add_node_locality(ilist_t *l, const rdp_ctl_node_t *node)
{
    char *peers;

    ilist_u32(l, PMIX_LOCAL_SIZE, node->nranks);
    ilist_u32(l, PMIX_NODE_SIZE, node->nranks);
    if (node->nranks == 0) {
        return;
    }
    peers = local_peers(node);
    if (peers == NULL) {
        l->status = PMIX_ERR_NOMEM;
        return;
    }
    ilist_str(l, PMIX_LOCAL_PEERS, peers);
    rdp_free(peers);
    ilist_rank(l, PMIX_LOCALLDR, lowest_rank(node));
}

/* Each rdpmix-run is a resource manager of its own: PMIX_CLUSTER_ID names
 * it, for RFC0003's "cluster:nspace" names (never holds a ':'). */
static void add_cluster_id(ilist_t *l, const rdp_ctl_launch_t *launch)
{
    char id[PMIX_MAX_NSLEN + 1];

    snprintf(id, sizeof(id), "rdpmix-run.%s", launch->nspace);
    ilist_str(l, PMIX_CLUSTER_ID, id);
}

static pmix_status_t add_maps(ilist_t *l, const rdp_ctl_launch_t *launch)
{
    char *nodes = join_nodes(launch);
    char *ppn   = join_ppn(launch);
    char *regex = NULL, *pmap = NULL;
    pmix_status_t status = PMIX_ERR_NOMEM;

    if (nodes == NULL || ppn == NULL) {
        goto out;
    }
    status = PMIx_generate_regex(nodes, &regex);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(RUN, "cannot generate the node map: %s",
                      rdp_status_name(status));
        goto out;
    }
    status = PMIx_generate_ppn(ppn, &pmap);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(RUN, "cannot generate the proc map: %s",
                      rdp_status_name(status));
        goto out;
    }
    ilist_str(l, PMIX_NODE_MAP, regex);
    ilist_str(l, PMIX_PROC_MAP, pmap);
out:
    rdp_free(regex);
    rdp_free(pmap);
    rdp_free(nodes);
    rdp_free(ppn);
    return status;
}

/* @a node_id UINT32_MAX: another launcher's job, whose ranks get no node
 * (docs/design.md, "Connect and disconnect") */
/* What a rank of this node knows of itself (@a params NULL: none) */
static void add_local_proc(ilist_t *sub, const rdp_run_jobinfo_params_t *params,
                           uint32_t i)
{
    if (params->procdirs != NULL && params->procdirs[i] != NULL) {
        ilist_str(sub, PMIX_PROCDIR, params->procdirs[i]);
    }
    if (params->cpuset != NULL && params->locality != NULL) {
        ilist_str(sub, PMIX_CPUSET, params->cpuset);
        ilist_str(sub, PMIX_LOCALITY_STRING, params->locality);
    }
}

static void add_proc_data(ilist_t *l, const rdp_ctl_launch_t *launch,
                          uint32_t node_id, uint32_t n, uint32_t i,
                          const rdp_run_jobinfo_params_t *params)
{
    const rdp_ctl_node_t *node = &launch->nodes[n];
    pmix_rank_t rank           = node->ranks[i];
    ilist_t sub;

    memset(&sub, 0, sizeof(sub));
    ilist_rank(&sub, PMIX_RANK, rank);
    ilist_rank(&sub, PMIX_GLOBAL_RANK, rank);
    ilist_u32(&sub, PMIX_APPNUM, 0);
    ilist_rank(&sub, PMIX_APP_RANK, rank);
    ilist_u16(&sub, PMIX_LOCAL_RANK, (uint16_t)i);
    ilist_u16(&sub, PMIX_NODE_RANK, (uint16_t)i);
    if (node_id != UINT32_MAX) {
        ilist_u32(&sub, PMIX_NODEID, n);
        ilist_str(&sub, PMIX_HOSTNAME, node->name);
    }
    if (n == node_id && params != NULL) {
        add_local_proc(&sub, params, i);
    }
    ilist_add_array(l, PMIX_PROC_DATA, &sub);
}

static void add_job_level(ilist_t *l, const rdp_ctl_launch_t *launch)
{
    ilist_str(l, PMIX_JOBID, launch->nspace);
    add_cluster_id(l, launch);
    ilist_u32(l, PMIX_UNIV_SIZE, launch->job_size);
    ilist_u32(l, PMIX_JOB_SIZE, launch->job_size);
    ilist_u32(l, PMIX_MAX_PROCS, launch->job_size);
    ilist_u32(l, PMIX_NUM_NODES, launch->nnodes);
    ilist_u32(l, PMIX_JOB_NUM_APPS, 1);
    ilist_rank(l, PMIX_NPROC_OFFSET, 0);
    ilist_str(l, PMIX_MAPBY, launch->mapby ? launch->mapby : "by-slot");
    ilist_str(l, PMIX_RANKBY, launch->rankby ? launch->rankby : "by-slot");
    ilist_str(l, PMIX_BINDTO, "none");
}

/* the one app */
static void add_app(ilist_t *l, const rdp_ctl_launch_t *launch)
{
    ilist_t sub;

    memset(&sub, 0, sizeof(sub));
    ilist_u32(&sub, PMIX_APPNUM, 0);
    ilist_u32(&sub, PMIX_APP_SIZE, launch->job_size);
    ilist_rank(&sub, PMIX_APPLDR, 0);
    if (launch->cwd != NULL) {
        ilist_str(&sub, PMIX_WDIR, launch->cwd);
    }
    ilist_add_array(l, PMIX_APP_INFO_ARRAY, &sub);
}

static pmix_status_t ilist_finish(ilist_t *l, pmix_info_t **info_p,
                                  size_t *ninfo_p)
{
    pmix_status_t status = l->status;

    if (status != PMIX_SUCCESS) {
        ilist_free(l);
        return status;
    }
    if (l->n > 0) {
        l->info[l->n - 1].flags |= PMIX_INFO_ARRAY_END;
    }
    *info_p  = l->info;
    *ninfo_p = l->n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_jobinfo_build(const rdp_run_jobinfo_params_t *params,
                                    pmix_info_t **info_p, size_t *ninfo_p)
{
    const rdp_ctl_launch_t *launch = params->launch;
    const rdp_ctl_node_t *me;
    ilist_t l, sub;
    pmix_status_t status;

    if (params->node_id >= launch->nnodes) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        if (launch->nodes[n].nranks > UINT16_MAX + 1u) {
            rdp_log_error(RUN, "more than %u ranks on node %s", UINT16_MAX + 1u,
                          launch->nodes[n].name);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    me = &launch->nodes[params->node_id];
    memset(&l, 0, sizeof(l));

    add_job_level(&l, launch);
    status = add_maps(&l, launch);
    if (status != PMIX_SUCCESS) {
        ilist_free(&l);
        return status;
    }
    if (params->tmpdir != NULL) {
        ilist_str(&l, PMIX_TMPDIR, params->tmpdir);
    }
    if (params->nsdir != NULL) {
        ilist_str(&l, PMIX_NSDIR, params->nsdir);
    }
    if (params->topo_xml != NULL) {
        ilist_str(&l, PMIX_HWLOC_XML_V2, params->topo_xml);
    }

    /* this node */
    ilist_u32(&l, PMIX_NODEID, params->node_id);
    ilist_str(&l, PMIX_HOSTNAME, me->name);
    add_node_locality(&l, me);

    add_app(&l, launch);

    /* every node */
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        memset(&sub, 0, sizeof(sub));
        ilist_u32(&sub, PMIX_NODEID, n);
        ilist_str(&sub, PMIX_HOSTNAME, launch->nodes[n].name);
        add_node_locality(&sub, &launch->nodes[n]);
        ilist_add_array(&l, PMIX_NODE_INFO_ARRAY, &sub);
    }

    /* every rank */
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        for (uint32_t i = 0; i < launch->nodes[n].nranks; i++) {
            add_proc_data(&l, launch, params->node_id, n, i, params);
        }
    }

    return ilist_finish(&l, info_p, ninfo_p);
}

pmix_status_t rdp_run_jobinfo_build_foreign(const rdp_ctl_launch_t *launch,
                                            pmix_info_t **info_p,
                                            size_t *ninfo_p)
{
    ilist_t l;

    memset(&l, 0, sizeof(l));
    add_job_level(&l, launch);
    /* none of its ranks runs here, whatever the node names say */
    ilist_str(&l, PMIX_LOCAL_PEERS, "");
    add_app(&l, launch);
    for (uint32_t n = 0; n < launch->nnodes; n++) {
        for (uint32_t i = 0; i < launch->nodes[n].nranks; i++) {
            add_proc_data(&l, launch, UINT32_MAX, n, i, NULL);
        }
    }
    return ilist_finish(&l, info_p, ninfo_p);
}
