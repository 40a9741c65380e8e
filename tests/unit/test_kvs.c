/* test_kvs.c - unit tests of the nspace/rank/key value store (core/kvs) */
#include "config.h"
#include "core/kvs/kvs.h"
#include "core/util/value.h"

#include "wire_testgen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int setup_kvs(void **state)
{
    rdp_kvs_t *kvs = NULL;

    if (rdp_kvs_create(&kvs) != PMIX_SUCCESS) {
        return -1;
    }
    *state = kvs;
    return 0;
}

static int teardown_kvs(void **state)
{
    rdp_kvs_destroy(*state);
    return 0;
}

static void put_u32(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                    const char *key, pmix_scope_t scope, uint32_t x)
{
    pmix_value_t v;

    memset(&v, 0, sizeof(v));
    v.type        = PMIX_UINT32;
    v.data.uint32 = x;
    assert_int_equal(rdp_kvs_put(kvs, ns, rank, key, scope, &v), PMIX_SUCCESS);
}

static uint32_t peek_u32(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                         const char *key)
{
    const pmix_value_t *v = rdp_kvs_peek(kvs, ns, rank, key);

    assert_non_null(v);
    assert_int_equal(v->type, PMIX_UINT32);
    return v->data.uint32;
}

static void put_stores_a_deep_copy(void **state)
{
    rdp_kvs_t *kvs = *state;
    pmix_value_t v;
    const pmix_value_t *got;

    memset(&v, 0, sizeof(v));
    v.type        = PMIX_STRING;
    v.data.string = strdup("original");
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, "k", PMIX_GLOBAL, &v),
                     PMIX_SUCCESS);
    v.data.string[0] = 'X';
    got              = rdp_kvs_peek(kvs, "job", 0, "k");
    assert_non_null(got);
    assert_ptr_not_equal(got->data.string, v.data.string);
    assert_string_equal(got->data.string, "original");
    rdp_value_destruct(&v);
}

static void values_of_every_type_can_be_stored(void **state)
{
    rdp_kvs_t *kvs = *state;

    for (size_t i = 0; i < GEN_NTYPES; i++) {
        pmix_value_t v;
        char key[32];

        snprintf(key, sizeof(key), "key.%zu", i);
        gen_value(&v, gen_all_types[i], (unsigned)i, 0);
        assert_int_equal(rdp_kvs_put(kvs, "job", 1, key, PMIX_LOCAL, &v),
                         PMIX_SUCCESS);
        assert_true(rdp_value_equal(rdp_kvs_peek(kvs, "job", 1, key), &v));
        rdp_value_destruct(&v);
    }
    assert_int_equal(rdp_kvs_count(kvs, "job", 1), GEN_NTYPES);
}

struct walk {
    char keys[64][16];
    pmix_scope_t scopes[64];
    size_t n;
    size_t stop_after;
};

static int record_key(const char *key, pmix_scope_t scope,
                      const pmix_value_t *val, void *arg)
{
    struct walk *w = arg;

    assert_non_null(val);
    if (w->n < 64) {
        snprintf(w->keys[w->n], sizeof(w->keys[0]), "%s", key);
        w->scopes[w->n] = scope;
    }
    w->n++;
    return (w->stop_after != 0 && w->n == w->stop_after) ? 1 : 0;
}

static void put_replaces_a_key_and_keeps_its_place(void **state)
{
    rdp_kvs_t *kvs = *state;
    struct walk w;

    put_u32(kvs, "job", 2, "a", PMIX_LOCAL, 1);
    put_u32(kvs, "job", 2, "b", PMIX_LOCAL, 2);
    put_u32(kvs, "job", 2, "c", PMIX_LOCAL, 3);
    put_u32(kvs, "job", 2, "a", PMIX_REMOTE, 10);
    assert_int_equal(rdp_kvs_count(kvs, "job", 2), 3);
    assert_int_equal(peek_u32(kvs, "job", 2, "a"), 10);
    assert_int_equal(rdp_kvs_scope(kvs, "job", 2, "a"), PMIX_REMOTE);
    memset(&w, 0, sizeof(w));
    rdp_kvs_for_each(kvs, "job", 2, record_key, &w);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.keys[0], "a");
    assert_string_equal(w.keys[1], "b");
    assert_string_equal(w.keys[2], "c");
}

