/* tool.c - the PMIx tool API: init/finalize, finding and choosing a server */
#include "config.h"

#include <pmix_tool.h>

#include "core/client/attach.h"
#include "core/common/runtime.h"
#include "core/tool/rendezvous.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/directive.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "pnet/pnet.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * A tool finds one server (rendezvous.c reads the files servers leave),
 * connects with the TOOL_CONNECT handshake and from then on uses the
 * client machinery (src/core/client/attach.c).  One server at a time.
 * Order of the search, as the attributes ask (OpenPMIx 4.2.2's order):
 * an explicit URI; the system server (PMIX_CONNECT_TO_SYSTEM only, or
 * PMIX_CONNECT_SYSTEM_FIRST); a server's pid; a server's nspace; a
 * server named by the environment; else every session server this user
 * can see, which must be exactly one (several: PMIX_ERR_BAD_PARAM, the
 * tool must choose), and failing that the system server.
 */

typedef struct tool_opts {
    const char *uri;
    pid_t pid;
    const char *server_nspace;
    bool system_only;
    bool system_first;
    uint32_t max_retries;
    uint32_t retry_delay;
    pmix_proc_t want; /* PMIX_TOOL_NSPACE / PMIX_TOOL_RANK */
    bool do_not_connect;
    bool connect_optional;
    bool launcher;
    const char *system_tmpdir;
    const char *server_tmpdir;
} tool_opts_t;

static struct {
    pthread_mutex_t lock;
    int refs;
    bool connected;
    bool launcher; /* PMIX_LAUNCHER: pnet selected (rdp_runtime_is_launcher) */
    pmix_proc_t self;
    pmix_proc_t server;
} tool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- options ---- */

static bool info_u32(const pmix_info_t *in, uint32_t *out_p)
{
    switch (in->value.type) {
    case PMIX_UINT32:
        *out_p = in->value.data.uint32;
        return true;
    case PMIX_INT:
        *out_p =
            in->value.data.integer < 0 ? 0 : (uint32_t)in->value.data.integer;
        return true;
    case PMIX_PID:
        *out_p = (uint32_t)in->value.data.pid;
        return true;
    case PMIX_PROC_RANK:
        *out_p = in->value.data.rank;
        return true;
    default:
        return false;
    }
}

static const char *info_str(const pmix_info_t *in)
{
    return in->value.type == PMIX_STRING ? in->value.data.string : NULL;
}

static pmix_status_t bad_option(const char *key)
{
    rdp_log_error(TOOL, "PMIx_tool_init: %s has the wrong type or value", key);
    return PMIX_ERR_BAD_PARAM;
}

static pmix_status_t read_opts(const pmix_info_t *info, size_t ninfo,
                               tool_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->want.rank = PMIX_RANK_UNDEF;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        uint32_t u;

        if (PMIX_CHECK_KEY(in, PMIX_SERVER_URI)) {
            if ((o->uri = info_str(in)) == NULL) {
                return bad_option(in->key);
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_SERVER_PIDINFO)) {
            if (!info_u32(in, &u) || u == 0) {
                return bad_option(in->key);
            }
            o->pid = (pid_t)u;
        } else if (PMIX_CHECK_KEY(in, PMIX_SERVER_NSPACE)) {
            if ((o->server_nspace = info_str(in)) == NULL) {
                return bad_option(in->key);
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_CONNECT_TO_SYSTEM)) {
            o->system_only = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_CONNECT_SYSTEM_FIRST)) {
            o->system_first = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_CONNECT_MAX_RETRIES)) {
            if (!info_u32(in, &o->max_retries)) {
                return bad_option(in->key);
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_CONNECT_RETRY_DELAY)) {
            if (!info_u32(in, &o->retry_delay)) {
                return bad_option(in->key);
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_TOOL_NSPACE)) {
            const char *ns = info_str(in);

            if (ns == NULL || ns[0] == '\0' || strlen(ns) > PMIX_MAX_NSLEN) {
                return bad_option(in->key);
            }
            PMIX_LOAD_NSPACE(o->want.nspace, ns);
        } else if (PMIX_CHECK_KEY(in, PMIX_TOOL_RANK)) {
            if (!info_u32(in, &u)) {
                return bad_option(in->key);
            }
            o->want.rank = u;
        } else if (PMIX_CHECK_KEY(in, PMIX_TOOL_DO_NOT_CONNECT)) {
            o->do_not_connect = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_TOOL_CONNECT_OPTIONAL)) {
            o->connect_optional = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_LAUNCHER)) {
            o->launcher = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_SYSTEM_TMPDIR)) {
            o->system_tmpdir = info_str(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_SERVER_TMPDIR)) {
            o->server_tmpdir = info_str(in);
        }
    }
    if (o->want.nspace[0] != '\0' && o->want.rank == PMIX_RANK_UNDEF) {
        o->want.rank = 0;
    }
    if (o->system_tmpdir == NULL || o->system_tmpdir[0] != '/') {
        o->system_tmpdir = getenv("TMPDIR");
    }
    if (o->system_tmpdir == NULL || o->system_tmpdir[0] != '/') {
        o->system_tmpdir = "/tmp";
    }
    return PMIX_SUCCESS;
}

