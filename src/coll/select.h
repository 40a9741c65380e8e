/* select.h - choosing a collective algorithm from facts all participants share */
#ifndef RDP_COLL_SELECT_H
#define RDP_COLL_SELECT_H

#include <pmix_common.h>

#include <stdint.h>

#include "coll/sched.h"

/** What a collective does. */
enum rdp_coll_kind {
    RDP_COLL_BARRIER   = 1, /**< no data: dissemination barrier */
    RDP_COLL_ALLGATHER = 2  /**< every participant gets every block */
};

/**
 * Size class of an allgather, which every participant must pass
 * identically (never the local block size: it differs between servers).
 * The usual source is the previous result over the same participants,
 * which every participant received identically:
 * rdp_coll_size_class_of(total bytes of that result, n).
 */
enum rdp_coll_size_class {
    RDP_COLL_SIZE_UNKNOWN = 0, /**< treated as SMALL */
    RDP_COLL_SIZE_SMALL   = 1,
    RDP_COLL_SIZE_MEDIUM  = 2,
    RDP_COLL_SIZE_LARGE   = 3
};

/* Thresholds, in average bytes per block, from bench/engine_compare.sh
 * (bench/RESULTS.md, issue 3) over UCX tcp, the transport between servers
 * on different nodes: since src/ucx sends payloads up to 4 MiB eagerly
 * where UCP gives no zero-copy rendezvous (tcp in peer-failure mode),
 * Bruck wins or ties up to 384 KiB blocks at 4-16 servers (64 KiB: 15-20
 * % ahead at 8 and 16) and the ring wins from 512 KiB (16 servers: 21 %
 * at 512 KiB, 28 % at 1 MiB), where Bruck's last steps outgrow the eager
 * ceiling.  Over shared memory alone (zero-copy rendezvous) the ring
 * would win from 64 KiB (docs/coll.md): RDPMIX_COLL_ALG=ring there.
 * SMALL and MEDIUM both mean Bruck today; the boundary is kept for the
 * segmented ring and for other transports. */
#define RDP_COLL_SMALL_MAX_BLOCK (32u * 1024u)
#define RDP_COLL_LARGE_MIN_BLOCK (512u * 1024u)
/** Ring only pays off while its n - 1 steps are few compared with the
 * bandwidth it saves over log-step algorithms (measured up to 16; 32 is
 * an extrapolation: bench/project.py). */
#define RDP_COLL_RING_MAX_PEERS 32u

/** Size class of @a total_bytes spread over @a n blocks. */
enum rdp_coll_size_class rdp_coll_size_class_of(uint64_t total_bytes,
                                                uint32_t n);

/** Parse an RDPMIX_COLL_ALG value: "recursive_doubling" (or "rd"),
 * "bruck", "ring", "auto".  PMIX_ERR_BAD_PARAM for anything else. */
pmix_status_t rdp_coll_alg_parse(const char *s, enum rdp_coll_alg *alg_p);

/** Read RDPMIX_COLL_ALG (unset or empty: AUTO).  Logs and returns
 * PMIX_ERR_BAD_PARAM for an unknown value. */
pmix_status_t rdp_coll_alg_from_env(enum rdp_coll_alg *alg_p);

/** Default piece size of a segmented ring block (RDPMIX_COLL_SEG_BYTES):
 * off.  Measured over UCX tcp on one 2-core host (docs/coll.md), pieces
 * of 64 KiB, 256 KiB and 1 MiB never beat whole blocks (64 KiB lost 20-70
 * %, 256 KiB 3-14 % on 1 MiB blocks): with every server on the same cores
 * nothing idles while a block is stored and forwarded.  A network with
 * real links is where the pipeline pays; 256 KiB is the starting point
 * to measure there. */
#define RDP_COLL_SEG_BYTES_DEFAULT 0u
/** Largest piece size accepted (a piece length is a u32 on the wire). */
#define RDP_COLL_SEG_BYTES_MAX (1u << 30)

/** Read RDPMIX_COLL_SEG_BYTES: a byte count, optionally followed by k or m
 * (KiB, MiB), at most RDP_COLL_SEG_BYTES_MAX; 0 turns segmentation off.
 * Unset or empty: RDP_COLL_SEG_BYTES_DEFAULT.  Logs and returns
 * PMIX_ERR_BAD_PARAM for anything else. */
pmix_status_t rdp_coll_seg_bytes_from_env(uint64_t *bytes_p);

/**
 * The algorithm for a collective of @a n participants.  Barriers always
 * use dissemination; an allgather uses @a forced when it is not AUTO, else
 * ring for LARGE blocks over at most RDP_COLL_RING_MAX_PEERS participants,
 * else recursive doubling for a power of two and Bruck otherwise.
 */
enum rdp_coll_alg rdp_coll_select(enum rdp_coll_kind kind, uint32_t n,
                                  enum rdp_coll_size_class size_class,
                                  enum rdp_coll_alg forced);

#endif
