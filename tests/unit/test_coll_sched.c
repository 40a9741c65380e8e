/* test_coll_sched.c - every schedule delivers every block exactly once */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/sched.h"

#define MAX_P 1024

/* cheap check for the hot loops (cmocka's asserts are function calls) */
#define CHECK(_cond)                                                  \
    do {                                                              \
        if (!(_cond)) {                                               \
            fail_msg("%s:%d: %s failed", __FILE__, __LINE__, #_cond); \
        }                                                             \
    } while (0)

static int same_xfer_sets(const rdp_sched_xfer_t *a, const rdp_sched_xfer_t *b)
{
    if (a->nranges != b->nranges) {
        return 0;
    }
    for (uint32_t i = 0; i < a->nranges; i++) {
        if (a->ranges[i].first != b->ranges[i].first
            || a->ranges[i].count != b->ranges[i].count) {
            return 0;
        }
    }
    return 1;
}

/* Run @a alg for @a n ranks abstractly: every send pairs with the matching
 * receive, senders only send blocks they hold, receivers never get a block
 * twice, and at the end every rank holds every block. Returns 0 or fails. */
/* Which blocks each rank holds, indexed by (block - rank) mod n then by
 * rank: a ring step touches one row in rank order, which keeps the
 * exhaustive check fast. */
#define WORDS(_n)       (((size_t)(_n) + 63) / 64)
#define REL(_r, _b, _n) ((_b) >= (_r) ? (_b) - (_r) : (_b) + (_n) - (_r))
#define HAS(_have, _w, _r, _b) \
    (((_have)[(size_t)REL(_r, _b, n) * (_w) + (_r) / 64] >> ((_r) % 64)) & 1)
#define SET(_have, _w, _r, _b)                                         \
    ((_have)[(size_t)REL(_r, _b, n) * (_w) + (_r) / 64] |= (uint64_t)1 \
                                                           << ((_r) % 64))

static void simulate_allgather(enum rdp_coll_alg alg, uint32_t n,
                               uint64_t *have, rdp_sched_step_t *st)
{
    uint32_t nsteps   = rdp_sched_nsteps(alg, n);
    uint64_t received = 0;
    size_t w          = WORDS(n);

    memset(have, 0, (size_t)n * w * 8);
    for (uint32_t r = 0; r < n; r++) {
        SET(have, w, r, r);
    }
    for (uint32_t s = 0; s < nsteps; s++) {
        for (uint32_t r = 0; r < n; r++) {
            CHECK(rdp_sched_step(alg, r, n, s, &st[r]) == PMIX_SUCCESS);
        }
        for (uint32_t r = 0; r < n; r++) {
            const rdp_sched_xfer_t *x = &st[r].send;

            if (x->peer < 0) {
                CHECK(x->nranges == 0);
                continue;
            }
            CHECK((uint32_t)x->peer < n && (uint32_t)x->peer != r);
            /* the peer expects exactly this from r at this step */
            CHECK(st[x->peer].recv.peer == (int32_t)r);
            CHECK(same_xfer_sets(x, &st[x->peer].recv));
            for (uint32_t k = 0; k < x->nranges; k++) {
                CHECK(x->ranges[k].first < n);
                CHECK(x->ranges[k].count <= n);
                for (uint32_t i = 0; i < x->ranges[k].count; i++) {
                    uint32_t b = x->ranges[k].first + i;
                    b          = b >= n ? b - n : b;
                    if (!HAS(have, w, r, b)) {
                        fail_msg("%s n %u step %u: rank %u sends block %u "
                                 "it does not hold",
                                 rdp_coll_alg_name(alg), n, s, r, b);
                    }
                }
            }
        }
        for (uint32_t r = 0; r < n; r++) {
            const rdp_sched_xfer_t *x = &st[r].recv;

            if (x->peer < 0) {
                CHECK(x->nranges == 0);
                continue;
            }
            CHECK(st[x->peer].send.peer == (int32_t)r);
            for (uint32_t k = 0; k < x->nranges; k++) {
                for (uint32_t i = 0; i < x->ranges[k].count; i++) {
                    uint32_t b = x->ranges[k].first + i;
                    b          = b >= n ? b - n : b;
                    if (HAS(have, w, r, b)) {
                        fail_msg("%s n %u step %u: rank %u gets block %u "
                                 "twice",
                                 rdp_coll_alg_name(alg), n, s, r, b);
                    }
                    SET(have, w, r, b);
                    received++;
                }
            }
        }
    }
    /* no block arrived twice, so n(n-1) arrivals plus the own blocks
     * cover every (rank, block) pair */
    {
        uint64_t held = 0;
        for (size_t i = 0; i < (size_t)n * w; i++) {
            held += (uint64_t)__builtin_popcountll(have[i]);
        }
        if (held != (uint64_t)n * n) {
            fail_msg("%s n %u: %llu of %llu blocks held at the end",
                     rdp_coll_alg_name(alg), n, (unsigned long long)held,
                     (unsigned long long)n * n);
        }
    }
    assert_int_equal(received, (uint64_t)n * (n - 1));
}

static uint32_t floor_log2(uint32_t n)
{
    uint32_t k = 0;

    while ((n >> (k + 1)) != 0) {
        k++;
    }
    return k;
}

static void run_all_sizes(enum rdp_coll_alg alg)
{
    uint64_t *have       = malloc((size_t)MAX_P * WORDS(MAX_P) * 8);
    rdp_sched_step_t *st = malloc(MAX_P * sizeof(*st));

    assert_non_null(have);
    assert_non_null(st);
    for (uint32_t n = 1; n <= MAX_P; n++) {
        simulate_allgather(alg, n, have, st);
    }
    free(st);
    free(have);
}

static void
recursive_doubling_delivers_every_block_once_for_p_1_to_1024(void **state)
{
    for (uint32_t n = 1; n <= MAX_P; n++) {
        uint32_t k = floor_log2(n);
        assert_int_equal(rdp_sched_rd_nsteps(n),
                         (n & (n - 1)) == 0 ? k : k + 2);
    }
    run_all_sizes(RDP_COLL_ALG_RD);
}

static void bruck_delivers_every_block_once_in_ceil_log2_steps(void **state)
{
    for (uint32_t n = 1; n <= MAX_P; n++) {
        uint32_t k = rdp_sched_ceil_log2(n);
        assert_int_equal(rdp_sched_bruck_nsteps(n), k);
        assert_true(((uint64_t)1 << k) >= n);
        assert_true(k == 0 || ((uint64_t)1 << (k - 1)) < n);
    }
    run_all_sizes(RDP_COLL_ALG_BRUCK);
}

static void ring_delivers_every_block_once_in_p_minus_1_steps(void **state)
{
    for (uint32_t n = 1; n <= MAX_P; n++) {
        assert_int_equal(rdp_sched_ring_nsteps(n), n - 1);
    }
    run_all_sizes(RDP_COLL_ALG_RING);
}

/* Dissemination: knowledge of every rank's arrival reaches every rank. */
static void
dissemination_barrier_informs_everyone_in_ceil_log2_rounds(void **state)
{
    size_t words         = (MAX_P + 63) / 64;
    uint64_t *know       = malloc((size_t)MAX_P * words * 8);
    uint64_t *next       = malloc((size_t)MAX_P * words * 8);
    rdp_sched_step_t *st = malloc(MAX_P * sizeof(*st));

    assert_non_null(know);
    assert_non_null(next);
    assert_non_null(st);
    for (uint32_t n = 1; n <= MAX_P; n++) {
        uint32_t nsteps = rdp_sched_dissem_nsteps(n);

        assert_int_equal(nsteps, rdp_sched_ceil_log2(n));
        memset(know, 0, (size_t)n * words * 8);
        for (uint32_t r = 0; r < n; r++) {
            know[r * words + r / 64] |= (uint64_t)1 << (r % 64);
        }
        for (uint32_t s = 0; s < nsteps; s++) {
            memcpy(next, know, (size_t)n * words * 8);
            for (uint32_t r = 0; r < n; r++) {
                CHECK(rdp_sched_dissem_step(r, n, s, &st[r]) == PMIX_SUCCESS);
                CHECK(st[r].send.nranges == 0 && st[r].recv.nranges == 0);
            }
            for (uint32_t r = 0; r < n; r++) {
                int32_t q = st[r].send.peer;
                CHECK(q >= 0 && (uint32_t)q < n && (uint32_t)q != r);
                CHECK(st[q].recv.peer == (int32_t)r);
                for (size_t w = 0; w < words; w++) {
                    next[q * words + w] |= know[r * words + w];
                }
            }
            memcpy(know, next, (size_t)n * words * 8);
        }
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t b = 0; b < n; b++) {
                if (!(know[r * words + b / 64] & ((uint64_t)1 << (b % 64)))) {
                    fail_msg("dissemination n %u: rank %u never hears of %u", n,
                             r, b);
                }
            }
        }
    }
    free(st);
    free(next);
    free(know);
}

