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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char statedir[64];

static int teardown(void **state)
{
    (void)state;
    rdp_pnet_cleanup();
    unsetenv("RDPMIX_PNET_SIMPTEST_FAIL");
    return 0;
}

/* A private state directory and no site file for the pool tests */
static int pool_setup(void **state)
{
    (void)state;
    snprintf(statedir, sizeof(statedir), "/tmp/rdp-pnet-XXXXXX");
    if (mkdtemp(statedir) == NULL) {
        return -1;
    }
    setenv("RDPMIX_PNET_STATE_DIR", statedir, 1);
    setenv("RDPMIX_PNET_CONF", "/nonexistent/pnet.conf", 1);
    return 0;
}

static int pool_teardown(void **state)
{
    char cmd[128];

    teardown(state);
    unsetenv("RDPMIX_PNET_IB_PKEYS");
    unsetenv("RDPMIX_PNET_TCP_PORTS");
    unsetenv("RDPMIX_PNET_TCP_PORTS_PER_JOB");
    unsetenv("RDPMIX_PNET_CONF");
    unsetenv("RDPMIX_PNET_STATE_DIR");
    snprintf(cmd, sizeof(cmd), "rm -rf %s", statedir);
    return system(cmd) == 0 ? 0 : -1;
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
    assert_int_equal(rdp_pnet_select("none"), PMIX_SUCCESS);
    assert_string_equal(rdp_pnet_selected(), "");
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
    assert_int_equal(rdp_pnet_setup_fork("job-b", 0, &env), PMIX_SUCCESS);
    assert_null(env_get(env, "RDPMIX_PNET_SIMPTEST_KEY"));
    assert_int_equal(rdp_pnet_setup_fork("job-a", 0, &env), PMIX_SUCCESS);
    assert_string_equal(env_get(env, "RDPMIX_PNET_SIMPTEST_KEY"), key);
    pmix_argv_free(env);

    rdp_pnet_job_end("job-a");
    assert_int_equal(rdp_pnet_simptest_live(1), 0);
    assert_int_equal(rdp_pnet_simptest_live(0), 0);
    env = env_new();
    assert_int_equal(rdp_pnet_setup_fork("job-a", 0, &env), PMIX_SUCCESS);
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
    assert_int_equal(rdp_pnet_setup_fork("job", 0, &env), PMIX_SUCCESS);
    assert_null(env_get(env, "GOOD"));
    /* the good one alone is kept; unrelated entries are ignored */
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &(uint32_t){4}, PMIX_UINT32);
    assert_int_equal(rdp_pnet_setup_local("job", info, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_setup_fork("job", 0, &env), PMIX_SUCCESS);
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
        if (rdp_pnet_setup_fork("job", 0, &env) == PMIX_SUCCESS
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

/* ---- pools ---- */

static void a_pool_never_hands_a_value_to_two_live_jobs(void **state)
{
    uint32_t v[3];

    (void)state;
    assert_int_equal(rdp_pnet_pool_take("p", 10, 12, "A", 2, v), PMIX_SUCCESS);
    assert_int_equal(v[0], 10);
    assert_int_equal(v[1], 11);
    assert_int_equal(rdp_pnet_pool_take("p", 10, 12, "B", 1, v), PMIX_SUCCESS);
    assert_int_equal(v[0], 12);
    /* exhausted: an error, and nothing taken */
    assert_int_equal(rdp_pnet_pool_take("p", 10, 12, "C", 1, v),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(rdp_pnet_pool_in_use("p"), 3);
    rdp_pnet_pool_give_back("p", "A");
    assert_int_equal(rdp_pnet_pool_in_use("p"), 1);
    assert_int_equal(rdp_pnet_pool_take("p", 10, 12, "C", 2, v), PMIX_SUCCESS);
    assert_int_equal(v[0], 10);
    assert_int_equal(v[1], 11);
    /* other pools are other files */
    assert_int_equal(rdp_pnet_pool_in_use("q"), 0);
}

/* Four launchers take at once; each stays alive until the parent has
 * seen every value (a dead owner's values are free again), then all go. */
static void
concurrent_takers_get_distinct_values_and_dead_ones_free_them(void **state)
{
    enum {
        KIDS = 4,
        EACH = 5
    };
    int results[2], release[2];
    uint32_t all[KIDS * EACH];
    pid_t pids[KIDS];

    (void)state;
    assert_int_equal(pipe(results), 0);
    assert_int_equal(pipe(release), 0);
    for (int k = 0; k < KIDS; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) {
            uint32_t v[EACH] = {0};
            char ns[16], c;

            alarm(20);
            close(release[1]); /* so that the parent's close ends the read */
            close(results[0]);
            snprintf(ns, sizeof(ns), "job%d", k);
            if (rdp_pnet_pool_take("c", 1, KIDS * EACH, ns, EACH, v)
                != PMIX_SUCCESS) {
                memset(v, 0, sizeof(v));
            }
            (void)!write(results[1], v, sizeof(v));
            (void)!read(release[0], &c, 1); /* until the parent closes */
            _exit(0);
        }
    }
    close(results[1]);
    close(release[0]);
    for (size_t got = 0; got < sizeof(all);) {
        ssize_t n = read(results[0], (char *)all + got, sizeof(all) - got);

        assert_true(n > 0);
        got += (size_t)n;
    }
    for (int i = 0; i < KIDS * EACH; i++) {
        assert_true(all[i] >= 1 && all[i] <= KIDS * EACH);
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(all[i], all[j]);
        }
    }
    assert_int_equal(rdp_pnet_pool_in_use("c"), KIDS * EACH);
    close(release[1]);
    for (int k = 0; k < KIDS; k++) {
        assert_int_equal(waitpid(pids[k], NULL, 0), pids[k]);
    }
    close(results[0]);
    assert_int_equal(rdp_pnet_pool_in_use("c"), 0);
}

static void settings_come_from_the_environment_over_the_file(void **state)
{
    char path[96];
    uint32_t lo = 0, hi = 0, n = 0;
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/pnet.conf", statedir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# site settings\nib_pkeys = 0x10-0x11  # two keys\n"
               "tcp_ports=100-199\nbad = 5-3\nword = abc\n");
    fclose(f);
    setenv("RDPMIX_PNET_CONF", path, 1);
    assert_int_equal(rdp_pnet_conf_range("ib_pkeys", &lo, &hi), PMIX_SUCCESS);
    assert_int_equal(lo, 0x10);
    assert_int_equal(hi, 0x11);
    setenv("RDPMIX_PNET_IB_PKEYS", "0x20-0x30", 1);
    assert_int_equal(rdp_pnet_conf_range("ib_pkeys", &lo, &hi), PMIX_SUCCESS);
    assert_int_equal(lo, 0x20);
    assert_int_equal(rdp_pnet_conf_range("bad", &lo, &hi), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_pnet_conf_range("word", &lo, &hi), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_pnet_conf_range("absent", &lo, &hi),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_pnet_conf_count("absent", 7, &n), PMIX_SUCCESS);
    assert_int_equal(n, 7);
    assert_int_equal(rdp_pnet_conf_count("word", 7, &n), PMIX_ERR_BAD_PARAM);
}

