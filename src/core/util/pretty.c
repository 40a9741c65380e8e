/* pretty.c - printable names and text renderings of PMIx Standard data */
#include "config.h"
#include "core/util/value.h"
#include "core/util/alloc.h"
#include "core/util/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pmix.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* status codes: the constant's own name is the readable form           */
/* ------------------------------------------------------------------ */

typedef struct {
    pmix_status_t code;
    const char *name;
} status_name_t;

#define E(x)  \
    {         \
        x, #x \
    }
/* one entry per value; deprecated aliases are left out in favour of the
 * current name */
static const status_name_t status_names[] = {
    E(PMIX_SUCCESS),
    E(PMIX_ERROR),
    E(PMIX_ERR_SILENT),
    E(PMIX_DEBUGGER_RELEASE),
    E(PMIX_ERR_PROC_RESTART),
    E(PMIX_ERR_PROC_CHECKPOINT),
    E(PMIX_ERR_PROC_MIGRATE),
    E(PMIX_ERR_PROC_ABORTED),
    E(PMIX_ERR_PROC_REQUESTED_ABORT),
    E(PMIX_ERR_PROC_ABORTING),
    E(PMIX_ERR_SERVER_FAILED_REQUEST),
    E(PMIX_ERR_EXISTS),
    E(PMIX_ERR_INVALID_CRED),
    E(PMIX_ERR_HANDSHAKE_FAILED),
    E(PMIX_ERR_READY_FOR_HANDSHAKE),
    E(PMIX_ERR_WOULD_BLOCK),
    E(PMIX_ERR_UNKNOWN_DATA_TYPE),
    E(PMIX_ERR_PROC_ENTRY_NOT_FOUND),
    E(PMIX_ERR_TYPE_MISMATCH),
    E(PMIX_ERR_UNPACK_INADEQUATE_SPACE),
    E(PMIX_ERR_UNPACK_FAILURE),
    E(PMIX_ERR_PACK_FAILURE),
    E(PMIX_ERR_PACK_MISMATCH),
    E(PMIX_ERR_NO_PERMISSIONS),
    E(PMIX_ERR_TIMEOUT),
    E(PMIX_ERR_UNREACH),
    E(PMIX_ERR_IN_ERRNO),
    E(PMIX_ERR_BAD_PARAM),
    E(PMIX_ERR_RESOURCE_BUSY),
    E(PMIX_ERR_OUT_OF_RESOURCE),
    E(PMIX_ERR_DATA_VALUE_NOT_FOUND),
    E(PMIX_ERR_INIT),
    E(PMIX_ERR_NOMEM),
    E(PMIX_ERR_INVALID_ARG),
    E(PMIX_ERR_INVALID_KEY),
    E(PMIX_ERR_INVALID_KEY_LENGTH),
    E(PMIX_ERR_INVALID_VAL),
    E(PMIX_ERR_INVALID_VAL_LENGTH),
    E(PMIX_ERR_INVALID_LENGTH),
    E(PMIX_ERR_INVALID_NUM_ARGS),
    E(PMIX_ERR_INVALID_ARGS),
    E(PMIX_ERR_INVALID_NUM_PARSED),
    E(PMIX_ERR_INVALID_KEYVALP),
    E(PMIX_ERR_INVALID_SIZE),
    E(PMIX_ERR_INVALID_NAMESPACE),
    E(PMIX_ERR_SERVER_NOT_AVAIL),
    E(PMIX_ERR_NOT_FOUND),
    E(PMIX_ERR_NOT_SUPPORTED),
    E(PMIX_ERR_NOT_IMPLEMENTED),
    E(PMIX_ERR_COMM_FAILURE),
    E(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER),
    E(PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES),
    E(PMIX_ERR_PARTIAL_SUCCESS),
    E(PMIX_ERR_DUPLICATE_KEY),
    E(PMIX_PROCESS_SET_DEFINE),
    E(PMIX_PROCESS_SET_DELETE),
    E(PMIX_READY_FOR_DEBUG),
    E(PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED),
    E(PMIX_ERR_EMPTY),
    E(PMIX_ERR_LOST_CONNECTION),
    E(PMIX_ERR_EXISTS_OUTSIDE_SCOPE),
    E(PMIX_ERR_FATAL),
    E(PMIX_ERR_NOT_AVAILABLE),
    E(PMIX_ERR_VALUE_OUT_OF_BOUNDS),
    E(PMIX_ERR_NOT_A_MEMBER),
    E(PMIX_ERR_FILE_OPEN_FAILURE),
    E(PMIX_ERR_FILE_READ_FAILURE),
    E(PMIX_ERR_FILE_WRITE_FAILURE),
    E(PMIX_ERR_SYS_LIMITS_PIPES),
    E(PMIX_ERR_SYS_LIMITS_CHILDREN),
    E(PMIX_ERR_PIPE_SETUP_FAILURE),
    E(PMIX_ERR_EXE_NOT_ACCESSIBLE),
    E(PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE),
    E(PMIX_ERR_SYS_LIMITS_FILES),
    E(PMIX_ERR_LOST_CONNECTION_TO_SERVER),
    E(PMIX_ERR_LOST_PEER_CONNECTION),
    E(PMIX_ERR_LOST_CONNECTION_TO_CLIENT),
    E(PMIX_QUERY_PARTIAL_SUCCESS),
    E(PMIX_NOTIFY_ALLOC_COMPLETE),
    E(PMIX_JCTRL_CHECKPOINT),
    E(PMIX_JCTRL_CHECKPOINT_COMPLETE),
    E(PMIX_JCTRL_PREEMPT_ALERT),
    E(PMIX_MONITOR_HEARTBEAT_ALERT),
    E(PMIX_MONITOR_FILE_ALERT),
    E(PMIX_PROC_TERMINATED),
    E(PMIX_ERR_INVALID_TERMINATION),
    E(PMIX_FABRIC_UPDATE_ENDPOINTS),
    E(PMIX_MONITOR_RESUSAGE_UPDATE),
    E(PMIX_ERR_EVENT_REGISTRATION),
    E(PMIX_EVENT_JOB_END),
    E(PMIX_ERR_UPDATE_ENDPOINTS),
    E(PMIX_MODEL_DECLARED),
    E(PMIX_GDS_ACTION_COMPLETE),
    E(PMIX_PROC_HAS_CONNECTED),
    E(PMIX_CONNECT_REQUESTED),
    E(PMIX_MODEL_RESOURCES),
    E(PMIX_OPENMP_PARALLEL_ENTERED),
    E(PMIX_OPENMP_PARALLEL_EXITED),
    E(PMIX_LAUNCHER_READY),
    E(PMIX_OPERATION_IN_PROGRESS),
    E(PMIX_OPERATION_SUCCEEDED),
    E(PMIX_ERR_INVALID_OPERATION),
    E(PMIX_GROUP_INVITED),
    E(PMIX_GROUP_LEFT),
    E(PMIX_GROUP_INVITE_ACCEPTED),
    E(PMIX_GROUP_INVITE_DECLINED),
    E(PMIX_GROUP_INVITE_FAILED),
    E(PMIX_GROUP_MEMBERSHIP_UPDATE),
    E(PMIX_GROUP_CONSTRUCT_ABORT),
    E(PMIX_GROUP_CONSTRUCT_COMPLETE),
    E(PMIX_GROUP_LEADER_SELECTED),
    E(PMIX_GROUP_LEADER_FAILED),
    E(PMIX_GROUP_CONTEXT_ID_ASSIGNED),
    E(PMIX_GROUP_MEMBER_FAILED),
    E(PMIX_ERR_REPEAT_ATTR_REGISTRATION),
    E(PMIX_ERR_IOF_FAILURE),
    E(PMIX_ERR_IOF_COMPLETE),
    E(PMIX_LAUNCH_COMPLETE),
    E(PMIX_FABRIC_UPDATED),
    E(PMIX_FABRIC_UPDATE_PENDING),
    E(PMIX_ERR_JOB_APP_NOT_EXECUTABLE),
    E(PMIX_ERR_JOB_NO_EXE_SPECIFIED),
    E(PMIX_ERR_JOB_FAILED_TO_MAP),
    E(PMIX_ERR_JOB_CANCELED),
    E(PMIX_ERR_JOB_FAILED_TO_LAUNCH),
    E(PMIX_ERR_JOB_ABORTED),
    E(PMIX_ERR_JOB_KILLED_BY_CMD),
    E(PMIX_ERR_JOB_ABORTED_BY_SIG),
    E(PMIX_ERR_JOB_TERM_WO_SYNC),
    E(PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED),
    E(PMIX_ERR_JOB_NON_ZERO_TERM),
    E(PMIX_ERR_JOB_ALLOC_FAILED),
    E(PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT),
    E(PMIX_ERR_JOB_EXE_NOT_FOUND),
    E(PMIX_EVENT_JOB_START),
    E(PMIX_EVENT_SESSION_START),
    E(PMIX_EVENT_SESSION_END),
    E(PMIX_ALLOC_TIMEOUT_WARNING),
    E(PMIX_DVM_IS_READY),
    E(PMIX_ERR_DVM_MOD),
    E(PMIX_ERR_PROC_TERM_WO_SYNC),
    E(PMIX_EVENT_PROC_TERMINATED),
    E(PMIX_ERR_LOST_PRECISION),
    E(PMIX_ERR_CHANGE_SIGN),
    E(PMIX_EVENT_SYS_BASE),
    E(PMIX_EVENT_NODE_DOWN),
    E(PMIX_EVENT_NODE_OFFLINE),
    E(PMIX_ERR_JOB_WDIR_NOT_FOUND),
    E(PMIX_ERR_JOB_INSUFFICIENT_RESOURCES),
    E(PMIX_ERR_JOB_SYS_OP_FAILED),
    E(PMIX_EVENT_SYS_OTHER),
    E(PMIX_EVENT_NO_ACTION_TAKEN),
    E(PMIX_EVENT_PARTIAL_ACTION_TAKEN),
    E(PMIX_EVENT_ACTION_DEFERRED),
    E(PMIX_EVENT_ACTION_COMPLETE),
    E(PMIX_ERR_PROC_KILLED_BY_CMD),
    E(PMIX_ERR_PROC_FAILED_TO_START),
    E(PMIX_ERR_PROC_ABORTED_BY_SIG),
    E(PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED),
    E(PMIX_ERR_EXIT_NONZERO_TERM),
    E(PMIX_ERR_IOF_XOFF),
    E(PMIX_EXTERNAL_ERR_BASE),
};
#undef E

