/* ucx_pingpong.c - one-way latency and bandwidth of the UCX transport */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/tl.h"
#include "core/loop/loop.h"
#include "ucx/ucx.h"
#include "ucx/ucx_int.h"

#include "tests/unit/test_ucx_harness.h"

/*
 * Two transports in one process, each on its own loop thread, exactly as
 * two servers would use them (authenticators included).
 *
 *   ucx_pingpong [tls] [max_size]
 *
 * prints CSV: tls,test,bytes,iterations,one_way_us,MB_per_s
 *   latency:   ping-pong, one message in flight; one way = round trip / 2
 *   bandwidth: a window of WINDOW messages in flight, one ack at the end
 *   mac:       the message authenticator (AES-256-GMAC) of the payload
 *              alone (the cost per side)
 */

#define WINDOW 16

typedef struct side {
    uint32_t me;
    rdp_loop_t *loop;
    ucx_boot_t boot;
    rdp_tl_upcalls_t up;
    uint8_t *sbuf;
    uint8_t *rbuf;
    size_t size;
    /* run state (loop thread) */
    int mode;      /* 0 latency, 1 bandwidth */
    long todo;     /* messages still to send */
    long inflight; /* bandwidth: sends not completed */
    long received;
    long expect;
    rdp_wait_t *done;
} side_t;

static side_t sides[2];
static const uint64_t hdr_word = 0x50494e47u;

static void side_send(side_t *s, size_t size);

static void send_done(void *arg, pmix_status_t status)
{
    side_t *s = arg;

    if (status != PMIX_SUCCESS) {
        fprintf(stderr, "send failed: %d\n", status);
        exit(1);
    }
    if ((s->mode == 1) && (s->me == 0)) {
        s->inflight--;
        while ((s->todo > 0) && (s->inflight < WINDOW)) {
            side_send(s, s->size);
        }
    }
}

static void side_send(side_t *s, size_t size)
{
    rdp_iov_t iov = {s->sbuf, size};
    pmix_status_t st;

    if (s->mode == 1) {
        s->todo--;
        s->inflight++;
    }
    st = rdp_ucx_tl_ops()->send(s->boot.tl, 1 - s->me, &hdr_word,
                                sizeof(hdr_word), &iov, size ? 1 : 0, send_done,
                                s);
    if (st == PMIX_OPERATION_SUCCEEDED) {
        if (s->mode == 1) {
            s->inflight--;
        }
    } else if (st != PMIX_SUCCESS) {
        fprintf(stderr, "send: %d\n", st);
        exit(1);
    }
}

/* A message is complete at its receiver. */
static void arrived(side_t *s)
{
    s->received++;
    if (s->mode == 0) {
        if ((s->me == 0) && (s->received == s->expect)) {
            rdp_wait_signal(s->done, PMIX_SUCCESS);
        } else {
            side_send(s, s->size); /* pong, or the next ping */
        }
        return;
    }
    if (s->me == 1) {
        if (s->received == s->expect) {
            int mode = s->mode;

            s->mode = 0; /* the ack is a plain send */
            side_send(s, 0);
            s->mode = mode;
        }
    } else {
        rdp_wait_signal(s->done, PMIX_SUCCESS); /* the ack */
    }
}

static void fetch_done(void *arg, pmix_status_t status)
{
    if (status != PMIX_SUCCESS) {
        fprintf(stderr, "fetch failed: %d\n", status);
        exit(1);
    }
    arrived(arg);
}

static enum rdp_tl_rx_disp on_recv(void *arg, const rdp_tl_rx_t *rx)
{
    side_t *s = arg;
    pmix_status_t st;

    if (rx->kind != RDP_TL_DATA_RNDV) {
        if (rx->len > 0) {
            memcpy(s->rbuf, rx->data, rx->len); /* what an engine does */
        }
        arrived(s);
        return RDP_TL_RX_DONE;
    }
    st = rdp_ucx_tl_ops()->fetch(s->boot.tl, rx->desc, s->rbuf, rx->len,
                                 fetch_done, s);
    if (st == PMIX_OPERATION_SUCCEEDED) {
        arrived(s);
    } else if (st != PMIX_SUCCESS) {
        fprintf(stderr, "fetch: %d\n", st);
        exit(1);
    }
    return RDP_TL_RX_KEPT;
}

static void on_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    fprintf(stderr, "peer %u failed\n", peer);
}

typedef struct run {
    side_t *s;
    int mode;
    size_t size;
    long iters;
    rdp_wait_t *done;
} run_t;

static void setup_job(void *arg)
{
    run_t *r  = arg;
    side_t *s = r->s;

    s->mode     = r->mode;
    s->size     = r->size;
    s->received = 0;
    s->inflight = 0;
    s->done     = r->done;
    s->todo     = (r->mode == 1 && s->me == 0) ? r->iters : 0;
    s->expect   = (r->mode == 1) ? (s->me == 1 ? r->iters : 1) : r->iters;
}

static void start_job(void *arg)
{
    side_t *s = arg;

    if (s->mode == 0) {
        side_send(s, s->size);
    } else {
        while ((s->todo > 0) && (s->inflight < WINDOW)) {
            side_send(s, s->size);
        }
    }
}

static void bind_job(void *arg)
{
    side_t *s = arg;

    s->up.recv        = on_recv;
    s->up.peer_failed = on_failed;
    if (rdp_ucx_tl_ops()->bind(s->boot.tl, &s->up, s) != PMIX_SUCCESS) {
        exit(1);
    }
}

