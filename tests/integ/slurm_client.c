/* slurm_client.c - a PMIx client launched by `srun --mpi=pmix` that checks
 * the job info Slurm's PMIx server gives it against what Slurm launched
 *
 * usage: slurm_client [--openpmix] NPROCS NNODES
 *
 * --openpmix accepts the two ways Debian's OpenPMIx 4.2.2 differs under
 * Slurm 22.05: PMIX_APPNUM of type PMIX_INT (Slurm registers an int and
 * OpenPMIx passes it through; the Standard's type is uint32) and no
 * PMIX_NODEID for ranks on other nodes (not found).  Without it both are
 * failures: rdpmix stores the Standard's type and derives every rank's node
 * id (docs/host.md, "What a host may do").
 *
 * Written only against the PMIx Standard API, so the same binary runs on
 * OpenPMIx or on rdpmix (whichever libpmix.so.2 the loader finds).  The
 * reference for every check comes from outside PMIx: the arguments (what the
 * test asked srun for), Slurm's task environment (SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NODEID, SLURMD_NODENAME) and gethostname().  Each rank
 *   1. checks its own info: PMIX_JOB_SIZE, PMIX_NUM_NODES, PMIX_NODEID,
 *      PMIX_HOSTNAME, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_APPNUM, each of
 *      the type the Standard gives it;
 *   2. puts "rank R node N host H" (PMIX_GLOBAL), commits, fences with
 *      PMIX_COLLECT_DATA and gets every peer's value, which tells it where
 *      every peer runs;
 *   3. checks, from that, PMIX_LOCAL_SIZE and PMIX_LOCAL_PEERS, and for every
 *      peer PMIX_HOSTNAME and PMIX_NODEID;
 *   4. (rdpmix, one rank per node on three or more nodes: check_groups)
 *      makes a group over every rank, and one over ranks on only some
 *      nodes fails at once with PMIX_ERR_NOT_SUPPORTED;
 *   5. (rdpmix) a fence without data, a connect and a disconnect over every
 *      rank wait for the last rank (check_waits);
 *   6. fences again (no rank leaves while others still get) and finalizes.
 * Any mismatch prints "slurm_client rank R: FAILED ..." and exits 1.  On
 * success: "rank R of N ok host H node X libpmix=PATH server=PATHS parent=C",
 * where PATH is the libpmix.so.2 this process mapped, PATHS every
 * libpmix.so* mapped into its parent (slurmstepd: its PMIx server) and C the
 * parent's command name.
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_check.h"

#define WHERE_KEY "slurmtest.where"

/* --openpmix: accept OpenPMIx 4.2.2's known differences */
static bool openpmix;

/* where one rank runs, as that rank itself reported it */
struct place {
    unsigned node;
    char host[256];
};

/* Paths of the libpmix.so* files mapped into process @a pid ("self" or a
 * number), comma-separated, each once, in @a out; "none" if there is none. */
static void mapped_libpmix(const char *pid, char *out, size_t cap)
{
    char path[64], line[4096];
    size_t len = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%s/maps", pid);
    out[0] = '\0';
    f      = fopen(path, "r");
    if (f == NULL) {
        fail("cannot open %s", path);
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = strchr(line, '/');

        if (p == NULL || strstr(p, "/libpmix.so") == NULL) {
            continue;
        }
        p[strcspn(p, "\n")] = '\0';
        if (strstr(out, p) != NULL) {
            continue; /* one line per mapped segment */
        }
        len += (size_t)snprintf(out + len, cap - len, "%s%s",
                                len > 0 ? "," : "", p);
        if (len >= cap) {
            fail("the libpmix paths of %s do not fit", path);
        }
    }
    fclose(f);
    if (len == 0) {
        snprintf(out, cap, "none");
    }
}

static void parent_comm(char *out, size_t cap)
{
    char path[64];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
    f = fopen(path, "r");
    if (f == NULL || fgets(out, (int)cap, f) == NULL) {
        fail("cannot read %s", path);
    }
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

static unsigned env_uint(const char *name)
{
    const char *s = getenv(name);
    char *end;
    unsigned long v;

    if (s == NULL || s[0] == '\0') {
        fail("%s is not set: not started by srun?", name);
    }
    v = strtoul(s, &end, 10);
    if (*end != '\0') {
        fail("%s is '%s', not a number", name, s);
    }
    return (unsigned)v;
}

static void expect_u32(const pmix_proc_t *proc, const char *key, unsigned want)
{
    uint32_t got = get_u32(proc, key);

    if (got != want) {
        fail("%s of %s:%u is %u, expected %u", key, proc->nspace, proc->rank,
             got, want);
    }
}

static void expect_u16(const pmix_proc_t *proc, const char *key, unsigned want)
{
    pmix_value_t *v = get(proc, key, PMIX_UINT16);

    if (v->data.uint16 != want) {
        fail("%s of %s:%u is %u, expected %u", key, proc->nspace, proc->rank,
             (unsigned)v->data.uint16, want);
    }
    PMIX_VALUE_RELEASE(v);
}

static void fence(bool collect)
{
    pmix_info_t info;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence(%s): %s", collect ? "collect" : "barrier",
             PMIx_Error_string(rc));
    }
}

