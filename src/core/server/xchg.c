/* xchg.c - the servers' operation-neutral exchange over the engine */
#include "config.h"
#include "core/server/xchg.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <inttypes.h>
#include <string.h>

/*
 * An exchange maps every participant to its server (registered
 * PMIX_NODEID) and starts a barrier, or an allgather of this server's
 * block, over the sorted list of those servers.  The engine's operation id
 * hashes the key the operation gives (operation, participants, number), so
 * every server derives the same id and parallel operations never collide.
 * The size class of an allgather is remembered per participant set, so the
 * next operation over the set can pick its algorithm without a round trip.
 */

/* An exchange running in the engine. */
typedef struct xchg {
    rdp_list_t link; /* xs.running */
    uint64_t handle;
    uint64_t setkey; /* hash of the key without its number */
    uint64_t seq;    /* the key's number */
    uint32_t nservers;
    enum rdp_coll_kind kind; /* the engine's key, for cancelling it */
    uint64_t sig;
    uint64_t opid;
    rdp_srv_xchg_done_fn done;
    void *arg;
} xchg_t;

/* Size of the last allgather result over one participant set. */
typedef struct sizemem {
    uint64_t seq;
    uint64_t total;
} sizemem_t;

static struct {
    bool open;
    rdp_list_t running; /* xchg_t */
    rdp_hash_t sizes;   /* setkey (u64) -> sizemem_t */
} xs;

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

uint32_t rdp_srv_xchg_me(void)
{
    return xs.open ? rdp_srv_engine_me() : UINT32_MAX;
}

uint32_t rdp_srv_xchg_nservers(void)
{
    return xs.open ? rdp_srv_engine_size() : 0;
}

/* ---- size class memory ---- */

static void sizes_remember(const xchg_t *x, uint64_t total)
{
    sizemem_t *sm = rdp_hash_get_u64(&xs.sizes, x->setkey);

    if (sm == NULL) {
        sm = rdp_calloc(1, sizeof(*sm));
        if (sm == NULL) {
            return; /* only a hint */
        }
        if (rdp_hash_set_u64(&xs.sizes, x->setkey, sm, NULL) != PMIX_SUCCESS) {
            rdp_free(sm);
            return;
        }
    }
    sm->seq   = x->seq;
    sm->total = total;
}

static enum rdp_coll_size_class sizes_recall(const xchg_t *x)
{
    sizemem_t *sm = rdp_hash_get_u64(&xs.sizes, x->setkey);

    if (sm != NULL && sm->seq + 1 == x->seq) {
        return rdp_coll_size_class_of(sm->total, x->nservers);
    }
    return 0;
}

/* ---- completion ---- */

static void log_failure(const xchg_t *x, const rdp_coll_result_t *res)
{
    if (res->status == PMIX_ERR_PROC_TERM_WO_SYNC) {
        /* cancelled here: a participant left (the operation logged it) */
        rdp_log_debug(SERVER, "exchange %" PRIu64 " cancelled", x->handle);
    } else if (res->failed_peer != UINT32_MAX) {
        rdp_log_warn(SERVER,
                     "exchange %" PRIu64 " over %u servers failed "
                     "(server %u): %s",
                     x->handle, x->nservers, res->failed_peer,
                     rdp_status_name(res->status));
    } else {
        rdp_log_warn(SERVER, "exchange %" PRIu64 " over %u servers failed: %s",
                     x->handle, x->nservers, rdp_status_name(res->status));
    }
}

