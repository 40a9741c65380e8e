/* fabric.h - does this node have a device for Open MPI's MTLs, and did a
 * site choose them in its Open MPI parameter files */
#ifndef RDP_RUN_FABRIC_H
#define RDP_RUN_FABRIC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Open MPI 4.1's cm PML runs over an MTL: psm (True Scale, /dev/ipath*),
 * psm2 (Omni-Path, /dev/hfi1_*) or ofi (libfabric; with Open MPI's default
 * provider exclusions it needs a verbs or EFA device in
 * /sys/class/infiniband, or Slingshot's /dev/cxi*).  On a node with none of these no MTL can run,
 * yet MPI_Init still loads all three, and the constructors of libpsm2 and
 * libinfinipath (loaded by psm2, psm and libfabric) each spend 100 ms
 * measuring the CPU clock with usleep() before anything is selected.
 */

/**
 * Whether any of the devices above exists under @a root ("" or NULL: this
 * machine; tests give a directory tree).  When one does and @a found is
 * not NULL, its path (below @a root) is written there, truncated to
 * @a len.
 * @param [in] root  borrowed
 */
bool rdp_run_fabric_device(const char *root, char *found, size_t len);

/**
 * Whether the Open MPI MCA parameter file @a path ("name = value" lines,
 * '#' comments) sets @a framework (e.g. "mtl") to a list of components to
 * use, i.e. a value that does not start with '^'.  A missing or unreadable
 * file sets nothing.
 * @param [in] path, framework  borrowed
 */
bool rdp_run_ompi_file_selects(const char *path, const char *framework);

#endif
