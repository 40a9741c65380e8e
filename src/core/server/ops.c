/* ops.c - finalize, abort, events, job control, pub/sub, spawn, log,
 * monitor (query: query.c) */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/group.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/logchan.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <string.h>

/* Inputs unpacked from a request, kept until the host calls back. */
typedef struct op_in {
    pmix_proc_t proc; /* the requester (stable copy for the host) */
    pmix_proc_t source;
    pmix_info_t *info;
    size_t ninfo;
    pmix_info_t *info2;
    size_t ninfo2;
    pmix_proc_t *procs;
    size_t nprocs;
    char **keys;
    pmix_app_t *apps;
    size_t napps;
    char *msg;
    int32_t code;
    uint8_t range;
} op_in_t;

/* Request payload fields, in wire order (see proto.h). */
enum op_field {
    F_END = 0,
    F_CODE,   /* i32 */
    F_MSG,    /* str, may be NULL */
    F_PROCS,  /* procs */
    F_SOURCE, /* proc */
    F_RANGE,  /* u8 */
    F_INFOS,  /* infos */
    F_INFOS2, /* a second infos */
    F_KEYS,   /* strs */
    F_APPS    /* app array */
};

static void op_in_free(void *arg)
{
    op_in_t *in = arg;

    if (in == NULL) {
        return;
    }
    PMIX_INFO_FREE(in->info, in->ninfo);
    PMIX_INFO_FREE(in->info2, in->ninfo2);
    rdp_free(in->procs);
    pmix_argv_free(in->keys);
    PMIX_APP_FREE(in->apps, in->napps);
    rdp_free(in->msg);
    rdp_free(in);
}

static op_in_t *op_in_create(const rdp_srv_peer_t *peer)
{
    op_in_t *in = rdp_calloc(1, sizeof(*in));

    if (in != NULL && peer != NULL && peer->client != NULL) {
        in->proc = peer->client->proc;
    }
    return in;
}

/* A malformed request closes the connection. */
static void bad_request(rdp_srv_peer_t *peer, const char *what,
                        pmix_status_t status)
{
    rdp_srv_client_t *c = peer->client;

    rdp_log_error(SERVER,
                  "malformed %s request from %s:%u: %s; connection "
                  "closed",
                  what, c != NULL ? c->proc.nspace : "?",
                  c != NULL ? c->proc.rank : PMIX_RANK_UNDEF,
                  rdp_status_name(status));
    rdp_srv_peer_drop(peer, status);
}

/* Attach @a in to a new hostop answering @a cmd. NULL on NOMEM (then @a in
 * is freed and the status replied). */
static rdp_srv_hostop_t *hostop_with(rdp_srv_peer_t *peer, uint16_t cmd,
                                     uint32_t tag, op_in_t *in)
{
    rdp_srv_hostop_t *op = rdp_srv_hostop_create(peer, cmd, tag);

    if (op == NULL) {
        op_in_free(in);
        if (peer != NULL) {
            rdp_srv_reply_status(peer, cmd, tag, PMIX_ERR_NOMEM);
        }
        return NULL;
    }
    op->ctx     = in;
    op->free_fn = op_in_free;
    return op;
}

static pmix_status_t unpack_strs(rdp_rbuf_t *rb, char ***keys_p);

/* Unpack a request laid out as @a fields; on a malformed one the
 * connection is closed and NULL returned (as on NOMEM, replied). */
static op_in_t *parse_request(rdp_srv_peer_t *peer, uint16_t reply,
                              uint32_t tag, rdp_rbuf_t *rb, const char *what,
                              const uint8_t *fields)
{
    op_in_t *in          = op_in_create(peer);
    pmix_status_t status = PMIX_SUCCESS;

    if (in == NULL) {
        rdp_srv_reply_status(peer, reply, tag, PMIX_ERR_NOMEM);
        return NULL;
    }
    for (const uint8_t *f = fields; status == PMIX_SUCCESS && *f != F_END;
         f++) {
        switch (*f) {
        case F_CODE:
            status = rdp_unpack_i32(rb, &in->code);
            break;
        case F_MSG:
            status = rdp_unpack_string(rb, &in->msg);
            break;
        case F_PROCS:
            status = rdp_unpack_proc_array(rb, &in->procs, &in->nprocs);
            break;
        case F_SOURCE:
            status = rdp_unpack_proc(rb, &in->source);
            break;
        case F_RANGE:
            status = rdp_unpack_u8(rb, &in->range);
            break;
        case F_INFOS:
            status = rdp_unpack_info_array(rb, &in->info, &in->ninfo);
            break;
        case F_INFOS2:
            status = rdp_unpack_info_array(rb, &in->info2, &in->ninfo2);
            break;
        case F_KEYS:
            status = unpack_strs(rb, &in->keys);
            break;
        default: /* F_APPS */
            status = rdp_unpack_app_array(rb, &in->apps, &in->napps);
            break;
        }
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        op_in_free(in);
        bad_request(peer, what, status);
        return NULL;
    }
    return in;
}

