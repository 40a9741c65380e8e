/* engine.c - engine mode: fences and direct modex between servers (rdpmix.h) */
#include "config.h"
#include "core/server/server_int.h"
#include "coll/coll.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "ucx/ucx.h"
#include "core/util/status.h"

#include <rdpmix.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>

/*
 * In engine mode the servers of a session run the inter-node part of
 * fences and direct modex themselves, over the collective engine (src/coll)
 * on the UCX transport (src/ucx).  Server number i hosts the processes
 * whose registered PMIX_NODEID is i.
 *
 * Fences: coll.c hands a fence whose local participants have all arrived
 * to rdp_srv_engine_fence, which maps every participant to its server and
 * starts a barrier (no PMIX_COLLECT_DATA) or an allgather of this server's
 * bundle over the sorted list of those servers.  The operation id hashes
 * the tracker key (operation, canonical participants, sequence number), so
 * every server derives the same id and parallel fences never collide.
 *
 * Direct modex: a GET for a key of a remote rank that we do not hold (no
 * data of the rank, or data without that key: it may have committed it
 * after the fence that brought the rest) sends a request for (rank, key)
 * to the rank's server on the P2P channel; requests queued during one loop
 * iteration travel together, one message per server.  The owner answers
 * once the rank has committed that key (a modex waiter, like a local GET),
 * with the bundle of its remote-visible data, or with an error when the
 * rank finalizes or leaves first.  A failed server fails the requests
 * waiting on it.
 *
 * Departures: a local client that finalizes or terminates is announced
 * to every other server (depart.c has what is sent and why), batched like
 * direct modex, so that fences elsewhere that wait for it fail at once.
 *
 * Everything here belongs to the loop thread.
 */

enum {
    CH_DMDX_REQ = 1, /* u32 n, n x (string nspace, u32 rank, string key) */
    CH_DMDX_RSP = 2, /* u32 n, n x (string nspace, u32 rank, string key,
                        i32 status, u64 len, len bytes of bundle) */
    CH_DEPART   = 3  /* u32 n, n x departure (depart.c) */
};

typedef struct batch {
    rdp_buf_t buf; /* entries */
    uint32_t count;
} batch_t;

/* A fence running in the engine. */
typedef struct efence {
    rdp_list_t link; /* eng.fences */
    uint64_t coll_id;
    uint64_t setkey; /* hash of the participant set (size class memory) */
    uint64_t seq;
    uint32_t nservers;
    enum rdp_coll_kind kind; /* the engine's key, for cancelling it */
    uint64_t sig;
    uint64_t opid;
} efence_t;

/* Size of the last allgather result over one participant set. */
typedef struct sizemem {
    uint64_t seq;
    uint64_t total;
} sizemem_t;

/* (rank, key) of a request; key NULL: any data of the rank. */
typedef struct want {
    pmix_proc_t proc;
    bool any_key;
    pmix_key_t key;
} want_t;

/* A request of another server waiting for a local rank's commit. */
typedef struct serve_req {
    uint32_t peer;
    want_t want;
} serve_req_t;

typedef struct engine_state {
    bool wanted;              /* RDPMIX_ENGINE at init */
    uint32_t index_hint;      /* RDPMIX_SERVER_INDEX, UINT32_MAX: none */
    const rdp_ucx_api_t *ucx; /* the UCX transport (loaded at init) */
    rdp_ucx_tl_t *tl;
    /* the transport the engine runs over (UCX, or a test's) */
    const rdp_tl_ops_t *tl_ops;
    void *tl_ctx;
    rdp_coll_engine_t *coll;
    uint32_t me;
    uint32_t n;
    bool connected;
    rdp_list_t fences;  /* efence_t */
    rdp_hash_t sizes;   /* setkey (u64) -> sizemem_t */
    rdp_hash_t dm_out;  /* rdp_srv_want_key -> (void *)(server + 1) */
    batch_t *reqs;      /* per server: requests to send */
    batch_t *rsps;      /* per server: answers to send */
    batch_t *deps;      /* per server: departures to announce */
    rdp_timer_t *flush; /* sends the batches */
    uint64_t next_msg_id;
} engine_state_t;

static engine_state_t eng = {.index_hint = UINT32_MAX};

static void p2p_recv(void *arg, uint32_t peer, uint32_t channel, uint64_t id,
                     const void *data, size_t len);
static void p2p_peer_failed(void *arg, uint32_t peer, pmix_status_t status);

static const rdp_coll_p2p_ops_t p2p_ops = {
    .recv        = p2p_recv,
    .peer_failed = p2p_peer_failed,
};

