/* rdpmixd_int.h - state shared by the files of rdpmixd (private) */
#ifndef RDP_RUN_RDPMIXD_INT_H
#define RDP_RUN_RDPMIXD_INT_H

#include <pmix_common.h>
#include <pmix_server.h>

#include <stdbool.h>
#include <sys/types.h>

#include "core/loop/loop.h"
#include "run/chan.h"
#include "run/ctl.h"

/*
 * rdpmixd.c owns the daemon's life (arguments, PMIx server, control
 * channel, shutdown); rdpmixd_job.c owns the job (registration, the
 * ranks' processes, output and exits, the host upcalls).  All of it runs
 * on the daemon's loop, in the main thread, except the upcalls, which the
 * server calls on its own thread and which only post to the loop.
 */

#define IO_CHUNK      65536
#define IO_HIGH_WATER (8u << 20) /* stop reading ranks' pipes above this */
#define IO_LOW_WATER  (1u << 20) /* resume below this */
#define SERVER_WAIT   30.0       /* bound on each server API completion */

enum rank_state {
    RANK_NEW     = 0,
    RANK_RUNNING = 1,
    RANK_ENDED   = 2
};

struct rank_proc;

typedef struct rank_pipe {
    struct rank_proc *rp;
    int channel; /* RDP_CTL_STDOUT / RDP_CTL_STDERR */
    int fd;
    rdp_fdwatch_t *watch;
} rank_pipe_t;

typedef struct rank_proc {
    pmix_proc_t proc;
    uint32_t local_rank;
    enum rank_state state;
    pid_t pid;
    int registered;
    int connected;
    int finalized;
    rank_pipe_t out;
    rank_pipe_t err;
    int status_fd;
    int termed; /* sent SIGTERM while running: never sent it twice */
    int by_request; /* a job-control request terminates it: not a failure */
} rank_proc_t;

typedef struct daemon {
    rdp_loop_t *loop;
    rdp_run_chan_t *chan;
    rdp_sigwatch_t *sig_chld, *sig_term, *sig_int, *sig_hup;
    rdp_timer_t *grace_timer;
    double grace;

    /* identity, from the command line */
    char *ctl_addr;
    int secret_fd;
    uint8_t secret[RDP_CTL_SECRET_LEN];
    uint32_t node_id;
    char *node_name;
    char *dvm_nspace;
    int engine; /* --engine: the server runs the inter-node engine */

    /* engine mode: our address (sent in HELLO) */
    uint8_t *engine_addr;
    size_t engine_addr_len;
    /* names of variables rdpmix-run set for us alone (UCX fork-safety
     * settings, --daemon-env): the ranks do not inherit them.  Owned,
     * NULL-terminated; NULL for none. */
    char **daemon_only_env;

    char *tmpdir;
    char *nsdir;
    char *libdir;
    int devnull;
    int server_up;

    /* the job */
    int have_job; /* the LAUNCH arrived */
    int started;  /* ... and then START */
    int launch_done;
    rdp_ctl_launch_t launch;
    pmix_nspace_t nspace;
    int nspace_registered;
    rank_proc_t *ranks;
    uint32_t nlocal;
    uint32_t nended;
    char **procdirs;
    int done_sent;
    int io_paused;

    int terminating;
    int stopping;
    int lost_launcher;
    int exit_code;
} daemon_t;

extern daemon_t rdp_run_dmn;

