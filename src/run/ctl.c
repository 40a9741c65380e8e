/* ctl.c - launcher <-> daemon control channel: payload pack/unpack */
#include "config.h"
#include "run/ctl.h"
#include "core/util/alloc.h"
#include "core/util/value.h"
#include "pnet/pnet.h"

#include <string.h>

/* Upper bounds that keep a hostile count from allocating much before the
 * remaining-bytes check catches it. */
#define MAX_STRV 65536

void rdp_ctl_strv_free(char **v)
{
    if (v == NULL) {
        return;
    }
    for (char **p = v; *p != NULL; p++) {
        rdp_free(*p);
    }
    rdp_free(v);
}

static pmix_status_t pack_strv(rdp_buf_t *buf, char *const *v)
{
    uint32_t n = 0;
    pmix_status_t status;

    while (v != NULL && v[n] != NULL) {
        n++;
    }
    status = rdp_pack_u32(buf, n);
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_pack_string(buf, v[i]);
    }
    return status;
}

/* Every element must be a non-NULL string; result is NULL-terminated. */
static pmix_status_t unpack_strv(rdp_rbuf_t *rb, char ***v_p)
{
    uint32_t n;
    char **v;
    pmix_status_t status;

    status = rdp_unpack_u32(rb, &n);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    /* each string takes at least 4 bytes on the wire */
    if (n > MAX_STRV || (size_t)n * 4 > rb->left) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    v = rdp_calloc((size_t)n + 1, sizeof(*v));
    if (v == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        status = rdp_unpack_string(rb, &v[i]);
        if (status == PMIX_SUCCESS && v[i] == NULL) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status != PMIX_SUCCESS) {
            rdp_ctl_strv_free(v);
            return status;
        }
    }
    *v_p = v;
    return PMIX_SUCCESS;
}

static pmix_status_t finish(rdp_buf_t *buf, size_t mark, pmix_status_t status)
{
    if (status != PMIX_SUCCESS) {
        buf->size = mark;
    }
    return status;
}

static pmix_status_t check_end(const rdp_rbuf_t *rb, pmix_status_t status)
{
    if (status == PMIX_SUCCESS && rb->left != 0) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return status;
}

/* An engine address: empty, or up to RDP_CTL_MAX_ADDR bytes (copied). */
static pmix_status_t unpack_addr(rdp_rbuf_t *rb, uint8_t **addr_p,
                                 size_t *len_p)
{
    void *addr;
    size_t len;
    pmix_status_t status;

    status = rdp_unpack_bytes(rb, &addr, &len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (len > RDP_CTL_MAX_ADDR) {
        rdp_free(addr);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    *addr_p = addr;
    *len_p  = len;
    return PMIX_SUCCESS;
}

/* ---- HELLO ---- */

pmix_status_t rdp_ctl_hello_pack(rdp_buf_t *buf, const rdp_ctl_hello_t *m)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_bytes(buf, m->secret, sizeof(m->secret));
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->node_id);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->pid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->node_name);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->tmpdir);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, m->engine_addr, m->engine_addr_len);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_hello_unpack(const void *data, size_t len,
                                   rdp_ctl_hello_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_hello_t m;
    const void *secret;
    size_t slen;
    pmix_status_t status;

    memset(&m, 0, sizeof(m));
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_bytes_view(&rb, &secret, &slen);
    if (status == PMIX_SUCCESS && slen != sizeof(m.secret)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        memcpy(m.secret, secret, sizeof(m.secret));
        status = rdp_unpack_u32(&rb, &m.node_id);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.pid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.node_name);
    }
    if (status == PMIX_SUCCESS
        && (m.node_name == NULL || m.node_name[0] == '\0')) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.tmpdir);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_addr(&rb, &m.engine_addr, &m.engine_addr_len);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_ctl_hello_cleanup(&m);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_ctl_hello_cleanup(rdp_ctl_hello_t *m)
{
    if (m == NULL) {
        return;
    }
    rdp_free(m->node_name);
    rdp_free(m->tmpdir);
    rdp_free(m->engine_addr);
    m->node_name       = NULL;
    m->tmpdir          = NULL;
    m->engine_addr     = NULL;
    m->engine_addr_len = 0;
}

