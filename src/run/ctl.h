/* ctl.h - launcher <-> daemon control channel: commands and payloads */
#ifndef RDP_RUN_CTL_H
#define RDP_RUN_CTL_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "core/wire/wire.h"

/*
 * rdpmix-run listens on a TCP port; every rdpmixd it starts connects to
 * it and proves with HELLO that it knows the per-job secret.  Each message
 * is an rdp_msg_hdr_t (wire.h) whose cmd is an enum rdp_ctl_cmd, followed
 * by a payload packed with wire.h.  Payloads (notation as in proto.h;
 * strs = u32 count + that many str):
 *
 *   HELLO     d->l  bytes secret, u32 node_id, u32 pid, str node_name,
 *                   str tmpdir, bytes engine_addr (empty: no engine)
 *   LAUNCH    l->d  str nspace, u32 job_size, u32 nnodes,
 *                   nnodes x (str name, u32 nranks, nranks x u32 rank,
 *                             bytes engine_addr),
 *                   str mapby, str rankby, strs argv, strs env, str cwd,
 *                   u32 flags, bytes engine_key
 *   LAUNCHED  d->l  i32 status, str error, u32 n, n x (u32 rank, u32 pid)
 *   IO        d->l  u32 rank, u8 channel, bytes data (empty = end of file)
 *   EXIT      d->l  report: u32 rank, u32 pid, u8 how, i32 value,
 *   ABORT     d->l          str detail (rdp_ctl_report_t)
 *   KILL      l->d  u8 mode, i32 signo
 *   DONE      d->l  (empty) every local rank ended, all output sent
 *   SHUTDOWN  l->d  (empty) clean up and exit
 *   GOT_SIGNAL d->l i32 signo: the daemon received this termination
 *                   signal; it ends its ranks and exits on its own
 *   RECEIVED  d->l  (empty) the LAUNCH arrived and is kept
 *   START     l->d  (empty) every daemon has the LAUNCH: connect the
 *                   engine, register the job, fork the ranks, LAUNCHED
 *   PUBSUB    d->l  u32 id, u8 op, proc requester, u8 has_keys,
 *                   [strs keys], infos: a client's publish, lookup or
 *                   unpublish for rdpmix-run's data service (datasvc.h)
 *   PUBSUB_REPLY l->d u32 id, i32 status, pdata array (lookup results)
 *   PEER_LOOKUP  another launcher -> l: a PUBSUB lookup of GLOBAL data,
 *                   over a unix socket (datapeer.h); answered PUBSUB_REPLY
 *   NOTIFY    d->l, l->d  an event for other nodes (docs/design.md,
 *                   "Events across nodes"): i32 code, proc source,
 *                   u8 range, infos; rdpmix-run relays it to every
 *                   daemon but its sender
 *   SYSLOG    d->l  i32 priority, str msg: a PMIX_LOG_GLOBAL_SYSLOG line
 *   JCTRL     d->l  u32 origin, u32 reqid, u8 action, i32 signo, u32 n,
 *   JCTRL_DO  l->d  n x u32 rank (rdp_ctl_jctrl_t): a job-control request,
 *                   and the same sent back to every daemon
 *   PROCS_REQ d->l  u32 reqid
 *   PROCS     l->d  u32 reqid, i32 job status, u32 n, n x (u32 pid,
 *                   u8 state, i32 exit code): every rank, in rank order
 *
 * A node's ranks are listed in the LAUNCH of every daemon, so each knows
 * the whole map (node names, which ranks live where).  In engine mode
 * (flag RDP_CTL_FLAG_ENGINE: more than one node) each daemon's HELLO
 * carries its engine address (rdpmix_engine_address), and the LAUNCH
 * carries the whole address table (one per node, in node order) and the
 * session key for rdpmix_engine_connect; without the flag both are empty.
 * Unpackers check every count against the bytes left and the cross-field
 * invariants (each rank of the job on exactly one node, non-empty argv,
 * an address for every node and a whole key in engine mode ...).
 */
