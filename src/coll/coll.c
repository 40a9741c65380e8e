/* coll.c - the collective executor: runs schedules over a tl (segmented
 * ring blocks: coll_ring.c; early arrivals: coll_early.c) */
#include "config.h"
#include "coll/coll.h"
#include "coll/coll_int.h"
#include "coll/msg.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <assert.h>
#include <string.h>

#include <pmix.h>

#define ENGINE_ASSERT_OWNER(_e)             \
    do {                                    \
        if ((_e)->loop != NULL) {           \
            RDP_ASSERT_ON_LOOP((_e)->loop); \
        }                                   \
    } while (0)

_Static_assert(RDP_COLL_HEADROOM == RDP_COLL_BLK_HDR_LEN,
               "the headroom of a handed-over block holds its header");

static void coll_free(coll_t *coll);
static void fetch_done(void *arg, pmix_status_t status);
static void schedule_done(rdp_coll_engine_t *engine);
static void p2p_queue_failed(rdp_coll_engine_t *engine, uint32_t peer,
                             pmix_status_t status);

/* ---- small helpers ---- */

uint64_t rdp_coll_signature(const uint32_t *parts, uint32_t nparts)
{
    /* FNV-1a style over the values (not their bytes), so every host gets
     * the same signature whatever its byte order; a final mix spreads it */
    uint64_t h = 1469598103934665603ULL ^ nparts;

    for (uint32_t i = 0; i < nparts; i++) {
        h = (h ^ parts[i]) * 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

void rdp_coll_make_key(coll_key_t *key, uint32_t kind, uint64_t sig,
                       uint64_t opid)
{
    memset(key, 0, sizeof(*key));
    key->kind = kind;
    key->sig  = sig;
    key->opid = opid;
}

/* index of universe index @a u in the sorted @a parts, or -1 */
static int64_t find_part(const uint32_t *parts, uint32_t n, uint32_t u)
{
    uint32_t lo = 0;
    uint32_t hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (parts[mid] == u) {
            return mid;
        }
        if (parts[mid] < u) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -1;
}

const char *rdp_coll_kind_name(uint32_t kind)
{
    return kind == RDP_COLL_BARRIER ? "barrier" : "allgather";
}

/* ---- key memory ---- */

static pmix_status_t keymem_init(keymem_t *km, size_t cap)
{
    /* the ring grows on demand: most engines remember few keys */
    memset(km, 0, sizeof(*km));
    km->cap = cap;
    return rdp_keytab_init(&km->map, 0);
}

static void keymem_cleanup(keymem_t *km)
{
    rdp_keytab_cleanup(&km->map);
    rdp_free(km->ring);
    km->ring = NULL;
}

static int keymem_has(const keymem_t *km, const coll_key_t *key)
{
    return km->map.count > 0 && rdp_keytab_find(&km->map, key) != NULL;
}

/* The ring moved: link its nodes again (only while it grows). */
static void keymem_relink(keymem_t *km)
{
    rdp_keytab_cleanup(&km->map);
    if (rdp_keytab_init(&km->map, km->size) != PMIX_SUCCESS) {
        for (size_t i = 0; i < km->count; i++) {
            km->ring[i].linked = 0;
        }
        return; /* the keys are forgotten: nothing dangles */
    }
    for (size_t i = 0; i < km->count; i++) {
        if (km->ring[i].linked) {
            rdp_keytab_insert(&km->map, &km->ring[i]);
        }
    }
}

/* No lookup first: a key added twice (a collective run again under the
 * same key) takes two slots, and each copy is found until it is evicted,
 * which is all keymem_has needs.  One hash insert (and one eviction) per
 * finished collective. */
void rdp_coll_keymem_add(keymem_t *km, const coll_key_t *key)
{
    size_t slot;

    if (km->count == km->size && km->size < km->cap) {
        /* not wrapped yet: slots keep their places */
        size_t nsize        = km->size == 0 ? 16 : km->size * 2;
        keytab_node_t *ring = NULL;

        nsize = nsize < km->cap ? nsize : km->cap;
        ring  = rdp_realloc(km->ring, nsize * sizeof(*ring));
        if (ring == NULL) {
            return; /* the key is simply not remembered */
        }
        km->size = nsize;
        if (ring != km->ring) {
            km->ring = ring;
            keymem_relink(km);
        }
    }
    slot = km->next;
    if (km->count == km->size) {
        rdp_keytab_remove(&km->map, &km->ring[slot]);
    } else {
        km->count++;
    }
    km->ring[slot].key = *key;
    rdp_keytab_insert(&km->map, &km->ring[slot]);
    km->next = (slot + 1 == km->cap) ? 0 : slot + 1;
    if (km->count == km->cap) {
        /* the next key to evict (its slot was last written cap
         * collectives ago): into the cache while the next one runs.  Its
         * removal touches nothing else it must wait for (keytab.h) */
        __builtin_prefetch(&km->ring[km->next], 1);
    }
}

static void keymem_remove(keymem_t *km, const coll_key_t *key)
{
    keytab_node_t *node;

    if (km->map.count == 0) {
        return;
    }
    /* every copy: rdp_coll_keymem_add does not look for one first (a
     * poisoned key's later messages are dropped before they could add
     * another, but nothing depends on that here) */
    while ((node = rdp_keytab_find(&km->map, key)) != NULL) {
        rdp_keytab_remove(&km->map, node);
    }
}

/* ---- running collectives ---- */

/* The running collective with @a key, or NULL.  The one found last is
 * tried first: the messages of a collective come one after another.
 * rdp_coll_finish forgets it when it stops running. */
static coll_t *find_running(rdp_coll_engine_t *engine, const coll_key_t *key)
{
    keytab_node_t *node;

    if (engine->last != NULL && rdp_coll_key_eq(&engine->last->node.key, key)) {
        engine->stats.lookup_hits++;
        return engine->last;
    }
    if (engine->colls.count == 0) {
        return NULL;
    }
    node = rdp_keytab_find(&engine->colls, key);
    if (node == NULL) {
        return NULL;
    }
    engine->last = rdp_container_of(node, coll_t, node);
    return engine->last;
}

/* ---- the engine's spare lists ----
 * Freed collective blocks, step-send records and receive records are kept
 * (a few of each) for the next collective instead of going back to malloc
 * on the per-collective path.  Each kind has its own list, count and cap;
 * these two do the keeping and the final freeing for all three. */

/* Keep the record linked by @a link on @a spares, unless @a max are kept
 * already (then the caller frees it). */
static bool spare_keep(rdp_list_t *spares, size_t *n, size_t max,
                       rdp_list_t *link)
{
    if (*n >= max) {
        return false;
    }
    rdp_list_push_front(spares, link);
    (*n)++;
    return true;
}

/* Free every record kept on @a spares; @a link_offset is where a record's
 * link lies in it. */
static void spare_drain(rdp_list_t *spares, size_t *n, size_t link_offset)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(spares)) != NULL) {
        rdp_free((char *)item - link_offset);
    }
    *n = 0;
}

/* ---- received messages ---- */

void rdp_coll_rx_free(rx_t *rx)
{
    rdp_coll_engine_t *engine = rx->engine;

    if (rx->fetching) {
        /* the transport still writes into rx->buf: free on completion */
        rx->orphan = 1;
        rx->coll   = NULL;
        rdp_list_del(&rx->link);
        rdp_list_push_back(&engine->orphans, &rx->link);
        return;
    }
    rdp_list_del(&rx->link);
    if (rx->desc != NULL) {
        engine->ops->release(engine->ctx, rx->desc);
    }
    rdp_free(rx->buf);
    rdp_free(rx->seals);
    if ((rx->cap > RDP_COLL_SPARE_RX_MAX)
        || !spare_keep(&engine->spare_rx, &engine->nspare_rx,
                       RDP_COLL_SPARE_RX, &rx->link)) {
        rdp_free(rx);
    }
}

static void rx_free_spare(rdp_coll_engine_t *engine)
{
    spare_drain(&engine->spare_rx, &engine->nspare_rx, offsetof(rx_t, link));
}

/* Free without telling the transport (after unbind). */
void rdp_coll_rx_free_unbound(rx_t *rx)
{
    if (rx->desc != NULL) {
        rx->engine->ops->release(rx->engine->ctx, rx->desc);
    }
    rdp_free(rx->buf);
    rdp_free(rx->seals);
    rdp_free(rx);
}

rx_t *rdp_coll_rx_create(rdp_coll_engine_t *engine, const rdp_coll_hdr_t *hdr,
                         const rdp_tl_rx_t *trx)
{
    size_t room = trx->kind == RDP_TL_DATA_BORROWED ? trx->len : 0;
    size_t cap  = room;
    rx_t *rx    = NULL;
    rdp_list_t *item;

    /* a kept record with room enough (at most RDP_COLL_SPARE_RX looked at) */
    for (item = engine->spare_rx.next; item != &engine->spare_rx;
         item = item->next) {
        rx_t *spare = rdp_container_of(item, rx_t, link);

        if (spare->cap >= room) {
            rdp_list_del(item);
            engine->nspare_rx--;
            engine->stats.rx_reused++;
            rx  = spare;
            cap = spare->cap;
            break;
        }
    }
    if (rx == NULL) {
        rx = rdp_malloc(sizeof(*rx) + room);
        if (rx == NULL) {
            rdp_log_error(COLL, "cannot allocate a receive record");
            return NULL;
        }
    }
    memset(rx, 0, sizeof(*rx));
    rx->cap  = cap;
    rx->room = room;
    rdp_list_init(&rx->link);
    rx->engine = engine;
    rx->hdr    = *hdr;
    rdp_coll_make_key(&rx->key, hdr->kind, hdr->sig, hdr->opid);
    return rx;
}

/* Copy the seals @a trx came with (if memory runs short, the blocks are
 * just forwarded unsealed: the transport then authenticates them). */
static void rx_keep_seals(rx_t *rx, const rdp_tl_rx_t *trx)
{
    if ((trx->nseals == 0) || (trx->seals == NULL)) {
        return;
    }
    rx->seals = rdp_malloc(trx->nseals * sizeof(*rx->seals));
    if (rx->seals != NULL) {
        memcpy(rx->seals, trx->seals, trx->nseals * sizeof(*rx->seals));
        rx->nseals = trx->nseals;
    }
}

/*
 * Take the payload of @a trx into @a rx, the cheapest way the transport
 * allows: keep a KEEPABLE descriptor, start fetching an RNDV payload, copy
 * a BORROWED one.  Returns the upcall's disposition through *disp_p.
 */
pmix_status_t rdp_coll_rx_take_payload(rx_t *rx, const rdp_tl_rx_t *trx,
                                       enum rdp_tl_rx_disp *disp_p)
{
    rdp_coll_engine_t *engine = rx->engine;
    pmix_status_t status;

