/* pnet_sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for
 * deriving a job's key from a site secret without a crypto library
 * (libpmix links none: it is loaded into every process of a job). */
#ifndef RDP_PNET_SHA256_H
#define RDP_PNET_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define RDP_SHA256_LEN   32
#define RDP_SHA256_BLOCK 64

typedef struct rdp_sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t block[RDP_SHA256_BLOCK];
    size_t used; /* bytes in block */
} rdp_sha256_t;

void rdp_sha256_init(rdp_sha256_t *s);
void rdp_sha256_update(rdp_sha256_t *s, const void *data, size_t len);
/** Write the digest to @a out and wipe the state. */
void rdp_sha256_final(rdp_sha256_t *s, uint8_t out[RDP_SHA256_LEN]);
/** The digest of @a len bytes at @a data. */
void rdp_sha256(const void *data, size_t len, uint8_t out[RDP_SHA256_LEN]);
/** HMAC-SHA256 of @a msg under @a key (any length). */
void rdp_hmac_sha256(const void *key, size_t keylen, const void *msg,
                     size_t msglen, uint8_t out[RDP_SHA256_LEN]);

#endif
