/* test_value.c - value/info helpers, deep copies, printable names, macros */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "core/util/attr_type.h"
#include "core/util/status.h"
#include "core/util/value.h"

/* ------------------------------------------------------------------ */
/* scalars                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    pmix_data_type_t type;
    size_t size;
    uint8_t sample[16];
} scalar_case_t;

/* a distinctive non-zero bit pattern of the right width for each type */
static const scalar_case_t scalars[] = {
    {PMIX_BOOL, sizeof(bool), {1}},
    {PMIX_BYTE, 1, {0xa5}},
    {PMIX_SIZE, sizeof(size_t), {1, 2, 3, 4, 5, 6, 7, 8}},
    {PMIX_PID, sizeof(pid_t), {9, 8, 7, 0}},
    {PMIX_INT, sizeof(int), {0xfe, 0xff, 0xff, 0xff}},
    {PMIX_INT8, 1, {0x80}},
    {PMIX_INT16, 2, {0x34, 0x82}},
    {PMIX_INT32, 4, {1, 0, 0, 0x80}},
    {PMIX_INT64, 8, {1, 2, 3, 4, 5, 6, 7, 0x88}},
    {PMIX_UINT, sizeof(unsigned), {4, 3, 2, 1}},
    {PMIX_UINT8, 1, {0xff}},
    {PMIX_UINT16, 2, {0xcd, 0xab}},
    {PMIX_UINT32, 4, {0x78, 0x56, 0x34, 0x12}},
    {PMIX_UINT64, 8, {8, 7, 6, 5, 4, 3, 2, 1}},
    {PMIX_FLOAT, sizeof(float), {0, 0, 0xc0, 0x3f}},
    {PMIX_DOUBLE, sizeof(double), {0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
    {PMIX_TIMEVAL, sizeof(struct timeval), {1, 0, 0, 0, 0, 0, 0, 0, 2}},
    {PMIX_TIME, sizeof(time_t), {0x10, 0x20}},
    {PMIX_STATUS, sizeof(pmix_status_t), {0xe0, 0xff, 0xff, 0xff}},
    {PMIX_PROC_RANK, sizeof(pmix_rank_t), {0xfe, 0xff, 0xff, 0xff}},
    {PMIX_PERSIST, 1, {PMIX_PERSIST_APP}},
    {PMIX_SCOPE, 1, {PMIX_GLOBAL}},
    {PMIX_DATA_RANGE, 1, {PMIX_RANGE_SESSION}},
    {PMIX_INFO_DIRECTIVES, 4, {PMIX_INFO_REQD}},
    {PMIX_DATA_TYPE, 2, {PMIX_UINT64}},
    {PMIX_PROC_STATE, 1, {PMIX_PROC_STATE_RUNNING}},
    {PMIX_ALLOC_DIRECTIVE, 1, {PMIX_ALLOC_EXTEND}},
    {PMIX_IOF_CHANNEL, 2, {PMIX_FWD_STDERR_CHANNEL}},
    {PMIX_JOB_STATE, 1, {PMIX_JOB_STATE_RUNNING}},
    {PMIX_LINK_STATE, 1, {PMIX_LINK_UP}},
    {PMIX_DEVTYPE, 8, {PMIX_DEVTYPE_GPU}},
    {PMIX_LOCTYPE, 2, {PMIX_LOCALITY_SHARE_NUMA}},
    {PMIX_STOR_MEDIUM, 8, {0x10}},
    {PMIX_STOR_ACCESS, 8, {0x20}},
    {PMIX_STOR_PERSIST, 8, {0x40}},
    {PMIX_STOR_ACCESS_TYPE, 2, {3}},
};

static void every_scalar_type_loads_and_unloads_unchanged(void **state)
{
    size_t i;

    for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
        const scalar_case_t *c = &scalars[i];
        uint8_t storage[16];
        void *out = storage;
        pmix_value_t v, copy;
        size_t sz = 0;

        assert_int_equal(rdpmix_darray_elem_size(c->type), c->size);
        assert_int_equal(PMIx_Value_load(&v, c->sample, c->type), PMIX_SUCCESS);
        assert_int_equal(v.type, c->type);
        assert_memory_equal(&v.data, c->sample, c->size);

        /* into caller storage */
        memset(storage, 0, sizeof(storage));
        assert_int_equal(PMIx_Value_unload(&v, &out, &sz), PMIX_SUCCESS);
        assert_ptr_equal(out, storage);
        assert_int_equal(sz, c->size);
        assert_memory_equal(storage, c->sample, c->size);

        /* into storage the library allocates */
        out = NULL;
        assert_int_equal(PMIx_Value_unload(&v, &out, &sz), PMIX_SUCCESS);
        assert_non_null(out);
        assert_memory_equal(out, c->sample, c->size);
        free(out);

        assert_int_equal(PMIx_Value_xfer(&copy, &v), PMIX_SUCCESS);
        assert_true(rdp_value_equal(&copy, &v));
        assert_int_equal(PMIx_Value_compare(&copy, &v), PMIX_EQUAL);
        PMIx_Value_destruct(&v);
        assert_int_equal(v.type, PMIX_UNDEF);
    }
}

static void strings_and_byte_objects_are_copied_on_load_and_unload(void **state)
{
    char text[]           = "hello";
    pmix_byte_object_t bo = {.bytes = text, .size = 5};
    pmix_value_t v;
    void *out = NULL;
    size_t sz = 0;

    assert_int_equal(PMIx_Value_load(&v, text, PMIX_STRING), PMIX_SUCCESS);
    assert_ptr_not_equal(v.data.string, text);
    assert_string_equal(v.data.string, "hello");
    assert_int_equal(PMIx_Value_unload(&v, &out, &sz), PMIX_SUCCESS);
    assert_ptr_not_equal(out, v.data.string);
    assert_string_equal(out, "hello");
    assert_int_equal(sz, 5);
    free(out);
    PMIx_Value_destruct(&v);

    assert_int_equal(PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT), PMIX_SUCCESS);
    assert_ptr_not_equal(v.data.bo.bytes, text);
    assert_int_equal(v.data.bo.size, 5);
    out = NULL;
    assert_int_equal(PMIx_Value_unload(&v, &out, &sz), PMIX_SUCCESS);
    assert_int_equal(sz, 5);
    assert_memory_equal(out, "hello", 5);
    assert_ptr_not_equal(out, v.data.bo.bytes);
    free(out);
    PMIx_Value_destruct(&v);
}

