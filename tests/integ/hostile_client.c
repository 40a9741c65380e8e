/* hostile_client.c - a job whose rank 0 attacks its own server
 *
 * usage: hostile_client N      (run as N ranks of one job by mini_host)
 *
 * Every rank is a good client: Init, job info checks, Put/Commit, a fence
 * with PMIX_COLLECT_DATA, two concurrent fences over the same processes,
 * Get of every peer's data, Finalize.  Rank 0, between its Init and its
 * fence, also opens raw connections to the server's socket and sends
 * malformed headers, truncated payloads, an oversized length, commands
 * before CONNECT, garbage after CONNECT, random CONNECT payloads, and
 * CONNECTs claiming an unregistered rank or nspace, another rank with a
 * wrong or missing token, and its own already connected identity.  Each
 * must be refused (an error reply where the protocol has one) and closed,
 * while the good clients of the job still complete.
 * With HOSTILE_CLEANUP_DIR=path rank 0 also creates that directory (a
 * subdirectory, files, and a symlink to HOSTILE_CLEANUP_KEEP) and registers
 * it for recursive cleanup with PMIx_Job_control; the test checks that it
 * is gone after the job and that the symlink's target survived.
 * With HOSTILE_LEAVER=1 the last rank instead exits right after Init
 * without finalizing: the others' fence must fail with
 * PMIX_ERR_PROC_TERM_WO_SYNC instead of hanging.
 * Prints "rank R of N ok" on success.
 */
#include "config.h"
#include "core/wire/proto.h"
#include "core/wire/wire.h"

#include <pmix.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "hostile_client rank %u: FAILED ", me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* ---- raw protocol ---- */

static int raw_connect(void)
{
    const char *path = getenv(RDP_ENV_SERVER_PATH);
    struct sockaddr_un sa;
    int fd;

    if (path == NULL) {
        fail("%s not set", RDP_ENV_SERVER_PATH);
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail("socket: %s", strerror(errno));
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fail("connect %s: %s", path, strerror(errno));
    }
    return fd;
}

static void send_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; /* the server may already have closed: fine */
        }
        p += n;
        len -= (size_t)n;
    }
}

static void send_frame(int fd, uint16_t cmd, uint32_t length,
                       const void *payload, size_t plen)
{
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, cmd, 7, length};
    uint8_t raw[RDP_MSG_HDR_LEN];

    rdp_msg_hdr_encode(&hdr, raw);
    send_all(fd, raw, sizeof(raw));
    if (plen > 0) {
        send_all(fd, payload, plen);
    }
}

/* Read until the server closes. Returns the status of a CONNECT_ACK seen on
 * the way (1 if none); fails if the connection stays open too long. */
static int wait_closed(int fd, const char *what)
{
    uint8_t buf[65536];
    size_t have = 0;
    int status  = 1;
    time_t end  = time(NULL) + 10;

    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t n;

        if (time(NULL) > end) {
            fail("%s: the server kept the connection open", what);
        }
        if (poll(&pfd, 1, 1000) <= 0) {
            continue;
        }
        n = recv(fd, buf + have, sizeof(buf) - have, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) {
            break;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            fail("%s: recv: %s", what, strerror(errno));
        }
        have += (size_t)n;
        if (have >= RDP_MSG_HDR_LEN + 4 && status == 1) {
            rdp_msg_hdr_t hdr;
            rdp_rbuf_t rb;
            int32_t st;

            if (rdp_msg_hdr_decode(buf, &hdr) != PMIX_SUCCESS
                || hdr.cmd != RDP_CMD_CONNECT_ACK) {
                fail("%s: unexpected reply", what);
            }
            rdp_rbuf_init(&rb, buf + RDP_MSG_HDR_LEN, 4);
            rdp_unpack_i32(&rb, &st);
            status = st;
        }
        if (have == sizeof(buf)) {
            have = 0;
        }
    }
    close(fd);
    return status;
}

static void pack_connect(rdp_buf_t *b, const char *nspace, uint32_t rank,
                         const char *token)
{
    if (rdp_pack_string(b, nspace) != PMIX_SUCCESS
        || rdp_pack_u32(b, rank) != PMIX_SUCCESS
        || rdp_pack_u32(b, (uint32_t)getpid()) != PMIX_SUCCESS
        || rdp_pack_string(b, token) != PMIX_SUCCESS
        || rdp_pack_info_array(b, NULL, 0) != PMIX_SUCCESS) {
        fail("cannot pack CONNECT");
    }
}

/* A well-formed CONNECT that must be refused with @a expect. */
static void refused_connect(const char *what, const char *nspace, uint32_t rank,
                            const char *token, int expect)
{
    rdp_buf_t b;
    int fd = raw_connect();
    int st;

    rdp_buf_init(&b);
    pack_connect(&b, nspace, rank, token);
    send_frame(fd, RDP_CMD_CONNECT, (uint32_t)b.size, b.data, b.size);
    rdp_buf_cleanup(&b);
    st = wait_closed(fd, what);
    if (st != expect) {
        fail("%s: got status %d, expected %d (%s)", what, st, expect,
             PMIx_Error_string(expect));
    }
    printf("# refused as expected: %s\n", what);
}

