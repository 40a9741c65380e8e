/* fence.c - the fence operation of the collective trackers (coll.h) */
#include "config.h"
#include "coll/coll.h"
#include "core/server/coll.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <endian.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A fence contributes the bundle of its local participants' committed
 * data (remote-visible part) when it collects (PMIX_COLLECT_DATA), stores
 * the other servers' bundles, and answers every participant with the
 * bundle of all participants' data (FENCE_ACK), inline or in a sealed
 * memfd.  The engine runs it across nodes when connected, else the
 * host's fence_nb.
 */

/* ---- result bundles ---- */

/* Fence results are packed here; the buffer keeps its (faulted-in)
 * capacity from one fence to the next.  Loop thread only. */
static rdp_buf_t fence_buf;
/* Give back a kept buffer larger than this after use. */
#define FENCE_BUF_KEEP_MAX (256u << 20)
/* A bundle going to a memfd is written in pieces of about this size. */
#define FENCE_STAGE_BYTES (64u << 10)

/*
 * Where a bundle is packed: into @a buf, and, once the bundle has
 * @a shm_at bytes (0: never), into a memfd (@a fd) through @a buf, which
 * then holds what follows the first @a flushed bytes of the bundle.  So a
 * large fence result is written into the memfd the clients map without a
 * buffer of its whole size (its fresh pages cost more than the copy on a
 * first fence; bench/RESULTS.md).
 */
typedef struct {
    rdp_buf_t *buf;
    int fd;
    size_t flushed;
    size_t shm_at;
    uint32_t direct; /* sections written from their block (pack_deferred) */
} sink_t;

static size_t sink_pos(const sink_t *s)
{
    return s->flushed + s->buf->size;
}

/* Overwrite the u32 packed at bundle offset @a at (a count known only
 * afterwards), in the buffer or already in the memfd. */
static pmix_status_t sink_patch_u32(sink_t *s, size_t at, uint32_t v)
{
    uint32_t le = htole32(v);

    if (at < s->flushed) {
        return rdp_ipc_memfd_pwrite(s->fd, &le, sizeof(le), at);
    }
    memcpy(s->buf->data + (at - s->flushed), &le, sizeof(le));
    return PMIX_SUCCESS;
}

static pmix_status_t sink_flush(sink_t *s)
{
    pmix_status_t status =
        rdp_ipc_memfd_append(s->fd, s->buf->data, s->buf->size);

    if (status == PMIX_SUCCESS) {
        s->flushed += s->buf->size;
        s->buf->size = 0;
    }
    return status;
}

/* After a whole section: move to the memfd once the bundle is large
 * enough (staying in the buffer when there is no memfd), write the
 * buffer out when it holds a piece. */
static pmix_status_t sink_section_end(sink_t *s)
{
    if (s->fd < 0 && s->shm_at > 0 && sink_pos(s) >= s->shm_at
        && rdp_ipc_memfd_open(&s->fd) != PMIX_SUCCESS) {
        s->shm_at = 0; /* inline, as when nothing is shared */
    }
    if (s->fd >= 0 && s->buf->size >= FENCE_STAGE_BYTES) {
        return sink_flush(s);
    }
    return PMIX_SUCCESS;
}

/* Bundles from this size on go through shared memory (0: never). */
static size_t shm_min(void)
{
    static size_t min = SIZE_MAX; /* loop thread only */
    uint64_t v;

    if (min == SIZE_MAX) {
        (void)rdp_cfg_uint(RDP_CFG_SHM_MIN, &v); /* bad: logged, default */
        min = (size_t)v;
    }
    return min;
}

/* ---- other servers' data kept packed ---- */

/*
 * A large collected result goes into a memfd (above), and it holds every
 * other server's PROC sections as they came.  So those are not unpacked
 * into the modex store and packed again: fence_result only indexes them
 * (defer_add), the result takes them as they are, and the store then
 * keeps them packed inside a read-only mapping of the memfd
 * (defer_settle; rdp_kvs_put_packed), unpacked only if this server is
 * ever asked for one of their keys in another form.  Without a memfd they
 * are unpacked from the blocks as before.  The blocks live until the
 * reply is packed (coll_result).  Their values are not checked here: a
 * malformed one shows (and is logged) where it is unpacked.
 */
typedef struct {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
    rdp_rbuf_t kv; /* in a block */
    size_t off;    /* where the result has it; SIZE_MAX: not in it */
} deferred_t;

static struct {
    deferred_t *v;
    size_t n, cap;
    rdp_hash_t index; /* (nspace, rank) -> position in v + 1 */
} deferred;

