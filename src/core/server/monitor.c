/* monitor.c - heartbeat monitors the server runs for its clients */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/*
 * PMIx_Process_monitor_nb with PMIX_MONITOR_HEARTBEAT registers a monitor
 * for the requesting client: every PMIX_MONITOR_HEARTBEAT_TIME seconds a
 * loop timer checks whether a heartbeat (PMIX_SEND_HEARTBEAT) arrived in
 * that period.  After more than PMIX_MONITOR_HEARTBEAT_DROPS consecutive
 * silent periods the requested error code is raised once, as an event
 * whose source is the client (as OpenPMIx does), with
 * PMIX_EVENT_AFFECTED_PROC and PMIX_MONITOR_ID; the next heartbeat
 * re-arms it.  The range is PMIX_RANGE_NAMESPACE unless a PMIX_RANGE
 * directive says otherwise; the event reaches this node's clients in
 * range and the server process's own handlers, not the host.
 */

typedef struct monitor {
    rdp_list_t link;
    pmix_proc_t proc; /* the monitored client */
    char *id;         /* PMIX_MONITOR_ID, may be NULL */
    uint32_t period;  /* seconds */
    uint32_t drops;   /* silent periods tolerated */
    uint32_t missed;  /* consecutive silent periods */
    pmix_status_t code;
    pmix_data_range_t range;
    bool beat;    /* a heartbeat arrived this period */
    bool alerted; /* raised for the current stall */
    rdp_timer_t *timer;
} monitor_t;

/* A client cannot make the server hold timers without bound. */
#define MAX_MONITORS_PER_CLIENT 32

static rdp_list_t monitors = {&monitors, &monitors};

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return a->rank == b->rank
           && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

static void monitor_free(monitor_t *m)
{
    rdp_list_del(&m->link);
    if (m->timer != NULL) {
        rdp_timer_destroy(m->timer);
    }
    rdp_free(m->id);
    rdp_free(m);
}

static void raise_alert(monitor_t *m)
{
    pmix_info_t info[2];
    size_t ninfo = 1;
    pmix_status_t status;

    rdp_log_info(SERVER, "%s:%u missed %u heartbeats (monitor %s): raising %s",
                 m->proc.nspace, m->proc.rank, m->missed,
                 m->id != NULL ? m->id : "-", rdp_status_name(m->code));
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &m->proc, PMIX_PROC);
    if (m->id != NULL) {
        PMIX_INFO_LOAD(&info[1], PMIX_MONITOR_ID, m->id, PMIX_STRING);
        ninfo = 2;
    }
    rdp_srv_notify_local(m->code, &m->proc, m->range, info, ninfo);
    if (m->range != PMIX_RANGE_PROC_LOCAL) {
        status = rdp_event_deliver_or_cache(m->code, &m->proc, m->range, info,
                                            ninfo);
        if (status != PMIX_SUCCESS) {
            rdp_log_debug(SERVER, "local delivery of %s: %s",
                          rdp_status_name(m->code), rdp_status_name(status));
        }
    }
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

static void check_heartbeat(void *arg)
{
    monitor_t *m = arg;

    if (m->beat) {
        m->missed  = 0;
        m->alerted = false;
    } else if (m->missed < UINT32_MAX) {
        m->missed++;
    }
    m->beat = false;
    if (m->missed > m->drops && !m->alerted) {
        m->alerted = true;
        raise_alert(m);
    }
    rdp_timer_start(m->timer, m->period);
}

static pmix_status_t get_u32(const pmix_info_t *info, uint32_t *out)
{
    pmix_status_t status;

    PMIX_VALUE_GET_NUMBER(status, &info->value, *out, uint32_t);
    return status;
}

/* Fill @a m from the directives: PMIX_MONITOR_HEARTBEAT_TIME is
 * required and positive. */
static pmix_status_t parse_directives(monitor_t *m, const pmix_info_t *dirs,
                                      size_t ndirs)
{
    pmix_status_t status = PMIX_SUCCESS;

    m->range = PMIX_RANGE_NAMESPACE;
    for (size_t i = 0; status == PMIX_SUCCESS && i < ndirs; i++) {
        const pmix_info_t *d = &dirs[i];

        if (PMIX_CHECK_KEY(d, PMIX_MONITOR_ID)) {
            if (d->value.type != PMIX_STRING || m->id != NULL) {
                return PMIX_ERR_BAD_PARAM;
            }
            m->id = d->value.data.string == NULL
                        ? NULL
                        : rdp_strdup(d->value.data.string);
        } else if (PMIX_CHECK_KEY(d, PMIX_MONITOR_HEARTBEAT_TIME)) {
            status = get_u32(d, &m->period);
        } else if (PMIX_CHECK_KEY(d, PMIX_MONITOR_HEARTBEAT_DROPS)) {
            status = get_u32(d, &m->drops);
        } else if (PMIX_CHECK_KEY(d, PMIX_RANGE)) {
            if (d->value.type != PMIX_DATA_RANGE) {
                return PMIX_ERR_BAD_PARAM;
            }
            m->range = d->value.data.range;
        }
    }
    if (status == PMIX_SUCCESS && m->period == 0) {
        status = PMIX_ERR_BAD_PARAM;
    }
    return status;
}

