/* run_client.c - a PMIx client that checks what rdpmix-run/rdpmixd give it
 *
 * usage: run_client N            check job info for an N-rank one-node job,
 *                                exchange data with every peer, print
 *                                "rank R of N ok"
 *        run_client N abort S    as above up to the fence; rank N-1 then
 *                                calls PMIx_Abort(S) while the others wait
 *                                in a fence that never completes
 *
 * A job of several nodes (rdpmix-run --nodes M):
 *        run_client nodes info   check that the job info is consistent
 *                                (sizes, node of every peer, local peers,
 *                                node map, proc map) and print this rank's
 *                                placement: "rank R node N host H local L
 *                                noderank NR peers P size S ldr LR nodes M";
 *                                with RUN_CLIENT_CHECK_HOSTNAME=1 in the
 *                                environment, PMIX_HOSTNAME must also be
 *                                what gethostname() says
 *        run_client nodes fence  as info, then a barrier, a put + fence
 *                                with collect + get of every peer's value
 *                                and a second barrier: "rank R of N fence ok"
 *        run_client nodes loop   as info, then barrier fences until one
 *                                fails (prints "rank R looping" after the
 *                                first); exits 1 with the fence's error
 *        run_client nodes late   as info, then keys committed after the
 *                                server holds the rank's data: a put +
 *                                commit after a collecting fence, a fence
 *                                without data, a get of every peer's late
 *                                key; then rank 0 gets a key every other
 *                                rank commits without any fence (and
 *                                commits its own only afterwards, which
 *                                everyone gets); a key nobody commits with
 *                                PMIX_TIMEOUT gives PMIX_ERR_TIMEOUT;
 *                                after a barrier, rank 0 finalizes and the
 *                                last rank's get of a key rank 0 never
 *                                committed ends with not found: "rank R of
 *                                N late ok"
 *        run_client nodes reserved  as info, then a get of a pmix.* key
 *                                nobody provides, of a local and a remote
 *                                peer, is not found at once;
 *                                PMIX_NODE_LIST lists the nodes in node id
 *                                order; PMIx_Get(self, PMIX_SERVER_URI) is
 *                                the URI in our environment: "rank R
 *                                reserved ok"
 *
 * A participant that leaves while the others fence (any number of nodes):
 *        run_client leave HOW L collect|barrier T early|late
 *                                every rank joins a barrier; then rank L
 *                                leaves without joining the next fence
 *                                (HOW: fin = PMIx_Finalize, exit = exit(0)
 *                                without finalizing, kill = SIGKILL to
 *                                itself), at once (early: the others
 *                                wait 1 s before fencing) or after 1 s
 *                                (late: the others are already waiting);
 *                                the others put a value, commit and fence
 *                                over the whole job (with PMIX_COLLECT_DATA
 *                                or without, with PMIX_TIMEOUT T seconds
 *                                unless T is 0), print "rank R fence S"
 *                                with the fence's status S as a number,
 *                                and finalize
 *
 * Publish/lookup through rdpmix-run's data service (any number of nodes,
 * at least 3 ranks):
 *        run_client pub all      every rank publishes a key, looks up
 *                                everyone's (value and publisher), a
 *                                waiting lookup before the publish, a
 *                                FIRST_READ key read once, a waiting
 *                                lookup that times out, duplicates,
 *                                ranges, unpublish of one and of every
 *                                key: "rank R pub all ok"
 *        run_client pub proc     rank 0 publishes PERSIST_PROC and
 *                                PERSIST_INDEF keys and exits; the others
 *                                see the first go and the second stay;
 *                                rank 1 leaves with a lookup waiting:
 *                                "rank R pub proc ok"
 *
 * Two jobs at once (the same RDPMIX_PEER_DIR), rank 0 of each:
 *        run_client pub xa       publishes "xns" (NAMESPACE), "xsess"
 *                                (default), "xjob" (GLOBAL, FIRST_READ)
 *                                and "xready" (GLOBAL), then waits (60 s
 *                                at most) for the file named by
 *                                RUN_CLIENT_WAIT_FILE
 *        run_client pub xb       waits up to 60 s for "xready" (GLOBAL),
 *                                sees neither "xns" nor "xsess", gets
 *                                "xjob" from the other job, once:
 *                                "rank 0 pub xb ok"
 *        run_client pub xnone    a GLOBAL lookup of "xnothing" finds
 *                                nothing
 *
 *        run_client events ranges|cache|recovery
 *                                events across nodes: run_client_events.c
 *        run_client monitor      heartbeat monitors: run_client_monitor.c
 *        run_client nodes log|jctrl|query  as info, then the host
 *                                operations (run_client_hostops.c)
 */
#include "run_client.h"

#include <pmix.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pmix_proc_t me;

void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rank %u: FAILED ", me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

pmix_value_t *get(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc  = PMIx_Get(proc, key, NULL, 0, &val);

    if (rc != PMIX_SUCCESS || val == NULL) {
        fail("PMIx_Get(%s:%u, %s): %s", proc->nspace, proc->rank, key,
             PMIx_Error_string(rc));
    }
    return val;
}

/* an unsigned value of any integer type the Standard allows for @a key */
static unsigned long get_uint(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = get(proc, key);
    unsigned long v;

    switch (val->type) {
    case PMIX_UINT32:
        v = val->data.uint32;
        break;
    case PMIX_UINT16:
        v = val->data.uint16;
        break;
    case PMIX_PROC_RANK:
        v = val->data.rank;
        break;
    case PMIX_UINT64:
        v = (unsigned long)val->data.uint64;
        break;
    case PMIX_SIZE:
        v = val->data.size;
        break;
    default:
        fail("%s has type %u, not an unsigned integer", key, val->type);
    }
    PMIX_VALUE_RELEASE(val);
    return v;
}

char *get_string(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = get(proc, key);
    char *s;

    if (val->type != PMIX_STRING || val->data.string == NULL) {
        fail("%s has type %u, not a string", key, val->type);
    }
    s = strdup(val->data.string);
    PMIX_VALUE_RELEASE(val);
    return s;
}

const pmix_info_t *info_of(const pmix_info_t *res, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&res[i], key)) {
            return &res[i];
        }
    }
    fail("no %s in the answer", key);
}

static void expect_uint(const pmix_proc_t *proc, const char *key,
                        unsigned long want)
{
    unsigned long got = get_uint(proc, key);

    if (got != want) {
        fail("%s is %lu, expected %lu", key, got, want);
    }
}

