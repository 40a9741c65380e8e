/* test_run_iof.c - rdpmix-run's output assembly (pass-through, tagged) */
#include "config.h"
#include "run/ctl.h"
#include "run/iof.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* what the launcher would have written: each write as one unit */
typedef struct sink {
    char out[8192];
    size_t out_len;
    char err[8192];
    size_t err_len;
    int writes;
} sink_t;

static void sink_write(int channel, const void *data, size_t len, void *arg)
{
    sink_t *s = arg;

    if (channel == RDP_CTL_STDERR) {
        assert_true(s->err_len + len < sizeof(s->err));
        memcpy(s->err + s->err_len, data, len);
        s->err_len += len;
    } else {
        assert_true(s->out_len + len < sizeof(s->out));
        memcpy(s->out + s->out_len, data, len);
        s->out_len += len;
    }
    s->writes++;
}

static void input(rdp_run_iof_t *iof, uint32_t rank, int channel, const char *s)
{
    assert_int_equal(rdp_run_iof_input(iof, rank, channel, s, strlen(s)),
                     PMIX_SUCCESS);
}

static void untagged_output_passes_through(void **state)
{
    sink_t s = {0};
    rdp_run_iof_t *iof;

    assert_int_equal(rdp_run_iof_create(2, 0, sink_write, &s, &iof),
                     PMIX_SUCCESS);
    input(iof, 0, RDP_CTL_STDOUT, "par");
    input(iof, 1, RDP_CTL_STDOUT, "other\n");
    input(iof, 0, RDP_CTL_STDOUT, "tial\n");
    input(iof, 1, RDP_CTL_STDERR, "e");
    rdp_run_iof_flush_all(iof);
    assert_int_equal(s.out_len, strlen("parother\ntial\n"));
    assert_memory_equal(s.out, "parother\ntial\n", s.out_len);
    assert_int_equal(s.err_len, 1);
    rdp_run_iof_destroy(iof);
}

static void tagged_lines_are_whole_and_prefixed(void **state)
{
    sink_t s = {0};
    rdp_run_iof_t *iof;
    const char *want = "[1] other\n[0] partial\n[0] a\n[0] b\n";

    assert_int_equal(rdp_run_iof_create(2, 1, sink_write, &s, &iof),
                     PMIX_SUCCESS);
    input(iof, 0, RDP_CTL_STDOUT, "par");
    input(iof, 1, RDP_CTL_STDOUT, "other\n");
    input(iof, 0, RDP_CTL_STDOUT, "tial\na\nb\n");
    assert_int_equal(s.out_len, strlen(want));
    assert_memory_equal(s.out, want, s.out_len);
    /* one write per line */
    assert_int_equal(s.writes, 4);
    rdp_run_iof_destroy(iof);
}

static void channels_keep_separate_partial_lines(void **state)
{
    sink_t s = {0};
    rdp_run_iof_t *iof;

    assert_int_equal(rdp_run_iof_create(1, 1, sink_write, &s, &iof),
                     PMIX_SUCCESS);
    input(iof, 0, RDP_CTL_STDOUT, "out-");
    input(iof, 0, RDP_CTL_STDERR, "err-");
    input(iof, 0, RDP_CTL_STDERR, "line\n");
    input(iof, 0, RDP_CTL_STDOUT, "line\n");
    assert_int_equal(s.out_len, strlen("[0] out-line\n"));
    assert_memory_equal(s.out, "[0] out-line\n", s.out_len);
    assert_memory_equal(s.err, "[0] err-line\n", s.err_len);
    rdp_run_iof_destroy(iof);
}

static void end_of_file_flushes_a_partial_line_with_a_newline(void **state)
{
    sink_t s = {0};
    rdp_run_iof_t *iof;

    assert_int_equal(rdp_run_iof_create(3, 1, sink_write, &s, &iof),
                     PMIX_SUCCESS);
    input(iof, 2, RDP_CTL_STDOUT, "no newline");
    assert_int_equal(s.out_len, 0);
    rdp_run_iof_flush(iof, 2, RDP_CTL_STDOUT);
    assert_int_equal(s.out_len, strlen("[2] no newline\n"));
    assert_memory_equal(s.out, "[2] no newline\n", s.out_len);
    /* nothing pending: a second flush writes nothing */
    rdp_run_iof_flush(iof, 2, RDP_CTL_STDOUT);
    assert_int_equal(s.writes, 1);
    rdp_run_iof_destroy(iof);
}

static void out_of_range_rank_or_channel_is_ignored(void **state)
{
    sink_t s = {0};
    rdp_run_iof_t *iof;

    assert_int_equal(rdp_run_iof_create(2, 1, sink_write, &s, &iof),
                     PMIX_SUCCESS);
    input(iof, 2, RDP_CTL_STDOUT, "bad rank\n");
    input(iof, 0, 7, "bad channel\n");
    rdp_run_iof_flush(iof, 9, RDP_CTL_STDOUT);
    rdp_run_iof_flush_all(iof);
    assert_int_equal(s.writes, 0);
    rdp_run_iof_destroy(iof);
}

typedef struct counter {
    size_t bytes;
    int writes;
    int last_nl;
} counter_t;

static void count_write(int channel, const void *data, size_t len, void *arg)
{
    counter_t *c = arg;

    c->bytes += len;
    c->writes++;
    c->last_nl = len > 0 && ((const char *)data)[len - 1] == '\n';
}

static void an_endless_line_is_cut_at_the_limit(void **state)
{
    counter_t c = {0};
    rdp_run_iof_t *iof;
    size_t chunk = 64 * 1024;
    char *big    = malloc(chunk);

    assert_non_null(big);
    memset(big, 'x', chunk);
    assert_int_equal(rdp_run_iof_create(1, 1, count_write, &c, &iof),
                     PMIX_SUCCESS);
    /* up to the limit the line is kept */
    for (size_t fed = 0; fed < RDP_RUN_IOF_MAX_PARTIAL; fed += chunk) {
        rdp_run_iof_input(iof, 0, RDP_CTL_STDERR, big, chunk);
    }
    assert_int_equal(c.writes, 0);
    /* beyond it, everything goes out as one tagged line */
    rdp_run_iof_input(iof, 0, RDP_CTL_STDERR, big, chunk);
    assert_int_equal(c.writes, 1);
    assert_int_equal(c.bytes,
                     strlen("[0] ") + RDP_RUN_IOF_MAX_PARTIAL + chunk + 1);
    assert_true(c.last_nl);
    rdp_run_iof_flush_all(iof);
    assert_int_equal(c.writes, 1);
    rdp_run_iof_destroy(iof);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(untagged_output_passes_through),
        cmocka_unit_test(tagged_lines_are_whole_and_prefixed),
        cmocka_unit_test(channels_keep_separate_partial_lines),
        cmocka_unit_test(end_of_file_flushes_a_partial_line_with_a_newline),
        cmocka_unit_test(out_of_range_rank_or_channel_is_ignored),
        cmocka_unit_test(an_endless_line_is_cut_at_the_limit),
    };

    return cmocka_run_group_tests_name("run_iof", tests, NULL, NULL);
}
