/* hostcall.c - every call into the host, and the marker that catches one
 * made from inside a host's callback (hostcall.h says why) */
#include "config.h"
#include "core/server/hostcall.h"
#include "core/util/log.h"

#include <stdbool.h>
#include <string.h>

/* Which host callback this thread is inside, RDP_SRV_CB_NONE outside. */
static _Thread_local unsigned char in_host_cb;

static uint64_t violations;
static bool warned[RDP_SRV_HOSTFN_COUNT][RDP_SRV_CB_COUNT];

static const char *const cb_names[RDP_SRV_CB_COUNT] = {
    [RDP_SRV_CB_NONE]        = "no",
    [RDP_SRV_CB_FENCE]       = "fence",
    [RDP_SRV_CB_CONNECT]     = "connect/disconnect",
    [RDP_SRV_CB_GROUP_FENCE] = "group fence",
    [RDP_SRV_CB_GROUP]       = "group",
    [RDP_SRV_CB_DMODEX]      = "dmodex",
    [RDP_SRV_CB_OP]          = "op",
    [RDP_SRV_CB_INFO]        = "info",
    [RDP_SRV_CB_QUERY]       = "query",
    [RDP_SRV_CB_LOOKUP]      = "lookup",
    [RDP_SRV_CB_SPAWN]       = "spawn",
    [RDP_SRV_CB_NOTIFY]      = "notify_event",
    [RDP_SRV_CB_APP_RELEASE] = "setup_application release",
};

static const char *const fn_names[RDP_SRV_HOSTFN_COUNT] = {
#define FN_NAME(name) [RDP_SRV_HOSTFN_##name] = #name,
    RDP_SRV_HOST_FNS(FN_NAME)
#undef FN_NAME
        [RDP_SRV_HOSTFN_RELEASE] = "release_fn",
};

rdp_srv_host_cb_t rdp_srv_host_cb_enter(rdp_srv_host_cb_t cb)
{
    rdp_srv_host_cb_t prev = (rdp_srv_host_cb_t)in_host_cb;

    in_host_cb = (unsigned char)cb;
    return prev;
}

void rdp_srv_host_cb_leave(rdp_srv_host_cb_t prev)
{
    in_host_cb = (unsigned char)prev;
}

static void report(rdp_srv_host_fn_t fn, rdp_srv_host_cb_t cb)
{
    uint64_t n = __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);

    if (!__atomic_exchange_n(&warned[fn][cb], true, __ATOMIC_RELAXED)) {
        rdp_log_warn(SERVER,
                     "called the host's %s from inside its %s callback "
                     "(hosts hold their locks there)",
                     fn_names[fn], cb_names[cb]);
    }
    rdp_log_debug(SERVER,
                  "call into the host from inside its callback number "
                  "%llu: %s inside %s",
                  (unsigned long long)n, fn_names[fn], cb_names[cb]);
}

void rdp_srv_host_call_check(rdp_srv_host_fn_t fn)
{
    if (__builtin_expect(in_host_cb != RDP_SRV_CB_NONE, 0)) {
        report(fn, (rdp_srv_host_cb_t)in_host_cb);
    }
}

uint64_t rdp_srv_host_cb_violations(void)
{
    return __atomic_load_n(&violations, __ATOMIC_RELAXED);
}

/* ---- the trampolines: check, then call the host's own entry ---- */

static pmix_server_module_t host;

