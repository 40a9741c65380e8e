/* coll.c - local aggregation of fence, connect and disconnect */
#include "config.h"
#include "core/server/coll.h"
#include "core/server/connect.h"
#include "core/server/group.h"
#include "coll/coll.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A tracker collects the local participants of one collective (coll.h has
 * the per-operation table).  Its key is usually (operation, canonical
 * participant set, sequence number), where the
 * sequence number counts how many collectives of that signature the
 * arriving client has started: every participant calls collectives over
 * the same set in the same order, so the n-th call of each lands in the
 * same tracker and concurrent operations over the same procs never mix.
 *
 * A failed tracker stays as a tombstone while participants that have not
 * arrived may still come, so they get the same error instead of waiting
 * in a fresh tracker.
 */

typedef rdp_srv_coll_t coll_t;
typedef rdp_srv_coll_lpart_t lpart_t;

#define COLL_GATHER RDP_SRV_COLL_GATHER
#define COLL_HOST   RDP_SRV_COLL_HOST
#define COLL_DONE   RDP_SRV_COLL_DONE

/* What differs per operation (coll.h). */
static const rdp_srv_coll_ops_t *const coll_ops[RDP_SRV_COLL_NOPS] = {
    [RDP_SRV_COLL_FENCE]      = &rdp_srv_fence_ops,
    [RDP_SRV_COLL_CONNECT]    = &rdp_srv_connect_ops,
    [RDP_SRV_COLL_DISCONNECT] = &rdp_srv_disconnect_ops,
};

static const rdp_srv_coll_ops_t *ops_of(const coll_t *coll)
{
    return coll_ops[coll->op];
}

/* ---- canonical participant sets ---- */

static int cmp_proc(const void *a, const void *b)
{
    const pmix_proc_t *x = a, *y = b;
    int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);

    if (c != 0) {
        return c;
    }
    return x->rank < y->rank ? -1 : (x->rank > y->rank ? 1 : 0);
}

size_t rdp_srv_procs_canonical(pmix_proc_t *procs, size_t nprocs)
{
    size_t out = 0;

    if (nprocs == 0) {
        return 0;
    }
    qsort(procs, nprocs, sizeof(*procs), cmp_proc);
    for (size_t i = 0; i < nprocs;) {
        size_t j = i;

        /* one nspace: [i, j) */
        while (j < nprocs
               && strncmp(procs[j].nspace, procs[i].nspace, PMIX_MAX_NSLEN)
                      == 0) {
            j++;
        }
        if (procs[j - 1].rank == PMIX_RANK_WILDCARD) {
            /* WILDCARD sorts after every real rank and covers them */
            procs[out++] = procs[j - 1];
        } else {
            for (size_t k = i; k < j; k++) {
                if (k == i || procs[k].rank != procs[k - 1].rank) {
                    procs[out++] = procs[k];
                }
            }
        }
        i = j;
    }
    return out;
}

pmix_status_t rdp_srv_coll_signature(uint8_t op, const pmix_proc_t *procs,
                                     size_t nprocs, uint8_t **sig_p,
                                     size_t *len_p)
{
    size_t len = 1, pos = 0;
    uint8_t *sig;

    for (size_t i = 0; i < nprocs; i++) {
        len += strnlen(procs[i].nspace, PMIX_MAX_NSLEN) + 1 + 4;
    }
    sig = rdp_malloc(len);
    if (sig == NULL) {
        return PMIX_ERR_NOMEM;
    }
    sig[pos++] = op;
    for (size_t i = 0; i < nprocs; i++) {
        size_t n   = strnlen(procs[i].nspace, PMIX_MAX_NSLEN);
        uint32_t r = procs[i].rank;

        memcpy(sig + pos, procs[i].nspace, n);
        pos += n;
        sig[pos++] = '\0';
        for (int b = 0; b < 4; b++) {
            sig[pos++] = (uint8_t)(r >> (8 * b));
        }
    }
    *sig_p = sig;
    *len_p = len;
    return PMIX_SUCCESS;
}

/* ---- tracker lifetime ---- */

static void coll_free(coll_t *coll)
{
    if (coll->ctx != NULL && ops_of(coll)->ctx_free != NULL) {
        ops_of(coll)->ctx_free(coll->ctx);
    }
    rdp_timer_destroy(coll->timer);
    PMIX_INFO_FREE(coll->info, coll->ninfo);
    rdp_free(coll->procs);
    rdp_free(coll->parts);
    rdp_free(coll->key);
    rdp_free(coll);
}

static void coll_remove(coll_t *coll)
{
    rdp_hash_remove(&rdp_srv.colls, coll->key, coll->keylen);
    rdp_hash_remove_u64(&rdp_srv.coll_ids, coll->id);
    coll_free(coll);
}

static bool client_departed(const char *nspace, pmix_rank_t rank)
{
    rdp_srv_client_t *c = rdp_srv_client_find(nspace, rank);

    return c != NULL
           && (c->state == RDP_SRV_CLIENT_FINALIZED
               || c->state == RDP_SRV_CLIENT_TERMINATED);
}

/* Free a finished tracker once no participant can still arrive. */
static void coll_maybe_free(coll_t *coll)
{
    if (coll->state != COLL_DONE) {
        return;
    }
    for (size_t i = 0; i < coll->nparts; i++) {
        const lpart_t *p = &coll->parts[i];

        if (!p->arrived && !client_departed(p->nspace, p->rank)) {
            return;
        }
    }
    coll_remove(coll);
}

