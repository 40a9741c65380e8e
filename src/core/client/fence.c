/* fence.c - PMIx_Fence, PMIx_Fence_nb */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/directive.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

/*
 * NULL procs means our whole nspace (PMIX_RANK_WILDCARD).  The server
 * answers when every participant arrived; with PMIX_COLLECT_DATA its reply
 * carries a bundle of the participants' committed data (inline, or in a
 * sealed memfd that we map read-only), stored before the callback runs:
 * its proc sections stay packed in it until a Get asks (store.h).  PMIX_TIMEOUT goes to the server and also arms a client
 * timer.  A singleton's fence over itself completes locally.
 */

/* Keep a fence result (its sections stay packed until looked up). */
pmix_status_t rdp_client_fence_keep(const void *data, size_t len, int mapped)
{
    rdp_client_backing_t *bk;
    pmix_status_t status;

    status = rdp_client_backing_create(data, len, mapped, &bk);
    if (status != PMIX_SUCCESS) {
        if (mapped) {
            rdp_ipc_memfd_unmap(data, len);
        }
        return status;
    }
    status = rdp_client_store_bundle_keep(&rdp_client.store, bk);
    rdp_client_backing_unref(&rdp_client.store, bk);
    return status;
}

pmix_status_t rdp_client_fence_keep_fd(int fd, size_t size)
{
    const void *map;
    pmix_status_t status = rdp_ipc_memfd_map(fd, size, &map);

    close(fd);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    return rdp_client_fence_keep(map, size, 1);
}

/* The bundle of a FENCE_ACK in the memfd that came with it. */
static pmix_status_t store_shm_bundle(rdp_rbuf_t *rb)
{
    uint64_t size;
    pmix_status_t status;
    int fd = -1;

    status = rdp_unpack_u64(rb, &size);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (rdp_client.conn != NULL) {
        fd = rdp_ipc_conn_take_fd(rdp_client.conn);
    }
    if (fd < 0 || size == 0 || size > SIZE_MAX) {
        rdp_log_error(CLIENT, "fence result in shared memory without a "
                              "usable descriptor");
        if (fd >= 0) {
            close(fd);
        }
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return rdp_client_fence_keep_fd(fd, (size_t)size);
}

static void fence_finish(rdp_client_op_t *op, pmix_status_t status,
                         rdp_rbuf_t *rb)
{
    pmix_op_cbfunc_t cbfunc = (pmix_op_cbfunc_t)op->cbfunc;
    uint8_t has_bundle;
    int caller_took, waited;

    /* from here on the caller of a ticket cannot complete it too */
    caller_took = rdp_client_board_ticket_claim(op->ticket);
    if (status == PMIX_SUCCESS && rb != NULL && !caller_took) {
        RDP_BOARD_HOOK(RDP_BOARD_AT_STORE,
                       op->on_board ? op->board_n : UINT64_MAX);
        status = rdp_unpack_u8(rb, &has_bundle);
        if (status == PMIX_SUCCESS) {
            switch (has_bundle) {
            case RDP_FENCE_NO_BUNDLE:
                break;
            case RDP_FENCE_BUNDLE_INLINE:
                status = rdp_client_fence_keep(rb->ptr, rb->left, 0);
                break;
            case RDP_FENCE_BUNDLE_MEMFD:
                status = store_shm_bundle(rb);
                break;
            default:
                status = PMIX_ERR_UNPACK_FAILURE;
                break;
            }
        }
        if (status != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "bad fence reply: %s",
                          rdp_status_name(status));
        }
    }
    /* after the store (later fences wait for it) and before the callback
     * (which may free a ticket the list points to) */
    waited = op->on_board && rdp_client_board_forget(op->board_n);
    if (cbfunc != NULL) {
        cbfunc(status, op->cbdata);
    }
    if (waited) {
        /* later fences the board shows waited for this one; their
         * callbacks come after this one's */
        rdp_client_board_recheck();
    }
}

static void fence_local(void *arg)
{
    rdp_client_op_t *op = arg;

    fence_finish(op, PMIX_SUCCESS, NULL);
    rdp_client_op_free(op);
}

/* Every participant is this process (a singleton's only possible fence). */
static int only_me(const pmix_proc_t *procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; i++) {
        if (strncmp(procs[i].nspace, rdp_rt.myproc.nspace, PMIX_MAX_NSLEN) != 0
            || (procs[i].rank != PMIX_RANK_WILDCARD
                && procs[i].rank != rdp_rt.myproc.rank)) {
            return 0;
        }
    }
    return 1;
}

/* A fence over our whole nspace: numbered, and answered through the
 * job's board when the server and we have one (fence_board.c). */
static pmix_status_t whole_job_prepare(rdp_client_op_t *op)
{
    int r = rdp_client_board_tail(&op->payload, &op->board_n);

    if (r < 0) {
        return PMIX_ERR_NOMEM;
    }
    op->on_board = r;
    if (op->ticket != NULL) {
        rdp_client_board_ticket_number(op->ticket, r, op->board_n);
    }
    return PMIX_SUCCESS;
}

static void whole_job_sent(rdp_client_op_t *op, uint32_t tag)
{
    if (op->on_board) {
        rdp_client_board_wait(op->board_n, tag, op->ticket);
    }
}

