/* coll_ring.c - segmented ring blocks: a large block cut into pieces,
 * each forwarded as soon as it has landed */
#include "config.h"
#include "coll/coll_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

#include <pmix.h>

/*
 * Segmented ring blocks.  A ring block larger than the piece size travels
 * as SEG messages, one piece each (msg.h).  The receiver of the first
 * piece allocates the whole block (its announced total) and every piece
 * lands in place: a borrowed or keepable piece is copied there, a
 * rendezvous piece is fetched there.  Once it has landed, a piece is
 * forwarded to the next server from that place (step + 1, the same origin,
 * total, offset and length), so the next hop starts before the block is
 * complete; the step is received when every byte has landed.  seg_t keeps,
 * per block, the ranges claimed so far (sorted, merged), which rejects
 * overlaps and duplicates.  My own block is sent from the copy taken at
 * start, cut into pieces of the engine's size.
 */

static void piece_fetch_done(void *arg, pmix_status_t status);

/*
 * Post one SEG message of ring step @a step: the @a len bytes at @a base,
 * which are bytes [off, off + len) of the block of universe index
 * @a origin (@a total bytes).  @a base points into a buffer of @a coll,
 * which lives until its I/O has drained.
 */
/* Send a piece; @a seal, if not NULL, is the seal of its bytes (the
 * transport copies it during the send). */
static pmix_status_t post_piece(coll_t *coll, uint32_t step, uint32_t origin,
                                uint64_t total, uint64_t off, uint32_t len,
                                const uint8_t *base, const rdp_tl_seal_t *seal)
{
    rdp_coll_hdr_t h;
    sreq_t *req;

    req = rdp_calloc(1, sizeof(*req) + sizeof(rdp_iov_t)
                            + sizeof(*req->seals));
    if (req == NULL) {
        rdp_log_error(COLL, "cannot allocate the send of a piece");
        return PMIX_ERR_NOMEM;
    }
    req->engine      = coll->engine;
    req->coll        = coll;
    req->peer        = rdp_coll_send_peer(coll, step);
    req->iov[0].base = base;
    req->iov[0].len  = len;
    req->iovcnt      = 1;
    if (seal != NULL) {
        req->seals    = (const rdp_tl_seal_t **)(void *)&req->iov[1];
        req->seals[0] = seal;
    }
    rdp_coll_fill_hdr(&h, coll, RDP_COLL_MSG_SEG);
    h.step       = step;
    h.nblocks    = 1;
    h.seg_origin = origin;
    h.seg_len    = len;
    h.seg_total  = total;
    h.seg_off    = off;
    return rdp_coll_send(coll, req, &h, len);
}

/* Ring step 0 of a segmented own block: every piece, from the copy taken
 * at start. */
