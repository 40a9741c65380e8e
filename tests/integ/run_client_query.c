/* run_client_query.c - run_client's mode for PMIx_Query_info
 *
 *   run_client nodes queryall  every rank prints "rank R pid P host H exe E"
 *                              and asks every key: namespaces, namespace
 *                              info, job status, proc tables (checked
 *                              against PMIx_Get's hostnames, its own pid
 *                              and program), spawn and debug support,
 *                              memory usage (LOCAL_ONLY, REPORT_AVG,
 *                              REPORT_MINMAX, a rank), attribute support of
 *                              every side, available servers (in
 *                              $RUN_CLIENT_RVDIR, which the test fills:
 *                              fakens.3 with every line, other.0 with a
 *                              URI only, a malformed file), the nspace,
 *                              rank and hostname qualifiers, refresh,
 *                              several queries at once, the non-blocking
 *                              form, partial success and not found.  Rank
 *                              0 prints "table R pid P host H state S exe
 *                              E" for every rank; the last rank (of 2 or
 *                              more) then finalizes and exits, and rank 0
 *                              prints "rank L ended state S exit X" from
 *                              the table; "rank R queryall ok".
 */
#include "run_client.h"
#include "nsinfo_shape.h"
#include "query_keys.h"

#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAIT_TICKS 2000 /* 10 ms each: no wait here is longer than 20 s */

static char exe[4096]; /* our argv[0], as rdpmix-run started us */

static const pmix_data_array_t *array_of(const pmix_info_t *i,
                                         pmix_data_type_t type)
{
    if (i->value.type != PMIX_DATA_ARRAY || i->value.data.darray == NULL
        || i->value.data.darray->type != type) {
        fail("%s is not an array of %s", i->key, PMIx_Data_type_string(type));
    }
    return i->value.data.darray;
}

/* One query of @a keys with the qualifiers given (NULL-terminated pairs of
 * key and pmix_info_t loaded by the caller). */
static pmix_status_t ask(char **keys, pmix_info_t *quals, size_t nqual,
                         pmix_info_t **res_p, size_t *n_p)
{
    pmix_query_t q = {.keys = keys, .qualifiers = quals, .nqual = nqual};

    *res_p = NULL;
    *n_p   = 0;
    return PMIx_Query_info(&q, 1, res_p, n_p);
}

static void read_exe(void)
{
    FILE *fp = fopen("/proc/self/cmdline", "r");

    if (fp == NULL || fgets(exe, sizeof(exe), fp) == NULL) {
        fail("cannot read /proc/self/cmdline");
    }
    fclose(fp); /* fgets stops at the first NUL: argv[0] */
}

/* ---- proc tables ---- */

static const pmix_proc_info_t *entry_of(const pmix_data_array_t *t,
                                        pmix_rank_t r)
{
    const pmix_proc_info_t *pi = t->array;

    for (size_t k = 0; k < t->size; k++) {
        if (pi[k].proc.rank == r) {
            return &pi[k];
        }
    }
    return NULL;
}

/* Every entry: our job, the rank's host as PMIx_Get says, our program,
 * a pid (ours for us), RUNNING, no exit code. */
static void check_entries(const pmix_data_array_t *t, const char *key)
{
    const pmix_proc_info_t *pi = t->array;

    for (size_t k = 0; k < t->size; k++) {
        char *host = get_string(&pi[k].proc, PMIX_HOSTNAME);

        if (!PMIX_CHECK_NSPACE(pi[k].proc.nspace, me.nspace)
            || pi[k].hostname == NULL || strcmp(pi[k].hostname, host) != 0
            || pi[k].executable_name == NULL
            || strcmp(pi[k].executable_name, exe) != 0 || pi[k].pid <= 0
            || pi[k].state != PMIX_PROC_STATE_RUNNING || pi[k].exit_code != 0
            || (pi[k].proc.rank == me.rank && pi[k].pid != getpid())) {
            fail("%s entry %zu: rank %u host %s exe %s pid %d state %d", key, k,
                 pi[k].proc.rank, pi[k].hostname ? pi[k].hostname : "-",
                 pi[k].executable_name ? pi[k].executable_name : "-",
                 (int)pi[k].pid, (int)pi[k].state);
        }
        free(host);
    }
}