const char *rdp_status_name(pmix_status_t status)
{
    size_t i;

    for (i = 0; i < ARRAY_LEN(status_names); i++) {
        if (status_names[i].code == status) {
            return status_names[i].name;
        }
    }
    if (status <= PMIX_EXTERNAL_ERR_BASE) {
        return "EXTERNAL ERROR";
    }
    return "UNKNOWN ERROR";
}

/* What OpenPMIx 4.2.2 answers (programs and test suites compare these
 * strings): generated from its library by gen_error_strings.sh. */
static const status_name_t openpmix_strings[] = {
#include "core/util/error_strings.h"
};

const char *PMIx_Error_string(pmix_status_t status)
{
    size_t i;

    for (i = 0; i < ARRAY_LEN(openpmix_strings); i++) {
        if (openpmix_strings[i].code == status) {
            return openpmix_strings[i].name;
        }
    }
    /* codes of our headers that OpenPMIx 4.2.2 does not know read as their
     * constant's name */
    for (i = 0; i < ARRAY_LEN(status_names); i++) {
        if (status_names[i].code == status) {
            return status_names[i].name;
        }
    }
    return "ERROR STRING NOT FOUND";
}

/* ------------------------------------------------------------------ */
/* enumerations                                                         */
/* ------------------------------------------------------------------ */

