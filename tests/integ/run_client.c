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
 */
#include <pmix.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rank %u: FAILED ", me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static pmix_value_t *get(const pmix_proc_t *proc, const char *key)
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

static char *get_string(const pmix_proc_t *proc, const char *key)
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

static void fence_collect(int collect)
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

static void exchange(unsigned n)
{
    pmix_value_t val;
    pmix_proc_t peer;
    char mine[64], want[64];
    pmix_status_t rc;

    snprintf(mine, sizeof(mine), "hello from rank %u", me.rank);
    PMIX_VALUE_LOAD(&val, mine, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "rdpmix.test.greeting", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put: %s", PMIx_Error_string(rc));
    }
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
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
}

/* run_client nodes info|fence|loop|abi */
static int nodes_main(const char *mode)
{
    unsigned size;
    pmix_status_t rc;

    if (strcmp(mode, "info") != 0 && strcmp(mode, "fence") != 0
        && strcmp(mode, "loop") != 0 && strcmp(mode, "abi") != 0) {
        fprintf(stderr, "usage: run_client nodes info|fence|loop|abi\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_nodes(&size);
    if (strcmp(mode, "abi") == 0) {
        query_abi();
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

int main(int argc, char **argv)
{
    unsigned n;
    pmix_status_t rc;

    if (argc == 3 && strcmp(argv[1], "nodes") == 0) {
        return nodes_main(argv[2]);
    }
    if (argc < 2 || (n = (unsigned)atoi(argv[1])) == 0) {
        fprintf(stderr, "usage: run_client N [abort STATUS]\n"
                        "       run_client nodes info|fence|loop|abi\n");
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
