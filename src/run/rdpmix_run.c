/* rdpmix_run.c - rdpmix-run: start rdpmixd, launch a job, forward its output */
#include "config.h"
#include "run/chan.h"
#include "run/ctl.h"
#include "run/iof.h"
#include "run/limits.h"
#include "run/place.h"
#include "run/util.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <pmix.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_NP          65536 /* local ranks are 16-bit (PMIX_LOCAL_RANK) */
#define MAX_NODES       1024  /* simulated nodes: one daemon process each */
#define TIMEOUT_STATUS  124   /* exit status after --timeout, as timeout(1) */
#define SHUTDOWN_WAIT   10.0  /* daemons idle this long are killed ... */
#define DAEMON_END_CPU  0.5   /* ... plus this per daemon per core */
#define DEFAULT_STARTUP 60.0  /* the job must start within this */

typedef struct dnode {
    uint32_t id;
    char *name;
    pid_t pid;
    int alive;     /* process not reaped yet */
    int hello;     /* authenticated */
    int received;  /* has the LAUNCH */
    int ready;     /* reported a successful launch */
    int spoke;     /* reported something of the launch */
    int done;      /* said DONE, failed its launch, or never got a job */
    int shutdown;  /* was sent SHUTDOWN */
    int stopped;   /* stopped by a signal (and not continued since) */
    int lost;      /* channel ended before DONE */
    int failed;    /* died or lost before DONE */
    int quiet;     /* failed while the job was already ending */
    int signalled; /* rdpmix-run sent its process group a signal */
    int reported;  /* its failure has been reported */
    struct conn *conn;
    uint32_t nranks;
    uint32_t *ranks;
    uint8_t *engine_addr; /* from its HELLO (engine mode) */
    size_t engine_addr_len;
    /* Local daemons only: what to clean up if the daemon dies without
     * doing it (its ranks' process groups, its directory). */
    uint32_t npgids;
    uint32_t *pgid_ranks; /* rank of each entry */
    uint32_t *pgids;      /* 0 once that rank's exit was reported */
    char *tmpdir;
} dnode_t;

/* A control connection: first unauthenticated, then bound to a node. */
typedef struct conn {
    rdp_list_t link;
    rdp_run_chan_t *chan;
    dnode_t *node;
} conn_t;

typedef struct launcher {
    rdp_loop_t *loop;

    /* options */
    uint32_t np;
    uint32_t nnodes;
    enum rdp_run_mapby mapby;
    uint32_t slots; /* --slots-per-node; 0: ceil(np / nnodes) */
    int engine;     /* more than one node: the servers run the engine */
    int tag_output;
    int ompi;
    uint32_t timeout;
    char **xenv; /* "NAME=value" */
    size_t nxenv;
    char **argv;

    /* job */
    uint8_t secret[RDP_CTL_SECRET_LEN];
    char nspace[PMIX_MAX_NSLEN + 1];
    char dvm_nspace[PMIX_MAX_NSLEN + 1];
    char *daemon_path;
    /* the daemons' environment (NULL: ours); its last ndaemon_env_added
     * entries are allocated, the others borrowed from environ */
    char **daemon_env;
    size_t ndaemon_env_added;
    char daemon_only[128]; /* what we added to it, "A,B" */
    int listen_fd;
    rdp_fdwatch_t *listen_watch;
    uint16_t port;
    dnode_t *nodes;
    uint32_t nhello;
    uint32_t nreceived;
    uint32_t nready;
    uint32_t nalive;
    rdp_list_t conns;
    rdp_run_iof_t *iof;
    rdp_timer_t *startup_timer;
    rdp_timer_t *timeout_timer;
    rdp_timer_t *kill_timer;
    double kill_base; /* > 0: the kill timer is armed (kill_wait) */
    rdp_timer_t *lost_timer;
    rdp_sigwatch_t *sig_int, *sig_term, *sig_hup, *sig_chld;
    double grace;

    int launched; /* LAUNCH sent */
    int started;  /* START sent */
    int ending;   /* the job is being terminated */
    int shutdown_sent;
    int have_status;
    int exit_status;
    int nsignals;
    double last_signal;
    int fwd_signo;
    int out_broken[3];
} launcher_t;

static launcher_t L;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vsay(const char *fmt, va_list ap)
{
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "rdpmix-run: %s\n", msg);
}

static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

static void set_status(int status)
{
    if (!L.have_status) {
        L.have_status = 1;
        L.exit_status = status;
    }
}

/* ------------------------------------------------------------------ */
/* output                                                               */

static void end_job(void);

static void write_out(int channel, const void *data, size_t len, void *arg)
{
    int fd = channel == RDP_CTL_STDERR ? 2 : 1;

    if (L.out_broken[fd]) {
        return;
    }
    if (rdp_run_write_all(fd, data, len) != 0) {
        /* the reader went away (`rdpmix-run ... | head`): drop further
         * output and end the job, as SIGPIPE would end a pipeline */
        L.out_broken[fd] = 1;
        if (errno == EPIPE && !L.ending) {
            set_status(128 + SIGPIPE);
            end_job();
        }
    }
}

/* ------------------------------------------------------------------ */
/* job control                                                          */

static void send_to(dnode_t *node, uint16_t cmd, rdp_buf_t *buf)
{
    if (node->conn == NULL || node->conn->chan == NULL
        || !rdp_run_chan_is_open(node->conn->chan)) {
        if (buf != NULL) {
            rdp_buf_cleanup(buf);
        }
        return;
    }
    rdp_run_chan_send(node->conn->chan, cmd, buf);
}

static void send_kill(dnode_t *node, uint8_t mode, int signo)
{
    rdp_ctl_kill_t m = {.mode = mode, .signo = signo};
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_ctl_kill_pack(&buf, &m) == PMIX_SUCCESS) {
        send_to(node, RDP_CTL_KILL, &buf);
    }
    rdp_buf_cleanup(&buf);
}

/* Signal a daemon's process group; remembered, so that a death by a
 * signal nobody here sent can still be told apart. */
static void signal_daemon(dnode_t *node, int signo)
{
    node->signalled = 1;
    kill(-node->pid, signo);
}

static void kill_daemons(int signo)
{
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].alive) {
            signal_daemon(&L.nodes[i], signo);
        }
    }
}

static void maybe_finish(void)
{
    if (L.nalive == 0) {
        rdp_loop_stop(L.loop);
    }
}

