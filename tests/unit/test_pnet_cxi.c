/* test_pnet_cxi.c - sshot's CXI services: libcxi when loadable, else the
 * site command (tests/unit/fake_libcxi.c stands in for libcxi) */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"

#include <pmix.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define FAKE_CXI "tests/unit/.libs/libfakecxi.so"

static char dir[64], cxi_log[128], cmd_log[128], cmd[128];

/* A site command that logs its arguments and reports service id 7 */
static int write_command(void)
{
    FILE *f = fopen(cmd, "w");

    if (f == NULL) {
        return -1;
    }
    fprintf(f,
            "#!/bin/sh\necho \"$*\" >>%s\n"
            "[ \"$1\" = setup ] && echo svc_ids=7\nexit 0\n",
            cmd_log);
    fclose(f);
    return chmod(cmd, 0700);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/rdp-cxi-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(cxi_log, sizeof(cxi_log), "%s/cxi.log", dir);
    snprintf(cmd_log, sizeof(cmd_log), "%s/cmd.log", dir);
    snprintf(cmd, sizeof(cmd), "%s/svc-cmd", dir);
    setenv("RDPMIX_PNET_CONF", "/nonexistent/pnet.conf", 1);
    setenv("RDPMIX_PNET_STATE_DIR", dir, 1);
    setenv("RDPMIX_PNET_SSHOT_SVC_COMMAND", cmd, 1);
    setenv("FAKE_CXI_LOG", cxi_log, 1);
    return write_command();
}

static int group_teardown(void **state)
{
    char rm[128];

    (void)state;
    snprintf(rm, sizeof(rm), "rm -rf %s", dir);
    return system(rm) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rdp_pnet_cleanup();
    unlink(cxi_log);
    unlink(cmd_log);
    unsetenv("RDPMIX_PNET_SSHOT_LIBCXI");
    unsetenv("RDPMIX_PNET_SSHOT_DEVICES");
    unsetenv("FAKE_CXI_FAIL_DEV");
    return 0;
}

/* Node setup of job @a nspace holding VNIs @a vnis, sshot selected */
static pmix_status_t setup_node(const char *nspace, const char *vnis)
{
    pmix_info_t info;
    pmix_status_t st;

    assert_int_equal(rdp_pnet_select("sshot"), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info, "rdpmix.pnet.sshot.vnis", vnis, PMIX_STRING);
    st = rdp_pnet_setup_local(nspace, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return st;
}

/* SLINGSHOT_SVC_IDS a process of @a nspace gets ("-" when none) */
static const char *svc_ids(const char *nspace)
{
    static char out[64];
    char **env = calloc(1, sizeof(*env));

    assert_non_null(env);
    assert_int_equal(rdp_pnet_setup_fork(nspace, 0, &env), PMIX_SUCCESS);
    snprintf(out, sizeof(out), "-");
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], "SLINGSHOT_SVC_IDS=", 18) == 0) {
            snprintf(out, sizeof(out), "%s", env[i] + 18);
        }
        free(env[i]);
    }
    free(env);
    return out;
}

