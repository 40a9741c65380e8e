/* ucx_gmac.c - AES-256-GMAC of short inputs with AES-NI and PCLMULQDQ */
#include "config.h"

#include "ucx/ucx_int.h"

#include <string.h>

/*
 * The transport's MACs of small messages (headers, control, open
 * payloads) are AES-256-GCM tags with a 20-byte IV and no plaintext:
 * J0 = GHASH(IV | 0^96 | [0]64 | [160]64), tag = AES(J0) ^ GHASH(AAD |
 * pad | [8 len(AAD)]64 | [0]64).  libcrypto's CRYPTO_gcm128 computes the
 * same through a per-call set-up, a GHASH of the IV block by block and an
 * EVP call per AES block (~1000 instructions for a 100-byte prefix); here
 * the round keys and H^1..H^8 are computed once per key, and the blocks
 * of the IV and of the AAD are multiplied by the powers of H they need
 * and reduced once per 8 blocks (Horner's rule 8 blocks at a time).
 *
 * The field arithmetic (byte-reversed elements, multipliers stored as
 * H x^-1, two carry-less multiplies per reduction) is ucx_gf128.h's,
 * shared with the wide GHASH of ucx_ghash.c.
 */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include "ucx/ucx_gf128.h"

#define FAST_TARGET __attribute__((target("avx,aes,pclmul")))

int rdp_ucx_fgmac_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul")
           && __builtin_cpu_supports("avx");
}

/* One step of the AES-256 key schedule: @a prev is the round key two
 * back, @a t the SubWord (RotWord and Rcon for even steps) of the last
 * word of the round key before, broadcast to all four words. */
FAST_TARGET static inline __m128i expand_step(__m128i prev, __m128i t)
{
    prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
    prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
    prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
    return _mm_xor_si128(prev, t);
}

#define EVEN_KEY(i, rcon) \
    rk[i] = expand_step(  \
        rk[(i)-2],        \
        _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[(i)-1], rcon), 0xff))
#define ODD_KEY(i)       \
    rk[i] = expand_step( \
        rk[(i)-2],       \
        _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[(i)-1], 0), 0xaa))

FAST_TARGET static void aes256_expand(const uint8_t key[32], __m128i rk[15])
{
    rk[0] = _mm_loadu_si128((const __m128i *)key);
    rk[1] = _mm_loadu_si128((const __m128i *)(key + 16));
    EVEN_KEY(2, 0x01);
    ODD_KEY(3);
    EVEN_KEY(4, 0x02);
    ODD_KEY(5);
    EVEN_KEY(6, 0x04);
    ODD_KEY(7);
    EVEN_KEY(8, 0x08);
    ODD_KEY(9);
    EVEN_KEY(10, 0x10);
    ODD_KEY(11);
    EVEN_KEY(12, 0x20);
    ODD_KEY(13);
    EVEN_KEY(14, 0x40);
}

FAST_TARGET static inline __m128i aes256_block(const __m128i rk[15], __m128i x)
{
    x = _mm_xor_si128(x, rk[0]);
#pragma GCC unroll 13
    for (int r = 1; r < 14; r++) {
        x = _mm_aesenc_si128(x, rk[r]);
    }
    return _mm_aesenclast_si128(x, rk[14]);
}

FAST_TARGET int rdp_ucx_fgmac_init(rdp_ucx_fgmac_t *f, const uint8_t key[32])
{
    __m128i rk[15], h, h1, p;

    aes256_expand(key, rk);
    h  = gf_bswap(aes256_block(rk, _mm_setzero_si128()));
    h1 = gf_div_x(h);
    for (int i = 0; i < 15; i++) {
        _mm_store_si128((__m128i *)f->rk[i], rk[i]);
    }
    /* hpow[i] = (H^(i+1))', the form products are taken with */
    p = h;
    for (int i = 0; i < RDP_UCX_FGMAC_POWERS; i++) {
        if (i > 0) {
            p = gf_mul(p, h1);
        }
        _mm_store_si128((__m128i *)f->hpow[i], gf_div_x(p));
    }
    {
        /* [0]64 | [8 RDP_UCX_IV_LEN]64, the IV's length block, times H */
        _Alignas(16) uint8_t l[16] = {0};

        l[15] = (uint8_t)(RDP_UCX_IV_LEN * 8);
        l[14] = (uint8_t)((RDP_UCX_IV_LEN * 8) >> 8);
        _mm_store_si128(
            (__m128i *)f->iv_len_h,
            gf_mul(gf_bswap(_mm_load_si128((const __m128i *)l)), h1));
    }
    /* no copies of the key schedule left in this frame's spill slots
     * that matter more than the ones in f: the caller wipes f */
    return 0;
}

/* Copy @a n < 16 bytes in at most four moves */
static inline void copy_short(uint8_t *d, const uint8_t *src, size_t n)
{
    if (n & 8) {
        memcpy(d, src, 8);
        d += 8;
        src += 8;
    }
    if (n & 4) {
        memcpy(d, src, 4);
        d += 4;
        src += 4;
    }
    if (n & 2) {
        memcpy(d, src, 2);
        d += 2;
        src += 2;
    }
    if (n & 1) {
        *d = *src;
    }
}

/* Add the @a n blocks at @a p, times H^k, H^(k-1), ... (@a *h points at
 * H^k and moves on), into (*lo, *hi); @a *carry is added to the first
 * block and cleared. */
