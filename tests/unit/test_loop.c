/* test_loop.c - the loop thread: mailbox order, timers, waits, fd watchers */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "core/loop/loop.h"

typedef struct {
    rdp_wait_t wait;
    int seen[100];
    int count;
    int expected;
    int on_loop_ok;
    rdp_loop_t *loop;
} ctx_t;

typedef struct {
    ctx_t *ctx;
    int value;
} item_t;

static void record(void *arg)
{
    item_t *it = arg;
    ctx_t *ctx = it->ctx;

    ctx->on_loop_ok &= rdp_loop_on_loop(ctx->loop);
    ctx->seen[ctx->count++] = it->value;
    if (ctx->count == ctx->expected) {
        rdp_wait_signal(&ctx->wait, PMIX_SUCCESS);
    }
}

static void posted_work_runs_on_the_loop_thread_in_post_order(void **state)
{
    rdp_loop_t *loop;
    ctx_t ctx     = {0};
    item_t items[100];

    assert_int_equal(rdp_loop_create(&loop), PMIX_SUCCESS);
    rdp_wait_init(&ctx.wait);
    ctx.expected   = 100;
    ctx.on_loop_ok = 1;
    ctx.loop       = loop;
    assert_int_equal(rdp_loop_start_thread(loop), PMIX_SUCCESS);
    assert_false(rdp_loop_on_loop(loop));
    for (int i = 0; i < 100; i++) {
        items[i].ctx   = &ctx;
        items[i].value = i;
        assert_int_equal(rdp_loop_post(loop, record, &items[i]),
                         PMIX_SUCCESS);
    }
    assert_int_equal(rdp_wait_wait(&ctx.wait), PMIX_SUCCESS);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(ctx.seen[i], i);
    }
    assert_true(ctx.on_loop_ok);
    rdp_loop_destroy(loop);
    rdp_wait_cleanup(&ctx.wait);
}

static void work_posted_before_the_thread_starts_still_runs(void **state)
{
    rdp_loop_t *loop;
    ctx_t ctx   = {0};
    item_t item = {&ctx, 7};

    assert_int_equal(rdp_loop_create(&loop), PMIX_SUCCESS);
    rdp_wait_init(&ctx.wait);
    ctx.expected   = 1;
    ctx.on_loop_ok = 1;
    ctx.loop       = loop;
    assert_int_equal(rdp_loop_post(loop, record, &item), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_start_thread(loop), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&ctx.wait), PMIX_SUCCESS);
    assert_int_equal(ctx.seen[0], 7);
    rdp_loop_destroy(loop);
    rdp_wait_cleanup(&ctx.wait);
}

typedef struct {
    rdp_loop_t *loop;
    rdp_timer_t *timer;
    rdp_wait_t wait;
    double started;
    double fired;
} timer_ctx_t;

static void timer_fired(void *arg)
{
    timer_ctx_t *t = arg;

    t->fired = rdp_time_now();
    rdp_timer_destroy(t->timer);
    rdp_wait_signal(&t->wait, PMIX_ERR_TIMEOUT);
}

static void arm_timer(void *arg)
{
    timer_ctx_t *t = arg;

    assert_int_equal(rdp_timer_create(t->loop, timer_fired, t, &t->timer),
                     PMIX_SUCCESS);
    t->started = rdp_time_now();
    rdp_timer_start(t->timer, 0.05);
}

static void a_timer_fires_once_after_its_delay(void **state)
{
    timer_ctx_t t = {0};

    assert_int_equal(rdp_loop_create(&t.loop), PMIX_SUCCESS);
    rdp_wait_init(&t.wait);
    assert_int_equal(rdp_loop_start_thread(t.loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_post(t.loop, arm_timer, &t), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&t.wait), PMIX_ERR_TIMEOUT);
    /* ordering only, never a duration bound: it fired after arming */
    assert_true(t.fired >= t.started);
    rdp_loop_destroy(t.loop);
    rdp_wait_cleanup(&t.wait);
}

/* fire_soon runs a timer now, even one started with an hour to go */
static void arm_then_fire_soon(void *arg)
{
    timer_ctx_t *t = arg;

    assert_int_equal(rdp_timer_create(t->loop, timer_fired, t, &t->timer),
                     PMIX_SUCCESS);
    t->started = rdp_time_now();
    rdp_timer_start(t->timer, 3600);
    rdp_timer_fire_soon(t->timer);
}

static void fire_soon_runs_a_pending_timer_now(void **state)
{
    timer_ctx_t t = {0};

    assert_int_equal(rdp_loop_create(&t.loop), PMIX_SUCCESS);
    rdp_wait_init(&t.wait);
    assert_int_equal(rdp_loop_start_thread(t.loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_post(t.loop, arm_then_fire_soon, &t),
                     PMIX_SUCCESS);
    /* an hour-long timer would end the test by the harness's timeout */
    assert_int_equal(rdp_wait_wait(&t.wait), PMIX_ERR_TIMEOUT);
    assert_true(t.fired >= t.started);
    rdp_loop_destroy(t.loop);
    rdp_wait_cleanup(&t.wait);
}

static void a_bounded_wait_that_is_never_signalled_times_out(void **state)
{
    rdp_wait_t w;

    rdp_wait_init(&w);
    assert_int_equal(rdp_wait_wait_for(&w, 0.01), PMIX_ERR_TIMEOUT);
    rdp_wait_signal(&w, PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_wait_wait_for(&w, 0.01), PMIX_ERR_NOT_FOUND);
    rdp_wait_cleanup(&w);
}

typedef struct {
    rdp_loop_t *loop;
    int fds[2];
    rdp_fdwatch_t *watch;
    rdp_wait_t wait;
    char got;
} fd_ctx_t;

static void fd_readable(int fd, int events, void *arg)
{
    fd_ctx_t *f = arg;

    assert_true(events & RDP_FD_READ);
    assert_int_equal(read(fd, &f->got, 1), 1);
    rdp_fdwatch_destroy(f->watch);
    rdp_wait_signal(&f->wait, PMIX_SUCCESS);
}

static void watch_fd(void *arg)
{
    fd_ctx_t *f = arg;

    assert_int_equal(rdp_fdwatch_create(f->loop, f->fds[0], RDP_FD_READ,
                                        fd_readable, f, &f->watch),
                     PMIX_SUCCESS);
    rdp_fdwatch_enable(f->watch);
}

static void a_fd_watcher_reports_readable_data(void **state)
{
    fd_ctx_t f = {0};

    assert_int_equal(pipe(f.fds), 0);
    assert_int_equal(rdp_loop_create(&f.loop), PMIX_SUCCESS);
    rdp_wait_init(&f.wait);
    assert_int_equal(rdp_loop_start_thread(f.loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_post(f.loop, watch_fd, &f), PMIX_SUCCESS);
    assert_int_equal(write(f.fds[1], "x", 1), 1);
    assert_int_equal(rdp_wait_wait(&f.wait), PMIX_SUCCESS);
    assert_int_equal(f.got, 'x');
    rdp_loop_destroy(f.loop);
    rdp_wait_cleanup(&f.wait);
    close(f.fds[0]);
    close(f.fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(posted_work_runs_on_the_loop_thread_in_post_order),
        cmocka_unit_test(work_posted_before_the_thread_starts_still_runs),
        cmocka_unit_test(a_timer_fires_once_after_its_delay),
        cmocka_unit_test(fire_soon_runs_a_pending_timer_now),
        cmocka_unit_test(a_bounded_wait_that_is_never_signalled_times_out),
        cmocka_unit_test(a_fd_watcher_reports_readable_data),
    };
    return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
