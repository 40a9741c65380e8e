/* rdpmix_run.c - rdpmix-run: start rdpmixd, launch a job, forward its output */
#include "config.h"
#include "run/chan.h"
#include "run/ctl.h"
#include "run/ctladdr.h"
#include "run/datapeer.h"
#include "run/datasvc.h"
#include "run/hosts.h"
#include "run/iof.h"
#include "run/limits.h"
#include "run/place.h"
#include "run/spawn.h"
#include "run/util.h"
#include "run/words.h"
#include "run/xconn.h"
#include "run/xconnect.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "pnet/pnet.h"
#include "core/util/logchan.h"
#include "core/util/status.h"

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
#define MAX_HOSTS       65536 /* nodes of a real multi-node job */
#define MAX_LISTEN      16    /* control listeners (one per --ctl-if address) */
#define TIMEOUT_STATUS  124   /* exit status after --timeout, as timeout(1) */
/* daemons idle this long are killed ...: longer than a daemon's own
 * bounded teardown (UCX drains sends for 5 s, forces them for 1 s and
 * waits 5 s for endpoints to close), so only a daemon that is hung is */
#define SHUTDOWN_WAIT   20.0
#define DAEMON_END_CPU  0.5   /* ... plus this per daemon per core */

/*
 * How the daemons are started: on this machine (each our child), one
 * launch agent per host (ssh; the agent's child on the host is the
 * daemon), or one srun for every node of the Slurm allocation.
 */
enum launch_mode {
    LAUNCH_LOCAL = 0,
    LAUNCH_SSH   = 1,
    LAUNCH_SLURM = 2
};

/* A launch agent process: ssh for one node, srun for all of them, or a
 * cleanup command for a remote node whose daemon died (nnodes 0). */
typedef struct agent {
    pid_t pid;
    int alive;
    int term_sent;  /* srun got SIGTERM (cancels its step) */
    uint32_t first; /* its nodes: first .. first + nnodes - 1 */
    uint32_t nnodes;
} agent_t;

typedef struct dnode {
    uint32_t id;
    char *name;     /* remote: the host as given until it says its own name */
    char *host;     /* remote: where the agent starts it (NULL: this machine) */
    agent_t *agent; /* remote: the process that started it */
    uint32_t rpid;  /* remote: the daemon's pid on its host (HELLO) */
    uint32_t slots; /* given for this host (0: not given) */
    pid_t pid;      /* local: the daemon */
    int alive;     /* process not reaped yet */
    int hello;     /* authenticated */
    int received;  /* has the LAUNCH */
    int ready;     /* reported a successful launch */
    int spoke;     /* reported something of the launch */
    int done;      /* said DONE, failed its launch, or never got a job */
    int shutdown;  /* was sent SHUTDOWN */
    int stopped;   /* stopped by a signal (and not continued since) */
    int cleaned;   /* remote: the cleanup after its death was started */
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
    int recovery; /* --enable-recovery: a failing rank does not end the job */
    const char *pnet; /* --pnet LIST (else RDPMIX_PNET): docs/pnet.md */
    /* the job's network setup (pnet: keys; secrets, wiped at the end) */
    pmix_info_t *net;
    size_t nnet;
    pid_t net_owner; /* the launcher, not a forked child, ends the job */
    int ompi;
    uint32_t timeout;
    char **xenv; /* "NAME=value" */
    size_t nxenv;
    char **argv;
    enum launch_mode mode;
    int mode_given; /* --launch */
    int np_given;
    int nodes_given;
    rdp_run_hostlist_t hosts; /* --hosts, --hostfile */
    const char *agent_cmd;    /* --launch-agent, RDPMIX_LAUNCH_AGENT */
    char **agent_words;
    char *agent_path;         /* the agent (or srun) found in PATH */
    char **remote_env;        /* ssh: "NAME=value" words for the daemons */
    const char *ctl_if;       /* --ctl-if, RDPMIX_CTL_IF */
    int slurm_oversubscribed; /* more ranks than the allocation's tasks */

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
    int listen_fds[MAX_LISTEN];
    rdp_fdwatch_t *listen_watches[MAX_LISTEN];
    size_t nlisten;
    char *ctl_spec;   /* "HOST:PORT,..." the daemons connect to */
    agent_t **agents; /* each allocated: nodes point to theirs */
    uint32_t nagents;
    uint32_t nagents_alive;
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
    rdp_ds_t *ds; /* publish/lookup data (datasvc.h) */
    rdp_run_peers_t *peers; /* the user's other launchers (datapeer.h) */
    rdp_run_xconn_t *xconn; /* connects with their jobs (xconnect.h) */
    rdp_ctl_node_t *xnodes; /* the map it reads (names, ranks borrowed) */
    rdp_timer_t *ds_timer;
    uint32_t nexited; /* ranks whose exit was reported */
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
    /* the ranks' stderr we forwarded ended mid-line: our own next message
     * must start a line of its own */
    int err_midline;
    /* every rank's pid, state and exit code, for the daemons' queries */
    rdp_ctl_procent_t *procs;
} launcher_t;

static launcher_t L;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vsay(const char *fmt, va_list ap)
{
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%srdpmix-run: %s\n", L.err_midline ? "\n" : "", msg);
    L.err_midline = 0;
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

    if (L.out_broken[fd] || len == 0) {
        return;
    }
    if (fd == 2) {
        L.err_midline = ((const char *)data)[len - 1] != '\n';
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

/*
 * "node 2 (daemon pid 4242)" on this machine; "node 2 (h3)" for a remote
 * node before it connected, "node 2 (h3, daemon pid 4242)" after (the pid
 * on its host).
 */
static const char *node_desc(const dnode_t *node, char *buf, size_t len)
{
    if (node->host == NULL) {
        snprintf(buf, len, "node %u (daemon pid %d)", node->id, (int)node->pid);
    } else if (node->hello) {
        snprintf(buf, len, "node %u (%s, daemon pid %u)", node->id, node->name,
                 node->rpid);
    } else {
        snprintf(buf, len, "node %u (%s)", node->id, node->host);
    }
    return buf;
}

/* The agent started for several nodes (srun). */
static int agent_shared(const agent_t *agent)
{
    return agent != NULL && agent->nnodes > 1;
}

static void signal_agent(agent_t *agent, int signo)
{
    if (agent->alive) {
        if (signo == SIGTERM || signo == SIGINT) {
            agent->term_sent = 1;
        }
        kill(-agent->pid, signo);
    }
}

/* Signal a daemon's process group (a remote daemon: its launch agent's);
 * remembered, so that a death by a signal nobody here sent can still be
 * told apart.  The srun of every node is left alone: ending it cancels
 * every node's daemon, so it is only killed as the last resort
 * (kill_timer_cb). */
static void signal_daemon(dnode_t *node, int signo)
{
    node->signalled = 1;
    if (node->host == NULL) {
        kill(-node->pid, signo);
    } else if (node->agent != NULL && !agent_shared(node->agent)) {
        signal_agent(node->agent, signo);
    }
}

static void kill_daemons(int signo)
{
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].alive && L.nodes[i].host == NULL) {
            signal_daemon(&L.nodes[i], signo);
        }
    }
    for (uint32_t i = 0; i < L.nagents; i++) {
        signal_agent(L.agents[i], signo);
    }
}

/* Done once every daemon is gone and every process we started reaped. */
static void maybe_finish(void)
{
    if (L.nalive == 0 && L.nagents_alive == 0) {
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
            } else if (node->ready || node->done || node->spoke
                       || node->host != NULL) {
                /* it is forking ranks, or done with that; a remote
                 * daemon is asked anyway (its host's cores are its
                 * own, and srun cannot kill one node's daemon) */
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
        if (node->stopped && node->host == NULL) {
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
    char desc[320];
    int any = 0, rearm = 0;

    L.kill_base = 0;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].alive) {
            say("%s did not exit; killing it",
                node_desc(&L.nodes[i], desc, sizeof(desc)));
            any = 1;
        }
    }
    if (any) {
        set_status(1);
    }
    for (uint32_t i = 0; i < L.nnodes; i++) {
        if (L.nodes[i].alive && L.nodes[i].host == NULL) {
            signal_daemon(&L.nodes[i], SIGKILL);
        }
    }
    for (uint32_t i = 0; i < L.nagents; i++) {
        agent_t *agent = L.agents[i];

        if (!agent->alive) {
            continue;
        }
        if (agent_shared(agent) && !agent->term_sent) {
            /* srun cancels its step: the daemons get SIGTERM and end
             * their ranks, SIGKILL after Slurm's KillWait */
            signal_agent(agent, SIGTERM);
            rearm = 1;
        } else {
            rdp_log_info(RUN, "launch agent pid %d did not exit; killing it",
                         (int)agent->pid);
            signal_agent(agent, SIGKILL);
        }
    }
    if (rearm) {
        arm_kill_timer(SHUTDOWN_WAIT);
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
        rdp_cfg_seconds(RDP_CFG_STARTUP_TIMEOUT),
        L.nhello, L.nnodes, L.nreceived, L.nready);
    set_status(1);
    end_job();
}

