/* ucx_gf128.h - GHASH's field arithmetic shared by ucx_gmac.c (short
 * inputs) and ucx_ghash.c (many blocks at once); x86-64 with GCC or clang
 * only, included inside their guards.
 *
 * Representation (NIST SP 800-38D: bit 7 of byte 0 is the coefficient of
 * x^0).  A block byte-reversed and read as a 128-bit integer holds the
 * coefficient of x^i at bit 127 - i.  The carry-less product of two such
 * integers holds x^k at bit 254 - k, one place short of the 256-bit form
 * (x^k at bit 255 - k).  So every multiplier is stored divided by x (H' =
 * H x^-1 mod P: the integer shifted left by one, and x^-1 = x^127 + x^6 +
 * x + 1, 0xC2000000000000000000000000000001, added when x^0 falls off),
 * and a block's product with H' is the 256-bit form of the block times H.
 *
 * Reduction.  In the integers' own order (bit b: z^b) the 256-bit value is
 * R_hi z^128 + R_lo, and the result is R_hi + (R_lo + q P*) / z^128 with
 * P* = z^128 + z^127 + z^126 + z^121 + 1 (P reversed) and q the one
 * polynomial of degree < 128 that makes the sum divisible by z^128.  Since
 * P* = 1 mod z^64, two 64-bit steps do it: T -> (T >> 64) ^ (T_0 << 64) ^
 * T_0 (z^63 + z^62 + z^57), the last term one carry-less multiply by
 * 0xC200000000000000.  Sums of unreduced products reduce once.
 */
#ifndef RDP_UCX_GF128_H
#define RDP_UCX_GF128_H

#include <immintrin.h>

/* the callers' targets include these, so the functions inline */
#define GF_TARGET __attribute__((target("pclmul,ssse3")))

GF_TARGET static inline __m128i gf_bswap(__m128i v)
{
    return _mm_shuffle_epi8(
        v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* The carry-less product a * b, added into three parts: the low and the
 * high 128 bits and the middle 128 bits (which straddle them: gf_fold) */
GF_TARGET static inline void gf_clmul_add(__m128i a, __m128i b, __m128i *lo,
                                          __m128i *hi, __m128i *mid)
{
    *lo  = _mm_xor_si128(*lo, _mm_clmulepi64_si128(a, b, 0x00));
    *hi  = _mm_xor_si128(*hi, _mm_clmulepi64_si128(a, b, 0x11));
    *mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x01));
    *mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x10));
}

/* Put the middle part into the low and high 128 bits (once per sum) */
GF_TARGET static inline void gf_fold(__m128i *lo, __m128i *hi, __m128i mid)
{
    *lo = _mm_xor_si128(*lo, _mm_slli_si128(mid, 8));
    *hi = _mm_xor_si128(*hi, _mm_srli_si128(mid, 8));
}

/* hi z^128 + lo -> the reduced 128-bit value (see the head comment) */
GF_TARGET static inline __m128i gf_reduce(__m128i lo, __m128i hi)
{
    const __m128i c = _mm_set_epi64x(0, (long long)0xC200000000000000ULL);
    __m128i t       = _mm_clmulepi64_si128(lo, c, 0x00);

    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    t  = _mm_clmulepi64_si128(lo, c, 0x00);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    return _mm_xor_si128(hi, lo);
}

/* a H for a block @a a and a multiplier @a hp = H' (both reversed) */
GF_TARGET static inline __m128i gf_mul(__m128i a, __m128i hp)
{
    __m128i lo = _mm_setzero_si128(), hi = lo, mid = lo;

    gf_clmul_add(a, hp, &lo, &hi, &mid);
    gf_fold(&lo, &hi, mid);
    return gf_reduce(lo, hi);
}

/* v x^-1 mod P (reversed form: shift left by one, fold x^-1 back in) */
GF_TARGET static inline __m128i gf_div_x(__m128i v)
{
    __m128i carry = _mm_srli_epi64(v, 63);
    __m128i out = _mm_or_si128(_mm_slli_epi64(v, 1), _mm_slli_si128(carry, 8));
    /* all ones when bit 127 (x^0) was set, without a branch on the key */
    __m128i top = _mm_shuffle_epi32(_mm_srai_epi32(v, 31), 0xFF);

    return _mm_xor_si128(
        out, _mm_and_si128(
                 top, _mm_set_epi64x((long long)0xC200000000000000ULL, 1)));
}

#endif