/* A hostop carrying @a in when the host provides the upcall; otherwise
 * replies PMIX_ERR_NOT_SUPPORTED and returns NULL. */
static rdp_srv_hostop_t *upcall_op(rdp_srv_peer_t *peer, uint16_t reply,
                                   uint32_t tag, op_in_t *in, bool provided,
                                   uint8_t empty_reply)
{
    rdp_srv_hostop_t *op;

    if (!provided) {
        op_in_free(in);
        rdp_srv_reply_status(peer, reply, tag, PMIX_ERR_NOT_SUPPORTED);
        return NULL;
    }
    op = hostop_with(peer, reply, tag, in);
    if (op != NULL) {
        op->empty_reply = empty_reply;
    }
    return op;
}

/* ---- FINALIZE ---- */

void rdp_srv_handle_finalize(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    rdp_srv_client_t *client = peer->client;
    rdp_srv_hostop_t *op;
    op_in_t *in;
    pmix_status_t rc;

    if (rb->left != 0) {
        bad_request(peer, "finalize", PMIX_ERR_UNPACK_FAILURE);
        return;
    }
    client->state = RDP_SRV_CLIENT_FINALIZED;
    rdp_log_debug(SERVER, "client %s:%u finalized", client->proc.nspace,
                  client->proc.rank);
    rdp_srv_coll_client_gone(client);
    rdp_srv_group_client_gone(client);
    rdp_srv_monitor_client_gone(&client->proc);
    /* whoever still waits wants a key it never committed */
    rdp_srv_modex_fail(client->proc.nspace, client->proc.rank,
                       PMIX_ERR_NOT_FOUND);
    in = op_in_create(peer);
    if (in == NULL) {
        rdp_srv_reply_status(peer, RDP_CMD_FINALIZE_ACK, tag, PMIX_ERR_NOMEM);
        rdp_srv_peer_drop(peer, PMIX_SUCCESS);
        return;
    }
    op = hostop_with(peer, RDP_CMD_FINALIZE_ACK, tag, in);
    if (op == NULL) {
        rdp_srv_peer_drop(peer, PMIX_SUCCESS);
        return;
    }
    op->close_after = true;
    if (rdp_srv.host.client_finalized == NULL) {
        rdp_srv_hostop_complete(op, PMIX_SUCCESS);
        return;
    }
    rc = rdp_srv.host.client_finalized(&in->proc, client->server_object,
                                       rdp_srv_hostop_op_cb, op);
    rdp_srv_hostop_started(op, rc);
}

/* ---- ABORT ---- */

void rdp_srv_handle_abort(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_CODE, F_MSG, F_PROCS, F_END};
    rdp_srv_hostop_t *op;
    op_in_t *in;

    in = parse_request(peer, RDP_CMD_ABORT_ACK, tag, rb, "abort", layout);
    if (in == NULL) {
        return;
    }
    rdp_log_info(SERVER, "%s:%u called abort (status %d): %s", in->proc.nspace,
                 in->proc.rank, in->code, in->msg == NULL ? "" : in->msg);
    op = upcall_op(peer, RDP_CMD_ABORT_ACK, tag, in, rdp_srv.host.abort != NULL,
                   RDP_SRV_EMPTY_NONE);
    if (op != NULL) {
        rdp_srv_hostop_started(
            op, rdp_srv.host.abort(&in->proc, peer->client->server_object,
                                   in->code, in->msg, in->procs, in->nprocs,
                                   rdp_srv_hostop_op_cb, op));
    }
}