    rx->len          = trx->len;
    rx->payload_open = trx->payload_open;
    rx_keep_seals(rx, trx);
    if (trx->len == 0) {
        *disp_p = RDP_TL_RX_DONE;
        return PMIX_SUCCESS;
    }
    switch (trx->kind) {
    case RDP_TL_DATA_KEEPABLE:
        rx->desc = trx->desc;
        rx->data = trx->data;
        *disp_p  = RDP_TL_RX_KEPT;
        return PMIX_SUCCESS;
    case RDP_TL_DATA_RNDV:
        rx->buf = rdp_malloc(trx->len);
        if (rx->buf == NULL) {
            rdp_log_error(COLL, "cannot allocate %zu bytes for a payload",
                          trx->len);
            return PMIX_ERR_NOMEM;
        }
        rx->data     = rx->buf;
        rx->fetching = 1;
        status  = engine->ops->fetch(engine->ctx, trx->desc, rx->buf, trx->len,
                                     fetch_done, rx);
        *disp_p = RDP_TL_RX_KEPT; /* the desc is consumed either way */
        if (status == PMIX_OPERATION_SUCCEEDED) {
            rx->fetching = 0;
            return PMIX_SUCCESS;
        }
        if (status != PMIX_SUCCESS) {
            rx->fetching = 0;
            rdp_log_warn(COLL, "cannot fetch a %zu-byte payload from %u: %s",
                         trx->len, rx->hdr.sender, rdp_status_name(status));
            return status;
        }
        return PMIX_SUCCESS;
    case RDP_TL_DATA_BORROWED:
    default:
        if (trx->len <= rx->room) {
            memcpy(rx->inl, trx->data, trx->len);
            rx->data = rx->inl;
            *disp_p  = RDP_TL_RX_DONE;
            return PMIX_SUCCESS;
        }
        rx->buf = rdp_malloc(trx->len);
        if (rx->buf == NULL) {
            rdp_log_error(COLL, "cannot allocate %zu bytes for a payload",
                          trx->len);
            return PMIX_ERR_NOMEM;
        }
        memcpy(rx->buf, trx->data, trx->len);
        rx->data = rx->buf;
        *disp_p  = RDP_TL_RX_DONE;
        return PMIX_SUCCESS;
    }
}

/* ---- sends ---- */

/* One send or fetch of @a coll is over.  Frees @a coll when it was called
 * back and this was its last I/O.  Returns 1 when @a coll is no longer
 * running (it may be gone), 0 otherwise. */
int rdp_coll_io_done(coll_t *coll)
{
    assert(coll->pending_io > 0);
    coll->pending_io--;
    if (coll->state == COLL_RUNNING) {
        return 0;
    }
    if (coll->state == COLL_CALLED && coll->pending_io == 0) {
        rdp_list_del(&coll->link);
        coll_free(coll);
    }
    return 1;
}

/* A zeroed send record of at least @a room bytes for a step send: a kept
 * one when it fits, else a new one of at least RDP_COLL_SEND_ROOM bytes;
 * NULL when out of memory.  Freed with sreq_put or rdp_free. */
static sreq_t *sreq_get(rdp_coll_engine_t *engine, size_t room)
{
    sreq_t *req;
    size_t cap;

    if (!rdp_list_is_empty(&engine->spare_sends)) {
        req = rdp_container_of(engine->spare_sends.next, sreq_t, link);
        if (req->cap >= room) {
            cap = req->cap;
            rdp_list_del(&req->link);
            engine->nspare_sends--;
            memset(req, 0, room);
            req->cap = cap;
            engine->stats.sends_reused++;
            return req;
        }
    }
    cap = room < RDP_COLL_SEND_ROOM ? RDP_COLL_SEND_ROOM : room;
    req = rdp_calloc(1, cap);
    if (req != NULL) {
        req->cap = cap;
    }
    return req;
}

/* Keep @a req (done, on no list) for the next step send, or free it. */
static void sreq_put(rdp_coll_engine_t *engine, sreq_t *req)
{
    if ((req->cap < RDP_COLL_SEND_ROOM)
        || !spare_keep(&engine->spare_sends, &engine->nspare_sends,
                       RDP_COLL_SPARE_SENDS, &req->link)) {
        rdp_free(req);
    }
}

static void sreq_free_spare(rdp_coll_engine_t *engine)
{
    spare_drain(&engine->spare_sends, &engine->nspare_sends,
                offsetof(sreq_t, link));
}

static void own_drop_sent(coll_t *coll);

static void sreq_done(void *arg, pmix_status_t status)
{
    sreq_t *req  = arg;
    coll_t *coll = req->coll;

    rdp_list_del(&req->link);
    if (req->p2p && status != PMIX_SUCCESS) {
        rdp_log_warn(COLL, "p2p message to %u failed: %s", req->peer,
                     rdp_status_name(status));
        p2p_queue_failed(req->engine, req->peer, PMIX_ERR_UNREACH);
    }
    if (coll != NULL) {
        if (status != PMIX_SUCCESS && coll->state == COLL_RUNNING) {
            rdp_log_warn(COLL, "%s %016llx:%llu step %u: send to %u failed: %s",
                         rdp_coll_kind_name(coll->kind),
                         (unsigned long long)coll->node.key.sig,
                         (unsigned long long)coll->node.key.opid, coll->cur,
                         req->peer, rdp_status_name(status));
            rdp_coll_finish(coll, PMIX_ERR_UNREACH, req->peer, 1);
        }
        if (rdp_coll_io_done(coll) == 0) {
            own_drop_sent(coll);
        }
    }
    sreq_put(req->engine, req);
}

/* Hand @a req to the transport; on PMIX_SUCCESS it is in flight. */
static pmix_status_t sreq_post(sreq_t *req)
{
    rdp_coll_engine_t *engine = req->engine;
    pmix_status_t status;

    rdp_list_push_back(&engine->sends, &req->link);
    if (req->coll != NULL) {
        req->coll->pending_io++;
    }
    if ((req->coll != NULL) && req->coll->open_payload) {
        engine->stats.open_sent++;
        status = engine->ops->send_open(engine->ctx, req->peer, req->hdr,
                                        req->hdr_len, req->iov, req->iovcnt,
                                        sreq_done, req);
    } else if ((req->seals != NULL) && (engine->ops->send_sealed != NULL)) {
        status = engine->ops->send_sealed(engine->ctx, req->peer, req->hdr,
                                          req->hdr_len, req->iov, req->seals,
                                          req->iovcnt, sreq_done, req);
    } else {
        status = engine->ops->send(engine->ctx, req->peer, req->hdr,
                                   req->hdr_len, req->iov, req->iovcnt,
                                   sreq_done, req);
    }
    if (status == PMIX_SUCCESS) {
        return PMIX_SUCCESS;
    }
    rdp_list_del(&req->link);
    if (req->coll != NULL) {
        req->coll->pending_io--;
    }
    sreq_put(engine, req);
    return status == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : status;
}

void rdp_coll_fill_hdr(rdp_coll_hdr_t *h, const coll_t *coll, uint8_t type)
{
    memset(h, 0, sizeof(*h));
    h->type   = type;
    h->kind   = (uint8_t)coll->kind;
    h->alg    = (uint8_t)coll->alg;
    h->sig    = coll->node.key.sig;
    h->opid   = coll->node.key.opid;
    h->nparts = coll->n;
    h->sender = coll->engine->me;
    h->aux    = UINT32_MAX;
    h->flags  = (uint32_t)coll->size_class & RDP_COLL_FLAG_SIZE_MASK;
}

/* Tell every other live participant that @a coll failed. */
static void send_aborts(coll_t *coll)
{
    rdp_coll_engine_t *engine = coll->engine;
    rdp_coll_hdr_t h;
    pmix_status_t status;

    rdp_coll_fill_hdr(&h, coll, RDP_COLL_MSG_ABORT);
    h.status = coll->status;
    h.aux    = coll->failed_peer;
    for (uint32_t i = 0; i < coll->n; i++) {
        uint32_t peer = coll->parts[i];
        sreq_t *req;

        if (peer == engine->me || engine->failed[peer]) {
            continue;
        }
        req = rdp_calloc(1, sizeof(*req));
        if (req == NULL) {
            rdp_log_error(COLL, "cannot allocate an abort message for %u",
                          peer);
            continue;
        }
        req->engine  = engine;
        req->peer    = peer;
        req->hdr_len = rdp_coll_hdr_encode(&h, req->hdr);
        status       = sreq_post(req);
        if (status != PMIX_SUCCESS) {
            rdp_log_debug(COLL, "cannot send an abort to %u: %s", peer,
                          rdp_status_name(status));
        }
    }
}

/*
 * A gathered payload of at most this many bytes is copied into one
 * contiguous buffer before it is sent.  Measured with UCX 1.13 over tcp:
 * the first scattered (IOV) send of a server spent 0.3-3 ms inside
 * ucp_am_send_nbx and returned a request that completed only from a later
 * progress call (later ones complete at once), which made the first small
 * allgather of a job -- the fence with PMIX_COLLECT_DATA -- pay that per
 * step while the barrier's empty messages went out inline.  A contiguous
 * small payload goes out inline too; copying a few KiB costs far less.
 */
#define RDP_COLL_FLAT_MAX 4096u

/*
 * Copy the @a bytes of the @a req->iovcnt pieces of @a req (room for
 * @a nblocks iovs) into a buffer at its end and point its single iov there.
 * Returns the (moved) request, or NULL (@a req freed) when out of memory.
 * @a req is not on any list yet.
 */
static sreq_t *sreq_flatten(sreq_t *req, uint32_t nblocks, uint64_t bytes)
{
    size_t off = sizeof(*req) + (size_t)nblocks * sizeof(rdp_iov_t);
    sreq_t *flat;
    uint8_t *p;

    if (req->cap >= off + (size_t)bytes) {
        flat = req; /* a kept record with room to spare */
    } else {
        flat = rdp_realloc(req, off + (size_t)bytes);
        if (flat != NULL) {
            flat->cap = off + (size_t)bytes;
        }
    }
    if (flat == NULL) {
        rdp_log_error(COLL, "cannot allocate a %llu-byte send",
                      (unsigned long long)bytes);
        rdp_free(req);
        return NULL;
    }
    p = (uint8_t *)flat + off;
    for (size_t i = 0; i < flat->iovcnt; i++) {
        memcpy(p, flat->iov[i].base, flat->iov[i].len);
        p += flat->iov[i].len;
    }
    flat->iov[0].base = (uint8_t *)flat + off;
    flat->iov[0].len  = (size_t)bytes;
    flat->iovcnt      = 1;
    return flat;
}

/* Encode @a h into @a req, post it and count it (@a bytes of payload). */
pmix_status_t rdp_coll_send(coll_t *coll, sreq_t *req, const rdp_coll_hdr_t *h,
                            uint64_t bytes)
{
    pmix_status_t status;

    req->hdr_len = rdp_coll_hdr_encode(h, req->hdr);
    status       = sreq_post(req);
    if (status == PMIX_SUCCESS) {
        coll->msgs_sent++;
        coll->bytes_sent += bytes;
    }
    return status;
}

/* Add block @a b of @a coll (header and bytes, in place) to the payload
 * of @a req: a piece of its own when the block is sealed, else appended to
 * the previous piece if that is unsealed and ends where the block starts.
 * Returns the bytes added. */
static size_t sreq_add_block(sreq_t *req, const coll_t *coll, uint32_t b)
{
    const rdp_coll_block_t *blk = &coll->blocks[b];
    const uint8_t *start = (const uint8_t *)blk->data - RDP_COLL_BLK_HDR_LEN;
    size_t len           = RDP_COLL_BLK_HDR_LEN + (size_t)blk->len;
    int sealed = (coll->sealed != NULL) && coll->sealed[b];
    rdp_iov_t *last = (req->iovcnt > 0) ? &req->iov[req->iovcnt - 1] : NULL;

    if (!sealed && (last != NULL)
        && ((req->seals == NULL) || (req->seals[req->iovcnt - 1] == NULL))
        && ((const uint8_t *)last->base + last->len == start)) {
        last->len += len;
        return len;
    }
    req->iov[req->iovcnt].base = start;
    req->iov[req->iovcnt].len  = len;
    if (req->seals != NULL) {
        req->seals[req->iovcnt] = sealed ? &coll->seals[b] : NULL;
    }
    req->iovcnt++;
    return len;
}