static void schedules_reject_out_of_range_arguments(void **state)
{
    static const enum rdp_coll_alg algs[] = {
        RDP_COLL_ALG_RD, RDP_COLL_ALG_BRUCK, RDP_COLL_ALG_RING,
        RDP_COLL_ALG_DISSEM};
    rdp_sched_step_t st;

    for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
        uint32_t ns = rdp_sched_nsteps(algs[i], 8);

        assert_int_equal(rdp_sched_nsteps(algs[i], 0), 0);
        assert_int_equal(rdp_sched_nsteps(algs[i], 1), 0);
        assert_int_equal(rdp_sched_step(algs[i], 8, 8, 0, &st),
                         PMIX_ERR_BAD_PARAM);
        assert_int_equal(rdp_sched_step(algs[i], 0, 8, ns, &st),
                         PMIX_ERR_BAD_PARAM);
        assert_int_equal(rdp_sched_step(algs[i], 0, 0, 0, &st),
                         PMIX_ERR_BAD_PARAM);
        assert_int_equal(rdp_sched_step(algs[i], 0, 1, 0, &st),
                         PMIX_ERR_BAD_PARAM);
    }
    assert_int_equal(rdp_sched_nsteps(RDP_COLL_ALG_AUTO, 8), 0);
    assert_int_equal(rdp_sched_step(RDP_COLL_ALG_AUTO, 0, 8, 0, &st),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_sched_step((enum rdp_coll_alg)99, 0, 8, 0, &st),
                     PMIX_ERR_BAD_PARAM);
}