/* ---- small helpers ---- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* Server number of (ns, rank) from its registered PMIX_NODEID. */
static bool server_of(rdp_srv_nspace_t *ns, pmix_rank_t rank, uint32_t *srv_p)
{
    const pmix_value_t *v =
        rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, rank, PMIX_NODEID);
    uint64_t id;

    if (v == NULL || !rdp_srv_value_to_u64(v, &id) || id >= eng.n) {
        return false;
    }
    *srv_p = (uint32_t)id;
    return true;
}

bool rdp_srv_engine_active(void)
{
    return eng.connected;
}

/* ---- batches ---- */

static void batches_free(batch_t *b)
{
    if (b == NULL) {
        return;
    }
    for (uint32_t i = 0; i < eng.n; i++) {
        rdp_buf_cleanup(&b[i].buf);
    }
    rdp_free(b);
}

static void flush_soon(void)
{
    if (eng.flush != NULL) {
        rdp_timer_start(eng.flush, 0);
    }
}

static const char *want_key(const want_t *w)
{
    return w->any_key ? NULL : w->key;
}

static pmix_status_t pack_want(rdp_buf_t *buf, const char *nspace,
                               pmix_rank_t rank, const char *key)
{
    pmix_status_t status = rdp_pack_string(buf, nspace);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, key);
    }
    return status;
}

/* Parse the (nspace, rank, key) that starts an entry. */
static pmix_status_t unpack_want(rdp_rbuf_t *rb, want_t *w)
{
    const char *key = NULL;
    uint32_t rank;
    pmix_status_t status;

    memset(w, 0, sizeof(*w));
    status = rdp_unpack_string_into(rb, w->proc.nspace, sizeof(w->proc.nspace));
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string_view(rb, &key);
    }
    if (status == PMIX_SUCCESS && key != NULL
        && (key[0] == '\0'
            || strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        w->proc.rank = rank;
        w->any_key   = key == NULL;
        PMIX_LOAD_KEY(w->key, key);
    }
    return status;
}

static size_t want_table_key(const want_t *w, char *out)
{
    return rdp_srv_want_key(w->proc.nspace, w->proc.rank, want_key(w), out);
}

/* Forget an outstanding request and fail its waiters. */
static void dm_fail(const want_t *w, pmix_status_t status)
{
    char key[RDP_SRV_WANT_KEY_MAX];
    size_t keylen = want_table_key(w, key);

    rdp_hash_remove(&eng.dm_out, key, keylen);
    rdp_srv_modex_fail_key(w->proc.nspace, w->proc.rank, want_key(w), status);
}

static void send_batch(uint32_t peer, uint32_t channel, batch_t *b)
{
    rdp_buf_t msg;
    rdp_iov_t iov[2];
    pmix_status_t status;

    rdp_buf_init(&msg);
    status = rdp_pack_u32(&msg, b->count);
    if (status == PMIX_SUCCESS) {
        iov[0].base = msg.data;
        iov[0].len  = msg.size;
        iov[1].base = b->buf.data;
        iov[1].len  = b->buf.size;
        status = rdp_coll_p2p_send(eng.coll, peer, channel, ++eng.next_msg_id,
                                   iov, 2);
    }
    rdp_buf_cleanup(&msg);
    if (status != PMIX_SUCCESS && channel == CH_DMDX_REQ) {
        rdp_rbuf_t rb;

        rdp_log_warn(SERVER, "cannot ask server %u for %u ranks' data: %s",
                     peer, b->count, rdp_status_name(status));
        rdp_rbuf_init(&rb, b->buf.data, b->buf.size);
        for (uint32_t i = 0; i < b->count; i++) {
            want_t w;

            if (unpack_want(&rb, &w) != PMIX_SUCCESS) {
                break;
            }
            dm_fail(&w, status == PMIX_ERR_NOMEM ? status : PMIX_ERR_UNREACH);
        }
    } else if (status != PMIX_SUCCESS) {
        rdp_log_warn(SERVER, "cannot send to server %u: %s", peer,
                     rdp_status_name(status));
    }
    b->count    = 0;
    b->buf.size = 0;
}

static void flush_fired(void *arg)
{
    if (!eng.connected) {
        return;
    }
    for (uint32_t s = 0; s < eng.n; s++) {
        if (eng.reqs[s].count > 0) {
            send_batch(s, CH_DMDX_REQ, &eng.reqs[s]);
        }
        if (eng.rsps[s].count > 0) {
            send_batch(s, CH_DMDX_RSP, &eng.rsps[s]);
        }
        if (eng.deps[s].count > 0) {
            send_batch(s, CH_DEPART, &eng.deps[s]);
        }
    }
}

/* ---- direct modex: the requesting side ---- */