/* The marker the last rank makes just before operation @a what
 * (waits_for_last). */
static void marker_path(char *buf, size_t len, const char *what)
{
    const char *dir = getenv("TMPDIR");

    snprintf(buf, len, "%s/slurm_client.%s.%s.%s", dir != NULL ? dir : "/tmp",
             getenv("SLURM_JOB_ID") != NULL ? getenv("SLURM_JOB_ID") : "0",
             getenv("SLURM_STEP_ID") != NULL ? getenv("SLURM_STEP_ID") : "0",
             what);
}

/* the operations that must wait for every rank (waits_for_last) */
static pmix_status_t barrier_op(pmix_proc_t *all, size_t n)
{
    (void)all;
    (void)n;
    return PMIx_Fence(NULL, 0, NULL, 0);
}

static pmix_status_t connect_op(pmix_proc_t *all, size_t n)
{
    return PMIx_Connect(all, n, NULL, 0);
}

static pmix_status_t disconnect_op(pmix_proc_t *all, size_t n)
{
    return PMIx_Disconnect(all, n, NULL, 0);
}

/*
 * Operation @a op over every rank waits for the last rank: that rank
 * arrives late (after a second) and makes a marker file first; every rank
 * finds the marker once its call returns.  The nodes share this machine's
 * file system.  (Under Slurm 22.05's tree collective, which a fence
 * without data gets, the other nodes' ranks were seen past the fence
 * before the last rank came; docs/design.md, "Slurm's fences".)
 */
static void waits_for_last(unsigned nprocs, const char *what,
                           pmix_status_t (*op)(pmix_proc_t *, size_t))
{
    pmix_proc_t *all = calloc(nprocs, sizeof(*all));
    char path[4096];
    pmix_status_t rc;
    FILE *f;

    if (all == NULL) {
        fail("out of memory");
    }
    for (unsigned r = 0; r < nprocs; r++) {
        PMIX_LOAD_PROCID(&all[r], me.nspace, r);
    }
    marker_path(path, sizeof(path), what);
    if (me.rank == nprocs - 1) {
        sleep(1);
        f = fopen(path, "w");
        if (f == NULL || fclose(f) != 0) {
            fail("cannot make %s", path);
        }
    }
    rc = op(all, nprocs);
    if (rc != PMIX_SUCCESS) {
        fail("%s over every rank: %s", what, PMIx_Error_string(rc));
    }
    if (access(path, F_OK) != 0) {
        fail("%s returned before rank %u reached it", what, nprocs - 1);
    }
    free(all);
}

/* Step 5: the fence without data, connect and disconnect are barriers;
 * once every rank passed them all (the fence after), the last rank
 * removes the markers. */
static const struct {
    const char *what;
    pmix_status_t (*op)(pmix_proc_t *, size_t);
} waiting_ops[] = {
    {"a fence without data", barrier_op},
    {"PMIx_Connect", connect_op},
    {"PMIx_Disconnect", disconnect_op},
};

static void check_waits(unsigned nprocs)
{
    for (size_t i = 0; i < sizeof(waiting_ops) / sizeof(waiting_ops[0]); i++) {
        waits_for_last(nprocs, waiting_ops[i].what, waiting_ops[i].op);
    }
}

static void remove_markers(void)
{
    char path[4096];

    for (size_t i = 0; i < sizeof(waiting_ops) / sizeof(waiting_ops[0]); i++) {
        marker_path(path, sizeof(path), waiting_ops[i].what);
        unlink(path);
    }
}

