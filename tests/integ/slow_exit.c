/* slow_exit.c - LD_PRELOAD shim for tests: a slow daemon's last moments
 *
 * In an rdpmixd started with --node-id N, this waits N * SLOW_EXIT_STEP
 * seconds after main returns, before the process exits, as a daemon would
 * that takes long to clean up (a thousand of them sharing two cores).  Any
 * other process is left alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((destructor)) static void slow_exit(void)
{
    const char *step = getenv("SLOW_EXIT_STEP");
    char args[4096];
    size_t len;
    FILE *f;

    if (step == NULL) {
        return;
    }
    f = fopen("/proc/self/cmdline", "r");
    if (f == NULL) {
        return;
    }
    len = fread(args, 1, sizeof(args) - 1, f);
    fclose(f);
    args[len] = '\0';
    /* argv[0] is the daemon; the arguments are NUL-separated */
    if (strstr(args, "rdpmixd") == NULL) {
        return;
    }
    for (size_t i = 0; i < len; i += strlen(args + i) + 1) {
        if (strcmp(args + i, "--node-id") == 0 && i + 10 < len) {
            sleep((unsigned)(atoi(args + i + 10) * atoi(step)));
            return;
        }
    }
}
