/* test_client_store.c - client bundles and the PMIx_Get lookup rules */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <endian.h>
#include <string.h>

#include <pmix.h>

#include "core/client/store.h"
#include "core/util/value.h"
#include "core/wire/proto.h"

#include "client_testgen.h"

#define NS "job.1"

/*
 * Job NS: 4 ranks, 2 nodes (n0: ranks 0,1; n1: ranks 2,3), 2 apps.
 * We are rank 2 on n1.
 */
static void write_job(rdp_buf_t *b)
{
    uint16_t lr = 1;

    rdp_buf_init(b);
    assert_int_equal(rdp_pack_u32(b, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(b, NS), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(b, 8), PMIX_SUCCESS);
    w_section(b, RDP_SECT_JOB, PMIX_RANK_WILDCARD, NULL, 3);
    w_u32(b, PMIX_JOB_SIZE, 4);
    w_u32(b, PMIX_MAX_PROCS, 4);
    w_u32(b, PMIX_LOCAL_SIZE, 99); /* a job-level value to be shadowed */
    w_section(b, RDP_SECT_APP, 0, NULL, 1);
    w_u32(b, PMIX_APP_SIZE, 1);
    w_section(b, RDP_SECT_APP, 1, NULL, 1);
    w_u32(b, PMIX_APP_SIZE, 3);
    w_section(b, RDP_SECT_NODE, 0, "n0", 2);
    w_u32(b, PMIX_LOCAL_SIZE, 2);
    w_str(b, PMIX_LOCAL_PEERS, "0,1");
    w_section(b, RDP_SECT_NODE, 1, "n1", 2);
    w_u32(b, PMIX_LOCAL_SIZE, 2);
    w_str(b, PMIX_LOCAL_PEERS, "2,3");
    w_section(b, RDP_SECT_PROC, 2, NULL, 3);
    w_kv(b, PMIX_LOCAL_RANK, PMIX_UINT16, &lr);
    w_u32(b, PMIX_NODEID, 1);
    w_u32(b, PMIX_APPNUM, 1);
    w_section(b, RDP_SECT_PROC, 3, NULL, 2);
    w_u32(b, PMIX_NODEID, 1);
    w_str(b, "btl.tcp", "addr-3");
    w_section(b, RDP_SECT_PROC, 0, NULL, 1);
    w_str(b, PMIX_HOSTNAME, "n0");
    w_end(b);
}

typedef struct fixture {
    rdp_kvs_t *kvs;
    rdp_client_store_t st;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    pmix_proc_t me;
    rdp_buf_t b;
    rdp_rbuf_t rb;

    if (fx == NULL || rdp_kvs_create(&fx->kvs) != PMIX_SUCCESS) {
        return -1;
    }
    PMIX_LOAD_PROCID(&me, NS, 2);
    if (rdp_client_store_init(&fx->st, fx->kvs, &me, "n1") != PMIX_SUCCESS) {
        return -1;
    }
    write_job(&b);
    rdp_rbuf_init(&rb, b.data, b.size);
    if (rdp_client_store_bundle(&fx->st, &rb) != PMIX_SUCCESS || rb.left != 0) {
        return -1;
    }
    rdp_buf_cleanup(&b);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;

    rdp_client_store_cleanup(&fx->st);
    rdp_kvs_destroy(fx->kvs);
    free(fx);
    return 0;
}

/* Look up and return the value (caller frees), or NULL when the status
 * differs from @a expect. */
static pmix_value_t *get(fixture_t *fx, pmix_rank_t rank, const char *key,
                         const pmix_info_t *info, size_t ninfo,
                         pmix_status_t expect)
{
    rdp_get_quals_t q;
    pmix_proc_t p;
    pmix_value_t *val = NULL;

    PMIX_LOAD_PROCID(&p, NS, rank);
    assert_int_equal(rdp_client_get_quals_parse(&q, info, ninfo), PMIX_SUCCESS);
    assert_int_equal(rdp_client_store_lookup(&fx->st, &p, key, &q, &val),
                     expect);
    return val;
}

static void expect_u32(pmix_value_t *v, uint32_t u)
{
    assert_non_null(v);
    assert_int_equal(v->type, PMIX_UINT32);
    assert_int_equal(v->data.uint32, u);
    PMIX_VALUE_RELEASE(v);
}

static void expect_str(pmix_value_t *v, const char *s)
{
    assert_non_null(v);
    assert_int_equal(v->type, PMIX_STRING);
    assert_string_equal(v->data.string, s);
    PMIX_VALUE_RELEASE(v);
}

/* ---- tests -------------------------------------------------------- */

static void job_keys_are_found_with_rank_wildcard(void **state)
{
    fixture_t *fx = *state;

    expect_u32(
        get(fx, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0, PMIX_SUCCESS), 4);
    get(fx, PMIX_RANK_WILDCARD, "no.such.key", NULL, 0, PMIX_ERR_NOT_FOUND);
}

static void proc_lookups_fall_back_to_job_data(void **state)
{
    fixture_t *fx = *state;

    expect_u32(get(fx, 3, PMIX_MAX_PROCS, NULL, 0, PMIX_SUCCESS), 4);
    expect_str(get(fx, 3, "btl.tcp", NULL, 0, PMIX_SUCCESS), "addr-3");
    get(fx, 3, "btl.vader", NULL, 0, PMIX_ERR_NOT_FOUND);
}

static void proc_keys_keep_their_registered_type(void **state)
{
    fixture_t *fx   = *state;
    pmix_value_t *v = get(fx, 2, PMIX_LOCAL_RANK, NULL, 0, PMIX_SUCCESS);

    assert_non_null(v);
    assert_int_equal(v->type, PMIX_UINT16);
    assert_int_equal(v->data.uint16, 1);
    PMIX_VALUE_RELEASE(v);
}

static void node_keys_with_wildcard_come_from_our_node(void **state)
{
    fixture_t *fx = *state;

    /* node section of n1 wins over the job-level 99 */
    expect_u32(
        get(fx, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, NULL, 0, PMIX_SUCCESS), 2);
    expect_str(
        get(fx, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, NULL, 0, PMIX_SUCCESS),
        "2,3");
    expect_str(
        get(fx, PMIX_RANK_WILDCARD, PMIX_HOSTNAME, NULL, 0, PMIX_SUCCESS),
        "n1");
}

static void peer_hostname_comes_from_its_node(void **state)
{
    fixture_t *fx = *state;

    expect_str(get(fx, 3, PMIX_HOSTNAME, NULL, 0, PMIX_SUCCESS), "n1");
    expect_str(get(fx, 0, PMIX_HOSTNAME, NULL, 0, PMIX_SUCCESS), "n0");
    expect_str(get(fx, 0, PMIX_LOCAL_PEERS, NULL, 0, PMIX_SUCCESS), "0,1");
}

static void node_info_qualifiers_select_a_node(void **state)
{
    fixture_t *fx = *state;
    pmix_info_t info[2];
    bool t       = true;
    uint32_t nid = 0;

    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[0], PMIX_NODE_INFO, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "n0", PMIX_STRING);
    expect_str(
        get(fx, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, info, 2, PMIX_SUCCESS),
        "0,1");
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[1], PMIX_NODEID, &nid, PMIX_UINT32);
    expect_u32(get(fx, PMIX_RANK_WILDCARD, PMIX_NODEID, info, 2, PMIX_SUCCESS),
               0);
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "nowhere", PMIX_STRING);
    get(fx, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, info, 2, PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&info[1]);
    /* no node named: ours */
    expect_str(
        get(fx, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, info, 1, PMIX_SUCCESS),
        "2,3");
}