static void for_each_visits_keys_in_insertion_order(void **state)
{
    rdp_kvs_t *kvs = *state;
    struct walk w;
    char key[16];

    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof(key), "k%02d", 39 - i);
        put_u32(kvs, "job", 3, key, PMIX_GLOBAL, (uint32_t)i);
    }
    /* replacing keeps the place */
    put_u32(kvs, "job", 3, "k39", PMIX_LOCAL, 99);
    memset(&w, 0, sizeof(w));
    rdp_kvs_for_each(kvs, "job", 3, record_key, &w);
    assert_int_equal(w.n, 40);
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof(key), "k%02d", 39 - i);
        assert_string_equal(w.keys[i], key);
    }
    assert_int_equal(w.scopes[0], PMIX_LOCAL);
    assert_int_equal(w.scopes[1], PMIX_GLOBAL);
}

static void a_non_zero_return_stops_the_walk(void **state)
{
    rdp_kvs_t *kvs = *state;
    struct walk w;

    put_u32(kvs, "job", 4, "a", PMIX_GLOBAL, 1);
    put_u32(kvs, "job", 4, "b", PMIX_GLOBAL, 2);
    put_u32(kvs, "job", 4, "c", PMIX_GLOBAL, 3);
    memset(&w, 0, sizeof(w));
    w.stop_after = 2;
    rdp_kvs_for_each(kvs, "job", 4, record_key, &w);
    assert_int_equal(w.n, 2);
    /* absent rank: no visit, no crash */
    memset(&w, 0, sizeof(w));
    rdp_kvs_for_each(kvs, "job", 77, record_key, &w);
    rdp_kvs_for_each(kvs, "nojob", 4, record_key, &w);
    assert_int_equal(w.n, 0);
}

static int record_rank(pmix_rank_t rank, void *arg)
{
    uint64_t *mask = arg;

    if (rank == PMIX_RANK_WILDCARD) {
        *mask |= 1ull << 63;
    } else if (rank < 63) {
        *mask |= 1ull << rank;
    }
    return 0;
}

static void for_each_rank_visits_every_rank_including_wildcard(void **state)
{
    rdp_kvs_t *kvs = *state;
    uint64_t mask  = 0;

    put_u32(kvs, "job", PMIX_RANK_WILDCARD, "pmix.job.size", PMIX_GLOBAL, 3);
    put_u32(kvs, "job", 0, "x", PMIX_GLOBAL, 1);
    put_u32(kvs, "job", 5, "x", PMIX_GLOBAL, 1);
    assert_int_equal(rdp_kvs_touch_rank(kvs, "job", 9), PMIX_SUCCESS);
    put_u32(kvs, "other", 1, "x", PMIX_GLOBAL, 1);
    rdp_kvs_for_each_rank(kvs, "job", record_rank, &mask);
    assert_true(mask == ((1ull << 63) | 1ull | (1ull << 5) | (1ull << 9)));
}

static void touch_rank_marks_a_rank_that_has_no_keys(void **state)
{
    rdp_kvs_t *kvs = *state;

    assert_false(rdp_kvs_has_nspace(kvs, "job"));
    assert_false(rdp_kvs_has_rank(kvs, "job", 7));
    assert_int_equal(rdp_kvs_touch_rank(kvs, "job", 7), PMIX_SUCCESS);
    assert_true(rdp_kvs_has_nspace(kvs, "job"));
    assert_true(rdp_kvs_has_rank(kvs, "job", 7));
    assert_int_equal(rdp_kvs_count(kvs, "job", 7), 0);
    /* touching again keeps existing keys */
    put_u32(kvs, "job", 7, "a", PMIX_LOCAL, 1);
    assert_int_equal(rdp_kvs_touch_rank(kvs, "job", 7), PMIX_SUCCESS);
    assert_int_equal(rdp_kvs_count(kvs, "job", 7), 1);
}

