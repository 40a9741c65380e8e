/* test_ucx_gmac.c - ucx_gmac.c's AES-256-GMAC against libcrypto's AES-GCM */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ucx/ucx_int.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

/* EVP's AES-256-GCM tag of no plaintext, with @a iv_len bytes of IV and
 * the AAD in @a n pieces */
static void evp_tag(const uint8_t key[32], const uint8_t *iv, size_t iv_len,
                    const rdp_iov_t *aad, size_t n, uint8_t tag[16])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t none[16];
    int outl = 0;

    assert_non_null(ctx);
    assert_int_equal(
        EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL), 1);
    assert_int_equal(
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL), 1);
    assert_int_equal(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv), 1);
    for (size_t i = 0; i < n; i++) {
        if (aad[i].len > 0) {
            assert_int_equal(EVP_EncryptUpdate(ctx, NULL, &outl, aad[i].base,
                                               (int)aad[i].len),
                             1);
        }
    }
    assert_int_equal(EVP_EncryptFinal_ex(ctx, none, &outl), 1);
    assert_int_equal(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag),
                     1);
    EVP_CIPHER_CTX_free(ctx);
}

static int setup(void **state)
{
    (void)state;
    if (!rdp_ucx_fgmac_supported()) {
        print_message("no AES-NI/PCLMULQDQ here: the fast GMAC is unused\n");
    }
    return 0;
}

/* A fixed key and IV, every AAD length from 0 to RDP_UCX_FGMAC_MAX in one
 * piece: every partial last block and 1-8 blocks per reduction, several
 * times over. */
static void every_length_matches_evp(void **state)
{
    _Alignas(16) rdp_ucx_fgmac_t f;
    uint8_t key[32], iv[RDP_UCX_IV_LEN], want[16], got[16];
    uint8_t *buf = malloc(RDP_UCX_FGMAC_MAX);

    (void)state;
    if (!rdp_ucx_fgmac_supported()) {
        skip();
    }
    assert_non_null(buf);
    for (size_t i = 0; i < sizeof(key); i++) {
        key[i] = (uint8_t)(i * 13 + 5);
    }
    for (size_t i = 0; i < sizeof(iv); i++) {
        iv[i] = (uint8_t)(0xf0 - i * 3);
    }
    for (size_t i = 0; i < RDP_UCX_FGMAC_MAX; i++) {
        buf[i] = (uint8_t)(i * 31 + 7);
    }
    assert_int_equal(rdp_ucx_fgmac_init(&f, key), 0);
    for (size_t len = 0; len <= RDP_UCX_FGMAC_MAX; len++) {
        rdp_iov_t aad = {buf, len};

        evp_tag(key, iv, sizeof(iv), &aad, 1, want);
        rdp_ucx_fgmac_tag(&f, iv, &aad, 1, got);
        assert_memory_equal(got, want, 16);
    }
    free(buf);
}

/* Random keys, IVs and AAD split into random pieces (empty ones
 * included); and a changed bit anywhere changes the tag. */
static void random_inputs_match_evp(void **state)
{
    _Alignas(16) rdp_ucx_fgmac_t f;
    uint8_t key[32], iv[RDP_UCX_IV_LEN], want[16], got[16];
    uint8_t buf[RDP_UCX_FGMAC_MAX];

    (void)state;
    if (!rdp_ucx_fgmac_supported()) {
        skip();
    }
    srand(11);
    for (int round = 0; round < 300; round++) {
        rdp_iov_t aad[6];
        size_t len = (size_t)rand() % (RDP_UCX_FGMAC_MAX + 1);
        size_t n   = 1 + (size_t)rand() % 6;
        size_t at  = 0;

        assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
        assert_int_equal(RAND_bytes(iv, sizeof(iv)), 1);
        assert_int_equal(RAND_bytes(buf, sizeof(buf)), 1);
        for (size_t i = 0; i < n; i++) {
            size_t piece =
                (i + 1 == n) ? len - at : (size_t)rand() % (len - at + 1);

            aad[i].base = buf + at;
            aad[i].len  = piece;
            at += piece;
        }
        assert_int_equal(rdp_ucx_fgmac_init(&f, key), 0);
        evp_tag(key, iv, sizeof(iv), aad, n, want);
        rdp_ucx_fgmac_tag(&f, iv, aad, n, got);
        assert_memory_equal(got, want, 16);
        if (len > 0) {
            size_t bit = (size_t)rand() % (len * 8);

            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            rdp_ucx_fgmac_tag(&f, iv, aad, n, want);
            assert_memory_not_equal(got, want, 16);
        }
        iv[round % RDP_UCX_IV_LEN] ^= 0x80;
        rdp_ucx_fgmac_tag(&f, iv, aad, n, want);
        assert_memory_not_equal(got, want, 16);
    }
}

