/* coll.h - the collective engine: many concurrent collectives over a tl */
#ifndef RDP_COLL_COLL_H
#define RDP_COLL_COLL_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/sched.h"
#include "coll/select.h"
#include "coll/tl.h"
#include "core/loop/loop.h"

/*
 * One engine per server, over one transport that reaches the P servers of
 * the universe (indices 0..P-1; this server is `me`).  A collective runs
 * over a subset of the universe, the participants: a sorted list of
 * distinct universe indices that includes `me` and that every participant
 * passes identically.  It is keyed by (kind, participant signature, opid);
 * the caller makes opid unique per participant set (a group id hash, a
 * PMIX_CONNECT_ID hash, or a per-signature sequence number) and never
 * reuses a key while an earlier collective with that key may still have
 * messages in flight.
 *
 * Threads: the engine belongs to the thread that runs @a loop (or, without
 * a loop, to the thread that calls rdp_coll_engine_progress), which must
 * also be the transport's thread.  Completion callbacks never run inside
 * rdp_coll_start nor inside a transport upcall that delivers a message or
 * a failure: they run from the loop (a zero-delay timer), from the
 * transport's end-of-pass notification (tl.h: progressed; outside every
 * other transport call, so a completion is seen without waiting for
 * another loop pass), or from rdp_coll_engine_progress.  They must not
 * destroy the engine or its transport.
 *
 * Failure statuses handed to the completion callback:
 *   PMIX_ERR_UNREACH          a participant failed (transport report or an
 *                             abort message from another participant);
 *                             result.failed_peer names it when known
 *   PMIX_ERR_TIMEOUT          args.timeout passed
 *   PMIX_ERR_OUT_OF_RESOURCE  early-arrival queue overflow lost a message
 *                             of this collective
 *   PMIX_ERR_BAD_PARAM        participants disagree on the algorithm
 *                             (RDPMIX_COLL_ALG or size class differ)
 *   PMIX_ERR_NOMEM            out of memory
 * A participant that fails a collective sends an abort (carrying that
 * status) to every other live participant, so nobody waits for a timeout.
 *
 * Segmentation: a ring allgather whose own block is larger than the
 * engine's piece size (RDPMIX_COLL_SEG_BYTES, read at engine creation;
 * 0, the default RDP_COLL_SEG_BYTES_DEFAULT, is off) sends that block as
 * pieces, and every server forwards each piece to its right neighbour as
 * soon as it has arrived, instead of waiting for the whole block.
 * Receivers learn the piece layout from the messages (msg.h), so servers
 * may use different piece sizes.  The result is the same contiguous
 * blocks.
 */

typedef struct rdp_coll_engine rdp_coll_engine_t;

/* Early-arrival queue bounds (messages of collectives not started here). */
#define RDP_COLL_EARLY_MAX_MSGS_DEFAULT  4096u
#define RDP_COLL_EARLY_MAX_BYTES_DEFAULT (64u * 1024u * 1024u)
/** Keys remembered as finished (late messages for them are dropped) and as
 * failed by overflow (their start fails at once). */
#define RDP_COLL_KEY_MEMORY 4096u
/** Largest block the engine accepts (a sanity bound, not a protocol one). */
#define RDP_COLL_MAX_BLOCK ((uint64_t)1 << 40)

typedef struct rdp_coll_engine_config {
    const rdp_tl_ops_t *tl_ops; /**< borrowed; must outlive the engine */
    void *tl_ctx;               /**< borrowed; the engine binds to it */
    uint32_t nuniverse;         /**< P, >= 1 */
    uint32_t me;                /**< this server's index, < P */
    /** Loop for timers and deferred callbacks; NULL: the owner calls
     * rdp_coll_engine_progress (tests, simulations). Borrowed. */
    rdp_loop_t *loop;
    size_t early_max_msgs;  /**< 0: RDP_COLL_EARLY_MAX_MSGS_DEFAULT */
    size_t early_max_bytes; /**< 0: RDP_COLL_EARLY_MAX_BYTES_DEFAULT */
    /** AUTO: read RDPMIX_COLL_ALG; anything else forces that allgather
     * algorithm (tests). */
    enum rdp_coll_alg alg;
    /** Run every collective through the generic schedule, without the
     * 2-participant fast path (tests comparing the two; results and
     * messages are the same either way). */
    bool generic_only;
} rdp_coll_engine_config_t;

/** Create an engine and bind it to the transport.  PMIX_ERR_BAD_PARAM for a
 * bad config or RDPMIX_COLL_ALG value, PMIX_ERR_NOMEM, or the bind error.
 * @param [in] cfg  borrowed; copied */
pmix_status_t rdp_coll_engine_create(const rdp_coll_engine_config_t *cfg,
                                     rdp_coll_engine_t **engine_p);