/* Does file @a path hold line @a line? */
static bool has_line(const char *path, const char *line)
{
    char buf[512];
    bool found = false;
    FILE *f    = fopen(path, "r");

    while (f != NULL && !found && fgets(buf, sizeof(buf), f) != NULL) {
        buf[strcspn(buf, "\n")] = '\0';
        found                   = strcmp(buf, line) == 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    return found;
}

static void loading_tells_absent_from_unusable(void **state)
{
    rdp_pnet_cxi_t *cxi = NULL;

    (void)state;
    assert_int_equal(rdp_pnet_cxi_load("/nonexistent/libcxi.so.1", &cxi),
                     PMIX_ERR_NOT_FOUND);
    /* a library, but not libcxi */
    assert_int_equal(rdp_pnet_cxi_load("libm.so.6", &cxi),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(rdp_pnet_cxi_load(FAKE_CXI, &cxi), PMIX_SUCCESS);
    rdp_pnet_cxi_unload(cxi);
}

static void without_libcxi_the_site_command_programs_the_node(void **state)
{
    char line[256];

    (void)state;
    setenv("RDPMIX_PNET_SSHOT_LIBCXI", "/nonexistent/libcxi.so.1", 1);
    assert_int_equal(setup_node("J", "1024,1025"), PMIX_SUCCESS);
    assert_string_equal(svc_ids("J"), "7");
    snprintf(line, sizeof(line), "setup J %u 1024,1025 cxi0",
             (unsigned)geteuid());
    assert_true(has_line(cmd_log, line));
    assert_int_equal(access(cxi_log, F_OK), -1);
    rdp_pnet_job_end("J");
    snprintf(line, sizeof(line), "release J %u 1024,1025 cxi0",
             (unsigned)geteuid());
    assert_true(has_line(cmd_log, line));
}

static void sshot_libcxi_none_keeps_to_the_command(void **state)
{
    (void)state;
    setenv("RDPMIX_PNET_SSHOT_LIBCXI", "none", 1);
    assert_int_equal(setup_node("J", "1024"), PMIX_SUCCESS);
    assert_string_equal(svc_ids("J"), "7");
    assert_int_equal(access(cxi_log, F_OK), -1);
    rdp_pnet_job_end("J");
}

static void with_libcxi_each_device_gets_a_service(void **state)
{
    char line[256];

    (void)state;
    setenv("RDPMIX_PNET_SSHOT_LIBCXI", FAKE_CXI, 1);
    setenv("RDPMIX_PNET_SSHOT_DEVICES", "cxi0,cxi1", 1);
    assert_int_equal(setup_node("J", "1024,1025"), PMIX_SUCCESS);
    assert_string_equal(svc_ids("J"), "100,101");
    for (unsigned dev = 0; dev < 2; dev++) {
        snprintf(line, sizeof(line),
                 "alloc dev=%u members=1 vnis=1 tcs=0 enable=1 uid=%u "
                 "type=1 nvnis=2 vni=1024,1025",
                 dev, (unsigned)geteuid());
        assert_true(has_line(cxi_log, line));
    }
    assert_int_equal(access(cmd_log, F_OK), -1); /* no command */
    rdp_pnet_job_end("J");
    assert_true(has_line(cxi_log, "destroy dev=0 svc=100"));
    assert_true(has_line(cxi_log, "destroy dev=1 svc=101"));
}

static void a_refusing_device_fails_the_node_and_rolls_back(void **state)
{
    (void)state;
    setenv("RDPMIX_PNET_SSHOT_LIBCXI", FAKE_CXI, 1);
    setenv("RDPMIX_PNET_SSHOT_DEVICES", "cxi0,cxi1", 1);
    setenv("FAKE_CXI_FAIL_DEV", "1", 1);
    assert_int_equal(setup_node("J", "1024"), PMIX_ERR_NO_PERMISSIONS);
    assert_true(has_line(cxi_log, "refuse dev=1"));
    assert_true(has_line(cxi_log, "destroy dev=0 svc=100"));
    assert_string_equal(svc_ids("J"), "-");
    assert_int_equal(access(cmd_log, F_OK), -1);
}

static void more_vnis_than_a_service_holds_or_a_bad_device_fail(void **state)
{
    (void)state;
    setenv("RDPMIX_PNET_SSHOT_LIBCXI", FAKE_CXI, 1);
    assert_int_equal(setup_node("J", "1,2,3,4,5"), PMIX_ERR_BAD_PARAM);
    setenv("RDPMIX_PNET_SSHOT_DEVICES", "eth0", 1);
    assert_int_equal(setup_node("K", "1024"), PMIX_ERR_BAD_PARAM);
    setenv("RDPMIX_PNET_SSHOT_DEVICES", "cxi0,cxi", 1);
    assert_int_equal(setup_node("L", "1024"), PMIX_ERR_BAD_PARAM);
    /* the first device's service was given back */
    assert_true(has_line(cxi_log, "destroy dev=0 svc=100"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(loading_tells_absent_from_unusable, teardown),
        cmocka_unit_test_teardown(
            without_libcxi_the_site_command_programs_the_node, teardown),
        cmocka_unit_test_teardown(sshot_libcxi_none_keeps_to_the_command,
                                  teardown),
        cmocka_unit_test_teardown(with_libcxi_each_device_gets_a_service,
                                  teardown),
        cmocka_unit_test_teardown(
            a_refusing_device_fails_the_node_and_rolls_back, teardown),
        cmocka_unit_test_teardown(
            more_vnis_than_a_service_holds_or_a_bad_device_fail, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
