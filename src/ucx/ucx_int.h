/* ucx_int.h - private to src/ucx: wire format, authenticator, state */
#ifndef RDP_UCX_UCX_INT_H
#define RDP_UCX_UCX_INT_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "coll/tl.h"
#include "core/loop/loop.h"
#include "core/util/list.h"
#include "ucx/ucx.h"

#include <ucp/api/ucp.h>

/*
 * Wire format: every message is one UCP active message with id
 * RDP_UCX_AM_ID whose UCP header is
 *
 *   offset  size  field (integers little-endian)
 *        0     4  magic "RDPU"
 *        4     1  version (3)
 *        5     1  flags: RDP_UCX_FLAG_SEALS, RDP_UCX_FLAG_OPEN or 0 (other
 *                 bits, and both together, refused)
 *        6     2  E, the engine header's length
 *        8     4  sender's universe index
 *       12     4  receiver's universe index
 *       16     8  payload length
 *       24     4  salt: random, drawn when the sender keyed its transport
 *       28     8  seq: the sender's message counter towards this receiver
 *       36     E  the engine's header
 *     36+E     S  seal table, only with RDP_UCX_FLAG_SEALS (S = 0 without):
 *                   u32 count (1..RDP_UCX_MAX_SEALS), then count entries
 *                   of RDP_UCX_SEAL_ENTRY bytes:
 *                     u64 offset, u64 length  a run of the payload
 *                     u32 origin              server that sealed it
 *                     u32 salt                that server's salt
 *                     u64 counter             its seal counter
 *                     16  tag = GMAC(K_seal, origin|salt|counter|0u32,
 *                                    the run's bytes)
 *                   runs by increasing offset, not overlapping, not empty,
 *                   inside the payload
 *   36+E+S    16  mac_hdr = GMAC(K_hdr, iv, prefix), or 0 on a message the
 *                 sender forced eager (payload at most the eager ceiling)
 *   52+E+S    16  mac_msg = GMAC(K_msg, iv, prefix | the payload bytes
 *                 outside every sealed run, in order)
 *
 * and whose UCP payload is the engine's payload.  "Prefix" below means
 * bytes [0, 36+E+S), so mac_msg covers the seal table (the tags bind the
 * sealed runs).  A receiver checks every seal's tag against its run, so
 * the whole payload is authenticated either way; a seal lets a server
 * forward bytes another server sealed without a MAC pass over them (the
 * origin's counter and salt make each seal's IV unique; see tl.h).
 * GMAC is AES-256-GCM with everything as additional
 * authenticated data and no plaintext; its 160-bit IV is
 * salt | sender index | receiver index | seq (little-endian as on the
 * wire), unique per message of a session (see docs/ucx.md).  K_hdr,
 * K_msg and K_seal are derived from the session key with HKDF-SHA256
 * under distinct labels.  Because seq counts per (sender, receiver) pair, a receiver
 * knows which numbers it has seen from each sender and drops a replayed
 * message (rdp_ucx_replay_accept).
 *
 * With RDP_UCX_FLAG_OPEN (send_open: the job's fabric isolates it) the
 * payload is not authenticated: mac_msg = GMAC(K_msg, iv, prefix) covers
 * the prefix alone, which says the payload is open; there is no seal.
 */
#define RDP_UCX_AM_ID     1
/* The shutdown handshake (rdp_ucx_tl_destroy, docs/design.md): one more
 * active message id whose UCP header is RDP_UCX_BYE_LEN bytes,
 *
 *   offset  size  field (integers little-endian)
 *        0     4  magic "RDPB"
 *        4     1  kind: RDP_UCX_BYE (I am leaving) or RDP_UCX_BYE_ACK
 *        5     3  zero
 *        8     4  sender's universe index
 *       12     4  receiver's universe index
 *
 * and no payload.  Not authenticated: a forged one can only change when a
 * server that is leaving anyway stops waiting. */
