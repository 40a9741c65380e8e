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
    /** Up to this many servers destroy says goodbye to every peer, above
     * it only to peers in contact (docs/ucx.md); 0: 16. */
    uint32_t bye_all_max;
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
    uint64_t open_sent_bytes;   /**< payload bytes sent open (send_open) */
    uint64_t open_delivered;    /**< messages delivered with an open payload */
    uint64_t endpoints; /**< endpoints created (at connect or first send) */
    uint64_t busy_polls; /**< polls in busy slices (RDPMIX_UCX_BUSY_US) */
    uint64_t repolls;    /**< passes run again at once: `progressed` sent */
    uint64_t repolls_max;  /**< most of them in a row (progress_pass) */
    uint64_t sreqs_reused; /**< sends whose record was the kept one */
    uint64_t byes_acked;   /**< peers that acknowledged our goodbye */
    uint64_t byes_answered; /**< peers' goodbyes we acknowledged */
    uint64_t zcopy_endpoints; /**< of the endpoints, those with a lane for
                                   zero-copy rendezvous */
    /** payload bytes that arrived eager: UCP (or the engine, for a lent
     * payload) copied them out of the transport's receive buffers */
    uint64_t rx_eager_bytes;
    /** payload bytes fetched by rendezvous into the engine's buffer (over
     * a zero-copy lane: written there straight from the network) */
    uint64_t rx_fetched_bytes;
    uint64_t kicks;        /**< loop timers armed to progress again (kick) */
    uint64_t clock_reads;  /**< clock reads of the progress passes */
    uint64_t worker_events; /**< passes run because the loop saw the
                                 worker's event fd */
} rdp_ucx_tl_stats_t;

void rdp_ucx_tl_get_stats(const rdp_ucx_tl_t *tl, rdp_ucx_tl_stats_t *stats_p);

/* ---- loading the transport ----
 *
 * The transport links UCX and libcrypto.  Loading them costs a process
 * ~5 M instructions of dynamic linking and UCX's constructors (a PMIx
 * client that only calls PMIx_Init spends 5.6 M instructions before main
 * with them, 0.6 M without: docs/design.md), and clients never use them.
 * So the shared libpmix.so.2 does not link them: the transport is the
 * module rdpmix_ucx.so, installed next to it and loaded when a server
 * enables the engine.  Programs that link the transport (librdp_ucx.la)
 * statically, such as rdpmixd, register it instead.
 */

/** The transport's entry points, as a table (same contracts as above). */
typedef struct rdp_ucx_api {
    pmix_status_t (*create)(rdp_loop_t *loop, const rdp_ucx_params_t *p,
                            rdp_ucx_tl_t **tl_p);
    pmix_status_t (*address)(rdp_ucx_tl_t *tl, const void **bytes_p,
                             size_t *len_p);
    pmix_status_t (*set_key)(rdp_ucx_tl_t *tl, const uint8_t *key,
                             size_t key_len);
    pmix_status_t (*connect)(rdp_ucx_tl_t *tl, uint32_t my_index,
                             uint32_t npeers, const rdp_iov_t addrs[]);
    const rdp_tl_ops_t *(*ops)(void);
    void *(*ctx)(rdp_ucx_tl_t *tl);
    void (*destroy)(rdp_ucx_tl_t *tl);
} rdp_ucx_api_t;

/** The transport linked into this program (librdp_ucx.la). */
extern const rdp_ucx_api_t rdp_ucx_builtin_api;

/** Use @a api instead of loading the module (before any server starts the
 * engine; borrowed, must stay valid). */
void rdp_ucx_api_register(const rdp_ucx_api_t *api);

/**
 * The transport: the registered one, else the module rdpmix_ucx.so from
 * the directory of the library this code is in (RDPMIX_UCX_MODULE names
 * another file), loaded once and kept.  PMIX_ERR_NOT_AVAILABLE (logged
 * with the loader's reason) if it cannot be loaded.  Any one thread at a
 * time (a server's init).
 */
pmix_status_t rdp_ucx_api_get(const rdp_ucx_api_t **api_p);

/* What the module uses of the library that loads it: logging and the
 * loop, which stay that library's (one log configuration, one loop). */
#define RDP_UCX_MODULE_ABI 1
typedef struct rdp_ucx_services {
    uint32_t abi; /* RDP_UCX_MODULE_ABI */
    const int *log_levels; /* RDP_SUBSYS_COUNT entries */
    void (*log_line)(int level, int subsys, const char *file, int line,
                     const char *msg);
    int (*on_loop)(const rdp_loop_t *loop);
    pmix_status_t (*fdwatch_create)(rdp_loop_t *loop, int fd, int events,
                                    rdp_fdwatch_cb_t cb, void *arg,
                                    rdp_fdwatch_t **watch_p);
    void (*fdwatch_enable)(rdp_fdwatch_t *watch);
    void (*fdwatch_disable)(rdp_fdwatch_t *watch);
    void (*fdwatch_destroy)(rdp_fdwatch_t *watch);
    pmix_status_t (*timer_create)(rdp_loop_t *loop, rdp_loop_fn_t fn,
                                  void *arg, rdp_timer_t **timer_p);
    void (*timer_start)(rdp_timer_t *timer, double seconds);
    void (*timer_destroy)(rdp_timer_t *timer);
    double (*time_now)(void);
} rdp_ucx_services_t;

/** The module's one exported function (name RDP_UCX_MODULE_INIT): check
 * the ABI, keep @a svc (borrowed, must outlive the module) and give the
 * transport's table.  PMIX_ERR_NOT_SUPPORTED for another ABI. */
typedef pmix_status_t (*rdp_ucx_module_init_fn_t)(
    const rdp_ucx_services_t *svc, const rdp_ucx_api_t **api_p);
#define RDP_UCX_MODULE_INIT "rdpmix_ucx_module_init"
#define RDP_UCX_MODULE_FILE "rdpmix_ucx.so"

#endif
