/* test_client_api.c - the client API against a mock server on a socket */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <pmix.h>

#include "core/client/client_int.h"
#include "core/ipc/bcast.h"
#include "core/ipc/ipc.h"
#include "core/kvs/kvs.h"
#include "core/loop/loop.h"
#include "core/util/value.h"
#include "core/wire/proto.h"

#include "client_testgen.h"

#define NS "mock.ns"

/*
 * The mock server: one thread, blocking sockets, one client connection at
 * a time.  It answers CONNECT with a small job (2 ranks on node n0),
 * records COMMITs in a kvs, answers FENCE (with the committed data of
 * rank 0 plus made-up data of rank 1 when collecting), GET of rank 1 with
 * "late.key", and reacts to a few magic keys: "slow" (no answer), "drop"
 * (close the connection), "event" (send an EVENT first).
 */
typedef struct mock {
    pthread_mutex_t lock;
    int lfd;
    char path[108];
    pthread_t thread;
    int stop;
    /* what it saw */
    int connects, finalizes, commits, fences, gets;
    char token[64];
    uint32_t pid;
    int last_fence_collect;
    pmix_proc_t last_fence_proc;
    size_t last_commit_nkv;
    int fence_shm;  /* collect results go in a memfd (atomic) */
    rdp_kvs_t *kvs; /* committed data */
    /* the fence board (RDP_ENV_FENCE_BOARD set by board tests) */
    int conn_fd;              /* the client's connection */
    rdp_bcast_board_t *board; /* made when the client asks */
    int board_fd, board_efd;  /* its memfd and eventfd */
    int board_message;        /* answer board fences by message */
    int board_fences;         /* board fences seen */
    uint32_t board_tag[64];   /* request tag of board fence n */
    uint64_t board_done;      /* the last fence request's "done" */
} mock_t;

static mock_t mock = {.board_fd = -1, .board_efd = -1};

static int read_full(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);

        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_msg(int fd, uint16_t cmd, uint32_t tag, rdp_buf_t *b)
{
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, cmd, tag,
                         (uint32_t)b->size};
    uint8_t raw[RDP_MSG_HDR_LEN];
    int rc;

    w_end(b);
    hdr.length = (uint32_t)b->size;
    rdp_msg_hdr_encode(&hdr, raw);
    rc = write_full(fd, raw, sizeof(raw));
    if (rc == 0 && b->size > 0) {
        rc = write_full(fd, b->data, b->size);
    }
    rdp_buf_cleanup(b);
    return rc;
}

/* Message @a b (consumed) with descriptor @a passfd passed along. */
static int send_msg_fd(int fd, uint16_t cmd, uint32_t tag, rdp_buf_t *b,
                       int passfd)
{
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, cmd, tag,
                         (uint32_t)b->size};
    uint8_t raw[RDP_MSG_HDR_LEN];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov[2];
    struct msghdr msg = {0};
    struct cmsghdr *cm;
    int rc;

    rdp_msg_hdr_encode(&hdr, raw);
    iov[0].iov_base = raw;
    iov[0].iov_len  = sizeof(raw);
    iov[1].iov_base = b->data;
    iov[1].iov_len  = b->size;
    memset(&ctl, 0, sizeof(ctl));
    msg.msg_iov        = iov;
    msg.msg_iovlen     = 2;
    msg.msg_control    = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    cm                 = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level     = SOL_SOCKET;
    cm->cmsg_type      = SCM_RIGHTS;
    cm->cmsg_len       = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &passfd, sizeof(int));
    rc = sendmsg(fd, &msg, 0) == (ssize_t)(sizeof(raw) + b->size) ? 0 : -1;
    rdp_buf_cleanup(b);
    return rc;
}

/* A FENCE_ACK whose bundle @a bundle (status and flag not included) goes
 * in a sealed memfd passed with the message, as the server does. */
static int send_fence_shm(int fd, uint32_t tag, rdp_buf_t *bundle)
{
    rdp_buf_t b;
    int mfd, rc;

    w_end(bundle);
    assert_int_equal(rdp_ipc_memfd_create(bundle->data, bundle->size, &mfd),
                     PMIX_SUCCESS);
    rdp_buf_init(&b);
    rdp_pack_i32(&b, PMIX_SUCCESS);
    rdp_pack_u8(&b, RDP_FENCE_BUNDLE_MEMFD);
    rdp_pack_u64(&b, bundle->size);
    rc = send_msg_fd(fd, RDP_CMD_FENCE_ACK, tag, &b, mfd);
    close(mfd);
    rdp_buf_cleanup(bundle);
    return rc;
}

static int send_status(int fd, uint16_t cmd, uint32_t tag, pmix_status_t st)
{
    rdp_buf_t b;

    rdp_buf_init(&b);
    rdp_pack_i32(&b, st);
    return send_msg(fd, cmd, tag, &b);
}

static void job_bundle(rdp_buf_t *b)
{
    uint16_t zero = 0;

    rdp_pack_u32(b, 1);
    w_set(b, NS, 3);
    w_section(b, RDP_SECT_JOB, PMIX_RANK_WILDCARD, NULL, 2);
    w_u32(b, PMIX_JOB_SIZE, 2);
    w_str(b, PMIX_LOCAL_PEERS, "0,1");
    w_section(b, RDP_SECT_NODE, 0, "n0", 1);
    w_u32(b, PMIX_LOCAL_SIZE, 2);
    w_section(b, RDP_SECT_PROC, 0, NULL, 1);
    w_kv(b, PMIX_LOCAL_RANK, PMIX_UINT16, &zero);
}

static void handle_connect(int fd, uint32_t tag, rdp_rbuf_t *rb)
{
    char *ns = NULL, *token = NULL;
    uint32_t rank, pid;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    rdp_buf_t b;

    assert_int_equal(rdp_unpack_string(rb, &ns), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u32(rb, &rank), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u32(rb, &pid), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_string(rb, &token), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_info_array(rb, &info, &ninfo), PMIX_SUCCESS);
    pthread_mutex_lock(&mock.lock);
    mock.connects++;
    mock.pid = pid;
    snprintf(mock.token, sizeof(mock.token), "%s", token != NULL ? token : "");
    pthread_mutex_unlock(&mock.lock);
    rdp_buf_init(&b);
    rdp_pack_i32(&b, PMIX_SUCCESS);
    job_bundle(&b);
    send_msg(fd, RDP_CMD_CONNECT_ACK, tag, &b);
    free(ns);
    free(token);
    rdp_info_array_free(info, ninfo);
}

/* The bundle of a collecting fence: rank 0's committed data and rank 1's
 * made-up data, with the number of fences so far. */
static void mock_fence_bundle(rdp_buf_t *b, int nfence)
{
    rdp_pack_u32(b, 1);
    w_set(b, NS, 2);
    w_section(b, RDP_SECT_PROC, 0, NULL, 0);
    /* replace the count by the real kv list of rank 0 */
    b->size -= 4;
    pthread_mutex_lock(&mock.lock);
    rdp_kvs_pack_rank(mock.kvs, NS, 0, RDP_SCOPES_ALL, b);
    pthread_mutex_unlock(&mock.lock);
    w_section(b, RDP_SECT_PROC, 1, NULL, 2);
    w_str(b, "peer.key", "from-1");
    w_u32(b, "peer.fences", (uint32_t)nfence);
}

/* A whole-job fence with a board tail (n, done): recorded; returns 1 when
 * the mock answers it by message (board_message), 0 when the test will. */
static int mock_board_fence(rdp_rbuf_t *rb, uint32_t tag)
{
    uint64_t n, done;
    int by_message;

    assert_int_equal(rdp_unpack_u64(rb, &n), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u64(rb, &done), PMIX_SUCCESS);
    assert_true(n < 64);
    pthread_mutex_lock(&mock.lock);
    mock.board_tag[n] = tag;
    mock.board_done   = done;
    mock.board_fences++;
    by_message = mock.board_message;
    pthread_mutex_unlock(&mock.lock);
    return by_message;
}

