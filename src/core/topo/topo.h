/* topo.h - hardware topology (hwloc), locality strings and cpusets */
#ifndef RDP_CORE_TOPO_TOPO_H
#define RDP_CORE_TOPO_TOPO_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>

/*
 * src/core/topo is the only code that includes hwloc.  Everything else sees
 * hwloc objects as the opaque pointers of pmix_topology_t / pmix_cpuset_t,
 * with source "hwloc" (RDP_TOPO_SOURCE).
 *
 * The process topology is loaded once, lazily, on first use: from what
 * rdp_topo_init was given (PMIX_TOPOLOGY2, PMIX_TOPOLOGY, PMIX_HWLOC_XML_V2,
 * PMIX_HWLOC_XML_V1, PMIX_TOPOLOGY_XML, PMIX_TOPOLOGY_FILE), else by
 * discovering this machine (hwloc itself honours HWLOC_XMLFILE and
 * HWLOC_SYNTHETIC).  It then lives until rdp_topo_cleanup (or process exit)
 * and is never destroyed by PMIx_Topology_destruct or a value destruct.
 * All functions here are thread-safe (the process topology is read-only
 * once loaded; loading is serialised).
 *
 * Locality strings use the format Open MPI 4.1 parses (the PMIx reference
 * library uses it too): ':'-separated fields, each a two-letter object
 * prefix followed by the hwloc list of the logical indices of the objects
 * of that type that the process's cpuset intersects, e.g.
 * "NM0:SK0:L30:L20:L10:CR0:HT0-1".  Prefixes: NM NUMA node, SK package,
 * L3/L2/L1 data or unified caches, CR core, HT hardware thread (PU).  NM
 * comes first, the others in topology depth order.  An unbound process
 * (no cpuset, or a cpuset covering every PU of the topology) has no
 * locality string: the server then publishes no PMIX_LOCALITY_STRING for
 * it, and consumers treat it as sharing only the node.
 *
 * cpuset strings: an hwloc list ("0-3,8"), optionally prefixed with the
 * source ("hwloc:0-3,8", the form PMIx_server_generate_cpuset_string
 * produces).  Parsing is strict: digits, ',' and '-' only, ranges low-high,
 * indices below RDP_TOPO_MAX_INDEX.
 */

#define RDP_TOPO_SOURCE    "hwloc"
#define RDP_TOPO_MAX_INDEX (1u << 20)

/**
 * Record what the process topology should be loaded from, out of init
 * @a info (keys listed above; PMIX_TOPOLOGY2/PMIX_TOPOLOGY objects are
 * duplicated, so the caller keeps its own).  Loads it now when such a key
 * is present; without one, nothing happens (discovery stays lazy).  When
 * the process topology is already loaded it is kept (debug log) and
 * PMIX_SUCCESS is returned.
 * Returns PMIX_ERR_BAD_PARAM for an unusable value (wrong type, bad XML),
 * PMIX_ERR_NOT_SUPPORTED for a topology of another source.
 * @param [in] info  borrowed
 */
pmix_status_t rdp_topo_init(const pmix_info_t info[], size_t ninfo);

/**
 * Release the process topology (loaded again on next use).  Call only when
 * no pmix_topology_t handed out by PMIx_Load_topology is still in use
 * (final finalize, tests).
 */
void rdp_topo_cleanup(void);

/**
 * Load the process topology if needed and return it.
 * @param [out] topo_p  borrowed; valid until rdp_topo_cleanup; do not free
 */
pmix_status_t rdp_topo_get(const pmix_topology_t **topo_p);

/**
 * Load a topology from an hwloc synthetic description ("pack:2 core:4 pu:2")
 * into @a topo (source "hwloc"); the caller releases it with
 * PMIx_Topology_destruct.  Machine-independent: for tests and simulation.
 * @param [in]  desc  borrowed
 * @param [out] topo  caller storage; written only on success
 */
pmix_status_t rdp_topo_load_synthetic(const char *desc, pmix_topology_t *topo);

