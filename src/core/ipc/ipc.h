/* ipc.h - client<->server UNIX-socket transport with SO_PEERCRED */
#ifndef RDP_CORE_IPC_IPC_H
#define RDP_CORE_IPC_IPC_H

#include <pmix_common.h>

#include <sys/types.h>

#include "core/loop/loop.h"
#include "core/wire/wire.h"

/*
 * Message-oriented connections over UNIX stream sockets, driven by the
 * loop.  Each connection reads whole frames (rdp_msg_hdr_t + payload) and
 * hands them to its msg callback; a frame with a bad header or a length
 * above the limit closes that connection (logged) and nothing else.
 * Sends are queued and written when the socket is writable, so a slow
 * peer never blocks the loop.  All functions: loop thread only, except
 * rdp_ipc_connect which runs before the fd is handed to the loop.
 */
typedef struct rdp_ipc_conn rdp_ipc_conn_t;
typedef struct rdp_ipc_listener rdp_ipc_listener_t;

typedef struct rdp_ipc_cred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
} rdp_ipc_cred_t;

/** A whole message arrived. @a payload is borrowed for the call only. */
typedef void (*rdp_ipc_msg_cb_t)(rdp_ipc_conn_t *conn,
                                 const rdp_msg_hdr_t *hdr,
                                 const void *payload, size_t len, void *arg);
/** The connection ended (peer closed, error, or protocol violation).  The
 * conn is freed right after this returns; do not use it afterwards. */
typedef void (*rdp_ipc_close_cb_t)(rdp_ipc_conn_t *conn, pmix_status_t why,
                                   void *arg);
/** A new connection; the callee sets its handlers with rdp_ipc_conn_start
 * or closes it. */
typedef void (*rdp_ipc_accept_cb_t)(rdp_ipc_conn_t *conn,
                                    const rdp_ipc_cred_t *cred, void *arg);

/** Default largest payload accepted (RDPMIX_IPC_MAX_MSG overrides). */
#define RDP_IPC_DEFAULT_MAX_MSG (1u << 30)

/** Listen on @a path (unlinked first; mode 0600). */
pmix_status_t rdp_ipc_listen(rdp_loop_t *loop, const char *path,
                             rdp_ipc_accept_cb_t cb, void *arg,
                             rdp_ipc_listener_t **listener_p);
/** Stop listening, unlink the path, free. Accepts NULL. */
void rdp_ipc_listener_destroy(rdp_ipc_listener_t *listener);

/** Connect to @a path (blocking, any thread, before the loop owns it). */
pmix_status_t rdp_ipc_connect(rdp_loop_t *loop, const char *path,
                              rdp_ipc_conn_t **conn_p);

/** Install handlers and start reading. Loop thread. */
void rdp_ipc_conn_start(rdp_ipc_conn_t *conn, rdp_ipc_msg_cb_t msg_cb,
                        rdp_ipc_close_cb_t close_cb, void *arg);
/** Change the callback argument (e.g. once a peer is identified). */
void rdp_ipc_conn_set_arg(rdp_ipc_conn_t *conn, void *arg);

/**
 * Queue a message. Takes ownership of @a buf's bytes (buf left empty)
 * whether or not it succeeds. PMIX_ERR_UNREACH if the conn is closing.
 */
pmix_status_t rdp_ipc_send(rdp_ipc_conn_t *conn, uint16_t cmd, uint32_t tag,
                           rdp_buf_t *buf);
/**
 * A refcounted, immutable payload for sending the same bytes to many
 * connections without copying them (fence results to every participant).
 */
typedef struct rdp_ipc_blob rdp_ipc_blob_t;
/** Takes @a buf's bytes (buf left empty). One reference for the caller. */
pmix_status_t rdp_ipc_blob_create(rdp_buf_t *buf, rdp_ipc_blob_t **blob_p);
void rdp_ipc_blob_unref(rdp_ipc_blob_t *blob);
/** Queue @a blob (a reference is taken until it is written). */
pmix_status_t rdp_ipc_send_blob(rdp_ipc_conn_t *conn, uint16_t cmd,
                                uint32_t tag, rdp_ipc_blob_t *blob);

