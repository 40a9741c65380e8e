/* test_run_place.c - placement of ranks on nodes (rdpmix-run --map-by) */
#include "config.h"
#include "run/place.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void place_ok(uint32_t np, uint32_t nnodes, enum rdp_run_mapby mapby,
                     uint32_t slots, const uint32_t *want)
{
    uint32_t got[64];

    assert_true(np <= 64);
    assert_int_equal(rdp_run_place(np, nnodes, mapby, slots, got),
                     PMIX_SUCCESS);
    assert_memory_equal(got, want, np * sizeof(*got));
}

static void block_balances_consecutive_ranks(void **state)
{
    const uint32_t w7[] = {0, 0, 0, 1, 1, 2, 2};
    const uint32_t w8[] = {0, 0, 1, 1, 2, 2, 3, 3};
    const uint32_t w5[] = {0, 0, 1, 2, 3};
    const uint32_t w2[] = {0, 1}; /* more nodes than ranks */

    place_ok(7, 3, RDP_RUN_MAP_BLOCK, 0, w7);
    place_ok(8, 4, RDP_RUN_MAP_BLOCK, 0, w8);
    place_ok(5, 4, RDP_RUN_MAP_BLOCK, 0, w5);
    place_ok(2, 4, RDP_RUN_MAP_BLOCK, 0, w2);
}

static void slot_fills_each_node_in_turn(void **state)
{
    const uint32_t w5[]  = {0, 0, 1, 1, 2}; /* ceil(5/4) = 2 slots */
    const uint32_t w6k[] = {0, 0, 0, 0, 1, 1};
    const uint32_t w1[]  = {0};

    place_ok(5, 4, RDP_RUN_MAP_SLOT, 0, w5);
    place_ok(6, 4, RDP_RUN_MAP_SLOT, 4, w6k);
    place_ok(1, 8, RDP_RUN_MAP_SLOT, 0, w1);
}

static void node_is_round_robin(void **state)
{
    const uint32_t w7[] = {0, 1, 2, 0, 1, 2, 0};

    place_ok(7, 3, RDP_RUN_MAP_NODE, 0, w7);
    place_ok(7, 3, RDP_RUN_MAP_NODE, 3, w7);
}

static void every_rank_is_placed_on_a_valid_node(void **state)
{
    uint32_t got[300];

    for (int m = 0; m < 3; m++) {
        for (uint32_t nn = 1; nn <= 9; nn++) {
            for (uint32_t np = 1; np <= 300; np += 7) {
                uint32_t count[9] = {0};
                uint32_t cap      = np / nn + (np % nn != 0);

                assert_int_equal(
                    rdp_run_place(np, nn, (enum rdp_run_mapby)m, 0, got),
                    PMIX_SUCCESS);
                for (uint32_t r = 0; r < np; r++) {
                    assert_true(got[r] < nn);
                    count[got[r]]++;
                    /* block and slot keep each node's ranks contiguous */
                    if (m != RDP_RUN_MAP_NODE && r > 0) {
                        assert_true(got[r] >= got[r - 1]);
                    }
                }
                for (uint32_t n = 0; n < nn; n++) {
                    assert_true(count[n] <= cap);
                }
            }
        }
    }
}