/* ------------------------------------------------------------------ */
/* messages from the daemons                                            */

static void close_listeners(void)
{
    for (size_t i = 0; i < L.nlisten; i++) {
        rdp_fdwatch_destroy(L.listen_watches[i]);
        close(L.listen_fds[i]);
    }
    L.nlisten = 0;
}

static void xconn_send(uint32_t node, uint16_t cmd, rdp_buf_t *buf, void *arg)
{
    (void)arg;
    send_to(&L.nodes[node], cmd, buf);
    rdp_buf_cleanup(buf);
}

/*
 * Connects across launchers (xconnect.h): what another launcher may see
 * of our job is @a m without its environment and engine key and
 * addresses.  Takes @a nodes (the map of @a m) whatever it returns.
 */
static pmix_status_t setup_xconn(const rdp_ctl_launch_t *m,
                                 rdp_ctl_node_t *nodes)
{
    rdp_ctl_launch_t pub = *m;
    rdp_run_xconn_cfg_t cfg;
    rdp_buf_t buf;
    pmix_status_t status;

    L.xnodes = nodes;
    for (uint32_t i = 0; i < m->nnodes; i++) {
        nodes[i].engine_addr     = NULL;
        nodes[i].engine_addr_len = 0;
    }
    pub.env   = NULL;
    pub.net   = NULL; /* the job's fabric keys are its own (docs/pnet.md) */
    pub.nnet  = 0;
    pub.flags = 0; /* no engine: neither key nor addresses are packed */
    memset(pub.engine_key, 0, sizeof(pub.engine_key));
    rdp_buf_init(&buf);
    status = rdp_ctl_launch_pack(&buf, &pub);
    if (status == PMIX_SUCCESS) {
        cfg    = (rdp_run_xconn_cfg_t){.loop    = L.loop,
                                       .peers   = L.peers,
                                       .nspace  = L.nspace,
                                       .nodes   = nodes,
                                       .nnodes  = m->nnodes,
                                       .launch  = buf.data,
                                       .nlaunch = buf.size,
                                       .send    = xconn_send};
        status = rdp_run_xconn_create(&cfg, &L.xconn);
    }
    rdp_buf_cleanup(&buf);
    return status;
}

