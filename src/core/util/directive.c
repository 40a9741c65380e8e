/* directive.c - required info directives and the attributes each public
 * function supports (one table, also the answer to attribute queries) */
#include "config.h"
#include "core/util/directive.h"
#include "core/util/log.h"

#include <string.h>

#include <pmix.h>
#include <rdpmix.h>

/*
 * The attribute lists say what rdpmix reads (the library, or its server
 * and reference host for requests it forwards).  Keep one list per
 * function in step with the code that reads the keys: an attribute left
 * out makes a call that requires it fail with PMIX_ERR_NOT_SUPPORTED.
 */
#define END NULL

static const char *const init_attrs[] = {
    PMIX_EMBED_BARRIER,         PMIX_PROGRAMMING_MODEL, PMIX_MODEL_LIBRARY_NAME,
    PMIX_MODEL_LIBRARY_VERSION, PMIX_THREADING_MODEL,   END};
static const char *const finalize_attrs[] = {PMIX_EMBED_BARRIER, END};
static const char *const fence_attrs[]    = {PMIX_COLLECT_DATA, PMIX_TIMEOUT,
                                             PMIX_GROUP_FT_COLLECTIVE, END};
static const char *const get_attrs[]   = {PMIX_OPTIONAL,
                                          PMIX_IMMEDIATE,
                                          PMIX_TIMEOUT,
                                          PMIX_SESSION_INFO,
                                          PMIX_NODE_INFO,
                                          PMIX_APP_INFO,
                                          PMIX_HOSTNAME,
                                          PMIX_NODEID,
                                          PMIX_APPNUM,
                                          PMIX_GET_REFRESH_CACHE,
                                          PMIX_GET_STATIC_VALUES,
                                          END};
static const char *const publish_attrs[] = {PMIX_RANGE, PMIX_PERSISTENCE,
                                            PMIX_TIMEOUT, END};
static const char *const lookup_attrs[]  = {PMIX_RANGE, PMIX_WAIT, PMIX_TIMEOUT,
                                            END};
static const char *const unpublish_attrs[]   = {PMIX_RANGE, PMIX_TIMEOUT, END};
static const char *const connect_attrs[]     = {PMIX_TIMEOUT,
                                                RDPMIX_CONNECT_ID,
                                                RDPMIX_CONNECT_NOTIFY_EACH,
                                                RDPMIX_CONNECT_NOTIFY_REQ,
                                                RDPMIX_CONNECT_EARLY_TERM_ALLOWED,
                                                RDPMIX_CONNECT_XCHG_ONLY,
                                                END};
static const char *const disconnect_attrs[]  = {PMIX_TIMEOUT, END};
static const char *const log_attrs[]         = {PMIX_LOG_ONCE,
                                                PMIX_LOG_GENERATE_TIMESTAMP,
                                                PMIX_LOG_TIMESTAMP,
                                                PMIX_LOG_SOURCE,
                                                PMIX_LOG_SYSLOG_PRI,
                                                PMIX_LOG_TAG_OUTPUT,
                                                PMIX_LOG_TIMESTAMP_OUTPUT,
                                                PMIX_LOG_XML_OUTPUT,
                                                PMIX_TIMEOUT,
                                                END};
static const char *const job_control_attrs[] = {PMIX_JOB_CTRL_ID,
                                                PMIX_JOB_CTRL_KILL,
                                                PMIX_JOB_CTRL_TERMINATE,
                                                PMIX_JOB_CTRL_SIGNAL,
                                                PMIX_JOB_CTRL_PREEMPTIBLE,
                                                PMIX_JOB_CTRL_CHECKPOINT_METHOD,
                                                PMIX_TIMEOUT,
                                                END};
static const char *const monitor_attrs[]     = {PMIX_MONITOR_ID,
                                                PMIX_MONITOR_CANCEL,
                                                PMIX_MONITOR_HEARTBEAT,
                                                PMIX_MONITOR_HEARTBEAT_TIME,
                                                PMIX_MONITOR_HEARTBEAT_DROPS,
                                                PMIX_SEND_HEARTBEAT,
                                                PMIX_TIMEOUT,
                                                END};
