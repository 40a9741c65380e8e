/* init.c - PMIx_Init/Finalize/Initialized/Abort/Get_version for clients */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/directive.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * PMIx_Init is reference counted: the first call connects (or becomes a
 * singleton), later ones only count and may declare a programming model.
 *
 * Singleton: with neither PMIX_NAMESPACE nor a server rendezvous
 * (RDPMIX_SERVER_PATH, PMIX_SERVER_URI*) in the environment, Init succeeds
 * without a server: nspace "singleton.<host>.<pid>", rank 0, a synthesized
 * job of size 1 on one node, fences of just this process complete locally,
 * and everything that needs a server fails with PMIX_ERR_UNREACH.
 */

/* How long the handshake may take before Init gives up. */
#define CONNECT_TIMEOUT_SECONDS 60.0
/* How long Finalize waits for the server's acknowledgement. */
#define FINALIZE_TIMEOUT_SECONDS 10.0
/* Tag of the CONNECT exchange (requests start at 2). */
#define CONNECT_TAG 1

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const uri_env_names[] = {
    "PMIX_SERVER_URI",   "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", NULL};

/* The socket path in an rdpmix URI ("rdpmix.<pid>;unix:<path>"); borrowed
 * from @a uri, NULL if it names none. */
static const char *uri_path(const char *uri)
{
    return rdp_uri_socket_path(uri);
}

/* Socket path from the environment setup_fork made; NULL if none. */
static char *server_path_from_env(void)
{
    const char *p = getenv(RDP_ENV_SERVER_PATH);

    if (p != NULL && p[0] != '\0') {
        return rdp_strdup(p);
    }
    for (size_t i = 0; uri_env_names[i] != NULL; i++) {
        const char *uri = getenv(uri_env_names[i]);

        if (uri == NULL) {
            continue;
        }
        p = uri_path(uri);
        if (p != NULL) {
            return rdp_strdup(p);
        }
        rdp_log_debug(CLIENT, "%s '%s' is not an rdpmix server address",
                      uri_env_names[i], uri);
    }
    return NULL;
}

/* The URI of the server at @a path as the environment names it; NULL when
 * only RDPMIX_SERVER_PATH names it. */
static const char *server_uri_from_env(const char *path)
{
    for (size_t i = 0; uri_env_names[i] != NULL; i++) {
        const char *uri = getenv(uri_env_names[i]);
        const char *p   = uri != NULL ? uri_path(uri) : NULL;

        if (p != NULL && strcmp(p, path) == 0) {
            return uri;
        }
    }
    return NULL;
}

