/* log.c - leveled, per-subsystem logging to stderr */
#include "config.h"
#include "core/util/log.h"

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

static void log_init_once(void)
{
    const char *lvl  = getenv("RDPMIX_LOG_LEVEL");
    const char *list = getenv("RDPMIX_LOG_SUBSYS");
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
    fprintf(stderr, "[%ld.%06ld] %s[%d] %s %s: %s (%s:%d)\n",
            (long)ts.tv_sec, ts.tv_nsec / 1000, log_ident, (int)getpid(),
            subsys_names[subsys], level_names[level], msg, file, line);
}
