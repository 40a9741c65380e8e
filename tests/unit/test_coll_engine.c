/* test_coll_engine.c - the collective engine over the loopback transport */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "coll/coll_int.h"
#include "coll/keytab.h"
#include "coll/loopback.h"
#include "coll/msg.h"
#include "core/loop/loop.h"

/* ---- harness ---- */

static uint64_t base_seed;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* block length of universe index u in operation opid, per length policy */
enum len_policy {
    LEN_SMALL, /* 0..40 bytes, some empty */
    LEN_TINY,  /* 0..3 bytes (large P) */
    LEN_BIG,   /* 0, 1 MiB and a spread */
    LEN_SEG    /* around the piece size SEG: see seg_sizes */
};

/* Piece size the segmentation tests set (RDPMIX_COLL_SEG_BYTES). */
#define SEG 1000u

/* The piece size engines created now get (RDPMIX_COLL_SEG_BYTES). */
static uint64_t test_seg;

/* LEN_SEG: opid k < 6 gives every block seg_sizes[k]; a larger opid mixes
 * them, universe index u getting seg_sizes[(u + opid) % 6]. */
static const size_t seg_sizes[] = {0, 1, SEG - 1, SEG, SEG + 1, 3 * SEG + 17};

static size_t block_len(enum len_policy pol, uint32_t u, uint64_t opid)
{
    uint64_t h = mix(u * 1000003ULL + opid);

    switch (pol) {
    case LEN_TINY:
        return (size_t)(h % 4);
    case LEN_SEG:
        return seg_sizes[opid < 6 ? opid : (u + opid) % 6];
    case LEN_BIG:
        if (u % 4 == 0) {
            return 0;
        }
        if (u % 4 == 1) {
            return 1u << 20;
        }
        return (size_t)(h % 70000);
    default:
        return (u % 7 == 3) ? 0 : (size_t)(h % 41);
    }
}

static uint8_t block_byte(uint32_t u, uint64_t opid, size_t j)
{
    return (uint8_t)(u * 131u + opid * 7u + j * 13u + (j >> 8));
}

static void fill_block(uint8_t *buf, uint32_t u, uint64_t opid, size_t len)
{
    for (size_t j = 0; j < len; j++) {
        buf[j] = block_byte(u, opid, j);
    }
}

typedef struct sim sim_t;

/* One started collective on one engine. */
typedef struct op {
    sim_t *sim;
    uint32_t me;
    enum rdp_coll_kind kind;
    uint64_t opid;
    uint32_t *parts;
    uint32_t nparts;
    enum len_policy pol;
    int called;
    pmix_status_t status;
    uint32_t failed_peer;
    uint32_t nsteps;
    uint64_t msgs_sent;
    enum rdp_coll_alg alg;
    int data_ok;
    const uint8_t *handed; /* my block, handed over (own_buf), or NULL */
} op_t;

struct sim {
    uint32_t P;
    uint64_t seed;
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t **eng;
    op_t *ops; /* flat pool */
    size_t nops;
    size_t capops;
    size_t ncalled;
};

/* When set, sim_create binds the engines to these ops instead of the
 * loopback's own (a wrapper that observes the sends). */
static const rdp_tl_ops_t *sim_ops;
/* What sim_start_ex puts in rdp_coll_args_t.open_payload. */
static int sim_open;
/* How sim_create's loopback hands payloads over, and whether its sends
 * and fetches complete inline. */
static enum rdp_tl_loopback_mode sim_mode = RDP_TL_LOOPBACK_MIXED;
static int sim_inline;
/* What sim_create puts in rdp_coll_engine_config_t.generic_only. */
static bool sim_generic;
/* When set, engine i of sim_create gets the piece size sim_seg_of(i)
 * (test_seg is restored for later engines). */
static uint64_t (*sim_seg_of)(uint32_t i);

static void put_seg_env(uint64_t bytes)
{
    char v[32];

    snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
    setenv("RDPMIX_COLL_SEG_BYTES", v, 1);
}

/* Make @a bytes the piece size of engines created from now on. */
static void set_seg(uint64_t bytes)
{
    put_seg_env(bytes);
    test_seg = bytes;
}

/* The piece size of engine @a u (its block's originator). */
static uint64_t seg_of(uint32_t u)
{
    return sim_seg_of != NULL ? sim_seg_of(u) : test_seg;
}

/* Messages a ring member sends for a block of @a len bytes. */
static uint64_t ring_msgs_for(size_t len, uint64_t seg)
{
    if (seg == 0 || len <= seg) {
        return 1;
    }
    return (len + seg - 1) / seg;
}

static void sim_create(sim_t *sim, uint32_t P, uint64_t seed,
                       enum rdp_coll_alg alg, size_t early_msgs,
                       size_t early_bytes)
{
    memset(sim, 0, sizeof(*sim));
    sim->P    = P;
    sim->seed = seed;
    assert_int_equal(rdp_tl_loopback_create(P, seed, &sim->lb), PMIX_SUCCESS);
    rdp_tl_loopback_set_mode(sim->lb, sim_mode);
    rdp_tl_loopback_set_inline(sim->lb, sim_inline);
    sim->eng = calloc(P, sizeof(*sim->eng));
    assert_non_null(sim->eng);
    for (uint32_t i = 0; i < P; i++) {
        rdp_coll_engine_config_t cfg = {0};

        if (sim_seg_of != NULL) {
            put_seg_env(sim_seg_of(i));
        }

        cfg.tl_ops          = sim_ops != NULL ? sim_ops : rdp_tl_loopback_ops();
        cfg.tl_ctx          = rdp_tl_loopback_ctx(sim->lb, i);
        cfg.nuniverse       = P;
        cfg.me              = i;
        cfg.alg             = alg;
        cfg.early_max_msgs  = early_msgs;
        cfg.early_max_bytes = early_bytes;
        cfg.generic_only    = sim_generic;
        assert_int_equal(rdp_coll_engine_create(&cfg, &sim->eng[i]),
                         PMIX_SUCCESS);
    }
    if (sim_seg_of != NULL) {
        put_seg_env(test_seg);
    }
    sim->capops = 64;
    sim->ops    = calloc(sim->capops, sizeof(*sim->ops));
    assert_non_null(sim->ops);
}

static void sim_destroy(sim_t *sim)
{
    for (uint32_t i = 0; i < sim->P; i++) {
        rdp_coll_engine_destroy(sim->eng[i]);
    }
    /* every kept descriptor was released by its engine */
    assert_int_equal(rdp_tl_loopback_kept(sim->lb), 0);
    rdp_tl_loopback_destroy(sim->lb);
    for (size_t i = 0; i < sim->nops; i++) {
        free(sim->ops[i].parts);
    }
    free(sim->ops);
    free(sim->eng);
}

/* When set, op_done also hands every result to this (tests that look at
 * where the blocks are). */
static void (*result_hook)(const op_t *op, const rdp_coll_result_t *res);

static void op_done(const rdp_coll_result_t *res, void *arg)
{
    op_t *op = arg;

    if (result_hook != NULL) {
        result_hook(op, res);
    }

    if (op->called) {
        fail_msg("engine %u op %llu: callback ran twice", op->me,
                 (unsigned long long)op->opid);
    }
    op->called      = 1;
    op->status      = res->status;
    op->failed_peer = res->failed_peer;
    op->nsteps      = res->nsteps;
    op->msgs_sent   = res->msgs_sent;
    op->alg         = res->alg;
    op->data_ok     = 1;
    op->sim->ncalled++;
    if (res->status != PMIX_SUCCESS || op->kind != RDP_COLL_ALLGATHER) {
        op->data_ok = res->blocks == NULL && res->nblocks == 0;
        return;
    }
    if (res->nblocks != op->nparts) {
        op->data_ok = 0;
        return;
    }
    for (uint32_t i = 0; i < op->nparts; i++) {
        const rdp_coll_block_t *b = &res->blocks[i];
        uint32_t u                = op->parts[i];
        size_t len                = block_len(op->pol, u, op->opid);
        const uint8_t *d          = b->data;

        if (b->origin != u || b->len != len || (len > 0 && d == NULL)) {
            op->data_ok = 0;
            return;
        }
        /* a block handed over is the result's own, never a copy */
        if (u == op->me && op->handed != NULL && d != op->handed) {
            op->data_ok = 0;
            return;
        }
        for (size_t j = 0; j < len; j++) {
            if (d[j] != block_byte(u, op->opid, j)) {
                op->data_ok = 0;
                return;
            }
        }
    }
}

/* Start (kind, opid) over @a parts on engine @a me; returns the op. */
static op_t *sim_start_ex(sim_t *sim, uint32_t me, enum rdp_coll_kind kind,
                          uint64_t opid, const uint32_t *parts, uint32_t nparts,
                          enum len_policy pol, enum rdp_coll_size_class sc,
                          double timeout)
{
    rdp_coll_args_t args = {0};
    size_t len           = block_len(pol, me, opid);
    /* odd operations hand their block over (own_buf), even ones lend it:
     * every scenario runs both ways */
    int hand_over        = (opid % 2) == 1 && kind == RDP_COLL_ALLGATHER;
    uint8_t *buf         = malloc(RDP_COLL_HEADROOM + (len > 0 ? len : 1));
    uint8_t *data        = buf + RDP_COLL_HEADROOM;
    op_t *op;

    assert_non_null(buf);
    if (sim->nops == sim->capops) {
        /* ops are referenced by pointer from engines: never realloc */
        fail_msg("op pool exhausted");
    }
    op         = &sim->ops[sim->nops++];
    op->sim    = sim;
    op->me     = me;
    op->kind   = kind;
    op->opid   = opid;
    op->pol    = pol;
    op->nparts = nparts;
    op->parts  = malloc(nparts * sizeof(*parts));
    assert_non_null(op->parts);
    memcpy(op->parts, parts, nparts * sizeof(*parts));
    fill_block(data, me, opid, len);
    args.kind       = kind;
    args.opid       = opid;
    args.parts      = parts;
    args.nparts     = nparts;
    args.data       = hand_over ? NULL : data;
    args.own_buf    = hand_over ? buf : NULL;
    args.len        = len;
    args.size_class = sc;
    args.timeout    = timeout;
    args.open_payload = sim_open;
    op->handed      = hand_over ? data : NULL;
    assert_int_equal(rdp_coll_start(sim->eng[me], &args, op_done, op),
                     PMIX_SUCCESS);
    if (!hand_over) {
        /* the engine copied the contribution */
        memset(data, 0xee, len);
        free(buf);
    }
    return op;
}

static op_t *sim_start(sim_t *sim, uint32_t me, enum rdp_coll_kind kind,
                       uint64_t opid, const uint32_t *parts, uint32_t nparts,
                       enum len_policy pol)
{
    return sim_start_ex(sim, me, kind, opid, parts, nparts, pol,
                        RDP_COLL_SIZE_SMALL, 0);
}

static void sim_reserve(sim_t *sim, size_t nops)
{
    assert_int_equal(sim->nops, 0);
    free(sim->ops);
    sim->capops = nops;
    sim->ops    = calloc(nops, sizeof(*sim->ops));
    assert_non_null(sim->ops);
}

/* Deliver everything and run callbacks until nothing moves. */
static void sim_run(sim_t *sim)
{
    int moved;

    do {
        moved = 0;
        while (rdp_tl_loopback_progress(sim->lb)) {
            moved = 1;
        }
        for (uint32_t i = 0; i < sim->P; i++) {
            if (rdp_coll_engine_progress(sim->eng[i]) > 0) {
                moved = 1;
            }
        }
    } while (moved);
}

/* Deliver at most @a n events. */
static void sim_step(sim_t *sim, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!rdp_tl_loopback_progress(sim->lb)) {
            break;
        }
    }
}

static uint32_t *iota(uint32_t n)
{
    uint32_t *p = malloc((n > 0 ? n : 1) * sizeof(*p));

    assert_non_null(p);
    for (uint32_t i = 0; i < n; i++) {
        p[i] = i;
    }
    return p;
}

static uint32_t ceil_log2(uint32_t n)
{
    uint32_t k = 0;

    while (((uint64_t)1 << k) < n) {
        k++;
    }
    return k;
}

/* One allgather (or barrier) @a opid over the whole universe; checks
 * results, step counts and message counts. */
static void run_full_op(uint32_t P, enum rdp_coll_alg alg,
                        enum rdp_coll_kind kind, enum len_policy pol,
                        uint64_t opid, uint64_t seed, uint32_t holds)
{
    sim_t sim;
    uint32_t *parts = iota(P);
    uint32_t *order = iota(P);
    uint32_t expect_steps;

    sim_create(&sim, P, seed, alg, 0, 0);
    sim_reserve(&sim, P);
    rdp_tl_loopback_set_delays(sim.lb, holds);
    /* start order shuffled: early arrivals for late starters */
    for (uint32_t i = P; i-- > 1;) {
        uint32_t j   = (uint32_t)(mix(seed + i) % (i + 1));
        uint32_t tmp = order[i];
        order[i]     = order[j];
        order[j]     = tmp;
    }
    for (uint32_t i = 0; i < P; i++) {
        sim_start(&sim, order[i], kind, opid, parts, P, pol);
        if (i % 3 == 0) {
            sim_step(&sim, P / 2);
        }
    }
    sim_run(&sim);
    assert_int_equal(sim.ncalled, P);
    if (kind == RDP_COLL_BARRIER) {
        alg = RDP_COLL_ALG_DISSEM;
    }
    expect_steps = rdp_sched_nsteps(alg, P);
    for (uint32_t i = 0; i < P; i++) {
        op_t *op = &sim.ops[i];

        if (!op->called || op->status != PMIX_SUCCESS || !op->data_ok) {
            fail_msg("P %u %s seed %llu: engine %u called %d status %d "
                     "data %d",
                     P, rdp_coll_alg_name(alg), (unsigned long long)seed,
                     op->me, op->called, op->status, op->data_ok);
        }
        assert_int_equal(op->alg, alg);
        assert_int_equal(op->nsteps, expect_steps);
        if (alg == RDP_COLL_ALG_RING) {
            /* a message per step, or per piece of a segmented block */
            uint64_t msgs = 0;

            for (uint32_t s = 0; s + 1 < P; s++) {
                uint32_t u = (op->me + P - s) % P;

                msgs += ring_msgs_for(block_len(pol, u, op->opid), seg_of(u));
            }
            assert_int_equal(op->msgs_sent, msgs);
            assert_int_equal(rdp_tl_loopback_sent(sim.lb, op->me), msgs);
        } else if (alg != RDP_COLL_ALG_RD || (P & (P - 1)) == 0) {
            /* one message per step, exactly */
            assert_int_equal(op->msgs_sent, expect_steps);
            assert_int_equal(rdp_tl_loopback_sent(sim.lb, op->me),
                             expect_steps);
        }
    }
    if (alg == RDP_COLL_ALG_BRUCK || alg == RDP_COLL_ALG_DISSEM
        || (alg == RDP_COLL_ALG_RD && (P & (P - 1)) == 0)) {
        assert_int_equal(expect_steps, ceil_log2(P));
    } else if (alg == RDP_COLL_ALG_RING) {
        assert_int_equal(expect_steps, P - 1);
    }
    for (uint32_t i = 0; i < P; i++) {
        rdp_coll_engine_stats_t st;

        rdp_coll_engine_get_stats(sim.eng[i], &st);
        assert_int_equal(st.early_msgs, 0);
        assert_int_equal(st.dropped, 0);
        assert_int_equal(rdp_coll_engine_active(sim.eng[i]), 0);
    }
    sim_destroy(&sim);
    free(order);
    free(parts);
}

static void run_full(uint32_t P, enum rdp_coll_alg alg, enum rdp_coll_kind kind,
                     enum len_policy pol, uint64_t seed, uint32_t holds)
{
    run_full_op(P, alg, kind, pol, 42, seed, holds);
}

static const enum rdp_coll_alg allgathers[] = {
    RDP_COLL_ALG_RD, RDP_COLL_ALG_BRUCK, RDP_COLL_ALG_RING};

/* ---- tests ---- */

static void every_algorithm_completes_for_every_p_up_to_64(void **state)
{
    for (uint32_t P = 1; P <= 64; P++) {
        for (size_t a = 0; a < 3; a++) {
            run_full(P, allgathers[a], RDP_COLL_ALLGATHER, LEN_SMALL,
                     base_seed + P * 3 + a, 0);
        }
        run_full(P, RDP_COLL_ALG_AUTO, RDP_COLL_BARRIER, LEN_SMALL,
                 base_seed + P, 0);
    }
}