/* A 2-participant allgather whose caller needs no own block in the
 * result (args.own_unneeded): once every send of it completed, my block
 * is freed before the other's arrives (a process that reuses freed
 * memory then receives into pages it just wrote, not fresh ones).  Its
 * length stays in the result, its data is NULL. */
static void own_drop_sent(coll_t *coll)
{
    if (coll->own_unneeded && (coll->own != NULL) && (coll->pending_io == 0)
        && (coll->state == COLL_RUNNING) && !coll->own_pieces) {
        rdp_free(coll->own);
        coll->own                     = NULL;
        coll->blocks[coll->rank].data = NULL;
        coll->engine->stats.own_dropped++;
    }
}

/* Post the sends of step @a step: the blocks of @a x, pointed at in place
 * (small scattered payloads are copied together, see RDP_COLL_FLAT_MAX),
 * sealed blocks with their seals. */
static pmix_status_t post_step_send(coll_t *coll, uint32_t step,
                                    const rdp_sched_xfer_t *x)
{
    uint32_t nblocks = rdp_sched_xfer_nblocks(x);
    size_t room      = sizeof(sreq_t) + (size_t)nblocks * sizeof(rdp_iov_t);
    int any_sealed   = 0;
    rdp_coll_hdr_t h;
    uint64_t bytes = 0;
    pmix_status_t status;
    sreq_t *req;

    if (coll->seals != NULL) {
        room += (size_t)nblocks * sizeof(*req->seals);
    }
    req = sreq_get(coll->engine, room);
    if (req == NULL) {
        rdp_log_error(COLL, "cannot allocate a send of %u blocks", nblocks);
        return PMIX_ERR_NOMEM;
    }
    req->engine = coll->engine;
    req->coll   = coll;
    req->peer   = coll->parts[x->peer];
    if (coll->seals != NULL) {
        req->seals = (const rdp_tl_seal_t **)(void *)&req->iov[nblocks];
    }
    for (uint32_t r = 0; r < x->nranges; r++) {
        for (uint32_t i = 0; i < x->ranges[r].count; i++) {
            uint32_t b = x->ranges[r].first + i;

            if (b >= coll->n) {
                b -= coll->n;
            }
            if (coll->blocks[b].data == NULL) {
                /* the schedules guarantee this never happens */
                rdp_log_error(COLL, "step %u: block %u to send is missing",
                              step, b);
                rdp_free(req);
                return PMIX_ERROR;
            }
            bytes += sreq_add_block(req, coll, b);
            any_sealed |= (coll->sealed != NULL) && coll->sealed[b];
        }
    }
    if (!any_sealed) {
        req->seals = NULL;
    }
    if (!any_sealed && req->iovcnt > 1 && bytes <= RDP_COLL_FLAT_MAX) {
        req = sreq_flatten(req, nblocks, bytes);
        if (req == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    rdp_coll_fill_hdr(&h, coll, RDP_COLL_MSG_DATA);
    h.step    = step;
    h.nblocks = nblocks;
    status    = rdp_coll_send(coll, req, &h, bytes);
    if (status == PMIX_SUCCESS) {
        own_drop_sent(coll); /* when it went at once */
    }
    return status;
}

const rdp_sched_step_t *rdp_coll_sched_step(coll_t *coll, uint32_t step)
{
    if (coll->memo_step != step + 1) {
        if (rdp_sched_step(coll->alg, coll->rank, coll->n, step, &coll->memo)
            != PMIX_SUCCESS) {
            coll->memo_step = 0;
            return NULL;
        }
        coll->memo_step = step + 1;
    }
    return &coll->memo;
}

/* Universe index of the peer @a coll sends to at @a step (UINT32_MAX:
 * none). */
uint32_t rdp_coll_send_peer(const coll_t *coll, uint32_t step)
{
    rdp_sched_step_t st;

    (void)rdp_sched_step(coll->alg, coll->rank, coll->n, step, &st);
    return st.send.peer >= 0 ? coll->parts[st.send.peer] : UINT32_MAX;
}

/* A send of step @a step could not be posted: end @a coll. */
void rdp_coll_step_send_failed(coll_t *coll, uint32_t step,
                               pmix_status_t status)
{
    if (status == PMIX_ERR_NOMEM) {
        rdp_coll_finish(coll, status, UINT32_MAX, 1);
    } else {
        rdp_coll_finish(coll, PMIX_ERR_UNREACH, rdp_coll_send_peer(coll, step),
                        1);
    }
}

/* Post the sends of step @a step.  In a ring, my own segmented block is
 * cut into pieces here, and a block that arrived in pieces needs nothing:
 * each piece was forwarded as it landed. */
static pmix_status_t post_step(coll_t *coll, uint32_t step,
                               const rdp_sched_xfer_t *x)
{
    if (coll->alg == RDP_COLL_ALG_RING && coll->kind == RDP_COLL_ALLGATHER) {
        uint32_t b = x->ranges[0].first;

        if (b == coll->rank && coll->own_pieces) {
            return rdp_coll_ring_send_own_block(coll);
        }
        if (coll->pieces != NULL && coll->pieces[b].buf != NULL) {
            return PMIX_SUCCESS;
        }
    }
    return post_step_send(coll, step, x);
}

/* ---- the 2-participant fast path ----
 * A collective of 2 participants has one step whatever its algorithm:
 * each sends its block (an allgather; nothing for a barrier) to the other
 * and receives the other's.  For the common case -- the message of that
 * step, whole, for the collective running or started next -- the three
 * functions below stand in for the schedule (rdp_coll_sched_step), the
 * generic step send (post_step_send), the header and payload walk
 * (check_data_hdr, walk_blocks), the receive record (rx_t) and
 * rdp_coll_advance, between the transport's receive upcall and the next
 * send (bench/RESULTS.md, issue 11, helper iso9).  Whatever does not fit
 * exactly goes the generic way, which logs, drops and fails as always. */

_Static_assert(RDP_COLL_OWN_INLINE < RDP_COLL_SEAL_MIN,
               "a fast2 allgather's own block is never sealed");

/* Whether a collective of @a args with @a nsteps steps may take the fast
 * path: 2 participants, one step, a barrier or an allgather whose own
 * block is small (never sealed; coll_create rules out pieces). */
static int fast2_shape(const rdp_coll_engine_t *engine,
                       const rdp_coll_args_t *args, uint32_t nsteps)
{
    return !engine->generic_only && (args->nparts == 2) && (nsteps == 1)
           && ((args->kind == RDP_COLL_BARRIER)
               || ((uint64_t)args->len <= RDP_COLL_OWN_INLINE));
}

/* The one step's send of a fast2 @a coll, the message post_step_send
 * makes for this shape: my block (header and bytes, in place) to the
 * other participant, or no payload for a barrier. */
static pmix_status_t fast2_post(coll_t *coll)
{
    int allgather = coll->kind == RDP_COLL_ALLGATHER;
    sreq_t *req   = sreq_get(coll->engine, sizeof(sreq_t) + sizeof(rdp_iov_t));
    rdp_coll_hdr_t h;
    uint64_t bytes = 0;

    if (req == NULL) {
        rdp_log_error(COLL, "cannot allocate a send of %d blocks", allgather);
        return PMIX_ERR_NOMEM;
    }
    req->engine = coll->engine;
    req->coll   = coll;
    req->peer   = coll->parts[1 - coll->rank];
    if (allgather) {
        bytes            = RDP_COLL_BLK_HDR_LEN + coll->blocks[coll->rank].len;
        req->iov[0].base = coll->own;
        req->iov[0].len  = (size_t)bytes;
        req->iovcnt      = 1;
    }
    rdp_coll_fill_hdr(&h, coll, RDP_COLL_MSG_DATA);
    h.nblocks = (uint32_t)allgather; /* step 0 */
    coll->engine->stats.fast_sent++;
    return rdp_coll_send(coll, req, &h, bytes);
}

/* Whether the message with header @a h (which found the fast2 @a coll by
 * its key), @a nseals seals and the @a len payload bytes at @a data (NULL:
 * not here yet) is exactly the one @a coll waits for, and at most @a max
 * bytes: the step-0 DATA of the other participant carrying its block
 * whole, as check_data_hdr and walk_blocks would accept it. */
static int fast2_fits(const coll_t *coll, const rdp_coll_hdr_t *h,
                      int payload_open, size_t nseals, const uint8_t *data,
                      size_t len, size_t max)
{
    uint32_t other = 1 - coll->rank;

    if ((h->type != RDP_COLL_MSG_DATA) || (coll->state != COLL_RUNNING)
        || (coll->cur != 0) || !coll->entered
        || (coll->steps[0] != STEP_WAITING) || (h->alg != coll->alg)
        || (h->nparts != 2) || (h->step != 0)
        || (h->sender != coll->parts[other]) || (nseals != 0)
        || (payload_open && !coll->open_payload)) {
        return 0;
    }
    if (coll->kind == RDP_COLL_BARRIER) {
        return (h->nblocks == 0) && (len == 0);
    }
    return (h->nblocks == 1) && (data != NULL) && (len >= RDP_COLL_BLK_HDR_LEN)
           && (len <= max) && (rdp_coll_get_u32(data) == coll->parts[other])
           && (rdp_coll_get_u64(data + 4) == len - RDP_COLL_BLK_HDR_LEN)
           && (coll->blocks[other].data == NULL);
}

/* The message fast2_fits accepted was received: the other's block is at
 * @a blk ([header][bytes], kept as long as @a coll; NULL for a barrier),
 * and @a coll is complete. */
static void fast2_complete(coll_t *coll, const uint8_t *blk)
{
    if (blk != NULL) {
        uint32_t other = 1 - coll->rank;

        coll->blocks[other].data = blk + RDP_COLL_BLK_HDR_LEN;
        coll->blocks[other].len  = rdp_coll_get_u64(blk + 4);
    }
    coll->steps[0] = STEP_RECEIVED;
    coll->cur      = 1;
    coll->entered  = 0;
    coll->engine->stats.fast_completed++;
    rdp_coll_finish(coll, PMIX_SUCCESS, UINT32_MAX, 0);
}

/* ---- completion ---- */

#define COLL_ALIGN(_n) (((_n) + 7u) & ~(size_t)7u)

/* A collective block of at least @a need bytes whose first @a zero bytes
 * are zeroed (the rest is written before it is read): a kept one when one
 * fits, else a new one; NULL when out of memory. */
static coll_t *coll_block_get(rdp_coll_engine_t *engine, size_t need,
                              size_t zero)
{
    coll_t *coll;

    rdp_list_for_each(coll, &engine->spare, link) {
        if (coll->cap >= need) {
            size_t cap = coll->cap;

            rdp_list_del(&coll->link);
            engine->nspare--;
            engine->stats.colls_reused++;
            memset(coll, 0, zero);
            coll->cap = cap;
            return coll;
        }
    }
    coll = rdp_calloc(1, need);
    if (coll != NULL) {
        coll->cap = need;
    }
    return coll;
}

/* Keep @a coll's block for the next collective, or free it. */
static void coll_block_put(rdp_coll_engine_t *engine, coll_t *coll)
{
    if (!spare_keep(&engine->spare, &engine->nspare, RDP_COLL_SPARE,
                    &coll->link)) {
        rdp_free(coll);
    }
}

static void coll_block_free_spare(rdp_coll_engine_t *engine)
{
    spare_drain(&engine->spare, &engine->nspare, offsetof(coll_t, link));
}

static void coll_free(coll_t *coll)
{
    rdp_list_t *item;
    rx_t *rx;
    rx_t *tmp;

    rdp_list_for_each_safe(rx, tmp, &coll->segs, link) {
        rdp_coll_rx_free(rx);
    }
    /* fetches still listed here were cancelled by unbind */
    while ((item = rdp_list_pop_front(&coll->fetches)) != NULL) {
        rdp_free(rdp_container_of(item, piece_fetch_t, link));
    }
    if (coll->pieces != NULL) {
        for (uint32_t i = 0; i < coll->n; i++) {
            rdp_free(coll->pieces[i].buf);
            rdp_free(coll->pieces[i].ranges);
        }
        rdp_free(coll->pieces);
    }
    rdp_free(coll->seals);
    rdp_free(coll->sealed);
    if (!coll->own_inline) {
        rdp_free(coll->own);
    }
    coll_block_put(coll->engine, coll);
}

/* Run due callbacks; free collectives whose I/O has drained. */
static size_t run_done(rdp_coll_engine_t *engine)
{
    rdp_list_t *item;
    size_t ran = 0;

    while ((item = rdp_list_pop_front(&engine->done)) != NULL) {
        coll_t *coll = rdp_container_of(item, coll_t, link);
        rdp_coll_result_t res;

        memset(&res, 0, sizeof(res));
        res.status      = coll->status;
        res.kind        = coll->kind;
        res.alg         = coll->alg;
        res.opid        = coll->node.key.opid;
        res.failed_peer = coll->failed_peer;
        res.nsteps      = coll->cur;
        res.msgs_sent   = coll->msgs_sent;
        res.bytes_sent  = coll->bytes_sent;
        if (coll->status == PMIX_SUCCESS && coll->kind == RDP_COLL_ALLGATHER) {
            res.blocks  = coll->blocks;
            res.nblocks = coll->n;
        }
        coll->state = COLL_CALLED;
        engine->stats.completed++;
        ran++;
        engine->in_callback++;
        coll->cb(&res, coll->cbarg);
        engine->in_callback--;
        if (coll->pending_io == 0) {
            coll_free(coll);
        } else {
            /* freed by the last send or fetch completion */
            rdp_list_push_back(&engine->zombies, &coll->link);
        }
    }
    return ran;
}

static size_t run_p2p(rdp_coll_engine_t *engine);

static void defer_fired(void *arg)
{
    run_done(arg);
    run_p2p(arg);
}

/* The transport ended a pass outside every other call (tl.h): run the
 * due callbacks now instead of after one more loop pass (at 2 servers,
 * 2.2 us from a collective's last message to its callback). */
static void engine_progressed(void *arg)
{
    rdp_coll_engine_t *engine = arg;

    if (rdp_list_is_empty(&engine->done)
        && rdp_list_is_empty(&engine->p2p_ready)) {
        return;
    }
    /* what the callbacks start is dated by the transport's pass */
    engine->pass_time = engine->ops->pass_time != NULL
                            ? engine->ops->pass_time(engine->ctx)
                            : 0;
    engine->stats.completed_at_pass_end += run_done(engine);
    engine->pass_time = 0;
    run_p2p(engine);
}

/* The transport asks whether a busy poll serves anyone (tl.h). */
static int engine_waiting(void *arg)
{
    const rdp_coll_engine_t *engine = arg;

    return !rdp_list_is_empty(&engine->running);
}

static void schedule_done(rdp_coll_engine_t *engine)
{
    if (engine->pass_end || (engine->in_callback > 0)) {
        /* engine_progressed runs it at the end of this pass, or the
         * run_done loop whose callback is running takes it next */
        return;
    }
    if (engine->defer != NULL) {
        engine->stats.defers_armed++;
        rdp_timer_fire_soon(engine->defer);
    }
}

/* End @a coll with @a status (once); callback deferred. */
void rdp_coll_finish(coll_t *coll, pmix_status_t status, uint32_t failed_peer,
                     int tell_others)
{
    rdp_coll_engine_t *engine = coll->engine;

    if (coll->state != COLL_RUNNING) {
        return;
    }
    coll->state       = COLL_DONE;
    coll->status      = status;
    coll->failed_peer = failed_peer;
    rdp_keytab_remove(&engine->colls, &coll->node);
    if (engine->last == coll) {
        engine->last = NULL;
    }
    rdp_coll_keymem_add(&engine->finished, &coll->node.key);
    rdp_list_del(&coll->link);
    rdp_list_push_back(&engine->done, &coll->link);
    if (status != PMIX_SUCCESS) {
        if (failed_peer != UINT32_MAX) {
            rdp_log_info(COLL,
                         "%s %016llx:%llu step %u/%u failed (peer %u): %s",
                         rdp_coll_kind_name(coll->kind),
                         (unsigned long long)coll->node.key.sig,
                         (unsigned long long)coll->node.key.opid, coll->cur,
                         coll->nsteps, failed_peer, rdp_status_name(status));
        } else {
            rdp_log_info(COLL, "%s %016llx:%llu step %u/%u failed: %s",
                         rdp_coll_kind_name(coll->kind),
                         (unsigned long long)coll->node.key.sig,
                         (unsigned long long)coll->node.key.opid, coll->cur,
                         coll->nsteps, rdp_status_name(status));
        }
        if (tell_others) {
            send_aborts(coll);
        }
    }
    schedule_done(engine);
}

static void coll_timeout(void *arg)
{
    coll_t *coll = arg;

    rdp_log_warn(COLL, "%s %016llx:%llu timed out at step %u/%u",
                 rdp_coll_kind_name(coll->kind),
                 (unsigned long long)coll->node.key.sig,
                 (unsigned long long)coll->node.key.opid, coll->cur, coll->nsteps);
    rdp_coll_finish(coll, PMIX_ERR_TIMEOUT, UINT32_MAX, 1);
}

/* The clock, for deadlines (counted: stats.clock_reads). */
static double engine_now(rdp_coll_engine_t *engine)
{
    engine->stats.clock_reads++;
    return rdp_time_now();
}

/* Time out the running collectives whose deadline has passed (@a now). */
static void time_out_due(rdp_coll_engine_t *engine, double now)
{
    coll_t *coll;
    coll_t *tmp;

    rdp_list_for_each_safe(coll, tmp, &engine->running, link) {
        if ((coll->deadline > 0) && (now >= coll->deadline)) {
            coll_timeout(coll);
        }
    }
}

/* Arm the watchdog for @a deadline unless it goes off sooner already. */
static void watchdog_arm(rdp_coll_engine_t *engine, double deadline, double now)
{
    if ((engine->watch_at > 0) && (engine->watch_at <= deadline)) {
        return;
    }
    engine->watch_at = deadline;
    rdp_timer_start(engine->watchdog, deadline > now ? deadline - now : 0);
}

/* The earliest deadline came: time out what is due, then wait for the
 * next deadline of those still running.  One timer for all collectives
 * instead of a timer each (create, start, cancel and destroy per
 * collective cost ~1300 instructions of every small allgather). */
static void watchdog_fired(void *arg)
{
    rdp_coll_engine_t *engine = arg;
    double now                = engine_now(engine);
    double next               = 0;
    coll_t *coll;

    engine->watch_at = 0;
    time_out_due(engine, now);
    rdp_list_for_each(coll, &engine->running, link) {
        if ((coll->deadline > 0) && ((next == 0) || (coll->deadline < next))) {
            next = coll->deadline;
        }
    }
    if (next > 0) {
        watchdog_arm(engine, next, now);
    }
}

/* ---- receiving into a collective ---- */

enum hdr_verdict {
    HDR_OK,
    HDR_DROP,
    HDR_MISMATCH
};

/* Check a DATA header against the running @a coll; on HDR_OK fill *x with
 * the receive side of that step. */
static enum hdr_verdict check_data_hdr(coll_t *coll, const rdp_coll_hdr_t *h,
                                       rdp_sched_xfer_t *x)
{
    const rdp_sched_step_t *st = NULL;

    if (h->alg != coll->alg) {
        rdp_log_error(COLL,
                      "%s %016llx:%llu: server %u runs %s, this one %s "
                      "(RDPMIX_COLL_ALG and the size class must be identical "
                      "on every server)",
                      rdp_coll_kind_name(coll->kind),
                      (unsigned long long)h->sig, (unsigned long long)h->opid,
                      h->sender, rdp_coll_alg_name(h->alg),
                      rdp_coll_alg_name(coll->alg));
        return HDR_MISMATCH;
    }
    if (h->nparts != coll->n || h->step >= coll->nsteps
        || (st = rdp_coll_sched_step(coll, h->step)) == NULL
        || st->recv.peer < 0 || coll->parts[st->recv.peer] != h->sender
        || h->nblocks != rdp_sched_xfer_nblocks(&st->recv)) {
        rdp_log_warn(COLL,
                     "%s %016llx:%llu: dropping an unexpected message from %u "
                     "(step %u, %u blocks)",
                     rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                     (unsigned long long)h->opid, h->sender, h->step,
                     h->nblocks);
        return HDR_DROP;
    }
    if (coll->steps[h->step] != STEP_WAITING
        && (h->type != RDP_COLL_MSG_SEG
            || coll->steps[h->step] != STEP_PIECES)) {
        rdp_log_warn(COLL,
                     "%s %016llx:%llu: dropping a duplicate of step %u "
                     "from %u",
                     rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                     (unsigned long long)h->opid, h->step, h->sender);
        return HDR_DROP;
    }
    if (h->type == RDP_COLL_MSG_SEG
        && coll->parts[st->recv.ranges[0].first] != h->seg_origin) {
        rdp_log_warn(COLL,
                     "%s %016llx:%llu: dropping a piece of the block of %u "
                     "from %u at step %u, which carries the block of %u",
                     rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                     (unsigned long long)h->opid, h->seg_origin, h->sender,
                     h->step, coll->parts[st->recv.ranges[0].first]);
        return HDR_DROP;
    }
    *x = st->recv;
    return HDR_OK;
}

/* Room for the blocks' seals, made when the first seal comes (most
 * collectives of small blocks never see one).  0 when out of memory: the
 * blocks then travel unsealed, which costs only a MAC pass. */
static int seals_ready(coll_t *coll)
{
    if (coll->seals != NULL) {
        return 1;
    }
    coll->seals  = rdp_malloc((size_t)coll->n * sizeof(*coll->seals));
    coll->sealed = rdp_calloc(coll->n, 1);
    if ((coll->seals == NULL) || (coll->sealed == NULL)) {
        rdp_free(coll->seals);
        rdp_free(coll->sealed);
        coll->seals  = NULL;
        coll->sealed = NULL;
        return 0;
    }
    return 1;
}

/* Record the seal of block @a b if @a rx brought one for exactly its
 * bytes (header included) at offset @a off; *@a next is the first of rx's
 * seals not yet passed (runs come by increasing offset). */
static void take_block_seal(coll_t *coll, const rx_t *rx, size_t *next,
                            uint32_t b, uint64_t off, uint64_t len)
{
    while ((*next < rx->nseals) && (rx->seals[*next].off < off)) {
        (*next)++;
    }
    if ((*next < rx->nseals) && (rx->seals[*next].off == off)
        && (rx->seals[*next].len == len) && seals_ready(coll)) {
        coll->seals[b]  = rx->seals[*next].seal;
        coll->sealed[b] = 1;
    }
}

/* Walk the blocks of a payload expected to hold exactly the blocks of @a x.
 * With @a rx NULL only validate; else record them (after validation) with
 * the seals @a rx came with. */
static int walk_blocks(coll_t *coll, const rdp_sched_xfer_t *x,
                       const uint8_t *p, size_t left, const rx_t *rx)
{
    const uint8_t *start = p;
    size_t next_seal     = 0;

    for (uint32_t r = 0; r < x->nranges; r++) {
        for (uint32_t i = 0; i < x->ranges[r].count; i++) {
            uint32_t b = x->ranges[r].first + i;
            uint64_t blen;

            if (b >= coll->n) {
                b -= coll->n;
            }
            if (left < RDP_COLL_BLK_HDR_LEN) {
                return 0;
            }
            blen = rdp_coll_get_u64(p + 4);
            if (rdp_coll_get_u32(p) != coll->parts[b]
                || blen > left - RDP_COLL_BLK_HDR_LEN
                || blen > RDP_COLL_MAX_BLOCK || coll->blocks[b].data != NULL) {
                return 0;
            }
            if (rx != NULL) {
                coll->blocks[b].data = p + RDP_COLL_BLK_HDR_LEN;
                coll->blocks[b].len  = blen;
                if (rx->nseals > 0) {
                    take_block_seal(coll, rx, &next_seal, b,
                                    (uint64_t)(p - start),
                                    RDP_COLL_BLK_HDR_LEN + blen);
                }
            }
            p += RDP_COLL_BLK_HDR_LEN + blen;
            left -= RDP_COLL_BLK_HDR_LEN + (size_t)blen;
        }
    }
    return left == 0;
}

/* Validate and record a complete payload for its step; frees @a rx if it
 * is malformed.  Returns 1 if the step was received. */
static int ingest_rx(coll_t *coll, rx_t *rx)
{
    const rdp_sched_step_t *st;
    uint32_t step = rx->hdr.step;

    if (rx->hdr.type == RDP_COLL_MSG_SEG) {
        return rdp_coll_ring_ingest_piece(coll, rx);
    }
    st = rdp_coll_sched_step(coll, step); /* checked by check_data_hdr */
    if (st == NULL) {
        goto err_malformed;
    }
    if (coll->kind == RDP_COLL_BARRIER) {
        if (rx->len != 0) {
            goto err_malformed;
        }
    } else if (!walk_blocks(coll, &st->recv, rx->data, rx->len, NULL)) {
        goto err_malformed;
    } else {
        walk_blocks(coll, &st->recv, rx->data, rx->len, rx);
    }
    coll->steps[step] = STEP_RECEIVED;
    return 1;

err_malformed:
    rdp_log_warn(
        COLL,
        "%s %016llx:%llu: dropping a malformed step %u "
        "payload (%zu bytes) from %u",
        rdp_coll_kind_name(coll->kind), (unsigned long long)rx->hdr.sig,
        (unsigned long long)rx->hdr.opid, step, rx->len, rx->hdr.sender);
    coll->engine->stats.dropped++;
    coll->steps[step] = STEP_WAITING;
    rdp_coll_rx_free(rx);
    return 0;
}

/* Apply an ABORT to a running collective. */
static void apply_abort(coll_t *coll, const rdp_coll_hdr_t *h)
{
    pmix_status_t status = h->status;
    uint32_t peer        = h->aux;

    if (find_part(coll->parts, coll->n, h->sender) < 0) {
        rdp_log_warn(COLL,
                     "%s %016llx:%llu: dropping an abort from %u, "
                     "which does not take part",
                     rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                     (unsigned long long)h->opid, h->sender);
        coll->engine->stats.dropped++;
        return;
    }
    if (status >= 0) {
        status = PMIX_ERR_UNREACH;
    }
    if (peer != UINT32_MAX && peer >= coll->engine->nuniverse) {
        peer = UINT32_MAX;
    }
    rdp_log_debug(COLL, "%s %016llx:%llu: abort from %u",
                  rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                  (unsigned long long)h->opid, h->sender);
    rdp_coll_finish(coll, status, peer, 0);
}

int rdp_coll_open_ok(coll_t *coll, int payload_open, uint32_t sender)
{
    if (!payload_open || coll->open_payload) {
        return 1;
    }
    /* the header was authentic, so a server of the session sent it: a
     * bug or a mismatch of trust modes, or bytes changed on an open wire */
    rdp_log_warn(COLL,
                 "%s %016llx:%llu: dropping a payload from %u that came "
                 "unauthenticated: this job's payloads must be authenticated",
                 rdp_coll_kind_name(coll->kind),
                 (unsigned long long)coll->node.key.sig,
                 (unsigned long long)coll->node.key.opid, sender);
    coll->engine->stats.dropped++;
    coll->engine->stats.open_refused++;
    return 0;
}

/* Attach a message taken earlier (early queue) to the running @a coll.
 * Consumes @a rx. */
void rdp_coll_attach_rx(coll_t *coll, rx_t *rx)
{
    rdp_sched_xfer_t x;
    enum hdr_verdict v;

    rdp_list_del(&rx->link);
    if (coll->state != COLL_RUNNING) {
        rdp_coll_rx_free(rx);
        return;
    }
    if (rx->hdr.type == RDP_COLL_MSG_ABORT) {
        apply_abort(coll, &rx->hdr);
        rdp_coll_rx_free(rx);
        return;
    }
    if (coll->fast2 && !rx->fetching
        && fast2_fits(coll, &rx->hdr, rx->payload_open, rx->nseals, rx->data,
                      rx->len, SIZE_MAX)) {
        rx->coll = coll; /* it keeps the block */
        rdp_list_push_back(&coll->segs, &rx->link);
        fast2_complete(coll,
                       coll->kind == RDP_COLL_ALLGATHER ? rx->data : NULL);
        return;
    }
    if (!rdp_coll_open_ok(coll, rx->payload_open, rx->hdr.sender)) {
        rdp_coll_rx_free(rx);
        return;
    }
    v = check_data_hdr(coll, &rx->hdr, &x);
    if (v != HDR_OK) {
        coll->engine->stats.dropped++;
        rdp_coll_rx_free(rx);
        if (v == HDR_MISMATCH) {
            rdp_coll_finish(coll, PMIX_ERR_BAD_PARAM, UINT32_MAX, 1);
        }
        return;
    }
    rx->coll = coll;
    rdp_list_push_back(&coll->segs, &rx->link);
    if (rx->fetching) {
        if (rx->hdr.type != RDP_COLL_MSG_SEG) {
            coll->steps[rx->hdr.step] = STEP_FETCHING;
        }
        coll->pending_io++;
        return;
    }
    ingest_rx(coll, rx);
}

static void fetch_done(void *arg, pmix_status_t status)
{
    rx_t *rx                  = arg;
    rdp_coll_engine_t *engine = rx->engine;
    coll_t *coll              = rx->coll;

    rx->fetching = 0;
    if (rx->orphan) {
        rdp_list_del(&rx->link);
        rdp_coll_rx_free(rx);
        return;
    }
    if (coll == NULL) {
        /* still in the early queue */
        if (status != PMIX_SUCCESS) {
            rdp_log_warn(COLL, "fetching an early payload from %u failed: %s",
                         rx->hdr.sender, rdp_status_name(status));
            engine->early_msgs--;
            engine->early_bytes -= rx->len;
            rdp_coll_rx_free(rx);
        }
        return;
    }
    if (coll->state != COLL_RUNNING) {
        rdp_coll_rx_free(rx);
    }
    if (rdp_coll_io_done(coll)) {
        return;
    }
    if (status != PMIX_SUCCESS) {
        uint32_t sender = rx->hdr.sender;

        rdp_log_warn(COLL, "fetching step %u from %u failed: %s", rx->hdr.step,
                     sender, rdp_status_name(status));
        if (rx->hdr.type != RDP_COLL_MSG_SEG) {
            coll->steps[rx->hdr.step] = STEP_WAITING;
        }
        rdp_coll_rx_free(rx);
        rdp_coll_finish(coll, PMIX_ERR_UNREACH, sender, 1);
        return;
    }
    if (ingest_rx(coll, rx)) {
        rdp_coll_advance(coll);
    }
}

/* Run the schedule as far as the received steps allow. */
void rdp_coll_advance(coll_t *coll)
{
    const rdp_sched_step_t *st;
    pmix_status_t status;

    while (coll->state == COLL_RUNNING) {
        if (coll->cur == coll->nsteps) {
            rdp_coll_finish(coll, PMIX_SUCCESS, UINT32_MAX, 0);
            return;
        }
        st = rdp_coll_sched_step(coll, coll->cur); /* cur < nsteps */
        if (!coll->entered) {
            rdp_sched_xfer_t send = st->send;

            coll->entered = 1;
            if (send.peer >= 0) {
                status = post_step(coll, coll->cur, &send);
                if (status != PMIX_SUCCESS) {
                    rdp_coll_step_send_failed(coll, coll->cur, status);
                    return;
                }
                st = rdp_coll_sched_step(coll, coll->cur); /* kept */
            }
        }
        if (st->recv.peer >= 0 && coll->steps[coll->cur] != STEP_RECEIVED) {
            return;
        }
        coll->cur++;
        coll->entered = 0;
    }
}

/* ---- point-to-point messages ---- */

static void p2p_ev_free(p2p_ev_t *ev)
{
    rdp_free(ev->buf);
    rdp_free(ev);
}

static void p2p_free_list(rdp_list_t *list)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(list)) != NULL) {
        p2p_ev_free(rdp_container_of(item, p2p_ev_t, link));
    }
}

