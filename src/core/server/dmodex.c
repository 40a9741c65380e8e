/* dmodex.c - direct modex between servers in engine mode */
#include "config.h"
#include "core/server/nswait.h"
#include "core/server/p2p.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/*
 * A GET for a key of a remote rank that we do not hold (no data of the
 * rank, or data without that key: it may have committed it after the
 * fence that brought the rest) sends a request for (rank, key) to the
 * rank's server on channel RDP_SRV_CH_DMDX_REQ; requests queued during one
 * loop pass travel together, one message per server (p2p.c batches).  The
 * owner answers on RDP_SRV_CH_DMDX_RSP once the rank has committed that
 * key (a modex waiter, like a local GET), with the bundle of its
 * remote-visible data, or with an error when the rank finalizes or leaves
 * first.  A failed server fails the requests waiting on it.
 *
 * Wire: REQ = u32 n, n x (string nspace, u32 rank, string key);
 *       RSP = u32 n, n x (string nspace, u32 rank, string key, i32 status,
 *             u64 len, len bytes of bundle).
 * Everything here belongs to the loop thread.
 */


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


/* outstanding requests: rdp_srv_want_key -> (void *)(server + 1) */
static rdp_hash_t dm_out;
static bool dm_open;

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

    rdp_hash_remove(&dm_out, key, keylen);
    rdp_srv_modex_fail_key(w->proc.nspace, w->proc.rank, want_key(w), status);
}

/* p2p unsent: a batch of requests could not be sent. */
static void requests_unsent(uint32_t peer, uint32_t count, rdp_rbuf_t *rb,
                            pmix_status_t status)
{
    rdp_log_warn(SERVER, "cannot ask server %u for %u ranks' data: %s", peer,
                 count, rdp_status_name(status));
    for (uint32_t i = 0; i < count; i++) {
        want_t w;

        if (unpack_want(rb, &w) != PMIX_SUCCESS) {
            break;
        }
        dm_fail(&w, status == PMIX_ERR_NOMEM ? status : PMIX_ERR_UNREACH);
    }
}

/* ---- direct modex: the requesting side ---- */

void rdp_srv_dmodex_request(const char *nspace, pmix_rank_t rank,
                            const char *want)
{
    char key[RDP_SRV_WANT_KEY_MAX];
    size_t keylen        = rdp_srv_want_key(nspace, rank, want, key);
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
    uint32_t srv;
    rdp_buf_t *b;
    size_t mark;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!dm_open || ns == NULL || rdp_hash_get(&dm_out, key, keylen) != NULL) {
        return;
    }
    if (!rdp_srv_engine_server_of(ns, rank, &srv)) {
        /* the data may still come with a fence that collects it */
        rdp_log_debug(SERVER, "no server known for %s:%u: waiting", nspace,
                      rank);
        return;
    }
    if (srv == rdp_srv_engine_me()) {
        return; /* ours: it comes with the rank's commit */
    }
    if (rdp_srv_p2p_peer_failed(srv)) {
        rdp_srv_modex_fail_key(nspace, rank, want, PMIX_ERR_UNREACH);
        return;
    }
    b      = rdp_srv_p2p_batch(srv, RDP_SRV_CH_DMDX_REQ);
    mark   = b->size;
    status = pack_want(b, nspace, rank, want);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set(&dm_out, key, keylen,
                              (void *)(uintptr_t)(srv + 1), NULL);
    }
    if (status != PMIX_SUCCESS) {
        b->size = mark;
        rdp_srv_modex_fail_key(nspace, rank, want, status);
        return;
    }
    rdp_srv_p2p_batch_add(srv, RDP_SRV_CH_DMDX_REQ);
    rdp_log_trace(SERVER, "asking server %u for %s of %s:%u", srv,
                  want != NULL ? want : "the data", nspace, rank);
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
        if ((uintptr_t)rdp_hash_get(&dm_out, key, keylen) != peer + 1) {
            /* not asked of this server: ignore, but skip the bytes */
            rdp_log_debug(SERVER, "unrequested data of %s:%u from server %u",
                          proc->nspace, proc->rank, peer);
            rb->ptr += len;
            rb->left -= len;
            continue;
        }
        rdp_hash_remove(&dm_out, key, keylen);
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
    rdp_buf_t *b     = rdp_srv_p2p_batch(req->peer, RDP_SRV_CH_DMDX_RSP);
    size_t mark;
    pmix_status_t st;

    if (!dm_open || b == NULL) {
        rdp_free(req);
        return;
    }
    mark = b->size;
    if (status != PMIX_SUCCESS) {
        ndata = 0;
    }
    st = pack_want(b, req->want.proc.nspace, req->want.proc.rank,
                   want_key(&req->want));
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_i32(b, status);
    }
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_u64(b, ndata);
    }
    if (st == PMIX_SUCCESS && ndata > 0) {
        st = rdp_buf_append(b, data, ndata);
    }
    if (st != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot answer server %u for %s:%u: %s",
                      req->peer, req->want.proc.nspace, req->want.proc.rank,
                      rdp_status_name(st));
        b->size = mark;
    } else {
        rdp_srv_p2p_batch_add(req->peer, RDP_SRV_CH_DMDX_RSP);
    }
    rdp_free(req);
}

