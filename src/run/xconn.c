/* xconn.c - connect/disconnect across launchers: messages (xconn.h) */
#include "config.h"
#include "run/xconn.h"
#include "core/util/alloc.h"

#include <string.h>

/* Largest participant list accepted (a job of the largest size each). */
#define XCONN_MAX_PROCS (2u * RDP_CTL_MAX_JOB_SIZE)

/* Leave @a buf as it was at @a mark when @a status is an error. */
static pmix_status_t finish(rdp_buf_t *buf, size_t mark, pmix_status_t status)
{
    if (status != PMIX_SUCCESS) {
        buf->size = mark;
    }
    return status;
}

static pmix_status_t pack_procs(rdp_buf_t *buf, const pmix_proc_t *procs,
                                size_t n)
{
    pmix_status_t status = rdp_pack_u32(buf, (uint32_t)n);

    for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_pack_string(buf, procs[i].nspace);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u32(buf, procs[i].rank);
        }
    }
    return status;
}

static pmix_status_t unpack_procs(rdp_rbuf_t *rb, pmix_proc_t **procs_p,
                                  size_t *n_p)
{
    pmix_proc_t *procs;
    uint32_t n;
    pmix_status_t status = rdp_unpack_u32(rb, &n);

    /* each entry takes at least 8 bytes */
    if (status != PMIX_SUCCESS || n == 0 || n > XCONN_MAX_PROCS
        || n > rb->left / 8) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    procs = rdp_calloc(n, sizeof(*procs));
    if (procs == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_unpack_string_into(rb, procs[i].nspace,
                                        sizeof(procs[i].nspace));
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u32(rb, &procs[i].rank);
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(procs);
        return status;
    }
    *procs_p = procs;
    *n_p     = n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_xconn_req_pack(rdp_buf_t *buf, const rdp_xconn_req_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_u32(buf, m->reqid);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, m->op);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->lstatus);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->id != NULL ? m->id : "");
    }
    if (status == PMIX_SUCCESS) {
        status = pack_procs(buf, m->procs, m->nprocs);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->data, m->ndata);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_xconn_req_unpack(const void *payload, size_t len,
                                   rdp_xconn_req_t *m_p)
{
    rdp_xconn_req_t m = {0};
    rdp_rbuf_t rb;
    pmix_status_t status;

    rdp_rbuf_init(&rb, payload, len);
    status = rdp_unpack_u32(&rb, &m.reqid);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &m.op);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.lstatus);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.id);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_procs(&rb, &m.procs, &m.nprocs);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes(&rb, &m.data, &m.ndata);
    }
    if (status == PMIX_SUCCESS
        && (rb.left != 0
            || (m.op != RDP_XCONN_CONNECT && m.op != RDP_XCONN_DISCONNECT))) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_xconn_req_cleanup(&m);
        return status;
    }
    if (m.id != NULL && m.id[0] == '\0') {
        rdp_free(m.id);
        m.id = NULL;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_xconn_req_cleanup(rdp_xconn_req_t *m)
{
    rdp_free(m->id);
    rdp_free(m->procs);
    rdp_free(m->data);
    memset(m, 0, sizeof(*m));
}

pmix_status_t rdp_xconn_done_pack(rdp_buf_t *buf, const rdp_xconn_done_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_u32(buf, m->reqid);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->launch, m->nlaunch);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->data, m->ndata);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_xconn_done_unpack(const void *payload, size_t len,
                                    rdp_xconn_done_t *m_p)
{
    rdp_xconn_done_t m = {0};
    rdp_rbuf_t rb;
    pmix_status_t status;

    rdp_rbuf_init(&rb, payload, len);
    status = rdp_unpack_u32(&rb, &m.reqid);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes_view(&rb, &m.launch, &m.nlaunch);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes_view(&rb, &m.data, &m.ndata);
    }
    if (status == PMIX_SUCCESS && rb.left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        *m_p = m;
    }
    return status;
}

pmix_status_t rdp_xconn_offer_pack(rdp_buf_t *buf, const rdp_xconn_offer_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_string(buf, m->to);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->from);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->key);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->launch, m->nlaunch);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->data, m->ndata);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_xconn_offer_unpack(const void *payload, size_t len,
                                     rdp_xconn_offer_t *m_p)
{
    rdp_xconn_offer_t m = {0};
    rdp_rbuf_t rb;
    pmix_status_t status;

    rdp_rbuf_init(&rb, payload, len);
    status = rdp_unpack_string(&rb, &m.to);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.from);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.key);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes(&rb, &m.launch, &m.nlaunch);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes(&rb, &m.data, &m.ndata);
    }
    if (status == PMIX_SUCCESS
        && (rb.left != 0 || m.to == NULL || m.from == NULL || m.key == NULL
            || m.nlaunch == 0)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_xconn_offer_cleanup(&m);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_xconn_offer_cleanup(rdp_xconn_offer_t *m)
{
    rdp_free(m->to);
    rdp_free(m->from);
    rdp_free(m->key);
    rdp_free(m->launch);
    rdp_free(m->data);
    memset(m, 0, sizeof(*m));
}