void rdp_srv_engine_dmodex(const char *nspace, pmix_rank_t rank,
                           const char *want)
{
    char key[RDP_SRV_WANT_KEY_MAX];
    size_t keylen        = rdp_srv_want_key(nspace, rank, want, key);
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
    uint32_t srv;
    batch_t *b;
    size_t mark;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!eng.connected || ns == NULL
        || rdp_hash_get(&eng.dm_out, key, keylen) != NULL) {
        return;
    }
    if (!server_of(ns, rank, &srv)) {
        /* the data may still come with a fence that collects it */
        rdp_log_debug(SERVER, "no server known for %s:%u: waiting", nspace,
                      rank);
        return;
    }
    if (srv == eng.me) {
        return; /* ours: it comes with the rank's commit */
    }
    if (rdp_coll_engine_peer_failed(eng.coll, srv)) {
        rdp_srv_modex_fail_key(nspace, rank, want, PMIX_ERR_UNREACH);
        return;
    }
    b      = &eng.reqs[srv];
    mark   = b->buf.size;
    status = pack_want(&b->buf, nspace, rank, want);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set(&eng.dm_out, key, keylen,
                              (void *)(uintptr_t)(srv + 1), NULL);
    }
    if (status != PMIX_SUCCESS) {
        b->buf.size = mark;
        rdp_srv_modex_fail_key(nspace, rank, want, status);
        return;
    }
    b->count++;
    rdp_log_trace(SERVER, "asking server %u for %s of %s:%u", srv,
                  want != NULL ? want : "the data", nspace, rank);
    flush_soon();
}

static void handle_responses(uint32_t peer, rdp_rbuf_t *rb)
{
    uint32_t count;
    pmix_status_t status = rdp_unpack_u32(rb, &count);

    for (uint32_t i = 0; status == PMIX_SUCCESS && i < count; i++) {
        want_t w;
        const pmix_proc_t *proc = &w.proc;
        int32_t st              = 0;
        uint64_t len            = 0;
        char key[RDP_SRV_WANT_KEY_MAX];
        size_t keylen;

        status = unpack_want(rb, &w);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_i32(rb, &st);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &len);
        }
        if (status == PMIX_SUCCESS && len > rb->left) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status != PMIX_SUCCESS) {
            break;
        }
        keylen = want_table_key(&w, key);
        if ((uintptr_t)rdp_hash_get(&eng.dm_out, key, keylen) != peer + 1) {
            /* not asked of this server: ignore, but skip the bytes */
            rdp_log_debug(SERVER, "unrequested data of %s:%u from server %u",
                          proc->nspace, proc->rank, peer);
            rb->ptr += len;
            rb->left -= len;
            continue;
        }
        rdp_hash_remove(&eng.dm_out, key, keylen);
        if (st == PMIX_SUCCESS && len > 0) {
            st = rdp_srv_store_bundles(rb->ptr, (size_t)len);
        }
        rb->ptr += len;
        rb->left -= len;
        /* storing answered the waiters whose key came; the key asked
         * for may still be missing (committed in another scope) */
        if (st == PMIX_SUCCESS
            && !rdp_srv_modex_has(proc->nspace, proc->rank, want_key(&w))) {
            st = PMIX_ERR_NOT_FOUND;
        }
        if (st != PMIX_SUCCESS) {
            rdp_srv_modex_fail_key(proc->nspace, proc->rank, want_key(&w),
                                   st < 0 ? st : PMIX_ERR_NOT_FOUND);
        }
    }
    if (status != PMIX_SUCCESS || rb->left != 0) {
        rdp_log_error(SERVER, "malformed direct modex answer from server %u",
                      peer);
    }
}

/* ---- direct modex: the owning side ---- */

/* pmix_dmodex_response_fn_t of rdp_srv_modex_serve */
static void serve_done(pmix_status_t status, char *data, size_t ndata,
                       void *cbdata)
{
    serve_req_t *req = cbdata;
    batch_t *b;
    size_t mark;
    pmix_status_t st;

    if (!eng.connected || req->peer >= eng.n) {
        rdp_free(req);
        return;
    }
    b    = &eng.rsps[req->peer];
    mark = b->buf.size;
    if (status != PMIX_SUCCESS) {
        ndata = 0;
    }
    st = pack_want(&b->buf, req->want.proc.nspace, req->want.proc.rank,
                   want_key(&req->want));
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_i32(&b->buf, status);
    }
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_u64(&b->buf, ndata);
    }
    if (st == PMIX_SUCCESS && ndata > 0) {
        st = rdp_buf_append(&b->buf, data, ndata);
    }
    if (st != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot answer server %u for %s:%u: %s",
                      req->peer, req->want.proc.nspace, req->want.proc.rank,
                      rdp_status_name(st));
        b->buf.size = mark;
    } else {
        b->count++;
        flush_soon();
    }
    rdp_free(req);
}