/* Whether the server's canonical form of @a procs is our nspace's
 * wildcard (rdp_srv_procs_canonical): then this fence is the server's
 * next one of that signature for us, which both sides count alike. */
static int whole_job(const pmix_proc_t *procs, size_t nprocs)
{
    int wildcard = 0;

    for (size_t i = 0; i < nprocs; i++) {
        if (strncmp(procs[i].nspace, rdp_rt.myproc.nspace, PMIX_MAX_NSLEN)
            != 0) {
            return 0;
        }
        wildcard |= procs[i].rank == PMIX_RANK_WILDCARD;
    }
    return wildcard;
}

/* Pack @a op's request (group id @a grp, or @a procs; then @a info) and
 * post it; freed on error. */
static pmix_status_t fence_post(rdp_client_op_t *op, const char *grp,
                                const pmix_proc_t *procs, size_t nprocs,
                                const pmix_info_t *info, size_t ninfo)
{
    pmix_status_t status;

    op->timeout = rdp_client_info_timeout(info, ninfo);
    status      = grp != NULL ? rdp_pack_string(&op->payload, grp)
                              : rdp_pack_proc_array(&op->payload, procs, nprocs);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&op->payload, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_client_op_free(op);
        return status;
    }
    return rdp_client_op_post(op);
}

/* A fence over a whole group with PMIX_GROUP_FT_COLLECTIVE: the server
 * runs it as a group operation that goes on without members that leave
 * or terminate (server/group.c); its reply is a FENCE_ACK's. */
static pmix_status_t ft_group_fence(const char *grp, const pmix_info_t *info,
                                    size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                    void *cbdata)
{
    rdp_client_op_t *op = rdp_client_op_create(
        RDP_CMD_GROUP_FENCE, fence_finish, (void *)cbfunc, cbdata);

    if (op == NULL) {
        return PMIX_ERR_NOMEM;
    }
    return fence_post(op, grp, NULL, 0, info, ninfo);
}

/* PMIx_Fence_nb past its directive check (by name: the caller's);
 * @a ticket: a blocking caller's (fence_board.c), for a fence over the
 * whole job. */
static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t cbfunc, void *cbdata,
                              rdp_board_ticket_t *ticket)
{
    rdp_client_op_t *op;
    pmix_proc_t all, *members = NULL;
    size_t nmembers = 0;
    const char *grp;
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if ((procs == NULL && nprocs > 0) || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (procs == NULL || nprocs == 0) {
        all      = rdp_rt.myproc;
        all.rank = PMIX_RANK_WILDCARD;
        procs    = &all;
        nprocs   = 1;
    }
    grp = rdp_client.mode == RDP_CLIENT_SINGLETON
              ? NULL
              : rdp_client_group_ft_fence(procs, nprocs, info, ninfo);
    if (grp != NULL) {
        return ft_group_fence(grp, info, ninfo, cbfunc, cbdata);
    }
    status = rdp_client_group_expand(procs, nprocs, &members, &nmembers);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (members != NULL) {
        /* (group id, rank) addressing: the server sees the members */
        procs  = members;
        nprocs = nmembers;
    }
    op = rdp_client_op_create(RDP_CMD_FENCE, fence_finish, (void *)cbfunc,
                              cbdata);
    if (op == NULL) {
        rdp_free(members);
        return PMIX_ERR_NOMEM;
    }
    if (rdp_client.mode == RDP_CLIENT_SINGLETON) {
        if (!only_me(procs, nprocs)) {
            rdp_free(members);
            rdp_client_op_free(op);
            return PMIX_ERR_BAD_PARAM;
        }
        rdp_free(members);
        status = rdp_loop_post(rdp_rt.loop, fence_local, op);
        if (status != PMIX_SUCCESS) {
            rdp_client_op_free(op);
        }
        return status;
    }
    if (members == NULL && whole_job(procs, nprocs)) {
        op->prepare = whole_job_prepare;
        op->sent    = whole_job_sent;
        op->ticket  = ticket;
    }
    status = fence_post(op, NULL, procs, nprocs, info, ninfo);
    rdp_free(members);
    return status;
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                            const pmix_info_t info[], size_t ninfo,
                            pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);

    return fence_nb(procs, nprocs, info, ninfo, cbfunc, cbdata, NULL);
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                         const pmix_info_t info[], size_t ninfo)
{
    rdp_client_sync_t sync;
    rdp_board_ticket_t *ticket;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    status = rdp_client_may_block();
    if (status != PMIX_SUCCESS) {
        return status;
    }
    ticket = rdp_client_active() ? rdp_client_board_ticket() : NULL;
    if (ticket != NULL) {
        status = fence_nb(procs, nprocs, info, ninfo,
                          rdp_client_board_ticket_cb, ticket, ticket);
        if (status != PMIX_SUCCESS) {
            rdp_client_board_ticket_wait(ticket, 0);
            return status;
        }
        return rdp_client_board_ticket_wait(ticket, 1);
    }
    rdp_wait_init(&sync.wait);
    status =
        PMIx_Fence_nb(procs, nprocs, info, ninfo, rdp_client_sync_op_cb, &sync);
    if (status == PMIX_SUCCESS) {
        status = rdp_wait_wait(&sync.wait);
    }
    rdp_wait_cleanup(&sync.wait);
    return status;
}
