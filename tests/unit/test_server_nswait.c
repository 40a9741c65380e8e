/* test_server_nswait.c - work held until its nspace is registered */
#include "config.h"
#include "core/common/runtime.h"
#include "core/loop/loop.h"
#include "core/server/nswait.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* One held item: runs when @a ready, records what happened to it. */
typedef struct item {
    bool ready;
    int tries, ran, expired, discarded;
    int order;          /* when it ran, among all items (1-based) */
    bool stop_on;       /* stop the loop when this one is let go */
    struct item *spawn; /* held from inside this one's run */
} item_t;

static int run_counter;

static void let_go(item_t *it)
{
    if (it->stop_on) {
        rdp_loop_stop(rdp_rt.loop);
    }
}

static const rdp_srv_nswait_ops_t ops_a, ops_b;

static bool try_run(void *arg)
{
    item_t *it = arg;

    it->tries++;
    if (!it->ready) {
        return false;
    }
    it->ran++;
    it->order = ++run_counter;
    if (it->spawn != NULL) {
        assert_int_equal(rdp_srv_nswait_hold(&ops_a, it->spawn, 3600),
                         PMIX_SUCCESS);
    }
    let_go(it);
    return true;
}

static void expired(void *arg)
{
    item_t *it = arg;

    it->expired++;
    let_go(it);
}

static void discard(void *arg)
{
    ((item_t *)arg)->discarded++;
}

static const rdp_srv_nswait_ops_t ops_a = {try_run, expired, discard};
static const rdp_srv_nswait_ops_t ops_b = {try_run, expired, discard};

static int setup(void **state)
{
    (void)state;
    run_counter = 0;
    return rdp_loop_create(&rdp_rt.loop) == PMIX_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rdp_srv_nswait_discard(&ops_a);
    rdp_srv_nswait_discard(&ops_b);
    rdp_loop_destroy(rdp_rt.loop);
    rdp_rt.loop = NULL;
    return 0;
}

/* The loop runs in the test's thread: @a step runs first, then the loop
 * until an item with stop_on is let go, or the watchdog gives up (a
 * failure, never a hang). */
typedef struct {
    rdp_loop_fn_t step;
    void *arg;
    rdp_timer_t *watchdog;
    bool gave_up;
} run_t;

static void give_up(void *arg)
{
    ((run_t *)arg)->gave_up = true;
    rdp_loop_stop(rdp_rt.loop);
}

static void start_run(void *arg)
{
    run_t *r = arg;

    assert_int_equal(rdp_timer_create(rdp_rt.loop, give_up, r, &r->watchdog),
                     PMIX_SUCCESS);
    rdp_timer_start(r->watchdog, 30);
    r->step(r->arg);
}

static void run_loop_after(rdp_loop_fn_t step, void *arg)
{
    run_t r = {.step = step, .arg = arg};

    assert_int_equal(rdp_loop_post(rdp_rt.loop, start_run, &r), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_run(rdp_rt.loop), PMIX_SUCCESS);
    rdp_timer_destroy(r.watchdog);
    assert_false(r.gave_up);
}

/* ---- a registration runs what is ready, in arrival order ---- */

static item_t two_ready[3];

static void hold_three_then_register(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rdp_srv_nswait_hold(&ops_a, &two_ready[i], 3600),
                         PMIX_SUCCESS);
    }
    assert_int_equal(rdp_srv_nswait_count(), 3);
    /* nothing is tried before a registration */
    assert_int_equal(two_ready[0].tries + two_ready[2].tries, 0);
    two_ready[0].ready = true;
    two_ready[2].ready = true;
    rdp_srv_nswait_registered();
    rdp_srv_nswait_registered(); /* one pass for both */
}

