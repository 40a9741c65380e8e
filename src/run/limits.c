/* limits.c - what a launch needs of this machine, and whether it has it */
#include "config.h"
#include "run/limits.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* What is left of @a max when @a used is taken. */
static uint64_t left(uint64_t max, uint64_t used)
{
    return used < max ? max - used : 0;
}

/* The first number in a file; -1 if there is none. */
static int read_u64(const char *path, uint64_t *v_p)
{
    FILE *f = fopen(path, "re");
    unsigned long long v;
    int n;

    if (f == NULL) {
        return -1;
    }
    n = fscanf(f, "%llu", &v);
    fclose(f);
    if (n != 1) {
        return -1;
    }
    *v_p = v;
    return 0;
}

/* fs.file-max less the files open now ("allocated unused max"). */
static uint64_t probe_files(void)
{
    unsigned long long alloc, unused, max;
    FILE *f = fopen("/proc/sys/fs/file-nr", "re");
    int n;

    if (f == NULL) {
        return UINT64_MAX;
    }
    n = fscanf(f, "%llu %llu %llu", &alloc, &unused, &max);
    fclose(f);
    if (n != 3 || unused > alloc) {
        return UINT64_MAX;
    }
    return left(max, alloc - unused);
}

/* Threads of the processes of real user @a uid (what RLIMIT_NPROC counts). */
static uint64_t user_tasks(uid_t uid)
{
    DIR *dir = opendir("/proc");
    struct dirent *e;
    uint64_t n = 0;

    if (dir == NULL) {
        return 0;
    }
    while ((e = readdir(dir)) != NULL) {
        char path[300], line[256];
        unsigned long ruid = (unsigned long)-1, threads = 0;
        FILE *f;

        if (!isdigit((unsigned char)e->d_name[0])) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        f = fopen(path, "re");
        if (f == NULL) {
            continue; /* it ended meanwhile */
        }
        while (fgets(line, sizeof(line), f) != NULL) {
            if (sscanf(line, "Uid: %lu", &ruid) != 1) {
                sscanf(line, "Threads: %lu", &threads);
            }
        }
        fclose(f);
        if (ruid == (unsigned long)uid) {
            n += threads;
        }
    }
    closedir(dir);
    return n;
}

/* Tasks (processes and threads: each takes a pid) that may still start. */
static uint64_t probe_tasks(void)
{
    unsigned long long total = 0;
    uint64_t max, tasks = UINT64_MAX;
    struct rlimit rl;
    FILE *f;

    /* /proc/loadavg: "0.08 0.03 0.01 1/123 4567": 123 tasks exist */
    f = fopen("/proc/loadavg", "re");
    if (f != NULL) {
        if (fscanf(f, "%*s %*s %*s %*u/%llu", &total) != 1) {
            total = 0;
        }
        fclose(f);
    }
    if (read_u64("/proc/sys/kernel/pid_max", &max) == 0) {
        tasks = min64(tasks, left(max, total));
    }
    if (read_u64("/proc/sys/kernel/threads-max", &max) == 0) {
        tasks = min64(tasks, left(max, total));
    }
    /* the kernel does not hold root to RLIMIT_NPROC */
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && geteuid() != 0) {
        tasks = min64(tasks, left(rl.rlim_cur, user_tasks(getuid())));
    }
    return tasks;
}

/* What our memory cgroup (v2 "0::/path", v1 "N:memory:/path") still
 * allows: its limit less its usage. */
static uint64_t probe_cgroup_mem(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[1024], lim_path[1200], use_path[1200];
    uint64_t mem = UINT64_MAX, lim, use;

    if (f == NULL) {
        return UINT64_MAX;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *v1 = strstr(line, ":memory:");

        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(lim_path, sizeof(lim_path), "/sys/fs/cgroup%s/memory.max",
                     line + 3);
            snprintf(use_path, sizeof(use_path),
                     "/sys/fs/cgroup%s/memory.current", line + 3);
        } else if (v1 != NULL) {
            snprintf(lim_path, sizeof(lim_path),
                     "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", v1 + 8);
            snprintf(use_path, sizeof(use_path),
                     "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1 + 8);
        } else {
            continue;
        }
        /* "max" (no limit) does not parse, and neither does a path that is
         * not ours to see: both leave the limit alone */
        if (read_u64(lim_path, &lim) == 0 && read_u64(use_path, &use) == 0) {
            mem = min64(mem, left(lim, use));
        }
    }
    fclose(f);
    return mem;
}

static uint64_t probe_mem(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kib;
    uint64_t mem = UINT64_MAX;

    if (f != NULL) {
        while (fgets(line, sizeof(line), f) != NULL) {
            if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
                mem = (uint64_t)kib * 1024;
                break;
            }
        }
        fclose(f);
    }
    return min64(mem, probe_cgroup_mem());
}