/* FENCE_BOARD: a fresh board and eventfd for this connection. */
static void handle_fence_board(int fd, uint32_t tag)
{
    uint64_t cookie[2] = {0x1234, 0x5678};
    rdp_buf_t b;

    if (getenv(RDP_ENV_FENCE_BOARD) == NULL) {
        send_status(fd, RDP_CMD_FENCE_BOARD_ACK, tag, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    pthread_mutex_lock(&mock.lock);
    if (mock.board != NULL) {
        rdp_bcast_destroy(mock.board, mock.board_fd, mock.board_efd);
    }
    assert_int_equal(
        rdp_bcast_create(cookie, &mock.board, &mock.board_fd, &mock.board_efd),
        PMIX_SUCCESS);
    mock.board_fences = 0;
    pthread_mutex_unlock(&mock.lock);
    rdp_buf_init(&b);
    rdp_pack_i32(&b, PMIX_SUCCESS);
    rdp_pack_u32(&b, (uint32_t)getpid());
    rdp_pack_i32(&b, mock.board_fd);
    rdp_pack_u64(&b, cookie[0]);
    rdp_pack_u64(&b, cookie[1]);
    rdp_pack_u64(&b, 0); /* no fence before */
    send_msg_fd(fd, RDP_CMD_FENCE_BOARD_ACK, tag, &b, mock.board_efd);
}

static void handle_fence(int fd, uint32_t tag, rdp_rbuf_t *rb)
{
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0, ninfo = 0;
    pmix_info_t *info = NULL;
    int collect       = 0;
    int nfence;
    rdp_buf_t b;

    assert_int_equal(rdp_unpack_proc_array(rb, &procs, &nprocs), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_info_array(rb, &info, &ninfo), PMIX_SUCCESS);
    if (rb->left > 0 && !mock_board_fence(rb, tag)) {
        /* on the board: the test answers it (mock_publish) */
        free(procs);
        rdp_info_array_free(info, ninfo);
        return;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) {
            collect = PMIX_INFO_TRUE(&info[i]);
        }
    }
    pthread_mutex_lock(&mock.lock);
    nfence                  = ++mock.fences;
    mock.last_fence_collect = collect;
    if (nprocs > 0) {
        mock.last_fence_proc = procs[0];
    }
    pthread_mutex_unlock(&mock.lock);
    rdp_buf_init(&b);
    if (collect && __atomic_load_n(&mock.fence_shm, __ATOMIC_ACQUIRE)) {
        mock_fence_bundle(&b, nfence);
        send_fence_shm(fd, tag, &b);
        goto out;
    }
    rdp_pack_i32(&b, PMIX_SUCCESS);
    rdp_pack_u8(&b, (uint8_t)collect);
    if (collect) {
        mock_fence_bundle(&b, nfence);
    }
    send_msg(fd, RDP_CMD_FENCE_ACK, tag, &b);
out:
    free(procs);
    rdp_info_array_free(info, ninfo);
}

/* Returns -1 to drop the connection. */
static int handle_get(int fd, uint32_t tag, rdp_rbuf_t *rb)
{
    char *ns = NULL, *key = NULL;
    uint32_t rank;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    rdp_buf_t b;
    int rc = 0;

    assert_int_equal(rdp_unpack_string(rb, &ns), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u32(rb, &rank), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_string(rb, &key), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_info_array(rb, &info, &ninfo), PMIX_SUCCESS);
    pthread_mutex_lock(&mock.lock);
    mock.gets++;
    pthread_mutex_unlock(&mock.lock);
    if (key != NULL && strcmp(key, "slow") == 0) {
        goto out;
    }
    if (key != NULL && strcmp(key, "drop") == 0) {
        rc = -1;
        goto out;
    }
    if (key != NULL && strcmp(key, "event") == 0) {
        pmix_proc_t src;

        PMIX_LOAD_PROCID(&src, NS, 1);
        rdp_buf_init(&b);
        rdp_pack_i32(&b, -1234);
        rdp_pack_proc(&b, &src);
        rdp_pack_info_array(&b, NULL, 0);
        send_msg(fd, RDP_CMD_EVENT, 0, &b);
    }
    if (strcmp(ns, "other.ns") == 0 && rank == PMIX_RANK_WILDCARD) {
        /* a job we were not told about at connect: two ranks on n0 */
        rdp_buf_init(&b);
        rdp_pack_i32(&b, PMIX_SUCCESS);
        rdp_pack_u32(&b, 1);
        w_set(&b, "other.ns", 2);
        w_section(&b, RDP_SECT_JOB, PMIX_RANK_WILDCARD, NULL, 1);
        w_u32(&b, PMIX_JOB_SIZE, 2);
        w_section(&b, RDP_SECT_NODE, 0, "n0", 1);
        w_str(&b, PMIX_LOCAL_PEERS, "0,1");
        send_msg(fd, RDP_CMD_GET_ACK, tag, &b);
        goto out;
    }
    if (rank != 1) {
        send_status(fd, RDP_CMD_GET_ACK, tag, PMIX_ERR_NOT_FOUND);
        goto out;
    }
    rdp_buf_init(&b);
    rdp_pack_i32(&b, PMIX_SUCCESS);
    rdp_pack_u32(&b, 1);
    w_set(&b, NS, 1);
    w_section(&b, RDP_SECT_PROC, 1, NULL, 1);
    w_str(&b, "late.key", "late-1");
    send_msg(fd, RDP_CMD_GET_ACK, tag, &b);
out:
    free(ns);
    free(key);
    rdp_info_array_free(info, ninfo);
    return rc;
}

static void serve(int fd)
{
    for (;;) {
        uint8_t raw[RDP_MSG_HDR_LEN];
        rdp_msg_hdr_t hdr;
        uint8_t *payload = NULL;
        rdp_rbuf_t rb;
        int drop = 0;

        if (read_full(fd, raw, sizeof(raw)) != 0
            || rdp_msg_hdr_decode(raw, &hdr) != PMIX_SUCCESS) {
            return;
        }
        payload = malloc(hdr.length + 1);
        if (payload == NULL || read_full(fd, payload, hdr.length) != 0) {
            free(payload);
            return;
        }
        rdp_rbuf_init(&rb, payload, hdr.length);
        switch (hdr.cmd) {
        case RDP_CMD_CONNECT:
            handle_connect(fd, hdr.tag, &rb);
            break;
        case RDP_CMD_COMMIT: {
            rdp_rbuf_t peek = rb;
            uint32_t n      = 0;

            rdp_unpack_u32(&peek, &n);
            pthread_mutex_lock(&mock.lock);
            mock.commits++;
            mock.last_commit_nkv = n;
            assert_int_equal(rdp_kvs_unpack_rank(mock.kvs, NS, 0, &rb),
                             PMIX_SUCCESS);
            pthread_mutex_unlock(&mock.lock);
            break;
        }
        case RDP_CMD_FENCE:
            handle_fence(fd, hdr.tag, &rb);
            break;
        case RDP_CMD_FENCE_BOARD:
            handle_fence_board(fd, hdr.tag);
            break;
        case RDP_CMD_GET:
            drop = handle_get(fd, hdr.tag, &rb) != 0;
            break;
        case RDP_CMD_FINALIZE:
            pthread_mutex_lock(&mock.lock);
            mock.finalizes++;
            pthread_mutex_unlock(&mock.lock);
            send_status(fd, RDP_CMD_FINALIZE_ACK, hdr.tag, PMIX_SUCCESS);
            drop = 1;
            break;
        default:
            /* a host without upcalls */
            send_status(fd, hdr.cmd + 1, hdr.tag, PMIX_ERR_NOT_SUPPORTED);
            break;
        }
        free(payload);
        if (drop) {
            return;
        }
    }
}

static void *mock_main(void *arg)
{
    for (;;) {
        int fd = accept(mock.lfd, NULL, NULL);

        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            return NULL;
        }
        pthread_mutex_lock(&mock.lock);
        if (mock.stop) {
            pthread_mutex_unlock(&mock.lock);
            close(fd);
            return NULL;
        }
        mock.conn_fd = fd;
        pthread_mutex_unlock(&mock.lock);
        serve(fd);
        close(fd);
    }
}

static int group_setup(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[]            = "/tmp/rdp-client-test-XXXXXX";

    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    pthread_mutex_init(&mock.lock, NULL);
    snprintf(mock.path, sizeof(mock.path), "%s/sock", dir);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", mock.path);
    mock.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (mock.lfd < 0 || bind(mock.lfd, (struct sockaddr *)&sa, sizeof(sa))
        || listen(mock.lfd, 8) != 0) {
        return -1;
    }
    if (rdp_kvs_create(&mock.kvs) != PMIX_SUCCESS) {
        return -1;
    }
    return pthread_create(&mock.thread, NULL, mock_main, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    char dir[sizeof(mock.path)];
    int fd;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    pthread_mutex_lock(&mock.lock);
    mock.stop = 1;
    pthread_mutex_unlock(&mock.lock);
    /* wake accept() */
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", mock.path);
    connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    pthread_join(mock.thread, NULL);
    close(fd);
    close(mock.lfd);
    unlink(mock.path);
    snprintf(dir, sizeof(dir), "%s", mock.path);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
    rdp_kvs_destroy(mock.kvs);
    if (mock.board != NULL) {
        rdp_bcast_destroy(mock.board, mock.board_fd, mock.board_efd);
    }
    return 0;
}

static int env_setup(void **state)
{
    setenv(RDP_ENV_SERVER_PATH, mock.path, 1);
    setenv("PMIX_NAMESPACE", NS, 1);
    setenv("PMIX_RANK", "0", 1);
    setenv(RDP_ENV_CLIENT_TOKEN, "secret", 1);
    setenv("PMIX_HOSTNAME", "n0", 1);
    return 0;
}

static int env_clear(void **state)
{
    while (PMIx_Initialized()) {
        PMIx_Finalize(NULL, 0);
    }
    unsetenv(RDP_ENV_SERVER_PATH);
    unsetenv("PMIX_SERVER_URI");
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    unsetenv(RDP_ENV_CLIENT_TOKEN);
    unsetenv("PMIX_HOSTNAME");
    return 0;
}

static int mock_count(int *counter)
{
    int v;

    pthread_mutex_lock(&mock.lock);
    v = *counter;
    pthread_mutex_unlock(&mock.lock);
    return v;
}

/* ---- callbacks ----------------------------------------------------- */

typedef struct cb_state {
    rdp_wait_t wait;
    pmix_status_t status;
    int calls;
    pthread_t caller;
    int other_thread;
    pmix_value_t value;
} cb_state_t;

static void cb_init(cb_state_t *cb)
{
    memset(cb, 0, sizeof(*cb));
    rdp_wait_init(&cb->wait);
    cb->caller = pthread_self();
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    cb_state_t *cb = cbdata;

    cb->status       = status;
    cb->other_thread = !pthread_equal(cb->caller, pthread_self());
    cb->calls++;
    rdp_wait_signal(&cb->wait, status);
}

static void value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    cb_state_t *cb = cbdata;

    cb->status       = status;
    cb->other_thread = !pthread_equal(cb->caller, pthread_self());
    cb->calls++;
    if (kv != NULL) {
        rdp_value_copy(&cb->value, kv);
    }
    rdp_wait_signal(&cb->wait, status);
}