pmix_status_t rdp_coll_ring_send_own_block(coll_t *coll)
{
    const rdp_coll_block_t *own = &coll->blocks[coll->rank];
    const uint8_t *base         = own->data;
    rdp_coll_engine_t *engine   = coll->engine;
    pmix_status_t status;

    for (uint64_t off = 0; off < own->len; off += coll->seg_bytes) {
        uint64_t left = own->len - off;
        uint32_t len =
            (uint32_t)(left < coll->seg_bytes ? left : coll->seg_bytes);
        rdp_tl_seal_t seal;
        int sealed = !coll->open_payload && (engine->ops->seal != NULL)
                     && (engine->ops->send_sealed != NULL)
                     && (len >= RDP_COLL_SEAL_MIN)
                     && (engine->ops->seal(engine->ctx, base + off, len,
                                           &seal)
                         == PMIX_SUCCESS);

        status = post_piece(coll, 0, engine->me, own->len, off, len,
                            base + off, sealed ? &seal : NULL);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

static void piece_drop(coll_t *coll, const rdp_coll_hdr_t *h, const char *why)
{
    rdp_log_warn(COLL,
                 "%s %016llx:%llu: dropping a piece from %u (step %u, "
                 "block of %u, bytes %llu+%u of %llu): %s",
                 rdp_coll_kind_name(coll->kind), (unsigned long long)h->sig,
                 (unsigned long long)h->opid, h->sender, h->step, h->seg_origin,
                 (unsigned long long)h->seg_off, h->seg_len,
                 (unsigned long long)h->seg_total, why);
    coll->engine->stats.dropped++;
}

/* Claim [off, end) in @a sg: 1 if claimed, 0 if it overlaps a range
 * claimed before, -1 out of memory.  Touching ranges are merged, so a
 * block arriving in order keeps a single range. */
static int seg_claim(seg_t *sg, uint64_t off, uint64_t end)
{
    uint32_t lo = 0;
    uint32_t hi = sg->nranges;
    int join_prev;
    int join_next;

    /* lo: the first range starting after off */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (sg->ranges[mid].start <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if ((lo > 0 && sg->ranges[lo - 1].end > off)
        || (lo < sg->nranges && sg->ranges[lo].start < end)) {
        return 0;
    }
    join_prev = lo > 0 && sg->ranges[lo - 1].end == off;
    join_next = lo < sg->nranges && sg->ranges[lo].start == end;
    if (join_prev && join_next) {
        sg->ranges[lo - 1].end = sg->ranges[lo].end;
        memmove(&sg->ranges[lo], &sg->ranges[lo + 1],
                (size_t)(sg->nranges - lo - 1) * sizeof(*sg->ranges));
        sg->nranges--;
    } else if (join_prev) {
        sg->ranges[lo - 1].end = end;
    } else if (join_next) {
        sg->ranges[lo].start = off;
    } else {
        if (sg->nranges == sg->cap) {
            uint32_t ncap = sg->cap == 0 ? 4 : sg->cap * 2;
            seg_range_t *nr =
                rdp_realloc(sg->ranges, (size_t)ncap * sizeof(*nr));

            if (nr == NULL) {
                return -1;
            }
            sg->ranges = nr;
            sg->cap    = ncap;
        }
        memmove(&sg->ranges[lo + 1], &sg->ranges[lo],
                (size_t)(sg->nranges - lo) * sizeof(*sg->ranges));
        sg->ranges[lo].start = off;
        sg->ranges[lo].end   = end;
        sg->nranges++;
    }
    return 1;
}

/*
 * Check piece @a h of block @a b (its hop and origin already checked)
 * against what arrived of that block and claim its bytes.  The first piece
 * allocates the block: its total was bounded by hdr_sane, and the
 * collective runs here, so the schedule expects that block at that step.
 * Returns PMIX_SUCCESS, PMIX_ERR_BAD_PARAM (dropped: logged and counted)
 * or PMIX_ERR_NOMEM.
 */
static pmix_status_t piece_accept(coll_t *coll, uint32_t b,
                                  const rdp_coll_hdr_t *h)
{
    seg_t *sg;
    int claimed;

    if (coll->steps[h->step] != STEP_WAITING
        && coll->steps[h->step] != STEP_PIECES) {
        piece_drop(coll, h, "that step has its data");
        return PMIX_ERR_BAD_PARAM;
    }
    if (coll->pieces == NULL) {
        coll->pieces = rdp_calloc(coll->n, sizeof(*coll->pieces));
        if (coll->pieces == NULL) {
            rdp_log_error(COLL, "cannot allocate the piece table of %u blocks",
                          coll->n);
            return PMIX_ERR_NOMEM;
        }
    }
    sg = &coll->pieces[b];
    if (sg->buf == NULL) {
        sg->buf = rdp_malloc((size_t)h->seg_total);
        if (sg->buf == NULL) {
            rdp_log_error(COLL, "cannot allocate a %llu-byte block of %u",
                          (unsigned long long)h->seg_total, h->seg_origin);
            return PMIX_ERR_NOMEM;
        }
        sg->total            = h->seg_total;
        coll->blocks[b].data = sg->buf;
        coll->blocks[b].len  = sg->total;
        coll->steps[h->step] = STEP_PIECES;
    } else if (h->seg_total != sg->total) {
        piece_drop(coll, h, "its block was announced with another total");
        return PMIX_ERR_BAD_PARAM;
    }
    claimed = seg_claim(sg, h->seg_off, h->seg_off + h->seg_len);
    if (claimed == 0) {
        piece_drop(coll, h, "it overlaps bytes already received");
        return PMIX_ERR_BAD_PARAM;
    }
    if (claimed < 0) {
        rdp_log_error(COLL, "cannot allocate the range list of a block");
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

/* The bytes of piece @a h of block @a b are in place: forward them to the
 * next hop from there, and complete the step when the block is whole.
 * Returns 1 if the step was received. */
/* The seal a piece's message came with, if it covers the whole piece. */
static const rdp_tl_seal_t *piece_seal(const rdp_tl_rx_seal_t *seals,
                                       size_t nseals, uint32_t len)
{
    return ((nseals == 1) && (seals[0].off == 0) && (seals[0].len == len))
               ? &seals[0].seal
               : NULL;
}

/* Piece @a h of block @a b is in place: forward it (with @a seal, the seal
 * it came with, or NULL) and return 1 when the whole block has landed. */
static int piece_landed(coll_t *coll, uint32_t b, const rdp_coll_hdr_t *h,
                        const rdp_tl_seal_t *seal)
{
    seg_t *sg = &coll->pieces[b];
    pmix_status_t status;

    sg->landed += h->seg_len;
    if (h->step + 1 < coll->nsteps) {
        status = post_piece(coll, h->step + 1, h->seg_origin, sg->total,
                            h->seg_off, h->seg_len, sg->buf + h->seg_off,
                            seal);
        if (status != PMIX_SUCCESS) {
            rdp_coll_step_send_failed(coll, h->step + 1, status);
            return 0;
        }
    }
    if (sg->landed < sg->total) {
        return 0;
    }
    coll->steps[h->step] = STEP_RECEIVED;
    return 1;
}

/* Fetch the rendezvous piece @a h (accepted) straight into its place. */
static void piece_fetch(coll_t *coll, uint32_t b, const rdp_coll_hdr_t *h,
                        void *desc, const rdp_tl_seal_t *seal)
{
    rdp_coll_engine_t *engine = coll->engine;
    piece_fetch_t *pf         = rdp_calloc(1, sizeof(*pf));
    pmix_status_t status;

    if (pf == NULL) {
        rdp_log_error(COLL, "cannot allocate the fetch of a piece");
        engine->ops->release(engine->ctx, desc);
        rdp_coll_finish(coll, PMIX_ERR_NOMEM, UINT32_MAX, 1);
        return;
    }
    pf->coll  = coll;
    pf->hdr   = *h;
    pf->block = b;
    if (seal != NULL) {
        pf->sealed = 1;
        pf->seal   = *seal;
    }
    rdp_list_push_back(&coll->fetches, &pf->link);
    coll->pending_io++;
    status =
        engine->ops->fetch(engine->ctx, desc, coll->pieces[b].buf + h->seg_off,
                           h->seg_len, piece_fetch_done, pf);
    if (status == PMIX_SUCCESS) {
        return;
    }
    rdp_list_del(&pf->link);
    rdp_free(pf);
    coll->pending_io--;
    if (status != PMIX_OPERATION_SUCCEEDED) {
        rdp_log_warn(COLL, "cannot fetch a %u-byte piece from %u: %s",
                     h->seg_len, h->sender, rdp_status_name(status));
        rdp_coll_finish(coll, PMIX_ERR_UNREACH, h->sender, 1);
    } else if (piece_landed(coll, b, h, seal)) {
        rdp_coll_advance(coll);
    }
}

static void piece_fetch_done(void *arg, pmix_status_t status)
{
    piece_fetch_t *pf  = arg;
    coll_t *coll       = pf->coll;
    rdp_coll_hdr_t h   = pf->hdr;
    uint32_t b         = pf->block;
    int sealed         = pf->sealed;
    rdp_tl_seal_t seal = pf->seal;

    rdp_list_del(&pf->link);
    rdp_free(pf);
    if (rdp_coll_io_done(coll)) {
        return;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(COLL, "fetching a %u-byte piece from %u failed: %s",
                     h.seg_len, h.sender, rdp_status_name(status));
        rdp_coll_finish(coll, PMIX_ERR_UNREACH, h.sender, 1);
        return;
    }
    if (piece_landed(coll, b, &h, sealed ? &seal : NULL)) {
        rdp_coll_advance(coll);
    }
}

/* A piece for the running @a coll whose header passed check_data_hdr
 * (@a x: the receive side of its step), straight from the transport. */
enum rdp_tl_rx_disp rdp_coll_ring_recv_piece(coll_t *coll,
                                             const rdp_coll_hdr_t *h,
                                             const rdp_sched_xfer_t *x,
                                             const rdp_tl_rx_t *trx)
{
    uint32_t b = x->ranges[0].first;
    const rdp_tl_seal_t *seal;
    pmix_status_t status;

    status = piece_accept(coll, b, h);
    if (status == PMIX_ERR_BAD_PARAM) {
        return RDP_TL_RX_DONE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_coll_finish(coll, status, UINT32_MAX, 1);
        return RDP_TL_RX_DONE;
    }
    seal = piece_seal(trx->seals, trx->nseals, h->seg_len);
    if (trx->kind == RDP_TL_DATA_RNDV) {
        piece_fetch(coll, b, h, trx->desc, seal);
        return RDP_TL_RX_KEPT; /* the desc is consumed either way */
    }
    memcpy(coll->pieces[b].buf + h->seg_off, trx->data, h->seg_len);
    if (piece_landed(coll, b, h, seal)) {
        rdp_coll_advance(coll);
    }
    return RDP_TL_RX_DONE;
}

/* A piece that waited in the early queue (its bytes are in @a rx): place
 * it like rdp_coll_ring_recv_piece does.  Consumes @a rx.  Returns 1 if the step was
 * received. */
int rdp_coll_ring_ingest_piece(coll_t *coll, rx_t *rx)
{
    rdp_coll_hdr_t h = rx->hdr;
    const rdp_tl_seal_t *kept;
    rdp_tl_seal_t seal;
    rdp_sched_step_t st;
    uint32_t b;
    pmix_status_t status;

    (void)rdp_sched_step(coll->alg, coll->rank, coll->n, h.step, &st);
    b      = st.recv.ranges[0].first;
    status = piece_accept(coll, b, &h);
    if (status == PMIX_SUCCESS) {
        memcpy(coll->pieces[b].buf + h.seg_off, rx->data, h.seg_len);
    }
    kept = piece_seal(rx->seals, rx->nseals, h.seg_len);
    if (kept != NULL) {
        seal = *kept; /* rx goes now */
    }
    rdp_coll_rx_free(rx);
    if (status == PMIX_ERR_BAD_PARAM) {
        return 0;
    }
    if (status != PMIX_SUCCESS) {
        rdp_coll_finish(coll, status, UINT32_MAX, 1);
        return 0;
    }
    return piece_landed(coll, b, &h, (kept != NULL) ? &seal : NULL);
}

/* Checks of a SEG header that need no collective: a ring allgather hop
 * carrying one piece of 1 byte or more, within a block of at most
 * RDP_COLL_MAX_BLOCK bytes, whose length is the payload's. */
int rdp_coll_ring_piece_sane(const rdp_coll_hdr_t *h, const rdp_tl_rx_t *trx)
{
    return h->kind == RDP_COLL_ALLGATHER && h->alg == RDP_COLL_ALG_RING
           && h->step < rdp_sched_ring_nsteps(h->nparts) && h->nblocks == 1
           && h->status == 0 && h->seg_len > 0
           && (uint64_t)h->seg_len == (uint64_t)trx->len
           && h->seg_total <= RDP_COLL_MAX_BLOCK && h->seg_off <= h->seg_total
           && h->seg_len <= h->seg_total - h->seg_off;
}