#define RDP_UCX_AM_BYE     2
#define RDP_UCX_BYE_MAGIC  0x42504452u /* "RDPB" read as little-endian */
#define RDP_UCX_BYE_LEN    16
#define RDP_UCX_BYE        1
#define RDP_UCX_BYE_ACK    2
#define RDP_UCX_MAGIC     0x55504452u /* "RDPU" read as little-endian */
#define RDP_UCX_VERSION   3
#define RDP_UCX_FIXED_LEN 36
#define RDP_UCX_IV_LEN    20
#define RDP_UCX_OVERHEAD  (RDP_UCX_FIXED_LEN + 2 * RDP_UCX_MAC_LEN)
#define RDP_UCX_MAX_EHDR  UINT16_MAX
#define RDP_UCX_FLAG_SEALS 0x01u
#define RDP_UCX_FLAG_OPEN  0x02u /* payload without authentication */
#define RDP_UCX_SEAL_ENTRY (16 + RDP_TL_SEAL_LEN)
/* Seals per message: more runs go as ordinary payload.  Bounds the table
 * (3 KiB) so that it fits UCP's header limit with any engine header. */
#define RDP_UCX_MAX_SEALS 64u
#define RDP_UCX_MAX_ADDR  65536 /* sanity bound on a worker address */
/* Towards an endpoint with a zero-copy rendezvous lane, payloads up to
 * this size are sent with UCP's eager protocol only (RDPMIX_UCX_EAGER_MAX,
 * bytes, sets one ceiling for all).  Over tcp eager beats rendezvous,
 * whose handshake needs the receiver scheduled once more per message
 * (64 KiB blocks: 20-25 % faster at 2 and 8 servers on 2 cores); where
 * rendezvous is zero-copy the ceiling stays low enough not to cost a copy
 * that matters.  The receiver of an eager message checks
 * mac_msg alone, so the sender skips mac_hdr (which lets a receiver check
 * a rendezvous header before fetching). */
#define RDP_UCX_EAGER_MAX (68u * 1024u)

/* The eager ceiling of an endpoint without a zero-copy rendezvous lane.
 * UCX 1.13 gives endpoints in peer-failure mode over tcp no RMA lane, so
 * its rendezvous copies the data through active-message fragments and
 * adds a handshake: eager multi-fragment sends beat it at every size
 * measured, up to 4 MiB (256 KiB allgathers 12-20 % faster, 1 MiB 3-9 %,
 * 2-16 servers on 2 cores).  Bounded because the receiving UCP buffers an
 * eager message whole before the transport can judge it. */
#define RDP_UCX_EAGER_MAX_NO_ZCOPY (4u * 1024u * 1024u)

/* The eager ceiling of an endpoint to a server on this machine made
 * without UCP's error handling (RDPMIX_UCX_LOCAL_ZCOPY) over tcp: its
 * zero-copy rendezvous saves a copy but costs two more trips between the
 * processes, and UCX's tcp receiver copies the start of each put that it
 * read into its receive buffer with the put's header (up to
 * RDP_UCX_TCP_RX_SEG_SIZE).  In 256 KiB pieces eager wins on 2 servers
 * on 2 CPUs too (bench/RESULTS.md, helper big7: 512 KiB-2 MiB 0.77-0.81 x
 * the rendezvous in place, which in 64 KiB pieces had been 0.80-0.87 x
 * eager), so such endpoints go eager as far as the others and fetch in
 * place only above that. */
#define RDP_UCX_EAGER_MAX_LOCAL_ZCOPY RDP_UCX_EAGER_MAX_NO_ZCOPY

/* The piece size of eager messages over tcp (UCX_TCP_RX_SEG_SIZE, UCX's
 * syntax) that the transport asks UCX for unless the user set one
 * (ucx_tl.c, context_init, says why). */
#define RDP_UCX_TCP_RX_SEG_SIZE "256K"

/** 1 if @a ep_info, the text ucp_ep_print_info writes for an endpoint,
 * shows a lane for rendezvous data (a "rma_bw#" lane: zero-copy get/put),
 * 0 if it shows lanes but none for that, -1 if it shows no lane at all
 * (an unknown format: the caller keeps its default). */
int rdp_ucx_info_has_rndv_lane(const char *ep_info);

/** The fixed part of the header, decoded. */
typedef struct rdp_ucx_wire {
    uint8_t flags;
    uint16_t ehdr_len;
    uint32_t seals_len; /* S: bytes of the seal table, 0 without */
    uint32_t src;
    uint32_t dst;
    uint64_t len;
    uint32_t salt; /* nonce: see rdp_ucx_auth_nonce */
    uint64_t seq;
} rdp_ucx_wire_t;