static void loading_without_data_gives_empty_value_and_true_bool(void **state)
{
    pmix_value_t v;

    memset(&v, 0xab, sizeof(v));
    assert_int_equal(PMIx_Value_load(&v, NULL, PMIX_BOOL), PMIX_SUCCESS);
    assert_true(v.data.flag);
    memset(&v, 0xab, sizeof(v));
    assert_int_equal(PMIx_Value_load(&v, NULL, PMIX_STRING), PMIX_SUCCESS);
    assert_int_equal(v.type, PMIX_STRING);
    assert_null(v.data.string);
    PMIx_Value_destruct(&v);
    assert_int_equal(PMIx_Value_load(&v, NULL, PMIX_PROC), PMIX_SUCCESS);
    assert_null(v.data.proc);
    PMIx_Value_destruct(&v);
}

static void pointers_are_stored_and_returned_as_is(void **state)
{
    int x = 0;
    pmix_value_t v, copy;
    void *out = NULL;
    size_t sz;

    assert_int_equal(PMIx_Value_load(&v, &x, PMIX_POINTER), PMIX_SUCCESS);
    assert_ptr_equal(v.data.ptr, &x);
    assert_int_equal(rdp_value_copy(&copy, &v), PMIX_SUCCESS);
    assert_ptr_equal(copy.data.ptr, &x);
    assert_int_equal(PMIx_Value_unload(&v, &out, &sz), PMIX_SUCCESS);
    assert_ptr_equal(out, &x);
    rdp_value_destruct(&copy);
    rdp_value_destruct(&v); /* must not free &x */
}