/* name of a value in a sparse table, or @a unknown */
typedef struct {
    unsigned value;
    const char *name;
} enum_name_t;

static const char *lookup(const enum_name_t *tab, size_t n, unsigned value,
                          const char *unknown)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (tab[i].value == value) {
            return tab[i].name;
        }
    }
    return unknown;
}

#define LOOKUP(tab, v, unknown) lookup(tab, ARRAY_LEN(tab), (v), unknown)

/* What OpenPMIx 4.2.2's *_string functions answer for the values it knows
 * (programs print and compare them): generated from its library by
 * gen_enum_strings.sh.  The tables below cover the values it does not. */
typedef struct {
    const char *family; /* "proc_state" */
    uint64_t value;
    const char *text;
} enum_text_t;

static const enum_text_t openpmix_texts[] = {
#define RDP_ENUM_STRING(f, n, s) {#f, (uint64_t)(n), s},
#include "core/util/enum_strings.h"
#undef RDP_ENUM_STRING
};

static const char *openpmix_text(const char *family, uint64_t value)
{
    for (size_t i = 0; i < ARRAY_LEN(openpmix_texts); i++) {
        if (openpmix_texts[i].value == value
            && strcmp(openpmix_texts[i].family, family) == 0) {
            return openpmix_texts[i].text;
        }
    }
    return NULL;
}

/* OpenPMIx's text of @a v, else ours from @a tab, else @a unknown */
#define TEXT(family, tab, v, unknown)                                \
    (openpmix_text(family, (v)) != NULL ? openpmix_text(family, (v)) \
                                        : LOOKUP(tab, (v), unknown))

#define T(x)  \
    {         \
        x, #x \
    }
static const enum_name_t type_names[] = {
    T(PMIX_UNDEF),
    T(PMIX_BOOL),
    T(PMIX_BYTE),
    T(PMIX_STRING),
    T(PMIX_SIZE),
    T(PMIX_PID),
    T(PMIX_INT),
    T(PMIX_INT8),
    T(PMIX_INT16),
    T(PMIX_INT32),
    T(PMIX_INT64),
    T(PMIX_UINT),
    T(PMIX_UINT8),
    T(PMIX_UINT16),
    T(PMIX_UINT32),
    T(PMIX_UINT64),
    T(PMIX_FLOAT),
    T(PMIX_DOUBLE),
    T(PMIX_TIMEVAL),
    T(PMIX_TIME),
    T(PMIX_STATUS),
    T(PMIX_VALUE),
    T(PMIX_PROC),
    T(PMIX_APP),
    T(PMIX_INFO),
    T(PMIX_PDATA),
    T(PMIX_BUFFER),
    T(PMIX_BYTE_OBJECT),
    T(PMIX_KVAL),
    T(PMIX_PERSIST),
    T(PMIX_POINTER),
    T(PMIX_SCOPE),
    T(PMIX_DATA_RANGE),
    T(PMIX_COMMAND),
    T(PMIX_INFO_DIRECTIVES),
    T(PMIX_DATA_TYPE),
    T(PMIX_PROC_STATE),
    T(PMIX_PROC_INFO),
    T(PMIX_DATA_ARRAY),
    T(PMIX_PROC_RANK),
    T(PMIX_QUERY),
    T(PMIX_COMPRESSED_STRING),
    T(PMIX_ALLOC_DIRECTIVE),
    T(PMIX_IOF_CHANNEL),
    T(PMIX_ENVAR),
    T(PMIX_COORD),
    T(PMIX_REGATTR),
    T(PMIX_REGEX),
    T(PMIX_JOB_STATE),
    T(PMIX_LINK_STATE),
    T(PMIX_PROC_CPUSET),
    T(PMIX_GEOMETRY),
    T(PMIX_DEVICE_DIST),
    T(PMIX_ENDPOINT),
    T(PMIX_TOPO),
    T(PMIX_DEVTYPE),
    T(PMIX_LOCTYPE),
    T(PMIX_COMPRESSED_BYTE_OBJECT),
    T(PMIX_PROC_NSPACE),
    T(PMIX_PROC_STATS),
    T(PMIX_DISK_STATS),
    T(PMIX_NET_STATS),
    T(PMIX_NODE_STATS),
    T(PMIX_DATA_BUFFER),
    T(PMIX_STOR_MEDIUM),
    T(PMIX_STOR_ACCESS),
    T(PMIX_STOR_PERSIST),
    T(PMIX_STOR_ACCESS_TYPE),
};
#undef T

