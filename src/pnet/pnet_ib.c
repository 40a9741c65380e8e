/* pnet_ib.c - an InfiniBand partition key per job, from the site's pool */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/topo/topo_near.h"
#include "core/util/log.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Setting "ib_pkeys" (e.g. 0x8001-0x80ff) is the pool; the state file
 * makes sure no two live jobs hold the same key.  The key goes to UCX
 * (UCX_IB_PKEY) and Open MPI's openib BTL (OMPI_MCA_btl_openib_pkey), and
 * as the job-level value "rdpmix.pnet.ib.pkey" (uint32).  The site's
 * subnet manager must already have the keys in its partition table.
 *
 * Each process the host registered with a binding also gets
 * UCX_NET_DEVICES: the ports of the HCAs nearest its cpus (topo_near.h),
 * in the topology of "ib_topology" (an hwloc XML file) or of this machine.
 * It is added, never overwritten: a user's own choice wins.
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

static pmix_status_t ib_setup_proc(const char *nspace, pmix_rank_t rank,
                                   const char *cpuset, const char *locality,
                                   rdp_pnet_out_t *out)
{
    char xml[1024];
    const char *path = NULL;
    char *devices    = NULL;
    pmix_status_t status;

    if (rdp_pnet_conf_get("ib_topology", xml, sizeof(xml)) && xml[0] != '\0') {
        path = xml;
    }
    status = rdp_topo_near_hcas(path, cpuset, locality, &devices);
    if (status == PMIX_SUCCESS && devices != NULL) {
        status = rdp_pnet_out_addenv(out, "UCX_NET_DEVICES", devices);
        rdp_log_debug(PNET, "%s: rank %u: UCX_NET_DEVICES=%s", nspace, rank,
                      devices);
    }
    free(devices);
    return status;
}

static void ib_release_app(const char *nspace)
{
    rdp_pnet_pool_give_back(IB_POOL, nspace);
}

static const char *const settings[] = {"ib_pkeys", "ib_topology", NULL};

const rdp_pnet_module_t rdp_pnet_ib_module = {
    .settings    = settings,
    .name        = "ib",
    .usable      = ib_usable,
    .setup_app   = ib_setup_app,
    .release_app = ib_release_app,
    .setup_proc  = ib_setup_proc,
};