static void registration_runs_the_ready_ones_in_order(void **state)
{
    (void)state;
    memset(two_ready, 0, sizeof(two_ready));
    two_ready[2].stop_on = true;
    run_loop_after(hold_three_then_register, NULL);
    assert_int_equal(two_ready[0].ran, 1);
    assert_int_equal(two_ready[0].order, 1);
    assert_int_equal(two_ready[2].ran, 1);
    assert_int_equal(two_ready[2].order, 2);
    assert_int_equal(two_ready[1].ran, 0);
    assert_int_equal(two_ready[1].tries, 1);
    assert_int_equal(rdp_srv_nswait_count(), 1);
    rdp_srv_nswait_discard(&ops_a);
    assert_int_equal(two_ready[1].discarded, 1);
    assert_int_equal(two_ready[0].discarded + two_ready[2].discarded, 0);
}

/* ---- the earliest deadline fires, whatever the arrival order ---- */

static item_t long_wait, short_wait;

static void hold_long_then_short(void *arg)
{
    (void)arg;
    assert_int_equal(rdp_srv_nswait_hold(&ops_a, &long_wait, 3600),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_nswait_hold(&ops_a, &short_wait, 0.01),
                     PMIX_SUCCESS);
}

static void a_later_shorter_deadline_expires_first(void **state)
{
    (void)state;
    memset(&long_wait, 0, sizeof(long_wait));
    memset(&short_wait, 0, sizeof(short_wait));
    short_wait.stop_on = true;
    run_loop_after(hold_long_then_short, NULL);
    assert_int_equal(short_wait.expired, 1);
    assert_int_equal(short_wait.ran, 0);
    assert_int_equal(long_wait.expired, 0);
    assert_int_equal(rdp_srv_nswait_count(), 1);
}

/* ---- what a run holds during the pass is kept, not lost ---- */

static item_t parent, child;

static void hold_parent_then_register(void *arg)
{
    (void)arg;
    assert_int_equal(rdp_srv_nswait_hold(&ops_a, &parent, 3600), PMIX_SUCCESS);
    rdp_srv_nswait_registered();
}

static void register_again(void *arg)
{
    (void)arg;
    child.ready = true;
    rdp_srv_nswait_registered();
}

static void an_item_held_by_a_run_is_kept(void **state)
{
    (void)state;
    memset(&parent, 0, sizeof(parent));
    memset(&child, 0, sizeof(child));
    parent.ready   = true;
    parent.spawn   = &child;
    parent.stop_on = true;
    run_loop_after(hold_parent_then_register, NULL);
    assert_int_equal(parent.ran, 1);
    assert_int_equal(rdp_srv_nswait_count(), 1);
    child.stop_on = true;
    run_loop_after(register_again, NULL);
    assert_int_equal(child.ran, 1);
    assert_int_equal(rdp_srv_nswait_count(), 0);
}

/* ---- an owner's discard leaves the other owner's items ---- */

static item_t of_a, of_b;

static void hold_one_each(void *arg)
{
    (void)arg;
    assert_int_equal(rdp_srv_nswait_hold(&ops_a, &of_a, 3600), PMIX_SUCCESS);
    assert_int_equal(rdp_srv_nswait_hold(&ops_b, &of_b, 3600), PMIX_SUCCESS);
    rdp_srv_nswait_discard(&ops_a);
    assert_int_equal(rdp_srv_nswait_count(), 1);
    of_b.ready = true;
    rdp_srv_nswait_registered();
}

static void discard_takes_only_its_owners_items(void **state)
{
    (void)state;
    memset(&of_a, 0, sizeof(of_a));
    memset(&of_b, 0, sizeof(of_b));
    of_b.stop_on = true;
    run_loop_after(hold_one_each, NULL);
    assert_int_equal(of_a.discarded, 1);
    assert_int_equal(of_a.tries, 0);
    assert_int_equal(of_b.ran, 1);
    assert_int_equal(of_b.discarded, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            registration_runs_the_ready_ones_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(a_later_shorter_deadline_expires_first,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(an_item_held_by_a_run_is_kept, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(discard_takes_only_its_owners_items,
                                        setup, teardown),
    };

    return cmocka_run_group_tests_name("server_nswait", tests, NULL, NULL);
}
