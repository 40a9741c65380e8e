/* modex.c - committed data: COMMIT, GET, direct modex in both directions */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/connect.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/* Everyone waiting for the data of one (nspace, rank). */
typedef struct waitq {
    rdp_list_t head;
    size_t keylen;
    char key[RDP_SRV_RANK_KEY_MAX];
} waitq_t;

enum waiter_kind {
    WAIT_GET,   /* a client's GET */
    WAIT_DMODEX /* the host's PMIx_server_dmodex_request */
};

typedef struct waiter {
    rdp_list_t link;
    waitq_t *q;
    pmix_nspace_t nspace;
    pmix_rank_t rank;
    bool any_key; /* waits for any data of the rank, not for one key */
    pmix_key_t key;
    enum waiter_kind kind;
    uint64_t peer_id;
    uint32_t tag;
    bool with_job;
    pmix_dmodex_response_fn_t cbfunc;
    void *cbdata;
    rdp_timer_t *timer;
} waiter_t;

/* ---- what we hold ---- */

static bool is_reserved_key(const char *key)
{
    /* the Standard reserves keys starting with "pmix" */
    return key != NULL && strncmp(key, "pmix", 4) == 0;
}

bool rdp_srv_modex_has(const char *nspace, pmix_rank_t rank, const char *key)
{
    rdp_srv_nspace_t *ns;

    if (key == NULL) {
        return rdp_kvs_has_rank(rdp_srv.modex, nspace, rank);
    }
    if (rdp_kvs_peek(rdp_srv.modex, nspace, rank, key) != NULL) {
        return true;
    }
    ns = rdp_srv_nspace_find(nspace);
    return ns != NULL && rdp_srv_nspace_has_key(ns, rank, key);
}

static void waiter_set_key(waiter_t *w, const char *key)
{
    w->any_key = key == NULL;
    PMIX_LOAD_KEY(w->key, key);
}

static bool waiter_is_for(const waiter_t *w, const char *key)
{
    return key == NULL ? w->any_key : !w->any_key && strcmp(w->key, key) == 0;
}

/* ---- packing ---- */

pmix_status_t rdp_srv_pack_proc_section(const char *nspace, pmix_rank_t rank,
                                        uint32_t scope_mask, rdp_buf_t *buf)
{
    size_t mark;
    pmix_status_t status =
        rdp_sect_pack_begin(buf, RDP_SECT_PROC, rank, NULL, &mark);

    if (status == PMIX_SUCCESS) {
        status =
            rdp_kvs_pack_rank(rdp_srv.modex, nspace, rank, scope_mask, buf);
    }
    if (status == PMIX_SUCCESS) {
        rdp_sect_pack_end(buf, mark);
    }
    return status;
}

/* What a process on this node may see of (ns, rank)'s committed data:
 * local-visible keys of a local rank; everything we hold of a remote one
 * (only its remote-visible keys ever reach us). */
static uint32_t visible_mask(const rdp_srv_nspace_t *ns, pmix_rank_t rank)
{
    return rdp_srv_nspace_is_local(ns, rank) ? RDP_SCOPES_LOCAL
                                             : RDP_SCOPES_ALL;
}

/* GET_ACK payload: status, bundle of one set. */
static pmix_status_t pack_get_reply(rdp_srv_nspace_t *ns, pmix_rank_t rank,
                                    bool with_job, rdp_buf_t *buf)
{
    rdp_buf_t extra;
    uint32_t nextra = 0;
    pmix_status_t status;

    rdp_buf_init(&extra);
    status = rdp_pack_i32(buf, PMIX_SUCCESS);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, 1);
    }
    if (status == PMIX_SUCCESS && rank < PMIX_RANK_VALID
        && rdp_kvs_has_rank(rdp_srv.modex, ns->name, rank)) {
        status = rdp_srv_pack_proc_section(ns->name, rank,
                                           visible_mask(ns, rank), &extra);
        nextra = 1;
    }
    if (status == PMIX_SUCCESS) {
        if (with_job) {
            status = rdp_srv_nspace_pack_set(ns, &extra, nextra, buf);
        } else {
            status = rdp_pack_string(buf, ns->name);
            if (status == PMIX_SUCCESS) {
                status = rdp_pack_u32(buf, nextra);
            }
            if (status == PMIX_SUCCESS && extra.size > 0) {
                status = rdp_buf_append(buf, extra.data, extra.size);
            }
        }
    }
    rdp_buf_cleanup(&extra);
    return status;
}

