/* loopback.h - in-process tl.h transport between P simulated servers */
#ifndef RDP_COLL_LOOPBACK_H
#define RDP_COLL_LOOPBACK_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "coll/tl.h"

/*
 * P endpoints in one process, each with its own tl context (one engine per
 * endpoint).  Nothing happens until the owner calls
 * rdp_tl_loopback_progress(), which performs one pending event chosen by a
 * seeded PRNG: deliver a message (gathering the sender's buffers at that
 * moment, then completing the send), complete a fetch, or report a peer
 * failure.  The same seed and the same calls give the same run.
 *
 * Fault injection: per-message random holds (delays), silent drops by
 * (source, destination), and killing an endpoint (every other endpoint gets
 * a failure upcall; messages to it fail, messages from it still in flight
 * are delivered).  Single-threaded: all calls from one thread.
 */

typedef struct rdp_tl_loopback rdp_tl_loopback_t;

/** How received payloads are presented to the engine. */
enum rdp_tl_loopback_mode {
    RDP_TL_LOOPBACK_MIXED    = 0, /**< random per message (default) */
    RDP_TL_LOOPBACK_BORROWED = 1,
    RDP_TL_LOOPBACK_KEEPABLE = 2,
    RDP_TL_LOOPBACK_RNDV     = 3
};

/** Create @a npeers endpoints; @a seed drives every random choice. */
pmix_status_t rdp_tl_loopback_create(uint32_t npeers, uint64_t seed,
                                     rdp_tl_loopback_t **lb_p);

/** Free everything, including undelivered messages.  Destroy the engines
 * first.  Accepts NULL. */
void rdp_tl_loopback_destroy(rdp_tl_loopback_t *lb);

/** The vtable shared by every endpoint. */
const rdp_tl_ops_t *rdp_tl_loopback_ops(void);

/** Context of endpoint @a peer, for rdp_coll_engine_config_t.tl_ctx;
 * borrowed (owned by @a lb). NULL if out of range. */
void *rdp_tl_loopback_ctx(rdp_tl_loopback_t *lb, uint32_t peer);

/** Perform one pending event.  Returns 1 if one was performed, 0 when
 * nothing is pending. */
int rdp_tl_loopback_progress(rdp_tl_loopback_t *lb);

/** Events waiting (messages, fetches, failure reports). */
size_t rdp_tl_loopback_pending(const rdp_tl_loopback_t *lb);

void rdp_tl_loopback_set_mode(rdp_tl_loopback_t *lb,
                              enum rdp_tl_loopback_mode mode);

/** Each new event is passed over up to @a max_holds times when picked, so
 * it arrives later than a uniform choice would make it. 0: off. */
void rdp_tl_loopback_set_delays(rdp_tl_loopback_t *lb, uint32_t max_holds);

/** With @a on, send and fetch copy at once and return
 * PMIX_OPERATION_SUCCEEDED (their callbacks never run), as UCX does for
 * small eager sends. */
void rdp_tl_loopback_set_inline(rdp_tl_loopback_t *lb, int on);

/** From now on silently drop messages from @a src to @a dst (either may be
 * UINT32_MAX: any); the sender sees a successful send. */
void rdp_tl_loopback_drop(rdp_tl_loopback_t *lb, uint32_t src, uint32_t dst);

/** Kill endpoint @a peer now: it gets no more upcalls or callbacks and its
 * sends fail; every other bound endpoint gets a peer_failed upcall. */
void rdp_tl_loopback_kill(rdp_tl_loopback_t *lb, uint32_t peer);

/** Queue a raw message from @a src to @a dst (tests of malformed input);
 * @a hdr and @a data are copied. */
pmix_status_t rdp_tl_loopback_inject(rdp_tl_loopback_t *lb, uint32_t src,
                                     uint32_t dst, const void *hdr,
                                     size_t hdr_len, const void *data,
                                     size_t len);

/** @a on: every message is delivered as if its payload came open
 * (payload_open), as a forger on an unauthenticated wire could send it. */
void rdp_tl_loopback_set_all_open(rdp_tl_loopback_t *lb, int on);

/** @a on: a message rdp_tl_loopback_progress delivers is marked pass_end
 * (tl.h), and the receiver's `progressed` upcall follows the delivery, as
 * the UCX transport does inside its progress pass; pass_time gives the
 * time read at that delivery during the upcall. */
void rdp_tl_loopback_set_pass_end(rdp_tl_loopback_t *lb, int on);

/** Messages endpoint @a peer handed to send (accepted ones). */
uint64_t rdp_tl_loopback_sent(const rdp_tl_loopback_t *lb, uint32_t peer);

/** Descriptors currently kept by engines (KEEPABLE kept + RNDV kept). */
size_t rdp_tl_loopback_kept(const rdp_tl_loopback_t *lb);

#endif