static void app_info_qualifiers_select_an_app(void **state)
{
    fixture_t *fx = *state;
    pmix_info_t info[2];
    bool t      = true;
    uint32_t a0 = 0;

    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[0], PMIX_APP_INFO, &t, PMIX_BOOL);
    /* our app (1) by default */
    expect_u32(
        get(fx, PMIX_RANK_WILDCARD, PMIX_APP_SIZE, info, 1, PMIX_SUCCESS), 3);
    PMIX_INFO_LOAD(&info[1], PMIX_APPNUM, &a0, PMIX_UINT32);
    expect_u32(
        get(fx, PMIX_RANK_WILDCARD, PMIX_APP_SIZE, info, 2, PMIX_SUCCESS), 1);
}

static void null_key_returns_all_keys_as_info_array(void **state)
{
    fixture_t *fx   = *state;
    pmix_value_t *v = get(fx, 3, NULL, NULL, 0, PMIX_SUCCESS);
    pmix_info_t *info;

    assert_non_null(v);
    assert_int_equal(v->type, PMIX_DATA_ARRAY);
    assert_int_equal(v->data.darray->type, PMIX_INFO);
    assert_int_equal(v->data.darray->size, 2);
    info = v->data.darray->array;
    assert_string_equal(info[0].key, PMIX_NODEID);
    assert_string_equal(info[1].key, "btl.tcp");
    PMIX_VALUE_RELEASE(v);
    get(fx, 1, NULL, NULL, 0, PMIX_ERR_NOT_FOUND);
}

