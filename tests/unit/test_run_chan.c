/* test_run_chan.c - the framed control channel over a socketpair */
#include "config.h"
#include "run/chan.h"
#include "core/loop/loop.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_FRAMES 8

typedef struct end {
    rdp_run_chan_t *chan;
    int nframes;
    uint16_t cmds[MAX_FRAMES];
    size_t lens[MAX_FRAMES];
    int content_ok;
    int closed;
    pmix_status_t why;
    int destroy_in_msg;    /* destroy the chan from inside msg_cb */
    int stop_after_frames; /* stop the loop after this many frames */
    int stop_on_close;
} end_t;

typedef struct fixture {
    rdp_loop_t *loop;
    rdp_timer_t *guard;
    int timed_out;
    end_t a, b;
    int raw_fd; /* the peer of b when a is not used */
} fixture_t;

static fixture_t *fx;

static void guard_cb(void *arg)
{
    fx->timed_out = 1;
    rdp_loop_stop(fx->loop);
}

static void msg_cb(rdp_run_chan_t *chan, uint16_t cmd, const void *payload,
                   size_t len, void *arg)
{
    end_t *e         = arg;
    const uint8_t *p = payload;

    if (e->nframes < MAX_FRAMES) {
        e->cmds[e->nframes] = cmd;
        e->lens[e->nframes] = len;
    }
    e->nframes++;
    for (size_t i = 0; i < len; i++) {
        if (p[i] != (uint8_t)(i * 7 + cmd)) {
            e->content_ok = 0;
        }
    }
    if (e->destroy_in_msg) {
        rdp_run_chan_destroy(chan);
        e->chan = NULL;
        rdp_loop_stop(fx->loop);
        return;
    }
    if (e->stop_after_frames && e->nframes == e->stop_after_frames) {
        rdp_loop_stop(fx->loop);
    }
}

static void close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    end_t *e = arg;

    e->closed++;
    e->why = why;
    if (e->stop_on_close) {
        rdp_loop_stop(fx->loop);
    }
}

