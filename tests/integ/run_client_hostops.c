/* run_client_hostops.c - run_client's modes for the host operations
 *
 *   run_client nodes log    PMIx_Log / PMIx_Log_nb to stdout, stderr,
 *                           syslog (local, global, plain), PMIX_LOG_ONCE,
 *                           unsupported channels; prints each syslog
 *                           status ("rank R syslog local SUCCESS") and
 *                           "rank R log ok".  With RUN_CLIENT_SYSLOG=1
 *                           syslog must work.
 *   run_client nodes jctrl  (2 ranks or more) rank 0 signals the job
 *                           (SIGUSR1 to all, SIGUSR2 to the odd ranks; after
 *                           a fence, SIGUSR1 to all again); each rank prints
 *                           "rank R usr1 U usr2 V"; then rank 0 terminates the
 *                           last rank and kills the one before it (3 ranks
 *                           or more), sees them "killed by cmd" in the
 *                           proc table, and the others print
 *                           "rank R jctrl ok"
 *   run_client nodes query  prints "rank R pid P"; checks the namespace,
 *                           job size, node count, job status, proc tables
 *                           and namespace info against the job info; rank
 *                           0 prints "table R pid P host H state S" for
 *                           every rank; "rank R query ok"
 */
#include "run_client.h"
#include "nsinfo_shape.h"

#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#define WAIT_TICKS 2000 /* 10 ms each: no wait here is longer than 20 s */

static void expect(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want) {
        fail("%s: %s, expected %s", what, PMIx_Error_string(got),
             PMIx_Error_string(want));
    }
}

/* ---- log ---- */

typedef struct nb_wait {
    volatile int done;
    pmix_status_t status;
} nb_wait_t;

static void op_cb(pmix_status_t status, void *cbdata)
{
    nb_wait_t *w = cbdata;

    w->status = status;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static pmix_status_t nb_wait(nb_wait_t *w, const char *what)
{
    for (int i = 0; i < WAIT_TICKS; i++) {
        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
            return w->status;
        }
        usleep(10000);
    }
    fail("%s never called back", what);
}

/* PMIx_Log of up to three (key, message) pairs; @a once adds
 * PMIX_LOG_ONCE, @a pri PMIX_LOG_SYSLOG_PRI (when >= 0). */
static pmix_status_t log3(const char *k1, const char *m1, const char *k2,
                          const char *m2, const char *k3, const char *m3,
                          bool once, int pri)
{
    const char *keys[] = {k1, k2, k3};
    const char *msgs[] = {m1, m2, m3};
    pmix_info_t data[3], dirs[2];
    size_t n = 0, nd = 0;
    pmix_status_t rc;

    for (int i = 0; i < 3; i++) {
        if (keys[i] != NULL) {
            PMIX_INFO_LOAD(&data[n], keys[i], msgs[i], PMIX_STRING);
            n++;
        }
    }
    if (once) {
        PMIX_INFO_LOAD(&dirs[nd], PMIX_LOG_ONCE, &once, PMIX_BOOL);
        nd++;
    }
    if (pri >= 0) {
        PMIX_INFO_LOAD(&dirs[nd], PMIX_LOG_SYSLOG_PRI, &pri, PMIX_INT);
        nd++;
    }
    rc = PMIx_Log(data, n, nd > 0 ? dirs : NULL, nd);
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&data[i]);
    }
    for (size_t i = 0; i < nd; i++) {
        PMIX_INFO_DESTRUCT(&dirs[i]);
    }
    return rc;
}

static void log_syslog(const char *key, const char *which, bool must_work)
{
    char msg[128];
    pmix_status_t rc;

    snprintf(msg, sizeof(msg), "hostops syslog %s from rank %u", which,
             me.rank);
    rc = log3(key, msg, NULL, NULL, NULL, NULL, false, LOG_WARNING);
    printf("rank %u syslog %s %s\n", me.rank, which, PMIx_Error_string(rc));
    fflush(stdout);
    if (must_work) {
        expect(msg, rc, PMIX_SUCCESS);
    }
}

