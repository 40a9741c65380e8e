/* rendezvous.c - reading the rendezvous files servers leave for tools */
#include "config.h"
#include "core/tool/rendezvous.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/wire/proto.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Enough for every candidate we report; more are counted, not kept. */
#define MAX_CANDIDATES 64
#define MAX_FILE_BYTES 4096

void rdp_rndz_cleanup(rdp_rndz_t *r)
{
    if (r == NULL) {
        return;
    }
    rdp_free(r->path);
    rdp_free(r->uri);
    memset(r, 0, sizeof(*r));
}

/* The socket path of "<id>;unix:<path>"; borrowed, NULL if none. */
static const char *uri_socket(const char *uri)
{
    const char *s = rdp_uri_socket_path(uri);

    return s != NULL && s[0] == '/' ? s : NULL;
}

static pmix_status_t set_from_uri(const char *uri, pid_t pid, rdp_rndz_t *out)
{
    const char *path = uri_socket(uri);

    if (path == NULL) {
        rdp_log_error(TOOL, "'%s' is not the URI of an rdpmix server", uri);
        return PMIX_ERR_BAD_PARAM;
    }
    memset(out, 0, sizeof(*out));
    out->path = rdp_strdup(path);
    out->uri  = rdp_strdup(uri);
    out->pid  = pid;
    if (out->path == NULL || out->uri == NULL) {
        rdp_rndz_cleanup(out);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

/* A rendezvous file: line 1 the URI, line 3 the server's pid. */
static pmix_status_t read_file(const char *file, rdp_rndz_t *out)
{
    char buf[MAX_FILE_BYTES];
    char *nl, *pidline;
    size_t n;
    long pid = 0;
    FILE *fp = fopen(file, "re");

    if (fp == NULL) {
        rdp_log_debug(TOOL, "cannot read %s: %m", file);
        return errno == ENOENT ? PMIX_ERR_NOT_FOUND : PMIX_ERR_NO_PERMISSIONS;
    }
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    nl     = strchr(buf, '\n');
    if (nl == NULL) {
        rdp_log_debug(TOOL, "%s is not a rendezvous file", file);
        return PMIX_ERR_NOT_FOUND;
    }
    *nl     = '\0';
    pidline = strchr(nl + 1, '\n');
    if (pidline != NULL) {
        pid = strtol(pidline + 1, NULL, 10);
    }
    return set_from_uri(buf, pid > 0 ? (pid_t)pid : 0, out);
}

pmix_status_t rdp_rndz_from_uri(const char *uri, rdp_rndz_t *out)
{
    if (strncmp(uri, "file:", 5) == 0) {
        return read_file(uri + 5, out);
    }
    return set_from_uri(uri, 0, out);
}

static bool server_alive(pid_t pid)
{
    return pid <= 0 || kill(pid, 0) == 0 || errno == EPERM;
}

pmix_status_t rdp_rndz_system(const char *dir, const char *host,
                              rdp_rndz_t *out)
{
    char file[PATH_MAX];
    pmix_status_t status;

    snprintf(file, sizeof(file), "%s/pmix.sys.%s", dir, host);
    status = read_file(file, out);
    if (status == PMIX_SUCCESS && !server_alive(out->pid)) {
        rdp_log_debug(TOOL, "system server of %s (pid %d) is gone", file,
                      (int)out->pid);
        rdp_rndz_cleanup(out);
        status = PMIX_ERR_NOT_FOUND;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(TOOL, "no system server at %s", file);
    }
    return status;
}

pmix_status_t rdp_rndz_from_env(rdp_rndz_t *out)
{
    static const char *const names[] = {"PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                        "PMIX_SERVER_URI2", "PMIX_SERVER_URI"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *uri = getenv(names[i]);

        if (uri != NULL && uri_socket(uri) != NULL) {
            return set_from_uri(uri, 0, out);
        }
    }
    return PMIX_ERR_NOT_FOUND;
}

/* ---- searching session servers ---- */

typedef struct search {
    const rdp_rndz_query_t *q;
    char host_name[PATH_MAX]; /* "pmix.<host>.tool.<nspace>" */
    rdp_rndz_t found[MAX_CANDIDATES];
    bool on_host[MAX_CANDIDATES];
    size_t nfound;
    size_t nmore; /* beyond MAX_CANDIDATES */
} search_t;

static bool all_digits(const char *s)
{
    if (*s == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
    }
    return true;
}

/* Does a file name "pmix.<host>.tool.<suffix>" answer the query? */
static bool name_matches(const rdp_rndz_query_t *q, const char *name)
{
    const char *tail;
    char want[PMIX_MAX_NSLEN + 16];

    if (strncmp(name, "pmix.", 5) != 0 || strstr(name, ".tool.") == NULL
        || strstr(name, ".tmp") != NULL) {
        return false;
    }
    if (q->pid != 0) {
        snprintf(want, sizeof(want), ".tool.%d", (int)q->pid);
    } else if (q->nspace != NULL) {
        snprintf(want, sizeof(want), ".tool.%s", q->nspace);
    } else {
        tail = strrchr(name, '.'); /* pid files: one per server */
        return tail != NULL && all_digits(tail + 1)
               && strncmp(tail - 5, ".tool", 5) == 0;
    }
    tail = name + strlen(name) - strlen(want);
    return tail > name && strcmp(tail, want) == 0;
}

static bool seen(const search_t *s, pid_t pid)
{
    for (size_t i = 0; i < s->nfound; i++) {
        if (pid != 0 && s->found[i].pid == pid) {
            return true;
        }
    }
    return false;
}

static void consider(search_t *s, const char *dir, const char *name)
{
    char file[PATH_MAX];
    rdp_rndz_t r;

    if (!name_matches(s->q, name)) {
        return;
    }
    snprintf(file, sizeof(file), "%s/%s", dir, name);
    if (read_file(file, &r) != PMIX_SUCCESS) {
        return;
    }
    if (!server_alive(r.pid) || seen(s, r.pid)) {
        rdp_log_debug(TOOL, "%s: server %d %s", file, (int)r.pid,
                      server_alive(r.pid) ? "seen already" : "is gone");
        rdp_rndz_cleanup(&r);
        return;
    }
    if (s->nfound == MAX_CANDIDATES) {
        s->nmore++;
        rdp_rndz_cleanup(&r);
        return;
    }
    s->on_host[s->nfound] = strcmp(name, s->host_name) == 0;
    s->found[s->nfound++] = r;
}

/* Files in @a dir and, when @a depth > 0, in its subdirectories. */
static void scan(search_t *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL) {
        return; /* not ours to read: other users' sessions */
    }
    while ((e = readdir(d)) != NULL) {
        char sub[PATH_MAX];
        struct stat st;

        if (e->d_name[0] == '.') {
            continue;
        }
        if (strncmp(e->d_name, "pmix.", 5) == 0) {
            consider(s, dir, e->d_name);
            continue;
        }
        if (depth == 0) {
            continue;
        }
        snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            scan(s, sub, depth - 1);
        }
    }
    closedir(d);
}

