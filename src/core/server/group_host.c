/* group_host.c - group operations across nodes through the host */
#include "config.h"
#include "core/server/group_host.h"
#include "core/server/slurmfence.h"
#include "coll/coll.h"
#include "core/common/runtime.h"
#include "core/server/group.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every server that hosts members hands the host one *frame* and gets
 * back every server's frame (the host concatenates them, in any order):
 *
 *   frame := u32 FRAME_MAGIC, i32 status, u32 node, bytes key, bytes block
 *
 * key is the exchange's key (kind, group id, generation: group.c) so
 * that fences the host matched crosswise are noticed, not mixed; node is
 * this server's PMIX_NODEID; status is not PMIX_SUCCESS when this
 * server's part failed (the block is then empty).
 *
 * A host fence knows an operation only by its processes (Slurm matches
 * fences by their proc arrays), so operations over the same process set
 * run one at a time in each server, in the order they reached the
 * exchange: queues keyed by the sorted set.  An abandoned operation (its
 * tracker failed meanwhile) still contributes when its turn comes, so
 * that every server's k-th fence over a set stays the same operation.
 */

#define FRAME_MAGIC 0x52474831u /* "RGH1" */

typedef struct ghset ghset_t;

typedef struct ghop {
    struct ghop *next;
    ghset_t *set;
    bool construct;
    bool launched;
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *procs;
    size_t nprocs;
    pmix_proc_t *fprocs; /* what the host's collective runs over */
    double timeout;
    uint8_t *key;
    size_t keylen;
    pmix_status_t status; /* this server's part failed */
    uint8_t *block;       /* this server's block (owned) */
    size_t blocklen;
    uint8_t *frame; /* what this server contributes (owned) */
    size_t framelen;
    pmix_info_t info[4]; /* handed to the host until it answers */
    size_t ninfo;
    rdp_srv_xchg_done_fn done; /* NULL: only a failure contributed */
    void *arg;
    rdp_srv_host_reply_t reply;
    bool infos; /* the reply is an info array (group upcall) */
} ghop_t;

struct ghset {
    ghop_t *head, *tail;
    size_t keylen;
    uint8_t key[];
};

static struct {
    bool init;
    rdp_hash_t sets; /* sorted process set -> ghset_t */
} gh;

/* ---- process sets ---- */

static int proc_cmp(const void *a, const void *b)
{
    const pmix_proc_t *p = a, *q = b;
    int c = strncmp(p->nspace, q->nspace, PMIX_MAX_NSLEN);

    if (c != 0) {
        return c;
    }
    return p->rank < q->rank ? -1 : p->rank > q->rank;
}