static void mode_log(void)
{
    bool must_work = getenv("RUN_CLIENT_SYSLOG") != NULL;
    char m1[128], m2[128];
    pmix_info_t data;
    nb_wait_t w = {0};

    snprintf(m1, sizeof(m1), "hostops log stdout from rank %u", me.rank);
    expect("PMIx_Log(stdout)",
           log3(PMIX_LOG_STDOUT, m1, NULL, NULL, NULL, NULL, false, -1),
           PMIX_SUCCESS);

    snprintf(m1, sizeof(m1), "hostops log stderr from rank %u", me.rank);
    PMIX_INFO_LOAD(&data, PMIX_LOG_STDERR, m1, PMIX_STRING);
    expect("PMIx_Log_nb(stderr)", PMIx_Log_nb(&data, 1, NULL, 0, op_cb, &w),
           PMIX_SUCCESS);
    expect("PMIx_Log_nb(stderr) callback", nb_wait(&w, "PMIx_Log_nb"),
           PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&data);

    /* once: email cannot, stdout can, stderr is never tried */
    snprintf(m1, sizeof(m1), "hostops log once from rank %u", me.rank);
    snprintf(m2, sizeof(m2), "hostops log twice from rank %u", me.rank);
    expect("PMIx_Log(once)",
           log3(PMIX_LOG_EMAIL, "x", PMIX_LOG_STDOUT, m1, PMIX_LOG_STDERR, m2,
                true, -1),
           PMIX_SUCCESS);
    expect("PMIx_Log(email)",
           log3(PMIX_LOG_EMAIL, "x", NULL, NULL, NULL, NULL, false, -1),
           PMIX_ERR_NOT_SUPPORTED);
    snprintf(m1, sizeof(m1), "hostops log partial from rank %u", me.rank);
    expect("PMIx_Log(stdout + job record)",
           log3(PMIX_LOG_STDOUT, m1, PMIX_LOG_JOB_RECORD, "x", NULL, NULL,
                false, -1),
           PMIX_ERR_PARTIAL_SUCCESS);

    log_syslog(PMIX_LOG_LOCAL_SYSLOG, "local", must_work);
    log_syslog(PMIX_LOG_GLOBAL_SYSLOG, "global", must_work);
    /* syslog, or stdout when there is none: exactly one of them */
    snprintf(m1, sizeof(m1), "hostops syslog-or-stdout from rank %u", me.rank);
    expect("PMIx_Log(syslog or stdout)",
           log3(PMIX_LOG_SYSLOG, m1, PMIX_LOG_STDOUT, m1, NULL, NULL, true, -1),
           PMIX_SUCCESS);
    printf("rank %u log ok\n", me.rank);
}

/* ---- job control ---- */

static volatile sig_atomic_t nusr1, nusr2;

static void on_usr(int signo)
{
    if (signo == SIGUSR1) {
        nusr1++;
    } else {
        nusr2++;
    }
}

static void jctrl_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                     void *cbdata, pmix_release_cbfunc_t release_fn,
                     void *release_cbdata)
{
    (void)info;
    (void)ninfo;
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
    op_cb(status, cbdata);
}

/* PMIx_Job_control of one directive on @a targets */
static pmix_status_t jctrl(const pmix_proc_t *targets, size_t n,
                           const char *key, const void *val,
                           pmix_data_type_t type)
{
    pmix_info_t dir;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&dir, key, val, type);
    rc = PMIx_Job_control(targets, n, &dir, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&dir);
    return rc;
}

/* Wait until @a want_usr1 SIGUSR1 and @a want_usr2 SIGUSR2 have come. */
static void wait_signals(int want_usr1, int want_usr2)
{
    for (int i = 0; i < WAIT_TICKS && (nusr1 < want_usr1 || nusr2 < want_usr2);
         i++) {
        usleep(10000);
    }
    if (nusr1 < want_usr1 || nusr2 < want_usr2) {
        fail("got %d SIGUSR1 and %d SIGUSR2, expected %d and %d", (int)nusr1,
             (int)nusr2, want_usr1, want_usr2);
    }
}

