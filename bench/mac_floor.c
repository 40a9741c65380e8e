/* mac_floor.c - the authentication floor: what MACing a payload's bytes
 * costs the UCX transport, apart from the MAC of its header */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/tl.h"
#include "ucx/ucx_int.h"

/*
 * A message's mac_msg (AES-256-GMAC, src/ucx/ucx_wire.c) covers its
 * prefix and, unless the job's payloads travel open (trust follows the
 * fabric), its payload.  The floor of a size is the difference of the two:
 * the time spent on the payload's bytes alone, per message and side.
 * bench/RESULTS.md turns it into the floor of an allgather.
 *
 *   mac-floor [-c] [-j N] [-s] [max_bytes] [reps]
 *
 * prints CSV: bytes,reps,iterations,authenticated_us,open_us,floor_us,
 * floor_ns_per_byte (each time the median over reps of the mean over
 * iterations, in CPU time of the thread).  Quiet machine preferred (CPU
 * time leaves other processes out, not their use of caches and memory
 * bandwidth); pinned (taskset -c 1).
 *
 * By default every message MACs the same buffer, which stays in the
 * cache, on an otherwise idle machine: the cost at best.  Two options
 * bring it closer to an allgather's, where the payload was just received
 * and every core MACs at once:
 *   -c    cold: message i MACs the bytes at offset i * size of a 64 MiB
 *         pool (more than the caches hold), not the same buffer
 *   -j N  N - 1 more threads, pinned to the N - 1 CPUs after the one
 *         the main thread starts on (modulo the CPU count; pin the main
 *         thread with taskset), MAC 1 MiB messages without a pause (cold
 *         or not, as the main thread) while the main thread measures
 *   -s    seals instead of mac_msg: what full mode's blocks pay per byte
 *         (rdp_ucx_auth_seal, with the wide GHASH where the CPU has it
 *         unless RDPMIX_UCX_WIDE_GHASH=0; docs/ucx.md); "open" is then a
 *         seal over no bytes
 */

#define PREFIX_LEN 64 /* a typical prefix: fixed part, envelope, no seals */

static double now(void)
{
    struct timespec ts;

    /* the thread's CPU time: on a loaded machine the wall clock would
     * count the time other processes ran */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

#define POOL_BYTES ((size_t)64 << 20) /* -c: beyond the caches */

static int cold;  /* -c: buffers are POOL_BYTES, walked through */
static int seals; /* -s: time rdp_ucx_auth_seal, not mac_msg */
static volatile int stop_load;

/* The payload of message @a i of @a len bytes: the same bytes every time,
 * or with -c the next @a len bytes of the pool at @a buf. */
static const uint8_t *payload_at(const uint8_t *buf, size_t len, long i)
{
    size_t slots = (cold && len > 0) ? POOL_BYTES / len : 1;

    return (slots > 1) ? buf + ((size_t)i % slots) * len : buf;
}

/* Mean seconds per mac_msg over @a iters, payload @a len (0: open) */
static double time_macs(rdp_ucx_auth_t *auth, const uint8_t *pre,
                        const uint8_t *buf, size_t len, long iters)
{
    uint8_t mac[RDP_UCX_MAC_LEN];
    double t0 = now();

    for (long i = 0; i < iters; i++) {
        rdp_iov_t iov = {(void *)payload_at(buf, len, i), len};
        static uint64_t counter;
        rdp_tl_seal_t seal;
        pmix_status_t rc =
            seals ? rdp_ucx_auth_seal(auth, 0, &counter, iov.base, len, &seal)
                  : rdp_ucx_auth_msg(auth, pre, PREFIX_LEN, &iov, len > 0, mac);

        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "mac-floor: the authenticator failed\n");
            exit(1);
        }
    }
    return (now() - t0) / (double)iters;
}

/* Median over @a reps of time_macs */
static double median_of(rdp_ucx_auth_t *auth, const uint8_t *pre,
                        const uint8_t *buf, size_t len, long iters, int reps)
{
    double t[64];

    for (int r = 0; r < reps; r++) {
        t[r] = time_macs(auth, pre, buf, len, iters);
    }
    qsort(t, (size_t)reps, sizeof(t[0]), by_value);
    return t[reps / 2];
}

/* -j: one more core MACing 1 MiB messages until stop_load. */
typedef struct load {
    pthread_t thread;
    int cpu;
    uint8_t *buf;
    int started;
} load_t;

