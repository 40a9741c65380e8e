/* test_coll_p2p.c - the engine's point-to-point channel over the loopback */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/loopback.h"
#include "coll/msg.h"

#define NPEERS 4

typedef struct got {
    uint32_t peer;
    uint32_t channel;
    uint64_t id;
    size_t len;
    uint8_t first;
    uint8_t last;
} got_t;

typedef struct node {
    rdp_coll_engine_t *engine;
    got_t got[64];
    size_t ngot;
    uint32_t failed[8];
    size_t nfailed;
} node_t;

typedef struct world {
    rdp_tl_loopback_t *lb;
    node_t nodes[NPEERS];
    int in_send; /* a handler must never run inside rdp_coll_p2p_send */
} world_t;

static world_t *cur;

static void on_recv(void *arg, uint32_t peer, uint32_t channel, uint64_t id,
                    const void *data, size_t len)
{
    node_t *n = arg;
    got_t *g;

    assert_false(cur->in_send);
    assert_true(n->ngot < 64);
    g          = &n->got[n->ngot++];
    g->peer    = peer;
    g->channel = channel;
    g->id      = id;
    g->len     = len;
    g->first   = len > 0 ? ((const uint8_t *)data)[0] : 0;
    g->last    = len > 0 ? ((const uint8_t *)data)[len - 1] : 0;
}

static void on_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    node_t *n = arg;

    assert_false(cur->in_send);
    assert_true(status < 0);
    if (n->nfailed < 8) {
        n->failed[n->nfailed++] = peer;
    }
}

static const rdp_coll_p2p_ops_t ops = {on_recv, on_failed};

static void world_create(world_t *w, uint64_t seed,
                         enum rdp_tl_loopback_mode mode)
{
    memset(w, 0, sizeof(*w));
    cur = w;
    assert_int_equal(rdp_tl_loopback_create(NPEERS, seed, &w->lb),
                     PMIX_SUCCESS);
    rdp_tl_loopback_set_mode(w->lb, mode);
    for (uint32_t i = 0; i < NPEERS; i++) {
        rdp_coll_engine_config_t cfg = {
            .tl_ops    = rdp_tl_loopback_ops(),
            .tl_ctx    = rdp_tl_loopback_ctx(w->lb, i),
            .nuniverse = NPEERS,
            .me        = i,
        };

        assert_int_equal(rdp_coll_engine_create(&cfg, &w->nodes[i].engine),
                         PMIX_SUCCESS);
        rdp_coll_engine_set_p2p_handler(w->nodes[i].engine, &ops, &w->nodes[i]);
    }
}

static void world_run(world_t *w)
{
    for (int guard = 0; guard < 100000; guard++) {
        size_t ran = 0;

        while (rdp_tl_loopback_progress(w->lb)) {
        }
        for (uint32_t i = 0; i < NPEERS; i++) {
            ran += rdp_coll_engine_progress(w->nodes[i].engine);
        }
        if (ran == 0 && rdp_tl_loopback_pending(w->lb) == 0) {
            return;
        }
    }
    fail_msg("p2p traffic never settled");
}

static void world_destroy(world_t *w)
{
    for (uint32_t i = 0; i < NPEERS; i++) {
        rdp_coll_engine_destroy(w->nodes[i].engine);
    }
    assert_int_equal(rdp_tl_loopback_kept(w->lb), 0);
    rdp_tl_loopback_destroy(w->lb);
    cur = NULL;
}

static pmix_status_t send_bytes(world_t *w, uint32_t from, uint32_t to,
                                uint32_t channel, uint64_t id, size_t len,
                                uint8_t fill)
{
    uint8_t *buf = malloc(len + 1);
    rdp_iov_t iov[2];
    pmix_status_t status;

    memset(buf, fill, len);
    if (len > 0) {
        buf[len - 1] = (uint8_t)(fill + 1);
    }
    /* two pieces, gathered into one message */
    iov[0].base = buf;
    iov[0].len  = len / 2;
    iov[1].base = buf + len / 2;
    iov[1].len  = len - len / 2;
    w->in_send  = 1;
    status = rdp_coll_p2p_send(w->nodes[from].engine, to, channel, id, iov, 2);
    w->in_send = 0;
    free(buf); /* copied before return */
    return status;
}