static void fetch_decision_follows_the_rules(void **state)
{
    fixture_t *fx = *state;
    rdp_get_quals_t q;
    pmix_proc_t p;
    pmix_info_t opt;

    memset(&q, 0, sizeof(q));
    PMIX_LOAD_PROCID(&p, NS, 1);
    assert_true(rdp_client_store_should_fetch(&fx->st, &p, &q));
    PMIX_LOAD_PROCID(&p, NS, 2); /* ourselves */
    assert_false(rdp_client_store_should_fetch(&fx->st, &p, &q));
    PMIX_LOAD_PROCID(&p, NS, PMIX_RANK_WILDCARD);
    assert_false(rdp_client_store_should_fetch(&fx->st, &p, &q));
    PMIX_LOAD_PROCID(&p, "other.job", PMIX_RANK_WILDCARD);
    assert_true(rdp_client_store_should_fetch(&fx->st, &p, &q));
    /* Open MPI passes PMIX_OPTIONAL with no value: true */
    memset(&opt, 0, sizeof(opt));
    PMIX_LOAD_KEY(opt.key, PMIX_OPTIONAL);
    opt.value.type = PMIX_UNDEF;
    assert_int_equal(rdp_client_get_quals_parse(&q, &opt, 1), PMIX_SUCCESS);
    assert_true(q.optional);
    PMIX_LOAD_PROCID(&p, NS, 1);
    assert_false(rdp_client_store_should_fetch(&fx->st, &p, &q));
}

