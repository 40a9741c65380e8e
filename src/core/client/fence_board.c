/* fence_board.c - whole-job fences answered through the job's board */
#include "config.h"
#include "core/client/client_int.h"
#include "core/ipc/bcast.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/wire/proto.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A server that sets RDP_ENV_FENCE_BOARD hands its clients the job's
 * eventfd and board (core/ipc/bcast.h).  The loop watches the eventfd
 * edge-triggered; each wake-up looks up the whole-job fences in flight in
 * the board.  A fence the server answered on the socket instead completes
 * the usual way and is forgotten here.  Loop thread only.
 */

typedef struct board_wait {
    uint64_t n;
    uint32_t tag;
} board_wait_t;

static struct {
    const rdp_bcast_board_t *board;
    pid_t pid;
    int efd;
    rdp_fdwatch_t *watch;
    uint64_t base; /* the server's count of them before we connected */
    uint64_t sent; /* whole-job fences asked for since we connected */
    board_wait_t *waits;
    size_t nwaits, cap;
} bd = {.efd = -1};

void rdp_client_board_close(void)
{
    rdp_fdwatch_destroy(bd.watch);
    if (bd.efd >= 0) {
        close(bd.efd);
    }
    rdp_bcast_unmap(bd.board);
    rdp_free(bd.waits);
    memset(&bd, 0, sizeof(bd));
    bd.efd = -1;
}

/* The bundle fence @a n's slot names: copied from the slot's data area,
 * or mapped from the server's memfd, and stored. */
static pmix_status_t take_slot(uint64_t n, const rdp_bcast_slot_t *slot)
{
    int32_t status = slot->status;
    int32_t fd     = slot->fd;
    uint64_t size  = slot->size;
    int lfd;

    if (status != PMIX_SUCCESS || fd == -1) {
        return status;
    }
    if (fd == RDP_BCAST_FD_INLINE) {
        if (size == 0 || size > RDP_BCAST_DATA) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        return rdp_client_fence_keep(rdp_bcast_data(bd.board, n), (size_t)size,
                                     0);
    }
    if (fd < 0 || size == 0 || size > SIZE_MAX) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    lfd = rdp_bcast_open_remote(bd.pid, fd);
    if (lfd < 0) {
        rdp_log_error(CLIENT,
                      "cannot open the fence result of server "
                      "pid %d: %m",
                      (int)bd.pid);
        return PMIX_ERR_UNREACH;
    }
    return rdp_client_fence_keep_fd(lfd, (size_t)size);
}

static void board_check(void)
{
    size_t i = 0;

    while (i < bd.nwaits && bd.board != NULL) {
        const rdp_bcast_slot_t *slot;
        board_wait_t w = bd.waits[i];

        if (!rdp_bcast_ready(bd.board, w.n, &slot)) {
            i++;
            continue;
        }
        memmove(&bd.waits[i], &bd.waits[i + 1],
                (bd.nwaits - i - 1) * sizeof(*bd.waits));
        bd.nwaits--;
        if (rdp_client_request_pending(w.tag)) {
            /* its callback may start fences: the list may change */
            rdp_client_request_complete(w.tag, take_slot(w.n, slot));
            i = 0;
        }
    }
}

static void board_wake(int fd, int events, void *arg)
{
    (void)fd;
    (void)events;
    (void)arg;
    board_check(); /* never read: the other clients' epoll needs the count */
}

static void board_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    uint64_t cookie[2], base;
    uint32_t pid;
    int32_t bfd;
    int efd = -1;

    (void)arg;
    if (status == PMIX_SUCCESS && rb != NULL && rdp_client.conn != NULL) {
        efd    = rdp_ipc_conn_take_fd(rdp_client.conn);
        status = rdp_unpack_u32(rb, &pid);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_i32(rb, &bfd);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &cookie[0]);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &cookie[1]);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &base);
        }
        if (status == PMIX_SUCCESS && efd < 0) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_bcast_map((pid_t)pid, bfd, cookie, &bd.board);
        }
        if (status == PMIX_SUCCESS) {
            status =
                rdp_fdwatch_create(rdp_rt.loop, efd, RDP_FD_READ | RDP_FD_EDGE,
                                   board_wake, NULL, &bd.watch);
        }
    } else if (status == PMIX_SUCCESS) {
        status = PMIX_ERR_UNREACH;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "fences answered by message: %s",
                      rdp_status_name(status));
        rdp_bcast_unmap(bd.board);
        bd.board = NULL;
        if (efd >= 0) {
            close(efd);
        }
        return;
    }
    bd.pid  = (pid_t)pid;
    bd.efd  = efd;
    bd.base = base; /* the fences sent meanwhile came after the request */
    rdp_fdwatch_enable(bd.watch);
}

void rdp_client_board_open(void)
{
    const char *env = getenv(RDP_ENV_FENCE_BOARD);
    rdp_buf_t buf;

    if (env == NULL || strcmp(env, "1") != 0
        || !rdp_cfg_bool(RDP_CFG_FENCE_BOARD)
        || !rdp_loop_has_edge(rdp_rt.loop)) {
        return;
    }
    rdp_buf_init(&buf);
    if (rdp_client_request(RDP_CMD_FENCE_BOARD, &buf, 0, board_reply, NULL)
        != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "cannot ask for the fence board");
    }
}

int rdp_client_board_tail(rdp_buf_t *payload, uint64_t *n_p)
{
    uint64_t n    = bd.base + bd.sent++;
    uint64_t done = n;

    *n_p = n;
    if (bd.watch == NULL) {
        return 0;
    }
    if (bd.nwaits == bd.cap) {
        size_t cap         = bd.cap == 0 ? 4 : 2 * bd.cap;
        board_wait_t *more = rdp_realloc(bd.waits, cap * sizeof(*more));

        if (more == NULL) {
            return 0; /* this one by message */
        }
        bd.waits = more;
        bd.cap   = cap;
    }
    /* every fence below the oldest still waiting has completed */
    for (size_t i = 0; i < bd.nwaits; i++) {
        if (bd.waits[i].n < done) {
            done = bd.waits[i].n;
        }
    }
    if (rdp_pack_u64(payload, n) != PMIX_SUCCESS
        || rdp_pack_u64(payload, done) != PMIX_SUCCESS) {
        return -1;
    }
    return 1;
}

void rdp_client_board_wait(uint64_t n, uint32_t tag)
{
    /* room was made by rdp_client_board_tail */
    bd.waits[bd.nwaits].n   = n;
    bd.waits[bd.nwaits].tag = tag;
    bd.nwaits++;
    board_check();
}

void rdp_client_board_forget(uint64_t n)
{
    for (size_t i = 0; i < bd.nwaits; i++) {
        if (bd.waits[i].n == n) {
            memmove(&bd.waits[i], &bd.waits[i + 1],
                    (bd.nwaits - i - 1) * sizeof(*bd.waits));
            bd.nwaits--;
            return;
        }
    }
}