/* ---- events ---- */

static bool proc_matches(const pmix_proc_t *want, const pmix_proc_t *p)
{
    return strncmp(want->nspace, p->nspace, PMIX_MAX_NSLEN) == 0
           && (want->rank == PMIX_RANK_WILDCARD || want->rank == p->rank);
}

/* Is @a target in the custom range given by PMIX_EVENT_CUSTOM_RANGE? */
static bool custom_range_has(const pmix_info_t *info, size_t ninfo,
                             const pmix_proc_t *target)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (!PMIX_CHECK_KEY(&info[i], PMIX_EVENT_CUSTOM_RANGE)) {
            continue;
        }
        if (v->type == PMIX_PROC && v->data.proc != NULL) {
            return proc_matches(v->data.proc, target);
        }
        if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL
            && v->data.darray->type == PMIX_PROC
            && v->data.darray->array != NULL) {
            const pmix_proc_t *p = v->data.darray->array;

            for (size_t k = 0; k < v->data.darray->size; k++) {
                if (proc_matches(&p[k], target)) {
                    return true;
                }
            }
        }
        return false;
    }
    return false;
}

bool rdp_srv_event_in_range(pmix_data_range_t range, const pmix_proc_t *source,
                            const pmix_info_t *info, size_t ninfo,
                            const pmix_proc_t *target)
{
    switch (range) {
    case PMIX_RANGE_PROC_LOCAL:
    case PMIX_RANGE_RM:
        return false;
    case PMIX_RANGE_NAMESPACE:
        return strncmp(source->nspace, target->nspace, PMIX_MAX_NSLEN) == 0;
    case PMIX_RANGE_CUSTOM:
        return custom_range_has(info, ninfo, target);
    default:
        return true; /* undef, local, session, global */
    }
}

/* Send the event to this node's clients in range, except @a except. */
static void notify_clients(pmix_status_t code, const pmix_proc_t *source,
                           pmix_data_range_t range, const pmix_info_t *info,
                           size_t ninfo, uint64_t except)
{
    rdp_hash_entry_t *ent;
    rdp_ipc_blob_t *blob;
    rdp_buf_t buf;
    size_t i;
    pmix_status_t status;

    if (range == PMIX_RANGE_PROC_LOCAL || range == PMIX_RANGE_RM) {
        return;
    }
    rdp_buf_init(&buf);
    status = rdp_pack_i32(&buf, code);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_proc(&buf, source);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&buf, info, ninfo);
    }
    if (status != PMIX_SUCCESS
        || rdp_ipc_blob_create(&buf, &blob) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot pack event %s", rdp_status_name(code));
        rdp_buf_cleanup(&buf);
        return;
    }
    rdp_buf_cleanup(&buf);
    rdp_hash_for_each(ent, &rdp_srv.peers, i) {
        rdp_srv_peer_t *peer = ent->value;

        if (peer->id == except || peer->state != RDP_SRV_PEER_READY
            || peer->client == NULL
            || peer->client->state != RDP_SRV_CLIENT_CONNECTED
            || !rdp_srv_event_in_range(range, source, info, ninfo,
                                       &peer->client->proc)) {
            continue;
        }
        rdp_ipc_send_blob(peer->conn, RDP_CMD_EVENT, 0, blob);
    }
    /* clients that connect later get it then */
    rdp_srv_evcache_keep(code, source, range, info, ninfo, blob);
}

void rdp_srv_notify_local(pmix_status_t code, const pmix_proc_t *source,
                          pmix_data_range_t range, const pmix_info_t *info,
                          size_t ninfo)
{
    notify_clients(code, source, range, info, ninfo, 0);
}

void rdp_srv_notify_local_except(pmix_status_t code, const pmix_proc_t *source,
                                 pmix_data_range_t range,
                                 const pmix_info_t *info, size_t ninfo,
                                 uint64_t except)
{
    notify_clients(code, source, range, info, ninfo, except);
}

static bool range_leaves_node(pmix_data_range_t range)
{
    return range == PMIX_RANGE_NAMESPACE || range == PMIX_RANGE_SESSION
           || range == PMIX_RANGE_GLOBAL || range == PMIX_RANGE_CUSTOM
           || range == PMIX_RANGE_RM;
}

