/* spawn.c - fork/exec of one rank with piped output, for rdpmixd */
#include "config.h"
#include "run/spawn.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static void close_pair(int p[2])
{
    if (p[0] >= 0) {
        close(p[0]);
    }
    if (p[1] >= 0) {
        close(p[1]);
    }
}

/* Child side (a vfork child, see rdp_run_spawn_start): system calls
 * only, no allocation, no return. */
static void child_fail(int fd, int stage, int err)
{
    int msg[2] = {stage, err};
    ssize_t rc = write(fd, msg, sizeof(msg));

    (void)rc;
    _exit(err == ENOENT ? 127 : 126);
}

static void mark_fds_cloexec(void)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) {
        return;
    }
#endif
    {
        struct rlimit rl;
        int max = 65536;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
            && rl.rlim_cur < (rlim_t)max) {
            max = (int)rl.rlim_cur;
        }
        for (int fd = 3; fd < max; fd++) {
            int flags = fcntl(fd, F_GETFD);

            if (flags >= 0 && !(flags & FD_CLOEXEC)) {
                fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
            }
        }
    }
}

static void child_main(const rdp_run_spawn_t *sp, pid_t parent, int out_w,
                       int err_w, int status_w)
{
    struct sigaction sa;
    sigset_t none;

    /* all signals are blocked here (see rdp_run_spawn_start) */
    setpgid(0, 0);
    if (sp->pdeathsig > 0) {
        prctl(PR_SET_PDEATHSIG, sp->pdeathsig);
        if (getppid() != parent) {
            _exit(126);
        }
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        sigaction(sig, &sa, NULL); /* fails harmlessly for KILL/STOP */
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (dup2(sp->stdin_fd, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) {
        child_fail(status_w, RDP_RUN_STAGE_EXEC, errno);
    }
    mark_fds_cloexec();
    if (sp->cwd != NULL && chdir(sp->cwd) != 0) {
        child_fail(status_w, RDP_RUN_STAGE_CHDIR, errno);
    }
    execve(sp->path, sp->argv, sp->envp);
    child_fail(status_w, RDP_RUN_STAGE_EXEC, errno);
}

pmix_status_t rdp_run_spawn_start(const rdp_run_spawn_t *sp,
                                  rdp_run_child_t *child_p)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, st[2] = {-1, -1};
    pid_t parent = getpid();
    sigset_t all, old;
    pid_t pid;
    int saved;

    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0
        || pipe2(st, O_CLOEXEC) != 0) {
        rdp_log_error(RUN, "cannot create pipes for a rank: %m");
        goto err_pipes;
    }
    /* Until the child has reset its signal handlers, a signal sent to it
     * (the job may be terminated at once) would run the daemon's handler
     * in the child, which reports it into the daemon's own loop: keep all
     * signals blocked across fork; the child unblocks them after the
     * reset, and what arrived meanwhile then acts by default. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    /* vfork: the child borrows our memory until it execs, so nothing is
     * copied.  fork copied the daemon's page tables for every rank and
     * made its other threads take copy-on-write faults and TLB shootdowns:
     * 64 ranks of /bin/true took 1.0 s, 0.4 s with vfork (docs/design.md).
     * The child only makes system calls, writes nothing but its own stack
     * (and errno), and never returns from here. */
    pid = vfork();
    if (pid == 0) {
        child_main(sp, parent, out[1], err[1], st[1]);
        _exit(126); /* not reached */
    }
    saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        errno = saved;
        rdp_log_error(RUN, "cannot fork a rank: %m");
        goto err_pipes;
    }
    /* also in the parent, so signals to -pid work before the child runs */
    setpgid(pid, pid);
    close(out[1]);
    close(err[1]);
    close(st[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    fcntl(st[0], F_SETFL, O_NONBLOCK);
    child_p->pid       = pid;
    child_p->out_fd    = out[0];
    child_p->err_fd    = err[0];
    child_p->status_fd = st[0];
    return PMIX_SUCCESS;

err_pipes : {
    pmix_status_t status = (errno == EMFILE || errno == ENFILE)
                               ? PMIX_ERR_SYS_LIMITS_FILES
                               : PMIX_ERR_SYS_LIMITS_CHILDREN;
    int saved            = errno;

    close_pair(out);
    close_pair(err);
    close_pair(st);
    errno = saved;
    return status;
}
}

int rdp_run_spawn_failure(int status_fd, int *stage_p, int *errno_p)
{
    int msg[2];
    ssize_t n;

    do {
        n = read(status_fd, msg, sizeof(msg));
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(msg)) {
        return 0;
    }
    *stage_p = msg[0];
    *errno_p = msg[1];
    return 1;
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
            return envp[i] + len + 1;
        }
    }
    return NULL;
}

/* 0 if @a path is an executable regular file, else an errno value. */
static int check_exec(const char *path)
{
    struct stat sb;

    if (stat(path, &sb) != 0) {
        return errno;
    }
    if (S_ISDIR(sb.st_mode)) {
        return EACCES;
    }
    if (access(path, X_OK) != 0) {
        return errno;
    }
    return 0;
}

/* @a dir + "/" + @a name, made absolute against @a cwd if relative. */
static char *make_path(const char *cwd, const char *dir, size_t dirlen,
                       const char *name)
{
    size_t need = (cwd ? strlen(cwd) : 0) + dirlen + strlen(name) + 4;
    char *p     = rdp_malloc(need);
    int rel     = dirlen == 0 || dir[0] != '/';

    if (p == NULL) {
        return NULL;
    }
    if (dirlen == 0) {
        dir    = ".";
        dirlen = 1;
    }
    if (rel && cwd != NULL) {
        snprintf(p, need, "%s/%.*s/%s", cwd, (int)dirlen, dir, name);
    } else {
        snprintf(p, need, "%.*s/%s", (int)dirlen, dir, name);
    }
    return p;
}

int rdp_run_spawn_resolve(const char *argv0, char *const *envp, const char *cwd,
                          char **path_p)
{
    const char *path, *p;
    int first_err = ENOENT;

    if (argv0 == NULL || argv0[0] == '\0') {
        return ENOENT;
    }
    if (strchr(argv0, '/') != NULL) {
        char *full;
        int rc;

        if (argv0[0] == '/' || cwd == NULL) {
            full = rdp_strdup(argv0);
        } else {
            full = make_path(cwd, "", 0, argv0); /* cwd/./argv0 */
        }
        if (full == NULL) {
            return ENOMEM;
        }
        rc = check_exec(full);
        if (rc != 0) {
            rdp_free(full);
            return rc;
        }
        *path_p = full;
        return 0;
    }
    path = env_get(envp, "PATH");
    if (path == NULL) {
        path = "/usr/local/bin:/usr/bin:/bin";
    }
    p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len      = end ? (size_t)(end - p) : strlen(p);
        char *cand      = make_path(cwd, p, len, argv0);
        int rc;

        if (cand == NULL) {
            return ENOMEM;
        }
        rc = check_exec(cand);
        if (rc == 0) {
            *path_p = cand;
            return 0;
        }
        rdp_free(cand);
        /* as execvp: remember a permission problem, keep searching */
        if (rc == EACCES) {
            first_err = EACCES;
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return first_err;
}