static void absent_keys_ranks_and_nspaces_peek_as_null(void **state)
{
    rdp_kvs_t *kvs = *state;

    put_u32(kvs, "job", 0, "a", PMIX_LOCAL, 1);
    assert_null(rdp_kvs_peek(kvs, "job", 0, "b"));
    assert_null(rdp_kvs_peek(kvs, "job", 1, "a"));
    assert_null(rdp_kvs_peek(kvs, "nojob", 0, "a"));
    assert_null(rdp_kvs_peek(kvs, "job", 0, NULL));
    assert_null(rdp_kvs_peek(kvs, NULL, 0, "a"));
    assert_int_equal(rdp_kvs_scope(kvs, "job", 0, "b"), PMIX_SCOPE_UNDEF);
    assert_int_equal(rdp_kvs_count(kvs, "nojob", 0), 0);
}

static void put_take_steals_the_value_and_leaves_it_undef(void **state)
{
    rdp_kvs_t *kvs = *state;
    pmix_value_t v;
    char *s = strdup("stolen");

    memset(&v, 0, sizeof(v));
    v.type        = PMIX_STRING;
    v.data.string = s;
    assert_int_equal(rdp_kvs_put_take(kvs, "job", 0, "s", PMIX_LOCAL, &v),
                     PMIX_SUCCESS);
    assert_int_equal(v.type, PMIX_UNDEF);
    assert_null(v.data.string);
    assert_ptr_equal(rdp_kvs_peek(kvs, "job", 0, "s")->data.string, s);

    /* a failing put_take leaves the value with the caller */
    v.type        = PMIX_STRING;
    v.data.string = strdup("kept");
    assert_int_equal(rdp_kvs_put_take(kvs, "job", 0, "", PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_string_equal(v.data.string, "kept");
    rdp_value_destruct(&v);
}

static void bad_arguments_are_rejected_without_side_effects(void **state)
{
    rdp_kvs_t *kvs = *state;
    char longkey[PMIX_MAX_KEYLEN + 2];
    char longns[PMIX_MAX_NSLEN + 2];
    pmix_value_t v;

    memset(&v, 0, sizeof(v));
    v.type = PMIX_UINT8;
    memset(longkey, 'k', sizeof(longkey));
    longkey[sizeof(longkey) - 1] = '\0';
    memset(longns, 'n', sizeof(longns));
    longns[sizeof(longns) - 1] = '\0';
    assert_int_equal(rdp_kvs_put(NULL, "job", 0, "a", PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_put(kvs, NULL, 0, "a", PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, NULL, PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, "a", PMIX_LOCAL, NULL),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, longkey, PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_put(kvs, longns, 0, "a", PMIX_LOCAL, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_kvs_touch_rank(kvs, longns, 0), PMIX_ERR_BAD_PARAM);
    assert_false(rdp_kvs_has_nspace(kvs, "job"));
    /* the longest legal key is fine */
    longkey[PMIX_MAX_KEYLEN] = '\0';
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, longkey, PMIX_LOCAL, &v),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_kvs_create(NULL), PMIX_ERR_BAD_PARAM);
}

static void pack_rank_writes_only_the_requested_scopes(void **state)
{
    rdp_kvs_t *kvs = *state;
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    uint32_t n;
    uint8_t scope;
    const char *key;

    put_u32(kvs, "job", 0, "local", PMIX_LOCAL, 1);
    put_u32(kvs, "job", 0, "remote", PMIX_REMOTE, 2);
    put_u32(kvs, "job", 0, "global", PMIX_GLOBAL, 3);
    put_u32(kvs, "job", 0, "undef", PMIX_SCOPE_UNDEF, 4);
    put_u32(kvs, "job", 0, "internal", PMIX_INTERNAL, 5);

    rdp_buf_init(&buf);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 0, RDP_SCOPES_REMOTE, &buf),
                     PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(rdp_unpack_u8(&rb, &scope), PMIX_SUCCESS);
    assert_int_equal(scope, PMIX_REMOTE);
    assert_int_equal(rdp_unpack_string_view(&rb, &key), PMIX_SUCCESS);
    assert_string_equal(key, "remote");

    buf.size = 0;
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 0, RDP_SCOPES_LOCAL, &buf),
                     PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    assert_int_equal(n, 3);

    buf.size = 0;
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 0, RDP_SCOPES_ALL, &buf),
                     PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    assert_int_equal(n, 5);

    /* an absent rank packs as zero keys */
    buf.size = 0;
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 42, RDP_SCOPES_ALL, &buf),
                     PMIX_SUCCESS);
    assert_int_equal(buf.size, 4);
    assert_int_equal(buf.data[0], 0);
    rdp_buf_cleanup(&buf);
}