/* Serve @a req of a registered nspace; takes @a req. */
static void serve(serve_req_t *req)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(req->want.proc.nspace);

    if (ns != NULL && ns->registered
        && !rdp_srv_nspace_is_local(ns, req->want.proc.rank)) {
        rdp_log_warn(SERVER,
                     "server %u asked here for %s:%u, which "
                     "is not on this node",
                     req->peer, req->want.proc.nspace, req->want.proc.rank);
        serve_done(PMIX_ERR_NOT_FOUND, NULL, 0, req);
        return;
    }
    /* answers now or once the rank has committed the key */
    rdp_srv_modex_serve(&req->want.proc, want_key(&req->want), serve_done, req);
}

/* ---- requests that arrive before the nspace is registered here ----
 * A server may register a job later than the other servers start their
 * ranks (a slow node).  A request for one of its ranks that arrives
 * before then was answered NOT_FOUND at once, and the asking rank's
 * PMIx_Get failed although the data was on its way.  It waits for the
 * registration instead, at most EARLY_KEEP seconds (the nspace may as
 * well be one that ended here), and is answered NOT_FOUND after that. */
#define EARLY_KEEP 60.0

/* nswait: the request's nspace is registered now */
static bool early_try_serve(void *arg)
{
    serve_req_t *req           = arg;
    const rdp_srv_nspace_t *ns = rdp_srv_nspace_find(req->want.proc.nspace);

    if (!dm_open || ns == NULL || !ns->registered) {
        return false;
    }
    serve(req);
    return true;
}

static void early_expired(void *arg)
{
    serve_req_t *req = arg;

    rdp_log_warn(SERVER,
                 "server %u asked for %s:%u, whose nspace was not "
                 "registered here within %.0f s",
                 req->peer, req->want.proc.nspace, req->want.proc.rank,
                 EARLY_KEEP);
    serve_done(PMIX_ERR_NOT_FOUND, NULL, 0, req);
}

static const rdp_srv_nswait_ops_t early_ops = {
    .try_run = early_try_serve,
    .expired = early_expired,
    .discard = rdp_free,
};

/* Keep @a req until its nspace is registered here; takes @a req. */
static void keep_early(serve_req_t *req)
{
    if (rdp_srv_nswait_hold(&early_ops, req, EARLY_KEEP) != PMIX_SUCCESS) {
        serve_done(PMIX_ERR_NOMEM, NULL, 0, req);
        return;
    }
    rdp_log_debug(SERVER,
                  "server %u asked for %s:%u before its nspace was "
                  "registered here: kept",
                  req->peer, req->want.proc.nspace, req->want.proc.rank);
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
        if (ns == NULL || !ns->registered) {
            keep_early(req);
        } else {
            serve(req);
        }
    }
    if (status != PMIX_SUCCESS || rb->left != 0) {
        rdp_log_error(SERVER, "malformed direct modex request from server %u",
                      peer);
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

/* p2p peer_failed: fail the requests waiting on that server. */
static void peer_failed(uint32_t peer, pmix_status_t status)
{
    rdp_hash_entry_t *ent;
    want_t *wants;
    size_t i, n = 0;

    if (!dm_open) {
        return;
    }
    wants = rdp_calloc(dm_out.count + 1, sizeof(*wants));
    if (wants == NULL) {
        rdp_log_error(SERVER, "out of memory failing requests to server %u",
                      peer);
        return;
    }
    rdp_hash_for_each(ent, &dm_out, i) {
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

/* the requests' loss is the asking side's to handle */
static const rdp_srv_p2p_handler_t req_handler = {
    .recv   = handle_requests,
    .unsent = requests_unsent,
};

/* an answer that cannot be sent is logged; the asker hears of the failure */
static const rdp_srv_p2p_handler_t rsp_handler = {
    .recv        = handle_responses,
    .peer_failed = peer_failed,
};

pmix_status_t rdp_srv_dmodex_open(void)
{
    pmix_status_t status = rdp_hash_init(&dm_out, 0);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    rdp_srv_p2p_register(RDP_SRV_CH_DMDX_REQ, &req_handler);
    rdp_srv_p2p_register(RDP_SRV_CH_DMDX_RSP, &rsp_handler);
    dm_open = true;
    return PMIX_SUCCESS;
}

void rdp_srv_dmodex_close(void)
{
    if (!dm_open) {
        return;
    }
    rdp_srv_p2p_register(RDP_SRV_CH_DMDX_REQ, NULL);
    rdp_srv_p2p_register(RDP_SRV_CH_DMDX_RSP, NULL);
    rdp_hash_cleanup(&dm_out);
    rdp_srv_nswait_discard(&early_ops);
    dm_open     = false;
}