const char *PMIx_Data_type_string(pmix_data_type_t type)
{
    return TEXT("data_type", type_names, type, "UNKNOWN DATA TYPE");
}

static const enum_name_t proc_state_names[] = {
    {PMIX_PROC_STATE_UNDEF, "UNDEFINED"},
    {PMIX_PROC_STATE_PREPPED, "PREPPED"},
    {PMIX_PROC_STATE_LAUNCH_UNDERWAY, "LAUNCH UNDERWAY"},
    {PMIX_PROC_STATE_RESTART, "READY TO RESTART"},
    {PMIX_PROC_STATE_TERMINATE, "TO BE TERMINATED"},
    {PMIX_PROC_STATE_RUNNING, "RUNNING"},
    {PMIX_PROC_STATE_CONNECTED, "CONNECTED"},
    {PMIX_PROC_STATE_UNTERMINATED, "NOT TERMINATED"},
    {PMIX_PROC_STATE_TERMINATED, "TERMINATED"},
    {PMIX_PROC_STATE_ERROR, "ERROR"},
    {PMIX_PROC_STATE_KILLED_BY_CMD, "KILLED BY COMMAND"},
    {PMIX_PROC_STATE_ABORTED, "ABORTED"},
    {PMIX_PROC_STATE_FAILED_TO_START, "FAILED TO START"},
    {PMIX_PROC_STATE_ABORTED_BY_SIG, "KILLED BY SIGNAL"},
    {PMIX_PROC_STATE_TERM_WO_SYNC, "EXITED WITHOUT FINALIZE"},
    {PMIX_PROC_STATE_COMM_FAILED, "COMMUNICATION FAILED"},
    {PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED, "SENSOR LIMIT EXCEEDED"},
    {PMIX_PROC_STATE_CALLED_ABORT, "CALLED ABORT"},
    {PMIX_PROC_STATE_HEARTBEAT_FAILED, "MISSED HEARTBEAT"},
    {PMIX_PROC_STATE_MIGRATING, "MIGRATING"},
    {PMIX_PROC_STATE_CANNOT_RESTART, "CANNOT RESTART"},
    {PMIX_PROC_STATE_TERM_NON_ZERO, "EXITED WITH NON-ZERO STATUS"},
    {PMIX_PROC_STATE_FAILED_TO_LAUNCH, "FAILED TO LAUNCH"},
};

const char *PMIx_Proc_state_string(pmix_proc_state_t state)
{
    return TEXT("proc_state", proc_state_names, state, "UNKNOWN STATE");
}

static const enum_name_t job_state_names[] = {
    {PMIX_JOB_STATE_UNDEF, "UNDEFINED"},
    {PMIX_JOB_STATE_AWAITING_ALLOC, "AWAITING ALLOCATION"},
    {PMIX_JOB_STATE_LAUNCH_UNDERWAY, "LAUNCH UNDERWAY"},
    {PMIX_JOB_STATE_RUNNING, "RUNNING"},
    {PMIX_JOB_STATE_SUSPENDED, "SUSPENDED"},
    {PMIX_JOB_STATE_CONNECTED, "CONNECTED"},
    {PMIX_JOB_STATE_UNTERMINATED, "NOT TERMINATED"},
    {PMIX_JOB_STATE_TERMINATED, "TERMINATED"},
    {PMIX_JOB_STATE_TERMINATED_WITH_ERROR, "TERMINATED WITH ERROR"},
};

const char *PMIx_Job_state_string(pmix_job_state_t state)
{
    return TEXT("job_state", job_state_names, state, "UNKNOWN STATE");
}

static const enum_name_t scope_names[] = {
    {PMIX_SCOPE_UNDEF, "UNDEFINED"}, {PMIX_LOCAL, "LOCAL"},
    {PMIX_REMOTE, "REMOTE"},         {PMIX_GLOBAL, "GLOBAL"},
    {PMIX_INTERNAL, "INTERNAL"},
};

const char *PMIx_Scope_string(pmix_scope_t scope)
{
    return TEXT("scope", scope_names, scope, "UNKNOWN SCOPE");
}

