/* run_client_group.c - run_client's group modes (tests/integ/test_run_group.sh)
 *
 *   run_client group basic   every rank (at least 4): bad requests are
 *                            refused; two groups over all ranks, "gA"
 *                            (ranks in reverse order, a context id, each
 *                            member's PMIX_GROUP_INFO) and "gB" (natural
 *                            order, a context id), are constructed at the
 *                            same time with _nb, even ranks starting gA
 *                            first and odd ranks gB first; results,
 *                            membership, context ids (equal on every rank,
 *                            different between the groups), group info and
 *                            endpoint data are checked; fences and gets
 *                            by (group id, group rank), and an event for
 *                            (gA, 1) alone; every rank makes a
 *                            group of itself (context ids all distinct);
 *                            ranks 0 and 1 make
 *                            "gC" (blocking, no context id); a construct
 *                            whose other member never comes times out;
 *                            destructs (blocking and _nb), a second
 *                            destruct is not found.  Prints
 *                            "rank R group basic ok".
 *   run_client group fin|exit  the last rank finalizes (fin) or exits
 *                            without finalizing (exit) at once; the others
 *                            construct "gD" over all ranks (fails with
 *                            PMIX_ERR_PROC_TERM_WO_SYNC), then "gO" with
 *                            PMIX_GROUP_OPTIONAL (succeeds without it) and
 *                            destruct it; without a leader each hears
 *                            PMIX_GROUP_INVITE_FAILED about the last rank
 *                            once per construct.  Prints "rank R group fin
 *                            ok".
 *   run_client group invite  (4 ranks) rank 0 invites ranks 1-3 to "gI"
 *                            without listing itself (it becomes group rank
 *                            0); rank 1 declines, 2 and 3 accept from their
 *                            PMIX_GROUP_INVITED handler; the leader's
 *                            invite returns membership 0, 2, 3 and it sees
 *                            2 accepts and 1 decline; 2 and 3 get
 *                            PMIX_GROUP_CONSTRUCT_COMPLETE (3 members);
 *                            0, 2, 3 fence over gI; rank 3 leaves, 0 and 2
 *                            get PMIX_GROUP_LEFT and destruct without it.
 *   run_client group hinvite  as invite, but the PMIX_GROUP_INVITED
 *                            handlers answer by the status they complete
 *                            with (PMIX_GROUP_INVITE_ACCEPTED / _DECLINED:
 *                            the library joins for them); at the end rank
 *                            1 (declined) is no member of gI (destruct:
 *                            not found) and heard no
 *                            PMIX_GROUP_CONSTRUCT_COMPLETE.
 *   run_client group term    every rank constructs "gN" with
 *                            PMIX_GROUP_NOTIFY_TERMINATION, the last one
 *                            exits, the others get PMIX_GROUP_MEMBER_FAILED
 *                            and destruct gN without it.
 *   run_client group leader  rank 0 invites the others to "gL" and exits
 *                            before they answer; they get
 *                            PMIX_GROUP_LEADER_FAILED, no handler chooses
 *                            a new leader, they get
 *                            PMIX_GROUP_CONSTRUCT_ABORT and a join then is
 *                            not found.
 *   run_client group select  as leader ("gS"), but rank 1's handler
 *                            returns PMIX_GROUP_LEADER: everyone gets
 *                            PMIX_GROUP_LEADER_SELECTED (rank 1), then
 *                            accepts; rank 1 hears the others' accepts;
 *                            the group is ranks 1..n-1; destructed.
 *   run_client group select2  (at least 4 ranks) as select ("gS2"), then
 *                            rank 1 exits once selected, before the group
 *                            is complete: the others hear
 *                            PMIX_GROUP_LEADER_FAILED (rank 1), rank 2's
 *                            handler chooses itself, they hear
 *                            PMIX_GROUP_LEADER_SELECTED (rank 2), no
 *                            abort; they join: the group is ranks
 *                            2..n-1, rank 2 hears the others' accepts.
 *   run_client group abort   as select ("gA2"), but rank 2's handler
 *                            completes with PMIX_GROUP_CONSTRUCT_ABORT:
 *                            everyone gets PMIX_GROUP_CONSTRUCT_ABORT, no
 *                            PMIX_GROUP_LEADER_SELECTED, a join is not
 *                            found.
 *   run_client group cleader  constructs with PMIX_GROUP_LEADER (rank 0):
 *                            the last rank exits at once; "gK" with
 *                            PMIX_GROUP_OPTIONAL is made without it and
 *                            only rank 0 hears PMIX_GROUP_INVITE_FAILED;
 *                            then rank 0 starts "gK2" and exits, the
 *                            others hear PMIX_GROUP_LEADER_FAILED, rank 1
 *                            chooses itself, they construct gK2 (ranks
 *                            1..n-2) and hear PMIX_GROUP_LEADER_SELECTED.
 *   run_client group ftdestruct  "gF" and "gG" over every rank; the last
 *                            rank exits; a destruct of gF with
 *                            PMIX_GROUP_FT_COLLECTIVE succeeds without
 *                            it, one of gG without fails
 *                            (PMIX_ERR_PROC_TERM_WO_SYNC).
 *   run_client group ftfence  (at least 4 ranks) "gQ" over every rank; the
 *                            last rank is killed (SIGKILL) once the others
 *                            are in a fence over gQ: without
 *                            PMIX_GROUP_FT_COLLECTIVE theirs fails
 *                            (PMIX_ERR_PROC_TERM_WO_SYNC); with it (and
 *                            PMIX_COLLECT_DATA) a fence completes and
 *                            brings data committed after the construct,
 *                            also when the last but one is killed during
 *                            it; an FT destruct.  Ranks 0..n-3 print ok.
 *   run_client group iabort  (at least 4 ranks) rank 0 invites the others
 *                            three times and aborts: its
 *                            PMIX_GROUP_INVITE_DECLINED handler completes
 *                            with PMIX_GROUP_CONSTRUCT_ABORT after rank 1
 *                            declines ("gZa"), its _ACCEPTED handler after
 *                            rank 2 accepts ("gZb"), it raises the event
 *                            ("gZc"); each time its invite and rank 2's
 *                            join end with PMIX_GROUP_CONSTRUCT_ABORT,
 *                            ranks 1..n-1 hear that event and a later
 *                            join is not found.
 *   run_client group replace  (4 ranks) rank 0 invites 1 and 2 to "gR";
 *                            rank 1 declines; the leader's
 *                            PMIX_GROUP_INVITE_DECLINED handler invites
 *                            rank 3 (PMIx_Group_invite_nb again); both
 *                            invites return membership 0, 2, 3, the
 *                            leader heard 2 accepts and 1 decline, 2 and 3
 *                            hear PMIX_GROUP_CONSTRUCT_COMPLETE (3
 *                            members), rank 1 does not; 0, 2, 3 fence
 *                            over gR and destruct it.
 *   run_client group freplace  as replace, but rank 1 exits at once: the
 *                            leader's PMIX_GROUP_INVITE_FAILED handler
 *                            invites rank 3; ranks 0, 2, 3 print ok.
 *   run_client group ftgone  (at least 2 ranks) "gV" over every rank, no
 *                            PMIX_GROUP_NOTIFY_TERMINATION; the last rank
 *                            never calls a fence over gV: the others' FT
 *                            fence times out (PMIX_TIMEOUT 2 s), their
 *                            next is running when the last rank is
 *                            killed: it completes without it and brings
 *                            the others' data, as does a third; an FT
 *                            destruct.  Ranks 0..n-2 print ok.
 *   run_client group conc    the last rank exits at once; the others
 *                            construct "gX" (PMIX_GROUP_OPTIONAL) and "gY"
 *                            (not) over every rank at the same time with
 *                            _nb: gX is made without it, gY fails.
 *   run_client group host    (at least 2 ranks; groups through a host
 *                            without the engine, but works anywhere) every
 *                            rank puts "grp.ep", then constructs "hA" over
 *                            all ranks in reverse order (context id, its
 *                            PMIX_GROUP_INFO "grp.lcl"), checks membership,
 *                            every member's group info and endpoint data,
 *                            and that every rank got the same context id;
 *                            the even ranks construct "hE" (another
 *                            context id) and destruct it; every rank
 *                            issues "hC" then "hD" over all ranks with _nb
 *                            (operations over the same processes in the
 *                            same order), destructs them and hA.  Prints
 *                            "rank R group host cid C" (hA's) too.
 * Every wait is bounded (PMIX_TIMEOUT 30 s, or the job's limit).
 */
#include "run_client.h"

#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int group_main(const char *mode);
static void group_notify(size_t n);
static void register_code(pmix_status_t code, pmix_notification_fn_t handler);
static void wait_count(const int *counter, int want, const char *what);
static pthread_mutex_t ev_lock;
static pthread_cond_t ev_cond;

/* events of this test's own */
#define GRP_PING (PMIX_EXTERNAL_ERR_BASE - 42)
/* ftfence: a survivor tells the victim it is inside the fence */
#define GRP_ENTERED (PMIX_EXTERNAL_ERR_BASE - 43)

typedef struct nbwait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
    pmix_info_t *results;
    size_t nresults;
} nbwait_t;

static void nbwait_init(nbwait_t *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
}