static void send_get_reply(rdp_srv_peer_t *peer, uint32_t tag,
                           rdp_srv_nspace_t *ns, pmix_rank_t rank,
                           bool with_job)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = pack_get_reply(ns, rank, with_job, &buf);
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        rdp_srv_reply_status(peer, RDP_CMD_GET_ACK, tag, status);
        return;
    }
    rdp_srv_reply_buf(peer, RDP_CMD_GET_ACK, tag, &buf);
}

/* Bundle of (ns, rank)'s remote-visible data for another server. */
static pmix_status_t pack_remote_bundle(const char *nspace, pmix_rank_t rank,
                                        rdp_buf_t *buf)
{
    pmix_status_t status = rdp_pack_u32(buf, 1);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, nspace);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, 1);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_srv_pack_proc_section(nspace, rank, RDP_SCOPES_REMOTE, buf);
    }
    return status;
}

/* ---- waiters ---- */

static void waiter_free(waiter_t *w)
{
    rdp_timer_destroy(w->timer);
    rdp_free(w);
}

static void waiter_unlink(waiter_t *w)
{
    waitq_t *q = w->q;

    rdp_list_del(&w->link);
    w->q = NULL;
    if (q != NULL && rdp_list_is_empty(&q->head)) {
        rdp_hash_remove(&rdp_srv.waits, q->key, q->keylen);
        rdp_free(q);
    }
}

/* Answer one waiter with the data now stored, or with @a status. */
static void waiter_answer(waiter_t *w, pmix_status_t status)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(w->nspace);

    if (status == PMIX_SUCCESS && ns == NULL) {
        status = PMIX_ERR_NOT_FOUND;
    }
    if (w->kind == WAIT_GET) {
        rdp_srv_peer_t *peer = rdp_srv_peer_find(w->peer_id);

        if (peer == NULL || peer->state != RDP_SRV_PEER_READY) {
            return;
        }
        if (status == PMIX_SUCCESS) {
            send_get_reply(peer, w->tag, ns, w->rank, w->with_job);
        } else {
            rdp_srv_reply_status(peer, RDP_CMD_GET_ACK, w->tag, status);
        }
        return;
    }
    if (status == PMIX_SUCCESS) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        status = pack_remote_bundle(w->nspace, w->rank, &buf);
        if (status == PMIX_SUCCESS) {
            w->cbfunc(PMIX_SUCCESS, (char *)buf.data, buf.size, w->cbdata);
        }
        rdp_buf_cleanup(&buf);
        if (status == PMIX_SUCCESS) {
            return;
        }
    }
    w->cbfunc(status, NULL, 0, w->cbdata);
}

static void waiter_timeout(void *arg)
{
    waiter_t *w = arg;

    rdp_log_debug(SERVER, "wait for data of %s:%u timed out", w->nspace,
                  w->rank);
    waiter_unlink(w);
    waiter_answer(w, PMIX_ERR_TIMEOUT);
    waiter_free(w);
}

