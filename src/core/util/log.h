/* log.h - leveled, per-subsystem logging to stderr */
#ifndef RDP_CORE_UTIL_LOG_H
#define RDP_CORE_UTIL_LOG_H

#include <stdarg.h>

enum rdp_log_level {
    RDP_LOG_NONE  = 0,
    RDP_LOG_ERROR = 1,
    RDP_LOG_WARN  = 2,
    RDP_LOG_INFO  = 3,
    RDP_LOG_DEBUG = 4,
    RDP_LOG_TRACE = 5,
    RDP_LOG_DATA  = 6
};

enum rdp_log_subsys {
    RDP_SUBSYS_CORE,
    RDP_SUBSYS_CLIENT,
    RDP_SUBSYS_SERVER,
    RDP_SUBSYS_KVS,
    RDP_SUBSYS_COLL,
    RDP_SUBSYS_UCX,
    RDP_SUBSYS_PNET,
    RDP_SUBSYS_IPC,
    RDP_SUBSYS_RUN,
    RDP_SUBSYS_TOOL,
    RDP_SUBSYS_COUNT
};

#ifndef RDP_MAX_LOG_LEVEL
#define RDP_MAX_LOG_LEVEL RDP_LOG_DEBUG
#endif

/* Current level per subsystem; read by the macros before they evaluate
 * their arguments.  Set from RDPMIX_LOG_LEVEL / RDPMIX_LOG_SUBSYS. */
extern int rdp_log_levels[RDP_SUBSYS_COUNT];

/** Read RDPMIX_LOG_LEVEL, RDPMIX_LOG_SUBSYS; idempotent, thread-safe. */
void rdp_log_init(void);

/** Name used as a prefix in every line ("rdpmixd", "client 3" ...).
 * @param [in] ident  borrowed; copied */
void rdp_log_set_ident(const char *ident);

void rdp_log_emit(int level, enum rdp_log_subsys subsys, const char *file,
                  int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define RDP_LOG_ENABLED(_lvl, _sub)                                          \
    ((_lvl) <= RDP_MAX_LOG_LEVEL && (_lvl) <= rdp_log_levels[RDP_SUBSYS_##_sub])

#define rdp_log_(_lvl, _sub, ...)                                            \
    do {                                                                     \
        if (RDP_LOG_ENABLED(_lvl, _sub)) {                                   \
            rdp_log_emit(_lvl, RDP_SUBSYS_##_sub, __FILE__, __LINE__,        \
                         __VA_ARGS__);                                       \
        }                                                                    \
    } while (0)

#define rdp_log_error(_sub, ...) rdp_log_(RDP_LOG_ERROR, _sub, __VA_ARGS__)
#define rdp_log_warn(_sub, ...)  rdp_log_(RDP_LOG_WARN, _sub, __VA_ARGS__)
#define rdp_log_info(_sub, ...)  rdp_log_(RDP_LOG_INFO, _sub, __VA_ARGS__)
#define rdp_log_debug(_sub, ...) rdp_log_(RDP_LOG_DEBUG, _sub, __VA_ARGS__)
#define rdp_log_trace(_sub, ...) rdp_log_(RDP_LOG_TRACE, _sub, __VA_ARGS__)
#define rdp_log_data(_sub, ...)  rdp_log_(RDP_LOG_DATA, _sub, __VA_ARGS__)

#endif
