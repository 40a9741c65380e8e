/* topo_near.h - the network devices (HCAs) nearest a process's binding */
#ifndef RDP_CORE_TOPO_TOPO_NEAR_H
#define RDP_CORE_TOPO_TOPO_NEAR_H

#include <pmix_common.h>

/*
 * For pnet's ib module (UCX_NET_DEVICES per process, docs/pnet.md): which
 * InfiniBand HCAs (hwloc's OpenFabrics OS devices) are nearest a process.
 *
 * Nearness is hwloc's tree distance: the deeper the smallest object that
 * holds both the process's cpuset and the HCA's locality (its first non-I/O
 * ancestor), the nearer.  Every HCA at the best depth is chosen, so a
 * process on a package with two HCAs gets both and a process spanning two
 * packages gets the HCAs of their common parent.
 *
 * The topology is loaded with its I/O devices once per source and kept
 * until rdp_topo_near_cleanup; the functions are thread-safe (one lock).
 */

/**
 * The HCAs nearest a process bound to @a cpuset (an hwloc list "0-3",
 * optionally "hwloc:"-prefixed), or, when @a cpuset is NULL, to the
 * objects of @a locality (a PMIX_LOCALITY_STRING: its last field, the
 * deepest, names them), in the topology of the hwloc XML file @a xml_path
 * (NULL: this machine, discovered).
 *
 * *@a devices_p is a malloc'ed UCX_NET_DEVICES value, every active port of
 * each chosen HCA ("mlx5_0:1,mlx5_1:1"; a device whose ports hwloc does
 * not describe counts as port 1), or NULL when there is nothing to choose:
 * no HCA, an unbound process (both NULL or empty, or a binding covering
 * every PU), or no active port.
 * PMIX_ERR_BAD_PARAM (logged) for a malformed binding, one with no PU in
 * the topology, or an XML file hwloc rejects.
 * @param [in] xml_path  borrowed
 * @param [in] cpuset    borrowed
 * @param [in] locality  borrowed
 */
pmix_status_t rdp_topo_near_hcas(const char *xml_path, const char *cpuset,
                                 const char *locality, char **devices_p);

/** Release the kept topology (loaded again on next use). */
void rdp_topo_near_cleanup(void);

#endif