/* the index's key: the whole pmix_proc_t, zero-padded */
static pmix_proc_t defer_key(const char *nspace, pmix_rank_t rank)
{
    pmix_proc_t key;

    memset(&key, 0, sizeof(key));
    PMIX_LOAD_PROCID(&key, nspace, rank);
    return key;
}

static deferred_t *defer_find(const char *nspace, pmix_rank_t rank)
{
    pmix_proc_t key;
    uintptr_t at;

    if (deferred.n == 0) {
        return NULL;
    }
    key = defer_key(nspace, rank);
    at  = (uintptr_t)rdp_hash_get(&deferred.index, &key, sizeof(key));
    return at != 0 ? &deferred.v[at - 1] : NULL;
}

static void defer_clear(void)
{
    deferred.n = 0;
    if (deferred.index.buckets != NULL) {
        rdp_hash_cleanup(&deferred.index);
    }
}

/* rdp_srv_remote_sect_cb_t: index a section (or store it now when it
 * has fewer keys than the store holds of the rank: merged, as
 * rdp_kvs_put_packed would do from the blocks). */
static pmix_status_t defer_add(const char *nspace, pmix_rank_t rank,
                               const rdp_rbuf_t *kv, void *arg)
{
    pmix_proc_t key = defer_key(nspace, rank);
    uintptr_t at = (uintptr_t)rdp_hash_get(&deferred.index, &key, sizeof(key));
    rdp_rbuf_t head = *kv;
    uint32_t nkv;
    pmix_status_t status;

    (void)arg;
    status = rdp_unpack_u32(&head, &nkv);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (rdp_kvs_count(rdp_srv.modex, nspace, rank) > nkv) {
        return rdp_srv_store_sect(nspace, rank, kv, NULL);
    }

    if (at != 0) { /* twice in one result: the later one wins */
        deferred.v[at - 1].kv = *kv;
        return PMIX_SUCCESS;
    }
    if (deferred.n == deferred.cap) {
        size_t cap    = deferred.cap != 0 ? 2 * deferred.cap : 64;
        deferred_t *v = rdp_realloc(deferred.v, cap * sizeof(*v));

        if (v == NULL) {
            return PMIX_ERR_NOMEM;
        }
        deferred.v   = v;
        deferred.cap = cap;
    }
    status = rdp_hash_set(&deferred.index, &key, sizeof(key),
                          (void *)(uintptr_t)(deferred.n + 1), NULL);
    if (status == PMIX_SUCCESS) {
        deferred_t *d = &deferred.v[deferred.n++];

        PMIX_LOAD_NSPACE(d->nspace, nspace);
        d->rank = rank;
        d->kv   = *kv;
        d->off  = SIZE_MAX;
    }
    return status;
}

/* Whether this result will go through a memfd whatever the local part
 * adds (the other servers' part alone is large enough). */
static bool defer_pays(const rdp_srv_xchg_block_t *blocks, size_t nblocks,
                       uint32_t me)
{
    size_t min   = shm_min();
    size_t total = 0;

    for (size_t i = 0; i < nblocks; i++) {
        if (!(blocks[i].origin == me && me != RDP_SRV_XCHG_HOST)) {
            total += blocks[i].len;
        }
    }
    return min > 0 && total >= min;
}

/* The memfd mapping that keeps the store's packed sections. */
typedef struct {
    rdp_kvs_backing_t base;
    const void *map;
    size_t len;
} map_backing_t;

static void map_backing_release(rdp_kvs_backing_t *bk)
{
    map_backing_t *mb = (map_backing_t *)bk;

    rdp_ipc_memfd_unmap(mb->map, mb->len);
    rdp_free(mb);
}

/* After the result is packed: every deferred section into the store,
 * packed inside the sealed memfd @a fd of @a len bytes when the result
 * went there, else unpacked from the blocks; then the waiters for those
 * ranks are answered.  Returns the first error. */
