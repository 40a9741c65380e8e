/* ucx_status.c - the one place ucs_status_t becomes pmix_status_t */
#include "config.h"

#include "ucx/ucx_int.h"

pmix_status_t rdp_ucx_status(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:
        return PMIX_SUCCESS;
    case UCS_INPROGRESS:
        return PMIX_OPERATION_IN_PROGRESS;
    case UCS_ERR_NO_MEMORY:
        return PMIX_ERR_NOMEM;
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
    case UCS_ERR_MESSAGE_TRUNCATED:
        return PMIX_ERR_BAD_PARAM;
    case UCS_ERR_UNSUPPORTED:
        return PMIX_ERR_NOT_SUPPORTED;
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_EXCEEDS_LIMIT:
    case UCS_ERR_BUSY:
        return PMIX_ERR_OUT_OF_RESOURCE;
    case UCS_ERR_TIMED_OUT:
        return PMIX_ERR_TIMEOUT;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_REJECTED:
        return PMIX_ERR_LOST_CONNECTION;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CANCELED:
    case UCS_ERR_NO_DEVICE:
        return PMIX_ERR_UNREACH;
    case UCS_ERR_IO_ERROR:
        return PMIX_ERR_COMM_FAILURE;
    default:
        return PMIX_ERROR;
    }
}

pmix_status_t rdp_ucx_status_peer(ucs_status_t status)
{
    switch (status) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
        return PMIX_ERR_LOST_CONNECTION;
    default:
        return PMIX_ERR_UNREACH;
    }
}

const char *rdp_ucx_status_str(ucs_status_t status)
{
    return ucs_status_string(status);
}