static void bad_qualifier_types_are_refused(void **state)
{
    rdp_get_quals_t q;
    pmix_info_t info;

    memset(&info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info, PMIX_NODEID, "zero", PMIX_STRING);
    assert_int_equal(rdp_client_get_quals_parse(&q, &info, 1),
                     PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(rdp_client_get_quals_parse(&q, NULL, 1),
                     PMIX_ERR_BAD_PARAM);
}

static void appnum_is_synthesized_as_uint32_zero(void **state)
{
    fixture_t *fx = *state;
    pmix_proc_t p;
    pmix_value_t *v = NULL;

    PMIX_LOAD_PROCID(&p, NS, 3);
    assert_int_equal(rdp_client_store_synthesize(&fx->st, &p, PMIX_APPNUM, &v),
                     PMIX_SUCCESS);
    expect_u32(v, 0);
    assert_int_equal(
        rdp_client_store_synthesize(&fx->st, &p, PMIX_JOB_SIZE, &v),
        PMIX_ERR_NOT_FOUND);
}

static void peers_and_nodes_resolve(void **state)
{
    fixture_t *fx = *state;
    pmix_proc_t *procs;
    size_t n;
    char *nodes;

    assert_int_equal(
        rdp_client_store_resolve_peers(&fx->st, NULL, NS, &procs, &n),
        PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(procs[0].rank, 2);
    assert_int_equal(procs[1].rank, 3);
    assert_string_equal(procs[0].nspace, NS);
    free(procs);
    assert_int_equal(
        rdp_client_store_resolve_peers(&fx->st, "n0", NULL, &procs, &n),
        PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(procs[0].rank, 0);
    assert_int_equal(procs[1].rank, 1);
    free(procs);
    assert_int_equal(
        rdp_client_store_resolve_peers(&fx->st, "n9", NS, &procs, &n),
        PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_client_store_resolve_nodes(&fx->st, NS, &nodes),
                     PMIX_SUCCESS);
    assert_true(strcmp(nodes, "n0,n1") == 0 || strcmp(nodes, "n1,n0") == 0);
    free(nodes);
    assert_int_equal(
        rdp_client_store_resolve_nodes(&fx->st, "other.job", &nodes),
        PMIX_ERR_NOT_FOUND);
}

static void malformed_bundles_fail_cleanly(void **state)
{
    fixture_t *fx = *state;
    rdp_buf_t b;
    rdp_rbuf_t rb;

    write_job(&b);
    /* every truncation fails without crashing */
    for (size_t len = 0; len < b.size; len++) {
        rdp_rbuf_init(&rb, b.data, len);
        assert_int_not_equal(rdp_client_store_bundle(&fx->st, &rb),
                             PMIX_SUCCESS);
    }
    rdp_buf_cleanup(&b);
    /* unknown section kind */
    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&b, NS), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_section(&b, 77, 0, NULL, 0);
    w_end(&b);
    rdp_rbuf_init(&rb, b.data, b.size);
    assert_int_equal(rdp_client_store_bundle(&fx->st, &rb),
                     PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&b);
    /* a proc section for a reserved rank */
    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&b, NS), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_section(&b, RDP_SECT_PROC, PMIX_RANK_WILDCARD, NULL, 0);
    w_end(&b);
    rdp_rbuf_init(&rb, b.data, b.size);
    assert_int_equal(rdp_client_store_bundle(&fx->st, &rb),
                     PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&b);
}

static void singleton_job_info_uses_standard_types(void **state)
{
    rdp_kvs_t *kvs;
    rdp_client_store_t st;
    pmix_proc_t me, p;
    rdp_get_quals_t q;
    pmix_value_t *v;

    assert_int_equal(rdp_kvs_create(&kvs), PMIX_SUCCESS);
    PMIX_LOAD_PROCID(&me, "singleton.h.1", 0);
    assert_int_equal(rdp_client_store_init(&st, kvs, &me, "h"), PMIX_SUCCESS);
    assert_int_equal(rdp_client_store_load_singleton(&st), PMIX_SUCCESS);
    memset(&q, 0, sizeof(q));
    PMIX_LOAD_PROCID(&p, "singleton.h.1", PMIX_RANK_WILDCARD);
    assert_int_equal(rdp_client_store_lookup(&st, &p, PMIX_JOB_SIZE, &q, &v),
                     PMIX_SUCCESS);
    expect_u32(v, 1);
    assert_int_equal(rdp_client_store_lookup(&st, &p, PMIX_LOCAL_PEERS, &q, &v),
                     PMIX_SUCCESS);
    expect_str(v, "0");
    p.rank = 0;
    assert_int_equal(rdp_client_store_lookup(&st, &p, PMIX_LOCAL_RANK, &q, &v),
                     PMIX_SUCCESS);
    assert_int_equal(v->type, PMIX_UINT16);
    PMIX_VALUE_RELEASE(v);
    assert_int_equal(rdp_client_store_lookup(&st, &p, PMIX_RANK, &q, &v),
                     PMIX_SUCCESS);
    assert_int_equal(v->type, PMIX_PROC_RANK);
    PMIX_VALUE_RELEASE(v);
    rdp_client_store_cleanup(&st);
    rdp_kvs_destroy(kvs);
}

/* ---- lazy sections ------------------------------------------------ */

/* Keep @a b (a whole bundle) as fence results are kept. */
static pmix_status_t keep(fixture_t *fx, rdp_buf_t *b)
{
    rdp_client_backing_t *bk;
    pmix_status_t status;

    w_end(b);
    assert_int_equal(rdp_client_backing_create(b->data, b->size, 0, &bk),
                     PMIX_SUCCESS);
    status = rdp_client_store_bundle_keep(&fx->st, bk);
    rdp_client_backing_unref(&fx->st, bk);
    return status;
}

/* PMIx_Put of string @a text under @a key for our own rank 2. */
static void put_own(fixture_t *fx, const char *key, const char *text)
{
    pmix_value_t put;

    PMIX_VALUE_LOAD(&put, text, PMIX_STRING);
    assert_int_equal(
        rdp_client_store_put(&fx->st, NULL, NS, 2, key, PMIX_GLOBAL, &put),
        PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&put);
}

static void lazy_sections_answer_gets_and_unpack_on_demand(void **state)
{
    fixture_t *fx = *state;
    pmix_value_t *v;
    pmix_data_array_t *da;
    pmix_proc_t *procs;
    size_t n;
    int saw_new = 0, saw_node = 0;
    rdp_buf_t b;

    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_set(&b, NS, 4);
    w_section(&b, RDP_SECT_PROC, 0, NULL, 2);
    w_str(&b, "a", "a-0");
    w_str(&b, "y", "y-0");
    w_section(&b, RDP_SECT_PROC, 1, NULL, 2);
    w_str(&b, "b", "b-1");
    w_str(&b, "c", "c-1");
    w_section(&b, RDP_SECT_PROC, 3, NULL, 1);
    w_str(&b, "btl.tcp", "new-3");
    w_section(&b, RDP_SECT_PROC, 2, NULL, 1);
    w_str(&b, "mine", "committed");
    assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
    rdp_buf_cleanup(&b);

    /* first keys come straight from the bundle, later ones after the
     * section is unpacked */
    expect_str(get(fx, 0, "a", NULL, 0, PMIX_SUCCESS), "a-0");
    expect_str(get(fx, 1, "c", NULL, 0, PMIX_SUCCESS), "c-1");
    expect_str(get(fx, 1, "b", NULL, 0, PMIX_SUCCESS), "b-1");
    get(fx, 1, "nope", NULL, 0, PMIX_ERR_NOT_FOUND);
    /* a section shadows older data of its rank and keeps the rest */
    expect_str(get(fx, 3, "btl.tcp", NULL, 0, PMIX_SUCCESS), "new-3");
    expect_u32(get(fx, 3, PMIX_NODEID, NULL, 0, PMIX_SUCCESS), 1);
    v = get(fx, 3, NULL, NULL, 0, PMIX_SUCCESS);
    assert_non_null(v);
    assert_int_equal(v->type, PMIX_DATA_ARRAY);
    da = v->data.darray;
    for (size_t i = 0; i < da->size; i++) {
        pmix_info_t *in = &((pmix_info_t *)da->array)[i];

        if (PMIX_CHECK_KEY(in, "btl.tcp")) {
            saw_new = strcmp(in->value.data.string, "new-3") == 0;
        }
        saw_node |= PMIX_CHECK_KEY(in, PMIX_NODEID);
    }
    assert_true(saw_new && saw_node);
    PMIX_VALUE_RELEASE(v);
    /* job and node lookups still work beside packed sections */
    expect_u32(
        get(fx, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0, PMIX_SUCCESS), 4);
    assert_int_equal(
        rdp_client_store_resolve_peers(&fx->st, "n1", NS, &procs, &n),
        PMIX_SUCCESS);
    assert_int_equal(n, 2);
    PMIX_PROC_FREE(procs, n);

    /* a newer bundle for rank 0: its keys win, keys only the older one
     * had stay */
    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_set(&b, NS, 1);
    w_section(&b, RDP_SECT_PROC, 0, NULL, 1);
    w_str(&b, "a", "a-0-again");
    assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
    rdp_buf_cleanup(&b);
    expect_str(get(fx, 0, "a", NULL, 0, PMIX_SUCCESS), "a-0-again");
    expect_str(get(fx, 0, "y", NULL, 0, PMIX_SUCCESS), "y-0");

    /* a put of our own hides the committed copy in the bundle */
    expect_str(get(fx, 2, "mine", NULL, 0, PMIX_SUCCESS), "committed");
    put_own(fx, "mine", "updated");
    expect_str(get(fx, 2, "mine", NULL, 0, PMIX_SUCCESS), "updated");
}

/* Keep a bundle of one PROC section of rank 0: "k" = @a k (first key,
 * a byte object of @a len bytes of @a fill), plus "extra" when @a extra. */
static void keep_rank0(fixture_t *fx, char fill, size_t len, const char *extra)
{
    char bytes[256];
    pmix_byte_object_t bo = {bytes, len};
    rdp_buf_t b;

    assert_true(len <= sizeof(bytes));
    memset(bytes, fill, len);
    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_set(&b, NS, 1);
    w_section(&b, RDP_SECT_PROC, 0, NULL, extra != NULL ? 2 : 1);
    w_kv(&b, "k", PMIX_BYTE_OBJECT, &bo);
    if (extra != NULL) {
        w_str(&b, "extra", extra);
    }
    assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
    rdp_buf_cleanup(&b);
}

static void expect_bytes(pmix_value_t *v, char fill, size_t len)
{
    assert_non_null(v);
    assert_int_equal(v->type, PMIX_BYTE_OBJECT);
    assert_int_equal(v->data.bo.size, len);
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(v->data.bo.bytes[i], fill);
    }
    PMIX_VALUE_RELEASE(v);
}