static pmix_status_t defer_settle(int fd, size_t len)
{
    map_backing_t *mb    = NULL;
    pmix_status_t status = PMIX_SUCCESS;

    if (deferred.n == 0) {
        return PMIX_SUCCESS;
    }
    if (fd >= 0) {
        mb = rdp_calloc(1, sizeof(*mb));
        if (mb != NULL
            && rdp_ipc_memfd_map(fd, len, &mb->map) == PMIX_SUCCESS) {
            mb->len          = len;
            mb->base.refs    = 1;
            mb->base.release = map_backing_release;
        } else {
            rdp_free(mb);
            mb = NULL;
        }
    }
    for (size_t i = 0; i < deferred.n; i++) {
        deferred_t *d    = &deferred.v[i];
        pmix_status_t st = PMIX_ERR_NOT_AVAILABLE;

        if (mb != NULL && d->off != SIZE_MAX && d->off + d->kv.left <= len) {
            st = rdp_kvs_put_packed(rdp_srv.modex, d->nspace, d->rank,
                                    (const uint8_t *)mb->map + d->off,
                                    d->kv.left, &mb->base);
            if (st == PMIX_SUCCESS) {
                rdp_srv_modex_ready(d->nspace, d->rank);
            }
        }
        if (st != PMIX_SUCCESS) {
            st = rdp_srv_store_sect(d->nspace, d->rank, &d->kv, NULL);
        }
        if (st != PMIX_SUCCESS && status == PMIX_SUCCESS) {
            rdp_log_error(SERVER, "fence data of %s:%u is malformed", d->nspace,
                          d->rank);
            status = st;
        }
    }
    if (mb != NULL) {
        rdp_kvs_backing_unref(&mb->base);
    }
    defer_clear();
    return status;
}

/* From this size on, a deferred section's kv list goes from its block
 * into the memfd in a write of its own, not through the stage buffer. */
#define FENCE_DIRECT_MIN (16u << 10)

/* A large deferred section into a memfd: its header through the stage
 * buffer (written out with what it holds), then its kv list written
 * straight from the block (one copy of it fewer); s->direct counts it. */
static pmix_status_t pack_deferred_direct(deferred_t *d, sink_t *s, size_t mark)
{
    uint64_t le = htole64((uint64_t)d->kv.left);
    pmix_status_t status;

    memcpy(s->buf->data + mark, &le, sizeof(le));
    status = sink_flush(s);
    if (status == PMIX_SUCCESS) {
        d->off = s->flushed;
        status = rdp_ipc_memfd_append(s->fd, d->kv.ptr, d->kv.left);
    }
    if (status == PMIX_SUCCESS) {
        s->flushed += d->kv.left;
        s->direct++;
    }
    return status;
}

/* A deferred section into the result as it came; its place noted. */
static pmix_status_t pack_deferred(deferred_t *d, sink_t *s)
{
    size_t mark;
    pmix_status_t status =
        rdp_sect_pack_begin(s->buf, RDP_SECT_PROC, d->rank, NULL, &mark);

    if (status == PMIX_SUCCESS && s->fd >= 0
        && d->kv.left >= FENCE_DIRECT_MIN) {
        return pack_deferred_direct(d, s, mark);
    }
    if (status == PMIX_SUCCESS) {
        d->off = sink_pos(s);
        status = rdp_buf_append(s->buf, d->kv.ptr, d->kv.left);
    }
    if (status == PMIX_SUCCESS) {
        rdp_sect_pack_end(s->buf, mark);
    }
    return status;
}

/* Which participants a pass packs, and with which scopes. */
enum pack_which {
    PACK_ALL,      /* every participant: this node's LOCAL, others ALL */
    PACK_CONTRIB,  /* this node's, remote-visible part (to the others) */
    PACK_LOCAL,    /* this node's, as the result has them */
    PACK_NONLOCAL, /* the others, as the result has them */
};

/* The sections of the participants procs[i ..) of one nspace (@a ns,
 * NULL: unknown) that @a which selects, into @a s; *nsect_p counts them,
 * *j_p is set past the nspace's entries. */
static pmix_status_t pack_set_sections(const rdp_srv_coll_t *coll, size_t i,
                                       rdp_srv_nspace_t *ns,
                                       enum pack_which which, sink_t *s,
                                       size_t *j_p, uint32_t *nsect_p)
{
    const char *nspace   = coll->procs[i].nspace;
    pmix_status_t status = PMIX_SUCCESS;
    size_t j             = i;

    for (; j < coll->nprocs
           && strncmp(coll->procs[j].nspace, nspace, PMIX_MAX_NSLEN) == 0;
         j++) {
        pmix_rank_t lo = coll->procs[j].rank, hi = lo;

        if (ns == NULL) {
            continue;
        }
        if (lo == PMIX_RANK_WILDCARD) {
            if (ns->size == 0) {
                continue;
            }
            lo = 0;
            hi = ns->size - 1;
        }
        for (pmix_rank_t r = lo; status == PMIX_SUCCESS && r <= hi; r++) {
            bool local    = rdp_srv_nspace_is_local(ns, r);
            deferred_t *d = local ? NULL : defer_find(nspace, r);
            uint32_t mask;

            if ((which == PACK_NONLOCAL && local)
                || ((which == PACK_CONTRIB || which == PACK_LOCAL) && !local)
                || (d == NULL && !rdp_kvs_has_rank(rdp_srv.modex, nspace, r))) {
                continue;
            }
            mask   = which == PACK_CONTRIB
                         ? RDP_SCOPES_REMOTE
                         : (local ? RDP_SCOPES_LOCAL : RDP_SCOPES_ALL);
            status = d != NULL
                         ? pack_deferred(d, s)
                         : rdp_srv_pack_proc_section(nspace, r, mask, s->buf);
            (*nsect_p)++;
            if (status == PMIX_SUCCESS) {
                status = sink_section_end(s);
            }
        }
    }
    *j_p = j;
    return status;
}