static lpart_t *coll_part(coll_t *coll, const char *nspace, pmix_rank_t rank)
{
    for (size_t i = 0; i < coll->nparts; i++) {
        if (coll->parts[i].rank == rank
            && strncmp(coll->parts[i].nspace, nspace, PMIX_MAX_NSLEN) == 0) {
            return &coll->parts[i];
        }
    }
    return NULL;
}

/* Answer every arrived participant, then retire the tracker. */
static void coll_finish(coll_t *coll, pmix_status_t status)
{
    rdp_ipc_blob_t *blob = NULL;
    rdp_buf_t buf;
    int shm_fd = -1;

    if (coll->state == COLL_DONE) {
        return;
    }
    coll->state  = COLL_DONE;
    coll->status = status;
    if (coll->timer != NULL) {
        rdp_timer_cancel(coll->timer);
    }
    rdp_buf_init(&buf);
    if (status == PMIX_SUCCESS && ops_of(coll)->reply != NULL) {
        /* packed once; every participant gets the same bytes */
        pmix_status_t st = rdp_pack_i32(&buf, PMIX_SUCCESS);

        if (st == PMIX_SUCCESS) {
            st = ops_of(coll)->reply(coll, &buf, &shm_fd);
        }
        if (st != PMIX_SUCCESS) {
            if (shm_fd >= 0) {
                close(shm_fd);
                shm_fd = -1;
            }
            coll->status = status = st;
            buf.size              = 0;
        }
    }
    if (buf.size == 0 && rdp_pack_i32(&buf, status) != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        coll_maybe_free(coll);
        return;
    }
    rdp_log_debug(SERVER, "collective %" PRIu64 ": answer packed", coll->id);
    rdp_srv_bcast_answer(coll, buf.data, buf.size, shm_fd);
    if (rdp_ipc_blob_create(&buf, &blob) != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        if (shm_fd >= 0) {
            close(shm_fd);
        }
        coll_maybe_free(coll);
        return;
    }
    rdp_buf_cleanup(&buf);
    for (size_t i = 0; i < coll->nparts; i++) {
        rdp_srv_peer_t *peer;

        if (!coll->parts[i].arrived || coll->parts[i].bcast) {
            continue; /* not here, or answered through the board */
        }
        peer = rdp_srv_peer_find(coll->parts[i].peer_id);
        if (peer == NULL || peer->state != RDP_SRV_PEER_READY) {
            continue;
        }
        if (shm_fd >= 0) {
            /* each queued reply holds its own duplicate of the memfd */
            rdp_ipc_send_blob_fd(peer->conn, ops_of(coll)->reply_cmd,
                                 coll->parts[i].tag, blob, shm_fd);
        } else {
            rdp_ipc_send_blob(peer->conn, ops_of(coll)->reply_cmd,
                              coll->parts[i].tag, blob);
        }
    }
    if (shm_fd >= 0) {
        close(shm_fd);
    }
    rdp_ipc_blob_unref(blob);
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(SERVER, "collective %" PRIu64 " failed: %s", coll->id,
                      rdp_status_name(status));
    }
    coll_maybe_free(coll);
}

static void coll_timeout(void *arg)
{
    coll_t *coll = arg;

    rdp_log_warn(SERVER,
                 "collective %" PRIu64 " timed out with %zu of %zu "
                 "local participants",
                 coll->id, coll->narrived, coll->nparts);
    coll_finish(coll, PMIX_ERR_TIMEOUT);
}

/* ---- host upcalls ---- */

typedef struct coll_hop {
    uint64_t coll_id;
    char *data; /* the contribution until the host takes it */
    size_t ndata;
    rdp_srv_host_reply_t reply; /* the host's answer, released on the loop */
    /* a failed collective passed up (host_pass_failure): what the host holds
     * until it calls back, as the tracker may be gone by then */
    pmix_proc_t *procs;
    size_t nprocs;
    pmix_info_t *info;
    size_t ninfo;
} coll_hop_t;

static void coll_hop_free(coll_hop_t *hop)
{
    rdp_free(hop->data);
    rdp_free(hop->procs);
    rdp_info_array_free(hop->info, hop->ninfo);
    rdp_free(hop);
}

/*
 * Where the inter-node part of a collective lands, whoever ran it: the
 * engine (every server's block) or the host (one opaque block of origin
 * RDP_SRV_XCHG_HOST).  If the tracker still waits, the operation takes
 * the blocks (ops->result) and the participants are answered.
 */
static void coll_result(uint64_t coll_id, pmix_status_t status,
                        const rdp_srv_xchg_block_t *blocks, size_t nblocks)
{
    coll_t *coll = rdp_hash_get_u64(&rdp_srv.coll_ids, coll_id);

    if (coll == NULL || coll->state != COLL_HOST) {
        return; /* gone or timed out meanwhile: nothing to release */
    }
    coll->xchg = 0;
    rdp_log_debug(SERVER,
                  "collective %" PRIu64 ": exchange ended (%s, %zu blocks)",
                  coll->id, rdp_status_name(status), nblocks);
    if (status == PMIX_SUCCESS && ops_of(coll)->result != NULL) {
        status = ops_of(coll)->result(coll, blocks, nblocks);
    }
    rdp_log_debug(SERVER, "collective %" PRIu64 ": result taken", coll->id);
    coll_finish(coll, status);
}