static pmix_status_t get_u32(pmix_rank_t rank, const char *key, uint32_t *u)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t st;

    PMIX_LOAD_PROCID(&p, NS, rank);
    st = PMIx_Get(&p, key, NULL, 0, &v);
    if (st == PMIX_SUCCESS) {
        assert_int_equal(v->type, PMIX_UINT32);
        *u = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    return st;
}

static pmix_status_t get_str(pmix_rank_t rank, const char *key,
                             const pmix_info_t *info, size_t ninfo, char *out,
                             size_t len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t st;

    PMIX_LOAD_PROCID(&p, NS, rank);
    st = PMIx_Get(&p, key, info, ninfo, &v);
    if (st == PMIX_SUCCESS) {
        assert_int_equal(v->type, PMIX_STRING);
        snprintf(out, len, "%s", v->data.string);
        PMIX_VALUE_RELEASE(v);
    }
    return st;
}

/* ---- tests -------------------------------------------------------- */

static void calls_before_init_fail(void **state)
{
    pmix_value_t v = {.type = PMIX_UINT32};
    pmix_value_t *out;

    assert_false(PMIx_Initialized());
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, "k", &v), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Commit(), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Get(NULL, "k", NULL, 0, &out), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_ERR_INIT);
    assert_true(PMIx_Get_version()[0] > '3');
}

typedef struct query_result {
    pmix_status_t status;
    size_t ninfo;
    char values[2][16];
    int calls;
} query_result_t;