static void pack_rank_leaves_out_values_that_cannot_travel(void **state)
{
    rdp_kvs_t *kvs = *state;
    rdp_kvs_t *dst;
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_value_t v;

    put_u32(kvs, "job", 0, "before", PMIX_GLOBAL, 1);
    memset(&v, 0, sizeof(v));
    v.type     = PMIX_POINTER;
    v.data.ptr = &v;
    assert_int_equal(rdp_kvs_put(kvs, "job", 0, "local.ptr", PMIX_GLOBAL, &v),
                     PMIX_SUCCESS);
    put_u32(kvs, "job", 0, "after", PMIX_GLOBAL, 2);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 0, RDP_SCOPES_ALL, &buf),
                     PMIX_SUCCESS);
    assert_int_equal(buf.data[0], 2);
    assert_int_equal(rdp_kvs_create(&dst), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_kvs_unpack_rank(dst, "job", 0, &rb), PMIX_SUCCESS);
    assert_int_equal(rb.left, 0);
    assert_int_equal(peek_u32(dst, "job", 0, "before"), 1);
    assert_int_equal(peek_u32(dst, "job", 0, "after"), 2);
    assert_null(rdp_kvs_peek(dst, "job", 0, "local.ptr"));
    rdp_kvs_destroy(dst);
    rdp_buf_cleanup(&buf);
}

static void unpack_rank_reproduces_keys_scopes_and_order(void **state)
{
    rdp_kvs_t *kvs = *state;
    rdp_kvs_t *dst;
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    struct walk w1, w2;

    for (size_t i = 0; i < GEN_NTYPES; i++) {
        pmix_value_t v;
        char key[32];
        snprintf(key, sizeof(key), "t%zu", i);
        gen_value(&v, gen_all_types[i], (unsigned)i + 50, 0);
        assert_int_equal(
            rdp_kvs_put(kvs, "src", 3, key, (pmix_scope_t)(i % 4), &v),
            PMIX_SUCCESS);
        rdp_value_destruct(&v);
    }
    rdp_buf_init(&buf);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "src", 3, RDP_SCOPES_ALL, &buf),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_kvs_create(&dst), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_kvs_unpack_rank(dst, "dst", 8, &rb), PMIX_SUCCESS);
    assert_int_equal(rb.left, 0);
    assert_int_equal(rdp_kvs_count(dst, "dst", 8), GEN_NTYPES);

    memset(&w1, 0, sizeof(w1));
    memset(&w2, 0, sizeof(w2));
    rdp_kvs_for_each(kvs, "src", 3, record_key, &w1);
    rdp_kvs_for_each(dst, "dst", 8, record_key, &w2);
    assert_int_equal(w1.n, w2.n);
    for (size_t i = 0; i < w1.n && i < 64; i++) {
        assert_string_equal(w1.keys[i], w2.keys[i]);
        assert_int_equal(w1.scopes[i], w2.scopes[i]);
        assert_true(rdp_value_equal(rdp_kvs_peek(kvs, "src", 3, w1.keys[i]),
                                    rdp_kvs_peek(dst, "dst", 8, w2.keys[i])));
    }
    rdp_kvs_destroy(dst);
    rdp_buf_cleanup(&buf);
}

static void unpack_rank_of_zero_keys_marks_the_rank_present(void **state)
{
    rdp_kvs_t *kvs              = *state;
    static const uint8_t zero[] = {0, 0, 0, 0};
    rdp_rbuf_t rb;

    rdp_rbuf_init(&rb, zero, sizeof(zero));
    assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 12, &rb), PMIX_SUCCESS);
    assert_true(rdp_kvs_has_rank(kvs, "job", 12));
    assert_int_equal(rdp_kvs_count(kvs, "job", 12), 0);
}

