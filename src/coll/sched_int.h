/* sched_int.h - helpers private to the schedule files */
#ifndef RDP_COLL_SCHED_INT_H
#define RDP_COLL_SCHED_INT_H

#include "coll/sched.h"

static inline void sched_xfer_none(rdp_sched_xfer_t *x)
{
    x->peer    = -1;
    x->nranges = 0;
}

/* Set @a x to peer @a peer carrying one range; a zero count adds no range. */
static inline void sched_xfer_one(rdp_sched_xfer_t *x, uint32_t peer,
                                  uint32_t first, uint32_t count)
{
    x->peer    = (int32_t)peer;
    x->nranges = 0;
    if (count > 0) {
        x->ranges[0].first = first;
        x->ranges[0].count = count;
        x->nranges         = 1;
    }
}

static inline void sched_xfer_add(rdp_sched_xfer_t *x, uint32_t first,
                                  uint32_t count)
{
    if (count > 0) {
        x->ranges[x->nranges].first = first;
        x->ranges[x->nranges].count = count;
        x->nranges++;
    }
}

/* Steps of the log-round schedules (Bruck, dissemination); 0 for sizes the
 * schedules do not support. */
static inline uint32_t sched_log_nsteps(uint32_t n)
{
    if (n == 0 || n > INT32_MAX) {
        return 0;
    }
    return rdp_sched_ceil_log2(n);
}

/* (a + b) mod n and (a - b) mod n for a, b < n; no overflow for n < 2^31 */
static inline uint32_t sched_add(uint32_t a, uint32_t b, uint32_t n)
{
    uint64_t s = (uint64_t)a + b;

    return (uint32_t)(s >= n ? s - n : s);
}

static inline uint32_t sched_sub(uint32_t a, uint32_t b, uint32_t n)
{
    return a >= b ? a - b : (uint32_t)((uint64_t)a + n - b);
}

#endif