static void check_job_info(unsigned n)
{
    pmix_proc_t wild;
    char *peers, *host, *env;
    char want[16 * 1024];
    size_t off = 0;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    expect_uint(&wild, PMIX_JOB_SIZE, n);
    expect_uint(&wild, PMIX_UNIV_SIZE, n);
    expect_uint(&wild, PMIX_MAX_PROCS, n);
    expect_uint(&wild, PMIX_LOCAL_SIZE, n);
    expect_uint(&wild, PMIX_NUM_NODES, 1);
    expect_uint(&me, PMIX_LOCAL_RANK, me.rank);
    expect_uint(&me, PMIX_NODE_RANK, me.rank);
    expect_uint(&me, PMIX_APPNUM, 0);

    for (unsigned r = 0; r < n && off < sizeof(want) - 16; r++) {
        off += (size_t)snprintf(want + off, sizeof(want) - off, "%s%u",
                                r ? "," : "", r);
    }
    peers = get_string(&wild, PMIX_LOCAL_PEERS);
    if (strcmp(peers, want) != 0) {
        fail("PMIX_LOCAL_PEERS is '%s', expected '%s'", peers, want);
    }
    free(peers);

    host = get_string(&me, PMIX_HOSTNAME);
    if (host[0] == '\0') {
        fail("empty PMIX_HOSTNAME");
    }
    free(host);

    env = getenv("PMIX_RANK");
    if (env == NULL || (unsigned)atoi(env) != me.rank) {
        fail("env PMIX_RANK is %s, PMIx_Init said %u", env ? env : "unset",
             me.rank);
    }
}

void fence_collect(int collect)
{
    pmix_info_t info;
    bool flag = collect != 0;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence (%s): %s", collect ? "collect" : "barrier",
             PMIx_Error_string(rc));
    }
}

static void put_commit(const char *key, const char *value)
{
    pmix_value_t val;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&val, value, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
    }
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
}

static void exchange(unsigned n)
{
    pmix_proc_t peer;
    char mine[64], want[64];

    snprintf(mine, sizeof(mine), "hello from rank %u", me.rank);
    put_commit("rdpmix.test.greeting", mine);
    fence_collect(1);
    for (unsigned r = 0; r < n; r++) {
        char *got;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        got = get_string(&peer, "rdpmix.test.greeting");
        snprintf(want, sizeof(want), "hello from rank %u", r);
        if (strcmp(got, want) != 0) {
            fail("rank %u's greeting is '%s'", r, got);
        }
        free(got);
    }
}

/* "a,b,c" split in place; returns the count */
static unsigned split(char *s, char **out, unsigned cap)
{
    unsigned n = 0;

    for (char *tok = strtok(s, ","); tok != NULL && n < cap;
         tok       = strtok(NULL, ",")) {
        out[n++] = tok;
    }
    return n;
}

/* Multi-node: check every view of the placement against the others;
 * print ours. */
/* PMIX_NODE_LIST (job level) names the nodes hosting ranks: @a names[n]
 * is node n's name, NULL for a node without ranks */
static void check_node_list(const pmix_proc_t *wild, char **names,
                            unsigned nnodes)
{
    char *list = get_string(wild, PMIX_NODE_LIST), *toks[4096];
    unsigned n = split(list, toks, 4096), used = 0;

    for (unsigned k = 0; k < nnodes; k++) {
        used += names[k] != NULL;
    }
    if (n != used) {
        fail("PMIX_NODE_LIST has %u nodes, %u nodes host ranks", n, used);
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned k;

        for (k = 0;
             k < nnodes && (names[k] == NULL || strcmp(names[k], toks[i]) != 0);
             k++) {
        }
        if (k == nnodes) {
            fail("PMIX_NODE_LIST's %s hosts no rank", toks[i]);
        }
    }
    free(list);
}

static void check_nodes(unsigned *size_p)
{
    pmix_proc_t wild, peer;
    unsigned size, nnodes, nodeid, lrank, nrank, lsize, ldr;
    char *host, *peers, *peers_copy, *nodelist;
    char **names, **listed, *toks[4096];
    unsigned npeers, nnames, pos = 0, lowest = ~0u;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    size   = (unsigned)get_uint(&wild, PMIX_JOB_SIZE);
    nnodes = (unsigned)get_uint(&wild, PMIX_NUM_NODES);
    nodeid = (unsigned)get_uint(&me, PMIX_NODEID);
    lrank  = (unsigned)get_uint(&me, PMIX_LOCAL_RANK);
    nrank  = (unsigned)get_uint(&me, PMIX_NODE_RANK);
    lsize  = (unsigned)get_uint(&wild, PMIX_LOCAL_SIZE);
    ldr    = (unsigned)get_uint(&wild, PMIX_LOCALLDR);
    host   = get_string(&me, PMIX_HOSTNAME);
    peers  = get_string(&wild, PMIX_LOCAL_PEERS);
    if (nodeid >= nnodes) {
        fail("PMIX_NODEID %u of %u nodes", nodeid, nnodes);
    }
    if ((unsigned)get_uint(&wild, PMIX_NODE_SIZE) != lsize) {
        fail("PMIX_NODE_SIZE differs from PMIX_LOCAL_SIZE %u", lsize);
    }

    /* local peers: our local rank is our position, the leader the lowest */
    peers_copy = strdup(peers);
    npeers     = split(peers_copy, toks, 4096);
    for (unsigned i = 0; i < npeers; i++) {
        unsigned r = (unsigned)atoi(toks[i]);

        if (r == me.rank) {
            pos = i;
        }
        if (r < lowest) {
            lowest = r;
        }
        /* every local peer is on our node */
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if ((unsigned)get_uint(&peer, PMIX_NODEID) != nodeid) {
            fail("local peer %u is not on node %u", r, nodeid);
        }
    }
    free(peers_copy);
    if (npeers != lsize || lrank != pos || nrank != lrank || ldr != lowest) {
        fail("local peers '%s' (%u), PMIX_LOCAL_SIZE %u, local rank %u, "
             "node rank %u, leader %u do not agree",
             peers, npeers, lsize, lrank, nrank, ldr);
    }

    /* the node map (in no particular order) has every node once */
    if (PMIx_Resolve_nodes(me.nspace, &nodelist) != PMIX_SUCCESS
        || nodelist == NULL) {
        fail("PMIx_Resolve_nodes");
    }
    listed = calloc(nnodes + 1, sizeof(*listed));
    nnames = split(nodelist, listed, nnodes + 1);
    if (nnames != nnodes) {
        fail("the node map has %u nodes, PMIX_NUM_NODES says %u", nnames,
             nnodes);
    }

    /* every rank: one host name per node id, a name of the node map */
    names = calloc(nnodes, sizeof(*names));
    for (unsigned r = 0; r < size; r++) {
        unsigned n, k;
        char *h;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        n = (unsigned)get_uint(&peer, PMIX_NODEID);
        h = get_string(&peer, PMIX_HOSTNAME);
        if (n >= nnodes) {
            fail("rank %u is on node %u of %u", r, n, nnodes);
        }
        for (k = 0; k < nnames && strcmp(listed[k], h) != 0; k++) {
        }
        if (k == nnames) {
            fail("rank %u's host %s is not in the node map", r, h);
        }
        if (names[n] == NULL) {
            names[n] = h;
        } else if (strcmp(names[n], h) != 0) {
            fail("node %u is called %s and %s", n, names[n], h);
        } else {
            free(h);
        }
    }
    check_node_list(&wild, names, nnodes);
    /* the proc map (PMIx_Resolve_peers) puts every rank on its node */
    for (unsigned n = 0; n < nnodes; n++) {
        pmix_proc_t *procs = NULL;
        size_t nprocs      = 0;
        pmix_status_t rc;

        if (names[n] == NULL) {
            continue; /* a node without ranks */
        }
        rc = PMIx_Resolve_peers(names[n], me.nspace, &procs, &nprocs);
        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Resolve_peers(%s): %s", names[n], PMIx_Error_string(rc));
        }
        for (size_t i = 0; i < nprocs; i++) {
            if ((unsigned)get_uint(&procs[i], PMIX_NODEID) != n) {
                fail("the proc map puts rank %u on %s", procs[i].rank,
                     names[n]);
            }
        }
        if (n == nodeid && nprocs != lsize) {
            fail("the proc map has %zu ranks on our node, not %u", nprocs,
                 lsize);
        }
        PMIX_PROC_FREE(procs, nprocs);
    }
    if (names[nodeid] == NULL || strcmp(host, names[nodeid]) != 0) {
        fail("PMIX_HOSTNAME %s is not node %u's name", host, nodeid);
    }
    if (getenv("RUN_CLIENT_CHECK_HOSTNAME") != NULL) {
        char uts[256];

        if (gethostname(uts, sizeof(uts)) != 0) {
            fail("gethostname");
        }
        uts[sizeof(uts) - 1] = '\0';
        if (strcmp(uts, host) != 0) {
            fail("PMIX_HOSTNAME is %s, but gethostname() says %s", host, uts);
        }
    }
    for (unsigned n = 0; n < nnodes; n++) {
        free(names[n]);
    }
    free(names);
    free(listed);
    free(nodelist);

    printf("rank %u node %u host %s local %u noderank %u peers %s size %u "
           "ldr %u nodes %u\n",
           me.rank, nodeid, host, lrank, nrank, peers, lsize, ldr, nnodes);
    fflush(stdout);
    free(host);
    free(peers);
    *size_p = size;
}

