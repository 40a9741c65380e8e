/* datasvc.h - rdpmix-run's publish/lookup/unpublish data store */
#ifndef RDP_RUN_DATASVC_H
#define RDP_RUN_DATASVC_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/*
 * The data service behind PMIx_Publish, PMIx_Lookup and PMIx_Unpublish
 * (docs/run.md, "Publish and lookup").  It is pure bookkeeping: no I/O,
 * no clock of its own (callers pass the time), so it is unit-tested as
 * is.  rdpmix-run keeps one; every daemon forwards its clients' requests
 * to it.  All of it runs on one thread.
 *
 * Ranges (who sees a key published with PMIX_RANGE):
 *   PROC_LOCAL  the publisher alone        LOCAL      procs of its node
 *   NAMESPACE   procs of its namespace     CUSTOM     the procs listed in
 *   SESSION     every proc of the job                PMIX_EVENT_CUSTOM_RANGE
 *   GLOBAL      every proc of this user, also of other jobs
 *               (rdp_ds_who_t.foreign; datapeer.h)
 * A lookup's PMIX_RANGE narrows where it searches the same way (default
 * SESSION: the whole job).  Persistence (PMIX_PERSISTENCE): INDEF and
 * SESSION last as long as the store; FIRST_READ ends with the first
 * lookup that returns the key; PROC with the publisher's process; APP
 * with its namespace (rdpmix-run jobs have one application).
 */

typedef struct rdp_ds rdp_ds_t;

/** Who asks. */
typedef struct rdp_ds_who {
    pmix_proc_t proc;
    uint32_t node; /* its node in its job (for PMIX_RANGE_LOCAL) */
    int foreign;   /* another job's launcher asks for it: it sees only
                      GLOBAL data and never waits */
} rdp_ds_who_t;

/**
 * The answer to a lookup, called exactly once.  @a status is
 * PMIX_SUCCESS with at least one key found (@a pd: the keys found, their
 * publishers and values; borrowed for the call), else PMIX_ERR_NOT_FOUND,
 * PMIX_ERR_TIMEOUT (a waiting lookup's PMIX_TIMEOUT passed) or
 * PMIX_ERR_LOST_CONNECTION (its requester ended, or the store went away).
 */
typedef void (*rdp_ds_reply_cb_t)(pmix_status_t status, const pmix_pdata_t *pd,
                                  size_t npd, void *arg);

/** NULL when out of memory. */
rdp_ds_t *rdp_ds_create(void);
/** Waiting lookups get PMIX_ERR_LOST_CONNECTION.  Accepts NULL. */
void rdp_ds_destroy(rdp_ds_t *ds);

/**
 * Publish the data keys of @a info (directives PMIX_RANGE,
 * PMIX_PERSISTENCE, PMIX_EVENT_CUSTOM_RANGE, PMIX_TIMEOUT, PMIX_USERID,
 * PMIX_GRPID are not data), all or none: PMIX_ERR_DUPLICATE_KEY when a
 * key is already published in the same range (or twice in @a info),
 * PMIX_ERR_BAD_PARAM without data keys or with a malformed directive,
 * PMIX_ERR_NOT_SUPPORTED for PMIX_RANGE_RM.  Waiting lookups it completes
 * are answered before it returns.
 * @param [in] info  borrowed; values deep-copied
 */
pmix_status_t rdp_ds_publish(rdp_ds_t *ds, const rdp_ds_who_t *who,
                             const pmix_info_t *info, size_t ninfo);

/**
 * Look up @a keys.  Returns PMIX_SUCCESS when @a reply_cb has been or
 * will be called (at once, or later for a lookup with PMIX_WAIT: when
 * enough keys are published, at its PMIX_TIMEOUT (seconds after @a now),
 * or when its requester ends); else an error and @a reply_cb is not
 * called.  FIRST_READ data returned is removed.
 * @param [in] keys  borrowed, NULL-terminated, at least one
 */
pmix_status_t rdp_ds_lookup(rdp_ds_t *ds, const rdp_ds_who_t *who,
                            char *const *keys, const pmix_info_t *info,
                            size_t ninfo, double now,
                            rdp_ds_reply_cb_t reply_cb, void *arg);

/**
 * What a lookup's @a info asks: *@a global_p its range is GLOBAL (other
 * jobs are searched too), *@a want_p how many of its @a nkeys keys it
 * waits for (0: it does not wait), *@a timeout_p its PMIX_TIMEOUT (0:
 * none).  An error for malformed directives.
 */
pmix_status_t rdp_ds_read_wait(const pmix_info_t *info, size_t ninfo,
                               size_t nkeys, int *global_p, size_t *want_p,
                               double *timeout_p);

/**
 * Remove @a keys (NULL: every key) that @a who published, in the range
 * of PMIX_RANGE in @a info if given.  PMIX_ERR_NOT_FOUND if one of @a
 * keys was not published by @a who (the others are still removed).
 */
pmix_status_t rdp_ds_unpublish(rdp_ds_t *ds, const rdp_ds_who_t *who,
                               char *const *keys, const pmix_info_t *info,
                               size_t ninfo);

/** @a proc ended: its PMIX_PERSIST_PROC data goes, its waiting lookups
 * are answered PMIX_ERR_LOST_CONNECTION. */
void rdp_ds_proc_ended(rdp_ds_t *ds, const pmix_proc_t *proc);

/** Every proc of @a nspace ended: its PMIX_PERSIST_APP data goes. */
void rdp_ds_nspace_ended(rdp_ds_t *ds, const char *nspace);

/** Answer PMIX_ERR_TIMEOUT to the waiting lookups whose time passed. */
void rdp_ds_expire(rdp_ds_t *ds, double now);

/** The earliest deadline of a waiting lookup; 0 when none has one. */
double rdp_ds_next_deadline(const rdp_ds_t *ds);

/** Keys stored (tests, debug). */
size_t rdp_ds_nkeys(const rdp_ds_t *ds);
/** Lookups waiting. */
size_t rdp_ds_nwaiting(const rdp_ds_t *ds);

#endif
