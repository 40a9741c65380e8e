/* ucx_exchange.c - a 2-process allgather on raw UCP, with switches for
 * every way the engine's UCP use differs from Open MPI's pml ucx */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

/*
 * Standalone (not the engine, not part of make check): two processes on
 * one machine (ranks 0 and 1, rendezvous through files in DIR) that do
 * what a 2-process allgather does, rep after rep:
 *
 *   barrier (a 0-byte exchange over the same UCP path, or a spin on
 *   shared memory with -b shm)                                untimed
 *   t0; send my block to the peer; ts; wait for the peer's block; t1
 *
 * Every timestamp is CLOCK_MONOTONIC (one clock on one machine) and goes
 * to a shared file, so rank 0 prints, per rep, the max over both of
 * t1 - t0 (what bench/allgather_common.h times), each rank's own t1 - t0,
 * the barrier's skew (|t0[1] - t0[0]|), each rank's send call (ts - t0)
 * and the time from the peer's send call returning to the block being
 * seen (t1 - ts[peer]); min / median / max over the reps, one CSV line.
 *
 *   ucx-exchange -i RANK -d DIR [switches]     (both ranks, same switches)
 *
 * The switches are what differs between src/ucx and Open MPI 4.1's pml
 * ucx; -h lists them.  UCX_TLS and UCX_NET_DEVICES come from the
 * environment as usual.
 */

#define MAX_REPS 200000
#define AM_BAR   1
#define AM_DATA  2

enum {
    SEND_AM,
    SEND_TAG
};
enum {
    WAIT_SPIN,
    WAIT_YIELD,
    WAIT_ARM,
    WAIT_LOOP
};
enum {
    CMPL_CB,
    CMPL_NOIMM,
    CMPL_NOCB
};

typedef struct opts {
    int me;
    const char *dir;
    unsigned reps;
    unsigned warm;
    size_t size;
    size_t hdr;
    int send;
    int wait;
    int wakeup;
    int multi;
    int peer_mode;
    int cmpl;
    int shm_bar;
    int eager;
    const char *max_poll;
    const char *label;
    double burn_pre;  /* us of CPU before each send (-B) */
    double burn_post; /* us of CPU after each receive (-A) */
} opts_t;

typedef struct shared {
    volatile uint64_t bar[2];
    volatile uint64_t ready[2];
    double t0[2][MAX_REPS];
    double ts[2][MAX_REPS];
    double t1[2][MAX_REPS];
} shared_t;

static opts_t o;
static shared_t *sh;
static ucp_context_h ctx;
static ucp_worker_h worker;
static ucp_ep_h ep;
static int efd  = -1;
static int epfd = -1;
static uint8_t hdrbuf[1024];
static uint8_t sbuf[65536];
static uint8_t rbuf[65536];
/* messages of each kind seen so far (AM) / receives completed (tag) */
static volatile uint64_t got[3];
static volatile uint64_t sends_done;
static uint64_t sends_posted;
static int closing;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void die(const char *what, ucs_status_t st)
{
    fprintf(stderr, "ucx-exchange %d: %s: %s\n", o.me, what,
            ucs_status_string(st));
    exit(1);
}

/* ---- waiting ---- */

static void wait_once(void)
{
    if (ucp_worker_progress(worker) != 0) {
        return;
    }
    switch (o.wait) {
    case WAIT_SPIN:
        break;
    case WAIT_YIELD:
        sched_yield();
        break;
    case WAIT_ARM: {
        ucs_status_t st = ucp_worker_arm(worker);
        struct epoll_event ev;

        if (st == UCS_OK) {
            (void)epoll_wait(epfd, &ev, 1, 100);
        } else if (st != UCS_ERR_BUSY) {
            die("ucp_worker_arm", st);
        }
        break;
    }
    case WAIT_LOOP: {
        /* what the engine's loop does between idle polls: a libevent
         * pass (epoll_wait with timeout 0) and a yield */
        struct epoll_event ev;

        (void)epoll_wait(epfd, &ev, 1, 0);
        sched_yield();
        break;
    }
    }
}