FAST_TARGET static inline void mul_blocks(const uint8_t *p, size_t n,
                                          const __m128i **h, __m128i *carry,
                                          __m128i *lo, __m128i *hi,
                                          __m128i *mid)
{
    for (size_t i = 0; i < n; i++) {
        __m128i b = gf_bswap(_mm_loadu_si128((const __m128i *)(p + 16 * i)));

        gf_clmul_add(_mm_xor_si128(b, *carry), _mm_load_si128(*h), lo, hi, mid);
        *carry = _mm_setzero_si128();
        (*h)--;
    }
}

/* GHASH state @a x over the @a np blocks at @a p and then the @a nq
 * (<= 2) at @a q: Horner's rule RDP_UCX_FGMAC_POWERS blocks at a time,
 * (((x ^ b0) H ^ b1) H ... ^ b(n-1)) H = (x ^ b0) H^n ^ b1 H^(n-1) ^ ...
 * ^ b(n-1) H, with one reduction per group. */
FAST_TARGET static __m128i ghash(const rdp_ucx_fgmac_t *f, __m128i x,
                                 const uint8_t *p, size_t np, const uint8_t *q,
                                 size_t nq)
{
    while (np + nq > 0) {
        size_t tp = np, tq = nq; /* blocks of p and of q in this group */
        __m128i lo = _mm_setzero_si128(), hi = lo, mid = lo;
        const __m128i *h;

        if (np + nq > RDP_UCX_FGMAC_POWERS) {
            tp = (np < RDP_UCX_FGMAC_POWERS) ? np : RDP_UCX_FGMAC_POWERS;
            tq = 0;
        }
        h = (const __m128i *)f->hpow[tp + tq - 1];
        mul_blocks(p, tp, &h, &x, &lo, &hi, &mid);
        mul_blocks(q, tq, &h, &x, &lo, &hi, &mid);
        gf_fold(&lo, &hi, mid);
        x = gf_reduce(lo, hi);
        p += 16 * tp;
        np -= tp;
        q += 16 * tq;
        nq -= tq;
    }
    return x;
}

FAST_TARGET void rdp_ucx_fgmac_tag(const rdp_ucx_fgmac_t *f,
                                   const uint8_t iv[RDP_UCX_IV_LEN],
                                   const rdp_iov_t *aad, size_t n,
                                   uint8_t tag[RDP_UCX_MAC_LEN])
{
    _Alignas(16) uint8_t buf[RDP_UCX_FGMAC_MAX]; /* pieces joined */
    /* the last partial block zero-padded, then [8 len]64 | [0]64 */
    _Alignas(16) uint8_t tail[32] = {0};
    const uint8_t *p              = buf;
    size_t len                    = 0, nfull, rem;
    uint64_t bits;
    uint32_t iv_end;
    __m128i lo = _mm_setzero_si128(), hi = lo, mid = lo, j0, s;

    while ((n > 1) && (aad[n - 1].len == 0)) {
        n--; /* empty pieces at the end (an open payload's) */
    }
    if (n == 1) {
        p   = aad[0].base; /* one piece: no copy */
        len = aad[0].len;
    } else {
        for (size_t i = 0; i < n; i++) {
            /* the caller keeps the sum within RDP_UCX_FGMAC_MAX */
            if (aad[i].len > 0) {
                memcpy(buf + len, aad[i].base, aad[i].len);
                len += aad[i].len;
            }
        }
    }
    nfull = len / 16;
    rem   = len % 16;
    if (rem > 0) {
        copy_short(tail, p + 16 * nfull, rem);
    }
    bits = __builtin_bswap64((uint64_t)len * 8);
    memcpy(tail + ((rem > 0) ? 16 : 0), &bits, sizeof(bits));

    /* J0 = GHASH(IV[0:16] | IV[16:20] 0^96 | [0]64 [160]64)
     *    = IV[0:16] H^3 ^ (IV[16:20] 0^96) H^2 ^ (the length block) H */
    memcpy(&iv_end, iv + 16, sizeof(iv_end));
    gf_clmul_add(gf_bswap(_mm_loadu_si128((const __m128i *)iv)),
              _mm_load_si128((const __m128i *)f->hpow[2]), &lo, &hi, &mid);
    gf_clmul_add(gf_bswap(_mm_cvtsi32_si128((int)iv_end)),
              _mm_load_si128((const __m128i *)f->hpow[1]), &lo, &hi, &mid);
    gf_fold(&lo, &hi, mid);
    j0 = _mm_xor_si128(gf_reduce(lo, hi),
                       _mm_load_si128((const __m128i *)f->iv_len_h));
    j0 = aes256_block((const __m128i *)f->rk, gf_bswap(j0));

    s = ghash(f, _mm_setzero_si128(), p, nfull, tail, (rem > 0) ? 2 : 1);
    _mm_storeu_si128((__m128i *)tag, _mm_xor_si128(gf_bswap(s), j0));
}

#else /* not x86-64 with GCC or clang: always libcrypto's code */

int rdp_ucx_fgmac_supported(void)
{
    return 0;
}

int rdp_ucx_fgmac_init(rdp_ucx_fgmac_t *f, const uint8_t key[32])
{
    (void)f;
    (void)key;
    return -1;
}

void rdp_ucx_fgmac_tag(const rdp_ucx_fgmac_t *f,
                       const uint8_t iv[RDP_UCX_IV_LEN], const rdp_iov_t *aad,
                       size_t n, uint8_t tag[RDP_UCX_MAC_LEN])
{
    (void)f;
    (void)iv;
    (void)aad;
    (void)n;
    memset(tag, 0, RDP_UCX_MAC_LEN);
}

#endif
