/* place.h - which node each rank of a job runs on (rdpmix-run --map-by) */
#ifndef RDP_RUN_PLACE_H
#define RDP_RUN_PLACE_H

#include <pmix_common.h>

#include <stdint.h>

/*
 * Placement of N ranks on M nodes.  Within a node, ranks are in increasing
 * order (that order gives their local ranks).
 *
 *   block  contiguous ranks, balanced: the first N mod M nodes get
 *          ceil(N/M) ranks, the others floor(N/M) (the default)
 *   slot   each node has K slots (K = ceil(N/M) unless given); ranks fill
 *          node 0's slots, then node 1's ... (the last nodes may get
 *          fewer ranks, or none)
 *   node   round robin: rank r on node r mod M
 *
 * With K slots per node given, every mapping fails if N > M * K (no
 * oversubscription).
 */
enum rdp_run_mapby {
    RDP_RUN_MAP_BLOCK = 0,
    RDP_RUN_MAP_SLOT  = 1,
    RDP_RUN_MAP_NODE  = 2
};

/** "block", "slot" or "node"; 0, or -1 for anything else. */
int rdp_run_mapby_parse(const char *s, enum rdp_run_mapby *mapby_p);

/** What the job info says: PMIX_MAPBY ("BYSLOT:SPAN", "BYSLOT", "BYNODE",
 * as Open MPI's launchers spell them) and PMIX_RANKBY ("SLOT", "NODE").
 * Static strings. */
const char *rdp_run_mapby_pmix(enum rdp_run_mapby mapby);
const char *rdp_run_rankby_pmix(enum rdp_run_mapby mapby);

/**
 * Placement on nodes of their own sizes (hosts with slots, Slurm):
 * @a slots[i] is node i's number of slots, 0 for "no limit".  A node
 * without a limit counts as max(ceil(np / nnodes), ceil((np - C) / F))
 * slots for slot and node (C: the slots of the limited nodes, F: the
 * number of unlimited ones), which is ceil(np / nnodes) when no node has
 * a limit.
 *
 *   block  consecutive ranks, as balanced as the limits allow: each node
 *          gets min(slots, t) ranks for the smallest t that places them
 *          all, and the last nodes that got t give one back until exactly
 *          np are placed (no limits: the block placement above)
 *   slot   fill each node's slots in turn
 *   node   round robin over the nodes that still have a free slot
 *
 * Returns PMIX_SUCCESS, PMIX_ERR_BAD_PARAM or PMIX_ERR_OUT_OF_RESOURCE
 * (every node limited and np above their sum); @a node_of is written only
 * on success.
 */
pmix_status_t rdp_run_place_slots(uint32_t np, uint32_t nnodes,
                                  enum rdp_run_mapby mapby,
                                  const uint32_t *slots, uint32_t *node_of);

/**
 * Fill @a node_of[0..np) with the node of each rank.
 * @param [in] slots  slots per node; 0 for ceil(np / nnodes)
 * Returns PMIX_SUCCESS, PMIX_ERR_BAD_PARAM (np or nnodes 0, unknown
 * mapping) or PMIX_ERR_OUT_OF_RESOURCE (np > nnodes * slots); @a node_of
 * is written only on success.
 */
pmix_status_t rdp_run_place(uint32_t np, uint32_t nnodes,
                            enum rdp_run_mapby mapby, uint32_t slots,
                            uint32_t *node_of);

#endif
