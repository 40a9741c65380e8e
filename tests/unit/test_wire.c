/* test_wire.c - unit tests of the bounded wire encoding (core/wire) */
#include "config.h"
#include "core/wire/wire.h"
#include "core/kvs/kvs.h"
#include "core/util/alloc.h"
#include "core/util/value.h"

#include "wire_testgen.h"

#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- helpers ---- */

/* A heap copy of exactly @a len bytes, so that ASan sees any over-read. */
static uint8_t *exact_copy(const void *data, size_t len)
{
    uint8_t *p = malloc(len != 0 ? len : 1);

    assert_non_null(p);
    if (len != 0) {
        memcpy(p, data, len);
    }
    return p;
}

static void pack_value_ok(const pmix_value_t *v, rdp_buf_t *buf)
{
    rdp_buf_init(buf);
    assert_int_equal(rdp_pack_value(buf, v), PMIX_SUCCESS);
}

/* pack @a v, unpack it, pack the result again: the bytes must match and
 * the unpack must consume exactly what was packed */
static void assert_value_round_trips(const pmix_value_t *v)
{
    rdp_buf_t b1, b2;
    rdp_rbuf_t rb;
    pmix_value_t out;
    uint8_t *copy;

    pack_value_ok(v, &b1);
    copy = exact_copy(b1.data, b1.size);
    rdp_rbuf_init(&rb, copy, b1.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_int_equal(rb.left, 0);
    assert_int_equal(out.type, v->type);
    pack_value_ok(&out, &b2);
    assert_int_equal(b1.size, b2.size);
    assert_memory_equal(b1.data, b2.data, b1.size);
    rdp_value_destruct(&out);
    rdp_buf_cleanup(&b1);
    rdp_buf_cleanup(&b2);
    free(copy);
}

/* ---- scalars, strings, bytes ---- */

static void integers_are_packed_little_endian(void **state)
{
    static const uint8_t want[] = {0xab, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12,
                                   0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02,
                                   0x01, 0xfe, 0xff, 0xff, 0xff};
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_u8(&buf, 0xab), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u16(&buf, 0x1234), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&buf, 0x12345678), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u64(&buf, 0x0102030405060708ull), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_i32(&buf, -2), PMIX_SUCCESS);
    assert_int_equal(buf.size, sizeof(want));
    assert_memory_equal(buf.data, want, sizeof(want));

    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_u8(&rb, &u8), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u16(&rb, &u16), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u32(&rb, &u32), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_u64(&rb, &u64), PMIX_SUCCESS);
    assert_int_equal(rdp_unpack_i32(&rb, &i32), PMIX_SUCCESS);
    assert_int_equal(u8, 0xab);
    assert_int_equal(u16, 0x1234);
    assert_int_equal(u32, 0x12345678);
    assert_true(u64 == 0x0102030405060708ull);
    assert_int_equal(i32, -2);
    assert_int_equal(rb.left, 0);
    assert_int_equal(rdp_unpack_u8(&rb, &u8),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    rdp_buf_cleanup(&buf);
}

static void short_reads_of_integers_fail_and_leave_the_cursor(void **state)
{
    static const uint8_t three[] = {1, 2, 3};
    rdp_rbuf_t rb;
    uint32_t u32 = 77;
    uint64_t u64 = 77;

    rdp_rbuf_init(&rb, three, sizeof(three));
    assert_int_equal(rdp_unpack_u32(&rb, &u32),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_int_equal(rdp_unpack_u64(&rb, &u64),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_int_equal(u32, 77);
    assert_true(u64 == 77);
    assert_ptr_equal(rb.ptr, three);
    assert_int_equal(rb.left, 3);
}

static void strings_round_trip_and_null_stays_null(void **state)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    char *a = NULL, *b = (char *)"x", *c = NULL;
    const char *view;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_string(&buf, "hello"), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, NULL), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, ""), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, "view"), PMIX_SUCCESS);
    /* u32 length-with-NUL, then the bytes */
    assert_int_equal(buf.data[0], 6);
    assert_memory_equal(buf.data + 4, "hello", 6);

    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_string(&rb, &a), PMIX_SUCCESS);
    assert_string_equal(a, "hello");
    assert_int_equal(rdp_unpack_string(&rb, &b), PMIX_SUCCESS);
    assert_null(b);
    assert_int_equal(rdp_unpack_string(&rb, &c), PMIX_SUCCESS);
    assert_string_equal(c, "");
    assert_int_equal(rdp_unpack_string_view(&rb, &view), PMIX_SUCCESS);
    assert_string_equal(view, "view");
    assert_true((const uint8_t *)view > buf.data
                && (const uint8_t *)view < buf.data + buf.size);
    assert_int_equal(rb.left, 0);
    free(a);
    free(c);
    rdp_buf_cleanup(&buf);
}

static void a_string_without_its_nul_fails_to_unpack(void **state)
{
    static const uint8_t msg[] = {3, 0, 0, 0, 'a', 'b', 'c'};
    rdp_rbuf_t rb;
    char *s = (char *)"untouched";

    rdp_rbuf_init(&rb, msg, sizeof(msg));
    assert_int_equal(rdp_unpack_string(&rb, &s), PMIX_ERR_UNPACK_FAILURE);
    assert_string_equal(s, "untouched");
    assert_int_equal(rb.left, sizeof(msg));
}

static void a_string_with_an_inner_nul_fails_to_unpack(void **state)
{
    static const uint8_t msg[] = {4, 0, 0, 0, 'a', 0, 'c', 0};
    rdp_rbuf_t rb;
    const char *v;

    rdp_rbuf_init(&rb, msg, sizeof(msg));
    assert_int_equal(rdp_unpack_string_view(&rb, &v), PMIX_ERR_UNPACK_FAILURE);
}

static void a_string_longer_than_the_buffer_fails_to_unpack(void **state)
{
    static const uint8_t msg[] = {0xff, 0xff, 0xff, 0xff, 'a', 0};
    rdp_rbuf_t rb;
    char *s = NULL;

    rdp_rbuf_init(&rb, msg, sizeof(msg));
    assert_int_equal(rdp_unpack_string(&rb, &s),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_null(s);
}

static void string_into_rejects_strings_longer_than_the_array(void **state)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    char small[4];

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_string(&buf, "abc"), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, "abcd"), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_string_into(&rb, small, sizeof(small)),
                     PMIX_SUCCESS);
    assert_string_equal(small, "abc");
    assert_int_equal(rdp_unpack_string_into(&rb, small, sizeof(small)),
                     PMIX_ERR_UNPACK_FAILURE);
    assert_string_equal(small, "abc");
    rdp_buf_cleanup(&buf);
}

