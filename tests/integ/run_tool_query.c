/* run_tool_query.c - run_tool's "query" action: every key of issue 12's
 * query list, asked by a tool, printed one fact a line for
 * tests/integ/test_tool.sh to hold against what it launched:
 *
 *   all STATUS n N                 the query of every key at once
 *   namespaces LIST                PMIX_QUERY_NAMESPACES
 *   nsinfo NSPACE cmd CMDLINE      PMIX_QUERY_NAMESPACE_INFO, per job, read
 *                                  as OpenPMIx's tool.c does (else malformed)
 *   jobstatus STATUS               PMIX_QUERY_JOB_STATUS
 *   table R pid P host H state S exe E   PMIX_QUERY_PROC_TABLE, per rank
 *   local R pid P host H state S exe E   PMIX_QUERY_LOCAL_PROC_TABLE
 *   spawn [S] / debug [S]          spawn and debugger support
 *   psets N [NAMES]                process sets
 *   memory daemon D avg A min L max H   megabytes (-1: not given)
 *   toolfns LIST                   attribute support: the tool's functions
 *   toolattrs FN LIST              ... the attributes of PMIx_tool_init
 *   hostfns LIST                   ... the host's functions
 *   server NSPACE:RANK pid P       PMIX_QUERY_AVAIL_SERVERS, per server
 *   partial STATUS n N             a known and an unknown key
 *   notfound STATUS n N            an unknown key alone
 *
 * qns=NSPACE (in run_tool's "how" words) qualifies every query with
 * PMIX_NSPACE; without it the server picks the job.
 */
#include <pmix_tool.h>
#include "nsinfo_shape.h"
#include "query_keys.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tool_query_main(const char *qns);

#define WAIT_TICKS 200 /* 100 ms each: the tables fill within 20 s */

static const char *qual_ns; /* PMIX_NSPACE qualifier, or NULL */

/* Ask @a keys with our nspace qualifier and @a nextra more. */
static pmix_status_t ask_with(char **keys, const pmix_info_t *extra,
                              size_t nextra, pmix_info_t **res_p, size_t *n_p)
{
    pmix_info_t quals[4];
    pmix_query_t q = {.keys = keys, .qualifiers = quals};
    pmix_status_t rc;

    if (qual_ns != NULL) {
        PMIX_INFO_LOAD(&quals[q.nqual], PMIX_NSPACE, qual_ns, PMIX_STRING);
        q.nqual++;
    }
    for (size_t k = 0; k < nextra && k < 3; k++) {
        quals[q.nqual++] = extra[k]; /* shallow: the caller's */
    }
    *res_p = NULL;
    *n_p   = 0;
    rc     = PMIx_Query_info(&q, 1, res_p, n_p);
    if (qual_ns != NULL) {
        PMIX_INFO_DESTRUCT(&quals[0]);
    }
    return rc;
}

static pmix_status_t ask(char **keys, const pmix_info_t *extra,
                         pmix_info_t **res_p, size_t *n_p)
{
    return ask_with(keys, extra, extra != NULL ? 1 : 0, res_p, n_p);
}

static const pmix_info_t *find(const pmix_info_t *res, size_t n,
                               const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&res[i], key)) {
            return &res[i];
        }
    }
    return NULL;
}

static const pmix_data_array_t *array(const pmix_info_t *i,
                                      pmix_data_type_t type)
{
    if (i == NULL || i->value.type != PMIX_DATA_ARRAY
        || i->value.data.darray == NULL || i->value.data.darray->type != type) {
        return NULL;
    }
    return i->value.data.darray;
}

static const char *string_of(const pmix_info_t *i)
{
    return i != NULL && i->value.type == PMIX_STRING
                   && i->value.data.string != NULL
               ? i->value.data.string
               : "?";
}

/* ---- the proc tables ---- */

static void print_table(const char *label, const pmix_info_t *i)
{
    const pmix_data_array_t *t = array(i, PMIX_PROC_INFO);
    const pmix_proc_info_t *pi;

    if (t == NULL) {
        printf("%s none\n", label);
        return;
    }
    pi = t->array;
    for (size_t k = 0; k < t->size; k++) {
        printf("%s %u pid %d host %s state %s exe %s ns %s\n", label,
               pi[k].proc.rank, (int)pi[k].pid,
               pi[k].hostname != NULL ? pi[k].hostname : "-",
               PMIx_Proc_state_string(pi[k].state),
               pi[k].executable_name != NULL ? pi[k].executable_name : "-",
               pi[k].proc.nspace);
    }
}