/* ---- LAUNCH ---- */

pmix_status_t rdp_ctl_launch_pack(rdp_buf_t *buf, const rdp_ctl_launch_t *m)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_string(buf, m->nspace);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->job_size);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->nnodes);
    }
    for (uint32_t n = 0; status == PMIX_SUCCESS && n < m->nnodes; n++) {
        const rdp_ctl_node_t *node = &m->nodes[n];

        status = rdp_pack_string(buf, node->name);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u32(buf, node->nranks);
        }
        for (uint32_t i = 0; status == PMIX_SUCCESS && i < node->nranks; i++) {
            status = rdp_pack_u32(buf, node->ranks[i]);
        }
        if (status == PMIX_SUCCESS) {
            status =
                rdp_pack_bytes(buf, node->engine_addr, node->engine_addr_len);
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->mapby);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->rankby);
    }
    if (status == PMIX_SUCCESS) {
        status = pack_strv(buf, m->argv);
    }
    if (status == PMIX_SUCCESS) {
        status = pack_strv(buf, m->env);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->cwd);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->flags);
    }
    if (status == PMIX_SUCCESS) {
        int engine = (m->flags & RDP_CTL_FLAG_ENGINE) != 0;

        status = rdp_pack_bytes(buf, engine ? m->engine_key : NULL,
                                engine ? sizeof(m->engine_key) : 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, m->net, m->nnet);
    }
    return finish(buf, mark, status);
}

static pmix_status_t unpack_node(rdp_rbuf_t *rb, rdp_ctl_node_t *node)
{
    pmix_status_t status;

    status = rdp_unpack_string(rb, &node->name);
    if (status == PMIX_SUCCESS
        && (node->name == NULL || node->name[0] == '\0')) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &node->nranks);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if ((size_t)node->nranks * 4 > rb->left) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (node->nranks > 0) {
        node->ranks = rdp_calloc(node->nranks, sizeof(*node->ranks));
        if (node->ranks == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < node->nranks; i++) {
        status = rdp_unpack_u32(rb, &node->ranks[i]);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_addr(rb, &node->engine_addr, &node->engine_addr_len);
    }
    return status;
}

