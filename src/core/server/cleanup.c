/* cleanup.c - files and directories a job asked us to remove at its end */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * PMIx_Job_control_nb with PMIX_REGISTER_CLEANUP (files) or
 * PMIX_REGISTER_CLEANUP_DIR (directories; PMIX_CLEANUP_RECURSIVE,
 * PMIX_CLEANUP_IGNORE, PMIX_CLEANUP_LEAVE_TOPDIR) registers paths that
 * are removed when the job is deregistered.
 *
 * Safety: paths must be absolute and free of "." / ".." components; every
 * directory on the way is opened with O_NOFOLLOW, so no symlink is ever
 * followed (a symlink found inside a directory is removed, not its
 * target).  When the server runs as another user than the client (e.g.
 * root), an entry is removed only if it and its parent directory belong
 * to the client's uid, i.e. only what the client itself could remove.
 */

#define MAX_DEPTH 64

struct rdp_srv_cleanup {
    rdp_list_t link;
    char *path;
    bool is_dir;
    bool recursive;
    bool leave_topdir;
    char **ignore;
    uid_t uid;
};

static void cleanup_free(rdp_srv_cleanup_t *c)
{
    rdp_free(c->path);
    pmix_argv_free(c->ignore);
    rdp_free(c);
}

static bool path_ok(const char *p)
{
    size_t len = strlen(p);

    if (p[0] != '/' || len < 2 || len >= PATH_MAX) {
        return false;
    }
    for (const char *c = p; *c != '\0'; c++) {
        if (c[0] == '/' && c[1] == '.'
            && (c[2] == '/' || c[2] == '\0'
                || (c[2] == '.' && (c[3] == '/' || c[3] == '\0')))) {
            return false;
        }
    }
    return true;
}

static const char *info_string(const pmix_info_t *in)
{
    return in->value.type == PMIX_STRING ? in->value.data.string : NULL;
}

static pmix_status_t add_paths(rdp_srv_client_t *client, const char *list,
                               bool is_dir, bool recursive, bool leave,
                               char **ignore)
{
    char **paths         = pmix_argv_split(list, ',');
    pmix_status_t status = PMIX_SUCCESS;

    if (paths == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; paths[i] != NULL; i++) {
        if (!path_ok(paths[i])) {
            rdp_log_error(SERVER,
                          "%s:%u: cleanup path \"%.128s\" refused: it "
                          "must be absolute, without . or ..",
                          client->proc.nspace, client->proc.rank, paths[i]);
            status = PMIX_ERR_BAD_PARAM;
            goto out;
        }
    }
    for (size_t i = 0; paths[i] != NULL; i++) {
        rdp_srv_cleanup_t *c = rdp_calloc(1, sizeof(*c));

        if (c == NULL) {
            status = PMIX_ERR_NOMEM;
            goto out;
        }
        c->path         = rdp_strdup(paths[i]);
        c->is_dir       = is_dir;
        c->recursive    = recursive;
        c->leave_topdir = leave;
        c->uid          = client->uid;
        c->ignore       = ignore == NULL ? NULL : pmix_argv_copy(ignore);
        if (c->path == NULL || (ignore != NULL && c->ignore == NULL)) {
            cleanup_free(c);
            status = PMIX_ERR_NOMEM;
            goto out;
        }
        rdp_list_push_back(&client->ns->cleanups, &c->link);
        rdp_log_debug(SERVER, "%s:%u registered cleanup of %s %s%s",
                      client->proc.nspace, client->proc.rank,
                      is_dir ? "directory" : "file", c->path,
                      recursive ? " (recursive)" : "");
    }
out:
    pmix_argv_free(paths);
    return status;
}