/*
 * How long the daemons still there may go without any of them finishing
 * (saying DONE or exiting) before they are killed: @a base, plus the time
 * the cores we may use need for them all to clean up.  Sharing the cores
 * fairly, they all finish together at the end of it.  A daemon needs
 * 0.05 s of processor time for that at 256 nodes and several times more
 * at 1000 (registered data of every rank and node to free, and a page
 * fault for every page it writes to after forking its ranks).
 */
static double kill_wait(double base)
{
    cpu_set_t set;
    int ncpu = 1;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
        ncpu = CPU_COUNT(&set);
    }
    return base + L.nalive * DAEMON_END_CPU / ncpu;
}

/* Kill the daemons still there after kill_wait(@a base) seconds in which
 * none of them finished: a hung daemon is killed, a slow end is not. */
static void arm_kill_timer(double base)
{
    L.kill_base = base;
    rdp_timer_start(L.kill_timer, kill_wait(base));
}

/* A daemon finished something: the kill timer starts over. */
static void daemon_progress(void)
{
    if (L.kill_base > 0) {
        rdp_timer_start(L.kill_timer, kill_wait(L.kill_base));
    }
}

static void shutdown_node(dnode_t *node)
{
    if (!node->shutdown) {
        node->shutdown = 1;
        send_to(node, RDP_CTL_SHUTDOWN, NULL);
    }
}

/*
 * Tell the daemons that are done to clean up and exit.  While the job
 * runs, they all wait until every one is done: a server that left early
 * would fail the collectives the others still run with it.  Once the job
 * is ending that no longer matters, and each goes as soon as it is done,
 * whatever the others do (a stopped or hung daemon keeps nobody else).
 */
static void maybe_shutdown(void)
{
    int all_done = 1;

    for (uint32_t i = 0; i < L.nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (node->alive && !node->done && !node->lost) {
            all_done = 0;
        } else if (L.ending) {
            shutdown_node(node);
        }
    }
    if (all_done && !L.shutdown_sent) {
        L.shutdown_sent = 1;
        for (uint32_t i = 0; i < L.nnodes; i++) {
            shutdown_node(&L.nodes[i]);
        }
        arm_kill_timer(SHUTDOWN_WAIT);
    }
    maybe_finish();
}

/*
 * End the job: every daemon terminates its ranks (SIGTERM, then SIGKILL
 * after the grace period) and then reports DONE; a daemon that has no job
 * yet is done at once.  A daemon still launching (registering the job: it
 * cannot read its channel or handle a signal until it is done) is killed
 * with what it started, and rdpmix-run removes its directory: it ran
 * nothing of the job yet, and a thousand daemons finishing a launch nobody
 * wants any more kept two cores busy for minutes.
 */
static void end_job(void)
{
    if (L.ending) {
        return;
    }
    L.ending = 1;
    rdp_timer_cancel(L.timeout_timer);
    for (uint32_t i = 0; i < L.nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (!node->alive) {
            continue;
        }
        if (node->hello && !node->lost) {
            if (!L.started) {
                node->done = 1; /* nothing runs there */
            } else if (node->ready || node->done || node->spoke) {
                /* it is forking ranks, or done with that */
                send_kill(node, RDP_CTL_KILL_TERMINATE, 0);
            } else {
                rdp_log_info(RUN,
                             "node %u (daemon pid %d) is still launching; "
                             "killing it",
                             node->id, (int)node->pid);
                signal_daemon(node, SIGKILL);
            }
        } else {
            /* never connected or lost: it cannot be asked */
            signal_daemon(node, SIGTERM);
        }
        if (node->stopped) {
            /* it must run to end its ranks and clean up */
            rdp_log_info(RUN,
                         "node %u (daemon pid %d) is stopped; "
                         "continuing it to end the job",
                         node->id, (int)node->pid);
            kill(node->pid, SIGCONT);
        }
    }
    /* a daemon that does not manage in time is killed with its group */
    arm_kill_timer(L.grace + SHUTDOWN_WAIT);
    maybe_shutdown();
}

static void kill_timer_cb(void *arg)
{
    int any = 0;

    L.kill_base = 0;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].alive) {
            say("node %u (daemon pid %d) did not exit; killing it",
                L.nodes[i].id, (int)L.nodes[i].pid);
            any = 1;
        }
    }
    if (any) {
        set_status(1);
        kill_daemons(SIGKILL);
    }
}

static void timeout_cb(void *arg)
{
    if (L.ending) {
        return;
    }
    say("the job did not finish within %u seconds; terminating it", L.timeout);
    set_status(TIMEOUT_STATUS);
    end_job();
}

/* The job must have started within the start-up timeout: every daemon
 * connected and reported its launch (engine connected, job registered,
 * ranks forked). */
static void startup_cb(void *arg)
{
    if (L.nready == L.nnodes || L.ending) {
        return;
    }
    say("the job did not start within %g seconds (%u of %u daemons "
        "connected, %u received the job, %u ready); giving up "
        "(RDPMIX_STARTUP_TIMEOUT sets the limit)",
        rdp_run_env_seconds("RDPMIX_STARTUP_TIMEOUT", DEFAULT_STARTUP),
        L.nhello, L.nnodes, L.nreceived, L.nready);
    set_status(1);
    end_job();
}

/* ------------------------------------------------------------------ */
/* messages from the daemons                                            */

