/* run_client_pnet.c - run_client pnet OWN OTHER: a job's pnet values are
 * its own (docs/pnet.md).
 *
 * Every rank Gets its job's PMIX_CREDENTIAL and its tcp port block
 * (rdpmix.pnet.tcp.ports; "none" without one) and prints them; rank 0 writes the job's nspace
 * to the file OWN; then every rank waits (bounded) for the file OTHER,
 * another job's nspace, and asks for that job's credential and port block,
 * printing the statuses: "other_cred=STATUS other_ports=STATUS".
 */
#include "run_client.h"

#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_nspace(const char *path)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", me.nspace) < 0 || fclose(f) != 0
        || rename(tmp, path) != 0) {
        fail("cannot write %s", path);
    }
}

/* The nspace in @a path, waiting for it at most 60 s */
static void read_nspace(const char *path, pmix_nspace_t ns)
{
    char line[PMIX_MAX_NSLEN + 2] = "";
    FILE *f                       = NULL;

    for (int i = 0; i < 600 && (f = fopen(path, "r")) == NULL; i++) {
        usleep(100000);
    }
    if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
        fail("no nspace in %s", path);
    }
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    PMIX_LOAD_NSPACE(ns, line);
}

static pmix_status_t try_get(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc  = PMIx_Get(proc, key, NULL, 0, &val);

    if (val != NULL) {
        PMIX_VALUE_RELEASE(val);
    }
    return rc;
}

int pnet_main(const char *own, const char *other)
{
    pmix_proc_t job, theirs;
    char *cred, *ports;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    cred = get_string(&job, PMIX_CREDENTIAL);
    /* the port block only where the tcp module runs */
    ports = try_get(&job, "rdpmix.pnet.tcp.ports") == PMIX_SUCCESS
                ? get_string(&job, "rdpmix.pnet.tcp.ports")
                : strdup("none");
    printf("rank=%u cred=%s ports=%s\n", me.rank, cred, ports);
    free(cred);
    free(ports);
    if (me.rank == 0) {
        write_nspace(own);
    }
    read_nspace(other, theirs.nspace);
    theirs.rank = PMIX_RANK_WILDCARD;
    printf("rank=%u other_cred=%s", me.rank,
           PMIx_Error_string(try_get(&theirs, PMIX_CREDENTIAL)));
    printf(" other_ports=%s\n",
           PMIx_Error_string(try_get(&theirs, "rdpmix.pnet.tcp.ports")));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
