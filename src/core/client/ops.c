/* ops.c - client requests the server answers: publish/lookup/unpublish,
 * spawn, connect/disconnect, log, job control, process monitoring (query:
 * query.c) */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/directive.h"
#include "core/common/runtime.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <rdpmix.h>

#include <string.h>

/*
 * Each call packs its request in the calling thread, posts it, and hands
 * the server's answer to the callback (the server answers
 * PMIX_ERR_NOT_SUPPORTED when its host lacks the upcall).  The blocking
 * forms wait on the non-blocking ones and refuse to run on the library's
 * own thread (PMIX_ERR_WOULD_BLOCK).
 */

/* ---------------------------------------------------------------- */
/* shared plumbing                                                  */

static void status_finish(rdp_client_op_t *op, pmix_status_t status,
                          rdp_rbuf_t *rb)
{
    pmix_op_cbfunc_t cbfunc = (pmix_op_cbfunc_t)op->cbfunc;

    if (cbfunc != NULL) {
        cbfunc(status, op->cbdata);
    }
}

static pmix_status_t pack_strs(rdp_buf_t *buf, char **strs)
{
    uint32_t n = 0;
    pmix_status_t status;

    while (strs != NULL && strs[n] != NULL) {
        if (rdp_client_check_key(strs[n]) != PMIX_SUCCESS) {
            return PMIX_ERR_BAD_PARAM;
        }
        n++;
    }
    status = rdp_pack_u32(buf, n);
    for (uint32_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_pack_string(buf, strs[i]);
    }
    return status;
}

/* Create an op (PMIX_ERR_INIT before Init), let @a pack fill its payload,
 * and post it. */
typedef pmix_status_t (*pack_fn_t)(rdp_buf_t *buf, const void *args);

static pmix_status_t op_submit(uint16_t cmd, rdp_client_op_finish_t finish,
                               void *cbfunc, void *cbdata, double timeout,
                               pack_fn_t pack, const void *args)
{
    rdp_client_op_t *op;
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    op = rdp_client_op_create(cmd, finish, cbfunc, cbdata);
    if (op == NULL) {
        return PMIX_ERR_NOMEM;
    }
    op->timeout = timeout;
    status      = pack(&op->payload, args);
    if (status != PMIX_SUCCESS) {
        rdp_client_op_free(op);
        return status;
    }
    return rdp_client_op_post(op);
}

/* Wait for a non-blocking call started with rdp_client_sync_op_cb-style
 * callbacks.  @a start returns the nb call's status. */
static pmix_status_t sync_wait(rdp_client_sync_t *sync, pmix_status_t started)
{
    pmix_status_t status = started;

    if (status == PMIX_SUCCESS) {
        status = rdp_wait_wait(&sync->wait);
    }
    rdp_wait_cleanup(&sync->wait);
    return status;
}

static pmix_status_t sync_begin(rdp_client_sync_t *sync)
{
    pmix_status_t status = rdp_client_may_block();

    if (status != PMIX_SUCCESS) {
        return status;
    }
    memset(sync, 0, sizeof(*sync));
    rdp_wait_init(&sync->wait);
    return PMIX_SUCCESS;
}

/* Results handed to a pmix_info_cbfunc_t stay ours until its release. */
typedef struct info_release {
    pmix_info_t *info;
    size_t ninfo;
} info_release_t;

static void info_release_fn(void *cbdata)
{
    info_release_t *rel = cbdata;

    rdp_info_array_free(rel->info, rel->ninfo);
    rdp_free(rel);
}

static void sync_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                         void *cbdata, pmix_release_cbfunc_t release_fn,
                         void *release_cbdata);

/* Results the library owns, for @a cbfunc: a blocking form's callback
 * (sync_info_cb, rdp_client_sync_info_cb) takes them as they are,
 * anything else gets them with a release function. */
static void info_give(pmix_info_cbfunc_t cbfunc, pmix_status_t status,
                      pmix_info_t *info, size_t ninfo, void *cbdata)
{
    rdp_client_sync_t *sync = cbdata;
    info_release_t *rel;

    if (cbfunc == sync_info_cb || cbfunc == rdp_client_sync_info_cb) {
        /* no copy: the blocking caller frees them (PMIX_INFO_FREE), so
         * none may be marked persistent, as a copy's are not */
        if (info == NULL || ninfo == 0) {
            rdp_info_array_free(info, ninfo);
            info  = NULL;
            ninfo = 0;
        }
        for (size_t i = 0; i < ninfo; i++) {
            info[i].flags &= ~(pmix_info_directives_t)PMIX_INFO_PERSISTENT;
        }
        sync->data  = info;
        sync->ndata = ninfo;
        rdp_wait_signal(&sync->wait, status);
        return;
    }
    rel = rdp_malloc(sizeof(*rel));
    if (rel == NULL) {
        rdp_info_array_free(info, ninfo);
        cbfunc(PMIX_ERR_NOMEM, NULL, 0, cbdata, NULL, NULL);
        return;
    }
    rel->info  = info;
    rel->ninfo = ninfo;
    cbfunc(status, info, ninfo, cbdata, info_release_fn, rel);
}

