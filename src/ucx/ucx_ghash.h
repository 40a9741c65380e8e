/* ucx_ghash.h - GCM's GHASH over many blocks at once (VPCLMULQDQ, AVX-512) */
#ifndef RDP_UCX_GHASH_H
#define RDP_UCX_GHASH_H

#include <stddef.h>
#include <stdint.h>

/* The hash key H and its powers H^1..H^32, in the form the code multiplies
 * with (byte-reversed, divided by x); secret like the key it comes from. */
typedef struct rdp_ghash_key rdp_ghash_key_t;

/* 1 if this CPU (and its OS) runs the wide GHASH: VPCLMULQDQ with
 * AVX-512F/BW; the callers fall back to libcrypto's GHASH otherwise. */
int rdp_ghash_wide_ok(void);

/* A key for H = E_K(0^128) as GCM defines it (16 bytes, GCM's byte
 * order); NULL when out of memory or when !rdp_ghash_wide_ok(). */
rdp_ghash_key_t *rdp_ghash_key_new(const uint8_t h[16]);

/* Cleanse and free (NULL is fine). */
void rdp_ghash_key_free(rdp_ghash_key_t *k);

/* GHASH @a len bytes at @a p into the running value @a x (16 bytes, GCM's
 * byte order), the last partial block padded with zeros, as GCM pads the
 * additional data: x = (...((x ^ B1) H ^ B2) H ...) H. */
void rdp_ghash_update(const rdp_ghash_key_t *k, uint8_t x[16], const void *p,
                      size_t len);

#endif