static void send_launch(void)
{
    rdp_ctl_node_t *nodes;
    rdp_ctl_launch_t m;
    char cwd[PATH_MAX];
    char **env;
    size_t n = 0;
    rdp_buf_t buf;
    pmix_status_t status;

    nodes = rdp_calloc(L.nnodes, sizeof(*nodes));
    env   = rdp_calloc(L.nxenv + 2, sizeof(*env));
    if (nodes == NULL || env == NULL) {
        say("out of memory");
        rdp_free(nodes);
        rdp_free(env);
        set_status(1);
        end_job();
        return;
    }
    /* Open MPI personality first, so that -x can override it */
    if (L.ompi) {
        env[n++] = "JSM_JSRUN_PORT=rdpmix";
    }
    for (size_t i = 0; i < L.nxenv; i++) {
        env[n++] = L.xenv[i];
    }
    env[n] = NULL;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        nodes[i].name            = L.nodes[i].name;
        nodes[i].nranks          = L.nodes[i].nranks;
        nodes[i].ranks           = L.nodes[i].ranks;
        nodes[i].engine_addr     = L.nodes[i].engine_addr;
        nodes[i].engine_addr_len = L.nodes[i].engine_addr_len;
    }
    memset(&m, 0, sizeof(m));
    m.nspace   = L.nspace;
    m.job_size = L.np;
    m.nnodes   = L.nnodes;
    m.nodes    = nodes;
    m.mapby    = (char *)rdp_run_mapby_pmix(L.mapby);
    m.rankby   = (char *)rdp_run_rankby_pmix(L.mapby);
    m.argv     = L.argv;
    m.env      = env;
    m.cwd      = getcwd(cwd, sizeof(cwd));
    m.flags    = L.tag_output ? RDP_CTL_FLAG_TAG_OUTPUT : 0;
    status     = PMIX_SUCCESS;
    if (L.engine) {
        /* a fresh session key for the servers' engine; it travels only
         * over the authenticated control connections */
        m.flags |= RDP_CTL_FLAG_ENGINE;
        status = rdp_run_random(m.engine_key, sizeof(m.engine_key));
    }

    rdp_buf_init(&buf);
    if (status == PMIX_SUCCESS) {
        status = rdp_ctl_launch_pack(&buf, &m);
    }
    explicit_bzero(m.engine_key, sizeof(m.engine_key));
    if (status == PMIX_SUCCESS) {
        for (uint32_t i = 0; i < L.nnodes; i++) {
            /* each daemon gets its own copy */
            rdp_buf_t copy;

            rdp_buf_init(&copy);
            if (rdp_buf_append(&copy, buf.data, buf.size) == PMIX_SUCCESS) {
                send_to(&L.nodes[i], RDP_CTL_LAUNCH, &copy);
            }
            rdp_buf_cleanup(&copy);
        }
    }
    /* the key is in there: wipe before freeing */
    if (buf.data != NULL) {
        explicit_bzero(buf.data, buf.size);
    }
    rdp_buf_cleanup(&buf);
    rdp_free(nodes);
    rdp_free(env);
    if (status != PMIX_SUCCESS) {
        say("cannot build the launch message: %s", PMIx_Error_string(status));
        set_status(1);
        end_job();
        return;
    }
    L.launched = 1;
    if (L.timeout > 0) {
        rdp_timer_start(L.timeout_timer, L.timeout);
    }
}

static void on_hello(conn_t *c, const void *payload, size_t len)
{
    rdp_ctl_hello_t m;
    dnode_t *node;

    if (rdp_ctl_hello_unpack(payload, len, &m) != PMIX_SUCCESS) {
        say("rejected a malformed control connection");
        goto reject;
    }
    if (!rdp_run_secret_equal(m.secret, L.secret, sizeof(L.secret))) {
        say("rejected a control connection with a wrong secret");
        rdp_ctl_hello_cleanup(&m);
        goto reject;
    }
    explicit_bzero(m.secret, sizeof(m.secret));
    if (m.node_id >= L.nnodes || L.nodes[m.node_id].hello) {
        say("rejected a control connection for node %u", m.node_id);
        rdp_ctl_hello_cleanup(&m);
        goto reject;
    }
    node = &L.nodes[m.node_id];
    /* every daemon is our child for now (daemons started over ssh or
     * srun will be checked by the secret alone) */
    if (node->pid != (pid_t)m.pid) {
        say("rejected a control connection from pid %u for node %u (the "
            "daemon is pid %d)",
            m.pid, m.node_id, (int)node->pid);
        rdp_ctl_hello_cleanup(&m);
        goto reject;
    }
    if (L.engine && m.engine_addr_len == 0) {
        say("the daemon of node %u has no engine address; giving up",
            m.node_id);
        rdp_ctl_hello_cleanup(&m);
        set_status(1);
        end_job();
        goto reject;
    }
    node->tmpdir          = m.tmpdir; /* taken */
    m.tmpdir              = NULL;
    node->engine_addr     = m.engine_addr; /* taken */
    node->engine_addr_len = m.engine_addr_len;
    m.engine_addr         = NULL;
    rdp_ctl_hello_cleanup(&m);
    node->hello = 1;
    node->conn  = c;
    c->node     = node;
    rdp_run_chan_set_max_msg(c->chan, RDP_CTL_MAX_MSG);
    L.nhello++;
    rdp_log_debug(RUN, "node %u (daemon pid %d) connected", node->id,
                  (int)node->pid);
    if (L.ending && !L.started) {
        /* too late: it has nothing to do but go */
        node->done = 1;
        maybe_shutdown();
    }
    if (L.nhello == L.nnodes) {
        rdp_fdwatch_destroy(L.listen_watch);
        L.listen_watch = NULL;
        close(L.listen_fd);
        L.listen_fd = -1;
        if (!L.ending) {
            send_launch();
        }
    }
    return;

reject:
    rdp_list_del(&c->link);
    rdp_run_chan_destroy(c->chan);
    rdp_free(c);
}

static void on_launched(dnode_t *node, const void *payload, size_t len)
{
    pmix_status_t status;
    char *error = NULL;

    if (node->pgids != NULL
        || rdp_ctl_launched_unpack(payload, len, &status, &error,
                                   &node->pgid_ranks, &node->pgids,
                                   &node->npgids)
               != PMIX_SUCCESS) {
        say("malformed launch report from node %s", node->name);
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        if (!L.ending) {
            say("launch failed on node %s: %s", node->name,
                error ? error : PMIx_Error_string(status));
        }
        node->done = 1; /* nothing runs there */
        set_status(1);
        end_job();
        maybe_shutdown();
    } else if (!node->ready) {
        node->ready = 1;
        L.nready++;
        rdp_log_debug(RUN, "node %u (daemon pid %d) launched its ranks",
                      node->id, (int)node->pid);
        if (L.nready == L.nnodes) {
            rdp_timer_cancel(L.startup_timer);
        }
    }
    rdp_free(error);
}

static void on_io(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_io_t m;

    if (rdp_ctl_io_unpack(payload, len, &m) != PMIX_SUCCESS || m.rank >= L.np) {
        rdp_log_warn(RUN, "malformed output message from node %s", node->name);
        return;
    }
    if (m.len == 0) {
        rdp_run_iof_flush(L.iof, m.rank, m.channel);
    } else {
        rdp_run_iof_input(L.iof, m.rank, m.channel, m.data, m.len);
    }
}