static const enum_name_t range_names[] = {
    {PMIX_RANGE_UNDEF, "UNDEFINED"},  {PMIX_RANGE_RM, "RESOURCE MANAGER"},
    {PMIX_RANGE_LOCAL, "LOCAL NODE"}, {PMIX_RANGE_NAMESPACE, "NAMESPACE"},
    {PMIX_RANGE_SESSION, "SESSION"},  {PMIX_RANGE_GLOBAL, "GLOBAL"},
    {PMIX_RANGE_CUSTOM, "CUSTOM"},    {PMIX_RANGE_PROC_LOCAL, "PROCESS LOCAL"},
    {PMIX_RANGE_INVALID, "INVALID"},
};

const char *PMIx_Data_range_string(pmix_data_range_t range)
{
    return TEXT("data_range", range_names, range, "UNKNOWN RANGE");
}

static const enum_name_t persistence_names[] = {
    {PMIX_PERSIST_INDEF, "INDEFINITE"},
    {PMIX_PERSIST_FIRST_READ, "UNTIL FIRST READ"},
    {PMIX_PERSIST_PROC, "UNTIL PUBLISHER EXITS"},
    {PMIX_PERSIST_APP, "UNTIL APPLICATION EXITS"},
    {PMIX_PERSIST_SESSION, "UNTIL SESSION ENDS"},
    {PMIX_PERSIST_INVALID, "INVALID"},
};

const char *PMIx_Persistence_string(pmix_persistence_t persist)
{
    return TEXT("persistence", persistence_names, persist,
                "UNKNOWN PERSISTENCE");
}

static const enum_name_t alloc_names[] = {
    {PMIX_ALLOC_NEW, "NEW"},
    {PMIX_ALLOC_EXTEND, "EXTEND"},
    {PMIX_ALLOC_RELEASE, "RELEASE"},
    {PMIX_ALLOC_REAQUIRE, "REACQUIRE"},
};

const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive)
{
    if (directive >= PMIX_ALLOC_EXTERNAL) {
        return "EXTERNAL";
    }
    return TEXT("alloc_directive", alloc_names, directive, "UNSPECIFIED");
}

static const enum_name_t link_state_names[] = {
    {PMIX_LINK_STATE_UNKNOWN, "UNKNOWN"},
    {PMIX_LINK_DOWN, "DOWN"},
    {PMIX_LINK_UP, "UP"},
};

const char *PMIx_Link_state_string(pmix_link_state_t state)
{
    return TEXT("link_state", link_state_names, state, "UNKNOWN");
}

static const enum_name_t cmp_names[] = {
    {PMIX_EQUAL, "EQUAL"},
    {PMIX_VALUE1_GREATER, "VALUE1 GREATER"},
    {PMIX_VALUE2_GREATER, "VALUE2 GREATER"},
    {PMIX_VALUE_TYPE_DIFFERENT, "DIFFERENT TYPES"},
    {PMIX_VALUE_INCOMPATIBLE_OBJECTS, "INCOMPATIBLE OBJECTS"},
    {PMIX_VALUE_COMPARISON_NOT_AVAIL, "COMPARISON NOT AVAILABLE"},
};

const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp)
{
    return TEXT("value_cmp", cmp_names, (unsigned)cmp, "UNKNOWN COMPARISON");
}

/* ------------------------------------------------------------------ */
/* bit sets                                                             */
/* ------------------------------------------------------------------ */

/* Write the names of the bits of @a bits found in @a tab into @a buf,
 * separated by @a sep; "" when none is set. */
static const char *bits_string(char *buf, size_t len, const enum_name_t *tab,
                               size_t n, uint64_t bits, const char *sep)
{
    size_t i, used = 0;

    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        if ((bits & tab[i].value) != 0 && used < len) {
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     used > 0 ? sep : "", tab[i].name);
        }
    }
    return buf;
}

static const enum_name_t iof_names[] = {
    {PMIX_FWD_STDIN_CHANNEL, "STDIN"},
    {PMIX_FWD_STDOUT_CHANNEL, "STDOUT"},
    {PMIX_FWD_STDERR_CHANNEL, "STDERR"},
    {PMIX_FWD_STDDIAG_CHANNEL, "STDDIAG"},
};

const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel)
{
    static __thread char buf[64];

    size_t used = 0;

    /* each channel's name and a space, as OpenPMIx writes them */
    buf[0] = '\0';
    for (size_t i = 0; i < ARRAY_LEN(iof_names); i++) {
        if ((channel & iof_names[i].value) != 0) {
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s ",
                                     iof_names[i].name);
        }
    }
    return (buf[0] == '\0') ? "NONE" : buf;
}

static const enum_name_t devtype_names[] = {
    {PMIX_DEVTYPE_BLOCK, "BLOCK"},
    {PMIX_DEVTYPE_GPU, "GPU"},
    {PMIX_DEVTYPE_NETWORK, "NETWORK"},
    {PMIX_DEVTYPE_OPENFABRICS, "OPENFABRICS"},
    {PMIX_DEVTYPE_DMA, "DMA"},
    {PMIX_DEVTYPE_COPROC, "COPROCESSOR"},
};

const char *PMIx_Device_type_string(pmix_device_type_t type)
{
    static __thread char buf[96];

    bits_string(buf, sizeof(buf), devtype_names, ARRAY_LEN(devtype_names), type,
                "|");
    return (buf[0] == '\0') ? "UNKNOWN" : buf;
}