/** Write the fixed part (RDP_UCX_FIXED_LEN bytes) to @a out; the flags
 * say RDP_UCX_FLAG_SEALS when @a w->seals_len > 0, and RDP_UCX_FLAG_OPEN
 * when @a w->flags has it. */
void rdp_ucx_wire_encode(const rdp_ucx_wire_t *w, uint8_t *out);

/** Write a shutdown handshake header (RDP_UCX_BYE_LEN bytes, above). */
void rdp_ucx_bye_encode(uint8_t kind, uint32_t src, uint32_t dst, uint8_t *out);

/** Parse one: PMIX_ERR_BAD_PARAM unless @a len, the magic and the kind
 * are right. */
pmix_status_t rdp_ucx_bye_decode(const void *hdr, size_t len, uint8_t *kind_p,
                                 uint32_t *src_p, uint32_t *dst_p);

/** The prefix's length: fixed part, engine header and seal table. */
size_t rdp_ucx_wire_pre_len(const rdp_ucx_wire_t *w);

/** Parse a received UCP header of @a am_len bytes: magic, version, flags,
 * the seal table's count and that am_len == RDP_UCX_OVERHEAD + ehdr_len +
 * seals_len.  PMIX_ERR_BAD_PARAM (with *why_p set to a static reason)
 * otherwise.  The table's entries are checked by rdp_ucx_seals_decode. */
pmix_status_t rdp_ucx_wire_decode(const void *am_hdr, size_t am_len,
                                  rdp_ucx_wire_t *w_p, const char **why_p);

/** Bytes of a seal table of @a n entries (n >= 1). */
size_t rdp_ucx_seals_len(size_t n);

/** Write entry @a i of a seal table of @a n entries at @a table (the
 * count is written with entry 0). */
void rdp_ucx_seals_put(uint8_t *table, size_t n, size_t i, uint64_t off,
                       uint64_t len, const rdp_tl_seal_t *seal);

/** Read the seal table of @a table_len bytes of a message whose payload
 * is @a payload_len bytes into @a out (room for RDP_UCX_MAX_SEALS):
 * PMIX_ERR_BAD_PARAM (*why_p set) unless the runs are inside the payload,
 * not empty, by increasing offset and not overlapping. */
pmix_status_t rdp_ucx_seals_decode(const uint8_t *table, size_t table_len,
                                   uint64_t payload_len, rdp_tl_rx_seal_t *out,
                                   size_t *n_p, const char **why_p);

/* ---- address envelope (ucx_wire.c) ----
 *
 * What rdp_ucx_tl_address hands out and rdp_ucx_tl_connect takes: the UCX
 * worker address wrapped with who runs it, so that a server can watch a
 * peer on the same machine for death itself (UCX 1.13's shared memory
 * transports cannot report it):
 *
 *   offset  size  field (integers little-endian)
 *        0     4  magic "RDPA"
 *        4     1  version (1)
 *        5     3  zero
 *        8    16  machine: the kernel's boot id (equal on one machine)
 *       24     8  pid namespace: device and inode of /proc/self/ns/pid
 *       32     4  pid of the server process
 *       36     4  L, the UCX address's length
 *       40     L  the UCX worker address
 */
#define RDP_UCX_ENV_MAGIC   0x41504452u /* "RDPA" read as little-endian */
#define RDP_UCX_ENV_VERSION 1
#define RDP_UCX_ENV_HDR     40

typedef struct rdp_ucx_envelope {
    uint8_t machine[16];
    uint64_t pidns;
    uint32_t pid;
    const void *ucx; /* borrowed from the bytes decoded */
    size_t ucx_len;
} rdp_ucx_envelope_t;

/** This process's machine, pid namespace and pid (ucx/ucx_len untouched).
 * PMIX_ERR_NOT_AVAILABLE when /proc does not say: then *e is zeroed and
 * no peer is ever taken for a local one. */
pmix_status_t rdp_ucx_envelope_self(rdp_ucx_envelope_t *e);

/** Write @a e (RDP_UCX_ENV_HDR + e->ucx_len bytes) to @a out. */
void rdp_ucx_envelope_encode(const rdp_ucx_envelope_t *e, uint8_t *out);

/** Parse @a len bytes; PMIX_ERR_BAD_PARAM for a bad magic, version or
 * length.  e->ucx points into @a bytes. */
