/* put.c - PMIx_Put, PMIx_Commit, PMIx_Store_internal */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <string.h>

/*
 * A put is copied and stored on the calling thread, under the store's lock
 * (store.h): in our own data at once (so our own Get sees it) and, unless
 * its scope is PMIX_INTERNAL, in the set of keys waiting for the next
 * commit.  PMIx_Commit sends that set as one COMMIT message; it is posted
 * to the loop after the put returned, so it always sees the put.
 */

static pmix_status_t store_put(const pmix_proc_t *proc, pmix_scope_t scope,
                               int share, const char *key,
                               const pmix_value_t *val)
{
    pmix_value_t copy;
    rdp_client_pending_t *pending = rdp_client.uncommitted;
    pmix_status_t status;

    if (pending == NULL) {
        /* finalized in between */
        return PMIX_ERR_INIT;
    }
    status = rdp_value_copy(&copy, val);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_client_store_put(&rdp_client.store, share ? pending : NULL,
                                  proc->nspace, proc->rank, key, scope, &copy);
    rdp_value_destruct(&copy);
    return status;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    status = rdp_client_check_key(key);
    if (status != PMIX_SUCCESS || val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    switch (scope) {
    case PMIX_SCOPE_UNDEF:
    case PMIX_LOCAL:
    case PMIX_REMOTE:
    case PMIX_GLOBAL:
    case PMIX_INTERNAL:
        break;
    default:
        return PMIX_ERR_BAD_PARAM;
    }
    return store_put(&rdp_rt.myproc, scope, scope != PMIX_INTERNAL, key, val);
}

pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[],
                                  pmix_value_t *val)
{
    pmix_status_t status;
    pmix_proc_t p;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    status = rdp_client_check_key(key);
    if (status != PMIX_SUCCESS || val == NULL || proc == NULL
        || strnlen(proc->nspace, sizeof(proc->nspace)) > PMIX_MAX_NSLEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    p = *proc;
    if (p.nspace[0] == '\0') {
        PMIX_LOAD_NSPACE(p.nspace, rdp_rt.myproc.nspace);
    }
    return store_put(&p, PMIX_INTERNAL, 0, key, val);
}

static void commit_on_loop(void *arg)
{
    rdp_buf_t buf;
    pmix_status_t status;

    if (rdp_client.uncommitted == NULL) {
        return;
    }
    if (rdp_client.conn == NULL) {
        /* singleton (nobody to share with) or lost server: keep the
         * data local; it stays visible to our own Get */
        rdp_client_store_take_pending(&rdp_client.store, rdp_client.uncommitted,
                                      NULL);
        return;
    }
    rdp_buf_init(&buf);
    /* the pending keys never include PMIX_INTERNAL ones (PMIx_Put) */
    status = rdp_client_store_take_pending(&rdp_client.store,
                                           rdp_client.uncommitted, &buf);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "cannot pack commit: %s",
                      rdp_status_name(status));
        rdp_buf_cleanup(&buf);
        return;
    }
    /* no reply: the stream is ordered, so a later fence or get sees it.
     * Tag 0 is for server-initiated messages, so take a request tag. */
    if (rdp_client.next_tag < 2) {
        rdp_client.next_tag = 2;
    }
    status = rdp_ipc_send(rdp_client.conn, RDP_CMD_COMMIT,
                          rdp_client.next_tag++, &buf);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "cannot send commit: %s",
                      rdp_status_name(status));
    }
    rdp_buf_cleanup(&buf);
}

pmix_status_t PMIx_Commit(void)
{
    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    return rdp_loop_post(rdp_rt.loop, commit_on_loop, NULL);
}
