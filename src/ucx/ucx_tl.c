/* ucx_tl.c - the tl.h transport over UCP active messages: context, worker,
 * endpoints, sends, progress (receiving: ucx_recv.c) */
#include "config.h"

#include "ucx/ucx.h"
#include "ucx/ucx_int.h"

#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>

/* tl.h promises that an rdp_iov_t array can be handed to UCP as is */
_Static_assert(sizeof(rdp_iov_t) == sizeof(ucp_dt_iov_t),
               "rdp_iov_t must match ucp_dt_iov_t");
_Static_assert(offsetof(rdp_iov_t, base) == offsetof(ucp_dt_iov_t, buffer),
               "rdp_iov_t.base must match ucp_dt_iov_t.buffer");
_Static_assert(offsetof(rdp_iov_t, len) == offsetof(ucp_dt_iov_t, length),
               "rdp_iov_t.len must match ucp_dt_iov_t.length");

#define DEFAULT_DRAIN_TIMEOUT 5.0

/* Up to this many servers, every server says goodbye to every other: a
 * peer whose wire-up request came here before any of its messages is
 * known to UCP only, and the goodbye is what keeps this server until its
 * reply has gone.  Above it, only peers in contact (our endpoint, or a
 * message or goodbye heard from them): goodbyes to all would make the
 * full mesh of endpoints at shutdown that M servers on one machine avoid
 * at connect (docs/ucx.md: 999,000 endpoints starved a 1000-node job;
 * with all 64 servers of a /bin/true job on 2 CPUs saying goodbye to
 * every other, the job took 1.1-1.5 s instead of 0.5-0.7), and the narrow
 * case above stays open there. */
#define BYE_ALL_MAX           16 /* default of rdp_ucx_params_t.bye_all_max */
#define DEFAULT_UNBOUND_MSGS  4096u
#define DEFAULT_UNBOUND_BYTES (64u * 1024u * 1024u)
/* ucp_worker_progress calls per wakeup before other loop events get a turn */
#define PROGRESS_BUDGET 1024u
/* After the worker did something, poll it again from the loop (between
 * other events) for this long before relying on its event fd alone: UCP
 * over tcp does not signal every step of a multi-fragment or rendezvous
 * transfer, and a wakeup through the fd costs more than a poll. */
#define SPIN_WINDOW 0.0002

/* RDPMIX_UCX_EAGER_MAX, if set, is the eager ceiling (bytes) of every
 * endpoint; *@a max_p is left alone otherwise.  Returns 1 if set. */
static int eager_max_override(uint64_t *max_p)
{
    static int read;
    static int set;
    static uint64_t max;

    if (!read) {
        set = rdp_cfg_env(RDP_CFG_UCX_EAGER_MAX) != NULL
              && rdp_cfg_uint(RDP_CFG_UCX_EAGER_MAX, &max) == PMIX_SUCCESS;
        read = 1;
    }
    if (set) {
        *max_p = max;
    }
    return set;
}

/* RDPMIX_UCX_SPIN_US overrides the spin window (0 turns spinning off). */
static double spin_window(void)
{
    static double window = -1.0;

    if (window < 0) {
        double us;

        (void)rdp_cfg_double(RDP_CFG_UCX_SPIN_US, &us);
        window = us * 1e-6;
    }
    return window;
}
/* RDPMIX_UCX_BUSY_US, in seconds: the busy-poll window (0: off). */
static double busy_window(void)
{
    double us;

    (void)rdp_cfg_double(RDP_CFG_UCX_BUSY_US, &us);
    return us * 1e-6;
}
/* RDPMIX_UCX_REPOLL_US, in seconds: how long a chain of passes whose
 * `progressed` upcall sent polls on at once (progress_pass). */
static double repoll_window(void)
{
    double us;

    (void)rdp_cfg_double(RDP_CFG_UCX_REPOLL_US, &us);
    return us * 1e-6;
}
/* Longest busy slice (seconds): the loop's other events (client sockets,
 * posted jobs, timers) get a turn at least this often. */
#define BUSY_SLICE 0.00005

/* While sends or fetches are in flight and nothing happens, poll at least
 * this often (seconds), so that a missed wakeup cannot stall them. */
#define SLOW_POLL         0.001
#define DROP_LOG_INTERVAL 1.0 /* seconds between "dropped" warnings */

/* A send in flight; owns the UCP header until UCP is done with it. */
typedef struct ucx_sreq {
    ucx_op_t op;
    size_t cap; /* bytes at am */
    size_t am_len;
    uint8_t am[];
} ucx_sreq_t;

/* Header room of a send record: one that UCP completes at once (small
 * eager sends, the usual case) is kept for the next send if it has at
 * most this much (tl->spare_sreq), saving a malloc and a free per send. */
#define SREQ_ROOM 256

/* ---- fork safety ---- */

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* UCX reads UCX_MEM_* once, when libucm is loaded: setting the environment
 * here would be too late for this process (UCX even warns that the
 * variables are unused), and would leak into every client the daemon
 * forks, turning the hooks off in MPI jobs too.  The malloc hooks can
 * still be turned off before the first ucp_init through UCM's options;
 * the mmap hook mode cannot (switching it to "none" at run time makes
 * UCM's mmap recurse into itself), so it is left to the environment the
 * daemon is started with, and a missing setting is reported once. */
static void hooks_off_once(void)
{
    ucm_global_config_t opts = ucm_global_opts;

    if ((getenv("UCX_MEM_MALLOC_HOOKS") == NULL) && opts.enable_malloc_hooks) {
        opts.enable_malloc_hooks = 0;
        ucm_set_global_opts(&opts);
    }
    if ((getenv("UCX_MEM_MMAP_HOOK_MODE") == NULL)
        && (opts.mmap_hook_mode != UCM_MMAP_HOOK_NONE)) {
        rdp_log_info(UCX, "UCX mmap hooks are on; a daemon that forks "
                          "should be started with UCX_MEM_MMAP_HOOK_MODE=none "
                          "and UCX_MEM_MALLOC_HOOKS=no (docs/ucx.md)");
    }
}

/* ---- small helpers ---- */

/* Progress the worker from the loop after @a delay seconds (or sooner if
 * a kick is already due sooner). */
static void kick_after(rdp_ucx_tl_t *tl, double delay)
{
    if (!tl->kick_armed || (delay < tl->kick_delay)) {
        tl->kick_armed = 1;
        tl->kick_delay = delay;
        tl->stats.kicks++;
        rdp_timer_start(tl->kick, delay);
    }
}

void rdp_ucx_kick(rdp_ucx_tl_t *tl)
{
    kick_after(tl, 0);
}

/* Count a dropped message and warn, at most once per DROP_LOG_INTERVAL. */
void rdp_ucx_drop(rdp_ucx_tl_t *tl, uint64_t *counter, uint32_t peer,
                  const char *why)
{
    double now = rdp_time_now();

    (*counter)++;
    if ((tl->drop_log_time != 0)
        && (now - tl->drop_log_time < DROP_LOG_INTERVAL)) {
        tl->drop_suppressed++;
        return;
    }
    if (peer == RDP_TL_PEER_UNKNOWN) {
        rdp_log_warn(UCX,
                     "%s: dropped a message from an unknown sender: %s "
                     "(%" PRIu64 " more dropped since the last report)",
                     tl->name, why, tl->drop_suppressed);
    } else {
        rdp_log_warn(UCX,
                     "%s: dropped a message claiming to come from server "
                     "%u: %s (%" PRIu64 " more dropped since the last report)",
                     tl->name, peer, why, tl->drop_suppressed);
    }
    tl->drop_log_time   = now;
    tl->drop_suppressed = 0;
}

void rdp_ucx_op_free(ucx_op_t *op)
{
    if (op->is_rmsg) {
        ((ucx_rmsg_t *)op)->magic = 0;
    }
    rdp_free(op);
}

/* Finish an operation: unlink it and run (or queue) its callback.  The
 * callback runs at once only from our own progress, never inside a vtable
 * call (tl.h: not inside the call that registered it). */
void rdp_ucx_op_complete(rdp_ucx_tl_t *tl, ucx_op_t *op, pmix_status_t status)
{
    rdp_tl_done_cb_t cb = op->cb;
    void *arg           = op->cb_arg;

    rdp_list_del(&op->link);
    if (cb == NULL) {
        rdp_ucx_op_free(op);
        return;
    }
    if (!tl->in_progress || (tl->in_call > 0)) {
        op->status = status;
        rdp_list_push_back(&tl->done, &op->link);
        rdp_ucx_kick(tl);
        return;
    }
    rdp_ucx_op_free(op);
    cb(arg, status);
}

static void deliver_done(rdp_ucx_tl_t *tl)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(&tl->done)) != NULL) {
        ucx_op_t *op        = rdp_container_of(item, ucx_op_t, link);
        rdp_tl_done_cb_t cb = op->cb;
        void *arg           = op->cb_arg;
        pmix_status_t st    = op->status;

        rdp_ucx_op_free(op);
        if (cb != NULL) {
            cb(arg, st);
        }
    }
}

/* ---- endpoints ---- */

static void close_cb(void *request, ucs_status_t status, void *user_data)
{
    rdp_ucx_tl_t *tl = user_data;

    tl->closing--;
    ucp_request_free(request);
}

/* Close @a ep without waiting for the peer: operations still queued on it
 * complete with an error (their callbacks run from here or from progress). */
static void ep_close_force(rdp_ucx_tl_t *tl, ucp_ep_h ep)
{
    ucp_request_param_t prm = {0};
    ucs_status_ptr_t req;

    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK
                       | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.flags     = UCP_EP_CLOSE_FLAG_FORCE;
    prm.cb.send   = close_cb;
    prm.user_data = tl;
    req           = ucp_ep_close_nbx(ep, &prm);
    if (req == NULL) {
        return;
    }
    if (UCS_PTR_IS_ERR(req)) {
        rdp_log_debug(UCX, "%s: endpoint close: %s", tl->name,
                      rdp_ucx_status_str(UCS_PTR_STATUS(req)));
        return;
    }
    tl->closing++;
}