pmix_status_t rdp_ucx_envelope_decode(const void *bytes, size_t len,
                                      rdp_ucx_envelope_t *e);

/** 1 if @a peer runs on this machine, in this pid namespace, as another
 * process (its pid can be watched), given this process's @a self. */
int rdp_ucx_envelope_local(const rdp_ucx_envelope_t *self,
                           const rdp_ucx_envelope_t *peer);

/* ---- authenticator (ucx_wire.c) ---- */

/** Keyed AES-256-GMAC state (two keys) and the nonce salt; single-threaded
 * (the loop's).  The message counters live with the peers they count. */
typedef struct rdp_gmac rdp_gmac_t; /* one GMAC key (ucx_wire.c) */

/* ---- AES-256-GMAC of short inputs with AES-NI and PCLMULQDQ (ucx_gmac.c) */

#define RDP_UCX_FGMAC_MAX    512  /* AAD bytes rdp_ucx_fgmac_tag takes */
#define RDP_UCX_FGMAC_POWERS 8    /* blocks per reduction */

/** One key's precomputed state: secret (wiped by its owner). */
typedef struct rdp_ucx_fgmac {
    _Alignas(16) uint8_t rk[15][16]; /* AES-256 round keys */
    _Alignas(16) uint8_t hpow[RDP_UCX_FGMAC_POWERS][16]; /* (H^1)'.., ucx_gf128.h */
    _Alignas(16) uint8_t iv_len_h[16]; /* the IV's length block times H */
} rdp_ucx_fgmac_t;

/** 1 if this CPU has the instructions rdp_ucx_fgmac_* need (x86-64 with
 * AES-NI, PCLMULQDQ and AVX; built with GCC or clang). */
int rdp_ucx_fgmac_supported(void);

/** Key @a f with the AES-256 key @a key (borrowed).  Only where
 * rdp_ucx_fgmac_supported(); returns 0, or -1 when not built in. */
int rdp_ucx_fgmac_init(rdp_ucx_fgmac_t *f, const uint8_t key[32]);

/** The AES-256-GCM tag of no plaintext under the RDP_UCX_IV_LEN-byte @a iv
 * with the @a n pieces @a aad (at most RDP_UCX_FGMAC_MAX bytes together)
 * as AAD: the tag libcrypto's AES-256-GCM gives for the same input. */
void rdp_ucx_fgmac_tag(const rdp_ucx_fgmac_t *f,
                       const uint8_t iv[RDP_UCX_IV_LEN], const rdp_iov_t *aad,
                       size_t n, uint8_t tag[RDP_UCX_MAC_LEN]);

typedef struct rdp_ucx_auth {
    rdp_gmac_t *hdr;  /* keyed with K_hdr once */
    rdp_gmac_t *msg;  /* keyed with K_msg once */
    rdp_gmac_t *seal; /* keyed with K_seal once */
    uint32_t salt; /* random per keying: re-created transports differ */
    int fast;      /* short inputs' MACs by ucx_gmac.c (RDPMIX_UCX_FAST_GMAC) */
    char fp[9];    /* key fingerprint for logs (not secret) */
} rdp_ucx_auth_t;

/** Derive the MAC keys from the session key and draw a new salt.
 * PMIX_ERR_BAD_PARAM for a key of the wrong length, PMIX_ERR_INIT if
 * libcrypto fails.
 * @param [in] key  borrowed; the derived keys live in libcrypto's contexts
 *                  only (cleansed by libcrypto in cleanup) */
pmix_status_t rdp_ucx_auth_init(rdp_ucx_auth_t *auth, const uint8_t *key,
                                size_t key_len);
void rdp_ucx_auth_cleanup(rdp_ucx_auth_t *auth);

/** Take the nonce of the next message to one receiver: the salt, and the
 * value of that receiver's counter @a counter, which is then advanced.
 * PMIX_ERR_OUT_OF_RESOURCE once the counter is exhausted (never reused). */
pmix_status_t rdp_ucx_auth_nonce(const rdp_ucx_auth_t *auth, uint64_t *counter,
                                 uint32_t *salt_p, uint64_t *seq_p);

/** mac_hdr of the prefix @a pre (@a pre_len >= RDP_UCX_FIXED_LEN bytes;
 * the IV comes from its fixed part). */