/* step 1: this rank's own info against srun's arguments and environment */
static void check_self(unsigned nprocs, unsigned nnodes, const char *host)
{
    pmix_proc_t wild;
    const char *slurm_host = getenv("SLURMD_NODENAME");
    unsigned localid       = env_uint("SLURM_LOCALID");

    if (me.rank != env_uint("SLURM_PROCID")) {
        fail("PMIx_Init gave rank %u, SLURM_PROCID is %u", me.rank,
             env_uint("SLURM_PROCID"));
    }
    if (env_uint("SLURM_NTASKS") != nprocs) {
        fail("SLURM_NTASKS is %u, the test launched %u",
             env_uint("SLURM_NTASKS"), nprocs);
    }
    if (slurm_host == NULL || strcmp(slurm_host, host) != 0) {
        fail("SLURMD_NODENAME is %s but gethostname() says %s: the node "
             "does not run in its own UTS namespace",
             slurm_host != NULL ? slurm_host : "unset", host);
    }

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    expect_u32(&wild, PMIX_JOB_SIZE, nprocs);
    expect_u32(&wild, PMIX_NUM_NODES, nnodes);
    expect_u32(&me, PMIX_NODEID, env_uint("SLURM_NODEID"));
    check_str(&me, PMIX_HOSTNAME, host);
    expect_u16(&me, PMIX_LOCAL_RANK, localid);
    /* one job per node: the node rank is the local rank */
    expect_u16(&me, PMIX_NODE_RANK, localid);
    /* srun launched one application */
    if (openpmix) {
        pmix_value_t *v = get(&me, PMIX_APPNUM, PMIX_INT);

        if (v->data.integer != 0) {
            fail("%s is %d, expected 0", PMIX_APPNUM, v->data.integer);
        }
        PMIX_VALUE_RELEASE(v);
    } else {
        expect_u32(&me, PMIX_APPNUM, 0);
    }
}

/* step 2: exchange places; fills @a places (indexed by rank) */
static void exchange(unsigned nprocs, const char *host, struct place *places)
{
    unsigned node = env_uint("SLURM_NODEID");
    char mine[512];
    pmix_status_t rc;

    snprintf(mine, sizeof(mine), "rank %u node %u host %s", me.rank, node,
             host);
    put_str(PMIX_GLOBAL, WHERE_KEY, mine);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
    fence(true);
    for (unsigned r = 0; r < nprocs; r++) {
        pmix_proc_t peer;
        pmix_value_t *v;
        unsigned got_rank;
        int used = 0;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        v = get(&peer, WHERE_KEY, PMIX_STRING);
        if (sscanf(v->data.string, "rank %u node %u host %255s%n", &got_rank,
                   &places[r].node, places[r].host, &used)
                < 3
            || (size_t)used != strlen(v->data.string) || got_rank != r) {
            fail("rank %u's %s is '%s'", r, WHERE_KEY, v->data.string);
        }
        PMIX_VALUE_RELEASE(v);
    }
}

/* step 3: local peers, and every peer's host and node id */
static void check_peers(unsigned nprocs, const char *host,
                        const struct place *places)
{
    pmix_proc_t wild;
    char want[8192];
    size_t len      = 0;
    unsigned nlocal = 0;

    for (unsigned r = 0; r < nprocs; r++) {
        if (strcmp(places[r].host, host) == 0) {
            len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%u",
                                    nlocal > 0 ? "," : "", r);
            nlocal++;
            if (len >= sizeof(want)) {
                fail("too many local peers for this test");
            }
        }
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    expect_u32(&wild, PMIX_LOCAL_SIZE, nlocal);
    check_str(&wild, PMIX_LOCAL_PEERS, want);

    for (unsigned r = 0; r < nprocs; r++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        pmix_status_t rc;
        bool local = strcmp(places[r].host, host) == 0;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        check_str(&peer, PMIX_HOSTNAME, places[r].host);
        rc = PMIx_Get(&peer, PMIX_NODEID, NULL, 0, &v);
        if (rc == PMIX_ERR_NOT_FOUND && !local && openpmix) {
            continue; /* OpenPMIx has none for remote ranks */
        }
        if (rc != PMIX_SUCCESS || v == NULL) {
            fail("PMIx_Get(%s:%u, %s) of a rank on %s node: %s", peer.nspace, r,
                 PMIX_NODEID, local ? "this" : "another",
                 PMIx_Error_string(rc));
        }
        if (v->type != PMIX_UINT32) {
            fail("PMIx_Get(%s:%u, %s): type %s, expected %s", peer.nspace, r,
                 PMIX_NODEID, PMIx_Data_type_string(v->type),
                 PMIx_Data_type_string(PMIX_UINT32));
        }
        if (v->data.uint32 != places[r].node) {
            fail("%s of %s:%u is %u, but that rank runs on node %u (%s)",
                 PMIX_NODEID, peer.nspace, r, v->data.uint32, places[r].node,
                 places[r].host);
        }
        PMIX_VALUE_RELEASE(v);
    }
}

/* Construct group @a name over @a procs with a bounded wait; its status.
 * On success check the membership and destruct it again. */
