/* chan.c - framed, nonblocking stream channel driven by the loop */
#include "config.h"
#include "run/chan.h"
#include "run/util.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536

typedef struct out_frame {
    rdp_list_t link;
    uint8_t hdr[RDP_MSG_HDR_LEN];
    uint8_t *data; /* owned payload */
    size_t len;    /* payload bytes */
    size_t off;    /* bytes of hdr+payload already written */
} out_frame_t;

struct rdp_run_chan {
    rdp_loop_t *loop;
    int fd;
    rdp_fdwatch_t *rwatch;
    rdp_fdwatch_t *wwatch;
    rdp_timer_t *close_timer; /* defers close_cb out of chan calls */
    rdp_run_chan_msg_cb_t msg_cb;
    rdp_run_chan_close_cb_t close_cb;
    rdp_run_chan_drain_cb_t drain_cb;
    void *arg;
    size_t max_msg;
    size_t low_water;
    int above_low;
    /* receive state */
    uint8_t hdr[RDP_MSG_HDR_LEN];
    size_t hdr_got;
    rdp_msg_hdr_t cur;
    uint8_t *payload;
    size_t payload_got;
    /* send state */
    rdp_list_t outq;
    size_t queued;
    /* lifecycle */
    int closing;  /* no more sends accepted */
    int shutdown; /* close once the queue is empty */
    int closed;   /* close_cb called or scheduled */
    pmix_status_t why;
    int in_cb;     /* depth of user callbacks running */
    int destroyed; /* destroy requested inside a callback */
};

static void free_frame(out_frame_t *f)
{
    rdp_free(f->data);
    rdp_free(f);
}

/* A destroy requested inside a callback happens once none is running. */
static void finish_destroy(rdp_run_chan_t *chan)
{
    if (chan->destroyed && chan->in_cb == 0) {
        chan->destroyed = 0;
        rdp_run_chan_destroy(chan);
    }
}

static void close_timer_cb(void *arg)
{
    rdp_run_chan_t *chan = arg;

    chan->in_cb++;
    if (chan->close_cb != NULL) {
        chan->close_cb(chan, chan->why, chan->arg);
    }
    chan->in_cb--;
    finish_destroy(chan);
}

/* Stop all I/O and schedule close_cb from the loop (never inline). */
static void chan_fail(rdp_run_chan_t *chan, pmix_status_t why)
{
    if (chan->closed) {
        return;
    }
    chan->closed  = 1;
    chan->closing = 1;
    chan->why     = why;
    rdp_fdwatch_disable(chan->rwatch);
    rdp_fdwatch_disable(chan->wwatch);
    if (chan->fd >= 0) {
        close(chan->fd);
        chan->fd = -1;
    }
    rdp_timer_start(chan->close_timer, 0);
}


/* Deliver one complete frame. Returns non-zero if the channel must stop
 * processing (destroyed or closed inside the callback). */
static int deliver(rdp_run_chan_t *chan)
{
    uint8_t *payload = chan->payload;
    uint16_t cmd     = chan->cur.cmd;
    size_t len       = chan->cur.length;

    chan->payload     = NULL;
    chan->payload_got = 0;
    chan->hdr_got     = 0;
    chan->in_cb++;
    chan->msg_cb(chan, cmd, payload, len, chan->arg);
    chan->in_cb--;
    rdp_free(payload);
    return chan->destroyed || chan->closed || chan->shutdown;
}

/* Feed received bytes into the frame parser. Non-zero: stop. */
static int consume(rdp_run_chan_t *chan, const uint8_t *p, size_t n)
{
    while (n > 0) {
        if (chan->hdr_got < RDP_MSG_HDR_LEN) {
            size_t take = RDP_MSG_HDR_LEN - chan->hdr_got;

            if (take > n) {
                take = n;
            }
            memcpy(chan->hdr + chan->hdr_got, p, take);
            chan->hdr_got += take;
            p += take;
            n -= take;
            if (chan->hdr_got < RDP_MSG_HDR_LEN) {
                return 0;
            }
            if (rdp_msg_hdr_decode(chan->hdr, &chan->cur) != PMIX_SUCCESS) {
                rdp_log_warn(RUN, "control channel: bad frame header");
                chan_fail(chan, PMIX_ERR_UNPACK_FAILURE);
                return 1;
            }
            if (chan->cur.length > chan->max_msg) {
                rdp_log_warn(RUN,
                             "control channel: frame of %u bytes exceeds "
                             "the limit of %zu",
                             chan->cur.length, chan->max_msg);
                chan_fail(chan, PMIX_ERR_UNPACK_FAILURE);
                return 1;
            }
            if (chan->cur.length > 0) {
                chan->payload = rdp_malloc(chan->cur.length);
                if (chan->payload == NULL) {
                    chan_fail(chan, PMIX_ERR_NOMEM);
                    return 1;
                }
                continue;
            }
            if (deliver(chan)) {
                return 1;
            }
            continue;
        }
        {
            size_t take = chan->cur.length - chan->payload_got;

            if (take > n) {
                take = n;
            }
            memcpy(chan->payload + chan->payload_got, p, take);
            chan->payload_got += take;
            p += take;
            n -= take;
            if (chan->payload_got == chan->cur.length && deliver(chan)) {
                return 1;
            }
        }
    }
    return 0;
}

