/* query.c - PMIx_Query_info(_nb): the keys this library answers itself
 * (ABI versions, available servers, the client and tool side of attribute
 * support) and the server's answers to the rest, in one answer */
#include "config.h"
#include "core/client/client_int.h"
#include "core/common/runtime.h"
#include "core/util/alloc.h"
#include "core/util/query.h"
#include "core/util/value.h"
#include "core/wire/proto.h"

#include <string.h>

/*
 * A query may mix keys answered here with keys for the server (OpenPMIx's
 * abi_with_init asks the ABI versions and PMIX_QUERY_NAMESPACES at once):
 * the server gets only its keys, and the caller one answer, ours first.
 * Keys answered here work before PMIx_Init and without a server.  There
 * is no cache: every server key is asked afresh, so
 * PMIX_QUERY_REFRESH_CACHE changes nothing.
 */

/* The versions of the Standard's ABI this library offers, which a program
 * may ask for before PMIx_Init (Standard: Query): libpmix.so.2 carries
 * OpenPMIx 4.2.2's ABI, and OpenPMIx 4.2.2 reports "0.0" for both. */
#define STD_ABI_STABLE_VERSION      "0.0"
#define STD_ABI_PROVISIONAL_VERSION "0.0"

/* Key @a key of @a q is answered by this library. */
static bool answered_here(const pmix_query_t *q, const char *key)
{
    if (strcmp(key, PMIX_QUERY_STABLE_ABI_VERSION) == 0
        || strcmp(key, PMIX_QUERY_PROVISIONAL_ABI_VERSION) == 0
        || strcmp(key, PMIX_QUERY_AVAIL_SERVERS) == 0) {
        return true;
    }
    /* the server knows the server and host sides; we know ours */
    return strcmp(key, PMIX_QUERY_ATTRIBUTE_SUPPORT) == 0
           && (rdp_qry_attr_sides(q) & ~(RDP_QRY_CLIENT | RDP_QRY_TOOL)) == 0;
}

/* One more (zeroed) info at the end of *@a info_p. */
static pmix_info_t *append(pmix_info_t **info_p, size_t *n_p)
{
    pmix_info_t *more = rdp_realloc(*info_p, (*n_p + 1) * sizeof(*more));

    if (more == NULL) {
        return NULL;
    }
    *info_p = more;
    memset(&more[*n_p], 0, sizeof(more[*n_p]));
    return &more[(*n_p)++];
}

/* Append the answer to @a key of @a q (none when there is nothing to
 * say); *@a answered_p tells whether there was. */
