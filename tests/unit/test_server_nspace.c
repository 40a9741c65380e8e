/* test_server_nspace.c - job registration: ingest, derived keys, packing */
#include "config.h"
#include "core/server/regex.h"
#include "core/server/server_int.h"

#include <pmix.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define J RDP_SRV_KVS_JOB

static int setup(void **state)
{
    memset(&rdp_srv, 0, sizeof(rdp_srv));
    rdp_list_init(&rdp_srv.nspaces);
    rdp_srv.hostname = strdup("node02");
    return rdp_srv.hostname == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    rdp_srv_nspace_t *ns, *tmp;

    rdp_list_for_each_safe(ns, tmp, &rdp_srv.nspaces, link) {
        rdp_list_del(&ns->link);
        rdp_srv_nspace_destroy(ns);
    }
    free(rdp_srv.hostname);
    rdp_srv.hostname = NULL;
    return 0;
}

/* ---- building host info ---- */

typedef struct ilist {
    pmix_info_t info[64];
    size_t n;
} ilist_t;

static void add(ilist_t *l, const char *key, const void *v, pmix_data_type_t t)
{
    assert_true(l->n < 64);
    PMIX_INFO_LOAD(&l->info[l->n], key, v, t);
    l->n++;
}

static void add_u32(ilist_t *l, const char *key, uint32_t v)
{
    add(l, key, &v, PMIX_UINT32);
}

static void add_str(ilist_t *l, const char *key, const char *s)
{
    add(l, key, s, PMIX_STRING);
}

/* Append a data array of the infos in @a sub under @a key. */
static void add_array(ilist_t *l, const char *key, ilist_t *sub)
{
    pmix_data_array_t da;

    PMIX_DATA_ARRAY_CONSTRUCT(&da, sub->n, PMIX_INFO);
    for (size_t i = 0; i < sub->n; i++) {
        PMIX_INFO_XFER(&((pmix_info_t *)da.array)[i], &sub->info[i]);
    }
    add(l, key, &da, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&da);
    for (size_t i = 0; i < sub->n; i++) {
        PMIX_INFO_DESTRUCT(&sub->info[i]);
    }
    sub->n = 0;
}

static void ilist_free(ilist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        PMIX_INFO_DESTRUCT(&l->info[i]);
    }
    l->n = 0;
}

static rdp_srv_nspace_t *ingest(const char *name, int nlocal, ilist_t *l,
                                pmix_status_t expect)
{
    rdp_srv_nspace_t *ns = NULL;

    assert_int_equal(rdp_srv_nspace_get(name, &ns), PMIX_SUCCESS);
    assert_int_equal(rdp_srv_nspace_ingest(ns, nlocal, l->info, l->n), expect);
    ilist_free(l);
    return ns;
}

/* ---- checking the store ---- */

static const pmix_value_t *peek(rdp_srv_nspace_t *ns, const char *sect,
                                pmix_rank_t id, const char *key)
{
    const pmix_value_t *v = rdp_kvs_peek(ns->info, sect, id, key);

    if (v == NULL) {
        fail_msg("%s missing in section %s id %u", key, sect, id);
    }
    return v;
}

static void expect_u32(rdp_srv_nspace_t *ns, const char *sect, pmix_rank_t id,
                       const char *key, uint32_t want)
{
    const pmix_value_t *v = peek(ns, sect, id, key);

    assert_int_equal(v->type, PMIX_UINT32);
    assert_int_equal(v->data.uint32, want);
}

static void expect_u16(rdp_srv_nspace_t *ns, pmix_rank_t r, const char *key,
                       uint16_t want)
{
    const pmix_value_t *v = peek(ns, J, r, key);

    assert_int_equal(v->type, PMIX_UINT16);
    assert_int_equal(v->data.uint16, want);
}

static void expect_rank(rdp_srv_nspace_t *ns, const char *sect, pmix_rank_t id,
                        const char *key, pmix_rank_t want)
{
    const pmix_value_t *v = peek(ns, sect, id, key);

    assert_int_equal(v->type, PMIX_PROC_RANK);
    assert_int_equal(v->data.rank, want);
}

static void expect_str(rdp_srv_nspace_t *ns, const char *sect, pmix_rank_t id,
                       const char *key, const char *want)
{
    const pmix_value_t *v = peek(ns, sect, id, key);

    assert_int_equal(v->type, PMIX_STRING);
    assert_string_equal(v->data.string, want);
}

