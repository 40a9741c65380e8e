/* jobinfo.h - the job description rdpmixd registers with its PMIx server */
#ifndef RDP_RUN_JOBINFO_H
#define RDP_RUN_JOBINFO_H

#include <pmix_common.h>

#include "run/ctl.h"

/*
 * What a production launcher gives PMIx_server_register_nspace: job-level
 * sizes and maps (node map and proc map from PMIx_generate_regex/ppn, so
 * the server must be initialised), this node's locality, one app info
 * array, one node info array per node, and a PMIX_PROC_DATA array for
 * every rank of the job.  Local ranks are numbered in the order the
 * LAUNCH lists a node's ranks.
 */
typedef struct rdp_run_jobinfo_params {
    const rdp_ctl_launch_t *launch; /* borrowed */
    uint32_t node_id;               /* this daemon's node */
    const char *tmpdir;             /* PMIX_TMPDIR; NULL to omit */
    const char *nsdir;              /* PMIX_NSDIR; NULL to omit */
    /* per-rank PMIX_PROCDIR for this node's ranks, indexed by local rank;
     * NULL to omit */
    char *const *procdirs;
    /* the binding this node's ranks inherit from the daemon (rdpmix binds
     * nothing itself), as PMIX_CPUSET (a bare hwloc list) and
     * PMIX_LOCALITY_STRING; NULL to omit (the daemon is not bound) */
    const char *cpuset;
    const char *locality;
    /* this node's topology as hwloc v2 XML, registered as job-level
     * PMIX_HWLOC_XML_V2 (what Open MPI 4.1 loads instead of discovering
     * the machine in every rank); NULL to omit */
    const char *topo_xml;
} rdp_run_jobinfo_params_t;

/** *info_p is malloc'ed (free with PMIX_INFO_FREE(*info_p, *ninfo_p)). */
pmix_status_t rdp_run_jobinfo_build(const rdp_run_jobinfo_params_t *params,
                                    pmix_info_t **info_p, size_t *ninfo_p);

/** Position of @a rank in its node's list (its local rank) and that
 * node's index; -1 if the rank is not in the map. */
int rdp_run_jobinfo_locate(const rdp_ctl_launch_t *launch, uint32_t rank,
                           uint32_t *node_p, uint32_t *local_rank_p);

/**
 * The job-level and per-rank info of another launcher's job (@a launch,
 * its LAUNCH without secrets), for PMIx_server_register_nspace with no
 * local ranks: no node map, no node-level info and no node of any rank,
 * so that node names equal to ours (simulated nodes) make none of its
 * ranks local here.
 */
pmix_status_t rdp_run_jobinfo_build_foreign(const rdp_ctl_launch_t *launch,
                                            pmix_info_t **info_p,
                                            size_t *ninfo_p);

#endif
