/* engine_client.c - a PMIx client of a job spread over engine-mode servers
 *
 * usage: engine_client PPN   (run by engine_host, PPN ranks per server)
 *
 * 1. direct modex without any fence: every rank commits a value (large
 *    for even ranks, so rendezvous paths run too) and gets every peer's,
 *    the owners answering once the peer committed;
 * 2. a barrier (fence without PMIX_COLLECT_DATA);
 * 3. a fence with PMIX_COLLECT_DATA, then the new values of every peer
 *    (and the local-scope value of the peers on this node);
 * 4. a last barrier.  Prints "rank R of N ok".
 *
 * With ENGINE_HOST_KILL=s in the environment the ranks of server s sleep
 * (to be killed with their server) and the others expect their collecting
 * fence to fail (by its PMIX_TIMEOUT at the latest).  With also
 * ENGINE_CLIENT_NO_TIMEOUT=1 that fence has no timeout at all: it must
 * fail because the servers learn of the death, not by a timeout (else it
 * hangs until engine_host gives up, which fails the test).
 */
#include <pmix.h>

#include "client_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FENCE_TIMEOUT 20
#define KILL_TIMEOUT  5 /* the fence a dead server never joins */
#define BIG_LEN       (100 * 1024)

/* The value rank @a r puts under @a tag: big for even ranks in round 1. */
static char *value_of(const char *tag, uint32_t r, int big)
{
    size_t len = big && r % 2 == 0 ? BIG_LEN : 32;
    char *s    = malloc(len + 1);
    int n      = snprintf(s, len + 1, "%s-%u-", tag, r);

    for (size_t i = (size_t)n; i < len; i++) {
        s[i] = (char)('a' + (i * 7 + r) % 26);
    }
    s[len] = '\0';
    return s;
}

static pmix_status_t fence(int collect, uint32_t t)
{
    pmix_info_t info[2];
    bool flag = collect != 0;

    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &t, PMIX_UINT32);
    rc = PMIx_Fence(NULL, 0, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

int main(int argc, char **argv)
{
    pmix_proc_t wild, peer;
    uint32_t n, ppn, mynode;
    const char *victim = getenv("ENGINE_HOST_KILL");
    pmix_status_t rc;
    char *want;

    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: engine_client PPN\n");
        return 2;
    }
    ppn               = (uint32_t)atoi(argv[1]);
    check_prog        = "engine_client";
    check_get_timeout = FENCE_TIMEOUT;
    rc                = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Init: %s", PMIx_Error_string(rc));
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    n = get_u32(&wild, PMIX_JOB_SIZE);
    if (get_u32(&wild, PMIX_LOCAL_SIZE) != ppn) {
        fail("local size is not %u", ppn);
    }
    mynode = get_u32(&me, PMIX_NODEID);
    if (mynode != me.rank / ppn) {
        fail("node id %u", mynode);
    }

    if (victim != NULL && *victim != '\0') {
        if ((uint32_t)atoi(victim) == mynode) {
            sleep(120); /* killed with the server */
            return 0;
        }
        want = value_of("kill", me.rank, 1);
        put_str(PMIX_GLOBAL, "eng.kill", want);
        free(want);
        PMIx_Commit();
        if (getenv("ENGINE_CLIENT_NO_TIMEOUT") != NULL) {
            rc = fence(1, 0);
            if (rc == PMIX_ERR_TIMEOUT) {
                fail("the fence without a timeout timed out");
            }
        } else {
            rc = fence(1, KILL_TIMEOUT);
        }
        if (rc == PMIX_SUCCESS) {
            fail("the fence succeeded although server %s died", victim);
        }
        printf("rank %u of %u ok (fence failed: %s)\n", me.rank, n,
               PMIx_Error_string(rc));
        fflush(stdout);
        _exit(0); /* the job is broken: do not wait in Finalize */
    }

    /* 1: direct modex, no fence */
    want = value_of("dm", me.rank, 1);
    put_str(PMIX_GLOBAL, "eng.dm", want);
    free(want);
    if (PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Commit");
    }
    for (uint32_t i = 1; i <= n; i++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + i) % n);
        want = value_of("dm", peer.rank, 1);
        check_str(&peer, "eng.dm", want);
        free(want);
    }

    /* 2: barrier */
    rc = fence(0, FENCE_TIMEOUT);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence (barrier): %s", PMIx_Error_string(rc));
    }

    /* 3: collecting fence */
    want = value_of("fc", me.rank, 0);
    put_str(PMIX_GLOBAL, "eng.fc", want);
    put_str(PMIX_LOCAL, "eng.local", want);
    free(want);
    if (PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Commit");
    }
    rc = fence(1, FENCE_TIMEOUT);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence (collect): %s", PMIx_Error_string(rc));
    }
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        want = value_of("fc", r, 0);
        check_str(&peer, "eng.fc", want);
        if (r / ppn == mynode) {
            check_str(&peer, "eng.local", want);
        }
        free(want);
    }

    /* 4 */
    rc = fence(0, FENCE_TIMEOUT);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence (last): %s", PMIx_Error_string(rc));
    }
    if (PMIx_Finalize(NULL, 0) != PMIX_SUCCESS) {
        fail("PMIx_Finalize");
    }
    printf("rank %u of %u ok\n", me.rank, n);
    return 0;
}
