/* server.c - PMIx_server_init/finalize, rendezvous directory, helpers */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/group.h"
#include "core/util/alloc.h"
#include "core/util/attr_type.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

rdp_server_t rdp_srv;

/* PMIx_server_init/finalize pairs; guarded by init_lock (API threads) */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;

/* ---- small helpers ---- */

uint64_t rdp_srv_next_id(void)
{
    return ++rdp_srv.next_id;
}

typedef struct op_cb_post {
    pmix_op_cbfunc_t cbfunc;
    pmix_status_t status;
    void *cbdata;
} op_cb_post_t;

static void op_cb_on_loop(void *arg)
{
    op_cb_post_t *p = arg;

    p->cbfunc(p->status, p->cbdata);
    rdp_free(p);
}

void rdp_srv_post_op_cb(pmix_op_cbfunc_t cbfunc, pmix_status_t status,
                        void *cbdata)
{
    op_cb_post_t *p;

    if (cbfunc == NULL) {
        return;
    }
    p = rdp_calloc(1, sizeof(*p));
    if (p == NULL || rdp_rt.loop == NULL) {
        rdp_log_error(SERVER, "cannot queue a completion callback");
        rdp_free(p);
        return;
    }
    p->cbfunc = cbfunc;
    p->status = status;
    p->cbdata = cbdata;
    if (rdp_loop_post(rdp_rt.loop, op_cb_on_loop, p) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot queue a completion callback");
        rdp_free(p);
    }
}

bool rdp_srv_value_to_u64(const pmix_value_t *val, uint64_t *out_p)
{
    bool negative;
    uint64_t u;

    if (!rdp_value_integer(val, &negative, &u) || negative) {
        return false;
    }
    *out_p = u;
    return true;
}

size_t rdp_srv_rank_key(const char *nspace, pmix_rank_t rank, char *key)
{
    size_t len = strnlen(nspace, PMIX_MAX_NSLEN);

    memcpy(key, nspace, len);
    key[len] = '\0';
    memcpy(key + len + 1, &rank, sizeof(rank));
    return len + 1 + sizeof(rank);
}

size_t rdp_srv_want_key(const char *nspace, pmix_rank_t rank, const char *key,
                        char *out)
{
    size_t len  = rdp_srv_rank_key(nspace, rank, out);
    size_t klen = key != NULL ? strnlen(key, PMIX_MAX_KEYLEN) : 0;

    memcpy(out + len, key, klen);
    return len + klen;
}

bool rdp_srv_host_eq(const char *a, const char *b)
{
    const char *da, *db;
    size_t la, lb;

    if (a == NULL || b == NULL) {
        return false;
    }
    if (strcmp(a, b) == 0) {
        return true;
    }
    da = strchr(a, '.');
    db = strchr(b, '.');
    if (da != NULL && db != NULL) {
        return false; /* both fully qualified and different */
    }
    la = da == NULL ? strlen(a) : (size_t)(da - a);
    lb = db == NULL ? strlen(b) : (size_t)(db - b);
    return la == lb && la > 0 && memcmp(a, b, la) == 0;
}

void rdp_srv_host_reply_keep(rdp_srv_host_reply_t *hr, pmix_status_t status,
                             const void *data, size_t ndata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata)
{
    hr->status         = status;
    hr->data           = data;
    hr->ndata          = data == NULL ? 0 : ndata;
    hr->release_fn     = release_fn;
    hr->release_cbdata = release_cbdata;
}

void rdp_srv_host_reply_release(rdp_srv_host_reply_t *hr)
{
    pmix_release_cbfunc_t fn = hr->release_fn;

    hr->release_fn = NULL;
    hr->data       = NULL;
    hr->ndata      = 0;
    if (fn != NULL) {
        fn(hr->release_cbdata);
    }
}

/* ---- host operations answered to a peer ---- */

