/* run_client_connect.c - run_client's connect modes
 * (tests/integ/test_run_connect.sh).  Every rank prints
 * "rank R connect MODE ok" when all its checks passed:
 *
 *   run_client connect all      bad directives are refused; each rank
 *                               commits a key, connects the whole job
 *                               (blocking, then non-blocking), reads every
 *                               other rank's key, and disconnects (both
 *                               forms)
 *   run_client connect subsets  even and odd ranks connect among
 *                               themselves (named ranks), then ranks 0 and
 *                               N-1 connect, then both disconnect
 *   run_client connect ids      two connects over the same ranks with ids
 *                               A and B, started in opposite orders by
 *                               even and odd ranks, both succeed; rank 0
 *                               also starts one with id X (PMIX_TIMEOUT
 *                               3 s) that nobody else joins: it times out
 *   run_client connect notify   connect and disconnect with
 *                               RDPMIX_CONNECT_NOTIFY_EACH: every rank
 *                               sees each other rank's PMIX_PROC_HAS_
 *                               CONNECTED and RDPMIX_PROC_HAS_DISCONNECTED,
 *                               and never its own
 *   run_client connect request  rank 0 connects with
 *                               RDPMIX_CONNECT_NOTIFY_REQ; the others join
 *                               from their PMIX_CONNECT_REQUESTED handler,
 *                               with the procs and id the event carries
 *   run_client connect cross SIDE OTHER_NP HOW
 *                               two rdpmix-runs (SIDE A and B) meet
 *                               through publish/lookup and connect their
 *                               jobs (HOW join), or B leaves (leave) or
 *                               never joins (idle): see mode_cross
 *   run_client connect die L    rank L exits without finalizing while the
 *                               others connect: they print
 *                               "rank R connect die STATUS" instead
 *   run_client connect optional L
 *                               rank L (none when L >= the job size)
 *                               exits without finalizing; the
 *                               others connect and then disconnect the
 *                               whole job with RDPMIX_CONNECT_OPTIONAL
 *                               (true): they print "rank R connect
 *                               optional CONNECT DISCONNECT" (statuses)
 * Every wait is bounded (60 s).
 */
#include <pmix.h>
#include <rdpmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_client.h"

int connect_main(int argc, char **argv);

enum {
    MAX_WAIT  = 60,
    MAX_RANKS = 64
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond  = PTHREAD_COND_INITIALIZER;
static unsigned size;

/* ---- waiting for non-blocking calls and events ---- */

typedef struct op_wait {
    int done;
    pmix_status_t status;
} op_wait_t;

static void op_done(pmix_status_t status, void *cbdata)
{
    op_wait_t *w = cbdata;

    pthread_mutex_lock(&lock);
    w->status = status;
    w->done   = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Wait (bounded) until *@a flag is non-zero; fail naming @a what. */
static void wait_flag(const int *flag, const char *what)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += MAX_WAIT;
    pthread_mutex_lock(&lock);
    while (*flag == 0) {
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0) {
            pthread_mutex_unlock(&lock);
            fail("no %s within %d s", what, MAX_WAIT);
        }
    }
    pthread_mutex_unlock(&lock);
}

static pmix_status_t wait_op(op_wait_t *w, const char *what)
{
    wait_flag(&w->done, what);
    return w->status;
}

static void expect(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want) {
        fail("%s: %s, expected %s", what, PMIx_Error_string(got),
             PMIx_Error_string(want));
    }
}

static void load_job(pmix_proc_t *p)
{
    PMIX_LOAD_PROCID(p, me.nspace, PMIX_RANK_WILDCARD);
}

/* ---- all ---- */

