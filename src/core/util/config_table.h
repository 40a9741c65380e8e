/* config_table.h - every RDPMIX_* setting in one table (name, type,
 * default, one line of help), read through typed accessors.
 *
 * Not called config.h: every source file's #include "config.h" (autoconf's)
 * would find a config.h beside it in this directory first.
 *
 * Settings come from the environment only (the launcher and the daemons
 * pass every RDPMIX_* variable on to their children).  The accessors read
 * the environment at every call, so a test's setenv() takes effect at once;
 * callers on hot paths keep the value they need.  docs/design.md
 * ("Configuration") says how to add a setting. */
#ifndef RDP_CORE_UTIL_CONFIG_TABLE_H
#define RDP_CORE_UTIL_CONFIG_TABLE_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** How a setting's text is read. */
typedef enum rdp_cfg_type {
    RDP_CFG_STRING,  /* any text (a path, a word, a list) */
    RDP_CFG_BOOL,    /* 1/0, yes/no, true/false, on/off */
    RDP_CFG_UINT,    /* an unsigned C integer constant (0x.. allowed) */
    RDP_CFG_BYTES,   /* decimal bytes, optional k or m suffix (KiB, MiB) */
    RDP_CFG_SECONDS, /* a non-negative decimal number of seconds */
    RDP_CFG_NUMBER,  /* a non-negative decimal number */
} rdp_cfg_type_t;

/** One setting per entry; the order of the table and of rdp_cfg_id_t. */
typedef enum rdp_cfg_id {
    RDP_CFG_LOG_LEVEL,
    RDP_CFG_LOG_SUBSYS,
    RDP_CFG_LOG_FILE,
    RDP_CFG_SYSLOG_SOCKET,
    RDP_CFG_IPC_MAX_MSG,
    RDP_CFG_SHM_MIN,
    RDP_CFG_FENCE_BOARD,
    RDP_CFG_FENCE_BOARD_CALLER,

    RDP_CFG_FENCE_PREPARE,
    RDP_CFG_ENGINE_WARMUP,
    RDP_CFG_COLL_ALG,
    RDP_CFG_COLL_SEG_BYTES,
    RDP_CFG_UCX_MODULE,
    RDP_CFG_UCX_EAGER_MAX,
    RDP_CFG_UCX_SPIN_US,
    RDP_CFG_UCX_REPOLL_US,
    RDP_CFG_UCX_BUSY_US,
    RDP_CFG_UCX_WIDE_GHASH,
    RDP_CFG_UCX_FAST_GMAC,
    RDP_CFG_UCX_LOCAL_ZCOPY,
    RDP_CFG_TRUSTED_NETWORK,
    RDP_CFG_PNET,
    RDP_CFG_PNET_CONF,
    RDP_CFG_PNET_STATE_DIR,
    RDP_CFG_PNET_SIMPTEST_FAIL,
    RDP_CFG_PNET_IB_TOPOLOGY,
    RDP_CFG_LIBDIR,
    RDP_CFG_DAEMON,
    RDP_CFG_NODE_UTS,
    RDP_CFG_PEER_DIR,
    RDP_CFG_CTL_IF,
    RDP_CFG_LAUNCH_AGENT,
    RDP_CFG_STARTUP_TIMEOUT,
    RDP_CFG_KILL_GRACE,
    RDP_CFG_SHUTDOWN_WARN,
    RDP_CFG_GROUP_OPEN_DELAY,
    RDP_CFG_TOPO_XML,
    RDP_CFG_OMPI_SKIP_MTL,
    RDP_CFG_COUNT
} rdp_cfg_id_t;

/** A row of the table. */
typedef struct rdp_cfg_setting {
    const char *name; /* "RDPMIX_SHM_MIN" */
    rdp_cfg_type_t type;
    const char *dflt; /* the default as text; NULL: unset means "none" */
    double min, max;  /* bounds of the numeric types (inclusive) */
    const char *help; /* one line */
} rdp_cfg_setting_t;

/** The row of @a id, NULL when @a id is not a setting. */
const rdp_cfg_setting_t *rdp_cfg_setting(rdp_cfg_id_t id);

/** The row named @a name ("RDPMIX_SHM_MIN"), NULL if none. */
const rdp_cfg_setting_t *rdp_cfg_find(const char *name, rdp_cfg_id_t *id_p);

/** The type's name ("bytes") for help texts. */
const char *rdp_cfg_type_name(rdp_cfg_type_t type);

/** The environment's value of @a id when set and not empty, else NULL. */
const char *rdp_cfg_env(rdp_cfg_id_t id);

/** The environment's value, else the default (NULL when it has none).
 * Never logs (the log's own settings are read with it). */
const char *rdp_cfg_string(rdp_cfg_id_t id);

/** "environment" when the environment sets @a id, else "default". */
const char *rdp_cfg_source(rdp_cfg_id_t id);

/**
 * Parse @a text as a value of setting @a id (any numeric type or BOOL;
 * booleans give 0 or 1).  Returns PMIX_SUCCESS, or PMIX_ERR_BAD_PARAM with
 * a one-line reason in @a why ("RDPMIX_X: \"abc\" is not ...").  Pure.
 */
pmix_status_t rdp_cfg_parse(rdp_cfg_id_t id, const char *text, double *v_p,
                            char *why, size_t why_len);

/**
 * The number setting @a id holds: the environment's when valid, else the
 * default (0 for a setting without one).  A bad value is logged as an error
 * naming the setting and what it expects, and gives PMIX_ERR_BAD_PARAM with
 * the default in *@a v_p; callers that must refuse bad values (the
 * collective engine's) return that status, others go on with the default.
 */
pmix_status_t rdp_cfg_uint(rdp_cfg_id_t id, uint64_t *v_p);
pmix_status_t rdp_cfg_double(rdp_cfg_id_t id, double *v_p);

/** rdp_cfg_double for the SECONDS settings, ignoring the status. */
double rdp_cfg_seconds(rdp_cfg_id_t id);

/** A BOOL setting; bad values are logged and give the default. */
bool rdp_cfg_bool(rdp_cfg_id_t id);

#endif
