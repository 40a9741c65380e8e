/* msg.h - the engine's message header and block framing (little-endian) */
#ifndef RDP_COLL_MSG_H
#define RDP_COLL_MSG_H

#include <pmix_common.h>

#include <stdint.h>
#include <string.h>

/*
 * Header, RDP_COLL_HDR_LEN bytes, every integer little-endian:
 *    0 u32 magic   RDP_COLL_MAGIC ("RDPC")
 *    4 u8  version RDP_COLL_VERSION
 *    5 u8  type    enum rdp_coll_msg_type
 *    6 u8  kind    enum rdp_coll_kind
 *    7 u8  alg     enum rdp_coll_alg
 *    8 u64 sig     participant signature  } the collective key,
 *   16 u64 opid    operation id           } with kind
 *   24 u32 nparts  number of participants
 *   28 u32 sender  universe index of the sending server
 *   32 u32 step    schedule step (DATA, SEG)
 *   36 u32 nblocks blocks in the payload (DATA); 1 (SEG)
 *   40 i32 status  why (ABORT), 0 for DATA, SEG and P2P
 *   44 u32 aux     ABORT: universe index of the failed peer or UINT32_MAX
 *   48 u32 flags   bits 0-1: the sender's size class; others reserved (0),
 *                  ignored by receivers
 * Payload (DATA): nblocks blocks, each [u32 origin][u64 length][bytes],
 * origin being a universe index.  ABORT messages have no payload.
 *
 * A SEG message (ring allgather only) carries one piece of one block; its
 * header is RDP_COLL_SEG_HDR_LEN bytes, the above followed by:
 *   52 u32 origin  universe index of the block's contributor
 *   56 u32 length  bytes of this piece (the whole payload, >= 1)
 *   60 u64 total   length of the whole block
 *   68 u64 offset  where the piece starts in the block
 * The contributor chooses the pieces; every other server forwards each
 * piece exactly as it received it.  The payload is the piece's bytes.
 */

#define RDP_COLL_MAGIC          0x43504452u /* "RDPC" */
#define RDP_COLL_VERSION        2
#define RDP_COLL_HDR_LEN        52
#define RDP_COLL_SEG_HDR_LEN    76
#define RDP_COLL_HDR_MAX        RDP_COLL_SEG_HDR_LEN
#define RDP_COLL_BLK_HDR_LEN    12
#define RDP_COLL_FLAG_SIZE_MASK 0x3u

enum rdp_coll_msg_type {
    RDP_COLL_MSG_DATA  = 1,
    RDP_COLL_MSG_ABORT = 2,
    /** point-to-point (rdp_coll_p2p_send): kind, alg, sig, nparts,
     * nblocks, status and flags 0, aux UINT32_MAX, step = channel,
     * opid = the sender's message id; the payload is opaque */
    RDP_COLL_MSG_P2P = 3,
    /** one piece of one ring block (see above) */
    RDP_COLL_MSG_SEG = 4
};

typedef struct rdp_coll_hdr {
    uint8_t type;
    uint8_t kind;
    uint8_t alg;
    uint64_t sig;
    uint64_t opid;
    uint32_t nparts;
    uint32_t sender;
    uint32_t step;
    uint32_t nblocks;
    int32_t status;
    uint32_t aux;
    uint32_t flags;
    /* SEG only */
    uint32_t seg_origin;
    uint32_t seg_len;
    uint64_t seg_total;
    uint64_t seg_off;
} rdp_coll_hdr_t;

/** Header length of a message of @a type. */
static inline size_t rdp_coll_hdr_len(uint8_t type)
{
    return type == RDP_COLL_MSG_SEG ? RDP_COLL_SEG_HDR_LEN : RDP_COLL_HDR_LEN;
}

static inline void rdp_coll_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void rdp_coll_put_u64(uint8_t *p, uint64_t v)
{
    rdp_coll_put_u32(p, (uint32_t)v);
    rdp_coll_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t rdp_coll_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
           | ((uint32_t)p[3] << 24);
}

static inline uint64_t rdp_coll_get_u64(const uint8_t *p)
{
    return (uint64_t)rdp_coll_get_u32(p)
           | ((uint64_t)rdp_coll_get_u32(p + 4) << 32);
}

/** Encode @a h into @a out, which has room for rdp_coll_hdr_len(h->type)
 * bytes; returns that length. */
static inline size_t rdp_coll_hdr_encode(const rdp_coll_hdr_t *h, uint8_t *out)
{
    rdp_coll_put_u32(out, RDP_COLL_MAGIC);
    out[4] = RDP_COLL_VERSION;
    out[5] = h->type;
    out[6] = h->kind;
    out[7] = h->alg;
    rdp_coll_put_u64(out + 8, h->sig);
    rdp_coll_put_u64(out + 16, h->opid);
    rdp_coll_put_u32(out + 24, h->nparts);
    rdp_coll_put_u32(out + 28, h->sender);
    rdp_coll_put_u32(out + 32, h->step);
    rdp_coll_put_u32(out + 36, h->nblocks);
    rdp_coll_put_u32(out + 40, (uint32_t)h->status);
    rdp_coll_put_u32(out + 44, h->aux);
    rdp_coll_put_u32(out + 48, h->flags);
    if (h->type != RDP_COLL_MSG_SEG) {
        return RDP_COLL_HDR_LEN;
    }
    rdp_coll_put_u32(out + 52, h->seg_origin);
    rdp_coll_put_u32(out + 56, h->seg_len);
    rdp_coll_put_u64(out + 60, h->seg_total);
    rdp_coll_put_u64(out + 68, h->seg_off);
    return RDP_COLL_SEG_HDR_LEN;
}

/** Decode; PMIX_ERR_UNPACK_FAILURE for a wrong magic or version, or a
 * length that does not match the type.  Field values are not checked
 * here. */
static inline pmix_status_t rdp_coll_hdr_decode(const void *buf, size_t len,
                                                rdp_coll_hdr_t *h)
{
    const uint8_t *in = buf;

    if (buf == NULL || len < RDP_COLL_HDR_LEN || len != rdp_coll_hdr_len(in[5])
        || rdp_coll_get_u32(in) != RDP_COLL_MAGIC
        || in[4] != RDP_COLL_VERSION) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    memset(h, 0, sizeof(*h));
    h->type    = in[5];
    h->kind    = in[6];
    h->alg     = in[7];
    h->sig     = rdp_coll_get_u64(in + 8);
    h->opid    = rdp_coll_get_u64(in + 16);
    h->nparts  = rdp_coll_get_u32(in + 24);
    h->sender  = rdp_coll_get_u32(in + 28);
    h->step    = rdp_coll_get_u32(in + 32);
    h->nblocks = rdp_coll_get_u32(in + 36);
    h->status  = (int32_t)rdp_coll_get_u32(in + 40);
    h->aux     = rdp_coll_get_u32(in + 44);
    h->flags   = rdp_coll_get_u32(in + 48);
    if (h->type == RDP_COLL_MSG_SEG) {
        h->seg_origin = rdp_coll_get_u32(in + 52);
        h->seg_len    = rdp_coll_get_u32(in + 56);
        h->seg_total  = rdp_coll_get_u64(in + 60);
        h->seg_off    = rdp_coll_get_u64(in + 68);
    }
    return PMIX_SUCCESS;
}

#endif
