/* topo_api.c - the Standard's topology, cpuset and locality functions */
#include "config.h"

#include "core/topo/topo.h"
#include "core/util/directive.h"

#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <pmix.h>

#include <strings.h>

/*
 * PMIx_Load_topology hands out the process topology itself (shared, like
 * the reference library): PMIx_Topology_destruct and value destructs
 * release the source string but never the process topology.  Any other
 * hwloc topology is destroyed by PMIx_Topology_destruct.
 */

pmix_status_t PMIx_Load_topology(pmix_topology_t *topo)
{
    const pmix_topology_t *pt;
    char *source = NULL;
    pmix_status_t st;

    if (topo == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (topo->source != NULL
        && strcasecmp(topo->source, RDP_TOPO_SOURCE) != 0) {
        /* the caller asked for a topology library we do not have */
        return PMIX_ERR_NOT_SUPPORTED;
    }
    st = rdp_topo_get(&pt);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (topo->source == NULL) {
        source = rdp_strdup(RDP_TOPO_SOURCE);
        if (source == NULL) {
            return PMIX_ERR_NOMEM;
        }
        topo->source = source;
    }
    topo->topology = pt->topology;
    return PMIX_SUCCESS;
}

void PMIx_Topology_destruct(pmix_topology_t *topo)
{
    if (topo == NULL) {
        return;
    }
    /* frees the source; the hwloc object through topo.c's value hooks */
    rdp_elems_destruct(PMIX_TOPO, topo, 1);
}

pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                       pmix_cpuset_t *cpuset)
{
    if (cpuset_string == NULL || cpuset == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_topo_cpuset_parse(cpuset_string, cpuset);
}

pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref)
{
    if (cpuset == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (ref != PMIX_CPUBIND_PROCESS && ref != PMIX_CPUBIND_THREAD) {
        rdp_log_error(CORE, "PMIx_Get_cpuset: unknown bind envelope %u",
                      (unsigned)ref);
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_topo_get_binding(ref == PMIX_CPUBIND_THREAD, cpuset);
}

void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset)
{
    if (cpuset == NULL) {
        return;
    }
    /* frees the source; the bitmap through topo.c's value hooks */
    rdp_elems_destruct(PMIX_PROC_CPUSET, cpuset, 1);
}

pmix_status_t PMIx_Get_relative_locality(const char *locality1,
                                         const char *locality2,
                                         pmix_locality_t *locality)
{
    if (locality == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_topo_relative_locality(locality1, locality2, locality);
}

/* Device distances need the I/O part of the topology (NICs, GPUs), which
 * rdpmix does not discover. */
pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo,
                                     pmix_cpuset_t *cpuset, pmix_info_t info[],
                                     size_t ninfo,
                                     pmix_device_distance_t *distances[],
                                     size_t *ndist)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo,
                                        pmix_cpuset_t *cpuset,
                                        pmix_info_t info[], size_t ninfo,
                                        pmix_device_dist_cbfunc_t cbfunc,
                                        void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}
