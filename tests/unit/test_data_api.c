/* test_data_api.c - unit tests of the Standard's data buffer API
 * (core/wire/data_api.c) */
#include "config.h"
#include "core/util/value.h"

#include <pmix.h>

#include "wire_testgen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- helpers ---- */

static void pack_i32(pmix_data_buffer_t *b, int32_t v)
{
    assert_int_equal(PMIx_Data_pack(NULL, b, &v, 1, PMIX_INT32), PMIX_SUCCESS);
}

static int32_t unpack_i32(pmix_data_buffer_t *b)
{
    int32_t v = 0, n = 1;

    assert_int_equal(PMIx_Data_unpack(NULL, b, &v, &n, PMIX_INT32),
                     PMIX_SUCCESS);
    assert_int_equal(n, 1);
    return v;
}

static void pack_str(pmix_data_buffer_t *b, const char *s)
{
    assert_int_equal(PMIx_Data_pack(NULL, b, &s, 1, PMIX_STRING), PMIX_SUCCESS);
}

static void assert_next_str(pmix_data_buffer_t *b, const char *want)
{
    char *s   = NULL;
    int32_t n = 1;

    assert_int_equal(PMIx_Data_unpack(NULL, b, &s, &n, PMIX_STRING),
                     PMIX_SUCCESS);
    assert_int_equal(n, 1);
    assert_string_equal(s, want);
    free(s);
}

static void assert_at_end(pmix_data_buffer_t *b)
{
    int32_t v = 0, n = 1;

    assert_int_equal(PMIx_Data_unpack(NULL, b, &v, &n, PMIX_INT32),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

/* deep equality of @a n elements of @a type */
static bool elems_equal(pmix_data_type_t type, void *a, void *b, size_t n)
{
    pmix_data_array_t da = {.type = type, .size = n, .array = a};
    pmix_data_array_t db = {.type = type, .size = n, .array = b};
    pmix_value_t va      = {.type = PMIX_DATA_ARRAY};
    pmix_value_t vb      = {.type = PMIX_DATA_ARRAY};

    va.data.darray = &da;
    vb.data.darray = &db;
    return rdp_value_equal(&va, &vb);
}

/* ---- round trips ---- */

static void every_type_round_trips_through_a_data_buffer(void **state)
{
    for (size_t i = 0; i < GEN_NTYPES; i++) {
        pmix_data_type_t t = gen_all_types[i];
        size_t es          = rdpmix_darray_elem_size(t);
        pmix_data_buffer_t buf;
        void *in  = calloc(3, es);
        void *out = calloc(5, es);
        int32_t n = 5;

        assert_non_null(in);
        assert_non_null(out);
        for (size_t k = 0; k < 3; k++) {
            gen_elem(t, (char *)in + k * es, (unsigned)(i * 31 + k), 2);
        }
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        pack_i32(&buf, -7);
        assert_int_equal(PMIx_Data_pack(NULL, &buf, in, 3, t), PMIX_SUCCESS);
        pack_i32(&buf, 42);

        assert_int_equal(unpack_i32(&buf), -7);
        assert_int_equal(PMIx_Data_unpack(NULL, &buf, out, &n, t),
                         PMIX_SUCCESS);
        assert_int_equal(n, 3);
        if (!elems_equal(t, in, out, 3)) {
            fail_msg("type %s did not round-trip", PMIx_Data_type_string(t));
        }
        assert_int_equal(unpack_i32(&buf), 42);
        assert_at_end(&buf);

        rdp_elems_destruct(t, in, 3);
        rdp_elems_destruct(t, out, 3);
        free(in);
        free(out);
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
    }
}

static void values_and_infos_round_trip(void **state)
{
    pmix_data_buffer_t *buf;
    pmix_info_t info[2], oinfo[2];
    pmix_value_t val, oval;
    uint32_t u = 77;
    int32_t n  = 2;

    PMIX_DATA_BUFFER_CREATE(buf);
    assert_non_null(buf);
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &u, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "node7", PMIX_STRING);
    PMIX_VALUE_LOAD(&val, "hello", PMIX_STRING);
    assert_int_equal(PMIx_Data_pack(NULL, buf, info, 2, PMIX_INFO),
                     PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, buf, &val, 1, PMIX_VALUE),
                     PMIX_SUCCESS);

    assert_int_equal(PMIx_Data_unpack(NULL, buf, oinfo, &n, PMIX_INFO),
                     PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(PMIX_CHECK_KEY(&oinfo[0], PMIX_JOB_SIZE));
    assert_int_equal(oinfo[0].value.data.uint32, 77);
    assert_string_equal(oinfo[1].value.data.string, "node7");
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, buf, &oval, &n, PMIX_VALUE),
                     PMIX_SUCCESS);
    assert_true(rdp_value_equal(&val, &oval));

    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_DESTRUCT(&oinfo[0]);
    PMIX_INFO_DESTRUCT(&oinfo[1]);
    PMIX_VALUE_DESTRUCT(&val);
    PMIX_VALUE_DESTRUCT(&oval);
    PMIX_DATA_BUFFER_RELEASE(buf);
    assert_null(buf);
}

