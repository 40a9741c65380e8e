/* pmix_bench.c - PMIx client benchmark: init, put, commit, fence, get,
 * connect, group construct */

/*
 * Written only against the PMIx Standard client API, so that one binary runs
 * under any PMIx server that provides libpmix.so.2: rdpmix's (rdpmix-run) or
 * OpenPMIx's (Open MPI's mpirun).  Library calls it makes: PMIx_Init,
 * PMIx_Finalize, PMIx_Put, PMIx_Commit, PMIx_Fence, PMIx_Get,
 * PMIx_Get_version, PMIx_Error_string, PMIx_Connect, PMIx_Disconnect,
 * PMIx_Group_construct, PMIx_Group_destruct, plus PMIx_Info_load and
 * PMIx_Value_destruct through the PMIX_INFO_LOAD and PMIX_VALUE_RELEASE
 * macros.
 *
 * One launch measures, on every rank, in this order:
 *   init           PMIx_Init
 *   fence          K x PMIx_Fence(NULL procs, no info): a barrier.  The reps
 *                  also line the ranks up so that the phases below start
 *                  together (the first rep absorbs the launch skew).
 *   put            PMIx_Put of one key holding S bytes (PMIX_BYTE_OBJECT)
 *   commit         PMIx_Commit
 *   fence_collect  PMIx_Fence(NULL procs, PMIX_COLLECT_DATA=true) -- the
 *                  modex; with -m direct instead no collection is asked for
 *                  (phase "fence_nocollect") and the gets below fetch the
 *                  data on demand (direct modex)
 *   get            PMIx_Get of that key from every rank, self included; the
 *                  clock stops before the values are checked
 *   fence_collect_rep  K x (the same put + commit, then the collecting
 *                  fence), only the fence timed
 *   connect        K x PMIx_Connect of the whole job (wildcard rank), each
 *   disconnect     followed by PMIx_Disconnect of the same
 *   group_construct  K x PMIx_Group_construct("pb-<rep>", whole job,
 *   group_destruct   PMIX_GROUP_ASSIGN_CONTEXT_ID), each followed by
 *                  PMIx_Group_destruct; the S-byte key is committed before
 *                  (a construct hands every member the members' committed
 *                  data, so it carries what the modex fence carries)
 * -l puts an untimed barrier before every timed rep of the repeated
 * phases (fence, fence_collect_rep, connect, disconnect, group_construct,
 * group_destruct), so each starts with the ranks lined up.
 * -p selects the phase groups (fence, modex, modex_rep, connect, group);
 * init always runs.  A call that answers PMIX_ERR_NOT_SUPPORTED makes its phase (and
 * its pair: disconnect, group_destruct) a row marked "unsupported", and the
 * other phases go on.
 * Each launch does exactly one put+commit+fence+get: OpenPMIx re-sends every
 * key ever put at each commit and may serve stale values for an overwritten
 * key, so a loop inside one launch would not measure the same thing twice
 * (see bench/README.md).
 *
 * Aggregation (untimed): every rank puts its timings under a second key,
 * commits and fences with collect; rank 0 gets all of them and prints one
 * CSV line per phase: impl,N,S,phase,reps,min_us,median_us,max_us, where
 * min/median/max are taken over the N ranks.  For the repeated phases each
 * rank first reduces its K reps to their median, so the line is the spread over ranks
 * of the per-rank median barrier time (reps = K); -v also prints each
 * rank's per-rep min and max.  The payload is a deterministic function of
 * the rank, so every get verifies the bytes; a mismatch is reported through
 * the aggregation (so no rank is left waiting in a fence) and makes the
 * ranks that saw it, and rank 0, exit with status 2.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <pmix.h>

/* keys starting with "pmix" are reserved for the Standard's attributes */
#define DATA_KEY  "bench.data"
#define TIMES_KEY "bench.times"

#define EXIT_FAIL   1 /* a PMIx call or the setup failed */
#define EXIT_VERIFY 2 /* a get returned other bytes than the peer put */

enum mode {
    MODE_COLLECT, /* fence with PMIX_COLLECT_DATA, then local gets */
    MODE_DIRECT   /* fence without collection, gets fetch on demand */
};

/* one per-rank measurement slot; the order is the CSV order */
enum slot {
    SLOT_INIT,
    SLOT_FENCE, /* median of the K reps */
    SLOT_PUT,
    SLOT_COMMIT,
    SLOT_MODEX,
    SLOT_GET,
    SLOT_MODEX_REP, /* median of the K reps, as the four below */
    SLOT_CONNECT,
    SLOT_DISCONNECT,
    SLOT_GRP_CONSTRUCT,
    SLOT_GRP_DESTRUCT,
    SLOT_COUNT
};

