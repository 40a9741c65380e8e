/* fence_board.c - answering a whole job's local clients with one wake-up */
#include "config.h"
#include "core/server/coll.h"
#include "core/ipc/bcast.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/wire/proto.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/*
 * A fence over a whole job ends with one message per local client: one
 * sendmsg each, each making a client runnable while the server is still
 * answering the others.  Clients that opened their job's board
 * (core/ipc/bcast.h) are answered instead by one slot of the board and
 * one eventfd write.  Everything else keeps the FENCE_ACK: clients that
 * did not open the board, fences over other sets, participants whose
 * fence numbers disagree, and a slot some client may still read.
 */

struct rdp_srv_bcast {
    rdp_bcast_board_t *board;
    int fd;  /* the board's memfd */
    int efd; /* the job's eventfd */
    uint64_t cookie[2];
    int slot_fd[RDP_BCAST_SLOTS]; /* the bundle each slot names, or -1 */
};

void rdp_srv_bcast_destroy(rdp_srv_bcast_t *bc)
{
    if (bc == NULL) {
        return;
    }
    for (unsigned i = 0; i < RDP_BCAST_SLOTS; i++) {
        if (bc->slot_fd[i] >= 0) {
            close(bc->slot_fd[i]);
        }
    }
    rdp_bcast_destroy(bc->board, bc->fd, bc->efd);
    rdp_free(bc);
}

static pmix_status_t bcast_get(rdp_srv_nspace_t *ns, rdp_srv_bcast_t **bc_p)
{
    rdp_srv_bcast_t *bc = ns->bcast;
    pmix_status_t status;

    if (bc != NULL) {
        *bc_p = bc;
        return PMIX_SUCCESS;
    }
    bc = rdp_calloc(1, sizeof(*bc));
    if (bc == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (getrandom(bc->cookie, sizeof(bc->cookie), 0)
        != (ssize_t)sizeof(bc->cookie)) {
        rdp_free(bc);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    status = rdp_bcast_create(bc->cookie, &bc->board, &bc->fd, &bc->efd);
    if (status != PMIX_SUCCESS) {
        rdp_free(bc);
        return status;
    }
    for (unsigned i = 0; i < RDP_BCAST_SLOTS; i++) {
        bc->slot_fd[i] = -1;
    }
    ns->bcast = bc;
    *bc_p     = bc;
    return PMIX_SUCCESS;
}

/* How many whole-job fences @a client asked for before (its sequence
 * number of that signature, coll.c): its next one is this number. */
static pmix_status_t fences_before(rdp_srv_client_t *client, uint64_t *n_p)
{
    pmix_proc_t all = client->proc;
    uint8_t *sig;
    size_t siglen;
    pmix_status_t status;

    all.rank = PMIX_RANK_WILDCARD;
    status = rdp_srv_coll_signature(RDP_SRV_COLL_FENCE, &all, 1, &sig, &siglen);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    *n_p = (uint64_t)(uintptr_t)rdp_hash_get(&client->coll_seq, sig, siglen);
    rdp_free(sig);
    return PMIX_SUCCESS;
}

void rdp_srv_handle_fence_board(rdp_srv_peer_t *peer, uint32_t tag,
                                rdp_rbuf_t *rb)
{
    rdp_srv_client_t *client = peer->client;
    rdp_srv_bcast_t *bc      = NULL;
    pmix_status_t status     = PMIX_ERR_NOT_SUPPORTED;
    uint64_t before          = 0;
    rdp_buf_t buf;

    if (rb->left == 0 && client->ns != NULL && !client->ns->is_tool
        && rdp_cfg_bool(RDP_CFG_FENCE_BOARD)) {
        status = bcast_get(client->ns, &bc);
        if (status == PMIX_SUCCESS) {
            status = fences_before(client, &before);
        }
    } else if (rb->left != 0) {
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status != PMIX_SUCCESS) {
        rdp_srv_reply_status(peer, RDP_CMD_FENCE_BOARD_ACK, tag, status);
        return;
    }
    rdp_buf_init(&buf);
    status = rdp_pack_i32(&buf, PMIX_SUCCESS);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(&buf, (uint32_t)getpid());
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(&buf, bc->fd);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(&buf, bc->cookie[0]);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(&buf, bc->cookie[1]);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u64(&buf, before);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_ipc_send_fd(peer->conn, RDP_CMD_FENCE_BOARD_ACK, tag, &buf,
                                 bc->efd);
    }
    rdp_buf_cleanup(&buf);
    if (status != PMIX_SUCCESS) {
        rdp_srv_reply_status(peer, RDP_CMD_FENCE_BOARD_ACK, tag, status);
        return;
    }
    client->bcast_open = true;
    client->bcast_done = 0;
}

pmix_status_t rdp_srv_bcast_parse(rdp_srv_client_t *client, rdp_rbuf_t *rb,
                                  bool *flag_p, uint64_t *n_p)
{
    uint64_t n, done;
    pmix_status_t status;

    *flag_p = false;
    if (rb->left == 0) {
        return PMIX_SUCCESS;
    }
    if (!client->bcast_open) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    status = rdp_unpack_u64(rb, &n);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u64(rb, &done);
    }
    if (status != PMIX_SUCCESS || rb->left != 0 || done > n) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (done > client->bcast_done) {
        client->bcast_done = done;
    }
    *flag_p = true;
    *n_p    = n;
    return PMIX_SUCCESS;
}

