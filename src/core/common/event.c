/* event.c - event handler registry, the Standard's handler chain, notify */
#include "config.h"
#include "core/common/runtime.h"
#include "core/util/directive.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/list.h"
#include "core/loop/loop.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <pmix.h>

#include <string.h>

/*
 * Handlers live in three category lists (one code, several codes, no code
 * = default) plus two global slots (PMIX_EVENT_HDLR_FIRST / LAST).  A
 * delivery snapshots the ids of the matching handlers in calling order:
 *   global first, single-code list, multi-code list, default list,
 *   global last
 * and walks that snapshot one handler at a time: each handler's completion
 * callback continues the chain (on the loop thread), and a handler that
 * completes with PMIX_EVENT_ACTION_COMPLETE ends it.  A handler removed
 * while a chain is running is skipped.  Everything here belongs to the
 * loop thread; the API functions only validate, copy and post.
 */

enum hdlr_cat {
    CAT_SINGLE  = 0,
    CAT_MULTI   = 1,
    CAT_DEFAULT = 2,
    CAT_COUNT   = 3
};

enum hdlr_pos {
    POS_APPEND = 0,   /* default: end of the middle part of its category */
    POS_PREPEND,      /* start of the middle part of its category */
    POS_CAT_FIRST,    /* pinned first of its category */
    POS_CAT_LAST,     /* pinned last of its category */
    POS_GLOBAL_FIRST, /* before every other handler */
    POS_GLOBAL_LAST,  /* after every other handler */
    POS_BEFORE,       /* just before the handler named in `rel` */
    POS_AFTER         /* just after the handler named in `rel` */
};

typedef struct evhdlr {
    rdp_list_t link; /* in its category list (unused for global slots) */
    size_t id;
    enum hdlr_cat cat;
    enum hdlr_pos pos;
    char *name; /* PMIX_EVENT_HDLR_NAME or NULL */
    char *rel;  /* name for POS_BEFORE / POS_AFTER */
    pmix_status_t *codes;
    size_t ncodes;
    pmix_notification_fn_t fn;
    void *cbobject;        /* PMIX_EVENT_RETURN_OBJECT */
    pmix_proc_t *affected; /* PMIX_EVENT_AFFECTED_PROC(S) filter */
    size_t naffected;
    pmix_proc_t *range; /* PMIX_EVENT_CUSTOM_RANGE filter on the source */
    size_t nrange;
    /* registration request only */
    pmix_hdlr_reg_cbfunc_t reg_cb;
    void *reg_cbdata;
} evhdlr_t;

/*
 * Events that no handler took (raised here or sent by the server before a
 * matching handler was registered), oldest first.  The first handler
 * registered later that matches one gets it, alone, and it leaves the
 * cache; as OpenPMIx 4.2.2, at most EVENT_CACHE_MAX are kept (the oldest
 * goes) for at most EVENT_CACHE_SECONDS.
 */
#define EVENT_CACHE_MAX     512
#define EVENT_CACHE_SECONDS 120.0

typedef struct cached_ev {
    rdp_list_t link;
    pmix_status_t code;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info;
    size_t ninfo;
    double since;
} cached_ev_t;

static struct {
    int ready;
    rdp_list_t cats[CAT_COUNT];
    evhdlr_t *first;
    evhdlr_t *last;
    rdp_hash_t byid; /* id -> evhdlr_t */
    size_t next_id;
    rdp_list_t cache; /* cached_ev_t */
    size_t ncached;
} reg;

rdp_event_forward_fn_t rdp_event_forward = NULL;
rdp_event_chain_end_fn_t rdp_event_chain_end = NULL;

/* A running delivery.  `info` holds the event's info followed by two spare
 * slots that carry, for the handler being called, its name and its
 * return object (what the Standard says a handler receives). */
typedef struct evchain {
    pmix_status_t code;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info;
    size_t nbase;  /* event info entries */
    size_t ninfo;  /* entries passed to the current handler */
    size_t nalloc; /* entries allocated (nbase + 2 spare) */
    pmix_info_t *results;
    size_t nresults;
    size_t *ids;
    size_t nids;
    size_t next;
    pmix_status_t hdlr_status; /* see rdp_event_chain_end */
    void (*done)(void *arg);   /* see rdp_event_deliver_then */
    void *done_arg;
} evchain_t;

/* ---------------------------------------------------------------- */
/* helpers                                                          */

static int registry_ready(void)
{
    if (!reg.ready) {
        for (int i = 0; i < CAT_COUNT; i++) {
            rdp_list_init(&reg.cats[i]);
        }
        rdp_list_init(&reg.cache);
        reg.ncached = 0;
        if (rdp_hash_init(&reg.byid, 0) != PMIX_SUCCESS) {
            return 0;
        }
        reg.next_id = 0;
        reg.ready   = 1;
    }
    return 1;
}