/* the phase groups -p selects */
enum {
    PHASES_FENCE   = 1u << 0, /* the barrier */
    PHASES_MODEX   = 1u << 1, /* put, commit, fence_collect, get */
    PHASES_CONNECT = 1u << 2, /* connect, disconnect */
    PHASES_GROUP   = 1u << 3, /* group_construct, group_destruct */
    PHASES_MODEX_K = 1u << 4, /* fence_collect_rep */
    PHASES_ALL     = (1u << 5) - 1
};

/* the value columns of a phase the host does not support */
#define UNSUPPORTED "unsupported"

/* what each rank publishes under TIMES_KEY (all ranks run the same binary) */
struct report {
    uint32_t magic;
    uint32_t errors;      /* gets whose bytes did not match */
    uint32_t ran;         /* bit per slot: measured */
    uint32_t unsupported; /* bit per slot: the call was not supported */
    double us[SLOT_COUNT];
    double fence_min; /* per-rep extremes of the K barriers */
    double fence_max;
    long modex_minflt; /* minor page faults of the fence_collect call */
    long get_minflt;   /* ... and of the gets after it */
};

#define REPORT_MAGIC 0x706d6232u /* "pmb2" */

struct options {
    size_t size;
    unsigned reps;
    enum mode mode;
    unsigned phases; /* PHASES_* */
    const char *impl;
    bool header;
    bool verbose;
    bool line_up; /* -l: an untimed barrier before every timed rep */
};

static pmix_proc_t myproc;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: pmix-bench [-s BYTES] [-k K] [-m collect|direct] "
            "[-p PHASES] [-i NAME] [-l] [--no-header] [-v]\n"
            "  -s BYTES     payload per rank for the modex (default 8)\n"
            "  -k K         repetitions of the barrier, connect and group\n"
            "               phases (default 10)\n"
            "  -p PHASES    comma-separated: fence, modex, modex_rep, connect,"
            "\n               group, all\n"
            "               (default all); init always runs\n"
            "  -m MODE      collect: fence with PMIX_COLLECT_DATA (default);\n"
            "               direct: fence without it, gets fetch on demand\n"
            "  -i NAME      implementation name for the CSV (default: from\n"
            "               PMIx_Get_version)\n"
            "  -l           an untimed barrier before every timed rep of\n"
            "               fence, fence_collect_rep, connect, disconnect,\n"
            "               group_construct, group_destruct, and between the\n"
            "               modex fence and its gets\n"
            "  --header     print the CSV header line (default)\n"
            "  --no-header  do not print it\n"
            "  -v           also print '#' comment lines with details\n"
            "Rank 0 prints impl,N,S,phase,reps,min_us,median_us,max_us, one "
            "line per phase;\nmin/median/max are over ranks; a phase the "
            "host does not support\nhas reps 0 and '" UNSUPPORTED
            "' in the last three columns.\n");
}

static int parse_size(const char *arg, size_t max, size_t *val_p)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v     = strtoull(arg, &end, 10);
    if ((errno != 0) || (end == arg) || (*end != '\0') || (arg[0] == '-')
        || (v > max)) {
        return -1;
    }
    *val_p = (size_t)v;
    return 0;
}