/* The first round: SIGUSR1 to the job, SIGUSR2 to the odd ranks. */
static void rank0_signals_first(unsigned size)
{
    pmix_proc_t odd[64];
    size_t nodd = 0;
    int sig     = SIGUSR2;
    pmix_info_t dir;
    nb_wait_t w = {0};

    expect("signal the job (no targets)",
           jctrl(NULL, 0, PMIX_JOB_CTRL_SIGNAL, &(int){SIGUSR1}, PMIX_INT),
           PMIX_SUCCESS);
    for (unsigned r = 1; r < size && nodd < 64; r += 2) {
        PMIX_LOAD_PROCID(&odd[nodd], me.nspace, r); /* a macro */
        nodd++;
    }
    PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    expect("PMIx_Job_control_nb(SIGUSR2 to the odd ranks)",
           PMIx_Job_control_nb(odd, nodd, &dir, 1, jctrl_cb, &w), PMIX_SUCCESS);
    expect("its callback", nb_wait(&w, "PMIx_Job_control_nb"), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&dir);
}

/* The second round, once every rank has seen the first (two SIGUSR1
 * pending at once in one process would merge into one): SIGUSR1 to the
 * job again, then the directives that must fail or do nothing. */
static void rank0_signals_second(unsigned size)
{
    pmix_proc_t wild, bad;
    bool yes = true;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    expect("signal the job (wildcard)",
           jctrl(&wild, 1, PMIX_JOB_CTRL_SIGNAL, &(int){SIGUSR1}, PMIX_INT),
           PMIX_SUCCESS);
    expect("pause", jctrl(&wild, 1, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL),
           PMIX_ERR_NOT_SUPPORTED);
    expect("declare that the job may be preempted",
           jctrl(NULL, 0, PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL),
           PMIX_SUCCESS);
    PMIX_LOAD_PROCID(&bad, me.nspace, size + 5);
    expect("signal a rank that does not exist",
           jctrl(&bad, 1, PMIX_JOB_CTRL_SIGNAL, &(int){SIGUSR1}, PMIX_INT),
           PMIX_ERR_BAD_PARAM);
}

/* The proc-table entry of @a rank, or fail. */
static pmix_proc_info_t *table_entry(pmix_info_t *res, size_t nres,
                                     const char *key, pmix_rank_t rank,
                                     size_t *count_p)
{
    for (size_t i = 0; i < nres; i++) {
        pmix_data_array_t *da;
        pmix_proc_info_t *pi;

        if (!PMIX_CHECK_KEY(&res[i], key)) {
            continue;
        }
        if (res[i].value.type != PMIX_DATA_ARRAY
            || res[i].value.data.darray == NULL
            || res[i].value.data.darray->type != PMIX_PROC_INFO) {
            fail("%s is not an array of pmix_proc_info_t", key);
        }
        da = res[i].value.data.darray;
        pi = da->array;
        if (count_p != NULL) {
            *count_p = da->size;
        }
        for (size_t k = 0; k < da->size; k++) {
            if (pi[k].proc.rank == rank) {
                return &pi[k];
            }
        }
        return NULL;
    }
    fail("no %s in the answer", key);
}

static pmix_proc_state_t state_of(pmix_rank_t rank, int *exit_p)
{
    char *keys[]     = {PMIX_QUERY_PROC_TABLE, NULL};
    pmix_query_t q   = {.keys = keys};
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    pmix_proc_info_t *pi;
    pmix_proc_state_t st;

    expect("PMIx_Query_info(proc table)", PMIx_Query_info(&q, 1, &res, &nres),
           PMIX_SUCCESS);
    pi = table_entry(res, nres, PMIX_QUERY_PROC_TABLE, rank, NULL);
    if (pi == NULL) {
        fail("rank %u is not in the proc table", rank);
    }
    st      = pi->state;
    *exit_p = pi->exit_code;
    PMIX_INFO_FREE(res, nres);
    return st;
}

static void await_killed(pmix_rank_t victim)
{
    int code = 0;

    for (int i = 0; i < WAIT_TICKS; i++) {
        if (state_of(victim, &code) == PMIX_PROC_STATE_KILLED_BY_CMD) {
            printf("rank %u saw rank %u killed by cmd (exit %d)\n", me.rank,
                   victim, code);
            return;
        }
        usleep(10000);
    }
    fail("rank %u never showed as killed by command", victim);
}