/* Each rank of the job on exactly one node; names unique. */
static pmix_status_t check_map(const rdp_ctl_launch_t *m)
{
    uint8_t *seen;
    uint64_t total       = 0;
    pmix_status_t status = PMIX_SUCCESS;

    if (m->job_size == 0 || m->job_size > RDP_CTL_MAX_JOB_SIZE
        || m->nnodes == 0) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    seen = rdp_calloc(m->job_size, 1);
    if (seen == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t n = 0; status == PMIX_SUCCESS && n < m->nnodes; n++) {
        const rdp_ctl_node_t *node = &m->nodes[n];

        for (uint32_t p = 0; p < n; p++) {
            if (strcmp(m->nodes[p].name, node->name) == 0) {
                status = PMIX_ERR_UNPACK_FAILURE;
            }
        }
        for (uint32_t i = 0; status == PMIX_SUCCESS && i < node->nranks; i++) {
            uint32_t r = node->ranks[i];

            if (r >= m->job_size || seen[r]) {
                status = PMIX_ERR_UNPACK_FAILURE;
            } else {
                seen[r] = 1;
            }
        }
        total += node->nranks;
    }
    if (status == PMIX_SUCCESS && total != m->job_size) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    /* engine mode: every node has an address; otherwise none has one */
    for (uint32_t n = 0; status == PMIX_SUCCESS && n < m->nnodes; n++) {
        int has_addr = m->nodes[n].engine_addr_len > 0;

        if (has_addr != ((m->flags & RDP_CTL_FLAG_ENGINE) != 0)) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    rdp_free(seen);
    return status;
}

/* The key is whole in engine mode, absent otherwise. */
static pmix_status_t unpack_key(rdp_rbuf_t *rb, rdp_ctl_launch_t *m)
{
    const void *key;
    size_t len;
    size_t want = (m->flags & RDP_CTL_FLAG_ENGINE) ? sizeof(m->engine_key) : 0;
    pmix_status_t status;

    status = rdp_unpack_bytes_view(rb, &key, &len);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (len != want) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (len > 0) {
        memcpy(m->engine_key, key, len);
    }
    return PMIX_SUCCESS;
}

static int env_entry_ok(const char *e)
{
    const char *eq = strchr(e, '=');

    return eq != NULL && eq != e;
}

pmix_status_t rdp_ctl_launch_unpack(const void *data, size_t len,
                                    rdp_ctl_launch_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_launch_t m;
    pmix_status_t status;

    memset(&m, 0, sizeof(m));
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_string(&rb, &m.nspace);
    if (status == PMIX_SUCCESS
        && (m.nspace == NULL || m.nspace[0] == '\0'
            || strlen(m.nspace) > PMIX_MAX_NSLEN)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.job_size);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.nnodes);
    }
    if (status == PMIX_SUCCESS) {
        /* a node takes at least 12 bytes on the wire */
        if (m.nnodes == 0 || (size_t)m.nnodes * 12 > rb.left) {
            status = PMIX_ERR_UNPACK_FAILURE;
        } else {
            m.nodes = rdp_calloc(m.nnodes, sizeof(*m.nodes));
            if (m.nodes == NULL) {
                status = PMIX_ERR_NOMEM;
            }
        }
    }
    for (uint32_t n = 0; status == PMIX_SUCCESS && n < m.nnodes; n++) {
        status = unpack_node(&rb, &m.nodes[n]);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.mapby);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.rankby);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_strv(&rb, &m.argv);
    }
    if (status == PMIX_SUCCESS && (m.argv[0] == NULL || m.argv[0][0] == 0)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_strv(&rb, &m.env);
    }
    for (size_t i = 0; status == PMIX_SUCCESS && m.env[i] != NULL; i++) {
        if (!env_entry_ok(m.env[i])) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.cwd);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.flags);
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_key(&rb, &m);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(&rb, &m.net, &m.nnet);
    }
    status = check_end(&rb, status);
    if (status == PMIX_SUCCESS) {
        status = check_map(&m);
    }
    if (status != PMIX_SUCCESS) {
        rdp_ctl_launch_cleanup(&m);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_ctl_launch_cleanup(rdp_ctl_launch_t *m)
{
    if (m == NULL) {
        return;
    }
    for (uint32_t n = 0; m->nodes != NULL && n < m->nnodes; n++) {
        rdp_free(m->nodes[n].name);
        rdp_free(m->nodes[n].ranks);
        rdp_free(m->nodes[n].engine_addr);
    }
    rdp_free(m->nodes);
    rdp_free(m->nspace);
    rdp_free(m->mapby);
    rdp_free(m->rankby);
    rdp_ctl_strv_free(m->argv);
    rdp_ctl_strv_free(m->env);
    rdp_free(m->cwd);
    for (size_t i = 0; i < m->nnet; i++) {
        rdp_pnet_wipe_value(&m->net[i].value);
    }
    rdp_info_array_free(m->net, m->nnet);
    explicit_bzero(m, sizeof(*m)); /* the engine key */
}

/* ---- LAUNCHED ---- */

pmix_status_t rdp_ctl_launched_pack(rdp_buf_t *buf, pmix_status_t status,
                                    const char *error, const uint32_t *ranks,
                                    const uint32_t *pids, uint32_t n)
{
    size_t mark = buf->size;
    pmix_status_t rc;

    rc = rdp_pack_i32(buf, status);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_string(buf, error);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u32(buf, n);
    }
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n; i++) {
        rc = rdp_pack_u32(buf, ranks[i]);
        if (rc == PMIX_SUCCESS) {
            rc = rdp_pack_u32(buf, pids[i]);
        }
    }
    return finish(buf, mark, rc);
}

