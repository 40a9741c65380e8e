/* fetch.c - the server's data for client-side PMIx_Get in its own process */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/log.h"
#include "core/util/status.h"

/*
 * A host such as Open MPI's mpirun calls client-side functions in the
 * server process: PMIx_Get of the job data it registered and of what its
 * clients committed.  The client code reads through rdp_runtime_fetch
 * (runtime.h), which this file provides while the server runs: one bundle
 * set of the nspace's registered sections plus the committed data of the
 * asked rank (all scopes: the server sees everything it holds).
 */

typedef struct fetch_walk {
    const char *nspace;
    rdp_buf_t *extra;
    uint32_t n;
    pmix_status_t status;
} fetch_walk_t;

static pmix_status_t pack_rank(fetch_walk_t *fw, pmix_rank_t rank)
{
    pmix_status_t status;

    status =
        rdp_srv_pack_proc_section(fw->nspace, rank, RDP_SCOPES_ALL, fw->extra);
    if (status == PMIX_SUCCESS) {
        fw->n++;
    }
    return status;
}

static int walk_rank_cb(pmix_rank_t rank, void *arg)
{
    fetch_walk_t *fw = arg;

    if (rank >= PMIX_RANK_VALID) {
        return 0;
    }
    fw->status = pack_rank(fw, rank);
    return fw->status != PMIX_SUCCESS;
}

pmix_status_t rdp_srv_local_fetch(const char *nspace, pmix_rank_t rank,
                                  rdp_buf_t *buf)
{
    rdp_srv_nspace_t *ns;
    rdp_buf_t extra;
    fetch_walk_t fw;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!rdp_srv.active || nspace == NULL) {
        return PMIX_ERR_INIT;
    }
    ns = rdp_srv_nspace_find(nspace);
    if (ns == NULL || !ns->registered) {
        return PMIX_ERR_NOT_FOUND;
    }
    rdp_buf_init(&extra);
    fw.nspace = ns->name;
    fw.extra  = &extra;
    fw.n      = 0;
    fw.status = PMIX_SUCCESS;
    if (rank < PMIX_RANK_VALID) {
        if (rdp_kvs_has_rank(rdp_srv.modex, ns->name, rank)) {
            fw.status = pack_rank(&fw, rank);
        }
    } else {
        rdp_kvs_for_each_rank(rdp_srv.modex, ns->name, walk_rank_cb, &fw);
    }
    status = fw.status;
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, 1);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_nspace_pack_set(ns, &extra, fw.n, buf);
    }
    rdp_buf_cleanup(&extra);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot pack data of %s:%u for a local get: %s",
                      nspace, rank, rdp_status_name(status));
    }
    return status;
}