static pmix_status_t waiter_add(waiter_t *w, double timeout)
{
    char key[RDP_SRV_RANK_KEY_MAX];
    size_t keylen = rdp_srv_rank_key(w->nspace, w->rank, key);
    waitq_t *q    = rdp_hash_get(&rdp_srv.waits, key, keylen);
    pmix_status_t status;

    if (timeout > 0) {
        status = rdp_timer_create(rdp_rt.loop, waiter_timeout, w, &w->timer);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    if (q == NULL) {
        q = rdp_calloc(1, sizeof(*q));
        if (q == NULL) {
            return PMIX_ERR_NOMEM;
        }
        rdp_list_init(&q->head);
        memcpy(q->key, key, keylen);
        q->keylen = keylen;
        status    = rdp_hash_set(&rdp_srv.waits, key, keylen, q, NULL);
        if (status != PMIX_SUCCESS) {
            rdp_free(q);
            return status;
        }
    }
    rdp_list_push_back(&q->head, &w->link);
    w->q = q;
    if (w->timer != NULL) {
        rdp_timer_start(w->timer, timeout);
    }
    return PMIX_SUCCESS;
}

/* Which waiters of a queue to answer. */
typedef bool (*waiter_pick_t)(const waiter_t *w, const void *arg);

static bool pick_all(const waiter_t *w, const void *arg)
{
    return true;
}

static bool pick_satisfied(const waiter_t *w, const void *arg)
{
    return rdp_srv_modex_has(w->nspace, w->rank, w->any_key ? NULL : w->key);
}

static bool pick_key(const waiter_t *w, const void *arg)
{
    return waiter_is_for(w, arg);
}

/* Detach the waiters of @a q that @a pick chooses (all of them free the
 * queue) and answer them: answering may add waiters, never to the
 * detached batch. */
static void answer_queue(waitq_t *q, waiter_pick_t pick, const void *arg,
                         pmix_status_t status)
{
    rdp_list_t batch;
    rdp_list_t *item, *next;

    rdp_list_init(&batch);
    for (item = q->head.next; item != &q->head; item = next) {
        next = item->next;
        if (pick(rdp_container_of(item, waiter_t, link), arg)) {
            rdp_list_del(item);
            rdp_list_push_back(&batch, item);
        }
    }
    if (rdp_list_is_empty(&q->head)) {
        rdp_hash_remove(&rdp_srv.waits, q->key, q->keylen);
        rdp_free(q);
    }
    while ((item = rdp_list_pop_front(&batch)) != NULL) {
        waiter_t *w = rdp_container_of(item, waiter_t, link);

        w->q = NULL;
        waiter_answer(w, status);
        waiter_free(w);
    }
}

static waitq_t *waitq_find(const char *nspace, pmix_rank_t rank)
{
    char key[RDP_SRV_RANK_KEY_MAX];
    size_t keylen = rdp_srv_rank_key(nspace, rank, key);

    return rdp_hash_get(&rdp_srv.waits, key, keylen);
}

void rdp_srv_modex_ready(const char *nspace, pmix_rank_t rank)
{
    waitq_t *q = waitq_find(nspace, rank);

    if (q != NULL) {
        answer_queue(q, pick_satisfied, NULL, PMIX_SUCCESS);
    }
}

void rdp_srv_modex_fail_key(const char *nspace, pmix_rank_t rank,
                            const char *key, pmix_status_t status)
{
    waitq_t *q = waitq_find(nspace, rank);

    if (q != NULL) {
        answer_queue(q, pick_key, key, status);
    }
}

void rdp_srv_modex_fail(const char *nspace, pmix_rank_t rank,
                        pmix_status_t status)
{
    rdp_hash_entry_t *ent;
    waitq_t **match;
    size_t i, n = 0;

    if (rank != PMIX_RANK_WILDCARD) {
        waitq_t *q = waitq_find(nspace, rank);

        if (q != NULL) {
            answer_queue(q, pick_all, NULL, status);
        }
        return;
    }
    match = rdp_calloc(rdp_srv.waits.count + 1, sizeof(*match));
    if (match == NULL) {
        rdp_log_error(SERVER, "out of memory failing waiters of %s", nspace);
        return;
    }
    rdp_hash_for_each(ent, &rdp_srv.waits, i) {
        waitq_t *q = ent->value;

        if (strcmp(q->key, nspace) == 0) {
            match[n++] = q;
        }
    }
    for (i = 0; i < n; i++) {
        answer_queue(match[i], pick_all, NULL, status);
    }
    rdp_free(match);
}

void rdp_srv_modex_cleanup(void)
{
    rdp_hash_entry_t *ent;
    waitq_t **all;
    size_t i, n = 0;

    all = rdp_calloc(rdp_srv.waits.count + 1, sizeof(*all));
    if (all == NULL) {
        return;
    }
    rdp_hash_for_each(ent, &rdp_srv.waits, i) {
        all[n++] = ent->value;
    }
    for (i = 0; i < n; i++) {
        answer_queue(all[i], pick_all, NULL, PMIX_ERR_INIT);
    }
    rdp_free(all);
}

/* ---- data from the host (fence results, direct modex) ---- */

pmix_status_t rdp_srv_bundles_for_each_remote(const void *data, size_t len,
                                              rdp_srv_remote_sect_cb_t cb,
                                              void *arg)
{
    rdp_rbuf_t rb;
    pmix_status_t status = PMIX_SUCCESS;

    rdp_rbuf_init(&rb, data, len);
    while (status == PMIX_SUCCESS && rb.left > 0) {
        uint32_t nsets;

        status = rdp_unpack_u32(&rb, &nsets);
        for (uint32_t s = 0; status == PMIX_SUCCESS && s < nsets; s++) {
            pmix_nspace_t nspace;
            uint32_t nsect;
            rdp_srv_nspace_t *ns;

            status = rdp_unpack_string_into(&rb, nspace, sizeof(nspace));
            if (status == PMIX_SUCCESS) {
                status = rdp_unpack_u32(&rb, &nsect);
            }
            ns = status == PMIX_SUCCESS ? rdp_srv_nspace_find(nspace) : NULL;
            for (uint32_t k = 0; status == PMIX_SUCCESS && k < nsect; k++) {
                rdp_sect_t sect;

                status = rdp_sect_unpack(&rb, &sect);
                /* anything else is ours already, or not ours to keep:
                 * the section length skips it */
                if (status == PMIX_SUCCESS && sect.kind == RDP_SECT_PROC
                    && ns != NULL && ns->registered && sect.id < PMIX_RANK_VALID
                    && !rdp_srv_nspace_is_local(ns, sect.id)) {
                    status = cb(nspace, sect.id, &sect.kv, arg);
                }
            }
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "malformed data from the host at offset %zu: %s",
                      len - rb.left, rdp_status_name(status));
    }
    return status;
}

pmix_status_t rdp_srv_store_sect(const char *nspace, pmix_rank_t rank,
                                 const rdp_rbuf_t *kv, void *arg)
{
    rdp_rbuf_t rb = *kv;
    pmix_status_t status =
        rdp_kvs_unpack_rank(rdp_srv.modex, nspace, rank, &rb);

    (void)arg;
    if (status == PMIX_SUCCESS && rb.left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        rdp_srv_modex_ready(nspace, rank);
    }
    return status;
}

pmix_status_t rdp_srv_store_bundles(const void *data, size_t len)
{
    return rdp_srv_bundles_for_each_remote(data, len, rdp_srv_store_sect, NULL);
}

/* ---- COMMIT ---- */

void rdp_srv_handle_commit(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    rdp_srv_client_t *client = peer->client;
    pmix_status_t status;

    status = rdp_kvs_unpack_rank(rdp_srv.modex, client->proc.nspace,
                                 client->proc.rank, rb);
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed COMMIT from %s:%u: %s; its data is "
                      "dropped and the connection closed",
                      client->proc.nspace, client->proc.rank,
                      rdp_status_name(status));
        rdp_kvs_remove_rank(rdp_srv.modex, client->proc.nspace,
                            client->proc.rank);
        rdp_srv_peer_drop(peer, status);
        return;
    }
    rdp_log_trace(
        SERVER, "%s:%u committed %zu keys", client->proc.nspace,
        client->proc.rank,
        rdp_kvs_count(rdp_srv.modex, client->proc.nspace, client->proc.rank));
    rdp_srv_modex_ready(client->proc.nspace, client->proc.rank);
}