static void on_exit_report(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_report_t m;
    char desc[96];

    if (rdp_ctl_report_unpack(payload, len, &m) != PMIX_SUCCESS
        || m.rank >= L.np || m.how == RDP_CTL_ABORTED) {
        rdp_log_warn(RUN, "malformed exit report from node %s", node->name);
        return;
    }
    rdp_run_iof_flush(L.iof, m.rank, RDP_CTL_STDOUT);
    rdp_run_iof_flush(L.iof, m.rank, RDP_CTL_STDERR);
    for (uint32_t i = 0; i < node->npgids; i++) {
        if (node->pgid_ranks[i] == m.rank) {
            node->pgids[i] = 0; /* reaped: its pid may be reused */
        }
    }
    switch (m.how) {
    case RDP_CTL_FAILED_TO_START:
        if (!L.ending) {
            say("%s: %s", m.detail ? m.detail : "cannot start a rank",
                strerror(m.value));
        }
        set_status(m.value == ENOENT ? 127 : 126);
        end_job();
        break;
    case RDP_CTL_SIGNALED:
        if (!L.ending && m.value != L.fwd_signo) {
            rdp_run_signal_desc(m.value, desc, sizeof(desc));
            say("rank %u (pid %u) killed by signal %s; terminating the job",
                m.rank, m.pid, desc);
        }
        set_status(128 + m.value);
        end_job();
        break;
    default:
        if (m.value != 0) {
            if (!L.ending) {
                say("rank %u (pid %u) exited with status %d; terminating "
                    "the job",
                    m.rank, m.pid, m.value);
            }
            set_status(m.value);
            end_job();
        }
        break;
    }
    rdp_ctl_report_cleanup(&m);
}

static void on_abort(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_report_t m;

    if (rdp_ctl_report_unpack(payload, len, &m) != PMIX_SUCCESS
        || m.rank >= L.np || m.how != RDP_CTL_ABORTED) {
        rdp_log_warn(RUN, "malformed abort report from node %s", node->name);
        return;
    }
    if (!L.ending) {
        say("rank %u (pid %u) called PMIx_Abort with status %d%s%s; "
            "terminating the job",
            m.rank, m.pid, m.value, m.detail ? ": " : "",
            m.detail ? m.detail : "");
    }
    set_status(m.value > 0 && m.value <= 255 ? m.value : 1);
    end_job();
    rdp_ctl_report_cleanup(&m);
}

static void node_failed(dnode_t *node);

/*
 * Every daemon has the LAUNCH: let them start.  Until then none of them is
 * busy with the job, so rdpmix-run has the processor to itself while it
 * sends the LAUNCH (M daemons get M engine addresses each); a daemon that
 * registered its job meanwhile took it away (1000 daemons on 2 cores: the
 * last LAUNCH went out three minutes after the first).
 */
static void on_received(dnode_t *node)
{
    if (node->received) {
        return;
    }
    node->received = 1;
    L.nreceived++;
    rdp_log_debug(RUN, "node %u (daemon pid %d) has the launch", node->id,
                  (int)node->pid);
    if (L.nreceived < L.nnodes || L.ending || L.started) {
        return;
    }
    L.started = 1;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        send_to(&L.nodes[i], RDP_CTL_START, NULL);
    }
}

/* The daemon got a termination signal (not from us): it ends its ranks
 * and exits; the job ends, blaming the node rather than its ranks. */
static void on_got_signal(dnode_t *node, const void *payload, size_t len)
{
    int32_t signo;
    char desc[96];

    if (rdp_ctl_got_signal_unpack(payload, len, &signo) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed signal report from node %s", node->name);
        return;
    }
    if (!L.ending && !node->signalled && !node->reported) {
        rdp_run_signal_desc(signo, desc, sizeof(desc));
        say("node %u (daemon pid %d) received signal %s; terminating the "
            "job",
            node->id, (int)node->pid, desc);
    }
    node->reported = 1; /* its exit that follows says nothing new */
    node_failed(node);
}

static void conn_msg_cb(rdp_run_chan_t *chan, uint16_t cmd, const void *payload,
                        size_t len, void *arg)
{
    conn_t *c     = arg;
    dnode_t *node = c->node;

    if (node == NULL) {
        if (cmd != RDP_CTL_HELLO) {
            say("rejected a control connection that did not say hello");
            rdp_list_del(&c->link);
            rdp_run_chan_destroy(c->chan);
            rdp_free(c);
            return;
        }
        on_hello(c, payload, len);
        return;
    }
    if (cmd != RDP_CTL_RECEIVED) {
        node->spoke = 1;
    }
    switch (cmd) {
    case RDP_CTL_RECEIVED:
        on_received(node);
        break;
    case RDP_CTL_LAUNCHED:
        on_launched(node, payload, len);
        break;
    case RDP_CTL_IO:
        on_io(node, payload, len);
        break;
    case RDP_CTL_EXIT:
        on_exit_report(node, payload, len);
        break;
    case RDP_CTL_ABORT:
        on_abort(node, payload, len);
        break;
    case RDP_CTL_DONE:
        node->done = 1;
        daemon_progress();
        maybe_shutdown();
        break;
    case RDP_CTL_GOT_SIGNAL:
        on_got_signal(node, payload, len);
        break;
    default:
        rdp_log_warn(RUN, "unexpected control message %u from node %s", cmd,
                     node->name);
        break;
    }
}

/* First sign that a daemon failed: the job ends with status 1. */
static void node_failed(dnode_t *node)
{
    if (node->failed) {
        return;
    }
    node->failed = 1;
    node->quiet  = L.ending;
    set_status(1);
    end_job();
}

/* A lost connection is reported only if the daemon's exit status does
 * not arrive shortly (that says more). */
static void lost_timer_cb(void *arg)
{
    for (uint32_t i = 0; i < L.nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (!node->lost || !node->failed) {
            continue;
        }
        if (!node->reported && !node->quiet) {
            node->reported = 1;
            say("lost the connection to node %u (daemon pid %d); "
                "terminating the job",
                node->id, (int)node->pid);
        }
        if (node->alive) {
            signal_daemon(node, SIGTERM);
        }
    }
}

static void conn_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    conn_t *c     = arg;
    dnode_t *node = c->node;

    if (node == NULL || node->lost) {
        return; /* the chan is freed with the conn at exit */
    }
    node->lost = 1;
    if (!node->done && !node->shutdown) {
        node_failed(node);
        rdp_timer_start(L.lost_timer, node->alive ? 0.5 : 0);
    }
    maybe_shutdown();
}

static void accept_cb(int fd, int events, void *arg)
{
    for (;;) {
        int s = accept4(L.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        conn_t *c;

        if (s < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                rdp_log_warn(RUN, "accept failed: %m");
            }
            return;
        }
        c = rdp_calloc(1, sizeof(*c));
        if (c == NULL) {
            close(s);
            continue;
        }
        if (rdp_run_chan_create(L.loop, s, RDP_CTL_MAX_HELLO, conn_msg_cb,
                                conn_close_cb, c, &c->chan)
            != PMIX_SUCCESS) {
            rdp_free(c);
            continue;
        }
        rdp_list_push_back(&L.conns, &c->link);
    }
}

