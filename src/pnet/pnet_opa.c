/* pnet_opa.c - a fresh PSM/PSM2 job key for Omni-Path (and Open MPI) */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "pnet/pnet_sha256.h"
#include "core/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Open MPI (ORTE's format, which PSM and PSM2 read through it): two 64-bit
 * halves in hex, "%016x-%016x". */
#define OPA_KEY_ENVAR "OMPI_MCA_orte_precondition_transports"
#define OPA_KEY_CHARS (16 + 1 + 16)

/* A site secret (setting opa_secret_file) lets every node derive a job's
 * key from the nspace alone, with no head-node step (Slurm's srun): 16 to
 * 4096 bytes in a regular file only its owner (root, or the server's own
 * user) can read or write. */
#define OPA_SECRET_MIN 16
#define OPA_SECRET_MAX 4096
/* what the derived key is for: another use of the same secret (a future
 * module) hashes another label, so never gives the same bytes */
#define OPA_DERIVE_LABEL "rdpmix pnet opa job key\n"

static bool secret_configured(char *path, size_t len)
{
    return rdp_pnet_conf_get("opa_secret_file", path, len) && path[0] != '\0';
}

/* Omni-Path adapters show up as hfi1 devices; without one the module is
 * used only when a site names it (RDPMIX_PNET=opa) or gives a secret. */
static bool opa_usable(void)
{
    char path[512];

    return access("/dev/hfi1_0", F_OK) == 0
           || access("/sys/class/infiniband/hfi1_0", F_OK) == 0
           || secret_configured(path, sizeof(path));
}

static pmix_status_t random_key(uint64_t key[2])
{
    size_t got = 0;

    while (got < 2 * sizeof(uint64_t)) {
        ssize_t n = getrandom((char *)key + got, 2 * sizeof(uint64_t) - got, 0);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rdp_log_error(PNET, "opa: no random bytes for a job key: %m");
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        got += (size_t)n;
    }
    return PMIX_SUCCESS;
}

/* Is the open secret file @a fd safe to use?  Logged when not. */
static pmix_status_t secret_file_ok(int fd, const char *path)
{
    struct stat st;

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rdp_log_error(PNET, "opa_secret_file %s is no regular file", path);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0
        || (st.st_uid != 0 && st.st_uid != geteuid())) {
        rdp_log_error(PNET,
                      "opa_secret_file %s must belong to root (or this "
                      "server's user) and be readable by its owner only "
                      "(chmod 600): it is not used",
                      path);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    return PMIX_SUCCESS;
}

/* The site secret into @a buf (wiped by the caller), its length *@a n_p */
static pmix_status_t read_secret(uint8_t *buf, size_t *n_p)
{
    char path[512];
    size_t n = 0;
    ssize_t r;
    pmix_status_t status;
    int fd;

    if (!secret_configured(path, sizeof(path))) {
        return PMIX_ERR_NOT_FOUND;
    }
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        rdp_log_error(PNET, "cannot open opa_secret_file %s: %m", path);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    status = secret_file_ok(fd, path);
    while (status == PMIX_SUCCESS && n <= OPA_SECRET_MAX
           && (r = read(fd, buf + n, OPA_SECRET_MAX + 1 - n)) != 0) {
        if (r < 0 && errno != EINTR) {
            rdp_log_error(PNET, "cannot read opa_secret_file %s: %m", path);
            status = PMIX_ERR_NO_PERMISSIONS;
        }
        n += (r > 0) ? (size_t)r : 0;
    }
    close(fd);
    if (status == PMIX_SUCCESS && (n < OPA_SECRET_MIN || n > OPA_SECRET_MAX)) {
        rdp_log_error(PNET, "opa_secret_file %s must hold %d to %d bytes", path,
                      OPA_SECRET_MIN, OPA_SECRET_MAX);
        status = PMIX_ERR_BAD_PARAM;
    }
    *n_p = n;
    return status;
}

/* Hand the key to the job: environment and PMIX_CREDENTIAL; wiped */
static pmix_status_t deliver_key(const char *nspace, uint64_t key[2],
                                 rdp_pnet_out_t *out, const char *how)
{
    char text[OPA_KEY_CHARS + 1], print[9];
    pmix_status_t status;

    snprintf(text, sizeof(text), "%016" PRIx64 "-%016" PRIx64, key[0], key[1]);
    rdp_pnet_fingerprint(key, 2 * sizeof(uint64_t), print);
    explicit_bzero(key, 2 * sizeof(uint64_t));
    status = rdp_pnet_out_setenv(out, OPA_KEY_ENVAR, text);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_value(out, PMIX_CREDENTIAL, text, PMIX_STRING);
    }
    explicit_bzero(text, sizeof(text));
    if (status == PMIX_SUCCESS) {
        rdp_log_info(PNET, "%s: opa job key %s (fingerprint), %s", nspace,
                     print, how);
    }
    return status;
}

/* HMAC-SHA256(site secret, label || nspace): the same on every node of
 * the job, different for every nspace; its first 128 bits are the key */
static pmix_status_t opa_derive(const char *nspace, rdp_pnet_out_t *out)
{
    uint8_t secret[OPA_SECRET_MAX + 1], mac[RDP_SHA256_LEN];
    char msg[sizeof(OPA_DERIVE_LABEL) + PMIX_MAX_NSLEN + 1];
    uint64_t key[2] = {0, 0};
    size_t n        = 0;
    int len;
    pmix_status_t status = read_secret(secret, &n);

    if (status == PMIX_ERR_NOT_FOUND) {
        return PMIX_SUCCESS; /* no secret: the launcher mints (setup_app) */
    }
    if (status == PMIX_SUCCESS) {
        len = snprintf(msg, sizeof(msg), "%s%s", OPA_DERIVE_LABEL, nspace);
        rdp_hmac_sha256(secret, n, msg, (size_t)len, mac);
        for (int i = 0; i < 16; i++) {
            key[i / 8] = key[i / 8] << 8 | mac[i];
        }
        status = deliver_key(nspace, key, out, "derived from the site secret");
    }
    explicit_bzero(secret, sizeof(secret));
    explicit_bzero(mac, sizeof(mac));
    return status;
}

static pmix_status_t opa_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    uint64_t key[2];
    pmix_status_t status = random_key(key);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return deliver_key(nspace, key, out, "minted");
}

static const char *const settings[] = {"opa_secret_file", NULL};

const rdp_pnet_module_t rdp_pnet_opa_module = {
    .settings  = settings,
    .name      = "opa",
    .usable    = opa_usable,
    .setup_app = opa_setup_app,
    .derive    = opa_derive,
};