/* put + commit + fence, again and again: each fence brings a newer
 * section of every rank holding all its keys; older ones that were never
 * looked at are dropped without being decoded, and Gets see the newest. */
static void superseded_sections_are_dropped_unread(void **state)
{
    fixture_t *fx = *state;

    keep_rank0(fx, 'a', 100, NULL);
    keep_rank0(fx, 'b', 200, NULL);
    keep_rank0(fx, 'c', 50, "e-c");
    assert_int_equal(fx->st.superseded, 2);
    expect_bytes(get(fx, 0, "k", NULL, 0, PMIX_SUCCESS), 'c', 50);
    expect_str(get(fx, 0, "extra", NULL, 0, PMIX_SUCCESS), "e-c");

    /* looked at (unpacked) or not, the newest section answers */
    keep_rank0(fx, 'd', 10, "e-d");
    keep_rank0(fx, 'e', 20, "e-e");
    assert_int_equal(fx->st.superseded, 3);
    expect_bytes(get(fx, 0, "k", NULL, 0, PMIX_SUCCESS), 'e', 20);
    expect_str(get(fx, 0, "extra", NULL, 0, PMIX_SUCCESS), "e-e");

    /* a newer section with fewer keys breaks the server's rule: the
     * older one is unpacked first, so that none of its keys is lost */
    keep_rank0(fx, 'f', 30, "e-f");
    keep_rank0(fx, 'g', 40, NULL);
    assert_int_equal(fx->st.superseded, 3);
    expect_bytes(get(fx, 0, "k", NULL, 0, PMIX_SUCCESS), 'g', 40);
    expect_str(get(fx, 0, "extra", NULL, 0, PMIX_SUCCESS), "e-f");

    /* a section of our own rank after our own put: the put is in the
     * kvs, the section (what we committed) shadows it until we put again */
    put_own(fx, "own", "p1");
    for (int round = 0; round < 3; round++) {
        rdp_buf_t b;
        char text[16];

        snprintf(text, sizeof(text), "c%d", round);
        rdp_buf_init(&b);
        assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
        w_set(&b, NS, 1);
        w_section(&b, RDP_SECT_PROC, 2, NULL, 1);
        w_str(&b, "own", text);
        assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
        rdp_buf_cleanup(&b);
    }
    assert_int_equal(fx->st.superseded, 5);
    expect_str(get(fx, 2, "own", NULL, 0, PMIX_SUCCESS), "c2");
    put_own(fx, "own", "p2");
    expect_str(get(fx, 2, "own", NULL, 0, PMIX_SUCCESS), "p2");
}

/* Take @a pending as a commit would and return how many items it packed;
 * nothing is left pending after. */
static uint32_t commit_items(fixture_t *fx, rdp_client_pending_t *pending)
{
    rdp_buf_t b;
    rdp_rbuf_t rb;
    uint32_t n;

    rdp_buf_init(&b);
    assert_int_equal(rdp_client_store_take_pending(&fx->st, pending, &b),
                     PMIX_SUCCESS);
    rdp_rbuf_init(&rb, b.data, b.size);
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    rdp_buf_cleanup(&b);
    assert_int_equal(rdp_client_pending_count(pending), 0);
    return n;
}