/** Unbind from the transport and free everything.  Collectives still
 * pending are abandoned: their callbacks never run.  Accepts NULL.  Must
 * not be called from inside a completion callback. */
void rdp_coll_engine_destroy(rdp_coll_engine_t *engine);

/** Loop-less engines only: run due completion callbacks and expire
 * timeouts.  Returns how many callbacks ran. */
size_t rdp_coll_engine_progress(rdp_coll_engine_t *engine);

/** Number of collectives started and not yet called back. */
size_t rdp_coll_engine_active(const rdp_coll_engine_t *engine);

/** Counters, for tests and rdpmix-info. */
typedef struct rdp_coll_engine_stats {
    uint64_t started;
    uint64_t completed;      /**< callbacks run, any status */
    uint64_t completed_at_pass_end; /**< of those, run from progressed */
    uint64_t early_msgs;     /**< messages now in the early queue */
    uint64_t early_bytes;    /**< payload bytes they hold */
    uint64_t early_overflow; /**< messages lost to the bound */
    uint64_t dropped;        /**< malformed, stale or unexpected messages */
    uint64_t p2p_sent;       /**< P2P messages handed to the transport */
    uint64_t p2p_received;   /**< P2P messages handed to the handler */
    uint64_t open_sent;      /**< messages sent with an open payload */
    uint64_t open_refused;   /**< open payloads for a collective that
                                  authenticates (also counted in dropped) */
    uint64_t lookup_hits;    /**< messages whose collective was the one
                                  found last (no table lookup) */
    uint64_t colls_reused;   /**< collectives built in a kept block */
    uint64_t sends_reused;   /**< step sends built in a kept record */
    uint64_t early_reused;   /**< early-arrival queues in the kept one */
    uint64_t rx_reused;      /**< receive records built in a kept one */
    uint64_t defers_armed;   /**< deferred callbacks armed for completions
                                  (none when the transport's `progressed`
                                  follows, tl.h pass_end) */
    uint64_t fast_sent;      /**< step sends of 2-participant collectives
                                  posted by the fast path */
    uint64_t fast_completed; /**< 2-participant collectives completed by
                                  the fast path (their one message taken
                                  without the generic step machinery) */
    uint64_t own_dropped;    /**< own blocks freed once sent
                                  (rdp_coll_args_t.own_unneeded) */
    uint64_t clock_reads;    /**< the engine's reads of the clock (a
                                  start with a timeout inside the
                                  transport's `progressed` takes its
                                  pass_time instead) */
} rdp_coll_engine_stats_t;

void rdp_coll_engine_get_stats(const rdp_coll_engine_t *engine,
                               rdp_coll_engine_stats_t *stats_p);

/** One participant's contribution, as handed to the completion callback. */
typedef struct rdp_coll_block {
    const void *data; /**< borrowed: valid during the callback only */
    uint64_t len;
    uint32_t origin; /**< universe index of the contributor */
} rdp_coll_block_t;

/** What the completion callback gets; everything borrowed for the call. */
typedef struct rdp_coll_result {
    pmix_status_t status;
    enum rdp_coll_kind kind;
    enum rdp_coll_alg alg;
    uint64_t opid;
    /** Allgather success: nblocks == nparticipants, blocks[i] is the block
     * of the i-th participant (sorted by universe index).  Otherwise NULL
     * and 0. */
    const rdp_coll_block_t *blocks;
    uint32_t nblocks;
    uint32_t failed_peer; /**< UINT32_MAX unless status names a peer */
    uint32_t nsteps;      /**< schedule steps completed (ring: n - 1 hops
                               whatever the number of pieces) */
    uint64_t msgs_sent;   /**< messages this server sent for it (every
                               piece of a segmented block counts) */
    uint64_t bytes_sent;  /**< payload bytes of those messages */
} rdp_coll_result_t;

typedef void (*rdp_coll_cb_t)(const rdp_coll_result_t *result, void *arg);

/** Bytes the engine needs in front of a block handed over in
 * rdp_coll_args_t.own_buf (its block header, coll/msg.h). */
#define RDP_COLL_HEADROOM 12u

typedef struct rdp_coll_args {
    enum rdp_coll_kind kind;
    uint64_t opid;
    const uint32_t *parts; /**< sorted distinct universe indices, incl. me */
    uint32_t nparts;
    const void *data; /**< allgather: my block (copied), may be NULL
                                when len is 0; ignored by barriers */
    size_t len;
    /** allgather, instead of @a data (then NULL): a buffer from rdp_malloc
     * of RDP_COLL_HEADROOM + len bytes, my block at own_buf +
     * RDP_COLL_HEADROOM.  The engine takes it over whatever rdp_coll_start
     * returns: it writes its block header into the headroom, sends from
     * the buffer and frees it, so the block is never copied. */
    void *own_buf;
    enum rdp_coll_size_class size_class; /**< identical everywhere */
    double timeout;                      /**< seconds; <= 0: none */
    /** The participants' fabric isolates their job: payloads may travel
     * without authentication (tl send_open, when the transport has it)
     * and payloads that came so are accepted.  Must be the same on every
     * participant; a collective without it drops open payloads. */
    bool open_payload;
    /** allgather: the caller does not read its own block in the result.
     * Between 2 participants the engine then frees own_buf (or its copy
     * of data) once it is sent, before the other's block comes; the
     * result keeps its length, with data NULL. */
    bool own_unneeded;
} rdp_coll_args_t;