static void zero_values_pack_an_empty_item(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    int32_t v[2], n = 2;

    assert_int_equal(PMIx_Data_pack(NULL, &buf, NULL, 0, PMIX_INT32),
                     PMIX_SUCCESS);
    pack_i32(&buf, 5);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, v, &n, PMIX_INT32),
                     PMIX_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(unpack_i32(&buf), 5);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

/* ---- unpack counts and errors ---- */

static void unpack_returns_at_most_max_num_values(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    int32_t in[5]          = {1, 2, 3, 4, 5};
    int32_t out[5]         = {0};
    const char *strs[3]    = {"a", "b", "c"};
    char *sout[2]          = {NULL, NULL};
    int32_t n              = 2;

    assert_int_equal(PMIx_Data_pack(NULL, &buf, in, 5, PMIX_INT32),
                     PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, strs, 3, PMIX_STRING),
                     PMIX_SUCCESS);
    pack_str(&buf, "after");

    /* only room for 2 of 5: the first two, and the rest of the item is
     * dropped so the next item is still readable */
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, out, &n, PMIX_INT32),
                     PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 0);

    /* the dropped strings are freed (ASan would see a leak) */
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, sout, &n, PMIX_STRING),
                     PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    assert_int_equal(n, 1);
    assert_string_equal(sout[0], "a");
    assert_null(sout[1]);
    free(sout[0]);

    /* more room than values: *max_num_values becomes the count */
    n = 5;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, sout, &n, PMIX_STRING),
                     PMIX_SUCCESS);
    assert_int_equal(n, 1);
    assert_string_equal(sout[0], "after");
    free(sout[0]);
    assert_at_end(&buf);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void unpack_of_another_type_is_a_mismatch(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    int64_t i64            = 0;
    char *s                = NULL;
    int32_t n              = 1;

    pack_i32(&buf, 9);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &i64, &n, PMIX_INT64),
                     PMIX_ERR_PACK_MISMATCH);
    assert_int_equal(n, 1);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &s, &n, PMIX_STRING),
                     PMIX_ERR_PACK_MISMATCH);
    assert_null(s);
    /* nothing was consumed */
    assert_int_equal(unpack_i32(&buf), 9);
    assert_at_end(&buf);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void unpack_past_the_end_fails_cleanly(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_data_buffer_t cut = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_byte_object_t bo;
    const char *s = "a string long enough to cut";
    char *out     = NULL;
    int32_t n     = 1;

    /* empty buffer */
    assert_at_end(&buf);

    /* a truncated item: every prefix fails, without consuming anything */
    pack_str(&buf, s);
    for (size_t len = 1; len < buf.bytes_used; len++) {
        bo.bytes = malloc(len);
        bo.size  = len;
        memcpy(bo.bytes, buf.base_ptr, len);
        assert_int_equal(PMIx_Data_load(&cut, &bo), PMIX_SUCCESS);
        n = 1;
        assert_int_not_equal(
            PMIx_Data_unpack(NULL, &cut, &out, &n, PMIX_STRING), PMIX_SUCCESS);
        assert_null(out);
        assert_ptr_equal(cut.unpack_ptr, cut.base_ptr);
        PMIX_DATA_BUFFER_DESTRUCT(&cut);
    }
    assert_next_str(&buf, s);
    assert_at_end(&buf);
    assert_at_end(&buf);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void bad_arguments_are_refused(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    int32_t v = 1, n = 1;
    void *p = &v;

    assert_int_equal(PMIx_Data_pack(NULL, NULL, &v, 1, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &v, -1, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, NULL, 1, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &v, 1, 200),
                     PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &p, 1, PMIX_POINTER),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &v, 1, PMIX_UNDEF),
                     PMIX_ERR_BAD_PARAM);
    /* failed packs leave nothing behind */
    assert_int_equal(buf.bytes_used, 0);
    assert_at_end(&buf);

    pack_i32(&buf, 3);
    assert_int_equal(PMIx_Data_unpack(NULL, NULL, &v, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, NULL, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &v, NULL, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    n = 0;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &v, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    n = -4;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &v, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);

    /* a buffer whose fields were changed by hand */
    buf.pack_ptr += 1;
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &v, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &v, 1, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    buf.pack_ptr -= 1;
    buf.unpack_ptr = buf.pack_ptr + 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &v, &n, PMIX_INT32),
                     PMIX_ERR_BAD_PARAM);
    buf.unpack_ptr = buf.base_ptr;
    assert_int_equal(unpack_i32(&buf), 3);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);

    {
        pmix_data_buffer_t junk = PMIX_DATA_BUFFER_STATIC_INIT;
        junk.bytes_used         = 4;
        assert_int_equal(PMIx_Data_unpack(NULL, &junk, &v, &n, PMIX_INT32),
                         PMIX_ERR_BAD_PARAM);
    }
}