static void mode_jctrl(unsigned size)
{
    pmix_rank_t term = size - 1, kill = size >= 3 ? size - 2 : PMIX_RANK_UNDEF;
    bool yes = true;
    pmix_proc_t victim;

    if (size < 2) {
        fail("jctrl needs 2 ranks or more");
    }
    signal(SIGUSR1, on_usr);
    signal(SIGUSR2, on_usr);
    fence_collect(0); /* every handler is in place */
    if (me.rank == 0) {
        rank0_signals_first(size);
    }
    wait_signals(1, me.rank % 2);
    fence_collect(0); /* every rank has taken the first SIGUSR1 */
    if (me.rank == 0) {
        rank0_signals_second(size);
    }
    wait_signals(2, me.rank % 2);
    printf("rank %u usr1 %d usr2 %d\n", me.rank, (int)nusr1, (int)nusr2);
    fflush(stdout);
    fence_collect(0);
    if (me.rank == term || me.rank == kill) {
        printf("rank %u waiting for its end\n", me.rank);
        fflush(stdout);
        for (int i = 0; i < 30; i++) {
            sleep(1);
        }
        fail("still alive 30 s after its end was asked for");
    }
    if (me.rank == 0) {
        PMIX_LOAD_PROCID(&victim, me.nspace, term);
        expect("terminate",
               jctrl(&victim, 1, PMIX_JOB_CTRL_TERMINATE, &yes, PMIX_BOOL),
               PMIX_SUCCESS);
        await_killed(term);
        if (kill != PMIX_RANK_UNDEF) {
            PMIX_LOAD_PROCID(&victim, me.nspace, kill);
            expect("kill",
                   jctrl(&victim, 1, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL),
                   PMIX_SUCCESS);
            await_killed(kill);
        }
    }
    printf("rank %u jctrl ok\n", me.rank);
}

/* ---- query ---- */

static const pmix_info_t *find(const pmix_info_t *res, size_t n,
                               const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&res[i], key)) {
            return &res[i];
        }
    }
    fail("no %s in the answer", key);
}

static pmix_status_t query_keys(char **keys, pmix_info_t **res_p, size_t *n_p)
{
    pmix_query_t q = {.keys = keys};

    *res_p = NULL;
    *n_p   = 0;
    return PMIx_Query_info(&q, 1, res_p, n_p);
}

static unsigned long value_uint(const pmix_info_t *i)
{
    switch (i->value.type) {
    case PMIX_UINT32:
        return i->value.data.uint32;
    case PMIX_SIZE:
        return i->value.data.size;
    default:
        fail("%s has type %u", i->key, i->value.type);
    }
}

/* Every rank's entry has its host, our program, a pid and RUNNING. */
static void check_table(const pmix_info_t *res, size_t n, const char *key,
                        unsigned want)
{
    const pmix_info_t *t = find(res, n, key);
    pmix_proc_info_t *pi;

    if (t->value.type != PMIX_DATA_ARRAY
        || t->value.data.darray->type != PMIX_PROC_INFO
        || t->value.data.darray->size != want) {
        fail("%s: not %u pmix_proc_info_t", key, want);
    }
    pi = t->value.data.darray->array;
    for (size_t k = 0; k < want; k++) {
        char *host = get_string(&pi[k].proc, PMIX_HOSTNAME);

        if (!PMIX_CHECK_NSPACE(pi[k].proc.nspace, me.nspace)
            || pi[k].hostname == NULL || strcmp(pi[k].hostname, host) != 0
            || pi[k].executable_name == NULL
            || strstr(pi[k].executable_name, "run_client") == NULL
            || pi[k].pid <= 0 || pi[k].state != PMIX_PROC_STATE_RUNNING
            || (pi[k].proc.rank == me.rank && pi[k].pid != getpid())) {
            fail("%s entry %zu: rank %u host %s exe %s pid %d state %d", key, k,
                 pi[k].proc.rank, pi[k].hostname ? pi[k].hostname : "-",
                 pi[k].executable_name ? pi[k].executable_name : "-",
                 (int)pi[k].pid, (int)pi[k].state);
        }
        if (me.rank == 0 && strcmp(key, PMIX_QUERY_PROC_TABLE) == 0) {
            printf("table %u pid %d host %s state %d\n", pi[k].proc.rank,
                   (int)pi[k].pid, pi[k].hostname, (int)pi[k].state);
        }
        free(host);
    }
}

/* The launcher learns a node's pids when its launch report arrives,
 * which may come after a fast rank on another node asks. */