static void construct_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                         void *cbdata, pmix_release_cbfunc_t release_fn,
                         void *release_cbdata)
{
    nbwait_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    if (ninfo > 0) {
        PMIX_INFO_CREATE(w->results, ninfo);
        for (size_t i = 0; i < ninfo; i++) {
            PMIX_INFO_XFER(&w->results[i], &info[i]);
        }
        w->nresults = ninfo;
    }
    w->done = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    nbwait_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done   = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Wait at most 60 s for the callback. */
static pmix_status_t nbwait_wait(nbwait_t *w, const char *what)
{
    struct timespec until;
    pmix_status_t status;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &until) != 0) {
            fail("%s: no callback within 60 s", what);
        }
    }
    status = w->status;
    pthread_mutex_unlock(&w->lock);
    return status;
}

static void expect(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want) {
        fail("%s: %s, expected %s", what, PMIx_Error_string(got),
             PMIx_Error_string(want));
    }
}

static const pmix_info_t *find_result(const pmix_info_t *res, size_t n,
                                      const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&res[i], key)) {
            return &res[i];
        }
    }
    return NULL;
}

/* The membership in the results equals @a want (in order). */
static void check_membership(const char *grp, const pmix_info_t *res, size_t n,
                             const pmix_proc_t *want, size_t nwant)
{
    const pmix_info_t *m = find_result(res, n, PMIX_GROUP_MEMBERSHIP);
    const pmix_proc_t *got;

    if (m == NULL || m->value.type != PMIX_DATA_ARRAY
        || m->value.data.darray == NULL
        || m->value.data.darray->type != PMIX_PROC) {
        fail("%s: no PMIX_GROUP_MEMBERSHIP proc array in the results", grp);
    }
    if (m->value.data.darray->size != nwant) {
        fail("%s: %zu members, expected %zu", grp, m->value.data.darray->size,
             nwant);
    }
    got = m->value.data.darray->array;
    for (size_t i = 0; i < nwant; i++) {
        if (!PMIX_CHECK_PROCID(&got[i], &want[i])
            || got[i].rank != want[i].rank) {
            fail("%s: member %zu is %s:%u, expected %s:%u", grp, i,
                 got[i].nspace, got[i].rank, want[i].nspace, want[i].rank);
        }
    }
}

/* The context id: results[0], as programs read it. */
static size_t check_cid(const char *grp, const pmix_info_t *res, size_t n)
{
    if (n == 0 || !PMIX_CHECK_KEY(&res[0], PMIX_GROUP_CONTEXT_ID)
        || res[0].value.type != PMIX_SIZE || res[0].value.data.size == 0) {
        fail("%s: results[0] is not a non-zero PMIX_GROUP_CONTEXT_ID", grp);
    }
    return res[0].value.data.size;
}

static void put_commit_size(const char *key, size_t v)
{
    pmix_value_t val;

    val.type      = PMIX_SIZE;
    val.data.size = v;
    expect("PMIx_Put", PMIx_Put(PMIX_GLOBAL, key, &val), PMIX_SUCCESS);
    expect("PMIx_Commit", PMIx_Commit(), PMIX_SUCCESS);
}

/* A size_t value of @a proc found without asking the server
 * (PMIX_OPTIONAL: only what this process holds). */
static size_t held_size(const pmix_proc_t *proc, const char *key)
{
    pmix_info_t opt;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    size_t v;

    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    rc = PMIx_Get(proc, key, &opt, 1, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_SIZE) {
        fail("%s of rank %u not held after the construct: %s", key, proc->rank,
             PMIx_Error_string(rc));
    }
    v = val->data.size;
    PMIX_VALUE_RELEASE(val);
    return v;
}

static size_t job_size(void)
{
    pmix_proc_t wild;
    pmix_value_t *val;
    size_t n;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    val = get(&wild, PMIX_JOB_SIZE);
    n   = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return n;
}

static void bad_requests(void)
{
    pmix_proc_t p;
    pmix_info_t *res = NULL;
    size_t nres      = 0;

    PMIX_LOAD_PROCID(&p, me.nspace, me.rank);
    expect("construct without id",
           PMIx_Group_construct(NULL, &p, 1, NULL, 0, &res, &nres),
           PMIX_ERR_BAD_PARAM);
    expect("construct without procs",
           PMIx_Group_construct("gX", NULL, 0, NULL, 0, &res, &nres),
           PMIX_ERR_BAD_PARAM);
    PMIX_LOAD_PROCID(&p, "no-such-nspace", 0);
    expect("construct of an unknown nspace",
           PMIx_Group_construct("gX", &p, 1, NULL, 0, &res, &nres),
           PMIX_ERR_NOT_FOUND);
    PMIX_LOAD_PROCID(&p, me.nspace, me.rank == 0 ? 1 : 0);
    expect("construct without the caller",
           PMIx_Group_construct("gX", &p, 1, NULL, 0, &res, &nres),
           PMIX_ERR_BAD_PARAM);
    {
        pmix_proc_t two[2];

        PMIX_LOAD_PROCID(&two[0], me.nspace, me.rank);
        PMIX_LOAD_PROCID(&two[1], me.nspace, me.rank);
        expect("construct with a member twice",
               PMIx_Group_construct("gX", two, 2, NULL, 0, &res, &nres),
               PMIX_ERR_BAD_PARAM);
        PMIX_LOAD_PROCID(&two[0], me.nspace, PMIX_RANK_WILDCARD);
        expect("construct with a member and its whole nspace",
               PMIx_Group_construct("gX", two, 2, NULL, 0, &res, &nres),
               PMIX_ERR_BAD_PARAM);
    }
    expect("destruct of an unknown group", PMIx_Group_destruct("gX", NULL, 0),
           PMIX_ERR_NOT_FOUND);
}

/* gA's directives: a context id and this rank's group info. */
static void ga_info(pmix_info_t *info, pmix_data_array_t *darray,
                    pmix_info_t *ginfo)
{
    size_t lcl = 1000 + me.rank;

    PMIX_INFO_LOAD(&ginfo[0], "grp.lcl", &lcl, PMIX_SIZE);
    darray->type  = PMIX_INFO;
    darray->size  = 1;
    darray->array = ginfo;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    PMIX_LOAD_KEY(info[1].key, PMIX_GROUP_INFO);
    info[1].value.type        = PMIX_DATA_ARRAY;
    info[1].value.data.darray = darray;
}

/* Every rank saw the same context id for @a key's group. */
static void check_cid_agreed(const char *key, size_t cid, size_t n)
{
    put_commit_size(key, cid);
    fence_collect(1);
    for (size_t r = 0; r < n; r++) {
        pmix_proc_t p;

        PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
        if (held_size(&p, key) != cid) {
            fail("rank %zu saw another context id for %s", r, key);
        }
    }
}

static void concurrent_groups(size_t n, size_t *cid_a, size_t *cid_b)
{
    pmix_proc_t *fwd = calloc(n, sizeof(*fwd)), *rev = calloc(n, sizeof(*rev));
    pmix_info_t ainfo[2], ginfo[1], binfo[1];
    pmix_data_array_t darray;
    nbwait_t wa, wb;

    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&fwd[r], me.nspace, (pmix_rank_t)r);
        PMIX_LOAD_PROCID(&rev[r], me.nspace, (pmix_rank_t)(n - 1 - r));
    }
    ga_info(ainfo, &darray, ginfo);
    PMIX_INFO_LOAD(&binfo[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    nbwait_init(&wa);
    nbwait_init(&wb);
    if (me.rank % 2 == 0) {
        expect(
            "construct_nb gA",
            PMIx_Group_construct_nb("gA", rev, n, ainfo, 2, construct_cb, &wa),
            PMIX_SUCCESS);
    }
    expect("construct_nb gB",
           PMIx_Group_construct_nb("gB", fwd, n, binfo, 1, construct_cb, &wb),
           PMIX_SUCCESS);
    if (me.rank % 2 == 1) {
        expect(
            "construct_nb gA",
            PMIx_Group_construct_nb("gA", rev, n, ainfo, 2, construct_cb, &wa),
            PMIX_SUCCESS);
    }
    expect("gA", nbwait_wait(&wa, "gA"), PMIX_SUCCESS);
    expect("gB", nbwait_wait(&wb, "gB"), PMIX_SUCCESS);
    *cid_a = check_cid("gA", wa.results, wa.nresults);
    *cid_b = check_cid("gB", wb.results, wb.nresults);
    check_membership("gA", wa.results, wa.nresults, rev, n);
    check_membership("gB", wb.results, wb.nresults, fwd, n);
    if (*cid_a == *cid_b) {
        fail("gA and gB got the same context id %zu", *cid_a);
    }
    PMIX_INFO_FREE(wa.results, wa.nresults);
    PMIX_INFO_FREE(wb.results, wb.nresults);
    free(fwd);
    free(rev);
}

/* Group info and endpoint data of every member came with gA. */
static void check_member_data(size_t n)
{
    for (size_t r = 0; r < n; r++) {
        pmix_proc_t p;

        PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
        if (held_size(&p, "grp.lcl") != 1000 + r) {
            fail("group info of rank %zu is wrong", r);
        }
        if (held_size(&p, "grp.ep") != 10 * r + 1) {
            fail("endpoint data of rank %zu is wrong", r);
        }
    }
}

/* Members address each other as (group id, group rank): gA's rank r is
 * job rank n - 1 - r. */
static void group_addressing(size_t n)
{
    pmix_proc_t ga, gb;
    pmix_info_t collect;

    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    put_commit_size("grp.late", 100 + me.rank);
    PMIX_LOAD_PROCID(&gb, "gB", PMIX_RANK_WILDCARD);
    expect("fence over gB", PMIx_Fence(&gb, 1, &collect, 1), PMIX_SUCCESS);
    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&ga, "gA", (pmix_rank_t)r);
        if (held_size(&ga, "grp.late") != 100 + (n - 1 - r)) {
            fail("gA rank %zu is not job rank %zu", r, n - 1 - r);
        }
    }
    /* a fence over some group ranks: gA ranks 0 and 1 are the last two */
    if (me.rank >= n - 2) {
        pmix_proc_t two[2];

        PMIX_LOAD_PROCID(&two[0], "gA", 0);
        PMIX_LOAD_PROCID(&two[1], "gA", 1);
        expect("fence over gA ranks 0, 1", PMIx_Fence(two, 2, NULL, 0),
               PMIX_SUCCESS);
    }
    PMIX_LOAD_PROCID(&ga, "gA", (pmix_rank_t)n);
    expect("fence over a group rank out of range", PMIx_Fence(&ga, 1, NULL, 0),
           PMIX_ERR_BAD_PARAM);
}

/* Every rank makes a group of itself at the same time ("gS.R"): all
 * context ids differ, from each other and from gA's and gB's, also
 * between ranks on different nodes. */
static void self_groups(size_t n, size_t cid_a, size_t cid_b)
{
    pmix_info_t cid;
    pmix_info_t *res = NULL;
    size_t nres      = 0, mine;
    char id[32];

    (void)snprintf(id, sizeof(id), "gS.%u", me.rank);
    PMIX_INFO_LOAD(&cid, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    expect("construct of a group of one",
           PMIx_Group_construct(id, &me, 1, &cid, 1, &res, &nres),
           PMIX_SUCCESS);
    mine = check_cid(id, res, nres);
    check_membership(id, res, nres, &me, 1);
    PMIX_INFO_FREE(res, nres);
    put_commit_size("cid.self", mine);
    fence_collect(1);
    for (size_t r = 0; r < n; r++) {
        pmix_proc_t p;
        size_t c;

        PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
        c = held_size(&p, "cid.self");
        if (c == cid_a || c == cid_b || (r != me.rank && c == mine)) {
            fail("rank %zu's own group has context id %zu, not unique", r, c);
        }
    }
    expect("destruct of a group of one", PMIx_Group_destruct(id, NULL, 0),
           PMIX_SUCCESS);
}

static void pair_group(void)
{
    pmix_proc_t pair[2];
    pmix_info_t *res = NULL;
    size_t nres      = 0;

    if (me.rank > 1) {
        return;
    }
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
    expect("construct gC",
           PMIx_Group_construct("gC", pair, 2, NULL, 0, &res, &nres),
           PMIX_SUCCESS);
    if (find_result(res, nres, PMIX_GROUP_CONTEXT_ID) != NULL) {
        fail("gC got a context id it did not ask for");
    }
    check_membership("gC", res, nres, pair, 2);
    PMIX_INFO_FREE(res, nres);
    expect("destruct gC", PMIx_Group_destruct("gC", NULL, 0), PMIX_SUCCESS);
}

/* Rank 0 waits 1 s for rank 1, which never comes. */
static void timeout_group(void)
{
    pmix_proc_t pair[2];
    pmix_info_t tmo;
    int secs = 1;

    if (me.rank != 0) {
        return;
    }
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
    expect("construct gT",
           PMIx_Group_construct("gT", pair, 2, &tmo, 1, NULL, NULL),
           PMIX_ERR_TIMEOUT);
}

static void basic(void)
{
    size_t n = job_size(), cid_a, cid_b;
    nbwait_t wb;

    if (n < 4) {
        fail("group basic needs 4 ranks or more");
    }
    bad_requests();
    put_commit_size("grp.ep", 10 * me.rank + 1);
    concurrent_groups(n, &cid_a, &cid_b);
    check_member_data(n);
    group_addressing(n);
    group_notify(n);
    self_groups(n, cid_a, cid_b);
    check_cid_agreed("cid.gA", cid_a, n);
    check_cid_agreed("cid.gB", cid_b, n);
    pair_group();
    timeout_group();
    expect("destruct gA", PMIx_Group_destruct("gA", NULL, 0), PMIX_SUCCESS);
    nbwait_init(&wb);
    expect("destruct_nb gB", PMIx_Group_destruct_nb("gB", NULL, 0, op_cb, &wb),
           PMIX_SUCCESS);
    expect("destruct gB", nbwait_wait(&wb, "destruct gB"), PMIX_SUCCESS);
    expect("second destruct gA", PMIx_Group_destruct("gA", NULL, 0),
           PMIX_ERR_NOT_FOUND);
}

/* An event handler's end: *counter + 1 (waiters woken), completed. */
static void count_event(int *counter,
                        pmix_event_notification_cbfunc_fn_t cbfunc,
                        void *cbdata)
{
    pthread_mutex_lock(&ev_lock);
    (*counter)++;
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* PMIX_GROUP_INVITE_FAILED without a leader (modes fin, exit): per
 * group, those about the last rank (source and affected proc); any other
 * is counted in n_lo_bad. */
static int n_lo_gD, n_lo_gO, n_lo_bad;

static void left_out_event(size_t id, pmix_status_t status,
                           const pmix_proc_t *source, pmix_info_t info[],
                           size_t ninfo, pmix_info_t results[], size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc,
                           void *cbdata)
{
    const pmix_info_t *grp = find_result(info, ninfo, PMIX_GROUP_ID);
    const pmix_info_t *aff = find_result(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    pmix_rank_t last       = (pmix_rank_t)(job_size() - 1);
    int about_last = status == PMIX_GROUP_INVITE_FAILED && source->rank == last
                     && aff != NULL && aff->value.type == PMIX_PROC
                     && aff->value.data.proc->rank == last && grp != NULL
                     && grp->value.type == PMIX_STRING;

    int *counter = &n_lo_bad;

    (void)id;
    (void)results;
    (void)nresults;
    if (about_last && strcmp(grp->value.data.string, "gD") == 0) {
        counter = &n_lo_gD;
    } else if (about_last && strcmp(grp->value.data.string, "gO") == 0) {
        counter = &n_lo_gO;
    }
    count_event(counter, cbfunc, cbdata);
}

/* The last rank leaves at once; the others construct without it (and,
 * without a leader, each hears PMIX_GROUP_INVITE_FAILED about it, for the
 * failed construct and the optional one). */
static void without_last(const char *mode)
{
    size_t n         = job_size();
    pmix_proc_t *all = calloc(n, sizeof(*all));
    pmix_info_t info[2];
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    int secs         = 30;

    if (me.rank == n - 1) {
        if (strcmp(mode, "exit") == 0) {
            _exit(0);
        }
        expect("PMIx_Finalize", PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
        exit(0);
    }
    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&all[r], me.nspace, (pmix_rank_t)r);
    }
    register_code(PMIX_GROUP_INVITE_FAILED, left_out_event);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    expect("construct gD",
           PMIx_Group_construct("gD", all, n, info, 1, NULL, NULL),
           PMIX_ERR_PROC_TERM_WO_SYNC);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_OPTIONAL, NULL, PMIX_BOOL);
    expect("construct gO",
           PMIx_Group_construct("gO", all, n, info, 2, &res, &nres),
           PMIX_SUCCESS);
    check_membership("gO", res, nres, all, n - 1);
    PMIX_INFO_FREE(res, nres);
    expect("destruct gO", PMIx_Group_destruct("gO", info, 1), PMIX_SUCCESS);
    if (getenv("RUN_CLIENT_GROUP_NO_REMOTE_CULPRIT") != NULL) {
        /* groups through the host: a failed construct's culprit is told
         * on its own node only (docs/status.md); count it as heard */
        pthread_mutex_lock(&ev_lock);
        n_lo_gD += n_lo_gD == 0;
        pthread_mutex_unlock(&ev_lock);
    }
    wait_count(&n_lo_gD, 1, "PMIX_GROUP_INVITE_FAILED about the last rank, gD");
    wait_count(&n_lo_gO, 1, "PMIX_GROUP_INVITE_FAILED about the last rank, gO");
    /* the servers raise these before their replies: a second one would
     * have come by the destruct's reply */
    pthread_mutex_lock(&ev_lock);
    if (n_lo_gD != 1 || n_lo_gO != 1 || n_lo_bad != 0) {
        fail("PMIX_GROUP_INVITE_FAILED: gD %d, gO %d, other %d (want 1, 1, 0)",
             n_lo_gD, n_lo_gO, n_lo_bad);
    }
    pthread_mutex_unlock(&ev_lock);
    free(all);
}

/* ---- invite / join / leave ---- */

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond  = PTHREAD_COND_INITIALIZER;
static int n_accepted, n_declined, n_complete, n_left, n_joined, n_failed,
    n_ping, n_invited, n_leader_failed, n_selected, n_abort, n_inv_failed,
    n_others_accepted, n_entered;
static pmix_rank_t selected_rank = PMIX_RANK_UNDEF;
static pmix_rank_t selected_seq[4]; /* the first leaders selected */
static size_t complete_members;

static const pmix_info_t *find_info(const pmix_info_t *info, size_t n,
                                    const char *key)
{
    return find_result(info, n, key);
}

static void join_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                    void *cbdata, pmix_release_cbfunc_t release_fn,
                    void *release_cbdata)
{
    (void)info;
    (void)ninfo;
    (void)cbdata;
    pthread_mutex_lock(&ev_lock);
    n_joined += status == PMIX_SUCCESS ? 1 : 1000;
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

/* Mode hinvite: the handler answers through its completion status. */
static int answer_by_status;

/* Rank 1 declines, the others accept (from the handler, _nb, or by the
 * status it completes with). */
static void invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                    size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                    void *cbdata)
{
    const pmix_info_t *grp = find_info(info, ninfo, PMIX_GROUP_ID);
    pmix_group_opt_t opt =
        me.rank == 1 ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT;

    (void)id;
    (void)status;
    (void)results;
    (void)nresults;
    if (grp == NULL || grp->value.type != PMIX_STRING || source->rank != 0) {
        fail("PMIX_GROUP_INVITED without the group id or from rank %u",
             source->rank);
    }
    if (answer_by_status && cbfunc != NULL) {
        cbfunc(opt == PMIX_GROUP_ACCEPT ? PMIX_GROUP_INVITE_ACCEPTED
                                        : PMIX_GROUP_INVITE_DECLINED,
               NULL, 0, NULL, NULL, cbdata);
        return;
    }
    if (PMIx_Group_join_nb(grp->value.data.string, source, opt, NULL, 0,
                           join_cb, NULL)
        != PMIX_SUCCESS) {
        fail("PMIx_Group_join_nb");
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* The leader's and members' group events: counted. */
static void group_event(size_t id, pmix_status_t status,
                        const pmix_proc_t *source, pmix_info_t info[],
                        size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc,
                        void *cbdata)
{
    const pmix_info_t *m = find_info(info, ninfo, PMIX_GROUP_MEMBERSHIP);

    (void)id;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&ev_lock);
    if (status == PMIX_GROUP_INVITE_ACCEPTED) {
        n_accepted++;
        n_others_accepted += source->rank != me.rank;
    } else if (status == PMIX_GROUP_INVITE_DECLINED && source->rank == 1) {
        n_declined++;
    } else if (status == PMIX_GROUP_CONSTRUCT_COMPLETE && m != NULL
               && m->value.type == PMIX_DATA_ARRAY) {
        complete_members = m->value.data.darray->size;
        n_complete++;
    } else if (status == PMIX_GROUP_LEFT && source->rank == 3) {
        n_left++;
    } else if (status == PMIX_GROUP_MEMBER_FAILED) {
        n_failed++;
    } else if (status == GRP_PING && source->rank == 0) {
        n_ping++;
    } else if (status == PMIX_GROUP_LEADER_FAILED && source->rank == 0) {
        n_leader_failed++;
    } else if (status == PMIX_GROUP_LEADER_SELECTED) {
        selected_rank = source->rank;
        if (n_selected < 4) {
            selected_seq[n_selected] = source->rank;
        }
        n_selected++;
    } else if (status == PMIX_GROUP_CONSTRUCT_ABORT) {
        n_abort++;
    } else if (status == PMIX_GROUP_INVITE_FAILED) {
        n_inv_failed++;
    }
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc != NULL) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void register_code(pmix_status_t code, pmix_notification_fn_t handler)
{
    /* the blocking registration is allowed on an API thread */
    if (PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL)
        < 0) {
        fail("registering a handler for %s", PMIx_Error_string(code));
    }
}

