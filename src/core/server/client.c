/* client.c - register/deregister clients, per-client token, setup_fork */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/group.h"
#include "pnet/pnet.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix_version.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* ---- the fork view ----
 * Hosts may call PMIx_server_setup_fork in the forked child, between fork
 * and exec (Slurm's slurmstepd does), where only the forking thread exists
 * and our loop thread is gone.  So what setup_fork needs - the server's
 * identity and each registered client's token - is also kept here, under
 * a plain mutex that a pthread_atfork handler holds across fork, so that
 * the child always finds it consistent and unlocked.  The loop thread
 * writes it; setup_fork only reads it. */
static struct {
    pthread_mutex_t lock;
    bool open;
    char *uri, *socket_path, *tmpdir, *system_tmpdir, *hostname;
    rdp_hash_t tokens; /* rank key -> char[33] (malloc'ed) */
} fork_view                          = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t fork_view_once = PTHREAD_ONCE_INIT;

static void fork_view_prepare(void)
{
    pthread_mutex_lock(&fork_view.lock);
}

static void fork_view_after(void)
{
    pthread_mutex_unlock(&fork_view.lock);
}

static void fork_view_register_atfork(void)
{
    if (pthread_atfork(fork_view_prepare, fork_view_after, fork_view_after)
        != 0) {
        rdp_log_warn(SERVER, "cannot register a fork handler: setup_fork "
                             "in a forked child may block");
    }
}

static void fork_view_clear(void)
{
    rdp_hash_entry_t *e;
    size_t i;

    rdp_hash_for_each(e, &fork_view.tokens, i) {
        explicit_bzero(e->value, 33);
        rdp_free(e->value);
    }
    rdp_hash_cleanup(&fork_view.tokens);
    rdp_free(fork_view.uri);
    rdp_free(fork_view.socket_path);
    rdp_free(fork_view.tmpdir);
    rdp_free(fork_view.system_tmpdir);
    rdp_free(fork_view.hostname);
    fork_view.uri           = NULL;
    fork_view.socket_path   = NULL;
    fork_view.tmpdir        = NULL;
    fork_view.system_tmpdir = NULL;
    fork_view.hostname      = NULL;
    fork_view.open          = false;
}

pmix_status_t rdp_srv_fork_view_open(void)
{
    pmix_status_t status = PMIX_ERR_NOMEM;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    pthread_once(&fork_view_once, fork_view_register_atfork);
    pthread_mutex_lock(&fork_view.lock);
    fork_view.uri           = rdp_strdup(rdp_srv.uri);
    fork_view.socket_path   = rdp_strdup(rdp_srv.socket_path);
    fork_view.tmpdir        = rdp_strdup(rdp_srv.tmpdir);
    fork_view.system_tmpdir = rdp_strdup(rdp_srv.system_tmpdir);
    fork_view.hostname      = rdp_strdup(rdp_srv.hostname);
    if (fork_view.uri != NULL && fork_view.socket_path != NULL
        && fork_view.tmpdir != NULL && fork_view.system_tmpdir != NULL
        && fork_view.hostname != NULL) {
        status = rdp_hash_init(&fork_view.tokens, 0);
    }
    if (status == PMIX_SUCCESS) {
        fork_view.open = true;
    } else {
        fork_view_clear();
    }
    pthread_mutex_unlock(&fork_view.lock);
    return status;
}

static bool fork_view_is_open(void)
{
    bool open;

    pthread_mutex_lock(&fork_view.lock);
    open = fork_view.open;
    pthread_mutex_unlock(&fork_view.lock);
    return open;
}

void rdp_srv_fork_view_close(void)
{
    pthread_mutex_lock(&fork_view.lock);
    fork_view_clear();
    pthread_mutex_unlock(&fork_view.lock);
}

/* Publish (token != NULL) or withdraw a client's token. */
static pmix_status_t fork_view_set_token(const pmix_proc_t *proc,
                                         const char *token)
{
    char key[RDP_SRV_RANK_KEY_MAX];
    size_t keylen = rdp_srv_rank_key(proc->nspace, proc->rank, key);
    char *copy = NULL, *old = NULL;
    pmix_status_t status = PMIX_SUCCESS;

    if (token != NULL) {
        copy = rdp_malloc(33);
        if (copy == NULL) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, token, 33);
    }
    pthread_mutex_lock(&fork_view.lock);
    if (!fork_view.open) {
        status = PMIX_ERR_INIT;
    } else if (copy != NULL) {
        status =
            rdp_hash_set(&fork_view.tokens, key, keylen, copy, (void **)&old);
    } else {
        old = rdp_hash_remove(&fork_view.tokens, key, keylen);
    }
    pthread_mutex_unlock(&fork_view.lock);
    if (status != PMIX_SUCCESS && copy != NULL) {
        explicit_bzero(copy, 33);
        rdp_free(copy);
    }
    if (old != NULL) {
        explicit_bzero(old, 33);
        rdp_free(old);
    }
    return status;
}

