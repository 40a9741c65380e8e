/* tl.h - the abstract transport the collective engine runs over */
#ifndef RDP_COLL_TL_H
#define RDP_COLL_TL_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/*
 * A transport ("tl") connects the servers of one universe, numbered
 * 0..P-1.  The engine (coll.h) is its only user: it sends messages made of
 * a small header and a payload gathered from several buffers, and receives
 * them through an upcall.  The shape follows UCP active messages so that
 * src/ucx maps one to one:
 *
 *   send      -> ucp_am_send_nbx(ep[peer], id, hdr, hdr_len, iov, iovcnt,
 *                                UCP_DATATYPE_IOV ...)
 *   upcall    <- the handler set with ucp_worker_set_am_recv_handler:
 *                  eager, bytes valid only during the call  -> BORROWED
 *                  UCP_AM_RECV_ATTR_FLAG_DATA                -> KEEPABLE
 *                  UCP_AM_RECV_ATTR_FLAG_RNDV                -> RNDV
 *                returning RDP_TL_RX_KEPT maps to UCS_INPROGRESS
 *   fetch     -> ucp_am_recv_data_nbx(desc, buf, len ...)
 *   release   -> ucp_am_data_release(desc) (also rejects an unfetched RNDV)
 *   failure   <- the endpoint error handler
 *
 * Threads: every function of the vtable is called on the thread that owns
 * the transport (the loop thread); every upcall and completion callback
 * runs on that same thread, and never inside the vtable call that
 * registered it (send/fetch callbacks run later, from the transport's
 * progress).  The engine may call send/fetch/release from inside an upcall.
 *
 * Peers: the engine never sends to itself through the transport.  A peer
 * index is 0..P-1; the transport knows P and its own index.
 */

/** One piece of a gathered payload.  Layout-compatible with UCX's
 * ucp_dt_iov_t {void *buffer; size_t length;} so that src/ucx can pass an
 * array of these to UCP without converting it (check with a static
 * assertion there). */
typedef struct rdp_iov {
    const void *base;
    size_t len;
} rdp_iov_t;

/*
 * Seals (optional, for forwarding without authenticating again).  A
 * transport that authenticates payloads may offer seal(): an authenticator
 * of one run of bytes, made once by the server the bytes come from.  A
 * send may then mark iov entries as covered by a seal; the transport sends
 * the seal with them instead of authenticating those bytes again, and the
 * receiving transport checks the seal against the bytes before it shows
 * the message (eager) or completes its fetch (rendezvous), exactly as it
 * checks the rest of the message.  The receiver learns which runs of the
 * payload came sealed (rdp_tl_rx_t.seals), so a server that forwards those
 * bytes (ring, Bruck) passes their seal on: the bytes are authenticated by
 * their origin once instead of by every server on their way.  Seals are
 * opaque to the engine, and a transport may send some of them as ordinary
 * payload (then the receiver sees no seal for those bytes).
 */
#define RDP_TL_SEAL_LEN 32

typedef struct rdp_tl_seal {
    uint8_t bytes[RDP_TL_SEAL_LEN];
} rdp_tl_seal_t;

/** A run of a received payload that came with a seal (checked). */
typedef struct rdp_tl_rx_seal {
    uint64_t off;
    uint64_t len;
    rdp_tl_seal_t seal;
} rdp_tl_rx_seal_t;

/** Sender index when the transport cannot tell who sent a message. */
#define RDP_TL_PEER_UNKNOWN UINT32_MAX

/** How the payload of a received message is made available. */
enum rdp_tl_data_kind {
    /** data/len valid during the upcall only; the engine copies what it
     * keeps and returns RDP_TL_RX_DONE. */
    RDP_TL_DATA_BORROWED = 0,
    /** data/len valid during the upcall; the engine may keep them past the
     * upcall by returning RDP_TL_RX_KEPT, and then later calls
     * release(desc) exactly once when it no longer needs the bytes. */
    RDP_TL_DATA_KEEPABLE = 1,
    /** The payload has not arrived yet (rendezvous): data is NULL, len is
     * its size.  The engine either returns RDP_TL_RX_KEPT and later calls
     * exactly one of fetch(desc, ...) or release(desc) (discard), or returns
     * RDP_TL_RX_DONE and the transport discards the payload itself. */
    RDP_TL_DATA_RNDV = 2
};

