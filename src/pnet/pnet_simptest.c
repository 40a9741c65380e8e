/* pnet_simptest.c - deterministic credentials and fault hooks, for tests */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/hash.h"
#include "core/util/config_table.h"
#include "core/util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The job's "key" is a function of its nspace, so a test can predict it;
 * it goes out as RDPMIX_PNET_SIMPTEST_KEY and the job-level value
 * "rdpmix.pnet.simptest.key".  RDPMIX_PNET_SIMPTEST_FAIL=app or =local
 * makes setup_application or setup_local_support fail here, so that the
 * rollback paths can be tested.  The module counts the jobs it holds
 * (rdp_pnet_simptest_live), as a pool would.  Loop thread only.
 */
#define SIMPTEST_ENVAR "RDPMIX_PNET_SIMPTEST_KEY"
#define SIMPTEST_KEY   "rdpmix.pnet.simptest.key"

/* the nspaces holding an application / a node setup here */
static rdp_hash_t held[2];
static bool held_ready[2];

static void hold(int local, const char *nspace, bool on)
{
    if (!held_ready[local]) {
        held_ready[local] = (rdp_hash_init(&held[local], 8) == PMIX_SUCCESS);
    }
    if (!held_ready[local]) {
        return;
    }
    if (on) {
        (void)rdp_hash_set_str(&held[local], nspace, &held[local], NULL);
    } else {
        (void)rdp_hash_remove_str(&held[local], nspace);
    }
}

size_t rdp_pnet_simptest_live(int local)
{
    return held_ready[local] ? held[local].count : 0;
}

static bool fail_at(const char *step)
{
    const char *s = rdp_cfg_env(RDP_CFG_PNET_SIMPTEST_FAIL);

    return s != NULL && strcmp(s, step) == 0;
}

/* Never chosen by itself: only a test names it. */
static bool simptest_usable(void)
{
    return false;
}

static pmix_status_t simptest_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    char key[32], print[9];
    pmix_status_t status;

    hold(0, nspace, true); /* held from here on, even if what follows fails */
    if (fail_at("app")) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    rdp_pnet_fingerprint(nspace, strlen(nspace), print);
    snprintf(key, sizeof(key), "simptest-%s", print);
    status = rdp_pnet_out_setenv(out, SIMPTEST_ENVAR, key);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_value(out, SIMPTEST_KEY, key, PMIX_STRING);
    }
    return status;
}

static void simptest_release_app(const char *nspace)
{
    hold(0, nspace, false);
}

static pmix_status_t simptest_setup_local(const char *nspace,
                                          const pmix_info_t *info, size_t ninfo,
                                          rdp_pnet_out_t *node)
{
    (void)info;
    (void)ninfo;
    (void)node;
    hold(1, nspace, true);
    return fail_at("local") ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_SUCCESS;
}

static void simptest_job_end(const char *nspace)
{
    hold(1, nspace, false);
}

const rdp_pnet_module_t rdp_pnet_simptest_module = {
    .name        = "simptest",
    .usable      = simptest_usable,
    .setup_app   = simptest_setup_app,
    .release_app = simptest_release_app,
    .setup_local = simptest_setup_local,
    .job_end     = simptest_job_end,
};
