/* datasvc.c - rdpmix-run's publish/lookup/unpublish data store */
#include "config.h"
#include "run/datasvc.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/value.h"

#include <string.h>

/* One published key. */
typedef struct ds_rec {
    rdp_list_t link;
    pmix_proc_t owner;
    uint32_t node;
    pmix_data_range_t range;
    pmix_persistence_t persist;
    pmix_proc_t *custom; /* PMIX_RANGE_CUSTOM: who may see it */
    size_t ncustom;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;
} ds_rec_t;

/* Where a lookup searches and how long it waits. */
typedef struct ds_scope {
    pmix_data_range_t range;
    const pmix_proc_t *custom; /* borrowed from the request */
    size_t ncustom;
    int wait;    /* PMIX_WAIT given */
    size_t want; /* keys it waits for (all by default) */
    double timeout;
} ds_scope_t;

/* A lookup with PMIX_WAIT that did not find enough keys yet. */
typedef struct ds_wait {
    rdp_list_t link;
    rdp_ds_who_t who;
    char **keys;
    size_t nkeys;
    ds_scope_t scope;
    pmix_proc_t *custom; /* owned copy behind scope.custom */
    double deadline;     /* 0: none */
    rdp_ds_reply_cb_t reply_cb;
    void *arg;
} ds_wait_t;

struct rdp_ds {
    rdp_list_t recs;  /* ds_rec_t, in publish order */
    rdp_list_t waits; /* ds_wait_t, in arrival order */
};

rdp_ds_t *rdp_ds_create(void)
{
    rdp_ds_t *ds = rdp_calloc(1, sizeof(*ds));

    if (ds != NULL) {
        rdp_list_init(&ds->recs);
        rdp_list_init(&ds->waits);
    }
    return ds;
}

static void rec_free(ds_rec_t *rec)
{
    rdp_list_del(&rec->link);
    rdp_value_destruct(&rec->value);
    rdp_free(rec->custom);
    rdp_free(rec);
}

static void wait_free(ds_wait_t *w)
{
    rdp_list_del(&w->link);
    for (size_t i = 0; i < w->nkeys; i++) {
        rdp_free(w->keys[i]);
    }
    rdp_free(w->keys);
    rdp_free(w->custom);
    rdp_free(w);
}

static void wait_fail(ds_wait_t *w, pmix_status_t status)
{
    rdp_ds_reply_cb_t cb = w->reply_cb;
    void *arg            = w->arg;

    wait_free(w);
    cb(status, NULL, 0, arg);
}

void rdp_ds_destroy(rdp_ds_t *ds)
{
    ds_rec_t *rec, *rtmp;
    ds_wait_t *w, *wtmp;

    if (ds == NULL) {
        return;
    }
    rdp_list_for_each_safe(w, wtmp, &ds->waits, link) {
        wait_fail(w, PMIX_ERR_LOST_CONNECTION);
    }
    rdp_list_for_each_safe(rec, rtmp, &ds->recs, link) {
        rec_free(rec);
    }
    rdp_free(ds);
}

/* ---- reading directives ---- */

static int key_is(const pmix_info_t *info, const char *key)
{
    return strncmp(info->key, key, PMIX_MAX_KEYLEN) == 0;
}

static int is_directive(const pmix_info_t *info)
{
    static const char *const directives[] = {PMIX_RANGE,
                                             PMIX_PERSISTENCE,
                                             PMIX_EVENT_CUSTOM_RANGE,
                                             PMIX_TIMEOUT,
                                             PMIX_USERID,
                                             PMIX_GRPID,
                                             PMIX_WAIT,
                                             NULL};

    for (size_t i = 0; directives[i] != NULL; i++) {
        if (key_is(info, directives[i])) {
            return 1;
        }
    }
    return 0;
}

static int proc_in(const pmix_proc_t *p, const pmix_proc_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_NSPACE(set[i].nspace, p->nspace)
            && (set[i].rank == PMIX_RANK_WILDCARD || set[i].rank == p->rank)) {
            return 1;
        }
    }
    return 0;
}

static int same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return PMIX_CHECK_NSPACE(a->nspace, b->nspace) && a->rank == b->rank;
}