pmix_status_t rdp_ctl_launched_unpack(const void *data, size_t len,
                                      pmix_status_t *status_p, char **error_p,
                                      uint32_t **ranks_p, uint32_t **pids_p,
                                      uint32_t *n_p)
{
    rdp_rbuf_t rb;
    int32_t st;
    char *error     = NULL;
    uint32_t *ranks = NULL, *pids = NULL;
    uint32_t n = 0;
    pmix_status_t rc;

    rdp_rbuf_init(&rb, data, len);
    rc = rdp_unpack_i32(&rb, &st);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_string(&rb, &error);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u32(&rb, &n);
    }
    if (rc == PMIX_SUCCESS && (size_t)n * 8 != rb.left) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS && n > 0) {
        ranks = rdp_calloc(n, sizeof(*ranks));
        pids  = rdp_calloc(n, sizeof(*pids));
        if (ranks == NULL || pids == NULL) {
            rc = PMIX_ERR_NOMEM;
        }
    }
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n; i++) {
        rc = rdp_unpack_u32(&rb, &ranks[i]);
        if (rc == PMIX_SUCCESS) {
            rc = rdp_unpack_u32(&rb, &pids[i]);
        }
    }
    rc = check_end(&rb, rc);
    if (rc != PMIX_SUCCESS) {
        rdp_free(error);
        rdp_free(ranks);
        rdp_free(pids);
        return rc;
    }
    *status_p = st;
    *error_p  = error;
    *ranks_p  = ranks;
    *pids_p   = pids;
    *n_p      = n;
    return PMIX_SUCCESS;
}

/* ---- IO ---- */

pmix_status_t rdp_ctl_io_pack(rdp_buf_t *buf, uint32_t rank, uint8_t channel,
                              const void *data, size_t len)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_u32(buf, rank);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, channel);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_bytes(buf, data, len);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_io_unpack(const void *data, size_t len, rdp_ctl_io_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_io_t m;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &m.rank);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &m.channel);
    }
    if (status == PMIX_SUCCESS && m.channel != RDP_CTL_STDOUT
        && m.channel != RDP_CTL_STDERR) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_bytes_view(&rb, &m.data, &m.len);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

/* ---- EXIT / ABORT ---- */

pmix_status_t rdp_ctl_report_pack(rdp_buf_t *buf, const rdp_ctl_report_t *m)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_u32(buf, m->rank);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->pid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, m->how);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->value);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, m->detail);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_report_unpack(const void *data, size_t len,
                                    rdp_ctl_report_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_report_t m;
    pmix_status_t status;

    memset(&m, 0, sizeof(m));
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &m.rank);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.pid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &m.how);
    }
    if (status == PMIX_SUCCESS && m.how > RDP_CTL_TERMINATED) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.value);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &m.detail);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_ctl_report_cleanup(&m);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_ctl_report_cleanup(rdp_ctl_report_t *m)
{
    if (m == NULL) {
        return;
    }
    rdp_free(m->detail);
    m->detail = NULL;
}

/* ---- KILL ---- */

/* signal numbers of this system only: 1 .. 64 */
static int signo_valid(int32_t signo)
{
    return signo > 0 && signo <= 64;
}

