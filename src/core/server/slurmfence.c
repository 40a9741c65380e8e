/* slurmfence.c - operations run as Slurm 22.05's fences (slurmfence.h) */
#include "config.h"
#include "core/server/slurmfence.h"
#include "core/util/alloc.h"

#include <string.h>

/* The node id of @a rank of @a ns, or false. */
static bool node_of(rdp_srv_nspace_t *ns, pmix_rank_t rank, uint64_t *id_p)
{
    const pmix_value_t *v =
        rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, rank, PMIX_NODEID);

    return v != NULL && rdp_srv_value_to_u64(v, id_p);
}

/* Add @a id to the @a *n distinct ids in @a seen (room for @a max). */
static void note_node(uint64_t *seen, size_t *n, size_t max, uint64_t id)
{
    size_t k = 0;

    while (k < *n && seen[k] != id) {
        k++;
    }
    if (k == *n && *n < max) {
        seen[(*n)++] = id;
    }
}

size_t rdp_srv_procs_span(const pmix_proc_t *procs, size_t nprocs, size_t *of_p)
{
    rdp_srv_nspace_t *ns =
        nprocs > 0 ? rdp_srv_nspace_find(procs[0].nspace) : NULL;
    uint64_t *seen;
    size_t nseen = 0;

    *of_p = 0;
    if (ns == NULL || ns->nnodes == 0) {
        return 0;
    }
    *of_p = ns->nnodes;
    seen  = rdp_calloc(ns->nnodes, sizeof(*seen));
    for (size_t i = 0; seen != NULL && i < nprocs; i++) {
        uint64_t id;

        if (!PMIX_CHECK_NSPACE(procs[i].nspace, ns->name)) {
            nseen = 0;
            break;
        }
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            nseen = ns->nnodes; /* the whole job */
            break;
        }
        if (!node_of(ns, procs[i].rank, &id)) {
            nseen = 0;
            break;
        }
        note_node(seen, &nseen, ns->nnodes, id);
    }
    if (seen == NULL) {
        *of_p = 0;
    }
    rdp_free(seen);
    return nseen;
}

pmix_status_t rdp_srv_slurm_ring(const char *nspace, size_t copies,
                                 const pmix_info_t *info, size_t ninfo,
                                 char *data, size_t ndata,
                                 pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmix_proc_t *procs = rdp_calloc(copies, sizeof(*procs));
    pmix_info_t *all   = rdp_calloc(ninfo + 1, sizeof(*all));
    bool yes           = true;
    pmix_status_t rc   = PMIX_ERR_NOMEM;

    if (procs != NULL && all != NULL) {
        for (size_t i = 0; i < copies; i++) {
            PMIX_LOAD_PROCID(&procs[i], nspace, PMIX_RANK_WILDCARD);
        }
        if (ninfo > 0) {
            memcpy(all, info, ninfo * sizeof(*all)); /* shallow: borrowed */
        }
        PMIX_INFO_LOAD(&all[ninfo], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        /* Slurm copies the process list during the call */
        rc = rdp_srv.host.fence_nb(procs, copies, all, ninfo + 1, data, ndata,
                                   cbfunc, cbdata);
    }
    rdp_free(all);
    rdp_free(procs);
    return rc;
}
