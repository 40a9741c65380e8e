/* place.c - which node each rank of a job runs on (rdpmix-run --map-by) */
#include "config.h"
#include "run/place.h"
#include "core/util/alloc.h"

#include <string.h>

int rdp_run_mapby_parse(const char *s, enum rdp_run_mapby *mapby_p)
{
    if (s == NULL) {
        return -1;
    }
    if (strcmp(s, "block") == 0) {
        *mapby_p = RDP_RUN_MAP_BLOCK;
    } else if (strcmp(s, "slot") == 0) {
        *mapby_p = RDP_RUN_MAP_SLOT;
    } else if (strcmp(s, "node") == 0) {
        *mapby_p = RDP_RUN_MAP_NODE;
    } else {
        return -1;
    }
    return 0;
}

const char *rdp_run_mapby_pmix(enum rdp_run_mapby mapby)
{
    switch (mapby) {
    case RDP_RUN_MAP_SLOT:
        return "BYSLOT";
    case RDP_RUN_MAP_NODE:
        return "BYNODE";
    default:
        return "BYSLOT:SPAN";
    }
}

const char *rdp_run_rankby_pmix(enum rdp_run_mapby mapby)
{
    return mapby == RDP_RUN_MAP_NODE ? "NODE" : "SLOT";
}

/* ranks placed when every node gets min(its limit, t) */
static uint64_t filled_at(uint32_t nnodes, const uint32_t *slots, uint64_t t)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < nnodes; i++) {
        sum += slots[i] != 0 && slots[i] < t ? slots[i] : t;
    }
    return sum;
}

static void place_block(uint32_t np, uint32_t nnodes, const uint32_t *slots,
                        uint32_t *count)
{
    uint64_t lo = 0, hi = np, excess;

    /* the smallest level t that places np ranks */
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;

        if (filled_at(nnodes, slots, mid) >= np) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    for (uint32_t i = 0; i < nnodes; i++) {
        count[i] = (uint32_t)(slots[i] != 0 && slots[i] < lo ? slots[i] : lo);
    }
    /* fewer nodes at level t than the excess is impossible: t - 1 would
     * not place them all */
    excess = filled_at(nnodes, slots, lo) - np;
    for (uint32_t i = nnodes; i-- > 0 && excess > 0;) {
        if (count[i] == lo && lo > 0) {
            count[i]--;
            excess--;
        }
    }
}

pmix_status_t rdp_run_place_slots(uint32_t np, uint32_t nnodes,
                                  enum rdp_run_mapby mapby,
                                  const uint32_t *slots, uint32_t *node_of)
{
    uint64_t limited = 0;
    uint32_t nfree   = 0, free_slots, *cap;

    if (np == 0 || nnodes == 0 || slots == NULL || node_of == NULL
        || (mapby != RDP_RUN_MAP_BLOCK && mapby != RDP_RUN_MAP_SLOT
            && mapby != RDP_RUN_MAP_NODE)) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < nnodes; i++) {
        if (slots[i] == 0) {
            nfree++;
        } else {
            limited += slots[i];
        }
    }
    if (nfree == 0 && limited < np) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    cap = rdp_calloc(nnodes, sizeof(*cap));
    if (cap == NULL) {
        return PMIX_ERR_NOMEM;
    }
    free_slots = np / nnodes + (np % nnodes != 0);
    if (nfree > 0 && limited < np) {
        uint64_t rest = ((uint64_t)np - limited + nfree - 1) / nfree;

        if (rest > free_slots) {
            free_slots = (uint32_t)rest;
        }
    }
    for (uint32_t i = 0; i < nnodes; i++) {
        cap[i] = slots[i] != 0 ? slots[i] : free_slots;
    }
    switch (mapby) {
    case RDP_RUN_MAP_BLOCK: {
        uint32_t node = 0;

        place_block(np, nnodes, slots, cap); /* cap: the count of each */
        for (uint32_t r = 0; r < np; r++) {
            while (cap[node] == 0) {
                node++;
            }
            node_of[r] = node;
            cap[node]--;
        }
        break;
    }
    case RDP_RUN_MAP_SLOT: {
        uint32_t node = 0;

        for (uint32_t r = 0; r < np; r++) {
            while (cap[node] == 0) {
                node++;
            }
            node_of[r] = node;
            cap[node]--;
        }
        break;
    }
    default: { /* RDP_RUN_MAP_NODE */
        uint32_t node = nnodes - 1;

        for (uint32_t r = 0; r < np; r++) {
            do {
                node = node + 1 < nnodes ? node + 1 : 0;
            } while (cap[node] == 0);
            node_of[r] = node;
            cap[node]--;
        }
        break;
    }
    }
    rdp_free(cap);
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_place(uint32_t np, uint32_t nnodes,
                            enum rdp_run_mapby mapby, uint32_t slots,
                            uint32_t *node_of)
{
    uint32_t *v;
    pmix_status_t status;

    if (np == 0 || nnodes == 0 || node_of == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    v = rdp_calloc(nnodes, sizeof(*v));
    if (v == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < nnodes; i++) {
        v[i] = slots;
    }
    status = rdp_run_place_slots(np, nnodes, mapby, v, node_of);
    rdp_free(v);
    return status;
}