/* The set's identity: its processes sorted, packed. */
static pmix_status_t set_key(const pmix_proc_t *procs, size_t nprocs,
                             rdp_buf_t *buf)
{
    pmix_proc_t *sorted = rdp_calloc(nprocs + 1, sizeof(*sorted));
    pmix_status_t status;

    if (sorted == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(sorted, procs, nprocs * sizeof(*sorted));
    qsort(sorted, nprocs, sizeof(*sorted), proc_cmp);
    status = rdp_pack_proc_array(buf, sorted, nprocs);
    rdp_free(sorted);
    return status;
}

static ghset_t *set_get(const pmix_proc_t *procs, size_t nprocs, bool make)
{
    rdp_buf_t buf;
    ghset_t *set = NULL;

    if (!gh.init) {
        if (!make || rdp_hash_init(&gh.sets, 0) != PMIX_SUCCESS) {
            return NULL;
        }
        gh.init = true;
    }
    rdp_buf_init(&buf);
    if (set_key(procs, nprocs, &buf) == PMIX_SUCCESS) {
        set = rdp_hash_get(&gh.sets, buf.data, buf.size);
        if (set == NULL && make) {
            set = rdp_calloc(1, sizeof(*set) + buf.size);
        }
        if (set != NULL && set->keylen == 0) {
            set->keylen = buf.size;
            memcpy(set->key, buf.data, buf.size);
            if (rdp_hash_set(&gh.sets, set->key, set->keylen, set, NULL)
                != PMIX_SUCCESS) {
                rdp_free(set);
                set = NULL;
            }
        }
    }
    rdp_buf_cleanup(&buf);
    return set;
}

static void set_append(ghset_t *set, ghop_t *op)
{
    op->set = set;
    if (set->tail != NULL) {
        set->tail->next = op;
    } else {
        set->head = op;
    }
    set->tail = op;
}

/* Take the head off its set's queue; the set goes when empty. */
static void set_pop(ghset_t *set)
{
    set->head = set->head->next;
    if (set->head == NULL) {
        set->tail = NULL;
        rdp_hash_remove(&gh.sets, set->key, set->keylen);
        rdp_free(set);
    }
}

/* ---- operations ---- */

static void ghop_free(ghop_t *op)
{
    if (op == NULL) {
        return;
    }
    rdp_free(op->procs);
    rdp_free(op->fprocs);
    rdp_free(op->key);
    rdp_free(op->block);
    rdp_free(op->frame);
    rdp_free(op);
}

/*
 * This server's node id: the PMIX_NODEID the host registered for one of
 * its local members (every server of a job sees the same node map).  A
 * host that registers none: a hash of this node's name.
 */
static uint32_t this_node(const pmix_proc_t *procs, size_t nprocs)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);
        pmix_rank_t r        = procs[i].rank;
        const pmix_value_t *v;
        uint64_t id;

        if (ns == NULL) {
            continue;
        }
        if (r == PMIX_RANK_WILDCARD) {
            if (ns->nlocal == 0) {
                continue;
            }
            r = ns->local_ranks[0];
        } else if (!rdp_srv_nspace_is_local(ns, r)) {
            continue;
        }
        v = rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, r, PMIX_NODEID);
        if (v != NULL && rdp_srv_value_to_u64(v, &id) && id <= UINT32_MAX) {
            return (uint32_t)id;
        }
    }
    for (const char *c = rdp_srv.hostname; c != NULL && *c != '\0'; c++) {
        h = (h ^ (uint8_t)*c) * 16777619u;
    }
    return h;
}

/* True when @a procs (no wildcards) are of one nspace and live on every
 * node of it. */
static bool on_every_node(const pmix_proc_t *procs, size_t nprocs)
{
    size_t of;
    size_t n = rdp_srv_procs_span(procs, nprocs, &of);

    return n > 0 && n == of;
}

/*
 * Slurm 22.05's collectives cannot run over processes on only some of
 * their nspace's nodes: its ring and tree name a fence to the other nodes
 * by its first process repeated (fence_procs).  Its ring (a fence with
 * data) then never meets its peers and hangs; its tree ends on every node
 * with that node's data alone (both seen under tests/integ/test_slurm.sh).
 * Under that host a group over
 * such members fails at once with PMIX_ERR_NOT_SUPPORTED on every one of
 * their servers (each decides from the same node map), instead of
 * hanging.  Members on one node never reach the host.
 */
static bool host_cannot_fence(const pmix_proc_t *procs, size_t nprocs)
{
    size_t of, n;

    if (rdp_srv.host.group != NULL || !rdp_srv_host_is_slurmstepd()) {
        return false;
    }
    n = rdp_srv_procs_span(procs, nprocs, &of);
    return n > 1 && n < of;
}

/*
 * The processes the host's fence runs over.  Slurm 22.05 names a fence to
 * the other nodes by its first process repeated (its ring and tree
 * collectives pack procs[0] for every entry), so a fence over a list of
 * processes never meets its peers there, while one over copies of an
 * nspace's wildcard does.  Members on every node of their nspace: the
 * fence goes over nmembers copies of its wildcard (the same servers take
 * part; the count keeps it apart from the job's own fences over the
 * wildcard).  Else over exactly the members.
 */
