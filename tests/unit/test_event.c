/* test_event.c - event handler registry, the handler chain, notify */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <pmix.h>

#include "core/common/runtime.h"

/* ---- recording handlers ------------------------------------------ */

typedef struct hctx {
    const char *name;
    pmix_status_t complete_with; /* status handed to the chain */
    rdp_wait_t *signal;          /* signalled after the handler ran */
    int saw_name_info;           /* got PMIX_EVENT_HDLR_NAME == name */
    size_t nresults_seen;
    int results_from_prev; /* first result has key "prev.done" */
} hctx_t;

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static char rec[32][32];
static int nrec;

static void rec_reset(void)
{
    pthread_mutex_lock(&rec_lock);
    nrec = 0;
    pthread_mutex_unlock(&rec_lock);
}

static void rec_add(const char *name)
{
    pthread_mutex_lock(&rec_lock);
    if (nrec < 32) {
        strncpy(rec[nrec], name, sizeof(rec[0]) - 1);
        nrec++;
    }
    pthread_mutex_unlock(&rec_lock);
}

/* "a,b,c" of what ran, in order */
static void rec_string(char *out, size_t len)
{
    out[0] = '\0';
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrec; i++) {
        if (i > 0) {
            strncat(out, ",", len - strlen(out) - 1);
        }
        strncat(out, rec[i], len - strlen(out) - 1);
    }
    pthread_mutex_unlock(&rec_lock);
}

static pmix_info_t result_info;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                    size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                    void *cbdata)
{
    hctx_t *h = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT)) {
            h = info[i].value.data.ptr;
        }
    }
    assert_non_null(h);
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_HDLR_NAME)
            && info[i].value.type == PMIX_STRING
            && strcmp(info[i].value.data.string, h->name) == 0) {
            h->saw_name_info = 1;
        }
    }
    h->nresults_seen = nresults;
    if (nresults > 0 && PMIX_CHECK_KEY(&results[0], "prev.done")) {
        h->results_from_prev = 1;
    }
    rec_add(h->name);
    /* hand one result to whoever comes next */
    PMIX_LOAD_KEY(result_info.key, "prev.done");
    result_info.value.type      = PMIX_BOOL;
    result_info.value.data.flag = true;
    cbfunc(h->complete_with, &result_info, 1, NULL, NULL, cbdata);
    if (h->signal != NULL) {
        rdp_wait_signal(h->signal, PMIX_SUCCESS);
    }
}

/* Register @a h for @a codes with extra @a info; blocking form. */
static int reg(hctx_t *h, pmix_status_t *codes, size_t ncodes, const char *key,
               const void *val, pmix_data_type_t type)
{
    pmix_info_t info[3];
    size_t n = 0;
    int rc;

    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[n], PMIX_EVENT_HDLR_NAME, h->name, PMIX_STRING);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_EVENT_RETURN_OBJECT, h, PMIX_POINTER);
    n++;
    if (key != NULL) {
        PMIX_INFO_LOAD(&info[n], key, val, type);
        n++;
    }
    rc = PMIx_Register_event_handler(codes, ncodes, info, n, handler, NULL,
                                     NULL);
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return rc;
}

static pmix_status_t noop(void *arg)
{
    return PMIX_SUCCESS;
}

/* Let everything already posted to the loop (and what it posts) run. */
static void drain(void)
{
    for (int i = 0; i < 4; i++) {
        assert_int_equal(rdp_runtime_call_sync(noop, NULL), PMIX_SUCCESS);
    }
}

static void notify(pmix_status_t code, const pmix_proc_t *source,
                   pmix_info_t *info, size_t ninfo)
{
    assert_int_equal(PMIx_Notify_event(code, source, PMIX_RANGE_PROC_LOCAL,
                                       info, ninfo, NULL, NULL),
                     PMIX_SUCCESS);
}

static int setup(void **state)
{
    rec_reset();
    if (rdp_runtime_acquire(RDP_ROLE_CLIENT) != PMIX_SUCCESS) {
        return -1;
    }
    memset(&rdp_rt.myproc, 0, sizeof(rdp_rt.myproc));
    PMIX_LOAD_PROCID(&rdp_rt.myproc, "test.ns", 0);
    return 0;
}

static int teardown(void **state)
{
    rdp_runtime_release();
    return 0;
}

/* ---- tests -------------------------------------------------------- */