static void pending_puts_are_packed_once(void **state)
{
    fixture_t *fx = *state;
    rdp_client_pending_t *pending;
    pmix_value_t val;

    assert_int_equal(rdp_client_pending_create(&pending), PMIX_SUCCESS);
    PMIX_VALUE_LOAD(&val, "shared", PMIX_STRING);
    assert_int_equal(
        rdp_client_store_put(&fx->st, pending, NS, 2, "k1", PMIX_GLOBAL, &val),
        PMIX_SUCCESS);
    /* the contents were taken */
    assert_int_equal(val.type, PMIX_UNDEF);
    expect_str(get(fx, 2, "k1", NULL, 0, PMIX_SUCCESS), "shared");
    /* taken: the next commit sends nothing (commit_items checks) */
    assert_int_equal(commit_items(fx, pending), 1);
    rdp_client_pending_destroy(pending);
}

/* A commit forgets its keys: a key put again after it starts afresh and
 * does not mark an item of the next set dead. */
static void a_key_put_again_after_a_commit_is_one_new_item(void **state)
{
    fixture_t *fx = *state;
    rdp_client_pending_t *pending;
    pmix_value_t val;

    assert_int_equal(rdp_client_pending_create(&pending), PMIX_SUCCESS);
    for (int round = 0; round < 3; round++) {
        PMIX_VALUE_LOAD(&val, "v", PMIX_STRING);
        assert_int_equal(rdp_client_store_put(&fx->st, pending, NS, 2, "k",
                                              PMIX_GLOBAL, &val),
                         PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&val);
        assert_int_equal(rdp_client_pending_count(pending), 1);
        assert_int_equal(commit_items(fx, pending), 1);
    }
    rdp_client_pending_destroy(pending);
}

/* A put is packed for the commit when it is made, and the commit takes
 * those bytes as they are (no second packing): the commit's buffer is the
 * one the puts wrote.  Keys put again, and puts the wire cannot carry,
 * give what the kvs packing of the same puts gives. */