/* rdp_coll_cb_t: hand every block to the operation. */
static void xchg_done(const rdp_coll_result_t *res, void *arg)
{
    xchg_t *x                    = arg;
    rdp_srv_xchg_block_t *blocks = NULL;
    size_t nblocks               = 0;
    pmix_status_t status         = res->status;
    uint64_t total               = 0;

    rdp_list_del(&x->link);
    if (status == PMIX_SUCCESS && res->kind == RDP_COLL_ALLGATHER) {
        blocks = rdp_calloc(res->nblocks + 1, sizeof(*blocks));
        if (blocks == NULL) {
            status = PMIX_ERR_NOMEM;
        }
        for (uint32_t i = 0; blocks != NULL && i < res->nblocks; i++) {
            blocks[i].origin = res->blocks[i].origin;
            blocks[i].data   = res->blocks[i].data;
            blocks[i].len    = (size_t)res->blocks[i].len;
            total += res->blocks[i].len;
            if (blocks[i].data == NULL && blocks[i].len > 0) {
                rdp_log_debug(SERVER,
                              "exchange %" PRIu64 ": this server's block "
                              "(%zu bytes) freed once sent",
                              x->handle, blocks[i].len);
            }
        }
        if (blocks != NULL) {
            nblocks = res->nblocks;
            sizes_remember(x, total);
        }
    } else if (status != PMIX_SUCCESS) {
        log_failure(x, res);
    }
    x->done(status, blocks, nblocks, x->arg);
    rdp_free(blocks);
    rdp_free(x);
}

/* ---- starting ---- */

/* Mark the servers of @a ns's ranks in @a procs entry @a p in @a in. */
static pmix_status_t mark_servers(const pmix_proc_t *p, uint8_t *in)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(p->nspace);
    pmix_rank_t lo = p->rank, hi = p->rank;

    if (ns == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    if (lo == PMIX_RANK_WILDCARD) {
        if (ns->size == 0) {
            rdp_log_error(SERVER, "exchange over %s:* without a job size",
                          ns->name);
            return PMIX_ERR_BAD_PARAM;
        }
        lo = 0;
        hi = ns->size - 1;
    }
    for (pmix_rank_t r = lo; r <= hi; r++) {
        uint32_t s;

        if (!rdp_srv_engine_server_of(ns, r, &s)) {
            rdp_log_error(SERVER,
                          "exchange: %s:%u has no valid %s (0..%u): "
                          "cannot tell its server",
                          ns->name, r, PMIX_NODEID, rdp_srv_engine_size() - 1);
            return PMIX_ERR_BAD_PARAM;
        }
        in[s] = 1;
    }
    return PMIX_SUCCESS;
}

/* The sorted servers of the participants; *n_p of them.  With @a need_me,
 * this server must be one of them. */
static pmix_status_t servers_of(const pmix_proc_t *procs, size_t nprocs,
                                bool need_me, uint32_t **srv_p, uint32_t *n_p)
{
    uint32_t nuniverse = rdp_srv_engine_size(), me = rdp_srv_engine_me();
    uint8_t *in = rdp_calloc(nuniverse + 1, 1);
    uint32_t *srv, n = 0;
    pmix_status_t status = PMIX_SUCCESS;

    if (in == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; status == PMIX_SUCCESS && i < nprocs; i++) {
        status = mark_servers(&procs[i], in);
    }
    if (status == PMIX_SUCCESS && need_me && !in[me]) {
        rdp_log_error(SERVER,
                      "exchange: no participant has %s %u (this "
                      "server), yet some are local",
                      PMIX_NODEID, me);
        status = PMIX_ERR_BAD_PARAM;
    }
    srv = status == PMIX_SUCCESS ? rdp_malloc(nuniverse * sizeof(*srv)) : NULL;
    if (status == PMIX_SUCCESS && srv == NULL) {
        status = PMIX_ERR_NOMEM;
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(in);
        return status;
    }
    for (uint32_t s = 0; s < nuniverse; s++) {
        if (in[s]) {
            srv[n++] = s;
        }
    }
    rdp_free(in);
    *srv_p = srv;
    *n_p   = n;
    return PMIX_SUCCESS;
}

/* The engine's identity of @a x from the operation's key. */
static void identify(xchg_t *x, const uint8_t *key, size_t keylen)
{
    size_t setlen = keylen;

    x->seq = 0;
    if (keylen >= sizeof(x->seq)) {
        setlen = keylen - sizeof(x->seq);
        memcpy(&x->seq, key + setlen, sizeof(x->seq));
    }
    x->setkey = mix(fnv1a(1469598103934665603ULL, key, setlen));
    x->opid   = mix(x->setkey ^ mix(x->seq));
}