static int setup(void **state)
{
    int sv[2];

    fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    assert_int_equal(rdp_loop_create(&fx->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_timer_create(fx->loop, guard_cb, NULL, &fx->guard),
                     PMIX_SUCCESS);
    rdp_timer_start(fx->guard, 10.0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fx->a.content_ok = 1;
    fx->b.content_ok = 1;
    assert_int_equal(rdp_run_chan_create(fx->loop, sv[0], 1u << 20, msg_cb,
                                         close_cb, &fx->a, &fx->a.chan),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_run_chan_create(fx->loop, sv[1], 1u << 20, msg_cb,
                                         close_cb, &fx->b, &fx->b.chan),
                     PMIX_SUCCESS);
    fx->raw_fd = -1;
    *state     = fx;
    return 0;
}

static int teardown(void **state)
{
    rdp_run_chan_destroy(fx->a.chan);
    rdp_run_chan_destroy(fx->b.chan);
    rdp_timer_destroy(fx->guard);
    rdp_loop_destroy(fx->loop);
    free(fx);
    fx = NULL;
    return 0;
}

static void send_pattern(rdp_run_chan_t *chan, uint16_t cmd, size_t len)
{
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    for (size_t i = 0; i < len; i++) {
        uint8_t v = (uint8_t)(i * 7 + cmd);

        assert_int_equal(rdp_buf_append(&buf, &v, 1), PMIX_SUCCESS);
    }
    assert_int_equal(rdp_run_chan_send(chan, cmd, len ? &buf : NULL),
                     PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

static void frames_arrive_whole_and_in_order(void **state)
{
    send_pattern(fx->a.chan, 101, 0);
    send_pattern(fx->a.chan, 102, 10);
    send_pattern(fx->a.chan, 103, 300 * 1024);
    send_pattern(fx->a.chan, 104, 1);
    fx->b.stop_after_frames = 4;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.nframes, 4);
    assert_int_equal(fx->b.cmds[0], 101);
    assert_int_equal(fx->b.lens[0], 0);
    assert_int_equal(fx->b.cmds[2], 103);
    assert_int_equal(fx->b.lens[2], 300 * 1024);
    assert_int_equal(fx->b.cmds[3], 104);
    assert_true(fx->b.content_ok);
    assert_int_equal(rdp_run_chan_queued(fx->a.chan), 0);
    assert_int_equal(fx->b.closed, 0);
}

static void an_oversized_frame_closes_the_channel(void **state)
{
    rdp_run_chan_set_max_msg(fx->b.chan, 100);
    send_pattern(fx->a.chan, 101, 101);
    fx->b.stop_on_close = 1;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.nframes, 0);
    assert_int_equal(fx->b.closed, 1);
    assert_int_equal(fx->b.why, PMIX_ERR_UNPACK_FAILURE);
    assert_false(rdp_run_chan_is_open(fx->b.chan));
    assert_int_equal(rdp_run_chan_send(fx->b.chan, 101, NULL),
                     PMIX_ERR_UNREACH);
}

static void a_bad_header_closes_the_channel(void **state)
{
    int sv[2];
    const char junk[32] = "this is not an rdpmix frame....";

    /* replace a by a raw socket */
    rdp_run_chan_destroy(fx->b.chan);
    fx->b.chan = NULL;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(rdp_run_chan_create(fx->loop, sv[1], 1u << 20, msg_cb,
                                         close_cb, &fx->b, &fx->b.chan),
                     PMIX_SUCCESS);
    assert_int_equal(write(sv[0], junk, sizeof(junk)), sizeof(junk));
    fx->b.stop_on_close = 1;
    rdp_loop_run(fx->loop);
    close(sv[0]);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.closed, 1);
    assert_int_equal(fx->b.why, PMIX_ERR_UNPACK_FAILURE);
}

static void a_closed_peer_is_reported_once(void **state)
{
    rdp_run_chan_destroy(fx->a.chan);
    fx->a.chan          = NULL;
    fx->b.stop_on_close = 1;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.closed, 1);
    assert_int_equal(fx->b.why, PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(fx->a.closed, 0); /* destroy never calls back */
}

static void shutdown_flushes_then_closes(void **state)
{
    send_pattern(fx->a.chan, 105, 200 * 1024);
    rdp_run_chan_shutdown(fx->a.chan);
    assert_int_equal(rdp_run_chan_send(fx->a.chan, 101, NULL),
                     PMIX_ERR_UNREACH);
    fx->b.stop_on_close = 1;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.nframes, 1);
    assert_int_equal(fx->b.lens[0], 200 * 1024);
    assert_true(fx->b.content_ok);
    assert_int_equal(fx->b.why, PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(fx->a.closed, 1);
    assert_int_equal(fx->a.why, PMIX_SUCCESS);
}

static void destroy_inside_the_message_callback_is_safe(void **state)
{
    send_pattern(fx->a.chan, 101, 5);
    send_pattern(fx->a.chan, 102, 5);
    fx->b.destroy_in_msg = 1;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.nframes, 1);
    assert_null(fx->b.chan);
    assert_int_equal(fx->b.closed, 0);
}

static void blocking_flush_writes_without_the_loop(void **state)
{
    /* fits in the socket buffer, so the flush cannot block for long */
    send_pattern(fx->a.chan, 106, 32 * 1024);
    assert_int_equal(rdp_run_chan_flush_blocking(fx->a.chan, 2.0),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_run_chan_queued(fx->a.chan), 0);
    fx->b.stop_after_frames = 1;
    rdp_loop_run(fx->loop);
    assert_false(fx->timed_out);
    assert_int_equal(fx->b.lens[0], 32 * 1024);
    assert_true(fx->b.content_ok);
}

static void a_tcp_channel_sends_small_frames_at_once(void **state)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen       = sizeof(sa);
    int lfd, cfd, on = 0;
    socklen_t onlen = sizeof(on);
    end_t e         = {0};

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd                = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(lfd, 1), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &salen), 0);
    cfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(cfd >= 0);
    assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(rdp_run_chan_create(fx->loop, cfd, 1u << 20, msg_cb,
                                         close_cb, &e, &e.chan),
                     PMIX_SUCCESS);
    /* Nagle off: a frame is not held back behind an unacknowledged one */
    assert_int_equal(getsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &on, &onlen), 0);
    assert_int_equal(on, 1);
    rdp_run_chan_destroy(e.chan);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(frames_arrive_whole_and_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(an_oversized_frame_closes_the_channel,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_bad_header_closes_the_channel, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_closed_peer_is_reported_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(shutdown_flushes_then_closes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            destroy_inside_the_message_callback_is_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(blocking_flush_writes_without_the_loop,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_tcp_channel_sends_small_frames_at_once, setup, teardown),
    };

    return cmocka_run_group_tests_name("run_chan", tests, NULL, NULL);
}