static void unknown_types_are_refused_and_leave_nothing_behind(void **state)
{
    pmix_value_t v, copy;
    void *out = NULL;
    size_t sz;
    int x = 1;

    assert_int_equal(PMIx_Value_load(&v, &x, 400), PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_int_equal(v.type, PMIX_UNDEF);
    v.type     = 400;
    v.data.ptr = &x;
    memset(&copy, 0x5a, sizeof(copy));
    assert_int_equal(rdp_value_copy(&copy, &v), PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_int_equal(copy.type, PMIX_UNDEF);
    assert_null(copy.data.ptr);
    assert_int_equal(PMIx_Value_unload(&v, &out, &sz),
                     PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_false(rdp_value_equal(&v, &v));
    PMIX_VALUE_CONSTRUCT(&v);
    assert_int_equal(PMIx_Value_unload(&v, &out, &sz),
                     PMIX_ERR_UNKNOWN_DATA_TYPE);
}

/* ------------------------------------------------------------------ */
/* deep copies of nested data                                           */
/* ------------------------------------------------------------------ */

/* An info array holding one value of every struct type, nested data
 * arrays of strings and of data arrays included. */
static pmix_data_array_t *build_everything(void)
{
    pmix_data_array_t *outer, *inner, *strings;
    pmix_info_t *info;
    pmix_proc_t proc;
    pmix_proc_info_t pinfo;
    pmix_app_t app;
    pmix_query_t query;
    pmix_envar_t envar;
    pmix_byte_object_t bo;
    pmix_coord_t *coord;
    pmix_geometry_t geo;
    pmix_endpoint_t ep;
    pmix_device_distance_t dist;
    pmix_regattr_t ra;
    pmix_pdata_t pd;
    pmix_node_stats_t nd;
    pmix_proc_stats_t ps;
    pmix_data_buffer_t db;
    pmix_cpuset_t cs   = {.source = "hwloc", .bitmap = NULL};
    pmix_topology_t tp = {.source = "hwloc", .topology = NULL};
    pmix_nspace_t ns   = "nspace-x";
    size_t n           = 0, i;
    uint32_t u32       = 42;

    PMIX_DATA_ARRAY_CREATE(outer, 20, PMIX_INFO);
    info = outer->array;

    PMIX_DATA_ARRAY_CREATE(strings, 3, PMIX_STRING);
    for (i = 0; i < 3; i++) {
        char s[8];
        snprintf(s, sizeof(s), "s%zu", i);
        ((char **)strings->array)[i] = strdup(s);
    }
    PMIX_DATA_ARRAY_CREATE(inner, 2, PMIX_DATA_ARRAY);
    ((pmix_data_array_t *)inner->array)[0] = *strings; /* takes contents */
    free(strings);
    PMIX_DATA_ARRAY_CONSTRUCT(&((pmix_data_array_t *)inner->array)[1], 2,
                              PMIX_UINT32);
    ((uint32_t *)((pmix_data_array_t *)inner->array)[1].array)[1] = 7;
    PMIx_Info_load(&info[n++], "nested", inner, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(inner);

    PMIX_LOAD_PROCID(&proc, "job", 3);
    PMIx_Info_load(&info[n++], "proc", &proc, PMIX_PROC);

    PMIX_PROC_INFO_CONSTRUCT(&pinfo);
    pinfo.proc            = proc;
    pinfo.hostname        = "node1";
    pinfo.executable_name = "a.out";
    pinfo.pid             = 1234;
    PMIx_Info_load(&info[n++], "pinfo", &pinfo, PMIX_PROC_INFO);

    PMIX_APP_CONSTRUCT(&app);
    app.cmd      = "a.out";
    app.argv     = pmix_argv_split("a.out -v x", ' ');
    app.env      = pmix_argv_split("A=1,B=2", ',');
    app.cwd      = "/tmp";
    app.maxprocs = 4;
    PMIX_INFO_CREATE(app.info, 2);
    app.ninfo = 2;
    PMIx_Info_load(&app.info[0], "k", "v", PMIX_STRING);
    PMIx_Info_load(&app.info[1], "n", &u32, PMIX_UINT32);
    PMIx_Info_load(&info[n++], "app", &app, PMIX_APP);
    pmix_argv_free(app.argv);
    pmix_argv_free(app.env);
    PMIX_INFO_FREE(app.info, 2);

    PMIX_QUERY_CONSTRUCT(&query);
    query.keys = pmix_argv_split("pmix.qry.ns,pmix.qry.ptable", ',');
    PMIX_QUERY_QUALIFIERS_CREATE(&query, 1);
    PMIx_Info_load(&query.qualifiers[0], "q", "x", PMIX_STRING);
    PMIx_Info_load(&info[n++], "query", &query, PMIX_QUERY);
    PMIX_QUERY_DESTRUCT(&query);

    envar.envar     = "PATH";
    envar.value     = "/bin";
    envar.separator = ':';
    PMIx_Info_load(&info[n++], "envar", &envar, PMIX_ENVAR);

    bo.bytes = "\x01\x02\x00\x03";
    bo.size  = 4;
    PMIx_Info_load(&info[n++], "bo", &bo, PMIX_BYTE_OBJECT);

    PMIX_COORD_CREATE(coord, 1, 3);
    coord->coord[2] = 9;
    coord->view     = PMIX_COORD_LOGICAL_VIEW;
    PMIx_Info_load(&info[n++], "coord", coord, PMIX_COORD);

    PMIX_GEOMETRY_CONSTRUCT(&geo);
    geo.fabric      = 1;
    geo.uuid        = "uuid";
    geo.osname      = "ib0";
    geo.coordinates = coord;
    geo.ncoords     = 1;
    PMIx_Info_load(&info[n++], "geo", &geo, PMIX_GEOMETRY);
    PMIX_COORD_FREE(coord, 1);

    PMIX_ENDPOINT_CONSTRUCT(&ep);
    ep.uuid   = "u";
    ep.osname = "o";
    ep.endpt  = bo;
    PMIx_Info_load(&info[n++], "ep", &ep, PMIX_ENDPOINT);

    PMIX_DEVICE_DIST_CONSTRUCT(&dist);
    dist.uuid   = "d";
    dist.osname = "mlx5_0";
    dist.type   = PMIX_DEVTYPE_NETWORK;
    PMIx_Info_load(&info[n++], "dist", &dist, PMIX_DEVICE_DIST);

    PMIX_REGATTR_CONSTRUCT(&ra);
    PMIX_REGATTR_LOAD(&ra, "PMIX_JOB_SIZE", PMIX_JOB_SIZE, PMIX_UINT32,
                      "number of procs");
    PMIx_Info_load(&info[n++], "regattr", &ra, PMIX_REGATTR);
    PMIX_REGATTR_DESTRUCT(&ra);

    PMIX_PDATA_CONSTRUCT(&pd);
    pd.proc = proc;
    PMIX_LOAD_KEY(pd.key, "published");
    PMIx_Value_load(&pd.value, "data", PMIX_STRING);
    PMIx_Info_load(&info[n++], "pdata", &pd, PMIX_PDATA);
    PMIX_PDATA_DESTRUCT(&pd);

    PMIX_NODE_STATS_CONSTRUCT(&nd);
    nd.node = "node1";
    nd.la   = 1.5f;
    PMIX_DISK_STATS_CREATE(nd.diskstats, 2);
    nd.ndiskstats                       = 2;
    nd.diskstats[1].disk                = strdup("sda");
    nd.diskstats[1].num_ios_in_progress = 3;
    PMIX_NET_STATS_CREATE(nd.netstats, 1);
    nd.nnetstats                 = 1;
    nd.netstats[0].net_interface = strdup("eth0");
    PMIx_Info_load(&info[n++], "nodestats", &nd, PMIX_NODE_STATS);
    PMIX_DISK_STATS_FREE(nd.diskstats, nd.ndiskstats);
    PMIX_NET_STATS_FREE(nd.netstats, nd.nnetstats);

    PMIX_PROC_STATS_CONSTRUCT(&ps);
    ps.node = "node1";
    ps.cmd  = "a.out";
    ps.rss  = 10.0f;
    PMIx_Info_load(&info[n++], "procstats", &ps, PMIX_PROC_STATS);

    PMIX_DATA_BUFFER_CONSTRUCT(&db);
    db.base_ptr        = "abcdef";
    db.bytes_used      = 6;
    db.bytes_allocated = 6;
    db.pack_ptr        = db.base_ptr + 6;
    db.unpack_ptr      = db.base_ptr + 2;
    PMIx_Info_load(&info[n++], "dbuf", &db, PMIX_DATA_BUFFER);

    PMIx_Info_load(&info[n++], "cpuset", &cs, PMIX_PROC_CPUSET);
    PMIx_Info_load(&info[n++], "topo", &tp, PMIX_TOPO);
    PMIx_Info_load(&info[n++], "nspace", ns, PMIX_PROC_NSPACE);
    PMIx_Info_load(&info[n++], "str", "text", PMIX_STRING);
    assert_int_equal(n, outer->size);
    return outer;
}

static void nested_arrays_of_every_type_copy_deeply(void **state)
{
    pmix_data_array_t *orig = build_everything();
    pmix_data_array_t *copy = NULL, *again = NULL;
    pmix_value_t vorig, vcopy;
    pmix_info_t *ci;
    pmix_data_array_t *nested;

    assert_int_equal(rdp_data_array_copy(&copy, orig), PMIX_SUCCESS);
    vorig.type        = PMIX_DATA_ARRAY;
    vorig.data.darray = orig;
    vcopy.type        = PMIX_DATA_ARRAY;
    vcopy.data.darray = copy;
    assert_true(rdp_value_equal(&vorig, &vcopy));

    /* nothing is shared: change the copy's innermost string */
    ci     = copy->array;
    nested = ci[0].value.data.darray;
    assert_int_equal(nested->type, PMIX_DATA_ARRAY);
    free(((char **)((pmix_data_array_t *)nested->array)[0].array)[1]);
    ((char **)((pmix_data_array_t *)nested->array)[0].array)[1] =
        strdup("changed");
    assert_false(rdp_value_equal(&vorig, &vcopy));
    assert_int_not_equal(PMIx_Value_compare(&vorig, &vcopy), PMIX_EQUAL);

    /* a copy of the original survives the original's destruction */
    assert_int_equal(rdp_data_array_copy(&again, orig), PMIX_SUCCESS);
    rdp_data_array_free(orig);
    ci = again->array;
    assert_string_equal(ci[2].value.data.pinfo->hostname, "node1");
    assert_string_equal(((pmix_app_t *)ci[3].value.data.ptr)->argv[1], "-v");
    assert_int_equal(ci[7].value.data.coord->coord[2], 9);
    assert_string_equal(
        ((pmix_node_stats_t *)ci[13].value.data.ptr)->diskstats[1].disk, "sda");
    assert_memory_equal(ci[15].value.data.dbuf->unpack_ptr, "cdef", 4);
    assert_string_equal(ci[16].value.data.cpuset->source, "hwloc");
    assert_null(ci[16].value.data.cpuset->bitmap);
    assert_string_equal(*ci[18].value.data.nspace, "nspace-x");

    PMIX_DATA_ARRAY_FREE(copy); /* the public macro frees just as deeply */
    rdp_data_array_free(again);
}

static void value_destruct_frees_everything_and_resets(void **state)
{
    pmix_data_array_t *all = build_everything();
    pmix_value_t v;

    v.type        = PMIX_DATA_ARRAY;
    v.data.darray = all;
    rdp_value_destruct(&v);
    assert_int_equal(v.type, PMIX_UNDEF);
    assert_null(v.data.ptr);
    rdp_value_destruct(&v); /* twice is harmless */
    rdp_value_destruct(NULL);
}

static void partially_filled_structs_destruct_cleanly(void **state)
{
    pmix_value_t v;

    /* what an interrupted unpack leaves: a type with zeroed contents */
    v.type                          = PMIX_APP;
    v.data.ptr                      = calloc(1, sizeof(pmix_app_t));
    ((pmix_app_t *)v.data.ptr)->cmd = strdup("x");
    rdp_value_destruct(&v);
    v.type     = PMIX_DATA_ARRAY;
    v.data.ptr = calloc(1, sizeof(pmix_data_array_t));
    rdp_value_destruct(&v);
    v.type = PMIX_ENVAR;
    memset(&v.data, 0, sizeof(v.data));
    v.data.envar.value = strdup("only the value");
    rdp_value_destruct(&v);
}

static void info_arrays_copy_with_end_flag_and_owned_values(void **state)
{
    pmix_info_t *src, *dst = NULL;
    uint16_t u16 = 5;

    PMIX_INFO_CREATE(src, 3);
    PMIX_INFO_LOAD(&src[0], "a", "x", PMIX_STRING);
    PMIX_INFO_LOAD(&src[1], "b", &u16, PMIX_UINT16);
    PMIX_INFO_REQUIRED(&src[1]);
    PMIX_INFO_LOAD(&src[2], "c", NULL, PMIX_BOOL);
    PMIX_INFO_SET_PERSISTENT(&src[0]);
    assert_int_equal(rdp_info_array_copy(&dst, src, 3), PMIX_SUCCESS);
    assert_true(PMIX_INFO_IS_END(&dst[2]));
    assert_false(PMIX_INFO_IS_END(&dst[0]));
    assert_true(PMIX_INFO_IS_REQUIRED(&dst[1]));
    assert_false(PMIX_INFO_IS_PERSISTENT(&dst[0])); /* the copy owns it */
    assert_ptr_not_equal(dst[0].value.data.string, src[0].value.data.string);
    assert_true(PMIX_INFO_TRUE(&dst[2]));
    rdp_info_array_free(dst, 3);
    src[0].flags = 0;
    PMIX_INFO_FREE(src, 3);
    assert_null(src);
    rdp_info_array_free(NULL, 0);
    assert_int_equal(rdp_info_array_copy(&dst, NULL, 0), PMIX_SUCCESS);
    assert_null(dst);
}

static void info_load_clears_flags_and_xfer_shares_persistent(void **state)
{
    pmix_info_t *info, shared, owned;

    PMIX_INFO_CREATE(info, 1);
    assert_true(PMIX_INFO_IS_END(&info[0]));
    assert_int_equal(PMIx_Info_load(&info[0], "k", "v", PMIX_STRING),
                     PMIX_SUCCESS);
    assert_int_equal(info[0].flags, 0);
    assert_int_equal(PMIx_Info_load(&info[0], NULL, "v", PMIX_STRING),
                     PMIX_ERR_BAD_PARAM);
    PMIX_INFO_REQUIRED(&info[0]);
    assert_int_equal(PMIx_Info_xfer(&owned, &info[0]), PMIX_SUCCESS);
    assert_int_equal(owned.flags, PMIX_INFO_REQD);
    assert_ptr_not_equal(owned.value.data.string, info[0].value.data.string);
    PMIX_INFO_SET_PERSISTENT(&info[0]);
    assert_int_equal(PMIx_Info_xfer(&shared, &info[0]), PMIX_SUCCESS);
    assert_ptr_equal(shared.value.data.string, info[0].value.data.string);
    PMIX_INFO_DESTRUCT(&shared); /* persistent: leaves the value alone */
    PMIX_INFO_DESTRUCT(&owned);
    info[0].flags = 0;
    PMIX_INFO_FREE(info, 1);
}

static void values_compare_by_type_then_contents(void **state)
{
    pmix_value_t a, b;
    uint32_t three = 3, four = 4;
    int32_t neg = -1, pos = 1;

    PMIx_Value_load(&a, &three, PMIX_UINT32);
    PMIx_Value_load(&b, &four, PMIX_UINT32);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    assert_int_equal(PMIx_Value_compare(&b, &a), PMIX_VALUE1_GREATER);
    PMIx_Value_load(&a, &neg, PMIX_INT32);
    PMIx_Value_load(&b, &pos, PMIX_INT32);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    PMIx_Value_load(&b, &four, PMIX_UINT32);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE_TYPE_DIFFERENT);
    PMIx_Value_load(&a, "abc", PMIX_STRING);
    PMIx_Value_load(&b, "abd", PMIX_STRING);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
}

/* ------------------------------------------------------------------ */
/* printable names                                                      */
/* ------------------------------------------------------------------ */

/* rdpmix's own messages name the constant; PMIx_Error_string says what
 * OpenPMIx says (tests/abi/check_error_strings.sh) */
static void every_status_code_has_a_name(void **state)
{
    int named = 0;
    pmix_status_t code;

    for (code = 0; code >= -500; code--) {
        const char *s = rdp_status_name(code);
        assert_non_null(s);
        if (strcmp(s, "UNKNOWN ERROR") != 0) {
            assert_true(strncmp(s, "PMIX_", 5) == 0);
            named++;
        }
    }
    /* PMIX_SUCCESS and every distinct value of Appendix A below -1..-500 */
    assert_int_equal(named, 161);
    assert_string_equal(rdp_status_name(PMIX_EXTERNAL_ERR_BASE),
                        "PMIX_EXTERNAL_ERR_BASE");
    assert_string_equal(rdp_status_name(PMIX_ERR_NOT_FOUND),
                        "PMIX_ERR_NOT_FOUND");
    assert_string_equal(rdp_status_name(PMIX_ERR_JOB_TERMINATED),
                        "PMIX_EVENT_JOB_END");
    assert_string_equal(rdp_status_name(PMIX_EXISTS), "PMIX_ERR_EXISTS");
    assert_string_equal(rdp_status_name(PMIX_ERR_NODE_DOWN),
                        "PMIX_EVENT_NODE_DOWN");
    assert_string_equal(rdp_status_name(-54), "UNKNOWN ERROR");
    assert_string_equal(rdp_status_name(42), "UNKNOWN ERROR");
    assert_string_equal(rdp_status_name(PMIX_EXTERNAL_ERR_BASE - 5),
                        "EXTERNAL ERROR");
    assert_string_equal(PMIx_Error_string(PMIX_ERR_UNREACH), "UNREACHABLE");
    assert_string_equal(PMIx_Error_string(PMIX_SUCCESS), "SUCCESS");
    assert_string_equal(PMIx_Error_string(42), "ERROR STRING NOT FOUND");
}

static void every_data_type_has_a_name(void **state)
{
    pmix_data_type_t t;

    for (t = PMIX_BOOL; t <= PMIX_STOR_ACCESS_TYPE; t++) {
        const char *s = PMIx_Data_type_string(t);
        if (t == 29 || t == 44) {
            assert_string_equal(s, "UNKNOWN DATA TYPE");
        } else {
            assert_true(strncmp(s, "PMIX_", 5) == 0);
        }
    }
    assert_string_equal(PMIx_Data_type_string(PMIX_UINT32), "PMIX_UINT32");
    assert_string_equal(PMIx_Data_type_string(PMIX_DATA_TYPE_MAX),
                        "UNKNOWN DATA TYPE");
}

static void enumerations_print_readably(void **state)
{
    char *s;

    /* OpenPMIx 4.2.2's texts (test_pretty checks every value) */
    assert_string_equal(PMIx_Proc_state_string(PMIX_PROC_STATE_RUNNING),
                        "PROC EXECUTING");
    assert_string_equal(PMIx_Proc_state_string(99), "UNKNOWN STATE");
    assert_string_equal(PMIx_Job_state_string(PMIX_JOB_STATE_TERMINATED),
                        "TERMINATED");
    assert_string_equal(PMIx_Scope_string(PMIX_GLOBAL), "SHARE ACROSS ALL NODES");
    assert_string_equal(PMIx_Data_range_string(PMIX_RANGE_INVALID), "INVALID");
    assert_string_equal(PMIx_Persistence_string(PMIX_PERSIST_INDEF),
                        "INDEFINITE");
    assert_string_equal(PMIx_Alloc_directive_string(PMIX_ALLOC_NEW), "NEW");
    assert_string_equal(PMIx_Alloc_directive_string(200), "EXTERNAL");
    assert_string_equal(PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL
                                                | PMIX_FWD_STDERR_CHANNEL),
                        "STDOUT STDERR ");
    assert_string_equal(PMIx_IOF_channel_string(0), "NONE");
    assert_string_equal(PMIx_Link_state_string(PMIX_LINK_UP), "ACTIVE");
    assert_string_equal(
        PMIx_Device_type_string(PMIX_DEVTYPE_GPU | PMIX_DEVTYPE_NETWORK),
        "GPU|NETWORK");
    assert_string_equal(PMIx_Device_type_string(0), "UNKNOWN");
    assert_string_equal(PMIx_Value_comparison_string(PMIX_EQUAL), "EQUAL");
    s = PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_ARRAY_END);
    assert_string_equal(s, "REQUIRED:END");
    free(s);
    s = PMIx_Info_directives_string(0);
    assert_string_equal(s, "OPTIONAL");
    free(s);
}

static void attribute_names_and_strings_map_both_ways(void **state)
{
    assert_string_equal(PMIx_Get_attribute_string("PMIX_JOB_SIZE"),
                        "pmix.job.size");
    assert_string_equal(PMIx_Get_attribute_name("pmix.job.size"),
                        "PMIX_JOB_SIZE");
    assert_string_equal(PMIx_Get_attribute_name(PMIX_COLLECT_DATA),
                        "PMIX_COLLECT_DATA");
    /* a deprecated alias loses to the current name */
    assert_string_equal(PMIx_Get_attribute_name("pmix.pdata"),
                        "PMIX_PROC_INFO_ARRAY");
    assert_string_equal(PMIx_Get_attribute_string("PMIX_PROC_DATA"),
                        "pmix.pdata");
    assert_string_equal(PMIx_Get_attribute_string("NOT_AN_ATTR"),
                        "NOT_AN_ATTR");
    assert_string_equal(PMIx_Get_attribute_name("x.y"), "x.y");
}

static void values_and_infos_render_as_text(void **state)
{
    pmix_info_t info;
    pmix_proc_t proc;
    uint32_t u = 7;
    char *s;

    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &u, PMIX_UINT32);
    s = PMIx_Info_string(&info);
    assert_string_equal(s, "pmix.job.size=PMIX_UINT32: 7");
    free(s);
    PMIX_LOAD_PROCID(&proc, "job", PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, "p", &proc, PMIX_PROC);
    s = PMIx_Value_string(&info.value);
    assert_string_equal(s, "PMIX_PROC: job:WILDCARD");
    free(s);
    PMIX_INFO_DESTRUCT(&info);
    assert_int_equal(PMIx_Data_print(&s, "> ", "abc", PMIX_STRING),
                     PMIX_SUCCESS);
    assert_string_equal(s, "> \"abc\"");
    free(s);
}

