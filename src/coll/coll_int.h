/* coll_int.h - private to src/coll: the executor's state, shared by
 * coll.c (the executor), coll_ring.c (segmented ring blocks) and
 * coll_early.c (messages for collectives not started here yet) */
#ifndef RDP_COLL_COLL_INT_H
#define RDP_COLL_COLL_INT_H

#include "coll/coll.h"
#include "coll/keytab.h"
#include "coll/msg.h"
#include "core/util/hash.h"
#include "core/util/list.h"

#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

/*
 * Data layout.  Every block the engine holds is stored as
 * [12-byte block header][bytes] in memory it owns or keeps: my own block is
 * copied once into such a buffer at start, and a received message's payload
 * is a run of them, kept as it arrived (a kept transport descriptor, the
 * buffer a rendezvous payload was fetched into, or one copy of a borrowed
 * eager payload).  blocks[r].data points at the bytes of rank r's block, so
 * its header is at data - 12 and forwarding blocks needs no copy: the iov
 * of a send points at those runs, merged where they are contiguous.
 *
 * Lifetimes.  A collective is RUNNING (in the key hash and the running
 * list), then DONE (waiting in the done list for its deferred callback),
 * then CALLED; it is freed once called back and no send or fetch of it is
 * in flight (pending_io == 0), since those still point into its buffers.
 */

enum coll_state {
    COLL_RUNNING = 0,
    COLL_DONE    = 1,
    COLL_CALLED  = 2
};

enum step_state {
    STEP_WAITING  = 0,
    STEP_FETCHING = 1, /* a whole message is being fetched */
    STEP_RECEIVED = 2,
    STEP_PIECES   = 3 /* pieces of a segmented block are arriving */
};

typedef struct coll coll_t;

/* A received message: its header and the bytes it brought. */
typedef struct rx {
    rdp_list_t link; /* early bucket, coll->segs, or engine->orphans */
    rdp_coll_engine_t *engine;
    coll_t *coll; /* owner once attached to a collective */
    rdp_coll_hdr_t hdr;
    coll_key_t key;
    uint8_t *buf; /* owned copy or fetch target */
    void *desc;   /* kept KEEPABLE descriptor, released at free */
    const uint8_t *data;
    size_t len;
    rdp_tl_rx_seal_t *seals; /* runs that came sealed (copy), or NULL */
    size_t nseals;
    int fetching;
    int orphan;       /* its owner went away during the fetch */
    int payload_open; /* the payload came unauthenticated (tl send_open) */
    size_t room;      /* bytes of inl */
    size_t cap;       /* bytes of inl the allocation has (>= room) */
    uint8_t inl[];    /* a borrowed payload's copy, in the same allocation */
} rx_t;

/* A P2P event for the handler: a message, or a peer failure. */
typedef struct p2p_ev {
    rdp_list_t link; /* engine->p2p_ready or ->p2p_fetching */
    rdp_coll_engine_t *engine;
    int failed; /* a peer failure, not a message */
    uint32_t peer;
    uint32_t channel;
    uint64_t id;
    pmix_status_t status;
    uint8_t *buf; /* owned payload */
    size_t len;
} p2p_ev_t;

/* A claimed range [start, end) of a segmented block. */
typedef struct seg_range {
    uint64_t start;
    uint64_t end;
} seg_range_t;

/* The pieces of one segmented block received so far. */
typedef struct seg {
    uint8_t *buf; /* total bytes; NULL until the first piece */
    uint64_t total;
    uint64_t landed;     /* bytes in place */
    seg_range_t *ranges; /* claimed (landed or being fetched) */
    uint32_t nranges;
    uint32_t cap;
} seg_t;

/* A rendezvous piece being fetched straight into its block. */
typedef struct piece_fetch {
    rdp_list_t link; /* coll->fetches */
    coll_t *coll;
    rdp_coll_hdr_t hdr;
    uint32_t block; /* rank of the origin */
    int sealed;     /* it came sealed: forwarded with seal */
    rdp_tl_seal_t seal;
} piece_fetch_t;

