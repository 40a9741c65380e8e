/* logchan.h - PMIx_Log channels: which channel a key names, dispatch */
#ifndef RDP_CORE_UTIL_LOGCHAN_H
#define RDP_CORE_UTIL_LOGCHAN_H

#include <pmix_common.h>

#include <stdbool.h>
#include <time.h>

/*
 * A PMIx_Log request carries data infos, each naming a channel by its key
 * (PMIX_LOG_STDOUT, PMIX_LOG_SYSLOG, ...) with the message as its value,
 * and directives (PMIX_LOG_ONCE, PMIX_LOG_SYSLOG_PRI, ...).  Both the
 * server library (a host without a `log` upcall) and rdpmixd write the
 * channels they can; this file decides which entry goes where and what
 * the whole request returns.
 */

enum rdp_logchan {
    RDP_LOGCHAN_NONE = 0,      /* not a channel (e.g. a stray directive) */
    RDP_LOGCHAN_STDOUT,        /* PMIX_LOG_STDOUT */
    RDP_LOGCHAN_STDERR,        /* PMIX_LOG_STDERR */
    RDP_LOGCHAN_LOCAL_SYSLOG,  /* PMIX_LOG_SYSLOG, PMIX_LOG_LOCAL_SYSLOG */
    RDP_LOGCHAN_GLOBAL_SYSLOG, /* PMIX_LOG_GLOBAL_SYSLOG */
    RDP_LOGCHAN_OTHER          /* email, job record, ...: not supported */
};

typedef struct rdp_logchan_opts {
    bool once;    /* PMIX_LOG_ONCE: stop at the first channel that works */
    int priority; /* PMIX_LOG_SYSLOG_PRI, else LOG_USER | LOG_INFO */
    /* PMIX_LOG_TIMESTAMP, or now for PMIX_LOG_GENERATE_TIMESTAMP; 0: none.
     * rdp_logchan_dispatch then writes "[<UTC ISO 8601>] <message>". */
    time_t timestamp;
} rdp_logchan_opts_t;

/** The channel @a key names. */
enum rdp_logchan rdp_logchan_of(const char *key);

/** Read the directives that matter here; unknown ones are ignored. */
void rdp_logchan_opts_parse(const pmix_info_t *dirs, size_t ndirs,
                            rdp_logchan_opts_t *opts_p);

/**
 * Write one entry to @a chan.  @a msg is the entry's string (never NULL).
 * Returns PMIX_SUCCESS, PMIX_ERR_NOT_SUPPORTED for a channel the writer
 * does not provide, or why it failed.
 */
typedef pmix_status_t (*rdp_logchan_write_fn_t)(enum rdp_logchan chan,
                                                const char *msg, void *arg);

/**
 * Hand every channel entry of @a data, in order, to @a write (only the
 * first that succeeds with opts->once).  Returns PMIX_SUCCESS when every
 * entry tried was written (or, with once, one was),
 * PMIX_ERR_PARTIAL_SUCCESS when some were and some were not,
 * PMIX_ERR_NOT_SUPPORTED when none could be and none of the channels is
 * supported, else the first failure; PMIX_ERR_BAD_PARAM for no data or an
 * entry whose value is not a string.
 */
pmix_status_t rdp_logchan_dispatch(const pmix_info_t *data, size_t ndata,
                                   const rdp_logchan_opts_t *opts,
                                   rdp_logchan_write_fn_t write, void *arg);

/**
 * Send "[nspace:rank] @a msg" (@a source's name, if not NULL) to the
 * syslog daemon as one RFC 3164 datagram with @a priority (facility |
 * severity) and @a tag.  The socket is
 * RDPMIX_SYSLOG_SOCKET if set (tests use a private one), else /dev/log.
 * Returns PMIX_ERR_NOT_AVAILABLE when no syslog daemon listens.
 */
pmix_status_t rdp_logchan_syslog(int priority, const char *tag,
                                 const pmix_proc_t *source, const char *msg);

/**
 * Write @a msg to @a fd with a newline if it has none.  Returns
 * PMIX_SUCCESS or PMIX_ERROR.
 */
pmix_status_t rdp_logchan_write_line(int fd, const char *msg);

#endif