/* barrier, exchange with every peer, barrier */
static void nodes_exchange(unsigned size)
{
    fence_collect(0);
    exchange(size);
    fence_collect(0);
}

static void abi_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                   void *cbdata, pmix_release_cbfunc_t release_fn,
                   void *release_cbdata)
{
    char *out = cbdata;

    if (status == PMIX_SUCCESS && ninfo == 2
        && info[0].value.type == PMIX_STRING
        && info[1].value.type == PMIX_STRING) {
        snprintf(out, 64, "%s %s", info[0].value.data.string,
                 info[1].value.data.string);
    } else {
        snprintf(out, 64, "failed %d", (int)status);
    }
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
    __atomic_store_n(&out[63], 1, __ATOMIC_RELEASE);
}

/* One query of a key the library answers (an ABI version) and one the
 * server answers (the namespaces): both come back, as one success:
 * "rank R mixed query ok". */
static void query_abi_and_namespaces(void)
{
    char *keys[]     = {PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_NAMESPACES,
                        NULL};
    pmix_query_t q   = {.keys = keys};
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);

    if (rc != PMIX_SUCCESS || nres != 2
        || !PMIX_CHECK_KEY(&res[0], PMIX_QUERY_STABLE_ABI_VERSION)
        || !PMIX_CHECK_KEY(&res[1], PMIX_QUERY_NAMESPACES)
        || res[1].value.type != PMIX_STRING
        || strstr(res[1].value.data.string, me.nspace) == NULL) {
        fail("PMIx_Query_info(ABI version + namespaces): %s, %zu results",
             PMIx_Error_string(rc), nres);
    }
    printf("rank %u mixed query ok\n", me.rank);
    PMIX_INFO_FREE(res, nres);
}

/* The Standard's ABI versions through the blocking and the non-blocking
 * query, while initialized: "rank R abi STABLE PROV nb STABLE PROV". */
static void query_abi(void)
{
    char *keys[]     = {PMIX_QUERY_STABLE_ABI_VERSION,
                        PMIX_QUERY_PROVISIONAL_ABI_VERSION, NULL};
    pmix_query_t q   = {.keys = keys};
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    static char nb[64];
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);

    if (rc != PMIX_SUCCESS || nres != 2 || res[0].value.type != PMIX_STRING
        || res[1].value.type != PMIX_STRING) {
        fail("PMIx_Query_info(ABI versions): %s, %zu results",
             PMIx_Error_string(rc), nres);
    }
    rc = PMIx_Query_info_nb(&q, 1, abi_cb, nb);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Query_info_nb(ABI versions): %s", PMIx_Error_string(rc));
    }
    for (int i = 0; i < 1000 && !__atomic_load_n(&nb[63], __ATOMIC_ACQUIRE);
         i++) {
        usleep(10000);
    }
    printf("rank %u abi %s %s nb %s\n", me.rank, res[0].value.data.string,
           res[1].value.data.string, nb);
    PMIX_INFO_FREE(res, nres);
    query_abi_and_namespaces();
}


/* Rank @a r's value of @a key must be "<key> of rank <r>". */
static void expect_value_of(unsigned r, const char *key)
{
    pmix_proc_t peer;
    char want[128], *got;

    PMIX_LOAD_PROCID(&peer, me.nspace, r);
    got = get_string(&peer, key);
    snprintf(want, sizeof(want), "%s of rank %u", key, r);
    if (strcmp(got, want) != 0) {
        fail("rank %u's %s is '%s'", r, key, got);
    }
    free(got);
}

static void put_own(const char *key)
{
    char mine[128];

    snprintf(mine, sizeof(mine), "%s of rank %u", key, me.rank);
    put_commit(key, mine);
}

