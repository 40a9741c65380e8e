/* bcast.c - the fence completion board (bcast.h) */
#include "config.h"
#include "core/ipc/bcast.h"
#include "core/ipc/ipc.h"
#include "core/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

pmix_status_t rdp_bcast_create(const uint64_t cookie[2],
                               rdp_bcast_board_t **board_p, int *fd_p,
                               int *efd_p)
{
    rdp_bcast_board_t *board;
    pmix_status_t status;
    int fd, efd;

    status = rdp_ipc_memfd_open(&fd);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (ftruncate(fd, RDP_BCAST_SIZE) != 0) {
        rdp_log_error(IPC, "cannot size the fence board: %m");
        close(fd);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    board =
        mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (board == MAP_FAILED) {
        rdp_log_error(IPC, "cannot map the fence board: %m");
        close(fd);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0) {
        rdp_log_error(IPC, "cannot create the fence eventfd: %m");
        munmap(board, sizeof(*board));
        close(fd);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    /* clients map it: it never shrinks under them */
    (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
    memset(board, 0, sizeof(*board));
    board->magic     = RDP_BCAST_MAGIC;
    board->cookie[0] = cookie[0];
    board->cookie[1] = cookie[1];
    board->nslots    = RDP_BCAST_SLOTS;
    *board_p         = board;
    *fd_p            = fd;
    *efd_p           = efd;
    return PMIX_SUCCESS;
}

void rdp_bcast_destroy(rdp_bcast_board_t *board, int fd, int efd)
{
    if (board != NULL) {
        munmap(board, sizeof(*board));
    }
    if (fd >= 0) {
        close(fd);
    }
    if (efd >= 0) {
        close(efd);
    }
}

void rdp_bcast_publish(rdp_bcast_board_t *board, int efd, uint64_t n,
                       pmix_status_t status, int fd, uint64_t size)
{
    rdp_bcast_slot_t *slot = &board->slots[n % RDP_BCAST_SLOTS];
    uint64_t one           = 1;

    slot->status = status;
    slot->fd     = fd;
    slot->size   = size;
    __atomic_store_n(&slot->seq, n + 1, __ATOMIC_RELEASE);
    /* EAGAIN only when the count would overflow: the clients' epoll sees
     * every write, never the count */
    if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one)
        && errno != EAGAIN) {
        rdp_log_error(IPC, "cannot wake the fence's clients: %m");
    }
}

pmix_status_t rdp_bcast_write_data(int fd, uint64_t n, const void *data,
                                   size_t len)
{
    size_t off =
        RDP_BCAST_DATA_OFF + (size_t)(n % RDP_BCAST_SLOTS) * RDP_BCAST_DATA;

    if (len > RDP_BCAST_DATA) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_ipc_memfd_pwrite(fd, data, len, off);
}

const void *rdp_bcast_data(const rdp_bcast_board_t *board, uint64_t n)
{
    return (const uint8_t *)board + RDP_BCAST_DATA_OFF
           + (size_t)(n % RDP_BCAST_SLOTS) * RDP_BCAST_DATA;
}

int rdp_bcast_open_remote(pid_t pid, int fd)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    return open(path, O_RDONLY | O_CLOEXEC);
}

pmix_status_t rdp_bcast_map(pid_t pid, int fd, const uint64_t cookie[2],
                            const rdp_bcast_board_t **board_p)
{
    const rdp_bcast_board_t *board;
    struct stat st;
    int bfd = rdp_bcast_open_remote(pid, fd);

    if (bfd < 0) {
        rdp_log_debug(IPC, "server's fence board not reachable: %m");
        return PMIX_ERR_NOT_AVAILABLE;
    }
    if (fstat(bfd, &st) != 0 || (size_t)st.st_size < RDP_BCAST_SIZE) {
        close(bfd);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    board = mmap(NULL, RDP_BCAST_SIZE, PROT_READ, MAP_SHARED, bfd, 0);
    close(bfd);
    if (board == MAP_FAILED) {
        return PMIX_ERR_NOT_AVAILABLE;
    }
    if (board->magic != RDP_BCAST_MAGIC || board->nslots != RDP_BCAST_SLOTS
        || board->cookie[0] != cookie[0] || board->cookie[1] != cookie[1]) {
        /* another process behind that pid (a pid namespace apart) */
        rdp_log_debug(IPC, "fence board of pid %d is not our server's",
                      (int)pid);
        munmap((void *)board, RDP_BCAST_SIZE);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    *board_p = board;
    return PMIX_SUCCESS;
}

void rdp_bcast_unmap(const rdp_bcast_board_t *board)
{
    if (board != NULL) {
        munmap((void *)board, RDP_BCAST_SIZE);
    }
}

int rdp_bcast_ready(const rdp_bcast_board_t *board, uint64_t n,
                    const rdp_bcast_slot_t **slot_p)
{
    const rdp_bcast_slot_t *slot = &board->slots[n % RDP_BCAST_SLOTS];

    if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != n + 1) {
        return 0;
    }
    *slot_p = slot;
    return 1;
}
