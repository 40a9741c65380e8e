/* place.c - which node each rank of a job runs on (rdpmix-run --map-by) */
#include "config.h"
#include "run/place.h"

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

pmix_status_t rdp_run_place(uint32_t np, uint32_t nnodes,
                            enum rdp_run_mapby mapby, uint32_t slots,
                            uint32_t *node_of)
{
    if (np == 0 || nnodes == 0 || node_of == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (slots == 0) {
        slots = np / nnodes + (np % nnodes != 0);
    }
    if ((uint64_t)slots * nnodes < np) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    switch (mapby) {
    case RDP_RUN_MAP_BLOCK: {
        uint32_t base = np / nnodes, extra = np % nnodes;
        uint32_t node = 0, left = base + (extra > 0);

        for (uint32_t r = 0; r < np; r++) {
            while (left == 0) {
                node++;
                left = base + (node < extra);
            }
            node_of[r] = node;
            left--;
        }
        break;
    }
    case RDP_RUN_MAP_SLOT:
        for (uint32_t r = 0; r < np; r++) {
            node_of[r] = r / slots;
        }
        break;
    case RDP_RUN_MAP_NODE:
        for (uint32_t r = 0; r < np; r++) {
            node_of[r] = r % nnodes;
        }
        break;
    default:
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}