/* rdpmixd.c */
/** Print "rdpmixd (node N): ..." on stderr. */
void rdp_run_dmn_say(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/** Send to rdpmix-run; takes @a buf's bytes (may be NULL). */
void rdp_run_dmn_send(uint16_t cmd, rdp_buf_t *buf);

/* rdpmixd_job.c */
/* rdpmixd_event.c: events across nodes and of ranks' ends */
pmix_status_t rdp_run_dmn_notify_event(pmix_status_t code,
                                       const pmix_proc_t *source,
                                       pmix_data_range_t range,
                                       pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
/** NOTIFY from rdpmix-run: raise the event in our server. */
void rdp_run_dmn_on_notify(const void *payload, size_t len);
/** A rank ended abnormally: events, if the job continues. */
void rdp_run_dmn_rank_failed(const pmix_proc_t *rank, int exit_code);

/** Upcalls of the host module (fence_nb, direct_modex stay NULL). */
extern pmix_server_module_t rdp_run_dmn_module;
/** Handle a LAUNCH payload: keep the job and say RECEIVED (or report a
 * malformed one as a failed launch). */
void rdp_run_dmn_launch(const void *payload, size_t len);
/** Handle START: connect the engine, register, fork and report. */
void rdp_run_dmn_start(void);
/** SIGTERM every rank now, SIGKILL after the grace period. */
void rdp_run_dmn_terminate(void);
/** Signal every running rank's process group (and, with @a include_ended,
 * the groups of ranks that ended, for what they left behind). */
void rdp_run_dmn_signal_ranks(int signo, int include_ended);
/** Stop the loop once nothing is left to wait for without a launcher. */
void rdp_run_dmn_check_stop(void);
void rdp_run_dmn_sigchld_cb(int signo, void *arg);
void rdp_run_dmn_grace_cb(void *arg);
void rdp_run_dmn_drain_cb(rdp_run_chan_t *chan, void *arg);
/** After the loop: SIGKILL and reap whatever still runs. */
void rdp_run_dmn_reap_remaining(void);
/** Deregister the clients and the namespace from the server. */
void rdp_run_dmn_deregister_all(void);

/* rdpmixd_pubsub.c: publish/lookup/unpublish, answered by rdpmix-run */
pmix_status_t rdp_run_dmn_publish(const pmix_proc_t *proc,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t rdp_run_dmn_lookup(const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t rdp_run_dmn_unpublish(const pmix_proc_t *proc, char **keys,
                                    const pmix_info_t info[], size_t ninfo,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata);
/** Handle a PUBSUB_REPLY: complete the request it answers. */
void rdp_run_dmn_pubsub_reply(const void *payload, size_t len);
/** The launcher is gone: fail every request still waiting. */
void rdp_run_dmn_pubsub_fail_all(void);

/* rdpmixd_hostops.c: the log, job_control and query upcalls */
/* rdpmixd_system.c: `rdpmixd --system` (argv[1]); returns the exit code */
int rdp_run_dmn_system_main(int argc, char **argv);

void rdp_run_dmn_host_log(const pmix_proc_t *client, const pmix_info_t data[],
                          size_t ndata, const pmix_info_t directives[],
                          size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t
rdp_run_dmn_host_job_control(const pmix_proc_t *requestor,
                             const pmix_proc_t targets[], size_t ntargets,
                             const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t rdp_run_dmn_host_query(pmix_proc_t *proct, pmix_query_t *queries,
                                     size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                     void *cbdata);
/** Handle a launcher message of the host operations; false if @a cmd is
 * not one of theirs. */
bool rdp_run_dmn_hostops_msg(uint16_t cmd, const void *payload, size_t len);
/** Register what the log, job-control and query upcalls honour. */
void rdp_run_dmn_hostops_register(void);
pmix_status_t rdp_run_dmn_hostops_init(void);
/** Fail what still waits for rdpmix-run (@a why), e.g. when it is gone. */
void rdp_run_dmn_hostops_fail(pmix_status_t why);
/** Fail what still waits and free the timer; after the loop. */
void rdp_run_dmn_hostops_cleanup(void);

/* rdpmixd_xconn.c: connects with other launchers' jobs (xconn.h) */
pmix_status_t rdp_run_dmn_connect(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t rdp_run_dmn_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t rdp_run_dmn_direct_modex(const pmix_proc_t *proc,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_modex_cbfunc_t cbfunc,
                                       void *cbdata);
/** XCONN_DONE from rdpmix-run. */
void rdp_run_dmn_xconn_done(const void *payload, size_t len);
/** Answer every waiting connect with @a why (the launcher is gone). */
void rdp_run_dmn_xconn_fail_all(pmix_status_t why);
/** Answer what waits, forget the other jobs' data (before the server
 * finalizes). */
void rdp_run_dmn_xconn_cleanup(void);

/* rdpmixd_job.c */
/** PMIx_server_register_nspace, waited for (bounded); on
 * PMIX_ERR_TIMEOUT @a info may still be in use. */
pmix_status_t rdp_run_dmn_register_nspace(const char *nspace, int nlocal,
                                          pmix_info_t *info, size_t ninfo);

#endif
