/* client_int.h - client state, requests to the server, shared helpers */
#ifndef RDP_CORE_CLIENT_CLIENT_INT_H
#define RDP_CORE_CLIENT_CLIENT_INT_H

#include <pmix.h>

#include "core/client/store.h"
#include "core/common/runtime.h"
#include "core/ipc/ipc.h"
#include "core/util/hash.h"
#include "core/wire/wire.h"

/*
 * The client role.  `refs` and `mode` are written under the init lock by
 * PMIx_Init/PMIx_Finalize and read (atomically) by every API entry point;
 * everything else belongs to the loop thread.
 */
enum rdp_client_mode {
    RDP_CLIENT_OFF = 0,
    RDP_CLIENT_CONNECTED, /* talking to a server */
    RDP_CLIENT_SINGLETON, /* no server in the environment */
    RDP_CLIENT_IN_SERVER  /* PMIx_Init in a process that is a server */
};

typedef struct rdp_client {
    int refs; /* PMIx_Init minus PMIx_Finalize calls */
    enum rdp_client_mode mode;
    /* loop thread only */
    rdp_ipc_conn_t *conn; /* NULL once the connection is gone */
    int finalizing;       /* the close that follows is expected */
    uint32_t next_tag;
    rdp_hash_t pending;       /* tag -> rdp_client_req_t */
    rdp_client_pending_t *uncommitted; /* puts since the last commit */
    rdp_client_store_t store; /* job/app/node/proc data we know */
    rdp_wait_t *close_wait;   /* signalled when conn closes (finalize) */
} rdp_client_t;

extern rdp_client_t rdp_client;

/** True while PMIx_Init has been called more often than PMIx_Finalize,
 * or when client-side calls are possible in a server or tool process
 * (then the first call sets them up: rdp_client_embed). */
int rdp_client_active(void);

/**
 * In a process initialised as a server or tool, set up the client-side
 * state (mode RDP_CLIENT_IN_SERVER): PMIx_Store_internal, PMIx_Put (kept
 * locally), PMIx_Get (through rdp_runtime_fetch), PMIx_Commit (nothing
 * to send).  Calls that need a server of our own return
 * PMIX_ERR_NOT_SUPPORTED.  Idempotent; any API thread.  PMIX_ERR_INIT
 * when the process is neither a server nor a tool.
 */
pmix_status_t rdp_client_embed(void);

/* ---- requests to the server (loop thread) ---- */

/**
 * Reply (or failure) of a request.  On a reply, @a status is the status
 * the server put first and @a rb reads what follows it; on failure
 * (PMIX_ERR_TIMEOUT, PMIX_ERR_LOST_CONNECTION) @a rb is NULL.
 * Called exactly once, on the loop thread, never inside
 * rdp_client_request.
 */
typedef void (*rdp_client_reply_cb_t)(pmix_status_t status, rdp_rbuf_t *rb,
                                      void *arg);

/**
 * Send @a cmd with @a payload (taken: left empty whatever happens) and call
 * @a cb with the reply.  @a timeout > 0 arms a client-side timer; a reply
 * arriving after it fired is dropped.  Returns an error (and never calls
 * @a cb) when there is no connection.
 */
pmix_status_t rdp_client_request(uint16_t cmd, rdp_buf_t *payload,
                                 double timeout, rdp_client_reply_cb_t cb,
                                 void *arg);
/** rdp_client_request that also tells the request's tag. */
pmix_status_t rdp_client_request_tag(uint16_t cmd, rdp_buf_t *payload,
                                     double timeout, rdp_client_reply_cb_t cb,
                                     void *arg, uint32_t *tag_p);
/** Whether request @a tag still waits for its answer. */
int rdp_client_request_pending(uint32_t tag);
/** Answer request @a tag without a server message: its callback runs now
 * with @a status and no reply to read.  0 if it was not pending. */
int rdp_client_request_complete(uint32_t tag, pmix_status_t status);

/* ---- generic request/response API plumbing ---- */
typedef struct rdp_board_ticket rdp_board_ticket_t;

/**
 * State of one non-blocking API call whose server reply decides the
 * outcome.  `finish` turns the reply into the user's callback; it runs
 * exactly once on the loop thread (with rb NULL on failure) and must free
 * nothing but what it owns: the op itself is freed by the caller.
 */
