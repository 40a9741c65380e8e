/* group_block.c - the blocks servers exchange for a group operation */
#include "config.h"
#include "core/server/group.h"
#include "core/util/alloc.h"
#include "core/util/value.h"

#include <endian.h>
#include <string.h>

uint64_t rdp_srv_group_cid_make(uint32_t server, uint32_t counter)
{
    return ((uint64_t)server << 32) | (uint64_t)counter;
}

static pmix_status_t pack_entry(rdp_buf_t *buf, const rdp_srv_group_entry_t *e)
{
    pmix_status_t status = rdp_pack_proc(buf, &e->proc);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, (e->joined ? 1 : 0) | (e->leads ? 2 : 0));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, e->ginfo, e->nginfo);
    }
    return status;
}

pmix_status_t rdp_srv_group_block_pack_head(rdp_buf_t *buf, bool want_cid,
                                            uint64_t cid, size_t nentries)
{
    pmix_status_t status = rdp_pack_u8(buf, want_cid ? 1 : 0);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(buf, cid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, (uint32_t)nentries);
    }
    return status;
}

pmix_status_t rdp_srv_group_block_pack_entry(rdp_buf_t *buf,
                                             const rdp_srv_group_entry_t *e)
{
    return pack_entry(buf, e);
}

pmix_status_t rdp_srv_group_block_bundle_begin(rdp_buf_t *buf, size_t *mark_p)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_u64(buf, 0);

    if (status == PMIX_SUCCESS) {
        *mark_p = mark;
    }
    return status;
}

void rdp_srv_group_block_bundle_end(rdp_buf_t *buf, size_t mark)
{
    uint64_t le = htole64((uint64_t)(buf->size - mark - sizeof(le)));

    memcpy(buf->data + mark, &le, sizeof(le));
}

pmix_status_t rdp_srv_group_block_pack(rdp_buf_t *buf, bool want_cid,
                                       uint64_t cid,
                                       const rdp_srv_group_entry_t *entries,
                                       size_t nentries, const void *bundle,
                                       size_t bundlelen)
{
    pmix_status_t status =
        rdp_srv_group_block_pack_head(buf, want_cid, cid, nentries);

    for (size_t i = 0; status == PMIX_SUCCESS && i < nentries; i++) {
        status = pack_entry(buf, &entries[i]);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(buf, bundlelen);
    }
    if (status == PMIX_SUCCESS && bundlelen > 0) {
        status = rdp_buf_append(buf, bundle, bundlelen);
    }
    return status;
}

void rdp_srv_group_block_clear(rdp_srv_group_block_t *blk)
{
    for (size_t i = 0; i < blk->nentries; i++) {
        rdp_info_array_free(blk->entries[i].ginfo, blk->entries[i].nginfo);
    }
    rdp_free(blk->entries);
    memset(blk, 0, sizeof(*blk));
}

static pmix_status_t unpack_entries(rdp_rbuf_t *rb, rdp_srv_group_block_t *blk)
{
    uint32_t n;
    pmix_status_t status = rdp_unpack_u32(rb, &n);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    /* every entry takes far more than one byte: bounds the allocation */
    if (n > rb->left) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    blk->entries = rdp_calloc(n + 1, sizeof(*blk->entries));
    if (blk->entries == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        rdp_srv_group_entry_t *e = &blk->entries[i];
        uint8_t joined;

        status = rdp_unpack_proc(rb, &e->proc);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u8(rb, &joined);
        }
        if (status == PMIX_SUCCESS) {
            e->joined = (joined & 1) != 0;
            e->leads  = (joined & 2) != 0;
            status    = rdp_unpack_info_array(rb, &e->ginfo, &e->nginfo);
        }
        if (status == PMIX_SUCCESS) {
            blk->nentries++;
        }
    }
    return status;
}

pmix_status_t rdp_srv_group_block_unpack(const void *data, size_t len,
                                         uint32_t origin,
                                         rdp_srv_group_block_t *blk)
{
    rdp_rbuf_t rb;
    uint8_t want;
    uint64_t blen = 0;
    pmix_status_t status;

    memset(blk, 0, sizeof(*blk));
    blk->origin = origin;
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u8(&rb, &want);
    if (status == PMIX_SUCCESS) {
        blk->want_cid = want != 0;
        status        = rdp_unpack_u64(&rb, &blk->cid);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_entries(&rb, blk);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u64(&rb, &blen);
    }
    if (status == PMIX_SUCCESS && blen != rb.left) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_srv_group_block_clear(blk);
        return status;
    }
    blk->bundle    = rb.ptr;
    blk->bundlelen = (size_t)blen;
    return PMIX_SUCCESS;
}

/* The first entry of @a proc at flat positions [@a from, @a to) of the
 * blocks' entries (counted across blocks in order), its position in
 * *@a pos_p. */
static const rdp_srv_group_entry_t *
scan_entries(const rdp_srv_group_block_t *blocks, size_t nblocks,
             const pmix_proc_t *proc, size_t from, size_t to, size_t *pos_p)
{
    size_t base = 0;

    for (size_t b = 0; b < nblocks && base < to; b++) {
        size_t n = blocks[b].nentries;

        for (size_t i = from > base ? from - base : 0; i < n && base + i < to;
             i++) {
            const rdp_srv_group_entry_t *e = &blocks[b].entries[i];

            /* the rank first: a compare of nspaces costs far more */
            if (e->proc.rank == proc->rank
                && PMIX_CHECK_NSPACE(e->proc.nspace, proc->nspace)) {
                *pos_p = base + i;
                return e;
            }
        }
        base += n;
    }
    return NULL;
}

