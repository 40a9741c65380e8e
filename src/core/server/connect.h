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

/** True for an nspace this server knows only as another launcher's job
 * (registered by the host after a connect across jobs): no local ranks
 * and no PMIX_NODEID for its ranks, so neither the engine nor the node
 * map reaches them; its data comes through the host. */
bool rdp_srv_connect_ns_foreign(const rdp_srv_nspace_t *ns);

/** True when @a procs name an nspace this server does not know or knows
 * only as foreign: the host runs such a connect/disconnect (engine or
 * not), and a connect carries the participants' committed data. */
bool rdp_srv_connect_is_foreign(const pmix_proc_t *procs, size_t nprocs);

/** @a caller asked to connect (@a op) with @a procs, which name an
 * nspace this server does not know (rdp_srv_coll_check_procs:
 * PMIX_ERR_NOT_FOUND).  Checks the ranks of the known ones and that
 * @a caller is among them, and makes @a procs canonical (*@a nprocs_p).
 * A host without the op's upcall cannot reach the other job:
 * PMIX_ERR_NOT_SUPPORTED (logged). */
pmix_status_t rdp_srv_connect_foreign(const rdp_srv_client_t *caller,
                                      uint8_t op, pmix_proc_t *procs,
                                      size_t *nprocs_p);

/** @a caller joins connect or disconnect tracker @a coll: while it
 * gathers, raise the events its directives (those of its first arrival:
 * all participants give the same) ask for, in the participants on this
 * node (except @a caller) and, through the host's notify_event, on the
 * others. */
/** The events @a caller's connect (@a connect) or disconnect over
 * @a procs asks for in @a info (notify-each, notify-request). */
void rdp_srv_connect_raise(bool connect, const rdp_srv_client_t *caller,
                           const pmix_proc_t *procs, size_t nprocs,
                           const pmix_info_t *info, size_t ninfo);
void rdp_srv_connect_arrived(const rdp_srv_coll_t *coll,
                             const rdp_srv_client_t *caller);

#endif
