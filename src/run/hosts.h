/* hosts.h - the nodes of a real multi-node job: --hosts, --hostfile, Slurm */
#ifndef RDP_RUN_HOSTS_H
#define RDP_RUN_HOSTS_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/*
 * rdpmix-run's list of hosts, in node order: node i is the i-th host.
 *
 *   --hosts h1,h2:4,h3     a host may carry its slots after a colon
 *   --hostfile FILE        one host per line, optionally "slots=N";
 *                          '#' starts a comment; blank lines are skipped
 *   Slurm                  SLURM_JOB_NODELIST (expanded by the caller),
 *                          slots from SLURM_TASKS_PER_NODE ("2(x3),1")
 *
 * A host without a slot count has slots 0 ("not given").  A host listed
 * twice is an error: its slots are given once.  Parsers fill @a err with
 * one line saying what is wrong (for "rdpmix-run: ..."), and leave the
 * list as it was on failure.
 */
typedef struct rdp_run_hostent {
    char *name;     /* owned */
    uint32_t slots; /* 0: not given */
} rdp_run_hostent_t;

typedef struct rdp_run_hostlist {
    rdp_run_hostent_t *hosts; /* owned, n entries */
    uint32_t n;
} rdp_run_hostlist_t;

/** Largest slot count of one host. */
#define RDP_RUN_MAX_SLOTS 65536u

/** Append the hosts of "h1,h2:4,..." to @a list. */
pmix_status_t rdp_run_hosts_parse(const char *spec, rdp_run_hostlist_t *list,
                                  char *err, size_t errlen);
/** Append the hosts of a hostfile's text (@a what names it in errors). */
pmix_status_t rdp_run_hostfile_parse(const char *text, const char *what,
                                     rdp_run_hostlist_t *list, char *err,
                                     size_t errlen);
/** Read and parse the hostfile @a path. */
pmix_status_t rdp_run_hostfile_read(const char *path, rdp_run_hostlist_t *list,
                                    char *err, size_t errlen);
/** Append one host (copied); an error if it is already listed. */
pmix_status_t rdp_run_hostlist_add(rdp_run_hostlist_t *list, const char *name,
                                   size_t len, uint32_t slots, char *err,
                                   size_t errlen);
/** Free the entries; the list is empty afterwards. Accepts NULL. */
void rdp_run_hostlist_cleanup(rdp_run_hostlist_t *list);

/**
 * Slurm's per-node counts ("4,1", "2(x3),1", as in SLURM_TASKS_PER_NODE
 * and SLURM_JOB_CPUS_PER_NODE) into @a counts[0..n): they must describe
 * exactly @a n nodes, each at least 1.  0, or -1 if malformed.
 */
int rdp_run_slurm_counts_parse(const char *s, uint32_t n, uint32_t *counts);

#endif