static const char *const group_attrs[]       = {PMIX_TIMEOUT,
                                                PMIX_GROUP_LEADER,
                                                PMIX_GROUP_OPTIONAL,
                                                PMIX_GROUP_NOTIFY_TERMINATION,
                                                PMIX_GROUP_ASSIGN_CONTEXT_ID,
                                                PMIX_GROUP_FT_COLLECTIVE,
                                                PMIX_GROUP_INFO,
                                                PMIX_GROUP_ENDPT_DATA,
                                                END};
static const char *const register_handler_attrs[] = {
    PMIX_EVENT_HDLR_NAME,
    PMIX_EVENT_HDLR_FIRST,
    PMIX_EVENT_HDLR_LAST,
    PMIX_EVENT_HDLR_FIRST_IN_CATEGORY,
    PMIX_EVENT_HDLR_LAST_IN_CATEGORY,
    PMIX_EVENT_HDLR_BEFORE,
    PMIX_EVENT_HDLR_AFTER,
    PMIX_EVENT_HDLR_PREPEND,
    PMIX_EVENT_HDLR_APPEND,
    PMIX_EVENT_CUSTOM_RANGE,
    PMIX_EVENT_AFFECTED_PROC,
    PMIX_EVENT_AFFECTED_PROCS,
    PMIX_EVENT_RETURN_OBJECT,
    END};
static const char *const notify_attrs[] = {
    PMIX_EVENT_NON_DEFAULT,   PMIX_EVENT_CUSTOM_RANGE,
    PMIX_EVENT_AFFECTED_PROC, PMIX_EVENT_AFFECTED_PROCS,
    PMIX_EVENT_DO_NOT_CACHE,  END};
static const char *const server_init_attrs[] = {
    PMIX_SERVER_TMPDIR,  PMIX_SYSTEM_TMPDIR,
    PMIX_SERVER_NSPACE,  PMIX_SERVER_RANK,
    PMIX_HOSTNAME,       RDPMIX_ENGINE,
    RDPMIX_SERVER_INDEX, END};
static const char *const tool_init_attrs[] = {PMIX_TOOL_NSPACE,
                                              PMIX_TOOL_RANK,
                                              PMIX_SERVER_URI,
                                              PMIX_SERVER_PIDINFO,
                                              PMIX_SERVER_NSPACE,
                                              PMIX_CONNECT_TO_SYSTEM,
                                              PMIX_CONNECT_SYSTEM_FIRST,
                                              PMIX_CONNECT_MAX_RETRIES,
                                              PMIX_CONNECT_RETRY_DELAY,
                                              PMIX_TOOL_DO_NOT_CONNECT,
                                              PMIX_TOOL_CONNECT_OPTIONAL,
                                              PMIX_LAUNCHER,
                                              PMIX_SERVER_TMPDIR,
                                              PMIX_SYSTEM_TMPDIR,
                                              END};
static const char *const spawn_attrs[]     = {PMIX_TIMEOUT, END};
static const char *const none_attrs[]      = {END};

enum {
    TAKES_DATA = 1, /* keys that are no attribute are the caller's data */
    TAKES_ANY  = 2, /* every key is the host's data: nothing is checked */
    STUB       = 4, /* returns PMIX_ERR_NOT_SUPPORTED whatever it gets */
};

typedef struct fn_attrs {
    const char *function; /* without "_nb" */
    rdp_api_kind_t kind;
    int flags;
    const char *const *attrs;
} fn_attrs_t;