/* ---- payload moves ---- */

static void copy_payload_appends_the_unread_part(void **state)
{
    pmix_data_buffer_t src  = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_data_buffer_t dest = PMIX_DATA_BUFFER_STATIC_INIT;
    size_t used;

    pack_i32(&src, 1);
    pack_str(&src, "two");
    pack_i32(&src, 3);
    assert_int_equal(unpack_i32(&src), 1);
    used = src.bytes_used;

    pack_str(&dest, "zero");
    assert_int_equal(PMIx_Data_copy_payload(&dest, &src), PMIX_SUCCESS);
    /* src is untouched */
    assert_int_equal(src.bytes_used, used);
    assert_next_str(&src, "two");

    assert_next_str(&dest, "zero");
    assert_next_str(&dest, "two");
    assert_int_equal(unpack_i32(&dest), 3);
    assert_at_end(&dest);

    /* into itself: the unread part is duplicated */
    assert_int_equal(PMIx_Data_copy_payload(&src, &src), PMIX_SUCCESS);
    assert_int_equal(unpack_i32(&src), 3);
    assert_int_equal(unpack_i32(&src), 3);
    assert_at_end(&src);

    /* nothing unread: nothing happens */
    used = dest.bytes_used;
    assert_int_equal(PMIx_Data_copy_payload(&dest, &src), PMIX_SUCCESS);
    assert_int_equal(dest.bytes_used, used);
    assert_int_equal(PMIx_Data_copy_payload(NULL, &src), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_copy_payload(&dest, NULL), PMIX_ERR_BAD_PARAM);

    PMIX_DATA_BUFFER_DESTRUCT(&src);
    PMIX_DATA_BUFFER_DESTRUCT(&dest);
}