/* The range directive, as the Standard types it. */
static pmix_status_t read_range(const pmix_info_t *info,
                                pmix_data_range_t *range_p)
{
    if (info->value.type != PMIX_DATA_RANGE) {
        return PMIX_ERR_BAD_PARAM;
    }
    switch (info->value.data.range) {
    case PMIX_RANGE_UNDEF:
        *range_p = PMIX_RANGE_SESSION; /* the Standard's default */
        return PMIX_SUCCESS;
    case PMIX_RANGE_LOCAL:
    case PMIX_RANGE_NAMESPACE:
    case PMIX_RANGE_SESSION:
    case PMIX_RANGE_GLOBAL:
    case PMIX_RANGE_CUSTOM:
    case PMIX_RANGE_PROC_LOCAL:
        *range_p = info->value.data.range;
        return PMIX_SUCCESS;
    case PMIX_RANGE_RM:
        return PMIX_ERR_NOT_SUPPORTED; /* no resource manager above us */
    default:
        return PMIX_ERR_BAD_PARAM;
    }
}

static pmix_status_t read_custom(const pmix_info_t *info,
                                 const pmix_proc_t **procs_p, size_t *n_p)
{
    const pmix_value_t *v = &info->value;

    if (v->type == PMIX_PROC && v->data.proc != NULL) {
        *procs_p = v->data.proc;
        *n_p     = 1;
        return PMIX_SUCCESS;
    }
    if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL
        && v->data.darray->type == PMIX_PROC
        && (v->data.darray->array != NULL || v->data.darray->size == 0)) {
        *procs_p = v->data.darray->array;
        *n_p     = v->data.darray->size;
        return PMIX_SUCCESS;
    }
    return PMIX_ERR_BAD_PARAM;
}

