/* client.c - client state, requests to the server and their replies */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <string.h>

rdp_client_t rdp_client;

int rdp_client_active(void)
{
    if (__atomic_load_n(&rdp_client.refs, __ATOMIC_ACQUIRE) > 0) {
        return 1;
    }
    return rdp_client_embed() == PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* requests                                                         */

typedef struct client_req {
    uint32_t tag;
    uint16_t cmd;
    rdp_client_reply_cb_t cb;
    void *arg;
    rdp_timer_t *timer;
} client_req_t;

static void req_fail(client_req_t *req, pmix_status_t status)
{
    rdp_timer_destroy(req->timer);
    req->cb(status, NULL, req->arg);
    rdp_free(req);
}

static void req_timeout(void *arg)
{
    client_req_t *req = arg;

    rdp_log_debug(CLIENT, "request %u (command %u) timed out", req->tag,
                  (unsigned)req->cmd);
    rdp_hash_remove_u64(&rdp_client.pending, req->tag);
    req_fail(req, PMIX_ERR_TIMEOUT);
}

int rdp_client_request_pending(uint32_t tag)
{
    return rdp_hash_get_u64(&rdp_client.pending, tag) != NULL;
}

int rdp_client_request_complete(uint32_t tag, pmix_status_t status)
{
    client_req_t *req = rdp_hash_remove_u64(&rdp_client.pending, tag);

    if (req == NULL) {
        return 0;
    }
    req_fail(req, status);
    return 1;
}

pmix_status_t rdp_client_request(uint16_t cmd, rdp_buf_t *payload,
                                 double timeout, rdp_client_reply_cb_t cb,
                                 void *arg)
{
    return rdp_client_request_tag(cmd, payload, timeout, cb, arg, NULL);
}

pmix_status_t rdp_client_request_tag(uint16_t cmd, rdp_buf_t *payload,
                                     double timeout, rdp_client_reply_cb_t cb,
                                     void *arg, uint32_t *tag_p)
{
    client_req_t *req;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (rdp_client.conn == NULL) {
        rdp_buf_cleanup(payload);
        if (rdp_client.mode == RDP_CLIENT_SINGLETON) {
            return PMIX_ERR_UNREACH;
        }
        if (rdp_client.mode == RDP_CLIENT_IN_SERVER) {
            return PMIX_ERR_NOT_SUPPORTED; /* no server above us */
        }
        return PMIX_ERR_LOST_CONNECTION;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        rdp_buf_cleanup(payload);
        return PMIX_ERR_NOMEM;
    }
    /* tag 0 is for server-initiated messages, 1 for the handshake */
    do {
        req->tag = rdp_client.next_tag++;
    } while (req->tag < 2
             || rdp_hash_get_u64(&rdp_client.pending, req->tag) != NULL);
    req->cmd = cmd;
    req->cb  = cb;
    req->arg = arg;
    if (timeout > 0) {
        status = rdp_timer_create(rdp_rt.loop, req_timeout, req, &req->timer);
        if (status != PMIX_SUCCESS) {
            goto err_free;
        }
    }
    status = rdp_hash_set_u64(&rdp_client.pending, req->tag, req, NULL);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }
    status = rdp_ipc_send(rdp_client.conn, cmd, req->tag, payload);
    if (status != PMIX_SUCCESS) {
        rdp_hash_remove_u64(&rdp_client.pending, req->tag);
        goto err_free;
    }
    if (req->timer != NULL) {
        rdp_timer_start(req->timer, timeout);
    }
    if (tag_p != NULL) {
        *tag_p = req->tag;
    }
    rdp_log_trace(CLIENT, "request %u (command %u) sent", req->tag,
                  (unsigned)cmd);
    return PMIX_SUCCESS;

err_free:
    rdp_buf_cleanup(payload);
    rdp_timer_destroy(req->timer);
    rdp_free(req);
    return status;
}

static void handle_reply(const rdp_msg_hdr_t *hdr, const void *payload,
                         size_t len)
{
    client_req_t *req;
    rdp_rbuf_t rb;
    int32_t status;

    req = rdp_hash_remove_u64(&rdp_client.pending, hdr->tag);
    if (req == NULL) {
        /* timed out already: the caller has had its answer */
        rdp_log_debug(CLIENT, "late reply %u (command %u) dropped", hdr->tag,
                      (unsigned)hdr->cmd);
        return;
    }
    if (req->timer != NULL) {
        rdp_timer_cancel(req->timer);
    }
    rdp_rbuf_init(&rb, payload, len);
    if (hdr->cmd != req->cmd + 1
        || rdp_unpack_i32(&rb, &status) != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed reply (command %u) to request %u",
                      (unsigned)hdr->cmd, hdr->tag);
        req_fail(req, PMIX_ERR_UNPACK_FAILURE);
        return;
    }
    rdp_timer_destroy(req->timer);
    req->timer = NULL;
    req->cb(status, &rb, req->arg);
    rdp_free(req);
}

