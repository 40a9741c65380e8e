/* rdpmixd.c - per-node daemon: a PMIx server plus fork/exec, stdio, exits */
#include "config.h"
#include "run/chan.h"
#include "run/ctl.h"
#include "run/jobinfo.h"
#include "run/spawn.h"
#include "run/util.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <pmix.h>
#include <pmix_server.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define IO_CHUNK      65536
#define IO_HIGH_WATER (8u << 20) /* stop reading ranks' pipes above this */
#define IO_LOW_WATER  (1u << 20) /* resume below this */
#define SERVER_WAIT   30.0       /* bound on each server API completion */

enum rank_state {
    RANK_NEW     = 0,
    RANK_RUNNING = 1,
    RANK_ENDED   = 2
};

struct rank_proc;

typedef struct rank_pipe {
    struct rank_proc *rp;
    int channel; /* RDP_CTL_STDOUT / RDP_CTL_STDERR */
    int fd;
    rdp_fdwatch_t *watch;
} rank_pipe_t;

typedef struct rank_proc {
    pmix_proc_t proc;
    uint32_t local_rank;
    enum rank_state state;
    pid_t pid;
    int registered;
    int connected;
    int finalized;
    rank_pipe_t out;
    rank_pipe_t err;
    int status_fd;
} rank_proc_t;

typedef struct daemon {
    rdp_loop_t *loop;
    rdp_run_chan_t *chan;
    rdp_sigwatch_t *sig_chld, *sig_term, *sig_int, *sig_hup;
    rdp_timer_t *grace_timer;
    double grace;

    /* identity, from the command line */
    char *ctl_addr;
    int secret_fd;
    uint8_t secret[RDP_CTL_SECRET_LEN];
    uint32_t node_id;
    char *node_name;
    char *dvm_nspace;

    char *tmpdir;
    char *nsdir;
    char *libdir;
    int devnull;
    int server_up;

    /* the job */
    int have_job;
    int launch_done;
    rdp_ctl_launch_t launch;
    pmix_nspace_t nspace;
    int nspace_registered;
    rank_proc_t *ranks;
    uint32_t nlocal;
    uint32_t nended;
    char **procdirs;
    int done_sent;
    int io_paused;

    int terminating;
    int stopping;
    int lost_launcher;
    int exit_code;
} daemon_t;

static daemon_t dmn;

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vsay(const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "rdpmixd (node %s): %s\n",
            dmn.node_name ? dmn.node_name : "?", msg);
}

static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

static void fatal(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    exit(1);
}

/* ------------------------------------------------------------------ */
/* waiting for server API completions                                   */

/* Heap-allocated: if a wait times out the callback may still come, so
 * the object is then leaked on purpose rather than freed under it. */
typedef struct opwait {
    rdp_wait_t w;
} opwait_t;

static void opwait_cb(pmix_status_t status, void *cbdata)
{
    opwait_t *ow = cbdata;

    rdp_wait_signal(&ow->w, status);
}

static opwait_t *opwait_create(void)
{
    opwait_t *ow = rdp_calloc(1, sizeof(*ow));

    if (ow != NULL) {
        rdp_wait_init(&ow->w);
    }
    return ow;
}

/* Wait and free; on timeout the object is left to the late callback. */
static pmix_status_t opwait_finish(opwait_t *ow, const char *what)
{
    pmix_status_t status = rdp_wait_wait_for(&ow->w, SERVER_WAIT);

    if (status == PMIX_ERR_TIMEOUT) {
        say("the PMIx server did not complete %s within %.0f seconds", what,
            SERVER_WAIT);
        return status;
    }
    rdp_wait_cleanup(&ow->w);
    rdp_free(ow);
    return status;
}

/* ------------------------------------------------------------------ */
/* control channel                                                      */

static void send_msg(uint16_t cmd, rdp_buf_t *buf)
{
    pmix_status_t status;

    if (dmn.chan == NULL) {
        if (buf != NULL) {
            rdp_buf_cleanup(buf);
        }
        return;
    }
    status = rdp_run_chan_send(dmn.chan, cmd, buf);
    if (status != PMIX_SUCCESS && status != PMIX_ERR_UNREACH) {
        rdp_log_warn(RUN, "cannot queue control message %u: %s", cmd,
                     PMIx_Error_string(status));
    }
}

static void check_stop(void)
{
    if (dmn.stopping) {
        return;
    }
    if ((dmn.lost_launcher || dmn.terminating > 1)
        && dmn.nended == dmn.nlocal) {
        dmn.stopping = 1;
        rdp_loop_stop(dmn.loop);
    }
}

static void check_done(void)
{
    if (!dmn.have_job || !dmn.launch_done || dmn.nended < dmn.nlocal) {
        return;
    }
    if (dmn.grace_timer != NULL) {
        rdp_timer_cancel(dmn.grace_timer);
    }
    if (!dmn.done_sent) {
        dmn.done_sent = 1;
        send_msg(RDP_CTL_DONE, NULL);
    }
    check_stop();
}

/* ------------------------------------------------------------------ */
/* rank output                                                          */

static void pipe_close(rank_pipe_t *pp)
{
    rdp_buf_t buf;

    if (pp->fd < 0) {
        return;
    }
    rdp_fdwatch_destroy(pp->watch);
    pp->watch = NULL;
    close(pp->fd);
    pp->fd = -1;
    /* tell the launcher this channel ended (flushes a partial line) */
    rdp_buf_init(&buf);
    if (rdp_ctl_io_pack(&buf, pp->rp->proc.rank, (uint8_t)pp->channel, NULL, 0)
        == PMIX_SUCCESS) {
        send_msg(RDP_CTL_IO, &buf);
    }
    rdp_buf_cleanup(&buf);
}

/* Read once; returns bytes read, 0 at end of file (pipe closed), -1 when
 * nothing is available now. */