static void log_step_algorithms_scale_to_4096(void **state)
{
    static const uint32_t sizes[] = {127, 128, 129, 255,  256,  257,
                                     511, 512, 513, 1023, 1024, 1025};
    uint64_t rnd                  = mix(base_seed);

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        run_full(sizes[i], RDP_COLL_ALG_BRUCK, RDP_COLL_ALLGATHER, LEN_TINY,
                 base_seed + i, 0);
        run_full(sizes[i], RDP_COLL_ALG_RD, RDP_COLL_ALLGATHER, LEN_TINY,
                 base_seed + i, 0);
    }
    for (int i = 0; i < 2; i++) {
        uint32_t P = 65 + (uint32_t)((rnd = mix(rnd)) % 1500);
        printf("# random P %u\n", P);
        run_full(P, RDP_COLL_ALG_BRUCK, RDP_COLL_ALLGATHER, LEN_TINY,
                 base_seed + P, 0);
        run_full(P, RDP_COLL_ALG_RD, RDP_COLL_ALLGATHER, LEN_TINY,
                 base_seed + P, 0);
    }
    run_full(2048, RDP_COLL_ALG_RD, RDP_COLL_ALLGATHER, LEN_TINY, base_seed, 0);
    run_full(2047, RDP_COLL_ALG_BRUCK, RDP_COLL_ALLGATHER, LEN_TINY, base_seed,
             0);
    run_full(4096, RDP_COLL_ALG_BRUCK, RDP_COLL_ALLGATHER, LEN_TINY, base_seed,
             0);
    run_full(4096, RDP_COLL_ALG_RD, RDP_COLL_ALLGATHER, LEN_TINY, base_seed, 0);
}

static void barrier_and_ring_scale(void **state)
{
    static const uint32_t bsizes[] = {255,  256,  257,  1023, 1024,
                                      1025, 2047, 2048, 4095, 4096};
    static const uint32_t rsizes[] = {127, 128, 129, 255, 256, 257};

    for (size_t i = 0; i < sizeof(bsizes) / sizeof(bsizes[0]); i++) {
        run_full(bsizes[i], RDP_COLL_ALG_AUTO, RDP_COLL_BARRIER, LEN_TINY,
                 base_seed + i, 0);
    }
    for (size_t i = 0; i < sizeof(rsizes) / sizeof(rsizes[0]); i++) {
        run_full(rsizes[i], RDP_COLL_ALG_RING, RDP_COLL_ALLGATHER, LEN_TINY,
                 base_seed + i, 0);
    }
}

static void random_delivery_orders_with_many_seeds(void **state)
{
    static const uint32_t sizes[] = {2, 3, 5, 8, 13, 16, 24, 33};

    for (uint64_t s = 0; s < 12; s++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            for (size_t a = 0; a < 3; a++) {
                run_full(sizes[i], allgathers[a], RDP_COLL_ALLGATHER, LEN_SMALL,
                         mix(base_seed + s * 100 + i), 4);
            }
            run_full(sizes[i], RDP_COLL_ALG_AUTO, RDP_COLL_BARRIER, LEN_SMALL,
                     mix(base_seed + s * 100 + i), 4);
        }
    }
}

static void blocks_of_zero_bytes_and_one_mib_travel_intact(void **state)
{
    for (size_t a = 0; a < 3; a++) {
        run_full(6, allgathers[a], RDP_COLL_ALLGATHER, LEN_BIG, base_seed + a,
                 2);
        run_full(8, allgathers[a], RDP_COLL_ALLGATHER, LEN_BIG, base_seed + a,
                 2);
    }
}

/* Sends seen by counting_send: payload sizes and gather counts. */
static struct {
    size_t sends;
    size_t gathered;       /* sends with more than one piece */
    size_t small_gathered; /* ... of at most 4 KiB in all */
} seen;

static pmix_status_t counting_send(void *ctx, uint32_t peer, const void *hdr,
                                   size_t hdr_len, const rdp_iov_t *iov,
                                   size_t iovcnt, rdp_tl_done_cb_t cb,
                                   void *cb_arg)
{
    size_t total = 0;

    for (size_t i = 0; i < iovcnt; i++) {
        total += iov[i].len;
    }
    seen.sends++;
    if (iovcnt > 1) {
        seen.gathered++;
        if (total <= 4096) {
            seen.small_gathered++;
        }
    }
    return rdp_tl_loopback_ops()->send(ctx, peer, hdr, hdr_len, iov, iovcnt, cb,
                                       cb_arg);
}

/* Small allgathers send one contiguous piece per message (a gathered send
 * takes a slow first path in UCP); large blocks are still sent in place. */
static void small_payloads_are_sent_contiguous(void **state)
{
    static rdp_tl_ops_t ops;
    const enum rdp_coll_alg algs[] = {RDP_COLL_ALG_BRUCK, RDP_COLL_ALG_RD};
    (void)state;

    ops      = *rdp_tl_loopback_ops();
    ops.send = counting_send;
    sim_ops  = &ops;
    for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
        for (uint32_t P = 3; P <= 16; P++) {
            memset(&seen, 0, sizeof(seen));
            run_full(P, algs[a], RDP_COLL_ALLGATHER, LEN_SMALL, base_seed + P,
                     0);
            assert_true(seen.sends > 0);
            assert_int_equal(seen.small_gathered, 0);
        }
    }
    /* 1 MiB blocks: pieces are pointed at, not copied */
    memset(&seen, 0, sizeof(seen));
    run_full(8, RDP_COLL_ALG_BRUCK, RDP_COLL_ALLGATHER, LEN_BIG, base_seed, 0);
    assert_true(seen.gathered > 0);
    sim_ops = NULL;
}

static void every_payload_delivery_mode_works(void **state)
{
    static const enum rdp_tl_loopback_mode modes[] = {
        RDP_TL_LOOPBACK_BORROWED, RDP_TL_LOOPBACK_KEEPABLE,
        RDP_TL_LOOPBACK_RNDV, RDP_TL_LOOPBACK_MIXED};

    /* inline: sends and fetches complete inside the call */
    for (int inl = 0; inl < 2; inl++) {
        for (size_t m = 0; m < 4; m++) {
            for (size_t a = 0; a < 3; a++) {
                sim_t sim;
                uint32_t *parts = iota(11);

                sim_create(&sim, 11, base_seed + m, allgathers[a], 0, 0);
                sim_reserve(&sim, 11);
                rdp_tl_loopback_set_mode(sim.lb, modes[m]);
                rdp_tl_loopback_set_inline(sim.lb, inl);
                for (uint32_t i = 0; i < 11; i++) {
                    sim_start(&sim, 10 - i, RDP_COLL_ALLGATHER, 7, parts, 11,
                              LEN_SMALL);
                    sim_step(&sim, 3);
                }
                sim_run(&sim);
                for (uint32_t i = 0; i < 11; i++) {
                    assert_true(sim.ops[i].called);
                    assert_int_equal(sim.ops[i].status, PMIX_SUCCESS);
                    assert_true(sim.ops[i].data_ok);
                }
                sim_destroy(&sim);
                free(parts);
            }
        }
    }
}

/* Several collectives over overlapping sets, started in different orders
 * on different engines, their messages interleaved; @a alg for the
 * allgathers, whose blocks follow @a pol. */
static void run_overlapping(enum rdp_coll_alg alg, enum len_policy pol)
{
    enum {
        P     = 16,
        NSETS = 6
    };
    uint32_t sets[NSETS][P];
    uint32_t nset[NSETS] = {0};
    enum rdp_coll_kind kinds[NSETS];
    uint64_t opids[NSETS];

    for (uint64_t seed = 0; seed < 8; seed++) {
        sim_t sim;
        size_t expected = 0;

        memset(nset, 0, sizeof(nset));
        for (uint32_t u = 0; u < P; u++) {
            sets[0][nset[0]++] = u; /* everyone */
            if (u % 2 == 0) {
                sets[1][nset[1]++] = u; /* evens */
            }
            if (u < 10) {
                sets[2][nset[2]++] = u; /* 0..9 */
            }
            sets[3][nset[3]++] = u; /* everyone, other id */
            if (u % 3 != 1) {
                sets[4][nset[4]++] = u; /* barrier */
            }
            if (u >= 5) {
                sets[5][nset[5]++] = u; /* 5..15 */
            }
        }
        for (int s = 0; s < NSETS; s++) {
            kinds[s] = s == 4 ? RDP_COLL_BARRIER : RDP_COLL_ALLGATHER;
            opids[s] = s == 3 ? 43 : 42; /* same sig, different opid */
            expected += nset[s];
        }
        sim_create(&sim, P, mix(base_seed + seed), alg, 0, 0);
        sim_reserve(&sim, expected);
        rdp_tl_loopback_set_delays(sim.lb, 3);
        for (uint32_t u = 0; u < P; u++) {
            for (int k = 0; k < NSETS; k++) {
                int s = (int)((u + k + seed) % NSETS);
                if (u % 2 == 1) {
                    s = NSETS - 1 - s; /* odd engines go the other way */
                }
                for (uint32_t i = 0; i < nset[s]; i++) {
                    if (sets[s][i] == u) {
                        sim_start(&sim, u, kinds[s], opids[s], sets[s], nset[s],
                                  pol);
                    }
                }
                sim_step(&sim, 5);
            }
        }
        sim_run(&sim);
        assert_int_equal(sim.ncalled, expected);
        for (size_t i = 0; i < sim.nops; i++) {
            if (sim.ops[i].status != PMIX_SUCCESS || !sim.ops[i].data_ok) {
                fail_msg("seed %llu: engine %u op %llu status %d data %d",
                         (unsigned long long)seed, sim.ops[i].me,
                         (unsigned long long)sim.ops[i].opid, sim.ops[i].status,
                         sim.ops[i].data_ok);
            }
        }
        sim_destroy(&sim);
    }
}

static void concurrent_collectives_on_overlapping_sets(void **state)
{
    run_overlapping(RDP_COLL_ALG_AUTO, LEN_SMALL);
}

/* Allgather @a all_opid over 24 servers and @a sub_opid over all but one,
 * with blocks per @a pol; that one dies after @a nev events.  Survivors of
 * the first fail with PMIX_ERR_UNREACH naming it (or completed before
 * the death, with the right data); the second completes. */
static void run_dead_peer(enum rdp_coll_alg alg, enum len_policy pol,
                          uint64_t all_opid, uint64_t sub_opid, uint64_t seed,
                          size_t nev)
{
    enum {
        P    = 24,
        DEAD = 5
    };
    uint32_t *parts = iota(P);
    uint32_t sub[P];
    uint32_t nsub = 0;
    sim_t sim;

    for (uint32_t u = 0; u < P; u++) {
        if (u != DEAD) {
            sub[nsub++] = u;
        }
    }
    sim_create(&sim, P, seed, alg, 0, 0);
    sim_reserve(&sim, 2 * P);
    rdp_tl_loopback_set_delays(sim.lb, 2);
    for (uint32_t u = 0; u < P; u++) {
        sim_start(&sim, u, RDP_COLL_ALLGATHER, all_opid, parts, P, pol);
        if (u != DEAD) {
            /* a concurrent collective without the dead peer */
            sim_start(&sim, u, RDP_COLL_ALLGATHER, sub_opid, sub, nsub, pol);
        }
    }
    sim_step(&sim, nev);
    rdp_tl_loopback_kill(sim.lb, DEAD);
    sim_run(&sim);
    for (size_t i = 0; i < sim.nops; i++) {
        op_t *op = &sim.ops[i];

        if (op->me == DEAD) {
            continue;
        }
        if (!op->called) {
            fail_msg("seed %llu %s: engine %u op %llu hangs",
                     (unsigned long long)seed, rdp_coll_alg_name(alg), op->me,
                     (unsigned long long)op->opid);
        }
        if (op->opid == sub_opid) {
            assert_int_equal(op->status, PMIX_SUCCESS);
            assert_true(op->data_ok);
        } else if (op->status != PMIX_SUCCESS) {
            /* success only if it finished before the death */
            assert_int_equal(op->status, PMIX_ERR_UNREACH);
            assert_int_equal(op->failed_peer, DEAD);
            assert_true(op->data_ok);
        }
    }
    sim_destroy(&sim);
    free(parts);
}

static void dead_peer_fails_the_collective_everywhere(void **state)
{
    for (uint64_t seed = 0; seed < 10; seed++) {
        for (size_t a = 0; a < 3; a++) {
            run_dead_peer(allgathers[a], LEN_SMALL, 1, 2,
                          mix(base_seed + seed * 7 + a),
                          (size_t)(mix(seed) % (24 * 3)));
        }
    }
}

static void peer_dead_before_start_fails_every_survivor(void **state)
{
    enum {
        P    = 9,
        DEAD = 4
    };
    uint32_t *parts = iota(P);
    sim_t sim;

    sim_create(&sim, P, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    sim_reserve(&sim, P);
    /* half start before the death is known, half after */
    for (uint32_t u = 0; u < P / 2; u++) {
        if (u != DEAD) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, 9, parts, P, LEN_SMALL);
        }
    }
    rdp_tl_loopback_kill(sim.lb, DEAD);
    sim_run(&sim);
    for (uint32_t u = P / 2; u < P; u++) {
        if (u != DEAD) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, 9, parts, P, LEN_SMALL);
        }
    }
    sim_run(&sim);
    assert_int_equal(sim.ncalled, P - 1);
    for (size_t i = 0; i < sim.nops; i++) {
        assert_int_equal(sim.ops[i].status, PMIX_ERR_UNREACH);
        assert_int_equal(sim.ops[i].failed_peer, DEAD);
    }
    sim_destroy(&sim);
    free(parts);
}

/* Run @a sim until every collective was called back (loop-less timeouts
 * need real time to pass); each must have timed out, but engine
 * @a may_complete may instead have completed with the right data. */
static void wait_for_timeouts(sim_t *sim, uint32_t may_complete)
{
    double t0 = rdp_time_now();

    while (sim->ncalled < sim->nops && rdp_time_now() - t0 < 10) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        sim_run(sim);
    }
    assert_int_equal(sim->ncalled, sim->nops);
    for (size_t i = 0; i < sim->nops; i++) {
        if (sim->ops[i].me == may_complete
            && sim->ops[i].status == PMIX_SUCCESS) {
            assert_true(sim->ops[i].data_ok);
            continue;
        }
        assert_int_equal(sim->ops[i].status, PMIX_ERR_TIMEOUT);
    }
}

/* Trust follows the fabric: an isolated job's collectives send their
 * payloads open (tl send_open), and every algorithm, ring pieces
 * included, still delivers every block intact, with late starters. */
static void open_payloads_travel_intact_with_every_algorithm(void **state)
{
    static const uint32_t sizes[] = {2, 3, 5, 8};

    (void)state;
    for (size_t a = 0; a < sizeof(allgathers) / sizeof(allgathers[0]); a++) {
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            uint32_t P      = sizes[k];
            uint32_t *parts = iota(P);
            sim_t sim;

            sim_open = 1;
            sim_create(&sim, P, base_seed + P, allgathers[a], 0, 0);
            sim_reserve(&sim, P);
            for (uint32_t u = P; u-- > 0;) {
                sim_start(&sim, u, RDP_COLL_ALLGATHER, 7, parts, P, LEN_SEG);
                sim_step(&sim, 2); /* some arrive before their collective */
            }
            sim_open = 0;
            sim_run(&sim);
            assert_int_equal(sim.ncalled, P);
            for (uint32_t i = 0; i < P; i++) {
                const op_t *op = &sim.ops[i];
                rdp_coll_engine_stats_t st;

                assert_int_equal(op->status, PMIX_SUCCESS);
                assert_true(op->data_ok);
                rdp_coll_engine_get_stats(sim.eng[op->me], &st);
                assert_int_equal(st.open_sent, op->msgs_sent);
                assert_int_equal(st.open_refused, 0);
                assert_int_equal(st.dropped, 0);
            }
            sim_destroy(&sim);
            free(parts);
        }
    }
}

/* A collective that authenticates its payloads (an unisolated job) never
 * takes a payload that came open: a forger on the wire, or a server that
 * decided otherwise, can only make it time out, never feed it data.
 * Checked for messages that find their collective running and for those
 * that arrive before it starts (the early queue). */
static void open_payload_forged_on_an_unisolated_job_is_dropped(void **state)
{
    enum { P = 4 };
    uint32_t *parts = iota(P);
    sim_t sim;

    (void)state;
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 0, 0);
    sim_reserve(&sim, P);
    rdp_tl_loopback_set_all_open(sim.lb, 1);
    sim_start_ex(&sim, 0, RDP_COLL_ALLGATHER, 9, parts, P, LEN_SMALL,
                 RDP_COLL_SIZE_SMALL, 0.05);
    sim_run(&sim); /* engine 0's first messages wait in early queues */
    for (uint32_t u = 1; u < P; u++) {
        sim_start_ex(&sim, u, RDP_COLL_ALLGATHER, 9, parts, P, LEN_SMALL,
                     RDP_COLL_SIZE_SMALL, 0.05);
    }
    sim_run(&sim);
    assert_int_equal(sim.ncalled, 0);
    wait_for_timeouts(&sim, UINT32_MAX);
    for (uint32_t u = 0; u < P; u++) {
        rdp_coll_engine_stats_t st;

        rdp_coll_engine_get_stats(sim.eng[u], &st);
        assert_true(st.open_refused > 0);
        assert_int_equal(st.open_sent, 0);
    }
    sim_destroy(&sim);
    free(parts);
}