/* "fence,group" -> PHASES_FENCE | PHASES_GROUP; 0 if a name is unknown */
static unsigned parse_phases(const char *arg)
{
    static const struct {
        const char *name;
        unsigned bits;
    } names[]       = {{"fence", PHASES_FENCE},       {"modex", PHASES_MODEX},
                       {"connect", PHASES_CONNECT},   {"group", PHASES_GROUP},
                       {"modex_rep", PHASES_MODEX_K}, {"all", PHASES_ALL}};
    unsigned phases = 0;
    const char *p   = arg;

    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        size_t i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if ((strlen(names[i].name) == len)
                && (strncmp(p, names[i].name, len) == 0)) {
                break;
            }
        }
        if (i == sizeof(names) / sizeof(names[0])) {
            return 0;
        }
        phases |= names[i].bits;
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    return phases;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
    static const struct option longopts[] = {
        {"header", no_argument, NULL, 'H'},
        {"no-header", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    size_t v;
    int c;

    opt->size    = 8;
    opt->reps    = 10;
    opt->mode    = MODE_COLLECT;
    opt->phases  = PHASES_ALL;
    opt->impl    = NULL;
    opt->header  = true;
    opt->verbose = false;
    opt->line_up = false;

    while ((c = getopt_long(argc, argv, "s:k:m:p:i:lvh", longopts, NULL))
           != -1) {
        switch (c) {
        case 's':
            /* 1 GiB is far beyond what a modex should carry */
            if (parse_size(optarg, (size_t)1 << 30, &opt->size) != 0) {
                fprintf(stderr, "pmix-bench: bad -s '%s'\n", optarg);
                return -1;
            }
            break;
        case 'k':
            if (parse_size(optarg, 1000000, &v) != 0) {
                fprintf(stderr, "pmix-bench: bad -k '%s'\n", optarg);
                return -1;
            }
            opt->reps = (unsigned)v;
            break;
        case 'm':
            if (strcmp(optarg, "collect") == 0) {
                opt->mode = MODE_COLLECT;
            } else if (strcmp(optarg, "direct") == 0) {
                opt->mode = MODE_DIRECT;
            } else {
                fprintf(stderr, "pmix-bench: bad -m '%s'\n", optarg);
                return -1;
            }
            break;
        case 'p':
            opt->phases = parse_phases(optarg);
            if (opt->phases == 0) {
                fprintf(stderr, "pmix-bench: bad -p '%s'\n", optarg);
                return -1;
            }
            break;
        case 'i':
            if (strpbrk(optarg, ",\n") != NULL || optarg[0] == '\0') {
                fprintf(stderr, "pmix-bench: -i needs a name without ','\n");
                return -1;
            }
            opt->impl = optarg;
            break;
        case 'H':
            opt->header = true;
            break;
        case 'N':
            opt->header = false;
            break;
        case 'v':
            opt->verbose = true;
            break;
        case 'l':
            opt->line_up = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "pmix-bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    return 0;
}

/* minor page faults of this process so far (first touches of fresh pages:
 * the load-independent part of the modex's memory cost) */
static long minflt_now(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/* sorts @a v in place; median of an even count is the mean of the middle two */
static double median(double *v, size_t n)
{
    if (n == 0) {
        return 0.0;
    }
    qsort(v, n, sizeof(*v), cmp_double);
    if ((n % 2) == 1) {
        return v[n / 2];
    }
    return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* splitmix64: a fixed, well-mixed sequence per rank */
static uint64_t mix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* the bytes rank @a rank puts: a function of the rank and the offset only */
static void fill_payload(char *buf, size_t size, pmix_rank_t rank)
{
    uint64_t state = ((uint64_t)rank << 32) ^ 0x706d6978ull;
    size_t i;

    /* a word at a time: under oversubscription the ranks that finish
     * early run this while others are still being timed */
    for (i = 0; i + 8 <= size; i += 8) {
        uint64_t word = mix64(&state);
        memcpy(buf + i, &word, 8);
    }
    if (i < size) {
        uint64_t word = mix64(&state);
        memcpy(buf + i, &word, size - i);
    }
}

static void fail(const char *what, pmix_status_t status)
{
    fprintf(stderr, "pmix-bench: rank %" PRIu32 ": %s failed: %s (%d)\n",
            myproc.rank, what, PMIx_Error_string(status), (int)status);
}

/*
 * After a PMIx call failed: exit without PMIx_Finalize, so the launcher
 * sees a process that died before finalizing and ends the whole job
 * instead of leaving the other ranks in a fence.
 */
static void die(void)
{
    fflush(stdout);
    exit(EXIT_FAIL);
}

static pmix_status_t fence(bool collect)
{
    pmix_info_t info;
    bool flag = true;
    pmix_status_t status;

    if (!collect) {
        return PMIx_Fence(NULL, 0, NULL, 0);
    }
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    status = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return status;
}

static pmix_status_t put_bytes(const char *key, const void *bytes, size_t size)
{
    pmix_value_t val;

    /* PMIx_Put copies the value; the caller keeps the bytes */
    memset(&val, 0, sizeof(val));
    val.type          = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)bytes;
    val.data.bo.size  = size;
    return PMIx_Put(PMIX_GLOBAL, key, &val);
}

static pmix_status_t get_job_size(uint32_t *size_p)
{
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_status_t status;

    PMIX_LOAD_PROCID(&wild, myproc.nspace, PMIX_RANK_WILDCARD);
    status = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Get(" PMIX_JOB_SIZE ")", status);
        return status;
    }
    if (val == NULL) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": " PMIX_JOB_SIZE
                " returned no value\n",
                myproc.rank);
        return PMIX_ERR_NOT_FOUND;
    }
    if (val->type != PMIX_UINT32) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": " PMIX_JOB_SIZE
                " has type %u, expected PMIX_UINT32 (%u)\n",
                myproc.rank, (unsigned)val->type, (unsigned)PMIX_UINT32);
        PMIX_VALUE_RELEASE(val);
        return PMIX_ERR_TYPE_MISMATCH;
    }
    *size_p = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if ((*size_p == 0) || (myproc.rank >= *size_p)) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": job size %" PRIu32
                " does not hold my rank\n",
                myproc.rank, *size_p);
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