static void messages_arrive_whole_in_every_payload_mode(void **state)
{
    enum rdp_tl_loopback_mode modes[] = {
        RDP_TL_LOOPBACK_BORROWED, RDP_TL_LOOPBACK_KEEPABLE,
        RDP_TL_LOOPBACK_RNDV, RDP_TL_LOOPBACK_MIXED};

    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        world_t w;
        size_t total = 0;

        world_create(&w, 42 + m, modes[m]);
        for (uint32_t from = 0; from < NPEERS; from++) {
            for (uint32_t to = 0; to < NPEERS; to++) {
                if (to == from) {
                    continue;
                }
                assert_int_equal(send_bytes(&w, from, to, 7, from * 100 + to,
                                            from == 0 ? 100000 : to,
                                            (uint8_t)(from + 10)),
                                 PMIX_SUCCESS);
            }
        }
        world_run(&w);
        for (uint32_t to = 0; to < NPEERS; to++) {
            node_t *n = &w.nodes[to];

            assert_int_equal(n->ngot, NPEERS - 1);
            for (size_t k = 0; k < n->ngot; k++) {
                got_t *g = &n->got[k];

                assert_int_equal(g->channel, 7);
                assert_int_equal(g->id, g->peer * 100 + to);
                assert_int_equal(g->len, g->peer == 0 ? 100000 : to);
                if (g->len > 1) {
                    assert_int_equal(g->first, g->peer + 10);
                }
                if (g->len > 0) {
                    assert_int_equal(g->last, g->peer + 11);
                }
                total++;
            }
        }
        assert_int_equal(total, NPEERS * (NPEERS - 1));
        world_destroy(&w);
    }
}

static void bad_sends_are_refused(void **state)
{
    world_t w;
    rdp_iov_t iov = {NULL, 3};

    world_create(&w, 7, RDP_TL_LOOPBACK_MIXED);
    assert_int_equal(send_bytes(&w, 1, 1, 0, 0, 4, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(send_bytes(&w, 1, NPEERS, 0, 0, 4, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_p2p_send(w.nodes[0].engine, 1, 0, 0, &iov, 1),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_p2p_send(w.nodes[0].engine, 1, 0, 0, NULL, 0),
                     PMIX_SUCCESS);
    world_run(&w);
    assert_int_equal(w.nodes[1].ngot, 1);
    assert_int_equal(w.nodes[1].got[0].len, 0);
    world_destroy(&w);
}

static void a_killed_peer_is_reported_and_unreachable(void **state)
{
    world_t w;

    world_create(&w, 9, RDP_TL_LOOPBACK_MIXED);
    rdp_tl_loopback_kill(w.lb, 2);
    world_run(&w);
    for (uint32_t i = 0; i < NPEERS; i++) {
        if (i == 2) {
            continue;
        }
        assert_int_equal(w.nodes[i].nfailed, 1);
        assert_int_equal(w.nodes[i].failed[0], 2);
        assert_true(rdp_coll_engine_peer_failed(w.nodes[i].engine, 2));
    }
    assert_int_equal(send_bytes(&w, 0, 2, 1, 1, 8, 0), PMIX_ERR_UNREACH);
    world_destroy(&w);
}

static void messages_without_a_handler_are_dropped(void **state)
{
    world_t w;
    rdp_coll_engine_stats_t st;

    world_create(&w, 11, RDP_TL_LOOPBACK_RNDV);
    rdp_coll_engine_set_p2p_handler(w.nodes[3].engine, NULL, NULL);
    assert_int_equal(send_bytes(&w, 0, 3, 1, 1, 5000, 1), PMIX_SUCCESS);
    world_run(&w);
    rdp_coll_engine_get_stats(w.nodes[3].engine, &st);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(w.nodes[3].ngot, 0);
    world_destroy(&w);
}

static void malformed_p2p_headers_are_dropped(void **state)
{
    world_t w;
    rdp_coll_engine_stats_t st;
    rdp_coll_hdr_t h;
    uint8_t raw[RDP_COLL_HDR_LEN];

    world_create(&w, 13, RDP_TL_LOOPBACK_BORROWED);
    memset(&h, 0, sizeof(h));
    h.type   = RDP_COLL_MSG_P2P;
    h.sender = 0;
    h.aux    = UINT32_MAX;
    h.nparts = 3; /* must be 0 */
    rdp_coll_hdr_encode(&h, raw);
    assert_int_equal(
        rdp_tl_loopback_inject(w.lb, 0, 1, raw, sizeof(raw), "x", 1),
        PMIX_SUCCESS);
    h.nparts = 0;
    h.sender = 2; /* not the transport's sender */
    rdp_coll_hdr_encode(&h, raw);
    assert_int_equal(
        rdp_tl_loopback_inject(w.lb, 0, 1, raw, sizeof(raw), "x", 1),
        PMIX_SUCCESS);
    h.sender = 0;
    rdp_coll_hdr_encode(&h, raw);
    assert_int_equal(
        rdp_tl_loopback_inject(w.lb, 0, 1, raw, sizeof(raw), "ok", 2),
        PMIX_SUCCESS);
    world_run(&w);
    rdp_coll_engine_get_stats(w.nodes[1].engine, &st);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(w.nodes[1].ngot, 1);
    assert_int_equal(w.nodes[1].got[0].len, 2);
    world_destroy(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_arrive_whole_in_every_payload_mode),
        cmocka_unit_test(bad_sends_are_refused),
        cmocka_unit_test(a_killed_peer_is_reported_and_unreachable),
        cmocka_unit_test(messages_without_a_handler_are_dropped),
        cmocka_unit_test(malformed_p2p_headers_are_dropped),
    };

    return cmocka_run_group_tests_name("coll_p2p", tests, NULL, NULL);
}
