/* test_run_limits.c - what a launch needs of the machine (src/run/limits.c) */
#include "config.h"
#include "run/limits.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* a machine with plenty of everything */
static const rdp_run_host_t roomy = {.nofile   = 1u << 20,
                                     .files    = 1u << 30,
                                     .tasks    = 1u << 30,
                                     .mem      = 1ull << 40,
                                     .shm_segs = 1u << 20};

static int fits(const rdp_run_host_t *host, uint32_t nnodes, uint32_t np,
                int sm, char *why)
{
    rdp_run_shape_t shape = {.nnodes  = nnodes,
                             .np      = np,
                             .max_ppn = (np + nnodes - 1) / nnodes,
                             .sm      = sm};

    why[0] = '\0';
    return rdp_run_host_fits(host, &shape, why, 256);
}

/* each daemon of an M-node job may hold two descriptors per other node
 * (a pidfd and an endpoint) and four per local rank, on top of its own */
static void open_files_per_process_bound_the_nodes(void **state)
{
    rdp_run_host_t host = roomy;
    uint64_t need =
        RDP_RUN_DAEMON_FDS + RDP_RUN_RANK_FDS * 1 + RDP_RUN_PEER_FDS * 999;
    char why[256], want[256];

    host.nofile = need;
    assert_true(fits(&host, 1000, 1000, 0, why));
    host.nofile = need - 1;
    assert_false(fits(&host, 1000, 1000, 0, why));
    snprintf(want, sizeof(want),
             "a daemon may need %u open files, but the limit is %u "
             "(ulimit -n)",
             (unsigned)need, (unsigned)need - 1);
    assert_string_equal(why, want);
    /* one node runs no engine: no peers */
    host.nofile = RDP_RUN_DAEMON_FDS + RDP_RUN_RANK_FDS * 100;
    assert_true(fits(&host, 1, 100, 1, why));
    assert_false(fits(&host, 1, 101, 1, why));
}

static void system_files_tasks_memory_and_segments_each_bound(void **state)
{
    rdp_run_host_t host;
    char why[256];

    host       = roomy;
    host.files = 1000;
    assert_false(fits(&host, 16, 16, 0, why));
    assert_non_null(strstr(why, "but the system has 1000 left (fs.file-max)"));

    host       = roomy;
    host.tasks = 16 * RDP_RUN_DAEMON_TASKS + 16 * RDP_RUN_RANK_TASKS;
    assert_false(fits(&host, 16, 16, 0, why));
    assert_non_null(strstr(why, "processes and threads"));
    host.tasks++;
    assert_true(fits(&host, 16, 16, 0, why));

    /* shared memory transports cost memory and two segments a daemon */
    host     = roomy;
    host.mem = 100 * RDP_RUN_DAEMON_MEM;
    assert_true(fits(&host, 100, 100, 0, why));
    assert_false(fits(&host, 100, 100, 1, why));
    assert_string_equal(why, "the daemons need 1200 MiB of memory, but 800 "
                             "MiB are available");
    host          = roomy;
    host.shm_segs = 2 * 100 - 1;
    assert_true(fits(&host, 100, 100, 0, why));
    assert_false(fits(&host, 100, 100, 1, why));
    assert_non_null(strstr(why, "needs 200 System V shared memory segments, "
                                "but 199 are left"));
    /* a single node has no UCX */
    host.shm_segs = 0;
    assert_true(fits(&host, 1, 4, 1, why));
}

static void ucx_tls_says_whether_shared_memory_is_used(void **state)
{
    assert_true(rdp_run_ucx_uses_sm(NULL));
    assert_true(rdp_run_ucx_uses_sm(""));
    assert_true(rdp_run_ucx_uses_sm("all"));
    assert_true(rdp_run_ucx_uses_sm("sm,self"));
    assert_true(rdp_run_ucx_uses_sm("posix,sysv,cma"));
    assert_true(rdp_run_ucx_uses_sm("tcp,sysv"));
    assert_true(rdp_run_ucx_uses_sm("^posix"));
    assert_true(rdp_run_ucx_uses_sm("^tcp"));
    assert_false(rdp_run_ucx_uses_sm("tcp"));
    assert_false(rdp_run_ucx_uses_sm("tcp,self,cma"));
    assert_false(rdp_run_ucx_uses_sm("^sm"));
    assert_false(rdp_run_ucx_uses_sm("^tcp,shm"));
    assert_false(rdp_run_ucx_uses_sm("^sysv,posix"));
    assert_false(rdp_run_ucx_uses_sm("tcp,smx")); /* a name, not a prefix */
}

/* the probe reads this machine: every value is there or UINT64_MAX */
static void the_probe_reads_this_machine(void **state)
{
    rdp_run_host_t host;

    memset(&host, 0, sizeof(host));
    rdp_run_host_probe(&host);
    assert_true(host.nofile > 3);
    assert_true(host.files > 0);
    assert_true(host.tasks > 0);
    assert_true(host.mem > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_files_per_process_bound_the_nodes),
        cmocka_unit_test(system_files_tasks_memory_and_segments_each_bound),
        cmocka_unit_test(ucx_tls_says_whether_shared_memory_is_used),
        cmocka_unit_test(the_probe_reads_this_machine),
    };

    return cmocka_run_group_tests_name("run_limits", tests, NULL, NULL);
}