/* ---- tests ---- */

/* What ORTE gives: maps from our generators and little else. */
static void maps_give_every_derived_key(void **state)
{
    ilist_t l  = {0};
    char *nmap = NULL, *pmap = NULL;
    rdp_srv_nspace_t *ns;

    assert_int_equal(rdp_server_regex_generate("node01,node02,node03", &nmap),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_server_ppn_generate("0,1;2,3,4;5", &pmap),
                     PMIX_SUCCESS);
    add_str(&l, PMIX_NODE_MAP, nmap);
    add_str(&l, PMIX_PROC_MAP, pmap);
    add_u32(&l, PMIX_JOB_NUM_APPS, 1);
    free(nmap);
    free(pmap);
    ns = ingest("orte", 3, &l, PMIX_SUCCESS);

    assert_true(ns->registered);
    assert_int_equal(ns->size, 6);
    assert_int_equal(ns->nlocal, 3);
    assert_int_equal(ns->local_ranks[0], 2);
    assert_int_equal(ns->local_ranks[2], 4);
    assert_true(rdp_srv_nspace_is_local(ns, 3));
    assert_false(rdp_srv_nspace_is_local(ns, 5));

    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 6);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_MAX_PROCS, 6);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, 6);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, 3);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, 3);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_NODE_SIZE, 3);
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, "2,3,4");
    expect_rank(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCALLDR, 2);
    /* the node map's names in its order, as OpenPMIx 4.2.2 lists them */
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_NODE_LIST,
               "node01,node02,node03");

    expect_u16(ns, 3, PMIX_LOCAL_RANK, 1);
    expect_u16(ns, 3, PMIX_NODE_RANK, 1);
    expect_u32(ns, J, 3, PMIX_NODEID, 1);
    expect_str(ns, J, 3, PMIX_HOSTNAME, "node02");
    expect_u32(ns, J, 3, PMIX_APPNUM, 0);
    expect_u16(ns, 5, PMIX_LOCAL_RANK, 0);
    expect_u32(ns, J, 5, PMIX_NODEID, 2);
    expect_str(ns, J, 5, PMIX_HOSTNAME, "node03");
    expect_u16(ns, 1, PMIX_NODE_RANK, 1);

    expect_str(ns, RDP_SRV_KVS_NODE, 0, PMIX_HOSTNAME, "node01");
    expect_str(ns, RDP_SRV_KVS_NODE, 0, PMIX_LOCAL_PEERS, "0,1");
    expect_u32(ns, RDP_SRV_KVS_NODE, 2, PMIX_LOCAL_SIZE, 1);
    expect_rank(ns, RDP_SRV_KVS_NODE, 1, PMIX_LOCALLDR, 2);
    expect_u32(ns, RDP_SRV_KVS_APP, 0, PMIX_APP_SIZE, 6);
    expect_rank(ns, RDP_SRV_KVS_APP, 0, PMIX_APPLDR, 0);
    /* app- and node-level keys are known for each of their procs */
    assert_true(rdp_srv_nspace_has_key(ns, 3, PMIX_APP_SIZE));
    assert_true(rdp_srv_nspace_has_key(ns, 5, PMIX_LOCAL_PEERS));
    assert_false(rdp_srv_nspace_has_key(ns, 5, "no.such.key"));
    /* no cpuset given: no locality string is invented */
    assert_null(rdp_kvs_peek(ns->info, J, 3, PMIX_LOCALITY_STRING));
}

static void host_values_win_over_derived_ones(void **state)
{
    ilist_t l = {0}, p = {0};
    pmix_rank_t r = 1;
    uint16_t lr   = 7;
    rdp_srv_nspace_t *ns;

    add_u32(&l, PMIX_JOB_SIZE, 2);
    add_u32(&l, PMIX_UNIV_SIZE, 100);
    add_str(&l, PMIX_NODE_LIST, "given,list");
    add_str(&l, PMIX_NODE_MAP, "node02");
    add_str(&l, PMIX_PROC_MAP, "0,1");
    add(&p, PMIX_RANK, &r, PMIX_PROC_RANK);
    add(&p, PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
    add_str(&p, "custom.key", "kept");
    add_array(&l, PMIX_PROC_DATA, &p);
    ns = ingest("given", 2, &l, PMIX_SUCCESS);

    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, 100);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_MAX_PROCS, 2);
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_NODE_LIST, "given,list");
    expect_u16(ns, 1, PMIX_LOCAL_RANK, 7);
    expect_u16(ns, 1, PMIX_NODE_RANK, 1);
    expect_str(ns, J, 1, "custom.key", "kept");
    assert_true(rdp_srv_nspace_has_key(ns, 1, "custom.key"));
    assert_true(rdp_srv_nspace_has_key(ns, 0, PMIX_JOB_SIZE));
    assert_false(rdp_srv_nspace_has_key(ns, 0, "custom.key"));
    assert_false(rdp_srv_nspace_has_key(ns, 0, NULL));
}