rdp_srv_hostop_t *rdp_srv_hostop_create(rdp_srv_peer_t *peer, uint16_t cmd,
                                        uint32_t tag)
{
    rdp_srv_hostop_t *op = rdp_calloc(1, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    op->peer_id   = peer == NULL ? 0 : peer->id;
    op->reply_cmd = cmd;
    op->tag       = tag;
    rdp_buf_init(&op->reply);
    return op;
}

void rdp_srv_hostop_free(rdp_srv_hostop_t *op)
{
    if (op == NULL) {
        return;
    }
    if (op->free_fn != NULL) {
        op->free_fn(op->ctx);
    }
    rdp_buf_cleanup(&op->reply);
    rdp_free(op);
}

/* Pack the host's info array after the status, then give it back. */
static void take_host_infos(rdp_srv_hostop_t *op)
{
    if (op->has_infos
        && (op->status == PMIX_SUCCESS
            || op->status == PMIX_QUERY_PARTIAL_SUCCESS)) {
        pmix_status_t st =
            rdp_pack_info_array(&op->reply, op->infos.data, op->infos.ndata);

        if (st != PMIX_SUCCESS) {
            op->status = st;
        }
    }
    rdp_srv_host_reply_release(&op->infos);
}

static void hostop_done_on_loop(void *arg)
{
    rdp_srv_hostop_t *op = arg;
    rdp_srv_peer_t *peer;

    if (!rdp_srv.active) {
        rdp_srv_host_reply_release(&op->infos);
        rdp_srv_hostop_free(op); /* the server finalized meanwhile */
        return;
    }
    take_host_infos(op);
    if (op->done_fn != NULL) {
        op->done_fn(op);
    }
    peer = rdp_srv_peer_find(op->peer_id);
    if (op->status == PMIX_SUCCESS && op->reply.size == 0) {
        pmix_status_t st = PMIX_SUCCESS;

        switch (op->empty_reply) {
        case RDP_SRV_EMPTY_INFOS:
            st = rdp_pack_info_array(&op->reply, NULL, 0);
            break;
        case RDP_SRV_EMPTY_PDATA:
            st = rdp_pack_pdata_array(&op->reply, NULL, 0);
            break;
        case RDP_SRV_EMPTY_STRING:
            st = rdp_pack_string(&op->reply, NULL);
            break;
        default:
            break;
        }
        if (st != PMIX_SUCCESS) {
            op->status = st;
        }
    }
    if (peer != NULL && op->reply_cmd != RDP_CMD_INVALID) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        if (rdp_pack_i32(&buf, op->status) != PMIX_SUCCESS
            || ((op->status == PMIX_SUCCESS
                 || op->status == PMIX_QUERY_PARTIAL_SUCCESS)
                && op->reply.size > 0
                && rdp_buf_append(&buf, op->reply.data, op->reply.size)
                       != PMIX_SUCCESS)) {
            rdp_log_error(SERVER, "cannot build a reply: out of memory");
            rdp_buf_cleanup(&buf);
            rdp_srv_peer_drop(peer, PMIX_ERR_NOMEM);
        } else {
            rdp_srv_reply_buf(peer, op->reply_cmd, op->tag, &buf);
            if (op->close_after) {
                rdp_srv_peer_drop(peer, PMIX_SUCCESS);
            }
        }
    }
    rdp_srv_hostop_free(op);
}

void rdp_srv_hostop_complete(rdp_srv_hostop_t *op, pmix_status_t status)
{
    rdp_loop_t *loop = rdp_rt.loop;

    op->status = status;
    if (loop == NULL
        || rdp_loop_post(loop, hostop_done_on_loop, op) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "host completion after server shutdown "
                              "dropped");
        rdp_srv_hostop_free(op);
    }
}

void rdp_srv_hostop_op_cb(pmix_status_t status, void *cbdata)
{
    rdp_srv_hostop_complete(cbdata, status);
}

/* Any thread, from inside the host's callback: never calls into the host
 * (rdp_srv_host_reply_t says why). */