pmix_status_t rdp_srv_cleanup_register(rdp_srv_client_t *client,
                                       const pmix_info_t *info, size_t ninfo,
                                       bool *handled_p)
{
    const char *files = NULL, *dirs = NULL, *ign = NULL;
    bool recursive = false, leave = false, any = false;
    char **ignore        = NULL;
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (PMIX_CHECK_KEY(in, PMIX_REGISTER_CLEANUP)) {
            files = info_string(in);
            any   = true;
        } else if (PMIX_CHECK_KEY(in, PMIX_REGISTER_CLEANUP_DIR)) {
            dirs = info_string(in);
            any  = true;
        } else if (PMIX_CHECK_KEY(in, PMIX_CLEANUP_RECURSIVE)) {
            recursive = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_CLEANUP_LEAVE_TOPDIR)) {
            leave = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_CLEANUP_IGNORE)) {
            ign = info_string(in);
        }
    }
    *handled_p = any;
    if (!any) {
        return PMIX_SUCCESS;
    }
    if ((files == NULL && dirs == NULL) || client == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (ign != NULL) {
        ignore = pmix_argv_split(ign, ',');
        if (ignore == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    if (files != NULL) {
        status = add_paths(client, files, false, false, false, NULL);
    }
    if (status == PMIX_SUCCESS && dirs != NULL) {
        status = add_paths(client, dirs, true, recursive, leave, ignore);
    }
    pmix_argv_free(ignore);
    return status;
}

/* ---- removal ---- */

static bool ignored(char **ignore, const char *full, const char *name)
{
    for (size_t i = 0; ignore != NULL && ignore[i] != NULL; i++) {
        if (strcmp(ignore[i], full) == 0
            || (strchr(ignore[i], '/') == NULL
                && strcmp(ignore[i], name) == 0)) {
            return true;
        }
    }
    return false;
}

/* Open the parent directory of @a path without following any symlink;
 * *name_p points at the last component inside @a path. */
static int open_parent(const char *path, const char **name_p)
{
    char buf[PATH_MAX];
    char *comp, *save = NULL, *last;
    int fd;

    if (strlen(path) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, path);
    last = strrchr(buf, '/');
    while (last != NULL && last[1] == '\0' && last != buf) {
        *last = '\0'; /* trailing slashes */
        last  = strrchr(buf, '/');
    }
    if (last == NULL || last[1] == '\0') {
        return -1;
    }
    *name_p = path + (last + 1 - buf);
    *last   = '\0';
    fd      = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (comp = strtok_r(buf, "/", &save); fd >= 0 && comp != NULL;
         comp = strtok_r(NULL, "/", &save)) {
        int next =
            openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        close(fd);
        fd = next;
    }
    return fd;
}

typedef struct rm_ctx {
    uid_t uid;
    bool check_owner; /* server runs as someone else */
    bool recursive;
    char **ignore;
} rm_ctx_t;

static bool owned_ok(const rm_ctx_t *ctx, const struct stat *st)
{
    return !ctx->check_owner || st->st_uid == ctx->uid;
}

static void remove_contents(const rm_ctx_t *ctx, int dfd, const char *dirpath,
                            int depth)
{
    DIR *dir;
    struct dirent *de;
    int fd2 = dup(dfd);

    if (fd2 < 0 || (dir = fdopendir(fd2)) == NULL) {
        if (fd2 >= 0) {
            close(fd2);
        }
        rdp_log_warn(SERVER, "cleanup: cannot read %s: %m", dirpath);
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        char full[PATH_MAX];
        struct stat st;

        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if ((size_t)snprintf(full, sizeof(full), "%s/%s", dirpath, de->d_name)
            >= sizeof(full)) {
            continue;
        }
        if (ignored(ctx->ignore, full, de->d_name)
            || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            continue;
        }
        if (!owned_ok(ctx, &st)) {
            rdp_log_warn(SERVER, "cleanup: %s is not owned by uid %u: kept",
                         full, (unsigned)ctx->uid);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int sub;

            if (!ctx->recursive || depth >= MAX_DEPTH) {
                continue;
            }
            sub = openat(dfd, de->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                continue;
            }
            remove_contents(ctx, sub, full, depth + 1);
            close(sub);
            if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) != 0) {
                rdp_log_debug(SERVER, "cleanup: cannot remove %s: %m", full);
            }
        } else if (unlinkat(dfd, de->d_name, 0) != 0) {
            rdp_log_debug(SERVER, "cleanup: cannot remove %s: %m", full);
        }
    }
    closedir(dir);
}

static void run_one(const rdp_srv_cleanup_t *c)
{
    rm_ctx_t ctx     = {c->uid, geteuid() != c->uid, c->recursive, c->ignore};
    const char *name = NULL;
    struct stat st, pst;
    int pfd = open_parent(c->path, &name);

    if (pfd < 0) {
        rdp_log_debug(SERVER,
                      "cleanup: %s unreachable without following "
                      "links; skipped",
                      c->path);
        return;
    }
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        close(pfd);
        return; /* already gone */
    }
    if (ctx.check_owner
        && (fstat(pfd, &pst) != 0 || pst.st_uid != c->uid
            || st.st_uid != c->uid)) {
        rdp_log_warn(SERVER,
                     "cleanup: %s (or its directory) is not owned "
                     "by uid %u: refused",
                     c->path, (unsigned)c->uid);
        close(pfd);
        return;
    }
    if (!c->is_dir) {
        if (S_ISDIR(st.st_mode)) {
            rdp_log_warn(SERVER,
                         "cleanup: %s is a directory, registered as "
                         "a file: kept",
                         c->path);
        } else if (unlinkat(pfd, name, 0) != 0) {
            rdp_log_debug(SERVER, "cleanup: cannot remove %s: %m", c->path);
        }
        close(pfd);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        rdp_log_warn(SERVER, "cleanup: %s is not a directory: kept", c->path);
        close(pfd);
        return;
    }
    {
        int dfd =
            openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (dfd >= 0) {
            remove_contents(&ctx, dfd, c->path, 0);
            close(dfd);
        }
    }
    if (!c->leave_topdir && unlinkat(pfd, name, AT_REMOVEDIR) != 0) {
        rdp_log_debug(SERVER, "cleanup: cannot remove %s: %m", c->path);
    }
    close(pfd);
}

void rdp_srv_cleanup_run(rdp_srv_nspace_t *ns)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(&ns->cleanups)) != NULL) {
        rdp_srv_cleanup_t *c = rdp_container_of(item, rdp_srv_cleanup_t, link);

        run_one(c);
        cleanup_free(c);
    }
}

void rdp_srv_cleanup_discard(rdp_srv_nspace_t *ns)
{
    rdp_list_t *item;

    while ((item = rdp_list_pop_front(&ns->cleanups)) != NULL) {
        cleanup_free(rdp_container_of(item, rdp_srv_cleanup_t, link));
    }
}