static void proc_data_hostnames_place_ranks(void **state)
{
    ilist_t l = {0}, p = {0};
    const char *hosts[] = {"a", "a", "node02.example.org", "b"};
    rdp_srv_nspace_t *ns;

    for (pmix_rank_t r = 0; r < 4; r++) {
        add(&p, PMIX_RANK, &r, PMIX_PROC_RANK);
        add_str(&p, PMIX_HOSTNAME, hosts[r]);
        add_array(&l, PMIX_PROC_DATA, &p);
    }
    ns = ingest("pdata", 1, &l, PMIX_SUCCESS);
    assert_int_equal(ns->size, 4);
    assert_int_equal(ns->nlocal, 1); /* short names match */
    assert_int_equal(ns->local_ranks[0], 2);
    expect_u16(ns, 1, PMIX_LOCAL_RANK, 1);
    expect_u16(ns, 3, PMIX_LOCAL_RANK, 0);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, 3);
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, "2");
    /* no node map: the hosts named, in the order first seen */
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_NODE_LIST,
               "a,node02.example.org,b");
}

static void node_ids_from_the_host_are_kept(void **state)
{
    ilist_t l = {0}, p = {0};
    uint32_t id = 42;
    rdp_srv_nspace_t *ns;

    add_u32(&l, PMIX_JOB_SIZE, 2);
    add_str(&l, PMIX_NODE_MAP, "node02,other");
    add_str(&l, PMIX_PROC_MAP, "0;1");
    add_str(&p, PMIX_HOSTNAME, "other");
    add(&p, PMIX_NODEID, &id, PMIX_UINT32);
    add_str(&p, "node.key", "x");
    add_array(&l, PMIX_NODE_INFO, &p);
    ns = ingest("nodeinfo", 1, &l, PMIX_SUCCESS);
    expect_u32(ns, J, 1, PMIX_NODEID, 42);
    expect_u32(ns, J, 0, PMIX_NODEID, 0);
    expect_str(ns, RDP_SRV_KVS_NODE, 42, "node.key", "x");
    expect_str(ns, RDP_SRV_KVS_NODE, 42, PMIX_LOCAL_PEERS, "1");
}

static void no_map_means_all_local_or_local_peers(void **state)
{
    ilist_t l = {0};
    rdp_srv_nspace_t *ns;

    add_u32(&l, PMIX_JOB_SIZE, 4);
    ns = ingest("nomap", 4, &l, PMIX_SUCCESS);
    assert_int_equal(ns->nlocal, 4);
    expect_str(ns, J, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, "0,1,2,3");
    expect_u16(ns, 3, PMIX_LOCAL_RANK, 3);
    expect_str(ns, J, 3, PMIX_HOSTNAME, "node02");

    add_u32(&l, PMIX_JOB_SIZE, 4);
    add_str(&l, PMIX_LOCAL_PEERS, "1,3");
    ns = ingest("peers", 2, &l, PMIX_SUCCESS);
    assert_int_equal(ns->nlocal, 2);
    assert_true(rdp_srv_nspace_is_local(ns, 3));
    assert_false(rdp_srv_nspace_is_local(ns, 2));
    expect_u16(ns, 3, PMIX_LOCAL_RANK, 1);
    assert_null(rdp_kvs_peek(ns->info, J, 2, PMIX_LOCAL_RANK));
    expect_u32(ns, J, 2, PMIX_APPNUM, 0);

    /* nothing at all: nlocalprocs ranks, all here */
    ns = ingest("bare", 2, &l, PMIX_SUCCESS);
    assert_int_equal(ns->size, 2);
    assert_int_equal(ns->nlocal, 2);
}

