/* group.c - PMIx_Group_construct / _destruct in the server (RFC0033) */
#include "config.h"
#include "core/server/group.h"
#include "core/server/connect.h"
#include "core/server/group_host.h"
#include "core/server/p2p.h"
#include "core/server/nswait.h"
#include "core/server/xchg.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/hash.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <rdpmix.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/*
 * A group operation (construct or destruct) has a tracker here keyed by
 * its kind and group id, never by its participants: constructs of
 * different groups over the same processes never meet.  The tracker waits
 * for this server's members; then this server's block (group.h) is
 * resolved alone when every member is local, or exchanged with the other
 * servers that host members (gop_exchange).  Members address the group
 * by (id, group rank) afterwards; the server keeps every constructed
 * group (id -> members in group-rank order, context id) until it is
 * destructed, so a destruct knows whom to wait for.
 *
 * Context ids: the lowest-indexed participating server's candidate,
 * (engine index << 32) | a fresh value of its counter (from 1); without
 * the engine the index is 0.  Every server draws a candidate for every
 * construct (only the lowest one's is used), so ids are unique across
 * concurrent groups without anyone coordinating.
 */

enum gop_kind {
    GOP_CONSTRUCT  = 1,
    GOP_DESTRUCT   = 2,
    GOP_CONNECT    = 3, /* RDPMIX_CONNECT_OPTIONAL: a connect run here */
    GOP_DISCONNECT = 4,
    GOP_FENCE      = 5 /* PMIx_Fence with PMIX_GROUP_FT_COLLECTIVE */
};
#define GOP_KIND_MAX GOP_FENCE

static const char *kind_name(uint8_t kind)
{
    static const char *const names[] = {"?",       "construct",  "destruct",
                                        "connect", "disconnect", "fence"};

    return kind <= GOP_KIND_MAX ? names[kind] : names[0];
}

enum gop_state {
    GOP_GATHER = 0, /* waiting for local members */
    GOP_XCHG,       /* the servers exchange blocks */
    GOP_DONE        /* answered; kept until every local member came */
};

/* Choosing a new leader: gather this node's votes, exchange them. */
enum vote_state {
    VOTE_GATHER = 0,
    VOTE_XCHG,
    VOTE_DONE
};

typedef struct gpart {
    pmix_proc_t proc;
    bool arrived;
    bool gone; /* left or declined before arriving, and that was allowed */
    uint64_t peer_id;
    uint32_t tag;
    uint16_t ack;       /* its reply command (construct, invite or join) */
    bool voted;         /* answered PMIX_GROUP_LEADER_FAILED */
    uint8_t vote;       /* enum rdp_srv_group_vote_kind */
    pmix_info_t *ginfo; /* PMIX_GROUP_INFO it gave */
    size_t nginfo;
} gpart_t;

/* Another call answered with the operation's reply (a replacement
 * invite by the leader). */
typedef struct gwaiter {
    uint64_t peer_id;
    uint32_t tag;
    uint16_t ack;
} gwaiter_t;

typedef struct gop {
    uint8_t kind;
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *members; /* group-rank order */
    size_t nmembers;
    /* a construct given as one proc (a whole nspace): later arrivals that
     * give the same one need no expansion to compare (gop_for) */
    bool given_one;
    pmix_proc_t given;
    gpart_t *parts; /* the local members */
    size_t nparts;
    bool all_local;
    bool want_cid;
    bool optional; /* members may leave without joining */
    bool notify_term;
    bool collect; /* a fence with PMIX_COLLECT_DATA */
    double timeout;
    rdp_timer_t *timer;
    rdp_list_t open_link; /* gs.opens while its CTL_OPEN is deferred */
    double open_at;       /* when it goes (open_soon) */
    bool open_deferred;   /* open_soon deferred it once */
    bool open_pending;    /* not sent yet */
    enum gop_state state;
    pmix_status_t status;
    uint64_t gen;    /* how many operations of this kind and id before */
    uint64_t xchg;   /* the exchange's handle while GOP_XCHG */
    bool invite;     /* made by PMIx_Group_invite: members join */
    bool has_leader; /* an invitation, or a member gave PMIX_GROUP_LEADER */
    pmix_proc_t leader;
    bool leader_lost;  /* it left before completion: the members vote */
    pmix_proc_t *lost; /* every leader that left, in order */
    size_t nlost;
    bool pending_lost; /* another server lost pending_leader mid-vote */
    pmix_proc_t pending_leader;
    uint8_t vround; /* votes so far: one per leader lost */
    enum vote_state vstate;
    uint64_t vxchg;             /* the vote exchange's handle while VOTE_XCHG */
    rdp_srv_xchg_block_t *held; /* blocks that came before the vote ended */
    size_t nheld;
    bool hold; /* in use by a caller that looks at it afterwards */
    /* a construct failed because this member left before joining: every
     * participant hears PMIX_GROUP_INVITE_FAILED about it */
    bool has_culprit;
    pmix_proc_t culprit;
    /* Invitations (replacements, docs/design.md "Groups"): no server
     * exchanges before the leader's server sealed the membership */
    bool sealed;
    bool *answered;     /* the leader's server: per member, it answered */
    size_t acks;        /* declines / failures the leader still handles */
    gwaiter_t *waiters; /* the leader's further invites, answered last */
    size_t nwaiters;
} gop_t;

/* A constructed group, as this server knows it. */
typedef struct group {
    pmix_proc_t *members; /* now: without those that left or failed */
    size_t nmembers;
    /* as constructed: what a destruct runs over, the same on every server
     * whenever each heard of a departure */
    pmix_proc_t *constructed;
    size_t nconstructed;
    uint64_t cid; /* 0: none assigned */
    bool notify_term;
} group_t;

static struct {
    bool init;
    rdp_hash_t ops;    /* kind + id -> gop_t */
    rdp_hash_t groups; /* id -> group_t */
    rdp_hash_t gens;   /* kind + id -> number of operations so far */
    rdp_hash_t dooms;  /* kind + id + gen -> status: failed elsewhere */
    rdp_hash_t culprits; /* the same key -> pmix_proc_t (owned): why */
    uint32_t counter;  /* context ids handed out */
    rdp_list_t opens;  /* gop_t by open_at: deferred CTL_OPENs (open_soon) */
    rdp_timer_t *open_timer; /* for the first of them */
    bool open_armed;
} gs;

static void gop_timeout(void *arg);
static bool is_leader(const gop_t *op, const pmix_proc_t *proc);
static pmix_status_t gop_create(uint8_t kind, const char *id,
                                pmix_proc_t *members, size_t nmembers,
                                gop_t **op_p);
static void gop_check_doomed(gop_t *op);
static void gop_check_departed(gop_t *op);
static void gop_maybe_ready(gop_t *op);
static void gop_maybe_vote(gop_t *op);
static void invite_all(const gop_t *op);

/* Whether @a p is one of @a procs (members: no wildcards); the rank
 * compared first, as a compare of nspaces costs far more. */
static bool has_member(const pmix_proc_t *procs, size_t n, const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++) {
        if (procs[i].rank == p->rank
            && strncmp(procs[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0) {
            return true;
        }
    }
    return false;
}

static pmix_status_t gs_init(void)
{
    pmix_status_t status = PMIX_SUCCESS;

    if (gs.init) {
        return PMIX_SUCCESS;
    }
    rdp_list_init(&gs.opens);
    status = rdp_hash_init(&gs.ops, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&gs.groups, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&gs.gens, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&gs.dooms, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&gs.culprits, 0);
    }
    if (status != PMIX_SUCCESS) {
        rdp_hash_cleanup(&gs.ops);
        rdp_hash_cleanup(&gs.groups);
        rdp_hash_cleanup(&gs.gens);
        rdp_hash_cleanup(&gs.dooms);
        rdp_hash_cleanup(&gs.culprits);
        return status;
    }
    gs.init = true;
    return PMIX_SUCCESS;
}

/* Key of a tracker: kind byte then the id (NUL excluded). */
static size_t op_key(uint8_t kind, const char *id, uint8_t *key)
{
    size_t n = strnlen(id, PMIX_MAX_NSLEN);

    key[0] = kind;
    memcpy(key + 1, id, n);
    return n + 1;
}
#define OP_KEY_MAX (PMIX_MAX_NSLEN + 1)

static uint32_t my_index(void)
{
    uint32_t me = rdp_srv_xchg_me();

    return me == UINT32_MAX ? 0 : me;
}

static uint64_t next_cid(void)
{
    if (++gs.counter == 0) { /* 2^32 constructs on one server */
        gs.counter = 1;
    }
    return rdp_srv_group_cid_make(my_index(), gs.counter);
}

static void group_free(group_t *g)
{
    if (g != NULL) {
        rdp_free(g->members);
        rdp_free(g->constructed);
        rdp_free(g);
    }
}

static void held_free(gop_t *op)
{
    for (size_t i = 0; i < op->nheld; i++) {
        rdp_free((void *)op->held[i].data);
    }
    rdp_free(op->held);
    op->held  = NULL;
    op->nheld = 0;
}

/* Freed trackers kept for the next ones: a gop_t is larger than what
 * malloc's per-thread cache keeps (1032 bytes), and a fresh one took the
 * allocator's slow path twice per construct and destruct. */
#define GOP_SPARES 4
static gop_t *gop_spares[GOP_SPARES];
static size_t gop_nspares;

static gop_t *gop_alloc(void)
{
    gop_t *op;

    if (gop_nspares == 0) {
        return rdp_calloc(1, sizeof(gop_t));
    }
    op = gop_spares[--gop_nspares];
    memset(op, 0, sizeof(*op));
    return op;
}

static void gop_release(gop_t *op)
{
    if (gop_nspares < GOP_SPARES) {
        gop_spares[gop_nspares++] = op;
    } else {
        rdp_free(op);
    }
}

static void gop_spares_drop(void)
{
    while (gop_nspares > 0) {
        rdp_free(gop_spares[--gop_nspares]);
    }
}

static void gop_free(gop_t *op)
{
    held_free(op);
    rdp_timer_destroy(op->timer);
    rdp_list_del(&op->open_link);
    for (size_t i = 0; i < op->nparts; i++) {
        rdp_info_array_free(op->parts[i].ginfo, op->parts[i].nginfo);
    }
    rdp_free(op->parts);
    rdp_free(op->members);
    rdp_free(op->lost);
    rdp_free(op->answered);
    rdp_free(op->waiters);
    gop_release(op);
}

static void gop_remove(gop_t *op)
{
    uint8_t key[OP_KEY_MAX];

    rdp_hash_remove(&gs.ops, key, op_key(op->kind, op->id, key));
    gop_free(op);
}

static void deferred_opens_post(void);

/* A finished tracker goes once no local member can still arrive. */
static void gop_maybe_free(gop_t *op)
{
    if (op->state != GOP_DONE || op->hold) {
        return;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        const gpart_t *p = &op->parts[i];
        rdp_srv_client_t *c;

        if (p->arrived || p->gone) {
            continue;
        }
        c = rdp_srv_client_find(p->proc.nspace, p->proc.rank);
        if (c != NULL && c->state != RDP_SRV_CLIENT_FINALIZED
            && c->state != RDP_SRV_CLIENT_TERMINATED) {
            return;
        }
    }
    gop_remove(op);
    deferred_opens_post(); /* the next operation of its kind and id */
}

/* Send @a blob to every member that arrived. */
static void send_blob_to(uint64_t peer_id, uint16_t ack, uint32_t tag,
                         rdp_ipc_blob_t *blob)
{
    rdp_srv_peer_t *peer = rdp_srv_peer_find(peer_id);

    if (peer != NULL && peer->state == RDP_SRV_PEER_READY) {
        rdp_ipc_send_blob(peer->conn, ack, tag, blob);
    }
}

static void gop_send_all(gop_t *op, rdp_ipc_blob_t *blob)
{
    for (size_t i = 0; i < op->nparts; i++) {
        if (op->parts[i].arrived) {
            send_blob_to(op->parts[i].peer_id, op->parts[i].ack,
                         op->parts[i].tag, blob);
        }
    }
    for (size_t i = 0; i < op->nwaiters; i++) {
        send_blob_to(op->waiters[i].peer_id, op->waiters[i].ack,
                     op->waiters[i].tag, blob);
    }
}

/* Answer with @a buf (status first), or with @a status alone. */
static void gop_answer(gop_t *op, pmix_status_t status, rdp_buf_t *buf)
{
    rdp_ipc_blob_t *blob = NULL;
    rdp_buf_t own;

    op->state  = GOP_DONE;
    op->status = status;
    if (op->timer != NULL) {
        rdp_timer_cancel(op->timer);
    }
    rdp_buf_init(&own);
    if (buf == NULL) {
        buf = &own;
        if (rdp_pack_i32(buf, status) != PMIX_SUCCESS) {
            rdp_buf_cleanup(buf);
            gop_maybe_free(op);
            return;
        }
    }
    if (rdp_ipc_blob_create(buf, &blob) == PMIX_SUCCESS) {
        gop_send_all(op, blob);
        rdp_ipc_blob_unref(blob);
    }
    rdp_buf_cleanup(buf);
    if (status != PMIX_SUCCESS) {
        rdp_log_info(SERVER, "group %s %s failed: %s", op->id,
                     kind_name(op->kind), rdp_status_name(status));
    }
    gop_maybe_free(op);
}

static void tell_others(const gop_t *op, pmix_status_t status);

/* Fail @a op here; with @a tell, also on the other servers that take
 * part (they wait for this server's block otherwise). */
static void gop_fail_here(gop_t *op, pmix_status_t status, bool tell)
{
    if (op->state == GOP_DONE) {
        return;
    }
    if (op->state == GOP_XCHG) {
        /* its completion finds the tracker answered and does nothing */
        (void)rdp_srv_xchg_cancel(op->xchg, status);
    }
    if (op->vstate == VOTE_XCHG) {
        (void)rdp_srv_xchg_cancel(op->vxchg, status);
    }
    if (tell && !op->all_local) {
        tell_others(op, status);
    }
    gop_answer(op, status, NULL);
}

static void gop_fail(gop_t *op, pmix_status_t status)
{
    gop_fail_here(op, status, true);
}

/* ---- events ---- */

/* Raise @a code from @a source for @a targets on this node, with
 * PMIX_GROUP_ID and @a extra (at most 3) infos. */
static void notify_procs(pmix_status_t code, const pmix_proc_t *source,
                         const pmix_proc_t *targets, size_t ntargets,
                         const char *id, const pmix_info_t *extra,
                         size_t nextra)
{
    pmix_info_t info[5];
    pmix_data_array_t range;
    size_t n = 0;

    if (ntargets == 0) {
        return;
    }
    memset(info, 0, sizeof(info));
    range.type  = PMIX_PROC;
    range.size  = ntargets;
    range.array = (void *)targets;
    PMIX_LOAD_KEY(info[n].key, PMIX_EVENT_CUSTOM_RANGE);
    info[n].value.type        = PMIX_DATA_ARRAY;
    info[n].value.data.darray = &range;
    n++;
    PMIX_LOAD_KEY(info[n].key, PMIX_GROUP_ID);
    info[n].value.type        = PMIX_STRING;
    info[n].value.data.string = (char *)id;
    n++;
    for (size_t i = 0; i < nextra && n < 5; i++) {
        info[n++] = extra[i]; /* shallow: borrowed for the call */
    }
    rdp_srv_notify_local(code, source, PMIX_RANGE_CUSTOM, info, n);
}

/* @a code about @a proc (source and affected proc) to the members of
 * @a op on this node. */
static void announce_about(const gop_t *op, pmix_status_t code,
                           const pmix_proc_t *proc)
{
    pmix_info_t affected;

    memset(&affected, 0, sizeof(affected));
    PMIX_LOAD_KEY(affected.key, PMIX_EVENT_AFFECTED_PROC);
    affected.value.type      = PMIX_PROC;
    affected.value.data.proc = (pmix_proc_t *)proc;
    notify_procs(code, proc, op->members, op->nmembers, op->id, &affected, 1);
}

/* PMIX_GROUP_LEADER_FAILED to the members of @a op on this node but
 * the leader. */
static void announce_leader_failed(const gop_t *op)
{
    announce_about(op, PMIX_GROUP_LEADER_FAILED, &op->leader);
}

/* Tell the leader of an invitation about @a member. */
static void notify_leader_here(pmix_status_t code, const pmix_proc_t *member,
                               const pmix_proc_t *leader, const char *id)
{
    pmix_info_t affected;

    memset(&affected, 0, sizeof(affected));
    PMIX_LOAD_KEY(affected.key, PMIX_EVENT_AFFECTED_PROC);
    affected.value.type      = PMIX_PROC;
    affected.value.data.proc = (pmix_proc_t *)member;
    notify_procs(code, member, leader, 1, id, &affected, 1);
}

static void tell_event(pmix_status_t code, const pmix_proc_t *source,
                       const char *id, const pmix_proc_t *target);

/* The leader's server counts the answers to an invitation: a decline or
 * failure holds it until the leader's handlers for it are done
 * (RDP_CMD_GROUP_ANSWERED), so they may invite a replacement first. */
static void leader_heard(gop_t *op, pmix_status_t code,
                         const pmix_proc_t *member)
{
    if (op->answered == NULL || op->sealed) {
        return;
    }
    for (size_t i = 0; i < op->nmembers; i++) {
        if (op->members[i].rank == member->rank
            && PMIX_CHECK_NSPACE(op->members[i].nspace, member->nspace)
            && !op->answered[i]) {
            op->answered[i] = true;
            if (code != PMIX_GROUP_INVITE_ACCEPTED) {
                op->acks++;
            }
        }
    }
}

/* ... on its node, wherever that is. */
static void notify_leader(const gop_t *op, pmix_status_t code,
                          const pmix_proc_t *member)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(op->leader.nspace);

    if (ns != NULL && rdp_srv_nspace_is_local(ns, op->leader.rank)) {
        leader_heard((gop_t *)op, code, member);
        notify_leader_here(code, member, &op->leader, op->id);
    } else {
        tell_event(code, member, op->id, &op->leader);
    }
}