static pmix_status_t fence_procs(ghop_t *op)
{
    size_t n = op->nprocs;
    bool collapse =
        rdp_srv.host.group == NULL && n > 1 && on_every_node(op->procs, n);

    op->fprocs = rdp_calloc(n + 1, sizeof(*op->fprocs));
    if (op->fprocs == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        op->fprocs[i] = op->procs[i];
        if (collapse) {
            op->fprocs[i].rank = PMIX_RANK_WILDCARD;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t pack_frame(ghop_t *op)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = rdp_pack_u32(&buf, FRAME_MAGIC);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(&buf, op->status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(&buf, this_node(op->procs, op->nprocs));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(&buf, op->key, op->keylen);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_pack_bytes(&buf, op->status == PMIX_SUCCESS ? op->block : NULL,
                           op->status == PMIX_SUCCESS ? op->blocklen : 0);
    }
    rdp_free(op->frame);
    op->frame =
        status == PMIX_SUCCESS ? rdp_buf_take(&buf, &op->framelen) : NULL;
    rdp_buf_cleanup(&buf);
    return status;
}

static void ghop_done_on_loop(void *arg);

static void post_reply(ghop_t *op)
{
    if (rdp_rt.loop == NULL
        || rdp_loop_post(rdp_rt.loop, ghop_done_on_loop, op) != PMIX_SUCCESS) {
        /* the server is gone: give the host its buffer back; op stays */
        rdp_log_error(SERVER, "host's group reply after shutdown dropped");
        rdp_srv_host_reply_release(&op->reply);
    }
}

/* Any thread, maybe under the host's locks: record and post only. */
static void fence_cb(pmix_status_t status, const char *data, size_t ndata,
                     void *cbdata, pmix_release_cbfunc_t release_fn,
                     void *release_cbdata)
{
    ghop_t *op = cbdata;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_GROUP_FENCE, &op->reply,
                                  release_fn, release_cbdata);
    rdp_srv_host_reply_keep(&op->reply, status, data, ndata, release_fn,
                            release_cbdata);
    post_reply(op);
    RDP_SRV_HOST_CB_LEAVE();
}

static void group_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                     void *cbdata, pmix_release_cbfunc_t release_fn,
                     void *release_cbdata)
{
    ghop_t *op = cbdata;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_GROUP, &op->reply, release_fn,
                                  release_cbdata);
    op->infos = true;
    rdp_srv_host_reply_keep(&op->reply, status, info, ninfo, release_fn,
                            release_cbdata);
    post_reply(op);
    RDP_SRV_HOST_CB_LEAVE();
}

/* Directives common to both upcalls. */
static void add_common_info(ghop_t *op)
{
    if (op->timeout > 0) {
        int t = (int)(op->timeout + 0.999);

        PMIX_INFO_LOAD(&op->info[op->ninfo], PMIX_TIMEOUT, &t, PMIX_INT);
        op->ninfo++;
    }
    if (op->status != PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&op->info[op->ninfo], PMIX_LOCAL_COLLECTIVE_STATUS,
                       &op->status, PMIX_STATUS);
        op->ninfo++;
    }
}

static bool want_cid(const ghop_t *op)
{
    return op->construct && op->status == PMIX_SUCCESS && op->blocklen > 0
           && op->block[0] != 0;
}