/* ---- direct modex through the host ---- */

typedef struct dmdx_req {
    pmix_proc_t proc;
    bool any_key;
    pmix_key_t key;
    pmix_info_t *info;
    size_t ninfo;
    rdp_srv_host_reply_t reply; /* the host's answer, released on the loop */
} dmdx_req_t;

static void dmdx_req_free(dmdx_req_t *req)
{
    PMIX_INFO_FREE(req->info, req->ninfo);
    rdp_free(req);
}

static void dmdx_done_on_loop(void *arg)
{
    dmdx_req_t *req  = arg;
    const char *want = req->any_key ? NULL : req->key;
    char key[RDP_SRV_WANT_KEY_MAX];
    size_t keylen;
    pmix_status_t status = req->reply.status;

    if (!rdp_srv.active) {
        rdp_srv_host_reply_release(&req->reply);
        dmdx_req_free(req);
        return;
    }
    keylen = rdp_srv_want_key(req->proc.nspace, req->proc.rank, want, key);
    rdp_hash_remove(&rdp_srv.dmdx_out, key, keylen);
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_store_bundles(req->reply.data, req->reply.ndata);
    }
    rdp_srv_host_reply_release(&req->reply);
    if (status == PMIX_SUCCESS
        && !rdp_srv_modex_has(req->proc.nspace, req->proc.rank, want)) {
        /* e.g. a host whose other side answered with what the rank had
         * committed so far: PMIx_server_dmodex_request has no key */
        rdp_log_debug(SERVER,
                      "host answered direct modex for %s:%u without "
                      "%s",
                      req->proc.nspace, req->proc.rank,
                      want != NULL ? want : "its data");
        status = PMIX_ERR_NOT_FOUND;
    }
    if (status != PMIX_SUCCESS) {
        rdp_srv_modex_fail_key(req->proc.nspace, req->proc.rank, want, status);
    }
    dmdx_req_free(req);
}