static void schedules_handle_large_sizes_without_overflow(void **state)
{
    /* spot checks far beyond the exhaustive range */
    uint32_t n = (uint32_t)INT32_MAX;
    rdp_sched_step_t st;

    assert_int_equal(rdp_sched_bruck_nsteps(n), 31);
    assert_int_equal(rdp_sched_bruck_step(n - 1, n, 30, &st), PMIX_SUCCESS);
    assert_int_equal(st.send.peer, (int32_t)(n - 1 - (1u << 30)));
    assert_int_equal(st.recv.peer, (int32_t)((1u << 30) - 1));
    assert_int_equal(rdp_sched_ring_step(0, n, n - 2, &st), PMIX_SUCCESS);
    assert_int_equal(st.recv.ranges[0].first, 1);
    assert_int_equal(rdp_sched_rd_nsteps(n), 30 + 2);
    assert_int_equal(rdp_sched_rd_step(n - 1, n, 31, &st), PMIX_SUCCESS);
    assert_int_equal(st.recv.peer, (int32_t)(n - 1 - (1u << 30)));
    assert_int_equal(st.recv.ranges[0].count, n - 1);
    assert_int_equal(
        rdp_sched_nsteps(RDP_COLL_ALG_BRUCK, (uint32_t)INT32_MAX + 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            recursive_doubling_delivers_every_block_once_for_p_1_to_1024),
        cmocka_unit_test(bruck_delivers_every_block_once_in_ceil_log2_steps),
        cmocka_unit_test(ring_delivers_every_block_once_in_p_minus_1_steps),
        cmocka_unit_test(
            dissemination_barrier_informs_everyone_in_ceil_log2_rounds),
        cmocka_unit_test(schedules_reject_out_of_range_arguments),
        cmocka_unit_test(schedules_handle_large_sizes_without_overflow),
    };

    return cmocka_run_group_tests_name("coll_sched", tests, NULL, NULL);
}
