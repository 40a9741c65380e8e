/* connect.c - directives and events of PMIx_Connect / PMIx_Disconnect */
#include "config.h"
#include "core/server/connect.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <rdpmix.h>

#include <string.h>

/* Longer ids are refused: they travel in every tracker key. */
#define CONNECT_ID_MAX 1024

static pmix_status_t read_flag(const pmix_info_t *in, bool *flag_p)
{
    if (in->value.type != PMIX_BOOL && in->value.type != PMIX_UNDEF) {
        rdp_log_error(SERVER, "connect directive %s is not a bool", in->key);
        return PMIX_ERR_BAD_PARAM;
    }
    *flag_p = PMIX_INFO_TRUE(in);
    return PMIX_SUCCESS;
}

static pmix_status_t read_id(const pmix_info_t *in, const char **id_p)
{
    const char *id = in->value.data.string;

    if (in->value.type != PMIX_STRING || id == NULL || id[0] == '\0'
        || strnlen(id, CONNECT_ID_MAX + 1) > CONNECT_ID_MAX) {
        rdp_log_error(SERVER,
                      "%s must be a non-empty string of at most %d "
                      "characters",
                      RDPMIX_CONNECT_ID, CONNECT_ID_MAX);
        return PMIX_ERR_BAD_PARAM;
    }
    *id_p = id;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_connect_dirs(const pmix_info_t *info, size_t ninfo,
                                   rdp_srv_cnct_dirs_t *dirs_p)
{
    rdp_srv_cnct_dirs_t d = {0};
    bool xchg_only;
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_ID)) {
            status = read_id(in, &d.id);
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_NOTIFY_EACH)) {
            status = read_flag(in, &d.notify_each);
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_NOTIFY_REQ)) {
            status = read_flag(in, &d.notify_req);
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_OPTIONAL)) {
            status = read_flag(in, &d.optional);
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_EARLY_TERM_ALLOWED)) {
            status = read_flag(in, &d.early_term);
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_XCHG_ONLY)) {
            /* what every connect does (connect.h) */
            status = read_flag(in, &xchg_only);
        }
    }
    if (status == PMIX_SUCCESS) {
        *dirs_p = d;
    }
    return status;
}

bool rdp_srv_connect_ns_foreign(const rdp_srv_nspace_t *ns)
{
    return ns->nlocal == 0 && ns->size > 0
           && rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, 0, PMIX_NODEID) == NULL;
}

bool rdp_srv_connect_is_foreign(const pmix_proc_t *procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; i++) {
        const rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);

        if (ns == NULL || !ns->registered || rdp_srv_connect_ns_foreign(ns)) {
            return true;
        }
    }
    return false;
}

/* A rank of a participant: valid or the wildcard, and within its job
 * when we know the job. */
static bool rank_ok(const pmix_proc_t *p)
{
    const rdp_srv_nspace_t *ns = rdp_srv_nspace_find(p->nspace);

    if (p->rank == PMIX_RANK_WILDCARD) {
        return true;
    }
    if (p->rank >= PMIX_RANK_VALID) {
        return false;
    }
    return ns == NULL || !ns->registered || ns->nodata || p->rank < ns->size;
}

pmix_status_t rdp_srv_connect_foreign(const rdp_srv_client_t *caller,
                                      uint8_t op, pmix_proc_t *procs,
                                      size_t *nprocs_p)
{
    bool connect = op == RDP_SRV_COLL_CONNECT;
    size_t nprocs;

    for (size_t i = 0; i < *nprocs_p; i++) {
        if (!rank_ok(&procs[i])) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    nprocs = rdp_srv_procs_canonical(procs, *nprocs_p);
    if (!rdp_srv_procs_contain(procs, nprocs, &caller->proc)) {
        rdp_log_error(SERVER,
                      "%s:%u asked to connect processes without "
                      "itself",
                      caller->proc.nspace, caller->proc.rank);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((connect ? rdp_srv.host.connect : rdp_srv.host.disconnect) == NULL) {
        rdp_log_error(SERVER,
                      "%s:%u asked to %s an nspace this server does not "
                      "know, and the host has no %s upcall",
                      caller->proc.nspace, caller->proc.rank,
                      connect ? "connect" : "disconnect",
                      connect ? "connect" : "disconnect");
        return PMIX_ERR_NOT_SUPPORTED;
    }
    *nprocs_p = nprocs;
    return PMIX_SUCCESS;
}

/* ---- events ---- */

/* A copy of an event's info handed to the host's notify_event, freed
 * when the host calls back (any thread: only our own memory). */
typedef struct cnct_event {
    pmix_info_t *info;
    size_t ninfo;
} cnct_event_t;

static void cnct_event_free(cnct_event_t *ev)
{
    rdp_info_array_free(ev->info, ev->ninfo);
    rdp_free(ev);
}

static void host_notified(pmix_status_t status, void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_NOTIFY);
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(SERVER, "host did not pass a connect event on: %s",
                      rdp_status_name(status));
    }
    cnct_event_free(cbdata);
    RDP_SRV_HOST_CB_LEAVE();
}

