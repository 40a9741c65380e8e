/* query.c - the server's part of PMIx_Query_info: keys the library
 * answers itself, the rest through the host's query upcall, merged into
 * one answer for any requester (client or tool) */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/query.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <string.h>
#include <unistd.h>

/*
 * Attribute support and memory usage are answered here, by whichever
 * server the requester reaches: the library knows its own functions and
 * the host's registrations, and it knows its node's processes.  The other
 * keys go to the host's `query` upcall; a host without one gets the
 * library's own answers (namespaces, job size, proc tables of the ranks it
 * serves, no spawn or debugger support, no process sets).
 */

typedef struct srv_query {
    pmix_proc_t requester;
    pmix_query_t *queries; /* unpacked, owned */
    size_t nqueries;
    pmix_query_t *host_q; /* the host's keys: key arrays (copies) owned,
                             qualifiers borrowed from queries */
    size_t nhost_q;
    size_t asked;      /* keys of every query */
    size_t host_asked; /* keys handed to the host */
    pmix_info_t *own;  /* answers given here */
    size_t nown;
    rdp_srv_host_reply_t host; /* the host's answer, until packed */
    pmix_status_t error;       /* answering here failed (NOMEM) */
} srv_query_t;

static void srv_query_free(void *arg)
{
    srv_query_t *sq = arg;

    if (sq == NULL) {
        return;
    }
    rdp_srv_host_reply_release(&sq->host);
    for (size_t i = 0; sq->host_q != NULL && i < sq->nqueries; i++) {
        pmix_argv_free(sq->host_q[i].keys); /* copies of the keys */
    }
    rdp_free(sq->host_q);
    rdp_info_array_free(sq->own, sq->nown);
    PMIX_QUERY_FREE(sq->queries, sq->nqueries);
    rdp_free(sq);
}

/* hostop's drop_fn: the server is gone, the host's answer stays its own */
static void srv_query_drop_host(void *arg)
{
    srv_query_t *sq = arg;

    rdp_srv_host_reply_drop(&sq->host);
}

/* Keys this library answers even when the host has a query upcall. */
static bool answered_here(const char *key)
{
    return strcmp(key, PMIX_QUERY_ATTRIBUTE_SUPPORT) == 0
           || strcmp(key, PMIX_QUERY_MEMORY_USAGE) == 0;
}

/* ---- proc tables ---- */

static pmix_proc_state_t proc_state_of(const rdp_srv_client_t *c)
{
    if (c == NULL) {
        return PMIX_PROC_STATE_UNDEF;
    }
    switch (c->state) {
    case RDP_SRV_CLIENT_CONNECTED:
    case RDP_SRV_CLIENT_CONNECTING:
        return PMIX_PROC_STATE_CONNECTED;
    case RDP_SRV_CLIENT_FINALIZED:
        return PMIX_PROC_STATE_TERMINATED;
    case RDP_SRV_CLIENT_TERMINATED:
        return PMIX_PROC_STATE_TERM_WO_SYNC;
    default:
        return PMIX_PROC_STATE_LAUNCH_UNDERWAY;
    }
}

static const char *hostname_of(rdp_srv_nspace_t *ns, pmix_rank_t r)
{
    const pmix_value_t *h =
        rdp_kvs_peek(ns->info, RDP_SRV_KVS_JOB, r, PMIX_HOSTNAME);

    return h != NULL && h->type == PMIX_STRING ? h->data.string : NULL;
}

/* The rank passes the query's rank and hostname qualifiers. */
static bool rank_wanted(const pmix_query_t *q, rdp_srv_nspace_t *ns,
                        pmix_rank_t r)
{
    pmix_rank_t only = rdp_qry_rank(q);
    const char *host = rdp_qry_hostname(q);
    const char *h;

    if (only != PMIX_RANK_WILDCARD && only != r) {
        return false;
    }
    h = hostname_of(ns, r);
    return host == NULL || (h != NULL && rdp_srv_host_eq(h, host));
}

/* A data array of pmix_proc_info_t for @a ns (local ranks only if asked),
 * as far as this server knows them: no exit codes, pids of local ranks. */