static pmix_status_t my_hostname(char **host_p)
{
    const char *env = getenv("PMIX_HOSTNAME");
    char buf[256];

    if (env != NULL && env[0] != '\0') {
        *host_p = rdp_strdup(env);
    } else {
        if (gethostname(buf, sizeof(buf)) != 0) {
            rdp_log_warn(CLIENT, "gethostname failed: %m");
            snprintf(buf, sizeof(buf), "localhost");
        }
        buf[sizeof(buf) - 1] = '\0';
        *host_p              = rdp_strdup(buf);
    }
    return *host_p == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static pmix_status_t identity_from_env(pmix_proc_t *me)
{
    const char *ns   = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    char *end;
    unsigned long r;

    if (ns == NULL || ns[0] == '\0' || strlen(ns) > PMIX_MAX_NSLEN) {
        rdp_log_error(CLIENT, "PMIX_NAMESPACE missing or invalid");
        return PMIX_ERR_INIT;
    }
    if (rank == NULL) {
        rdp_log_error(CLIENT, "PMIX_RANK missing");
        return PMIX_ERR_INIT;
    }
    errno = 0;
    r     = strtoul(rank, &end, 10);
    if (errno != 0 || end == rank || *end != '\0' || r >= PMIX_RANK_VALID) {
        rdp_log_error(CLIENT, "PMIX_RANK '%s' is not a rank", rank);
        return PMIX_ERR_INIT;
    }
    memset(me, 0, sizeof(*me));
    PMIX_LOAD_NSPACE(me->nspace, ns);
    me->rank = (pmix_rank_t)r;
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* set-up on the loop thread                                        */

typedef struct init_ctx {
    rdp_ipc_conn_t *conn; /* NULL for a singleton */
    const char *hostname;
    const char *uri; /* the server's URI, NULL if unknown */
    rdp_rbuf_t rb;   /* CONNECT_ACK after the status: the job bundle */
    const pmix_info_t *info;
    size_t ninfo;
    rdp_wait_t *wait; /* the model's handlers: signalled when they are done */
    int board;        /* a client of a server: ask for the fence board */
} init_ctx_t;

static void client_teardown(void)
{
    rdp_client_board_close();
    rdp_client_store_cleanup(&rdp_client.store);
    rdp_client_group_cleanup();
    rdp_client_pending_destroy(rdp_client.uncommitted);
    rdp_client.uncommitted = NULL;
    rdp_hash_cleanup(&rdp_client.pending);
    memset(&rdp_client.pending, 0, sizeof(rdp_client.pending));
    rdp_client.conn       = NULL;
    rdp_client.finalizing = 0;
    rdp_client.close_wait = NULL;
}

static pmix_status_t setup_on_loop(void *arg)
{
    init_ctx_t *ctx = arg;
    pmix_status_t status;

    status = rdp_hash_init(&rdp_client.pending, 0);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    status = rdp_client_pending_create(&rdp_client.uncommitted);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    status = rdp_client_store_init(&rdp_client.store, rdp_rt.kvs,
                                   &rdp_rt.myproc, ctx->hostname);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    if (ctx->conn == NULL) {
        status = rdp_client_store_load_singleton(&rdp_client.store);
        if (status != PMIX_SUCCESS) {
            goto err;
        }
        return PMIX_SUCCESS;
    }
    status = rdp_client_store_bundle(&rdp_client.store, &ctx->rb);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    if (!rdp_client_store_knows(&rdp_client.store, rdp_rt.myproc.nspace)) {
        /* a job section may be empty, but we know our own job exists */
        status = rdp_client_store_add_nspace(&rdp_client.store,
                                             rdp_rt.myproc.nspace);
        if (status != PMIX_SUCCESS) {
            goto err;
        }
    }
    if (ctx->uri != NULL) {
        pmix_value_t val;

        /* PMIx_Get(self, PMIX_SERVER_URI), as OpenPMIx 4.2.2 answers it:
         * our own, never committed */
        val.type        = PMIX_STRING;
        val.data.string = (char *)ctx->uri;
        status =
            rdp_kvs_put(rdp_rt.kvs, rdp_rt.myproc.nspace, rdp_rt.myproc.rank,
                        PMIX_SERVER_URI, PMIX_INTERNAL, &val);
        if (status != PMIX_SUCCESS) {
            goto err;
        }
    }
    rdp_client.conn     = ctx->conn;
    rdp_client.next_tag = CONNECT_TAG + 1;
    rdp_ipc_conn_start(ctx->conn, rdp_client_conn_msg, rdp_client_conn_closed,
                       NULL);
    rdp_event_forward   = rdp_client_event_forward;
    rdp_event_chain_end = rdp_client_group_chain_end;
    if (ctx->board) {
        rdp_client_board_open();
    }
    return PMIX_SUCCESS;

err:
    client_teardown();
    return status;
}

static pmix_status_t conn_drop_on_loop(void *arg)
{
    /* never started: closing frees it without any callback */
    rdp_ipc_conn_close(arg, PMIX_ERR_INIT);
    return PMIX_SUCCESS;
}

static int is_model_key(const pmix_info_t *in)
{
    return PMIX_CHECK_KEY(in, PMIX_PROGRAMMING_MODEL)
           || PMIX_CHECK_KEY(in, PMIX_MODEL_LIBRARY_NAME)
           || PMIX_CHECK_KEY(in, PMIX_MODEL_LIBRARY_VERSION)
           || PMIX_CHECK_KEY(in, PMIX_THREADING_MODEL);
}

static void model_told(void *arg)
{
    rdp_wait_signal(arg, PMIX_SUCCESS);
}

/* Store a declared programming model for our proc and tell the local
 * handlers (PMIX_MODEL_DECLARED); with ctx->wait, signal it once they
 * have all completed (docs/design.md, "PMIX_MODEL_DECLARED"). */
static pmix_status_t model_on_loop(void *arg)
{
    init_ctx_t *ctx = arg;
    pmix_info_t *model;
    size_t n = 0;
    pmix_status_t status;

    /* one more for PMIX_EVENT_NON_DEFAULT: default handlers (Open MPI's
     * aborts on codes it does not know) are not told */
    model = rdp_calloc(ctx->ninfo + 1, sizeof(*model));
    if (model == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ctx->ninfo; i++) {
        if (!is_model_key(&ctx->info[i])) {
            continue;
        }
        status =
            rdp_kvs_put(rdp_rt.kvs, rdp_rt.myproc.nspace, rdp_rt.myproc.rank,
                        ctx->info[i].key, PMIX_INTERNAL, &ctx->info[i].value);
        if (status != PMIX_SUCCESS) {
            rdp_free(model);
            return status;
        }
        /* a shallow copy: rdp_event_deliver copies what it keeps */
        model[n++] = ctx->info[i];
    }
    status = PMIX_SUCCESS;
    if (n > 0) {
        rdp_log_debug(CLIENT, "programming model declared (%zu keys)", n);
        PMIX_LOAD_KEY(model[n].key, PMIX_EVENT_NON_DEFAULT);
        model[n].value.type      = PMIX_BOOL;
        model[n].value.data.flag = true;
        n++;
        if (ctx->wait != NULL) {
            status = rdp_event_deliver_then(PMIX_MODEL_DECLARED, &rdp_rt.myproc,
                                            PMIX_RANGE_PROC_LOCAL, model, n,
                                            model_told, ctx->wait);
        } else {
            status =
                rdp_event_deliver_or_cache(PMIX_MODEL_DECLARED, &rdp_rt.myproc,
                                           PMIX_RANGE_PROC_LOCAL, model, n);
        }
    } else if (ctx->wait != NULL) {
        model_told(ctx->wait);
    }
    rdp_free(model);
    return status;
}

static void model_call(void *arg, rdp_wait_t *wait)
{
    init_ctx_t *ctx = arg;
    pmix_status_t status;

    ctx->wait = wait;
    status    = model_on_loop(ctx);
    if (status != PMIX_SUCCESS) {
        rdp_wait_signal(wait, status);
    }
}

static int has_model_info(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (is_model_key(&info[i])) {
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* handshake                                                        */

static pmix_status_t pack_connect(rdp_buf_t *buf, const pmix_proc_t *me,
                                  const pmix_info_t *info, size_t ninfo,
                                  int with_info)
{
    pmix_status_t status;

    rdp_buf_init(buf);
    status = rdp_pack_string(buf, me->nspace);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, me->rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, (uint32_t)getpid());
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, getenv(RDP_ENV_CLIENT_TOKEN));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, with_info ? info : NULL,
                                     with_info ? ninfo : 0);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(buf);
    }
    return status;
}

