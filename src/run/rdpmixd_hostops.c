/* rdpmixd_hostops.c - rdpmixd's log, job_control and query upcalls */
#include "config.h"
#include "run/rdpmixd_int.h"

#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/logchan.h"
#include "core/util/query.h"
#include "core/util/value.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The server calls these upcalls on its own thread; each posts its
 * request to the daemon's loop and answers from there.  What the server
 * passes (data, directives, targets, queries) stays valid until we call
 * its callback, so the requests borrow it.
 *
 * Job control and queries about the whole job go through rdpmix-run: a
 * JCTRL request comes back to every daemon (the requester too, which then
 * answers: its own order is delivered, the others' are on their way), and
 * PROCS_REQ gets the launcher's table of every rank (pid, state, exit
 * code), which it keeps from the daemons' launch and exit reports.
 */

static daemon_t *const dm = &rdp_run_dmn;

enum req_kind {
    REQ_LOG,
    REQ_JCTRL,
    REQ_QUERY
};

typedef struct hostreq {
    rdp_list_t link; /* on pending while it waits for rdpmix-run */
    enum req_kind kind;
    uint32_t reqid;
    pmix_proc_t source;
    const pmix_info_t *data; /* log data, job-control directives */
    size_t ndata;
    const pmix_info_t *dirs; /* log directives */
    size_t ndirs;
    pmix_query_t *queries;
    size_t nqueries;
    rdp_ctl_jctrl_t jctrl; /* what to do (ranks owned) */
    pmix_op_cbfunc_t op_cb;
    pmix_info_cbfunc_t info_cb;
    void *cbdata;
} hostreq_t;

static rdp_list_t pending  = RDP_LIST_INIT(pending);
static uint32_t next_reqid = 1;
/* SIGKILL for ranks terminated by request that outlive the grace */
static rdp_timer_t *jctrl_grace_timer;

static hostreq_t *req_create(enum req_kind kind, const pmix_proc_t *source,
                             void *cbdata)
{
    hostreq_t *r = rdp_calloc(1, sizeof(*r));

    if (r == NULL) {
        return NULL;
    }
    r->kind   = kind;
    r->reqid  = next_reqid++; /* the server calls upcalls on one thread */
    r->cbdata = cbdata;
    if (source != NULL) {
        r->source = *source;
    }
    rdp_list_init(&r->link);
    return r;
}

static void req_destroy(hostreq_t *r)
{
    rdp_list_del(&r->link);
    rdp_free(r->jctrl.ranks);
    rdp_free(r);
}

static void req_run(void *arg);