/* rdp_srv_xchg_done_fn of the engine part; @a arg is the tracker id. */
static void coll_xchg_done(pmix_status_t status,
                           const rdp_srv_xchg_block_t *blocks, size_t nblocks,
                           void *arg)
{
    coll_result((uint64_t)(uintptr_t)arg, status, blocks, nblocks);
}

static void coll_host_done_on_loop(void *arg)
{
    coll_hop_t *hop            = arg;
    rdp_srv_xchg_block_t block = {.origin = RDP_SRV_XCHG_HOST,
                                  .data   = hop->reply.data,
                                  .len    = hop->reply.ndata};

    if (rdp_srv.active) {
        coll_result(hop->coll_id, hop->reply.status, &block,
                    hop->reply.status == PMIX_SUCCESS ? 1 : 0);
    }
    rdp_srv_host_reply_release(&hop->reply);
    coll_hop_free(hop);
}

/* Any thread, from inside the host's callback: never calls into the host.
 * Without a loop the server is gone; the host's buffer is then not given
 * back rather than released under the host's own lock. */
static void coll_hop_post(coll_hop_t *hop)
{
    if (rdp_rt.loop == NULL
        || rdp_loop_post(rdp_rt.loop, coll_host_done_on_loop, hop)
               != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "host's fence reply after server shutdown "
                              "dropped");
        coll_hop_free(hop);
    }
}

void rdp_srv_coll_host_modex_cb(pmix_status_t status, const char *data,
                                size_t ndata, void *cbdata,
                                pmix_release_cbfunc_t release_fn,
                                void *release_cbdata)
{
    coll_hop_t *hop = cbdata;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_FENCE, &hop->reply, release_fn,
                                  release_cbdata);
    rdp_srv_host_reply_keep(&hop->reply, status, data, ndata, release_fn,
                            release_cbdata);
    coll_hop_post(hop);
    RDP_SRV_HOST_CB_LEAVE();
}

void rdp_srv_coll_host_op_cb(pmix_status_t status, void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_CONNECT);
    coll_hop_t *hop = cbdata;

    rdp_srv_host_reply_keep(&hop->reply, status, NULL, 0, NULL, NULL);
    coll_hop_post(hop);
    RDP_SRV_HOST_CB_LEAVE();
}

static bool host_handles(uint8_t op)
{
    return coll_ops[op]->host_provides();
}

/* True when the host runs the inter-node part of an operation that passes
 * failures up to it (fences). */
static bool host_runs_fence(const coll_t *coll)
{
    return ops_of(coll)->pass_failure && !coll->all_local
           && host_handles(coll->op) && !rdp_srv_coll_engine_handles(coll);
}

/* The info of @a coll plus PMIX_LOCAL_COLLECTIVE_STATUS = @a status, as a
 * copy of its own. */
static pmix_status_t info_with_status(const coll_t *coll, pmix_status_t status,
                                      pmix_info_t **info_p, size_t *ninfo_p)
{
    pmix_info_t *tmp = rdp_calloc(coll->ninfo + 1, sizeof(*tmp));
    pmix_status_t rc;

    if (tmp == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (coll->ninfo > 0) {
        memcpy(tmp, coll->info, coll->ninfo * sizeof(*tmp)); /* shallow */
    }
    PMIX_INFO_LOAD(&tmp[coll->ninfo], PMIX_LOCAL_COLLECTIVE_STATUS, &status,
                   PMIX_STATUS);
    rc = rdp_info_array_copy(info_p, tmp, coll->ninfo + 1);
    rdp_free(tmp);
    if (rc == PMIX_SUCCESS) {
        *ninfo_p = coll->ninfo + 1;
    }
    return rc;
}

/*
 * Host-delegated fences: this node's part of @a coll failed (a local
 * participant left), and its local participants are answered here.  The
 * host is still called, without data and with the Standard's
 * PMIX_LOCAL_COLLECTIVE_STATUS, so that a host that honours it can end
 * the fence on the other nodes, and so that hosts that count fences per
 * participant set stay in step across nodes.  What the host answers is
 * dropped: the tracker is done.
 */
/* What a failed tracker hands the host in place of no data
 * (ops->failure_contribution), into hop->data. */
static pmix_status_t failure_data(coll_t *coll, pmix_status_t status,
                                  coll_hop_t *hop)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (ops_of(coll)->failure_contribution == NULL) {
        return PMIX_SUCCESS;
    }
    rdp_buf_init(&buf);
    rc = ops_of(coll)->failure_contribution(coll, status, &buf);
    if (rc == PMIX_SUCCESS && buf.size > 0) {
        hop->data = rdp_buf_take(&buf, &hop->ndata);
    }
    rdp_buf_cleanup(&buf);
    return rc;
}