/* Append the bundle of the participants' committed data to @a s: every
 * participant (PACK_ALL; masks by locality), or only this node's,
 * remote-visible part (PACK_CONTRIB: what goes to the host or the
 * engine).  Packed in place: counts are patched once known, nothing is
 * copied twice.  On error the buffer is back to its size on entry when
 * nothing went into a memfd (else the caller drops the memfd). */
static pmix_status_t pack_parts_bundle(const rdp_srv_coll_t *coll,
                                       enum pack_which which, sink_t *s)
{
    size_t start         = sink_pos(s);
    uint32_t nsets       = 0;
    pmix_status_t status = rdp_pack_u32(s->buf, 0);

    for (size_t i = 0; status == PMIX_SUCCESS && i < coll->nprocs;) {
        const char *nspace   = coll->procs[i].nspace;
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
        size_t set_start     = sink_pos(s);
        size_t nsect_at;
        uint32_t nsect = 0;
        size_t j       = i;

        status   = rdp_pack_string(s->buf, nspace);
        nsect_at = sink_pos(s);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u32(s->buf, 0);
        }
        if (status == PMIX_SUCCESS) {
            status = pack_set_sections(coll, i, ns, which, s, &j, &nsect);
        } else {
            j = coll->nprocs;
        }
        if (status == PMIX_SUCCESS && nsect == 0) {
            /* nobody of this nspace committed (nothing flushed since) */
            s->buf->size = set_start - s->flushed;
        } else if (status == PMIX_SUCCESS) {
            status = sink_patch_u32(s, nsect_at, nsect);
            nsets++;
        }
        i = j;
    }
    if (status == PMIX_SUCCESS) {
        status = sink_patch_u32(s, start, nsets);
    }
    if (status != PMIX_SUCCESS && s->flushed == 0) {
        s->buf->size = start;
    }
    return status;
}

/* ---- this node's part of a result, written as its ranks arrive ---- */

/*
 * A collecting fence over one nspace whose result will go through a
 * memfd gets its bundle's head and each local participant's section
 * written into the memfd when that participant arrives (fence_arrived,
 * coll->ctx: its commits came before its fence request on the same
 * connection), and, once the engine exchange is under way, the pages for
 * the other servers' part allocated (fence_prepare); when the exchange
 * is done only the other servers' sections follow.  So the half of the
 * result that needs no other server is copied while the ranks still
 * arrive, not after: a server whose peer answered its clients first
 * competes with those clients for the cores (bench/RESULTS.md, "Issue 8:
 * ... modex5").  The bundle then holds one set, sections in arrival
 * order, its count patched at the end.  Whether the result will be large
 * enough for a memfd is estimated at the first arrival: every local
 * participant and every server as much as it.
 *
 * The same arrivals build this server's contribution to the exchange
 * (its remote-visible sections, behind the engine's headroom), so that
 * when the last participant arrives the exchange starts without packing
 * them all (fence_take_contribution); it is used only if it holds every
 * local participant the whole packing would (a participant that left
 * without arriving still counts there: then it is packed at the end).
 */
typedef struct {
    int fd;          /* -1: declined (small), or given to the reply */
    size_t flushed;  /* bytes in the memfd */
    size_t nsect_at; /* where the set's section count is */
    uint32_t nsect;  /* this node's sections */
    size_t reserved; /* the memfd's pages are allocated up to here */
    rdp_buf_t contrib;       /* the contribution so far (headroom first) */
    size_t contrib_nsect_at; /* where its section count is */
    uint32_t contrib_nsect;  /* its sections */
    bool contrib_bad;        /* incomplete: packed at the end instead */
    uint32_t packed_once;    /* sections packed once for both */
} prep_t;

static void prep_free(void *ctx)
{
    prep_t *p = ctx;

    if (p->fd >= 0) {
        close(p->fd);
    }
    rdp_buf_cleanup(&p->contrib);
    rdp_free(p);
}

/* The contribution's head (headroom, one set of @a coll's nspace, its
 * count to patch), with room for @a nparts sections of @a sect_len. */
