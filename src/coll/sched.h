/* sched.h - pure collective schedules: functions of (rank, size, step) */
#ifndef RDP_COLL_SCHED_H
#define RDP_COLL_SCHED_H

#include <pmix_common.h>

#include <stdint.h>

/*
 * A schedule says, for rank r of n at step s, whom r sends to, whom it
 * receives from, and which blocks travel.  Blocks are named by the rank of
 * the participant that contributed them (their origin).  A set of blocks is
 * at most two modular ranges {first, count}: origins first, first+1, ...,
 * first+count-1, all mod n, in that order on the wire.  Nothing here keeps
 * state or allocates.
 *
 * Every rank takes part in every step (a step where it has nothing to do
 * has peer -1 on both sides), so the number of steps is a function of n
 * and the algorithm only.  Within a step a rank first sends (its send set
 * only holds blocks received in earlier steps) then waits for its receive.
 */

enum rdp_coll_alg {
    RDP_COLL_ALG_AUTO   = 0, /**< let rdp_coll_select decide */
    RDP_COLL_ALG_RD     = 1, /**< recursive doubling allgather */
    RDP_COLL_ALG_BRUCK  = 2, /**< Bruck allgather */
    RDP_COLL_ALG_RING   = 3, /**< ring allgather */
    RDP_COLL_ALG_DISSEM = 4, /**< dissemination barrier (no blocks) */
    RDP_COLL_ALG_LAST   = 5
};

#define RDP_SCHED_MAX_RANGES 2

typedef struct rdp_sched_range {
    uint32_t first; /**< origin rank of the first block, < n */
    uint32_t count; /**< number of consecutive blocks (mod n), <= n */
} rdp_sched_range_t;

/** One direction of one step. */
typedef struct rdp_sched_xfer {
    int32_t peer;     /**< rank, or -1: nothing in this direction */
    uint32_t nranges; /**< 0..RDP_SCHED_MAX_RANGES */
    rdp_sched_range_t ranges[RDP_SCHED_MAX_RANGES];
} rdp_sched_xfer_t;

typedef struct rdp_sched_step {
    rdp_sched_xfer_t send;
    rdp_sched_xfer_t recv;
} rdp_sched_step_t;

/** Number of blocks in @a x. */
static inline uint32_t rdp_sched_xfer_nblocks(const rdp_sched_xfer_t *x)
{
    uint32_t total = 0;

    for (uint32_t i = 0; i < x->nranges; i++) {
        total += x->ranges[i].count;
    }
    return total;
}

/** ceil(log2(n)) for n >= 1 (0 for n <= 1): the bits of n - 1, inline
 * because every step's schedule asks for it. */
static inline uint32_t rdp_sched_ceil_log2(uint32_t n)
{
    return n <= 1 ? 0 : 32u - (uint32_t)__builtin_clz(n - 1);
}

/* Per-algorithm schedules.  nsteps(n) for n >= 1; step(r, n, s, out) for
 * r < n and s < nsteps(n) fills *out and returns PMIX_SUCCESS, otherwise
 * returns PMIX_ERR_BAD_PARAM and leaves *out alone. */

/** Recursive doubling.  A power of two n takes log2(n) steps.  Otherwise,
 * with p the largest power of two below n and e = n - p: step 0 folds each
 * extra rank p+i onto rank i (one block), steps 1..log2(p) run recursive
 * doubling among ranks 0..p-1 (rank i < e carrying block p+i as well), and
 * a last step unfolds: rank i sends every block but p+i to rank p+i. */
uint32_t rdp_sched_rd_nsteps(uint32_t n);
pmix_status_t rdp_sched_rd_step(uint32_t rank, uint32_t n, uint32_t step,
                                rdp_sched_step_t *out);

/** Bruck: ceil(log2 n) steps; at step s rank r sends its first
 * min(2^s, n - 2^s) blocks (starting at its own) to r - 2^s and receives
 * as many from r + 2^s.  Blocks are self-describing, so the final local
 * rotation of the textbook algorithm is not needed. */
uint32_t rdp_sched_bruck_nsteps(uint32_t n);
pmix_status_t rdp_sched_bruck_step(uint32_t rank, uint32_t n, uint32_t step,
                                   rdp_sched_step_t *out);

/** Ring: n - 1 steps; at step s rank r forwards block r - s to r + 1 and
 * receives block r - s - 1 from r - 1. */
uint32_t rdp_sched_ring_nsteps(uint32_t n);
pmix_status_t rdp_sched_ring_step(uint32_t rank, uint32_t n, uint32_t step,
                                  rdp_sched_step_t *out);

/** Dissemination barrier: ceil(log2 n) rounds; in round k rank r signals
 * r + 2^k and waits for r - 2^k.  No blocks travel. */
uint32_t rdp_sched_dissem_nsteps(uint32_t n);
pmix_status_t rdp_sched_dissem_step(uint32_t rank, uint32_t n, uint32_t step,
                                    rdp_sched_step_t *out);

/** Dispatch on @a alg (not AUTO); 0 steps / PMIX_ERR_BAD_PARAM for an
 * unknown algorithm. */
uint32_t rdp_sched_nsteps(enum rdp_coll_alg alg, uint32_t n);
pmix_status_t rdp_sched_step(enum rdp_coll_alg alg, uint32_t rank, uint32_t n,
                             uint32_t step, rdp_sched_step_t *out);

/** "recursive_doubling", "bruck", "ring", "dissemination", "auto". */
const char *rdp_coll_alg_name(enum rdp_coll_alg alg);

#endif
