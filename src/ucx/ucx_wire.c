/* ucx_wire.c - message framing and authenticators of the UCX transport */
#include "config.h"

#include "ucx/ucx_ghash.h"
#include "ucx/ucx_int.h"

#include "core/util/config_table.h"

#include "core/util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/modes.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "src/ucx needs OpenSSL >= 3.0 (EVP_KDF)"
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
    out[5] = (uint8_t)(((w->seals_len > 0) ? RDP_UCX_FLAG_SEALS : 0)
                       | (w->flags & RDP_UCX_FLAG_OPEN));
    put_le16(out + 6, w->ehdr_len);
    put_le32(out + 8, w->src);
    put_le32(out + 12, w->dst);
    put_le64(out + 16, w->len);
    put_le32(out + 24, w->salt);
    put_le64(out + 28, w->seq);
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
    if ((p[4] != RDP_UCX_VERSION)
        || ((p[5] & ~(RDP_UCX_FLAG_SEALS | RDP_UCX_FLAG_OPEN)) != 0)
        || (p[5] == (RDP_UCX_FLAG_SEALS | RDP_UCX_FLAG_OPEN))) {
        *why_p = "unknown version or flags";
        return PMIX_ERR_BAD_PARAM;
    }
    w.flags     = p[5];
    w.ehdr_len  = get_le16(p + 6);
    w.src       = get_le32(p + 8);
    w.dst       = get_le32(p + 12);
    w.len       = get_le64(p + 16);
    w.salt      = get_le32(p + 24);
    w.seq       = get_le64(p + 28);
    w.seals_len = 0;
    if (w.flags & RDP_UCX_FLAG_SEALS) {
        size_t at = RDP_UCX_FIXED_LEN + (size_t)w.ehdr_len;
        uint32_t count;

        if (am_len < (size_t)RDP_UCX_OVERHEAD + w.ehdr_len + 4) {
            *why_p = "header too short for its seal table";
            return PMIX_ERR_BAD_PARAM;
        }
        count = get_le32(p + at);
        if ((count == 0) || (count > RDP_UCX_MAX_SEALS)) {
            *why_p = "bad seal count";
            return PMIX_ERR_BAD_PARAM;
        }
        w.seals_len = (uint32_t)rdp_ucx_seals_len(count);
    }
    if (am_len != (size_t)RDP_UCX_OVERHEAD + w.ehdr_len + w.seals_len) {
        *why_p = "header length mismatch";
        return PMIX_ERR_BAD_PARAM;
    }
    *w_p = w;
    return PMIX_SUCCESS;
}

void rdp_ucx_bye_encode(uint8_t kind, uint32_t src, uint32_t dst, uint8_t *out)
{
    memset(out, 0, RDP_UCX_BYE_LEN);
    put_le32(out, RDP_UCX_BYE_MAGIC);
    out[4] = kind;
    put_le32(out + 8, src);
    put_le32(out + 12, dst);
}

pmix_status_t rdp_ucx_bye_decode(const void *hdr, size_t len, uint8_t *kind_p,
                                 uint32_t *src_p, uint32_t *dst_p)
{
    const uint8_t *p = hdr;

    if ((p == NULL) || (len != RDP_UCX_BYE_LEN)
        || (get_le32(p) != RDP_UCX_BYE_MAGIC)
        || ((p[4] != RDP_UCX_BYE) && (p[4] != RDP_UCX_BYE_ACK))) {
        return PMIX_ERR_BAD_PARAM;
    }
    *kind_p = p[4];
    *src_p  = get_le32(p + 8);
    *dst_p  = get_le32(p + 12);
    return PMIX_SUCCESS;
}

size_t rdp_ucx_wire_pre_len(const rdp_ucx_wire_t *w)
{
    return RDP_UCX_FIXED_LEN + (size_t)w->ehdr_len + w->seals_len;
}

/* ---- seal tables ---- */

size_t rdp_ucx_seals_len(size_t n)
{
    return 4 + n * RDP_UCX_SEAL_ENTRY;
}