static void query_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                     void *cbdata, pmix_release_cbfunc_t release_fn,
                     void *release_cbdata)
{
    query_result_t *r = cbdata;

    r->status = status;
    r->ninfo  = ninfo;
    for (size_t i = 0; i < ninfo && i < 2; i++) {
        snprintf(r->values[i], sizeof(r->values[i]), "%s",
                 info[i].value.data.string);
    }
    r->calls++;
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

/* The Standard's ABI versions are answered by the library itself, before
 * PMIx_Init (as the Standard allows); other keys still need a server. */
static void abi_versions_are_answered_before_init(void **state)
{
    char *keys[]       = {PMIX_QUERY_STABLE_ABI_VERSION,
                          PMIX_QUERY_PROVISIONAL_ABI_VERSION, NULL};
    char *mixed[]      = {PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_NAMESPACES,
                          NULL};
    pmix_query_t q     = {.keys = keys};
    pmix_query_t qm    = {.keys = mixed};
    pmix_info_t *res   = NULL;
    size_t nres        = 0;
    query_result_t got = {0};

    assert_false(PMIx_Initialized());
    assert_int_equal(PMIx_Query_info(&q, 1, &res, &nres), PMIX_SUCCESS);
    assert_int_equal(nres, 2);
    assert_string_equal(res[0].key, PMIX_QUERY_STABLE_ABI_VERSION);
    assert_int_equal(res[0].value.type, PMIX_STRING);
    assert_string_equal(res[0].value.data.string, "0.0");
    assert_string_equal(res[1].key, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    assert_string_equal(res[1].value.data.string, "0.0");
    PMIX_INFO_FREE(res, nres);

    assert_int_equal(PMIx_Query_info_nb(&q, 1, query_cb, &got), PMIX_SUCCESS);
    assert_int_equal(got.calls, 1); /* no loop thread yet: called at once */
    assert_int_equal(got.status, PMIX_SUCCESS);
    assert_int_equal(got.ninfo, 2);
    assert_string_equal(got.values[1], "0.0");

    assert_int_equal(PMIx_Query_info(&qm, 1, &res, &nres), PMIX_ERR_INIT);
}

static void init_is_refcounted_and_loads_job_info(void **state)
{
    pmix_proc_t me, me2;
    uint32_t u   = 0;
    int connects = mock_count(&mock.connects);
    int finals   = mock_count(&mock.finalizes);

    assert_int_equal(PMIx_Init(&me, NULL, 0), PMIX_SUCCESS);
    assert_string_equal(me.nspace, NS);
    assert_int_equal(me.rank, 0);
    assert_int_equal(PMIx_Init(&me2, NULL, 0), PMIX_SUCCESS);
    assert_true(PMIX_CHECK_PROCID(&me, &me2));
    assert_int_equal(mock_count(&mock.connects), connects + 1);
    pthread_mutex_lock(&mock.lock);
    assert_string_equal(mock.token, "secret");
    assert_int_equal(mock.pid, (uint32_t)getpid());
    pthread_mutex_unlock(&mock.lock);
    assert_int_equal(get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &u),
                     PMIX_SUCCESS);
    assert_int_equal(u, 2);
    assert_int_equal(get_u32(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &u),
                     PMIX_SUCCESS);
    assert_int_equal(u, 2);
    /* not registered: synthesized */
    assert_int_equal(get_u32(0, PMIX_APPNUM, &u), PMIX_SUCCESS);
    assert_int_equal(u, 0);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    assert_true(PMIx_Initialized());
    assert_int_equal(mock_count(&mock.finalizes), finals);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    assert_false(PMIx_Initialized());
    assert_int_equal(mock_count(&mock.finalizes), finals + 1);
}

static void put_commit_fence_get_exchange_data(void **state)
{
    pmix_value_t v;
    char s[64];
    cb_state_t cb;
    pmix_info_t info;
    bool t     = true;
    int fences = mock_count(&mock.fences), gets;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    PMIX_VALUE_LOAD(&v, "global-0", PMIX_STRING);
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, "g.key", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "local-0", PMIX_STRING);
    assert_int_equal(PMIx_Put(PMIX_LOCAL, "l.key", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "internal-0", PMIX_STRING);
    assert_int_equal(PMIx_Put(PMIX_INTERNAL, "i.key", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    /* visible to ourselves before any commit */
    assert_int_equal(get_str(0, "g.key", NULL, 0, s, sizeof(s)), PMIX_SUCCESS);
    assert_string_equal(s, "global-0");
    assert_int_equal(get_str(0, "i.key", NULL, 0, s, sizeof(s)), PMIX_SUCCESS);
    assert_int_equal(PMIx_Commit(), PMIX_SUCCESS);

    cb_init(&cb);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    assert_int_equal(PMIx_Fence_nb(NULL, 0, &info, 1, op_cb, &cb),
                     PMIX_SUCCESS);
    rdp_wait_wait(&cb.wait);
    assert_int_equal(cb.status, PMIX_SUCCESS);
    assert_true(cb.other_thread);
    assert_int_equal(cb.calls, 1);
    rdp_wait_cleanup(&cb.wait);
    /* the commit went before the fence, without the internal key */
    pthread_mutex_lock(&mock.lock);
    assert_int_equal(mock.last_commit_nkv, 2);
    assert_int_equal(mock.fences, fences + 1);
    assert_true(mock.last_fence_collect);
    assert_string_equal(mock.last_fence_proc.nspace, NS);
    assert_int_equal(mock.last_fence_proc.rank, PMIX_RANK_WILDCARD);
    assert_null(rdp_kvs_peek(mock.kvs, NS, 0, "i.key"));
    assert_non_null(rdp_kvs_peek(mock.kvs, NS, 0, "l.key"));
    pthread_mutex_unlock(&mock.lock);
    /* the fence brought rank 1's data: no server trip */
    gets = mock_count(&mock.gets);
    assert_int_equal(get_str(1, "peer.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_string_equal(s, "from-1");
    assert_int_equal(mock_count(&mock.gets), gets);
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void fence_results_in_shared_memory_reach_get(void **state)
{
    pmix_value_t v;
    pmix_info_t info;
    bool t = true;
    uint32_t u;
    char s[64];
    int gets;

    __atomic_store_n(&mock.fence_shm, 1, __ATOMIC_RELEASE);
    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    PMIX_VALUE_LOAD(&v, "mine-0", PMIX_STRING);
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, "shm.key", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    assert_int_equal(PMIx_Commit(), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    assert_int_equal(PMIx_Fence(NULL, 0, &info, 1), PMIX_SUCCESS);
    gets = mock_count(&mock.gets);
    assert_int_equal(get_str(1, "peer.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_string_equal(s, "from-1");
    assert_int_equal(get_u32(1, "peer.fences", &u), PMIX_SUCCESS);
    assert_int_equal(u, mock_count(&mock.fences));
    assert_int_equal(get_str(0, "shm.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_string_equal(s, "mine-0");
    /* all of it came with the fence */
    assert_int_equal(mock_count(&mock.gets), gets);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    __atomic_store_n(&mock.fence_shm, 0, __ATOMIC_RELEASE);
}

#define MT_THREADS 3

typedef struct mt {
    int stop;  /* atomic */
    long gets; /* atomic: Gets answered so far */
} mt_t;

/* An application thread: Gets of peer and job data, answered on this
 * thread while the library thread stores fence results. */
static void *mt_getter(void *arg)
{
    mt_t *mt = arg;

    while (!__atomic_load_n(&mt->stop, __ATOMIC_ACQUIRE)) {
        char s[64];
        uint32_t u = 0;

        assert_int_equal(get_str(1, "peer.key", NULL, 0, s, sizeof(s)),
                         PMIX_SUCCESS);
        assert_string_equal(s, "from-1");
        assert_int_equal(get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &u),
                         PMIX_SUCCESS);
        assert_int_equal(u, 2);
        if (get_u32(1, "peer.fences", &u) == PMIX_SUCCESS) {
            assert_true(u > 0);
        }
        __atomic_add_fetch(&mt->gets, 3, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void gets_on_app_threads_while_fences_complete(void **state)
{
    pthread_t threads[MT_THREADS];
    mt_t mt = {0, 0};
    pmix_info_t info;
    pmix_value_t v;
    bool t = true;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    /* rank 1's data is there before the threads start */
    assert_int_equal(PMIx_Fence(NULL, 0, &info, 1), PMIX_SUCCESS);
    for (int i = 0; i < MT_THREADS; i++) {
        assert_int_equal(pthread_create(&threads[i], NULL, mt_getter, &mt), 0);
    }
    /* 40 rounds, and on until the getters overlapped some (a loaded
     * machine may start them late) */
    for (int round = 0;
         round < 40
         || (__atomic_load_n(&mt.gets, __ATOMIC_RELAXED) < 300 && round < 4000);
         round++) {
        char text[32];

        snprintf(text, sizeof(text), "round-%d", round);
        PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
        assert_int_equal(PMIx_Put(PMIX_GLOBAL, "mt.key", &v), PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&v);
        assert_int_equal(PMIx_Commit(), PMIX_SUCCESS);
        __atomic_store_n(&mock.fence_shm, round % 2, __ATOMIC_RELEASE);
        assert_int_equal(PMIx_Fence(NULL, 0, &info, 1), PMIX_SUCCESS);
    }
    __atomic_store_n(&mt.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < MT_THREADS; i++) {
        pthread_join(threads[i], NULL);
    }
    assert_true(__atomic_load_n(&mt.gets, __ATOMIC_RELAXED) > 0);
    __atomic_store_n(&mock.fence_shm, 0, __ATOMIC_RELEASE);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void get_asks_the_server_unless_optional(void **state)
{
    char s[64];
    pmix_info_t opt;
    int gets;
    cb_state_t cb;
    pmix_proc_t p;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    gets = mock_count(&mock.gets);
    assert_int_equal(get_str(1, "late.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_string_equal(s, "late-1");
    assert_int_equal(mock_count(&mock.gets), gets + 1);
    /* now cached */
    assert_int_equal(get_str(1, "late.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_int_equal(mock_count(&mock.gets), gets + 1);
    /* optional: no trip, NOT_FOUND at once */
    memset(&opt, 0, sizeof(opt));
    PMIX_LOAD_KEY(opt.key, PMIX_OPTIONAL);
    assert_int_equal(get_str(1, "other.key", &opt, 1, s, sizeof(s)),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(mock_count(&mock.gets), gets + 1);
    /* our own missing key is not asked for */
    assert_int_equal(get_str(0, "never.put", NULL, 0, s, sizeof(s)),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(mock_count(&mock.gets), gets + 1);
    /* the server's NOT_FOUND comes through */
    assert_int_equal(get_str(5, "x", NULL, 0, s, sizeof(s)),
                     PMIX_ERR_NOT_FOUND);
    /* non-blocking: callback once, on another thread, value borrowed */
    cb_init(&cb);
    PMIX_LOAD_PROCID(&p, NS, 1);
    assert_int_equal(PMIx_Get_nb(&p, "late.key", NULL, 0, value_cb, &cb),
                     PMIX_SUCCESS);
    rdp_wait_wait(&cb.wait);
    assert_int_equal(cb.status, PMIX_SUCCESS);
    assert_true(cb.other_thread);
    assert_int_equal(cb.value.type, PMIX_STRING);
    assert_string_equal(cb.value.data.string, "late-1");
    rdp_value_destruct(&cb.value);
    rdp_wait_cleanup(&cb.wait);
    assert_int_equal(PMIx_Get_nb(&p, "k", NULL, 0, NULL, NULL),
                     PMIX_ERR_BAD_PARAM);
    /* peers of a job we never heard of: its job data is fetched first */
    {
        pmix_nspace_t other;
        pmix_proc_t *peers = NULL;
        size_t npeers      = 0;
        char *nodes        = NULL;

        PMIX_LOAD_NSPACE(other, "other.ns");
        assert_int_equal(PMIx_Resolve_peers(NULL, other, &peers, &npeers),
                         PMIX_SUCCESS);
        assert_int_equal(npeers, 2);
        assert_string_equal(peers[1].nspace, "other.ns");
        assert_int_equal(peers[1].rank, 1);
        free(peers);
        assert_int_equal(PMIx_Resolve_nodes(other, &nodes), PMIX_SUCCESS);
        assert_string_equal(nodes, "n0");
        free(nodes);
    }
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void get_timeout_is_honoured_and_late_replies_dropped(void **state)
{
    char s[64];
    pmix_info_t info;
    int tmo = 1;
    double t0;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_INT);
    t0 = rdp_time_now();
    assert_int_equal(get_str(1, "slow", &info, 1, s, sizeof(s)),
                     PMIX_ERR_TIMEOUT);
    assert_true(rdp_time_now() - t0 >= 0.9);
    assert_true(rdp_time_now() - t0 < 5);
    /* the connection still works */
    assert_int_equal(get_str(1, "late.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static rdp_wait_t ev_wait;
static pmix_status_t ev_code;
static pmix_proc_t ev_source;
static char ev_model[64];

static void ev_handler(size_t id, pmix_status_t status,
                       const pmix_proc_t *source, pmix_info_t info[],
                       size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    ev_code   = status;
    ev_source = *source;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PROGRAMMING_MODEL)) {
            snprintf(ev_model, sizeof(ev_model), "%s",
                     info[i].value.data.string);
        }
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    rdp_wait_signal(&ev_wait, PMIX_SUCCESS);
}

static void server_events_reach_handlers(void **state)
{
    pmix_status_t code = -1234;
    char s[64];

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    rdp_wait_init(&ev_wait);
    assert_true(
        PMIx_Register_event_handler(&code, 1, NULL, 0, ev_handler, NULL, NULL)
        >= 0);
    assert_int_equal(get_str(1, "event", NULL, 0, s, sizeof(s)),
                     PMIX_ERR_NOT_FOUND);
    rdp_wait_wait(&ev_wait);
    assert_int_equal(ev_code, -1234);
    assert_int_equal(ev_source.rank, 1);
    rdp_wait_cleanup(&ev_wait);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static int default_calls;

static void default_handler(size_t id, pmix_status_t status,
                            const pmix_proc_t *source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t *results, size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    default_calls++;
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void declaring_a_model_notifies_local_handlers(void **state)
{
    pmix_status_t code = PMIX_MODEL_DECLARED;
    pmix_info_t info[2];
    char s[64];

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    rdp_wait_init(&ev_wait);
    ev_model[0] = '\0';
    assert_true(
        PMIx_Register_event_handler(&code, 1, NULL, 0, ev_handler, NULL, NULL)
        >= 0);
    /* Open MPI's default handler aborts on codes it does not know: the
     * declaration must not reach default handlers */
    default_calls = 0;
    assert_true(PMIx_Register_event_handler(NULL, 0, NULL, 0, default_handler,
                                            NULL, NULL)
                >= 0);
    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[0], PMIX_PROGRAMMING_MODEL, "MPI", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_MODEL_LIBRARY_NAME, "OpenMPI", PMIX_STRING);
    assert_int_equal(PMIx_Init(NULL, info, 2), PMIX_SUCCESS);
    rdp_wait_wait(&ev_wait);
    assert_int_equal(ev_code, PMIX_MODEL_DECLARED);
    assert_string_equal(ev_model, "MPI");
    assert_int_equal(get_str(0, PMIX_MODEL_LIBRARY_NAME, NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_string_equal(s, "OpenMPI");
    assert_int_equal(default_calls, 0);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    rdp_wait_cleanup(&ev_wait);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

/* Open MPI 4.1's handler hands the event to its progress thread, which
 * completes it later; PMIx_Init must not return before then (a handler
 * still queued when MPI_Finalize unloads Open MPI's PMIx component
 * crashed ranks).  This one completes from a thread of its own, late. */
typedef struct late_done {
    pmix_event_notification_cbfunc_fn_t cbfunc;
    void *cbdata;
} late_done_t;

static late_done_t late;
static pthread_t late_thread;
static int late_completed;

static void *late_complete(void *arg)
{
    usleep(100 * 1000);
    __atomic_store_n(&late_completed, 1, __ATOMIC_RELEASE);
    late.cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, late.cbdata);
    return NULL;
}

static void late_handler(size_t id, pmix_status_t status,
                         const pmix_proc_t *source, pmix_info_t info[],
                         size_t ninfo, pmix_info_t *results, size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    late.cbfunc = cbfunc;
    late.cbdata = cbdata;
    assert_int_equal(pthread_create(&late_thread, NULL, late_complete, NULL),
                     0);
}

static void declaring_a_model_returns_after_its_handlers_complete(void **state)
{
    pmix_status_t code = PMIX_MODEL_DECLARED;
    pmix_info_t info;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    late_completed = 0;
    assert_true(
        PMIx_Register_event_handler(&code, 1, NULL, 0, late_handler, NULL, NULL)
        >= 0);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_PROGRAMMING_MODEL, "MPI", PMIX_STRING);
    assert_int_equal(PMIx_Init(NULL, &info, 1), PMIX_SUCCESS);
    assert_int_equal(__atomic_load_n(&late_completed, __ATOMIC_ACQUIRE), 1);
    pthread_join(late_thread, NULL);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void losing_the_server_fails_requests_and_notifies(void **state)
{
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    cb_state_t cb;
    pmix_proc_t p;
    char s[64];

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    rdp_wait_init(&ev_wait);
    assert_true(
        PMIx_Register_event_handler(&code, 1, NULL, 0, ev_handler, NULL, NULL)
        >= 0);
    cb_init(&cb);
    PMIX_LOAD_PROCID(&p, NS, 1);
    assert_int_equal(PMIx_Get_nb(&p, "drop", NULL, 0, value_cb, &cb),
                     PMIX_SUCCESS);
    rdp_wait_wait(&cb.wait);
    assert_int_equal(cb.status, PMIX_ERR_LOST_CONNECTION);
    rdp_wait_wait(&ev_wait);
    assert_int_equal(ev_code, PMIX_ERR_LOST_CONNECTION);
    /* later requests fail at once; local data still answers */
    assert_int_equal(get_str(1, "unknown", NULL, 0, s, sizeof(s)),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_ERR_LOST_CONNECTION);
    rdp_wait_cleanup(&cb.wait);
    rdp_wait_cleanup(&ev_wait);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}


/* ---- the fence board: who completes a blocking fence ----------------
 *
 * PMIx_Fence with the board open is completed either by its calling
 * thread (reading the board) or by the library's thread (the board's
 * eventfd, a reply, an error); fence_board.c says which interleavings
 * exist.  These tests force each one with the test hooks of
 * fence_board.c and fence.c (compiled into this test only, with
 * RDP_TEST_HOOKS): a gate holds the thread that reaches its point until
 * the test opens it.  The mock answers a board fence only when the test
 * publishes it; rank 1's "peer.fences" in fence n's result is 100 + n, so
 * Get shows whose result was stored last.  Gates, fence threads and
 * callback states are static: they outlive a failed test, whose teardown
 * opens every gate and finalizes (which ends the fences left). */

/* A gate for whichever fence (a caller may sleep before its fence is
 * numbered: UINT64_MAX in the hook). */
#define ANY_FENCE (UINT64_MAX - 1)

typedef struct gate {
    rdp_board_point_t at;
    uint64_t n;
    int arrived, open;
} gate_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    gate_t *gates[4];
    int stores[16];     /* results of fence n stored */
    uint64_t order[32]; /* fences in the order stored */
    int norder;
} hk = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void board_hook(rdp_board_point_t at, uint64_t n)
{
    pthread_mutex_lock(&hk.lock);
    if (at == RDP_BOARD_AT_STORE) {
        if (n < 16) {
            hk.stores[n]++;
        }
        if (hk.norder < 32) {
            hk.order[hk.norder++] = n;
        }
    }
    for (int i = 0; i < 4; i++) {
        gate_t *g = hk.gates[i];

        if (g != NULL && g->at == at && (g->n == n || g->n == ANY_FENCE)
            && !g->arrived) {
            g->arrived = 1;
            pthread_cond_broadcast(&hk.cond);
            while (!g->open) {
                pthread_cond_wait(&hk.cond, &hk.lock);
            }
        }
    }
    pthread_mutex_unlock(&hk.lock);
}

/* Hold the next thread that reaches @a at for fence @a n. */
static void gate_arm(gate_t *g, rdp_board_point_t at, uint64_t n)
{
    pthread_mutex_lock(&hk.lock);
    memset(g, 0, sizeof(*g));
    g->at = at;
    g->n  = n;
    for (int i = 0; i < 4; i++) {
        if (hk.gates[i] == NULL) {
            hk.gates[i] = g;
            break;
        }
    }
    pthread_mutex_unlock(&hk.lock);
}

/* Wait until @a g holds a thread, or *@a or (if not NULL) is set. */
static int gate_reached(gate_t *g, const int * or)
{
    struct timespec ts;
    int arrived;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60; /* a hang, not a timing: the interleaving is lost */
    pthread_mutex_lock(&hk.lock);
    while (!g->arrived && (or == NULL || !* or)
           && pthread_cond_timedwait(&hk.cond, &hk.lock, &ts) == 0) {
    }
    arrived = g->arrived;
    pthread_mutex_unlock(&hk.lock);
    return arrived;
}

static void gate_open(gate_t *g)
{
    pthread_mutex_lock(&hk.lock);
    g->open = 1;
    for (int i = 0; i < 4; i++) {
        if (hk.gates[i] == g) {
            hk.gates[i] = NULL;
        }
    }
    pthread_cond_broadcast(&hk.cond);
    pthread_mutex_unlock(&hk.lock);
}

static int hk_stores(uint64_t n)
{
    int v;

    pthread_mutex_lock(&hk.lock);
    v = hk.stores[n];
    pthread_mutex_unlock(&hk.lock);
    return v;
}

/* A blocking collecting PMIx_Fence on a thread of its own. */
typedef struct fcall {
    pthread_t thread;
    pmix_status_t status;
    int done; /* hk.lock */
} fcall_t;

static void *fence_thread(void *arg)
{
    fcall_t *f = arg;
    pmix_info_t info;
    bool yes = true;
    pmix_status_t st;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    pthread_mutex_lock(&hk.lock);
    f->status = st;
    f->done   = 1;
    pthread_cond_broadcast(&hk.cond);
    pthread_mutex_unlock(&hk.lock);
    return NULL;
}

static void fence_start(fcall_t *f)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(pthread_create(&f->thread, NULL, fence_thread, f), 0);
}

static pmix_status_t fence_join(fcall_t *f)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60; /* a lost wake-up hangs: fail instead */
    assert_int_equal(pthread_timedjoin_np(f->thread, NULL, &ts), 0);
    return f->status;
}

static void fence_nb_collect(cb_state_t *cb)
{
    pmix_info_t info;
    bool yes = true;

    cb_init(cb);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    assert_int_equal(PMIx_Fence_nb(NULL, 0, &info, 1, op_cb, cb), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
}

/* Wait until the mock has seen @a count board fences. */
static void mock_wait_fences(int count)
{
    for (int i = 0; mock_count(&mock.board_fences) < count; i++) {
        assert_true(i < 60000); /* a lost request, not a timing */
        usleep(1000);
    }
}

/* Publish fence @a n on the board: its result, or @a status. */
static void mock_publish(uint64_t n, pmix_status_t status)
{
    rdp_buf_t b;

    rdp_buf_init(&b);
    if (status != PMIX_SUCCESS) {
        rdp_bcast_publish(mock.board, mock.board_efd, n, status, -1, 0);
        return;
    }
    rdp_pack_u32(&b, 1);
    w_set(&b, NS, 1);
    w_section(&b, RDP_SECT_PROC, 1, NULL, 1);
    w_u32(&b, "peer.fences", (uint32_t)(100 + n));
    w_end(&b);
    assert_int_equal(rdp_bcast_write_data(mock.board_fd, n, b.data, b.size),
                     PMIX_SUCCESS);
    rdp_bcast_publish(mock.board, mock.board_efd, n, PMIX_SUCCESS,
                      RDP_BCAST_FD_INLINE, b.size);
    rdp_buf_cleanup(&b);
}

static uint32_t peer_fences(void)
{
    uint32_t u = 0;

    assert_int_equal(get_u32(1, "peer.fences", &u), PMIX_SUCCESS);
    return u;
}

/* Fences 0 and 1 were stored once each, in that order. */
static void stored_0_then_1(void)
{
    uint64_t order[2];
    int norder;

    pthread_mutex_lock(&hk.lock);
    norder   = hk.norder;
    order[0] = hk.order[0];
    order[1] = hk.order[1];
    pthread_mutex_unlock(&hk.lock);
    /* outside hk.lock: a failed assertion leaves the function */
    assert_int_equal(norder, 2);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_int_equal(peer_fences(), 101);
}

/* Init with the board, and wait until the client holds it: the GET's
 * reply comes after the board's. */
static int board_setup(void **state)
{
    char s[64];

    env_setup(state);
    setenv(RDP_ENV_FENCE_BOARD, "1", 1);
    pthread_mutex_lock(&hk.lock);
    memset(hk.stores, 0, sizeof(hk.stores));
    hk.norder = 0;
    pthread_mutex_unlock(&hk.lock);
    rdp_client_board_hook = board_hook;
    if (PMIx_Init(NULL, NULL, 0) != PMIX_SUCCESS
        || get_str(1, "late.key", NULL, 0, s, sizeof(s)) != PMIX_SUCCESS) {
        return -1;
    }
    return 0;
}

static int board_teardown(void **state)
{
    pthread_mutex_lock(&hk.lock);
    for (int i = 0; i < 4; i++) {
        if (hk.gates[i] != NULL) {
            hk.gates[i]->open = 1;
            hk.gates[i]       = NULL;
        }
    }
    pthread_cond_broadcast(&hk.cond);
    pthread_mutex_unlock(&hk.lock);
    rdp_client_board_hook = NULL;
    pthread_mutex_lock(&mock.lock);
    mock.board_message = 0;
    pthread_mutex_unlock(&mock.lock);
    unsetenv(RDP_ENV_FENCE_BOARD);
    return env_clear(state);
}

/* The plain case: the caller reads its result from the board. */
static void board_blocking_fence_completes_in_its_caller(void **state)
{
    uint64_t before = rdp_client_board_caller_done(), done;
    static fcall_t f;

    fence_start(&f);
    mock_wait_fences(1);
    mock_publish(0, PMIX_SUCCESS);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(rdp_client_board_caller_done(), before + 1);
    assert_int_equal(hk_stores(0), 1);
    assert_int_equal(peer_fences(), 100);
    /* the next fence tells the server it is done with slot 0 */
    fence_start(&f);
    mock_wait_fences(2);
    mock_publish(1, PMIX_SUCCESS);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    pthread_mutex_lock(&mock.lock);
    done = mock.board_done;
    pthread_mutex_unlock(&mock.lock);
    assert_int_equal(done, 1);
}

/* A blocking fence (0) whose caller is held on its way to sleep (it found
 * nothing on the board), then a Fence_nb (1): the loop watches the board. */
static void caller_asleep_then_nb(gate_t *sleeps, fcall_t *f, cb_state_t *nb)
{
    gate_arm(sleeps, RDP_BOARD_AT_CALLER_SLEEPS, ANY_FENCE);
    fence_start(f);
    mock_wait_fences(1);
    assert_true(gate_reached(sleeps, NULL));
    fence_nb_collect(nb);
    mock_wait_fences(2);
}

/* Fence_nb 1 of caller_asleep_then_nb completes once when published, and
 * each fence was stored once. */
static void nb_1_completes(cb_state_t *nb)
{
    mock_publish(1, PMIX_SUCCESS);
    rdp_wait_wait(&nb->wait);
    assert_int_equal(nb->status, PMIX_SUCCESS);
    assert_int_equal(nb->calls, 1);
    rdp_wait_cleanup(&nb->wait);
    assert_int_equal(hk_stores(0), 1);
    assert_int_equal(hk_stores(1), 1);
    assert_int_equal(peer_fences(), 101);
}

/* The board shows the result while the caller is on its way to sleep and
 * the loop is about to claim it: the caller claims it (its eventfd edge
 * came while it was not waiting), the loop then only drops the request.
 * Stored once. */
static void
board_caller_completes_a_fence_the_loop_was_about_to_claim(void **state)
{
    uint64_t before = rdp_client_board_caller_done();
    static gate_t sleeps, looks;
    static cb_state_t nb;
    static fcall_t f;

    caller_asleep_then_nb(&sleeps, &f, &nb);
    gate_arm(&looks, RDP_BOARD_AT_LOOP_LOOKS, 0);
    mock_publish(0, PMIX_SUCCESS);
    assert_true(gate_reached(&looks, NULL));
    gate_open(&sleeps);
    /* with the loop held, the caller completes alone */
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(rdp_client_board_caller_done(), before + 1);
    gate_open(&looks);
    nb_1_completes(&nb);
}

/* The caller looks late: the loop (woken for a Fence_nb) has stored the
 * result and completed the fence; the caller only returns its status. */
static void board_loop_completes_a_fence_whose_caller_looks_late(void **state)
{
    uint64_t before = rdp_client_board_caller_done();
    static gate_t sleeps, next;
    static cb_state_t nb;
    static fcall_t f;

    caller_asleep_then_nb(&sleeps, &f, &nb);
    gate_arm(&next, RDP_BOARD_AT_LOOP_LOOKS, 1);
    mock_publish(0, PMIX_SUCCESS);
    /* the loop is past fence 0 when it looks at fence 1 */
    assert_true(gate_reached(&next, NULL));
    assert_int_equal(hk_stores(0), 1);
    gate_open(&sleeps);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(rdp_client_board_caller_done(), before);
    gate_open(&next);
    nb_1_completes(&nb);
}

/* A Fence_nb (0) and then a blocking fence (1), both on the board; the
 * loop is held before it stores fence 0.  The caller must not store
 * fence 1 before fence 0 is stored, or fence 0's older data would
 * overwrite it (the race modex4's integration test found). */
static void board_caller_waits_until_the_earlier_fence_is_stored(void **state)
{
    static gate_t sleeps, again, looks;
    static cb_state_t nb;
    static fcall_t f;

    fence_nb_collect(&nb);
    mock_wait_fences(1);
    gate_arm(&sleeps, RDP_BOARD_AT_CALLER_SLEEPS, ANY_FENCE);
    fence_start(&f);
    mock_wait_fences(2);
    assert_true(gate_reached(&sleeps, NULL));
    gate_arm(&looks, RDP_BOARD_AT_LOOP_LOOKS, 0);
    mock_publish(0, PMIX_SUCCESS);
    mock_publish(1, PMIX_SUCCESS);
    assert_true(gate_reached(&looks, NULL));
    /* the caller sees fence 1 on the board, fence 0 not stored */
    gate_arm(&again, RDP_BOARD_AT_CALLER_SLEEPS, 1);
    gate_open(&sleeps);
    gate_reached(&again, &f.done);
    assert_int_equal(hk_stores(0) + hk_stores(1), 0);
    gate_open(&again);
    gate_open(&looks);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    rdp_wait_wait(&nb.wait);
    assert_int_equal(nb.status, PMIX_SUCCESS);
    rdp_wait_cleanup(&nb.wait);
    stored_0_then_1();
}

/* Two Fence_nb; the board shows fence 1 first.  The loop stores and
 * completes them in order anyway. */
static void board_loop_stores_results_in_fence_order(void **state)
{
    static gate_t looks;
    static cb_state_t a, b;
    char s[64];

    fence_nb_collect(&a);
    fence_nb_collect(&b);
    mock_wait_fences(2);
    gate_arm(&looks, RDP_BOARD_AT_LOOP_LOOKS, 0);
    mock_publish(1, PMIX_SUCCESS);
    assert_true(gate_reached(&looks, NULL));
    gate_open(&looks);
    /* a round trip through the loop: that pass is over */
    assert_int_equal(get_str(1, "late.key", NULL, 0, s, sizeof(s)),
                     PMIX_SUCCESS);
    assert_int_equal(b.calls, 0);
    mock_publish(0, PMIX_SUCCESS);
    rdp_wait_wait(&a.wait);
    rdp_wait_wait(&b.wait);
    assert_int_equal(a.calls + b.calls, 2);
    rdp_wait_cleanup(&a.wait);
    rdp_wait_cleanup(&b.wait);
    stored_0_then_1();
}

/* Fence 1 is on the board before fence 0 is answered, by message: the
 * loop waits for fence 0 (in order), and fence 0's reply must make it
 * look at the board again (its eventfd edge is long gone). */
static void board_fence_after_one_answered_by_message_completes(void **state)
{
    static cb_state_t a, b;
    rdp_buf_t m;

    mock_publish(1, PMIX_SUCCESS);
    fence_nb_collect(&a);
    fence_nb_collect(&b);
    mock_wait_fences(2);
    rdp_buf_init(&m);
    rdp_pack_i32(&m, PMIX_SUCCESS);
    rdp_pack_u8(&m, RDP_FENCE_BUNDLE_INLINE);
    mock_fence_bundle(&m, 7);
    send_msg(mock.conn_fd, RDP_CMD_FENCE_ACK, mock.board_tag[0], &m);
    rdp_wait_wait(&a.wait);
    /* a hang, not a timing */
    assert_int_equal(rdp_wait_wait_for(&b.wait, 60), PMIX_SUCCESS);
    rdp_wait_cleanup(&a.wait);
    rdp_wait_cleanup(&b.wait);
    assert_int_equal(a.calls + b.calls, 2);
    stored_0_then_1();
}

/* A fence's error on the board is its caller's return value. */
static void board_fence_error_reaches_the_caller_once(void **state)
{
    static fcall_t f;

    fence_start(&f);
    mock_wait_fences(1);
    mock_publish(0, PMIX_ERR_TIMEOUT);
    assert_int_equal(fence_join(&f), PMIX_ERR_TIMEOUT);
    fence_start(&f);
    mock_wait_fences(2);
    mock_publish(1, PMIX_SUCCESS);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(hk_stores(1), 1);
    assert_int_equal(peer_fences(), 101);
}

/* The server answers a board fence by message (a slot a client may still
 * read): the loop stores it and wakes the caller. */
static void board_fence_answered_by_message_wakes_its_caller(void **state)
{
    uint64_t before = rdp_client_board_caller_done();
    static fcall_t f;
    uint32_t u = 0;

    pthread_mutex_lock(&mock.lock);
    mock.board_message = 1;
    pthread_mutex_unlock(&mock.lock);
    fence_start(&f);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(rdp_client_board_caller_done(), before);
    assert_int_equal(hk_stores(0), 1);
    assert_int_equal(get_u32(1, "peer.fences", &u), PMIX_SUCCESS);
}

/* Both answers come (a board slot and a message): whichever thread
 * claims the fence first stores it; the other does not. */
static void board_fence_answered_twice_is_stored_once(void **state)
{
    static gate_t sleeps, again, claimed;
    rdp_buf_t b;
    static fcall_t f;

    gate_arm(&sleeps, RDP_BOARD_AT_CALLER_SLEEPS, ANY_FENCE);
    fence_start(&f);
    mock_wait_fences(1);
    assert_true(gate_reached(&sleeps, NULL));
    gate_arm(&claimed, RDP_BOARD_AT_LOOP_CLAIMED, 0);
    mock_publish(0, PMIX_SUCCESS);
    rdp_buf_init(&b);
    rdp_pack_i32(&b, PMIX_SUCCESS);
    rdp_pack_u8(&b, RDP_FENCE_BUNDLE_INLINE);
    mock_fence_bundle(&b, 7);
    send_msg(mock.conn_fd, RDP_CMD_FENCE_ACK, mock.board_tag[0], &b);
    assert_true(gate_reached(&claimed, NULL));
    gate_arm(&again, RDP_BOARD_AT_CALLER_SLEEPS, 0);
    gate_open(&sleeps);
    gate_reached(&again, &f.done);
    gate_open(&again);
    gate_open(&claimed);
    assert_int_equal(fence_join(&f), PMIX_SUCCESS);
    assert_int_equal(hk_stores(0), 1);
}

/* The server goes away while the caller waits: it returns the loss. */
static void board_lost_server_ends_a_blocking_fence(void **state)
{
    static gate_t sleeps;
    static fcall_t f;

    gate_arm(&sleeps, RDP_BOARD_AT_CALLER_SLEEPS, ANY_FENCE);
    fence_start(&f);
    mock_wait_fences(1);
    assert_true(gate_reached(&sleeps, NULL));
    gate_open(&sleeps);
    shutdown(mock.conn_fd, SHUT_RDWR);
    assert_int_equal(fence_join(&f), PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(hk_stores(0), 0);
}

/* ---- the fence board: a thread's waiter is made once, not per fence ---- */

/* Descriptors this process has open (below 4096: every one it makes). */
static int open_fds(void)
{
    int n = 0;

    for (int fd = 0; fd < 4096; fd++) {
        n += fcntl(fd, F_GETFD) != -1;
    }
    return n;
}

/* Whether the open descriptors come down to at most @a want within 10 s:
 * the mock server's thread closes a finalized client's connection on its
 * own time, so a count taken just after a finalize can be one high (one
 * CI run counted 10 before and 9 after).  A leak keeps it above. */
static int fds_settle_at_most(int want)
{
    for (int i = 0; i < 1000; i++) {
        if (open_fds() <= want) {
            return 1;
        }
        usleep(10000);
    }
    return 0;
}

/* A thread making blocking collecting fences one after the other: fence
 * i only once the test let go i + 1 of them (hk.lock), or all of them
 * at once with go = k. */
typedef struct serial {
    pthread_t thread;
    int k, go, done;      /* hk.lock */
    pmix_status_t status; /* the first failure */
} serial_t;

/* Wait (hk.lock held) until *@a v >= @a want: 0 after 60 s (a hang). */
static int hk_wait_for(const int *v, int want)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    while (*v < want) {
        if (pthread_cond_timedwait(&hk.cond, &hk.lock, &ts) != 0) {
            return 0;
        }
    }
    return 1;
}

static void *serial_thread(void *arg)
{
    serial_t *s = arg;
    pmix_info_t info;
    bool yes = true;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    for (int i = 0; i < s->k; i++) {
        pmix_status_t st;
        int go;

        pthread_mutex_lock(&hk.lock);
        go = hk_wait_for(&s->go, i + 1);
        pthread_mutex_unlock(&hk.lock);
        st = go ? PMIx_Fence(NULL, 0, &info, 1) : PMIX_ERR_TIMEOUT;
        pthread_mutex_lock(&hk.lock);
        if (st != PMIX_SUCCESS && s->status == PMIX_SUCCESS) {
            s->status = st;
        }
        s->done++;
        pthread_cond_broadcast(&hk.cond);
        pthread_mutex_unlock(&hk.lock);
        if (!go) {
            break;
        }
    }
    PMIX_INFO_DESTRUCT(&info);
    return NULL;
}

static void serial_start(serial_t *s, int k, int go)
{
    memset(s, 0, sizeof(*s));
    s->k  = k;
    s->go = go;
    assert_int_equal(pthread_create(&s->thread, NULL, serial_thread, s), 0);
}

static void serial_go(serial_t *s, int go)
{
    pthread_mutex_lock(&hk.lock);
    s->go = go;
    pthread_cond_broadcast(&hk.cond);
    pthread_mutex_unlock(&hk.lock);
}

static void serial_wait_done(serial_t *s, int done)
{
    int ok;

    pthread_mutex_lock(&hk.lock);
    ok = hk_wait_for(&s->done, done);
    pthread_mutex_unlock(&hk.lock);
    assert_true(ok);
}

static pmix_status_t serial_join(serial_t *s)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    assert_int_equal(pthread_timedjoin_np(s->thread, NULL, &ts), 0);
    return s->status;
}

#define SERIAL_FENCES 20

/* One thread, fence after fence (its caller asleep before the result is
 * published; the loop may still store it first): none opens a descriptor
 * once the
 * thread's first has made its waiter (an epoll set and an eventfd made per
 * fence cost six calls more than the loop thread's wake-up), and the
 * thread's exit closes the waiter's. */
static void
board_successive_fences_of_a_thread_open_no_descriptors(void **state)
{
    int before = open_fds(), steady = -1;
    static gate_t sleeps;
    static serial_t s;

    serial_start(&s, SERIAL_FENCES, 0);
    for (int i = 0; i < SERIAL_FENCES; i++) {
        int between, during;

        serial_wait_done(&s, i); /* fence i - 1 returned */
        between = open_fds();
        gate_arm(&sleeps, RDP_BOARD_AT_CALLER_SLEEPS, ANY_FENCE);
        serial_go(&s, i + 1);
        /* its result is not on the board yet: the caller goes to sleep */
        assert_true(gate_reached(&sleeps, NULL));
        during = open_fds();
        gate_open(&sleeps);
        mock_wait_fences(i + 1);
        mock_publish((uint64_t)i, PMIX_SUCCESS);
        if (i == 0) {
            continue; /* the thread's first fence makes its waiter */
        }
        if (steady < 0) {
            steady = between;
        }
        assert_int_equal(during, between);
        assert_int_equal(between, steady);
    }
    assert_int_equal(serial_join(&s), PMIX_SUCCESS);
    assert_int_equal(peer_fences(), 100 + SERIAL_FENCES - 1);
    assert_true(fds_settle_at_most(before));
}

#define FENCE_THREADS 4
#define FENCES_EACH   8

/* Several threads fencing at once, twice over: once they have exited this
 * process has the descriptors it had before. */
static void board_fences_of_several_threads_leave_no_descriptors(void **state)
{
    int before = open_fds();
    static serial_t s[FENCE_THREADS];
    uint64_t n = 0;

    for (int round = 0; round < 2; round++) {
        for (int t = 0; t < FENCE_THREADS; t++) {
            serial_start(&s[t], FENCES_EACH, FENCES_EACH);
        }
        for (int i = 0; i < FENCE_THREADS * FENCES_EACH; i++, n++) {
            mock_wait_fences((int)n + 1);
            mock_publish(n, PMIX_SUCCESS);
        }
        for (int t = 0; t < FENCE_THREADS; t++) {
            assert_int_equal(serial_join(&s[t]), PMIX_SUCCESS);
        }
        assert_true(fds_settle_at_most(before));
    }
    assert_int_equal(peer_fences(), 100 + n - 1);
}

/* Publish board fence 0 once the mock has it (no assertion: not the
 * test's thread). */
static void *publish_first(void *arg)
{
    (void)arg;
    for (int i = 0; mock_count(&mock.board_fences) < 1 && i < 60000; i++) {
        usleep(1000);
    }
    rdp_bcast_publish(mock.board, mock.board_efd, 0, PMIX_SUCCESS, -1, 0);
    return NULL;
}

/* Init and finalize again and again in one thread: PMIx_Init makes the
 * thread's waiter, finalize closes it (and takes the board's eventfd out
 * of it first); every cycle's blocking fence is completed by the thread
 * from the new board. */
static void
board_init_cycles_keep_the_descriptors_and_the_caller_path(void **state)
{
    int before, secs = 60;
    char str[64];
    pmix_info_t tmo;

    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIx_Finalize(NULL, 0);
    before = open_fds();
    for (int cycle = 0; cycle < 3; cycle++) {
        uint64_t done;
        pthread_t pub;

        assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
        /* the GET's reply comes after the board's */
        assert_int_equal(get_str(1, "late.key", NULL, 0, str, sizeof(str)),
                         PMIX_SUCCESS);
        done = rdp_client_board_caller_done();
        assert_int_equal(pthread_create(&pub, NULL, publish_first, NULL), 0);
        /* bounded: a caller the board does not wake would sleep on */
        assert_int_equal(PMIx_Fence(NULL, 0, &tmo, 1), PMIX_SUCCESS);
        assert_int_equal(pthread_join(pub, NULL), 0);
        assert_int_equal(rdp_client_board_caller_done(), done + 1);
        assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
        assert_true(fds_settle_at_most(before));
    }
}

static pmix_status_t inside_fence, inside_get_local, inside_get_remote;
static pmix_status_t inside_resolve;

static void blocking_handler(size_t id, pmix_status_t status,
                             const pmix_proc_t *source, pmix_info_t info[],
                             size_t ninfo, pmix_info_t *results,
                             size_t nresults,
                             pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_proc_t *peers;
    size_t npeers;
    pmix_nspace_t ns;

    PMIX_LOAD_NSPACE(ns, NS);
    inside_fence = PMIx_Fence(NULL, 0, NULL, 0);
    PMIX_LOAD_PROCID(&p, NS, PMIX_RANK_WILDCARD);
    inside_get_local = PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &v);
    if (v != NULL) {
        PMIX_VALUE_RELEASE(v);
    }
    PMIX_LOAD_PROCID(&p, NS, 1);
    inside_get_remote = PMIx_Get(&p, "never.fetched", NULL, 0, &v);
    inside_resolve    = PMIx_Resolve_peers(NULL, ns, &peers, &npeers);
    if (inside_resolve == PMIX_SUCCESS) {
        free(peers);
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    rdp_wait_signal(&ev_wait, PMIX_SUCCESS);
}

static void blocking_calls_in_handlers_do_not_deadlock(void **state)
{
    pmix_status_t code = -555;

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    rdp_wait_init(&ev_wait);
    assert_true(PMIx_Register_event_handler(&code, 1, NULL, 0, blocking_handler,
                                            NULL, NULL)
                >= 0);
    assert_int_equal(PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL,
                                       0, NULL, NULL),
                     PMIX_SUCCESS);
    rdp_wait_wait(&ev_wait);
    /* what needs the server is refused; what we hold is answered */
    assert_int_equal(inside_fence, PMIX_ERR_WOULD_BLOCK);
    assert_int_equal(inside_get_remote, PMIX_ERR_WOULD_BLOCK);
    assert_int_equal(inside_get_local, PMIX_SUCCESS);
    assert_int_equal(inside_resolve, PMIX_SUCCESS);
    rdp_wait_cleanup(&ev_wait);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void host_without_upcalls_answers_not_supported(void **state)
{
    pmix_info_t info;
    pmix_proc_t p;
    pmix_query_t q;
    pmix_info_t *results = NULL;
    size_t nresults      = 0;
    char *keys[]         = {PMIX_QUERY_NAMESPACES, NULL};

    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, "pub.key", "v", PMIX_STRING);
    assert_int_equal(PMIx_Publish(&info, 1), PMIX_ERR_NOT_SUPPORTED);
    PMIX_LOAD_PROCID(&p, NS, PMIX_RANK_WILDCARD);
    assert_int_equal(PMIx_Connect(&p, 1, NULL, 0), PMIX_ERR_NOT_SUPPORTED);
    memset(&q, 0, sizeof(q));
    q.keys = keys;
    assert_int_equal(PMIx_Query_info(&q, 1, &results, &nresults),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_null(results);
    assert_int_equal(PMIx_Group_construct("g", &p, 1, NULL, 0, NULL, NULL),
                     PMIX_ERR_NOT_SUPPORTED);
    /* bad input never reaches the server */
    assert_int_equal(PMIx_Publish(NULL, 1), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Connect(NULL, 0, NULL, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Fence_nb(NULL, 2, NULL, 0, NULL, NULL),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Put(PMIX_GLOBAL, NULL, NULL), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void without_a_server_init_makes_a_singleton(void **state)
{
    pmix_proc_t me;
    uint32_t u      = 0;
    pmix_value_t *v = NULL;
    pmix_info_t info;
    pmix_proc_t *peers;
    size_t npeers;

    env_clear(state);
    assert_int_equal(PMIx_Init(&me, NULL, 0), PMIX_SUCCESS);
    assert_memory_equal(me.nspace, "singleton.", 10);
    assert_int_equal(me.rank, 0);
    assert_int_equal(PMIx_Get(&me, PMIX_JOB_SIZE, NULL, 0, &v), PMIX_SUCCESS);
    assert_int_equal(v->type, PMIX_UINT32);
    u = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    assert_int_equal(u, 1);
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(PMIx_Resolve_peers(NULL, me.nspace, &peers, &npeers),
                     PMIX_SUCCESS);
    assert_int_equal(npeers, 1);
    assert_int_equal(peers[0].rank, 0);
    free(peers);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, "pub.key", "v", PMIX_STRING);
    assert_int_equal(PMIx_Publish(&info, 1), PMIX_ERR_UNREACH);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

static void unreachable_server_fails_init(void **state)
{
    setenv(RDP_ENV_SERVER_PATH, "/nonexistent/rdpmix.sock", 1);
    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_ERR_UNREACH);
    assert_false(PMIx_Initialized());
    /* namespace without any server address */
    unsetenv(RDP_ENV_SERVER_PATH);
    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_ERR_UNREACH);
    /* the URI form is understood */
    setenv("PMIX_SERVER_URI", "rdpmix.1;unix:/nonexistent/x.sock", 1);
    assert_int_equal(PMIx_Init(NULL, NULL, 0), PMIX_ERR_UNREACH);
    assert_false(PMIx_Initialized());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls_before_init_fail),
        cmocka_unit_test(abi_versions_are_answered_before_init),
#define T(f) cmocka_unit_test_setup_teardown(f, env_setup, env_clear)
        T(init_is_refcounted_and_loads_job_info),
        T(put_commit_fence_get_exchange_data),
        T(fence_results_in_shared_memory_reach_get),
        T(gets_on_app_threads_while_fences_complete),
        T(get_asks_the_server_unless_optional),
        T(get_timeout_is_honoured_and_late_replies_dropped),
        T(server_events_reach_handlers),
        T(declaring_a_model_notifies_local_handlers),
        T(declaring_a_model_returns_after_its_handlers_complete),
        T(losing_the_server_fails_requests_and_notifies),
        T(blocking_calls_in_handlers_do_not_deadlock),
        T(host_without_upcalls_answers_not_supported),
        T(without_a_server_init_makes_a_singleton),
        T(unreachable_server_fails_init),
#undef T
#define B(f) cmocka_unit_test_setup_teardown(f, board_setup, board_teardown)
        B(board_blocking_fence_completes_in_its_caller),
        B(board_caller_completes_a_fence_the_loop_was_about_to_claim),
        B(board_loop_completes_a_fence_whose_caller_looks_late),
        B(board_caller_waits_until_the_earlier_fence_is_stored),
        B(board_loop_stores_results_in_fence_order),
        B(board_fence_after_one_answered_by_message_completes),
        B(board_fence_error_reaches_the_caller_once),
        B(board_fence_answered_by_message_wakes_its_caller),
        B(board_fence_answered_twice_is_stored_once),
        B(board_lost_server_ends_a_blocking_fence),
        B(board_successive_fences_of_a_thread_open_no_descriptors),
        B(board_fences_of_several_threads_leave_no_descriptors),
        B(board_init_cycles_keep_the_descriptors_and_the_caller_path),
#undef B
    };

    return cmocka_run_group_tests_name("client_api", tests, group_setup,
                                       group_teardown);
}
