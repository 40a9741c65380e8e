/* test_logchan.c - PMIx_Log channel dispatch, syslog datagrams, lines */
#include "config.h"
#include "core/util/logchan.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

/* A writer that records what it was given and answers as told. */
typedef struct rec {
    char got[8][64];
    int n;
    pmix_status_t answer[RDP_LOGCHAN_OTHER + 1];
} rec_t;

static pmix_status_t rec_write(enum rdp_logchan chan, const char *msg,
                               void *arg)
{
    rec_t *r = arg;

    snprintf(r->got[r->n++], sizeof(r->got[0]), "%d:%s", (int)chan, msg);
    return r->answer[chan];
}

static void load(pmix_info_t *i, const char *key, const char *msg)
{
    PMIX_INFO_LOAD(i, key, msg, PMIX_STRING);
}

static void unload(pmix_info_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&d[i]);
    }
}

static void keys_name_their_channels(void **state)
{
    assert_int_equal(rdp_logchan_of(PMIX_LOG_STDOUT), RDP_LOGCHAN_STDOUT);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_STDERR), RDP_LOGCHAN_STDERR);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_SYSLOG), RDP_LOGCHAN_LOCAL_SYSLOG);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_LOCAL_SYSLOG),
                     RDP_LOGCHAN_LOCAL_SYSLOG);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_GLOBAL_SYSLOG),
                     RDP_LOGCHAN_GLOBAL_SYSLOG);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_EMAIL), RDP_LOGCHAN_OTHER);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_JOB_RECORD), RDP_LOGCHAN_OTHER);
    assert_int_equal(rdp_logchan_of("pmix.log.future"), RDP_LOGCHAN_OTHER);
    assert_int_equal(rdp_logchan_of(PMIX_LOG_ONCE), RDP_LOGCHAN_NONE);
}

/* every entry, in order; all written -> success */
static void every_channel_in_order(void **state)
{
    rec_t r = {0};
    pmix_info_t d[3];
    rdp_logchan_opts_t o;

    load(&d[0], PMIX_LOG_STDERR, "a");
    load(&d[1], PMIX_LOG_STDOUT, "b");
    load(&d[2], PMIX_LOG_SYSLOG, "c");
    rdp_logchan_opts_parse(NULL, 0, &o);
    assert_false(o.once);
    assert_int_equal(o.priority, LOG_USER | LOG_INFO);
    assert_int_equal(rdp_logchan_dispatch(d, 3, &o, rec_write, &r),
                     PMIX_SUCCESS);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.got[0], "2:a");
    assert_string_equal(r.got[1], "1:b");
    assert_string_equal(r.got[2], "3:c");
    unload(d, 3);
}

/* PMIX_LOG_ONCE: the first channel that works, and no other */
static void once_stops_at_the_first_that_works(void **state)
{
    rec_t r = {0};
    pmix_info_t d[4], dir[2];
    rdp_logchan_opts_t o;
    bool yes = true;
    int pri  = LOG_ERR;

    load(&d[0], PMIX_LOG_EMAIL, "x");
    load(&d[1], PMIX_LOG_SYSLOG, "s");
    load(&d[2], PMIX_LOG_STDOUT, "o");
    load(&d[3], PMIX_LOG_STDERR, "e");
    PMIX_INFO_LOAD(&dir[0], PMIX_LOG_ONCE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dir[1], PMIX_LOG_SYSLOG_PRI, &pri, PMIX_INT);
    rdp_logchan_opts_parse(dir, 2, &o);
    assert_true(o.once);
    assert_int_equal(o.priority, LOG_USER | LOG_ERR);
    r.answer[RDP_LOGCHAN_LOCAL_SYSLOG] = PMIX_ERR_NOT_AVAILABLE;
    assert_int_equal(rdp_logchan_dispatch(d, 4, &o, rec_write, &r),
                     PMIX_SUCCESS);
    assert_int_equal(r.n, 2); /* syslog failed, stdout worked */
    assert_string_equal(r.got[1], "1:o");
    unload(d, 4);
    unload(dir, 2);
}

/* PMIX_LOG_TIMESTAMP: every channel gets "[UTC time] message";
 * PMIX_LOG_GENERATE_TIMESTAMP stamps with the time of the request */
static void timestamps_prefix_every_entry(void **state)
{
    rec_t r = {0};
    pmix_info_t d[2], dir;
    rdp_logchan_opts_t o;
    time_t when = 86400 + 3661; /* 1970-01-02 01:01:01 UTC */
    bool yes    = true;

    load(&d[0], PMIX_LOG_STDOUT, "o");
    load(&d[1], PMIX_LOG_STDERR, "e");
    PMIX_INFO_LOAD(&dir, PMIX_LOG_TIMESTAMP, &when, PMIX_TIME);
    rdp_logchan_opts_parse(&dir, 1, &o);
    assert_int_equal(o.timestamp, when);
    assert_int_equal(rdp_logchan_dispatch(d, 2, &o, rec_write, &r),
                     PMIX_SUCCESS);
    assert_string_equal(r.got[0], "1:[1970-01-02T01:01:01Z] o");
    assert_string_equal(r.got[1], "2:[1970-01-02T01:01:01Z] e");
    PMIX_INFO_DESTRUCT(&dir);
    PMIX_INFO_LOAD(&dir, PMIX_LOG_GENERATE_TIMESTAMP, &yes, PMIX_BOOL);
    rdp_logchan_opts_parse(&dir, 1, &o);
    assert_true(o.timestamp != 0);
    rdp_logchan_opts_parse(NULL, 0, &o);
    assert_int_equal(o.timestamp, 0);
    unload(d, 2);
    PMIX_INFO_DESTRUCT(&dir);
}