static void apps_split_ranks(void **state)
{
    ilist_t l = {0}, a    = {0};
    uint32_t appnum, size = 2;
    pmix_rank_t ldr;
    rdp_srv_nspace_t *ns;

    add_u32(&l, PMIX_JOB_SIZE, 4);
    for (appnum = 0; appnum < 2; appnum++) {
        ldr = 2 * appnum;
        add(&a, PMIX_APPNUM, &appnum, PMIX_UINT32);
        add(&a, PMIX_APPLDR, &ldr, PMIX_PROC_RANK);
        add(&a, PMIX_APP_SIZE, &size, PMIX_UINT32);
        add_array(&l, PMIX_APP_INFO, &a);
    }
    ns = ingest("mpmd", 4, &l, PMIX_SUCCESS);
    expect_u32(ns, J, 1, PMIX_APPNUM, 0);
    expect_u32(ns, J, 3, PMIX_APPNUM, 1);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_JOB_NUM_APPS, 2);
    expect_rank(ns, RDP_SRV_KVS_APP, 1, PMIX_APPLDR, 2);
}

static void bad_job_info_is_refused_cleanly(void **state)
{
    ilist_t l = {0}, p = {0};
    uint32_t u = 3;
    rdp_srv_nspace_t *ns;

    /* proc data without a rank */
    add_str(&p, PMIX_HOSTNAME, "x");
    add_array(&l, PMIX_PROC_DATA, &p);
    ns = ingest("bad1", 1, &l, PMIX_ERR_BAD_PARAM);
    assert_false(ns->registered);
    assert_false(rdp_kvs_has_rank(ns->info, J, PMIX_RANK_WILDCARD));

    /* proc data that is not an array */
    add_u32(&l, PMIX_PROC_DATA, 1);
    ingest("bad2", 1, &l, PMIX_ERR_BAD_PARAM);

    /* a rank on two nodes */
    add_str(&l, PMIX_NODE_MAP, "a,b");
    add_str(&l, PMIX_PROC_MAP, "0,1;1");
    ingest("bad3", 1, &l, PMIX_ERR_BAD_PARAM);

    /* maps of different lengths */
    add_str(&l, PMIX_NODE_MAP, "a,b");
    add_str(&l, PMIX_PROC_MAP, "0,1");
    ingest("bad4", 1, &l, PMIX_ERR_BAD_PARAM);

    /* mapped rank beyond the job size */
    add_u32(&l, PMIX_JOB_SIZE, 2);
    add_str(&l, PMIX_PROC_MAP, "0,1,2");
    ingest("bad5", 1, &l, PMIX_ERR_BAD_PARAM);

    /* garbage maps */
    add_str(&l, PMIX_NODE_MAP, "rdpmix:n[2:9-1]");
    ingest("bad6", 1, &l, PMIX_ERR_BAD_PARAM);
    add_str(&l, PMIX_PROC_MAP, "rdpmix-ppn:x");
    ingest("bad7", 1, &l, PMIX_ERR_BAD_PARAM);
    add(&l, PMIX_JOB_SIZE, "str", PMIX_STRING);
    ingest("bad8", 1, &l, PMIX_ERR_BAD_PARAM);

    /* a node array with no identity */
    add(&p, "x.y", &u, PMIX_UINT32);
    add_array(&l, PMIX_NODE_INFO, &p);
    ingest("bad9", 1, &l, PMIX_ERR_BAD_PARAM);
}

/* Slurm 22.05 gives every rank its own node's id next to the rank's right
 * hostname: registration goes on, ids come from the node map, the same
 * ones on every node. */
static void contradictory_node_ids_follow_the_node_map(void **state)
{
    for (uint32_t registering = 0; registering < 3; registering++) {
        ilist_t l = {0}, p = {0};
        const char *hosts[] = {"node01", "node02", "node03"};
        char name[16];
        rdp_srv_nspace_t *ns;

        add_u32(&l, PMIX_JOB_SIZE, 6);
        add_str(&l, PMIX_NODE_MAP, "node01,node02,node03");
        add_str(&l, PMIX_PROC_MAP, "0,1;2,3;4,5");
        for (pmix_rank_t r = 0; r < 6; r++) {
            add(&p, PMIX_RANK, &r, PMIX_PROC_RANK);
            add_str(&p, PMIX_HOSTNAME, hosts[r / 2]);
            add_u32(&p, PMIX_NODEID, registering);
            add_array(&l, PMIX_PROC_DATA, &p);
        }
        snprintf(name, sizeof(name), "slurm%u", registering);
        ns = ingest(name, 2, &l, PMIX_SUCCESS);
        for (pmix_rank_t r = 0; r < 6; r++) {
            expect_u32(ns, J, r, PMIX_NODEID, r / 2);
            expect_str(ns, J, r, PMIX_HOSTNAME, hosts[r / 2]);
        }
        expect_u32(ns, RDP_SRV_KVS_NODE, 2, PMIX_NODEID, 2);
        expect_str(ns, RDP_SRV_KVS_NODE, 2, PMIX_HOSTNAME, "node03");
        assert_int_equal(ns->nlocal, 2);
        assert_int_equal(ns->local_ranks[0], 2); /* this is node02 */
    }
}