static void p2p_ready(rdp_coll_engine_t *engine, p2p_ev_t *ev)
{
    rdp_list_push_back(&engine->p2p_ready, &ev->link);
    schedule_done(engine);
}

static void p2p_queue_failed(rdp_coll_engine_t *engine, uint32_t peer,
                             pmix_status_t status)
{
    p2p_ev_t *ev;

    if (engine->p2p_ops == NULL) {
        return;
    }
    ev = rdp_calloc(1, sizeof(*ev));
    if (ev == NULL) {
        rdp_log_error(COLL, "cannot allocate the failure report of %u", peer);
        return;
    }
    rdp_list_init(&ev->link);
    ev->engine = engine;
    ev->failed = 1;
    ev->peer   = peer;
    ev->status = status;
    p2p_ready(engine, ev);
}

/* Hand due P2P events to the handler. */
static size_t run_p2p(rdp_coll_engine_t *engine)
{
    rdp_list_t *item;
    size_t ran = 0;

    while ((item = rdp_list_pop_front(&engine->p2p_ready)) != NULL) {
        p2p_ev_t *ev = rdp_container_of(item, p2p_ev_t, link);

        /* the handler may have been cleared meanwhile */
        if (engine->p2p_ops != NULL) {
            if (ev->failed) {
                engine->p2p_ops->peer_failed(engine->p2p_arg, ev->peer,
                                             ev->status);
            } else {
                engine->stats.p2p_received++;
                engine->p2p_ops->recv(engine->p2p_arg, ev->peer, ev->channel,
                                      ev->id, ev->buf, ev->len);
            }
            ran++;
        }
        p2p_ev_free(ev);
    }
    return ran;
}

