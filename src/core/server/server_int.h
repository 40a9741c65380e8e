/* server_int.h - private state of the PMIx server library */
#ifndef RDP_CORE_SERVER_SERVER_INT_H
#define RDP_CORE_SERVER_SERVER_INT_H

#include <pmix.h>
#include <pmix_server.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "coll/tl.h"
#include "core/common/runtime.h"
#include "core/ipc/ipc.h"
#include "core/kvs/kvs.h"
#include "core/loop/loop.h"
#include "core/server/hostcall.h"
#include "core/util/hash.h"
#include "core/util/list.h"
#include "core/wire/proto.h"
#include "core/wire/wire.h"
#include "core/server/xchg.h"

/*
 * Everything here belongs to the loop thread (rdp_rt.loop) unless a field
 * says otherwise.  Public entry points validate and post; host completion
 * functions copy what they need and post.
 *
 * Registered job data of an nspace lives in its own kvs (ns->info) under
 * three pseudo-namespaces: "J" (rank WILDCARD = JOB section, rank r = PROC
 * section of r), "A" (rank = appnum) and "N" (rank = node id).  Data that
 * processes commit lives in srv->modex under the real nspace.
 */
#define RDP_SRV_KVS_JOB  "J"
#define RDP_SRV_KVS_APP  "A"
#define RDP_SRV_KVS_NODE "N"

typedef struct rdp_srv_nspace rdp_srv_nspace_t;
typedef struct rdp_srv_client rdp_srv_client_t;
typedef struct rdp_srv_bcast rdp_srv_bcast_t; /* fence_board.c */
typedef struct rdp_srv_peer rdp_srv_peer_t;

typedef struct rdp_srv_node {
    char *name;
    uint32_t id;
    uint32_t nranks; /* ranks of the job it hosts (0 also when unknown) */
} rdp_srv_node_t;

struct rdp_srv_nspace {
    rdp_list_t link; /* srv.nspaces */
    char name[PMIX_MAX_NSLEN + 1];
    bool registered;          /* register_nspace completed */
    bool nodata;              /* PMIX_REGISTER_NODATA */
    bool is_tool;             /* a connected tool's own job (tool.c) */
    uint32_t size;            /* job size (0 if unknown) */
    int nlocalprocs;          /* as given by the host */
    pmix_rank_t *local_ranks; /* ranks on this node, ascending */
    size_t nlocal;
    rdp_srv_node_t *nodes; /* nodes that host this job */
    size_t nnodes;
    uint32_t *appnums; /* APP sections present */
    size_t napps;
    rdp_kvs_t *info;    /* registered data (see above) */
    rdp_hash_t clients; /* rank (u64) -> rdp_srv_client_t */
    /* the job's sections packed once for CONNECT and GET replies */
    uint8_t *sections;
    size_t sections_len;
    uint32_t nsections;
    bool sections_valid;
    rdp_ipc_blob_t *connect_blob; /* CONNECT_ACK payload, same for all */
    rdp_list_t cleanups;          /* rdp_srv_cleanup_t */
    rdp_srv_bcast_t *bcast;       /* fence board, once a client asked */
};

enum rdp_srv_client_state {
    RDP_SRV_CLIENT_REGISTERED = 0, /* never connected */
    RDP_SRV_CLIENT_CONNECTING,     /* host client_connected pending */
    RDP_SRV_CLIENT_CONNECTED,
    RDP_SRV_CLIENT_FINALIZED, /* called PMIx_Finalize */
    RDP_SRV_CLIENT_TERMINATED /* left without finalizing */
};

struct rdp_srv_client {
    pmix_proc_t proc;
    rdp_srv_nspace_t *ns;
    uid_t uid;
    gid_t gid;
    void *server_object; /* host's, opaque */
    char token[33];      /* hex; empty if none was generated */
    enum rdp_srv_client_state state;
    rdp_srv_peer_t *peer; /* while connecting/connected */
    pid_t pid;            /* from SO_PEERCRED at connect */
    rdp_hash_t coll_seq;  /* collective signature -> count */
    bool departure_told;  /* the other servers know it left (engine.c) */
    bool bcast_open;      /* it holds its job's fence board (fence_board.c) */
    uint64_t bcast_done;  /* whole-job fences completed for it */
};