/* ---- sending and receiving ---- */

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length,
                          void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    uintptr_t kind = (uintptr_t)arg;

    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        fprintf(stderr, "ucx-exchange: rendezvous not expected\n");
        exit(1);
    }
    if ((kind == AM_DATA) && (length <= sizeof(rbuf))) {
        memcpy(rbuf, data, length);
    }
    got[kind]++;
    return UCS_OK;
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    if (status != UCS_OK) {
        die("send", status);
    }
    sends_done++;
    ucp_request_free(request);
}

static void tag_recv_cb(void *request, ucs_status_t status,
                        const ucp_tag_recv_info_t *info, void *user_data)
{
    if (status != UCS_OK) {
        die("tag receive", status);
    }
    got[(uintptr_t)user_data]++;
    ucp_request_free(request);
}

static void post_send(int kind, size_t len)
{
    ucp_request_param_t prm = {0};
    ucs_status_ptr_t req;

    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype     = ucp_dt_make_contig(1);
    if (o.cmpl != CMPL_NOCB) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK;
        prm.cb.send = send_cb;
    }
    if (o.cmpl == CMPL_NOIMM) {
        prm.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    }
    sends_posted++;
    if (o.send == SEND_AM) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags = o.eager ? UCP_AM_SEND_FLAG_EAGER : 0;
        req       = ucp_am_send_nbx(ep, kind, hdrbuf, o.hdr, sbuf, len, &prm);
    } else {
        req = ucp_tag_send_nbx(ep, sbuf, len, (ucp_tag_t)kind, &prm);
    }
    if (req == NULL) {
        sends_done++;
    } else if (UCS_PTR_IS_ERR(req)) {
        die("send", UCS_PTR_STATUS(req));
    } else if (o.cmpl == CMPL_NOCB) {
        /* no callback: the request is ours to check and free */
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            wait_once();
        }
        ucp_request_free(req);
        sends_done++;
    }
}

static void post_recv(int kind, size_t len)
{
    ucp_request_param_t prm = {0};
    ucs_status_ptr_t req;

    if (o.send != SEND_TAG) {
        return; /* active messages arrive on their own */
    }
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_DATATYPE
                       | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.recv   = tag_recv_cb;
    prm.datatype  = ucp_dt_make_contig(1);
    prm.user_data = (void *)(uintptr_t)kind;
    req = ucp_tag_recv_nbx(worker, rbuf, len, (ucp_tag_t)kind, (ucp_tag_t)-1,
                           &prm);
    if (UCS_PTR_IS_ERR(req)) {
        die("tag receive", UCS_PTR_STATUS(req));
    }
    if (req == NULL) {
        got[kind]++;
    }
}

/* Spend @a us of CPU, as the engine's own work around a message */
static void burn(double us)
{
    double end;

    if (us <= 0) {
        return;
    }
    end = now() + us;
    while (now() < end) {
    }
}

/* One exchange of @a kind: receive posted first (as MPI's sendrecv), send,
 * wait for the peer's.  Returns the time the send call returned. */
static double exchange(int kind, size_t len, uint64_t n)
{
    double ts;

    post_recv(kind, len);
    burn(o.burn_pre);
    post_send(kind, len);
    ts = now();
    while (got[kind] < n) {
        wait_once();
    }
    burn(o.burn_post);
    while (sends_done < sends_posted) {
        wait_once();
    }
    return ts;
}

static void shm_barrier(uint64_t gen)
{
    sh->bar[o.me] = gen;
    __sync_synchronize();
    while (sh->bar[1 - o.me] < gen) {
        (void)ucp_worker_progress(worker);
    }
}

/* ---- setup ---- */

static void write_file(const char *name, const void *data, size_t len)
{
    char path[4096];
    char tmp[4100];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", o.dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if ((f == NULL) || (fwrite(data, 1, len, f) != len) || (fclose(f) != 0)
        || (rename(tmp, path) != 0)) {
        fprintf(stderr, "ucx-exchange: cannot write %s: %s\n", path,
                strerror(errno));
        exit(1);
    }
}