/* Consistent per-process ids are the host's to choose, even unordered. */
static void consistent_proc_node_ids_are_kept(void **state)
{
    ilist_t l = {0}, p = {0};
    const char *hosts[]  = {"x", "node02", "x"};
    const uint32_t ids[] = {7, 3, 7};
    rdp_srv_nspace_t *ns;

    for (pmix_rank_t r = 0; r < 3; r++) {
        add(&p, PMIX_RANK, &r, PMIX_PROC_RANK);
        add_str(&p, PMIX_HOSTNAME, hosts[r]);
        add_u32(&p, PMIX_NODEID, ids[r]);
        add_array(&l, PMIX_PROC_DATA, &p);
    }
    ns = ingest("ids", 1, &l, PMIX_SUCCESS);
    expect_u32(ns, J, 0, PMIX_NODEID, 7);
    expect_u32(ns, J, 1, PMIX_NODEID, 3);
    expect_u32(ns, J, 2, PMIX_NODEID, 7);
    expect_str(ns, RDP_SRV_KVS_NODE, 7, PMIX_HOSTNAME, "x");
}

/* Standard keys in the wrong type are stored in the Standard's. */
static void standard_keys_get_the_standard_type(void **state)
{
    ilist_t l = {0}, p = {0};
    int appnum = 0, negative = -1;
    uint64_t lrank = 1;
    int64_t size   = 2;
    rdp_srv_nspace_t *ns;

    add(&l, PMIX_JOB_SIZE, &size, PMIX_INT64);
    add(&l, PMIX_APPNUM, &appnum, PMIX_INT);
    add_str(&l, "site.key", "free-form keys are left alone");
    for (pmix_rank_t r = 0; r < 2; r++) {
        add(&p, PMIX_RANK, &r, PMIX_PROC_RANK);
        add(&p, PMIX_APPNUM, &appnum, PMIX_INT);
        add(&p, PMIX_LOCAL_RANK, &lrank, PMIX_UINT64);
        add_array(&l, PMIX_PROC_DATA, &p);
    }
    ns = ingest("types", 2, &l, PMIX_SUCCESS);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 2);
    expect_u32(ns, J, PMIX_RANK_WILDCARD, PMIX_APPNUM, 0);
    expect_u32(ns, J, 1, PMIX_APPNUM, 0);
    expect_u16(ns, 1, PMIX_LOCAL_RANK, 1);
    expect_str(ns, J, PMIX_RANK_WILDCARD, "site.key",
               "free-form keys are left alone");

    /* what cannot convert is refused */
    add(&l, PMIX_APPNUM, &negative, PMIX_INT);
    ns = ingest("negative", 1, &l, PMIX_ERR_BAD_PARAM);
    assert_false(ns->registered);
    add_u32(&l, PMIX_LOCAL_RANK, 70000);
    ingest("too-big", 1, &l, PMIX_ERR_BAD_PARAM);
    add_str(&l, PMIX_UNIV_SIZE, "8");
    ingest("string", 1, &l, PMIX_ERR_BAD_PARAM);
}