/* The transport's authenticator takes the fast code where the CPU has it,
 * unless RDPMIX_UCX_FAST_GMAC=0; both give the same tags for headers,
 * messages and seals, so either side of a link may use either. */
static void authenticator_uses_it_with_the_same_tags(void **state)
{
    uint8_t key[RDP_UCX_KEY_LEN];
    uint8_t pre[RDP_UCX_FIXED_LEN + 60], pay[300];
    uint8_t m1[RDP_UCX_MAC_LEN], m2[RDP_UCX_MAC_LEN];
    rdp_ucx_auth_t fast, slow;
    rdp_tl_seal_t seal;
    rdp_tl_rx_seal_t run = {.off = 100, .len = 50};
    uint64_t counter     = 5;

    (void)state;
    for (size_t i = 0; i < sizeof(key); i++) {
        key[i] = (uint8_t)(i + 9);
    }
    memset(pre, 0x5a, sizeof(pre));
    for (size_t i = 0; i < sizeof(pay); i++) {
        pay[i] = (uint8_t)i;
    }
    unsetenv("RDPMIX_UCX_FAST_GMAC");
    assert_int_equal(rdp_ucx_auth_init(&fast, key, sizeof(key)), PMIX_SUCCESS);
    setenv("RDPMIX_UCX_FAST_GMAC", "0", 1);
    assert_int_equal(rdp_ucx_auth_init(&slow, key, sizeof(key)), PMIX_SUCCESS);
    unsetenv("RDPMIX_UCX_FAST_GMAC");
    assert_int_equal(fast.fast, rdp_ucx_fgmac_supported());
    assert_int_equal(slow.fast, 0);

    assert_int_equal(rdp_ucx_auth_hdr(&fast, pre, sizeof(pre), m1),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_ucx_auth_hdr(&slow, pre, sizeof(pre), m2),
                     PMIX_SUCCESS);
    assert_memory_equal(m1, m2, RDP_UCX_MAC_LEN);
    for (size_t len = 0; len <= sizeof(pay); len += 37) {
        rdp_iov_t iov[2] = {{pay, len / 2}, {pay + len / 2, len - len / 2}};

        assert_int_equal(rdp_ucx_auth_msg(&fast, pre, sizeof(pre), iov, 2, m1),
                         PMIX_SUCCESS);
        assert_int_equal(rdp_ucx_auth_msg(&slow, pre, sizeof(pre), iov, 2, m2),
                         PMIX_SUCCESS);
        assert_memory_equal(m1, m2, RDP_UCX_MAC_LEN);
        assert_int_equal(rdp_ucx_auth_msg_unsealed(&fast, pre, sizeof(pre), pay,
                                                   len, NULL, 0, m2),
                         PMIX_SUCCESS);
        assert_memory_equal(m1, m2, RDP_UCX_MAC_LEN);
    }
    /* a sealed run left out of the message MAC, both ways */
    assert_int_equal(rdp_ucx_auth_msg_unsealed(&fast, pre, sizeof(pre), pay,
                                               sizeof(pay), &run, 1, m1),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_ucx_auth_msg_unsealed(&slow, pre, sizeof(pre), pay,
                                               sizeof(pay), &run, 1, m2),
                     PMIX_SUCCESS);
    assert_memory_equal(m1, m2, RDP_UCX_MAC_LEN);
    /* a seal made by one verifies by the other, and fails once changed */
    assert_int_equal(rdp_ucx_auth_seal(&fast, 3, &counter, pay, 200, &seal),
                     PMIX_SUCCESS);
    assert_true(rdp_ucx_auth_seal_ok(&slow, &seal, pay, 200));
    assert_true(rdp_ucx_auth_seal_ok(&fast, &seal, pay, 200));
    assert_false(rdp_ucx_auth_seal_ok(&fast, &seal, pay, 199));
    assert_int_equal(rdp_ucx_auth_seal(&slow, 3, &counter, pay, 200, &seal),
                     PMIX_SUCCESS);
    assert_true(rdp_ucx_auth_seal_ok(&fast, &seal, pay, 200));
    seal.bytes[20] ^= 1;
    assert_false(rdp_ucx_auth_seal_ok(&fast, &seal, pay, 200));
    rdp_ucx_auth_cleanup(&fast);
    rdp_ucx_auth_cleanup(&slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_length_matches_evp),
        cmocka_unit_test(random_inputs_match_evp),
        cmocka_unit_test(authenticator_uses_it_with_the_same_tags),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
