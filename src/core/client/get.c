/* get.c - PMIx_Get, PMIx_Get_nb */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/directive.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "pnet/pnet.h"

#include <string.h>

/*
 * Lookup order (store.c has the rules): what we hold first (PMIx_Get does
 * that on the caller's thread under the store's lock); on a miss the
 * server is asked with GET unless PMIX_OPTIONAL is set or the data cannot
 * be there (our own, or job/node/app data of an nspace we know); its
 * bundle is stored and the lookup repeated.  A final miss of PMIX_APPNUM
 * gives the synthesized 0.  The value handed to a Get_nb callback belongs
 * to the library and is released when the callback returns; PMIx_Get
 * hands the caller its own copy.
 */

typedef struct get_req {
    pmix_proc_t proc;
    char *key; /* NULL: all keys */
    rdp_get_quals_t q;
    char *qhost;       /* owned copy of q.hostname */
    rdp_buf_t payload; /* the GET request, packed by the API thread */
    pmix_value_cbfunc_t cbfunc;
    void *cbdata;
    int give; /* the callback takes ownership of the value */
} get_req_t;

static void get_req_free(get_req_t *req)
{
    rdp_free(req->key);
    rdp_free(req->qhost);
    rdp_buf_cleanup(&req->payload);
    rdp_free(req);
}

static void get_complete(get_req_t *req, pmix_status_t status,
                         pmix_value_t *val)
{
    if (status == PMIX_ERR_NOT_FOUND) {
        status = rdp_client_store_synthesize(&rdp_client.store, &req->proc,
                                             req->key, &val);
    }
    if (status != PMIX_SUCCESS) {
        val = NULL;
    }
    req->cbfunc(status, val, req->cbdata);
    if (!req->give && val != NULL) {
        PMIX_VALUE_RELEASE(val);
    }
    get_req_free(req);
}

static void get_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    get_req_t *req    = arg;
    pmix_value_t *val = NULL;

    if (status == PMIX_SUCCESS && rb != NULL) {
        status = rdp_client_store_bundle(&rdp_client.store, rb);
        if (status == PMIX_SUCCESS) {
            status = rdp_client_store_lookup(&rdp_client.store, &req->proc,
                                             req->key, &req->q, &val);
        }
    }
    get_complete(req, status, val);
}

/* In a server process: ask the server role for what it holds of the
 * proc (registered job data, committed data), store it, look again. */
static pmix_status_t get_in_server(const get_req_t *req, pmix_value_t **val_p)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_status_t status = PMIX_ERR_NOT_FOUND;

    if (rdp_runtime_fetch == NULL) {
        return status;
    }
    rdp_buf_init(&buf);
    status = rdp_runtime_fetch(req->proc.nspace, req->proc.rank, &buf);
    if (status == PMIX_SUCCESS) {
        rdp_rbuf_init(&rb, buf.data, buf.size);
        status = rdp_client_store_bundle(&rdp_client.store, &rb);
    }
    rdp_buf_cleanup(&buf);
    if (status == PMIX_SUCCESS) {
        status = rdp_client_store_lookup(&rdp_client.store, &req->proc,
                                         req->key, &req->q, val_p);
    }
    return status;
}

/* A pnet value (a fabric key) of another job is never ours to read: the
 * server refuses it too, this answers when we would not ask (an nspace
 * whose job data we hold). */
static bool is_other_jobs_secret(const get_req_t *req)
{
    return rdp_pnet_is_private_key(req->key)
           && !PMIX_CHECK_NSPACE(req->proc.nspace, rdp_rt.myproc.nspace);
}

