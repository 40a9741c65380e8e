/* loopback.c - in-process tl.h transport between P simulated servers */
#include "config.h"
#include "coll/loopback.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <string.h>

/* A message on the "wire"; also the descriptor handed to the receiver. */
typedef struct lb_msg {
    rdp_list_t link; /* lb->msgs: every live message */
    uint32_t src;
    uint32_t dst;
    /* the sender's buffers, read when the message is delivered */
    const void *hdr;
    size_t hdr_len;
    const rdp_iov_t *iov;
    size_t iovcnt;
    /* [hdr][payload] once gathered */
    uint8_t *wire;
    size_t len; /* payload bytes */
    int gathered;
    int kept;            /* owned by an engine (counted in lb->kept) */
    int released;        /* released during its own upcall */
    int fetching;        /* a fetch event owns it */
    rdp_tl_done_cb_t cb; /* sender completion, NULL: none */
    void *cb_arg;
    int open; /* sent with send_open */
} lb_msg_t;

enum lb_ev_type {
    LB_EV_MSG,
    LB_EV_FETCH,
    LB_EV_FAIL
};

typedef struct lb_ev {
    enum lb_ev_type type;
    uint32_t holds;
    uint32_t ep;   /* MSG: destination; FETCH: fetcher; FAIL: notified */
    lb_msg_t *msg; /* MSG, FETCH */
    void *buf;     /* FETCH target */
    rdp_tl_done_cb_t cb;
    void *cb_arg;
    uint32_t failed; /* FAIL: who died */
} lb_ev_t;

typedef struct lb_ep {
    rdp_tl_loopback_t *lb;
    uint32_t index;
    const rdp_tl_upcalls_t *up;
    void *arg;
    int bound;
    int dead;
    uint64_t sent;
    double pass_time; /* inside its `progressed` upcall: the delivery's */
} lb_ep_t;

typedef struct lb_drop {
    uint32_t src;
    uint32_t dst;
} lb_drop_t;

struct rdp_tl_loopback {
    uint32_t n;
    lb_ep_t *eps;
    lb_ev_t **evs;
    size_t nev;
    size_t cap;
    uint64_t rng;
    enum rdp_tl_loopback_mode mode;
    uint32_t max_holds;
    int inline_sends; /* complete sends and fetches inside the call */
    int all_open;     /* deliver every payload as open (tests) */
    int pass_end;     /* mark deliveries pass_end, then `progressed` */
    lb_drop_t *drops;
    size_t ndrops;
    size_t kept;
    lb_msg_t *in_upcall; /* message whose recv upcall is running */
    rdp_list_t msgs;
};

