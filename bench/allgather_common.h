/* allgather_common.h - what coll-bench and mpi-allgather share: sizes,
 * payload pattern, repetition rule, statistics and the CSV line */
#ifndef RDP_BENCH_ALLGATHER_COMMON_H
#define RDP_BENCH_ALLGATHER_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Both allgather benchmarks (bench/coll_bench.c over the engine,
 * bench/mpi_allgather.c over MPI_Allgather) include this file so that the
 * two measure exactly the same thing:
 *
 *   for every block size: W warm-up + R timed iterations, each
 *       fill my block (pattern of origin, series, iteration)   untimed
 *       barrier                                                untimed
 *       t0; allgather of `size` bytes per process; t1          timed
 *       check every block                                      untimed
 *   per iteration: the max over processes of their t1 - t0
 *   CSV: min, median and max over the R iterations of that max
 *
 * Up to AG_MAX_SIZES sizes; a size is at most AG_MAX_BLOCK bytes.
 */

#define AG_MAX_SIZES  64
#define AG_MAX_BLOCK  ((size_t)64 << 20)
#define AG_CSV_HEADER "impl,alg,M,size,reps,min_us,median_us,max_us"

/** Timed repetitions for @a size: @a k below 256 KiB, @a k_large from there
 * on (large blocks over many oversubscribed processes take long). */
static inline unsigned ag_reps(size_t size, unsigned k, unsigned k_large)
{
    return (size >= ((size_t)256 << 10)) ? k_large : k;
}

/** Parse a byte count with an optional k/K/m/M suffix (powers of 1024).
 * Returns 0 and sets *v_p, or -1. */
static inline int ag_parse_size(const char *s, size_t *v_p)
{
    char *end;
    unsigned long long v;

    if ((s == NULL) || (*s < '0') || (*s > '9')) {
        return -1;
    }
    errno = 0;
    v     = strtoull(s, &end, 10);
    if (errno != 0) {
        return -1;
    }
    if ((*end == 'k') || (*end == 'K')) {
        v <<= 10;
        end++;
    } else if ((*end == 'm') || (*end == 'M')) {
        v <<= 20;
        end++;
    }
    if ((*end != '\0') || (v > AG_MAX_BLOCK)) {
        return -1;
    }
    *v_p = (size_t)v;
    return 0;
}

/** Parse an unsigned count in [lo, hi].  Returns 0 and sets *v_p, or -1. */
static inline int ag_parse_uint(const char *s, unsigned lo, unsigned hi,
                                unsigned *v_p)
{
    char *end;
    unsigned long v;

    if ((s == NULL) || (*s < '0') || (*s > '9')) {
        return -1;
    }
    errno = 0;
    v     = strtoul(s, &end, 10);
    if ((errno != 0) || (*end != '\0') || (v < lo) || (v > hi)) {
        return -1;
    }
    *v_p = (unsigned)v;
    return 0;
}

/** The size list: @a list ("8,1k,64k") if not NULL, else min, min*factor,
 * ... up to max, with max always last.  Returns the count (>= 1), or 0
 * with a message on stderr. */
static inline size_t ag_sizes(const char *list, size_t min, size_t max,
                              unsigned factor, size_t sizes[AG_MAX_SIZES])
{
    size_t n = 0;

    if (list != NULL) {
        char buf[1024];
        char *save = NULL;

        if (strlen(list) >= sizeof(buf)) {
            fprintf(stderr, "size list too long\n");
            return 0;
        }
        strcpy(buf, list);
        for (char *tok = strtok_r(buf, ",", &save); tok != NULL;
             tok       = strtok_r(NULL, ",", &save)) {
            if (n == AG_MAX_SIZES) {
                fprintf(stderr, "more than %d sizes\n", AG_MAX_SIZES);
                return 0;
            }
            if (ag_parse_size(tok, &sizes[n]) != 0) {
                fprintf(stderr, "bad size '%s' (0..%zu, suffix k or M)\n", tok,
                        AG_MAX_BLOCK);
                return 0;
            }
            n++;
        }
        if (n == 0) {
            fprintf(stderr, "empty size list\n");
        }
        return n;
    }
    if ((min == 0) || (min > max) || (factor < 2)) {
        fprintf(stderr, "need 0 < min <= max and factor >= 2\n");
        return 0;
    }
    for (size_t s = min; s < max; s *= factor) {
        if (n == AG_MAX_SIZES - 1) {
            fprintf(stderr, "more than %d sizes\n", AG_MAX_SIZES);
            return 0;
        }
        sizes[n++] = s;
    }
    sizes[n++] = max;
    return n;
}

/* ---- the options both programs take ---- */

typedef struct ag_opts {
    const char *impl; /**< CSV impl column */
    const char *list; /**< -l, or NULL */
    size_t min, max;
    unsigned factor;
    unsigned warm, reps, reps_large;
    int check_all;
    int header;
    size_t sizes[AG_MAX_SIZES]; /**< filled by ag_opts_finish */
    size_t nsizes;
} ag_opts_t;

/** getopt letters of the common options ("--header"/"--no-header" are
 * long options the caller maps to 'H' and 'N'). */
#define AG_OPTSTRING "s:S:f:l:w:k:K:I:c"
/** Long options of both programs, for a struct option array. */
/* clang-format off */
#define AG_LONGOPTS                        \
    {"header", no_argument, NULL, 'H'},    \
    {"no-header", no_argument, NULL, 'N'}, \
    {"help", no_argument, NULL, 'h'},      \
    {NULL, 0, NULL, 0}
/* clang-format on */

static inline void ag_opts_init(ag_opts_t *o, const char *impl)
{
    memset(o, 0, sizeof(*o));
    o->impl       = impl;
    o->min        = 8;
    o->max        = (size_t)1 << 20;
    o->factor     = 4;
    o->warm       = 3;
    o->reps       = 20;
    o->reps_large = 5;
    o->header     = 1;
}