static void hdlr_free(evhdlr_t *h)
{
    if (h == NULL) {
        return;
    }
    rdp_free(h->name);
    rdp_free(h->rel);
    rdp_free(h->codes);
    rdp_free(h->affected);
    rdp_free(h->range);
    rdp_free(h);
}

static int proc_matches(const pmix_proc_t *a, const pmix_proc_t *b)
{
    if (strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) != 0) {
        return 0;
    }
    return a->rank == b->rank || a->rank == PMIX_RANK_WILDCARD
           || b->rank == PMIX_RANK_WILDCARD;
}

static int procs_overlap(const pmix_proc_t *a, size_t na, const pmix_proc_t *b,
                         size_t nb)
{
    for (size_t i = 0; i < na; i++) {
        for (size_t j = 0; j < nb; j++) {
            if (proc_matches(&a[i], &b[j])) {
                return 1;
            }
        }
    }
    return 0;
}

/* Copy the procs an info names (a pmix_proc_t* or a data array of them)
 * and append them to *procs_p. */
static pmix_status_t procs_append_from_value(const pmix_value_t *val,
                                             pmix_proc_t **procs_p,
                                             size_t *nprocs_p)
{
    const pmix_proc_t *src;
    size_t n;
    pmix_proc_t *grown;

    if (val->type == PMIX_PROC && val->data.proc != NULL) {
        src = val->data.proc;
        n   = 1;
    } else if (val->type == PMIX_DATA_ARRAY && val->data.darray != NULL
               && val->data.darray->type == PMIX_PROC) {
        src = val->data.darray->array;
        n   = val->data.darray->size;
        if (n > 0 && src == NULL) {
            return PMIX_ERR_BAD_PARAM;
        }
    } else {
        return PMIX_ERR_BAD_PARAM;
    }
    if (n == 0) {
        return PMIX_SUCCESS;
    }
    grown = rdp_realloc(*procs_p, (*nprocs_p + n) * sizeof(pmix_proc_t));
    if (grown == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(&grown[*nprocs_p], src, n * sizeof(pmix_proc_t));
    *procs_p = grown;
    *nprocs_p += n;
    return PMIX_SUCCESS;
}

/* Copy @a n infos; NULL/0 is fine. */
static pmix_status_t info_dup(const pmix_info_t *src, size_t n, size_t spare,
                              pmix_info_t **dst_p)
{
    pmix_info_t *dst;
    pmix_status_t status;

    *dst_p = NULL;
    if (n + spare == 0) {
        return PMIX_SUCCESS;
    }
    dst = rdp_calloc(n + spare, sizeof(*dst));
    if (dst == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        status = rdp_info_copy(&dst[i], &src[i]);
        if (status != PMIX_SUCCESS) {
            rdp_info_array_free(dst, i);
            return status;
        }
    }
    *dst_p = dst;
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* registration                                                     */

static pmix_status_t hdlr_parse_info(evhdlr_t *h, const pmix_info_t *info,
                                     size_t ninfo)
{
    int npos = 0;
    pmix_status_t status;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_NAME)) {
            if (in->value.type != PMIX_STRING) {
                return PMIX_ERR_BAD_PARAM;
            }
            rdp_free(h->name);
            h->name = NULL;
            if (in->value.data.string != NULL) {
                h->name = rdp_strdup(in->value.data.string);
                if (h->name == NULL) {
                    return PMIX_ERR_NOMEM;
                }
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_FIRST)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_GLOBAL_FIRST;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_LAST)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_GLOBAL_LAST;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_CAT_FIRST;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_LAST_IN_CATEGORY)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_CAT_LAST;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_PREPEND)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_PREPEND;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_APPEND)) {
            if (PMIX_INFO_TRUE(in)) {
                h->pos = POS_APPEND;
                npos++;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_BEFORE)
                   || PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_AFTER)) {
            if (in->value.type != PMIX_STRING
                || in->value.data.string == NULL) {
                return PMIX_ERR_BAD_PARAM;
            }
            rdp_free(h->rel);
            h->rel = rdp_strdup(in->value.data.string);
            if (h->rel == NULL) {
                return PMIX_ERR_NOMEM;
            }
            h->pos = PMIX_CHECK_KEY(in, PMIX_EVENT_HDLR_BEFORE) ? POS_BEFORE
                                                                : POS_AFTER;
            npos++;
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_RETURN_OBJECT)) {
            if (in->value.type != PMIX_POINTER) {
                return PMIX_ERR_BAD_PARAM;
            }
            h->cbobject = in->value.data.ptr;
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_AFFECTED_PROC)
                   || PMIX_CHECK_KEY(in, PMIX_EVENT_AFFECTED_PROCS)) {
            status = procs_append_from_value(&in->value, &h->affected,
                                             &h->naffected);
            if (status != PMIX_SUCCESS) {
                return status;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_EVENT_CUSTOM_RANGE)) {
            status = procs_append_from_value(&in->value, &h->range, &h->nrange);
            if (status != PMIX_SUCCESS) {
                return status;
            }
        }
    }
    if (npos > 1) {
        rdp_log_error(CORE,
                      "event handler registration asks for %d "
                      "conflicting positions",
                      npos);
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

static evhdlr_t *find_by_name(rdp_list_t *list, const char *name)
{
    evhdlr_t *h;

    rdp_list_for_each(h, list, link) {
        if (h->name != NULL && strcmp(h->name, name) == 0) {
            return h;
        }
    }
    return NULL;
}

static int is_pinned(const rdp_list_t *list, const rdp_list_t *item,
                     enum hdlr_pos pos)
{
    if (item == list) {
        return 0;
    }
    return rdp_container_of(item, evhdlr_t, link)->pos == pos;
}

static int is_named(const evhdlr_t *h, const char *name)
{
    return h != NULL && h->name != NULL && strcmp(h->name, name) == 0;
}

/* A handler placed after the overall-first one (or before the overall-last
 * one) is not in any category list: it goes to the start (end) of its
 * category, as OpenPMIx 4.2.2 places it. Before the first or after the last
 * stays an error (not found). */
static void place_next_to_global(evhdlr_t *h, rdp_list_t *list)
{
    if ((h->pos != POS_BEFORE && h->pos != POS_AFTER)
        || find_by_name(list, h->rel) != NULL) {
        return;
    }
    if (h->pos == POS_AFTER && is_named(reg.first, h->rel)) {
        h->pos = POS_PREPEND;
    } else if (h->pos == POS_BEFORE && is_named(reg.last, h->rel)) {
        h->pos = POS_APPEND;
    }
}

/* Loop thread: place @a h and give it an id. */
static pmix_status_t hdlr_insert(evhdlr_t *h)
{
    rdp_list_t *list;
    evhdlr_t *rel;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (!registry_ready()) {
        return PMIX_ERR_NOMEM;
    }
    list = &reg.cats[h->cat];
    place_next_to_global(h, list);
    switch (h->pos) {
    case POS_GLOBAL_FIRST:
    case POS_GLOBAL_LAST:
        if ((h->pos == POS_GLOBAL_FIRST ? reg.first : reg.last) != NULL) {
            rdp_log_error(CORE, "an event handler is already registered %s",
                          h->pos == POS_GLOBAL_FIRST ? "first" : "last");
            return PMIX_ERR_EVENT_REGISTRATION;
        }
        break;
    case POS_CAT_FIRST:
        if (is_pinned(list, list->next, POS_CAT_FIRST)) {
            return PMIX_ERR_EVENT_REGISTRATION;
        }
        break;
    case POS_CAT_LAST:
        if (is_pinned(list, list->prev, POS_CAT_LAST)) {
            return PMIX_ERR_EVENT_REGISTRATION;
        }
        break;
    case POS_BEFORE:
    case POS_AFTER:
        rel = find_by_name(list, h->rel);
        if (rel == NULL) {
            rdp_log_error(CORE, "event handler '%s' to place %s not found",
                          h->rel, h->pos == POS_BEFORE ? "before" : "after");
            return PMIX_ERR_EVENT_REGISTRATION;
        }
        break;
    default:
        break;
    }

    status = rdp_hash_set_u64(&reg.byid, reg.next_id, h, NULL);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    h->id = reg.next_id++;

    switch (h->pos) {
    case POS_GLOBAL_FIRST:
        reg.first = h;
        rdp_list_init(&h->link);
        break;
    case POS_GLOBAL_LAST:
        reg.last = h;
        rdp_list_init(&h->link);
        break;
    case POS_CAT_FIRST:
        rdp_list_push_front(list, &h->link);
        break;
    case POS_CAT_LAST:
        rdp_list_push_back(list, &h->link);
        break;
    case POS_PREPEND:
        if (is_pinned(list, list->next, POS_CAT_FIRST)) {
            rdp_list_insert_between(&h->link, list->next, list->next->next);
        } else {
            rdp_list_push_front(list, &h->link);
        }
        break;
    case POS_BEFORE:
        rel = find_by_name(list, h->rel);
        rdp_list_insert_between(&h->link, rel->link.prev, &rel->link);
        break;
    case POS_AFTER:
        rel = find_by_name(list, h->rel);
        rdp_list_insert_between(&h->link, &rel->link, rel->link.next);
        break;
    case POS_APPEND:
    default:
        if (is_pinned(list, list->prev, POS_CAT_LAST)) {
            rdp_list_insert_between(&h->link, list->prev->prev, list->prev);
        } else {
            rdp_list_push_back(list, &h->link);
        }
        break;
    }
    rdp_log_debug(CORE, "event handler %zu (%s) registered for %zu codes",
                  h->id, h->name != NULL ? h->name : "unnamed", h->ncodes);
    return PMIX_SUCCESS;
}

static void cache_replay(const evhdlr_t *h);

static pmix_status_t register_sync(void *arg)
{
    evhdlr_t *h = arg;
    pmix_status_t status;

    status = hdlr_insert(h);
    if (status != PMIX_SUCCESS) {
        hdlr_free(h);
        return status;
    }
    cache_replay(h);
    if (h->id > (size_t)INT32_MAX) {
        /* the blocking form returns the id as a status */
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return (pmix_status_t)h->id;
}

static void register_async(void *arg)
{
    evhdlr_t *h               = arg;
    pmix_hdlr_reg_cbfunc_t cb = h->reg_cb;
    void *cbdata              = h->reg_cbdata;
    pmix_status_t status;
    size_t id = SIZE_MAX;

    status = hdlr_insert(h);
    if (status == PMIX_SUCCESS) {
        id = h->id;
    } else {
        hdlr_free(h);
        h = NULL;
    }
    cb(status, id, cbdata);
    if (h != NULL && rdp_hash_get_u64(&reg.byid, id) == h) {
        cache_replay(h); /* its chains start after the callback */
    }
}

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc,
                                          void *cbdata)
{
    evhdlr_t *h;
    pmix_status_t status;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_runtime_active()) {
        return PMIX_ERR_INIT;
    }
    if (evhdlr == NULL || (codes == NULL && ncodes > 0)
        || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    h = rdp_calloc(1, sizeof(*h));
    if (h == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_list_init(&h->link);
    h->fn  = evhdlr;
    h->pos = POS_APPEND;
    if (ncodes > 0) {
        h->codes = rdp_malloc(ncodes * sizeof(*codes));
        if (h->codes == NULL) {
            status = PMIX_ERR_NOMEM;
            goto err_free;
        }
        memcpy(h->codes, codes, ncodes * sizeof(*codes));
    }
    h->ncodes = ncodes;
    h->cat = ncodes == 0 ? CAT_DEFAULT : ncodes == 1 ? CAT_SINGLE : CAT_MULTI;
    status = hdlr_parse_info(h, info, ninfo);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }

    if (cbfunc == NULL) {
        /* blocking: the handler id (>= 0) or an error */
        return rdp_runtime_call_sync(register_sync, h);
    }
    h->reg_cb     = cbfunc;
    h->reg_cbdata = cbdata;
    status        = rdp_loop_post(rdp_rt.loop, register_async, h);
    if (status != PMIX_SUCCESS) {
        goto err_free;
    }
    return PMIX_SUCCESS;

err_free:
    hdlr_free(h);
    return status;
}

typedef struct dereg_req {
    size_t id;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} dereg_req_t;

static pmix_status_t deregister_sync(void *arg)
{
    dereg_req_t *req = arg;
    evhdlr_t *h;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    h = reg.ready ? rdp_hash_remove_u64(&reg.byid, req->id) : NULL;
    if (h == NULL) {
        /* OpenPMIx 4.2.2 reports success for a handler it does not have
         * (programs deregister twice on error paths), and so do we */
        rdp_log_debug(CORE, "no event handler %zu to deregister", req->id);
        return PMIX_SUCCESS;
    }
    if (reg.first == h) {
        reg.first = NULL;
    } else if (reg.last == h) {
        reg.last = NULL;
    } else {
        rdp_list_del(&h->link);
    }
    rdp_log_debug(CORE, "event handler %zu deregistered", req->id);
    hdlr_free(h);
    return PMIX_SUCCESS;
}

static void deregister_async(void *arg)
{
    dereg_req_t *req = arg;
    pmix_status_t status;

    status = deregister_sync(req);
    req->cbfunc(status, req->cbdata);
    rdp_free(req);
}

pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref,
                                            pmix_op_cbfunc_t cbfunc,
                                            void *cbdata)
{
    dereg_req_t *req;
    dereg_req_t sreq = {evhdlr_ref, NULL, NULL};
    pmix_status_t status;

    if (!rdp_runtime_active()) {
        return PMIX_ERR_INIT;
    }
    if (cbfunc == NULL) {
        return rdp_runtime_call_sync(deregister_sync, &sreq);
    }
    req = rdp_malloc(sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->id     = evhdlr_ref;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    status      = rdp_loop_post(rdp_rt.loop, deregister_async, req);
    if (status != PMIX_SUCCESS) {
        rdp_free(req);
    }
    return status;
}

/* ---------------------------------------------------------------- */
/* delivery                                                         */

static int hdlr_has_code(const evhdlr_t *h, pmix_status_t code)
{
    for (size_t i = 0; i < h->ncodes; i++) {
        if (h->codes[i] == code) {
            return 1;
        }
    }
    return 0;
}

typedef struct ev_facts {
    pmix_status_t code;
    const pmix_proc_t *source;
    int non_default;
    pmix_proc_t *affected;
    size_t naffected;
} ev_facts_t;

static int hdlr_matches(const evhdlr_t *h, const ev_facts_t *ev)
{
    if (h->ncodes > 0) {
        if (!hdlr_has_code(h, ev->code)) {
            return 0;
        }
    } else if (ev->non_default) {
        return 0;
    }
    if (h->naffected > 0
        && (ev->naffected == 0
            || !procs_overlap(h->affected, h->naffected, ev->affected,
                              ev->naffected))) {
        return 0;
    }
    if (h->nrange > 0 && !procs_overlap(h->range, h->nrange, ev->source, 1)) {
        return 0;
    }
    return 1;
}

/* The delivery ends: tell the role, then free. */
static void chain_end(evchain_t *chain)
{
    if (rdp_event_chain_end != NULL) {
        rdp_event_chain_end(chain->code, chain->info, chain->nbase,
                            chain->results, chain->nresults,
                            chain->hdlr_status);
    }
}

static void chain_free(evchain_t *chain)
{
    if (chain == NULL) {
        return;
    }
    if (chain->done != NULL) {
        chain->done(chain->done_arg);
    }
    /* unused spare slots are zeroed (PMIX_UNDEF) */
    rdp_info_array_free(chain->info, chain->nalloc);
    rdp_info_array_free(chain->results, chain->nresults);
    rdp_free(chain->ids);
    rdp_free(chain);
}

static void chain_done_on_loop(void *arg);

typedef struct chain_step {
    evchain_t *chain;
    pmix_status_t status;
    pmix_info_t *results;
    size_t nresults;
    pmix_op_cbfunc_t cbfunc;
    void *thiscbdata;
} chain_step_t;

/* The handler is done (any thread): continue on the loop. */
static void chain_done_cb(pmix_status_t status, pmix_info_t *results,
                          size_t nresults, pmix_op_cbfunc_t cbfunc,
                          void *thiscbdata, void *notification_cbdata)
{
    chain_step_t *step = rdp_calloc(1, sizeof(*step));

    if (step == NULL) {
        rdp_log_error(CORE, "out of memory continuing an event chain");
        return;
    }
    step->chain      = notification_cbdata;
    step->status     = status;
    step->results    = results;
    step->nresults   = nresults;
    step->cbfunc     = cbfunc;
    step->thiscbdata = thiscbdata;
    if (rdp_loop_post(rdp_rt.loop, chain_done_on_loop, step) != PMIX_SUCCESS) {
        rdp_log_error(CORE, "out of memory continuing an event chain");
        rdp_free(step);
    }
}

static void chain_set_slot(pmix_info_t *slot, const char *key,
                           pmix_data_type_t type)
{
    memset(slot, 0, sizeof(*slot));
    PMIX_LOAD_KEY(slot->key, key);
    slot->value.type = type;
}

static void chain_run_next(evchain_t *chain)
{
    evhdlr_t *h = NULL;

    while (chain->next < chain->nids) {
        h = rdp_hash_get_u64(&reg.byid, chain->ids[chain->next++]);
        if (h != NULL) {
            break;
        }
    }
    if (h == NULL) {
        chain_end(chain);
        chain_free(chain);
        return;
    }
    /* refresh the spare slots for this handler */
    for (size_t i = chain->nbase; i < chain->ninfo; i++) {
        rdp_value_destruct(&chain->info[i].value);
        memset(&chain->info[i], 0, sizeof(chain->info[i]));
    }
    chain->ninfo = chain->nbase;
    if (h->name != NULL) {
        pmix_info_t *slot = &chain->info[chain->ninfo];

        chain_set_slot(slot, PMIX_EVENT_HDLR_NAME, PMIX_STRING);
        slot->value.data.string = rdp_strdup(h->name);
        if (slot->value.data.string != NULL) {
            chain->ninfo++;
        } else {
            slot->value.type = PMIX_UNDEF;
        }
    }
    if (h->cbobject != NULL) {
        pmix_info_t *slot = &chain->info[chain->ninfo];

        chain_set_slot(slot, PMIX_EVENT_RETURN_OBJECT, PMIX_POINTER);
        slot->value.data.ptr = h->cbobject;
        chain->ninfo++;
    }
    rdp_log_trace(CORE, "event %d: calling handler %zu", chain->code, h->id);
    h->fn(h->id, chain->code, &chain->source,
          chain->ninfo > 0 ? chain->info : NULL, chain->ninfo,
          chain->nresults > 0 ? chain->results : NULL, chain->nresults,
          chain_done_cb, chain);
}

static void chain_done_on_loop(void *arg)
{
    chain_step_t *step = arg;
    evchain_t *chain   = step->chain;
    pmix_info_t *grown;

    /* keep this handler's results for the next ones */
    if (step->nresults > 0 && step->results != NULL) {
        grown = rdp_realloc(chain->results, (chain->nresults + step->nresults)
                                                * sizeof(pmix_info_t));
        if (grown != NULL) {
            chain->results = grown;
            for (size_t i = 0; i < step->nresults; i++) {
                if (rdp_info_copy(&grown[chain->nresults], &step->results[i])
                    == PMIX_SUCCESS) {
                    chain->nresults++;
                }
            }
        }
    }
    if (step->cbfunc != NULL) {
        step->cbfunc(PMIX_SUCCESS, step->thiscbdata);
    }
    if (chain->hdlr_status == PMIX_SUCCESS && step->status != PMIX_SUCCESS
        && step->status != PMIX_EVENT_ACTION_COMPLETE) {
        chain->hdlr_status = step->status;
    }
    if (step->status == PMIX_EVENT_ACTION_COMPLETE) {
        rdp_log_trace(CORE, "event %d: chain completed by a handler",
                      chain->code);
        chain_end(chain);
        chain_free(chain);
    } else {
        chain_run_next(chain);
    }
    rdp_free(step);
}

static void chain_start(void *arg)
{
    chain_run_next(arg);
}

static size_t collect_ids(size_t *ids, const ev_facts_t *ev)
{
    size_t n = 0;
    evhdlr_t *h;

    if (reg.first != NULL && hdlr_matches(reg.first, ev)) {
        ids[n++] = reg.first->id;
    }
    for (int c = 0; c < CAT_COUNT; c++) {
        rdp_list_for_each(h, &reg.cats[c], link) {
            if (hdlr_matches(h, ev)) {
                ids[n++] = h->id;
            }
        }
    }
    if (reg.last != NULL && hdlr_matches(reg.last, ev)) {
        ids[n++] = reg.last->id;
    }
    return n;
}

/* Facts the filters need, read from the event's info (borrowed). */
static pmix_status_t ev_facts_read(ev_facts_t *ev, const pmix_info_t *info,
                                   size_t ninfo)
{
    pmix_status_t status;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_NON_DEFAULT)) {
            ev->non_default = PMIX_INFO_TRUE(&info[i]);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)
                   || PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS)) {
            status = procs_append_from_value(&info[i].value, &ev->affected,
                                             &ev->naffected);
            if (status == PMIX_ERR_NOMEM) {
                return status;
            }
        }
    }
    return PMIX_SUCCESS;
}