enum rdp_srv_peer_state {
    RDP_SRV_PEER_NEW = 0,    /* waiting for CONNECT */
    RDP_SRV_PEER_CONNECTING, /* CONNECT accepted, host upcall pending */
    RDP_SRV_PEER_READY,
    RDP_SRV_PEER_CLOSING
};

struct rdp_srv_peer {
    uint64_t id; /* never reused; host callbacks use it */
    rdp_ipc_conn_t *conn;
    rdp_ipc_cred_t cred;
    enum rdp_srv_peer_state state;
    rdp_srv_client_t *client; /* set once CONNECT is accepted */
    uint32_t connect_tag;
};

typedef struct rdp_server {
    bool active;
    pmix_server_module_t host; /* copied at init */
    char *hostname;            /* "this node" */
    char *tmpdir;              /* base session tmpdir */
    char *system_tmpdir;
    char *rendezvous_dir; /* <tmpdir>/rdpmix.<host>.<pid> */
    char *socket_path;
    char *uri; /* "rdpmix.<pid>;unix:<socket path>" */
    rdp_ipc_listener_t *listener;
    rdp_list_t nspaces;  /* rdp_srv_nspace_t */
    rdp_hash_t peers;    /* id -> rdp_srv_peer_t */
    uint64_t next_id;    /* peers, collectives, requests */
    rdp_kvs_t *modex;    /* committed data */
    rdp_hash_t colls;    /* key bytes -> rdp_srv_coll_t */
    rdp_hash_t coll_ids; /* id -> rdp_srv_coll_t */
    rdp_hash_t waits;    /* "nspace\0rank" -> rdp_srv_waitq_t */
    rdp_hash_t dmdx_out; /* rdp_srv_want_key -> (void*)1 host asked */
} rdp_server_t;

extern rdp_server_t rdp_srv;

/* ---- server.c ---- */
/** True between PMIx_server_init and its finalize (any thread). */
bool rdp_srv_initialized(void);

/** True when the server runs inside Slurm's slurmstepd, whose fences have
 * the quirks docs/design.md lists ("Groups", "Slurm's fences"). */
bool rdp_srv_host_is_slurmstepd(void);

/* ---- util.c: small helpers ---- */
uint64_t rdp_srv_next_id(void);
/** Post @a cbfunc(@a status, @a cbdata) to the loop (never inline). */
void rdp_srv_post_op_cb(pmix_op_cbfunc_t cbfunc, pmix_status_t status,
                        void *cbdata);
/** Unsigned integer of any integer type; false if not integral/negative. */
bool rdp_srv_value_to_u64(const pmix_value_t *val, uint64_t *out_p);
/** Key "nspace\0rank" for per-rank tables; @a key must hold
 * PMIX_MAX_NSLEN + 6 bytes. Returns its length. */
size_t rdp_srv_rank_key(const char *nspace, pmix_rank_t rank, char *key);
#define RDP_SRV_RANK_KEY_MAX (PMIX_MAX_NSLEN + 1 + 5)
/** Key "nspace\0rank" followed by the bytes of @a key (none for NULL) for
 * tables of outstanding requests for one key of a rank; @a out must hold
 * RDP_SRV_WANT_KEY_MAX bytes.  Returns its length. */
size_t rdp_srv_want_key(const char *nspace, pmix_rank_t rank, const char *key,
                        char *out);
#define RDP_SRV_WANT_KEY_MAX (RDP_SRV_RANK_KEY_MAX + PMIX_MAX_KEYLEN)
/** True when two host names denote the same node (short names match
 * when either side has no domain). */
bool rdp_srv_host_eq(const char *a, const char *b);

/* ---- hostop.c: host replies ---- */
/**
 * What a host handed to one of our pmix_modex_cbfunc_t / pmix_info_cbfunc_t
 * callbacks.  Its buffer stays the host's and valid until release_fn runs.
 * Hosts call those callbacks while holding their own locks, and their
 * release functions take the same locks (Slurm's fence does), so the
 * callback only records the reply and posts; the loop thread uses the data
 * in place and then calls rdp_srv_host_reply_release().
 */