static pmix_status_t proc_table(const pmix_query_t *q, rdp_srv_nspace_t *ns,
                                bool local_only, pmix_info_t *out,
                                const char *key)
{
    size_t cap            = local_only ? ns->nlocal : ns->size;
    pmix_data_array_t *da = NULL;
    pmix_proc_info_t *pi;
    size_t n = 0;

    PMIX_DATA_ARRAY_CREATE(da, cap, PMIX_PROC_INFO);
    if (da == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pi = da->array;
    for (size_t i = 0; i < cap; i++) {
        pmix_rank_t r       = local_only ? ns->local_ranks[i] : (pmix_rank_t)i;
        rdp_srv_client_t *c = rdp_hash_get_u64(&ns->clients, r);
        const char *h       = hostname_of(ns, r);

        if (!rank_wanted(q, ns, r)) {
            continue;
        }
        PMIX_LOAD_PROCID(&pi[n].proc, ns->name, r);
        pi[n].hostname = h != NULL ? rdp_strdup(h) : NULL;
        pi[n].pid      = c != NULL ? c->pid : 0;
        pi[n].state    = proc_state_of(c);
        n++;
    }
    da->size = n;
    PMIX_LOAD_KEY(out->key, key);
    out->value.type        = PMIX_DATA_ARRAY;
    out->value.data.darray = da;
    return PMIX_SUCCESS;
}

static pmix_status_t namespaces(pmix_info_t *out)
{
    rdp_srv_nspace_t *it;
    char **names = NULL;
    char *s;

    rdp_list_for_each(it, &rdp_srv.nspaces, link) {
        if (it->registered
            && pmix_argv_append_nosize(&names, it->name) != PMIX_SUCCESS) {
            pmix_argv_free(names);
            return PMIX_ERR_NOMEM;
        }
    }
    s = names != NULL ? pmix_argv_join(names, ',') : strdup("");
    pmix_argv_free(names);
    if (s == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(out, PMIX_QUERY_NAMESPACES, s, PMIX_STRING);
    free(s);
    return PMIX_SUCCESS;
}

/* ---- memory usage ---- */

typedef struct mem_stats {
    size_t n;
    float sum, min, max;
} mem_stats_t;

static void mem_stats_add(mem_stats_t *m, float mb)
{
    m->min = m->n == 0 || mb < m->min ? mb : m->min;
    m->max = m->n == 0 || mb > m->max ? mb : m->max;
    m->sum += mb;
    m->n++;
}

/* The resident memory of the local ranks of @a ns the query selects. */
static void client_memory(const pmix_query_t *q, rdp_srv_nspace_t *ns,
                          mem_stats_t *m)
{
    for (size_t i = 0; ns != NULL && i < ns->nlocal; i++) {
        pmix_rank_t r       = ns->local_ranks[i];
        rdp_srv_client_t *c = rdp_hash_get_u64(&ns->clients, r);
        float mb;

        if (c != NULL && c->pid > 0 && rank_wanted(q, ns, r)
            && rdp_qry_rss_mb(c->pid, &mb) == PMIX_SUCCESS) {
            mem_stats_add(m, mb);
        }
    }
}

/* PMIX_QUERY_MEMORY_USAGE on this node: an info array of the server
 * process's megabytes (PMIX_DAEMON_MEMORY) and, over the selected local
 * clients, their average (PMIX_CLIENT_AVG_MEMORY, unless only
 * PMIX_QUERY_REPORT_MINMAX was asked) and with PMIX_QUERY_REPORT_MINMAX
 * their least and most (PMIX_MIN_VALUE, PMIX_MAX_VALUE). */
static pmix_status_t memory_usage(const pmix_query_t *q, rdp_srv_nspace_t *ns,
                                  pmix_info_t *out)
{
    bool minmax    = rdp_qry_flag(q, PMIX_QUERY_REPORT_MINMAX);
    bool avg       = rdp_qry_flag(q, PMIX_QUERY_REPORT_AVG) || !minmax;
    mem_stats_t m  = {0};
    pmix_info_t *e = NULL;
    size_t n       = 0;
    float daemon, mean;
    pmix_data_array_t da;

    if (rdp_qry_rss_mb(getpid(), &daemon) != PMIX_SUCCESS) {
        return PMIX_ERR_NOT_FOUND;
    }
    client_memory(q, ns, &m);
    PMIX_INFO_CREATE(e, 4);
    if (e == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(&e[n++], PMIX_DAEMON_MEMORY, &daemon, PMIX_FLOAT);
    if (m.n > 0 && avg) {
        mean = m.sum / (float)m.n;
        PMIX_INFO_LOAD(&e[n++], PMIX_CLIENT_AVG_MEMORY, &mean, PMIX_FLOAT);
    }
    if (m.n > 0 && minmax) {
        PMIX_INFO_LOAD(&e[n++], PMIX_MIN_VALUE, &m.min, PMIX_FLOAT);
        PMIX_INFO_LOAD(&e[n++], PMIX_MAX_VALUE, &m.max, PMIX_FLOAT);
    }
    da = (pmix_data_array_t){.type = PMIX_INFO, .size = n, .array = e};
    PMIX_INFO_LOAD(out, PMIX_QUERY_MEMORY_USAGE, &da, PMIX_DATA_ARRAY);
    PMIX_INFO_FREE(e, 4);
    return out->value.type == PMIX_DATA_ARRAY ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/* ---- answering ---- */

/* Answer @a key of @a q into @a out: PMIX_ERR_NOT_FOUND when this server
 * cannot. */
static pmix_status_t answer_key(const srv_query_t *sq, const pmix_query_t *q,
                                const char *key, pmix_info_t *out)
{
    rdp_srv_nspace_t *ns =
        rdp_srv_nspace_find(rdp_query_nspace(q, sq->requester.nspace));
    bool known  = ns != NULL && ns->registered;
    size_t zero = 0;

    if (strcmp(key, PMIX_QUERY_ATTRIBUTE_SUPPORT) == 0) {
        return rdp_qry_attr_support(q, rdp_qry_attr_sides(q), out);
    } else if (strcmp(key, PMIX_QUERY_MEMORY_USAGE) == 0) {
        return memory_usage(q, known ? ns : NULL, out);
    } else if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0) {
        return namespaces(out);
    } else if (strcmp(key, PMIX_JOB_SIZE) == 0 && known) {
        PMIX_INFO_LOAD(out, key, &ns->size, PMIX_UINT32);
    } else if ((strcmp(key, PMIX_QUERY_PROC_TABLE) == 0
                || strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0)
               && known) {
        return proc_table(q, ns, strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0,
                          out, key);
    } else if (strcmp(key, PMIX_QUERY_SPAWN_SUPPORT) == 0
               && rdp_srv.host.spawn == NULL) {
        PMIX_INFO_LOAD(out, key, "", PMIX_STRING); /* none */
    } else if (strcmp(key, PMIX_QUERY_DEBUG_SUPPORT) == 0) {
        PMIX_INFO_LOAD(out, key, "", PMIX_STRING); /* no debugger support */
    } else if (strcmp(key, PMIX_QUERY_NUM_PSETS) == 0) {
        PMIX_INFO_LOAD(out, key, &zero, PMIX_SIZE);
    } else if (strcmp(key, PMIX_QUERY_PSET_NAMES) == 0) {
        PMIX_INFO_LOAD(out, key, "", PMIX_STRING);
    } else {
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
}

/* Answer here the keys that are ours (all of them without a host query
 * upcall); collect the others into host_q. */
static pmix_status_t split_and_answer(srv_query_t *sq, bool host_answers)
{
    pmix_status_t status;

    for (size_t i = 0; i < sq->nqueries; i++) {
        sq->asked += pmix_argv_count(sq->queries[i].keys);
    }
    sq->own    = rdp_calloc(sq->asked + 1, sizeof(*sq->own));
    sq->host_q = rdp_calloc(sq->nqueries + 1, sizeof(*sq->host_q));
    if (sq->own == NULL || sq->host_q == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < sq->nqueries; i++) {
        const pmix_query_t *q = &sq->queries[i];
        pmix_query_t *hq      = &sq->host_q[sq->nhost_q];

        for (char **k = q->keys; k != NULL && *k != NULL; k++) {
            if (host_answers && !answered_here(*k)) {
                status = pmix_argv_append_nosize(&hq->keys, *k);
                if (status != PMIX_SUCCESS) {
                    return status;
                }
                sq->host_asked++;
                continue;
            }
            status = answer_key(sq, q, *k, &sq->own[sq->nown]);
            if (status == PMIX_SUCCESS) {
                sq->nown++;
            } else if (status != PMIX_ERR_NOT_FOUND) {
                return status;
            }
        }
        if (hq->keys != NULL) {
            hq->qualifiers = q->qualifiers;
            hq->nqual      = q->nqual;
            sq->nhost_q++;
        }
    }
    return PMIX_SUCCESS;
}

/* How many of its keys the host answered. */
static size_t host_answered(const srv_query_t *sq, pmix_status_t hs)
{
    if (hs == PMIX_SUCCESS) {
        return sq->host_asked;
    }
    if (hs == PMIX_QUERY_PARTIAL_SUCCESS || hs == PMIX_ERR_PARTIAL_SUCCESS) {
        return sq->host.ndata < sq->host_asked ? sq->host.ndata
                                               : sq->host_asked;
    }
    return 0;
}

/* Loop thread: pack our answers and the host's into one reply. */
static void query_done(rdp_srv_hostop_t *op)
{
    srv_query_t *sq      = op->ctx;
    pmix_status_t hs     = sq->host_asked > 0 ? op->status : PMIX_SUCCESS;
    size_t nhost         = host_answered(sq, hs) > 0 ? sq->host.ndata : 0;
    size_t answered      = sq->nown + host_answered(sq, hs);
    pmix_status_t status = rdp_qry_status(sq->asked, answered);
    pmix_info_t *all;

    if (sq->error != PMIX_SUCCESS) {
        rdp_srv_host_reply_release(&sq->host);
        op->status = sq->error;
        return;
    }
    if (answered == 0 && sq->host_asked == sq->asked && hs != PMIX_SUCCESS
        && hs != PMIX_ERR_NOT_FOUND) {
        status = hs; /* the host's own failure, e.g. NOT_SUPPORTED */
    }
    if (answered > 0) {
        /* shallow copies, packed and dropped: the data stays its owners' */
        all = rdp_calloc(sq->nown + nhost + 1, sizeof(*all));
        if (all == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            memcpy(all, sq->own, sq->nown * sizeof(*all));
            if (nhost > 0) {
                memcpy(&all[sq->nown], sq->host.data, nhost * sizeof(*all));
            }
            if (rdp_pack_info_array(&op->reply, all, sq->nown + nhost)
                != PMIX_SUCCESS) {
                status = PMIX_ERR_NOMEM;
            }
            rdp_free(all);
        }
    }
    rdp_srv_host_reply_release(&sq->host);
    op->status = status;
}

/* Any thread, from inside the host's callback: keep and post. */
static void host_answer_cb(pmix_status_t status, pmix_info_t *info,
                           size_t ninfo, void *cbdata,
                           pmix_release_cbfunc_t release_fn,
                           void *release_cbdata)
{
    rdp_srv_hostop_t *op = cbdata;
    srv_query_t *sq      = op->ctx;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_QUERY, &sq->host, release_fn,
                                  release_cbdata);
    rdp_srv_host_reply_keep(&sq->host, status, info, ninfo, release_fn,
                            release_cbdata);
    rdp_srv_hostop_complete(op, status);
    RDP_SRV_HOST_CB_LEAVE();
}

static rdp_srv_hostop_t *query_op(rdp_srv_peer_t *peer, uint32_t tag,
                                  srv_query_t *sq)
{
    rdp_srv_hostop_t *op = rdp_srv_hostop_create(peer, RDP_CMD_QUERY_ACK, tag);

    if (op == NULL) {
        srv_query_free(sq);
        rdp_srv_reply_status(peer, RDP_CMD_QUERY_ACK, tag, PMIX_ERR_NOMEM);
        return NULL;
    }
    op->ctx         = sq;
    op->free_fn     = srv_query_free;
    op->drop_fn     = srv_query_drop_host;
    op->done_fn     = query_done;
    op->empty_reply = RDP_SRV_EMPTY_INFOS;
    return op;
}

/* ---- a tool's default job ---- */

/* The one job this server hosts, or NULL when it hosts none or several. */
static const char *only_job(void)
{
    rdp_srv_nspace_t *it;
    const char *only = NULL;

    rdp_list_for_each(it, &rdp_srv.nspaces, link) {
        if (!it->registered) {
            continue;
        }
        if (only != NULL) {
            return NULL;
        }
        only = it->name;
    }
    return only;
}

/* A tool is a job of its own, which no query is about: a query of a
 * tool without PMIX_NSPACE is about the one job this server hosts (the
 * rdpmixd case), and carries that as its qualifier, so the host's answers
 * agree with ours.  With several jobs, the tool must name one. */
static pmix_status_t default_tool_nspace(srv_query_t *sq)
{
    const char *job = only_job();

    for (size_t i = 0; job != NULL && i < sq->nqueries; i++) {
        pmix_query_t *q = &sq->queries[i];
        pmix_info_t *more;

        if (rdp_query_nspace(q, NULL) != NULL) {
            continue;
        }
        PMIX_INFO_CREATE(more, q->nqual + 1);
        if (more == NULL) {
            return PMIX_ERR_NOMEM;
        }
        for (size_t k = 0; k < q->nqual; k++) {
            if (PMIx_Info_xfer(&more[k], &q->qualifiers[k]) != PMIX_SUCCESS) {
                PMIX_INFO_FREE(more, q->nqual + 1);
                return PMIX_ERR_NOMEM;
            }
        }
        PMIX_INFO_LOAD(&more[q->nqual], PMIX_NSPACE, job, PMIX_STRING);
        PMIX_INFO_FREE(q->qualifiers, q->nqual);
        q->qualifiers = more;
        q->nqual++;
    }
    return PMIX_SUCCESS;
}

/* The queries of a request; a malformed one closes the connection. */
static srv_query_t *parse_query(rdp_srv_peer_t *peer, uint32_t tag,
                                rdp_rbuf_t *rb)
{
    srv_query_t *sq = rdp_calloc(1, sizeof(*sq));
    pmix_status_t status;

    if (sq == NULL) {
        rdp_srv_reply_status(peer, RDP_CMD_QUERY_ACK, tag, PMIX_ERR_NOMEM);
        return NULL;
    }
    if (peer->client != NULL) {
        sq->requester = peer->client->proc;
    }
    status = rdp_unpack_query_array(rb, &sq->queries, &sq->nqueries);
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && sq->nqueries == 0) {
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status == PMIX_SUCCESS && rdp_srv_tool_is(peer->client)) {
        status = default_tool_nspace(sq);
        if (status != PMIX_SUCCESS) {
            rdp_srv_reply_status(peer, RDP_CMD_QUERY_ACK, tag, status);
            srv_query_free(sq);
            return NULL;
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed query request from %s:%u: %s; "
                      "connection closed",
                      sq->requester.nspace, sq->requester.rank,
                      rdp_status_name(status));
        srv_query_free(sq);
        rdp_srv_peer_drop(peer, status);
        return NULL;
    }
    return sq;
}

void rdp_srv_handle_query(rdp_srv_peer_t *peer, uint32_t tag, rdp_rbuf_t *rb)
{
    srv_query_t *sq = parse_query(peer, tag, rb);
    bool has_host   = rdp_srv.host.query != NULL;
    rdp_srv_hostop_t *op;
    pmix_status_t status;

    if (sq == NULL || (op = query_op(peer, tag, sq)) == NULL) {
        return;
    }
    status = split_and_answer(sq, has_host);
    if (status != PMIX_SUCCESS || sq->nhost_q == 0) {
        sq->error = status;
        rdp_srv_hostop_complete(op, status);
        return;
    }
    rdp_srv_hostop_started(op,
                           rdp_srv.host.query(&sq->requester, sq->host_q,
                                              sq->nhost_q, host_answer_cb, op));
}