typedef struct early {
    keytab_node_t node; /* in engine->early */
    rdp_list_t msgs;
} early_t;

/* A send in flight: the header and iov array must outlive it. */
typedef struct sreq {
    rdp_list_t link; /* engine->sends or ->spare_sends */
    rdp_coll_engine_t *engine;
    size_t cap; /* bytes allocated; 0: not from the pool (sreq_get) */
    coll_t *coll; /* NULL for aborts and P2P messages */
    uint32_t peer;
    int p2p; /* a P2P message: a failure is reported to the handler */
    uint8_t hdr[RDP_COLL_HDR_MAX];
    size_t hdr_len;
    const rdp_tl_seal_t **seals; /* per iov entry or NULL; NULL: none */
    size_t iovcnt;
    rdp_iov_t iov[];
} sreq_t;

/*
 * Memory.  A collective is one block: the coll_t, then parts, blocks and
 * steps, then my own block's [header][bytes] when it is small and the
 * caller did not hand over a buffer (own_inline).  A freed block of
 * cap bytes waits in engine->spare (at most RDP_COLL_SPARE of them) for
 * the next collective that fits in it.
 */
struct coll {
    rdp_list_t link; /* engine->running, ->done, ->zombies or ->spare */
    size_t cap;      /* bytes of the block */
    int own_inline;  /* own points into the block */
    rdp_coll_engine_t *engine;
    keytab_node_t node; /* its key; in engine->colls while RUNNING */
    enum rdp_coll_kind kind;
    enum rdp_coll_alg alg;
    enum rdp_coll_size_class size_class;
    enum coll_state state;
    uint32_t n;
    uint32_t rank;
    uint32_t *parts;
    rdp_coll_block_t *blocks; /* n entries for an allgather, else NULL */
    uint8_t *own;             /* [block header][my bytes] */
    /* seals of blocks (header and bytes) as made by their origin, when
     * the transport seals: forwarded with them, not authenticated again */
    rdp_tl_seal_t *seals; /* n entries, or NULL */
    uint8_t *sealed;      /* n flags: seals[b] is valid */
    uint8_t *steps;           /* enum step_state per step */
    uint32_t nsteps;
    uint32_t cur;
    int entered;        /* sends of step cur posted */
    rdp_list_t segs;    /* rx_t holding received blocks */
    uint64_t seg_bytes; /* piece size for my own block, 0: whole */
    int own_pieces;     /* my block goes as pieces */
    seg_t *pieces;      /* n entries once a piece arrived, else NULL */
    rdp_list_t fetches; /* piece_fetch_t in flight */
    size_t pending_io;
    pmix_status_t status;
    uint32_t failed_peer;
    rdp_coll_cb_t cb;
    void *cbarg;
    double deadline; /* when it times out (engine->watchdog), 0: never */
    uint64_t msgs_sent;
    uint64_t bytes_sent;
    int open_payload; /* payloads go and come unauthenticated (coll.h) */
    int own_unneeded; /* own freed once sent (own_drop_sent) */
    /* the schedule of step memo_step - 1 (0: none), asked for by the
     * sends, the header check and the ingest of the same step */
    uint32_t memo_step;
    rdp_sched_step_t memo;
    /* two participants, one step, no pieces, no seal of my own block: the
     * message of that step may be taken by the fast path (coll.c: fast2)
     * instead of the generic schedule; a message it does not fit (a
     * different shape, a payload too large for room, seals, rendezvous)
     * goes the generic way, which is always correct */
    int fast2;
    /* an allgather's room in its block for a copy of the other
     * participant's block ([header][bytes], room_len bytes; 0: none) */
    uint8_t *room;
    size_t room_len;
};

/* The schedule of @a step of @a coll (borrowed until the next call), or
 * NULL for a step it does not have. */
const rdp_sched_step_t *rdp_coll_sched_step(coll_t *coll, uint32_t step);

