/* attach.h - a tool's connection to a server, on the client machinery */
#ifndef RDP_CORE_CLIENT_ATTACH_H
#define RDP_CORE_CLIENT_ATTACH_H

#include <pmix_common.h>

/*
 * The tool layer (src/core/tool) finds a server; this connects to it with
 * the TOOL_CONNECT handshake and then runs the connection exactly as a
 * client's, so PMIx_Query_info, PMIx_Log, PMIx_Get, events ... take the
 * client paths.  The process must hold the runtime in the tool role.
 */

/**
 * Connect to the server listening on the UNIX socket @a path (blocking,
 * API thread).  @a want names the identity the tool asks for (nspace ""
 * lets the server assign one).  On success *self_p is the tool's identity
 * (also rdp_rt.myproc) and *server_p the server's.
 * @param [in] uri   borrowed; what PMIx_Get(self, PMIX_SERVER_URI) answers
 *                   (NULL: nothing)
 * @param [in] info  borrowed; the tool's init info, sent when it can travel
 * Returns the server's refusal (PMIX_ERR_NO_PERMISSIONS, ...) as is, or
 * PMIX_ERR_UNREACH when nothing listens at @a path.
 */
pmix_status_t rdp_client_tool_attach(const char *path, const char *uri,
                                     const pmix_proc_t *want,
                                     const pmix_info_t *info, size_t ninfo,
                                     pmix_proc_t *self_p,
                                     pmix_proc_t *server_p);

/** True while attached. Any thread. */
bool rdp_client_tool_attached(void);

/** Say goodbye to the server and drop the connection's state (API
 * thread; nothing when not attached). */
void rdp_client_tool_detach(void);

#endif
