/* test_pnet_ib.c - ib's UCX_NET_DEVICES: the HCAs nearest each process */
#include "config.h"
#include "core/topo/topo_near.h"
#include "pnet/pnet.h"

#include <pmix.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* tests/data/ib2pkg.xml: PU 0 on package 0 with mlx5_0 (no port infos),
 * PU 1 on package 1 with mlx5_1 (port 1 up, port 2 down);
 * nohca2pkg.xml: the same without HCAs */
static char ib_xml[512], nohca_xml[512];

static int group_setup(void **state)
{
    const char *top = getenv("top_srcdir");

    (void)state;
    if (top == NULL) {
        top = "..";
    }
    snprintf(ib_xml, sizeof(ib_xml), "%s/tests/data/ib2pkg.xml", top);
    snprintf(nohca_xml, sizeof(nohca_xml), "%s/tests/data/nohca2pkg.xml", top);
    setenv("RDPMIX_PNET_CONF", "/nonexistent/pnet.conf", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rdp_pnet_cleanup();
    rdp_topo_near_cleanup();
    unsetenv("RDPMIX_PNET_IB_TOPOLOGY");
    return 0;
}

/* The devices chosen for (@a cpuset, @a locality) in @a xml; "-" for none */
static const char *near(const char *xml, const char *cpuset,
                        const char *locality)
{
    static char out[128];
    char *devices = NULL;
    pmix_status_t st;

    st = rdp_topo_near_hcas(xml, cpuset, locality, &devices);
    if (st != PMIX_SUCCESS) {
        snprintf(out, sizeof(out), "error %d", st);
    } else {
        snprintf(out, sizeof(out), "%s", devices != NULL ? devices : "-");
    }
    free(devices);
    return out;
}

static void a_process_gets_the_hca_of_its_package(void **state)
{
    (void)state;
    assert_string_equal(near(ib_xml, "0", NULL), "mlx5_0:1");
    assert_string_equal(near(ib_xml, "1", NULL), "mlx5_1:1");
    assert_string_equal(near(ib_xml, "hwloc:1", NULL), "mlx5_1:1");
    /* the cpuset wins over the locality string */
    assert_string_equal(near(ib_xml, "0", "SK1:CR1:HT1"), "mlx5_0:1");
}

static void a_locality_string_names_the_package_too(void **state)
{
    (void)state;
    assert_string_equal(near(ib_xml, NULL, "NM0:SK1:CR1:HT1"), "mlx5_1:1");
    assert_string_equal(near(ib_xml, "", "SK0"), "mlx5_0:1");
}

static void an_unbound_process_or_no_hca_gets_nothing(void **state)
{
    (void)state;
    assert_string_equal(near(ib_xml, NULL, NULL), "-");
    assert_string_equal(near(ib_xml, "", ""), "-");
    assert_string_equal(near(ib_xml, "0-1", NULL), "-"); /* every PU */
    assert_string_equal(near(ib_xml, "0-7", NULL), "-");
    assert_string_equal(near(nohca_xml, "0", NULL), "-");
    assert_string_equal(near(nohca_xml, "1", NULL), "-");
}

static void a_bad_binding_or_topology_is_an_error(void **state)
{
    char bad[64];

    (void)state;
    snprintf(bad, sizeof(bad), "error %d", PMIX_ERR_BAD_PARAM);
    assert_string_equal(near(ib_xml, "x", NULL), bad);
    assert_string_equal(near(ib_xml, "4-5", NULL), bad); /* no such PU */
    assert_string_equal(near(ib_xml, NULL, "ZZ1"), bad);
    assert_string_equal(near(ib_xml, NULL, "SK"), bad);
    assert_string_equal(near("/nonexistent/topo.xml", "0", NULL), bad);
    /* the topology of the last good call is not kept over a bad file */
    assert_string_equal(near(ib_xml, "1", NULL), "mlx5_1:1");
}

/* ---- through pnet: register_nspace's PMIX_PROC_DATA, setup_fork ---- */

static void proc_data(pmix_info_t *slot, pmix_rank_t rank, const char *cpuset,
                      const char *locality)
{
    pmix_data_array_t *da;
    void *list = PMIx_Info_list_start();

    assert_non_null(list);
    assert_int_equal(PMIx_Info_list_add(list, PMIX_RANK, &rank, PMIX_PROC_RANK),
                     PMIX_SUCCESS);
    if (cpuset != NULL) {
        assert_int_equal(
            PMIx_Info_list_add(list, PMIX_CPUSET, cpuset, PMIX_STRING),
            PMIX_SUCCESS);
    }
    if (locality != NULL) {
        assert_int_equal(PMIx_Info_list_add(list, PMIX_LOCALITY_STRING,
                                            locality, PMIX_STRING),
                         PMIX_SUCCESS);
    }
    PMIX_DATA_ARRAY_CREATE(da, 0, PMIX_INFO);
    assert_int_equal(PMIx_Info_list_convert(list, da), PMIX_SUCCESS);
    PMIx_Info_list_release(list);
    PMIX_INFO_LOAD(slot, PMIX_PROC_DATA, da, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(da);
}

/* Register ranks 0 (PU 0), 1 (PU 1), 2 (unbound), 3 (package 1 by
 * locality string) of @a nspace */
static pmix_status_t register_four(const char *nspace)
{
    pmix_info_t info[5];
    uint32_t size = 4;
    pmix_status_t st;

    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    proc_data(&info[1], 0, "0", NULL);
    proc_data(&info[2], 1, "1", "SK1:CR1:HT1");
    proc_data(&info[3], 2, NULL, NULL);
    proc_data(&info[4], 3, NULL, "SK1");
    st = rdp_pnet_setup_procs(nspace, info, 5);
    for (size_t i = 0; i < 5; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return st;
}

/* UCX_NET_DEVICES of @a rank after setup_fork ("-" when unset) */
static const char *forked(const char *nspace, pmix_rank_t rank,
                          const char *preset)
{
    static char out[128];
    char **env    = calloc(3, sizeof(*env));
    const char *v = "-";

    assert_non_null(env);
    env[0] = strdup("HOME=/");
    if (preset != NULL) {
        env[1] = strdup(preset);
    }
    assert_int_equal(rdp_pnet_setup_fork(nspace, rank, &env), PMIX_SUCCESS);
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], "UCX_NET_DEVICES=", 16) == 0) {
            v = env[i] + 16;
        }
    }
    snprintf(out, sizeof(out), "%s", v);
    for (size_t i = 0; env[i] != NULL; i++) {
        free(env[i]);
    }
    free(env);
    return out;
}

