/* call_timeline.c - an LD_PRELOAD library that times a process's socket,
 * epoll and yield calls with the TSC, for bench/call_timeline.py
 *
 *   gcc -O2 -shared -fPIC -o call_timeline.so bench/call_timeline.c -ldl
 *   CALL_TIMELINE_DIR=DIR LD_PRELOAD=$PWD/call_timeline.so PROGRAM ...
 *   (under mpirun: -x LD_PRELOAD=... -x CALL_TIMELINE_DIR=DIR)
 *
 * Each process writes DIR/tl.PID at exit: a header line with the TSC rate
 * and the TSC / CLOCK_MONOTONIC pair taken at start, then one line per
 * call, "tsc_in tsc_out kind result" (kind 1 send, 2 receive, 3
 * epoll_wait, 4 sched_yield).  About 40 ns per call on this project's VM,
 * against the microseconds syscall tracing adds; not thread-safe (the
 * programs timed here make these calls from one thread).  Not built by
 * make: a measuring tool, not part of rdpmix. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

typedef struct {
    uint64_t in;
    uint64_t out;
    int32_t kind;
    int32_t result;
} call_t;

#define MAX_CALLS (1u << 22)

static call_t *calls;
static unsigned ncalls;
static uint64_t tsc_start;
static uint64_t ns_start;

static ssize_t (*next_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*next_sendto)(int, const void *, size_t, int,
                              const struct sockaddr *, socklen_t);
static ssize_t (*next_send)(int, const void *, size_t, int);
static ssize_t (*next_recv)(int, void *, size_t, int);
static ssize_t (*next_recvfrom)(int, void *, size_t, int, struct sockaddr *,
                                socklen_t *);
static int (*next_epoll_wait)(int, struct epoll_event *, int, int);
static int (*next_sched_yield)(void);

/* the system call: the vDSO's clock_gettime may be what is measured */
static uint64_t mono_ns(void)
{
    struct timespec ts;

    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void timeline_init(void)
{
    next_sendmsg     = dlsym(RTLD_NEXT, "sendmsg");
    next_sendto      = dlsym(RTLD_NEXT, "sendto");
    next_send        = dlsym(RTLD_NEXT, "send");
    next_recv        = dlsym(RTLD_NEXT, "recv");
    next_recvfrom    = dlsym(RTLD_NEXT, "recvfrom");
    next_epoll_wait  = dlsym(RTLD_NEXT, "epoll_wait");
    next_sched_yield = dlsym(RTLD_NEXT, "sched_yield");
    calls            = calloc(MAX_CALLS, sizeof(*calls));
    tsc_start        = __rdtsc();
    ns_start         = mono_ns();
}

__attribute__((destructor)) static void timeline_write(void)
{
    const char *dir = getenv("CALL_TIMELINE_DIR");
    uint64_t tsc    = __rdtsc();
    uint64_t ns     = mono_ns();
    char path[4096];
    FILE *f;

    if ((dir == NULL) || (calls == NULL)) {
        return;
    }
    snprintf(path, sizeof(path), "%s/tl.%d", dir, (int)getpid());
    if ((f = fopen(path, "w")) == NULL) {
        return;
    }
    fprintf(f, "# ghz %.6f calls %u tsc0 %llu ns0 %llu\n",
            (double)(tsc - tsc_start) / (double)(ns - ns_start), ncalls,
            (unsigned long long)tsc_start, (unsigned long long)ns_start);
    for (unsigned i = 0; i < ncalls; i++) {
        fprintf(f, "%llu %llu %d %d\n", (unsigned long long)calls[i].in,
                (unsigned long long)calls[i].out, calls[i].kind,
                calls[i].result);
    }
    fclose(f);
}

static void record(int kind, uint64_t in, long result)
{
    uint64_t out = __rdtsc();

    if ((calls != NULL) && (ncalls < MAX_CALLS)) {
        calls[ncalls++] = (call_t){in, out, kind, (int32_t)result};
    }
}

#define TIMED(kind, type, call)      \
    do {                             \
        uint64_t in_ = __rdtsc();    \
        type r_      = call;         \
        record(kind, in_, (long)r_); \
        return r_;                   \
    } while (0)

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    TIMED(1, ssize_t, next_sendmsg(fd, msg, flags));
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
               const struct sockaddr *to, socklen_t tolen)
{
    TIMED(1, ssize_t, next_sendto(fd, buf, len, flags, to, tolen));
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    TIMED(1, ssize_t, next_send(fd, buf, len, flags));
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    TIMED(2, ssize_t, next_recv(fd, buf, len, flags));
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
                 struct sockaddr *from, socklen_t *fromlen)
{
    TIMED(2, ssize_t, next_recvfrom(fd, buf, len, flags, from, fromlen));
}

int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout)
{
    TIMED(3, int, next_epoll_wait(epfd, events, max, timeout));
}

int sched_yield(void)
{
    TIMED(4, int, next_sched_yield());
}