static void a_commit_takes_the_bytes_its_puts_packed(void **state)
{
    fixture_t *fx = *state;
    rdp_client_pending_t *pending;
    rdp_kvs_t *ref;
    pmix_value_t val;
    rdp_buf_t b, want;
    const uint8_t *packed_at;
    static const char *keys[] = {"a", "b", "a", "c", "b"};
    size_t len;
    uint8_t *big = calloc(1, 100 * 1024);
    int32_t i32;

    assert_int_equal(rdp_client_pending_create(&pending), PMIX_SUCCESS);
    assert_int_equal(rdp_kvs_create(&ref), PMIX_SUCCESS);
    PMIX_VALUE_LOAD(&val, "v0", PMIX_STRING);
    assert_int_equal(
        rdp_client_store_put(&fx->st, pending, NS, 2, "x", PMIX_LOCAL, &val),
        PMIX_SUCCESS);
    PMIX_VALUE_LOAD(&val, "v0", PMIX_STRING);
    assert_int_equal(rdp_kvs_put(ref, NS, 2, "x", PMIX_LOCAL, &val),
                     PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&val);
    rdp_buf_init(&b);
    assert_int_equal(rdp_client_store_take_pending(&fx->st, pending, &b),
                     PMIX_SUCCESS);
    rdp_buf_init(&want);
    assert_int_equal(rdp_kvs_pack_rank(ref, NS, 2, RDP_SCOPES_ALL, &want),
                     PMIX_SUCCESS);
    assert_int_equal(b.size, want.size);
    assert_memory_equal(b.data, want.data, b.size);
    rdp_buf_cleanup(&b);
    rdp_buf_cleanup(&want);
    rdp_kvs_remove_rank(ref, NS, 2);

    /* one put: the commit's bytes are where the put packed them */
    PMIX_VALUE_LOAD(&val, "only", PMIX_STRING);
    assert_int_equal(
        rdp_client_store_put(&fx->st, pending, NS, 2, "y", PMIX_GLOBAL, &val),
        PMIX_SUCCESS);
    packed_at = rdp_client_pending_bytes(pending, &len);
    assert_non_null(packed_at);
    rdp_buf_init(&b);
    assert_int_equal(rdp_client_store_take_pending(&fx->st, pending, &b),
                     PMIX_SUCCESS);
    assert_ptr_equal(b.data, packed_at);
    rdp_buf_cleanup(&b);

    /* keys put again: only the newest of each, in the kvs's packing */
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        i32 = (int32_t)k;
        PMIX_VALUE_LOAD(&val, &i32, PMIX_INT32);
        assert_int_equal(rdp_client_store_put(&fx->st, pending, NS, 2,
                                              keys[k], PMIX_GLOBAL, &val),
                         PMIX_SUCCESS);
        PMIX_VALUE_LOAD(&val, &i32, PMIX_INT32);
        assert_int_equal(rdp_kvs_put(ref, NS, 2, keys[k], PMIX_GLOBAL, &val),
                         PMIX_SUCCESS);
    }
    assert_int_equal(rdp_client_pending_count(pending), 3);
    rdp_buf_init(&b);
    assert_int_equal(rdp_client_store_take_pending(&fx->st, pending, &b),
                     PMIX_SUCCESS);
    {
        rdp_rbuf_t rb;
        rdp_kvs_t *got;

        /* same keys and values (the order may differ): unpack both */
        assert_int_equal(rdp_kvs_create(&got), PMIX_SUCCESS);
        rdp_rbuf_init(&rb, b.data, b.size);
        assert_int_equal(rdp_kvs_unpack_rank(got, NS, 2, &rb), PMIX_SUCCESS);
        assert_int_equal(rb.left, 0);
        assert_int_equal(rdp_kvs_count(got, NS, 2), 3);
        for (size_t k = 0; k < 3; k++) {
            const char *key        = (const char *[]){"a", "b", "c"}[k];
            const pmix_value_t *gv = rdp_kvs_peek(got, NS, 2, key);
            const pmix_value_t *rv = rdp_kvs_peek(ref, NS, 2, key);

            assert_non_null(gv);
            assert_non_null(rv);
            assert_int_equal(gv->data.int32, rv->data.int32);
            assert_int_equal(rdp_kvs_scope(got, NS, 2, key), PMIX_GLOBAL);
        }
        rdp_kvs_destroy(got);
    }
    rdp_buf_cleanup(&b);
    assert_int_equal(rdp_client_pending_count(pending), 0);

    /* a key put again and again before a commit: the earlier items do not
     * pile up (squeezed out once they outweigh the live ones) */
    for (int k = 0; k < 20; k++) {
        big[0] = (uint8_t)k;
        val.type          = PMIX_BYTE_OBJECT;
        val.data.bo.bytes = (char *)big;
        val.data.bo.size  = 100 * 1024;
        assert_int_equal(rdp_client_store_put(&fx->st, pending, NS, 2, "big",
                                              PMIX_GLOBAL, &val),
                         PMIX_SUCCESS);
        big = calloc(1, 100 * 1024); /* the store took the bytes */
        assert_non_null(rdp_client_pending_bytes(pending, &len));
        assert_true(len < 3 * 100 * 1024);
    }
    assert_int_equal(rdp_client_pending_count(pending), 1);
    rdp_buf_init(&b);
    assert_int_equal(rdp_client_store_take_pending(&fx->st, pending, &b),
                     PMIX_SUCCESS);
    assert_true(b.size > 100 * 1024 && b.size < 101 * 1024);
    rdp_buf_cleanup(&b);
    free(big);
    rdp_kvs_destroy(ref);
    rdp_client_pending_destroy(pending);
}

static void malformed_lazy_sections_fail_cleanly(void **state)
{
    fixture_t *fx = *state;
    rdp_buf_t b;
    size_t mark;

    /* a value that does not parse: found only when it is looked up */
    rdp_buf_init(&b);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    w_set(&b, NS, 1);
    w_end(&b);
    assert_int_equal(rdp_sect_pack_begin(&b, RDP_SECT_PROC, 1, NULL, &mark),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u8(&b, PMIX_GLOBAL), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&b, "bad"), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u16(&b, 0xfff0), PMIX_SUCCESS); /* no type */
    rdp_sect_pack_end(&b, mark);
    assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
    assert_int_not_equal(
        rdp_client_store_lookup(&fx->st,
                                &(pmix_proc_t){.nspace = NS, .rank = 1}, "bad",
                                &(rdp_get_quals_t){0}, &(pmix_value_t *){NULL}),
        PMIX_SUCCESS);
    /* other keys of that rank are looked for in the rest of its data */
    get(fx, 1, "other", NULL, 0, PMIX_ERR_NOT_FOUND);
    /* every truncation of a kept bundle fails without crashing */
    for (size_t len = 0; len < b.size; len++) {
        rdp_client_backing_t *bk;

        assert_int_equal(rdp_client_backing_create(b.data, len, 0, &bk),
                         PMIX_SUCCESS);
        assert_int_not_equal(rdp_client_store_bundle_keep(&fx->st, bk),
                             PMIX_SUCCESS);
        rdp_client_backing_unref(&fx->st, bk);
    }
    /* trailing bytes after the last set are refused */
    assert_int_equal(rdp_pack_u8(&b, 0), PMIX_SUCCESS);
    assert_int_equal(keep(fx, &b), PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&b);
}

/* ---- threads ------------------------------------------------------ */

#define MT_RANKS   8
#define MT_ROUNDS  200
#define MT_READERS 4

typedef struct mt {
    fixture_t *fx;
    int stop;  /* atomic */
    long gets; /* atomic: successful lookups so far */
} mt_t;