/* PMIx_Get of rank @a r's @a key must fail with @a want. */
static void expect_get_error(unsigned r, const char *key, double timeout,
                             pmix_status_t want)
{
    pmix_proc_t peer;
    pmix_info_t info;
    uint32_t secs     = (uint32_t)timeout;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&peer, me.nspace, r);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &secs, PMIX_UINT32);
    rc = PMIx_Get(&peer, key, &info, timeout > 0 ? 1 : 0, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != want) {
        fail("PMIx_Get(%u, %s) gave %s, expected %s", r, key,
             PMIx_Error_string(rc), PMIx_Error_string(want));
    }
    if (val != NULL) {
        PMIX_VALUE_RELEASE(val);
    }
}

/* Keys committed after the server already holds data of the rank. */
static void late_commits(unsigned size)
{
    const unsigned last = size - 1;

    put_own("rdpmix.test.first");
    fence_collect(1);
    put_own("rdpmix.test.second");
    fence_collect(0);
    for (unsigned r = 0; r < size; r++) {
        expect_value_of(r, "rdpmix.test.first");
        expect_value_of(r, "rdpmix.test.second");
    }
    /* no fence at all: rank 0 waits per key for each peer's commit (its
     * server holds their earlier keys), the others for rank 0's */
    if (me.rank != 0) {
        put_own("rdpmix.test.third");
    }
    for (unsigned r = 1; me.rank == 0 && r < size; r++) {
        expect_value_of(r, "rdpmix.test.third");
    }
    if (me.rank == 0) {
        put_own("rdpmix.test.third");
    }
    expect_value_of(0, "rdpmix.test.third");
    /* a live peer that never commits a key: bounded by PMIX_TIMEOUT */
    if (size > 1) {
        expect_get_error((me.rank + 1) % size, "rdpmix.test.never", 1,
                         PMIX_ERR_TIMEOUT);
    }
    fence_collect(0);
    /* ... or by its finalize: rank 0 finalizes (main does), the last rank
     * waits for a key of it until then */
    if (me.rank == last && last != 0) {
        expect_get_error(0, "rdpmix.test.never", 0, PMIX_ERR_NOT_FOUND);
    }
}

/* The node names by node id, comma-separated (malloc'ed). */
static char *node_names(unsigned size, unsigned nnodes)
{
    char **names = calloc(nnodes, sizeof(*names));
    size_t len = 1, off = 0;
    char *list;

    for (unsigned r = 0; r < size; r++) {
        pmix_proc_t peer;
        unsigned n;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        n = (unsigned)get_uint(&peer, PMIX_NODEID);
        if (n < nnodes && names[n] == NULL) {
            names[n] = get_string(&peer, PMIX_HOSTNAME);
            len += strlen(names[n]) + 1;
        }
    }
    list = calloc(1, len);
    for (unsigned n = 0; n < nnodes; n++) {
        if (names[n] != NULL) {
            off += (size_t)snprintf(list + off, len - off, "%s%s",
                                    off > 0 ? "," : "", names[n]);
            free(names[n]);
        }
    }
    free(names);
    return list;
}

/* Reserved keys: not provided means not found at once; the ones the
 * library derives. */
static void reserved_keys(unsigned size)
{
    pmix_proc_t wild;
    char *list, *want, *uri;
    const char *env = getenv("PMIX_SERVER_URI");
    unsigned nnodes;

    /* every rank but the last asks its successor: local on some nodes,
     * remote where the successor starts the next node */
    if (me.rank + 1 < size) {
        expect_get_error(me.rank + 1, "pmix.test.never", 0, PMIX_ERR_NOT_FOUND);
    }
    expect_get_error(0, "pmix.test.never", 0, PMIX_ERR_NOT_FOUND);

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    nnodes = (unsigned)get_uint(&wild, PMIX_NUM_NODES);
    list   = get_string(&wild, PMIX_NODE_LIST);
    want   = node_names(size, nnodes);
    if (strcmp(list, want) != 0) {
        fail("PMIX_NODE_LIST is '%s', expected '%s'", list, want);
    }
    free(list);
    free(want);

    uri = get_string(&me, PMIX_SERVER_URI);
    if (env == NULL || strcmp(uri, env) != 0 || strncmp(uri, "rdpmix.", 7) != 0
        || strstr(uri, ";unix:/") == NULL) {
        fail("PMIX_SERVER_URI is '%s', the environment says '%s'", uri,
             env != NULL ? env : "nothing");
    }
    free(uri);
}

/* Required directives (PMIX_INFO_REQD): one the call does not support
 * fails it with PMIX_ERR_NOT_SUPPORTED before anything happens, an optional
 * one is ignored, a supported required one works (a real fence across the
 * nodes, a get of another rank). */
static void required_directives(unsigned size)
{
    pmix_info_t info[2];
    pmix_value_t *val = NULL;
    pmix_proc_t peer;
    bool yes = true;
    int secs = 30;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&info[0]);
    PMIX_INFO_LOAD(&info[1], PMIX_ALLOC_BANDWIDTH, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, info, 2); /* the second is optional */
    if (rc != PMIX_SUCCESS) {
        fail("fence with an optional unsupported directive: %s",
             PMIx_Error_string(rc));
    }
    PMIX_INFO_REQUIRED(&info[1]);
    rc = PMIx_Fence(NULL, 0, info, 2);
    if (rc != PMIX_ERR_NOT_SUPPORTED) {
        fail("fence with a required unsupported directive: %s",
             PMIx_Error_string(rc));
    }
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
    rc = PMIx_Get(&peer, PMIX_HOSTNAME, &info[1], 1, &val);
    if (rc != PMIX_ERR_NOT_SUPPORTED || val != NULL) {
        fail("get with a required unsupported directive: %s",
             PMIx_Error_string(rc));
    }
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIX_INFO_REQUIRED(&info[0]);
    rc = PMIx_Get(&peer, PMIX_HOSTNAME, &info[0], 1, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING) {
        fail("get with a required directive it reads: %s",
             PMIx_Error_string(rc));
    }
    PMIX_VALUE_RELEASE(val);
    PMIX_INFO_DESTRUCT(&info[0]);
}

/* ---- refence: put/commit/fence again and again ---- */

#define REFENCE_ROUNDS 6
/* 5 ranks x 20 KiB: over the 64 KiB from which fence results go through
 * shared memory, so rounds alternate between inline and memfd bundles */
#define REFENCE_BIG (20u << 10)

static char refence_byte(unsigned round, pmix_rank_t rank)
{
    return (char)('a' + (round * 7 + rank) % 26);
}