void rdp_srv_handle_notify(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_CODE, F_SOURCE, F_RANGE, F_INFOS, F_END};
    op_in_t *in;
    pmix_status_t status;

    in = parse_request(peer, RDP_CMD_NOTIFY_ACK, tag, rb, "notify", layout);
    if (in == NULL) {
        return;
    }
    notify_clients(in->code, &in->source, in->range, in->info, in->ninfo,
                   peer->id);
    /* the server process's own handlers */
    if (in->range != PMIX_RANGE_PROC_LOCAL
        && (in->range != PMIX_RANGE_NAMESPACE
            || strncmp(in->source.nspace, rdp_rt.myproc.nspace, PMIX_MAX_NSLEN)
                   == 0)
        && (in->range != PMIX_RANGE_CUSTOM
            || custom_range_has(in->info, in->ninfo, &rdp_rt.myproc))) {
        status = rdp_event_deliver_or_cache(in->code, &in->source, in->range,
                                            in->info, in->ninfo);
        if (status != PMIX_SUCCESS) {
            rdp_log_debug(SERVER, "local delivery of event %d: %s", in->code,
                          rdp_status_name(status));
        }
    }
    rdp_srv_reply_status(peer, RDP_CMD_NOTIFY_ACK, tag, PMIX_SUCCESS);
    if (range_leaves_node(in->range) && rdp_srv.host.notify_event != NULL) {
        rdp_srv_hostop_t *op = hostop_with(NULL, RDP_CMD_INVALID, 0, in);

        if (op != NULL) {
            rdp_srv_hostop_started(
                op, rdp_srv.host.notify_event(in->code, &in->source, in->range,
                                              in->info, in->ninfo,
                                              rdp_srv_hostop_op_cb, op));
        }
        return;
    }
    op_in_free(in);
}

/* PMIx_Notify_event called in the server process: its handlers already
 * ran; reach the clients. The host is not told: it is the likely
 * originator and would see its own event again. */
pmix_status_t rdp_srv_event_forward(pmix_status_t code,
                                    const pmix_proc_t *source,
                                    pmix_data_range_t range,
                                    const pmix_info_t *info, size_t ninfo,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (!rdp_srv.active) {
        return PMIX_ERR_INIT;
    }
    notify_clients(code, source != NULL ? source : &rdp_rt.myproc, range, info,
                   ninfo, 0);
    rdp_srv_post_op_cb(cbfunc, PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* ---- JOB_CONTROL ---- */

static bool has_job_directives(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (strncmp(info[i].key, "pmix.jctrl.", 11) == 0) {
            return true;
        }
    }
    return false;
}

void rdp_srv_handle_job_control(rdp_srv_peer_t *peer, uint32_t tag,
                                rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_PROCS, F_INFOS, F_END};
    rdp_srv_hostop_t *op;
    bool handled = false;
    op_in_t *in;
    pmix_status_t status;

    in = parse_request(peer, RDP_CMD_JOB_CONTROL_ACK, tag, rb, "job control",
                       layout);
    if (in == NULL) {
        return;
    }
    status =
        rdp_srv_cleanup_register(peer->client, in->info, in->ninfo, &handled);
    if (handled
        && (status != PMIX_SUCCESS
            || !has_job_directives(in->info, in->ninfo))) {
        /* cleanup registration is ours alone: answer it here */
        op = hostop_with(peer, RDP_CMD_JOB_CONTROL_ACK, tag, in);
        if (op != NULL) {
            op->empty_reply = RDP_SRV_EMPTY_INFOS;
            rdp_srv_hostop_complete(op, status);
        }
        return;
    }
    op = upcall_op(peer, RDP_CMD_JOB_CONTROL_ACK, tag, in,
                   rdp_srv.host.job_control != NULL, RDP_SRV_EMPTY_INFOS);
    if (op != NULL) {
        rdp_srv_hostop_started(
            op,
            rdp_srv.host.job_control(&in->proc, in->procs, in->nprocs, in->info,
                                     in->ninfo, rdp_srv_hostop_info_cb, op));
    }
}

/* ---- PUBLISH / LOOKUP / UNPUBLISH ---- */