static pmix_status_t call_group_upcall(ghop_t *op)
{
    pmix_byte_object_t bo = {.bytes = (char *)op->frame, .size = op->framelen};
    bool yes              = true;

    /* the byte object borrows op->frame: PMIX_INFO_LOAD would copy it */
    PMIX_INFO_LOAD(&op->info[op->ninfo], PMIX_GROUP_ENDPT_DATA, NULL,
                   PMIX_UNDEF);
    op->info[op->ninfo].value.type    = PMIX_BYTE_OBJECT;
    op->info[op->ninfo].value.data.bo = bo;
    op->ninfo++;
    if (want_cid(op)) {
        PMIX_INFO_LOAD(&op->info[op->ninfo], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes,
                       PMIX_BOOL);
        op->ninfo++;
    }
    add_common_info(op);
    return rdp_srv.host.group(
        op->construct ? PMIX_GROUP_CONSTRUCT : PMIX_GROUP_DESTRUCT, op->id,
        op->procs, op->nprocs, op->info, op->ninfo, group_cb, op);
}

static pmix_status_t call_fence(ghop_t *op)
{
    bool yes   = true;
    char *data = rdp_malloc(op->framelen);
    pmix_status_t rc;

    if (data == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(data, op->frame, op->framelen);
    PMIX_INFO_LOAD(&op->info[op->ninfo], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    op->ninfo++;
    add_common_info(op);
    rc = rdp_srv.host.fence_nb(op->fprocs, op->nprocs, op->info, op->ninfo,
                               data, op->framelen, fence_cb, op);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        rdp_free(data); /* else the host's now, as a fence's (coll.c) */
    }
    return rc;
}

/* Hand the head of its set to the host. */
static pmix_status_t launch(ghop_t *op)
{
    pmix_status_t rc = pack_frame(op);

    op->launched = true;
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    op->ninfo = 0;
    rc        = PMIX_ERR_NOT_SUPPORTED;
    if (rdp_srv.host.group != NULL) {
        rc = call_group_upcall(op);
    }
    if (rc == PMIX_ERR_NOT_SUPPORTED && rdp_srv.host.fence_nb != NULL) {
        /* no group upcall, or one that refuses (as Slurm's connect does) */
        op->ninfo = 0;
        rc        = call_fence(op);
    }
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        /* done at once: but the other servers' blocks are needed */
        rdp_log_error(SERVER,
                      "group %s: the host's %s returned at once "
                      "without the other servers' data",
                      op->id,
                      rdp_srv.host.group != NULL ? "group" : "fence_nb");
        rc = PMIX_ERR_NOT_SUPPORTED;
    }
    return rc;
}

static void finish(ghop_t *op, pmix_status_t status,
                   const rdp_srv_xchg_block_t *blocks, size_t nblocks);

/* Launch the set's head unless it runs; one that cannot start ends
 * with its error (and finish tries the next one). */
static void launch_next(ghset_t *set)
{
    ghop_t *op = set->head;
    pmix_status_t rc;

    if (op == NULL || op->launched) {
        return;
    }
    rc = launch(op);
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "group %s: the host refused it: %s", op->id,
                      rdp_status_name(rc));
        finish(op, rc, NULL, 0);
    }
}

/* End @a op (the head of its set), then start the next one. */
static void finish(ghop_t *op, pmix_status_t status,
                   const rdp_srv_xchg_block_t *blocks, size_t nblocks)
{
    ghset_t *set = op->set;
    bool more    = set->head->next != NULL;

    set_pop(set);
    if (op->done != NULL) {
        op->done(status, blocks, nblocks, op->arg);
    }
    ghop_free(op);
    if (more) {
        /* the set lived on: ops were queued behind op */
        launch_next(set);
    }
}

/* ---- the host's answer ---- */

typedef struct frame {
    const uint8_t *start; /* the whole frame */
    size_t len;
    int32_t status;
    uint32_t node;
    const void *key;
    size_t keylen;
    uint8_t *block; /* in the answer's copy: its context id is rewritten */
    size_t blocklen;
} frame_t;

static pmix_status_t parse_frame(rdp_rbuf_t *rb, frame_t *f)
{
    uint32_t magic;
    const void *block;
    pmix_status_t status;

    f->start = rb->ptr;
    status   = rdp_unpack_u32(rb, &magic);
    if (status == PMIX_SUCCESS && magic != FRAME_MAGIC) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(rb, &f->status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &f->node);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes_view(rb, &f->key, &f->keylen);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes_view(rb, &block, &f->blocklen);
    }
    f->block = (uint8_t *)(uintptr_t)block;
    f->len   = (size_t)(rb->ptr - f->start);
    return status;
}