/* Start a chain over @a ids (taken) on the loop; once it is posted,
 * @a done (if not NULL) is called when it is freed. */
static pmix_status_t chain_post(pmix_status_t code, const pmix_proc_t *source,
                                pmix_data_range_t range,
                                const pmix_info_t *info, size_t ninfo,
                                size_t *ids, size_t nids, void (*done)(void *),
                                void *done_arg)
{
    evchain_t *chain = rdp_calloc(1, sizeof(*chain));
    pmix_status_t status;

    if (chain == NULL) {
        rdp_free(ids);
        return PMIX_ERR_NOMEM;
    }
    chain->ids    = ids;
    chain->nids   = nids;
    chain->code   = code;
    chain->source = *source;
    chain->range  = range;
    /* two spare slots for the handler name and return object */
    status = info_dup(info, ninfo, 2, &chain->info);
    if (status == PMIX_SUCCESS) {
        chain->nbase  = ninfo;
        chain->ninfo  = ninfo;
        chain->nalloc = ninfo + 2;
        status        = rdp_loop_post(rdp_rt.loop, chain_start, chain);
    }
    if (status != PMIX_SUCCESS) {
        chain_free(chain);
        return status;
    }
    chain->done     = done;
    chain->done_arg = done_arg;
    rdp_log_debug(CORE, "event %d from %s:%u: %zu handlers", code,
                  source->nspace, source->rank, nids);
    return PMIX_SUCCESS;
}