static pmix_status_t connect_to_server(const char *path, const char *hostname,
                                       const pmix_info_t *info, size_t ninfo)
{
    rdp_ipc_conn_t *conn;
    rdp_buf_t buf;
    rdp_msg_hdr_t hdr;
    void *reply = NULL;
    init_ctx_t ctx;
    int32_t remote;
    pmix_status_t status;

    status = rdp_ipc_connect(rdp_rt.loop, path, &conn);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = pack_connect(&buf, &rdp_rt.myproc, info, ninfo, 1);
    if (status != PMIX_SUCCESS) {
        /* some init info cannot travel (pointers): the server can do
         * without it */
        rdp_log_debug(CLIENT, "init info not sent: %s",
                      rdp_status_name(status));
        status = pack_connect(&buf, &rdp_rt.myproc, NULL, 0, 0);
    }
    if (status != PMIX_SUCCESS) {
        goto err_conn;
    }
    status = rdp_ipc_sync_request(conn, RDP_CMD_CONNECT, CONNECT_TAG, &buf,
                                  &hdr, &reply, CONNECT_TIMEOUT_SECONDS);
    rdp_buf_cleanup(&buf);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "handshake with server at %s failed: %s", path,
                      rdp_status_name(status));
        goto err_conn;
    }
    rdp_rbuf_init(&ctx.rb, reply, hdr.length);
    if (hdr.cmd != RDP_CMD_CONNECT_ACK || hdr.tag != CONNECT_TAG
        || rdp_unpack_i32(&ctx.rb, &remote) != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed handshake reply from server");
        status = PMIX_ERR_HANDSHAKE_FAILED;
        goto err_reply;
    }
    if (remote != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "server refused %s:%u: %s", rdp_rt.myproc.nspace,
                      rdp_rt.myproc.rank, rdp_status_name(remote));
        status = remote;
        goto err_reply;
    }
    ctx.conn     = conn;
    ctx.board    = 1;
    ctx.hostname = hostname;
    ctx.uri      = server_uri_from_env(path);
    ctx.info     = info;
    ctx.ninfo    = ninfo;
    status       = rdp_runtime_call_sync(setup_on_loop, &ctx);
    rdp_free(reply);
    if (status != PMIX_SUCCESS) {
        goto err_conn;
    }
    rdp_client_board_prepare();
    return PMIX_SUCCESS;

