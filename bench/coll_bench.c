/* coll_bench.c - allgather latency of the collective engine over UCX */
#include "config.h"

#include <pmix.h>

#include "coll/coll.h"
#include "core/loop/loop.h"
#include "ucx/ucx.h"

#include "bench/allgather_common.h"
#include "tests/unit/test_ucx_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * One process of an M-process run; a script starts all M (bench/
 * engine_compare.sh):
 *
 *   coll-bench -i INDEX -n M -d DIR [options]
 *
 * Each process is one "server": a loop thread owning a UCX transport
 * (src/ucx) and a collective engine (src/coll), exactly as rdpmixd runs
 * them.  Bootstrap is a small TCP rendezvous on 127.0.0.1: process 0
 * listens on an ephemeral port and publishes it in DIR/port (DIR must be
 * a fresh directory per run); the others connect, send their worker
 * address, and receive the address table and a random per-run session
 * key.  The same connections later carry the barriers between algorithms
 * and the timings (native byte order: one machine only).
 *
 * For every algorithm (an engine forced to it, or AUTO) and every block
 * size, W warm-up + R timed iterations of: fill the block, engine barrier
 * (dissemination), t0, engine allgather of `size` bytes per process, t1,
 * check the blocks (bench/allgather_common.h describes the method and
 * the statistics).  Process 0 prints the CSV.  The completion callbacks
 * chain the iterations on the loop thread, so no thread hand-off is timed.
 */

#define RDV_MAGIC     0x52445642u /* "BVDR" */
#define RDV_BARRIER   0x42415252u
#define RDV_GATHER    0x47415448u
#define RDV_MAX_ADDR  4096u
#define RDV_MAX_PROCS 4096u

typedef struct bench bench_t;

/* ---- the TCP rendezvous (main thread, blocking with a deadline) ---- */

typedef struct oob {
    uint32_t me;
    uint32_t n;
    double deadline_len; /* seconds each exchange may take */
    int *fds;            /* root: fds[i] for i > 0; others: fds[0] */
} oob_t;

static int oob_io(int fd, void *buf, size_t len, int sending, double secs)
{
    uint8_t *p     = buf;
    double end     = rdp_time_now() + secs;
    const char *op = sending ? "send" : "recv";

    while (len > 0) {
        struct pollfd pfd = {fd, sending ? POLLOUT : POLLIN, 0};
        double left       = end - rdp_time_now();
        ssize_t r;
        int pr;

        if (left <= 0) {
            fprintf(stderr, "coll-bench: rendezvous %s timed out\n", op);
            return -1;
        }
        pr = poll(&pfd, 1, (int)(left * 1000.0) + 1);
        if (pr < 0 && errno == EINTR) {
            continue;
        }
        if (pr < 0) {
            fprintf(stderr, "coll-bench: poll: %m\n");
            return -1;
        }
        if (pr == 0) {
            continue;
        }
        r = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (r < 0) {
            fprintf(stderr, "coll-bench: rendezvous %s: %m\n", op);
            return -1;
        }
        if (r == 0) {
            fprintf(stderr, "coll-bench: rendezvous peer closed\n");
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int oob_send(oob_t *o, int fd, const void *buf, size_t len)
{
    return oob_io(fd, (void *)buf, len, 1, o->deadline_len);
}

static int oob_recv(oob_t *o, int fd, void *buf, size_t len)
{
    return oob_io(fd, buf, len, 0, o->deadline_len);
}

static int write_port_file(const char *dir, unsigned port)
{
    char tmp[4096], path[4096];
    FILE *f;

    if ((size_t)snprintf(path, sizeof(path), "%s/port", dir) >= sizeof(path)
        || (size_t)snprintf(tmp, sizeof(tmp), "%s/port.tmp", dir)
               >= sizeof(tmp)) {
        fprintf(stderr, "coll-bench: directory name too long\n");
        return -1;
    }
    if (access(path, F_OK) == 0) {
        fprintf(stderr, "coll-bench: %s exists: use a fresh directory\n", path);
        return -1;
    }
    f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "coll-bench: cannot write %s: %m\n", tmp);
        return -1;
    }
    fprintf(f, "%u\n", port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "coll-bench: cannot publish %s: %m\n", path);
        return -1;
    }
    return 0;
}

