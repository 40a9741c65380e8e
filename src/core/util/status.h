/* status.h - names of PMIx status codes for rdpmix's own messages */
#ifndef RDP_CORE_UTIL_STATUS_H
#define RDP_CORE_UTIL_STATUS_H

#include <pmix_common.h>

/**
 * The name of the constant for @a status ("PMIX_ERR_UNREACH"), or
 * "UNKNOWN ERROR" / "EXTERNAL ERROR".  rdpmix's logs and messages use
 * these; PMIx_Error_string gives the (terser) strings programs compare
 * with OpenPMIx's.
 */
const char *rdp_status_name(pmix_status_t status);

#endif