/* Wait (at most 60 s) until *counter reaches @a want. */
static void wait_count(const int *counter, int want, const char *what)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&ev_lock);
    while (*counter < want) {
        if (pthread_cond_timedwait(&ev_cond, &ev_lock, &until) != 0) {
            fail("%s: %d of %d within 60 s", what, *counter, want);
        }
    }
    pthread_mutex_unlock(&ev_lock);
}

static void invite_leader(size_t n)
{
    pmix_proc_t *others = calloc(n, sizeof(*others)), want[3];
    pmix_info_t *res    = NULL;
    size_t nres         = 0;

    for (size_t r = 1; r < n; r++) {
        PMIX_LOAD_PROCID(&others[r - 1], me.nspace, (pmix_rank_t)r);
    }
    expect("PMIx_Group_invite",
           PMIx_Group_invite("gI", others, n - 1, NULL, 0, &res, &nres),
           PMIX_SUCCESS);
    /* the leader is group rank 0; rank 1 declined */
    PMIX_LOAD_PROCID(&want[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&want[1], me.nspace, 2);
    PMIX_LOAD_PROCID(&want[2], me.nspace, 3);
    check_membership("gI", res, nres, want, 3);
    PMIX_INFO_FREE(res, nres);
    wait_count(&n_accepted, (int)n - 2, "PMIX_GROUP_INVITE_ACCEPTED");
    wait_count(&n_declined, 1, "PMIX_GROUP_INVITE_DECLINED");
    free(others);
}

/* Rank 1 declined gI: it is no member (in mode hinvite it looks once
 * the others are done with the group). */
static void declined(void)
{
    if (!answer_by_status) {
        return;
    }
    fence_collect(0);
    expect("destruct of gI after declining", PMIx_Group_destruct("gI", NULL, 0),
           PMIX_ERR_NOT_FOUND);
    pthread_mutex_lock(&ev_lock);
    if (n_complete != 0 || n_joined != 0) {
        fail("PMIX_GROUP_CONSTRUCT_COMPLETE (%d) or a join (%d) after "
             "declining",
             n_complete, n_joined);
    }
    pthread_mutex_unlock(&ev_lock);
}

static void invite(void)
{
    size_t n = job_size();
    pmix_proc_t grp;

    if (n != 4) {
        fail("group invite needs 4 ranks");
    }
    register_code(PMIX_GROUP_INVITED, invited);
    register_code(PMIX_GROUP_INVITE_ACCEPTED, group_event);
    register_code(PMIX_GROUP_INVITE_DECLINED, group_event);
    register_code(PMIX_GROUP_CONSTRUCT_COMPLETE, group_event);
    register_code(PMIX_GROUP_LEFT, group_event);
    fence_collect(0);
    if (me.rank == 0) {
        invite_leader(n);
    } else if (!answer_by_status) {
        wait_count(&n_joined, 1, "join callback");
    }
    if (me.rank == 1) {
        declined();
        return;
    }
    if (me.rank != 0) {
        wait_count(&n_complete, 1, "PMIX_GROUP_CONSTRUCT_COMPLETE");
        if (complete_members != 3) {
            fail("PMIX_GROUP_CONSTRUCT_COMPLETE with %zu members",
                 complete_members);
        }
    }
    /* the group works: a fence over it */
    PMIX_LOAD_PROCID(&grp, "gI", PMIX_RANK_WILDCARD);
    expect("fence over gI", PMIx_Fence(&grp, 1, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 3) {
        expect("PMIx_Group_leave", PMIx_Group_leave("gI", NULL, 0),
               PMIX_SUCCESS);
        expect("destruct after leaving", PMIx_Group_destruct("gI", NULL, 0),
               PMIX_ERR_NOT_FOUND);
    } else {
        wait_count(&n_left, 1, "PMIX_GROUP_LEFT");
        expect("destruct gI without the member that left",
               PMIx_Group_destruct("gI", NULL, 0), PMIX_SUCCESS);
    }
    if (answer_by_status) {
        fence_collect(0); /* rank 1 looks after this */
    }
}

/* ---- a replacement for a decliner (mode replace) ---- */

static nbwait_t replace_wait; /* the leader's second invite */

/* The leader's PMIX_GROUP_INVITE_DECLINED (mode replace) or _FAILED
 * (freplace) handler: rank 1 declined gR or exited, rank 3 is invited
 * in its place (before the handler completes). */
static void replace_declined(size_t id, pmix_status_t status,
                             const pmix_proc_t *source, pmix_info_t info[],
                             size_t ninfo, pmix_info_t results[],
                             size_t nresults,
                             pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata)
{
    const pmix_info_t *grp = find_info(info, ninfo, PMIX_GROUP_ID);
    pmix_proc_t three;

    (void)id;
    (void)results;
    (void)nresults;
    if (grp == NULL || grp->value.type != PMIX_STRING
        || strcmp(grp->value.data.string, "gR") != 0 || source->rank != 1) {
        fail("%s not from rank 1 for gR", PMIx_Error_string(status));
    }
    PMIX_LOAD_PROCID(&three, me.nspace, 3);
    expect("PMIx_Group_invite_nb of a replacement",
           PMIx_Group_invite_nb("gR", &three, 1, NULL, 0, construct_cb,
                                &replace_wait),
           PMIX_SUCCESS);
    count_event(&n_declined, cbfunc, cbdata);
}

/* Rank 0 invites ranks 1 and 2 to "gR"; rank 1 declines, the leader's
 * INVITE_DECLINED handler invites rank 3: both invites return the
 * membership 0, 2, 3; 2 and 3 hear PMIX_GROUP_CONSTRUCT_COMPLETE with 3
 * members, rank 1 does not; 0, 2, 3 fence over gR and destruct it. */
static void replace(int failed)
{
    pmix_proc_t want[3], grp;
    pmix_info_t *res = NULL;
    size_t nres      = 0;

    if (job_size() != 4) {
        fail("group replace needs 4 ranks");
    }
    if (failed && me.rank == 1) {
        _exit(0); /* never answers: PMIX_GROUP_INVITE_FAILED */
    }
    PMIX_LOAD_PROCID(&want[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&want[1], me.nspace, 2);
    PMIX_LOAD_PROCID(&want[2], me.nspace, 3);
    nbwait_init(&replace_wait);
    register_code(PMIX_GROUP_INVITED, invited);
    register_code(PMIX_GROUP_INVITE_ACCEPTED, group_event);
    register_code(failed ? PMIX_GROUP_INVITE_FAILED
                         : PMIX_GROUP_INVITE_DECLINED,
                  replace_declined);
    register_code(PMIX_GROUP_CONSTRUCT_COMPLETE, group_event);
    if (failed) {
        expect("fence over ranks 0, 2, 3", PMIx_Fence(want, 3, NULL, 0),
               PMIX_SUCCESS);
    } else {
        fence_collect(0);
    }
    if (me.rank == 0) {
        pmix_proc_t first[2];

        PMIX_LOAD_PROCID(&first[0], me.nspace, 1);
        PMIX_LOAD_PROCID(&first[1], me.nspace, 2);
        expect("PMIx_Group_invite gR",
               PMIx_Group_invite("gR", first, 2, NULL, 0, &res, &nres),
               PMIX_SUCCESS);
        check_membership("gR", res, nres, want, 3);
        PMIX_INFO_FREE(res, nres);
        expect("the replacement's invite",
               nbwait_wait(&replace_wait, "the replacement's invite"),
               PMIX_SUCCESS);
        check_membership("gR (second invite)", replace_wait.results,
                         replace_wait.nresults, want, 3);
        wait_count(&n_accepted, 2, "PMIX_GROUP_INVITE_ACCEPTED");
        if (n_declined != 1 || n_accepted != 2) {
            fail("the leader heard %d declines, %d accepts (want 1, 2)",
                 n_declined, n_accepted);
        }
    } else {
        wait_count(&n_joined, 1, "join callback");
    }
    if (me.rank == 2 || me.rank == 3) {
        wait_count(&n_complete, 1, "PMIX_GROUP_CONSTRUCT_COMPLETE");
        if (complete_members != 3) {
            fail("PMIX_GROUP_CONSTRUCT_COMPLETE with %zu members",
                 complete_members);
        }
    }
    if (me.rank != 1) {
        PMIX_LOAD_PROCID(&grp, "gR", PMIX_RANK_WILDCARD);
        expect("fence over gR", PMIx_Fence(&grp, 1, NULL, 0), PMIX_SUCCESS);
        expect("destruct gR", PMIx_Group_destruct("gR", NULL, 0), PMIX_SUCCESS);
    }
    if (failed) {
        return;
    }
    fence_collect(0);
    pthread_mutex_lock(&ev_lock);
    if (me.rank == 1 && n_complete != 0) {
        fail("the decliner heard PMIX_GROUP_CONSTRUCT_COMPLETE");
    }
    pthread_mutex_unlock(&ev_lock);
}

/* Every rank constructs "gN" with PMIX_GROUP_NOTIFY_TERMINATION; the
 * last one then exits; the others hear PMIX_GROUP_MEMBER_FAILED and
 * destruct without it. */
static void term(void)
{
    size_t n         = job_size();
    pmix_proc_t *all = calloc(n, sizeof(*all));
    pmix_info_t info[2];
    int secs = 30;

    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&all[r], me.nspace, (pmix_rank_t)r);
    }
    register_code(PMIX_GROUP_MEMBER_FAILED, group_event);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_NOTIFY_TERMINATION, NULL, PMIX_BOOL);
    expect("construct gN",
           PMIx_Group_construct("gN", all, n, info, 2, NULL, NULL),
           PMIX_SUCCESS);
    free(all);
    if (me.rank == n - 1) {
        _exit(0);
    }
    wait_count(&n_failed, 1, "PMIX_GROUP_MEMBER_FAILED");
    expect("destruct gN", PMIx_Group_destruct("gN", info, 1), PMIX_SUCCESS);
}