/* pmix_modex_cbfunc_t: any thread */
static void dmdx_cb(pmix_status_t status, const char *data, size_t ndata,
                    void *cbdata, pmix_release_cbfunc_t release_fn,
                    void *release_cbdata)
{
    dmdx_req_t *req = cbdata;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_DMODEX, &req->reply, release_fn,
                                  release_cbdata);
    /* never calls into the host from here (see rdp_srv_host_reply_t) */
    rdp_srv_host_reply_keep(&req->reply, status, data, ndata, release_fn,
                            release_cbdata);
    if (rdp_rt.loop == NULL
        || rdp_loop_post(rdp_rt.loop, dmdx_done_on_loop, req) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "host's direct modex reply after server "
                              "shutdown dropped");
        dmdx_req_free(req);
    }
    RDP_SRV_HOST_CB_LEAVE();
}

/* The GET's directives plus PMIX_REQUIRED_KEY (as OpenPMIx 4.2.2 tells
 * its hosts which key a direct modex is for); takes @a info. */
static pmix_status_t add_required_key(const char *key, pmix_info_t **info_p,
                                      size_t *ninfo_p)
{
    pmix_info_t *info;
    size_t n = *ninfo_p;

    if (key == NULL) {
        return PMIX_SUCCESS;
    }
    PMIX_INFO_CREATE(info, n + 1);
    if (info == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_XFER(&info[i], &(*info_p)[i]);
    }
    PMIX_INFO_LOAD(&info[n], PMIX_REQUIRED_KEY, key, PMIX_STRING);
    PMIX_INFO_FREE(*info_p, n);
    *info_p  = info;
    *ninfo_p = n + 1;
    return PMIX_SUCCESS;
}

/* Ask the host once per (nspace, rank, key); takes @a info. */
static void request_from_host(const char *nspace, pmix_rank_t rank,
                              const char *want, pmix_info_t *info, size_t ninfo)
{
    char key[RDP_SRV_WANT_KEY_MAX];
    size_t keylen = rdp_srv_want_key(nspace, rank, want, key);
    dmdx_req_t *req;
    pmix_status_t rc;

    if (rdp_hash_get(&rdp_srv.dmdx_out, key, keylen) != NULL) {
        PMIX_INFO_FREE(info, ninfo);
        return; /* already asked */
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL || add_required_key(want, &info, &ninfo) != PMIX_SUCCESS
        || rdp_hash_set(&rdp_srv.dmdx_out, key, keylen, (void *)1, NULL)
               != PMIX_SUCCESS) {
        rdp_free(req);
        PMIX_INFO_FREE(info, ninfo);
        rdp_srv_modex_fail_key(nspace, rank, want, PMIX_ERR_NOMEM);
        return;
    }
    PMIX_LOAD_PROCID(&req->proc, nspace, rank);
    req->any_key = want == NULL;
    PMIX_LOAD_KEY(req->key, want);
    req->info  = info;
    req->ninfo = ninfo;
    rc = rdp_srv.host.direct_modex(&req->proc, req->info, req->ninfo, dmdx_cb,
                                   req);
    if (rc != PMIX_SUCCESS) {
        /* the host will not call back */
        rdp_hash_remove(&rdp_srv.dmdx_out, key, keylen);
        dmdx_req_free(req);
        rdp_srv_modex_fail_key(
            nspace, rank, want,
            rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc);
    }
}