static void unbind_job(void *arg)
{
    side_t *s = arg;

    rdp_ucx_tl_ops()->unbind(s->boot.tl);
}

static double measure(int mode, size_t size, long iters)
{
    rdp_wait_t done;
    run_t r[2];
    double t0, t1;

    rdp_wait_init(&done);
    for (int i = 0; i < 2; i++) {
        r[i] = (run_t){&sides[i], mode, size, iters, &done};
        on_loop(sides[i].loop, setup_job, &r[i]);
    }
    t0 = rdp_time_now();
    on_loop(sides[0].loop, start_job, &sides[0]);
    if (rdp_wait_wait_for(&done, 120.0) != PMIX_SUCCESS) {
        fprintf(stderr, "timed out\n");
        exit(1);
    }
    t1 = rdp_time_now();
    rdp_wait_cleanup(&done);
    return t1 - t0;
}

static void bench_mac(const char *tls, size_t max)
{
    uint8_t key[RDP_UCX_KEY_LEN], pre[64] = {0}, mac[RDP_UCX_MAC_LEN];
    uint8_t *buf = calloc(1, max);
    rdp_ucx_auth_t auth;

    ucx_test_key(key, 7);
    if (rdp_ucx_auth_init(&auth, key, sizeof(key)) != PMIX_SUCCESS) {
        exit(1);
    }
    for (size_t size = 8; size <= max; size *= 8) {
        long iters = (long)(((size_t)256 << 20) / size);
        double t0, t;
        rdp_iov_t iov = {buf, size};

        iters = iters > 100000 ? 100000 : iters;
        t0    = rdp_time_now();
        for (long i = 0; i < iters; i++) {
            rdp_ucx_auth_msg(&auth, pre, sizeof(pre), &iov, 1, mac);
        }
        t = (rdp_time_now() - t0) / (double)iters;
        printf("%s,mac,%zu,%ld,%.2f,%.1f\n", tls, size, iters, t * 1e6,
               (double)size / t / 1e6);
    }
    rdp_ucx_auth_cleanup(&auth);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *tls = (argc > 1) ? argv[1] : "tcp";
    char label[64];
    size_t max = (argc > 2) ? strtoull(argv[2], NULL, 0) : (4u << 20);
    uint8_t key[RDP_UCX_KEY_LEN];
    rdp_iov_t table[2];

    ucx_pin(tls);
    /* the CSV's first column: the UCX_TLS list with '+' for ',' */
    snprintf(label, sizeof(label), "%s", tls);
    for (char *c = label; *c != '\0'; c++) {
        *c = (*c == ',') ? '+' : *c;
    }
    tls = label;
    ucx_test_key(key, 3);
    for (uint32_t i = 0; i < 2; i++) {
        side_t *s = &sides[i];

        s->me   = i;
        s->sbuf = calloc(1, max);
        s->rbuf = calloc(1, max);
        if ((rdp_loop_create(&s->loop) != PMIX_SUCCESS)
            || (rdp_loop_start_thread(s->loop) != PMIX_SUCCESS)) {
            return 1;
        }
        s->boot.loop           = s->loop;
        s->boot.params.key     = key;
        s->boot.params.key_len = sizeof(key);
        on_loop(s->loop, ucx_boot_create, &s->boot);
        if (s->boot.status != PMIX_SUCCESS) {
            fprintf(stderr, "cannot create a transport over %s\n", tls);
            return 1;
        }
        table[i].base = s->boot.addr;
        table[i].len  = s->boot.addr_len;
    }
    for (uint32_t i = 0; i < 2; i++) {
        sides[i].boot.me    = i;
        sides[i].boot.n     = 2;
        sides[i].boot.table = table;
        on_loop(sides[i].loop, ucx_boot_connect, &sides[i].boot);
        if (sides[i].boot.status != PMIX_SUCCESS) {
            return 1;
        }
        on_loop(sides[i].loop, bind_job, &sides[i]);
    }

    printf("tls,test,bytes,iterations,one_way_us,MB_per_s\n");
    (void)measure(0, 8, 1000); /* warm-up: wireup */
    for (size_t size = 8; size <= max; size *= 8) {
        long iters = size >= (1u << 20) ? 50 : (size >= 65536 ? 500 : 5000);
        double t   = measure(0, size, iters);
        double ow  = t / (2.0 * (double)iters);

        printf("%s,latency,%zu,%ld,%.2f,%.1f\n", tls, size, iters, ow * 1e6,
               (double)size / ow / 1e6);
        fflush(stdout);
    }
    for (size_t size = 4096; size <= max; size *= 8) {
        long iters = (long)(((size_t)512 << 20) / size);
        double t;

        iters = iters > 20000 ? 20000 : iters;
        t     = measure(1, size, iters);
        printf("%s,bandwidth,%zu,%ld,%.2f,%.1f\n", tls, size, iters,
               t / (double)iters * 1e6, (double)size * (double)iters / t / 1e6);
        fflush(stdout);
    }
    bench_mac(tls, max);

    for (int i = 0; i < 2; i++) {
        on_loop(sides[i].loop, unbind_job, &sides[i]);
    }
    for (int i = 0; i < 2; i++) {
        on_loop(sides[i].loop, ucx_boot_destroy, &sides[i].boot);
        rdp_loop_destroy(sides[i].loop);
        free(sides[i].sbuf);
        free(sides[i].rbuf);
    }
    return 0;
}