static const char *answer_env(const pmix_info_t *info, size_t n,
                              const char *name)
{
    const pmix_info_t *e = find(info, n, PMIX_SET_ENVAR, name);

    return e == NULL ? NULL : e->value.data.envar.value;
}

static void
ib_jobs_get_distinct_partition_keys_until_the_pool_is_empty(void **state)
{
    pmix_info_t *a = NULL, *b = NULL, *c = NULL;
    size_t na = 0, nb = 0, nc = 0;

    (void)state;
    setenv("RDPMIX_PNET_IB_PKEYS", "0x8001-0x8002", 1);
    assert_int_equal(rdp_pnet_select("ib"), PMIX_SUCCESS);
    setup_app("A", NULL, 0, &a, &na);
    setup_app("B", NULL, 0, &b, &nb);
    assert_string_equal(answer_env(a, na, "UCX_IB_PKEY"), "0x8001");
    assert_string_equal(answer_env(b, nb, "UCX_IB_PKEY"), "0x8002");
    assert_string_equal(answer_env(b, nb, "OMPI_MCA_btl_openib_pkey"),
                        "0x8002");
    assert_int_equal(
        find(a, na, "rdpmix.pnet.ib.pkey", NULL)->value.data.uint32, 0x8001);
    assert_int_equal(rdp_pnet_setup_app("C", NULL, 0, &c, &nc),
                     PMIX_ERR_OUT_OF_RESOURCE);
    rdp_pnet_job_end("A");
    setup_app("C", NULL, 0, &c, &nc);
    assert_string_equal(answer_env(c, nc, "UCX_IB_PKEY"), "0x8001");
    rdp_pnet_job_end("B");
    rdp_pnet_job_end("C");
    assert_int_equal(rdp_pnet_pool_in_use("ib_pkey"), 0);
    PMIX_INFO_FREE(a, na);
    PMIX_INFO_FREE(b, nb);
    PMIX_INFO_FREE(c, nc);
    /* a job this process never set up gives nothing back: the pool's
     * file is not even opened (every server sees every job end) */
    {
        char path[128];

        snprintf(path, sizeof(path), "%s/ib_pkey.state", statedir);
        assert_int_equal(unlink(path), 0);
        rdp_pnet_job_end("elsewhere");
        assert_int_not_equal(access(path, F_OK), 0);
    }
    /* a module whose pool is not configured fails the setup clearly */
    unsetenv("RDPMIX_PNET_IB_PKEYS");
    assert_int_equal(rdp_pnet_setup_app("D", NULL, 0, &c, &nc),
                     PMIX_ERR_NOT_FOUND);
}