static void *read_file(const char *name, size_t *len_p)
{
    char path[4096];
    uint8_t *buf = malloc(65536);
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", o.dir, name);
    while ((f = fopen(path, "r")) == NULL) {
        usleep(1000);
    }
    *len_p = fread(buf, 1, 65536, f);
    fclose(f);
    return buf;
}

static void map_shared(void)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/shared", o.dir);
    fd = open(path, O_RDWR | O_CREAT, 0600);
    if ((fd < 0) || (ftruncate(fd, sizeof(shared_t)) != 0)) {
        fprintf(stderr, "ucx-exchange: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    sh =
        mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "ucx-exchange: mmap: %s\n", strerror(errno));
        exit(1);
    }
}

static void ep_err_cb(void *arg, ucp_ep_h e, ucs_status_t status)
{
    if (closing) {
        return;
    }
    die("endpoint error", status);
}

static void setup(void)
{
    ucp_params_t cp        = {0};
    ucp_worker_params_t wp = {0};
    ucp_ep_params_t ep_prm = {0};
    ucp_config_t *cfg;
    ucp_address_t *addr;
    size_t addr_len;
    size_t peer_len;
    void *peer_addr;
    char name[32];
    ucs_status_t st;

    st = ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK) {
        die("ucp_config_read", st);
    }
    if (o.max_poll != NULL) {
        st = ucp_config_modify(cfg, "MAX_POLL", o.max_poll);
        if (st != UCS_OK) {
            die("MAX_POLL", st);
        }
    }
    cp.field_mask = UCP_PARAM_FIELD_FEATURES;
    cp.features   = (o.send == SEND_AM) ? UCP_FEATURE_AM : UCP_FEATURE_TAG;
    if (o.wakeup) {
        cp.features |= UCP_FEATURE_WAKEUP;
    }
    st = ucp_init(&cp, cfg, &ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) {
        die("ucp_init", st);
    }
    wp.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = o.multi ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE;
    st             = ucp_worker_create(ctx, &wp, &worker);
    if (st != UCS_OK) {
        die("ucp_worker_create", st);
    }
    epfd = epoll_create1(0);
    if (o.wakeup) {
        struct epoll_event ev = {.events = EPOLLIN};

        st = ucp_worker_get_efd(worker, &efd);
        if (st != UCS_OK) {
            die("ucp_worker_get_efd", st);
        }
        ev.data.fd = efd;
        (void)epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev);
    }
    if (o.send == SEND_AM) {
        for (uintptr_t id = AM_BAR; id <= AM_DATA; id++) {
            ucp_am_handler_param_t am = {0};

            am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID
                            | UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                            | UCP_AM_HANDLER_PARAM_FIELD_CB
                            | UCP_AM_HANDLER_PARAM_FIELD_ARG;
            am.id    = (unsigned)id;
            am.flags = UCP_AM_FLAG_WHOLE_MSG;
            am.cb    = am_cb;
            am.arg   = (void *)id;
            st       = ucp_worker_set_am_recv_handler(worker, &am);
            if (st != UCS_OK) {
                die("ucp_worker_set_am_recv_handler", st);
            }
        }
    }
    st = ucp_worker_get_address(worker, &addr, &addr_len);
    if (st != UCS_OK) {
        die("ucp_worker_get_address", st);
    }
    snprintf(name, sizeof(name), "addr.%d", o.me);
    write_file(name, addr, addr_len);
    ucp_worker_release_address(worker, addr);
    snprintf(name, sizeof(name), "addr.%d", 1 - o.me);
    peer_addr = read_file(name, &peer_len);

    ep_prm.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_prm.address    = peer_addr;
    if (o.peer_mode) {
        ep_prm.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                             | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep_prm.err_mode       = UCP_ERR_HANDLING_MODE_PEER;
        ep_prm.err_handler.cb = ep_err_cb;
    }
    st = ucp_ep_create(worker, &ep_prm, &ep);
    if (st != UCS_OK) {
        die("ucp_ep_create", st);
    }
    free(peer_addr);
    if (getenv("UCX_EXCHANGE_EP_INFO") != NULL && o.me == 0) {
        ucp_ep_print_info(ep, stderr);
    }
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/* "min/median/max" of v[0..n) (sorted in place) into out */
static void stats(double *v, unsigned n, char *out, size_t len)
{
    qsort(v, n, sizeof(*v), cmp_double);
    snprintf(out, len, "%.2f,%.2f,%.2f", v[0], v[n / 2], v[n - 1]);
}

