/* server.c - PMIx_server_init/finalize, rendezvous directory */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/directive.h"
#include "pnet/pnet.h"
#include "core/server/group.h"
#include "core/util/query.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
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
    /* every upcall checks that it is not made from inside a host's
     * callback (hostcall.h) */
    rdp_srv_host_module_wrap(a->module, &rdp_srv.host);
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
    status = rdp_pnet_select(rdp_cfg_env(RDP_CFG_PNET));
    if (status != PMIX_SUCCESS) {
        goto err_identity;
    }
    status = rdp_srv_fork_view_open();
    if (status != PMIX_SUCCESS) {
        goto err_pnet;
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
    rdp_rt.myproc = me;
    status        = rdp_srv_tool_open(a->info, a->ninfo);
    if (status != PMIX_SUCCESS) {
        goto err_listen;
    }
    rdp_event_forward = rdp_srv_event_forward;
    rdp_runtime_fetch = rdp_srv_local_fetch;
    rdp_srv.active    = true;
    rdp_log_debug(SERVER, "server %s:%u listening on %s", me.nspace, me.rank,
                  rdp_srv.socket_path);
    return PMIX_SUCCESS;

err_listen:
    rdp_ipc_listener_destroy(rdp_srv.listener);
    rdp_srv.listener = NULL;
err_dir:
    rmdir(rdp_srv.rendezvous_dir);
err_fork_view:
    rdp_srv_fork_view_close();
err_pnet:
    rdp_pnet_cleanup();
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

    RDP_CHECK_DIRECTIVES(info, ninfo);

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
    rdp_srv_tool_close();
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
    rdp_pnet_cleanup();
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
    rdp_qry_host_attrs_clear(); /* PMIx_Register_attributes' */
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
