/* pnet_tcp.c - a static range of TCP ports per job, from the site's pool */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/log.h"

#include <stdio.h>
#include <string.h>

/*
 * Settings "tcp_ports" (e.g. 40000-40999) and "tcp_ports_per_job"
 * (default 32): the range is cut into blocks of that many ports, and a
 * job gets one block no other live job holds (the pool's values are block
 * numbers).  Delivered as RDPMIX_TCP_PORTS=FIRST-LAST, Open MPI's TCP BTL
 * settings (OMPI_MCA_btl_tcp_port_min_v4 / _range_v4), and the job-level
 * value "rdpmix.pnet.tcp.ports" (string FIRST-LAST).  Only when a site
 * names the module: nothing on a machine tells that ports are wanted.
 */
#define TCP_POOL "tcp_block"

static bool tcp_usable(void)
{
    return false;
}

static pmix_status_t tcp_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    uint32_t lo, hi, per_job, block, first;
    char range[32], min[16], count[16];
    pmix_status_t status;

    status = rdp_pnet_conf_range("tcp_ports", &lo, &hi);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_conf_count("tcp_ports_per_job", 32, &per_job);
    }
    if (status == PMIX_SUCCESS && (hi > 65535 || hi - lo + 1 < per_job)) {
        rdp_log_error(PNET,
                      "tcp_ports %u-%u cannot hold one block of %u "
                      "ports",
                      lo, hi, per_job);
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_pool_take(TCP_POOL, 0, (hi - lo + 1) / per_job - 1,
                                    nspace, 1, &block);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    first = lo + block * per_job;
    snprintf(range, sizeof(range), "%u-%u", first, first + per_job - 1);
    snprintf(min, sizeof(min), "%u", first);
    snprintf(count, sizeof(count), "%u", per_job);
    status = rdp_pnet_out_setenv(out, "RDPMIX_TCP_PORTS", range);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_setenv(out, "OMPI_MCA_btl_tcp_port_min_v4", min);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_pnet_out_setenv(out, "OMPI_MCA_btl_tcp_port_range_v4", count);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_value(out, "rdpmix.pnet.tcp.ports", range,
                                    PMIX_STRING);
    }
    return status;
}

static void tcp_release_app(const char *nspace)
{
    rdp_pnet_pool_give_back(TCP_POOL, nspace);
}

static const char *const settings[] = {"tcp_ports", "tcp_ports_per_job", NULL};

const rdp_pnet_module_t rdp_pnet_tcp_module = {
    .settings    = settings,
    .name        = "tcp",
    .usable      = tcp_usable,
    .setup_app   = tcp_setup_app,
    .release_app = tcp_release_app,
};
