/* runtime.h - the one library instance shared by client, server and tool */
#ifndef RDP_CORE_COMMON_RUNTIME_H
#define RDP_CORE_COMMON_RUNTIME_H

#include <pmix_common.h>

#include "core/kvs/kvs.h"
#include "core/loop/loop.h"
#include "core/wire/wire.h"

#include <stdbool.h>

/*
 * A process uses the library as a client, a server or a tool (a server
 * process may also call client-side functions such as PMIx_Get on data it
 * stores).  Whatever the role, there is one loop thread and one event
 * handler registry, owned by this runtime.  All fields except the loop
 * pointer and `lock` belong to the loop thread.
 */
enum rdp_role {
    RDP_ROLE_NONE   = 0,
    RDP_ROLE_CLIENT = 1,
    RDP_ROLE_SERVER = 2,
    RDP_ROLE_TOOL   = 3
};

typedef struct rdp_runtime {
    pthread_mutex_t lock; /* guards refcount/role across API threads */
    int refcount;         /* Init/Finalize pairs across all roles */
    enum rdp_role role;
    rdp_loop_t *loop;   /* set while refcount > 0 */
    pmix_proc_t myproc; /* our identity (server: its own nspace/rank) */
    rdp_kvs_t *kvs;     /* loop thread only */
} rdp_runtime_t;

extern rdp_runtime_t rdp_rt;

/**
 * Take a reference on the runtime, creating the loop thread, log setup
 * and kvs on first use. Returns PMIX_ERR_INIT if the process already uses
 * the library in a different role (e.g. tool after server).
 */
pmix_status_t rdp_runtime_acquire(enum rdp_role role);
/** Drop a reference; the last one stops the loop and frees the runtime. */
void rdp_runtime_release(void);
/** True if initialised in any role. */
int rdp_runtime_active(void);

/**
 * True while the process is a tool that initialised with PMIX_LAUNCHER
 * (core/tool sets it once the pnet modules are selected, clears it before
 * they are forgotten): it may then make the head node's step,
 * PMIx_server_setup_application (core/server/misc.c).  Lock-free: safe
 * from any thread, also the loop thread.
 */
bool rdp_runtime_is_launcher(void);
void rdp_runtime_set_launcher(bool launcher);

/**
 * Run @a fn(@a arg) on the loop thread and wait for it to call
 * rdp_wait_signal on the rdp_wait_t it is given via its argument; helper
 * for the many blocking wrappers. See rdp_runtime_call.
 */
typedef void (*rdp_runtime_call_fn_t)(void *arg, rdp_wait_t *wait);
/** Returns what @a fn signalled; PMIX_ERR_INIT when the runtime is not
 * active; PMIX_ERR_WOULD_BLOCK when called on the loop thread itself (the
 * wait could never end there). */
pmix_status_t rdp_runtime_call(rdp_runtime_call_fn_t fn, void *arg);

/**
 * Run @a fn(@a arg) on the loop thread and return its result, for work
 * that completes without waiting (kvs lookups, handler lists).  Called on
 * the loop thread itself (e.g. from an event handler) it runs @a fn inline,
 * so it never deadlocks.  PMIX_ERR_INIT when the runtime is not active.
 */
typedef pmix_status_t (*rdp_runtime_sync_fn_t)(void *arg);
pmix_status_t rdp_runtime_call_sync(rdp_runtime_sync_fn_t fn, void *arg);

/* ---- client-side functions in a server process ---- */

/**
 * Set by the server role while it runs: packs into @a buf a bundle
 * (proto.h format: u32 nsets, sets) of what this process holds for
 * (@a nspace, @a rank): the nspace's registered job data and the
 * committed data of @a rank (every rank for PMIX_RANK_WILDCARD or
 * PMIX_RANK_UNDEF).  Client-side PMIx_Get in a server process reads
 * through it.  Loop thread.  PMIX_ERR_NOT_FOUND for an nspace that was
 * never registered; @a buf may hold partial data on error.
 */
typedef pmix_status_t (*rdp_runtime_fetch_fn_t)(const char *nspace,
                                                pmix_rank_t rank,
                                                rdp_buf_t *buf);
