/* test_topo.c - unit tests of core/topo: locality strings, relative
 * locality, cpusets and topologies (synthetic, so machine-independent) */
#include "config.h"
#include "core/topo/topo.h"
#include "core/util/value.h"

#include <pmix.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* 2 packages x 4 cores x 2 PUs, one NUMA node */
#define FLAT "pack:2 core:4 pu:2"
/* 2 packages, each an L3, two L2+L1d, each 2 cores x 2 PUs (16 PUs) */
#define CACHED "pack:2 l3:1 l2:2 l1d:1 core:2 pu:2"
/* 2 packages x 2 NUMA nodes (groups) x 2 cores x 2 PUs */
#define NUMA "pack:2 numa:2 core:2 pu:2"

static const pmix_locality_t ALL_SHARED =
    PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_NUMA
    | PMIX_LOCALITY_SHARE_PACKAGE | PMIX_LOCALITY_SHARE_L3CACHE
    | PMIX_LOCALITY_SHARE_L2CACHE | PMIX_LOCALITY_SHARE_L1CACHE
    | PMIX_LOCALITY_SHARE_CORE | PMIX_LOCALITY_SHARE_HWTHREAD;

static void load(const char *desc, pmix_topology_t *t)
{
    memset(t, 0, sizeof(*t));
    assert_int_equal(rdp_topo_load_synthetic(desc, t), PMIX_SUCCESS);
    assert_string_equal(t->source, "hwloc");
    assert_non_null(t->topology);
}

/* the locality string of @a cpuset in @a desc must be @a want (NULL:
 * unbound) */
static void check_loc(const char *desc, const char *cpuset, const char *want)
{
    pmix_topology_t t;
    char *loc = (char *)"sentinel";

    load(desc, &t);
    assert_int_equal(rdp_topo_locality_string(&t, cpuset, &loc), PMIX_SUCCESS);
    if (want == NULL) {
        assert_null(loc);
    } else {
        assert_non_null(loc);
        assert_string_equal(loc, want);
    }
    free(loc);
    PMIx_Topology_destruct(&t);
    assert_null(t.source);
    assert_null(t.topology);
}

static pmix_locality_t rel(const char *desc, const char *c1, const char *c2)
{
    pmix_topology_t t;
    char *l1, *l2;
    pmix_locality_t out = 0;

    load(desc, &t);
    assert_int_equal(rdp_topo_locality_string(&t, c1, &l1), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_locality_string(&t, c2, &l2), PMIX_SUCCESS);
    assert_int_equal(PMIx_Get_relative_locality(l1, l2, &out), PMIX_SUCCESS);
    free(l1);
    free(l2);
    PMIx_Topology_destruct(&t);
    return out;
}

/* ---- locality strings ---- */

static void locality_string_of_one_pu_names_every_level(void **state)
{
    check_loc(FLAT, "0", "NM0:SK0:CR0:HT0");
    check_loc(FLAT, "3", "NM0:SK0:CR1:HT3");
    check_loc(FLAT, "8", "NM0:SK1:CR4:HT8");
    check_loc(CACHED, "5", "NM0:SK0:L30:L21:L11:CR2:HT5");
    check_loc(CACHED, "15", "NM0:SK1:L31:L23:L13:CR7:HT15");
}

static void locality_string_lists_every_object_the_cpuset_meets(void **state)
{
    check_loc(FLAT, "0-1", "NM0:SK0:CR0:HT0-1");
    check_loc(FLAT, "1-2", "NM0:SK0:CR0-1:HT1-2");
    check_loc(FLAT, "7-8", "NM0:SK0-1:CR3-4:HT7-8");
    check_loc(FLAT, "0,8", "NM0:SK0-1:CR0,4:HT0,8");
    check_loc(NUMA, "4-5", "NM1:SK0:CR2:HT4-5");
    check_loc(NUMA, "8", "NM2:SK1:CR4:HT8");
}

static void locality_string_accepts_the_hwloc_prefix(void **state)
{
    check_loc(FLAT, "hwloc:0-1", "NM0:SK0:CR0:HT0-1");
    check_loc(FLAT, "HWLOC:2", "NM0:SK0:CR1:HT2");
}