/* RFC0033: without a leader every participant hears
 * PMIX_GROUP_INVITE_FAILED (source and affected proc: @a proc) when a
 * member leaves before calling construct, whether the construct goes on
 * without it (optional) or fails.  Told to this node's participants
 * that called already (@a only: to that one alone); with a leader its
 * own rules hold (tell_left_out, invitations). */
static void announce_left_out(const gop_t *op, const pmix_proc_t *proc,
                              const gpart_t *only)
{
    pmix_proc_t *targets;
    pmix_info_t affected;
    size_t n = 0;

    if (op->kind != GOP_CONSTRUCT || op->invite || op->has_leader) {
        return;
    }
    targets = rdp_calloc(op->nparts + 1, sizeof(*targets));
    if (targets == NULL) {
        return;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        const gpart_t *p = &op->parts[i];

        if (p->arrived && (only == NULL || p == only)
            && !(p->proc.rank == proc->rank
                 && PMIX_CHECK_NSPACE(p->proc.nspace, proc->nspace))) {
            targets[n++] = p->proc;
        }
    }
    memset(&affected, 0, sizeof(affected));
    PMIX_LOAD_KEY(affected.key, PMIX_EVENT_AFFECTED_PROC);
    affected.value.type      = PMIX_PROC;
    affected.value.data.proc = (pmix_proc_t *)proc;
    notify_procs(PMIX_GROUP_INVITE_FAILED, proc, targets, n, op->id, &affected,
                 1);
    rdp_free(targets);
}

/* @a op fails because @a proc left before joining: this node's
 * participants hear of it now, later arrivals when they come. */
static void set_culprit(gop_t *op, const pmix_proc_t *proc)
{
    if (op->state == GOP_DONE || op->has_culprit) {
        return;
    }
    op->has_culprit = true;
    op->culprit     = *proc;
    announce_left_out(op, proc, NULL);
}

/* ---- the result of a construct ---- */

/* A PROC section of @a proc holding its PMIX_GROUP_INFO. */
static pmix_status_t pack_ginfo_section(const pmix_proc_t *proc,
                                        const pmix_info_t *info, size_t n,
                                        rdp_buf_t *buf)
{
    size_t mark;
    pmix_status_t status =
        rdp_sect_pack_begin(buf, RDP_SECT_PROC, proc->rank, NULL, &mark);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, (uint32_t)n);
    }
    for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        status = rdp_pack_u8(buf, PMIX_GLOBAL);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_string(buf, info[i].key);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_value(buf, &info[i].value);
        }
    }
    if (status == PMIX_SUCCESS) {
        rdp_sect_pack_end(buf, mark);
    }
    return status;
}

/* The extra sections of one nspace's set, appended to @a extra: every
 * member's committed data we hold and its group info. */
static pmix_status_t
pack_member_sections(const char *nspace, const pmix_proc_t *final,
                     size_t nfinal, const rdp_srv_group_block_t *blocks,
                     size_t nblocks, rdp_buf_t *extra, uint32_t *nextra_p)
{
    rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
    pmix_status_t status = PMIX_SUCCESS;
    size_t at            = 0; /* final is in the blocks' order */

    for (size_t i = 0; status == PMIX_SUCCESS && i < nfinal; i++) {
        const rdp_srv_group_entry_t *e;
        pmix_rank_t r = final[i].rank;

        if (strncmp(final[i].nspace, nspace, PMIX_MAX_NSLEN) != 0) {
            continue;
        }
        if (rdp_kvs_has_rank(rdp_srv.modex, nspace, r)) {
            bool local    = ns != NULL && rdp_srv_nspace_is_local(ns, r);
            uint32_t mask = local ? RDP_SCOPES_LOCAL : RDP_SCOPES_ALL;

            status = rdp_srv_pack_proc_section(nspace, r, mask, extra);
            (*nextra_p)++;
        }
        e = rdp_srv_group_find_entry(blocks, nblocks, &final[i], &at);
        if (status == PMIX_SUCCESS && e != NULL && e->nginfo > 0) {
            status = pack_ginfo_section(&final[i], e->ginfo, e->nginfo, extra);
            (*nextra_p)++;
        }
    }
    return status;
}

/* The nspace every local member of @a op belongs to, NULL when they are
 * of several. */
static const char *parts_nspace(const gop_t *op)
{
    for (size_t i = 1; i < op->nparts; i++) {
        if (!PMIX_CHECK_NSPACE(op->parts[i].proc.nspace,
                               op->parts[0].proc.nspace)) {
            return NULL;
        }
    }
    return op->nparts > 0 ? op->parts[0].proc.nspace : NULL;
}

/* One member nspace's set: its job-level sections, then its members'
 * sections; without the job-level ones when every recipient is a process
 * of that nspace (@a known), which holds them since it connected: then
 * the members' sections are packed in place (no copy of the bundle). */
static pmix_status_t pack_member_set(rdp_srv_nspace_t *ns, bool known,
                                     const pmix_proc_t *final, size_t nfinal,
                                     const rdp_srv_group_block_t *blocks,
                                     size_t nblocks, rdp_buf_t *buf)
{
    uint32_t nextra = 0;
    size_t count_at;
    pmix_status_t status;

    if (!known) {
        rdp_buf_t extra;

        rdp_buf_init(&extra);
        status = pack_member_sections(ns->name, final, nfinal, blocks,
                                      nblocks, &extra, &nextra);
        if (status == PMIX_SUCCESS) {
            status = rdp_srv_nspace_pack_set(ns, &extra, nextra, buf);
        }
        rdp_buf_cleanup(&extra);
        return status;
    }
    status   = rdp_pack_string(buf, ns->name);
    count_at = buf->size;
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, 0);
    }
    if (status == PMIX_SUCCESS) {
        status = pack_member_sections(ns->name, final, nfinal, blocks, nblocks,
                                      buf, &nextra);
    }
    if (status == PMIX_SUCCESS) {
        uint32_t le = htole32(nextra);

        memcpy(buf->data + count_at, &le, sizeof(le));
    }
    return status;
}

/* The bundle of a construct: one set per member nspace; the recipients'
 * own nspace (@a own, NULL: several) without its job-level sections. */
static pmix_status_t pack_construct_bundle(const pmix_proc_t *final,
                                           size_t nfinal,
                                           const rdp_srv_group_block_t *blocks,
                                           size_t nblocks, const char *own,
                                           rdp_buf_t *buf)
{
    size_t count_at      = buf->size;
    uint32_t nsets       = 0;
    pmix_status_t status = rdp_pack_u32(buf, 0);

    for (size_t i = 0; status == PMIX_SUCCESS && i < nfinal; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(final[i].nspace);
        bool seen            = false;

        for (size_t k = 0; k < i && !seen; k++) {
            seen = PMIX_CHECK_NSPACE(final[k].nspace, final[i].nspace);
        }
        if (seen || ns == NULL || !ns->registered) {
            continue;
        }
        status = pack_member_set(
            ns, own != NULL && PMIX_CHECK_NSPACE(own, ns->name), final, nfinal,
            blocks, nblocks, buf);
        nsets++;
    }
    if (status == PMIX_SUCCESS) {
        uint32_t le = htole32(nsets);

        memcpy(buf->data + count_at, &le, sizeof(le));
    }
    return status;
}

/* PMIX_GROUP_CONTEXT_ID first (programs read results[0]), then
 * PMIX_GROUP_MEMBERSHIP. */
static pmix_status_t pack_results(const pmix_proc_t *final, size_t nfinal,
                                  bool have_cid, uint64_t cid, rdp_buf_t *buf)
{
    pmix_info_t res[2];
    pmix_data_array_t darray;
    size_t n = 0, cid_sz = (size_t)cid;
    pmix_status_t status;

    memset(res, 0, sizeof(res));
    if (have_cid) {
        PMIX_INFO_LOAD(&res[n], PMIX_GROUP_CONTEXT_ID, &cid_sz, PMIX_SIZE);
        n++;
    }
    darray.type  = PMIX_PROC;
    darray.size  = nfinal;
    darray.array = (void *) final;
    PMIX_LOAD_KEY(res[n].key, PMIX_GROUP_MEMBERSHIP);
    res[n].value.type        = PMIX_DATA_ARRAY;
    res[n].value.data.darray = &darray;
    n++;
    status = rdp_pack_info_array(buf, res, n);
    return status;
}

static void early_lefts_take(const char *id, bool apply);

/* Remember a constructed group (replacing one of the same id). */
static pmix_status_t group_record(const gop_t *op, pmix_proc_t *final,
                                  size_t nfinal, bool have_cid, uint64_t cid)
{
    group_t *g = rdp_calloc(1, sizeof(*g)), *old = NULL;
    pmix_status_t status;

    if (g == NULL) {
        return PMIX_ERR_NOMEM;
    }
    g->constructed = rdp_calloc(nfinal + 1, sizeof(*g->constructed));
    if (g->constructed == NULL) {
        rdp_free(g);
        return PMIX_ERR_NOMEM;
    }
    memcpy(g->constructed, final, nfinal * sizeof(*final));
    g->nconstructed = nfinal;
    g->members      = final;
    g->nmembers     = nfinal;
    g->cid          = have_cid ? cid : 0;
    g->notify_term  = op->notify_term;
    status          = rdp_hash_set_str(&gs.groups, op->id, g, (void **)&old);
    if (status != PMIX_SUCCESS) {
        rdp_free(g);
        return status;
    }
    group_free(old);
    return PMIX_SUCCESS;
}

/* PMIX_GROUP_CONSTRUCT_COMPLETE with the final membership to the
 * members on this node (an invited group: they joined asynchronously). */
static void announce_complete(const char *id, const pmix_proc_t *leader,
                              bool have_cid, uint64_t cid)
{
    group_t *g = rdp_hash_get_str(&gs.groups, id);
    pmix_info_t extra[2];
    pmix_data_array_t members;
    size_t n = 0, cid_sz = (size_t)cid;

    if (g == NULL) {
        return;
    }
    memset(extra, 0, sizeof(extra));
    members.type  = PMIX_PROC;
    members.size  = g->nmembers;
    members.array = g->members;
    PMIX_LOAD_KEY(extra[n].key, PMIX_GROUP_MEMBERSHIP);
    extra[n].value.type        = PMIX_DATA_ARRAY;
    extra[n].value.data.darray = &members;
    n++;
    if (have_cid) {
        PMIX_INFO_LOAD(&extra[n], PMIX_GROUP_CONTEXT_ID, &cid_sz, PMIX_SIZE);
        n++;
    }
    notify_procs(PMIX_GROUP_CONSTRUCT_COMPLETE, leader, g->members, g->nmembers,
                 id, extra, n);
}

/* Remove @a proc from @a procs; the new count. */
static size_t procs_without(pmix_proc_t *procs, size_t n,
                            const pmix_proc_t *proc)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (!(procs[i].rank == proc->rank
              && PMIX_CHECK_NSPACE(procs[i].nspace, proc->nspace))) {
            procs[k++] = procs[i];
        }
    }
    return k;
}

/* A construct's leader (PMIX_GROUP_LEADER), if it is here, or without
 * one every participant here, hears PMIX_GROUP_INVITE_FAILED for each
 * member left out (it left before joining), before its reply.  Told
 * here rather than when the member left: only now does every server
 * know who leads. */
static void tell_left_out(const gop_t *op, const pmix_proc_t *final,
                          size_t nfinal, const rdp_srv_group_block_t *blocks,
                          size_t nblocks)
{
    const pmix_proc_t *lead = op->has_leader ? &op->leader : NULL;
    rdp_srv_nspace_t *ns;

    if (nfinal == op->nmembers) {
        return; /* final is a subset of the members: nobody left out */
    }
    /* a leader declared on another server whose CTL_LEADER has not come
     * yet: its own server's block says so */
    for (size_t b = 0; lead == NULL && b < nblocks; b++) {
        for (size_t i = 0; lead == NULL && i < blocks[b].nentries; i++) {
            if (blocks[b].entries[i].leads) {
                lead = &blocks[b].entries[i].proc;
            }
        }
    }
    ns = lead != NULL ? rdp_srv_nspace_find(lead->nspace) : NULL;
    if (op->invite
        || (lead != NULL
            && (ns == NULL || !rdp_srv_nspace_is_local(ns, lead->rank)))) {
        return;
    }
    for (size_t i = 0; i < op->nmembers; i++) {
        if (has_member(final, nfinal, &op->members[i])) {
            continue;
        }
        if (lead != NULL) {
            notify_leader_here(PMIX_GROUP_INVITE_FAILED, &op->members[i], lead,
                               op->id);
        } else {
            announce_left_out(op, &op->members[i], NULL);
        }
    }
}

/* Every participating server's block is here: answer the members. */
static void construct_done(gop_t *op, const rdp_srv_group_block_t *blocks,
                           size_t nblocks)
{
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t leader;
    bool invite;
    pmix_proc_t *final = NULL;
    size_t nfinal      = 0;
    bool have_cid      = false;
    uint64_t cid       = 0;
    rdp_buf_t buf;
    pmix_status_t status;

    status =
        rdp_srv_group_resolve(op->members, op->nmembers, blocks, nblocks,
                              op->optional, &final, &nfinal, &have_cid, &cid);
    if (status != PMIX_SUCCESS) {
        gop_fail(op, status);
        return;
    }
    for (size_t i = 0; i < op->nlost; i++) {
        /* a leader may have been in before it left */
        nfinal = procs_without(final, nfinal, &op->lost[i]);
    }
    rdp_buf_init(&buf);
    status = rdp_pack_i32(&buf, PMIX_SUCCESS);
    if (status == PMIX_SUCCESS) {
        status = pack_results(final, nfinal, have_cid, cid, &buf);
    }
    if (status == PMIX_SUCCESS) {
        status = pack_construct_bundle(final, nfinal, blocks, nblocks,
                                       parts_nspace(op), &buf);
    }
    if (status == PMIX_SUCCESS) {
        status = group_record(op, final, nfinal, have_cid, cid);
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(final);
        rdp_buf_cleanup(&buf);
        gop_fail(op, status);
        return;
    }
    rdp_log_debug(SERVER,
                  "group %s constructed: %zu members, context id %" PRIu64,
                  op->id, nfinal, have_cid ? cid : 0);
    invite = op->invite;
    leader = op->leader;
    memcpy(id, op->id, sizeof(id));
    tell_left_out(op, final, nfinal, blocks, nblocks);
    gop_answer(op, PMIX_SUCCESS, &buf); /* may free op */
    if (invite) {
        /* after the replies: a joiner knows the group when it hears */
        announce_complete(id, &leader, have_cid, cid);
    }
    early_lefts_take(id, true);
}

static void destruct_answer(gop_t *op, pmix_status_t status);

static void destruct_done(gop_t *op, const rdp_srv_group_block_t *blocks,
                          size_t nblocks)
{
    pmix_proc_t *final = NULL;
    size_t nfinal      = 0;
    bool have_cid;
    uint64_t cid;
    pmix_status_t status;

    /* every member not in the blocks is one that may be missing: one that
     * left or failed before (mark_departed) or under NOTIFY_TERMINATION /
     * FT_COLLECTIVE; any other that leaves fails the destruct at its own
     * server before the exchange */
    status = rdp_srv_group_resolve(op->members, op->nmembers, blocks, nblocks,
                                   true, &final, &nfinal, &have_cid, &cid);
    rdp_free(final);
    destruct_answer(op, status);
}

static void destruct_answer(gop_t *op, pmix_status_t status)
{
    if (status == PMIX_SUCCESS) {
        group_free(rdp_hash_remove_str(&gs.groups, op->id));
    }
    gop_answer(op, status, NULL);
}

static pmix_status_t pack_proc_sets(const pmix_proc_t *procs, size_t n,
                                    bool remote, rdp_buf_t *buf);

/* A fence over the group is done (with whoever remained): FENCE_ACK,
 * with the members' data when it collects (the other servers' blocks
 * are stored by now). */
static void fence_done(gop_t *op)
{
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = rdp_pack_i32(&buf, PMIX_SUCCESS);
    if (status == PMIX_SUCCESS && op->collect) {
        status = rdp_pack_u8(&buf, RDP_FENCE_BUNDLE_INLINE);
        if (status == PMIX_SUCCESS) {
            status = pack_proc_sets(op->members, op->nmembers, false, &buf);
        }
    } else if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(&buf, RDP_FENCE_NO_BUNDLE);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        gop_fail(op, status);
        return;
    }
    gop_answer(op, PMIX_SUCCESS, &buf);
}

static void gop_resolve(gop_t *op, const rdp_srv_group_block_t *blocks,
                        size_t nblocks)
{
    if (op->kind == GOP_CONSTRUCT) {
        construct_done(op, blocks, nblocks);
    } else if (op->kind == GOP_DESTRUCT) {
        destruct_done(op, blocks, nblocks);
    } else if (op->kind == GOP_FENCE) {
        fence_done(op);
    } else {
        gop_answer(op, PMIX_SUCCESS, NULL); /* a connect: whoever came */
    }
}

/* ---- every local member is here ---- */

static pmix_status_t pack_local_data(const gop_t *op, rdp_buf_t *buf);

/* This server's block; with @a data, the remote-visible committed data
 * of its members that arrived as the block's bundle (an exchange's
 * block), packed in place; without, no bundle (local data is in the
 * kvs). */