void rdp_ucx_seals_put(uint8_t *table, size_t n, size_t i, uint64_t off,
                       uint64_t len, const rdp_tl_seal_t *seal)
{
    uint8_t *e = table + 4 + i * RDP_UCX_SEAL_ENTRY;

    if (i == 0) {
        put_le32(table, (uint32_t)n);
    }
    put_le64(e, off);
    put_le64(e + 8, len);
    memcpy(e + 16, seal->bytes, RDP_TL_SEAL_LEN);
}

pmix_status_t rdp_ucx_seals_decode(const uint8_t *table, size_t table_len,
                                   uint64_t payload_len, rdp_tl_rx_seal_t *out,
                                   size_t *n_p, const char **why_p)
{
    uint64_t end = 0; /* end of the previous run */
    uint32_t n;

    if ((table_len < 4) || ((n = get_le32(table)) == 0)
        || (n > RDP_UCX_MAX_SEALS) || (table_len != rdp_ucx_seals_len(n))) {
        *why_p = "bad seal table";
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = table + 4 + (size_t)i * RDP_UCX_SEAL_ENTRY;
        uint64_t off     = get_le64(e);
        uint64_t len     = get_le64(e + 8);

        if ((len == 0) || (off < end) || (off > payload_len)
            || (len > payload_len - off)) {
            *why_p = "sealed run empty, overlapping or outside the payload";
            return PMIX_ERR_BAD_PARAM;
        }
        out[i].off = off;
        out[i].len = len;
        memcpy(out[i].seal.bytes, e + 16, RDP_TL_SEAL_LEN);
        end = off + len;
    }
    *n_p = n;
    return PMIX_SUCCESS;
}

/* ---- endpoint lanes ---- */

/*
 * ucp_ep_print_info writes one line per lane, such as
 *   "#   lane[1]:  2:cma/memory.0 md[2] -> md[2]/cma/sysdev[255] rma_bw#0"
 * listing the lane's uses after the arrow.  The "rma_bw: mds ..." summary
 * line has no '#' after rma_bw, so only lane lines match "rma_bw#".
 */
int rdp_ucx_info_has_rndv_lane(const char *ep_info)
{
    int lanes = 0;

    for (const char *line = ep_info; (line != NULL) && (*line != '\0');) {
        const char *end = strchr(line, '\n');
        size_t len      = (end != NULL) ? (size_t)(end - line) : strlen(line);

        if (memmem(line, len, "lane[", 5) != NULL) {
            lanes++;
            if (memmem(line, len, "rma_bw#", 7) != NULL) {
                return 1;
            }
        }
        line = (end != NULL) ? end + 1 : NULL;
    }
    return (lanes > 0) ? 0 : -1;
}

/* ---- address envelope ---- */

/* The boot id is a UUID in text: its 32 hex digits as 16 bytes. */
static int read_boot_id(uint8_t out[16])
{
    char text[64];
    size_t k = 0;
    FILE *f  = fopen("/proc/sys/kernel/random/boot_id", "re");

    if (f == NULL) {
        return -1;
    }
    if (fgets(text, sizeof(text), f) == NULL) {
        fclose(f);
        return -1;
    }
    fclose(f);
    for (const char *c = text; (*c != '\0') && (k < 32); c++) {
        int v;

        if (*c == '-') {
            continue;
        }
        if ((*c >= '0') && (*c <= '9')) {
            v = *c - '0';
        } else if ((*c >= 'a') && (*c <= 'f')) {
            v = *c - 'a' + 10;
        } else {
            break;
        }
        out[k / 2] = (uint8_t)((k % 2) ? (out[k / 2] | v) : (v << 4));
        k++;
    }
    return (k == 32) ? 0 : -1;
}

pmix_status_t rdp_ucx_envelope_self(rdp_ucx_envelope_t *e)
{
    struct stat st;

    memset(e->machine, 0, sizeof(e->machine));
    e->pidns = 0;
    e->pid   = (uint32_t)getpid();
    if ((read_boot_id(e->machine) != 0)
        || (stat("/proc/self/ns/pid", &st) != 0)) {
        memset(e->machine, 0, sizeof(e->machine));
        return PMIX_ERR_NOT_AVAILABLE;
    }
    e->pidns = ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
    return PMIX_SUCCESS;
}