static int read_port_file(const char *dir, double secs, unsigned *port_p)
{
    char path[4096];
    double end = rdp_time_now() + secs;

    if ((size_t)snprintf(path, sizeof(path), "%s/port", dir) >= sizeof(path)) {
        fprintf(stderr, "coll-bench: directory name too long\n");
        return -1;
    }
    while (rdp_time_now() < end) {
        FILE *f            = fopen(path, "r");
        struct timespec ts = {0, 10 * 1000 * 1000};

        if (f != NULL) {
            unsigned port = 0;
            int ok        = (fscanf(f, "%u", &port) == 1);

            fclose(f);
            if (!ok || port == 0 || port > 65535) {
                fprintf(stderr, "coll-bench: bad port in %s\n", path);
                return -1;
            }
            *port_p = port;
            return 0;
        }
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "coll-bench: no %s after %.0f s (is process 0 up?)\n", path,
            secs);
    return -1;
}

static int oob_listen(const char *dir, int *fd_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen       = sizeof(sa);
    int fd;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "coll-bench: socket: %m\n");
        return -1;
    }
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || listen(fd, 128) != 0
        || getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        fprintf(stderr, "coll-bench: cannot listen on 127.0.0.1: %m\n");
        close(fd);
        return -1;
    }
    if (write_port_file(dir, ntohs(sa.sin_port)) != 0) {
        close(fd);
        return -1;
    }
    *fd_p = fd;
    return 0;
}

static int oob_connect(const char *dir, double secs, int *fd_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    double end            = rdp_time_now() + secs;
    unsigned port;

    if (read_port_file(dir, secs, &port) != 0) {
        return -1;
    }
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port        = htons((uint16_t)port);
    while (rdp_time_now() < end) {
        int fd             = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one            = 1;
        struct timespec ts = {0, 10 * 1000 * 1000};

        if (fd < 0) {
            fprintf(stderr, "coll-bench: socket: %m\n");
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            *fd_p = fd;
            return 0;
        }
        if (errno != ECONNREFUSED && errno != EINTR) {
            fprintf(stderr, "coll-bench: connect to port %u: %m\n", port);
            close(fd);
            return -1;
        }
        close(fd);
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "coll-bench: cannot connect to process 0\n");
    return -1;
}

/* What every process learns at bootstrap. */
typedef struct table {
    uint8_t key[RDP_UCX_KEY_LEN];
    uint8_t *addrs[RDV_MAX_PROCS];
    uint32_t lens[RDV_MAX_PROCS];
} table_t;

