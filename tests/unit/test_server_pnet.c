/* test_server_pnet.c - RFC0012 through the server's Standard calls:
 * setup_application -> setup_local_support -> setup_fork -> deregister */
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

#define KEY_ENVAR "RDPMIX_PNET_SIMPTEST_KEY"

static char tmpdir[64];

/* ---- helpers ---- */

typedef struct app_answer {
    rdp_wait_t wait;
    pmix_info_t *info; /* copies */
    size_t ninfo;
    pthread_t thread; /* where the callback ran */
} app_answer_t;

static void app_cb(pmix_status_t status, pmix_info_t info[], size_t ninfo,
                   void *provided_cbdata, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    app_answer_t *a = provided_cbdata;

    a->thread = pthread_self();
    if (status == PMIX_SUCCESS && ninfo > 0) {
        PMIX_INFO_CREATE(a->info, ninfo);
        for (size_t i = 0; i < ninfo; i++) {
            PMIX_INFO_XFER(&a->info[i], &info[i]);
        }
        a->ninfo = ninfo;
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata); /* the library frees its answer */
    }
    rdp_wait_signal(&a->wait, status);
}

static pmix_status_t setup_application(const char *ns, app_answer_t *a)
{
    pmix_nspace_t nspace;
    pmix_status_t st;

    memset(a, 0, sizeof(*a));
    rdp_wait_init(&a->wait);
    PMIX_LOAD_NSPACE(nspace, ns);
    st = PMIx_server_setup_application(nspace, NULL, 0, app_cb, a);
    if (st == PMIX_SUCCESS) {
        st = rdp_wait_wait(&a->wait);
    }
    rdp_wait_cleanup(&a->wait);
    return st;
}

static void done_cb(pmix_status_t status, void *cbdata)
{
    rdp_wait_signal(cbdata, status);
}

static pmix_status_t setup_local(const char *ns, pmix_info_t *info, size_t n)
{
    pmix_nspace_t nspace;
    rdp_wait_t w;
    pmix_status_t st;

    PMIX_LOAD_NSPACE(nspace, ns);
    rdp_wait_init(&w);
    st = PMIx_server_setup_local_support(nspace, info, n, done_cb, &w);
    if (st == PMIX_SUCCESS) {
        st = rdp_wait_wait(&w);
    }
    rdp_wait_cleanup(&w);
    return st;
}

static void deregister(const char *ns)
{
    pmix_nspace_t nspace;
    rdp_wait_t w;

    PMIX_LOAD_NSPACE(nspace, ns);
    rdp_wait_init(&w);
    PMIx_server_deregister_nspace(nspace, done_cb, &w);
    assert_int_equal(rdp_wait_wait(&w), PMIX_SUCCESS);
    rdp_wait_cleanup(&w);
}

/* The value of @a name in setup_fork's environment for (ns, 0), or NULL
 * (a static copy) */
static const char *forked_value(const char *ns, const char *name)
{
    static char value[128];
    char **env = NULL;
    pmix_proc_t proc;
    size_t n          = strlen(name);
    const char *found = NULL;

    PMIX_LOAD_PROCID(&proc, ns, 0);
    assert_int_equal(PMIx_server_setup_fork(&proc, &env), PMIX_SUCCESS);
    for (int i = 0; env != NULL && env[i] != NULL; i++) {
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') {
            snprintf(value, sizeof(value), "%s", env[i] + n + 1);
            found = value;
        }
    }
    pmix_argv_free(env);
    return found;
}

static int setup(void **state)
{
    pmix_info_t info;

    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/rdp-pnet-XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        return -1;
    }
    setenv("RDPMIX_PNET", "simptest", 1);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    if (PMIx_server_init(NULL, &info, 1) != PMIX_SUCCESS) {
        return -1;
    }
    PMIX_INFO_DESTRUCT(&info);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("RDPMIX_PNET");
    assert_int_equal(PMIx_server_finalize(), PMIX_SUCCESS);
    rmdir(tmpdir);
    return 0;
}

/* ---- tests ---- */

static void the_lifecycle_delivers_the_key_to_the_jobs_processes(void **state)
{
    app_answer_t a;
    const char *key = NULL;

    (void)state;
    assert_int_equal(setup_application("job-a", &a), PMIX_SUCCESS);
    /* the answer comes from the library's thread, not the caller's */
    assert_false(pthread_equal(a.thread, pthread_self()));
    for (size_t i = 0; i < a.ninfo; i++) {
        if (PMIX_CHECK_KEY(&a.info[i], PMIX_SET_ENVAR)) {
            key = a.info[i].value.data.envar.value;
        }
    }
    assert_non_null(key);
    /* nothing for the job before this node is set up */
    assert_null(forked_value("job-a", KEY_ENVAR));
    assert_int_equal(setup_local("job-a", a.info, a.ninfo), PMIX_SUCCESS);
    assert_string_equal(forked_value("job-a", KEY_ENVAR), key);
    assert_null(forked_value("job-b", KEY_ENVAR));
    /* the job ends here (its nspace was never registered on this
     * server: a head node's case too) */
    deregister("job-a");
    assert_null(forked_value("job-a", KEY_ENVAR));
    PMIX_INFO_FREE(a.info, a.ninfo);
}

static void setup_local_without_callback_blocks_and_says_so(void **state)
{
    pmix_envar_t ev = {"PLAIN", "v", ':'};
    pmix_nspace_t ns;
    pmix_info_t info;

    (void)state;
    PMIX_LOAD_NSPACE(ns, "job-c");
    PMIX_INFO_LOAD(&info, PMIX_SET_ENVAR, &ev, PMIX_ENVAR);
    assert_int_equal(PMIx_server_setup_local_support(ns, &info, 1, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    PMIX_INFO_DESTRUCT(&info);
    assert_string_equal(forked_value("job-c", "PLAIN"), "v");
    deregister("job-c");
}

static void bad_arguments_are_refused(void **state)
{
    pmix_envar_t ev = {"", "v", ':'};
    pmix_nspace_t x;
    pmix_info_t info;

    (void)state;
    PMIX_LOAD_NSPACE(x, "x");
    assert_int_equal(PMIx_server_setup_application(NULL, NULL, 0, app_cb, NULL),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_server_setup_application(x, NULL, 1, app_cb, NULL),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_server_setup_application(x, NULL, 0, NULL, NULL),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(
        PMIx_server_setup_local_support(NULL, NULL, 0, done_cb, NULL),
        PMIX_ERR_BAD_PARAM);
    /* a malformed directive fails the node's setup, before any fork */
    PMIX_INFO_LOAD(&info, PMIX_SET_ENVAR, &ev, PMIX_ENVAR);
    assert_int_equal(setup_local("job-d", &info, 1), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            the_lifecycle_delivers_the_key_to_the_jobs_processes, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            setup_local_without_callback_blocks_and_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused, setup,
                                        teardown),
    };

    return cmocka_run_group_tests_name("server_pnet", tests, NULL, NULL);
}
