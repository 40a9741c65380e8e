/* test_server_local_get.c - client-side calls inside a server process
 * (what Open MPI's mpirun does): Store_internal, Get of registered and
 * committed data, Put/Commit kept local, Fence not supported. */
#include "config.h"
#include "core/server/server_int.h"

#include <pmix.h>
#include <pmix_server.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define SRV_NS "srv.ns"
#define JOB_NS "1864105985"
#define NPROCS 4

static char tmpdir[64];

/* ---- helpers ---- */

typedef struct done {
    rdp_wait_t wait;
} done_t;

static void done_cb(pmix_status_t status, void *cbdata)
{
    done_t *d = cbdata;

    rdp_wait_signal(&d->wait, status);
}

static void server_up(void)
{
    pmix_info_t info[3];
    pmix_rank_t zero = 0;

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_NSPACE, SRV_NS, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_RANK, &zero, PMIX_PROC_RANK);
    assert_int_equal(PMIx_server_init(NULL, info, 3), PMIX_SUCCESS);
    for (size_t i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

static void register_job(void)
{
    pmix_info_t info[2 + NPROCS];
    uint32_t size = NPROCS;
    pmix_nspace_t ns;
    done_t d;

    PMIX_LOAD_NSPACE(ns, JOB_NS);

    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "node01", PMIX_STRING);
    for (pmix_rank_t r = 0; r < NPROCS; r++) {
        pmix_data_array_t da;
        pmix_info_t *pi;
        uint16_t lr = (uint16_t)r;

        PMIX_DATA_ARRAY_CONSTRUCT(&da, 2, PMIX_INFO);
        pi = da.array;
        PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &r, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIX_INFO_LOAD(&info[2 + r], PMIX_PROC_DATA, &da, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_DESTRUCT(&da);
    }
    rdp_wait_init(&d.wait);
    assert_int_equal(
        PMIx_server_register_nspace(ns, NPROCS, info, 2 + NPROCS, done_cb, &d),
        PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&d.wait), PMIX_SUCCESS);
    rdp_wait_cleanup(&d.wait);
    for (size_t i = 0; i < 2 + NPROCS; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/rdp-lget-XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        return -1;
    }
    server_up();
    register_job();
    return 0;
}

static int teardown(void **state)
{
    assert_int_equal(PMIx_server_finalize(), PMIX_SUCCESS);
    rmdir(tmpdir);
    return 0;
}

static pmix_proc_t proc_of(const char *ns, pmix_rank_t rank)
{
    pmix_proc_t p;

    PMIX_LOAD_PROCID(&p, ns, rank);
    return p;
}

/* What a client's COMMIT leaves in the server (loop thread). */
typedef struct commit_args {
    pmix_rank_t rank;
    const char *key;
    const char *val;
} commit_args_t;

static pmix_status_t commit_on_loop(void *arg)
{
    commit_args_t *a = arg;
    pmix_value_t v;

    v.type        = PMIX_STRING;
    v.data.string = (char *)a->val;
    return rdp_kvs_put(rdp_srv.modex, JOB_NS, a->rank, a->key, PMIX_GLOBAL, &v);
}

/* ---- tests ---- */

static void client_calls_before_any_init_fail(void **state)
{
    pmix_proc_t p = proc_of(SRV_NS, 0);
    pmix_value_t v, *val = NULL;

    v.type        = PMIX_STRING;
    v.data.string = "x";
    assert_int_equal(PMIx_Store_internal(&p, "opal.puri", &v), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Get(&p, "opal.puri", NULL, 0, &val), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, "k", &v), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Commit(), PMIX_ERR_INIT);
}

static void store_internal_then_get_own_key(void **state)
{
    pmix_proc_t me = proc_of(SRV_NS, 0);
    pmix_value_t v, *val = NULL;

    PMIX_VALUE_LOAD(&v, "tcp://127.0.0.1:4242", PMIX_STRING);
    assert_int_equal(PMIx_Store_internal(&me, "opal.puri", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    assert_int_equal(PMIx_Get(&me, "opal.puri", NULL, 0, &val), PMIX_SUCCESS);
    assert_non_null(val);
    assert_int_equal(val->type, PMIX_STRING);
    assert_string_equal(val->data.string, "tcp://127.0.0.1:4242");
    PMIX_VALUE_RELEASE(val);
    /* a key nobody stored */
    assert_int_equal(PMIx_Get(&me, "opal.nope", NULL, 0, &val),
                     PMIX_ERR_NOT_FOUND);
}

static void get_reads_registered_job_data(void **state)
{
    pmix_proc_t wild  = proc_of(JOB_NS, PMIX_RANK_WILDCARD);
    pmix_proc_t r2    = proc_of(JOB_NS, 2);
    pmix_value_t *val = NULL;

    assert_int_equal(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val),
                     PMIX_SUCCESS);
    assert_int_equal(val->type, PMIX_UINT32);
    assert_int_equal(val->data.uint32, NPROCS);
    PMIX_VALUE_RELEASE(val);
    assert_int_equal(PMIx_Get(&r2, PMIX_LOCAL_RANK, NULL, 0, &val),
                     PMIX_SUCCESS);
    assert_int_equal(val->type, PMIX_UINT16);
    assert_int_equal(val->data.uint16, 2);
    PMIX_VALUE_RELEASE(val);
}

static void get_of_unknown_nspace_is_not_found(void **state)
{
    pmix_proc_t p     = proc_of("no.such.ns", 0);
    pmix_value_t *val = NULL;

    assert_int_equal(PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &val),
                     PMIX_ERR_NOT_FOUND);
    assert_null(val);
}