static pmix_status_t answer_key(const pmix_query_t *q, const char *key,
                                pmix_info_t **info_p, size_t *n_p,
                                bool *answered_p)
{
    size_t before = *n_p;
    pmix_info_t *out;
    pmix_status_t status;

    if (strcmp(key, PMIX_QUERY_AVAIL_SERVERS) == 0) {
        status      = rdp_qry_servers_in(rdp_qry_servers_dir(), info_p, n_p);
        *answered_p = *n_p > before;
        return status;
    }
    out = append(info_p, n_p);
    if (out == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (strcmp(key, PMIX_QUERY_ATTRIBUTE_SUPPORT) == 0) {
        status = rdp_qry_attr_support(q, rdp_qry_attr_sides(q), out);
    } else {
        const char *v = strcmp(key, PMIX_QUERY_STABLE_ABI_VERSION) == 0
                            ? STD_ABI_STABLE_VERSION
                            : STD_ABI_PROVISIONAL_VERSION;

        PMIX_INFO_LOAD(out, key, v, PMIX_STRING);
        status = out->value.type == PMIX_STRING ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    *answered_p = status == PMIX_SUCCESS;
    if (status != PMIX_SUCCESS) {
        (*n_p)--; /* nothing loaded into it */
    }
    return status == PMIX_ERR_NOT_FOUND ? PMIX_SUCCESS : status;
}

/* What this library answers of a request, and how much it was asked. */
typedef struct local_part {
    pmix_info_t *info;
    size_t ninfo;
    size_t asked;    /* keys answered here or not at all */
    size_t answered; /* of those, with an answer */
    size_t remote;   /* keys for the server */
} local_part_t;

static void local_part_cleanup(local_part_t *lp)
{
    rdp_info_array_free(lp->info, lp->ninfo);
    *lp = (local_part_t){0};
}

static pmix_status_t answer_locally(const pmix_query_t queries[],
                                    size_t nqueries, local_part_t *lp)
{
    pmix_status_t status = PMIX_SUCCESS;

    *lp = (local_part_t){0};
    for (size_t i = 0; status == PMIX_SUCCESS && i < nqueries; i++) {
        for (char **k = queries[i].keys; status == PMIX_SUCCESS && *k != NULL;
             k++) {
            bool answered = false;

            if (!answered_here(&queries[i], *k)) {
                lp->remote++;
                continue;
            }
            lp->asked++;
            status =
                answer_key(&queries[i], *k, &lp->info, &lp->ninfo, &answered);
            lp->answered += answered;
        }
    }
    if (status != PMIX_SUCCESS) {
        local_part_cleanup(lp);
    }
    return status;
}

/* ---- delivery of answers given here only ---- */

typedef struct local_query {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    local_part_t part;
} local_query_t;

static void deliver_local_query(void *arg)
{
    local_query_t *lq = arg;

    /* the callback owns the answers now; released when it says */
    rdp_client_info_cb_give(lq->cbfunc, lq->status, lq->part.info,
                            lq->part.ninfo, lq->cbdata);
    rdp_free(lq);
}

/* Answer through @a cbfunc: from the loop thread once initialized; before
 * PMIx_Init there is no other thread, so at once. */
static pmix_status_t query_locally_nb(local_part_t *lp,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    local_query_t *lq = rdp_calloc(1, sizeof(*lq));

    if (lq == NULL) {
        local_part_cleanup(lp);
        return PMIX_ERR_NOMEM;
    }
    *lq = (local_query_t){.cbfunc = cbfunc,
                          .cbdata = cbdata,
                          .status = rdp_qry_status(lp->asked, lp->answered),
                          .part   = *lp};
    if (lq->status != PMIX_SUCCESS
        && lq->status != PMIX_QUERY_PARTIAL_SUCCESS) {
        local_part_cleanup(&lq->part);
    }
    if (!rdp_client_active()
        || rdp_loop_post(rdp_rt.loop, deliver_local_query, lq)
               != PMIX_SUCCESS) {
        deliver_local_query(lq);
    }
    return PMIX_SUCCESS;
}

/* ---- queries with server keys ---- */

typedef struct mixed_query {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    local_part_t part;
} mixed_query_t;

/* How many of its keys the server answered, by its status. */
static size_t server_answered(const mixed_query_t *mq, pmix_status_t status,
                              size_t ninfo)
{
    if (status == PMIX_SUCCESS) {
        return mq->part.remote;
    }
    if (status == PMIX_QUERY_PARTIAL_SUCCESS
        || status == PMIX_ERR_PARTIAL_SUCCESS) {
        return ninfo < mq->part.remote ? ninfo : mq->part.remote;
    }
    return 0;
}

/* Our answers first, then copies of the server's. */
static pmix_status_t join_answers(mixed_query_t *mq, const pmix_info_t *info,
                                  size_t nserver, pmix_info_t **all_p,
                                  size_t *n_p)
{
    size_t n         = mq->part.ninfo;
    pmix_info_t *all = rdp_calloc(n + nserver + 1, sizeof(*all));

    if (all == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(all, mq->part.info, n * sizeof(*all)); /* moved */
    rdp_free(mq->part.info);
    mq->part.info  = NULL;
    mq->part.ninfo = 0;
    for (size_t i = 0; i < nserver; i++, n++) {
        if (rdp_info_copy(&all[n], &info[i]) != PMIX_SUCCESS) {
            rdp_info_array_free(all, n);
            return PMIX_ERR_NOMEM;
        }
    }
    *all_p = all;
    *n_p   = n;
    return PMIX_SUCCESS;
}

/* The server's part is in: hand the caller both parts with the status of
 * the whole. */
static void mixed_query_done(pmix_status_t status, pmix_info_t *info,
                             size_t ninfo, void *cbdata,
                             pmix_release_cbfunc_t release_fn,
                             void *release_cbdata)
{
    mixed_query_t *mq  = cbdata;
    size_t from_server = server_answered(mq, status, ninfo);
    size_t answered    = mq->part.answered + from_server;
    pmix_status_t total =
        rdp_qry_status(mq->part.asked + mq->part.remote, answered);
    pmix_info_t *all = NULL;
    size_t nall      = 0;

    if (answered == 0 && mq->part.asked == 0 && status != PMIX_SUCCESS
        && status != PMIX_ERR_NOT_FOUND) {
        total = status; /* the server's failure, e.g. unreachable */
    }
    if (answered > 0
        && join_answers(mq, info, from_server > 0 ? ninfo : 0, &all, &nall)
               != PMIX_SUCCESS) {
        total = PMIX_ERR_NOMEM;
    }
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
    rdp_client_info_cb_give(mq->cbfunc, total, all, nall, mq->cbdata);
    local_part_cleanup(&mq->part);
    rdp_free(mq);
}

static void free_server_queries(pmix_query_t *q, size_t n);

/* The queries' server keys only (key arrays borrowed from @a queries;
 * free with free_server_queries). */
static pmix_query_t *server_queries(const pmix_query_t queries[],
                                    size_t nqueries, size_t *n_p)
{
    pmix_query_t *out = rdp_calloc(nqueries, sizeof(*out));
    size_t n          = 0;

    for (size_t i = 0; out != NULL && i < nqueries; i++) {
        size_t k = 0;

        out[n] = queries[i];
        out[n].keys =
            rdp_calloc(pmix_argv_count(queries[i].keys) + 1, sizeof(char *));
        if (out[n].keys == NULL) {
            free_server_queries(out, n);
            *n_p = 0;
            return NULL;
        }
        for (char **key = queries[i].keys; *key != NULL; key++) {
            if (!answered_here(&queries[i], *key)) {
                out[n].keys[k++] = *key;
            }
        }
        if (k == 0) {
            rdp_free(out[n].keys);
            continue;
        }
        n++;
    }
    *n_p = n;
    return out;
}

static void free_server_queries(pmix_query_t *q, size_t n)
{
    for (size_t i = 0; q != NULL && i < n; i++) {
        rdp_free(q[i].keys);
    }
    rdp_free(q);
}

/* Send @a queries to the server; its answer goes to @a cbfunc. */
static pmix_status_t ask_server(const pmix_query_t queries[], size_t nqueries,
                                pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    rdp_client_op_t *op;
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    op = rdp_client_op_create(RDP_CMD_QUERY, rdp_client_info_finish,
                              (void *)cbfunc, cbdata);
    if (op == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = rdp_pack_query_array(&op->payload, queries, nqueries);
    if (status != PMIX_SUCCESS) {
        rdp_client_op_free(op);
        return status;
    }
    return rdp_client_op_post(op);
}

static pmix_status_t query_mixed_nb(const pmix_query_t queries[],
                                    size_t nqueries, local_part_t *lp,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    mixed_query_t *mq = rdp_calloc(1, sizeof(*mq));
    size_t nremote    = 0;
    pmix_query_t *remote;
    pmix_status_t status;

    if (mq == NULL) {
        local_part_cleanup(lp);
        return PMIX_ERR_NOMEM;
    }
    *mq    = (mixed_query_t){.cbfunc = cbfunc, .cbdata = cbdata, .part = *lp};
    remote = server_queries(queries, nqueries, &nremote);
    status = remote == NULL ? PMIX_ERR_NOMEM
                            : ask_server(remote, nremote, mixed_query_done, mq);
    free_server_queries(remote, nremote);
    if (status != PMIX_SUCCESS) {
        local_part_cleanup(&mq->part);
        rdp_free(mq);
    }
    return status;
}

static pmix_status_t check_queries(const pmix_query_t queries[],
                                   size_t nqueries)
{
    if (queries == NULL || nqueries == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < nqueries; i++) {
        if (queries[i].keys == NULL || queries[i].keys[0] == NULL
            || (queries[i].qualifiers == NULL && queries[i].nqual > 0)) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    local_part_t lp;
    pmix_status_t status;

    if (cbfunc == NULL || check_queries(queries, nqueries) != PMIX_SUCCESS) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = answer_locally(queries, nqueries, &lp);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (lp.remote == 0) {
        return query_locally_nb(&lp, cbfunc, cbdata);
    }
    if (lp.asked == 0) {
        return ask_server(queries, nqueries, cbfunc, cbdata);
    }
    return query_mixed_nb(queries, nqueries, &lp, cbfunc, cbdata);
}

/* Every key of every query is answered here, without a server. */
static bool queries_are_local(const pmix_query_t queries[], size_t nqueries)
{
    for (size_t i = 0; i < nqueries; i++) {
        for (char **k = queries[i].keys; *k != NULL; k++) {
            if (!answered_here(&queries[i], *k)) {
                return false;
            }
        }
    }
    return true;
}

pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                              pmix_info_t **results, size_t *nresults)
{
    rdp_client_sync_t sync;
    local_part_t lp;
    pmix_status_t status;

    if (results == NULL || nresults == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    *results  = NULL;
    *nresults = 0;
    if (check_queries(queries, nqueries) == PMIX_SUCCESS
        && queries_are_local(queries, nqueries)) {
        /* also before PMIx_Init and after PMIx_Finalize */
        status = answer_locally(queries, nqueries, &lp);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        status = rdp_qry_status(lp.asked, lp.answered);
        if (status == PMIX_ERR_NOT_FOUND) {
            local_part_cleanup(&lp);
        }
        *results  = lp.info;
        *nresults = lp.ninfo;
        return status;
    }
    status = rdp_client_sync_begin(&sync);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_client_sync_wait(
        &sync,
        PMIx_Query_info_nb(queries, nqueries, rdp_client_sync_info_cb, &sync));
    return rdp_client_sync_info_results(&sync, status, results, nresults);
}
