/* logchan.c - PMIx_Log channels: which channel a key names, dispatch */
#include "config.h"
#include "core/util/logchan.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PRIORITY (LOG_USER | LOG_INFO)
#define SYSLOG_MAX       2048 /* bytes of one datagram (RFC 3164: 1024) */

static bool is_directive(const char *key)
{
    static const char *const dirs[] = {PMIX_LOG_SOURCE,
                                       PMIX_LOG_SYSLOG_PRI,
                                       PMIX_LOG_TIMESTAMP,
                                       PMIX_LOG_GENERATE_TIMESTAMP,
                                       PMIX_LOG_TAG_OUTPUT,
                                       PMIX_LOG_TIMESTAMP_OUTPUT,
                                       PMIX_LOG_XML_OUTPUT,
                                       PMIX_LOG_ONCE,
                                       PMIX_LOG_KEY,
                                       PMIX_LOG_VAL,
                                       PMIX_LOG_AGG,
                                       PMIX_LOG_EMAIL_ADDR,
                                       PMIX_LOG_EMAIL_SENDER_ADDR,
                                       PMIX_LOG_EMAIL_SUBJECT,
                                       PMIX_LOG_EMAIL_MSG,
                                       PMIX_LOG_EMAIL_SERVER,
                                       PMIX_LOG_EMAIL_SRVR_PORT};

    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (strncmp(key, dirs[i], PMIX_MAX_KEYLEN) == 0) {
            return true;
        }
    }
    return false;
}

enum rdp_logchan rdp_logchan_of(const char *key)
{
    static const struct {
        const char *key;
        enum rdp_logchan chan;
    } known[] = {
        {PMIX_LOG_STDOUT, RDP_LOGCHAN_STDOUT},
        {PMIX_LOG_STDERR, RDP_LOGCHAN_STDERR},
        {PMIX_LOG_SYSLOG, RDP_LOGCHAN_LOCAL_SYSLOG},
        {PMIX_LOG_LOCAL_SYSLOG, RDP_LOGCHAN_LOCAL_SYSLOG},
        {PMIX_LOG_GLOBAL_SYSLOG, RDP_LOGCHAN_GLOBAL_SYSLOG},
        {PMIX_LOG_EMAIL, RDP_LOGCHAN_OTHER},
        {PMIX_LOG_GLOBAL_DATASTORE, RDP_LOGCHAN_OTHER},
        {PMIX_LOG_JOB_RECORD, RDP_LOGCHAN_OTHER},
        {PMIX_LOG_MSG, RDP_LOGCHAN_OTHER},
    };

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (strncmp(key, known[i].key, PMIX_MAX_KEYLEN) == 0) {
            return known[i].chan;
        }
    }
    if (is_directive(key)) {
        return RDP_LOGCHAN_NONE;
    }
    /* another "pmix.log." key is a channel we do not know of */
    return strncmp(key, "pmix.log.", 9) == 0 ? RDP_LOGCHAN_OTHER
                                             : RDP_LOGCHAN_NONE;
}

void rdp_logchan_opts_parse(const pmix_info_t *dirs, size_t ndirs,
                            rdp_logchan_opts_t *opts_p)
{
    rdp_logchan_opts_t o = {.once = false, .priority = DEFAULT_PRIORITY};
    bool generate        = false;

    for (size_t i = 0; dirs != NULL && i < ndirs; i++) {
        if (PMIX_CHECK_KEY(&dirs[i], PMIX_LOG_ONCE)) {
            o.once = PMIX_INFO_TRUE(&dirs[i]);
        } else if (PMIX_CHECK_KEY(&dirs[i], PMIX_LOG_TIMESTAMP)
                   && dirs[i].value.type == PMIX_TIME) {
            o.timestamp = dirs[i].value.data.time;
        } else if (PMIX_CHECK_KEY(&dirs[i], PMIX_LOG_GENERATE_TIMESTAMP)) {
            generate = PMIX_INFO_TRUE(&dirs[i]);
        } else if (PMIX_CHECK_KEY(&dirs[i], PMIX_LOG_SYSLOG_PRI)
                   && dirs[i].value.type == PMIX_INT) {
            o.priority = dirs[i].value.data.integer;
            if ((o.priority & ~LOG_PRIMASK) == 0) {
                o.priority |= LOG_USER; /* a bare severity */
            }
        }
    }
    if (generate && o.timestamp == 0) {
        o.timestamp = time(NULL);
    }
    *opts_p = o;
}