static pmix_status_t group_over(const char *name, const pmix_proc_t *procs,
                                size_t nprocs)
{
    pmix_info_t info[1];
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    int secs         = 20; /* a hang is a failure, never a stuck step */
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
    rc = PMIx_Group_construct(name, procs, nprocs, info, 1, &res, &nres);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    for (size_t i = 0; i < nres; i++) {
        if (PMIX_CHECK_KEY(&res[i], PMIX_GROUP_MEMBERSHIP)
            && (res[i].value.type != PMIX_DATA_ARRAY
                || res[i].value.data.darray->size != nprocs)) {
            fail("group %s: the membership does not have %zu members", name,
                 nprocs);
        }
    }
    PMIX_INFO_FREE(res, nres);
    rc = PMIx_Group_destruct(name, info, 1);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Group_destruct(%s): %s", name, PMIx_Error_string(rc));
    }
    return PMIX_SUCCESS;
}

/*
 * 4. (rdpmix, one rank per node on three or more nodes) a group over every
 *    rank is made through Slurm's fence; one over the first and the last
 *    rank only, on two of the nodes, and a connect over those two fail at
 *    once with
 *    PMIX_ERR_NOT_SUPPORTED: Slurm 22.05's collectives cannot run over
 *    processes on only some of the nodes (docs/status.md).
 */
static void check_groups(unsigned nprocs)
{
    pmix_proc_t *all = calloc(nprocs, sizeof(*all));
    pmix_proc_t ends[2];
    pmix_status_t rc;

    if (all == NULL) {
        fail("out of memory");
    }
    for (unsigned r = 0; r < nprocs; r++) {
        PMIX_LOAD_PROCID(&all[r], me.nspace, r);
    }
    rc = group_over("slurm.all", all, nprocs);
    if (rc != PMIX_SUCCESS) {
        fail("a group over every rank: %s", PMIx_Error_string(rc));
    }
    if (me.rank == 0 || me.rank == nprocs - 1) {
        PMIX_LOAD_PROCID(&ends[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&ends[1], me.nspace, nprocs - 1);
        rc = group_over("slurm.ends", ends, 2);
        if (rc != PMIX_ERR_NOT_SUPPORTED) {
            fail("a group over ranks on only some nodes: %s, expected %s",
                 PMIx_Error_string(rc),
                 PMIx_Error_string(PMIX_ERR_NOT_SUPPORTED));
        }
        rc = PMIx_Connect(ends, 2, NULL, 0);
        if (rc != PMIX_ERR_NOT_SUPPORTED) {
            fail("a connect over ranks on only some nodes: %s, expected %s",
                 PMIx_Error_string(rc),
                 PMIx_Error_string(PMIX_ERR_NOT_SUPPORTED));
        }
    }
    free(all);
}

int main(int argc, char **argv)
{
    unsigned nprocs, nnodes;
    char host[256], lib[4096], server[4096], parent[64], ppid[32];
    struct place *places;
    pmix_status_t rc;

    check_prog = "slurm_client";
    if (argc > 1 && strcmp(argv[1], "--openpmix") == 0) {
        openpmix = true;
        argc--;
        argv++;
    }
    if (argc != 3 || (nprocs = (unsigned)atoi(argv[1])) == 0
        || (nnodes = (unsigned)atoi(argv[2])) == 0) {
        fprintf(stderr, "usage: slurm_client [--openpmix] NPROCS NNODES\n");
        return 2;
    }
    if (gethostname(host, sizeof(host)) != 0) {
        perror("gethostname");
        return 1;
    }
    host[sizeof(host) - 1] = '\0';

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "slurm_client: PMIx_Init failed: %s\n",
                PMIx_Error_string(rc));
        return 1;
    }
    places = calloc(nprocs, sizeof(*places));
    if (places == NULL) {
        fail("out of memory");
    }
    check_self(nprocs, nnodes, host);
    exchange(nprocs, host, places);
    check_peers(nprocs, host, places);
    if (!openpmix && nnodes >= 3 && nprocs == nnodes) {
        check_groups(nprocs);
    }
    if (!openpmix) {
        check_waits(nprocs);
    }
    fence(false);
    if (!openpmix && me.rank == nprocs - 1) {
        remove_markers();
    }

    mapped_libpmix("self", lib, sizeof(lib));
    snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
    mapped_libpmix(ppid, server, sizeof(server));
    parent_comm(parent, sizeof(parent));
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
    printf("rank %u of %u ok host %s node %u libpmix=%s server=%s parent=%s\n",
           me.rank, nprocs, host, places[me.rank].node, lib, server, parent);
    free(places);
    return 0;
}