static void info_finish(rdp_client_op_t *op, pmix_status_t status,
                        rdp_rbuf_t *rb)
{
    pmix_info_cbfunc_t cbfunc = (pmix_info_cbfunc_t)op->cbfunc;
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    pmix_status_t rc;

    if (rb != NULL
        && (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS
            || status == PMIX_QUERY_PARTIAL_SUCCESS)) {
        rc = rdp_unpack_info_array(rb, &info, &ninfo);
        if (rc != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "malformed reply to command %u: %s",
                          (unsigned)op->cmd, rdp_status_name(rc));
            status = rc;
        }
    }
    if (cbfunc == NULL) {
        rdp_info_array_free(info, ninfo);
        return;
    }
    info_give(cbfunc, status, info, ninfo, op->cbdata);
}

/* Blocking form of an info callback: keep a copy of the results. */
static void sync_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                         void *cbdata, pmix_release_cbfunc_t release_fn,
                         void *release_cbdata)
{
    rdp_client_sync_t *sync = cbdata;
    pmix_info_t *copy       = NULL;

    if (ninfo > 0 && info != NULL) {
        pmix_status_t rc = rdp_info_array_copy(&copy, info, ninfo);

        if (rc != PMIX_SUCCESS) {
            status = rc;
            ninfo  = 0;
        }
    } else {
        ninfo = 0;
    }
    sync->data  = copy;
    sync->ndata = ninfo;
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
    rdp_wait_signal(&sync->wait, status);
}

static pmix_status_t sync_info_results(rdp_client_sync_t *sync,
                                       pmix_status_t status,
                                       pmix_info_t **results, size_t *nresults)
{
    if (results != NULL && nresults != NULL) {
        *results  = sync->data;
        *nresults = sync->ndata;
    } else {
        rdp_info_array_free(sync->data, sync->ndata);
    }
    return status;
}

/* sync_begin for a blocking call with optional results, cleared first */
static pmix_status_t sync_info_begin(rdp_client_sync_t *sync,
                                     pmix_info_t **results, size_t *nresults)
{
    if (results != NULL) {
        *results = NULL;
    }
    if (nresults != NULL) {
        *nresults = 0;
    }
    return sync_begin(sync);
}

/* ---------------------------------------------------------------- */
/* publish / lookup / unpublish                                     */

typedef struct info_args {
    const pmix_info_t *info;
    size_t ninfo;
    const pmix_info_t *info2;
    size_t ninfo2;
    const pmix_proc_t *procs;
    size_t nprocs;
    char **keys;
    const pmix_app_t *apps;
    size_t napps;
} op_args_t;

static pmix_status_t pack_infos(rdp_buf_t *buf, const void *a)
{
    const op_args_t *args = a;

    return rdp_pack_info_array(buf, args->info, args->ninfo);
}

pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    op_args_t args = {.info = info, .ninfo = ninfo};

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (info == NULL || ninfo == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_PUBLISH, status_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(info, ninfo), pack_infos, &args);
}

pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_begin(&sync);

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return sync_wait(
        &sync, PMIx_Publish_nb(info, ninfo, rdp_client_sync_op_cb, &sync));
}

static pmix_status_t pack_keys_infos(rdp_buf_t *buf, const void *a)
{
    const op_args_t *args = a;
    pmix_status_t status  = pack_strs(buf, args->keys);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, args->info, args->ninfo);
    }
    return status;
}

static void lookup_finish(rdp_client_op_t *op, pmix_status_t status,
                          rdp_rbuf_t *rb)
{
    pmix_lookup_cbfunc_t cbfunc = (pmix_lookup_cbfunc_t)op->cbfunc;
    pmix_pdata_t *pd            = NULL;
    size_t npd                  = 0;
    pmix_status_t rc;

    if (status == PMIX_SUCCESS && rb != NULL) {
        rc = rdp_unpack_pdata_array(rb, &pd, &npd);
        if (rc != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "malformed lookup reply: %s",
                          rdp_status_name(rc));
            status = rc;
        }
    }
    cbfunc(status, pd, npd, op->cbdata);
    /* destruct the entries and free the array */
    PMIX_PDATA_FREE(pd, npd);
}

pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[],
                             size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                             void *cbdata)
{
    op_args_t args = {.info = info, .ninfo = ninfo, .keys = keys};

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (keys == NULL || keys[0] == NULL || cbfunc == NULL
        || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_LOOKUP, lookup_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(info, ninfo), pack_keys_infos,
                     &args);
}

typedef struct lookup_sync {
    rdp_client_sync_t sync;
    pmix_pdata_t *data;
    size_t ndata;
} lookup_sync_t;

static void lookup_sync_cb(pmix_status_t status, pmix_pdata_t pdata[],
                           size_t npdata, void *cbdata)
{
    lookup_sync_t *ls = cbdata;

    for (size_t i = 0; status == PMIX_SUCCESS && i < npdata; i++) {
        for (size_t j = 0; j < ls->ndata; j++) {
            if (strncmp(ls->data[j].key, pdata[i].key, PMIX_MAX_KEYLEN) != 0) {
                continue;
            }
            ls->data[j].proc = pdata[i].proc;
            rdp_value_destruct(&ls->data[j].value);
            status = rdp_value_copy(&ls->data[j].value, &pdata[i].value);
            break;
        }
    }
    rdp_wait_signal(&ls->sync.wait, status);
}

pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata,
                          const pmix_info_t info[], size_t ninfo)
{
    lookup_sync_t ls;
    char **keys;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (data == NULL || ndata == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    keys = rdp_calloc(ndata + 1, sizeof(char *));
    if (keys == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ndata; i++) {
        keys[i] = data[i].key;
    }
    status = sync_begin(&ls.sync);
    if (status == PMIX_SUCCESS) {
        ls.data  = data;
        ls.ndata = ndata;
        status   = sync_wait(
              &ls.sync, PMIx_Lookup_nb(keys, info, ninfo, lookup_sync_cb, &ls));
    }
    rdp_free(keys);
    return status;
}

pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                void *cbdata)
{
    op_args_t args = {.info = info, .ninfo = ninfo, .keys = keys};

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* NULL keys: everything this process published */
    return op_submit(RDP_CMD_UNPUBLISH, status_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(info, ninfo), pack_keys_infos,
                     &args);
}

pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[],
                             size_t ninfo)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_begin(&sync);

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return sync_wait(&sync, PMIx_Unpublish_nb(keys, info, ninfo,
                                              rdp_client_sync_op_cb, &sync));
}

/* ---------------------------------------------------------------- */
/* spawn                                                            */

static pmix_status_t pack_spawn(rdp_buf_t *buf, const void *a)
{
    const op_args_t *args = a;
    pmix_status_t status  = rdp_pack_info_array(buf, args->info, args->ninfo);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_app_array(buf, args->apps, args->napps);
    }
    return status;
}

static void spawn_finish(rdp_client_op_t *op, pmix_status_t status,
                         rdp_rbuf_t *rb)
{
    pmix_spawn_cbfunc_t cbfunc = (pmix_spawn_cbfunc_t)op->cbfunc;
    pmix_nspace_t nspace       = {0};
    pmix_status_t rc;

    if (status == PMIX_SUCCESS && rb != NULL) {
        rc = rdp_unpack_string_into(rb, nspace, sizeof(nspace));
        if (rc != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "malformed spawn reply: %s",
                          rdp_status_name(rc));
            status = rc;
        }
    }
    if (cbfunc != NULL) {
        cbfunc(status, nspace, op->cbdata);
    }
}

pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                            const pmix_app_t apps[], size_t napps,
                            pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    op_args_t args = {
        .info = job_info, .ninfo = ninfo, .apps = apps, .napps = napps};

    RDP_CHECK_DIRECTIVES(job_info, ninfo);

    if (apps == NULL || napps == 0 || (job_info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_SPAWN, spawn_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(job_info, ninfo), pack_spawn,
                     &args);
}

typedef struct spawn_sync {
    rdp_client_sync_t sync;
    pmix_nspace_t nspace;
} spawn_sync_t;

static void spawn_sync_cb(pmix_status_t status, pmix_nspace_t nspace,
                          void *cbdata)
{
    spawn_sync_t *ss = cbdata;

    if (nspace != NULL) {
        PMIX_LOAD_NSPACE(ss->nspace, nspace);
    }
    rdp_wait_signal(&ss->sync.wait, status);
}

pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                         const pmix_app_t apps[], size_t napps,
                         pmix_nspace_t nspace)
{
    spawn_sync_t ss;
    pmix_status_t status = sync_begin(&ss.sync);

    RDP_CHECK_DIRECTIVES(job_info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    memset(ss.nspace, 0, sizeof(ss.nspace));
    status = sync_wait(&ss.sync, PMIx_Spawn_nb(job_info, ninfo, apps, napps,
                                               spawn_sync_cb, &ss));
    if (status == PMIX_SUCCESS && nspace != NULL) {
        PMIX_LOAD_NSPACE(nspace, ss.nspace);
    }
    return status;
}

/* ---------------------------------------------------------------- */
/* connect / disconnect                                             */

static pmix_status_t pack_procs_infos(rdp_buf_t *buf, const void *a)
{
    const op_args_t *args = a;
    pmix_status_t status  = rdp_pack_proc_array(buf, args->procs, args->nprocs);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, args->info, args->ninfo);
    }
    return status;
}

/* RFC0003's directives (rdpmix.h) and the type each must have. */
static const struct {
    const char *key;
    pmix_data_type_t type;
} connect_dirs[] = {
    {RDPMIX_CONNECT_ID, PMIX_STRING},
    {RDPMIX_CONNECT_NOTIFY_EACH, PMIX_BOOL},
    {RDPMIX_CONNECT_NOTIFY_REQ, PMIX_BOOL},
    {RDPMIX_CONNECT_OPTIONAL, PMIX_BOOL},
    {RDPMIX_CONNECT_EARLY_TERM_ALLOWED, PMIX_BOOL},
    {RDPMIX_CONNECT_XCHG_ONLY, PMIX_BOOL},
};

/* A directive of the wrong type (a flag may also be given without a
 * value, PMIX_UNDEF, meaning true) or an empty id is the caller's error:
 * refused here, before anything is sent. */
static bool connect_dir_ok(const pmix_info_t *in)
{
    for (size_t k = 0; k < sizeof(connect_dirs) / sizeof(connect_dirs[0]);
         k++) {
        pmix_data_type_t want = connect_dirs[k].type;

        if (!PMIX_CHECK_KEY(in, connect_dirs[k].key)) {
            continue;
        }
        if (want == PMIX_STRING) {
            return in->value.type == PMIX_STRING
                   && in->value.data.string != NULL
                   && in->value.data.string[0] != '\0';
        }
        return in->value.type == want || in->value.type == PMIX_UNDEF;
    }
    return true;
}

static pmix_status_t procs_op(uint16_t cmd, const pmix_proc_t procs[],
                              size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata)
{
    op_args_t args = {
        .info = info, .ninfo = ninfo, .procs = procs, .nprocs = nprocs};

    if (procs == NULL || nprocs == 0 || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (!connect_dir_ok(&info[i])) {
            rdp_log_error(CLIENT, "connect directive %s has the wrong type",
                          info[i].key);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    return op_submit(cmd, status_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(info, ninfo), pack_procs_infos,
                     &args);
}

pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return procs_op(RDP_CMD_CONNECT_PROCS, procs, nprocs, info, ninfo, cbfunc,
                    cbdata);
}

pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t info[], size_t ninfo)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_begin(&sync);

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return sync_wait(&sync, PMIx_Connect_nb(procs, nprocs, info, ninfo,
                                            rdp_client_sync_op_cb, &sync));
}

pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return procs_op(RDP_CMD_DISCONNECT_PROCS, procs, nprocs, info, ninfo,
                    cbfunc, cbdata);
}

pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_begin(&sync);

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return sync_wait(&sync, PMIx_Disconnect_nb(procs, nprocs, info, ninfo,
                                               rdp_client_sync_op_cb, &sync));
}

/* ---------------------------------------------------------------- */
/* log                                                              */

static pmix_status_t pack_two_infos(rdp_buf_t *buf, const void *a)
{
    const op_args_t *args = a;
    pmix_status_t status  = rdp_pack_info_array(buf, args->info, args->ninfo);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, args->info2, args->ninfo2);
    }
    return status;
}

pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                          const pmix_info_t directives[], size_t ndirs,
                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    op_args_t args = {
        .info = data, .ninfo = ndata, .info2 = directives, .ninfo2 = ndirs};

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    if (data == NULL || ndata == 0 || (directives == NULL && ndirs > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_LOG, status_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(directives, ndirs), pack_two_infos,
                     &args);
}

pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                       const pmix_info_t directives[], size_t ndirs)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_begin(&sync);

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return sync_wait(&sync, PMIx_Log_nb(data, ndata, directives, ndirs,
                                        rdp_client_sync_op_cb, &sync));
}