typedef struct rdp_srv_host_reply {
    pmix_status_t status;
    const void *data; /* borrowed from the host until released */
    size_t ndata;     /* bytes, or pmix_info_t elements */
    pmix_release_cbfunc_t release_fn;
    void *release_cbdata;
    /* the host's own release, behind rdp_srv_host_release_guard() */
    pmix_release_cbfunc_t host_release;
    void *host_release_cbdata;
} rdp_srv_host_reply_t;

/** Record a host's reply (any thread; never calls into the host). */
void rdp_srv_host_reply_keep(rdp_srv_host_reply_t *hr, pmix_status_t status,
                             const void *data, size_t ndata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata);
/** Give the host its buffer back (loop thread; once; NULL-safe fields). */
void rdp_srv_host_reply_release(rdp_srv_host_reply_t *hr);
/** Forget the host's buffer without giving it back (the server is gone
 * and we are inside the host's callback, where no call into it may be
 * made). */
void rdp_srv_host_reply_drop(rdp_srv_host_reply_t *hr);
/**
 * Put the marker's check in front of the host's release function: keep
 * *@a fn_p and *@a cbdata_p in @a hr and replace them with a release that
 * checks (rdp_srv_host_call_check) and then calls the host's, once.  So
 * even a callback that calls its release_fn parameter directly is caught.
 * @a hr must outlive the release; the callback keeps it with
 * rdp_srv_host_reply_keep(@a hr, ..., *fn_p, *cbdata_p).
 */
void rdp_srv_host_release_guard(rdp_srv_host_reply_t *hr,
                                pmix_release_cbfunc_t *fn_p, void **cbdata_p);

/* The first statement after the declarations of a host callback that
 * receives a release function (its parameters @a _fn, @a _cbdata): marks
 * the thread (RDP_SRV_HOST_CB_ENTER) and guards the release. */
#define RDP_SRV_HOST_CB_ENTER_RELEASE(_cb, _hr, _fn, _cbdata) \
    RDP_SRV_HOST_CB_ENTER(_cb);                               \
    rdp_srv_host_release_guard((_hr), &(_fn), &(_cbdata))

/* ---- pnetval.c: a job's pnet values, for its own processes only ---- */
/** Append the job-level pnet values kept for @a nspace as one JOB section
 * to @a extra (*@a nextra counts it); nothing when none are kept. */
pmix_status_t rdp_srv_pnet_pack_values(const char *nspace, rdp_buf_t *extra,
                                       uint32_t *nextra);
/** pnet's values of @a nspace changed: repack what its clients get. */
void rdp_srv_pnet_values_changed(const char *nspace);
/** True (logged) if @a me may not read @a key of @a nspace: a pnet value
 * of another job (PMIX_ERR_NO_PERMISSIONS). */
bool rdp_srv_pnet_denied(const rdp_srv_client_t *me, const char *nspace,
                         const char *key);

/* ---- nspace.c ---- */
/** trust.c: may the payloads of a collective over @a procs travel
 * without authentication (the site trusts the network, or they are all of
 * one job whose fabric isolates it)? */
bool rdp_srv_payload_open(const pmix_proc_t *procs, size_t nprocs);

rdp_srv_nspace_t *rdp_srv_nspace_find(const char *name);
/** Find or create an (unregistered) entry. */
pmix_status_t rdp_srv_nspace_get(const char *name, rdp_srv_nspace_t **ns_p);
bool rdp_srv_nspace_is_local(const rdp_srv_nspace_t *ns, pmix_rank_t rank);
/** Pack a bundle set of the job's registered data (JOB, APP, NODE and
 * PROC sections) plus @a nextra further sections already in @a extra. */
pmix_status_t rdp_srv_nspace_pack_set(rdp_srv_nspace_t *ns,
                                      const rdp_buf_t *extra, uint32_t nextra,
                                      rdp_buf_t *buf);
/** True if @a key is registered for (ns, rank) or job-wide. */
/** The CONNECT_ACK payload of this job (status, bundle), packed once;
 * borrowed (the nspace keeps its reference). NULL when out of memory. */
rdp_ipc_blob_t *rdp_srv_nspace_connect_blob(rdp_srv_nspace_t *ns);
/** Forget the packed sections and CONNECT_ACK payload (repacked on use). */
void rdp_srv_nspace_invalidate(rdp_srv_nspace_t *ns);
bool rdp_srv_nspace_has_key(const rdp_srv_nspace_t *ns, pmix_rank_t rank,
                            const char *key);