/*
 * Check the value rank @a peer put; @a expect is scratch of @a size bytes.
 * Returns true if it is exactly the bytes fill_payload() makes for @a peer.
 */
static bool verify_payload(const pmix_value_t *val, pmix_rank_t peer,
                           size_t size, char *expect)
{
    size_t i;

    if (val == NULL) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": PMIx_Get returned no value "
                "for rank %" PRIu32 "\n",
                myproc.rank, peer);
        return false;
    }
    if (val->type != PMIX_BYTE_OBJECT) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": key from rank %" PRIu32
                " has type %u, expected PMIX_BYTE_OBJECT\n",
                myproc.rank, peer, (unsigned)val->type);
        return false;
    }
    if (val->data.bo.size != size) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": key from rank %" PRIu32
                " has %zu bytes, expected %zu\n",
                myproc.rank, peer, val->data.bo.size, size);
        return false;
    }
    if (size == 0) {
        return true;
    }
    fill_payload(expect, size, peer);
    if ((val->data.bo.bytes != NULL)
        && (memcmp(val->data.bo.bytes, expect, size) == 0)) {
        return true;
    }
    for (i = 0; (val->data.bo.bytes != NULL) && (i < size); i++) {
        if (val->data.bo.bytes[i] != expect[i]) {
            break;
        }
    }
    fprintf(stderr,
            "pmix-bench: rank %" PRIu32 ": key from rank %" PRIu32
            " differs at byte %zu of %zu\n",
            myproc.rank, peer, i, size);
    return false;
}

/* untimed: every rank leaves it at about the same time, so the next
 * phase starts together */
static void line_up(const char *before)
{
    pmix_status_t status = fence(false);

    if (status != PMIX_SUCCESS) {
        fprintf(stderr,
                "pmix-bench: rank %" PRIu32 ": PMIx_Fence (before %s) "
                "failed: %s (%d)\n",
                myproc.rank, before, PMIx_Error_string(status), (int)status);
        die();
    }
}

/* -l: every rank starts the timed rep that follows together, so no
 * rep's time holds the skew the previous call left (a construct releases
 * its members one after the other, and a destruct right after it waits
 * for the last) */
static void rep_line_up(const struct options *opt, const char *before)
{
    if (opt->line_up) {
        line_up(before);
    }
}

static double *alloc_reps(unsigned reps)
{
    double *us = calloc(reps > 0 ? reps : 1, sizeof(*us));

    if (us == NULL) {
        fprintf(stderr, "pmix-bench: rank %" PRIu32 ": out of memory\n",
                myproc.rank);
        die();
    }
    return us;
}

/* K barriers; with K = 0 one untimed, still lining the ranks up */
static void run_barrier(const struct options *opt, struct report *rep)
{
    double *fence_us = alloc_reps(opt->reps);
    pmix_status_t status;
    double t0;
    unsigned k;

    for (k = 0; k < opt->reps; k++) {
        rep_line_up(opt, "a barrier");
        t0     = now_us();
        status = fence(false);
        if (status != PMIX_SUCCESS) {
            fail("PMIx_Fence (barrier)", status);
            die();
        }
        fence_us[k] = now_us() - t0;
    }
    if (opt->reps == 0) {
        line_up("the modex");
    }
    rep->us[SLOT_FENCE] = median(fence_us, opt->reps);
    rep->fence_min      = opt->reps > 0 ? fence_us[0] : 0.0;
    rep->fence_max      = opt->reps > 0 ? fence_us[opt->reps - 1] : 0.0;
    rep->ran |= 1u << SLOT_FENCE;
    free(fence_us);
}

/* put + commit of the S-byte key, timed into the put and commit slots
 * when @a timed */
static void put_and_commit(const struct options *opt, char *buf, bool timed,
                           struct report *rep)
{
    pmix_status_t status;
    double t0;