/* 1 if a message whose payload came open (@a payload_open) may be taken
 * by @a coll; else it is counted as refused (and dropped) with a warning. */
int rdp_coll_open_ok(coll_t *coll, int payload_open, uint32_t sender);

/* Bounded memory of keys: a table over a FIFO ring of nodes, oldest
 * evicted (a key removed earlier leaves its slot unlinked). */
typedef struct keymem {
    keytab_t map;
    keytab_node_t *ring;
    size_t size; /* slots allocated, grows up to cap */
    size_t cap;
    size_t next;
    size_t count;
} keymem_t;

struct rdp_coll_engine {
    const rdp_tl_ops_t *ops;
    void *ctx;
    rdp_tl_upcalls_t up;
    int bound;
    uint32_t nuniverse;
    uint32_t me;
    rdp_loop_t *loop;
    enum rdp_coll_alg forced;
    uint64_t seg_bytes; /* RDPMIX_COLL_SEG_BYTES */
    keytab_t colls;     /* running coll_t by key (coll->node) */
    coll_t *last;       /* the running collective found last (a cache) */
    rdp_list_t running;
    rdp_list_t done;
    rdp_list_t zombies;
    rdp_list_t spare;  /* freed collective blocks for reuse */
    size_t nspare;
    rdp_list_t spare_sends; /* finished step sends' records for reuse */
    size_t nspare_sends;
    keytab_t early; /* early_t by key (early->node) */
    early_t *spare_early; /* an emptied queue kept for the next one */
    rdp_list_t spare_rx;  /* freed receive records for reuse */
    size_t nspare_rx;
    size_t early_msgs;
    size_t early_bytes;
    size_t early_max_msgs;
    size_t early_max_bytes;
    keymem_t finished;  /* ran here; late messages are dropped */
    keymem_t poisoned;  /* lost a message to overflow; start fails */
    uint8_t *failed;    /* per universe index */
    rdp_list_t sends;   /* sreq_t in flight */
    rdp_list_t orphans; /* rx_t fetching for nobody */
    rdp_timer_t *defer;
    /* inside a receive upcall marked pass_end: `progressed` follows, so
     * completions need no deferred callback */
    int pass_end;
    int in_callback; /* run_done is inside a completion callback */
    /* inside engine_progressed: the transport's pass_time (0: none) */
    double pass_time;
    /* one timer for every running collective's timeout, armed for the
     * earliest deadline (or later: it re-arms itself when it fires) */
    rdp_timer_t *watchdog;
    double watch_at; /* deadline it is armed for, 0: not armed */
    rdp_coll_engine_stats_t stats;
    int generic_only; /* config: no 2-participant fast path (tests) */
    const rdp_coll_p2p_ops_t *p2p_ops;
    void *p2p_arg;
    rdp_list_t p2p_ready;    /* p2p_ev_t due for the handler */
    rdp_list_t p2p_fetching; /* p2p_ev_t whose payload is being fetched */
};

/* Blocks (bytes, header excluded) from this size on are sealed by their
 * origin when the transport can (seal_own_block). */
#define RDP_COLL_SEAL_MIN 4096u

/* Freed collective blocks kept for reuse, and the largest own block
 * (bytes, header excluded) stored inside the collective's block. */
#define RDP_COLL_SPARE      8u
/* Step send records kept for reuse, each of at least this many bytes. */
#define RDP_COLL_SPARE_SENDS 8u
/* Freed receive records kept per engine (the small ones only) */
#define RDP_COLL_SPARE_RX     4u
#define RDP_COLL_SPARE_RX_MAX 4096u
#define RDP_COLL_SEND_ROOM   256u
#define RDP_COLL_OWN_INLINE 1024u

/* ---- coll.c: the executor ---- */

void rdp_coll_make_key(coll_key_t *key, uint32_t kind, uint64_t sig,
                       uint64_t opid);
/** "barrier" or "allgather", for logs. */
const char *rdp_coll_kind_name(uint32_t kind);
/** Remember @a key (the oldest key goes when @a km is full). */
void rdp_coll_keymem_add(keymem_t *km, const coll_key_t *key);