pmix_status_t rdp_ucx_auth_hdr(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, uint8_t mac[RDP_UCX_MAC_LEN]);

/** mac_msg of the prefix and the payload gathered from @a iov. */
pmix_status_t rdp_ucx_auth_msg(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, const rdp_iov_t *iov,
                               size_t iovcnt, uint8_t mac[RDP_UCX_MAC_LEN]);

/** mac_msg of the prefix and the payload @a data of @a len bytes minus
 * the @a nseals sealed runs (as rdp_ucx_seals_decode checked them). */
pmix_status_t rdp_ucx_auth_msg_unsealed(rdp_ucx_auth_t *auth, const void *pre,
                                        size_t pre_len, const uint8_t *data,
                                        size_t len,
                                        const rdp_tl_rx_seal_t *seals,
                                        size_t nseals,
                                        uint8_t mac[RDP_UCX_MAC_LEN]);

/** Seal the @a len bytes at @a data as server @a origin, with the seal
 * counter @a *counter (advanced; PMIX_ERR_OUT_OF_RESOURCE when exhausted). */
pmix_status_t rdp_ucx_auth_seal(rdp_ucx_auth_t *auth, uint32_t origin,
                                uint64_t *counter, const void *data, size_t len,
                                rdp_tl_seal_t *seal_p);

/** 1 if @a seal is a seal of the @a len bytes at @a data. */
int rdp_ucx_auth_seal_ok(rdp_ucx_auth_t *auth, const rdp_tl_seal_t *seal,
                         const void *data, size_t len);

/** Constant-time comparison of two authenticators; 1 when equal. */
int rdp_ucx_auth_equal(const uint8_t *a, const uint8_t *b);

/* 1 if seals use the wide GHASH of ucx_ghash.c (tests) */
int rdp_ucx_auth_wide_ghash(const rdp_ucx_auth_t *auth);

/* ---- replay detection (ucx_wire.c) ---- */

/** Sequence numbers remembered below the highest one seen from a sender.
 * Messages of one sender to one receiver travel one UCP endpoint and
 * arrive in order, or nearly (a large message on another lane can be
 * overtaken), so a late one more than this far behind is refused. */
#define RDP_UCX_REPLAY_WINDOW 1024
/** Earlier salts of a sender (transports it re-created) that are refused. */
#define RDP_UCX_RETIRED_SALTS 8

/** What a receiver remembers of the nonces of one sender. */
typedef struct rdp_ucx_replay {
    int started;   /* a message was accepted */
    uint32_t salt; /* the sender's current salt */
    uint64_t top;  /* highest seq accepted under it */
    uint64_t seen[RDP_UCX_REPLAY_WINDOW / 64]; /* bit seq % WINDOW */
    uint32_t retired[RDP_UCX_RETIRED_SALTS];
    unsigned nretired;
    unsigned next_retired; /* FIFO slot overwritten next */
} rdp_ucx_replay_t;

enum rdp_ucx_replay_verdict {
    RDP_UCX_FRESH = 0,  /**< first time: accepted and remembered */
    RDP_UCX_REPLAYED,   /**< this (salt, seq) was accepted before */
    RDP_UCX_TOO_OLD,    /**< below the window: cannot tell, refused */
    RDP_UCX_OLD_SALT    /**< from a transport the sender replaced */
};

/** Judge the nonce of an authenticated message and remember it if fresh.
 * A salt never seen before starts a new window (the sender re-created its
 * transport) and retires the previous salt.  Call only after the MAC that
 * covers the nonce verified, so that forgeries cannot move the window. */
enum rdp_ucx_replay_verdict rdp_ucx_replay_accept(rdp_ucx_replay_t *r,
                                                  uint32_t salt, uint64_t seq);

/** Text for logs. */
const char *rdp_ucx_replay_str(enum rdp_ucx_replay_verdict v);

/* ---- transport state (ucx_tl.c, ucx_recv.c) ---- */

/* An operation whose completion the engine waits for: a send or a fetch. */
typedef struct ucx_op {
    rdp_list_t link; /* tl->sends / fetches / done; rmsg: kept / unbound */
    rdp_ucx_tl_t *tl;
    rdp_tl_done_cb_t cb; /* NULL: nobody to tell (unbound, or none given) */
    void *cb_arg;
    pmix_status_t status; /* result, while on tl->done */
    uint32_t peer;
    int is_rmsg;
} ucx_op_t;