static void p2p_fetch_done(void *arg, pmix_status_t status)
{
    p2p_ev_t *ev = arg;

    rdp_list_del(&ev->link);
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(COLL, "fetching a p2p payload from %u failed: %s",
                     ev->peer, rdp_status_name(status));
        p2p_ev_free(ev);
        return;
    }
    p2p_ready(ev->engine, ev);
}

static enum rdp_tl_rx_disp p2p_recv(rdp_coll_engine_t *engine,
                                    const rdp_coll_hdr_t *h,
                                    const rdp_tl_rx_t *trx)
{
    p2p_ev_t *ev;
    pmix_status_t status;

    if (engine->p2p_ops == NULL) {
        rdp_log_debug(COLL, "no p2p handler: dropping a message from %u",
                      h->sender);
        engine->stats.dropped++;
        return RDP_TL_RX_DONE;
    }
    if (trx->payload_open) {
        /* point-to-point payloads are always authenticated */
        rdp_log_warn(COLL, "dropping an unauthenticated p2p payload from %u",
                     h->sender);
        engine->stats.dropped++;
        engine->stats.open_refused++;
        return RDP_TL_RX_DONE;
    }
    ev = rdp_calloc(1, sizeof(*ev));
    if (ev != NULL && trx->len > 0) {
        ev->buf = rdp_malloc(trx->len);
    }
    if (ev == NULL || (trx->len > 0 && ev->buf == NULL)) {
        rdp_log_error(COLL, "cannot allocate a %zu-byte p2p message from %u",
                      trx->len, h->sender);
        rdp_free(ev);
        return RDP_TL_RX_DONE;
    }
    rdp_list_init(&ev->link);
    ev->engine  = engine;
    ev->peer    = h->sender;
    ev->channel = h->step;
    ev->id      = h->opid;
    ev->len     = trx->len;
    if (trx->kind != RDP_TL_DATA_RNDV || trx->len == 0) {
        if (trx->len > 0) {
            memcpy(ev->buf, trx->data, trx->len);
        }
        p2p_ready(engine, ev);
        return RDP_TL_RX_DONE;
    }
    rdp_list_push_back(&engine->p2p_fetching, &ev->link);
    status = engine->ops->fetch(engine->ctx, trx->desc, ev->buf, trx->len,
                                p2p_fetch_done, ev);
    if (status == PMIX_OPERATION_SUCCEEDED) {
        rdp_list_del(&ev->link);
        p2p_ready(engine, ev);
    } else if (status != PMIX_SUCCESS) {
        rdp_log_warn(COLL, "cannot fetch a %zu-byte p2p payload from %u: %s",
                     trx->len, h->sender, rdp_status_name(status));
        rdp_list_del(&ev->link);
        p2p_ev_free(ev);
    }
    return RDP_TL_RX_KEPT; /* the desc is consumed either way */
}

