/* hosts.c - the nodes of a real multi-node job: --hosts, --hostfile, Slurm */
#include "config.h"
#include "run/hosts.h"
#include "core/util/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTFILE_MAX (16u << 20) /* bytes of a hostfile we read */

/* a decimal in [1, max] spanning exactly @a len bytes */
static int parse_count(const char *s, size_t len, uint32_t max, uint32_t *v_p)
{
    uint64_t v = 0;

    if (len == 0 || len > 10) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v < 1 || v > max) {
        return -1;
    }
    *v_p = (uint32_t)v;
    return 0;
}

pmix_status_t rdp_run_hostlist_add(rdp_run_hostlist_t *list, const char *name,
                                   size_t len, uint32_t slots, char *err,
                                   size_t errlen)
{
    rdp_run_hostent_t *v;
    char *copy;

    if (len == 0) {
        snprintf(err, errlen, "an empty host name");
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];

        if (c <= ' ' || c == 0x7f || c == ',') {
            snprintf(err, errlen,
                     "host name '%.*s' has a blank or a "
                     "control character",
                     (int)len, name);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    for (uint32_t i = 0; i < list->n; i++) {
        if (strlen(list->hosts[i].name) == len
            && strncmp(list->hosts[i].name, name, len) == 0) {
            snprintf(err, errlen,
                     "host %.*s is listed twice (give its slots once)",
                     (int)len, name);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    copy = rdp_malloc(len + 1);
    v    = rdp_realloc(list->hosts, (list->n + 1) * sizeof(*v));
    if (copy == NULL || v == NULL) {
        rdp_free(copy);
        if (v != NULL) {
            list->hosts = v;
        }
        snprintf(err, errlen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    memcpy(copy, name, len);
    copy[len]        = '\0';
    list->hosts      = v;
    v[list->n].name  = copy;
    v[list->n].slots = slots;
    list->n++;
    return PMIX_SUCCESS;
}

/* drop entries past @a n (undo a failed parse) */
static void truncate_list(rdp_run_hostlist_t *list, uint32_t n)
{
    while (list->n > n) {
        list->n--;
        rdp_free(list->hosts[list->n].name);
    }
}

pmix_status_t rdp_run_hosts_parse(const char *spec, rdp_run_hostlist_t *list,
                                  char *err, size_t errlen)
{
    uint32_t before = list->n;
    const char *p   = spec;
    pmix_status_t status;

    if (spec == NULL || spec[0] == '\0') {
        snprintf(err, errlen, "an empty host list");
        return PMIX_ERR_BAD_PARAM;
    }
    for (;;) {
        const char *end   = p + strcspn(p, ",");
        const char *colon = memchr(p, ':', (size_t)(end - p));
        uint32_t slots    = 0;
        size_t nlen       = (size_t)(end - p);

        if (colon != NULL) {
            nlen = (size_t)(colon - p);
            if (parse_count(colon + 1, (size_t)(end - colon - 1),
                            RDP_RUN_MAX_SLOTS, &slots)
                != 0) {
                snprintf(err, errlen,
                         "'%.*s': the slots after ':' must be a number "
                         "from 1 to %u",
                         (int)(end - p), p, RDP_RUN_MAX_SLOTS);
                truncate_list(list, before);
                return PMIX_ERR_BAD_PARAM;
            }
        }
        status = rdp_run_hostlist_add(list, p, nlen, slots, err, errlen);
        if (status != PMIX_SUCCESS) {
            truncate_list(list, before);
            return status;
        }
        if (*end == '\0') {
            break;
        }
        p = end + 1;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_hostfile_parse(const char *text, const char *what,
                                     rdp_run_hostlist_t *list, char *err,
                                     size_t errlen)
{
    uint32_t before = list->n;
    const char *p   = text;
    unsigned line   = 0;
    char msg[256];
    pmix_status_t status;

    while (*p != '\0') {
        const char *eol = p + strcspn(p, "\n");
        const char *end = memchr(p, '#', (size_t)(eol - p));
        const char *name, *tok;
        size_t nlen;
        uint32_t slots = 0;

        line++;
        if (end == NULL) {
            end = eol;
        }
        p += strspn(p, " \t\r");
        if (p >= end) {
            p = *eol != '\0' ? eol + 1 : eol;
            continue;
        }
        name = p;
        nlen = strcspn(p, " \t\r#\n");
        p += nlen;
        for (;;) {
            size_t tlen;

            p += strspn(p, " \t\r");
            if (p >= end) {
                break;
            }
            tok  = p;
            tlen = strcspn(p, " \t\r#\n");
            p += tlen;
            if (tlen > 6 && strncmp(tok, "slots=", 6) == 0
                && parse_count(tok + 6, tlen - 6, RDP_RUN_MAX_SLOTS, &slots)
                       == 0) {
                continue;
            }
            snprintf(err, errlen,
                     "%s, line %u: '%.*s' is not slots=N (N from 1 to %u)",
                     what, line, (int)tlen, tok, RDP_RUN_MAX_SLOTS);
            truncate_list(list, before);
            return PMIX_ERR_BAD_PARAM;
        }
        status =
            rdp_run_hostlist_add(list, name, nlen, slots, msg, sizeof(msg));
        if (status != PMIX_SUCCESS) {
            snprintf(err, errlen, "%s, line %u: %s", what, line, msg);
            truncate_list(list, before);
            return status;
        }
        p = *eol != '\0' ? eol + 1 : eol;
    }
    if (list->n == before) {
        snprintf(err, errlen, "%s lists no host", what);
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_hostfile_read(const char *path, rdp_run_hostlist_t *list,
                                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *text;
    size_t len;
    pmix_status_t status;

    if (f == NULL) {
        snprintf(err, errlen, "cannot read the hostfile %s: %s", path,
                 strerror(errno));
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    text = rdp_malloc(HOSTFILE_MAX + 1);
    if (text == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    len = fread(text, 1, HOSTFILE_MAX + 1, f);
    if (ferror(f) || len > HOSTFILE_MAX || memchr(text, '\0', len) != NULL) {
        snprintf(err, errlen, "cannot read the hostfile %s: %s", path,
                 ferror(f) ? strerror(errno)
                           : "not a text file of at most 16 MiB");
        fclose(f);
        rdp_free(text);
        return PMIX_ERR_FILE_READ_FAILURE;
    }
    fclose(f);
    text[len] = '\0';
    status    = rdp_run_hostfile_parse(text, path, list, err, errlen);
    rdp_free(text);
    return status;
}

void rdp_run_hostlist_cleanup(rdp_run_hostlist_t *list)
{
    if (list == NULL) {
        return;
    }
    truncate_list(list, 0);
    rdp_free(list->hosts);
    list->hosts = NULL;
}

/* one pass over Slurm's counts; writes @a counts only if it is not NULL */
static int slurm_counts_scan(const char *s, uint32_t n, uint32_t *counts)
{
    uint32_t filled = 0;
    const char *p   = s;

    if (s == NULL || s[0] == '\0') {
        return -1;
    }
    for (;;) {
        size_t len = strspn(p, "0123456789");
        uint32_t count, repeat = 1;

        if (parse_count(p, len, RDP_RUN_MAX_SLOTS, &count) != 0) {
            return -1;
        }
        p += len;
        if (strncmp(p, "(x", 2) == 0) {
            p += 2;
            len = strspn(p, "0123456789");
            if (parse_count(p, len, UINT32_MAX, &repeat) != 0
                || p[len] != ')') {
                return -1;
            }
            p += len + 1;
        }
        if (repeat > n - filled) {
            return -1;
        }
        for (uint32_t i = 0; i < repeat; i++, filled++) {
            if (counts != NULL) {
                counts[filled] = count;
            }
        }
        if (*p == '\0') {
            break;
        }
        if (*p != ',') {
            return -1;
        }
        p++;
    }
    return filled == n ? 0 : -1;
}

int rdp_run_slurm_counts_parse(const char *s, uint32_t n, uint32_t *counts)
{
    if (slurm_counts_scan(s, n, NULL) != 0) {
        return -1;
    }
    return slurm_counts_scan(s, n, counts);
}