/* ------------------------------------------------------------------ */
/* signals and children                                                 */

/* A local daemon died without cleaning up: kill what its ranks left in
 * their process groups and remove its directory (only one it made). */
static void orphan_cleanup(dnode_t *node)
{
    const char *base;

    for (uint32_t i = 0; i < node->npgids; i++) {
        if (node->pgids[i] > 1) {
            kill(-(pid_t)node->pgids[i], SIGKILL);
        }
    }
    node->npgids = 0;
    if (node->tmpdir == NULL) {
        return;
    }
    base = strrchr(node->tmpdir, '/');
    if (node->tmpdir[0] == '/' && base != NULL
        && strncmp(base, "/rdpmixd.", 9) == 0) {
        rdp_run_rmtree(node->tmpdir);
    }
}

static void sigchld_cb(int signo, void *arg)
{
    int wstatus;
    pid_t pid;
    char desc[96];

    while ((pid = waitpid(-1, &wstatus, WNOHANG | WUNTRACED | WCONTINUED))
           > 0) {
        for (uint32_t i = 0; i < L.nnodes; i++) {
            dnode_t *node = &L.nodes[i];

            if (node->pid != pid || !node->alive) {
                continue;
            }
            if (WIFSTOPPED(wstatus) || WIFCONTINUED(wstatus)) {
                /* a stopped daemon is continued if the job ends */
                node->stopped = WIFSTOPPED(wstatus);
                rdp_log_info(RUN, "node %u (daemon pid %d) %s", node->id,
                             (int)pid, node->stopped ? "stopped" : "continued");
                if (node->stopped && L.ending) {
                    kill(pid, SIGCONT);
                }
                break;
            }
            node->alive = 0;
            L.nalive--;
            daemon_progress();
            if (node->done && node->shutdown && WIFEXITED(wstatus)
                && WEXITSTATUS(wstatus) == 0) {
                break;
            }
            node_failed(node);
            orphan_cleanup(node);
            /* a daemon killed by a signal rdpmix-run did not send is news
             * even while the job is already ending: with engine mode the
             * other servers may notice its death (and their ranks fail)
             * before its exit status arrives here */
            if (!node->reported
                && (!node->quiet
                    || (WIFSIGNALED(wstatus) && !node->signalled))) {
                node->reported = 1;
                if (WIFSIGNALED(wstatus)) {
                    rdp_run_signal_desc(WTERMSIG(wstatus), desc, sizeof(desc));
                    rdp_log_info(RUN, "daemon %d of node %s: signal %s",
                                 (int)pid, node->name, desc);
                    say("node %u (daemon pid %d) died; terminating the job",
                        node->id, (int)pid);
                } else {
                    say("node %u (daemon pid %d) exited with status %d%s; "
                        "terminating the job",
                        node->id, (int)pid, WEXITSTATUS(wstatus),
                        node->hello ? "" : " before it connected");
                }
            }
            node->lost = 1;
            maybe_shutdown();
            break;
        }
    }
    maybe_finish();
}

static void signal_cb(int signo, void *arg)
{
    char desc[96];

    rdp_run_signal_desc(signo, desc, sizeof(desc));
    /* one Ctrl-C or one `kill` may arrive twice (e.g. timeout(1) signals
     * its child and then its process group): count it once */
    if (L.nsignals > 0 && rdp_time_now() - L.last_signal < 0.5) {
        return;
    }
    L.last_signal = rdp_time_now();
    L.nsignals++;
    if (L.nsignals >= 3) {
        say("received signal %s again; killing the daemons", desc);
        set_status(128 + signo);
        kill_daemons(SIGKILL);
        return;
    }
    if (L.nsignals == 2 || signo == SIGHUP || !L.started || L.ending) {
        say("received signal %s; killing the job", desc);
        set_status(128 + signo);
        end_job();
        for (uint32_t i = 0; i < L.nnodes; i++) {
            send_kill(&L.nodes[i], RDP_CTL_KILL_NOW, 0);
        }
        return;
    }
    say("received signal %s; forwarding it to the job", desc);
    L.fwd_signo = signo;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        send_kill(&L.nodes[i], RDP_CTL_KILL_SIGNAL, signo);
    }
}

/* ------------------------------------------------------------------ */
/* startup                                                              */

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: rdpmix-run [options] [-n N] program [arguments...]\n"
        "\n"
        "Start N processes (ranks) of program as one PMIx job, served by\n"
        "rdpmixd, and wait for them.\n"
        "\n"
        "Options:\n"
        "  -n, --np N            number of ranks (default 1)\n"
        "  --nodes M             run M daemons on this machine, each a\n"
        "                        simulated node (default 1)\n"
        "  --map-by block|slot|node\n"
        "                        placement of the ranks on the nodes:\n"
        "                        balanced blocks of consecutive ranks\n"
        "                        (default), fill each node's slots in\n"
        "                        turn, or round robin\n"
        "  --slots-per-node K    slots of each node (default: ceil(N/M));\n"
        "                        N may not exceed M*K\n"
        "  --tag-output          prefix each output line with \"[rank] \"\n"
        "  -x VAR[=value]        export VAR (with this value, or the one it\n"
        "                        has here) to the ranks; repeatable\n"
        "  --timeout SECONDS     end the job after SECONDS (exit status "
        "124;\n"
        "                        0: no limit)\n"
        "  --no-ompi             do not set JSM_JSRUN_PORT (the Open MPI\n"
        "                        direct-launch trigger set by default)\n"
        "  -h, --help            this text\n"
        "  -V, --version         version\n"
        "\n"
        "The ranks read stdin from /dev/null. Their stdout and stderr go to\n"
        "rdpmix-run's. The exit status is the first failing rank's exit\n"
        "status (128+N for a rank killed by signal N), 0 if all succeed; a\n"
        "failing or aborting rank ends the whole job. See docs/run.md.\n");
}

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'rdpmix-run --help'.\n");
    exit(2);
}

/* "--name=value", "--name value", "-n4": the value, or NULL if @a arg is
 * not this option. */