static void data_copy_allocates_one_element(void **state)
{
    pmix_proc_t proc, *copy = NULL;
    char *str = NULL;

    PMIX_LOAD_PROCID(&proc, "job", 1);
    assert_int_equal(PMIx_Data_copy((void **)&copy, &proc, PMIX_PROC),
                     PMIX_SUCCESS);
    assert_true(PMIX_CHECK_PROCID(copy, &proc));
    free(copy);
    assert_int_equal(PMIx_Data_copy((void **)&str, "s", PMIX_STRING),
                     PMIX_SUCCESS);
    assert_string_equal(str, "s");
    free(str);
}

/* ------------------------------------------------------------------ */
/* info lists                                                           */
/* ------------------------------------------------------------------ */

static void info_lists_convert_to_arrays(void **state)
{
    void *list = PMIx_Info_list_start();
    pmix_data_array_t da;
    pmix_info_t ins, xf, *arr;
    pmix_status_t rc;

    assert_non_null(list);
    PMIX_INFO_LOAD(&ins, "inserted", "i", PMIX_STRING);
    PMIX_INFO_LOAD(&xf, "xferred", "x", PMIX_STRING);
    PMIX_INFO_LIST_ADD(rc, list, "added", "a", PMIX_STRING);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_INSERT(rc, list, &ins);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_XFER(rc, list, &xf);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_CONVERT(rc, list, &da);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_RELEASE(list);
    assert_int_equal(da.type, PMIX_INFO);
    assert_int_equal(da.size, 3);
    arr = da.array;
    assert_string_equal(arr[0].key, "added");
    assert_ptr_equal(arr[1].value.data.string, ins.value.data.string);
    assert_ptr_not_equal(arr[2].value.data.string, xf.value.data.string);
    assert_true(PMIX_INFO_IS_END(&arr[2]));
    PMIX_DATA_ARRAY_DESTRUCT(&da);
    assert_string_equal(ins.value.data.string, "i"); /* still the caller's */
    PMIX_INFO_DESTRUCT(&ins);
    PMIX_INFO_DESTRUCT(&xf);

    list = PMIx_Info_list_start();
    assert_int_equal(PMIx_Info_list_convert(list, &da), PMIX_ERR_EMPTY);
    PMIx_Info_list_release(list);
}