/** What the receive upcall did with a message. */
enum rdp_tl_rx_disp {
    RDP_TL_RX_DONE = 0, /**< done with it; the transport may free it */
    RDP_TL_RX_KEPT = 1  /**< the engine owns desc (KEEPABLE, RNDV only) */
};

/** A received message, described to the receive upcall. */
typedef struct rdp_tl_rx {
    uint32_t peer;   /**< sender index or RDP_TL_PEER_UNKNOWN */
    const void *hdr; /**< borrowed: valid during the upcall only */
    size_t hdr_len;
    enum rdp_tl_data_kind kind;
    const void *data; /**< see enum rdp_tl_data_kind; NULL for RNDV */
    size_t len;       /**< payload bytes (also for RNDV) */
    void *desc;       /**< handle for release/fetch (KEEPABLE, RNDV) */
    /** runs of the payload that came sealed, by increasing offset, not
     * overlapping (borrowed: valid during the upcall only); for RNDV the
     * bytes are checked when the fetch completes successfully */
    const rdp_tl_rx_seal_t *seals;
    size_t nseals;
    /** 1 when the payload came without authentication (send_open): only
     * the header was authenticated.  The engine accepts such a payload
     * only for a collective whose job's fabric isolates it. */
    int payload_open;
    /** 1 when this upcall runs inside a progress pass that will end with
     * the `progressed` upcall (the engine then runs what the message
     * completed from there, without arming a deferred callback); 0 when
     * the transport cannot promise it. */
    int pass_end;
} rdp_tl_rx_t;

/** The engine's entry points, registered with bind(). */
typedef struct rdp_tl_upcalls {
    /** A message arrived. @a rx is borrowed for the duration of the call. */
    enum rdp_tl_rx_disp (*recv)(void *arg, const rdp_tl_rx_t *rx);
    /** Peer @a peer is gone (endpoint error, process or node death).  Called
     * at most once per peer; afterwards sends to it fail.  @a status says
     * why (PMIX_ERR_UNREACH, PMIX_ERR_LOST_CONNECTION, ...). */
    void (*peer_failed)(void *arg, uint32_t peer, pmix_status_t status);
    /** Optional.  The transport ended a progress pass that did something
     * and is outside every other upcall, callback and vtable call: the
     * engine may run its completion callbacks here rather than after
     * another pass of the loop.  Whatever runs from here may call the
     * transport's vtable (send, fetch, release, unbind) but must not
     * destroy the transport. */
    void (*progressed)(void *arg);
    /** Optional.  Whether the engine waits on peers (a collective it runs
     * is in flight): a transport that busy-polls for a while after
     * activity (RDPMIX_UCX_BUSY_US) does so only then.  Called between
     * polls; must be cheap and must not call into the transport.  NULL:
     * the transport treats the engine as waiting. */
    int (*waiting)(void *arg);
} rdp_tl_upcalls_t;

/** Completion of a send or a fetch: PMIX_SUCCESS, or why it failed
 * (PMIX_ERR_UNREACH when the peer died, ...).  Runs exactly once for every
 * send/fetch that returned PMIX_SUCCESS. */
typedef void (*rdp_tl_done_cb_t)(void *arg, pmix_status_t status);