    fill_payload(buf, opt->size, myproc.rank);
    t0     = now_us();
    status = put_bytes(DATA_KEY, buf, opt->size);
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Put", status);
        die();
    }
    rep->us[SLOT_PUT] = now_us() - t0;

    t0     = now_us();
    status = PMIx_Commit();
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Commit", status);
        die();
    }
    rep->us[SLOT_COMMIT] = now_us() - t0;
    if (timed) {
        rep->ran |= (1u << SLOT_PUT) | (1u << SLOT_COMMIT);
    }
}

/* fence (with or without collecting), then a get from every rank, whose
 * bytes are checked once every rank is done getting */
static void run_modex(const struct options *opt, uint32_t nprocs, char *buf,
                      struct report *rep)
{
    pmix_value_t **vals = calloc(nprocs, sizeof(*vals));
    pmix_proc_t peer;
    pmix_status_t status;
    double t0;
    long f0;
    uint32_t r;

    if (vals == NULL) {
        fprintf(stderr, "pmix-bench: rank %" PRIu32 ": out of memory\n",
                myproc.rank);
        die();
    }
    f0     = minflt_now();
    t0     = now_us();
    status = fence(opt->mode == MODE_COLLECT);
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Fence (modex)", status);
        die();
    }
    rep->us[SLOT_MODEX] = now_us() - t0;
    rep->modex_minflt   = minflt_now() - f0;
    /* -l: no rank gets (fresh pages for every copy, CPU-heavy at 64 KiB)
     * while another is still inside its timed fence; on a machine with
     * fewer CPUs than ranks that fence's time is otherwise the getters' */
    rep_line_up(opt, "the gets");

    PMIX_LOAD_NSPACE(peer.nspace, myproc.nspace);
    f0 = minflt_now();
    t0 = now_us();
    for (r = 0; r < nprocs; r++) {
        peer.rank = r;
        status    = PMIx_Get(&peer, DATA_KEY, NULL, 0, &vals[r]);
        if (status != PMIX_SUCCESS) {
            fprintf(stderr,
                    "pmix-bench: rank %" PRIu32 ": PMIx_Get(%s) from rank "
                    "%" PRIu32 " failed: %s (%d)\n",
                    myproc.rank, DATA_KEY, r, PMIx_Error_string(status),
                    (int)status);
            die();
        }
    }
    rep->us[SLOT_GET] = now_us() - t0;
    rep->get_minflt   = minflt_now() - f0;
    rep->ran |= (1u << SLOT_MODEX) | (1u << SLOT_GET);

    /* no rank checks bytes (CPU-heavy at 64 KiB) while another is still
     * inside a timed phase */
    line_up("verification");
    for (r = 0; r < nprocs; r++) {
        if (!verify_payload(vals[r], r, opt->size, buf)) {
            rep->errors++;
        }
        if (vals[r] != NULL) {
            PMIX_VALUE_RELEASE(vals[r]);
        }
    }
    free(vals);
}

/*
 * K x (put the same S bytes again, commit, fence with collect), only the
 * fence timed: the collecting fence measured like the connect and group
 * phases (median of K), where fence_collect is a single call.  The key
 * and its bytes never change, so OpenPMIx's re-sent keys and stale
 * overwritten values (README, "Fairness") change nothing here.
 */
static void run_modex_reps(const struct options *opt, char *buf,
                           struct report *rep)
{
    double *us = alloc_reps(opt->reps);
    pmix_status_t status;
    double t0;
    unsigned k;

    fill_payload(buf, opt->size, myproc.rank);
    line_up("fence_collect_rep");
    for (k = 0; k < opt->reps; k++) {
        status = put_bytes(DATA_KEY, buf, opt->size);
        if (status == PMIX_SUCCESS) {
            status = PMIx_Commit();
        }
        if (status != PMIX_SUCCESS) {
            fail("PMIx_Put/PMIx_Commit (fence_collect_rep)", status);
            die();
        }
        rep_line_up(opt, "fence_collect_rep");
        t0     = now_us();
        status = fence(true);
        if (status != PMIX_SUCCESS) {
            fail("PMIx_Fence (fence_collect_rep)", status);
            die();
        }
        us[k] = now_us() - t0;
    }
    rep->us[SLOT_MODEX_REP] = median(us, opt->reps);
    rep->ran |= 1u << SLOT_MODEX_REP;
    free(us);
}

