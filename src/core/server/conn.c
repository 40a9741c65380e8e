/* conn.c - client connections: accept, CONNECT handshake, dispatch, close */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/coll.h"
#include "core/server/group.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/* A connection that has not sent a valid CONNECT by then is closed. */
#define HANDSHAKE_TIMEOUT 30.0

/* peers are found by id so that late host callbacks never touch a freed
 * peer; the timer lives in a side table keyed the same way */
typedef struct peer_ext {
    rdp_srv_peer_t peer;
    rdp_timer_t *handshake_timer;
} peer_ext_t;

static void peer_msg_cb(rdp_ipc_conn_t *conn, const rdp_msg_hdr_t *hdr,
                        const void *payload, size_t len, void *arg);
static void peer_close_cb(rdp_ipc_conn_t *conn, pmix_status_t why, void *arg);

static void handshake_timeout(void *arg)
{
    rdp_srv_peer_t *peer = arg;

    rdp_log_warn(SERVER,
                 "connection from pid %d (uid %u) sent no CONNECT "
                 "within %.0fs: closed",
                 (int)peer->cred.pid, (unsigned)peer->cred.uid,
                 HANDSHAKE_TIMEOUT);
    rdp_srv_peer_drop(peer, PMIX_ERR_TIMEOUT);
}

static void stop_handshake_timer(rdp_srv_peer_t *peer)
{
    peer_ext_t *ext = (peer_ext_t *)peer;

    rdp_timer_destroy(ext->handshake_timer);
    ext->handshake_timer = NULL;
}

void rdp_srv_accept_cb(rdp_ipc_conn_t *conn, const rdp_ipc_cred_t *cred,
                       void *arg)
{
    peer_ext_t *ext;
    rdp_srv_peer_t *peer;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    ext = rdp_srv.active ? rdp_calloc(1, sizeof(*ext)) : NULL;
    if (ext == NULL) {
        rdp_ipc_conn_close(conn, PMIX_ERR_NOMEM);
        return;
    }
    peer        = &ext->peer;
    peer->id    = rdp_srv_next_id();
    peer->conn  = conn;
    peer->cred  = *cred;
    peer->state = RDP_SRV_PEER_NEW;
    if (rdp_hash_set_u64(&rdp_srv.peers, peer->id, peer, NULL)
        != PMIX_SUCCESS) {
        rdp_free(ext);
        rdp_ipc_conn_close(conn, PMIX_ERR_NOMEM);
        return;
    }
    if (rdp_timer_create(rdp_rt.loop, handshake_timeout, peer,
                         &ext->handshake_timer)
        == PMIX_SUCCESS) {
        rdp_timer_start(ext->handshake_timer, HANDSHAKE_TIMEOUT);
    }
    rdp_log_trace(SERVER, "connection from pid %d uid %u gid %u",
                  (int)cred->pid, (unsigned)cred->uid, (unsigned)cred->gid);
    rdp_ipc_conn_start(conn, peer_msg_cb, peer_close_cb, peer);
}

/* ---- the CONNECT handshake ---- */

static void refuse(rdp_srv_peer_t *peer, uint32_t tag, pmix_status_t status)
{
    rdp_srv_reply_status(peer, RDP_CMD_CONNECT_ACK, tag, status);
    rdp_srv_peer_drop(peer, status);
}

/* Constant-time comparison of the token the client presents. */
static bool token_eq(const char *expected, const char *given)
{
    size_t n           = strlen(expected);
    unsigned char diff = 0;

    if (given == NULL || strlen(given) != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char)(expected[i] ^ given[i]);
    }
    return diff == 0;
}

