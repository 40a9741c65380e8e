/* sched_ring.c - ring allgather: n - 1 neighbour steps */
#include "config.h"
#include "coll/sched_int.h"

uint32_t rdp_sched_ring_nsteps(uint32_t n)
{
    if (n == 0 || n > INT32_MAX) {
        return 0;
    }
    return n - 1;
}

pmix_status_t rdp_sched_ring_step(uint32_t rank, uint32_t n, uint32_t step,
                                  rdp_sched_step_t *out)
{
    if (rank >= n || step >= rdp_sched_ring_nsteps(n)) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* step s forwards the block received in step s - 1 (own block first) */
    sched_xfer_one(&out->send, sched_add(rank, 1, n), sched_sub(rank, step, n),
                   1);
    sched_xfer_one(&out->recv, sched_sub(rank, 1, n),
                   sched_sub(rank, step + 1, n), 1);
    return PMIX_SUCCESS;
}
