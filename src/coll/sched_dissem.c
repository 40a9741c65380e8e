/* sched_dissem.c - dissemination barrier: ceil(log2 n) rounds */
#include "config.h"
#include "coll/sched_int.h"

uint32_t rdp_sched_dissem_nsteps(uint32_t n)
{
    return sched_log_nsteps(n);
}

pmix_status_t rdp_sched_dissem_step(uint32_t rank, uint32_t n, uint32_t step,
                                    rdp_sched_step_t *out)
{
    uint32_t d;

    if (rank >= n || step >= rdp_sched_dissem_nsteps(n)) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* after round k, rank r has heard (directly or not) from r - 2^(k+1) + 1
     * .. r; no data travels, only the signal */
    d = (uint32_t)1 << step;
    sched_xfer_one(&out->send, sched_add(rank, d % n, n), 0, 0);
    sched_xfer_one(&out->recv, sched_sub(rank, d % n, n), 0, 0);
    return PMIX_SUCCESS;
}
