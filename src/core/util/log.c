/* log.c - leveled, per-subsystem logging to stderr or a file */
#include "config.h"
#include "core/util/log.h"
#include "core/util/config_table.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int rdp_log_levels[RDP_SUBSYS_COUNT] = {
    RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN,
    RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN, RDP_LOG_WARN};

static const char *const subsys_names[RDP_SUBSYS_COUNT] = {
    "core", "client", "server", "kvs", "coll",
    "ucx",  "pnet",   "ipc",    "run", "tool"};

static const char *const level_names[] = {"none",  "error", "warn", "info",
                                          "debug", "trace", "data"};

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static char log_ident[64]      = "rdpmix";
static FILE *log_file; /* RDPMIX_LOG_FILE, else NULL: stderr */
static pthread_once_t file_once = PTHREAD_ONCE_INIT;

static int parse_level(const char *s)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]);
         i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            return (int)i;
        }
    }
    if (s[0] >= '0' && s[0] <= '9') {
        int n = atoi(s);
        return n > RDP_LOG_DATA ? RDP_LOG_DATA : n;
    }
    return RDP_LOG_WARN;
}

static int subsys_selected(const char *list, const char *name)
{
    size_t len = strlen(name);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        if (strncasecmp(p, name, len) == 0
            && (p[len] == ',' || p[len] == '\0')) {
            return 1;
        }
        p = strchr(p, ',');
        if (p != NULL) {
            p++;
        }
    }
    return 0;
}

/* RDPMIX_LOG_FILE with %p = pid and %h = host name expanded into @a out. */
static void expand_log_path(const char *pattern, char *out, size_t cap)
{
    size_t len = 0;

    for (const char *p = pattern; *p != '\0' && len + 1 < cap; p++) {
        char host[256];

        if (p[0] == '%' && p[1] == 'p') {
            len += (size_t)snprintf(out + len, cap - len, "%d", (int)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            if (gethostname(host, sizeof(host)) != 0) {
                snprintf(host, sizeof(host), "unknown");
            }
            host[sizeof(host) - 1] = '\0';
            len += (size_t)snprintf(out + len, cap - len, "%s", host);
            p++;
        } else {
            out[len++] = *p;
        }
        if (len >= cap) {
            len = cap - 1;
        }
    }
    out[len] = '\0';
}

/* Where hosts keep our stderr to themselves (slurmstepd reads its own),
 * RDPMIX_LOG_FILE names a file to append to instead; opened when the
 * first line is logged, so quiet processes make no file. */
static void open_log_file(void)
{
    const char *pattern = rdp_cfg_env(RDP_CFG_LOG_FILE);
    char path[4096];
    int fd;

    if (pattern == NULL || pattern[0] == '\0') {
        return;
    }
    expand_log_path(pattern, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        log_file = fdopen(fd, "a");
        if (log_file == NULL) {
            close(fd);
        } else {
            setvbuf(log_file, NULL, _IOLBF, 0);
        }
    }
    if (log_file == NULL) {
        fprintf(stderr, "rdpmix: cannot open the log file %s: %m; logging "
                        "to stderr\n",
                path);
    }
}

static void log_init_once(void)
{
    const char *lvl  = rdp_cfg_env(RDP_CFG_LOG_LEVEL);
    const char *list = rdp_cfg_env(RDP_CFG_LOG_SUBSYS);
    int level;

    if (lvl == NULL) {
        return;
    }
    level = parse_level(lvl);
    for (int i = 0; i < RDP_SUBSYS_COUNT; i++) {
        if (list == NULL || subsys_selected(list, subsys_names[i])) {
            rdp_log_levels[i] = level;
        }
    }
}

void rdp_log_init(void)
{
    pthread_once(&log_once, log_init_once);
}

void rdp_log_set_ident(const char *ident)
{
    snprintf(log_ident, sizeof(log_ident), "%s", ident);
}

void rdp_log_emit(int level, enum rdp_log_subsys subsys, const char *file,
                  int line, const char *fmt, ...)
{
    char msg[1024];
    struct timespec ts;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    clock_gettime(CLOCK_REALTIME, &ts);
    /* one fprintf per line so lines of different threads do not mix */
    pthread_once(&file_once, open_log_file); /* at the first line only */
    fprintf(log_file != NULL ? log_file : stderr, "[%ld.%06ld] %s[%d] %s %s: %s (%s:%d)\n",
            (long)ts.tv_sec, ts.tv_nsec / 1000, log_ident, (int)getpid(),
            subsys_names[subsys], level_names[level], msg, file, line);
}
