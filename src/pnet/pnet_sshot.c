/* pnet_sshot.c - Slingshot: VNIs per job from the site's pool, a CXI
 * service per node restricted to the job's user and VNIs */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/log.h"

#include <pmix.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Head node: "sshot_vnis_per_job" (default 1) VNIs of the pool
 * "sshot_vnis" (e.g. 1024-2047), delivered as SLINGSHOT_VNIS (comma
 * list), SLINGSHOT_DEVICES ("sshot_devices", default cxi0) and
 * SLINGSHOT_TCS ("sshot_tcs", default 0x1), which libfabric's CXI
 * provider reads, and as the job-level value "rdpmix.pnet.sshot.vnis".
 *
 * Each node, before forks: a CXI service that only the job's user may use
 * with only those VNIs.  Through libcxi when the node has it (loaded at
 * run time, pnet_cxi.c; "sshot_libcxi" names another file, "none" skips
 * it): one service per device of "sshot_devices", whose ids become
 * SLINGSHOT_SVC_IDS; else through the site's command "sshot_svc_command",
 * run as
 *     COMMAND setup|release NSPACE UID VNIS DEVICES
 * (also in RDPMIX_PNET_NSPACE, _UID, _VNIS, _DEVICES).  A setup line
 * "svc_ids=LIST" on its output becomes SLINGSHOT_SVC_IDS for this node's
 * processes.  A setup that fails (exit status, or longer than
 * "sshot_svc_timeout" seconds, default 30) fails the node's setup, so the
 * launch is aborted and the VNIs go back to the pool; release runs when
 * the job ends here.
 */
#define SSHOT_POOL    "sshot_vni"
#define SSHOT_KEY     RDP_PNET_KEY_PREFIX "sshot.vnis"
#define SSHOT_MAX_VNI 0xffff

/* nspace -> "UID VNIS DEVICES" of a service set up here, for release */
static rdp_hash_t services;

static pmix_status_t vnis_text(const uint32_t *v, size_t n, char *buf,
                               size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, len - used, "%s%u", i ? "," : "", v[i]);

        if (w < 0 || (size_t)w >= len - used) {
            return PMIX_ERR_BAD_PARAM;
        }
        used += (size_t)w;
    }
    return PMIX_SUCCESS;
}

static void setting(const char *name, const char *dflt, char *buf, size_t len)
{
    if (!rdp_pnet_conf_get(name, buf, len) || buf[0] == '\0') {
        snprintf(buf, len, "%s", dflt);
    }
}

static pmix_status_t sshot_setup_app(const char *nspace, rdp_pnet_out_t *out)
{
    uint32_t lo, hi, n, vnis[256];
    char text[256 * 6], devices[128], tcs[64];
    pmix_status_t status;

    status = rdp_pnet_conf_range("sshot_vnis", &lo, &hi);
    if (status == PMIX_SUCCESS && hi > SSHOT_MAX_VNI) {
        rdp_log_error(PNET, "sshot_vnis must lie in 0-65535");
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_conf_count("sshot_vnis_per_job", 1, &n);
    }
    if (status == PMIX_SUCCESS && n > 256) {
        rdp_log_error(PNET, "sshot_vnis_per_job is at most 256");
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_pool_take(SSHOT_POOL, lo, hi, nspace, n, vnis);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    setting("sshot_devices", "cxi0", devices, sizeof(devices));
    setting("sshot_tcs", "0x1", tcs, sizeof(tcs));
    status = vnis_text(vnis, n, text, sizeof(text));
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_setenv(out, "SLINGSHOT_VNIS", text);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_setenv(out, "SLINGSHOT_DEVICES", devices);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_setenv(out, "SLINGSHOT_TCS", tcs);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_value(out, SSHOT_KEY, text, PMIX_STRING);
    }
    if (status == PMIX_SUCCESS) {
        rdp_log_info(PNET, "%s: sshot VNIs %s", nspace, text);
    }
    return status;
}