/* strs := u32 count, count x str; NULL-terminated argv. */
static pmix_status_t unpack_strs(rdp_rbuf_t *rb, char ***keys_p)
{
    uint32_t n;
    char **keys;
    pmix_status_t status = rdp_unpack_u32(rb, &n);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (n > rb->left / 4) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    keys = rdp_calloc((size_t)n + 1, sizeof(char *));
    if (keys == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        status = rdp_unpack_string(rb, &keys[i]);
        if (status == PMIX_SUCCESS && keys[i] == NULL) {
            status = PMIX_ERR_BAD_PARAM;
        }
        if (status != PMIX_SUCCESS) {
            pmix_argv_free(keys);
            return status;
        }
    }
    *keys_p = keys;
    return PMIX_SUCCESS;
}

/* pmix_lookup_cbfunc_t: any thread */
static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata,
                      void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_LOOKUP);
    rdp_srv_hostop_t *op = cbdata;

    if (status == PMIX_SUCCESS) {
        pmix_status_t st = rdp_pack_pdata_array(&op->reply, data, ndata);

        if (st != PMIX_SUCCESS) {
            status = st;
        }
    }
    rdp_srv_hostop_complete(op, status);
    RDP_SRV_HOST_CB_LEAVE();
}

void rdp_srv_handle_pubsub(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                           rdp_rbuf_t *rb)
{
    static const uint8_t publish[] = {F_INFOS, F_END};
    static const uint8_t keyed[]   = {F_KEYS, F_INFOS, F_END};
    uint16_t reply                 = (uint16_t)(cmd + 1);
    pmix_server_module_t *h        = &rdp_srv.host;
    rdp_srv_hostop_t *op;
    op_in_t *in;
    pmix_status_t rc;

    in = parse_request(peer, reply, tag, rb, "publish/lookup",
                       cmd == RDP_CMD_PUBLISH ? publish : keyed);
    if (in == NULL) {
        return;
    }
    if (cmd == RDP_CMD_PUBLISH) {
        op = upcall_op(peer, reply, tag, in, h->publish != NULL,
                       RDP_SRV_EMPTY_NONE);
        if (op == NULL) {
            return;
        }
        rc = h->publish(&in->proc, in->info, in->ninfo, rdp_srv_hostop_op_cb,
                        op);
    } else if (cmd == RDP_CMD_LOOKUP) {
        op = upcall_op(peer, reply, tag, in, h->lookup != NULL,
                       RDP_SRV_EMPTY_PDATA);
        if (op == NULL) {
            return;
        }
        rc = h->lookup(&in->proc, in->keys, in->info, in->ninfo, lookup_cb, op);
    } else {
        op = upcall_op(peer, reply, tag, in, h->unpublish != NULL,
                       RDP_SRV_EMPTY_NONE);
        if (op == NULL) {
            return;
        }
        rc = h->unpublish(&in->proc, in->keys, in->info, in->ninfo,
                          rdp_srv_hostop_op_cb, op);
    }
    rdp_srv_hostop_started(op, rc);
}

/* ---- SPAWN ---- */

/* pmix_spawn_cbfunc_t: any thread */
static void spawn_cb(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_SPAWN);
    rdp_srv_hostop_t *op = cbdata;

    if (status == PMIX_SUCCESS) {
        pmix_status_t st = rdp_pack_string(&op->reply, nspace);

        if (st != PMIX_SUCCESS) {
            status = st;
        }
    }
    rdp_srv_hostop_complete(op, status);
    RDP_SRV_HOST_CB_LEAVE();
}

void rdp_srv_handle_spawn(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_INFOS, F_APPS, F_END};
    rdp_srv_hostop_t *op;
    op_in_t *in;

    in = parse_request(peer, RDP_CMD_SPAWN_ACK, tag, rb, "spawn", layout);
    if (in == NULL) {
        return;
    }
    op = upcall_op(peer, RDP_CMD_SPAWN_ACK, tag, in, rdp_srv.host.spawn != NULL,
                   RDP_SRV_EMPTY_STRING);
    if (op != NULL) {
        rdp_srv_hostop_started(op, rdp_srv.host.spawn(&in->proc, in->info,
                                                      in->ninfo, in->apps,
                                                      in->napps, spawn_cb, op));
    }
}

