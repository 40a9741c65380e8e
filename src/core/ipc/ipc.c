/* ipc.c - client<->server UNIX-socket transport with SO_PEERCRED */
#include "config.h"
#include "core/ipc/ipc.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* Read in chunks of this size; several small messages arrive per read. */
#define RX_CHUNK (64 * 1024)
/* How long a closing connection may take to flush queued replies. */
#define CLOSE_FLUSH_SECONDS 5.0
/* Descriptors accepted per read, and queued per connection at most. */
#define RX_FDS_PER_READ 4
#define RX_FDQ_MAX      16

struct rdp_ipc_blob {
    int refcount;
    size_t len;
    uint8_t *data;
};

/* One queued outgoing frame: header bytes plus a payload that is either
 * owned (data) or shared (blob). */
typedef struct tx_item {
    rdp_list_t link;
    uint8_t hdr[RDP_MSG_HDR_LEN];
    uint8_t *data;          /* owned payload, or NULL */
    rdp_ipc_blob_t *blob;   /* shared payload, or NULL */
    size_t len;             /* payload length */
    size_t sent;            /* bytes of hdr+payload already written */
    int fd;                 /* owned; passed with the first byte, or -1 */
} tx_item_t;

/* A descriptor that arrived with the stream bytes [begin, end) (absolute
 * offsets): it belongs to the message whose header starts in that range. */
typedef struct rx_fd {
    int fd;
    uint64_t begin;
    uint64_t end;
} rx_fd_t;

enum conn_state {
    CONN_OPEN,
    CONN_CLOSING, /* flushing queued sends */
    CONN_CLOSED   /* final close posted */
};

struct rdp_ipc_conn {
    rdp_loop_t *loop;
    int fd;
    enum conn_state state;
    pmix_status_t close_why;
    rdp_ipc_cred_t cred;
    rdp_fdwatch_t *rd_watch;
    rdp_fdwatch_t *wr_watch;
    rdp_timer_t *flush_timer;
    rdp_ipc_msg_cb_t msg_cb;
    rdp_ipc_close_cb_t close_cb;
    void *arg;
    /* receive buffer: [rx_start, rx_end) holds unparsed bytes */
    uint8_t *rx;
    size_t rx_cap;
    uint8_t *own_rx; /* the connection's own buffer while rx is lent */
    size_t own_rx_cap;
    bool rx_lent;
    size_t rx_start;
    size_t rx_end;
    uint64_t rx_abs;  /* stream offset of rx[rx_start] */
    uint64_t msg_abs; /* stream offset of the message being delivered */
    size_t max_msg;
    int accept_fds; /* connecting side only; a server never does */
    int warned_fds; /* logged a refused descriptor once */
    rx_fd_t fdq[RX_FDQ_MAX];
    size_t nfdq;
    rdp_list_t txq;
};

struct rdp_ipc_listener {
    rdp_loop_t *loop;
    int fd;
    char *path;
    rdp_fdwatch_t *watch;
    rdp_ipc_accept_cb_t cb;
    void *arg;
};

static size_t ipc_max_msg(void)
{
    uint64_t v;

    (void)rdp_cfg_uint(RDP_CFG_IPC_MAX_MSG, &v); /* bad: logged, default */
    return (size_t)v;
}

/* ---- blobs ---- */

pmix_status_t rdp_ipc_blob_create(rdp_buf_t *buf, rdp_ipc_blob_t **blob_p)
{
    rdp_ipc_blob_t *blob = rdp_malloc(sizeof(*blob));

    if (blob == NULL) {
        rdp_buf_cleanup(buf);
        return PMIX_ERR_NOMEM;
    }
    blob->refcount = 1;
    blob->data     = rdp_buf_take(buf, &blob->len);
    *blob_p        = blob;
    return PMIX_SUCCESS;
}

void rdp_ipc_blob_unref(rdp_ipc_blob_t *blob)
{
    if (blob == NULL || --blob->refcount > 0) {
        return;
    }
    rdp_free(blob->data);
    rdp_free(blob);
}

/* ---- connection lifetime ---- */

static void tx_item_free(tx_item_t *item)
{
    if (item->fd >= 0) {
        close(item->fd);
    }
    rdp_free(item->data);
    rdp_ipc_blob_unref(item->blob);
    rdp_free(item);
}

static void conn_free(rdp_ipc_conn_t *conn)
{
    rdp_list_t *l;

    while ((l = rdp_list_pop_front(&conn->txq)) != NULL) {
        tx_item_free(rdp_container_of(l, tx_item_t, link));
    }
    for (size_t i = 0; i < conn->nfdq; i++) {
        close(conn->fdq[i].fd);
    }
    rdp_fdwatch_destroy(conn->rd_watch);
    rdp_fdwatch_destroy(conn->wr_watch);
    rdp_timer_destroy(conn->flush_timer);
    if (conn->fd >= 0) {
        close(conn->fd);
    }
    rdp_free(conn->rx);
    rdp_free(conn);
}