static void contrib_start(const rdp_srv_coll_t *coll, prep_t *p,
                          size_t sect_len)
{
    static const uint8_t headroom[RDP_COLL_HEADROOM];
    rdp_buf_t *b         = &p->contrib;
    pmix_status_t status = rdp_buf_reserve(
        b, sizeof(headroom) + 64 + PMIX_MAX_NSLEN + sect_len * coll->nparts);

    if (status == PMIX_SUCCESS) {
        status = rdp_buf_append(b, headroom, sizeof(headroom));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(b, 1); /* one set */
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(b, coll->procs[0].nspace);
    }
    p->contrib_nsect_at = b->size;
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(b, 0);
    }
    p->contrib_bad = status != PMIX_SUCCESS;
    rdp_log_debug(SERVER,
                  "fence %" PRIu64 ": contribution to the exchange started "
                  "at the first arrival",
                  coll->id);
}

/* How many sections the whole packing of the contribution would hold:
 * the local participants with committed data (one nspace). */
static uint32_t contrib_expected(const rdp_srv_coll_t *coll)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(coll->procs[0].nspace);
    uint32_t n           = 0;

    for (size_t j = 0; ns != NULL && j < coll->nprocs; j++) {
        pmix_rank_t lo = coll->procs[j].rank, hi = lo;

        if (lo == PMIX_RANK_WILDCARD) {
            if (ns->size == 0) {
                continue;
            }
            lo = 0;
            hi = ns->size - 1;
        }
        for (pmix_rank_t r = lo; r <= hi; r++) {
            n += rdp_srv_nspace_is_local(ns, r)
                 && rdp_kvs_has_rank(rdp_srv.modex, ns->name, r);
        }
    }
    return n;
}

static bool one_nspace(const rdp_srv_coll_t *coll)
{
    return coll->nprocs > 0
           && strncmp(coll->procs[0].nspace,
                      coll->procs[coll->nprocs - 1].nspace, PMIX_MAX_NSLEN)
                  == 0;
}

/* The first arrival: a prep_t, with a memfd holding the bundle's head
 * when the result promises to be large (@a sect_len: the first section's
 * size), else declined (fd -1). */
static prep_t *prep_start(rdp_srv_coll_t *coll, size_t sect_len)
{
    uint32_t nservers = rdp_srv_xchg_nservers();
    prep_t *p         = rdp_calloc(1, sizeof(*p));
    rdp_buf_t head;
    pmix_status_t status;

    if (p == NULL) {
        return NULL;
    }
    p->fd     = -1;
    coll->ctx = p;
    if (sect_len * coll->nparts * (nservers > 0 ? nservers : 1) < shm_min()
        || rdp_ipc_memfd_open(&p->fd) != PMIX_SUCCESS) {
        p->fd = -1;
        return p; /* declined */
    }
    rdp_buf_init(&head);
    status = rdp_pack_u32(&head, 1); /* one set */
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(&head, coll->procs[0].nspace);
    }
    p->nsect_at = head.size;
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(&head, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_ipc_memfd_append(p->fd, head.data, head.size);
    }
    p->flushed = p->reserved = head.size;
    rdp_buf_cleanup(&head);
    if (status != PMIX_SUCCESS) {
        close(p->fd);
        p->fd = -1;
    }
    return p;
}

static int key_seen_everywhere(const char *key, pmix_scope_t scope,
                               const pmix_value_t *val, void *arg)
{
    (void)key;
    (void)val;
    if ((RDP_SCOPE_BIT(scope) & RDP_SCOPES_LOCAL & RDP_SCOPES_REMOTE) == 0) {
        *(bool *)arg = false;
        return 1;
    }
    return 0;
}

/* Whether (nspace, rank)'s section is the same for local and for remote
 * eyes: every key committed with a scope both see (global, undefined). */
static bool one_section_for_all(const char *nspace, pmix_rank_t rank)
{
    bool all = true;

    rdp_kvs_for_each(rdp_srv.modex, nspace, rank, key_seen_everywhere, &all);
    return all;
}

/* A later arrival whose section is the same for both: packed once, into
 * the contribution, and written into the memfd from there (a large
 * value otherwise went through two packings per arriving rank).  False
 * when it could not be packed (the usual path then tries); a failed
 * write declines the memfd, as there. */
static bool arrived_once(prep_t *p, const char *nspace, pmix_rank_t rank)
{
    size_t at = p->contrib.size;

    if (rdp_srv_pack_proc_section(nspace, rank, RDP_SCOPES_REMOTE,
                                  &p->contrib)
        != PMIX_SUCCESS) {
        p->contrib.size = at;
        return false;
    }
    p->contrib_nsect++;
    p->packed_once++;
    if (rdp_ipc_memfd_append(p->fd, p->contrib.data + at, p->contrib.size - at)
        != PMIX_SUCCESS) {
        close(p->fd);
        p->fd = -1;
        return true;
    }
    p->nsect++;
    p->flushed += p->contrib.size - at;
    return true;
}