void rdp_ucx_envelope_encode(const rdp_ucx_envelope_t *e, uint8_t *out)
{
    put_le32(out, RDP_UCX_ENV_MAGIC);
    out[4] = RDP_UCX_ENV_VERSION;
    memset(out + 5, 0, 3);
    memcpy(out + 8, e->machine, 16);
    put_le64(out + 24, e->pidns);
    put_le32(out + 32, e->pid);
    put_le32(out + 36, (uint32_t)e->ucx_len);
    if (e->ucx_len > 0) {
        memcpy(out + RDP_UCX_ENV_HDR, e->ucx, e->ucx_len);
    }
}

pmix_status_t rdp_ucx_envelope_decode(const void *bytes, size_t len,
                                      rdp_ucx_envelope_t *e)
{
    const uint8_t *p = bytes;

    if ((p == NULL) || (len < RDP_UCX_ENV_HDR)
        || (get_le32(p) != RDP_UCX_ENV_MAGIC) || (p[4] != RDP_UCX_ENV_VERSION)
        || (get_le32(p + 36) != len - RDP_UCX_ENV_HDR)
        || (len == RDP_UCX_ENV_HDR)) {
        return PMIX_ERR_BAD_PARAM;
    }
    memcpy(e->machine, p + 8, 16);
    e->pidns   = get_le64(p + 24);
    e->pid     = get_le32(p + 32);
    e->ucx     = p + RDP_UCX_ENV_HDR;
    e->ucx_len = len - RDP_UCX_ENV_HDR;
    return PMIX_SUCCESS;
}

int rdp_ucx_envelope_local(const rdp_ucx_envelope_t *self,
                           const rdp_ucx_envelope_t *peer)
{
    static const uint8_t unknown[16];

    return (memcmp(self->machine, unknown, sizeof(unknown)) != 0)
           && (memcmp(self->machine, peer->machine, sizeof(unknown)) == 0)
           && (self->pidns == peer->pidns) && (peer->pid != 0)
           && (peer->pid != self->pid);
}

/* ---- authenticator ---- */

/* HKDF labels: one derived key per use, so that no key serves two
 * purposes (the session key itself is only ever HKDF's input). */
static const char HDR_LABEL[] = "rdpmix ucx v2 AES-256-GMAC header";
static const char MSG_LABEL[] = "rdpmix ucx v2 AES-256-GMAC message";
static const char SEAL_LABEL[] = "rdpmix ucx v3 AES-256-GMAC seal";

static pmix_status_t derive(const uint8_t *key, size_t key_len,
                            const char *label, uint8_t out[32])
{
    char digest[] = "SHA256";
    OSSL_PARAM params[4];
    EVP_KDF *kdf;
    EVP_KDF_CTX *kctx    = NULL;
    pmix_status_t status = PMIX_ERR_INIT;

    kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (kdf == NULL) {
        goto cleanup;
    }
    kctx = EVP_KDF_CTX_new(kdf);
    if (kctx == NULL) {
        goto cleanup;
    }
    params[0] =
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                                                  (void *)key, key_len);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
                                                  (void *)label, strlen(label));
    params[3] = OSSL_PARAM_construct_end();
    if (EVP_KDF_derive(kctx, out, 32, params) == 1) {
        status = PMIX_SUCCESS;
    }

cleanup:
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    return status;
}

/*
 * One GMAC key.  libcrypto's GCM mode functions (CRYPTO_gcm128_*) over an
 * AES-256 block function: the same GHASH code as EVP's AES-GCM, without
 * the provider round trips that setting an IV and reading a tag cost
 * through EVP in OpenSSL 3 (0.3 us against 0.13 us for a small message;
 * identical tags, checked by tests/unit/test_ucx_tl.c).  Short inputs
 * (at most RDP_UCX_FGMAC_MAX bytes of AAD: headers, control, open and
 * small payloads) go through ucx_gmac.c's AES-NI/PCLMULQDQ code instead
 * where the CPU has it, ~3 x fewer instructions (same tags, checked by
 * tests/unit/test_ucx_gmac.c).
 */