static void connect_finish(rdp_srv_peer_t *peer, pmix_status_t status)
{
    rdp_srv_client_t *client = peer->client;
    rdp_ipc_blob_t *blob;

    if (client == NULL) {
        return; /* deregistered meanwhile; the peer is being dropped */
    }
    if (status == PMIX_SUCCESS) {
        blob = rdp_srv_nspace_connect_blob(client->ns);
        if (blob == NULL) {
            status = PMIX_ERR_NOMEM;
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "connection of %s:%u refused by the host: %s",
                      client->proc.nspace, client->proc.rank,
                      rdp_status_name(status));
        client->state = RDP_SRV_CLIENT_REGISTERED;
        client->peer  = NULL;
        peer->client  = NULL;
        refuse(peer, peer->connect_tag, status);
        return;
    }
    client->state = RDP_SRV_CLIENT_CONNECTED;
    peer->state   = RDP_SRV_PEER_READY;
    status        = rdp_ipc_send_blob(peer->conn, RDP_CMD_CONNECT_ACK,
                                      peer->connect_tag, blob);
    if (status != PMIX_SUCCESS) {
        rdp_srv_peer_drop(peer, status);
        return;
    }
    rdp_srv_evcache_replay(peer); /* events it missed, after the ACK */
    rdp_log_debug(SERVER, "client %s:%u connected (pid %d)",
                  client->proc.nspace, client->proc.rank, (int)peer->cred.pid);
}

static void connect_done(rdp_srv_hostop_t *op)
{
    rdp_srv_peer_t *peer = rdp_srv_peer_find(op->peer_id);

    if (peer != NULL && peer->state == RDP_SRV_PEER_CONNECTING) {
        connect_finish(peer, op->status);
    }
}

static void free_info_ctx(void *ctx)
{
    pmix_info_t **pair = ctx;

    if (pair != NULL) {
        PMIX_INFO_FREE(pair[0], (size_t)(uintptr_t)pair[1]);
        rdp_free(pair);
    }
}

static void handle_connect(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    pmix_nspace_t nspace;
    uint32_t rank, pid;
    const char *token = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    rdp_srv_client_t *client;
    rdp_srv_hostop_t *op;
    pmix_status_t status, rc;

    status = rdp_unpack_string_into(rb, nspace, sizeof(nspace));
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &pid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string_view(rb, &token);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(rb, &info, &ninfo);
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed CONNECT from pid %d (uid %u): %s; "
                      "connection closed",
                      (int)peer->cred.pid, (unsigned)peer->cred.uid,
                      rdp_status_name(status));
        PMIX_INFO_FREE(info, ninfo);
        rdp_srv_peer_drop(peer, status);
        return;
    }
    stop_handshake_timer(peer);

    client = rdp_srv_client_find(nspace, rank);
    if (client == NULL || !client->ns->registered) {
        rdp_log_error(SERVER,
                      "pid %d (uid %u) claims %s:%u, which is not a "
                      "registered client: refused",
                      (int)peer->cred.pid, (unsigned)peer->cred.uid, nspace,
                      rank);
        status = PMIX_ERR_NOT_FOUND;
        goto refused;
    }
    if (peer->cred.uid != client->uid || peer->cred.gid != client->gid) {
        rdp_log_error(SERVER,
                      "pid %d claims %s:%u but runs as uid %u gid "
                      "%u, not the registered uid %u gid %u: refused",
                      (int)peer->cred.pid, nspace, rank,
                      (unsigned)peer->cred.uid, (unsigned)peer->cred.gid,
                      (unsigned)client->uid, (unsigned)client->gid);
        status = PMIX_ERR_NO_PERMISSIONS;
        goto refused;
    }
    if (client->token[0] != '\0' && !token_eq(client->token, token)) {
        rdp_log_error(SERVER, "pid %d claims %s:%u with a %s token: refused",
                      (int)peer->cred.pid, nspace, rank,
                      token == NULL ? "missing" : "wrong");
        status = PMIX_ERR_NO_PERMISSIONS;
        goto refused;
    }
    if (client->state == RDP_SRV_CLIENT_CONNECTING
        || client->state == RDP_SRV_CLIENT_CONNECTED) {
        rdp_log_error(SERVER,
                      "pid %d claims %s:%u, which is already "
                      "connected (pid %d): refused",
                      (int)peer->cred.pid, nspace, rank, (int)client->pid);
        status = PMIX_ERR_NO_PERMISSIONS;
        goto refused;
    }
    if (pid != (uint32_t)peer->cred.pid) {
        rdp_log_debug(SERVER, "%s:%u says pid %u, the socket says %d", nspace,
                      rank, pid, (int)peer->cred.pid);
    }

    client->state     = RDP_SRV_CLIENT_CONNECTING;
    client->peer      = peer;
    client->pid       = peer->cred.pid;
    peer->client      = client;
    peer->state       = RDP_SRV_PEER_CONNECTING;
    peer->connect_tag = tag;

    if (rdp_srv.host.client_connected2 == NULL
        && rdp_srv.host.client_connected == NULL) {
        PMIX_INFO_FREE(info, ninfo);
        connect_finish(peer, PMIX_SUCCESS);
        return;
    }
    op = rdp_srv_hostop_create(peer, RDP_CMD_INVALID, tag);
    if (op == NULL) {
        PMIX_INFO_FREE(info, ninfo);
        connect_finish(peer, PMIX_ERR_NOMEM);
        return;
    }
    op->done_fn = connect_done;
    if (rdp_srv.host.client_connected2 != NULL) {
        pmix_info_t **pair = rdp_calloc(2, sizeof(*pair));

        if (pair == NULL) {
            PMIX_INFO_FREE(info, ninfo);
            rdp_srv_hostop_free(op);
            connect_finish(peer, PMIX_ERR_NOMEM);
            return;
        }
        pair[0]     = info;
        pair[1]     = (pmix_info_t *)(uintptr_t)ninfo;
        op->ctx     = pair;
        op->free_fn = free_info_ctx;
        rc          = rdp_srv.host.client_connected2(&client->proc,
                                                     client->server_object, info, ninfo,
                                                     rdp_srv_hostop_op_cb, op);
        rdp_srv_hostop_started(op, rc);
        return;
    }
    /* A host of the v4 interface answers client_connected by its return
     * value and never calls back (Slurm 22.05 returns PMIX_SUCCESS and
     * drops the callback; OpenPMIx 4.2.2 passes none): waiting for it
     * would hang every client.  An error return still refuses. */
    PMIX_INFO_FREE(info, ninfo);
    rc = rdp_srv.host.client_connected(&client->proc, client->server_object,
                                       NULL, NULL);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    rdp_srv_hostop_complete(op, rc);
    return;