static pmix_status_t req_post(hostreq_t *r)
{
    if (rdp_loop_post(dm->loop, req_run, r) != PMIX_SUCCESS) {
        req_destroy(r);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static hostreq_t *pending_take(enum req_kind kind, uint32_t reqid)
{
    hostreq_t *r;

    rdp_list_for_each(r, &pending, link) {
        if (r->kind == kind && r->reqid == reqid) {
            rdp_list_del(&r->link);
            rdp_list_init(&r->link);
            return r;
        }
    }
    return NULL;
}

static void info_answer(hostreq_t *r, pmix_status_t status, pmix_info_t *info,
                        size_t ninfo, pmix_release_cbfunc_t release);

static bool launcher_reachable(void)
{
    return dm->chan != NULL && rdp_run_chan_is_open(dm->chan);
}

/* ------------------------------------------------------------------ */
/* log                                                                  */

static pmix_status_t send_output(const hostreq_t *r, int channel,
                                 const char *msg)
{
    size_t len = strlen(msg);
    bool nl    = len == 0 || msg[len - 1] != '\n';
    rdp_buf_t buf;
    pmix_status_t status;
    char *line;

    if (!launcher_reachable() || !dm->have_job
        || strncmp(r->source.nspace, dm->nspace, PMIX_MAX_NSLEN) != 0
        || r->source.rank >= dm->launch.job_size) {
        /* not one of the job's ranks, or nobody to forward to: our own
         * stdout/stderr (which also end up in rdpmix-run's stderr) */
        return rdp_logchan_write_line(channel == RDP_CTL_STDOUT ? 1 : 2, msg);
    }
    line = rdp_malloc(len + 1);
    if (line == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(line, msg, len);
    if (nl) {
        line[len++] = '\n'; /* a line of its own, as --tag-output needs */
    }
    rdp_buf_init(&buf);
    /* as the rank's own output, so --tag-output prefixes it */
    status = rdp_ctl_io_pack(&buf, r->source.rank, (uint8_t)channel, line, len);
    rdp_free(line);
    if (status == PMIX_SUCCESS) {
        rdp_run_dmn_send(RDP_CTL_IO, &buf);
    }
    rdp_buf_cleanup(&buf);
    return status;
}

typedef struct log_ctx {
    const hostreq_t *req;
    int priority;
} log_ctx_t;

/* The job's gateway is rdpmix-run: it writes its host's syslog. */
static pmix_status_t send_global_syslog(const log_ctx_t *ctx, const char *msg)
{
    rdp_buf_t buf;
    pmix_status_t status;
    char *full;

    if (!launcher_reachable()) {
        return PMIX_ERR_UNREACH;
    }
    if (asprintf(&full, "[%s:%u] %s", ctx->req->source.nspace,
                 ctx->req->source.rank, msg)
        < 0) {
        return PMIX_ERR_NOMEM;
    }
    rdp_buf_init(&buf);
    status = rdp_ctl_syslog_pack(&buf, ctx->priority, full);
    if (status == PMIX_SUCCESS) {
        rdp_run_dmn_send(RDP_CTL_SYSLOG, &buf);
    }
    rdp_buf_cleanup(&buf);
    free(full);
    return status;
}

static pmix_status_t log_write(enum rdp_logchan chan, const char *msg,
                               void *arg)
{
    const log_ctx_t *ctx = arg;

    switch (chan) {
    case RDP_LOGCHAN_STDOUT:
        return send_output(ctx->req, RDP_CTL_STDOUT, msg);
    case RDP_LOGCHAN_STDERR:
        return send_output(ctx->req, RDP_CTL_STDERR, msg);
    case RDP_LOGCHAN_LOCAL_SYSLOG:
        return rdp_logchan_syslog(ctx->priority, "rdpmixd", &ctx->req->source,
                                  msg);
    case RDP_LOGCHAN_GLOBAL_SYSLOG:
        return send_global_syslog(ctx, msg);
    default:
        return PMIX_ERR_NOT_SUPPORTED;
    }
}

static void log_run(hostreq_t *r)
{
    rdp_logchan_opts_t opts;
    log_ctx_t ctx = {.req = r};
    pmix_status_t status;

    rdp_logchan_opts_parse(r->dirs, r->ndirs, &opts);
    ctx.priority = opts.priority;
    status = rdp_logchan_dispatch(r->data, r->ndata, &opts, log_write, &ctx);
    if (r->op_cb != NULL) {
        r->op_cb(status, r->cbdata);
    }
    req_destroy(r);
}

void rdp_run_dmn_host_log(const pmix_proc_t *client, const pmix_info_t data[],
                          size_t ndata, const pmix_info_t directives[],
                          size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    hostreq_t *r = req_create(REQ_LOG, client, cbdata);

    if (r == NULL) {
        if (cbfunc != NULL) {
            cbfunc(PMIX_ERR_NOMEM, cbdata);
        }
        return;
    }
    r->data  = data;
    r->ndata = ndata;
    r->dirs  = directives;
    r->ndirs = ndirs;
    r->op_cb = cbfunc;
    if (req_post(r) != PMIX_SUCCESS && cbfunc != NULL) {
        cbfunc(PMIX_ERR_NOMEM, cbdata);
    }
}

/* ------------------------------------------------------------------ */
/* job control                                                          */

static void jctrl_grace_cb(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_proc_t *rp = &dm->ranks[i];

        if (rp->by_request && rp->state == RANK_RUNNING && rp->pid > 0) {
            kill(-rp->pid, SIGKILL);
        }
    }
}

static bool jctrl_targets(const rdp_ctl_jctrl_t *m, pmix_rank_t rank)
{
    if (m->nranks == 0) {
        return true;
    }
    for (uint32_t i = 0; i < m->nranks; i++) {
        if (m->ranks[i] == rank) {
            return true;
        }
    }
    return false;
}

static void signal_rank(rank_proc_t *rp, int signo)
{
    /* the rank's process group: what it started gets it too */
    if (kill(-rp->pid, signo) != 0 && errno == ESRCH) {
        kill(rp->pid, signo);
    }
}

/* Apply a job-control order to the local ranks it names. */
static void jctrl_apply(const rdp_ctl_jctrl_t *m)
{
    bool termed = false;

    for (uint32_t i = 0; i < dm->nlocal; i++) {
        rank_proc_t *rp = &dm->ranks[i];

        if (rp->state != RANK_RUNNING || rp->pid <= 0
            || !jctrl_targets(m, rp->proc.rank)) {
            continue;
        }
        switch (m->action) {
        case RDP_CTL_JCTRL_SIGNAL:
            signal_rank(rp, m->signo);
            break;
        case RDP_CTL_JCTRL_TERMINATE:
            rp->by_request = 1;
            rp->termed     = 1; /* the job's end must not SIGTERM it again */
            signal_rank(rp, SIGTERM);
            signal_rank(rp, SIGCONT);
            termed = true;
            break;
        default:
            rp->by_request = 1;
            signal_rank(rp, SIGKILL);
            break;
        }
    }
    if (termed && jctrl_grace_timer != NULL) {
        rdp_timer_start(jctrl_grace_timer, dm->grace);
    }
}

static void jctrl_do(const void *payload, size_t len)
{
    rdp_ctl_jctrl_t m;
    hostreq_t *r;

    if (rdp_ctl_jctrl_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed job-control order");
        return;
    }
    jctrl_apply(&m);
    if (m.origin == dm->node_id
        && (r = pending_take(REQ_JCTRL, m.reqid)) != NULL) {
        info_answer(r, PMIX_SUCCESS, NULL, 0, NULL);
    }
    rdp_free(m.ranks);
}

static void jctrl_run(hostreq_t *r)
{
    rdp_buf_t buf;
    pmix_status_t status;

    if (!launcher_reachable()) {
        info_answer(r, PMIX_ERR_UNREACH, NULL, 0, NULL);
        return;
    }
    r->jctrl.origin = dm->node_id;
    r->jctrl.reqid  = r->reqid;
    rdp_buf_init(&buf);
    status = rdp_ctl_jctrl_pack(&buf, &r->jctrl);
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        info_answer(r, status, NULL, 0, NULL);
        return;
    }
    rdp_list_push_back(&pending, &r->link);
    rdp_run_dmn_send(RDP_CTL_JCTRL, &buf);
    rdp_buf_cleanup(&buf);
}

/* The one action the directives ask for; cleanup registration is the
 * server's (it passes it along with other directives), other keys that
 * are no job-control directive are ignored.  An application's
 * declarations that it may be preempted or checkpointed are noted
 * (PMIX_OPERATION_SUCCEEDED when that is all): we never preempt nor
 * checkpoint, so there is nothing to do with them. */
static pmix_status_t jctrl_parse(const pmix_info_t *dirs, size_t ndirs,
                                 rdp_ctl_jctrl_t *m)
{
    int nactions = 0, ndecls = 0;

    for (size_t i = 0; i < ndirs; i++) {
        const pmix_info_t *d = &dirs[i];

        if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_SIGNAL)) {
            if (d->value.type != PMIX_INT || d->value.data.integer <= 0
                || d->value.data.integer > 64) {
                return PMIX_ERR_BAD_PARAM;
            }
            m->action = RDP_CTL_JCTRL_SIGNAL;
            m->signo  = d->value.data.integer;
            nactions++;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_TERMINATE)
                   || PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_KILL)) {
            if (!PMIX_INFO_TRUE(d)) {
                continue;
            }
            m->action = PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_KILL)
                            ? RDP_CTL_JCTRL_KILL
                            : RDP_CTL_JCTRL_TERMINATE;
            nactions++;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_PREEMPTIBLE)
                   || PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_CHECKPOINT_METHOD)) {
            ndecls++;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_ID)) {
            continue; /* a name for the request: nothing to do */
        } else if (strncmp(d->key, "pmix.jctrl.", 11) == 0) {
            return PMIX_ERR_NOT_SUPPORTED; /* pause, checkpoint, ... */
        }
    }
    if (nactions == 0) {
        return ndecls > 0 ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_NOT_SUPPORTED;
    }
    return nactions == 1 ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