/* ---- GET ---- */

static void read_get_directives(const pmix_info_t *info, size_t ninfo,
                                bool *immediate_p, double *timeout_p)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_IMMEDIATE)
            || PMIX_CHECK_KEY(&info[i], PMIX_OPTIONAL)) {
            if (PMIX_INFO_TRUE(&info[i])) {
                *immediate_p = true;
            }
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            uint64_t t;

            if (rdp_srv_value_to_u64(&info[i].value, &t)) {
                *timeout_p = (double)t;
            }
        }
    }
}

void rdp_srv_handle_get(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    rdp_srv_client_t *me = peer->client;
    pmix_nspace_t nspace;
    uint32_t rank;
    const char *key   = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    bool immediate    = false, with_job;
    double timeout    = 0;
    rdp_srv_nspace_t *ns;
    rdp_srv_client_t *target;
    waiter_t *w;
    pmix_status_t status;

    status = rdp_unpack_string_into(rb, nspace, sizeof(nspace));
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string_view(rb, &key);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(rb, &info, &ninfo);
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed GET from %s:%u: %s; connection "
                      "closed",
                      me->proc.nspace, me->proc.rank, rdp_status_name(status));
        PMIX_INFO_FREE(info, ninfo);
        rdp_srv_peer_drop(peer, status);
        return;
    }
    if (key != NULL
        && (key[0] == '\0'
            || strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)) {
        status = PMIX_ERR_BAD_PARAM;
        goto reply_status;
    }
    if (rdp_srv_pnet_denied(me, nspace, key)) {
        status = PMIX_ERR_NO_PERMISSIONS;
        goto reply_status;
    }
    read_get_directives(info, ninfo, &immediate, &timeout);
    /* a reserved key the host did not give is not coming: only what we
     * hold now counts (OpenPMIx 4.2.2 asks its server "immediate") */
    immediate = immediate || is_reserved_key(key);

    ns = rdp_srv_nspace_find(nspace);
    if (ns == NULL || !ns->registered) {
        status = PMIX_ERR_NOT_FOUND;
        goto reply_status;
    }
    with_job = rank >= PMIX_RANK_VALID || strcmp(nspace, me->proc.nspace) != 0
               || rdp_srv_nspace_has_key(ns, rank, key);
    /* per key: data we hold of the rank need not hold this key yet */
    if (rank >= PMIX_RANK_VALID || rdp_srv_modex_has(nspace, rank, key)) {
        PMIX_INFO_FREE(info, ninfo);
        send_get_reply(peer, tag, ns, rank, with_job);
        return;
    }
    if (!ns->nodata && rank >= ns->size) {
        status = PMIX_ERR_BAD_PARAM;
        goto reply_status;
    }
    target = rdp_hash_get_u64(&ns->clients, rank);
    if (immediate || target == me /* its own data comes only from itself */
        || (target != NULL
            && (target->state == RDP_SRV_CLIENT_FINALIZED
                || target->state == RDP_SRV_CLIENT_TERMINATED))) {
        status = PMIX_ERR_NOT_FOUND;
        goto reply_status;
    }

    /* wait for a commit with the key (local) or for the host's or the
     * owning server's data (remote) */
    w = rdp_calloc(1, sizeof(*w));
    if (w == NULL) {
        status = PMIX_ERR_NOMEM;
        goto reply_status;
    }
    PMIX_LOAD_NSPACE(w->nspace, nspace);
    w->rank = rank;
    waiter_set_key(w, key);
    w->kind     = WAIT_GET;
    w->peer_id  = peer->id;
    w->tag      = tag;
    w->with_job = with_job;
    status      = waiter_add(w, timeout);
    if (status != PMIX_SUCCESS) {
        waiter_free(w);
        goto reply_status;
    }
    rdp_log_trace(SERVER, "%s:%u waits for data of %s:%u", me->proc.nspace,
                  me->proc.rank, nspace, rank);
    if (!rdp_srv_nspace_is_local(ns, rank) && rdp_srv_engine_active()
        && !rdp_srv_connect_ns_foreign(ns)) {
        /* engine mode wins over the host's direct_modex (rdpmix.h) */
        PMIX_INFO_FREE(info, ninfo);
        rdp_srv_dmodex_request(nspace, rank, key);
        return;
    }
    if (!rdp_srv_nspace_is_local(ns, rank)
        && rdp_srv.host.direct_modex != NULL) {
        request_from_host(nspace, rank, key, info, ninfo);
        return;
    }
    /* without a direct_modex upcall the data of a remote rank can still
     * arrive with a fence that collects data: keep waiting */
    PMIX_INFO_FREE(info, ninfo);
    return;