void rdp_coll_engine_set_p2p_handler(rdp_coll_engine_t *engine,
                                     const rdp_coll_p2p_ops_t *ops, void *arg)
{
    ENGINE_ASSERT_OWNER(engine);
    if (ops != NULL && (ops->recv == NULL || ops->peer_failed == NULL)) {
        rdp_log_error(COLL, "incomplete p2p handler ignored");
        return;
    }
    engine->p2p_ops = ops;
    engine->p2p_arg = arg;
}

pmix_status_t rdp_coll_cancel(rdp_coll_engine_t *engine,
                              enum rdp_coll_kind kind, uint64_t sig,
                              uint64_t opid, pmix_status_t status)
{
    coll_key_t key;
    coll_t *coll;

    ENGINE_ASSERT_OWNER(engine);
    if (status >= 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    rdp_coll_make_key(&key, kind, sig, opid);
    coll = find_running(engine, &key);
    if (coll == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    rdp_coll_finish(coll, status, UINT32_MAX, 0);
    return PMIX_SUCCESS;
}

int rdp_coll_engine_peer_failed(const rdp_coll_engine_t *engine, uint32_t peer)
{
    return peer < engine->nuniverse && engine->failed[peer];
}

pmix_status_t rdp_coll_p2p_send(rdp_coll_engine_t *engine, uint32_t peer,
                                uint32_t channel, uint64_t id,
                                const rdp_iov_t *iov, size_t iovcnt)
{
    rdp_coll_hdr_t h;
    uint64_t total = 0;
    uint8_t *p;
    sreq_t *req;
    pmix_status_t status;

    if (engine == NULL || (iov == NULL && iovcnt > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    ENGINE_ASSERT_OWNER(engine);
    for (size_t i = 0; i < iovcnt; i++) {
        if (iov[i].base == NULL && iov[i].len > 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        total += iov[i].len;
    }
    if (peer >= engine->nuniverse || peer == engine->me
        || total > RDP_COLL_P2P_MAX) {
        rdp_log_error(COLL, "bad p2p message to %u (%llu bytes)", peer,
                      (unsigned long long)total);
        return PMIX_ERR_BAD_PARAM;
    }
    if (engine->failed[peer]) {
        return PMIX_ERR_UNREACH;
    }
    req = rdp_calloc(1, sizeof(*req) + sizeof(rdp_iov_t) + (size_t)total);
    if (req == NULL) {
        rdp_log_error(COLL, "cannot allocate a %llu-byte p2p message",
                      (unsigned long long)total);
        return PMIX_ERR_NOMEM;
    }
    req->engine = engine;
    req->peer   = peer;
    req->p2p    = 1;
    p           = (uint8_t *)&req->iov[1];
    for (size_t i = 0; i < iovcnt; i++) {
        if (iov[i].len > 0) {
            memcpy(p, iov[i].base, iov[i].len);
            p += iov[i].len;
        }
    }
    if (total > 0) {
        req->iov[0].base = &req->iov[1];
        req->iov[0].len  = (size_t)total;
        req->iovcnt      = 1;
    }
    memset(&h, 0, sizeof(h));
    h.type       = RDP_COLL_MSG_P2P;
    h.opid       = id;
    h.sender     = engine->me;
    h.step       = channel;
    h.aux        = UINT32_MAX;
    req->hdr_len = rdp_coll_hdr_encode(&h, req->hdr);
    status       = sreq_post(req);
    if (status == PMIX_SUCCESS) {
        engine->stats.p2p_sent++;
    } else {
        rdp_log_warn(COLL, "cannot send a p2p message to %u: %s", peer,
                     rdp_status_name(status));
    }
    return status;
}

/* ---- the transport's upcalls ---- */

/* Header checks that need no collective. */
static int hdr_sane(const rdp_coll_engine_t *engine, const rdp_coll_hdr_t *h,
                    const rdp_tl_rx_t *trx)
{
    if (h->type == RDP_COLL_MSG_P2P) {
        return h->kind == 0 && h->alg == 0 && h->sig == 0 && h->nparts == 0
               && h->nblocks == 0 && h->status == 0 && h->flags == 0
               && h->sender < engine->nuniverse && h->sender != engine->me
               && (trx->peer == RDP_TL_PEER_UNKNOWN || trx->peer == h->sender)
               && (uint64_t)trx->len <= RDP_COLL_P2P_MAX;
    }
    if (h->type != RDP_COLL_MSG_DATA && h->type != RDP_COLL_MSG_ABORT
        && h->type != RDP_COLL_MSG_SEG) {
        return 0;
    }
    if (h->kind != RDP_COLL_BARRIER && h->kind != RDP_COLL_ALLGATHER) {
        return 0;
    }
    if (h->nparts == 0 || h->nparts > engine->nuniverse
        || h->sender >= engine->nuniverse || h->sender == engine->me) {
        return 0;
    }
    if (trx->peer != RDP_TL_PEER_UNKNOWN && trx->peer != h->sender) {
        return 0;
    }
    if (h->type == RDP_COLL_MSG_ABORT) {
        return trx->len == 0;
    }
    if (h->type == RDP_COLL_MSG_SEG) {
        return rdp_coll_ring_piece_sane(h, trx);
    }
    if (h->alg == RDP_COLL_ALG_DISSEM) {
        if (h->kind != RDP_COLL_BARRIER || h->nblocks != 0 || trx->len != 0) {
            return 0;
        }
    } else if (h->kind != RDP_COLL_ALLGATHER
               || (h->alg != RDP_COLL_ALG_RD && h->alg != RDP_COLL_ALG_BRUCK
                   && h->alg != RDP_COLL_ALG_RING)) {
        return 0;
    }
    if (h->step >= rdp_sched_nsteps(h->alg, h->nparts) || h->nblocks > h->nparts
        || trx->len < (uint64_t)h->nblocks * RDP_COLL_BLK_HDR_LEN) {
        return 0;
    }
    return 1;
}

static enum rdp_tl_rx_disp recv_msg(rdp_coll_engine_t *engine,
                                    const rdp_tl_rx_t *trx);

/* The transport's receive upcall. */
static enum rdp_tl_rx_disp engine_recv(void *arg, const rdp_tl_rx_t *trx)
{
    rdp_coll_engine_t *engine = arg;
    enum rdp_tl_rx_disp disp;

    engine->pass_end = trx->pass_end && (engine->up.progressed != NULL);
    disp             = recv_msg(engine, trx);
    engine->pass_end = 0;
    return disp;
}

static enum rdp_tl_rx_disp recv_msg(rdp_coll_engine_t *engine,
                                    const rdp_tl_rx_t *trx)
{
    enum rdp_tl_rx_disp disp  = RDP_TL_RX_DONE;
    rdp_sched_xfer_t x;
    rdp_coll_hdr_t h;
    coll_key_t key;
    coll_t *coll;
    rx_t *rx;

    ENGINE_ASSERT_OWNER(engine);
    if (rdp_coll_hdr_decode(trx->hdr, trx->hdr_len, &h) != PMIX_SUCCESS
        || !hdr_sane(engine, &h, trx)) {
        rdp_log_warn(COLL,
                     "dropping a malformed message (%zu-byte header, "
                     "%zu-byte payload) from peer %d",
                     trx->hdr_len, trx->len,
                     trx->peer == RDP_TL_PEER_UNKNOWN ? -1 : (int)trx->peer);
        engine->stats.dropped++;
        return RDP_TL_RX_DONE;
    }
    if (h.type == RDP_COLL_MSG_P2P) {
        return p2p_recv(engine, &h, trx);
    }
    coll = engine->last; /* find_running's cache, without making a key */
    if ((coll != NULL) && (coll->node.key.opid == h.opid)
        && (coll->node.key.sig == h.sig) && (coll->node.key.kind == h.kind)) {
        engine->stats.lookup_hits++;
        if (coll->fast2
            && fast2_fits(coll, &h, trx->payload_open, trx->nseals,
                          trx->kind == RDP_TL_DATA_RNDV ? NULL : trx->data,
                          trx->len, coll->room_len)) {
            /* a borrowed (or keepable) payload: copied into the room */
            if (coll->kind == RDP_COLL_ALLGATHER) {
                memcpy(coll->room, trx->data, trx->len);
            }
            fast2_complete(coll, coll->kind == RDP_COLL_ALLGATHER ? coll->room
                                                                  : NULL);
            return RDP_TL_RX_DONE;
        }
    } else {
        rdp_coll_make_key(&key, h.kind, h.sig, h.opid);
        coll = find_running(engine, &key);
    }
    if (coll == NULL) {
        if (keymem_has(&engine->finished, &key)
            || keymem_has(&engine->poisoned, &key)) {
            rdp_log_debug(COLL,
                          "%s %016llx:%llu is over here: dropping a "
                          "late message from %u",
                          rdp_coll_kind_name(h.kind), (unsigned long long)h.sig,
                          (unsigned long long)h.opid, h.sender);
            engine->stats.dropped++;
            return RDP_TL_RX_DONE;
        }
        return rdp_coll_early_enqueue(engine, &h, trx);
    }
    if (h.type == RDP_COLL_MSG_ABORT) {
        apply_abort(coll, &h);
        return RDP_TL_RX_DONE;
    }
    if (!rdp_coll_open_ok(coll, trx->payload_open, h.sender)) {
        return RDP_TL_RX_DONE;
    }
    switch (check_data_hdr(coll, &h, &x)) {
    case HDR_DROP:
        engine->stats.dropped++;
        return RDP_TL_RX_DONE;
    case HDR_MISMATCH:
        engine->stats.dropped++;
        rdp_coll_finish(coll, PMIX_ERR_BAD_PARAM, UINT32_MAX, 1);
        return RDP_TL_RX_DONE;
    case HDR_OK:
        break;
    }
    if (h.type == RDP_COLL_MSG_SEG) {
        return rdp_coll_ring_recv_piece(coll, &h, &x, trx);
    }
    /* validate in place before keeping or copying anything */
    if (trx->kind != RDP_TL_DATA_RNDV && coll->kind == RDP_COLL_ALLGATHER
        && !walk_blocks(coll, &x, trx->data, trx->len, NULL)) {
        rdp_log_warn(COLL,
                     "%s %016llx:%llu: dropping a malformed step %u "
                     "payload (%zu bytes) from %u",
                     rdp_coll_kind_name(coll->kind), (unsigned long long)h.sig,
                     (unsigned long long)h.opid, h.step, trx->len, h.sender);
        engine->stats.dropped++;
        return RDP_TL_RX_DONE;
    }
    rx = rdp_coll_rx_create(engine, &h, trx);
    if (rx == NULL) {
        rdp_coll_finish(coll, PMIX_ERR_NOMEM, UINT32_MAX, 1);
        return RDP_TL_RX_DONE;
    }
    if (rdp_coll_rx_take_payload(rx, trx, &disp) != PMIX_SUCCESS) {
        rdp_free(rx->buf);
        rdp_free(rx->seals);
        rdp_free(rx);
        rdp_coll_finish(coll, PMIX_ERR_NOMEM, UINT32_MAX, 1);
        return disp;
    }
    rx->coll = coll;
    rdp_list_push_back(&coll->segs, &rx->link);
    if (rx->fetching) {
        coll->steps[h.step] = STEP_FETCHING;
        coll->pending_io++;
        return disp;
    }
    if (ingest_rx(coll, rx)) {
        rdp_coll_advance(coll);
    }
    return disp;
}

static void engine_peer_failed(void *arg, uint32_t peer, pmix_status_t status)
{
    rdp_coll_engine_t *engine = arg;
    coll_t *coll;
    coll_t *tmp;

    ENGINE_ASSERT_OWNER(engine);
    if (peer >= engine->nuniverse || peer == engine->me) {
        rdp_log_warn(COLL, "ignoring a failure report for bad peer %u", peer);
        return;
    }
    if (engine->failed[peer]) {
        return;
    }
    rdp_log_info(COLL, "peer %u failed: %s", peer, rdp_status_name(status));
    engine->failed[peer] = 1;
    p2p_queue_failed(engine, peer, status);
    rdp_list_for_each_safe(coll, tmp, &engine->running, link) {
        if (find_part(coll->parts, coll->n, peer) >= 0) {
            rdp_coll_finish(coll, PMIX_ERR_UNREACH, peer, 1);
        }
    }
}

/* ---- engine ---- */

pmix_status_t rdp_coll_engine_create(const rdp_coll_engine_config_t *cfg,
                                     rdp_coll_engine_t **engine_p)
{
    rdp_coll_engine_t *engine;
    pmix_status_t status;

    if (cfg == NULL || engine_p == NULL || cfg->tl_ops == NULL
        || cfg->tl_ops->bind == NULL || cfg->tl_ops->unbind == NULL
        || cfg->tl_ops->send == NULL || cfg->tl_ops->fetch == NULL
        || cfg->tl_ops->release == NULL || cfg->nuniverse == 0
        || cfg->nuniverse > INT32_MAX || cfg->me >= cfg->nuniverse
        || cfg->alg >= RDP_COLL_ALG_LAST || cfg->alg == RDP_COLL_ALG_DISSEM) {
        rdp_log_error(COLL, "bad collective engine configuration");
        return PMIX_ERR_BAD_PARAM;
    }
    engine = rdp_calloc(1, sizeof(*engine));
    if (engine == NULL) {
        return PMIX_ERR_NOMEM;
    }
    engine->ops             = cfg->tl_ops;
    engine->ctx             = cfg->tl_ctx;
    engine->nuniverse       = cfg->nuniverse;
    engine->me              = cfg->me;
    engine->loop            = cfg->loop;
    engine->early_max_msgs  = cfg->early_max_msgs != 0
                                  ? cfg->early_max_msgs
                                  : RDP_COLL_EARLY_MAX_MSGS_DEFAULT;
    engine->early_max_bytes = cfg->early_max_bytes != 0
                                  ? cfg->early_max_bytes
                                  : RDP_COLL_EARLY_MAX_BYTES_DEFAULT;
    rdp_list_init(&engine->running);
    rdp_list_init(&engine->done);
    rdp_list_init(&engine->zombies);
    rdp_list_init(&engine->spare);
    rdp_list_init(&engine->spare_sends);
    rdp_list_init(&engine->spare_rx);
    rdp_list_init(&engine->sends);
    rdp_list_init(&engine->orphans);
    rdp_list_init(&engine->p2p_ready);
    rdp_list_init(&engine->p2p_fetching);
    engine->forced = cfg->alg;
    engine->generic_only = cfg->generic_only;
    if (engine->forced == RDP_COLL_ALG_AUTO) {
        status = rdp_coll_alg_from_env(&engine->forced);
        if (status != PMIX_SUCCESS) {
            goto err_free;
        }
    }
    status = rdp_coll_seg_bytes_from_env(&engine->seg_bytes);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }
    status         = PMIX_ERR_NOMEM;
    engine->failed = rdp_calloc(cfg->nuniverse, 1);
    if (engine->failed == NULL) {
        goto err_free;
    }
    if (rdp_keytab_init(&engine->colls, 0) != PMIX_SUCCESS) {
        goto err_failed;
    }
    if (rdp_keytab_init(&engine->early, 0) != PMIX_SUCCESS) {
        goto err_colls;
    }
    if (keymem_init(&engine->finished, RDP_COLL_KEY_MEMORY) != PMIX_SUCCESS) {
        goto err_early;
    }
    if (keymem_init(&engine->poisoned, RDP_COLL_KEY_MEMORY) != PMIX_SUCCESS) {
        goto err_finished;
    }
    if (engine->loop != NULL) {
        status =
            rdp_timer_create(engine->loop, defer_fired, engine, &engine->defer);
        if (status != PMIX_SUCCESS) {
            goto err_poisoned;
        }
        status = rdp_timer_create(engine->loop, watchdog_fired, engine,
                                  &engine->watchdog);
        if (status != PMIX_SUCCESS) {
            goto err_defer;
        }
    }
    engine->up.recv        = engine_recv;
    engine->up.peer_failed = engine_peer_failed;
    engine->up.waiting     = engine_waiting;
    if (engine->loop != NULL) {
        /* loop-less engines run callbacks from rdp_coll_engine_progress
         * only */
        engine->up.progressed = engine_progressed;
    }
    status = engine->ops->bind(engine->ctx, &engine->up, engine);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(COLL, "cannot bind to transport %s: %s",
                      engine->ops->name != NULL ? engine->ops->name : "?",
                      rdp_status_name(status));
        goto err_defer;
    }
    engine->bound = 1;
    *engine_p     = engine;
    return PMIX_SUCCESS;

err_defer:
    rdp_timer_destroy(engine->watchdog);
    rdp_timer_destroy(engine->defer);
err_poisoned:
    keymem_cleanup(&engine->poisoned);
err_finished:
    keymem_cleanup(&engine->finished);
err_early:
    rdp_keytab_cleanup(&engine->early);
err_colls:
    rdp_keytab_cleanup(&engine->colls);
err_failed:
    rdp_free(engine->failed);
err_free:
    rdp_free(engine);
    return status;
}

static void free_coll_list_unbound(rdp_list_t *list)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(list)) != NULL) {
        coll_t *coll = rdp_container_of(item, coll_t, link);
        rdp_list_t *ri;

        while ((ri = rdp_list_pop_front(&coll->segs)) != NULL) {
            rdp_coll_rx_free_unbound(rdp_container_of(ri, rx_t, link));
        }
        coll_free(coll);
    }
}