err_reply:
    rdp_free(reply);
err_conn:
    rdp_runtime_call_sync(conn_drop_on_loop, conn);
    return status;
}

/* Tools (attach.c) connect with their own handshake, then share the
 * rest: the connected client state and its teardown. */
pmix_status_t rdp_client_adopt(rdp_ipc_conn_t *conn, const char *hostname,
                               const char *uri, const rdp_rbuf_t *bundle)
{
    init_ctx_t ctx = {0};

    ctx.conn     = conn;
    ctx.hostname = hostname;
    ctx.uri      = uri;
    ctx.rb       = *bundle;
    return rdp_runtime_call_sync(setup_on_loop, &ctx);
}

void rdp_client_conn_drop(rdp_ipc_conn_t *conn)
{
    rdp_runtime_call_sync(conn_drop_on_loop, conn);
}

pmix_status_t rdp_client_hostname(char **host_p)
{
    return my_hostname(host_p);
}

/* ---------------------------------------------------------------- */
/* Init / Finalize                                                  */

static pmix_status_t first_init(const pmix_info_t *info, size_t ninfo)
{
    char *path = NULL, *hostname = NULL;
    pmix_status_t status;
    init_ctx_t ctx = {0};

    status = my_hostname(&hostname);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    path = server_path_from_env();
    if (path == NULL && getenv("PMIX_NAMESPACE") == NULL) {
        /* singleton */
        memset(&rdp_rt.myproc, 0, sizeof(rdp_rt.myproc));
        snprintf(rdp_rt.myproc.nspace, sizeof(rdp_rt.myproc.nspace),
                 "singleton.%s.%d", hostname, (int)getpid());
        rdp_rt.myproc.rank = 0;
        ctx.hostname       = hostname;
        status             = rdp_runtime_call_sync(setup_on_loop, &ctx);
        if (status == PMIX_SUCCESS) {
            rdp_client.mode = RDP_CLIENT_SINGLETON;
            rdp_log_debug(CLIENT,
                          "no server in the environment: running "
                          "as singleton %s",
                          rdp_rt.myproc.nspace);
        }
        goto out;
    }
    if (path == NULL) {
        rdp_log_error(CLIENT,
                      "PMIX_NAMESPACE is set but no rdpmix server "
                      "address (%s or PMIX_SERVER_URI) is",
                      RDP_ENV_SERVER_PATH);
        status = PMIX_ERR_UNREACH;
        goto out;
    }
    status = identity_from_env(&rdp_rt.myproc);
    if (status != PMIX_SUCCESS) {
        goto out;
    }
    status = connect_to_server(path, hostname, info, ninfo);
    if (status == PMIX_SUCCESS) {
        rdp_client.mode = RDP_CLIENT_CONNECTED;
        rdp_log_debug(CLIENT, "connected to server at %s as %s:%u", path,
                      rdp_rt.myproc.nspace, rdp_rt.myproc.rank);
    }

out:
    rdp_free(path);
    rdp_free(hostname);
    return status;
}