static void handle_requests(uint32_t peer, rdp_rbuf_t *rb)
{
    uint32_t count;
    pmix_status_t status = rdp_unpack_u32(rb, &count);

    for (uint32_t i = 0; status == PMIX_SUCCESS && i < count; i++) {
        serve_req_t *req = rdp_calloc(1, sizeof(*req));
        rdp_srv_nspace_t *ns;

        if (req == NULL) {
            rdp_log_error(SERVER, "out of memory serving server %u", peer);
            return;
        }
        status = unpack_want(rb, &req->want);
        if (status != PMIX_SUCCESS || req->want.proc.rank >= PMIX_RANK_VALID) {
            rdp_free(req);
            status = PMIX_ERR_UNPACK_FAILURE;
            break;
        }
        req->peer = peer;
        ns        = rdp_srv_nspace_find(req->want.proc.nspace);
        if (ns != NULL && ns->registered
            && !rdp_srv_nspace_is_local(ns, req->want.proc.rank)) {
            rdp_log_warn(SERVER,
                         "server %u asked here for %s:%u, which "
                         "is not on this node",
                         peer, req->want.proc.nspace, req->want.proc.rank);
            serve_done(PMIX_ERR_NOT_FOUND, NULL, 0, req);
            continue;
        }
        /* answers now or once the rank has committed the key */
        rdp_srv_modex_serve(&req->want.proc, want_key(&req->want), serve_done,
                            req);
    }
    if (status != PMIX_SUCCESS || rb->left != 0) {
        rdp_log_error(SERVER, "malformed direct modex request from server %u",
                      peer);
    }
}

/* ---- departures ---- */

void rdp_srv_engine_departed(rdp_srv_client_t *client)
{
    rdp_buf_t one;
    pmix_status_t status;

    /* a client that never connected joined nothing and waits for nothing;
     * one that finalized and is then deregistered was announced once */
    if (!eng.connected || eng.n < 2 || client->pid == 0
        || client->departure_told) {
        return;
    }
    client->departure_told = true;
    rdp_buf_init(&one);
    status = rdp_srv_depart_pack(client, &one);
    for (uint32_t s = 0; status == PMIX_SUCCESS && s < eng.n; s++) {
        if (s == eng.me) {
            continue;
        }
        status = rdp_buf_append(&eng.deps[s].buf, one.data, one.size);
        if (status == PMIX_SUCCESS) {
            eng.deps[s].count++;
        }
    }
    rdp_buf_cleanup(&one);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(
            SERVER, "cannot tell the other servers that %s:%u left: %s",
            client->proc.nspace, client->proc.rank, rdp_status_name(status));
        return;
    }
    flush_soon();
}

static void handle_departures(uint32_t peer, rdp_rbuf_t *rb)
{
    uint32_t count;
    pmix_status_t status = rdp_unpack_u32(rb, &count);

    for (uint32_t i = 0; status == PMIX_SUCCESS && i < count; i++) {
        status = rdp_srv_depart_unpack(rb);
    }
    if (status != PMIX_SUCCESS || rb->left != 0) {
        rdp_log_error(SERVER, "malformed departures from server %u: %s", peer,
                      rdp_status_name(status));
    }
    /* the records that were read count, even after a malformed one */
    rdp_srv_coll_remote_gone();
}

bool rdp_srv_engine_fence_cancel(uint64_t coll_id, pmix_status_t status)
{
    efence_t *f;

    if (!eng.connected) {
        return false;
    }
    rdp_list_for_each(f, &eng.fences, link) {
        if (f->coll_id == coll_id) {
            return rdp_coll_cancel(eng.coll, f->kind, f->sig, f->opid, status)
                   == PMIX_SUCCESS;
        }
    }
    return false;
}

static void p2p_recv(void *arg, uint32_t peer, uint32_t channel, uint64_t id,
                     const void *data, size_t len)
{
    rdp_rbuf_t rb;

    if (!rdp_srv.active) {
        return;
    }
    rdp_rbuf_init(&rb, data, len);
    switch (channel) {
    case CH_DMDX_REQ:
        handle_requests(peer, &rb);
        break;
    case CH_DMDX_RSP:
        handle_responses(peer, &rb);
        break;
    case CH_DEPART:
        handle_departures(peer, &rb);
        break;
    default:
        rdp_log_warn(SERVER,
                     "dropping a message on unknown channel %u from "
                     "server %u",
                     channel, peer);
        break;
    }
}