typedef struct rdp_client_op rdp_client_op_t;
typedef void (*rdp_client_op_finish_t)(rdp_client_op_t *op,
                                       pmix_status_t status, rdp_rbuf_t *rb);
struct rdp_client_op {
    uint16_t cmd;
    rdp_buf_t payload; /* packed by the API thread */
    double timeout;
    rdp_client_op_finish_t finish;
    void *cbfunc; /* the user's callback, cast by `finish` */
    void *cbdata;
    void *extra; /* per-API data for `finish` */
    /* optional, on the loop: before the request is packed off, and once
     * it was sent as request @a tag */
    pmix_status_t (*prepare)(rdp_client_op_t *op);
    void (*sent)(rdp_client_op_t *op, uint32_t tag);
    int on_board;     /* a whole-job fence the board may answer */
    uint64_t board_n; /* its number (fence_board.c) */
    rdp_board_ticket_t *ticket; /* its caller waits on the board too */
};

/** Allocate an op with an empty payload; NULL when out of memory. */
rdp_client_op_t *rdp_client_op_create(uint16_t cmd,
                                      rdp_client_op_finish_t finish,
                                      void *cbfunc, void *cbdata);
/** Post @a op to the loop; it sends the request and calls finish once.
 * On error the op is freed and finish never runs. */
pmix_status_t rdp_client_op_post(rdp_client_op_t *op);
void rdp_client_op_free(rdp_client_op_t *op);

/** Parse PMIX_TIMEOUT (seconds, any integer type) from @a info; 0 if none.
 */
double rdp_client_info_timeout(const pmix_info_t *info, size_t ninfo);

/* ---- fence_board.c: whole-job fences answered through shared memory ---- */
/** After connecting: ask the server for the job's fence board. */
void rdp_client_board_open(void);
/** Connection gone or client torn down: forget the board. */
void rdp_client_board_close(void);
/** A whole-job fence request is being sent: count it (*n_p) and, when the
 * board is open, append its tail to @a payload (and make room to wait for
 * it).  Returns 1 if it did, 0 if not, -1 when the payload is spoilt. */
int rdp_client_board_tail(rdp_buf_t *payload, uint64_t *n_p);
/** Fence @a n went out as request @a tag: watch the board for it
 * (@a ticket: its blocked caller watches it too). */
void rdp_client_board_wait(uint64_t n, uint32_t tag,
                           rdp_board_ticket_t *ticket);
/** Caller: a ticket to wait for a blocking fence on the board itself
 * (NULL: no board, or RDPMIX_FENCE_BOARD_CALLER=0; wait the usual way).
 * Post the fence with rdp_client_board_ticket_cb and the ticket. */
rdp_board_ticket_t *rdp_client_board_ticket(void);
/** Caller (PMIx_Init's): make this thread's means to wait on the board
 * now, so that its first fence makes none (no-op without the board). */
void rdp_client_board_prepare(void);
/** Loop, when the fence is numbered: whether it went on the board as @a n. */
void rdp_client_board_ticket_number(rdp_board_ticket_t *t, int on_board,
                                    uint64_t n);
/** Loop, when the fence's request ends (reply, error, timeout): 1 if the
 * caller of @a t completed the fence; else the ticket is the loop's from
 * now on (its caller can no longer complete it).  0 for NULL. */
int rdp_client_board_ticket_claim(rdp_board_ticket_t *t);
/** The fence's op callback for a ticket. */
void rdp_client_board_ticket_cb(pmix_status_t status, void *cbdata);
/** Caller: wait until the fence completed (by this thread when the board
 * shows its result first, else by the loop) and free the ticket; @a posted
 * 0 when the fence was never posted (no callback comes). */
pmix_status_t rdp_client_board_ticket_wait(rdp_board_ticket_t *t, int posted);
/** Fences completed by their callers so far (tests). */
uint64_t rdp_client_board_caller_done(void);
/** Fence @a n completed (either way): stop watching for it.  Returns 1 if
 * it was still watched for (then call rdp_client_board_recheck). */
int rdp_client_board_forget(uint64_t n);
/** Loop: complete the fences the board shows, in order (after a fence
 * rdp_client_board_forget still waited for). */
