/* ucx_recv.c - receiving over UCP active messages: checking and
 * authenticating every message, holding what arrives before an engine is
 * bound, and the rendezvous fetch of payloads */
#include "config.h"

#include "ucx/ucx.h"
#include "ucx/ucx_int.h"

#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <string.h>

#include <ucp/api/ucp.h>

#define RMSG_MAGIC 0x524d5347u

/* ---- received messages ---- */

static ucx_rmsg_t *rmsg_create(rdp_ucx_tl_t *tl, enum rmsg_kind kind,
                               const rdp_ucx_wire_t *w, const uint8_t *pre,
                               int copy_pre)
{
    size_t pre_len = rdp_ucx_wire_pre_len(w);
    ucx_rmsg_t *rmsg;

    rmsg = rdp_calloc(1, sizeof(*rmsg) + (copy_pre ? pre_len : 0));
    if (rmsg == NULL) {
        return NULL;
    }
    rdp_list_init(&rmsg->op.link);
    rmsg->op.tl      = tl;
    rmsg->op.peer    = w->src;
    rmsg->op.is_rmsg = 1;
    rmsg->magic      = RMSG_MAGIC;
    rmsg->kind       = kind;
    rmsg->len        = (size_t)w->len;
    rmsg->ehdr_len   = w->ehdr_len;
    rmsg->seals_len  = w->seals_len;
    rmsg->dst        = w->dst;
    rmsg->salt       = w->salt;
    rmsg->seq        = w->seq;
    rmsg->payload_open = (w->flags & RDP_UCX_FLAG_OPEN) != 0;
    /* the message MAC follows the prefix and the header MAC */
    memcpy(rmsg->msg_mac, pre + pre_len + RDP_UCX_MAC_LEN, RDP_UCX_MAC_LEN);
    memcpy(rmsg->hdr_mac, pre + pre_len, RDP_UCX_MAC_LEN);
    if (copy_pre) {
        memcpy(rmsg->pre, pre, pre_len);
        rmsg->pre_len = pre_len;
    }
    return rmsg;
}

static int rmsg_valid(const rdp_ucx_tl_t *tl, const ucx_rmsg_t *rmsg)
{
    return (rmsg != NULL) && (rmsg->magic == RMSG_MAGIC) && (rmsg->op.tl == tl);
}

/* Give the payload back to UCP (or free our copy). */
void rdp_ucx_rmsg_release_data(rdp_ucx_tl_t *tl, ucx_rmsg_t *rmsg)
{
    if (rmsg->kind == RMSG_COPY) {
        rdp_free(rmsg->data);
    } else {
        ucp_am_data_release(tl->worker, rmsg->data);
    }
    rmsg->data = NULL;
}

/* The sealed runs of a message, decoded once (on arrival, or from the
 * prefix a held message keeps) and handed down to whoever needs them. */
typedef struct ucx_seals {
    size_t n;
    rdp_tl_rx_seal_t run[RDP_UCX_MAX_SEALS];
} ucx_seals_t;

/* Decode the seal table of the prefix @a pre of a message whose engine
 * header is @a ehdr_len bytes and payload @a payload_len bytes.  Returns
 * 0, and *@a why_p, for a table that is not valid (none is valid). */
static int seals_decode(const uint8_t *pre, uint16_t ehdr_len,
                        uint32_t seals_len, uint64_t payload_len,
                        ucx_seals_t *seals, const char **why_p)
{
    seals->n = 0;
    return (seals_len == 0)
           || (rdp_ucx_seals_decode(pre + RDP_UCX_FIXED_LEN + ehdr_len,
                                    seals_len, payload_len, seals->run,
                                    &seals->n, why_p)
               == PMIX_SUCCESS);
}

/* The runs of a held or fetched message, whose table was checked on
 * arrival (its prefix is kept in rmsg->pre). */
static void rmsg_seals(const ucx_rmsg_t *rmsg, ucx_seals_t *seals)
{
    const char *why = NULL;

    (void)seals_decode(rmsg->pre, rmsg->ehdr_len, rmsg->seals_len, rmsg->len,
                       seals, &why);
}