/* Split @a data (writable) into frames; *frames_p malloc'ed. */
static pmix_status_t parse_frames(uint8_t *data, size_t len, frame_t **frames_p,
                                  size_t *n_p)
{
    rdp_rbuf_t rb;
    frame_t *frames = NULL;
    size_t n = 0, cap = 0;
    pmix_status_t status = PMIX_SUCCESS;

    rdp_rbuf_init(&rb, data, len);
    while (status == PMIX_SUCCESS && rb.left > 0) {
        if (n == cap) {
            frame_t *more =
                rdp_realloc(frames, (cap = cap * 2 + 4) * sizeof(*frames));
            if (more == NULL) {
                status = PMIX_ERR_NOMEM;
                break;
            }
            frames = more;
        }
        status = parse_frame(&rb, &frames[n++]);
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(frames);
        return status;
    }
    *frames_p = frames;
    *n_p      = n;
    return PMIX_SUCCESS;
}

static int frame_cmp(const void *a, const void *b)
{
    const frame_t *f = a, *g = b;
    int c;

    if (f->node != g->node) {
        return f->node < g->node ? -1 : 1;
    }
    c = memcmp(f->start, g->start, f->len < g->len ? f->len : g->len);
    return c != 0 ? c : (f->len > g->len) - (f->len < g->len);
}

/* Every frame is this operation's, one is this server's, none failed. */
static pmix_status_t check_frames(const ghop_t *op, const frame_t *frames,
                                  size_t n, size_t *mine_p)
{
    size_t nmine = 0;

    for (size_t i = 0; i < n; i++) {
        const frame_t *f = &frames[i];

        if (f->keylen != op->keylen || memcmp(f->key, op->key, f->keylen)) {
            rdp_log_error(SERVER,
                          "group %s: the host matched this server's fence "
                          "with another operation's over the same "
                          "processes (called in different orders?)",
                          op->id);
            return PMIX_ERROR;
        }
        if (f->status != PMIX_SUCCESS) {
            return f->status;
        }
        if (f->len == op->framelen && !memcmp(f->start, op->frame, f->len)) {
            *mine_p = i;
            nmine++;
        }
    }
    if (nmine != 1) {
        rdp_log_error(SERVER,
                      "group %s: the host's answer has %zu frames of "
                      "this server",
                      op->id, nmine);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return PMIX_SUCCESS;
}

/*
 * The context id: the host's when it assigned one, else the lowest node's
 * candidate with that node's id on top (rdp_srv_group_cid_make), the rule
 * of the engine with node ids for engine indices.  group.c picks the
 * candidate of the lowest origin; every block gets the chosen one, so
 * whichever it picks agrees on every server.
 */
static pmix_status_t set_cids(frame_t *frames, size_t n, bool host_given,
                              uint64_t host_cid)
{
    uint64_t cid = host_cid, cand;
    rdp_rbuf_t rb;
    rdp_buf_t buf;
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < n; i++) {
        if (frames[i].blocklen < 9) { /* u8 want_cid, u64 candidate */
            return PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (!host_given && n > 0) {
        rdp_rbuf_init(&rb, frames[0].block + 1, 8);
        status = rdp_unpack_u64(&rb, &cand);
        cid    = rdp_srv_group_cid_make(frames[0].node, (uint32_t)cand);
    }
    rdp_buf_init(&buf);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(&buf, cid);
    }
    for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        memcpy(frames[i].block + 1, buf.data, 8);
    }
    rdp_buf_cleanup(&buf);
    return status;
}

