/* test_run_fabric.c - which device trees count as a fabric for the MTLs,
 * which parameter files choose an MTL, which programs link a library */
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

/* make @a rel under the tree: a directory (@a text NULL) or a file */
static void mk(const char *rel, const char *text)
{
    char path[PATH_MAX * 2];
    int fd;

    snprintf(path, sizeof(path), "%s%s", root, rel);
    if (text == NULL) {
        assert_int_equal(mkdir(path, 0700), 0);
        return;
    }
    fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/rdp-fabric-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(root));
    mk("/dev", NULL);
    mk("/dev/null", "");
    mk("/dev/hfi1", ""); /* no "_": not an Omni-Path unit */
    mk("/sys", NULL);
    mk("/sys/class", NULL);
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
    mk("/sys/class/infiniband", NULL); /* the class, no device in it */
    assert_false(rdp_run_fabric_device(root, NULL, 0));
}

static void each_device_kind_counts(void **state)
{
    static const char *const devs[] = {"/dev/hfi1_0", "/dev/ipath",
                                       "/dev/cxi0"};
    char found[64], path[PATH_MAX * 2];

    (void)state;
    for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
        mk(devs[i], "");
        assert_true(rdp_run_fabric_device(root, found, sizeof(found)));
        assert_string_equal(found, devs[i]);
        snprintf(path, sizeof(path), "%s%s", root, devs[i]);
        assert_int_equal(unlink(path), 0);
        assert_false(rdp_run_fabric_device(root, NULL, 0));
    }
    mk("/sys/class/infiniband", NULL);
    mk("/sys/class/infiniband/mlx5_0", NULL);
    assert_true(rdp_run_fabric_device(root, found, sizeof(found)));
    assert_string_equal(found, "/sys/class/infiniband/mlx5_0");
}

static void param_files_choose_by_include_lists(void **state)
{
    char path[PATH_MAX * 2];

    (void)state;
    snprintf(path, sizeof(path), "%s/p.conf", root);
    assert_false(rdp_run_ompi_file_selects(path, "mtl")); /* no file */
    /* Debian's defaults: exclusions only */
    mk("/p.conf", "# mtl = psm2\nbtl_base_warn_component_unused=0\n"
                  "mtl = ^ofi\npml = ^ucx\n");
    assert_false(rdp_run_ompi_file_selects(path, "mtl"));
    assert_false(rdp_run_ompi_file_selects(path, "pml"));
    mk("/p.conf", "mtl_base_verbose = 10\n  mtl=ofi\n");
    assert_true(rdp_run_ompi_file_selects(path, "mtl"));
    assert_false(rdp_run_ompi_file_selects(path, "pml"));
    mk("/p.conf", "pml = cm\npml = ^ucx\n"); /* the last one wins */
    assert_false(rdp_run_ompi_file_selects(path, "pml"));
    mk("/p.conf", "pml\t= cm\n");
    assert_true(rdp_run_ompi_file_selects(path, "pml"));
}

static void elf_needs_reads_the_direct_dependencies(void **state)
{
    char path[PATH_MAX * 2];

    (void)state;
    /* this test program: linked with libc, not with Open MPI */
    assert_int_equal(rdp_run_elf_needs("/proc/self/exe", "libc.so"), 1);
    assert_int_equal(rdp_run_elf_needs("/proc/self/exe", "libmpi.so"), 0);
    /* not ELF, a truncated ELF header, no file */
    mk("/script", "#!/bin/sh\nexec mpi_program libmpi.so\n");
    snprintf(path, sizeof(path), "%s/script", root);
    assert_int_equal(rdp_run_elf_needs(path, "libmpi.so"), 0);
    mk("/short", "\177ELF\2\1\1");
    snprintf(path, sizeof(path), "%s/short", root);
    assert_int_equal(rdp_run_elf_needs(path, "libc.so"), 0);
    snprintf(path, sizeof(path), "%s/none", root);
    assert_int_equal(rdp_run_elf_needs(path, "libc.so"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_device_no_fabric, setup, teardown),
        cmocka_unit_test_setup_teardown(each_device_kind_counts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(param_files_choose_by_include_lists,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(elf_needs_reads_the_direct_dependencies,
                                        setup, teardown),
    };

    return cmocka_run_group_tests_name("run_fabric", tests, NULL, NULL);
}