static void unbound_process_has_no_locality_string(void **state)
{
    check_loc(FLAT, NULL, NULL);
    check_loc(FLAT, "", NULL);
    check_loc(FLAT, "0-15", NULL);
    /* bits beyond the machine do not make a process bound */
    check_loc(FLAT, "0-100", NULL);
}

static void locality_string_rejects_bad_cpusets(void **state)
{
    static const char *const bad[] = {
        "x",   "1-",  "-1",    "3-1",         "1,,2",   "1,",      ",1",
        "1 2", "0x1", "1-2-3", "99999999999", "hwloc:", "hwloc:a",
    };
    pmix_topology_t t;
    char *loc = NULL;

    load(FLAT, &t);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(rdp_topo_locality_string(&t, bad[i], &loc),
                         PMIX_ERR_BAD_PARAM);
        assert_null(loc);
    }
    /* no PU of the topology */
    assert_int_equal(rdp_topo_locality_string(&t, "16-20", &loc),
                     PMIX_ERR_BAD_PARAM);
    /* another source */
    assert_int_equal(rdp_topo_locality_string(&t, "foo:1", &loc),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(rdp_topo_locality_string(&t, "0", NULL),
                     PMIX_ERR_BAD_PARAM);
    PMIx_Topology_destruct(&t);
}

static void locality_of_a_cpuset_object(void **state)
{
    pmix_topology_t t;
    pmix_cpuset_t cs = PMIX_CPUSET_STATIC_INIT;
    char *loc        = (char *)"sentinel";

    /* rdp_topo_cpuset_locality works on the process topology: make it a
     * known one */
    rdp_topo_cleanup();
    load(FLAT, &t);
    {
        char *xml;
        pmix_info_t info;

        assert_int_equal(rdp_topo_export_xml(&t, false, &xml), PMIX_SUCCESS);
        PMIX_INFO_LOAD(&info, PMIX_HWLOC_XML_V2, xml, PMIX_STRING);
        assert_int_equal(rdp_topo_init(&info, 1), PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&info);
        free(xml);
    }
    PMIx_Topology_destruct(&t);

    assert_int_equal(PMIx_Parse_cpuset_string("2-3", &cs), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_cpuset_locality(&cs, &loc), PMIX_SUCCESS);
    assert_string_equal(loc, "NM0:SK0:CR1:HT2-3");
    free(loc);
    PMIx_Cpuset_destruct(&cs);

    /* no bitmap: unbound */
    loc = (char *)"sentinel";
    assert_int_equal(rdp_topo_cpuset_locality(&cs, &loc), PMIX_SUCCESS);
    assert_null(loc);
    cs.source = (char *)"other";
    cs.bitmap = (void *)&cs;
    assert_int_equal(rdp_topo_cpuset_locality(&cs, &loc),
                     PMIX_ERR_NOT_SUPPORTED);
    rdp_topo_cleanup();
}

/* ---- relative locality ---- */

static void relative_locality_of_synthetic_peers(void **state)
{
    const pmix_locality_t node_numa =
        PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_NUMA;
    const pmix_locality_t pkg = node_numa | PMIX_LOCALITY_SHARE_PACKAGE;

    /* hyperthreads of one core */
    assert_int_equal(rel(FLAT, "0", "1"), pkg | PMIX_LOCALITY_SHARE_CORE);
    /* same package, other core */
    assert_int_equal(rel(FLAT, "0", "2"), pkg);
    /* other package */
    assert_int_equal(rel(FLAT, "0", "8"), node_numa);
    /* the same PU */
    assert_int_equal(rel(FLAT, "5", "5"), pkg | PMIX_LOCALITY_SHARE_CORE
                                              | PMIX_LOCALITY_SHARE_HWTHREAD);
    /* overlapping sets share their common objects */
    assert_int_equal(rel(FLAT, "0-3", "3-4"),
                     pkg | PMIX_LOCALITY_SHARE_CORE
                         | PMIX_LOCALITY_SHARE_HWTHREAD);

    /* caches */
    assert_int_equal(rel(CACHED, "0", "0"), ALL_SHARED);
    assert_int_equal(rel(CACHED, "0", "2"), pkg | PMIX_LOCALITY_SHARE_L3CACHE
                                                | PMIX_LOCALITY_SHARE_L2CACHE
                                                | PMIX_LOCALITY_SHARE_L1CACHE);
    assert_int_equal(rel(CACHED, "0", "4"), pkg | PMIX_LOCALITY_SHARE_L3CACHE);
    assert_int_equal(rel(CACHED, "0", "8"), node_numa);

    /* NUMA nodes inside packages */
    assert_int_equal(rel(NUMA, "0", "2"), pkg);
    assert_int_equal(rel(NUMA, "0", "4"),
                     PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_PACKAGE);
    assert_int_equal(rel(NUMA, "0", "8"), PMIX_LOCALITY_SHARE_NODE);
}

