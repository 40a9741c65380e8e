/* bcast.h - fence completions announced to every local client at once */
#ifndef RDP_CORE_IPC_BCAST_H
#define RDP_CORE_IPC_BCAST_H

#include <pmix_common.h>

#include <stdint.h>
#include <sys/types.h>

/*
 * A server keeps, per job (nspace), one eventfd and one "board": a small
 * memfd the server writes and the job's local clients map read-only.  When
 * a fence over the whole job completes, the server writes the result into
 * slot (n % RDP_BCAST_SLOTS) of the board, n being the fence's number
 * among the job's whole-job fences (every client counts them alike), and
 * writes the eventfd once: every client's loop watches it edge-triggered,
 * so one write wakes them all, and nobody ever reads it (a read would
 * reset the count other clients' epoll still has to see).
 *
 * A bundle of up to RDP_BCAST_DATA bytes is written into the slot's own
 * data area of the board (the client copies it out, as from a message);
 * a larger one stays in a sealed memfd of the server, named by its
 * descriptor number; the client opens it as /proc/<server pid>/fd/<n>.
 * The client checks once, when it opens the board the same way, that this
 * reaches its server: the board carries a random cookie the server also
 * sent over the socket.  A slot is reused only after every client that
 * read it reported (in a later fence request) that it is done with it;
 * its memfd stays open in the server until then.
 */

#define RDP_BCAST_MAGIC UINT64_C(0x7264706d69786263) /* "rdpmixbc" */
#define RDP_BCAST_SLOTS 64u
/* Each slot's data area, after the first page (the board's pages are
 * only allocated where written). */
#define RDP_BCAST_DATA     (64u * 1024)
#define RDP_BCAST_DATA_OFF 4096u
#define RDP_BCAST_SIZE \
    ((size_t)RDP_BCAST_DATA_OFF + (size_t)RDP_BCAST_SLOTS * RDP_BCAST_DATA)
/* rdp_bcast_slot_t.fd: the bundle is in the slot's data area */
#define RDP_BCAST_FD_INLINE (-2)

typedef struct rdp_bcast_slot {
    uint64_t seq;    /* n + 1 once slot holds fence n; 0: never used */
    int32_t status;  /* the fence's status */
    int32_t fd;      /* the server's descriptor of the bundle, -1 (none),
                        RDP_BCAST_FD_INLINE */
    uint64_t size;   /* the bundle's bytes (fd >= 0) */
    uint64_t unused; /* keeps slots 32 bytes */
} rdp_bcast_slot_t;

typedef struct rdp_bcast_board {
    uint64_t magic;
    uint64_t cookie[2];
    uint32_t nslots;
    uint32_t pad;
    rdp_bcast_slot_t slots[RDP_BCAST_SLOTS];
} rdp_bcast_board_t;

/** Server: a board (mapped read-write into *board_p, zeroed, with @a
 * cookie) in a fresh memfd *fd_p, and the eventfd *efd_p. */
pmix_status_t rdp_bcast_create(const uint64_t cookie[2],
                               rdp_bcast_board_t **board_p, int *fd_p,
                               int *efd_p);
/** Server: unmap and close what rdp_bcast_create made. */
void rdp_bcast_destroy(rdp_bcast_board_t *board, int fd, int efd);
/** Server: write fence @a n's bundle (at most RDP_BCAST_DATA bytes) into
 * its slot's data area, before publishing it with RDP_BCAST_FD_INLINE. */
pmix_status_t rdp_bcast_write_data(int fd, uint64_t n, const void *data,
                                   size_t len);
/** Server: publish fence @a n in its slot (fields first, seq last) and
 * wake the clients. */
void rdp_bcast_publish(rdp_bcast_board_t *board, int efd, uint64_t n,
                       pmix_status_t status, int fd, uint64_t size);

/** Client: open descriptor @a fd of process @a pid read-only (-1 and
 * errno on failure). */
int rdp_bcast_open_remote(pid_t pid, int fd);
/** Client: map the board of server @a pid (descriptor @a fd there) and
 * check its magic, slot count and @a cookie. */
pmix_status_t rdp_bcast_map(pid_t pid, int fd, const uint64_t cookie[2],
                            const rdp_bcast_board_t **board_p);
void rdp_bcast_unmap(const rdp_bcast_board_t *board);
/** Client: the data area of fence @a n's slot. */
const void *rdp_bcast_data(const rdp_bcast_board_t *board, uint64_t n);
/** Client: whether slot of fence @a n holds it; then *slot_p points to it
 * (read its fields only after this returned 1). */
int rdp_bcast_ready(const rdp_bcast_board_t *board, uint64_t n,
                    const rdp_bcast_slot_t **slot_p);

#endif