void rdp_client_board_recheck(void);
#ifdef RDP_TEST_HOOKS
/* Test builds only (tests/unit/test_client_board.c): the points of the
 * board protocol where rdp_client_board_hook, when set, is called with the
 * fence's number (UINT64_MAX: not numbered yet).  No lock of the library
 * is held there but at RDP_BOARD_AT_STORE, where the hook must not block. */
typedef enum rdp_board_point {
    RDP_BOARD_AT_LOOP_LOOKS,    /* loop: about to look at the head fence */
    RDP_BOARD_AT_LOOP_CLAIMED,  /* loop: a reply/error claimed the ticket */
    RDP_BOARD_AT_CALLER_LOOKS,  /* caller: about to look at the board */
    RDP_BOARD_AT_CALLER_SLEEPS, /* caller: about to wait in its epoll */
    RDP_BOARD_AT_STORE          /* either: storing a result from a slot */
} rdp_board_point_t;
extern void (*rdp_client_board_hook)(rdp_board_point_t at, uint64_t n);
#define RDP_BOARD_HOOK(_at, _n)                 \
    do {                                        \
        if (rdp_client_board_hook != NULL) {    \
            rdp_client_board_hook((_at), (_n)); \
        }                                       \
    } while (0)
#else
#define RDP_BOARD_HOOK(_at, _n) ((void)(_n))
#endif
/** fence.c: keep a fence result (mapped: a read-only memfd mapping the
 * store then owns). */
pmix_status_t rdp_client_fence_keep(const void *data, size_t len, int mapped);
/** fence.c: keep the bundle in sealed memfd @a fd (closed) of @a size
 * bytes. */
pmix_status_t rdp_client_fence_keep_fd(int fd, size_t size);

/** Check a key for Put/Get/Store_internal. */
pmix_status_t rdp_client_check_key(const char *key);

/** A blocking wait for a callback-style API (see the blocking wrappers). */
typedef struct rdp_client_sync {
    rdp_wait_t wait;
    pmix_status_t status;
    void *data; /* per-API result */
    size_t ndata;
} rdp_client_sync_t;

/** Refuse to block on the loop thread (an event handler calling a blocking
 * API that needs the server): PMIX_ERR_WOULD_BLOCK, else PMIX_SUCCESS. */
pmix_status_t rdp_client_may_block(void);

/** op callback that signals an rdp_client_sync_t. */
void rdp_client_sync_op_cb(pmix_status_t status, void *cbdata);
/* Blocking forms over non-blocking ones (ops.c): begin (refuses the
 * library's thread; clears *results), wait for the nb call's start
 * status, an info callback that keeps a copy, and handing the copy out. */
pmix_status_t rdp_client_sync_begin(rdp_client_sync_t *sync);
pmix_status_t rdp_client_sync_info_begin(rdp_client_sync_t *sync,
                                         pmix_info_t **results,
                                         size_t *nresults);
pmix_status_t rdp_client_sync_wait(rdp_client_sync_t *sync,
                                   pmix_status_t started);
void rdp_client_sync_info_cb(pmix_status_t status, pmix_info_t *info,
                             size_t ninfo, void *cbdata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata);
pmix_status_t rdp_client_sync_info_results(rdp_client_sync_t *sync,
                                           pmix_status_t status,
                                           pmix_info_t **results,
                                           size_t *nresults);
/** An op's finish for replies carrying an info array (status, infos):
 * the op's cbfunc is a pmix_info_cbfunc_t. */
void rdp_client_info_finish(rdp_client_op_t *op, pmix_status_t status,
                            rdp_rbuf_t *rb);
/** Call @a cbfunc with @a info (taken), released when the user says. */
void rdp_client_info_cb_give(pmix_info_cbfunc_t cbfunc, pmix_status_t status,
                             pmix_info_t *info, size_t ninfo, void *cbdata);

/* ---- groups (group.c) ---- */
/** A proc named (group id, group rank) of a group this process is a
 * member of becomes the member it names; anything else stays.  Any
 * thread. */
void rdp_client_group_resolve(pmix_proc_t *proc);
/** The procs of a collective with every (group id, rank) replaced by the
 * member and (group id, WILDCARD) by all members: *out_p malloc'ed, or
 * NULL when this process is in no group.  PMIX_ERR_BAD_PARAM for a
 * group rank out of range. */