/* ------------------------------------------------------------------ */
/* header inline helpers                                                */
/* ------------------------------------------------------------------ */

static void header_macros_allocate_and_test_like_the_standard(void **state)
{
    pmix_info_t *info;
    pmix_data_array_t *da;
    pmix_device_distance_t *dd;
    pmix_value_t v;
    pmix_status_t rc;
    uint64_t n  = 0;
    int16_t s16 = -3;

    PMIX_INFO_CREATE(info, 2);
    assert_false(PMIX_INFO_IS_END(&info[0]));
    assert_true(PMIX_INFO_IS_END(&info[1]));
    assert_true(PMIX_INFO_TRUE(&info[0])); /* no value means true */
    PMIX_INFO_LOAD(&info[0], "b", "no", PMIX_STRING);
    assert_false(PMIX_INFO_TRUE(&info[0]));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], "b", "maybe", PMIX_STRING);
    assert_false(PMIX_CHECK_BOOL(&info[0].value));
    PMIX_INFO_FREE(info, 2);

    PMIX_DATA_ARRAY_CREATE(da, 3, PMIX_INFO);
    assert_true(PMIX_INFO_IS_END(&((pmix_info_t *)da->array)[2]));
    PMIX_DATA_ARRAY_FREE(da);
    PMIX_DATA_ARRAY_CREATE(da, 2, 400);
    assert_null(da->array);
    assert_int_equal(da->size, 0);
    PMIX_DATA_ARRAY_FREE(da);
    PMIX_DEVICE_DIST_CREATE(dd, 2);
    assert_int_equal(dd[1].mindist, UINT16_MAX);
    PMIX_DEVICE_DIST_FREE(dd, 2);
    assert_null(dd);

    PMIx_Value_load(&v, &s16, PMIX_INT16);
    PMIX_VALUE_GET_NUMBER(rc, &v, n, uint64_t);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(n == (uint64_t)-3);
    PMIx_Value_load(&v, "x", PMIX_STRING);
    PMIX_VALUE_GET_NUMBER(rc, &v, n, uint64_t);
    assert_int_equal(rc, PMIX_ERR_BAD_PARAM);
    PMIX_VALUE_DESTRUCT(&v);
}

