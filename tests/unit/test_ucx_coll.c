/* test_ucx_coll.c - the collective engine over the UCX transport */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/loop/loop.h"
#include "ucx/ucx.h"

#include "test_ucx_harness.h"

/*
 * Four servers in one process, each with its own loop thread, UCX
 * transport and engine, run allgathers (small, mixed with 1 MiB blocks that
 * go by rendezvous, and empty) and barriers with every algorithm, then
 * lose a server in the middle of a collective.
 */

#define P 4

typedef struct server {
    uint32_t me;
    rdp_loop_t *loop;
    ucx_boot_t boot;
    rdp_coll_engine_t *engine;
    enum rdp_coll_alg alg;
    pmix_status_t status;
    rdp_ucx_tl_stats_t stats;
    rdp_coll_engine_stats_t engine_stats;
} server_t;

static server_t servers[P];

static uint8_t block_byte(uint32_t u, uint64_t opid, size_t j)
{
    return (uint8_t)(u * 29u + opid * 11u + j * 5u + (j >> 10));
}

static size_t block_len(uint32_t u, uint64_t opid)
{
    switch ((u + opid) % 4) {
    case 0:
        return 0;
    case 1:
        return 1u << 20;
    case 2: /* either side of the engine's sealing threshold (4 KiB) */
        return 1 + (size_t)((u * 7919u + opid * 104729u) % 5000);
    default:
        return 17;
    }
}

/* ---- one collective on one server ---- */

typedef struct op {
    server_t *s;
    enum rdp_coll_kind kind;
    uint64_t opid;
    uint8_t *data;
    size_t len;
    double timeout;
    pmix_status_t start_status;
    rdp_wait_t done;
    pmix_status_t status;
    int verified; /* 1 ok, -1 wrong data */
    uint32_t failed_peer;
    uint32_t nsteps;
    uint64_t msgs_sent;
} op_t;

static void coll_cb(const rdp_coll_result_t *res, void *arg)
{
    op_t *op = arg;

    op->verified    = 1;
    op->failed_peer = res->failed_peer;
    op->nsteps      = res->nsteps;
    op->msgs_sent   = res->msgs_sent;
    if ((res->status == PMIX_SUCCESS) && (op->kind == RDP_COLL_ALLGATHER)) {
        if (res->nblocks != P) {
            op->verified = -1;
        }
        for (uint32_t b = 0; (op->verified == 1) && (b < res->nblocks); b++) {
            const rdp_coll_block_t *blk = &res->blocks[b];
            const uint8_t *d            = blk->data;

            if ((blk->origin != b)
                || (blk->len != block_len(blk->origin, op->opid))) {
                op->verified = -1;
                break;
            }
            for (uint64_t j = 0; j < blk->len; j++) {
                if (d[j] != block_byte(blk->origin, op->opid, j)) {
                    op->verified = -1;
                    break;
                }
            }
        }
    }
    rdp_wait_signal(&op->done, res->status);
}

static void start_job(void *arg)
{
    op_t *op                       = arg;
    static const uint32_t parts[P] = {0, 1, 2, 3};
    rdp_coll_args_t args           = {0};

    args.kind        = op->kind;
    args.opid        = op->opid;
    args.parts       = parts;
    args.nparts      = P;
    args.data        = op->data;
    args.len         = op->len;
    args.size_class  = RDP_COLL_SIZE_LARGE;
    args.timeout     = op->timeout;
    op->start_status = rdp_coll_start(op->s->engine, &args, coll_cb, op);
}

static void op_init(op_t *op, server_t *s, enum rdp_coll_kind kind,
                    uint64_t opid, double timeout)
{
    memset(op, 0, sizeof(*op));
    op->s       = s;
    op->kind    = kind;
    op->opid    = opid;
    op->timeout = timeout;
    rdp_wait_init(&op->done);
    if (kind == RDP_COLL_ALLGATHER) {
        op->len  = block_len(s->me, opid);
        op->data = malloc(op->len > 0 ? op->len : 1);
        for (size_t j = 0; j < op->len; j++) {
            op->data[j] = block_byte(s->me, opid, j);
        }
    }
}