static void peer_mark_failed(rdp_ucx_tl_t *tl, ucx_peer_t *peer,
                             pmix_status_t status)
{
    if (peer->failed) {
        return;
    }
    peer->failed      = 1;
    peer->fail_status = status;
    tl->stats.peers_failed++;
    tl->report_pending = 1;
    if (peer->ep != NULL) {
        tl->close_pending = 1;
    }
    rdp_ucx_kick(tl);
}

/* UCP calls this from progress when the endpoint to a peer breaks. */
static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ucx_peer_t *peer = arg;
    rdp_ucx_tl_t *tl = peer->tl;

    if (!peer->failed) {
        rdp_log_info(UCX, "%s: server %u is unreachable: %s", tl->name,
                     peer->index, rdp_ucx_status_str(status));
    }
    peer_mark_failed(tl, peer, rdp_ucx_status_peer(status));
    tl->close_pending = 1;
}

/* Whether UCP gave @a ep a lane for zero-copy rendezvous (RDMA, or cma
 * between local processes): 1 yes, 0 no, -1 cannot tell.  UCX 1.13 has no
 * query for an endpoint's lanes; its printout lists them. */
static int ep_has_rndv_lane(ucp_ep_h ep)
{
    char *text  = NULL;
    size_t size = 0;
    FILE *f     = open_memstream(&text, &size);
    int has;

    if (f == NULL) {
        return -1;
    }
    ucp_ep_print_info(ep, f);
    if (fclose(f) != 0) {
        free(text);
        return -1;
    }
    has = rdp_ucx_info_has_rndv_lane(text);
    free(text);
    return has;
}

/* Eager-only up to RDP_UCX_EAGER_MAX where rendezvous is zero-copy (up to
 * RDP_UCX_EAGER_MAX_LOCAL_ZCOPY on an endpoint to a local server made
 * without error handling for it, @a local_zcopy), up to
 * RDP_UCX_EAGER_MAX_NO_ZCOPY where it is not (ucx_int.h says why). */
static void ep_set_eager_max(rdp_ucx_tl_t *tl, ucx_peer_t *peer,
                             int local_zcopy)
{
    int lane = ep_has_rndv_lane(peer->ep);

    tl->stats.zcopy_endpoints += (lane == 1);
    peer->eager_max = RDP_UCX_EAGER_MAX;
    if (eager_max_override(&peer->eager_max)) {
        return;
    }
    if (lane == 0) {
        peer->eager_max = RDP_UCX_EAGER_MAX_NO_ZCOPY;
    } else if ((lane == 1) && local_zcopy) {
        peer->eager_max = RDP_UCX_EAGER_MAX_LOCAL_ZCOPY;
    }
    rdp_log_debug(UCX, "%s: eager ceiling towards server %u: %" PRIu64
                  " bytes", tl->name, peer->index, peer->eager_max);
}

/*
 * Whether the endpoint to @a peer goes without UCP's peer error handling:
 * a server on this machine, whose process we watch (watch_local_peer),
 * needs none to learn of its death, and UCX 1.13 gives a tcp endpoint
 * the lane of zero-copy rendezvous (the payload received straight into
 * the engine's buffer, no copy out of UCP's) only in that mode.  Both
 * ends of a pair must choose alike (UCP refuses to connect endpoints of
 * different error handling), so this depends only on facts both share:
 * that they run on one machine, the number of servers there and its
 * CPUs, and the setting (the same everywhere).
 */
static int ep_without_err_handling(const rdp_ucx_tl_t *tl,
                                   const ucx_peer_t *peer)
{
    return tl->local_zcopy && (peer->local_pid != 0);
}

/*
 * RDPMIX_UCX_LOCAL_ZCOPY for @a nlocal servers on this machine (this one
 * included): 1, 0, or auto (the default).  A rendezvous costs two more
 * trips between the processes than an eager message; where the servers
 * outnumber the CPUs, each trip waits for the peer to get a CPU, and that
 * costs more than the copy it saves (bench/RESULTS.md, helper big6: 4
 * servers on 2 CPUs, 1 MiB allgathers 1.13-1.21 x slower in place; 2 on
 * 2, 512 KiB-2 MiB 0.80-0.87 x).  Since eager messages travel in 256 KiB
 * pieces, such endpoints fetch in place only above the eager ceiling of
 * the others (RDP_UCX_EAGER_MAX_LOCAL_ZCOPY says why).
 */
static int local_zcopy_wanted(const rdp_ucx_tl_t *tl, uint32_t nlocal)
{
    const char *s = rdp_cfg_string(RDP_CFG_UCX_LOCAL_ZCOPY);
    long ncpus;

    if ((s != NULL) && (strcmp(s, "auto") != 0)) {
        if ((strcmp(s, "0") == 0) || (strcmp(s, "1") == 0)) {
            return s[0] == '1';
        }
        rdp_log_warn(UCX,
                     "%s: RDPMIX_UCX_LOCAL_ZCOPY: \"%s\" is not 0, 1 "
                     "or auto: auto",
                     tl->name, s);
    }
    ncpus = sysconf(_SC_NPROCESSORS_ONLN);
    return (ncpus > 0) && ((long)nlocal <= ncpus);
}

/* @a quiet: a failure is logged at debug level only (the shutdown
 * handshake: a peer that is ending may already be gone). */
static pmix_status_t ep_create(rdp_ucx_tl_t *tl, ucx_peer_t *peer, int quiet)
{
    ucp_ep_params_t prm = {0};
    ucs_status_t st;

    prm.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                     | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                     | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    prm.address         = peer->addr;
    prm.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    prm.err_handler.cb  = ep_error_cb;
    prm.err_handler.arg = peer;
    if (ep_without_err_handling(tl, peer)) {
        prm.field_mask &= ~(uint64_t)UCP_EP_PARAM_FIELD_ERR_HANDLER;
        prm.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    }
    st = ucp_ep_create(tl->worker, &prm, &peer->ep);
    if (st == UCS_ERR_UNREACHABLE) {
        /* UCX 1.13's shared memory transports cannot detect a peer's
         * failure, so UCP refuses them in peer mode: with UCX_TLS limited
         * to them, connect without failure detection */
        prm.err_mode = UCP_ERR_HANDLING_MODE_NONE;
        st           = ucp_ep_create(tl->worker, &prm, &peer->ep);
        if (st == UCS_OK) {
            rdp_log_info(UCX,
                         "%s: server %u is reachable only over transports "
                         "that cannot report its failure",
                         tl->name, peer->index);
        }
    }
    if (st != UCS_OK) {
        peer->ep = NULL;
        if (quiet) {
            rdp_log_debug(UCX, "%s: cannot create an endpoint to server %u: %s",
                          tl->name, peer->index, rdp_ucx_status_str(st));
        } else {
            rdp_log_error(UCX, "%s: cannot create an endpoint to server %u: %s",
                          tl->name, peer->index, rdp_ucx_status_str(st));
        }
        return PMIX_ERR_UNREACH;
    }
    ep_set_eager_max(tl, peer, ep_without_err_handling(tl, peer));
    tl->stats.endpoints++;
    return PMIX_SUCCESS;
}

static void close_failed_eps(rdp_ucx_tl_t *tl)
{
    if (!tl->close_pending) {
        return;
    }
    tl->close_pending = 0;
    for (uint32_t i = 0; i < tl->npeers; i++) {
        ucx_peer_t *peer = &tl->peers[i];

        if (peer->failed && (peer->ep != NULL)) {
            ucp_ep_h ep = peer->ep;

            peer->ep = NULL;
            ep_close_force(tl, ep);
        }
    }
}

static void report_failures(rdp_ucx_tl_t *tl)
{
    if (!tl->report_pending || (tl->up == NULL)) {
        return;
    }
    tl->report_pending = 0;
    for (uint32_t i = 0; i < tl->npeers; i++) {
        ucx_peer_t *peer = &tl->peers[i];

        if (tl->up == NULL) {
            tl->report_pending = 1;
            return;
        }
        if (peer->failed && !peer->reported) {
            peer->reported = 1;
            if (tl->up->peer_failed != NULL) {
                tl->up->peer_failed(tl->up_arg, i, peer->fail_status);
            }
        }
    }
}

/* ---- the shutdown handshake (rdp_ucx_tl_destroy; docs/design.md) ---- */

/* A goodbye or acknowledgment went: @a user_data is the peer's bye_sent
 * or ack_sent. */
static void bye_sent_cb(void *request, ucs_status_t status, void *user_data)
{
    (void)status; /* a failed send fails the peer (ep_error_cb) */
    *(int *)user_data = 2;
    ucp_request_free(request);
}

/* Send @a peer our goodbye or our acknowledgment of its own (@a kind),
 * over its endpoint (made now if it has none: UCP then takes the endpoint
 * it made for the peer's connection, if there is one). */
static void bye_send(rdp_ucx_tl_t *tl, ucx_peer_t *peer, uint8_t kind)
{
    int bye                 = (kind == RDP_UCX_BYE);
    uint8_t *hdr            = bye ? peer->bye_msg : peer->ack_msg;
    int *state              = bye ? &peer->bye_sent : &peer->ack_sent;
    ucp_request_param_t prm = {0};
    ucs_status_ptr_t req;

    if (peer->failed) {
        return;
    }
    if ((peer->ep == NULL) && (ep_create(tl, peer, 1) != PMIX_SUCCESS)) {
        peer_mark_failed(tl, peer, PMIX_ERR_UNREACH);
        return;
    }
    rdp_ucx_bye_encode(kind, tl->me, peer->index, hdr);
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
                       | UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags     = UCP_AM_SEND_FLAG_EAGER;
    prm.cb.send   = bye_sent_cb;
    prm.user_data = state;
    *state        = 1;
    req = ucp_am_send_nbx(peer->ep, RDP_UCX_AM_BYE, hdr, RDP_UCX_BYE_LEN, NULL,
                          0, &prm);
    if (UCS_PTR_IS_PTR(req)) {
        return; /* the callback says when it is sent */
    }
    *state = 2;
    if (UCS_PTR_IS_ERR(req)) {
        rdp_log_debug(UCX, "%s: goodbye to server %u: %s", tl->name,
                      peer->index, rdp_ucx_status_str(UCS_PTR_STATUS(req)));
    }
}