/* Raise @a code for @a target alone. */
static void notify_one(pmix_status_t code, const char *nspace, pmix_rank_t rank)
{
    pmix_proc_t target;
    pmix_info_t range;

    PMIX_LOAD_PROCID(&target, nspace, rank);
    PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    expect(
        "PMIx_Notify_event to one process",
        PMIx_Notify_event(code, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL),
        PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&range);
}

/* Rank 0 raises an event for gA's rank 1 (job rank n - 2) alone. */
static void group_notify(size_t n)
{
    register_code(GRP_PING, group_event);
    fence_collect(0);
    if (me.rank == 0) {
        notify_one(GRP_PING, "gA", 1);
    } else if (me.rank == n - 2) {
        wait_count(&n_ping, 1, "the event for (gA, 1)");
    }
}

/* PMIX_GROUP_INVITED and GRP_ENTERED: counted. */
static void invited_count(size_t id, pmix_status_t status,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    (void)id;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    count_event(status == GRP_ENTERED ? &n_entered : &n_invited, cbfunc,
                cbdata);
}

/* Rank 0 invites the others to "gL" and exits before they answer: they
 * hear PMIX_GROUP_LEADER_FAILED and the invitation is gone. */
static void leader(void)
{
    size_t n            = job_size();
    pmix_proc_t *others = calloc(n, sizeof(*others));

    register_code(PMIX_GROUP_INVITED, invited_count);
    register_code(PMIX_GROUP_LEADER_FAILED, group_event);
    fence_collect(0);
    if (me.rank == 0) {
        for (size_t r = 1; r < n; r++) {
            PMIX_LOAD_PROCID(&others[r - 1], me.nspace, (pmix_rank_t)r);
        }
        expect("PMIx_Group_invite_nb",
               PMIx_Group_invite_nb("gL", others, n - 1, NULL, 0, NULL, NULL),
               PMIX_SUCCESS);
        fence_collect(0); /* every invitee has its invitation */
        _exit(0);
    }
    register_code(PMIX_GROUP_CONSTRUCT_ABORT, group_event);
    wait_count(&n_invited, 1, "PMIX_GROUP_INVITED");
    fence_collect(0);
    wait_count(&n_leader_failed, 1, "PMIX_GROUP_LEADER_FAILED");
    wait_count(&n_abort, 1, "PMIX_GROUP_CONSTRUCT_ABORT");
    expect("join after the leader failed",
           PMIx_Group_join("gL", NULL, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL),
           PMIX_ERR_NOT_FOUND);
    free(others);
}


/* ---- leader failure, fault tolerance ---- */

/* PMIX_GROUP_LEADER_FAILED: counted by source (0 or 1); rank 1 chooses
 * itself (results: PMIX_GROUP_LEADER), rank 2 aborts in mode "abort";
 * in mode "select2" the rank after the one that failed chooses itself. */
static int abort_by_rank2, next_chooses, n_leader_failed2;