static void bytes_round_trip_copied_and_as_a_view(void **state)
{
    static const char data[] = "\x00\x01\x02zzz";
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    void *copy;
    const void *view;
    size_t len;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_bytes(&buf, data, 6), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_bytes(&buf, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_bytes(&buf, data, 6), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_bytes(&buf, NULL, 3), PMIX_ERR_BAD_PARAM);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_bytes(&rb, &copy, &len), PMIX_SUCCESS);
    assert_int_equal(len, 6);
    assert_memory_equal(copy, data, 6);
    free(copy);
    assert_int_equal(rdp_unpack_bytes(&rb, &copy, &len), PMIX_SUCCESS);
    assert_null(copy);
    assert_int_equal(len, 0);
    assert_int_equal(rdp_unpack_bytes_view(&rb, &view, &len), PMIX_SUCCESS);
    assert_int_equal(len, 6);
    assert_memory_equal(view, data, 6);
    assert_int_equal(rb.left, 0);
    rdp_buf_cleanup(&buf);
}

static void a_64_kib_byte_object_round_trips(void **state)
{
    pmix_value_t v;
    rdp_buf_t buf;

    memset(&v, 0, sizeof(v));
    v.type          = PMIX_BYTE_OBJECT;
    v.data.bo.size  = 64 * 1024;
    v.data.bo.bytes = malloc(v.data.bo.size);
    for (size_t i = 0; i < v.data.bo.size; i++) {
        v.data.bo.bytes[i] = (char)(i * 7);
    }
    pack_value_ok(&v, &buf);
    /* u16 type, u64 length, the bytes: nothing else */
    assert_int_equal(buf.size, 2 + 8 + 64 * 1024);
    assert_memory_equal(buf.data + 10, v.data.bo.bytes, v.data.bo.size);
    rdp_buf_cleanup(&buf);
    assert_value_round_trips(&v);
    rdp_value_destruct(&v);
}

/* Whether every page of [p, p + size) is mapped; skips the test on a
 * kernel without MADV_POPULATE_WRITE (before 5.14). */
static bool all_pages_mapped(void *p, size_t size)
{
    long page          = sysconf(_SC_PAGESIZE);
    uintptr_t lo       = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t npages      = (size + ((uintptr_t)p - lo) + page - 1) / page;
    unsigned char *vec = calloc(npages, 1);
    size_t mapped      = 0;
    void *probe        = mmap(NULL, page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    assert_non_null(vec);
    assert_true(probe != MAP_FAILED);
    if (madvise(probe, page, MADV_POPULATE_WRITE) != 0) {
        munmap(probe, page);
        free(vec);
        skip();
    }
    munmap(probe, page);
    assert_int_equal(mincore((void *)lo, npages * page, vec), 0);
    for (size_t i = 0; i < npages; i++) {
        mapped += vec[i] & 1;
    }
    free(vec);
    return mapped == npages;
}

/* Values copied out to a caller (PMIx_Get) go into rdp_malloc_to_fill's
 * memory: a large block has its pages mapped before the copy writes it,
 * in one call rather than a fault per page.  1 MiB is above glibc's mmap
 * threshold, so the block is fresh and unmapped without the call. */
static void memory_to_fill_has_its_pages_mapped_before_the_copy(void **state)
{
    const size_t size = 1024 * 1024;
    uint8_t *p        = rdp_malloc_to_fill(size);

    (void)state;
    assert_non_null(p);
    assert_true(all_pages_mapped(p, size));
    free(p);
}

/* A pack buffer grown for a large write (a 64 KiB value packed for a
 * commit, a contribution reserved for its sections) has the pages of the
 * bytes to come mapped in one call, as rdp_malloc_to_fill's. */
static void a_buffer_grown_for_a_large_write_has_its_pages_mapped(void **state)
{
    const size_t size = 1024 * 1024;
    rdp_buf_t buf;

    (void)state;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_u32(&buf, 7), PMIX_SUCCESS);
    assert_int_equal(rdp_buf_reserve(&buf, size), PMIX_SUCCESS);
    assert_true(all_pages_mapped(buf.data + buf.size, size));
    rdp_buf_cleanup(&buf);
}

/* ---- the Standard's types ---- */

static void every_value_type_round_trips(void **state)
{
    for (size_t i = 0; i < GEN_NTYPES; i++) {
        for (unsigned seed = 1; seed <= 4; seed++) {
            pmix_value_t v;
            gen_value(&v, gen_all_types[i], seed * 101 + (unsigned)i, 0);
            assert_value_round_trips(&v);
            rdp_value_destruct(&v);
        }
    }
}

static void an_undef_value_round_trips_with_no_payload(void **state)
{
    pmix_value_t v;
    rdp_buf_t buf;

    memset(&v, 0, sizeof(v));
    v.type = PMIX_UNDEF;
    pack_value_ok(&v, &buf);
    assert_int_equal(buf.size, 2);
    rdp_buf_cleanup(&buf);
    assert_value_round_trips(&v);
}