/* ---------------------------------------------------------------- */
/* job control                                                      */

pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    op_args_t args = {.info   = directives,
                      .ninfo  = ndirs,
                      .procs  = targets,
                      .nprocs = ntargets};

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    /* NULL targets: the requester's own job, as the server decides;
     * cleanup registrations (PMIX_REGISTER_CLEANUP...) travel like any
     * directive and the server handles them itself */
    if ((targets == NULL && ntargets > 0) || directives == NULL || ndirs == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_JOB_CONTROL, info_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(directives, ndirs),
                     pack_procs_infos, &args);
}

pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                               const pmix_info_t directives[], size_t ndirs,
                               pmix_info_t **results, size_t *nresults)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_info_begin(&sync, results, nresults);

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = sync_wait(&sync, PMIx_Job_control_nb(targets, ntargets, directives,
                                                  ndirs, sync_info_cb, &sync));
    return sync_info_results(&sync, status, results, nresults);
}

/* ---------------------------------------------------------------- */
/* process monitoring                                               */

typedef struct monitor_args {
    const pmix_info_t *monitor;
    pmix_status_t error;
    const pmix_info_t *directives;
    size_t ndirs;
} monitor_args_t;

static pmix_status_t pack_monitor(rdp_buf_t *buf, const void *a)
{
    const monitor_args_t *args = a;
    pmix_info_t monitor        = *args->monitor;
    pmix_status_t status;

    /* PMIX_MONITOR_HEARTBEAT and PMIX_SEND_HEARTBEAT carry a pointer
     * (NULL in practice) that means nothing to the server: send the key */
    if (monitor.value.type == PMIX_POINTER) {
        monitor.value.type = PMIX_UNDEF;
    }
    status = rdp_pack_info_array(buf, &monitor, 1);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_i32(buf, args->error);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, args->directives, args->ndirs);
    }
    return status;
}

/* cbfunc may be NULL (PMIx_Heartbeat): the answer is then dropped. */
pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor,
                                      pmix_status_t error,
                                      const pmix_info_t directives[],
                                      size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                      void *cbdata)
{
    monitor_args_t args = {.monitor    = monitor,
                           .error      = error,
                           .directives = directives,
                           .ndirs      = ndirs};

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    if (monitor == NULL || (directives == NULL && ndirs > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return op_submit(RDP_CMD_MONITOR, info_finish, (void *)cbfunc, cbdata,
                     rdp_client_info_timeout(directives, ndirs), pack_monitor,
                     &args);
}

pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor,
                                   pmix_status_t error,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults)
{
    rdp_client_sync_t sync;
    pmix_status_t status = sync_info_begin(&sync, results, nresults);

    RDP_CHECK_DIRECTIVES(directives, ndirs);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    status =
        sync_wait(&sync, PMIx_Process_monitor_nb(monitor, error, directives,
                                                 ndirs, sync_info_cb, &sync));
    return sync_info_results(&sync, status, results, nresults);
}

/* ---------------------------------------------------------------- */
/* shared with group.c                                              */

pmix_status_t rdp_client_sync_info_begin(rdp_client_sync_t *sync,
                                         pmix_info_t **results,
                                         size_t *nresults)
{
    return sync_info_begin(sync, results, nresults);
}

pmix_status_t rdp_client_sync_begin(rdp_client_sync_t *sync)
{
    return sync_begin(sync);
}

pmix_status_t rdp_client_sync_wait(rdp_client_sync_t *sync,
                                   pmix_status_t started)
{
    return sync_wait(sync, started);
}

void rdp_client_sync_info_cb(pmix_status_t status, pmix_info_t *info,
                             size_t ninfo, void *cbdata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata)
{
    sync_info_cb(status, info, ninfo, cbdata, release_fn, release_cbdata);
}

pmix_status_t rdp_client_sync_info_results(rdp_client_sync_t *sync,
                                           pmix_status_t status,
                                           pmix_info_t **results,
                                           size_t *nresults)
{
    return sync_info_results(sync, status, results, nresults);
}

void rdp_client_info_finish(rdp_client_op_t *op, pmix_status_t status,
                            rdp_rbuf_t *rb)
{
    info_finish(op, status, rb);
}

void rdp_client_info_cb_give(pmix_info_cbfunc_t cbfunc, pmix_status_t status,
                             pmix_info_t *info, size_t ninfo, void *cbdata)
{
    info_give(cbfunc, status, info, ninfo, cbdata);
}