static void too_few_slots_or_bad_input_fail_without_writing(void **state)
{
    uint32_t got[4] = {77, 77, 77, 77};

    assert_int_equal(rdp_run_place(4, 2, RDP_RUN_MAP_SLOT, 1, got),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(rdp_run_place(4, 2, RDP_RUN_MAP_BLOCK, 1, got),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(rdp_run_place(0, 2, RDP_RUN_MAP_BLOCK, 0, got),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_run_place(2, 0, RDP_RUN_MAP_BLOCK, 0, got),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_run_place(2, 2, (enum rdp_run_mapby)9, 0, got),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_run_place(2, 2, RDP_RUN_MAP_BLOCK, 0, NULL),
                     PMIX_ERR_BAD_PARAM);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(got[i], 77);
    }
}

static void slots_ok(uint32_t np, uint32_t nnodes, enum rdp_run_mapby mapby,
                     const uint32_t *slots, const uint32_t *want)
{
    uint32_t got[64];

    assert_true(np <= 64);
    assert_int_equal(rdp_run_place_slots(np, nnodes, mapby, slots, got),
                     PMIX_SUCCESS);
    assert_memory_equal(got, want, np * sizeof(*got));
}

static void
block_on_nodes_of_their_own_sizes_balances_within_limits(void **state)
{
    const uint32_t s53[]  = {5, 3};
    const uint32_t w8[]   = {0, 0, 0, 0, 0, 1, 1, 1}; /* Slurm's "5,3" */
    const uint32_t w4[]   = {0, 0, 1, 1};             /* room for more */
    const uint32_t s141[] = {1, 4, 1};
    const uint32_t w5[]   = {0, 1, 1, 1, 2};
    const uint32_t s20[]  = {2, 0}; /* the second has no limit */
    const uint32_t w7[]   = {0, 0, 1, 1, 1, 1, 1};

    slots_ok(8, 2, RDP_RUN_MAP_BLOCK, s53, w8);
    slots_ok(4, 2, RDP_RUN_MAP_BLOCK, s53, w4);
    slots_ok(5, 3, RDP_RUN_MAP_BLOCK, s141, w5);
    slots_ok(7, 2, RDP_RUN_MAP_BLOCK, s20, w7);
}

static void slot_and_node_on_nodes_of_their_own_sizes(void **state)
{
    const uint32_t s141[] = {1, 4, 1};
    const uint32_t ws[]   = {0, 1, 1, 1, 1, 2};
    const uint32_t wn[]   = {0, 1, 2, 1, 1, 1};
    const uint32_t s02[]  = {0, 2}; /* unlimited: max(ceil(7/2), 7-2) */
    const uint32_t ws7[]  = {0, 0, 0, 0, 0, 1, 1};
    const uint32_t wn7[]  = {0, 1, 0, 1, 0, 0, 0};

    slots_ok(6, 3, RDP_RUN_MAP_SLOT, s141, ws);
    slots_ok(6, 3, RDP_RUN_MAP_NODE, s141, wn);
    slots_ok(7, 2, RDP_RUN_MAP_SLOT, s02, ws7);
    slots_ok(7, 2, RDP_RUN_MAP_NODE, s02, wn7);
}

static void
nodes_of_their_own_sizes_never_get_more_than_their_slots(void **state)
{
    uint32_t slots[7], got[200];

    for (uint32_t seed = 1; seed < 200; seed++) {
        uint32_t nn = 1 + seed % 7, total = 0, free_nodes = 0;

        for (uint32_t i = 0; i < nn; i++) {
            slots[i] = (seed * (i + 3)) % 5; /* 0: no limit */
            total += slots[i];
            free_nodes += slots[i] == 0;
        }
        for (int m = 0; m < 3; m++) {
            uint32_t np = 1 + (seed * 13) % 60, count[7] = {0};
            pmix_status_t st =
                rdp_run_place_slots(np, nn, (enum rdp_run_mapby)m, slots, got);

            if (free_nodes == 0 && np > total) {
                assert_int_equal(st, PMIX_ERR_OUT_OF_RESOURCE);
                continue;
            }
            assert_int_equal(st, PMIX_SUCCESS);
            for (uint32_t r = 0; r < np; r++) {
                assert_true(got[r] < nn);
                count[got[r]]++;
                if (m != RDP_RUN_MAP_NODE && r > 0) {
                    assert_true(got[r] >= got[r - 1]);
                }
            }
            for (uint32_t i = 0; i < nn; i++) {
                assert_true(slots[i] == 0 || count[i] <= slots[i]);
            }
        }
    }
}

static void mapping_names_parse_and_print(void **state)
{
    enum rdp_run_mapby m;

    assert_int_equal(rdp_run_mapby_parse("block", &m), 0);
    assert_int_equal(m, RDP_RUN_MAP_BLOCK);
    assert_int_equal(rdp_run_mapby_parse("slot", &m), 0);
    assert_int_equal(m, RDP_RUN_MAP_SLOT);
    assert_int_equal(rdp_run_mapby_parse("node", &m), 0);
    assert_int_equal(m, RDP_RUN_MAP_NODE);
    assert_int_equal(rdp_run_mapby_parse("core", &m), -1);
    assert_int_equal(rdp_run_mapby_parse("", &m), -1);
    assert_int_equal(rdp_run_mapby_parse(NULL, &m), -1);
    assert_string_equal(rdp_run_mapby_pmix(RDP_RUN_MAP_NODE), "BYNODE");
    assert_string_equal(rdp_run_mapby_pmix(RDP_RUN_MAP_SLOT), "BYSLOT");
    assert_string_equal(rdp_run_mapby_pmix(RDP_RUN_MAP_BLOCK), "BYSLOT:SPAN");
    assert_string_equal(rdp_run_rankby_pmix(RDP_RUN_MAP_NODE), "NODE");
    assert_string_equal(rdp_run_rankby_pmix(RDP_RUN_MAP_BLOCK), "SLOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_balances_consecutive_ranks),
        cmocka_unit_test(slot_fills_each_node_in_turn),
        cmocka_unit_test(node_is_round_robin),
        cmocka_unit_test(every_rank_is_placed_on_a_valid_node),
        cmocka_unit_test(too_few_slots_or_bad_input_fail_without_writing),
        cmocka_unit_test(
            block_on_nodes_of_their_own_sizes_balances_within_limits),
        cmocka_unit_test(slot_and_node_on_nodes_of_their_own_sizes),
        cmocka_unit_test(
            nodes_of_their_own_sizes_never_get_more_than_their_slots),
        cmocka_unit_test(mapping_names_parse_and_print),
    };

    return cmocka_run_group_tests_name("run_place", tests, NULL, NULL);
}
