/* rdpmixd_event.c - events between nodes, and the events of a rank's end */
#include "config.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "run/rdpmixd_int.h"

#include <pmix.h>
#include <pmix_server.h>

#include <string.h>

#define dm (&rdp_run_dmn)

/*
 * An event whose range leaves this node reaches us through the server's
 * notify_event upcall; we send it to rdpmix-run as NOTIFY, which relays it
 * to every other daemon, and each of those hands it to its own server
 * with PMIx_Notify_event.  A server never passes an event that its own
 * process raised back up to the host, so nothing comes back to us and no
 * node sees an event twice (docs/design.md, "Events across nodes").
 */

typedef struct out_event {
    rdp_buf_t buf;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} out_event_t;

/* Our loop: send what the upcall packed. */
static void out_event_send(void *arg)
{
    out_event_t *ev = arg;

    rdp_run_dmn_send(RDP_CTL_NOTIFY, &ev->buf);
    rdp_buf_cleanup(&ev->buf);
    if (ev->cbfunc != NULL) {
        ev->cbfunc(PMIX_SUCCESS, ev->cbdata);
    }
    rdp_free(ev);
}

/* The server's thread: pack now (info is only lent), send from our loop. */
pmix_status_t rdp_run_dmn_notify_event(pmix_status_t code,
                                       const pmix_proc_t *source,
                                       pmix_data_range_t range,
                                       pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    rdp_ctl_event_t m = {
        .code = code, .range = range, .info = info, .ninfo = ninfo};
    out_event_t *ev;
    pmix_status_t status;

    if (range == PMIX_RANGE_RM || source == NULL) {
        /* we are the resource manager and take no action on events */
        return PMIX_OPERATION_SUCCEEDED;
    }
    ev = rdp_calloc(1, sizeof(*ev));
    if (ev == NULL) {
        return PMIX_ERR_NOMEM;
    }
    m.source = *source;
    rdp_buf_init(&ev->buf);
    status = rdp_ctl_event_pack(&ev->buf, &m);
    if (status == PMIX_SUCCESS) {
        ev->cbfunc = cbfunc;
        ev->cbdata = cbdata;
        status     = rdp_loop_post(dm->loop, out_event_send, ev);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&ev->buf);
        rdp_free(ev);
    }
    return status;
}

static void in_event_done(pmix_status_t status, void *cbdata)
{
    rdp_ctl_event_t *m = cbdata;

    if (status != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "cannot deliver event %d: %s", m->code,
                     PMIx_Error_string(status));
    }
    rdp_ctl_event_cleanup(m);
    rdp_free(m);
}

static void notify_here(rdp_ctl_event_t *m)
{
    pmix_status_t status;

    status = PMIx_Notify_event(m->code, &m->source, m->range, m->info, m->ninfo,
                               in_event_done, m);
    if (status != PMIX_SUCCESS) {
        in_event_done(status, m);
    }
}

/* NOTIFY from rdpmix-run: an event raised on another node. */
void rdp_run_dmn_on_notify(const void *payload, size_t len)
{
    rdp_ctl_event_t *m = rdp_calloc(1, sizeof(*m));

    if (m == NULL || rdp_ctl_event_unpack(payload, len, m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed event from rdpmix-run");
        rdp_free(m);
        return;
    }
    if (!dm->server_up) {
        in_event_done(PMIX_SUCCESS, m);
        return;
    }
    notify_here(m);
}

/* A rank of a job that continues (--enable-recovery) ended abnormally:
 * PMIX_ERR_PROC_ABORTED and PMIX_EVENT_PROC_TERMINATED, range custom = the
 * job, source us, affected proc the rank, to this node's clients and,
 * through rdpmix-run, to every other node's. */
void rdp_run_dmn_rank_failed(const pmix_proc_t *rank, int exit_code)
{
    static const pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED,
                                          PMIX_EVENT_PROC_TERMINATED};
    pmix_proc_t job;

    /* a job being ended has nobody left to tell */
    if (!(dm->launch.flags & RDP_CTL_FLAG_CONTINUE) || !dm->server_up
        || dm->terminating) {
        return;
    }
    PMIX_LOAD_PROCID(&job, rank->nspace, PMIX_RANK_WILDCARD);
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        rdp_ctl_event_t *m = rdp_calloc(1, sizeof(*m));
        rdp_buf_t buf;

        if (m == NULL) {
            return;
        }
        PMIX_INFO_CREATE(m->info, 3);
        if (m->info == NULL) {
            rdp_free(m);
            return;
        }
        m->ninfo = 3;
        PMIX_INFO_LOAD(&m->info[0], PMIX_EVENT_AFFECTED_PROC, rank, PMIX_PROC);
        PMIX_INFO_LOAD(&m->info[1], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
        PMIX_INFO_LOAD(&m->info[2], PMIX_EVENT_CUSTOM_RANGE, &job, PMIX_PROC);
        m->code  = codes[i];
        m->range = PMIX_RANGE_CUSTOM;
        PMIX_LOAD_PROCID(&m->source, dm->dvm_nspace, dm->node_id);
        rdp_buf_init(&buf);
        if (rdp_ctl_event_pack(&buf, m) == PMIX_SUCCESS) {
            rdp_run_dmn_send(RDP_CTL_NOTIFY, &buf);
        }
        rdp_buf_cleanup(&buf);
        notify_here(m);
    }
}