static ssize_t pipe_read_once(rank_pipe_t *pp)
{
    char data[IO_CHUNK];
    ssize_t n;
    rdp_buf_t buf;

    do {
        n = read(pp->fd, data, sizeof(data));
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return -1;
        }
        rdp_log_debug(RUN, "reading output of rank %u: %m", pp->rp->proc.rank);
        pipe_close(pp);
        return 0;
    }
    if (n == 0) {
        pipe_close(pp);
        return 0;
    }
    rdp_buf_init(&buf);
    if (rdp_ctl_io_pack(&buf, pp->rp->proc.rank, (uint8_t)pp->channel, data,
                        (size_t)n)
        == PMIX_SUCCESS) {
        send_msg(RDP_CTL_IO, &buf);
    }
    rdp_buf_cleanup(&buf);
    return n;
}

static void io_pause(int pause)
{
    dmn.io_paused = pause;
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        rank_pipe_t *pipes[2] = {&dmn.ranks[i].out, &dmn.ranks[i].err};

        for (int k = 0; k < 2; k++) {
            if (pipes[k]->watch == NULL) {
                continue;
            }
            if (pause) {
                rdp_fdwatch_disable(pipes[k]->watch);
            } else {
                rdp_fdwatch_enable(pipes[k]->watch);
            }
        }
    }
}

static void pipe_cb(int fd, int events, void *arg)
{
    rank_pipe_t *pp = arg;

    pipe_read_once(pp);
    if (!dmn.io_paused && dmn.chan != NULL
        && rdp_run_chan_queued(dmn.chan) > IO_HIGH_WATER) {
        io_pause(1);
    }
}

static void chan_drain_cb(rdp_run_chan_t *chan, void *arg)
{
    if (dmn.io_paused) {
        io_pause(0);
    }
}

/* Everything the rank wrote before it ended is in the pipe buffer. */
static void pipe_drain(rank_pipe_t *pp)
{
    while (pp->fd >= 0 && pipe_read_once(pp) > 0) {
    }
    pipe_close(pp);
}

static pmix_status_t pipe_watch(rank_proc_t *rp, rank_pipe_t *pp, int channel,
                                int fd)
{
    pmix_status_t status;

    pp->rp      = rp;
    pp->channel = channel;
    pp->fd      = fd;
    status =
        rdp_fdwatch_create(dmn.loop, fd, RDP_FD_READ, pipe_cb, pp, &pp->watch);
    if (status != PMIX_SUCCESS) {
        close(fd);
        pp->fd = -1;
        return status;
    }
    if (!dmn.io_paused) {
        rdp_fdwatch_enable(pp->watch);
    }
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* rank lifecycle                                                       */

/* EXIT (how it ended) or ABORT (how = RDP_CTL_ABORTED) for a rank. */
static void send_report(uint16_t cmd, pmix_rank_t rank, pid_t pid, uint8_t how,
                        int32_t value, const char *detail)
{
    rdp_ctl_report_t m = {.rank   = rank,
                          .pid    = (uint32_t)(pid > 0 ? pid : 0),
                          .how    = how,
                          .value  = value,
                          .detail = (char *)detail};
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_ctl_report_pack(&buf, &m) == PMIX_SUCCESS) {
        send_msg(cmd, &buf);
    }
    rdp_buf_cleanup(&buf);
}

static void send_exit(rank_proc_t *rp, uint8_t how, int32_t value,
                      const char *detail)
{
    send_report(RDP_CTL_EXIT, rp->proc.rank, rp->pid, how, value, detail);
}

static void rank_set_ended(rank_proc_t *rp)
{
    if (rp->state != RANK_ENDED) {
        rp->state = RANK_ENDED;
        dmn.nended++;
    }
}

static void rank_reaped(rank_proc_t *rp, int wstatus)
{
    int stage, err;
    char detail[PATH_MAX + 64];

    pipe_drain(&rp->out);
    pipe_drain(&rp->err);
    if (rp->status_fd >= 0
        && rdp_run_spawn_failure(rp->status_fd, &stage, &err)) {
        if (stage == RDP_RUN_STAGE_CHDIR) {
            snprintf(detail, sizeof(detail), "cannot change to directory '%s'",
                     dmn.launch.cwd ? dmn.launch.cwd : "?");
        } else {
            snprintf(detail, sizeof(detail), "cannot execute '%s'",
                     dmn.launch.argv[0]);
        }
        send_exit(rp, RDP_CTL_FAILED_TO_START, err, detail);
    } else if (WIFSIGNALED(wstatus)) {
        send_exit(rp, RDP_CTL_SIGNALED, WTERMSIG(wstatus), NULL);
    } else {
        send_exit(rp, RDP_CTL_EXITED, WEXITSTATUS(wstatus), NULL);
    }
    if (rp->status_fd >= 0) {
        close(rp->status_fd);
        rp->status_fd = -1;
    }
    rank_set_ended(rp);
}

static rank_proc_t *rank_by_pid(pid_t pid)
{
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        if (dmn.ranks[i].pid == pid && dmn.ranks[i].state == RANK_RUNNING) {
            return &dmn.ranks[i];
        }
    }
    return NULL;
}

static rank_proc_t *rank_by_proc(const pmix_proc_t *proc)
{
    if (!dmn.have_job || proc == NULL
        || strncmp(proc->nspace, dmn.nspace, PMIX_MAX_NSLEN) != 0) {
        return NULL;
    }
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        if (dmn.ranks[i].proc.rank == proc->rank) {
            return &dmn.ranks[i];
        }
    }
    return NULL;
}

static void sigchld_cb(int signo, void *arg)
{
    int wstatus;
    pid_t pid;

    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        rank_proc_t *rp = rank_by_pid(pid);

        if (rp == NULL) {
            rdp_log_debug(RUN, "reaped unknown child %d", (int)pid);
            continue;
        }
        rank_reaped(rp, wstatus);
    }
    check_done();
}