static pmix_status_t pack_own_block(const gop_t *op, bool data, rdp_buf_t *buf)
{
    size_t mark          = 0;
    pmix_status_t status = rdp_srv_group_block_pack_head(
        buf, op->want_cid, op->kind == GOP_CONSTRUCT ? next_cid() : 0,
        op->nparts);

    for (size_t i = 0; status == PMIX_SUCCESS && i < op->nparts; i++) {
        const gpart_t *p = &op->parts[i];
        rdp_srv_group_entry_t e;

        e.proc   = p->proc;
        e.joined = p->arrived;
        e.leads =
            op->kind == GOP_CONSTRUCT && !op->invite && is_leader(op, &p->proc);
        e.ginfo  = p->ginfo;
        e.nginfo = p->nginfo;
        status   = rdp_srv_group_block_pack_entry(buf, &e);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_group_block_bundle_begin(buf, &mark);
    }
    if (status == PMIX_SUCCESS && data) {
        status = pack_local_data(op, buf);
    }
    if (status == PMIX_SUCCESS) {
        rdp_srv_group_block_bundle_end(buf, mark);
    }
    return status;
}

static void gop_local(gop_t *op)
{
    rdp_srv_group_block_t blk;
    rdp_buf_t buf;
    pmix_status_t status;

    if (op->kind == GOP_DESTRUCT) {
        /* its block never decides anything (destruct_done resolves it
         * optional: a member that may not be missing failed it here
         * first), and alone it needs no packing: answer at once */
        destruct_answer(op, PMIX_SUCCESS);
        return;
    }
    if (op->kind != GOP_CONSTRUCT) {
        gop_resolve(op, NULL, 0); /* fences and connects read no block */
        return;
    }
    rdp_buf_init(&buf);
    status = pack_own_block(op, false, &buf);
    if (status == PMIX_SUCCESS) {
        status =
            rdp_srv_group_block_unpack(buf.data, buf.size, my_index(), &blk);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        gop_fail(op, status);
        return;
    }
    gop_resolve(op, &blk, 1);
    rdp_srv_group_block_clear(&blk);
    rdp_buf_cleanup(&buf);
}

/* ---- across servers ---- */

/* The exchange's identity: every participating server derives it the
 * same way; the generation number last (xchg.h). */
static size_t xchg_key(const gop_t *op, uint8_t *key)
{
    size_t n = op_key(op->kind, op->id, key + 1);

    key[0] = 'G';
    memcpy(key + 1 + n, &op->gen, sizeof(op->gen));
    return 1 + n + sizeof(op->gen);
}
#define XCHG_KEY_MAX (1 + OP_KEY_MAX + sizeof(uint64_t))

/* The committed data of @a procs this server holds, as a bundle (one set
 * per nspace, fence.c's form): with @a remote only what other nodes may
 * see (an exchange's contribution), else what each is allowed here (a
 * reply to local members). */
static pmix_status_t pack_proc_sets(const pmix_proc_t *procs, size_t n,
                                    bool remote, rdp_buf_t *buf)
{
    size_t count_at      = buf->size;
    uint32_t nsets       = 0;
    pmix_status_t status = rdp_pack_u32(buf, 0);

    for (size_t i = 0; status == PMIX_SUCCESS && i < n; i++) {
        const char *nspace   = procs[i].nspace;
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(nspace);
        size_t nsect_at;
        uint32_t nsect = 0;
        bool seen      = false;

        for (size_t k = 0; k < i && !seen; k++) {
            seen = PMIX_CHECK_NSPACE(procs[k].nspace, nspace);
        }
        if (seen) {
            continue;
        }
        status   = rdp_pack_string(buf, nspace);
        nsect_at = buf->size;
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u32(buf, 0);
        }
        for (size_t k = i; status == PMIX_SUCCESS && k < n; k++) {
            pmix_rank_t r = procs[k].rank;
            bool local    = ns != NULL && rdp_srv_nspace_is_local(ns, r);
            uint32_t mask = remote  ? RDP_SCOPES_REMOTE
                            : local ? RDP_SCOPES_LOCAL
                                    : RDP_SCOPES_ALL;

            if (!PMIX_CHECK_NSPACE(procs[k].nspace, nspace)
                || !rdp_kvs_has_rank(rdp_srv.modex, nspace, r)) {
                continue;
            }
            status = rdp_srv_pack_proc_section(nspace, r, mask, buf);
            nsect++;
        }
        if (status == PMIX_SUCCESS) {
            uint32_t le = htole32(nsect);

            memcpy(buf->data + nsect_at, &le, sizeof(le));
            nsets++;
        }
    }
    if (status == PMIX_SUCCESS) {
        uint32_t le = htole32(nsets);

        memcpy(buf->data + count_at, &le, sizeof(le));
    }
    return status;
}

/* The remote-visible committed data of this server's members that
 * arrived, as a bundle. */
static pmix_status_t pack_local_data(const gop_t *op, rdp_buf_t *buf)
{
    pmix_proc_t few[8]; /* most nodes host a few members */
    pmix_proc_t *in =
        op->nparts <= 8 ? few : rdp_calloc(op->nparts, sizeof(*in));
    size_t n        = 0;
    pmix_status_t status;

    if (in == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        if (op->parts[i].arrived) {
            in[n++] = op->parts[i].proc;
        }
    }
    status = pack_proc_sets(in, n, true, buf);
    if (in != few) {
        rdp_free(in);
    }
    return status;
}

/* What the exchange's completion needs to find its tracker again (the
 * tracker may have been answered and freed meanwhile). */
typedef struct xref {
    uint8_t kind;
    char id[PMIX_MAX_NSLEN + 1];
    uint64_t gen;
} xref_t;

/* The tracker @a x names, if it is still that operation, unanswered. */
static gop_t *xref_lookup(const xref_t *x)
{
    uint8_t key[OP_KEY_MAX];
    gop_t *op;

    if (!gs.init) {
        return NULL;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(x->kind, x->id, key));
    return op != NULL && op->gen == x->gen && op->state != GOP_DONE ? op : NULL;
}

static gop_t *xref_find(const xref_t *x)
{
    gop_t *op = xref_lookup(x);

    return op != NULL && op->state == GOP_XCHG ? op : NULL;
}

static xref_t *xref_new(const gop_t *op)
{
    xref_t *x = rdp_calloc(1, sizeof(*x));

    if (x != NULL) {
        x->kind = op->kind;
        x->gen  = op->gen;
        memcpy(x->id, op->id, sizeof(x->id));
    }
    return x;
}

/* Start an exchange of @a buf (RDP_COLL_HEADROOM, then this server's
 * block; emptied) over the servers that host @a op's members. */
static void xchg_done(pmix_status_t status, const rdp_srv_xchg_block_t *blocks,
                      size_t nblocks, void *arg);

/* A destruct (or connect) over the engine is a barrier: its blocks
 * decide nothing (every member that may not be missing either came or
 * failed it at its own server first), so none need travel. */
static bool gop_barrier(const gop_t *op)
{
    /* a fence's servers may not agree whether it collects (each goes by
     * its own first member): always an allgather, as a construct */
    return op->kind != GOP_CONSTRUCT && op->kind != GOP_FENCE
           && rdp_srv_xchg_me() != UINT32_MAX;
}

static pmix_status_t xchg_begin(gop_t *op, rdp_buf_t *buf, const uint8_t *key,
                                size_t keylen, rdp_srv_xchg_done_fn done,
                                uint64_t *handle_p)
{
    rdp_srv_xchg_args_t args;
    xref_t *x   = xref_new(op);
    size_t size = 0;
    pmix_status_t status;

    memset(&args, 0, sizeof(args));
    args.own_buf = rdp_buf_take(buf, &size);
    rdp_buf_cleanup(buf);
    if (x == NULL) {
        rdp_free(args.own_buf);
        return PMIX_ERR_NOMEM;
    }
    args.key     = key;
    args.keylen  = keylen;
    args.procs   = op->members;
    args.nprocs  = op->nmembers;
    args.collect = !(done == xchg_done && gop_barrier(op));
    args.timeout = op->timeout;
    args.len     = size - RDP_COLL_HEADROOM;
    if (!args.collect) {
        rdp_free(args.own_buf);
        args.own_buf = NULL;
        args.len     = 0;
    }
    rdp_log_debug(SERVER, "group %s %s: %s between the servers", op->id,
                  kind_name(op->kind), args.collect ? "allgather" : "barrier");
    if (rdp_srv_xchg_me() != UINT32_MAX) {
        status = rdp_srv_xchg_start(&args, done, x, handle_p);
    } else if (done == xchg_done) {
        /* without the engine the host carries it (group_host.c) */
        status = rdp_srv_group_host_start(op->kind == GOP_CONSTRUCT, op->id,
                                          &args, done, x, handle_p);
    } else {
        /* leader votes need the engine (docs/status.md) */
        rdp_free(args.own_buf);
        status = PMIX_ERR_NOT_SUPPORTED;
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(x);
    }
    return status;
}

static pmix_status_t unpack_blocks(const rdp_srv_xchg_block_t *blocks,
                                   size_t nblocks, rdp_srv_group_block_t *out)
{
    uint32_t me = my_index();

    for (size_t i = 0; i < nblocks; i++) {
        pmix_status_t status = rdp_srv_group_block_unpack(
            blocks[i].data, blocks[i].len, blocks[i].origin, &out[i]);

        if (status != PMIX_SUCCESS) {
            return status;
        }
        /* the other servers' members' data, for the reply's bundle */
        if (blocks[i].origin != me && out[i].bundlelen > 0) {
            status = rdp_srv_store_bundles(out[i].bundle, out[i].bundlelen);
            if (status < 0) {
                return status;
            }
        }
    }
    return PMIX_SUCCESS;
}

/* The servers' blocks came while a new leader is being chosen: whether
 * the construct completes depends on the vote, so keep them (a copy). */
static pmix_status_t hold_blocks(gop_t *op, const rdp_srv_xchg_block_t *blocks,
                                 size_t nblocks)
{
    op->held = rdp_calloc(nblocks + 1, sizeof(*op->held));
    if (op->held == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nblocks; i++) {
        void *copy = rdp_malloc(blocks[i].len + 1);

        if (copy == NULL) {
            held_free(op);
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, blocks[i].data, blocks[i].len);
        op->held[i]      = blocks[i];
        op->held[i].data = copy;
        op->nheld++;
    }
    return PMIX_SUCCESS;
}

static void xchg_done(pmix_status_t status, const rdp_srv_xchg_block_t *blocks,
                      size_t nblocks, void *arg)
{
    xref_t *x                     = arg;
    gop_t *op                     = xref_find(x);
    rdp_srv_group_block_t few[8]; /* most exchanges are over few servers */
    rdp_srv_group_block_t *parsed = NULL;

    rdp_free(x);
    if (op == NULL) {
        return; /* answered already (failed here) */
    }
    if (status == PMIX_SUCCESS && op->leader_lost && op->vstate != VOTE_DONE) {
        status = hold_blocks(op, blocks, nblocks);
        if (status == PMIX_SUCCESS) {
            return; /* resolved when the vote ends (vote_done) */
        }
    }
    op->state = GOP_GATHER; /* no exchange to cancel any more */
    if (status == PMIX_SUCCESS && gop_barrier(op)) {
        if (op->kind == GOP_DESTRUCT) {
            destruct_answer(op, PMIX_SUCCESS);
        } else {
            gop_answer(op, PMIX_SUCCESS, NULL);
        }
        return;
    }
    if (status == PMIX_SUCCESS) {
        parsed = nblocks <= 8 ? memset(few, 0, sizeof(few))
                              : rdp_calloc(nblocks + 1, sizeof(*parsed));
        status = parsed != NULL ? unpack_blocks(blocks, nblocks, parsed)
                                : PMIX_ERR_NOMEM;
    }
    if (status == PMIX_SUCCESS) {
        gop_resolve(op, parsed, nblocks);
    } else {
        rdp_log_error(SERVER, "group %s: exchange between servers failed: %s",
                      op->id, rdp_status_name(status));
        gop_fail_here(op, status, false);
    }
    for (size_t i = 0; parsed != NULL && i < nblocks; i++) {
        rdp_srv_group_block_clear(&parsed[i]);
    }
    if (parsed != few) {
        rdp_free(parsed);
    }
}

/* Hand this server's block to the exchange between the servers. */
static pmix_status_t gop_exchange(gop_t *op)
{
    static const uint8_t headroom[RDP_COLL_HEADROOM];
    uint8_t key[XCHG_KEY_MAX];
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = rdp_buf_append(&buf, headroom, sizeof(headroom));
    if (status == PMIX_SUCCESS) {
        status = pack_own_block(op,
                                op->kind == GOP_CONSTRUCT
                                    || (op->kind == GOP_FENCE && op->collect),
                                &buf);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        return status;
    }
    return xchg_begin(op, &buf, key, xchg_key(op, key), xchg_done, &op->xchg);
}

/* ---- told between servers (P2P channel GROUP_CTL) ----
 * message := u8 CTL_FAIL, u8 kind, str id, u64 gen, i32 status,
 *            u8 has_culprit, [proc culprit: the member that left first]
 *          | u8 CTL_LEFT, str id, proc, i32 code (PMIX_GROUP_LEFT or
 *            PMIX_GROUP_MEMBER_FAILED)
 *          | u8 CTL_OPEN, u8 kind, str id, u64 gen, u8 flags, u32 timeout,
 *            proc leader (invitations), procs members
 *          | u8 CTL_EVENT, i32 code, proc source, str id, proc target
 * CTL_OPEN: a tracker was made here; the other servers make theirs now,
 * so that one whose members all left before calling still takes part
 * (with nobody joined) or fails the operation, and every server starts
 * its timer. */
enum {
    CTL_FAIL   = 1,
    CTL_LEFT   = 2,
    CTL_OPEN   = 3,
    CTL_EVENT  = 4,
    CTL_LEADER = 5,
    CTL_ABORT  = 6, /* u8 kind, str id, u64 gen: the leader aborted */
    CTL_ADD    = 7, /* as CTL_OPEN: the leader invited more members */
    CTL_SEAL   = 8  /* u8 kind, str id, u64 gen, u32 n: members final */
};
/* CTL_LEADER: u8 kind, str id, u64 gen, u8 what, proc leader */
enum {
    LEADER_DECLARED = 0, /* a member gave PMIX_GROUP_LEADER */
    LEADER_LOST     = 1  /* the leader left before completion */
};
enum {
    OPEN_OPTIONAL    = 1,
    OPEN_NOTIFY_TERM = 2,
    OPEN_INVITE      = 4,
    OPEN_LEADER      = 8, /* the leader field names the leader */
    OPEN_COLLECT     = 16 /* a fence that collects data */
};

static size_t doom_key(uint8_t kind, const char *id, uint64_t gen, uint8_t *key)
{
    size_t n = op_key(kind, id, key);

    memcpy(key + n, &gen, sizeof(gen));
    return n + sizeof(gen);
}
#define DOOM_KEY_MAX (OP_KEY_MAX + sizeof(uint64_t))

/* Send @a buf on the group channel to every other server: cheaper than
 * finding which of them host members, and only on failures and
 * departures. */
static void send_all(const rdp_buf_t *buf)
{
    uint32_t me = rdp_srv_xchg_me(), n = rdp_srv_xchg_nservers();

    for (uint32_t s = 0; me != UINT32_MAX && s < n; s++) {
        if (s != me && !rdp_srv_p2p_peer_failed(s)) {
            (void)rdp_srv_p2p_send(s, RDP_SRV_CH_GROUP_CTL, buf);
        }
    }
}

/* u8 type, u8 kind, str id, u64 gen: how CTL_FAIL and CTL_OPEN begin */
static pmix_status_t pack_ctl_head(rdp_buf_t *buf, uint8_t type,
                                   const gop_t *op)
{
    pmix_status_t rc = rdp_pack_u8(buf, type);

    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u8(buf, op->kind);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_string(buf, op->id);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u64(buf, op->gen);
    }
    return rc;
}

/* u8 kind, str id, u64 gen: the head's rest, as the receiver reads it */
static pmix_status_t unpack_ctl_head(rdp_rbuf_t *rb, uint8_t *kind, char *id,
                                     uint64_t *gen)
{
    pmix_status_t rc = rdp_unpack_u8(rb, kind);

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_string_into(rb, id, PMIX_MAX_NSLEN + 1);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u64(rb, gen);
    }
    return rc;
}

/* Send @a buf (packed with status @a rc) to the others, and clean it. */
static void send_ctl(rdp_buf_t *buf, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        send_all(buf);
    }
    rdp_buf_cleanup(buf);
}

/* Start a control message of @a type about @a op (its head packed,
 * status in *rc); false without the engine (nobody to tell). */
static bool ctl_begin(rdp_buf_t *buf, uint8_t type, const gop_t *op,
                      pmix_status_t *rc)
{
    if (rdp_srv_xchg_me() == UINT32_MAX) {
        return false;
    }
    rdp_buf_init(buf);
    *rc = pack_ctl_head(buf, type, op);
    return true;
}

static void tell_others(const gop_t *op, pmix_status_t status)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (rdp_srv_xchg_me() == UINT32_MAX) {
        uint8_t key[XCHG_KEY_MAX];

        rdp_srv_group_host_fail(op->kind == GOP_CONSTRUCT, op->id, key,
                                xchg_key(op, key), op->members, op->nmembers,
                                status);
        return;
    }
    if (!ctl_begin(&buf, CTL_FAIL, op, &rc)) {
        return;
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_i32(&buf, status);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u8(&buf, op->has_culprit ? 1 : 0);
    }
    if (rc == PMIX_SUCCESS && op->has_culprit) {
        rc = rdp_pack_proc(&buf, &op->culprit);
    }
    send_ctl(&buf, rc);
}

static gpart_t *gop_part(gop_t *op, const pmix_proc_t *proc);

/* A destruct or fault-tolerant fence of group @a id running here no
 * longer waits for @a proc, which is no member any more. */