/* ---------------------------------------------------------------- */
/* client-side functions in a server process                        */

/* The last rdp_runtime_release, after the loop thread stopped. */
static void embedded_cleanup(void)
{
    client_teardown();
    __atomic_store_n(&rdp_client.mode, RDP_CLIENT_OFF, __ATOMIC_RELEASE);
}

static pmix_status_t embed_on_loop(void *arg)
{
    pmix_status_t status;

    status = rdp_hash_init(&rdp_client.pending, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_client_pending_create(&rdp_client.uncommitted);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_client_store_init(&rdp_client.store, rdp_rt.kvs,
                                       &rdp_rt.myproc, arg);
    }
    if (status != PMIX_SUCCESS) {
        client_teardown();
        return status;
    }
    rdp_runtime_embedded_cleanup = embedded_cleanup;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_client_embed(void)
{
    enum rdp_role role;
    char *hostname = NULL;
    int up;
    pmix_status_t status;

    if (__atomic_load_n(&rdp_client.mode, __ATOMIC_ACQUIRE)
        == RDP_CLIENT_IN_SERVER) {
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&init_lock);
    if (rdp_client.mode == RDP_CLIENT_IN_SERVER) {
        status = PMIX_SUCCESS;
        goto out;
    }
    pthread_mutex_lock(&rdp_rt.lock);
    role = rdp_rt.role;
    up   = rdp_rt.refcount > 0;
    pthread_mutex_unlock(&rdp_rt.lock);
    if (!up || rdp_client.refs > 0
        || (role != RDP_ROLE_SERVER && role != RDP_ROLE_TOOL)) {
        status = PMIX_ERR_INIT;
        goto out;
    }
    status = my_hostname(&hostname);
    if (status == PMIX_SUCCESS) {
        status = rdp_runtime_call_sync(embed_on_loop, hostname);
    }
    rdp_free(hostname);
    if (status == PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "client-side calls enabled in %s:%u",
                      rdp_rt.myproc.nspace, rdp_rt.myproc.rank);
        __atomic_store_n(&rdp_client.mode, RDP_CLIENT_IN_SERVER,
                         __ATOMIC_RELEASE);
    }
out:
    pthread_mutex_unlock(&init_lock);
    return status;
}

/*
 * Record the programming model @a info declares and return once the local
 * PMIX_MODEL_DECLARED handlers are done: Open MPI 4.1 hands the event to
 * its progress thread, and a handler still queued there when MPI_Finalize
 * unloads its PMIx component crashes the rank (docs/design.md).
 */
static void declare_model(const pmix_info_t *info, size_t ninfo)
{
    init_ctx_t ctx = {.info = info, .ninfo = ninfo};
    pmix_status_t status;

    status = rdp_runtime_call(model_call, &ctx);
    if (status == PMIX_ERR_WOULD_BLOCK) {
        /* PMIx_Init on the loop thread (from a handler) cannot wait */
        ctx.wait = NULL;
        status   = rdp_runtime_call_sync(model_on_loop, &ctx);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(CLIENT, "cannot record programming model: %s",
                     rdp_status_name(status));
    }
}

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&init_lock);
    status = rdp_runtime_acquire(RDP_ROLE_CLIENT);
    if (status != PMIX_SUCCESS) {
        goto out;
    }
    if (rdp_client.refs == 0) {
        status = first_init(info, ninfo);
        if (status != PMIX_SUCCESS) {
            rdp_runtime_release();
            goto out;
        }
    }
    __atomic_add_fetch(&rdp_client.refs, 1, __ATOMIC_RELEASE);
    if (proc != NULL) {
        *proc = rdp_rt.myproc;
    }
    pthread_mutex_unlock(&init_lock);
    if (has_model_info(info, ninfo)) {
        /* after the lock: a handler may itself call PMIx_Init */
        declare_model(info, ninfo);
    }
    return PMIX_SUCCESS;

out:
    pthread_mutex_unlock(&init_lock);
    return status;
}

