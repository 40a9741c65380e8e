/* pmix_tool.h - PMIx Standard v4 tool API (tools also get the client API) */
#ifndef PMIx_TOOL_API_H
#define PMIx_TOOL_API_H

#include <pmix.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* start the tool library; connects to a server unless told not to */
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[],
                                         size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);

/* connect to (another) server; its identity is returned in @a server */
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc,
                                                     pmix_proc_t *server,
                                                     pmix_info_t info[],
                                                     size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
/* *@a servers is malloc'ed (PMIX_PROC_FREE) */
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[],
                                                size_t *nservers);
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server,
                                               pmix_info_t info[],
                                               size_t ninfo);

/* delivery of forwarded output; @a payload and @a info belong to the
 * library and are valid only during the call */
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source,
                                  pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);

/* register @a cbfunc for @a channel output of @a procs; regcbfunc gets
 * the handler id used by PMIx_IOF_deregister */
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[],
                                        size_t nprocs,
                                        const pmix_info_t directives[],
                                        size_t ndirs,
                                        pmix_iof_channel_t channel,
                                        pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc,
                                        void *regcbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr,
                                              const pmix_info_t directives[],
                                              size_t ndirs,
                                              pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);
/* send @a bo (NULL: end of input) to the stdin of @a targets */
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[],
                                        size_t ntargets,
                                        pmix_byte_object_t *bo,
                                        const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                        void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_TOOL_API_H */
