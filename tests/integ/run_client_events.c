/* run_client_events.c - run_client's event modes (tests/integ/test_run_events.sh)
 *
 *   run_client events ranges    rank 0 raises one event of every range,
 *                               rank N-1 one more (global); each rank
 *                               prints what it saw:
 *                               "rank R node N of M counts PL L NS S G C FL"
 *                               (proc-local, local, namespace, session,
 *                               global, custom = ranks 1 and N-1, global
 *                               from rank N-1) and the handler chains of
 *                               the namespace and session events:
 *                               "rank R chain NS SESSION"
 *   run_client events cache     events raised before a handler exists:
 *                               PMIX_MODEL_DECLARED of PMIx_Init, rank 0's
 *                               global event before the others register,
 *                               and one raised before they even connect
 *                               (they wait for $RUN_CLIENT_FLAG, which
 *                               rank 0 creates), each seen once by the
 *                               first matching handler registered after
 *                               it: "rank R cache MD U1 U1LATE U2 DEFAULT"
 *                               (U1LATE: a second late handler; DEFAULT: a
 *                               default handler registered last, less the
 *                               marker)
 *   run_client events recovery  (rdpmix-run --enable-recovery) rank N-1
 *                               exits with status 5 after a fence; the
 *                               others wait for PMIX_ERR_PROC_ABORTED and
 *                               PMIX_EVENT_PROC_TERMINATED about it:
 *                               "rank R saw rank A end with status S: aborted
 *                               X terminated Y"
 * Every wait is bounded (60 s); what was seen is printed either way.
 */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int events_main(const char *mode);

enum {
    EV_PROC_LOCAL = -3101,
    EV_LOCAL      = -3102,
    EV_NSPACE     = -3103,
    EV_SESSION    = -3104,
    EV_GLOBAL     = -3105,
    EV_CUSTOM     = -3106,
    EV_FROM_LAST  = -3107,
    EV_U1         = -3120,
    EV_U2         = -3121,
    EV_MARKER     = -3199,
    NCOUNTED      = 7
};

static const pmix_status_t counted[NCOUNTED] = {
    EV_PROC_LOCAL, EV_LOCAL,  EV_NSPACE,   EV_SESSION,
    EV_GLOBAL,     EV_CUSTOM, EV_FROM_LAST};

static pmix_proc_t self;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counts[NCOUNTED];
static int markers;
static char chain_ns[16], chain_session[16];

/* what a handler is, given back as its PMIX_EVENT_RETURN_OBJECT */
typedef struct hdlr_tag {
    char letter;
    int complete; /* ends the chain (PMIX_EVENT_ACTION_COMPLETE) */
    int seen;     /* events it was called for */
    pmix_status_t last_code;
    int exit_code;        /* PMIX_EXIT_CODE of the last event, -1: none */
    pmix_rank_t affected; /* PMIX_EVENT_AFFECTED_PROC's rank */
} hdlr_tag_t;

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "rank %u: FAILED %s: %s\n", self.rank, what,
            PMIx_Error_string(rc));
    exit(1);
}

static void append(char *s, size_t size, char c)
{
    size_t n = strlen(s);

    if (n + 1 < size) {
        s[n]     = c;
        s[n + 1] = '\0';
    }
}

static void note_info(hdlr_tag_t *t, const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE)
            && info[i].value.type == PMIX_INT) {
            t->exit_code = info[i].value.data.integer;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)
                   && info[i].value.type == PMIX_PROC) {
            t->affected = info[i].value.data.proc->rank;
        }
    }
}

static hdlr_tag_t *tag_of(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT)) {
            return info[i].value.data.ptr;
        }
    }
    return NULL;
}

/* Every handler: count, record the chain order, go on or complete. */
static void handler(size_t id, pmix_status_t code, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                    size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                    void *cbdata)
{
    hdlr_tag_t *t = tag_of(info, ninfo);
    int complete  = 0;

    pthread_mutex_lock(&lock);
    if (t == NULL) {
        fprintf(stderr, "rank %u: a handler got no return object\n", self.rank);
    } else if (t->letter == '#') { /* the counter, first of all */
        for (int i = 0; i < NCOUNTED; i++) {
            counts[i] += counted[i] == code;
        }
        markers += code == EV_MARKER;
    } else {
        t->seen++;
        t->last_code = code;
        note_info(t, info, ninfo);
        complete = t->complete;
        if (code == EV_NSPACE) {
            append(chain_ns, sizeof(chain_ns), t->letter);
        } else if (code == EV_SESSION) {
            append(chain_session, sizeof(chain_session), t->letter);
        }
    }
    pthread_mutex_unlock(&lock);
    cbfunc(complete ? PMIX_EVENT_ACTION_COMPLETE : PMIX_SUCCESS, NULL, 0, NULL,
           NULL, cbdata);
}

