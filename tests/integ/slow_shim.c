/* slow_shim.c - LD_PRELOAD shim for tests: a slow rdpmix-run or rdpmixd
 *
 * As they would be with a thousand daemons sharing two cores (any other
 * process is left alone):
 *   SLOW_FORK=S          rdpmix-run waits S seconds after each fork;
 *   SLOW_EXIT_STEP=S     an rdpmixd started with --node-id N waits N * S
 *                        seconds after main returns, before it exits;
 *   SLOW_EXIT_ALL=S      every rdpmixd waits S seconds there;
 *   SLOW_LAUNCH_NODE=N   the rdpmixd of node N hangs in its launch (in the
 *                        mkdir of the job's directory, the launch's first
 *                        step) until killed;
 *   SLOW_RMDIR_NODE=N    the rdpmixd of node N waits SLOW_RMDIR_SECS
 *                        seconds in the first directory it removes (its
 *                        shutdown's clean-up).
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This process's command line (NUL-separated; argv[0] first) in @a args;
 * returns its length. */
static size_t command_line(char *args, size_t size)
{
    size_t len = 0;
    FILE *f    = fopen("/proc/self/cmdline", "r");

    if (f != NULL) {
        len = fread(args, 1, size - 1, f);
        fclose(f);
    }
    args[len] = '\0';
    return len;
}

/* This process's --node-id if it is an rdpmixd, else -1. */
static int daemon_node_id(void)
{
    char args[4096];
    size_t len = command_line(args, sizeof(args));

    if (strstr(args, "rdpmixd") == NULL) {
        return -1;
    }
    for (size_t i = 0; i < len; i += strlen(args + i) + 1) {
        if (strcmp(args + i, "--node-id") == 0 && i + 10 < len) {
            return atoi(args + i + 10);
        }
    }
    return -1;
}

__attribute__((destructor)) static void slow_exit(void)
{
    const char *step = getenv("SLOW_EXIT_STEP");
    const char *all  = getenv("SLOW_EXIT_ALL");
    int node;

    if ((step != NULL || all != NULL) && (node = daemon_node_id()) >= 0) {
        sleep((unsigned)(step != NULL ? node * atoi(step) : atoi(all)));
    }
}

/* The job's directory is the first thing a launch makes: the daemon's
 * directory (rdpmixd.*) holds it, named for the job (rdpmix.<pid>.<hex>;
 * the server's own is rdpmix.<host>.<pid>). */
int mkdir(const char *path, mode_t mode)
{
    int (*real_mkdir)(const char *, mode_t) =
        (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    const char *node = getenv("SLOW_LAUNCH_NODE");
    const char *dir  = strstr(path, "/rdpmixd.");
    const char *sub  = dir != NULL ? strchr(dir + 1, '/') : NULL;

    if (node != NULL && sub != NULL && strncmp(sub, "/rdpmix.", 8) == 0
        && isdigit((unsigned char)sub[8]) && daemon_node_id() == atoi(node)) {
        for (;;) {
            pause();
        }
    }
    return real_mkdir(path, mode);
}

int rmdir(const char *path)
{
    int (*real_rmdir)(const char *) =
        (int (*)(const char *))dlsym(RTLD_NEXT, "rmdir");
    const char *node = getenv("SLOW_RMDIR_NODE");
    const char *secs = getenv("SLOW_RMDIR_SECS");
    static int waited;

    if (node != NULL && secs != NULL && !waited
        && daemon_node_id() == atoi(node)) {
        waited = 1;
        sleep((unsigned)atoi(secs));
    }
    return real_rmdir(path);
}

pid_t fork(void)
{
    pid_t (*real_fork)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    const char *wait         = getenv("SLOW_FORK");
    char args[4096];
    pid_t pid = real_fork();

    if (pid > 0 && wait != NULL) {
        command_line(args, sizeof(args));
        if (strstr(args, "rdpmix-run") != NULL) {
            sleep((unsigned)atoi(wait));
        }
    }
    return pid;
}