static void op_cleanup(op_t *op)
{
    rdp_wait_cleanup(&op->done);
    free(op->data);
}

/* ---- bring-up ---- */

static void engine_create_job(void *arg)
{
    server_t *s                  = arg;
    rdp_coll_engine_config_t cfg = {0};

    cfg.tl_ops    = rdp_ucx_tl_ops();
    cfg.tl_ctx    = rdp_ucx_tl_ctx(s->boot.tl);
    cfg.nuniverse = P;
    cfg.me        = s->me;
    cfg.loop      = s->loop;
    cfg.alg       = s->alg;
    s->status     = rdp_coll_engine_create(&cfg, &s->engine);
}

static void engine_destroy_job(void *arg)
{
    server_t *s = arg;

    rdp_coll_engine_destroy(s->engine);
    s->engine = NULL;
}

static void up(enum rdp_coll_alg alg)
{
    static uint8_t key[RDP_UCX_KEY_LEN];
    rdp_iov_t table[P];

    ucx_pin("tcp");
    ucx_test_key(key, 42);
    for (uint32_t i = 0; i < P; i++) {
        server_t *s = &servers[i];

        memset(s, 0, sizeof(*s));
        s->me  = i;
        s->alg = alg;
        assert_int_equal(rdp_loop_create(&s->loop), PMIX_SUCCESS);
        assert_int_equal(rdp_loop_start_thread(s->loop), PMIX_SUCCESS);
        s->boot.loop           = s->loop;
        s->boot.params.key     = key;
        s->boot.params.key_len = sizeof(key);
        on_loop(s->loop, ucx_boot_create, &s->boot);
        assert_int_equal(s->boot.status, PMIX_SUCCESS);
        table[i].base = s->boot.addr;
        table[i].len  = s->boot.addr_len;
    }
    for (uint32_t i = 0; i < P; i++) {
        server_t *s = &servers[i];

        s->boot.me    = i;
        s->boot.n     = P;
        s->boot.table = table;
        on_loop(s->loop, ucx_boot_connect, &s->boot);
        assert_int_equal(s->boot.status, PMIX_SUCCESS);
        on_loop(s->loop, engine_create_job, s);
        assert_int_equal(s->status, PMIX_SUCCESS);
    }
}

static void down(void)
{
    for (uint32_t i = 0; i < P; i++) {
        if (servers[i].engine != NULL) {
            on_loop(servers[i].loop, engine_destroy_job, &servers[i]);
        }
    }
    for (uint32_t i = 0; i < P; i++) {
        if (servers[i].boot.tl != NULL) {
            on_loop(servers[i].loop, ucx_boot_destroy, &servers[i].boot);
        }
        rdp_loop_destroy(servers[i].loop);
    }
}

/* Run one collective on every server at once and check everyone; returns
 * the messages they sent for it. */
static uint64_t run_everywhere(enum rdp_coll_kind kind, uint64_t opid)
{
    uint64_t msgs = 0;
    op_t ops[P];

    for (uint32_t i = 0; i < P; i++) {
        op_init(&ops[i], &servers[i], kind, opid, UCX_TEST_WAIT);
        assert_int_equal(rdp_loop_post(servers[i].loop, start_job, &ops[i]),
                         PMIX_SUCCESS);
    }
    for (uint32_t i = 0; i < P; i++) {
        assert_int_equal(rdp_wait_wait_for(&ops[i].done, UCX_TEST_WAIT + 5),
                         PMIX_SUCCESS);
        assert_int_equal(ops[i].start_status, PMIX_SUCCESS);
        assert_int_equal(ops[i].verified, 1);
        msgs += ops[i].msgs_sent;
        op_cleanup(&ops[i]);
    }
    return msgs;
}

typedef struct tl_totals {
    uint64_t seals_made;
    uint64_t mac_sent_bytes;
    uint64_t sealed_sent_bytes;
} tl_totals_t;

static void stats_job(void *arg)
{
    server_t *s = arg;

    rdp_ucx_tl_get_stats(s->boot.tl, &s->stats);
}