/* Signal every running rank's process group. */
static void signal_ranks(int signo, int include_ended)
{
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        rank_proc_t *rp = &dmn.ranks[i];

        if (rp->pid <= 0) {
            continue;
        }
        if (rp->state == RANK_RUNNING) {
            if (kill(-rp->pid, signo) != 0 && errno == ESRCH) {
                kill(rp->pid, signo);
            }
        } else if (include_ended) {
            /* leftovers of an ended rank in its process group */
            kill(-rp->pid, signo);
        }
    }
}

static void grace_cb(void *arg)
{
    rdp_log_debug(RUN, "grace period over: killing what is left");
    signal_ranks(SIGKILL, 1);
}

/* SIGTERM now, SIGKILL after the grace period. */
static void terminate_job(void)
{
    if (dmn.terminating == 0) {
        dmn.terminating = 1;
    }
    signal_ranks(SIGTERM, 1);
    signal_ranks(SIGCONT, 0);
    if (dmn.grace_timer != NULL && dmn.nended < dmn.nlocal) {
        rdp_timer_start(dmn.grace_timer, dmn.grace);
    }
}

/* ------------------------------------------------------------------ */
/* host module: upcalls from the server thread, handled on our loop     */

enum upcall_kind {
    UPCALL_CONNECTED,
    UPCALL_FINALIZED,
    UPCALL_ABORT
};

typedef struct upcall {
    enum upcall_kind kind;
    pmix_proc_t proc;
    int status;
    char *msg;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} upcall_t;

static void upcall_run(void *arg)
{
    upcall_t *u     = arg;
    rank_proc_t *rp = rank_by_proc(&u->proc);

    switch (u->kind) {
    case UPCALL_CONNECTED:
        rdp_log_debug(RUN, "client %s:%u connected", u->proc.nspace,
                      u->proc.rank);
        if (rp != NULL) {
            rp->connected = 1;
        }
        break;
    case UPCALL_FINALIZED:
        rdp_log_debug(RUN, "client %s:%u finalized", u->proc.nspace,
                      u->proc.rank);
        if (rp != NULL) {
            rp->finalized = 1;
        }
        break;
    case UPCALL_ABORT:
        send_report(RDP_CTL_ABORT, u->proc.rank, rp != NULL ? rp->pid : 0,
                    RDP_CTL_ABORTED, u->status, u->msg);
        if (dmn.chan == NULL || !rdp_run_chan_is_open(dmn.chan)) {
            /* nobody to decide for us: end the job here */
            terminate_job();
        }
        break;
    }
    if (u->cbfunc != NULL) {
        u->cbfunc(PMIX_SUCCESS, u->cbdata);
    }
    rdp_free(u->msg);
    rdp_free(u);
}

static pmix_status_t post_upcall(enum upcall_kind kind, const pmix_proc_t *proc,
                                 int status, const char *msg,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    upcall_t *u = rdp_calloc(1, sizeof(*u));

    if (u == NULL) {
        return PMIX_ERR_NOMEM;
    }
    u->kind = kind;
    if (proc != NULL) {
        u->proc = *proc;
    } else {
        u->proc.rank = PMIX_RANK_UNDEF;
    }
    u->status = status;
    if (msg != NULL) {
        u->msg = rdp_strdup(msg);
        if (u->msg == NULL) {
            rdp_free(u);
            return PMIX_ERR_NOMEM;
        }
    }
    u->cbfunc = cbfunc;
    u->cbdata = cbdata;
    if (rdp_loop_post(dmn.loop, upcall_run, u) != PMIX_SUCCESS) {
        rdp_free(u->msg);
        rdp_free(u);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t host_client_connected(const pmix_proc_t *proc,
                                           void *server_object,
                                           pmix_op_cbfunc_t cbfunc,
                                           void *cbdata)
{
    return post_upcall(UPCALL_CONNECTED, proc, 0, NULL, cbfunc, cbdata);
}

static pmix_status_t host_client_finalized(const pmix_proc_t *proc,
                                           void *server_object,
                                           pmix_op_cbfunc_t cbfunc,
                                           void *cbdata)
{
    return post_upcall(UPCALL_FINALIZED, proc, 0, NULL, cbfunc, cbdata);
}

static pmix_status_t host_abort(const pmix_proc_t *proc, void *server_object,
                                int status, const char msg[],
                                pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* Any abort ends the whole job (procs is not narrowed down). */
    return post_upcall(UPCALL_ABORT, proc, status, msg, cbfunc, cbdata);
}

static pmix_server_module_t host_module = {
    .client_connected = host_client_connected,
    .client_finalized = host_client_finalized,
    .abort            = host_abort,
    /* fence_nb and direct_modex stay NULL: the server completes
     * node-local collectives itself (one node per job for now) */
};

/* ------------------------------------------------------------------ */
/* launching the job                                                    */

static int env_name_is(const char *entry, const char *name)
{
    size_t len = strlen(name);

    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* set NAME=value in a malloc'ed vector (replacing); 0 or -1 */
static int env_put(char ***envp, size_t *n, const char *entry)
{
    const char *eq = strchr(entry, '=');
    size_t nlen    = (size_t)(eq - entry);
    char *copy     = rdp_strdup(entry);
    char **v;

    if (copy == NULL) {
        return -1;
    }
    for (size_t i = 0; i < *n; i++) {
        if (strncmp((*envp)[i], entry, nlen + 1) == 0) {
            rdp_free((*envp)[i]);
            (*envp)[i] = copy;
            return 0;
        }
    }
    v = rdp_realloc(*envp, (*n + 2) * sizeof(*v));
    if (v == NULL) {
        rdp_free(copy);
        return -1;
    }
    v[(*n)++] = copy;
    v[*n]     = NULL;
    *envp     = v;
    return 0;
}

static const char *env_find(char **envp, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (env_name_is(envp[i], name)) {
            return envp[i] + strlen(name) + 1;
        }
    }
    return NULL;
}

/*
 * The ranks' environment before setup_fork: ours without inherited PMIX_*
 * variables (a launcher run inside another PMIx job must not leak that
 * job's identity), plus the LAUNCH additions, plus our library directory
 * in front of LD_LIBRARY_PATH.
 */
static char **build_base_env(void)
{
    char **env = rdp_calloc(1, sizeof(*env));
    size_t n   = 0;
    const char *old;
    char *ldpath;
    size_t len;

    if (env == NULL) {
        return NULL;
    }
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, "PMIX_", 5) == 0 || strchr(*e, '=') == NULL) {
            continue;
        }
        if (env_put(&env, &n, *e) != 0) {
            goto err;
        }
    }
    for (char **e = dmn.launch.env; e != NULL && *e != NULL; e++) {
        if (env_put(&env, &n, *e) != 0) {
            goto err;
        }
    }
    old    = env_find(env, n, "LD_LIBRARY_PATH");
    len    = strlen(dmn.libdir) + (old ? strlen(old) : 0) + 32;
    ldpath = rdp_malloc(len);
    if (ldpath == NULL) {
        goto err;
    }
    if (old != NULL && old[0] != '\0') {
        snprintf(ldpath, len, "LD_LIBRARY_PATH=%s:%s", dmn.libdir, old);
    } else {
        snprintf(ldpath, len, "LD_LIBRARY_PATH=%s", dmn.libdir);
    }
    if (env_put(&env, &n, ldpath) != 0) {
        rdp_free(ldpath);
        goto err;
    }
    rdp_free(ldpath);
    return env;