static void ops_forget_member(const char *id, const pmix_proc_t *proc)
{
    static const uint8_t kinds[] = {GOP_DESTRUCT, GOP_FENCE};

    for (size_t i = 0; i < sizeof(kinds); i++) {
        uint8_t key[OP_KEY_MAX];
        gop_t *op     = rdp_hash_get(&gs.ops, key, op_key(kinds[i], id, key));
        gpart_t *part = op != NULL ? gop_part(op, proc) : NULL;

        if (part != NULL && op->state == GOP_GATHER && !part->arrived
            && !part->gone) {
            part->gone = true;
            gop_maybe_ready(op); /* may answer and free it */
        }
    }
}

/* A member left a group (here or on another server): forget it and
 * tell this node's other members @a code (PMIX_GROUP_LEFT, or
 * PMIX_GROUP_MEMBER_FAILED for one that terminated). */
static void member_left(const char *id, const pmix_proc_t *proc,
                        pmix_status_t code)
{
    group_t *g = gs.init ? rdp_hash_get_str(&gs.groups, id) : NULL;
    size_t k   = 0;

    if (g == NULL) {
        return;
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        if (!(g->members[i].rank == proc->rank
              && PMIX_CHECK_NSPACE(g->members[i].nspace, proc->nspace))) {
            g->members[k++] = g->members[i];
        }
    }
    g->nmembers = k;
    if (code == PMIX_GROUP_LEFT) {
        notify_procs(code, proc, g->members, g->nmembers, id, NULL, 0);
    } else {
        pmix_info_t affected;

        memset(&affected, 0, sizeof(affected));
        PMIX_LOAD_KEY(affected.key, PMIX_EVENT_AFFECTED_PROC);
        affected.value.type      = PMIX_PROC;
        affected.value.data.proc = (pmix_proc_t *)proc;
        notify_procs(code, proc, g->members, g->nmembers, id, &affected, 1);
    }
    /* last: a destruct that completes frees g */
    ops_forget_member(id, proc);
}

static void tell_left(const char *id, const pmix_proc_t *proc,
                      pmix_status_t code)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (rdp_srv_xchg_me() == UINT32_MAX) {
        return;
    }
    rdp_buf_init(&buf);
    rc = rdp_pack_u8(&buf, CTL_LEFT);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_string(&buf, id);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc(&buf, proc);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_i32(&buf, code);
    }
    send_ctl(&buf, rc);
}

/* Departures told before this server recorded the group: another server
 * may finish a construct, and see a member leave, before this one has its
 * result.  Kept while a construct of that id runs here, applied when it
 * completes (so the members here hear of it after their construct). */
#define EARLY_LEFT_MAX 256

typedef struct early_left {
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t proc;
    int32_t code;
} early_left_t;

static early_left_t early_lefts[EARLY_LEFT_MAX];
static size_t nearly_lefts;

static void early_left_keep(const char *id, const pmix_proc_t *proc,
                            int32_t code)
{
    early_left_t *e;

    if (nearly_lefts == EARLY_LEFT_MAX) {
        rdp_log_warn(SERVER, "too many early group departures; dropping one");
        memmove(&early_lefts[0], &early_lefts[1],
                (EARLY_LEFT_MAX - 1) * sizeof(early_lefts[0]));
        nearly_lefts--;
    }
    e = &early_lefts[nearly_lefts++];
    snprintf(e->id, sizeof(e->id), "%s", id);
    e->proc = *proc;
    e->code = code;
}

/* Apply (or, @a apply false: forget) the early departures of group @a id */
static void early_lefts_take(const char *id, bool apply)
{
    size_t k = 0;

    for (size_t i = 0; i < nearly_lefts; i++) {
        early_left_t e = early_lefts[i];

        if (strcmp(e.id, id) != 0) {
            early_lefts[k++] = e;
        } else if (apply) {
            member_left(e.id, &e.proc, e.code);
        }
    }
    nearly_lefts = k;
}

static void ctl_left(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t proc;
    int32_t code;
    pmix_status_t rc = rdp_unpack_string_into(rb, id, sizeof(id));

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc(rb, &proc);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_i32(rb, &code);
    }
    if (rc == PMIX_SUCCESS && code != PMIX_GROUP_LEFT
        && code != PMIX_GROUP_MEMBER_FAILED) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group message from server %u: %s", server,
                      rdp_status_name(rc));
        return;
    }
    if (rdp_hash_get_str(&gs.groups, id) == NULL) {
        uint8_t key[OP_KEY_MAX];

        if (rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, id, key))
            != NULL) {
            early_left_keep(id, &proc, code);
        }
        return;
    }
    member_left(id, &proc, code);
}

static void ctl_fail(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    uint8_t kind, key[DOOM_KEY_MAX];
    uint64_t gen;
    int32_t status;
    uint8_t has_culprit = 0;
    pmix_proc_t culprit;
    pmix_status_t rc = unpack_ctl_head(rb, &kind, id, &gen);
    gop_t *op;

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_i32(rb, &status);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u8(rb, &has_culprit);
    }
    if (rc == PMIX_SUCCESS && has_culprit != 0) {
        rc = rdp_unpack_proc(rb, &culprit);
    }
    if (rc == PMIX_SUCCESS
        && (kind < GOP_CONSTRUCT || kind > GOP_KIND_MAX
            || status == PMIX_SUCCESS)) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS) {
        rc = gs_init();
    }
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group message from server %u: %s", server,
                      rdp_status_name(rc));
        return;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(kind, id, key));
    if (op != NULL && op->gen == gen) {
        rdp_log_info(SERVER, "group %s failed on server %u: %s", id, server,
                     rdp_status_name(status));
        if (op->has_leader && !op->leader_lost
            && status == PMIX_GROUP_CONSTRUCT_ABORT && op->state != GOP_DONE) {
            announce_leader_failed(op); /* this node's members */
        }
        if (has_culprit != 0) {
            set_culprit(op, &culprit);
        }
        gop_fail_here(op, status, false);
        return;
    }
    if (op == NULL || op->gen < gen) {
        /* its tracker here is not made yet: it fails when it is */
        size_t keylen  = doom_key(kind, id, gen, key);
        pmix_proc_t *c = has_culprit != 0 ? rdp_malloc(sizeof(*c)) : NULL;
        void *old      = NULL;

        (void)rdp_hash_set(&gs.dooms, key, keylen, (void *)(intptr_t)status,
                           NULL);
        if (c != NULL) {
            *c = culprit;
            if (rdp_hash_set(&gs.culprits, key, keylen, c, &old)
                != PMIX_SUCCESS) {
                rdp_free(c);
            }
            rdp_free(old);
        }
    }
}

static void gop_start_timer(gop_t *op)
{
    if (op->timeout > 0 && op->timer == NULL
        && rdp_timer_create(rdp_rt.loop, gop_timeout, op, &op->timer)
               == PMIX_SUCCESS) {
        rdp_timer_start(op->timer, op->timeout);
    }
}

/* The servers that host @a members, sorted (NULL without the engine or
 * on error: nobody to tell). */
static uint32_t *host_servers(const pmix_proc_t *members, size_t nmembers,
                              uint32_t *n_p)
{
    uint32_t *srv = NULL;

    *n_p = 0;
    if (rdp_srv_xchg_servers(members, nmembers, &srv, n_p) != PMIX_SUCCESS) {
        return NULL;
    }
    return srv;
}

/* Send @a buf on the group channel to the servers that host @a members,
 * but this one and @a skip. */
/* Send @a buf to server @a s on the group channel (test_run_group.sh
 * counts these lines: how many control messages an operation costs). */
static void send_to(uint32_t s, const rdp_buf_t *buf)
{
    rdp_log_debug(SERVER, "group control message %u to server %u",
                  (unsigned)buf->data[0], s);
    (void)rdp_srv_p2p_send(s, RDP_SRV_CH_GROUP_CTL, buf);
}

static void send_hosts(const rdp_buf_t *buf, const pmix_proc_t *members,
                       size_t nmembers, uint32_t skip)
{
    uint32_t n, me = rdp_srv_xchg_me();
    uint32_t *srv = host_servers(members, nmembers, &n);

    for (uint32_t i = 0; i < n; i++) {
        if (srv[i] != me && srv[i] != skip
            && !rdp_srv_p2p_peer_failed(srv[i])) {
            send_to(srv[i], buf);
        }
    }
    rdp_free(srv);
}

/* CTL_OPEN goes through the relay, the lowest-indexed server that hosts
 * members: the others send it there, the relay to all of them, once per
 * operation (2 (M - 1) messages at most, not M (M - 1)).  UINT32_MAX: no
 * usable relay (send to every host). */
static uint32_t open_relay(const pmix_proc_t *members, size_t nmembers)
{
    uint32_t n, relay = UINT32_MAX;
    uint32_t *srv = host_servers(members, nmembers, &n);

    if (n > 0 && !rdp_srv_p2p_peer_failed(srv[0])) {
        relay = srv[0];
    }
    rdp_free(srv);
    return relay;
}

/* Send @a buf to the relay of @a members, or as the relay to every
 * other host of them. */
static void send_via_relay(const rdp_buf_t *buf, const pmix_proc_t *members,
                           size_t nmembers)
{
    uint32_t relay = open_relay(members, nmembers);

    if (relay != UINT32_MAX && relay != rdp_srv_xchg_me()) {
        send_to(relay, buf);
    } else {
        send_hosts(buf, members, nmembers, UINT32_MAX);
    }
}

/* A tracker was made here for a local member: the relay (or, from the
 * relay, every other host) makes its own. */
/* CTL_OPEN (via the relay) or CTL_ADD (to every server) about @a op. */
static void tell_open_as(const gop_t *op, uint8_t type)
{
    uint8_t flags = (op->optional ? OPEN_OPTIONAL : 0)
                    | (op->notify_term ? OPEN_NOTIFY_TERM : 0)
                    | (op->invite ? OPEN_INVITE : 0)
                    | (op->has_leader ? OPEN_LEADER : 0)
                    | (op->collect ? OPEN_COLLECT : 0);
    rdp_buf_t buf;
    pmix_status_t rc;

    if (!ctl_begin(&buf, type, op, &rc)) {
        return;
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u8(&buf, flags);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u32(&buf, (uint32_t)op->timeout);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc(&buf, &op->leader);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc_array(&buf, op->members, op->nmembers);
    }
    if (rc == PMIX_SUCCESS && type == CTL_ADD) {
        send_all(&buf); /* servers that hosted no member too */
    } else if (rc == PMIX_SUCCESS) {
        send_via_relay(&buf, op->members, op->nmembers);
    }
    rdp_buf_cleanup(&buf);
}

static void tell_open(const gop_t *op)
{
    tell_open_as(op, CTL_OPEN);
}

/* ---- CTL_OPEN deferred (constructs and destructs) ----
 * A construct or destruct usually completes before any server needs its
 * OPEN: every host's members call within a few milliseconds of each
 * other, and each host makes its tracker from its own members' calls
 * (the engine keeps blocks that come before that).  The OPEN matters
 * only for a host whose members will never call (they left first) and
 * for the other hosts' timers; yet sent at once, its 2 (M - 1) messages
 * cross the exchange and cost each receiver a wake-up (bench/RESULTS.md,
 * "Issue 10, the OPEN deferred").  So a server that made its tracker
 * for a local member sends the OPEN only if the operation still runs
 * RDPMIX_GROUP_OPEN_DELAY later.  Invitations (the invitees learn of them
 * through it) and operations with a leader (CTL_LEADER must not overtake
 * it) send it at once; fences and connects over groups too (they are
 * not what the delay is for). */

static double open_delay(void)
{
    static double delay = -1;

    if (delay < 0) {
        delay = rdp_cfg_seconds(RDP_CFG_GROUP_OPEN_DELAY);
    }
    return delay;
}

/* The OPEN still pending here goes now. */
static void open_now(gop_t *op)
{
    if (op->open_pending) {
        op->open_pending = false;
        rdp_list_del(&op->open_link);
        tell_open(op);
    }
}

static void opens_arm(double now);

/* The deferred OPENs that are due go, unless their operation was
 * answered meanwhile (then it stays pending, as nobody needs it). */
static void opens_fired(void *arg)
{
    double now = rdp_time_now();

    (void)arg;
    gs.open_armed = false;
    while (!rdp_list_is_empty(&gs.opens)) {
        gop_t *op = rdp_container_of(gs.opens.next, gop_t, open_link);

        if (op->open_at > now) {
            break;
        }
        rdp_list_del(&op->open_link);
        if (op->state != GOP_DONE) {
            open_now(op);
        }
    }
    opens_arm(now);
}

/* One timer for every deferred OPEN (the first one due), not one per
 * operation: creating, arming and destroying a timer per construct and
 * destruct cost each server ~2 k instructions (bench/RESULTS.md, "Issue
 * 10 ... construct vs collecting fence in the daemon"). */
static void opens_arm(double now)
{
    const gop_t *first;

    if (gs.open_armed || rdp_list_is_empty(&gs.opens)) {
        return;
    }
    first = rdp_container_of(gs.opens.next, gop_t, open_link);
    rdp_timer_start(gs.open_timer, first->open_at - now);
    gs.open_armed = true;
}

static void open_soon(gop_t *op)
{
    /* without the engine nobody is told (the host carries it) */
    bool deferrable = (op->kind == GOP_CONSTRUCT || op->kind == GOP_DESTRUCT)
                      && !op->invite && !op->has_leader
                      && rdp_srv_xchg_me() != UINT32_MAX;
    double now;

    if (!deferrable || open_delay() <= 0 || op->open_deferred
        || (gs.open_timer == NULL
            && rdp_timer_create(rdp_rt.loop, opens_fired, NULL, &gs.open_timer)
                   != PMIX_SUCCESS)) {
        tell_open(op);
        return;
    }
    /* every OPEN waits the same delay: appended, the list stays sorted */
    now               = rdp_time_now();
    op->open_deferred = true;
    op->open_pending  = true;
    op->open_at       = now + open_delay();
    rdp_list_push_back(&gs.opens, &op->open_link);
    opens_arm(now);
}

/* Another server's OPEN came for an operation whose OPEN is pending
 * here.  The relay sends its own now (it forwards nothing for an
 * operation it has: the other hosts count on its OPEN); any other server
 * drops its own: the relay, or the sender without a relay, has told
 * every host. */
static void open_heard(uint8_t kind, const char *id, uint64_t gen,
                       const pmix_proc_t *members, size_t nmembers)
{
    uint8_t key[OP_KEY_MAX];
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(kind, id, key));

    if (op == NULL || op->gen != gen || !op->open_pending) {
        return;
    }
    if (open_relay(members, nmembers) == rdp_srv_xchg_me()) {
        open_now(op);
    } else {
        op->open_pending = false;
        rdp_list_del(&op->open_link);
    }
}

/* At the relay, a message of @a type (@a body: after its type byte) from
 * @a from goes on to the other hosts of @a members. */
static void relay_forward(uint32_t from, uint8_t type,
                          const pmix_proc_t *members, size_t nmembers,
                          const uint8_t *body, size_t bodylen)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (open_relay(members, nmembers) != rdp_srv_xchg_me()) {
        return;
    }
    rdp_buf_init(&buf);
    rc = rdp_pack_u8(&buf, type);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_buf_append(&buf, body, bodylen);
    }
    if (rc == PMIX_SUCCESS) {
        send_hosts(&buf, members, nmembers, from);
    }
    rdp_buf_cleanup(&buf);
}

/* At the relay, a CTL_OPEN for an operation it has not opened yet goes
 * on to the other hosts; one it opened was sent or forwarded then. */
static void relay_open(uint32_t from, uint8_t kind, const char *id,
                       uint64_t gen, const pmix_proc_t *members,
                       size_t nmembers, const uint8_t *body, size_t bodylen)
{
    uint8_t key[OP_KEY_MAX];
    size_t keylen = op_key(kind, id, key);

    if ((uint64_t)(uintptr_t)rdp_hash_get(&gs.gens, key, keylen) <= gen) {
        relay_forward(from, CTL_OPEN, members, nmembers, body, bodylen);
    }
}

static void mark_departed(gop_t *op);

/* ---- CTL_OPEN of an operation whose previous one is still here ----
 * Another server's OPEN of generation g + 1 can come while this server's
 * tracker of generation g (same kind and id) is still finishing its
 * exchange (the others finished theirs first and their members went on
 * to the next fault-tolerant fence), or kept for a local member that
 * has not called it.  Dropping it left a server whose members then all
 * died out of the operation, and the others' ended with PMIX_TIMEOUT;
 * so it is kept and applied once that tracker goes (gop_maybe_free). */
typedef struct deferred_open {
    struct deferred_open *next;
    uint8_t kind;
    char id[PMIX_MAX_NSLEN + 1];
    uint64_t gen;
    uint8_t flags;
    uint32_t timeout;
    pmix_proc_t leader;
    pmix_proc_t *members;
    size_t nmembers;
    /* early OPENs only (nswait): the OPEN as it came, to be relayed
     * once this server knows the hosts */
    uint32_t from;
    uint8_t *body;
    size_t bodylen;
} deferred_open_t;

static deferred_open_t *deferred_opens; /* in arrival order */
static bool deferred_posted;

static void open_tracker(uint8_t kind, const char *id, uint64_t gen,
                         uint8_t flags, uint32_t timeout,
                         const pmix_proc_t *leader, pmix_proc_t *members,
                         size_t nmembers);