/* Inverse of want_table_key. */
static void want_from_table_key(const char *k, size_t klen, want_t *w)
{
    size_t len = strnlen(k, PMIX_MAX_NSLEN);
    size_t off = len + 1 + sizeof(pmix_rank_t);

    memset(w, 0, sizeof(*w));
    memcpy(w->proc.nspace, k, len);
    memcpy(&w->proc.rank, k + len + 1, sizeof(pmix_rank_t));
    w->any_key = klen <= off;
    if (!w->any_key) {
        memcpy(w->key, k + off, klen - off);
    }
}

static void p2p_peer_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    rdp_hash_entry_t *ent;
    want_t *wants;
    size_t i, n = 0;

    wants = rdp_calloc(eng.dm_out.count + 1, sizeof(*wants));
    if (wants == NULL) {
        rdp_log_error(SERVER, "out of memory failing requests to server %u",
                      peer);
        return;
    }
    rdp_hash_for_each(ent, &eng.dm_out, i) {
        if ((uintptr_t)ent->value == peer + 1
            && ent->keylen <= RDP_SRV_WANT_KEY_MAX) {
            want_from_table_key(ent->key, ent->keylen, &wants[n++]);
        }
    }
    if (n > 0) {
        rdp_log_warn(SERVER, "server %u failed (%s): %zu data requests fail",
                     peer, rdp_status_name(status), n);
    } else {
        rdp_log_debug(SERVER, "server %u failed: %s", peer,
                      rdp_status_name(status));
    }
    for (i = 0; i < n; i++) {
        dm_fail(&wants[i], PMIX_ERR_UNREACH);
    }
    rdp_free(wants);
}

/* ---- fences ---- */

static void fence_done(const rdp_coll_result_t *res, void *arg)
{
    efence_t *f          = arg;
    pmix_status_t status = res->status;
    uint64_t total       = 0;

    rdp_list_del(&f->link);
    if (status == PMIX_SUCCESS && res->kind == RDP_COLL_ALLGATHER) {
        for (uint32_t i = 0; i < res->nblocks; i++) {
            total += res->blocks[i].len;
            if (res->blocks[i].origin == eng.me || res->blocks[i].len == 0) {
                continue;
            }
            status = rdp_srv_store_bundles(res->blocks[i].data,
                                           (size_t)res->blocks[i].len);
            if (status != PMIX_SUCCESS) {
                rdp_log_error(SERVER, "fence data from server %u is malformed",
                              res->blocks[i].origin);
                break;
            }
        }
        if (status == PMIX_SUCCESS) {
            sizemem_t *sm = rdp_hash_get_u64(&eng.sizes, f->setkey);

            if (sm == NULL) {
                sm = rdp_calloc(1, sizeof(*sm));
                if (sm != NULL
                    && rdp_hash_set_u64(&eng.sizes, f->setkey, sm, NULL)
                           != PMIX_SUCCESS) {
                    rdp_free(sm);
                    sm = NULL;
                }
            }
            if (sm != NULL) {
                sm->seq   = f->seq;
                sm->total = total;
            }
        }
    } else if (status == PMIX_ERR_PROC_TERM_WO_SYNC) {
        /* cancelled here: a participant left (coll.c logged it) */
        rdp_log_debug(SERVER, "engine fence %" PRIu64 " cancelled", f->coll_id);
    } else if (status != PMIX_SUCCESS) {
        if (res->failed_peer != UINT32_MAX) {
            rdp_log_warn(SERVER,
                         "engine fence %" PRIu64 " over %u servers failed "
                         "(server %u): %s",
                         f->coll_id, f->nservers, res->failed_peer,
                         rdp_status_name(status));
        } else {
            rdp_log_warn(SERVER,
                         "engine fence %" PRIu64 " over %u servers failed: %s",
                         f->coll_id, f->nservers, rdp_status_name(status));
        }
    }
    rdp_srv_coll_engine_done(f->coll_id, status);
    rdp_free(f);
}