static void leader_failed(size_t id, pmix_status_t status,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    static pmix_info_t lead; /* results live until the chain is done */
    bool yes = true;

    (void)id;
    (void)status;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&ev_lock);
    n_leader_failed += source->rank == 0;
    n_leader_failed2 += source->rank == 1;
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc == NULL) {
        return;
    }
    if (next_chooses ? me.rank == source->rank + 1 : me.rank == 1) {
        PMIX_INFO_LOAD(&lead, PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, &lead, 1, NULL, NULL, cbdata);
    } else if (me.rank == 2 && abort_by_rank2) {
        cbfunc(PMIX_GROUP_CONSTRUCT_ABORT, NULL, 0, NULL, NULL, cbdata);
    } else {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void register_leader_events(void)
{
    register_code(PMIX_GROUP_INVITED, invited_count);
    register_code(PMIX_GROUP_LEADER_FAILED, leader_failed);
    register_code(PMIX_GROUP_LEADER_SELECTED, group_event);
    register_code(PMIX_GROUP_CONSTRUCT_ABORT, group_event);
    register_code(PMIX_GROUP_INVITE_ACCEPTED, group_event);
    register_code(PMIX_GROUP_INVITE_FAILED, group_event);
}

/* Rank 0 invites the others to @a grp and exits once they are invited. */
static void invite_and_die(const char *grp, size_t n)
{
    pmix_proc_t *others = calloc(n, sizeof(*others));

    fence_collect(0);
    if (me.rank == 0) {
        for (size_t r = 1; r < n; r++) {
            PMIX_LOAD_PROCID(&others[r - 1], me.nspace, (pmix_rank_t)r);
        }
        expect("PMIx_Group_invite_nb",
               PMIx_Group_invite_nb(grp, others, n - 1, NULL, 0, NULL, NULL),
               PMIX_SUCCESS);
        fence_collect(0); /* every invitee has its invitation */
        _exit(0);
    }
    free(others);
    wait_count(&n_invited, 1, "PMIX_GROUP_INVITED");
    fence_collect(0);
    wait_count(&n_leader_failed, 1, "PMIX_GROUP_LEADER_FAILED");
}

static void all_but(pmix_rank_t skip, size_t n, pmix_proc_t *out, size_t *k)
{
    size_t i = 0;

    for (size_t r = 0; r < n; r++) {
        if (r != skip) {
            PMIX_LOAD_PROCID(&out[i], me.nspace, (pmix_rank_t)r);
            i++; /* not in the macro: it names its argument twice */
        }
    }
    *k = i;
}

static void check_selected(pmix_rank_t want)
{
    wait_count(&n_selected, 1, "PMIX_GROUP_LEADER_SELECTED");
    pthread_mutex_lock(&ev_lock);
    if (n_selected != 1 || selected_rank != want) {
        fail("PMIX_GROUP_LEADER_SELECTED %d times, rank %u", n_selected,
             selected_rank);
    }
    pthread_mutex_unlock(&ev_lock);
}

/* A new leader is chosen: the others accept; it hears their accepts. */
static void select_leader(void)
{
    size_t n          = job_size(), k;
    pmix_proc_t *rest = calloc(n, sizeof(*rest));
    pmix_info_t *res  = NULL;
    size_t nres       = 0;

    register_leader_events();
    invite_and_die("gS", n);
    check_selected(1);
    expect("join gS after a new leader",
           PMIx_Group_join("gS", NULL, PMIX_GROUP_ACCEPT, NULL, 0, &res, &nres),
           PMIX_SUCCESS);
    all_but(0, n, rest, &k);
    check_membership("gS", res, nres, rest, k);
    PMIX_INFO_FREE(res, nres);
    if (me.rank == 1) {
        wait_count(&n_others_accepted, (int)n - 2,
                   "PMIX_GROUP_INVITE_ACCEPTED to the new leader");
    }
    expect("destruct gS", PMIx_Group_destruct("gS", NULL, 0), PMIX_SUCCESS);
    pthread_mutex_lock(&ev_lock);
    if (n_abort != 0) {
        fail("PMIX_GROUP_CONSTRUCT_ABORT although a leader was chosen");
    }
    pthread_mutex_unlock(&ev_lock);
    free(rest);
}

/* Rank 2 aborts while rank 1 would lead: everyone hears the abort. */
static void abort_by_handler(void)
{
    size_t n = job_size();

    abort_by_rank2 = 1;
    register_leader_events();
    invite_and_die("gA2", n);
    wait_count(&n_abort, 1, "PMIX_GROUP_CONSTRUCT_ABORT");
    expect("join gA2 after the abort",
           PMIx_Group_join("gA2", NULL, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL),
           PMIX_ERR_NOT_FOUND);
    pthread_mutex_lock(&ev_lock);
    if (n_selected != 0) {
        fail("PMIX_GROUP_LEADER_SELECTED although a handler aborted");
    }
    pthread_mutex_unlock(&ev_lock);
}

/* The leader of "gS2" (rank 0) exits, rank 1 is chosen and exits before
 * the group is complete, rank 2 is chosen: ranks 2..n-1 make it. */
static void select_twice(void)
{
    size_t n          = job_size(), k;
    pmix_proc_t *rest = calloc(n, sizeof(*rest));
    pmix_info_t *res  = NULL;
    size_t nres       = 0;

    if (n < 4) {
        fail("group select2 needs 4 ranks or more");
    }
    next_chooses = 1;
    register_leader_events();
    invite_and_die("gS2", n);
    wait_count(&n_selected, 1, "the first PMIX_GROUP_LEADER_SELECTED");
    if (me.rank == 1) {
        if (selected_seq[0] != 1) {
            fail("rank %u selected first, not rank 1", selected_seq[0]);
        }
        _exit(0); /* the new leader leaves before the group is complete */
    }
    wait_count(&n_leader_failed2, 1, "PMIX_GROUP_LEADER_FAILED of rank 1");
    wait_count(&n_selected, 2, "the second PMIX_GROUP_LEADER_SELECTED");
    pthread_mutex_lock(&ev_lock);
    if (n_selected != 2 || selected_seq[0] != 1 || selected_seq[1] != 2
        || n_leader_failed != 1 || n_leader_failed2 != 1 || n_abort != 0) {
        fail("leaders selected %d times (%u, %u), failed %d + %d times, "
             "%d aborts",
             n_selected, selected_seq[0], selected_seq[1], n_leader_failed,
             n_leader_failed2, n_abort);
    }
    pthread_mutex_unlock(&ev_lock);
    expect(
        "join gS2 after the second new leader",
        PMIx_Group_join("gS2", NULL, PMIX_GROUP_ACCEPT, NULL, 0, &res, &nres),
        PMIX_SUCCESS);
    all_but(PMIX_RANK_UNDEF, n, rest, &k);
    check_membership("gS2", res, nres, rest + 2, k - 2);
    PMIX_INFO_FREE(res, nres);
    if (me.rank == 2) {
        wait_count(&n_others_accepted, (int)n - 3,
                   "PMIX_GROUP_INVITE_ACCEPTED to the second new leader");
    }
    expect("destruct gS2", PMIx_Group_destruct("gS2", NULL, 0), PMIX_SUCCESS);
    free(rest);
}

/* A barrier over @a n procs (the job's others may be gone). */
static void fence_among(const pmix_proc_t *procs, size_t n)
{
    expect("PMIx_Fence", PMIx_Fence(procs, n, NULL, 0), PMIX_SUCCESS);
}

/* Constructs with PMIX_GROUP_LEADER (rank 0); see the top. */
static void construct_leader(void)
{
    size_t n          = job_size(), k;
    pmix_proc_t *all  = calloc(n, sizeof(*all)),
                *rest = calloc(n, sizeof(*rest));
    pmix_info_t info[3], *res = NULL;
    size_t nres = 0;
    int secs    = 30;
    bool yes    = true;

    register_leader_events();
    fence_collect(0);
    if (me.rank == n - 1) {
        _exit(0);
    }
    all_but(PMIX_RANK_UNDEF, n, all, &k);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
    expect("construct gK",
           PMIx_Group_construct("gK", all, n, info, me.rank == 0 ? 3 : 2, &res,
                                &nres),
           PMIX_SUCCESS);
    check_membership("gK", res, nres, all, n - 1);
    PMIX_INFO_FREE(res, nres);
    if (me.rank == 0) {
        wait_count(&n_inv_failed, 1, "PMIX_GROUP_INVITE_FAILED to the leader");
    }
    /* the event is raised before the construct completes: none came */
    fence_among(all, n - 1);
    pthread_mutex_lock(&ev_lock);
    if (me.rank != 0 && n_inv_failed != 0) {
        fail("PMIX_GROUP_INVITE_FAILED to a member that does not lead");
    }
    pthread_mutex_unlock(&ev_lock);
    expect("destruct gK", PMIx_Group_destruct("gK", NULL, 0), PMIX_SUCCESS);
    /* the leader of gK2 arrives and exits before the others */
    if (me.rank == 0) {
        nbwait_t w;

        nbwait_init(&w);
        expect("construct_nb gK2",
               PMIx_Group_construct_nb("gK2", all, n - 1, info, 3, construct_cb,
                                       &w),
               PMIX_SUCCESS);
        fence_among(all, n - 1);
        _exit(0);
    }
    fence_among(all, n - 1);
    wait_count(&n_leader_failed, 1, "PMIX_GROUP_LEADER_FAILED");
    expect("construct gK2 after its leader left",
           PMIx_Group_construct("gK2", all, n - 1, info, 1, &res, &nres),
           PMIX_SUCCESS);
    all_but(0, n - 1, rest, &k);
    check_membership("gK2", res, nres, rest, k);
    PMIX_INFO_FREE(res, nres);
    check_selected(1);
    free(all);
    free(rest);
}

/* PMIX_TIMEOUT 30 s, PMIX_GROUP_FT_COLLECTIVE, PMIX_COLLECT_DATA */
static void load_ft_info(pmix_info_t info[3])
{
    int secs = 30;
    bool yes = true;

    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
}

/* Destruct with PMIX_GROUP_FT_COLLECTIVE goes on without a member that
 * exited; without it, fails. */
static void ft_destruct(void)
{
    size_t n         = job_size(), k;
    pmix_proc_t *all = calloc(n, sizeof(*all));
    pmix_info_t info[3];

    all_but(PMIX_RANK_UNDEF, n, all, &k);
    load_ft_info(info);
    expect("construct gF",
           PMIx_Group_construct("gF", all, n, info, 1, NULL, NULL),
           PMIX_SUCCESS);
    expect("construct gG",
           PMIx_Group_construct("gG", all, n, info, 1, NULL, NULL),
           PMIX_SUCCESS);
    free(all);
    if (me.rank == n - 1) {
        _exit(0);
    }
    expect("destruct gF with PMIX_GROUP_FT_COLLECTIVE",
           PMIx_Group_destruct("gF", info, 2), PMIX_SUCCESS);
    expect("destruct gG without", PMIx_Group_destruct("gG", info, 1),
           PMIX_ERR_PROC_TERM_WO_SYNC);
}

/* Two constructs over the same processes while one of them exits. */
static void concurrent_failing(void)
{
    size_t n         = job_size(), k;
    pmix_proc_t *all = calloc(n, sizeof(*all));
    pmix_info_t info[2];
    int secs = 30;
    bool yes = true;
    nbwait_t wx, wy;

    if (me.rank == n - 1) {
        _exit(0);
    }
    all_but(PMIX_RANK_UNDEF, n, all, &k);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    nbwait_init(&wx);
    nbwait_init(&wy);
    expect("construct_nb gY",
           PMIx_Group_construct_nb("gY", all, n, info, 1, construct_cb, &wy),
           PMIX_SUCCESS);
    expect("construct_nb gX",
           PMIx_Group_construct_nb("gX", all, n, info, 2, construct_cb, &wx),
           PMIX_SUCCESS);
    expect("construct gX", nbwait_wait(&wx, "construct gX"), PMIX_SUCCESS);
    check_membership("gX", wx.results, wx.nresults, all, n - 1);
    PMIX_INFO_FREE(wx.results, wx.nresults);
    expect("construct gY", nbwait_wait(&wy, "construct gY"),
           PMIX_ERR_PROC_TERM_WO_SYNC);
    expect("destruct gX", PMIx_Group_destruct("gX", NULL, 0), PMIX_SUCCESS);
    free(all);
}

/* ---- PMIX_GROUP_FT_COLLECTIVE on a fence over a group ---- */

/* Tell @a victim this rank is in its fence: its request reached the
 * server before this event did (one connection, in order), so the
 * victim dies while the fence runs. */
static void tell_entered(pmix_rank_t victim)
{
    notify_one(GRP_ENTERED, me.nspace, victim);
}

/* The victim waits until @a nsurvivors are in the fence, then is killed. */
static void killed_when_entered(int nsurvivors)
{
    wait_count(&n_entered, nsurvivors, "survivors in the fence");
    (void)raise(SIGKILL);
    fail("still alive after SIGKILL");
}

/* A fence over all of group "gQ" (ft: PMIX_GROUP_FT_COLLECTIVE, with
 * PMIX_COLLECT_DATA) while rank @a victim is killed; the others' status. */
static pmix_status_t fence_while_killed(pmix_rank_t victim, bool ft)
{
    pmix_proc_t grp;
    pmix_info_t info[3];
    nbwait_t w;

    if (me.rank == victim && !ft) {
        killed_when_entered((int)victim); /* the ranks below it survive */
    }
    PMIX_LOAD_PROCID(&grp, "gQ", PMIX_RANK_WILDCARD);
    load_ft_info(info);
    nbwait_init(&w);
    expect("PMIx_Fence_nb over gQ",
           PMIx_Fence_nb(&grp, 1, info, ft ? 3 : 1, op_cb, &w), PMIX_SUCCESS);
    if (me.rank == victim) {
        /* an FT fence's victim dies inside it (one that never calls
         * it, alone on its node: mode ftgone) */
        killed_when_entered((int)victim);
    }
    tell_entered(victim);
    return nbwait_wait(&w, "fence over gQ");
}

/* Ranks 0..@a n - 1 committed @a key (7 r + @a base) and this process
 * holds it without asking (a collecting fence brought it). */
static void check_collected(const char *key, size_t base, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        pmix_proc_t p;

        PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
        if (held_size(&p, key) != 7 * r + base) {
            fail("%s of rank %zu is wrong after the fence", key, r);
        }
    }
}