bool rdp_event_do_not_cache(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_DO_NOT_CACHE)) {
            return PMIX_INFO_TRUE(&info[i]);
        }
    }
    return 0;
}

static void cache_drop(cached_ev_t *ce)
{
    rdp_list_del(&ce->link);
    reg.ncached--;
    rdp_info_array_free(ce->info, ce->ninfo);
    rdp_free(ce);
}

static void cache_expire(void)
{
    double now = rdp_time_now();
    cached_ev_t *ce, *tmp;

    rdp_list_for_each_safe(ce, tmp, &reg.cache, link) {
        if (now - ce->since <= EVENT_CACHE_SECONDS
            && reg.ncached <= EVENT_CACHE_MAX) {
            break; /* oldest first: the rest are younger */
        }
        cache_drop(ce);
    }
}

static pmix_status_t cache_add(pmix_status_t code, const pmix_proc_t *source,
                               pmix_data_range_t range,
                               const pmix_info_t *info, size_t ninfo)
{
    cached_ev_t *ce = rdp_calloc(1, sizeof(*ce));
    pmix_status_t status;

    if (ce == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = info_dup(info, ninfo, 0, &ce->info);
    if (status != PMIX_SUCCESS) {
        rdp_free(ce);
        return status;
    }
    ce->code   = code;
    ce->source = *source;
    ce->range  = range;
    ce->ninfo  = ninfo;
    ce->since  = rdp_time_now();
    rdp_list_push_back(&reg.cache, &ce->link);
    reg.ncached++;
    cache_expire();
    rdp_log_debug(CORE, "event %d kept for a later handler (%zu kept)", code,
                  reg.ncached);
    return PMIX_SUCCESS;
}

/* A handler was registered: give it, alone, each kept event it matches. */
static void cache_replay(const evhdlr_t *h)
{
    cached_ev_t *ce, *tmp;

    if (!reg.ready) {
        return;
    }
    cache_expire();
    rdp_list_for_each_safe(ce, tmp, &reg.cache, link) {
        ev_facts_t ev = {.code = ce->code, .source = &ce->source};
        size_t *ids;
        int match;

        if (ev_facts_read(&ev, ce->info, ce->ninfo) != PMIX_SUCCESS) {
            rdp_free(ev.affected);
            continue;
        }
        match = hdlr_matches(h, &ev);
        rdp_free(ev.affected);
        if (!match || (ids = rdp_malloc(sizeof(*ids))) == NULL) {
            continue;
        }
        ids[0] = h->id;
        if (chain_post(ce->code, &ce->source, ce->range, ce->info, ce->ninfo,
                       ids, 1, NULL, NULL)
            == PMIX_SUCCESS) {
            cache_drop(ce);
        }
    }
}

static pmix_status_t deliver(pmix_status_t code, const pmix_proc_t *source,
                             pmix_data_range_t range, const pmix_info_t *info,
                             size_t ninfo, int may_cache, void (*done)(void *),
                             void *done_arg)
{
    ev_facts_t ev = {0};
    size_t *ids   = NULL;
    size_t nids   = 0;
    pmix_status_t status;

    RDP_ASSERT_ON_LOOP(rdp_rt.loop);
    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!registry_ready()) {
        return PMIX_ERR_NOMEM;
    }
    ev.code   = code;
    ev.source = source != NULL ? source : &rdp_rt.myproc;
    status    = ev_facts_read(&ev, info, ninfo);
    if (status == PMIX_SUCCESS && reg.byid.count > 0) {
        ids = rdp_malloc(reg.byid.count * sizeof(size_t));
        if (ids == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            nids = collect_ids(ids, &ev);
        }
    }
    if (status == PMIX_SUCCESS && nids == 0 && rdp_event_chain_end != NULL) {
        rdp_event_chain_end(code, info, ninfo, NULL, 0, PMIX_SUCCESS);
    }
    if (status == PMIX_SUCCESS && nids > 0) {
        status = chain_post(code, ev.source, range, info, ninfo, ids, nids,
                            done, done_arg);
        ids    = NULL;
        done   = NULL; /* the chain calls it */
    } else if (status == PMIX_SUCCESS && may_cache
               && !rdp_event_do_not_cache(info, ninfo)) {
        status = cache_add(code, ev.source, range, info, ninfo);
    } else if (status == PMIX_SUCCESS) {
        rdp_log_debug(CORE, "event %d: no matching handler", code);
    }
    rdp_free(ids);
    rdp_free(ev.affected);
    if (status == PMIX_SUCCESS && done != NULL) {
        done(done_arg); /* no chain: nothing to wait for */
    }
    return status;
}

