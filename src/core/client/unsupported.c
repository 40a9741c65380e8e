/* unsupported.c - client APIs rdpmix does not provide (yet) */
#include "config.h"
#include "core/util/directive.h"

#include <pmix.h>

/*
 * Every function here returns PMIX_ERR_NOT_SUPPORTED and never calls its
 * callback: the client/server protocol (proto.h) has no message for
 * allocation requests, credentials or fabric
 * registration (groups: group.c).  When one is added, move the function out of
 * this file.
 */

pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                      pmix_info_t *info, size_t ninfo,
                                      pmix_info_t **results, size_t *nresults)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                         pmix_info_t *info, size_t ninfo,
                                         pmix_info_cbfunc_t cbfunc,
                                         void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                  pmix_byte_object_t *credential)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                     pmix_credential_cbfunc_t cbfunc,
                                     void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_info_t **results, size_t *nresults)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                          const pmix_info_t info[],
                                          size_t ninfo,
                                          pmix_validation_cbfunc_t cbfunc,
                                          void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                   const pmix_info_t directives[], size_t ndirs)
{
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric,
                                      const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                      void *cbdata)
{
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}