int PMIx_Initialized(void)
{
    return rdp_runtime_active();
}

void rdp_client_finalize_finish(void)
{
    rdp_wait_t *w = rdp_client.close_wait;

    if (w == NULL) {
        return;
    }
    client_teardown();
    rdp_wait_signal(w, PMIX_SUCCESS);
}

static void finalize_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "finalize not acknowledged: %s",
                      rdp_status_name(status));
    }
    if (rdp_client.conn != NULL) {
        /* rdp_client_conn_closed finishes */
        rdp_ipc_conn_close(rdp_client.conn, PMIX_SUCCESS);
        return;
    }
    rdp_client_finalize_finish();
}

void rdp_client_finalize_on_loop(void *arg, rdp_wait_t *wait)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_event_forward     = NULL;
    rdp_event_chain_end   = NULL;
    rdp_client.close_wait = wait;
    rdp_client.finalizing = 1;
    if (rdp_client.conn == NULL) {
        rdp_client_finalize_finish();
        return;
    }
    rdp_buf_init(&buf);
    status = rdp_client_request(RDP_CMD_FINALIZE, &buf,
                                FINALIZE_TIMEOUT_SECONDS, finalize_reply, NULL);
    if (status != PMIX_SUCCESS) {
        finalize_reply(status, NULL, NULL);
    }
}

static int wants_barrier(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EMBED_BARRIER)) {
            return PMIX_INFO_TRUE(&info[i]);
        }
    }
    return 0;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = rdp_client_may_block();
    if (status != PMIX_SUCCESS) {
        return status;
    }
    pthread_mutex_lock(&init_lock);
    if (rdp_client.refs == 0) {
        pthread_mutex_unlock(&init_lock);
        return PMIX_ERR_INIT;
    }
    if (rdp_client.refs == 1 && wants_barrier(info, ninfo)) {
        status = PMIx_Fence(NULL, 0, NULL, 0);
        if (status != PMIX_SUCCESS) {
            rdp_log_warn(CLIENT, "barrier before finalize failed: %s",
                         rdp_status_name(status));
        }
    }
    if (__atomic_sub_fetch(&rdp_client.refs, 1, __ATOMIC_ACQ_REL) == 0) {
        status = rdp_runtime_call(rdp_client_finalize_on_loop, NULL);
        if (status != PMIX_SUCCESS) {
            rdp_log_warn(CLIENT, "finalize: %s", rdp_status_name(status));
        }
        rdp_client.mode = RDP_CLIENT_OFF;
    }
    rdp_runtime_release();
    pthread_mutex_unlock(&init_lock);
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* Abort, version                                                   */

static void abort_finish(rdp_client_op_t *op, pmix_status_t status,
                         rdp_rbuf_t *rb)
{
    rdp_client_sync_op_cb(status, op->cbdata);
}

pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                         size_t nprocs)
{
    rdp_client_op_t *op;
    rdp_client_sync_t sync;
    pmix_proc_t all;
    pmix_status_t rc;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (procs == NULL && nprocs > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    rc = rdp_client_may_block();
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    rdp_wait_init(&sync.wait);
    op = rdp_client_op_create(RDP_CMD_ABORT, abort_finish, NULL, &sync);
    if (op == NULL) {
        rc = PMIX_ERR_NOMEM;
        goto out;
    }
    if (procs == NULL || nprocs == 0) {
        /* the caller's whole nspace */
        all      = rdp_rt.myproc;
        all.rank = PMIX_RANK_WILDCARD;
        procs    = &all;
        nprocs   = 1;
    }
    rc = rdp_pack_i32(&op->payload, status);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_string(&op->payload, msg);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc_array(&op->payload, procs, nprocs);
    }
    if (rc != PMIX_SUCCESS) {
        rdp_client_op_free(op);
        goto out;
    }
    rc = rdp_client_op_post(op);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_wait_wait(&sync.wait);
    }
out:
    rdp_wait_cleanup(&sync.wait);
    return rc;
}

const char *PMIx_Get_version(void)
{
    return "rdpmix " PACKAGE_VERSION " (PMIx Standard v4, OpenPMIx 4.2.2 ABI)";
}