static void read_cb(int fd, int events, void *arg)
{
    rdp_run_chan_t *chan = arg;
    uint8_t buf[READ_CHUNK];
    int stop = 0;

    /* bounded work per wakeup so one busy peer cannot starve others */
    for (int i = 0; i < 16 && !stop; i++) {
        ssize_t n = read(chan->fd, buf, sizeof(buf));

        if (n > 0) {
            chan->in_cb++;
            stop = consume(chan, buf, (size_t)n);
            chan->in_cb--;
            if ((size_t)n < sizeof(buf)) {
                break;
            }
        } else if (n == 0) {
            chan_fail(chan, PMIX_ERR_LOST_CONNECTION);
            break;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            rdp_log_debug(RUN, "control channel read failed: %m");
            chan_fail(chan, PMIX_ERR_LOST_CONNECTION);
            break;
        }
    }
    finish_destroy(chan);
}

/* Write as much of the queue as the socket takes. 0 ok, -1 failed. */
static int write_some(rdp_run_chan_t *chan)
{
    rdp_list_t *item;

    while ((item = chan->outq.next) != &chan->outq) {
        out_frame_t *f = rdp_container_of(item, out_frame_t, link);
        struct iovec iov[2];
        struct msghdr mh;
        int niov = 0;
        ssize_t n;

        memset(&mh, 0, sizeof(mh));
        if (f->off < RDP_MSG_HDR_LEN) {
            iov[niov].iov_base = f->hdr + f->off;
            iov[niov].iov_len  = RDP_MSG_HDR_LEN - f->off;
            niov++;
            if (f->len > 0) {
                iov[niov].iov_base = f->data;
                iov[niov].iov_len  = f->len;
                niov++;
            }
        } else {
            iov[niov].iov_base = f->data + (f->off - RDP_MSG_HDR_LEN);
            iov[niov].iov_len  = f->len - (f->off - RDP_MSG_HDR_LEN);
            niov++;
        }
        mh.msg_iov    = iov;
        mh.msg_iovlen = (size_t)niov;
        n             = sendmsg(chan->fd, &mh, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return 0;
            }
            rdp_log_debug(RUN, "control channel write failed: %m");
            return -1;
        }
        f->off += (size_t)n;
        chan->queued -= (size_t)n;
        if (f->off == RDP_MSG_HDR_LEN + f->len) {
            rdp_list_del(&f->link);
            free_frame(f);
        }
    }
    return 0;
}

static void write_cb(int fd, int events, void *arg)
{
    rdp_run_chan_t *chan = arg;

    if (write_some(chan) != 0) {
        chan_fail(chan, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    if (rdp_list_is_empty(&chan->outq)) {
        rdp_fdwatch_disable(chan->wwatch);
        if (chan->shutdown) {
            chan_fail(chan, PMIX_SUCCESS);
            return;
        }
    }
    if (chan->above_low && chan->queued <= chan->low_water) {
        chan->above_low = 0;
        if (chan->drain_cb != NULL) {
            chan->in_cb++;
            chan->drain_cb(chan, chan->arg);
            chan->in_cb--;
            finish_destroy(chan);
        }
    }
}

/* A frame is sent whole, and the peer often answers it: Nagle would hold
 * a small frame while an earlier one waits for the peer's delayed ACK
 * (40 ms on Linux; seen between a daemon's exit report and the
 * launcher).  Not a TCP socket (a Unix socket, a pipe): nothing to do. */
static void set_nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0
        && errno != EOPNOTSUPP && errno != ENOPROTOOPT && errno != ENOTSOCK) {
        rdp_log_debug(RUN, "cannot set TCP_NODELAY: %m");
    }
}

pmix_status_t rdp_run_chan_create(rdp_loop_t *loop, int fd, size_t max_msg,
                                  rdp_run_chan_msg_cb_t msg_cb,
                                  rdp_run_chan_close_cb_t close_cb, void *arg,
                                  rdp_run_chan_t **chan_p)
{
    rdp_run_chan_t *chan;
    pmix_status_t status;

    if (rdp_run_set_nonblock(fd) != 0) {
        rdp_log_error(RUN, "cannot make socket nonblocking: %m");
        close(fd);
        return PMIX_ERR_IN_ERRNO;
    }
    set_nodelay(fd);
    chan = rdp_calloc(1, sizeof(*chan));
    if (chan == NULL) {
        close(fd);
        return PMIX_ERR_NOMEM;
    }
    chan->loop     = loop;
    chan->fd       = fd;
    chan->msg_cb   = msg_cb;
    chan->close_cb = close_cb;
    chan->arg      = arg;
    chan->max_msg  = max_msg;
    rdp_list_init(&chan->outq);
    status =
        rdp_fdwatch_create(loop, fd, RDP_FD_READ, read_cb, chan, &chan->rwatch);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }
    status = rdp_fdwatch_create(loop, fd, RDP_FD_WRITE, write_cb, chan,
                                &chan->wwatch);
    if (status != PMIX_SUCCESS) {
        goto err_rwatch;
    }
    status = rdp_timer_create(loop, close_timer_cb, chan, &chan->close_timer);
    if (status != PMIX_SUCCESS) {
        goto err_wwatch;
    }
    rdp_fdwatch_enable(chan->rwatch);
    *chan_p = chan;
    return PMIX_SUCCESS;