pmix_status_t rdp_event_deliver(pmix_status_t code, const pmix_proc_t *source,
                                pmix_data_range_t range,
                                const pmix_info_t *info, size_t ninfo)
{
    return deliver(code, source, range, info, ninfo, 0, NULL, NULL);
}

pmix_status_t rdp_event_deliver_or_cache(pmix_status_t code,
                                         const pmix_proc_t *source,
                                         pmix_data_range_t range,
                                         const pmix_info_t *info,
                                         size_t ninfo)
{
    return deliver(code, source, range, info, ninfo, 1, NULL, NULL);
}

pmix_status_t rdp_event_deliver_then(pmix_status_t code,
                                     const pmix_proc_t *source,
                                     pmix_data_range_t range,
                                     const pmix_info_t *info, size_t ninfo,
                                     void (*done)(void *arg), void *done_arg)
{
    return deliver(code, source, range, info, ninfo, 1, done, done_arg);
}

void rdp_event_cleanup(void)
{
    evhdlr_t *h, *tmp;

    if (!reg.ready) {
        return;
    }
    for (int c = 0; c < CAT_COUNT; c++) {
        rdp_list_for_each_safe(h, tmp, &reg.cats[c], link) {
            rdp_list_del(&h->link);
            hdlr_free(h);
        }
    }
    while (!rdp_list_is_empty(&reg.cache)) {
        cache_drop(rdp_container_of(reg.cache.next, cached_ev_t, link));
    }
    hdlr_free(reg.first);
    hdlr_free(reg.last);
    reg.first = NULL;
    reg.last  = NULL;
    rdp_hash_cleanup(&reg.byid);
    reg.ready = 0;
}