static void scalar_values_keep_their_exact_contents(void **state)
{
    pmix_value_t in, out;
    rdp_buf_t buf;
    rdp_rbuf_t rb;

    memset(&in, 0, sizeof(in));
    in.type            = PMIX_TIMEVAL;
    in.data.tv.tv_sec  = 1700000000;
    in.data.tv.tv_usec = 123456;
    pack_value_ok(&in, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_int_equal(out.data.tv.tv_sec, 1700000000);
    assert_int_equal(out.data.tv.tv_usec, 123456);
    rdp_buf_cleanup(&buf);

    in.type      = PMIX_DOUBLE;
    in.data.dval = -0.125;
    pack_value_ok(&in, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_true(out.data.dval == -0.125);
    rdp_buf_cleanup(&buf);

    in.type      = PMIX_BOOL;
    in.data.flag = true;
    pack_value_ok(&in, &buf);
    assert_int_equal(buf.size, 3);
    assert_int_equal(buf.data[2], 1);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_true(out.data.flag);
    rdp_buf_cleanup(&buf);
}

static void data_arrays_of_every_element_type_round_trip(void **state)
{
    for (size_t i = 0; i < GEN_NTYPES; i++) {
        for (size_t n = 0; n <= 3; n++) {
            pmix_data_array_t *da  = calloc(1, sizeof(*da));
            pmix_data_array_t *out = NULL;
            rdp_buf_t b1, b2;
            rdp_rbuf_t rb;

            gen_darray(da, gen_all_types[i], n, (unsigned)(i * 10 + n), 0);
            rdp_buf_init(&b1);
            rdp_buf_init(&b2);
            assert_int_equal(rdp_pack_data_array(&b1, da), PMIX_SUCCESS);
            rdp_rbuf_init(&rb, b1.data, b1.size);
            assert_int_equal(rdp_unpack_data_array(&rb, &out), PMIX_SUCCESS);
            assert_int_equal(rb.left, 0);
            assert_int_equal(out->type, da->type);
            assert_int_equal(out->size, n);
            assert_int_equal(rdp_pack_data_array(&b2, out), PMIX_SUCCESS);
            assert_int_equal(b1.size, b2.size);
            assert_memory_equal(b1.data, b2.data, b1.size);
            rdp_data_array_free(out);
            rdp_data_array_free(da);
            rdp_buf_cleanup(&b1);
            rdp_buf_cleanup(&b2);
        }
    }
}

static void struct_fields_land_in_the_right_members(void **state)
{
    pmix_value_t in, out;
    pmix_proc_info_t *pi;
    rdp_buf_t buf;
    rdp_rbuf_t rb;

    gen_value(&in, PMIX_PROC_INFO, 5, 0);
    pack_value_ok(&in, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    pi = out.data.pinfo;
    assert_string_equal(pi->proc.nspace, "job5");
    assert_int_equal(pi->proc.rank, 15);
    assert_string_equal(pi->hostname, "node5");
    assert_null(pi->executable_name);
    assert_int_equal(pi->pid, 1005);
    assert_int_equal(pi->exit_code, -5);
    assert_int_equal(pi->state, 5);
    rdp_value_destruct(&out);
    rdp_value_destruct(&in);
    rdp_buf_cleanup(&buf);

    gen_value(&in, PMIX_ENVAR, 9, 0);
    pack_value_ok(&in, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_string_equal(out.data.envar.envar, "VAR9");
    assert_string_equal(out.data.envar.value, "val9");
    assert_int_equal(out.data.envar.separator, ':');
    rdp_value_destruct(&out);
    rdp_value_destruct(&in);
    rdp_buf_cleanup(&buf);
}

static void a_null_struct_pointer_in_a_value_round_trips_as_null(void **state)
{
    static const pmix_data_type_t types[] = {PMIX_PROC,        PMIX_DATA_ARRAY,
                                             PMIX_TOPO,        PMIX_PROC_CPUSET,
                                             PMIX_PROC_NSPACE, PMIX_COORD};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        pmix_value_t v, out;
        rdp_buf_t buf;
        rdp_rbuf_t rb;

        memset(&v, 0, sizeof(v));
        v.type = types[i];
        pack_value_ok(&v, &buf);
        rdp_rbuf_init(&rb, buf.data, buf.size);
        assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
        assert_int_equal(out.type, types[i]);
        assert_null(out.data.ptr);
        rdp_buf_cleanup(&buf);
    }
}

static void topology_and_cpuset_carry_only_their_source(void **state)
{
    pmix_topology_t topo = {.source   = (char *)"hwloc",
                            .topology = (void *)&topo};
    pmix_cpuset_t cpus   = {.source = (char *)"hwloc", .bitmap = (void *)&cpus};
    pmix_value_t v, out;
    rdp_buf_t buf;
    rdp_rbuf_t rb;

    memset(&v, 0, sizeof(v));
    v.type      = PMIX_TOPO;
    v.data.topo = &topo;
    pack_value_ok(&v, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_string_equal(out.data.topo->source, "hwloc");
    assert_null(out.data.topo->topology);
    rdp_value_destruct(&out);
    rdp_buf_cleanup(&buf);

    v.type        = PMIX_PROC_CPUSET;
    v.data.cpuset = &cpus;
    pack_value_ok(&v, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_string_equal(out.data.cpuset->source, "hwloc");
    assert_null(out.data.cpuset->bitmap);
    rdp_value_destruct(&out);
    rdp_buf_cleanup(&buf);
}

/* found by the fuzzer: an empty data buffer made a NULL + 0 pointer */
static void an_empty_data_buffer_round_trips(void **state)
{
    pmix_data_buffer_t empty;
    pmix_value_t v, out;
    rdp_buf_t buf;
    rdp_rbuf_t rb;

    memset(&empty, 0, sizeof(empty));
    memset(&v, 0, sizeof(v));
    v.type      = PMIX_DATA_BUFFER;
    v.data.dbuf = &empty;
    pack_value_ok(&v, &buf);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &out), PMIX_SUCCESS);
    assert_non_null(out.data.dbuf);
    assert_null(out.data.dbuf->base_ptr);
    assert_null(out.data.dbuf->pack_ptr);
    assert_int_equal(out.data.dbuf->bytes_used, 0);
    rdp_value_destruct(&out);
    rdp_buf_cleanup(&buf);
}

/* found by the fuzzer: a packed "persistent" flag made the receiver's
 * rdp_info_array_free leave the unpacked value behind */
static void the_persistent_flag_does_not_travel(void **state)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_info_t *info;
    size_t n;

    rdp_buf_init(&buf);
    rdp_pack_u64(&buf, 1);
    rdp_pack_string(&buf, "k");
    rdp_pack_u32(&buf, PMIX_INFO_PERSISTENT | PMIX_INFO_REQD);
    rdp_pack_u16(&buf, PMIX_STRING);
    rdp_pack_string(&buf, "owned by the receiver");
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_info_array(&rb, &info, &n), PMIX_SUCCESS);
    assert_int_equal(info[0].flags, PMIX_INFO_REQD);
    buf.size = 0;
    info[0].flags |= PMIX_INFO_PERSISTENT;
    assert_int_equal(rdp_pack_info(&buf, &info[0]), PMIX_SUCCESS);
    assert_int_equal(buf.data[6], PMIX_INFO_REQD);
    info[0].flags = PMIX_INFO_REQD;
    rdp_info_array_free(info, n); /* LSan checks the string is freed */
    rdp_buf_cleanup(&buf);
}

static void pointer_values_cannot_be_packed(void **state)
{
    pmix_value_t v;
    pmix_data_array_t da = {.type = PMIX_POINTER, .size = 0, .array = NULL};
    rdp_buf_t buf;

    memset(&v, 0, sizeof(v));
    v.type     = PMIX_POINTER;
    v.data.ptr = &v;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_u32(&buf, 7), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_value(&buf, &v), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(rdp_pack_data_array(&buf, &da), PMIX_ERR_NOT_SUPPORTED);
    /* a failed pack leaves the buffer as it was */
    assert_int_equal(buf.size, 4);
    rdp_buf_cleanup(&buf);
}

static void a_failed_pack_leaves_the_buffer_unchanged(void **state)
{
    pmix_info_t info[3];
    rdp_buf_t buf;

    memset(info, 0, sizeof(info));
    strcpy(info[0].key, "a");
    info[0].value.type        = PMIX_STRING;
    info[0].value.data.string = (char *)"fine";
    strcpy(info[1].key, "b");
    info[1].value.type = PMIX_UINT8;
    memset(info[2].key, 'k', sizeof(info[2].key)); /* no NUL */
    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_u8(&buf, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_info_array(&buf, info, 3), PMIX_ERR_BAD_PARAM);
    assert_int_equal(buf.size, 1);
    assert_int_equal(rdp_pack_info_array(&buf, info, 2), PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

static void
arrays_of_infos_procs_apps_queries_and_pdata_round_trip(void **state)
{
    pmix_info_t *info, *info2;
    pmix_proc_t procs[3], *procs2;
    pmix_app_t apps[2], *apps2;
    pmix_query_t q[2], *q2;
    pmix_pdata_t pd[2], *pd2;
    size_t ninfo, n;
    rdp_buf_t b1, b2;
    rdp_rbuf_t rb;

    gen_infos(&info, &ninfo, 5, 77, 0);
    memset(procs, 0, sizeof(procs));
    memset(apps, 0, sizeof(apps));
    memset(q, 0, sizeof(q));
    memset(pd, 0, sizeof(pd));
    for (int i = 0; i < 3; i++) {
        gen_elem(PMIX_PROC, &procs[i], (unsigned)i, 0);
    }
    for (int i = 0; i < 2; i++) {
        gen_elem(PMIX_APP, &apps[i], (unsigned)i, 0);
        gen_elem(PMIX_QUERY, &q[i], (unsigned)i, 0);
        gen_elem(PMIX_PDATA, &pd[i], (unsigned)i, 0);
    }
    rdp_buf_init(&b1);
    assert_int_equal(rdp_pack_info_array(&b1, info, ninfo), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_proc_array(&b1, procs, 3), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_app_array(&b1, apps, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_query_array(&b1, q, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_pdata_array(&b1, pd, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_info_array(&b1, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_proc(&b1, &procs[1]), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_info(&b1, &info[2]), PMIX_SUCCESS);

    rdp_rbuf_init(&rb, b1.data, b1.size);
    assert_int_equal(rdp_unpack_info_array(&rb, &info2, &n), PMIX_SUCCESS);
    assert_int_equal(n, 5);
    assert_string_equal(info2[3].key, info[3].key);
    assert_int_equal(rdp_unpack_proc_array(&rb, &procs2, &n), PMIX_SUCCESS);
    assert_int_equal(n, 3);
    assert_string_equal(procs2[2].nspace, "job2");
    assert_int_equal(procs2[2].rank, 6);
    assert_int_equal(rdp_unpack_app_array(&rb, &apps2, &n), PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_string_equal(apps2[1].argv[1], "arg2");
    assert_null(apps2[1].argv[2]);
    assert_int_equal(rdp_unpack_query_array(&rb, &q2, &n), PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(rdp_unpack_pdata_array(&rb, &pd2, &n), PMIX_SUCCESS);
    assert_int_equal(n, 2);

    rdp_buf_init(&b2);
    assert_int_equal(rdp_pack_info_array(&b2, info2, 5), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_proc_array(&b2, procs2, 3), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_app_array(&b2, apps2, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_query_array(&b2, q2, 2), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_pdata_array(&b2, pd2, 2), PMIX_SUCCESS);
    assert_memory_equal(b1.data, b2.data, b2.size);

    {
        pmix_info_t *none = (pmix_info_t *)&n;
        pmix_proc_t one;
        pmix_info_t single;
        assert_int_equal(rdp_unpack_info_array(&rb, &none, &n), PMIX_SUCCESS);
        assert_null(none);
        assert_int_equal(n, 0);
        assert_int_equal(rdp_unpack_proc(&rb, &one), PMIX_SUCCESS);
        assert_string_equal(one.nspace, "job1");
        assert_int_equal(rdp_unpack_info(&rb, &single), PMIX_SUCCESS);
        assert_string_equal(single.key, info[2].key);
        rdp_value_destruct(&single.value);
        assert_int_equal(rb.left, 0);
    }

    rdp_info_array_free(info, ninfo);
    rdp_info_array_free(info2, 5);
    free(procs2);
    {
        pmix_data_array_t *da;
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_APP, 2, apps2};
        rdp_data_array_free(da);
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_QUERY, 2, q2};
        rdp_data_array_free(da);
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_PDATA, 2, pd2};
        rdp_data_array_free(da);
        for (int i = 0; i < 2; i++) {
            pmix_data_array_t *one = calloc(1, sizeof(*one));
            void *copy             = malloc(sizeof(pmix_app_t));
            memcpy(copy, &apps[i], sizeof(pmix_app_t));
            *one = (pmix_data_array_t){PMIX_APP, 1, copy};
            rdp_data_array_free(one);
            one  = calloc(1, sizeof(*one));
            copy = malloc(sizeof(pmix_query_t));
            memcpy(copy, &q[i], sizeof(pmix_query_t));
            *one = (pmix_data_array_t){PMIX_QUERY, 1, copy};
            rdp_data_array_free(one);
            rdp_value_destruct(&pd[i].value);
        }
    }
    rdp_buf_cleanup(&b1);
    rdp_buf_cleanup(&b2);
}

/* An info whose value is a data array of infos, @a levels deep. */
static void make_nested_info(pmix_info_t *info, int levels)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "level%d", levels);
    if (levels == 0) {
        info->value.type        = PMIX_STRING;
        info->value.data.string = strdup("leaf");
        return;
    }
    info->value.type               = PMIX_DATA_ARRAY;
    info->value.data.darray        = calloc(1, sizeof(pmix_data_array_t));
    info->value.data.darray->type  = PMIX_INFO;
    info->value.data.darray->size  = 2;
    info->value.data.darray->array = calloc(2, sizeof(pmix_info_t));
    make_nested_info(&((pmix_info_t *)info->value.data.darray->array)[0],
                     levels - 1);
    make_nested_info(&((pmix_info_t *)info->value.data.darray->array)[1], 0);
}

static void deeply_nested_info_arrays_round_trip_up_to_the_limit(void **state)
{
    /* each level costs two: the value and its data array */
    int max_levels = RDP_WIRE_MAX_DEPTH / 2 - 1;
    pmix_info_t deep, too_deep, out;
    rdp_buf_t b1, b2;
    rdp_rbuf_t rb;

    make_nested_info(&deep, max_levels);
    rdp_buf_init(&b1);
    rdp_buf_init(&b2);
    assert_int_equal(rdp_pack_info(&b1, &deep), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, b1.data, b1.size);
    assert_int_equal(rdp_unpack_info(&rb, &out), PMIX_SUCCESS);
    assert_int_equal(rb.left, 0);
    assert_int_equal(rdp_pack_info(&b2, &out), PMIX_SUCCESS);
    assert_int_equal(b1.size, b2.size);
    assert_memory_equal(b1.data, b2.data, b1.size);
    rdp_value_destruct(&out.value);
    rdp_value_destruct(&deep.value);

    make_nested_info(&too_deep, max_levels + 1);
    b1.size = 0;
    assert_int_equal(rdp_pack_info(&b1, &too_deep), PMIX_ERR_PACK_FAILURE);
    assert_int_equal(b1.size, 0);
    rdp_value_destruct(&too_deep.value);
    rdp_buf_cleanup(&b1);
    rdp_buf_cleanup(&b2);
}

/* ---- malformed input ---- */

/* The message used for truncation: one info of every type, plus nested
 * arrays, apps and queries. */
static void build_complex_message(rdp_buf_t *buf)
{
    size_t n          = GEN_NTYPES + 2;
    pmix_info_t *info = calloc(n, sizeof(*info));

    for (size_t i = 0; i < GEN_NTYPES; i++) {
        snprintf(info[i].key, sizeof(info[i].key), "k%zu", i);
        gen_value(&info[i].value, gen_all_types[i], (unsigned)i + 3, 0);
    }
    make_nested_info(&info[GEN_NTYPES], 4);
    gen_elem(PMIX_INFO, &info[GEN_NTYPES + 1], 1234, 0);
    rdp_buf_init(buf);
    assert_int_equal(rdp_pack_info_array(buf, info, n), PMIX_SUCCESS);
    rdp_info_array_free(info, n);
}

static void every_truncation_of_a_complex_message_fails_cleanly(void **state)
{
    rdp_buf_t buf;
    pmix_info_t *sentinel = (pmix_info_t *)&buf;

    build_complex_message(&buf);
    for (size_t len = 0; len < buf.size; len++) {
        uint8_t *copy     = exact_copy(buf.data, len);
        pmix_info_t *info = sentinel;
        size_t ninfo      = 12345;
        rdp_rbuf_t rb;
        pmix_status_t st;

        rdp_rbuf_init(&rb, copy, len);
        st = rdp_unpack_info_array(&rb, &info, &ninfo);
        if (st != PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER) {
            fail_msg("prefix of %zu/%zu bytes: status %d", len, buf.size, st);
        }
        assert_ptr_equal(info, sentinel);
        assert_int_equal(ninfo, 12345);
        assert_ptr_equal(rb.ptr, copy);
        assert_int_equal(rb.left, len);
        free(copy);
    }
    {
        pmix_info_t *info;
        size_t ninfo;
        rdp_rbuf_t rb;
        rdp_rbuf_init(&rb, buf.data, buf.size);
        assert_int_equal(rdp_unpack_info_array(&rb, &info, &ninfo),
                         PMIX_SUCCESS);
        assert_int_equal(ninfo, GEN_NTYPES + 2);
        rdp_info_array_free(info, ninfo);
    }
    rdp_buf_cleanup(&buf);
}

static void every_truncation_of_a_nested_value_fails_cleanly(void **state)
{
    pmix_value_t v;
    rdp_buf_t buf;

    gen_value(&v, PMIX_DATA_ARRAY, 4, 0);
    rdp_value_destruct(&v);
    /* a data array of values of every type */
    memset(&v, 0, sizeof(v));
    v.type               = PMIX_DATA_ARRAY;
    v.data.darray        = calloc(1, sizeof(pmix_data_array_t));
    v.data.darray->type  = PMIX_VALUE;
    v.data.darray->size  = GEN_NTYPES;
    v.data.darray->array = calloc(GEN_NTYPES, sizeof(pmix_value_t));
    for (size_t i = 0; i < GEN_NTYPES; i++) {
        gen_value(&((pmix_value_t *)v.data.darray->array)[i], gen_all_types[i],
                  (unsigned)i, 1);
    }
    pack_value_ok(&v, &buf);
    for (size_t len = 0; len < buf.size; len++) {
        uint8_t *copy = exact_copy(buf.data, len);
        pmix_value_t out;
        rdp_rbuf_t rb;

        out.type = 0x7777;
        rdp_rbuf_init(&rb, copy, len);
        assert_int_equal(rdp_unpack_value(&rb, &out),
                         PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        assert_int_equal(out.type, 0x7777);
        assert_int_equal(rb.left, len);
        free(copy);
    }
    rdp_value_destruct(&v);
    rdp_buf_cleanup(&buf);
}

static void counts_larger_than_the_buffer_are_rejected(void **state)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_info_t *info;
    pmix_proc_t *procs;
    pmix_app_t *apps;
    pmix_data_array_t *da;
    pmix_value_t v;
    void *bytes;
    size_t n;

    /* info array claiming 2^64-1 entries */
    rdp_buf_init(&buf);
    rdp_pack_u64(&buf, UINT64_MAX);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_info_array(&rb, &info, &n),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* proc array claiming one more proc than could fit */
    buf.size = 0;
    rdp_pack_u64(&buf, 3);
    rdp_pack_string(&buf, "a");
    rdp_pack_u32(&buf, 1);
    rdp_pack_string(&buf, "b");
    rdp_pack_u32(&buf, 2);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_proc_array(&rb, &procs, &n),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* data array of u64 claiming more than the bytes hold */
    buf.size = 0;
    rdp_pack_u16(&buf, PMIX_UINT64);
    rdp_pack_u64(&buf, 2);
    rdp_pack_u64(&buf, 1);
    rdp_pack_u32(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_data_array(&rb, &da),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* huge data array of infos */
    buf.size = 0;
    rdp_pack_u16(&buf, PMIX_DATA_ARRAY);
    rdp_pack_u8(&buf, 1);
    rdp_pack_u16(&buf, PMIX_INFO);
    rdp_pack_u64(&buf, (uint64_t)1 << 60);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &v),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* byte object of 2^63 bytes */
    buf.size = 0;
    rdp_pack_u64(&buf, (uint64_t)1 << 63);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_bytes(&rb, &bytes, &n),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* app whose argv claims 2^32 strings */
    buf.size = 0;
    rdp_pack_u64(&buf, 1);
    rdp_pack_string(&buf, "cmd");
    rdp_pack_u64(&buf, (uint64_t)1 << 32);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_app_array(&rb, &apps, &n),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* coordinates claiming more dimensions than bytes */
    buf.size = 0;
    rdp_pack_u16(&buf, PMIX_COORD);
    rdp_pack_u8(&buf, 1);
    rdp_pack_u8(&buf, 1);
    rdp_pack_u64(&buf, 5);
    rdp_pack_u32(&buf, 1);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &v),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    rdp_buf_cleanup(&buf);
}

static void unknown_type_codes_are_rejected(void **state)
{
    static const uint16_t bad[] = {29, 44, 70, 75, 100, 499, 500, 0xffff};
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_value_t v;
    pmix_data_array_t *da;

    rdp_buf_init(&buf);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        buf.size = 0;
        rdp_pack_u16(&buf, bad[i]);
        rdp_pack_u64(&buf, 0);
        rdp_rbuf_init(&rb, buf.data, buf.size);
        assert_int_equal(rdp_unpack_value(&rb, &v), PMIX_ERR_UNKNOWN_DATA_TYPE);
        assert_int_equal(rb.left, buf.size);
        rdp_rbuf_init(&rb, buf.data, buf.size);
        assert_int_equal(rdp_unpack_data_array(&rb, &da),
                         PMIX_ERR_UNKNOWN_DATA_TYPE);
        memset(&v, 0, sizeof(v));
        v.type = bad[i];
        assert_int_equal(rdp_pack_value(&buf, &v), PMIX_ERR_UNKNOWN_DATA_TYPE);
    }
    /* known but not transportable */
    buf.size = 0;
    rdp_pack_u16(&buf, PMIX_POINTER);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &v), PMIX_ERR_NOT_SUPPORTED);
    /* a data array of PMIX_UNDEF may only be empty */
    buf.size = 0;
    rdp_pack_u16(&buf, PMIX_UNDEF);
    rdp_pack_u64(&buf, 1);
    rdp_pack_u64(&buf, 0);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_data_array(&rb, &da), PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&buf);
}

