/* test_pnet.c - pnet: module selection, environment directives, lifecycle */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"

#include <pmix.h>

#include <fcntl.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static int teardown(void **state)
{
    (void)state;
    rdp_pnet_cleanup();
    unsetenv("RDPMIX_PNET_SIMPTEST_FAIL");
    return 0;
}

/* ---- helpers ---- */

static char **env_new(void)
{
    char **env = NULL;

    assert_int_equal(pmix_argv_append_nosize(&env, "HOME=/root"), PMIX_SUCCESS);
    assert_int_equal(pmix_argv_append_nosize(&env, "PATH=/bin:/usr/bin"),
                     PMIX_SUCCESS);
    return env;
}

/* The value of @a name in @a env (borrowed) or NULL */
static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);

    for (int i = 0; env != NULL && env[i] != NULL; i++) {
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') {
            return env[i] + n + 1;
        }
    }
    return NULL;
}

static pmix_status_t apply(const char *key, const char *name, const char *v,
                           char sep, char ***env)
{
    pmix_value_t val;
    pmix_status_t st;

    if (strcmp(key, PMIX_UNSET_ENVAR) == 0) {
        PMIX_VALUE_LOAD(&val, name, PMIX_STRING);
    } else {
        pmix_envar_t ev = {(char *)name, (char *)v, sep};

        PMIX_VALUE_LOAD(&val, &ev, PMIX_ENVAR);
    }
    st = rdp_pnet_envar_apply(key, &val, env);
    PMIX_VALUE_DESTRUCT(&val);
    return st;
}

/* The entry @a key in @a info, or NULL */
static const pmix_info_t *find(const pmix_info_t *info, size_t n,
                               const char *key, const char *envar)
{
    for (size_t i = 0; i < n; i++) {
        if (!PMIX_CHECK_KEY(&info[i], key)) {
            continue;
        }
        if (envar == NULL
            || strcmp(info[i].value.data.envar.envar, envar) == 0) {
            return &info[i];
        }
    }
    return NULL;
}

static void setup_app(const char *nspace, const pmix_info_t *dirs, size_t ndirs,
                      pmix_info_t **info_p, size_t *n_p)
{
    assert_int_equal(rdp_pnet_setup_app(nspace, dirs, ndirs, info_p, n_p),
                     PMIX_SUCCESS);
}

/* ---- selection ---- */

static void selection_follows_the_spec(void **state)
{
    (void)state;
    /* default: only modules whose own query says yes (no hfi1 here, and
     * simptest never volunteers) */
    assert_int_equal(rdp_pnet_select(NULL), PMIX_SUCCESS);
    if (access("/dev/hfi1_0", F_OK) != 0
        && access("/sys/class/infiniband/hfi1_0", F_OK) != 0) {
        assert_string_equal(rdp_pnet_selected(), "");
    }
    assert_int_equal(rdp_pnet_select("simptest"), PMIX_SUCCESS);
    assert_string_equal(rdp_pnet_selected(), "simptest");
    assert_int_equal(rdp_pnet_select("simptest,opa"), PMIX_SUCCESS);
    assert_string_equal(rdp_pnet_selected(), "opa,simptest");
    /* exclusion: the rest, each only where it can serve */
    assert_int_equal(rdp_pnet_select("^opa"), PMIX_SUCCESS);
    assert_null(strstr(rdp_pnet_selected(), "opa"));
    assert_null(strstr(rdp_pnet_selected(), "simptest"));
    /* a name that is no module is an error and selects nothing */
    assert_int_equal(rdp_pnet_select("opa,nosuch"), PMIX_ERR_BAD_PARAM);
    assert_string_equal(rdp_pnet_selected(), "");
    assert_int_equal(rdp_pnet_select("^nosuch"), PMIX_ERR_BAD_PARAM);
}

/* ---- environment directives ---- */

