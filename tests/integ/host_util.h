/* host_util.h - test hosts: callback waits, client set-up, reaping */
#ifndef RDP_TESTS_INTEG_HOST_UTIL_H
#define RDP_TESTS_INTEG_HOST_UTIL_H

#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The server API completes registrations through callbacks on the
 * library's thread; the test hosts wait for each one before going on. */
typedef struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
} done_t;

static inline void done_init(done_t *d)
{
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    d->done = 0;
}

/* a pmix_op_cbfunc_t */
static inline void done_cb(pmix_status_t status, void *cbdata)
{
    done_t *d = cbdata;

    pthread_mutex_lock(&d->lock);
    d->status = status;
    d->done   = 1;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

static inline pmix_status_t done_wait(done_t *d)
{
    pthread_mutex_lock(&d->lock);
    while (!d->done) {
        pthread_cond_wait(&d->cond, &d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return d->status;
}

/* This process's environment plus what the server sets up for @a proc,
 * in *env_p (free with pmix_argv_free). */
static inline pmix_status_t host_client_env(const pmix_proc_t *proc,
                                            char ***env_p)
{
    for (char **e = environ; *e != NULL; e++) {
        pmix_argv_append_nosize(env_p, *e);
    }
    return PMIx_server_setup_fork(proc, env_p);
}

/* Wait for the @a n children in kids[] (kids[i] runs rank first_rank + i),
 * zeroing each entry as it is reaped; returns how many did not exit 0. */
static inline int host_reap(pid_t kids[], int n, int first_rank,
                            const char *who)
{
    int failures = 0;

    for (int left = n; left > 0;) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);

        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        for (int i = 0; i < n; i++) {
            if (kids[i] != pid) {
                continue;
            }
            kids[i] = 0;
            left--;
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "%s: rank %d %s %d\n", who, first_rank + i,
                        WIFEXITED(status) ? "exited with" : "killed by",
                        WIFEXITED(status) ? WEXITSTATUS(status)
                                          : WTERMSIG(status));
                failures++;
            }
        }
    }
    return failures;
}

/* Write or read exactly @a len bytes (EINTR retried): 0, or -1 on an
 * error or end of file (errno 0 then). */
static inline int host_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static inline int host_read_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            if (n == 0) {
                errno = 0;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

#endif
