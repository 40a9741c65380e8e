/* test_run_datasvc.c - rdpmix-run's publish/lookup store (src/run/datasvc.c) */
#include "config.h"
#include "run/datasvc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* What a lookup answered. */
typedef struct answer {
    int calls;
    pmix_status_t status;
    size_t n;
    char keys[4][PMIX_MAX_KEYLEN + 1];
    int values[4];
    pmix_proc_t procs[4];
} answer_t;

static void reply_cb(pmix_status_t status, const pmix_pdata_t *pd, size_t npd,
                     void *arg)
{
    answer_t *a = arg;

    a->calls++;
    a->status = status;
    a->n      = npd;
    for (size_t i = 0; i < npd && i < 4; i++) {
        strcpy(a->keys[i], pd[i].key);
        a->values[i] = pd[i].value.data.integer;
        a->procs[i]  = pd[i].proc;
    }
}

static rdp_ds_who_t who(const char *nspace, pmix_rank_t rank, uint32_t node)
{
    rdp_ds_who_t w;

    memset(&w, 0, sizeof(w));
    snprintf(w.proc.nspace, sizeof(w.proc.nspace), "%s", nspace);
    w.proc.rank = rank;
    w.node      = node;
    return w;
}

static void set_int(pmix_info_t *info, const char *key, int v)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type         = PMIX_INT;
    info->value.data.integer = v;
}

static void set_range(pmix_info_t *info, pmix_data_range_t r)
{
    memset(info, 0, sizeof(*info));
    strcpy(info->key, PMIX_RANGE);
    info->value.type       = PMIX_DATA_RANGE;
    info->value.data.range = r;
}

static void set_persist(pmix_info_t *info, pmix_persistence_t p)
{
    memset(info, 0, sizeof(*info));
    strcpy(info->key, PMIX_PERSISTENCE);
    info->value.type         = PMIX_PERSIST;
    info->value.data.persist = p;
}

static void set_wait(pmix_info_t *info)
{
    memset(info, 0, sizeof(*info));
    strcpy(info->key, PMIX_WAIT);
    info->value.type      = PMIX_BOOL;
    info->value.data.flag = true;
}

/* publish key=v with range r (UNDEF: default) and persistence p */
static pmix_status_t pub(rdp_ds_t *ds, const rdp_ds_who_t *w, const char *key,
                         int v, pmix_data_range_t r, pmix_persistence_t p)
{
    pmix_info_t info[3];
    size_t n = 0;

    set_int(&info[n++], key, v);
    if (r != PMIX_RANGE_UNDEF) {
        set_range(&info[n++], r);
    }
    if (p != PMIX_PERSIST_INVALID) {
        set_persist(&info[n++], p);
    }
    return rdp_ds_publish(ds, w, info, n);
}

/* look up one key (range r, UNDEF: default), no wait */
static answer_t look(rdp_ds_t *ds, const rdp_ds_who_t *w, const char *key,
                     pmix_data_range_t r)
{
    char *keys[]     = {(char *)key, NULL};
    answer_t a       = {0};
    pmix_info_t info = {0};

    set_range(&info, r);
    assert_int_equal(rdp_ds_lookup(ds, w, keys, &info,
                                   r != PMIX_RANGE_UNDEF ? 1 : 0, 0.0, reply_cb,
                                   &a),
                     PMIX_SUCCESS);
    assert_int_equal(a.calls, 1);
    return a;
}

static void publish_then_lookup_returns_value_and_publisher(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("job", 3, 1), q = who("job", 0, 0);
    answer_t a;

    assert_int_equal(pub(ds, &p, "k", 42, 0, PMIX_PERSIST_INVALID),
                     PMIX_SUCCESS);
    a = look(ds, &q, "k", 0);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.keys[0], "k");
    assert_int_equal(a.values[0], 42);
    assert_string_equal(a.procs[0].nspace, "job");
    assert_int_equal(a.procs[0].rank, 3);
    /* not FIRST_READ: still there */
    assert_int_equal(look(ds, &q, "k", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &q, "other", 0).status, PMIX_ERR_NOT_FOUND);
    rdp_ds_destroy(ds);
}

static void some_keys_found_is_success_with_those(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("job", 0, 0);
    char *keys[]   = {"missing", "k", NULL};
    answer_t a     = {0};

    assert_int_equal(pub(ds, &p, "k", 1, 0, PMIX_PERSIST_INVALID),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_ds_lookup(ds, &p, keys, NULL, 0, 0, reply_cb, &a),
                     PMIX_SUCCESS);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.keys[0], "k");
    rdp_ds_destroy(ds);
}

