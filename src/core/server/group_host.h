/* group_host.h - group operations across nodes through the host */
#ifndef RDP_CORE_SERVER_GROUP_HOST_H
#define RDP_CORE_SERVER_GROUP_HOST_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/server/xchg.h"

/*
 * Without the engine (host-delegated mode) a group construct or destruct
 * over members on several nodes exchanges its servers' blocks (group.h)
 * through the host: its `group` upcall when it has one, else its
 * `fence_nb` over exactly the members (Slurm 22.05).  Same contract as
 * rdp_srv_xchg_start, so group.c resolves the result the same way.
 * docs/design.md, "Groups", says how context ids are chosen and why
 * operations over the same process set run one at a time.  Loop thread.
 */

/** Start the exchange of @a args (own_buf: RDP_COLL_HEADROOM bytes, then
 * this server's block; taken in every case) for the @a construct or
 * destruct of group @a id.  done(...) runs later exactly once; on error
 * never.  PMIX_ERR_NOT_SUPPORTED when the host has neither upcall. */
pmix_status_t rdp_srv_group_host_start(bool construct, const char *id,
                                       const rdp_srv_xchg_args_t *args,
                                       rdp_srv_xchg_done_fn done, void *arg,
                                       uint64_t *handle_p);

/** The @a construct or destruct of group @a id, exchange key @a key,
 * over @a procs failed on this
 * server with @a status before or while it exchanged: unless its
 * exchange is under way, contribute the failure to the host's collective
 * in its place, so the other servers end with @a status too. */
void rdp_srv_group_host_fail(bool construct, const char *id, const uint8_t *key,
                             size_t keylen, const pmix_proc_t *procs,
                             size_t nprocs, pmix_status_t status);

#endif
