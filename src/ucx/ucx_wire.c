/* ucx_wire.c - message framing and authenticators of the UCX transport */
#include "config.h"

#include "ucx/ucx_int.h"

#include "core/util/log.h"

#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "src/ucx needs OpenSSL >= 3.0 (EVP_MAC)"
#endif

static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    put_le16(p, (uint16_t)v);
    put_le16(p + 2, (uint16_t)(v >> 16));
}

static void put_le64(uint8_t *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)get_le16(p) | ((uint32_t)get_le16(p + 2) << 16);
}

static uint64_t get_le64(const uint8_t *p)
{
    return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

void rdp_ucx_wire_encode(const rdp_ucx_wire_t *w, uint8_t *out)
{
    put_le32(out, RDP_UCX_MAGIC);
    out[4] = RDP_UCX_VERSION;
    out[5] = 0;
    put_le16(out + 6, w->ehdr_len);
    put_le32(out + 8, w->src);
    put_le32(out + 12, w->dst);
    put_le64(out + 16, w->len);
}

pmix_status_t rdp_ucx_wire_decode(const void *am_hdr, size_t am_len,
                                  rdp_ucx_wire_t *w_p, const char **why_p)
{
    const uint8_t *p = am_hdr;
    rdp_ucx_wire_t w;

    if ((p == NULL) || (am_len < RDP_UCX_OVERHEAD)) {
        *why_p = "header too short";
        return PMIX_ERR_BAD_PARAM;
    }
    if (get_le32(p) != RDP_UCX_MAGIC) {
        *why_p = "bad magic";
        return PMIX_ERR_BAD_PARAM;
    }
    if ((p[4] != RDP_UCX_VERSION) || (p[5] != 0)) {
        *why_p = "unknown version or flags";
        return PMIX_ERR_BAD_PARAM;
    }
    w.ehdr_len = get_le16(p + 6);
    w.src      = get_le32(p + 8);
    w.dst      = get_le32(p + 12);
    w.len      = get_le64(p + 16);
    if (am_len != (size_t)RDP_UCX_OVERHEAD + w.ehdr_len) {
        *why_p = "header length mismatch";
        return PMIX_ERR_BAD_PARAM;
    }
    *w_p = w;
    return PMIX_SUCCESS;
}

/* ---- authenticator ---- */

pmix_status_t rdp_ucx_auth_init(rdp_ucx_auth_t *auth, const uint8_t *key,
                                size_t key_len)
{
    char digest[] = "SHA256";
    OSSL_PARAM params[2];
    unsigned char fp[32];
    unsigned int fp_len = 0;
    EVP_MAC *mac;
    EVP_MAC_CTX *ctx;

    if ((key == NULL) || (key_len != RDP_UCX_KEY_LEN)) {
        rdp_log_error(UCX, "the session key must be %d bytes", RDP_UCX_KEY_LEN);
        return PMIX_ERR_BAD_PARAM;
    }
    mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) {
        rdp_log_error(UCX, "libcrypto has no HMAC");
        return PMIX_ERR_INIT;
    }
    ctx = EVP_MAC_CTX_new(mac);
    if (ctx == NULL) {
        goto err_free_mac;
    }
    params[0] =
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(ctx, key, key_len, params) != 1) {
        rdp_log_error(UCX, "cannot key HMAC-SHA256");
        goto err_free_ctx;
    }
    /* a fingerprint that names the key in logs without revealing it */
    if (EVP_Digest(key, key_len, fp, &fp_len, EVP_sha256(), NULL) != 1) {
        goto err_free_ctx;
    }
    snprintf(auth->fp, sizeof(auth->fp), "%02x%02x%02x%02x", fp[0], fp[1],
             fp[2], fp[3]);
    auth->mac = mac;
    auth->ctx = ctx;
    return PMIX_SUCCESS;

err_free_ctx:
    EVP_MAC_CTX_free(ctx);
err_free_mac:
    EVP_MAC_free(mac);
    rdp_log_error(UCX, "cannot set up HMAC-SHA256");
    return PMIX_ERR_INIT;
}

void rdp_ucx_auth_cleanup(rdp_ucx_auth_t *auth)
{
    if (auth == NULL) {
        return;
    }
    /* libcrypto cleanses the key material it holds when freeing */
    EVP_MAC_CTX_free(auth->ctx);
    EVP_MAC_free(auth->mac);
    auth->ctx = NULL;
    auth->mac = NULL;
}

/* Restart the keyed context: OpenSSL 3's HMAC reuses the key it was given
 * when init gets a NULL key, so no allocation per message. */
static pmix_status_t mac_begin(rdp_ucx_auth_t *auth, char label,
                               const void *pre, size_t pre_len)
{
    EVP_MAC_CTX *ctx = auth->ctx;
    unsigned char l  = (unsigned char)label;

    if ((EVP_MAC_init(ctx, NULL, 0, NULL) != 1)
        || (EVP_MAC_update(ctx, &l, 1) != 1)
        || (EVP_MAC_update(ctx, pre, pre_len) != 1)) {
        rdp_log_error(UCX, "HMAC-SHA256 failed");
        return PMIX_ERROR;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t mac_end(rdp_ucx_auth_t *auth, uint8_t mac[RDP_UCX_MAC_LEN])
{
    unsigned char full[EVP_MAX_MD_SIZE];
    size_t full_len = 0;

    if ((EVP_MAC_final(auth->ctx, full, &full_len, sizeof(full)) != 1)
        || (full_len < RDP_UCX_MAC_LEN)) {
        rdp_log_error(UCX, "HMAC-SHA256 failed");
        return PMIX_ERROR;
    }
    memcpy(mac, full, RDP_UCX_MAC_LEN);
    OPENSSL_cleanse(full, sizeof(full));
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ucx_auth_hdr(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, uint8_t mac[RDP_UCX_MAC_LEN])
{
    pmix_status_t status = mac_begin(auth, 'H', pre, pre_len);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return mac_end(auth, mac);
}

pmix_status_t rdp_ucx_auth_msg(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, const rdp_iov_t *iov,
                               size_t iovcnt, uint8_t mac[RDP_UCX_MAC_LEN])
{
    pmix_status_t status = mac_begin(auth, 'D', pre, pre_len);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (size_t i = 0; i < iovcnt; i++) {
        if ((iov[i].len > 0)
            && (EVP_MAC_update(auth->ctx, iov[i].base, iov[i].len) != 1)) {
            rdp_log_error(UCX, "HMAC-SHA256 failed");
            return PMIX_ERROR;
        }
    }
    return mac_end(auth, mac);
}

int rdp_ucx_auth_equal(const uint8_t *a, const uint8_t *b)
{
    return CRYPTO_memcmp(a, b, RDP_UCX_MAC_LEN) == 0;
}