/* Acknowledge the goodbyes that came since the last call. */
static void bye_answer(rdp_ucx_tl_t *tl)
{
    if (!tl->ack_due) {
        return;
    }
    tl->ack_due = 0;
    for (uint32_t i = 0; i < tl->npeers; i++) {
        ucx_peer_t *peer = &tl->peers[i];

        if (peer->bye_heard && (peer->ack_sent == 0) && !peer->failed) {
            bye_send(tl, peer, RDP_UCX_BYE_ACK);
            tl->stats.byes_answered++;
        }
    }
}

/* UCP's receive callback of RDP_UCX_AM_BYE: note it, answer later (from
 * run_deferred: no sends from inside UCP's callbacks). */
static ucs_status_t bye_recv_cb(void *arg, const void *header,
                                size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param)
{
    rdp_ucx_tl_t *tl = arg;
    ucx_peer_t *peer;
    uint8_t kind;
    uint32_t src;
    uint32_t dst;

    (void)data;
    (void)param;
    if ((length != 0)
        || (rdp_ucx_bye_decode(header, header_length, &kind, &src, &dst)
            != PMIX_SUCCESS)) {
        rdp_ucx_drop(tl, &tl->stats.malformed, RDP_TL_PEER_UNKNOWN,
                     "malformed goodbye");
        return UCS_OK;
    }
    if (!tl->connected) {
        rdp_log_debug(UCX, "%s: goodbye from server %u before connect",
                      tl->name, src);
        return UCS_OK;
    }
    if ((src >= tl->npeers) || (src == tl->me) || (dst != tl->me)) {
        rdp_ucx_drop(tl, &tl->stats.malformed, src,
                     "goodbye with a wrong sender or receiver index");
        return UCS_OK;
    }
    peer = &tl->peers[src];
    if (kind == RDP_UCX_BYE_ACK) {
        if (!peer->bye_acked) {
            peer->bye_acked = 1;
            tl->stats.byes_acked++;
        }
    } else if (!peer->bye_heard) {
        peer->bye_heard = 1;
        tl->ack_due     = 1;
        rdp_ucx_kick(tl);
    }
    return UCS_OK;
}

/* ---- progress ---- */

static void run_deferred(rdp_ucx_tl_t *tl)
{
    close_failed_eps(tl);
    bye_answer(tl);
    deliver_done(tl);
    report_failures(tl);
    rdp_ucx_deliver_held(tl);
}

/* Inside the busy window (RDPMIX_UCX_BUSY_US) that follows the worker's
 * last activity, and the bound engine waits on peers (no engine bound: no
 * one waits): busy-poll, do not yield. */
static int busy_now(const rdp_ucx_tl_t *tl)
{
    return (tl->busy_window > 0)
           && (rdp_time_now() - tl->last_activity < tl->busy_window)
           && (tl->up != NULL)
           && ((tl->up->waiting == NULL) || tl->up->waiting(tl->up_arg));
}

/* The clock, for the transport's progress (counted: stats.clock_reads).
 * A read is ~30 ns of vDSO on this project's VMs, and a pass that
 * delivered a message read it three times before its `progressed` upcall
 * (bench/RESULTS.md, issue 11, helper iso8). */
static double tl_now(rdp_ucx_tl_t *tl)
{
    tl->stats.clock_reads++;
    return rdp_time_now();
}

/* Still inside the spin window that follows the worker's last activity:
 * progress_all polls again soon instead of sleeping on the event fd.  A
 * pass that found work set last_activity to the time of that round
 * (tl->pass_active): inside the window (if it is not empty) without
 * reading the clock again. */
static int spinning(rdp_ucx_tl_t *tl)
{
    if (tl->pass_active && (spin_window() > 0)) {
        return 1;
    }
    return tl_now(tl) - tl->last_activity < spin_window() || busy_now(tl);
}

/* Whether run_deferred has callbacks or upcalls to make. */
static int deferred_due(const rdp_ucx_tl_t *tl)
{
    return !rdp_list_is_empty(&tl->done) || tl->report_pending || tl->ack_due
           || ((tl->up != NULL) && !rdp_list_is_empty(&tl->unbound));
}

static int ops_in_flight(const rdp_ucx_tl_t *tl)
{
    return !rdp_list_is_empty(&tl->sends) || !rdp_list_is_empty(&tl->fetches);
}

/* Progress until UCP reports nothing more (at most *@a budget calls), then
 * run the deferred work.  Returns 1 if the round did anything: a message
 * shown to the engine (UCP can deliver one and still report no progress),
 * an operation completed, a failure to report. */
static int progress_round(rdp_ucx_tl_t *tl, unsigned *budget)
{
    uint64_t delivered = tl->stats.delivered;
    unsigned n         = 0;
    int worked;

    while ((n < *budget) && (ucp_worker_progress(tl->worker) != 0)) {
        n++;
        if (tl->stats.delivered != delivered) {
            /* let the engine act on it (progressed, at the end of the
             * pass) before polling again: another poll costs ~1 us */
            break;
        }
    }
    *budget -= n;
    worked = (n > 0) || (tl->stats.delivered != delivered);
    if (worked) {
        tl->last_activity = tl_now(tl);
        tl->pass_active   = 1;
        tl->pass_time     = tl->last_activity;
    }
    if (deferred_due(tl)) {
        worked = 1;
    }
    run_deferred(tl);
    return worked;
}

/* Inside the busy window (RDPMIX_UCX_BUSY_US) after the worker's last
 * activity, while the engine waits on peers: poll the worker in a tight
 * loop, without yielding and without a loop pass between polls, until it
 * does something or BUSY_SLICE has passed.  Returns 1 if it did
 * something. */
static int busy_slice(rdp_ucx_tl_t *tl)
{
    uint64_t delivered = tl->stats.delivered;
    double start;
    double now;

    if (!busy_now(tl)) {
        return 0;
    }
    start = rdp_time_now();
    do {
        tl->stats.busy_polls++;
        if ((ucp_worker_progress(tl->worker) != 0)
            || (tl->stats.delivered != delivered)) {
            tl->last_activity = rdp_time_now();
            tl->pass_time     = tl->last_activity;
            return 1;
        }
        now = rdp_time_now();
    } while ((now - start < BUSY_SLICE)
             && (now - tl->last_activity < tl->busy_window));
    return 0;
}

/* Whether the loop watches the worker's event fd.  Not while the
 * transport spins: the worker is not armed then, so UCP's epoll set keeps
 * reporting the last event and the loop saw the fd readable at every pass,
 * each running a second progress pass beside the kick's (an empty poll of
 * the worker, and the loop's own epoll_wait polling the nested sets);
 * bench/RESULTS.md, issue 11, helper iso10.  Two epoll_ctl calls per
 * burst of activity instead. */
static void watch_worker(rdp_ucx_tl_t *tl, int on)
{
    if (on == tl->watched) {
        return;
    }
    if (on) {
        rdp_fdwatch_enable(tl->watch);
    } else {
        rdp_fdwatch_disable(tl->watch);
    }
    tl->watched = on;
}

/* Progress until the worker is idle, then arm its event fd (again if UCP
 * says events arrived meanwhile).  A bounded number of rounds, so that a
 * flood of messages cannot starve the rest of the loop. */
static int progress_all(rdp_ucx_tl_t *tl)
{
    unsigned budget = PROGRESS_BUDGET;
    int worked      = 0;
    int kick        = 0; /* spinning: poll again after the upcall */
    int spin;
    ucs_status_t st;

    if (tl->in_progress) {
        return 0;
    }
    tl->in_progress    = 1;
    tl->in_pass        = 1;
    tl->pass_delivered = 0;
    tl->pass_active    = 0;
    tl->pass_time      = 0;
    for (;;) {
        worked |= progress_round(tl, &budget);
        if (!worked && (budget > 0) && busy_slice(tl)) {
            /* the message or completion it found: through the round
             * (deferred work, then `progressed`) without a loop pass */
            budget--;
            worked = 1;
            if (tl->pass_delivered) {
                /* a message for the engine: its completions (progressed,
                 * below) before the next poll, a system call over tcp */
                run_deferred(tl);
                break;
            }
            continue;
        }
        if (budget == 0) {
            rdp_ucx_kick(tl); /* more to do: come back after other events */
            break;
        }
        budget--;
        if (spinning(tl)) {
            /* polled again right away (below): arming, a read of UCP's
             * event fd and more, would only be undone by the next poll */
            watch_worker(tl, 0);
            break;
        }
        watch_worker(tl, 1); /* before arming: the fd wakes the loop */
        st = ucp_worker_arm(tl->worker);
        if (st == UCS_OK) {
            break;
        }
        if (st != UCS_ERR_BUSY) {
            rdp_log_error(UCX, "%s: cannot arm the worker: %s", tl->name,
                          rdp_ucx_status_str(st));
            rdp_ucx_kick(tl);
            break;
        }
    }
    /* a message marked pass_end was delivered: `progressed` must follow */
    worked |= tl->pass_delivered;
    tl->in_pass     = 0;
    tl->in_progress = 0;

    spin            = spinning(tl);
    tl->pass_active = 0; /* later calls (and the upcall) read the clock */
    if (spin) {
        /* Poll again after the loop's other events (what this pass set off,
         * such as the engine's deferred completions, runs there first).
         * Yield between idle polls: on an idle core this is a spin (a poll
         * is cheaper than an fd wakeup), but with more servers than cores
         * the peer we wait for gets the CPU it needs to answer.  Not after
         * a pass that did something: the follow-up would wait for every
         * other runnable process's turn. */
        if (!worked && !busy_now(tl)) {
            sched_yield();
        }
        kick = 1;
    } else if (!tl->watched) {
        /* the spin ended after the loop above stopped watching: the
         * next pass arms the worker and watches its fd again */
        kick = 1;
    } else if (ops_in_flight(tl) || (tl->closing > 0)) {
        kick_after(tl, SLOW_POLL);
    }
    /* last: what runs from here may start new sends or unbind */
    if (worked && (tl->up != NULL) && (tl->up->progressed != NULL)) {
        int *gone = tl->gone;

        /* before the kick: a collective it starts sends without waiting
         * for the kick's timer insert (~300 instructions of libevent; the
         * send kicks anyway).  tl may be destroyed in it (*gone). */
        tl->progressed_time = tl->pass_time; /* tl_pass_time */
        tl->up->progressed(tl->up_arg);
        if ((gone != NULL) && *gone) {
            return 0;
        }
        tl->progressed_time = 0;
    }
    return kick;
}