void rdp_coll_engine_destroy(rdp_coll_engine_t *engine)
{
    rdp_list_t *item;

    if (engine == NULL) {
        return;
    }
    /* after unbind nothing calls back and no buffer is read or written */
    if (engine->bound) {
        engine->ops->unbind(engine->ctx);
        engine->bound = 0;
    }
    while ((item = rdp_list_pop_front(&engine->sends)) != NULL) {
        rdp_free(rdp_container_of(item, sreq_t, link));
    }
    while ((item = rdp_list_pop_front(&engine->orphans)) != NULL) {
        rdp_coll_rx_free_unbound(rdp_container_of(item, rx_t, link));
    }
    p2p_free_list(&engine->p2p_ready);
    p2p_free_list(&engine->p2p_fetching);
    free_coll_list_unbound(&engine->running);
    free_coll_list_unbound(&engine->done);
    free_coll_list_unbound(&engine->zombies);
    coll_block_free_spare(engine);
    sreq_free_spare(engine);
    rx_free_spare(engine);
    rdp_coll_early_free_unbound(engine);
    rdp_keytab_cleanup(&engine->early);
    rdp_keytab_cleanup(&engine->colls);
    keymem_cleanup(&engine->finished);
    keymem_cleanup(&engine->poisoned);
    rdp_timer_destroy(engine->watchdog);
    rdp_timer_destroy(engine->defer);
    rdp_free(engine->failed);
    rdp_free(engine);
}

size_t rdp_coll_engine_progress(rdp_coll_engine_t *engine)
{
    if (engine == NULL) {
        return 0;
    }
    ENGINE_ASSERT_OWNER(engine);
    if (!rdp_list_is_empty(&engine->running)) {
        time_out_due(engine, engine_now(engine));
    }
    return run_done(engine) + run_p2p(engine);
}

size_t rdp_coll_engine_active(const rdp_coll_engine_t *engine)
{
    return rdp_list_length(&engine->running) + rdp_list_length(&engine->done);
}

void rdp_coll_engine_get_stats(const rdp_coll_engine_t *engine,
                               rdp_coll_engine_stats_t *stats_p)
{
    *stats_p             = engine->stats;
    stats_p->early_msgs  = engine->early_msgs;
    stats_p->early_bytes = engine->early_bytes;
}

/* ---- starting a collective ---- */