static void silent_peer_times_out_without_a_loop(void **state)
{
    enum {
        P      = 8,
        SILENT = 3
    };
    uint32_t *parts = iota(P);
    sim_t sim;

    sim_create(&sim, P, base_seed, RDP_COLL_ALG_BRUCK, 0, 0);
    sim_reserve(&sim, P);
    rdp_tl_loopback_drop(sim.lb, SILENT, UINT32_MAX);
    for (uint32_t u = 0; u < P; u++) {
        sim_start_ex(&sim, u, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SMALL,
                     RDP_COLL_SIZE_SMALL, 0.05);
    }
    sim_run(&sim);
    /* the silent engine itself may get everything it needs */
    assert_true(sim.ncalled <= 1);
    wait_for_timeouts(&sim, SILENT);
    sim_destroy(&sim);
    free(parts);
}

/* The same, with a real loop thread: rdp_timer drives the timeout and the
 * deferred callbacks, and nothing runs inside start or an upcall. */
typedef struct looped {
    rdp_loop_t *loop;
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t *eng[4];
    uint32_t parts[4];
    int called[4];
    pmix_status_t status[4];
    int ncalled;
    int bad_thread;
    rdp_wait_t wait;
} looped_t;

typedef struct looped_op {
    looped_t *l;
    int idx;
} looped_op_t;

static looped_op_t looped_ops[4];

static void looped_pump(void *arg)
{
    looped_t *l = arg;

    while (rdp_tl_loopback_progress(l->lb)) {
    }
}

static void looped_done(const rdp_coll_result_t *res, void *arg)
{
    looped_op_t *op = arg;
    looped_t *l     = op->l;

    if (!rdp_loop_on_loop(l->loop)) {
        l->bad_thread = 1;
    }
    l->called[op->idx]++;
    l->status[op->idx] = res->status;
    /* the aborts this failure sent need the loopback driven */
    if (rdp_loop_post(l->loop, looped_pump, l) != PMIX_SUCCESS) {
        l->bad_thread = 1;
    }
    if (++l->ncalled == 4) {
        rdp_wait_signal(&l->wait, PMIX_SUCCESS);
    }
}

/* On @a loop's thread: @a n engines over @a lb, parts[i] = i.  Returns 0,
 * or -1 if an engine could not be created. */
static int create_looped_engines(rdp_loop_t *loop, rdp_tl_loopback_t *lb,
                                 uint32_t n, rdp_coll_engine_t **eng,
                                 uint32_t *parts)
{
    int rc = 0;

    for (uint32_t i = 0; i < n; i++) {
        rdp_coll_engine_config_t cfg = {0};

        cfg.tl_ops    = rdp_tl_loopback_ops();
        cfg.tl_ctx    = rdp_tl_loopback_ctx(lb, i);
        cfg.nuniverse = n;
        cfg.me        = i;
        cfg.loop      = loop;
        if (rdp_coll_engine_create(&cfg, &eng[i]) != PMIX_SUCCESS) {
            rc = -1;
        }
        parts[i] = i;
    }
    return rc;
}

/* Start a barrier over @a parts on @a eng. */
static pmix_status_t start_barrier(rdp_coll_engine_t *eng,
                                   const uint32_t *parts, uint32_t nparts,
                                   uint64_t opid, double timeout,
                                   rdp_coll_cb_t cb, void *cbarg)
{
    rdp_coll_args_t args = {0};

    args.kind    = RDP_COLL_BARRIER;
    args.opid    = opid;
    args.parts   = parts;
    args.nparts  = nparts;
    args.timeout = timeout;
    return rdp_coll_start(eng, &args, cb, cbarg);
}

static void looped_setup(void *arg)
{
    looped_t *l = arg;

    if (create_looped_engines(l->loop, l->lb, 4, l->eng, l->parts) != 0) {
        l->bad_thread = 1;
    }
    for (int i = 0; i < 4; i++) {
        looped_ops[i].l   = l;
        looped_ops[i].idx = i;
        if (start_barrier(l->eng[i], l->parts, 4, 1, i == 0 ? 0.05 : 30,
                          looped_done, &looped_ops[i])
            != PMIX_SUCCESS) {
            l->bad_thread = 1;
        }
    }
    looped_pump(l);
    if (l->ncalled != 0) {
        l->bad_thread = 1;
    }
}

static void looped_teardown(void *arg)
{
    looped_t *l = arg;

    looped_pump(l);
    for (int i = 0; i < 4; i++) {
        rdp_coll_engine_destroy(l->eng[i]);
    }
    rdp_wait_signal(&l->wait, PMIX_SUCCESS);
}

static void timeout_fires_from_a_loop_timer(void **state)
{
    looped_t *l = calloc(1, sizeof(*l));
    double t0;

    assert_non_null(l);
    assert_int_equal(rdp_loop_create(&l->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_tl_loopback_create(4, base_seed, &l->lb),
                     PMIX_SUCCESS);
    /* engine 2 is silent, so nobody completes; engine 0 times out after
     * 50 ms and its abort fails the others long before their 30 s */
    rdp_tl_loopback_drop(l->lb, 2, UINT32_MAX);
    rdp_wait_init(&l->wait);
    assert_int_equal(rdp_loop_start_thread(l->loop), PMIX_SUCCESS);
    t0 = rdp_time_now();
    assert_int_equal(rdp_loop_post(l->loop, looped_setup, l), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait_for(&l->wait, 10), PMIX_SUCCESS);
    assert_true(rdp_time_now() - t0 < 10);
    rdp_wait_cleanup(&l->wait);
    rdp_wait_init(&l->wait);
    assert_int_equal(rdp_loop_post(l->loop, looped_teardown, l), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&l->wait), PMIX_SUCCESS);
    rdp_loop_destroy(l->loop);
    rdp_wait_cleanup(&l->wait);
    assert_false(l->bad_thread);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(l->called[i], 1);
        if (i == 2 && l->status[i] == PMIX_SUCCESS) {
            continue; /* the silent one may hear from everyone in time */
        }
        assert_int_equal(l->status[i], PMIX_ERR_TIMEOUT);
    }
    assert_int_equal(rdp_tl_loopback_kept(l->lb), 0);
    rdp_tl_loopback_destroy(l->lb);
    free(l);
}

/* Two engines with a loop over a loopback that marks its deliveries
 * pass_end and then calls `progressed` (as the UCX transport does): the
 * barrier completes from `progressed` without a deferred callback armed;
 * without the mark, each engine arms one.  A collective started from a
 * callback that ends inside its start arms none either. */
typedef struct passed {
    rdp_loop_t *loop;
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t *eng[2];
    uint32_t parts[2];
    int ncalled;
    int bad;
    rdp_coll_engine_stats_t st[2][2]; /* [pass_end off/on][engine] */
    rdp_wait_t wait;
} passed_t;

static void passed_done(const rdp_coll_result_t *res, void *arg)
{
    passed_t *p = arg;

    if (res->status != PMIX_SUCCESS) {
        p->bad = 1;
    }
    p->ncalled++;
}

/* Engine 0's callback starts a collective of its own alone, which ends
 * inside that start: the callbacks' loop runs it next, unarmed. */
static void passed_done_start(const rdp_coll_result_t *res, void *arg)
{
    passed_t *p = arg;

    passed_done(res, arg);
    if (start_barrier(p->eng[0], p->parts, 1, 100 + res->opid, 30,
                      passed_done, p)
        != PMIX_SUCCESS) {
        p->bad = 1;
    }
}

static void passed_job(void *arg)
{
    passed_t *p = arg;

    if (create_looped_engines(p->loop, p->lb, 2, p->eng, p->parts) != 0) {
        p->bad = 1;
    }
    for (int on = 0; on < 2; on++) {
        rdp_tl_loopback_set_pass_end(p->lb, on);
        for (int i = 0; i < 2; i++) {
            if (start_barrier(p->eng[i], p->parts, 2, (uint64_t)on + 1, 30,
                              i == 0 ? passed_done_start : passed_done, p)
                != PMIX_SUCCESS) {
                p->bad = 1;
            }
        }
        while (rdp_tl_loopback_progress(p->lb)) {
        }
        for (int i = 0; i < 2; i++) {
            (void)rdp_coll_engine_progress(p->eng[i]); /* what is deferred */
            rdp_coll_engine_get_stats(p->eng[i], &p->st[on][i]);
        }
    }
    for (int i = 0; i < 2; i++) {
        rdp_coll_engine_destroy(p->eng[i]);
    }
    rdp_wait_signal(&p->wait, PMIX_SUCCESS);
}

static void completions_in_a_pass_arm_no_deferred_callback(void **state)
{
    passed_t *p = calloc(1, sizeof(*p));

    (void)state;
    assert_non_null(p);
    assert_int_equal(rdp_loop_create(&p->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_tl_loopback_create(2, base_seed, &p->lb),
                     PMIX_SUCCESS);
    rdp_wait_init(&p->wait);
    assert_int_equal(rdp_loop_start_thread(p->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_post(p->loop, passed_job, p), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&p->wait), PMIX_SUCCESS);
    rdp_loop_destroy(p->loop);
    rdp_wait_cleanup(&p->wait);
    rdp_tl_loopback_destroy(p->lb);
    assert_false(p->bad);
    assert_int_equal(p->ncalled, 6);
    for (int i = 0; i < 2; i++) {
        /* engine 0 also ran the collective its callback started, each
         * time without a deferred callback of its own */
        uint64_t extra = i == 0 ? 1 : 0;

        /* without the mark: one deferred callback per collective */
        assert_int_equal(p->st[0][i].completed, 1 + extra);
        assert_int_equal(p->st[0][i].defers_armed, 1);
        /* with it: none, and the callbacks ran from `progressed` */
        assert_int_equal(p->st[1][i].completed, 2 + 2 * extra);
        assert_int_equal(p->st[1][i].defers_armed, 1);
        assert_int_equal(p->st[1][i].completed_at_pass_end, 1 + extra);
    }
    /* every start (timeout 30 s) read the clock once, except the one that
     * engine 0's callback made from `progressed`: it took the pass's time
     * (tl.h pass_time) */
    assert_int_equal(p->st[0][0].clock_reads, 2);
    assert_int_equal(p->st[1][0].clock_reads - p->st[0][0].clock_reads, 1);
    assert_int_equal(p->st[1][1].clock_reads, 2);
    free(p);
}

/* One engine (of two; the other never joins) runs three barriers with
 * timeouts of 30 s, 50 ms and 100 ms, started in that order: the later,
 * shorter timeouts still fire on time, one after the other (the engine
 * keeps one timer for all its collectives and re-arms it). */
typedef struct staggered {
    rdp_loop_t *loop;
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t *eng[2];
    uint32_t parts[2];
    int called[3];
    pmix_status_t status[3];
    int ncalled;
    int bad;
    rdp_wait_t wait;
} staggered_t;

typedef struct staggered_op {
    staggered_t *st;
    int idx;
} staggered_op_t;

static staggered_op_t staggered_ops[3];

static void staggered_done(const rdp_coll_result_t *res, void *arg)
{
    staggered_op_t *op = arg;
    staggered_t *st    = op->st;

    st->called[op->idx]++;
    st->status[op->idx] = res->status;
    if (++st->ncalled == 2) {
        rdp_wait_signal(&st->wait, PMIX_SUCCESS);
    }
}

static void staggered_setup(void *arg)
{
    static const double timeouts[3] = {30, 0.05, 0.1};
    staggered_t *st                 = arg;

    if (create_looped_engines(st->loop, st->lb, 2, st->eng, st->parts) != 0) {
        st->bad = 1;
    }
    for (int i = 0; i < 3; i++) {
        staggered_ops[i].st  = st;
        staggered_ops[i].idx = i;
        if (start_barrier(st->eng[0], st->parts, 2, (uint64_t)i + 1,
                          timeouts[i], staggered_done, &staggered_ops[i])
            != PMIX_SUCCESS) {
            st->bad = 1;
        }
    }
}

static void staggered_teardown(void *arg)
{
    staggered_t *st = arg;

    for (int i = 0; i < 2; i++) {
        rdp_coll_engine_destroy(st->eng[i]);
    }
    rdp_wait_signal(&st->wait, PMIX_SUCCESS);
}

static void later_shorter_timeouts_fire_first(void **state)
{
    staggered_t *st = calloc(1, sizeof(*st));

    assert_non_null(st);
    assert_int_equal(rdp_loop_create(&st->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_tl_loopback_create(2, base_seed, &st->lb),
                     PMIX_SUCCESS);
    rdp_wait_init(&st->wait);
    assert_int_equal(rdp_loop_start_thread(st->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_post(st->loop, staggered_setup, st),
                     PMIX_SUCCESS);
    /* well before the first barrier's 30 s */
    assert_int_equal(rdp_wait_wait_for(&st->wait, 10), PMIX_SUCCESS);
    rdp_wait_cleanup(&st->wait);
    rdp_wait_init(&st->wait);
    assert_int_equal(rdp_loop_post(st->loop, staggered_teardown, st),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&st->wait), PMIX_SUCCESS);
    rdp_loop_destroy(st->loop);
    rdp_wait_cleanup(&st->wait);
    assert_false(st->bad);
    assert_int_equal(st->called[0], 0);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(st->called[i], 1);
        assert_int_equal(st->status[i], PMIX_ERR_TIMEOUT);
    }
    rdp_tl_loopback_destroy(st->lb);
    free(st);
}

static void early_queue_overflow_fails_the_collective_cleanly(void **state)
{
    enum {
        P    = 5,
        NOPS = 6
    };
    uint32_t *parts = iota(P);
    sim_t sim;

    /* engine 0 may queue only 4 early messages: in a ring without rank 0,
     * rank 4 gets as far as sending its steps 0..3 to it */
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 4, 0);
    sim_reserve(&sim, P * NOPS);
    /* one at a time: the first fills the queue, the others overflow it */
    for (uint64_t op = 0; op < NOPS; op++) {
        for (uint32_t u = 1; u < P; u++) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, 100 + op, parts, P,
                      LEN_SMALL);
        }
        sim_run(&sim);
    }
    {
        rdp_coll_engine_stats_t st;
        rdp_coll_engine_get_stats(sim.eng[0], &st);
        assert_true(st.early_overflow > 0);
        assert_int_equal(st.early_msgs, 4);
        assert_int_equal(st.early_overflow, NOPS - 1);
    }
    for (uint64_t op = 0; op < NOPS; op++) {
        sim_start(&sim, 0, RDP_COLL_ALLGATHER, 100 + op, parts, P, LEN_SMALL);
    }
    sim_run(&sim);
    assert_int_equal(sim.ncalled, P * NOPS);
    {
        int failed = 0;
        int ok     = 0;

        for (uint64_t op = 0; op < NOPS; op++) {
            pmix_status_t st0 = PMIX_SUCCESS;
            for (size_t i = 0; i < sim.nops; i++) {
                if (sim.ops[i].opid == 100 + op && sim.ops[i].me == 0) {
                    st0 = sim.ops[i].status;
                }
            }
            /* every participant agrees: all succeed or all fail */
            for (size_t i = 0; i < sim.nops; i++) {
                if (sim.ops[i].opid != 100 + op) {
                    continue;
                }
                if (st0 == PMIX_SUCCESS) {
                    assert_int_equal(sim.ops[i].status, PMIX_SUCCESS);
                    assert_true(sim.ops[i].data_ok);
                } else {
                    assert_int_equal(sim.ops[i].status,
                                     PMIX_ERR_OUT_OF_RESOURCE);
                }
            }
            if (st0 == PMIX_SUCCESS) {
                ok++;
            } else {
                failed++;
            }
        }
        assert_int_equal(failed, NOPS - 1);
        assert_int_equal(ok, 1);
    }
    sim_destroy(&sim);
    free(parts);
}

static void early_queue_byte_bound_is_enforced(void **state)
{
    enum {
        P = 3
    };
    uint32_t *parts = iota(P);
    rdp_coll_engine_stats_t st;
    sim_t sim;

    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 0, 64);
    sim_reserve(&sim, P);
    for (uint32_t u = 1; u < P; u++) {
        sim_start(&sim, u, RDP_COLL_ALLGATHER, 1, parts, P, LEN_BIG);
    }
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_true(st.early_overflow > 0);
    assert_true(st.early_bytes <= 64);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, 1, parts, P, LEN_BIG);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, P);
    for (uint32_t i = 0; i < P; i++) {
        assert_int_equal(sim.ops[i].status, PMIX_ERR_OUT_OF_RESOURCE);
    }
    sim_destroy(&sim);
    free(parts);
}