/* The other nodes' participants get it through the host (rdpmixd passes
 * custom ranges to the nodes that host them, never back here). */
static void notify_host(pmix_status_t code, const pmix_proc_t *source,
                        const pmix_info_t *info, size_t ninfo)
{
    cnct_event_t *ev;
    pmix_status_t rc;

    if (rdp_srv.host.notify_event == NULL) {
        return;
    }
    ev = rdp_calloc(1, sizeof(*ev));
    if (ev == NULL
        || rdp_info_array_copy(&ev->info, info, ninfo) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "out of memory raising connect event %d", code);
        rdp_free(ev);
        return;
    }
    ev->ninfo = ninfo;
    rc = rdp_srv.host.notify_event(code, source, PMIX_RANGE_CUSTOM, ev->info,
                                   ev->ninfo, host_notified, ev);
    if (rc != PMIX_SUCCESS) {
        if (rc != PMIX_OPERATION_SUCCEEDED) {
            rdp_log_warn(SERVER, "host refused connect event %d: %s", code,
                         rdp_status_name(rc));
        }
        cnct_event_free(ev);
    }
}

/* Raise @a code from @a source in the participants @a procs, with the
 * operation's id (when it has one) and, for requests, the participants
 * themselves, so a handler can join. */
static void raise_event(pmix_status_t code, const rdp_srv_client_t *source,
                        const pmix_proc_t *procs, size_t nprocs,
                        const rdp_srv_cnct_dirs_t *dirs, bool with_procs)
{
    pmix_data_array_t da = {
        .type = PMIX_PROC, .size = nprocs, .array = (void *)procs};
    pmix_info_t info[3];
    size_t n = 0;

    memset(info, 0, sizeof(info));
    PMIX_LOAD_KEY(info[n].key, PMIX_EVENT_CUSTOM_RANGE);
    info[n].value.type          = PMIX_DATA_ARRAY;
    info[n++].value.data.darray = &da;
    if (with_procs) {
        PMIX_LOAD_KEY(info[n].key, RDPMIX_CONNECT_PROCS);
        info[n].value.type          = PMIX_DATA_ARRAY;
        info[n++].value.data.darray = &da;
    }
    if (dirs->id != NULL) {
        PMIX_LOAD_KEY(info[n].key, RDPMIX_CONNECT_ID);
        info[n].value.type          = PMIX_STRING;
        info[n++].value.data.string = (char *)dirs->id;
    }
    /* borrowed: both copy what they keep.  Not to the caller itself: a
     * request handler there would join its own connect again */
    rdp_srv_notify_local_except(code, &source->proc, PMIX_RANGE_CUSTOM, info, n,
                                source->peer != NULL ? source->peer->id : 0);
    notify_host(code, &source->proc, info, n);
}

void rdp_srv_connect_raise(bool connect, const rdp_srv_client_t *caller,
                           const pmix_proc_t *procs, size_t nprocs,
                           const pmix_info_t *info, size_t ninfo)
{
    rdp_srv_cnct_dirs_t dirs;

    if (rdp_srv_connect_dirs(info, ninfo, &dirs) != PMIX_SUCCESS) {
        return;
    }
    if (connect && dirs.notify_req) {
        raise_event(PMIX_CONNECT_REQUESTED, caller, procs, nprocs, &dirs, true);
    }
    if (dirs.notify_each) {
        raise_event(connect ? PMIX_PROC_HAS_CONNECTED
                            : RDPMIX_PROC_HAS_DISCONNECTED,
                    caller, procs, nprocs, &dirs, false);
    }
}

void rdp_srv_connect_arrived(const rdp_srv_coll_t *coll,
                             const rdp_srv_client_t *caller)
{
    if (coll->state == RDP_SRV_COLL_GATHER) {
        rdp_srv_connect_raise(coll->op == RDP_SRV_COLL_CONNECT, caller,
                              coll->procs, coll->nprocs, coll->info,
                              coll->ninfo);
    }
}