/* splitmix64: small, seedable, good enough to shuffle deliveries */
static uint64_t lb_rand(rdp_tl_loopback_t *lb)
{
    uint64_t z = (lb->rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static pmix_status_t lb_push(rdp_tl_loopback_t *lb, lb_ev_t *ev)
{
    if (lb->nev == lb->cap) {
        size_t ncap    = lb->cap == 0 ? 64 : lb->cap * 2;
        lb_ev_t **nevs = rdp_realloc(lb->evs, ncap * sizeof(*nevs));

        if (nevs == NULL) {
            return PMIX_ERR_NOMEM;
        }
        lb->evs = nevs;
        lb->cap = ncap;
    }
    ev->holds          = lb->max_holds > 0
                             ? (uint32_t)(lb_rand(lb) % ((uint64_t)lb->max_holds + 1))
                             : 0;
    lb->evs[lb->nev++] = ev;
    return PMIX_SUCCESS;
}

static void lb_remove_at(rdp_tl_loopback_t *lb, size_t i)
{
    lb->evs[i] = lb->evs[--lb->nev];
}

static lb_msg_t *msg_create(rdp_tl_loopback_t *lb)
{
    lb_msg_t *msg = rdp_calloc(1, sizeof(*msg));

    if (msg != NULL) {
        rdp_list_push_back(&lb->msgs, &msg->link);
    }
    return msg;
}

static void msg_free(rdp_tl_loopback_t *lb, lb_msg_t *msg)
{
    if (msg->kept) {
        lb->kept--;
    }
    rdp_list_del(&msg->link);
    rdp_free(msg->wire);
    rdp_free(msg);
}

/* The engine gave the descriptor back: free it, unless its upcall is still
 * running (deliver() frees it then). */
static void consume(rdp_tl_loopback_t *lb, lb_msg_t *msg)
{
    if (msg == lb->in_upcall) {
        msg->released = 1;
        return;
    }
    msg_free(lb, msg);
}

/* Copy the sender's header and iovs; they are not read again. */
static pmix_status_t msg_gather(lb_msg_t *msg)
{
    size_t total = msg->hdr_len;
    uint8_t *p;

    if (msg->gathered) {
        return PMIX_SUCCESS;
    }
    for (size_t i = 0; i < msg->iovcnt; i++) {
        total += msg->iov[i].len;
    }
    msg->wire = rdp_malloc(total > 0 ? total : 1);
    if (msg->wire == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(msg->wire, msg->hdr, msg->hdr_len);
    p = msg->wire + msg->hdr_len;
    for (size_t i = 0; i < msg->iovcnt; i++) {
        if (msg->iov[i].len > 0) {
            memcpy(p, msg->iov[i].base, msg->iov[i].len);
        }
        p += msg->iov[i].len;
    }
    msg->len      = total - msg->hdr_len;
    msg->gathered = 1;
    msg->hdr      = NULL;
    msg->iov      = NULL;
    return PMIX_SUCCESS;
}

static int lb_dropped(const rdp_tl_loopback_t *lb, uint32_t src, uint32_t dst)
{
    for (size_t i = 0; i < lb->ndrops; i++) {
        if ((lb->drops[i].src == UINT32_MAX || lb->drops[i].src == src)
            && (lb->drops[i].dst == UINT32_MAX || lb->drops[i].dst == dst)) {
            return 1;
        }
    }
    return 0;
}

static int ep_live(const lb_ep_t *ep)
{
    return ep->bound && !ep->dead;
}

static void complete_send(rdp_tl_loopback_t *lb, lb_msg_t *msg,
                          pmix_status_t status)
{
    rdp_tl_done_cb_t cb = msg->cb;

    msg->cb = NULL;
    if (cb != NULL && msg->src < lb->n && ep_live(&lb->eps[msg->src])) {
        cb(msg->cb_arg, status);
    }
}

static void deliver(rdp_tl_loopback_t *lb, lb_msg_t *msg)
{
    lb_ep_t *dst                   = &lb->eps[msg->dst];
    enum rdp_tl_loopback_mode mode = lb->mode;
    enum rdp_tl_rx_disp disp;
    rdp_tl_rx_t rx;

    if (msg_gather(msg) != PMIX_SUCCESS) {
        rdp_log_error(COLL, "loopback: cannot gather a message");
        complete_send(lb, msg, PMIX_ERR_NOMEM);
        msg_free(lb, msg);
        return;
    }
    if (!ep_live(dst)) {
        complete_send(lb, msg, PMIX_ERR_UNREACH);
        msg_free(lb, msg);
        return;
    }
    complete_send(lb, msg, PMIX_SUCCESS);
    if (lb_dropped(lb, msg->src, msg->dst)) {
        msg_free(lb, msg);
        return;
    }
    if (mode == RDP_TL_LOOPBACK_MIXED) {
        mode = (enum rdp_tl_loopback_mode)(1 + lb_rand(lb) % 3);
    }
    memset(&rx, 0, sizeof(rx));
    rx.peer         = msg->src;
    rx.payload_open = msg->open || lb->all_open;
    rx.pass_end     = lb->pass_end;
    rx.hdr          = msg->wire;
    rx.hdr_len = msg->hdr_len;
    rx.len     = msg->len;
    rx.desc    = msg;
    switch (mode) {
    case RDP_TL_LOOPBACK_RNDV:
        rx.kind = RDP_TL_DATA_RNDV;
        break;
    case RDP_TL_LOOPBACK_KEEPABLE:
        rx.kind = RDP_TL_DATA_KEEPABLE;
        rx.data = msg->wire + msg->hdr_len;
        break;
    default:
        rx.kind = RDP_TL_DATA_BORROWED;
        rx.data = msg->wire + msg->hdr_len;
        rx.desc = NULL;
        break;
    }
    if (rx.kind != RDP_TL_DATA_BORROWED) {
        /* lent for the upcall: the engine may fetch or release inside it */
        msg->kept = 1;
        lb->kept++;
    }
    lb->in_upcall = msg;
    disp          = dst->up->recv(dst->arg, &rx);
    lb->in_upcall = NULL;
    if (msg->released) {
        msg_free(lb, msg);
        return;
    }
    if (msg->fetching) {
        return; /* the fetch event owns it now */
    }
    if (disp == RDP_TL_RX_KEPT && rx.kind != RDP_TL_DATA_BORROWED) {
        return;
    }
    if (disp == RDP_TL_RX_KEPT) {
        rdp_log_error(COLL, "loopback: endpoint %u kept a borrowed message",
                      msg->dst);
    }
    msg_free(lb, msg);
}

int rdp_tl_loopback_progress(rdp_tl_loopback_t *lb)
{
    lb_ev_t *ev;
    size_t i;

    if (lb == NULL || lb->nev == 0) {
        return 0;
    }
    for (;;) {
        i  = (size_t)(lb_rand(lb) % lb->nev);
        ev = lb->evs[i];
        if (ev->holds == 0) {
            break;
        }
        ev->holds--;
    }
    lb_remove_at(lb, i);
    switch (ev->type) {
    case LB_EV_MSG: {
        lb_ep_t *dst = &lb->eps[ev->msg->dst];

        deliver(lb, ev->msg);
        if (lb->pass_end && dst->bound && (dst->up != NULL)
            && (dst->up->progressed != NULL)) {
            dst->pass_time = rdp_time_now();
            dst->up->progressed(dst->arg);
            dst->pass_time = 0;
        }
        break;
    }
    case LB_EV_FETCH:
        if (ep_live(&lb->eps[ev->ep])) {
            if (ev->msg->len > 0) {
                memcpy(ev->buf, ev->msg->wire + ev->msg->hdr_len, ev->msg->len);
            }
            msg_free(lb, ev->msg);
            ev->cb(ev->cb_arg, PMIX_SUCCESS);
        } else {
            msg_free(lb, ev->msg);
        }
        break;
    case LB_EV_FAIL:
        if (ep_live(&lb->eps[ev->ep])) {
            lb_ep_t *ep = &lb->eps[ev->ep];
            ep->up->peer_failed(ep->arg, ev->failed, PMIX_ERR_UNREACH);
        }
        break;
    }
    rdp_free(ev);
    return 1;
}

/* ---- the vtable ---- */

static pmix_status_t lb_bind(void *ctx, const rdp_tl_upcalls_t *up, void *arg)
{
    lb_ep_t *ep = ctx;

    if (ep == NULL || up == NULL || up->recv == NULL
        || up->peer_failed == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (ep->bound) {
        return PMIX_ERR_EXISTS;
    }
    ep->up    = up;
    ep->arg   = arg;
    ep->bound = 1;
    return PMIX_SUCCESS;
}

static void lb_unbind(void *ctx)
{
    lb_ep_t *ep           = ctx;
    rdp_tl_loopback_t *lb = ep->lb;
    size_t i              = 0;

    while (i < lb->nev) {
        lb_ev_t *ev = lb->evs[i];

        if (ev->type == LB_EV_MSG && ev->msg->src == ep->index) {
            /* in flight: the data is on the wire, the callback is gone */
            if (msg_gather(ev->msg) != PMIX_SUCCESS) {
                msg_free(lb, ev->msg);
                lb_remove_at(lb, i);
                rdp_free(ev);
                continue;
            }
            ev->msg->cb = NULL;
        } else if ((ev->type == LB_EV_FETCH || ev->type == LB_EV_FAIL)
                   && ev->ep == ep->index) {
            if (ev->type == LB_EV_FETCH) {
                msg_free(lb, ev->msg);
            }
            lb_remove_at(lb, i);
            rdp_free(ev);
            continue;
        }
        i++;
    }
    ep->bound = 0;
    ep->up    = NULL;
    ep->arg   = NULL;
}

/* Queue a message; with @a gather_now the sender's buffers are copied at
 * once (injected messages), else when it is delivered. */
static pmix_status_t queue_msg(rdp_tl_loopback_t *lb, uint32_t src,
                               uint32_t dst, const void *hdr, size_t hdr_len,
                               const rdp_iov_t *iov, size_t iovcnt,
                               rdp_tl_done_cb_t cb, void *cb_arg,
                               int gather_now, int open)
{
    lb_msg_t *msg = msg_create(lb);
    lb_ev_t *ev   = rdp_calloc(1, sizeof(*ev));

    if (msg == NULL || ev == NULL) {
        goto err_free;
    }
    msg->src     = src;
    msg->dst     = dst;
    msg->hdr     = hdr;
    msg->hdr_len = hdr_len;
    msg->iov     = iov;
    msg->iovcnt  = iovcnt;
    msg->cb      = cb;
    msg->cb_arg  = cb_arg;
    msg->open    = open;
    if (gather_now && msg_gather(msg) != PMIX_SUCCESS) {
        goto err_free;
    }
    ev->type = LB_EV_MSG;
    ev->ep   = dst;
    ev->msg  = msg;
    if (lb_push(lb, ev) != PMIX_SUCCESS) {
        goto err_free;
    }
    return PMIX_SUCCESS;

err_free:
    rdp_free(ev);
    if (msg != NULL) {
        msg_free(lb, msg);
    }
    return PMIX_ERR_NOMEM;
}

static pmix_status_t lb_send_any(void *ctx, uint32_t peer, const void *hdr,
                                 size_t hdr_len, const rdp_iov_t *iov,
                                 size_t iovcnt, rdp_tl_done_cb_t cb,
                                 void *cb_arg, int open)
{
    lb_ep_t *ep           = ctx;
    rdp_tl_loopback_t *lb = ep->lb;
    pmix_status_t status;

    if (peer >= lb->n || peer == ep->index || cb == NULL
        || (hdr == NULL && hdr_len > 0) || (iov == NULL && iovcnt > 0)) {
        rdp_log_error(COLL, "loopback: bad send from %u to %u", ep->index,
                      peer);
        return PMIX_ERR_BAD_PARAM;
    }
    if (!ep_live(ep)) {
        return PMIX_ERR_UNREACH;
    }
    if (lb->inline_sends) {
        /* copied now: report completion inline, the callback never runs */
        status = queue_msg(lb, ep->index, peer, hdr, hdr_len, iov, iovcnt, NULL,
                           NULL, 1, open);
        if (status == PMIX_SUCCESS) {
            ep->sent++;
            return PMIX_OPERATION_SUCCEEDED;
        }
        return status;
    }
    status = queue_msg(lb, ep->index, peer, hdr, hdr_len, iov, iovcnt, cb,
                       cb_arg, 0, open);
    if (status == PMIX_SUCCESS) {
        ep->sent++;
    }
    return status;
}

static pmix_status_t lb_send(void *ctx, uint32_t peer, const void *hdr,
                             size_t hdr_len, const rdp_iov_t *iov,
                             size_t iovcnt, rdp_tl_done_cb_t cb, void *cb_arg)
{
    return lb_send_any(ctx, peer, hdr, hdr_len, iov, iovcnt, cb, cb_arg, 0);
}

/* the loopback authenticates nothing; it only tells the receiver */
static pmix_status_t lb_send_open(void *ctx, uint32_t peer, const void *hdr,
                                  size_t hdr_len, const rdp_iov_t *iov,
                                  size_t iovcnt, rdp_tl_done_cb_t cb,
                                  void *cb_arg)
{
    return lb_send_any(ctx, peer, hdr, hdr_len, iov, iovcnt, cb, cb_arg, 1);
}

static pmix_status_t lb_fetch(void *ctx, void *desc, void *buf, size_t len,
                              rdp_tl_done_cb_t cb, void *cb_arg)
{
    lb_ep_t *ep           = ctx;
    rdp_tl_loopback_t *lb = ep->lb;
    lb_msg_t *msg         = desc;
    lb_ev_t *ev;

    if (msg == NULL || !msg->kept || msg->released || msg->dst != ep->index
        || cb == NULL || len != msg->len || (buf == NULL && len > 0)) {
        rdp_log_error(COLL, "loopback: bad fetch by %u", ep->index);
        if (msg != NULL && msg->kept && !msg->released) {
            consume(lb, msg);
        }
        return PMIX_ERR_BAD_PARAM;
    }
    /* the descriptor is consumed: the fetch event owns the message */
    msg->kept = 0;
    lb->kept--;
    msg->fetching = 1;
    if (lb->inline_sends) {
        if (len > 0) {
            memcpy(buf, msg->wire + msg->hdr_len, len);
        }
        consume(lb, msg);
        return PMIX_OPERATION_SUCCEEDED;
    }
    ev = rdp_calloc(1, sizeof(*ev));
    if (ev == NULL) {
        consume(lb, msg);
        return PMIX_ERR_NOMEM;
    }
    ev->type   = LB_EV_FETCH;
    ev->ep     = ep->index;
    ev->msg    = msg;
    ev->buf    = buf;
    ev->cb     = cb;
    ev->cb_arg = cb_arg;
    if (lb_push(lb, ev) != PMIX_SUCCESS) {
        rdp_free(ev);
        consume(lb, msg);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static void lb_release(void *ctx, void *desc)
{
    lb_ep_t *ep   = ctx;
    lb_msg_t *msg = desc;

    if (msg == NULL || !msg->kept || msg->released) {
        rdp_log_error(COLL, "loopback: bad release by %u", ep->index);
        return;
    }
    consume(ep->lb, msg);
}

static double lb_pass_time(void *ctx)
{
    return ((const lb_ep_t *)ctx)->pass_time;
}

static const rdp_tl_ops_t lb_ops = {
    .name      = "loopback",
    .bind      = lb_bind,
    .unbind    = lb_unbind,
    .send      = lb_send,
    .fetch     = lb_fetch,
    .release   = lb_release,
    .send_open = lb_send_open,
    .pass_time = lb_pass_time,
};

const rdp_tl_ops_t *rdp_tl_loopback_ops(void)
{
    return &lb_ops;
}

/* ---- setup and fault injection ---- */

pmix_status_t rdp_tl_loopback_create(uint32_t npeers, uint64_t seed,
                                     rdp_tl_loopback_t **lb_p)
{
    rdp_tl_loopback_t *lb;

    if (npeers == 0 || lb_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    lb = rdp_calloc(1, sizeof(*lb));
    if (lb == NULL) {
        return PMIX_ERR_NOMEM;
    }
    lb->eps = rdp_calloc(npeers, sizeof(*lb->eps));
    if (lb->eps == NULL) {
        rdp_free(lb);
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < npeers; i++) {
        lb->eps[i].lb    = lb;
        lb->eps[i].index = i;
    }
    lb->n   = npeers;
    lb->rng = seed;
    rdp_list_init(&lb->msgs);
    *lb_p = lb;
    return PMIX_SUCCESS;
}

void rdp_tl_loopback_destroy(rdp_tl_loopback_t *lb)
{
    rdp_list_t *item;

    if (lb == NULL) {
        return;
    }
    for (size_t i = 0; i < lb->nev; i++) {
        rdp_free(lb->evs[i]);
    }
    while ((item = rdp_list_pop_front(&lb->msgs)) != NULL) {
        lb_msg_t *msg = rdp_container_of(item, lb_msg_t, link);
        rdp_free(msg->wire);
        rdp_free(msg);
    }
    rdp_free(lb->evs);
    rdp_free(lb->drops);
    rdp_free(lb->eps);
    rdp_free(lb);
}

void *rdp_tl_loopback_ctx(rdp_tl_loopback_t *lb, uint32_t peer)
{
    if (lb == NULL || peer >= lb->n) {
        return NULL;
    }
    return &lb->eps[peer];
}

size_t rdp_tl_loopback_pending(const rdp_tl_loopback_t *lb)
{
    return lb->nev;
}

void rdp_tl_loopback_set_mode(rdp_tl_loopback_t *lb,
                              enum rdp_tl_loopback_mode mode)
{
    lb->mode = mode;
}

void rdp_tl_loopback_set_delays(rdp_tl_loopback_t *lb, uint32_t max_holds)
{
    lb->max_holds = max_holds;
}

void rdp_tl_loopback_set_inline(rdp_tl_loopback_t *lb, int on)
{
    lb->inline_sends = on;
}

void rdp_tl_loopback_drop(rdp_tl_loopback_t *lb, uint32_t src, uint32_t dst)
{
    lb_drop_t *nd = rdp_realloc(lb->drops, (lb->ndrops + 1) * sizeof(*nd));

    if (nd == NULL) {
        rdp_log_error(COLL, "loopback: cannot add a drop rule");
        return;
    }
    lb->drops             = nd;
    lb->drops[lb->ndrops] = (lb_drop_t){src, dst};
    lb->ndrops++;
}

void rdp_tl_loopback_kill(rdp_tl_loopback_t *lb, uint32_t peer)
{
    if (peer >= lb->n || lb->eps[peer].dead) {
        return;
    }
    lb->eps[peer].dead = 1;
    for (uint32_t i = 0; i < lb->n; i++) {
        lb_ev_t *ev;

        if (i == peer || !ep_live(&lb->eps[i])) {
            continue;
        }
        ev = rdp_calloc(1, sizeof(*ev));
        if (ev == NULL || lb_push(lb, ev) != PMIX_SUCCESS) {
            rdp_log_error(COLL, "loopback: cannot queue a failure report");
            rdp_free(ev);
            continue;
        }
        ev->type   = LB_EV_FAIL;
        ev->ep     = i;
        ev->failed = peer;
    }
}

pmix_status_t rdp_tl_loopback_inject(rdp_tl_loopback_t *lb, uint32_t src,
                                     uint32_t dst, const void *hdr,
                                     size_t hdr_len, const void *data,
                                     size_t len)
{
    rdp_iov_t iov = {data, len};

    if (src >= lb->n || dst >= lb->n || (hdr == NULL && hdr_len > 0)
        || (data == NULL && len > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return queue_msg(lb, src, dst, hdr, hdr_len, &iov, len > 0 ? 1 : 0, NULL,
                     NULL, 1, 0);
}

void rdp_tl_loopback_set_pass_end(rdp_tl_loopback_t *lb, int on)
{
    lb->pass_end = on;
}

void rdp_tl_loopback_set_all_open(rdp_tl_loopback_t *lb, int on)
{
    lb->all_open = on;
}

uint64_t rdp_tl_loopback_sent(const rdp_tl_loopback_t *lb, uint32_t peer)
{
    return peer < lb->n ? lb->eps[peer].sent : 0;
}

size_t rdp_tl_loopback_kept(const rdp_tl_loopback_t *lb)
{
    return lb->kept;
}
