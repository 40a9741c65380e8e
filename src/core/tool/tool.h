/* tool.h - what the rest of the library asks of the tool side */
#ifndef RDP_CORE_TOOL_TOOL_H
#define RDP_CORE_TOOL_TOOL_H

#include <stdbool.h>

/**
 * True while this process is initialised as a tool that declared itself a
 * launcher (PMIX_LAUNCHER in PMIx_tool_init's info): it then has the pnet
 * modules selected (RDPMIX_PNET) and may call PMIx_server_setup_application
 * as a server's host would (RFC0012's head-node step).
 */
bool rdp_tool_is_launcher(void);

#endif