static void unsupported_and_partial(void **state)
{
    rec_t r = {0};
    pmix_info_t d[2];
    rdp_logchan_opts_t o;

    rdp_logchan_opts_parse(NULL, 0, &o);
    load(&d[0], PMIX_LOG_EMAIL, "x");
    assert_int_equal(rdp_logchan_dispatch(d, 1, &o, rec_write, &r),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(r.n, 0);
    load(&d[1], PMIX_LOG_STDOUT, "o");
    assert_int_equal(rdp_logchan_dispatch(d, 2, &o, rec_write, &r),
                     PMIX_ERR_PARTIAL_SUCCESS);
    /* a channel the writer lacks counts as unsupported */
    r.answer[RDP_LOGCHAN_STDOUT] = PMIX_ERR_NOT_SUPPORTED;
    assert_int_equal(rdp_logchan_dispatch(d, 2, &o, rec_write, &r),
                     PMIX_ERR_NOT_SUPPORTED);
    /* a failure is reported as itself */
    r.answer[RDP_LOGCHAN_STDOUT] = PMIX_ERR_NOT_AVAILABLE;
    assert_int_equal(rdp_logchan_dispatch(&d[1], 1, &o, rec_write, &r),
                     PMIX_ERR_NOT_AVAILABLE);
    unload(d, 2);
}

static void bad_requests(void **state)
{
    rec_t r = {0};
    pmix_info_t d[2];
    rdp_logchan_opts_t o;
    int one = 1;

    rdp_logchan_opts_parse(NULL, 0, &o);
    assert_int_equal(rdp_logchan_dispatch(NULL, 0, &o, rec_write, &r),
                     PMIX_ERR_BAD_PARAM);
    load(&d[0], PMIX_LOG_STDOUT, "o");
    PMIX_INFO_LOAD(&d[1], PMIX_LOG_STDERR, &one, PMIX_INT);
    assert_int_equal(rdp_logchan_dispatch(d, 2, &o, rec_write, &r),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(r.n, 0); /* nothing written from a bad request */
    unload(d, 2);
}

/* One RFC 3164 datagram to the socket RDPMIX_SYSLOG_SOCKET names */
static void syslog_sends_one_datagram(void **state)
{
    char dir[] = "/tmp/logchanXXXXXX", path[128], buf[512], want[128];
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    pmix_proc_t src;
    ssize_t n;
    int fd;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/log", dir);
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    setenv("RDPMIX_SYSLOG_SOCKET", path, 1);
    PMIX_LOAD_PROCID(&src, "job.1", 3);
    assert_int_equal(
        rdp_logchan_syslog(LOG_USER | LOG_WARNING, "tagx", &src, "hello\n"),
        PMIX_SUCCESS);
    n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_memory_equal(buf, "<12>", 4);
    snprintf(want, sizeof(want), " tagx[%d]: [job.1:3] hello", (int)getpid());
    assert_non_null(strstr(buf, want));
    assert_int_equal(buf[n - 1], 'o'); /* no trailing newline */
    close(fd);
    unlink(path);
    /* nobody listens */
    assert_int_equal(rdp_logchan_syslog(LOG_USER, "t", NULL, "x"),
                     PMIX_ERR_NOT_AVAILABLE);
    rmdir(dir);
    unsetenv("RDPMIX_SYSLOG_SOCKET");
}

static void lines_end_with_one_newline(void **state)
{
    int p[2];
    char buf[32];
    ssize_t n;

    assert_int_equal(pipe(p), 0);
    assert_int_equal(rdp_logchan_write_line(p[1], "abc"), PMIX_SUCCESS);
    assert_int_equal(rdp_logchan_write_line(p[1], "def\n"), PMIX_SUCCESS);
    close(p[1]);
    n = read(p[0], buf, sizeof(buf) - 1);
    assert_int_equal(n, 8);
    buf[n] = '\0';
    assert_string_equal(buf, "abc\ndef\n");
    close(p[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_name_their_channels),
        cmocka_unit_test(every_channel_in_order),
        cmocka_unit_test(once_stops_at_the_first_that_works),
        cmocka_unit_test(timestamps_prefix_every_entry),
        cmocka_unit_test(unsupported_and_partial),
        cmocka_unit_test(bad_requests),
        cmocka_unit_test(syslog_sends_one_datagram),
        cmocka_unit_test(lines_end_with_one_newline),
    };

    return cmocka_run_group_tests_name("logchan", tests, NULL, NULL);
}