static pmix_status_t conn_create(rdp_loop_t *loop, int fd,
                                 rdp_ipc_conn_t **conn_p)
{
    rdp_ipc_conn_t *conn = rdp_calloc(1, sizeof(*conn));

    if (conn == NULL) {
        return PMIX_ERR_NOMEM;
    }
    conn->loop    = loop;
    conn->fd      = fd;
    conn->state   = CONN_OPEN;
    conn->max_msg = ipc_max_msg();
    rdp_list_init(&conn->txq);
    *conn_p = conn;
    return PMIX_SUCCESS;
}

/* Runs from the mailbox, never inside a user callback, so the callee may
 * safely forget the conn. */
static void conn_final_close(void *arg)
{
    rdp_ipc_conn_t *conn = arg;

    if (conn->close_cb != NULL) {
        conn->close_cb(conn, conn->close_why, conn->arg);
    }
    conn_free(conn);
}

static void conn_finish(rdp_ipc_conn_t *conn)
{
    if (conn->state == CONN_CLOSED) {
        return;
    }
    conn->state = CONN_CLOSED;
    if (conn->rd_watch != NULL) {
        rdp_fdwatch_disable(conn->rd_watch);
    }
    if (conn->wr_watch != NULL) {
        rdp_fdwatch_disable(conn->wr_watch);
    }
    if (conn->flush_timer != NULL) {
        rdp_timer_cancel(conn->flush_timer);
    }
    /* close the fd now so the peer sees EOF promptly */
    if (conn->fd >= 0) {
        close(conn->fd);
        conn->fd = -1;
    }
    if (rdp_loop_post(conn->loop, conn_final_close, conn) != PMIX_SUCCESS) {
        /* cannot defer: leak rather than free under a caller's feet */
        rdp_log_error(IPC, "cannot schedule connection close");
    }
}

static void flush_timeout(void *arg)
{
    rdp_ipc_conn_t *conn = arg;

    rdp_log_warn(IPC, "peer pid %d did not drain its socket; dropping %zu "
                      "queued messages",
                 (int)conn->cred.pid, rdp_list_length(&conn->txq));
    conn_finish(conn);
}

void rdp_ipc_conn_close(rdp_ipc_conn_t *conn, pmix_status_t why)
{
    if (conn->state != CONN_OPEN) {
        return;
    }
    conn->close_why = why;
    conn->state     = CONN_CLOSING;
    if (conn->rd_watch != NULL) {
        rdp_fdwatch_disable(conn->rd_watch);
    }
    if (rdp_list_is_empty(&conn->txq) || conn->wr_watch == NULL) {
        conn_finish(conn);
        return;
    }
    if (rdp_timer_create(conn->loop, flush_timeout, conn, &conn->flush_timer)
        != PMIX_SUCCESS) {
        conn_finish(conn);
        return;
    }
    rdp_timer_start(conn->flush_timer, CLOSE_FLUSH_SECONDS);
}

/* ---- sending ---- */

/* sendmsg with one descriptor (SCM_RIGHTS) attached to the first byte. */
static ssize_t send_with_fd(int sock, struct iovec *iov, int iovcnt, int fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg;
    struct cmsghdr *cm;

    memset(&msg, 0, sizeof(msg));
    memset(&ctl, 0, sizeof(ctl));
    msg.msg_iov        = iov;
    msg.msg_iovlen     = (size_t)iovcnt;
    msg.msg_control    = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    cm                 = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level     = SOL_SOCKET;
    cm->cmsg_type      = SCM_RIGHTS;
    cm->cmsg_len       = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

/* Write as much of the queue as the socket takes. Returns an error status
 * on a hard socket error, PMIX_SUCCESS otherwise. */
static pmix_status_t tx_flush(rdp_ipc_conn_t *conn)
{
    while (!rdp_list_is_empty(&conn->txq)) {
        tx_item_t *item = rdp_container_of(conn->txq.next, tx_item_t, link);
        const uint8_t *payload = (item->blob != NULL) ? item->blob->data
                                                      : item->data;
        struct iovec iov[2];
        int iovcnt = 0;
        ssize_t n;

        if (item->sent < RDP_MSG_HDR_LEN) {
            iov[iovcnt].iov_base = item->hdr + item->sent;
            iov[iovcnt].iov_len  = RDP_MSG_HDR_LEN - item->sent;
            iovcnt++;
            if (item->len > 0) {
                iov[iovcnt].iov_base = (void *)payload;
                iov[iovcnt].iov_len  = item->len;
                iovcnt++;
            }
        } else {
            size_t off          = item->sent - RDP_MSG_HDR_LEN;
            iov[iovcnt].iov_base = (void *)(payload + off);
            iov[iovcnt].iov_len  = item->len - off;
            iovcnt++;
        }
        if (item->fd >= 0) {
            n = send_with_fd(conn->fd, iov, iovcnt, item->fd);
        } else {
            /* never writev: a peer that died would raise SIGPIPE in a host
             * that does not ignore it */
            struct msghdr msg = {.msg_iov = iov, .msg_iovlen = iovcnt};
            n = sendmsg(conn->fd, &msg, MSG_NOSIGNAL);
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return PMIX_SUCCESS;
            }
            if (errno == EINTR) {
                continue;
            }
            rdp_log_debug(IPC, "write to pid %d failed: %m",
                          (int)conn->cred.pid);
            return PMIX_ERR_LOST_CONNECTION;
        }
        if (item->fd >= 0) {
            /* the kernel holds its own reference now */
            close(item->fd);
            item->fd = -1;
        }
        item->sent += (size_t)n;
        if (item->sent == RDP_MSG_HDR_LEN + item->len) {
            rdp_list_del(&item->link);
            tx_item_free(item);
        }
    }
    return PMIX_SUCCESS;
}

