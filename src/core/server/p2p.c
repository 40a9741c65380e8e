/* p2p.c - point-to-point messages between servers, by channel */
#include "config.h"
#include "core/server/p2p.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

typedef struct batch {
    rdp_buf_t buf; /* entries */
    uint32_t count;
} batch_t;

static struct {
    rdp_coll_engine_t *engine; /* NULL: closed */
    uint32_t me;
    uint32_t n;
    batch_t *batches;   /* n x RDP_SRV_CH_MAX, by (server, channel) */
    rdp_timer_t *flush; /* sends the batches */
    uint64_t next_msg_id;
} p2p;

/* kept across engine restarts */
static const rdp_srv_p2p_handler_t *handlers[RDP_SRV_CH_MAX];

pmix_status_t rdp_srv_p2p_register(uint32_t channel,
                                   const rdp_srv_p2p_handler_t *handler)
{
    if (channel == 0 || channel >= RDP_SRV_CH_MAX) {
        return PMIX_ERR_BAD_PARAM;
    }
    handlers[channel] = handler;
    return PMIX_SUCCESS;
}

bool rdp_srv_p2p_peer_failed(uint32_t server)
{
    return p2p.engine != NULL
           && rdp_coll_engine_peer_failed(p2p.engine, server);
}

/* ---- sending ---- */

static pmix_status_t send_iov(uint32_t server, uint32_t channel,
                              const rdp_iov_t *iov, size_t iovcnt)
{
    if (p2p.engine == NULL) {
        return PMIX_ERR_INIT;
    }
    if (channel == 0 || channel >= RDP_SRV_CH_MAX) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_coll_p2p_send(p2p.engine, server, channel, ++p2p.next_msg_id,
                             iov, iovcnt);
}

pmix_status_t rdp_srv_p2p_send(uint32_t server, uint32_t channel,
                               const rdp_buf_t *buf)
{
    rdp_iov_t iov = {.base = buf->data, .len = buf->size};

    return send_iov(server, channel, &iov, 1);
}

static batch_t *batch_of(uint32_t server, uint32_t channel)
{
    if (p2p.engine == NULL || server >= p2p.n || channel == 0
        || channel >= RDP_SRV_CH_MAX) {
        return NULL;
    }
    return &p2p.batches[(size_t)server * RDP_SRV_CH_MAX + channel];
}

rdp_buf_t *rdp_srv_p2p_batch(uint32_t server, uint32_t channel)
{
    batch_t *b = batch_of(server, channel);

    return b != NULL ? &b->buf : NULL;
}

void rdp_srv_p2p_batch_add(uint32_t server, uint32_t channel)
{
    batch_t *b = batch_of(server, channel);

    if (b != NULL) {
        b->count++;
        rdp_timer_start(p2p.flush, 0);
    }
}

static void send_batch(uint32_t server, uint32_t channel, batch_t *b)
{
    const rdp_srv_p2p_handler_t *h = handlers[channel];
    rdp_buf_t msg;
    rdp_iov_t iov[2];
    pmix_status_t status;

    rdp_buf_init(&msg);
    status = rdp_pack_u32(&msg, b->count);
    if (status == PMIX_SUCCESS) {
        iov[0].base = msg.data;
        iov[0].len  = msg.size;
        iov[1].base = b->buf.data;
        iov[1].len  = b->buf.size;
        status      = send_iov(server, channel, iov, 2);
    }
    rdp_buf_cleanup(&msg);
    if (status != PMIX_SUCCESS && h != NULL && h->unsent != NULL) {
        rdp_rbuf_t rb;

        rdp_rbuf_init(&rb, b->buf.data, b->buf.size);
        h->unsent(server, b->count, &rb, status);
    } else if (status != PMIX_SUCCESS) {
        rdp_log_warn(SERVER, "cannot send to server %u: %s", server,
                     rdp_status_name(status));
    }
    b->count    = 0;
    b->buf.size = 0;
}

static void flush_fired(void *arg)
{
    (void)arg;
    for (uint32_t s = 0; p2p.engine != NULL && s < p2p.n; s++) {
        for (uint32_t ch = 1; p2p.engine != NULL && ch < RDP_SRV_CH_MAX; ch++) {
            batch_t *b = batch_of(s, ch);

            if (b->count > 0) {
                send_batch(s, ch, b);
            }
        }
    }
}

/* ---- receiving ---- */

static void p2p_recv(void *arg, uint32_t peer, uint32_t channel, uint64_t id,
                     const void *data, size_t len)
{
    const rdp_srv_p2p_handler_t *h =
        channel < RDP_SRV_CH_MAX ? handlers[channel] : NULL;
    rdp_rbuf_t rb;

    (void)arg;
    (void)id;
    if (!rdp_srv.active) {
        return;
    }
    if (h == NULL || h->recv == NULL) {
        rdp_log_warn(SERVER,
                     "dropping a message on unknown channel %u from "
                     "server %u",
                     channel, peer);
        return;
    }
    rdp_rbuf_init(&rb, data, len);
    h->recv(peer, &rb);
}

static void p2p_peer_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    (void)arg;
    for (uint32_t ch = 1; ch < RDP_SRV_CH_MAX; ch++) {
        if (handlers[ch] != NULL && handlers[ch]->peer_failed != NULL) {
            handlers[ch]->peer_failed(peer, status);
        }
    }
}

static const rdp_coll_p2p_ops_t p2p_ops = {
    .recv        = p2p_recv,
    .peer_failed = p2p_peer_failed,
};

/* ---- lifetime ---- */

pmix_status_t rdp_srv_p2p_open(rdp_coll_engine_t *engine, uint32_t me,
                               uint32_t n)
{
    size_t nb = (size_t)n * RDP_SRV_CH_MAX;
    pmix_status_t status;

    p2p.batches = rdp_calloc(nb, sizeof(*p2p.batches));
    if (p2p.batches == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nb; i++) {
        rdp_buf_init(&p2p.batches[i].buf);
    }
    status = rdp_timer_create(rdp_rt.loop, flush_fired, NULL, &p2p.flush);
    if (status != PMIX_SUCCESS) {
        rdp_free(p2p.batches);
        p2p.batches = NULL;
        return status;
    }
    p2p.me     = me;
    p2p.n      = n;
    p2p.engine = engine;
    rdp_coll_engine_set_p2p_handler(engine, &p2p_ops, NULL);
    return PMIX_SUCCESS;
}

void rdp_srv_p2p_close(void)
{
    if (p2p.engine != NULL) {
        rdp_coll_engine_set_p2p_handler(p2p.engine, NULL, NULL);
    }
    rdp_timer_destroy(p2p.flush);
    if (p2p.batches != NULL) {
        for (size_t i = 0; i < (size_t)p2p.n * RDP_SRV_CH_MAX; i++) {
            rdp_buf_cleanup(&p2p.batches[i].buf);
        }
        rdp_free(p2p.batches);
    }
    memset(&p2p, 0, sizeof(p2p));
}
