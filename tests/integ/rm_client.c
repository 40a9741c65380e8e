/* rm_client.c - a PMIx client of a job spread over rm_host's nodes
 *
 * usage: rm_client M PPN   (run by rm_host: M nodes rnode0.., PPN ranks
 *                           each, rank r on node r / PPN)
 *
 * Checks what a Standard-API program reads of its job: size, every rank's
 * node id and hostname, its local peers, local and node rank, the appnum
 * as the Standard's uint32; then direct modex (a barrier, then every
 * peer's committed value), a collecting fence and every peer's new value,
 * a query the host answers, and a last barrier.  Prints "rank R of N ok".
 */
#include <pmix.h>

#include "client_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 20

static void fence(bool collect)
{
    pmix_info_t info[2];
    uint32_t t = TIMEOUT;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &t, PMIX_UINT32);
    rc = PMIx_Fence(NULL, 0, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence(collect %d): %s", collect, PMIx_Error_string(rc));
    }
}

static uint16_t get_u16(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = get(proc, key, PMIX_UINT16);
    uint16_t u      = v->data.uint16;

    PMIX_VALUE_RELEASE(v);
    return u;
}

static void check_job_info(uint32_t nnodes, uint32_t ppn)
{
    uint32_t n = nnodes * ppn, mynode = me.rank / ppn;
    pmix_proc_t wild, peer;
    char want[4096] = "", host[64];

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (get_u32(&wild, PMIX_JOB_SIZE) != n) {
        fail("%s is not %u", PMIX_JOB_SIZE, n);
    }
    if (get_u32(&wild, PMIX_LOCAL_SIZE) != ppn) {
        fail("%s is not %u", PMIX_LOCAL_SIZE, ppn);
    }
    /* the Standard says uint32: a program reads data.uint32 */
    if (get_u32(&me, PMIX_APPNUM) != 0) {
        fail("%s is not 0", PMIX_APPNUM);
    }
    if (get_u16(&me, PMIX_LOCAL_RANK) != me.rank % ppn) {
        fail("%s is not %u", PMIX_LOCAL_RANK, me.rank % ppn);
    }
    if (get_u16(&me, PMIX_NODE_RANK) != me.rank % ppn) {
        fail("%s is not %u", PMIX_NODE_RANK, me.rank % ppn);
    }
    for (uint32_t r = mynode * ppn; r < (mynode + 1) * ppn; r++) {
        char buf[16];

        snprintf(buf, sizeof(buf), r == mynode * ppn ? "%u" : ",%u", r);
        strcat(want, buf);
    }
    check_str(&wild, PMIX_LOCAL_PEERS, want);
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if (get_u32(&peer, PMIX_NODEID) != r / ppn) {
            fail("%s of rank %u is not %u", PMIX_NODEID, r, r / ppn);
        }
        snprintf(host, sizeof(host), "rnode%u", r / ppn);
        check_str(&peer, PMIX_HOSTNAME, host);
    }
}

static void value_of(char *buf, size_t len, const char *tag, uint32_t r)
{
    snprintf(buf, len, "%s-of-rank-%u", tag, r);
}

/* put + commit of "tag" = value_of(tag, me) */
static void publish(const char *tag)
{
    char v[64];
    pmix_status_t rc;

    value_of(v, sizeof(v), tag, me.rank);
    put_str(PMIX_GLOBAL, tag, v);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
}

static void check_every_peer(const char *tag, uint32_t n)
{
    char v[64];
    pmix_proc_t peer;

    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        value_of(v, sizeof(v), tag, r);
        check_str(&peer, tag, v);
    }
}

static void check_query(void)
{
    pmix_query_t *q;
    pmix_info_t *results = NULL;
    size_t nresults      = 0;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 1);
    pmix_argv_append_nosize(&q[0].keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    PMIX_QUERY_FREE(q, 1);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Query_info: %s", PMIx_Error_string(rc));
    }
    if (nresults != 1 || strcmp(results[0].key, "rmhost.node") != 0) {
        fail("PMIx_Query_info: %zu results, not the host's one", nresults);
    }
    PMIX_INFO_FREE(results, nresults);
}

/* job control and monitor requests the server passes to the host, which
 * answers each with its one info through an info callback */
static void check_host_infos(void)
{
    pmix_info_t dir, mon;
    pmix_info_t *results = NULL;
    size_t nresults      = 0;
    bool yes             = true;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&dir, "rmhost.ctl", &yes, PMIX_BOOL);
    rc = PMIx_Job_control(NULL, 0, &dir, 1, &results, &nresults);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Job_control: %s", PMIx_Error_string(rc));
    }
    if (nresults != 1 || strcmp(results[0].key, "rmhost.node") != 0) {
        fail("PMIx_Job_control: %zu results, not the host's one", nresults);
    }
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_LOAD(&mon, "rmhost.mon", &yes, PMIX_BOOL);
    results  = NULL;
    nresults = 0;
    rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, &results, &nresults);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Process_monitor: %s", PMIx_Error_string(rc));
    }
    if (nresults != 1 || strcmp(results[0].key, "rmhost.node") != 0) {
        fail("PMIx_Process_monitor: %zu results, not the host's one", nresults);
    }
    PMIX_INFO_FREE(results, nresults);
}

int main(int argc, char **argv)
{
    uint32_t nnodes, ppn;
    pmix_status_t rc;

    check_prog        = "rm_client";
    check_get_timeout = TIMEOUT;
    if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: rm_client M PPN\n");
        return 2;
    }
    nnodes = (uint32_t)atoi(argv[1]);
    ppn    = (uint32_t)atoi(argv[2]);
    rc     = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Init: %s", PMIx_Error_string(rc));
    }
    check_job_info(nnodes, ppn);

    /* direct modex: the remote values are fetched through the host */
    publish("dmodex");
    fence(false);
    check_every_peer("dmodex", nnodes * ppn);

    /* full modex: the host runs the collecting fence */
    publish("modex");
    fence(true);
    check_every_peer("modex", nnodes * ppn);

    check_query();
    check_host_infos();
    fence(false); /* nobody leaves while another still needs its node */
    printf("rank %u of %u ok\n", me.rank, nnodes * ppn);
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    return 0;
}