static void encode(uint8_t *out, uint8_t type, uint8_t kind, uint8_t alg,
                   uint64_t sig, uint64_t opid, uint32_t nparts,
                   uint32_t sender, uint32_t step, uint32_t nblocks)
{
    rdp_coll_hdr_t h = {0};

    h.type    = type;
    h.kind    = kind;
    h.alg     = alg;
    h.sig     = sig;
    h.opid    = opid;
    h.nparts  = nparts;
    h.sender  = sender;
    h.step    = step;
    h.nblocks = nblocks;
    h.aux     = UINT32_MAX;
    rdp_coll_hdr_encode(&h, out);
}

static void put_block(uint8_t *p, uint32_t origin, uint64_t len)
{
    rdp_coll_put_u32(p, origin);
    rdp_coll_put_u64(p + 4, len);
}

/* Inject, from server 1 to server 0, a copy of the first step's message
 * of the recursive-doubling allgather @a opid over @a nparts servers (one
 * empty block of origin 1). */
static void inject_step0_copy(sim_t *sim, uint64_t sig, uint64_t opid,
                              uint32_t nparts)
{
    uint8_t hdr[RDP_COLL_HDR_LEN];
    uint8_t pay[12];

    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_RD, sig,
           opid, nparts, 1, 0, 1);
    put_block(pay, 1, 0);
    assert_int_equal(rdp_tl_loopback_inject(sim->lb, 1, 0, hdr, sizeof(hdr),
                                            pay, sizeof(pay)),
                     PMIX_SUCCESS);
}

/* Start allgather @a opid over every server on engines 1..P-1 (engine 0
 * started it before), run, and check that all of them completed with the
 * right data. */
static void start_others_and_check(sim_t *sim, uint64_t opid,
                                   const uint32_t *parts, enum len_policy pol)
{
    for (uint32_t u = 1; u < sim->P; u++) {
        sim_start(sim, u, RDP_COLL_ALLGATHER, opid, parts, sim->P, pol);
    }
    sim_run(sim);
    assert_int_equal(sim->ncalled, sim->P);
    for (uint32_t i = 0; i < sim->P; i++) {
        assert_int_equal(sim->ops[i].status, PMIX_SUCCESS);
        assert_true(sim->ops[i].data_ok);
    }
}

static void malformed_messages_are_dropped_without_harm(void **state)
{
    enum {
        P = 4
    };
    uint32_t *parts = iota(P);
    uint64_t sig    = rdp_coll_signature(parts, P);
    uint8_t hdr[RDP_COLL_HDR_LEN];
    uint8_t pay[64];
    rdp_coll_engine_stats_t st;
    size_t injected = 0;
    sim_t sim;

    /* Bruck on 4: at step 0 rank 0 receives block 1 from rank 1 */
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_BRUCK, 4, 0);
    sim_reserve(&sim, P);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, 77, parts, P, LEN_SMALL);

#define INJECT(_src, _hlen, _plen)                                           \
    do {                                                                     \
        assert_int_equal(                                                    \
            rdp_tl_loopback_inject(sim.lb, _src, 0, hdr, _hlen, pay, _plen), \
            PMIX_SUCCESS);                                                   \
        injected++;                                                          \
    } while (0)

    memset(pay, 0, sizeof(pay));
    /* bad magic */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 0, 1);
    hdr[0] ^= 0xff;
    INJECT(1, sizeof(hdr), 12);
    /* short header */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 0, 1);
    INJECT(1, 20, 12);
    /* header claims another sender than the transport saw */
    INJECT(2, sizeof(hdr), 12);
    /* bad version */
    hdr[4] = 99;
    INJECT(1, sizeof(hdr), 12);
    /* unknown type and kind */
    encode(hdr, 9, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig, 77, P, 1, 0, 1);
    INJECT(1, sizeof(hdr), 12);
    encode(hdr, RDP_COLL_MSG_DATA, 9, RDP_COLL_ALG_BRUCK, sig, 77, P, 1, 0, 1);
    INJECT(1, sizeof(hdr), 12);
    /* step beyond the schedule */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 7, 1);
    INJECT(1, sizeof(hdr), 12);
    /* nparts beyond the universe, sender out of range */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, 1000, 1, 0, 1);
    INJECT(1, sizeof(hdr), 12);
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1000, 0, 1);
    INJECT(1, sizeof(hdr), 12);
    /* truncated payload: says 1 block, has half a block header */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 0, 1);
    INJECT(1, sizeof(hdr), 6);
    /* block length running past the payload */
    put_block(pay, 1, 1000);
    INJECT(1, sizeof(hdr), 20);
    /* block length that would overflow */
    put_block(pay, 1, UINT64_MAX - 4);
    INJECT(1, sizeof(hdr), 20);
    /* wrong origin */
    put_block(pay, 2, 0);
    INJECT(1, sizeof(hdr), 12);
    /* trailing garbage after the block */
    put_block(pay, 1, 0);
    INJECT(1, sizeof(hdr), 13);
    /* right step, wrong sender for it (3 sends to 0 at step 1 only) */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 3, 0, 1);
    put_block(pay, 3, 0);
    INJECT(3, sizeof(hdr), 12);
    /* wrong block count for the step */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 0, 2);
    INJECT(1, sizeof(hdr), 24);
    /* abort with a payload */
    encode(hdr, RDP_COLL_MSG_ABORT, RDP_COLL_ALLGATHER, RDP_COLL_ALG_BRUCK, sig,
           77, P, 1, 0, 0);
    INJECT(1, sizeof(hdr), 4);
    /* barrier data with a payload */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_BARRIER, RDP_COLL_ALG_DISSEM, sig,
           78, P, 1, 0, 0);
    INJECT(1, sizeof(hdr), 4);
    {
        size_t before = injected;
        /* unknown keys: 4 fit in the early queue, the rest overflow */
        for (uint64_t k = 0; k < 10; k++) {
            encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER,
                   RDP_COLL_ALG_BRUCK, sig ^ 0x5555, 1000 + k, P, 1, 0, 1);
            put_block(pay, 1, 0);
            INJECT(1, sizeof(hdr), 12);
        }
        injected = before;
    }
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, injected);
    assert_int_equal(st.early_msgs, 4);
    assert_int_equal(st.early_overflow, 6);
    assert_int_equal(sim.ncalled, 0);
    /* the collective itself still completes */
    start_others_and_check(&sim, 77, parts, LEN_SMALL);
#undef INJECT
    sim_destroy(&sim);
    free(parts);
}

static void duplicate_and_late_messages_are_dropped(void **state)
{
    enum {
        P = 2
    };
    uint32_t parts[P] = {0, 1};
    uint64_t sig      = rdp_coll_signature(parts, P);
    uint8_t hdr[RDP_COLL_HDR_LEN];
    rdp_coll_engine_stats_t st;
    sim_t sim;

    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RD, 0, 0);
    sim_reserve(&sim, P);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SMALL);
    sim_start(&sim, 1, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SMALL);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, P);
    /* a copy of step 0 arriving after completion */
    inject_step0_copy(&sim, sig, 5, P);
    /* and a late abort */
    encode(hdr, RDP_COLL_MSG_ABORT, RDP_COLL_ALLGATHER, RDP_COLL_ALG_RD, sig, 5,
           P, 1, 0, 0);
    assert_int_equal(
        rdp_tl_loopback_inject(sim.lb, 1, 0, hdr, sizeof(hdr), NULL, 0),
        PMIX_SUCCESS);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.early_msgs, 0);
    sim_destroy(&sim);
}

/* ---- an own block the caller does not need (args.own_unneeded) ---- */

typedef struct {
    uint32_t me;
    int called;
    pmix_status_t status;
    int own_seen; /* my block was in the result */
    const void *own_data;
    uint64_t own_len;
    int other_ok; /* the other's block whole and right */
} own_op_t;

static uint8_t own_byte(uint32_t origin, size_t i)
{
    return (uint8_t)(origin * 131u + i * 7u + 1u);
}

static void own_op_done(const rdp_coll_result_t *res, void *arg)
{
    own_op_t *o = arg;

    o->called = 1;
    o->status = res->status;
    for (uint32_t b = 0; res->status == PMIX_SUCCESS && b < res->nblocks; b++) {
        const rdp_coll_block_t *blk = &res->blocks[b];

        if (blk->origin == o->me) {
            o->own_seen = 1;
            o->own_data = blk->data;
            o->own_len  = blk->len;
            continue;
        }
        o->other_ok = blk->data != NULL;
        for (size_t i = 0; o->other_ok && i < blk->len; i++) {
            o->other_ok =
                ((const uint8_t *)blk->data)[i] == own_byte(blk->origin, i);
        }
    }
}

/* A 2-participant allgather of @a len-byte blocks handed over (own_buf),
 * with @a unneeded, sends completing at once (as UCX's eager ones that
 * fit the socket) or later (@a at_once 0); each engine's stats into
 * @a st. */
static void own_pair_run(int unneeded, int at_once, size_t len, own_op_t ops[2],
                         rdp_coll_engine_stats_t st[2])
{
    uint32_t parts[2] = {0, 1};
    int was_inline    = sim_inline;
    sim_t sim;

    sim_inline = at_once;
    sim_create(&sim, 2, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    sim_inline = was_inline;
    for (uint32_t i = 0; i < 2; i++) {
        rdp_coll_args_t args = {0};
        uint8_t *buf         = malloc(RDP_COLL_HEADROOM + len);

        assert_non_null(buf);
        for (size_t k = 0; k < len; k++) {
            buf[RDP_COLL_HEADROOM + k] = own_byte(i, k);
        }
        memset(&ops[i], 0, sizeof(ops[i]));
        ops[i].me         = i;
        args.kind         = RDP_COLL_ALLGATHER;
        args.opid         = 11;
        args.parts        = parts;
        args.nparts       = 2;
        args.own_buf      = buf;
        args.len          = len;
        args.own_unneeded = unneeded;
        assert_int_equal(
            rdp_coll_start(sim.eng[i], &args, own_op_done, &ops[i]),
            PMIX_SUCCESS);
    }
    sim_run(&sim);
    for (uint32_t i = 0; i < 2; i++) {
        rdp_coll_engine_get_stats(sim.eng[i], &st[i]);
    }
    sim_destroy(&sim);
}

/* Between 2 participants an own block nobody reads is freed once sent:
 * the result has its length and no data, the other's block is whole;
 * without the flag the result has both.  A send that completes later
 * frees it then if the collective still runs (valgrind: no leak, no read
 * of the freed block). */
static void an_unneeded_own_block_is_freed_once_sent(void **state)
{
    const size_t lens[] = {4000, 70000};
    own_op_t ops[2];
    rdp_coll_engine_stats_t st[2];

    (void)state;
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        own_pair_run(1, 1, lens[l], ops, st);
        for (uint32_t i = 0; i < 2; i++) {
            assert_true(ops[i].called);
            assert_int_equal(ops[i].status, PMIX_SUCCESS);
            assert_true(ops[i].other_ok);
            assert_true(ops[i].own_seen);
            assert_null(ops[i].own_data);
            assert_int_equal(ops[i].own_len, lens[l]);
            assert_int_equal(st[i].own_dropped, 1);
        }
        own_pair_run(1, 0, lens[l], ops, st);
        for (uint32_t i = 0; i < 2; i++) {
            assert_int_equal(ops[i].status, PMIX_SUCCESS);
            assert_true(ops[i].other_ok);
            assert_int_equal(ops[i].own_len, lens[l]);
            assert_int_equal(ops[i].own_data == NULL, st[i].own_dropped == 1);
            assert_true(st[i].own_dropped <= 1);
        }
        own_pair_run(0, 1, lens[l], ops, st);
        for (uint32_t i = 0; i < 2; i++) {
            assert_int_equal(ops[i].status, PMIX_SUCCESS);
            assert_true(ops[i].other_ok);
            assert_non_null(ops[i].own_data);
            assert_int_equal(ops[i].own_len, lens[l]);
            assert_int_equal(st[i].own_dropped, 0);
        }
    }
}

static void algorithm_disagreement_fails_instead_of_hanging(void **state)
{
    enum {
        P = 4
    };
    uint32_t *parts = iota(P);
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t *eng[P];
    op_t ops[P];
    sim_t fake = {0};

    memset(ops, 0, sizeof(ops));
    assert_int_equal(rdp_tl_loopback_create(P, base_seed, &lb), PMIX_SUCCESS);
    for (uint32_t i = 0; i < P; i++) {
        rdp_coll_engine_config_t cfg = {0};
        rdp_coll_args_t args         = {0};

        cfg.tl_ops    = rdp_tl_loopback_ops();
        cfg.tl_ctx    = rdp_tl_loopback_ctx(lb, i);
        cfg.nuniverse = P;
        cfg.me        = i;
        cfg.alg       = i == 2 ? RDP_COLL_ALG_RING : RDP_COLL_ALG_BRUCK;
        assert_int_equal(rdp_coll_engine_create(&cfg, &eng[i]), PMIX_SUCCESS);
        ops[i].sim  = &fake;
        ops[i].me   = i;
        ops[i].kind = RDP_COLL_ALLGATHER;
        args.kind   = RDP_COLL_ALLGATHER;
        args.opid   = 3;
        args.parts  = parts;
        args.nparts = P;
        assert_int_equal(rdp_coll_start(eng[i], &args, op_done, &ops[i]),
                         PMIX_SUCCESS);
    }
    for (int moved = 1; moved;) {
        moved = 0;
        while (rdp_tl_loopback_progress(lb)) {
            moved = 1;
        }
        for (uint32_t i = 0; i < P; i++) {
            moved |= rdp_coll_engine_progress(eng[i]) > 0;
        }
    }
    for (uint32_t i = 0; i < P; i++) {
        assert_true(ops[i].called);
        assert_int_equal(ops[i].status, PMIX_ERR_BAD_PARAM);
        rdp_coll_engine_destroy(eng[i]);
    }
    rdp_tl_loopback_destroy(lb);
    free(parts);
}

static void start_validates_its_arguments(void **state)
{
    uint32_t good[3]     = {0, 1, 2};
    uint32_t unsorted[3] = {0, 2, 1};
    uint32_t dup[3]      = {0, 1, 1};
    uint32_t range[2]    = {0, 9};
    uint32_t nome[2]     = {1, 2};
    rdp_coll_args_t args = {0};
    op_t op              = {0};
    sim_t sim;

    sim_create(&sim, 3, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    op.sim      = &sim;
    op.kind     = RDP_COLL_ALLGATHER;
    args.kind   = RDP_COLL_ALLGATHER;
    args.opid   = 1;
    args.parts  = unsorted;
    args.nparts = 3;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.parts = dup;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.parts  = range;
    args.nparts = 2;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.parts = nome;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.parts  = good;
    args.nparts = 0;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.nparts = 3;
    args.len    = 5; /* data NULL */
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.len  = 0;
    /* a handed-over block is the engine's even when start fails (the
     * sanitizer build's leak check would catch it otherwise) */
    args.own_buf = malloc(RDP_COLL_HEADROOM + 4);
    args.data    = "abcd";
    args.len     = 4;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM); /* both data and own_buf */
    args.data    = NULL;
    args.own_buf = malloc(RDP_COLL_HEADROOM + 4);
    assert_int_equal(rdp_coll_start(NULL, &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.own_buf = NULL;
    args.len     = 0;
    args.kind = (enum rdp_coll_kind)7;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    args.kind = RDP_COLL_ALLGATHER;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, NULL, &op),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_start(NULL, &args, op_done, &op),
                     PMIX_ERR_BAD_PARAM);
    /* a running key cannot start twice */
    op.parts  = good;
    op.nparts = 3;
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_SUCCESS);
    args.own_buf = malloc(RDP_COLL_HEADROOM);
    assert_int_equal(rdp_coll_start(sim.eng[0], &args, op_done, &op),
                     PMIX_ERR_EXISTS);
    args.own_buf = NULL;
    assert_false(op.called);
    assert_int_equal(rdp_coll_engine_active(sim.eng[0]), 1);
    /* destroying with a collective pending abandons it quietly */
    op.parts = NULL;
    sim_destroy(&sim);
    assert_false(op.called);
}