/* @a key's table of @a size well-formed entries (ranks 0 to size - 1 when
 * @a whole). */
static const pmix_data_array_t *table(const pmix_info_t *res, size_t n,
                                      const char *key, size_t size, bool whole)
{
    const pmix_data_array_t *t = array_of(info_of(res, n, key), PMIX_PROC_INFO);

    if (t->size != size) {
        fail("%s has %zu entries, expected %zu", key, t->size, size);
    }
    for (pmix_rank_t r = 0; whole && r < size; r++) {
        if (entry_of(t, r) == NULL) {
            fail("%s lacks rank %u", key, r);
        }
    }
    check_entries(t, key);
    return t;
}

/* The launcher learns a node's pids from its launch report, which may
 * come after a fast rank on another node asks. */
static void await_running(unsigned size)
{
    char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};

    for (int i = 0; i < WAIT_TICKS; i++) {
        pmix_info_t *res;
        size_t n, running = 0;
        const pmix_data_array_t *t;

        expect_status("proc table", ask(keys, NULL, 0, &res, &n), PMIX_SUCCESS);
        t = array_of(info_of(res, n, PMIX_QUERY_PROC_TABLE), PMIX_PROC_INFO);
        for (size_t k = 0; k < t->size; k++) {
            const pmix_proc_info_t *pi = t->array;

            running += pi[k].state == PMIX_PROC_STATE_RUNNING && pi[k].pid > 0;
        }
        PMIX_INFO_FREE(res, n);
        if (running == size) {
            return;
        }
        usleep(10000);
    }
    fail("not every rank is running in the proc table");
}

static unsigned local_size(void)
{
    pmix_proc_t wild;
    pmix_value_t *v;
    unsigned n;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    v = get(&wild, PMIX_LOCAL_SIZE);
    n = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    return n;
}

/* ---- every key at once ---- */

/* PMIX_QUERY_NAMESPACE_INFO, read as OpenPMIx's examples/tool.c does: one
 * job entry, ours, with our command line. */
static void check_nsinfo(const pmix_info_t *res, size_t n)
{
    const char *ns, *cmd;
    const char *wrong =
        nsinfo_one_job(info_of(res, n, PMIX_QUERY_NAMESPACE_INFO), &ns, &cmd);

    if (wrong != NULL) {
        fail("PMIX_QUERY_NAMESPACE_INFO %s", wrong);
    }
    if (strcmp(ns, me.nspace) != 0 || strncmp(cmd, exe, strlen(exe)) != 0
        || strstr(cmd, " nodes queryall") == NULL) {
        fail("PMIX_QUERY_NAMESPACE_INFO: %s, %s", ns, cmd);
    }
}

static float float_of(const pmix_data_array_t *a, const char *key)
{
    const pmix_info_t *i = info_of(a->array, a->size, key);

    if (i->value.type != PMIX_FLOAT || !(i->value.data.fval > 0)) {
        fail("%s is not a positive float", key);
    }
    return i->value.data.fval;
}

static void check_string(const pmix_info_t *res, size_t n, const char *key)
{
    const pmix_info_t *i = info_of(res, n, key);

    if (i->value.type != PMIX_STRING || i->value.data.string == NULL) {
        fail("%s is not a string", key);
    }
}

