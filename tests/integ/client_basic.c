/* client_basic.c - a PMIx client checking the basics against a real server
 *
 * usage: client_basic N      (run as N ranks of one job, e.g. by mini_host)
 *
 * Init (twice, refcounted), job/node/proc info with the Standard's types,
 * Put/Commit/Fence with PMIX_COLLECT_DATA and Get of every peer's data,
 * then a second round without collection (data fetched on demand),
 * Resolve_peers, the queries a server answers without a host query upcall,
 * Finalize.  Prints "rank R of N ok" on success.
 */
#include <pmix.h>

#include "client_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fence(int collect)
{
    pmix_info_t info;
    bool flag = collect != 0;
    pmix_status_t rc;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence(collect %d): %s", collect, PMIx_Error_string(rc));
    }
}

static const pmix_info_t *answer(const pmix_info_t *res, size_t n,
                                 const char *key, pmix_data_type_t type)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&res[i], key) && res[i].value.type == type) {
            return &res[i];
        }
    }
    fail("no %s of type %s in the answer", key, PMIx_Data_type_string(type));
    return NULL;
}

/* mini_host has no query upcall: the server library answers itself. */
static void queries(uint32_t n)
{
    char *keys[]   = {PMIX_QUERY_NAMESPACES,
                      PMIX_QUERY_PROC_TABLE,
                      PMIX_QUERY_SPAWN_SUPPORT,
                      PMIX_QUERY_DEBUG_SUPPORT,
                      PMIX_QUERY_MEMORY_USAGE,
                      "pmix.qry.nosuch",
                      NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t *res;
    size_t nres;
    const pmix_data_array_t *t;
    const pmix_proc_info_t *pi;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);

    if (rc != PMIX_QUERY_PARTIAL_SUCCESS || nres != 5) {
        fail("PMIx_Query_info: %s, %zu answers", PMIx_Error_string(rc), nres);
    }
    if (strstr(answer(res, nres, PMIX_QUERY_NAMESPACES, PMIX_STRING)
                   ->value.data.string,
               me.nspace)
        == NULL) {
        fail("PMIX_QUERY_NAMESPACES lacks %s", me.nspace);
    }
    t = answer(res, nres, PMIX_QUERY_PROC_TABLE, PMIX_DATA_ARRAY)
            ->value.data.darray;
    pi = t->array;
    if (t->type != PMIX_PROC_INFO || t->size != n
        || pi[me.rank].proc.rank != me.rank || pi[me.rank].pid != getpid()) {
        fail("the proc table does not list us");
    }
    answer(res, nres, PMIX_QUERY_SPAWN_SUPPORT, PMIX_STRING);
    answer(res, nres, PMIX_QUERY_DEBUG_SUPPORT, PMIX_STRING);
    answer(res, nres, PMIX_QUERY_MEMORY_USAGE, PMIX_DATA_ARRAY);
    PMIX_INFO_FREE(res, nres);
}

int main(int argc, char **argv)
{
    pmix_proc_t wild, peer, again;
    pmix_value_t *v;
    pmix_proc_t *peers = NULL;
    size_t npeers      = 0;
    pmix_status_t rc;
    char key[64], want[64];
    uint32_t n;

    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: client_basic N\n");
        return 2;
    }
    n          = (uint32_t)atoi(argv[1]);
    check_prog = "client_basic";
    rc         = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Init: %s", PMIx_Error_string(rc));
    }
    rc = PMIx_Init(&again, NULL, 0);
    if (rc != PMIX_SUCCESS || !PMIX_CHECK_PROCID(&me, &again)) {
        fail("second PMIx_Init: %s", PMIx_Error_string(rc));
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);

    /* job and node info */
    if (get_u32(&wild, PMIX_JOB_SIZE) != n) {
        fail("job size is not %u", n);
    }
    if (get_u32(&wild, PMIX_LOCAL_SIZE) != n) {
        fail("local size is not %u", n);
    }
    v = get(&wild, PMIX_LOCAL_PEERS, PMIX_STRING);
    PMIX_VALUE_RELEASE(v);
    v = get(&me, PMIX_LOCAL_RANK, PMIX_UINT16);
    if (v->data.uint16 != me.rank) {
        fail("local rank %u", v->data.uint16);
    }
    PMIX_VALUE_RELEASE(v);
    if (get_u32(&me, PMIX_APPNUM) != 0) {
        fail("appnum is not 0");
    }

    /* round 1: collect */
    snprintf(key, sizeof(key), "basic.%u", me.rank);
    snprintf(want, sizeof(want), "value-%u", me.rank);
    put_str(PMIX_GLOBAL, key, want);
    put_str(PMIX_LOCAL, "basic.local", want);
    check_str(&me, key, want);
    if (PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Commit");
    }
    fence(1);
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        snprintf(key, sizeof(key), "basic.%u", r);
        snprintf(want, sizeof(want), "value-%u", r);
        check_str(&peer, key, want);
        check_str(&peer, "basic.local", want);
    }

    /* round 2: no collection; peers' new data comes on demand */
    snprintf(want, sizeof(want), "second-%u", me.rank);
    put_str(PMIX_GLOBAL, "basic.second", want);
    if (PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Commit");
    }
    fence(0);
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (n - 1 - r + me.rank) % n);
        snprintf(want, sizeof(want), "second-%u", peer.rank);
        check_str(&peer, "basic.second", want);
    }

    rc = PMIx_Resolve_peers(NULL, me.nspace, &peers, &npeers);
    if (rc != PMIX_SUCCESS || npeers != n) {
        fail("PMIx_Resolve_peers: %s, %zu peers", PMIx_Error_string(rc),
             npeers);
    }
    free(peers);
    queries(n);
    fence(0);
    if (PMIx_Finalize(NULL, 0) != PMIX_SUCCESS
        || PMIx_Finalize(NULL, 0) != PMIX_SUCCESS) {
        fail("PMIx_Finalize");
    }
    printf("rank %u of %u ok\n", me.rank, n);
    return 0;
}