static void update_write_watch(rdp_ipc_conn_t *conn)
{
    if (conn->wr_watch == NULL) {
        return;
    }
    if (rdp_list_is_empty(&conn->txq)) {
        rdp_fdwatch_disable(conn->wr_watch);
        if (conn->state == CONN_CLOSING) {
            conn_finish(conn);
        }
    } else {
        rdp_fdwatch_enable(conn->wr_watch);
    }
}

static void on_writable(int fd, int events, void *arg)
{
    rdp_ipc_conn_t *conn = arg;

    if (tx_flush(conn) != PMIX_SUCCESS) {
        if (conn->state == CONN_OPEN) {
            conn->close_why = PMIX_ERR_LOST_CONNECTION;
        }
        conn_finish(conn);
        return;
    }
    update_write_watch(conn);
}

/* Queue one frame.  Takes @a data and @a fd (owned, or -1) whatever
 * happens; takes a reference on @a blob when queued. */
static pmix_status_t enqueue(rdp_ipc_conn_t *conn, uint16_t cmd, uint32_t tag,
                             uint8_t *data, rdp_ipc_blob_t *blob, size_t len,
                             int fd)
{
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, cmd, tag, 0};
    tx_item_t *item;
    pmix_status_t status;

    if (conn->state != CONN_OPEN) {
        status = PMIX_ERR_UNREACH;
        goto err_free;
    }
    if (len > UINT32_MAX) {
        rdp_log_error(IPC, "message of %zu bytes exceeds the frame limit",
                      len);
        status = PMIX_ERR_BAD_PARAM;
        goto err_free;
    }
    item = rdp_calloc(1, sizeof(*item));
    if (item == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_free;
    }
    hdr.length = (uint32_t)len;
    rdp_msg_hdr_encode(&hdr, item->hdr);
    item->data = data;
    item->len  = len;
    item->fd   = fd;
    if (blob != NULL) {
        blob->refcount++;
        item->blob = blob;
    }
    rdp_list_push_back(&conn->txq, &item->link);
    if (conn->wr_watch == NULL) {
        return PMIX_SUCCESS; /* not started yet: flushed at start */
    }
    /* fast path: try to write now instead of waiting a loop turn */
    status = tx_flush(conn);
    if (status != PMIX_SUCCESS) {
        rdp_ipc_conn_close(conn, status);
        conn_finish(conn);
        return PMIX_SUCCESS; /* queued; the close reports the loss */
    }
    update_write_watch(conn);
    return PMIX_SUCCESS;

err_free:
    rdp_free(data);
    if (fd >= 0) {
        close(fd);
    }
    return status;
}

pmix_status_t rdp_ipc_send(rdp_ipc_conn_t *conn, uint16_t cmd, uint32_t tag,
                           rdp_buf_t *buf)
{
    size_t len;
    uint8_t *data = rdp_buf_take(buf, &len);

    return enqueue(conn, cmd, tag, data, NULL, len, -1);
}

pmix_status_t rdp_ipc_send_blob(rdp_ipc_conn_t *conn, uint16_t cmd,
                                uint32_t tag, rdp_ipc_blob_t *blob)
{
    return enqueue(conn, cmd, tag, NULL, blob, blob->len, -1);
}

