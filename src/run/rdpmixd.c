/* rdpmixd.c - per-node daemon: startup, control channel, shutdown */
#include "config.h"
#include "run/rdpmixd_int.h"
#include "run/xconn.h"
#include "run/ctladdr.h"
#include "run/util.h"
#include "ucx/ucx.h"
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
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

daemon_t rdp_run_dmn;

static daemon_t *const dm = &rdp_run_dmn;

/* The step of the shutdown in progress, for the watchdog (written by the
 * main thread, read by the watchdog thread). */
static const char *volatile shutdown_step;
static volatile int shutdown_finished; /* cleanup() is through */
static char watched_node[64];          /* dm->node_name, copied */

static void watch_shutdown(void);


static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vsay(const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "rdpmixd (node %s): %s\n",
            dm->node_name ? dm->node_name : "?", msg);
}

void rdp_run_dmn_say(const char *fmt, ...)
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
/* control channel                                                      */

void rdp_run_dmn_send(uint16_t cmd, rdp_buf_t *buf)
{
    pmix_status_t status;

    if (dm->chan == NULL) {
        if (buf != NULL) {
            rdp_buf_cleanup(buf);
        }
        return;
    }
    status = rdp_run_chan_send(dm->chan, cmd, buf);
    if (status != PMIX_SUCCESS && status != PMIX_ERR_UNREACH) {
        rdp_log_warn(RUN, "cannot queue control message %u: %s", cmd,
                     rdp_status_name(status));
    }
}


/* ------------------------------------------------------------------ */
/* launcher messages                                                    */

static void chan_msg_cb(rdp_run_chan_t *chan, uint16_t cmd, const void *payload,
                        size_t len, void *arg)
{
    rdp_ctl_kill_t kill_m;

    switch (cmd) {
    case RDP_CTL_LAUNCH:
        rdp_run_dmn_launch(payload, len);
        break;
    case RDP_CTL_START:
        rdp_run_dmn_start();
        break;
    case RDP_CTL_KILL:
        if (rdp_ctl_kill_unpack(payload, len, &kill_m) != PMIX_SUCCESS) {
            rdp_log_warn(RUN, "malformed kill order");
            break;
        }
        if (kill_m.mode == RDP_CTL_KILL_TERMINATE) {
            rdp_run_dmn_terminate();
        } else if (kill_m.mode == RDP_CTL_KILL_NOW) {
            dm->terminating = dm->terminating ? dm->terminating : 1;
            rdp_run_dmn_signal_ranks(SIGKILL, 1);
        } else {
            rdp_run_dmn_signal_ranks(kill_m.signo, 0);
        }
        break;
    case RDP_CTL_PUBSUB_REPLY:
        rdp_run_dmn_pubsub_reply(payload, len);
        break;
    case RDP_CTL_NOTIFY:
        rdp_run_dmn_on_notify(payload, len);
        break;
    case RDP_CTL_XCONN_DONE:
        rdp_run_dmn_xconn_done(payload, len);
        break;
    case RDP_CTL_SHUTDOWN:
        watch_shutdown();
        if (!dm->stopping) {
            dm->stopping = 1;
            rdp_loop_stop(dm->loop);
        }
        break;
    default:
        if (rdp_run_dmn_hostops_msg(cmd, payload, len)) {
            break;
        }
        rdp_log_warn(RUN, "unexpected control message %u", cmd);
        break;
    }
}

/* End the job here without the launcher's orders; @a why is said unless
 * NULL (the launcher was told). */
static void lose_launcher(const char *why)
{
    if (dm->lost_launcher || dm->stopping) {
        return;
    }
    dm->lost_launcher = 1;
    dm->exit_code     = 1;
    rdp_run_dmn_pubsub_fail_all();
    rdp_run_dmn_hostops_fail(PMIX_ERR_UNREACH);
    rdp_run_dmn_xconn_fail_all(PMIX_ERR_UNREACH);
    if (dm->nended < dm->nlocal) {
        if (why != NULL) {
            rdp_run_dmn_say("%s; terminating the job", why);
        }
        rdp_run_dmn_terminate();
    }
    rdp_run_dmn_check_stop();
}