/* Takes @a members; appends them to @a list; NULL if out of memory. */
static deferred_open_t *keep_open(deferred_open_t **list, uint8_t kind,
                                  const char *id, uint64_t gen, uint8_t flags,
                                  uint32_t timeout, const pmix_proc_t *leader,
                                  pmix_proc_t *members, size_t nmembers)
{
    deferred_open_t *d = rdp_calloc(1, sizeof(*d)), **tail = list;

    if (d == NULL) {
        rdp_log_error(SERVER, "group %s: no memory to keep an operation", id);
        rdp_free(members);
        return NULL;
    }
    d->kind = kind;
    memcpy(d->id, id, strnlen(id, PMIX_MAX_NSLEN));
    d->gen      = gen;
    d->flags    = flags;
    d->timeout  = timeout;
    d->leader   = *leader;
    d->members  = members;
    d->nmembers = nmembers;
    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    *tail = d;
    return d;
}

/* Takes @a members. */
static void defer_open(uint8_t kind, const char *id, uint64_t gen,
                       uint8_t flags, uint32_t timeout,
                       const pmix_proc_t *leader, pmix_proc_t *members,
                       size_t nmembers)
{
    if (keep_open(&deferred_opens, kind, id, gen, flags, timeout, leader,
                  members, nmembers)
        != NULL) {
        rdp_log_debug(SERVER, "group %s %s %llu: after the one still here", id,
                      kind_name(kind), (unsigned long long)gen);
    }
}

/* The first kept OPEN whose previous tracker is gone, unlinked; NULL. */
static deferred_open_t *deferred_ready(void)
{
    deferred_open_t **pp = &deferred_opens;

    while (*pp != NULL) {
        uint8_t key[OP_KEY_MAX];
        deferred_open_t *d = *pp;

        if (rdp_hash_get(&gs.ops, key, op_key(d->kind, d->id, key)) == NULL) {
            *pp = d->next;
            return d;
        }
        pp = &d->next;
    }
    return NULL;
}

static void deferred_opens_run(void *arg)
{
    deferred_open_t *d;

    (void)arg;
    deferred_posted = false;
    while (gs.init && (d = deferred_ready()) != NULL) {
        open_tracker(d->kind, d->id, d->gen, d->flags, d->timeout, &d->leader,
                     d->members, d->nmembers); /* takes members */
        rdp_free(d);
    }
}

/* From the loop, not inside the caller that freed a tracker. */
static void deferred_opens_post(void)
{
    if (deferred_opens != NULL && !deferred_posted
        && rdp_loop_post(rdp_rt.loop, deferred_opens_run, NULL)
               == PMIX_SUCCESS) {
        deferred_posted = true;
    }
}

static void kept_opens_drop(deferred_open_t **list)
{
    while (*list != NULL) {
        deferred_open_t *d = *list;

        *list = d->next;
        rdp_free(d->members);
        rdp_free(d->body);
        rdp_free(d);
    }
}

/* Make the tracker another server opened, unless it is here already (or
 * older than one here), or no member is local; one newer than the
 * tracker here waits for it (defer_open). */
static void open_tracker(uint8_t kind, const char *id, uint64_t gen,
                         uint8_t flags, uint32_t timeout,
                         const pmix_proc_t *leader, pmix_proc_t *members,
                         size_t nmembers)
{
    uint8_t key[OP_KEY_MAX];
    size_t keylen = op_key(kind, id, key);
    gop_t *op     = rdp_hash_get(&gs.ops, key, keylen);

    if (op != NULL && op->gen < gen) {
        /* the previous one is still here: this one comes after it */
        defer_open(kind, id, gen, flags, timeout, leader, members, nmembers);
        return;
    }
    if (op != NULL
        || (uint64_t)(uintptr_t)rdp_hash_get(&gs.gens, key, keylen) > gen
        || rdp_hash_set(&gs.gens, key, keylen, (void *)(uintptr_t)gen, NULL)
               != PMIX_SUCCESS) {
        rdp_free(members);
        return;
    }
    if (gop_create(kind, id, members, nmembers, &op) != PMIX_SUCCESS) {
        return; /* it took members */
    }
    if (op->nparts == 0) {
        gop_remove(op); /* none of its members is here */
        return;
    }
    op->optional    = (flags & OPEN_OPTIONAL) != 0;
    op->notify_term = (flags & OPEN_NOTIFY_TERM) != 0;
    op->invite      = (flags & OPEN_INVITE) != 0;
    op->has_leader  = (flags & (OPEN_INVITE | OPEN_LEADER)) != 0;
    op->collect     = (flags & OPEN_COLLECT) != 0;
    op->leader      = *leader;
    op->timeout     = timeout;
    op->hold        = true; /* failing it below must not free it */
    mark_departed(op);
    gop_start_timer(op);
    gop_check_doomed(op);
    if (op->invite && op->state == GOP_GATHER) {
        invite_all(op); /* this node's invitees */
    }
    gop_check_departed(op);
    op->hold = false;
    if (op->state == GOP_GATHER) {
        gop_maybe_ready(op); /* its members may all have left */
    } else {
        gop_maybe_free(op);
    }
}

/* A CTL_OPEN's (or CTL_ADD's) body, after its type. */
typedef struct open_msg {
    char id[PMIX_MAX_NSLEN + 1];
    uint8_t kind, flags;
    uint64_t gen;
    uint32_t timeout;
    pmix_proc_t leader;
    pmix_proc_t *members; /* owned */
    size_t n;
} open_msg_t;

static bool open_unpack(uint32_t server, rdp_rbuf_t *rb, open_msg_t *m)
{
    pmix_status_t rc = unpack_ctl_head(rb, &m->kind, m->id, &m->gen);

    m->members = NULL;
    m->n       = 0;
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u8(rb, &m->flags);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u32(rb, &m->timeout);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc(rb, &m->leader);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc_array(rb, &m->members, &m->n);
    }
    if (rc == PMIX_SUCCESS
        && (m->kind < GOP_CONSTRUCT || m->kind > GOP_KIND_MAX || m->n == 0)) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS) {
        rc = gs_init();
    }
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group message from server %u: %s", server,
                      rdp_status_name(rc));
        rdp_free(m->members);
        return false;
    }
    return true;
}

/* ---- CTL_OPEN before the members' nspace is registered here ----
 * A daemon may register its job later than the others start their ranks
 * (a slow node).  An OPEN that reaches it before then finds none of the
 * members local, and dropping it, as for a server that hosts none of
 * them, would leave the other servers waiting for this one's block until
 * their timeout, even when a member here died (its death could not be
 * counted against an operation this server forgot).  So it waits for
 * the registration: as long as the operation's timeout, or
 * EARLY_OPEN_KEEP seconds for one without. */
#define EARLY_OPEN_KEEP 300.0
/* No member is local here and some member's nspace is not registered
 * here (yet). */
static bool open_awaits_nspace(const pmix_proc_t *members, size_t n)
{
    const rdp_srv_nspace_t *ns = NULL;
    bool unknown               = false;

    for (size_t i = 0; i < n; i++) {
        if (ns == NULL || !PMIX_CHECK_NSPACE(ns->name, members[i].nspace)) {
            ns = rdp_srv_nspace_find(members[i].nspace);
        }
        if (ns == NULL || !ns->registered) {
            unknown = true;
        } else if (rdp_srv_nspace_is_local(ns, members[i].rank)) {
            return false;
        }
    }
    return unknown;
}

static void early_open_free(void *arg)
{
    deferred_open_t *d = arg;

    rdp_free(d->members);
    rdp_free(d->body);
    rdp_free(d);
}

/* nswait: a member's nspace was registered; open it if nothing else
 * is missing now */
static bool early_open_try(void *arg)
{
    deferred_open_t *d = arg;

    if (!gs.init || open_awaits_nspace(d->members, d->nmembers)) {
        return false;
    }
    if (d->body != NULL) {
        relay_open(d->from, d->kind, d->id, d->gen, d->members, d->nmembers,
                   d->body, d->bodylen);
    }
    open_tracker(d->kind, d->id, d->gen, d->flags, d->timeout, &d->leader,
                 d->members, d->nmembers); /* takes the members */
    rdp_free(d->body);
    rdp_free(d);
    return true;
}

static void early_open_expired(void *arg)
{
    deferred_open_t *d = arg;

    rdp_log_warn(SERVER,
                 "group %s %s: no member's nspace was registered here in "
                 "time; dropped",
                 d->id, kind_name(d->kind));
    early_open_free(d);
}

static const rdp_srv_nswait_ops_t early_open_ops = {
    .try_run = early_open_try,
    .expired = early_open_expired,
    .discard = early_open_free,
};

/* Takes @a m's members; copies the OPEN's @a body from server @a from. */
static void keep_early_open(uint32_t from, const open_msg_t *m,
                            const uint8_t *body, size_t bodylen)
{
    deferred_open_t *unlisted = NULL;
    deferred_open_t *d = keep_open(&unlisted, m->kind, m->id, m->gen, m->flags,
                                   m->timeout, &m->leader, m->members, m->n);
    double keep_s      = m->timeout > 0 ? (double)m->timeout : EARLY_OPEN_KEEP;

    if (d == NULL) {
        return;
    }
    d->from = from;
    d->body = rdp_malloc(bodylen + 1);
    if (d->body != NULL) {
        memcpy(d->body, body, bodylen);
        d->bodylen = bodylen;
    }
    if (rdp_srv_nswait_hold(&early_open_ops, d, keep_s) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "group %s %s: no memory to keep an early OPEN",
                      m->id, kind_name(m->kind));
        early_open_free(d);
        return;
    }
    rdp_log_debug(SERVER,
                  "group %s %s %llu: kept until its members' nspace is "
                  "registered here",
                  m->id, kind_name(m->kind), (unsigned long long)m->gen);
}

static void deferred_opens_drop(void)
{
    kept_opens_drop(&deferred_opens);
    rdp_srv_nswait_discard(&early_open_ops);
}

static void ctl_open(uint32_t server, rdp_rbuf_t *rb)
{
    const uint8_t *body = rb->ptr;
    size_t bodylen      = rb->left;
    open_msg_t m;

    if (!open_unpack(server, rb, &m)) {
        return;
    }
    open_heard(m.kind, m.id, m.gen, m.members, m.n);
    if (open_awaits_nspace(m.members, m.n)) {
        keep_early_open(server, &m, body, bodylen);
        return;
    }
    relay_open(server, m.kind, m.id, m.gen, m.members, m.n, body, bodylen);
    open_tracker(m.kind, m.id, m.gen, m.flags, m.timeout, &m.leader, m.members,
                 m.n);
}

static void tell_event(pmix_status_t code, const pmix_proc_t *source,
                       const char *id, const pmix_proc_t *target)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    rdp_buf_init(&buf);
    rc = rdp_pack_u8(&buf, CTL_EVENT);
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_i32(&buf, code);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc(&buf, source);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_string(&buf, id);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc(&buf, target);
    }
    send_ctl(&buf, rc);
}

/* An invitee's answer for a leader (on this node, if it is here). */
static void ctl_event(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t source, target;
    int32_t code;
    pmix_status_t rc = rdp_unpack_i32(rb, &code);

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc(rb, &source);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_string_into(rb, id, sizeof(id));
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc(rb, &target);
    }
    if (rc == PMIX_SUCCESS && code != PMIX_GROUP_INVITE_ACCEPTED
        && code != PMIX_GROUP_INVITE_DECLINED
        && code != PMIX_GROUP_INVITE_FAILED) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group message from server %u: %s", server,
                      rdp_status_name(rc));
        return;
    }
    notify_leader_here(code, &source, &target, id);
    if (gs.init) {
        uint8_t key[OP_KEY_MAX];
        gop_t *op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, id, key));

        if (op != NULL && op->answered != NULL && is_leader(op, &target)) {
            leader_heard(op, code, &source);
            gop_maybe_ready(op);
        }
    }
}

static void ctl_leader(uint32_t server, rdp_rbuf_t *rb);
static void ctl_abort(uint32_t server, rdp_rbuf_t *rb);
static void ctl_add(uint32_t server, rdp_rbuf_t *rb);
static void ctl_seal(uint32_t server, rdp_rbuf_t *rb);

static void ctl_recv(uint32_t server, rdp_rbuf_t *rb)
{
    uint8_t type = 0;

    if (rdp_unpack_u8(rb, &type) == PMIX_SUCCESS && type == CTL_FAIL) {
        ctl_fail(server, rb);
    } else if (type == CTL_OPEN) {
        ctl_open(server, rb);
    } else if (type == CTL_EVENT) {
        ctl_event(server, rb);
    } else if (type == CTL_LEFT) {
        ctl_left(server, rb);
    } else if (type == CTL_LEADER) {
        ctl_leader(server, rb);
    } else if (type == CTL_ABORT) {
        ctl_abort(server, rb);
    } else if (type == CTL_ADD) {
        ctl_add(server, rb);
    } else if (type == CTL_SEAL) {
        ctl_seal(server, rb);
    } else {
        rdp_log_error(SERVER, "bad group message from server %u", server);
    }
}

static const rdp_srv_p2p_handler_t ctl_handler = {
    .recv = ctl_recv,
};

void rdp_srv_group_open(void)
{
    rdp_srv_p2p_register(RDP_SRV_CH_GROUP_CTL, &ctl_handler);
}

/* A failure another server told before this tracker existed. */
static void gop_check_doomed(gop_t *op)
{
    uint8_t key[DOOM_KEY_MAX];
    size_t keylen = doom_key(op->kind, op->id, op->gen, key);
    void *st      = rdp_hash_remove(&gs.dooms, key, keylen);
    pmix_proc_t *c = rdp_hash_remove(&gs.culprits, key, keylen);

    if (st != NULL) {
        if (c != NULL) {
            set_culprit(op, c);
        }
        gop_fail_here(op, (pmix_status_t)(intptr_t)st, false);
    }
    rdp_free(c);
}

static void tell_seal(const gop_t *op);

/* An invitation's membership is final once every invitee answered and
 * the leader handled every decline and failure; only its server knows
 * (the others wait for its CTL_SEAL).  True when sealed now. */
static bool gop_seal(gop_t *op)
{
    if (op->answered == NULL || op->acks > 0) {
        return false;
    }
    for (size_t i = 0; i < op->nmembers; i++) {
        if (!op->answered[i]) {
            return false;
        }
    }
    op->sealed = true;
    if (!op->all_local) {
        tell_seal(op);
    }
    return true;
}

static void gop_maybe_ready(gop_t *op)
{
    pmix_status_t status;

    if (op->state != GOP_GATHER) {
        return;
    }
    if (op->leader_lost && op->vstate != VOTE_DONE) {
        gop_maybe_vote(op); /* a new leader is being chosen first */
        return;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        if (!op->parts[i].arrived && !op->parts[i].gone) {
            return;
        }
    }
    if (op->invite && !op->sealed && !gop_seal(op)) {
        return; /* the leader may still invite replacements */
    }
    if (op->all_local) {
        gop_local(op);
        return;
    }
    op->state = GOP_XCHG;
    status    = gop_exchange(op);
    if (status != PMIX_SUCCESS) {
        op->state = GOP_GATHER;
        gop_fail(op, status);
    }
}

static void gop_timeout(void *arg)
{
    gop_t *op = arg;

    rdp_log_warn(SERVER, "group %s %s timed out", op->id, kind_name(op->kind));
    gop_fail(op, PMIX_ERR_TIMEOUT);
}

/* ---- a member arrives ---- */

static gpart_t *gop_part(gop_t *op, const pmix_proc_t *proc)
{
    for (size_t i = 0; i < op->nparts; i++) {
        if (op->parts[i].proc.rank == proc->rank
            && PMIX_CHECK_NSPACE(op->parts[i].proc.nspace, proc->nspace)) {
            return &op->parts[i];
        }
    }
    return NULL;
}

/* The local members, counted first: parts sized for every member (~300
 * bytes each, zeroed) cost a 64-member construct more than the rest of
 * the tracker.  Who is local is looked up once (kept for the second
 * pass when there are few members). */
static pmix_status_t gop_build_parts(gop_t *op)
{
    bool few[64];
    bool keep     = op->nmembers <= sizeof(few) / sizeof(few[0]);
    size_t nlocal = 0;

    op->all_local = true;
    for (int pass = 0; pass < 2; pass++) {
        rdp_srv_nspace_t *ns = NULL;

        for (size_t i = 0; i < op->nmembers; i++) {
            const pmix_proc_t *m = &op->members[i];
            bool local;

            if (pass == 1 && keep) {
                local = few[i];
            } else {
                /* members come grouped by nspace: one lookup per group */
                if (ns == NULL
                    || strncmp(ns->name, m->nspace, PMIX_MAX_NSLEN) != 0) {
                    ns = rdp_srv_nspace_find(m->nspace);
                }
                local = ns != NULL && rdp_srv_nspace_is_local(ns, m->rank);
            }
            if (pass == 0) {
                if (keep) {
                    few[i] = local;
                }
                nlocal += local ? 1 : 0;
                op->all_local = op->all_local && local;
            } else if (local) {
                op->parts[op->nparts++].proc = *m;
            }
        }
        if (pass == 0) {
            op->parts = rdp_calloc(nlocal + 1, sizeof(*op->parts));
            if (op->parts == NULL) {
                return PMIX_ERR_NOMEM;
            }
        }
    }
    return PMIX_SUCCESS;
}

/* Directives every member may give; the first arrival's decide, except
 * PMIX_GROUP_ASSIGN_CONTEXT_ID, which any member may ask for. */
static void read_directives(gop_t *op, const pmix_info_t *info, size_t ninfo,
                            bool first)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        uint64_t t;

        if (PMIX_CHECK_KEY(in, PMIX_GROUP_ASSIGN_CONTEXT_ID)) {
            op->want_cid = op->want_cid || PMIX_INFO_TRUE(in);
        } else if (!first) {
            continue;
        } else if (PMIX_CHECK_KEY(in, PMIX_GROUP_OPTIONAL)) {
            op->optional = op->invite || PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_GROUP_NOTIFY_TERMINATION)) {
            op->notify_term = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_COLLECT_DATA)
                   && op->kind == GOP_FENCE) {
            op->collect = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_GROUP_FT_COLLECTIVE)
                   && op->kind == GOP_DESTRUCT) {
            /* adjusted for members that leave: goes on without them */
            op->optional = op->optional || PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_TIMEOUT)
                   && rdp_srv_value_to_u64(&in->value, &t) && t > 0) {
            op->timeout = (double)t;
        }
    }
}

