/* wire.h - bounded pack/unpack of PMIx Standard types; message framing */
#ifndef RDP_CORE_WIRE_WIRE_H
#define RDP_CORE_WIRE_WIRE_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/*
 * Encoding: every integer is little-endian and of fixed width; no padding.
 *   string      u32 length-with-NUL, then the bytes including the NUL;
 *               length 0 encodes a NULL pointer.  A string whose last byte
 *               is not NUL, or that holds an inner NUL, fails to unpack.
 *   key/nspace  a string of at most PMIX_MAX_KEYLEN/PMIX_MAX_NSLEN chars.
 *   bytes       u64 length, then the bytes.
 *   value       u16 type, then the payload of that type.
 *   info        key, u32 flags, value.
 *   proc        nspace, u32 rank.
 *   data array  u16 type, u64 count, then count payloads of that type.
 *   arrays      u64 count, then the elements.
 * Unpacking never reads past the buffer, rejects counts that cannot fit in
 * the remaining bytes, and limits nesting to RDP_WIRE_MAX_DEPTH.  On error
 * everything it allocated is freed and its out-parameter is untouched.
 *
 * Details (wire.c):
 *   - Scalars travel as their LP64 width (size_t/time_t 8, int/pid_t 4,
 *     bool 1 byte 0|1, float/double as IEEE bits, timeval 2 x 64 bits).
 *   - A value whose union holds the type by pointer (proc, info, data
 *     array, proc_info, coord, topo, cpuset, geometry, ...) carries a u8
 *     present flag before the payload, so a NULL pointer round-trips.
 *   - Data array elements use the layout of rdpmix_darray_elem_size().
 *   - Structs are their fields in declaration order; argv-style lists
 *     (app argv/env, query keys, regattr description) are arrays of strings.
 *   - cpuset/topology carry only their source string (the hwloc object is
 *     process-local and unpacks as NULL); a data buffer carries its used
 *     bytes; PMIX_INFO_PERSISTENT is never packed nor unpacked.
 *   - PMIX_POINTER, PMIX_BUFFER, PMIX_KVAL, PMIX_COMMAND: NOT_SUPPORTED;
 *     codes that are not 4.2.2 types: PMIX_ERR_UNKNOWN_DATA_TYPE.
 *   - Nesting: every value and every data array counts one level (so an
 *     info array inside an info array costs two).  Packing refuses what
 *     unpacking would refuse (PMIX_ERR_PACK_FAILURE).
 *   - Errors: a count or length the remaining bytes cannot hold is
 *     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER (checked before allocating);
 *     malformed content (bad string, key/nspace too long, depth) is
 *     PMIX_ERR_UNPACK_FAILURE.  A failed unpack restores the cursor; a
 *     failed pack restores the buffer size.
 */

#define RDP_WIRE_MAX_DEPTH 16

/** Growable pack buffer; embedded init/cleanup. */
typedef struct rdp_buf {
    uint8_t *data;
    size_t size;   /* bytes used */
    size_t cap;    /* bytes allocated */
} rdp_buf_t;

void rdp_buf_init(rdp_buf_t *buf);
void rdp_buf_cleanup(rdp_buf_t *buf);
/** Ensure room for @a extra more bytes. */
pmix_status_t rdp_buf_reserve(rdp_buf_t *buf, size_t extra);
/** Append raw bytes. */
pmix_status_t rdp_buf_append(rdp_buf_t *buf, const void *data, size_t len);
/** Give the bytes away (caller frees with free()); buf becomes empty. */
void *rdp_buf_take(rdp_buf_t *buf, size_t *size_p);

/** Bounded read cursor over borrowed bytes. */
typedef struct rdp_rbuf {
    const uint8_t *ptr;
    size_t left;
} rdp_rbuf_t;

static inline void rdp_rbuf_init(rdp_rbuf_t *rb, const void *data, size_t len)
{
    rb->ptr  = (const uint8_t *)data;
    rb->left = len;
}

/* ---- scalars ---- */
pmix_status_t rdp_pack_u8(rdp_buf_t *buf, uint8_t v);
pmix_status_t rdp_pack_u16(rdp_buf_t *buf, uint16_t v);
pmix_status_t rdp_pack_u32(rdp_buf_t *buf, uint32_t v);
pmix_status_t rdp_pack_u64(rdp_buf_t *buf, uint64_t v);
pmix_status_t rdp_pack_i32(rdp_buf_t *buf, int32_t v);
pmix_status_t rdp_pack_string(rdp_buf_t *buf, const char *s);
pmix_status_t rdp_pack_bytes(rdp_buf_t *buf, const void *data, size_t len);