/*
 * One timed pair of collectives (connect + disconnect, construct +
 * destruct), K times.  @a make and @a unmake run rep k; a
 * PMIX_ERR_NOT_SUPPORTED from @a make at the first rep marks both slots
 * unsupported and ends the phase, any other failure ends the program.
 */
typedef pmix_status_t (*pair_call_fn)(unsigned rep);

static void run_pair(const struct options *opt, pair_call_fn make,
                     const char *make_name, pair_call_fn unmake,
                     const char *unmake_name, enum slot make_slot,
                     enum slot unmake_slot, struct report *rep)
{
    double *make_us   = alloc_reps(opt->reps);
    double *unmake_us = alloc_reps(opt->reps);
    uint32_t bits     = (1u << make_slot) | (1u << unmake_slot);
    pmix_status_t status;
    double t0;
    unsigned k;

    line_up(make_name);
    for (k = 0; k < opt->reps; k++) {
        rep_line_up(opt, make_name);
        t0     = now_us();
        status = make(k);
        if ((status == PMIX_ERR_NOT_SUPPORTED) && (k == 0)) {
            rep->unsupported |= bits;
            break;
        }
        if (status != PMIX_SUCCESS) {
            fail(make_name, status);
            die();
        }
        make_us[k] = now_us() - t0;

        rep_line_up(opt, unmake_name);
        t0     = now_us();
        status = unmake(k);
        if (status != PMIX_SUCCESS) {
            fail(unmake_name, status);
            die();
        }
        unmake_us[k] = now_us() - t0;
    }
    rep->us[make_slot]   = median(make_us, k);
    rep->us[unmake_slot] = median(unmake_us, k);
    rep->ran |= bits;
    free(make_us);
    free(unmake_us);
}

/* the whole job: this nspace, wildcard rank */
static void whole_job(pmix_proc_t *job)
{
    PMIX_LOAD_PROCID(job, myproc.nspace, PMIX_RANK_WILDCARD);
}

static pmix_status_t connect_job(unsigned rep)
{
    pmix_proc_t job;

    (void)rep;
    whole_job(&job);
    return PMIx_Connect(&job, 1, NULL, 0);
}

static pmix_status_t disconnect_job(unsigned rep)
{
    pmix_proc_t job;

    (void)rep;
    whole_job(&job);
    return PMIx_Disconnect(&job, 1, NULL, 0);
}

/* a fresh id per rep: the previous group is gone, but a new id keeps
 * the reps independent of how a host recycles ids */
static void group_id(unsigned rep, char *id, size_t len)
{
    snprintf(id, len, "pb-%u", rep);
}

static pmix_status_t construct_group(unsigned rep)
{
    pmix_info_t *results = NULL;
    size_t nresults      = 0;
    pmix_info_t info;
    pmix_proc_t job;
    bool flag = true;
    char id[32];
    pmix_status_t status;

    group_id(rep, id, sizeof(id));
    whole_job(&job);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_GROUP_ASSIGN_CONTEXT_ID, &flag, PMIX_BOOL);
    status = PMIx_Group_construct(id, &job, 1, &info, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&info);
    if (results != NULL) {
        PMIX_INFO_FREE(results, nresults);
    }
    return status;
}

static pmix_status_t destruct_group(unsigned rep)
{
    char id[32];

    group_id(rep, id, sizeof(id));
    return PMIx_Group_destruct(id, NULL, 0);
}

/* the timed phases after init, in the order of the CSV */
static void run_phases(const struct options *opt, uint32_t nprocs,
                       struct report *rep)
{
    char *buf = malloc(opt->size > 0 ? opt->size : 1);

    if (buf == NULL) {
        fprintf(stderr, "pmix-bench: rank %" PRIu32 ": out of memory\n",
                myproc.rank);
        die();
    }
    if (opt->phases & PHASES_FENCE) {
        run_barrier(opt, rep);
    } else {
        line_up("the modex");
    }
    if (opt->phases & PHASES_MODEX) {
        put_and_commit(opt, buf, true, rep);
        run_modex(opt, nprocs, buf, rep);
    } else if (opt->phases & PHASES_GROUP) {
        /* a construct hands out the committed data: commit it all the same */
        put_and_commit(opt, buf, false, rep);
    }
    if (opt->phases & PHASES_MODEX_K) {
        run_modex_reps(opt, buf, rep);
    }
    if (opt->phases & PHASES_CONNECT) {
        run_pair(opt, connect_job, "PMIx_Connect", disconnect_job,
                 "PMIx_Disconnect", SLOT_CONNECT, SLOT_DISCONNECT, rep);
    }
    if (opt->phases & PHASES_GROUP) {
        run_pair(opt, construct_group, "PMIx_Group_construct", destruct_group,
                 "PMIx_Group_destruct", SLOT_GRP_CONSTRUCT, SLOT_GRP_DESTRUCT,
                 rep);
    }
    free(buf);
}

