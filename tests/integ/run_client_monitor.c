/* run_client_monitor.c - run_client's heartbeat monitor mode
 * (tests/integ/test_run_monitor.sh)
 *
 *   run_client monitor  every rank checks that bad requests are refused
 *                       (and monitors beyond the server's limit),
 *                       registers monitor M1 (1 s, 1 drop allowed), beats
 *                       every 0.2 s for 3 s, stops and waits for the
 *                       PMIX_MONITOR_HEARTBEAT_ALERT about itself; then
 *                       cancels M1, registers M2, cancels it at once and
 *                       registers M3 alike: once M3 stalls, M2 would have
 *                       stalled too had the cancel not worked.  It prints
 *                       "rank R monitor bad ok beating A stalled S
 *                        cancelled C cancel ok"
 *                       (A: alerts about itself while beating, S: alerts
 *                       for M1 after it stopped, C: alerts for M2).
 * Every wait is bounded (30 s).
 */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int monitor_main(void);

enum {
    MAX_WAIT = 30,
    NIDS     = 3
};

static const char *const ids[NIDS] = {"M1", "M2", "M3"};
static pmix_proc_t self;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond  = PTHREAD_COND_INITIALIZER;
static int alerts[NIDS]; /* alerts about this rank, per monitor id */

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "rank %u: FAILED %s: %s\n", self.rank, what,
            PMIx_Error_string(rc));
    exit(1);
}

static void expect(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want) {
        fprintf(stderr, "rank %u: FAILED %s: %s, expected %s\n", self.rank,
                what, PMIx_Error_string(got), PMIx_Error_string(want));
        exit(1);
    }
}

/* Count the alert when it is about this rank (the other ranks of the
 * job on this node see their alerts too). */
static void alert_handler(size_t id, pmix_status_t status,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    const pmix_proc_t *affected = NULL;
    const char *mid             = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)
            && info[i].value.type == PMIX_PROC) {
            affected = info[i].value.data.proc;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_ID)
                   && info[i].value.type == PMIX_STRING) {
            mid = info[i].value.data.string;
        }
    }
    if (affected != NULL && mid != NULL && PMIX_CHECK_PROCID(affected, &self)) {
        pthread_mutex_lock(&lock);
        for (int k = 0; k < NIDS; k++) {
            if (strcmp(mid, ids[k]) == 0) {
                alerts[k]++;
            }
        }
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static int alerts_for(int k)
{
    int n;

    pthread_mutex_lock(&lock);
    n = alerts[k];
    pthread_mutex_unlock(&lock);
    return n;
}

/* Wait (at most MAX_WAIT s) for an alert of monitor @a k. */
static int wait_alert(int k)
{
    struct timespec deadline;
    int n;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += MAX_WAIT;
    pthread_mutex_lock(&lock);
    while (alerts[k] == 0
           && pthread_cond_timedwait(&cond, &lock, &deadline) == 0) {
    }
    n = alerts[k];
    pthread_mutex_unlock(&lock);
    return n;
}

static pmix_status_t request(const char *key, const char *id,
                             const uint32_t *time, const uint32_t *drops)
{
    pmix_info_t mon, dirs[3];
    size_t n = 0;
    pmix_status_t rc;

    if (strcmp(key, PMIX_MONITOR_CANCEL) == 0) {
        PMIX_INFO_LOAD(&mon, key, id, PMIX_STRING);
    } else {
        PMIX_INFO_LOAD(&mon, key, NULL, PMIX_POINTER);
    }
    if (id != NULL && strcmp(key, PMIX_MONITOR_CANCEL) != 0) {
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_ID, id, PMIX_STRING);
    }
    if (time != NULL) {
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_HEARTBEAT_TIME, time,
                       PMIX_UINT32);
    }
    if (drops != NULL) {
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_HEARTBEAT_DROPS, drops,
                       PMIX_UINT32);
    }
    rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, n, NULL,
                              NULL);
    PMIX_INFO_DESTRUCT(&mon);
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&dirs[i]);
    }
    return rc;
}