/* ---- finding the server ---- */

static pmix_status_t find_server(const tool_opts_t *o, const char *host,
                                 rdp_rndz_t *found)
{
    rdp_rndz_query_t q = {.roots = {o->server_tmpdir, o->system_tmpdir},
                          .host  = host};
    pmix_status_t status;

    if (o->uri != NULL) {
        return rdp_rndz_from_uri(o->uri, found);
    }
    if (o->system_only || o->system_first) {
        status = rdp_rndz_system(o->system_tmpdir, host, found);
        if (status == PMIX_SUCCESS || o->system_only) {
            return status;
        }
    }
    if (o->pid != 0) {
        q.pid = o->pid;
        return rdp_rndz_find(&q, found);
    }
    if (o->server_nspace != NULL) {
        q.nspace = o->server_nspace;
        return rdp_rndz_find(&q, found);
    }
    if (rdp_rndz_from_env(found) == PMIX_SUCCESS) {
        return PMIX_SUCCESS;
    }
    status = rdp_rndz_find(&q, found);
    if (status == PMIX_ERR_NOT_FOUND) {
        status = rdp_rndz_system(o->system_tmpdir, host, found);
    }
    return status;
}

static pmix_status_t try_once(const tool_opts_t *o, const pmix_info_t *info,
                              size_t ninfo, const char *host)
{
    rdp_rndz_t found;
    pmix_status_t status;

    status = find_server(o, host, &found);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_client_tool_attach(found.path, found.uri, &o->want, info,
                                    ninfo, &tool.self, &tool.server);
    if (status == PMIX_SUCCESS) {
        tool.connected = true;
    } else if (status == PMIX_ERR_NO_PERMISSIONS) {
        rdp_log_error(TOOL,
                      "the server at %s (pid %d) refused this tool: it "
                      "runs as another user",
                      found.path, (int)found.pid);
    }
    rdp_rndz_cleanup(&found);
    return status;
}

/* Worth another try: nothing found or nothing listening (yet). */
static bool retryable(pmix_status_t status)
{
    return status == PMIX_ERR_NOT_FOUND || status == PMIX_ERR_UNREACH;
}