/* ---------------------------------------------------------------- */
/* notify                                                           */

typedef struct notify_req {
    pmix_status_t code;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info;
    size_t ninfo;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} notify_req_t;

static void notify_req_free(notify_req_t *req)
{
    rdp_info_array_free(req->info, req->ninfo);
    rdp_free(req);
}

/* Does an event sent to @a range reach this process? */
static int range_includes_self(const notify_req_t *req)
{
    const pmix_proc_t *me = &rdp_rt.myproc;

    switch (req->range) {
    case PMIX_RANGE_PROC_LOCAL:
    case PMIX_RANGE_LOCAL:
    case PMIX_RANGE_SESSION:
    case PMIX_RANGE_GLOBAL:
    case PMIX_RANGE_UNDEF:
        return 1;
    case PMIX_RANGE_NAMESPACE:
        return strncmp(req->source.nspace, me->nspace, PMIX_MAX_NSLEN) == 0;
    case PMIX_RANGE_CUSTOM:
        for (size_t i = 0; i < req->ninfo; i++) {
            pmix_proc_t *procs = NULL;
            size_t nprocs      = 0;
            int hit;

            if (!PMIX_CHECK_KEY(&req->info[i], PMIX_EVENT_CUSTOM_RANGE)) {
                continue;
            }
            if (procs_append_from_value(&req->info[i].value, &procs, &nprocs)
                != PMIX_SUCCESS) {
                return 0;
            }
            hit = procs_overlap(procs, nprocs, me, 1);
            rdp_free(procs);
            return hit;
        }
        return 0;
    case PMIX_RANGE_RM:
    default:
        return 0;
    }
}