extern rdp_runtime_fetch_fn_t rdp_runtime_fetch;

/**
 * Set by the client code when it keeps client-side state in a process
 * whose role is server or tool (PMIx_Store_internal, PMIx_Get there);
 * the last rdp_runtime_release calls it after the loop thread stopped and
 * before the kvs goes away, then resets it to NULL.
 */
extern void (*rdp_runtime_embedded_cleanup)(void);

/* ---- events (src/core/common/event.c) ---- */

/**
 * Deliver an event to this process's registered handlers (the Standard's
 * chain: specific codes first, then multi-code, then default handlers;
 * PMIX_EVENT_HDLR_FIRST/LAST/BEFORE/AFTER ordering), on the loop thread.
 * Called by the client when the server forwards an event, by the server
 * for events the host notifies, and by PMIx_Notify_event for local ranges.
 * @param [in] source, info  borrowed; copied for the handlers' lifetime.
 */
pmix_status_t rdp_event_deliver(pmix_status_t code, const pmix_proc_t *source,
                                pmix_data_range_t range,
                                const pmix_info_t *info, size_t ninfo);

/** Is PMIX_EVENT_DO_NOT_CACHE true in @a info? */
bool rdp_event_do_not_cache(const pmix_info_t *info, size_t ninfo);

/**
 * As rdp_event_deliver, for an event raised by PMIx_Notify_event or sent
 * by the server: when no handler matches it now, it is kept (unless
 * PMIX_EVENT_DO_NOT_CACHE is true) and given to the first handler
 * registered later that matches it (docs/design.md, "Client").
 */
pmix_status_t rdp_event_deliver_or_cache(pmix_status_t code,
                                         const pmix_proc_t *source,
                                         pmix_data_range_t range,
                                         const pmix_info_t *info,
                                         size_t ninfo);

/**
 * As rdp_event_deliver_or_cache, then @a done(@a done_arg) on the loop
 * thread once every handler that matched has completed (called its
 * cbfunc; the chain ended), or before returning when none matched now.
 * Returning an error, it never calls @a done.
 */
pmix_status_t rdp_event_deliver_then(pmix_status_t code,
                                     const pmix_proc_t *source,
                                     pmix_data_range_t range,
                                     const pmix_info_t *info, size_t ninfo,
                                     void (*done)(void *arg), void *done_arg);

/**
 * Role-specific hook that sends an event beyond this process (client:
 * to its server; server: to its clients and the host).  Set by the role at
 * init; NULL means local delivery only.  Runs on the loop thread; it must
 * copy what it keeps.  Returning PMIX_SUCCESS, it calls @a cbfunc (if not
 * NULL) exactly once, later; returning an error, it never calls it.
 * The receiving side must not echo the event back to its originator:
 * PMIx_Notify_event already delivered it to the local handlers.
 */
typedef pmix_status_t (*rdp_event_forward_fn_t)(
    pmix_status_t code, const pmix_proc_t *source, pmix_data_range_t range,
    const pmix_info_t *info, size_t ninfo, pmix_op_cbfunc_t cbfunc,
    void *cbdata);
extern rdp_event_forward_fn_t rdp_event_forward;

/**
 * Role-specific hook told when a delivery of an event ends here: its
 * handlers are done (one completed it, or none is left), or no handler
 * took it (@a nresults 0).  @a results are what the handlers returned,
 * @a hdlr_status the first status a handler completed with other than
 * PMIX_SUCCESS / PMIX_EVENT_ACTION_COMPLETE (PMIX_SUCCESS if none).  The
 * client uses it to send a group member's answer to
 * PMIX_GROUP_LEADER_FAILED (RFC0033).  Loop thread; NULL: nothing.
 */
typedef void (*rdp_event_chain_end_fn_t)(pmix_status_t code,
                                         const pmix_info_t *info, size_t ninfo,
                                         const pmix_info_t *results,
                                         size_t nresults,
                                         pmix_status_t hdlr_status);
extern rdp_event_chain_end_fn_t rdp_event_chain_end;

/** Drop every handler (at final release). */
void rdp_event_cleanup(void);

#endif