static void *load_main(void *arg)
{
    load_t *l = arg;
    cpu_set_t set;
    uint8_t key[RDP_UCX_KEY_LEN], pre[PREFIX_LEN];
    rdp_ucx_auth_t auth;

    CPU_ZERO(&set);
    CPU_SET(l->cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    memset(key, 0x33, sizeof(key));
    memset(pre, 0x5a, sizeof(pre));
    if (rdp_ucx_auth_init(&auth, key, sizeof(key)) != PMIX_SUCCESS) {
        return NULL;
    }
    for (long i = 0; !stop_load; i++) {
        uint8_t mac[RDP_UCX_MAC_LEN];
        rdp_iov_t iov = {(void *)payload_at(l->buf, 1u << 20, i), 1u << 20};

        (void)rdp_ucx_auth_msg(&auth, pre, PREFIX_LEN, &iov, 1, mac);
    }
    rdp_ucx_auth_cleanup(&auth);
    return NULL;
}

static uint8_t *filled(size_t len)
{
    uint8_t *buf = malloc(len);

    for (size_t i = 0; (buf != NULL) && (i < len); i++) {
        buf[i] = (uint8_t)(i * 131u);
    }
    return buf;
}

int main(int argc, char **argv)
{
    int jobs = 1;
    int opt;
    size_t max;
    int reps;
    load_t *loads = NULL;
    long ncpu     = sysconf(_SC_NPROCESSORS_ONLN);
    int here      = sched_getcpu();

    while ((opt = getopt(argc, argv, "cj:s")) != -1) {
        if (opt == 'c') {
            cold = 1;
        } else if (opt == 's') {
            seals = 1;
        } else if (opt == 'j') {
            jobs = atoi(optarg);
        } else {
            jobs = 0; /* usage below */
        }
    }
    max  = optind < argc ? strtoull(argv[optind], NULL, 0) : (1u << 20);
    reps = optind + 1 < argc ? atoi(argv[optind + 1]) : 7;
    /* the sizes of bench/RESULTS.md's allgather tables, and some between */
    static const size_t sizes[] = {8,     64,     1024,    4096,    16384,
                                   65536, 262144, 1048576, 4194304, 16777216};
    uint8_t key[RDP_UCX_KEY_LEN], pre[PREFIX_LEN];
    rdp_ucx_auth_t auth;
    uint8_t *buf;

    if (max < 8 || max > (1u << 30) || reps < 1 || reps > 64 || jobs < 1
        || jobs > 64) {
        fprintf(stderr,
                "usage: mac-floor [-c] [-j 1..64] [-s] [max_bytes 8..1G] "
                "[reps 1..64]\n");
        return 2;
    }
    buf = filled((cold && max < POOL_BYTES) ? POOL_BYTES : max);
    if (buf == NULL) {
        return 1;
    }
    if (jobs > 1) {
        loads = calloc((size_t)jobs, sizeof(*loads));
        if (loads == NULL) {
            return 1;
        }
    }
    for (int j = 1; j < jobs; j++) {
        loads[j].cpu =
            (int)(((here > 0 ? here : 0) + j) % (ncpu > 0 ? ncpu : 1));
        loads[j].buf = filled(cold ? POOL_BYTES : (1u << 20));
        loads[j].started =
            (loads[j].buf != NULL)
            && (pthread_create(&loads[j].thread, NULL, load_main, &loads[j])
                == 0);
    }
    for (size_t i = 0; i < sizeof(key); i++) {
        key[i] = (uint8_t)(i + 1);
    }
    memset(pre, 0x5a, sizeof(pre));
    if (rdp_ucx_auth_init(&auth, key, sizeof(key)) != PMIX_SUCCESS) {
        return 1;
    }
    printf("bytes,reps,iterations,authenticated_us,open_us,floor_us,"
           "floor_ns_per_byte\n");
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t size = sizes[k];
        /* about 64 MiB of payload per repetition, at least 2000 messages */
        long iters = (long)(((size_t)64 << 20) / size);
        double full, open, floor;

        if (size > max) {
            break;
        }
        iters = iters < 2000 ? 2000 : (iters > 200000 ? 200000 : iters);
        full  = median_of(&auth, pre, buf, size, iters, reps);
        open  = median_of(&auth, pre, buf, 0, iters, reps);
        floor = full > open ? full - open : 0.0;
        printf("%zu,%d,%ld,%.3f,%.3f,%.3f,%.4f\n", size, reps, iters,
               full * 1e6, open * 1e6, floor * 1e6, floor * 1e9 / (double)size);
        fflush(stdout);
    }
    stop_load = 1;
    for (int j = 1; j < jobs; j++) {
        if (loads[j].started) {
            pthread_join(loads[j].thread, NULL);
        }
        free(loads[j].buf);
    }
    free(loads);
    rdp_ucx_auth_cleanup(&auth);
    free(buf);
    return 0;
}
