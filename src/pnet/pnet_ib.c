/* pnet_ib.c - an InfiniBand partition key per job, from the site's pool */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/log.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/*
 * Setting "ib_pkeys" (e.g. 0x8001-0x80ff) is the pool; the state file
 * makes sure no two live jobs hold the same key.  The key goes to UCX
 * (UCX_IB_PKEY) and Open MPI's openib BTL (OMPI_MCA_btl_openib_pkey), and
 * as the job-level value "rdpmix.pnet.ib.pkey" (uint32).  The site's
 * subnet manager must already have the keys in its partition table.
 */
#define IB_POOL "ib_pkey"

/* An InfiniBand device on this machine; else only when a site names it */
static bool ib_usable(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    struct dirent *de;
    bool any = false;

    if (d == NULL) {
        return false;
    }
    while (!any && (de = readdir(d)) != NULL) {
        any = de->d_name[0] != '.';
    }
    closedir(d);
    return any;
}

static pmix_status_t ib_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    uint32_t lo, hi, pkey;
    char text[16];
    pmix_status_t status;

    status = rdp_pnet_conf_range("ib_pkeys", &lo, &hi);
    if (status == PMIX_SUCCESS && (lo == 0 || hi > 0xffff)) {
        rdp_log_error(PNET, "ib_pkeys must lie in 0x0001-0xffff");
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_pool_take(IB_POOL, lo, hi, nspace, 1, &pkey);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    snprintf(text, sizeof(text), "0x%04x", pkey);
    status = rdp_pnet_out_setenv(out, "UCX_IB_PKEY", text);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_setenv(out, "OMPI_MCA_btl_openib_pkey", text);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_pnet_out_value(out, "rdpmix.pnet.ib.pkey", &pkey, PMIX_UINT32);
    }
    if (status == PMIX_SUCCESS) {
        rdp_log_info(PNET, "%s: ib partition key %s", nspace, text);
    }
    return status;
}

static void ib_release_app(const char *nspace)
{
    rdp_pnet_pool_give_back(IB_POOL, nspace);
}

static const char *const settings[] = {"ib_pkeys", NULL};

const rdp_pnet_module_t rdp_pnet_ib_module = {
    .settings    = settings,
    .name        = "ib",
    .usable      = ib_usable,
    .setup_app   = ib_setup_app,
    .release_app = ib_release_app,
};