static void
unpack_rank_stops_at_malformed_input_and_keeps_earlier_keys(void **state)
{
    rdp_kvs_t *kvs = *state;
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_value_t v;

    memset(&v, 0, sizeof(v));
    v.type        = PMIX_UINT32;
    v.data.uint32 = 5;
    rdp_buf_init(&buf);
    rdp_pack_u32(&buf, 3);
    rdp_pack_u8(&buf, PMIX_GLOBAL);
    rdp_pack_string(&buf, "good");
    rdp_pack_value(&buf, &v);
    rdp_pack_u8(&buf, PMIX_GLOBAL);
    rdp_pack_string(&buf, "bad");
    rdp_pack_u16(&buf, 29); /* no such type */
    rdp_pack_u64(&buf, 0);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 1, &rb),
                     PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_int_equal(peek_u32(kvs, "job", 1, "good"), 5);
    assert_null(rdp_kvs_peek(kvs, "job", 1, "bad"));

    /* a key that is too long */
    {
        char longkey[PMIX_MAX_KEYLEN + 2];
        memset(longkey, 'x', sizeof(longkey));
        longkey[sizeof(longkey) - 1] = '\0';
        buf.size                     = 0;
        rdp_pack_u32(&buf, 1);
        rdp_pack_u8(&buf, PMIX_GLOBAL);
        rdp_pack_string(&buf, longkey);
        rdp_pack_value(&buf, &v);
        rdp_rbuf_init(&rb, buf.data, buf.size);
        assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 2, &rb),
                         PMIX_ERR_UNPACK_FAILURE);
    }
    /* an empty key */
    buf.size = 0;
    rdp_pack_u32(&buf, 1);
    rdp_pack_u8(&buf, PMIX_GLOBAL);
    rdp_pack_string(&buf, "");
    rdp_pack_value(&buf, &v);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 3, &rb),
                     PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&buf);
}

static void unpack_rank_rejects_counts_the_buffer_cannot_hold(void **state)
{
    rdp_kvs_t *kvs              = *state;
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    rdp_rbuf_t rb;

    rdp_rbuf_init(&rb, huge, sizeof(huge));
    assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 0, &rb),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_false(rdp_kvs_has_rank(kvs, "job", 0));
    rdp_rbuf_init(&rb, huge, 2);
    assert_int_equal(rdp_kvs_unpack_rank(kvs, "job", 0, &rb),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

static void every_truncation_of_a_rank_blob_fails_cleanly(void **state)
{
    rdp_kvs_t *kvs = *state;
    rdp_buf_t buf;

    for (int i = 0; i < 6; i++) {
        pmix_value_t v;
        char key[16];
        snprintf(key, sizeof(key), "k%d", i);
        gen_value(&v, gen_all_types[(i * 7) % GEN_NTYPES], (unsigned)i, 0);
        assert_int_equal(rdp_kvs_put(kvs, "src", 0, key, PMIX_GLOBAL, &v),
                         PMIX_SUCCESS);
        rdp_value_destruct(&v);
    }
    rdp_buf_init(&buf);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "src", 0, RDP_SCOPES_ALL, &buf),
                     PMIX_SUCCESS);
    for (size_t len = 0; len < buf.size; len++) {
        uint8_t *copy = malloc(len + 1);
        rdp_kvs_t *dst;
        rdp_rbuf_t rb;

        memcpy(copy, buf.data, len);
        assert_int_equal(rdp_kvs_create(&dst), PMIX_SUCCESS);
        rdp_rbuf_init(&rb, copy, len);
        assert_int_not_equal(rdp_kvs_unpack_rank(dst, "dst", 0, &rb),
                             PMIX_SUCCESS);
        assert_true(rdp_kvs_count(dst, "dst", 0) < 6);
        rdp_kvs_destroy(dst);
        free(copy);
    }
    rdp_buf_cleanup(&buf);
}