static void ranges_limit_who_sees_a_key(void **state)
{
    rdp_ds_t *ds         = rdp_ds_create();
    rdp_ds_who_t p       = who("a", 0, 0);
    rdp_ds_who_t same_ns = who("a", 1, 1);
    rdp_ds_who_t same_nd = who("b", 0, 0);
    rdp_ds_who_t other   = who("b", 1, 1);
    rdp_ds_who_t foreign = who("c", 0, 0);

    foreign.foreign = 1;
    assert_int_equal(pub(ds, &p, "ns", 1, PMIX_RANGE_NAMESPACE, 255), 0);
    assert_int_equal(pub(ds, &p, "lo", 1, PMIX_RANGE_LOCAL, 255), 0);
    assert_int_equal(pub(ds, &p, "me", 1, PMIX_RANGE_PROC_LOCAL, 255), 0);
    assert_int_equal(pub(ds, &p, "gl", 1, PMIX_RANGE_GLOBAL, 255), 0);
    assert_int_equal(pub(ds, &p, "se", 1, 0, 255), 0);

    assert_int_equal(look(ds, &same_ns, "ns", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &other, "ns", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &same_nd, "lo", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &same_ns, "lo", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &p, "me", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &same_ns, "me", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &other, "gl", 0).status, PMIX_SUCCESS);
    /* another job's launcher sees GLOBAL data only */
    assert_int_equal(look(ds, &foreign, "gl", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &foreign, "se", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &foreign, "ns", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &foreign, "lo", 0).status, PMIX_ERR_NOT_FOUND);
    /* a lookup's range narrows the search */
    assert_int_equal(look(ds, &other, "gl", PMIX_RANGE_NAMESPACE).status,
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &same_ns, "gl", PMIX_RANGE_NAMESPACE).status,
                     PMIX_SUCCESS);
    assert_int_equal(look(ds, &same_nd, "gl", PMIX_RANGE_LOCAL).status,
                     PMIX_SUCCESS);
    assert_int_equal(look(ds, &other, "gl", PMIX_RANGE_LOCAL).status,
                     PMIX_ERR_NOT_FOUND);
    rdp_ds_destroy(ds);
}

static void custom_range_lists_the_readers(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), r2 = who("a", 2, 0), r1 = who("a", 1, 0);
    pmix_proc_t readers[1];
    pmix_data_array_t darray = {.type = PMIX_PROC, .size = 1, .array = readers};
    pmix_info_t info[3];

    memset(readers, 0, sizeof(readers));
    strcpy(readers[0].nspace, "a");
    readers[0].rank = 2;
    set_int(&info[0], "cu", 5);
    set_range(&info[1], PMIX_RANGE_CUSTOM);
    /* without the list: bad */
    assert_int_equal(rdp_ds_publish(ds, &p, info, 2), PMIX_ERR_BAD_PARAM);
    memset(&info[2], 0, sizeof(info[2]));
    strcpy(info[2].key, PMIX_EVENT_CUSTOM_RANGE);
    info[2].value.type        = PMIX_DATA_ARRAY;
    info[2].value.data.darray = &darray;
    assert_int_equal(rdp_ds_publish(ds, &p, info, 3), PMIX_SUCCESS);
    assert_int_equal(look(ds, &r2, "cu", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &r1, "cu", 0).status, PMIX_ERR_NOT_FOUND);
    rdp_ds_destroy(ds);
}

static void duplicate_in_same_range_is_refused_whole(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 1), o = who("b", 0, 0);
    pmix_info_t two[2];

    assert_int_equal(pub(ds, &p, "k", 1, 0, 255), PMIX_SUCCESS);
    assert_int_equal(pub(ds, &q, "k", 2, 0, 255), PMIX_ERR_DUPLICATE_KEY);
    /* another range is another key */
    assert_int_equal(pub(ds, &q, "k", 3, PMIX_RANGE_NAMESPACE, 255),
                     PMIX_SUCCESS);
    /* a namespace range is per namespace */
    assert_int_equal(pub(ds, &o, "k", 4, PMIX_RANGE_NAMESPACE, 255),
                     PMIX_SUCCESS);
    assert_int_equal(pub(ds, &p, "k", 5, PMIX_RANGE_NAMESPACE, 255),
                     PMIX_ERR_DUPLICATE_KEY);
    /* all or nothing: "new" is not stored when "k" collides */
    set_int(&two[0], "new", 1);
    set_int(&two[1], "k", 1);
    assert_int_equal(rdp_ds_publish(ds, &p, two, 2), PMIX_ERR_DUPLICATE_KEY);
    assert_int_equal(look(ds, &p, "new", 0).status, PMIX_ERR_NOT_FOUND);
    /* twice in one publish */
    set_int(&two[1], "new", 2);
    assert_int_equal(rdp_ds_publish(ds, &p, two, 2), PMIX_ERR_DUPLICATE_KEY);
    assert_int_equal(rdp_ds_nkeys(ds), 3);
    rdp_ds_destroy(ds);
}