static void check_bad_requests(void)
{
    static const uint32_t zero = 0, one = 1;
    pmix_info_t file;

    expect("monitor without a time",
           request(PMIX_MONITOR_HEARTBEAT, "B", NULL, &one),
           PMIX_ERR_BAD_PARAM);
    expect("monitor with time 0",
           request(PMIX_MONITOR_HEARTBEAT, "B", &zero, &one),
           PMIX_ERR_BAD_PARAM);
    expect("cancel of an unknown id",
           request(PMIX_MONITOR_CANCEL, "nosuch", NULL, NULL),
           PMIX_ERR_NOT_FOUND);
    expect("NULL monitor",
           PMIx_Process_monitor(NULL, PMIX_MONITOR_HEARTBEAT_ALERT, NULL, 0,
                                NULL, NULL),
           PMIX_ERR_BAD_PARAM);
    /* rdpmixd has no `monitor` upcall: file monitors are not supported */
    PMIX_INFO_LOAD(&file, PMIX_MONITOR_FILE, "/nonexistent", PMIX_STRING);
    expect("file monitor",
           PMIx_Process_monitor(&file, PMIX_MONITOR_FILE_ALERT, NULL, 0, NULL,
                                NULL),
           PMIX_ERR_NOT_SUPPORTED);
    PMIX_INFO_DESTRUCT(&file);
}

/* The server holds at most 32 monitors per client: register until it
 * refuses (it must, within 1000), then cancel them all. */
static void check_monitor_limit(void)
{
    static const uint32_t hour = 3600, one = 1;
    pmix_status_t rc = PMIX_SUCCESS;
    int n;

    for (n = 0; n < 1000 && rc == PMIX_SUCCESS; n++) {
        rc = request(PMIX_MONITOR_HEARTBEAT, "L", &hour, &one);
    }
    expect("monitor beyond the limit", rc, PMIX_ERR_OUT_OF_RESOURCE);
    expect("cancel of the limit's monitors",
           request(PMIX_MONITOR_CANCEL, "L", NULL, NULL), PMIX_SUCCESS);
}

static int beat_for(double seconds)
{
    int beats = (int)(seconds / 0.1);

    for (int i = 0; i < beats; i++) {
        PMIx_Heartbeat(); /* a statement macro: no status */
        usleep(100000);
    }
    return alerts_for(0);
}

int monitor_main(void)
{
    static const uint32_t one = 1, two = 2;
    pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
    pmix_status_t rc;
    int beating, stalled, cancelled;

    rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_Init", rc);
    }
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, alert_handler, NULL,
                                     NULL);
    if (rc < 0) {
        die("PMIx_Register_event_handler", rc);
    }
    check_bad_requests();
    check_monitor_limit();

    /* beats every 0.1 s against a 2 s period with 2 drops allowed: only a
     * process starved of the CPU for 4 s or more could see an alert here */
    expect("monitor M1", request(PMIX_MONITOR_HEARTBEAT, "M1", &two, &two),
           PMIX_SUCCESS);
    beating = beat_for(3.0);
    stalled = wait_alert(0);
    expect("cancel M1", request(PMIX_MONITOR_CANCEL, "M1", NULL, NULL),
           PMIX_SUCCESS);

    expect("monitor M2", request(PMIX_MONITOR_HEARTBEAT, "M2", &one, &one),
           PMIX_SUCCESS);
    expect("cancel M2", request(PMIX_MONITOR_CANCEL, "M2", NULL, NULL),
           PMIX_SUCCESS);
    expect("monitor M3", request(PMIX_MONITOR_HEARTBEAT, "M3", &one, &one),
           PMIX_SUCCESS);
    if (wait_alert(2) == 0) {
        die("no alert for M3", PMIX_ERR_TIMEOUT);
    }
    cancelled = alerts_for(1);
    /* a NULL id cancels all of this process's monitors */
    expect("cancel all", request(PMIX_MONITOR_CANCEL, NULL, NULL, NULL),
           PMIX_SUCCESS);

    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_Finalize", rc);
    }
    printf("rank %u monitor bad ok beating %d stalled %d cancelled %d "
           "cancel ok\n",
           self.rank, beating, stalled, cancelled);
    return 0;
}