/* The transport counters summed over the servers. */
static tl_totals_t tl_totals(void)
{
    tl_totals_t t = {0};

    for (uint32_t i = 0; i < P; i++) {
        on_loop(servers[i].loop, stats_job, &servers[i]);
        t.seals_made += servers[i].stats.seals_made;
        t.mac_sent_bytes += servers[i].stats.mac_sent_bytes;
        t.sealed_sent_bytes += servers[i].stats.sealed_sent_bytes;
    }
    return t;
}

/* What the transport counters should have grown by: every run of payload
 * travels P - 1 times in all (each other server receives it once); runs
 * of RDP_COLL_SEAL_MIN (4 KiB) bytes and more are sealed once, by their
 * origin, and every hop sends them under that seal; the others are
 * authenticated per message. */
typedef struct expected {
    uint64_t nsealed, sealed, plain;
} expected_t;

/* A run of @a bytes on the wire whose sealing depends on @a data_len (the
 * bytes without a block header). */
static void expect_run(expected_t *e, uint64_t bytes, uint64_t data_len)
{
    if (data_len >= 4096) {
        e->sealed += (P - 1) * bytes;
        e->nsealed++;
    } else {
        e->plain += (P - 1) * bytes;
    }
}

static void check_counters(const tl_totals_t *before, const expected_t *e)
{
    tl_totals_t after = tl_totals();

    assert_int_equal(after.seals_made - before->seals_made, e->nsealed);
    assert_int_equal(after.sealed_sent_bytes - before->sealed_sent_bytes,
                     e->sealed);
    assert_int_equal(after.mac_sent_bytes - before->mac_sent_bytes, e->plain);
}

/* Whole blocks (12-byte block header + bytes). */
static void check_sealing(const tl_totals_t *before, uint64_t opid)
{
    expected_t e = {0};

    for (uint32_t u = 0; u < P; u++) {
        expect_run(&e, 12 + block_len(u, opid), block_len(u, opid));
    }
    check_counters(before, &e);
}

static void engine_stats_job(void *arg)
{
    server_t *s = arg;

    rdp_coll_engine_get_stats(s->engine, &s->engine_stats);
}

/* Callbacks run at the end of the transport's pass that completed the
 * collective (tl.h: progressed) rather than after another loop pass:
 * at least some of them (the others, when the last message came in a pass
 * that had nothing to do with the engine, by the loop's timer). */
static void check_pass_end_callbacks(void)
{
    uint64_t at_pass_end = 0, completed = 0;

    for (uint32_t i = 0; i < P; i++) {
        on_loop(servers[i].loop, engine_stats_job, &servers[i]);
        at_pass_end += servers[i].engine_stats.completed_at_pass_end;
        completed += servers[i].engine_stats.completed;
    }
    assert_true(at_pass_end > 0);
    assert_true(at_pass_end <= completed);
}

static void allgather_with_every_algorithm(void **state)
{
    const enum rdp_coll_alg algs[] = {RDP_COLL_ALG_RD, RDP_COLL_ALG_BRUCK,
                                      RDP_COLL_ALG_RING};

    for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
        up(algs[a]);
        for (uint64_t opid = 1; opid <= 6; opid++) {
            tl_totals_t before = tl_totals();

            (void)run_everywhere(RDP_COLL_ALLGATHER, opid);
            check_sealing(&before, opid);
        }
        check_pass_end_callbacks();
        run_everywhere(RDP_COLL_BARRIER, 100);
        down();
    }
}

/* Servers 0..2 run allgather @a opid while server 3 disappears, before
 * they start or (@a after_start) while their blocks are on the way: they
 * all complete with PMIX_ERR_UNREACH, well before the collective's
 * timeout. */