/* The PMIX_GROUP_INFO a member contributes: a copy of its infos. */
static pmix_status_t take_ginfo(gpart_t *part, const pmix_info_t *info,
                                size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_data_array_t *da;

        if (!PMIX_CHECK_KEY(&info[i], PMIX_GROUP_INFO)) {
            continue;
        }
        da = info[i].value.data.darray;
        if (info[i].value.type != PMIX_DATA_ARRAY || da == NULL
            || (da->type != PMIX_INFO && da->size > 0)) {
            return PMIX_ERR_BAD_PARAM;
        }
        rdp_info_array_free(part->ginfo, part->nginfo);
        part->ginfo  = NULL;
        part->nginfo = 0;
        if (da->size > 0) {
            pmix_status_t status =
                rdp_info_array_copy(&part->ginfo, da->array, da->size);

            if (status != PMIX_SUCCESS) {
                return status;
            }
            part->nginfo = da->size;
        }
    }
    return PMIX_SUCCESS;
}

/* Members in the order given, WILDCARD expanded to the nspace's ranks;
 * every nspace registered, no member twice. */
static pmix_status_t expand_members(const pmix_proc_t *procs, size_t nprocs,
                                    pmix_proc_t **out_p, size_t *nout_p)
{
    size_t n = 0, cap = 0;
    pmix_proc_t *out;

    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);

        if (ns == NULL || !ns->registered) {
            return PMIX_ERR_NOT_FOUND;
        }
        /* a member twice: two procs given that overlap (checked on what
         * was given, not on the expansion: N^2 compares for a wildcard) */
        for (size_t k = 0; k < i; k++) {
            if ((procs[k].rank == procs[i].rank
                 || procs[k].rank == PMIX_RANK_WILDCARD
                 || procs[i].rank == PMIX_RANK_WILDCARD)
                && strncmp(procs[k].nspace, procs[i].nspace, PMIX_MAX_NSLEN)
                       == 0) {
                return PMIX_ERR_BAD_PARAM;
            }
        }
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            cap += ns->size;
        } else if (procs[i].rank >= PMIX_RANK_VALID
                   || (!ns->nodata && procs[i].rank >= ns->size)) {
            return PMIX_ERR_BAD_PARAM;
        } else {
            cap++;
        }
    }
    out = rdp_calloc(cap + 1, sizeof(*out));
    if (out == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nprocs; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(procs[i].nspace);
        pmix_rank_t lo = procs[i].rank, hi = procs[i].rank;

        if (lo == PMIX_RANK_WILDCARD) {
            lo = 0;
            hi = ns->size; /* exclusive below */
        } else {
            hi = lo + 1;
        }
        for (pmix_rank_t r = lo; r < hi; r++) {
            PMIX_LOAD_PROCID(&out[n], ns->name, r); /* out is zeroed */
            n++;
        }
    }
    *out_p  = out;
    *nout_p = n;
    return PMIX_SUCCESS;
}

static bool same_members(const gop_t *op, const pmix_proc_t *m, size_t n)
{
    if (n != op->nmembers) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (m[i].rank != op->members[i].rank
            || !PMIX_CHECK_NSPACE(m[i].nspace, op->members[i].nspace)) {
            return false;
        }
    }
    return true;
}

/* Takes @a members. */
static pmix_status_t gop_create(uint8_t kind, const char *id,
                                pmix_proc_t *members, size_t nmembers,
                                gop_t **op_p)
{
    gop_t *op = gop_alloc();
    uint8_t key[OP_KEY_MAX];
    size_t keylen = op_key(kind, id, key);
    pmix_status_t status;

    if (op == NULL) {
        rdp_free(members);
        return PMIX_ERR_NOMEM;
    }
    rdp_list_init(&op->open_link);
    op->kind = kind;
    memcpy(op->id, id, strnlen(id, PMIX_MAX_NSLEN));
    op->members  = members;
    op->nmembers = nmembers;
    op->gen      = (uint64_t)(uintptr_t)rdp_hash_get(&gs.gens, key, keylen);
    status       = gop_build_parts(op);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set(&gs.gens, key, keylen,
                              (void *)(uintptr_t)(op->gen + 1), NULL);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set(&gs.ops, key, keylen, op, NULL);
    }
    if (status != PMIX_SUCCESS) {
        gop_free(op);
        return status;
    }
    *op_p = op;
    return PMIX_SUCCESS;
}

/* The members a destruct runs over: the group's as constructed, so that
 * every server takes the same servers into the exchange however late it
 * heard that a member left or failed (mark_departed leaves those out of
 * the wait).  Only a member still in the group may call it. */
static pmix_status_t destruct_members(const char *id, const pmix_proc_t *caller,
                                      pmix_proc_t **m_p, size_t *n_p,
                                      bool *notify_term_p)
{
    group_t *g = rdp_hash_get_str(&gs.groups, id);

    if (g == NULL || !has_member(g->members, g->nmembers, caller)) {
        return PMIX_ERR_NOT_FOUND;
    }
    *m_p = rdp_calloc(g->nconstructed + 1, sizeof(**m_p));
    if (*m_p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(*m_p, g->constructed, g->nconstructed * sizeof(**m_p));
    *n_p           = g->nconstructed;
    *notify_term_p = g->notify_term;
    return PMIX_SUCCESS;
}

/* A destruct does not wait for the members that already left the group
 * or failed (they are no longer in it here). */
static void mark_departed(gop_t *op)
{
    group_t *g = rdp_hash_get_str(&gs.groups, op->id);

    if ((op->kind != GOP_DESTRUCT && op->kind != GOP_FENCE) || g == NULL) {
        return;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        if (!has_member(g->members, g->nmembers, &op->parts[i].proc)) {
            op->parts[i].gone = true;
        }
    }
}

typedef struct greq {
    uint8_t kind;
    uint16_t cmd;
    uint16_t ack;
    char id[PMIX_MAX_NSLEN + 1];
    pmix_proc_t leader; /* join */
    uint8_t opt;        /* join: pmix_group_opt_t */
    pmix_proc_t *procs;
    size_t nprocs;
    pmix_info_t *info;
    size_t ninfo;
} greq_t;

static pmix_status_t greq_unpack(uint16_t cmd, rdp_rbuf_t *rb, greq_t *req)
{
    pmix_status_t status;

    memset(req, 0, sizeof(*req));
    req->cmd  = cmd;
    req->ack  = (uint16_t)(cmd + 1);
    req->kind = cmd == RDP_CMD_GROUP_DESTRUCT ? GOP_DESTRUCT
                : cmd == RDP_CMD_GROUP_FENCE  ? GOP_FENCE
                                              : GOP_CONSTRUCT;
    status    = rdp_unpack_string_into(rb, req->id, sizeof(req->id));
    if (status == PMIX_SUCCESS
        && (cmd == RDP_CMD_GROUP_CONSTRUCT || cmd == RDP_CMD_GROUP_INVITE)) {
        status = rdp_unpack_proc_array(rb, &req->procs, &req->nprocs);
    }
    if (status == PMIX_SUCCESS && cmd == RDP_CMD_GROUP_LEADER_VOTE) {
        status = rdp_unpack_u8(rb, &req->opt); /* the vote; no infos */
        if (status == PMIX_SUCCESS && rb->left != 0) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        return status;
    }
    if (status == PMIX_SUCCESS && cmd == RDP_CMD_GROUP_JOIN) {
        status = rdp_unpack_proc(rb, &req->leader);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u8(rb, &req->opt);
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_info_array(rb, &req->info, &req->ninfo);
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    return status;
}

static void greq_clear(greq_t *req)
{
    rdp_free(req->procs);
    rdp_info_array_free(req->info, req->ninfo);
}

/* @a caller, which took part in the fault-tolerant fence @a op, calls
 * another: the others went on without a member (it timed out).  Either
 * @a op is finished and kept here only for a local member that never
 * called it, or the caller's library gave up on it first (it times
 * PMIX_TIMEOUT too) and it fails now as it would moments later.  Either
 * way it goes, and this call is the next fence.  False: not so (a
 * second call during a fence without PMIX_TIMEOUT stays an error). */
static bool fence_superseded(gop_t *op, const pmix_proc_t *caller)
{
    const gpart_t *part = gop_part(op, caller);

    if (op->kind != GOP_FENCE || op->hold || part == NULL || !part->arrived
        || (op->state != GOP_DONE && op->timeout <= 0)) {
        return false;
    }
    op->hold = true;                /* failing it must not free it */
    gop_fail(op, PMIX_ERR_TIMEOUT); /* nothing when done already */
    op->hold = false;
    gop_remove(op);
    return true;
}

/* Find or make the tracker @a req belongs to. */
static pmix_status_t gop_for(const greq_t *req, const pmix_proc_t *caller,
                             gop_t **op_p, bool *first_p)
{
    uint8_t key[OP_KEY_MAX];
    pmix_proc_t *members = NULL;
    size_t nmembers      = 0;
    bool notify_term     = false;
    gop_t *op;
    pmix_status_t status;

    if (req->kind == GOP_CONSTRUCT && req->nprocs == 1) {
        op = rdp_hash_get(&gs.ops, key, op_key(req->kind, req->id, key));
        if (op != NULL && op->given_one && op->state != GOP_DONE
            && op->given.rank == req->procs[0].rank
            && PMIX_CHECK_NSPACE(op->given.nspace, req->procs[0].nspace)) {
            /* what the first member gave: the same members */
            if (!has_member(op->members, op->nmembers, caller)) {
                return PMIX_ERR_BAD_PARAM;
            }
            *first_p = false;
            *op_p    = op;
            return PMIX_SUCCESS;
        }
    }
    if (req->kind == GOP_CONSTRUCT) {
        status = expand_members(req->procs, req->nprocs, &members, &nmembers);
    } else {
        status = destruct_members(req->id, caller, &members, &nmembers,
                                  &notify_term);
    }
    if (status == PMIX_SUCCESS
        && !has_member(members, nmembers, caller)) {
        /* not a member (any more: it may have left): not its group */
        status = req->kind != GOP_CONSTRUCT ? PMIX_ERR_NOT_FOUND
                                            : PMIX_ERR_BAD_PARAM;
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(members);
        return status;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(req->kind, req->id, key));
    if (op != NULL && fence_superseded(op, caller)) {
        op = NULL;
    }
    *first_p = op == NULL;
    if (op != NULL) {
        if (req->kind == GOP_CONSTRUCT && op->state != GOP_DONE
            && !same_members(op, members, nmembers)) {
            /* members that disagree on the group can never complete */
            gop_fail(op, PMIX_ERR_BAD_PARAM);
        }
        rdp_free(members);
        *op_p = op;
        return PMIX_SUCCESS;
    }
    status = gop_create(req->kind, req->id, members, nmembers, &op);
    if (status == PMIX_SUCCESS && req->kind == GOP_FENCE && !op->all_local
        && rdp_srv_xchg_me() == UINT32_MAX) {
        /* group_host.c carries constructs and destructs only */
        gop_remove(op);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (status == PMIX_SUCCESS && req->kind == GOP_CONSTRUCT
        && req->nprocs == 1) {
        op->given_one = true;
        op->given     = req->procs[0];
    }
    if (status == PMIX_SUCCESS) {
        op->notify_term = req->kind == GOP_DESTRUCT && notify_term;
        /* a fault-tolerant fence goes on without members that leave */
        op->optional = op->notify_term || req->kind == GOP_FENCE;
        mark_departed(op);
        *op_p = op;
    }
    return status;
}

static void tell_leader(const gop_t *op, uint8_t what);

/* A member that gives PMIX_GROUP_LEADER (true) leads the construct: it
 * hears of members that leave before joining, and if it leaves before
 * the construct completes the others choose a new leader.  The first
 * one counts. */
static void declare_leader(gop_t *op, const gpart_t *part,
                           const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo && !op->has_leader; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_LEADER)
            && PMIX_INFO_TRUE(&info[i])) {
            op->has_leader = true;
            op->leader     = part->proc;
            if (!op->all_local) {
                open_now(op); /* the hosts hear of the operation first */
                tell_leader(op, LEADER_DECLARED);
            }
        }
    }
}

static void gop_arrive(gop_t *op, bool first, rdp_srv_peer_t *peer,
                       uint32_t tag, const greq_t *req)
{
    gpart_t *part = gop_part(op, &peer->client->proc);
    pmix_status_t status;

    if (part == NULL || part->arrived || part->gone) {
        rdp_srv_reply_status(peer, req->ack, tag, PMIX_ERR_BAD_PARAM);
        return;
    }
    part->arrived = true;
    part->peer_id = peer->id;
    part->tag     = tag;
    part->ack     = req->ack;
    if (op->state == GOP_DONE) {
        if (op->has_culprit) {
            announce_left_out(op, &op->culprit, part);
        }
        rdp_srv_reply_status(peer, req->ack, tag, op->status);
        gop_maybe_free(op);
        return;
    }
    read_directives(op, req->info, req->ninfo, first);
    if (req->cmd == RDP_CMD_GROUP_CONSTRUCT) {
        declare_leader(op, part, req->info, req->ninfo);
    }
    status = take_ginfo(part, req->info, req->ninfo);
    if (status != PMIX_SUCCESS) {
        gop_fail(op, status);
        return;
    }
    if (first) {
        gop_start_timer(op);
    }
    gop_maybe_ready(op);
}

static void member_left(const char *id, const pmix_proc_t *proc,
                        pmix_status_t code);
static void tell_open(const gop_t *op);
static void open_soon(gop_t *op);
static void open_now(gop_t *op);
static void tell_left(const char *id, const pmix_proc_t *proc,
                      pmix_status_t code);
/* A member that already left never arrives. */
static void gop_check_departed(gop_t *op);
static void gop_check_doomed(gop_t *op);

/* An invitation's members: the procs given, the leader first when it
 * did not list itself. */
static pmix_status_t invite_members(const greq_t *req, const pmix_proc_t *me,
                                    pmix_proc_t **members_p, size_t *n_p)
{
    pmix_proc_t *m       = NULL, *with;
    size_t n             = 0;
    pmix_status_t status = expand_members(req->procs, req->nprocs, &m, &n);

    if (status != PMIX_SUCCESS || rdp_srv_procs_contain(m, n, me)) {
        *members_p = m;
        *n_p       = n;
        return status;
    }
    with = rdp_calloc(n + 2, sizeof(*with));
    if (with == NULL) {
        rdp_free(m);
        return PMIX_ERR_NOMEM;
    }
    with[0] = *me;
    memcpy(with + 1, m, n * sizeof(*m));
    rdp_free(m);
    *members_p = with;
    *n_p       = n + 1;
    return PMIX_SUCCESS;
}

/* PMIX_GROUP_INVITED to every member but the leader. */
static void invite_all(const gop_t *op)
{
    pmix_proc_t *others = rdp_calloc(op->nmembers + 1, sizeof(*others));
    size_t n            = 0;

    if (others == NULL) {
        return;
    }
    for (size_t i = 0; i < op->nmembers; i++) {
        if (!(op->members[i].rank == op->leader.rank
              && PMIX_CHECK_NSPACE(op->members[i].nspace, op->leader.nspace))) {
            others[n++] = op->members[i];
        }
    }
    notify_procs(PMIX_GROUP_INVITED, &op->leader, others, n, op->id, NULL, 0);
    rdp_free(others);
}

