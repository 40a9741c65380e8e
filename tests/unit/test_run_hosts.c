/* test_run_hosts.c - host lists (--hosts, --hostfile, Slurm's counts),
 * shell words (--launch-agent, commands for ssh) and the control
 * listener's address filter (--ctl-if) */
#include "config.h"
#include "run/ctl.h"
#include "run/ctladdr.h"
#include "run/hosts.h"
#include "run/words.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cmocka.h>

static void host_is(const rdp_run_hostlist_t *l, uint32_t i, const char *name,
                    uint32_t slots)
{
    assert_true(i < l->n);
    assert_string_equal(l->hosts[i].name, name);
    assert_int_equal(l->hosts[i].slots, slots);
}

static void hosts_list_names_with_optional_slots_in_order(void **state)
{
    rdp_run_hostlist_t l = {0};
    char err[256];

    assert_int_equal(
        rdp_run_hosts_parse("h1,h2:4,user@h3", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_int_equal(l.n, 3);
    host_is(&l, 0, "h1", 0);
    host_is(&l, 1, "h2", 4);
    host_is(&l, 2, "user@h3", 0);
    /* a second --hosts appends */
    assert_int_equal(rdp_run_hosts_parse("h4:1", &l, err, sizeof(err)),
                     PMIX_SUCCESS);
    host_is(&l, 3, "h4", 1);
    rdp_run_hostlist_cleanup(&l);
    assert_int_equal(l.n, 0);
}

static void bad_hosts_fail_with_a_reason_and_leave_the_list(void **state)
{
    static const char *const bad[] = {"",         "h1,,h2", "h1:",   "h1:0",
                                      "h1:x",     "h1:-2",  ",h1",   "h1,",
                                      "h1:70000", "a b",    "h1,h1", "h1:2,h1"};
    rdp_run_hostlist_t l           = {0};
    char err[256];

    assert_int_equal(rdp_run_hosts_parse("h0", &l, err, sizeof(err)),
                     PMIX_SUCCESS);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_not_equal(rdp_run_hosts_parse(bad[i], &l, err, sizeof(err)),
                             PMIX_SUCCESS);
        assert_true(err[0] != '\0');
        assert_int_equal(l.n, 1);
        host_is(&l, 0, "h0", 0);
    }
    /* the one already listed */
    assert_int_not_equal(rdp_run_hosts_parse("h0", &l, err, sizeof(err)),
                         PMIX_SUCCESS);
    assert_non_null(strstr(err, "listed twice"));
    rdp_run_hostlist_cleanup(&l);
}

static void hostfile_has_a_host_a_line_with_slots_and_comments(void **state)
{
    const char *text     = "# the cluster\n"
                           "node1 slots=4\n"
                           "\n"
                           "   node2\t# no slots: no limit\n"
                           "node3 slots=2   \r\n"
                           "node4";
    rdp_run_hostlist_t l = {0};
    char err[256];

    assert_int_equal(rdp_run_hostfile_parse(text, "hf", &l, err, sizeof(err)),
                     PMIX_SUCCESS);
    assert_int_equal(l.n, 4);
    host_is(&l, 0, "node1", 4);
    host_is(&l, 1, "node2", 0);
    host_is(&l, 2, "node3", 2);
    host_is(&l, 3, "node4", 0);
    rdp_run_hostlist_cleanup(&l);
}

static void bad_hostfiles_say_the_line(void **state)
{
    rdp_run_hostlist_t l = {0};
    char err[256];

    assert_int_not_equal(
        rdp_run_hostfile_parse("a\nb slots=x\n", "hf", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_non_null(strstr(err, "hf, line 2"));
    assert_int_equal(l.n, 0);
    assert_int_not_equal(
        rdp_run_hostfile_parse("a cpus=2\n", "hf", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_non_null(strstr(err, "cpus=2"));
    assert_int_not_equal(
        rdp_run_hostfile_parse("a\n\na slots=1\n", "hf", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_non_null(strstr(err, "line 3"));
    assert_int_not_equal(
        rdp_run_hostfile_parse("# nothing\n\n", "hf", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_non_null(strstr(err, "no host"));
    assert_int_equal(l.n, 0);
    assert_int_not_equal(
        rdp_run_hostfile_read("/nonexistent/hostfile", &l, err, sizeof(err)),
        PMIX_SUCCESS);
    assert_non_null(strstr(err, "/nonexistent/hostfile"));
    rdp_run_hostlist_cleanup(&l); /* a failed parse may leave the array */
}

static void hostfile_is_read_from_disk(void **state)
{
    char path[]          = "/tmp/test_run_hosts.XXXXXX";
    int fd               = mkstemp(path);
    const char *text     = "x1 slots=3\nx2\n";
    rdp_run_hostlist_t l = {0};
    char err[256];

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(rdp_run_hostfile_read(path, &l, err, sizeof(err)),
                     PMIX_SUCCESS);
    unlink(path);
    assert_int_equal(l.n, 2);
    host_is(&l, 0, "x1", 3);
    host_is(&l, 1, "x2", 0);
    rdp_run_hostlist_cleanup(&l);
}

static void slurm_counts_expand_repeats(void **state)
{
    uint32_t c[6];
    const uint32_t w[6] = {2, 2, 2, 1, 4, 4};

    assert_int_equal(rdp_run_slurm_counts_parse("2(x3),1,4(x2)", 6, c), 0);
    assert_memory_equal(c, w, sizeof(w));
    assert_int_equal(rdp_run_slurm_counts_parse("4,1", 2, c), 0);
    assert_int_equal(c[0], 4);
    assert_int_equal(c[1], 1);
    assert_int_equal(rdp_run_slurm_counts_parse("1(x2)", 2, c), 0);
}

static void slurm_counts_that_do_not_match_fail_without_writing(void **state)
{
    static const char *const bad[] = {"",       "2(x3)", "2(x3),1,1", "2,",
                                      "2(x)",   "2(x2",  "0,1",       "a,b",
                                      "2(3),1", "1 ,1",  "2(x0),2"};
    uint32_t c[4]                  = {77, 77, 77, 77};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            rdp_run_slurm_counts_parse(bad[i], 4 - (i % 2 == 0), c), -1);
    }
    assert_int_equal(rdp_run_slurm_counts_parse("2(x3),1", 3, c), -1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c[i], 77);
    }
}

static void words_split_like_a_shell_without_expanding(void **state)
{
    char **w = NULL;

    assert_int_equal(rdp_run_words_split("  ssh -p 2222\t-o 'Proxy Command=x y'"
                                         " \"a \\\"b\\\" $c\" d\\ e ''",
                                         &w),
                     PMIX_SUCCESS);
    assert_string_equal(w[0], "ssh");
    assert_string_equal(w[1], "-p");
    assert_string_equal(w[2], "2222");
    assert_string_equal(w[3], "-o");
    assert_string_equal(w[4], "Proxy Command=x y");
    assert_string_equal(w[5], "a \"b\" $c");
    assert_string_equal(w[6], "d e");
    assert_string_equal(w[7], "");
    assert_null(w[8]);
    rdp_ctl_strv_free(w);
    w = NULL;
    assert_int_equal(rdp_run_words_split("   ", &w), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_run_words_split("ssh 'open", &w), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_run_words_split("ssh \"open", &w), PMIX_ERR_BAD_PARAM);
    assert_null(w);
}

static void quoted_words_read_back_as_the_same_words(void **state)
{
    char *words[] = {
        "exec",          "env",   "UCX_TLS=^sm",           "A=b c", "it's", "",
        "/path/rdpmixd", "--ctl", "10.0.0.1:5,10.0.0.2:5", NULL};
    char *q     = rdp_run_words_quote(words);
    char **back = NULL;

    assert_non_null(q);
    assert_string_equal(q, "exec env 'UCX_TLS=^sm' 'A=b c' 'it'\\''s' '' "
                           "/path/rdpmixd --ctl 10.0.0.1:5,10.0.0.2:5");
    /* our splitter reads shell quoting the way sh does */
    assert_int_equal(rdp_run_words_split(q, &back), PMIX_SUCCESS);
    for (int i = 0; words[i] != NULL; i++) {
        assert_string_equal(back[i], words[i]);
    }
    assert_null(back[9]);
    rdp_ctl_strv_free(back);
    free(q);
}

static struct in_addr a4(const char *s)
{
    struct in_addr a;

    assert_int_equal(inet_pton(AF_INET, s, &a), 1);
    return a;
}

static void ctl_filter_takes_interfaces_and_subnets(void **state)
{
    char err[256];

    assert_int_equal(
        rdp_run_ctl_filter_check("eth0,10.1.0.0/16", err, sizeof(err)), 0);
    assert_int_equal(rdp_run_ctl_filter_check("192.168.1.7", err, sizeof(err)),
                     0);
    assert_int_equal(rdp_run_ctl_filter_check("0.0.0.0/0", err, sizeof(err)),
                     0);
    assert_int_equal(rdp_run_ctl_filter_check("10.1.0.0/33", err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "10.1.0.0/33"));
    assert_int_equal(rdp_run_ctl_filter_check("eth0,,lo", err, sizeof(err)),
                     -1);
    assert_int_equal(rdp_run_ctl_filter_check("", err, sizeof(err)), -1);
    assert_int_equal(rdp_run_ctl_filter_check("300.1.1.1", err, sizeof(err)),
                     -1);
    assert_int_equal(rdp_run_ctl_filter_check("a-very-long-interface-name", err,
                                              sizeof(err)),
                     -1);

    assert_true(rdp_run_ctl_filter_match("eth0", "eth0", a4("1.2.3.4"), 0));
    assert_false(rdp_run_ctl_filter_match("eth0", "eth1", a4("1.2.3.4"), 0));
    assert_true(
        rdp_run_ctl_filter_match("10.1.0.0/16", "x", a4("10.1.200.3"), 0));
    assert_false(
        rdp_run_ctl_filter_match("10.1.0.0/16", "x", a4("10.2.0.3"), 0));
    assert_true(rdp_run_ctl_filter_match("eth9,192.168.1.7", "x",
                                         a4("192.168.1.7"), 0));
    assert_false(
        rdp_run_ctl_filter_match("192.168.1.7", "x", a4("192.168.1.8"), 0));
    assert_true(rdp_run_ctl_filter_match("0.0.0.0/0", "x", a4("8.8.8.8"), 0));
    /* no filter: anything but loopback; loopback when asked for */
    assert_true(rdp_run_ctl_filter_match(NULL, "eth0", a4("10.0.0.1"), 0));
    assert_false(rdp_run_ctl_filter_match(NULL, "lo", a4("127.0.0.1"), 1));
    assert_true(rdp_run_ctl_filter_match("lo", "lo", a4("127.0.0.1"), 1));
}

static void local_addrs_offer_loopback_only_when_asked_or_alone(void **state)
{
    struct in_addr *v = NULL;
    size_t n          = 0;

    assert_int_equal(rdp_run_ctl_local_addrs("lo", &v, &n), PMIX_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(ntohl(v[0].s_addr), 0x7f000001u);
    free(v);
    assert_int_equal(rdp_run_ctl_local_addrs("no-such-if0", &v, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 0);
    free(v);
    assert_int_equal(rdp_run_ctl_local_addrs(NULL, &v, &n), PMIX_SUCCESS);
    assert_true(n >= 1);
    for (size_t i = 0; n > 1 && i < n; i++) {
        assert_int_not_equal(ntohl(v[i].s_addr) >> 24, 127);
    }
    free(v);
}

static void
ctl_connect_tries_every_address_and_says_what_each_gave(void **state)
{
    char err[1024];
    int fd;

    /* nothing listens on port 1; "x" is not HOST:PORT */
    fd = rdp_run_ctl_connect("127.0.0.1:1,x,[::1]:1", 1.0, err, sizeof(err));
    assert_int_equal(fd, -1);
    assert_non_null(strstr(err, "127.0.0.1:1: Connection refused"));
    assert_non_null(strstr(err, "x: not HOST:PORT"));
    assert_non_null(strstr(err, "[::1]:1: "));
    fd = rdp_run_ctl_connect("", 1.0, err, sizeof(err));
    assert_int_equal(fd, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hosts_list_names_with_optional_slots_in_order),
        cmocka_unit_test(bad_hosts_fail_with_a_reason_and_leave_the_list),
        cmocka_unit_test(hostfile_has_a_host_a_line_with_slots_and_comments),
        cmocka_unit_test(bad_hostfiles_say_the_line),
        cmocka_unit_test(hostfile_is_read_from_disk),
        cmocka_unit_test(slurm_counts_expand_repeats),
        cmocka_unit_test(slurm_counts_that_do_not_match_fail_without_writing),
        cmocka_unit_test(words_split_like_a_shell_without_expanding),
        cmocka_unit_test(quoted_words_read_back_as_the_same_words),
        cmocka_unit_test(ctl_filter_takes_interfaces_and_subnets),
        cmocka_unit_test(local_addrs_offer_loopback_only_when_asked_or_alone),
        cmocka_unit_test(
            ctl_connect_tries_every_address_and_says_what_each_gave),
    };

    return cmocka_run_group_tests_name("run_hosts", tests, NULL, NULL);
}