static void sshot_release_app(const char *nspace)
{
    rdp_pnet_pool_give_back(SSHOT_POOL, nspace);
}

/* ---- the node's CXI service ---- */

/* Wait for @a pid at most until @a deadline (CLOCK_MONOTONIC seconds);
 * kill it after.  Its exit status, or -1 when it did not exit by itself. */
static int reap(pid_t pid, time_t deadline)
{
    struct timespec now, tick = {.tv_sec = 0, .tv_nsec = 20000000};
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);

        if (r == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec >= deadline) {
            kill(pid, SIGKILL);
            (void)waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
}

/* Read the command's output (until EOF or @a deadline) into @a buf */
static void read_output(int fd, time_t deadline, char *buf, size_t len)
{
    size_t used = 0;
    struct timespec now;

    buf[0] = '\0';
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t r;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec >= deadline || poll(&p, 1, 100) < 0) {
            if (errno == EINTR && now.tv_sec < deadline) {
                continue;
            }
            return;
        }
        if (p.revents == 0) {
            continue;
        }
        r = read(fd, buf + used, len - 1 - used);
        if (r <= 0) {
            return;
        }
        used += (size_t)r;
        buf[used] = '\0';
        if (used == len - 1) {
            return;
        }
    }
}

/* The server's environment and the job's description, for the command
 * (not setenv: other threads of the server read the environment) */
static char **command_env(const char *nspace, const char *uid, const char *vnis,
                          const char *devices)
{
    const char *names[]  = {"RDPMIX_PNET_NSPACE", "RDPMIX_PNET_UID",
                            "RDPMIX_PNET_VNIS", "RDPMIX_PNET_DEVICES"};
    const char *values[] = {nspace, uid, vnis, devices};
    char **envp          = pmix_argv_copy(environ);

    for (size_t i = 0; i < 4; i++) {
        if (pmix_setenv(names[i], values[i], true, &envp) != PMIX_SUCCESS) {
            pmix_argv_free(envp);
            return NULL;
        }
    }
    return envp;
}

/* Run the site command: its exit status (-1: could not run, killed or
 * timed out), its output in @a outbuf */
static int run_command(const char *cmd, const char *verb, const char *nspace,
                       const char *uid, const char *vnis, const char *devices,
                       char *outbuf, size_t outlen)
{
    char *argv[] = {(char *)cmd, (char *)verb, (char *)nspace,
                    (char *)uid, (char *)vnis, (char *)devices,
                    NULL};
    char **envp  = command_env(nspace, uid, vnis, devices);
    posix_spawn_file_actions_t fa;
    struct timespec now;
    uint32_t secs;
    int pfd[2], rc = -1;
    pid_t pid;

    if (envp == NULL
        || rdp_pnet_conf_count("sshot_svc_timeout", 30, &secs) != PMIX_SUCCESS
        || pipe2(pfd, O_CLOEXEC) != 0) {
        pmix_argv_free(envp);
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY,
                                     0);
    if (posix_spawn(&pid, cmd, &fa, NULL, argv, envp) == 0) {
        close(pfd[1]);
        pfd[1] = -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        read_output(pfd[0], now.tv_sec + (time_t)secs, outbuf, outlen);
        rc = reap(pid, now.tv_sec + (time_t)secs);
    } else {
        rdp_log_error(PNET, "cannot run sshot_svc_command %s: %m", cmd);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[0]);
    if (pfd[1] >= 0) {
        close(pfd[1]);
    }
    pmix_argv_free(envp);
    return rc;
}

/* libcxi, when this node has it ("sshot_libcxi" names another file;
 * "none": do not use it).  NOT_FOUND / NOT_SUPPORTED: use the command. */
static pmix_status_t cxi_open(rdp_pnet_cxi_t **cxi_p)
{
    char path[256];

    setting("sshot_libcxi", "libcxi.so.1", path, sizeof(path));
    if (strcmp(path, "none") == 0) {
        return PMIX_ERR_NOT_FOUND;
    }
    return rdp_pnet_cxi_load(path, cxi_p);
}