static void engine_create_rejects_bad_configuration(void **state)
{
    rdp_tl_loopback_t *lb;
    rdp_coll_engine_t *eng       = NULL;
    rdp_coll_engine_config_t cfg = {0};

    assert_int_equal(rdp_tl_loopback_create(2, 1, &lb), PMIX_SUCCESS);
    cfg.tl_ops    = rdp_tl_loopback_ops();
    cfg.tl_ctx    = rdp_tl_loopback_ctx(lb, 0);
    cfg.nuniverse = 2;
    cfg.me        = 2;
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_ERR_BAD_PARAM);
    cfg.me        = 0;
    cfg.nuniverse = 0;
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_ERR_BAD_PARAM);
    cfg.nuniverse = 2;
    cfg.alg       = RDP_COLL_ALG_DISSEM;
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_ERR_BAD_PARAM);
    cfg.alg = RDP_COLL_ALG_AUTO;
    setenv("RDPMIX_COLL_ALG", "bogus", 1);
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_ERR_BAD_PARAM);
    unsetenv("RDPMIX_COLL_ALG");
    setenv("RDPMIX_COLL_SEG_BYTES", "lots", 1);
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_ERR_BAD_PARAM);
    put_seg_env(test_seg);
    setenv("RDPMIX_COLL_ALG", "ring", 1);
    assert_int_equal(rdp_coll_engine_create(&cfg, &eng), PMIX_SUCCESS);
    /* one binding per transport context */
    {
        rdp_coll_engine_t *eng2 = NULL;
        assert_int_not_equal(rdp_coll_engine_create(&cfg, &eng2), PMIX_SUCCESS);
        assert_null(eng2);
    }
    unsetenv("RDPMIX_COLL_ALG");
    rdp_coll_engine_destroy(eng);
    rdp_coll_engine_destroy(NULL);
    assert_null(rdp_tl_loopback_ctx(lb, 2));
    rdp_tl_loopback_destroy(lb);
}

static void single_participant_completes_later_not_inside_start(void **state)
{
    uint32_t me = 1;
    sim_t sim;
    op_t *op;

    sim_create(&sim, 3, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    op = sim_start(&sim, 1, RDP_COLL_ALLGATHER, 9, &me, 1, LEN_SMALL);
    assert_false(op->called);
    sim_run(&sim);
    assert_true(op->called);
    assert_int_equal(op->status, PMIX_SUCCESS);
    assert_true(op->data_ok);
    assert_int_equal(op->nsteps, 0);
    assert_int_equal(op->msgs_sent, 0);
    sim_destroy(&sim);
}

static void env_forces_the_algorithm(void **state)
{
    uint32_t *parts = iota(6);
    sim_t sim;

    setenv("RDPMIX_COLL_ALG", "ring", 1);
    sim_create(&sim, 6, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    unsetenv("RDPMIX_COLL_ALG");
    sim_reserve(&sim, 6);
    for (uint32_t u = 0; u < 6; u++) {
        sim_start(&sim, u, RDP_COLL_ALLGATHER, 1, parts, 6, LEN_SMALL);
    }
    sim_run(&sim);
    for (uint32_t u = 0; u < 6; u++) {
        assert_int_equal(sim.ops[u].status, PMIX_SUCCESS);
        assert_int_equal(sim.ops[u].alg, RDP_COLL_ALG_RING);
        assert_int_equal(sim.ops[u].nsteps, 5);
    }
    sim_destroy(&sim);
    free(parts);
}

/* Start @a opid (@a alg, blocks per @a pol) on 16 servers, deliver
 * @a nev events, destroy everything: in every payload mode. */
static void run_destroy_midway(enum rdp_coll_alg alg, enum len_policy pol,
                               uint64_t opid, size_t nev)
{
    uint32_t *parts = iota(16);
    sim_t sim;

    for (int mode = 1; mode <= 3; mode++) {
        sim_create(&sim, 16, base_seed + mode, alg, 0, 0);
        sim_reserve(&sim, 16);
        rdp_tl_loopback_set_mode(sim.lb, (enum rdp_tl_loopback_mode)mode);
        for (uint32_t u = 0; u < 16; u++) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, opid, parts, 16, pol);
        }
        sim_step(&sim, nev);
        /* engines keep descriptors, fetches and sends in flight here */
        sim_destroy(&sim);
    }
    free(parts);
}

static void destroy_with_messages_in_flight_is_clean(void **state)
{
    run_destroy_midway(RDP_COLL_ALG_BRUCK, LEN_BIG, 1, 20);
}

static void abort_from_a_non_participant_is_ignored(void **state)
{
    uint32_t parts[2] = {0, 1};
    uint64_t sig      = rdp_coll_signature(parts, 2);
    uint8_t hdr[RDP_COLL_HDR_LEN];
    rdp_coll_engine_stats_t st;
    sim_t sim;

    sim_create(&sim, 3, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, 4, parts, 2, LEN_SMALL);
    encode(hdr, RDP_COLL_MSG_ABORT, RDP_COLL_ALLGATHER, RDP_COLL_ALG_RD, sig, 4,
           2, 2, 0, 0);
    assert_int_equal(
        rdp_tl_loopback_inject(sim.lb, 2, 0, hdr, sizeof(hdr), NULL, 0),
        PMIX_SUCCESS);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(sim.ncalled, 0);
    sim_start(&sim, 1, RDP_COLL_ALLGATHER, 4, parts, 2, LEN_SMALL);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, 2);
    assert_int_equal(sim.ops[0].status, PMIX_SUCCESS);
    assert_int_equal(sim.ops[1].status, PMIX_SUCCESS);
    sim_destroy(&sim);
}

/* rdp_coll_cancel fails the collective here only, later (not inside the
 * call), with the caller's status; the others are not told (server 0
 * cannot finish without 2, and no abort reaches it), and what arrives for
 * it afterwards is dropped. */
static void cancel_fails_here_only_and_later(void **state)
{
    uint32_t parts[3] = {0, 1, 2};
    uint64_t sig      = rdp_coll_signature(parts, 3);
    rdp_coll_engine_stats_t before, after;
    sim_t sim;
    op_t *op0, *op1, *op2;

    sim_create(&sim, 3, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    op0 = sim_start(&sim, 0, RDP_COLL_BARRIER, 7, parts, 3, LEN_SMALL);
    op1 = sim_start(&sim, 1, RDP_COLL_BARRIER, 7, parts, 3, LEN_SMALL);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, 0);
    assert_int_equal(
        rdp_coll_cancel(sim.eng[1], RDP_COLL_BARRIER, sig, 7, PMIX_SUCCESS),
        PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_cancel(sim.eng[1], RDP_COLL_BARRIER, sig, 8,
                                     PMIX_ERR_PROC_TERM_WO_SYNC),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_coll_cancel(sim.eng[1], RDP_COLL_BARRIER, sig, 7,
                                     PMIX_ERR_PROC_TERM_WO_SYNC),
                     PMIX_SUCCESS);
    assert_int_equal(op1->called, 0);
    sim_run(&sim);
    assert_int_equal(op1->called, 1);
    assert_int_equal(op1->status, PMIX_ERR_PROC_TERM_WO_SYNC);
    assert_int_equal(op1->failed_peer, UINT32_MAX);
    assert_int_equal(rdp_coll_cancel(sim.eng[1], RDP_COLL_BARRIER, sig, 7,
                                     PMIX_ERR_PROC_TERM_WO_SYNC),
                     PMIX_ERR_NOT_FOUND);
    /* no abort went out: server 0 still waits */
    assert_int_equal(op0->called, 0);
    assert_int_equal(rdp_coll_engine_active(sim.eng[0]), 1);
    rdp_coll_engine_get_stats(sim.eng[1], &before);
    op2 = sim_start(&sim, 2, RDP_COLL_BARRIER, 7, parts, 3, LEN_SMALL);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[1], &after);
    /* (whether 0 and 2 finish depends on what 1 sent before: a cancel
     * takes nothing back) */
    assert_true(op2->called == 0 || op2->status == PMIX_SUCCESS);
    assert_true(after.dropped > before.dropped);
    sim_destroy(&sim);
}

/* Finished keys are remembered (late messages dropped) up to a bound; the
 * oldest are forgotten first. */
static void finished_key_memory_is_bounded(void **state)
{
    enum {
        N = RDP_COLL_KEY_MEMORY + 100
    };
    uint32_t parts[2] = {0, 1};
    uint64_t sig      = rdp_coll_signature(parts, 2);
    uint8_t hdr[RDP_COLL_HDR_LEN];
    rdp_coll_engine_stats_t st;
    sim_t sim;

    sim_create(&sim, 2, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    sim_reserve(&sim, 2 * N);
    for (uint64_t op = 0; op < N; op++) {
        sim_start(&sim, 0, RDP_COLL_BARRIER, op, parts, 2, LEN_SMALL);
        sim_start(&sim, 1, RDP_COLL_BARRIER, op, parts, 2, LEN_SMALL);
        sim_run(&sim);
    }
    assert_int_equal(sim.ncalled, 2 * N);
    /* late copies for the oldest (forgotten) and the newest (remembered) */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_BARRIER, RDP_COLL_ALG_DISSEM, sig,
           0, 2, 1, 0, 0);
    assert_int_equal(
        rdp_tl_loopback_inject(sim.lb, 1, 0, hdr, sizeof(hdr), NULL, 0),
        PMIX_SUCCESS);
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_BARRIER, RDP_COLL_ALG_DISSEM, sig,
           N - 1, 2, 1, 0, 0);
    assert_int_equal(
        rdp_tl_loopback_inject(sim.lb, 1, 0, hdr, sizeof(hdr), NULL, 0),
        PMIX_SUCCESS);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(st.early_msgs, 1);
    sim_destroy(&sim);
}

/* Engine 0's early messages when it sent its first message to peer 1
 * (armed by setting eng). */
static struct {
    rdp_coll_engine_t *eng;
    size_t early_at_send;
    int sent;
} first_send;

static pmix_status_t first_send_spy(void *ctx, uint32_t peer, const void *hdr,
                                    size_t hdr_len, const rdp_iov_t *iov,
                                    size_t iovcnt, rdp_tl_done_cb_t cb,
                                    void *cb_arg)
{
    if ((first_send.eng != NULL) && !first_send.sent && (peer == 1)) {
        rdp_coll_engine_stats_t st;

        rdp_coll_engine_get_stats(first_send.eng, &st);
        first_send.early_at_send = st.early_msgs;
        first_send.sent          = 1;
    }
    return rdp_tl_loopback_ops()->send(ctx, peer, hdr, hdr_len, iov, iovcnt, cb,
                                       cb_arg);
}

/* A collective whose peer's message came before its start sends its step
 * 0 first and takes the early message after (the send needs nothing
 * received; issue 11: the hand-over sat on the critical path). */
static void step_0_is_sent_before_the_early_hand_over(void **state)
{
    static rdp_tl_ops_t ops;
    uint32_t parts[2]           = {0, 1};
    enum rdp_coll_kind kinds[2] = {RDP_COLL_BARRIER, RDP_COLL_ALLGATHER};
    rdp_coll_engine_stats_t st;
    sim_t sim;

    (void)state;
    ops      = *rdp_tl_loopback_ops();
    ops.send = first_send_spy;
    sim_ops  = &ops;
    for (int k = 0; k < 2; k++) {
        memset(&first_send, 0, sizeof(first_send));
        sim_create(&sim, 2, base_seed, RDP_COLL_ALG_RD, 0, 0);
        sim_reserve(&sim, 2);
        sim_start(&sim, 1, kinds[k], 0, parts, 2, LEN_SMALL);
        sim_run(&sim); /* engine 1's message waits at engine 0 */
        first_send.eng = sim.eng[0];
        sim_start(&sim, 0, kinds[k], 0, parts, 2, LEN_SMALL);
        sim_run(&sim);
        assert_true(first_send.sent);
        assert_int_equal(first_send.early_at_send, 1);
        assert_int_equal(sim.ncalled, 2);
        for (size_t i = 0; i < sim.nops; i++) {
            assert_int_equal(sim.ops[i].status, PMIX_SUCCESS);
        }
        rdp_coll_engine_get_stats(sim.eng[0], &st);
        assert_int_equal(st.early_msgs, 0);
        sim_destroy(&sim);
    }
    sim_ops = NULL;
}

/* An emptied early-arrival queue is kept for the next collective whose
 * message comes before its local start (no allocation per queue), and a
 * freed receive record for the next message. */
static void early_queues_and_receive_records_are_reused(void **state)
{
    enum {
        P   = 2,
        OPS = 5
    };
    uint32_t parts[P] = {0, 1};
    rdp_coll_engine_stats_t st;
    sim_t sim;

    (void)state;
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RD, 0, 0);
    sim_reserve(&sim, P * OPS);
    /* payloads lent for the upcall only: each record copies one, and
     * every message is the same size */
    rdp_tl_loopback_set_mode(sim.lb, RDP_TL_LOOPBACK_BORROWED);
    for (uint64_t op = 0; op < OPS; op++) {
        sim_start(&sim, 1, RDP_COLL_ALLGATHER, op, parts, P, LEN_SMALL);
        sim_run(&sim); /* engine 1's message waits at engine 0 */
        rdp_coll_engine_get_stats(sim.eng[0], &st);
        assert_int_equal(st.early_msgs, 1);
        sim_start(&sim, 0, RDP_COLL_ALLGATHER, op, parts, P, LEN_SMALL);
        sim_run(&sim);
    }
    assert_int_equal(sim.ncalled, P * OPS);
    for (size_t i = 0; i < sim.nops; i++) {
        assert_int_equal(sim.ops[i].status, PMIX_SUCCESS);
        assert_true(sim.ops[i].data_ok);
    }
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.early_reused, OPS - 1);
    assert_int_equal(st.rx_reused, OPS - 1); /* one message per op here */
    assert_int_equal(st.early_msgs, 0);
    sim_destroy(&sim); /* the kept queue is freed (valgrind: no leak) */
}

/* ---- the key table (keytab.h) and the lookup cache ---- */

/* The memory of finished keys keeps the newest cap keys: each add past
 * cap evicts the oldest. */
static void key_memory_keeps_the_newest_cap_keys(void **state)
{
    enum {
        CAP = 64,
        ADDS = 100
    };
    keymem_t km;
    coll_key_t key = {.sig = 0x1234, .kind = 1};

    (void)state;
    memset(&km, 0, sizeof(km));
    km.cap = CAP;
    assert_int_equal(rdp_keytab_init(&km.map, 0), PMIX_SUCCESS);
    for (uint32_t i = 0; i < ADDS; i++) {
        key.opid = i;
        rdp_coll_keymem_add(&km, &key);
    }
    assert_int_equal(km.size, CAP);
    assert_int_equal(km.map.count, CAP);
    for (uint32_t i = 0; i < ADDS; i++) {
        key.opid = i;
        assert_int_equal(rdp_keytab_find(&km.map, &key) != NULL,
                         i >= ADDS - CAP);
    }
    rdp_keytab_cleanup(&km.map);
    free(km.ring);
}

/* Nodes leave their chains from any place (head, middle, tail: removal
 * unlinks through the node's back pointer, without a walk), also across
 * growths, and the others stay findable. */
static void keytab_removes_from_any_place_in_a_chain(void **state)
{
    enum {
        N = 300
    };
    keytab_node_t *nodes = calloc(N, sizeof(*nodes));
    uint32_t order[N];
    keytab_t t;

    (void)state;
    assert_non_null(nodes);
    assert_int_equal(rdp_keytab_init(&t, 0), PMIX_SUCCESS);
    for (uint32_t i = 0; i < N; i++) {
        nodes[i].key.sig  = 0x99;
        nodes[i].key.opid = i;
        order[i]          = (i * 7919u) % N; /* a permutation: 7919 is prime */
        if (i < N / 2) {
            rdp_keytab_insert(&t, &nodes[i]);
        }
    }
    for (uint32_t k = 0; k < N; k++) {
        uint32_t gone = order[k];

        if (gone >= N / 2) {
            rdp_keytab_insert(&t, &nodes[gone]); /* grows on the way */
            continue;
        }
        rdp_keytab_remove(&t, &nodes[gone]);
        assert_null(rdp_keytab_find(&t, &nodes[gone].key));
        for (uint32_t i = 0; i < N; i++) {
            if (nodes[i].linked) {
                assert_ptr_equal(rdp_keytab_find(&t, &nodes[i].key),
                                 &nodes[i]);
            }
        }
    }
    assert_int_equal(t.count, N / 2);
    /* a prefetch changes nothing, in a table or an empty one */
    rdp_keytab_prefetch(&t, &nodes[0].key);
    assert_int_equal(t.count, N / 2);
    rdp_keytab_cleanup(&t);
    rdp_keytab_prefetch(&t, &nodes[0].key);
    free(nodes);
}