/* A local participant arrived: its section into the prepared memfd.  A
 * failure declines the preparation (the reply is then packed whole). */
static void fence_arrived(rdp_srv_coll_t *coll, const char *nspace,
                          pmix_rank_t rank)
{
    prep_t *p = coll->ctx;
    pmix_status_t status;

    if (!coll->collect || (p != NULL && p->fd < 0) || !one_nspace(coll)
        || shm_min() == 0 || !rdp_kvs_has_rank(rdp_srv.modex, nspace, rank)
        || !rdp_cfg_bool(RDP_CFG_FENCE_PREPARE)) {
        return;
    }
    if (p != NULL && p->fd >= 0 && !p->contrib_bad
        && one_section_for_all(nspace, rank) && arrived_once(p, nspace, rank)) {
        return;
    }
    fence_buf.size = 0;
    status =
        rdp_srv_pack_proc_section(nspace, rank, RDP_SCOPES_LOCAL, &fence_buf);
    if (status == PMIX_SUCCESS && p == NULL) {
        p = prep_start(coll, fence_buf.size);
        if (p != NULL && p->fd >= 0) {
            if (rdp_srv_coll_engine_handles(coll)) {
                contrib_start(coll, p, fence_buf.size);
            } else {
                p->contrib_bad = true; /* the host takes it: packed then */
            }
        }
    }
    if (p == NULL || p->fd < 0) {
        fence_buf.size = 0;
        return;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_ipc_memfd_append(p->fd, fence_buf.data, fence_buf.size);
    }
    if (status == PMIX_SUCCESS && !p->contrib_bad) {
        p->contrib_bad = rdp_srv_pack_proc_section(
                             nspace, rank, RDP_SCOPES_REMOTE, &p->contrib)
                         != PMIX_SUCCESS;
        p->contrib_nsect++;
    }
    if (status == PMIX_SUCCESS) {
        p->flushed += fence_buf.size;
        p->nsect++;
    } else {
        close(p->fd);
        p->fd = -1;
    }
    fence_buf.size = 0;
}

/* The exchange runs (this server contributed @a contrib_len bytes): the
 * pages for the other servers' sections allocated now, as many bytes as
 * this server's from each (an estimate; the excess is given back before
 * the seal, prep_trim). */
static void fence_prepare(rdp_srv_coll_t *coll, size_t contrib_len)
{
    prep_t *p     = coll->ctx;
    uint32_t nsrv = rdp_srv_xchg_nservers();
    size_t more   = nsrv > 1 ? contrib_len * (nsrv - 1) : 0;

    if (p == NULL || p->fd < 0) {
        return;
    }
    if (more > 0
        && fallocate(p->fd, FALLOC_FL_KEEP_SIZE, (off_t)p->flushed, (off_t)more)
               == 0) {
        p->reserved = p->flushed + more;
    }
    rdp_log_debug(SERVER,
                  "fence %" PRIu64 ": %" PRIu32 " local sections (%zu bytes) "
                  "written as they arrived, %" PRIu32 " packed once for the "
                  "result and the contribution",
                  coll->id, p->nsect, p->flushed, p->packed_once);
}

/* The pages allocated beyond the result's @a len bytes given back. */
static void prep_trim(const prep_t *p, int fd, size_t len)
{
    if (p->reserved > len) {
        (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)len, (off_t)(p->reserved - len));
    }
}

/* The rest of a prepared result: the other servers' sections after this
 * node's, then the count patched. */
static pmix_status_t pack_prepared(rdp_srv_coll_t *coll, prep_t *p, sink_t *s)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(coll->procs[0].nspace);
    uint32_t nsect       = p->nsect;
    pmix_status_t status = PMIX_SUCCESS;
    size_t j;

    s->fd      = p->fd;
    s->flushed = p->flushed;
    p->fd      = -1; /* the sink's now */
    if (ns != NULL) {
        status = pack_set_sections(coll, 0, ns, PACK_NONLOCAL, s, &j, &nsect);
    }
    if (status == PMIX_SUCCESS) {
        status = sink_patch_u32(s, p->nsect_at, nsect);
    }
    return status;
}

