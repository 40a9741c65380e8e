/* misc.c - map generators, application setup and the unsupported calls */
#include "config.h"
#include "core/server/regex.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <string.h>

pmix_status_t PMIx_generate_regex(const char *input, char **regex)
{
    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    return rdp_server_regex_generate(input, regex);
}

pmix_status_t PMIx_generate_ppn(const char *input, char **ppn)
{
    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    return rdp_server_ppn_generate(input, ppn);
}

/* ---- application setup (no pnet module yet) ---- */

typedef struct app_req {
    pmix_setup_application_cbfunc_t cbfunc;
    void *cbdata;
} app_req_t;

static void setup_application_on_loop(void *arg)
{
    app_req_t *req = arg;

    /* no fabric module contributes anything yet: an empty answer */
    req->cbfunc(PMIX_SUCCESS, NULL, 0, req->cbdata, NULL, NULL);
    rdp_free(req);
}

pmix_status_t PMIx_server_setup_application(
    const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
    pmix_setup_application_cbfunc_t cbfunc, void *cbdata)
{
    app_req_t *req;
    pmix_status_t status;

    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    if (nspace == NULL || cbfunc == NULL || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    status      = rdp_loop_post(rdp_rt.loop, setup_application_on_loop, req);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
    }
    return status;
}

pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                              pmix_info_t info[], size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc,
                                              void *cbdata)
{
    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    if (nspace == NULL || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* nothing to program on this node yet */
    if (cbfunc == NULL) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    rdp_srv_post_op_cb(cbfunc, PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* ---- not implemented ---- */

pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                      pmix_iof_channel_t channel,
                                      const pmix_byte_object_t *bo,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[],
                                            size_t ndirs,
                                            pmix_info_cbfunc_t cbfunc,
                                            void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                            pmix_info_t directives[],
                                            size_t ndirs,
                                            pmix_op_cbfunc_t cbfunc,
                                            void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Register_attributes(char *function, char *attrs[])
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                   char **locality)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                 char **cpuset_string)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members,
                                             size_t nmembers,
                                             const char *pset_name)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_delete_process_set(char *pset_name)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc,
                                             void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                               pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}