struct rdp_gmac {
    EVP_CIPHER_CTX *aes; /* AES-256-ECB under the key: the block function */
    GCM128_CONTEXT *gcm; /* holds H = AES(0) and the running GHASH */
    int has_fast;        /* fast is keyed: short inputs go there */
    rdp_ucx_fgmac_t fast;
    rdp_ghash_key_t *wide; /* the seal key's own GHASH (NULL: libcrypto's) */
};

/* block128_f for CRYPTO_gcm128: one AES block; @a key is the ECB context */
static void gmac_block(const unsigned char in[16], unsigned char out[16],
                       const void *key)
{
    int outl = 0;

    /* cannot fail for a keyed ECB context and a whole block */
    (void)EVP_EncryptUpdate((EVP_CIPHER_CTX *)key, out, &outl, in, 16);
}

static void gmac_free(rdp_gmac_t *g)
{
    if (g == NULL) {
        return;
    }
    /* both cleanse what they hold (H, the key schedule) when freeing */
    OPENSSL_cleanse(&g->fast, sizeof(g->fast));
    CRYPTO_gcm128_release(g->gcm);
    EVP_CIPHER_CTX_free(g->aes);
    rdp_ghash_key_free(g->wide);
    OPENSSL_free(g);
}

static rdp_gmac_t *gmac_new(const uint8_t key[32], int fast)
{
    rdp_gmac_t *g = OPENSSL_zalloc(sizeof(*g));

    if (g == NULL) {
        return NULL;
    }
    g->aes = EVP_CIPHER_CTX_new();
    if ((g->aes == NULL)
        || (EVP_EncryptInit_ex(g->aes, EVP_aes_256_ecb(), NULL, key, NULL)
            != 1)
        || (EVP_CIPHER_CTX_set_padding(g->aes, 0) != 1)) {
        gmac_free(g);
        return NULL;
    }
    g->gcm = CRYPTO_gcm128_new(g->aes, gmac_block);
    if (g->gcm == NULL) {
        gmac_free(g);
        return NULL;
    }
    g->has_fast = fast && (rdp_ucx_fgmac_init(&g->fast, key) == 0);
    return g;
}

/* RDPMIX_UCX_FAST_GMAC=0: libcrypto's code for every MAC (default 1) */
static int fast_gmac_wanted(void)
{
    return rdp_cfg_bool(RDP_CFG_UCX_FAST_GMAC);
}

/* Seals (whole payload blocks, the bytes per byte of full mode) use the
 * wide GHASH of ucx_ghash.c where the CPU has it, unless
 * RDPMIX_UCX_WIDE_GHASH=0; the tags are the same either way. */