/* A rank's value in round g is "g:<g>:<rank>"; every value read must be
 * whole and belong to that rank. */
static void *mt_reader(void *arg)
{
    mt_t *mt = arg;
    rdp_get_quals_t q;

    memset(&q, 0, sizeof(q));
    while (!__atomic_load_n(&mt->stop, __ATOMIC_ACQUIRE)) {
        for (pmix_rank_t r = 0; r < MT_RANKS; r++) {
            pmix_proc_t p;
            pmix_value_t *v = NULL;
            unsigned g, rr;

            PMIX_LOAD_PROCID(&p, NS, r);
            if (rdp_client_store_lookup(&mt->fx->st, &p, "mt.key", &q, &v)
                != PMIX_SUCCESS) {
                continue; /* not stored yet */
            }
            assert_int_equal(v->type, PMIX_STRING);
            assert_int_equal(sscanf(v->data.string, "g:%u:%u", &g, &rr), 2);
            assert_int_equal(rr, r);
            PMIX_VALUE_RELEASE(v);
            __atomic_add_fetch(&mt->gets, 1, __ATOMIC_RELAXED);
        }
        {
            pmix_proc_t w;
            pmix_value_t *v = NULL;

            PMIX_LOAD_PROCID(&w, NS, PMIX_RANK_WILDCARD);
            assert_int_equal(
                rdp_client_store_lookup(&mt->fx->st, &w, PMIX_JOB_SIZE, &q, &v),
                PMIX_SUCCESS);
            PMIX_VALUE_RELEASE(v);
        }
    }
    return NULL;
}

static void gets_on_many_threads_while_bundles_arrive(void **state)
{
    fixture_t *fx = *state;
    pthread_t readers[MT_READERS];
    mt_t mt = {fx, 0, 0};

    for (int i = 0; i < MT_READERS; i++) {
        assert_int_equal(pthread_create(&readers[i], NULL, mt_reader, &mt), 0);
    }
    /* at least MT_ROUNDS rounds, and on until the readers overlapped a
     * fair number of them (a loaded machine may start them late) */
    for (unsigned g = 0; g < MT_ROUNDS
                         || (__atomic_load_n(&mt.gets, __ATOMIC_RELAXED) < 1000
                             && g < 100 * MT_ROUNDS);
         g++) {
        rdp_buf_t b;
        pmix_value_t own;
        char text[32];

        rdp_buf_init(&b);
        assert_int_equal(rdp_pack_u32(&b, 1), PMIX_SUCCESS);
        w_set(&b, NS, MT_RANKS);
        for (pmix_rank_t r = 0; r < MT_RANKS; r++) {
            /* every other round a second key: those sections unpack */
            w_section(&b, RDP_SECT_PROC, r, NULL, 1 + (g % 2));
            snprintf(text, sizeof(text), "g:%u:%u", g, r);
            w_str(&b, "mt.key", text);
            if (g % 2) {
                w_str(&b, "mt.other", text);
            }
        }
        assert_int_equal(keep(fx, &b), PMIX_SUCCESS);
        rdp_buf_cleanup(&b);
        /* our own puts land in the same store meanwhile */
        snprintf(text, sizeof(text), "g:%u:%u", g, 2);
        PMIX_VALUE_LOAD(&own, text, PMIX_STRING);
        assert_int_equal(rdp_client_store_put(&fx->st, NULL, NS, 2, "mt.key",
                                              PMIX_LOCAL, &own),
                         PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&own);
    }
    __atomic_store_n(&mt.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < MT_READERS; i++) {
        pthread_join(readers[i], NULL);
    }
    assert_true(__atomic_load_n(&mt.gets, __ATOMIC_RELAXED) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(job_keys_are_found_with_rank_wildcard),
        T(proc_lookups_fall_back_to_job_data),
        T(proc_keys_keep_their_registered_type),
        T(node_keys_with_wildcard_come_from_our_node),
        T(peer_hostname_comes_from_its_node),
        T(node_info_qualifiers_select_a_node),
        T(app_info_qualifiers_select_an_app),
        T(null_key_returns_all_keys_as_info_array),
        T(fetch_decision_follows_the_rules),
        T(bad_qualifier_types_are_refused),
        T(appnum_is_synthesized_as_uint32_zero),
        T(peers_and_nodes_resolve),
        T(malformed_bundles_fail_cleanly),
        T(lazy_sections_answer_gets_and_unpack_on_demand),
        T(superseded_sections_are_dropped_unread),
        T(pending_puts_are_packed_once),
        T(a_commit_takes_the_bytes_its_puts_packed),
        T(a_key_put_again_after_a_commit_is_one_new_item),
        T(malformed_lazy_sections_fail_cleanly),
        T(gets_on_many_threads_while_bundles_arrive),
#undef T
        cmocka_unit_test(singleton_job_info_uses_standard_types),
    };

    return cmocka_run_group_tests_name("client_store", tests, NULL, NULL);
}
