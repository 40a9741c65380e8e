/* spawn.h - fork/exec of one rank with piped output, for rdpmixd */
#ifndef RDP_RUN_SPAWN_H
#define RDP_RUN_SPAWN_H

#include <pmix_common.h>

#include <sys/types.h>

/*
 * The child becomes the leader of its own process group (so a signal to
 * -pid reaches everything the rank started), gets @a pdeathsig when the
 * daemon's forking thread dies, default signal dispositions and an empty
 * signal mask, stdin from @a stdin_fd, stdout/stderr into pipes, and every
 * other descriptor closed at exec.  Between fork and exec it only makes
 * async-signal-safe calls (the daemon is multi-threaded).  If chdir or
 * exec fails, the child reports {stage, errno} through a close-on-exec
 * pipe and exits 127 (ENOENT) or 126.
 */
typedef struct rdp_run_spawn {
    const char *path; /* resolved executable (rdp_run_spawn_resolve) */
    char *const *argv;
    char *const *envp;
    const char *cwd; /* NULL: stay in the daemon's directory */
    int stdin_fd;
    int pdeathsig;
} rdp_run_spawn_t;

typedef struct rdp_run_child {
    pid_t pid;
    int out_fd; /* read ends, nonblocking, close-on-exec */
    int err_fd;
    int status_fd; /* exec-failure report; read after reaping */
} rdp_run_child_t;

enum rdp_run_spawn_stage {
    RDP_RUN_STAGE_CHDIR = 1,
    RDP_RUN_STAGE_EXEC  = 2
};

/** Fork and exec. On failure no child exists and nothing is left open. */
pmix_status_t rdp_run_spawn_start(const rdp_run_spawn_t *sp,
                                  rdp_run_child_t *child_p);

/**
 * After the child was reaped: 1 and {stage, errno} if chdir/exec failed,
 * else 0.  Does not close @a status_fd.
 */
int rdp_run_spawn_failure(int status_fd, int *stage_p, int *errno_p);

/**
 * Find @a argv0 as execvp would, with PATH taken from @a envp (default
 * "/usr/local/bin:/usr/bin:/bin"); relative names are taken relative to
 * @a cwd when given.  Returns 0 and a malloc'ed path, or an errno value
 * (ENOENT, EACCES, ENOMEM ...).
 */
int rdp_run_spawn_resolve(const char *argv0, char *const *envp, const char *cwd,
                          char **path_p);

#endif
