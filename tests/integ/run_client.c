/* run_client.c - a PMIx client that checks what rdpmix-run/rdpmixd give it
 *
 * usage: run_client N            check job info for an N-rank one-node job,
 *                                exchange data with every peer, print
 *                                "rank R of N ok"
 *        run_client N abort S    as above up to the fence; rank N-1 then
 *                                calls PMIx_Abort(S) while the others wait
 *                                in a fence that never completes
 */
#include <pmix.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rank %u: FAILED ", me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static pmix_value_t *get(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc  = PMIx_Get(proc, key, NULL, 0, &val);

    if (rc != PMIX_SUCCESS || val == NULL) {
        fail("PMIx_Get(%s:%u, %s): %s", proc->nspace, proc->rank, key,
             PMIx_Error_string(rc));
    }
    return val;
}

/* an unsigned value of any integer type the Standard allows for @a key */
static unsigned long get_uint(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = get(proc, key);
    unsigned long v;

    switch (val->type) {
    case PMIX_UINT32:
        v = val->data.uint32;
        break;
    case PMIX_UINT16:
        v = val->data.uint16;
        break;
    case PMIX_PROC_RANK:
        v = val->data.rank;
        break;
    case PMIX_UINT64:
        v = (unsigned long)val->data.uint64;
        break;
    case PMIX_SIZE:
        v = val->data.size;
        break;
    default:
        fail("%s has type %u, not an unsigned integer", key, val->type);
    }
    PMIX_VALUE_RELEASE(val);
    return v;
}

static char *get_string(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = get(proc, key);
    char *s;

    if (val->type != PMIX_STRING || val->data.string == NULL) {
        fail("%s has type %u, not a string", key, val->type);
    }
    s = strdup(val->data.string);
    PMIX_VALUE_RELEASE(val);
    return s;
}

static void expect_uint(const pmix_proc_t *proc, const char *key,
                        unsigned long want)
{
    unsigned long got = get_uint(proc, key);

    if (got != want) {
        fail("%s is %lu, expected %lu", key, got, want);
    }
}

static void check_job_info(unsigned n)
{
    pmix_proc_t wild;
    char *peers, *host, *env;
    char want[16 * 1024];
    size_t off = 0;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    expect_uint(&wild, PMIX_JOB_SIZE, n);
    expect_uint(&wild, PMIX_UNIV_SIZE, n);
    expect_uint(&wild, PMIX_MAX_PROCS, n);
    expect_uint(&wild, PMIX_LOCAL_SIZE, n);
    expect_uint(&wild, PMIX_NUM_NODES, 1);
    expect_uint(&me, PMIX_LOCAL_RANK, me.rank);
    expect_uint(&me, PMIX_NODE_RANK, me.rank);
    expect_uint(&me, PMIX_APPNUM, 0);

    for (unsigned r = 0; r < n && off < sizeof(want) - 16; r++) {
        off += (size_t)snprintf(want + off, sizeof(want) - off, "%s%u",
                                r ? "," : "", r);
    }
    peers = get_string(&wild, PMIX_LOCAL_PEERS);
    if (strcmp(peers, want) != 0) {
        fail("PMIX_LOCAL_PEERS is '%s', expected '%s'", peers, want);
    }
    free(peers);

    host = get_string(&me, PMIX_HOSTNAME);
    if (host[0] == '\0') {
        fail("empty PMIX_HOSTNAME");
    }
    free(host);

    env = getenv("PMIX_RANK");
    if (env == NULL || (unsigned)atoi(env) != me.rank) {
        fail("env PMIX_RANK is %s, PMIx_Init said %u", env ? env : "unset",
             me.rank);
    }
}

static void exchange(unsigned n)
{
    pmix_value_t val;
    pmix_info_t info;
    pmix_proc_t peer;
    char mine[64], want[64];
    bool collect = true;
    pmix_status_t rc;

    snprintf(mine, sizeof(mine), "hello from rank %u", me.rank);
    PMIX_VALUE_LOAD(&val, mine, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "rdpmix.test.greeting", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put: %s", PMIx_Error_string(rc));
    }
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
    }
    for (unsigned r = 0; r < n; r++) {
        char *got;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        got = get_string(&peer, "rdpmix.test.greeting");
        snprintf(want, sizeof(want), "hello from rank %u", r);
        if (strcmp(got, want) != 0) {
            fail("rank %u's greeting is '%s'", r, got);
        }
        free(got);
    }
}

int main(int argc, char **argv)
{
    unsigned n;
    pmix_status_t rc;

    if (argc < 2 || (n = (unsigned)atoi(argv[1])) == 0) {
        fprintf(stderr, "usage: run_client N [abort STATUS]\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_job_info(n);
    if (argc >= 4 && strcmp(argv[2], "abort") == 0) {
        if (me.rank == n - 1) {
            PMIx_Abort(atoi(argv[3]), "run_client was asked to abort", NULL, 0);
            /* the host kills us; if it does not, say so */
            sleep(30);
            fail("still alive 30 s after PMIx_Abort");
        }
        /* never completes normally; once the host kills the aborted rank
         * the server may end it with an error: either way, wait to be
         * killed with the rest of the job */
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc == PMIX_SUCCESS) {
            fail("the fence succeeded although rank %u aborted", n - 1);
        }
        sleep(30);
        fail("still alive 30 s after rank %u aborted", n - 1);
    }
    exchange(n);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    printf("rank %u of %u ok\n", me.rank, n);
    return 0;
}