/* Whether the @a len payload bytes at @a data are authentic: mac_msg
 * (@a msg_mac) over the prefix and the bytes outside the sealed runs, and
 * every seal against its run.  An open payload (the prefix says so, and
 * has no seal table) is not: mac_msg then covers the prefix alone, and
 * the engine decides whether it takes such payloads (rx.payload_open). */
static int payload_authentic(rdp_ucx_tl_t *tl, const uint8_t *pre,
                             size_t pre_len, const ucx_seals_t *sl,
                             const uint8_t *data, size_t len,
                             const uint8_t *msg_mac)
{
    const rdp_tl_rx_seal_t *seals = sl->run;
    size_t nseals                 = sl->n;
    uint8_t mac[RDP_UCX_MAC_LEN];

    if (pre[5] & RDP_UCX_FLAG_OPEN) {
        len = 0;
    }

    if ((rdp_ucx_auth_msg_unsealed(&tl->auth, pre, pre_len, data, len, seals,
                                   nseals, mac)
         != PMIX_SUCCESS)
        || !rdp_ucx_auth_equal(mac, msg_mac)) {
        return 0;
    }
    for (size_t i = 0; i < nseals; i++) {
        if (!rdp_ucx_auth_seal_ok(&tl->auth, &seals[i].seal,
                                  data + seals[i].off, (size_t)seals[i].len)) {
            return 0;
        }
    }
    return 1;
}

/* Check the message MAC and the seals of a fetched RNDV payload. */
static pmix_status_t rmsg_verify(rdp_ucx_tl_t *tl, ucx_rmsg_t *rmsg)
{
    ucx_seals_t seals;

    rmsg_seals(rmsg, &seals);
    if (!payload_authentic(tl, rmsg->pre, rmsg->pre_len, &seals, rmsg->buf,
                           rmsg->len, rmsg->msg_mac)) {
        rdp_ucx_drop(tl, &tl->stats.auth_failed, rmsg->op.peer,
                     "rendezvous payload fails authentication");
        return PMIX_ERR_INVALID_CRED;
    }
    return PMIX_SUCCESS;
}

/*
 * Show a message to the engine, with its sealed runs @a seals.
 * @a in_am_cb: called from the UCP receive callback for this very message,
 * so UCP still holds its data and drops it when we return UCS_OK.  Returns
 * what that callback must return.
 */
static ucs_status_t present(rdp_ucx_tl_t *tl, ucx_rmsg_t *rmsg,
                            const void *ehdr, const ucx_seals_t *seals,
                            int in_am_cb)
{
    rdp_tl_rx_t rx = {0};
    enum rdp_tl_rx_disp disp;

    rx.peer    = rmsg->op.peer;
    rx.hdr     = ehdr;
    rx.hdr_len = rmsg->ehdr_len;
    rx.len     = rmsg->len;
    rx.desc    = rmsg;
    rx.seals   = seals->run;
    rx.nseals  = seals->n;
    rx.payload_open = rmsg->payload_open;
    tl->stats.open_delivered += (uint64_t)rmsg->payload_open;
    if (rmsg->kind == RMSG_RNDV) {
        rx.kind = RDP_TL_DATA_RNDV;
        rx.data = NULL;
    } else {
        rx.kind = RDP_TL_DATA_KEEPABLE;
        rx.data = rmsg->data;
    }
    rmsg->state = RMSG_UPCALL;
    rx.pass_end = tl->in_pass;
    tl->pass_delivered |= tl->in_pass;
    tl->stats.delivered++;
    disp = tl->up->recv(tl->up_arg, &rx);

    switch (rmsg->state) {
    case RMSG_FETCHING: /* the fetch owns it now; UCP owns the descriptor */
        return UCS_OK;
    case RMSG_FETCHED:
        rdp_ucx_op_free(&rmsg->op);
        return UCS_OK;
    case RMSG_UPCALL:
        if (disp == RDP_TL_RX_KEPT) {
            rmsg->state = RMSG_KEPT;
            rdp_list_push_back(&tl->kept, &rmsg->op.link);
            return UCS_INPROGRESS;
        }
        break;
    default: /* released inside the upcall */
        break;
    }
    if (!in_am_cb || (rmsg->kind == RMSG_COPY)) {
        rdp_ucx_rmsg_release_data(tl, rmsg);
    }
    rdp_ucx_op_free(&rmsg->op);
    return UCS_OK;
}