/*
 * Append the FENCE_ACK payload of a collecting fence (after the status)
 * to @a reply: [u8 INLINE][bundle], or, from shm_min() bytes on,
 * [u8 MEMFD][u64 size] with the bundle in a sealed memfd (*fd_p; else
 * -1) that every participant maps: packed once, never copied per client.
 * Falls back to the inline form when shared memory is not available.
 */
static pmix_status_t pack_fence_result(rdp_srv_coll_t *coll, rdp_buf_t *reply,
                                       int *fd_p)
{
    sink_t s = {.buf = &fence_buf, .fd = -1, .shm_at = shm_min()};
    pmix_status_t status;

    *fd_p          = -1;
    fence_buf.size = 0;
    if (coll->ctx != NULL && ((prep_t *)coll->ctx)->fd >= 0) {
        status = pack_prepared(coll, coll->ctx, &s);
    } else {
        status = pack_parts_bundle(coll, PACK_ALL, &s);
    }
    if (status == PMIX_SUCCESS) {
        status = sink_section_end(&s); /* a bundle without sections */
    }
    if (status == PMIX_SUCCESS && s.fd >= 0) {
        if (fence_buf.size > 0) {
            status = sink_flush(&s);
        }
        if (status == PMIX_SUCCESS && coll->ctx != NULL) {
            prep_trim(coll->ctx, s.fd, s.flushed);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_ipc_memfd_seal(s.fd);
        }
        if (status == PMIX_SUCCESS) {
            status = defer_settle(s.fd, s.flushed);
        }
        if (status == PMIX_SUCCESS && s.direct > 0) {
            rdp_log_debug(SERVER,
                          "fence %" PRIu64 ": %" PRIu32 " other servers' "
                          "sections written from their blocks",
                          coll->id, s.direct);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u8(reply, RDP_FENCE_BUNDLE_MEMFD);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u64(reply, s.flushed);
        }
        if (status == PMIX_SUCCESS) {
            *fd_p = s.fd;
            s.fd  = -1;
        }
    } else if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(reply, RDP_FENCE_BUNDLE_INLINE);
        if (status == PMIX_SUCCESS) {
            status = rdp_buf_append(reply, fence_buf.data, fence_buf.size);
        }
    }
    if (deferred.n > 0) { /* inline, or failed: from the blocks */
        pmix_status_t st = defer_settle(-1, 0);

        status = status == PMIX_SUCCESS ? st : status;
    }
    if (s.fd >= 0) {
        close(s.fd);
    }
    if (fence_buf.cap > FENCE_BUF_KEEP_MAX) {
        rdp_buf_cleanup(&fence_buf);
    }
    return status;
}


/* ---- the operation's hooks ---- */

static bool fence_host_provides(void)
{
    return rdp_srv.host.fence_nb != NULL;
}

static bool all_wildcards(const pmix_proc_t *procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; i++) {
        if (procs[i].rank != PMIX_RANK_WILDCARD) {
            return false;
        }
    }
    return nprocs > 0;
}

/*
 * Slurm 22.05 runs a fence without data as its tree collective, and that
 * ended on every node without waiting for the others (seen with OpenPMIx
 * and rdpmix alike: a rank that fenced 3 s late found the other node's
 * ranks past the fence; tests/integ/test_slurm.sh).  A fence with data
 * runs as its ring, which waits.  So in slurmstepd a whole-nspace fence
 * without data carries one byte and PMIX_COLLECT_DATA; what comes back is
 * dropped (fence_result: nothing to store without collect).  The host
 * takes the byte as it takes any contribution.
 */
static pmix_status_t fence_as_ring(const pmix_proc_t *procs, size_t nprocs,
                                   const pmix_info_t *info, size_t ninfo,
                                   void *cbdata)
{
    pmix_info_t *all = rdp_calloc(ninfo + 1, sizeof(*all));
    char *token      = rdp_malloc(1);
    bool yes         = true;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (all != NULL && token != NULL) {
        if (ninfo > 0) {
            memcpy(all, info, ninfo * sizeof(*all)); /* shallow: borrowed */
        }
        PMIX_INFO_LOAD(&all[ninfo], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        token[0] = 0;
        rc = rdp_srv.host.fence_nb(procs, nprocs, all, ninfo + 1, token, 1,
                                   rdp_srv_coll_host_modex_cb, cbdata);
        if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
            token = NULL; /* the host's now */
        }
    }
    rdp_free(token);
    rdp_free(all);
    return rc;
}

static pmix_status_t fence_host_call(const pmix_proc_t *procs, size_t nprocs,
                                     const pmix_info_t *info, size_t ninfo,
                                     char *data, size_t ndata, void *cbdata)
{
    if (data == NULL && rdp_srv_host_is_slurmstepd()
        && all_wildcards(procs, nprocs)) {
        return fence_as_ring(procs, nprocs, info, ninfo, cbdata);
    }
    return rdp_srv.host.fence_nb(procs, nprocs, info, ninfo, data, ndata,
                                 rdp_srv_coll_host_modex_cb, cbdata);
}