static void keytab_links_nodes_in_place_and_grows(void **state)
{
    enum {
        N = 1000
    };
    keytab_node_t *nodes = calloc(N, sizeof(*nodes));
    keytab_t t;
    coll_key_t probe;
    size_t drained = 0;
    keytab_node_t *n;

    (void)state;
    assert_non_null(nodes);
    assert_int_equal(rdp_keytab_init(&t, 0), PMIX_SUCCESS);
    for (uint32_t i = 0; i < N; i++) {
        /* keys that differ in one field only, as a job's opids do */
        nodes[i].key.sig  = 0x1234;
        nodes[i].key.opid = i / 2;
        nodes[i].key.kind = i % 2;
        rdp_keytab_insert(&t, &nodes[i]);
    }
    assert_int_equal(t.count, N);
    assert_true(t.nbuckets >= N); /* it grew from its 16 buckets */
    for (uint32_t i = 0; i < N; i++) {
        assert_ptr_equal(rdp_keytab_find(&t, &nodes[i].key), &nodes[i]);
    }
    for (uint32_t i = 0; i < N; i += 2) {
        rdp_keytab_remove(&t, &nodes[i]);
        rdp_keytab_remove(&t, &nodes[i]); /* twice: no harm */
    }
    assert_int_equal(t.count, N / 2);
    for (uint32_t i = 0; i < N; i++) {
        probe = nodes[i].key;
        assert_ptr_equal(rdp_keytab_find(&t, &probe),
                         i % 2 == 0 ? NULL : &nodes[i]);
    }
    while ((n = rdp_keytab_any(&t)) != NULL) {
        assert_true(n->linked);
        rdp_keytab_remove(&t, n);
        drained++;
    }
    assert_int_equal(drained, N / 2);
    assert_int_equal(t.count, 0);
    rdp_keytab_cleanup(&t);
    rdp_keytab_cleanup(&t); /* accepts a cleaned-up table */
    assert_null(rdp_keytab_find(&t, &probe));
    free(nodes);
}

/* The messages of a running collective find it through the cache of the
 * collective found last; once it finished, a late copy of one of them is
 * not served from that cache (it is dropped as late). */
static void late_message_misses_the_lookup_cache(void **state)
{
    enum {
        P = 2
    };
    uint32_t parts[P] = {0, 1};
    uint64_t sig      = rdp_coll_signature(parts, P);
    rdp_coll_engine_stats_t st;
    rdp_coll_engine_stats_t st2;
    sim_t sim;

    (void)state;
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RD, 0, 0);
    sim_reserve(&sim, 2 * P);
    for (uint64_t op = 7; op < 9; op++) {
        sim_start(&sim, 0, RDP_COLL_ALLGATHER, op, parts, P, LEN_SMALL);
        sim_start(&sim, 1, RDP_COLL_ALLGATHER, op, parts, P, LEN_SMALL);
        sim_run(&sim);
    }
    assert_int_equal(sim.ncalled, 2 * P);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.lookup_hits, 2); /* one message each, both hits */
    assert_int_equal(st.dropped, 0);
    /* a late copy of the last one's step 0 */
    inject_step0_copy(&sim, sig, 8, P);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st2);
    assert_int_equal(st2.lookup_hits, st.lookup_hits);
    assert_int_equal(st2.dropped, 1);
    assert_int_equal(st2.early_msgs, 0);
    assert_int_equal(sim.ncalled, 2 * P);
    sim_destroy(&sim);
}


/* ---- the 2-participant fast path (coll.c: fast2) ---- */

/* Per sending engine, a digest of everything it sent (peer, header and
 * payload bytes, in order), through send and send_open. */
static uint64_t sent_digest[2];
static const void *digest_ctx[2]; /* the engines' transport contexts */

static void digest_send(const void *ctx, uint32_t peer, const void *hdr,
                        size_t hdr_len, const rdp_iov_t *iov, size_t iovcnt)
{
    uint32_t me = 0;
    uint64_t *d;

    while (me < 2 && digest_ctx[me] != ctx) {
        me++;
    }
    if (me == 2) {
        return; /* not this test's engines */
    }
    d  = &sent_digest[me];
    *d = mix(*d ^ peer);
    for (size_t i = 0; i < hdr_len; i++) {
        *d = (*d ^ ((const uint8_t *)hdr)[i]) * 1099511628211ULL;
    }
    *d = mix(*d ^ 0xabcdu);
    for (size_t k = 0; k < iovcnt; k++) {
        for (size_t i = 0; i < iov[k].len; i++) {
            *d = (*d ^ ((const uint8_t *)iov[k].base)[i]) * 1099511628211ULL;
        }
    }
    *d = mix(*d);
}

static pmix_status_t digest_send_plain(void *ctx, uint32_t peer,
                                       const void *hdr, size_t hdr_len,
                                       const rdp_iov_t *iov, size_t iovcnt,
                                       rdp_tl_done_cb_t cb, void *cb_arg)
{
    digest_send(ctx, peer, hdr, hdr_len, iov, iovcnt);
    return rdp_tl_loopback_ops()->send(ctx, peer, hdr, hdr_len, iov, iovcnt, cb,
                                       cb_arg);
}

static pmix_status_t digest_send_open(void *ctx, uint32_t peer, const void *hdr,
                                      size_t hdr_len, const rdp_iov_t *iov,
                                      size_t iovcnt, rdp_tl_done_cb_t cb,
                                      void *cb_arg)
{
    digest_send(ctx, peer, hdr, hdr_len, iov, iovcnt);
    return rdp_tl_loopback_ops()->send_open(ctx, peer, hdr, hdr_len, iov,
                                            iovcnt, cb, cb_arg);
}

/* Barriers and allgathers in turn over parts[0..P): @a nops collectives,
 * both start orders, some messages delivered between the starts (early
 * arrivals); every result checked. */
static void run_series(sim_t *sim, uint32_t P, size_t nops, enum len_policy pol)
{
    uint32_t parts[3] = {0, 1, 2};

    for (uint64_t op = 0; op < nops; op++) {
        enum rdp_coll_kind kind =
            (op % 2 == 0) ? RDP_COLL_BARRIER : RDP_COLL_ALLGATHER;

        for (uint32_t i = 0; i < P; i++) {
            uint32_t u = (uint32_t)((op / 2 % 2 == 0) ? i : P - 1 - i);

            sim_start(sim, u, kind, op, parts, P, pol);
            if (op % 3 == 0) {
                sim_run(sim); /* the others' messages come first */
            }
        }
        sim_run(sim);
    }
    assert_int_equal(sim->ncalled, nops * P);
    for (size_t i = 0; i < sim->nops; i++) {
        op_t *o = &sim->ops[i];

        if (!o->called || o->status != PMIX_SUCCESS || !o->data_ok
            || o->nsteps != rdp_sched_nsteps(o->alg, P)) {
            fail_msg("op %llu on %u: called %d status %d data %d",
                     (unsigned long long)o->opid, o->me, o->called, o->status,
                     o->data_ok);
        }
    }
}

/* Collectives of 2 participants are sent and completed by the fast path,
 * both for a message of the running collective and for one that came
 * before the local start; collectives of 3 never are. */
static void two_participants_take_the_fast_path_three_do_not(void **state)
{
    enum {
        NOPS = 12
    };
    rdp_coll_engine_stats_t st;
    sim_t sim;

    (void)state;
    sim_mode = RDP_TL_LOOPBACK_BORROWED;
    for (uint32_t P = 2; P <= 3; P++) {
        sim_create(&sim, P, base_seed + P, RDP_COLL_ALG_AUTO, 0, 0);
        sim_reserve(&sim, NOPS * P);
        run_series(&sim, P, NOPS, LEN_SMALL);
        for (uint32_t i = 0; i < P; i++) {
            rdp_coll_engine_get_stats(sim.eng[i], &st);
            assert_int_equal(st.dropped, 0);
            assert_int_equal(st.early_msgs, 0);
            if (P == 2) {
                /* every send, and every message (each fits, none came in
                 * pieces or by rendezvous) */
                assert_int_equal(st.fast_sent, NOPS);
                assert_int_equal(st.fast_completed, NOPS);
                /* among them some that came before the start */
                assert_true(st.early_reused + st.rx_reused > 0);
            } else {
                assert_int_equal(st.fast_sent, 0);
                assert_int_equal(st.fast_completed, 0);
            }
        }
        sim_destroy(&sim);
    }
    /* every delivery mode: rendezvous payloads go the generic way, the
     * others do not */
    sim_mode = RDP_TL_LOOPBACK_MIXED;
    sim_create(&sim, 2, base_seed, RDP_COLL_ALG_AUTO, 0, 0);
    sim_reserve(&sim, NOPS * 2);
    run_series(&sim, 2, NOPS, LEN_SMALL);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.fast_sent, NOPS);
    assert_true(st.fast_completed > 0);
    sim_destroy(&sim);
}

/* The fast path sends the very bytes the generic path sends, and the
 * results are the same, with and without open payloads, for blocks that
 * fit its shape and for blocks that do not (larger than the inline
 * limit, or larger than the room kept for the other's block). */
static void fast_path_sends_and_results_match_the_generic_path(void **state)
{
    enum {
        NOPS = 16
    };
    static rdp_tl_ops_t ops;
    const enum rdp_tl_loopback_mode modes[] = {RDP_TL_LOOPBACK_BORROWED,
                                               RDP_TL_LOOPBACK_KEEPABLE,
                                               RDP_TL_LOOPBACK_MIXED};
    const enum len_policy pols[]            = {LEN_SMALL, LEN_SEG};
    uint64_t digest[2][2];
    uint64_t fast[2];
    op_t ops_seen[2][NOPS * 2];
    sim_t sim;

    (void)state;
    ops           = *rdp_tl_loopback_ops();
    ops.send      = digest_send_plain;
    ops.send_open = digest_send_open;
    sim_ops       = &ops;
    set_seg(0);
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        for (size_t p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
            for (int open = 0; open <= 1; open++) {
                sim_mode = modes[m];
                sim_open = open;
                for (int g = 0; g <= 1; g++) {
                    rdp_coll_engine_stats_t st;

                    sim_generic = g;
                    memset(sent_digest, 0, sizeof(sent_digest));
                    sim_create(&sim, 2, base_seed + m, RDP_COLL_ALG_AUTO, 0, 0);
                    digest_ctx[0] = rdp_tl_loopback_ctx(sim.lb, 0);
                    digest_ctx[1] = rdp_tl_loopback_ctx(sim.lb, 1);
                    sim_reserve(&sim, NOPS * 2);
                    run_series(&sim, 2, NOPS, pols[p]);
                    memcpy(ops_seen[g], sim.ops, sizeof(ops_seen[g]));
                    digest[g][0] = sent_digest[0];
                    digest[g][1] = sent_digest[1];
                    rdp_coll_engine_get_stats(sim.eng[0], &st);
                    fast[g] = st.fast_completed;
                    sim_destroy(&sim);
                }
                assert_int_equal(fast[1], 0);
                assert_true(fast[0] > 0);
                assert_int_equal(digest[0][0], digest[1][0]);
                assert_int_equal(digest[0][1], digest[1][1]);
                for (size_t i = 0; i < NOPS * 2; i++) {
                    assert_int_equal(ops_seen[0][i].me, ops_seen[1][i].me);
                    assert_int_equal(ops_seen[0][i].opid, ops_seen[1][i].opid);
                    assert_int_equal(ops_seen[0][i].status,
                                     ops_seen[1][i].status);
                    assert_int_equal(ops_seen[0][i].nsteps,
                                     ops_seen[1][i].nsteps);
                    assert_int_equal(ops_seen[0][i].msgs_sent,
                                     ops_seen[1][i].msgs_sent);
                    assert_int_equal(ops_seen[0][i].alg, ops_seen[1][i].alg);
                    assert_int_equal(ops_seen[0][i].data_ok, 1);
                    assert_int_equal(ops_seen[1][i].data_ok, 1);
                }
            }
        }
    }
    sim_generic = false;
    sim_open    = 0;
    sim_mode    = RDP_TL_LOOPBACK_MIXED;
    sim_ops     = NULL;
}

/* Inject a message of header @a hdr from server 1 to server 0. */
static void inject_1_to_0(sim_t *sim, const uint8_t *hdr, const uint8_t *pay,
                          size_t len)
{
    assert_int_equal(
        rdp_tl_loopback_inject(sim->lb, 1, 0, hdr, RDP_COLL_HDR_LEN, pay, len),
        PMIX_SUCCESS);
}

/* Messages for a running 2-participant collective that are not exactly
 * its step (a wrong origin or length in the block header, a wrong block
 * count, a wrong step or sender) are dropped as before, and the
 * collective still completes with the right data; a valid block larger
 * than the room kept for it is taken (the generic way). */
static void fast_path_leaves_odd_messages_to_the_generic_checks(void **state)
{
    uint32_t parts[2] = {0, 1};
    uint64_t sig      = rdp_coll_signature(parts, 2);
    uint8_t hdr[RDP_COLL_HDR_LEN];
    uint8_t pay[16];
    rdp_coll_engine_stats_t st;
    sim_t sim;

    (void)state;
    sim_mode = RDP_TL_LOOPBACK_BORROWED;
    sim_create(&sim, 2, base_seed, RDP_COLL_ALG_RD, 0, 0);
    sim_reserve(&sim, 2);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, 3, parts, 2, LEN_SMALL);
    memset(pay, 0, sizeof(pay));
    /* origin 0, not 1 */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_RD, sig, 3,
           2, 1, 0, 1);
    put_block(pay, 0, 4);
    inject_1_to_0(&sim, hdr, pay, 16);
    /* a length that is not the payload's */
    put_block(pay, 1, 5);
    inject_1_to_0(&sim, hdr, pay, 16);
    /* no block */
    encode(hdr, RDP_COLL_MSG_DATA, RDP_COLL_ALLGATHER, RDP_COLL_ALG_RD, sig, 3,
           2, 1, 0, 0);
    inject_1_to_0(&sim, hdr, NULL, 0);
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, 3);
    assert_int_equal(st.fast_completed, 0);
    assert_int_equal(sim.ncalled, 0);
    /* the real one completes it */
    sim_start(&sim, 1, RDP_COLL_ALLGATHER, 3, parts, 2, LEN_SMALL);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, 2);
    assert_true(sim.ops[0].data_ok && sim.ops[1].data_ok);
    assert_int_equal(sim.ops[0].status, PMIX_SUCCESS);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, 3);
    assert_int_equal(st.fast_completed, 1);
    sim_destroy(&sim);
    sim_mode = RDP_TL_LOOPBACK_MIXED;
}

/* A finished collective's block (and its step sends' records) is kept and
 * the next collective that fits is built in it; blocks too small for a later collective are not used
 * for it; whatever is kept is freed by destroy (run under valgrind or
 * ASan for the leak check). */
static void collective_blocks_are_reused(void **state)
{
    enum {
        P   = 2,
        OPS = 10
    };
    uint32_t parts[P] = {0, 1};
    rdp_coll_engine_stats_t st;
    sim_t sim;

    (void)state;
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RD, 0, 0);
    sim_reserve(&sim, 3 * P * OPS);
    /* a barrier's block (no blocks, no own bytes) is too small for an
     * allgather: both are new */
    for (uint64_t op = 0; op < 2; op++) {
        enum rdp_coll_kind kind =
            op == 0 ? RDP_COLL_BARRIER : RDP_COLL_ALLGATHER;

        sim_start(&sim, 0, kind, op, parts, P, LEN_SMALL);
        sim_start(&sim, 1, kind, op, parts, P, LEN_SMALL);
        sim_run(&sim);
    }
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.colls_reused, 0);
    /* then every collective finds a kept block that fits, but op 2: odd
     * operations hand their own block over (sim_start_ex), so op 1's
     * collective block has no room for op 2's own bytes */
    for (uint64_t op = 2; op < 2 * OPS; op++) {
        enum rdp_coll_kind kind =
            op < OPS ? RDP_COLL_ALLGATHER : RDP_COLL_BARRIER;

        sim_start(&sim, 0, kind, op, parts, P, LEN_SMALL);
        sim_start(&sim, 1, kind, op, parts, P, LEN_SMALL);
        sim_run(&sim);
    }
    assert_int_equal(sim.ncalled, 2 * P * OPS);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.colls_reused, 2 * OPS - 3);
    assert_int_equal(st.completed, 2 * OPS);
    /* one step send per collective here: all but the first in a kept
     * send record */
    assert_int_equal(st.sends_reused, 2 * OPS - 1);
    sim_destroy(&sim);
}

/* ---- segmented ring blocks (RDPMIX_COLL_SEG_BYTES) ---- */

static uint64_t seg_saved;

/* The tests below run with pieces of SEG bytes; the harness's knobs are
 * put back afterwards. */
static int seg_setup(void **state)
{
    (void)state;
    seg_saved = test_seg;
    set_seg(SEG);
    return 0;
}

static int seg_teardown(void **state)
{
    (void)state;
    set_seg(seg_saved);
    sim_mode    = RDP_TL_LOOPBACK_MIXED;
    sim_inline  = 0;
    sim_seg_of  = NULL;
    result_hook = NULL;
    sim_ops     = NULL;
    return 0;
}