/* A private duplicate of a caller's descriptor for one queued frame. */
static pmix_status_t dup_fd(int fd, int *dup_p)
{
    int d;

    if (fd < 0) {
        rdp_log_error(IPC, "cannot pass descriptor %d", fd);
        return PMIX_ERR_BAD_PARAM;
    }
    d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (d < 0) {
        rdp_log_error(IPC, "cannot duplicate descriptor %d: %m", fd);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    *dup_p = d;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_send_fd(rdp_ipc_conn_t *conn, uint16_t cmd, uint32_t tag,
                              rdp_buf_t *buf, int fd)
{
    size_t len;
    uint8_t *data = rdp_buf_take(buf, &len);
    pmix_status_t status;
    int d;

    status = dup_fd(fd, &d);
    if (status != PMIX_SUCCESS) {
        rdp_free(data);
        return status;
    }
    return enqueue(conn, cmd, tag, data, NULL, len, d);
}

pmix_status_t rdp_ipc_send_blob_fd(rdp_ipc_conn_t *conn, uint16_t cmd,
                                   uint32_t tag, rdp_ipc_blob_t *blob, int fd)
{
    pmix_status_t status;
    int d;

    status = dup_fd(fd, &d);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    return enqueue(conn, cmd, tag, NULL, blob, blob->len, d);
}

pmix_status_t rdp_ipc_send_copy(rdp_ipc_conn_t *conn, uint16_t cmd,
                                uint32_t tag, const void *data, size_t len)
{
    uint8_t *copy = NULL;

    if (len > 0) {
        copy = rdp_malloc(len);
        if (copy == NULL) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, data, len);
    }
    return enqueue(conn, cmd, tag, copy, NULL, len, -1);
}

/* ---- receiving ---- */

static pmix_status_t rx_reserve(rdp_ipc_conn_t *conn, size_t need)
{
    size_t used = conn->rx_end - conn->rx_start;
    uint8_t *nrx;
    size_t ncap;

    /* slide unparsed bytes to the front first */
    if (conn->rx_start > 0) {
        memmove(conn->rx, conn->rx + conn->rx_start, used);
        conn->rx_start = 0;
        conn->rx_end   = used;
    }
    if (conn->rx_cap >= need) {
        return PMIX_SUCCESS;
    }
    ncap = (conn->rx_cap == 0) ? RX_CHUNK : conn->rx_cap;
    while (ncap < need) {
        ncap *= 2;
    }
    nrx = rdp_realloc(conn->rx, ncap);
    if (nrx == NULL) {
        return PMIX_ERR_NOMEM;
    }
    conn->rx     = nrx;
    conn->rx_cap = ncap;
    return PMIX_SUCCESS;
}

/* Close queued descriptors that arrived with bytes before stream offset
 * @a abs: their message has been delivered. */
static void fdq_drop_before(rdp_ipc_conn_t *conn, uint64_t abs)
{
    size_t n = 0;

    while (n < conn->nfdq && conn->fdq[n].end <= abs) {
        rdp_log_debug(IPC, "pid %d passed a descriptor nobody took; closed",
                      (int)conn->cred.pid);
        close(conn->fdq[n].fd);
        n++;
    }
    if (n > 0) {
        memmove(conn->fdq, conn->fdq + n, (conn->nfdq - n) * sizeof(rx_fd_t));
        conn->nfdq -= n;
    }
}

int rdp_ipc_conn_take_fd(rdp_ipc_conn_t *conn)
{
    int fd;

    fdq_drop_before(conn, conn->msg_abs);
    if (conn->nfdq == 0 || conn->fdq[0].begin > conn->msg_abs) {
        return -1;
    }
    fd = conn->fdq[0].fd;
    memmove(conn->fdq, conn->fdq + 1, (conn->nfdq - 1) * sizeof(rx_fd_t));
    conn->nfdq--;
    return fd;
}

/* Keep (or close) the descriptors a read brought with stream bytes
 * [begin, end). */
static void rx_take_fds(rdp_ipc_conn_t *conn, struct msghdr *msg,
                        uint64_t begin, uint64_t end)
{
    struct cmsghdr *cm;

    if ((msg->msg_flags & MSG_CTRUNC) && !conn->warned_fds) {
        /* once per connection: a hostile peer must not flood the log */
        rdp_log_warn(IPC, "pid %d passed more descriptors than accepted",
                     (int)conn->cred.pid);
        conn->warned_fds = 1;
    }
    for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
        size_t nfd;

        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int fd;

            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (!conn->accept_fds || conn->nfdq == RX_FDQ_MAX) {
                if (!conn->warned_fds) {
                    rdp_log_warn(IPC,
                                 "pid %d passed a descriptor %s; closed "
                                 "(and any more it passes)",
                                 (int)conn->cred.pid,
                                 conn->accept_fds ? "beyond the queue limit"
                                                  : "to a server");
                    conn->warned_fds = 1;
                }
                close(fd);
                continue;
            }
            conn->fdq[conn->nfdq].fd    = fd;
            conn->fdq[conn->nfdq].begin = begin;
            conn->fdq[conn->nfdq].end   = end;
            conn->nfdq++;
        }
    }
}