static void await_all_pids(unsigned size)
{
    int code;

    for (pmix_rank_t r = 0; r < size; r++) {
        for (int i = 0; i < WAIT_TICKS; i++) {
            if (state_of(r, &code) == PMIX_PROC_STATE_RUNNING) {
                break;
            }
            usleep(10000);
        }
    }
}

/* PMIX_QUERY_NAMESPACE_INFO, read as OpenPMIx's examples/tool.c does: one
 * job entry, ours, with our command line. */
static void check_nsinfo(const pmix_info_t *res, size_t n)
{
    const char *ns, *cmd;
    const char *wrong =
        nsinfo_one_job(find(res, n, PMIX_QUERY_NAMESPACE_INFO), &ns, &cmd);

    if (wrong != NULL) {
        fail("PMIX_QUERY_NAMESPACE_INFO %s", wrong);
    }
    if (strcmp(ns, me.nspace) != 0
        || strstr(cmd, "run_client nodes query") == NULL) {
        fail("PMIX_QUERY_NAMESPACE_INFO: %s, %s", ns, cmd);
    }
}

static void mode_query(unsigned size)
{
    char *keys[]    = {PMIX_QUERY_NAMESPACES,
                       PMIX_JOB_SIZE,
                       PMIX_NUM_NODES,
                       PMIX_QUERY_JOB_STATUS,
                       PMIX_QUERY_PROC_TABLE,
                       PMIX_QUERY_LOCAL_PROC_TABLE,
                       PMIX_QUERY_NAMESPACE_INFO,
                       PMIX_QUERY_NUM_PSETS,
                       NULL};
    char *unknown[] = {"pmix.qry.nosuch", NULL};
    char *mixed[]   = {"pmix.qry.nosuch", PMIX_JOB_SIZE, NULL};
    pmix_proc_t wild;
    pmix_value_t *v;
    pmix_info_t *res;
    size_t n;
    unsigned nodes, lsize;

    printf("rank %u pid %d\n", me.rank, (int)getpid());
    fflush(stdout);
    fence_collect(0);
    await_all_pids(size);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    v     = get(&wild, PMIX_NUM_NODES);
    nodes = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    v     = get(&wild, PMIX_LOCAL_SIZE);
    lsize = v->data.uint32;
    PMIX_VALUE_RELEASE(v);

    expect("PMIx_Query_info", query_keys(keys, &res, &n), PMIX_SUCCESS);
    if (strcmp(find(res, n, PMIX_QUERY_NAMESPACES)->value.data.string,
               me.nspace)
            != 0
        || value_uint(find(res, n, PMIX_JOB_SIZE)) != size
        || value_uint(find(res, n, PMIX_NUM_NODES)) != nodes
        || find(res, n, PMIX_QUERY_JOB_STATUS)->value.data.status
               != PMIX_SUCCESS
        || value_uint(find(res, n, PMIX_QUERY_NUM_PSETS)) != 0) {
        fail("namespace, size, nodes, job status or psets wrong");
    }
    check_table(res, n, PMIX_QUERY_PROC_TABLE, size);
    check_table(res, n, PMIX_QUERY_LOCAL_PROC_TABLE, lsize);
    check_nsinfo(res, n);
    PMIX_INFO_FREE(res, n);

    expect("unknown key", query_keys(unknown, &res, &n), PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(res, n);
    expect("known and unknown key", query_keys(mixed, &res, &n),
           PMIX_QUERY_PARTIAL_SUCCESS);
    if (n != 1 || value_uint(find(res, n, PMIX_JOB_SIZE)) != size) {
        fail("a partial answer lacks the job size");
    }
    PMIX_INFO_FREE(res, n);
    fence_collect(0); /* nobody ends while others still ask */
    printf("rank %u query ok\n", me.rank);
}

bool is_hostops_mode(const char *mode)
{
    return strcmp(mode, "log") == 0 || strcmp(mode, "jctrl") == 0
           || strcmp(mode, "query") == 0;
}

void hostops_main(const char *mode, unsigned size)
{
    if (strcmp(mode, "log") == 0) {
        mode_log();
    } else if (strcmp(mode, "jctrl") == 0) {
        mode_jctrl(size);
    } else {
        mode_query(size);
    }
    fflush(stdout);
}