pmix_status_t rdp_unpack_u8(rdp_rbuf_t *rb, uint8_t *v_p);
pmix_status_t rdp_unpack_u16(rdp_rbuf_t *rb, uint16_t *v_p);
pmix_status_t rdp_unpack_u32(rdp_rbuf_t *rb, uint32_t *v_p);
pmix_status_t rdp_unpack_u64(rdp_rbuf_t *rb, uint64_t *v_p);
pmix_status_t rdp_unpack_i32(rdp_rbuf_t *rb, int32_t *v_p);
/** *s_p is malloc'ed (NULL for a packed NULL). */
pmix_status_t rdp_unpack_string(rdp_rbuf_t *rb, char **s_p);
/** Zero-copy: *s_p points into the buffer (NUL-terminated, checked). */
pmix_status_t rdp_unpack_string_view(rdp_rbuf_t *rb, const char **s_p);
/** Unpack a string into a fixed array of @a cap bytes (key, nspace). */
pmix_status_t rdp_unpack_string_into(rdp_rbuf_t *rb, char *dst, size_t cap);
/** *data_p malloc'ed (NULL when len 0). */
pmix_status_t rdp_unpack_bytes(rdp_rbuf_t *rb, void **data_p, size_t *len_p);
/** Zero-copy view of a bytes field. */
pmix_status_t rdp_unpack_bytes_view(rdp_rbuf_t *rb, const void **data_p,
                                    size_t *len_p);

/* ---- Standard types (every pmix_data_type_t a value can hold) ---- */
pmix_status_t rdp_pack_value(rdp_buf_t *buf, const pmix_value_t *val);
pmix_status_t rdp_pack_info(rdp_buf_t *buf, const pmix_info_t *info);
pmix_status_t rdp_pack_info_array(rdp_buf_t *buf, const pmix_info_t *info,
                                  size_t ninfo);
pmix_status_t rdp_pack_proc(rdp_buf_t *buf, const pmix_proc_t *proc);
pmix_status_t rdp_pack_proc_array(rdp_buf_t *buf, const pmix_proc_t *procs,
                                  size_t nprocs);
pmix_status_t rdp_pack_data_array(rdp_buf_t *buf,
                                  const pmix_data_array_t *darray);
pmix_status_t rdp_pack_app_array(rdp_buf_t *buf, const pmix_app_t *apps,
                                 size_t napps);
pmix_status_t rdp_pack_query_array(rdp_buf_t *buf, const pmix_query_t *q,
                                   size_t nq);
pmix_status_t rdp_pack_pdata_array(rdp_buf_t *buf, const pmix_pdata_t *pd,
                                   size_t npd);

/** Fill *val (caller-provided, may be uninitialised) with a deep copy that
 * the caller releases with rdp_value_destruct / PMIx_Value_destruct. */
pmix_status_t rdp_unpack_value(rdp_rbuf_t *rb, pmix_value_t *val);
pmix_status_t rdp_unpack_info(rdp_rbuf_t *rb, pmix_info_t *info);
/** *info_p is a malloc'ed array (free with rdp_info_array_free); NULL if 0. */
pmix_status_t rdp_unpack_info_array(rdp_rbuf_t *rb, pmix_info_t **info_p,
                                    size_t *ninfo_p);
pmix_status_t rdp_unpack_proc(rdp_rbuf_t *rb, pmix_proc_t *proc);
/** *procs_p malloc'ed; NULL if 0. */
pmix_status_t rdp_unpack_proc_array(rdp_rbuf_t *rb, pmix_proc_t **procs_p,
                                    size_t *nprocs_p);
/** *darray_p malloc'ed; free with rdp_data_array_free. */
pmix_status_t rdp_unpack_data_array(rdp_rbuf_t *rb,
                                    pmix_data_array_t **darray_p);
pmix_status_t rdp_unpack_app_array(rdp_rbuf_t *rb, pmix_app_t **apps_p,
                                   size_t *napps_p);
pmix_status_t rdp_unpack_query_array(rdp_rbuf_t *rb, pmix_query_t **q_p,
                                     size_t *nq_p);
pmix_status_t rdp_unpack_pdata_array(rdp_rbuf_t *rb, pmix_pdata_t **pd_p,
                                     size_t *npd_p);

/* ---- message framing ---- */

#define RDP_MSG_MAGIC   0x58504452u /* "RDPX" little-endian */
#define RDP_MSG_VERSION 1
#define RDP_MSG_HDR_LEN 16

/** Fixed header in front of every message (packed little-endian). */
typedef struct rdp_msg_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t cmd;     /* enum rdp_cmd (proto.h) */
    uint32_t tag;     /* request tag echoed by the reply; 0 = unsolicited */
    uint32_t length;  /* payload bytes after the header */
} rdp_msg_hdr_t;

void rdp_msg_hdr_encode(const rdp_msg_hdr_t *hdr,
                        uint8_t out[RDP_MSG_HDR_LEN]);
/** Decode and check magic and version; PMIX_ERR_UNPACK_FAILURE if bad. */
pmix_status_t rdp_msg_hdr_decode(const uint8_t in[RDP_MSG_HDR_LEN],
                                 rdp_msg_hdr_t *hdr);

#endif