static void remove_rank_and_remove_nspace_drop_their_data(void **state)
{
    rdp_kvs_t *kvs = *state;

    put_u32(kvs, "job", 0, "a", PMIX_LOCAL, 1);
    put_u32(kvs, "job", 1, "a", PMIX_LOCAL, 1);
    put_u32(kvs, "job", PMIX_RANK_WILDCARD, "size", PMIX_LOCAL, 2);
    put_u32(kvs, "other", 0, "a", PMIX_LOCAL, 1);

    rdp_kvs_remove_rank(kvs, "job", 0);
    assert_false(rdp_kvs_has_rank(kvs, "job", 0));
    assert_null(rdp_kvs_peek(kvs, "job", 0, "a"));
    assert_true(rdp_kvs_has_rank(kvs, "job", 1));
    assert_true(rdp_kvs_has_nspace(kvs, "job"));
    rdp_kvs_remove_rank(kvs, "job", 0);   /* twice is harmless */
    rdp_kvs_remove_rank(kvs, "nojob", 0); /* absent is harmless */

    rdp_kvs_remove_nspace(kvs, "job");
    assert_false(rdp_kvs_has_nspace(kvs, "job"));
    assert_false(rdp_kvs_has_rank(kvs, "job", 1));
    assert_null(rdp_kvs_peek(kvs, "job", PMIX_RANK_WILDCARD, "size"));
    assert_int_equal(peek_u32(kvs, "other", 0, "a"), 1);
    rdp_kvs_remove_nspace(kvs, "job");
    rdp_kvs_remove_nspace(kvs, NULL);
    rdp_kvs_remove_rank(NULL, "job", 0);
    rdp_kvs_destroy(NULL);
}

static void many_ranks_and_keys_are_all_found(void **state)
{
    rdp_kvs_t *kvs = *state;
    char key[16];

    for (uint32_t r = 0; r < 4096; r++) {
        for (int k = 0; k < 8; k++) {
            snprintf(key, sizeof(key), "key%d", k);
            put_u32(kvs, "big", r, key, PMIX_GLOBAL, r * 8 + (uint32_t)k);
        }
    }
    for (uint32_t r = 0; r < 4096; r += 7) {
        for (int k = 0; k < 8; k++) {
            snprintf(key, sizeof(key), "key%d", k);
            assert_int_equal(peek_u32(kvs, "big", r, key), r * 8 + (uint32_t)k);
        }
        assert_int_equal(rdp_kvs_count(kvs, "big", r), 8);
    }
}

#define KT(_f) cmocka_unit_test_setup_teardown(_f, setup_kvs, teardown_kvs)


/* ---- packed ranks (rdp_kvs_put_packed) ---- */

typedef struct {
    rdp_kvs_backing_t base;
    int released;
} test_backing_t;

static void test_backing_release(rdp_kvs_backing_t *bk)
{
    ((test_backing_t *)bk)->released++;
}

static void backing_init(test_backing_t *tb)
{
    memset(tb, 0, sizeof(*tb));
    tb->base.refs    = 1; /* the test's own */
    tb->base.release = test_backing_release;
}

/* The kv list of keys[0..n) = base + i (scopes alternating LOCAL and
 * REMOTE), as rdp_kvs_pack_rank writes it. */
static void packed_list(rdp_buf_t *buf, const char *const *keys, size_t n,
                        uint32_t base)
{
    rdp_kvs_t *src = NULL;

    assert_int_equal(rdp_kvs_create(&src), PMIX_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        put_u32(src, "src", 0, keys[i], (i % 2) ? PMIX_REMOTE : PMIX_LOCAL,
                base + (uint32_t)i);
    }
    rdp_buf_init(buf);
    assert_int_equal(rdp_kvs_pack_rank(src, "src", 0, RDP_SCOPES_ALL, buf),
                     PMIX_SUCCESS);
    rdp_kvs_destroy(src);
}

static void put_packed_ok(rdp_kvs_t *kvs, pmix_rank_t rank,
                          const rdp_buf_t *list, test_backing_t *tb)
{
    assert_int_equal(
        rdp_kvs_put_packed(kvs, "job", rank, list->data, list->size, &tb->base),
        PMIX_SUCCESS);
}