static void handle_event(const void *payload, size_t len)
{
    rdp_rbuf_t rb;
    int32_t code;
    pmix_proc_t source;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    pmix_status_t status;

    rdp_rbuf_init(&rb, payload, len);
    status = rdp_unpack_i32(&rb, &code);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_proc(&rb, &source);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(&rb, &info, &ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed event from server: %s",
                      rdp_status_name(status));
        return;
    }
    rdp_log_debug(CLIENT, "event %s from %s:%u", rdp_status_name(code),
                  source.nspace, source.rank);
    status = rdp_event_deliver_or_cache(code, &source, PMIX_RANGE_UNDEF, info,
                                        ninfo);
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(CLIENT, "cannot deliver event %d: %s", code,
                     rdp_status_name(status));
    }
    rdp_info_array_free(info, ninfo);
}

void rdp_client_handle_unsolicited(const rdp_msg_hdr_t *hdr,
                                   const void *payload, size_t len)
{
    switch (hdr->cmd) {
    case RDP_CMD_EVENT:
        handle_event(payload, len);
        break;
    default:
        rdp_log_warn(CLIENT, "unexpected message (command %u) from server",
                     (unsigned)hdr->cmd);
        break;
    }
}

void rdp_client_conn_msg(rdp_ipc_conn_t *conn, const rdp_msg_hdr_t *hdr,
                         const void *payload, size_t len, void *arg)
{
    if (hdr->tag == 0) {
        rdp_client_handle_unsolicited(hdr, payload, len);
    } else {
        handle_reply(hdr, payload, len);
    }
}

void rdp_client_conn_closed(rdp_ipc_conn_t *conn, pmix_status_t why, void *arg)
{
    client_req_t **reqs = NULL;
    size_t n            = 0, i;
    rdp_hash_entry_t *e;
    /* read now: failing the FINALIZE request below may finish finalize */
    int finalizing = rdp_client.finalizing;

    rdp_client.conn = NULL;
    rdp_client_board_close();
    if (!finalizing) {
        rdp_log_error(CLIENT, "lost connection to the server: %s",
                      rdp_status_name(why));
    }
    /* fail everything in flight; callbacks may start new requests, which
     * now fail at once */
    if (rdp_client.pending.count > 0) {
        reqs = rdp_calloc(rdp_client.pending.count, sizeof(*reqs));
    }
    if (reqs != NULL) {
        rdp_hash_for_each(e, &rdp_client.pending, i) {
            reqs[n++] = e->value;
        }
        for (i = 0; i < n; i++) {
            rdp_hash_remove_u64(&rdp_client.pending, reqs[i]->tag);
        }
        for (i = 0; i < n; i++) {
            req_fail(reqs[i], PMIX_ERR_LOST_CONNECTION);
        }
        rdp_free(reqs);
    } else if (rdp_client.pending.count > 0) {
        rdp_log_error(CLIENT, "out of memory failing %zu requests",
                      rdp_client.pending.count);
    }
    if (finalizing) {
        rdp_client_finalize_finish(); /* no-op if already finished */
        return;
    }
    rdp_event_forward = NULL;
    rdp_event_deliver(PMIX_ERR_LOST_CONNECTION, &rdp_rt.myproc,
                      PMIX_RANGE_PROC_LOCAL, NULL, 0);
}

/* ---------------------------------------------------------------- */
/* events to the server                                             */

typedef struct fwd_ctx {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} fwd_ctx_t;

static void forward_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    fwd_ctx_t *ctx = arg;

    if (ctx->cbfunc != NULL) {
        ctx->cbfunc(status, ctx->cbdata);
    }
    rdp_free(ctx);
}