/* "1024,1025" into @a v (at most @a max); their number, 0 if malformed */
static size_t vnis_parse(const char *text, uint32_t *v, size_t max)
{
    size_t n = 0;
    char *end;

    for (const char *p = text; n < max; p = end + 1) {
        unsigned long x = strtoul(p, &end, 10);

        if (end == p || x > SSHOT_MAX_VNI) {
            return 0;
        }
        v[n++] = (uint32_t)x;
        if (*end == '\0') {
            return n;
        }
        if (*end != ',') {
            return 0;
        }
    }
    return 0;
}

/* Keep what job_end must release: "lib SVC_IDS DEVICES" or
 * "cmd UID VNIS DEVICES" */
static pmix_status_t keep_service(const char *nspace, const char *how,
                                  const char *a, const char *b,
                                  const char *devices)
{
    size_t klen = strlen(how) + strlen(a) + strlen(b) + strlen(devices) + 4;
    char *keep  = rdp_malloc(klen);

    if (keep == NULL) {
        return PMIX_ERR_NOMEM;
    }
    snprintf(keep, klen, "%s %s %s %s", how, a, b, devices);
    if (rdp_hash_set_str(&services, nspace, keep, NULL) != PMIX_SUCCESS) {
        rdp_free(keep);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

/* The node's services through libcxi; their ids as SLINGSHOT_SVC_IDS */
static pmix_status_t setup_by_libcxi(const char *nspace, rdp_pnet_cxi_t *cxi,
                                     const char *vnis, const char *devices,
                                     rdp_pnet_out_t *node)
{
    uint32_t v[256];
    size_t n = vnis_parse(vnis, v, 256);
    char ids[RDP_PNET_CXI_MAX_DEVICES * 12];
    pmix_status_t status;

    if (n == 0) {
        rdp_log_error(PNET, "%s: sshot: malformed VNI list '%.64s'", nspace,
                      vnis);
        return PMIX_ERR_BAD_PARAM;
    }
    status =
        rdp_pnet_cxi_setup(cxi, devices, geteuid(), v, n, ids, sizeof(ids));
    if (status == PMIX_SUCCESS) {
        status = keep_service(nspace, "lib", ids, "-", devices);
        if (status != PMIX_SUCCESS) {
            rdp_pnet_cxi_release(cxi, devices, ids);
        }
    }
    if (status == PMIX_SUCCESS) {
        rdp_log_info(PNET, "%s: sshot: libcxi services %s on %s", nspace, ids,
                     devices);
        status = rdp_pnet_out_setenv(node, "SLINGSHOT_SVC_IDS", ids);
    }
    return status;
}

static const char *find_string(const pmix_info_t *info, size_t n,
                               const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], key)
            && info[i].value.type == PMIX_STRING) {
            return info[i].value.data.string;
        }
    }
    return NULL;
}

/* "svc_ids=LIST" in the command's output, as SLINGSHOT_SVC_IDS */
static pmix_status_t svc_ids_from(char *output, rdp_pnet_out_t *node)
{
    for (char *line = strtok(output, "\n"); line != NULL;
         line       = strtok(NULL, "\n")) {
        if (strncmp(line, "svc_ids=", 8) == 0 && line[8] != '\0') {
            return rdp_pnet_out_setenv(node, "SLINGSHOT_SVC_IDS", line + 8);
        }
    }
    return PMIX_SUCCESS;
}