pmix_status_t rdp_srv_xchg_start(const rdp_srv_xchg_args_t *args,
                                 rdp_srv_xchg_done_fn done, void *arg,
                                 uint64_t *handle_p)
{
    rdp_coll_args_t cargs;
    uint32_t *servers = NULL, nservers = 0;
    xchg_t *x;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!xs.open) {
        rdp_free(args->own_buf);
        return PMIX_ERR_INIT;
    }
    if (done == NULL || args->key == NULL || args->keylen == 0
        || (args->collect && args->own_buf == NULL && args->len > 0)) {
        rdp_free(args->own_buf);
        return PMIX_ERR_BAD_PARAM;
    }
    status = servers_of(args->procs, args->nprocs, true, &servers, &nservers);
    if (status != PMIX_SUCCESS) {
        rdp_free(args->own_buf);
        return status;
    }
    x = rdp_calloc(1, sizeof(*x));
    if (x == NULL) {
        rdp_free(servers);
        rdp_free(args->own_buf);
        return PMIX_ERR_NOMEM;
    }
    x->handle   = rdp_srv_next_id();
    x->nservers = nservers;
    x->done     = done;
    x->arg      = arg;
    identify(x, args->key, args->keylen);
    memset(&cargs, 0, sizeof(cargs));
    cargs.kind    = args->collect ? RDP_COLL_ALLGATHER : RDP_COLL_BARRIER;
    cargs.opid    = x->opid;
    cargs.parts   = servers;
    cargs.nparts  = nservers;
    cargs.own_buf = args->own_buf; /* rdp_coll_start takes it over */
    cargs.len     = args->collect ? args->len : 0;
    cargs.timeout = args->timeout;
    cargs.open_payload = rdp_srv_payload_open(args->procs, args->nprocs);
    cargs.own_unneeded = args->own_unneeded;
    if (args->collect) {
        cargs.size_class = sizes_recall(x);
    }
    x->kind = cargs.kind;
    x->sig  = rdp_coll_signature(servers, nservers);
    rdp_list_push_back(&xs.running, &x->link);
    status = rdp_coll_start(rdp_srv_engine_coll(), &cargs, xchg_done, x);
    rdp_free(servers);
    if (status != PMIX_SUCCESS) {
        rdp_list_del(&x->link);
        rdp_free(x);
        rdp_log_error(SERVER, "cannot start an exchange: %s",
                      rdp_status_name(status));
        return status;
    }
    rdp_log_debug(SERVER,
                  "exchange %" PRIu64
                  ": engine %s over %u servers (seq %" PRIu64
                  ", %zu bytes here)",
                  x->handle, args->collect ? "allgather" : "barrier", nservers,
                  x->seq, args->collect ? args->len : (size_t)0);
    *handle_p = x->handle;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_xchg_servers(const pmix_proc_t *procs, size_t nprocs,
                                   uint32_t **srv_p, uint32_t *n_p)
{
    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!xs.open) {
        return PMIX_ERR_INIT;
    }
    return servers_of(procs, nprocs, false, srv_p, n_p);
}

bool rdp_srv_xchg_cancel(uint64_t handle, pmix_status_t status)
{
    xchg_t *x;

    if (!xs.open) {
        return false;
    }
    rdp_list_for_each(x, &xs.running, link) {
        if (x->handle == handle) {
            return rdp_coll_cancel(rdp_srv_engine_coll(), x->kind, x->sig,
                                   x->opid, status)
                   == PMIX_SUCCESS;
        }
    }
    return false;
}

/* ---- lifetime ---- */

pmix_status_t rdp_srv_xchg_open(void)
{
    pmix_status_t status = rdp_hash_init(&xs.sizes, 0);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    rdp_list_init(&xs.running);
    xs.open = true;
    return PMIX_SUCCESS;
}

void rdp_srv_xchg_close(void)
{
    rdp_list_t *item;
    rdp_hash_entry_t *ent;
    size_t i;

    if (!xs.open) {
        return;
    }
    /* the engine is destroyed: abandoned collectives never call back */
    while ((item = rdp_list_pop_front(&xs.running)) != NULL) {
        rdp_free(rdp_container_of(item, xchg_t, link));
    }
    rdp_hash_for_each(ent, &xs.sizes, i) {
        rdp_free(ent->value);
    }
    rdp_hash_cleanup(&xs.sizes);
    memset(&xs, 0, sizeof(xs));
}
