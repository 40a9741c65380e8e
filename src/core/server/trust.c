/* trust.c - whose collectives may carry payloads without authentication */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/trust.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "pnet/pnet.h"
#include "rdpmix.h"

#include <stdio.h>
#include <string.h>

/*
 * Trust follows the fabric (docs/design.md, "Trust follows the fabric"):
 * the servers always authenticate what they send each other, headers and
 * control data; a collective's payload bytes go without a MAC only when
 *   - the site declares the network between servers trusted
 *     (RDPMIX_TRUSTED_NETWORK=1 in every server's environment), or
 *   - all participants belong to one job whose job-level
 *     RDPMIX_FABRIC_ISOLATED is true (a pnet module gave the job an
 *     isolation domain of its own: IB partition key, Slingshot VNI, OPA
 *     job key).
 * Collectives spanning several jobs (connect, groups) stay authenticated.
 * Every server decides from the same data (the site's setting, the job's
 * registered info), so all participants agree; a payload that comes open
 * for a collective decided otherwise is dropped by the engine.
 */

static int site_trusts_network(void)
{
    static int trusted = -1; /* loop thread only */

    if (trusted < 0) {
        trusted = rdp_cfg_bool(RDP_CFG_TRUSTED_NETWORK);
        if (trusted) {
            rdp_log_info(SERVER, "RDPMIX_TRUSTED_NETWORK: collective payloads "
                                 "between servers travel without a MAC");
        }
    }
    return trusted;
}

static bool job_isolated(const char *nspace)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
    const pmix_value_t *v;

    if (ns == NULL) {
        return false;
    }
    if (ns->info == NULL) {
        return rdp_pnet_job_isolated(nspace);
    }
    v = rdp_kvs_peek(ns->info, ns->name, PMIX_RANK_WILDCARD,
                     RDPMIX_FABRIC_ISOLATED);
    if (v != NULL && v->type == PMIX_BOOL && v->data.flag) {
        return true; /* the host says so */
    }
    return rdp_pnet_job_isolated(ns->name);
}

bool rdp_srv_payload_open(const pmix_proc_t *procs, size_t nprocs)
{
    static char said[PMIX_MAX_NSLEN + 1]; /* the last job logged */

    if (site_trusts_network()) {
        return true;
    }
    if (nprocs == 0) {
        return false;
    }
    for (size_t i = 1; i < nprocs; i++) {
        if (strncmp(procs[i].nspace, procs[0].nspace, PMIX_MAX_NSLEN) != 0) {
            return false;
        }
    }
    if (!job_isolated(procs[0].nspace)) {
        return false;
    }
    if (strncmp(said, procs[0].nspace, PMIX_MAX_NSLEN) != 0) {
        rdp_log_info(SERVER,
                     "job %s: its fabric isolates it; collective payloads "
                     "between servers travel without a MAC",
                     procs[0].nspace);
        PMIX_LOAD_NSPACE(said, procs[0].nspace);
    }
    return true;
}

/* Append @a name to the comma list in @a buf (truncated to @a len). */
static void list_add(char *buf, size_t len, const char *name)
{
    size_t used = strlen(buf);

    if (used < len) {
        snprintf(buf + used, len - used, "%s%s", used > 0 ? "," : "", name);
    }
}

enum rdp_trust_mode rdp_srv_trust_mode(char *mods, size_t len)
{
    char sel[256], *save = NULL;

    if (len > 0) {
        mods[0] = '\0';
    }
    if (rdp_cfg_bool(RDP_CFG_TRUSTED_NETWORK)) {
        return RDP_TRUST_TRUSTED;
    }
    snprintf(sel, sizeof(sel), "%s", rdp_pnet_selected());
    for (char *m = strtok_r(sel, ",", &save); m != NULL;
         m = strtok_r(NULL, ",", &save)) {
        if (rdp_pnet_module_isolates(m)) {
            list_add(mods, len, m);
        }
    }
    return (len > 0 && mods[0] != '\0') ? RDP_TRUST_ISOLATED : RDP_TRUST_FULL;
}

const char *rdp_srv_trust_mode_name(enum rdp_trust_mode mode)
{
    switch (mode) {
    case RDP_TRUST_TRUSTED:
        return "trusted network";
    case RDP_TRUST_ISOLATED:
        return "isolated by pnet";
    default:
        return "full";
    }
}