static const char *match_opt(int argc, char **argv, int *i, const char *name,
                             int allow_attached)
{
    const char *arg = argv[*i];
    size_t len      = strlen(name);

    if (strncmp(arg, name, len) != 0) {
        return NULL;
    }
    if (arg[len] == '=' && name[1] == '-') {
        return arg + len + 1;
    }
    if (arg[len] != '\0') {
        if (allow_attached) {
            return arg + len;
        }
        return NULL;
    }
    if (*i + 1 >= argc) {
        usage_error("option %s needs a value", name);
    }
    return argv[++(*i)];
}

static void add_xenv(const char *spec)
{
    const char *eq = strchr(spec, '=');
    char *entry;
    char **v;

    if (spec[0] == '\0' || eq == spec) {
        usage_error("-x needs a variable name");
    }
    if (eq != NULL) {
        entry = rdp_strdup(spec);
    } else {
        const char *val = getenv(spec);
        size_t len;

        if (val == NULL) {
            usage_error("-x %s: %s is not set in the environment", spec, spec);
        }
        len   = strlen(spec) + strlen(val) + 2;
        entry = rdp_malloc(len);
        if (entry != NULL) {
            snprintf(entry, len, "%s=%s", spec, val);
        }
    }
    v = rdp_realloc(L.xenv, (L.nxenv + 2) * sizeof(*v));
    if (entry == NULL || v == NULL) {
        fprintf(stderr, "rdpmix-run: out of memory\n");
        exit(1);
    }
    v[L.nxenv++] = entry;
    v[L.nxenv]   = NULL;
    L.xenv       = v;
}

static void parse_args(int argc, char **argv)
{
    int i;
    const char *v;

    L.np     = 1;
    L.nnodes = 1;
    L.mapby  = RDP_RUN_MAP_BLOCK;
    L.ompi   = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (a[0] != '-' || a[1] == '\0') {
            break;
        }
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("rdpmix-run (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        } else if (strcmp(a, "--tag-output") == 0) {
            L.tag_output = 1;
        } else if (strcmp(a, "--no-ompi") == 0) {
            L.ompi = 0;
        } else if ((v = match_opt(argc, argv, &i, "--np", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "-np", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "-n", 1)) != NULL) {
            if (rdp_run_parse_u32(v, 1, MAX_NP, &L.np) != 0) {
                usage_error("-n needs a number of ranks from 1 to %u, not "
                            "'%s'",
                            MAX_NP, v);
            }
        } else if ((v = match_opt(argc, argv, &i, "--nodes", 0)) != NULL) {
            if (rdp_run_parse_u32(v, 1, MAX_NODES, &L.nnodes) != 0) {
                usage_error("--nodes needs a number of nodes from 1 to %u, "
                            "not '%s'",
                            MAX_NODES, v);
            }
        } else if ((v = match_opt(argc, argv, &i, "--map-by", 0)) != NULL) {
            if (rdp_run_mapby_parse(v, &L.mapby) != 0) {
                usage_error("--map-by needs block, slot or node, not '%s'", v);
            }
        } else if ((v = match_opt(argc, argv, &i, "--slots-per-node", 0))
                   != NULL) {
            if (rdp_run_parse_u32(v, 1, MAX_NP, &L.slots) != 0) {
                usage_error("--slots-per-node needs a number from 1 to %u, "
                            "not '%s'",
                            MAX_NP, v);
            }
        } else if ((v = match_opt(argc, argv, &i, "--timeout", 0)) != NULL) {
            if (rdp_run_parse_u32(v, 0, 100000000, &L.timeout) != 0) {
                usage_error("--timeout needs a number of seconds, not '%s'", v);
            }
        } else if ((v = match_opt(argc, argv, &i, "-x", 1)) != NULL) {
            add_xenv(v);
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (L.slots > 0 && (uint64_t)L.slots * L.nnodes < L.np) {
        usage_error("%u ranks do not fit in %u nodes of %u slots", L.np,
                    L.nnodes, L.slots);
    }
    L.engine = L.nnodes > 1;
    if (i >= argc) {
        usage_error("no program given");
    }
    L.argv = &argv[i];
}

static char *short_hostname(void)
{
    char host[256];

    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1]   = '\0';
    host[strcspn(host, ".")] = '\0';
    if (host[0] == '\0') {
        snprintf(host, sizeof(host), "localhost");
    }
    return rdp_strdup(host);
}

static char *find_daemon(void)
{
    const char *env = getenv("RDPMIX_DAEMON");
    char *dir       = NULL, *path;
    size_t len;

    if (env != NULL && env[0] != '\0') {
        path = rdp_strdup(env);
    } else {
        if (rdp_run_exe_dir(&dir) != PMIX_SUCCESS) {
            return NULL;
        }
        len  = strlen(dir) + sizeof("/rdpmixd");
        path = rdp_malloc(len);
        if (path != NULL) {
            snprintf(path, len, "%s/rdpmixd", dir);
        }
        rdp_free(dir);
    }
    if (path != NULL && access(path, X_OK) != 0) {
        say("cannot find the daemon at %s: %s (set RDPMIX_DAEMON)", path,
            strerror(errno));
        rdp_free(path);
        return NULL;
    }
    return path;
}

static void setup_listener(void)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);

    L.listen_fd =
        socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (L.listen_fd < 0) {
        say("cannot create the control socket: %s", strerror(errno));
        exit(1);
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family      = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port        = 0;
    if (bind(L.listen_fd, (struct sockaddr *)&sin, sizeof(sin)) != 0
        || listen(L.listen_fd, 64) != 0
        || getsockname(L.listen_fd, (struct sockaddr *)&sin, &slen) != 0) {
        say("cannot listen on 127.0.0.1: %s", strerror(errno));
        exit(1);
    }
    L.port = ntohs(sin.sin_port);
    if (rdp_fdwatch_create(L.loop, L.listen_fd, RDP_FD_READ, accept_cb, NULL,
                           &L.listen_watch)
        != PMIX_SUCCESS) {
        say("cannot watch the control socket");
        exit(1);
    }
    rdp_fdwatch_enable(L.listen_watch);
}