static void bad_publishes_are_refused(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0);
    pmix_info_t info[2];

    set_range(&info[0], PMIX_RANGE_GLOBAL);
    assert_int_equal(rdp_ds_publish(ds, &p, info, 1), PMIX_ERR_BAD_PARAM);
    set_int(&info[1], "k", 1);
    set_range(&info[0], PMIX_RANGE_RM);
    assert_int_equal(rdp_ds_publish(ds, &p, info, 2), PMIX_ERR_NOT_SUPPORTED);
    set_range(&info[0], 99);
    assert_int_equal(rdp_ds_publish(ds, &p, info, 2), PMIX_ERR_BAD_PARAM);
    set_int(&info[0], PMIX_PERSISTENCE, 1); /* wrong type */
    assert_int_equal(rdp_ds_publish(ds, &p, info, 2), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_ds_nkeys(ds), 0);
    rdp_ds_destroy(ds);
}

static void first_read_goes_after_one_lookup(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 0);

    assert_int_equal(pub(ds, &p, "once", 7, 0, PMIX_PERSIST_FIRST_READ), 0);
    assert_int_equal(look(ds, &q, "once", 0).values[0], 7);
    assert_int_equal(look(ds, &q, "once", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_ds_nkeys(ds), 0);
    rdp_ds_destroy(ds);
}

static void proc_and_app_persistence_end_with_them(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 0);

    assert_int_equal(pub(ds, &p, "proc", 1, 0, PMIX_PERSIST_PROC), 0);
    assert_int_equal(pub(ds, &p, "app", 1, 0, PMIX_PERSIST_APP), 0);
    assert_int_equal(pub(ds, &p, "indef", 1, 0, PMIX_PERSIST_INDEF), 0);
    assert_int_equal(pub(ds, &p, "sess", 1, 0, PMIX_PERSIST_SESSION), 0);
    rdp_ds_proc_ended(ds, &q.proc); /* another proc: nothing goes */
    assert_int_equal(rdp_ds_nkeys(ds), 4);
    rdp_ds_proc_ended(ds, &p.proc);
    assert_int_equal(look(ds, &q, "proc", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &q, "app", 0).status, PMIX_SUCCESS);
    rdp_ds_nspace_ended(ds, "a");
    assert_int_equal(look(ds, &q, "app", 0).status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &q, "indef", 0).status, PMIX_SUCCESS);
    assert_int_equal(look(ds, &q, "sess", 0).status, PMIX_SUCCESS);
    rdp_ds_destroy(ds);
}

static void waiting_lookup_is_answered_by_the_publish(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 1);
    char *keys[] = {"x", "y", NULL};
    pmix_info_t info[1];
    answer_t a = {0};

    set_wait(&info[0]);
    assert_int_equal(rdp_ds_lookup(ds, &q, keys, info, 1, 0, reply_cb, &a),
                     PMIX_SUCCESS);
    assert_int_equal(a.calls, 0);
    assert_int_equal(rdp_ds_nwaiting(ds), 1);
    assert_int_equal(rdp_ds_next_deadline(ds), 0);
    assert_int_equal(pub(ds, &p, "x", 1, 0, 255), 0);
    assert_int_equal(a.calls, 0); /* waits for every key */
    assert_int_equal(pub(ds, &p, "y", 2, 0, 255), 0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.n, 2);
    assert_int_equal(rdp_ds_nwaiting(ds), 0);
    rdp_ds_destroy(ds);
}