err_wwatch:
    rdp_fdwatch_destroy(chan->wwatch);
err_rwatch:
    rdp_fdwatch_destroy(chan->rwatch);
err_free:
    rdp_free(chan);
    close(fd);
    return status;
}

void rdp_run_chan_destroy(rdp_run_chan_t *chan)
{
    rdp_list_t *item;

    if (chan == NULL) {
        return;
    }
    if (chan->in_cb > 0) {
        /* inside one of our callbacks: stop everything, free on return */
        chan->destroyed = 1;
        chan->closed    = 1;
        chan->closing   = 1;
        chan->close_cb  = NULL;
        chan->drain_cb  = NULL;
        rdp_fdwatch_disable(chan->rwatch);
        rdp_fdwatch_disable(chan->wwatch);
        rdp_timer_cancel(chan->close_timer);
        return;
    }
    rdp_fdwatch_destroy(chan->rwatch);
    rdp_fdwatch_destroy(chan->wwatch);
    rdp_timer_destroy(chan->close_timer);
    if (chan->fd >= 0) {
        close(chan->fd);
    }
    while ((item = rdp_list_pop_front(&chan->outq)) != NULL) {
        free_frame(rdp_container_of(item, out_frame_t, link));
    }
    rdp_free(chan->payload);
    rdp_free(chan);
}

void rdp_run_chan_set_max_msg(rdp_run_chan_t *chan, size_t max_msg)
{
    chan->max_msg = max_msg;
}

void rdp_run_chan_set_arg(rdp_run_chan_t *chan, void *arg)
{
    chan->arg = arg;
}

void rdp_run_chan_set_drain_cb(rdp_run_chan_t *chan, size_t low_water,
                               rdp_run_chan_drain_cb_t cb)
{
    chan->low_water = low_water;
    chan->drain_cb  = cb;
}

pmix_status_t rdp_run_chan_send(rdp_run_chan_t *chan, uint16_t cmd,
                                rdp_buf_t *buf)
{
    out_frame_t *f;
    rdp_msg_hdr_t hdr;
    size_t len = 0;
    void *data = NULL;

    if (buf != NULL) {
        data = rdp_buf_take(buf, &len);
    }
    if (chan->closing || chan->shutdown) {
        rdp_free(data);
        return PMIX_ERR_UNREACH;
    }
    if (len > UINT32_MAX) {
        rdp_free(data);
        return PMIX_ERR_BAD_PARAM;
    }
    f = rdp_calloc(1, sizeof(*f));
    if (f == NULL) {
        rdp_free(data);
        return PMIX_ERR_NOMEM;
    }
    hdr.magic   = RDP_MSG_MAGIC;
    hdr.version = RDP_MSG_VERSION;
    hdr.cmd     = cmd;
    hdr.tag     = 0;
    hdr.length  = (uint32_t)len;
    rdp_msg_hdr_encode(&hdr, f->hdr);
    f->data = data;
    f->len  = len;
    rdp_list_push_back(&chan->outq, &f->link);
    chan->queued += RDP_MSG_HDR_LEN + len;
    if (chan->queued > chan->low_water) {
        chan->above_low = 1;
    }
    rdp_fdwatch_enable(chan->wwatch);
    return PMIX_SUCCESS;
}

size_t rdp_run_chan_queued(const rdp_run_chan_t *chan)
{
    return chan->queued;
}

int rdp_run_chan_is_open(const rdp_run_chan_t *chan)
{
    return !chan->closed;
}

void rdp_run_chan_shutdown(rdp_run_chan_t *chan)
{
    if (chan->closed || chan->shutdown) {
        return;
    }
    chan->shutdown = 1;
    chan->closing  = 1;
    rdp_fdwatch_disable(chan->rwatch);
    /* the write watcher finishes the job (or fires at once if idle) */
    rdp_fdwatch_enable(chan->wwatch);
}

pmix_status_t rdp_run_chan_flush_blocking(rdp_run_chan_t *chan, double timeout)
{
    double deadline = rdp_time_now() + timeout;

    while (!rdp_list_is_empty(&chan->outq) && chan->fd >= 0) {
        struct pollfd pfd = {.fd = chan->fd, .events = POLLOUT};
        double left       = deadline - rdp_time_now();
        int rc;

        if (left <= 0) {
            return PMIX_ERR_TIMEOUT;
        }
        rc = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno != EINTR) {
            return PMIX_ERR_IN_ERRNO;
        }
        if (rc > 0 && write_some(chan) != 0) {
            return PMIX_ERR_LOST_CONNECTION;
        }
    }
    return rdp_list_is_empty(&chan->outq) ? PMIX_SUCCESS
                                          : PMIX_ERR_LOST_CONNECTION;
}