static void host_pass_failure(coll_t *coll, pmix_status_t status)
{
    coll_hop_t *hop = rdp_calloc(1, sizeof(*hop));
    pmix_status_t rc;

    if (hop == NULL) {
        rdp_log_error(SERVER,
                      "out of memory passing fence %" PRIu64 " up to the host",
                      coll->id);
        return;
    }
    hop->coll_id = coll->id;
    hop->procs   = rdp_malloc(coll->nprocs * sizeof(*hop->procs));
    rc           = hop->procs != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS) {
        memcpy(hop->procs, coll->procs, coll->nprocs * sizeof(*hop->procs));
        hop->nprocs = coll->nprocs;
        rc          = info_with_status(coll, status, &hop->info, &hop->ninfo);
    }
    if (rc == PMIX_SUCCESS) {
        rc = failure_data(coll, status, hop);
    }
    if (rc == PMIX_SUCCESS) {
        rc = ops_of(coll)->host_call(hop->procs, hop->nprocs, hop->info,
                                     hop->ninfo, hop->data, hop->ndata, hop);
    }
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
        hop->data = NULL; /* the host's now (ops->host_call) */
    }
    if (rc == PMIX_SUCCESS) {
        return; /* freed when the host calls back */
    }
    if (rc != PMIX_OPERATION_SUCCEEDED) {
        rdp_log_warn(SERVER, "host refused failed fence %" PRIu64 ": %s",
                     coll->id, rdp_status_name(rc));
    }
    coll_hop_free(hop);
}

/* True when the engine runs this collective's inter-server part: an
 * operation the engine can run, over processes on other nodes, while the
 * engine is connected (it wins over the host's upcall, rdpmix.h). */
bool rdp_srv_coll_engine_handles(const coll_t *coll)
{
    return ops_of(coll)->engine && !coll->all_local && !coll->foreign
           && rdp_srv_engine_active();
}

/* Append this server's contribution, if the operation collects one. */
static pmix_status_t coll_contribute(coll_t *coll, rdp_buf_t *buf)
{
    if (!coll->collect || ops_of(coll)->contribute == NULL) {
        return PMIX_SUCCESS;
    }
    return ops_of(coll)->contribute(coll, buf);
}

/* Every local participant is here: hand the fence to the engine. */
static void coll_engine_start(coll_t *coll)
{
    static const uint8_t headroom[RDP_COLL_HEADROOM];
    rdp_buf_t buf;
    pmix_status_t rc = PMIX_SUCCESS;
    void *own_buf    = NULL;
    size_t size      = 0;
    size_t contrib_len = 0;
    uint64_t id        = coll->id;

    rdp_buf_init(&buf);
    if (coll->collect) {
        /* the same contribution the host-delegated path hands to the
         * host, behind room for the engine's block header: the engine
         * sends it from this very buffer */
        if (ops_of(coll)->take_contribution == NULL
            || !ops_of(coll)->take_contribution(coll, &buf)) {
            rc = rdp_buf_append(&buf, headroom, sizeof(headroom));
            if (rc == PMIX_SUCCESS) {
                rc = coll_contribute(coll, &buf);
            }
        }
        own_buf = rdp_buf_take(&buf, &size);
    }
    rdp_buf_cleanup(&buf);
    if (rc != PMIX_SUCCESS) {
        rdp_free(own_buf);
    } else {
        rdp_srv_xchg_args_t args = {
            .key          = coll->key,
            .keylen       = coll->keylen,
            .procs        = coll->procs,
            .nprocs       = coll->nprocs,
            .collect      = coll->collect,
            .timeout      = coll->timeout,
            .own_buf      = own_buf, /* taken over */
            .len          = (own_buf != NULL) ? size - sizeof(headroom) : 0,
            .own_unneeded = ops_of(coll)->result_without_own,
        };

        contrib_len = args.len;

        coll->state = COLL_HOST;
        rc          = rdp_srv_xchg_start(&args, coll_xchg_done,
                                         (void *)(uintptr_t)coll->id, &coll->xchg);
    }
    if (rc != PMIX_SUCCESS) {
        coll->state = COLL_GATHER;
        coll_finish(coll, rc);
    } else if (ops_of(coll)->prepare != NULL) {
        /* the exchange is posted (its send under way): meanwhile, unless
         * it already ended */
        coll_t *c = rdp_hash_get_u64(&rdp_srv.coll_ids, id);

        if (c == coll && c->state == COLL_HOST) {
            ops_of(coll)->prepare(coll, contrib_len);
        }
    }
}

/* Every local participant is here. */
static void coll_all_arrived(coll_t *coll)
{
    coll_hop_t *hop;
    pmix_status_t rc;

    if (rdp_srv_coll_engine_handles(coll)) {
        coll_engine_start(coll);
        return;
    }
    if (!host_handles(coll->op)) {
        /* all participants are local (checked at creation) */
        coll_finish(coll, PMIX_SUCCESS);
        return;
    }
    hop = rdp_calloc(1, sizeof(*hop));
    if (hop == NULL) {
        coll_finish(coll, PMIX_ERR_NOMEM);
        return;
    }
    hop->coll_id = coll->id;
    if (coll->collect && ops_of(coll)->contribute != NULL) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        rc = coll_contribute(coll, &buf);
        if (rc != PMIX_SUCCESS) {
            rdp_buf_cleanup(&buf);
            coll_hop_free(hop);
            coll_finish(coll, rc);
            return;
        }
        hop->data = rdp_buf_take(&buf, &hop->ndata);
    }
    coll->state = COLL_HOST;
    rc          = ops_of(coll)->host_call(coll->procs, coll->nprocs, coll->info,
                                          coll->ninfo, hop->data, hop->ndata, hop);
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
        /* the contribution now belongs to the host, which frees it (ORTE
         * and PRRTE load it into a buffer of their own, as OpenPMIx
         * servers expect); the hop is freed on this thread later */
        hop->data = NULL;
    }
    if (rc == PMIX_SUCCESS) {
        return;
    }
    /* the host will not call back */
    coll_hop_free(hop);
    coll_finish(coll, rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
}