static void report(void)
{
    unsigned n = o.reps;
    double *v  = malloc(n * sizeof(*v));
    char s[6][96];

    for (unsigned r = 0; r < n; r++) {
        unsigned i = o.warm + r;
        double a   = sh->t1[0][i] - sh->t0[0][i];
        double b   = sh->t1[1][i] - sh->t0[1][i];

        v[r] = (a > b) ? a : b;
    }
    stats(v, n, s[0], sizeof(s[0]));
    for (int p = 0; p < 2; p++) {
        for (unsigned r = 0; r < n; r++) {
            v[r] = sh->t1[p][o.warm + r] - sh->t0[p][o.warm + r];
        }
        stats(v, n, s[1 + p], sizeof(s[1 + p]));
    }
    for (unsigned r = 0; r < n; r++) {
        v[r] = sh->t0[1][o.warm + r] - sh->t0[0][o.warm + r];
        v[r] = (v[r] < 0) ? -v[r] : v[r];
    }
    stats(v, n, s[3], sizeof(s[3]));
    /* the send call of whichever rank started later */
    for (unsigned r = 0; r < n; r++) {
        unsigned i = o.warm + r;
        int late   = (sh->t0[1][i] > sh->t0[0][i]) ? 1 : 0;

        v[r] = sh->ts[late][i] - sh->t0[late][i];
    }
    stats(v, n, s[4], sizeof(s[4]));
    /* from the later send call's return to its block being seen */
    for (unsigned r = 0; r < n; r++) {
        unsigned i = o.warm + r;
        int late   = (sh->ts[1][i] > sh->ts[0][i]) ? 1 : 0;

        v[r] = sh->t1[1 - late][i] - sh->ts[late][i];
    }
    stats(v, n, s[5], sizeof(s[5]));
    printf("%s,%zu,%u,%s,%s,%s,%s,%s,%s\n", o.label, o.size, n, s[0], s[1],
           s[2], s[3], s[4], s[5]);
    free(v);
}

