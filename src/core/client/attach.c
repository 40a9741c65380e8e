/* attach.c - a tool's connection to a server (TOOL_CONNECT handshake) */
#include "config.h"
#include "core/client/attach.h"
#include "core/client/client_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/wire/proto.h"

#include <string.h>
#include <unistd.h>

/* How long the handshake may take. */
#define TOOL_CONNECT_TIMEOUT_SECONDS 30.0
/* Tag of the handshake (requests start at 2, as a client's). */
#define TOOL_CONNECT_TAG 1

static pmix_status_t pack_request(rdp_buf_t *buf, const pmix_proc_t *want,
                                  const pmix_info_t *info, size_t ninfo)
{
    pmix_status_t status;

    rdp_buf_init(buf);
    status =
        rdp_pack_string(buf, want->nspace[0] != '\0' ? want->nspace : NULL);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, want->rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, (uint32_t)getpid());
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(buf);
    }
    return status;
}

static pmix_status_t unpack_proc(rdp_rbuf_t *rb, pmix_proc_t *proc)
{
    const char *ns = NULL;
    uint32_t rank  = 0;
    pmix_status_t status;

    status = rdp_unpack_string_view(rb, &ns);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &rank);
    }
    if (status == PMIX_SUCCESS
        && (ns == NULL || ns[0] == '\0' || strlen(ns) > PMIX_MAX_NSLEN)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        PMIX_LOAD_PROCID(proc, ns, rank);
    }
    return status;
}

/* The reply: status, our identity, the server's; *rb is left at the
 * bundle that follows. */
static pmix_status_t read_reply(const rdp_msg_hdr_t *hdr, rdp_rbuf_t *rb,
                                pmix_proc_t *self, pmix_proc_t *server)
{
    int32_t remote;

    if (hdr->cmd != RDP_CMD_TOOL_CONNECT_ACK || hdr->tag != TOOL_CONNECT_TAG
        || rdp_unpack_i32(rb, &remote) != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed tool handshake reply from server");
        return PMIX_ERR_HANDSHAKE_FAILED;
    }
    if (remote != PMIX_SUCCESS) {
        return remote;
    }
    if (unpack_proc(rb, self) != PMIX_SUCCESS
        || unpack_proc(rb, server) != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed tool handshake reply from server");
        return PMIX_ERR_HANDSHAKE_FAILED;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t handshake(rdp_ipc_conn_t *conn, const pmix_proc_t *want,
                               const pmix_info_t *info, size_t ninfo,
                               rdp_msg_hdr_t *hdr, void **reply)
{
    rdp_buf_t buf;
    pmix_status_t status;

    status = pack_request(&buf, want, info, ninfo);
    if (status != PMIX_SUCCESS) {
        /* some init info cannot travel (pointers): the server does
         * without it */
        status = pack_request(&buf, want, NULL, 0);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status =
        rdp_ipc_sync_request(conn, RDP_CMD_TOOL_CONNECT, TOOL_CONNECT_TAG, &buf,
                             hdr, reply, TOOL_CONNECT_TIMEOUT_SECONDS);
    rdp_buf_cleanup(&buf);
    return status;
}

pmix_status_t rdp_client_tool_attach(const char *path, const char *uri,
                                     const pmix_proc_t *want,
                                     const pmix_info_t *info, size_t ninfo,
                                     pmix_proc_t *self_p, pmix_proc_t *server_p)
{
    rdp_ipc_conn_t *conn;
    rdp_msg_hdr_t hdr;
    rdp_rbuf_t rb;
    void *reply    = NULL;
    char *hostname = NULL;
    pmix_proc_t self, server;
    pmix_status_t status;

    if (rdp_client_tool_attached()) {
        return PMIX_ERR_EXISTS;
    }
    status = rdp_client_hostname(&hostname);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_ipc_connect(rdp_rt.loop, path, &conn);
    if (status != PMIX_SUCCESS) {
        rdp_free(hostname);
        return status;
    }
    status = handshake(conn, want, info, ninfo, &hdr, &reply);
    if (status == PMIX_SUCCESS) {
        rdp_rbuf_init(&rb, reply, hdr.length);
        status = read_reply(&hdr, &rb, &self, &server);
    }
    if (status == PMIX_SUCCESS) {
        rdp_rt.myproc = self;
        status        = rdp_client_adopt(conn, hostname, uri, &rb);
    } else {
        rdp_log_debug(CLIENT, "tool handshake with %s: %s", path,
                      rdp_status_name(status));
    }
    rdp_free(reply);
    rdp_free(hostname);
    if (status != PMIX_SUCCESS) {
        rdp_client_conn_drop(conn);
        return status;
    }
    rdp_client.mode = RDP_CLIENT_CONNECTED;
    __atomic_store_n(&rdp_client.refs, 1, __ATOMIC_RELEASE);
    *self_p   = self;
    *server_p = server;
    rdp_log_debug(CLIENT, "tool %s:%u attached to %s:%u at %s", self.nspace,
                  self.rank, server.nspace, server.rank, path);
    return PMIX_SUCCESS;
}

bool rdp_client_tool_attached(void)
{
    return __atomic_load_n(&rdp_client.refs, __ATOMIC_ACQUIRE) > 0
           && __atomic_load_n(&rdp_client.mode, __ATOMIC_ACQUIRE)
                  == RDP_CLIENT_CONNECTED;
}

void rdp_client_tool_detach(void)
{
    pmix_status_t status;

    if (!rdp_client_tool_attached()) {
        return;
    }
    status = rdp_runtime_call(rdp_client_finalize_on_loop, NULL);
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "tool detach: %s", rdp_status_name(status));
    }
    __atomic_store_n(&rdp_client.refs, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&rdp_client.mode, RDP_CLIENT_OFF, __ATOMIC_RELEASE);
}