/* read() that also receives descriptors (SCM_RIGHTS, close-on-exec). */
static ssize_t rx_read(rdp_ipc_conn_t *conn, void *dst, size_t room)
{
    union {
        char buf[CMSG_SPACE(RX_FDS_PER_READ * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {dst, room};
    struct msghdr msg;
    uint64_t begin = conn->rx_abs + (conn->rx_end - conn->rx_start);
    ssize_t n;

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov        = &iov;
    msg.msg_iovlen     = 1;
    msg.msg_control    = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    n                  = recvmsg(conn->fd, &msg, MSG_CMSG_CLOEXEC);
    if (n > 0 && msg.msg_controllen > 0) {
        rx_take_fds(conn, &msg, begin, begin + (uint64_t)n);
    }
    return n;
}

/* Deliver every complete frame in the buffer. Returns the number of bytes
 * the next frame still needs in the buffer (at least one more read). */
static pmix_status_t rx_parse(rdp_ipc_conn_t *conn, size_t *need_p)
{
    while (conn->state == CONN_OPEN) {
        size_t avail = conn->rx_end - conn->rx_start;
        rdp_msg_hdr_t hdr;
        pmix_status_t status;

        if (avail < RDP_MSG_HDR_LEN) {
            *need_p = RDP_MSG_HDR_LEN;
            return PMIX_SUCCESS;
        }
        status = rdp_msg_hdr_decode(conn->rx + conn->rx_start, &hdr);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(IPC, "pid %d sent a malformed message header; "
                               "closing its connection",
                          (int)conn->cred.pid);
            return PMIX_ERR_UNPACK_FAILURE;
        }
        if (hdr.length > conn->max_msg) {
            rdp_log_error(IPC, "pid %d sent a %u-byte message (limit %zu); "
                               "closing its connection",
                          (int)conn->cred.pid, hdr.length, conn->max_msg);
            return PMIX_ERR_BAD_PARAM;
        }
        if (avail < RDP_MSG_HDR_LEN + (size_t)hdr.length) {
            *need_p = RDP_MSG_HDR_LEN + (size_t)hdr.length;
            return PMIX_SUCCESS;
        }
        conn->rx_start += RDP_MSG_HDR_LEN + hdr.length;
        conn->msg_abs = conn->rx_abs;
        conn->rx_abs += RDP_MSG_HDR_LEN + hdr.length;
        conn->msg_cb(conn, &hdr,
                     conn->rx + conn->rx_start - hdr.length, hdr.length,
                     conn->arg);
        /* descriptors that came with this message (or before it) and
         * were not taken are closed */
        fdq_drop_before(conn, conn->rx_abs);
    }
    *need_p = RDP_MSG_HDR_LEN;
    return PMIX_SUCCESS;
}

/*
 * The receive buffer lent to whichever connection is being read: a
 * message is read and delivered in memory already faulted in by earlier
 * messages, where each connection's own buffer was fresh memory grown to
 * its largest message (a 64 KiB commit: 64 + 128 KiB of fresh pages and a
 * realloc per client; a server's back-to-back arrivals took 130-150 us
 * each with them, 85-115 us without; bench/RESULTS.md, helper modex8).
 * A frame not complete when the socket is drained stays with its
 * connection (rx_give_back).  One buffer per process: a second thread
 * reading at the same time (or a nested read) uses its connection's own
 * buffer as before.
 */
static struct {
    uint8_t *data;
    size_t cap;
    bool busy; /* lent; taken and given back atomically */
} rx_shared;
/* A lent buffer grown beyond this is given back to the system. */
#define RX_SHARED_KEEP_MAX ((size_t)4 << 20)

/* Lend rx_shared to @a conn, with its unparsed bytes (at most a chunk)
 * moved in; false when it is in use, or the connection holds more of a
 * frame (its own buffer then goes on as before). */
static bool rx_lend(rdp_ipc_conn_t *conn)
{
    size_t used = conn->rx_end - conn->rx_start;

    if (used > RX_CHUNK
        || __atomic_exchange_n(&rx_shared.busy, true, __ATOMIC_ACQUIRE)) {
        return false;
    }
    if (rx_shared.cap < used + RX_CHUNK) {
        uint8_t *d = rdp_realloc(rx_shared.data, used + RX_CHUNK);

        if (d == NULL) {
            __atomic_store_n(&rx_shared.busy, false, __ATOMIC_RELEASE);
            return false;
        }
        rx_shared.data = d;
        rx_shared.cap  = used + RX_CHUNK;
    }
    if (used > 0) {
        memcpy(rx_shared.data, conn->rx + conn->rx_start, used);
    }
    conn->own_rx     = conn->rx;
    conn->own_rx_cap = conn->rx_cap;
    conn->rx_lent    = true;
    conn->rx         = rx_shared.data;
    conn->rx_cap     = rx_shared.cap;
    conn->rx_start   = 0;
    conn->rx_end     = used;
    return true;
}

/* Take rx_shared back from @a conn (possibly grown by rx_reserve).  What
 * is left of an incomplete frame stays the connection's: up to a chunk
 * copied into its own buffer (sized to it); more keeps the lent buffer,
 * whose place a new one takes (a large frame is not copied to and fro
 * at every read).  An empty own buffer is freed. */
static void rx_give_back(rdp_ipc_conn_t *conn)
{
    size_t used    = conn->rx_end - conn->rx_start;
    uint8_t *own   = conn->own_rx;
    size_t own_cap = conn->own_rx_cap;

    conn->own_rx  = NULL;
    conn->rx_lent = false;
    if (used > RX_CHUNK) {
        rdp_free(own); /* the connection keeps the lent buffer */
        rx_shared.data = NULL;
        rx_shared.cap  = 0;
        __atomic_store_n(&rx_shared.busy, false, __ATOMIC_RELEASE);
        return;
    }
    rx_shared.data = conn->rx;
    rx_shared.cap  = conn->rx_cap;
    if (used > 0 && own_cap < used) {
        uint8_t *d = rdp_realloc(own, used);

        if (d == NULL) { /* keep the lent buffer, as for a large rest */
            rdp_free(own);
            rx_shared.data = NULL;
            rx_shared.cap  = 0;
            __atomic_store_n(&rx_shared.busy, false, __ATOMIC_RELEASE);
            return;
        }
        own     = d;
        own_cap = used;
    }
    if (used > 0) {
        memcpy(own, conn->rx + conn->rx_start, used);
    } else {
        rdp_free(own);
        own     = NULL;
        own_cap = 0;
    }
    conn->rx       = own;
    conn->rx_cap   = own_cap;
    conn->rx_start = 0;
    conn->rx_end   = used;
    if (rx_shared.cap > RX_SHARED_KEEP_MAX) {
        rdp_free(rx_shared.data);
        rx_shared.data = NULL;
        rx_shared.cap  = 0;
    }
    __atomic_store_n(&rx_shared.busy, false, __ATOMIC_RELEASE);
}

/* After a read with the connection's own buffer (a large frame read in
 * pieces, or rx_shared busy): once every frame is parsed the buffer is
 * not kept, as a lent one would not be.  It becomes rx_shared when that
 * has none (a large frame took it), else it is freed. */
static void rx_drop_idle(rdp_ipc_conn_t *conn)
{
    uint8_t *idle   = conn->rx;
    size_t idle_cap = conn->rx_cap;

    if (idle == NULL || conn->rx_end != conn->rx_start) {
        return;
    }
    conn->rx       = NULL;
    conn->rx_cap   = 0;
    conn->rx_start = 0;
    conn->rx_end   = 0;
    if (idle_cap <= RX_SHARED_KEEP_MAX
        && !__atomic_exchange_n(&rx_shared.busy, true, __ATOMIC_ACQUIRE)) {
        if (rx_shared.data == NULL) {
            rx_shared.data = idle;
            rx_shared.cap  = idle_cap;
            idle           = NULL;
        }
        __atomic_store_n(&rx_shared.busy, false, __ATOMIC_RELEASE);
    }
    rdp_free(idle);
}

size_t rdp_ipc_conn_rx_capacity(const rdp_ipc_conn_t *conn)
{
    return conn->rx_lent ? conn->own_rx_cap : conn->rx_cap;
}

static void read_frames(rdp_ipc_conn_t *conn)
{
    size_t need = RDP_MSG_HDR_LEN;
    pmix_status_t status;

    for (int rounds = 0; rounds < 16 && conn->state == CONN_OPEN;
         rounds++) {
        size_t room;
        ssize_t n;

        /* room for the frame in progress, and at least one more chunk */
        status = rx_reserve(conn, (conn->rx_end - conn->rx_start)
                                      + ((need > RX_CHUNK) ? need : RX_CHUNK));
        if (status != PMIX_SUCCESS) {
            rdp_log_error(IPC, "out of memory reading from pid %d",
                          (int)conn->cred.pid);
            rdp_ipc_conn_close(conn, status);
            return;
        }
        room = conn->rx_cap - conn->rx_end;
        n    = rx_read(conn, conn->rx + conn->rx_end, room);
        if (n == 0) {
            rdp_ipc_conn_close(conn, PMIX_ERR_LOST_CONNECTION);
            return;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return;
            }
            rdp_log_debug(IPC, "read from pid %d failed: %m",
                          (int)conn->cred.pid);
            rdp_ipc_conn_close(conn, PMIX_ERR_LOST_CONNECTION);
            return;
        }
        conn->rx_end += (size_t)n;
        status = rx_parse(conn, &need);
        if (status != PMIX_SUCCESS) {
            rdp_ipc_conn_close(conn, status);
            return;
        }
        if ((size_t)n < room) {
            return; /* drained the socket */
        }
    }
}

static void on_readable(int fd, int events, void *arg)
{
    rdp_ipc_conn_t *conn = arg;
    bool lent            = rx_lend(conn);

    (void)fd;
    (void)events;
    read_frames(conn);
    if (lent) {
        rx_give_back(conn);
    } else {
        rx_drop_idle(conn);
    }
}

void rdp_ipc_conn_start(rdp_ipc_conn_t *conn, rdp_ipc_msg_cb_t msg_cb,
                        rdp_ipc_close_cb_t close_cb, void *arg)
{
    pmix_status_t status;

    conn->msg_cb   = msg_cb;
    conn->close_cb = close_cb;
    conn->arg      = arg;
    status = rdp_fdwatch_create(conn->loop, conn->fd, RDP_FD_READ,
                                on_readable, conn, &conn->rd_watch);
    if (status == PMIX_SUCCESS) {
        status = rdp_fdwatch_create(conn->loop, conn->fd, RDP_FD_WRITE,
                                    on_writable, conn, &conn->wr_watch);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(IPC, "cannot watch connection: %s",
                      rdp_status_name(status));
        conn->state     = CONN_CLOSING;
        conn->close_why = status;
        conn_finish(conn);
        return;
    }
    rdp_fdwatch_enable(conn->rd_watch);
    update_write_watch(conn);
    /* bytes may already be buffered from a synchronous handshake */
    if (conn->rx_end > conn->rx_start) {
        size_t need;
        status = rx_parse(conn, &need);
        if (status != PMIX_SUCCESS) {
            rdp_ipc_conn_close(conn, status);
        }
    }
}

void rdp_ipc_conn_set_arg(rdp_ipc_conn_t *conn, void *arg)
{
    conn->arg = arg;
}

const rdp_ipc_cred_t *rdp_ipc_conn_cred(const rdp_ipc_conn_t *conn)
{
    return &conn->cred;
}

/* ---- listener ---- */

static int set_nonblock_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void on_accept(int lfd, int events, void *arg)
{
    rdp_ipc_listener_t *listener = arg;

    for (int i = 0; i < 64; i++) {
        struct ucred uc;
        socklen_t uclen = sizeof(uc);
        rdp_ipc_conn_t *conn;
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                rdp_log_warn(IPC, "accept on %s failed: %m", listener->path);
            }
            return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &uclen) != 0) {
            rdp_log_error(IPC, "cannot read peer credentials: %m");
            close(fd);
            continue;
        }
        if (conn_create(listener->loop, fd, &conn) != PMIX_SUCCESS) {
            close(fd);
            continue;
        }
        conn->cred.pid = uc.pid;
        conn->cred.uid = uc.uid;
        conn->cred.gid = uc.gid;
        listener->cb(conn, &conn->cred, listener->arg);
    }
}