static void lose_server_3(uint64_t opid, int after_start)
{
    op_t ops[P];

    if (!after_start) {
        on_loop(servers[3].loop, engine_destroy_job, &servers[3]);
        on_loop(servers[3].loop, ucx_boot_destroy, &servers[3].boot);
    }
    for (uint32_t i = 0; i < P - 1; i++) {
        op_init(&ops[i], &servers[i], RDP_COLL_ALLGATHER, opid, 600.0);
        assert_int_equal(rdp_loop_post(servers[i].loop, start_job, &ops[i]),
                         PMIX_SUCCESS);
    }
    if (after_start) {
        on_loop(servers[3].loop, engine_destroy_job, &servers[3]);
        on_loop(servers[3].loop, ucx_boot_destroy, &servers[3].boot);
    }
    for (uint32_t i = 0; i < P - 1; i++) {
        assert_int_equal(rdp_wait_wait_for(&ops[i].done, UCX_TEST_WAIT),
                         PMIX_ERR_UNREACH);
        op_cleanup(&ops[i]);
    }
}

static void lost_server_fails_the_collective(void **state)
{
    up(RDP_COLL_ALG_RING);
    (void)run_everywhere(RDP_COLL_ALLGATHER, 1); /* endpoints are up */
    lose_server_3(2, 0);
    down();
}

/* As check_sealing, for the ring in pieces of @a seg bytes: a block
 * longer than @a seg travels as pieces (no block header), each sealed on
 * its own; the others whole. */
static void check_piece_sealing(const tl_totals_t *before, uint64_t opid,
                                uint64_t seg)
{
    expected_t e = {0};

    for (uint32_t u = 0; u < P; u++) {
        uint64_t len = block_len(u, opid);

        if (len <= seg) {
            expect_run(&e, 12 + len, len);
            continue;
        }
        for (uint64_t off = 0; off < len; off += seg) {
            uint64_t piece = (len - off < seg) ? len - off : seg;

            expect_run(&e, piece, piece);
        }
    }
    check_counters(before, &e);
}

/* The ring with pieces of 4 KiB (RDPMIX_COLL_SEG_BYTES): 1 MiB blocks go
 * in 256 pieces, each fetched by rendezvous into place and forwarded as
 * it lands; 5000-byte ones in two; small ones whole.  Then a server is
 * lost while the pieces of the others stream: every survivor fails. */
static void ring_in_pieces_over_ucx(void **state)
{
    (void)state;

    setenv("RDPMIX_COLL_SEG_BYTES", "4k", 1);
    up(RDP_COLL_ALG_RING);
    unsetenv("RDPMIX_COLL_SEG_BYTES");
    for (uint64_t opid = 1; opid <= 6; opid++) {
        tl_totals_t before = tl_totals();
        uint64_t pieces    = 0;

        /* (u + opid) % 4 == 1: a 1 MiB block, which every server sends
         * at one of the 3 steps (once each, as 256 pieces) */
        for (uint32_t u = 0; u < P; u++) {
            if (block_len(u, opid) > 4096) {
                pieces += (P - 1) * ((block_len(u, opid) + 4095) / 4096);
            } else {
                pieces += P - 1;
            }
        }
        assert_int_equal(run_everywhere(RDP_COLL_ALLGATHER, opid), pieces);
        check_piece_sealing(&before, opid, 4096);
    }
    /* server 2's 1 MiB block (opid 3) streams as 3 disappears */
    lose_server_3(3, 1);
    down();
}

/* A server lost while the others' pieces stream, again and again: its
 * sockets break in the middle of traffic each time, and no survivor may
 * abort.  UCX 1.13's tcp transport aborted in about 1 of 14 such losses
 * under load (a failed peer's other endpoint still in the event batch;
 * the transport now asks for one event per poll, docs/ucx.md). */
static void losing_a_server_mid_stream_never_aborts(void **state)
{
    (void)state;

    for (int round = 0; round < 30; round++) {
        setenv("RDPMIX_COLL_SEG_BYTES", "4k", 1);
        up(RDP_COLL_ALG_RING);
        unsetenv("RDPMIX_COLL_SEG_BYTES");
        (void)run_everywhere(RDP_COLL_ALLGATHER, 1); /* endpoints are up */
        lose_server_3(3, 1);
        down();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allgather_with_every_algorithm),
        cmocka_unit_test(lost_server_fails_the_collective),
        cmocka_unit_test(ring_in_pieces_over_ucx),
        cmocka_unit_test(losing_a_server_mid_stream_never_aborts),
    };

    return cmocka_run_group_tests_name("ucx_coll", tests, NULL, NULL);
}