/** Handle option @a c: 1 done, 0 not a common option, -1 bad value. */
static inline int ag_opts_parse(ag_opts_t *o, int c, const char *arg)
{
    switch (c) {
    case 's':
        return (ag_parse_size(arg, &o->min) == 0) ? 1 : -1;
    case 'S':
        return (ag_parse_size(arg, &o->max) == 0) ? 1 : -1;
    case 'f':
        return (ag_parse_uint(arg, 2, 1024, &o->factor) == 0) ? 1 : -1;
    case 'l':
        o->list = arg;
        return 1;
    case 'w':
        return (ag_parse_uint(arg, 1, 1000000, &o->warm) == 0) ? 1 : -1;
    case 'k':
        return (ag_parse_uint(arg, 1, 1000000, &o->reps) == 0) ? 1 : -1;
    case 'K':
        return (ag_parse_uint(arg, 1, 1000000, &o->reps_large) == 0) ? 1 : -1;
    case 'I':
        o->impl = arg;
        return 1;
    case 'c':
        o->check_all = 1;
        return 1;
    case 'H':
        o->header = 1;
        return 1;
    case 'N':
        o->header = 0;
        return 1;
    default:
        return 0;
    }
}

/** Build the size list; 0 on success, -1 (message printed). */
static inline int ag_opts_finish(ag_opts_t *o)
{
    o->nsizes = ag_sizes(o->list, o->min, o->max, o->factor, o->sizes);
    return (o->nsizes == 0) ? -1 : 0;
}

static inline void ag_opts_usage(FILE *f, const char *impl)
{
    fprintf(f,
            "  -s MIN -S MAX -f F  sizes MIN, MIN*F, ... and MAX (default 8, "
            "1M, 4)\n"
            "  -l LIST  explicit sizes instead (\"8,1k,64k\")\n"
            "  -w W     warm-up iterations per size (default 3, >= 1)\n"
            "  -k K     timed iterations below 256 KiB (default 20)\n"
            "  -K K     timed iterations from 256 KiB on (default 5)\n"
            "  -I NAME  impl column (default %s)\n"
            "  -c       check every byte of every block on every iteration\n"
            "           (default: the first and last iteration fully, the\n"
            "           others origin, length and both ends)\n"
            "  --no-header  do not print the CSV header\n",
            impl);
}

/* ---- payload: 64-bit words seeded by (origin, series, iteration) ---- */

static inline uint64_t ag_seed(uint32_t origin, uint32_t series, uint32_t iter)
{
    uint64_t z = ((uint64_t)origin << 40) ^ ((uint64_t)series << 24) ^ iter;

    /* splitmix64 finaliser: neighbouring seeds give unrelated words */
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** Byte @a i of the block of @a seed. */
static inline uint8_t ag_byte(uint64_t seed, size_t i)
{
    uint64_t w = seed + (uint64_t)(i / 8) * 0x9e3779b97f4a7c15ull;

    return (uint8_t)(w >> (8 * (i % 8)));
}

static inline void ag_fill(uint8_t *buf, size_t len, uint64_t seed)
{
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w = seed + (uint64_t)(i / 8) * 0x9e3779b97f4a7c15ull;

        for (int b = 0; b < 8; b++) {
            buf[i + b] = (uint8_t)(w >> (8 * b));
        }
    }
    for (; i < len; i++) {
        buf[i] = ag_byte(seed, i);
    }
}

/** First byte of @a buf that differs from the pattern, or @a len when all
 * match.  @a full 0: only the first and last 8 bytes are checked. */
static inline size_t ag_check(const uint8_t *buf, size_t len, uint64_t seed,
                              int full)
{
    if (!full && (len > 16)) {
        for (size_t i = 0; i < 8; i++) {
            if (buf[i] != ag_byte(seed, i)) {
                return i;
            }
        }
        for (size_t i = len - 8; i < len; i++) {
            if (buf[i] != ag_byte(seed, i)) {
                return i;
            }
        }
        return len;
    }
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != ag_byte(seed, i)) {
            return i;
        }
    }
    return len;
}

/** Iterations whose every byte is checked: the first warm-up and the last
 * timed one (the others check origin, length and both ends). */
static inline int ag_full_check(unsigned iter, unsigned total, int always)
{
    return always || (iter == 0) || (iter + 1 == total);
}

/* ---- statistics ---- */

static inline int ag_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/**
 * Print the CSV line of one series.  @a t holds nprocs rows of @a reps
 * seconds (row p: process p's durations); the figure per iteration is the
 * max over processes.  Returns 0, or -1 when out of memory.
 */
static inline int ag_print_row(const char *impl, const char *alg,
                               unsigned nprocs, size_t size, unsigned reps,
                               const double *t)
{
    double *it = malloc((reps > 0 ? reps : 1) * sizeof(*it));
    double med;

    if (it == NULL) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    for (unsigned j = 0; j < reps; j++) {
        it[j] = t[j];
        for (unsigned p = 1; p < nprocs; p++) {
            double v = t[(size_t)p * reps + j];

            it[j] = (v > it[j]) ? v : it[j];
        }
    }
    qsort(it, reps, sizeof(*it), ag_cmp_double);
    med = (reps % 2 == 1) ? it[reps / 2]
                          : (it[reps / 2 - 1] + it[reps / 2]) / 2.0;
    printf("%s,%s,%u,%zu,%u,%.2f,%.2f,%.2f\n", impl, alg, nprocs, size, reps,
           it[0] * 1e6, med * 1e6, it[reps - 1] * 1e6);
    fflush(stdout);
    free(it);
    return 0;
}

#endif