static pmix_status_t fill_sockaddr(const char *path, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path)) {
        rdp_log_error(IPC, "socket path too long (%zu bytes): %s",
                      strlen(path), path);
        return PMIX_ERR_BAD_PARAM;
    }
    strcpy(sa->sun_path, path);
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_listen(rdp_loop_t *loop, const char *path,
                             rdp_ipc_accept_cb_t cb, void *arg,
                             rdp_ipc_listener_t **listener_p)
{
    rdp_ipc_listener_t *listener;
    struct sockaddr_un sa;
    pmix_status_t status;

    status = fill_sockaddr(path, &sa);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    listener = rdp_calloc(1, sizeof(*listener));
    if (listener == NULL) {
        return PMIX_ERR_NOMEM;
    }
    listener->path = rdp_strdup(path);
    if (listener->path == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err_free;
    }
    listener->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          0);
    if (listener->fd < 0) {
        rdp_log_error(IPC, "cannot create socket: %m");
        status = PMIX_ERR_OUT_OF_RESOURCE;
        goto err_free_path;
    }
    unlink(path);
    if (bind(listener->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        rdp_log_error(IPC, "cannot bind %s: %m", path);
        status = PMIX_ERR_INIT;
        goto err_close;
    }
    if (chmod(path, 0600) != 0 || listen(listener->fd, SOMAXCONN) != 0) {
        rdp_log_error(IPC, "cannot listen on %s: %m", path);
        status = PMIX_ERR_INIT;
        goto err_unlink;
    }
    status = rdp_fdwatch_create(loop, listener->fd, RDP_FD_READ, on_accept,
                                listener, &listener->watch);
    if (status != PMIX_SUCCESS) {
        goto err_unlink;
    }
    listener->loop = loop;
    listener->cb   = cb;
    listener->arg  = arg;
    rdp_fdwatch_enable(listener->watch);
    *listener_p = listener;
    return PMIX_SUCCESS;

err_unlink:
    unlink(path);
err_close:
    close(listener->fd);
err_free_path:
    rdp_free(listener->path);
err_free:
    rdp_free(listener);
    return status;
}

