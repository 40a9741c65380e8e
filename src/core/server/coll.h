/* coll.h - the server's collective trackers and their per-operation table */
#ifndef RDP_CORE_SERVER_COLL_H
#define RDP_CORE_SERVER_COLL_H

#include "core/server/server_int.h"

/*
 * A tracker collects the local participants of one collective operation
 * (fence, connect, disconnect; group construct/destruct to come), runs its
 * inter-node part (the host's upcall, or the engine: xchg.h) once all are
 * here, and answers them.  coll.c holds what every operation shares; what
 * differs is one rdp_srv_coll_ops_t per operation, in the operation's own
 * file (fence.c, conndisc.c), listed in coll.c's table.  A new operation
 * adds its code to enum rdp_srv_coll_op, a table entry and its file; it
 * makes its trackers with rdp_srv_coll_key_* + rdp_srv_coll_find /
 * rdp_srv_coll_create and lets participants in with rdp_srv_coll_arrive.
 * Loop thread only.
 */

enum rdp_srv_coll_op {
    RDP_SRV_COLL_FENCE      = 1,
    RDP_SRV_COLL_CONNECT    = 2,
    RDP_SRV_COLL_DISCONNECT = 3,
    /* room for RDP_SRV_COLL_GROUP_CONSTRUCT = 4, ..._DESTRUCT = 5 */
    RDP_SRV_COLL_NOPS = 6
};

enum rdp_srv_coll_state {
    RDP_SRV_COLL_GATHER = 0,
    RDP_SRV_COLL_HOST, /* waiting for the inter-node part (host or engine) */
    RDP_SRV_COLL_DONE  /* answered; kept only as a tombstone */
};

typedef struct rdp_srv_coll rdp_srv_coll_t;

typedef struct rdp_srv_coll_lpart {
    const char *nspace; /* points into coll->procs */
    pmix_rank_t rank;
    bool arrived;
    uint64_t peer_id;
    uint32_t tag;
    bool bcast; /* may be answered through the job's board (fence_board.c) */
    uint64_t bcast_n; /* the fence's number among the client's */
} rdp_srv_coll_lpart_t;

struct rdp_srv_coll {
    uint64_t id;
    uint8_t op;   /* enum rdp_srv_coll_op */
    uint8_t *key; /* rdp_srv_coll_key_* */
    size_t keylen;
    bool by_seq;        /* key ends with a per-signature sequence number */
    pmix_proc_t *procs; /* canonical */
    size_t nprocs;
    pmix_info_t *info; /* from the first arrival */
    size_t ninfo;
    bool collect;   /* the inter-node part gathers blocks */
    double timeout; /* PMIX_TIMEOUT, seconds; 0: none */
    bool all_local;
    bool foreign; /* names another launcher's job: the host runs it */
    rdp_srv_coll_lpart_t *parts;
    size_t nparts;
    size_t narrived;
    enum rdp_srv_coll_state state;
    pmix_status_t status;
    rdp_timer_t *timer;
    uint64_t xchg; /* the running engine exchange (rdp_srv_xchg_start) */
    void *ctx;     /* the operation's own data, freed by ops->ctx_free */
};

/* What differs per operation.  Hooks marked optional may be NULL. */
typedef struct rdp_srv_coll_ops {
    const char *upcall; /* the host upcall's name, for logs */
    uint16_t reply_cmd;
    /* over other nodes, the engine runs it when connected (else the host) */
    bool engine;
    /* a tracker that fails here before reaching the host still calls the
     * host (no data, PMIX_LOCAL_COLLECTIVE_STATUS): fences */
    bool pass_failure;
    /** Does the host provide the upcall? */
    bool (*host_provides)(void);
    /** Call the upcall with this server's contribution @a data (taken by
     * the host when it returns SUCCESS or OPERATION_SUCCEEDED; NULL when
     * none); the host answers through rdp_srv_coll_host_modex_cb or
     * rdp_srv_coll_host_op_cb with @a cbdata. */
    pmix_status_t (*host_call)(const pmix_proc_t *procs, size_t nprocs,
                               const pmix_info_t *info, size_t ninfo,
                               char *data, size_t ndata, void *cbdata);
    /** Optional: a tracker was made (set collect, ctx ...). */
    pmix_status_t (*init)(rdp_srv_coll_t *coll);
    /** Optional: append this server's contribution (all local
     * participants arrived; only when coll->collect). */
    pmix_status_t (*contribute)(rdp_srv_coll_t *coll, rdp_buf_t *buf);
    /** Optional: move the contribution to the engine, already built
     * behind RDP_COLL_HEADROOM bytes of room, into the empty @a buf
     * (true), else false (then contribute packs it). */
    bool (*take_contribution)(rdp_srv_coll_t *coll, rdp_buf_t *buf);
    /** Optional: this node's part failed with @a status before reaching
     * the host (pass_failure): append what the host should carry to the
     * other nodes instead of no data (nothing appended: no data). */
    pmix_status_t (*failure_contribution)(rdp_srv_coll_t *coll,
                                          pmix_status_t status,
                                          rdp_buf_t *buf);
    /** Optional: the inter-node part succeeded: every server's block
     * (engine, own included) or the host's answer as one block of origin
     * RDP_SRV_XCHG_HOST; an error fails the tracker. */
    pmix_status_t (*result)(rdp_srv_coll_t *coll,
                            const rdp_srv_xchg_block_t *blocks, size_t nblocks);
    /** Optional: append the success reply's payload after its status;
     * *fd_p (preset -1) may name a descriptor sent along to every
     * participant (closed by the caller). */
    pmix_status_t (*reply)(rdp_srv_coll_t *coll, rdp_buf_t *buf, int *fd_p);
    /** Optional: the local participant @a nspace:@a rank arrived (the
     * tracker still gathers). */
    void (*arrived)(rdp_srv_coll_t *coll, const char *nspace, pmix_rank_t rank);
    /** Optional: the engine exchange is under way (every local
     * participant arrived; this server contributed @a contrib_len bytes):
     * prepare what of the reply needs no other server (in coll->ctx). */
    void (*prepare)(rdp_srv_coll_t *coll, size_t contrib_len);
    /** Optional: free coll->ctx. */
    void (*ctx_free)(void *ctx);
    /** The result hook never reads this server's own block (the engine
     * may free it once sent: rdp_srv_xchg_args_t.own_unneeded). */
    bool result_without_own;
    /** Optional: the server finalizes (free what the operation keeps). */
    void (*cleanup)(void);
} rdp_srv_coll_ops_t;