/* The sorted servers of the participants; *n_p of them. */
static pmix_status_t fence_servers(const pmix_proc_t *procs, size_t nprocs,
                                   uint32_t **srv_p, uint32_t *n_p)
{
    uint8_t *in = rdp_calloc(eng.n, 1);
    uint32_t *srv, n = 0;

    if (in == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);
        pmix_rank_t lo = procs[i].rank, hi = procs[i].rank;

        if (ns == NULL) {
            rdp_free(in);
            return PMIX_ERR_NOT_FOUND;
        }
        if (lo == PMIX_RANK_WILDCARD) {
            if (ns->size == 0) {
                rdp_log_error(SERVER, "fence over %s:* without a job size",
                              ns->name);
                rdp_free(in);
                return PMIX_ERR_BAD_PARAM;
            }
            lo = 0;
            hi = ns->size - 1;
        }
        for (pmix_rank_t r = lo; r <= hi; r++) {
            uint32_t s;

            if (!server_of(ns, r, &s)) {
                rdp_log_error(SERVER,
                              "fence: %s:%u has no valid %s (0..%u): "
                              "cannot tell its server",
                              ns->name, r, PMIX_NODEID, eng.n - 1);
                rdp_free(in);
                return PMIX_ERR_BAD_PARAM;
            }
            in[s] = 1;
        }
    }
    if (!in[eng.me]) {
        rdp_log_error(SERVER,
                      "fence: no participant has %s %u (this "
                      "server), yet some are local",
                      PMIX_NODEID, eng.me);
        rdp_free(in);
        return PMIX_ERR_BAD_PARAM;
    }
    srv = rdp_malloc(eng.n * sizeof(*srv));
    if (srv == NULL) {
        rdp_free(in);
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t s = 0; s < eng.n; s++) {
        if (in[s]) {
            srv[n++] = s;
        }
    }
    rdp_free(in);
    *srv_p = srv;
    *n_p   = n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_engine_fence(uint64_t coll_id, const pmix_proc_t *procs,
                                   size_t nprocs, const uint8_t *key,
                                   size_t keylen, bool collect, double timeout,
                                   void *own_buf, size_t len)
{
    rdp_coll_args_t args;
    uint32_t *servers = NULL, nservers = 0;
    efence_t *f;
    uint64_t seq = 0;
    sizemem_t *sm;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!eng.connected || keylen < sizeof(seq)) {
        rdp_free(own_buf);
        return PMIX_ERR_INIT;
    }
    status = fence_servers(procs, nprocs, &servers, &nservers);
    if (status != PMIX_SUCCESS) {
        rdp_free(own_buf);
        return status;
    }
    f = rdp_calloc(1, sizeof(*f));
    if (f == NULL) {
        rdp_free(servers);
        rdp_free(own_buf);
        return PMIX_ERR_NOMEM;
    }
    /* the key ends with the sequence number (coll.c, next_key) */
    memcpy(&seq, key + keylen - sizeof(seq), sizeof(seq));
    f->coll_id  = coll_id;
    f->seq      = seq;
    f->setkey   = mix(fnv1a(1469598103934665603ULL, key, keylen - sizeof(seq)));
    f->nservers = nservers;
    memset(&args, 0, sizeof(args));
    args.kind    = collect ? RDP_COLL_ALLGATHER : RDP_COLL_BARRIER;
    args.opid    = mix(f->setkey ^ mix(seq));
    args.parts   = servers;
    args.nparts  = nservers;
    args.own_buf = own_buf; /* rdp_coll_start takes it over */
    args.len     = collect ? len : 0;
    args.timeout = timeout;
    f->kind      = args.kind;
    f->sig       = rdp_coll_signature(servers, nservers);
    f->opid      = args.opid;
    sm           = rdp_hash_get_u64(&eng.sizes, f->setkey);
    if (collect && sm != NULL && sm->seq + 1 == seq) {
        args.size_class = rdp_coll_size_class_of(sm->total, nservers);
    }
    rdp_list_push_back(&eng.fences, &f->link);
    status = rdp_coll_start(eng.coll, &args, fence_done, f);
    rdp_free(servers);
    if (status != PMIX_SUCCESS) {
        rdp_list_del(&f->link);
        rdp_free(f);
        rdp_log_error(SERVER, "cannot start an engine fence: %s",
                      rdp_status_name(status));
        return status;
    }
    rdp_log_debug(SERVER,
                  "fence %" PRIu64 ": engine %s over %u servers (seq %" PRIu64
                  ", %zu bytes here)",
                  coll_id, collect ? "allgather" : "barrier", nservers, seq,
                  collect ? len : (size_t)0);
    return PMIX_SUCCESS;
}

/* ---- lifetime ---- */