enum rmsg_kind {
    RMSG_DATA, /* persistent eager data held by UCP (ucp_am_data_release) */
    RMSG_RNDV, /* rendezvous descriptor held by UCP (fetch or release) */
    RMSG_COPY  /* our own copy of eager data (free) */
};

enum rmsg_state {
    RMSG_QUEUED,   /* on tl->unbound, waiting for a binding */
    RMSG_UPCALL,   /* being shown to the engine right now */
    RMSG_KEPT,     /* on tl->kept, the engine's until fetch/release */
    RMSG_FETCHING, /* on tl->fetches */
    RMSG_FETCHED,  /* fetch finished or failed inside the upcall */
    RMSG_RELEASED  /* released inside the upcall */
};

/* A received message that outlives the UCP callback: the descriptor the
 * engine sees (rx.desc), and the fetch operation of an RNDV payload. */
typedef struct ucx_rmsg {
    ucx_op_t op; /* first: an rmsg is an op */
    uint32_t magic;
    enum rmsg_kind kind;
    enum rmsg_state state;
    void *data; /* UCP data / RNDV descriptor, or our copy */
    size_t len;
    uint16_t ehdr_len;
    uint32_t seals_len; /* bytes of the seal table after the engine header */
    uint32_t dst; /* receiver index it names (checked at replay) */
    uint32_t salt; /* the nonce (checked for a replay when held) */
    uint64_t seq;
    size_t cost;  /* bytes counted against the unbound bound */
    void *buf;    /* fetch destination (the engine's) */
    uint8_t msg_mac[RDP_UCX_MAC_LEN];
    uint8_t hdr_mac[RDP_UCX_MAC_LEN];
    int unverified;   /* held before connect: authenticated at replay */
    int payload_open; /* RDP_UCX_FLAG_OPEN: the payload is not authenticated */
    size_t pre_len;   /* 0: no copy of the prefix */
    uint8_t pre[];  /* fixed header + engine header + seal table */
} ucx_rmsg_t;

typedef struct ucx_peer {
    rdp_ucx_tl_t *tl;
    uint32_t index;
    ucp_ep_h ep;
    void *addr; /* the peer's worker address (copy) */
    size_t addr_len;
    int failed;
    pmix_status_t fail_status;
    int reported; /* peer_failed delivered to the current binding */
    uint64_t eager_max;         /* payloads up to this go eager-only */
    uint64_t tx_seq;            /* counter of the messages sent to it */
    rdp_ucx_replay_t rx_replay; /* nonces of the messages it sent us */
    uint32_t local_pid;         /* a peer on this machine: its pid, else 0 */
    int pidfd;                  /* ... and its process, watched */
    rdp_fdwatch_t *exit_watch;  /* readable once that process is gone */
    /* shutdown handshake (rdp_ucx_tl_destroy), only with peers in
     * contact: an endpoint of ours, or a message heard from it */
    int heard;     /* an authentic message from it was accepted */
    int bye_sent;  /* our goodbye: 1 in flight, 2 sent */
    int bye_acked; /* it acknowledged our goodbye */
    int bye_heard; /* it said goodbye to us ... */
    int ack_sent;  /* ... and our acknowledgment: 1 in flight, 2 sent */
    uint8_t bye_msg[RDP_UCX_BYE_LEN]; /* headers until sent */
    uint8_t ack_msg[RDP_UCX_BYE_LEN];
} ucx_peer_t;

struct rdp_ucx_tl {
    rdp_loop_t *loop;
    char name[32];
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *addr;
    size_t addr_len;
    uint8_t *envelope; /* addr wrapped for the bootstrap (ucx_int.h) */
    size_t envelope_len;
    rdp_ucx_envelope_t self; /* this process, to spot local peers */
    size_t max_am_header;
    int efd;
    rdp_fdwatch_t *watch;
    /* the loop watches efd: not while the transport spins (its kick polls
     * the worker; progress_all) */
    int watched;
    rdp_timer_t *kick;
    int kick_armed;
    double kick_delay;    /* delay the armed kick was started with */
    double last_activity; /* last time progress found work */
    double busy_window;   /* RDPMIX_UCX_BUSY_US, seconds (0: no busy poll) */
    double repoll_window; /* RDPMIX_UCX_REPOLL_US, seconds */
    rdp_ucx_auth_t auth;
    uint64_t seal_ctr; /* seals made under auth's salt */