/* Several candidates: the one on this node, if exactly one is. */
static ssize_t the_one_on_host(const search_t *s)
{
    ssize_t pick = -1;

    if (s->q->nspace == NULL) {
        return -1;
    }
    for (size_t i = 0; i < s->nfound; i++) {
        if (s->on_host[i]) {
            if (pick >= 0) {
                return -1;
            }
            pick = (ssize_t)i;
        }
    }
    return pick;
}

static void report_several(const search_t *s)
{
    char pids[512] = "";
    size_t len     = 0;

    for (size_t i = 0; i < s->nfound && len < sizeof(pids) - 16; i++) {
        len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d",
                                i > 0 ? ", " : "", (int)s->found[i].pid);
    }
    rdp_log_error(TOOL,
                  "%zu servers match (pids %s%s); choose one with "
                  "PMIX_SERVER_PIDINFO, PMIX_SERVER_NSPACE, PMIX_SERVER_URI "
                  "or PMIX_CONNECT_TO_SYSTEM",
                  s->nfound + s->nmore, pids, s->nmore > 0 ? ", ..." : "");
}

pmix_status_t rdp_rndz_find(const rdp_rndz_query_t *q, rdp_rndz_t *out)
{
    search_t *s = rdp_calloc(1, sizeof(*s));
    pmix_status_t status;
    ssize_t pick;

    if (s == NULL) {
        return PMIX_ERR_NOMEM;
    }
    s->q = q;
    snprintf(s->host_name, sizeof(s->host_name), "pmix.%s.tool.%s",
             q->host != NULL ? q->host : "",
             q->nspace != NULL ? q->nspace : "");
    for (size_t i = 0; i < 2; i++) {
        if (q->roots[i] != NULL && q->roots[i][0] == '/'
            && (i == 0 || q->roots[0] == NULL
                || strcmp(q->roots[0], q->roots[i]) != 0)) {
            scan(s, q->roots[i], 1);
        }
    }
    pick = s->nfound == 1 ? 0 : the_one_on_host(s);
    if (pick >= 0) {
        *out                = s->found[pick];
        s->found[pick].path = NULL;
        s->found[pick].uri  = NULL;
        status              = PMIX_SUCCESS;
    } else if (s->nfound == 0) {
        rdp_log_debug(TOOL, "no session server found");
        status = PMIX_ERR_NOT_FOUND;
    } else {
        report_several(s);
        status = PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < s->nfound; i++) {
        rdp_rndz_cleanup(&s->found[i]);
    }
    rdp_free(s);
    return status;
}