static void send_launch(void)
{
    rdp_ctl_node_t *nodes;
    rdp_ctl_launch_t m;
    char cwd[PATH_MAX];
    char **env;
    size_t n = 0, nenv = 0;
    rdp_buf_t buf;
    pmix_status_t status;

    while (environ[nenv] != NULL) {
        nenv++;
    }
    nodes = rdp_calloc(L.nnodes, sizeof(*nodes));
    env   = rdp_calloc(L.nxenv + nenv + 2, sizeof(*env));
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
    /* A remote daemon's environment is not ours (docs/run.md): over ssh
     * the ranks also get our Open MPI settings (OMPI_*, as mpirun
     * forwards them); under srun, which gave the daemons our environment
     * plus its own task variables, they get the allocation's SLURM_*
     * variables as we have them, instead of the daemons' step's. */
    for (char **e = environ; *e != NULL; e++) {
        if ((L.mode == LAUNCH_SSH && strncmp(*e, "OMPI_", 5) == 0)
            || (L.mode == LAUNCH_SLURM && strncmp(*e, "SLURM_", 6) == 0)) {
            env[n++] = *e;
        }
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
    m.net      = L.net;
    m.nnet     = L.nnet;
    m.flags    = L.tag_output ? RDP_CTL_FLAG_TAG_OUTPUT : 0;
    m.flags |= L.recovery ? RDP_CTL_FLAG_CONTINUE : 0;
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
    if (status == PMIX_SUCCESS) {
        status = setup_xconn(&m, nodes);
        nodes  = NULL; /* kept for the connects across launchers */
    }
    rdp_free(nodes);
    rdp_free(env);
    if (status != PMIX_SUCCESS) {
        say("cannot build the launch message: %s", rdp_status_name(status));
        set_status(1);
        end_job();
        return;
    }
    L.launched = 1;
    if (L.timeout > 0) {
        rdp_timer_start(L.timeout_timer, L.timeout);
    }
}

/*
 * A remote node is called what its daemon's host calls itself, which is
 * what its ranks' gethostname() returns; two nodes that say the same name
 * are one host listed twice under different names.  0, or -1 (said).
 */
static int adopt_host_name(dnode_t *node, rdp_ctl_hello_t *m)
{
    if (m->node_name == NULL || m->node_name[0] == '\0') {
        return 0; /* keep the name it was started by */
    }
    for (uint32_t i = 0; i < L.nnodes; i++) {
        const dnode_t *other = &L.nodes[i];

        if (other != node && other->hello
            && strcmp(other->name, m->node_name) == 0) {
            say("%s and %s are the same host (both are called %s); list "
                "each host once",
                other->host, node->host, m->node_name);
            return -1;
        }
    }
    rdp_free(node->name);
    node->name   = m->node_name; /* taken */
    m->node_name = NULL;
    node->rpid   = m->pid;
    return 0;
}

static void on_hello(conn_t *c, const void *payload, size_t len)
{
    rdp_ctl_hello_t m;
    dnode_t *node;
    char desc[320];

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
    /* a daemon on this machine is our child; a remote one is known by
     * the secret alone */
    if (node->host == NULL && node->pid != (pid_t)m.pid) {
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
    if (node->host != NULL && adopt_host_name(node, &m) != 0) {
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
    rdp_log_debug(RUN, "%s connected", node_desc(node, desc, sizeof(desc)));
    if (L.ending && !L.started) {
        /* too late: it has nothing to do but go */
        node->done = 1;
        maybe_shutdown();
    }
    if (L.nhello == L.nnodes) {
        close_listeners();
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
                error ? error : rdp_status_name(status));
        }
        node->done = 1; /* nothing runs there */
        set_status(1);
        end_job();
        maybe_shutdown();
    } else if (!node->ready) {
        for (uint32_t i = 0; i < node->npgids; i++) {
            if (node->pgid_ranks[i] < L.np) {
                L.procs[node->pgid_ranks[i]].pid   = node->pgids[i];
                L.procs[node->pgid_ranks[i]].state = PMIX_PROC_STATE_RUNNING;
            }
        }
        node->ready = 1;
        L.nready++;
        rdp_log_debug(RUN, "node %u (%s) launched its ranks", node->id,
                      node->name);
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

static void ds_rank_ended(uint32_t rank);
/* What a failing rank does to the job (--enable-recovery: nothing). */
static const char *failure_outcome(void)
{
    return L.recovery ? "the job continues (--enable-recovery)"
                      : "terminating the job";
}

static void end_job_unless_recovering(void)
{
    if (!L.recovery) {
        end_job();
    }
}

/* NOTIFY: an event for other nodes; relay it to every daemon but its
 * sender (which delivered it on its node already). */
static void on_notify(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_event_t m;

    if (rdp_ctl_event_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed event from node %s", node->name);
        return;
    }
    rdp_ctl_event_cleanup(&m);
    for (uint32_t i = 0; i < L.nnodes; i++) {
        rdp_buf_t buf;

        if (&L.nodes[i] == node) {
            continue;
        }
        rdp_buf_init(&buf);
        if (rdp_buf_append(&buf, payload, len) == PMIX_SUCCESS) {
            send_to(&L.nodes[i], RDP_CTL_NOTIFY, &buf);
        }
        rdp_buf_cleanup(&buf);
    }
}

/* A rank's end, in the table the daemons' queries read. */
static void record_end(uint32_t rank, uint8_t how, int32_t value)
{
    rdp_ctl_procent_t *e = &L.procs[rank];

    switch (how) {
    case RDP_CTL_EXITED:
        e->state     = value == 0 ? PMIX_PROC_STATE_TERMINATED
                                  : PMIX_PROC_STATE_TERM_NON_ZERO;
        e->exit_code = value;
        break;
    case RDP_CTL_SIGNALED:
        e->state     = PMIX_PROC_STATE_ABORTED_BY_SIG;
        e->exit_code = 128 + value;
        break;
    case RDP_CTL_TERMINATED:
        e->state     = PMIX_PROC_STATE_KILLED_BY_CMD;
        e->exit_code = value;
        break;
    case RDP_CTL_ABORTED:
        e->state     = PMIX_PROC_STATE_CALLED_ABORT;
        e->exit_code = value;
        break;
    default:
        e->state     = PMIX_PROC_STATE_FAILED_TO_START;
        e->exit_code = value == ENOENT ? 127 : 126;
        break;
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
    ds_rank_ended(m.rank);
    for (uint32_t i = 0; i < node->npgids; i++) {
        if (node->pgid_ranks[i] == m.rank) {
            node->pgids[i] = 0; /* reaped: its pid may be reused */
        }
    }
    record_end(m.rank, m.how, m.value);
    if (!L.ending && m.how != RDP_CTL_TERMINATED
        && !(m.how == RDP_CTL_EXITED && m.value == 0)
        && !(m.how == RDP_CTL_SIGNALED && m.value == L.fwd_signo)) {
        /* the jobs connected to ours learn of it (xconnect.h) */
        rdp_run_xconn_rank_failed(L.xconn, m.rank, L.procs[m.rank].exit_code);
    }
    switch (m.how) {
    case RDP_CTL_TERMINATED:
        /* a job-control request ended it: the job goes on (as PRRTE's
         * "killed by command" is no failure of the job) */
        break;
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
            say("rank %u (pid %u) killed by signal %s; %s", m.rank, m.pid,
                desc, failure_outcome());
        }
        set_status(128 + m.value);
        if (m.value == L.fwd_signo) {
            end_job(); /* the user's signal ends the job */
        } else {
            end_job_unless_recovering();
        }
        break;
    default:
        if (m.value != 0) {
            if (!L.ending) {
                say("rank %u (pid %u) exited with status %d; %s", m.rank,
                    m.pid, m.value, failure_outcome());
            }
            set_status(m.value);
            end_job_unless_recovering();
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
    record_end(m.rank, RDP_CTL_ABORTED, m.value);
    if (!L.ending) {
        rdp_run_xconn_rank_failed(L.xconn, m.rank, L.procs[m.rank].exit_code);
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
    char desc[96], nd[320];

    if (rdp_ctl_got_signal_unpack(payload, len, &signo) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed signal report from node %s", node->name);
        return;
    }
    if (!L.ending && !node->signalled && !node->reported) {
        rdp_run_signal_desc(signo, desc, sizeof(desc));
        say("%s received signal %s; terminating the job",
            node_desc(node, nd, sizeof(nd)), desc);
    }
    node->reported = 1; /* its exit that follows says nothing new */
    node_failed(node);
}

/* ---- the data service: publish, lookup, unpublish (datasvc.h) ---- */

typedef struct ds_reply {
    dnode_t *node;
    uint32_t id;
} ds_reply_t;

static void ds_send_reply(dnode_t *node, uint32_t id, pmix_status_t status,
                          const pmix_pdata_t *pd, size_t npd)
{
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_ctl_pubsub_reply_pack(&buf, id, status, pd, npd) == PMIX_SUCCESS) {
        send_to(node, RDP_CTL_PUBSUB_REPLY, &buf);
    } else {
        rdp_buf_cleanup(&buf);
    }
}

static void ds_lookup_cb(pmix_status_t status, const pmix_pdata_t *pd,
                         size_t npd, void *arg)
{
    ds_reply_t *r = arg;

    ds_send_reply(r->node, r->id, status, pd, npd);
    rdp_free(r);
}

/* Time out the waiting lookups at the earliest deadline. */
static void ds_arm_timer(void)
{
    double next = rdp_ds_next_deadline(L.ds);

    if (next > 0) {
        double left = next - rdp_time_now();

        rdp_timer_start(L.ds_timer, left > 0 ? left : 0);
    } else {
        rdp_timer_cancel(L.ds_timer);
    }
}

static void ds_timer_cb(void *arg)
{
    rdp_ds_expire(L.ds, rdp_time_now());
    ds_arm_timer();
}

static int node_has_rank(const dnode_t *node, pmix_rank_t rank)
{
    for (uint32_t i = 0; i < node->nranks; i++) {
        if (node->ranks[i] == rank) {
            return 1;
        }
    }
    return 0;
}

/* a lookup of range GLOBAL also searches the other jobs */
static int ds_is_global(const rdp_ctl_pubsub_t *m)
{
    size_t want;
    double timeout;
    int global = 0;

    return rdp_ds_read_wait(m->info, m->ninfo, 1, &global, &want, &timeout)
               == PMIX_SUCCESS
           && global;
}

static pmix_status_t ds_request(dnode_t *node, rdp_ctl_pubsub_t *m)
{
    rdp_ds_who_t who = {.proc = m->proc, .node = node->id};
    ds_reply_t *r;
    pmix_status_t status;

    /* a daemon speaks for the ranks of its node only */
    if (!PMIX_CHECK_NSPACE(m->proc.nspace, L.nspace)
        || !node_has_rank(node, m->proc.rank)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (m->op == RDP_CTL_PUBLISH) {
        return rdp_ds_publish(L.ds, &who, m->info, m->ninfo);
    }
    if (m->op == RDP_CTL_UNPUBLISH) {
        return rdp_ds_unpublish(L.ds, &who, m->keys, m->info, m->ninfo);
    }
    r = rdp_calloc(1, sizeof(*r));
    if (r == NULL) {
        return PMIX_ERR_NOMEM;
    }
    r->node = node;
    r->id   = m->id;
    if (L.peers != NULL && ds_is_global(m)) {
        status = rdp_run_peers_lookup(L.peers, &who, m->keys, m->info, m->ninfo,
                                      ds_lookup_cb, r);
    } else {
        status = rdp_ds_lookup(L.ds, &who, m->keys, m->info, m->ninfo,
                               rdp_time_now(), ds_lookup_cb, r);
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(r);
        return status;
    }
    return PMIX_OPERATION_IN_PROGRESS; /* answered by ds_lookup_cb */
}

static void on_pubsub(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_pubsub_t m;
    pmix_status_t status;

    if (rdp_ctl_pubsub_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed publish/lookup request from node %s",
                     node->name);
        return;
    }
    status = ds_request(node, &m);
    if (status != PMIX_OPERATION_IN_PROGRESS) {
        ds_send_reply(node, m.id, status, NULL, 0);
    }
    ds_arm_timer();
    rdp_ctl_pubsub_cleanup(&m);
}

/* A rank ended: its PERSIST_PROC data and waiting lookups go; once all
 * have, its namespace's PERSIST_APP data. */
static void ds_rank_ended(uint32_t rank)
{
    pmix_proc_t proc;

    PMIX_LOAD_PROCID(&proc, L.nspace, rank);
    rdp_ds_proc_ended(L.ds, &proc);
    rdp_run_peers_proc_ended(L.peers, &proc);
    if (++L.nexited == L.np) {
        rdp_ds_nspace_ended(L.ds, L.nspace);
    }
    ds_arm_timer();
}

/* ------------------------------------------------------------------ */
/* the daemons' host operations (rdpmixd_hostops.c)                     */

/* A job-control request: every daemon applies it to its ranks; the
 * requester answers its client when its own copy comes back. */
static void on_jctrl(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_jctrl_t m;
    rdp_buf_t buf;

    if (rdp_ctl_jctrl_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed job-control request from node %s",
                     node->name);
        return;
    }
    for (uint32_t i = 0; i < m.nranks; i++) {
        if (m.ranks[i] >= L.np) {
            rdp_log_warn(RUN, "job-control request for rank %u from node %s",
                         m.ranks[i], node->name);
            rdp_free(m.ranks);
            return;
        }
    }
    m.origin = node->id;
    for (uint32_t i = 0; i < L.nnodes; i++) {
        rdp_buf_init(&buf);
        if (rdp_ctl_jctrl_pack(&buf, &m) == PMIX_SUCCESS) {
            send_to(&L.nodes[i], RDP_CTL_JCTRL_DO, &buf);
        }
        rdp_buf_cleanup(&buf);
    }
    rdp_free(m.ranks);
}

static void on_procs_req(dnode_t *node, const void *payload, size_t len)
{
    rdp_ctl_procs_t t = {.n = L.np, .ents = L.procs};
    rdp_rbuf_t rb;
    rdp_buf_t buf;

    rdp_rbuf_init(&rb, payload, len);
    if (rdp_unpack_u32(&rb, &t.reqid) != PMIX_SUCCESS || rb.left != 0) {
        rdp_log_warn(RUN, "malformed proc-table request from node %s",
                     node->name);
        return;
    }
    t.job_status = L.ending ? PMIX_ERR_JOB_TERMINATED : PMIX_SUCCESS;
    rdp_buf_init(&buf);
    if (rdp_ctl_procs_pack(&buf, &t) == PMIX_SUCCESS) {
        send_to(node, RDP_CTL_PROCS, &buf);
    }
    rdp_buf_cleanup(&buf);
}

/* PMIX_LOG_GLOBAL_SYSLOG: we are the job's gateway */
static void on_syslog(dnode_t *node, const void *payload, size_t len)
{
    int32_t priority;
    char *msg;

    if (rdp_ctl_syslog_unpack(payload, len, &priority, &msg) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed syslog message from node %s", node->name);
        return;
    }
    if (rdp_logchan_syslog(priority, "rdpmix-run", NULL, msg) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "cannot write to syslog: %s", msg);
    }
    rdp_free(msg);
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
    case RDP_CTL_PUBSUB:
        on_pubsub(node, payload, len);
        break;
    case RDP_CTL_NOTIFY:
        on_notify(node, payload, len);
        break;
    case RDP_CTL_JCTRL:
        on_jctrl(node, payload, len);
        break;
    case RDP_CTL_PROCS_REQ:
        on_procs_req(node, payload, len);
        break;
    case RDP_CTL_SYSLOG:
        on_syslog(node, payload, len);
        break;
    case RDP_CTL_XCONN:
        if (L.xconn != NULL) {
            rdp_run_xconn_request(L.xconn, node->id, payload, len);
        }
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

/* A remote node's daemon is gone: its channel closed after SHUTDOWN, its
 * launch agent ended, or (under srun) its channel was lost. */
static void node_gone(dnode_t *node)
{
    if (node->alive) {
        node->alive = 0;
        L.nalive--;
        daemon_progress();
    }
}

static void orphan_cleanup(dnode_t *node);

/* A lost connection is reported only if the daemon's exit status does
 * not arrive shortly (that says more). */
static void lost_timer_cb(void *arg)
{
    char desc[320];

    for (uint32_t i = 0; i < L.nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (!node->lost || !node->failed) {
            continue;
        }
        if (!node->reported && !node->quiet) {
            node->reported = 1;
            say("lost the connection to %s; terminating the job",
                node_desc(node, desc, sizeof(desc)));
        }
        if (node->alive && agent_shared(node->agent)) {
            /* srun cannot end one node's daemon: it ends the job when it
             * notices, or died; what it left is removed */
            node_gone(node);
            orphan_cleanup(node);
        } else if (node->alive) {
            signal_daemon(node, SIGTERM);
        }
    }
    maybe_finish();
}

static void conn_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    conn_t *c     = arg;
    dnode_t *node = c->node;

    if (node == NULL || node->lost) {
        return; /* the chan is freed with the conn at exit */
    }
    node->lost = 1;
    if (!node->shutdown && (!node->done || node->host != NULL)) {
        /* a remote daemon closes its channel only when it exits, which
         * it does only once told to */
        node_failed(node);
        rdp_timer_start(L.lost_timer, node->alive ? 0.5 : 0);
    } else if (node->host != NULL) {
        node_gone(node);
    }
    maybe_shutdown();
}

static void accept_cb(int fd, int events, void *arg)
{
    for (;;) {
        int s = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
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

static pmix_status_t start_cleanup(dnode_t *node);

/* A daemon died without cleaning up: kill what its ranks left in their
 * process groups and remove its directory (only one it made); on its own
 * host for a remote daemon. */
static void orphan_cleanup(dnode_t *node)
{
    const char *base;

    if (node->host != NULL) {
        if (start_cleanup(node) != PMIX_SUCCESS) {
            rdp_log_warn(RUN, "cannot clean up after node %u on %s", node->id,
                         node->host);
        }
        node->npgids = 0;
        return;
    }
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

/* What ended a launch agent: "exited with status 255", "was killed by
 * signal 9 (Killed)". */
static void wait_desc(int wstatus, char *buf, size_t len)
{
    char sig[96];

    if (WIFSIGNALED(wstatus)) {
        rdp_run_signal_desc(WTERMSIG(wstatus), sig, sizeof(sig));
        snprintf(buf, len, "was killed by signal %s", sig);
    } else {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
    }
}

/*
 * A launch agent that reports a failure although none of its daemons had
 * failed, all of them gone after SHUTDOWN (srun: one of its tasks aborted
 * or was killed; ssh: the remote daemon did): a daemon died in its
 * shutdown, before it removed its directory.  The channel that closed
 * after SHUTDOWN said nothing of how it ended.  As for a local daemon, the
 * job fails, and what they may have left is removed (their ranks were
 * all reaped: only the directories).
 */
static void agent_failed_after_shutdown(agent_t *agent, int wstatus)
{
    char how[128];
    int said = 0;

    if ((WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) || agent->term_sent) {
        return;
    }
    for (uint32_t i = agent->first; i < agent->first + agent->nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (node->alive || !node->done || !node->shutdown || node->failed
            || node->signalled) {
            continue;
        }
        if (!said) {
            wait_desc(wstatus, how, sizeof(how));
            say("the launch agent of the daemons (pid %d) %s after they "
                "were told to end: a daemon failed in its shutdown",
                (int)agent->pid, how);
            said = 1;
        }
        node->failed = 1;
        set_status(1);
        orphan_cleanup(node);
    }
}

/* A launch agent ended; its nodes' daemons are gone with it (ssh ends
 * when the remote command does; srun when every task did). */
static void agent_exited(agent_t *agent, int wstatus)
{
    char how[128], desc[320];
    int said = 0, was_lost;

    agent->alive = 0;
    L.nagents_alive--;
    daemon_progress();
    for (uint32_t i = agent->first; i < agent->first + agent->nnodes; i++) {
        dnode_t *node = &L.nodes[i];

        if (!node->alive) {
            continue;
        }
        node_gone(node);
        if (node->done && node->shutdown) {
            continue; /* its channel closes next */
        }
        was_lost = node->lost;
        node_failed(node);
        node->lost = 1;
        orphan_cleanup(node);
        if (node->reported
            || (node->quiet && !(WIFSIGNALED(wstatus) && !node->signalled))) {
            continue;
        }
        node->reported = 1;
        wait_desc(wstatus, how, sizeof(how));
        if (was_lost && !(WIFSIGNALED(wstatus) && !agent_shared(agent))) {
            /* its connection broke first: that names the node (srun
             * ends its step when one of its tasks is killed) */
            say("lost the connection to %s; terminating the job",
                node_desc(node, desc, sizeof(desc)));
        } else if (agent_shared(agent)) {
            if (!said) {
                say("the srun that started the daemons (pid %d) %s; "
                    "terminating the job",
                    (int)agent->pid, how);
            }
            said = 1;
        } else if (!node->hello) {
            say("cannot start the daemon of %s: the launch agent %s; "
                "terminating the job",
                node_desc(node, desc, sizeof(desc)), how);
        } else if (WIFSIGNALED(wstatus)) {
            say("%s died; terminating the job",
                node_desc(node, desc, sizeof(desc)));
        } else {
            say("%s: the launch agent %s; terminating the job",
                node_desc(node, desc, sizeof(desc)), how);
        }
    }
    agent_failed_after_shutdown(agent, wstatus);
    maybe_shutdown();
}

static void sigchld_cb(int signo, void *arg)
{
    int wstatus;
    pid_t pid;
    char desc[96];

    while ((pid = waitpid(-1, &wstatus, WNOHANG | WUNTRACED | WCONTINUED))
           > 0) {
        for (uint32_t i = 0; i < L.nagents; i++) {
            if (L.agents[i]->pid == pid && L.agents[i]->alive
                && !WIFSTOPPED(wstatus) && !WIFCONTINUED(wstatus)) {
                agent_exited(L.agents[i], wstatus);
                break;
            }
        }
        for (uint32_t i = 0; i < L.nnodes; i++) {
            dnode_t *node = &L.nodes[i];

            if (node->host != NULL || node->pid != pid || !node->alive) {
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
        "  -n, --np N            number of ranks (default 1; with hosts,\n"
        "                        their slots; in Slurm, its tasks)\n"
        "  --nodes M             run M daemons on this machine, each a\n"
        "                        simulated node (default 1)\n"
        "  -H, --hosts H1[:S1],H2[:S2],...\n"
        "                        run one daemon on each host, through the\n"
        "                        launch agent; Si: the host's slots\n"
        "  --hostfile FILE       the hosts, one a line: NAME [slots=S]\n"
        "  --launch-agent CMD    how to start a daemon on a host: CMD HOST\n"
        "                        COMMAND (default ssh; RDPMIX_LAUNCH_AGENT)\n"
        "  --launch local|ssh|slurm\n"
        "                        where the daemons run (default: ssh with\n"
        "                        --hosts, slurm in a Slurm allocation,\n"
        "                        else this machine)\n"
        "  --ctl-if IF|NET,...   the interfaces (or IPv4 subnets) remote\n"
        "                        daemons reach rdpmix-run on (RDPMIX_CTL_IF)\n"
        "  --map-by block|slot|node\n"
        "                        placement of the ranks on the nodes:\n"
        "                        balanced blocks of consecutive ranks\n"
        "                        (default), fill each node's slots in\n"
        "                        turn, or round robin\n"
        "  --slots-per-node K    slots of each node (default: the host's,\n"
        "                        Slurm's, or ceil(N/M)); N may not exceed\n"
        "                        M*K\n"
        "  --pnet LIST           fabric credential modules for the job\n"
        "                        (opa, ib, tcp; ^LIST: all but these;\n"
        "                        default RDPMIX_PNET, else those the\n"
        "                        machine has: docs/pnet.md)\n"
        "  --tag-output          prefix each output line with \"[rank] \"\n"
        "  --enable-recovery     a rank that fails (exit status or signal)\n"
        "                        does not end the job: the others are\n"
        "                        told (PMIX_ERR_PROC_ABORTED,\n"
        "                        PMIX_EVENT_PROC_TERMINATED) and go on\n"
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
        "failing (unless --enable-recovery) or aborting rank ends the\n"
        "whole job. See docs/run.md.\n");
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

/* The standard output of @a argv (searched in PATH), or NULL with the
 * reason said.  Before the loop exists: waits for the child. */
static char *run_capture(char *const argv[])
{
    size_t len = 0, cap = 4096;
    char *out = rdp_malloc(cap + 1);
    int p[2], wstatus;
    pid_t pid;

    if (out == NULL || pipe2(p, O_CLOEXEC) != 0) {
        say("cannot run %s: %s", argv[0], strerror(errno));
        rdp_free(out);
        return NULL;
    }
    pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);

        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(p[1], 1) < 0) {
            _exit(127);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "rdpmix-run: cannot execute %s: %s\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
        say("cannot run %s: %s", argv[0], strerror(errno));
        close(p[0]);
        rdp_free(out);
        return NULL;
    }
    for (;;) {
        ssize_t n;

        if (len == cap) {
            char *v = rdp_realloc(out, 2 * cap + 1);

            if (v == NULL) {
                break;
            }
            out = v;
            cap *= 2;
        }
        n = read(p[0], out + len, cap - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
    }
    close(p[0]);
    out[len] = '\0';
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        say("%s %s failed", argv[0], argv[1] != NULL ? argv[1] : "");
        rdp_free(out);
        return NULL;
    }
    return out;
}

/* An environment variable that is set and not empty, or NULL. */
static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

/*
 * The nodes of the Slurm allocation we run in: SLURM_JOB_NODELIST in
 * Slurm's order (expanded by scontrol), slots from SLURM_TASKS_PER_NODE
 * (else SLURM_JOB_CPUS_PER_NODE), the default -n from SLURM_NTASKS (else
 * the slots).
 */
static void read_slurm_nodes(void)
{
    const char *list = env_nonempty("SLURM_JOB_NODELIST");
    const char *per_node;
    char *argv[5], *out, *line, *save = NULL;
    char err[512];
    uint32_t *counts;

    if (list == NULL) {
        list = env_nonempty("SLURM_NODELIST");
    }
    if (list == NULL) {
        say("SLURM_JOB_NODELIST is not set: cannot find the allocation's "
            "nodes");
        exit(1);
    }
    argv[0] = "scontrol";
    argv[1] = "show";
    argv[2] = "hostnames";
    argv[3] = (char *)list;
    argv[4] = NULL;
    out     = run_capture(argv);
    if (out == NULL) {
        say("cannot list the nodes of the Slurm allocation (%s)", list);
        exit(1);
    }
    for (line = strtok_r(out, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '\0') {
            continue;
        }
        if (rdp_run_hostlist_add(&L.hosts, line, strlen(line), 0, err,
                                 sizeof(err))
            != PMIX_SUCCESS) {
            say("the Slurm allocation's nodes (%s): %s", list, err);
            exit(1);
        }
    }
    rdp_free(out);
    if (L.hosts.n == 0) {
        say("the Slurm allocation has no nodes (%s)", list);
        exit(1);
    }
    counts = rdp_calloc(L.hosts.n, sizeof(*counts));
    if (counts == NULL) {
        say("out of memory");
        exit(1);
    }
    per_node = env_nonempty("SLURM_TASKS_PER_NODE");
    if (per_node == NULL
        || rdp_run_slurm_counts_parse(per_node, L.hosts.n, counts) != 0) {
        per_node = env_nonempty("SLURM_JOB_CPUS_PER_NODE");
        if (per_node != NULL
            && rdp_run_slurm_counts_parse(per_node, L.hosts.n, counts) != 0) {
            per_node = NULL;
        }
    }
    for (uint32_t i = 0; per_node != NULL && i < L.hosts.n; i++) {
        L.hosts.hosts[i].slots = counts[i];
    }
    rdp_free(counts);
    if (!L.np_given && env_nonempty("SLURM_NTASKS") != NULL
        && rdp_run_parse_u32(getenv("SLURM_NTASKS"), 1, MAX_NP, &L.np) == 0) {
        L.np_given = 1;
    }
}

/*
 * Where the daemons run: --launch, else ssh to --hosts, else the Slurm
 * allocation we run in (unless --nodes asks for simulated nodes), else
 * this machine.  Then the nodes, the default -n and whether the ranks fit.
 */
static void choose_mode(void)
{
    const char *jobid = env_nonempty("SLURM_JOB_ID");
    uint64_t total    = 0;
    int all_limited   = 1;
    char err[512];

    if (jobid == NULL) {
        jobid = env_nonempty("SLURM_JOBID");
    }
    if (!L.mode_given) {
        if (L.hosts.n > 0) {
            L.mode = LAUNCH_SSH;
        } else if (!L.nodes_given && jobid != NULL) {
            L.mode = LAUNCH_SLURM;
        } else {
            L.mode = LAUNCH_LOCAL;
        }
    }
    if (L.mode == LAUNCH_LOCAL) {
        if (L.hosts.n > 0) {
            usage_error("--hosts and --hostfile start daemons on other "
                        "hosts, not with --launch local");
        }
        return;
    }
    if (L.nodes_given) {
        usage_error("--nodes simulates nodes on this machine, not with %s",
                    L.mode == LAUNCH_SSH ? "--hosts or --hostfile"
                                         : "--launch slurm");
    }
    if (L.mode == LAUNCH_SSH && L.hosts.n == 0) {
        usage_error("--launch ssh needs --hosts or --hostfile");
    }
    if (L.mode == LAUNCH_SLURM) {
        if (L.hosts.n > 0) {
            usage_error("--hosts and --hostfile do not go with --launch "
                        "slurm: the nodes are the allocation's");
        }
        if (jobid == NULL) {
            usage_error("--launch slurm: not inside a Slurm allocation "
                        "(SLURM_JOB_ID is not set)");
        }
        read_slurm_nodes();
    }
    if (L.hosts.n > MAX_HOSTS) {
        usage_error("%u hosts: at most %u", L.hosts.n, MAX_HOSTS);
    }
    if (L.ctl_if == NULL) {
        L.ctl_if = rdp_cfg_env(RDP_CFG_CTL_IF);
    }
    if (L.ctl_if != NULL
        && rdp_run_ctl_filter_check(L.ctl_if, err, sizeof(err)) != 0) {
        usage_error("--ctl-if (RDPMIX_CTL_IF): %s", err);
    }
    L.nnodes = L.hosts.n;
    for (uint32_t i = 0; i < L.hosts.n; i++) {
        uint32_t s = L.slots > 0 ? L.slots : L.hosts.hosts[i].slots;

        total += s > 0 ? s : 1;
        all_limited = all_limited && s > 0;
    }
    if (!L.np_given) {
        if (total > MAX_NP) {
            usage_error("the hosts have %llu slots; give -n (at most %u)",
                        (unsigned long long)total, MAX_NP);
        }
        L.np = (uint32_t)total;
    }
    if (L.slots == 0 && all_limited && L.np > total) {
        if (L.mode == LAUNCH_SLURM) {
            /* the allocation has fewer tasks than ranks: they share its
             * CPUs, spread over the nodes as evenly as they go */
            L.slurm_oversubscribed = 1;
        } else {
            usage_error("%u ranks do not fit in the %llu slots of %u hosts",
                        L.np, (unsigned long long)total, L.hosts.n);
        }
    }
}

static void parse_args(int argc, char **argv)
{
    int i;
    const char *v;
    char err[512];

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
        } else if (strcmp(a, "--enable-recovery") == 0) {
            L.recovery = 1;
        } else if (strcmp(a, "--no-ompi") == 0) {
            L.ompi = 0;
        } else if ((v = match_opt(argc, argv, &i, "--pnet", 0)) != NULL) {
            L.pnet = v;
        } else if ((v = match_opt(argc, argv, &i, "--np", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "-np", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "-n", 1)) != NULL) {
            if (rdp_run_parse_u32(v, 1, MAX_NP, &L.np) != 0) {
                usage_error("-n needs a number of ranks from 1 to %u, not "
                            "'%s'",
                            MAX_NP, v);
            }
            L.np_given = 1;
        } else if ((v = match_opt(argc, argv, &i, "--nodes", 0)) != NULL) {
            if (rdp_run_parse_u32(v, 1, MAX_NODES, &L.nnodes) != 0) {
                usage_error("--nodes needs a number of nodes from 1 to %u, "
                            "not '%s'",
                            MAX_NODES, v);
            }
            L.nodes_given = 1;
        } else if ((v = match_opt(argc, argv, &i, "--hosts", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "--host", 0)) != NULL
                   || (v = match_opt(argc, argv, &i, "-H", 0)) != NULL) {
            if (rdp_run_hosts_parse(v, &L.hosts, err, sizeof(err))
                != PMIX_SUCCESS) {
                usage_error("--hosts: %s", err);
            }
        } else if ((v = match_opt(argc, argv, &i, "--hostfile", 0)) != NULL) {
            if (rdp_run_hostfile_read(v, &L.hosts, err, sizeof(err))
                != PMIX_SUCCESS) {
                usage_error("%s", err);
            }
        } else if ((v = match_opt(argc, argv, &i, "--launch-agent", 0))
                   != NULL) {
            L.agent_cmd = v;
        } else if ((v = match_opt(argc, argv, &i, "--launch", 0)) != NULL) {
            if (strcmp(v, "local") == 0) {
                L.mode = LAUNCH_LOCAL;
            } else if (strcmp(v, "ssh") == 0) {
                L.mode = LAUNCH_SSH;
            } else if (strcmp(v, "slurm") == 0) {
                L.mode = LAUNCH_SLURM;
            } else {
                usage_error("--launch needs local, ssh or slurm, not '%s'", v);
            }
            L.mode_given = 1;
        } else if ((v = match_opt(argc, argv, &i, "--ctl-if", 0)) != NULL) {
            L.ctl_if = v;
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
    if (i >= argc) {
        usage_error("no program given");
    }
    L.argv = &argv[i];
    choose_mode();
    if (L.slots > 0 && (uint64_t)L.slots * L.nnodes < L.np) {
        usage_error("%u ranks do not fit in %u nodes of %u slots", L.np,
                    L.nnodes, L.slots);
    }
    L.engine = L.nnodes > 1;
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
    const char *env = rdp_cfg_env(RDP_CFG_DAEMON);
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

/* Listen on @a addr (network order; port 0: any) and watch it; the port
 * it got into *port_p. */
static void listen_on(struct in_addr addr, uint16_t *port_p)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    char astr[INET_ADDRSTRLEN];
    int fd;

    if (L.nlisten == MAX_LISTEN) {
        say("more than %d addresses to listen on (--ctl-if)", MAX_LISTEN);
        exit(1);
    }
    inet_ntop(AF_INET, &addr, astr, sizeof(astr));
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        say("cannot create the control socket: %s", strerror(errno));
        exit(1);
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr   = addr;
    sin.sin_port   = 0;
    if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0
        || listen(fd, 128) != 0
        || getsockname(fd, (struct sockaddr *)&sin, &slen) != 0) {
        say("cannot listen on %s: %s", astr, strerror(errno));
        exit(1);
    }
    L.listen_fds[L.nlisten] = fd;
    if (rdp_fdwatch_create(L.loop, fd, RDP_FD_READ, accept_cb, NULL,
                           &L.listen_watches[L.nlisten])
        != PMIX_SUCCESS) {
        close(fd);
        say("cannot watch the control socket");
        exit(1);
    }
    rdp_fdwatch_enable(L.listen_watches[L.nlisten]);
    L.nlisten++;
    *port_p = ntohs(sin.sin_port);
}

/* append "A.B.C.D:PORT" to L.ctl_spec */
static void spec_add(struct in_addr addr, uint16_t port)
{
    char astr[INET_ADDRSTRLEN];
    size_t old = L.ctl_spec != NULL ? strlen(L.ctl_spec) : 0;
    char *v    = rdp_realloc(L.ctl_spec, old + INET_ADDRSTRLEN + 8);

    if (v == NULL) {
        say("out of memory");
        exit(1);
    }
    inet_ntop(AF_INET, &addr, astr, sizeof(astr));
    snprintf(v + old, INET_ADDRSTRLEN + 8, "%s%s:%u", old > 0 ? "," : "", astr,
             port);
    L.ctl_spec = v;
}

/*
 * The control listener.  Daemons on this machine connect to 127.0.0.1.
 * Remote daemons get every IPv4 address of this machine that --ctl-if
 * (RDPMIX_CTL_IF) lets through, to try in turn; without a filter we
 * listen on all addresses, with one only on the addresses it selects.
 * Whoever connects must prove it knows the job secret (on_hello).
 */
static void setup_listener(void)
{
    struct in_addr *addrs = NULL, any;
    size_t naddrs         = 0;
    uint16_t port;

    if (L.mode == LAUNCH_LOCAL) {
        any.s_addr = htonl(INADDR_LOOPBACK);
        listen_on(any, &port);
        spec_add(any, port);
        return;
    }
    if (rdp_run_ctl_local_addrs(L.ctl_if, &addrs, &naddrs) != PMIX_SUCCESS) {
        say("cannot list this machine's network addresses");
        exit(1);
    }
    if (naddrs == 0) {
        if (L.ctl_if != NULL) {
            say("no IPv4 address of this machine matches --ctl-if %s",
                L.ctl_if);
        } else {
            say("this machine has no IPv4 address the daemons could reach");
        }
        rdp_free(addrs);
        exit(1);
    }
    if (L.ctl_if == NULL) {
        any.s_addr = htonl(INADDR_ANY);
        listen_on(any, &port);
        for (size_t i = 0; i < naddrs; i++) {
            spec_add(addrs[i], port);
        }
    } else {
        for (size_t i = 0; i < naddrs; i++) {
            listen_on(addrs[i], &port);
            spec_add(addrs[i], port);
        }
    }
    rdp_free(addrs);
    rdp_log_debug(RUN, "daemons connect to %s", L.ctl_spec);
}

/*
 * Fork and exec @a path with @a argv and @a envp: its own process group,
 * SIGTERM when rdpmix-run dies, default signal dispositions; its stdout
 * is our stderr (whatever a daemon, an agent or UCX prints is a
 * diagnostic, never the job's output, which comes over the control
 * channel); its stdin carries the job secret (hex, then end of file)
 * when @a secret, else it is /dev/null.  The pid, or -1 (said).
 */
static pid_t start_process(const char *path, char **argv, char **envp,
                           int secret, const char *what)
{
    char hex[2 * RDP_CTL_SECRET_LEN + 2];
    int sp[2];
    pid_t parent = getpid();
    sigset_t all, old;
    pid_t pid;

    if (secret ? pipe2(sp, O_CLOEXEC) != 0
               : (sp[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        say("cannot start %s: %s", what, strerror(errno));
        return -1;
    }
    if (secret) {
        /* written before the fork, while we still hold the read end: an
         * agent that exits at once (a host it cannot reach) can then
         * never make this a broken pipe and a second message beside the
         * one naming its exit status; 66 bytes fit in an empty pipe */
        int failed;

        rdp_run_hex_encode(L.secret, sizeof(L.secret), hex);
        strcat(hex, "\n");
        failed = rdp_run_write_all(sp[1], hex, strlen(hex)) != 0;
        explicit_bzero(hex, sizeof(hex));
        if (failed) {
            say("cannot hand the secret to %s: %s", what, strerror(errno));
            close(sp[0]);
            close(sp[1]);
            return -1;
        }
    }
    /* signals stay blocked until the child has dropped our handlers (a
     * signal caught in between would be reported into our loop) */
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        say("cannot start %s: %s", what, strerror(errno));
        close(sp[0]);
        if (secret) {
            close(sp[1]);
        }
        return -1;
    }
    if (pid == 0) {
        struct sigaction sa;

        setpgid(0, 0);
        /* if rdpmix-run dies, a local daemon ends the job and exits; an
         * agent ends, and its remote daemon loses its connection */
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
        if (dup2(sp[0], 0) < 0 || dup2(2, 1) < 0) {
            _exit(1);
        }
        execve(path, argv, envp);
        {
            char msg[PATH_MAX + 128];
            int len = snprintf(msg, sizeof(msg),
                               "rdpmix-run: cannot execute %s: %s\n", path,
                               strerror(errno));

            if (len > 0 && write(2, msg, (size_t)len) < 0) {
                /* nothing more to do */
            }
        }
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    setpgid(pid, pid);
    close(sp[0]);
    if (secret) {
        close(sp[1]); /* end of file after the secret */
    }
    return pid;
}

/*
 * The daemon's command line from --secret-fd on: every daemon's but for
 * its node id, which a local or ssh daemon gets as --node-id N (and a
 * local one its name), and srun's from SLURM_NODEID.  @a args has room
 * for 20 words; returns how many were written (NULL-terminated).
 */
static int daemon_args(const dnode_t *node, char **args, char *id, size_t idlen)
{
    int na = 0;

    args[na++] = L.daemon_path;
    args[na++] = "--ctl";
    args[na++] = L.ctl_spec;
    args[na++] = "--secret-fd";
    args[na++] = "0";
    if (node != NULL) {
        snprintf(id, idlen, "%u", node->id);
        args[na++] = "--node-id";
        args[na++] = id;
    } else {
        args[na++] = "--node-id-env";
        args[na++] = "SLURM_NODEID";
    }
    if (node != NULL && node->host == NULL) {
        args[na++] = "--node-name";
        args[na++] = node->name;
    }
    args[na++] = "--daemon-nspace";
    args[na++] = L.dvm_nspace;
    if (L.engine) {
        args[na++] = "--engine";
    }
    if (L.daemon_only[0] != '\0') {
        args[na++] = "--daemon-env";
        args[na++] = L.daemon_only;
    }
    args[na] = NULL;
    return na;
}

/* Fork one daemon on this machine; its stdin carries the secret and is
 * then /dev/null. */
static void start_daemon(dnode_t *node)
{
    char id[16];
    char *args[20];
    pid_t pid;

    daemon_args(node, args, id, sizeof(id));
    pid = start_process(L.daemon_path, args,
                        L.daemon_env != NULL ? L.daemon_env : environ, 1,
                        "the daemon");
    if (pid < 0) {
        exit(1);
    }
    node->pid   = pid;
    node->alive = 1;
    L.nalive++;
}

static agent_t *agent_add(pid_t pid, uint32_t first, uint32_t nnodes)
{
    agent_t *agent = rdp_calloc(1, sizeof(*agent));
    agent_t **v    = rdp_realloc(L.agents, (L.nagents + 1) * sizeof(*v));

    if (v != NULL) {
        L.agents = v;
    }
    if (agent == NULL || v == NULL) {
        /* it runs; without a record it would go unreaped: kill it */
        kill(-pid, SIGKILL);
        rdp_free(agent);
        say("out of memory");
        return NULL;
    }
    agent->pid            = pid;
    agent->alive          = 1;
    agent->first          = first;
    agent->nnodes         = nnodes;
    L.agents[L.nagents++] = agent;
    L.nagents_alive++;
    return agent;
}

/* argv = agent words, @a host, @a cmd (one word: the agent's remote
 * shell reads it); malloc'ed vector of borrowed strings */
static char **agent_argv(const char *host, char *cmd)
{
    size_t n = 0;
    char **argv;

    while (L.agent_words[n] != NULL) {
        n++;
    }
    argv = rdp_calloc(n + 3, sizeof(*argv));
    if (argv != NULL) {
        memcpy(argv, L.agent_words, n * sizeof(*argv));
        argv[n]     = (char *)host;
        argv[n + 1] = cmd;
    }
    return argv;
}

/*
 * Over ssh: "AGENT HOST 'exec env UCX_...=... RDPMIX_...=... rdpmixd ...'"
 * for each host.  ssh gives the remote shell one string and forwards our
 * stdin, which carries the secret; the daemon's environment is the remote
 * login's plus the UCX_* and RDPMIX_* settings given here.
 */
static void start_ssh_daemons(void)
{
    char id[16];
    char *args[20], **words, **argv, *cmd;
    size_t nenv = 0;
    int na;

    while (L.remote_env != NULL && L.remote_env[nenv] != NULL) {
        nenv++;
    }
    words = rdp_calloc(nenv + 24, sizeof(*words));
    if (words == NULL) {
        say("out of memory");
        exit(1);
    }
    for (uint32_t i = 0; i < L.nnodes; i++) {
        dnode_t *node = &L.nodes[i];
        pid_t pid;
        size_t nw = 0;

        words[nw++] = "exec";
        words[nw++] = "env";
        for (size_t e = 0; e < nenv; e++) {
            words[nw++] = L.remote_env[e];
        }
        na = daemon_args(node, args, id, sizeof(id));
        memcpy(words + nw, args, (size_t)(na + 1) * sizeof(*words));
        cmd  = rdp_run_words_quote(words);
        argv = cmd != NULL ? agent_argv(node->host, cmd) : NULL;
        if (argv == NULL) {
            say("out of memory");
            exit(1);
        }
        pid = start_process(L.agent_path, argv, environ, 1, "the launch agent");
        rdp_free(argv);
        rdp_free(cmd);
        if (pid < 0) {
            exit(1);
        }
        node->agent = agent_add(pid, i, 1);
        if (node->agent == NULL) {
            exit(1);
        }
        node->alive = 1;
        L.nalive++;
    }
    rdp_free(words);
}

/*
 * In a Slurm allocation: one srun starts a daemon on every node.  The
 * daemons get our environment (srun exports it) and learn their node id
 * from SLURM_NODEID; srun broadcasts its stdin, the secret, to every
 * task (--input=all).  The step takes every CPU of the allocation
 * (--whole): the ranks are the daemons' children and run inside it.
 */
static void start_slurm_daemons(void)
{
    char nodes[32], ntasks[32];
    char *argv[40], id[16];
    int n = 0;
    pid_t pid;

    snprintf(nodes, sizeof(nodes), "--nodes=%u", L.nnodes);
    snprintf(ntasks, sizeof(ntasks), "--ntasks=%u", L.nnodes);
    argv[n++] = "srun";
    argv[n++] = "--quiet";
    argv[n++] = nodes;
    argv[n++] = ntasks;
    argv[n++] = "--ntasks-per-node=1";
    argv[n++] = "--whole";
    argv[n++] = "--mpi=none";
    argv[n++] = "--kill-on-bad-exit=0";
    argv[n++] = "--input=all";
    argv[n++] = "--export=ALL";
    daemon_args(NULL, argv + n, id, sizeof(id));
    pid =
        start_process(L.agent_path, argv,
                      L.daemon_env != NULL ? L.daemon_env : environ, 1, "srun");
    if (pid < 0) {
        exit(1);
    }
    if (agent_add(pid, 0, L.nnodes) == NULL) {
        exit(1);
    }
    for (uint32_t i = 0; i < L.nnodes; i++) {
        L.nodes[i].agent = L.agents[L.nagents - 1];
        L.nodes[i].alive = 1;
        L.nalive++;
    }
}

/*
 * A remote daemon died: on its host, kill what its ranks left in their
 * process groups and remove its directory (only one it made), through
 * the launch agent (srun: a step of its own that may share the
 * allocation's CPUs).  Waited for like the other agents.
 */
static pmix_status_t start_cleanup(dnode_t *node)
{
    char *words[5] = {"rm", "-rf", "--", NULL, NULL};
    char *argv[20], *quoted = NULL, *cmd, **av = NULL;
    char nodelist[300];
    const char *base;
    size_t len;
    int have_dir;
    pid_t pid;

    if (node->cleaned) {
        return PMIX_SUCCESS;
    }
    node->cleaned = 1;
    base          = node->tmpdir != NULL ? strrchr(node->tmpdir, '/') : NULL;
    have_dir      = base != NULL && node->tmpdir[0] == '/'
               && strncmp(base, "/rdpmixd.", 9) == 0;
    if (!have_dir && node->npgids == 0) {
        return PMIX_SUCCESS;
    }
    if (have_dir) {
        words[3] = node->tmpdir;
        quoted   = rdp_run_words_quote(words);
        if (quoted == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    len = 32 + (quoted != NULL ? strlen(quoted) : 0) + 12 * node->npgids;
    cmd = rdp_malloc(len);
    if (cmd == NULL) {
        rdp_free(quoted);
        return PMIX_ERR_NOMEM;
    }
    cmd[0] = '\0';
    if (node->npgids > 0) {
        strcat(cmd, "kill -s KILL --");
        for (uint32_t i = 0; i < node->npgids; i++) {
            if (node->pgids[i] > 1) {
                snprintf(cmd + strlen(cmd), len - strlen(cmd), " -%u",
                         node->pgids[i]);
            }
        }
        strcat(cmd, " 2>/dev/null; ");
    }
    if (quoted != NULL) {
        strcat(cmd, quoted);
    }
    rdp_free(quoted);
    if (L.mode == LAUNCH_SLURM) {
        int n = 0;

        snprintf(nodelist, sizeof(nodelist), "--nodelist=%s", node->host);
        argv[n++] = "srun";
        argv[n++] = "--quiet";
        argv[n++] = "--overlap";
        argv[n++] = "--nodes=1";
        argv[n++] = "--ntasks=1";
        argv[n++] = nodelist;
        argv[n++] = "--mpi=none";
        argv[n++] = "sh";
        argv[n++] = "-c";
        argv[n++] = cmd;
        argv[n]   = NULL;
        pid = start_process(L.agent_path, argv, environ, 0, "a cleanup step");
    } else {
        av  = agent_argv(node->host, cmd);
        pid = av == NULL ? -1
                         : start_process(L.agent_path, av, environ, 0,
                                         "the launch agent");
    }
    rdp_free(av);
    rdp_free(cmd);
    if (pid < 0) {
        return PMIX_ERR_SYS_OTHER;
    }
    rdp_log_info(RUN, "cleaning up after node %u on %s (pid %d)", node->id,
                 node->host, (int)pid);
    return agent_add(pid, 0, 0) != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/*
 * The daemons of a multi-node job run UCX and fork their ranks: unless the
 * user chose otherwise, UCX's memory hooks are off (fork safety).  UCX
 * reads these when it is loaded, so they must be in the environment the
 * daemon starts with.  The daemon does not pass them to its ranks.
 */
/*
 * Over ssh a daemon starts in its host's login environment: it gets our
 * UCX_* and RDPMIX_* settings (and the defaults above) on its command
 * line, through env(1).  Not secrets: the job secret goes over stdin.
 */
static void setup_remote_env(void)
{
    char **src = L.daemon_env != NULL ? L.daemon_env : environ;
    size_t n = 0, k = 0;

    if (L.mode != LAUNCH_SSH) {
        return;
    }
    while (src[n] != NULL) {
        n++;
    }
    L.remote_env = rdp_calloc(n + 1, sizeof(char *));
    if (L.remote_env == NULL) {
        say("out of memory");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        if (strncmp(src[i], "UCX_", 4) == 0
            || strncmp(src[i], "RDPMIX_", 7) == 0) {
            L.remote_env[k++] = src[i]; /* borrowed */
        }
    }
}

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

    if (L.mode == LAUNCH_SLURM) {
        /* what srun sets for the daemons' own tasks is not for the ranks
         * (they get the allocation's SLURM_* in the LAUNCH) */
        snprintf(L.daemon_only, sizeof(L.daemon_only), "SLURM_*,SLURMD_*");
    }
    if (!L.engine) {
        setup_remote_env();
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
    setup_remote_env();
}

static void setup_job(void)
{
    uint8_t rnd[4];
    char rhex[9];
    char *host;
    uint32_t *node_of, *slots;
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
    L.procs = rdp_calloc(L.np, sizeof(*L.procs));
    node_of = rdp_calloc(L.np, sizeof(*node_of));
    slots   = rdp_calloc(L.nnodes, sizeof(*slots));
    if (host == NULL || L.nodes == NULL || L.procs == NULL || node_of == NULL
        || slots == NULL) {
        say("out of memory");
        exit(1);
    }
    /* --slots-per-node, else the hosts' own (Slurm's only while the ranks
     * fit in them), else no limit */
    for (uint32_t n = 0; n < L.nnodes; n++) {
        slots[n] = L.slots;
        if (L.slots == 0 && L.hosts.n > 0 && !L.slurm_oversubscribed) {
            slots[n] = L.hosts.hosts[n].slots;
        }
    }
    status = rdp_run_place_slots(L.np, L.nnodes, L.mapby, slots, node_of);
    rdp_free(slots);
    if (status != PMIX_SUCCESS) {
        /* parse_args checked what could fail */
        say("cannot place %u ranks on %u nodes: %s", L.np, L.nnodes,
            rdp_status_name(status));
        exit(2);
    }
    for (uint32_t n = 0; n < L.nnodes; n++) {
        dnode_t *node = &L.nodes[n];

        node->id = n;
        /* one node is this machine; simulated nodes are "<host>-n<i>"; a
         * remote node is its host until its daemon says its own name */
        if (L.hosts.n > 0) {
            node->host  = rdp_strdup(L.hosts.hosts[n].name);
            node->name  = rdp_strdup(L.hosts.hosts[n].name);
            node->slots = L.hosts.hosts[n].slots;
            if (node->host == NULL) {
                say("out of memory");
                exit(1);
            }
        } else if (L.nnodes == 1) {
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

/* Share GLOBAL publish/lookup data with the user's other launchers; a
 * job runs without if that cannot be set up safely. */
static void setup_peers(void)
{
    char why[512];

    if (rdp_run_peers_create(L.loop, L.ds, NULL, why, sizeof(why), &L.peers)
        != PMIX_SUCCESS) {
        say("GLOBAL publish/lookup data stays within this job: %s", why);
        L.peers = NULL;
    }
}

static void cleanup(void)
{
    rdp_list_t *item;

    /* before the channels go: they answer what still waits */
    rdp_run_xconn_destroy(L.xconn);
    L.xconn = NULL;
    rdp_free(L.xnodes);
    L.xnodes = NULL;
    rdp_run_peers_destroy(L.peers);
    L.peers = NULL;
    rdp_ds_destroy(L.ds);
    L.ds = NULL;
    while ((item = rdp_list_pop_front(&L.conns)) != NULL) {
        conn_t *c = rdp_container_of(item, conn_t, link);

        rdp_run_chan_destroy(c->chan);
        rdp_free(c);
    }
    close_listeners();
    rdp_timer_destroy(L.startup_timer);
    rdp_timer_destroy(L.timeout_timer);
    rdp_timer_destroy(L.kill_timer);
    rdp_timer_destroy(L.lost_timer);
    rdp_timer_destroy(L.ds_timer);
    rdp_sigwatch_destroy(L.sig_int);
    rdp_sigwatch_destroy(L.sig_term);
    rdp_sigwatch_destroy(L.sig_hup);
    rdp_sigwatch_destroy(L.sig_chld);
    rdp_loop_destroy(L.loop);
    rdp_run_iof_destroy(L.iof);
    for (uint32_t i = 0; L.nodes != NULL && i < L.nnodes; i++) {
        rdp_free(L.nodes[i].name);
        rdp_free(L.nodes[i].host);
        rdp_free(L.nodes[i].ranks);
        rdp_free(L.nodes[i].pgids);
        rdp_free(L.nodes[i].pgid_ranks);
        rdp_free(L.nodes[i].tmpdir);
        rdp_free(L.nodes[i].engine_addr);
    }
    rdp_free(L.nodes);
    rdp_free(L.procs);
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
    for (uint32_t i = 0; i < L.nagents; i++) {
        rdp_free(L.agents[i]);
    }
    rdp_free(L.agents);
    rdp_ctl_strv_free(L.agent_words);
    rdp_free(L.agent_path);
    rdp_free(L.remote_env);
    rdp_free(L.ctl_spec);
    rdp_run_hostlist_cleanup(&L.hosts);
    explicit_bzero(L.secret, sizeof(L.secret));
}

/*
 * The program that starts remote daemons: the launch agent (--launch-agent,
 * RDPMIX_LAUNCH_AGENT, default ssh) or srun, found in PATH before anything
 * starts, so that a missing one is one message.
 */
static void find_agent(void)
{
    const char *cmd = L.agent_cmd;
    int err;

    if (L.mode == LAUNCH_LOCAL) {
        return;
    }
    if (L.mode == LAUNCH_SLURM) {
        cmd = "srun";
    } else if (cmd == NULL) {
        cmd = rdp_cfg_string(RDP_CFG_LAUNCH_AGENT);
    }
    if (rdp_run_words_split(cmd, &L.agent_words) != PMIX_SUCCESS) {
        usage_error("the launch agent '%s' is not a command (empty, or an "
                    "unterminated quote)",
                    cmd);
    }
    err = rdp_run_spawn_resolve(L.agent_words[0], environ, NULL, &L.agent_path);
    if (err != 0) {
        say("cannot find the launch agent %s: %s%s", L.agent_words[0],
            strerror(err),
            L.mode == LAUNCH_SSH ? " (--launch-agent, RDPMIX_LAUNCH_AGENT)"
                                 : "");
        exit(1);
    }
}

/* RFC0012's head-node step: the pnet modules mint the job's credentials
 * before any daemon starts, so a pool that is empty stops the job before
 * anything runs.  Their answer goes to every daemon with the launch. */
static void setup_network(void)
{
    const char *spec = L.pnet != NULL ? L.pnet : rdp_cfg_env(RDP_CFG_PNET);
    pmix_status_t status;

    status = rdp_pnet_select(spec);
    if (status != PMIX_SUCCESS) {
        say("--pnet/RDPMIX_PNET '%s' names no module (docs/pnet.md)",
            spec == NULL ? "" : spec);
        exit(1);
    }
    /* the daemons (which inherit or are sent our RDPMIX_* variables) run
     * the same modules' node steps */
    setenv("RDPMIX_PNET",
           rdp_pnet_selected()[0] != '\0' ? rdp_pnet_selected() : "none", 1);
    L.net_owner = getpid();
    status      = rdp_pnet_setup_app(L.nspace, NULL, 0, &L.net, &L.nnet);
    if (status != PMIX_SUCCESS) {
        say("cannot set up the job's network (%s): %s; nothing was launched",
            rdp_pnet_selected(), rdp_status_name(status));
        exit(1);
    }
}

/* The job is over: the pools get its values back, the keys are wiped. */
static void cleanup_network(void)
{
    if (getpid() != L.net_owner) {
        return;
    }
    rdp_pnet_job_end(L.nspace);
    for (size_t i = 0; i < L.nnet; i++) {
        rdp_pnet_wipe_value(&L.net[i].value);
    }
    rdp_info_array_free(L.net, L.nnet);
    L.net  = NULL;
    L.nnet = 0;
    rdp_pnet_cleanup();
}

int main(int argc, char **argv)
{
    pmix_status_t status;

    rdp_log_init();
    rdp_log_set_ident("rdpmix-run");
    rdp_list_init(&L.conns);
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    L.grace = rdp_cfg_seconds(RDP_CFG_KILL_GRACE);

    L.daemon_path = find_daemon();
    if (L.daemon_path == NULL) {
        return 1;
    }
    find_agent();
    setup_job();
    setup_network();
    atexit(cleanup_network);
    setup_daemon_env();
    if (L.mode == LAUNCH_LOCAL) {
        /* remote daemons do not run here */
        check_host();
    }
    status = rdp_loop_create(&L.loop);
    if (status != PMIX_SUCCESS) {
        say("cannot create the event loop: %s", rdp_status_name(status));
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
        || rdp_timer_create(L.loop, ds_timer_cb, NULL, &L.ds_timer)
               != PMIX_SUCCESS
        || (L.ds = rdp_ds_create()) == NULL

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
    setup_peers();
    /* the start-up timeout counts from here: starting many daemons takes
     * long when they share few cores (each runs as soon as it is forked) */
    rdp_timer_start(
        L.startup_timer,
        rdp_cfg_seconds(RDP_CFG_STARTUP_TIMEOUT));
    if (L.mode == LAUNCH_SSH) {
        start_ssh_daemons();
    } else if (L.mode == LAUNCH_SLURM) {
        start_slurm_daemons();
    } else {
        for (uint32_t i = 0; i < L.nnodes; i++) {
            start_daemon(&L.nodes[i]);
        }
    }

    rdp_loop_run(L.loop);

    rdp_run_iof_flush_all(L.iof);
    cleanup();
    if (!L.have_status) {
        return 0;
    }
    return L.exit_status > 255 ? 255 : L.exit_status;
}