/**
 * Locality string of a process bound to @a cpuset in @a topo (NULL: the
 * process topology).  *@a locality_p is malloc'ed, or NULL when the process
 * is unbound (@a cpuset NULL or "", or covering every PU).
 * PMIX_ERR_BAD_PARAM for a malformed cpuset or one with no PU in @a topo.
 * @param [in] topo    borrowed; NULL for the process topology
 * @param [in] cpuset  borrowed; cpuset string (see above)
 */
pmix_status_t rdp_topo_locality_string(const pmix_topology_t *topo,
                                       const char *cpuset, char **locality_p);

/**
 * Locality string of a process bound to the hwloc cpuset @a cpuset in the
 * process topology (PMIx_server_generate_locality_string); same rules as
 * rdp_topo_locality_string.  PMIX_ERR_NOT_SUPPORTED for another source.
 * @param [in] cpuset  borrowed
 */
pmix_status_t rdp_topo_cpuset_locality(const pmix_cpuset_t *cpuset,
                                       char **locality_p);

/**
 * Relative locality of two processes of the same node from their locality
 * strings: PMIX_LOCALITY_SHARE_NODE plus one bit per object type whose
 * index lists intersect.  A NULL string (unbound process) shares only the
 * node.  Unknown prefixes are ignored; a malformed field is
 * PMIX_ERR_BAD_PARAM.
 * @param [in] loc1, loc2  borrowed; may be NULL
 */
pmix_status_t rdp_topo_relative_locality(const char *loc1, const char *loc2,
                                         pmix_locality_t *locality_p);

/**
 * Parse a cpuset string into @a cpuset (source "hwloc", a new hwloc bitmap;
 * release with PMIx_Cpuset_destruct).  PMIX_ERR_BAD_PARAM when malformed
 * or empty, PMIX_ERR_NOT_SUPPORTED for another source prefix.
 * @param [in]  str     borrowed
 * @param [out] cpuset  caller storage; written only on success
 */
pmix_status_t rdp_topo_cpuset_parse(const char *str, pmix_cpuset_t *cpuset);

/**
 * Render @a cpuset as "hwloc:<list>" (PMIx_server_generate_cpuset_string);
 * *@a str_p malloc'ed.  PMIX_ERR_BAD_PARAM without a bitmap,
 * PMIX_ERR_NOT_SUPPORTED for another source.
 * @param [in] cpuset  borrowed
 */
pmix_status_t rdp_topo_cpuset_print(const pmix_cpuset_t *cpuset, char **str_p);

/**
 * Export @a topo (NULL: the process topology) as hwloc XML, in the v2
 * format or, with @a v1, the format hwloc 1.x reads (PMIX_HWLOC_XML_V1,
 * what an Open MPI built against hwloc 1 needs).  *@a xml_p malloc'ed.
 * @param [in] topo  borrowed
 */
pmix_status_t rdp_topo_export_xml(const pmix_topology_t *topo, bool v1,
                                  char **xml_p);

/**
 * Discover this machine as a process that wants to know its devices would
 * (hwloc's "important" I/O objects: PCI devices that are NICs, GPUs,
 * storage, and their OS devices) and export it as hwloc v2 XML: what a
 * daemon gives its ranks as PMIX_HWLOC_XML_V2 so that each one loads the
 * topology from memory instead of reading /sys and /proc itself.  Does not
 * touch the process topology.  *@a xml_p malloc'ed.
 */
pmix_status_t rdp_topo_machine_xml(char **xml_p);

/**
 * The current binding of the calling process (or, with @a thread, of the
 * calling thread) as a new hwloc cpuset (PMIx_Get_cpuset).
 * PMIX_ERR_NOT_AVAILABLE when the OS cannot tell (e.g. the process topology
 * is not this machine's).
 * @param [out] cpuset  caller storage; written only on success
 */
pmix_status_t rdp_topo_get_binding(bool thread, pmix_cpuset_t *cpuset);

/** Number of objects of @a type (PMIX_LOCALITY_SHARE_HWTHREAD, _CORE,
 * _L1CACHE, _L2CACHE, _L3CACHE, _PACKAGE, _NUMA) in @a topo (NULL: the
 * process topology); PMIX_ERR_BAD_PARAM for other types. */
pmix_status_t rdp_topo_count(const pmix_topology_t *topo, pmix_locality_t type,
                             unsigned *count_p);

#endif