static size_t count_monitors(const pmix_proc_t *proc)
{
    monitor_t *m;
    size_t n = 0;

    rdp_list_for_each(m, &monitors, link) {
        n += same_proc(&m->proc, proc) ? 1 : 0;
    }
    return n;
}

static pmix_status_t add_monitor(const pmix_proc_t *proc, pmix_status_t code,
                                 const pmix_info_t *dirs, size_t ndirs)
{
    monitor_t *m;
    pmix_status_t status;

    if (count_monitors(proc) >= MAX_MONITORS_PER_CLIENT) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    m = rdp_calloc(1, sizeof(*m));
    if (m == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_list_init(&m->link);
    m->proc = *proc;
    m->code = code;
    status  = parse_directives(m, dirs, ndirs);
    if (status == PMIX_SUCCESS) {
        status = rdp_timer_create(rdp_rt.loop, check_heartbeat, m, &m->timer);
    }
    if (status != PMIX_SUCCESS) {
        monitor_free(m);
        return status;
    }
    rdp_list_push_back(&monitors, &m->link);
    rdp_timer_start(m->timer, m->period);
    rdp_log_debug(SERVER, "%s:%u heartbeat monitor %s: %us, %u drops",
                  proc->nspace, proc->rank, m->id != NULL ? m->id : "-",
                  m->period, m->drops);
    return PMIX_SUCCESS;
}

static void record_heartbeat(const pmix_proc_t *proc)
{
    monitor_t *m;

    rdp_list_for_each(m, &monitors, link) {
        if (same_proc(&m->proc, proc)) {
            m->beat = true;
        }
    }
}

/* Cancel @a proc's monitor @a id, or all of them for a NULL/empty id.
 * PMIX_ERR_NOT_FOUND when a named monitor does not exist. */
static pmix_status_t cancel_monitors(const pmix_proc_t *proc, const char *id)
{
    bool all   = id == NULL || id[0] == '\0';
    bool found = false;
    monitor_t *m, *tmp;

    rdp_list_for_each_safe(m, tmp, &monitors, link) {
        if (same_proc(&m->proc, proc)
            && (all || (m->id != NULL && strcmp(m->id, id) == 0))) {
            found = true;
            monitor_free(m);
        }
    }
    return found || all ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}

static pmix_status_t cancel_request(const pmix_proc_t *proc,
                                    const pmix_info_t *monitor)
{
    switch (monitor->value.type) {
    case PMIX_STRING:
        return cancel_monitors(proc, monitor->value.data.string);
    case PMIX_UNDEF:
    case PMIX_POINTER:
        return cancel_monitors(proc, NULL);
    default:
        return PMIX_ERR_BAD_PARAM;
    }
}

pmix_status_t rdp_srv_monitor_request(const pmix_proc_t *proc,
                                      const pmix_info_t *monitor,
                                      pmix_status_t code,
                                      const pmix_info_t *dirs, size_t ndirs,
                                      bool *handled)
{
    *handled = true;
    if (PMIX_CHECK_KEY(monitor, PMIX_SEND_HEARTBEAT)) {
        record_heartbeat(proc);
        return PMIX_SUCCESS;
    }
    if (PMIX_CHECK_KEY(monitor, PMIX_MONITOR_HEARTBEAT)) {
        return add_monitor(proc, code, dirs, ndirs);
    }
    if (PMIX_CHECK_KEY(monitor, PMIX_MONITOR_CANCEL)) {
        return cancel_request(proc, monitor);
    }
    *handled = false;
    return PMIX_SUCCESS;
}

void rdp_srv_monitor_client_gone(const pmix_proc_t *proc)
{
    (void)cancel_monitors(proc, NULL);
}

void rdp_srv_monitor_clear_all(void)
{
    while (!rdp_list_is_empty(&monitors)) {
        monitor_free(rdp_container_of(monitors.next, monitor_t, link));
    }
}