static void a_nesting_bomb_fails_without_exhausting_the_stack(void **state)
{
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_data_array_t *da = NULL;
    pmix_value_t v;

    /* 100000 data arrays, each holding one data array */
    rdp_buf_init(&buf);
    for (int i = 0; i < 100000; i++) {
        rdp_pack_u16(&buf, PMIX_DATA_ARRAY);
        rdp_pack_u64(&buf, 1);
    }
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_data_array(&rb, &da), PMIX_ERR_UNPACK_FAILURE);
    assert_null(da);

    /* value -> data array of values -> ... */
    buf.size = 0;
    for (int i = 0; i < 100000; i++) {
        rdp_pack_u16(&buf, PMIX_DATA_ARRAY);
        rdp_pack_u8(&buf, 1);
        rdp_pack_u16(&buf, PMIX_VALUE);
        rdp_pack_u64(&buf, 1);
    }
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &v), PMIX_ERR_UNPACK_FAILURE);

    /* app -> info -> value app -> ... */
    buf.size = 0;
    for (int i = 0; i < 20000; i++) {
        rdp_pack_u16(&buf, PMIX_APP);
        rdp_pack_u8(&buf, 1);
        rdp_pack_string(&buf, NULL);
        rdp_pack_u64(&buf, 0);
        rdp_pack_u64(&buf, 0);
        rdp_pack_string(&buf, NULL);
        rdp_pack_i32(&buf, 1);
        rdp_pack_u64(&buf, 1);
        rdp_pack_string(&buf, "k");
        rdp_pack_u32(&buf, 0);
    }
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_value(&rb, &v), PMIX_ERR_UNPACK_FAILURE);
    rdp_buf_cleanup(&buf);
}