    int connected;
    int lazy;
    int local_zcopy; /* watched local peers' endpoints without UCP's peer
                        error handling (RDPMIX_UCX_LOCAL_ZCOPY) */
    uint32_t me;
    uint32_t npeers;
    ucx_peer_t *peers;
    int close_pending;  /* failed peers whose endpoint is still open */
    int report_pending; /* failed peers not yet reported to the binding */

    const rdp_tl_upcalls_t *up;
    void *up_arg;

    int in_pass;        /* inside progress_all: `progressed` follows */
    int pass_delivered; /* it delivered a message marked pass_end */
    int pass_active;    /* a round of this pass found work: last_activity
                           is the time of that round */
    double pass_time;   /* the time this pass read after its last work
                           (0: none yet) */
    double progressed_time; /* pass_time, during the `progressed` upcall
                               (tl.h pass_time); 0 elsewhere */
    int in_progress;  /* inside ucp_worker_progress or our deferred work */
    int *gone;        /* set by destroy, while progress_pass runs */
    unsigned in_call; /* inside a vtable call */
    double drain_timeout;
    rdp_list_t sends;   /* ucx_sreq_t in flight */
    void *spare_sreq;   /* a small send record done with, for the next */
    rdp_list_t fetches; /* ucx_rmsg_t being fetched */
    rdp_list_t kept;    /* ucx_rmsg_t the engine keeps */
    rdp_list_t done;    /* ucx_op_t whose callback is due */
    rdp_list_t unbound; /* ucx_rmsg_t waiting for a binding */
    size_t unbound_msgs;
    size_t unbound_bytes;
    size_t unbound_max_msgs;
    size_t unbound_max_bytes;
    size_t closing; /* endpoint close requests in flight */
    int ack_due;    /* a peer's goodbye waits for our acknowledgment */
    uint32_t bye_all_max; /* goodbyes to every peer up to this many */

    double drop_log_time;
    uint64_t drop_suppressed;
    rdp_ucx_tl_stats_t stats;
};

/* ---- ucx_tl.c: context, worker, endpoints, sends, progress ---- */

/** Progress the worker from the loop soon. */
void rdp_ucx_kick(rdp_ucx_tl_t *tl);
/** Count a dropped message in *@a counter and warn (rate-limited). */
void rdp_ucx_drop(rdp_ucx_tl_t *tl, uint64_t *counter, uint32_t peer,
                  const char *why);
/** Free an operation (an rmsg loses its magic: stale descriptors are
 * refused). */
void rdp_ucx_op_free(ucx_op_t *op);
/** Finish an operation: unlink it and run (or queue) its callback. */
void rdp_ucx_op_complete(rdp_ucx_tl_t *tl, ucx_op_t *op, pmix_status_t status);

/* ---- ucx_recv.c: receiving and authenticating ---- */

/** UCP's receive callback of RDP_UCX_AM_ID messages. */
ucs_status_t rdp_ucx_am_recv_cb(void *arg, const void *header,
                                size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param);
/** Deliver the messages held before connect or while no engine was
 * bound, in arrival order. */
void rdp_ucx_deliver_held(rdp_ucx_tl_t *tl);
/** Give the payload of @a rmsg back to UCP (or free our copy). */
void rdp_ucx_rmsg_release_data(rdp_ucx_tl_t *tl, ucx_rmsg_t *rmsg);
/** tl.h's fetch and release of a received message's descriptor. */
pmix_status_t rdp_ucx_tl_fetch(void *ctx, void *desc, void *buf, size_t len,
                               rdp_tl_done_cb_t cb, void *cb_arg);
void rdp_ucx_tl_release(void *ctx, void *desc);

/* ---- status translation (ucx_status.c, the only place) ---- */

/** ucs_status_t -> pmix_status_t for operation results. */
pmix_status_t rdp_ucx_status(ucs_status_t status);
/** ucs_status_t of an endpoint error -> status for peer_failed. */
pmix_status_t rdp_ucx_status_peer(ucs_status_t status);
/** Text for logs. */
const char *rdp_ucx_status_str(ucs_status_t status);

#endif