/* Register @a t for @a codes with at most one placement directive. */
static void reg(pmix_status_t *codes, size_t ncodes, hdlr_tag_t *t,
                const char *where)
{
    pmix_info_t info[2];
    size_t ninfo = 1;
    bool yes     = true;
    pmix_status_t rc;

    t->exit_code = -1;
    t->affected  = PMIX_RANK_UNDEF;
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, t, PMIX_POINTER);
    if (where != NULL) {
        PMIX_INFO_LOAD(&info[1], where, &yes, PMIX_BOOL);
        ninfo = 2;
    }
    rc = PMIx_Register_event_handler(codes, ncodes, info, ninfo, handler, NULL,
                                     NULL);
    if (rc < 0) {
        die("PMIx_Register_event_handler", rc);
    }
}

static void notify(pmix_status_t code, pmix_data_range_t range,
                   pmix_info_t *info, size_t ninfo)
{
    pmix_status_t rc =
        PMIx_Notify_event(code, &self, range, info, ninfo, NULL, NULL);

    if (rc != PMIX_SUCCESS) {
        die("PMIx_Notify_event", rc);
    }
}

static void fence(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        die("PMIx_Fence", rc);
    }
}

static unsigned get_u32(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    unsigned out;

    PMIX_LOAD_PROCID(&p, self.nspace, rank);
    rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_UINT32) {
        die(key, rc != PMIX_SUCCESS ? rc : PMIX_ERR_TYPE_MISMATCH);
    }
    out = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    return out;
}

/* Wait (at most 60 s) until @a cond holds under the lock. */
static int wait_until(int (*cond)(void *), void *arg)
{
    for (int i = 0; i < 6000; i++) {
        int ok;

        pthread_mutex_lock(&lock);
        ok = cond(arg);
        pthread_mutex_unlock(&lock);
        if (ok) {
            return 1;
        }
        usleep(10000);
    }
    return 0;
}

static int counts_reached(void *arg)
{
    const int *want = arg;

    for (int i = 0; i < NCOUNTED; i++) {
        if (counts[i] < want[i]) {
            return 0;
        }
    }
    return 1;
}

static int marker_seen(void *arg)
{
    return markers > 0;
}

static int tag_seen(void *arg)
{
    return ((hdlr_tag_t *)arg)->seen > 0;
}

/* After everything else: rank 0's global marker reaches every rank after
 * whatever was sent before it, so late duplicates would be counted. */
static void marker_round(void)
{
    fence();
    if (self.rank == 0) {
        notify(EV_MARKER, PMIX_RANGE_GLOBAL, NULL, 0);
    }
    if (!wait_until(marker_seen, NULL)) {
        fprintf(stderr, "rank %u: no marker event within 60 s\n", self.rank);
    }
}