static void get_start(void *arg)
{
    get_req_t *req    = arg;
    pmix_value_t *val = NULL;
    pmix_status_t status;

    if (rdp_client.uncommitted == NULL) {
        get_complete(req, PMIX_ERR_INIT, NULL);
        return;
    }
    if (!req->q.refresh) {
        status = rdp_client_store_lookup(&rdp_client.store, &req->proc,
                                         req->key, &req->q, &val);
        if (status != PMIX_ERR_NOT_FOUND) {
            get_complete(req, status, val);
            return;
        }
    }
    if (rdp_client.mode == RDP_CLIENT_IN_SERVER) {
        status = get_in_server(req, &val);
        get_complete(req, status, val);
        return;
    }
    if (is_other_jobs_secret(req)) {
        get_complete(req, PMIX_ERR_NO_PERMISSIONS, NULL);
        return;
    }
    if (rdp_client.conn == NULL
        || !rdp_client_store_should_fetch(&rdp_client.store, &req->proc,
                                          &req->q)) {
        status = PMIX_ERR_NOT_FOUND;
        if (req->q.refresh) {
            status = rdp_client_store_lookup(&rdp_client.store, &req->proc,
                                             req->key, &req->q, &val);
        }
        get_complete(req, status, val);
        return;
    }
    rdp_log_trace(CLIENT, "asking server for %s of %s:%u",
                  req->key != NULL ? req->key : "all keys", req->proc.nspace,
                  req->proc.rank);
    status = rdp_client_request(RDP_CMD_GET, &req->payload, req->q.timeout,
                                get_reply, req);
    if (status != PMIX_SUCCESS) {
        get_complete(req, status, NULL);
    }
}

/* Check the arguments of a Get and read its qualifiers (q->hostname
 * stays borrowed from @a info). */
