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
 *        4     1  version (1)
 *        5     1  flags (0; anything else is refused)
 *        6     2  E, the engine header's length
 *        8     4  sender's universe index
 *       12     4  receiver's universe index
 *       16     8  payload length
 *       24     E  the engine's header
 *     24+E    16  hmac_hdr  = HMAC-SHA256(key, "H" | bytes [0, 24+E))[0..16)
 *     40+E    16  hmac_msg  = HMAC-SHA256(key, "D" | bytes [0, 24+E) |
 *                                               payload)[0..16)
 *
 * and whose UCP payload is the engine's payload.  "Prefix" below means
 * bytes [0, 24+E).
 */
#define RDP_UCX_AM_ID     1
#define RDP_UCX_MAGIC     0x55504452u /* "RDPU" read as little-endian */
#define RDP_UCX_VERSION   1
#define RDP_UCX_FIXED_LEN 24
#define RDP_UCX_OVERHEAD  (RDP_UCX_FIXED_LEN + 2 * RDP_UCX_MAC_LEN)
#define RDP_UCX_MAX_EHDR  UINT16_MAX
#define RDP_UCX_MAX_ADDR  65536 /* sanity bound on a worker address */

/** The fixed part of the header, decoded. */
typedef struct rdp_ucx_wire {
    uint16_t ehdr_len;
    uint32_t src;
    uint32_t dst;
    uint64_t len;
} rdp_ucx_wire_t;

/** Write the fixed part (RDP_UCX_FIXED_LEN bytes) to @a out. */
void rdp_ucx_wire_encode(const rdp_ucx_wire_t *w, uint8_t *out);

/** Parse a received UCP header of @a am_len bytes: magic, version, flags
 * and that am_len == RDP_UCX_OVERHEAD + ehdr_len.  PMIX_ERR_BAD_PARAM
 * (with *why_p set to a static reason) otherwise. */
pmix_status_t rdp_ucx_wire_decode(const void *am_hdr, size_t am_len,
                                  rdp_ucx_wire_t *w_p, const char **why_p);

/* ---- authenticator (ucx_wire.c) ---- */

/** Keyed HMAC-SHA256 state; single-threaded (the loop's). */
typedef struct rdp_ucx_auth {
    void *mac;  /* EVP_MAC * */
    void *ctx;  /* EVP_MAC_CTX *, keyed once */
    char fp[9]; /* key fingerprint for logs (not secret) */
} rdp_ucx_auth_t;

/** Key the MAC.  PMIX_ERR_BAD_PARAM for a key of the wrong length,
 * PMIX_ERR_INIT if libcrypto fails.
 * @param [in] key  borrowed; the copy libcrypto keeps is freed (and
 *                  cleansed by libcrypto) in cleanup */
pmix_status_t rdp_ucx_auth_init(rdp_ucx_auth_t *auth, const uint8_t *key,
                                size_t key_len);
void rdp_ucx_auth_cleanup(rdp_ucx_auth_t *auth);

/** hmac_hdr of the prefix @a pre (@a pre_len bytes). */
pmix_status_t rdp_ucx_auth_hdr(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, uint8_t mac[RDP_UCX_MAC_LEN]);

/** hmac_msg of the prefix and the payload gathered from @a iov. */
pmix_status_t rdp_ucx_auth_msg(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, const rdp_iov_t *iov,
                               size_t iovcnt, uint8_t mac[RDP_UCX_MAC_LEN]);

/** Constant-time comparison of two authenticators; 1 when equal. */
int rdp_ucx_auth_equal(const uint8_t *a, const uint8_t *b);

/* ---- status translation (ucx_status.c, the only place) ---- */

/** ucs_status_t -> pmix_status_t for operation results. */
pmix_status_t rdp_ucx_status(ucs_status_t status);
/** ucs_status_t of an endpoint error -> status for peer_failed. */
pmix_status_t rdp_ucx_status_peer(ucs_status_t status);
/** Text for logs. */
const char *rdp_ucx_status_str(ucs_status_t status);

#endif