pmix_status_t rdp_ctl_kill_pack(rdp_buf_t *buf, const rdp_ctl_kill_t *m)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_u8(buf, m->mode);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->signo);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_kill_unpack(const void *data, size_t len,
                                  rdp_ctl_kill_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_kill_t m;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u8(&rb, &m.mode);
    if (status == PMIX_SUCCESS && m.mode > RDP_CTL_KILL_SIGNAL) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.signo);
    }
    if (status == PMIX_SUCCESS && m.mode == RDP_CTL_KILL_SIGNAL
        && !signo_valid(m.signo)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ctl_got_signal_pack(rdp_buf_t *buf, int32_t signo)
{
    size_t mark = buf->size;

    return finish(buf, mark, rdp_pack_i32(buf, signo));
}

pmix_status_t rdp_ctl_got_signal_unpack(const void *data, size_t len,
                                        int32_t *signo_p)
{
    rdp_rbuf_t rb;
    int32_t signo;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_i32(&rb, &signo);
    if (status == PMIX_SUCCESS && !signo_valid(signo)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    status = check_end(&rb, status);
    if (status == PMIX_SUCCESS) {
        *signo_p = signo;
    }
    return status;
}

/* ---- PUBSUB, PUBSUB_REPLY ---- */

pmix_status_t rdp_ctl_pubsub_pack(rdp_buf_t *buf, const rdp_ctl_pubsub_t *m)
{
    size_t mark = buf->size;
    pmix_status_t status;

    status = rdp_pack_u32(buf, m->id);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, m->op);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_proc(buf, &m->proc);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, m->keys != NULL);
    }
    if (status == PMIX_SUCCESS && m->keys != NULL) {
        status = pack_strv(buf, m->keys);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, m->info, m->ninfo);
    }
    return finish(buf, mark, status);
}

/* publish has no keys, lookup at least one, unpublish any */
static int pubsub_keys_ok(const rdp_ctl_pubsub_t *m)
{
    switch (m->op) {
    case RDP_CTL_PUBLISH:
        return m->keys == NULL;
    case RDP_CTL_LOOKUP:
        return m->keys != NULL && m->keys[0] != NULL;
    case RDP_CTL_UNPUBLISH:
        return 1;
    default:
        return 0;
    }
}

pmix_status_t rdp_ctl_pubsub_unpack(const void *data, size_t len,
                                    rdp_ctl_pubsub_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_pubsub_t m;
    uint8_t has_keys = 0;
    pmix_status_t status;

    memset(&m, 0, sizeof(m));
    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &m.id);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &m.op);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_proc(&rb, &m.proc);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &has_keys);
    }
    if (status == PMIX_SUCCESS && has_keys > 1) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && has_keys) {
        status = unpack_strv(&rb, &m.keys);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(&rb, &m.info, &m.ninfo);
    }
    status = check_end(&rb, status);
    if (status == PMIX_SUCCESS && !pubsub_keys_ok(&m)) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_ctl_pubsub_cleanup(&m);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

void rdp_ctl_pubsub_cleanup(rdp_ctl_pubsub_t *m)
{
    rdp_ctl_strv_free(m->keys);
    m->keys = NULL;
    rdp_info_array_free(m->info, m->ninfo);
    m->info  = NULL;
    m->ninfo = 0;
}

pmix_status_t rdp_ctl_pubsub_reply_pack(rdp_buf_t *buf, uint32_t id,
                                        pmix_status_t status,
                                        const pmix_pdata_t *pd, size_t npd)
{
    size_t mark = buf->size;
    pmix_status_t st;

    st = rdp_pack_u32(buf, id);
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_i32(buf, status);
    }
    if (st == PMIX_SUCCESS) {
        st = rdp_pack_pdata_array(buf, pd, npd);
    }
    return finish(buf, mark, st);
}

pmix_status_t rdp_ctl_pubsub_reply_unpack(const void *data, size_t len,
                                          uint32_t *id_p,
                                          pmix_status_t *status_p,
                                          pmix_pdata_t **pd_p, size_t *npd_p)
{
    rdp_rbuf_t rb;
    uint32_t id;
    int32_t st;
    pmix_pdata_t *pd = NULL;
    size_t npd       = 0;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &id);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &st);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_pdata_array(&rb, &pd, &npd);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        PMIX_PDATA_FREE(pd, npd);
        return status;
    }
    *id_p     = id;
    *status_p = st;
    *pd_p     = pd;
    *npd_p    = npd;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ctl_event_pack(rdp_buf_t *buf, const rdp_ctl_event_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_i32(buf, m->code);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_proc(buf, &m->source);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, (uint8_t)m->range);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, m->info, m->ninfo);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_event_unpack(const void *data, size_t len,
                                   rdp_ctl_event_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_event_t m = {0};
    int32_t code;
    uint8_t range;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_i32(&rb, &code);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_proc(&rb, &m.source);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &range);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(&rb, &m.info, &m.ninfo);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_ctl_event_cleanup(&m);
        return status;
    }
    m.code  = code;
    m.range = range;
    *m_p    = m;
    return PMIX_SUCCESS;
}