enum rdp_ctl_cmd {
    RDP_CTL_HELLO      = 101,
    RDP_CTL_LAUNCH     = 102,
    RDP_CTL_LAUNCHED   = 103,
    RDP_CTL_IO         = 104,
    RDP_CTL_EXIT       = 105,
    RDP_CTL_ABORT      = 106,
    RDP_CTL_KILL       = 107,
    RDP_CTL_DONE       = 108,
    RDP_CTL_SHUTDOWN   = 109,
    RDP_CTL_GOT_SIGNAL = 110,
    RDP_CTL_RECEIVED   = 111,
    RDP_CTL_START      = 112,
    /* 120-129: events */
    RDP_CTL_NOTIFY = 120,
    /* 130-139: the data service (publish/lookup/unpublish) */
    RDP_CTL_PUBSUB       = 130,
    RDP_CTL_PUBSUB_REPLY = 131,
    RDP_CTL_PEER_LOOKUP  = 132, /* launcher -> launcher (datapeer.h) */
    /* 140-149: the host operations of rdpmixd (log, job control, query) */
    RDP_CTL_SYSLOG    = 140, /* d->l i32 priority, str msg: global syslog */
    RDP_CTL_JCTRL     = 141, /* d->l rdp_ctl_jctrl_t: a job-control request */
    RDP_CTL_JCTRL_DO  = 142, /* l->d the same, to every daemon */
    RDP_CTL_PROCS_REQ = 143, /* d->l u32 reqid: send the proc table */
    RDP_CTL_PROCS     = 144  /* l->d rdp_ctl_procs_t: the job's proc table */
    /* 160-169: connects with other launchers' jobs (xconn.h) */
};

/** Bytes of the per-job secret (sent hex-encoded to the daemon). */
#define RDP_CTL_SECRET_LEN 32
/** Largest message before a peer has said HELLO. */
#define RDP_CTL_MAX_HELLO 4096
/** Largest message on an authenticated channel. */
#define RDP_CTL_MAX_MSG (64u << 20)
/** Largest job accepted in a LAUNCH. */
#define RDP_CTL_MAX_JOB_SIZE (1u << 22)
/** Largest engine address (UCX worker addresses are 50-215 bytes). */
#define RDP_CTL_MAX_ADDR 2048
/** Bytes of the engine session key (RDPMIX_SESSION_KEY_LEN). */
#define RDP_CTL_ENGINE_KEY_LEN 32

enum rdp_ctl_channel {
    RDP_CTL_STDOUT = 1,
    RDP_CTL_STDERR = 2
};

/** What a rank report says (EXIT: how it ended; ABORT: ABORTED). */
enum rdp_ctl_report_how {
    RDP_CTL_EXITED          = 0, /* value = exit code */
    RDP_CTL_SIGNALED        = 1, /* value = signal number */
    RDP_CTL_FAILED_TO_START = 2, /* value = errno; detail says what failed */
    RDP_CTL_ABORTED         = 3, /* value = PMIx_Abort status; detail = its
                                    message */
    RDP_CTL_TERMINATED      = 4  /* ended after a job-control terminate or
                                    kill request; value = signal or exit
                                    code (not a failure of the job) */
};

enum rdp_ctl_kill_mode {
    RDP_CTL_KILL_TERMINATE = 0, /* SIGTERM, then SIGKILL after a grace */
    RDP_CTL_KILL_NOW       = 1, /* SIGKILL */
    RDP_CTL_KILL_SIGNAL    = 2  /* deliver signo to every live rank */
};

/* LAUNCH.flags */
#define RDP_CTL_FLAG_TAG_OUTPUT 0x1u
#define RDP_CTL_FLAG_ENGINE     0x2u /* connect the engine before launch */
#define RDP_CTL_FLAG_CONTINUE   0x4u /* --enable-recovery: an abnormal rank
                                        end raises events, the job goes on */

typedef struct rdp_ctl_hello {
    uint8_t secret[RDP_CTL_SECRET_LEN];
    uint32_t node_id;
    uint32_t pid;
    char *node_name;      /* owned */
    char *tmpdir;         /* owned; the daemon's session directory */
    uint8_t *engine_addr; /* owned; NULL when engine_addr_len is 0 */
    size_t engine_addr_len;
} rdp_ctl_hello_t;

typedef struct rdp_ctl_node {
    char *name; /* owned */
    uint32_t nranks;
    uint32_t *ranks;      /* owned, nranks entries */
    uint8_t *engine_addr; /* owned; NULL when engine_addr_len is 0 */
    size_t engine_addr_len;
} rdp_ctl_node_t;