static void keys_longer_than_pmix_max_keylen_are_rejected(void **state)
{
    char key[PMIX_MAX_KEYLEN + 2];
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_info_t info;

    rdp_buf_init(&buf);
    memset(key, 'k', sizeof(key));
    key[PMIX_MAX_KEYLEN] = '\0'; /* the longest legal key */
    rdp_pack_string(&buf, key);
    rdp_pack_u32(&buf, 0);
    rdp_pack_u16(&buf, PMIX_UNDEF);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_info(&rb, &info), PMIX_SUCCESS);
    assert_int_equal(strlen(info.key), PMIX_MAX_KEYLEN);

    buf.size                 = 0;
    key[PMIX_MAX_KEYLEN]     = 'k';
    key[PMIX_MAX_KEYLEN + 1] = '\0';
    rdp_pack_string(&buf, key);
    rdp_pack_u32(&buf, 0);
    rdp_pack_u16(&buf, PMIX_UNDEF);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_info(&rb, &info), PMIX_ERR_UNPACK_FAILURE);

    /* a key array with no NUL cannot be packed */
    memset(info.key, 'x', sizeof(info.key));
    info.value.type = PMIX_UNDEF;
    buf.size        = 0;
    assert_int_equal(rdp_pack_info(&buf, &info), PMIX_ERR_BAD_PARAM);
    assert_int_equal(buf.size, 0);
    rdp_buf_cleanup(&buf);
}

