/* test_pnet_sha256.c - SHA-256 against FIPS 180-2's examples, HMAC-SHA256
 * against RFC 4231's test cases */
#include "config.h"
#include "pnet/pnet_sha256.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < RDP_SHA256_LEN; i++) {
        sprintf(out + 2 * i, "%02x", d[i]);
    }
}

static void check_sha(const char *msg, const char *want)
{
    uint8_t d[RDP_SHA256_LEN];
    char got[2 * RDP_SHA256_LEN + 1];

    rdp_sha256(msg, strlen(msg), d);
    hex(d, got);
    assert_string_equal(got, want);
}

static void sha256_short_messages(void **state)
{
    (void)state;
    check_sha("abc", "ba7816bf8f01cfea414140de5dae2223"
                     "b00361a396177a9cb410ff61f20015ad");
    check_sha("", "e3b0c44298fc1c149afbf4c8996fb924"
                  "27ae41e4649b934ca495991b7852b855");
    /* 448 bits: the padding needs a block of its own */
    check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039"
              "a33ce45964ff2167f6ecedd419db06c1");
}

/* a million 'a', fed in pieces that straddle the blocks */
static void sha256_million_a(void **state)
{
    char piece[997];
    uint8_t d[RDP_SHA256_LEN];
    char got[2 * RDP_SHA256_LEN + 1];
    rdp_sha256_t s;
    size_t left = 1000000;

    (void)state;
    memset(piece, 'a', sizeof(piece));
    rdp_sha256_init(&s);
    while (left > 0) {
        size_t n = left < sizeof(piece) ? left : sizeof(piece);

        rdp_sha256_update(&s, piece, n);
        left -= n;
    }
    rdp_sha256_final(&s, d);
    hex(d, got);
    assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67"
                             "f1809a48a497200e046d39ccc7112cd0");
}

static void check_hmac(const void *key, size_t keylen, const char *msg,
                       const char *want)
{
    uint8_t d[RDP_SHA256_LEN];
    char got[2 * RDP_SHA256_LEN + 1];

    rdp_hmac_sha256(key, keylen, msg, strlen(msg), d);
    hex(d, got);
    assert_string_equal(got, want);
}

static void hmac_rfc4231(void **state)
{
    uint8_t k[131];

    (void)state;
    memset(k, 0x0b, 20); /* case 1 */
    check_hmac(k, 20, "Hi There",
               "b0344c61d8db38535ca8afceaf0bf12b"
               "881dc200c9833da726e9376c2e32cff7");
    check_hmac("Jefe", 4, "what do ya want for nothing?", /* case 2 */
               "5bdcc146bf60754e6a042426089575c7"
               "5a003f089d2739839dec58b964ec3843");
    memset(k, 0xaa, sizeof(k)); /* case 6: a key longer than a block */
    check_hmac(k, sizeof(k),
               "Test Using Larger Than Block-Size Key - Hash Key First",
               "60e431591ee0b67f0d8a26aacbf5b77f"
               "8e0bc6213728c5140546040f0ee37f54");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_short_messages),
        cmocka_unit_test(sha256_million_a),
        cmocka_unit_test(hmac_rfc4231),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