/* Hold a message for a binding to come.  Returns the UCP callback's
 * return value. */
static ucs_status_t hold(rdp_ucx_tl_t *tl, const rdp_ucx_wire_t *w,
                         const uint8_t *pre, void *data, int rndv,
                         int persistent)
{
    size_t pre_len = rdp_ucx_wire_pre_len(w);
    size_t cost    = pre_len + (rndv ? 0 : (size_t)w->len);
    enum rmsg_kind kind;
    ucx_rmsg_t *rmsg;

    if ((tl->unbound_msgs >= tl->unbound_max_msgs)
        || (cost > tl->unbound_max_bytes - tl->unbound_bytes)) {
        rdp_ucx_drop(tl, &tl->stats.unbound_dropped, w->src,
                     "no engine bound and the queue for one is full");
        return UCS_OK;
    }
    kind = rndv ? RMSG_RNDV : (persistent ? RMSG_DATA : RMSG_COPY);
    rmsg = rmsg_create(tl, kind, w, pre, 1);
    if (rmsg == NULL) {
        rdp_ucx_drop(tl, &tl->stats.unbound_dropped, w->src, "out of memory");
        return UCS_OK;
    }
    rmsg->unverified = !tl->connected;
    if (kind == RMSG_COPY) {
        rmsg->data = rdp_malloc(w->len > 0 ? (size_t)w->len : 1);
        if (rmsg->data == NULL) {
            rdp_ucx_op_free(&rmsg->op);
            rdp_ucx_drop(tl, &tl->stats.unbound_dropped, w->src,
                         "out of memory");
            return UCS_OK;
        }
        memcpy(rmsg->data, data, (size_t)w->len);
    } else {
        rmsg->data = data;
    }
    rmsg->state = RMSG_QUEUED;
    rmsg->cost  = cost;
    rdp_list_push_back(&tl->unbound, &rmsg->op.link);
    tl->unbound_msgs++;
    tl->unbound_bytes += cost;
    tl->stats.unbound_queued++;
    if (tl->up != NULL) {
        rdp_ucx_kick(tl);
    }
    return (kind == RMSG_COPY) ? UCS_OK : UCS_INPROGRESS;
}

/* Check the indices of an authenticated message against the universe;
 * drops it (and says so) if they are wrong or the sender failed. */
static int sender_ok(rdp_ucx_tl_t *tl, const rdp_ucx_wire_t *w)
{
    if ((w->src >= tl->npeers) || (w->src == tl->me) || (w->dst != tl->me)) {
        rdp_ucx_drop(tl, &tl->stats.malformed, w->src,
                     "wrong sender or receiver index");
        return 0;
    }
    if (tl->peers[w->src].failed) {
        rdp_log_debug(UCX, "%s: dropped a message from failed server %u",
                      tl->name, w->src);
        return 0;
    }
    return 1;
}

/* Drop an authenticated message whose nonce was seen before (a replay);
 * 1 if it is fresh.  The sender index must be valid (sender_ok). */
static int nonce_fresh(rdp_ucx_tl_t *tl, const rdp_ucx_wire_t *w)
{
    enum rdp_ucx_replay_verdict v;

    v = rdp_ucx_replay_accept(&tl->peers[w->src].rx_replay, w->salt, w->seq);
    if (v != RDP_UCX_FRESH) {
        rdp_ucx_drop(tl, &tl->stats.replayed, w->src, rdp_ucx_replay_str(v));
        return 0;
    }
    tl->peers[w->src].heard = 1; /* in contact: part of the goodbyes */
    return 1;
}

/* Authenticate a message held before connect (the session key may have
 * been set only then, see rdp_ucx_tl_set_key); 1 if it passes. */