static void relative_locality_reads_open_mpi_strings(void **state)
{
    pmix_locality_t loc = 0;

    /* the format Open MPI 4.1 generates (no NUMA field) */
    assert_int_equal(PMIx_Get_relative_locality("SK0:L30:L20:L10:CR0:HT0-1",
                                                "SK0:L30:L20:L11:CR1:HT2-3",
                                                &loc),
                     PMIX_SUCCESS);
    assert_int_equal(loc, PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_PACKAGE
                              | PMIX_LOCALITY_SHARE_L3CACHE
                              | PMIX_LOCALITY_SHARE_L2CACHE);
    /* fields in any order; unknown prefixes are ignored */
    assert_int_equal(
        PMIx_Get_relative_locality("HT4:CR2:XY7:SK1", "SK1:ZZ0:CR2", &loc),
        PMIX_SUCCESS);
    assert_int_equal(loc, PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_PACKAGE
                              | PMIX_LOCALITY_SHARE_CORE);
}

static void unbound_peers_share_only_the_node(void **state)
{
    pmix_locality_t loc = 0;

    assert_int_equal(PMIx_Get_relative_locality(NULL, "SK0:CR0", &loc),
                     PMIX_SUCCESS);
    assert_int_equal(loc, PMIX_LOCALITY_SHARE_NODE);
    assert_int_equal(PMIx_Get_relative_locality("SK0", NULL, &loc),
                     PMIX_SUCCESS);
    assert_int_equal(loc, PMIX_LOCALITY_SHARE_NODE);
    assert_int_equal(PMIx_Get_relative_locality("", "", &loc), PMIX_SUCCESS);
    assert_int_equal(loc, PMIX_LOCALITY_SHARE_NODE);
}

static void malformed_locality_strings_are_refused(void **state)
{
    static const char *const bad[] = {
        "SK",   "SKx",     "SK0:",  ":SK0",  "SK0::CR0",
        "S",    "SK-",     "SK0-x", "SK1-0", "CR0,",
        "HT0 ", "SK0;CR1", "S0",    "XY",    "SK0:CR99999999999",
    };
    pmix_locality_t loc = 0x1234;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(PMIx_Get_relative_locality(bad[i], "SK0", &loc),
                         PMIX_ERR_BAD_PARAM);
        assert_int_equal(PMIx_Get_relative_locality("SK0", bad[i], &loc),
                         PMIX_ERR_BAD_PARAM);
    }
    assert_int_equal(loc, 0x1234); /* untouched on error */
    assert_int_equal(PMIx_Get_relative_locality("SK0", "SK0", NULL),
                     PMIX_ERR_BAD_PARAM);
}

/* ---- cpusets ---- */

static void cpuset_string_round_trips(void **state)
{
    pmix_cpuset_t cs = PMIX_CPUSET_STATIC_INIT;
    char *s;

    assert_int_equal(PMIx_Parse_cpuset_string("hwloc:0-3,8", &cs),
                     PMIX_SUCCESS);
    assert_string_equal(cs.source, "hwloc");
    assert_non_null(cs.bitmap);
    assert_int_equal(rdp_topo_cpuset_print(&cs, &s), PMIX_SUCCESS);
    assert_string_equal(s, "hwloc:0-3,8");
    free(s);
    PMIx_Cpuset_destruct(&cs);
    assert_null(cs.source);
    assert_null(cs.bitmap);

    /* a bare list, unsorted and overlapping */
    assert_int_equal(PMIx_Parse_cpuset_string("5,1-2,2,0", &cs), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_cpuset_print(&cs, &s), PMIX_SUCCESS);
    assert_string_equal(s, "hwloc:0-2,5");
    free(s);
    PMIx_Cpuset_destruct(&cs);
    PMIx_Cpuset_destruct(NULL);
}