static void header_argv_and_setenv_helpers_behave(void **state)
{
    char **argv = NULL, **env = NULL, *joined;
    pmix_status_t rc;

    argv = pmix_argv_split_with_empty(",a,,b", ',');
    assert_int_equal(pmix_argv_count(argv), 4);
    assert_string_equal(argv[0], "");
    pmix_argv_free(argv);
    argv = pmix_argv_split("a,,b,", ',');
    assert_int_equal(pmix_argv_count(argv), 2);
    PMIX_ARGV_PREPEND(rc, argv, "z");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "a");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "c");
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_ARGV_JOIN(joined, argv, ':');
    assert_string_equal(joined, "z:a:b:c");
    free(joined);
    PMIX_ARGV_FREE(argv);
    joined = pmix_argv_join(NULL, ',');
    assert_string_equal(joined, "");
    free(joined);
    assert_null(pmix_argv_split("", ','));

    assert_int_equal(pmix_setenv("A", "1", false, &env), PMIX_SUCCESS);
    assert_int_equal(pmix_setenv("A", "2", false, &env), PMIX_ERR_EXISTS);
    PMIX_SETENV(rc, "A", "3", &env);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_SETENV(rc, "AB", NULL, &env);
    assert_int_equal(pmix_argv_count(env), 2);
    assert_string_equal(env[0], "A=3");
    assert_string_equal(env[1], "AB=");
    pmix_argv_free(env);
}