/* The launcher learns a node's pids from its launch report: wait until
 * every rank of the table has one (bounded). */
static void await_pids(void)
{
    char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};

    for (int tick = 0; tick < WAIT_TICKS; tick++) {
        pmix_info_t *res;
        size_t n, with_pid = 0;
        const pmix_data_array_t *t;
        bool all;

        if (ask(keys, NULL, &res, &n) != PMIX_SUCCESS) {
            return; /* the query below says why */
        }
        t = array(find(res, n, PMIX_QUERY_PROC_TABLE), PMIX_PROC_INFO);
        for (size_t k = 0; t != NULL && k < t->size; k++) {
            with_pid += ((pmix_proc_info_t *)t->array)[k].pid > 0;
        }
        all = t != NULL && with_pid == t->size;
        PMIX_INFO_FREE(res, n);
        if (all) {
            return;
        }
        usleep(100000);
    }
}

/* ---- every key at once ---- */

/* PMIX_QUERY_NAMESPACE_INFO as examples/tool.c reads it: "nsinfo
 * malformed" for an answer or a job entry of another shape. */
static void print_nsinfo(const pmix_info_t *i)
{
    const pmix_info_t *jobs;
    size_t n = 0;

    if (i == NULL) {
        printf("nsinfo none\n");
        return;
    }
    jobs = nsinfo_jobs(i, &n);
    if (jobs == NULL) {
        printf("nsinfo malformed\n");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        const char *ns  = nsinfo_job_string(&jobs[k], PMIX_NSPACE);
        const char *cmd = nsinfo_job_string(&jobs[k], PMIX_CMD_LINE);

        if (ns == NULL || cmd == NULL) {
            printf("nsinfo malformed\n");
        } else {
            printf("nsinfo %s cmd %s\n", ns, cmd);
        }
    }
}

static float mb(const pmix_data_array_t *m, const char *key)
{
    const pmix_info_t *i = find(m->array, m->size, key);

    return i != NULL && i->value.type == PMIX_FLOAT ? i->value.data.fval : -1;
}

static void print_memory(const pmix_info_t *i)
{
    const pmix_data_array_t *m = array(i, PMIX_INFO);

    if (m == NULL) {
        printf("memory none\n");
        return;
    }
    printf("memory daemon %.1f avg %.1f min %.1f max %.1f\n",
           mb(m, PMIX_DAEMON_MEMORY), mb(m, PMIX_CLIENT_AVG_MEMORY),
           mb(m, PMIX_MIN_VALUE), mb(m, PMIX_MAX_VALUE));
}

static void all_keys(void)
{
    char *keys[] = {JOB_QUERY_KEYS, NULL};
    bool yes     = true;
    pmix_info_t both[2], *res;
    size_t n;
    pmix_status_t rc;
    const pmix_info_t *i;

    /* the average and the least and most, in one answer */
    PMIX_INFO_LOAD(&both[0], PMIX_QUERY_REPORT_MINMAX, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&both[1], PMIX_QUERY_REPORT_AVG, &yes, PMIX_BOOL);
    rc = ask(keys, NULL, &res, &n);
    printf("all %s n %zu\n", PMIx_Error_string(rc), n);
    printf("namespaces %s\n", string_of(find(res, n, PMIX_QUERY_NAMESPACES)));
    print_nsinfo(find(res, n, PMIX_QUERY_NAMESPACE_INFO));
    i = find(res, n, PMIX_QUERY_JOB_STATUS);
    printf("jobstatus %s\n", i != NULL && i->value.type == PMIX_STATUS
                                 ? PMIx_Error_string(i->value.data.status)
                                 : "none");
    print_table("table", find(res, n, PMIX_QUERY_PROC_TABLE));
    print_table("local", find(res, n, PMIX_QUERY_LOCAL_PROC_TABLE));
    printf("spawn [%s]\n", string_of(find(res, n, PMIX_QUERY_SPAWN_SUPPORT)));
    printf("debug [%s]\n", string_of(find(res, n, PMIX_QUERY_DEBUG_SUPPORT)));
    i = find(res, n, PMIX_QUERY_NUM_PSETS);
    printf("psets %zu [%s]\n",
           i != NULL && i->value.type == PMIX_SIZE ? i->value.data.size : 99,
           string_of(find(res, n, PMIX_QUERY_PSET_NAMES)));
    PMIX_INFO_FREE(res, n);

    keys[0] = PMIX_QUERY_MEMORY_USAGE;
    keys[1] = NULL;
    rc      = ask_with(keys, both, 2, &res, &n);
    if (rc == PMIX_SUCCESS) {
        print_memory(find(res, n, PMIX_QUERY_MEMORY_USAGE));
    } else {
        printf("memory %s\n", PMIx_Error_string(rc));
    }
    PMIX_INFO_FREE(res, n);
    PMIX_INFO_DESTRUCT(&both[0]);
    PMIX_INFO_DESTRUCT(&both[1]);
}

