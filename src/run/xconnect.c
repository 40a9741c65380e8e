/* xconnect.c - rdpmix-run's part of a connect across launchers */
#include "config.h"
#include "run/xconnect.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "run/xconn.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds an offer may still arrive after the other launcher's socket
 * closed: its last bytes and its end can be seen in either order. */
#define XCONN_GONE_GRACE 2.0

/* A daemon's request in a group. */
typedef struct arrival {
    uint32_t node;
    uint32_t reqid;
} arrival_t;

/* One operation (op, id, participants) across the two launchers. */
typedef struct xgroup {
    rdp_list_t link;
    rdp_run_xconn_t *x;
    char *key;
    uint8_t op;
    char foreign[PMIX_MAX_NSLEN + 1];
    bool *expected; /* per node: hosts participants of our job */
    uint32_t nexpected;
    arrival_t *arrived; /* nnodes slots */
    uint32_t narrived;
    rdp_buf_t data;          /* our daemons' bundles, one after the other */
    pmix_status_t status;    /* a participant here left, ... */
    rdp_run_chan_t *out;     /* to the other launcher, once we offered */
    rdp_xconn_offer_t offer; /* the other launcher's */
    bool have_offer;
    rdp_timer_t *gone_timer;
} xgroup_t;

/* An offer that came before any of our daemons asked. */
typedef struct orphan {
    rdp_list_t link;
    rdp_xconn_offer_t offer;
} orphan_t;

/* A job we are connected to (connects minus disconnects). */
typedef struct peer_job {
    rdp_list_t link;
    char nspace[PMIX_MAX_NSLEN + 1];
    unsigned connects;
} peer_job_t;

struct rdp_run_xconn {
    rdp_run_xconn_cfg_t cfg;
    void *launch; /* our copy */
    rdp_list_t groups;
    rdp_list_t orphans;
    rdp_list_t peer_jobs;
};

/* ---- keys ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "op|id|ns:rank,...", participants sorted: both launchers make the same
 * key for one operation whatever order their processes named them in. */
static char *make_key(uint8_t op, const char *id, const pmix_proc_t *procs,
                      size_t n)
{
    char **items = rdp_calloc(n + 1, sizeof(*items));
    size_t len   = 32 + (id != NULL ? strlen(id) : 0);
    char *key    = NULL;

    for (size_t i = 0; items != NULL && i < n; i++) {
        char rank[16];

        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            snprintf(rank, sizeof(rank), "*");
        } else {
            snprintf(rank, sizeof(rank), "%u", procs[i].rank);
        }
        len += strlen(procs[i].nspace) + strlen(rank) + 2;
        items[i] = rdp_malloc(strlen(procs[i].nspace) + strlen(rank) + 2);
        if (items[i] == NULL) {
            goto out;
        }
        sprintf(items[i], "%s:%s", procs[i].nspace, rank);
    }
    if (items == NULL) {
        return NULL;
    }
    qsort(items, n, sizeof(*items), cmp_str);
    key = rdp_malloc(len);
    if (key != NULL) {
        size_t at =
            (size_t)snprintf(key, len, "%u|%s|", op, id != NULL ? id : "");

        for (size_t i = 0; i < n; i++) {
            at += (size_t)snprintf(key + at, len - at, "%s%s", i > 0 ? "," : "",
                                   items[i]);
        }
    }
out:
    for (size_t i = 0; items != NULL && i < n; i++) {
        rdp_free(items[i]);
    }
    rdp_free(items);
    return key;
}

/* The one nspace of @a procs that is not ours; an error when there is
 * none, or more than one (one other launcher a connect, for now). */