static int held_authentic(rdp_ucx_tl_t *tl, ucx_rmsg_t *rmsg,
                          const ucx_seals_t *seals)
{
    uint8_t mac[RDP_UCX_MAC_LEN];

    if (rmsg->kind == RMSG_RNDV) {
        /* the payload is checked after the fetch (rmsg_verify) */
        return (rdp_ucx_auth_hdr(&tl->auth, rmsg->pre, rmsg->pre_len, mac)
                == PMIX_SUCCESS)
               && rdp_ucx_auth_equal(mac, rmsg->hdr_mac);
    }
    return payload_authentic(tl, rmsg->pre, rmsg->pre_len, seals, rmsg->data,
                             rmsg->len, rmsg->msg_mac);
}

/* Deliver what arrived before connect or while no engine was bound, in
 * arrival order. */
void rdp_ucx_deliver_held(rdp_ucx_tl_t *tl)
{
    rdp_list_t *item;

    while (tl->connected && (tl->up != NULL)
           && ((item = rdp_list_pop_front(&tl->unbound)) != NULL)) {
        ucx_rmsg_t *rmsg = rdp_container_of(item, ucx_rmsg_t, op.link);
        ucx_seals_t seals;
        rdp_ucx_wire_t w = {.ehdr_len  = rmsg->ehdr_len,
                            .seals_len = rmsg->seals_len,
                            .src      = rmsg->op.peer,
                            .dst      = rmsg->dst,
                            .len      = rmsg->len,
                            .salt     = rmsg->salt,
                            .seq      = rmsg->seq};

        tl->unbound_msgs--;
        tl->unbound_bytes -= rmsg->cost;
        rmsg_seals(rmsg, &seals);
        if (rmsg->unverified && !held_authentic(tl, rmsg, &seals)) {
            rdp_ucx_drop(tl, &tl->stats.auth_failed, w.src,
                         "fails authentication");
            rdp_ucx_rmsg_release_data(tl, rmsg);
            rdp_ucx_op_free(&rmsg->op);
            continue;
        }
        /* a message held after connect had its nonce checked on arrival */
        if (!sender_ok(tl, &w) || (rmsg->unverified && !nonce_fresh(tl, &w))) {
            rdp_ucx_rmsg_release_data(tl, rmsg);
            rdp_ucx_op_free(&rmsg->op);
            continue;
        }
        (void)present(tl, rmsg, rmsg->pre + RDP_UCX_FIXED_LEN, &seals, 0);
    }
}

/* Authenticate a received message; 1 if it passes. */
static int authentic(rdp_ucx_tl_t *tl, const rdp_ucx_wire_t *w,
                     const uint8_t *pre, const void *data, int rndv,
                     const ucx_seals_t *seals)
{
    size_t pre_len = rdp_ucx_wire_pre_len(w);
    uint8_t mac[RDP_UCX_MAC_LEN];

    if (rndv) {
        /* the payload is checked after the fetch (rmsg_verify) */
        return (rdp_ucx_auth_hdr(&tl->auth, pre, pre_len, mac) == PMIX_SUCCESS)
               && rdp_ucx_auth_equal(mac, pre + pre_len);
    }
    return payload_authentic(tl, pre, pre_len, seals, data, (size_t)w->len,
                             pre + pre_len + RDP_UCX_MAC_LEN);
}