static void notify_forward_done(pmix_status_t status, void *cbdata)
{
    notify_req_t *req = cbdata;

    if (req->cbfunc != NULL) {
        req->cbfunc(status, req->cbdata);
    }
    notify_req_free(req);
}

static void notify_start(void *arg)
{
    notify_req_t *req    = arg;
    pmix_status_t status = PMIX_SUCCESS;

    if (range_includes_self(req)) {
        status = rdp_event_deliver_or_cache(req->code, &req->source,
                                            req->range, req->info, req->ninfo);
    }
    if (status == PMIX_SUCCESS && req->range != PMIX_RANGE_PROC_LOCAL
        && rdp_event_forward != NULL) {
        status =
            rdp_event_forward(req->code, &req->source, req->range, req->info,
                              req->ninfo, notify_forward_done, req);
        if (status == PMIX_SUCCESS) {
            return; /* notify_forward_done finishes */
        }
    }
    notify_forward_done(status, req);
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range,
                                const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    notify_req_t *req;
    pmix_status_t rc;

    RDP_CHECK_DIRECTIVES(info, ninfo);

    if (!rdp_runtime_active()) {
        return PMIX_ERR_INIT;
    }
    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = rdp_calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->code   = status;
    req->source = source != NULL ? *source : rdp_rt.myproc;
    req->range  = range;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    /* copied: with no callback the caller may free info at once */
    rc = info_dup(info, ninfo, 0, &req->info);
    if (rc != PMIX_SUCCESS) {
        rdp_free(req);
        return rc;
    }
    req->ninfo = ninfo;
    rc         = rdp_loop_post(rdp_rt.loop, notify_start, req);
    if (rc != PMIX_SUCCESS) {
        notify_req_free(req);
    }
    return rc;
}
