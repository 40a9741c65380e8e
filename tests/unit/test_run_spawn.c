/* test_run_spawn.c - rdpmixd's fork/exec of a rank */
#include "config.h"
#include "run/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char *env_path[] = {"PATH=/usr/bin:/bin", NULL};
static int devnull      = -1;

static int setup(void **state)
{
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return devnull < 0;
}

static int teardown(void **state)
{
    close(devnull);
    return 0;
}

static void resolve_finds_programs_as_execvp_does(void **state)
{
    char *path = NULL;
    char dir[] = "/tmp/rdpmix-spawn-XXXXXX";
    char file[64];
    char *env_rel[] = {"PATH=.", NULL};
    int fd;

    assert_int_equal(rdp_run_spawn_resolve("sh", env_path, NULL, &path), 0);
    assert_true(strcmp(path, "/usr/bin/sh") == 0
                || strcmp(path, "/bin/sh") == 0);
    free(path);
    assert_int_equal(rdp_run_spawn_resolve("/bin/sh", env_path, NULL, &path),
                     0);
    assert_string_equal(path, "/bin/sh");
    free(path);
    assert_int_equal(
        rdp_run_spawn_resolve("no-such-prog-rdpmix", env_path, NULL, &path),
        ENOENT);
    assert_int_equal(rdp_run_spawn_resolve("", env_path, NULL, &path), ENOENT);
    /* a directory is not a program */
    assert_int_equal(rdp_run_spawn_resolve("/tmp", env_path, NULL, &path),
                     EACCES);

    /* relative names and PATH entries are taken relative to cwd */
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/prog", dir);
    fd = open(file, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rdp_run_spawn_resolve("prog", env_rel, dir, &path),
                     EACCES);
    chmod(file, 0755);
    assert_int_equal(rdp_run_spawn_resolve("prog", env_rel, dir, &path), 0);
    assert_int_equal(access(path, X_OK), 0);
    free(path);
    assert_int_equal(rdp_run_spawn_resolve("./prog", env_path, dir, &path), 0);
    assert_int_equal(access(path, X_OK), 0);
    free(path);
    unlink(file);
    rmdir(dir);
}

static void a_rank_gets_pipes_stdin_and_its_own_process_group(void **state)
{
    char *argv[]       = {"sh", "-c",
                          "echo out; echo err >&2; "
                                "cat; ps -o pgid= -p $$ | tr -d ' '",
                          NULL};
    rdp_run_spawn_t sp = {.argv      = argv,
                          .envp      = env_path,
                          .stdin_fd  = devnull,
                          .pdeathsig = SIGKILL};
    rdp_run_child_t child;
    char buf[256];
    char want[64];
    ssize_t n, got = 0;
    int wstatus, stage, err;

    assert_int_equal(
        rdp_run_spawn_resolve("sh", env_path, NULL, (char **)&sp.path), 0);
    assert_int_equal(rdp_run_spawn_start(&sp, &child), PMIX_SUCCESS);
    assert_int_equal(waitpid(child.pid, &wstatus, 0), child.pid);
    assert_true(WIFEXITED(wstatus));
    /* everything the child wrote is in the pipe after it exits */
    while ((n = read(child.out_fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
        got += n;
    }
    buf[got] = '\0';
    snprintf(want, sizeof(want), "out\n%d\n", (int)child.pid);
    assert_string_equal(buf, want);
    n = read(child.err_fd, buf, sizeof(buf) - 1);
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "err\n", 4);
    assert_int_equal(rdp_run_spawn_failure(child.status_fd, &stage, &err), 0);
    close(child.out_fd);
    close(child.err_fd);
    close(child.status_fd);
    free((char *)sp.path);
}

static void an_exec_failure_is_reported_through_the_status_pipe(void **state)
{
    char *argv[]       = {"gone", NULL};
    rdp_run_spawn_t sp = {.path     = "/nonexistent/rdpmix/gone",
                          .argv     = argv,
                          .envp     = env_path,
                          .stdin_fd = devnull};
    rdp_run_child_t child;
    int wstatus, stage = 0, err = 0;

    assert_int_equal(rdp_run_spawn_start(&sp, &child), PMIX_SUCCESS);
    assert_int_equal(waitpid(child.pid, &wstatus, 0), child.pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 127);
    assert_int_equal(rdp_run_spawn_failure(child.status_fd, &stage, &err), 1);
    assert_int_equal(stage, RDP_RUN_STAGE_EXEC);
    assert_int_equal(err, ENOENT);
    close(child.out_fd);
    close(child.err_fd);
    close(child.status_fd);

    sp.path = "/bin/true";
    sp.cwd  = "/nonexistent/rdpmix";
    assert_int_equal(rdp_run_spawn_start(&sp, &child), PMIX_SUCCESS);
    assert_int_equal(waitpid(child.pid, &wstatus, 0), child.pid);
    assert_int_equal(rdp_run_spawn_failure(child.status_fd, &stage, &err), 1);
    assert_int_equal(stage, RDP_RUN_STAGE_CHDIR);
    assert_int_equal(err, ENOENT);
    close(child.out_fd);
    close(child.err_fd);
    close(child.status_fd);
}

/* The parent's handler writes here; a child that runs it writes too. */
static int handler_pipe[2] = {-1, -1};

static void parent_handler(int signo)
{
    char c     = 'h';
    ssize_t rc = write(handler_pipe[1], &c, 1);

    (void)rc;
}

/* A signal sent right after the fork must act on the child by default,
 * never run the parent's handler in the child (which would report it
 * into the parent's event loop as the parent's own signal). */
static void
a_signal_right_after_fork_never_runs_the_parents_handler(void **state)
{
    char *argv[]       = {"sleep", "10", NULL};
    rdp_run_spawn_t sp = {.path     = "/bin/sleep",
                          .argv     = argv,
                          .envp     = env_path,
                          .stdin_fd = devnull};
    struct sigaction sa, old;
    rdp_run_child_t child;
    int wstatus;
    char c;

    if (access(sp.path, X_OK) != 0) {
        sp.path = "/usr/bin/sleep";
    }
    assert_int_equal(pipe(handler_pipe), 0);
    fcntl(handler_pipe[0], F_SETFL, O_NONBLOCK);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = parent_handler;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(rdp_run_spawn_start(&sp, &child), PMIX_SUCCESS);
        kill(child.pid, SIGUSR1);
        assert_int_equal(waitpid(child.pid, &wstatus, 0), child.pid);
        assert_true(WIFSIGNALED(wstatus));
        assert_int_equal(WTERMSIG(wstatus), SIGUSR1);
        close(child.out_fd);
        close(child.err_fd);
        close(child.status_fd);
    }
    assert_int_equal(read(handler_pipe[0], &c, 1), -1);
    sigaction(SIGUSR1, &old, NULL);
    close(handler_pipe[0]);
    close(handler_pipe[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resolve_finds_programs_as_execvp_does),
        cmocka_unit_test(a_rank_gets_pipes_stdin_and_its_own_process_group),
        cmocka_unit_test(an_exec_failure_is_reported_through_the_status_pipe),
        cmocka_unit_test(
            a_signal_right_after_fork_never_runs_the_parents_handler),
    };

    return cmocka_run_group_tests_name("run_spawn", tests, setup, teardown);
}