/* Fork one daemon; its stdin carries the secret and is then /dev/null. */
static void start_daemon(dnode_t *node)
{
    char hex[2 * RDP_CTL_SECRET_LEN + 2];
    char ctl[64], id[16];
    char *args[16];
    int na;
    int sp[2];
    pid_t parent = getpid();
    sigset_t all, old;
    pid_t pid;

    snprintf(ctl, sizeof(ctl), "127.0.0.1:%u", L.port);
    snprintf(id, sizeof(id), "%u", node->id);
    args[0]  = L.daemon_path;
    args[1]  = "--ctl";
    args[2]  = ctl;
    args[3]  = "--secret-fd";
    args[4]  = "0";
    args[5]  = "--node-id";
    args[6]  = id;
    args[7]  = "--node-name";
    args[8]  = node->name;
    args[9]  = "--daemon-nspace";
    args[10] = L.dvm_nspace;
    na       = 11;
    if (L.engine) {
        args[na++] = "--engine";
    }
    if (L.daemon_only[0] != '\0') {
        args[na++] = "--daemon-env";
        args[na++] = L.daemon_only;
    }
    args[na] = NULL;

    if (pipe2(sp, O_CLOEXEC) != 0) {
        say("cannot create a pipe: %s", strerror(errno));
        exit(1);
    }
    /* signals stay blocked until the child has dropped our handlers (a
     * signal caught in between would be reported into our loop) */
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid = fork();
    if (pid < 0) {
        say("cannot start the daemon: %s", strerror(errno));
        exit(1);
    }
    if (pid == 0) {
        struct sigaction sa;

        setpgid(0, 0);
        /* if rdpmix-run dies, the daemon ends the job and exits */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) {
            _exit(1);
        }
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++) {
            sigaction(sig, &sa, NULL);
        }
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        if (dup2(sp[0], 0) < 0) {
            _exit(1);
        }
        /* Whatever the daemon prints is a diagnostic, never the job's
         * output (which comes over the control channel): its stdout is
         * our stderr.  UCX prints its warnings and errors to stdout. */
        if (dup2(2, 1) < 0) {
            _exit(1);
        }
        execve(L.daemon_path, args,
               L.daemon_env != NULL ? L.daemon_env : environ);
        {
            char msg[PATH_MAX + 128];
            int len = snprintf(msg, sizeof(msg),
                               "rdpmix-run: cannot execute the daemon %s: "
                               "%s\n",
                               L.daemon_path, strerror(errno));

            if (len > 0 && write(2, msg, (size_t)len) < 0) {
                /* nothing more to do */
            }
        }
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    setpgid(pid, pid);
    close(sp[0]);
    rdp_run_hex_encode(L.secret, sizeof(L.secret), hex);
    strcat(hex, "\n");
    /* 66 bytes always fit in an empty pipe */
    if (rdp_run_write_all(sp[1], hex, strlen(hex)) != 0) {
        say("cannot hand the secret to the daemon: %s", strerror(errno));
    }
    explicit_bzero(hex, sizeof(hex));
    close(sp[1]);
    node->pid   = pid;
    node->alive = 1;
    L.nalive++;
}

/*
 * The daemons of a multi-node job run UCX and fork their ranks: unless the
 * user chose otherwise, UCX's memory hooks are off (fork safety).  UCX
 * reads these when it is loaded, so they must be in the environment the
 * daemon starts with.  The daemon does not pass them to its ranks.
 */
static void setup_daemon_env(void)
{
    static const char *const defaults[][2] = {
        {"UCX_MEM_MALLOC_HOOKS", "no"},
        {"UCX_MEM_MMAP_HOOK_MODE", "none"},
        /* UCX 1.13 cannot use its shared memory transports for the
         * engine's endpoints (they cannot report a peer's failure): left
         * out, they cost no memory (7 MiB a daemon), no System V
         * segments (2) and no start-up time */
        {"UCX_TLS", "^sm"},
    };
    size_t n = 0, nadd = 0;
    char **env;

    if (!L.engine) {
        return;
    }
    while (environ[n] != NULL) {
        n++;
    }
    env = rdp_calloc(n + sizeof(defaults) / sizeof(defaults[0]) + 1,
                     sizeof(*env));
    if (env == NULL) {
        say("out of memory");
        exit(1);
    }
    memcpy(env, environ, n * sizeof(*env)); /* borrowed entries */
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        size_t len;

        if (getenv(defaults[i][0]) != NULL) {
            continue;
        }
        len    = strlen(defaults[i][0]) + strlen(defaults[i][1]) + 2;
        env[n] = rdp_malloc(len);
        if (env[n] == NULL) {
            say("out of memory");
            exit(1);
        }
        snprintf(env[n], len, "%s=%s", defaults[i][0], defaults[i][1]);
        n++;
        nadd++;
        snprintf(L.daemon_only + strlen(L.daemon_only),
                 sizeof(L.daemon_only) - strlen(L.daemon_only), "%s%s",
                 L.daemon_only[0] != '\0' ? "," : "", defaults[i][0]);
    }
    env[n]              = NULL;
    L.daemon_env        = env;
    L.ndaemon_env_added = nadd;
}

static void setup_job(void)
{
    uint8_t rnd[4];
    char rhex[9];
    char *host;
    uint32_t *node_of;
    pmix_status_t status;

    if (rdp_run_random(L.secret, sizeof(L.secret)) != PMIX_SUCCESS
        || rdp_run_random(rnd, sizeof(rnd)) != PMIX_SUCCESS) {
        say("cannot get random bytes");
        exit(1);
    }
    rdp_run_hex_encode(rnd, sizeof(rnd), rhex);
    snprintf(L.nspace, sizeof(L.nspace), "rdpmix.%d.%s", (int)getpid(), rhex);
    snprintf(L.dvm_nspace, sizeof(L.dvm_nspace), "rdpmixd.%d.%s", (int)getpid(),
             rhex);

    host    = short_hostname();
    L.nodes = rdp_calloc(L.nnodes, sizeof(*L.nodes));
    node_of = rdp_calloc(L.np, sizeof(*node_of));
    if (host == NULL || L.nodes == NULL || node_of == NULL) {
        say("out of memory");
        exit(1);
    }
    status = rdp_run_place(L.np, L.nnodes, L.mapby, L.slots, node_of);
    if (status != PMIX_SUCCESS) {
        /* parse_args checked what could fail */
        say("cannot place %u ranks on %u nodes: %s", L.np, L.nnodes,
            PMIx_Error_string(status));
        exit(2);
    }
    for (uint32_t n = 0; n < L.nnodes; n++) {
        dnode_t *node = &L.nodes[n];

        node->id = n;
        /* one node is this machine; simulated nodes are "<host>-n<i>" */
        if (L.nnodes == 1) {
            node->name = rdp_strdup(host);
        } else {
            size_t len = strlen(host) + 16;

            node->name = rdp_malloc(len);
            if (node->name != NULL) {
                snprintf(node->name, len, "%s-n%u", host, n);
            }
        }
        if (node->name == NULL) {
            say("out of memory");
            exit(1);
        }
    }
    for (uint32_t r = 0; r < L.np; r++) {
        L.nodes[node_of[r]].nranks++;
    }
    for (uint32_t n = 0; n < L.nnodes; n++) {
        L.nodes[n].ranks = rdp_calloc(L.nodes[n].nranks + 1, sizeof(uint32_t));
        if (L.nodes[n].ranks == NULL) {
            say("out of memory");
            exit(1);
        }
        L.nodes[n].nranks = 0;
    }
    /* each node's ranks in increasing order: their local ranks */
    for (uint32_t r = 0; r < L.np; r++) {
        dnode_t *node = &L.nodes[node_of[r]];

        node->ranks[node->nranks++] = r;
    }
    rdp_free(node_of);
    rdp_free(host);
}