/* kernel.shmmni less the segments that exist (/proc/sysvipc/shm has a
 * header line and one line per segment). */
static uint64_t probe_shm_segs(void)
{
    FILE *f;
    uint64_t max, lines = 0;
    int c;

    if (read_u64("/proc/sys/kernel/shmmni", &max) != 0) {
        return UINT64_MAX;
    }
    f = fopen("/proc/sysvipc/shm", "re");
    if (f == NULL) {
        return UINT64_MAX;
    }
    while ((c = fgetc(f)) != EOF) {
        lines += (c == '\n');
    }
    fclose(f);
    return left(max, lines > 0 ? lines - 1 : 0);
}

void rdp_run_host_probe(rdp_run_host_t *host_p)
{
    struct rlimit rl;

    host_p->nofile = UINT64_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        host_p->nofile = rl.rlim_cur;
    }
    host_p->files    = probe_files();
    host_p->tasks    = probe_tasks();
    host_p->mem      = probe_mem();
    host_p->shm_segs = probe_shm_segs();
}

int rdp_run_host_fits(const rdp_run_host_t *host, const rdp_run_shape_t *shape,
                      char *why, size_t len)
{
    /* UCX (and its shared memory) runs only between the daemons of a
     * multi-node job */
    int engine     = shape->nnodes > 1;
    int sm         = engine && shape->sm;
    uint64_t nodes = shape->nnodes;
    uint64_t dfds  = RDP_RUN_DAEMON_FDS
                    + (uint64_t)RDP_RUN_RANK_FDS * shape->max_ppn
                    + (engine ? RDP_RUN_PEER_FDS * (nodes - 1) : 0);
    /* rdpmix-run needs fewer (a connection per node) than one daemon */
    uint64_t files = nodes * dfds + (uint64_t)RDP_RUN_RANK_OWN_FDS * shape->np
                     + RDP_RUN_LAUNCHER_FDS + nodes;
    uint64_t tasks = nodes * RDP_RUN_DAEMON_TASKS
                     + (uint64_t)RDP_RUN_RANK_TASKS * shape->np + 1;
    uint64_t mem  = nodes * (sm ? RDP_RUN_DAEMON_SM_MEM : RDP_RUN_DAEMON_MEM);
    uint64_t segs = sm ? nodes * RDP_RUN_DAEMON_SM_SEGS : 0;

    if (dfds > host->nofile) {
        snprintf(why, len,
                 "a daemon may need %" PRIu64 " open files, but the limit "
                 "is %" PRIu64 " (ulimit -n)",
                 dfds, host->nofile);
    } else if (files > host->files) {
        snprintf(why, len,
                 "the job may need %" PRIu64 " open files, but the system "
                 "has %" PRIu64 " left (fs.file-max)",
                 files, host->files);
    } else if (tasks > host->tasks) {
        snprintf(why, len,
                 "the job needs %" PRIu64 " processes and threads, but only "
                 "%" PRIu64 " more may start (kernel.pid_max, "
                 "kernel.threads-max, ulimit -u)",
                 tasks, host->tasks);
    } else if (mem > host->mem) {
        snprintf(why, len,
                 "the daemons need %.0f MiB of memory, but %.0f MiB are "
                 "available",
                 (double)mem / MIB, (double)host->mem / MIB);
    } else if (segs > host->shm_segs) {
        snprintf(why, len,
                 "the daemons' UCX needs %" PRIu64 " System V shared memory "
                 "segments, but %" PRIu64 " are left (kernel.shmmni; or "
                 "leave shared memory out of UCX_TLS)",
                 segs, host->shm_segs);
    } else {
        return 1;
    }
    return 0;
}

/* Is @a name in the comma-separated @a list (a name may carry a ":..."
 * suffix there)? */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = list; p != NULL; p = strchr(p, ',')) {
        p += (*p == ',');
        if (strncmp(p, name, len) == 0
            && (p[len] == '\0' || p[len] == ',' || p[len] == ':')) {
            return 1;
        }
    }
    return 0;
}

int rdp_run_ucx_uses_sm(const char *ucx_tls)
{
    /* the shared memory transports that cost memory and segments, and the
     * aliases that name them */
    static const char *const names[] = {"sm", "shm", "mm", NULL};

    if (ucx_tls == NULL || ucx_tls[0] == '\0') {
        return 1; /* UCX's default: all */
    }
    for (int i = 0; names[i] != NULL; i++) {
        if (listed(ucx_tls + (ucx_tls[0] == '^'), names[i])) {
            return ucx_tls[0] != '^';
        }
    }
    if (ucx_tls[0] == '^') {
        /* used unless both are left out */
        return !listed(ucx_tls + 1, "posix") || !listed(ucx_tls + 1, "sysv");
    }
    return listed(ucx_tls, "all") || listed(ucx_tls, "posix")
           || listed(ucx_tls, "sysv");
}