/* The group upcall's answer: the frames and maybe a context id. */
static void read_infos(const ghop_t *op, const void **data_p, size_t *len_p,
                       bool *have_cid_p, uint64_t *cid_p)
{
    const pmix_info_t *info = op->reply.data;

    for (size_t i = 0; i < op->reply.ndata; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ENDPT_DATA)
            && info[i].value.type == PMIX_BYTE_OBJECT) {
            *data_p = info[i].value.data.bo.bytes;
            *len_p  = info[i].value.data.bo.size;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_CONTEXT_ID)) {
            *have_cid_p = rdp_srv_value_to_u64(&info[i].value, cid_p);
        }
    }
}

/* Blocks for group.c from the answer's frames (in @a copy): this
 * server's is origin 0 (group.c's index without the engine), the others
 * 1.. in node order. */
static pmix_status_t answer_blocks(ghop_t *op, uint8_t *copy, size_t len,
                                   bool have_cid, uint64_t cid,
                                   rdp_srv_xchg_block_t **blocks_p, size_t *n_p)
{
    frame_t *frames = NULL;
    rdp_srv_xchg_block_t *blocks;
    size_t n = 0, mine = 0;
    uint32_t next        = 1;
    pmix_status_t status = parse_frames(copy, len, &frames, &n);

    if (status == PMIX_SUCCESS) {
        status = check_frames(op, frames, n, &mine);
    }
    if (status == PMIX_SUCCESS) {
        frame_t own = frames[mine];

        qsort(frames, n, sizeof(*frames), frame_cmp);
        status = set_cids(frames, n, have_cid, cid);
        blocks = rdp_calloc(n + 1, sizeof(*blocks));
        if (blocks == NULL) {
            status = PMIX_ERR_NOMEM;
        }
        for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
            blocks[i].origin = frames[i].start == own.start ? 0 : next++;
            blocks[i].data   = frames[i].block;
            blocks[i].len    = frames[i].blocklen;
        }
        if (status == PMIX_SUCCESS) {
            *blocks_p = blocks;
            *n_p      = n;
        } else {
            rdp_free(blocks);
        }
    }
    rdp_free(frames);
    return status;
}

