/* sched_bruck.c - Bruck allgather: any n, ceil(log2 n) steps */
#include "config.h"
#include "coll/sched_int.h"

uint32_t rdp_sched_bruck_nsteps(uint32_t n)
{
    return sched_log_nsteps(n);
}

pmix_status_t rdp_sched_bruck_step(uint32_t rank, uint32_t n, uint32_t step,
                                   rdp_sched_step_t *out)
{
    uint32_t d;
    uint32_t cnt;

    if (rank >= n || step >= rdp_sched_bruck_nsteps(n)) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* before step s, rank r holds the 2^s blocks r, r+1, ... (mod n) */
    d   = (uint32_t)1 << step;
    cnt = (d < n - d) ? d : n - d;
    sched_xfer_one(&out->send, sched_sub(rank, d, n), rank, cnt);
    sched_xfer_one(&out->recv, sched_add(rank, d, n), sched_add(rank, d, n),
                   cnt);
    return PMIX_SUCCESS;
}