/* progress_all, and again at once while the engine sent from its
 * `progressed` upcall (a collective that finished started the next one):
 * the peer's answer is often there already (on one machine its send
 * carried it into our socket), and a loop pass before polling again
 * would sit on the collective's critical path (bench/RESULTS.md, issue 11,
 * helpers iso3 and iso10).  Once, and more times while a chain of
 * collectives goes on, for RDPMIX_UCX_REPOLL_US (from the first round
 * that found work, by the rounds' own clock reads; default 50 us, the
 * busy slice's bound), so that the loop's other events still get a turn;
 * a pass that sent nothing ends it.  The kick that polls again
 * after the loop's events is armed once, after the last pass.  tl may be
 * destroyed from inside the upcall (tl->gone). */
static void progress_pass(rdp_ucx_tl_t *tl)
{
    uint64_t chain = 0;
    double start   = 0;
    int gone       = 0;
    int kick;

    tl->gone = &gone;
    for (;;) {
        uint64_t sent = tl->stats.sent;

        kick = progress_all(tl);
        if (gone) {
            return;
        }
        if (start == 0) {
            start = tl->last_activity;
        }
        if ((tl->stats.sent == sent) || (tl->up == NULL)
            || ((chain > 0)
                && (tl->last_activity - start >= tl->repoll_window))) {
            break;
        }
        tl->stats.repolls++;
        chain++;
    }
    tl->gone = NULL;
    if (chain > tl->stats.repolls_max) {
        tl->stats.repolls_max = chain;
    }
    if (kick) {
        rdp_ucx_kick(tl);
    }
}

static void on_worker_event(int fd, int events, void *arg)
{
    rdp_ucx_tl_t *tl = arg;

    tl->stats.worker_events++;
    progress_pass(tl);
}

static void on_kick(void *arg)
{
    rdp_ucx_tl_t *tl = arg;

    tl->kick_armed = 0;
    progress_pass(tl);
}

/* Wait up to @a seconds for worker events, for the draining loops of
 * unbind and destroy (the only places that wait). */
static void wait_event(rdp_ucx_tl_t *tl, double seconds)
{
    struct pollfd pfd = {.fd = tl->efd, .events = POLLIN};

    if (ucp_worker_arm(tl->worker) == UCS_OK) {
        (void)poll(&pfd, 1, (int)(seconds * 1000));
    }
}

static void force_close_busy_peers(rdp_ucx_tl_t *tl)
{
    rdp_list_t *lists[2] = {&tl->sends, &tl->fetches};

    for (int l = 0; l < 2; l++) {
        for (rdp_list_t *it = lists[l]->next; it != lists[l];) {
            ucx_op_t *op     = rdp_container_of(it, ucx_op_t, link);
            ucx_peer_t *peer = &tl->peers[op->peer];

            it = it->next; /* closing may complete (unlink) op */
            if (peer->ep != NULL) {
                ucp_ep_h ep = peer->ep;

                rdp_log_warn(UCX,
                             "%s: operations to server %u did not finish "
                             "in %.1fs; closing its endpoint",
                             tl->name, peer->index, tl->drain_timeout);
                peer_mark_failed(tl, peer, PMIX_ERR_TIMEOUT);
                peer->ep = NULL;
                ep_close_force(tl, ep);
                it = lists[l]->next; /* the list may have changed */
            }
        }
    }
}

/* Progress until no send or fetch is in flight, so that no buffer of the
 * engine is touched afterwards.  Bounded by drain_timeout; then the
 * endpoints still busy are closed by force. */
static void drain(rdp_ucx_tl_t *tl)
{
    double deadline;

    if (!ops_in_flight(tl)) {
        return;
    }
    if (tl->in_progress) {
        rdp_log_error(UCX,
                      "%s: unbind/destroy from inside a transport callback "
                      "cannot wait for the operations in flight",
                      tl->name);
        return;
    }
    tl->in_progress = 1;
    deadline        = rdp_time_now() + tl->drain_timeout;
    while (ops_in_flight(tl) && (rdp_time_now() < deadline)) {
        if (ucp_worker_progress(tl->worker) == 0) {
            wait_event(tl, 0.01);
        }
    }
    if (ops_in_flight(tl)) {
        force_close_busy_peers(tl);
        deadline = rdp_time_now() + 1.0;
        while (ops_in_flight(tl) && (rdp_time_now() < deadline)) {
            if (ucp_worker_progress(tl->worker) == 0) {
                wait_event(tl, 0.01);
            }
        }
        if (ops_in_flight(tl)) {
            rdp_log_error(UCX, "%s: %zu operations still in flight", tl->name,
                          rdp_list_length(&tl->sends)
                              + rdp_list_length(&tl->fetches));
        }
    }
    tl->in_progress = 0;
    rdp_ucx_kick(tl); /* the worker needs arming again */
}

/* ---- the vtable ---- */