/* The flagged participants all name fence @a n of one job, and every one
 * of them is done with the fence that used n's slot before. */
static bool bcast_usable(const rdp_srv_coll_t *coll, rdp_srv_nspace_t **ns_p,
                         uint64_t *n_p)
{
    rdp_srv_nspace_t *ns = NULL;
    uint64_t n           = 0;
    size_t nflag         = 0;

    if (coll->op != RDP_SRV_COLL_FENCE || coll->nprocs != 1
        || coll->procs[0].rank != PMIX_RANK_WILDCARD) {
        return false;
    }
    for (size_t i = 0; i < coll->nparts; i++) {
        const rdp_srv_coll_lpart_t *p = &coll->parts[i];
        rdp_srv_client_t *c;

        if (!p->arrived || !p->bcast) {
            continue;
        }
        c = rdp_srv_client_find(p->nspace, p->rank);
        if (c == NULL || c->ns == NULL || c->ns->bcast == NULL
            || strncmp(c->ns->name, coll->procs[0].nspace, PMIX_MAX_NSLEN) != 0
            || (ns != NULL && c->ns != ns) || (nflag > 0 && p->bcast_n != n)
            || c->bcast_done + RDP_BCAST_SLOTS <= p->bcast_n) {
            return false;
        }
        ns = c->ns;
        n  = p->bcast_n;
        nflag++;
    }
    *ns_p = ns;
    *n_p  = n;
    return nflag > 0;
}

/* Where the bundle of fence @a n's reply @a data goes on the board: the
 * slot's data area (*fd_p RDP_BCAST_FD_INLINE), the reply's memfd
 * (@a shm_fd, duplicated) or, for an inline bundle too large for the
 * slot, a new memfd. */
static pmix_status_t bundle_fd(rdp_srv_bcast_t *bc, uint64_t n,
                               const uint8_t *data, size_t len, int shm_fd,
                               int32_t *status_p, int *fd_p, uint64_t *size_p)
{
    rdp_rbuf_t rb;
    uint8_t kind;
    int32_t st;
    pmix_status_t status;

    *fd_p   = -1;
    *size_p = 0;
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_i32(&rb, &st);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    *status_p = st;
    if (st != PMIX_SUCCESS || rb.left == 0) {
        return PMIX_SUCCESS;
    }
    status = rdp_unpack_u8(&rb, &kind);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    switch (kind) {
    case RDP_FENCE_NO_BUNDLE:
        return PMIX_SUCCESS;
    case RDP_FENCE_BUNDLE_INLINE:
        if (rb.left == 0) {
            return PMIX_SUCCESS;
        }
        *size_p = rb.left;
        if (rb.left <= RDP_BCAST_DATA) {
            *fd_p = RDP_BCAST_FD_INLINE;
            return rdp_bcast_write_data(bc->fd, n, rb.ptr, rb.left);
        }
        return rdp_ipc_memfd_create(rb.ptr, rb.left, fd_p);
    case RDP_FENCE_BUNDLE_MEMFD:
        status = rdp_unpack_u64(&rb, size_p);
        if (status != PMIX_SUCCESS || shm_fd < 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        *fd_p = fcntl(shm_fd, F_DUPFD_CLOEXEC, 3);
        return *fd_p >= 0 ? PMIX_SUCCESS : PMIX_ERR_OUT_OF_RESOURCE;
    default:
        return PMIX_ERR_BAD_PARAM;
    }
}

bool rdp_srv_bcast_answer(rdp_srv_coll_t *coll, const uint8_t *data, size_t len,
                          int shm_fd)
{
    rdp_srv_nspace_t *ns;
    rdp_srv_bcast_t *bc;
    uint64_t n, size;
    int32_t st = PMIX_ERROR;
    int fd;
    unsigned s;

    if (!bcast_usable(coll, &ns, &n)
        || bundle_fd(ns->bcast, n, data, len, shm_fd, &st, &fd, &size)
               != PMIX_SUCCESS) {
        for (size_t i = 0; i < coll->nparts; i++) {
            coll->parts[i].bcast = false; /* all on the socket */
        }
        return false;
    }
    bc = ns->bcast;
    s  = (unsigned)(n % RDP_BCAST_SLOTS);
    if (bc->slot_fd[s] >= 0) {
        close(bc->slot_fd[s]); /* every reader is done with it */
    }
    bc->slot_fd[s] = fd >= 0 ? fd : -1;
    rdp_bcast_publish(bc->board, bc->efd, n, st, fd, size);
    rdp_log_debug(SERVER,
                  "fence %" PRIu64 " of %s answered through the fence board "
                  "(%s, %" PRIu64 " bytes)",
                  n, ns->name, rdp_status_name(st), size);
    return true;
}