pmix_status_t rdp_client_event_forward(pmix_status_t code,
                                       const pmix_proc_t *source,
                                       pmix_data_range_t range,
                                       const pmix_info_t *info, size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    rdp_buf_t buf;
    fwd_ctx_t *ctx;
    pmix_status_t status;

    if (code == PMIX_GROUP_CONSTRUCT_ABORT
        && rdp_client_group_event_id(info, ninfo) != NULL) {
        /* the leader aborts its invitation: the servers tell the members */
        return rdp_client_group_abort(rdp_client_group_event_id(info, ninfo),
                                      cbfunc, cbdata);
    }
    ctx = rdp_malloc(sizeof(*ctx));
    if (ctx == NULL) {
        return PMIX_ERR_NOMEM;
    }
    ctx->cbfunc = cbfunc;
    ctx->cbdata = cbdata;
    rdp_buf_init(&buf);
    status = rdp_pack_i32(&buf, code);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_proc(&buf, source);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(&buf, range);
    }
    if (status == PMIX_SUCCESS) {
        /* (group id, rank) in a custom range: the members */
        status = rdp_client_group_pack_event_info(&buf, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        rdp_free(ctx);
        return status;
    }
    status = rdp_client_request(RDP_CMD_NOTIFY, &buf, 0, forward_reply, ctx);
    if (status != PMIX_SUCCESS) {
        rdp_free(ctx);
    }
    return status;
}

/* ---------------------------------------------------------------- */
/* generic request/response operations                              */

rdp_client_op_t *rdp_client_op_create(uint16_t cmd,
                                      rdp_client_op_finish_t finish,
                                      void *cbfunc, void *cbdata)
{
    rdp_client_op_t *op = rdp_calloc(1, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    op->cmd    = cmd;
    op->finish = finish;
    op->cbfunc = cbfunc;
    op->cbdata = cbdata;
    rdp_buf_init(&op->payload);
    return op;
}

void rdp_client_op_free(rdp_client_op_t *op)
{
    if (op == NULL) {
        return;
    }
    rdp_buf_cleanup(&op->payload);
    rdp_free(op);
}

static void op_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    rdp_client_op_t *op = arg;

    op->finish(op, status, rb);
    rdp_client_op_free(op);
}

static void op_start(void *arg)
{
    rdp_client_op_t *op = arg;
    pmix_status_t status;
    uint32_t tag;

    status = op->prepare != NULL ? op->prepare(op) : PMIX_SUCCESS;
    if (status == PMIX_SUCCESS) {
        status = rdp_client_request_tag(op->cmd, &op->payload, op->timeout,
                                        op_reply, op, &tag);
    }
    if (status != PMIX_SUCCESS) {
        op->finish(op, status, NULL);
        rdp_client_op_free(op);
    } else if (op->sent != NULL) {
        op->sent(op, tag); /* the reply comes on a later loop turn */
    }
}

pmix_status_t rdp_client_op_post(rdp_client_op_t *op)
{
    pmix_status_t status;

    if (rdp_rt.loop == NULL) {
        rdp_client_op_free(op);
        return PMIX_ERR_INIT;
    }
    if (__atomic_load_n(&rdp_client.mode, __ATOMIC_ACQUIRE)
        == RDP_CLIENT_IN_SERVER) {
        /* a server process has no server of its own to ask */
        rdp_client_op_free(op);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    status = rdp_loop_post(rdp_rt.loop, op_start, op);
    if (status != PMIX_SUCCESS) {
        rdp_client_op_free(op);
    }
    return status;
}

/* ---------------------------------------------------------------- */
/* small shared helpers                                             */

double rdp_client_info_timeout(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (!PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            continue;
        }
        switch (v->type) {
        case PMIX_INT:
            return v->data.integer > 0 ? v->data.integer : 0;
        case PMIX_INT32:
            return v->data.int32 > 0 ? v->data.int32 : 0;
        case PMIX_UINT32:
            return v->data.uint32;
        case PMIX_UINT:
            return v->data.uint;
        case PMIX_UINT16:
            return v->data.uint16;
        case PMIX_SIZE:
            return (double)v->data.size;
        case PMIX_DOUBLE:
            return v->data.dval > 0 ? v->data.dval : 0;
        default:
            rdp_log_warn(CLIENT, "ignoring %s of type %s", PMIX_TIMEOUT,
                         PMIx_Data_type_string(v->type));
            return 0;
        }
    }
    return 0;
}

pmix_status_t rdp_client_check_key(const char *key)
{
    size_t len;

    if (key == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    len = strnlen(key, PMIX_MAX_KEYLEN + 1);
    if (len == 0 || len > PMIX_MAX_KEYLEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_client_may_block(void)
{
    if (rdp_rt.loop != NULL && rdp_loop_on_loop(rdp_rt.loop)) {
        rdp_log_warn(CLIENT, "blocking PMIx call from the library's own "
                             "thread (an event handler?) refused; use the "
                             "non-blocking form");
        return PMIX_ERR_WOULD_BLOCK;
    }
    return PMIX_SUCCESS;
}

void rdp_client_sync_op_cb(pmix_status_t status, void *cbdata)
{
    rdp_client_sync_t *sync = cbdata;

    sync->status = status;
    rdp_wait_signal(&sync->wait, status);
}
