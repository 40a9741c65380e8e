/* misc.c - map generators, application setup and the unsupported calls */
#include "config.h"
#include "core/server/regex.h"
#include "core/util/directive.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/query.h"
#include "core/util/value.h"
#include "pnet/pnet.h"

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

/* ---- network support (RFC0012): the pnet modules do the work ---- */

/* A setup_application or setup_local_support call on its way to the loop */
typedef struct net_req {
    pmix_nspace_t nspace;
    pmix_info_t *info; /* copies of the host's array; wiped (may hold keys) */
    size_t ninfo;
    pmix_setup_application_cbfunc_t app_cb;
    pmix_op_cbfunc_t op_cb;
    void *cbdata;
    pmix_info_t *answer; /* setup_application's; freed by answer_release */
    size_t nanswer;
} net_req_t;

static void wipe_infos(pmix_info_t *info, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rdp_pnet_wipe_value(&info[i].value);
    }
}

static void net_req_destroy(net_req_t *req)
{
    wipe_infos(req->info, req->ninfo);
    rdp_info_array_free(req->info, req->ninfo);
    rdp_free(req);
}

/* Check the arguments both calls share and copy them into a new request;
 * the caller has checked that this process may make the call. */
static pmix_status_t net_req_create(const pmix_nspace_t nspace,
                                    const pmix_info_t info[], size_t ninfo,
                                    void *cbdata, net_req_t **req_p)
{
    net_req_t *req;
    pmix_status_t status;

    if (nspace == NULL || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_LOAD_NSPACE(req->nspace, nspace);
    req->cbdata = cbdata;
    status      = rdp_info_array_copy(&req->info, info, ninfo);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
        return status;
    }
    req->ninfo = ninfo;
    *req_p     = req;
    return PMIX_SUCCESS;
}

static pmix_status_t net_req_post(net_req_t *req, rdp_loop_fn_t fn)
{
    pmix_status_t status = rdp_loop_post(rdp_rt.loop, fn, req);

    if (status != PMIX_SUCCESS) {
        net_req_destroy(req);
    }
    return status;
}

/* The host is done with the answer: wipe it and free it */
static void answer_release(pmix_status_t status, void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_APP_RELEASE);
    net_req_t *req = cbdata;

    (void)status;
    wipe_infos(req->answer, req->nanswer);
    rdp_info_array_free(req->answer, req->nanswer);
    net_req_destroy(req);
    RDP_SRV_HOST_CB_LEAVE();
}

static void setup_application_on_loop(void *arg)
{
    net_req_t *req = arg;
    pmix_status_t status;

    status = rdp_pnet_setup_app(req->nspace, req->info, req->ninfo,
                                &req->answer, &req->nanswer);
    if (status != PMIX_SUCCESS) {
        req->app_cb(status, NULL, 0, req->cbdata, NULL, NULL);
        net_req_destroy(req);
        return;
    }
    req->app_cb(PMIX_SUCCESS, req->answer, req->nanswer, req->cbdata,
                answer_release, req);
}

/*
 * The head node's step (RFC0012) belongs to whoever launches: a server's
 * host, or a tool that initialised as a launcher (PMIX_LAUNCHER), whose
 * pnet modules PMIx_tool_init selected as server init does.  Any other
 * tool (and a client) has no modules and launches nothing: an empty
 * answer would let a job start without its fabric credentials, so it is
 * refused, and the log says why (docs/design.md).
 */
static pmix_status_t may_setup_application(void)
{
    if (rdp_srv_initialized() || rdp_runtime_is_launcher()) {
        return PMIX_SUCCESS;
    }
    if (rdp_runtime_active()) {
        rdp_log_error(SERVER,
                      "PMIx_server_setup_application: only a server or a "
                      "tool initialised with PMIX_LAUNCHER may set up an "
                      "application");
    }
    return PMIX_ERR_INIT;
}

pmix_status_t PMIx_server_setup_application(
    const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
    pmix_setup_application_cbfunc_t cbfunc, void *cbdata)
{
    net_req_t *req;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (cbfunc == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = may_setup_application();
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = net_req_create(nspace, info, ninfo, cbdata, &req);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    req->app_cb = cbfunc;
    return net_req_post(req, setup_application_on_loop);
}

static pmix_status_t setup_local_run(void *arg)
{
    net_req_t *req = arg;

    pmix_status_t status =
        rdp_pnet_setup_local(req->nspace, req->info, req->ninfo);

    if (status == PMIX_SUCCESS) {
        rdp_srv_pnet_values_changed(req->nspace);
    }
    return status;
}

static void setup_local_on_loop(void *arg)
{
    net_req_t *req = arg;

    req->op_cb(setup_local_run(req), req->cbdata);
    net_req_destroy(req);
}

/* The host must not fork before the callback: the modules program the
 * node here.  Without a callback the call blocks and returns
 * PMIX_OPERATION_SUCCEEDED (or the error). */
pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                              pmix_info_t info[], size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc,
                                              void *cbdata)
{
    net_req_t *req;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_srv_initialized()) {
        return PMIX_ERR_INIT;
    }
    status = net_req_create(nspace, info, ninfo, cbdata, &req);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (cbfunc == NULL) {
        status = rdp_runtime_call_sync(setup_local_run, req);
        net_req_destroy(req);
        return (status == PMIX_SUCCESS) ? PMIX_OPERATION_SUCCEEDED : status;
    }
    req->op_cb = cbfunc;
    return net_req_post(req, setup_local_on_loop);
}

/* ---- not implemented ---- */

pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                      pmix_iof_channel_t channel,
                                      const pmix_byte_object_t *bo,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[],
                                            size_t ndirs,
                                            pmix_info_cbfunc_t cbfunc,
                                            void *cbdata)
{
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                            pmix_info_t directives[],
                                            size_t ndirs,
                                            pmix_op_cbfunc_t cbfunc,
                                            void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

/* Kept for PMIX_QUERY_ATTRIBUTE_SUPPORT's host side (core/util/query.c). */
pmix_status_t PMIx_Register_attributes(char *function, char *attrs[])
{
    return rdp_qry_host_attrs_register(function, attrs);
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
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                               pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}