static pmix_status_t find_foreign(const rdp_run_xconn_t *x,
                                  const pmix_proc_t *procs, size_t n, char *out)
{
    bool ours = false;

    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (strcmp(procs[i].nspace, x->cfg.nspace) == 0) {
            ours = true;
        } else if (out[0] == '\0') {
            snprintf(out, PMIX_MAX_NSLEN + 1, "%s", procs[i].nspace);
        } else if (strcmp(out, procs[i].nspace) != 0) {
            rdp_log_error(RUN, "a connect over the jobs of more than two "
                               "launchers is not supported");
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    return ours && out[0] != '\0' ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

/* The pid of the launcher of @a nspace ("rdpmix.PID.HEX"), or 0. */
static long launcher_pid(const char *nspace)
{
    const char *p = nspace + strlen("rdpmix.");
    char *end;
    long pid;

    if (strncmp(nspace, "rdpmix.", strlen("rdpmix.")) != 0) {
        return 0;
    }
    pid = strtol(p, &end, 10);
    return end != p && *end == '.' && pid > 0 ? pid : 0;
}

/* ---- groups ---- */

static void group_free(xgroup_t *g)
{
    rdp_list_del(&g->link);
    if (g->out != NULL) {
        /* let our offer be written out first: the channel frees itself */
        rdp_run_chan_set_arg(g->out, NULL);
        rdp_run_chan_shutdown(g->out);
    }
    rdp_timer_destroy(g->gone_timer);
    rdp_xconn_offer_cleanup(&g->offer);
    rdp_buf_cleanup(&g->data);
    rdp_free(g->expected);
    rdp_free(g->arrived);
    rdp_free(g->key);
    rdp_free(g);
}

static void reply(rdp_run_xconn_t *x, const arrival_t *a, pmix_status_t status,
                  const rdp_xconn_offer_t *offer)
{
    rdp_xconn_done_t m = {.reqid = a->reqid, .status = status};
    rdp_buf_t buf;

    if (status == PMIX_SUCCESS && offer != NULL) {
        m.launch  = offer->launch;
        m.nlaunch = offer->nlaunch;
        m.data    = offer->data;
        m.ndata   = offer->ndata;
    }
    rdp_buf_init(&buf);
    if (rdp_xconn_done_pack(&buf, &m) != PMIX_SUCCESS) {
        rdp_log_error(RUN, "out of memory answering a connect");
        rdp_buf_cleanup(&buf);
        return;
    }
    x->cfg.send(a->node, RDP_CTL_XCONN_DONE, &buf, x->cfg.arg);
}

static peer_job_t *peer_job_find(rdp_run_xconn_t *x, const char *nspace)
{
    peer_job_t *pj;

    rdp_list_for_each(pj, &x->peer_jobs, link) {
        if (strcmp(pj->nspace, nspace) == 0) {
            return pj;
        }
    }
    return NULL;
}

/* Count a completed connect (@a up) or disconnect with @a nspace. */
static void peer_job_count(rdp_run_xconn_t *x, const char *nspace, bool up)
{
    peer_job_t *pj = peer_job_find(x, nspace);

    if (pj == NULL && up) {
        pj = rdp_calloc(1, sizeof(*pj));
        if (pj == NULL) {
            return; /* its ranks' ends then raise nothing there */
        }
        snprintf(pj->nspace, sizeof(pj->nspace), "%s", nspace);
        rdp_list_push_back(&x->peer_jobs, &pj->link);
    }
    if (pj == NULL) {
        return;
    }
    pj->connects += up ? 1 : 0;
    if (!up && pj->connects > 0 && --pj->connects == 0) {
        rdp_list_del(&pj->link);
        rdp_free(pj);
    }
}

static void group_finish(xgroup_t *g, pmix_status_t status)
{
    bool connect = g->op == RDP_XCONN_CONNECT;

    if (status == PMIX_SUCCESS) {
        peer_job_count(g->x, g->foreign, connect);
    }

    for (uint32_t i = 0; i < g->narrived; i++) {
        reply(g->x, &g->arrived[i], status,
              connect && g->have_offer ? &g->offer : NULL);
    }
    rdp_log_debug(RUN, "%s with %s: %s", connect ? "connect" : "disconnect",
                  g->foreign, rdp_status_name(status));
    group_free(g);
}

static void maybe_complete(xgroup_t *g)
{
    if (g->narrived == g->nexpected && g->out != NULL && g->have_offer) {
        group_finish(g, PMIX_SUCCESS);
    }
}

static void gone_cb(void *arg)
{
    xgroup_t *g = arg;

    rdp_log_error(RUN, "the launcher of %s ended before it joined the %s",
                  g->foreign,
                  g->op == RDP_XCONN_CONNECT ? "connect" : "disconnect");
    group_finish(g, PMIX_ERR_UNREACH);
}

static void out_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    xgroup_t *g = arg;

    (void)why;
    if (g == NULL) {
        rdp_run_chan_destroy(chan); /* the group is done */
        return;
    }
    rdp_run_chan_destroy(g->out);
    g->out = NULL;
    if (g->have_offer) {
        /* we have theirs; ours may not have arrived: they fail on their
         * side if so (their end is why it closed) */
        if (g->narrived == g->nexpected) {
            group_finish(g, PMIX_SUCCESS);
        }
        return;
    }
    rdp_timer_start(g->gone_timer, XCONN_GONE_GRACE);
}

/* Every daemon with participants asked: offer our side to the other
 * launcher. */
static void send_offer(xgroup_t *g)
{
    rdp_run_xconn_t *x   = g->x;
    rdp_xconn_offer_t of = {.to      = g->foreign,
                            .from    = (char *)x->cfg.nspace,
                            .key     = g->key,
                            .launch  = x->launch,
                            .nlaunch = x->cfg.nlaunch,
                            .data    = g->data.data,
                            .ndata   = g->data.size};
    long pid             = launcher_pid(g->foreign);
    rdp_buf_t buf;
    pmix_status_t status;

    if (pid == 0) {
        rdp_log_error(RUN,
                      "%s is not the nspace of an rdpmix-run job: "
                      "cannot connect to it",
                      g->foreign);
        group_finish(g, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    status = rdp_run_peers_open(x->cfg.peers, pid, out_close_cb, g, &g->out);
    if (status != PMIX_SUCCESS) {
        g->out = NULL;
        rdp_log_error(RUN,
                      "no launcher of %s is running (pid %ld): "
                      "cannot connect to it",
                      g->foreign, pid);
        group_finish(g, PMIX_ERR_UNREACH);
        return;
    }
    rdp_buf_init(&buf);
    status = rdp_xconn_offer_pack(&buf, &of);
    if (status == PMIX_SUCCESS) {
        status = rdp_run_chan_send(g->out, RDP_CTL_XOFFER, &buf);
    }
    rdp_buf_cleanup(&buf);
    if (status != PMIX_SUCCESS) {
        group_finish(g, status);
        return;
    }
    maybe_complete(g);
}

/* Nodes hosting participants of our job among @a procs. */
static uint32_t mark_expected(const rdp_run_xconn_t *x,
                              const pmix_proc_t *procs, size_t n, bool *exp)
{
    uint32_t count = 0;

    for (uint32_t node = 0; node < x->cfg.nnodes; node++) {
        const rdp_ctl_node_t *nd = &x->cfg.nodes[node];

        for (size_t i = 0; !exp[node] && i < n; i++) {
            if (strcmp(procs[i].nspace, x->cfg.nspace) != 0) {
                continue;
            }
            for (uint32_t k = 0; k < nd->nranks; k++) {
                if (procs[i].rank == PMIX_RANK_WILDCARD
                    || procs[i].rank == nd->ranks[k]) {
                    exp[node] = true;
                    break;
                }
            }
        }
        count += exp[node] ? 1 : 0;
    }
    return count;
}

static void adopt_orphan(rdp_run_xconn_t *x, xgroup_t *g)
{
    orphan_t *o;

    rdp_list_for_each(o, &x->orphans, link) {
        if (strcmp(o->offer.key, g->key) == 0) {
            g->offer      = o->offer;
            g->have_offer = true;
            rdp_list_del(&o->link);
            rdp_free(o);
            return;
        }
    }
}

static xgroup_t *group_create(rdp_run_xconn_t *x, const rdp_xconn_req_t *m,
                              char *key, const char *foreign)
{
    xgroup_t *g = rdp_calloc(1, sizeof(*g));

    if (g == NULL) {
        rdp_free(key);
        return NULL;
    }
    g->x        = x;
    g->op       = m->op;
    g->status   = PMIX_SUCCESS;
    g->expected = rdp_calloc(x->cfg.nnodes + 1, sizeof(*g->expected));
    g->arrived  = rdp_calloc(x->cfg.nnodes + 1, sizeof(*g->arrived));
    rdp_buf_init(&g->data);
    rdp_list_init(&g->link);
    if (g->expected == NULL || g->arrived == NULL
        || rdp_timer_create(x->cfg.loop, gone_cb, g, &g->gone_timer)
               != PMIX_SUCCESS) {
        group_free(g);
        rdp_free(key);
        return NULL;
    }
    g->key = key;
    snprintf(g->foreign, sizeof(g->foreign), "%s", foreign);
    g->nexpected = mark_expected(x, m->procs, m->nprocs, g->expected);
    rdp_list_push_back(&x->groups, &g->link);
    adopt_orphan(x, g);
    return g;
}

/* The open group of @a key that @a node has not joined yet. */
static xgroup_t *group_find(rdp_run_xconn_t *x, const char *key, uint32_t node)
{
    xgroup_t *g;

    rdp_list_for_each(g, &x->groups, link) {
        bool joined = false;

        for (uint32_t i = 0; i < g->narrived; i++) {
            joined = joined || g->arrived[i].node == node;
        }
        if (!joined && strcmp(g->key, key) == 0) {
            return g;
        }
    }
    return NULL;
}

/* ---- requests of our daemons ---- */

static void refuse(rdp_run_xconn_t *x, uint32_t node, uint32_t reqid,
                   pmix_status_t status)
{
    arrival_t a = {.node = node, .reqid = reqid};

    reply(x, &a, status, NULL);
}

void rdp_run_xconn_request(rdp_run_xconn_t *x, uint32_t node,
                           const void *payload, size_t len)
{
    char foreign[PMIX_MAX_NSLEN + 1];
    rdp_xconn_req_t m;
    xgroup_t *g;
    char *key;
    pmix_status_t status;

    if (node >= x->cfg.nnodes
        || rdp_xconn_req_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed connect request from node %u", node);
        return;
    }
    status = find_foreign(x, m.procs, m.nprocs, foreign);
    key =
        status == PMIX_SUCCESS ? make_key(m.op, m.id, m.procs, m.nprocs) : NULL;
    g = key != NULL ? group_find(x, key, node) : NULL;
    if (key != NULL && g == NULL) {
        g = group_create(x, &m, key, foreign);
    } else {
        rdp_free(key);
    }
    if (g == NULL || !g->expected[node]) {
        if (status == PMIX_SUCCESS) {
            status = g == NULL ? PMIX_ERR_NOMEM : PMIX_ERR_BAD_PARAM;
        }
        refuse(x, node, m.reqid, status);
        rdp_xconn_req_cleanup(&m);
        return;
    }
    g->arrived[g->narrived].node    = node;
    g->arrived[g->narrived++].reqid = m.reqid;
    if (m.lstatus != PMIX_SUCCESS) {
        g->status = m.lstatus;
    } else if (rdp_buf_append(&g->data, m.data, m.ndata) != PMIX_SUCCESS) {
        g->status = PMIX_ERR_NOMEM;
    }
    rdp_xconn_req_cleanup(&m);
    if (g->narrived == g->nexpected) {
        if (g->status != PMIX_SUCCESS) {
            group_finish(g, g->status);
        } else {
            send_offer(g);
        }
    }
}

/* ---- termination events ---- */

static void event_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    (void)why;
    (void)arg;
    rdp_run_chan_destroy(chan);
}

static pmix_status_t pack_event(rdp_buf_t *buf, pmix_status_t code,
                                const pmix_proc_t *rank, const char *to,
                                int exit_code)
{
    pmix_proc_t range;
    pmix_info_t info[3];
    rdp_ctl_event_t m = {.code   = code,
                         .source = *rank,
                         .range  = PMIX_RANGE_CUSTOM,
                         .info   = info,
                         .ninfo  = 3};
    pmix_status_t status;

    PMIX_LOAD_PROCID(&range, to, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, rank, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    PMIX_INFO_LOAD(&info[2], PMIX_EVENT_CUSTOM_RANGE, &range, PMIX_PROC);
    status = rdp_ctl_event_pack(buf, &m);
    for (size_t i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return status;
}

/* Both events to the launcher of @a pj, over a channel of their own. */
static void tell_peer_job(rdp_run_xconn_t *x, const peer_job_t *pj,
                          const pmix_proc_t *rank, int exit_code)
{
    static const pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED,
                                          PMIX_EVENT_PROC_TERMINATED};
    rdp_run_chan_t *chan;

    if (rdp_run_peers_open(x->cfg.peers, launcher_pid(pj->nspace),
                           event_close_cb, NULL, &chan)
        != PMIX_SUCCESS) {
        return; /* gone: nobody there to tell */
    }
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        if (pack_event(&buf, codes[i], rank, pj->nspace, exit_code)
            == PMIX_SUCCESS) {
            rdp_run_chan_send(chan, RDP_CTL_XEVENT, &buf);
        }
        rdp_buf_cleanup(&buf);
    }
    rdp_run_chan_shutdown(chan); /* written out, then closed and freed */
}

void rdp_run_xconn_rank_failed(rdp_run_xconn_t *x, pmix_rank_t rank,
                               int exit_code)
{
    pmix_proc_t proc;
    peer_job_t *pj;

    if (x == NULL) {
        return;
    }
    PMIX_LOAD_PROCID(&proc, x->cfg.nspace, rank);
    rdp_list_for_each(pj, &x->peer_jobs, link) {
        tell_peer_job(x, pj, &proc, exit_code);
    }
}

/* True when @a nspace is a job we are connected to or connecting with
 * (its event can overtake its offer). */
static bool knows_job(rdp_run_xconn_t *x, const char *nspace)
{
    xgroup_t *g;

    rdp_list_for_each(g, &x->groups, link) {
        if (strcmp(g->foreign, nspace) == 0) {
            return true;
        }
    }
    return peer_job_find(x, nspace) != NULL;
}

/* An XEVENT: relay it to every daemon, which raises it there. */
static pmix_status_t event_in(rdp_run_xconn_t *x, const void *payload,
                              size_t len)
{
    rdp_ctl_event_t m;
    bool known;

    if (rdp_ctl_event_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed event from another launcher");
        return PMIX_ERR_UNPACK_FAILURE;
    }
    known = knows_job(x, m.source.nspace);
    if (!known) {
        rdp_log_warn(RUN,
                     "an event of job %s, which we are not connected "
                     "to, dropped",
                     m.source.nspace);
    }
    rdp_ctl_event_cleanup(&m);
    if (!known) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint32_t node = 0; node < x->cfg.nnodes; node++) {
        rdp_buf_t buf;

        rdp_buf_init(&buf);
        if (rdp_buf_append(&buf, payload, len) == PMIX_SUCCESS) {
            x->cfg.send(node, RDP_CTL_NOTIFY, &buf, x->cfg.arg);
        }
        rdp_buf_cleanup(&buf);
    }
    return PMIX_SUCCESS;
}

/* ---- offers of other launchers ---- */

static pmix_status_t offer_in(rdp_run_xconn_t *x, const void *payload,
                              size_t len);

static pmix_status_t offer_cb(uint16_t cmd, const void *payload, size_t len,
                              void *arg)
{
    return cmd == RDP_CTL_XEVENT ? event_in(arg, payload, len)
                                 : offer_in(arg, payload, len);
}

static pmix_status_t offer_in(rdp_run_xconn_t *x, const void *payload,
                              size_t len)
{
    rdp_xconn_offer_t of;
    xgroup_t *g;
    orphan_t *o;

    if (rdp_xconn_offer_unpack(payload, len, &of) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed connect offer from another launcher");
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (strcmp(of.to, x->cfg.nspace) != 0) {
        rdp_log_warn(RUN, "a connect offer for %s, which is not our job",
                     of.to);
        rdp_xconn_offer_cleanup(&of);
        return PMIX_ERR_BAD_PARAM;
    }
    rdp_list_for_each(g, &x->groups, link) {
        if (!g->have_offer && strcmp(g->key, of.key) == 0
            && strcmp(g->foreign, of.from) == 0) {
            rdp_timer_cancel(g->gone_timer);
            g->offer      = of;
            g->have_offer = true;
            maybe_complete(g);
            return PMIX_SUCCESS;
        }
    }
    o = rdp_calloc(1, sizeof(*o));
    if (o == NULL) {
        rdp_xconn_offer_cleanup(&of);
        return PMIX_ERR_NOMEM;
    }
    o->offer = of;
    rdp_list_push_back(&x->orphans, &o->link);
    return PMIX_SUCCESS;
}

/* ---- life ---- */

pmix_status_t rdp_run_xconn_create(const rdp_run_xconn_cfg_t *cfg,
                                   rdp_run_xconn_t **x_p)
{
    rdp_run_xconn_t *x = rdp_calloc(1, sizeof(*x));

    if (x == NULL) {
        return PMIX_ERR_NOMEM;
    }
    x->cfg    = *cfg;
    x->launch = rdp_malloc(cfg->nlaunch);
    if (x->launch == NULL) {
        rdp_free(x);
        return PMIX_ERR_NOMEM;
    }
    memcpy(x->launch, cfg->launch, cfg->nlaunch);
    rdp_list_init(&x->groups);
    rdp_list_init(&x->orphans);
    rdp_list_init(&x->peer_jobs);
    if (cfg->peers != NULL) {
        rdp_run_peers_on_offer(cfg->peers, offer_cb, x);
    }
    *x_p = x;
    return PMIX_SUCCESS;
}

void rdp_run_xconn_destroy(rdp_run_xconn_t *x)
{
    if (x == NULL) {
        return;
    }
    if (x->cfg.peers != NULL) {
        rdp_run_peers_on_offer(x->cfg.peers, NULL, NULL);
    }
    while (!rdp_list_is_empty(&x->groups)) {
        xgroup_t *g = rdp_container_of(x->groups.next, xgroup_t, link);

        /* the loop runs no more: a shut-down channel would never close */
        rdp_run_chan_destroy(g->out);
        g->out = NULL;
        group_finish(g, PMIX_ERR_LOST_CONNECTION);
    }
    while (!rdp_list_is_empty(&x->orphans)) {
        orphan_t *o = rdp_container_of(x->orphans.next, orphan_t, link);

        rdp_list_del(&o->link);
        rdp_xconn_offer_cleanup(&o->offer);
        rdp_free(o);
    }
    while (!rdp_list_is_empty(&x->peer_jobs)) {
        peer_job_t *pj = rdp_container_of(x->peer_jobs.next, peer_job_t, link);

        rdp_list_del(&pj->link);
        rdp_free(pj);
    }
    rdp_free(x->launch);
    rdp_free(x);
}