static void ghop_done_on_loop(void *arg)
{
    ghop_t *op                   = arg;
    pmix_status_t status         = op->reply.status;
    const void *data             = op->reply.data;
    size_t len                   = op->reply.ndata;
    bool have_cid                = false;
    uint64_t cid                 = 0;
    uint8_t *copy                = NULL;
    rdp_srv_xchg_block_t *blocks = NULL;
    size_t n                     = 0;

    if (op->infos) {
        data = NULL;
        len  = 0;
        read_infos(op, &data, &len, &have_cid, &cid);
    }
    if (status == PMIX_SUCCESS) {
        copy   = rdp_malloc(len + 1);
        status = copy != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    if (status == PMIX_SUCCESS) {
        if (len > 0) {
            memcpy(copy, data, len);
        }
        status = answer_blocks(op, copy, len, have_cid, cid, &blocks, &n);
    }
    rdp_srv_host_reply_release(&op->reply);
    if (status != PMIX_SUCCESS) {
        rdp_log_info(SERVER, "group %s: the host's %s ended with %s", op->id,
                     op->infos ? "group" : "fence", rdp_status_name(status));
    }
    finish(op, status, status == PMIX_SUCCESS ? blocks : NULL,
           status == PMIX_SUCCESS ? n : 0);
    rdp_free(blocks);
    rdp_free(copy);
}

/* ---- starting ---- */

static ghop_t *ghop_new(bool construct, const char *id, const uint8_t *key,
                        size_t keylen, const pmix_proc_t *procs, size_t nprocs)
{
    ghop_t *op = rdp_calloc(1, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    op->construct = construct;
    snprintf(op->id, sizeof(op->id), "%s", id);
    op->procs  = rdp_calloc(nprocs + 1, sizeof(*op->procs));
    op->key    = rdp_malloc(keylen + 1);
    op->nprocs = nprocs;
    op->keylen = keylen;
    if (op->procs == NULL || op->key == NULL) {
        ghop_free(op);
        return NULL;
    }
    memcpy(op->procs, procs, nprocs * sizeof(*procs));
    memcpy(op->key, key, keylen);
    if (fence_procs(op) != PMIX_SUCCESS) {
        ghop_free(op);
        return NULL;
    }
    return op;
}

static bool host_can(void)
{
    return rdp_srv.host.group != NULL || rdp_srv.host.fence_nb != NULL;
}

/* Queue @a op behind the operations over the same set; launch it if it
 * is the first.  PMIX_SUCCESS, or why it could not start (op freed). */
static pmix_status_t enqueue(ghop_t *op)
{
    ghset_t *set = set_get(op->fprocs, op->nprocs, true);
    pmix_status_t rc;

    if (set == NULL) {
        ghop_free(op);
        return PMIX_ERR_NOMEM;
    }
    set_append(set, op);
    if (set->head != op) {
        return PMIX_SUCCESS;
    }
    rc = launch(op);
    if (rc != PMIX_SUCCESS) {
        set_pop(set);
        ghop_free(op);
    }
    return rc;
}

pmix_status_t rdp_srv_group_host_start(bool construct, const char *id,
                                       const rdp_srv_xchg_args_t *args,
                                       rdp_srv_xchg_done_fn done, void *arg,
                                       uint64_t *handle_p)
{
    ghop_t *op;

    if (!host_can()) {
        rdp_free(args->own_buf);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (host_cannot_fence(args->procs, args->nprocs)) {
        rdp_log_error(SERVER,
                      "group %s: its members are on only some of their "
                      "job's nodes, and this host (Slurm 22.05) cannot run "
                      "a collective over them: not supported",
                      id);
        rdp_free(args->own_buf);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    op = ghop_new(construct, id, args->key, args->keylen, args->procs,
                  args->nprocs);
    if (op == NULL) {
        rdp_free(args->own_buf);
        return PMIX_ERR_NOMEM;
    }
    op->block = rdp_malloc(args->len + 1);
    if (op->block == NULL) {
        rdp_free(args->own_buf);
        ghop_free(op);
        return PMIX_ERR_NOMEM;
    }
    memcpy(op->block, (uint8_t *)args->own_buf + RDP_COLL_HEADROOM, args->len);
    rdp_free(args->own_buf);
    op->blocklen = args->len;
    op->timeout  = args->timeout;
    op->done     = done;
    op->arg      = arg;
    *handle_p    = rdp_srv_next_id(); /* nothing else uses it */
    return enqueue(op);
}

static ghop_t *find_queued(const ghset_t *set, const uint8_t *key,
                           size_t keylen)
{
    for (ghop_t *op = set != NULL ? set->head : NULL; op != NULL;
         op         = op->next) {
        if (op->keylen == keylen && memcmp(op->key, key, keylen) == 0) {
            return op;
        }
    }
    return NULL;
}

void rdp_srv_group_host_fail(bool construct, const char *id, const uint8_t *key,
                             size_t keylen, const pmix_proc_t *procs,
                             size_t nprocs, pmix_status_t status)
{
    ghop_t *op, *queued;

    if (!host_can() || status == PMIX_SUCCESS
        || host_cannot_fence(procs, nprocs)) {
        return;
    }
    op = ghop_new(construct, id, key, keylen, procs, nprocs);
    if (op == NULL) {
        return;
    }
    queued = find_queued(set_get(op->fprocs, op->nprocs, false), key, keylen);
    if (queued != NULL) {
        if (!queued->launched) {
            queued->status = status; /* contributes the failure in turn */
        }
        /* else its fence runs: the others get this server's block */
        ghop_free(op);
        return;
    }
    op->status = status;
    if (enqueue(op) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "could not tell the host that a group "
                              "operation failed here");
    }
}
