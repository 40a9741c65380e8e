/* limits.h - what a launch needs of this machine, and whether it has it */
#ifndef RDP_RUN_LIMITS_H
#define RDP_RUN_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * rdpmix-run refuses up front a launch this machine cannot host, instead
 * of failing halfway through it with hundreds of daemons in trouble.  The
 * costs below were measured with rdpmixd here (docs/run.md, "How many
 * nodes fit"); they are what a daemon may need, not what every job uses.
 */

/** Open files of a daemon besides the ones below (measured: 16 on one
 * node, 25 with the engine). */
#define RDP_RUN_DAEMON_FDS 32
/** Open files of a daemon per local rank: stdout, stderr and status
 * pipes, the rank's PMIx connection. */
#define RDP_RUN_RANK_FDS 4
/** Open files of a daemon per other node of a multi-node job: a pidfd
 * watching its daemon and, once they talk, a UCX (tcp) endpoint. */
#define RDP_RUN_PEER_FDS 2
/** Open files of rdpmix-run besides one control connection per node. */
#define RDP_RUN_LAUNCHER_FDS 32
/** Open files of a rank itself (stdio, its PMIx connection, its loop). */
#define RDP_RUN_RANK_OWN_FDS 8
/** Threads of a daemon (measured 2 on one node, 3 with the engine: main,
 * PMIx server, UCX) and of a rank that is a PMIx client (main,
 * library). */
#define RDP_RUN_DAEMON_TASKS 4
#define RDP_RUN_RANK_TASKS   2
/** Memory of a daemon (measured 2-3 MiB without UCX's shared memory
 * transports, 9-10 MiB with them); ranks' own memory is not counted. */
#define RDP_RUN_DAEMON_MEM    (8ull << 20)
#define RDP_RUN_DAEMON_SM_MEM (12ull << 20)
/** System V segments UCX's sysv transport makes per daemon. */
#define RDP_RUN_DAEMON_SM_SEGS 2

/** What this machine has left; UINT64_MAX: no limit (or unknown). */
typedef struct rdp_run_host {
    uint64_t nofile;   /**< open files per process (RLIMIT_NOFILE) */
    uint64_t files;    /**< open files the system has left (fs.file-max) */
    uint64_t tasks;    /**< processes and threads that may still start
                            (kernel.pid_max, kernel.threads-max,
                            RLIMIT_NPROC) */
    uint64_t mem;      /**< bytes available (MemAvailable, cgroup) */
    uint64_t shm_segs; /**< System V segments left (kernel.shmmni) */
} rdp_run_host_t;

/** The shape of a launch. */
typedef struct rdp_run_shape {
    uint32_t nnodes;
    uint32_t np;
    uint32_t max_ppn; /**< most ranks on one node */
    int sm;           /**< the daemons' UCX may use shared memory */
} rdp_run_shape_t;

/** Read what this machine has left from /proc and the resource limits;
 * what cannot be read is UINT64_MAX. */
void rdp_run_host_probe(rdp_run_host_t *host_p);

/**
 * 1 if @a host can take a launch of @a shape.  Otherwise 0, and @a why
 * says which limit it exceeds and by how much ("a daemon may need 2042
 * open files, but the limit is 1024 (ulimit -n)").
 */
int rdp_run_host_fits(const rdp_run_host_t *host, const rdp_run_shape_t *shape,
                      char *why, size_t len);

/** 1 if UCX, given this UCX_TLS (NULL: unset), may open its shared memory
 * transports (posix, sysv, cma). */
int rdp_run_ucx_uses_sm(const char *ucx_tls);

#endif