void rdp_ipc_listener_destroy(rdp_ipc_listener_t *listener)
{
    if (listener == NULL) {
        return;
    }
    rdp_fdwatch_destroy(listener->watch);
    close(listener->fd);
    unlink(listener->path);
    rdp_free(listener->path);
    rdp_free(listener);
}

/* ---- client side ---- */

pmix_status_t rdp_ipc_connect(rdp_loop_t *loop, const char *path,
                              rdp_ipc_conn_t **conn_p)
{
    struct sockaddr_un sa;
    rdp_ipc_conn_t *conn;
    pmix_status_t status;
    int fd;

    status = fill_sockaddr(path, &sa);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rdp_log_error(IPC, "cannot create socket: %m");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    /* blocking connect: a UNIX socket connects at once or fails; a full
     * backlog just makes us wait our turn */
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno == EINTR) {
            continue;
        }
        rdp_log_error(IPC, "cannot connect to server at %s: %m", path);
        close(fd);
        return PMIX_ERR_UNREACH;
    }
    if (set_nonblock_cloexec(fd) != 0) {
        rdp_log_error(IPC, "cannot set socket flags: %m");
        close(fd);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    status = conn_create(loop, fd, &conn);
    if (status != PMIX_SUCCESS) {
        close(fd);
        return status;
    }
    conn->accept_fds = 1; /* the server passes shared-memory results */
    {
        struct ucred uc;
        socklen_t uclen = sizeof(uc);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &uclen) == 0) {
            conn->cred.pid = uc.pid;
            conn->cred.uid = uc.uid;
            conn->cred.gid = uc.gid;
        }
    }
    *conn_p = conn;
    return PMIX_SUCCESS;
}