static pmix_status_t tl_bind(void *ctx, const rdp_tl_upcalls_t *up, void *arg)
{
    rdp_ucx_tl_t *tl = ctx;

    if ((tl == NULL) || (up == NULL) || (up->recv == NULL)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (tl->up != NULL) {
        rdp_log_error(UCX, "%s: an engine is already bound", tl->name);
        return PMIX_ERR_EXISTS;
    }
    tl->up     = up;
    tl->up_arg = arg;
    for (uint32_t i = 0; i < tl->npeers; i++) {
        tl->peers[i].reported = 0;
        if (tl->peers[i].failed) {
            tl->report_pending = 1;
        }
    }
    if (tl->report_pending || !rdp_list_is_empty(&tl->unbound)) {
        rdp_ucx_kick(tl); /* upcalls run later, never inside bind */
    }
    return PMIX_SUCCESS;
}

static void tl_unbind(void *ctx)
{
    rdp_ucx_tl_t *tl     = ctx;
    rdp_list_t *lists[2] = {&tl->sends, &tl->fetches};
    rdp_list_t *item;

    if ((tl == NULL) || (tl->up == NULL)) {
        return;
    }
    tl->up     = NULL;
    tl->up_arg = NULL;
    for (int l = 0; l < 2; l++) {
        for (rdp_list_t *it = lists[l]->next; it != lists[l]; it = it->next) {
            rdp_container_of(it, ucx_op_t, link)->cb = NULL;
        }
    }
    while ((item = rdp_list_pop_front(&tl->done)) != NULL) {
        rdp_ucx_op_free(rdp_container_of(item, ucx_op_t, link));
    }
    drain(tl);
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    ucx_sreq_t *sreq = user_data;
    rdp_ucx_tl_t *tl = sreq->op.tl;
    pmix_status_t st = PMIX_SUCCESS;

    ucp_request_free(request);
    if (status != UCS_OK) {
        st = tl->peers[sreq->op.peer].failed ? PMIX_ERR_UNREACH
                                             : rdp_ucx_status(status);
        rdp_log_debug(UCX, "%s: send to server %u failed: %s", tl->name,
                      sreq->op.peer, rdp_ucx_status_str(status));
    }
    rdp_ucx_op_complete(tl, &sreq->op, st);
}

static pmix_status_t check_send(rdp_ucx_tl_t *tl, uint32_t peer,
                                const void *hdr, size_t hdr_len,
                                const rdp_iov_t *iov, size_t iovcnt,
                                uint64_t *total_p)
{
    uint64_t total = 0;

    if (!tl->connected) {
        rdp_log_error(UCX, "%s: send before connect", tl->name);
        return PMIX_ERR_INIT;
    }
    if ((peer >= tl->npeers) || (peer == tl->me)) {
        rdp_log_error(UCX, "%s: send to server %u: not a peer", tl->name, peer);
        return PMIX_ERR_BAD_PARAM;
    }
    if (((hdr == NULL) && (hdr_len > 0)) || (hdr_len > RDP_UCX_MAX_EHDR)
        || (hdr_len + RDP_UCX_OVERHEAD > tl->max_am_header)) {
        rdp_log_error(UCX, "%s: send with a bad header (%zu bytes)", tl->name,
                      hdr_len);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((iov == NULL) && (iovcnt > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < iovcnt; i++) {
        if (((iov[i].base == NULL) && (iov[i].len > 0))
            || (iov[i].len > UINT64_MAX - total)) {
            rdp_log_error(UCX, "%s: send with a bad payload", tl->name);
            return PMIX_ERR_BAD_PARAM;
        }
        total += iov[i].len;
    }
    *total_p = total;
    return PMIX_SUCCESS;
}

/* How many of the seals given with a send the message carries: at most
 * RDP_UCX_MAX_SEALS, and no more than UCP's header has room for (the
 * runs of the others go as ordinary payload). */
static size_t seals_to_send(const rdp_ucx_tl_t *tl, size_t hdr_len,
                            const rdp_iov_t *iov,
                            const rdp_tl_seal_t *const *seals, size_t iovcnt)
{
    size_t n = 0;

    if (seals == NULL) {
        return 0;
    }
    for (size_t i = 0; (i < iovcnt) && (n < RDP_UCX_MAX_SEALS); i++) {
        n += (seals[i] != NULL) && (iov[i].len > 0);
    }
    while ((n > 0)
           && (RDP_UCX_OVERHEAD + hdr_len + rdp_ucx_seals_len(n)
               > tl->max_am_header)) {
        n--;
    }
    return n;
}

/* Write the seal table (@a nseals entries) at @a table and gather the
 * payload pieces it does not cover into @a plain; returns their count. */
static size_t seal_table_fill(rdp_ucx_tl_t *tl, uint8_t *table,
                              size_t nseals, const rdp_iov_t *iov,
                              const rdp_tl_seal_t *const *seals, size_t iovcnt,
                              rdp_iov_t *plain)
{
    uint64_t off  = 0;
    size_t used   = 0;
    size_t nplain = 0;

    for (size_t i = 0; i < iovcnt; i++) {
        if ((used < nseals) && (seals[i] != NULL) && (iov[i].len > 0)) {
            rdp_ucx_seals_put(table, nseals, used++, off, iov[i].len,
                              seals[i]);
            tl->stats.sealed_sent_bytes += iov[i].len;
        } else {
            plain[nplain++] = iov[i];
            tl->stats.mac_sent_bytes += iov[i].len;
        }
        off += iov[i].len;
    }
    return nplain;
}

/* A record for a send with @a am_len header bytes: the kept one if it has
 * the room, else a new one (NULL when out of memory). */
static ucx_sreq_t *sreq_get(rdp_ucx_tl_t *tl, size_t am_len)
{
    ucx_sreq_t *sreq = tl->spare_sreq;
    size_t cap       = (am_len < SREQ_ROOM) ? SREQ_ROOM : am_len;

    if ((sreq != NULL) && (sreq->cap >= am_len)) {
        tl->spare_sreq = NULL;
        tl->stats.sreqs_reused++;
        return sreq;
    }
    sreq = rdp_malloc(sizeof(*sreq) + cap);
    if (sreq != NULL) {
        sreq->cap = cap;
    }
    return sreq;
}

/* Done with @a sreq (on no list, unknown to UCP): keep it or free it. */
static void sreq_put(rdp_ucx_tl_t *tl, ucx_sreq_t *sreq)
{
    if ((tl->spare_sreq == NULL) && (sreq->cap <= SREQ_ROOM)) {
        tl->spare_sreq = sreq;
        return;
    }
    rdp_free(sreq);
}

/* The UCP header of a message: framing, the engine's header, the seal
 * table and the MACs.  @a eager: the message goes eager-only, so it needs
 * no mac_hdr. */
static ucx_sreq_t *sreq_create(rdp_ucx_tl_t *tl, uint32_t peer, const void *hdr,
                               size_t hdr_len, const rdp_iov_t *iov,
                               const rdp_tl_seal_t *const *seals,
                               size_t iovcnt, uint64_t total, int eager,
                               int open)
{
    size_t nseals =
        open ? 0 : seals_to_send(tl, hdr_len, iov, seals, iovcnt);
    size_t slen    = (nseals > 0) ? rdp_ucx_seals_len(nseals) : 0;
    size_t pre_len = RDP_UCX_FIXED_LEN + hdr_len + slen;
    rdp_iov_t few[16]; /* the pieces left to mac_msg, usually few */
    rdp_iov_t *plain = NULL;
    size_t nplain    = iovcnt;
    rdp_ucx_wire_t w = {.flags     = open ? RDP_UCX_FLAG_OPEN : 0,
                        .ehdr_len  = (uint16_t)hdr_len,
                        .seals_len = (uint32_t)slen,
                        .src       = tl->me,
                        .dst       = peer,
                        .len       = total};
    ucx_sreq_t *sreq;

    /* a skipped number (allocation failing below) is harmless; a reused
     * one never happens */
    if (rdp_ucx_auth_nonce(&tl->auth, &tl->peers[peer].tx_seq, &w.salt, &w.seq)
        != PMIX_SUCCESS) {
        return NULL;
    }
    sreq = sreq_get(tl, pre_len + 2 * RDP_UCX_MAC_LEN);
    if (sreq == NULL) {
        return NULL;
    }
    if (nseals > 0) {
        plain = (iovcnt <= 16) ? few : rdp_malloc(iovcnt * sizeof(*plain));
        if (plain == NULL) {
            sreq_put(tl, sreq);
            return NULL;
        }
    }
    memset(&sreq->op, 0, sizeof(sreq->op));
    rdp_list_init(&sreq->op.link);
    sreq->op.tl   = tl;
    sreq->op.peer = peer;
    sreq->am_len  = pre_len + 2 * RDP_UCX_MAC_LEN;
    rdp_ucx_wire_encode(&w, sreq->am);
    if (hdr_len > 0) {
        memcpy(sreq->am + RDP_UCX_FIXED_LEN, hdr, hdr_len);
    }
    if (nseals > 0) {
        nplain = seal_table_fill(tl, sreq->am + RDP_UCX_FIXED_LEN + hdr_len,
                                 nseals, iov, seals, iovcnt, plain);
    } else if (open) {
        nplain = 0; /* mac_msg covers the prefix alone */
        tl->stats.open_sent_bytes += total;
    } else {
        tl->stats.mac_sent_bytes += total;
    }
    /* mac_hdr only serves rendezvous: a message sent eagerly leaves it 0 */
    memset(sreq->am + pre_len, 0, RDP_UCX_MAC_LEN);
    if ((!eager
         && (rdp_ucx_auth_hdr(&tl->auth, sreq->am, pre_len, sreq->am + pre_len)
             != PMIX_SUCCESS))
        || (rdp_ucx_auth_msg(&tl->auth, sreq->am, pre_len,
                             (plain != NULL) ? plain : iov, nplain,
                             sreq->am + pre_len + RDP_UCX_MAC_LEN)
            != PMIX_SUCCESS)) {
        sreq_put(tl, sreq);
        sreq = NULL;
    }
    if (plain != few) {
        rdp_free(plain);
    }
    return sreq;
}

static pmix_status_t send_any(rdp_ucx_tl_t *tl, uint32_t peer, const void *hdr,
                              size_t hdr_len, const rdp_iov_t *iov,
                              const rdp_tl_seal_t *const *seals, size_t iovcnt,
                              rdp_tl_done_cb_t cb, void *cb_arg, int open)
{
    ucp_request_param_t prm = {0};
    void *buffer            = NULL;
    size_t count            = 0;
    ucx_peer_t *p;
    ucx_sreq_t *sreq;
    ucs_status_ptr_t req;
    pmix_status_t status;
    uint64_t total;
    int eager;

    RDP_ASSERT_ON_LOOP(tl->loop);
    status = check_send(tl, peer, hdr, hdr_len, iov, iovcnt, &total);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    p = &tl->peers[peer];
    if (p->failed) {
        return PMIX_ERR_UNREACH;
    }
    tl->in_call++;
    if ((p->ep == NULL) && (ep_create(tl, p, 0) != PMIX_SUCCESS)) {
        peer_mark_failed(tl, p, PMIX_ERR_UNREACH);
        status = PMIX_ERR_UNREACH;
        goto out;
    }
    eager = (total <= p->eager_max);
    sreq  = sreq_create(tl, peer, hdr, hdr_len, iov, seals, iovcnt, total,
                        eager, open);
    if (sreq == NULL) {
        status = PMIX_ERR_NOMEM;
        goto out;
    }
    sreq->op.cb     = cb;
    sreq->op.cb_arg = cb_arg;

    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
                       | UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS;
    prm.cb.send   = send_cb;
    prm.user_data = sreq;
    prm.flags     = eager ? UCP_AM_SEND_FLAG_EAGER : 0;
    if (iovcnt > 1) {
        /* layout-compatible (static assertions above); UCP only reads */
        buffer       = (void *)iov;
        count        = iovcnt;
        prm.datatype = ucp_dt_make_iov();
    } else {
        buffer       = (iovcnt == 1) ? (void *)iov[0].base : NULL;
        count        = (iovcnt == 1) ? iov[0].len : 0;
        prm.datatype = ucp_dt_make_contig(1);
    }
    req = ucp_am_send_nbx(p->ep, RDP_UCX_AM_ID, sreq->am, sreq->am_len, buffer,
                          count, &prm);
    if (req == NULL) {
        sreq_put(tl, sreq);
        tl->stats.sent++;
        status = PMIX_OPERATION_SUCCEEDED;
    } else if (UCS_PTR_IS_ERR(req)) {
        rdp_log_debug(UCX, "%s: send to server %u: %s", tl->name, peer,
                      rdp_ucx_status_str(UCS_PTR_STATUS(req)));
        sreq_put(tl, sreq);
        status =
            p->failed ? PMIX_ERR_UNREACH : rdp_ucx_status(UCS_PTR_STATUS(req));
    } else {
        rdp_list_push_back(&tl->sends, &sreq->op.link);
        tl->stats.sent++;
        status = PMIX_SUCCESS;
    }
    tl->last_activity = rdp_time_now();
    rdp_ucx_kick(tl); /* UCP wants progress after new operations */

out:
    tl->in_call--;
    return status;
}

static pmix_status_t tl_send_sealed(void *ctx, uint32_t peer, const void *hdr,
                                    size_t hdr_len, const rdp_iov_t *iov,
                                    const rdp_tl_seal_t *const *seals,
                                    size_t iovcnt, rdp_tl_done_cb_t cb,
                                    void *cb_arg)
{
    return send_any(ctx, peer, hdr, hdr_len, iov, seals, iovcnt, cb, cb_arg,
                    0);
}

static pmix_status_t tl_send(void *ctx, uint32_t peer, const void *hdr,
                             size_t hdr_len, const rdp_iov_t *iov,
                             size_t iovcnt, rdp_tl_done_cb_t cb, void *cb_arg)
{
    return send_any(ctx, peer, hdr, hdr_len, iov, NULL, iovcnt, cb, cb_arg, 0);
}

static pmix_status_t tl_send_open(void *ctx, uint32_t peer, const void *hdr,
                                  size_t hdr_len, const rdp_iov_t *iov,
                                  size_t iovcnt, rdp_tl_done_cb_t cb,
                                  void *cb_arg)
{
    return send_any(ctx, peer, hdr, hdr_len, iov, NULL, iovcnt, cb, cb_arg, 1);
}

static pmix_status_t tl_seal(void *ctx, const void *data, size_t len,
                             rdp_tl_seal_t *seal_p)
{
    rdp_ucx_tl_t *tl = ctx;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(tl->loop);
    if (!tl->connected) {
        /* the session key is final only from connect on */
        return PMIX_ERR_INIT;
    }
    if ((data == NULL) && (len > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = rdp_ucx_auth_seal(&tl->auth, tl->me, &tl->seal_ctr, data, len,
                               seal_p);
    if (status == PMIX_SUCCESS) {
        tl->stats.seals_made++;
    }
    return status;
}

/* tl.h pass_time: the time of the pass whose `progressed` upcall runs,
 * so that a collective it starts reads no clock for its deadline. */
static double tl_pass_time(void *ctx)
{
    const rdp_ucx_tl_t *tl = ctx;

    return tl->progressed_time;
}

static const rdp_tl_ops_t ucx_tl_ops = {
    .name        = "ucx",
    .bind        = tl_bind,
    .unbind      = tl_unbind,
    .send        = tl_send,
    .fetch       = rdp_ucx_tl_fetch,
    .release     = rdp_ucx_tl_release,
    .seal        = tl_seal,
    .send_sealed = tl_send_sealed,
    .send_open   = tl_send_open,
    .pass_time   = tl_pass_time,
};

const rdp_tl_ops_t *rdp_ucx_tl_ops(void)
{
    return &ucx_tl_ops;
}

void *rdp_ucx_tl_ctx(rdp_ucx_tl_t *tl)
{
    return tl;
}

void rdp_ucx_tl_get_stats(const rdp_ucx_tl_t *tl, rdp_ucx_tl_stats_t *stats_p)
{
    *stats_p = tl->stats;
}

/* ---- lifecycle ---- */

/* Sets one setting of UCX's tcp transport in @a cfg unless the user set
 * it (@a env): UCP hands keys it does not know to every transport's table
 * by field name (@a field), and warns when none has it; both fields set
 * here are tcp's alone (ucx_info -c). */
static void tcp_default(rdp_ucx_tl_t *tl, ucp_config_t *cfg, const char *env,
                        const char *field, const char *value)
{
    ucs_status_t st;

    if (getenv(env) != NULL) {
        return;
    }
    st = ucp_config_modify(cfg, field, value);
    if (st != UCS_OK) {
        rdp_log_warn(UCX, "%s: cannot set %s=%s: %s", tl->name, env, value,
                     rdp_ucx_status_str(st));
    }
}

/* UCX 1.13's tcp transport handles a batch of up to UCX_TCP_MAX_POLL
 * socket events per progress call; when one event fails a peer, UCP closes
 * that peer's other tcp endpoints, and an event of theirs still in the
 * same batch trips an assertion that aborts the process
 * (tcp_iface.c:307, "conn_state != CLOSED"; seen in 7% of
 * test_ucx_coll.t runs under load).  One event per call cannot hold a
 * stale one; the loop progresses until idle anyway.
 *
 * UCX_TCP_RX_SEG_SIZE (64 KiB by default) is the largest piece an eager
 * message travels in over tcp: a 1 MiB block is 17 pieces, each its own
 * sendmsg, socket event, recvfrom and pass of UCP's reassembly.  In 256
 * KiB pieces a server makes a third of those calls (4 servers, 1 MiB
 * allgathers: 1757 sendmsg, 2939 epoll_wait in 105 of them, against 5465
 * and 9455), and 4 servers' 1 MiB allgathers on 2 CPUs take 0.87-0.91 x
 * the time (bench/RESULTS.md, helper big7; 128 KiB 0.97, 512 KiB 0.95,
 * 16 KiB 1.22).  Every server must use the same value: a sender sizes its
 * pieces by its own receive buffers.  A user's own settings win. */
static ucs_status_t context_init(rdp_ucx_tl_t *tl, const ucp_params_t *cprm)
{
    ucp_config_t *cfg = NULL;
    ucs_status_t st;

    st = ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK) {
        return st;
    }
    tcp_default(tl, cfg, "UCX_TCP_MAX_POLL", "MAX_POLL", "1");
    tcp_default(tl, cfg, "UCX_TCP_RX_SEG_SIZE", "RX_SEG_SIZE",
                RDP_UCX_TCP_RX_SEG_SIZE);
    st = ucp_init(cprm, cfg, &tl->context);
    ucp_config_release(cfg);
    return st;
}

static pmix_status_t open_worker(rdp_ucx_tl_t *tl)
{
    ucp_params_t cprm         = {0};
    ucp_worker_params_t wprm  = {0};
    ucp_worker_attr_t wattr   = {0};
    ucp_am_handler_param_t am = {0};
    ucs_status_t st;

    cprm.field_mask = UCP_PARAM_FIELD_FEATURES;
    cprm.features   = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    st              = context_init(tl, &cprm);
    if (st != UCS_OK) {
        rdp_log_error(UCX, "%s: ucp_init failed: %s", tl->name,
                      rdp_ucx_status_str(st));
        return PMIX_ERR_INIT;
    }
    wprm.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wprm.thread_mode = UCS_THREAD_MODE_SINGLE;
    st               = ucp_worker_create(tl->context, &wprm, &tl->worker);
    if (st != UCS_OK) {
        rdp_log_error(UCX, "%s: cannot create a worker: %s", tl->name,
                      rdp_ucx_status_str(st));
        goto err_cleanup_context;
    }
    wattr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
    st               = ucp_worker_query(tl->worker, &wattr);
    if (st != UCS_OK) {
        goto err_worker;
    }
    tl->max_am_header = wattr.max_am_header;
    if (tl->max_am_header < RDP_UCX_OVERHEAD) {
        rdp_log_error(UCX, "%s: UCX allows only %zu header bytes", tl->name,
                      tl->max_am_header);
        goto err_destroy_worker;
    }
    st = ucp_worker_get_address(tl->worker, &tl->addr, &tl->addr_len);
    if (st != UCS_OK) {
        goto err_worker;
    }
    st = ucp_worker_get_efd(tl->worker, &tl->efd);
    if (st != UCS_OK) {
        goto err_release_address;
    }
    am.field_mask =
        UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS
        | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    am.id    = RDP_UCX_AM_ID;
    /* no UCP_AM_FLAG_PERSISTENT_DATA: UCP would copy every one-fragment
     * tcp message into a pool it grows by 8 MiB (touched at once, 3-4 ms
     * at the first fence with data); borrowed data is copied by the
     * engine only when it keeps it (docs/ucx.md) */
    am.flags = UCP_AM_FLAG_WHOLE_MSG;
    am.cb    = rdp_ucx_am_recv_cb;
    am.arg   = tl;
    st       = ucp_worker_set_am_recv_handler(tl->worker, &am);
    if (st != UCS_OK) {
        goto err_release_address;
    }
    am.id = RDP_UCX_AM_BYE;
    am.cb = bye_recv_cb;
    st    = ucp_worker_set_am_recv_handler(tl->worker, &am);
    if (st != UCS_OK) {
        goto err_release_address;
    }
    return PMIX_SUCCESS;

err_release_address:
    ucp_worker_release_address(tl->worker, tl->addr);
err_worker:
    rdp_log_error(UCX, "%s: cannot set up the worker: %s", tl->name,
                  rdp_ucx_status_str(st));
err_destroy_worker:
    ucp_worker_destroy(tl->worker);
err_cleanup_context:
    ucp_cleanup(tl->context);
    return PMIX_ERR_INIT;
}

/* The address handed out for the bootstrap: the worker address and who
 * runs it (ucx_int.h).  Without /proc the identity stays zero and peers
 * never take this server for a local one. */
static pmix_status_t make_envelope(rdp_ucx_tl_t *tl)
{
    if (rdp_ucx_envelope_self(&tl->self) != PMIX_SUCCESS) {
        rdp_log_debug(UCX, "%s: no machine identity in /proc", tl->name);
    }
    tl->self.ucx      = tl->addr;
    tl->self.ucx_len  = tl->addr_len;
    tl->envelope_len  = RDP_UCX_ENV_HDR + tl->addr_len;
    tl->envelope      = rdp_malloc(tl->envelope_len);
    if (tl->envelope == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_ucx_envelope_encode(&tl->self, tl->envelope);
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ucx_tl_create(rdp_loop_t *loop, const rdp_ucx_params_t *p,
                                rdp_ucx_tl_t **tl_p)
{
    rdp_ucx_tl_t *tl;
    pmix_status_t status;

    if ((loop == NULL) || (p == NULL) || (tl_p == NULL)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if ((p->key == NULL) || (p->key_len != RDP_UCX_KEY_LEN)) {
        rdp_log_error(UCX, "ucx transport: the session key must be %d bytes",
                      RDP_UCX_KEY_LEN);
        return PMIX_ERR_BAD_PARAM;
    }
    tl = rdp_calloc(1, sizeof(*tl));
    if (tl == NULL) {
        return PMIX_ERR_NOMEM;
    }
    tl->loop = loop;
    snprintf(tl->name, sizeof(tl->name), "%s",
             (p->name != NULL) ? p->name : "ucx");
    tl->lazy = (p->lazy_connect != 0);
    tl->drain_timeout =
        (p->drain_timeout > 0) ? p->drain_timeout : DEFAULT_DRAIN_TIMEOUT;
    tl->bye_all_max = (p->bye_all_max > 0) ? p->bye_all_max : BYE_ALL_MAX;
    tl->busy_window = busy_window();
    tl->repoll_window = repoll_window();
    tl->unbound_max_msgs =
        (p->unbound_max_msgs > 0) ? p->unbound_max_msgs : DEFAULT_UNBOUND_MSGS;
    tl->unbound_max_bytes = (p->unbound_max_bytes > 0) ? p->unbound_max_bytes
                                                       : DEFAULT_UNBOUND_BYTES;
    rdp_list_init(&tl->sends);
    rdp_list_init(&tl->fetches);
    rdp_list_init(&tl->kept);
    rdp_list_init(&tl->done);
    rdp_list_init(&tl->unbound);

    status = rdp_ucx_auth_init(&tl->auth, p->key, p->key_len);
    if (status != PMIX_SUCCESS) {
        goto err_free_tl;
    }
    (void)pthread_once(&hooks_once, hooks_off_once);
    status = open_worker(tl);
    if (status != PMIX_SUCCESS) {
        goto err_cleanup_auth;
    }
    status = make_envelope(tl);
    if (status != PMIX_SUCCESS) {
        goto err_close_worker;
    }
    status = rdp_timer_create(loop, on_kick, tl, &tl->kick);
    if (status != PMIX_SUCCESS) {
        goto err_close_worker;
    }
    status = rdp_fdwatch_create(loop, tl->efd, RDP_FD_READ, on_worker_event, tl,
                                &tl->watch);
    if (status != PMIX_SUCCESS) {
        goto err_destroy_timer;
    }
    rdp_fdwatch_enable(tl->watch);
    tl->watched = 1;
    rdp_ucx_kick(tl); /* first progress + arm on the loop */
    rdp_log_debug(UCX, "%s: worker ready (address %zu bytes, key %s)", tl->name,
                  tl->addr_len, tl->auth.fp);
    *tl_p = tl;
    return PMIX_SUCCESS;

err_destroy_timer:
    rdp_timer_destroy(tl->kick);
err_close_worker:
    rdp_free(tl->envelope);
    ucp_worker_release_address(tl->worker, tl->addr);
    ucp_worker_destroy(tl->worker);
    ucp_cleanup(tl->context);
err_cleanup_auth:
    rdp_ucx_auth_cleanup(&tl->auth);
err_free_tl:
    rdp_free(tl);
    return status;
}

pmix_status_t rdp_ucx_tl_address(rdp_ucx_tl_t *tl, const void **bytes_p,
                                 size_t *len_p)
{
    if ((tl == NULL) || (bytes_p == NULL) || (len_p == NULL)) {
        return PMIX_ERR_BAD_PARAM;
    }
    *bytes_p = tl->envelope;
    *len_p   = tl->envelope_len;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ucx_tl_set_key(rdp_ucx_tl_t *tl, const uint8_t *key,
                                 size_t key_len)
{
    rdp_ucx_auth_t auth;
    pmix_status_t status;

    if ((tl == NULL) || (key == NULL) || (key_len != RDP_UCX_KEY_LEN)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (tl->connected) {
        rdp_log_error(UCX, "%s: the session key cannot change after connect",
                      tl->name);
        return PMIX_ERR_EXISTS;
    }
    status = rdp_ucx_auth_init(&auth, key, key_len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    rdp_ucx_auth_cleanup(&tl->auth);
    tl->auth = auth;
    rdp_log_debug(UCX, "%s: session key %s", tl->name, tl->auth.fp);
    return PMIX_SUCCESS;
}

/* Take in everything that already arrived: progress until a round finds
 * nothing (bounded), delivering to the engine as usual. */
static void drain_arrived(rdp_ucx_tl_t *tl)
{
    unsigned budget = PROGRESS_BUDGET;

    if (tl->in_progress) {
        return;
    }
    tl->in_progress = 1;
    while ((budget > 0) && progress_round(tl, &budget)) {
        budget--;
    }
    tl->in_progress = 0;
}

/* The process of a peer on this machine ended (its pidfd is readable).
 * What it sent before may still wait in our queues (over shared memory the
 * messages sit in our receive FIFO): take that in first, so that the news
 * of its death never overtakes its last messages, as over tcp, where the
 * stream delivers the data before the disconnection. */
static void on_peer_exit(int fd, int events, void *arg)
{
    ucx_peer_t *peer = arg;
    rdp_ucx_tl_t *tl = peer->tl;

    (void)fd;
    (void)events;
    rdp_fdwatch_disable(peer->exit_watch);
    if (peer->failed) {
        return;
    }
    rdp_log_info(UCX, "%s: server %u (a process on this machine) exited",
                 tl->name, peer->index);
    drain_arrived(tl);
    peer_mark_failed(tl, peer, PMIX_ERR_LOST_CONNECTION);
}

/*
 * Watch the process of a peer on this machine: UCX 1.13 cannot report the
 * death of a peer reached over its shared memory transports, so without
 * this a server would only learn it from PMIX_TIMEOUT (and wait for ever
 * without one).  Best effort: a pid that cannot be opened is logged and
 * left to UCX and timeouts; one that no longer exists is a dead peer.  The
 * pid was read from the peer's address during bootstrap, so it could only
 * name another process if the peer died and its pid was reused before
 * connect.  tl->peers is not set yet: reports wait for connect.
 */
static void watch_local_peer(rdp_ucx_tl_t *tl, ucx_peer_t *peer)
{
    uint32_t pid = peer->local_pid;

    peer->pidfd = pidfd_open((pid_t)pid, 0);
    if (peer->pidfd < 0) {
        if (errno == ESRCH) {
            rdp_log_warn(UCX, "%s: server %u (pid %u) is already gone",
                         tl->name, peer->index, pid);
            peer_mark_failed(tl, peer, PMIX_ERR_LOST_CONNECTION);
        } else {
            rdp_log_debug(UCX, "%s: cannot watch server %u (pid %u): %s",
                          tl->name, peer->index, pid, strerror(errno));
        }
        return;
    }
    if (rdp_fdwatch_create(tl->loop, peer->pidfd, RDP_FD_READ, on_peer_exit,
                           peer, &peer->exit_watch)
        != PMIX_SUCCESS) {
        close(peer->pidfd);
        peer->pidfd = -1;
        return;
    }
    rdp_fdwatch_enable(peer->exit_watch);
}

static void peers_free(ucx_peer_t *peers, uint32_t npeers)
{
    for (uint32_t i = 0; i < npeers; i++) {
        rdp_fdwatch_destroy(peers[i].exit_watch);
        if (peers[i].pidfd >= 0) {
            close(peers[i].pidfd);
        }
        rdp_free(peers[i].addr);
    }
    rdp_free(peers);
}

pmix_status_t rdp_ucx_tl_connect(rdp_ucx_tl_t *tl, uint32_t my_index,
                                 uint32_t npeers, const rdp_iov_t addrs[])
{
    ucx_peer_t *peers;
    uint32_t nlocal = 1; /* servers on this machine, this one included */
    pmix_status_t status;

    if ((tl == NULL) || (npeers == 0) || (my_index >= npeers)
        || ((addrs == NULL) && (npeers > 1))) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (tl->connected) {
        rdp_log_error(UCX, "%s: already connected", tl->name);
        return PMIX_ERR_EXISTS;
    }
    peers = rdp_calloc(npeers, sizeof(*peers));
    if (peers == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < npeers; i++) {
        peers[i].pidfd = -1;
    }
    for (uint32_t i = 0; i < npeers; i++) {
        rdp_ucx_envelope_t env;

        peers[i].tl    = tl;
        peers[i].index = i;
        if (i == my_index) {
            continue;
        }
        if ((addrs[i].base == NULL) || (addrs[i].len > RDP_UCX_MAX_ADDR)
            || (rdp_ucx_envelope_decode(addrs[i].base, addrs[i].len, &env)
                != PMIX_SUCCESS)) {
            rdp_log_error(UCX, "%s: bad address for server %u (%zu bytes)",
                          tl->name, i, (addrs[i].base != NULL) ? addrs[i].len : 0);
            status = PMIX_ERR_BAD_PARAM;
            goto err_free_peers;
        }
        peers[i].addr = rdp_malloc(env.ucx_len);
        if (peers[i].addr == NULL) {
            status = PMIX_ERR_NOMEM;
            goto err_free_peers;
        }
        memcpy(peers[i].addr, env.ucx, env.ucx_len);
        peers[i].addr_len = env.ucx_len;
        if (rdp_ucx_envelope_local(&tl->self, &env)) {
            peers[i].local_pid = env.pid;
        }
    }
    for (uint32_t i = 0; i < npeers; i++) {
        if (peers[i].local_pid != 0) {
            watch_local_peer(tl, &peers[i]);
            nlocal++;
        }
    }
    tl->local_zcopy = local_zcopy_wanted(tl, nlocal);
    for (uint32_t i = 0; tl->local_zcopy && (i < npeers); i++) {
        if ((peers[i].local_pid != 0) && !peers[i].failed
            && (peers[i].exit_watch == NULL)) {
            rdp_log_warn(UCX,
                         "%s: server %u, on this machine, is not "
                         "watched and its endpoint reports no failure: its "
                         "death shows only as timeouts",
                         tl->name, i);
        }
    }
    /* Eager endpoints are there to report a peer's failure.  A peer whose
     * process is watched needs none for that, so it gets its endpoint on
     * the first send: M servers on one machine then wire up the O(M log M)
     * pairs their schedules use instead of all M * (M - 1) at connect
     * (docs/ucx.md).  A peer already gone gets none either: it is
     * reported failed. */
    for (uint32_t i = 0; !tl->lazy && (i < npeers); i++) {
        if ((i == my_index) || peers[i].failed
            || (peers[i].exit_watch != NULL)) {
            continue;
        }
        status = ep_create(tl, &peers[i], 0);
        if (status != PMIX_SUCCESS) {
            goto err_close_eps;
        }
    }
    tl->peers     = peers;
    tl->npeers    = npeers;
    tl->me        = my_index;
    tl->connected = 1;
    rdp_ucx_kick(tl); /* endpoint wireup needs progress */
    rdp_log_debug(UCX, "%s: server %u of %u, %" PRIu64 " endpoints at connect",
                  tl->name, my_index, npeers, tl->stats.endpoints);
    return PMIX_SUCCESS;

err_close_eps:
    for (uint32_t i = 0; i < npeers; i++) {
        if (peers[i].ep != NULL) {
            ep_close_force(tl, peers[i].ep);
        }
    }
err_free_peers:
    peers_free(peers, npeers);
    return status;
}

/* Progress until the endpoint close requests are done (bounded). */
static void wait_closing(rdp_ucx_tl_t *tl)
{
    double deadline = rdp_time_now() + tl->drain_timeout;

    tl->in_progress = 1;
    while ((tl->closing > 0) && (rdp_time_now() < deadline)) {
        if (ucp_worker_progress(tl->worker) == 0) {
            wait_event(tl, 0.01);
        }
    }
    tl->in_progress = 0;
    if (tl->closing > 0) {
        rdp_log_warn(UCX, "%s: %zu endpoints did not close", tl->name,
                     tl->closing);
    }
}

/* A peer on this machine whose process is gone (its pidfd readable):
 * failed.  The loop's watch does not run while destroy waits. */
static void check_local_exits(rdp_ucx_tl_t *tl)
{
    for (uint32_t i = 0; i < tl->npeers; i++) {
        ucx_peer_t *peer  = &tl->peers[i];
        struct pollfd pfd = {.fd = peer->pidfd, .events = POLLIN};

        if (!peer->failed && (peer->pidfd >= 0) && (poll(&pfd, 1, 0) > 0)) {
            peer_mark_failed(tl, peer, PMIX_ERR_LOST_CONNECTION);
        }
    }
}

/* Whether @a peer takes part in @a tl's handshake. */
static int in_contact(const rdp_ucx_tl_t *tl, const ucx_peer_t *peer)
{
    return (tl->npeers <= tl->bye_all_max) || (peer->ep != NULL) || peer->heard
           || peer->bye_heard;
}

/* Whether the handshake with @a peer is over: it acknowledged our
 * goodbye, or said its own and has our acknowledgment, or failed. */
static int bye_done(const rdp_ucx_tl_t *tl, const ucx_peer_t *peer)
{
    return !in_contact(tl, peer) || peer->failed || peer->bye_acked
           || (peer->bye_heard && (peer->ack_sent == 2));
}

/*
 * Before the worker is destroyed: tell every peer (in contact, above
 * BYE_ALL_MAX servers) that this server leaves and progress until each has acknowledged it (or failed, or said
 * goodbye itself and has our acknowledgment), bounded by drain_timeout.
 * UCX 1.13 aborts the process (an assertion in ucp_request_send_state_ff,
 * "got REP message") when a worker is destroyed, or a tcp endpoint
 * fails, while a wire-up message still waits on a tcp connection that its
 * peer has yet to accept (from that peer's progress).  A peer's reply to
 * our first message, and ours to its, both go before the goodbye or the
 * acknowledgment on the same endpoint, which UCP sends only once its
 * wire-up is complete: so once every peer is done here, no wire-up
 * message is queued on either side (docs/design.md).
 */
static void say_goodbye(rdp_ucx_tl_t *tl)
{
    double deadline = rdp_time_now() + tl->drain_timeout;
    uint32_t left   = 0;

    if (!tl->connected || tl->in_progress) {
        return;
    }
    tl->in_progress = 1;
    check_local_exits(tl);
    for (uint32_t i = 0; i < tl->npeers; i++) {
        ucx_peer_t *peer = &tl->peers[i];

        if ((i != tl->me) && in_contact(tl, peer) && !peer->failed
            && !peer->bye_heard) {
            bye_send(tl, peer, RDP_UCX_BYE);
        }
    }
    for (;;) {
        bye_answer(tl);
        left = 0;
        for (uint32_t i = 0; i < tl->npeers; i++) {
            left += (i != tl->me) && !bye_done(tl, &tl->peers[i]);
        }
        if ((left == 0) || (rdp_time_now() >= deadline)) {
            break;
        }
        if (ucp_worker_progress(tl->worker) == 0) {
            check_local_exits(tl);
            wait_event(tl, 0.01);
        }
    }
    tl->in_progress = 0;
    if (left > 0) {
        rdp_log_warn(UCX, "%s: %u servers did not answer our goodbye in %.1fs",
                     tl->name, left, tl->drain_timeout);
    }
}

/*
 * Before the worker is destroyed: progress until a flush of every
 * endpoint, UCP's own included, is done (bounded by drain_timeout).
 * UCX 1.13 aborts the process (an assertion in ucp_request_send_state_ff,
 * "got REP message") when it destroys an endpoint whose wireup reply still
 * waits on a tcp lane that is connecting.  Such an endpoint is UCP's own:
 * a peer that sent here first (endpoints to local peers are made on the
 * first send) and got no endpoint from us; at the end of a job under load
 * its reply can still be queued.  About 1 3-node job in 130 lost a daemon
 * so at load 13-16.  The flush sends it while the peers are still there.
 */
static void flush_worker(rdp_ucx_tl_t *tl)
{
    ucp_request_param_t prm = {0};
    double deadline         = rdp_time_now() + tl->drain_timeout;
    ucs_status_ptr_t req;

    if (tl->in_progress) {
        return; /* destroyed from a callback: UCP cannot progress here */
    }
    req = ucp_worker_flush_nbx(tl->worker, &prm);
    if (UCS_PTR_IS_ERR(req)) {
        rdp_log_debug(UCX, "%s: worker flush: %s", tl->name,
                      rdp_ucx_status_str(UCS_PTR_STATUS(req)));
        return;
    }
    if (req == NULL) {
        return;
    }
    tl->in_progress = 1;
    while ((ucp_request_check_status(req) == UCS_INPROGRESS)
           && (rdp_time_now() < deadline)) {
        if (ucp_worker_progress(tl->worker) == 0) {
            wait_event(tl, 0.01);
        }
    }
    tl->in_progress = 0;
    if (ucp_request_check_status(req) == UCS_INPROGRESS) {
        rdp_log_warn(UCX, "%s: the worker did not flush in %.1fs", tl->name,
                     tl->drain_timeout);
    }
    ucp_request_free(req);
}

static void free_rmsg_list(rdp_ucx_tl_t *tl, rdp_list_t *list)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(list)) != NULL) {
        ucx_rmsg_t *rmsg = rdp_container_of(item, ucx_rmsg_t, op.link);

        if (rmsg->data != NULL) {
            rdp_ucx_rmsg_release_data(tl, rmsg);
        }
        rdp_ucx_op_free(&rmsg->op);
    }
}

void rdp_ucx_tl_destroy(rdp_ucx_tl_t *tl)
{
    rdp_list_t *item;

    if (tl == NULL) {
        return;
    }
    if (tl->gone != NULL) {
        *tl->gone = 1; /* from inside progress_pass: it stops touching tl */
    }
    if (tl->up != NULL) {
        rdp_log_warn(UCX, "%s: destroyed with an engine bound", tl->name);
        tl_unbind(tl);
    }
    if (!rdp_list_is_empty(&tl->kept)) {
        rdp_log_warn(UCX, "%s: %zu received messages still kept at destroy",
                     tl->name, rdp_list_length(&tl->kept));
    }
    say_goodbye(tl);
    flush_worker(tl); /* what arrives meanwhile is freed below */
    free_rmsg_list(tl, &tl->kept);
    free_rmsg_list(tl, &tl->unbound);
    while ((item = rdp_list_pop_front(&tl->done)) != NULL) {
        rdp_ucx_op_free(rdp_container_of(item, ucx_op_t, link));
    }
    for (uint32_t i = 0; i < tl->npeers; i++) {
        if (tl->peers[i].ep != NULL) {
            ucp_ep_h ep = tl->peers[i].ep;

            tl->peers[i].ep = NULL;
            ep_close_force(tl, ep);
        }
    }
    wait_closing(tl);
    rdp_fdwatch_destroy(tl->watch);
    rdp_timer_destroy(tl->kick);
    ucp_worker_release_address(tl->worker, tl->addr);
    ucp_worker_destroy(tl->worker);
    ucp_cleanup(tl->context);
    /* anything UCP never completed is ours again now */
    while ((item = rdp_list_pop_front(&tl->sends)) != NULL) {
        rdp_ucx_op_free(rdp_container_of(item, ucx_op_t, link));
    }
    while ((item = rdp_list_pop_front(&tl->fetches)) != NULL) {
        rdp_ucx_op_free(rdp_container_of(item, ucx_op_t, link));
    }
    peers_free(tl->peers, tl->npeers);
    rdp_free(tl->spare_sreq);
    rdp_free(tl->envelope);
    rdp_ucx_auth_cleanup(&tl->auth);
    rdp_free(tl);
}

const rdp_ucx_api_t rdp_ucx_builtin_api = {
    .create  = rdp_ucx_tl_create,
    .address = rdp_ucx_tl_address,
    .set_key = rdp_ucx_tl_set_key,
    .connect = rdp_ucx_tl_connect,
    .ops     = rdp_ucx_tl_ops,
    .ctx     = rdp_ucx_tl_ctx,
    .destroy = rdp_ucx_tl_destroy,
};