const rdp_srv_group_entry_t *
rdp_srv_group_find_entry(const rdp_srv_group_block_t *blocks, size_t nblocks,
                         const pmix_proc_t *proc, size_t *at)
{
    size_t from = at != NULL ? *at : 0, pos = 0;
    const rdp_srv_group_entry_t *e =
        scan_entries(blocks, nblocks, proc, from, SIZE_MAX, &pos);

    if (e == NULL && from > 0) {
        e = scan_entries(blocks, nblocks, proc, 0, from, &pos);
    }
    if (e != NULL && at != NULL) {
        *at = pos + 1;
    }
    return e;
}

/* The candidate of the lowest-indexed server, when anyone asked. */
static bool pick_cid(const rdp_srv_group_block_t *blocks, size_t nblocks,
                     uint64_t *cid_p)
{
    const rdp_srv_group_block_t *lowest = NULL;
    bool wanted                         = false;

    for (size_t b = 0; b < nblocks; b++) {
        wanted = wanted || blocks[b].want_cid;
        if (lowest == NULL || blocks[b].origin < lowest->origin) {
            lowest = &blocks[b];
        }
    }
    if (!wanted || lowest == NULL) {
        return false;
    }
    *cid_p = lowest->cid;
    return true;
}

pmix_status_t rdp_srv_group_resolve(const pmix_proc_t *members, size_t n,
                                    const rdp_srv_group_block_t *blocks,
                                    size_t nblocks, bool optional,
                                    pmix_proc_t **final_p, size_t *nfinal_p,
                                    bool *have_cid_p, uint64_t *cid_p)
{
    pmix_proc_t *final = rdp_calloc(n + 1, sizeof(*final));
    size_t nfinal      = 0;
    size_t at          = 0; /* members come in the blocks' order */

    if (final == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const rdp_srv_group_entry_t *e =
            rdp_srv_group_find_entry(blocks, nblocks, &members[i], &at);

        if (e != NULL && e->joined) {
            final[nfinal++] = members[i];
        } else if (!optional) {
            rdp_free(final);
            return PMIX_ERR_PROC_TERM_WO_SYNC;
        }
    }
    *final_p    = final;
    *nfinal_p   = nfinal;
    *have_cid_p = pick_cid(blocks, nblocks, cid_p);
    return PMIX_SUCCESS;
}

/* ---- votes for a new leader ---- */

pmix_status_t rdp_srv_group_votes_pack(rdp_buf_t *buf,
                                       const rdp_srv_group_vote_t *votes,
                                       size_t n)
{
    pmix_status_t status = rdp_pack_u32(buf, (uint32_t)n);

    for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_pack_proc(buf, &votes[i].proc);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u8(buf, votes[i].vote);
        }
    }
    return status;
}

pmix_status_t rdp_srv_group_votes_unpack(const void *data, size_t len,
                                         rdp_srv_group_vote_t **votes_p,
                                         size_t *n_p)
{
    rdp_rbuf_t rb;
    rdp_srv_group_vote_t *grown;
    uint32_t n;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &n);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (n > rb.left) { /* a vote takes more than one byte */
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    grown = rdp_realloc(*votes_p, (*n_p + n + 1) * sizeof(*grown));
    if (grown == NULL) {
        return PMIX_ERR_NOMEM;
    }
    *votes_p = grown;
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        rdp_srv_group_vote_t *v = &grown[*n_p];

        memset(v, 0, sizeof(*v));
        status = rdp_unpack_proc(&rb, &v->proc);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u8(&rb, &v->vote);
        }
        if (status == PMIX_SUCCESS) {
            (*n_p)++;
        }
    }
    if (status == PMIX_SUCCESS && rb.left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    return status;
}

static size_t group_rank_of(const pmix_proc_t *members, size_t n,
                            const pmix_proc_t *proc)
{
    for (size_t i = 0; i < n; i++) {
        if (members[i].rank == proc->rank
            && PMIX_CHECK_NSPACE(members[i].nspace, proc->nspace)) {
            return i;
        }
    }
    return SIZE_MAX;
}

pmix_status_t rdp_srv_group_votes_resolve(const pmix_proc_t *members,
                                          size_t nmembers,
                                          const rdp_srv_group_vote_t *votes,
                                          size_t nvotes, pmix_proc_t *leader)
{
    size_t best = SIZE_MAX;

    for (size_t i = 0; i < nvotes; i++) {
        size_t r = group_rank_of(members, nmembers, &votes[i].proc);

        if (r == SIZE_MAX) {
            continue;
        }
        if (votes[i].vote == RDP_GROUP_VOTE_ABORT) {
            return PMIX_GROUP_CONSTRUCT_ABORT;
        }
        if (votes[i].vote == RDP_GROUP_VOTE_SELF && r < best) {
            best = r;
        }
    }
    if (best == SIZE_MAX) {
        return PMIX_GROUP_CONSTRUCT_ABORT;
    }
    *leader = members[best];
    return PMIX_SUCCESS;
}