/* Root: accept n-1 hellos {magic, index, n, len, addr}, fill @a t. */
static int oob_root_accept(oob_t *o, int lfd, table_t *t)
{
    for (uint32_t got = 1; got < o->n; got++) {
        struct pollfd pfd = {lfd, POLLIN, 0};
        uint32_t hello[4];
        int fd, one = 1;

        if (poll(&pfd, 1, (int)(o->deadline_len * 1000.0)) <= 0) {
            fprintf(stderr, "coll-bench: %u of %u processes arrived\n", got,
                    o->n);
            return -1;
        }
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "coll-bench: accept: %m\n");
            return -1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (oob_recv(o, fd, hello, sizeof(hello)) != 0) {
            close(fd);
            return -1;
        }
        if (hello[0] != RDV_MAGIC || hello[2] != o->n || hello[1] == 0
            || hello[1] >= o->n || o->fds[hello[1]] >= 0 || hello[3] == 0
            || hello[3] > RDV_MAX_ADDR) {
            fprintf(stderr,
                    "coll-bench: bad hello (index %u of %u, address %u "
                    "bytes): two runs sharing a directory?\n",
                    hello[1], hello[2], hello[3]);
            close(fd);
            return -1;
        }
        o->fds[hello[1]]   = fd;
        t->lens[hello[1]]  = hello[3];
        t->addrs[hello[1]] = malloc(hello[3]);
        if (t->addrs[hello[1]] == NULL
            || oob_recv(o, fd, t->addrs[hello[1]], hello[3]) != 0) {
            return -1;
        }
    }
    if (getrandom(t->key, sizeof(t->key), 0) != (ssize_t)sizeof(t->key)) {
        fprintf(stderr, "coll-bench: getrandom: %m\n");
        return -1;
    }
    for (uint32_t i = 1; i < o->n; i++) {
        if (oob_send(o, o->fds[i], t->key, sizeof(t->key)) != 0) {
            return -1;
        }
        for (uint32_t j = 0; j < o->n; j++) {
            if (oob_send(o, o->fds[i], &t->lens[j], sizeof(t->lens[j])) != 0
                || oob_send(o, o->fds[i], t->addrs[j], t->lens[j]) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int oob_leaf_join(oob_t *o, table_t *t)
{
    uint32_t hello[4] = {RDV_MAGIC, o->me, o->n, t->lens[o->me]};
    int fd            = o->fds[0];

    if (oob_send(o, fd, hello, sizeof(hello)) != 0
        || oob_send(o, fd, t->addrs[o->me], t->lens[o->me]) != 0
        || oob_recv(o, fd, t->key, sizeof(t->key)) != 0) {
        return -1;
    }
    for (uint32_t j = 0; j < o->n; j++) {
        uint32_t len;

        if (oob_recv(o, fd, &len, sizeof(len)) != 0) {
            return -1;
        }
        if (len == 0 || len > RDV_MAX_ADDR) {
            fprintf(stderr, "coll-bench: bad address table\n");
            return -1;
        }
        if (j == o->me) {
            uint8_t skip[RDV_MAX_ADDR];

            if (oob_recv(o, fd, skip, len) != 0) {
                return -1;
            }
            continue;
        }
        t->lens[j]  = len;
        t->addrs[j] = malloc(len);
        if (t->addrs[j] == NULL || oob_recv(o, fd, t->addrs[j], len) != 0) {
            return -1;
        }
    }
    return 0;
}

/**
 * Gather @a cnt doubles from every process into @a all (root: n * cnt,
 * row p from process p; others: NULL), then release everybody: also a
 * barrier.  cnt 0 is a plain barrier.
 */
static int oob_gather(oob_t *o, uint32_t tag, const double *mine, uint32_t cnt,
                      double *all)
{
    uint32_t hdr[2] = {tag, cnt};

    if (o->me != 0) {
        uint32_t ack;

        if (oob_send(o, o->fds[0], hdr, sizeof(hdr)) != 0
            || (cnt > 0
                && oob_send(o, o->fds[0], mine, cnt * sizeof(double)) != 0)
            || oob_recv(o, o->fds[0], &ack, sizeof(ack)) != 0) {
            return -1;
        }
        if (ack != tag) {
            fprintf(stderr, "coll-bench: rendezvous out of step\n");
            return -1;
        }
        return 0;
    }
    if (cnt > 0) {
        memcpy(all, mine, cnt * sizeof(double));
    }
    for (uint32_t p = 1; p < o->n; p++) {
        uint32_t got[2];

        if (oob_recv(o, o->fds[p], got, sizeof(got)) != 0) {
            return -1;
        }
        if (got[0] != tag || got[1] != cnt) {
            fprintf(stderr, "coll-bench: process %u is out of step\n", p);
            return -1;
        }
        if (cnt > 0
            && oob_recv(o, o->fds[p], all + (size_t)p * cnt,
                        cnt * sizeof(double))
                   != 0) {
            return -1;
        }
    }
    for (uint32_t p = 1; p < o->n; p++) {
        if (oob_send(o, o->fds[p], &tag, sizeof(tag)) != 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- the engine side (loop thread) ---- */

struct bench {
    uint32_t me;
    uint32_t n;
    rdp_loop_t *loop;
    ucx_boot_t boot;
    rdp_coll_engine_t *engine;
    enum rdp_coll_alg alg; /* engine config for the next create */
    pmix_status_t status;  /* of the last loop job */
    uint32_t *parts;       /* 0..n-1 */
    uint64_t opid;
    double timeout;
    int check_all;
    bool open_payload; /* -O: payloads without a MAC (trust the fabric) */
    table_t *table;
};

typedef struct series {
    bench_t *b;
    uint32_t sid; /* series number, part of the payload pattern */
    size_t size;
    unsigned warm;
    unsigned total; /* warm + reps */
    unsigned iter;
    uint8_t *sbuf; /* my block for this iteration, handed to the engine */
    double t0;
    double *times; /* reps */
    double *t0s;   /* reps: absolute t0 (COLL_BENCH_SKEW), or NULL */
    enum rdp_coll_alg picked;
    pmix_status_t status;
    char err[256];
    rdp_wait_t done;
} series_t;

static void iter_start(void *arg);

static void series_end(series_t *s, pmix_status_t status)
{
    s->status = status;
    rdp_wait_signal(&s->done, status);
}

static void series_fail(series_t *s, pmix_status_t status, const char *what)
{
    snprintf(s->err, sizeof(s->err), "%s: %s", what, PMIx_Error_string(status));
    series_end(s, status);
}

static void allgather_done(const rdp_coll_result_t *res, void *arg)
{
    series_t *s = arg;
    bench_t *b  = s->b;
    double t1   = rdp_time_now();
    int full    = ag_full_check(s->iter, s->total, b->check_all);

    if (res->status != PMIX_SUCCESS) {
        series_fail(s, res->status, "allgather");
        return;
    }
    if (res->nblocks != b->n) {
        snprintf(s->err, sizeof(s->err), "allgather gave %u blocks, not %u",
                 res->nblocks, b->n);
        series_end(s, PMIX_ERROR);
        return;
    }
    for (uint32_t i = 0; i < b->n; i++) {
        const rdp_coll_block_t *blk = &res->blocks[i];
        size_t bad;

        if (blk->origin != i || blk->len != s->size) {
            snprintf(s->err, sizeof(s->err),
                     "block %u has origin %u and %llu bytes (want %u, %zu)", i,
                     blk->origin, (unsigned long long)blk->len, i, s->size);
            series_end(s, PMIX_ERROR);
            return;
        }
        bad = ag_check(blk->data, s->size, ag_seed(i, s->sid, s->iter), full);
        if (bad != s->size) {
            snprintf(s->err, sizeof(s->err),
                     "block from %u differs at byte %zu of %zu (iteration "
                     "%u)",
                     i, bad, s->size, s->iter);
            series_end(s, PMIX_ERROR);
            return;
        }
    }
    if (s->iter >= s->warm) {
        s->times[s->iter - s->warm] = t1 - s->t0;
        if (s->t0s != NULL) {
            s->t0s[s->iter - s->warm] = s->t0;
        }
    }
    s->picked = res->alg;
    s->iter++;
    if (s->iter == s->total) {
        series_end(s, PMIX_SUCCESS);
        return;
    }
    iter_start(s);
}

static void barrier_done(const rdp_coll_result_t *res, void *arg)
{
    series_t *s = arg;
    bench_t *b  = s->b;
    rdp_coll_args_t args;
    pmix_status_t st;

    if (res->status != PMIX_SUCCESS) {
        series_fail(s, res->status, "barrier");
        return;
    }
    args = (rdp_coll_args_t){
        .kind   = RDP_COLL_ALLGATHER,
        .opid   = ++b->opid,
        .parts  = b->parts,
        .nparts = b->n,
        /* as a server does: the block packed behind the engine's
         * headroom and handed over, never copied */
        .own_buf = s->sbuf,
        .len     = s->size,
        /* what a server passes in steady state: the class of the previous
         * result over the same servers, i.e. of this same size */
        .size_class = rdp_coll_size_class_of((uint64_t)s->size * b->n, b->n),
        .timeout    = b->timeout,
        .open_payload = b->open_payload,
    };
    s->sbuf = NULL; /* the engine's now */
    s->t0   = rdp_time_now();
    st      = rdp_coll_start(b->engine, &args, allgather_done, s);
    if (st != PMIX_SUCCESS) {
        series_fail(s, st, "allgather start");
    }
}

/* Loop thread: fill my block, then the untimed barrier. */
static void iter_start(void *arg)
{
    series_t *s = arg;
    bench_t *b  = s->b;
    rdp_coll_args_t args;
    pmix_status_t st;

    free(s->sbuf); /* left over if the previous barrier failed */
    s->sbuf = malloc(RDP_COLL_HEADROOM + s->size);
    if (s->sbuf == NULL) {
        series_fail(s, PMIX_ERR_NOMEM, "block allocation");
        return;
    }
    ag_fill(s->sbuf + RDP_COLL_HEADROOM, s->size,
            ag_seed(b->me, s->sid, s->iter));
    args = (rdp_coll_args_t){
        .kind    = RDP_COLL_BARRIER,
        .opid    = ++b->opid,
        .parts   = b->parts,
        .nparts  = b->n,
        .timeout = b->timeout,
    };
    st = rdp_coll_start(b->engine, &args, barrier_done, s);
    if (st != PMIX_SUCCESS) {
        series_fail(s, st, "barrier start");
    }
}

static void engine_create_job(void *arg)
{
    bench_t *b                   = arg;
    rdp_coll_engine_config_t cfg = {
        .tl_ops    = rdp_ucx_tl_ops(),
        .tl_ctx    = rdp_ucx_tl_ctx(b->boot.tl),
        .nuniverse = b->n,
        .me        = b->me,
        .loop      = b->loop,
        .alg       = b->alg,
    };

    b->status = rdp_coll_engine_create(&cfg, &b->engine);
}

static void engine_destroy_job(void *arg)
{
    bench_t *b = arg;

    rdp_coll_engine_destroy(b->engine);
    b->engine = NULL;
}

static void set_key_job(void *arg)
{
    bench_t *b = arg;

    b->status =
        rdp_ucx_tl_set_key(b->boot.tl, b->table->key, sizeof(b->table->key));
}

/* ---- main ---- */

typedef struct opts {
    ag_opts_t ag; /* sizes, repetitions, impl, checks, header */
    uint32_t me;
    uint32_t n;
    const char *dir;
    enum rdp_coll_alg algs[8];
    unsigned nalgs;
    double timeout;
    int verbose;
    int open_payload;
} opts_t;

static void usage(FILE *f)
{
    fprintf(
        f, "usage: coll-bench -i INDEX -n M -d DIR [options]\n"
           "  M processes (INDEX 0..M-1, same DIR: a fresh directory per run)\n"
           "  run allgathers over the collective engine and UCX; process 0\n"
           "  prints CSV: " AG_CSV_HEADER "\n"
           "options:\n"
           "  -a LIST  algorithms, in order (default "
           "recursive_doubling,bruck,ring,auto)\n"
           "  -t SEC   timeout of each collective and rendezvous step "
           "(default 30)\n"
           "  -v       '#' lines: what auto picked for each size\n"
           "  -O       payloads without authentication, as for a job whose\n"
           "           fabric isolates it (headers stay authenticated)\n");
    ag_opts_usage(f, "rdpmix-ucx");
    fprintf(f, "RDPMIX_COLL_ALG is ignored (unset at start); UCX reads "
               "UCX_TLS,\nUCX_NET_DEVICES etc. as usual.\n");
}

static int parse_algs(const char *list, opts_t *o)
{
    char buf[256];
    char *save = NULL;

    if (strlen(list) >= sizeof(buf)) {
        fprintf(stderr, "coll-bench: algorithm list too long\n");
        return -1;
    }
    strcpy(buf, list);
    o->nalgs = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok       = strtok_r(NULL, ",", &save)) {
        enum rdp_coll_alg alg;

        if (o->nalgs == sizeof(o->algs) / sizeof(o->algs[0])) {
            fprintf(stderr, "coll-bench: too many algorithms\n");
            return -1;
        }
        if (rdp_coll_alg_parse(tok, &alg) != PMIX_SUCCESS
            || alg == RDP_COLL_ALG_DISSEM) {
            fprintf(stderr,
                    "coll-bench: unknown algorithm '%s' (recursive_doubling, "
                    "rd, bruck, ring, auto)\n",
                    tok);
            return -1;
        }
        o->algs[o->nalgs++] = alg;
    }
    if (o->nalgs == 0) {
        fprintf(stderr, "coll-bench: empty algorithm list\n");
        return -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, opts_t *o)
{
    static const struct option lopts[] = {AG_LONGOPTS};
    unsigned me = UINT32_MAX, n = 0, tsec = 30;
    int c;

    memset(o, 0, sizeof(*o));
    ag_opts_init(&o->ag, "rdpmix-ucx");
    if (parse_algs("recursive_doubling,bruck,ring,auto", o) != 0) {
        return -1;
    }
    while (
        (c = getopt_long(argc, argv, AG_OPTSTRING "i:n:d:a:t:vOh", lopts, NULL))
        != -1) {
        int done = ag_opts_parse(&o->ag, c, optarg);

        if (done == 0) {
            switch (c) {
            case 'i':
                done = ag_parse_uint(optarg, 0, RDV_MAX_PROCS - 1, &me);
                break;
            case 'n':
                done = ag_parse_uint(optarg, 1, RDV_MAX_PROCS, &n);
                break;
            case 'd':
                o->dir = optarg;
                break;
            case 'a':
                if (parse_algs(optarg, o) != 0) {
                    return -1;
                }
                break;
            case 't':
                done = ag_parse_uint(optarg, 1, 86400, &tsec);
                break;
            case 'v':
                o->verbose = 1;
                break;
            case 'O':
                o->open_payload = 1;
                break;
            case 'h':
                usage(stdout);
                exit(0);
            default:
                usage(stderr);
                return -1;
            }
        }
        if (done < 0) {
            fprintf(stderr, "coll-bench: bad value for -%c: '%s'\n", c, optarg);
            return -1;
        }
    }
    if (optind != argc || n == 0 || me >= n || o->dir == NULL) {
        fprintf(stderr, "coll-bench: need -i INDEX < M, -n M and -d DIR\n");
        usage(stderr);
        return -1;
    }
    o->me      = me;
    o->n       = n;
    o->timeout = tsec;
    return ag_opts_finish(&o->ag);
}

static double median_of(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), ag_cmp_double);
    return v[n / 2];
}

/* COLL_BENCH_SKEW (a probe for issue 11): process 0 prints
 * "# skew,M,size,<each process's median t1 - t0>,<median skew>" (us), the
 * skew of a rep being its latest t0 minus its earliest (one clock on one
 * machine: CLOCK_MONOTONIC).  @a times holds the gathered t1 - t0. */
static int print_skew(bench_t *b, oob_t *oob, series_t *s, unsigned reps,
                      double *times)
{
    double *t0s =
        (b->me == 0) ? malloc((size_t)b->n * reps * sizeof(double)) : NULL;
    double *v = malloc(reps * sizeof(double));

    if (((b->me == 0) && (t0s == NULL)) || (v == NULL)
        || (oob_gather(oob, RDV_GATHER, s->t0s, reps, t0s) != 0)) {
        free(t0s);
        free(v);
        return -1;
    }
    if (b->me == 0) {
        printf("# skew,%u,%zu", b->n, s->size);
        for (uint32_t p = 0; p < b->n; p++) {
            memcpy(v, times + (size_t)p * reps, reps * sizeof(double));
            printf(",%.2f", median_of(v, reps) * 1e6);
        }
        for (unsigned j = 0; j < reps; j++) {
            double lo = t0s[j];
            double hi = t0s[j];

            for (uint32_t p = 1; p < b->n; p++) {
                double t = t0s[(size_t)p * reps + j];

                lo = (t < lo) ? t : lo;
                hi = (t > hi) ? t : hi;
            }
            v[j] = hi - lo;
        }
        printf(",%.2f\n", median_of(v, reps) * 1e6);
    }
    free(t0s);
    free(v);
    return 0;
}

/* Run one (algorithm, size) series and, on process 0, print its line. */
static int run_series(bench_t *b, oob_t *oob, const opts_t *o,
                      enum rdp_coll_alg alg, uint32_t sid, size_t size,
                      double *all)
{
    unsigned reps = ag_reps(size, o->ag.reps, o->ag.reps_large);
    series_t s    = {.b     = b,
                     .sid   = sid,
                     .size  = size,
                     .warm  = o->ag.warm,
                     .total = o->ag.warm + reps};
    pmix_status_t st;
    int rc = -1;

    s.sbuf  = NULL; /* one per iteration (iter_start) */
    s.times = calloc(reps, sizeof(double));
    if (getenv("COLL_BENCH_SKEW") != NULL) {
        s.t0s = calloc(reps, sizeof(double));
    }
    if (s.times == NULL) {
        fprintf(stderr, "coll-bench: out of memory\n");
        goto out_free;
    }
    rdp_wait_init(&s.done);
    if (rdp_loop_post(b->loop, iter_start, &s) != PMIX_SUCCESS) {
        fprintf(stderr, "coll-bench: cannot post to the loop\n");
        goto out_wait;
    }
    /* every collective has its own timeout; this only guards the bench */
    st = rdp_wait_wait_for(&s.done, 2.0 * b->timeout * s.total + 10.0);
    if (st == PMIX_ERR_TIMEOUT && s.err[0] == '\0') {
        fprintf(stderr, "coll-bench %u: %s size %zu: no completion\n", b->me,
                rdp_coll_alg_name(alg), size);
        fflush(NULL);
        _exit(3); /* the loop still references s */
    }
    if (st != PMIX_SUCCESS) {
        fprintf(stderr, "coll-bench %u: %s size %zu: %s\n", b->me,
                rdp_coll_alg_name(alg), size, s.err);
        goto out_wait;
    }
    if (oob_gather(oob, RDV_GATHER, s.times, reps, all) != 0) {
        goto out_wait;
    }
    if ((s.t0s != NULL) && (print_skew(b, oob, &s, reps, all) != 0)) {
        goto out_wait;
    }
    rc = 0;
    if (b->me == 0) {
        if (o->verbose && alg == RDP_COLL_ALG_AUTO) {
            printf("# picked,%s,%u,%zu,%s\n", o->ag.impl, b->n, size,
                   rdp_coll_alg_name(s.picked));
        }
        rc = ag_print_row(o->ag.impl, rdp_coll_alg_name(alg), b->n, size, reps,
                          all);
    }
out_wait:
    rdp_wait_cleanup(&s.done);
out_free:
    free(s.t0s);
    free(s.times);
    free(s.sbuf);
    return rc;
}

static int run_alg(bench_t *b, oob_t *oob, const opts_t *o,
                   enum rdp_coll_alg alg, uint32_t *sid, double *all)
{
    int rc = 0;

    b->alg = alg;
    on_loop(b->loop, engine_create_job, b);
    if (b->status != PMIX_SUCCESS) {
        fprintf(stderr, "coll-bench %u: engine: %s\n", b->me,
                PMIx_Error_string(b->status));
        return -1;
    }
    for (size_t i = 0; i < o->ag.nsizes && rc == 0; i++) {
        rc = run_series(b, oob, o, alg, (*sid)++, o->ag.sizes[i], all);
    }
    if (rc != 0) {
        return rc; /* the process exits; peers see it fail */
    }
    on_loop(b->loop, engine_destroy_job, b);
    /* nobody starts the next engine's collectives before every old engine
     * is unbound (the transport holds messages while none is bound) */
    return oob_gather(oob, RDV_BARRIER, NULL, 0, NULL);
}

int main(int argc, char **argv)
{
    static table_t table;
    opts_t o;
    oob_t oob;
    bench_t b;
    double *all = NULL;
    unsigned maxreps;
    uint32_t sid = 0;
    int lfd      = -1;
    int rc       = 1;

    if (parse_opts(argc, argv, &o) != 0) {
        return 1;
    }
    unsetenv("RDPMIX_COLL_ALG");
    oob     = (oob_t){.me = o.me, .n = o.n, .deadline_len = o.timeout};
    b       = (bench_t){.me        = o.me,
                        .n         = o.n,
                        .timeout   = o.timeout,
                        .check_all = o.ag.check_all,
                        .open_payload = o.open_payload != 0,
                        .table     = &table};
    oob.fds = malloc(o.n * sizeof(int));
    b.parts = malloc(o.n * sizeof(uint32_t));
    maxreps = o.ag.reps > o.ag.reps_large ? o.ag.reps : o.ag.reps_large;
    if (o.me == 0) {
        all = malloc((size_t)o.n * maxreps * sizeof(double));
    }
    if (oob.fds == NULL || b.parts == NULL || (o.me == 0 && all == NULL)) {
        fprintf(stderr, "coll-bench: out of memory\n");
        goto out;
    }
    for (uint32_t i = 0; i < o.n; i++) {
        oob.fds[i] = -1;
        b.parts[i] = i;
    }

    /* 1. transport with a placeholder key; publish its address */
    if (rdp_loop_create(&b.loop) != PMIX_SUCCESS
        || rdp_loop_start_thread(b.loop) != PMIX_SUCCESS) {
        fprintf(stderr, "coll-bench: cannot start the loop\n");
        goto out;
    }
    if (getrandom(table.key, sizeof(table.key), 0) != sizeof(table.key)) {
        fprintf(stderr, "coll-bench: getrandom: %m\n");
        goto out_loop;
    }
    b.boot.loop           = b.loop;
    b.boot.params.key     = table.key;
    b.boot.params.key_len = sizeof(table.key);
    on_loop(b.loop, ucx_boot_create, &b.boot);
    if (b.boot.status != PMIX_SUCCESS) {
        fprintf(stderr, "coll-bench %u: cannot create the UCX transport\n",
                o.me);
        goto out_loop;
    }
    table.lens[o.me]  = (uint32_t)b.boot.addr_len;
    table.addrs[o.me] = (uint8_t *)b.boot.addr; /* borrowed, never freed */

    /* 2. rendezvous: addresses and the session key */
    if (o.me == 0) {
        if (oob_listen(o.dir, &lfd) != 0
            || oob_root_accept(&oob, lfd, &table) != 0) {
            goto out_tl;
        }
    } else if (oob_connect(o.dir, o.timeout, &oob.fds[0]) != 0
               || oob_leaf_join(&oob, &table) != 0) {
        goto out_tl;
    }

    /* 3. connect the transport under the shared key */
    {
        rdp_iov_t *iov = calloc(o.n, sizeof(*iov));

        if (iov == NULL) {
            fprintf(stderr, "coll-bench: out of memory\n");
            goto out_tl;
        }
        for (uint32_t i = 0; i < o.n; i++) {
            iov[i] = (rdp_iov_t){table.addrs[i], table.lens[i]};
        }
        on_loop(b.loop, set_key_job, &b);
        b.boot.me    = o.me;
        b.boot.n     = o.n;
        b.boot.table = iov;
        if (b.status == PMIX_SUCCESS) {
            on_loop(b.loop, ucx_boot_connect, &b.boot);
        }
        free(iov);
        if (b.status != PMIX_SUCCESS || b.boot.status != PMIX_SUCCESS) {
            fprintf(stderr, "coll-bench %u: cannot connect the transport\n",
                    o.me);
            goto out_tl;
        }
    }
    if (oob_gather(&oob, RDV_BARRIER, NULL, 0, NULL) != 0) {
        goto out_tl;
    }

    /* 4. the measurements */
    if (o.me == 0 && o.ag.header) {
        printf("%s\n", AG_CSV_HEADER);
        fflush(stdout);
    }
    for (unsigned a = 0; a < o.nalgs; a++) {
        if (run_alg(&b, &oob, &o, o.algs[a], &sid, all) != 0) {
            fflush(NULL);
            _exit(2); /* an engine may still be running collectives */
        }
    }
    rc = 0;

out_tl:
    on_loop(b.loop, ucx_boot_destroy, &b.boot);
out_loop:
    rdp_loop_destroy(b.loop);
out:
    for (uint32_t i = 0; oob.fds != NULL && i < o.n; i++) {
        if (oob.fds[i] >= 0) {
            close(oob.fds[i]);
        }
        if (i != o.me) {
            free(table.addrs[i]);
        }
    }
    if (lfd >= 0) {
        close(lfd);
    }
    free(all);
    free(b.parts);
    free(oob.fds);
    return rc;
}