/* impl column: -i NAME, else PMIx_Get_version() up to " (", CSV-safe */
static void impl_name(const struct options *opt, char *name, size_t len)
{
    const char *src = opt->impl != NULL ? opt->impl : PMIx_Get_version();
    const char *cut = strstr(src, " (");
    size_t n        = cut != NULL ? (size_t)(cut - src) : strlen(src);
    size_t i;

    if (n >= len) {
        n = len - 1;
    }
    for (i = 0; i < n; i++) {
        char c  = src[i];
        bool ok = ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z'))
                  || ((c >= '0') && (c <= '9')) || (strchr("._+-", c) != NULL);
        name[i] = ok ? c : '-';
    }
    name[n] = '\0';
}

static const char *slot_name(const struct options *opt, int s)
{
    static const char *const names[SLOT_COUNT] = {
        [SLOT_INIT]          = "init",
        [SLOT_FENCE]         = "fence",
        [SLOT_PUT]           = "put",
        [SLOT_COMMIT]        = "commit",
        [SLOT_MODEX]         = "fence_collect",
        [SLOT_GET]           = "get",
        [SLOT_MODEX_REP]     = "fence_collect_rep",
        [SLOT_CONNECT]       = "connect",
        [SLOT_DISCONNECT]    = "disconnect",
        [SLOT_GRP_CONSTRUCT] = "group_construct",
        [SLOT_GRP_DESTRUCT]  = "group_destruct"};

    if ((s == SLOT_MODEX) && (opt->mode == MODE_DIRECT)) {
        return "fence_nocollect";
    }
    return names[s];
}

/* the slots measured K times per rank (their CSV reps column is K) */
static bool slot_repeated(int s)
{
    return (s == SLOT_FENCE) || (s >= SLOT_MODEX_REP);
}

/* -v: every rank's raw timings, one '#' line each */
static void print_details(const struct options *opt, uint32_t nprocs,
                          const struct report *reps)
{
    uint32_t r;
    int s;

    printf("# version: %s\n", PMIx_Get_version());
    printf("# nspace %s, %" PRIu32 " ranks, %zu bytes, %u reps, mode %s\n",
           myproc.nspace, nprocs, opt->size, opt->reps,
           opt->mode == MODE_COLLECT ? "collect" : "direct");
    printf("# rank,fence_min,fence_max,errors,unsupported");
    for (s = 0; s < SLOT_COUNT; s++) {
        printf(",%s", slot_name(opt, s));
    }
    printf(",%s_minflt,get_minflt\n", slot_name(opt, SLOT_MODEX));
    for (r = 0; r < nprocs; r++) {
        const struct report *p = &reps[r];

        printf("# %" PRIu32 ",%.1f,%.1f,%" PRIu32 ",0x%" PRIx32, r,
               p->fence_min, p->fence_max, p->errors, p->unsupported);
        for (s = 0; s < SLOT_COUNT; s++) {
            printf(",%.1f", p->us[s]);
        }
        printf(",%ld,%ld\n", p->modex_minflt, p->get_minflt);
    }
}

static void print_results(const struct options *opt, uint32_t nprocs,
                          const struct report *reps)
{
    uint32_t unsupported = 0;
    char impl[128];
    double *v;
    uint32_t r;
    int s;

    v = malloc(nprocs * sizeof(*v));
    if (v == NULL) {
        fprintf(stderr, "pmix-bench: rank 0: out of memory\n");
        die();
    }
    impl_name(opt, impl, sizeof(impl));
    if (opt->verbose) {
        print_details(opt, nprocs, reps);
    }
    if (opt->header) {
        printf("impl,N,S,phase,reps,min_us,median_us,max_us\n");
    }
    for (r = 0; r < nprocs; r++) {
        unsupported |= reps[r].unsupported;
    }
    for (s = 0; s < SLOT_COUNT; s++) {
        double med;

        /* every rank runs the same options: rank 0's choice is everyone's */
        if (!(reps[0].ran & (1u << s))) {
            continue;
        }
        if (unsupported & (1u << s)) {
            printf("%s,%" PRIu32 ",%zu,%s,0,%s,%s,%s\n", impl, nprocs,
                   opt->size, slot_name(opt, s), UNSUPPORTED, UNSUPPORTED,
                   UNSUPPORTED);
            continue;
        }
        for (r = 0; r < nprocs; r++) {
            v[r] = reps[r].us[s];
        }
        med = median(v, nprocs);
        printf("%s,%" PRIu32 ",%zu,%s,%u,%.1f,%.1f,%.1f\n", impl, nprocs,
               opt->size, slot_name(opt, s), slot_repeated(s) ? opt->reps : 1u,
               v[0], med, v[nprocs - 1]);
    }
    fflush(stdout);
    free(v);
}