static pmix_status_t poll_fd(int fd, short events, double deadline)
{
    struct pollfd pfd = {fd, events, 0};
    double left       = deadline - rdp_time_now();
    int rc;

    if (left <= 0) {
        return PMIX_ERR_TIMEOUT;
    }
    rc = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (rc == 0) {
        return PMIX_ERR_TIMEOUT;
    }
    if (rc < 0 && errno != EINTR) {
        return PMIX_ERR_LOST_CONNECTION;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_sync_request(rdp_ipc_conn_t *conn, uint16_t cmd,
                                   uint32_t tag, const rdp_buf_t *payload,
                                   rdp_msg_hdr_t *hdr_p, void **reply_p,
                                   double timeout)
{
    double deadline = rdp_time_now() + timeout;
    pmix_status_t status;
    rdp_msg_hdr_t hdr;
    size_t need = RDP_MSG_HDR_LEN;
    void *reply;

    status = rdp_ipc_send_copy(conn, cmd, tag, payload->data, payload->size);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    while (!rdp_list_is_empty(&conn->txq)) {
        status = tx_flush(conn);
        if (status == PMIX_SUCCESS && !rdp_list_is_empty(&conn->txq)) {
            status = poll_fd(conn->fd, POLLOUT, deadline);
        }
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    for (;;) {
        size_t avail = conn->rx_end - conn->rx_start;
        ssize_t n;

        if (avail >= RDP_MSG_HDR_LEN) {
            status = rdp_msg_hdr_decode(conn->rx + conn->rx_start, &hdr);
            if (status != PMIX_SUCCESS || hdr.length > conn->max_msg) {
                rdp_log_error(IPC, "malformed reply from server");
                return PMIX_ERR_UNPACK_FAILURE;
            }
            need = RDP_MSG_HDR_LEN + hdr.length;
            if (avail >= need) {
                break;
            }
        }
        status = rx_reserve(conn, (need > avail ? need : avail) + RX_CHUNK);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        n = read(conn->fd, conn->rx + conn->rx_end,
                 conn->rx_cap - conn->rx_end);
        if (n > 0) {
            conn->rx_end += (size_t)n;
            continue;
        }
        if (n == 0) {
            return PMIX_ERR_LOST_CONNECTION;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            status = poll_fd(conn->fd, POLLIN, deadline);
            if (status != PMIX_SUCCESS) {
                return status;
            }
            continue;
        }
        return PMIX_ERR_LOST_CONNECTION;
    }
    reply = rdp_malloc(hdr.length > 0 ? hdr.length : 1);
    if (reply == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(reply, conn->rx + conn->rx_start + RDP_MSG_HDR_LEN, hdr.length);
    conn->rx_start += RDP_MSG_HDR_LEN + hdr.length;
    conn->rx_abs += RDP_MSG_HDR_LEN + hdr.length;
    *hdr_p   = hdr;
    *reply_p = reply;
    return PMIX_SUCCESS;
}

/* ---- sealed shared memory ---- */

pmix_status_t rdp_ipc_memfd_open(int *fd_p)
{
    int fd = memfd_create("rdpmix", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0) {
        rdp_log_debug(IPC, "memfd_create failed: %m");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    *fd_p = fd;
    return PMIX_SUCCESS;
}

/* write(), not a shared mapping: the kernel fills its pages without a
 * page fault each, and no writable mapping can outlive the seal */
static pmix_status_t memfd_write(int fd, const void *data, size_t len,
                                 off_t off)
{
    const uint8_t *p = data;
    size_t left      = len;

    while (left > 0) {
        ssize_t n = off < 0 ? write(fd, p, left) : pwrite(fd, p, left, off);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rdp_log_debug(IPC, "cannot fill a memfd with %zu bytes: %m", len);
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        p += n;
        left -= (size_t)n;
        if (off >= 0) {
            off += n;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_memfd_append(int fd, const void *data, size_t len)
{
    return memfd_write(fd, data, len, -1);
}

pmix_status_t rdp_ipc_memfd_pwrite(int fd, const void *data, size_t len,
                                   size_t off)
{
    return memfd_write(fd, data, len, (off_t)off);
}

pmix_status_t rdp_ipc_memfd_seal(int fd)
{
    if (fcntl(fd, F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
        != 0) {
        rdp_log_debug(IPC, "cannot seal a memfd: %m");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_memfd_create(const void *data, size_t len, int *fd_p)
{
    pmix_status_t st;
    int fd;

    if (len == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = rdp_ipc_memfd_open(&fd);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    st = rdp_ipc_memfd_append(fd, data, len);
    if (st == PMIX_SUCCESS) {
        st = rdp_ipc_memfd_seal(fd);
    }
    if (st != PMIX_SUCCESS) {
        close(fd);
        return st;
    }
    *fd_p = fd;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ipc_memfd_map(int fd, size_t len, const void **map_p)
{
    const int need = F_SEAL_SHRINK | F_SEAL_WRITE;
    struct stat st;
    void *map;
    int seals;

    if (fd < 0 || len == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* only a memfd that can neither shrink (SIGBUS) nor change under us */
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & need) != need) {
        rdp_log_error(IPC, "shared memory from the server is not sealed");
        return PMIX_ERR_BAD_PARAM;
    }
    if (fstat(fd, &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size < len) {
        rdp_log_error(IPC,
                      "shared memory from the server is shorter than "
                      "the %zu bytes announced",
                      len);
        return PMIX_ERR_BAD_PARAM;
    }
    map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        rdp_log_error(IPC, "cannot map %zu bytes of shared memory: %m", len);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    *map_p = map;
    return PMIX_SUCCESS;
}

void rdp_ipc_memfd_unmap(const void *map, size_t len)
{
    if (map != NULL && len > 0) {
        munmap((void *)map, len);
    }
}