static void registration_before_init_fails(void **state)
{
    pmix_status_t code = PMIX_ERR_PROC_ABORTED;

    assert_int_equal(
        PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL),
        PMIX_ERR_INIT);
    assert_int_equal(PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL,
                                       0, NULL, NULL),
                     PMIX_ERR_INIT);
}

static void blocking_registration_returns_distinct_ids(void **state)
{
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;
    int ida, idb;

    ida = reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF);
    idb = reg(&b, NULL, 0, NULL, NULL, PMIX_UNDEF);
    assert_true(ida >= 0);
    assert_true(idb >= 0);
    assert_int_not_equal(ida, idb);
}

static void bad_registrations_are_refused(void **state)
{
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;
    pmix_info_t info[2];
    bool t = true;

    assert_int_equal(
        PMIx_Register_event_handler(&code, 1, NULL, 0, NULL, NULL, NULL),
        PMIX_ERR_BAD_PARAM);
    assert_int_equal(
        PMIx_Register_event_handler(NULL, 2, NULL, 0, handler, NULL, NULL),
        PMIX_ERR_BAD_PARAM);
    /* first and last at once */
    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_LAST, &t, PMIX_BOOL);
    assert_int_equal(
        PMIx_Register_event_handler(&code, 1, info, 2, handler, NULL, NULL),
        PMIX_ERR_BAD_PARAM);
    /* only one global first */
    assert_true(reg(&a, &code, 1, PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL) >= 0);
    assert_int_equal(reg(&b, &code, 1, PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL),
                     PMIX_ERR_EVENT_REGISTRATION);
    /* before a handler that does not exist */
    assert_int_equal(
        reg(&b, &code, 1, PMIX_EVENT_HDLR_BEFORE, "nobody", PMIX_STRING),
        PMIX_ERR_EVENT_REGISTRATION);
}

typedef struct reg_cb_state {
    rdp_wait_t wait;
    pmix_status_t status;
    size_t id;
    int calls;
} reg_cb_state_t;

static void reg_cb(pmix_status_t status, size_t refid, void *cbdata)
{
    reg_cb_state_t *st = cbdata;

    st->status = status;
    st->id     = refid;
    st->calls++;
    rdp_wait_signal(&st->wait, PMIX_SUCCESS);
}

static void nonblocking_registration_calls_back_once(void **state)
{
    reg_cb_state_t st  = {0};
    pmix_status_t code = -1000;

    rdp_wait_init(&st.wait);
    assert_int_equal(
        PMIx_Register_event_handler(&code, 1, NULL, 0, handler, reg_cb, &st),
        PMIX_SUCCESS);
    rdp_wait_wait(&st.wait);
    drain();
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.status, PMIX_SUCCESS);
    assert_true(st.id != SIZE_MAX);
    rdp_wait_cleanup(&st.wait);
}

static void chain_runs_first_single_multi_default_last(void **state)
{
    rdp_wait_t done;
    hctx_t d = {.name = "default"}, m = {.name = "multi"};
    hctx_t s = {.name = "single"}, f = {.name = "first"};
    hctx_t l               = {.name = "last"};
    pmix_status_t code     = -1000;
    pmix_status_t codes[2] = {-1001, -1000};
    pmix_status_t other    = -2000;
    hctx_t o               = {.name = "other"};
    bool t                 = true;
    char got[256];

    rdp_wait_init(&done);
    l.signal = &done;
    /* registered in scrambled order */
    assert_true(reg(&l, NULL, 0, PMIX_EVENT_HDLR_LAST, &t, PMIX_BOOL) >= 0);
    assert_true(reg(&d, NULL, 0, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&m, codes, 2, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&o, &other, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&s, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&f, &code, 1, PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL) >= 0);
    notify(code, NULL, NULL, 0);
    rdp_wait_wait(&done);
    rec_string(got, sizeof(got));
    assert_string_equal(got, "first,single,multi,default,last");
    /* names and previous results reach each handler */
    assert_true(s.saw_name_info);
    assert_true(l.results_from_prev);
    assert_int_equal(l.nresults_seen, 4);
    assert_int_equal(f.nresults_seen, 0);
    rdp_wait_cleanup(&done);
}