static void nspaces_longer_than_pmix_max_nslen_are_rejected(void **state)
{
    char ns[PMIX_MAX_NSLEN + 2];
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    pmix_proc_t proc;

    memset(ns, 'n', sizeof(ns));
    ns[PMIX_MAX_NSLEN + 1] = '\0';
    rdp_buf_init(&buf);
    rdp_pack_string(&buf, ns);
    rdp_pack_u32(&buf, 3);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_proc(&rb, &proc), PMIX_ERR_UNPACK_FAILURE);

    buf.size           = 0;
    ns[PMIX_MAX_NSLEN] = '\0';
    rdp_pack_string(&buf, ns);
    rdp_pack_u32(&buf, 3);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_proc(&rb, &proc), PMIX_SUCCESS);
    assert_int_equal(strlen(proc.nspace), PMIX_MAX_NSLEN);
    assert_int_equal(proc.rank, 3);
    rdp_buf_cleanup(&buf);
}

static void bool_bytes_other_than_zero_and_one_are_rejected(void **state)
{
    static const uint8_t msg[] = {PMIX_BOOL, 0, 2};
    rdp_rbuf_t rb;
    pmix_value_t v;

    rdp_rbuf_init(&rb, msg, sizeof(msg));
    assert_int_equal(rdp_unpack_value(&rb, &v), PMIX_ERR_UNPACK_FAILURE);
}

