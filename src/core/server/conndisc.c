/* conndisc.c - connect and disconnect as collectives (coll.h) */
#include "config.h"
#include "core/server/coll.h"
#include "core/server/connect.h"
#include "core/util/alloc.h"
#include "core/util/value.h"

#include <rdpmix.h>

#include <string.h>

/*
 * PMIx_Connect / PMIx_Disconnect (docs/design.md, "Connect and
 * disconnect"): the local participants gather (connect.c reads their
 * directives and raises their events), then the engine runs a barrier over
 * the servers that host participants, or else the host's connect /
 * disconnect upcall, or, for a host without it (Slurm 22.05), the host's
 * fence_nb without data over the same processes (DESIGN.md, 8).  No data
 * travels within one job: every server taking part knows every
 * participant's nspace already.  A connect naming another launcher's job
 * (connect.h, "foreign") always goes to the host's connect upcall, with
 * the local participants' committed data (RDPMIX_CONNECT_DATA, a fence's
 * bundle); the host registers the other job and answers direct modex
 * requests for its ranks from the other side's bundles.  The reply is a
 * status.
 */

static pmix_status_t conndisc_init(rdp_srv_coll_t *coll)
{
    coll->foreign = rdp_srv_connect_is_foreign(coll->procs, coll->nprocs);
    /* a barrier, whatever PMIX_COLLECT_DATA says, except that a connect
     * across launchers carries the data the other job cannot fetch */
    coll->collect = coll->foreign && coll->op == RDP_SRV_COLL_CONNECT;
    return PMIX_SUCCESS;
}

/* The local participants' committed data, packed as a fence's. */
static pmix_status_t conndisc_contribute(rdp_srv_coll_t *coll, rdp_buf_t *buf)
{
    return rdp_srv_fence_ops.contribute(coll, buf);
}

/* The host's connect with @a data (NULL: none) appended to the info as
 * RDPMIX_CONNECT_DATA; the host copies it during the call, so the data
 * is freed here once the host took the request. */
static pmix_status_t connect_with_data(const pmix_proc_t *procs, size_t nprocs,
                                       const pmix_info_t *info, size_t ninfo,
                                       char *data, size_t ndata, void *cbdata)
{
    pmix_info_t *all      = rdp_calloc(ninfo + 1, sizeof(*all));
    pmix_byte_object_t bo = {.bytes = data, .size = ndata};
    pmix_status_t rc;

    if (all == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (ninfo > 0) {
        memcpy(all, info, ninfo * sizeof(*all)); /* shallow: borrowed */
    }
    PMIX_LOAD_KEY(all[ninfo].key, RDPMIX_CONNECT_DATA);
    all[ninfo].value.type    = PMIX_BYTE_OBJECT;
    all[ninfo].value.data.bo = bo;
    rc = rdp_srv.host.connect(procs, nprocs, all, ninfo + 1,
                              rdp_srv_coll_host_op_cb, cbdata);
    rdp_free(all);
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
        rdp_free(data); /* ours to free once taken (coll.h) */
    }
    return rc;
}

/* True when every participant is on this node: a host that has no
 * connect upcall keeps no books of them, so there is nothing to run. */
static bool all_here(const pmix_proc_t *procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);

        if (ns == NULL
            || (procs[i].rank == PMIX_RANK_WILDCARD
                    ? ns->nlocal < ns->size
                    : !rdp_srv_nspace_is_local(ns, procs[i].rank))) {
            return false;
        }
    }
    return true;
}

/* The host's fence_nb in place of a missing connect/disconnect upcall. */
static pmix_status_t fence_instead(const pmix_proc_t *procs, size_t nprocs,
                                   const pmix_info_t *info, size_t ninfo,
                                   void *cbdata)
{
    if (all_here(procs, nprocs)) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    return rdp_srv.host.fence_nb(procs, nprocs, info, ninfo, NULL, 0,
                                 rdp_srv_coll_host_modex_cb, cbdata);
}

static bool connect_host_provides(void)
{
    return rdp_srv.host.connect != NULL || rdp_srv.host.fence_nb != NULL;
}

static pmix_status_t connect_host_call(const pmix_proc_t *procs, size_t nprocs,
                                       const pmix_info_t *info, size_t ninfo,
                                       char *data, size_t ndata, void *cbdata)
{
    pmix_status_t rc = PMIX_ERR_NOT_SUPPORTED;

    if (rdp_srv.host.connect == NULL) {
        return fence_instead(procs, nprocs, info, ninfo, cbdata);
    }
    if (data != NULL) {
        return connect_with_data(procs, nprocs, info, ninfo, data, ndata,
                                 cbdata);
    }
    rc = rdp_srv.host.connect(procs, nprocs, info, ninfo,
                              rdp_srv_coll_host_op_cb, cbdata);
    /* Slurm 22.05 has the upcall and answers it with not-supported */
    if (rc == PMIX_ERR_NOT_SUPPORTED && rdp_srv.host.fence_nb != NULL) {
        rc = fence_instead(procs, nprocs, info, ninfo, cbdata);
    }
    return rc;
}

static bool disconnect_host_provides(void)
{
    return rdp_srv.host.disconnect != NULL || rdp_srv.host.fence_nb != NULL;
}

static pmix_status_t disconnect_host_call(const pmix_proc_t *procs,
                                          size_t nprocs,
                                          const pmix_info_t *info, size_t ninfo,
                                          char *data, size_t ndata,
                                          void *cbdata)
{
    (void)data;
    (void)ndata;
    pmix_status_t rc = PMIX_ERR_NOT_SUPPORTED;

    if (rdp_srv.host.disconnect != NULL) {
        rc = rdp_srv.host.disconnect(procs, nprocs, info, ninfo,
                                     rdp_srv_coll_host_op_cb, cbdata);
    }
    if (rc == PMIX_ERR_NOT_SUPPORTED && rdp_srv.host.fence_nb != NULL) {
        rc = fence_instead(procs, nprocs, info, ninfo, cbdata);
    }
    return rc;
}

const rdp_srv_coll_ops_t rdp_srv_connect_ops = {
    .upcall        = "connect",
    .reply_cmd     = RDP_CMD_CONNECT_PROCS_ACK,
    .engine        = true,
    .pass_failure  = true,
    .host_provides = connect_host_provides,
    .host_call     = connect_host_call,
    .init          = conndisc_init,
    .contribute    = conndisc_contribute,
};

const rdp_srv_coll_ops_t rdp_srv_disconnect_ops = {
    .upcall        = "disconnect",
    .reply_cmd     = RDP_CMD_DISCONNECT_PROCS_ACK,
    .engine        = true,
    .pass_failure  = true,
    .host_provides = disconnect_host_provides,
    .host_call     = disconnect_host_call,
    .init          = conndisc_init,
};