/* ---- creating a tracker ---- */

/* Local participants of the canonical set; all_local tells whether the
 * set has no process elsewhere. */
static pmix_status_t coll_build_parts(coll_t *coll)
{
    size_t n = 0;

    coll->all_local = true;
    for (size_t i = 0; i < coll->nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(coll->procs[i].nspace);

        if (ns == NULL) { /* another launcher's job (connect.h) */
            coll->all_local = false;
        } else if (coll->procs[i].rank == PMIX_RANK_WILDCARD) {
            n += ns->nlocal;
            if (ns->nlocal < ns->size) {
                coll->all_local = false;
            }
        } else if (rdp_srv_nspace_is_local(ns, coll->procs[i].rank)) {
            n++;
        } else {
            coll->all_local = false;
        }
    }
    coll->parts = rdp_calloc(n + 1, sizeof(*coll->parts));
    if (coll->parts == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < coll->nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(coll->procs[i].nspace);

        if (ns == NULL) {
            continue;
        }
        if (coll->procs[i].rank == PMIX_RANK_WILDCARD) {
            for (size_t k = 0; k < ns->nlocal; k++) {
                coll->parts[coll->nparts].nspace = coll->procs[i].nspace;
                coll->parts[coll->nparts].rank   = ns->local_ranks[k];
                coll->nparts++;
            }
        } else if (rdp_srv_nspace_is_local(ns, coll->procs[i].rank)) {
            coll->parts[coll->nparts].nspace = coll->procs[i].nspace;
            coll->parts[coll->nparts].rank   = coll->procs[i].rank;
            coll->nparts++;
        }
    }
    return PMIX_SUCCESS;
}

static void read_directives(coll_t *coll)
{
    for (size_t i = 0; i < coll->ninfo; i++) {
        const pmix_info_t *in = &coll->info[i];

        if (PMIX_CHECK_KEY(in, PMIX_COLLECT_DATA)) {
            coll->collect = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_TIMEOUT)) {
            uint64_t t;

            if (rdp_srv_value_to_u64(&in->value, &t)) {
                coll->timeout = (double)t;
            }
        }
    }
}

pmix_status_t rdp_srv_coll_create(uint8_t op, pmix_proc_t *procs, size_t nprocs,
                                  pmix_info_t *info, size_t ninfo, uint8_t *key,
                                  size_t keylen, bool by_seq,
                                  rdp_srv_coll_t **coll_p)
{
    coll_t *coll = NULL;
    pmix_status_t status;

    if (op < RDP_SRV_COLL_NOPS && coll_ops[op] != NULL) {
        coll = rdp_calloc(1, sizeof(*coll));
    }
    if (coll == NULL) {
        rdp_free(procs);
        PMIX_INFO_FREE(info, ninfo);
        rdp_free(key);
        return op < RDP_SRV_COLL_NOPS && coll_ops[op] != NULL
                   ? PMIX_ERR_NOMEM
                   : PMIX_ERR_BAD_PARAM;
    }
    coll->id     = rdp_srv_next_id();
    coll->op     = op;
    coll->by_seq = by_seq;
    coll->procs  = procs;
    coll->nprocs = nprocs;
    coll->info   = info;
    coll->ninfo  = ninfo;
    coll->key    = key;
    coll->keylen = keylen;
    read_directives(coll);
    status = coll_build_parts(coll);
    if (status == PMIX_SUCCESS && ops_of(coll)->init != NULL) {
        status = ops_of(coll)->init(coll);
    }
    if (status != PMIX_SUCCESS) {
        coll_free(coll);
        return status;
    }
    status = rdp_hash_set(&rdp_srv.colls, key, keylen, coll, NULL);
    if (status != PMIX_SUCCESS) {
        coll_free(coll);
        return status;
    }
    status = rdp_hash_set_u64(&rdp_srv.coll_ids, coll->id, coll, NULL);
    if (status != PMIX_SUCCESS) {
        rdp_hash_remove(&rdp_srv.colls, key, keylen);
        coll_free(coll);
        return status;
    }

    /* decided now for everyone: not possible, or already doomed */
    if (!coll->all_local && !host_handles(op)
        && !rdp_srv_coll_engine_handles(coll)) {
        rdp_log_error(SERVER,
                      "collective over processes on other nodes "
                      "needs the host's %s upcall, which it does "
                      "not provide",
                      ops_of(coll)->upcall);
        coll->state  = COLL_DONE;
        coll->status = PMIX_ERR_NOT_SUPPORTED;
    } else {
        for (size_t i = 0; i < coll->nparts; i++) {
            if (client_departed(coll->parts[i].nspace, coll->parts[i].rank)) {
                if (host_runs_fence(coll)) {
                    host_pass_failure(coll, PMIX_ERR_PROC_TERM_WO_SYNC);
                }
                coll->state  = COLL_DONE;
                coll->status = PMIX_ERR_PROC_TERM_WO_SYNC;
                break;
            }
        }
        if (coll->state == COLL_GATHER && !coll->all_local && coll->by_seq
            && rdp_srv_depart_dooms(coll->procs, coll->nprocs, key, keylen)) {
            rdp_log_info(SERVER,
                         "collective %" PRIu64 " fails: a participant on "
                         "another node left before joining it",
                         coll->id);
            coll->state  = COLL_DONE;
            coll->status = PMIX_ERR_PROC_TERM_WO_SYNC;
        }
    }
    if (coll->state == COLL_GATHER && coll->timeout > 0) {
        if (rdp_timer_create(rdp_rt.loop, coll_timeout, coll, &coll->timer)
            == PMIX_SUCCESS) {
            rdp_timer_start(coll->timer, coll->timeout);
        }
    }
    *coll_p = coll;
    return PMIX_SUCCESS;
}