typedef struct rdp_tl_ops {
    const char *name;

    /** Register the engine's upcalls.  @a up and @a arg are borrowed and
     * must stay valid until unbind; at most one binding at a time.  No
     * upcall runs before bind returns. */
    pmix_status_t (*bind)(void *ctx, const rdp_tl_upcalls_t *up, void *arg);

    /** Forget the binding.  When unbind returns, the transport never calls
     * an upcall or a completion callback for this binding again and never
     * touches a buffer handed to send or fetch again (sends and fetches in
     * flight are cancelled or completed; their callbacks are NOT called).
     * release() stays valid for descriptors obtained before unbind. */
    void (*unbind)(void *ctx);

    /**
     * Send @a hdr followed by the payload gathered from @a iov[0..iovcnt) to
     * @a peer (never the local index).  Zero-copy: @a hdr, the @a iov array
     * and every buffer it points to are borrowed and must stay unchanged
     * until the send completes (UCX 1.13 cannot copy the header).
     * Returns
     *   PMIX_SUCCESS              queued; @a cb(@a cb_arg, status) runs later
     *                             exactly once, after which the buffers are
     *                             free again;
     *   PMIX_OPERATION_SUCCEEDED  completed inside the call; @a cb never
     *                             runs, the buffers are free on return;
     *   an error (PMIX_ERR_UNREACH for a failed peer, PMIX_ERR_BAD_PARAM,
     *   PMIX_ERR_NOMEM ...)       nothing was sent; @a cb never runs.
     */
    pmix_status_t (*send)(void *ctx, uint32_t peer, const void *hdr,
                          size_t hdr_len, const rdp_iov_t *iov, size_t iovcnt,
                          rdp_tl_done_cb_t cb, void *cb_arg);

    /** Fetch the payload of a kept RNDV message into @a buf (@a len bytes,
     * the rx's len; @a buf is borrowed until completion).  Consumes @a desc
     * (no release afterwards, whatever the outcome).  Return values as for
     * send; on an error return @a desc is consumed too. */
    pmix_status_t (*fetch)(void *ctx, void *desc, void *buf, size_t len,
                           rdp_tl_done_cb_t cb, void *cb_arg);

    /** Give back a kept KEEPABLE descriptor, or discard an unfetched RNDV
     * payload.  Never calls back. */
    void (*release)(void *ctx, void *desc);

    /** Optional (NULL: no seals).  Seal the @a len bytes at @a data as
     * coming from this server (see "Seals" above).  PMIX_SUCCESS, or an
     * error (no key yet, counter exhausted, crypto failure). */
    pmix_status_t (*seal)(void *ctx, const void *data, size_t len,
                          rdp_tl_seal_t *seal_p);

    /** Optional (NULL when seal is).  As send, with @a seals[i] the seal
     * of the bytes of @a iov[i] or NULL; @a seals itself may be NULL (no
     * seal).  Seals are copied during the call. */
    pmix_status_t (*send_sealed)(void *ctx, uint32_t peer, const void *hdr,
                                 size_t hdr_len, const rdp_iov_t *iov,
                                 const rdp_tl_seal_t *const *seals,
                                 size_t iovcnt, rdp_tl_done_cb_t cb,
                                 void *cb_arg);
    /** Optional (NULL: every payload is authenticated).  As send, but the
     * payload bytes go without authentication: the transport still
     * authenticates the header (and that the payload is open), so the
     * receiver sees payload_open and the sender's index for certain.  For
     * collectives whose fabric already keeps other jobs out ("trust
     * follows the fabric", docs/design.md). */
    pmix_status_t (*send_open)(void *ctx, uint32_t peer, const void *hdr,
                               size_t hdr_len, const rdp_iov_t *iov,
                               size_t iovcnt, rdp_tl_done_cb_t cb,
                               void *cb_arg);
    /** Optional (NULL: none).  Inside the `progressed` upcall: the time
     * (rdp_time_now's clock) the transport read in this pass after its
     * last delivery, or 0 when it has none; 0 anywhere else.  What the
     * upcall starts is dated by it instead of by another clock read (~30
     * ns of vDSO here). */
    double (*pass_time)(void *ctx);
} rdp_tl_ops_t;

#endif