/**
 * Start a collective.  On PMIX_SUCCESS @a cb(result, @a cbarg) runs exactly
 * once, later; on an error return it never runs.  Errors:
 * PMIX_ERR_BAD_PARAM (unsorted/duplicate/out-of-range participants, me
 * missing, unknown kind, a timeout without a loop is fine), PMIX_ERR_EXISTS
 * (the same key is running), PMIX_ERR_NOMEM.  A collective including a peer
 * already known to have failed is started and fails with PMIX_ERR_UNREACH.
 * @param [in] args  borrowed; parts and data are copied before return
 */
pmix_status_t rdp_coll_start(rdp_coll_engine_t *engine,
                             const rdp_coll_args_t *args, rdp_coll_cb_t cb,
                             void *cbarg);

/**
 * Fail the collective (@a kind, @a sig, @a opid) here with @a status (< 0),
 * as if it had failed locally, without telling the other participants
 * (the caller knows they learn the same reason by other means): its
 * callback runs later, once, with @a status; late messages for it are
 * dropped.  PMIX_ERR_NOT_FOUND when it is not running here (finished, or
 * never started), PMIX_ERR_BAD_PARAM for a status >= 0.  @a sig is
 * rdp_coll_signature() of its participants.
 */
pmix_status_t rdp_coll_cancel(rdp_coll_engine_t *engine,
                              enum rdp_coll_kind kind, uint64_t sig,
                              uint64_t opid, pmix_status_t status);

/* ---- point-to-point messages ----
 *
 * The engine also carries request/response traffic between two servers
 * (direct modex) on the same transport binding, as P2P messages: a 32-bit
 * channel and a 64-bit id chosen by the sender, and an opaque payload of at
 * most RDP_COLL_P2P_MAX bytes.  Delivery is not ordered; a message is lost
 * only when its sender or receiver fails, which the handler's peer_failed
 * reports.  Handlers run like completion callbacks: on the loop (or from
 * rdp_coll_engine_progress), never inside a transport upcall nor inside
 * rdp_coll_p2p_send.
 */

/** Largest P2P payload (a sanity bound, not a protocol one). */
#define RDP_COLL_P2P_MAX ((uint64_t)1 << 32)

typedef struct rdp_coll_p2p_ops {
    /** A P2P message from server @a peer; @a data is borrowed for the call
     * (NULL when @a len is 0). */
    void (*recv)(void *arg, uint32_t peer, uint32_t channel, uint64_t id,
                 const void *data, size_t len);
    /** Server @a peer failed (transport report), or a P2P message to it
     * could not be delivered; may be reported more than once per peer. */
    void (*peer_failed)(void *arg, uint32_t peer, pmix_status_t status);
} rdp_coll_p2p_ops_t;

/**
 * Set (or with @a ops NULL clear) the P2P handler.  P2P messages that
 * arrive while none is set are dropped (counted in stats.dropped).
 * @param [in] ops  borrowed; must stay valid while set
 */
void rdp_coll_engine_set_p2p_handler(rdp_coll_engine_t *engine,
                                     const rdp_coll_p2p_ops_t *ops, void *arg);

/**
 * Send @a iov[0..iovcnt) gathered into one P2P message to server @a peer.
 * The bytes are copied before return.  Returns PMIX_SUCCESS (queued; a
 * later failure is reported through peer_failed), PMIX_ERR_BAD_PARAM
 * (peer out of range or me, payload too large), PMIX_ERR_UNREACH (peer
 * known to have failed), PMIX_ERR_NOMEM, or the transport's error.
 * @param [in] iov  borrowed
 */
pmix_status_t rdp_coll_p2p_send(rdp_coll_engine_t *engine, uint32_t peer,
                                uint32_t channel, uint64_t id,
                                const rdp_iov_t *iov, size_t iovcnt);

/** True once @a peer was reported failed to this engine. */
int rdp_coll_engine_peer_failed(const rdp_coll_engine_t *engine, uint32_t peer);

/** The participant signature used in collective keys: a 64-bit hash of the
 * sorted participant list. */
uint64_t rdp_coll_signature(const uint32_t *parts, uint32_t nparts);

#endif