/* ---- main ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: ucx-exchange -i 0|1 -d DIR [options]   (both ranks)\n"
               "  -n REPS   timed reps (default 20000)\n"
               "  -w REPS   warm-up reps (default 1000)\n"
               "  -l BYTES  block size (default 8)\n"
               "  -s am|tag ucp_am_send_nbx (+ handler) or tag send + receive\n"
               "  -H BYTES  active-message user header (default 100, as the "
               "engine's)\n"
               "  -E        UCP_AM_SEND_FLAG_EAGER (the engine sets it)\n"
               "  -W spin|yield|arm|loop  waiting: progress only, progress + "
               "sched_yield,\n"
               "            ucp_worker_arm + epoll_wait, progress + "
               "epoll_wait(0) + yield\n"
               "  -F        UCP_FEATURE_WAKEUP (implied by -W arm)\n"
               "  -T single|multi  worker thread mode\n"
               "  -e peer|none     endpoint error handling mode\n"
               "  -c cb|noimm|nocb send completion: callback, callback and "
               "UCP_OP_ATTR_FLAG_NO_IMM_CMPL, no callback (check + free)\n"
               "  -b ucx|shm       barrier: 0-byte exchange, or shared memory\n"
               "  -P N      UCX_TCP_MAX_POLL through ucp_config_modify\n"
               "  -B US     CPU spent before each send (the engine's start)\n"
               "  -A US     CPU spent after each receive (its completion)\n"
               "  -L LABEL  first CSV column\n"
               "prints (rank 0): label,size,reps, then min,median,max of: "
               "max over ranks, rank 0, rank 1, skew, later send call, "
               "detection (us)\n");
}

static int parse(int argc, char **argv)
{
    int c;

    o.me    = -1;
    o.reps  = 20000;
    o.warm  = 1000;
    o.size  = 8;
    o.hdr   = 100;
    o.label = "x";
    while ((c = getopt(argc, argv, "i:d:n:w:l:s:H:EW:FT:e:c:b:P:L:B:A:h"))
           != -1) {
        switch (c) {
        case 'i':
            o.me = atoi(optarg);
            break;
        case 'd':
            o.dir = optarg;
            break;
        case 'n':
            o.reps = (unsigned)atoi(optarg);
            break;
        case 'w':
            o.warm = (unsigned)atoi(optarg);
            break;
        case 'l':
            o.size = (size_t)atol(optarg);
            break;
        case 's':
            o.send = strcmp(optarg, "tag") == 0 ? SEND_TAG : SEND_AM;
            break;
        case 'H':
            o.hdr = (size_t)atol(optarg);
            break;
        case 'E':
            o.eager = 1;
            break;
        case 'W':
            o.wait = !strcmp(optarg, "yield")  ? WAIT_YIELD
                     : !strcmp(optarg, "arm")  ? WAIT_ARM
                     : !strcmp(optarg, "loop") ? WAIT_LOOP
                                               : WAIT_SPIN;
            break;
        case 'F':
            o.wakeup = 1;
            break;
        case 'T':
            o.multi = strcmp(optarg, "multi") == 0;
            break;
        case 'e':
            o.peer_mode = strcmp(optarg, "peer") == 0;
            break;
        case 'c':
            o.cmpl = !strcmp(optarg, "noimm")  ? CMPL_NOIMM
                     : !strcmp(optarg, "nocb") ? CMPL_NOCB
                                               : CMPL_CB;
            break;
        case 'b':
            o.shm_bar = strcmp(optarg, "shm") == 0;
            break;
        case 'P':
            o.max_poll = optarg;
            break;
        case 'L':
            o.label = optarg;
            break;
        case 'B':
            o.burn_pre = atof(optarg);
            break;
        case 'A':
            o.burn_post = atof(optarg);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (o.wait == WAIT_ARM) {
        o.wakeup = 1;
    }
    if ((o.me != 0 && o.me != 1) || (o.dir == NULL) || (o.reps == 0)
        || (o.warm + o.reps > MAX_REPS) || (o.size > sizeof(sbuf))
        || (o.hdr > sizeof(hdrbuf))) {
        usage(stderr);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t nbar = 0;

    if (parse(argc, argv) != 0) {
        return 2;
    }
    memset(sbuf, 0x11 * (o.me + 1), sizeof(sbuf));
    map_shared();
    setup();
    /* both up before the first timed rep */
    exchange(AM_BAR, 0, ++nbar);
    for (unsigned i = 0; i < o.warm + o.reps; i++) {
        double t0;
        double ts;

        if (o.shm_bar) {
            shm_barrier(i + 1);
        } else {
            exchange(AM_BAR, 0, ++nbar);
        }
        t0              = now();
        ts              = exchange(AM_DATA, o.size, i + 1);
        sh->t1[o.me][i] = now();
        sh->t0[o.me][i] = t0;
        sh->ts[o.me][i] = ts;
        if (rbuf[0] != 0x11 * (2 - o.me)) {
            fprintf(stderr, "ucx-exchange %d: bad data\n", o.me);
            return 1;
        }
    }
    /* both done writing their timestamps */
    exchange(AM_BAR, 0, ++nbar);
    if (o.me == 0) {
        report();
    }
    sh->ready[o.me] = 1;
    __sync_synchronize();
    while (!sh->ready[1 - o.me]) {
        (void)ucp_worker_progress(worker);
    }
    closing = 1;
    {
        /* flush and close without error (the peer may be gone) */
        ucp_request_param_t prm = {0};
        ucs_status_ptr_t req;

        prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        req              = ucp_ep_close_nbx(ep, &prm);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_worker_progress(worker);
            }
            ucp_request_free(req);
        }
    }
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    return 0;
}