reply_status:
    PMIX_INFO_FREE(info, ninfo);
    rdp_srv_reply_status(peer, RDP_CMD_GET_ACK, tag, status);
}

/* ---- the host asks for a local client's data ---- */

typedef struct dmodex_api_req {
    pmix_proc_t proc;
    pmix_dmodex_response_fn_t cbfunc;
    void *cbdata;
} dmodex_api_req_t;

void rdp_srv_modex_serve(const pmix_proc_t *proc, const char *key,
                         pmix_dmodex_response_fn_t cbfunc, void *cbdata)
{
    rdp_srv_nspace_t *ns =
        rdp_srv.active ? rdp_srv_nspace_find(proc->nspace) : NULL;
    rdp_srv_client_t *target;
    waiter_t *w;
    pmix_status_t status;

    if (ns == NULL || !ns->registered
        || !rdp_srv_nspace_is_local(ns, proc->rank)) {
        status = rdp_srv.active ? PMIX_ERR_NOT_FOUND : PMIX_ERR_INIT;
        goto fail;
    }
    w = rdp_calloc(1, sizeof(*w));
    if (w == NULL) {
        status = PMIX_ERR_NOMEM;
        goto fail;
    }
    PMIX_LOAD_NSPACE(w->nspace, proc->nspace);
    w->rank = proc->rank;
    waiter_set_key(w, key);
    w->kind   = WAIT_DMODEX;
    w->cbfunc = cbfunc;
    w->cbdata = cbdata;
    if (rdp_srv_modex_has(ns->name, proc->rank, key)) {
        waiter_answer(w, PMIX_SUCCESS);
        waiter_free(w);
        return;
    }
    target = rdp_hash_get_u64(&ns->clients, proc->rank);
    if (target != NULL
        && (target->state == RDP_SRV_CLIENT_FINALIZED
            || target->state == RDP_SRV_CLIENT_TERMINATED)) {
        waiter_free(w);
        status = PMIX_ERR_NOT_FOUND;
        goto fail;
    }
    status = waiter_add(w, 0);
    if (status != PMIX_SUCCESS) {
        waiter_free(w);
        goto fail;
    }
    return;

fail:
    cbfunc(status, NULL, 0, cbdata);
}

static void dmodex_request_on_loop(void *arg)
{
    dmodex_api_req_t *req = arg;

    /* the Standard's request names no key: any committed data answers */
    rdp_srv_modex_serve(&req->proc, NULL, req->cbfunc, req->cbdata);
    rdp_free(req);
}

pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                         pmix_dmodex_response_fn_t cbfunc,
                                         void *cbdata)
{
    dmodex_api_req_t *req;
    pmix_status_t status;

    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    if (proc == NULL || cbfunc == NULL || proc->rank >= PMIX_RANK_VALID
        || strnlen(proc->nspace, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->proc   = *proc;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    status      = rdp_loop_post(rdp_rt.loop, dmodex_request_on_loop, req);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
    }
    return status;
}