/* untimed: publish this rank's report, rank 0 collects everyone's */
static uint32_t gather_reports(const struct options *opt, uint32_t nprocs,
                               const struct report *mine)
{
    struct report *all;
    pmix_value_t *val;
    pmix_proc_t peer;
    pmix_status_t status;
    uint32_t errors = 0;
    uint32_t r;

    status = put_bytes(TIMES_KEY, mine, sizeof(*mine));
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Put(" TIMES_KEY ")", status);
        die();
    }
    status = PMIx_Commit();
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Commit (results)", status);
        die();
    }
    status = fence(true);
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Fence (results)", status);
        die();
    }
    if (myproc.rank != 0) {
        return 0;
    }

    all = calloc(nprocs, sizeof(*all));
    if (all == NULL) {
        fprintf(stderr, "pmix-bench: rank 0: out of memory\n");
        die();
    }
    PMIX_LOAD_NSPACE(peer.nspace, myproc.nspace);
    for (r = 0; r < nprocs; r++) {
        peer.rank = r;
        val       = NULL;
        status    = PMIx_Get(&peer, TIMES_KEY, NULL, 0, &val);
        if (status != PMIX_SUCCESS) {
            fprintf(stderr,
                    "pmix-bench: rank 0: PMIx_Get(%s) from rank %" PRIu32
                    " failed: %s (%d)\n",
                    TIMES_KEY, r, PMIx_Error_string(status), (int)status);
            die();
        }
        if ((val == NULL) || (val->type != PMIX_BYTE_OBJECT)
            || (val->data.bo.size != sizeof(all[r]))
            || (val->data.bo.bytes == NULL)) {
            fprintf(stderr,
                    "pmix-bench: rank 0: results of rank %" PRIu32
                    " are malformed\n",
                    r);
            die();
        }
        memcpy(&all[r], val->data.bo.bytes, sizeof(all[r]));
        PMIX_VALUE_RELEASE(val);
        if (all[r].magic != REPORT_MAGIC) {
            fprintf(stderr,
                    "pmix-bench: rank 0: results of rank %" PRIu32
                    " are malformed (bad magic)\n",
                    r);
            die();
        }
        if (all[r].errors != 0) {
            fprintf(stderr,
                    "pmix-bench: rank %" PRIu32 " read %" PRIu32
                    " corrupt value(s)\n",
                    r, all[r].errors);
        }
        errors += all[r].errors;
    }
    print_results(opt, nprocs, all);
    free(all);
    return errors;
}

int main(int argc, char **argv)
{
    struct options opt;
    struct report rep;
    pmix_status_t status;
    uint32_t nprocs;
    uint32_t errors;
    double t0;

    if (parse_options(argc, argv, &opt) != 0) {
        return EXIT_FAIL;
    }
    memset(&rep, 0, sizeof(rep));
    rep.magic = REPORT_MAGIC;

    t0     = now_us();
    status = PMIx_Init(&myproc, NULL, 0);
    if (status != PMIX_SUCCESS) {
        fprintf(stderr, "pmix-bench: PMIx_Init failed: %s (%d)\n",
                PMIx_Error_string(status), (int)status);
        return EXIT_FAIL;
    }
    rep.us[SLOT_INIT] = now_us() - t0;
    rep.ran |= 1u << SLOT_INIT;

    if (get_job_size(&nprocs) != PMIX_SUCCESS) {
        die();
    }
    run_phases(&opt, nprocs, &rep);
    errors = gather_reports(&opt, nprocs, &rep);

    status = PMIx_Finalize(NULL, 0);
    if (status != PMIX_SUCCESS) {
        fail("PMIx_Finalize", status);
        return EXIT_FAIL;
    }
    if ((rep.errors != 0) || (errors != 0)) {
        return EXIT_VERIFY;
    }
    return 0;
}