static void packed_rank_stays_packed_until_read(void **state)
{
    static const char *const keys[] = {"a", "b", "c"};
    rdp_kvs_t *kvs                  = *state;
    test_backing_t tb;
    rdp_buf_t list, out;
    struct walk w;

    packed_list(&list, keys, 3, 100);
    backing_init(&tb);
    put_packed_ok(kvs, 4, &list, &tb);
    assert_int_equal(tb.base.refs, 2);
    assert_true(rdp_kvs_has_rank(kvs, "job", 4));
    assert_int_equal(rdp_kvs_count(kvs, "job", 4), 3);
    /* all scopes: the bytes as they are, still packed */
    rdp_buf_init(&out);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 4, RDP_SCOPES_ALL, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.size, list.size);
    assert_memory_equal(out.data, list.data, list.size);
    assert_int_equal(tb.base.refs, 2);
    /* a read unpacks it and lets the backing go */
    assert_int_equal(peek_u32(kvs, "job", 4, "b"), 101);
    assert_int_equal(tb.base.refs, 1);
    /* as they were packed: scopes, and the keys in their order */
    memset(&w, 0, sizeof(w));
    rdp_kvs_for_each(kvs, "job", 4, record_key, &w);
    assert_string_equal(w.keys[0], "a");
    assert_int_equal(w.scopes[1], PMIX_REMOTE);
    assert_string_equal(w.keys[2], "c");
    assert_int_equal(w.n, 3);
    rdp_buf_cleanup(&out);
    rdp_buf_cleanup(&list);
    assert_int_equal(tb.released, 0);
}

static void packed_rank_masked_pack_filters_scopes(void **state)
{
    static const char *const keys[] = {"l0", "r1", "l2"};
    rdp_kvs_t *kvs                  = *state;
    test_backing_t tb;
    rdp_buf_t list, out;
    rdp_rbuf_t rb;
    uint32_t n;

    packed_list(&list, keys, 3, 0);
    backing_init(&tb);
    put_packed_ok(kvs, 1, &list, &tb);
    rdp_buf_init(&out);
    assert_int_equal(rdp_kvs_pack_rank(kvs, "job", 1, RDP_SCOPES_REMOTE, &out),
                     PMIX_SUCCESS);
    rdp_rbuf_init(&rb, out.data, out.size);
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    assert_int_equal(n, 1); /* r1 only */
    assert_int_equal(tb.base.refs, 1);
    rdp_buf_cleanup(&out);
    rdp_buf_cleanup(&list);
}

static void packed_list_replaces_or_merges(void **state)
{
    static const char *const two[]   = {"a", "b"};
    static const char *const three[] = {"a", "b", "c"};
    static const char *const one[]   = {"a"};
    rdp_kvs_t *kvs                   = *state;
    test_backing_t t2, t3, t1, tu;
    rdp_buf_t l2, l3, l1;

    packed_list(&l2, two, 2, 0);
    packed_list(&l3, three, 3, 10);
    packed_list(&l1, one, 1, 20);
    backing_init(&t2);
    backing_init(&t3);
    backing_init(&t1);
    backing_init(&tu);
    put_packed_ok(kvs, 0, &l2, &t2);
    /* more keys: replaces the older list unread */
    put_packed_ok(kvs, 0, &l3, &t3);
    assert_int_equal(t2.base.refs, 1);
    assert_int_equal(t3.base.refs, 2);
    /* fewer keys: merged now, no key lost, nothing of it kept */
    put_packed_ok(kvs, 0, &l1, &t1);
    assert_int_equal(t1.base.refs, 1);
    assert_int_equal(t3.base.refs, 1);
    assert_int_equal(peek_u32(kvs, "job", 0, "a"), 20);
    assert_int_equal(peek_u32(kvs, "job", 0, "c"), 12);
    /* unpacked keys there: merged as well */
    put_u32(kvs, "job", 5, "z", PMIX_GLOBAL, 7);
    put_packed_ok(kvs, 5, &l2, &tu);
    assert_int_equal(tu.base.refs, 1);
    assert_int_equal(peek_u32(kvs, "job", 5, "z"), 7);
    assert_int_equal(peek_u32(kvs, "job", 5, "b"), 1);
    rdp_buf_cleanup(&l1);
    rdp_buf_cleanup(&l2);
    rdp_buf_cleanup(&l3);
}

