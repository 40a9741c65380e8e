/* test_coll_select.c - algorithm selection and its configuration */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "coll/select.h"

static void barriers_always_use_dissemination(void **state)
{
    for (uint32_t n = 1; n < 100; n++) {
        assert_int_equal(rdp_coll_select(RDP_COLL_BARRIER, n,
                                         RDP_COLL_SIZE_LARGE,
                                         RDP_COLL_ALG_RING),
                         RDP_COLL_ALG_DISSEM);
    }
}

static void small_allgathers_use_log_step_algorithms(void **state)
{
    static const enum rdp_coll_size_class classes[] = {RDP_COLL_SIZE_UNKNOWN,
                                                       RDP_COLL_SIZE_SMALL};

    for (size_t c = 0; c < 2; c++) {
        for (uint32_t n = 1; n <= 4096; n++) {
            enum rdp_coll_alg want = RDP_COLL_ALG_BRUCK;
            assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER, n, classes[c],
                                             RDP_COLL_ALG_AUTO),
                             want);
        }
    }
}

/* Over tcp, Bruck wins or ties below RDP_COLL_LARGE_MIN_BLOCK (select.h) */
static void medium_blocks_use_bruck(void **state)
{
    for (uint32_t n = 1; n <= 4096; n++) {
        assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER, n,
                                         RDP_COLL_SIZE_MEDIUM,
                                         RDP_COLL_ALG_AUTO),
                         RDP_COLL_ALG_BRUCK);
    }
}

static void large_blocks_use_the_ring_on_few_peers(void **state)
{
    assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER, 3, RDP_COLL_SIZE_LARGE,
                                     RDP_COLL_ALG_AUTO),
                     RDP_COLL_ALG_RING);
    assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER,
                                     RDP_COLL_RING_MAX_PEERS,
                                     RDP_COLL_SIZE_LARGE, RDP_COLL_ALG_AUTO),
                     RDP_COLL_ALG_RING);
    assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER,
                                     RDP_COLL_RING_MAX_PEERS + 1,
                                     RDP_COLL_SIZE_LARGE, RDP_COLL_ALG_AUTO),
                     RDP_COLL_ALG_BRUCK);
    assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER, 2, RDP_COLL_SIZE_LARGE,
                                     RDP_COLL_ALG_AUTO),
                     RDP_COLL_ALG_BRUCK);
}

static void a_forced_algorithm_wins_for_allgathers(void **state)
{
    static const enum rdp_coll_alg forced[] = {
        RDP_COLL_ALG_RD, RDP_COLL_ALG_BRUCK, RDP_COLL_ALG_RING};

    for (size_t f = 0; f < 3; f++) {
        for (uint32_t n = 1; n < 70; n++) {
            assert_int_equal(rdp_coll_select(RDP_COLL_ALLGATHER, n,
                                             RDP_COLL_SIZE_SMALL, forced[f]),
                             forced[f]);
        }
    }
}

static void size_classes_follow_the_thresholds(void **state)
{
    assert_int_equal(rdp_coll_size_class_of(0, 0), RDP_COLL_SIZE_UNKNOWN);
    assert_int_equal(rdp_coll_size_class_of(0, 10), RDP_COLL_SIZE_SMALL);
    assert_int_equal(
        rdp_coll_size_class_of(10ull * RDP_COLL_SMALL_MAX_BLOCK, 10),
        RDP_COLL_SIZE_SMALL);
    assert_int_equal(
        rdp_coll_size_class_of(10ull * RDP_COLL_SMALL_MAX_BLOCK + 10, 10),
        RDP_COLL_SIZE_MEDIUM);
    assert_int_equal(rdp_coll_size_class_of(4ull * RDP_COLL_LARGE_MIN_BLOCK, 4),
                     RDP_COLL_SIZE_LARGE);
    assert_int_equal(rdp_coll_size_class_of(UINT64_MAX, 1),
                     RDP_COLL_SIZE_LARGE);
}