void rdp_srv_hostop_info_cb(pmix_status_t status, pmix_info_t *info,
                            size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn,
                            void *release_cbdata)
{
    rdp_srv_hostop_t *op = cbdata;

    op->has_infos = true;
    rdp_srv_host_reply_keep(&op->infos, status, info, ninfo, release_fn,
                            release_cbdata);
    rdp_srv_hostop_complete(op, status);
}

void rdp_srv_hostop_started(rdp_srv_hostop_t *op, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        return; /* the host calls back */
    }
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    rdp_srv_hostop_complete(op, rc);
}

/* ---- init ---- */

typedef struct init_args {
    pmix_server_module_t *module;
    pmix_info_t *info;
    size_t ninfo;
} init_args_t;

static const char *env_tmpdir(void)
{
    const char *t = getenv("TMPDIR");

    if (t == NULL || t[0] != '/') {
        t = "/tmp";
    }
    return t;
}

/* Create (or adopt, if it is ours and safe) the rendezvous directory. */
static pmix_status_t make_rendezvous_dir(const char *dir)
{
    struct stat st;

    if (mkdir(dir, 0700) == 0) {
        return PMIX_SUCCESS;
    }
    if (errno != EEXIST) {
        rdp_log_error(SERVER, "cannot create rendezvous directory %s: %m", dir);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if (lstat(dir, &st) != 0) {
        rdp_log_error(SERVER, "cannot inspect %s: %m", dir);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        rdp_log_error(SERVER,
                      "rendezvous path %s exists and is not a "
                      "directory we own: refusing it",
                      dir);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) != 0) {
        rdp_log_error(SERVER, "cannot restrict %s to mode 0700: %m", dir);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    return PMIX_SUCCESS;
}

static char *dup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static char *dup_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

static void free_identity(void)
{
    rdp_free(rdp_srv.hostname);
    rdp_free(rdp_srv.tmpdir);
    rdp_free(rdp_srv.system_tmpdir);
    rdp_free(rdp_srv.rendezvous_dir);
    rdp_free(rdp_srv.socket_path);
    rdp_free(rdp_srv.uri);
    rdp_srv.hostname       = NULL;
    rdp_srv.tmpdir         = NULL;
    rdp_srv.system_tmpdir  = NULL;
    rdp_srv.rendezvous_dir = NULL;
    rdp_srv.socket_path    = NULL;
    rdp_srv.uri            = NULL;
}

static pmix_status_t read_init_info(const init_args_t *a, pmix_proc_t *me)
{
    const char *hostname = NULL, *tmpdir = NULL, *systmp = NULL;
    char hbuf[256];

    for (size_t i = 0; i < a->ninfo; i++) {
        const pmix_info_t *in = &a->info[i];
        uint64_t u;

        if (PMIX_CHECK_KEY(in, PMIX_SERVER_NSPACE)) {
            if (in->value.type != PMIX_STRING || in->value.data.string == NULL
                || strlen(in->value.data.string) > PMIX_MAX_NSLEN) {
                rdp_log_error(SERVER, "invalid %s at init", PMIX_SERVER_NSPACE);
                return PMIX_ERR_BAD_PARAM;
            }
            PMIX_LOAD_NSPACE(me->nspace, in->value.data.string);
        } else if (PMIX_CHECK_KEY(in, PMIX_SERVER_RANK)) {
            if (!rdp_srv_value_to_u64(&in->value, &u) || u > UINT32_MAX) {
                rdp_log_error(SERVER, "invalid %s at init", PMIX_SERVER_RANK);
                return PMIX_ERR_BAD_PARAM;
            }
            me->rank = (pmix_rank_t)u;
        } else if (PMIX_CHECK_KEY(in, PMIX_SERVER_TMPDIR)) {
            if (in->value.type == PMIX_STRING) {
                tmpdir = in->value.data.string;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_SYSTEM_TMPDIR)) {
            if (in->value.type == PMIX_STRING) {
                systmp = in->value.data.string;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_HOSTNAME)) {
            if (in->value.type == PMIX_STRING) {
                hostname = in->value.data.string;
            }
        }
    }
    if (hostname == NULL || hostname[0] == '\0') {
        if (gethostname(hbuf, sizeof(hbuf)) != 0) {
            rdp_log_error(SERVER, "gethostname failed: %m");
            return PMIX_ERR_NOT_AVAILABLE;
        }
        hbuf[sizeof(hbuf) - 1] = '\0';
        hostname               = hbuf;
    }
    if (tmpdir == NULL || tmpdir[0] != '/') {
        tmpdir = env_tmpdir();
    }
    if (systmp == NULL || systmp[0] != '/') {
        systmp = env_tmpdir();
    }
    rdp_srv.hostname      = rdp_strdup(hostname);
    rdp_srv.tmpdir        = rdp_strdup(tmpdir);
    rdp_srv.system_tmpdir = rdp_strdup(systmp);
    if (rdp_srv.hostname == NULL || rdp_srv.tmpdir == NULL
        || rdp_srv.system_tmpdir == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (me->nspace[0] == '\0') {
        snprintf(me->nspace, sizeof(me->nspace), "rdpmix-server.%s.%d",
                 rdp_srv.hostname, (int)getpid());
        me->rank = 0;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t init_tables(void)
{
    pmix_status_t status;

    rdp_list_init(&rdp_srv.nspaces);
    status = rdp_hash_init(&rdp_srv.peers, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&rdp_srv.colls, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&rdp_srv.coll_ids, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&rdp_srv.waits, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&rdp_srv.dmdx_out, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_kvs_create(&rdp_srv.modex);
    }
    return status;
}

static void cleanup_tables(void)
{
    rdp_srv_monitor_clear_all();
    rdp_hash_cleanup(&rdp_srv.peers);
    rdp_hash_cleanup(&rdp_srv.colls);
    rdp_hash_cleanup(&rdp_srv.coll_ids);
    rdp_hash_cleanup(&rdp_srv.waits);
    rdp_hash_cleanup(&rdp_srv.dmdx_out);
    rdp_kvs_destroy(rdp_srv.modex);
    rdp_srv.modex = NULL;
}

/* Replace characters that do not belong in a file name. */
static void sanitize_component(char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '/' || (unsigned char)*s < 0x20) {
            *s = '_';
        }
    }
}

static pmix_status_t server_init_on_loop(void *arg)
{
    init_args_t *a = arg;
    pmix_proc_t me;
    char *host_component;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    memset(&rdp_srv, 0, sizeof(rdp_srv));
    memset(&me, 0, sizeof(me));
    if (a->module != NULL) {
        rdp_srv.host = *a->module;
    }
    status = init_tables();
    if (status != PMIX_SUCCESS) {
        goto err_tables;
    }
    status = read_init_info(a, &me);
    if (status != PMIX_SUCCESS) {
        goto err_identity;
    }
    rdp_srv_group_open(); /* before another server's message can come */
    status = rdp_srv_engine_init(a->info, a->ninfo);
    if (status != PMIX_SUCCESS) {
        goto err_identity;
    }
    host_component = rdp_strdup(rdp_srv.hostname);
    if (host_component == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_identity;
    }
    sanitize_component(host_component);
    rdp_srv.rendezvous_dir = dup_printf("%s/rdpmix.%s.%d", rdp_srv.tmpdir,
                                        host_component, (int)getpid());
    rdp_free(host_component);
    if (rdp_srv.rendezvous_dir == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_identity;
    }
    rdp_srv.socket_path = dup_printf("%s/sock", rdp_srv.rendezvous_dir);
    if (rdp_srv.socket_path == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_identity;
    }
    if (strlen(rdp_srv.socket_path)
        >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        rdp_log_error(SERVER,
                      "socket path %s is too long for a UNIX socket; "
                      "give a shorter %s",
                      rdp_srv.socket_path, PMIX_SERVER_TMPDIR);
        status = PMIX_ERR_BAD_PARAM;
        goto err_identity;
    }
    rdp_srv.uri =
        dup_printf("rdpmix.%d;unix:%s", (int)getpid(), rdp_srv.socket_path);
    if (rdp_srv.uri == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_identity;
    }
    status = rdp_srv_fork_view_open();
    if (status != PMIX_SUCCESS) {
        goto err_identity;
    }
    status = make_rendezvous_dir(rdp_srv.rendezvous_dir);
    if (status != PMIX_SUCCESS) {
        goto err_fork_view;
    }
    status = rdp_ipc_listen(rdp_rt.loop, rdp_srv.socket_path, rdp_srv_accept_cb,
                            NULL, &rdp_srv.listener);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot listen on %s: %s", rdp_srv.socket_path,
                      rdp_status_name(status));
        goto err_dir;
    }
    rdp_rt.myproc     = me;
    rdp_event_forward = rdp_srv_event_forward;
    rdp_runtime_fetch = rdp_srv_local_fetch;
    rdp_srv.active    = true;
    rdp_log_debug(SERVER, "server %s:%u listening on %s", me.nspace, me.rank,
                  rdp_srv.socket_path);
    return PMIX_SUCCESS;

err_dir:
    rmdir(rdp_srv.rendezvous_dir);
err_fork_view:
    rdp_srv_fork_view_close();
err_identity:
    rdp_srv_engine_fini();
    free_identity();
err_tables:
    cleanup_tables();
    return status;
}

pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                               size_t ninfo)
{
    init_args_t args = {module, info, ninfo};
    pmix_status_t status;

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&init_lock);
    if (init_count > 0) {
        init_count++;
        pthread_mutex_unlock(&init_lock);
        return PMIX_SUCCESS;
    }
    status = rdp_runtime_acquire(RDP_ROLE_SERVER);
    if (status != PMIX_SUCCESS) {
        goto out;
    }
    status = rdp_runtime_call_sync(server_init_on_loop, &args);
    if (status != PMIX_SUCCESS) {
        rdp_runtime_release();
        goto out;
    }
    init_count = 1;
out:
    pthread_mutex_unlock(&init_lock);
    return status;
}

/* ---- finalize ---- */

static pmix_status_t server_fini_on_loop(void *arg)
{
    rdp_srv_nspace_t *ns, *tmp;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    rdp_event_forward = NULL;
    rdp_srv_evcache_cleanup();
    rdp_runtime_fetch = NULL;
    rdp_srv.active    = false;
    rdp_ipc_listener_destroy(rdp_srv.listener);
    rdp_srv.listener = NULL;
    rdp_srv_close_all();
    rdp_srv_coll_cleanup();
    rdp_srv_group_cleanup();
    rdp_srv_modex_cleanup();
    rdp_srv_engine_fini();
    rdp_list_for_each_safe(ns, tmp, &rdp_srv.nspaces, link) {
        rdp_list_del(&ns->link);
        rdp_srv_cleanup_run(ns);
        rdp_srv_nspace_destroy(ns);
    }
    if (rdp_srv.rendezvous_dir != NULL && rmdir(rdp_srv.rendezvous_dir) != 0
        && errno != ENOENT) {
        rdp_log_warn(SERVER, "cannot remove %s: %m", rdp_srv.rendezvous_dir);
    }
    rdp_srv_fork_view_close();
    free_identity();
    cleanup_tables();
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_server_finalize(void)
{
    pmix_status_t status;

    pthread_mutex_lock(&init_lock);
    if (init_count == 0) {
        pthread_mutex_unlock(&init_lock);
        return PMIX_ERR_INIT;
    }
    if (--init_count > 0) {
        pthread_mutex_unlock(&init_lock);
        return PMIX_SUCCESS;
    }
    status = rdp_runtime_call_sync(server_fini_on_loop, NULL);
    rdp_runtime_release();
    pthread_mutex_unlock(&init_lock);
    return status;
}

/* True between a successful PMIx_server_init and its finalize. Any thread:
 * only for argument checks (the loop re-checks state it owns). */
bool rdp_srv_initialized(void)
{
    bool up;

    pthread_mutex_lock(&init_lock);
    up = init_count > 0;
    pthread_mutex_unlock(&init_lock);
    return up;
}