static void get_sees_committed_data_once_it_arrives(void **state)
{
    pmix_proc_t r1      = proc_of(JOB_NS, 1);
    commit_args_t first = {1, "btl.tcp.4.1", "addr-1"};
    commit_args_t later = {1, "pml.base.2.0", "pml-1"};
    pmix_value_t *val   = NULL;

    assert_int_equal(rdp_runtime_call_sync(commit_on_loop, &first),
                     PMIX_SUCCESS);
    assert_int_equal(PMIx_Get(&r1, "btl.tcp.4.1", NULL, 0, &val), PMIX_SUCCESS);
    assert_string_equal(val->data.string, "addr-1");
    PMIX_VALUE_RELEASE(val);
    /* a miss is not remembered: data committed afterwards is found */
    assert_int_equal(PMIx_Get(&r1, "pml.base.2.0", NULL, 0, &val),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_runtime_call_sync(commit_on_loop, &later),
                     PMIX_SUCCESS);
    assert_int_equal(PMIx_Get(&r1, "pml.base.2.0", NULL, 0, &val),
                     PMIX_SUCCESS);
    assert_string_equal(val->data.string, "pml-1");
    PMIX_VALUE_RELEASE(val);
}

typedef struct nb_get {
    rdp_wait_t wait;
    uint32_t u32;
} nb_get_t;

static void nb_get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    nb_get_t *g = cbdata;

    if (status == PMIX_SUCCESS && kv->type == PMIX_UINT32) {
        g->u32 = kv->data.uint32;
    }
    rdp_wait_signal(&g->wait, status);
}

static void get_nb_answers_later_from_server_data(void **state)
{
    pmix_proc_t wild = proc_of(JOB_NS, PMIX_RANK_WILDCARD);
    nb_get_t g;

    rdp_wait_init(&g.wait);
    g.u32 = 0;
    assert_int_equal(PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, nb_get_cb, &g),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&g.wait), PMIX_SUCCESS);
    assert_int_equal(g.u32, NPROCS);
    rdp_wait_cleanup(&g.wait);
}

static void put_and_commit_stay_local_and_fence_is_not_supported(void **state)
{
    pmix_proc_t me = proc_of(SRV_NS, 0);
    pmix_value_t v, *val = NULL;

    PMIX_VALUE_LOAD(&v, "mine", PMIX_STRING);
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, "srv.key", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    assert_int_equal(PMIx_Commit(), PMIX_SUCCESS);
    assert_int_equal(PMIx_Get(&me, "srv.key", NULL, 0, &val), PMIX_SUCCESS);
    assert_string_equal(val->data.string, "mine");
    PMIX_VALUE_RELEASE(val);
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_ERR_NOT_SUPPORTED);
}

static void finalize_drops_client_state_and_reinit_starts_clean(void **state)
{
    pmix_proc_t me = proc_of(SRV_NS, 0);
    pmix_value_t v, *val = NULL;

    PMIX_VALUE_LOAD(&v, "before", PMIX_STRING);
    assert_int_equal(PMIx_Store_internal(&me, "opal.puri", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    assert_int_equal(PMIx_server_finalize(), PMIX_SUCCESS);
    assert_int_equal(PMIx_Get(&me, "opal.puri", NULL, 0, &val), PMIX_ERR_INIT);
    server_up();
    register_job();
    assert_int_equal(PMIx_Get(&me, "opal.puri", NULL, 0, &val),
                     PMIX_ERR_NOT_FOUND);
}

static void bad_arguments_are_refused(void **state)
{
    pmix_proc_t me = proc_of(SRV_NS, 0);
    pmix_value_t v;

    v.type        = PMIX_STRING;
    v.data.string = "x";
    assert_int_equal(PMIx_Store_internal(NULL, "k", &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Store_internal(&me, NULL, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Store_internal(&me, "k", NULL), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Get(&me, "k", NULL, 0, NULL), PMIX_ERR_BAD_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(client_calls_before_any_init_fail),
        cmocka_unit_test_setup_teardown(store_internal_then_get_own_key, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(get_reads_registered_job_data, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(get_of_unknown_nspace_is_not_found,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(get_sees_committed_data_once_it_arrives,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(get_nb_answers_later_from_server_data,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            put_and_commit_stay_local_and_fence_is_not_supported, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            finalize_drops_client_state_and_reinit_starts_clean, setup,
            teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused, setup,
                                        teardown),
    };

    return cmocka_run_group_tests_name("server_local_get", tests, NULL, NULL);
}