rdp_srv_client_t *rdp_srv_client_find(const char *nspace, pmix_rank_t rank)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);

    if (ns == NULL) {
        return NULL;
    }
    return rdp_hash_get_u64(&ns->clients, rank);
}

void rdp_srv_client_destroy(rdp_srv_client_t *client)
{
    if (client == NULL) {
        return;
    }
    if (client->peer != NULL) {
        client->peer->client = NULL;
        rdp_srv_peer_drop(client->peer, PMIX_ERR_NOT_FOUND);
        client->peer = NULL;
    }
    rdp_hash_cleanup(&client->coll_seq);
    if (client->token[0] != '\0') {
        fork_view_set_token(&client->proc, NULL);
    }
    explicit_bzero(client->token, sizeof(client->token));
    rdp_free(client);
}

/* 128 random bits as 32 hex digits. */
static pmix_status_t make_token(char out[33])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t raw[16];
    size_t got = 0;

    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rdp_log_error(SERVER, "getrandom failed: %m");
            return PMIX_ERR_NOT_AVAILABLE;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i]     = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 0xf];
    }
    out[32] = '\0';
    explicit_bzero(raw, sizeof(raw));
    return PMIX_SUCCESS;
}

/* Keep the local set consistent with what the host actually launches
 * here: a registered client is local even if the map said otherwise. */
static pmix_status_t note_local(rdp_srv_nspace_t *ns, pmix_rank_t rank)
{
    pmix_rank_t *p;
    size_t pos = 0;

    if (!ns->registered || rdp_srv_nspace_is_local(ns, rank)) {
        return PMIX_SUCCESS;
    }
    rdp_log_debug(SERVER,
                  "%s:%u registered as a local client but not mapped "
                  "to %s",
                  ns->name, rank, rdp_srv.hostname);
    p = rdp_realloc(ns->local_ranks, (ns->nlocal + 1) * sizeof(*p));
    if (p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    ns->local_ranks = p;
    while (pos < ns->nlocal && p[pos] < rank) {
        pos++;
    }
    memmove(&p[pos + 1], &p[pos], (ns->nlocal - pos) * sizeof(*p));
    p[pos] = rank;
    ns->nlocal++;
    return PMIX_SUCCESS;
}

typedef struct client_req {
    pmix_proc_t proc;
    uid_t uid;
    gid_t gid;
    void *server_object;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} client_req_t;

static void register_client_on_loop(void *arg)
{
    client_req_t *req = arg;
    rdp_srv_nspace_t *ns;
    rdp_srv_client_t *client;
    pmix_status_t status;
    bool created = false;

    if (!rdp_srv.active) {
        status = PMIX_ERR_INIT;
        goto done;
    }
    status = rdp_srv_nspace_get(req->proc.nspace, &ns);
    if (status != PMIX_SUCCESS) {
        goto done;
    }
    client = rdp_hash_get_u64(&ns->clients, req->proc.rank);
    if (client != NULL && client->peer != NULL) {
        rdp_log_error(SERVER, "client %s:%u is registered and connected",
                      req->proc.nspace, req->proc.rank);
        status = PMIX_ERR_EXISTS;
        goto done;
    }
    if (client == NULL) {
        client = rdp_calloc(1, sizeof(*client));
        if (client == NULL) {
            status = PMIX_ERR_NOMEM;
            goto done;
        }
        status = rdp_hash_init(&client->coll_seq, 0);
        if (status != PMIX_SUCCESS) {
            rdp_free(client);
            goto done;
        }
        created = true;
    }
    status = make_token(client->token);
    if (status == PMIX_SUCCESS) {
        status = fork_view_set_token(&req->proc, client->token);
    }
    if (status == PMIX_SUCCESS) {
        status = note_local(ns, req->proc.rank);
    }
    if (status == PMIX_SUCCESS && created) {
        status = rdp_hash_set_u64(&ns->clients, req->proc.rank, client, NULL);
    }
    if (status != PMIX_SUCCESS) {
        if (created) {
            rdp_srv_client_destroy(client);
        }
        goto done;
    }
    client->proc          = req->proc;
    client->ns            = ns;
    client->uid           = req->uid;
    client->gid           = req->gid;
    client->server_object = req->server_object;
    client->state         = RDP_SRV_CLIENT_REGISTERED;
    rdp_log_debug(SERVER, "client %s:%u registered (uid %u gid %u)",
                  req->proc.nspace, req->proc.rank, (unsigned)req->uid,
                  (unsigned)req->gid);
done:
    if (req->cbfunc != NULL) {
        req->cbfunc(status, req->cbdata);
    }
    rdp_free(req);
}

static bool proc_ok(const pmix_proc_t *proc)
{
    return proc != NULL && proc->nspace[0] != '\0'
           && strnlen(proc->nspace, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN
           && proc->rank < PMIX_RANK_VALID;
}

pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid,
                                          gid_t gid, void *server_object,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    client_req_t *req;
    pmix_status_t status;

    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    if (!proc_ok(proc)) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->proc          = *proc;
    req->uid           = uid;
    req->gid           = gid;
    req->server_object = server_object;
    req->cbfunc        = cbfunc;
    req->cbdata        = cbdata;
    status = rdp_loop_post(rdp_rt.loop, register_client_on_loop, req);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
    }
    return status;
}