/* Bytes that must make the server close without a CONNECT_ACK. */
static void closed_without_reply(const char *what, int fd)
{
    if (wait_closed(fd, what) != 1) {
        fail("%s: got a CONNECT_ACK", what);
    }
    printf("# closed as expected: %s\n", what);
}

static void attack(int n)
{
    const char *token = getenv(RDP_ENV_CLIENT_TOKEN);
    char bad_token[64];
    rdp_buf_t b;
    int fd;

    /* 1. a header that is not ours */
    fd = raw_connect();
    send_all(fd, "GARBAGEGARBAGE!!", 16);
    closed_without_reply("malformed header", fd);

    /* 2. a header promising more than is sent, then EOF */
    fd = raw_connect();
    send_frame(fd, RDP_CMD_CONNECT, 100, "0123456789", 10);
    shutdown(fd, SHUT_WR);
    closed_without_reply("truncated payload", fd);

    /* 3. an absurd length */
    fd = raw_connect();
    send_frame(fd, RDP_CMD_CONNECT, 0xfffffff0u, NULL, 0);
    closed_without_reply("oversized length", fd);

    /* 4. a command before CONNECT */
    fd = raw_connect();
    send_frame(fd, RDP_CMD_FENCE, 0, NULL, 0);
    closed_without_reply("fence before connect", fd);
    fd = raw_connect();
    send_frame(fd, 999, 0, NULL, 0);
    closed_without_reply("unknown command", fd);

    /* 5. garbage after a CONNECT (in the same frame) */
    rdp_buf_init(&b);
    pack_connect(&b, me.nspace, me.rank, token);
    rdp_buf_append(&b, "trailing garbage", 16);
    fd = raw_connect();
    send_frame(fd, RDP_CMD_CONNECT, (uint32_t)b.size, b.data, b.size);
    rdp_buf_cleanup(&b);
    closed_without_reply("garbage after connect", fd);

    /* 6. random CONNECT payloads */
    srand((unsigned)getpid());
    for (int i = 0; i < 50; i++) {
        uint8_t junk[256];
        size_t len = (size_t)(rand() % (int)sizeof(junk));

        for (size_t k = 0; k < len; k++) {
            junk[k] = (uint8_t)rand();
        }
        if (i % 2 == 0 && len > 8) {
            /* plausible nspace length so the parser goes deeper */
            junk[0] = 4;
            junk[1] = junk[2] = junk[3] = 0;
        }
        fd = raw_connect();
        send_frame(fd, RDP_CMD_CONNECT, (uint32_t)len, junk, len);
        closed_without_reply("random connect payload", fd);
    }

    /* 7. claims the server must refuse */
    refused_connect("unregistered rank", me.nspace, (uint32_t)n + 5, token,
                    PMIX_ERR_NOT_FOUND);
    refused_connect("unregistered nspace", "no.such.job", 0, token,
                    PMIX_ERR_NOT_FOUND);
    if (n > 1) {
        snprintf(bad_token, sizeof(bad_token), "%032x", 0xbad);
        refused_connect("wrong token", me.nspace, 1, bad_token,
                        PMIX_ERR_NO_PERMISSIONS);
        refused_connect("missing token", me.nspace, 1, NULL,
                        PMIX_ERR_NO_PERMISSIONS);
    }
    refused_connect("second connect of a connected rank", me.nspace, me.rank,
                    token, PMIX_ERR_NO_PERMISSIONS);

    /* 8. many half-open connections at once, then gone */
    {
        int fds[64];

        for (int i = 0; i < 64; i++) {
            fds[i] = raw_connect();
            send_all(fds[i], "RDPX", 4);
        }
        for (int i = 0; i < 64; i++) {
            close(fds[i]);
        }
    }
}