static void refence_put(unsigned round)
{
    size_t len = (round % 2) ? REFENCE_BIG : 8;
    pmix_byte_object_t bo;
    pmix_value_t val;
    char text[32];
    pmix_status_t rc;

    bo.bytes = malloc(len);
    bo.size  = len;
    if (bo.bytes == NULL) {
        fail("out of memory");
    }
    memset(bo.bytes, refence_byte(round, me.rank), len);
    val.type    = PMIX_BYTE_OBJECT;
    val.data.bo = bo;
    rc          = PMIx_Put(PMIX_GLOBAL, "rdpmix.test.rf.data", &val);
    free(bo.bytes);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put(rf.data): %s", PMIx_Error_string(rc));
    }
    /* a second key from round 2 on: sections of one and two keys */
    if (round >= 2) {
        snprintf(text, sizeof(text), "%u:%u", round, me.rank);
        put_commit("rdpmix.test.rf.round", text);
    } else if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
}

/* The server's copy of rank @a r's rf.data (PMIX_GET_REFRESH_CACHE: the
 * server answers, from the sections it keeps of other servers' ranks) is
 * round @a round's, @a len bytes. */
static void refence_check_server(unsigned round, pmix_rank_t r, size_t len)
{
    pmix_info_t refresh;
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    bool yes          = true;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&peer, me.nspace, r);
    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    rc = PMIx_Get(&peer, "rdpmix.test.rf.data", &refresh, 1, &val);
    PMIX_INFO_DESTRUCT(&refresh);
    if (rc != PMIX_SUCCESS || val->type != PMIX_BYTE_OBJECT
        || val->data.bo.size != len) {
        fail("round %u: the server's rf.data of rank %u: %s (type %u, "
             "%zu bytes)",
             round, r, PMIx_Error_string(rc),
             rc == PMIX_SUCCESS ? val->type : 0,
             rc == PMIX_SUCCESS && val->type == PMIX_BYTE_OBJECT
                 ? val->data.bo.size
                 : 0);
    }
    for (size_t i = 0; i < len; i++) {
        if (val->data.bo.bytes[i] != refence_byte(round, r)) {
            fail("round %u: the server's rf.data of rank %u is wrong", round,
                 r);
        }
    }
    PMIX_VALUE_RELEASE(val);
}

/* Every peer's rf.data (and rf.round once put) is round @a round's. */
static void refence_check(unsigned round, unsigned size)
{
    size_t len = (round % 2) ? REFENCE_BIG : 8;

    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        pmix_value_t *val = NULL;
        pmix_status_t rc;
        char want[32], *got;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        rc = PMIx_Get(&peer, "rdpmix.test.rf.data", NULL, 0, &val);
        if (rc != PMIX_SUCCESS || val->type != PMIX_BYTE_OBJECT
            || val->data.bo.size != len) {
            fail("round %u: rank %u's rf.data: %s", round, r,
                 PMIx_Error_string(rc));
        }
        for (size_t i = 0; i < len; i++) {
            if (val->data.bo.bytes[i] != refence_byte(round, r)) {
                fail("round %u: rank %u's rf.data is an older one", round, r);
            }
        }
        PMIX_VALUE_RELEASE(val);
        refence_check_server(round, r, len);
        if (round < 2) {
            continue;
        }
        got = get_string(&peer, "rdpmix.test.rf.round");
        snprintf(want, sizeof(want), "%u:%u", round, r);
        if (strcmp(got, want) != 0) {
            fail("round %u: rank %u's rf.round is '%s'", round, r, got);
        }
        free(got);
    }
}

/* Rounds of put + commit + collecting fence with new values; every
 * other round nobody looks (the fence results pile up unread), then the
 * Gets must see the newest values of every peer. */
static void refence_rounds(unsigned size)
{
    for (unsigned round = 0; round < REFENCE_ROUNDS; round++) {
        refence_put(round);
        fence_collect(1);
        if (round % 3 == 2 || round == REFENCE_ROUNDS - 1) {
            refence_check(round, size);
            /* nobody commits the next round while a peer still asks its
             * server (which holds a local rank's newest commit) */
            fence_collect(0);
        }
    }
    fence_collect(0);
}

/* run_client nodes info|fence|loop|abi|late|reserved|directives|refence */
static int nodes_main(const char *mode)
{
    static const char *const modes[] = {"info",       "fence",   "loop",
                                        "abi",        "late",    "reserved",
                                        "directives", "refence", NULL};
    unsigned size, i;
    pmix_status_t rc;

    for (i = 0; modes[i] != NULL && strcmp(mode, modes[i]) != 0; i++) {
    }
    if (modes[i] == NULL && !is_hostops_mode(mode) && !is_board_mode(mode)
        && strcmp(mode, "queryall") != 0) {
        fprintf(stderr, "usage: run_client nodes info|fence|loop|abi|late|"
                        "reserved|directives|refence|log|jctrl|query|"
                        "queryall|board|boardmix\n");
        return 2;
    }
    if (is_board_mode(mode)) {
        board_setenv(mode);
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_nodes(&size);
    if (is_hostops_mode(mode)) {
        hostops_main(mode, size);
    } else if (strcmp(mode, "queryall") == 0) {
        query_main(size);
    } else if (is_board_mode(mode)) {
        board_main(size);
        printf("rank %u of %u %s ok\n", me.rank, size, mode);
    } else if (strcmp(mode, "abi") == 0) {
        query_abi();
    } else if (strcmp(mode, "late") == 0) {
        late_commits(size);
        printf("rank %u of %u late ok\n", me.rank, size);
    } else if (strcmp(mode, "reserved") == 0) {
        reserved_keys(size);
        printf("rank %u reserved ok\n", me.rank);
    } else if (strcmp(mode, "directives") == 0) {
        required_directives(size);
        printf("rank %u directives ok\n", me.rank);
    } else if (strcmp(mode, "refence") == 0) {
        refence_rounds(size);
        printf("rank %u of %u refence ok\n", me.rank, size);
    } else if (strcmp(mode, "fence") == 0) {
        nodes_exchange(size);
        printf("rank %u of %u fence ok\n", me.rank, size);
    } else if (strcmp(mode, "loop") == 0) {
        fence_collect(0);
        printf("rank %u looping\n", me.rank);
        fflush(stdout);
        for (;;) {
            fence_collect(0);
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    return 0;
}

/* rank @a leaver leaves: PMIx_Finalize, exit(0) or SIGKILL */
static void leave(const char *how)
{
    if (strcmp(how, "fin") == 0) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);

        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
        }
        printf("rank %u left (finalized)\n", me.rank);
        exit(0);
    }
    printf("rank %u leaves (%s)\n", me.rank, how);
    fflush(stdout);
    if (strcmp(how, "kill") == 0) {
        kill(getpid(), SIGKILL);
    }
    _exit(0);
}

