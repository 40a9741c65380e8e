/* resolve.c - PMIx_Resolve_peers, PMIx_Resolve_nodes */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/alloc.h"

#include <string.h>

/*
 * Answered from what the client holds (job info received at connect,
 * fence results and fetched data): node sections' PMIX_LOCAL_PEERS and
 * PMIX_HOSTNAME, job-level PMIX_LOCAL_PEERS for our own node, and
 * per-proc PMIX_HOSTNAME.  The job data of an nspace we do not hold is
 * fetched from the server first, except inside event handlers (the
 * library's thread), where only what we hold is used.
 */

typedef struct resolve_args {
    const char *nodename;
    const char *nspace;
    pmix_proc_t *procs;
    size_t nprocs;
    char *nodelist;
} resolve_args_t;

static pmix_status_t peers_on_loop(void *arg)
{
    resolve_args_t *ra = arg;

    if (rdp_client.uncommitted == NULL) {
        return PMIX_ERR_INIT;
    }
    return rdp_client_store_resolve_peers(&rdp_client.store, ra->nodename,
                                          ra->nspace, &ra->procs, &ra->nprocs);
}

static pmix_status_t nodes_on_loop(void *arg)
{
    resolve_args_t *ra = arg;

    if (rdp_client.uncommitted == NULL) {
        return PMIX_ERR_INIT;
    }
    return rdp_client_store_resolve_nodes(&rdp_client.store, ra->nspace,
                                          &ra->nodelist);
}

static pmix_status_t knows_on_loop(void *arg)
{
    if (rdp_client.uncommitted == NULL) {
        return PMIX_ERR_INIT;
    }
    return rdp_client_store_knows(&rdp_client.store, arg) ? PMIX_SUCCESS
                                                          : PMIX_ERR_NOT_FOUND;
}

/* Job data of an nspace we never heard of (spawned, connected) is asked
 * from the server first, when we may wait for it. */
static void fetch_unknown_nspace(const char *nspace)
{
    pmix_proc_t wild;
    pmix_value_t *val = NULL;

    if (nspace == NULL || nspace[0] == '\0' || rdp_loop_on_loop(rdp_rt.loop)
        || rdp_runtime_call_sync(knows_on_loop, (void *)nspace)
               != PMIX_ERR_NOT_FOUND) {
        return;
    }
    memset(&wild, 0, sizeof(wild));
    PMIX_LOAD_NSPACE(wild.nspace, nspace);
    wild.rank = PMIX_RANK_WILDCARD;
    if (PMIx_Get(&wild, NULL, NULL, 0, &val) == PMIX_SUCCESS) {
        PMIX_VALUE_RELEASE(val);
    }
}

static int nspace_ok(const char *nspace)
{
    return nspace == NULL
           || strnlen(nspace, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN;
}

pmix_status_t PMIx_Resolve_peers(const char *nodename,
                                 const pmix_nspace_t nspace,
                                 pmix_proc_t **procs, size_t *nprocs)
{
    resolve_args_t ra = {nodename, nspace, NULL, 0, NULL};
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (procs == NULL || nprocs == NULL || !nspace_ok(nspace)) {
        return PMIX_ERR_BAD_PARAM;
    }
    fetch_unknown_nspace(nspace);
    status = rdp_runtime_call_sync(peers_on_loop, &ra);
    if (status != PMIX_SUCCESS) {
        *procs  = NULL;
        *nprocs = 0;
        return status;
    }
    *procs  = ra.procs;
    *nprocs = ra.nprocs;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist)
{
    resolve_args_t ra = {NULL, nspace, NULL, 0, NULL};
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (nodelist == NULL || !nspace_ok(nspace)) {
        return PMIX_ERR_BAD_PARAM;
    }
    fetch_unknown_nspace(nspace);
    status = rdp_runtime_call_sync(nodes_on_loop, &ra);
    if (status != PMIX_SUCCESS) {
        *nodelist = NULL;
        return status;
    }
    *nodelist = ra.nodelist;
    return PMIX_SUCCESS;
}
