/* engine_host.c - M PMIx servers in engine mode on this machine (rdpmix.h)
 *
 * usage: engine_host M PPN prog [args...]
 *
 * Forks M server processes ("nodes" enode0..enodeM-1).  Each calls
 * PMIx_server_init with RDPMIX_ENGINE, sends its engine address to this
 * parent over a pipe; the parent sends every server the address table and
 * a random session key; each server calls rdpmix_engine_connect, registers
 * the job of M * PPN ranks (rank r on node r / PPN, PMIX_NODEID included
 * for every rank), forks its PPN clients and waits for them, then tells
 * the parent and stays until every server's clients are done (as a
 * resource manager keeps its daemons until the job ends: a server leaving
 * early would fail the collectives the others still run with it).  Exits
 * 0 only if every server and client exited 0.  The servers' directories
 * are made in one directory of its own under $TMPDIR (or /tmp), which it
 * removes at the end with whatever a killed server left there.
 * Environment:
 *   ENGINE_HOST_TIMEOUT=S     kill everything after S seconds (default 60)
 *   ENGINE_HOST_KILL=s        SIGKILL server s and its clients after
 *                             ENGINE_HOST_KILL_DELAY seconds (default 2);
 *                             its exit status is then not counted
 *   ENGINE_HOST_LATE=s        server s waits ENGINE_HOST_LATE_SECS (default
 *                             1) between connecting its engine and
 *                             registering the job, as a slow node does:
 *                             the other servers' clients start meanwhile
 */
#include "config.h"

#include <pmix.h>
#include <pmix_server.h>
#include <rdpmix.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_util.h"

static int nsrv, ppn;
/* ENGINE_HOST_LATE: the server that registers the job late, and by how much */
static int late_server    = -1;
static unsigned late_secs = 1;
/* servers -> parent: a server's index once its clients are done;
 * parent -> servers: closed (EOF) once every server got there */
static int clients_done[2], release[2];
static const char *who = "engine_host";
/* the directory of every server's directory (made by the parent) */
static char topdir[4096];
static pid_t parent_pid;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", who);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void write_all(int fd, const void *buf, size_t len)
{
    if (host_write_all(fd, buf, len) != 0) {
        die("write: %s", strerror(errno));
    }
}

static void read_all(int fd, void *buf, size_t len)
{
    if (host_read_all(fd, buf, len) != 0) {
        die("read: %s", errno == 0 ? "end of file" : strerror(errno));
    }
}

/* ---- one server ---- */

static void load(pmix_info_t *info, const char *key, const void *val,
                 pmix_data_type_t type)
{
    PMIX_INFO_LOAD(info, key, val, type);
}