static void chan_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    if (dm->stopping) {
        return;
    }
    lose_launcher("lost the connection to rdpmix-run");
}

static void signal_cb(int signo, void *arg)
{
    char desc[64];

    rdp_run_signal_desc(signo, desc, sizeof(desc));
    if (dm->lost_launcher) {
        /* a second signal: do not wait for the grace period */
        rdp_run_dmn_signal_ranks(SIGKILL, 1);
        return;
    }
    rdp_log_info(RUN, "received signal %s", desc);
    if (dm->chan != NULL && rdp_run_chan_is_open(dm->chan)) {
        /* the launcher names this node and ends the whole job */
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        if (rdp_ctl_got_signal_pack(&buf, signo) == PMIX_SUCCESS) {
            rdp_run_dmn_send(RDP_CTL_GOT_SIGNAL, &buf);
        }
        rdp_buf_cleanup(&buf);
        lose_launcher(NULL);
    } else {
        lose_launcher("received a termination signal");
    }
    if (dm->nended == dm->nlocal && !dm->stopping) {
        dm->stopping = 1;
        rdp_loop_stop(dm->loop);
    }
}

/* ------------------------------------------------------------------ */
/* startup and shutdown                                                 */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: rdpmixd --ctl HOST:PORT --secret-fd FD [options]\n"
            "\n"
            "The per-node daemon of rdpmix-run: a PMIx server that starts\n"
            "the ranks of a job, forwards their output and reports their\n"
            "exit statuses. It is started by rdpmix-run, not by hand.\n"
            "\n"
            "  --ctl HOST:PORT[,...]  rdpmix-run's control addresses, tried\n"
            "                         in turn\n"
            "  --secret-fd FD         read the job secret (hex) from FD\n"
            "  --node-id N            index of this node in the job (0)\n"
            "  --node-id-env NAME     read the node id from variable NAME\n"
            "                         (srun: SLURM_NODEID)\n"
            "  --node-name NAME       node name given to the ranks\n"
            "                         (default: the host name)\n"
            "  --daemon-nspace NS     the daemons' own PMIx namespace\n"
            "  --engine               run the inter-node collective engine\n"
            "                         (multi-node jobs)\n"
            "  --system [options]     run the node's system-level PMIx\n"
            "                         server for tools instead (first\n"
            "                         argument; rdpmixd --system --help)\n"
            "  --daemon-env A,B,...   variables rdpmix-run set for the\n"
            "                         daemon only: the ranks do not get them\n"
            "                         (NAME* stands for every name that\n"
            "                         starts with NAME)\n"
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

/* "A,B,C": names of variables meant for the daemon alone */
static void parse_daemon_env(const char *list)
{
    char *copy = rdp_strdup(list);
    char *save = NULL;
    size_t n   = 0;

    if (copy == NULL) {
        fatal("out of memory");
    }
    rdp_ctl_strv_free(dm->daemon_only_env);
    dm->daemon_only_env = rdp_calloc(strlen(list) + 2, sizeof(char *));
    if (dm->daemon_only_env == NULL) {
        fatal("out of memory");
    }
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok       = strtok_r(NULL, ",", &save)) {
        dm->daemon_only_env[n] = rdp_strdup(tok);
        if (dm->daemon_only_env[n] == NULL) {
            fatal("out of memory");
        }
        n++;
    }
    rdp_free(copy);
}

