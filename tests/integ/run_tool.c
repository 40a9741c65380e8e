/* run_tool.c - a PMIx tool for tests/integ/test_tool.sh */
#include <pmix_tool.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * run_tool ACTION [ARG] [how...]
 *   ACTION: ident (print who we are and which server we reached),
 *           log MSG (PMIx_Log_nb of MSG to stdout, "MSG twice" to stderr,
 *           with PMIX_LOG_TIMESTAMP and PMIX_LOG_ONCE),
 *           get NSPACE (PMIx_Get of that job's PMIX_JOB_SIZE),
 *           query (every query key, run_tool_query.c),
 *           setserver (PMIx_tool_set_server to our server with a required
 *           and then an optional PMIX_TIMEOUT: "set_server reqd STATUS",
 *           "set_server optional STATUS")
 *   how:    pid=P ns=SERVER-NSPACE uri=URI system sysfirst tmpdir=DIR
 *           toolns=NSPACE toolrank=R retries=N delay=S
 *           qns=NSPACE (query: the PMIX_NSPACE qualifier)
 *           timeout=S (PMIX_TIMEOUT, which tool_init does not support)
 *           reqd (the info before it becomes PMIX_INFO_REQD)
 * A failed PMIx_tool_init prints "tool_init: STATUS" and exits 3.
 */

static pmix_info_t info[12];
static size_t ninfo;
static const char *query_nspace; /* qns=: the query's PMIX_NSPACE */

int tool_query_main(const char *qns); /* run_tool_query.c */

static void add(const char *key, const void *val, pmix_data_type_t type)
{
    if (ninfo < sizeof(info) / sizeof(info[0])) {
        PMIX_INFO_LOAD(&info[ninfo], key, val, type);
        ninfo++;
    }
}

static void parse_how(const char *w)
{
    const char *v = strchr(w, '=');
    bool yes      = true;
    uint32_t u    = v != NULL ? (uint32_t)strtoul(v + 1, NULL, 10) : 0;
    pid_t pid     = (pid_t)u;

    if (strncmp(w, "pid=", 4) == 0) {
        add(PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    } else if (strncmp(w, "ns=", 3) == 0) {
        add(PMIX_SERVER_NSPACE, v + 1, PMIX_STRING);
    } else if (strncmp(w, "uri=", 4) == 0) {
        add(PMIX_SERVER_URI, v + 1, PMIX_STRING);
    } else if (strcmp(w, "system") == 0) {
        add(PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    } else if (strcmp(w, "sysfirst") == 0) {
        add(PMIX_CONNECT_SYSTEM_FIRST, &yes, PMIX_BOOL);
    } else if (strncmp(w, "tmpdir=", 7) == 0) {
        add(PMIX_SYSTEM_TMPDIR, v + 1, PMIX_STRING);
    } else if (strncmp(w, "toolns=", 7) == 0) {
        add(PMIX_TOOL_NSPACE, v + 1, PMIX_STRING);
    } else if (strncmp(w, "toolrank=", 9) == 0) {
        add(PMIX_TOOL_RANK, &u, PMIX_UINT32);
    } else if (strncmp(w, "retries=", 8) == 0) {
        add(PMIX_CONNECT_MAX_RETRIES, &u, PMIX_UINT32);
    } else if (strncmp(w, "delay=", 6) == 0) {
        add(PMIX_CONNECT_RETRY_DELAY, &u, PMIX_UINT32);
    } else if (strncmp(w, "timeout=", 8) == 0) {
        int secs = (int)u;

        add(PMIX_TIMEOUT, &secs, PMIX_INT);
    } else if (strcmp(w, "reqd") == 0 && ninfo > 0) {
        PMIX_INFO_REQUIRED(&info[ninfo - 1]);
    } else if (strncmp(w, "qns=", 4) == 0) {
        query_nspace = v + 1;
    } else {
        fprintf(stderr, "run_tool: unknown '%s'\n", w);
        exit(2);
    }
}

static volatile int log_done;
static volatile pmix_status_t log_status;

static void log_cb(pmix_status_t status, void *cbdata)
{
    log_status = status;
    __atomic_store_n(&log_done, 1, __ATOMIC_RELEASE);
}

static int do_log(const char *msg)
{
    pmix_info_t data[2], dirs[2];
    bool yes   = true;
    time_t now = time(NULL);
    char twice[512];
    pmix_status_t rc;
    bool started;

    /* with PMIX_LOG_ONCE only the first channel that works writes */
    snprintf(twice, sizeof(twice), "%s twice", msg);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, msg, PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDERR, twice, PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_ONCE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_LOG_TIMESTAMP, &now, PMIX_TIME);
    rc      = PMIx_Log_nb(data, 2, dirs, 2, log_cb, NULL);
    started = rc == PMIX_SUCCESS;
    for (int i = 0; rc == PMIX_SUCCESS && i < 300; i++) {
        if (__atomic_load_n(&log_done, __ATOMIC_ACQUIRE)) {
            rc = log_status;
            break;
        }
        usleep(100000);
    }
    if (rc == PMIX_SUCCESS && !log_done) {
        rc = PMIX_ERR_TIMEOUT;
    }
    printf("log %s\n", PMIx_Error_string(rc));
    fflush(stdout);
    if (!started || __atomic_load_n(&log_done, __ATOMIC_ACQUIRE)) {
        /* the library is done with them (or never took them) */
        for (int i = 0; i < 2; i++) {
            PMIX_INFO_DESTRUCT(&data[i]);
            PMIX_INFO_DESTRUCT(&dirs[i]);
        }
    }
    return rc == PMIX_SUCCESS ? 0 : 1;
}

/* PMIx_tool_set_server to the server we have: fine, unless a directive
 * it does not support is required. */
static int do_set_server(const pmix_proc_t *server)
{
    int secs = 5;
    pmix_info_t dir;
    pmix_status_t reqd, optional;

    PMIX_INFO_LOAD(&dir, PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_REQUIRED(&dir);
    reqd = PMIx_tool_set_server(server, &dir, 1);
    PMIX_INFO_OPTIONAL(&dir);
    optional = PMIx_tool_set_server(server, &dir, 1);
    PMIX_INFO_DESTRUCT(&dir);
    printf("set_server reqd %s\n", PMIx_Error_string(reqd));
    printf("set_server optional %s\n", PMIx_Error_string(optional));
    return reqd == PMIX_ERR_NOT_SUPPORTED && optional == PMIX_SUCCESS ? 0 : 1;
}

static int do_get(const char *nspace)
{
    pmix_proc_t job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32) {
        printf("get %s\n",
               PMIx_Error_string(rc == PMIX_SUCCESS ? PMIX_ERR_TYPE_MISMATCH
                                                    : rc));
        return 1;
    }
    printf("job size %u\n", val->data.uint32);
    PMIX_VALUE_RELEASE(val);
    return 0;
}

/* A job's fabric credential is its own processes' (issue 11): a tool,
 * whose nspace is its own, gets PMIX_ERR_NO_PERMISSIONS. */
static int do_cred(const char *nspace)
{
    pmix_proc_t job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_CREDENTIAL, NULL, 0, &val);
    printf("cred %s\n",
           rc == PMIX_SUCCESS ? "READABLE" : PMIx_Error_string(rc));
    if (val != NULL) {
        PMIX_VALUE_RELEASE(val);
    }
    return rc == PMIX_ERR_NO_PERMISSIONS ? 0 : 1;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, *servers = NULL;
    size_t nservers = 0;
    int first = 2, ret = 0;
    pmix_status_t rc;

    if (argc < 2) {
        fprintf(stderr,
                "usage: run_tool ident|log MSG|get NSPACE|cred NSPACE|query|"
                "setserver "
                "[how...]\n");
        return 2;
    }
    if (strcmp(argv[1], "log") == 0 || strcmp(argv[1], "get") == 0
        || strcmp(argv[1], "cred") == 0) {
        first = 3;
    }
    for (int i = first; i < argc; i++) {
        parse_how(argv[i]);
    }
    rc = PMIx_tool_init(&me, info, ninfo);
    if (rc != PMIX_SUCCESS) {
        printf("tool_init: %s\n", PMIx_Error_string(rc));
        return 3;
    }
    rc = PMIx_tool_get_servers(&servers, &nservers);
    if (rc != PMIX_SUCCESS || nservers != 1) {
        printf("get_servers: %s, %zu servers\n", PMIx_Error_string(rc),
               nservers);
        ret = 1;
    } else {
        printf("tool %s:%u server %s:%u\n", me.nspace, me.rank,
               servers[0].nspace, servers[0].rank);
    }
    fflush(stdout);
    if (strcmp(argv[1], "log") == 0 && argc > 2) {
        ret |= do_log(argv[2]);
    } else if (strcmp(argv[1], "get") == 0 && argc > 2) {
        ret |= do_get(argv[2]);
    } else if (strcmp(argv[1], "cred") == 0 && argc > 2) {
        ret |= do_cred(argv[2]);
    } else if (strcmp(argv[1], "setserver") == 0 && nservers == 1) {
        ret |= do_set_server(&servers[0]);
    } else if (strcmp(argv[1], "query") == 0) {
        ret |= tool_query_main(query_nspace);
    }
    PMIX_PROC_FREE(servers, nservers);
    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS) {
        printf("tool_finalize: %s\n", PMIx_Error_string(rc));
        ret = 1;
    }
    return ret;
}
