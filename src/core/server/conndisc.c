/* conndisc.c - connect and disconnect as host upcalls (coll.h) */
#include "config.h"
#include "core/server/coll.h"

/*
 * PMIx_Connect / PMIx_Disconnect: the local participants gather, then the
 * host's connect / disconnect upcall runs the rest (all participants
 * local: nothing to run).  No data travels; the reply is a status.
 */

static bool connect_host_provides(void)
{
    return rdp_srv.host.connect != NULL;
}

static pmix_status_t connect_host_call(const pmix_proc_t *procs, size_t nprocs,
                                       const pmix_info_t *info, size_t ninfo,
                                       char *data, size_t ndata, void *cbdata)
{
    (void)data;
    (void)ndata;
    return rdp_srv.host.connect(procs, nprocs, info, ninfo,
                                rdp_srv_coll_host_op_cb, cbdata);
}

static bool disconnect_host_provides(void)
{
    return rdp_srv.host.disconnect != NULL;
}

static pmix_status_t disconnect_host_call(const pmix_proc_t *procs,
                                          size_t nprocs,
                                          const pmix_info_t *info, size_t ninfo,
                                          char *data, size_t ndata,
                                          void *cbdata)
{
    (void)data;
    (void)ndata;
    return rdp_srv.host.disconnect(procs, nprocs, info, ninfo,
                                   rdp_srv_coll_host_op_cb, cbdata);
}

const rdp_srv_coll_ops_t rdp_srv_connect_ops = {
    .upcall        = "connect",
    .reply_cmd     = RDP_CMD_CONNECT_PROCS_ACK,
    .host_provides = connect_host_provides,
    .host_call     = connect_host_call,
};

const rdp_srv_coll_ops_t rdp_srv_disconnect_ops = {
    .upcall        = "disconnect",
    .reply_cmd     = RDP_CMD_DISCONNECT_PROCS_ACK,
    .host_provides = disconnect_host_provides,
    .host_call     = disconnect_host_call,
};
