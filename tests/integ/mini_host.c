/* mini_host.c - a tiny one-node PMIx host for integration tests
 *
 * usage: mini_host N prog [args...]
 *
 * Starts a PMIx server (PMIx_server_init), registers one job of N ranks on
 * this node with the job, node and per-proc data a resource manager would
 * give, registers each client, forks N copies of prog with the environment
 * PMIx_server_setup_fork produced, waits for them and exits 0 only if all
 * of them exited 0.  Environment:
 *   MINI_HOST_FENCE_UPCALL=1  give the server a fence_nb upcall (host-
 *                             delegated collectives) instead of none
 *   MINI_HOST_TIMEOUT=S       kill the job after S seconds (default 60)
 */
#include <pmix.h>
#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_util.h"

static pid_t *children;
static int nchildren;
static volatile sig_atomic_t timed_out;
static int aborted;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "mini_host: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    for (int i = 0; i < nchildren; i++) {
        if (children[i] > 0) {
            kill(children[i], SIGKILL);
        }
    }
    exit(2);
}

/* ---- host upcalls ---- */

static pmix_status_t host_abort(const pmix_proc_t *proc, void *server_object,
                                int status, const char msg[],
                                pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    fprintf(stderr, "mini_host: %s:%u aborts the job with status %d: %s\n",
            proc->nspace, proc->rank, status, msg != NULL ? msg : "");
    aborted = 1;
    /* one job on one node: whatever procs says, it is all of them */
    for (int i = 0; i < nchildren; i++) {
        if (children[i] > 0) {
            kill(children[i], SIGTERM);
        }
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

static void release_blob(void *cbdata)
{
    free(cbdata);
}

/* One node: the local contribution is everything. */
static pmix_status_t host_fence(const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo,
                                char *data, size_t ndata,
                                pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    /* the blob is ours (as with OpenPMIx): hand it back and free it in
     * the release callback */
    cbfunc(PMIX_SUCCESS, data, ndata, cbdata, release_blob, data);
    return PMIX_SUCCESS;
}

static void on_alarm(int sig)
{
    timed_out = 1;
    for (int i = 0; i < nchildren; i++) {
        if (children[i] > 0) {
            kill(children[i], SIGKILL);
        }
    }
}

/* ---- job description ---- */

static void load(pmix_info_t *info, const char *key, const void *val,
                 pmix_data_type_t type)
{
    PMIX_INFO_LOAD(info, key, val, type);
}

static pmix_info_t *job_info(int n, const char *host, size_t *ninfo_p)
{
    size_t nj = 10, ni = 0;
    pmix_info_t *info;
    uint32_t u32n = (uint32_t)n, zero = 0, one = 1;
    pmix_rank_t ldr  = 0;
    char peers[4096] = "";

    for (int r = 0; r < n; r++) {
        char buf[16];

        snprintf(buf, sizeof(buf), r == 0 ? "%d" : ",%d", r);
        strncat(peers, buf, sizeof(peers) - strlen(peers) - 1);
    }
    PMIX_INFO_CREATE(info, nj + (size_t)n);
    load(&info[ni++], PMIX_JOB_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_MAX_PROCS, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_UNIV_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_NUM_NODES, &one, PMIX_UINT32);
    load(&info[ni++], PMIX_LOCAL_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_NODE_SIZE, &u32n, PMIX_UINT32);
    load(&info[ni++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    load(&info[ni++], PMIX_LOCALLDR, &ldr, PMIX_PROC_RANK);
    load(&info[ni++], PMIX_HOSTNAME, host, PMIX_STRING);
    load(&info[ni++], PMIX_NODEID, &zero, PMIX_UINT32);
    for (int r = 0; r < n; r++) {
        pmix_data_array_t da;
        pmix_info_t *pi;
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t lr      = (uint16_t)r;

        PMIX_DATA_ARRAY_CONSTRUCT(&da, 5, PMIX_INFO);
        pi = da.array;
        load(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        load(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        load(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        load(&pi[3], PMIX_HOSTNAME, host, PMIX_STRING);
        load(&pi[4], PMIX_NODEID, &zero, PMIX_UINT32);
        load(&info[ni++], PMIX_PROC_DATA, &da, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_DESTRUCT(&da);
    }
    *ninfo_p = ni;
    return info;
}

int main(int argc, char **argv)
{
    pmix_server_module_t module;
    pmix_info_t sinfo[1];
    pmix_info_t *jinfo;
    size_t njinfo;
    char tmpdir[] = "/tmp/rdp-minihost-XXXXXX";
    char host[256];
    pmix_nspace_t nspace;
    pmix_status_t rc;
    const char *env;
    int n, failures = 0, timeout = 60;
    done_t d;

    if (argc < 3 || (n = atoi(argv[1])) <= 0 || n > 512) {
        fprintf(stderr, "usage: mini_host N prog [args...]\n");
        return 2;
    }
    env = getenv("MINI_HOST_TIMEOUT");
    if (env != NULL && atoi(env) > 0) {
        timeout = atoi(env);
    }
    if (mkdtemp(tmpdir) == NULL) {
        die("mkdtemp: %s", strerror(errno));
    }
    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';

    memset(&module, 0, sizeof(module));
    module.abort = host_abort;
    env          = getenv("MINI_HOST_FENCE_UPCALL");
    if (env != NULL && atoi(env) != 0) {
        module.fence_nb = host_fence;
    }
    PMIX_INFO_CONSTRUCT(&sinfo[0]);
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    rc = PMIx_server_init(&module, sinfo, 1);
    if (rc != PMIX_SUCCESS) {
        die("PMIx_server_init: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_DESTRUCT(&sinfo[0]);

    snprintf(nspace, sizeof(nspace), "minihost.%d", (int)getpid());
    jinfo = job_info(n, host, &njinfo);
    done_init(&d);
    rc = PMIx_server_register_nspace(nspace, n, jinfo, njinfo, done_cb, &d);
    if (rc != PMIX_SUCCESS || (rc = done_wait(&d)) != PMIX_SUCCESS) {
        die("PMIx_server_register_nspace: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_FREE(jinfo, njinfo);

    children = calloc((size_t)n, sizeof(pid_t));
    if (children == NULL) {
        die("out of memory");
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)timeout);
    for (int r = 0; r < n; r++) {
        pmix_proc_t proc;
        char **cenv = NULL;
        pid_t pid;

        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)r);
        done_init(&d);
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL,
                                         done_cb, &d);
        if (rc != PMIX_SUCCESS || (rc = done_wait(&d)) != PMIX_SUCCESS) {
            die("PMIx_server_register_client %d: %s", r, PMIx_Error_string(rc));
        }
        rc = host_client_env(&proc, &cenv);
        if (rc != PMIX_SUCCESS) {
            die("PMIx_server_setup_fork %d: %s", r, PMIx_Error_string(rc));
        }
        pid = fork();
        if (pid < 0) {
            die("fork: %s", strerror(errno));
        }
        if (pid == 0) {
            execve(argv[2], &argv[2], cenv);
            fprintf(stderr, "mini_host: cannot run %s: %s\n", argv[2],
                    strerror(errno));
            _exit(127);
        }
        children[r] = pid;
        nchildren   = r + 1;
        pmix_argv_free(cenv);
    }

    failures += host_reap(children, n, 0, "mini_host");
    alarm(0);

    for (int r = 0; r < n; r++) {
        pmix_proc_t proc;

        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)r);
        done_init(&d);
        PMIx_server_deregister_client(&proc, done_cb, &d);
        done_wait(&d);
    }
    done_init(&d);
    PMIx_server_deregister_nspace(nspace, done_cb, &d);
    done_wait(&d);
    rc = PMIx_server_finalize();
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "mini_host: PMIx_server_finalize: %s\n",
                PMIx_Error_string(rc));
        failures++;
    }
    rmdir(tmpdir);
    free(children);
    if (timed_out) {
        fprintf(stderr, "mini_host: job timed out after %d s\n", timeout);
        return 3;
    }
    if (aborted) {
        return 4;
    }
    return failures == 0 ? 0 : 1;
}