static void nodata_registers_nothing(void **state)
{
    ilist_t l = {0};
    bool t    = true;
    rdp_srv_nspace_t *ns;
    rdp_buf_t buf;
    rdp_rbuf_t rb;
    char *name = NULL;
    uint32_t n = 99;

    add(&l, PMIX_REGISTER_NODATA, &t, PMIX_BOOL);
    add_u32(&l, PMIX_JOB_SIZE, 4);
    ns = ingest("daemon", 0, &l, PMIX_SUCCESS);
    assert_true(ns->registered);
    assert_true(ns->nodata);
    assert_false(rdp_kvs_has_rank(ns->info, J, PMIX_RANK_WILDCARD));
    rdp_buf_init(&buf);
    assert_int_equal(rdp_srv_nspace_pack_set(ns, NULL, 0, &buf), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_string(&rb, &name), PMIX_SUCCESS);
    assert_string_equal(name, "daemon");
    assert_int_equal(rdp_unpack_u32(&rb, &n), PMIX_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(rb.left, 0);
    free(name);
    rdp_buf_cleanup(&buf);
}

/* The packed set holds JOB, APP, NODE and one PROC section per rank, and
 * every section unpacks into a kvs. */
static void packed_set_has_every_section(void **state)
{
    ilist_t l = {0};
    rdp_srv_nspace_t *ns;
    rdp_kvs_t *kvs;
    rdp_buf_t buf, extra;
    rdp_rbuf_t rb;
    pmix_nspace_t name;
    uint32_t nsect, counts[4] = {0};
    size_t mark = 0;
    const pmix_value_t *v;

    add_str(&l, PMIX_NODE_MAP, "node01,node02");
    add_str(&l, PMIX_PROC_MAP, "0,1;2");
    ns = ingest("packed", 1, &l, PMIX_SUCCESS);

    rdp_buf_init(&buf);
    rdp_buf_init(&extra);
    assert_int_equal(rdp_sect_pack_begin(&extra, RDP_SECT_PROC, 2, NULL, &mark),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&extra, 0), PMIX_SUCCESS);
    rdp_sect_pack_end(&extra, mark);
    assert_int_equal(rdp_srv_nspace_pack_set(ns, &extra, 1, &buf),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_kvs_create(&kvs), PMIX_SUCCESS);
    rdp_rbuf_init(&rb, buf.data, buf.size);
    assert_int_equal(rdp_unpack_string_into(&rb, name, sizeof(name)),
                     PMIX_SUCCESS);
    assert_string_equal(name, "packed");
    assert_int_equal(rdp_unpack_u32(&rb, &nsect), PMIX_SUCCESS);
    assert_int_equal(nsect, 1 + 1 + 2 + 3 + 1);
    for (uint32_t i = 0; i < nsect; i++) {
        rdp_sect_t s;
        char sect[16];

        assert_int_equal(rdp_sect_unpack(&rb, &s), PMIX_SUCCESS);
        assert_true(s.kind <= RDP_SECT_PROC);
        counts[s.kind]++;
        if (s.kind == RDP_SECT_NODE) {
            assert_non_null(s.name);
        }
        snprintf(sect, sizeof(sect), "k%u", s.kind);
        assert_int_equal(rdp_kvs_unpack_rank(kvs, sect, s.id, &s.kv),
                         PMIX_SUCCESS);
        /* the section length covers exactly its kv list */
        assert_int_equal(s.kv.left, 0);
    }
    assert_int_equal(rb.left, 0);
    assert_int_equal(counts[RDP_SECT_JOB], 1);
    assert_int_equal(counts[RDP_SECT_APP], 1);
    assert_int_equal(counts[RDP_SECT_NODE], 2);
    assert_int_equal(counts[RDP_SECT_PROC], 4);
    v = rdp_kvs_peek(kvs, "k3", 2, PMIX_HOSTNAME);
    assert_non_null(v);
    assert_string_equal(v->data.string, "node02");
    v = rdp_kvs_peek(kvs, "k0", PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    assert_non_null(v);
    assert_string_equal(v->data.string, "2");
    rdp_kvs_destroy(kvs);
    rdp_buf_cleanup(&buf);
    rdp_buf_cleanup(&extra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(maps_give_every_derived_key, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(host_values_win_over_derived_ones,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(proc_data_hostnames_place_ranks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(node_ids_from_the_host_are_kept, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_map_means_all_local_or_local_peers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(apps_split_ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_job_info_is_refused_cleanly, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            contradictory_node_ids_follow_the_node_map, setup, teardown),
        cmocka_unit_test_setup_teardown(consistent_proc_node_ids_are_kept,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(standard_keys_get_the_standard_type,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(nodata_registers_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(packed_set_has_every_section, setup,
                                        teardown),
    };

    return cmocka_run_group_tests_name("server_nspace", tests, NULL, NULL);
}