/* As OpenPMIx 4.2.2 writes them (PMIX_INFO_PERSISTENT is newer and not
 * shown): a qualifier is just that, any other entry is required or
 * optional, then whether it was processed and whether it ends an array. */
char *PMIx_Info_directives_string(pmix_info_directives_t directives)
{
    char text[64];

    if (directives & PMIX_INFO_QUALIFIER) {
        return rdp_strdup("QUALIFIER");
    }
    snprintf(text, sizeof(text), "%s%s%s",
             (directives & PMIX_INFO_REQD) ? "REQUIRED" : "OPTIONAL",
             (directives & PMIX_INFO_REQD_PROCESSED) ? ":PROCESSED" : "",
             (directives & PMIX_INFO_ARRAY_END) ? ":END" : "");
    return rdp_strdup(text);
}

/* ------------------------------------------------------------------ */
/* attribute names <-> strings                                          */
/* ------------------------------------------------------------------ */

typedef struct {
    const char *name;   /* "PMIX_JOB_SIZE" */
    const char *string; /* "pmix.job.size" */
} attr_name_t;

/* in header order: where two names share a string, the first (current)
 * name wins the reverse lookup */
static const attr_name_t attr_names[] = {
#define RDP_ATTR(x) {#x, x},
#include "core/util/attr_table.h"
#undef RDP_ATTR
};

const char *PMIx_Get_attribute_string(const char *attribute)
{
    size_t i;

    if (attribute == NULL) {
        return NULL;
    }
    for (i = 0; i < ARRAY_LEN(attr_names); i++) {
        if (strcmp(attr_names[i].name, attribute) == 0) {
            return attr_names[i].string;
        }
    }
    return attribute; /* unknown names are echoed, as the Standard library */
}

const char *PMIx_Get_attribute_name(const char *attrstring)
{
    size_t i;

    if (attrstring == NULL) {
        return NULL;
    }
    for (i = 0; i < ARRAY_LEN(attr_names); i++) {
        if (strcmp(attr_names[i].string, attrstring) == 0) {
            return attr_names[i].name;
        }
    }
    return attrstring;
}

/* ------------------------------------------------------------------ */
/* rendering data as text                                               */
/* ------------------------------------------------------------------ */

static void print_elems(FILE *f, pmix_data_type_t type, const void *elems,
                        size_t n);
static void print_value(FILE *f, const pmix_value_t *v);

static const enum_name_t rank_names[] = {
    {PMIX_RANK_UNDEF, "UNDEF"},
    {PMIX_RANK_WILDCARD, "WILDCARD"},
    {PMIX_RANK_LOCAL_NODE, "LOCAL_NODE"},
    {PMIX_RANK_INVALID, "INVALID"},
    {PMIX_RANK_LOCAL_PEERS, "LOCAL_PEERS"},
};

static void print_rank(FILE *f, pmix_rank_t rank)
{
    const char *name = LOOKUP(rank_names, rank, NULL);

    if (name != NULL) {
        fputs(name, f);
    } else {
        fprintf(f, "%" PRIu32, rank);
    }
}

static void print_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("NULL", f);
    } else {
        fprintf(f, "\"%s\"", s);
    }
}

static void print_bytes(FILE *f, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    size_t i, shown = (n > 16) ? 16 : n;

    fprintf(f, "%zu bytes", n);
    if (p == NULL || n == 0) {
        return;
    }
    fputs(" [", f);
    for (i = 0; i < shown; i++) {
        fprintf(f, "%02x", p[i]);
    }
    fputs(n > shown ? "...]" : "]", f);
}

static void print_argv(FILE *f, char **argv)
{
    char *joined = pmix_argv_join(argv, ' ');

    print_str(f, argv == NULL ? NULL : joined);
    rdp_free(joined);
}

static void print_proc(FILE *f, const pmix_proc_t *p)
{
    fprintf(f, "%.*s:", PMIX_MAX_NSLEN, p->nspace);
    print_rank(f, p->rank);
}

static void print_info(FILE *f, const pmix_info_t *info)
{
    fprintf(f, "%.*s", PMIX_MAX_KEYLEN, info->key);
    if (PMIX_INFO_IS_REQUIRED(info)) {
        fputs("(required)", f);
    }
    fputs("=", f);
    print_value(f, &info->value);
}

