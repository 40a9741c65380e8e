/* tool.c - the PMIx tool API (issue 2: exported, not yet implemented) */
#include "config.h"

#include <pmix_tool.h>

#include "core/util/log.h"

/*
 * Tools (RFC0010: system and session servers, query, log, proc info) are a
 * later capability.  Until then every tool entry point says so plainly and
 * docs/status.md lists it, so a program such as Open MPI's ess/tool gets a
 * clear PMIX_ERR_NOT_SUPPORTED instead of a missing symbol.
 */
static pmix_status_t tool_not_supported(const char *fn)
{
    rdp_log_init();
    rdp_log_info(TOOL, "%s: the tool API is not supported yet", fn);
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[],
                             size_t ninfo)
{
    return tool_not_supported("PMIx_tool_init");
}

pmix_status_t PMIx_tool_finalize(void)
{
    return tool_not_supported("PMIx_tool_finalize");
}

pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc,
                                         pmix_proc_t *server,
                                         pmix_info_t info[], size_t ninfo)
{
    return tool_not_supported("PMIx_tool_attach_to_server");
}

pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server)
{
    return tool_not_supported("PMIx_tool_disconnect");
}

pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers)
{
    return tool_not_supported("PMIx_tool_get_servers");
}

pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server,
                                   pmix_info_t info[], size_t ninfo)
{
    return tool_not_supported("PMIx_tool_set_server");
}

pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc,
                                          pmix_info_t info[], size_t ninfo)
{
    return tool_not_supported("PMIx_tool_connect_to_server");
}

/* IO forwarding to tools (RFC0010) arrives with the tool API. */
pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_iof_channel_t channel,
                            pmix_iof_cbfunc_t cbfunc,
                            pmix_hdlr_reg_cbfunc_t regcbfunc,
                            void *regcbdata)
{
    return tool_not_supported("PMIx_IOF_pull");
}

pmix_status_t PMIx_IOF_deregister(size_t iofhdlr,
                                  const pmix_info_t directives[],
                                  size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
    return tool_not_supported("PMIx_IOF_deregister");
}

pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                            pmix_byte_object_t *bo,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return tool_not_supported("PMIx_IOF_push");
}

/* The library runs its own progress thread, so there is never anything
 * for the caller to drive; the Standard allows this to do nothing. */
void PMIx_Progress(void)
{
}