void rdp_srv_nspace_destroy(rdp_srv_nspace_t *ns);
/** Ingest job info into @a ns (exported for the unit tests, loop thread). */
pmix_status_t rdp_srv_nspace_ingest(rdp_srv_nspace_t *ns, int nlocalprocs,
                                    const pmix_info_t *info, size_t ninfo);

/* ---- client.c ---- */
/** Publish the server's identity for setup_fork (loop thread, at init). */
pmix_status_t rdp_srv_fork_view_open(void);
/** Withdraw it (finalize; any thread). */
void rdp_srv_fork_view_close(void);
rdp_srv_client_t *rdp_srv_client_find(const char *nspace, pmix_rank_t rank);
void rdp_srv_client_destroy(rdp_srv_client_t *client);
/** A client's process left (disconnect without finalize, deregister). */
void rdp_srv_client_gone(rdp_srv_client_t *client, pmix_status_t why);

/* ---- peer.c: finding, answering and dropping a connection ---- */
rdp_srv_peer_t *rdp_srv_peer_find(uint64_t id);
/** Close a peer's connection (logged by the caller). */
void rdp_srv_peer_drop(rdp_srv_peer_t *peer, pmix_status_t why);
/** Send a reply made of a status only. */
void rdp_srv_reply_status(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          pmix_status_t status);
/** Reply with the bytes of @a buf (which start with the status). */
void rdp_srv_reply_buf(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                       rdp_buf_t *buf);

/* ---- conn.c: accept, CONNECT handshake, dispatch, close ---- */
void rdp_srv_accept_cb(rdp_ipc_conn_t *conn, const rdp_ipc_cred_t *cred,
                       void *arg);
void rdp_srv_close_all(void);

/* ---- tool.c: tools (RFC0010) ---- */
/** Read PMIX_SERVER_TOOL_SUPPORT / _SYSTEM_SUPPORT from the init info and
 * write the rendezvous files they ask for (loop thread, after listen).
 * Files it cannot write are only warned about. */
pmix_status_t rdp_srv_tool_open(const pmix_info_t *info, size_t ninfo);
/** Remove the rendezvous files and forget every tool (finalize). */
void rdp_srv_tool_close(void);
/** A new connection's first message is TOOL_CONNECT. */
void rdp_srv_tool_handle_connect(rdp_srv_peer_t *peer, uint32_t tag,
                                 rdp_rbuf_t *rb);
void rdp_srv_tool_handle_finalize(rdp_srv_peer_t *peer, uint32_t tag,
                                  rdp_rbuf_t *rb);
/** True when @a client is a connected tool (NULL-safe). */
bool rdp_srv_tool_is(const rdp_srv_client_t *client);
/** A tool's connection closed: forget it (no-op for other clients). */
void rdp_srv_tool_gone(rdp_srv_client_t *client);

/* ---- coll.c ---- */
void rdp_srv_coll_request(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          rdp_rbuf_t *rb);
/** Fail pending collectives that wait for @a client. */
void rdp_srv_coll_client_gone(rdp_srv_client_t *client);
void rdp_srv_coll_nspace_gone(rdp_srv_nspace_t *ns);
void rdp_srv_coll_cleanup(void);

/** A participant left on another server (engine mode): fail the
 * trackers here that can no longer complete (depart.c decides). */
void rdp_srv_coll_remote_gone(void);
/** True when @a p is one of @a procs (or covered by a WILDCARD there). */
bool rdp_srv_procs_contain(const pmix_proc_t *procs, size_t n,
                           const pmix_proc_t *p);

/** Build the canonical participant list of a collective: sorted by
 * (nspace, rank), duplicates and ranks covered by a WILDCARD removed.
 * Sorts @a procs in place and returns the new count. */
size_t rdp_srv_procs_canonical(pmix_proc_t *procs, size_t nprocs);
/** Key bytes for (op, canonical procs); malloc'ed. */
pmix_status_t rdp_srv_coll_signature(uint8_t op, const pmix_proc_t *procs,
                                     size_t nprocs, uint8_t **sig_p,
                                     size_t *len_p);