err:
    rdp_ctl_strv_free(env);
    return NULL;
}

static char **strv_dup(char **v)
{
    size_t n = 0;
    char **c;

    while (v[n] != NULL) {
        n++;
    }
    c = rdp_calloc(n + 1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        c[i] = rdp_strdup(v[i]);
        if (c[i] == NULL) {
            rdp_ctl_strv_free(c);
            return NULL;
        }
    }
    return c;
}

/* A directory name from an nspace (which may hold any character). */
static void sanitize(char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '/' || *s == ' ') {
            *s = '_';
        }
    }
}

static pmix_status_t make_dirs(void)
{
    char name[PMIX_MAX_NSLEN + 1];
    size_t len;

    snprintf(name, sizeof(name), "%s", dmn.nspace);
    sanitize(name);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        name[0] = '_';
    }
    len       = strlen(dmn.tmpdir) + strlen(name) + 2;
    dmn.nsdir = rdp_malloc(len);
    if (dmn.nsdir == NULL) {
        return PMIX_ERR_NOMEM;
    }
    snprintf(dmn.nsdir, len, "%s/%s", dmn.tmpdir, name);
    if (mkdir(dmn.nsdir, 0700) != 0) {
        say("cannot create %s: %s", dmn.nsdir, strerror(errno));
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    dmn.procdirs = rdp_calloc(dmn.nlocal + 1, sizeof(char *));
    if (dmn.procdirs == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        len             = strlen(dmn.nsdir) + 16;
        dmn.procdirs[i] = rdp_malloc(len);
        if (dmn.procdirs[i] == NULL) {
            return PMIX_ERR_NOMEM;
        }
        snprintf(dmn.procdirs[i], len, "%s/%u", dmn.nsdir,
                 dmn.ranks[i].proc.rank);
        if (mkdir(dmn.procdirs[i], 0700) != 0) {
            say("cannot create %s: %s", dmn.procdirs[i], strerror(errno));
            return PMIX_ERR_FILE_OPEN_FAILURE;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t register_job(void)
{
    rdp_run_jobinfo_params_t params = {.launch   = &dmn.launch,
                                       .node_id  = dmn.node_id,
                                       .tmpdir   = dmn.tmpdir,
                                       .nsdir    = dmn.nsdir,
                                       .procdirs = dmn.procdirs};
    pmix_info_t *info               = NULL;
    size_t ninfo                    = 0;
    opwait_t *ow;
    pmix_status_t status;

    status = rdp_run_jobinfo_build(&params, &info, &ninfo);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    ow = opwait_create();
    if (ow == NULL) {
        PMIX_INFO_FREE(info, ninfo);
        return PMIX_ERR_NOMEM;
    }
    status = PMIx_server_register_nspace(dmn.nspace, (int)dmn.nlocal, info,
                                         ninfo, opwait_cb, ow);
    if (status == PMIX_SUCCESS) {
        status = opwait_finish(ow, "register_nspace");
        if (status == PMIX_ERR_TIMEOUT) {
            return status; /* info may still be in use: leak it */
        }
    } else {
        rdp_wait_cleanup(&ow->w);
        rdp_free(ow);
    }
    PMIX_INFO_FREE(info, ninfo);
    if (status != PMIX_SUCCESS) {
        say("PMIx_server_register_nspace failed: %s",
            PMIx_Error_string(status));
        return status;
    }
    dmn.nspace_registered = 1;

    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        rank_proc_t *rp = &dmn.ranks[i];

        ow = opwait_create();
        if (ow == NULL) {
            return PMIX_ERR_NOMEM;
        }
        status = PMIx_server_register_client(&rp->proc, getuid(), getgid(), rp,
                                             opwait_cb, ow);
        if (status == PMIX_SUCCESS) {
            status = opwait_finish(ow, "register_client");
        } else {
            rdp_wait_cleanup(&ow->w);
            rdp_free(ow);
        }
        if (status != PMIX_SUCCESS) {
            say("PMIx_server_register_client for rank %u failed: %s",
                rp->proc.rank, PMIx_Error_string(status));
            return status;
        }
        rp->registered = 1;
    }
    return PMIX_SUCCESS;
}

/* Start one rank; on failure it is reported as FAILED_TO_START. */
static pmix_status_t start_rank(rank_proc_t *rp, const char *path,
                                char **base_env)
{
    rdp_run_spawn_t sp;
    rdp_run_child_t child;
    char **env = strv_dup(base_env);
    char detail[PATH_MAX + 64];
    pmix_status_t status;

    if (env == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = PMIx_server_setup_fork(&rp->proc, &env);
    if (status != PMIX_SUCCESS) {
        say("PMIx_server_setup_fork for rank %u failed: %s", rp->proc.rank,
            PMIx_Error_string(status));
        rdp_ctl_strv_free(env);
        return status;
    }
    sp.path      = path;
    sp.argv      = dmn.launch.argv;
    sp.envp      = env;
    sp.cwd       = dmn.launch.cwd;
    sp.stdin_fd  = dmn.devnull;
    sp.pdeathsig = SIGKILL;
    status       = rdp_run_spawn_start(&sp, &child);
    if (status != PMIX_SUCCESS) {
        int err = errno;

        snprintf(detail, sizeof(detail), "cannot start '%s'",
                 dmn.launch.argv[0]);
        send_exit(rp, RDP_CTL_FAILED_TO_START, err, detail);
        rank_set_ended(rp);
        rdp_ctl_strv_free(env);
        return status;
    }
    rdp_ctl_strv_free(env);
    rp->pid       = child.pid;
    rp->state     = RANK_RUNNING;
    rp->status_fd = child.status_fd;
    status        = pipe_watch(rp, &rp->out, RDP_CTL_STDOUT, child.out_fd);
    if (status == PMIX_SUCCESS) {
        status = pipe_watch(rp, &rp->err, RDP_CTL_STDERR, child.err_fd);
    } else {
        close(child.err_fd);
    }
    /* without a watcher the output is lost, the rank still runs */
    return PMIX_SUCCESS;
}

static void send_launched(pmix_status_t status, const char *error)
{
    uint32_t *ranks = rdp_calloc(dmn.nlocal + 1, sizeof(uint32_t));
    uint32_t *pids  = rdp_calloc(dmn.nlocal + 1, sizeof(uint32_t));
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (ranks != NULL && pids != NULL) {
        for (uint32_t i = 0; i < dmn.nlocal; i++) {
            ranks[i] = dmn.ranks[i].proc.rank;
            pids[i]  = dmn.ranks[i].pid > 0 ? (uint32_t)dmn.ranks[i].pid : 0;
        }
        if (rdp_ctl_launched_pack(&buf, status, error, ranks, pids, dmn.nlocal)
            == PMIX_SUCCESS) {
            send_msg(RDP_CTL_LAUNCHED, &buf);
        }
    } else if (rdp_ctl_launched_pack(&buf, status, error, NULL, NULL, 0)
               == PMIX_SUCCESS) {
        send_msg(RDP_CTL_LAUNCHED, &buf);
    }
    rdp_buf_cleanup(&buf);
    rdp_free(ranks);
    rdp_free(pids);
}

static void launch_job(const void *payload, size_t len)
{
    const rdp_ctl_node_t *me;
    char **base_env = NULL;
    char *path      = NULL;
    char error[512];
    pmix_status_t status;
    int err;

    if (dmn.have_job) {
        rdp_log_warn(RUN, "ignoring a second LAUNCH");
        return;
    }
    status = rdp_ctl_launch_unpack(payload, len, &dmn.launch);
    if (status != PMIX_SUCCESS) {
        say("malformed launch message");
        dmn.exit_code = 1;
        send_launched(status, "malformed launch message");
        return;
    }
    dmn.have_job = 1;
    snprintf(dmn.nspace, sizeof(dmn.nspace), "%s", dmn.launch.nspace);
    if (dmn.node_id >= dmn.launch.nnodes) {
        snprintf(error, sizeof(error), "node id %u not in the job's %u nodes",
                 dmn.node_id, dmn.launch.nnodes);
        status = PMIX_ERR_BAD_PARAM;
        goto fail;
    }
    me        = &dmn.launch.nodes[dmn.node_id];
    dmn.ranks = rdp_calloc(me->nranks + 1, sizeof(*dmn.ranks));
    if (dmn.ranks == NULL) {
        snprintf(error, sizeof(error), "out of memory");
        status = PMIX_ERR_NOMEM;
        goto fail;
    }
    dmn.nlocal = me->nranks;
    for (uint32_t i = 0; i < me->nranks; i++) {
        rank_proc_t *rp = &dmn.ranks[i];

        PMIX_LOAD_PROCID(&rp->proc, dmn.nspace, me->ranks[i]);
        rp->local_rank = i;
        rp->out.fd     = -1;
        rp->err.fd     = -1;
        rp->status_fd  = -1;
    }
    status = make_dirs();
    if (status != PMIX_SUCCESS) {
        snprintf(error, sizeof(error), "cannot create the job's directories");
        goto fail;
    }
    status = register_job();
    if (status != PMIX_SUCCESS) {
        snprintf(error, sizeof(error),
                 "cannot register the job with the PMIx server: %s",
                 PMIx_Error_string(status));
        goto fail;
    }
    base_env = build_base_env();
    if (base_env == NULL) {
        snprintf(error, sizeof(error), "out of memory");
        status = PMIX_ERR_NOMEM;
        goto fail;
    }
    dmn.launch_done = 1;
    err = rdp_run_spawn_resolve(dmn.launch.argv[0], base_env, dmn.launch.cwd,
                                &path);
    if (err != 0) {
        /* report once (first local rank); the job ends anyway */
        send_launched(PMIX_SUCCESS, NULL);
        snprintf(error, sizeof(error), "cannot execute '%s'",
                 dmn.launch.argv[0]);
        if (dmn.nlocal > 0) {
            send_exit(&dmn.ranks[0], RDP_CTL_FAILED_TO_START, err, error);
        }
        for (uint32_t i = 0; i < dmn.nlocal; i++) {
            rank_set_ended(&dmn.ranks[i]);
        }
        rdp_ctl_strv_free(base_env);
        check_done();
        return;
    }
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        if (dmn.terminating) {
            rank_set_ended(&dmn.ranks[i]);
            continue;
        }
        status = start_rank(&dmn.ranks[i], path, base_env);
        if (status != PMIX_SUCCESS) {
            /* stop here: the failure ends the job; the rest never ran */
            if (dmn.ranks[i].state != RANK_ENDED) {
                snprintf(error, sizeof(error), "cannot start rank %u: %s",
                         dmn.ranks[i].proc.rank, PMIx_Error_string(status));
                send_exit(&dmn.ranks[i], RDP_CTL_FAILED_TO_START, EINVAL,
                          error);
                rank_set_ended(&dmn.ranks[i]);
            }
            for (uint32_t j = i + 1; j < dmn.nlocal; j++) {
                rank_set_ended(&dmn.ranks[j]);
            }
            break;
        }
    }
    rdp_free(path);
    rdp_ctl_strv_free(base_env);
    send_launched(PMIX_SUCCESS, NULL);
    check_done();
    return;

fail:
    say("%s", error);
    send_launched(status, error);
    /* nothing runs here: the launcher ends the job and sends SHUTDOWN */
    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        rank_set_ended(&dmn.ranks[i]);
    }
    dmn.launch_done = 1;
    dmn.done_sent   = 1; /* LAUNCHED carried the error; no DONE needed */
}

/* ------------------------------------------------------------------ */
/* launcher messages                                                    */

static void chan_msg_cb(rdp_run_chan_t *chan, uint16_t cmd, const void *payload,
                        size_t len, void *arg)
{
    rdp_ctl_kill_t kill_m;

    switch (cmd) {
    case RDP_CTL_LAUNCH:
        launch_job(payload, len);
        break;
    case RDP_CTL_KILL:
        if (rdp_ctl_kill_unpack(payload, len, &kill_m) != PMIX_SUCCESS) {
            rdp_log_warn(RUN, "malformed kill order");
            break;
        }
        if (kill_m.mode == RDP_CTL_KILL_TERMINATE) {
            terminate_job();
        } else if (kill_m.mode == RDP_CTL_KILL_NOW) {
            dmn.terminating = dmn.terminating ? dmn.terminating : 1;
            signal_ranks(SIGKILL, 1);
        } else {
            signal_ranks(kill_m.signo, 0);
        }
        break;
    case RDP_CTL_SHUTDOWN:
        if (!dmn.stopping) {
            dmn.stopping = 1;
            rdp_loop_stop(dmn.loop);
        }
        break;
    default:
        rdp_log_warn(RUN, "unexpected control message %u", cmd);
        break;
    }
}

static void lose_launcher(const char *why)
{
    if (dmn.lost_launcher || dmn.stopping) {
        return;
    }
    dmn.lost_launcher = 1;
    dmn.exit_code     = 1;
    if (dmn.nended < dmn.nlocal) {
        say("%s; terminating the job", why);
        terminate_job();
    }
    check_stop();
}

static void chan_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    if (dmn.stopping) {
        return;
    }
    lose_launcher("lost the connection to rdpmix-run");
}