ucs_status_t rdp_ucx_am_recv_cb(void *arg, const void *header,
                                size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param)
{
    rdp_ucx_tl_t *tl   = arg;
    const uint8_t *pre = header;
    int rndv           = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    int persistent     = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0;
    const char *why    = NULL;
    ucx_seals_t seals;
    rdp_ucx_wire_t w;
    ucx_rmsg_t *rmsg;

    if (rdp_ucx_wire_decode(header, header_length, &w, &why) != PMIX_SUCCESS) {
        rdp_ucx_drop(tl, &tl->stats.malformed, RDP_TL_PEER_UNKNOWN, why);
        return UCS_OK;
    }
    if (w.len != (uint64_t)length) {
        rdp_ucx_drop(tl, &tl->stats.malformed, w.src,
                     "payload length mismatch");
        return UCS_OK;
    }
    if (!seals_decode(pre, w.ehdr_len, w.seals_len, w.len, &seals, &why)) {
        rdp_ucx_drop(tl, &tl->stats.malformed, w.src, why);
        return UCS_OK;
    }
    if (!rndv) {
        tl->stats.rx_eager_bytes += length;
    }
    if (!tl->connected) {
        /* the session key may not be set yet (rdp_ucx_tl_set_key): hold
         * the message and authenticate it at replay */
        return hold(tl, &w, pre, data, rndv, persistent);
    }
    if (!authentic(tl, &w, pre, data, rndv, &seals)) {
        rdp_ucx_drop(tl, &tl->stats.auth_failed, w.src, "fails authentication");
        return UCS_OK;
    }
    if (!sender_ok(tl, &w) || !nonce_fresh(tl, &w)) {
        return UCS_OK;
    }
    /* before connect (a faster server already sends to us), without an
     * engine, or behind messages that wait for one: hold it */
    if (!tl->connected || (tl->up == NULL)
        || !rdp_list_is_empty(&tl->unbound)) {
        return hold(tl, &w, pre, data, rndv, persistent);
    }

    if (!rndv && !persistent) {
        /* UCP did not let us keep the data: lend it for the upcall only */
        rdp_tl_rx_t rx = {.peer    = w.src,
                          .hdr     = pre + RDP_UCX_FIXED_LEN,
                          .hdr_len = w.ehdr_len,
                          .kind    = RDP_TL_DATA_BORROWED,
                          .data    = data,
                          .len     = length,
                          .seals   = seals.run,
                          .nseals  = seals.n,
                          .payload_open = (w.flags & RDP_UCX_FLAG_OPEN) != 0,
                          .pass_end     = tl->in_pass};

        tl->pass_delivered |= tl->in_pass;
        tl->stats.delivered++;
        tl->stats.open_delivered += (uint64_t)rx.payload_open;
        (void)tl->up->recv(tl->up_arg, &rx);
        return UCS_OK;
    }
    rmsg = rmsg_create(tl, rndv ? RMSG_RNDV : RMSG_DATA, &w, pre, rndv);
    if (rmsg == NULL) {
        rdp_log_error(UCX, "%s: out of memory: message from server %u lost",
                      tl->name, w.src);
        return UCS_OK;
    }
    rmsg->data = data;
    return present(tl, rmsg, pre + RDP_UCX_FIXED_LEN, &seals, 1);
}

/* ---- rendezvous fetch and release ---- */

static void fetch_cb(void *request, ucs_status_t status, size_t length,
                     void *user_data)
{
    ucx_rmsg_t *rmsg = user_data;
    rdp_ucx_tl_t *tl = rmsg->op.tl;
    pmix_status_t st;

    ucp_request_free(request);
    if (status != UCS_OK) {
        st = tl->peers[rmsg->op.peer].failed ? PMIX_ERR_UNREACH
                                             : rdp_ucx_status(status);
        rdp_log_debug(UCX, "%s: fetch from server %u failed: %s", tl->name,
                      rmsg->op.peer, rdp_ucx_status_str(status));
    } else if (length != rmsg->len) {
        rdp_ucx_drop(tl, &tl->stats.malformed, rmsg->op.peer,
                     "rendezvous payload of the wrong length");
        st = PMIX_ERR_BAD_PARAM;
    } else if (rmsg->op.cb != NULL) {
        tl->stats.rx_fetched_bytes += length;
        st = rmsg_verify(tl, rmsg);
    } else {
        st = PMIX_SUCCESS; /* nobody will look at it */
    }
    rdp_ucx_op_complete(tl, &rmsg->op, st);
}

/* Consume a descriptor that a failed or finished fetch no longer needs. */
static void fetch_consumed(ucx_rmsg_t *rmsg)
{
    if (rmsg->state == RMSG_UPCALL) {
        rmsg->state = RMSG_FETCHED; /* present() frees it */
    } else {
        rdp_ucx_op_free(&rmsg->op);
    }
}