/* Build a tree to be removed at the end of the job and register it. */
static void register_cleanup(const char *dir)
{
    const char *keep = getenv("HOSTILE_CLEANUP_KEEP");
    char path[4096];
    pmix_info_t info[2];
    bool yes = true;
    FILE *f;
    pmix_status_t rc;

    snprintf(path, sizeof(path), "%s/sub", dir);
    if (mkdir(dir, 0700) != 0 || mkdir(path, 0700) != 0) {
        fail("mkdir %s: %s", path, strerror(errno));
    }
    snprintf(path, sizeof(path), "%s/sub/file", dir);
    f = fopen(path, "w");
    if (f == NULL) {
        fail("fopen %s: %s", path, strerror(errno));
    }
    fputs("x\n", f);
    fclose(f);
    if (keep != NULL) {
        snprintf(path, sizeof(path), "%s/sub/link", dir);
        if (symlink(keep, path) != 0) {
            fail("symlink: %s", strerror(errno));
        }
    }
    PMIX_INFO_LOAD(&info[0], PMIX_REGISTER_CLEANUP_DIR, dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL);
    rc = PMIx_Job_control(NULL, 0, info, 2, NULL, NULL);
    if (rc != PMIX_SUCCESS) {
        fail("cleanup registration: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    /* relative and dot-dot paths are refused */
    PMIX_INFO_LOAD(&info[0], PMIX_REGISTER_CLEANUP, "/tmp/../etc/passwd",
                   PMIX_STRING);
    rc = PMIx_Job_control(NULL, 0, info, 1, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM) {
        fail("a .. cleanup path was not refused: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_DESTRUCT(&info[0]);
}

/* ---- the good part ---- */

static pmix_value_t *get(const pmix_proc_t *proc, const char *key,
                         pmix_data_type_t type)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc  = PMIx_Get(proc, key, NULL, 0, &val);

    if (rc != PMIX_SUCCESS || val == NULL) {
        fail("PMIx_Get(%s:%u, %s): %s", proc->nspace, proc->rank, key,
             PMIx_Error_string(rc));
    }
    if (val->type != type) {
        fail("PMIx_Get(%s:%u, %s): type %u, expected %u", proc->nspace,
             proc->rank, key, val->type, type);
    }
    return val;
}

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
} waiter_t;

static void fence_done(pmix_status_t status, void *cbdata)
{
    waiter_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done   = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static pmix_status_t wait_for(waiter_t *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return w->status;
}

int main(int argc, char **argv)
{
    pmix_proc_t wild, peer;
    pmix_info_t info;
    pmix_value_t val, *v;
    waiter_t w[2];
    char buf[64];
    bool collect = true;
    const char *env;
    int n;
    pmix_status_t rc;

    if (argc != 2 || (n = atoi(argv[1])) <= 0) {
        fprintf(stderr, "usage: hostile_client N\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Init: %s", PMIx_Error_string(rc));
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    v = get(&wild, PMIX_JOB_SIZE, PMIX_UINT32);
    if (v->data.uint32 != (uint32_t)n) {
        fail("job size %u, expected %d", v->data.uint32, n);
    }
    PMIX_VALUE_RELEASE(v);
    v = get(&me, PMIX_APPNUM, PMIX_UINT32); /* derived by the server */
    if (v->data.uint32 != 0) {
        fail("appnum %u", v->data.uint32);
    }
    PMIX_VALUE_RELEASE(v);

    env = getenv("HOSTILE_LEAVER");
    if (env != NULL && atoi(env) != 0 && n > 1) {
        if (me.rank == (pmix_rank_t)n - 1) {
            printf("rank %u of %d ok\n", me.rank, n);
            fflush(stdout);
            _exit(0); /* gone without PMIx_Finalize */
        }
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        if (rc != PMIX_ERR_PROC_TERM_WO_SYNC) {
            fail("fence with a departed rank: %s", PMIx_Error_string(rc));
        }
        PMIx_Finalize(NULL, 0);
        printf("rank %u of %d ok\n", me.rank, n);
        return 0;
    }
    if (me.rank == 0) {
        attack(n);
        env = getenv("HOSTILE_CLEANUP_DIR");
        if (env != NULL) {
            register_cleanup(env);
        }
    }

    snprintf(buf, sizeof(buf), "value-%u", me.rank);
    val.type        = PMIX_STRING;
    val.data.string = buf;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "hostile.key", &val)) != PMIX_SUCCESS
        || (rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fail("put/commit: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    if (rc != PMIX_SUCCESS) {
        fail("fence: %s", PMIx_Error_string(rc));
    }
    for (int r = 0; r < n; r++) {
        char want[64];

        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)r);
        v = get(&peer, "hostile.key", PMIX_STRING);
        snprintf(want, sizeof(want), "value-%d", r);
        if (strcmp(v->data.string, want) != 0) {
            fail("rank %d's value is %s", r, v->data.string);
        }
        PMIX_VALUE_RELEASE(v);
    }

    /* two fences over the same processes in flight at once */
    for (int i = 0; i < 2; i++) {
        pthread_mutex_init(&w[i].lock, NULL);
        pthread_cond_init(&w[i].cond, NULL);
        w[i].done = 0;
        rc        = PMIx_Fence_nb(NULL, 0, NULL, 0, fence_done, &w[i]);
        if (rc != PMIX_SUCCESS) {
            fail("fence_nb %d: %s", i, PMIx_Error_string(rc));
        }
    }
    for (int i = 0; i < 2; i++) {
        if ((rc = wait_for(&w[i])) != PMIX_SUCCESS) {
            fail("concurrent fence %d: %s", i, PMIx_Error_string(rc));
        }
    }

    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    printf("rank %u of %d ok\n", me.rank, n);
    return 0;
}