/* ib selected with topology @a xml, job "J" registered by register_four */
static void register_ib_job(const char *xml)
{
    setenv("RDPMIX_PNET_IB_TOPOLOGY", xml, 1);
    assert_int_equal(rdp_pnet_select("ib"), PMIX_SUCCESS);
    assert_int_equal(register_four("J"), PMIX_SUCCESS);
}

static void each_process_gets_its_own_hca_at_fork(void **state)
{
    (void)state;
    register_ib_job(ib_xml);
    assert_string_equal(forked("J", 0, NULL), "mlx5_0:1");
    assert_string_equal(forked("J", 1, NULL), "mlx5_1:1");
    assert_string_equal(forked("J", 2, NULL), "-");
    assert_string_equal(forked("J", 3, NULL), "mlx5_1:1");
    /* another job, another rank number: nothing */
    assert_string_equal(forked("K", 0, NULL), "-");
    assert_string_equal(forked("J", 9, NULL), "-");
    /* the user's own choice wins */
    assert_string_equal(forked("J", 0, "UCX_NET_DEVICES=mine:1"), "mine:1");
    rdp_pnet_job_end("J");
    assert_string_equal(forked("J", 0, NULL), "-");
}

static void nothing_is_set_without_hca_or_ib(void **state)
{
    (void)state;
    register_ib_job(nohca_xml);
    assert_string_equal(forked("J", 0, NULL), "-");
    assert_string_equal(forked("J", 1, NULL), "-");
    /* HCAs, but ib not selected */
    setenv("RDPMIX_PNET_IB_TOPOLOGY", ib_xml, 1);
    assert_int_equal(rdp_pnet_select("simptest"), PMIX_SUCCESS);
    assert_int_equal(register_four("L"), PMIX_SUCCESS);
    assert_string_equal(forked("L", 0, NULL), "-");
}

static void a_malformed_binding_fails_the_registration(void **state)
{
    pmix_info_t info[2];

    (void)state;
    setenv("RDPMIX_PNET_IB_TOPOLOGY", ib_xml, 1);
    assert_int_equal(rdp_pnet_select("ib"), PMIX_SUCCESS);
    proc_data(&info[0], 0, "0", NULL);
    proc_data(&info[1], 1, "0-x", NULL);
    assert_int_equal(rdp_pnet_setup_procs("J", info, 2), PMIX_ERR_BAD_PARAM);
    assert_string_equal(forked("J", 0, NULL), "-");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(a_process_gets_the_hca_of_its_package,
                                  teardown),
        cmocka_unit_test_teardown(a_locality_string_names_the_package_too,
                                  teardown),
        cmocka_unit_test_teardown(an_unbound_process_or_no_hca_gets_nothing,
                                  teardown),
        cmocka_unit_test_teardown(a_bad_binding_or_topology_is_an_error,
                                  teardown),
        cmocka_unit_test_teardown(each_process_gets_its_own_hca_at_fork,
                                  teardown),
        cmocka_unit_test_teardown(nothing_is_set_without_hca_or_ib, teardown),
        cmocka_unit_test_teardown(a_malformed_binding_fails_the_registration,
                                  teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, NULL);
}