/* ---- modex.c ---- */
void rdp_srv_handle_commit(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_get(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
/** Data of (nspace, rank) arrived: answer everyone waiting for a key of
 * it that is now there (or, waiting for all keys, for any data). */
void rdp_srv_modex_ready(const char *nspace, pmix_rank_t rank);
/** Fail every waiter of (nspace, rank) (or of the whole nspace when rank
 * is PMIX_RANK_WILDCARD) with @a status. */
void rdp_srv_modex_fail(const char *nspace, pmix_rank_t rank,
                        pmix_status_t status);
/** Fail the waiters of (nspace, rank) that wait for @a key (NULL: those
 * waiting for all keys) with @a status. */
void rdp_srv_modex_fail_key(const char *nspace, pmix_rank_t rank,
                            const char *key, pmix_status_t status);
/** True when we hold @a key of (nspace, rank) (committed, fetched or
 * registered); with @a key NULL, when we hold any committed data of it. */
bool rdp_srv_modex_has(const char *nspace, pmix_rank_t rank, const char *key);
/** Pack a PROC section of (nspace, rank)'s committed data under
 * @a scope_mask. */
pmix_status_t rdp_srv_pack_proc_section(const char *nspace, pmix_rank_t rank,
                                        uint32_t scope_mask, rdp_buf_t *buf);
/** Store the PROC sections of 1..n concatenated bundles (from the host)
 * for ranks that are not local; returns the number of bundles read. */
pmix_status_t rdp_srv_store_bundles(const void *data, size_t len);
/** @a cb for every PROC section of 1..n concatenated bundles that
 * rdp_srv_store_bundles stores (ranks of registered nspaces that are not
 * local), its kv list unparsed; stops at the first error of @a cb or of
 * the bundle's structure and returns it. */
typedef pmix_status_t (*rdp_srv_remote_sect_cb_t)(const char *nspace,
                                                  pmix_rank_t rank,
                                                  const rdp_rbuf_t *kv,
                                                  void *arg);
pmix_status_t rdp_srv_bundles_for_each_remote(const void *data, size_t len,
                                              rdp_srv_remote_sect_cb_t cb,
                                              void *arg);
/** The rdp_srv_remote_sect_cb_t of rdp_srv_store_bundles: unpack the
 * section into the modex store (merged), answer the rank's waiters. */
pmix_status_t rdp_srv_store_sect(const char *nspace, pmix_rank_t rank,
                                 const rdp_rbuf_t *kv, void *arg);
void rdp_srv_modex_cleanup(void);
/** Answer @a cbfunc with the bundle of the remote-visible data of the
 * local @a proc, now (possibly before returning) or once it has committed
 * @a key (NULL: anything); with an error if it is unknown, not local, or
 * finalizes or leaves first.  Loop thread.
 * @param [in] proc  borrowed; copied
 * @param [in] key   borrowed; copied; NULL for any data */
void rdp_srv_modex_serve(const pmix_proc_t *proc, const char *key,
                         pmix_dmodex_response_fn_t cbfunc, void *cbdata);

/* ---- engine.c: engine mode (rdpmix.h) ---- */
/** Read RDPMIX_ENGINE / RDPMIX_SERVER_INDEX; with the engine on, create
 * the UCX worker (server init, loop thread). */
pmix_status_t rdp_srv_engine_init(const pmix_info_t *info, size_t ninfo);
/** Destroy the engine and its transport; pending engine fences are
 * abandoned (their trackers are gone already).  Safe without init. */
void rdp_srv_engine_fini(void);
/** True once connected: fences spanning servers and gets of remote ranks
 * go through the engine. */
bool rdp_srv_engine_active(void);
/** The collective engine (NULL unless connected), this server's index
 * and the number of servers, for xchg.c and p2p.c. */
rdp_coll_engine_t *rdp_srv_engine_coll(void);
uint32_t rdp_srv_engine_me(void);
uint32_t rdp_srv_engine_size(void);
/** Server number of (ns, rank) from its registered PMIX_NODEID; false
 * when it has none in range. */
bool rdp_srv_engine_server_of(rdp_srv_nspace_t *ns, pmix_rank_t rank,
                              uint32_t *srv_p);
/** Tests: run the engine over transport @a ops / @a ctx (already
 * connected) as server @a me of @a n, instead of UCX. Loop thread. */
pmix_status_t rdp_srv_engine_attach(const rdp_tl_ops_t *ops, void *ctx,
                                    uint32_t me, uint32_t n);

/* ---- dmodex.c: direct modex between servers (engine mode) ---- */
/** A GET waits for @a key (NULL: any data) of remote (nspace, rank): ask
 * its server (batched; once per rank and key while a request is
 * outstanding), which answers once the rank has committed that key.  The
 * answer arrives through rdp_srv_store_bundles, a failure through
 * rdp_srv_modex_fail_key.  No-op without the engine. */
void rdp_srv_dmodex_request(const char *nspace, pmix_rank_t rank,
                            const char *key);
/** The engine is up: take the direct modex channels (engine.c). */
pmix_status_t rdp_srv_dmodex_open(void);
/** The engine goes down: forget outstanding requests (not failed). */
void rdp_srv_dmodex_close(void);

/* ---- depart.c: participants that left on other servers ---- */
/** Append what other servers need to know of @a client's departure
 * (which collectives it joined, whether it finalized). */
pmix_status_t rdp_srv_depart_pack(const rdp_srv_client_t *client,
                                  rdp_buf_t *buf);
/** Record one departure packed by another server (a later one of the
 * same process replaces it). */
pmix_status_t rdp_srv_depart_unpack(rdp_rbuf_t *rb);
/** True when a process of @a procs left elsewhere without joining the
 * collective of tracker key @a key (signature + sequence number). */
bool rdp_srv_depart_dooms(const pmix_proc_t *procs, size_t nprocs,
                          const uint8_t *key, size_t keylen);
/** Forget the departures of @a nspace (deregistered). */
void rdp_srv_depart_nspace_gone(const char *nspace);
void rdp_srv_depart_cleanup(void);
/** A local client finalized or terminated: tell the other servers
 * (batched per loop pass; once per client).  No-op without the engine. */
void rdp_srv_depart_announce(rdp_srv_client_t *client);
/** The engine is up: take the departures channel (engine.c). */
void rdp_srv_depart_open(void);

/* ---- fetch.c ---- */
/** rdp_runtime_fetch of the server role (runtime.h): registered job data
 * of @a nspace and committed data of @a rank, as one bundle set. */
pmix_status_t rdp_srv_local_fetch(const char *nspace, pmix_rank_t rank,
                                  rdp_buf_t *buf);

/* ---- ops.c ---- */
void rdp_srv_handle_finalize(rdp_srv_peer_t *peer, uint32_t tag,
                             rdp_rbuf_t *rb);
void rdp_srv_handle_abort(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_notify(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_job_control(rdp_srv_peer_t *peer, uint32_t tag,
                                rdp_rbuf_t *rb);
void rdp_srv_handle_pubsub(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                           rdp_rbuf_t *rb);
void rdp_srv_handle_spawn(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_query(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_log(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
void rdp_srv_handle_monitor(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb);
/** Send an event to this node's clients in @a range (and keep it for
 * clients that connect later), as a client's PMIx_Notify_event would. */
void rdp_srv_notify_local(pmix_status_t code, const pmix_proc_t *source,
                          pmix_data_range_t range, const pmix_info_t *info,
                          size_t ninfo);
/** The same, except to the client of peer @a except (its source). */
void rdp_srv_notify_local_except(pmix_status_t code, const pmix_proc_t *source,
                                 pmix_data_range_t range,
                                 const pmix_info_t *info, size_t ninfo,
                                 uint64_t except);

/* ---- monitor.c: heartbeat monitors ---- */
/** Handle the monitor requests the server runs itself (heartbeat monitors,
 * heartbeats, cancel); *handled is false for the others (the host's). */
pmix_status_t rdp_srv_monitor_request(const pmix_proc_t *proc,
                                      const pmix_info_t *monitor,
                                      pmix_status_t code,
                                      const pmix_info_t *dirs, size_t ndirs,
                                      bool *handled);
/** End @a proc's monitors (it finalized or left). */
void rdp_srv_monitor_client_gone(const pmix_proc_t *proc);
/** End every monitor (server finalize). */
void rdp_srv_monitor_clear_all(void);
pmix_status_t rdp_srv_event_forward(pmix_status_t code,
                                    const pmix_proc_t *source,
                                    pmix_data_range_t range,
                                    const pmix_info_t *info, size_t ninfo,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata);

/** Does an event of @a range from @a source reach @a target? */
bool rdp_srv_event_in_range(pmix_data_range_t range, const pmix_proc_t *source,
                            const pmix_info_t *info, size_t ninfo,
                            const pmix_proc_t *target);

/* ---- evcache.c ---- */
/** Keep an event sent to this node's clients for those that connect
 * later; takes the caller's reference to @a blob (its EVENT payload). */
void rdp_srv_evcache_keep(pmix_status_t code, const pmix_proc_t *source,
                          pmix_data_range_t range, const pmix_info_t *info,
                          size_t ninfo, rdp_ipc_blob_t *blob);
/** Send a client that just connected the kept events in its range. */
void rdp_srv_evcache_replay(rdp_srv_peer_t *peer);
/** Drop every kept event (server finalize). */
void rdp_srv_evcache_cleanup(void);

/* ---- cleanup.c ---- */
typedef struct rdp_srv_cleanup rdp_srv_cleanup_t;
/** Handle the cleanup directives of a JOB_CONTROL request; sets
 * *handled_p when @a info held any. */
pmix_status_t rdp_srv_cleanup_register(rdp_srv_client_t *client,
                                       const pmix_info_t *info, size_t ninfo,
                                       bool *handled_p);
/** Run (and free) the cleanups registered by the clients of @a ns. */
void rdp_srv_cleanup_run(rdp_srv_nspace_t *ns);
/** Free without running. */
void rdp_srv_cleanup_discard(rdp_srv_nspace_t *ns);

/* ---- hostop.c: a pending host upcall answered to a peer ---- */
typedef struct rdp_srv_hostop {
    uint64_t peer_id;
    uint16_t reply_cmd;
    uint32_t tag;
    pmix_status_t status;
    rdp_buf_t reply;     /* packed after the status, may be empty */
    bool close_after;    /* close the connection after replying */
    uint8_t empty_reply; /* RDP_SRV_EMPTY_*: success payload to
                                    send when the host returned nothing */
    void *ctx;           /* per-operation data freed by free_fn */
    void (*free_fn)(void *ctx);
    /* forget the host's buffers ctx holds, without giving them back: the
     * server is gone and we are inside the host's callback (optional) */
    void (*drop_fn)(void *ctx);
    void (*done_fn)(struct rdp_srv_hostop *op); /* extra loop-side work */
    bool has_infos;             /* the host answered with an info array: */
    rdp_srv_host_reply_t infos; /* packed into reply on the loop */
} rdp_srv_hostop_t;

enum {
    RDP_SRV_EMPTY_NONE = 0,
    RDP_SRV_EMPTY_INFOS, /* an empty info array */
    RDP_SRV_EMPTY_PDATA, /* an empty pdata array */
    RDP_SRV_EMPTY_STRING /* a NULL string */
};

rdp_srv_hostop_t *rdp_srv_hostop_create(rdp_srv_peer_t *peer, uint16_t cmd,
                                        uint32_t tag);
/** Complete from any thread: posts the reply to the loop. */
void rdp_srv_hostop_complete(rdp_srv_hostop_t *op, pmix_status_t status);
/** Free without replying (the upcall failed and the caller replies). */
void rdp_srv_hostop_free(rdp_srv_hostop_t *op);
/** A pmix_op_cbfunc_t whose cbdata is an rdp_srv_hostop_t. */
void rdp_srv_hostop_op_cb(pmix_status_t status, void *cbdata);
/** A pmix_info_cbfunc_t whose cbdata is an rdp_srv_hostop_t: the infos
 * are packed after the status on the loop, then released. */
void rdp_srv_hostop_info_cb(pmix_status_t status, pmix_info_t *info,
                            size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn,
                            void *release_cbdata);
/** Resolve the return of a host upcall taking @a op as cbdata: SUCCESS
 * waits, OPERATION_SUCCEEDED completes now, anything else replies it. */
void rdp_srv_hostop_started(rdp_srv_hostop_t *op, pmix_status_t rc);

#endif