static pmix_status_t check_args(const rdp_coll_engine_t *engine,
                                const rdp_coll_args_t *args, int64_t *rank_p)
{
    int64_t rank;

    if (args->kind != RDP_COLL_BARRIER && args->kind != RDP_COLL_ALLGATHER) {
        rdp_log_error(COLL, "unknown collective kind %d", (int)args->kind);
        return PMIX_ERR_BAD_PARAM;
    }
    if (args->parts == NULL || args->nparts == 0
        || args->nparts > engine->nuniverse) {
        rdp_log_error(COLL, "collective with %u participants out of %u",
                      args->nparts, engine->nuniverse);
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < args->nparts; i++) {
        if (args->parts[i] >= engine->nuniverse
            || (i > 0 && args->parts[i] <= args->parts[i - 1])) {
            rdp_log_error(COLL,
                          "participant list not sorted, unique and "
                          "below %u (entry %u)",
                          engine->nuniverse, i);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    rank = find_part(args->parts, args->nparts, engine->me);
    if (rank < 0) {
        rdp_log_error(COLL, "server %u is not among the participants",
                      engine->me);
        return PMIX_ERR_BAD_PARAM;
    }
    if (args->kind == RDP_COLL_ALLGATHER
        && ((args->data == NULL && args->own_buf == NULL && args->len != 0)
            || (args->data != NULL && args->own_buf != NULL)
            || (uint64_t)args->len > RDP_COLL_MAX_BLOCK)) {
        rdp_log_error(COLL, "bad allgather contribution (%zu bytes)",
                      args->len);
        return PMIX_ERR_BAD_PARAM;
    }
    if (args->size_class > RDP_COLL_SIZE_LARGE) {
        return PMIX_ERR_BAD_PARAM;
    }
    *rank_p = rank;
    return PMIX_SUCCESS;
}

/* Create @a coll from @a args; takes over args->own_buf (freed at once for
 * a barrier, which ignores its contribution). */
/* Where the transport seals, seal my own block once, so that no server
 * on its way authenticates it again.  Small blocks are not worth a seal
 * (its table entry and its own GMAC setup cost more than the bytes), nor
 * blocks that travel in pieces.  Without a seal the block still travels. */
static void seal_own_block(coll_t *coll, size_t len)
{
    rdp_coll_engine_t *engine = coll->engine;
    pmix_status_t status;

    if ((engine->ops->seal == NULL) || (engine->ops->send_sealed == NULL)
        || coll->open_payload || (coll->n < 2) || (len < RDP_COLL_SEAL_MIN) || coll->own_pieces
        || !seals_ready(coll)) {
        return;
    }
    status = engine->ops->seal(engine->ctx, coll->own,
                               RDP_COLL_BLK_HDR_LEN + len,
                               &coll->seals[coll->rank]);
    if (status == PMIX_SUCCESS) {
        coll->sealed[coll->rank] = 1;
    } else {
        rdp_log_debug(COLL, "cannot seal my %zu-byte block: %s", len,
                      rdp_status_name(status));
    }
}

static pmix_status_t coll_create(rdp_coll_engine_t *engine,
                                 const rdp_coll_args_t *args, uint32_t rank,
                                 coll_t **coll_p)
{
    enum rdp_coll_alg alg =
        rdp_coll_select(args->kind, args->nparts, args->size_class,
                        engine->forced);
    uint32_t nsteps  = rdp_sched_nsteps(alg, args->nparts);
    int allgather    = args->kind == RDP_COLL_ALLGATHER;
    int own_inline   = allgather && (args->own_buf == NULL)
                     && (args->len <= RDP_COLL_OWN_INLINE);
    size_t at_parts  = COLL_ALIGN(sizeof(coll_t));
    size_t at_blocks = at_parts + COLL_ALIGN((size_t)args->nparts * 4u);
    size_t at_steps =
        at_blocks
        + (allgather ? (size_t)args->nparts * sizeof(rdp_coll_block_t) : 0);
    size_t at_own = COLL_ALIGN(at_steps + nsteps + 1);
    /* own bytes rounded up, so that blocks of similar sizes share */
    size_t own_room =
        own_inline ? (RDP_COLL_BLK_HDR_LEN + args->len + 63u) & ~(size_t)63u
                   : 0;
    int fast2 = fast2_shape(engine, args, nsteps);
    /* room for the other's block, as long as mine and 64 bytes more */
    size_t room_len =
        (fast2 && allgather)
            ? ((RDP_COLL_BLK_HDR_LEN + args->len + 63u) & ~(size_t)63u) + 64u
            : 0;
    size_t need  = at_own + own_room + room_len;
    coll_t *coll = coll_block_get(engine, need, at_own);

    if (coll == NULL) {
        rdp_free(args->own_buf);
        goto err_nomem;
    }
    coll->parts = (uint32_t *)(void *)((uint8_t *)coll + at_parts);
    coll->steps = (uint8_t *)coll + at_steps;
    coll->fast2 = fast2;
    if (room_len > 0) {
        coll->room     = (uint8_t *)coll + at_own + own_room;
        coll->room_len = room_len;
    }
    if (allgather) {
        coll->blocks = (rdp_coll_block_t *)(void *)((uint8_t *)coll + at_blocks);
        if (own_inline) {
            coll->own        = (uint8_t *)coll + at_own;
            coll->own_inline = 1;
        } else {
            coll->own = args->own_buf; /* ours from here, freed by coll_free */
        }
    } else {
        rdp_free(args->own_buf); /* ignored, as data is */
    }
    rdp_list_init(&coll->link);
    rdp_list_init(&coll->segs);
    rdp_list_init(&coll->fetches);
    coll->engine      = engine;
    coll->kind        = args->kind;
    coll->size_class  = args->size_class;
    coll->n           = args->nparts;
    coll->rank        = rank;
    coll->failed_peer = UINT32_MAX;
    /* needs the transport's help; without it payloads stay authenticated
     * (and open ones from others would be refused: a mismatch shows) */
    coll->open_payload = args->open_payload && engine->ops->send_open != NULL;
    /* 2 participants: my block goes once, in step 0, and is never
     * forwarded */
    coll->own_unneeded = allgather && args->own_unneeded && !coll->own_inline
                         && (args->nparts == 2) && (nsteps == 1);
    rdp_coll_make_key(&coll->node.key, args->kind,
                      rdp_coll_signature(args->parts, args->nparts),
                      args->opid);
    coll->alg    = alg;
    coll->nsteps = nsteps;
    memcpy(coll->parts, args->parts, (size_t)coll->n * sizeof(*coll->parts));
    if (allgather) {
        if (coll->own == NULL) {
            coll->own = rdp_malloc(RDP_COLL_BLK_HDR_LEN + args->len);
            if (coll->own == NULL) {
                goto err_free;
            }
        }
        for (uint32_t i = 0; i < coll->n; i++) {
            coll->blocks[i].origin = coll->parts[i];
        }
        rdp_coll_put_u32(coll->own, engine->me);
        rdp_coll_put_u64(coll->own + 4, args->len);
        if ((args->own_buf == NULL) && (args->len > 0)) {
            memcpy(coll->own + RDP_COLL_BLK_HDR_LEN, args->data, args->len);
        }
        coll->blocks[rank].data = coll->own + RDP_COLL_BLK_HDR_LEN;
        coll->blocks[rank].len  = args->len;
        if (coll->alg == RDP_COLL_ALG_RING) {
            coll->seg_bytes  = engine->seg_bytes;
            coll->own_pieces = coll->seg_bytes > 0 && coll->n > 1
                               && (uint64_t)args->len > coll->seg_bytes;
            coll->fast2 = coll->fast2 && !coll->own_pieces;
        }
        seal_own_block(coll, args->len);
    }
    if (args->timeout > 0) {
        /* inside the transport's `progressed`: its pass's time, a few
         * microseconds old at most, which moves the deadline as much */
        double now =
            engine->pass_time > 0 ? engine->pass_time : engine_now(engine);

        coll->deadline = now + args->timeout;
        if (engine->watchdog != NULL) {
            watchdog_arm(engine, coll->deadline, now);
        }
    }
    *coll_p = coll;
    return PMIX_SUCCESS;

err_free:
    coll_free(coll);
err_nomem:
    rdp_log_error(COLL, "cannot allocate a collective of %u participants",
                  args->nparts);
    return PMIX_ERR_NOMEM;
}

pmix_status_t rdp_coll_start(rdp_coll_engine_t *engine,
                             const rdp_coll_args_t *args, rdp_coll_cb_t cb,
                             void *cbarg)
{
    coll_t *coll;
    int64_t rank;
    pmix_status_t status;

    if (engine == NULL || args == NULL || cb == NULL) {
        if (args != NULL) {
            rdp_free(args->own_buf);
        }
        return PMIX_ERR_BAD_PARAM;
    }
    ENGINE_ASSERT_OWNER(engine);
    status = check_args(engine, args, &rank);
    if (status != PMIX_SUCCESS) {
        rdp_free(args->own_buf); /* ours whatever happens */
        return status;
    }
    status = coll_create(engine, args, (uint32_t)rank, &coll);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (find_running(engine, &coll->node.key) != NULL) {
        rdp_log_error(COLL, "%s %016llx:%llu is already running",
                      rdp_coll_kind_name(coll->kind),
                      (unsigned long long)coll->node.key.sig,
                      (unsigned long long)coll->node.key.opid);
        coll_free(coll);
        return PMIX_ERR_EXISTS;
    }
    coll->cb    = cb;
    coll->cbarg = cbarg;
    engine->stats.started++;
    rdp_log_debug(COLL,
                  "%s %016llx:%llu: %u participants, rank %u, %s, "
                  "%u steps",
                  rdp_coll_kind_name(coll->kind),
                  (unsigned long long)coll->node.key.sig,
                  (unsigned long long)coll->node.key.opid, coll->n, coll->rank,
                  rdp_coll_alg_name(coll->alg), coll->nsteps);

    if (keymem_has(&engine->poisoned, &coll->node.key)) {
        keymem_remove(&engine->poisoned, &coll->node.key);
        rdp_log_error(COLL,
                      "%s %016llx:%llu lost a message to early-arrival "
                      "queue overflow",
                      rdp_coll_kind_name(coll->kind),
                      (unsigned long long)coll->node.key.sig,
                      (unsigned long long)coll->node.key.opid);
        rdp_coll_early_drop(engine, &coll->node.key);
        rdp_coll_finish(coll, PMIX_ERR_OUT_OF_RESOURCE, UINT32_MAX, 1);
        return PMIX_SUCCESS;
    }
    for (uint32_t i = 0; i < coll->n; i++) {
        if (engine->failed[coll->parts[i]]) {
            rdp_coll_early_drop(engine, &coll->node.key);
            rdp_coll_finish(coll, PMIX_ERR_UNREACH, coll->parts[i], 1);
            return PMIX_SUCCESS;
        }
    }
    /* step 0's send first: it needs nothing received, and handing the
     * early messages over (a lookup, checks, ingest) would delay it.  A
     * collective that ended meanwhile frees them (attach_rx). */
    if (coll->fast2) {
        coll->entered = 1;
        status        = fast2_post(coll);
        if (status != PMIX_SUCCESS) {
            rdp_coll_step_send_failed(coll, 0, status);
        }
    } else {
        rdp_coll_advance(coll);
    }
    /* into the running table and list after that send too: no message
     * can find it before the transport's next upcall, and the insert
     * waits on a bucket that may be cold (a collective that ended in the
     * send, or had no step, finished without them) */
    if (coll->state == COLL_RUNNING) {
        rdp_keytab_insert(&engine->colls, &coll->node);
        /* the bucket its key goes to in the finished-key memory when it
         * ends (a table too big to stay in the cache) */
        rdp_keytab_prefetch(&engine->finished.map, &coll->node.key);
        engine->last = coll; /* its messages come next */
        rdp_list_push_back(&engine->running, &coll->link);
        /* no keymem_remove(&engine->finished): a running key's messages
         * find it before the finished memory is asked (recv_msg) */
    }
    if (rdp_coll_early_hand_over(engine, coll)) {
        rdp_coll_advance(coll);
    }
    return PMIX_SUCCESS;
}