static void parse_args(int argc, char **argv)
{
    uint32_t v;

    dm->secret_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("rdpmixd (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        } else if (opt_is(a, "--ctl")) {
            dm->ctl_addr = rdp_strdup(opt_value(argc, argv, &i));
        } else if (opt_is(a, "--secret-fd")) {
            if (rdp_run_parse_u32(opt_value(argc, argv, &i), 0, INT_MAX, &v)
                != 0) {
                fprintf(stderr, "rdpmixd: bad --secret-fd\n");
                exit(2);
            }
            dm->secret_fd = (int)v;
        } else if (opt_is(a, "--node-id")) {
            if (rdp_run_parse_u32(opt_value(argc, argv, &i), 0,
                                  RDP_CTL_MAX_JOB_SIZE, &v)
                != 0) {
                fprintf(stderr, "rdpmixd: bad --node-id\n");
                exit(2);
            }
            dm->node_id = v;
        } else if (opt_is(a, "--node-id-env")) {
            /* a launcher that starts every daemon with one command line
             * (srun) says where each finds its node id */
            const char *name = opt_value(argc, argv, &i);
            const char *val  = getenv(name);

            if (val == NULL
                || rdp_run_parse_u32(val, 0, RDP_CTL_MAX_JOB_SIZE, &v) != 0) {
                fprintf(stderr, "rdpmixd: --node-id-env %s: %s is %s\n", name,
                        name, val == NULL ? "not set" : "not a node id");
                exit(2);
            }
            dm->node_id = v;
        } else if (opt_is(a, "--node-name")) {
            dm->node_name = rdp_strdup(opt_value(argc, argv, &i));
        } else if (opt_is(a, "--daemon-nspace")) {
            dm->dvm_nspace = rdp_strdup(opt_value(argc, argv, &i));
        } else if (strcmp(a, "--engine") == 0) {
            dm->engine = 1;
        } else if (opt_is(a, "--daemon-env")) {
            parse_daemon_env(opt_value(argc, argv, &i));
        } else {
            fprintf(stderr, "rdpmixd: unknown argument '%s'\n", a);
            usage(stderr);
            exit(2);
        }
    }
    if (dm->ctl_addr == NULL || dm->secret_fd < 0) {
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
        ssize_t n = read(dm->secret_fd, hex + got, sizeof(hex) - 1 - got);

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
    if (rdp_run_hex_decode(hex, dm->secret, sizeof(dm->secret)) != 0) {
        fatal("no valid job secret on descriptor %d", dm->secret_fd);
    }
    explicit_bzero(hex, sizeof(hex));
    /* the descriptor is done with: stdin becomes /dev/null */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && dm->secret_fd <= 2) {
        dup2(fd, dm->secret_fd);
        close(fd);
    } else {
        close(dm->secret_fd);
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

/* Short names compare equal to their fully qualified forms. */
static int same_host(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");

    return strcmp(a, b) == 0
           || (la == lb && strncmp(a, b, la) == 0
               && (a[la] == '\0' || b[lb] == '\0'));
}

/*
 * A simulated node (its name is not this machine's) gets a hostname of its
 * own: the daemon moves into a UTS namespace of its own named after the
 * node, which its ranks inherit, so that programs keyed on gethostname()
 * (Open MPI's shared-memory segments, MPI_Get_processor_name) see the
 * nodes they are told about.  Needs CAP_SYS_ADMIN; without it (or with
 * RDPMIX_NODE_UTS=0) the ranks see the machine's name, as before.  Before
 * any thread exists: a namespace change applies to the calling thread.
 */
static void take_node_hostname(void)
{
    char host[256];

    if (!rdp_cfg_bool(RDP_CFG_NODE_UTS) || gethostname(host, sizeof(host)) != 0) {
        return;
    }
    host[sizeof(host) - 1] = '\0';
    if (same_host(host, dm->node_name)) {
        return;
    }
    if (unshare(CLONE_NEWUTS) != 0) {
        rdp_log_info(RUN,
                     "no UTS namespace of its own (%s): the ranks of node %s "
                     "see the host name %s",
                     strerror(errno), dm->node_name, host);
        return;
    }
    if (sethostname(dm->node_name, strlen(dm->node_name)) != 0) {
        rdp_run_dmn_say("cannot name the node's UTS namespace %s: %s",
                        dm->node_name, strerror(errno));
        return;
    }
    rdp_log_debug(RUN, "node %s has a UTS namespace of its own",
                  dm->node_name);
}

/* The ranks must load this build's libpmix.so.2 (docs/run.md). */
static char *pick_libdir(void)
{
    const char *env = rdp_cfg_env(RDP_CFG_LIBDIR);
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

/* Each address rdpmix-run offers gets this long to accept (the next one
 * is tried after it); rdpmix-run's start-up timeout bounds the whole. */
#define CTL_CONNECT_TIMEOUT 10.0

static int connect_ctl(void)
{
    char err[2048];
    int fd = rdp_run_ctl_connect(dm->ctl_addr, CTL_CONNECT_TIMEOUT, err,
                                 sizeof(err));

    if (fd < 0) {
        fatal("cannot connect to rdpmix-run (%s)", err);
    }
    return fd;
}

static void send_hello(void)
{
    rdp_ctl_hello_t m;
    rdp_buf_t buf;

    memcpy(m.secret, dm->secret, sizeof(m.secret));
    m.node_id         = dm->node_id;
    m.pid             = (uint32_t)getpid();
    m.node_name       = dm->node_name;
    m.tmpdir          = dm->tmpdir;
    m.engine_addr     = dm->engine_addr;
    m.engine_addr_len = dm->engine_addr_len;
    rdp_buf_init(&buf);
    if (rdp_ctl_hello_pack(&buf, &m) != PMIX_SUCCESS) {
        fatal("cannot pack the hello message");
    }
    explicit_bzero(m.secret, sizeof(m.secret));
    rdp_run_dmn_send(RDP_CTL_HELLO, &buf);
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
    dm->tmpdir = rdp_strdup(path);
}

static void start_server(void)
{
    pmix_info_t info[7];
    pmix_rank_t rank = dm->node_id;
    uint32_t index   = dm->node_id;
    bool engine      = true;
    size_t ninfo     = 5;
    pmix_byte_object_t addr;
    pmix_status_t status;

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, dm->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_NSPACE, dm->dvm_nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[3], PMIX_HOSTNAME, dm->node_name, PMIX_STRING);
    /* tools (rdpmix-ps, debuggers) may attach to the running job */
    PMIX_INFO_LOAD(&info[4], PMIX_SERVER_TOOL_SUPPORT, &engine, PMIX_BOOL);
    if (dm->engine) {
        /* server number = node id = the PMIX_NODEID of our ranks */
        PMIX_INFO_LOAD(&info[5], RDPMIX_ENGINE, &engine, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[6], RDPMIX_SERVER_INDEX, &index, PMIX_UINT32);
        ninfo = 7;
    }
    status = PMIx_server_init(&rdp_run_dmn_module, info, ninfo);
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (status != PMIX_SUCCESS) {
        rdp_run_dmn_say("PMIx_server_init failed: %s",
                        rdp_status_name(status));
        rdp_run_rmtree(dm->tmpdir);
        exit(1);
    }
    dm->server_up = 1;
    rdp_run_dmn_hostops_register();
    if (!dm->engine) {
        return;
    }
    PMIX_BYTE_OBJECT_CONSTRUCT(&addr);
    status = rdpmix_engine_address(&addr);
    if (status == PMIX_SUCCESS
        && (addr.bytes == NULL || addr.size == 0
            || addr.size > RDP_CTL_MAX_ADDR)) {
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status != PMIX_SUCCESS) {
        rdp_run_dmn_say("no engine address: %s", rdp_status_name(status));
        free(addr.bytes);
        PMIx_server_finalize();
        dm->server_up = 0;
        rdp_run_rmtree(dm->tmpdir);
        exit(1);
    }
    /* the library malloc'ed it; we keep our own copy */
    dm->engine_addr = rdp_malloc(addr.size);
    if (dm->engine_addr == NULL) {
        fatal("out of memory");
    }
    memcpy(dm->engine_addr, addr.bytes, addr.size);
    dm->engine_addr_len = addr.size;
    free(addr.bytes);
}

/*
 * A daemon that does not end is killed by rdpmix-run without a word; this
 * thread says which step of the shutdown it is stuck in first, so such a
 * hang can be diagnosed from the job's output.
 */
static void *shutdown_watchdog(void *arg)
{
    double warn_after = *(const double *)arg;
    double deadline   = rdp_time_now() + warn_after;
    char msg[256];
    int len;

    while (rdp_time_now() < deadline) {
        struct timespec ts = {0, 100 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    if (shutdown_finished) {
        return NULL; /* only exit() remains, which is not ours to time */
    }
    /* snprintf and write only: the main thread may hold stdio's locks */
    len = snprintf(msg, sizeof(msg),
                   "rdpmixd (node %s): still shutting down after %.0f s, in "
                   "%s\n",
                   watched_node, warn_after,
                   shutdown_step ? shutdown_step : "the event loop");
    if (len > 0) {
        ssize_t ignored = write(STDERR_FILENO, msg, (size_t)len);

        (void)ignored;
    }
    return NULL;
}

/* Start the watchdog once, when the daemon is told (or decides) to end. */
static void watch_shutdown(void)
{
    static double warn_after;
    static int started;
    pthread_t thread;
    pthread_attr_t attr;

    if (started) {
        return;
    }
    started = 1;
    snprintf(watched_node, sizeof(watched_node), "%s",
             dm->node_name ? dm->node_name : "?");
    warn_after = rdp_cfg_seconds(RDP_CFG_SHUTDOWN_WARN);
    if (warn_after <= 0 || pthread_attr_init(&attr) != 0) {
        return;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, shutdown_watchdog, &warn_after) != 0) {
        rdp_log_debug(RUN, "no shutdown watchdog: %s", strerror(errno));
    }
    pthread_attr_destroy(&attr);
}

static void cleanup(void)
{
    watch_shutdown();
    shutdown_step = "reaping the ranks";
    rdp_run_dmn_reap_remaining();
    shutdown_step = "failing pending lookups";
    rdp_run_dmn_pubsub_fail_all();
    shutdown_step = "answering pending host operations";
    rdp_run_dmn_hostops_cleanup(); /* answers the server before it ends */
    rdp_run_dmn_xconn_cleanup();
    if (dm->server_up) {
        shutdown_step = "deregistering the job";
        rdp_run_dmn_deregister_all();
        shutdown_step = "PMIx_server_finalize";
        PMIx_server_finalize();
        dm->server_up = 0;
    }
    shutdown_step = "removing the session directory";
    if (dm->tmpdir != NULL && rdp_run_rmtree(dm->tmpdir) != 0) {
        rdp_run_dmn_say("could not remove all of %s", dm->tmpdir);
    }
    shutdown_step = "flushing the control channel";
    if (dm->chan != NULL) {
        if (rdp_run_chan_is_open(dm->chan)) {
            rdp_run_chan_flush_blocking(dm->chan, 5.0);
        }
        rdp_run_chan_destroy(dm->chan);
        dm->chan = NULL;
    }
    shutdown_finished = 1;
    rdp_sigwatch_destroy(dm->sig_chld);
    rdp_sigwatch_destroy(dm->sig_term);
    rdp_sigwatch_destroy(dm->sig_int);
    rdp_sigwatch_destroy(dm->sig_hup);
    rdp_timer_destroy(dm->grace_timer);
    rdp_loop_destroy(dm->loop);
    for (uint32_t i = 0; dm->procdirs != NULL && i < dm->nlocal; i++) {
        rdp_free(dm->procdirs[i]);
    }
    rdp_free(dm->procdirs);
    rdp_free(dm->ranks);
    rdp_ctl_launch_cleanup(&dm->launch);
    rdp_free(dm->nsdir);
    rdp_free(dm->tmpdir);
    rdp_free(dm->libdir);
    rdp_free(dm->ctl_addr);
    rdp_free(dm->node_name);
    rdp_free(dm->dvm_nspace);
    rdp_free(dm->engine_addr);
    rdp_ctl_strv_free(dm->daemon_only_env);
    if (dm->devnull >= 0) {
        close(dm->devnull);
    }
}

int main(int argc, char **argv)
{
    pmix_status_t status;
    int fd;

    rdp_log_init();
    rdp_log_set_ident("rdpmixd");
    if (argc > 1 && strcmp(argv[1], "--system") == 0) {
        return rdp_run_dmn_system_main(argc, argv); /* rdpmixd_system.c */
    }
    /* a job's daemon: an exchange's block received into the pages of
     * the one it sent */
    rdp_run_malloc_keep_freed();
    /* the daemon links the UCX transport: no module to load */
    rdp_ucx_api_register(&rdp_ucx_builtin_api);
    dm->devnull = -1;
    parse_args(argc, argv);
    if (dm->node_name == NULL) {
        dm->node_name = default_node_name();
    }
    if (dm->node_name != NULL) {
        take_node_hostname();
    }
    if (dm->dvm_nspace == NULL) {
        char ns[64];

        snprintf(ns, sizeof(ns), "rdpmixd.%d", (int)getpid());
        dm->dvm_nspace = rdp_strdup(ns);
    }
    if (dm->node_name == NULL || dm->dvm_nspace == NULL
        || dm->ctl_addr == NULL) {
        fatal("out of memory");
    }
    read_secret();
    /* Reach rdpmix-run before anything else: until then the daemon has
     * made nothing (a remote one may wait long for a dead address, and
     * is then ended by rdpmix-run with nothing to clean up) */
    fd = connect_ctl();
    signal(SIGPIPE, SIG_IGN);
    dm->grace   = rdp_cfg_seconds(RDP_CFG_KILL_GRACE);
    dm->libdir  = pick_libdir();
    dm->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (dm->libdir == NULL || dm->devnull < 0) {
        fatal("cannot set up: %s", strerror(errno));
    }

    status = rdp_loop_create(&dm->loop);
    if (status != PMIX_SUCCESS) {
        fatal("cannot create the event loop: %s", rdp_status_name(status));
    }
    /* SIGCHLD before any fork, so no exit goes unnoticed */
    if (rdp_sigwatch_create(dm->loop, SIGCHLD, rdp_run_dmn_sigchld_cb, NULL,
                            &dm->sig_chld)
            != PMIX_SUCCESS
        || rdp_sigwatch_create(dm->loop, SIGTERM, signal_cb, NULL,
                               &dm->sig_term)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(dm->loop, SIGINT, signal_cb, NULL, &dm->sig_int)
               != PMIX_SUCCESS
        || rdp_sigwatch_create(dm->loop, SIGHUP, signal_cb, NULL, &dm->sig_hup)
               != PMIX_SUCCESS
        || rdp_timer_create(dm->loop, rdp_run_dmn_grace_cb, NULL,
                            &dm->grace_timer)
               != PMIX_SUCCESS
        || rdp_run_dmn_hostops_init() != PMIX_SUCCESS) {
        fatal("cannot set up signal handling");
    }

    make_tmpdir();
    start_server();

    status = rdp_run_chan_create(dm->loop, fd, RDP_CTL_MAX_MSG, chan_msg_cb,
                                 chan_close_cb, NULL, &dm->chan);
    if (status != PMIX_SUCCESS) {
        rdp_run_dmn_say("cannot set up the control channel: %s",
                        rdp_status_name(status));
        dm->exit_code = 1;
        cleanup();
        return 1;
    }
    rdp_run_chan_set_drain_cb(dm->chan, IO_LOW_WATER, rdp_run_dmn_drain_cb);
    send_hello();

    rdp_loop_run(dm->loop);
    cleanup();
    return dm->exit_code;
}