static const enum rdp_tl_loopback_mode every_mode[] = {
    RDP_TL_LOOPBACK_BORROWED, RDP_TL_LOOPBACK_KEEPABLE, RDP_TL_LOOPBACK_RNDV,
    RDP_TL_LOOPBACK_MIXED};
#define NMODES (sizeof(every_mode) / sizeof(every_mode[0]))

/* Blocks of 0, 1, SEG - 1, SEG, SEG + 1 and 3 SEG + 17 bytes, the same on
 * every server (opid 0..5) or mixed (6..11), over ring sizes from 2 to 33
 * in every payload mode, inline or not: every byte arrives, a segmented
 * block costs one message per piece, and the ring still takes P - 1
 * steps. */
static void ring_pieces_arrive_intact_for_every_size_and_mode(void **state)
{
    static const uint32_t sizes[] = {2, 3, 4, 5, 7, 8, 16, 33};
    (void)state;

    for (int inl = 0; inl < 2; inl++) {
        sim_inline = inl;
        for (size_t m = 0; m < NMODES; m++) {
            sim_mode = every_mode[m];
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                for (uint64_t opid = 0; opid < 12; opid++) {
                    run_full_op(sizes[i], RDP_COLL_ALG_RING, RDP_COLL_ALLGATHER,
                                LEN_SEG, opid,
                                mix(base_seed + opid * 131 + i * 7 + m), 3);
                }
            }
        }
    }
}

/* ---- a spy over the loopback: pieces delivered, sent and fetched ---- */

#define SPY_MAX_EPS  64
#define SPY_MAX_STEP 64
#define SPY_MAX_LOG  4096

typedef struct spy_ep {
    void *ctx;
    const rdp_tl_upcalls_t *up;
    void *arg;
} spy_ep_t;

/* a SEG send, or a fetch (then h.type is 0) */
typedef struct spy_io {
    uint32_t ep;
    rdp_coll_hdr_t h;
    const uint8_t *base;
    size_t len;
} spy_io_t;

static struct {
    spy_ep_t eps[SPY_MAX_EPS];
    uint32_t nbound;
    rdp_tl_upcalls_t up;
    /* SEG messages per endpoint and step, delivered and sent */
    size_t in[SPY_MAX_EPS][SPY_MAX_STEP];
    size_t out[SPY_MAX_EPS][SPY_MAX_STEP];
    size_t lagging; /* forwards sent later than their piece's delivery */
    spy_io_t log[SPY_MAX_LOG];
    size_t nlog;
    int fail_fetches; /* complete every fetch with PMIX_ERR_UNREACH */
} spy;

static uint32_t spy_index(const void *ctx)
{
    for (uint32_t i = 0; i < spy.nbound; i++) {
        if (spy.eps[i].ctx == ctx) {
            return i;
        }
    }
    fail_msg("spy: unknown transport context");
    return 0;
}

static void spy_log(uint32_t ep, const rdp_coll_hdr_t *h, const void *base,
                    size_t len)
{
    if (spy.nlog == SPY_MAX_LOG) {
        fail_msg("spy: log full");
    }
    spy.log[spy.nlog].ep   = ep;
    spy.log[spy.nlog].h    = *h;
    spy.log[spy.nlog].base = base;
    spy.log[spy.nlog].len  = len;
    spy.nlog++;
}

static enum rdp_tl_rx_disp spy_recv(void *arg, const rdp_tl_rx_t *rx)
{
    spy_ep_t *ep = arg;
    rdp_coll_hdr_t h;

    if (rdp_coll_hdr_decode(rx->hdr, rx->hdr_len, &h) == PMIX_SUCCESS
        && h.type == RDP_COLL_MSG_SEG && h.step < SPY_MAX_STEP) {
        spy.in[ep - spy.eps][h.step]++;
    }
    return ep->up->recv(ep->arg, rx);
}

static void spy_peer_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    spy_ep_t *ep = arg;

    ep->up->peer_failed(ep->arg, peer, status);
}

static pmix_status_t spy_bind(void *ctx, const rdp_tl_upcalls_t *up, void *arg)
{
    spy_ep_t *ep = &spy.eps[spy.nbound];

    assert_true(spy.nbound < SPY_MAX_EPS);
    ep->ctx            = ctx;
    ep->up             = up;
    ep->arg            = arg;
    spy.up.recv        = spy_recv;
    spy.up.peer_failed = spy_peer_failed;
    spy.nbound++;
    return rdp_tl_loopback_ops()->bind(ctx, &spy.up, ep);
}

static pmix_status_t spy_send(void *ctx, uint32_t peer, const void *hdr,
                              size_t hdr_len, const rdp_iov_t *iov,
                              size_t iovcnt, rdp_tl_done_cb_t cb, void *cb_arg)
{
    uint32_t ep = spy_index(ctx);
    rdp_coll_hdr_t h;

    if (rdp_coll_hdr_decode(hdr, hdr_len, &h) == PMIX_SUCCESS
        && h.type == RDP_COLL_MSG_SEG) {
        assert_int_equal(iovcnt, 1);
        assert_true(h.step < SPY_MAX_STEP);
        spy.out[ep][h.step]++;
        /* a forward leaves while its piece is delivered (borrowed and
         * keepable payloads are placed inside the upcall) */
        if (h.step > 0 && spy.out[ep][h.step] != spy.in[ep][h.step - 1]) {
            spy.lagging++;
        }
        spy_log(ep, &h, iov[0].base, iov[0].len);
    }
    return rdp_tl_loopback_ops()->send(ctx, peer, hdr, hdr_len, iov, iovcnt, cb,
                                       cb_arg);
}

typedef struct spy_fetch_ctx {
    rdp_tl_done_cb_t cb;
    void *arg;
} spy_fetch_ctx_t;

static void spy_fetch_failed(void *arg, pmix_status_t status)
{
    spy_fetch_ctx_t fc = *(spy_fetch_ctx_t *)arg;

    (void)status;
    free(arg);
    fc.cb(fc.arg, PMIX_ERR_UNREACH);
}

static pmix_status_t spy_fetch(void *ctx, void *desc, void *buf, size_t len,
                               rdp_tl_done_cb_t cb, void *cb_arg)
{
    rdp_coll_hdr_t h = {0};
    spy_fetch_ctx_t *fc;
    pmix_status_t status;

    spy_log(spy_index(ctx), &h, buf, len);
    if (!spy.fail_fetches) {
        return rdp_tl_loopback_ops()->fetch(ctx, desc, buf, len, cb, cb_arg);
    }
    fc = malloc(sizeof(*fc));
    assert_non_null(fc);
    fc->cb  = cb;
    fc->arg = cb_arg;
    status =
        rdp_tl_loopback_ops()->fetch(ctx, desc, buf, len, spy_fetch_failed, fc);
    if (status != PMIX_SUCCESS) {
        free(fc);
    }
    return status;
}

/* Route sim_create's engines through the spy (NULL: back to normal). */
static void spy_on(int on)
{
    static rdp_tl_ops_t ops;

    memset(&spy, 0, sizeof(spy));
    ops       = *rdp_tl_loopback_ops();
    ops.bind  = spy_bind;
    ops.send  = spy_send;
    ops.fetch = spy_fetch;
    sim_ops   = on ? &ops : NULL;
}

/* Every piece engine op->me sent was sent from the block the result hands
 * out (my own block's copy, or where a received piece landed), and every
 * payload it fetched went straight into a result block. */
static void check_zero_copy(const op_t *op, const rdp_coll_result_t *res)
{
    assert_int_equal(res->status, PMIX_SUCCESS);
    for (size_t i = 0; i < spy.nlog; i++) {
        const spy_io_t *io = &spy.log[i];
        int inside         = 0;

        if (io->ep != op->me) {
            continue;
        }
        for (uint32_t b = 0; b < res->nblocks; b++) {
            const uint8_t *d = res->blocks[b].data;

            if (io->h.type == RDP_COLL_MSG_SEG) {
                inside |= res->blocks[b].origin == io->h.seg_origin
                          && io->base == d + io->h.seg_off;
            } else {
                inside |= io->base >= d
                          && io->base + io->len <= d + res->blocks[b].len;
            }
        }
        if (!inside) {
            fail_msg("engine %u: %s %zu bytes from/to a buffer outside the "
                     "result",
                     op->me, io->h.type != 0 ? "sent" : "fetched", io->len);
        }
    }
}

/* A piece is forwarded the moment it has landed (before its block is
 * whole), from where it landed; rendezvous pieces are fetched straight
 * into their block. */
static void
pieces_are_forwarded_as_they_land_from_where_they_landed(void **state)
{
    static const uint32_t sizes[] = {3, 5, 8};
    (void)state;

    result_hook = check_zero_copy;
    for (size_t m = 0; m < NMODES; m++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            uint32_t P      = sizes[i];
            uint32_t *parts = iota(P);
            size_t forwards = 0;
            sim_t sim;

            spy_on(1);
            sim_create(&sim, P, mix(base_seed + m * 10 + i), RDP_COLL_ALG_RING,
                       0, 0);
            sim_reserve(&sim, P);
            rdp_tl_loopback_set_mode(sim.lb, every_mode[m]);
            /* every block 3 SEG + 17 bytes: 4 pieces; all started before
             * anything is delivered, so no piece waits in an early queue */
            for (uint32_t u = 0; u < P; u++) {
                sim_start(&sim, u, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SEG);
            }
            sim_run(&sim);
            for (uint32_t u = 0; u < P; u++) {
                assert_int_equal(sim.ops[u].status, PMIX_SUCCESS);
                assert_true(sim.ops[u].data_ok);
                assert_int_equal(sim.ops[u].nsteps, P - 1);
                assert_int_equal(spy.out[u][0], 4);
                for (uint32_t st = 1; st + 1 < P; st++) {
                    assert_int_equal(spy.out[u][st], 4);
                    forwards += spy.out[u][st];
                }
            }
            assert_int_equal(forwards, (size_t)P * (P - 2) * 4);
            if (every_mode[m] == RDP_TL_LOOPBACK_BORROWED
                || every_mode[m] == RDP_TL_LOOPBACK_KEEPABLE) {
                assert_int_equal(spy.lagging, 0);
            }
            sim_destroy(&sim);
            free(parts);
        }
    }
    spy_on(0);
}

static void concurrent_segmented_collectives_complete(void **state)
{
    (void)state;

    run_overlapping(RDP_COLL_ALG_RING, LEN_SEG);
}

static uint64_t mixed_seg(uint32_t u)
{
    static const uint64_t segs[] = {0, 1, 7, SEG, 4096, 333};

    return segs[u % (sizeof(segs) / sizeof(segs[0]))];
}

/* Only the originator picks the pieces: servers with different piece
 * sizes (or none) interoperate; with segmentation off a block is one
 * message per step. */
static void piece_size_is_the_originators_choice(void **state)
{
    static const uint32_t sizes[] = {2, 5, 8};
    (void)state;

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (uint64_t opid = 5; opid < 12; opid++) {
            set_seg(0);
            run_full_op(sizes[i], RDP_COLL_ALG_RING, RDP_COLL_ALLGATHER,
                        LEN_SEG, opid, mix(base_seed + opid), 2);
            sim_seg_of = mixed_seg;
            run_full_op(sizes[i], RDP_COLL_ALG_RING, RDP_COLL_ALLGATHER,
                        LEN_SEG, opid, mix(base_seed + opid + 100), 2);
            sim_seg_of = NULL;
        }
    }
}

/* A server dies while pieces stream through it.  When nothing of it gets
 * out, no survivor can complete and every one fails naming it; when it
 * dies at a random point, survivors fail the same way or complete with
 * the right data, and the collective without it completes. */
static void dead_peer_mid_stream_fails_every_survivor(void **state)
{
    enum {
        P    = 8,
        DEAD = 3
    };
    (void)state;

    for (size_t m = 0; m < NMODES; m++) {
        uint32_t *parts = iota(P);
        uint64_t before = 0;
        sim_t sim;

        sim_mode = every_mode[m];
        sim_create(&sim, P, mix(base_seed + m), RDP_COLL_ALG_RING, 0, 0);
        sim_reserve(&sim, P);
        rdp_tl_loopback_drop(sim.lb, DEAD, UINT32_MAX);
        for (uint32_t u = 0; u < P; u++) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SEG);
            before += rdp_tl_loopback_sent(sim.lb, u);
        }
        /* mid-stream: pieces forwarded (more sent than the 4 pieces of
         * every own block), nobody done */
        sim_step(&sim, 6 * P);
        {
            uint64_t now = 0;

            for (uint32_t u = 0; u < P; u++) {
                now += rdp_tl_loopback_sent(sim.lb, u);
            }
            assert_true(now > before);
        }
        assert_int_equal(sim.ncalled, 0);
        rdp_tl_loopback_kill(sim.lb, DEAD);
        sim_run(&sim);
        assert_int_equal(sim.ncalled, P - 1);
        for (uint32_t u = 0; u < P; u++) {
            if (sim.ops[u].me == DEAD) {
                continue;
            }
            assert_int_equal(sim.ops[u].status, PMIX_ERR_UNREACH);
            assert_int_equal(sim.ops[u].failed_peer, DEAD);
        }
        sim_destroy(&sim);
        free(parts);
    }
    for (uint64_t seed = 0; seed < 12; seed++) {
        run_dead_peer(RDP_COLL_ALG_RING, LEN_SEG, 5, 8,
                      mix(base_seed + seed * 3),
                      (size_t)(mix(base_seed + seed) % (24 * 40)));
    }
}

/* Every fetch fails (the sender died while we fetched): the fetching
 * server fails the collective naming the sender and tells the others. */
static void failed_fetch_fails_the_collective_everywhere(void **state)
{
    enum {
        P = 5
    };
    (void)state;

    /* opid 1: one-byte blocks, whole messages; 5: pieces */
    for (uint64_t opid = 1; opid <= 5; opid += 4) {
        uint32_t *parts = iota(P);
        sim_t sim;

        spy_on(1);
        spy.fail_fetches = 1;
        sim_mode         = RDP_TL_LOOPBACK_RNDV;
        sim_create(&sim, P, mix(base_seed + opid), RDP_COLL_ALG_RING, 0, 0);
        sim_reserve(&sim, P);
        for (uint32_t u = 0; u < P; u++) {
            sim_start(&sim, u, RDP_COLL_ALLGATHER, opid, parts, P, LEN_SEG);
        }
        sim_run(&sim);
        assert_int_equal(sim.ncalled, P);
        for (uint32_t u = 0; u < P; u++) {
            assert_int_equal(sim.ops[u].status, PMIX_ERR_UNREACH);
            assert_true(sim.ops[u].failed_peer < P);
        }
        sim_destroy(&sim);
        free(parts);
        spy_on(0);
    }
}

static void destroy_mid_stream_is_clean(void **state)
{
    (void)state;

    for (size_t nev = 0; nev < 400; nev += 57) {
        run_destroy_midway(RDP_COLL_ALG_RING, LEN_SEG, 5, nev);
        run_destroy_midway(RDP_COLL_ALG_RING, LEN_SEG, 9, nev);
    }
}

/* Pieces reaching a server before it starts wait in the early queue (and
 * count against its bounds); they are placed and forwarded at start.  An
 * overflow fails the collective cleanly. */
static void early_pieces_wait_for_the_start(void **state)
{
    enum {
        P    = 5,
        LATE = 2
    };
    (void)state;

    for (size_t m = 0; m < NMODES; m++) {
        for (size_t partial = 0; partial < 3; partial++) {
            uint32_t *parts = iota(P);
            rdp_coll_engine_stats_t st;
            sim_t sim;

            sim_mode = every_mode[m];
            sim_create(&sim, P, mix(base_seed + m * 3 + partial),
                       RDP_COLL_ALG_RING, 0, 0);
            sim_reserve(&sim, P);
            for (uint32_t u = 0; u < P; u++) {
                if (u != LATE) {
                    sim_start(&sim, u, RDP_COLL_ALLGATHER, 5 + 4 * partial,
                              parts, P, LEN_SEG);
                }
            }
            /* partial 0: everything that can arrive has; otherwise some
             * early pieces may still be fetching when LATE starts */
            if (partial == 0) {
                sim_run(&sim);
                rdp_coll_engine_get_stats(sim.eng[LATE], &st);
                assert_true(st.early_msgs >= 4);
                assert_int_equal(sim.ncalled, 0);
            } else {
                sim_step(&sim, 20 * partial);
            }
            sim_start(&sim, LATE, RDP_COLL_ALLGATHER, 5 + 4 * partial, parts, P,
                      LEN_SEG);
            sim_run(&sim);
            assert_int_equal(sim.ncalled, P);
            for (uint32_t u = 0; u < P; u++) {
                assert_int_equal(sim.ops[u].status, PMIX_SUCCESS);
                assert_true(sim.ops[u].data_ok);
                assert_int_equal(sim.ops[u].nsteps, P - 1);
                rdp_coll_engine_get_stats(sim.eng[u], &st);
                assert_int_equal(st.early_msgs, 0);
                assert_int_equal(st.early_bytes, 0);
                assert_int_equal(st.dropped, 0);
            }
            sim_destroy(&sim);
            free(parts);
        }
    }
    /* beyond the queue's bound (3 messages) LATE fails at start with
     * PMIX_ERR_OUT_OF_RESOURCE, and so does everyone: its block never
     * left */
    {
        uint32_t *parts = iota(P);
        rdp_coll_engine_stats_t st;
        sim_t sim;

        sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 3, 0);
        sim_reserve(&sim, P);
        for (uint32_t u = 0; u < P; u++) {
            if (u != LATE) {
                sim_start(&sim, u, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SEG);
            }
        }
        sim_run(&sim);
        rdp_coll_engine_get_stats(sim.eng[LATE], &st);
        assert_true(st.early_overflow > 0);
        assert_int_equal(sim.ncalled, 0);
        sim_start(&sim, LATE, RDP_COLL_ALLGATHER, 5, parts, P, LEN_SEG);
        sim_run(&sim);
        assert_int_equal(sim.ncalled, P);
        for (uint32_t u = 0; u < P; u++) {
            assert_int_equal(sim.ops[u].status, PMIX_ERR_OUT_OF_RESOURCE);
        }
        sim_destroy(&sim);
        free(parts);
    }
}