/* ---- a participant arrives ---- */

bool rdp_srv_procs_contain(const pmix_proc_t *procs, size_t n,
                           const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(procs[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0
            && (procs[i].rank == p->rank
                || procs[i].rank == PMIX_RANK_WILDCARD)) {
            return true;
        }
    }
    return false;
}

pmix_status_t rdp_srv_coll_key_seq(rdp_srv_client_t *client, uint8_t op,
                                   const pmix_proc_t *procs, size_t nprocs,
                                   uint8_t **key_p, size_t *keylen_p)
{
    return rdp_srv_coll_key_seq_id(client, op, procs, nprocs, NULL, 0, key_p,
                                   keylen_p);
}

pmix_status_t rdp_srv_coll_key_seq_id(rdp_srv_client_t *client, uint8_t op,
                                      const pmix_proc_t *procs, size_t nprocs,
                                      const void *id, size_t idlen,
                                      uint8_t **key_p, size_t *keylen_p)
{
    uint8_t *sig = NULL, *key;
    size_t siglen;
    uint64_t seq;
    pmix_status_t status;

    status = rdp_srv_coll_signature(op, procs, nprocs, &sig, &siglen);
    if (status == PMIX_SUCCESS && id != NULL) {
        /* [signature]['#'][id]: a signature ends in a 4-byte rank, so no
         * id-less signature of the same procs looks like this one */
        key = rdp_realloc(sig, siglen + 1 + idlen);
        if (key == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            sig         = key;
            sig[siglen] = '#';
            memcpy(sig + siglen + 1, id, idlen);
            siglen += 1 + idlen;
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(sig);
        return status;
    }
    seq = (uint64_t)(uintptr_t)rdp_hash_get(&client->coll_seq, sig, siglen) + 1;
    status = rdp_hash_set(&client->coll_seq, sig, siglen,
                          (void *)(uintptr_t)seq, NULL);
    key =
        status == PMIX_SUCCESS ? rdp_realloc(sig, siglen + sizeof(seq)) : NULL;
    if (key == NULL) {
        rdp_free(sig);
        return status != PMIX_SUCCESS ? status : PMIX_ERR_NOMEM;
    }
    memcpy(key + siglen, &seq, sizeof(seq));
    *key_p    = key;
    *keylen_p = siglen + sizeof(seq);
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_coll_key_id(uint8_t op, const pmix_proc_t *procs,
                                  size_t nprocs, const void *id, size_t idlen,
                                  uint8_t **key_p, size_t *keylen_p)
{
    const uint8_t *p = id;
    uint64_t h       = 1469598103934665603ULL; /* FNV-1a */
    uint8_t *sig     = NULL, *key;
    size_t siglen;
    pmix_status_t status;

    for (size_t i = 0; i < idlen; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    status = rdp_srv_coll_signature(op, procs, nprocs, &sig, &siglen);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    key = rdp_realloc(sig, siglen + sizeof(h));
    if (key == NULL) {
        rdp_free(sig);
        return PMIX_ERR_NOMEM;
    }
    memcpy(key + siglen, &h, sizeof(h));
    *key_p    = key;
    *keylen_p = siglen + sizeof(h);
    return PMIX_SUCCESS;
}

rdp_srv_coll_t *rdp_srv_coll_find(const uint8_t *key, size_t keylen)
{
    return rdp_hash_get(&rdp_srv.colls, key, keylen);
}

pmix_status_t rdp_srv_coll_check_procs(const rdp_srv_client_t *client,
                                       pmix_proc_t *procs, size_t *nprocs_p)
{
    size_t nprocs = *nprocs_p;

    if (nprocs == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns;

        if (procs[i].rank >= PMIX_RANK_VALID
            && procs[i].rank != PMIX_RANK_WILDCARD) {
            return PMIX_ERR_BAD_PARAM;
        }
        ns = rdp_srv_nspace_find(procs[i].nspace);
        if (ns == NULL || !ns->registered) {
            return PMIX_ERR_NOT_FOUND;
        }
        if (procs[i].rank != PMIX_RANK_WILDCARD && !ns->nodata
            && procs[i].rank >= ns->size) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    nprocs = rdp_srv_procs_canonical(procs, nprocs);
    if (!rdp_srv_procs_contain(procs, nprocs, &client->proc)) {
        rdp_log_error(SERVER,
                      "%s:%u asked for a collective it is not part "
                      "of",
                      client->proc.nspace, client->proc.rank);
        return PMIX_ERR_BAD_PARAM;
    }
    *nprocs_p = nprocs;
    return PMIX_SUCCESS;
}

void rdp_srv_coll_arrive(rdp_srv_coll_t *coll, rdp_srv_peer_t *peer,
                         uint32_t tag)
{
    rdp_srv_client_t *client = peer->client;
    uint16_t reply_cmd       = ops_of(coll)->reply_cmd;
    lpart_t *part = coll_part(coll, client->proc.nspace, client->proc.rank);

    if (part == NULL || part->arrived) {
        /* cannot happen for a well-behaved local client */
        rdp_log_error(SERVER,
                      "%s:%u is not an expected participant of "
                      "collective %" PRIu64,
                      client->proc.nspace, client->proc.rank, coll->id);
        rdp_srv_reply_status(peer, reply_cmd, tag, PMIX_ERR_BAD_PARAM);
        return;
    }
    part->arrived = true;
    part->peer_id = peer->id;
    part->tag     = tag;
    coll->narrived++;
    if (coll->state == COLL_DONE) {
        rdp_srv_reply_status(peer, reply_cmd, tag, coll->status);
        coll_maybe_free(coll);
        return;
    }
    if (coll->state == COLL_GATHER && ops_of(coll)->arrived != NULL) {
        ops_of(coll)->arrived(coll, client->proc.nspace, client->proc.rank);
    }
    if (coll->narrived == coll->nparts && coll->state == COLL_GATHER) {
        coll_all_arrived(coll);
    }
}

/* The fence number a client gave is its tracker's (key ends in the
 * 1-based per-signature sequence number). */
static bool bcast_seq_ok(const coll_t *coll, uint64_t n)
{
    uint64_t seq;

    if (coll->keylen < sizeof(seq)) {
        return false;
    }
    memcpy(&seq, coll->key + coll->keylen - sizeof(seq), sizeof(seq));
    if (seq != n + 1) {
        rdp_log_error(SERVER,
                      "client's fence number %" PRIu64 " is not the "
                      "server's %" PRIu64 ": answered by message",
                      n, seq - 1);
        return false;
    }
    return true;
}

void rdp_srv_coll_request(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          rdp_rbuf_t *rb)
{
    rdp_srv_client_t *client = peer->client;
    uint8_t op               = cmd == RDP_CMD_FENCE ? RDP_SRV_COLL_FENCE
                               : cmd == RDP_CMD_CONNECT_PROCS ? RDP_SRV_COLL_CONNECT
                                                              : RDP_SRV_COLL_DISCONNECT;
    pmix_proc_t *procs       = NULL;
    size_t nprocs            = 0;
    pmix_info_t *info        = NULL;
    size_t ninfo             = 0;
    uint8_t *key             = NULL;
    rdp_srv_cnct_dirs_t dirs = {0};
    size_t keylen;
    coll_t *coll;
    lpart_t *part;
    bool bcast   = false;
    uint64_t bcn = 0;
    pmix_status_t status;

    status = rdp_unpack_proc_array(rb, &procs, &nprocs);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(rb, &info, &ninfo);
    }
    if (status == PMIX_SUCCESS && op == RDP_SRV_COLL_FENCE) {
        status = rdp_srv_bcast_parse(client, rb, &bcast, &bcn);
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed collective request %u from %s:%u: "
                      "%s; connection closed",
                      cmd, client->proc.nspace, client->proc.rank,
                      rdp_status_name(status));
        rdp_free(procs);
        PMIX_INFO_FREE(info, ninfo);
        rdp_srv_peer_drop(peer, status);
        return;
    }
    status = rdp_srv_coll_check_procs(client, procs, &nprocs);
    if (status == PMIX_ERR_NOT_FOUND && op != RDP_SRV_COLL_FENCE) {
        status = rdp_srv_connect_foreign(client, op, procs, &nprocs);
    }
    if (status == PMIX_SUCCESS && op != RDP_SRV_COLL_FENCE) {
        status = rdp_srv_connect_dirs(info, ninfo, &dirs);
    }
    if (status == PMIX_SUCCESS && dirs.optional) {
        /* optional participation: run by group.c (docs/design.md) */
        rdp_srv_connect_raise(op == RDP_SRV_COLL_CONNECT, client, procs, nprocs,
                              info, ninfo);
        status = rdp_srv_group_connect(peer, op == RDP_SRV_COLL_CONNECT, tag,
                                       coll_ops[op]->reply_cmd, procs, nprocs,
                                       dirs.id, info, ninfo);
        if (status == PMIX_SUCCESS) {
            rdp_free(procs);
            PMIX_INFO_FREE(info, ninfo);
            return;
        }
        goto reply;
    }
    if (status == PMIX_SUCCESS) {
        /* connects with an id count their own sequence numbers */
        status = rdp_srv_coll_key_seq_id(client, op, procs, nprocs, dirs.id,
                                         dirs.id != NULL ? strlen(dirs.id) : 0,
                                         &key, &keylen);
    }
    if (status != PMIX_SUCCESS) {
        goto reply;
    }
    coll = rdp_srv_coll_find(key, keylen);
    if (coll == NULL) {
        status = rdp_srv_coll_create(op, procs, nprocs, info, ninfo, key,
                                     keylen, true, &coll);
        procs  = NULL;
        info   = NULL;
        ninfo  = 0;
        key    = NULL;
        if (status != PMIX_SUCCESS) {
            goto reply;
        }
    }
    rdp_free(key);
    rdp_free(procs);
    PMIX_INFO_FREE(info, ninfo);
    if (op != RDP_SRV_COLL_FENCE) {
        rdp_srv_connect_arrived(coll, client);
    }
    part = coll_part(coll, client->proc.nspace, client->proc.rank);
    if (part != NULL && !part->arrived) {
        /* fence_board.c checks the set is the client's whole job; the
         * client's count of such fences must be this tracker's */
        part->bcast   = bcast && coll->by_seq && bcast_seq_ok(coll, bcn);
        part->bcast_n = bcn;
    }
    rdp_srv_coll_arrive(coll, peer, tag);
    return;

reply:
    rdp_free(key);
    rdp_free(procs);
    PMIX_INFO_FREE(info, ninfo);
    rdp_srv_reply_status(peer, coll_ops[op]->reply_cmd, tag, status);
}

/* ---- departures ---- */

static coll_t **snapshot(size_t *n_p)
{
    rdp_hash_entry_t *ent;
    coll_t **all;
    size_t i, n = 0;

    all = rdp_calloc(rdp_srv.coll_ids.count + 1, sizeof(*all));
    if (all == NULL) {
        rdp_log_error(SERVER, "out of memory walking collectives");
        *n_p = 0;
        return NULL;
    }
    rdp_hash_for_each(ent, &rdp_srv.coll_ids, i) {
        all[n++] = ent->value;
    }
    *n_p = n;
    return all;
}

/* Fail a tracker that can no longer complete.  When the engine runs its
 * inter-server part, that part is cancelled here and its completion then
 * answers the participants, so nothing of it stays behind. */
static void coll_fail(coll_t *coll, pmix_status_t status)
{
    if (coll->state == COLL_HOST && coll->xchg != 0
        && rdp_srv_xchg_cancel(coll->xchg, status)) {
        return;
    }
    if (coll->state == COLL_GATHER && host_runs_fence(coll)) {
        host_pass_failure(coll, status);
    }
    coll_finish(coll, status);
}

void rdp_srv_coll_client_gone(rdp_srv_client_t *client)
{
    size_t n;
    coll_t **all = snapshot(&n);

    /* the other servers may wait for it in fences it never joins */
    rdp_srv_depart_announce(client);

    for (size_t i = 0; i < n; i++) {
        coll_t *coll  = all[i];
        lpart_t *part = coll_part(coll, client->proc.nspace, client->proc.rank);

        if (part == NULL) {
            continue;
        }
        if (coll->state != COLL_DONE
            && (!part->arrived || client->state == RDP_SRV_CLIENT_TERMINATED)) {
            rdp_log_info(SERVER, "%s:%u left: collective %" PRIu64 " fails",
                         client->proc.nspace, client->proc.rank, coll->id);
            coll_fail(coll, PMIX_ERR_PROC_TERM_WO_SYNC);
        } else {
            coll_maybe_free(coll);
        }
    }
    rdp_free(all);
}

void rdp_srv_coll_remote_gone(void)
{
    size_t n;
    coll_t **all = snapshot(&n);

    for (size_t i = 0; i < n; i++) {
        coll_t *coll = all[i];

        if (coll->state == COLL_DONE || coll->all_local || !coll->by_seq
            || !rdp_srv_depart_dooms(coll->procs, coll->nprocs, coll->key,
                                     coll->keylen)) {
            continue;
        }
        rdp_log_info(SERVER,
                     "collective %" PRIu64 " fails: a participant on "
                     "another node left without joining it",
                     coll->id);
        coll_fail(coll, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    rdp_free(all);
}

void rdp_srv_coll_nspace_gone(rdp_srv_nspace_t *ns)
{
    size_t n;
    coll_t **all = snapshot(&n);

    rdp_srv_depart_nspace_gone(ns->name);

    for (size_t i = 0; i < n; i++) {
        coll_t *coll  = all[i];
        bool involved = false;

        for (size_t k = 0; k < coll->nprocs && !involved; k++) {
            involved =
                strncmp(coll->procs[k].nspace, ns->name, PMIX_MAX_NSLEN) == 0;
        }
        if (!involved) {
            continue;
        }
        uint64_t id = coll->id;

        if (coll->state != COLL_DONE) {
            coll_finish(coll, PMIX_ERR_NOT_FOUND);
        }
        /* coll_finish may have freed it already */
        coll = rdp_hash_get_u64(&rdp_srv.coll_ids, id);
        if (coll != NULL) {
            coll_remove(coll);
        }
    }
    rdp_free(all);
}

void rdp_srv_coll_cleanup(void)
{
    size_t n;
    coll_t **all = snapshot(&n);

    for (size_t i = 0; i < n; i++) {
        coll_remove(all[i]);
    }
    rdp_free(all);
    for (size_t op = 0; op < RDP_SRV_COLL_NOPS; op++) {
        if (coll_ops[op] != NULL && coll_ops[op]->cleanup != NULL) {
            coll_ops[op]->cleanup();
        }
    }
    rdp_srv_depart_cleanup();
}