/* The node's services through the site's command */
static pmix_status_t setup_by_command(const char *nspace, const char *vnis,
                                      const char *devices, rdp_pnet_out_t *node)
{
    char cmd[512], uid[16], output[1024];
    pmix_status_t status;
    int rc;

    if (!rdp_pnet_conf_get("sshot_svc_command", cmd, sizeof(cmd))
        || cmd[0] == '\0') {
        rdp_log_info(PNET,
                     "%s: sshot: no libcxi and no sshot_svc_command: VNIs "
                     "%s are not enforced here",
                     nspace, vnis);
        return PMIX_SUCCESS;
    }
    /* the job's user: the server's (rdpmixd runs as the job's user) */
    snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
    rc = run_command(cmd, "setup", nspace, uid, vnis, devices, output,
                     sizeof(output));
    if (rc != 0) {
        rdp_log_error(PNET, "%s: sshot_svc_command %s setup failed (%s %d)",
                      nspace, cmd, rc < 0 ? "killed or timed out" : "exit", rc);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    status = keep_service(nspace, "cmd", uid, vnis, devices);
    if (status == PMIX_SUCCESS) {
        status = svc_ids_from(output, node);
    }
    return status;
}

static pmix_status_t sshot_setup_local(const char *nspace,
                                       const pmix_info_t *info, size_t ninfo,
                                       rdp_pnet_out_t *node)
{
    const char *vnis = find_string(info, ninfo, SSHOT_KEY);
    rdp_pnet_cxi_t *cxi;
    char devices[128];
    pmix_status_t status;

    if (vnis == NULL) {
        return PMIX_SUCCESS; /* no VNIs for this job: nothing to program */
    }
    setting("sshot_devices", "cxi0", devices, sizeof(devices));
    if (cxi_open(&cxi) != PMIX_SUCCESS) {
        return setup_by_command(nspace, vnis, devices, node);
    }
    status = setup_by_libcxi(nspace, cxi, vnis, devices, node);
    rdp_pnet_cxi_unload(cxi);
    return status;
}

/* Release through libcxi what setup_by_libcxi kept ("IDS - DEVICES") */
static void release_by_libcxi(const char *nspace, const char *kept)
{
    char ids[RDP_PNET_CXI_MAX_DEVICES * 12], devices[128];
    rdp_pnet_cxi_t *cxi;

    if (sscanf(kept, "%191s - %127s", ids, devices) != 2
        || cxi_open(&cxi) != PMIX_SUCCESS) {
        rdp_log_warn(PNET, "%s: sshot: cannot release the libcxi services",
                     nspace);
        return;
    }
    rdp_pnet_cxi_release(cxi, devices, ids);
    rdp_pnet_cxi_unload(cxi);
}

static void release_by_command(const char *nspace, const char *kept)
{
    char cmd[512], output[256], uid[16], vnis[256 * 6], devices[128];

    if (rdp_pnet_conf_get("sshot_svc_command", cmd, sizeof(cmd))
        && sscanf(kept, "%15s %1535s %127s", uid, vnis, devices) == 3
        && run_command(cmd, "release", nspace, uid, vnis, devices, output,
                       sizeof(output))
               != 0) {
        rdp_log_warn(PNET, "%s: sshot_svc_command %s release failed", nspace,
                     cmd);
    }
}

static void sshot_job_end(const char *nspace)
{
    char *keep = rdp_hash_remove_str(&services, nspace);

    if (keep == NULL) {
        return;
    }
    if (strncmp(keep, "lib ", 4) == 0) {
        release_by_libcxi(nspace, keep + 4);
    } else {
        release_by_command(nspace, keep + 4);
    }
    rdp_free(keep);
}

/* A CXI device here and a VNI pool configured; else only when named */
static bool sshot_usable(void)
{
    char range[64];

    return access("/sys/class/cxi", F_OK) == 0
           && rdp_pnet_conf_get("sshot_vnis", range, sizeof(range));
}

static const char *const settings[] = {
    "sshot_vnis",        "sshot_vnis_per_job", "sshot_devices", "sshot_tcs",
    "sshot_svc_command", "sshot_svc_timeout",  "sshot_libcxi",  NULL};

const rdp_pnet_module_t rdp_pnet_sshot_module = {
    .settings    = settings,
    .name        = "sshot",
    .usable      = sshot_usable,
    .setup_app   = sshot_setup_app,
    .release_app = sshot_release_app,
    .setup_local = sshot_setup_local,
    .job_end     = sshot_job_end,
};