static void deregister_client_on_loop(void *arg)
{
    client_req_t *req = arg;
    rdp_srv_client_t *client;

    client = rdp_srv.active
                 ? rdp_srv_client_find(req->proc.nspace, req->proc.rank)
                 : NULL;
    if (client != NULL) {
        rdp_srv_client_gone(client, PMIX_ERR_PROC_TERM_WO_SYNC);
        rdp_hash_remove_u64(&client->ns->clients, client->proc.rank);
        rdp_srv_client_destroy(client);
        rdp_log_debug(SERVER, "client %s:%u deregistered", req->proc.nspace,
                      req->proc.rank);
    }
    if (req->cbfunc != NULL) {
        req->cbfunc(PMIX_SUCCESS, req->cbdata);
    }
    rdp_free(req);
}

void PMIx_server_deregister_client(const pmix_proc_t *proc,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    client_req_t *req = NULL;

    if (rdp_srv_initialized() && proc_ok(proc)) {
        req = rdp_calloc(1, sizeof(*req));
    }
    if (req == NULL) {
        /* void API: no loop to defer to, complete here (see nspace.c) */
        if (cbfunc != NULL) {
            cbfunc(proc_ok(proc) ? PMIX_ERR_INIT : PMIX_ERR_BAD_PARAM, cbdata);
        }
        return;
    }
    req->proc   = *proc;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    if (rdp_loop_post(rdp_rt.loop, deregister_client_on_loop, req)
        != PMIX_SUCCESS) {
        rdp_free(req);
        if (cbfunc != NULL) {
            cbfunc(PMIX_ERR_NOMEM, cbdata);
        }
    }
}

/* ---- setup_fork ---- */

typedef struct fork_info {
    pmix_proc_t proc;
    char token[33];
    char *uri;
    char *socket_path;
    char *tmpdir;
    char *system_tmpdir;
    char *hostname;
} fork_info_t;

/* Copy what setup_fork needs out of the fork view.  Any thread, and the
 * forked child (see "the fork view" above): no loop, no other lock. */
static pmix_status_t fork_info_read(fork_info_t *fi)
{
    char key[RDP_SRV_RANK_KEY_MAX];
    size_t keylen = rdp_srv_rank_key(fi->proc.nspace, fi->proc.rank, key);
    const char *token;
    pmix_status_t status = PMIX_SUCCESS;

    pthread_mutex_lock(&fork_view.lock);
    if (!fork_view.open) {
        status = PMIX_ERR_INIT;
        goto out;
    }
    token = rdp_hash_get(&fork_view.tokens, key, keylen);
    if (token != NULL) {
        memcpy(fi->token, token, sizeof(fi->token));
    }
    fi->uri           = rdp_strdup(fork_view.uri);
    fi->socket_path   = rdp_strdup(fork_view.socket_path);
    fi->tmpdir        = rdp_strdup(fork_view.tmpdir);
    fi->system_tmpdir = rdp_strdup(fork_view.system_tmpdir);
    fi->hostname      = rdp_strdup(fork_view.hostname);
    if (fi->uri == NULL || fi->socket_path == NULL || fi->tmpdir == NULL
        || fi->system_tmpdir == NULL || fi->hostname == NULL) {
        status = PMIX_ERR_NOMEM;
    }
out:
    pthread_mutex_unlock(&fork_view.lock);
    return status;
}