static void bad_cpuset_strings_are_refused(void **state)
{
    pmix_cpuset_t cs = PMIX_CPUSET_STATIC_INIT;

    assert_int_equal(PMIx_Parse_cpuset_string(NULL, &cs), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Parse_cpuset_string("0", NULL), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Parse_cpuset_string("", &cs), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Parse_cpuset_string("1-x", &cs), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Parse_cpuset_string("0-1048576", &cs),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Parse_cpuset_string("other:1", &cs),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_null(cs.source);
    assert_null(cs.bitmap);

    assert_int_equal(rdp_topo_cpuset_print(&cs, NULL), PMIX_ERR_BAD_PARAM);
    cs.source = (char *)"hwloc";
    {
        char *s = NULL;
        assert_int_equal(rdp_topo_cpuset_print(&cs, &s), PMIX_ERR_BAD_PARAM);
        assert_null(s);
    }
}

static void cpuset_values_deep_copy(void **state)
{
    pmix_cpuset_t cs = PMIX_CPUSET_STATIC_INIT;
    pmix_value_t v, copy;
    char *s;

    assert_int_equal(PMIx_Parse_cpuset_string("1,3-4", &cs), PMIX_SUCCESS);
    v.type        = PMIX_PROC_CPUSET;
    v.data.cpuset = &cs;
    assert_int_equal(rdp_value_copy(&copy, &v), PMIX_SUCCESS);
    assert_int_equal(copy.type, PMIX_PROC_CPUSET);
    assert_ptr_not_equal(copy.data.cpuset, &cs);
    assert_ptr_not_equal(copy.data.cpuset->bitmap, cs.bitmap);
    /* the copy outlives the original */
    PMIx_Cpuset_destruct(&cs);
    assert_int_equal(rdp_topo_cpuset_print(copy.data.cpuset, &s), PMIX_SUCCESS);
    assert_string_equal(s, "hwloc:1,3-4");
    free(s);
    rdp_value_destruct(&copy); /* frees the bitmap (ASan checks) */
}

static void get_cpuset_reports_this_process_binding(void **state)
{
    pmix_cpuset_t cs = PMIX_CPUSET_STATIC_INIT;
    char *s;

    rdp_topo_cleanup(); /* discover this machine */
    assert_int_equal(PMIx_Get_cpuset(&cs, 7), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Get_cpuset(NULL, PMIX_CPUBIND_PROCESS),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Get_cpuset(&cs, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_cpuset_print(&cs, &s), PMIX_SUCCESS);
    assert_true(strlen(s) > strlen("hwloc:"));
    free(s);
    PMIx_Cpuset_destruct(&cs);
    assert_int_equal(PMIx_Get_cpuset(&cs, PMIX_CPUBIND_THREAD), PMIX_SUCCESS);
    PMIx_Cpuset_destruct(&cs);
    rdp_topo_cleanup();
}

/* ---- topologies ---- */

static void init_xml_becomes_the_process_topology(void **state)
{
    pmix_topology_t t, mine = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_topology_t again = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_info_t info[2];
    unsigned n = 0;
    char *xml;
    char *loc;

    rdp_topo_cleanup();
    load(CACHED, &t);
    assert_int_equal(rdp_topo_export_xml(&t, false, &xml), PMIX_SUCCESS);
    PMIx_Topology_destruct(&t);

    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &n, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_HWLOC_XML_V2, xml, PMIX_STRING);
    assert_int_equal(rdp_topo_init(info, 2), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    free(xml);

    assert_int_equal(PMIx_Load_topology(&mine), PMIX_SUCCESS);
    assert_string_equal(mine.source, "hwloc");
    assert_int_equal(rdp_topo_count(&mine, PMIX_LOCALITY_SHARE_HWTHREAD, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 16);
    assert_int_equal(rdp_topo_count(NULL, PMIX_LOCALITY_SHARE_L2CACHE, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 4);
    assert_int_equal(rdp_topo_count(NULL, PMIX_LOCALITY_SHARE_NODE, &n),
                     PMIX_ERR_BAD_PARAM);

    /* the process topology is shared: a second load returns the same
     * object, and destructing a handle leaves it alive */
    assert_int_equal(PMIx_Load_topology(&again), PMIX_SUCCESS);
    assert_ptr_equal(again.topology, mine.topology);
    PMIx_Topology_destruct(&again);
    assert_int_equal(rdp_topo_locality_string(NULL, "4", &loc), PMIX_SUCCESS);
    assert_string_equal(loc, "NM0:SK0:L30:L21:L11:CR2:HT4");
    free(loc);

    /* a later init cannot replace it */
    PMIX_INFO_LOAD(&info[0], PMIX_HWLOC_XML_V2, "not xml", PMIX_STRING);
    assert_int_equal(rdp_topo_init(info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info[0]);
    assert_int_equal(rdp_topo_count(NULL, PMIX_LOCALITY_SHARE_HWTHREAD, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 16);

    PMIx_Topology_destruct(&mine);
    rdp_topo_cleanup();
}

static void init_topology2_object_is_duplicated(void **state)
{
    pmix_topology_t t, mine = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_info_t info;
    unsigned n = 0;

    rdp_topo_cleanup();
    load(NUMA, &t);
    PMIX_INFO_LOAD(&info, PMIX_TOPOLOGY2, &t, PMIX_TOPO);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    PMIx_Topology_destruct(&t); /* the caller's own is gone ... */

    assert_int_equal(PMIx_Load_topology(&mine), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_count(&mine, PMIX_LOCALITY_SHARE_NUMA, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 4); /* ... ours is not */
    PMIx_Topology_destruct(&mine);
    rdp_topo_cleanup();
}

static void init_refuses_unusable_topologies(void **state)
{
    pmix_topology_t other = {.source = (char *)"other", .topology = &other};
    pmix_info_t info;
    int x = 3;

    rdp_topo_cleanup();
    assert_int_equal(rdp_topo_init(NULL, 1), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_topo_init(NULL, 0), PMIX_SUCCESS);

    PMIX_INFO_LOAD(&info, PMIX_HWLOC_XML_V2, &x, PMIX_INT);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);

    PMIX_INFO_LOAD(&info, PMIX_TOPOLOGY_XML, "<nonsense/>", PMIX_STRING);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);

    PMIX_INFO_LOAD(&info, PMIX_TOPOLOGY_FILE, "/nonexistent/topo.xml",
                   PMIX_STRING);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);

    /* a borrowed value: no deep copy (its hooks would refuse "other") */
    memset(&info, 0, sizeof(info));
    PMIX_LOAD_KEY(info.key, PMIX_TOPOLOGY2);
    info.value.type      = PMIX_TOPO;
    info.value.data.topo = &other;
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_ERR_NOT_SUPPORTED);

    assert_int_equal(PMIx_Load_topology(&other), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Load_topology(NULL), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_topo_load_synthetic("pack:x", &other),
                     PMIX_ERR_BAD_PARAM);
    assert_string_equal(other.source, "other");
}

static void topology_values_deep_copy(void **state)
{
    pmix_topology_t t;
    pmix_topology_t mine = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_value_t v, copy;
    unsigned n = 0;
    char *xml;
    pmix_info_t info;

    /* a foreign topology is duplicated: the copy outlives the original */
    load(FLAT, &t);
    v.type      = PMIX_TOPO;
    v.data.topo = &t;
    assert_int_equal(rdp_value_copy(&copy, &v), PMIX_SUCCESS);
    assert_ptr_not_equal(copy.data.topo->topology, t.topology);
    PMIx_Topology_destruct(&t);
    assert_int_equal(
        rdp_topo_count(copy.data.topo, PMIX_LOCALITY_SHARE_CORE, &n),
        PMIX_SUCCESS);
    assert_int_equal(n, 8);
    rdp_value_destruct(&copy);

    /* the process topology is shared by copies and never destroyed by a
     * value destruct */
    rdp_topo_cleanup();
    load(FLAT, &t);
    assert_int_equal(rdp_topo_export_xml(&t, true, &xml), PMIX_SUCCESS);
    PMIx_Topology_destruct(&t);
    PMIX_INFO_LOAD(&info, PMIX_HWLOC_XML_V1, xml, PMIX_STRING);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    free(xml);
    assert_int_equal(PMIx_Load_topology(&mine), PMIX_SUCCESS);
    v.data.topo = &mine;
    assert_int_equal(rdp_value_copy(&copy, &v), PMIX_SUCCESS);
    assert_ptr_equal(copy.data.topo->topology, mine.topology);
    rdp_value_destruct(&copy);
    assert_int_equal(rdp_topo_count(&mine, PMIX_LOCALITY_SHARE_CORE, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 8);
    PMIx_Topology_destruct(&mine);
    rdp_topo_cleanup();
}

/* What rdpmixd registers as PMIX_HWLOC_XML_V2: this machine, loadable as
 * the process topology, with the PUs a discovery finds. */
static void machine_xml_describes_this_machine(void **state)
{
    pmix_topology_t mine = {NULL, NULL};
    pmix_info_t info;
    char *xml = NULL;
    unsigned npu, want;

    (void)state;
    rdp_topo_cleanup();
    assert_int_equal(rdp_topo_count(NULL, PMIX_LOCALITY_SHARE_HWTHREAD, &want),
                     PMIX_SUCCESS); /* discovered */
    rdp_topo_cleanup();
    assert_int_equal(rdp_topo_machine_xml(&xml), PMIX_SUCCESS);
    assert_non_null(strstr(xml, "<topology"));
    PMIX_INFO_LOAD(&info, PMIX_HWLOC_XML_V2, xml, PMIX_STRING);
    assert_int_equal(rdp_topo_init(&info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    free(xml);
    assert_int_equal(PMIx_Load_topology(&mine), PMIX_SUCCESS);
    assert_int_equal(rdp_topo_count(&mine, PMIX_LOCALITY_SHARE_HWTHREAD, &npu),
                     PMIX_SUCCESS);
    assert_int_equal(npu, want);
    assert_int_equal(rdp_topo_machine_xml(NULL), PMIX_ERR_BAD_PARAM);
    PMIx_Topology_destruct(&mine);
    rdp_topo_cleanup();
}

static void compute_distances_is_not_supported(void **state)
{
    pmix_device_distance_t *d = NULL;
    size_t nd                 = 0;

    assert_int_equal(PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, &nd),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, NULL, NULL),
                     PMIX_ERR_NOT_SUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(locality_string_of_one_pu_names_every_level),
        cmocka_unit_test(locality_string_lists_every_object_the_cpuset_meets),
        cmocka_unit_test(locality_string_accepts_the_hwloc_prefix),
        cmocka_unit_test(unbound_process_has_no_locality_string),
        cmocka_unit_test(locality_string_rejects_bad_cpusets),
        cmocka_unit_test(locality_of_a_cpuset_object),
        cmocka_unit_test(relative_locality_of_synthetic_peers),
        cmocka_unit_test(relative_locality_reads_open_mpi_strings),
        cmocka_unit_test(unbound_peers_share_only_the_node),
        cmocka_unit_test(malformed_locality_strings_are_refused),
        cmocka_unit_test(cpuset_string_round_trips),
        cmocka_unit_test(bad_cpuset_strings_are_refused),
        cmocka_unit_test(cpuset_values_deep_copy),
        cmocka_unit_test(get_cpuset_reports_this_process_binding),
        cmocka_unit_test(init_xml_becomes_the_process_topology),
        cmocka_unit_test(init_topology2_object_is_duplicated),
        cmocka_unit_test(init_refuses_unusable_topologies),
        cmocka_unit_test(topology_values_deep_copy),
        cmocka_unit_test(machine_xml_describes_this_machine),
        cmocka_unit_test(compute_distances_is_not_supported),
    };

    /* hwloc's pci plugin (libpciaccess) leaves its state allocated when
     * the last topology is destroyed and the plugin unloaded; LeakSanitizer
     * then reports it with no module name a suppression could match.  No
     * test here needs PCI devices. */
    setenv("HWLOC_COMPONENTS", "-pci", 0);

    return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