static void waiting_first_read_goes_to_the_first_waiter(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 1), r = who("a", 2, 1);
    char *keys[] = {"once", NULL};
    pmix_info_t info[1];
    answer_t a = {0}, b = {0};

    set_wait(&info[0]);
    assert_int_equal(rdp_ds_lookup(ds, &q, keys, info, 1, 0, reply_cb, &a), 0);
    assert_int_equal(rdp_ds_lookup(ds, &r, keys, info, 1, 0, reply_cb, &b), 0);
    assert_int_equal(pub(ds, &p, "once", 1, 0, PMIX_PERSIST_FIRST_READ), 0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 0);
    assert_int_equal(rdp_ds_nkeys(ds), 0);
    assert_int_equal(pub(ds, &p, "once", 2, 0, PMIX_PERSIST_FIRST_READ), 0);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.values[0], 2);
    rdp_ds_destroy(ds);
}

static void waiting_lookup_times_out_or_loses_its_requester(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t q = who("a", 1, 1), r = who("a", 2, 1);
    char *keys[] = {"never", NULL};
    pmix_info_t info[2];
    answer_t a = {0}, b = {0}, c = {0};

    set_wait(&info[0]);
    set_int(&info[1], PMIX_TIMEOUT, 5);
    assert_int_equal(rdp_ds_lookup(ds, &q, keys, info, 2, 100, reply_cb, &a),
                     0);
    assert_int_equal(rdp_ds_lookup(ds, &r, keys, info, 1, 100, reply_cb, &b),
                     0);
    assert_true(rdp_ds_next_deadline(ds) == 105.0);
    rdp_ds_expire(ds, 104.9);
    assert_int_equal(a.calls, 0);
    rdp_ds_expire(ds, 105.0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, PMIX_ERR_TIMEOUT);
    assert_int_equal(b.calls, 0);
    rdp_ds_proc_ended(ds, &r.proc);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.status, PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(rdp_ds_nwaiting(ds), 0);
    /* destroying the store answers what still waits */
    assert_int_equal(rdp_ds_lookup(ds, &r, keys, info, 1, 100, reply_cb, &c),
                     0);
    rdp_ds_destroy(ds);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.status, PMIX_ERR_LOST_CONNECTION);
}

static void unpublish_removes_only_the_callers_keys(void **state)
{
    rdp_ds_t *ds   = rdp_ds_create();
    rdp_ds_who_t p = who("a", 0, 0), q = who("a", 1, 0);
    char *k1[] = {"k1", NULL};
    char *k2[] = {"k2", NULL};
    pmix_info_t info[1];

    assert_int_equal(pub(ds, &p, "k1", 1, 0, 255), 0);
    assert_int_equal(pub(ds, &p, "k2", 1, 0, 255), 0);
    assert_int_equal(pub(ds, &p, "k3", 1, PMIX_RANGE_NAMESPACE, 255), 0);
    assert_int_equal(pub(ds, &q, "q1", 1, 0, 255), 0);
    /* not the caller's key */
    assert_int_equal(rdp_ds_unpublish(ds, &q, k1, NULL, 0), PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_ds_unpublish(ds, &p, k1, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(look(ds, &q, "k1", 0).status, PMIX_ERR_NOT_FOUND);
    /* in another range than it was published */
    set_range(&info[0], PMIX_RANGE_NAMESPACE);
    assert_int_equal(rdp_ds_unpublish(ds, &p, k2, info, 1), PMIX_ERR_NOT_FOUND);
    assert_int_equal(look(ds, &q, "k2", 0).status, PMIX_SUCCESS);
    /* every key of the caller */
    assert_int_equal(rdp_ds_unpublish(ds, &p, NULL, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(rdp_ds_nkeys(ds), 1);
    assert_int_equal(look(ds, &p, "q1", 0).status, PMIX_SUCCESS);
    rdp_ds_destroy(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(publish_then_lookup_returns_value_and_publisher),
        cmocka_unit_test(some_keys_found_is_success_with_those),
        cmocka_unit_test(ranges_limit_who_sees_a_key),
        cmocka_unit_test(custom_range_lists_the_readers),
        cmocka_unit_test(duplicate_in_same_range_is_refused_whole),
        cmocka_unit_test(bad_publishes_are_refused),
        cmocka_unit_test(first_read_goes_after_one_lookup),
        cmocka_unit_test(proc_and_app_persistence_end_with_them),
        cmocka_unit_test(waiting_lookup_is_answered_by_the_publish),
        cmocka_unit_test(waiting_first_read_goes_to_the_first_waiter),
        cmocka_unit_test(waiting_lookup_times_out_or_loses_its_requester),
        cmocka_unit_test(unpublish_removes_only_the_callers_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