/** A receive record for a message with header @a hdr, with room for a copy
 * of @a trx's payload when the transport only lends it; NULL (logged) when
 * out of memory. */
rx_t *rdp_coll_rx_create(rdp_coll_engine_t *engine, const rdp_coll_hdr_t *hdr,
                         const rdp_tl_rx_t *trx);
/** Take the payload of @a trx into @a rx (see coll.c). */
pmix_status_t rdp_coll_rx_take_payload(rx_t *rx, const rdp_tl_rx_t *trx,
                                       enum rdp_tl_rx_disp *disp_p);
/** Unlink and free @a rx (later, if the transport still fetches into it). */
void rdp_coll_rx_free(rx_t *rx);
/** Free @a rx without telling the transport (after unbind). */
void rdp_coll_rx_free_unbound(rx_t *rx);
/** Attach a message taken from the early queue to the running @a coll;
 * consumes @a rx. */
void rdp_coll_attach_rx(coll_t *coll, rx_t *rx);

/** Fill the header fields every message of @a coll shares. */
void rdp_coll_fill_hdr(rdp_coll_hdr_t *h, const coll_t *coll, uint8_t type);
/** Encode @a h into @a req, post it and count it. */
pmix_status_t rdp_coll_send(coll_t *coll, sreq_t *req, const rdp_coll_hdr_t *h,
                            uint64_t bytes);
/** Universe index of the peer @a coll sends to at @a step (UINT32_MAX:
 * none). */
uint32_t rdp_coll_send_peer(const coll_t *coll, uint32_t step);
/** A send of step @a step could not be posted: end @a coll. */
void rdp_coll_step_send_failed(coll_t *coll, uint32_t step,
                               pmix_status_t status);
/** One send or fetch of @a coll is over; 1 when @a coll no longer runs
 * (it may be gone). */
int rdp_coll_io_done(coll_t *coll);

/** Run the schedule of @a coll as far as the received steps allow. */
void rdp_coll_advance(coll_t *coll);
/** End @a coll with @a status (once); its callback is deferred. */
void rdp_coll_finish(coll_t *coll, pmix_status_t status, uint32_t failed_peer,
                     int tell_others);

/* ---- coll_ring.c: segmented ring blocks ---- */

/** Ring step 0 of my own block when it travels in pieces. */
pmix_status_t rdp_coll_ring_send_own_block(coll_t *coll);
/** A piece for the running @a coll, straight from the transport (its
 * header passed the checks of its step, @a x). */
enum rdp_tl_rx_disp rdp_coll_ring_recv_piece(coll_t *coll,
                                             const rdp_coll_hdr_t *h,
                                             const rdp_sched_xfer_t *x,
                                             const rdp_tl_rx_t *trx);
/** A piece that waited in the early queue; consumes @a rx.  1 if its step
 * was received. */
int rdp_coll_ring_ingest_piece(coll_t *coll, rx_t *rx);
/** Checks of a SEG header that need no collective. */
int rdp_coll_ring_piece_sane(const rdp_coll_hdr_t *h, const rdp_tl_rx_t *trx);

/* ---- coll_early.c: messages for collectives not started here yet ---- */

/** Queue a message for a collective not started here yet. */
enum rdp_tl_rx_disp rdp_coll_early_enqueue(rdp_coll_engine_t *engine,
                                           const rdp_coll_hdr_t *h,
                                           const rdp_tl_rx_t *trx);
/** Drop the messages queued for @a key. */
void rdp_coll_early_drop(rdp_coll_engine_t *engine, const coll_key_t *key);
/** Hand the messages queued for @a coll, just started, over to it;
 * returns whether there were any. */
int rdp_coll_early_hand_over(rdp_coll_engine_t *engine, coll_t *coll);
/** Free every queued message without telling the transport. */
void rdp_coll_early_free_unbound(rdp_coll_engine_t *engine);

#endif
