/* connect.h - what PMIx_Connect / PMIx_Disconnect add to a collective */
#ifndef RDP_CORE_SERVER_CONNECT_H
#define RDP_CORE_SERVER_CONNECT_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/server/coll.h"

/*
 * A connect or disconnect is a collective of coll.c (local aggregation,
 * then the engine or the host across servers).  This file reads its
 * directives (RFC0003's, rdpmix.h) and raises the events they ask for.
 * Loop thread only.
 */

/** Directives of one connect/disconnect request; pointers borrow from
 * the request's info array. */
typedef struct rdp_srv_cnct_dirs {
    const char *id; /* RDPMIX_CONNECT_ID or NULL */
    bool notify_each;
    bool notify_req;
    bool optional;
    bool early_term;
} rdp_srv_cnct_dirs_t;

/** Read and check the directives of @a info.  PMIX_ERR_BAD_PARAM (logged)
 * for a directive of the wrong type or an empty or overlong id. */
pmix_status_t rdp_srv_connect_dirs(const pmix_info_t *info, size_t ninfo,
                                   rdp_srv_cnct_dirs_t *dirs_p);

/** @a caller asked to connect with @a procs, some of which are not
 * known (rdp_srv_coll_check_procs: PMIX_ERR_NOT_FOUND).  An nspace this
 * server does not know (another job, e.g. of another rdpmix-run, or
 * another cluster) is logged and PMIX_ERR_NOT_SUPPORTED (connecting jobs
 * that share no server is not implemented); else PMIX_ERR_NOT_FOUND. */
pmix_status_t rdp_srv_connect_foreign(const rdp_srv_client_t *caller,
                                      const pmix_proc_t *procs, size_t nprocs);

/** @a caller joins connect or disconnect tracker @a coll: while it
 * gathers, raise the events its directives (those of its first arrival:
 * all participants give the same) ask for, in the participants on this
 * node (except @a caller) and, through the host's notify_event, on the
 * others. */
void rdp_srv_connect_arrived(const rdp_srv_coll_t *coll,
                             const rdp_srv_client_t *caller);

#endif