/* ---- hostile pieces ---- */

/* A SEG message as engine @a src would send it in step @a step of ring
 * allgather @a opid over 0..P-1, for bytes [off, off + len) of a block of
 * @a total bytes from @a origin; the payload is the right bytes of
 * block_byte (or @a len bytes given in @a pay). */
typedef struct piece_msg {
    rdp_coll_hdr_t h;
    uint8_t hdr[RDP_COLL_SEG_HDR_LEN];
    size_t hdr_len;
    uint8_t *pay;
    size_t pay_len;
} piece_msg_t;

static void piece_msg_init(piece_msg_t *pm, uint32_t P, uint64_t opid,
                           uint32_t src, uint32_t step, uint32_t origin,
                           uint64_t total, uint64_t off, uint32_t len)
{
    uint32_t *parts = iota(P);

    memset(pm, 0, sizeof(*pm));
    pm->h.type       = RDP_COLL_MSG_SEG;
    pm->h.kind       = RDP_COLL_ALLGATHER;
    pm->h.alg        = RDP_COLL_ALG_RING;
    pm->h.sig        = rdp_coll_signature(parts, P);
    pm->h.opid       = opid;
    pm->h.nparts     = P;
    pm->h.sender     = src;
    pm->h.step       = step;
    pm->h.nblocks    = 1;
    pm->h.aux        = UINT32_MAX;
    pm->h.seg_origin = origin;
    pm->h.seg_len    = len;
    pm->h.seg_total  = total;
    pm->h.seg_off    = off;
    pm->pay_len      = len;
    pm->pay          = malloc(len > 0 ? len : 1);
    assert_non_null(pm->pay);
    for (uint32_t j = 0; j < len; j++) {
        pm->pay[j] = block_byte(origin, opid, (size_t)(off + j));
    }
    free(parts);
}

/* Encode @a pm and queue it from h.sender (or @a src_override) to 0. */
static void piece_msg_inject(sim_t *sim, piece_msg_t *pm)
{
    pm->hdr_len = rdp_coll_hdr_encode(&pm->h, pm->hdr);
    assert_int_equal(rdp_tl_loopback_inject(sim->lb, pm->h.sender, 0, pm->hdr,
                                            pm->hdr_len, pm->pay, pm->pay_len),
                     PMIX_SUCCESS);
    free(pm->pay);
    pm->pay = NULL;
}

/* Queue a whole-block DATA message from h->sender to engine 0: step
 * @a step of the collective of @a h, carrying the @a len genuine bytes of
 * the block of @a origin. */
static void inject_whole(sim_t *sim, const rdp_coll_hdr_t *h, uint32_t step,
                         uint32_t origin, size_t len)
{
    rdp_coll_hdr_t d = *h;
    uint8_t hdr[RDP_COLL_HDR_LEN];
    uint8_t *pay = malloc(RDP_COLL_BLK_HDR_LEN + len);

    assert_non_null(pay);
    d.type    = RDP_COLL_MSG_DATA;
    d.step    = step;
    d.nblocks = 1;
    rdp_coll_hdr_encode(&d, hdr);
    rdp_coll_put_u32(pay, origin);
    rdp_coll_put_u64(pay + 4, len);
    fill_block(pay + RDP_COLL_BLK_HDR_LEN, origin, d.opid, len);
    assert_int_equal(rdp_tl_loopback_inject(sim->lb, d.sender, 0, hdr,
                                            sizeof(hdr), pay,
                                            RDP_COLL_BLK_HDR_LEN + len),
                     PMIX_SUCCESS);
    free(pay);
}

/* Engine 0 of a 4-server ring gets its three blocks (from 3 at steps 0,
 * 1, 2: blocks of 3, 2, 1) only as crafted messages, mixed with hostile
 * ones.  Each hostile one is dropped and counted, nothing else changes;
 * the genuine pieces complete the collective with the right bytes, and
 * what engine 0 forwarded lets the others complete too. */
static void hostile_pieces_are_dropped_and_counted(void **state)
{
    enum {
        P    = 4,
        OPID = 8 /* blocks: 0 SEG - 1, 1 SEG, 2 SEG + 1, 3 3 SEG + 17 */
    };
    const uint64_t t3 = block_len(LEN_SEG, 3, OPID);
    const uint64_t t2 = block_len(LEN_SEG, 2, OPID);
    uint32_t *parts   = iota(P);
    size_t hostile    = 0;
    rdp_coll_engine_stats_t st;
    piece_msg_t pm;
    sim_t sim;
    (void)state;

#define HOSTILE()                                   \
    do {                                            \
        piece_msg_inject(&sim, &pm);                \
        hostile++;                                  \
        sim_run(&sim);                              \
        rdp_coll_engine_get_stats(sim.eng[0], &st); \
        assert_int_equal(st.dropped, hostile);      \
    } while (0)

    assert_int_equal(t3, 3 * SEG + 17);
    assert_int_equal(t2, SEG + 1);
    assert_int_equal(block_len(LEN_SEG, 1, OPID), SEG);
    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 0, 0);
    sim_reserve(&sim, P);
    sim_start(&sim, 0, RDP_COLL_ALLGATHER, OPID, parts, P, LEN_SEG);
    sim_run(&sim);

    /* wrong hop: 1 does not send to 0 */
    piece_msg_init(&pm, P, OPID, 1, 0, 3, t3, 0, SEG);
    HOSTILE();
    /* right hop, wrong block for it (step 0 carries the block of 3) */
    piece_msg_init(&pm, P, OPID, 3, 0, 2, t2, 0, SEG);
    HOSTILE();
    /* a step beyond the ring */
    piece_msg_init(&pm, P, OPID, 3, 3, 3, t3, 0, SEG);
    HOSTILE();
    /* offset past the total, and a piece running past it */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, t3 + 1, 10);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, t3 - 5, 10);
    HOSTILE();
    /* an offset that would wrap around */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, UINT64_MAX - 4, 10);
    HOSTILE();
    /* a huge total, beyond RDP_COLL_MAX_BLOCK */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, RDP_COLL_MAX_BLOCK + 1, 0, SEG);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, UINT64_MAX, 0, SEG);
    HOSTILE();
    /* an empty piece, and a length that is not the payload's */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, 0);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    pm.pay_len = SEG - 1;
    HOSTILE();
    /* not a ring, not an allgather, several blocks, a status */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    pm.h.alg = RDP_COLL_ALG_BRUCK;
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    pm.h.nblocks = 2;
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    pm.h.status = -1;
    HOSTILE();
    /* a piece header cut to the size of the others */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    pm.hdr_len = rdp_coll_hdr_encode(&pm.h, pm.hdr);
    assert_int_equal(rdp_tl_loopback_inject(sim.lb, 3, 0, pm.hdr,
                                            RDP_COLL_HDR_LEN, pm.pay,
                                            pm.pay_len),
                     PMIX_SUCCESS);
    free(pm.pay);
    hostile++;
    sim_run(&sim);

    /* the first genuine piece of the block of 3 ... */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    piece_msg_inject(&sim, &pm);
    sim_run(&sim);
    /* ... then a duplicate, an overlap and another total */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 0, SEG);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, SEG / 2, SEG);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3 + 1, SEG, SEG);
    HOSTILE();
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3 - 1, SEG, SEG);
    HOSTILE();
    /* a whole-block message for a step whose pieces are arriving */
    inject_whole(&sim, &pm.h, 0, 3, 0);
    hostile++;
    sim_run(&sim);
    /* the rest of the block of 3, last piece first, and both pieces of the
     * block of 2, forwarded by 3 at step 1 */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 3 * SEG, 17);
    piece_msg_inject(&sim, &pm);
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, 2 * SEG, SEG);
    piece_msg_inject(&sim, &pm);
    piece_msg_init(&pm, P, OPID, 3, 1, 2, t2, SEG, 1);
    piece_msg_inject(&sim, &pm);
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, SEG, SEG);
    piece_msg_inject(&sim, &pm);
    piece_msg_init(&pm, P, OPID, 3, 1, 2, t2, 0, SEG);
    piece_msg_inject(&sim, &pm);
    sim_run(&sim);
    /* a late piece of a complete step */
    piece_msg_init(&pm, P, OPID, 3, 0, 3, t3, SEG, SEG);
    HOSTILE();
    assert_int_equal(sim.ncalled, 0);
    /* step 2: the block of 1 (SEG bytes) is whole, as 3 would send it */
    inject_whole(&sim, &pm.h, 2, 1, SEG);
    sim_run(&sim);
    assert_int_equal(sim.ncalled, 1);
    assert_int_equal(sim.ops[0].status, PMIX_SUCCESS);
    assert_true(sim.ops[0].data_ok);
    assert_int_equal(sim.ops[0].nsteps, P - 1);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_int_equal(st.dropped, hostile);
    /* engine 0 forwarded the genuine pieces: the others complete */
    start_others_and_check(&sim, OPID, parts, LEN_SEG);
#undef HOSTILE
    sim_destroy(&sim);
    free(parts);
}

/* A forged first piece from the right neighbour announces the wrong total:
 * the genuine pieces are then dropped (another total) and the block of 3
 * can never complete, so the collective ends by engine 0's timeout, which
 * its abort spreads.  Engine 3 needs nothing that passes through 0 and
 * may complete first. */
static void forged_total_ends_by_timeout(void **state)
{
    enum {
        P    = 4,
        OPID = 5
    };
    uint32_t *parts  = iota(P);
    const uint64_t t = block_len(LEN_SEG, 3, OPID);
    rdp_coll_engine_stats_t st;
    piece_msg_t pm;
    sim_t sim;
    (void)state;

    sim_create(&sim, P, base_seed, RDP_COLL_ALG_RING, 0, 0);
    sim_reserve(&sim, P);
    sim_start_ex(&sim, 0, RDP_COLL_ALLGATHER, OPID, parts, P, LEN_SEG,
                 RDP_COLL_SIZE_SMALL, 0.05);
    piece_msg_init(&pm, P, OPID, 3, 0, 3, 64 * t, 0, SEG);
    piece_msg_inject(&sim, &pm);
    sim_run(&sim);
    for (uint32_t u = 1; u < P; u++) {
        sim_start_ex(&sim, u, RDP_COLL_ALLGATHER, OPID, parts, P, LEN_SEG,
                     RDP_COLL_SIZE_SMALL, 30);
    }
    sim_run(&sim);
    rdp_coll_engine_get_stats(sim.eng[0], &st);
    assert_true(st.dropped >= 3);
    wait_for_timeouts(&sim, 3);
    sim_destroy(&sim);
    free(parts);
}

static int setup_seed(void **state)
{
    const char *s = getenv("RDPMIX_TEST_SEED");

    base_seed = s != NULL ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    printf("# RDPMIX_TEST_SEED=%llu\n", (unsigned long long)base_seed);
    fflush(stdout);
    /* the engines read RDPMIX_COLL_SEG_BYTES; the checks must agree */
    return rdp_coll_seg_bytes_from_env(&test_seg) == PMIX_SUCCESS ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_algorithm_completes_for_every_p_up_to_64),
        cmocka_unit_test(open_payloads_travel_intact_with_every_algorithm),
        cmocka_unit_test(open_payload_forged_on_an_unisolated_job_is_dropped),
        cmocka_unit_test(log_step_algorithms_scale_to_4096),
        cmocka_unit_test(barrier_and_ring_scale),
        cmocka_unit_test(random_delivery_orders_with_many_seeds),
        cmocka_unit_test(blocks_of_zero_bytes_and_one_mib_travel_intact),
        cmocka_unit_test(every_payload_delivery_mode_works),
        cmocka_unit_test(small_payloads_are_sent_contiguous),
        cmocka_unit_test(concurrent_collectives_on_overlapping_sets),
        cmocka_unit_test(dead_peer_fails_the_collective_everywhere),
        cmocka_unit_test(peer_dead_before_start_fails_every_survivor),
        cmocka_unit_test(silent_peer_times_out_without_a_loop),
        cmocka_unit_test(timeout_fires_from_a_loop_timer),
        cmocka_unit_test(later_shorter_timeouts_fire_first),
        cmocka_unit_test(early_queue_overflow_fails_the_collective_cleanly),
        cmocka_unit_test(early_queue_byte_bound_is_enforced),
        cmocka_unit_test(malformed_messages_are_dropped_without_harm),
        cmocka_unit_test(duplicate_and_late_messages_are_dropped),
        cmocka_unit_test(an_unneeded_own_block_is_freed_once_sent),
        cmocka_unit_test(algorithm_disagreement_fails_instead_of_hanging),
        cmocka_unit_test(start_validates_its_arguments),
        cmocka_unit_test(engine_create_rejects_bad_configuration),
        cmocka_unit_test(single_participant_completes_later_not_inside_start),
        cmocka_unit_test(env_forces_the_algorithm),
        cmocka_unit_test(destroy_with_messages_in_flight_is_clean),
        cmocka_unit_test(abort_from_a_non_participant_is_ignored),
        cmocka_unit_test(cancel_fails_here_only_and_later),
        cmocka_unit_test(finished_key_memory_is_bounded),
        cmocka_unit_test(keytab_links_nodes_in_place_and_grows),
        cmocka_unit_test(keytab_removes_from_any_place_in_a_chain),
        cmocka_unit_test(key_memory_keeps_the_newest_cap_keys),
        cmocka_unit_test(late_message_misses_the_lookup_cache),
        cmocka_unit_test(two_participants_take_the_fast_path_three_do_not),
        cmocka_unit_test(fast_path_sends_and_results_match_the_generic_path),
        cmocka_unit_test(fast_path_leaves_odd_messages_to_the_generic_checks),
        cmocka_unit_test(collective_blocks_are_reused),
        cmocka_unit_test(early_queues_and_receive_records_are_reused),
        cmocka_unit_test(step_0_is_sent_before_the_early_hand_over),
        cmocka_unit_test(completions_in_a_pass_arm_no_deferred_callback),
        cmocka_unit_test_setup_teardown(
            ring_pieces_arrive_intact_for_every_size_and_mode, seg_setup,
            seg_teardown),
        cmocka_unit_test_setup_teardown(
            pieces_are_forwarded_as_they_land_from_where_they_landed, seg_setup,
            seg_teardown),
        cmocka_unit_test_setup_teardown(
            concurrent_segmented_collectives_complete, seg_setup, seg_teardown),
        cmocka_unit_test_setup_teardown(piece_size_is_the_originators_choice,
                                        seg_setup, seg_teardown),
        cmocka_unit_test_setup_teardown(
            dead_peer_mid_stream_fails_every_survivor, seg_setup, seg_teardown),
        cmocka_unit_test_setup_teardown(
            failed_fetch_fails_the_collective_everywhere, seg_setup,
            seg_teardown),
        cmocka_unit_test_setup_teardown(destroy_mid_stream_is_clean, seg_setup,
                                        seg_teardown),
        cmocka_unit_test_setup_teardown(early_pieces_wait_for_the_start,
                                        seg_setup, seg_teardown),
        cmocka_unit_test_setup_teardown(hostile_pieces_are_dropped_and_counted,
                                        seg_setup, seg_teardown),
        cmocka_unit_test_setup_teardown(forged_total_ends_by_timeout, seg_setup,
                                        seg_teardown),
    };

    /* e.g. RDPMIX_TEST_FILTER="dead_peer*" to run one scenario */
    if (getenv("RDPMIX_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("RDPMIX_TEST_FILTER"));
    }
    return cmocka_run_group_tests_name("coll_engine", tests, setup_seed, NULL);
}
