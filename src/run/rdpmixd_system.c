/* rdpmixd_system.c - `rdpmixd --system`: the node's system-level server */
#include "config.h"
#include "run/rdpmixd_int.h"
#include "run/util.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix_server.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A PMIx server with no job: it publishes pmix.sys.<host> in the system
 * tmpdir (and its session files in a tmpdir of its own) and answers the
 * tools that attach to it, until SIGTERM, SIGINT or SIGHUP.  It has no
 * host upcalls, so the server library answers queries (namespaces, ...)
 * and writes logs to this process's stdout/stderr/syslog itself.
 */

typedef struct sys_opts {
    const char *system_tmpdir;
    const char *nspace;
    const char *hostname;
} sys_opts_t;

static void sys_usage(FILE *f)
{
    fprintf(f,
            "Usage: rdpmixd --system [options]\n"
            "\n"
            "Run this node's system-level PMIx server: tools find it\n"
            "through <system tmpdir>/pmix.sys.<host> (PMIX_CONNECT_TO_SYSTEM,\n"
            "rdpmix-ps --system).  Ends on SIGTERM, SIGINT or SIGHUP.\n"
            "\n"
            "  --system-tmpdir DIR  where to publish pmix.sys.<host>\n"
            "                       (default: $PMIX_SYSTEM_TMPDIR, $TMPDIR,\n"
            "                       /tmp)\n"
            "  --nspace NS          the server's namespace\n"
            "                       (default: rdpmixd-system.<pid>)\n"
            "  --node-name NAME     the host name in the file name\n"
            "                       (default: the host name)\n"
            "  -h, --help           this text\n");
}

static const char *sys_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "rdpmixd: option %s needs a value\n", argv[*i]);
        exit(2);
    }
    return argv[++(*i)];
}

static void sys_parse(int argc, char **argv, sys_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            sys_usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--system-tmpdir") == 0) {
            o->system_tmpdir = sys_value(argc, argv, &i);
        } else if (strcmp(argv[i], "--nspace") == 0) {
            o->nspace = sys_value(argc, argv, &i);
        } else if (strcmp(argv[i], "--node-name") == 0) {
            o->hostname = sys_value(argc, argv, &i);
        } else {
            fprintf(stderr, "rdpmixd --system: unknown option %s\n", argv[i]);
            sys_usage(stderr);
            exit(2);
        }
    }
    if (o->system_tmpdir == NULL) {
        o->system_tmpdir = getenv("PMIX_SYSTEM_TMPDIR");
    }
    if (o->system_tmpdir == NULL || o->system_tmpdir[0] != '/') {
        o->system_tmpdir = getenv("TMPDIR");
    }
    if (o->system_tmpdir == NULL || o->system_tmpdir[0] != '/') {
        o->system_tmpdir = "/tmp";
    }
}

static pmix_status_t sys_start(const sys_opts_t *o, const char *tmpdir)
{
    pmix_info_t info[6];
    bool yes     = true;
    size_t ninfo = 0;
    char ns[PMIX_MAX_NSLEN + 1];
    pmix_status_t status;

    snprintf(ns, sizeof(ns), "%s",
             o->nspace != NULL ? o->nspace : "rdpmixd-system");
    if (o->nspace == NULL) {
        snprintf(ns, sizeof(ns), "rdpmixd-system.%d", (int)getpid());
    }
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_SYSTEM_TMPDIR, o->system_tmpdir,
                   PMIX_STRING);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_SERVER_NSPACE, ns, PMIX_STRING);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    if (o->hostname != NULL) {
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_HOSTNAME, o->hostname, PMIX_STRING);
    }
    status = PMIx_server_init(NULL, info, ninfo);
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return status;
}

int rdp_run_dmn_system_main(int argc, char **argv)
{
    sys_opts_t o;
    sigset_t set;
    char tmpdir[PATH_MAX];
    const char *base = getenv("TMPDIR");
    pmix_status_t status;
    int signo = 0;

    sys_parse(argc, argv, &o);
    /* blocked before the library's thread exists, so it inherits that */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (base == NULL || base[0] != '/') {
        base = "/tmp";
    }
    snprintf(tmpdir, sizeof(tmpdir), "%s/rdpmixd.XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr,
                "rdpmixd --system: cannot create a directory under "
                "%s: %s\n",
                base, strerror(errno));
        return 1;
    }
    /* tools of other users reach the socket below, to be refused by
     * their credentials (its directory is 0711 too: server/tool.c) */
    if (chmod(tmpdir, 0711) != 0) {
        rdp_log_warn(RUN, "cannot open %s to other users' tools: %s", tmpdir,
                     strerror(errno));
    }
    status = sys_start(&o, tmpdir);
    if (status != PMIX_SUCCESS) {
        fprintf(stderr, "rdpmixd --system: PMIx_server_init failed: %s\n",
                rdp_status_name(status));
        rdp_run_rmtree(tmpdir);
        return 1;
    }
    rdp_log_info(RUN, "system server up (pid %d), rendezvous in %s",
                 (int)getpid(), o.system_tmpdir);
    sigwait(&set, &signo);
    rdp_log_info(RUN, "system server ends (signal %d)", signo);
    PMIx_server_finalize();
    rdp_run_rmtree(tmpdir);
    return 0;
}