static void signal_cb(int signo, void *arg)
{
    char desc[64];

    rdp_run_signal_desc(signo, desc, sizeof(desc));
    if (dmn.lost_launcher) {
        /* a second signal: do not wait for the grace period */
        signal_ranks(SIGKILL, 1);
        return;
    }
    rdp_log_info(RUN, "received signal %s", desc);
    lose_launcher("received a termination signal");
    if (dmn.nended == dmn.nlocal && !dmn.stopping) {
        dmn.stopping = 1;
        rdp_loop_stop(dmn.loop);
    }
}

/* ------------------------------------------------------------------ */
/* startup and shutdown                                                 */

static void usage(FILE *f)
{
    fprintf(f, "Usage: rdpmixd --ctl HOST:PORT --secret-fd FD [options]\n"
               "\n"
               "The per-node daemon of rdpmix-run: a PMIx server that starts\n"
               "the ranks of a job, forwards their output and reports their\n"
               "exit statuses. It is started by rdpmix-run, not by hand.\n"
               "\n"
               "  --ctl HOST:PORT        rdpmix-run's control address\n"
               "  --secret-fd FD         read the job secret (hex) from FD\n"
               "  --node-id N            index of this node in the job (0)\n"
               "  --node-name NAME       node name given to the ranks\n"
               "                         (default: the host name)\n"
               "  --daemon-nspace NS     the daemons' own PMIx namespace\n"
               "  -h, --help             this text\n"
               "  -V, --version          version\n"
               "\n"
               "Environment: RDPMIX_LIBDIR (library directory put first in\n"
               "the ranks' LD_LIBRARY_PATH), RDPMIX_KILL_GRACE (seconds\n"
               "between SIGTERM and SIGKILL, default 3), TMPDIR.\n");
}