/* ---- framing and buffers ---- */

static void message_headers_round_trip(void **state)
{
    rdp_msg_hdr_t in = {RDP_MSG_MAGIC, RDP_MSG_VERSION, 8, 0xdeadbeef, 4096};
    rdp_msg_hdr_t out;
    uint8_t raw[RDP_MSG_HDR_LEN];

    rdp_msg_hdr_encode(&in, raw);
    assert_memory_equal(raw, "RDPX", 4);
    assert_int_equal(raw[4], RDP_MSG_VERSION);
    assert_int_equal(raw[6], 8);
    assert_int_equal(raw[8], 0xef);
    assert_int_equal(raw[13], 0x10);
    assert_int_equal(rdp_msg_hdr_decode(raw, &out), PMIX_SUCCESS);
    assert_int_equal(out.magic, in.magic);
    assert_int_equal(out.version, in.version);
    assert_int_equal(out.cmd, in.cmd);
    assert_int_equal(out.tag, in.tag);
    assert_int_equal(out.length, in.length);
}

static void headers_with_a_bad_magic_or_version_are_rejected(void **state)
{
    rdp_msg_hdr_t in = {RDP_MSG_MAGIC, RDP_MSG_VERSION, 1, 1, 0};
    rdp_msg_hdr_t out;
    uint8_t raw[RDP_MSG_HDR_LEN];

    memset(&out, 0x5a, sizeof(out));
    in.magic = 0x12345678;
    rdp_msg_hdr_encode(&in, raw);
    assert_int_equal(rdp_msg_hdr_decode(raw, &out), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(out.magic, 0x5a5a5a5a);
    in.magic   = RDP_MSG_MAGIC;
    in.version = RDP_MSG_VERSION + 1;
    rdp_msg_hdr_encode(&in, raw);
    assert_int_equal(rdp_msg_hdr_decode(raw, &out), PMIX_ERR_UNPACK_FAILURE);
}

static void the_pack_buffer_grows_geometrically(void **state)
{
    rdp_buf_t buf;
    size_t grows    = 0;
    size_t last_cap = 0;
    void *taken;
    size_t n;

    rdp_buf_init(&buf);
    for (int i = 0; i < 1000000; i++) {
        assert_int_equal(rdp_pack_u8(&buf, (uint8_t)i), PMIX_SUCCESS);
        if (buf.cap != last_cap) {
            grows++;
            last_cap = buf.cap;
        }
    }
    assert_true(grows <= 20);
    assert_true(buf.cap < 2 * buf.size);
    assert_int_equal(rdp_buf_reserve(&buf, 10), PMIX_SUCCESS);
    assert_true(buf.cap >= buf.size + 10);
    taken = rdp_buf_take(&buf, &n);
    assert_int_equal(n, 1000000);
    assert_int_equal(((uint8_t *)taken)[999999], (uint8_t)999999);
    assert_null(buf.data);
    assert_int_equal(buf.size, 0);
    assert_int_equal(buf.cap, 0);
    free(taken);
    assert_int_equal(rdp_buf_append(&buf, "abc", 3), PMIX_SUCCESS);
    assert_int_equal(buf.size, 3);
    rdp_buf_cleanup(&buf);
    rdp_buf_cleanup(NULL);
}

/* ---- seeded corpus of random and mutated buffers ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* Run @a len bytes through every unpacker; successes are freed. */
static void feed_unpackers(const uint8_t *data, size_t len, rdp_kvs_t *kvs)
{
    uint8_t *copy = exact_copy(data, len);
    rdp_rbuf_t rb;
    pmix_value_t v;
    pmix_info_t *info;
    pmix_data_array_t *da;
    pmix_app_t *apps;
    pmix_query_t *q;
    pmix_pdata_t *pd;
    rdp_msg_hdr_t hdr;
    size_t n;

    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_value(&rb, &v) == PMIX_SUCCESS) {
        rdp_value_destruct(&v);
    }
    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_info_array(&rb, &info, &n) == PMIX_SUCCESS) {
        rdp_info_array_free(info, n);
    }
    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_data_array(&rb, &da) == PMIX_SUCCESS) {
        rdp_data_array_free(da);
    }
    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_app_array(&rb, &apps, &n) == PMIX_SUCCESS) {
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_APP, n, apps};
        rdp_data_array_free(da);
    }
    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_query_array(&rb, &q, &n) == PMIX_SUCCESS) {
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_QUERY, n, q};
        rdp_data_array_free(da);
    }
    rdp_rbuf_init(&rb, copy, len);
    if (rdp_unpack_pdata_array(&rb, &pd, &n) == PMIX_SUCCESS) {
        da  = calloc(1, sizeof(*da));
        *da = (pmix_data_array_t){PMIX_PDATA, n, pd};
        rdp_data_array_free(da);
    }
    if (len >= RDP_MSG_HDR_LEN) {
        (void)rdp_msg_hdr_decode(copy, &hdr);
    }
    rdp_rbuf_init(&rb, copy, len);
    (void)rdp_kvs_unpack_rank(kvs, "corpus", 1, &rb);
    free(copy);
}

