/* slurmfence.h - operations run as Slurm 22.05's fences */
#ifndef RDP_CORE_SERVER_SLURMFENCE_H
#define RDP_CORE_SERVER_SLURMFENCE_H

#include "core/server/server_int.h"

/*
 * Slurm 22.05's mpi/pmix has no connect or group upcall, so operations
 * across nodes run as its fence_nb, which has two quirks (docs/design.md,
 * "Slurm's fences"): it names a fence to the other nodes by its first
 * process repeated, so only a fence over copies of an nspace's wildcard
 * meets its peers; and its tree (a fence without data) does not wait for
 * the other nodes, while its ring (data and PMIX_COLLECT_DATA) does.
 * Slurm keeps one collective per (kind, process list) for the step's life
 * and matches calls of each in order, so the number of wildcard copies
 * names an operation to it.  Loop thread.
 */

/** How many nodes of their nspace @a procs (one nspace; wildcards cover
 * the job) live on, and in @a of_p how many nodes that nspace has;
 * 0 when unknown or when @a procs name several nspaces. */
size_t rdp_srv_procs_span(const pmix_proc_t *procs, size_t nprocs,
                          size_t *of_p);

/** The host's fence_nb as Slurm's ring over @a copies copies of
 * @a nspace's wildcard, carrying @a data (taken on SUCCESS, as
 * fence_nb takes it) and PMIX_COLLECT_DATA besides @a info; the host
 * answers through @a cbfunc with every node's data concatenated. */
pmix_status_t rdp_srv_slurm_ring(const char *nspace, size_t copies,
                                 const pmix_info_t *info, size_t ninfo,
                                 char *data, size_t ndata,
                                 pmix_modex_cbfunc_t cbfunc, void *cbdata);

#endif