static pmix_status_t gmac_wide(rdp_gmac_t *g)
{
    uint8_t h[16] = {0};

    if (!rdp_cfg_bool(RDP_CFG_UCX_WIDE_GHASH) || !rdp_ghash_wide_ok()) {
        return PMIX_SUCCESS;
    }
    gmac_block(h, h, g->aes); /* H = E_K(0^128) */
    g->wide = rdp_ghash_key_new(h);
    OPENSSL_cleanse(h, sizeof(h));
    return (g->wide != NULL) ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

pmix_status_t rdp_ucx_auth_init(rdp_ucx_auth_t *auth, const uint8_t *key,
                                size_t key_len)
{
    uint8_t khdr[32], kmsg[32], kseal[32];
    unsigned char fp[32];
    unsigned int fp_len = 0;
    rdp_gmac_t *hdr = NULL, *msg = NULL, *seal = NULL;
    uint32_t salt   = 0;
    int fast = fast_gmac_wanted() && rdp_ucx_fgmac_supported();

    if ((auth == NULL) || (key == NULL) || (key_len != RDP_UCX_KEY_LEN)) {
        rdp_log_error(UCX, "the session key must be %d bytes", RDP_UCX_KEY_LEN);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((derive(key, key_len, HDR_LABEL, khdr) != PMIX_SUCCESS)
        || (derive(key, key_len, MSG_LABEL, kmsg) != PMIX_SUCCESS)
        || (derive(key, key_len, SEAL_LABEL, kseal) != PMIX_SUCCESS)) {
        rdp_log_error(UCX, "cannot derive the MAC keys (HKDF-SHA256)");
        goto err;
    }
    hdr  = gmac_new(khdr, fast);
    msg  = gmac_new(kmsg, fast);
    seal = gmac_new(kseal, fast);
    if ((hdr == NULL) || (msg == NULL) || (seal == NULL)
        || (gmac_wide(seal) != PMIX_SUCCESS)) {
        rdp_log_error(UCX, "cannot key AES-256-GMAC");
        goto err;
    }
    if (RAND_bytes((unsigned char *)&salt, sizeof(salt)) != 1) {
        rdp_log_error(UCX, "no random bytes for the nonce salt");
        goto err;
    }
    /* a fingerprint that names the key in logs without revealing it */
    if (EVP_Digest(key, key_len, fp, &fp_len, EVP_sha256(), NULL) != 1) {
        goto err;
    }
    OPENSSL_cleanse(khdr, sizeof(khdr));
    OPENSSL_cleanse(kmsg, sizeof(kmsg));
    OPENSSL_cleanse(kseal, sizeof(kseal));
    snprintf(auth->fp, sizeof(auth->fp), "%02x%02x%02x%02x", fp[0], fp[1],
             fp[2], fp[3]);
    auth->hdr  = hdr;
    auth->msg  = msg;
    auth->seal = seal;
    auth->salt = salt;
    auth->fast = hdr->has_fast && msg->has_fast && seal->has_fast;
    return PMIX_SUCCESS;

err:
    OPENSSL_cleanse(khdr, sizeof(khdr));
    OPENSSL_cleanse(kmsg, sizeof(kmsg));
    OPENSSL_cleanse(kseal, sizeof(kseal));
    gmac_free(hdr);
    gmac_free(msg);
    gmac_free(seal);
    return PMIX_ERR_INIT;
}

void rdp_ucx_auth_cleanup(rdp_ucx_auth_t *auth)
{
    if (auth == NULL) {
        return;
    }
    gmac_free(auth->hdr);
    gmac_free(auth->msg);
    gmac_free(auth->seal);
    auth->hdr  = NULL;
    auth->msg  = NULL;
    auth->seal = NULL;
}

pmix_status_t rdp_ucx_auth_nonce(const rdp_ucx_auth_t *auth, uint64_t *counter,
                                 uint32_t *salt_p, uint64_t *seq_p)
{
    if (*counter == UINT64_MAX) {
        rdp_log_error(UCX, "the message counter is exhausted: rekey");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    *salt_p = auth->salt;
    *seq_p  = (*counter)++;
    return PMIX_SUCCESS;
}

/* A message's IV: salt | sender | receiver | seq, taken from the prefix
 * (so the receiver computes the same one). */
static void msg_iv(const uint8_t *pre, uint8_t iv[RDP_UCX_IV_LEN])
{
    memcpy(iv, pre + 24, 4);      /* salt */
    memcpy(iv + 4, pre + 8, 8);   /* sender's and receiver's indices */
    memcpy(iv + 12, pre + 28, 8); /* seq */
}

/* The MAC of the @a n pieces at @a aad (the prefix first) by the fast
 * code, if @a g has it and they fit; 0 if the caller must use libcrypto. */
static int mac_fast(const rdp_gmac_t *g, const rdp_iov_t *aad, size_t n,
                    uint8_t mac[RDP_UCX_MAC_LEN])
{
    uint8_t iv[RDP_UCX_IV_LEN];
    size_t total = 0;

    if (!g->has_fast) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (aad[i].len > RDP_UCX_FGMAC_MAX - total) {
            return 0;
        }
        total += aad[i].len;
    }
    msg_iv(aad[0].base, iv);
    rdp_ucx_fgmac_tag(&g->fast, iv, aad, n, mac);
    return 1;
}

/* Start a GMAC: the message's IV (msg_iv), then the prefix as AAD. */
static pmix_status_t mac_begin(rdp_gmac_t *g, const uint8_t *pre,
                               size_t pre_len)
{
    uint8_t iv[RDP_UCX_IV_LEN];

    if ((pre == NULL) || (pre_len < RDP_UCX_FIXED_LEN)) {
        return PMIX_ERR_BAD_PARAM;
    }
    msg_iv(pre, iv);
    CRYPTO_gcm128_setiv(g->gcm, iv, sizeof(iv));
    if (CRYPTO_gcm128_aad(g->gcm, pre, pre_len) != 0) {
        rdp_log_error(UCX, "AES-256-GMAC failed");
        return PMIX_ERROR;
    }
    return PMIX_SUCCESS;
}

/* Add @a len bytes of AAD (GCM allows up to 2^61 bytes in all). */
static pmix_status_t mac_update(rdp_gmac_t *g, const uint8_t *p, size_t len)
{
    if ((len > 0) && (CRYPTO_gcm128_aad(g->gcm, p, len) != 0)) {
        rdp_log_error(UCX, "AES-256-GMAC failed (AAD too long)");
        return PMIX_ERROR;
    }
    return PMIX_SUCCESS;
}

/* Add payload bytes to a MAC: the one place where payload bytes enter
 * any MAC (bench/build_diag.sh patches it out for its measurement). */
static pmix_status_t mac_payload(rdp_gmac_t *g, const uint8_t *p, size_t len)
{
    return mac_update(g, p, len);
}

static pmix_status_t mac_end(rdp_gmac_t *g, uint8_t mac[RDP_UCX_MAC_LEN])
{
    CRYPTO_gcm128_tag(g->gcm, mac, RDP_UCX_MAC_LEN);
    return PMIX_SUCCESS;
}

/* the pieces of a MAC that fast code takes at most: prefix, payload */
#define FAST_PIECES 16

pmix_status_t rdp_ucx_auth_hdr(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, uint8_t mac[RDP_UCX_MAC_LEN])
{
    rdp_iov_t aad[1] = {{(void *)pre, pre_len}};
    pmix_status_t status;

    if ((pre != NULL) && (pre_len >= RDP_UCX_FIXED_LEN)
        && mac_fast(auth->hdr, aad, 1, mac)) {
        return PMIX_SUCCESS;
    }
    status = mac_begin(auth->hdr, pre, pre_len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    return mac_end(auth->hdr, mac);
}

pmix_status_t rdp_ucx_auth_msg(rdp_ucx_auth_t *auth, const void *pre,
                               size_t pre_len, const rdp_iov_t *iov,
                               size_t iovcnt, uint8_t mac[RDP_UCX_MAC_LEN])
{
    rdp_iov_t aad[FAST_PIECES];
    pmix_status_t status;

    if ((pre != NULL) && (pre_len >= RDP_UCX_FIXED_LEN)
        && (iovcnt < FAST_PIECES)) {
        aad[0].base = (void *)pre;
        aad[0].len  = pre_len;
        if (iovcnt > 0) {
            memcpy(aad + 1, iov, iovcnt * sizeof(*iov));
        }
        if (mac_fast(auth->msg, aad, iovcnt + 1, mac)) {
            return PMIX_SUCCESS;
        }
    }
    status = mac_begin(auth->msg, pre, pre_len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (size_t i = 0; i < iovcnt; i++) {
        status = mac_payload(auth->msg, iov[i].base, iov[i].len);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return mac_end(auth->msg, mac);
}

pmix_status_t rdp_ucx_auth_msg_unsealed(rdp_ucx_auth_t *auth, const void *pre,
                                        size_t pre_len, const uint8_t *data,
                                        size_t len,
                                        const rdp_tl_rx_seal_t *seals,
                                        size_t nseals,
                                        uint8_t mac[RDP_UCX_MAC_LEN])
{
    pmix_status_t status;
    uint64_t at = 0; /* start of the bytes not yet covered */

    if ((pre != NULL) && (pre_len >= RDP_UCX_FIXED_LEN)
        && (len <= RDP_UCX_FGMAC_MAX) && (nseals + 2 <= FAST_PIECES)) {
        rdp_iov_t aad[FAST_PIECES];

        aad[0].base = (void *)pre;
        aad[0].len  = pre_len;
        for (size_t i = 0; i <= nseals; i++) {
            uint64_t gap_end = (i < nseals) ? seals[i].off : (uint64_t)len;

            /* no arithmetic on a NULL @a data (an empty payload) */
            aad[i + 1].base = (gap_end > at) ? (void *)(data + at) : NULL;
            aad[i + 1].len  = (size_t)(gap_end - at);
            if (i < nseals) {
                at = seals[i].off + seals[i].len;
            }
        }
        if (mac_fast(auth->msg, aad, nseals + 2, mac)) {
            return PMIX_SUCCESS;
        }
        at = 0;
    }
    status = mac_begin(auth->msg, pre, pre_len);
    for (size_t i = 0; (status == PMIX_SUCCESS) && (i <= nseals); i++) {
        uint64_t gap_end = (i < nseals) ? seals[i].off : (uint64_t)len;

        status = mac_payload(auth->msg, data + at, (size_t)(gap_end - at));
        if (i < nseals) {
            at = seals[i].off + seals[i].len;
        }
    }
    return (status == PMIX_SUCCESS) ? mac_end(auth->msg, mac) : status;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) {
        p[i] = (uint8_t)v;
    }
}

/* AES-256-GMAC with the wide GHASH, by GCM's definition: J0 = GHASH(IV
 * padded, 0^64, bits of IV), S = GHASH(data padded, bits of data, 0^64),
 * tag = E_K(J0) ^ S. */
static void wide_gmac(rdp_gmac_t *g, const uint8_t iv[RDP_UCX_IV_LEN],
                      const void *data, size_t len, uint8_t tag[16])
{
    uint8_t j0[16] = {0}, s[16] = {0}, lens[16] = {0};

    rdp_ghash_update(g->wide, j0, iv, RDP_UCX_IV_LEN);
    put_be64(lens + 8, (uint64_t)RDP_UCX_IV_LEN * 8);
    rdp_ghash_update(g->wide, j0, lens, sizeof(lens));
    gmac_block(j0, j0, g->aes);
    rdp_ghash_update(g->wide, s, data, len);
    put_be64(lens, (uint64_t)len * 8);
    put_be64(lens + 8, 0);
    rdp_ghash_update(g->wide, s, lens, sizeof(lens));
    for (int i = 0; i < 16; i++) {
        tag[i] = s[i] ^ j0[i];
    }
}

/* A seal's IV: origin | salt | counter | 0u32 (RDP_UCX_IV_LEN bytes), taken
 * from its first 16 bytes. */
static pmix_status_t seal_mac(rdp_gmac_t *g, const uint8_t head[16],
                              const void *data, size_t len,
                              uint8_t tag[RDP_UCX_MAC_LEN])
{
    uint8_t iv[RDP_UCX_IV_LEN] = {0};
    rdp_iov_t aad[1]           = {{(void *)data, len}};

    memcpy(iv, head, 16);
    if (g->has_fast && (len <= RDP_UCX_FGMAC_MAX)) {
        rdp_ucx_fgmac_tag(&g->fast, iv, aad, 1, tag);
        return PMIX_SUCCESS;
    }
    if (g->wide != NULL) {
        wide_gmac(g, iv, data, len, tag);
        return PMIX_SUCCESS;
    }
    CRYPTO_gcm128_setiv(g->gcm, iv, sizeof(iv));
    if (mac_payload(g, data, len) != PMIX_SUCCESS) {
        return PMIX_ERROR;
    }
    return mac_end(g, tag);
}

pmix_status_t rdp_ucx_auth_seal(rdp_ucx_auth_t *auth, uint32_t origin,
                                uint64_t *counter, const void *data, size_t len,
                                rdp_tl_seal_t *seal_p)
{
    uint8_t *b = seal_p->bytes;

    if (*counter == UINT64_MAX) {
        rdp_log_error(UCX, "the seal counter is exhausted: rekey");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    put_le32(b, origin);
    put_le32(b + 4, auth->salt);
    put_le64(b + 8, (*counter)++);
    return seal_mac(auth->seal, b, data, len, b + 16);
}

int rdp_ucx_auth_seal_ok(rdp_ucx_auth_t *auth, const rdp_tl_seal_t *seal,
                         const void *data, size_t len)
{
    uint8_t tag[RDP_UCX_MAC_LEN];

    return (seal_mac(auth->seal, seal->bytes, data, len, tag) == PMIX_SUCCESS)
           && rdp_ucx_auth_equal(tag, seal->bytes + 16);
}

int rdp_ucx_auth_wide_ghash(const rdp_ucx_auth_t *auth)
{
    return auth->seal->wide != NULL;
}

int rdp_ucx_auth_equal(const uint8_t *a, const uint8_t *b)
{
    return CRYPTO_memcmp(a, b, RDP_UCX_MAC_LEN) == 0;
}

/* ---- replay detection ---- */

static int replay_salt_retired(const rdp_ucx_replay_t *r, uint32_t salt)
{
    for (unsigned i = 0; i < r->nretired; i++) {
        if (r->retired[i] == salt) {
            return 1;
        }
    }
    return 0;
}

static void replay_retire(rdp_ucx_replay_t *r, uint32_t salt)
{
    r->retired[r->next_retired] = salt;
    r->next_retired = (r->next_retired + 1) % RDP_UCX_RETIRED_SALTS;
    if (r->nretired < RDP_UCX_RETIRED_SALTS) {
        r->nretired++;
    }
}

static void replay_set(rdp_ucx_replay_t *r, uint64_t seq, int on)
{
    uint64_t bit = seq % RDP_UCX_REPLAY_WINDOW;

    if (on) {
        r->seen[bit / 64] |= (uint64_t)1 << (bit % 64);
    } else {
        r->seen[bit / 64] &= ~((uint64_t)1 << (bit % 64));
    }
}

static int replay_test(const rdp_ucx_replay_t *r, uint64_t seq)
{
    uint64_t bit = seq % RDP_UCX_REPLAY_WINDOW;

    return (r->seen[bit / 64] >> (bit % 64)) & 1;
}

/* Start remembering a sender's nonces under @a salt from @a seq on. */
static void replay_restart(rdp_ucx_replay_t *r, uint32_t salt, uint64_t seq)
{
    if (r->started) {
        replay_retire(r, r->salt);
    }
    memset(r->seen, 0, sizeof(r->seen));
    r->started = 1;
    r->salt    = salt;
    r->top     = seq;
    replay_set(r, seq, 1);
}

enum rdp_ucx_replay_verdict rdp_ucx_replay_accept(rdp_ucx_replay_t *r,
                                                  uint32_t salt, uint64_t seq)
{
    if (!r->started || (salt != r->salt)) {
        if (replay_salt_retired(r, salt)) {
            return RDP_UCX_OLD_SALT;
        }
        replay_restart(r, salt, seq);
        return RDP_UCX_FRESH;
    }
    if (seq > r->top) {
        /* forget the numbers that slide out of the window */
        uint64_t gap = seq - r->top;

        if (gap >= RDP_UCX_REPLAY_WINDOW) {
            memset(r->seen, 0, sizeof(r->seen));
        } else {
            for (uint64_t s = r->top + 1; s < seq; s++) {
                replay_set(r, s, 0);
            }
        }
        r->top = seq;
        replay_set(r, seq, 1);
        return RDP_UCX_FRESH;
    }
    if (r->top - seq >= RDP_UCX_REPLAY_WINDOW) {
        return RDP_UCX_TOO_OLD;
    }
    if (replay_test(r, seq)) {
        return RDP_UCX_REPLAYED;
    }
    replay_set(r, seq, 1);
    return RDP_UCX_FRESH;
}

const char *rdp_ucx_replay_str(enum rdp_ucx_replay_verdict v)
{
    switch (v) {
    case RDP_UCX_FRESH:
        return "fresh";
    case RDP_UCX_REPLAYED:
        return "a replay of an earlier message";
    case RDP_UCX_TOO_OLD:
        return "older than the replay window";
    case RDP_UCX_OLD_SALT:
        return "from a transport the sender replaced";
    }
    return "unknown";
}