refused:
    PMIX_INFO_FREE(info, ninfo);
    refuse(peer, tag, status);
}

/* ---- dispatch ---- */

static void peer_msg_cb(rdp_ipc_conn_t *conn, const rdp_msg_hdr_t *hdr,
                        const void *payload, size_t len, void *arg)
{
    rdp_srv_peer_t *peer = arg;
    rdp_srv_client_t *client;
    rdp_rbuf_t rb;

    if (peer == NULL || peer->state == RDP_SRV_PEER_CLOSING) {
        return;
    }
    rdp_rbuf_init(&rb, payload, len);
    if (peer->state == RDP_SRV_PEER_NEW) {
        if (hdr->cmd == RDP_CMD_TOOL_CONNECT) {
            stop_handshake_timer(peer);
            rdp_srv_tool_handle_connect(peer, hdr->tag, &rb);
            return;
        }
        if (hdr->cmd != RDP_CMD_CONNECT) {
            rdp_log_error(SERVER,
                          "pid %d (uid %u) sent command %u before "
                          "CONNECT: connection closed",
                          (int)peer->cred.pid, (unsigned)peer->cred.uid,
                          hdr->cmd);
            rdp_srv_peer_drop(peer, PMIX_ERR_NO_PERMISSIONS);
            return;
        }
        handle_connect(peer, hdr->tag, &rb);
        return;
    }
    client = peer->client;
    if (peer->state != RDP_SRV_PEER_READY || client == NULL
        || client->state != RDP_SRV_CLIENT_CONNECTED) {
        rdp_log_error(SERVER,
                      "pid %d sent command %u while %s: connection "
                      "closed",
                      (int)peer->cred.pid, hdr->cmd,
                      peer->state == RDP_SRV_PEER_CONNECTING
                          ? "its connection was pending"
                          : "not connected");
        rdp_srv_peer_drop(peer, PMIX_ERR_BAD_PARAM);
        return;
    }
    switch (hdr->cmd) {
    case RDP_CMD_COMMIT:
        rdp_srv_handle_commit(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_FENCE:
    case RDP_CMD_CONNECT_PROCS:
    case RDP_CMD_DISCONNECT_PROCS:
        rdp_srv_coll_request(peer, hdr->cmd, hdr->tag, &rb);
        break;
    case RDP_CMD_GET:
        rdp_srv_handle_get(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_FENCE_BOARD:
        rdp_srv_handle_fence_board(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_FINALIZE:
        if (rdp_srv_tool_is(client)) {
            rdp_srv_tool_handle_finalize(peer, hdr->tag, &rb);
            break;
        }
        rdp_srv_handle_finalize(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_ABORT:
        rdp_srv_handle_abort(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_NOTIFY:
        rdp_srv_handle_notify(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_JOB_CONTROL:
        rdp_srv_handle_job_control(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_PUBLISH:
    case RDP_CMD_LOOKUP:
    case RDP_CMD_UNPUBLISH:
        rdp_srv_handle_pubsub(peer, hdr->cmd, hdr->tag, &rb);
        break;
    case RDP_CMD_SPAWN:
        rdp_srv_handle_spawn(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_QUERY:
        rdp_srv_handle_query(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_LOG:
        rdp_srv_handle_log(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_MONITOR:
        rdp_srv_handle_monitor(peer, hdr->tag, &rb);
        break;
    case RDP_CMD_GROUP_CONSTRUCT:
    case RDP_CMD_GROUP_DESTRUCT:
    case RDP_CMD_GROUP_INVITE:
    case RDP_CMD_GROUP_JOIN:
    case RDP_CMD_GROUP_LEAVE:
    case RDP_CMD_GROUP_LEADER_VOTE:
    case RDP_CMD_GROUP_FENCE:
    case RDP_CMD_GROUP_ABORT:
    case RDP_CMD_GROUP_ANSWERED:
        rdp_srv_handle_group(peer, hdr->cmd, hdr->tag, &rb);
        break;
    default:
        rdp_log_error(SERVER,
                      "%s:%u sent unknown or unexpected command %u: "
                      "connection closed",
                      client->proc.nspace, client->proc.rank, hdr->cmd);
        rdp_srv_peer_drop(peer, PMIX_ERR_BAD_PARAM);
        break;
    }
}

/* ---- closing ---- */

static void peer_close_cb(rdp_ipc_conn_t *conn, pmix_status_t why, void *arg)
{
    rdp_srv_peer_t *peer = arg;
    rdp_srv_client_t *client;

    if (peer == NULL) {
        return; /* detached at server finalize */
    }
    rdp_hash_remove_u64(&rdp_srv.peers, peer->id);
    stop_handshake_timer(peer);
    client = peer->client;
    if (client != NULL && client->peer == peer) {
        client->peer = NULL;
        peer->client = NULL;
        if (client->state == RDP_SRV_CLIENT_CONNECTED
            || client->state == RDP_SRV_CLIENT_CONNECTING) {
            rdp_log_info(SERVER,
                         "client %s:%u (pid %d) disconnected without "
                         "finalizing",
                         client->proc.nspace, client->proc.rank,
                         (int)peer->cred.pid);
            rdp_srv_client_gone(client, why);
        }
        rdp_srv_tool_gone(client);
    }
    rdp_free((peer_ext_t *)peer);
}

void rdp_srv_close_all(void)
{
    rdp_hash_entry_t *ent;
    rdp_srv_peer_t **all;
    size_t i, n = 0;

    all = rdp_calloc(rdp_srv.peers.count + 1, sizeof(*all));
    if (all == NULL) {
        rdp_log_error(SERVER, "out of memory closing connections");
        return;
    }
    rdp_hash_for_each(ent, &rdp_srv.peers, i) {
        all[n++] = ent->value;
    }
    for (i = 0; i < n; i++) {
        rdp_srv_peer_t *peer = all[i];

        rdp_hash_remove_u64(&rdp_srv.peers, peer->id);
        if (peer->client != NULL && peer->client->peer == peer) {
            peer->client->peer = NULL;
        }
        stop_handshake_timer(peer);
        rdp_ipc_conn_set_arg(peer->conn, NULL);
        rdp_ipc_conn_close(peer->conn, PMIX_ERR_LOST_CONNECTION);
        rdp_free((peer_ext_t *)peer);
    }
    rdp_free(all);
}