static void alg_names_parse_and_bad_ones_fail(void **state)
{
    enum rdp_coll_alg alg = RDP_COLL_ALG_RING;

    assert_int_equal(rdp_coll_alg_parse("recursive_doubling", &alg),
                     PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_RD);
    assert_int_equal(rdp_coll_alg_parse("BRUCK", &alg), PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_BRUCK);
    assert_int_equal(rdp_coll_alg_parse("ring", &alg), PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_RING);
    assert_int_equal(rdp_coll_alg_parse("auto", &alg), PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_AUTO);
    assert_int_equal(rdp_coll_alg_parse("dissemination", &alg),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_alg_parse("", &alg), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_coll_alg_parse(NULL, &alg), PMIX_ERR_BAD_PARAM);
    assert_int_equal(alg, RDP_COLL_ALG_AUTO); /* untouched on error */

    unsetenv("RDPMIX_COLL_ALG");
    alg = RDP_COLL_ALG_RING;
    assert_int_equal(rdp_coll_alg_from_env(&alg), PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_AUTO);
    setenv("RDPMIX_COLL_ALG", "bruck", 1);
    assert_int_equal(rdp_coll_alg_from_env(&alg), PMIX_SUCCESS);
    assert_int_equal(alg, RDP_COLL_ALG_BRUCK);
    setenv("RDPMIX_COLL_ALG", "fastest", 1);
    assert_int_equal(rdp_coll_alg_from_env(&alg), PMIX_ERR_BAD_PARAM);
    unsetenv("RDPMIX_COLL_ALG");
    assert_string_equal(rdp_coll_alg_name(RDP_COLL_ALG_RD),
                        "recursive_doubling");
    assert_string_equal(rdp_coll_alg_name((enum rdp_coll_alg)42), "unknown");
}

/* RDPMIX_COLL_SEG_BYTES: bytes, KiB or MiB up to 1 GiB, 0 for off; the
 * default when unset; anything else is refused and leaves the output. */
static void piece_size_parses_and_bad_ones_fail(void **state)
{
    static const struct {
        const char *s;
        uint64_t v;
    } good[] = {
        {"0", 0},
        {"1", 1},
        {"1000", 1000},
        {"64k", 65536},
        {"256K", 262144},
        {"1m", 1048576},
        {"1024M", 1u << 30},
        {"1073741824", 1u << 30},
    };
    static const char *const bad[] = {
        "-1",         "abc",   "10x",
        "1g",         "1025m", "1048577k",
        "1073741825", "k",     "99999999999999999999",
        "12 ",        "0x10",
    };
    uint64_t v = 7;

    unsetenv("RDPMIX_COLL_SEG_BYTES");
    assert_int_equal(rdp_coll_seg_bytes_from_env(&v), PMIX_SUCCESS);
    assert_int_equal(v, RDP_COLL_SEG_BYTES_DEFAULT);
    setenv("RDPMIX_COLL_SEG_BYTES", "", 1);
    v = 7;
    assert_int_equal(rdp_coll_seg_bytes_from_env(&v), PMIX_SUCCESS);
    assert_int_equal(v, RDP_COLL_SEG_BYTES_DEFAULT);
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        setenv("RDPMIX_COLL_SEG_BYTES", good[i].s, 1);
        v = 7;
        assert_int_equal(rdp_coll_seg_bytes_from_env(&v), PMIX_SUCCESS);
        assert_int_equal(v, good[i].v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("RDPMIX_COLL_SEG_BYTES", bad[i], 1);
        v = 7;
        if (rdp_coll_seg_bytes_from_env(&v) != PMIX_ERR_BAD_PARAM) {
            fail_msg("\"%s\" accepted", bad[i]);
        }
        assert_int_equal(v, 7);
    }
    unsetenv("RDPMIX_COLL_SEG_BYTES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(barriers_always_use_dissemination),
        cmocka_unit_test(small_allgathers_use_log_step_algorithms),
        cmocka_unit_test(medium_blocks_use_bruck),
        cmocka_unit_test(large_blocks_use_the_ring_on_few_peers),
        cmocka_unit_test(a_forced_algorithm_wins_for_allgathers),
        cmocka_unit_test(size_classes_follow_the_thresholds),
        cmocka_unit_test(alg_names_parse_and_bad_ones_fail),
        cmocka_unit_test(piece_size_parses_and_bad_ones_fail),
    };

    return cmocka_run_group_tests_name("coll_select", tests, NULL, NULL);
}
