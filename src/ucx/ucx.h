/* ucx.h - the collective engine's transport (tl.h) over UCP active messages */
#ifndef RDP_UCX_UCX_H
#define RDP_UCX_UCX_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "coll/tl.h"
#include "core/loop/loop.h"

/*
 * One transport per server: one UCP context and one worker
 * (UCS_THREAD_MODE_SINGLE) owned by @a loop's thread, progressed from the
 * loop through the worker's event fd.  Bootstrap, in this order:
 *
 *   rdp_ucx_tl_create(loop, &params, &tl);      key from the launcher/host
 *   rdp_ucx_tl_address(tl, &addr, &len);        publish these bytes
 *   ... gather every server's address, index = universe index ...
 *   rdp_ucx_tl_connect(tl, me, P, table);       table[me] is ignored
 *   engine over rdp_ucx_tl_ops() / rdp_ucx_tl_ctx(tl)
 *   ...
 *   rdp_ucx_tl_destroy(tl);                     after the engine is gone
 *
 * Every message carries the sender's and receiver's index and two MACs
 * (AES-256-GMAC tags, keys derived from the per-session key); messages
 * that fail them never reach the engine (docs/ucx.md).
 *
 * Threads: create, address, connect and destroy run on the loop thread, or
 * on any one thread while the loop is not running yet / any more.  The
 * vtable functions run on the loop thread only (tl.h).
 *
 * Fork safety: the daemon forks clients, so UCX's memory hooks must be
 * off.  UCX reads UCX_MEM_* when it is loaded, before any of our code
 * runs: start the daemon with UCX_MEM_MALLOC_HOOKS=no and
 * UCX_MEM_MMAP_HOOK_MODE=none in its environment (rdpmix-run does this
 * for rdpmixd).  create also turns the malloc hooks off through UCM's
 * options when the user did not choose, and logs (info) when the mmap
 * hooks are on; it does not change the environment, which the clients
 * inherit.
 */

typedef struct rdp_ucx_tl rdp_ucx_tl_t;

/** Bytes of the per-session key. */
#define RDP_UCX_KEY_LEN 32
/** Bytes of each authenticator (AES-256-GMAC tag) on the wire. */
#define RDP_UCX_MAC_LEN 16

typedef struct rdp_ucx_params {
    /** The per-session key, RDP_UCX_KEY_LEN random bytes that every server
     * of the universe shares.  Borrowed; copied (wiped at destroy). */
    const uint8_t *key;
    size_t key_len;
    /** 0 (default): create in connect the endpoint of every peer whose
     * process is not watched (another machine, or this process), so that
     * its failure is reported; a watched peer (another process on this
     * machine) gets its endpoint on the first send, its failure being
     * reported when its process ends.  1: every endpoint on the first send
     * (large universes where a server talks to a few peers); only watched
     * peers and peers with an endpoint are then reported as failed. */
    int lazy_connect;
    /** Seconds unbind and destroy progress the worker to let operations in
     * flight finish before forcing them; <= 0: 5. */
    double drain_timeout;
    /** Messages (and their bytes) held for the engine while no engine is
     * bound; 0: 4096 messages, 64 MiB. */
    size_t unbound_max_msgs;
    size_t unbound_max_bytes;
    /** Name for log lines ("node3"); borrowed, copied; NULL: "ucx". */
    const char *name;
} rdp_ucx_params_t;

/**
 * Create the UCP context (AM + WAKEUP) and worker, and start watching the
 * worker's event fd on @a loop.  Errors: PMIX_ERR_BAD_PARAM (NULL loop or
 * params, key missing or not RDP_UCX_KEY_LEN bytes), PMIX_ERR_NOMEM,
 * PMIX_ERR_INIT (UCX failed; logged).
 * @param [in] loop  borrowed; must outlive the transport
 * @param [in] p     borrowed; copied
 * @param [out] tl_p owned by the caller (rdp_ucx_tl_destroy)
 */
pmix_status_t rdp_ucx_tl_create(rdp_loop_t *loop, const rdp_ucx_params_t *p,
                                rdp_ucx_tl_t **tl_p);

/**
 * This worker's address, to distribute to every other server (50-215 bytes
 * on common fabrics).  Borrowed: valid until rdp_ucx_tl_destroy.
 */
pmix_status_t rdp_ucx_tl_address(rdp_ucx_tl_t *tl, const void **bytes_p,
                                 size_t *len_p);

/**
 * Replace the session key before connect (hosts that learn the key only
 * with the address table, rdpmix.h: create with a random placeholder
 * key, publish the address, then set the real key and connect).  Messages
 * that arrive before connect are held and authenticated at connect with
 * the key in force then.  PMIX_ERR_BAD_PARAM (key not RDP_UCX_KEY_LEN
 * bytes), PMIX_ERR_EXISTS (already connected), PMIX_ERR_INIT.
 * @param [in] key  borrowed; copied (wiped at destroy)
 */
pmix_status_t rdp_ucx_tl_set_key(rdp_ucx_tl_t *tl, const uint8_t *key,
                                 size_t key_len);

/**
 * Give the transport the universe: @a npeers servers, this one being
 * @a my_index, @a addrs[i] the worker address of server i (addrs[my_index]
 * is ignored: nothing is ever sent to self through UCX).  Called once.
 * Errors: PMIX_ERR_BAD_PARAM (npeers 0, my_index out of range, an empty or
 * oversized address), PMIX_ERR_EXISTS (already connected), PMIX_ERR_NOMEM,
 * PMIX_ERR_UNREACH (an endpoint could not be created; logged).  On error
 * the transport is left unconnected.
 * @param [in] addrs  borrowed; copied
 */
pmix_status_t rdp_ucx_tl_connect(rdp_ucx_tl_t *tl, uint32_t my_index,
                                 uint32_t npeers, const rdp_iov_t addrs[]);

/** The vtable (static, never freed). */
const rdp_tl_ops_t *rdp_ucx_tl_ops(void);

/** The context to pass with rdp_ucx_tl_ops(); borrowed (it is @a tl). */
void *rdp_ucx_tl_ctx(rdp_ucx_tl_t *tl);

/**
 * Close the endpoints, the worker and the context.  Unbind (or destroy the
 * engine) first; descriptors the engine still keeps are released here and
 * become invalid.  Peers see this server fail.  Accepts NULL.
 */
void rdp_ucx_tl_destroy(rdp_ucx_tl_t *tl);

/** Counters, for tests and rdpmix-info. */
typedef struct rdp_ucx_tl_stats {
    uint64_t sent;            /**< messages accepted by send */
    uint64_t delivered;       /**< messages handed to the engine */
    uint64_t auth_failed;     /**< dropped: an authenticator did not match */
    uint64_t malformed;       /**< dropped: bad framing, sender or receiver */
    uint64_t replayed;        /**< dropped: a nonce seen before (replay) */
    uint64_t unbound_queued;  /**< held while no engine was bound */
    uint64_t unbound_dropped; /**< dropped: that queue was full */
    uint64_t peers_failed;    /**< peers whose endpoint failed */
    uint64_t seals_made;      /**< seal() calls that succeeded */
    uint64_t mac_sent_bytes;  /**< payload bytes sent under mac_msg */
    uint64_t sealed_sent_bytes; /**< payload bytes sent under a seal */
    uint64_t endpoints; /**< endpoints created (at connect or first send) */
} rdp_ucx_tl_stats_t;

void rdp_ucx_tl_get_stats(const rdp_ucx_tl_t *tl, rdp_ucx_tl_stats_t *stats_p);

#endif