#define TRAMPOLINE(ret, name, params, args)             \
    static ret tramp_##name params                      \
    {                                                   \
        rdp_srv_host_call_check(RDP_SRV_HOSTFN_##name); \
        return host.name args;                          \
    }
#define TRAMPOLINE_VOID(name, params, args)             \
    static void tramp_##name params                     \
    {                                                   \
        rdp_srv_host_call_check(RDP_SRV_HOSTFN_##name); \
        host.name args;                                 \
    }

TRAMPOLINE(pmix_status_t, client_connected,
           (const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb, void *d),
           (proc, obj, cb, d))
TRAMPOLINE(pmix_status_t, client_connected2,
           (const pmix_proc_t *proc, void *obj, pmix_info_t info[],
            size_t ninfo, pmix_op_cbfunc_t cb, void *d),
           (proc, obj, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, client_finalized,
           (const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb, void *d),
           (proc, obj, cb, d))
TRAMPOLINE(pmix_status_t, abort,
           (const pmix_proc_t *proc, void *obj, int status, const char msg[],
            pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cb, void *d),
           (proc, obj, status, msg, procs, nprocs, cb, d))
TRAMPOLINE(pmix_status_t, fence_nb,
           (const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
            size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
            void *d),
           (procs, nprocs, info, ninfo, data, ndata, cb, d))
TRAMPOLINE(pmix_status_t, direct_modex,
           (const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
            pmix_modex_cbfunc_t cb, void *d),
           (proc, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, publish,
           (const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
            pmix_op_cbfunc_t cb, void *d),
           (proc, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, lookup,
           (const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
            size_t ninfo, pmix_lookup_cbfunc_t cb, void *d),
           (proc, keys, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, unpublish,
           (const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
            size_t ninfo, pmix_op_cbfunc_t cb, void *d),
           (proc, keys, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, spawn,
           (const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
            const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cb,
            void *d),
           (proc, job_info, ninfo, apps, napps, cb, d))
TRAMPOLINE(pmix_status_t, connect,
           (const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
            size_t ninfo, pmix_op_cbfunc_t cb, void *d),
           (procs, nprocs, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, disconnect,
           (const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
            size_t ninfo, pmix_op_cbfunc_t cb, void *d),
           (procs, nprocs, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, register_events,
           (pmix_status_t * codes, size_t ncodes, const pmix_info_t info[],
            size_t ninfo, pmix_op_cbfunc_t cb, void *d),
           (codes, ncodes, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, deregister_events,
           (pmix_status_t * codes, size_t ncodes, pmix_op_cbfunc_t cb, void *d),
           (codes, ncodes, cb, d))
TRAMPOLINE(pmix_status_t, listener,
           (int sd, pmix_connection_cbfunc_t cb, void *d), (sd, cb, d))
TRAMPOLINE(pmix_status_t, notify_event,
           (pmix_status_t code, const pmix_proc_t *source,
            pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
            pmix_op_cbfunc_t cb, void *d),
           (code, source, range, info, ninfo, cb, d))
TRAMPOLINE(pmix_status_t, query,
           (pmix_proc_t * proct, pmix_query_t *queries, size_t nqueries,
            pmix_info_cbfunc_t cb, void *d),
           (proct, queries, nqueries, cb, d))
TRAMPOLINE_VOID(tool_connected,
                (pmix_info_t * info, size_t ninfo,
                 pmix_tool_connection_cbfunc_t cb, void *d),
                (info, ninfo, cb, d))
TRAMPOLINE_VOID(log,
                (const pmix_proc_t *client, const pmix_info_t data[],
                 size_t ndata, const pmix_info_t dirs[], size_t ndirs,
                 pmix_op_cbfunc_t cb, void *d),
                (client, data, ndata, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, allocate,
           (const pmix_proc_t *client, pmix_alloc_directive_t directive,
            const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cb,
            void *d),
           (client, directive, data, ndata, cb, d))
TRAMPOLINE(pmix_status_t, job_control,
           (const pmix_proc_t *requestor, const pmix_proc_t targets[],
            size_t ntargets, const pmix_info_t dirs[], size_t ndirs,
            pmix_info_cbfunc_t cb, void *d),
           (requestor, targets, ntargets, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, monitor,
           (const pmix_proc_t *requestor, const pmix_info_t *monitor,
            pmix_status_t error, const pmix_info_t dirs[], size_t ndirs,
            pmix_info_cbfunc_t cb, void *d),
           (requestor, monitor, error, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, get_credential,
           (const pmix_proc_t *proc, const pmix_info_t dirs[], size_t ndirs,
            pmix_credential_cbfunc_t cb, void *d),
           (proc, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, validate_credential,
           (const pmix_proc_t *proc, const pmix_byte_object_t *cred,
            const pmix_info_t dirs[], size_t ndirs, pmix_validation_cbfunc_t cb,
            void *d),
           (proc, cred, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, iof_pull,
           (const pmix_proc_t procs[], size_t nprocs, const pmix_info_t dirs[],
            size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cb,
            void *d),
           (procs, nprocs, dirs, ndirs, channels, cb, d))
TRAMPOLINE(pmix_status_t, push_stdin,
           (const pmix_proc_t *source, const pmix_proc_t targets[],
            size_t ntargets, const pmix_info_t dirs[], size_t ndirs,
            const pmix_byte_object_t *bo, pmix_op_cbfunc_t cb, void *d),
           (source, targets, ntargets, dirs, ndirs, bo, cb, d))
TRAMPOLINE(pmix_status_t, group,
           (pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
            size_t nprocs, const pmix_info_t dirs[], size_t ndirs,
            pmix_info_cbfunc_t cb, void *d),
           (op, grp, procs, nprocs, dirs, ndirs, cb, d))
TRAMPOLINE(pmix_status_t, fabric,
           (const pmix_proc_t *requestor, pmix_fabric_operation_t op,
            const pmix_info_t dirs[], size_t ndirs, pmix_info_cbfunc_t cb,
            void *d),
           (requestor, op, dirs, ndirs, cb, d))

void rdp_srv_host_module_wrap(const pmix_server_module_t *in,
                              pmix_server_module_t *out)
{
    memset(&host, 0, sizeof(host));
    if (in != NULL) {
        host = *in;
    }
    memset(out, 0, sizeof(*out));
#define WRAP(name)                \
    if (host.name != NULL) {      \
        out->name = tramp_##name; \
    }
    RDP_SRV_HOST_FNS(WRAP)
#undef WRAP
}