/* ---- attribute support ---- */

static void print_attr_answer(const char *label, const char *qual,
                              const char *value)
{
    char *keys[] = {PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL};
    pmix_info_t q, *res;
    size_t n;
    pmix_status_t rc;
    const pmix_data_array_t *a, *r;
    const pmix_info_t *e;

    PMIX_INFO_LOAD(&q, qual, value, PMIX_STRING);
    rc = ask(keys, &q, &res, &n);
    PMIX_INFO_DESTRUCT(&q);
    a = array(find(res, n, PMIX_QUERY_ATTRIBUTE_SUPPORT), PMIX_INFO);
    if (rc != PMIX_SUCCESS || a == NULL) {
        printf("%s %s\n", label, PMIx_Error_string(rc));
        PMIX_INFO_FREE(res, n);
        return;
    }
    e = find(a->array, a->size, value[0] != '\0' ? value : qual);
    if ((r = array(e, PMIX_REGATTR)) != NULL) {
        printf("%s %s ", label, value);
        for (size_t k = 0; k < r->size; k++) {
            printf("%s%s", k > 0 ? "," : "",
                   ((pmix_regattr_t *)r->array)[k].name);
        }
        printf("\n");
    } else {
        printf("%s %s\n", label, string_of(e));
    }
    PMIX_INFO_FREE(res, n);
}

/* ---- servers, partial answers ---- */

static void servers(void)
{
    char *keys[] = {PMIX_QUERY_AVAIL_SERVERS, NULL};
    pmix_info_t *res;
    size_t n;
    pmix_status_t rc = ask(keys, NULL, &res, &n);

    printf("servers %s\n", PMIx_Error_string(rc));
    for (size_t k = 0; k < n; k++) {
        const pmix_data_array_t *d = array(&res[k], PMIX_INFO);
        const pmix_info_t *pid, *rank;

        if (d == NULL) {
            continue;
        }
        pid  = find(d->array, d->size, PMIX_SERVER_PIDINFO);
        rank = find(d->array, d->size, PMIX_SERVER_RANK);
        printf("server %s:%u pid %u\n",
               string_of(find(d->array, d->size, PMIX_SERVER_NSPACE)),
               rank != NULL ? rank->value.data.rank : 99999,
               pid != NULL ? pid->value.data.uint32 : 0);
    }
    PMIX_INFO_FREE(res, n);
}

static void partial(void)
{
    char *mixed[]   = {PMIX_QUERY_NAMESPACES, "pmix.qry.nosuch", NULL};
    char *unknown[] = {"pmix.qry.nosuch", NULL};
    pmix_info_t *res;
    size_t n;
    pmix_status_t rc;

    rc = ask(mixed, NULL, &res, &n);
    printf("partial %s n %zu\n", PMIx_Error_string(rc), n);
    PMIX_INFO_FREE(res, n);
    rc = ask(unknown, NULL, &res, &n);
    printf("notfound %s n %zu\n", PMIx_Error_string(rc), n);
    PMIX_INFO_FREE(res, n);
}

int tool_query_main(const char *qns)
{
    qual_ns = qns;
    await_pids();
    all_keys();
    print_attr_answer("toolfns", PMIX_TOOL_FUNCTIONS, "");
    print_attr_answer("toolattrs", PMIX_TOOL_ATTRIBUTES, "PMIx_tool_init");
    print_attr_answer("hostfns", PMIX_HOST_FUNCTIONS, "");
    servers();
    partial();
    fflush(stdout);
    return 0;
}
