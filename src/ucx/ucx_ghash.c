/* ucx_ghash.c - GCM's GHASH over many blocks at once (VPCLMULQDQ, AVX-512)
 *
 * Written from the definition of GHASH (NIST SP 800-38D): blocks are
 * polynomials over GF(2) modulo P = x^128 + x^7 + x^2 + x + 1, bit 7 of
 * byte 0 the coefficient of x^0; X_i = (X_{i-1} ^ B_i) H.
 *
 * Representation and reduction: ucx_gf128.h.
 *
 * Aggregation.  32 blocks B_1..B_32 after the value X: X' = (X ^ B_1)
 * H^32 ^ B_2 H^31 ^ ... ^ B_32 H; the 32 products are summed unreduced (4
 * lanes of 8 registers; lo, hi and both middle halves) and reduced once,
 * so the chain from one X to the next (multiply, fold, reduce) is paid
 * once per 512 bytes.  16 blocks the same way for a rest of 256-511
 * bytes, single blocks after that.
 */
#include "config.h"

#include "ucx/ucx_ghash.h"

#include <openssl/crypto.h>

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)

#include "ucx/ucx_gf128.h"

#define GH_TARGET                                                      \
    __attribute__((target("pclmul,ssse3,sse4.1,avx2,avx512f,avx512bw," \
                          "vpclmulqdq")))

struct rdp_ghash_key {
    /* pw[i] = (H^(32 - i))', so that four of them load as one register
     * whose lane 0 multiplies the earliest block */
    uint8_t pw[32][16];
};

int rdp_ghash_wide_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("vpclmulqdq")
           && __builtin_cpu_supports("avx512f")
           && __builtin_cpu_supports("avx512bw")
           && __builtin_cpu_supports("pclmul")
           && __builtin_cpu_supports("sse4.1");
}

GH_TARGET static void key_init(rdp_ghash_key_t *k, const uint8_t h[16])
{
    __m128i hr = gf_bswap(_mm_loadu_si128((const __m128i *)h));
    __m128i h1 = gf_div_x(hr);
    __m128i p  = hr;

    for (int e = 1; e <= 32; e++) {
        if (e > 1) {
            p = gf_mul(p, h1);
        }
        _mm_storeu_si128((__m128i *)k->pw[32 - e], gf_div_x(p));
    }
}

rdp_ghash_key_t *rdp_ghash_key_new(const uint8_t h[16])
{
    rdp_ghash_key_t *k;

    if (!rdp_ghash_wide_ok()) {
        return NULL;
    }
    k = calloc(1, sizeof(*k));
    if (k != NULL) {
        key_init(k, h);
    }
    return k;
}

void rdp_ghash_key_free(rdp_ghash_key_t *k)
{
    if (k != NULL) {
        OPENSSL_cleanse(k, sizeof(*k));
        free(k);
    }
}

/* the four lanes of @a v XORed into one */
GH_TARGET static inline __m128i fold4(__m512i v)
{
    __m256i a = _mm256_xor_si256(_mm512_castsi512_si256(v),
                                 _mm512_extracti64x4_epi64(v, 1));

    return _mm_xor_si128(_mm256_castsi256_si128(a),
                         _mm256_extracti128_si256(a, 1));
}

#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)

/* 4 @a nr blocks at @a p into @a x (reversed form), @a nr 4 or 8 */
GH_TARGET static inline __m128i gh_wide(const rdp_ghash_key_t *k, __m128i x,
                                        const uint8_t *p, __m512i bs, int nr)
{
    const uint8_t(*pw)[16] = k->pw + 32 - 4 * nr; /* H^(4 nr) first */
    __m512i lo = _mm512_setzero_si512(), hi = lo, mid = lo;

    for (int j = 0; j < nr; j++) {
        __m512i d  = _mm512_shuffle_epi8(_mm512_loadu_si512(p + 64 * j), bs);
        __m512i kj = _mm512_loadu_si512(pw[4 * j]);

        if (j == 0) {
            d = _mm512_xor_si512(d, _mm512_zextsi128_si512(x));
        }
        lo  = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(d, kj, 0x00));
        hi  = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(d, kj, 0x11));
        mid = XOR3(mid, _mm512_clmulepi64_epi128(d, kj, 0x01),
                   _mm512_clmulepi64_epi128(d, kj, 0x10));
    }
    /* the middle terms into lo and hi, lane by lane, then the lanes */
    lo = _mm512_xor_si512(lo, _mm512_bslli_epi128(mid, 8));
    hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128(mid, 8));
    return gf_reduce(fold4(lo), fold4(hi));
}

GH_TARGET void rdp_ghash_update(const rdp_ghash_key_t *k, uint8_t xb[16],
                                const void *data, size_t len)
{
    const uint8_t *p = data;
    __m128i x        = gf_bswap(_mm_loadu_si128((const __m128i *)xb));
    __m128i h1       = _mm_loadu_si128((const __m128i *)k->pw[31]);
    __m512i bs       = _mm512_broadcast_i32x4(
              _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));

    for (; len >= 512; p += 512, len -= 512) {
        x = gh_wide(k, x, p, bs, 8);
    }
    if (len >= 256) {
        x = gh_wide(k, x, p, bs, 4);
        p += 256;
        len -= 256;
    }
    for (; len >= 16; p += 16, len -= 16) {
        __m128i b = gf_bswap(_mm_loadu_si128((const __m128i *)p));

        x = gf_mul(_mm_xor_si128(x, b), h1);
    }
    if (len > 0) {
        uint8_t last[16] = {0};

        memcpy(last, p, len);
        x = gf_mul(
            _mm_xor_si128(x, gf_bswap(_mm_loadu_si128((const __m128i *)last))),
            h1);
    }
    _mm_storeu_si128((__m128i *)xb, gf_bswap(x));
}

#else /* not x86-64 with GCC's intrinsics: libcrypto's GHASH only */

int rdp_ghash_wide_ok(void)
{
    return 0;
}

rdp_ghash_key_t *rdp_ghash_key_new(const uint8_t h[16])
{
    (void)h;
    return NULL;
}

void rdp_ghash_key_free(rdp_ghash_key_t *k)
{
    (void)k;
}

void rdp_ghash_update(const rdp_ghash_key_t *k, uint8_t x[16], const void *p,
                      size_t len)
{
    (void)k;
    (void)x;
    (void)p;
    (void)len;
}

#endif