/** True when the engine (not the host) will run @a coll's inter-server
 * part, as things stand. */
bool rdp_srv_coll_engine_handles(const rdp_srv_coll_t *coll);

/* the operations (their files) */
extern const rdp_srv_coll_ops_t rdp_srv_fence_ops;      /* fence.c */
extern const rdp_srv_coll_ops_t rdp_srv_connect_ops;    /* conndisc.c */
extern const rdp_srv_coll_ops_t rdp_srv_disconnect_ops; /* conndisc.c */

/** Key of the n-th collective of (op, canonical procs) that @a client
 * calls (its per-signature sequence number; counted here).  malloc'ed. */
pmix_status_t rdp_srv_coll_key_seq(rdp_srv_client_t *client, uint8_t op,
                                   const pmix_proc_t *procs, size_t nprocs,
                                   uint8_t **key_p, size_t *keylen_p);
/** The same, with operation id @a id (@a idlen bytes; NULL: none) in the
 * signature: operations with different ids count separately (connect). */
pmix_status_t rdp_srv_coll_key_seq_id(rdp_srv_client_t *client, uint8_t op,
                                      const pmix_proc_t *procs, size_t nprocs,
                                      const void *id, size_t idlen,
                                      uint8_t **key_p, size_t *keylen_p);
/** Key of (op, canonical procs, explicit operation id: PMIX_CONNECT_ID,
 * group id): the id's bytes hashed into the 8 bytes that end the key.
 * malloc'ed. */
pmix_status_t rdp_srv_coll_key_id(uint8_t op, const pmix_proc_t *procs,
                                  size_t nprocs, const void *id, size_t idlen,
                                  uint8_t **key_p, size_t *keylen_p);
/** The tracker of @a key, NULL if none. */
rdp_srv_coll_t *rdp_srv_coll_find(const uint8_t *key, size_t keylen);
/** Make the tracker of @a key; takes @a procs (canonical), @a info and
 * @a key whatever it returns.  @a by_seq: key from rdp_srv_coll_key_seq
 * (departures elsewhere can doom it, depart.c). */
pmix_status_t rdp_srv_coll_create(uint8_t op, pmix_proc_t *procs, size_t nprocs,
                                  pmix_info_t *info, size_t ninfo, uint8_t *key,
                                  size_t keylen, bool by_seq,
                                  rdp_srv_coll_t **coll_p);
/** Local @a peer's client arrives in @a coll with request @a tag; it is
 * answered with ops->reply_cmd (at once when the tracker is done). */
void rdp_srv_coll_arrive(rdp_srv_coll_t *coll, rdp_srv_peer_t *peer,
                         uint32_t tag);
/** Check the participants of @a client's request (known nspaces, valid
 * ranks, the client among them) and make them canonical (*nprocs_p). */
pmix_status_t rdp_srv_coll_check_procs(const rdp_srv_client_t *client,
                                       pmix_proc_t *procs, size_t *nprocs_p);

/* ---- fence_board.c: whole-job fences answered through the job's board ---- */
/** FENCE_BOARD: open the board of @a peer's job for it. */
void rdp_srv_handle_fence_board(rdp_srv_peer_t *peer, uint32_t tag,
                                rdp_rbuf_t *rb);
/** The optional tail of a FENCE request (u64 n, u64 done): *flag_p tells
 * whether it was there; an error for a malformed one. */
pmix_status_t rdp_srv_bcast_parse(rdp_srv_client_t *client, rdp_rbuf_t *rb,
                                  bool *flag_p, uint64_t *n_p);
/** Answer @a coll's flagged participants through the board with reply
 * @a data (status first; @a shm_fd the bundle's memfd or -1).  Returns
 * whether it did; if not, it clears every participant's flag: all of them
 * are answered on their sockets. */
bool rdp_srv_bcast_answer(rdp_srv_coll_t *coll, const uint8_t *data, size_t len,
                          int shm_fd);
void rdp_srv_bcast_destroy(rdp_srv_bcast_t *bc);

/* pmix_modex_cbfunc_t / pmix_op_cbfunc_t for ops->host_call: any thread */
void rdp_srv_coll_host_modex_cb(pmix_status_t status, const char *data,
                                size_t ndata, void *cbdata,
                                pmix_release_cbfunc_t release_fn,
                                void *release_cbdata);
void rdp_srv_coll_host_op_cb(pmix_status_t status, void *cbdata);

#endif