static const fn_attrs_t functions[] = {
    {"PMIx_Init", RDP_API_CLIENT, 0, init_attrs},
    {"PMIx_Finalize", RDP_API_CLIENT, 0, finalize_attrs},
    {"PMIx_Fence", RDP_API_CLIENT, 0, fence_attrs},
    {"PMIx_Get", RDP_API_CLIENT, 0, get_attrs},
    {"PMIx_Publish", RDP_API_CLIENT, TAKES_DATA, publish_attrs},
    {"PMIx_Lookup", RDP_API_CLIENT, 0, lookup_attrs},
    {"PMIx_Unpublish", RDP_API_CLIENT, 0, unpublish_attrs},
    {"PMIx_Spawn", RDP_API_CLIENT, 0, spawn_attrs},
    {"PMIx_Connect", RDP_API_CLIENT, 0, connect_attrs},
    {"PMIx_Disconnect", RDP_API_CLIENT, 0, disconnect_attrs},
    {"PMIx_Log", RDP_API_CLIENT, 0, log_attrs},
    {"PMIx_Allocation_request", RDP_API_CLIENT, 0, none_attrs},
    {"PMIx_Job_control", RDP_API_CLIENT, 0, job_control_attrs},
    {"PMIx_Process_monitor", RDP_API_CLIENT, 0, monitor_attrs},
    {"PMIx_Get_credential", RDP_API_CLIENT, 0, none_attrs},
    {"PMIx_Validate_credential", RDP_API_CLIENT, 0, none_attrs},
    {"PMIx_Group_construct", RDP_API_CLIENT, 0, group_attrs},
    {"PMIx_Group_invite", RDP_API_CLIENT, 0, group_attrs},
    {"PMIx_Group_join", RDP_API_CLIENT, 0, group_attrs},
    {"PMIx_Group_leave", RDP_API_CLIENT, 0, group_attrs},
    {"PMIx_Group_destruct", RDP_API_CLIENT, 0, group_attrs},
    {"PMIx_Register_event_handler", RDP_API_CLIENT, 0, register_handler_attrs},
    {"PMIx_Notify_event", RDP_API_CLIENT, TAKES_DATA, notify_attrs},
    {"PMIx_Fabric_register", RDP_API_CLIENT, 0, none_attrs},
    {"PMIx_Compute_distances", RDP_API_CLIENT, 0, none_attrs},
    {"PMIx_server_init", RDP_API_SERVER, 0, server_init_attrs},
    {"PMIx_server_register_nspace", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_setup_application", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_setup_local_support", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_IOF_deliver", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_collect_inventory", RDP_API_SERVER, 0, none_attrs},
    {"PMIx_server_deliver_inventory", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_register_resources", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_server_deregister_resources", RDP_API_SERVER, TAKES_ANY, none_attrs},
    {"PMIx_tool_init", RDP_API_TOOL, 0, tool_init_attrs},
    {"PMIx_tool_finalize", RDP_API_TOOL, 0, none_attrs},
    {"PMIx_tool_attach_to_server", RDP_API_TOOL, 0, tool_init_attrs},
    {"PMIx_tool_connect_to_server", RDP_API_TOOL, 0, tool_init_attrs},
    {"PMIx_tool_disconnect", RDP_API_TOOL, 0, none_attrs},
    {"PMIx_tool_get_servers", RDP_API_TOOL, 0, none_attrs},
    {"PMIx_tool_set_server", RDP_API_TOOL, 0, none_attrs},
    {"PMIx_IOF_pull", RDP_API_TOOL, STUB, none_attrs},
    {"PMIx_IOF_deregister", RDP_API_TOOL, STUB, none_attrs},
    {"PMIx_IOF_push", RDP_API_TOOL, STUB, none_attrs},
};
#define NFUNCTIONS (sizeof(functions) / sizeof(functions[0]))

/* the Standard's attribute strings, to tell directives from data */
static const char *const std_attrs[] = {
#define RDP_ATTR(x) x,
#include "core/util/attr_table.h"
#undef RDP_ATTR
};

/* "PMIx_Fence_nb" and "PMIx_Fence" find the same row */
static const fn_attrs_t *find_function(const char *function)
{
    size_t len;

    if (function == NULL) {
        return NULL;
    }
    len = strlen(function);
    if (len > 3 && strcmp(function + len - 3, "_nb") == 0) {
        len -= 3;
    }
    for (size_t i = 0; i < NFUNCTIONS; i++) {
        if (strlen(functions[i].function) == len
            && strncmp(functions[i].function, function, len) == 0) {
            return &functions[i];
        }
    }
    return NULL;
}

static bool key_is(const char *key, const char *attr)
{
    return strncmp(key, attr, PMIX_MAX_KEYLEN) == 0;
}

static bool in_list(const char *const *list, const char *key)
{
    for (size_t i = 0; list[i] != NULL; i++) {
        if (key_is(key, list[i])) {
            return true;
        }
    }
    return false;
}

/* a key of the Standard or of rdpmix (rather than the caller's own) */
static bool is_attribute(const char *key)
{
    if (strncmp(key, "rdpmix.", 7) == 0) {
        return true;
    }
    for (size_t i = 0; i < sizeof(std_attrs) / sizeof(std_attrs[0]); i++) {
        if (key_is(key, std_attrs[i])) {
            return true;
        }
    }
    return false;
}