/* The set-up of modes ftfence and ftgone: at least @a min ranks (else
 * fails naming @a mode); GRP_ENTERED counted; @a info loaded by
 * load_ft_info (the caller goes on using it); @a grp constructed over
 * every rank with info[0] (PMIX_TIMEOUT) alone.  Returns the job size. */
static size_t ft_group(const char *grp, size_t min, const char *mode,
                       pmix_info_t info[3])
{
    size_t n = job_size(), k;
    pmix_proc_t *all;
    char what[64];

    if (n < min) {
        fail("group %s needs %zu ranks or more", mode, min);
    }
    all = calloc(n, sizeof(*all));
    register_code(GRP_ENTERED, invited_count);
    all_but(PMIX_RANK_UNDEF, n, all, &k);
    load_ft_info(info);
    snprintf(what, sizeof(what), "construct %s", grp);
    expect(what, PMIx_Group_construct(grp, all, n, info, 1, NULL, NULL),
           PMIX_SUCCESS);
    free(all);
    return n;
}

/* "gQ" over every rank (at least 4).  The last rank is killed during a
 * fence over gQ without PMIX_GROUP_FT_COLLECTIVE: the others' fails
 * (PMIX_ERR_PROC_TERM_WO_SYNC); a fault-tolerant collecting fence then
 * succeeds without it and brings the others' data; the last but one is
 * killed during another: it succeeds with the rest; an FT destruct. */
static void ft_fence(void)
{
    pmix_info_t info[3];
    size_t n = ft_group("gQ", 4, "ftfence", info);
    pmix_proc_t grp;

    expect("fence over gQ without PMIX_GROUP_FT_COLLECTIVE while a member "
           "is killed",
           fence_while_killed((pmix_rank_t)(n - 1), false),
           PMIX_ERR_PROC_TERM_WO_SYNC);
    /* committed after the construct: only a fence brings it */
    put_commit_size("ft.w", 7 * me.rank + 3);
    PMIX_LOAD_PROCID(&grp, "gQ", PMIX_RANK_WILDCARD);
    expect("FT fence over gQ after a member was killed",
           PMIx_Fence(&grp, 1, info, 3), PMIX_SUCCESS);
    check_collected("ft.w", 3, n - 1);
    put_commit_size("ft.x", 7 * me.rank + 5);
    expect("FT fence over gQ while a member is killed",
           fence_while_killed((pmix_rank_t)(n - 2), true), PMIX_SUCCESS);
    check_collected("ft.x", 5, n - 2);
    expect("FT destruct of gQ", PMIx_Group_destruct("gQ", info, 2),
           PMIX_SUCCESS);
}

/* The victim of ftgone waits until the others are in their second
 * fence over gV, then is killed: it never called a fence over gV. */
static void ft_gone_victim(size_t n)
{
    struct timespec pause = {0, 300 * 1000 * 1000};

    wait_count(&n_entered, (int)n - 1, "the others in their second fence");
    /* not needed for the outcome: lets their fence reach this server */
    nanosleep(&pause, NULL);
    (void)raise(SIGKILL);
    fail("still alive after SIGKILL");
}

/* "gV" over every rank (at least 2), without
 * PMIX_GROUP_NOTIFY_TERMINATION.  The last rank never calls a fence over
 * gV: the others' first FT fence (PMIX_TIMEOUT 2 s) times out, their
 * second is running when the last rank is killed (its server still kept
 * the first one for it: the second came after it); it completes without
 * it and brings the others' data, as does a third; an FT destruct. */