typedef struct rdp_ctl_launch {
    char *nspace;
    uint32_t job_size;
    uint32_t nnodes;
    rdp_ctl_node_t *nodes; /* nnodes entries */
    char *mapby;
    char *rankby;
    char **argv; /* NULL-terminated, at least one entry */
    char **env;  /* NULL-terminated "NAME=value" additions */
    char *cwd;   /* may be NULL: the daemon's own */
    uint32_t flags;
    /* with RDP_CTL_FLAG_ENGINE: the session key (a secret: wiped by
     * rdp_ctl_launch_cleanup, never logged) */
    uint8_t engine_key[RDP_CTL_ENGINE_KEY_LEN];
    /* the launcher's setup_application answer (pnet: keys, VNIs, ...;
     * secrets: wiped by rdp_ctl_launch_cleanup, never logged), for every
     * daemon's setup_local_support */
    pmix_info_t *net;
    size_t nnet;
} rdp_ctl_launch_t;

typedef struct rdp_ctl_report {
    uint32_t rank;
    uint32_t pid;
    uint8_t how; /* enum rdp_ctl_report_how */
    int32_t value;
    char *detail; /* owned; may be NULL */
} rdp_ctl_report_t;

typedef struct rdp_ctl_io {
    uint32_t rank;
    uint8_t channel;  /* enum rdp_ctl_channel */
    const void *data; /* borrowed from the received payload */
    size_t len;
} rdp_ctl_io_t;

typedef struct rdp_ctl_kill {
    uint8_t mode; /* enum rdp_ctl_kill_mode */
    int32_t signo;
} rdp_ctl_kill_t;

/** PUBSUB.op */
enum rdp_ctl_pubsub_op {
    RDP_CTL_PUBLISH   = 1,
    RDP_CTL_LOOKUP    = 2,
    RDP_CTL_UNPUBLISH = 3
};

typedef struct rdp_ctl_pubsub {
    uint32_t id; /* the daemon's, echoed in the reply */
    uint8_t op;  /* enum rdp_ctl_pubsub_op */
    pmix_proc_t proc;
    /* owned, NULL-terminated; NULL: none (publish, which must have
     * none) or every key (unpublish); a lookup has at least one */
    char **keys;
    pmix_info_t *info; /* owned; NULL when ninfo is 0 */
    size_t ninfo;
} rdp_ctl_pubsub_t;

/* All pack functions append to @a buf and leave it unchanged on error.
 * All unpack functions read a whole payload (trailing bytes are an error),
 * fill the caller's struct only on success and free what they allocated
 * on failure. The matching _cleanup frees the owned members. */

pmix_status_t rdp_ctl_hello_pack(rdp_buf_t *buf, const rdp_ctl_hello_t *m);
pmix_status_t rdp_ctl_hello_unpack(const void *data, size_t len,
                                   rdp_ctl_hello_t *m_p);
void rdp_ctl_hello_cleanup(rdp_ctl_hello_t *m);

pmix_status_t rdp_ctl_launch_pack(rdp_buf_t *buf, const rdp_ctl_launch_t *m);
pmix_status_t rdp_ctl_launch_unpack(const void *data, size_t len,
                                    rdp_ctl_launch_t *m_p);
void rdp_ctl_launch_cleanup(rdp_ctl_launch_t *m);

/** LAUNCHED: @a ranks/@a pids are @a n borrowed entries. */
pmix_status_t rdp_ctl_launched_pack(rdp_buf_t *buf, pmix_status_t status,
                                    const char *error, const uint32_t *ranks,
                                    const uint32_t *pids, uint32_t n);
/** *error_p (may be NULL), *ranks_p and *pids_p (NULL when *n_p is 0)
 * are malloc'ed. */
pmix_status_t rdp_ctl_launched_unpack(const void *data, size_t len,
                                      pmix_status_t *status_p, char **error_p,
                                      uint32_t **ranks_p, uint32_t **pids_p,
                                      uint32_t *n_p);

pmix_status_t rdp_ctl_io_pack(rdp_buf_t *buf, uint32_t rank, uint8_t channel,
                              const void *data, size_t len);
/** Zero-copy: m_p->data points into @a data. */
pmix_status_t rdp_ctl_io_unpack(const void *data, size_t len,
                                rdp_ctl_io_t *m_p);

/** Payload of EXIT and ABORT. */
pmix_status_t rdp_ctl_report_pack(rdp_buf_t *buf, const rdp_ctl_report_t *m);
pmix_status_t rdp_ctl_report_unpack(const void *data, size_t len,
                                    rdp_ctl_report_t *m_p);
void rdp_ctl_report_cleanup(rdp_ctl_report_t *m);

pmix_status_t rdp_ctl_kill_pack(rdp_buf_t *buf, const rdp_ctl_kill_t *m);
pmix_status_t rdp_ctl_kill_unpack(const void *data, size_t len,
                                  rdp_ctl_kill_t *m_p);