static void all_keys(unsigned size)
{
    char *keys[] = {JOB_QUERY_KEYS, NULL};
    const pmix_data_array_t *t, *mem;
    pmix_info_t *res;
    size_t n;
    const pmix_info_t *i;

    expect_status("every key", ask(keys, NULL, 0, &res, &n), PMIX_SUCCESS);
    if (n != 10) {
        fail("%zu answers to 10 keys", n);
    }
    i = info_of(res, n, PMIX_QUERY_NAMESPACES);
    if (i->value.type != PMIX_STRING
        || strcmp(i->value.data.string, me.nspace) != 0) {
        fail("PMIX_QUERY_NAMESPACES is not '%s'", me.nspace);
    }
    i = info_of(res, n, PMIX_QUERY_JOB_STATUS);
    if (i->value.type != PMIX_STATUS || i->value.data.status != PMIX_SUCCESS) {
        fail("PMIX_QUERY_JOB_STATUS is not a running job's");
    }
    check_nsinfo(res, n);
    check_string(res, n, PMIX_QUERY_SPAWN_SUPPORT);
    check_string(res, n, PMIX_QUERY_DEBUG_SUPPORT);
    check_string(res, n, PMIX_QUERY_PSET_NAMES);
    i = info_of(res, n, PMIX_QUERY_NUM_PSETS);
    if (i->value.type != PMIX_SIZE || i->value.data.size != 0) {
        fail("PMIX_QUERY_NUM_PSETS is not a size of 0");
    }
    mem = array_of(info_of(res, n, PMIX_QUERY_MEMORY_USAGE), PMIX_INFO);
    float_of(mem, PMIX_DAEMON_MEMORY);
    float_of(mem, PMIX_CLIENT_AVG_MEMORY);
    t = table(res, n, PMIX_QUERY_PROC_TABLE, size, true);
    if (me.rank == 0) {
        const pmix_proc_info_t *pi = t->array;

        for (size_t k = 0; k < t->size; k++) {
            printf("table %u pid %d host %s state %d exe %s\n", pi[k].proc.rank,
                   (int)pi[k].pid, pi[k].hostname, (int)pi[k].state,
                   pi[k].executable_name);
        }
    }
    t = table(res, n, PMIX_QUERY_LOCAL_PROC_TABLE, local_size(), false);
    if (entry_of(t, me.rank) == NULL) {
        fail("the local proc table lacks us");
    }
    PMIX_INFO_FREE(res, n);
}

/* ---- qualifiers ---- */

