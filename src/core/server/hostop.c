/* hostop.c - host replies and host upcalls answered to a peer */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

void rdp_srv_host_reply_keep(rdp_srv_host_reply_t *hr, pmix_status_t status,
                             const void *data, size_t ndata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata)
{
    hr->status         = status;
    hr->data           = data;
    hr->ndata          = data == NULL ? 0 : ndata;
    hr->release_fn     = release_fn;
    hr->release_cbdata = release_cbdata;
}

/* The release a guarded callback sees: checks, then calls the host's. */
static void guarded_release(void *cbdata)
{
    rdp_srv_host_reply_t *hr = cbdata;
    pmix_release_cbfunc_t fn = hr->host_release;

    hr->host_release = NULL;
    rdp_srv_host_call_check(RDP_SRV_HOSTFN_RELEASE);
    if (fn != NULL) {
        fn(hr->host_release_cbdata);
    }
}

void rdp_srv_host_release_guard(rdp_srv_host_reply_t *hr,
                                pmix_release_cbfunc_t *fn_p, void **cbdata_p)
{
    hr->host_release        = *fn_p;
    hr->host_release_cbdata = *cbdata_p;
    if (*fn_p != NULL) {
        *fn_p     = guarded_release;
        *cbdata_p = hr;
    }
}

void rdp_srv_host_reply_drop(rdp_srv_host_reply_t *hr)
{
    hr->release_fn = NULL;
    hr->data       = NULL;
    hr->ndata      = 0;
}

void rdp_srv_host_reply_release(rdp_srv_host_reply_t *hr)
{
    pmix_release_cbfunc_t fn = hr->release_fn;

    rdp_srv_host_reply_drop(hr);
    if (fn != NULL) {
        if (fn != guarded_release) { /* that one checks itself */
            rdp_srv_host_call_check(RDP_SRV_HOSTFN_RELEASE);
        }
        fn(hr->release_cbdata);
    }
}

/* ---- host operations answered to a peer ---- */

rdp_srv_hostop_t *rdp_srv_hostop_create(rdp_srv_peer_t *peer, uint16_t cmd,
                                        uint32_t tag)
{
    rdp_srv_hostop_t *op = rdp_calloc(1, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    op->peer_id   = peer == NULL ? 0 : peer->id;
    op->reply_cmd = cmd;
    op->tag       = tag;
    rdp_buf_init(&op->reply);
    return op;
}

void rdp_srv_hostop_free(rdp_srv_hostop_t *op)
{
    if (op == NULL) {
        return;
    }
    if (op->free_fn != NULL) {
        op->free_fn(op->ctx);
    }
    rdp_buf_cleanup(&op->reply);
    rdp_free(op);
}

/* Pack the host's info array after the status, then give it back. */
static void take_host_infos(rdp_srv_hostop_t *op)
{
    if (op->has_infos
        && (op->status == PMIX_SUCCESS
            || op->status == PMIX_QUERY_PARTIAL_SUCCESS)) {
        pmix_status_t st =
            rdp_pack_info_array(&op->reply, op->infos.data, op->infos.ndata);

        if (st != PMIX_SUCCESS) {
            op->status = st;
        }
    }
    rdp_srv_host_reply_release(&op->infos);
}

static void hostop_done_on_loop(void *arg)
{
    rdp_srv_hostop_t *op = arg;
    rdp_srv_peer_t *peer;

    if (!rdp_srv.active) {
        rdp_srv_host_reply_release(&op->infos);
        rdp_srv_hostop_free(op); /* the server finalized meanwhile */
        return;
    }
    take_host_infos(op);
    if (op->done_fn != NULL) {
        op->done_fn(op);
    }
    peer = rdp_srv_peer_find(op->peer_id);
    if (op->status == PMIX_SUCCESS && op->reply.size == 0) {
        pmix_status_t st = PMIX_SUCCESS;

        switch (op->empty_reply) {
        case RDP_SRV_EMPTY_INFOS:
            st = rdp_pack_info_array(&op->reply, NULL, 0);
            break;
        case RDP_SRV_EMPTY_PDATA:
            st = rdp_pack_pdata_array(&op->reply, NULL, 0);
            break;
        case RDP_SRV_EMPTY_STRING:
            st = rdp_pack_string(&op->reply, NULL);
            break;
        default:
            break;
        }
        if (st != PMIX_SUCCESS) {
            op->status = st;
        }
    }
    if (peer != NULL && op->reply_cmd != RDP_CMD_INVALID) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        if (rdp_pack_i32(&buf, op->status) != PMIX_SUCCESS
            || ((op->status == PMIX_SUCCESS
                 || op->status == PMIX_QUERY_PARTIAL_SUCCESS)
                && op->reply.size > 0
                && rdp_buf_append(&buf, op->reply.data, op->reply.size)
                       != PMIX_SUCCESS)) {
            rdp_log_error(SERVER, "cannot build a reply: out of memory");
            rdp_buf_cleanup(&buf);
            rdp_srv_peer_drop(peer, PMIX_ERR_NOMEM);
        } else {
            rdp_srv_reply_buf(peer, op->reply_cmd, op->tag, &buf);
            if (op->close_after) {
                rdp_srv_peer_drop(peer, PMIX_SUCCESS);
            }
        }
    }
    rdp_srv_hostop_free(op);
}

void rdp_srv_hostop_complete(rdp_srv_hostop_t *op, pmix_status_t status)
{
    rdp_loop_t *loop = rdp_rt.loop;

    op->status = status;
    if (loop == NULL
        || rdp_loop_post(loop, hostop_done_on_loop, op) != PMIX_SUCCESS) {
        /* inside the host's callback: its buffers are not given back
         * rather than released under its own lock */
        rdp_log_error(SERVER, "host completion after server shutdown "
                              "dropped");
        if (op->drop_fn != NULL) {
            op->drop_fn(op->ctx);
        }
        rdp_srv_hostop_free(op);
    }
}

void rdp_srv_hostop_op_cb(pmix_status_t status, void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_OP);
    rdp_srv_hostop_complete(cbdata, status);
    RDP_SRV_HOST_CB_LEAVE();
}

/* Any thread, from inside the host's callback: never calls into the host
 * (rdp_srv_host_reply_t says why). */
void rdp_srv_hostop_info_cb(pmix_status_t status, pmix_info_t *info,
                            size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn,
                            void *release_cbdata)
{
    rdp_srv_hostop_t *op = cbdata;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_INFO, &op->infos, release_fn,
                                  release_cbdata);
    op->has_infos = true;
    rdp_srv_host_reply_keep(&op->infos, status, info, ninfo, release_fn,
                            release_cbdata);
    rdp_srv_hostop_complete(op, status);
    RDP_SRV_HOST_CB_LEAVE();
}

void rdp_srv_hostop_started(rdp_srv_hostop_t *op, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        return; /* the host calls back */
    }
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    rdp_srv_hostop_complete(op, rc);
}