static void environment_directives_apply_as_the_standard_says(void **state)
{
    char **env = env_new();

    (void)state;
    assert_int_equal(apply(PMIX_SET_ENVAR, "A", "1", ':', &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "A"), "1");
    assert_int_equal(apply(PMIX_SET_ENVAR, "A", "2", ':', &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "A"), "2");
    /* add: only if absent */
    assert_int_equal(apply(PMIX_ADD_ENVAR, "A", "3", ':', &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "A"), "2");
    assert_int_equal(apply(PMIX_ADD_ENVAR, "B", "3", ':', &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "B"), "3");
    /* prepend / append with the separator; on an absent one: the value */
    assert_int_equal(apply(PMIX_PREPEND_ENVAR, "PATH", "/opt", ':', &env),
                     PMIX_SUCCESS);
    assert_string_equal(env_get(env, "PATH"), "/opt:/bin:/usr/bin");
    assert_int_equal(apply(PMIX_APPEND_ENVAR, "PATH", "/x", ':', &env),
                     PMIX_SUCCESS);
    assert_string_equal(env_get(env, "PATH"), "/opt:/bin:/usr/bin:/x");
    assert_int_equal(apply(PMIX_APPEND_ENVAR, "C", "c", ',', &env),
                     PMIX_SUCCESS);
    assert_string_equal(env_get(env, "C"), "c");
    /* first: the value once, in front */
    assert_int_equal(apply(PMIX_FIRST_ENVAR, "PATH", "/usr/bin", ':', &env),
                     PMIX_SUCCESS);
    assert_string_equal(env_get(env, "PATH"), "/usr/bin:/opt:/bin:/x");
    /* unset */
    assert_int_equal(apply(PMIX_UNSET_ENVAR, "A", NULL, 0, &env), PMIX_SUCCESS);
    assert_null(env_get(env, "A"));
    assert_string_equal(env_get(env, "HOME"), "/root");
    assert_int_equal(apply(PMIX_UNSET_ENVAR, "NONE", NULL, 0, &env),
                     PMIX_SUCCESS);
    /* bad input */
    assert_int_equal(apply(PMIX_SET_ENVAR, "", "1", ':', &env),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(apply(PMIX_SET_ENVAR, "A=B", "1", ':', &env),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(apply(PMIX_JOB_SIZE, "A", "1", ':', &env),
                     PMIX_ERR_BAD_PARAM);
    pmix_argv_free(env);
}

/* ---- setup_application ---- */

static void simptest_answers_its_key_as_envar_and_value(void **state)
{
    pmix_info_t *info = NULL, dir;
    const pmix_info_t *e;
    size_t n = 0;
    bool yes = true;

    (void)state;
    assert_int_equal(rdp_pnet_select("simptest"), PMIX_SUCCESS);
    setup_app("job-a", NULL, 0, &info, &n);
    assert_int_equal(n, 2);
    e = find(info, n, PMIX_SET_ENVAR, "RDPMIX_PNET_SIMPTEST_KEY");
    assert_non_null(e);
    assert_int_equal(strncmp(e->value.data.envar.value, "simptest-", 9), 0);
    e = find(info, n, "rdpmix.pnet.simptest.key", NULL);
    assert_non_null(e);
    assert_string_equal(
        e->value.data.string,
        find(info, n, PMIX_SET_ENVAR, NULL)->value.data.envar.value);
    PMIX_INFO_FREE(info, n);

    /* only the environment, only the rest */
    PMIX_INFO_LOAD(&dir, PMIX_SETUP_APP_ENVARS, &yes, PMIX_BOOL);
    setup_app("job-b", &dir, 1, &info, &n);
    assert_int_equal(n, 1);
    assert_non_null(find(info, n, PMIX_SET_ENVAR, NULL));
    PMIX_INFO_FREE(info, n);
    PMIX_INFO_LOAD(&dir, PMIX_SETUP_APP_NONENVARS, &yes, PMIX_BOOL);
    setup_app("job-c", &dir, 1, &info, &n);
    assert_int_equal(n, 1);
    assert_non_null(find(info, n, "rdpmix.pnet.simptest.key", NULL));
    PMIX_INFO_FREE(info, n);
    assert_int_equal(rdp_pnet_simptest_live(0), 3);
    rdp_pnet_job_end("job-a");
    rdp_pnet_job_end("job-b");
    rdp_pnet_job_end("job-c");
    assert_int_equal(rdp_pnet_simptest_live(0), 0);
}

static void no_module_gives_an_empty_answer(void **state)
{
    pmix_info_t *info = (pmix_info_t *)1;
    size_t n          = 7;

    (void)state;
    assert_int_equal(rdp_pnet_select("^opa,simptest"), PMIX_SUCCESS);
    setup_app("job", NULL, 0, &info, &n);
    assert_null(info);
    assert_int_equal(n, 0);
}

static void opa_keys_are_fresh_and_in_open_mpis_format(void **state)
{
    pmix_info_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    const pmix_info_t *ea, *eb, *cred;
    regex_t re;

    (void)state;
    assert_int_equal(
        regcomp(&re, "^[0-9a-f]{16}-[0-9a-f]{16}$", REG_EXTENDED | REG_NOSUB),
        0);
    assert_int_equal(rdp_pnet_select("opa"), PMIX_SUCCESS);
    setup_app("job-a", NULL, 0, &a, &na);
    setup_app("job-b", NULL, 0, &b, &nb);
    ea = find(a, na, PMIX_SET_ENVAR, "OMPI_MCA_orte_precondition_transports");
    eb = find(b, nb, PMIX_SET_ENVAR, "OMPI_MCA_orte_precondition_transports");
    assert_non_null(ea);
    assert_non_null(eb);
    assert_int_equal(regexec(&re, ea->value.data.envar.value, 0, NULL, 0), 0);
    assert_string_not_equal(ea->value.data.envar.value,
                            eb->value.data.envar.value);
    /* the same key under the Standard's credential attribute */
    cred = find(a, na, PMIX_CREDENTIAL, NULL);
    assert_non_null(cred);
    assert_string_equal(cred->value.data.string, ea->value.data.envar.value);
    regfree(&re);
    PMIX_INFO_FREE(a, na);
    PMIX_INFO_FREE(b, nb);
}

static void a_failed_setup_gives_everything_back(void **state)
{
    pmix_info_t *info = NULL;
    size_t n          = 0;

    (void)state;
    assert_int_equal(rdp_pnet_select("opa,simptest"), PMIX_SUCCESS);
    setenv("RDPMIX_PNET_SIMPTEST_FAIL", "app", 1);
    assert_int_equal(rdp_pnet_setup_app("job", NULL, 0, &info, &n),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_null(info);
    assert_int_equal(rdp_pnet_simptest_live(0), 0);

    /* a node whose setup fails keeps nothing for the job */
    setenv("RDPMIX_PNET_SIMPTEST_FAIL", "local", 1);
    assert_int_equal(rdp_pnet_setup_local("job", NULL, 0),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(rdp_pnet_simptest_live(1), 0);
}

/* ---- setup_local_support, setup_fork, job end ---- */

static void a_jobs_processes_get_its_environment_until_it_ends(void **state)
{
    pmix_info_t *info = NULL;
    size_t n          = 0;
    char **env        = env_new();
    char key[64];

    (void)state;
    assert_int_equal(rdp_pnet_select("simptest"), PMIX_SUCCESS);
    setup_app("job-a", NULL, 0, &info, &n);
    snprintf(key, sizeof(key), "%s",
             find(info, n, PMIX_SET_ENVAR, NULL)->value.data.envar.value);
    assert_int_equal(rdp_pnet_setup_local("job-a", info, n), PMIX_SUCCESS);
    PMIX_INFO_FREE(info, n);
    assert_int_equal(rdp_pnet_simptest_live(1), 1);

    /* another job's processes get nothing of it */
    assert_int_equal(rdp_pnet_setup_fork("job-b", &env), PMIX_SUCCESS);
    assert_null(env_get(env, "RDPMIX_PNET_SIMPTEST_KEY"));
    assert_int_equal(rdp_pnet_setup_fork("job-a", &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "RDPMIX_PNET_SIMPTEST_KEY"), key);
    pmix_argv_free(env);

    rdp_pnet_job_end("job-a");
    assert_int_equal(rdp_pnet_simptest_live(1), 0);
    assert_int_equal(rdp_pnet_simptest_live(0), 0);
    env = env_new();
    assert_int_equal(rdp_pnet_setup_fork("job-a", &env), PMIX_SUCCESS);
    assert_null(env_get(env, "RDPMIX_PNET_SIMPTEST_KEY"));
    pmix_argv_free(env);
}

static void a_bad_directive_fails_the_node_setup_not_the_forks(void **state)
{
    pmix_info_t info[2];
    pmix_envar_t good = {"GOOD", "1", ':'}, bad = {"B=AD", "1", ':'};
    char **env = env_new();

    (void)state;
    assert_int_equal(rdp_pnet_select("^opa"), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info[0], PMIX_SET_ENVAR, &good, PMIX_ENVAR);
    PMIX_INFO_LOAD(&info[1], PMIX_SET_ENVAR, &bad, PMIX_ENVAR);
    assert_int_equal(rdp_pnet_setup_local("job", info, 2), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_pnet_setup_fork("job", &env), PMIX_SUCCESS);
    assert_null(env_get(env, "GOOD"));
    /* the good one alone is kept; unrelated entries are ignored */
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &(uint32_t){4}, PMIX_UINT32);
    assert_int_equal(rdp_pnet_setup_local("job", info, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_setup_fork("job", &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "GOOD"), "1");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    pmix_argv_free(env);
    rdp_pnet_job_end("job");
}

/* Hosts call setup_fork in the forked child (Slurm): it must work there,
 * even while another thread of the parent is inside pnet. */
static void setup_fork_works_in_a_forked_child(void **state)
{
    pmix_envar_t ev = {"FORKED", "yes", ':'};
    pmix_info_t info;
    int pipefd[2];
    char buf[16] = {0};
    pid_t pid;
    int wstatus;

    (void)state;
    assert_int_equal(rdp_pnet_select("^opa"), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info, PMIX_SET_ENVAR, &ev, PMIX_ENVAR);
    assert_int_equal(rdp_pnet_setup_local("job", &info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char **env      = NULL;
        const char *val = "";

        alarm(10);
        if (rdp_pnet_setup_fork("job", &env) == PMIX_SUCCESS
            && env_get(env, "FORKED") != NULL) {
            val = env_get(env, "FORKED");
        }
        (void)!write(pipefd[1], val, strlen(val));
        _exit(0);
    }
    close(pipefd[1]);
    assert_true(read(pipefd[0], buf, sizeof(buf) - 1) >= 0);
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_string_equal(buf, "yes");
    rdp_pnet_job_end("job");
}

static void fingerprints_are_short_and_stable(void **state)
{
    char a[9], b[9], c[9];

    (void)state;
    rdp_pnet_fingerprint("secret", 6, a);
    rdp_pnet_fingerprint("secret", 6, b);
    rdp_pnet_fingerprint("secreu", 6, c);
    assert_int_equal(strlen(a), 8);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(selection_follows_the_spec, teardown),
        cmocka_unit_test_teardown(
            environment_directives_apply_as_the_standard_says, teardown),
        cmocka_unit_test_teardown(simptest_answers_its_key_as_envar_and_value,
                                  teardown),
        cmocka_unit_test_teardown(no_module_gives_an_empty_answer, teardown),
        cmocka_unit_test_teardown(opa_keys_are_fresh_and_in_open_mpis_format,
                                  teardown),
        cmocka_unit_test_teardown(a_failed_setup_gives_everything_back,
                                  teardown),
        cmocka_unit_test_teardown(
            a_jobs_processes_get_its_environment_until_it_ends, teardown),
        cmocka_unit_test_teardown(
            a_bad_directive_fails_the_node_setup_not_the_forks, teardown),
        cmocka_unit_test_teardown(setup_fork_works_in_a_forked_child, teardown),
        cmocka_unit_test_teardown(fingerprints_are_short_and_stable, teardown),
    };

    return cmocka_run_group_tests_name("pnet", tests, NULL, NULL);
}
