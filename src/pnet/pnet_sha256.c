/* pnet_sha256.c - SHA-256 from FIPS 180-4 §§4.1.2, 4.2.2, 5, 6.2; HMAC
 * from RFC 2104.  Written for clarity over speed: it hashes a few dozen
 * bytes per job. */
#include "config.h"
#include "pnet/pnet_sha256.h"

#include <string.h>

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the
 * cube roots of the first 64 primes */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

/* §6.2.2: one 512-bit block */
static void compress(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], v[8];

    for (int t = 0; t < 16; t++) {
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16
               | (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    }
    for (int t = 16; t < 64; t++) {
        uint32_t s0 =
            rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 =
            rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);

        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(v, h, sizeof(v));
    for (int t = 0; t < 64; t++) {
        uint32_t e = v[4], a = v[0];
        uint32_t ch  = (e & v[5]) ^ (~e & v[6]);
        uint32_t maj = (a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]);
        uint32_t t1 =
            v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ch + K[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + maj;

        memmove(&v[1], &v[0], 7 * sizeof(uint32_t));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) {
        h[i] += v[i];
    }
}

void rdp_sha256_init(rdp_sha256_t *s)
{
    /* §5.3.3: the fractional parts of the square roots of the first 8
     * primes */
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};

    memcpy(s->h, h0, sizeof(h0));
    s->total = 0;
    s->used  = 0;
}

void rdp_sha256_update(rdp_sha256_t *s, const void *data, size_t len)
{
    const uint8_t *p = data;

    s->total += len;
    while (len > 0) {
        size_t n = RDP_SHA256_BLOCK - s->used;

        if (n > len) {
            n = len;
        }
        memcpy(s->block + s->used, p, n);
        s->used += n;
        p += n;
        len -= n;
        if (s->used == RDP_SHA256_BLOCK) {
            compress(s->h, s->block);
            s->used = 0;
        }
    }
}

void rdp_sha256_final(rdp_sha256_t *s, uint8_t out[RDP_SHA256_LEN])
{
    /* §5.1.1: a 1 bit, zeros, then the length in bits, big-endian */
    uint64_t bits = s->total * 8;
    uint8_t one = 0x80, zero = 0, len[8];

    rdp_sha256_update(s, &one, 1);
    while (s->used != RDP_SHA256_BLOCK - 8) {
        rdp_sha256_update(s, &zero, 1);
    }
    for (int i = 0; i < 8; i++) {
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    rdp_sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i]     = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
    explicit_bzero(s, sizeof(*s));
}

void rdp_sha256(const void *data, size_t len, uint8_t out[RDP_SHA256_LEN])
{
    rdp_sha256_t s;

    rdp_sha256_init(&s);
    rdp_sha256_update(&s, data, len);
    rdp_sha256_final(&s, out);
}

/* RFC 2104: H((K ^ opad) || H((K ^ ipad) || msg)), K hashed first when
 * longer than a block */
void rdp_hmac_sha256(const void *key, size_t keylen, const void *msg,
                     size_t msglen, uint8_t out[RDP_SHA256_LEN])
{
    uint8_t k[RDP_SHA256_BLOCK] = {0}, pad[RDP_SHA256_BLOCK];
    uint8_t inner[RDP_SHA256_LEN];
    rdp_sha256_t s;

    if (keylen > RDP_SHA256_BLOCK) {
        rdp_sha256(key, keylen, k);
    } else if (keylen > 0) {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < RDP_SHA256_BLOCK; i++) {
        pad[i] = k[i] ^ 0x36;
    }
    rdp_sha256_init(&s);
    rdp_sha256_update(&s, pad, sizeof(pad));
    rdp_sha256_update(&s, msg, msglen);
    rdp_sha256_final(&s, inner);
    for (int i = 0; i < RDP_SHA256_BLOCK; i++) {
        pad[i] = k[i] ^ 0x5c;
    }
    rdp_sha256_init(&s);
    rdp_sha256_update(&s, pad, sizeof(pad));
    rdp_sha256_update(&s, inner, sizeof(inner));
    rdp_sha256_final(&s, out);
    explicit_bzero(k, sizeof(k));
    explicit_bzero(pad, sizeof(pad));
    explicit_bzero(inner, sizeof(inner));
}