/* A construct by @a peer's client. */
static pmix_status_t handle_construct(rdp_srv_peer_t *peer, uint32_t tag,
                                      const greq_t *req)
{
    gop_t *op;
    bool first;
    pmix_status_t status;

    if (req->kind == GOP_CONSTRUCT && req->nprocs == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = gop_for(req, &peer->client->proc, &op, &first);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (first) {
        op->hold = true; /* failing it below must not free it */
        read_directives(op, req->info, req->ninfo, true);
        gop_check_doomed(op);
        gop_check_departed(op);
        if (!op->all_local && op->state != GOP_DONE) {
            open_soon(op);
        }
        op->hold = false;
    }
    gop_arrive(op, first, peer, tag, req); /* last: may free op */
    return PMIX_SUCCESS;
}

/* ---- optional connect / disconnect (RDPMIX_CONNECT_OPTIONAL) ----
 * A participant that leaves without joining must not fail the operation,
 * and a server all of whose participants left must still take part: what
 * an optional group construct does.  So such a connect runs as a group
 * operation of its own kind (no group is recorded, nothing but a status
 * comes back), keyed by a hash of its canonical participants and
 * RDPMIX_CONNECT_ID, counted by generation like any group operation. */

/* The operation's name among group operations of its kind. */
static pmix_status_t connect_op_id(const pmix_proc_t *procs, size_t nprocs,
                                   const char *cid, char *id)
{
    rdp_buf_t buf;
    pmix_status_t status = PMIX_SUCCESS;

    rdp_buf_init(&buf);
    for (size_t i = 0; status == PMIX_SUCCESS && i < nprocs; i++) {
        status = rdp_pack_string(&buf, procs[i].nspace);
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u32(&buf, procs[i].rank);
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(&buf, cid != NULL ? cid : "");
    }
    if (status == PMIX_SUCCESS) {
        snprintf(id, PMIX_MAX_NSLEN + 1, "rdpmix.cnct.%016" PRIx64,
                 rdp_hash_bytes(buf.data, buf.size));
    }
    rdp_buf_cleanup(&buf);
    return status;
}

/* The tracker of an optional connect, made when @a first. */
static pmix_status_t connect_gop(const greq_t *req, gop_t **op_p, bool *first_p)
{
    uint8_t key[OP_KEY_MAX];
    pmix_proc_t *members = NULL;
    size_t nmembers      = 0;
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(req->kind, req->id, key));
    pmix_status_t status;

    *first_p = op == NULL;
    if (op != NULL) {
        *op_p = op;
        return PMIX_SUCCESS;
    }
    status = expand_members(req->procs, req->nprocs, &members, &nmembers);
    if (status == PMIX_SUCCESS) {
        status = gop_create(req->kind, req->id, members, nmembers, &op);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (!op->all_local && rdp_srv_xchg_me() == UINT32_MAX) {
        /* group_host.c carries constructs and destructs only */
        gop_remove(op);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    op->optional = true;
    *op_p        = op;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_srv_group_connect(rdp_srv_peer_t *peer, bool connect,
                                    uint32_t tag, uint16_t ack,
                                    pmix_proc_t *procs, size_t nprocs,
                                    const char *cid, pmix_info_t *info,
                                    size_t ninfo)
{
    greq_t req;
    gop_t *op;
    bool first;
    pmix_status_t status = gs_init();

    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (rdp_srv_connect_is_foreign(procs, nprocs)) {
        rdp_log_error(SERVER, "%s across launchers is not supported",
                      RDPMIX_CONNECT_OPTIONAL);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    memset(&req, 0, sizeof(req));
    req.kind   = connect ? GOP_CONNECT : GOP_DISCONNECT;
    req.ack    = ack;
    req.procs  = procs;
    req.nprocs = nprocs;
    req.info   = info;
    req.ninfo  = ninfo;
    status     = connect_op_id(procs, nprocs, cid, req.id);
    if (status == PMIX_SUCCESS) {
        status = connect_gop(&req, &op, &first);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (first) {
        op->hold = true; /* failing it below must not free it */
        read_directives(op, info, ninfo, true);
        gop_check_doomed(op);
        gop_check_departed(op);
        if (!op->all_local && op->state != GOP_DONE) {
            tell_open(op);
        }
        op->hold = false;
    }
    gop_arrive(op, first, peer, tag, &req); /* last: may free op */
    return PMIX_SUCCESS;
}

/* PMIx_Group_invite: a construct whose leader is here and whose other
 * members are invited (PMIX_GROUP_INVITED) and join when they accept.
 * Declines and invitees that leave first are left out (the leader gets
 * PMIX_GROUP_INVITE_DECLINED / _FAILED). */
/* ---- inviting replacements (docs/design.md, "Groups") ----
 * The leader of an invitation still gathering may invite more processes
 * to it (PMIx_Group_invite again, typically from its INVITE_DECLINED /
 * _FAILED handler): they are appended to the members (group ranks after
 * the others), invited, and the invitation completes once they answered
 * too; the further invite is answered with the invitation's reply.  The
 * other servers hear of the new members by CTL_ADD (a CTL_OPEN with the
 * whole list, sent to every server: one that hosted no member makes its
 * tracker from it). */

/* Append the procs of @a add that are no members yet to @a op: local
 * ones become parts and are invited; *nnew_p says how many were new. */
static pmix_status_t invite_extend(gop_t *op, const pmix_proc_t *add,
                                   size_t nadd, size_t *nnew_p)
{
    size_t cap = op->nmembers + nadd + 1, first = op->nparts;
    pmix_proc_t *members = rdp_realloc(op->members, cap * sizeof(*members));
    gpart_t *parts;
    bool *answered = NULL;

    if (members == NULL) {
        return PMIX_ERR_NOMEM;
    }
    op->members = members;
    parts       = rdp_realloc(op->parts, cap * sizeof(*parts));
    if (parts == NULL) {
        return PMIX_ERR_NOMEM;
    }
    op->parts = parts;
    if (op->answered != NULL) {
        answered = rdp_realloc(op->answered, cap * sizeof(*answered));
        if (answered == NULL) {
            return PMIX_ERR_NOMEM;
        }
        op->answered = answered;
    }
    *nnew_p = 0;
    for (size_t i = 0; i < nadd; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(add[i].nspace);

        if (rdp_srv_procs_contain(op->members, op->nmembers, &add[i])) {
            continue;
        }
        if (op->answered != NULL) {
            op->answered[op->nmembers] = false;
        }
        op->members[op->nmembers++] = add[i];
        (*nnew_p)++;
        if (ns != NULL && rdp_srv_nspace_is_local(ns, add[i].rank)) {
            memset(&op->parts[op->nparts], 0, sizeof(op->parts[0]));
            op->parts[op->nparts++].proc = add[i];
        } else {
            op->all_local = false;
        }
    }
    if (op->nparts > first) {
        pmix_proc_t *invitees =
            rdp_calloc(op->nparts - first, sizeof(*invitees));

        for (size_t i = first; invitees != NULL && i < op->nparts; i++) {
            invitees[i - first] = op->parts[i].proc;
        }
        if (invitees != NULL) {
            notify_procs(PMIX_GROUP_INVITED, &op->leader, invitees,
                         op->nparts - first, op->id, NULL, 0);
        }
        rdp_free(invitees);
    }
    return PMIX_SUCCESS;
}

/* The leader's further PMIx_Group_invite for a running invitation. */
static pmix_status_t invite_more(gop_t *op, rdp_srv_peer_t *peer, uint32_t tag,
                                 const greq_t *req)
{
    pmix_proc_t *add = NULL;
    size_t nadd = 0, nnew = 0;
    gwaiter_t *w;
    pmix_status_t status;

    if (!op->invite || !is_leader(op, &peer->client->proc)
        || op->state != GOP_GATHER || op->sealed) {
        return PMIX_ERR_EXISTS; /* not its invitation, or complete */
    }
    if (op->nlost > 0) {
        return PMIX_ERR_NOT_SUPPORTED; /* a leader chosen by the members */
    }
    status = expand_members(req->procs, req->nprocs, &add, &nadd);
    for (size_t i = 0; status == PMIX_SUCCESS && i < nadd; i++) {
        rdp_srv_nspace_t *ns = rdp_srv_nspace_find(add[i].nspace);

        if (rdp_srv_xchg_me() == UINT32_MAX
            && (ns == NULL || !rdp_srv_nspace_is_local(ns, add[i].rank))) {
            status = PMIX_ERR_NOT_SUPPORTED; /* no engine to carry it */
        }
    }
    w = status == PMIX_SUCCESS
            ? rdp_realloc(op->waiters, (op->nwaiters + 1) * sizeof(*w))
            : NULL;
    if (status == PMIX_SUCCESS && w == NULL) {
        status = PMIX_ERR_NOMEM;
    }
    if (w != NULL) {
        op->waiters = w;
    }
    if (status == PMIX_SUCCESS) {
        status = invite_extend(op, add, nadd, &nnew);
    }
    rdp_free(add);
    if (status == PMIX_SUCCESS && nnew == 0) {
        status = PMIX_ERR_BAD_PARAM; /* all of them were invited before */
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    rdp_log_debug(SERVER, "group %s: %zu more invited", op->id, nnew);
    op->waiters[op->nwaiters++] =
        (gwaiter_t){.peer_id = peer->id, .tag = tag, .ack = req->ack};
    if (!op->all_local) {
        tell_open_as(op, CTL_ADD);
    }
    op->hold = true;
    gop_check_departed(op); /* one may have left already */
    op->hold = false;
    if (op->state == GOP_DONE) {
        gop_maybe_free(op);
    }
    return PMIX_SUCCESS;
}

static void ctl_add(uint32_t server, rdp_rbuf_t *rb)
{
    uint8_t key[OP_KEY_MAX];
    open_msg_t m;
    gop_t *op;
    size_t nnew = 0;

    if (!open_unpack(server, rb, &m)) {
        return;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(m.kind, m.id, key));
    if (op == NULL) {
        /* no tracker here yet (or no member here before) */
        open_tracker(m.kind, m.id, m.gen, m.flags, m.timeout, &m.leader,
                     m.members, m.n);
        return;
    }
    if (op->gen == m.gen && op->invite && op->state == GOP_GATHER
        && invite_extend(op, m.members, m.n, &nnew) == PMIX_SUCCESS) {
        op->hold = true;
        gop_check_departed(op);
        op->hold = false;
        if (op->state == GOP_DONE) {
            gop_maybe_free(op);
        }
    }
    rdp_free(m.members);
}

/* The leader's server: the membership is final (after every CTL_ADD). */
static void tell_seal(const gop_t *op)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (!ctl_begin(&buf, CTL_SEAL, op, &rc)) {
        return;
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u32(&buf, (uint32_t)op->nmembers);
    }
    send_ctl(&buf, rc);
}

static void ctl_seal(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    uint8_t kind, key[OP_KEY_MAX];
    uint64_t gen;
    uint32_t n;
    gop_t *op;
    pmix_status_t rc = unpack_ctl_head(rb, &kind, id, &gen);

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u32(rb, &n);
    }
    if (rc != PMIX_SUCCESS || gs_init() != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group seal from server %u", server);
        return;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(kind, id, key));
    if (op == NULL || op->gen != gen || !op->invite || op->sealed) {
        return; /* no member here, or decided otherwise already */
    }
    if (n != op->nmembers) {
        rdp_log_warn(SERVER, "group %s sealed with %u members, %zu here", id, n,
                     op->nmembers);
    }
    op->sealed = true;
    gop_maybe_ready(op);
}

/* RDP_CMD_GROUP_ANSWERED: the leader's handlers for a decline or failure
 * are done. */
static pmix_status_t handle_answered(rdp_srv_peer_t *peer, uint32_t tag,
                                     const greq_t *req)
{
    uint8_t key[OP_KEY_MAX];
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, req->id, key));

    rdp_srv_reply_status(peer, req->ack, tag, PMIX_SUCCESS);
    if (op != NULL && op->answered != NULL && op->acks > 0
        && is_leader(op, &peer->client->proc)) {
        op->acks--;
        gop_maybe_ready(op);
    }
    return PMIX_SUCCESS;
}

static pmix_status_t handle_invite(rdp_srv_peer_t *peer, uint32_t tag,
                                   const greq_t *req)
{
    const pmix_proc_t *me = &peer->client->proc;
    uint8_t key[OP_KEY_MAX];
    pmix_proc_t *members = NULL;
    size_t n             = 0;
    gop_t *op;
    pmix_status_t status;

    if (req->nprocs == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, req->id, key));
    if (op != NULL) {
        return invite_more(op, peer, tag, req);
    }
    status = invite_members(req, me, &members, &n);
    if (status == PMIX_SUCCESS) {
        status = gop_create(GOP_CONSTRUCT, req->id, members, n, &op);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    op->invite     = true;
    op->optional   = true;
    op->has_leader = true;
    op->leader     = *me;
    op->answered   = rdp_calloc(op->nmembers + 1, sizeof(*op->answered));
    if (op->answered == NULL) {
        gop_remove(op);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < op->nmembers; i++) {
        op->answered[i] = is_leader(op, &op->members[i]); /* its own call */
    }
    if (!op->all_local && rdp_srv_xchg_me() == UINT32_MAX) {
        gop_remove(op); /* no engine to carry it */
        return PMIX_ERR_NOT_SUPPORTED;
    }
    op->hold = true; /* failing it below must not free it */
    read_directives(op, req->info, req->ninfo, true);
    invite_all(op);
    gop_check_departed(op);
    if (!op->all_local) {
        tell_open(op); /* the other servers invite theirs */
    }
    op->hold = false;
    gop_arrive(op, true, peer, tag, req); /* last: may free op */
    return PMIX_SUCCESS;
}

static pmix_status_t handle_join(rdp_srv_peer_t *peer, uint32_t tag,
                                 const greq_t *req)
{
    const pmix_proc_t *me = &peer->client->proc;
    uint8_t key[OP_KEY_MAX];
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, req->id, key));
    gpart_t *part;

    if (op == NULL || !op->invite || op->state == GOP_DONE) {
        return PMIX_ERR_NOT_FOUND;
    }
    part = gop_part(op, me);
    if (part == NULL || part->arrived || part->gone) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (req->opt == PMIX_GROUP_ACCEPT) {
        notify_leader(op, PMIX_GROUP_INVITE_ACCEPTED, me);
        gop_arrive(op, false, peer, tag, req);
        return PMIX_SUCCESS;
    }
    part->gone = true;
    rdp_srv_reply_status(peer, req->ack, tag, PMIX_SUCCESS);
    notify_leader(op, PMIX_GROUP_INVITE_DECLINED, me);
    gop_maybe_ready(op);
    return PMIX_SUCCESS;
}

/* ---- the leader aborts an invitation (RFC0033) ----
 * Its PMIX_GROUP_INVITE_ACCEPTED / _DECLINED / _FAILED handler completed
 * with PMIX_GROUP_CONSTRUCT_ABORT, or it raised that event for the group:
 * its library sends RDP_CMD_GROUP_ABORT.  Every server then raises
 * PMIX_GROUP_CONSTRUCT_ABORT (source and affected proc: the leader) for
 * its invited members and answers the invitation's arrivals (the
 * leader's invite, the accepted joins) with that status; a later join
 * finds nothing. */

static bool is_leader(const gop_t *op, const pmix_proc_t *proc);

/* The abort here: the event to this node's invited members, the
 * construct answered. */
static void abort_here(gop_t *op)
{
    pmix_proc_t *invited = rdp_calloc(op->nmembers + 1, sizeof(*invited));
    pmix_info_t affected;
    size_t n;

    rdp_log_info(SERVER, "group %s: the leader %s:%u aborted it", op->id,
                 op->leader.nspace, op->leader.rank);
    if (invited != NULL) {
        memcpy(invited, op->members, op->nmembers * sizeof(*invited));
        n = procs_without(invited, op->nmembers, &op->leader);
        memset(&affected, 0, sizeof(affected));
        PMIX_LOAD_KEY(affected.key, PMIX_EVENT_AFFECTED_PROC);
        affected.value.type      = PMIX_PROC;
        affected.value.data.proc = &op->leader;
        notify_procs(PMIX_GROUP_CONSTRUCT_ABORT, &op->leader, invited, n,
                     op->id, &affected, 1);
        rdp_free(invited);
    }
    gop_fail_here(op, PMIX_GROUP_CONSTRUCT_ABORT, false);
}

static void tell_abort(const gop_t *op)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (ctl_begin(&buf, CTL_ABORT, op, &rc)) {
        send_ctl(&buf, rc);
    }
}

/* RDP_CMD_GROUP_ABORT: only the leader of a running construct may. */
static pmix_status_t handle_abort(rdp_srv_peer_t *peer, uint32_t tag,
                                  const greq_t *req)
{
    uint8_t key[OP_KEY_MAX];
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, req->id, key));

    if (op == NULL || op->state == GOP_DONE || op->leader_lost) {
        return PMIX_ERR_NOT_FOUND; /* done, or a new leader is chosen */
    }
    if (!is_leader(op, &peer->client->proc)) {
        return PMIX_ERR_BAD_PARAM;
    }
    rdp_srv_reply_status(peer, req->ack, tag, PMIX_SUCCESS);
    if (!op->all_local) {
        tell_abort(op);
    }
    abort_here(op);
    return PMIX_SUCCESS;
}

/* CTL_ABORT from the leader's server. */
static void ctl_abort(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    uint8_t kind, key[DOOM_KEY_MAX];
    uint64_t gen;
    gop_t *op;

    if (unpack_ctl_head(rb, &kind, id, &gen) != PMIX_SUCCESS
        || kind != GOP_CONSTRUCT || gs_init() != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group abort from server %u", server);
        return;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(kind, id, key));
    if (op == NULL || op->gen < gen) {
        /* made later: it fails then (gop_check_doomed), without events */
        (void)rdp_hash_set(&gs.dooms, key, doom_key(kind, id, gen, key),
                           (void *)(intptr_t)PMIX_GROUP_CONSTRUCT_ABORT, NULL);
    } else if (op->gen == gen && op->state != GOP_DONE) {
        abort_here(op);
    }
}

/* PMIx_Group_leave: out of the group here and on the other servers; the
 * other members get PMIX_GROUP_LEFT. */
static pmix_status_t handle_leave(rdp_srv_peer_t *peer, uint32_t tag,
                                  const greq_t *req)
{
    const pmix_proc_t *me = &peer->client->proc;
    group_t *g            = rdp_hash_get_str(&gs.groups, req->id);

    if (g == NULL || !rdp_srv_procs_contain(g->members, g->nmembers, me)) {
        return PMIX_ERR_NOT_FOUND;
    }
    rdp_srv_reply_status(peer, req->ack, tag, PMIX_SUCCESS);
    member_left(req->id, me, PMIX_GROUP_LEFT);
    tell_left(req->id, me, PMIX_GROUP_LEFT);
    return PMIX_SUCCESS;
}

/* A member's answer to PMIX_GROUP_LEADER_FAILED (its library sends it
 * when the event's handlers are done). */
