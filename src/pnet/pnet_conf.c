/* pnet_conf.c - the site's pnet settings: a file, and the environment */
#include "config.h"
#include "pnet/pnet_int.h"
#include "core/util/log.h"
#include "core/util/config_table.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * "name = value" lines ('#' starts a comment) in RDPMIX_PNET_CONF, else
 * <sysconfdir>/rdpmix/pnet.conf; RDPMIX_PNET_<NAME> (upper case) in the
 * environment wins over the file.  docs/pnet.md lists the names.
 */

const char *rdp_pnet_conf_path(void)
{
    return rdp_cfg_string(RDP_CFG_PNET_CONF);
}

static char *trim(char *s)
{
    char *end;

    while (isspace((unsigned char)*s)) {
        s++;
    }
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) {
        *--end = '\0';
    }
    return s;
}

/* @a name's value in the file, copied into @a buf; false if absent */
static bool file_value(const char *name, char *buf, size_t len)
{
    char line[512];
    bool found = false;
    FILE *f    = fopen(rdp_pnet_conf_path(), "r");

    if (f == NULL) {
        return false;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *hash = strchr(line, '#'), *eq;

        if (hash != NULL) {
            *hash = '\0';
        }
        eq = strchr(line, '=');
        if (eq == NULL) {
            continue;
        }
        *eq = '\0';
        if (strcmp(trim(line), name) == 0) {
            snprintf(buf, len, "%s", trim(eq + 1));
            found = true; /* the last one counts */
        }
    }
    fclose(f);
    return found;
}

bool rdp_pnet_conf_get(const char *name, char *buf, size_t len)
{
    char env[96];
    const char *v;
    size_t i;

    i = (size_t)snprintf(env, sizeof(env), "RDPMIX_PNET_");
    for (const char *p = name; *p != '\0' && i < sizeof(env) - 1; p++) {
        env[i++] = (char)toupper((unsigned char)*p);
    }
    env[i] = '\0';
    v      = getenv(env);
    if (v != NULL) {
        snprintf(buf, len, "%s", v);
        return true;
    }
    return file_value(name, buf, len);
}

static bool parse_u32(const char *s, char **end, uint32_t *v)
{
    unsigned long long x;

    errno = 0;
    x     = strtoull(s, end, 0);
    if (errno != 0 || *end == s || x > UINT32_MAX) {
        return false;
    }
    *v = (uint32_t)x;
    return true;
}

pmix_status_t rdp_pnet_conf_range(const char *name, uint32_t *lo_p,
                                  uint32_t *hi_p)
{
    char buf[128], *end;
    uint32_t lo, hi;

    if (!rdp_pnet_conf_get(name, buf, sizeof(buf))) {
        rdp_log_error(PNET, "no %s configured (%s, or RDPMIX_PNET_...)", name,
                      rdp_pnet_conf_path());
        return PMIX_ERR_NOT_FOUND;
    }
    if (!parse_u32(buf, &end, &lo) || *end != '-'
        || !parse_u32(end + 1, &end, &hi) || *end != '\0' || hi < lo) {
        rdp_log_error(PNET, "%s = '%s' is no range LOW-HIGH", name, buf);
        return PMIX_ERR_BAD_PARAM;
    }
    *lo_p = lo;
    *hi_p = hi;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pnet_conf_count(const char *name, uint32_t dflt,
                                  uint32_t *n_p)
{
    char buf[64], *end;
    uint32_t n;

    if (!rdp_pnet_conf_get(name, buf, sizeof(buf))) {
        *n_p = dflt;
        return PMIX_SUCCESS;
    }
    if (!parse_u32(buf, &end, &n) || *end != '\0' || n == 0) {
        rdp_log_error(PNET, "%s = '%s' is no positive number", name, buf);
        return PMIX_ERR_BAD_PARAM;
    }
    *n_p = n;
    return PMIX_SUCCESS;
}