/* run_client leave fin|exit|kill L collect|barrier T early|late */
static int leave_main(int argc, char **argv)
{
    pmix_info_t info[2];
    size_t ninfo = 0;
    bool collect;
    int timeout, late;
    unsigned leaver;
    pmix_value_t val;
    pmix_status_t rc;

    if (argc != 7
        || (strcmp(argv[2], "fin") != 0 && strcmp(argv[2], "exit") != 0
            && strcmp(argv[2], "kill") != 0)
        || (strcmp(argv[4], "collect") != 0 && strcmp(argv[4], "barrier") != 0)
        || (strcmp(argv[6], "early") != 0 && strcmp(argv[6], "late") != 0)) {
        fprintf(stderr, "usage: run_client leave fin|exit|kill L "
                        "collect|barrier T early|late\n");
        return 2;
    }
    leaver  = (unsigned)atoi(argv[3]);
    collect = strcmp(argv[4], "collect") == 0;
    timeout = atoi(argv[5]);
    late    = strcmp(argv[6], "late") == 0;
    rc      = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    /* a fence the leaver did join: only the next one must fail */
    fence_collect(0);
    if (me.rank == leaver) {
        if (late) {
            sleep(1);
        }
        leave(argv[2]);
    }
    if (!late) {
        sleep(1);
    }
    PMIX_VALUE_LOAD(&val, "left behind", PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "rdpmix.test.leave", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Commit();
    }
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put/Commit: %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_LOAD(&info[ninfo], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    ninfo++;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ninfo++;
    }
    rc = PMIx_Fence(NULL, 0, info, ninfo);
    printf("rank %u fence %d\n", me.rank, (int)rc);
    fflush(stdout);
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    return 0;
}

/* ---- publish / lookup ---- */

static void barrier(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
    }
}

/* publish KEY=value in range (UNDEF: default) with persistence
 * (PMIX_PERSIST_INVALID: default) */
static pmix_status_t publish(const char *key, int value,
                             pmix_data_range_t range,
                             pmix_persistence_t persist)
{
    pmix_info_t info[3];
    size_t n = 0;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[n++], key, &value, PMIX_INT);
    if (range != PMIX_RANGE_UNDEF) {
        PMIX_INFO_LOAD(&info[n++], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    }
    if (persist != PMIX_PERSIST_INVALID) {
        PMIX_INFO_LOAD(&info[n++], PMIX_PERSISTENCE, &persist, PMIX_PERSIST);
    }
    rc = PMIx_Publish(info, n);
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return rc;
}

static void must_publish(const char *key, int value, pmix_data_range_t range,
                         pmix_persistence_t persist)
{
    pmix_status_t rc = publish(key, value, range, persist);

    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Publish(%s): %s", key, PMIx_Error_string(rc));
    }
}

/* look up one key; with @a info (may be NULL) */
static pmix_status_t lookup(const char *key, const pmix_info_t *info,
                            size_t ninfo, pmix_pdata_t *pd)
{
    PMIX_PDATA_CONSTRUCT(pd);
    PMIX_LOAD_KEY(pd->key, key);
    return PMIx_Lookup(pd, 1, info, ninfo);
}

/* KEY must be found with VALUE, published by rank FROM of our job */
static void expect_key(const char *key, int value, pmix_rank_t from)
{
    pmix_pdata_t pd;
    pmix_status_t rc = lookup(key, NULL, 0, &pd);

    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Lookup(%s): %s", key, PMIx_Error_string(rc));
    }
    if (pd.value.type != PMIX_INT || pd.value.data.integer != value
        || pd.proc.rank != from
        || !PMIX_CHECK_NSPACE(pd.proc.nspace, me.nspace)) {
        fail("PMIx_Lookup(%s): type %d value %d from %s:%u, not %d from %u",
             key, pd.value.type, pd.value.data.integer, pd.proc.nspace,
             pd.proc.rank, value, from);
    }
    PMIX_PDATA_DESTRUCT(&pd);
}

void expect_status(const char *what, pmix_status_t rc, pmix_status_t want)
{
    if (rc != want) {
        fail("%s: %s, not %s", what, PMIx_Error_string(rc),
             PMIx_Error_string(want));
    }
}

static void expect_missing(const char *key)
{
    pmix_pdata_t pd;

    expect_status(key, lookup(key, NULL, 0, &pd), PMIX_ERR_NOT_FOUND);
    PMIX_PDATA_DESTRUCT(&pd);
}

typedef struct waited {
    int done;
    pmix_status_t status;
    int value;
    pmix_rank_t from;
} waited_t;

static void waited_cb(pmix_status_t status, pmix_pdata_t pdata[], size_t n,
                      void *cbdata)
{
    waited_t *w = cbdata;

    w->status = status;
    if (status == PMIX_SUCCESS && n == 1 && pdata[0].value.type == PMIX_INT) {
        w->value = pdata[0].value.data.integer;
        w->from  = pdata[0].proc.rank;
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

/* start a PMIX_WAIT lookup of KEY (timeout seconds, 0: none) */
static void lookup_wait_nb(char *key, int timeout, waited_t *w)
{
    static char *keys[2];
    pmix_info_t info[2];
    bool yes = true;
    pmix_status_t rc;

    keys[0] = key;
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_Lookup_nb(keys, info, timeout > 0 ? 2 : 1, waited_cb, w);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Lookup_nb(%s, PMIX_WAIT): %s", key, PMIx_Error_string(rc));
    }
}

static void wait_done(waited_t *w, const char *what)
{
    for (int i = 0; i < 3000 && !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
         i++) {
        usleep(10000);
    }
    if (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
        fail("%s: no answer within 30 s", what);
    }
}

/* every rank's key, seen by everyone, with its publisher */
static void pub_each_other(unsigned size)
{
    char key[32];

    snprintf(key, sizeof(key), "key-%u", me.rank);
    must_publish(key, 100 + (int)me.rank, PMIX_RANGE_UNDEF,
                 PMIX_PERSIST_INVALID);
    barrier();
    for (unsigned r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "key-%u", r);
        expect_key(key, 100 + (int)r, r);
    }
    /* the same key in the same range is refused, in another range not */
    snprintf(key, sizeof(key), "key-%u", (me.rank + 1) % size);
    expect_status("publishing another rank's key again",
                  publish(key, 1, PMIX_RANGE_UNDEF, PMIX_PERSIST_INVALID),
                  PMIX_ERR_DUPLICATE_KEY);
    snprintf(key, sizeof(key), "key-%u", me.rank);
    expect_status("publishing our key with the namespace range",
                  publish(key, 1, PMIX_RANGE_NAMESPACE, PMIX_PERSIST_INVALID),
                  PMIX_SUCCESS);
    /* PROC_LOCAL: only we see ours */
    snprintf(key, sizeof(key), "mine-%u", me.rank);
    must_publish(key, 7, PMIX_RANGE_PROC_LOCAL, PMIX_PERSIST_INVALID);
    barrier();
    expect_key(key, 7, me.rank);
    snprintf(key, sizeof(key), "mine-%u", (me.rank + 1) % size);
    expect_missing(key);
}