/* ---- LOG ---- */

/* Without a host `log` upcall the server writes what it can itself.
 * OpenPMIx 4.2.2 writes the syslog channels in any server and stdout or
 * stderr only in a gateway (to IOF tools), dropping them silently
 * elsewhere; we write those to the server process's own stdout and
 * stderr instead, which is what a user of such a host can see.  There is
 * no gateway to reach a global syslog, nor mail or job records: not
 * supported. */
typedef struct log_here_ctx {
    const pmix_proc_t *source;
    int priority;
} log_here_ctx_t;

static pmix_status_t write_here(enum rdp_logchan chan, const char *msg,
                                void *arg)
{
    const log_here_ctx_t *ctx = arg;

    switch (chan) {
    case RDP_LOGCHAN_STDOUT:
        return rdp_logchan_write_line(1, msg);
    case RDP_LOGCHAN_STDERR:
        return rdp_logchan_write_line(2, msg);
    case RDP_LOGCHAN_LOCAL_SYSLOG:
        return rdp_logchan_syslog(ctx->priority, "rdpmix", ctx->source, msg);
    default:
        return PMIX_ERR_NOT_SUPPORTED;
    }
}

static void log_here(rdp_srv_peer_t *peer, uint32_t tag, op_in_t *in)
{
    rdp_logchan_opts_t opts;
    log_here_ctx_t ctx = {.source = &in->proc};
    rdp_srv_hostop_t *op;
    pmix_status_t status;

    rdp_logchan_opts_parse(in->info2, in->ninfo2, &opts);
    ctx.priority = opts.priority;
    status = rdp_logchan_dispatch(in->info, in->ninfo, &opts, write_here, &ctx);
    op     = hostop_with(peer, RDP_CMD_LOG_ACK, tag, in);
    if (op != NULL) {
        rdp_srv_hostop_complete(op, status);
    }
}

void rdp_srv_handle_log(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_INFOS, F_INFOS2, F_END};
    rdp_srv_hostop_t *op;
    op_in_t *in;

    in = parse_request(peer, RDP_CMD_LOG_ACK, tag, rb, "log", layout);
    if (in == NULL) {
        return;
    }
    if (rdp_srv.host.log == NULL) {
        log_here(peer, tag, in);
        return;
    }
    op = upcall_op(peer, RDP_CMD_LOG_ACK, tag, in, true, RDP_SRV_EMPTY_NONE);
    if (op != NULL) {
        /* a void upcall: the host always calls back */
        rdp_srv.host.log(&in->proc, in->info, in->ninfo, in->info2, in->ninfo2,
                         rdp_srv_hostop_op_cb, op);
    }
}

/* ---- MONITOR ---- */

/* Heartbeat monitors, heartbeats and cancels are the server's own (see
 * monitor.c); other kinds go to the host's `monitor` upcall. */
void rdp_srv_handle_monitor(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    static const uint8_t layout[] = {F_INFOS, F_CODE, F_INFOS2, F_END};
    rdp_srv_hostop_t *op;
    bool handled;
    op_in_t *in;
    pmix_status_t status;

    in = parse_request(peer, RDP_CMD_MONITOR_ACK, tag, rb, "monitor", layout);
    if (in == NULL) {
        return;
    }
    if (in->ninfo != 1) {
        op_in_free(in);
        bad_request(peer, "monitor", PMIX_ERR_BAD_PARAM);
        return;
    }
    status = rdp_srv_monitor_request(&in->proc, in->info, in->code, in->info2,
                                     in->ninfo2, &handled);
    if (handled) {
        op = hostop_with(peer, RDP_CMD_MONITOR_ACK, tag, in);
        if (op != NULL) {
            op->empty_reply = RDP_SRV_EMPTY_INFOS;
            rdp_srv_hostop_complete(op, status);
        }
        return;
    }
    op = upcall_op(peer, RDP_CMD_MONITOR_ACK, tag, in,
                   rdp_srv.host.monitor != NULL, RDP_SRV_EMPTY_INFOS);
    if (op != NULL) {
        rdp_srv_hostop_started(
            op, rdp_srv.host.monitor(&in->proc, in->info, in->code, in->info2,
                                     in->ninfo2, rdp_srv_hostop_info_cb, op));
    }
}