static void build_corpus_seed(rdp_buf_t *buf, unsigned which)
{
    pmix_value_t v;
    pmix_info_t *info;
    size_t n;

    rdp_buf_init(buf);
    switch (which % 4) {
    case 0:
        gen_value(&v, gen_all_types[rng() % GEN_NTYPES], (unsigned)rng(), 0);
        assert_int_equal(rdp_pack_value(buf, &v), PMIX_SUCCESS);
        rdp_value_destruct(&v);
        break;
    case 1:
        gen_infos(&info, &n, rng() % 6, (unsigned)rng(), 0);
        assert_int_equal(rdp_pack_info_array(buf, info, n), PMIX_SUCCESS);
        rdp_info_array_free(info, n);
        break;
    case 2: {
        /* a kvs rank blob: u32 count, (u8 scope, key, value) */
        unsigned k = (unsigned)(rng() % 4);
        rdp_pack_u32(buf, k);
        for (unsigned i = 0; i < k; i++) {
            char key[32];
            rdp_pack_u8(buf, (uint8_t)(rng() % 4));
            snprintf(key, sizeof(key), "key%u", i);
            rdp_pack_string(buf, key);
            gen_value(&v, gen_all_types[rng() % GEN_NTYPES], (unsigned)rng(),
                      0);
            assert_int_equal(rdp_pack_value(buf, &v), PMIX_SUCCESS);
            rdp_value_destruct(&v);
        }
        break;
    }
    default: {
        pmix_data_array_t da;
        gen_darray(&da, gen_all_types[rng() % GEN_NTYPES], rng() % 4,
                   (unsigned)rng(), 0);
        assert_int_equal(rdp_pack_data_array(buf, &da), PMIX_SUCCESS);
        {
            pmix_data_array_t *heap = malloc(sizeof(*heap));
            *heap                   = da;
            rdp_data_array_free(heap);
        }
        break;
    }
    }
}

static void mutate(rdp_buf_t *buf)
{
    unsigned nmut = 1 + (unsigned)(rng() % 4);

    for (unsigned m = 0; m < nmut && buf->size != 0; m++) {
        size_t pos = rng() % buf->size;
        switch (rng() % 6) {
        case 0: /* flip a bit */
            buf->data[pos] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: /* truncate */
            buf->size = pos;
            break;
        case 2: /* big count / length */
            memset(buf->data + pos, 0xff,
                   (buf->size - pos < 4) ? buf->size - pos : 4);
            break;
        case 3: /* zero a run */
            memset(buf->data + pos, 0,
                   (buf->size - pos < 8) ? buf->size - pos : 8);
            break;
        case 4: /* random byte */
            buf->data[pos] = (uint8_t)rng();
            break;
        default: /* a random type code */
            if (buf->size - pos >= 2) {
                uint16_t t = (uint16_t)(rng() % 80);
                memcpy(buf->data + pos, &t, 2);
            }
            break;
        }
    }
}

static void a_seeded_corpus_of_mutated_buffers_never_crashes(void **state)
{
    uint64_t seed = 0x5eed2024u;
    rdp_kvs_t *kvs;
    const char *env = getenv("RDP_TEST_SEED");

    if (env != NULL) {
        seed = strtoull(env, NULL, 0);
    }
    print_message("corpus seed 0x%llx (set RDP_TEST_SEED to change)\n",
                  (unsigned long long)seed);
    rng_state = seed;
    assert_int_equal(rdp_kvs_create(&kvs), PMIX_SUCCESS);
    for (unsigned i = 0; i < 400; i++) {
        rdp_buf_t buf;

        if (i % 10 == 9) {
            /* pure random bytes */
            size_t len = rng() % 200;
            uint8_t *p = malloc(len + 1);
            for (size_t j = 0; j < len; j++) {
                p[j] = (uint8_t)rng();
            }
            feed_unpackers(p, len, kvs);
            free(p);
            continue;
        }
        build_corpus_seed(&buf, i);
        feed_unpackers(buf.data, buf.size, kvs); /* the valid original */
        mutate(&buf);
        feed_unpackers(buf.data, buf.size, kvs);
        rdp_buf_cleanup(&buf);
    }
    rdp_kvs_destroy(kvs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers_are_packed_little_endian),
        cmocka_unit_test(short_reads_of_integers_fail_and_leave_the_cursor),
        cmocka_unit_test(strings_round_trip_and_null_stays_null),
        cmocka_unit_test(a_string_without_its_nul_fails_to_unpack),
        cmocka_unit_test(a_string_with_an_inner_nul_fails_to_unpack),
        cmocka_unit_test(a_string_longer_than_the_buffer_fails_to_unpack),
        cmocka_unit_test(string_into_rejects_strings_longer_than_the_array),
        cmocka_unit_test(bytes_round_trip_copied_and_as_a_view),
        cmocka_unit_test(a_64_kib_byte_object_round_trips),
        cmocka_unit_test(memory_to_fill_has_its_pages_mapped_before_the_copy),
        cmocka_unit_test(a_buffer_grown_for_a_large_write_has_its_pages_mapped),
        cmocka_unit_test(every_value_type_round_trips),
        cmocka_unit_test(an_undef_value_round_trips_with_no_payload),
        cmocka_unit_test(scalar_values_keep_their_exact_contents),
        cmocka_unit_test(data_arrays_of_every_element_type_round_trip),
        cmocka_unit_test(struct_fields_land_in_the_right_members),
        cmocka_unit_test(a_null_struct_pointer_in_a_value_round_trips_as_null),
        cmocka_unit_test(topology_and_cpuset_carry_only_their_source),
        cmocka_unit_test(an_empty_data_buffer_round_trips),
        cmocka_unit_test(the_persistent_flag_does_not_travel),
        cmocka_unit_test(pointer_values_cannot_be_packed),
        cmocka_unit_test(a_failed_pack_leaves_the_buffer_unchanged),
        cmocka_unit_test(
            arrays_of_infos_procs_apps_queries_and_pdata_round_trip),
        cmocka_unit_test(deeply_nested_info_arrays_round_trip_up_to_the_limit),
        cmocka_unit_test(every_truncation_of_a_complex_message_fails_cleanly),
        cmocka_unit_test(every_truncation_of_a_nested_value_fails_cleanly),
        cmocka_unit_test(counts_larger_than_the_buffer_are_rejected),
        cmocka_unit_test(unknown_type_codes_are_rejected),
        cmocka_unit_test(a_nesting_bomb_fails_without_exhausting_the_stack),
        cmocka_unit_test(keys_longer_than_pmix_max_keylen_are_rejected),
        cmocka_unit_test(nspaces_longer_than_pmix_max_nslen_are_rejected),
        cmocka_unit_test(bool_bytes_other_than_zero_and_one_are_rejected),
        cmocka_unit_test(message_headers_round_trip),
        cmocka_unit_test(headers_with_a_bad_magic_or_version_are_rejected),
        cmocka_unit_test(the_pack_buffer_grows_geometrically),
        cmocka_unit_test(a_seeded_corpus_of_mutated_buffers_never_crashes),
    };

    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
