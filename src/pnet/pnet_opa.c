/* pnet_opa.c - a fresh PSM/PSM2 job key for Omni-Path (and Open MPI) */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* Open MPI (ORTE's format, which PSM and PSM2 read through it): two 64-bit
 * halves in hex, "%016x-%016x". */
#define OPA_KEY_ENVAR "OMPI_MCA_orte_precondition_transports"
#define OPA_KEY_CHARS (16 + 1 + 16)

/* Omni-Path adapters show up as hfi1 devices; without one the module is
 * used only when a site names it (RDPMIX_PNET=opa). */
static bool opa_usable(void)
{
    return access("/dev/hfi1_0", F_OK) == 0
           || access("/sys/class/infiniband/hfi1_0", F_OK) == 0;
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

static pmix_status_t opa_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    char text[OPA_KEY_CHARS + 1], print[9];
    uint64_t key[2];
    pmix_status_t status;

    status = random_key(key);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    snprintf(text, sizeof(text), "%016" PRIx64 "-%016" PRIx64, key[0], key[1]);
    rdp_pnet_fingerprint(key, sizeof(key), print);
    explicit_bzero(key, sizeof(key));
    status = rdp_pnet_out_setenv(out, OPA_KEY_ENVAR, text);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_value(out, PMIX_CREDENTIAL, text, PMIX_STRING);
    }
    explicit_bzero(text, sizeof(text));
    if (status == PMIX_SUCCESS) {
        rdp_log_info(PNET, "%s: opa job key %s (fingerprint)", nspace, print);
    }
    return status;
}

const rdp_pnet_module_t rdp_pnet_opa_module = {
    .name      = "opa",
    .usable    = opa_usable,
    .setup_app = opa_setup_app,
};