pmix_status_t rdp_client_group_expand(const pmix_proc_t *procs, size_t nprocs,
                                      pmix_proc_t **out_p, size_t *nout_p);
/** The group a fence over @a procs with @a info runs as a fault-tolerant
 * group operation (RDP_CMD_GROUP_FENCE), or NULL: it names exactly one
 * (group id, PMIX_RANK_WILDCARD) of a group this process is a member of
 * and @a info asks for PMIX_GROUP_FT_COLLECTIVE. */
const char *rdp_client_group_ft_fence(const pmix_proc_t *procs, size_t nprocs,
                                      const pmix_info_t *info, size_t ninfo);
/** Remember group @a id with @a members (copied) in group-rank order,
 * replacing one of the same id (a construct's PMIX_GROUP_MEMBERSHIP). */
void rdp_client_group_remember(const char *id, const pmix_proc_t *members,
                               size_t n);
/** Forget every group (PMIx_Finalize). */
void rdp_client_group_cleanup(void);
/** rdp_event_chain_end for a client: answers PMIX_GROUP_LEADER_FAILED
 * (a vote) and PMIX_GROUP_INVITED (a handler that completed with
 * PMIX_GROUP_INVITE_ACCEPTED / _DECLINED: a join); a leader's handler of
 * PMIX_GROUP_INVITE_ACCEPTED / _DECLINED / _FAILED that completed with
 * PMIX_GROUP_CONSTRUCT_ABORT aborts the invitation. */
void rdp_client_group_chain_end(pmix_status_t code, const pmix_info_t *info,
                                size_t ninfo, const pmix_info_t *results,
                                size_t nresults, pmix_status_t hdlr_status);
/** Loop thread: abort the invitation to group @a id this process leads
 * (RDP_CMD_GROUP_ABORT); @a cbfunc (may be NULL) gets the server's
 * answer. */
pmix_status_t rdp_client_group_abort(const char *id, pmix_op_cbfunc_t cbfunc,
                                     void *cbdata);
/** The PMIX_GROUP_ID (string) among an event's @a info, or NULL. */
const char *rdp_client_group_event_id(const pmix_info_t *info, size_t ninfo);
/** Pack an event's info with its PMIX_EVENT_CUSTOM_RANGE expanded as
 * rdp_client_group_expand does (the server sees the members). */
pmix_status_t rdp_client_group_pack_event_info(rdp_buf_t *buf,
                                               const pmix_info_t *info,
                                               size_t ninfo);

/* ---- cross-file hooks ---- */

/** ipc callbacks of the server connection (client.c). */
void rdp_client_conn_msg(rdp_ipc_conn_t *conn, const rdp_msg_hdr_t *hdr,
                         const void *payload, size_t len, void *arg);
void rdp_client_conn_closed(rdp_ipc_conn_t *conn, pmix_status_t why, void *arg);
/** Loop thread: the connection is gone during PMIx_Finalize (init.c). */
void rdp_client_finalize_finish(void);

/* ---- shared with tools (init.c, used by attach.c) ---- */
/** Take @a conn (handshake done; @a bundle: the job data that followed
 * the handshake's identity) as the connection to our server. */
pmix_status_t rdp_client_adopt(rdp_ipc_conn_t *conn, const char *hostname,
                               const char *uri, const rdp_rbuf_t *bundle);
/** Close a connection that was never adopted (API thread). */
void rdp_client_conn_drop(rdp_ipc_conn_t *conn);
/** This process's host name (PMIX_HOSTNAME in the environment, else
 * gethostname); *host_p malloc'ed. */
pmix_status_t rdp_client_hostname(char **host_p);
/** rdp_runtime_call body of the last PMIx_Finalize: say goodbye to the
 * server and tear the client state down. */
void rdp_client_finalize_on_loop(void *arg, rdp_wait_t *wait);

/** Loop thread: a server-initiated message (tag 0). */
void rdp_client_handle_unsolicited(const rdp_msg_hdr_t *hdr,
                                   const void *payload, size_t len);
/** Loop thread: forward a notification to the server (event.c hook). */
pmix_status_t rdp_client_event_forward(pmix_status_t code,
                                       const pmix_proc_t *source,
                                       pmix_data_range_t range,
                                       const pmix_info_t *info, size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);

#endif