/**
 * As rdp_ipc_send / rdp_ipc_send_blob, and pass a duplicate of @a fd with
 * the message (SCM_RIGHTS on its first byte).  @a fd stays the caller's
 * (borrowed; the queued duplicate is closed once written or dropped).
 * Only a connection made with rdp_ipc_connect accepts descriptors: one a
 * server receives is closed on arrival.
 */
pmix_status_t rdp_ipc_send_fd(rdp_ipc_conn_t *conn, uint16_t cmd, uint32_t tag,
                              rdp_buf_t *buf, int fd);
pmix_status_t rdp_ipc_send_blob_fd(rdp_ipc_conn_t *conn, uint16_t cmd,
                                   uint32_t tag, rdp_ipc_blob_t *blob, int fd);
/**
 * Inside a msg callback: the descriptor that came with this message, now
 * owned by the caller, or -1 if none did.  Descriptors that nobody takes
 * are closed when their message's callback returns.
 */
int rdp_ipc_conn_take_fd(rdp_ipc_conn_t *conn);

/** Queue a copy of borrowed bytes. */
pmix_status_t rdp_ipc_send_copy(rdp_ipc_conn_t *conn, uint16_t cmd,
                                uint32_t tag, const void *data, size_t len);

/**
 * Close: stop reading now, flush queued sends (bounded), then close the
 * fd and call close_cb with @a why.  Safe to call from inside msg_cb.
 */
void rdp_ipc_conn_close(rdp_ipc_conn_t *conn, pmix_status_t why);

const rdp_ipc_cred_t *rdp_ipc_conn_cred(const rdp_ipc_conn_t *conn);

/** Bytes of receive buffer @a conn holds between reads: 0 unless a frame
 * was incomplete when its socket was drained (messages are read into a
 * buffer lent by the process for the read; tests). */
size_t rdp_ipc_conn_rx_capacity(const rdp_ipc_conn_t *conn);

/**
 * Blocking exchange for a client before its loop starts (handshake):
 * send one message and wait for one reply frame.  *reply_p is malloc'ed.
 */
pmix_status_t rdp_ipc_sync_request(rdp_ipc_conn_t *conn, uint16_t cmd,
                                   uint32_t tag, const rdp_buf_t *payload,
                                   rdp_msg_hdr_t *hdr_p, void **reply_p,
                                   double timeout);

/* ---- sealed shared memory for passing large read-only results ---- */

/** A memfd holding a copy of @a data (borrowed), sealed against
 * resizing and writing.  *fd_p is owned by the caller.
 * PMIX_ERR_OUT_OF_RESOURCE when the system has no memfd (callers fall
 * back to inline bytes). */
pmix_status_t rdp_ipc_memfd_create(const void *data, size_t len, int *fd_p);
/** The same in steps, for data produced piecewise: an empty memfd
 * (*fd_p the caller's), bytes appended at its end or written at @a off
 * (inside what is there), then sealed.  On an error the caller closes
 * the fd. */
pmix_status_t rdp_ipc_memfd_open(int *fd_p);
pmix_status_t rdp_ipc_memfd_append(int fd, const void *data, size_t len);
pmix_status_t rdp_ipc_memfd_pwrite(int fd, const void *data, size_t len,
                                   size_t off);
pmix_status_t rdp_ipc_memfd_seal(int fd);
/**
 * Map a received memfd read-only after checking that it is sealed against
 * shrinking and writing and holds at least @a len bytes.  @a fd stays the
 * caller's (it may close it right away); unmap with rdp_ipc_memfd_unmap.
 */
pmix_status_t rdp_ipc_memfd_map(int fd, size_t len, const void **map_p);
void rdp_ipc_memfd_unmap(const void *map, size_t len);

#endif