/* a lookup that waits for a key rank size-1 publishes later */
static void pub_wait(unsigned size)
{
    waited_t w = {0};

    if (me.rank == 0) {
        lookup_wait_nb("late", 0, &w);
    }
    barrier();
    if (me.rank == size - 1) {
        must_publish("late", 55, PMIX_RANGE_UNDEF, PMIX_PERSIST_INVALID);
    }
    if (me.rank == 0) {
        wait_done(&w, "the waiting lookup of 'late'");
        if (w.status != PMIX_SUCCESS || w.value != 55 || w.from != size - 1) {
            fail("waiting lookup of 'late': %s, %d from %u",
                 PMIx_Error_string(w.status), w.value, w.from);
        }
    }
    /* a waiting lookup of a key nobody publishes ends at its timeout */
    if (me.rank == 1) {
        waited_t never = {0};

        lookup_wait_nb("never", 1, &never);
        wait_done(&never, "the waiting lookup of 'never'");
        expect_status("waiting lookup of 'never'", never.status,
                      PMIX_ERR_TIMEOUT);
    }
    barrier();
}

/* FIRST_READ: rank 1 reads it, then it is gone for rank 2 */
static void pub_first_read(void)
{
    if (me.rank == 0) {
        must_publish("once", 1, PMIX_RANGE_UNDEF, PMIX_PERSIST_FIRST_READ);
    }
    barrier();
    if (me.rank == 1) {
        expect_key("once", 1, 0);
    }
    barrier();
    if (me.rank == 2) {
        expect_missing("once");
    }
}

/* unpublish one key, then every key */
static void pub_unpublish(unsigned size)
{
    char key[32], *keys[2] = {key, NULL};
    pmix_status_t rc;

    snprintf(key, sizeof(key), "key-%u", me.rank);
    /* both ranges of it */
    rc = PMIx_Unpublish(keys, NULL, 0);
    expect_status("unpublishing our key", rc, PMIX_SUCCESS);
    snprintf(key, sizeof(key), "key-%u", (me.rank + 1) % size);
    expect_status("unpublishing another rank's key",
                  PMIx_Unpublish(keys, NULL, 0), PMIX_ERR_NOT_FOUND);
    snprintf(key, sizeof(key), "a-%u", me.rank);
    must_publish(key, 1, PMIX_RANGE_UNDEF, PMIX_PERSIST_INVALID);
    snprintf(key, sizeof(key), "b-%u", me.rank);
    must_publish(key, 1, PMIX_RANGE_GLOBAL, PMIX_PERSIST_INVALID);
    expect_status("unpublishing every key", PMIx_Unpublish(NULL, NULL, 0),
                  PMIX_SUCCESS);
    barrier();
    snprintf(key, sizeof(key), "key-%u", (me.rank + 1) % size);
    expect_missing(key);
    snprintf(key, sizeof(key), "a-%u", (me.rank + 1) % size);
    expect_missing(key);
    snprintf(key, sizeof(key), "b-%u", (me.rank + 1) % size);
    expect_missing(key);
}

/* PERSIST_PROC goes with its publisher, PERSIST_INDEF stays; a waiting
 * lookup whose client left is dropped */
static void pub_proc(void)
{
    pmix_status_t rc;
    pmix_pdata_t pd;
    waited_t w = {0};

    if (me.rank == 0) {
        must_publish("proc", 1, PMIX_RANGE_UNDEF, PMIX_PERSIST_PROC);
        must_publish("indef", 2, PMIX_RANGE_UNDEF, PMIX_PERSIST_INDEF);
    }
    if (me.rank == 1) {
        lookup_wait_nb("nobody", 0, &w);
    }
    barrier();
    expect_key("proc", 1, 0);
    barrier();
    if (me.rank == 0 || me.rank == 1) {
        /* leave without finalizing: the host sees the process end */
        printf("rank %u pub proc ok\n", me.rank);
        fflush(stdout);
        _exit(0);
    }
    for (int i = 0; i < 3000; i++) {
        rc = lookup("proc", NULL, 0, &pd);
        PMIX_PDATA_DESTRUCT(&pd);
        if (rc != PMIX_SUCCESS) {
            break;
        }
        usleep(10000);
    }
    expect_status("PERSIST_PROC key after its publisher ended", rc,
                  PMIX_ERR_NOT_FOUND);
    expect_key("indef", 2, 0);
    if (me.rank == 2) {
        /* answers nobody: rank 1's lookup is gone */
        must_publish("nobody", 3, PMIX_RANGE_UNDEF, PMIX_PERSIST_INVALID);
    }
}

/* start a GLOBAL PMIX_WAIT lookup of KEY, bounded by 60 s */
static void lookup_global_wait(char *key, waited_t *w)
{
    char *keys[2]            = {key, NULL};
    pmix_data_range_t global = PMIX_RANGE_GLOBAL;
    pmix_info_t info[3];
    bool yes    = true;
    int timeout = 60;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[2], PMIX_RANGE, &global, PMIX_DATA_RANGE);
    rc = PMIx_Lookup_nb(keys, info, 3, waited_cb, w);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Lookup_nb(%s, GLOBAL): %s", key, PMIx_Error_string(rc));
    }
    wait_done(w, key);
    if (w->status != PMIX_SUCCESS) {
        fail("GLOBAL lookup of %s: %s", key, PMIx_Error_string(w->status));
    }
}

/* KEY must not be seen by a GLOBAL lookup */
static void expect_not_global(const char *key)
{
    pmix_data_range_t global = PMIX_RANGE_GLOBAL;
    pmix_info_t info;
    pmix_pdata_t pd;

    PMIX_INFO_LOAD(&info, PMIX_RANGE, &global, PMIX_DATA_RANGE);
    expect_status(key, lookup(key, &info, 1, &pd), PMIX_ERR_NOT_FOUND);
    PMIX_PDATA_DESTRUCT(&pd);
    expect_missing(key);
}