static pmix_status_t handle_vote(rdp_srv_peer_t *peer, uint32_t tag,
                                 const greq_t *req)
{
    uint8_t key[OP_KEY_MAX];
    gop_t *op = rdp_hash_get(&gs.ops, key, op_key(GOP_CONSTRUCT, req->id, key));
    gpart_t *part;

    if (op == NULL || !op->leader_lost || op->state == GOP_DONE) {
        return PMIX_ERR_NOT_FOUND; /* decided already */
    }
    part = gop_part(op, &peer->client->proc);
    if (part == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    rdp_srv_reply_status(peer, req->ack, tag, PMIX_SUCCESS);
    if (!part->voted) {
        part->voted = true;
        part->vote =
            req->opt <= RDP_GROUP_VOTE_ABORT ? req->opt : RDP_GROUP_VOTE_NONE;
        gop_maybe_vote(op);
    }
    return PMIX_SUCCESS;
}

void rdp_srv_handle_group(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          rdp_rbuf_t *rb)
{
    rdp_srv_client_t *client = peer->client;
    greq_t req;
    pmix_status_t status = gs_init();

    if (status != PMIX_SUCCESS) {
        rdp_srv_reply_status(peer, (uint16_t)(cmd + 1), tag, status);
        return;
    }
    status = greq_unpack(cmd, rb, &req);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed group request from %s:%u: %s; "
                      "connection closed",
                      client->proc.nspace, client->proc.rank,
                      rdp_status_name(status));
        greq_clear(&req);
        rdp_srv_peer_drop(peer, status);
        return;
    }
    if (req.id[0] == '\0') {
        status = PMIX_ERR_BAD_PARAM;
    } else if (cmd == RDP_CMD_GROUP_INVITE) {
        status = handle_invite(peer, tag, &req);
    } else if (cmd == RDP_CMD_GROUP_JOIN) {
        status = handle_join(peer, tag, &req);
    } else if (cmd == RDP_CMD_GROUP_LEAVE) {
        status = handle_leave(peer, tag, &req);
    } else if (cmd == RDP_CMD_GROUP_LEADER_VOTE) {
        status = handle_vote(peer, tag, &req);
    } else if (cmd == RDP_CMD_GROUP_ABORT) {
        status = handle_abort(peer, tag, &req);
    } else if (cmd == RDP_CMD_GROUP_ANSWERED) {
        status = handle_answered(peer, tag, &req);
    } else {
        status = handle_construct(peer, tag, &req);
    }
    if (status != PMIX_SUCCESS) {
        rdp_srv_reply_status(peer, req.ack, tag, status);
    }
    greq_clear(&req);
}

/* ---- a new leader (RFC0033) ----
 * When the leader leaves before the construct completes, every server
 * raises PMIX_GROUP_LEADER_FAILED for its members and waits for each of
 * them to answer (the library does, when the event's handlers are done:
 * handle_vote) or to be gone.  The servers then exchange their members'
 * votes, and each resolves them alike (rdp_srv_group_votes_resolve):
 * a new leader -> PMIX_GROUP_LEADER_SELECTED to the members and the
 * construct goes on (later answers to invitations go to the new leader);
 * none, or an abort -> PMIX_GROUP_CONSTRUCT_ABORT as an event and as the
 * construct's status. */

static void tell_leader(const gop_t *op, uint8_t what)
{
    rdp_buf_t buf;
    pmix_status_t rc;

    if (!ctl_begin(&buf, CTL_LEADER, op, &rc)) {
        return;
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_u8(&buf, what);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_pack_proc(&buf, &op->leader);
    }
    if (rc == PMIX_SUCCESS) {
        /* the relay's way, as CTL_OPEN went: no host hears of a leader
         * before it heard of the operation */
        send_via_relay(&buf, op->members, op->nmembers);
    }
    rdp_buf_cleanup(&buf);
}

/* A new leader is being chosen (votes gathered or exchanged). */
static bool choosing_leader(const gop_t *op)
{
    return op->leader_lost && op->vstate != VOTE_DONE;
}

static bool was_leader(const gop_t *op, const pmix_proc_t *proc)
{
    return rdp_srv_procs_contain(op->lost, op->nlost, proc);
}

/* The leader left: its members here choose a new one (again, when a
 * chosen leader leaves too: another round of votes).  The construct
 * goes on without whoever is gone then. */
static void leader_lost_here(gop_t *op)
{
    gpart_t *lp       = gop_part(op, &op->leader);
    pmix_proc_t *more = rdp_realloc(op->lost, (op->nlost + 1) * sizeof(*more));

    if (more == NULL) {
        gop_fail_here(op, PMIX_ERR_NOMEM, false);
        return;
    }
    op->lost              = more;
    op->lost[op->nlost++] = op->leader;
    if (op->leader_lost) {
        /* a leader chosen before left: everyone votes anew */
        op->vround++;
        op->vstate = VOTE_GATHER;
        for (size_t i = 0; i < op->nparts; i++) {
            op->parts[i].voted = false;
            op->parts[i].vote  = RDP_GROUP_VOTE_NONE;
        }
    }
    op->leader_lost = true;
    op->optional    = true;
    op->sealed      = true; /* no more replacements: every server goes on */
    if (lp != NULL) {
        lp->arrived = false; /* nobody to answer */
        lp->gone    = true;
    }
    announce_leader_failed(op);
    gop_maybe_vote(op);
}

static bool part_left(const gpart_t *p)
{
    rdp_srv_client_t *c = rdp_srv_client_find(p->proc.nspace, p->proc.rank);

    return p->gone || c == NULL || c->state == RDP_SRV_CLIENT_FINALIZED
           || c->state == RDP_SRV_CLIENT_TERMINATED;
}

/* The votes of this node's members (those that left: none). */
static pmix_status_t pack_own_votes(const gop_t *op, rdp_buf_t *buf)
{
    rdp_srv_group_vote_t *v = rdp_calloc(op->nparts + 1, sizeof(*v));
    pmix_status_t status;

    if (v == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < op->nparts; i++) {
        v[i].proc = op->parts[i].proc;
        v[i].vote =
            op->parts[i].voted ? op->parts[i].vote : RDP_GROUP_VOTE_NONE;
    }
    status = rdp_srv_group_votes_pack(buf, v, op->nparts);
    rdp_free(v);
    return status;
}

static void leader_failed(gop_t *op);

/* The leader just chosen has left already: here (it voted, then left
 * before the vote ended) or, as another server told during the vote, on
 * its node.  Then the members choose again; true if so. */
static bool chosen_left(gop_t *op)
{
    const gpart_t *cp = gop_part(op, &op->leader);
    bool told =
        op->pending_lost && op->pending_leader.rank == op->leader.rank
        && PMIX_CHECK_NSPACE(op->pending_leader.nspace, op->leader.nspace);

    op->pending_lost = false;
    if (cp != NULL && part_left(cp)) {
        leader_failed(op); /* its server tells the others */
        return true;
    }
    if (told) {
        leader_lost_here(op);
        return true;
    }
    return false;
}

static void vote_done(gop_t *op, const rdp_srv_group_vote_t *votes,
                      size_t nvotes)
{
    pmix_proc_t chosen;
    pmix_status_t status = rdp_srv_group_votes_resolve(
        op->members, op->nmembers, votes, nvotes, &chosen);

    op->vstate = VOTE_DONE;
    if (status != PMIX_SUCCESS) {
        rdp_log_info(SERVER, "group %s: no new leader", op->id);
        announce_about(op, PMIX_GROUP_CONSTRUCT_ABORT, &op->leader);
        gop_fail_here(op, status, false); /* every server decides so */
        return;
    }
    rdp_log_info(SERVER, "group %s: new leader %s:%u", op->id, chosen.nspace,
                 chosen.rank);
    op->leader = chosen;
    announce_about(op, PMIX_GROUP_LEADER_SELECTED, &chosen);
    if (chosen_left(op)) {
        return; /* the next vote decides */
    }
    if (op->held != NULL) {
        xref_t *x = xref_new(op);

        if (x == NULL) {
            gop_fail_here(op, PMIX_ERR_NOMEM, false);
            return;
        }
        op->hold = true;                                 /* held_free below */
        xchg_done(PMIX_SUCCESS, op->held, op->nheld, x); /* takes x */
        op->hold = false;
        held_free(op);
        gop_maybe_free(op);
        return;
    }
    gop_maybe_ready(op);
}

static void vote_local(gop_t *op)
{
    rdp_srv_group_vote_t *votes = NULL;
    size_t n                    = 0;
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    status = pack_own_votes(op, &buf);
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_group_votes_unpack(buf.data, buf.size, &votes, &n);
    }
    rdp_buf_cleanup(&buf);
    if (status == PMIX_SUCCESS) {
        vote_done(op, votes, n);
    } else {
        gop_fail(op, status);
    }
    rdp_free(votes);
}

static gop_t *vref_find(const xref_t *x)
{
    gop_t *op = xref_lookup(x);

    return op != NULL && op->vstate == VOTE_XCHG ? op : NULL;
}

static void vote_xchg_done(pmix_status_t status,
                           const rdp_srv_xchg_block_t *blocks, size_t nblocks,
                           void *arg)
{
    xref_t *x                   = arg;
    gop_t *op                   = vref_find(x);
    rdp_srv_group_vote_t *votes = NULL;
    size_t n                    = 0;

    rdp_free(x);
    if (op == NULL) {
        return; /* answered already */
    }
    for (size_t i = 0; status == PMIX_SUCCESS && i < nblocks; i++) {
        status = rdp_srv_group_votes_unpack(blocks[i].data, blocks[i].len,
                                            &votes, &n);
    }
    if (status == PMIX_SUCCESS) {
        vote_done(op, votes, n);
    } else {
        rdp_log_error(SERVER, "group %s: exchange of votes failed: %s", op->id,
                      rdp_status_name(status));
        op->vstate = VOTE_DONE;
        gop_fail_here(op, status, false);
    }
    rdp_free(votes);
}

/* The exchange of votes: the block exchange's key with a 'V' after it. */
static pmix_status_t vote_exchange(gop_t *op)
{
    static const uint8_t headroom[RDP_COLL_HEADROOM];
    uint8_t key[XCHG_KEY_MAX + 2];
    size_t keylen = xchg_key(op, key);
    rdp_buf_t buf;
    pmix_status_t status;

    key[keylen++] = 'V';
    key[keylen++] = op->vround; /* a new leader may leave too */
    rdp_buf_init(&buf);
    status = rdp_buf_append(&buf, headroom, sizeof(headroom));
    if (status == PMIX_SUCCESS) {
        status = pack_own_votes(op, &buf);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        return status;
    }
    return xchg_begin(op, &buf, key, keylen, vote_xchg_done, &op->vxchg);
}

/* Every member here voted or is gone: decide, or exchange the votes. */
static void gop_maybe_vote(gop_t *op)
{
    pmix_status_t status;

    if (!op->leader_lost || op->vstate != VOTE_GATHER
        || op->state == GOP_DONE) {
        return; /* (its block may be in the exchange already) */
    }
    for (size_t i = 0; i < op->nparts; i++) {
        if (!op->parts[i].voted && !part_left(&op->parts[i])) {
            return;
        }
    }
    if (op->all_local) {
        vote_local(op);
        return;
    }
    op->vstate = VOTE_XCHG;
    status     = vote_exchange(op);
    if (status != PMIX_SUCCESS) {
        op->vstate = VOTE_DONE;
        gop_fail(op, status);
    }
}

/* Another server's leader news: who leads, or that the leader left. */
static void ctl_leader(uint32_t server, rdp_rbuf_t *rb)
{
    char id[PMIX_MAX_NSLEN + 1];
    uint8_t kind, what, key[OP_KEY_MAX];
    uint64_t gen;
    pmix_proc_t leader;
    const uint8_t *body = rb->ptr;
    size_t bodylen      = rb->left;
    pmix_status_t rc    = unpack_ctl_head(rb, &kind, id, &gen);
    gop_t *op;

    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_u8(rb, &what);
    }
    if (rc == PMIX_SUCCESS) {
        rc = rdp_unpack_proc(rb, &leader);
    }
    if (rc == PMIX_SUCCESS && (kind != GOP_CONSTRUCT || what > LEADER_LOST)) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS) {
        rc = gs_init();
    }
    if (rc != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "bad group message from server %u: %s", server,
                      rdp_status_name(rc));
        return;
    }
    op = rdp_hash_get(&gs.ops, key, op_key(kind, id, key));
    if (op != NULL && op->gen == gen) {
        relay_forward(server, CTL_LEADER, op->members, op->nmembers, body,
                      bodylen);
    }
    if (op == NULL || op->gen != gen || op->state == GOP_DONE
        || (what == LEADER_LOST && was_leader(op, &leader))) {
        return; /* no member here, too late, or heard already */
    }
    if (choosing_leader(op)) {
        if (what == LEADER_LOST) {
            /* the leader being chosen may be the one that left: known
             * once this server's vote ends (chosen_left) */
            op->pending_lost   = true;
            op->pending_leader = leader;
        }
        return;
    }
    op->has_leader = true;
    op->leader     = leader;
    if (what == LEADER_LOST) {
        op->hold = true; /* failing it below must not free it */
        leader_lost_here(op);
        op->hold = false;
        gop_maybe_free(op);
    }
}

/* ---- members that leave ---- */

/* @a part left before arriving: the operation goes on without it when
 * it may, else fails. */
static void gop_part_left(gop_t *op, gpart_t *part)
{
    if (op->optional) {
        part->gone = true;
        if (op->invite) {
            notify_leader(op, PMIX_GROUP_INVITE_FAILED, &part->proc);
        }
        gop_maybe_ready(op);
        return;
    }
    rdp_log_info(SERVER, "%s:%u left before joining group %s",
                 part->proc.nspace, part->proc.rank, op->id);
    set_culprit(op, &part->proc);
    gop_fail(op, PMIX_ERR_PROC_TERM_WO_SYNC);
}

static void gop_check_departed(gop_t *op)
{
    for (size_t i = 0; i < op->nparts && op->state == GOP_GATHER; i++) {
        gpart_t *p          = &op->parts[i];
        rdp_srv_client_t *c = rdp_srv_client_find(p->proc.nspace, p->proc.rank);

        if (!p->arrived && !p->gone && c != NULL
            && (c->state == RDP_SRV_CLIENT_FINALIZED
                || c->state == RDP_SRV_CLIENT_TERMINATED)) {
            gop_part_left(op, p);
        }
    }
}

static gop_t **snapshot(size_t *n_p)
{
    rdp_hash_entry_t *ent;
    gop_t **all;
    size_t i, n = 0;

    *n_p = 0;
    if (!gs.init) {
        return NULL;
    }
    all = rdp_calloc(gs.ops.count + 1, sizeof(*all));
    if (all == NULL) {
        return NULL;
    }
    rdp_hash_for_each(ent, &gs.ops, i) {
        all[n++] = ent->value;
    }
    *n_p = n;
    return all;
}

/* A member of groups constructed with PMIX_GROUP_NOTIFY_TERMINATION
 * terminated: the other members hear PMIX_GROUP_MEMBER_FAILED. */
static void groups_member_failed(const pmix_proc_t *proc)
{
    rdp_hash_entry_t *ent;
    char(*ids)[PMIX_MAX_NSLEN + 1];
    size_t i, n = 0;

    if (!gs.init || gs.groups.count == 0) {
        return;
    }
    ids = rdp_calloc(gs.groups.count + 1, sizeof(*ids));
    if (ids == NULL) {
        return;
    }
    rdp_hash_for_each(ent, &gs.groups, i) {
        const group_t *g = ent->value;

        if (g->notify_term
            && rdp_srv_procs_contain(g->members, g->nmembers, proc)) {
            memcpy(ids[n++], ent->key, strnlen(ent->key, PMIX_MAX_NSLEN));
        }
    }
    for (size_t k = 0; k < n; k++) {
        member_left(ids[k], proc, PMIX_GROUP_MEMBER_FAILED);
        tell_left(ids[k], proc, PMIX_GROUP_MEMBER_FAILED);
    }
    rdp_free(ids);
}

/* The leader left before the group was complete: its members hear
 * PMIX_GROUP_LEADER_FAILED and choose a new one (leader_lost_here). */
static void leader_failed(gop_t *op)
{
    rdp_log_info(SERVER, "leader %s:%u of group %s left", op->leader.nspace,
                 op->leader.rank, op->id);
    if (!op->all_local) {
        tell_leader(op, LEADER_LOST);
    }
    leader_lost_here(op);
}

static bool is_leader(const gop_t *op, const pmix_proc_t *proc)
{
    return op->has_leader && op->leader.rank == proc->rank
           && PMIX_CHECK_NSPACE(op->leader.nspace, proc->nspace);
}

void rdp_srv_group_client_gone(rdp_srv_client_t *client)
{
    size_t n;
    gop_t **all;

    if (client->state == RDP_SRV_CLIENT_TERMINATED) {
        groups_member_failed(&client->proc);
    }
    all = snapshot(&n);

    for (size_t i = 0; i < n; i++) {
        gop_t *op     = all[i];
        gpart_t *part = gop_part(op, &client->proc);

        if (part == NULL) {
            continue;
        }
        if (op->state != GOP_DONE && is_leader(op, &client->proc)
            && !choosing_leader(op) && !was_leader(op, &client->proc)) {
            /* also a chosen leader that had not joined yet */
            leader_failed(op);
        } else if (op->state == GOP_GATHER && !part->arrived && !part->gone) {
            gop_part_left(op, part);
        } else if (choosing_leader(op)) {
            gop_maybe_vote(op); /* it will not vote */
        } else {
            gop_maybe_free(op);
        }
    }
    rdp_free(all);
}

void rdp_srv_group_cleanup(void)
{
    size_t n;
    gop_t **all = snapshot(&n);
    rdp_hash_entry_t *ent;
    size_t i;

    for (size_t k = 0; k < n; k++) {
        gop_remove(all[k]);
    }
    rdp_free(all);
    gop_spares_drop();
    if (!gs.init) {
        return;
    }
    rdp_hash_for_each(ent, &gs.groups, i) {
        group_free(ent->value);
    }
    deferred_opens_drop();
    rdp_timer_destroy(gs.open_timer);
    gs.open_timer = NULL;
    gs.open_armed = false;
    nearly_lefts = 0;
    rdp_hash_cleanup(&gs.groups);
    rdp_hash_cleanup(&gs.ops);
    rdp_hash_cleanup(&gs.gens);
    rdp_hash_cleanup(&gs.dooms);
    rdp_hash_for_each(ent, &gs.culprits, i) {
        rdp_free(ent->value);
    }
    rdp_hash_cleanup(&gs.culprits);
    gs.init = false;
}