static void unload_then_load_moves_the_unread_bytes(void **state)
{
    pmix_data_buffer_t a = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_data_buffer_t b = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_byte_object_t bo;
    char *bytes;
    size_t size;

    pack_i32(&a, 10);
    pack_str(&a, "eleven");
    pack_i32(&a, 12);
    assert_int_equal(unpack_i32(&a), 10);

    assert_int_equal(PMIx_Data_unload(&a, &bo), PMIX_SUCCESS);
    assert_non_null(bo.bytes);
    assert_null(a.base_ptr); /* a is empty */
    assert_int_equal(a.bytes_used, 0);
    assert_at_end(&a);

    /* load replaces what b held and empties the byte object */
    pack_str(&b, "old");
    assert_int_equal(PMIx_Data_load(&b, &bo), PMIX_SUCCESS);
    assert_null(bo.bytes);
    assert_int_equal(bo.size, 0);
    assert_next_str(&b, "eleven");
    assert_int_equal(unpack_i32(&b), 12);
    assert_at_end(&b);

    /* the Standard's macros */
    pack_i32(&b, 13);
    PMIX_DATA_BUFFER_UNLOAD(&b, bytes, size);
    assert_non_null(bytes);
    assert_true(size > 0);
    PMIX_DATA_BUFFER_LOAD(&a, bytes, size);
    assert_int_equal(unpack_i32(&a), 13);

    /* an empty buffer unloads to nothing; an empty payload loads to an
     * empty buffer */
    assert_int_equal(PMIx_Data_unload(&a, &bo), PMIX_SUCCESS);
    assert_null(bo.bytes);
    assert_int_equal(bo.size, 0);
    assert_int_equal(PMIx_Data_load(&a, &bo), PMIX_SUCCESS);
    assert_at_end(&a);

    bo.bytes = NULL;
    bo.size  = 3;
    assert_int_equal(PMIx_Data_load(&a, &bo), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_load(NULL, &bo), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_unload(&a, NULL), PMIX_ERR_BAD_PARAM);
    PMIX_DATA_BUFFER_DESTRUCT(&a);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
}

static void embed_copies_and_leaves_the_payload(void **state)
{
    pmix_data_buffer_t a = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_data_buffer_t b = PMIX_DATA_BUFFER_STATIC_INIT;
    pmix_byte_object_t bo;

    pack_str(&a, "payload");
    pack_i32(&a, 99);
    bo.bytes = a.base_ptr;
    bo.size  = a.bytes_used;

    pack_i32(&b, -1); /* replaced */
    assert_int_equal(PMIx_Data_embed(&b, &bo), PMIX_SUCCESS);
    assert_ptr_equal(bo.bytes, a.base_ptr);
    assert_ptr_not_equal(b.base_ptr, a.base_ptr);
    assert_next_str(&b, "payload");
    assert_int_equal(unpack_i32(&b), 99);
    assert_at_end(&b);
    /* the source is still whole */
    assert_next_str(&a, "payload");

    bo.bytes = NULL;
    bo.size  = 0;
    assert_int_equal(PMIx_Data_embed(&b, &bo), PMIX_SUCCESS);
    assert_at_end(&b);
    bo.size = 1;
    assert_int_equal(PMIx_Data_embed(&b, &bo), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_embed(NULL, &bo), PMIX_ERR_BAD_PARAM);
    PMIX_DATA_BUFFER_DESTRUCT(&a);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
}

static void compression_is_never_applied(void **state)
{
    const uint8_t in[64] = {0};
    uint8_t *out         = NULL;
    size_t nout          = 0;

    assert_false(PMIx_Data_compress(in, sizeof(in), &out, &nout));
    assert_null(out);
    assert_false(PMIx_Data_decompress(in, sizeof(in), &out, &nout));
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_round_trips_through_a_data_buffer),
        cmocka_unit_test(values_and_infos_round_trip),
        cmocka_unit_test(zero_values_pack_an_empty_item),
        cmocka_unit_test(unpack_returns_at_most_max_num_values),
        cmocka_unit_test(unpack_of_another_type_is_a_mismatch),
        cmocka_unit_test(unpack_past_the_end_fails_cleanly),
        cmocka_unit_test(bad_arguments_are_refused),
        cmocka_unit_test(copy_payload_appends_the_unread_part),
        cmocka_unit_test(unload_then_load_moves_the_unread_bytes),
        cmocka_unit_test(embed_copies_and_leaves_the_payload),
        cmocka_unit_test(compression_is_never_applied),
    };

    return cmocka_run_group_tests_name("data_api", tests, NULL, NULL);
}