static int ranges_main(void)
{
    static hdlr_tag_t counter = {'#'}, a = {'A'}, b = {'B'}, c = {'C'},
                      d = {'D'}, e = {'E', 1};
    pmix_status_t all[NCOUNTED + 1];
    pmix_status_t ns[] = {EV_NSPACE}, session[] = {EV_SESSION},
                  multi[] = {EV_NSPACE, EV_SESSION};
    unsigned size         = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    unsigned node         = get_u32(self.rank, PMIX_NODEID);
    unsigned node0        = get_u32(0, PMIX_NODEID);
    pmix_proc_t custom[2];
    pmix_info_t cinfo;
    pmix_data_array_t darray = {PMIX_PROC, 2, custom};
    int want[NCOUNTED];

    memcpy(all, counted, sizeof(counted));
    all[NCOUNTED] = EV_MARKER;
    reg(all, NCOUNTED + 1, &counter, PMIX_EVENT_HDLR_FIRST);
    reg(ns, 1, &a, NULL);
    reg(ns, 1, &b, PMIX_EVENT_HDLR_PREPEND); /* runs before A */
    reg(multi, 2, &d, NULL);
    reg(NULL, 0, &c, NULL);
    reg(session, 1, &e, NULL); /* completes the session chain */
    fence();

    PMIX_LOAD_PROCID(&custom[0], self.nspace, 1);
    PMIX_LOAD_PROCID(&custom[1], self.nspace, size - 1);
    if (self.rank == 0) {
        notify(EV_PROC_LOCAL, PMIX_RANGE_PROC_LOCAL, NULL, 0);
        notify(EV_LOCAL, PMIX_RANGE_LOCAL, NULL, 0);
        notify(EV_NSPACE, PMIX_RANGE_NAMESPACE, NULL, 0);
        notify(EV_SESSION, PMIX_RANGE_SESSION, NULL, 0);
        notify(EV_GLOBAL, PMIX_RANGE_GLOBAL, NULL, 0);
        PMIX_INFO_LOAD(&cinfo, PMIX_EVENT_CUSTOM_RANGE, &darray,
                       PMIX_DATA_ARRAY);
        notify(EV_CUSTOM, PMIX_RANGE_CUSTOM, &cinfo, 1);
        PMIX_INFO_DESTRUCT(&cinfo); /* notify copied it */
    }
    if (self.rank == size - 1) {
        notify(EV_FROM_LAST, PMIX_RANGE_GLOBAL, NULL, 0);
    }
    /* what the range rules say this rank gets */
    want[0] = self.rank == 0;
    want[1] = node == node0;
    want[2] = want[3] = want[4] = want[6] = 1;
    want[5] = self.rank == 1 || self.rank == size - 1;
    if (!wait_until(counts_reached, want)) {
        fprintf(stderr, "rank %u: not every event arrived within 60 s\n",
                self.rank);
    }
    marker_round();
    pthread_mutex_lock(&lock);
    printf("rank %u node %u of %u counts", self.rank, node, node0);
    for (int i = 0; i < NCOUNTED; i++) {
        printf(" %d", counts[i]);
    }
    printf("\nrank %u chain %s %s\n", self.rank, chain_ns, chain_session);
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Wait for rank 0's flag file, then start (as a late client). */
static void wait_for_flag(const char *flag)
{
    for (int i = 0; i < 6000 && access(flag, F_OK) != 0; i++) {
        usleep(10000);
    }
}

static int cache_main(const char *flag)
{
    static hdlr_tag_t counter = {'#'}, dflt = {'Z'}, md = {'M'}, u1 = {'1'},
                      u1late = {'L'}, u2 = {'2'};
    pmix_status_t mdcode[] = {PMIX_MODEL_DECLARED}, u1code[] = {EV_U1},
                  u2code[] = {EV_U2}, marker[] = {EV_MARKER};
    pmix_info_t model;
    pmix_status_t rc;
    FILE *f;

    if (self.rank != 0) {
        wait_for_flag(flag);
    }
    PMIX_INFO_LOAD(&model, PMIX_PROGRAMMING_MODEL, "run_client", PMIX_STRING);
    rc = PMIx_Init(&self, &model, 1);
    PMIX_INFO_DESTRUCT(&model);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_Init", rc);
    }
    if (self.rank == 0) {
        /* raised before the others even connect */
        notify(EV_U2, PMIX_RANGE_GLOBAL, NULL, 0);
        f = fopen(flag, "w");
        if (f == NULL) {
            die("creating the flag file", PMIX_ERR_FILE_OPEN_FAILURE);
        }
        fclose(f);
    }
    /* no default handler yet: it would take the user events kept for the
     * handlers registered below (the first matching handler takes a kept
     * event) */
    reg(marker, 1, &counter, NULL);
    reg(mdcode, 1, &md, NULL);
    reg(u2code, 1, &u2, NULL);
    fence();
    if (self.rank == 0) {
        notify(EV_U1, PMIX_RANGE_GLOBAL, NULL, 0);
    }
    fence();
    reg(u1code, 1, &u1, NULL);
    wait_until(tag_seen, &md);
    wait_until(tag_seen, &u1);
    wait_until(tag_seen, &u2);
    /* the event went to the first late handler: a second gets nothing */
    reg(u1code, 1, &u1late, NULL);
    /* nothing is left for a default handler */
    reg(NULL, 0, &dflt, NULL);
    marker_round();
    pthread_mutex_lock(&lock);
    printf("rank %u cache %d %d %d %d %d\n", self.rank, md.seen, u1.seen,
           u1late.seen, u2.seen, dflt.seen - markers);
    pthread_mutex_unlock(&lock);
    return 0;
}

static int recovery_main(void)
{
    static hdlr_tag_t aborted = {'a'}, terminated = {'t'};
    pmix_status_t acode[] = {PMIX_ERR_PROC_ABORTED},
                  tcode[] = {PMIX_EVENT_PROC_TERMINATED};
    unsigned size         = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);

    reg(acode, 1, &aborted, NULL);
    reg(tcode, 1, &terminated, NULL);
    fence();
    if (self.rank == size - 1) {
        fflush(stdout);
        _exit(5);
    }
    wait_until(tag_seen, &aborted);
    wait_until(tag_seen, &terminated);
    pthread_mutex_lock(&lock);
    printf("rank %u saw rank %d end with status %d: aborted %d terminated "
           "%d\n",
           self.rank,
           aborted.affected == PMIX_RANK_UNDEF ? -1 : (int)aborted.affected,
           aborted.exit_code, aborted.seen, terminated.seen);
    pthread_mutex_unlock(&lock);
    return 0;
}

int events_main(const char *mode)
{
    const char *flag = getenv("RUN_CLIENT_FLAG");
    pmix_status_t rc;
    int ret;

    if (strcmp(mode, "cache") == 0) {
        if (flag == NULL) {
            fprintf(stderr, "run_client events cache needs RUN_CLIENT_FLAG\n");
            return 2;
        }
        ret = cache_main(flag);
    } else if (strcmp(mode, "ranges") == 0 || strcmp(mode, "recovery") == 0) {
        rc = PMIx_Init(&self, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            die("PMIx_Init", rc);
        }
        ret = strcmp(mode, "ranges") == 0 ? ranges_main() : recovery_main();
    } else {
        fprintf(stderr, "usage: run_client events ranges|cache|recovery\n");
        return 2;
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_Finalize", rc);
    }
    return ret;
}