static void tcp_jobs_get_disjoint_port_blocks(void **state)
{
    pmix_info_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;

    (void)state;
    setenv("RDPMIX_PNET_TCP_PORTS", "40000-40063", 1);
    assert_int_equal(rdp_pnet_select("tcp,simptest"), PMIX_SUCCESS);
    setup_app("A", NULL, 0, &a, &na);
    setup_app("B", NULL, 0, &b, &nb);
    assert_string_equal(answer_env(a, na, "RDPMIX_TCP_PORTS"), "40000-40031");
    assert_string_equal(answer_env(b, nb, "RDPMIX_TCP_PORTS"), "40032-40063");
    assert_string_equal(answer_env(b, nb, "OMPI_MCA_btl_tcp_port_min_v4"),
                        "40032");
    assert_string_equal(answer_env(b, nb, "OMPI_MCA_btl_tcp_port_range_v4"),
                        "32");
    PMIX_INFO_FREE(a, na);
    PMIX_INFO_FREE(b, nb);
    /* the third job: no block left; simptest (after tcp) never ran, and
     * nothing stays taken */
    assert_int_equal(rdp_pnet_setup_app("C", NULL, 0, &a, &na),
                     PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(rdp_pnet_simptest_live(0), 2);
    rdp_pnet_job_end("A");
    rdp_pnet_job_end("B");
    assert_int_equal(rdp_pnet_pool_in_use("tcp_block"), 0);
    assert_int_equal(rdp_pnet_simptest_live(0), 0);
}

/* ---- per-node derivation from a site secret (no head-node step) ---- */

static char secret_path[64];

static int secret_setup(void **state)
{
    int fd;

    (void)state;
    snprintf(secret_path, sizeof(secret_path), "/tmp/pnet-secret.XXXXXX");
    fd = mkstemp(secret_path); /* mode 0600 */
    if (fd < 0 || write(fd, "a site secret of 32 bytes here!\n", 32) != 32) {
        return -1;
    }
    close(fd);
    setenv("RDPMIX_PNET_OPA_SECRET_FILE", secret_path, 1);
    return 0;
}

static int secret_teardown(void **state)
{
    unsetenv("RDPMIX_PNET_OPA_SECRET_FILE");
    unlink(secret_path);
    return teardown(state);
}

/* The key a node derives for @a nspace (a fresh selection each time, as
 * a node of its own would have), copied into @a key */
static void derived_key(const char *nspace, char *key, size_t len)
{
    char **env = env_new();
    const char *k;

    rdp_pnet_cleanup();
    assert_int_equal(rdp_pnet_select("opa"), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_derive(nspace), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_setup_fork(nspace, 0, &env), PMIX_SUCCESS);
    k = env_get(env, "OMPI_MCA_orte_precondition_transports");
    assert_non_null(k);
    snprintf(key, len, "%s", k);
    pmix_argv_free(env);
}

static pmix_status_t first_credential(const pmix_info_t *v, void *arg)
{
    if (PMIX_CHECK_KEY(v, PMIX_CREDENTIAL)) {
        snprintf(arg, 64, "%s", v->value.data.string);
    }
    return PMIX_SUCCESS;
}

static void every_node_derives_the_same_key_and_jobs_differ(void **state)
{
    char a1[64], a2[64], b[64], cred[64] = "";
    regex_t re;

    (void)state;
    derived_key("slurm.pmix.7.0", a1, sizeof(a1));
    assert_int_equal(
        rdp_pnet_for_each_value("slurm.pmix.7.0", first_credential, cred),
        PMIX_SUCCESS);
    assert_string_equal(cred, a1); /* and PMIx_Get sees the same */
    derived_key("slurm.pmix.7.0", a2, sizeof(a2));
    derived_key("slurm.pmix.7.1", b, sizeof(b));
    assert_string_equal(a1, a2);
    assert_string_not_equal(a1, b);
    assert_int_equal(regcomp(&re, "^[0-9a-f]{16}-[0-9a-f]{16}$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    assert_int_equal(regexec(&re, a1, 0, NULL, 0), 0);
    regfree(&re);
}

static void a_launcher_setup_wins_over_derivation(void **state)
{
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    char **env        = env_new();
    char derived[64];

    (void)state;
    derived_key("J", derived, sizeof(derived));
    /* a launcher's answer (minted, random) replaces the derived key */
    assert_int_equal(rdp_pnet_setup_app("J", NULL, 0, &info, &ninfo),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_setup_local("J", info, ninfo), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_derive("J"), PMIX_SUCCESS); /* no effect now */
    assert_int_equal(rdp_pnet_setup_fork("J", 0, &env), PMIX_SUCCESS);
    assert_string_not_equal(
        env_get(env, "OMPI_MCA_orte_precondition_transports"), derived);
    assert_string_equal(env_get(env, "OMPI_MCA_orte_precondition_transports"),
                        answer_env(info, ninfo,
                                   "OMPI_MCA_orte_precondition_transports"));
    rdp_pnet_job_end("J");
    PMIX_INFO_FREE(info, ninfo);
    pmix_argv_free(env);
}

static void an_unsafe_or_missing_secret_derives_nothing(void **state)
{
    char **env = env_new();

    (void)state;
    assert_int_equal(chmod(secret_path, 0640), 0); /* group may read */
    assert_int_equal(rdp_pnet_select("opa"), PMIX_SUCCESS);
    assert_int_equal(rdp_pnet_derive("J"), PMIX_ERR_NO_PERMISSIONS);
    assert_int_equal(truncate(secret_path, 8), 0); /* too short */
    assert_int_equal(chmod(secret_path, 0600), 0);
    assert_int_equal(rdp_pnet_derive("J"), PMIX_ERR_BAD_PARAM);
    unsetenv("RDPMIX_PNET_OPA_SECRET_FILE"); /* none: the launcher mints */
    setenv("RDPMIX_PNET_CONF", "/nonexistent/pnet.conf", 1);
    assert_int_equal(rdp_pnet_derive("J"), PMIX_SUCCESS);
    unsetenv("RDPMIX_PNET_CONF");
    assert_int_equal(rdp_pnet_setup_fork("J", 0, &env), PMIX_SUCCESS);
    assert_null(env_get(env, "OMPI_MCA_orte_precondition_transports"));
    pmix_argv_free(env);
}

static void describe_names_modules_and_settings_never_secrets(void **state)
{
    char buf[512], small[8];

    (void)state;
    assert_int_equal(rdp_pnet_select("none"), PMIX_SUCCESS);
    rdp_pnet_describe(buf, sizeof(buf));
    assert_string_equal(buf, "none");
    setenv("RDPMIX_PNET_SSHOT_VNIS", "1024-2047", 1);
    assert_int_equal(rdp_pnet_select("opa,sshot"), PMIX_SUCCESS);
    rdp_pnet_describe(buf, sizeof(buf));
    assert_non_null(strstr(buf, "opa (opa_secret_file="));
    assert_non_null(strstr(buf, secret_path));
    assert_non_null(strstr(buf, ", sshot (sshot_vnis=1024-2047)"));
    assert_null(strstr(buf, "a site secret")); /* the file's content */
    /* truncated, but says how much it needed */
    assert_int_equal(rdp_pnet_describe(small, sizeof(small)), strlen(buf));
    assert_int_equal(strlen(small), sizeof(small) - 1);
    unsetenv("RDPMIX_PNET_SSHOT_VNIS");
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
        cmocka_unit_test_setup_teardown(
            a_pool_never_hands_a_value_to_two_live_jobs, pool_setup,
            pool_teardown),
        cmocka_unit_test_setup_teardown(
            concurrent_takers_get_distinct_values_and_dead_ones_free_them,
            pool_setup, pool_teardown),
        cmocka_unit_test_setup_teardown(
            settings_come_from_the_environment_over_the_file, pool_setup,
            pool_teardown),
        cmocka_unit_test_setup_teardown(
            ib_jobs_get_distinct_partition_keys_until_the_pool_is_empty,
            pool_setup, pool_teardown),
        cmocka_unit_test_setup_teardown(tcp_jobs_get_disjoint_port_blocks,
                                        pool_setup, pool_teardown),
        cmocka_unit_test_setup_teardown(
            every_node_derives_the_same_key_and_jobs_differ, secret_setup,
            secret_teardown),
        cmocka_unit_test_setup_teardown(a_launcher_setup_wins_over_derivation,
                                        secret_setup, secret_teardown),
        cmocka_unit_test_setup_teardown(
            an_unsafe_or_missing_secret_derives_nothing, secret_setup,
            secret_teardown),
        cmocka_unit_test_setup_teardown(
            describe_names_modules_and_settings_never_secrets, secret_setup,
            secret_teardown),
    };

    return cmocka_run_group_tests_name("pnet", tests, NULL, NULL);
}