static void print_elem(FILE *f, pmix_data_type_t type, const void *e)
{
    switch (type) {
    case PMIX_BOOL:
        fputs(*(const bool *)e ? "true" : "false", f);
        break;
    case PMIX_BYTE:
    case PMIX_UINT8:
        fprintf(f, "%" PRIu8, *(const uint8_t *)e);
        break;
    case PMIX_INT8:
        fprintf(f, "%" PRId8, *(const int8_t *)e);
        break;
    case PMIX_INT16:
        fprintf(f, "%" PRId16, *(const int16_t *)e);
        break;
    case PMIX_UINT16:
        fprintf(f, "%" PRIu16, *(const uint16_t *)e);
        break;
    case PMIX_INT:
    case PMIX_INT32:
    case PMIX_PID:
        fprintf(f, "%" PRId32, *(const int32_t *)e);
        break;
    case PMIX_UINT:
    case PMIX_UINT32:
        fprintf(f, "%" PRIu32, *(const uint32_t *)e);
        break;
    case PMIX_INT64:
        fprintf(f, "%" PRId64, *(const int64_t *)e);
        break;
    case PMIX_UINT64:
    case PMIX_SIZE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST:
        fprintf(f, "%" PRIu64, *(const uint64_t *)e);
        break;
    case PMIX_FLOAT:
        fprintf(f, "%g", (double)*(const float *)e);
        break;
    case PMIX_DOUBLE:
        fprintf(f, "%g", *(const double *)e);
        break;
    case PMIX_TIMEVAL: {
        const struct timeval *tv = e;
        fprintf(f, "%lld.%06ld", (long long)tv->tv_sec, (long)tv->tv_usec);
        break;
    }
    case PMIX_TIME:
        fprintf(f, "%lld", (long long)*(const time_t *)e);
        break;
    case PMIX_STATUS:
        fputs(PMIx_Error_string(*(const pmix_status_t *)e), f);
        break;
    case PMIX_PROC_RANK:
        print_rank(f, *(const pmix_rank_t *)e);
        break;
    case PMIX_STRING:
        print_str(f, *(char *const *)e);
        break;
    case PMIX_POINTER:
        fprintf(f, "%p", *(void *const *)e);
        break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        print_bytes(f, ((const pmix_byte_object_t *)e)->bytes,
                    ((const pmix_byte_object_t *)e)->size);
        break;
    case PMIX_PERSIST:
        fputs(PMIx_Persistence_string(*(const uint8_t *)e), f);
        break;
    case PMIX_SCOPE:
        fputs(PMIx_Scope_string(*(const uint8_t *)e), f);
        break;
    case PMIX_DATA_RANGE:
        fputs(PMIx_Data_range_string(*(const uint8_t *)e), f);
        break;
    case PMIX_PROC_STATE:
        fputs(PMIx_Proc_state_string(*(const uint8_t *)e), f);
        break;
    case PMIX_JOB_STATE:
        fputs(PMIx_Job_state_string(*(const uint8_t *)e), f);
        break;
    case PMIX_LINK_STATE:
        fputs(PMIx_Link_state_string(*(const uint8_t *)e), f);
        break;
    case PMIX_ALLOC_DIRECTIVE:
        fputs(PMIx_Alloc_directive_string(*(const uint8_t *)e), f);
        break;
    case PMIX_DATA_TYPE:
        fputs(PMIx_Data_type_string(*(const uint16_t *)e), f);
        break;
    case PMIX_IOF_CHANNEL:
        fputs(PMIx_IOF_channel_string(*(const uint16_t *)e), f);
        break;
    case PMIX_DEVTYPE:
        fputs(PMIx_Device_type_string(*(const uint64_t *)e), f);
        break;
    case PMIX_INFO_DIRECTIVES:
    case PMIX_LOCTYPE:
    case PMIX_STOR_ACCESS_TYPE:
        fprintf(f, "0x%" PRIx32,
                type == PMIX_INFO_DIRECTIVES ? *(const uint32_t *)e
                                             : *(const uint16_t *)e);
        break;
    case PMIX_ENVAR: {
        const pmix_envar_t *ev = e;
        fprintf(f, "%s=%s (separator '%c')", ev->envar ? ev->envar : "NULL",
                ev->value ? ev->value : "NULL",
                ev->separator ? ev->separator : ' ');
        break;
    }
    case PMIX_PROC:
        print_proc(f, e);
        break;
    case PMIX_PROC_NSPACE:
        fprintf(f, "%.*s", PMIX_MAX_NSLEN, (const char *)e);
        break;
    case PMIX_VALUE:
        print_value(f, e);
        break;
    case PMIX_INFO:
        print_info(f, e);
        break;
    case PMIX_PDATA: {
        const pmix_pdata_t *pd = e;
        print_proc(f, &pd->proc);
        fprintf(f, " %.*s=", PMIX_MAX_KEYLEN, pd->key);
        print_value(f, &pd->value);
        break;
    }
    case PMIX_APP: {
        const pmix_app_t *app = e;
        fputs("cmd ", f);
        print_str(f, app->cmd);
        fputs(" argv ", f);
        print_argv(f, app->argv);
        fprintf(f, " maxprocs %d info {", app->maxprocs);
        print_elems(f, PMIX_INFO, app->info, app->ninfo);
        fputs("}", f);
        break;
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *pi = e;
        print_proc(f, &pi->proc);
        fputs(" host ", f);
        print_str(f, pi->hostname);
        fputs(" exe ", f);
        print_str(f, pi->executable_name);
        fprintf(f, " pid %d exit %d state %s", (int)pi->pid, pi->exit_code,
                PMIx_Proc_state_string(pi->state));
        break;
    }
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *da = e;
        fprintf(f, "%zu x %s [", da->size, PMIx_Data_type_string(da->type));
        print_elems(f, da->type, da->array, da->size);
        fputs("]", f);
        break;
    }
    case PMIX_QUERY: {
        const pmix_query_t *q = e;
        fputs("keys ", f);
        print_argv(f, q->keys);
        fputs(" qualifiers {", f);
        print_elems(f, PMIX_INFO, q->qualifiers, q->nqual);
        fputs("}", f);
        break;
    }
    case PMIX_COORD: {
        const pmix_coord_t *c = e;
        fputs("(", f);
        print_elems(f, PMIX_UINT32, c->coord, c->dims);
        fputs(")", f);
        break;
    }
    case PMIX_REGATTR: {
        const pmix_regattr_t *ra = e;
        fprintf(f, "%s = %.*s (%s)", ra->name ? ra->name : "NULL",
                PMIX_MAX_KEYLEN, ra->string, PMIx_Data_type_string(ra->type));
        break;
    }
    case PMIX_PROC_CPUSET:
        fputs("cpuset from ", f);
        print_str(f, ((const pmix_cpuset_t *)e)->source);
        break;
    case PMIX_TOPO:
        fputs("topology from ", f);
        print_str(f, ((const pmix_topology_t *)e)->source);
        break;
    case PMIX_GEOMETRY: {
        const pmix_geometry_t *g = e;
        fprintf(f, "fabric %zu uuid ", g->fabric);
        print_str(f, g->uuid);
        fputs(" coordinates {", f);
        print_elems(f, PMIX_COORD, g->coordinates, g->ncoords);
        fputs("}", f);
        break;
    }
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *d = e;
        print_str(f, d->osname);
        fprintf(f, " %s distance %u-%u", PMIx_Device_type_string(d->type),
                d->mindist, d->maxdist);
        break;
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *ep = e;
        print_str(f, ep->osname);
        fputs(" ", f);
        print_bytes(f, ep->endpt.bytes, ep->endpt.size);
        break;
    }
    case PMIX_DATA_BUFFER:
        print_bytes(f, ((const pmix_data_buffer_t *)e)->base_ptr,
                    ((const pmix_data_buffer_t *)e)->bytes_used);
        break;
    default:
        fprintf(f, "<%s>", PMIx_Data_type_string(type));
        break;
    }
}