static void prepend_before_and_after_place_within_category(void **state)
{
    rdp_wait_t done;
    hctx_t s1 = {.name = "s1"}, s2 = {.name = "s2"};
    hctx_t s3 = {.name = "s3"}, s4 = {.name = "s4"};
    hctx_t s5          = {.name = "s5"};
    pmix_status_t code = -1000;
    bool t             = true;
    char got[256];

    rdp_wait_init(&done);
    s5.signal = &done;
    assert_true(reg(&s1, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(
        reg(&s5, &code, 1, PMIX_EVENT_HDLR_LAST_IN_CATEGORY, &t, PMIX_BOOL)
        >= 0);
    assert_true(reg(&s2, &code, 1, PMIX_EVENT_HDLR_PREPEND, &t, PMIX_BOOL)
                >= 0);
    assert_true(reg(&s3, &code, 1, PMIX_EVENT_HDLR_BEFORE, "s1", PMIX_STRING)
                >= 0);
    assert_true(reg(&s4, &code, 1, PMIX_EVENT_HDLR_AFTER, "s1", PMIX_STRING)
                >= 0);
    notify(code, NULL, NULL, 0);
    rdp_wait_wait(&done);
    rec_string(got, sizeof(got));
    assert_string_equal(got, "s2,s3,s1,s4,s5");
    rdp_wait_cleanup(&done);
}

/* "after" the overall-first handler means the start of the category and
 * "before" the overall-last one its end; the other way round is refused */
static void before_and_after_the_global_first_and_last(void **state)
{
    rdp_wait_t done;
    hctx_t f = {.name = "f"}, l = {.name = "l"}, s1 = {.name = "s1"};
    hctx_t a = {.name = "a"}, b = {.name = "b"}, x = {.name = "x"};
    pmix_status_t code = -1000;
    bool t             = true;
    char got[256];

    rdp_wait_init(&done);
    l.signal = &done;
    assert_true(reg(&f, &code, 1, PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL) >= 0);
    assert_true(reg(&l, &code, 1, PMIX_EVENT_HDLR_LAST, &t, PMIX_BOOL) >= 0);
    assert_true(reg(&s1, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&a, &code, 1, PMIX_EVENT_HDLR_AFTER, "f", PMIX_STRING)
                >= 0);
    assert_true(reg(&b, &code, 1, PMIX_EVENT_HDLR_BEFORE, "l", PMIX_STRING)
                >= 0);
    assert_int_equal(
        reg(&x, &code, 1, PMIX_EVENT_HDLR_BEFORE, "f", PMIX_STRING),
        PMIX_ERR_EVENT_REGISTRATION);
    assert_int_equal(reg(&x, &code, 1, PMIX_EVENT_HDLR_AFTER, "l", PMIX_STRING),
                     PMIX_ERR_EVENT_REGISTRATION);
    notify(code, NULL, NULL, 0);
    rdp_wait_wait(&done);
    rec_string(got, sizeof(got));
    assert_string_equal(got, "f,a,s1,b,l");
    rdp_wait_cleanup(&done);
}

static void action_complete_stops_the_chain(void **state)
{
    rdp_wait_t ran;
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;
    char got[256];

    rdp_wait_init(&ran);
    a.signal        = &ran;
    a.complete_with = PMIX_EVENT_ACTION_COMPLETE;
    assert_true(reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&b, NULL, 0, NULL, NULL, PMIX_UNDEF) >= 0);
    notify(code, NULL, NULL, 0);
    rdp_wait_wait(&ran);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "a");
    rdp_wait_cleanup(&ran);
}

static void non_default_events_skip_default_handlers(void **state)
{
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;
    pmix_info_t info;
    bool t = true;
    char got[256];

    assert_true(reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_true(reg(&b, NULL, 0, NULL, NULL, PMIX_UNDEF) >= 0);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_EVENT_NON_DEFAULT, &t, PMIX_BOOL);
    notify(code, NULL, &info, 1);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "a");
    /* and a code nobody asked for reaches no one */
    rec_reset();
    notify(-3000, NULL, &info, 1);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "");
}

static void affected_proc_filter_selects_events(void **state)
{
    hctx_t a           = {.name = "a"};
    pmix_status_t code = -1000;
    pmix_proc_t p3, p4;
    pmix_info_t info;
    char got[256];

    PMIX_LOAD_PROCID(&p3, "test.ns", 3);
    PMIX_LOAD_PROCID(&p4, "test.ns", 4);
    assert_true(reg(&a, &code, 1, PMIX_EVENT_AFFECTED_PROC, &p3, PMIX_PROC)
                >= 0);
    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_EVENT_AFFECTED_PROC, &p4, PMIX_PROC);
    notify(code, NULL, &info, 1);
    notify(code, NULL, NULL, 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "");
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_AFFECTED_PROC, &p3, PMIX_PROC);
    notify(code, NULL, &info, 1);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "a");
    PMIX_INFO_DESTRUCT(&info);
}

