/* test_run_fabric.c - which device trees count as a fabric for the MTLs */
#include "config.h"
#include "run/fabric.h"
#include "run/util.h"

#include <fcntl.h>
#include <limits.h>
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

static char root[PATH_MAX];

static void mk(const char *rel, bool file)
{
    char path[PATH_MAX * 2];
    int fd;

    snprintf(path, sizeof(path), "%s%s", root, rel);
    if (file) {
        fd = open(path, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        close(fd);
    } else {
        assert_int_equal(mkdir(path, 0700), 0);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/rdp-fabric-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(root));
    mk("/dev", false);
    mk("/dev/null", true);
    mk("/dev/hfi1", true); /* no "_": not an Omni-Path unit */
    mk("/sys", false);
    mk("/sys/class", false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(rdp_run_rmtree(root), 0);
    return 0;
}

static void no_device_no_fabric(void **state)
{
    char found[64] = "";

    (void)state;
    assert_false(rdp_run_fabric_device(root, found, sizeof(found)));
    assert_string_equal(found, "");
    mk("/sys/class/infiniband", false); /* the class, no device in it */
    assert_false(rdp_run_fabric_device(root, NULL, 0));
}

static void each_device_kind_counts(void **state)
{
    static const char *const devs[] = {"/dev/hfi1_0", "/dev/ipath",
                                       "/dev/cxi0"};
    char found[64], path[PATH_MAX * 2];

    (void)state;
    for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
        mk(devs[i], true);
        assert_true(rdp_run_fabric_device(root, found, sizeof(found)));
        assert_string_equal(found, devs[i]);
        snprintf(path, sizeof(path), "%s%s", root, devs[i]);
        assert_int_equal(unlink(path), 0);
        assert_false(rdp_run_fabric_device(root, NULL, 0));
    }
    mk("/sys/class/infiniband", false);
    mk("/sys/class/infiniband/mlx5_0", false);
    assert_true(rdp_run_fabric_device(root, found, sizeof(found)));
    assert_string_equal(found, "/sys/class/infiniband/mlx5_0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_device_no_fabric, setup, teardown),
        cmocka_unit_test_setup_teardown(each_device_kind_counts, setup,
                                        teardown),
    };

    return cmocka_run_group_tests_name("run_fabric", tests, NULL, NULL);
}
