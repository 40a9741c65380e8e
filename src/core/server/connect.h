/* connect.h - what PMIx_Connect / PMIx_Disconnect add to a collective */
#ifndef RDP_CORE_SERVER_CONNECT_H
#define RDP_CORE_SERVER_CONNECT_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/server/server_int.h"

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

/** Append the operation id of @a dirs (if any) to the collective
 * signature *@a sig_p (rdp_malloc'ed; replaced), so operations over the
 * same processes with different ids never share a tracker, and each id
 * counts its own sequence numbers. */
pmix_status_t rdp_srv_connect_sig_add_id(const rdp_srv_cnct_dirs_t *dirs,
                                         uint8_t **sig_p, size_t *siglen_p);

/** @a caller asked to connect with processes of @a nspace, which this
 * server does not know (another job, e.g. of another rdpmix-run, or
 * another cluster): logged; PMIX_ERR_NOT_SUPPORTED (connecting jobs that
 * do not share servers is not implemented). */
pmix_status_t rdp_srv_connect_foreign(const rdp_srv_client_t *caller,
                                      const char *nspace);

/** @a caller joined connect (@a connect true) or disconnect over the
 * canonical @a procs: raise the events its directives ask for, in the
 * participants on this node (except @a caller) and, through the host's
 * notify_event, on the others. */
void rdp_srv_connect_arrived(bool connect, const rdp_srv_client_t *caller,
                             const pmix_proc_t *procs, size_t nprocs,
                             const rdp_srv_cnct_dirs_t *dirs);

#endif