void rdp_ctl_event_cleanup(rdp_ctl_event_t *m)
{
    rdp_info_array_free(m->info, m->ninfo);
    m->info  = NULL;
    m->ninfo = 0;
}

/* ---- JCTRL / JCTRL_DO ---- */

pmix_status_t rdp_ctl_jctrl_pack(rdp_buf_t *buf, const rdp_ctl_jctrl_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_u32(buf, m->origin);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->reqid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, m->action);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->signo);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->nranks);
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < m->nranks; i++) {
        status = rdp_pack_u32(buf, m->ranks[i]);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_jctrl_unpack(const void *data, size_t len,
                                   rdp_ctl_jctrl_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_jctrl_t m = {0};
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &m.origin);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.reqid);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &m.action);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.signo);
    }
    if (status == PMIX_SUCCESS
        && (m.action > RDP_CTL_JCTRL_KILL
            || (m.action == RDP_CTL_JCTRL_SIGNAL && !signo_valid(m.signo)))) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.nranks);
    }
    if (status == PMIX_SUCCESS && (size_t)m.nranks * 4 != rb.left) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && m.nranks > 0) {
        m.ranks = rdp_calloc(m.nranks, sizeof(*m.ranks));
        if (m.ranks == NULL) {
            status = PMIX_ERR_NOMEM;
        }
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < m.nranks; i++) {
        status = rdp_unpack_u32(&rb, &m.ranks[i]);
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_free(m.ranks);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

/* ---- PROCS ---- */

pmix_status_t rdp_ctl_procs_pack(rdp_buf_t *buf, const rdp_ctl_procs_t *m)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_u32(buf, m->reqid);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, m->job_status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, m->n);
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < m->n; i++) {
        status = rdp_pack_u32(buf, m->ents[i].pid);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u8(buf, m->ents[i].state);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_i32(buf, m->ents[i].exit_code);
        }
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_procs_unpack(const void *data, size_t len,
                                   rdp_ctl_procs_t *m_p)
{
    rdp_rbuf_t rb;
    rdp_ctl_procs_t m = {0};
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_u32(&rb, &m.reqid);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_i32(&rb, &m.job_status);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(&rb, &m.n);
    }
    if (status == PMIX_SUCCESS && (size_t)m.n * 9 != rb.left) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && m.n > 0) {
        m.ents = rdp_calloc(m.n, sizeof(*m.ents));
        if (m.ents == NULL) {
            status = PMIX_ERR_NOMEM;
        }
    }
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < m.n; i++) {
        status = rdp_unpack_u32(&rb, &m.ents[i].pid);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u8(&rb, &m.ents[i].state);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_i32(&rb, &m.ents[i].exit_code);
        }
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_free(m.ents);
        return status;
    }
    *m_p = m;
    return PMIX_SUCCESS;
}

/* ---- SYSLOG ---- */

pmix_status_t rdp_ctl_syslog_pack(rdp_buf_t *buf, int32_t priority,
                                  const char *msg)
{
    size_t mark          = buf->size;
    pmix_status_t status = rdp_pack_i32(buf, priority);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, msg);
    }
    return finish(buf, mark, status);
}

pmix_status_t rdp_ctl_syslog_unpack(const void *data, size_t len,
                                    int32_t *priority_p, char **msg_p)
{
    rdp_rbuf_t rb;
    int32_t priority;
    char *msg = NULL;
    pmix_status_t status;

    rdp_rbuf_init(&rb, data, len);
    status = rdp_unpack_i32(&rb, &priority);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string(&rb, &msg);
    }
    if (status == PMIX_SUCCESS && msg == NULL) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    status = check_end(&rb, status);
    if (status != PMIX_SUCCESS) {
        rdp_free(msg);
        return status;
    }
    *priority_p = priority;
    *msg_p      = msg;
    return PMIX_SUCCESS;
}