/* KEY, GLOBAL, found once with VALUE from rank 0 of another job */
static void expect_foreign(const char *key, int value)
{
    pmix_data_range_t global = PMIX_RANGE_GLOBAL;
    pmix_info_t info;
    pmix_pdata_t pd;

    PMIX_INFO_LOAD(&info, PMIX_RANGE, &global, PMIX_DATA_RANGE);
    expect_status(key, lookup(key, &info, 1, &pd), PMIX_SUCCESS);
    if (PMIX_CHECK_NSPACE(pd.proc.nspace, me.nspace) || pd.proc.rank != 0
        || pd.value.type != PMIX_INT || pd.value.data.integer != value) {
        fail("%s: %d from %s:%u, not %d from the other job", key,
             pd.value.data.integer, pd.proc.nspace, pd.proc.rank, value);
    }
    PMIX_PDATA_DESTRUCT(&pd);
}

/* two jobs: A publishes and stays until the file RUN_CLIENT_WAIT_FILE
 * exists, B looks up across them */
static void pub_xjob(int is_b, int none)
{
    const char *file = getenv("RUN_CLIENT_WAIT_FILE");
    waited_t w       = {0};

    if (me.rank != 0) {
        return;
    }
    if (none) {
        expect_not_global("xnothing");
        return;
    }
    if (!is_b) {
        must_publish("xns", 1, PMIX_RANGE_NAMESPACE, PMIX_PERSIST_INVALID);
        must_publish("xsess", 1, PMIX_RANGE_UNDEF, PMIX_PERSIST_INVALID);
        must_publish("xjob", 77, PMIX_RANGE_GLOBAL, PMIX_PERSIST_FIRST_READ);
        must_publish("xready", 1, PMIX_RANGE_GLOBAL, PMIX_PERSIST_INVALID);
        for (int i = 0; i < 600 && file != NULL && access(file, F_OK) != 0;
             i++) {
            usleep(100000);
        }
        return;
    }
    lookup_global_wait("xready", &w);
    expect_not_global("xns");
    expect_not_global("xsess");
    expect_foreign("xjob", 77);
    expect_not_global("xjob"); /* FIRST_READ: taken by the lookup above */
}

/* run_client pub all|proc|xa|xb|xnone */
static int pub_main(const char *mode)
{
    pmix_value_t *val;
    unsigned size;
    pmix_proc_t job;
    pmix_status_t rc;

    int xnone = strcmp(mode, "xnone") == 0;
    int xjob  = strcmp(mode, "xa") == 0 || strcmp(mode, "xb") == 0 || xnone;

    if (strcmp(mode, "all") != 0 && strcmp(mode, "proc") != 0 && !xjob) {
        fprintf(stderr, "usage: run_client pub all|proc|xa|xb|xnone\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    val  = get(&job, PMIX_JOB_SIZE);
    size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if (size < 3 && !xjob) {
        fail("run_client pub needs at least 3 ranks");
    }
    if (xjob) {
        pub_xjob(strcmp(mode, "xb") == 0, xnone);
    } else if (strcmp(mode, "all") == 0) {
        pub_wait(size);
        pub_each_other(size);
        pub_first_read();
        pub_unpublish(size);
    } else {
        pub_proc();
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    printf("rank %u pub %s ok\n", me.rank, mode);
    return 0;
}

int events_main(const char *mode); /* run_client_events.c */
int monitor_main(void);            /* run_client_monitor.c */
int connect_main(int argc, char **argv); /* run_client_connect.c */
int group_main(const char *mode);        /* run_client_group.c */
int pnet_main(const char *own, const char *other); /* run_client_pnet.c */

/* run_client wait FILE [SECS]: a rank tools can attach to.  Each rank
 * prints "tool-target rank R pid P host H" and stays until FILE exists
 * (at most SECS, default 120 s, then it fails), so a test decides when
 * the job ends. */
static int wait_main(const char *file, const char *secs)
{
    char host[256] = "?";
    long limit     = secs != NULL ? strtol(secs, NULL, 10) : 120;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    gethostname(host, sizeof(host) - 1);
    printf("tool-target rank %u pid %d host %s nspace %s\n", me.rank,
           (int)getpid(), host, me.nspace);
    fflush(stdout);
    for (int i = 0; access(file, F_OK) != 0; i++) {
        if (i == limit * 10) {
            fail("rank %u: %s did not appear within %ld s", me.rank, file,
                 limit);
        }
        usleep(100000);
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned n;
    pmix_status_t rc;

    if (argc == 3 && strcmp(argv[1], "nodes") == 0) {
        return nodes_main(argv[2]);
    }
    if (argc >= 2 && strcmp(argv[1], "leave") == 0) {
        return leave_main(argc, argv);
    }
    if (argc == 3 && strcmp(argv[1], "pub") == 0) {
        return pub_main(argv[2]);
    }
    if (argc == 3 && strcmp(argv[1], "events") == 0) {
        return events_main(argv[2]);
    }
    if (argc == 2 && strcmp(argv[1], "monitor") == 0) {
        return monitor_main();
    }
    if (argc >= 3 && strcmp(argv[1], "connect") == 0) {
        return connect_main(argc, argv);
    }
    if (argc == 3 && strcmp(argv[1], "group") == 0) {
        return group_main(argv[2]);
    }
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "wait") == 0) {
        return wait_main(argv[2], argc > 3 ? argv[3] : NULL);
    }
    if (argc == 4 && strcmp(argv[1], "pnet") == 0) {
        return pnet_main(argv[2], argv[3]);
    }
    if (argc < 2 || (n = (unsigned)atoi(argv[1])) == 0) {
        fprintf(stderr, "usage: run_client N [abort STATUS]\n"
                        "       run_client nodes "
                        "info|fence|loop|abi|late|reserved\n"
                        "       run_client leave fin|exit|kill L "
                        "collect|barrier T early|late\n"
                        "       run_client pub all|proc|xa|xb|xnone\n"
                        "       run_client events ranges|cache|recovery\n"
                        "       run_client monitor\n"
                        "       run_client connect "
                        "all|subsets|ids|notify|request|die L\n"
                        "       run_client group "
                        "basic|invite|leader|term|fin|exit\n"
                        "       run_client wait FILE\n"
                        "       run_client pnet OWN-FILE OTHER-FILE\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_job_info(n);
    if (argc >= 4 && strcmp(argv[2], "abort") == 0) {
        if (me.rank == n - 1) {
            PMIx_Abort(atoi(argv[3]), "run_client was asked to abort", NULL, 0);
            /* the host kills us; if it does not, say so */
            sleep(30);
            fail("still alive 30 s after PMIx_Abort");
        }
        /* never completes normally; once the host kills the aborted rank
         * the server may end it with an error: either way, wait to be
         * killed with the rest of the job */
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc == PMIX_SUCCESS) {
            fail("the fence succeeded although rank %u aborted", n - 1);
        }
        sleep(30);
        fail("still alive 30 s after rank %u aborted", n - 1);
    }
    exchange(n);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    printf("rank %u of %u ok\n", me.rank, n);
    return 0;
}