static bool row_supports(const fn_attrs_t *row, const char *key)
{
    if (row->flags & TAKES_ANY) {
        return true;
    }
    if (in_list(row->attrs, key)) {
        return true;
    }
    return (row->flags & TAKES_DATA) != 0 && !is_attribute(key);
}

bool rdp_attr_is_supported(const char *function, const char *key)
{
    const fn_attrs_t *row = find_function(function);

    return row != NULL && key != NULL && row_supports(row, key);
}

bool rdp_attr_is_stub(const char *function)
{
    const fn_attrs_t *row = find_function(function);

    return row != NULL && (row->flags & STUB) != 0;
}

bool rdp_attr_takes_any(const char *function)
{
    const fn_attrs_t *row = find_function(function);

    return row != NULL && (row->flags & TAKES_ANY) != 0;
}

pmix_status_t rdp_directives_check(const char *function,
                                   const pmix_info_t *info, size_t ninfo)
{
    const fn_attrs_t *row = find_function(function);

    if (info == NULL) {
        return PMIX_SUCCESS;
    }
    for (size_t i = 0; i < ninfo; i++) {
        char key[PMIX_MAX_KEYLEN + 1];

        if (!PMIX_INFO_IS_REQUIRED(&info[i])) {
            continue; /* optional: ignored when not understood */
        }
        memcpy(key, info[i].key, PMIX_MAX_KEYLEN);
        key[PMIX_MAX_KEYLEN] = '\0';
        if (row == NULL || !row_supports(row, key)) {
            rdp_log_debug(CORE,
                          "%s: required directive %s (%s) is not supported",
                          function, key, PMIx_Get_attribute_name(key));
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    return PMIX_SUCCESS;
}

const char *rdp_attr_function_name(size_t i, rdp_api_kind_t *kind_p)
{
    if (i >= NFUNCTIONS) {
        return NULL;
    }
    if (kind_p != NULL) {
        *kind_p = functions[i].kind;
    }
    return functions[i].function;
}

const char *rdp_attr_supported_by(const char *function, size_t i)
{
    const fn_attrs_t *row = find_function(function);

    for (size_t k = 0; row != NULL && row->attrs[k] != NULL; k++) {
        if (k == i) {
            return row->attrs[k];
        }
    }
    return NULL;
}

/* ---- the Standard's helpers for the directive flags (its v5 function
 * forms of pmix_common.h's PMIX_INFO_* macros; OpenPMIx 4.2.2 has only
 * the macros, so these are extra exports that nothing else depends on) */

void PMIx_Info_required(pmix_info_t *p)
{
    PMIX_INFO_REQUIRED(p);
}

void PMIx_Info_optional(pmix_info_t *p)
{
    PMIX_INFO_OPTIONAL(p);
}

bool PMIx_Info_is_required(const pmix_info_t *p)
{
    return PMIX_INFO_IS_REQUIRED(p) != 0;
}

bool PMIx_Info_is_optional(const pmix_info_t *p)
{
    return PMIX_INFO_IS_OPTIONAL(p);
}

void PMIx_Info_processed(pmix_info_t *p)
{
    PMIX_INFO_PROCESSED(p);
}

bool PMIx_Info_was_processed(const pmix_info_t *p)
{
    return PMIX_INFO_WAS_PROCESSED(p) != 0;
}

void PMIx_Info_set_end(pmix_info_t *p)
{
    PMIX_INFO_SET_END(p);
}

bool PMIx_Info_is_end(const pmix_info_t *p)
{
    return PMIX_INFO_IS_END(p) != 0;
}

void PMIx_Info_qualifier(pmix_info_t *p)
{
    PMIX_INFO_SET_QUALIFIER(p);
}

bool PMIx_Info_is_qualifier(const pmix_info_t *p)
{
    return PMIX_INFO_IS_QUALIFIER(p) != 0;
}

void PMIx_Info_persistent(pmix_info_t *p)
{
    PMIX_INFO_SET_PERSISTENT(p);
}

bool PMIx_Info_is_persistent(const pmix_info_t *p)
{
    return PMIX_INFO_IS_PERSISTENT(p) != 0;
}
