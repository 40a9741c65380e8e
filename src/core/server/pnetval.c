/* pnetval.c - a job's pnet values (keys, VNIs, ...) for its own processes */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/log.h"
#include "pnet/pnet.h"

#include <string.h>

/*
 * The job-level values of setup_application's answer (PMIX_CREDENTIAL,
 * "rdpmix.pnet.*") are kept by pnet, never in the job's registered data
 * (ns->info): that is packed for other jobs' GETs, group members and
 * other servers.  They reach only the job's own clients, as one more JOB
 * section of the CONNECT_ACK bundle; a GET for one of those keys from any
 * other nspace (client or tool) is refused with PMIX_ERR_NO_PERMISSIONS
 * whether this server holds the value or not (an answer that depends on
 * it would tell which jobs hold a key).
 */

typedef struct values_kvs {
    const char *nspace;
    rdp_kvs_t *kvs;
} values_kvs_t;

static pmix_status_t put_value(const pmix_info_t *value, void *arg)
{
    values_kvs_t *vk = arg;

    return rdp_kvs_put(vk->kvs, vk->nspace, PMIX_RANK_WILDCARD, value->key,
                       PMIX_SCOPE_UNDEF, &value->value);
}

pmix_status_t rdp_srv_pnet_pack_values(const char *nspace, rdp_buf_t *extra,
                                       uint32_t *nextra)
{
    rdp_kvs_t *kvs = NULL;
    values_kvs_t vk;
    size_t mark;
    pmix_status_t status = rdp_kvs_create(&kvs);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    vk     = (values_kvs_t){.nspace = nspace, .kvs = kvs};
    status = rdp_pnet_for_each_value(nspace, put_value, &vk);
    if (status == PMIX_SUCCESS
        && rdp_kvs_has_rank(kvs, nspace, PMIX_RANK_WILDCARD)) {
        status = rdp_sect_pack_begin(extra, RDP_SECT_JOB, PMIX_RANK_WILDCARD,
                                     NULL, &mark);
        if (status == PMIX_SUCCESS) {
            status = rdp_kvs_pack_rank(kvs, nspace, PMIX_RANK_WILDCARD,
                                       RDP_SCOPES_ALL, extra);
        }
        if (status == PMIX_SUCCESS) {
            rdp_sect_pack_end(extra, mark);
            (*nextra)++;
        }
    }
    rdp_kvs_destroy(kvs);
    return status;
}

void rdp_srv_pnet_values_changed(const char *nspace)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);

    if (ns != NULL) {
        rdp_srv_nspace_invalidate(ns);
    }
}

bool rdp_srv_pnet_denied(const rdp_srv_client_t *me, const char *nspace,
                         const char *key)
{
    if (!rdp_pnet_is_private_key(key) || strcmp(me->proc.nspace, nspace) == 0) {
        return false;
    }
    rdp_log_info(SERVER, "%s:%u may not read %s of job %s", me->proc.nspace,
                 me->proc.rank, key, nspace);
    return true;
}