static void packed_rank_released_by_remove_and_destroy(void **state)
{
    static const char *const keys[] = {"a"};
    rdp_kvs_t *kvs                  = *state;
    rdp_kvs_t *other                = NULL;
    test_backing_t tb;
    rdp_buf_t list;

    packed_list(&list, keys, 1, 0);
    backing_init(&tb);
    put_packed_ok(kvs, 0, &list, &tb);
    put_packed_ok(kvs, 1, &list, &tb);
    assert_int_equal(tb.base.refs, 3);
    rdp_kvs_remove_rank(kvs, "job", 0);
    assert_int_equal(tb.base.refs, 2);
    rdp_kvs_remove_nspace(kvs, "job");
    assert_int_equal(tb.base.refs, 1);
    assert_int_equal(rdp_kvs_create(&other), PMIX_SUCCESS);
    put_packed_ok(other, 0, &list, &tb);
    rdp_kvs_backing_unref(&tb.base); /* the test's own */
    assert_int_equal(tb.released, 0);
    rdp_kvs_destroy(other);
    assert_int_equal(tb.released, 1);
    rdp_buf_cleanup(&list);
}

static void malformed_packed_rank_keeps_what_it_read(void **state)
{
    static const char *const keys[] = {"a", "b"};
    rdp_kvs_t *kvs                  = *state;
    test_backing_t tb;
    rdp_buf_t list;

    packed_list(&list, keys, 2, 0);
    backing_init(&tb);
    /* cut inside the second value: only "a" can be read */
    assert_int_equal(
        rdp_kvs_put_packed(kvs, "job", 0, list.data, list.size - 2, &tb.base),
        PMIX_SUCCESS);
    assert_null(rdp_kvs_peek(kvs, "job", 0, "b"));
    assert_int_equal(peek_u32(kvs, "job", 0, "a"), 0);
    assert_int_equal(tb.base.refs, 1);
    /* a count the bytes cannot hold is refused at once */
    assert_int_not_equal(
        rdp_kvs_put_packed(kvs, "job", 1, list.data, 4, &tb.base),
        PMIX_SUCCESS);
    assert_false(rdp_kvs_has_rank(kvs, "job", 1));
    rdp_buf_cleanup(&list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        KT(put_stores_a_deep_copy),
        KT(values_of_every_type_can_be_stored),
        KT(put_replaces_a_key_and_keeps_its_place),
        KT(for_each_visits_keys_in_insertion_order),
        KT(a_non_zero_return_stops_the_walk),
        KT(for_each_rank_visits_every_rank_including_wildcard),
        KT(touch_rank_marks_a_rank_that_has_no_keys),
        KT(absent_keys_ranks_and_nspaces_peek_as_null),
        KT(put_take_steals_the_value_and_leaves_it_undef),
        KT(bad_arguments_are_rejected_without_side_effects),
        KT(pack_rank_writes_only_the_requested_scopes),
        KT(pack_rank_leaves_out_values_that_cannot_travel),
        KT(unpack_rank_reproduces_keys_scopes_and_order),
        KT(unpack_rank_of_zero_keys_marks_the_rank_present),
        KT(unpack_rank_stops_at_malformed_input_and_keeps_earlier_keys),
        KT(unpack_rank_rejects_counts_the_buffer_cannot_hold),
        KT(every_truncation_of_a_rank_blob_fails_cleanly),
        KT(remove_rank_and_remove_nspace_drop_their_data),
        KT(many_ranks_and_keys_are_all_found),
        KT(packed_rank_stays_packed_until_read),
        KT(packed_rank_masked_pack_filters_scopes),
        KT(packed_list_replaces_or_merges),
        KT(packed_rank_released_by_remove_and_destroy),
        KT(malformed_packed_rank_keeps_what_it_read),
    };

    return cmocka_run_group_tests_name("kvs", tests, NULL, NULL);
}