static void custom_range_filter_checks_the_source(void **state)
{
    hctx_t a           = {.name = "a"};
    pmix_status_t code = -1000;
    pmix_proc_t src_ok, src_bad;
    pmix_data_array_t da;
    pmix_proc_t range[1];
    char got[256];

    PMIX_LOAD_PROCID(&range[0], "other.ns", PMIX_RANK_WILDCARD);
    da.type  = PMIX_PROC;
    da.size  = 1;
    da.array = range;
    assert_true(reg(&a, &code, 1, PMIX_EVENT_CUSTOM_RANGE, &da, PMIX_DATA_ARRAY)
                >= 0);
    PMIX_LOAD_PROCID(&src_bad, "test.ns", 1);
    PMIX_LOAD_PROCID(&src_ok, "other.ns", 7);
    notify(code, &src_bad, NULL, 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "");
    notify(code, &src_ok, NULL, 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "a");
}

typedef struct op_state {
    rdp_wait_t wait;
    pmix_status_t status;
    int calls;
} op_state_t;

static void op_cb(pmix_status_t status, void *cbdata)
{
    op_state_t *st = cbdata;

    st->status = status;
    st->calls++;
    rdp_wait_signal(&st->wait, PMIX_SUCCESS);
}

static void deregistered_handlers_are_not_called(void **state)
{
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;
    op_state_t st      = {0};
    int ida;
    char got[256];

    ida = reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF);
    assert_true(ida >= 0);
    assert_true(reg(&b, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    assert_int_equal(PMIx_Deregister_event_handler(ida, NULL, NULL),
                     PMIX_SUCCESS);
    /* an unknown handler: success, as OpenPMIx 4.2.2 answers */
    assert_int_equal(PMIx_Deregister_event_handler(ida, NULL, NULL),
                     PMIX_SUCCESS);
    notify(code, NULL, NULL, 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "b");
    /* the non-blocking form reports through its callback, once */
    rdp_wait_init(&st.wait);
    assert_int_equal(PMIx_Deregister_event_handler(12345, op_cb, &st),
                     PMIX_SUCCESS);
    rdp_wait_wait(&st.wait);
    drain();
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.status, PMIX_SUCCESS);
    rdp_wait_cleanup(&st.wait);
}

static void notify_calls_back_exactly_once(void **state)
{
    op_state_t st      = {0};
    hctx_t a           = {.name = "a"};
    pmix_status_t code = -1000;
    rdp_wait_t ran;
    char got[256];

    rdp_wait_init(&ran);
    rdp_wait_init(&st.wait);
    a.signal = &ran;
    assert_true(reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    /* no forward hook: a global event is still delivered locally */
    assert_int_equal(
        PMIx_Notify_event(code, NULL, PMIX_RANGE_GLOBAL, NULL, 0, op_cb, &st),
        PMIX_SUCCESS);
    rdp_wait_wait(&st.wait);
    rdp_wait_wait(&ran);
    drain();
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.status, PMIX_SUCCESS);
    rec_string(got, sizeof(got));
    assert_string_equal(got, "a");
    /* an RM-only event does not reach this process */
    rec_reset();
    assert_int_equal(
        PMIx_Notify_event(code, NULL, PMIX_RANGE_RM, NULL, 0, NULL, NULL),
        PMIX_SUCCESS);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "");
    rdp_wait_cleanup(&st.wait);
    rdp_wait_cleanup(&ran);
}

/* A handler registering another handler (blocking form) from the loop
 * thread must not deadlock. */
static hctx_t inner = {.name = "inner"};
static int inner_id = -1;