static void bad_directives(const pmix_proc_t *job)
{
    pmix_info_t info;
    int notbool = 1;

    PMIX_INFO_LOAD(&info, RDPMIX_CONNECT_ID, &notbool, PMIX_INT);
    expect("connect with an int id", PMIx_Connect(job, 1, &info, 1),
           PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_LOAD(&info, RDPMIX_CONNECT_NOTIFY_EACH, "yes", PMIX_STRING);
    expect("disconnect with a string flag", PMIx_Disconnect(job, 1, &info, 1),
           PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    expect("connect of no procs", PMIx_Connect(job, 0, NULL, 0),
           PMIX_ERR_BAD_PARAM);
}

static void read_others(void)
{
    for (unsigned r = 0; r < size; r++) {
        pmix_proc_t p;
        pmix_value_t *v;

        if (r == me.rank) {
            continue;
        }
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        v = get(&p, "cn.val");
        if (v->type != PMIX_UINT32 || v->data.uint32 != r * 7 + 1) {
            fail("rank %u's cn.val is wrong", r);
        }
        PMIX_VALUE_RELEASE(v);
    }
}

static void mode_all(void)
{
    pmix_proc_t job;
    pmix_value_t val;
    op_wait_t w = {0};

    load_job(&job);
    bad_directives(&job);
    val.type        = PMIX_UINT32;
    val.data.uint32 = me.rank * 7 + 1;
    expect("put", PMIx_Put(PMIX_GLOBAL, "cn.val", &val), PMIX_SUCCESS);
    expect("commit", PMIx_Commit(), PMIX_SUCCESS);
    expect("connect", PMIx_Connect(&job, 1, NULL, 0), PMIX_SUCCESS);
    read_others();
    expect("connect_nb", PMIx_Connect_nb(&job, 1, NULL, 0, op_done, &w),
           PMIX_SUCCESS);
    expect("connect_nb result", wait_op(&w, "connect_nb"), PMIX_SUCCESS);
    expect("disconnect", PMIx_Disconnect(&job, 1, NULL, 0), PMIX_SUCCESS);
    memset(&w, 0, sizeof(w));
    expect("disconnect_nb", PMIx_Disconnect_nb(&job, 1, NULL, 0, op_done, &w),
           PMIX_SUCCESS);
    expect("disconnect_nb result", wait_op(&w, "disconnect_nb"), PMIX_SUCCESS);
}

/* ---- subsets ---- */

/* Connect and disconnect with the ranks of @a parity (0, 1) or, with
 * parity -1, ranks 0 and size - 1. */
static void connect_some(int parity)
{
    pmix_proc_t procs[MAX_RANKS];
    size_t n = 0;

    for (unsigned r = 0; r < size; r++) {
        if (parity >= 0 ? (int)(r % 2) == parity : r == 0 || r == size - 1) {
            PMIX_LOAD_PROCID(&procs[n], me.nspace, r);
            n++;
        }
    }
    expect("connect of a subset", PMIx_Connect(procs, n, NULL, 0),
           PMIX_SUCCESS);
    expect("disconnect of a subset", PMIx_Disconnect(procs, n, NULL, 0),
           PMIX_SUCCESS);
}

static void mode_subsets(void)
{
    connect_some((int)(me.rank % 2));
    if (me.rank == 0 || me.rank == size - 1) {
        connect_some(-1);
    }
}

/* ---- ids ---- */

static void start_with_id(const char *id, double timeout, op_wait_t *w,
                          pmix_info_t *info)
{
    pmix_proc_t job;
    size_t n = 1;

    load_job(&job);
    PMIX_INFO_LOAD(&info[0], RDPMIX_CONNECT_ID, id, PMIX_STRING);
    if (timeout > 0) {
        int t = (int)timeout;

        PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &t, PMIX_INT);
        n = 2;
    }
    expect("connect_nb with an id",
           PMIx_Connect_nb(&job, 1, info, n, op_done, w), PMIX_SUCCESS);
}

static void mode_ids(void)
{
    pmix_info_t ia[1], ib[1], ix[2];
    op_wait_t a = {0}, b = {0}, x = {0};

    if (me.rank == 0) {
        start_with_id("X", 3, &x, ix);
    }
    if (me.rank % 2 == 0) {
        start_with_id("A", 0, &a, ia);
        start_with_id("B", 0, &b, ib);
    } else {
        start_with_id("B", 0, &b, ib);
        start_with_id("A", 0, &a, ia);
    }
    expect("connect A", wait_op(&a, "connect A"), PMIX_SUCCESS);
    expect("connect B", wait_op(&b, "connect B"), PMIX_SUCCESS);
    if (me.rank == 0) {
        expect("connect X nobody joins", wait_op(&x, "connect X"),
               PMIX_ERR_TIMEOUT);
        PMIX_INFO_DESTRUCT(&ix[0]);
        PMIX_INFO_DESTRUCT(&ix[1]);
    }
    PMIX_INFO_DESTRUCT(&ia[0]);
    PMIX_INFO_DESTRUCT(&ib[0]);
}

/* ---- notify ---- */

static int seen_cnct[MAX_RANKS], seen_disc[MAX_RANKS];
static int ncnct, ndisc, all_cnct, all_disc, self_seen;

static void count_source(int *seen, int *count, int *all,
                         const pmix_proc_t *source)
{
    if (PMIX_CHECK_PROCID(source, &me)) {
        self_seen = 1;
    } else if (source->rank < size && !seen[source->rank]) {
        seen[source->rank] = 1;
        if (++*count == (int)size - 1) {
            *all = 1;
        }
    }
}

static void notify_handler(size_t id, pmix_status_t status,
                           const pmix_proc_t *source, pmix_info_t info[],
                           size_t ninfo, pmix_info_t results[], size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc,
                           void *cbdata)
{
    pthread_mutex_lock(&lock);
    if (status == PMIX_PROC_HAS_CONNECTED) {
        count_source(seen_cnct, &ncnct, &all_cnct, source);
    } else {
        count_source(seen_disc, &ndisc, &all_disc, source);
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void mode_notify(void)
{
    pmix_status_t codes[2] = {PMIX_PROC_HAS_CONNECTED,
                              RDPMIX_PROC_HAS_DISCONNECTED};
    pmix_proc_t job;
    pmix_info_t info[2];
    bool t = true;

    PMIx_Register_event_handler(codes, 2, NULL, 0, notify_handler, NULL, NULL);
    load_job(&job);
    PMIX_INFO_LOAD(&info[0], RDPMIX_CONNECT_NOTIFY_EACH, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], RDPMIX_CONNECT_ID, "N", PMIX_STRING);
    expect("connect notify-each", PMIx_Connect(&job, 1, info, 2), PMIX_SUCCESS);
    wait_flag(&all_cnct, "PMIX_PROC_HAS_CONNECTED from every other rank");
    expect("disconnect notify-each", PMIx_Disconnect(&job, 1, info, 2),
           PMIX_SUCCESS);
    wait_flag(&all_disc, "RDPMIX_PROC_HAS_DISCONNECTED from every other rank");
    /* our own events would have come before the others' last one */
    if (self_seen) {
        fail("saw its own connect event");
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* ---- request ---- */

static pmix_proc_t req_procs[MAX_RANKS];
static size_t req_nprocs;
static pmix_info_t req_info;
static pmix_proc_t req_source;
static op_wait_t req_wait;
static int req_started;

/* Join the requested connect: its procs and id come with the event. */
static void request_handler(size_t id, pmix_status_t status,
                            const pmix_proc_t *source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t results[],
                            size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    const char *cid = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (PMIX_CHECK_KEY(&info[i], RDPMIX_CONNECT_PROCS)
            && v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_PROC
            && v->data.darray->size <= MAX_RANKS) {
            req_nprocs = v->data.darray->size;
            memcpy(req_procs, v->data.darray->array,
                   req_nprocs * sizeof(pmix_proc_t));
        } else if (PMIX_CHECK_KEY(&info[i], RDPMIX_CONNECT_ID)
                   && v->type == PMIX_STRING) {
            cid = v->data.string;
        }
    }
    pthread_mutex_lock(&lock);
    if (!req_started && req_nprocs > 0 && cid != NULL) {
        req_started = 1;
        req_source  = *source;
        PMIX_INFO_LOAD(&req_info, RDPMIX_CONNECT_ID, cid, PMIX_STRING);
        /* procs and info stay ours until the callback (static) */
        if (PMIx_Connect_nb(req_procs, req_nprocs, &req_info, 1, op_done,
                            &req_wait)
            != PMIX_SUCCESS) {
            req_wait.status = PMIX_ERROR;
            req_wait.done   = 1;
        }
        pthread_cond_broadcast(&cond);
    }
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void mode_request(void)
{
    pmix_status_t code = PMIX_CONNECT_REQUESTED;
    pmix_proc_t job;
    pmix_info_t info[2];
    bool t = true;

    if (me.rank != 0) {
        PMIx_Register_event_handler(&code, 1, NULL, 0, request_handler, NULL,
                                    NULL);
        wait_flag(&req_started, "PMIX_CONNECT_REQUESTED");
        if (req_source.rank != 0) {
            fail("the request came from rank %u", req_source.rank);
        }
        expect("connect from the request handler",
               wait_op(&req_wait, "requested connect"), PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&req_info);
        return;
    }
    load_job(&job);
    PMIX_INFO_LOAD(&info[0], RDPMIX_CONNECT_NOTIFY_REQ, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], RDPMIX_CONNECT_ID, "R", PMIX_STRING);
    expect("connect notify-req", PMIx_Connect(&job, 1, info, 2), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* ---- cross: two jobs (two rdpmix-runs) meet through publish/lookup ---- */

static void publish_global(const char *key, const char *value)
{
    pmix_info_t info[2];
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;

    PMIX_INFO_LOAD(&info[0], key, value, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    expect("publish", PMIx_Publish(info, 2), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* The other job's string under @a key (waits up to MAX_WAIT s). */
static void lookup_global(const char *key, char *value, size_t len)
{
    pmix_info_t info[3];
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;
    int secs                = MAX_WAIT;
    bool t                  = true;
    pmix_pdata_t pd;

    PMIX_INFO_LOAD(&info[0], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    PMIX_INFO_LOAD(&info[1], PMIX_WAIT, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    expect("lookup", PMIx_Lookup(&pd, 1, info, 3), PMIX_SUCCESS);
    if (pd.value.type != PMIX_STRING) {
        fail("%s is not a string", key);
    }
    snprintf(value, len, "%s", pd.value.data.string);
    PMIX_PDATA_DESTRUCT(&pd);
}

/* Put and commit "cn.cross.val" = "SIDE-RANK" for the other job. */
static void commit_for_other(const char *side)
{
    char val[32];
    pmix_value_t v;

    snprintf(val, sizeof(val), "%s-%u", side, me.rank);
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    expect("put", PMIx_Put(PMIX_GLOBAL, "cn.cross.val", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    expect("commit", PMIx_Commit(), PMIX_SUCCESS);
}

/* After the connect: the other job's size is @a other_np, its cluster id
 * is its own, and each of its ranks committed "OTHER-RANK". */
static void check_other(const char *nspace, const char *other,
                        unsigned other_np, const char *my_cluster)
{
    pmix_proc_t job, p;
    pmix_value_t *v;
    char want[32], *s;

    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    v = get(&job, PMIX_JOB_SIZE);
    if (v->type != PMIX_UINT32 || v->data.uint32 != other_np) {
        fail("the other job's size is not %u", other_np);
    }
    PMIX_VALUE_RELEASE(v);
    s = get_string(&job, PMIX_CLUSTER_ID);
    if (strcmp(s, my_cluster) == 0) {
        fail("the other job has our cluster id %s", s);
    }
    free(s);
    for (unsigned r = 0; r < other_np; r++) {
        PMIX_LOAD_PROCID(&p, nspace, r);
        s = get_string(&p, "cn.cross.val");
        snprintf(want, sizeof(want), "%s-%u", other, r);
        if (strcmp(s, want) != 0) {
            fail("rank %u of the other job committed %s, not %s", r, s, want);
        }
        free(s);
    }
}

/* abort: the other job's rank that ended (PMIX_EVENT_AFFECTED_PROC of
 * PMIX_ERR_PROC_ABORTED), and its exit code */
static int aborted_seen;
static pmix_proc_t aborted_proc;
static int aborted_code = -1;

static void aborted_handler(size_t id, pmix_status_t status,
                            const pmix_proc_t *source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t results[],
                            size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    (void)id;
    (void)status;
    (void)source;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)
            && info[i].value.type == PMIX_PROC) {
            aborted_proc = *info[i].value.data.proc;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE)
                   && info[i].value.type == PMIX_INT) {
            aborted_code = info[i].value.data.integer;
        }
    }
    aborted_seen = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* Wait (bounded) until the file @a file exists (NULL: no wait). */
static void wait_file(const char *file)
{
    for (int i = 0;
         i < 10 * MAX_WAIT && file != NULL && access(file, F_OK) != 0; i++) {
        usleep(100000);
    }
}

/* HOW abort (see mode_cross). */
static void cross_abort(bool a, const char *nspace, unsigned other_np)
{
    pmix_status_t code = PMIX_ERR_PROC_ABORTED;
    pmix_proc_t procs[2];
    pmix_info_t info;

    if (!a) {
        PMIx_Register_event_handler(&code, 1, NULL, 0, aborted_handler, NULL,
                                    NULL);
    }
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, RDPMIX_CONNECT_ID, "cross-abort", PMIX_STRING);
    expect("connect across launchers", PMIx_Connect(procs, 2, &info, 1),
           PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    if (a) {
        if (me.rank == size - 1) {
            _exit(3);
        }
        wait_file(getenv("RUN_CLIENT_WAIT_FILE")); /* ended before */
        fail("the job was not ended after its rank %u failed", size - 1);
    }
    wait_flag(&aborted_seen, "PMIX_ERR_PROC_ABORTED of the other job");
    if (strcmp(aborted_proc.nspace, nspace) != 0
        || aborted_proc.rank != other_np - 1) {
        fail("PMIX_ERR_PROC_ABORTED names %s:%u", aborted_proc.nspace,
             aborted_proc.rank);
    }
    printf("rank %u connect cross B saw A:%u end with %d\n", me.rank,
           aborted_proc.rank, aborted_code);
    fflush(stdout);
}

/*
 * RFC0003's rendezvous between two rdpmix-runs.  Every rank of A and B
 * commits "SIDE-RANK" and looks the other job up ("cluster:nspace",
 * which rank 0 publishes).  @a how:
 *   join   connect both jobs (RDPMIX_CONNECT_ID "cross"), check the
 *          other's size, cluster id and committed keys, disconnect;
 *          prints "rank R connect cross SIDE joined"
 *   leave  (B) exits without connecting once A saw it; A, which waits
 *          for RUN_CLIENT_WAIT_FILE (B ended) before it connects, prints
 *          "rank R connect cross A: STATUS"
 *   idle   (B) stays without connecting until RUN_CLIENT_WAIT_FILE
 *          exists; A connects with PMIX_TIMEOUT 5 s and prints its status
 *   abort  both connect; A's last rank then exits with status 3 (the
 *          others wait to be ended with their job), and every rank of B
 *          gets PMIX_ERR_PROC_ABORTED naming it: prints "rank R connect
 *          cross B saw A:K end with E"
 */
static void mode_cross(const char *side, unsigned other_np, const char *how)
{
    char mine[PMIX_MAX_NSLEN + 1], theirs[PMIX_MAX_NSLEN + 1];
    char cluster[PMIX_MAX_NSLEN + 1] = {0}, nspace[PMIX_MAX_NSLEN + 1] = {0};
    bool a            = strcmp(side, "A") == 0;
    const char *other = a ? "B" : "A";
    const char *file  = getenv("RUN_CLIENT_WAIT_FILE");
    bool join         = strcmp(how, "join") == 0;
    char key[32], seen[PMIX_MAX_NSLEN + 1], *clid;
    pmix_proc_t job, procs[2];
    pmix_info_t info[2];
    size_t ninfo = 1;
    int secs     = 5;
    pmix_status_t rc;

    load_job(&job);
    clid = get_string(&job, PMIX_CLUSTER_ID);
    commit_for_other(side);
    if (me.rank == 0) {
        PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(mine, clid, me.nspace);
        snprintf(key, sizeof(key), "cn.cross.%s", side);
        publish_global(key, mine);
    }
    /* every rank asks: many GLOBAL lookups of both launchers at once */
    snprintf(key, sizeof(key), "cn.cross.%s", other);
    lookup_global(key, theirs, sizeof(theirs));
    PMIX_MULTICLUSTER_NSPACE_PARSE(theirs, cluster, nspace);
    if (cluster[0] == '\0') {
        fail("the other job published %s, without a cluster id", theirs);
    }
    if (a) {
        /* B (leave) ends once it sees "seen", and its launcher's keys go
         * with it: every rank of A must have B's key by then, not just
         * rank 0 (ranks 1 and 2 timed out in their lookup under ASan) */
        expect("fence after the lookups", PMIx_Fence(NULL, 0, NULL, 0),
               PMIX_SUCCESS);
        if (me.rank == 0) {
            publish_global("cn.cross.seen", "yes");
        }
    }
    if (!a && (strcmp(how, "leave") == 0 || strcmp(how, "idle") == 0)) {
        /* B: gone once A saw it (leave), or there without joining (idle) */
        if (strcmp(how, "leave") == 0) {
            if (me.rank == 0) {
                lookup_global("cn.cross.seen", seen, sizeof(seen));
            }
        } else {
            wait_file(file);
        }
        free(clid);
        return;
    }
    if (strcmp(how, "leave") == 0) {
        wait_file(file); /* B's launcher ended */
    }
    if (strcmp(how, "abort") == 0) {
        cross_abort(a, nspace, other_np);
        free(clid);
        return;
    }
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[0], RDPMIX_CONNECT_ID, "cross", PMIX_STRING);
    if (!join) {
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &secs, PMIX_INT);
    }
    rc = PMIx_Connect(procs, 2, info, ninfo);
    if (!join) {
        printf("rank %u connect cross %s: %d\n", me.rank, side, rc);
    } else {
        expect("connect across launchers", rc, PMIX_SUCCESS);
        check_other(nspace, other, other_np, clid);
        expect("disconnect across launchers",
               PMIx_Disconnect(procs, 2, info, 1), PMIX_SUCCESS);
        printf("rank %u connect cross %s joined\n", me.rank, side);
    }
    fflush(stdout);
    PMIX_INFO_DESTRUCT(&info[0]);
    free(clid);
    if (join && a) {
        wait_file(file); /* B's lookups of A's keys are done */
    }
}

/* ---- die ---- */

/* After a fence of everyone, rank @a leaver exits without finalizing. */
static void leave_if(unsigned leaver)
{
    fence_collect(0);
    if (me.rank == leaver) {
        printf("rank %u leaves\n", me.rank);
        fflush(stdout);
        _exit(0);
    }
}

static void mode_die(unsigned leaver)
{
    pmix_proc_t job;
    pmix_status_t rc;

    leave_if(leaver);
    load_job(&job);
    rc = PMIx_Connect(&job, 1, NULL, 0);
    printf("rank %u connect die %d\n", me.rank, rc);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    exit(0);
}

/* ---- optional ---- */

static void mode_optional(unsigned leaver)
{
    bool t = true;
    pmix_proc_t job;
    pmix_info_t info;
    pmix_status_t crc, drc;

    leave_if(leaver);
    load_job(&job);
    PMIX_INFO_LOAD(&info, RDPMIX_CONNECT_OPTIONAL, &t, PMIX_BOOL);
    crc = PMIx_Connect(&job, 1, &info, 1);
    drc = PMIx_Disconnect(&job, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    printf("rank %u connect optional %d %d\n", me.rank, crc, drc);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    exit(0);
}

int connect_main(int argc, char **argv)
{
    const char *mode = argc >= 3 ? argv[2] : "";
    pmix_proc_t job;
    pmix_value_t *v;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    load_job(&job);
    v    = get(&job, PMIX_JOB_SIZE);
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if (size > MAX_RANKS) {
        fail("run_client connect runs on at most %d ranks", MAX_RANKS);
    }
    if (strcmp(mode, "all") == 0) {
        mode_all();
    } else if (strcmp(mode, "subsets") == 0) {
        mode_subsets();
    } else if (strcmp(mode, "ids") == 0) {
        mode_ids();
    } else if (strcmp(mode, "notify") == 0) {
        mode_notify();
    } else if (strcmp(mode, "request") == 0) {
        mode_request();
    } else if (strcmp(mode, "cross") == 0 && argc == 6) {
        mode_cross(argv[3], (unsigned)atoi(argv[4]), argv[5]);
    } else if (strcmp(mode, "die") == 0 && argc == 4) {
        mode_die((unsigned)atoi(argv[3]));
    } else if (strcmp(mode, "optional") == 0 && argc == 4) {
        mode_optional((unsigned)atoi(argv[3]));
    } else {
        fail("usage: run_client connect all|subsets|ids|notify|request|"
             "cross A|B OTHER_NP HOW|die L|optional L");
    }
    /* nobody leaves before everyone's checks are done */
    fence_collect(0);
    expect("finalize", PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    printf("rank %u connect %s ok\n", me.rank, mode);
    return 0;
}