static const char *opt_value(int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    const char *eq  = strchr(arg, '=');

    if (eq != NULL) {
        return eq + 1;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "rdpmixd: option %s needs a value\n", arg);
        exit(2);
    }
    return argv[++(*i)];
}

static int opt_is(const char *arg, const char *name)
{
    size_t len = strlen(name);

    return strncmp(arg, name, len) == 0
           && (arg[len] == '\0' || arg[len] == '=');
}

static void parse_args(int argc, char **argv)
{
    uint32_t v;

    dmn.secret_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("rdpmixd (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        } else if (opt_is(a, "--ctl")) {
            dmn.ctl_addr = rdp_strdup(opt_value(argc, argv, &i));
        } else if (opt_is(a, "--secret-fd")) {
            if (rdp_run_parse_u32(opt_value(argc, argv, &i), 0, INT_MAX, &v)
                != 0) {
                fprintf(stderr, "rdpmixd: bad --secret-fd\n");
                exit(2);
            }
            dmn.secret_fd = (int)v;
        } else if (opt_is(a, "--node-id")) {
            if (rdp_run_parse_u32(opt_value(argc, argv, &i), 0,
                                  RDP_CTL_MAX_JOB_SIZE, &v)
                != 0) {
                fprintf(stderr, "rdpmixd: bad --node-id\n");
                exit(2);
            }
            dmn.node_id = v;
        } else if (opt_is(a, "--node-name")) {
            dmn.node_name = rdp_strdup(opt_value(argc, argv, &i));
        } else if (opt_is(a, "--daemon-nspace")) {
            dmn.dvm_nspace = rdp_strdup(opt_value(argc, argv, &i));
        } else {
            fprintf(stderr, "rdpmixd: unknown argument '%s'\n", a);
            usage(stderr);
            exit(2);
        }
    }
    if (dmn.ctl_addr == NULL || dmn.secret_fd < 0) {
        fprintf(stderr, "rdpmixd: --ctl and --secret-fd are required "
                        "(rdpmixd is started by rdpmix-run)\n");
        exit(2);
    }
}

