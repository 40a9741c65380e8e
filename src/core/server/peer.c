/* peer.c - finding, answering and dropping a client connection */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/log.h"
#include "core/util/status.h"

rdp_srv_peer_t *rdp_srv_peer_find(uint64_t id)
{
    if (id == 0) {
        return NULL;
    }
    return rdp_hash_get_u64(&rdp_srv.peers, id);
}

void rdp_srv_peer_drop(rdp_srv_peer_t *peer, pmix_status_t why)
{
    if (peer->state == RDP_SRV_PEER_CLOSING) {
        return;
    }
    peer->state = RDP_SRV_PEER_CLOSING;
    rdp_ipc_conn_close(peer->conn, why);
}

void rdp_srv_reply_buf(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                       rdp_buf_t *buf)
{
    pmix_status_t status = rdp_ipc_send(peer->conn, cmd, tag, buf);

    if (status != PMIX_SUCCESS) {
        rdp_log_debug(SERVER, "reply %u to pid %d not sent: %s", cmd,
                      (int)peer->cred.pid, rdp_status_name(status));
    }
}

void rdp_srv_reply_status(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          pmix_status_t status)
{
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_pack_i32(&buf, status) != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        rdp_srv_peer_drop(peer, PMIX_ERR_NOMEM);
        return;
    }
    rdp_srv_reply_buf(peer, cmd, tag, &buf);
}
