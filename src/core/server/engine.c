/* engine.c - engine mode: the servers' collective engine (rdpmix.h) */
#include "config.h"
#include "core/server/p2p.h"
#include "core/server/server_int.h"
#include "coll/coll.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
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
 * This file owns the engine's lifetime (init, connect, finalize) and opens
 * the modules that run over it: xchg.c (allgather-shaped operations such
 * as fences), p2p.c (messages by channel) and the channels' users,
 * dmodex.c (direct modex) and depart.c (departures).
 *
 * Everything here belongs to the loop thread.
 */

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
} engine_state_t;

static engine_state_t eng = {.index_hint = UINT32_MAX};

bool rdp_srv_engine_server_of(rdp_srv_nspace_t *ns, pmix_rank_t rank,
                              uint32_t *srv_p)
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

rdp_coll_engine_t *rdp_srv_engine_coll(void)
{
    return eng.connected ? eng.coll : NULL;
}

uint32_t rdp_srv_engine_me(void)
{
    return eng.connected ? eng.me : UINT32_MAX;
}

uint32_t rdp_srv_engine_size(void)
{
    return eng.connected ? eng.n : 0;
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
    /* the channels first: nothing is handled while the engine goes */
    rdp_srv_p2p_close();
    rdp_srv_dmodex_close();
    (void)rdp_srv_p2p_register(RDP_SRV_CH_WARMUP, NULL);
    if (eng.coll != NULL) {
        rdp_coll_engine_destroy(eng.coll);
    }
    if (eng.tl != NULL) {
        eng.ucx->destroy(eng.tl);
    }
    /* abandoned collectives never call back */
    rdp_srv_xchg_close();
    memset(&eng, 0, sizeof(eng));
    eng.index_hint = UINT32_MAX;
}

/* ---- warm-up ----
 *
 * The first large message a UCX worker sends grows UCP's pool of
 * registered buffers (128 segments of UCX_SEG_SIZE, placed in a transparent
 * huge page where the kernel allows: ~0.35 ms to zero it, milliseconds when
 * the kernel compacts memory for it) and reads system files; before, that
 * happened inside the first collecting fence's exchange, on its critical
 * path (bench/RESULTS.md, "the exchange's first-message costs").  So each
 * server sends the next one, right after connecting, one message of
 * RDPMIX_ENGINE_WARMUP bytes on its own channel, which the receiver drops:
 * every server's worker then has sent and received a large message before
 * its first fence.  It also creates that endpoint before the first
 * collective needs it. */

static void warmup_recv(uint32_t server, rdp_rbuf_t *rb)
{
    rdp_log_debug(SERVER, "engine warm-up: %zu bytes from server %u dropped",
                  rb->left, server);
}

static const rdp_srv_p2p_handler_t warmup_handler = {.recv = warmup_recv};

static void warmup_send(uint32_t me, uint32_t n)
{
    uint64_t bytes = 0;
    rdp_buf_t buf;
    pmix_status_t status;

    /* a bad value is logged and the default taken */
    (void)rdp_cfg_uint(RDP_CFG_ENGINE_WARMUP, &bytes);
    if (n < 2 || bytes == 0) {
        return;
    }
    rdp_buf_init(&buf);
    status = rdp_buf_reserve(&buf, (size_t)bytes);
    if (status == PMIX_SUCCESS) {
        memset(buf.data, 0, (size_t)bytes);
        buf.size = (size_t)bytes;
        status   = rdp_srv_p2p_send((me + 1) % n, RDP_SRV_CH_WARMUP, &buf);
    }
    rdp_buf_cleanup(&buf);
    /* only an optimisation: a failure costs the first fence that time */
    rdp_log_debug(SERVER, "engine warm-up: %" PRIu64 " bytes to server %u: %s",
                  bytes, (me + 1) % n, rdp_status_name(status));
}

/* Create the engine over the transport of eng.tl_ops/tl_ctx, then open
 * the modules that run over it. */
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
    eng.me        = me;
    eng.n         = n;
    status        = rdp_coll_engine_create(&cfg, &eng.coll);
    if (status != PMIX_SUCCESS) {
        eng.coll = NULL;
        return status;
    }
    /* the accessors (rdp_srv_engine_me ...) answer from here on */
    eng.connected = true;
    status        = rdp_srv_xchg_open();
    if (status == PMIX_SUCCESS) {
        (void)rdp_srv_p2p_register(RDP_SRV_CH_WARMUP, &warmup_handler);
        status = rdp_srv_p2p_open(eng.coll, me, n);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_dmodex_open();
    }
    if (status != PMIX_SUCCESS) {
        rdp_srv_dmodex_close();
        rdp_srv_p2p_close();
        rdp_srv_xchg_close();
        rdp_coll_engine_destroy(eng.coll);
        eng.coll      = NULL;
        eng.connected = false;
        return status;
    }
    rdp_srv_depart_open();
    warmup_send(me, n);
    return PMIX_SUCCESS;
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