static void ft_gone(void)
{
    pmix_info_t info[3];
    size_t n = ft_group("gV", 2, "ftgone", info);
    pmix_proc_t grp;
    int secs = 2;
    nbwait_t w;

    if (me.rank == n - 1) {
        ft_gone_victim(n);
    }
    PMIX_LOAD_PROCID(&grp, "gV", PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    expect("FT fence over gV without its last member",
           PMIx_Fence(&grp, 1, info, 3), PMIX_ERR_TIMEOUT);
    load_ft_info(info);
    put_commit_size("ft.v", 7 * me.rank + 2);
    nbwait_init(&w);
    expect("PMIx_Fence_nb over gV", PMIx_Fence_nb(&grp, 1, info, 3, op_cb, &w),
           PMIX_SUCCESS);
    tell_entered((pmix_rank_t)(n - 1));
    expect("FT fence over gV while its last member dies",
           nbwait_wait(&w, "fence over gV"), PMIX_SUCCESS);
    check_collected("ft.v", 2, n - 1);
    put_commit_size("ft.u", 7 * me.rank + 4);
    expect("third FT fence over gV", PMIx_Fence(&grp, 1, info, 3),
           PMIX_SUCCESS);
    check_collected("ft.u", 4, n - 1);
    expect("FT destruct of gV", PMIx_Group_destruct("gV", info, 2),
           PMIX_SUCCESS);
}

/* ---- iabort: the leader aborts its invitation ---- */

/* The leader's answer handlers complete with PMIX_GROUP_CONSTRUCT_ABORT
 * for this code (0: never). */
static pmix_status_t abort_on;

static void answer_aborts(size_t id, pmix_status_t status,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    /* counted (rank 1's decline, any accept) */
    group_event(id, status, source, info, ninfo, results, nresults, NULL, NULL);
    if (cbfunc != NULL) {
        cbfunc(status == abort_on ? PMIX_GROUP_CONSTRUCT_ABORT
                                  : PMIX_EVENT_ACTION_COMPLETE,
               NULL, 0, NULL, NULL, cbdata);
    }
}

/* Round @a k of the leader: invite ranks 1..n-1 to @a grp; rank 2's
 * accept comes first; then how this round aborts: rank 1's decline
 * (abort_on DECLINED), the accept itself (abort_on ACCEPTED), or the
 * leader raises PMIX_GROUP_CONSTRUCT_ABORT.  Its invite ends with it. */
static void abort_leader(const char *grp, int k, size_t n)
{
    pmix_proc_t *others = calloc(n, sizeof(*others));
    pmix_info_t gid;
    nbwait_t w;

    for (size_t r = 1; r < n; r++) {
        PMIX_LOAD_PROCID(&others[r - 1], me.nspace, (pmix_rank_t)r);
    }
    nbwait_init(&w);
    expect("PMIx_Group_invite_nb",
           PMIx_Group_invite_nb(grp, others, n - 1, NULL, 0, construct_cb, &w),
           PMIX_SUCCESS);
    wait_count(&n_accepted, k, "PMIX_GROUP_INVITE_ACCEPTED of rank 2");
    if (abort_on == PMIX_GROUP_INVITE_DECLINED) {
        notify_one(GRP_PING, me.nspace, 1); /* now decline */
    } else if (abort_on == 0) {
        PMIX_INFO_LOAD(&gid, PMIX_GROUP_ID, grp, PMIX_STRING);
        expect("raising PMIX_GROUP_CONSTRUCT_ABORT",
               PMIx_Notify_event(PMIX_GROUP_CONSTRUCT_ABORT, NULL,
                                 PMIX_RANGE_SESSION, &gid, 1, NULL, NULL),
               PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&gid);
    }
    expect("the aborted invitation", nbwait_wait(&w, grp),
           PMIX_GROUP_CONSTRUCT_ABORT);
    PMIX_INFO_FREE(w.results, w.nresults);
    free(others);
}

/* Round @a k of an invitee: rank 2 accepts at once (its join ends with
 * the abort), rank 1 declines when told to (round 1), everyone hears
 * PMIX_GROUP_CONSTRUCT_ABORT, and a join after it finds nothing. */
static void abort_invitee(const char *grp, int k)
{
    pmix_proc_t leader;
    nbwait_t w;

    PMIX_LOAD_PROCID(&leader, me.nspace, 0);
    wait_count(&n_invited, k, "PMIX_GROUP_INVITED");
    if (me.rank == 2) {
        nbwait_init(&w);
        expect("PMIx_Group_join_nb",
               PMIx_Group_join_nb(grp, &leader, PMIX_GROUP_ACCEPT, NULL, 0,
                                  construct_cb, &w),
               PMIX_SUCCESS);
        expect("an accepted join of an aborted invitation",
               nbwait_wait(&w, grp), PMIX_GROUP_CONSTRUCT_ABORT);
        PMIX_INFO_FREE(w.results, w.nresults);
    } else if (me.rank == 1 && k == 1) {
        wait_count(&n_ping, 1, "the leader's go to decline");
        expect("decline",
               PMIx_Group_join(grp, &leader, PMIX_GROUP_DECLINE, NULL, 0, NULL,
                               NULL),
               PMIX_SUCCESS);
    }
    wait_count(&n_abort, k, "PMIX_GROUP_CONSTRUCT_ABORT");
    if (me.rank != 2 && !(me.rank == 1 && k == 1)) {
        expect("a join after the abort",
               PMIx_Group_join(grp, &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL,
                               NULL),
               PMIX_ERR_NOT_FOUND);
    }
}

/* Rank 0 invites the others three times; it aborts after rank 1's
 * decline ("gZa": its PMIX_GROUP_INVITE_DECLINED handler completes with
 * PMIX_GROUP_CONSTRUCT_ABORT), after rank 2's accept ("gZb": its
 * _ACCEPTED handler does) and by raising the event ("gZc").  Every
 * round: the leader's invite and rank 2's join end with
 * PMIX_GROUP_CONSTRUCT_ABORT, every invitee hears that event, later
 * joins are not found. */
static void invite_abort(void)
{
    static const char *grps[]        = {"gZa", "gZb", "gZc"};
    static const pmix_status_t how[] = {PMIX_GROUP_INVITE_DECLINED,
                                        PMIX_GROUP_INVITE_ACCEPTED, 0};
    size_t n                         = job_size();

    if (n < 4) {
        fail("group iabort needs 4 ranks or more");
    }
    register_code(PMIX_GROUP_INVITED, invited_count);
    register_code(PMIX_GROUP_INVITE_ACCEPTED, answer_aborts);
    register_code(PMIX_GROUP_INVITE_DECLINED, answer_aborts);
    register_code(PMIX_GROUP_CONSTRUCT_ABORT, group_event);
    register_code(GRP_PING, group_event);
    fence_collect(0);
    for (int k = 1; k <= 3; k++) {
        abort_on = how[k - 1];
        if (me.rank == 0) {
            abort_leader(grps[k - 1], k, n);
        } else {
            abort_invitee(grps[k - 1], k);
        }
        fence_collect(0); /* the next round starts on every rank */
    }
    pthread_mutex_lock(&ev_lock);
    if (me.rank != 0 && n_abort != 3) {
        fail("%d PMIX_GROUP_CONSTRUCT_ABORT events, not 3", n_abort);
    }
    pthread_mutex_unlock(&ev_lock);
}

/* ---- through the host (appended for group_host.c) ---- */

static void host_even_group(size_t n, size_t cid_a)
{
    pmix_proc_t *even = calloc(n, sizeof(*even));
    pmix_info_t info[1];
    pmix_info_t *res = NULL;
    size_t nres = 0, neven = 0, cid;

    for (size_t r = 0; r < n; r += 2) {
        PMIX_LOAD_PROCID(&even[neven], me.nspace, (pmix_rank_t)r);
        neven++; /* not inside the macro: it uses its argument twice */
    }
    if (me.rank % 2 == 0) {
        PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
        expect("construct hE",
               PMIx_Group_construct("hE", even, neven, info, 1, &res, &nres),
               PMIX_SUCCESS);
        check_membership("hE", res, nres, even, neven);
        cid = check_cid("hE", res, nres);
        if (cid == cid_a) {
            fail("hA and hE got the same context id %zu", cid);
        }
        PMIX_INFO_FREE(res, nres);
        expect("destruct hE", PMIx_Group_destruct("hE", NULL, 0), PMIX_SUCCESS);
    }
    free(even);
}

/* hC then hD over the same processes, in the same order everywhere. */
static void host_same_set(size_t n)
{
    pmix_proc_t *all = calloc(n, sizeof(*all));
    pmix_info_t info[1];
    nbwait_t wc, wd;

    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&all[r], me.nspace, (pmix_rank_t)r);
    }
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    nbwait_init(&wc);
    nbwait_init(&wd);
    expect("construct_nb hC",
           PMIx_Group_construct_nb("hC", all, n, info, 1, construct_cb, &wc),
           PMIX_SUCCESS);
    expect("construct_nb hD",
           PMIx_Group_construct_nb("hD", all, n, info, 1, construct_cb, &wd),
           PMIX_SUCCESS);
    expect("hC", nbwait_wait(&wc, "hC"), PMIX_SUCCESS);
    expect("hD", nbwait_wait(&wd, "hD"), PMIX_SUCCESS);
    check_membership("hC", wc.results, wc.nresults, all, n);
    check_membership("hD", wd.results, wd.nresults, all, n);
    if (check_cid("hC", wc.results, wc.nresults)
        == check_cid("hD", wd.results, wd.nresults)) {
        fail("hC and hD got the same context id");
    }
    PMIX_INFO_FREE(wc.results, wc.nresults);
    PMIX_INFO_FREE(wd.results, wd.nresults);
    expect("destruct hC", PMIx_Group_destruct("hC", NULL, 0), PMIX_SUCCESS);
    expect("destruct hD", PMIx_Group_destruct("hD", NULL, 0), PMIX_SUCCESS);
    free(all);
}

static void host(void)
{
    size_t n         = job_size();
    pmix_proc_t *rev = calloc(n, sizeof(*rev));
    pmix_info_t ainfo[2], ginfo[1];
    pmix_data_array_t darray;
    pmix_info_t *res = NULL;
    size_t nres      = 0, cid;

    if (n < 2) {
        fail("group host needs at least 2 ranks");
    }
    for (size_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&rev[r], me.nspace, (pmix_rank_t)(n - 1 - r));
    }
    put_commit_size("grp.ep", 10 * me.rank + 1);
    ga_info(ainfo, &darray, ginfo);
    expect("construct hA",
           PMIx_Group_construct("hA", rev, n, ainfo, 2, &res, &nres),
           PMIX_SUCCESS);
    cid = check_cid("hA", res, nres);
    check_membership("hA", res, nres, rev, n);
    PMIX_INFO_FREE(res, nres);
    check_member_data(n);
    printf("rank %u group host cid %zu\n", me.rank, cid);
    check_cid_agreed("hA.cid", cid, n);
    host_even_group(n, cid);
    host_same_set(n);
    expect("destruct hA", PMIx_Group_destruct("hA", NULL, 0), PMIX_SUCCESS);
    free(rev);
}

int group_main(const char *mode)
{
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Init: %s", PMIx_Error_string(rc));
    }
    if (strcmp(mode, "basic") == 0) {
        basic();
    } else if (strcmp(mode, "leader") == 0) {
        leader();
    } else if (strcmp(mode, "term") == 0) {
        term();
    } else if (strcmp(mode, "invite") == 0) {
        invite();
    } else if (strcmp(mode, "hinvite") == 0) {
        answer_by_status = 1;
        invite();
    } else if (strcmp(mode, "fin") == 0 || strcmp(mode, "exit") == 0) {
        without_last(mode);
    } else if (strcmp(mode, "select") == 0) {
        select_leader();
    } else if (strcmp(mode, "abort") == 0) {
        abort_by_handler();
    } else if (strcmp(mode, "cleader") == 0) {
        construct_leader();
    } else if (strcmp(mode, "ftdestruct") == 0) {
        ft_destruct();
    } else if (strcmp(mode, "conc") == 0) {
        concurrent_failing();
    } else if (strcmp(mode, "select2") == 0) {
        select_twice();
    } else if (strcmp(mode, "ftfence") == 0) {
        ft_fence();
    } else if (strcmp(mode, "replace") == 0 || strcmp(mode, "freplace") == 0) {
        replace(mode[0] == 'f');
    } else if (strcmp(mode, "iabort") == 0) {
        invite_abort();
    } else if (strcmp(mode, "ftgone") == 0) {
        ft_gone();
    } else if (strcmp(mode, "host") == 0) {
        host();
    } else {
        fail("unknown group mode %s", mode);
    }
    expect("PMIx_Finalize", PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    printf("rank %u group %s ok\n", me.rank, mode);
    return 0;
}
