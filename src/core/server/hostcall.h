/* hostcall.h - every call into the host, and the marker that catches one
 * made from inside a host's callback */
#ifndef RDP_CORE_SERVER_HOSTCALL_H
#define RDP_CORE_SERVER_HOSTCALL_H

#include <pmix_server.h>

#include <stdint.h>

/*
 * Hosts call our callbacks while holding their own locks, and their
 * release functions and upcalls take those locks (Slurm's fence does), so
 * a call into the host from inside one of its callbacks deadlocks or
 * corrupts the host (docs/design.md, Server, "Calls into the host").
 * Every callback we hand to a host marks its thread for its duration
 * (RDP_SRV_HOST_CB_ENTER / _LEAVE), and every call into the host passes
 * rdp_srv_host_call_check(): the upcalls through the trampolines that
 * rdp_srv_host_module_wrap() puts in rdp_srv.host, and every release_fn
 * through the guard a callback puts in front of it
 * (rdp_srv_host_release_guard, server_int.h) or through
 * rdp_srv_host_reply_release().  A call while the marker is set is warned
 * about once per (host function, callback) and counted (a debug line each
 * time).  The marker is one thread-local byte; no locks.
 */

/* The callbacks we hand to the host. */
typedef enum rdp_srv_host_cb {
    RDP_SRV_CB_NONE = 0,
    RDP_SRV_CB_FENCE,       /* fence_nb's modex callback (fence, connect,
                               disconnect as fences) */
    RDP_SRV_CB_CONNECT,     /* connect / disconnect op callback */
    RDP_SRV_CB_GROUP_FENCE, /* a group's fence_nb modex callback */
    RDP_SRV_CB_GROUP,       /* the group upcall's info callback */
    RDP_SRV_CB_DMODEX,      /* direct_modex's modex callback */
    RDP_SRV_CB_OP,          /* an op callback (finalize, abort, publish...) */
    RDP_SRV_CB_INFO,        /* an info callback (job_control, monitor) */
    RDP_SRV_CB_QUERY,       /* query's info callback */
    RDP_SRV_CB_LOOKUP,      /* lookup's pdata callback */
    RDP_SRV_CB_SPAWN,       /* spawn's callback */
    RDP_SRV_CB_NOTIFY,      /* notify_event's op callback */
    RDP_SRV_CB_APP_RELEASE, /* the release of setup_application's answer */
    RDP_SRV_CB_COUNT
} rdp_srv_host_cb_t;

/* The host functions we call: every module entry, and release_fn. */
/* clang-format off */
#define RDP_SRV_HOST_FNS(X)                                                  \
    X(client_connected) X(client_finalized) X(abort) X(fence_nb)             \
    X(direct_modex) X(publish) X(lookup) X(unpublish) X(spawn) X(connect)    \
    X(disconnect) X(register_events) X(deregister_events) X(listener)        \
    X(notify_event) X(query) X(tool_connected) X(log) X(allocate)            \
    X(job_control) X(monitor) X(get_credential) X(validate_credential)       \
    X(iof_pull) X(push_stdin) X(group) X(fabric) X(client_connected2)
/* clang-format on */

typedef enum rdp_srv_host_fn {
#define RDP_SRV_HOST_FN_ENUM(name) RDP_SRV_HOSTFN_##name,
    RDP_SRV_HOST_FNS(RDP_SRV_HOST_FN_ENUM)
#undef RDP_SRV_HOST_FN_ENUM
    RDP_SRV_HOSTFN_RELEASE, /* a release_fn the host handed us */
    RDP_SRV_HOSTFN_COUNT
} rdp_srv_host_fn_t;

/** Mark this thread as inside the host's callback @a cb; returns the
 * previous mark, for rdp_srv_host_cb_leave(). */
rdp_srv_host_cb_t rdp_srv_host_cb_enter(rdp_srv_host_cb_t cb);
/** Restore the mark rdp_srv_host_cb_enter() returned. */
void rdp_srv_host_cb_leave(rdp_srv_host_cb_t prev);

/* The first and last statement of a callback we hand to a host. */
#define RDP_SRV_HOST_CB_ENTER(_cb) \
    rdp_srv_host_cb_t rdp_srv_host_cb_prev_ = rdp_srv_host_cb_enter(_cb)
#define RDP_SRV_HOST_CB_LEAVE() rdp_srv_host_cb_leave(rdp_srv_host_cb_prev_)

/** About to call the host's @a fn: warns (once per kind) and counts when
 * this thread is inside one of the host's callbacks.  Any thread. */
void rdp_srv_host_call_check(rdp_srv_host_fn_t fn);

/** Calls into the host made from inside its callbacks since load. */
uint64_t rdp_srv_host_cb_violations(void);

/**
 * Fill @a out with @a host's entries, each non-NULL one replaced by a
 * trampoline that checks the marker and calls the host's.  The host's
 * module is kept (copied) until the next call.
 * @param [in] host  borrowed; copied (NULL: no upcalls)
 */
void rdp_srv_host_module_wrap(const pmix_server_module_t *host,
                              pmix_server_module_t *out);

#endif