static void registering_handler(size_t id, pmix_status_t status,
                                const pmix_proc_t *source, pmix_info_t info[],
                                size_t ninfo, pmix_info_t *results,
                                size_t nresults,
                                pmix_event_notification_cbfunc_fn_t cbfunc,
                                void *cbdata)
{
    pmix_status_t code = -1001;

    inner_id = reg(&inner, &code, 1, NULL, NULL, PMIX_UNDEF);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void handlers_may_register_handlers(void **state)
{
    pmix_status_t code = -1000;
    char got[256];

    assert_true(PMIx_Register_event_handler(&code, 1, NULL, 0,
                                            registering_handler, NULL, NULL)
                >= 0);
    notify(code, NULL, NULL, 0);
    drain();
    assert_true(inner_id >= 0);
    notify(-1001, NULL, NULL, 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, "inner");
}

/* ---- events kept for handlers registered later --------------------- */

/* Notify @a code with the boolean @a flag set, and let it be handled. */
static void notify_flagged(pmix_status_t code, const char *flag)
{
    pmix_info_t info;
    bool t = true;

    PMIX_INFO_LOAD(&info, flag, &t, PMIX_BOOL);
    notify(code, NULL, &info, 1);
    drain();
}

/* Register @a h (blocking) and check what has run so far. */
static void reg_then_expect(hctx_t *h, pmix_status_t *codes, size_t ncodes,
                            const char *expected)
{
    char got[256];

    assert_true(reg(h, codes, ncodes, NULL, NULL, PMIX_UNDEF) >= 0);
    drain();
    rec_string(got, sizeof(got));
    assert_string_equal(got, expected);
}

static void kept_event_goes_to_the_first_matching_handler_once(void **state)
{
    hctx_t other = {.name = "other"}, a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000, code2 = -1001;

    notify(code, NULL, NULL, 0);
    drain();
    reg_then_expect(&other, &code2, 1, "");
    reg_then_expect(&a, &code, 1, "a");
    /* taken: a second late handler gets nothing */
    reg_then_expect(&b, &code, 1, "a");
}

static void delivered_events_are_not_kept(void **state)
{
    hctx_t a = {.name = "a"}, b = {.name = "b"};
    pmix_status_t code = -1000;

    assert_true(reg(&a, &code, 1, NULL, NULL, PMIX_UNDEF) >= 0);
    notify(code, NULL, NULL, 0);
    drain();
    reg_then_expect(&b, &code, 1, "a");
}

static void kept_non_default_event_waits_for_a_specific_handler(void **state)
{
    hctx_t d = {.name = "default"}, a = {.name = "a"};
    pmix_status_t code = PMIX_MODEL_DECLARED;

    notify_flagged(code, PMIX_EVENT_NON_DEFAULT);
    reg_then_expect(&d, NULL, 0, "");
    reg_then_expect(&a, &code, 1, "a");
}

static void do_not_cache_events_are_not_kept(void **state)
{
    hctx_t a           = {.name = "a"};
    pmix_status_t code = -1000;

    notify_flagged(code, PMIX_EVENT_DO_NOT_CACHE);
    reg_then_expect(&a, &code, 1, "");
}

static int kept_seen;
static int kept_first_index = -1;

static void index_handler(size_t id, pmix_status_t status,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t *results, size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], "test.index") && kept_first_index < 0) {
            kept_first_index = info[i].value.data.integer;
        }
    }
    kept_seen++;
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void at_most_512_events_are_kept_oldest_dropped(void **state)
{
    pmix_status_t code = -1000;
    pmix_info_t info;

    for (int i = 0; i < 513; i++) {
        PMIX_INFO_LOAD(&info, "test.index", &i, PMIX_INT);
        notify(code, NULL, &info, 1);
    }
    drain();
    assert_true(PMIx_Register_event_handler(&code, 1, NULL, 0, index_handler,
                                            NULL, NULL)
                >= 0);
    drain();
    assert_int_equal(kept_seen, 512);
    assert_int_equal(kept_first_index, 1); /* the oldest went */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_before_init_fails),
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(blocking_registration_returns_distinct_ids),
        T(bad_registrations_are_refused),
        T(nonblocking_registration_calls_back_once),
        T(chain_runs_first_single_multi_default_last),
        T(prepend_before_and_after_place_within_category),
        T(before_and_after_the_global_first_and_last),
        T(action_complete_stops_the_chain),
        T(non_default_events_skip_default_handlers),
        T(affected_proc_filter_selects_events),
        T(custom_range_filter_checks_the_source),
        T(deregistered_handlers_are_not_called),
        T(notify_calls_back_exactly_once),
        T(handlers_may_register_handlers),
        T(kept_event_goes_to_the_first_matching_handler_once),
        T(delivered_events_are_not_kept),
        T(kept_non_default_event_waits_for_a_specific_handler),
        T(do_not_cache_events_are_not_kept),
        T(at_most_512_events_are_kept_oldest_dropped),
#undef T
    };

    return cmocka_run_group_tests_name("event", tests, NULL, NULL);
}