static pmix_status_t get_args_check(const pmix_proc_t *proc, const char *key,
                                    const pmix_info_t *info, size_t ninfo,
                                    rdp_get_quals_t *q)
{
    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (key != NULL && rdp_client_check_key(key) != PMIX_SUCCESS) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (proc != NULL
        && strnlen(proc->nspace, sizeof(proc->nspace)) > PMIX_MAX_NSLEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    return rdp_client_get_quals_parse(q, info, ninfo);
}

static pmix_status_t get_req_create(const pmix_proc_t *proc, const char *key,
                                    const pmix_info_t *info, size_t ninfo,
                                    get_req_t **req_p)
{
    get_req_t *req;
    rdp_get_quals_t q;
    pmix_status_t status;

    status = get_args_check(proc, key, info, ninfo, &q);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_buf_init(&req->payload);
    req->q = q;
    if (req->q.hostname != NULL) {
        req->qhost = rdp_strdup(req->q.hostname);
        if (req->qhost == NULL) {
            status = PMIX_ERR_NOMEM;
            goto err;
        }
        req->q.hostname = req->qhost;
    }
    if (proc != NULL) {
        req->proc = *proc;
    } else {
        req->proc = rdp_rt.myproc;
    }
    if (req->proc.nspace[0] == '\0') {
        PMIX_LOAD_NSPACE(req->proc.nspace, rdp_rt.myproc.nspace);
    }
    rdp_client_group_resolve(&req->proc);
    if (key != NULL) {
        req->key = rdp_strdup(key);
        if (req->key == NULL) {
            status = PMIX_ERR_NOMEM;
            goto err;
        }
    }
    status = rdp_pack_string(&req->payload, req->proc.nspace);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(&req->payload, req->proc.rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(&req->payload, key);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&req->payload, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    *req_p = req;
    return PMIX_SUCCESS;

err:
    get_req_free(req);
    return status;
}

pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                          const pmix_info_t info[], size_t ninfo,
                          pmix_value_cbfunc_t cbfunc, void *cbdata)
{
    get_req_t *req;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (cbfunc == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = get_req_create(proc, key, info, ninfo, &req);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    status      = rdp_loop_post(rdp_rt.loop, get_start, req);
    if (status != PMIX_SUCCESS) {
        get_req_free(req);
    }
    return status;
}

static void get_sync_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    rdp_client_sync_t *sync = cbdata;

    sync->data = kv; /* ours: the request was made with `give` */
    rdp_wait_signal(&sync->wait, status);
}

/* On the loop thread (inside an event handler) a Get can still be
 * answered from what we hold; only a trip to the server would block. */
static pmix_status_t get_on_loop(get_req_t *req, pmix_value_t **val_p)
{
    pmix_value_t *val = NULL;
    pmix_status_t status;

    status = rdp_client_store_lookup(&rdp_client.store, &req->proc, req->key,
                                     &req->q, &val);
    if (status == PMIX_ERR_NOT_FOUND
        && rdp_client.mode == RDP_CLIENT_IN_SERVER) {
        status = get_in_server(req, &val);
    }
    if (status == PMIX_ERR_NOT_FOUND && rdp_client.conn != NULL
        && rdp_client_store_should_fetch(&rdp_client.store, &req->proc,
                                         &req->q)) {
        rdp_log_warn(CLIENT,
                     "PMIx_Get of %s from the library's thread needs "
                     "the server; use PMIx_Get_nb",
                     req->key != NULL ? req->key : "all keys");
        return PMIX_ERR_WOULD_BLOCK;
    }
    if (status == PMIX_ERR_NOT_FOUND) {
        status = rdp_client_store_synthesize(&rdp_client.store, &req->proc,
                                             req->key, &val);
    }
    if (status == PMIX_SUCCESS) {
        *val_p = val;
    }
    return status;
}

/*
 * The fast path of PMIx_Get: what we hold answers on the caller's thread
 * under the store's lock, with no trip through the loop.  Returns
 * PMIX_ERR_NOT_FOUND when the loop must take over (a miss may still be
 * answered by the server or by the synthesized values).
 */
static pmix_status_t get_here(const pmix_proc_t *proc, const char *key,
                              const pmix_info_t *info, size_t ninfo,
                              pmix_value_t **val_p, int *static_p)
{
    rdp_get_quals_t q;
    pmix_proc_t p;
    pmix_status_t status;

    status = get_args_check(proc, key, info, ninfo, &q);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (q.refresh || rdp_client.uncommitted == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    *static_p = q.static_values;
    p         = (proc != NULL) ? *proc : rdp_rt.myproc;
    if (p.nspace[0] == '\0') {
        PMIX_LOAD_NSPACE(p.nspace, rdp_rt.myproc.nspace);
    }
    rdp_client_group_resolve(&p);
    return rdp_client_store_lookup(&rdp_client.store, &p, key, &q, val_p);
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                       const pmix_info_t info[], size_t ninfo,
                       pmix_value_t **val)
{
    get_req_t *req;
    rdp_client_sync_t sync;
    pmix_value_t *result = NULL;
    int static_values    = 0;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!rdp_loop_on_loop(rdp_rt.loop)) {
        status = get_here(proc, key, info, ninfo, &result, &static_values);
        if (status != PMIX_ERR_NOT_FOUND) {
            goto done;
        }
    }
    status = get_req_create(proc, key, info, ninfo, &req);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    static_values = req->q.static_values;
    if (rdp_loop_on_loop(rdp_rt.loop)) {
        status = get_on_loop(req, &result);
        get_req_free(req);
    } else {
        req->cbfunc = get_sync_cb;
        req->cbdata = &sync;
        req->give   = 1;
        sync.data   = NULL;
        rdp_wait_init(&sync.wait);
        status = rdp_loop_post(rdp_rt.loop, get_start, req);
        if (status == PMIX_SUCCESS) {
            status = rdp_wait_wait(&sync.wait);
            result = sync.data;
        } else {
            get_req_free(req);
        }
        rdp_wait_cleanup(&sync.wait);
    }
done:
    if (status != PMIX_SUCCESS) {
        if (result != NULL) {
            PMIX_VALUE_RELEASE(result);
        }
        return status;
    }
    if (result == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    if (static_values && *val != NULL) {
        /* the caller supplied the storage */
        **val = *result;
        rdp_free(result);
    } else {
        *val = result;
    }
    return PMIX_SUCCESS;
}
