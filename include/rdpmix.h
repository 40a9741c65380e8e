/* rdpmix.h - rdpmix extensions to the PMIx Standard: the collective engine
 * bootstrap a host (resource manager plugin, rdpmixd) uses. */
#ifndef RDPMIX_H
#define RDPMIX_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/*
 * By default a PMIx server delegates the inter-node part of fence and
 * direct modex to its host (fence_nb / direct_modex upcalls), as the
 * Standard describes.  A host may instead let rdpmix's servers run it
 * themselves over UCX ("engine mode"):
 *
 *   1. PMIx_server_init with RDPMIX_ENGINE = true: the server creates its
 *      UCX worker.
 *   2. rdpmix_engine_address(): this server's address (opaque bytes: its
 *      UCX worker address and who runs it), which the host gathers from
 *      every server (out of band) ...
 *   3. ... and hands, as one table indexed by server number, to
 *      rdpmix_engine_connect() on every server, with a per-session key
 *      the host generated and passed to each server over its own trusted
 *      channel (messages between servers are authenticated with it).
 *
 * Server numbers: the server with number i hosts the processes whose
 * PMIX_NODEID is i, so a host numbers its nodes 0..nservers-1 and registers
 * every process's PMIX_NODEID.  From then on fences (barrier and collect)
 * and gets of remote processes' data run between the servers, whatever
 * upcalls the host module has.
 */

/** bool, PMIx_server_init: create the engine's UCX worker. */
#define RDPMIX_ENGINE "rdpmix.engine"
/** uint32, PMIx_server_init: this server's number (default: the node id
 * the host registers for this server's processes). */
#define RDPMIX_SERVER_INDEX "rdpmix.srv.index"

/** Length of the session key rdpmix_engine_connect expects. */
#define RDPMIX_SESSION_KEY_LEN 32

/**
 * This server's engine address. @a addr->bytes is malloc'ed (the caller
 * frees it with free()). PMIX_ERR_INIT before PMIx_server_init with
 * RDPMIX_ENGINE.
 */
PMIX_EXPORT pmix_status_t rdpmix_engine_address(pmix_byte_object_t *addr);

/**
 * Connect this server (number @a my_index) to the @a nservers servers
 * whose addresses are @a addrs[0..nservers) (addrs[my_index] is ours).
 * @a key must hold RDPMIX_SESSION_KEY_LEN bytes. Blocking; all arguments
 * are borrowed. Returns PMIX_SUCCESS, PMIX_ERR_BAD_PARAM, PMIX_ERR_INIT,
 * or PMIX_ERR_UNREACH.
 */
PMIX_EXPORT pmix_status_t rdpmix_engine_connect(
    uint32_t my_index, uint32_t nservers, const pmix_byte_object_t addrs[],
    const pmix_byte_object_t *key);

/*
 * PMIx_Connect / PMIx_Disconnect directives of RFC0003 that the PMIx
 * Standard (and OpenPMIx 4.2.2) lack.  Every participant of one operation
 * passes the same values.  The Standard's signatures stand: no new nspace
 * or rank is assigned, so RFC0003's PMIX_CONNECT_XCHG_ONLY is what every
 * connect does; RDPMIX_CONNECT_XCHG_ONLY is accepted for programs that say
 * so.
 */
/** char*, connect/disconnect: the application's name for this operation;
 * several operations over the same processes are told apart by it (all
 * participants give the same id, or none). */
#define RDPMIX_CONNECT_ID "rdpmix.cnct.id"
/** bool, connect/disconnect: raise PMIX_PROC_HAS_CONNECTED (connect) or
 * RDPMIX_PROC_HAS_DISCONNECTED (disconnect) in the participants each time
 * a participant calls it (source: that participant). */
#define RDPMIX_CONNECT_NOTIFY_EACH "rdpmix.cnct.notify.each"
/** bool, connect: raise PMIX_CONNECT_REQUESTED in the other participants
 * (source: the caller; the event carries RDPMIX_CONNECT_PROCS and, when
 * given, RDPMIX_CONNECT_ID, so a handler can join the operation). */
#define RDPMIX_CONNECT_NOTIFY_REQ "rdpmix.cnct.notify.req"
/** bool, connect/disconnect: participation is optional: a participant
 * that terminates or finalizes without calling it does not fail it. */
#define RDPMIX_CONNECT_OPTIONAL "rdpmix.cnct.optional"
/** bool, connect: a connected participant that terminates without
 * disconnecting raises no termination event in its peers. */
#define RDPMIX_CONNECT_EARLY_TERM_ALLOWED "rdpmix.cnct.eterm"
/** bool, connect: only exchange job-level info (rdpmix always does only
 * that: accepted, no effect). */
#define RDPMIX_CONNECT_XCHG_ONLY "rdpmix.cnct.xchg"
/** pmix_data_array_t of pmix_proc_t, in PMIX_CONNECT_REQUESTED events:
 * the participants of the requested connect. */
#define RDPMIX_CONNECT_PROCS "rdpmix.cnct.procs"
/** Event: a participant called PMIx_Disconnect with
 * RDPMIX_CONNECT_NOTIFY_EACH (RFC0003's disconnect counterpart of
 * PMIX_PROC_HAS_CONNECTED, which the Standard lacks; below
 * PMIX_EXTERNAL_ERR_BASE, where the Standard leaves codes to others). */
#define RDPMIX_PROC_HAS_DISCONNECTED (PMIX_EXTERNAL_ERR_BASE - 149)
/** pmix_byte_object_t, in the info of the host's connect upcall for a
 * connect naming an nspace its server cannot reach on its own (another
 * launcher's job): the committed data of this server's participants, a
 * bundle the host hands to the other job's servers, which get it back
 * through their direct_modex upcall (docs/design.md, "Connect and
 * disconnect").  Valid only during the upcall: a host copies it. */
#define RDPMIX_CONNECT_DATA "rdpmix.cnct.data"

/** Job-level (bool, in register_nspace's info or setup_application's
 * answer): the job's fabric keeps other jobs out (an IB partition key, a
 * Slingshot VNI or an OPA job key of its own), so the servers send the
 * payloads of its collectives without authentication ("trust follows the
 * fabric", docs/design.md).  Headers and control data stay authenticated. */
#define RDPMIX_FABRIC_ISOLATED "rdpmix.fabric.isolated"

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif
