/* group.c - PMIx_Group_construct(_nb), PMIx_Group_destruct(_nb) */
#include "config.h"
#include "core/client/client_int.h"
#include "core/util/directive.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"
#include "core/wire/proto.h"

#include <pthread.h>
#include <string.h>

/*
 * Constructs and destructs are collectives the server runs (server/
 * group.c).  A construct's reply carries the results the Standard names
 * (PMIX_GROUP_CONTEXT_ID when one was assigned, PMIX_GROUP_MEMBERSHIP)
 * and a bundle of the members' data (their nspaces' job info, committed
 * data and PMIX_GROUP_INFO), stored before the callback runs.  The
 * library remembers each group it is a member of (id -> members in
 * group-rank order) until it is destructed.
 */

/* A member as remembered: its rank and which of the group's nspaces. */
typedef struct cmember {
    pmix_rank_t rank;
    uint32_t ns;
} cmember_t;

/* A group's members in group-rank order, without a pmix_proc_t (260
 * bytes) each: their distinct nspaces once (mostly one), a rank and an
 * nspace index per member. */
typedef struct cgroup {
    cmember_t *members;
    size_t nmembers;
    char (*nspaces)[PMIX_MAX_NSLEN + 1];
    size_t nns;
} cgroup_t;

/* id -> cgroup_t; any thread, under the lock */
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static rdp_hash_t groups;
static bool groups_init;

static void cgroup_free(cgroup_t *g)
{
    if (g != NULL) {
        rdp_free(g->members);
        rdp_free(g->nspaces);
        rdp_free(g);
    }
}

/* Member @a k of @a g as a proc. */
static void cgroup_member(const cgroup_t *g, size_t k, pmix_proc_t *out)
{
    memcpy(out->nspace, g->nspaces[g->members[k].ns], sizeof(out->nspace));
    out->rank = g->members[k].rank;
}

/* The index of @a nspace among @a g's, added if new; @a hint first (the
 * previous member's). */
static pmix_status_t cgroup_nspace(cgroup_t *g, const char *nspace,
                                   uint32_t hint, uint32_t *ns_p)
{
    size_t cap = g->nns;

    if (g->nns > 0 && strncmp(g->nspaces[hint], nspace, PMIX_MAX_NSLEN) == 0) {
        *ns_p = hint;
        return PMIX_SUCCESS;
    }
    for (size_t i = 0; i < g->nns; i++) {
        if (strncmp(g->nspaces[i], nspace, PMIX_MAX_NSLEN) == 0) {
            *ns_p = (uint32_t)i;
            return PMIX_SUCCESS;
        }
    }
    if ((cap & (cap - 1)) == 0) { /* 0, 1, 2, 4...: full, grow */
        void *p = rdp_realloc(g->nspaces,
                              (cap > 0 ? 2 * cap : 1) * sizeof(*g->nspaces));

        if (p == NULL) {
            return PMIX_ERR_NOMEM;
        }
        g->nspaces = p;
    }
    memset(g->nspaces[g->nns], 0, sizeof(*g->nspaces));
    PMIX_LOAD_NSPACE(g->nspaces[g->nns], nspace);
    *ns_p = (uint32_t)g->nns++;
    return PMIX_SUCCESS;
}

static cgroup_t *cgroup_create(const pmix_proc_t *members, size_t n)
{
    cgroup_t *g = rdp_calloc(1, sizeof(*g));
    uint32_t ns = 0;

    if (g == NULL
        || (g->members = rdp_malloc((n + 1) * sizeof(*g->members))) == NULL) {
        cgroup_free(g);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (cgroup_nspace(g, members[i].nspace, ns, &ns) != PMIX_SUCCESS) {
            cgroup_free(g);
            return NULL;
        }
        g->members[i].rank = members[i].rank;
        g->members[i].ns   = ns;
    }
    g->nmembers = n;
    return g;
}

void rdp_client_group_remember(const char *id, const pmix_proc_t *members,
                               size_t n)
{
    cgroup_t *g = cgroup_create(members, n), *old = NULL;

    if (g == NULL) {
        rdp_log_error(CLIENT, "out of memory remembering group %s", id);
        return;
    }
    pthread_mutex_lock(&groups_lock);
    if (!groups_init && rdp_hash_init(&groups, 0) == PMIX_SUCCESS) {
        groups_init = true;
    }
    if (!groups_init
        || rdp_hash_set_str(&groups, id, g, (void **)&old) != PMIX_SUCCESS) {
        cgroup_free(g);
    }
    cgroup_free(old);
    pthread_mutex_unlock(&groups_lock);
}

static void groups_remove(const char *id)
{
    pthread_mutex_lock(&groups_lock);
    if (groups_init) {
        cgroup_free(rdp_hash_remove_str(&groups, id));
    }
    pthread_mutex_unlock(&groups_lock);
}

/* ---- (group id, group rank) addressing ---- */

void rdp_client_group_resolve(pmix_proc_t *proc)
{
    cgroup_t *g;

    pthread_mutex_lock(&groups_lock);
    g = groups_init ? rdp_hash_get_str(&groups, proc->nspace) : NULL;
    if (g != NULL && proc->rank < g->nmembers) {
        cgroup_member(g, proc->rank, proc);
    }
    pthread_mutex_unlock(&groups_lock);
}

/* Append to @a out what @a p names: itself, or the group members. */
static size_t expand_one(const pmix_proc_t *p, pmix_proc_t *out, size_t cap,
                         size_t n, pmix_status_t *status_p)
{
    cgroup_t *g = groups_init ? rdp_hash_get_str(&groups, p->nspace) : NULL;

    if (g == NULL) {
        if (n < cap) {
            out[n] = *p;
        }
        return n + 1;
    }
    if (p->rank == PMIX_RANK_WILDCARD) {
        for (size_t k = 0; k < g->nmembers; k++, n++) {
            if (n < cap) {
                cgroup_member(g, k, &out[n]);
            }
        }
        return n;
    }
    if (p->rank >= g->nmembers) {
        *status_p = PMIX_ERR_BAD_PARAM; /* no such group rank */
        return n;
    }
    if (n < cap) {
        cgroup_member(g, p->rank, &out[n]);
    }
    return n + 1;
}

pmix_status_t rdp_client_group_expand(const pmix_proc_t *procs, size_t nprocs,
                                      pmix_proc_t **out_p, size_t *nout_p)
{
    pmix_status_t status = PMIX_SUCCESS;
    pmix_proc_t *out     = NULL;
    size_t n             = 0;

    *out_p = NULL;
    pthread_mutex_lock(&groups_lock);
    if (groups_init && groups.count > 0) {
        /* first count, then fill */
        for (size_t i = 0; i < nprocs; i++) {
            n = expand_one(&procs[i], NULL, 0, n, &status);
        }
        out = status == PMIX_SUCCESS ? rdp_calloc(n + 1, sizeof(*out)) : NULL;
        if (status == PMIX_SUCCESS && out == NULL) {
            status = PMIX_ERR_NOMEM;
        }
        for (size_t i = 0, k = 0; out != NULL && i < nprocs; i++) {
            k = expand_one(&procs[i], out, n, k, &status);
        }
    }
    pthread_mutex_unlock(&groups_lock);
    *out_p  = out;
    *nout_p = n;
    return status;
}

const char *rdp_client_group_ft_fence(const pmix_proc_t *procs, size_t nprocs,
                                      const pmix_info_t *info, size_t ninfo)
{
    bool ft = false, known;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_FT_COLLECTIVE)) {
            ft = PMIX_INFO_TRUE(&info[i]);
        }
    }
    if (!ft || nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD) {
        return NULL;
    }
    pthread_mutex_lock(&groups_lock);
    known = groups_init && rdp_hash_get_str(&groups, procs[0].nspace) != NULL;
    pthread_mutex_unlock(&groups_lock);
    return known ? procs[0].nspace : NULL;
}

void rdp_client_group_cleanup(void)
{
    rdp_hash_entry_t *ent;
    size_t i;

    pthread_mutex_lock(&groups_lock);
    if (groups_init) {
        rdp_hash_for_each(ent, &groups, i) {
            cgroup_free(ent->value);
        }
        rdp_hash_cleanup(&groups);
        groups_init = false;
    }
    pthread_mutex_unlock(&groups_lock);
}

static pmix_status_t check_id(const char *grp)
{
    if (grp == NULL || grp[0] == '\0'
        || strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

/* ---- blocking forms ---- */

typedef pmix_status_t (*op_nb_fn)(const char *, const pmix_info_t *, size_t,
                                  pmix_op_cbfunc_t, void *);
typedef pmix_status_t (*info_nb_fn)(const char *, const pmix_proc_t *, size_t,
                                    const pmix_info_t *, size_t,
                                    pmix_info_cbfunc_t, void *);

static pmix_status_t wait_op(op_nb_fn nb, const char *grp,
                             const pmix_info_t *info, size_t ninfo)
{
    rdp_client_sync_t sync;
    pmix_status_t status = rdp_client_sync_begin(&sync);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    return rdp_client_sync_wait(
        &sync, nb(grp, info, ninfo, rdp_client_sync_op_cb, &sync));
}

static pmix_status_t wait_info(info_nb_fn nb, const char *grp,
                               const pmix_proc_t *procs, size_t nprocs,
                               const pmix_info_t *info, size_t ninfo,
                               pmix_info_t **results, size_t *nresults)
{
    rdp_client_sync_t sync;
    pmix_status_t status = rdp_client_sync_info_begin(&sync, results, nresults);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_client_sync_wait(&sync, nb(grp, procs, nprocs, info, ninfo,
                                            rdp_client_sync_info_cb, &sync));
    return rdp_client_sync_info_results(&sync, status, results, nresults);
}

/* ---- construct ---- */

/* The membership of a construct's results, remembered for addressing. */
static void remember_membership(const char *id, const pmix_info_t *res,
                                size_t nres)
{
    for (size_t i = 0; i < nres; i++) {
        const pmix_data_array_t *da = res[i].value.data.darray;

        if (PMIX_CHECK_KEY(&res[i], PMIX_GROUP_MEMBERSHIP)
            && res[i].value.type == PMIX_DATA_ARRAY && da != NULL
            && da->type == PMIX_PROC) {
            rdp_client_group_remember(id, da->array, da->size);
        }
    }
}

static void construct_finish(rdp_client_op_t *op, pmix_status_t status,
                             rdp_rbuf_t *rb)
{
    pmix_info_cbfunc_t cbfunc = (pmix_info_cbfunc_t)op->cbfunc;
    char *id                  = op->extra;
    pmix_info_t *res          = NULL;
    size_t nres               = 0;

    /* a declined invitation's reply is the status alone */
    if (status == PMIX_SUCCESS && rb != NULL && rb->left > 0) {
        status = rdp_unpack_info_array(rb, &res, &nres);
        if (status == PMIX_SUCCESS) {
            status = rdp_client_store_bundle(&rdp_client.store, rb);
        }
        if (status == PMIX_SUCCESS && rb->left != 0) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "bad group construct reply: %s",
                          rdp_status_name(status));
            rdp_info_array_free(res, nres);
            res  = NULL;
            nres = 0;
        }
    }
    if (status == PMIX_SUCCESS) {
        remember_membership(id, res, nres);
    }
    rdp_free(id);
    if (cbfunc == NULL) {
        rdp_info_array_free(res, nres);
        return;
    }
    rdp_client_info_cb_give(cbfunc, status, res, nres, op->cbdata);
}

/* Post @a op whose extra is a copy of @a grp. */
static pmix_status_t post_with_id(rdp_client_op_t *op, const char *grp)
{
    char *id = rdp_strdup(grp);
    pmix_status_t status;

    if (id == NULL) {
        rdp_client_op_free(op);
        return PMIX_ERR_NOMEM;
    }
    op->extra = id;
    status    = rdp_client_op_post(op);
    if (status != PMIX_SUCCESS) {
        rdp_free(id); /* finish never runs */
    }
    return status;
}

/* What a join adds to its request. */
typedef struct join_args {
    const pmix_proc_t *leader;
    pmix_group_opt_t opt;
} join_args_t;

static pmix_status_t pack_join(rdp_buf_t *buf, const join_args_t *join)
{
    pmix_proc_t none;
    pmix_status_t status;

    memset(&none, 0, sizeof(none));
    none.rank = PMIX_RANK_UNDEF;
    status    = rdp_pack_proc(buf, join->leader != NULL ? join->leader : &none);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, (uint8_t)join->opt);
    }
    return status;
}

/* Pack (id, [procs | leader + opt], info) for @a cmd and post it; procs
 * only when @a with_procs (construct, invite), a join's when @a join. */
static pmix_status_t group_submit(uint16_t cmd, rdp_client_op_finish_t finish,
                                  void *cbfunc, void *cbdata, const char *grp,
                                  bool with_procs, const pmix_proc_t *procs,
                                  size_t nprocs, const join_args_t *join,
                                  const pmix_info_t *info, size_t ninfo)
{
    rdp_client_op_t *op;
    pmix_status_t status;

    if (!rdp_client_active()) {
        return PMIX_ERR_INIT;
    }
    if (check_id(grp) != PMIX_SUCCESS
        || (with_procs && (procs == NULL || nprocs == 0))
        || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    op = rdp_client_op_create(cmd, finish, cbfunc, cbdata);
    if (op == NULL) {
        return PMIX_ERR_NOMEM;
    }
    op->timeout = rdp_client_info_timeout(info, ninfo);
    status      = rdp_pack_string(&op->payload, grp);
    if (status == PMIX_SUCCESS && with_procs) {
        status = rdp_pack_proc_array(&op->payload, procs, nprocs);
    }
    if (status == PMIX_SUCCESS && join != NULL) {
        status = pack_join(&op->payload, join);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&op->payload, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        rdp_client_op_free(op);
        return status;
    }
    return post_with_id(op, grp);
}

pmix_status_t PMIx_Group_construct_nb(const char grp[],
                                      const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return group_submit(RDP_CMD_GROUP_CONSTRUCT, construct_finish,
                        (void *)cbfunc, cbdata, grp, true, procs, nprocs, NULL,
                        info, ninfo);
}

pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[],
                                   size_t nprocs,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults)
{
    RDP_CHECK_DIRECTIVES(directives, ndirs);
    return wait_info(PMIx_Group_construct_nb, grp, procs, nprocs, directives,
                     ndirs, results, nresults);
}

/* ---- destruct ---- */

static void destruct_finish(rdp_client_op_t *op, pmix_status_t status,
                            rdp_rbuf_t *rb)
{
    pmix_op_cbfunc_t cbfunc = (pmix_op_cbfunc_t)op->cbfunc;
    char *id                = op->extra;

    (void)rb;
    if (status == PMIX_SUCCESS) {
        groups_remove(id);
    }
    rdp_free(id);
    if (cbfunc != NULL) {
        cbfunc(status, op->cbdata);
    }
}

pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                     void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return group_submit(RDP_CMD_GROUP_DESTRUCT, destruct_finish, (void *)cbfunc,
                        cbdata, grp, false, NULL, 0, NULL, info, ninfo);
}

pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[],
                                  size_t ninfo)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return wait_op(PMIx_Group_destruct_nb, grp, info, ninfo);
}

/* ---- invite, join, leave ---- */

pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                   size_t nprocs, const pmix_info_t info[],
                                   size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                   void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return group_submit(RDP_CMD_GROUP_INVITE, construct_finish, (void *)cbfunc,
                        cbdata, grp, true, procs, nprocs, NULL, info, ninfo);
}

pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_info_t **results,
                                size_t *nresult)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return wait_info(PMIx_Group_invite_nb, grp, procs, nprocs, info, ninfo,
                     results, nresult);
}

/* An accepted join completes with the group, as a construct does; a
 * declined one at once. */
pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                 pmix_group_opt_t opt, const pmix_info_t info[],
                                 size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                 void *cbdata)
{
    join_args_t join = {.leader = leader, .opt = opt};

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE) {
        return PMIX_ERR_BAD_PARAM;
    }
    return group_submit(RDP_CMD_GROUP_JOIN, construct_finish, (void *)cbfunc,
                        cbdata, grp, false, NULL, 0, &join, info, ninfo);
}

pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                              pmix_group_opt_t opt, const pmix_info_t info[],
                              size_t ninfo, pmix_info_t **results,
                              size_t *nresult)
{
    rdp_client_sync_t sync;
    pmix_status_t status = rdp_client_sync_info_begin(&sync, results, nresult);

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_client_sync_wait(
        &sync, PMIx_Group_join_nb(grp, leader, opt, info, ninfo,
                                  rdp_client_sync_info_cb, &sync));
    return rdp_client_sync_info_results(&sync, status, results, nresult);
}

pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    /* forgetting the group on success is what a destruct does too */
    return group_submit(RDP_CMD_GROUP_LEAVE, destruct_finish, (void *)cbfunc,
                        cbdata, grp, false, NULL, 0, NULL, info, ninfo);
}

pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[],
                               size_t ninfo)
{
    RDP_CHECK_DIRECTIVES(info, ninfo);
    return wait_op(PMIx_Group_leave_nb, grp, info, ninfo);
}

/* ---- events addressed to group members ---- */

/* The procs a custom range names, if it is a proc or proc array. */
static bool range_procs(const pmix_info_t *in, const pmix_proc_t **procs_p,
                        size_t *n_p)
{
    const pmix_data_array_t *da = in->value.data.darray;

    if (!PMIX_CHECK_KEY(in, PMIX_EVENT_CUSTOM_RANGE)) {
        return false;
    }
    if (in->value.type == PMIX_PROC && in->value.data.proc != NULL) {
        *procs_p = in->value.data.proc;
        *n_p     = 1;
        return true;
    }
    if (in->value.type == PMIX_DATA_ARRAY && da != NULL
        && da->type == PMIX_PROC) {
        *procs_p = da->array;
        *n_p     = da->size;
        return true;
    }
    return false;
}

pmix_status_t rdp_client_group_pack_event_info(rdp_buf_t *buf,
                                               const pmix_info_t *info,
                                               size_t ninfo)
{
    pmix_info_t *copy  = NULL;
    pmix_proc_t *procs = NULL;
    pmix_data_array_t da;
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < ninfo && copy == NULL; i++) {
        const pmix_proc_t *given;
        size_t n, nprocs;

        if (!range_procs(&info[i], &given, &n)) {
            continue;
        }
        status = rdp_client_group_expand(given, n, &procs, &nprocs);
        if (status != PMIX_SUCCESS || procs == NULL) {
            break;
        }
        /* a shallow copy whose custom range names the members */
        copy = rdp_calloc(ninfo + 1, sizeof(*copy));
        if (copy == NULL) {
            status = PMIX_ERR_NOMEM;
            break;
        }
        memcpy(copy, info, ninfo * sizeof(*copy));
        da.type                   = PMIX_PROC;
        da.size                   = nprocs;
        da.array                  = procs;
        copy[i].value.type        = PMIX_DATA_ARRAY;
        copy[i].value.data.darray = &da;
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(buf, copy != NULL ? copy : info, ninfo);
    }
    rdp_free(copy);
    rdp_free(procs);
    return status;
}

/* ---- a new leader (RFC0033) ---- */

enum {
    LEADER_VOTE_NONE  = 0,
    LEADER_VOTE_SELF  = 1,
    LEADER_VOTE_ABORT = 2
};

static void leader_vote_sent(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    (void)rb;
    (void)arg;
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "answer to PMIX_GROUP_LEADER_FAILED: %s",
                      rdp_status_name(status));
    }
}

/* What this member's handlers decided: abort (one completed with
 * PMIX_GROUP_CONSTRUCT_ABORT), it leads (PMIX_GROUP_LEADER true in their
 * results), or nothing. */
static uint8_t leader_vote(const pmix_info_t *results, size_t nresults,
                           pmix_status_t hdlr_status)
{
    uint8_t vote = LEADER_VOTE_NONE;

    if (hdlr_status == PMIX_GROUP_CONSTRUCT_ABORT) {
        return LEADER_VOTE_ABORT;
    }
    for (size_t i = 0; i < nresults; i++) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_LEADER)
            && PMIX_INFO_TRUE(&results[i])) {
            vote = LEADER_VOTE_SELF;
        }
    }
    return vote;
}

/* Send this member's vote on a new leader of group @a id. */
static void send_leader_vote(const char *id, const pmix_info_t *results,
                             size_t nresults, pmix_status_t hdlr_status)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = rdp_pack_string(&buf, id);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(&buf, leader_vote(results, nresults, hdlr_status));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_client_request(RDP_CMD_GROUP_LEADER_VOTE, &buf, 0,
                                    leader_vote_sent, NULL);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(CLIENT, "cannot answer PMIX_GROUP_LEADER_FAILED: %s",
                     rdp_status_name(status));
    }
    rdp_buf_cleanup(&buf);
}

static void invitation_answered(pmix_status_t status, pmix_info_t *info,
                                size_t ninfo, void *cbdata,
                                pmix_release_cbfunc_t release_fn,
                                void *release_cbdata)
{
    (void)info;
    (void)ninfo;
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "invitation to group %s answered: %s",
                      (const char *)cbdata, rdp_status_name(status));
    }
    rdp_free(cbdata);
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

/* A PMIX_GROUP_INVITED handler that completed with
 * PMIX_GROUP_INVITE_ACCEPTED or _DECLINED answers the invitation: the
 * library joins (or declines) for it, as PMIx_Group_join_nb would; an
 * accepted join completes with the group (the member hears
 * PMIX_GROUP_CONSTRUCT_COMPLETE).  Anything else: the program answers
 * itself. */
static void answer_invitation(const char *id, pmix_status_t hdlr_status)
{
    pmix_group_opt_t opt;
    char *copy;
    pmix_status_t status;

    if (hdlr_status == PMIX_GROUP_INVITE_ACCEPTED) {
        opt = PMIX_GROUP_ACCEPT;
    } else if (hdlr_status == PMIX_GROUP_INVITE_DECLINED) {
        opt = PMIX_GROUP_DECLINE;
    } else {
        return;
    }
    copy = rdp_strdup(id);
    if (copy == NULL) {
        rdp_log_warn(CLIENT, "cannot answer the invitation to group %s", id);
        return;
    }
    status =
        PMIx_Group_join_nb(id, NULL, opt, NULL, 0, invitation_answered, copy);
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(CLIENT, "cannot answer the invitation to group %s: %s", id,
                     rdp_status_name(status));
        rdp_free(copy);
    }
}

/* ---- the leader aborts an invitation (RFC0033) ---- */

typedef struct abort_ctx {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
    char id[PMIX_MAX_NSLEN + 1];
} abort_ctx_t;

static void abort_sent(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    abort_ctx_t *ctx = arg;

    (void)rb;
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "aborting group %s: %s", ctx->id,
                      rdp_status_name(status));
    }
    if (ctx->cbfunc != NULL) {
        ctx->cbfunc(status, ctx->cbdata);
    }
    rdp_free(ctx);
}

pmix_status_t rdp_client_group_abort(const char *id, pmix_op_cbfunc_t cbfunc,
                                     void *cbdata)
{
    abort_ctx_t *ctx = rdp_calloc(1, sizeof(*ctx));
    rdp_buf_t buf;
    pmix_status_t status;

    if (ctx == NULL) {
        return PMIX_ERR_NOMEM;
    }
    ctx->cbfunc = cbfunc;
    ctx->cbdata = cbdata;
    memcpy(ctx->id, id, strnlen(id, PMIX_MAX_NSLEN));
    rdp_buf_init(&buf);
    status = rdp_pack_string(&buf, id);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&buf, NULL, 0);
    }
    if (status == PMIX_SUCCESS) {
        status =
            rdp_client_request(RDP_CMD_GROUP_ABORT, &buf, 0, abort_sent, ctx);
    }
    rdp_buf_cleanup(&buf);
    if (status != PMIX_SUCCESS) {
        rdp_free(ctx);
    }
    return status;
}

const char *rdp_client_group_event_id(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID)
            && info[i].value.type == PMIX_STRING
            && info[i].value.data.string != NULL) {
            return info[i].value.data.string;
        }
    }
    return NULL;
}

/* A leader's handler of an answer to its invitation that completed with
 * PMIX_GROUP_CONSTRUCT_ABORT aborts the invitation. */
static bool invitation_answer(pmix_status_t code)
{
    return code == PMIX_GROUP_INVITE_ACCEPTED
           || code == PMIX_GROUP_INVITE_DECLINED
           || code == PMIX_GROUP_INVITE_FAILED;
}

/* A leader's handlers of a decline or failure are done: its invitation
 * may complete (anything they invited was sent before this). */
static void send_answered(const char *id)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = rdp_pack_string(&buf, id);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_info_array(&buf, NULL, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_client_request(RDP_CMD_GROUP_ANSWERED, &buf, 0,
                                    leader_vote_sent, NULL);
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_warn(CLIENT,
                     "cannot tell that group %s's answer was handled: %s", id,
                     rdp_status_name(status));
    }
    rdp_buf_cleanup(&buf);
}

void rdp_client_group_chain_end(pmix_status_t code, const pmix_info_t *info,
                                size_t ninfo, const pmix_info_t *results,
                                size_t nresults, pmix_status_t hdlr_status)
{
    const char *id = NULL;

    if (invitation_answer(code) && hdlr_status == PMIX_GROUP_CONSTRUCT_ABORT
        && rdp_client.conn != NULL) {
        id = rdp_client_group_event_id(info, ninfo);
        if (id != NULL) {
            (void)rdp_client_group_abort(id, NULL, NULL);
        }
        return;
    }
    if ((code == PMIX_GROUP_INVITE_DECLINED || code == PMIX_GROUP_INVITE_FAILED)
        && rdp_client.conn != NULL) {
        /* the server holds the invitation until then (a replacement) */
        id = rdp_client_group_event_id(info, ninfo);
        if (id != NULL) {
            send_answered(id);
        }
        return;
    }
    if (code != PMIX_GROUP_LEADER_FAILED && code != PMIX_GROUP_INVITED) {
        return;
    }
    id = rdp_client_group_event_id(info, ninfo);
    if (id == NULL || rdp_client.conn == NULL) {
        return;
    }
    if (code == PMIX_GROUP_LEADER_FAILED) {
        send_leader_vote(id, results, nresults, hdlr_status);
    } else {
        answer_invitation(id, hdlr_status);
    }
}
