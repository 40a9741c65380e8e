/* xchg.h - the servers' operation-neutral exchange (allgather or barrier) */
#ifndef RDP_CORE_SERVER_XCHG_H
#define RDP_CORE_SERVER_XCHG_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

/*
 * Every allgather-shaped server operation (fence; connect and group
 * construction to come) runs its inter-server part through
 * rdp_srv_xchg_start: the servers that host the participants each
 * contribute one block and each get every block back, through a
 * (callback, argument) pair.  In engine mode the collective engine carries
 * it; in host-delegated mode the host does, and the operation hands the
 * host's opaque answer to the same kind of callback as one block of origin
 * RDP_SRV_XCHG_HOST.  Loop thread only.
 */

/* One server's contribution, as the operation returns it. origin is the
 * engine index of the server (RDP_SRV_XCHG_HOST when the host delivered
 * an opaque concatenation: host-delegated mode). data is borrowed for the
 * duration of the callback only. Every participating server's block is
 * included, this server's own too (callers skip it if they want). */
typedef struct rdp_srv_xchg_block {
    uint32_t origin;
    const void *data;
    size_t len;
} rdp_srv_xchg_block_t;
#define RDP_SRV_XCHG_HOST UINT32_MAX

/* Completion: runs on the loop thread, exactly once, never inside
 * rdp_srv_xchg_start. status != PMIX_SUCCESS => nblocks == 0.
 * (Exception: exchanges still running when the engine shuts down, at
 * server finalize, are abandoned without a call.) */
typedef void (*rdp_srv_xchg_done_fn)(pmix_status_t status,
                                     const rdp_srv_xchg_block_t *blocks,
                                     size_t nblocks, void *arg);

typedef struct rdp_srv_xchg_args {
    /* operation identity: bytes every participating server derives
     * identically (e.g. op code + canonical procs + sequence number /
     * connect id / group id); copied.  Its last 8 bytes (when it has at
     * least 8) are taken as the number of the operation within the rest,
     * the participant set: consecutive numbers of one set reuse the
     * allgather size class of the previous result. */
    const uint8_t *key;
    size_t keylen;
    /* participants (WILDCARD allowed); the servers that host them (their
     * registered PMIX_NODEID) take part; this server must be one */
    const pmix_proc_t *procs;
    size_t nprocs;
    bool collect;   /* false: barrier, blocks empty */
    double timeout; /* seconds, 0 = none */
    /* rdp_malloc'ed, payload at own_buf + RDP_COLL_HEADROOM, taken over
     * whatever the call returns; NULL when not collecting */
    void *own_buf;
    size_t len; /* payload bytes */
    /* the done callback never reads this server's own block: the engine
     * may free it once sent (rdp_coll_args_t.own_unneeded; its block then
     * comes back with data NULL) */
    bool own_unneeded;
} rdp_srv_xchg_args_t;

/* Start the inter-server part over the engine. On PMIX_SUCCESS *handle_p
 * identifies it and done(...) runs later exactly once; on error never.
 * PMIX_ERR_INIT without the engine; PMIX_ERR_BAD_PARAM when a participant
 * has no valid PMIX_NODEID or none is on this server; PMIX_ERR_NOT_FOUND
 * for an unknown nspace; the engine's errors (rdp_coll_start). */
pmix_status_t rdp_srv_xchg_start(const rdp_srv_xchg_args_t *args,
                                 rdp_srv_xchg_done_fn done, void *arg,
                                 uint64_t *handle_p);
/* Fail it here only with status (done then runs later with it).
 * False when no such exchange is running. */
bool rdp_srv_xchg_cancel(uint64_t handle, pmix_status_t status);
/* The engine indexes of the servers that host @a procs (WILDCARD
 * allowed), sorted, in *srv_p (rdp_malloc'ed; *n_p of them; this server
 * need not be one).  PMIX_ERR_INIT without the engine; else as
 * rdp_srv_xchg_start. */
pmix_status_t rdp_srv_xchg_servers(const pmix_proc_t *procs, size_t nprocs,
                                   uint32_t **srv_p, uint32_t *n_p);
/* The engine index of this server and the number of servers
 * (UINT32_MAX / 0 without the engine). */
uint32_t rdp_srv_xchg_me(void);
uint32_t rdp_srv_xchg_nservers(void);

/* ---- lifetime (engine.c) ---- */
/** The engine is up: exchanges can start.  PMIX_ERR_NOMEM. */
pmix_status_t rdp_srv_xchg_open(void);
/** The engine goes down: running exchanges are abandoned (their done
 * functions never run).  Safe when not open. */
void rdp_srv_xchg_close(void);

#endif