static pmix_info_t *job_info(int me, size_t *ninfo_p)
{
    int n         = nsrv * ppn;
    size_t ni     = 0;
    uint32_t u32n = (uint32_t)n, nn = (uint32_t)nsrv, lsz = (uint32_t)ppn;
    uint32_t myid    = (uint32_t)me;
    pmix_rank_t ldr  = (pmix_rank_t)(me * ppn);
    char peers[4096] = "", host[64];
    pmix_info_t *info;

    for (int r = me * ppn; r < (me + 1) * ppn; r++) {
        char buf[16];

        snprintf(buf, sizeof(buf), r == me * ppn ? "%d" : ",%d", r);
        strncat(peers, buf, sizeof(peers) - strlen(peers) - 1);
    }
    snprintf(host, sizeof(host), "enode%d", me);
    PMIX_INFO_CREATE(info, 10 + (size_t)n);
    load(&info[ni++], PMIX_JOB_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_MAX_PROCS, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_UNIV_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_NUM_NODES, &nn, PMIX_UINT32);
    load(&info[ni++], PMIX_LOCAL_SIZE, &lsz, PMIX_UINT32);
    load(&info[ni++], PMIX_NODE_SIZE, &lsz, PMIX_UINT32);
    load(&info[ni++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    load(&info[ni++], PMIX_LOCALLDR, &ldr, PMIX_PROC_RANK);
    load(&info[ni++], PMIX_HOSTNAME, host, PMIX_STRING);
    load(&info[ni++], PMIX_NODEID, &myid, PMIX_UINT32);
    for (int r = 0; r < n; r++) {
        pmix_data_array_t da;
        pmix_info_t *pi;
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t lr      = (uint16_t)(r % ppn);
        uint32_t nid     = (uint32_t)(r / ppn);
        char h[64];

        snprintf(h, sizeof(h), "enode%d", r / ppn);
        PMIX_DATA_ARRAY_CONSTRUCT(&da, 5, PMIX_INFO);
        pi = da.array;
        load(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        load(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        load(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        load(&pi[3], PMIX_HOSTNAME, h, PMIX_STRING);
        load(&pi[4], PMIX_NODEID, &nid, PMIX_UINT32);
        load(&info[ni++], PMIX_PROC_DATA, &da, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_DESTRUCT(&da);
    }
    *ninfo_p = ni;
    return info;
}

/* My clients are done: say so, and wait until every server's are (EOF on
 * the release pipe). */
static void wait_for_the_job(int me)
{
    uint8_t index = (uint8_t)me;
    char c;

    write_all(clients_done[1], &index, 1);
    while (read(release[0], &c, 1) != 0 && errno == EINTR) {
    }
}

static int run_server(int me, int up, int down, const char *nspace, char **prog)
{
    pmix_server_module_t module;
    pmix_info_t sinfo[3];
    pmix_byte_object_t addr, key, *table;
    pmix_info_t *jinfo;
    size_t njinfo;
    char tmpdir[sizeof(topdir) + 16], host[64], name[32];
    bool yes = true;
    pid_t *kids;
    uint32_t len, n;
    int failures = 0;
    pmix_status_t rc;
    done_t d;

    snprintf(name, sizeof(name), "engine_host[%d]", me);
    who = name;
    snprintf(tmpdir, sizeof(tmpdir), "%s/enode%d", topdir, me);
    if (mkdir(tmpdir, 0700) != 0) {
        die("mkdir %s: %s", tmpdir, strerror(errno));
    }
    snprintf(host, sizeof(host), "enode%d", me);
    memset(&module, 0, sizeof(module));
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[2], RDPMIX_ENGINE, &yes, PMIX_BOOL);
    rc = PMIx_server_init(&module, sinfo, 3);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_server_init: %s", PMIx_Error_string(rc));
    }

    /* bootstrap: address out, table and key in */
    rc = rdpmix_engine_address(&addr);
    if (rc != PMIX_SUCCESS) {
        die("rdpmix_engine_address: %s", PMIx_Error_string(rc));
    }
    len = (uint32_t)addr.size;
    write_all(up, &len, sizeof(len));
    write_all(up, addr.bytes, addr.size);
    free(addr.bytes);
    read_all(down, &n, sizeof(n));
    if (n != (uint32_t)nsrv) {
        die("table of %u servers", n);
    }
    table = calloc(n, sizeof(*table));
    for (uint32_t i = 0; i < n; i++) {
        read_all(down, &len, sizeof(len));
        table[i].size  = len;
        table[i].bytes = malloc(len);
        read_all(down, table[i].bytes, len);
    }
    key.size  = RDPMIX_SESSION_KEY_LEN;
    key.bytes = malloc(key.size);
    read_all(down, key.bytes, key.size);
    rc = rdpmix_engine_connect((uint32_t)me, n, table, &key);
    if (rc != PMIX_SUCCESS) {
        die("rdpmix_engine_connect: %s", PMIx_Error_string(rc));
    }
    for (uint32_t i = 0; i < n; i++) {
        free(table[i].bytes);
    }
    free(table);
    explicit_bzero(key.bytes, key.size);
    free(key.bytes);

    if (me == late_server) {
        sleep(late_secs);
    }
    jinfo = job_info(me, &njinfo);
    done_init(&d);
    rc = PMIx_server_register_nspace(nspace, ppn, jinfo, njinfo, done_cb, &d);
    if (rc != PMIX_SUCCESS || (rc = done_wait(&d)) != PMIX_SUCCESS) {
        die("PMIx_server_register_nspace: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_FREE(jinfo, njinfo);

    kids = calloc((size_t)ppn, sizeof(*kids));
    for (int i = 0; i < ppn; i++) {
        pmix_proc_t proc;
        char **cenv = NULL;
        pid_t pid;

        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)(me * ppn + i));
        done_init(&d);
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL,
                                         done_cb, &d);
        if (rc != PMIX_SUCCESS || (rc = done_wait(&d)) != PMIX_SUCCESS) {
            die("PMIx_server_register_client: %s", PMIx_Error_string(rc));
        }
        rc = host_client_env(&proc, &cenv);
        if (rc != PMIX_SUCCESS) {
            die("PMIx_server_setup_fork: %s", PMIx_Error_string(rc));
        }
        pid = fork();
        if (pid < 0) {
            die("fork: %s", strerror(errno));
        }
        if (pid == 0) {
            execve(prog[0], prog, cenv);
            fprintf(stderr, "%s: cannot run %s: %s\n", who, prog[0],
                    strerror(errno));
            _exit(127);
        }
        kids[i] = pid;
        pmix_argv_free(cenv);
    }
    failures += host_reap(kids, ppn, me * ppn, who);
    wait_for_the_job(me);
    for (int i = 0; i < ppn; i++) {
        pmix_proc_t proc;

        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)(me * ppn + i));
        done_init(&d);
        PMIx_server_deregister_client(&proc, done_cb, &d);
        done_wait(&d);
    }
    done_init(&d);
    PMIx_server_deregister_nspace(nspace, done_cb, &d);
    done_wait(&d);
    rc = PMIx_server_finalize();
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "%s: PMIx_server_finalize: %s\n", who,
                PMIx_Error_string(rc));
        failures++;
    }
    rmdir(tmpdir);
    free(kids);
    return failures == 0 ? 0 : 1;
}

/* ---- the parent ---- */

static pid_t *servers;

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0) {
        fprintf(stderr, "engine_host: cannot remove %s: %s\n", path,
                strerror(errno));
    }
    return 0;
}

/* At the parent's exit (not a server's): the servers' directories go,
 * with the sockets and job directories a killed server left in them. */
static void remove_topdir(void)
{
    if (getpid() == parent_pid && topdir[0] != '\0') {
        nftw(topdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

static void kill_all(void)
{
    for (int s = 0; s < nsrv; s++) {
        if (servers[s] > 0) {
            kill(-servers[s], SIGKILL);
        }
    }
    /* gone before their directories are removed */
    for (int s = 0; s < nsrv; s++) {
        if (servers[s] > 0) {
            waitpid(servers[s], NULL, 0);
            servers[s] = 0;
        }
    }
}

/* Note the servers whose clients are done (@a done[s]: done or gone);
 * once all are, let them finish. */
static void release_when_all_done(char *done)
{
    uint8_t index;

    if (release[1] < 0) {
        return;
    }
    while (read(clients_done[0], &index, 1) == 1) {
        if (index < nsrv) {
            done[index] = 1;
        }
    }
    for (int s = 0; s < nsrv; s++) {
        if (!done[s]) {
            return;
        }
    }
    close(release[1]);
    release[1] = -1;
}

int main(int argc, char **argv)
{
    int(*up)[2], (*down)[2];
    char *done;
    pmix_nspace_t nspace;
    uint8_t key[RDPMIX_SESSION_KEY_LEN];
    int timeout = 60, victim = -1, delay = 2, failures = 0;
    time_t start;
    const char *env;

    if (argc < 4 || (nsrv = atoi(argv[1])) <= 0 || nsrv > 64
        || (ppn = atoi(argv[2])) <= 0 || ppn > 64) {
        fprintf(stderr, "usage: engine_host M PPN prog [args...]\n");
        return 2;
    }
    if ((env = getenv("ENGINE_HOST_TIMEOUT")) != NULL && atoi(env) > 0) {
        timeout = atoi(env);
    }
    if ((env = getenv("ENGINE_HOST_KILL")) != NULL && *env != '\0') {
        victim = atoi(env);
    }
    if ((env = getenv("ENGINE_HOST_KILL_DELAY")) != NULL && atoi(env) > 0) {
        delay = atoi(env);
    }
    if ((env = getenv("ENGINE_HOST_LATE")) != NULL && *env != '\0') {
        late_server = atoi(env);
    }
    if ((env = getenv("ENGINE_HOST_LATE_SECS")) != NULL && atoi(env) > 0) {
        late_secs = (unsigned)atoi(env);
    }
    /* like rdpmixd: a client that dies while its server writes to it must
     * not take the server down (rdp_ipc writes with writev) */
    signal(SIGPIPE, SIG_IGN);
    parent_pid = getpid();
    env        = getenv("TMPDIR");
    snprintf(topdir, sizeof(topdir), "%s/rdp-enghost-XXXXXX",
             env != NULL && env[0] != '\0' ? env : "/tmp");
    if (mkdtemp(topdir) == NULL) {
        topdir[0] = '\0';
        die("mkdtemp: %s", strerror(errno));
    }
    atexit(remove_topdir);
    snprintf(nspace, sizeof(nspace), "enghost.%d", (int)getpid());
    servers = calloc((size_t)nsrv, sizeof(*servers));
    up      = calloc((size_t)nsrv, sizeof(*up));
    down    = calloc((size_t)nsrv, sizeof(*down));
    done    = calloc((size_t)nsrv, sizeof(*done));
    if (pipe(clients_done) != 0 || pipe(release) != 0) {
        die("pipe: %s", strerror(errno));
    }
    for (int i = 0; i < 2; i++) { /* not for the clients */
        fcntl(clients_done[i], F_SETFD, FD_CLOEXEC);
        fcntl(release[i], F_SETFD, FD_CLOEXEC);
    }
    for (int s = 0; s < nsrv; s++) {
        if (pipe(up[s]) != 0 || pipe(down[s]) != 0) {
            die("pipe: %s", strerror(errno));
        }
        servers[s] = fork();
        if (servers[s] < 0) {
            die("fork: %s", strerror(errno));
        }
        if (servers[s] == 0) {
            setpgid(0, 0); /* the server and its clients, killed together */
            close(up[s][0]);
            close(down[s][1]);
            close(clients_done[0]);
            close(release[1]);
            _exit(run_server(s, up[s][1], down[s][0], nspace, &argv[3]));
        }
        setpgid(servers[s], servers[s]);
        close(up[s][1]);
        close(down[s][0]);
    }
    close(clients_done[1]);
    close(release[0]);
    fcntl(clients_done[0], F_SETFL, O_NONBLOCK);
    if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
        kill_all();
        die("getrandom: %s", strerror(errno));
    }
    {
        pmix_byte_object_t *addrs = calloc((size_t)nsrv, sizeof(*addrs));
        uint32_t n                = (uint32_t)nsrv;

        for (int s = 0; s < nsrv; s++) {
            uint32_t len;

            read_all(up[s][0], &len, sizeof(len));
            addrs[s].size  = len;
            addrs[s].bytes = malloc(len);
            read_all(up[s][0], addrs[s].bytes, len);
        }
        for (int s = 0; s < nsrv; s++) {
            write_all(down[s][1], &n, sizeof(n));
            for (int i = 0; i < nsrv; i++) {
                uint32_t len = (uint32_t)addrs[i].size;

                write_all(down[s][1], &len, sizeof(len));
                write_all(down[s][1], addrs[i].bytes, len);
            }
            write_all(down[s][1], key, sizeof(key));
            close(down[s][1]);
            close(up[s][0]);
        }
        for (int s = 0; s < nsrv; s++) {
            free(addrs[s].bytes);
        }
        free(addrs);
    }
    explicit_bzero(key, sizeof(key));

    start = time(NULL);
    for (int left = nsrv; left > 0;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);

        if (pid == 0) {
            time_t now = time(NULL);

            release_when_all_done(done);
            if (victim >= 0 && victim < nsrv && servers[victim] > 0
                && now - start >= delay) {
                fprintf(stderr, "engine_host: killing server %d\n", victim);
                kill(-servers[victim], SIGKILL);
                victim = -victim - 2; /* done; remember it was killed */
            }
            if (now - start > timeout) {
                fprintf(stderr, "engine_host: timed out after %d s\n", timeout);
                kill_all();
                return 3;
            }
            usleep(20000);
            continue;
        }
        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        for (int s = 0; s < nsrv; s++) {
            if (servers[s] != pid) {
                continue;
            }
            servers[s] = 0;
            done[s]    = 1; /* gone: nobody waits for it */
            left--;
            if (-s - 2 == victim) {
                /* its clients die with it */
                kill(-pid, SIGKILL);
                continue;
            }
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "engine_host: server %d %s %d\n", s,
                        WIFEXITED(status) ? "exited with" : "killed by",
                        WIFEXITED(status) ? WEXITSTATUS(status)
                                          : WTERMSIG(status));
                failures++;
            }
        }
    }
    free(servers);
    free(up);
    free(down);
    free(done);
    return failures == 0 ? 0 : 1;
}
