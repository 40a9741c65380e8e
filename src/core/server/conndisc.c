/* conndisc.c - connect and disconnect as collectives (coll.h) */
#include "config.h"
#include "core/server/coll.h"
#include "core/server/connect.h"
#include "core/server/slurmfence.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <rdpmix.h>

#include <inttypes.h>
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
 *
 * Inside Slurm's slurmstepd (slurmfence.h) a connect or disconnect within
 * the job runs as Slurm's ring, which waits for every node, over copies
 * of the job's wildcard: participants on only some nodes are refused with
 * PMIX_ERR_NOT_SUPPORTED (Slurm's fences cannot run over them).  Each
 * server contributes a frame naming the tracker ([u32 RING_MAGIC][i32
 * status][bytes key]; a participant that left makes the status an error,
 * which fails the operation on every node).  The number of copies is
 * drawn from that key, so concurrent operations over the same processes
 * mostly land in different Slurm collectives, and frames that differ
 * (Slurm matched two operations crosswise) fail the operation with
 * PMIX_ERROR instead of answering it early.
 */

#define RING_MAGIC 0x52434431u /* "RCD1" */
/* the frame's magic and status, before the key */
#define FRAME_HEAD 8u
/* distinct Slurm collectives per (operation kind): 2 * RING_NAMES */
#define RING_NAMES 32u

/* Connects and disconnects within the job run as Slurm's ring. */
static bool via_slurm_ring(const rdp_srv_coll_t *coll)
{
    return !coll->foreign && rdp_srv_host_is_slurmstepd();
}

static pmix_status_t conndisc_init(rdp_srv_coll_t *coll)
{
    coll->foreign = rdp_srv_connect_is_foreign(coll->procs, coll->nprocs);
    /* a barrier, whatever PMIX_COLLECT_DATA says, except that a connect
     * across launchers carries the data the other job cannot fetch */
    coll->collect = (coll->foreign && coll->op == RDP_SRV_COLL_CONNECT)
                    || via_slurm_ring(coll); /* the frame */
    return PMIX_SUCCESS;
}

/* The frame naming @a coll with this node's @a status. */
static pmix_status_t pack_frame(const rdp_srv_coll_t *coll,
                                pmix_status_t status, rdp_buf_t *buf)
{
    pmix_status_t rc = rdp_pack_u32(buf, RING_MAGIC);

    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_i32(buf, status);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_bytes(buf, coll->key, coll->keylen);
    }
    return rc;
}

/* The local participants' committed data, packed as a fence's; under
 * Slurm the frame that names the tracker. */
static pmix_status_t conndisc_contribute(rdp_srv_coll_t *coll, rdp_buf_t *buf)
{
    if (!via_slurm_ring(coll)) {
        return rdp_srv_fence_ops.contribute(coll, buf);
    }
    return pack_frame(coll, PMIX_SUCCESS, buf);
}

/* Under Slurm a participant here left: the frame tells the other nodes,
 * so their participants fail at once instead of waiting. */
static pmix_status_t conndisc_failure(rdp_srv_coll_t *coll,
                                      pmix_status_t status, rdp_buf_t *buf)
{
    return via_slurm_ring(coll) ? pack_frame(coll, status, buf) : PMIX_SUCCESS;
}

/* What the ring's answer @a block says of @a coll: PMIX_SUCCESS when
 * every node's frame names it and succeeded, the first failure a node
 * reports, or PMIX_ERROR when a frame names another operation. */
static pmix_status_t frames_status(const rdp_srv_coll_t *coll,
                                   const rdp_srv_xchg_block_t *block)
{
    pmix_status_t status = PMIX_SUCCESS;
    rdp_rbuf_t rb;
    size_t nframes = 0;

    rdp_rbuf_init(&rb, block->data, block->len);
    while (rb.left > 0) {
        uint32_t magic = 0;
        int32_t theirs = PMIX_ERROR;
        const void *key;
        size_t keylen;

        if (rdp_unpack_u32(&rb, &magic) != PMIX_SUCCESS || magic != RING_MAGIC
            || rdp_unpack_i32(&rb, &theirs) != PMIX_SUCCESS
            || rdp_unpack_bytes_view(&rb, &key, &keylen) != PMIX_SUCCESS
            || keylen != coll->keylen || memcmp(key, coll->key, keylen) != 0) {
            rdp_log_error(SERVER,
                          "collective %" PRIu64 ": Slurm's fence matched "
                          "another operation over the same processes; it "
                          "fails",
                          coll->id);
            return PMIX_ERROR;
        }
        if (status == PMIX_SUCCESS && theirs != PMIX_SUCCESS) {
            status = theirs;
        }
        nframes++;
    }
    return nframes > 0 ? status : PMIX_ERROR;
}