static void read_secret(void)
{
    char hex[2 * RDP_CTL_SECRET_LEN + 2];
    size_t got = 0;
    int fd;

    while (got < sizeof(hex) - 1) {
        ssize_t n = read(dmn.secret_fd, hex + got, sizeof(hex) - 1 - got);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    hex[got]                  = '\0';
    hex[strcspn(hex, "\r\n")] = '\0';
    if (rdp_run_hex_decode(hex, dmn.secret, sizeof(dmn.secret)) != 0) {
        fatal("no valid job secret on descriptor %d", dmn.secret_fd);
    }
    explicit_bzero(hex, sizeof(hex));
    /* the descriptor is done with: stdin becomes /dev/null */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && dmn.secret_fd <= 2) {
        dup2(fd, dmn.secret_fd);
        close(fd);
    } else {
        close(dmn.secret_fd);
        if (fd >= 0) {
            close(fd);
        }
    }
}

static char *default_node_name(void)
{
    char host[256];

    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    return rdp_strdup(host);
}

/* The ranks must load this build's libpmix.so.2 (docs/run.md). */
static char *pick_libdir(void)
{
    const char *env = getenv("RDPMIX_LIBDIR");
    char *exe_dir   = NULL;
    char a[PATH_MAX], b[PATH_MAX];
    struct stat sb;
    const char *pick = RDPMIX_LIBDIR;

    if (env != NULL && env[0] != '\0') {
        return rdp_strdup(env);
    }
    if (rdp_run_exe_dir(&exe_dir) == PMIX_SUCCESS) {
        int installed = realpath(exe_dir, a) != NULL
                        && realpath(RDPMIX_BINDIR, b) != NULL
                        && strcmp(a, b) == 0;

        if (!installed && stat(RDPMIX_BUILD_LIBDIR, &sb) == 0) {
            pick = RDPMIX_BUILD_LIBDIR;
        }
        rdp_free(exe_dir);
    }
    return rdp_strdup(pick);
}

static int connect_ctl(void)
{
    char *addr = rdp_strdup(dmn.ctl_addr);
    char *colon;
    struct addrinfo hints, *res = NULL, *ai;
    int fd = -1, rc;

    if (addr == NULL) {
        fatal("out of memory");
    }
    colon = strrchr(addr, ':');
    if (colon == NULL || colon == addr || colon[1] == '\0') {
        fatal("bad control address '%s' (expected HOST:PORT)", dmn.ctl_addr);
    }
    *colon = '\0';
    if (addr[0] == '[' && colon[-1] == ']') {
        colon[-1] = '\0';
        memmove(addr, addr + 1, strlen(addr));
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc                = getaddrinfo(addr, colon + 1, &hints, &res);
    if (rc != 0) {
        fatal("cannot resolve control address '%s': %s", dmn.ctl_addr,
              gai_strerror(rc));
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fatal("cannot connect to rdpmix-run at %s: %s", dmn.ctl_addr,
              strerror(errno));
    }
    rdp_free(addr);
    return fd;
}

static void send_hello(void)
{
    rdp_ctl_hello_t m;
    rdp_buf_t buf;

    memcpy(m.secret, dmn.secret, sizeof(m.secret));
    m.node_id   = dmn.node_id;
    m.pid       = (uint32_t)getpid();
    m.node_name = dmn.node_name;
    m.tmpdir    = dmn.tmpdir;
    rdp_buf_init(&buf);
    if (rdp_ctl_hello_pack(&buf, &m) != PMIX_SUCCESS) {
        fatal("cannot pack the hello message");
    }
    explicit_bzero(m.secret, sizeof(m.secret));
    send_msg(RDP_CTL_HELLO, &buf);
    rdp_buf_cleanup(&buf);
}

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char path[PATH_MAX];

    if (base == NULL || base[0] == '\0') {
        base = "/tmp";
    }
    snprintf(path, sizeof(path), "%s/rdpmixd.XXXXXX", base);
    if (mkdtemp(path) == NULL) {
        fatal("cannot create a directory under %s: %s", base, strerror(errno));
    }
    dmn.tmpdir = rdp_strdup(path);
}

static void start_server(void)
{
    pmix_info_t info[4];
    pmix_rank_t rank = dmn.node_id;
    pmix_status_t status;

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, dmn.tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_NSPACE, dmn.dvm_nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[3], PMIX_HOSTNAME, dmn.node_name, PMIX_STRING);
    status = PMIx_server_init(&host_module, info, 4);
    for (int i = 0; i < 4; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (status != PMIX_SUCCESS) {
        say("PMIx_server_init failed: %s", PMIx_Error_string(status));
        rdp_run_rmtree(dmn.tmpdir);
        exit(1);
    }
    dmn.server_up = 1;
}