/** GOT_SIGNAL: a signal number of this system (1 .. 64). */
pmix_status_t rdp_ctl_got_signal_pack(rdp_buf_t *buf, int32_t signo);
pmix_status_t rdp_ctl_got_signal_unpack(const void *data, size_t len,
                                        int32_t *signo_p);

pmix_status_t rdp_ctl_pubsub_pack(rdp_buf_t *buf, const rdp_ctl_pubsub_t *m);
pmix_status_t rdp_ctl_pubsub_unpack(const void *data, size_t len,
                                    rdp_ctl_pubsub_t *m_p);
void rdp_ctl_pubsub_cleanup(rdp_ctl_pubsub_t *m);

/** PUBSUB_REPLY: @a pd borrowed (NULL when @a npd is 0). */
pmix_status_t rdp_ctl_pubsub_reply_pack(rdp_buf_t *buf, uint32_t id,
                                        pmix_status_t status,
                                        const pmix_pdata_t *pd, size_t npd);
/** *pd_p malloc'ed (NULL if 0): free with PMIX_PDATA_FREE. */
pmix_status_t rdp_ctl_pubsub_reply_unpack(const void *data, size_t len,
                                          uint32_t *id_p,
                                          pmix_status_t *status_p,
                                          pmix_pdata_t **pd_p, size_t *npd_p);

/** NOTIFY: an event (what PMIx_Notify_event takes). */
typedef struct rdp_ctl_event {
    pmix_status_t code;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info; /* owned by unpack */
    size_t ninfo;
} rdp_ctl_event_t;

pmix_status_t rdp_ctl_event_pack(rdp_buf_t *buf, const rdp_ctl_event_t *m);
pmix_status_t rdp_ctl_event_unpack(const void *data, size_t len,
                                   rdp_ctl_event_t *m_p);
void rdp_ctl_event_cleanup(rdp_ctl_event_t *m);

/* JCTRL / JCTRL_DO: u32 origin (node id of the requesting daemon), u32
 * reqid (its own), u8 action, i32 signo (SIGNAL only), u32 n, n x u32 rank
 * (n = 0: every rank of the job). */
enum rdp_ctl_jctrl_action {
    RDP_CTL_JCTRL_SIGNAL    = 0, /* deliver signo */
    RDP_CTL_JCTRL_TERMINATE = 1, /* SIGTERM, SIGKILL after the grace */
    RDP_CTL_JCTRL_KILL      = 2  /* SIGKILL */
};

typedef struct rdp_ctl_jctrl {
    uint32_t origin;
    uint32_t reqid;
    uint8_t action; /* enum rdp_ctl_jctrl_action */
    int32_t signo;
    uint32_t nranks;
    uint32_t *ranks; /* owned; NULL when nranks is 0 */
} rdp_ctl_jctrl_t;

pmix_status_t rdp_ctl_jctrl_pack(rdp_buf_t *buf, const rdp_ctl_jctrl_t *m);
pmix_status_t rdp_ctl_jctrl_unpack(const void *data, size_t len,
                                   rdp_ctl_jctrl_t *m_p);

/* PROCS: u32 reqid, i32 job status, u32 n, n x (u32 pid, u8 state, i32
 * exit code), one entry per rank of the job in rank order. */
typedef struct rdp_ctl_procent {
    uint32_t pid;      /* 0 until the rank was launched */
    uint8_t state;     /* a pmix_proc_state_t */
    int32_t exit_code; /* once ended: exit status, 128 + signal, or
                          PMIx_Abort's status */
} rdp_ctl_procent_t;

typedef struct rdp_ctl_procs {
    uint32_t reqid;
    int32_t job_status; /* PMIX_SUCCESS while the job runs normally */
    uint32_t n;
    rdp_ctl_procent_t *ents; /* owned */
} rdp_ctl_procs_t;

pmix_status_t rdp_ctl_procs_pack(rdp_buf_t *buf, const rdp_ctl_procs_t *m);
pmix_status_t rdp_ctl_procs_unpack(const void *data, size_t len,
                                   rdp_ctl_procs_t *m_p);

/** SYSLOG: a priority and a message. *msg_p is malloc'ed. */
pmix_status_t rdp_ctl_syslog_pack(rdp_buf_t *buf, int32_t priority,
                                  const char *msg);
pmix_status_t rdp_ctl_syslog_unpack(const void *data, size_t len,
                                    int32_t *priority_p, char **msg_p);

/** Free a NULL-terminated malloc'ed string vector; accepts NULL. */
void rdp_ctl_strv_free(char **v);

#endif
