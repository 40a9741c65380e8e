/* rdpmixd_job.c - rdpmixd's job: registration, ranks, output, exits */
#include "config.h"
#include "run/rdpmixd_int.h"
#include "run/fabric.h"
#include "run/jobinfo.h"
#include "run/spawn.h"
#include "run/util.h"
#include "core/topo/topo.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix.h>
#include <rdpmix.h>

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static daemon_t *const dm = &rdp_run_dmn;

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
        rdp_run_dmn_say(
            "the PMIx server did not complete %s within %.0f seconds", what,
            SERVER_WAIT);
        return status;
    }
    rdp_wait_cleanup(&ow->w);
    rdp_free(ow);
    return status;
}

void rdp_run_dmn_check_stop(void)
{
    if (dm->stopping) {
        return;
    }
    /* with the launcher gone, nobody will send SHUTDOWN */
    if (dm->lost_launcher && dm->nended == dm->nlocal) {
        dm->stopping = 1;
        rdp_loop_stop(dm->loop);
    }
}

static void check_done(void)
{
    if (!dm->have_job || !dm->launch_done || dm->nended < dm->nlocal) {
        return;
    }
    if (dm->grace_timer != NULL) {
        rdp_timer_cancel(dm->grace_timer);
    }
    if (!dm->done_sent) {
        dm->done_sent = 1;
        rdp_run_dmn_send(RDP_CTL_DONE, NULL);
    }
    rdp_run_dmn_check_stop();
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
        rdp_run_dmn_send(RDP_CTL_IO, &buf);
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
        rdp_run_dmn_send(RDP_CTL_IO, &buf);
    }
    rdp_buf_cleanup(&buf);
    return n;
}

static void io_pause(int pause)
{
    dm->io_paused = pause;
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_pipe_t *pipes[2] = {&dm->ranks[i].out, &dm->ranks[i].err};

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
    if (!dm->io_paused && dm->chan != NULL
        && rdp_run_chan_queued(dm->chan) > IO_HIGH_WATER) {
        io_pause(1);
    }
}

void rdp_run_dmn_drain_cb(rdp_run_chan_t *chan, void *arg)
{
    if (dm->io_paused) {
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
        rdp_fdwatch_create(dm->loop, fd, RDP_FD_READ, pipe_cb, pp, &pp->watch);
    if (status != PMIX_SUCCESS) {
        close(fd);
        pp->fd = -1;
        return status;
    }
    if (!dm->io_paused) {
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
        rdp_run_dmn_send(cmd, &buf);
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
        dm->nended++;
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
                     dm->launch.cwd ? dm->launch.cwd : "?");
        } else {
            snprintf(detail, sizeof(detail), "cannot execute '%s'",
                     dm->launch.argv[0]);
        }
        send_exit(rp, RDP_CTL_FAILED_TO_START, err, detail);
    } else if (rp->by_request) {
        send_exit(rp, RDP_CTL_TERMINATED,
                  WIFSIGNALED(wstatus) ? WTERMSIG(wstatus)
                                       : WEXITSTATUS(wstatus),
                  NULL);
    } else if (WIFSIGNALED(wstatus)) {
        send_exit(rp, RDP_CTL_SIGNALED, WTERMSIG(wstatus), NULL);
        rdp_run_dmn_rank_failed(&rp->proc, 128 + WTERMSIG(wstatus));
    } else {
        send_exit(rp, RDP_CTL_EXITED, WEXITSTATUS(wstatus), NULL);
        if (WEXITSTATUS(wstatus) != 0) {
            rdp_run_dmn_rank_failed(&rp->proc, WEXITSTATUS(wstatus));
        }
    }
    if (rp->status_fd >= 0) {
        close(rp->status_fd);
        rp->status_fd = -1;
    }
    rank_set_ended(rp);
}

static rank_proc_t *rank_by_pid(pid_t pid)
{
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        if (dm->ranks[i].pid == pid && dm->ranks[i].state == RANK_RUNNING) {
            return &dm->ranks[i];
        }
    }
    return NULL;
}

static rank_proc_t *rank_by_proc(const pmix_proc_t *proc)
{
    if (!dm->have_job || proc == NULL
        || strncmp(proc->nspace, dm->nspace, PMIX_MAX_NSLEN) != 0) {
        return NULL;
    }
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        if (dm->ranks[i].proc.rank == proc->rank) {
            return &dm->ranks[i];
        }
    }
    return NULL;
}