static void qualifiers(unsigned size)
{
    char *keys[]    = {PMIX_QUERY_PROC_TABLE, NULL};
    char *status[]  = {PMIX_QUERY_JOB_STATUS, NULL};
    pmix_rank_t nxt = (me.rank + 1) % size;
    char *host      = get_string(&me, PMIX_HOSTNAME);
    pmix_info_t q[2], *res;
    size_t n;
    const pmix_data_array_t *t;
    bool yes = true;

    PMIX_INFO_LOAD(&q[0], PMIX_RANK, &nxt, PMIX_PROC_RANK);
    expect_status("proc table of a rank", ask(keys, q, 1, &res, &n),
                  PMIX_SUCCESS);
    t = table(res, n, PMIX_QUERY_PROC_TABLE, 1, false);
    if (((pmix_proc_info_t *)t->array)[0].proc.rank != nxt) {
        fail("the proc table of rank %u has another rank", nxt);
    }
    PMIX_INFO_FREE(res, n);
    PMIX_INFO_DESTRUCT(&q[0]);

    PMIX_INFO_LOAD(&q[0], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIX_INFO_LOAD(&q[1], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    expect_status("proc table of a host", ask(keys, q, 2, &res, &n),
                  PMIX_SUCCESS);
    t = array_of(info_of(res, n, PMIX_QUERY_PROC_TABLE), PMIX_PROC_INFO);
    if (t->size != local_size() || entry_of(t, me.rank) == NULL) {
        fail("the proc table of host %s has %zu entries", host, t->size);
    }
    check_entries(t, "proc table of a host");
    PMIX_INFO_FREE(res, n);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);

    PMIX_INFO_LOAD(&q[0], PMIX_NSPACE, "rdpmix.nosuch.job", PMIX_STRING);
    expect_status("job status of another job", ask(status, q, 1, &res, &n),
                  PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(res, n);
    expect_status("proc table of another job", ask(keys, q, 1, &res, &n),
                  PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(res, n);
    PMIX_INFO_DESTRUCT(&q[0]);
    free(host);
}

/* ---- memory ---- */

static void memory(void)
{
    char *keys[] = {PMIX_QUERY_MEMORY_USAGE, NULL};
    bool yes     = true;
    pmix_info_t q[3], *res;
    size_t n;
    const pmix_data_array_t *m;
    float min, max;

    PMIX_INFO_LOAD(&q[0], PMIX_QUERY_LOCAL_ONLY, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q[1], PMIX_QUERY_REPORT_MINMAX, &yes, PMIX_BOOL);
    expect_status("memory, min and max", ask(keys, q, 2, &res, &n),
                  PMIX_SUCCESS);
    m = array_of(info_of(res, n, PMIX_QUERY_MEMORY_USAGE), PMIX_INFO);
    float_of(m, PMIX_DAEMON_MEMORY);
    min = float_of(m, PMIX_MIN_VALUE);
    max = float_of(m, PMIX_MAX_VALUE);
    if (min > max || m->size != 3) {
        fail("memory: min %f max %f, %zu entries (no average asked)", min, max,
             m->size);
    }
    PMIX_INFO_FREE(res, n);

    PMIX_INFO_LOAD(&q[2], PMIX_RANK, &me.rank, PMIX_PROC_RANK);
    expect_status("memory of one rank", ask(keys, q, 3, &res, &n),
                  PMIX_SUCCESS);
    m   = array_of(info_of(res, n, PMIX_QUERY_MEMORY_USAGE), PMIX_INFO);
    min = float_of(m, PMIX_MIN_VALUE);
    max = float_of(m, PMIX_MAX_VALUE);
    if (min != max) {
        fail("memory of one rank: min %f max %f", min, max);
    }
    PMIX_INFO_FREE(res, n);
    for (int i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&q[i]);
    }
}

/* ---- attribute support ---- */

static const pmix_data_array_t *attr_answer(const char *qual, const char *value,
                                            pmix_info_t **res_p, size_t *n_p)
{
    char *keys[] = {PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL};
    pmix_info_t q;

    PMIX_INFO_LOAD(&q, qual, value, PMIX_STRING);
    expect_status(qual, ask(keys, &q, 1, res_p, n_p), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&q);
    return array_of(info_of(*res_p, *n_p, PMIX_QUERY_ATTRIBUTE_SUPPORT),
                    PMIX_INFO);
}

/* The comma-separated functions of @a qual name @a fn. */
static void expect_function(const char *qual, const char *fn)
{
    pmix_info_t *res;
    size_t n;
    const pmix_data_array_t *a = attr_answer(qual, "", &res, &n);
    const pmix_info_t *list    = info_of(a->array, a->size, qual);
    char *copy, *tok, *save = NULL;
    bool seen = false;

    if (list->value.type != PMIX_STRING) {
        fail("%s is not a string", qual);
    }
    copy = strdup(list->value.data.string);
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        seen = seen || strcmp(tok, fn) == 0;
    }
    if (!seen) {
        fail("%s '%s' lacks %s", qual, list->value.data.string, fn);
    }
    free(copy);
    PMIX_INFO_FREE(res, n);
}

/* @a fn's attributes on side @a qual include @a attr, well described. */
static void expect_attribute(const char *qual, const char *fn, const char *attr)
{
    pmix_info_t *res;
    size_t n;
    const pmix_data_array_t *a = attr_answer(qual, fn, &res, &n);
    const pmix_data_array_t *r =
        array_of(info_of(a->array, a->size, fn), PMIX_REGATTR);
    const pmix_regattr_t *ra = r->array;
    size_t k;

    for (k = 0; k < r->size && strcmp(ra[k].name, attr) != 0; k++) {
    }
    if (k == r->size
        || strcmp(ra[k].string, PMIx_Get_attribute_string(attr)) != 0
        || ra[k].description == NULL || ra[k].description[0] == NULL) {
        fail("%s of %s lacks %s", qual, fn, attr);
    }
    PMIX_INFO_FREE(res, n);
}

static void attributes(void)
{
    expect_function(PMIX_CLIENT_FUNCTIONS, "PMIx_Query_info");
    expect_function(PMIX_SERVER_FUNCTIONS, "PMIx_server_init");
    expect_function(PMIX_HOST_FUNCTIONS, "PMIx_Query_info");
    expect_function(PMIX_HOST_FUNCTIONS, "PMIx_Log");
    expect_attribute(PMIX_CLIENT_ATTRIBUTES, "PMIx_Get", "PMIX_TIMEOUT");
    expect_attribute(PMIX_SERVER_ATTRIBUTES, "PMIx_server_init",
                     "PMIX_SERVER_TMPDIR");
    expect_attribute(PMIX_HOST_ATTRIBUTES, "PMIx_Query_info",
                     "PMIX_QUERY_PROC_TABLE");
    expect_attribute(PMIX_HOST_ATTRIBUTES, "PMIx_Job_control",
                     "PMIX_JOB_CTRL_KILL");
}

/* ---- available servers ---- */

static const pmix_info_t *server_named(const pmix_info_t *res, size_t n,
                                       const char *nspace, size_t *count_p)
{
    const pmix_info_t *hit = NULL;

    *count_p = 0;
    for (size_t i = 0; i < n; i++) {
        const pmix_data_array_t *d;

        if (!PMIX_CHECK_KEY(&res[i], PMIX_SERVER_INFO_ARRAY)) {
            continue;
        }
        (*count_p)++;
        d = array_of(&res[i], PMIX_INFO);
        if (strcmp(((pmix_info_t *)d->array)[0].value.data.string, nspace)
            == 0) {
            hit = &res[i];
        }
    }
    return hit;
}

static void servers(void)
{
    char *keys[]      = {PMIX_QUERY_AVAIL_SERVERS, NULL};
    const char *rvdir = getenv("RUN_CLIENT_RVDIR");
    const pmix_info_t *s;
    const pmix_data_array_t *d;
    pmix_info_t *res;
    size_t n, count;

    if (rvdir == NULL) {
        fail("RUN_CLIENT_RVDIR is not set");
    }
    setenv("PMIX_SYSTEM_TMPDIR", rvdir, 1);
    expect_status("available servers", ask(keys, NULL, 0, &res, &n),
                  PMIX_SUCCESS);
    s = server_named(res, n, "fakens", &count);
    if (s == NULL || server_named(res, n, "other", &count) == NULL
        || count != 2) {
        fail("the available servers are not fakens and other (%zu)", count);
    }
    d = array_of(s, PMIX_INFO);
    if (info_of(d->array, d->size, PMIX_SERVER_RANK)->value.data.rank != 3
        || strcmp(
               info_of(d->array, d->size, PMIX_VERSION_INFO)->value.data.string,
               "v4.2.2")
               != 0
        || info_of(d->array, d->size, PMIX_SERVER_PIDINFO)->value.data.uint32
               != 4242
        || info_of(d->array, d->size, PMIX_USERID)->value.data.uint32 != 1000
        || info_of(d->array, d->size, PMIX_GRPID)->value.data.uint32 != 1001) {
        fail("fakens.3's details are wrong");
    }
    info_of(d->array, d->size, PMIX_SERVER_START_TIME);
    PMIX_INFO_FREE(res, n);
    setenv("PMIX_SYSTEM_TMPDIR", "/nonexistent/rdpmix", 1);
    expect_status("no available server", ask(keys, NULL, 0, &res, &n),
                  PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(res, n);
}

/* ---- answers in part ---- */

typedef struct nb_wait {
    volatile int done;
    pmix_status_t status;
    size_t n;
    char ns[PMIX_MAX_NSLEN + 1];
} nb_wait_t;

static void nb_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                  void *cbdata, pmix_release_cbfunc_t release_fn,
                  void *release_cbdata)
{
    nb_wait_t *w = cbdata;

    w->status = status;
    w->n      = ninfo;
    if (ninfo > 0 && info[0].value.type == PMIX_STRING) {
        PMIX_LOAD_NSPACE(w->ns, info[0].value.data.string);
    }
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void partial(unsigned size)
{
    char *unknown[] = {"pmix.qry.nosuch", NULL};
    char *mixed[]   = {PMIX_QUERY_NAMESPACES, "pmix.qry.nosuch", NULL};
    char *local[]   = {PMIX_QUERY_STABLE_ABI_VERSION, "pmix.qry.nosuch", NULL};
    char *ns[]      = {PMIX_QUERY_NAMESPACES, NULL};
    char *tbl[]     = {PMIX_QUERY_PROC_TABLE, NULL};
    pmix_query_t two[2] = {{.keys = ns}, {.keys = tbl}};
    pmix_rank_t last    = size - 1;
    pmix_info_t q, *res;
    size_t n;
    nb_wait_t w = {0};

    expect_status("an unknown key", ask(unknown, NULL, 0, &res, &n),
                  PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(res, n);
    expect_status("a known and an unknown key", ask(mixed, NULL, 0, &res, &n),
                  PMIX_QUERY_PARTIAL_SUCCESS);
    if (n != 1
        || strcmp(info_of(res, n, PMIX_QUERY_NAMESPACES)->value.data.string,
                  me.nspace)
               != 0) {
        fail("the partial answer is not the namespaces alone");
    }
    PMIX_INFO_FREE(res, n);
    expect_status("a library key and an unknown key",
                  ask(local, NULL, 0, &res, &n), PMIX_QUERY_PARTIAL_SUCCESS);
    info_of(res, n, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_INFO_FREE(res, n);

    PMIX_INFO_LOAD(&q, PMIX_RANK, &last, PMIX_PROC_RANK);
    two[1].qualifiers = &q;
    two[1].nqual      = 1;
    expect_status("two queries", PMIx_Query_info(two, 2, &res, &n),
                  PMIX_SUCCESS);
    if (n != 2
        || array_of(info_of(res, n, PMIX_QUERY_PROC_TABLE), PMIX_PROC_INFO)
                   ->size
               != 1) {
        fail("two queries: %zu answers", n);
    }
    PMIX_INFO_FREE(res, n);
    PMIX_INFO_DESTRUCT(&q);

    expect_status("PMIx_Query_info_nb", PMIx_Query_info_nb(two, 1, nb_cb, &w),
                  PMIX_SUCCESS);
    for (int i = 0;
         i < WAIT_TICKS && !__atomic_load_n(&w.done, __ATOMIC_ACQUIRE); i++) {
        usleep(10000);
    }
    if (!w.done || w.status != PMIX_SUCCESS || w.n != 1
        || !PMIX_CHECK_NSPACE(w.ns, me.nspace)) {
        fail("PMIx_Query_info_nb: done %d %s n %zu", w.done,
             PMIx_Error_string(w.status), w.n);
    }
}

/* Rank 0 sees the last rank end in the table (state, exit code). */
static void ended(unsigned size)
{
    char *keys[]  = {PMIX_QUERY_PROC_TABLE, NULL};
    pmix_rank_t r = size - 1;
    pmix_info_t q;

    PMIX_INFO_LOAD(&q, PMIX_RANK, &r, PMIX_PROC_RANK);
    for (int i = 0; i < WAIT_TICKS; i++) {
        pmix_info_t *res;
        size_t n;
        const pmix_proc_info_t *pi;

        expect_status("proc table of the last rank", ask(keys, &q, 1, &res, &n),
                      PMIX_SUCCESS);
        pi = array_of(info_of(res, n, PMIX_QUERY_PROC_TABLE), PMIX_PROC_INFO)
                 ->array;
        if (pi->state != PMIX_PROC_STATE_RUNNING) {
            printf("rank %u ended state %d exit %d\n", r, (int)pi->state,
                   pi->exit_code);
            PMIX_INFO_FREE(res, n);
            PMIX_INFO_DESTRUCT(&q);
            return;
        }
        PMIX_INFO_FREE(res, n);
        usleep(10000);
    }
    fail("rank %u never ended in the proc table", r);
}

void query_main(unsigned size)
{
    char *host = get_string(&me, PMIX_HOSTNAME);

    read_exe();
    printf("rank %u pid %d host %s exe %s\n", me.rank, (int)getpid(), host,
           exe);
    fflush(stdout);
    free(host);
    fence_collect(0);
    await_running(size);
    all_keys(size);
    qualifiers(size);
    memory();
    attributes();
    servers();
    partial(size);
    fence_collect(0); /* everyone asked while every rank ran */
    if (size >= 2 && me.rank == size - 1) {
        printf("rank %u queryall ok\n", me.rank);
        return; /* finalizes and exits */
    }
    if (size >= 2 && me.rank == 0) {
        ended(size);
    }
    printf("rank %u queryall ok\n", me.rank);
}