/* Remove NAME from an environment array (or the process environment). */
static void env_unset(const char *name, char ***env)
{
    size_t nlen = strlen(name);
    char **e    = *env;

    if (e == NULL) {
        return;
    }
    if (e == environ) {
        unsetenv(name);
        return;
    }
    for (size_t i = 0; e[i] != NULL;) {
        if (strncmp(e[i], name, nlen) == 0 && e[i][nlen] == '=') {
            free(e[i]);
            for (size_t j = i; e[j] != NULL; j++) {
                e[j] = e[j + 1];
            }
        } else {
            i++;
        }
    }
}

pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env)
{
    static const char *const uri_names[] = {
        "PMIX_SERVER_URI",  "PMIX_SERVER_URI2", "PMIX_SERVER_URI21",
        "PMIX_SERVER_URI3", "PMIX_SERVER_URI4", "PMIX_SERVER_URI41"};
    fork_info_t fi;
    char rank[16], id[PMIX_MAX_NSLEN + 16], version[32];
    pmix_status_t status;

    if (!fork_view_is_open()) {
        return PMIX_ERR_INIT;
    }
    if (!proc_ok(proc) || env == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    memset(&fi, 0, sizeof(fi));
    fi.proc = *proc;
    status  = fork_info_read(&fi);
    if (status != PMIX_SUCCESS) {
        goto out;
    }
    snprintf(rank, sizeof(rank), "%u", proc->rank);
    snprintf(id, sizeof(id), "%s.%u", proc->nspace, proc->rank);
    snprintf(version, sizeof(version), "%ld.%ld.%ld", PMIX_VERSION_MAJOR,
             PMIX_VERSION_MINOR, PMIX_VERSION_RELEASE);

    status = pmix_setenv("PMIX_NAMESPACE", proc->nspace, true, env);
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_RANK", rank, true, env);
    }
    for (size_t i = 0;
         status == PMIX_SUCCESS && i < sizeof(uri_names) / sizeof(uri_names[0]);
         i++) {
        status = pmix_setenv(uri_names[i], fi.uri, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_ID", id, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_SECURITY_MODE", "native", true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_GDS_MODULE", "hash", true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_BFROP_BUFFER_TYPE",
                             "PMIX_BFROP_BUFFER_NON_DESC", true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_VERSION", version, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_SERVER_TMPDIR", fi.tmpdir, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_SYSTEM_TMPDIR", fi.system_tmpdir, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv("PMIX_HOSTNAME", fi.hostname, true, env);
    }
    if (status == PMIX_SUCCESS) {
        status = pmix_setenv(RDP_ENV_SERVER_PATH, fi.socket_path, true, env);
    }
    if (status == PMIX_SUCCESS) {
        if (fi.token[0] != '\0') {
            status = pmix_setenv(RDP_ENV_CLIENT_TOKEN, fi.token, true, env);
        } else {
            /* never leave a stale token from another server */
            env_unset(RDP_ENV_CLIENT_TOKEN, env);
        }
    }
    if (status == PMIX_SUCCESS) {
        if (rdp_cfg_bool(RDP_CFG_FENCE_BOARD)) {
            status = pmix_setenv(RDP_ENV_FENCE_BOARD, "1", true, env);
        } else {
            env_unset(RDP_ENV_FENCE_BOARD, env);
        }
    }
    if (status == PMIX_SUCCESS) {
        /* the job's fabric credentials (setup_local_support) */
        status = rdp_pnet_setup_fork(proc->nspace, proc->rank, env);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "setup_fork for %s:%u failed: %s", proc->nspace,
                      proc->rank, rdp_status_name(status));
    }
out:
    explicit_bzero(fi.token, sizeof(fi.token));
    rdp_free(fi.uri);
    rdp_free(fi.socket_path);
    rdp_free(fi.tmpdir);
    rdp_free(fi.system_tmpdir);
    rdp_free(fi.hostname);
    return status;
}

/* The process left (disconnect without finalize, deregister): everyone
 * waiting for it is told. */
void rdp_srv_client_gone(rdp_srv_client_t *client, pmix_status_t why)
{
    rdp_srv_peer_t *peer = client->peer;

    if (peer != NULL) {
        peer->client = NULL;
        client->peer = NULL;
        rdp_srv_peer_drop(peer, why);
    }
    if (client->state != RDP_SRV_CLIENT_FINALIZED) {
        client->state = RDP_SRV_CLIENT_TERMINATED;
    }
    rdp_srv_coll_client_gone(client);
    rdp_srv_group_client_gone(client);
    rdp_srv_monitor_client_gone(&client->proc);
    /* whoever still waits wants a key it never committed */
    rdp_srv_modex_fail(client->proc.nspace, client->proc.rank,
                       PMIX_ERR_PROC_TERM_WO_SYNC);
}
