/* sched_rd.c - recursive doubling allgather, with fold/unfold for n != 2^k */
#include "config.h"
#include "coll/sched_int.h"

/* largest power of two <= n, and its log2 */
static uint32_t pow2_floor(uint32_t n, uint32_t *log_p)
{
    uint32_t k = 0;

    while (k < 31 && ((uint32_t)1 << (k + 1)) <= n) {
        k++;
    }
    *log_p = k;
    return (uint32_t)1 << k;
}

uint32_t rdp_sched_rd_nsteps(uint32_t n)
{
    uint32_t k;
    uint32_t p;

    if (n == 0 || n > INT32_MAX) {
        return 0;
    }
    p = pow2_floor(n, &k);
    return (n == p) ? k : k + 2;
}

/* The recursive doubling exchange of virtual rank v (< p) at bit @a bit:
 * the blocks of the aligned group of 2^bit ranks holding v, plus the
 * blocks those ranks carry for folded extras (rank i < e carries p + i). */
static void rd_exchange(uint32_t v, uint32_t bit, uint32_t p, uint32_t e,
                        rdp_sched_step_t *out)
{
    uint32_t d       = (uint32_t)1 << bit;
    uint32_t partner = v ^ d;
    uint32_t g       = v & ~(d - 1);
    uint32_t pg      = partner & ~(d - 1);

    sched_xfer_one(&out->send, partner, g, d);
    if (g < e) {
        sched_xfer_add(&out->send, g + p, (g + d < e ? g + d : e) - g);
    }
    sched_xfer_one(&out->recv, partner, pg, d);
    if (pg < e) {
        sched_xfer_add(&out->recv, pg + p, (pg + d < e ? pg + d : e) - pg);
    }
}

pmix_status_t rdp_sched_rd_step(uint32_t rank, uint32_t n, uint32_t step,
                                rdp_sched_step_t *out)
{
    uint32_t k;
    uint32_t p;
    uint32_t e;

    if (rank >= n || step >= rdp_sched_rd_nsteps(n)) {
        return PMIX_ERR_BAD_PARAM;
    }
    p = pow2_floor(n, &k);
    e = n - p;
    if (e == 0) {
        rd_exchange(rank, step, p, 0, out);
        return PMIX_SUCCESS;
    }
    sched_xfer_none(&out->send);
    sched_xfer_none(&out->recv);
    if (step == 0) {
        /* fold: extra p+i hands its block to i */
        if (rank >= p) {
            sched_xfer_one(&out->send, rank - p, rank, 1);
        } else if (rank < e) {
            sched_xfer_one(&out->recv, rank + p, rank + p, 1);
        }
    } else if (step == k + 1) {
        /* unfold: i hands every block but p+i's to p+i */
        if (rank >= p) {
            sched_xfer_one(&out->recv, rank - p, sched_add(rank, 1, n), n - 1);
        } else if (rank < e) {
            sched_xfer_one(&out->send, rank + p, sched_add(rank + p, 1, n),
                           n - 1);
        }
    } else if (rank < p) {
        rd_exchange(rank, step - 1, p, e, out);
    }
    return PMIX_SUCCESS;
}