pmix_status_t rdp_srv_engine_init(const pmix_info_t *info, size_t ninfo)
{
    rdp_ucx_params_t params;
    uint8_t placeholder[RDP_UCX_KEY_LEN];
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    eng.wanted     = false;
    eng.index_hint = UINT32_MAX;
    for (size_t i = 0; i < ninfo; i++) {
        uint64_t u;

        if (PMIX_CHECK_KEY(&info[i], RDPMIX_ENGINE)) {
            eng.wanted = PMIX_INFO_TRUE(&info[i]);
        } else if (PMIX_CHECK_KEY(&info[i], RDPMIX_SERVER_INDEX)) {
            if (!rdp_srv_value_to_u64(&info[i].value, &u) || u >= UINT32_MAX) {
                rdp_log_error(SERVER, "invalid %s at init",
                              RDPMIX_SERVER_INDEX);
                return PMIX_ERR_BAD_PARAM;
            }
            eng.index_hint = (uint32_t)u;
        }
    }
    if (!eng.wanted) {
        return PMIX_SUCCESS;
    }
    /* the real key comes with rdpmix_engine_connect; until then nothing
     * is accepted (the transport holds early messages unverified) */
    if (getrandom(placeholder, sizeof(placeholder), 0)
        != (ssize_t)sizeof(placeholder)) {
        rdp_log_error(SERVER, "getrandom failed: %m");
        return PMIX_ERR_NOT_AVAILABLE;
    }
    status = rdp_ucx_api_get(&eng.ucx);
    if (status != PMIX_SUCCESS) {
        explicit_bzero(placeholder, sizeof(placeholder));
        return status;
    }
    memset(&params, 0, sizeof(params));
    params.key     = placeholder;
    params.key_len = sizeof(placeholder);
    params.name    = rdp_srv.hostname;
    status         = eng.ucx->create(rdp_rt.loop, &params, &eng.tl);
    explicit_bzero(placeholder, sizeof(placeholder));
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot create the engine's UCX worker: %s",
                      rdp_status_name(status));
        eng.tl = NULL;
        return status;
    }
    eng.tl_ops = eng.ucx->ops();
    eng.tl_ctx = eng.ucx->ctx(eng.tl);
    return PMIX_SUCCESS;
}

void rdp_srv_engine_fini(void)
{
    rdp_list_t *item;

    if (eng.coll != NULL) {
        rdp_coll_engine_set_p2p_handler(eng.coll, NULL, NULL);
        rdp_coll_engine_destroy(eng.coll);
    }
    if (eng.tl != NULL) {
        eng.ucx->destroy(eng.tl);
    }
    rdp_timer_destroy(eng.flush);
    if (eng.connected) {
        rdp_hash_entry_t *ent;
        size_t i;

        /* abandoned collectives never call back */
        while ((item = rdp_list_pop_front(&eng.fences)) != NULL) {
            rdp_free(rdp_container_of(item, efence_t, link));
        }
        rdp_hash_for_each(ent, &eng.sizes, i) {
            rdp_free(ent->value);
        }
        rdp_hash_cleanup(&eng.sizes);
        rdp_hash_cleanup(&eng.dm_out);
    }
    batches_free(eng.reqs);
    batches_free(eng.rsps);
    batches_free(eng.deps);
    memset(&eng, 0, sizeof(eng));
    eng.index_hint = UINT32_MAX;
}

/* Create the engine over the transport of eng.tl_ops/tl_ctx. */
static pmix_status_t engine_start(uint32_t me, uint32_t n)
{
    rdp_coll_engine_config_t cfg;
    pmix_status_t status;

    memset(&cfg, 0, sizeof(cfg));
    cfg.tl_ops    = eng.tl_ops;
    cfg.tl_ctx    = eng.tl_ctx;
    cfg.nuniverse = n;
    cfg.me        = me;
    cfg.loop      = rdp_rt.loop;
    rdp_list_init(&eng.fences);
    eng.me   = me;
    eng.n    = n;
    eng.reqs = rdp_calloc(n, sizeof(*eng.reqs));
    eng.rsps = rdp_calloc(n, sizeof(*eng.rsps));
    eng.deps = rdp_calloc(n, sizeof(*eng.deps));
    if (eng.reqs == NULL || eng.rsps == NULL || eng.deps == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_batches;
    }
    for (uint32_t i = 0; i < n; i++) {
        rdp_buf_init(&eng.reqs[i].buf);
        rdp_buf_init(&eng.rsps[i].buf);
        rdp_buf_init(&eng.deps[i].buf);
    }
    status = rdp_timer_create(rdp_rt.loop, flush_fired, NULL, &eng.flush);
    if (status != PMIX_SUCCESS) {
        goto err_batches;
    }
    status = rdp_hash_init(&eng.sizes, 0);
    if (status != PMIX_SUCCESS) {
        goto err_timer;
    }
    status = rdp_hash_init(&eng.dm_out, 0);
    if (status != PMIX_SUCCESS) {
        goto err_sizes;
    }
    status = rdp_coll_engine_create(&cfg, &eng.coll);
    if (status != PMIX_SUCCESS) {
        goto err_dm_out;
    }
    rdp_coll_engine_set_p2p_handler(eng.coll, &p2p_ops, NULL);
    eng.connected = true;
    return PMIX_SUCCESS;

err_dm_out:
    rdp_hash_cleanup(&eng.dm_out);
err_sizes:
    rdp_hash_cleanup(&eng.sizes);
err_timer:
    rdp_timer_destroy(eng.flush);
    eng.flush = NULL;
err_batches:
    batches_free(eng.reqs);
    batches_free(eng.rsps);
    batches_free(eng.deps);
    eng.reqs = NULL;
    eng.rsps = NULL;
    eng.deps = NULL;
    eng.coll = NULL;
    return status;
}