static void print_elems(FILE *f, pmix_data_type_t type, const void *elems,
                        size_t n)
{
    size_t esize = rdpmix_darray_elem_size(type);
    size_t i;

    if (elems == NULL || esize == 0) {
        return;
    }
    for (i = 0; i < n; i++) {
        if (i > 0) {
            fputs(", ", f);
        }
        print_elem(f, type, (const char *)elems + i * esize);
    }
}

static void print_value(FILE *f, const pmix_value_t *v)
{
    fprintf(f, "%s: ", PMIx_Data_type_string(v->type));
    if (v->type == PMIX_UNDEF) {
        fputs("(no data)", f);
    } else if (v->type == PMIX_POINTER) {
        fprintf(f, "%p", v->data.ptr);
    } else if (rdpmix_darray_elem_size(v->type) == 0) {
        fputs("?", f);
    } else if (rdp_value_held_by_pointer(v->type)) {
        if (v->data.ptr == NULL) {
            fputs("NULL", f);
        } else {
            print_elem(f, v->type, v->data.ptr);
        }
    } else {
        print_elem(f, v->type, &v->data);
    }
}

/* Run @a fn on a memory stream and return its malloc'ed text. */
#define RENDER(stmt)                                \
    do {                                            \
        char *_buf  = NULL;                         \
        size_t _len = 0;                            \
        FILE *f     = open_memstream(&_buf, &_len); \
        if (f == NULL) {                            \
            return NULL;                            \
        }                                           \
        stmt;                                       \
        if (fclose(f) != 0) {                       \
            rdp_free(_buf);                         \
            return NULL;                            \
        }                                           \
        return _buf;                                \
    } while (0)

char *rdp_elems_print(pmix_data_type_t type, const void *elems, size_t n)
{
    RENDER(print_elems(f, type, elems, n));
}

char *rdp_value_print(const pmix_value_t *v)
{
    RENDER(print_value(f, v));
}

char *PMIx_Value_string(const pmix_value_t *value)
{
    if (value == NULL) {
        return NULL;
    }
    return rdp_value_print(value);
}

char *PMIx_Info_string(const pmix_info_t *info)
{
    if (info == NULL) {
        return NULL;
    }
    RENDER(print_info(f, info));
}

pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src,
                              pmix_data_type_t type)
{
    char *text, *out;
    size_t len;

    if (output == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (type == PMIX_STRING || type == PMIX_POINTER) {
        text = rdp_elems_print(type, &src, 1); /* src is the datum itself */
    } else if (rdpmix_darray_elem_size(type) == 0) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    } else {
        text = rdp_elems_print(type, src, src != NULL ? 1 : 0);
    }
    if (text == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (prefix == NULL) {
        prefix = "";
    }
    len = strlen(prefix) + strlen(text) + 1;
    out = rdp_malloc(len);
    if (out == NULL) {
        rdp_free(text);
        return PMIX_ERR_NOMEM;
    }
    snprintf(out, len, "%s%s", prefix, text);
    rdp_free(text);
    *output = out;
    return PMIX_SUCCESS;
}