static pmix_status_t connect_with_retries(const tool_opts_t *o,
                                          const pmix_info_t *info, size_t ninfo)
{
    char host[256];
    const char *env = getenv("PMIX_HOSTNAME");
    pmix_status_t status;

    if (env != NULL && env[0] != '\0') {
        snprintf(host, sizeof(host), "%s", env);
    } else if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    for (uint32_t attempt = 0;; attempt++) {
        status = try_once(o, info, ninfo, host);
        if (!retryable(status) || attempt >= o->max_retries) {
            break;
        }
        rdp_log_debug(TOOL, "no server yet (%s): retry %u of %u in %u s",
                      rdp_status_name(status), attempt + 1, o->max_retries,
                      o->retry_delay);
        if (o->retry_delay > 0) {
            struct timespec ts = {.tv_sec = o->retry_delay};

            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
    }
    if (status == PMIX_ERR_NOT_FOUND) {
        status = PMIX_ERR_UNREACH; /* what a tool expects (OpenPMIx too) */
    }
    return status;
}

/* An identity of our own when no server gives one. */
static void unconnected_identity(const tool_opts_t *o)
{
    char host[200]; /* "tool.<host>.<pid>" fits an nspace */

    memset(&tool.self, 0, sizeof(tool.self));
    if (o->want.nspace[0] != '\0') {
        tool.self = o->want;
    } else {
        if (gethostname(host, sizeof(host)) != 0) {
            snprintf(host, sizeof(host), "localhost");
        }
        host[sizeof(host) - 1] = '\0';
        snprintf(tool.self.nspace, sizeof(tool.self.nspace), "tool.%s.%d", host,
                 (int)getpid());
        tool.self.rank = 0;
    }
    rdp_rt.myproc = tool.self;
}

/* ---- a launcher's network support (RFC0012's head-node step) ---- */

/* The modules the server would select (RDPMIX_PNET); on the loop thread,
 * where every pnet call runs, as in the server. */
static pmix_status_t pnet_open_on_loop(void *arg)
{
    (void)arg;
    return rdp_pnet_select(rdp_cfg_env(RDP_CFG_PNET));
}

static pmix_status_t pnet_close_on_loop(void *arg)
{
    (void)arg;
    rdp_pnet_cleanup();
    return PMIX_SUCCESS;
}

/* ---- init / finalize ---- */

static pmix_status_t connect_as_asked(const tool_opts_t *o,
                                      const pmix_info_t *info, size_t ninfo)
{
    pmix_status_t status;

    if (o->do_not_connect) {
        unconnected_identity(o);
        return PMIX_SUCCESS;
    }
    status = connect_with_retries(o, info, ninfo);
    if (status != PMIX_SUCCESS && o->connect_optional) {
        rdp_log_info(TOOL, "no server (%s): running unconnected",
                     rdp_status_name(status));
        unconnected_identity(o);
        status = PMIX_SUCCESS;
    }
    return status;
}

static pmix_status_t first_init(const pmix_info_t *info, size_t ninfo)
{
    tool_opts_t o;
    pmix_status_t status;

    status = read_opts(info, ninfo, &o);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_runtime_acquire(RDP_ROLE_TOOL);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (o.launcher) {
        status = rdp_runtime_call_sync(pnet_open_on_loop, NULL);
        if (status != PMIX_SUCCESS) {
            goto err_release;
        }
    }
    status = connect_as_asked(&o, info, ninfo);
    if (status != PMIX_SUCCESS) {
        goto err_pnet;
    }
    tool.launcher = o.launcher;
    rdp_runtime_set_launcher(o.launcher);
    return PMIX_SUCCESS;

err_pnet:
    if (o.launcher) {
        (void)rdp_runtime_call_sync(pnet_close_on_loop, NULL);
    }
err_release:
    rdp_runtime_release();
    return status;
}

pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[],
                             size_t ninfo)
{
    pmix_status_t status = PMIX_SUCCESS;

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    RDP_CHECK_DIRECTIVES(info, ninfo);
    pthread_mutex_lock(&tool.lock);
    if (tool.refs == 0) {
        status = first_init(info, ninfo);
    }
    if (status == PMIX_SUCCESS) {
        tool.refs++;
        if (proc != NULL) {
            *proc = tool.self;
        }
    }
    pthread_mutex_unlock(&tool.lock);
    return status;
}

pmix_status_t PMIx_tool_finalize(void)
{
    pthread_mutex_lock(&tool.lock);
    if (tool.refs == 0) {
        pthread_mutex_unlock(&tool.lock);
        return PMIX_ERR_INIT;
    }
    if (--tool.refs == 0) {
        rdp_client_tool_detach();
        tool.connected = false;
        if (tool.launcher) {
            /* a setup_application posted before this ran before the close */
            rdp_runtime_set_launcher(false);
            (void)rdp_runtime_call_sync(pnet_close_on_loop, NULL);
            tool.launcher = false;
        }
        rdp_runtime_release();
    }
    pthread_mutex_unlock(&tool.lock);
    return PMIX_SUCCESS;
}

/* ---- one server at a time ---- */

pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc,
                                         pmix_proc_t *server,
                                         pmix_info_t info[], size_t ninfo)
{
    tool_opts_t o;
    pmix_status_t status;

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    RDP_CHECK_DIRECTIVES(info, ninfo);
    pthread_mutex_lock(&tool.lock);
    if (tool.refs == 0) {
        status = PMIX_ERR_INIT;
    } else if (tool.connected) {
        rdp_log_info(TOOL,
                     "PMIx_tool_attach_to_server: already attached to "
                     "%s:%u; rdpmix tools talk to one server at a time",
                     tool.server.nspace, tool.server.rank);
        status = PMIX_ERR_NOT_SUPPORTED;
    } else {
        status = read_opts(info, ninfo, &o);
        if (status == PMIX_SUCCESS) {
            if (o.want.nspace[0] == '\0') {
                o.want = tool.self;
            }
            status = connect_with_retries(&o, info, ninfo);
        }
    }
    if (status == PMIX_SUCCESS) {
        if (myproc != NULL) {
            *myproc = tool.self;
        }
        if (server != NULL) {
            *server = tool.server;
        }
    }
    pthread_mutex_unlock(&tool.lock);
    return status;
}

static bool is_our_server(const pmix_proc_t *server)
{
    return tool.connected && server != NULL
           && PMIX_CHECK_NSPACE(server->nspace, tool.server.nspace)
           && (server->rank == tool.server.rank
               || server->rank == PMIX_RANK_WILDCARD);
}

pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server)
{
    pmix_status_t status = PMIX_SUCCESS;

    pthread_mutex_lock(&tool.lock);
    if (tool.refs == 0) {
        status = PMIX_ERR_INIT;
    } else if (!is_our_server(server)) {
        status = PMIX_ERR_NOT_FOUND;
    } else {
        rdp_client_tool_detach();
        tool.connected = false;
    }
    pthread_mutex_unlock(&tool.lock);
    return status;
}

pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers)
{
    pmix_status_t status = PMIX_SUCCESS;

    if (servers == NULL || nservers == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&tool.lock);
    *servers  = NULL;
    *nservers = 0;
    if (tool.refs == 0) {
        status = PMIX_ERR_INIT;
    } else if (tool.connected) {
        PMIX_PROC_CREATE(*servers, 1);
        if (*servers == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            (*servers)[0] = tool.server;
            *nservers     = 1;
        }
    }
    pthread_mutex_unlock(&tool.lock);
    return status;
}

pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server,
                                   pmix_info_t info[], size_t ninfo)
{
    pmix_status_t status;

    if (server == NULL || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    RDP_CHECK_DIRECTIVES(info, ninfo);
    pthread_mutex_lock(&tool.lock);
    if (tool.refs == 0) {
        status = PMIX_ERR_INIT;
    } else if (is_our_server(server)) {
        status = PMIX_SUCCESS; /* it already is the one */
    } else {
        status = PMIX_ERR_NOT_SUPPORTED; /* one server at a time */
    }
    pthread_mutex_unlock(&tool.lock);
    return status;
}

pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[],
                                          size_t ninfo)
{
    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIx_tool_attach_to_server(proc, NULL, info, ninfo);
}

/* ---- IO forwarding to tools (RFC0010): not yet ---- */

static pmix_status_t iof_not_supported(const char *fn)
{
    rdp_log_init();
    rdp_log_info(TOOL, "%s: IO forwarding to tools is not supported yet", fn);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_iof_channel_t channel,
                            pmix_iof_cbfunc_t cbfunc,
                            pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata)
{
    /* directives first, as every call taking them */
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return iof_not_supported("PMIx_IOF_pull");
}

pmix_status_t PMIx_IOF_deregister(size_t iofhdlr,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* directives first, as every call taking them */
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return iof_not_supported("PMIx_IOF_deregister");
}

pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                            pmix_byte_object_t *bo,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* directives first, as every call taking them */
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return iof_not_supported("PMIx_IOF_push");
}

/* The library runs its own progress thread, so there is never anything
 * for the caller to drive; the Standard allows this to do nothing. */
void PMIx_Progress(void)
{
}