void rdp_run_dmn_sigchld_cb(int signo, void *arg)
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

/* Signal every running rank's process group.  SIGTERM reaches a rank at
 * most once: a second one (the job ending while a forwarded SIGTERM is
 * being handled) would run its handler again, halfway through; a rank
 * that ignores the first gets SIGKILL after the grace period. */
void rdp_run_dmn_signal_ranks(int signo, int include_ended)
{
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_proc_t *rp = &dm->ranks[i];

        if (rp->pid <= 0) {
            continue;
        }
        if ((rp->state == RANK_RUNNING) && (signo == SIGTERM)) {
            if (rp->termed) {
                continue;
            }
            rp->termed = 1;
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

void rdp_run_dmn_grace_cb(void *arg)
{
    rdp_log_debug(RUN, "grace period over: killing what is left");
    rdp_run_dmn_signal_ranks(SIGKILL, 1);
}

/* SIGTERM now, SIGKILL after the grace period. */
void rdp_run_dmn_terminate(void)
{
    if (dm->terminating == 0) {
        dm->terminating = 1;
    }
    rdp_run_dmn_signal_ranks(SIGTERM, 1);
    rdp_run_dmn_signal_ranks(SIGCONT, 0);
    if (dm->grace_timer != NULL && dm->nended < dm->nlocal) {
        rdp_timer_start(dm->grace_timer, dm->grace);
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
        if (dm->chan == NULL || !rdp_run_chan_is_open(dm->chan)) {
            /* nobody to decide for us: end the job here */
            rdp_run_dmn_terminate();
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
    if (rdp_loop_post(dm->loop, upcall_run, u) != PMIX_SUCCESS) {
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

pmix_server_module_t rdp_run_dmn_module = {
    .client_connected = host_client_connected,
    .client_finalized = host_client_finalized,
    .abort            = host_abort,
    .publish          = rdp_run_dmn_publish,
    .lookup           = rdp_run_dmn_lookup,
    .unpublish        = rdp_run_dmn_unpublish,
    .notify_event     = rdp_run_dmn_notify_event,
    .log              = rdp_run_dmn_host_log,
    .job_control      = rdp_run_dmn_host_job_control,
    .query            = rdp_run_dmn_host_query,
    /* fence_nb stays NULL: the server completes collectives itself, on
     * one node alone and across nodes with the engine (rdpmixd
     * --engine); connect, disconnect and direct_modex serve only
     * operations with other launchers' jobs (rdpmixd_xconn.c) */
    .connect      = rdp_run_dmn_connect,
    .disconnect   = rdp_run_dmn_disconnect,
    .direct_modex = rdp_run_dmn_direct_modex,
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

/* set NAME=value; 0 or -1 */
static int env_put_pair(char ***envp, size_t *n, const char *name,
                        const char *value)
{
    size_t len  = strlen(name) + strlen(value) + 2;
    char *entry = rdp_malloc(len);
    int rc;

    if (entry == NULL) {
        return -1;
    }
    snprintf(entry, len, "%s=%s", name, value);
    rc = env_put(envp, n, entry);
    rdp_free(entry);
    return rc;
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

/* rdpmix-run asked for Open MPI's direct-launch trigger (docs/run.md). */
static int ompi_personality(void)
{
    for (char **e = dm->launch.env; e != NULL && *e != NULL; e++) {
        if (env_name_is(*e, "JSM_JSRUN_PORT")) {
            return 1;
        }
    }
    return 0;
}

/* More ranks here than CPUs this daemon may run on. */
static int node_oversubscribed(void)
{
    cpu_set_t set;
    int ncpus = 0;

    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        ncpus = CPU_COUNT(&set);
    }
    if (ncpus <= 0) {
        ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    }
    return ncpus > 0 && dm->nlocal > (uint32_t)ncpus;
}

/* A variable set for ourselves only (UCX fork-safety settings; under
 * srun the variables srun set for our task: "SLURM_*"). */
static int daemon_only(const char *entry)
{
    for (size_t i = 0;
         dm->daemon_only_env != NULL && dm->daemon_only_env[i] != NULL; i++) {
        const char *pat = dm->daemon_only_env[i];
        size_t len      = strlen(pat);

        if (len > 0 && pat[len - 1] == '*' ? strncmp(entry, pat, len - 1) == 0
                                           : env_name_is(entry, pat)) {
            return 1;
        }
    }
    return 0;
}

/* Whether the environment being built (@a env, @a n entries) or the
 * LAUNCH's additions name @a var. */
static bool env_has(char **env, size_t n, const char *var)
{
    for (char **e = dm->launch.env; e != NULL && *e != NULL; e++) {
        if (env_name_is(*e, var)) {
            return true;
        }
    }
    return env_find(env, n, var) != NULL;
}

/* Whether Open MPI's parameter files (Debian's system file, the one
 * under $OPAL_PREFIX, the user's) choose the components of @a framework. */
static bool ompi_files_select(const char *framework)
{
    const char *prefix = getenv("OPAL_PREFIX");
    const char *home   = getenv("HOME");
    char path[PATH_MAX];

    if (rdp_run_ompi_file_selects("/etc/openmpi/openmpi-mca-params.conf",
                                  framework)) {
        return true;
    }
    if (prefix != NULL && prefix[0] != '\0') {
        snprintf(path, sizeof(path), "%s/etc/openmpi-mca-params.conf", prefix);
        if (rdp_run_ompi_file_selects(path, framework)) {
            return true;
        }
    }
    if (home != NULL && home[0] != '\0') {
        snprintf(path, sizeof(path), "%s/.openmpi/mca-params.conf", home);
        if (rdp_run_ompi_file_selects(path, framework)) {
            return true;
        }
    }
    return false;
}

/*
 * Open MPI's personality on a node with no device any MTL could use
 * (run/fabric.h): leave out the psm, psm2 and ofi MTLs (all that Open
 * MPI 4.1 has), whose libraries' constructors sleep 200 ms in every
 * rank's MPI_Init although none can be selected without a device; the PML
 * Open MPI selects is the same (ob1).  Not when the user or the site chose
 * an MTL or a PML (OMPI_MCA_mtl / OMPI_MCA_pml in the environment or -x,
 * an include list in a parameter file), nor with RDPMIX_OMPI_SKIP_MTL=0.
 */
static int ompi_skip_mtls(char ***env, size_t *n)
{
    char dev[256];

    if (!ompi_personality() || !rdp_cfg_bool(RDP_CFG_OMPI_SKIP_MTL)
        || env_has(*env, *n, "OMPI_MCA_mtl")
        || env_has(*env, *n, "OMPI_MCA_pml") || ompi_files_select("mtl")
        || ompi_files_select("pml")) {
        return 0;
    }
    if (rdp_run_fabric_device(NULL, dev, sizeof(dev))) {
        rdp_log_debug(RUN, "%s: Open MPI's MTLs left as they are", dev);
        return 0;
    }
    return env_put(env, n, "OMPI_MCA_mtl=^psm,psm2,ofi");
}

/*
 * The ranks' environment before setup_fork: ours without inherited PMIX_*
 * variables (a launcher run inside another PMIx job must not leak that
 * job's identity) and without the UCX settings meant for us alone, with
 * TMPDIR set to our directory in a multi-node job, plus the LAUNCH
 * additions, plus our library directory in front of LD_LIBRARY_PATH.
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
        if (strncmp(*e, "PMIX_", 5) == 0 || strchr(*e, '=') == NULL
            || daemon_only(*e)) {
            continue;
        }
        if (env_put(&env, &n, *e) != 0) {
            goto err;
        }
    }
    /* a simulated node has its own TMPDIR, as separate machines would
     * (Open MPI keeps its session directory there); -x may override it */
    if (dm->launch.nnodes > 1
        && env_put_pair(&env, &n, "TMPDIR", dm->tmpdir) != 0) {
        goto err;
    }
    /* Open MPI's personality: like mpirun, tell its ranks when this node
     * has more of them than CPUs, so that they yield instead of spinning
     * while they wait (every spinning rank takes a waiting one's CPU);
     * -x may override it */
    if (ompi_personality() && node_oversubscribed()
        && env_put(&env, &n, "OMPI_MCA_mpi_oversubscribe=1") != 0) {
        goto err;
    }
    if (ompi_skip_mtls(&env, &n) != 0) {
        goto err;
    }
    for (char **e = dm->launch.env; e != NULL && *e != NULL; e++) {
        if (env_put(&env, &n, *e) != 0) {
            goto err;
        }
    }
    old    = env_find(env, n, "LD_LIBRARY_PATH");
    len    = strlen(dm->libdir) + (old ? strlen(old) : 0) + 32;
    ldpath = rdp_malloc(len);
    if (ldpath == NULL) {
        goto err;
    }
    if (old != NULL && old[0] != '\0') {
        snprintf(ldpath, len, "LD_LIBRARY_PATH=%s:%s", dm->libdir, old);
    } else {
        snprintf(ldpath, len, "LD_LIBRARY_PATH=%s", dm->libdir);
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

    snprintf(name, sizeof(name), "%s", dm->nspace);
    sanitize(name);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        name[0] = '_';
    }
    len       = strlen(dm->tmpdir) + strlen(name) + 2;
    dm->nsdir = rdp_malloc(len);
    if (dm->nsdir == NULL) {
        return PMIX_ERR_NOMEM;
    }
    snprintf(dm->nsdir, len, "%s/%s", dm->tmpdir, name);
    if (mkdir(dm->nsdir, 0700) != 0) {
        rdp_run_dmn_say("cannot create %s: %s", dm->nsdir, strerror(errno));
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    dm->procdirs = rdp_calloc(dm->nlocal + 1, sizeof(char *));
    if (dm->procdirs == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        len             = strlen(dm->nsdir) + 16;
        dm->procdirs[i] = rdp_malloc(len);
        if (dm->procdirs[i] == NULL) {
            return PMIX_ERR_NOMEM;
        }
        snprintf(dm->procdirs[i], len, "%s/%u", dm->nsdir,
                 dm->ranks[i].proc.rank);
        if (mkdir(dm->procdirs[i], 0700) != 0) {
            rdp_run_dmn_say("cannot create %s: %s", dm->procdirs[i],
                            strerror(errno));
            return PMIX_ERR_FILE_OPEN_FAILURE;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_dmn_register_nspace(const char *nspace, int nlocal,
                                          pmix_info_t *info, size_t ninfo)
{
    opwait_t *ow = opwait_create();
    pmix_status_t status;

    if (ow == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = PMIx_server_register_nspace(nspace, nlocal, info, ninfo,
                                         opwait_cb, ow);
    if (status == PMIX_SUCCESS) {
        return opwait_finish(ow, "register_nspace");
    }
    rdp_wait_cleanup(&ow->w);
    rdp_free(ow);
    return status;
}

/* Can this daemon run on every online CPU?  (A cheap test that spares
 * the usual daemon hwloc's discovery.) */
static bool may_run_everywhere(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return true; /* unknown (or more CPUs than a cpu_set_t): as unbound */
    }
    return online > 0 && CPU_COUNT(&set) >= online;
}

/*
 * The binding every local rank inherits from this daemon (it binds none
 * itself): *@a cpuset_p a bare hwloc list, *@a locality_p its locality
 * string, both malloc'ed, or both NULL when the daemon may run on every
 * PU (the usual case) or its binding cannot be read.
 */
static void inherited_binding(char **cpuset_p, char **locality_p)
{
    pmix_cpuset_t cs = {NULL, NULL};
    char *text = NULL, *bare = NULL, *locality = NULL;

    *cpuset_p   = NULL;
    *locality_p = NULL;
    if (may_run_everywhere()) {
        return; /* the usual case: no topology to load */
    }
    if (rdp_topo_get_binding(false, &cs) != PMIX_SUCCESS) {
        return;
    }
    if (rdp_topo_cpuset_print(&cs, &text) == PMIX_SUCCESS
        && rdp_topo_locality_string(NULL, text, &locality) == PMIX_SUCCESS
        && locality != NULL) {
        bare = strchr(text, ':');
        bare = rdp_strdup(bare != NULL ? bare + 1 : text);
    }
    if (bare != NULL) {
        *cpuset_p   = bare;
        *locality_p = locality;
    } else {
        free(locality);
    }
    free(text);
    PMIx_Cpuset_destruct(&cs);
}

/*
 * Open MPI's personality, two or more ranks here: this node's topology as
 * XML for PMIX_HWLOC_XML_V2 (malloc'ed), or NULL.  Open MPI 4.1's
 * MPI_Init loads it from that key when present and otherwise discovers
 * the machine in every rank (/sys and /proc, hwloc's plugins: 30-40 ms a
 * rank on a loaded 2-core guest); one discovery here replaces nlocal.
 * With one rank it would only move that rank's discovery in front of its
 * launch, and a program that does not link libmpi would only wait for it
 * (one that loads Open MPI some other way, e.g. through Python, discovers
 * as before).  RDPMIX_TOPO_XML=0 turns it off.
 */
static char *topology_for_ranks(void)
{
    char *xml = NULL, *path = NULL;
    int mpi;

    if (!ompi_personality() || dm->nlocal < 2
        || !rdp_cfg_bool(RDP_CFG_TOPO_XML)) {
        return NULL;
    }
    /* only for a program linked with Open MPI: for any other the
     * discovery would only delay its start */
    if (rdp_run_spawn_resolve(dm->launch.argv[0], environ, dm->launch.cwd,
                              &path)
        != 0) {
        return NULL;
    }
    mpi = rdp_run_elf_needs(path, "libmpi.so");
    rdp_free(path);
    if (!mpi) {
        return NULL;
    }
    if (rdp_topo_machine_xml(&xml) != PMIX_SUCCESS) {
        return NULL; /* the ranks discover it themselves, as before */
    }
    rdp_log_debug(RUN, "the ranks get this node's topology (%zu bytes of XML)",
                  strlen(xml));
    return xml;
}

static pmix_status_t register_job(void)
{
    rdp_run_jobinfo_params_t params = {.launch   = &dm->launch,
                                       .node_id  = dm->node_id,
                                       .tmpdir   = dm->tmpdir,
                                       .nsdir    = dm->nsdir,
                                       .procdirs = dm->procdirs};
    char *cpuset = NULL, *locality = NULL, *topo_xml = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    opwait_t *ow;
    pmix_status_t status;

    inherited_binding(&cpuset, &locality);
    topo_xml        = topology_for_ranks();
    params.cpuset   = cpuset;
    params.locality = locality;
    params.topo_xml = topo_xml;
    status          = rdp_run_jobinfo_build(&params, &info, &ninfo);
    rdp_free(cpuset);
    free(locality);
    rdp_free(topo_xml);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_run_dmn_register_nspace(dm->nspace, (int)dm->nlocal, info,
                                         ninfo);
    if (status == PMIX_ERR_TIMEOUT) {
        return status; /* info may still be in use: leak it */
    }
    PMIX_INFO_FREE(info, ninfo);
    if (status != PMIX_SUCCESS) {
        rdp_run_dmn_say("PMIx_server_register_nspace failed: %s",
                        rdp_status_name(status));
        return status;
    }
    dm->nspace_registered = 1;

    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_proc_t *rp = &dm->ranks[i];

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
            rdp_run_dmn_say(
                "PMIx_server_register_client for rank %u failed: %s",
                rp->proc.rank, rdp_status_name(status));
            return status;
        }
        rp->registered = 1;
    }
    return PMIX_SUCCESS;
}

/*
 * Engine mode: connect our server to every other node's before the job is
 * registered, so that the ranks' first fence finds the engine ready.
 * Blocking, bounded by the engine's own timeout.
 */
static pmix_status_t connect_engine(char *error, size_t errlen)
{
    const rdp_ctl_launch_t *m = &dm->launch;
    pmix_byte_object_t *addrs;
    pmix_byte_object_t key;
    pmix_status_t status;

    if (!(m->flags & RDP_CTL_FLAG_ENGINE)) {
        if (dm->engine && m->nnodes > 1) {
            snprintf(error, errlen, "a %u-node job without engine addresses",
                     m->nnodes);
            return PMIX_ERR_BAD_PARAM;
        }
        return PMIX_SUCCESS;
    }
    if (!dm->engine) {
        snprintf(error, errlen,
                 "asked to connect the engine, but started "
                 "without --engine");
        return PMIX_ERR_BAD_PARAM;
    }
    if (m->nodes[dm->node_id].engine_addr_len != dm->engine_addr_len
        || memcmp(m->nodes[dm->node_id].engine_addr, dm->engine_addr,
                  dm->engine_addr_len)
               != 0) {
        snprintf(error, errlen,
                 "the launch lists another engine address "
                 "for this node");
        return PMIX_ERR_BAD_PARAM;
    }
    addrs = rdp_calloc(m->nnodes, sizeof(*addrs));
    if (addrs == NULL) {
        snprintf(error, errlen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    /* borrowed views: rdpmix_engine_connect copies what it keeps */
    for (uint32_t n = 0; n < m->nnodes; n++) {
        addrs[n].bytes = (char *)m->nodes[n].engine_addr;
        addrs[n].size  = m->nodes[n].engine_addr_len;
    }
    key.bytes = (char *)m->engine_key;
    key.size  = sizeof(m->engine_key);
    status    = rdpmix_engine_connect(dm->node_id, m->nnodes, addrs, &key);
    rdp_free(addrs);
    /* the key is not needed any more */
    explicit_bzero(dm->launch.engine_key, sizeof(dm->launch.engine_key));
    if (status != PMIX_SUCCESS) {
        snprintf(error, errlen,
                 "cannot connect the engine to the other %u "
                 "nodes: %s",
                 m->nnodes - 1, rdp_status_name(status));
        return status;
    }
    rdp_log_debug(RUN, "engine connected to %u nodes", m->nnodes);
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
        rdp_run_dmn_say("PMIx_server_setup_fork for rank %u failed: %s",
                        rp->proc.rank, rdp_status_name(status));
        rdp_ctl_strv_free(env);
        return status;
    }
    sp.path      = path;
    sp.argv      = dm->launch.argv;
    sp.envp      = env;
    sp.cwd       = dm->launch.cwd;
    sp.stdin_fd  = dm->devnull;
    sp.pdeathsig = SIGKILL;
    status       = rdp_run_spawn_start(&sp, &child);
    if (status != PMIX_SUCCESS) {
        int err = errno;

        snprintf(detail, sizeof(detail), "cannot start '%s'",
                 dm->launch.argv[0]);
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
    uint32_t *ranks = rdp_calloc(dm->nlocal + 1, sizeof(uint32_t));
    uint32_t *pids  = rdp_calloc(dm->nlocal + 1, sizeof(uint32_t));
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (ranks != NULL && pids != NULL) {
        for (uint32_t i = 0; i < dm->nlocal; i++) {
            ranks[i] = dm->ranks[i].proc.rank;
            pids[i]  = dm->ranks[i].pid > 0 ? (uint32_t)dm->ranks[i].pid : 0;
        }
        if (rdp_ctl_launched_pack(&buf, status, error, ranks, pids, dm->nlocal)
            == PMIX_SUCCESS) {
            rdp_run_dmn_send(RDP_CTL_LAUNCHED, &buf);
        }
    } else if (rdp_ctl_launched_pack(&buf, status, error, NULL, NULL, 0)
               == PMIX_SUCCESS) {
        rdp_run_dmn_send(RDP_CTL_LAUNCHED, &buf);
    }
    rdp_buf_cleanup(&buf);
    rdp_free(ranks);
    rdp_free(pids);
}

void rdp_run_dmn_launch(const void *payload, size_t len)
{
    pmix_status_t status;

    if (dm->have_job) {
        rdp_log_warn(RUN, "ignoring a second LAUNCH");
        return;
    }
    status = rdp_ctl_launch_unpack(payload, len, &dm->launch);
    if (status != PMIX_SUCCESS) {
        rdp_run_dmn_say("malformed launch message");
        dm->exit_code = 1;
        send_launched(status, "malformed launch message");
        return;
    }
    dm->have_job = 1;
    rdp_run_dmn_send(RDP_CTL_RECEIVED, NULL);
}

void rdp_run_dmn_start(void)
{
    const rdp_ctl_node_t *me;
    char **base_env = NULL;
    char *path      = NULL;
    char error[512];
    pmix_status_t status;
    int err;

    if (!dm->have_job || dm->started) {
        rdp_log_warn(RUN, "ignoring a START %s",
                     dm->started ? "again" : "without a job");
        return;
    }
    dm->started = 1;
    snprintf(dm->nspace, sizeof(dm->nspace), "%s", dm->launch.nspace);
    if (dm->node_id >= dm->launch.nnodes) {
        snprintf(error, sizeof(error), "node id %u not in the job's %u nodes",
                 dm->node_id, dm->launch.nnodes);
        status = PMIX_ERR_BAD_PARAM;
        goto fail;
    }
    me        = &dm->launch.nodes[dm->node_id];
    dm->ranks = rdp_calloc(me->nranks + 1, sizeof(*dm->ranks));
    if (dm->ranks == NULL) {
        snprintf(error, sizeof(error), "out of memory");
        status = PMIX_ERR_NOMEM;
        goto fail;
    }
    dm->nlocal = me->nranks;
    for (uint32_t i = 0; i < me->nranks; i++) {
        rank_proc_t *rp = &dm->ranks[i];

        PMIX_LOAD_PROCID(&rp->proc, dm->nspace, me->ranks[i]);
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
    status = connect_engine(error, sizeof(error));
    if (status != PMIX_SUCCESS) {
        goto fail;
    }
    status = register_job();
    if (status != PMIX_SUCCESS) {
        snprintf(error, sizeof(error),
                 "cannot register the job with the PMIx server: %s",
                 rdp_status_name(status));
        goto fail;
    }
    /* RFC0012: this node's part of the job's network, before any fork */
    status = PMIx_server_setup_local_support(
        dm->nspace, dm->launch.net, dm->launch.nnet, NULL, NULL);
    if (status != PMIX_OPERATION_SUCCEEDED) {
        snprintf(error, sizeof(error),
                 "cannot set up the job's network on this node: %s",
                 rdp_status_name(status));
        goto fail;
    }
    base_env = build_base_env();
    if (base_env == NULL) {
        snprintf(error, sizeof(error), "out of memory");
        status = PMIX_ERR_NOMEM;
        goto fail;
    }
    dm->launch_done = 1;
    err = rdp_run_spawn_resolve(dm->launch.argv[0], base_env, dm->launch.cwd,
                                &path);
    if (err != 0) {
        /* report once (first local rank); the job ends anyway */
        send_launched(PMIX_SUCCESS, NULL);
        snprintf(error, sizeof(error), "cannot execute '%s'",
                 dm->launch.argv[0]);
        if (dm->nlocal > 0) {
            send_exit(&dm->ranks[0], RDP_CTL_FAILED_TO_START, err, error);
        }
        for (uint32_t i = 0; i < dm->nlocal; i++) {
            rank_set_ended(&dm->ranks[i]);
        }
        rdp_ctl_strv_free(base_env);
        check_done();
        return;
    }
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        if (dm->terminating) {
            rank_set_ended(&dm->ranks[i]);
            continue;
        }
        status = start_rank(&dm->ranks[i], path, base_env);
        if (status != PMIX_SUCCESS) {
            /* stop here: the failure ends the job; the rest never ran */
            if (dm->ranks[i].state != RANK_ENDED) {
                snprintf(error, sizeof(error), "cannot start rank %u: %s",
                         dm->ranks[i].proc.rank, rdp_status_name(status));
                send_exit(&dm->ranks[i], RDP_CTL_FAILED_TO_START, EINVAL,
                          error);
                rank_set_ended(&dm->ranks[i]);
            }
            for (uint32_t j = i + 1; j < dm->nlocal; j++) {
                rank_set_ended(&dm->ranks[j]);
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
    rdp_run_dmn_say("%s", error);
    send_launched(status, error);
    /* nothing runs here: the launcher ends the job and sends SHUTDOWN */
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_set_ended(&dm->ranks[i]);
    }
    dm->launch_done = 1;
    dm->done_sent   = 1; /* LAUNCHED carried the error; no DONE needed */
}

void rdp_run_dmn_deregister_all(void)
{
    opwait_t *ow;

    for (uint32_t i = 0; i < dm->nlocal; i++) {
        if (!dm->ranks[i].registered) {
            continue;
        }
        ow = opwait_create();
        if (ow == NULL) {
            break;
        }
        PMIx_server_deregister_client(&dm->ranks[i].proc, opwait_cb, ow);
        if (opwait_finish(ow, "deregister_client") == PMIX_ERR_TIMEOUT) {
            return;
        }
        dm->ranks[i].registered = 0;
    }
    if (dm->nspace_registered) {
        ow = opwait_create();
        if (ow != NULL) {
            PMIx_server_deregister_nspace(dm->nspace, opwait_cb, ow);
            if (opwait_finish(ow, "deregister_nspace") != PMIX_ERR_TIMEOUT) {
                dm->nspace_registered = 0;
            }
        }
    }
}

/* After the loop: nothing of the job may survive us. */
void rdp_run_dmn_reap_remaining(void)
{
    double deadline = rdp_time_now() + 5.0;
    int wstatus;
    pid_t pid;

    rdp_run_dmn_signal_ranks(SIGKILL, 1);
    while (dm->nended < dm->nlocal && rdp_time_now() < deadline) {
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