pmix_status_t rdp_ucx_tl_fetch(void *ctx, void *desc, void *buf, size_t len,
                               rdp_tl_done_cb_t cb, void *cb_arg)
{
    rdp_ucx_tl_t *tl        = ctx;
    ucx_rmsg_t *rmsg        = desc;
    ucp_request_param_t prm = {0};
    ucs_status_ptr_t req;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(tl->loop);
    if (!rmsg_valid(tl, rmsg)) {
        rdp_log_error(UCX, "%s: fetch of an unknown descriptor", tl->name);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((rmsg->kind != RMSG_RNDV)
        || ((rmsg->state != RMSG_KEPT) && (rmsg->state != RMSG_UPCALL))
        || (len != rmsg->len) || ((buf == NULL) && (len > 0))) {
        rdp_log_error(UCX, "%s: bad fetch (%zu bytes of a %zu-byte %s)",
                      tl->name, len, rmsg->len,
                      (rmsg->kind == RMSG_RNDV) ? "rendezvous message"
                                                : "eager message");
        if (rmsg->state == RMSG_KEPT) {
            rdp_list_del(&rmsg->op.link);
            rdp_ucx_rmsg_release_data(tl, rmsg);
            rdp_ucx_op_free(&rmsg->op);
        } else if (rmsg->state == RMSG_UPCALL) {
            rmsg->state = RMSG_RELEASED;
        }
        return PMIX_ERR_BAD_PARAM;
    }
    tl->in_call++;
    if (rmsg->state == RMSG_KEPT) {
        rdp_list_del(&rmsg->op.link);
    }
    rmsg->buf        = buf;
    rmsg->op.cb      = cb;
    rmsg->op.cb_arg  = cb_arg;
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
                       | UCP_OP_ATTR_FIELD_DATATYPE;
    prm.cb.recv_am = fetch_cb;
    prm.user_data  = rmsg;
    prm.datatype   = ucp_dt_make_contig(1);
    /* UCP owns the descriptor from here on, whatever the outcome */
    req        = ucp_am_recv_data_nbx(tl->worker, rmsg->data, buf, len, &prm);
    rmsg->data = NULL;
    if (req == NULL) {
        tl->stats.rx_fetched_bytes += len;
        status = rmsg_verify(tl, rmsg);
        if (status == PMIX_SUCCESS) {
            status = PMIX_OPERATION_SUCCEEDED;
        }
        fetch_consumed(rmsg);
    } else if (UCS_PTR_IS_ERR(req)) {
        rdp_log_debug(UCX, "%s: fetch from server %u: %s", tl->name,
                      rmsg->op.peer, rdp_ucx_status_str(UCS_PTR_STATUS(req)));
        status = tl->peers[rmsg->op.peer].failed
                     ? PMIX_ERR_UNREACH
                     : rdp_ucx_status(UCS_PTR_STATUS(req));
        fetch_consumed(rmsg);
    } else {
        rmsg->state = RMSG_FETCHING;
        rdp_list_push_back(&tl->fetches, &rmsg->op.link);
        status            = PMIX_SUCCESS;
        tl->last_activity = rdp_time_now();
        rdp_ucx_kick(tl);
    }
    tl->in_call--;
    return status;
}

void rdp_ucx_tl_release(void *ctx, void *desc)
{
    rdp_ucx_tl_t *tl = ctx;
    ucx_rmsg_t *rmsg = desc;

    RDP_ASSERT_ON_LOOP(tl->loop);
    if (!rmsg_valid(tl, rmsg)) {
        rdp_log_error(UCX, "%s: release of an unknown descriptor", tl->name);
        return;
    }
    switch (rmsg->state) {
    case RMSG_KEPT:
        rdp_list_del(&rmsg->op.link);
        rdp_ucx_rmsg_release_data(tl, rmsg);
        rdp_ucx_op_free(&rmsg->op);
        break;
    case RMSG_UPCALL:
        rmsg->state = RMSG_RELEASED; /* present() gives it back */
        break;
    default:
        rdp_log_error(UCX, "%s: release of a descriptor in use", tl->name);
        break;
    }
}
