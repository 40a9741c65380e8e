/* sched.c - schedule dispatch and helpers shared by the schedules */
#include "config.h"
#include "coll/sched.h"

uint32_t rdp_sched_nsteps(enum rdp_coll_alg alg, uint32_t n)
{
    switch (alg) {
    case RDP_COLL_ALG_RD:
        return rdp_sched_rd_nsteps(n);
    case RDP_COLL_ALG_BRUCK:
        return rdp_sched_bruck_nsteps(n);
    case RDP_COLL_ALG_RING:
        return rdp_sched_ring_nsteps(n);
    case RDP_COLL_ALG_DISSEM:
        return rdp_sched_dissem_nsteps(n);
    default:
        return 0;
    }
}

pmix_status_t rdp_sched_step(enum rdp_coll_alg alg, uint32_t rank, uint32_t n,
                             uint32_t step, rdp_sched_step_t *out)
{
    switch (alg) {
    case RDP_COLL_ALG_RD:
        return rdp_sched_rd_step(rank, n, step, out);
    case RDP_COLL_ALG_BRUCK:
        return rdp_sched_bruck_step(rank, n, step, out);
    case RDP_COLL_ALG_RING:
        return rdp_sched_ring_step(rank, n, step, out);
    case RDP_COLL_ALG_DISSEM:
        return rdp_sched_dissem_step(rank, n, step, out);
    default:
        return PMIX_ERR_BAD_PARAM;
    }
}

const char *rdp_coll_alg_name(enum rdp_coll_alg alg)
{
    switch (alg) {
    case RDP_COLL_ALG_AUTO:
        return "auto";
    case RDP_COLL_ALG_RD:
        return "recursive_doubling";
    case RDP_COLL_ALG_BRUCK:
        return "bruck";
    case RDP_COLL_ALG_RING:
        return "ring";
    case RDP_COLL_ALG_DISSEM:
        return "dissemination";
    default:
        return "unknown";
    }
}