static void deregister_all(void)
{
    opwait_t *ow;

    for (uint32_t i = 0; i < dmn.nlocal; i++) {
        if (!dmn.ranks[i].registered) {
            continue;
        }
        ow = opwait_create();
        if (ow == NULL) {
            break;
        }
        PMIx_server_deregister_client(&dmn.ranks[i].proc, opwait_cb, ow);
        if (opwait_finish(ow, "deregister_client") == PMIX_ERR_TIMEOUT) {
            return;
        }
        dmn.ranks[i].registered = 0;
    }
    if (dmn.nspace_registered) {
        ow = opwait_create();
        if (ow != NULL) {
            PMIx_server_deregister_nspace(dmn.nspace, opwait_cb, ow);
            if (opwait_finish(ow, "deregister_nspace") != PMIX_ERR_TIMEOUT) {
                dmn.nspace_registered = 0;
            }
        }
    }
}

/* After the loop: nothing of the job may survive us. */
static void reap_remaining(void)
{
    double deadline = rdp_time_now() + 5.0;
    int wstatus;
    pid_t pid;

    signal_ranks(SIGKILL, 1);
    while (dmn.nended < dmn.nlocal && rdp_time_now() < deadline) {
        pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid > 0) {
            rank_proc_t *rp = rank_by_pid(pid);

            if (rp != NULL) {
                rank_reaped(rp, wstatus);
            }
        } else if (pid < 0 && errno == ECHILD) {
            break;
        } else {
            struct timespec ts = {0, 10 * 1000 * 1000};

            nanosleep(&ts, NULL);
        }
    }
}

static void cleanup(void)
{
    reap_remaining();
    if (dmn.server_up) {
        deregister_all();
        PMIx_server_finalize();
        dmn.server_up = 0;
    }
    if (dmn.tmpdir != NULL && rdp_run_rmtree(dmn.tmpdir) != 0) {
        say("could not remove all of %s", dmn.tmpdir);
    }
    if (dmn.chan != NULL) {
        if (rdp_run_chan_is_open(dmn.chan)) {
            rdp_run_chan_flush_blocking(dmn.chan, 5.0);
        }
        rdp_run_chan_destroy(dmn.chan);
        dmn.chan = NULL;
    }
    rdp_sigwatch_destroy(dmn.sig_chld);
    rdp_sigwatch_destroy(dmn.sig_term);
    rdp_sigwatch_destroy(dmn.sig_int);
    rdp_sigwatch_destroy(dmn.sig_hup);
    rdp_timer_destroy(dmn.grace_timer);
    rdp_loop_destroy(dmn.loop);
    for (uint32_t i = 0; dmn.procdirs != NULL && i < dmn.nlocal; i++) {
        rdp_free(dmn.procdirs[i]);
    }
    rdp_free(dmn.procdirs);
    rdp_free(dmn.ranks);
    rdp_ctl_launch_cleanup(&dmn.launch);
    rdp_free(dmn.nsdir);
    rdp_free(dmn.tmpdir);
    rdp_free(dmn.libdir);
    rdp_free(dmn.ctl_addr);
    rdp_free(dmn.node_name);
    rdp_free(dmn.dvm_nspace);
    if (dmn.devnull >= 0) {
        close(dmn.devnull);
    }
}

int main(int argc, char **argv)
{
    pmix_status_t status;
    int fd;

    rdp_log_init();
    rdp_log_set_ident("rdpmixd");
    dmn.devnull = -1;
    parse_args(argc, argv);
    if (dmn.node_name == NULL) {
        dmn.node_name = default_node_name();
    }
    if (dmn.dvm_nspace == NULL) {
        char ns[64];

        snprintf(ns, sizeof(ns), "rdpmixd.%d", (int)getpid());
        dmn.dvm_nspace = rdp_strdup(ns);
    }
    if (dmn.node_name == NULL || dmn.dvm_nspace == NULL
        || dmn.ctl_addr == NULL) {
        fatal("out of memory");
    }
    read_secret();
    signal(SIGPIPE, SIG_IGN);
    dmn.grace   = rdp_run_env_seconds("RDPMIX_KILL_GRACE", 3.0);
    dmn.libdir  = pick_libdir();
    dmn.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (dmn.libdir == NULL || dmn.devnull < 0) {
        fatal("cannot set up: %s", strerror(errno));
    }

    status = rdp_loop_create(&dmn.loop);
    if (status != PMIX_SUCCESS) {
        fatal("cannot create the event loop: %s", PMIx_Error_string(status));
    }
    /* SIGCHLD before any fork, so no exit goes unnoticed */
    if (rdp_sigwatch_create(dmn.loop, SIGCHLD, sigchld_cb, NULL, &dmn.sig_chld)
            != PMIX_SUCCESS
        || rdp_sigwatch_create(dmn.loop, SIGTERM, signal_cb, NULL,
                               &dmn.sig_term)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(dmn.loop, SIGINT, signal_cb, NULL, &dmn.sig_int)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(dmn.loop, SIGHUP, signal_cb, NULL, &dmn.sig_hup)
               != PMIX_SUCCESS
        || rdp_timer_create(dmn.loop, grace_cb, NULL, &dmn.grace_timer)
               != PMIX_SUCCESS) {
        fatal("cannot set up signal handling");
    }

    make_tmpdir();
    start_server();

    fd     = connect_ctl();
    status = rdp_run_chan_create(dmn.loop, fd, RDP_CTL_MAX_MSG, chan_msg_cb,
                                 chan_close_cb, NULL, &dmn.chan);
    if (status != PMIX_SUCCESS) {
        say("cannot set up the control channel: %s", PMIx_Error_string(status));
        dmn.exit_code = 1;
        cleanup();
        return 1;
    }
    rdp_run_chan_set_drain_cb(dmn.chan, IO_LOW_WATER, chan_drain_cb);
    send_hello();

    rdp_loop_run(dmn.loop);
    cleanup();
    return dmn.exit_code;
}