/* "[2026-11-26T05:30:00Z] msg" for a request that carries a time. */
static pmix_status_t write_stamped(rdp_logchan_write_fn_t write,
                                   enum rdp_logchan ch, const char *msg,
                                   time_t when, void *arg)
{
    char stamp[32];
    struct tm tm;
    char *line = NULL;
    pmix_status_t rc;

    if (gmtime_r(&when, &tm) == NULL
        || strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0
        || asprintf(&line, "[%s] %s", stamp, msg) < 0) {
        return PMIX_ERR_NOMEM;
    }
    rc = write(ch, line, arg);
    free(line);
    return rc;
}

pmix_status_t rdp_logchan_dispatch(const pmix_info_t *data, size_t ndata,
                                   const rdp_logchan_opts_t *opts,
                                   rdp_logchan_write_fn_t write, void *arg)
{
    size_t tried = 0, written = 0, unsupported = 0;
    pmix_status_t first_err = PMIX_SUCCESS;

    if (data == NULL || ndata == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < ndata; i++) {
        enum rdp_logchan ch = rdp_logchan_of(data[i].key);

        if (ch != RDP_LOGCHAN_NONE && ch != RDP_LOGCHAN_OTHER
            && (data[i].value.type != PMIX_STRING
                || data[i].value.data.string == NULL)) {
            return PMIX_ERR_BAD_PARAM; /* the Standard says char* */
        }
    }
    for (size_t i = 0; i < ndata && !(opts->once && written > 0); i++) {
        enum rdp_logchan ch = rdp_logchan_of(data[i].key);
        pmix_status_t rc;

        if (ch == RDP_LOGCHAN_NONE) {
            if (!is_directive(data[i].key)) {
                unsupported++; /* a key that names no channel at all */
                tried++;
            }
            continue;
        }
        tried++;
        if (ch == RDP_LOGCHAN_OTHER) {
            rc = PMIX_ERR_NOT_SUPPORTED;
        } else if (opts->timestamp != 0) {
            rc = write_stamped(write, ch, data[i].value.data.string,
                               opts->timestamp, arg);
        } else {
            rc = write(ch, data[i].value.data.string, arg);
        }
        if (rc == PMIX_SUCCESS) {
            written++;
        } else if (rc == PMIX_ERR_NOT_SUPPORTED) {
            unsupported++;
        } else if (first_err == PMIX_SUCCESS) {
            first_err = rc;
        }
    }
    if (written > 0) {
        return opts->once || written == tried ? PMIX_SUCCESS
                                              : PMIX_ERR_PARTIAL_SUCCESS;
    }
    if (first_err != PMIX_SUCCESS) {
        return first_err;
    }
    return tried == 0 ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t rdp_logchan_syslog(int priority, const char *tag,
                                 const pmix_proc_t *source, const char *msg)
{
    const char *path      = rdp_cfg_string(RDP_CFG_SYSLOG_SOCKET);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char line[SYSLOG_MAX], stamp[32], from[PMIX_MAX_NSLEN + 16] = "";
    time_t now = time(NULL);
    struct tm tm;
    int fd, len;
    ssize_t n;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        return PMIX_ERR_BAD_PARAM;
    }
    strcpy(sa.sun_path, path);
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S", &tm);
    if (source != NULL) {
        snprintf(from, sizeof(from), "[%s:%u] ", source->nspace, source->rank);
    }
    len = snprintf(line, sizeof(line), "<%d>%s %s[%d]: %s%s", priority, stamp,
                   tag, (int)getpid(), from, msg);
    if (len < 0) {
        return PMIX_ERROR;
    }
    if ((size_t)len >= sizeof(line)) {
        len = sizeof(line) - 1; /* syslog truncates long messages too */
    }
    while (len > 0 && line[len - 1] == '\n') {
        len--;
    }
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rdp_log_warn(CORE, "syslog: cannot create a socket: %m");
        return PMIX_ERR_NOT_AVAILABLE;
    }
    n = sendto(fd, line, (size_t)len, 0, (struct sockaddr *)&sa, sizeof(sa));
    close(fd);
    if (n != len) {
        rdp_log_debug(CORE, "syslog: nothing listens on %s: %m", path);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_logchan_write_line(int fd, const char *msg)
{
    size_t len  = strlen(msg);
    bool add_nl = len == 0 || msg[len - 1] != '\n';
    char *line  = rdp_malloc(len + 2);
    size_t done = 0;

    if (line == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(line, msg, len);
    if (add_nl) {
        line[len++] = '\n';
    }
    while (done < len) {
        ssize_t n = write(fd, line + done, len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rdp_free(line);
            return PMIX_ERROR;
        }
        done += (size_t)n;
    }
    rdp_free(line);
    return PMIX_SUCCESS;
}
