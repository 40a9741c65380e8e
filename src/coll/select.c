/* select.c - choosing a collective algorithm from facts all participants share */
#include "config.h"
#include "coll/select.h"
#include "core/util/log.h"
#include "core/util/config_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum rdp_coll_size_class rdp_coll_size_class_of(uint64_t total_bytes,
                                                uint32_t n)
{
    uint64_t avg;

    if (n == 0) {
        return RDP_COLL_SIZE_UNKNOWN;
    }
    avg = total_bytes / n;
    if (avg <= RDP_COLL_SMALL_MAX_BLOCK) {
        return RDP_COLL_SIZE_SMALL;
    }
    if (avg < RDP_COLL_LARGE_MIN_BLOCK) {
        return RDP_COLL_SIZE_MEDIUM;
    }
    return RDP_COLL_SIZE_LARGE;
}

pmix_status_t rdp_coll_alg_parse(const char *s, enum rdp_coll_alg *alg_p)
{
    static const struct {
        const char *name;
        enum rdp_coll_alg alg;
    } names[] = {
        {"auto", RDP_COLL_ALG_AUTO}, {"recursive_doubling", RDP_COLL_ALG_RD},
        {"rd", RDP_COLL_ALG_RD},     {"bruck", RDP_COLL_ALG_BRUCK},
        {"ring", RDP_COLL_ALG_RING},
    };

    if (s == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *alg_p = names[i].alg;
            return PMIX_SUCCESS;
        }
    }
    return PMIX_ERR_BAD_PARAM;
}

pmix_status_t rdp_coll_alg_from_env(enum rdp_coll_alg *alg_p)
{
    const char *s = rdp_cfg_env(RDP_CFG_COLL_ALG);

    if (s == NULL) {
        *alg_p = RDP_COLL_ALG_AUTO;
        return PMIX_SUCCESS;
    }
    if (rdp_coll_alg_parse(s, alg_p) != PMIX_SUCCESS) {
        rdp_log_error(COLL,
                      "RDPMIX_COLL_ALG: unknown algorithm \"%s\" (expected "
                      "recursive_doubling, bruck, ring or auto)",
                      s);
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_coll_seg_bytes_from_env(uint64_t *bytes_p)
{
    uint64_t v;
    pmix_status_t status = rdp_cfg_uint(RDP_CFG_COLL_SEG_BYTES, &v);

    /* a bad value (logged) fails the engine rather than running with the
     * default the user did not ask for */
    if (status == PMIX_SUCCESS) {
        *bytes_p = v;
    }
    return status;
}

enum rdp_coll_alg rdp_coll_select(enum rdp_coll_kind kind, uint32_t n,
                                  enum rdp_coll_size_class size_class,
                                  enum rdp_coll_alg forced)
{
    if (kind == RDP_COLL_BARRIER) {
        return RDP_COLL_ALG_DISSEM;
    }
    if (forced == RDP_COLL_ALG_RD || forced == RDP_COLL_ALG_BRUCK
        || forced == RDP_COLL_ALG_RING) {
        return forced;
    }
    /* Measured over UCX tcp, 2..16 servers (select.h has the numbers):
     * from RDP_COLL_LARGE_MIN_BLOCK the ring wins (its n - 1 steps move
     * each byte once per link, in messages that stay eager); below, Bruck
     * is best or tied. */
    if ((size_class == RDP_COLL_SIZE_LARGE) && n > 2
        && n <= RDP_COLL_RING_MAX_PEERS) {
        return RDP_COLL_ALG_RING;
    }
    return RDP_COLL_ALG_BRUCK;
}