/* The Standard's type of integer attributes, and lossless conversion. */
static void scalars_convert_only_without_loss(void **state)
{
    pmix_value_t in, out;

    assert_int_equal(rdp_attr_std_type(PMIX_APPNUM), PMIX_UINT32);
    assert_int_equal(rdp_attr_std_type(PMIX_LOCAL_RANK), PMIX_UINT16);
    assert_int_equal(rdp_attr_std_type(PMIX_RANK), PMIX_PROC_RANK);
    assert_int_equal(rdp_attr_std_type(PMIX_COLLECT_DATA), PMIX_BOOL);
    assert_int_equal(rdp_attr_std_type(PMIX_HOSTNAME), PMIX_UNDEF);
    assert_int_equal(rdp_attr_std_type("site.key"), PMIX_UNDEF);
    assert_int_equal(rdp_attr_std_type(NULL), PMIX_UNDEF);

    in.type         = PMIX_INT;
    in.data.integer = 7;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_UINT32, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.type, PMIX_UINT32);
    assert_int_equal(out.data.uint32, 7);
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_UINT16, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.data.uint16, 7);
    in.data.integer = -1;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_UINT32, &out),
                     PMIX_ERR_TYPE_MISMATCH);
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_INT32, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.data.int32, -1);
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_BOOL, &out),
                     PMIX_ERR_TYPE_MISMATCH);

    in.type        = PMIX_UINT64;
    in.data.uint64 = 65536;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_UINT16, &out),
                     PMIX_ERR_TYPE_MISMATCH);
    in.data.uint64 = (uint64_t)INT32_MAX + 1;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_INT, &out),
                     PMIX_ERR_TYPE_MISMATCH);
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_PROC_RANK, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.data.rank, (pmix_rank_t)INT32_MAX + 1);

    in.type       = PMIX_INT64;
    in.data.int64 = INT64_MIN;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_INT, &out),
                     PMIX_ERR_TYPE_MISMATCH);
    in.data.int64 = INT32_MIN;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_INT, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.data.integer, INT32_MIN);

    in.type       = PMIX_UINT8;
    in.data.uint8 = 1;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_BOOL, &out),
                     PMIX_SUCCESS);
    assert_true(out.data.flag);
    in.type = PMIX_UNDEF; /* PMIX_INFO_TRUE reads it as true */
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_BOOL, &out),
                     PMIX_SUCCESS);
    assert_true(out.data.flag);

    in.type        = PMIX_STRING;
    in.data.string = "3";
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_UINT32, &out),
                     PMIX_ERR_TYPE_MISMATCH);
    in.type         = PMIX_INT;
    in.data.integer = 3;
    assert_int_equal(rdp_value_convert_scalar(&in, PMIX_STRING, &out),
                     PMIX_ERR_TYPE_MISMATCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_scalar_type_loads_and_unloads_unchanged),
        cmocka_unit_test(
            strings_and_byte_objects_are_copied_on_load_and_unload),
        cmocka_unit_test(loading_without_data_gives_empty_value_and_true_bool),
        cmocka_unit_test(pointers_are_stored_and_returned_as_is),
        cmocka_unit_test(unknown_types_are_refused_and_leave_nothing_behind),
        cmocka_unit_test(nested_arrays_of_every_type_copy_deeply),
        cmocka_unit_test(value_destruct_frees_everything_and_resets),
        cmocka_unit_test(partially_filled_structs_destruct_cleanly),
        cmocka_unit_test(info_arrays_copy_with_end_flag_and_owned_values),
        cmocka_unit_test(info_load_clears_flags_and_xfer_shares_persistent),
        cmocka_unit_test(values_compare_by_type_then_contents),
        cmocka_unit_test(every_status_code_has_a_name),
        cmocka_unit_test(every_data_type_has_a_name),
        cmocka_unit_test(enumerations_print_readably),
        cmocka_unit_test(attribute_names_and_strings_map_both_ways),
        cmocka_unit_test(values_and_infos_render_as_text),
        cmocka_unit_test(data_copy_allocates_one_element),
        cmocka_unit_test(info_lists_convert_to_arrays),
        cmocka_unit_test(header_macros_allocate_and_test_like_the_standard),
        cmocka_unit_test(header_argv_and_setenv_helpers_behave),
        cmocka_unit_test(scalars_convert_only_without_loss),
    };

    return cmocka_run_group_tests_name("value", tests, NULL, NULL);
}