/* The ranks of our job that @a targets name (none: the requester's
 * job); a WILDCARD or no targets give nranks 0 (every rank). */
static pmix_status_t jctrl_ranks(const pmix_proc_t *requester,
                                 const pmix_proc_t *targets, size_t ntargets,
                                 rdp_ctl_jctrl_t *m)
{
    if (!dm->have_job) {
        return PMIX_ERR_NOT_FOUND;
    }
    if (targets == NULL || ntargets == 0) {
        return strncmp(requester->nspace, dm->nspace, PMIX_MAX_NSLEN) == 0
                   ? PMIX_SUCCESS
                   : PMIX_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < ntargets; i++) {
        if (strncmp(targets[i].nspace, dm->nspace, PMIX_MAX_NSLEN) != 0) {
            return PMIX_ERR_NOT_FOUND;
        }
        if (targets[i].rank == PMIX_RANK_WILDCARD) {
            rdp_free(m->ranks);
            m->ranks  = NULL;
            m->nranks = 0;
            return PMIX_SUCCESS;
        }
        if (targets[i].rank >= dm->launch.job_size) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    m->ranks = rdp_calloc(ntargets, sizeof(*m->ranks));
    if (m->ranks == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ntargets; i++) {
        m->ranks[m->nranks++] = targets[i].rank;
    }
    return PMIX_SUCCESS;
}

pmix_status_t
rdp_run_dmn_host_job_control(const pmix_proc_t *requestor,
                             const pmix_proc_t targets[], size_t ntargets,
                             const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    hostreq_t *r = req_create(REQ_JCTRL, requestor, cbdata);
    pmix_status_t status;

    if (r == NULL) {
        return PMIX_ERR_NOMEM;
    }
    r->info_cb = cbfunc;
    status     = jctrl_parse(directives, ndirs, &r->jctrl);
    if (status == PMIX_SUCCESS) {
        /* dm->have_job and the map are set before the server runs */
        status = jctrl_ranks(requestor, targets, ntargets, &r->jctrl);
    }
    if (status != PMIX_SUCCESS) {
        req_destroy(r);
        return status;
    }
    return req_post(r);
}

/* ------------------------------------------------------------------ */
/* query                                                                */

/* Keys whose answer needs the launcher's table of every rank. */
static bool needs_launcher(const pmix_query_t *q, size_t nq)
{
    for (size_t i = 0; i < nq; i++) {
        for (size_t k = 0; q[i].keys != NULL && q[i].keys[k] != NULL; k++) {
            if (strcmp(q[i].keys[k], PMIX_QUERY_PROC_TABLE) == 0
                || strcmp(q[i].keys[k], PMIX_QUERY_LOCAL_PROC_TABLE) == 0
                || strcmp(q[i].keys[k], PMIX_QUERY_JOB_STATUS) == 0) {
                return true;
            }
        }
    }
    return false;
}

static const char *node_of_rank(pmix_rank_t rank, uint32_t *node_p)
{
    for (uint32_t n = 0; n < dm->launch.nnodes; n++) {
        const rdp_ctl_node_t *node = &dm->launch.nodes[n];

        for (uint32_t i = 0; i < node->nranks; i++) {
            if (node->ranks[i] == rank) {
                *node_p = n;
                return node->name;
            }
        }
    }
    return NULL;
}

/* PMIX_QUERY_(LOCAL_)PROC_TABLE: pmix_proc_info_t of every rank (of this
 * node's), from the launcher's table @a t. */
static pmix_status_t proc_table(const pmix_query_t *q, const rdp_ctl_procs_t *t,
                                bool local_only, pmix_info_t *out,
                                const char *key)
{
    pmix_rank_t only  = rdp_qry_rank(q);
    const char *where = rdp_qry_hostname(q);

    pmix_proc_info_t *pi;
    pmix_data_array_t da = {.type = PMIX_PROC_INFO};
    size_t n             = 0;

    pi = rdp_calloc(t->n + 1, sizeof(*pi));
    if (pi == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t r = 0; r < t->n; r++) {
        uint32_t node    = UINT32_MAX;
        const char *host = node_of_rank(r, &node);

        if ((local_only && node != dm->node_id)
            || (only != PMIX_RANK_WILDCARD && only != r)
            || (where != NULL && (host == NULL || strcmp(host, where) != 0))) {
            continue; /* not on this node, or not the rank or host asked */
        }
        PMIX_LOAD_PROCID(&pi[n].proc, dm->nspace, r);
        pi[n].hostname        = host != NULL ? (char *)host : NULL;
        pi[n].executable_name = dm->launch.argv[0];
        pi[n].pid             = (pid_t)t->ents[r].pid;
        pi[n].exit_code       = t->ents[r].exit_code;
        pi[n].state           = t->ents[r].state;
        n++;
    }
    da.size  = n;
    da.array = pi;
    /* PMIX_INFO_LOAD deep-copies: the strings above are borrowed */
    PMIX_INFO_LOAD(out, key, &da, PMIX_DATA_ARRAY);
    rdp_free(pi);
    return out->value.type == PMIX_DATA_ARRAY ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

static char *command_line(void)
{
    size_t len = 1;
    char *s;

    for (char **a = dm->launch.argv; *a != NULL; a++) {
        len += strlen(*a) + 1;
    }
    s = rdp_calloc(1, len);
    for (char **a = dm->launch.argv; s != NULL && *a != NULL; a++) {
        if (a != dm->launch.argv) {
            strcat(s, " ");
        }
        strcat(s, *a);
    }
    return s;
}

/* PMIX_QUERY_NAMESPACE_INFO: an array of pmix_info_t, one per namespace
 * (ours), each a PMIX_JOB_INFO_ARRAY whose value is an array of pmix_info_t
 * holding PMIX_NSPACE and PMIX_CMD_LINE, both strings.  That is the shape
 * PRRTE answers and OpenPMIx's examples/tool.c reads (it prints every
 * member of a job as a string); docs/design.md. */
static pmix_status_t nspace_info(pmix_info_t *out)
{
    pmix_info_t entry[2], job;
    pmix_data_array_t inner = {.type = PMIX_INFO, .size = 2, .array = entry};
    pmix_data_array_t outer = {.type = PMIX_INFO, .size = 1, .array = &job};
    char *cmd = command_line();

    if (cmd == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(&entry[0], PMIX_NSPACE, dm->nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&entry[1], PMIX_CMD_LINE, cmd, PMIX_STRING);
    /* PMIX_INFO_LOAD deep-copies at each level */
    PMIX_INFO_LOAD(&job, PMIX_JOB_INFO_ARRAY, &inner, PMIX_DATA_ARRAY);
    if (job.value.type == PMIX_DATA_ARRAY) {
        PMIX_INFO_LOAD(out, PMIX_QUERY_NAMESPACE_INFO, &outer, PMIX_DATA_ARRAY);
    }
    PMIX_INFO_DESTRUCT(&job);
    PMIX_INFO_DESTRUCT(&entry[0]);
    PMIX_INFO_DESTRUCT(&entry[1]);
    rdp_free(cmd);
    return out->value.type == PMIX_DATA_ARRAY ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/* Answer one key into @a out; PMIX_ERR_NOT_FOUND when we cannot. */
static pmix_status_t answer_key(const pmix_query_t *q, const char *key,
                                const char *ns, const rdp_ctl_procs_t *t,
                                pmix_info_t *out)
{
    bool ours   = strncmp(ns, dm->nspace, PMIX_MAX_NSLEN) == 0;
    size_t zero = 0;
    uint32_t u32;

    if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0) {
        PMIX_INFO_LOAD(out, key, dm->nspace, PMIX_STRING);
    } else if (strcmp(key, PMIX_QUERY_NUM_PSETS) == 0) {
        PMIX_INFO_LOAD(out, key, &zero, PMIX_SIZE); /* no process sets */
    } else if (strcmp(key, PMIX_QUERY_PSET_NAMES) == 0
               || strcmp(key, PMIX_QUERY_SPAWN_SUPPORT) == 0
               || strcmp(key, PMIX_QUERY_DEBUG_SUPPORT) == 0) {
        /* no process sets; no spawn upcall; no debugger support */
        PMIX_INFO_LOAD(out, key, "", PMIX_STRING);
    } else if (!ours) {
        return PMIX_ERR_NOT_FOUND; /* we know of no other job */
    } else if (strcmp(key, PMIX_QUERY_NAMESPACE_INFO) == 0) {
        return nspace_info(out); /* PMIX_NSPACE picks whose (the Standard) */
    } else if (strcmp(key, PMIX_JOB_SIZE) == 0) {
        u32 = dm->launch.job_size;
        PMIX_INFO_LOAD(out, key, &u32, PMIX_UINT32);
    } else if (strcmp(key, PMIX_NUM_NODES) == 0) {
        u32 = dm->launch.nnodes;
        PMIX_INFO_LOAD(out, key, &u32, PMIX_UINT32);
    } else if (strcmp(key, PMIX_QUERY_JOB_STATUS) == 0 && t != NULL) {
        PMIX_INFO_LOAD(out, key, &t->job_status, PMIX_STATUS);
    } else if ((strcmp(key, PMIX_QUERY_PROC_TABLE) == 0
                || strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0)
               && t != NULL) {
        return proc_table(q, t, strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0,
                          out, key);
    } else {
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
}

static void results_release(void *arg)
{
    pmix_info_t *res = arg;
    size_t n         = 0;

    while (res != NULL && res[n].key[0] != '\0') {
        n++;
    }
    PMIX_INFO_FREE(res, n);
}

/* Answer every key of the request (@a t: the launcher's table, or NULL). */
static void query_answer(hostreq_t *r, const rdp_ctl_procs_t *t)
{
    size_t cap = 0, n = 0, asked = 0;
    pmix_status_t status = PMIX_SUCCESS;
    pmix_info_t *res;

    for (size_t i = 0; i < r->nqueries; i++) {
        for (size_t k = 0;
             r->queries[i].keys != NULL && r->queries[i].keys[k] != NULL; k++) {
            cap++;
        }
    }
    /* one spare entry with an empty key ends the array for release */
    PMIX_INFO_CREATE(res, cap + 1);
    if (res == NULL) {
        info_answer(r, PMIX_ERR_NOMEM, NULL, 0, NULL);
        return;
    }
    for (size_t i = 0; status != PMIX_ERR_NOMEM && i < r->nqueries; i++) {
        const char *ns = rdp_query_nspace(&r->queries[i], r->source.nspace);

        for (size_t k = 0;
             r->queries[i].keys != NULL && r->queries[i].keys[k] != NULL; k++) {
            asked++;
            status = answer_key(&r->queries[i], r->queries[i].keys[k], ns, t,
                                &res[n]);
            if (status == PMIX_SUCCESS) {
                n++;
            } else if (status == PMIX_ERR_NOMEM) {
                break;
            }
        }
    }
    if (status == PMIX_ERR_NOMEM) {
        results_release(res);
        info_answer(r, PMIX_ERR_NOMEM, NULL, 0, NULL);
        return;
    }
    status = n == 0      ? PMIX_ERR_NOT_FOUND
             : n < asked ? PMIX_QUERY_PARTIAL_SUCCESS
                         : PMIX_SUCCESS;
    if (n == 0) {
        results_release(res);
        info_answer(r, status, NULL, 0, NULL);
        return;
    }
    info_answer(r, status, res, n, results_release);
}

static void procs_reply(const void *payload, size_t len)
{
    rdp_ctl_procs_t t;
    hostreq_t *r;

    if (rdp_ctl_procs_unpack(payload, len, &t) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed proc table");
        return;
    }
    r = pending_take(REQ_QUERY, t.reqid);
    if (r != NULL) {
        if (t.n != dm->launch.job_size) {
            rdp_log_warn(RUN, "proc table of %u ranks for a job of %u", t.n,
                         dm->launch.job_size);
            info_answer(r, PMIX_ERR_BAD_PARAM, NULL, 0, NULL);
        } else {
            query_answer(r, &t);
        }
    }
    rdp_free(t.ents);
}

static void query_run(hostreq_t *r)
{
    rdp_buf_t buf;

    if (!dm->have_job) {
        info_answer(r, PMIX_ERR_NOT_FOUND, NULL, 0, NULL);
        return;
    }
    if (!needs_launcher(r->queries, r->nqueries)) {
        query_answer(r, NULL);
        return;
    }
    if (!launcher_reachable()) {
        query_answer(r, NULL); /* what we know alone */
        return;
    }
    rdp_buf_init(&buf);
    if (rdp_pack_u32(&buf, r->reqid) != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        info_answer(r, PMIX_ERR_NOMEM, NULL, 0, NULL);
        return;
    }
    rdp_list_push_back(&pending, &r->link);
    rdp_run_dmn_send(RDP_CTL_PROCS_REQ, &buf);
    rdp_buf_cleanup(&buf);
}

pmix_status_t rdp_run_dmn_host_query(pmix_proc_t *proct, pmix_query_t *queries,
                                     size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                     void *cbdata)
{
    hostreq_t *r;

    if (queries == NULL || nqueries == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    r = req_create(REQ_QUERY, proct, cbdata);
    if (r == NULL) {
        return PMIX_ERR_NOMEM;
    }
    r->queries  = queries;
    r->nqueries = nqueries;
    r->info_cb  = cbfunc;
    return req_post(r);
}

/* ------------------------------------------------------------------ */
/* common                                                               */

static void info_answer(hostreq_t *r, pmix_status_t status, pmix_info_t *info,
                        size_t ninfo, pmix_release_cbfunc_t release)
{
    if (r->info_cb != NULL) {
        r->info_cb(status, info, ninfo, r->cbdata, release, info);
    } else if (release != NULL) {
        release(info);
    }
    req_destroy(r);
}

static void req_run(void *arg)
{
    hostreq_t *r = arg;

    switch (r->kind) {
    case REQ_LOG:
        log_run(r);
        break;
    case REQ_JCTRL:
        jctrl_run(r);
        break;
    default:
        query_run(r);
        break;
    }
}

bool rdp_run_dmn_hostops_msg(uint16_t cmd, const void *payload, size_t len)
{
    switch (cmd) {
    case RDP_CTL_JCTRL_DO:
        jctrl_do(payload, len);
        return true;
    case RDP_CTL_PROCS:
        procs_reply(payload, len);
        return true;
    default:
        return false;
    }
}

/* What the upcalls above honour, for PMIX_QUERY_ATTRIBUTE_SUPPORT's host
 * side (PMIx_Register_attributes after PMIx_server_init). */
void rdp_run_dmn_hostops_register(void)
{
    static char *log[]   = {"PMIX_LOG_STDOUT",        "PMIX_LOG_STDERR",
                            "PMIX_LOG_SYSLOG",        "PMIX_LOG_LOCAL_SYSLOG",
                            "PMIX_LOG_GLOBAL_SYSLOG", "PMIX_LOG_SYSLOG_PRI",
                            "PMIX_LOG_ONCE",          NULL};
    static char *jctrl[] = {"PMIX_JOB_CTRL_SIGNAL", "PMIX_JOB_CTRL_TERMINATE",
                            "PMIX_JOB_CTRL_KILL", NULL};
    static char *query[] = {"PMIX_QUERY_NAMESPACES",
                            "PMIX_QUERY_NAMESPACE_INFO",
                            "PMIX_QUERY_JOB_STATUS",
                            "PMIX_QUERY_PROC_TABLE",
                            "PMIX_QUERY_LOCAL_PROC_TABLE",
                            "PMIX_QUERY_SPAWN_SUPPORT",
                            "PMIX_QUERY_DEBUG_SUPPORT",
                            "PMIX_QUERY_NUM_PSETS",
                            "PMIX_QUERY_PSET_NAMES",
                            "PMIX_NSPACE",
                            "PMIX_RANK",
                            "PMIX_HOSTNAME",
                            NULL};

    if (PMIx_Register_attributes("PMIx_Log", log) != PMIX_SUCCESS
        || PMIx_Register_attributes("PMIx_Job_control", jctrl) != PMIX_SUCCESS
        || PMIx_Register_attributes("PMIx_Query_info", query) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "cannot register the host's attributes");
    }
}

pmix_status_t rdp_run_dmn_hostops_init(void)
{
    return rdp_timer_create(dm->loop, jctrl_grace_cb, NULL, &jctrl_grace_timer);
}

void rdp_run_dmn_hostops_fail(pmix_status_t why)
{
    hostreq_t *r, *tmp;

    rdp_list_for_each_safe(r, tmp, &pending, link) {
        info_answer(r, why, NULL, 0, NULL);
    }
}

void rdp_run_dmn_hostops_cleanup(void)
{
    rdp_run_dmn_hostops_fail(PMIX_ERR_LOST_CONNECTION);
    rdp_timer_destroy(jctrl_grace_timer);
    jctrl_grace_timer = NULL;
}