/* Slurm's ring answered: every node must have run this very operation. */
static pmix_status_t conndisc_result(rdp_srv_coll_t *coll,
                                     const rdp_srv_xchg_block_t *blocks,
                                     size_t nblocks)
{
    if (!via_slurm_ring(coll) || nblocks != 1
        || blocks[0].origin != RDP_SRV_XCHG_HOST) {
        return PMIX_SUCCESS;
    }
    return frames_status(coll, &blocks[0]);
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

/* FNV-1a of @a data: the same on every node for the same frame. */
static uint32_t frame_hash(const char *data, size_t ndata)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < ndata; i++) {
        h = (h ^ (uint8_t)data[i]) * 16777619u;
    }
    return h;
}

/*
 * Slurm's ring over copies of the job's wildcard, carrying this server's
 * frame @a data.  More copies than the job has ranks, so that no group
 * (group_host.c: as many copies as members) and no fence shares the Slurm
 * collective; connects take the odd counts, disconnects the even ones.
 */
static pmix_status_t ring_instead(bool connect, const pmix_proc_t *procs,
                                  size_t nprocs, const pmix_info_t *info,
                                  size_t ninfo, char *data, size_t ndata,
                                  void *cbdata)
{
    size_t of, span = rdp_srv_procs_span(procs, nprocs, &of);
    rdp_srv_nspace_t *ns;
    size_t copies;

    if (all_here(procs, nprocs)) {
        rdp_free(data); /* ours to free once "taken" (coll.h) */
        return PMIX_OPERATION_SUCCEEDED;
    }
    ns = span > 0 ? rdp_srv_nspace_find(procs[0].nspace) : NULL;
    if (ns == NULL || span < of || data == NULL || ndata < FRAME_HEAD) {
        rdp_log_warn(SERVER,
                     "%s over processes on %zu of %zu nodes: Slurm's fences "
                     "cannot run over only some of a step's nodes",
                     connect ? "connect" : "disconnect", span, of);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    /* from the key alone: a failed node's frame must name the same
     * Slurm collective as the others' */
    copies =
        (size_t)ns->size + 1
        + 2 * (frame_hash(data + FRAME_HEAD, ndata - FRAME_HEAD) % RING_NAMES)
        + (connect ? 0 : 1);
    return rdp_srv_slurm_ring(ns->name, copies, info, ninfo, data, ndata,
                              rdp_srv_coll_host_modex_cb, cbdata);
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

/* True when @a data is the frame of a connect or disconnect to run as
 * Slurm's ring (conndisc_contribute): the host call is not told its
 * tracker, its contribution says it. */
static bool slurm_frame(const char *data, size_t ndata)
{
    rdp_rbuf_t rb;
    uint32_t magic = 0;

    rdp_rbuf_init(&rb, data, ndata);
    return data != NULL && rdp_srv_host_is_slurmstepd()
           && rdp_unpack_u32(&rb, &magic) == PMIX_SUCCESS
           && magic == RING_MAGIC;
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

    if (slurm_frame(data, ndata)) {
        return ring_instead(true, procs, nprocs, info, ninfo, data, ndata,
                            cbdata);
    }
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
    pmix_status_t rc = PMIX_ERR_NOT_SUPPORTED;

    if (slurm_frame(data, ndata)) {
        return ring_instead(false, procs, nprocs, info, ninfo, data, ndata,
                            cbdata);
    }
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
    .upcall               = "connect",
    .reply_cmd            = RDP_CMD_CONNECT_PROCS_ACK,
    .engine               = true,
    .pass_failure         = true,
    .host_provides        = connect_host_provides,
    .host_call            = connect_host_call,
    .init                 = conndisc_init,
    .contribute           = conndisc_contribute,
    .failure_contribution = conndisc_failure,
    .result               = conndisc_result,
};

const rdp_srv_coll_ops_t rdp_srv_disconnect_ops = {
    .upcall               = "disconnect",
    .reply_cmd            = RDP_CMD_DISCONNECT_PROCS_ACK,
    .engine               = true,
    .pass_failure         = true,
    .host_provides        = disconnect_host_provides,
    .host_call            = disconnect_host_call,
    .init                 = conndisc_init,
    .contribute           = conndisc_contribute,
    .failure_contribution = conndisc_failure,
    .result               = conndisc_result,
};