/* Refuse up front a launch this machine cannot host (src/run/limits.h),
 * saying which limit it exceeds and how many nodes would fit. */
static void check_host(void)
{
    const char *tls = L.daemon_env != NULL ? NULL : getenv("UCX_TLS");
    rdp_run_host_t host;
    rdp_run_shape_t shape = {.nnodes = L.nnodes, .np = L.np};
    char why[256], spare[8];
    uint32_t fit = 0;

    for (size_t i = 0; L.daemon_env != NULL && L.daemon_env[i] != NULL; i++) {
        if (strncmp(L.daemon_env[i], "UCX_TLS=", 8) == 0) {
            tls = L.daemon_env[i] + 8;
        }
    }
    shape.sm = rdp_run_ucx_uses_sm(tls);
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].nranks > shape.max_ppn) {
            shape.max_ppn = L.nodes[i].nranks;
        }
    }
    rdp_run_host_probe(&host);
    if (rdp_run_host_fits(&host, &shape, why, sizeof(why))) {
        return;
    }
    for (uint32_t m = L.nnodes - 1; m >= 1 && fit == 0; m--) {
        rdp_run_shape_t fewer = shape;

        fewer.nnodes  = m;
        fewer.max_ppn = (L.np + m - 1) / m;
        if (rdp_run_host_fits(&host, &fewer, spare, sizeof(spare))) {
            fit = m;
        }
    }
    if (fit > 0) {
        say("this machine cannot host %u nodes: %s; at most %u fit", L.nnodes,
            why, fit);
    } else {
        say("this machine cannot host this job: %s", why);
    }
    exit(1);
}

static void cleanup(void)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(&L.conns)) != NULL) {
        conn_t *c = rdp_container_of(item, conn_t, link);

        rdp_run_chan_destroy(c->chan);
        rdp_free(c);
    }
    rdp_fdwatch_destroy(L.listen_watch);
    if (L.listen_fd >= 0) {
        close(L.listen_fd);
    }
    rdp_timer_destroy(L.startup_timer);
    rdp_timer_destroy(L.timeout_timer);
    rdp_timer_destroy(L.kill_timer);
    rdp_timer_destroy(L.lost_timer);
    rdp_sigwatch_destroy(L.sig_int);
    rdp_sigwatch_destroy(L.sig_term);
    rdp_sigwatch_destroy(L.sig_hup);
    rdp_sigwatch_destroy(L.sig_chld);
    rdp_loop_destroy(L.loop);
    rdp_run_iof_destroy(L.iof);
    for (uint32_t i = 0; L.nodes != NULL && i < L.nnodes; i++) {
        rdp_free(L.nodes[i].name);
        rdp_free(L.nodes[i].ranks);
        rdp_free(L.nodes[i].pgids);
        rdp_free(L.nodes[i].pgid_ranks);
        rdp_free(L.nodes[i].tmpdir);
        rdp_free(L.nodes[i].engine_addr);
    }
    rdp_free(L.nodes);
    rdp_ctl_strv_free(L.xenv);
    if (L.daemon_env != NULL) {
        size_t n = 0;

        while (L.daemon_env[n] != NULL) {
            n++;
        }
        for (size_t i = n - L.ndaemon_env_added; i < n; i++) {
            rdp_free(L.daemon_env[i]);
        }
        rdp_free(L.daemon_env);
    }
    rdp_free(L.daemon_path);
    explicit_bzero(L.secret, sizeof(L.secret));
}

int main(int argc, char **argv)
{
    pmix_status_t status;

    rdp_log_init();
    rdp_log_set_ident("rdpmix-run");
    L.listen_fd = -1;
    rdp_list_init(&L.conns);
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    L.grace = rdp_run_env_seconds("RDPMIX_KILL_GRACE", 3.0);

    L.daemon_path = find_daemon();
    if (L.daemon_path == NULL) {
        return 1;
    }
    setup_job();
    setup_daemon_env();
    check_host();
    status = rdp_loop_create(&L.loop);
    if (status != PMIX_SUCCESS) {
        say("cannot create the event loop: %s", PMIx_Error_string(status));
        return 1;
    }
    if (rdp_run_iof_create(L.np, L.tag_output, write_out, NULL, &L.iof)
            != PMIX_SUCCESS
        || rdp_timer_create(L.loop, startup_cb, NULL, &L.startup_timer)
               != PMIX_SUCCESS
        || rdp_timer_create(L.loop, timeout_cb, NULL, &L.timeout_timer)
               != PMIX_SUCCESS
        || rdp_timer_create(L.loop, kill_timer_cb, NULL, &L.kill_timer)
               != PMIX_SUCCESS
        || rdp_timer_create(L.loop, lost_timer_cb, NULL, &L.lost_timer)
               != PMIX_SUCCESS

        || rdp_sigwatch_create(L.loop, SIGCHLD, sigchld_cb, NULL, &L.sig_chld)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(L.loop, SIGINT, signal_cb, NULL, &L.sig_int)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(L.loop, SIGTERM, signal_cb, NULL, &L.sig_term)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(L.loop, SIGHUP, signal_cb, NULL, &L.sig_hup)
               != PMIX_SUCCESS) {
        say("cannot set up the event loop");
        return 1;
    }
    setup_listener();
    /* the start-up timeout counts from here: starting many daemons takes
     * long when they share few cores (each runs as soon as it is forked) */
    rdp_timer_start(
        L.startup_timer,
        rdp_run_env_seconds("RDPMIX_STARTUP_TIMEOUT", DEFAULT_STARTUP));
    for (uint32_t i = 0; i < L.nnodes; i++) {
        start_daemon(&L.nodes[i]);
    }

    rdp_loop_run(L.loop);

    rdp_run_iof_flush_all(L.iof);
    cleanup();
    if (!L.have_status) {
        return 0;
    }
    return L.exit_status > 255 ? 255 : L.exit_status;
}