/* PMIX_WAIT: true or 0 -> every key; N -> N keys; false -> no wait. */
static pmix_status_t read_wait(const pmix_info_t *info, ds_scope_t *sc)
{
    const pmix_value_t *v = &info->value;
    long n;

    switch (v->type) {
    case PMIX_BOOL:
        sc->wait = v->data.flag;
        return PMIX_SUCCESS;
    case PMIX_UNDEF:
        sc->wait = 1;
        return PMIX_SUCCESS;
    case PMIX_INT:
        n = v->data.integer;
        break;
    case PMIX_INT32:
        n = v->data.int32;
        break;
    case PMIX_UINT32:
        n = (long)v->data.uint32;
        break;
    case PMIX_SIZE:
        n = (long)v->data.size;
        break;
    default:
        return PMIX_ERR_BAD_PARAM;
    }
    if (n < 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    sc->wait = 1;
    if (n > 0 && (size_t)n < sc->want) {
        sc->want = (size_t)n;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t read_timeout(const pmix_info_t *info, double *timeout_p)
{
    const pmix_value_t *v = &info->value;

    if (v->type == PMIX_INT && v->data.integer >= 0) {
        *timeout_p = v->data.integer;
    } else if (v->type == PMIX_INT32 && v->data.int32 >= 0) {
        *timeout_p = v->data.int32;
    } else if (v->type == PMIX_UINT32) {
        *timeout_p = v->data.uint32;
    } else {
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

/* Range, custom list, wait and timeout of a lookup or unpublish. */
static pmix_status_t read_scope(const pmix_info_t *info, size_t ninfo,
                                size_t nkeys, ds_scope_t *sc)
{
    pmix_status_t status = PMIX_SUCCESS;

    memset(sc, 0, sizeof(*sc));
    sc->range = PMIX_RANGE_SESSION;
    sc->want  = nkeys;
    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        if (key_is(&info[i], PMIX_RANGE)) {
            status = read_range(&info[i], &sc->range);
        } else if (key_is(&info[i], PMIX_EVENT_CUSTOM_RANGE)) {
            status = read_custom(&info[i], &sc->custom, &sc->ncustom);
        } else if (key_is(&info[i], PMIX_WAIT)) {
            status = read_wait(&info[i], sc);
        } else if (key_is(&info[i], PMIX_TIMEOUT)) {
            status = read_timeout(&info[i], &sc->timeout);
        }
    }
    if (status == PMIX_SUCCESS && sc->range == PMIX_RANGE_CUSTOM
        && sc->custom == NULL) {
        status = PMIX_ERR_BAD_PARAM;
    }
    return status;
}

pmix_status_t rdp_ds_read_wait(const pmix_info_t *info, size_t ninfo,
                               size_t nkeys, int *global_p, size_t *want_p,
                               double *timeout_p)
{
    ds_scope_t sc;
    pmix_status_t status = read_scope(info, ninfo, nkeys, &sc);

    if (status == PMIX_SUCCESS) {
        *global_p  = sc.range == PMIX_RANGE_GLOBAL;
        *want_p    = sc.wait ? sc.want : 0;
        *timeout_p = sc.timeout;
    }
    return status;
}

/* ---- who sees what ---- */

/* May @a who see @a rec at all (the publisher's range)? */
static int rec_visible(const ds_rec_t *rec, const rdp_ds_who_t *who)
{
    if (who->foreign) {
        return rec->range == PMIX_RANGE_GLOBAL;
    }
    switch (rec->range) {
    case PMIX_RANGE_PROC_LOCAL:
        return same_proc(&rec->owner, &who->proc);
    case PMIX_RANGE_LOCAL:
        return rec->node == who->node;
    case PMIX_RANGE_NAMESPACE:
        return PMIX_CHECK_NSPACE(rec->owner.nspace, who->proc.nspace);
    case PMIX_RANGE_CUSTOM:
        return same_proc(&rec->owner, &who->proc)
               || proc_in(&who->proc, rec->custom, rec->ncustom);
    default:
        return 1;
    }
}

/* Is @a rec where a lookup (or unpublish) of range @a sc searches? */
static int rec_in_scope(const ds_rec_t *rec, const rdp_ds_who_t *who,
                        const ds_scope_t *sc)
{
    switch (sc->range) {
    case PMIX_RANGE_PROC_LOCAL:
        return same_proc(&rec->owner, &who->proc);
    case PMIX_RANGE_LOCAL:
        return !who->foreign && rec->node == who->node;
    case PMIX_RANGE_NAMESPACE:
        return PMIX_CHECK_NSPACE(rec->owner.nspace, who->proc.nspace);
    case PMIX_RANGE_CUSTOM:
        return proc_in(&rec->owner, sc->custom, sc->ncustom);
    default:
        return 1;
    }
}

/* Two publishes of one key collide when their ranges are the same one. */
static int same_range(const ds_rec_t *rec, const rdp_ds_who_t *who,
                      pmix_data_range_t range)
{
    if (rec->range != range) {
        return 0;
    }
    switch (range) {
    case PMIX_RANGE_PROC_LOCAL:
        return same_proc(&rec->owner, &who->proc);
    case PMIX_RANGE_LOCAL:
        return rec->node == who->node;
    case PMIX_RANGE_NAMESPACE:
    case PMIX_RANGE_CUSTOM: /* a custom range is its publisher's job's */
        return PMIX_CHECK_NSPACE(rec->owner.nspace, who->proc.nspace);
    default:
        return 1;
    }
}

static ds_rec_t *find_rec(rdp_ds_t *ds, const rdp_ds_who_t *who,
                          const ds_scope_t *sc, const char *key)
{
    ds_rec_t *rec;

    rdp_list_for_each(rec, &ds->recs, link) {
        if (strncmp(rec->key, key, PMIX_MAX_KEYLEN) == 0
            && rec_visible(rec, who) && rec_in_scope(rec, who, sc)) {
            return rec;
        }
    }
    return NULL;
}

/* ---- publish ---- */

typedef struct pub_args {
    pmix_data_range_t range;
    pmix_persistence_t persist;
    const pmix_proc_t *custom;
    size_t ncustom;
    size_t ndata;
} pub_args_t;

static pmix_status_t read_publish(const pmix_info_t *info, size_t ninfo,
                                  pub_args_t *pa)
{
    pmix_status_t status = PMIX_SUCCESS;

    memset(pa, 0, sizeof(*pa));
    pa->range   = PMIX_RANGE_SESSION;
    pa->persist = PMIX_PERSIST_SESSION;
    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        if (key_is(&info[i], PMIX_RANGE)) {
            status = read_range(&info[i], &pa->range);
        } else if (key_is(&info[i], PMIX_EVENT_CUSTOM_RANGE)) {
            status = read_custom(&info[i], &pa->custom, &pa->ncustom);
        } else if (key_is(&info[i], PMIX_PERSISTENCE)) {
            if (info[i].value.type != PMIX_PERSIST
                || info[i].value.data.persist > PMIX_PERSIST_SESSION) {
                status = PMIX_ERR_BAD_PARAM;
            } else {
                pa->persist = info[i].value.data.persist;
            }
        } else if (!is_directive(&info[i])) {
            pa->ndata++;
        }
    }
    if (status == PMIX_SUCCESS
        && (pa->ndata == 0
            || (pa->range == PMIX_RANGE_CUSTOM && pa->custom == NULL))) {
        status = PMIX_ERR_BAD_PARAM;
    }
    return status;
}

static pmix_status_t check_duplicates(rdp_ds_t *ds, const rdp_ds_who_t *who,
                                      const pub_args_t *pa,
                                      const pmix_info_t *info, size_t ninfo)
{
    ds_rec_t *rec;

    for (size_t i = 0; i < ninfo; i++) {
        if (is_directive(&info[i])) {
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (!is_directive(&info[j]) && key_is(&info[j], info[i].key)) {
                return PMIX_ERR_DUPLICATE_KEY;
            }
        }
        rdp_list_for_each(rec, &ds->recs, link) {
            if (key_is(&info[i], rec->key) && same_range(rec, who, pa->range)) {
                return PMIX_ERR_DUPLICATE_KEY;
            }
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t rec_create(const rdp_ds_who_t *who, const pub_args_t *pa,
                                const pmix_info_t *info, ds_rec_t **rec_p)
{
    ds_rec_t *rec = rdp_calloc(1, sizeof(*rec));
    pmix_status_t status;

    if (rec == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rec->owner   = who->proc;
    rec->node    = who->node;
    rec->range   = pa->range;
    rec->persist = pa->persist;
    memcpy(rec->key, info->key, PMIX_MAX_KEYLEN);
    status = rdp_value_copy(&rec->value, &info->value);
    if (status == PMIX_SUCCESS && pa->ncustom > 0) {
        rec->custom = rdp_calloc(pa->ncustom, sizeof(pmix_proc_t));
        if (rec->custom == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            memcpy(rec->custom, pa->custom, pa->ncustom * sizeof(pmix_proc_t));
            rec->ncustom = pa->ncustom;
        }
    }
    if (status != PMIX_SUCCESS) {
        rdp_value_destruct(&rec->value);
        rdp_free(rec->custom);
        rdp_free(rec);
        return status;
    }
    *rec_p = rec;
    return PMIX_SUCCESS;
}

static void serve_waiters(rdp_ds_t *ds);

pmix_status_t rdp_ds_publish(rdp_ds_t *ds, const rdp_ds_who_t *who,
                             const pmix_info_t *info, size_t ninfo)
{
    rdp_list_t added;
    pub_args_t pa;
    ds_rec_t *rec, *tmp;
    pmix_status_t status;

    if (info == NULL || who->foreign) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = read_publish(info, ninfo, &pa);
    if (status == PMIX_SUCCESS) {
        status = check_duplicates(ds, who, &pa, info, ninfo);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    /* all or nothing: build every record first */
    rdp_list_init(&added);
    for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; i++) {
        if (!is_directive(&info[i])) {
            status = rec_create(who, &pa, &info[i], &rec);
            if (status == PMIX_SUCCESS) {
                rdp_list_push_back(&added, &rec->link);
            }
        }
    }
    rdp_list_for_each_safe(rec, tmp, &added, link) {
        if (status == PMIX_SUCCESS) {
            rdp_list_del(&rec->link);
            rdp_list_push_back(&ds->recs, &rec->link);
        } else {
            rec_free(rec);
        }
    }
    if (status == PMIX_SUCCESS) {
        serve_waiters(ds);
    }
    return status;
}

/* ---- lookup ---- */

static size_t count_found(rdp_ds_t *ds, const rdp_ds_who_t *who,
                          const ds_scope_t *sc, char *const *keys, size_t nkeys)
{
    size_t found = 0;

    for (size_t i = 0; i < nkeys; i++) {
        if (find_rec(ds, who, sc, keys[i]) != NULL) {
            found++;
        }
    }
    return found;
}

/* Answer with what is found now (at least one key), removing the
 * FIRST_READ data it returns. */
static void answer(rdp_ds_t *ds, const rdp_ds_who_t *who, const ds_scope_t *sc,
                   char *const *keys, size_t nkeys, rdp_ds_reply_cb_t reply_cb,
                   void *arg)
{
    pmix_pdata_t *pd = rdp_calloc(nkeys, sizeof(*pd));
    ds_rec_t **used  = rdp_calloc(nkeys, sizeof(*used));
    pmix_status_t status;
    size_t n = 0;

    if (pd == NULL || used == NULL) {
        rdp_free(pd);
        rdp_free(used);
        reply_cb(PMIX_ERR_NOMEM, NULL, 0, arg);
        return;
    }
    for (size_t i = 0; i < nkeys; i++) {
        ds_rec_t *rec = find_rec(ds, who, sc, keys[i]);

        if (rec != NULL) {
            pd[n].proc = rec->owner;
            memcpy(pd[n].key, rec->key, PMIX_MAX_KEYLEN);
            /* borrowed: the records outlive the callback */
            pd[n].value = rec->value;
            used[n++]   = rec;
        }
    }
    status = n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
    reply_cb(status, n > 0 ? pd : NULL, n, arg);
    for (size_t i = 0; i < n; i++) {
        /* a key asked twice names one record twice: free it once */
        if (used[i] != NULL && used[i]->persist == PMIX_PERSIST_FIRST_READ) {
            for (size_t j = i + 1; j < n; j++) {
                if (used[j] == used[i]) {
                    used[j] = NULL;
                }
            }
            rec_free(used[i]);
        }
    }
    rdp_free(pd);
    rdp_free(used);
}

static pmix_status_t wait_create(const rdp_ds_who_t *who, char *const *keys,
                                 size_t nkeys, const ds_scope_t *sc, double now,
                                 ds_wait_t **w_p)
{
    ds_wait_t *w = rdp_calloc(1, sizeof(*w));

    if (w == NULL) {
        return PMIX_ERR_NOMEM;
    }
    w->who   = *who;
    w->scope = *sc;
    w->keys  = rdp_calloc(nkeys + 1, sizeof(char *));
    if (w->keys == NULL) {
        goto err_free;
    }
    for (; w->nkeys < nkeys; w->nkeys++) {
        w->keys[w->nkeys] = rdp_strdup(keys[w->nkeys]);
        if (w->keys[w->nkeys] == NULL) {
            goto err_free;
        }
    }
    if (sc->ncustom > 0) {
        w->custom = rdp_calloc(sc->ncustom, sizeof(pmix_proc_t));
        if (w->custom == NULL) {
            goto err_free;
        }
        memcpy(w->custom, sc->custom, sc->ncustom * sizeof(pmix_proc_t));
        w->scope.custom = w->custom;
    }
    w->deadline = sc->timeout > 0 ? now + sc->timeout : 0;
    *w_p        = w;
    return PMIX_SUCCESS;

err_free:
    rdp_list_init(&w->link);
    wait_free(w);
    return PMIX_ERR_NOMEM;
}

pmix_status_t rdp_ds_lookup(rdp_ds_t *ds, const rdp_ds_who_t *who,
                            char *const *keys, const pmix_info_t *info,
                            size_t ninfo, double now,
                            rdp_ds_reply_cb_t reply_cb, void *arg)
{
    ds_scope_t sc;
    ds_wait_t *w;
    size_t nkeys = 0;
    pmix_status_t status;

    while (keys != NULL && keys[nkeys] != NULL) {
        nkeys++;
    }
    if (nkeys == 0 || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = read_scope(info, ninfo, nkeys, &sc);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (who->foreign) {
        sc.wait = 0; /* the asking launcher waits itself */
    }
    if (!sc.wait || count_found(ds, who, &sc, keys, nkeys) >= sc.want) {
        answer(ds, who, &sc, keys, nkeys, reply_cb, arg);
        return PMIX_SUCCESS;
    }
    status = wait_create(who, keys, nkeys, &sc, now, &w);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    w->reply_cb = reply_cb;
    w->arg      = arg;
    rdp_list_push_back(&ds->waits, &w->link);
    return PMIX_SUCCESS;
}

/* After a publish: answer every waiting lookup that now finds enough, in
 * the order they came (an earlier one may take FIRST_READ data). */
static void serve_waiters(rdp_ds_t *ds)
{
    ds_wait_t *w, *tmp;

    rdp_list_for_each_safe(w, tmp, &ds->waits, link) {
        if (count_found(ds, &w->who, &w->scope, w->keys, w->nkeys)
            < w->scope.want) {
            continue;
        }
        rdp_list_del(&w->link);
        rdp_list_init(&w->link);
        answer(ds, &w->who, &w->scope, w->keys, w->nkeys, w->reply_cb, w->arg);
        wait_free(w);
        /* the callback may have changed the lists: start over */
        serve_waiters(ds);
        return;
    }
}

/* ---- unpublish and ends ---- */

pmix_status_t rdp_ds_unpublish(rdp_ds_t *ds, const rdp_ds_who_t *who,
                               char *const *keys, const pmix_info_t *info,
                               size_t ninfo)
{
    ds_scope_t sc;
    ds_rec_t *rec, *tmp;
    int range_given = 0;
    pmix_status_t status;

    if ((info == NULL && ninfo > 0) || who->foreign) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = read_scope(info, ninfo, 0, &sc);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (size_t i = 0; i < ninfo; i++) {
        range_given |= key_is(&info[i], PMIX_RANGE);
    }
    for (size_t k = 0; keys == NULL || keys[k] != NULL; k++) {
        int found = 0;

        rdp_list_for_each_safe(rec, tmp, &ds->recs, link) {
            if (same_proc(&rec->owner, &who->proc)
                && (keys == NULL
                    || strncmp(rec->key, keys[k], PMIX_MAX_KEYLEN) == 0)
                && (!range_given || rec->range == sc.range)) {
                rec_free(rec);
                found = 1;
            }
        }
        if (keys == NULL) {
            break;
        }
        if (!found) {
            status = PMIX_ERR_NOT_FOUND;
        }
    }
    return status;
}

void rdp_ds_proc_ended(rdp_ds_t *ds, const pmix_proc_t *proc)
{
    ds_rec_t *rec, *rtmp;
    ds_wait_t *w, *wtmp;

    rdp_list_for_each_safe(rec, rtmp, &ds->recs, link) {
        if (rec->persist == PMIX_PERSIST_PROC && same_proc(&rec->owner, proc)) {
            rec_free(rec);
        }
    }
    rdp_list_for_each_safe(w, wtmp, &ds->waits, link) {
        if (same_proc(&w->who.proc, proc)) {
            wait_fail(w, PMIX_ERR_LOST_CONNECTION);
            /* the callback may have changed the list */
            rdp_ds_proc_ended(ds, proc);
            return;
        }
    }
}

void rdp_ds_nspace_ended(rdp_ds_t *ds, const char *nspace)
{
    ds_rec_t *rec, *tmp;

    rdp_list_for_each_safe(rec, tmp, &ds->recs, link) {
        if ((rec->persist == PMIX_PERSIST_APP
             || rec->persist == PMIX_PERSIST_PROC)
            && PMIX_CHECK_NSPACE(rec->owner.nspace, nspace)) {
            rec_free(rec);
        }
    }
}

void rdp_ds_expire(rdp_ds_t *ds, double now)
{
    ds_wait_t *w, *tmp;

    rdp_list_for_each_safe(w, tmp, &ds->waits, link) {
        if (w->deadline > 0 && w->deadline <= now) {
            wait_fail(w, PMIX_ERR_TIMEOUT);
            rdp_ds_expire(ds, now);
            return;
        }
    }
}

double rdp_ds_next_deadline(const rdp_ds_t *ds)
{
    const ds_wait_t *w;
    double next = 0;

    rdp_list_for_each(w, &ds->waits, link) {
        if (w->deadline > 0 && (next == 0 || w->deadline < next)) {
            next = w->deadline;
        }
    }
    return next;
}

size_t rdp_ds_nkeys(const rdp_ds_t *ds)
{
    return rdp_list_length(&ds->recs);
}

size_t rdp_ds_nwaiting(const rdp_ds_t *ds)
{
    return rdp_list_length(&ds->waits);
}