pmix_status_t rdp_srv_engine_attach(const rdp_tl_ops_t *ops, void *ctx,
                                    uint32_t me, uint32_t n)
{
    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (ops == NULL || n == 0 || me >= n) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!rdp_srv.active || eng.connected || eng.tl != NULL) {
        return PMIX_ERR_INIT;
    }
    eng.tl_ops = ops;
    eng.tl_ctx = ctx;
    return engine_start(me, n);
}

/* ---- rdpmix.h ---- */

typedef struct addr_args {
    pmix_byte_object_t *addr;
} addr_args_t;

static pmix_status_t address_on_loop(void *arg)
{
    addr_args_t *a = arg;
    const void *bytes;
    size_t len;
    pmix_status_t status;

    if (!rdp_srv.active || eng.tl == NULL) {
        return PMIX_ERR_INIT;
    }
    status = eng.ucx->address(eng.tl, &bytes, &len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    /* the caller frees it with free() */
    a->addr->bytes = malloc(len);
    if (a->addr->bytes == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(a->addr->bytes, bytes, len);
    a->addr->size = len;
    return PMIX_SUCCESS;
}

pmix_status_t rdpmix_engine_address(pmix_byte_object_t *addr)
{
    addr_args_t a = {addr};

    if (addr == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    return rdp_runtime_call_sync(address_on_loop, &a);
}

typedef struct connect_args {
    uint32_t me;
    uint32_t n;
    const pmix_byte_object_t *addrs;
    const pmix_byte_object_t *key;
} connect_args_t;

static pmix_status_t connect_on_loop(void *arg)
{
    connect_args_t *a = arg;
    rdp_iov_t *table;
    pmix_status_t status;

    if (!rdp_srv.active || eng.tl == NULL) {
        return PMIX_ERR_INIT;
    }
    if (eng.connected) {
        rdp_log_error(SERVER, "rdpmix_engine_connect: already connected");
        return PMIX_ERR_BAD_PARAM;
    }
    if (eng.index_hint != UINT32_MAX && eng.index_hint != a->me) {
        rdp_log_error(SERVER,
                      "rdpmix_engine_connect: server number %u, but %s "
                      "was %u at init",
                      a->me, RDPMIX_SERVER_INDEX, eng.index_hint);
        return PMIX_ERR_BAD_PARAM;
    }
    table = rdp_calloc(a->n, sizeof(*table));
    if (table == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < a->n; i++) {
        table[i].base = a->addrs[i].bytes;
        table[i].len  = a->addrs[i].size;
    }
    status =
        eng.ucx->set_key(eng.tl, (const uint8_t *)a->key->bytes, a->key->size);
    if (status == PMIX_SUCCESS) {
        status = eng.ucx->connect(eng.tl, a->me, a->n, table);
    }
    rdp_free(table);
    if (status == PMIX_SUCCESS) {
        status = engine_start(a->me, a->n);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "engine connect (server %u of %u) failed: %s",
                      a->me, a->n, rdp_status_name(status));
        /* a transport that connected cannot be connected again: only a
         * new server can retry */
        return status == PMIX_ERR_BAD_PARAM || status == PMIX_ERR_NOMEM
                       || status == PMIX_ERR_INIT
                   ? status
                   : PMIX_ERR_UNREACH;
    }
    rdp_log_info(SERVER, "engine connected: server %u of %u", a->me, a->n);
    return PMIX_SUCCESS;
}

pmix_status_t rdpmix_engine_connect(uint32_t my_index, uint32_t nservers,
                                    const pmix_byte_object_t addrs[],
                                    const pmix_byte_object_t *key)
{
    connect_args_t a = {my_index, nservers, addrs, key};

    if (nservers == 0 || my_index >= nservers || addrs == NULL || key == NULL
        || key->bytes == NULL || key->size != RDPMIX_SESSION_KEY_LEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < nservers; i++) {
        if (i != my_index && (addrs[i].bytes == NULL || addrs[i].size == 0)) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    return rdp_runtime_call_sync(connect_on_loop, &a);
}