/* the same bundle either way: handed to fence_nb or to the engine */
static pmix_status_t fence_contribute(rdp_srv_coll_t *coll, rdp_buf_t *buf)
{
    sink_t s = {.buf = buf, .fd = -1};

    return pack_parts_bundle(coll, PACK_CONTRIB, &s);
}

/* The contribution built as the participants arrived, moved into the
 * empty @a buf, if it is whole; else false (pack it now). */
static bool fence_take_contribution(rdp_srv_coll_t *coll, rdp_buf_t *buf)
{
    prep_t *p = coll->ctx;
    sink_t s;

    if (p == NULL || p->contrib.size == 0 || p->contrib_bad
        || p->contrib_nsect != contrib_expected(coll)) {
        return false;
    }
    s = (sink_t){.buf = &p->contrib, .fd = -1};
    if (sink_patch_u32(&s, p->contrib_nsect_at, p->contrib_nsect)
        != PMIX_SUCCESS) {
        return false;
    }
    rdp_buf_cleanup(buf);
    *buf = p->contrib;
    rdp_buf_init(&p->contrib);
    rdp_log_debug(SERVER,
                  "fence %" PRIu64 ": contribution of %" PRIu32 " sections "
                  "(%zu bytes) built as they arrived",
                  coll->id, p->contrib_nsect, buf->size - RDP_COLL_HEADROOM);
    return true;
}

/* Store the other servers' bundles (the host's answer: all of them). */
static pmix_status_t fence_result(rdp_srv_coll_t *coll,
                                  const rdp_srv_xchg_block_t *blocks,
                                  size_t nblocks)
{
    uint32_t me          = rdp_srv_xchg_me();
    pmix_status_t status = PMIX_SUCCESS;

    bool defer;

    defer_clear(); /* a stale index of a result never packed */
    if (!coll->collect) {
        return PMIX_SUCCESS; /* nothing to store (fence_as_ring) */
    }
    defer = defer_pays(blocks, nblocks, me);
    if (defer && deferred.index.buckets == NULL) {
        defer = rdp_hash_init(&deferred.index, 0) == PMIX_SUCCESS;
    }
    for (size_t i = 0; status == PMIX_SUCCESS && i < nblocks; i++) {
        /* (without the engine, me is RDP_SRV_XCHG_HOST too) */
        if ((blocks[i].origin == me && me != RDP_SRV_XCHG_HOST)
            || blocks[i].len == 0) {
            continue;
        }
        status = defer ? rdp_srv_bundles_for_each_remote(
                     blocks[i].data, blocks[i].len, defer_add, NULL)
                       : rdp_srv_store_bundles(blocks[i].data, blocks[i].len);
        if (status != PMIX_SUCCESS && blocks[i].origin != RDP_SRV_XCHG_HOST) {
            rdp_log_error(SERVER, "fence data from server %u is malformed",
                          blocks[i].origin);
        }
    }
    return status;
}

/* FENCE_ACK after the status: packed once, every participant gets the
 * same bytes. */
static pmix_status_t fence_reply(rdp_srv_coll_t *coll, rdp_buf_t *buf,
                                 int *fd_p)
{
    pmix_status_t status;

    if (coll->collect) {
        status = pack_fence_result(coll, buf, fd_p);
    } else {
        status = rdp_pack_u8(buf, RDP_FENCE_NO_BUNDLE);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot pack fence result: %s",
                      rdp_status_name(status));
    }
    return status;
}

static void fence_cleanup(void)
{
    rdp_buf_cleanup(&fence_buf);
    defer_clear();
    rdp_free(deferred.v);
    deferred.v   = NULL;
    deferred.cap = 0;
}

const rdp_srv_coll_ops_t rdp_srv_fence_ops = {
    .upcall            = "fence_nb",
    .reply_cmd         = RDP_CMD_FENCE_ACK,
    .engine            = true,
    .pass_failure      = true,
    .host_provides     = fence_host_provides,
    .host_call         = fence_host_call,
    .contribute        = fence_contribute,
    .take_contribution = fence_take_contribution,
    .result            = fence_result,
    .reply             = fence_reply,
    .arrived           = fence_arrived,
    .prepare           = fence_prepare,
    .ctx_free          = prep_free,
    .cleanup           = fence_cleanup,
    /* fence_result skips it: this node's sections come from the store */
    .result_without_own = true,
};
