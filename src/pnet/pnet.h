/* pnet.h - fabric credentials for a job's processes (RFC0012, DESIGN.md §9)
 *
 * The lifecycle, driven by the server's Standard calls:
 *
 *   head node   PMIx_server_setup_application -> rdp_pnet_setup_app:
 *               every selected module mints what the job needs (a key, a
 *               VNI, ...) as environment directives (PMIX_SET_ENVAR, ...)
 *               and job-level values; the host ships the array with the
 *               launch.
 *   each node   PMIx_server_setup_local_support -> rdp_pnet_setup_local:
 *               the array is kept for the nspace (its environment
 *               directives, for setup_fork) and every module programs the
 *               local fabric from it, before the host forks.
 *   per process PMIx_server_setup_fork -> rdp_pnet_setup_fork: the
 *               nspace's directives are applied to the child's
 *               environment.  Safe in a forked child (no loop thread).
 *   job end     PMIx_server_deregister_nspace -> rdp_pnet_job_end: local
 *               state is released and wiped; a module that allocated from
 *               a pool on this node gives the entries back.
 *
 * Secrets never reach a log: only a short fingerprint
 * (rdp_pnet_fingerprint).  The functions are called from the server's loop
 * thread, except rdp_pnet_setup_fork (any thread, or a forked child).
 */
#ifndef RDP_PNET_PNET_H
#define RDP_PNET_PNET_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Select the modules named by @a spec (RDPMIX_PNET's syntax: a comma list
 * of module names, or "^a,b" for all but those; NULL or "" for every
 * module; "none" for none) whose own query says they can serve on this
 * machine (a module named in a list serves regardless).  A name
 * that is no module is PMIX_ERR_BAD_PARAM (and logged).  Calling it again
 * replaces the selection.
 */
pmix_status_t rdp_pnet_select(const char *spec);

/** Forget the selection and every nspace's state (wiped). */
void rdp_pnet_cleanup(void);

/**
 * The selected modules' names, comma-separated ("" when none), for logs
 * and rdpmix-info.  Borrowed; valid until the next rdp_pnet_select.
 */
const char *rdp_pnet_selected(void);

/**
 * Describe the selection for people (rdpmix-info, logs): each selected
 * module with the site settings it uses that are set, e.g.
 * "opa (opa_secret_file=/etc/rdpmix/opa.key), sshot (sshot_vnis=1024-2047,
 * sshot_svc_command=/usr/sbin/cxi-svc)", or "none".  No secret is ever in
 * it (keys are minted per job; a site secret is only named by its file).
 * Written to @a buf (truncated to @a len); returns the length it needed.
 */
size_t rdp_pnet_describe(char *buf, size_t len);

/**
 * Head node: every selected module adds what job @a nspace needs.
 * @a dirs are setup_application's directives: PMIX_SETUP_APP_ENVARS /
 * PMIX_SETUP_APP_NONENVARS limit the answer to environment directives or
 * to the rest; PMIX_SETUP_APP_ALL (or none of them) gives both.
 * On success *@a info_p / *@a ninfo_p is a new array (NULL, 0 when no
 * module contributes) that the caller frees with PMIx_Info_free.  On
 * failure every module's allocation for the job is released again.
 */
pmix_status_t rdp_pnet_setup_app(const char *nspace, const pmix_info_t *dirs,
                                 size_t ndirs, pmix_info_t **info_p,
                                 size_t *ninfo_p);

/**
 * Each node, before any fork: keep the environment directives of @a info
 * (borrowed; copied) for @a nspace, and let every module program what it
 * must here.  A second call for the same nspace replaces the first.  On
 * failure nothing is kept for the nspace.
 */
pmix_status_t rdp_pnet_setup_local(const char *nspace, const pmix_info_t *info,
                                   size_t ninfo);

/**
 * Apply @a nspace's environment directives, then those of its process
 * @a rank alone (rdp_pnet_setup_procs), to *@a env (a NULL-terminated
 * malloc'ed array, as PMIx_server_setup_fork's).  Nothing to apply is
 * success.  Callable from any thread and from a forked child.
 */
pmix_status_t rdp_pnet_setup_fork(const char *nspace, pmix_rank_t rank,
                                  char ***env);

/**
 * Each node, at register_nspace: for every process of @a info's
 * PMIX_PROC_DATA arrays that has a binding (PMIX_CPUSET, else
 * PMIX_LOCALITY_STRING), every selected module with a per-process step
 * decides what that process alone gets (ib: UCX_NET_DEVICES), kept for
 * setup_fork until the job ends.  A process without a binding gets
 * nothing of its own.  A malformed binding is PMIX_ERR_BAD_PARAM (logged)
 * and nothing is kept for the nspace.
 * @param [in] info  borrowed (the host's register_nspace array)
 */
pmix_status_t rdp_pnet_setup_procs(const char *nspace, const pmix_info_t *info,
                                   size_t ninfo);

/** Module keys of job-level values start with this ("rdpmix.pnet.ib.pkey") */
#define RDP_PNET_KEY_PREFIX "rdpmix.pnet."

/**
 * True if @a key names a job-level value that only the job's own
 * processes may read: PMIX_CREDENTIAL and every RDP_PNET_KEY_PREFIX key.
 * The server answers another job's client or tool asking for one with
 * PMIX_ERR_NO_PERMISSIONS, whether it holds the value or not.
 */
bool rdp_pnet_is_private_key(const char *key);

typedef pmix_status_t (*rdp_pnet_value_fn_t)(const pmix_info_t *value,
                                             void *arg);

/**
 * Call @a fn for every job-level value (not an environment directive)
 * kept for @a nspace by rdp_pnet_setup_local (or derived on this node),
 * under pnet's lock: @a fn must not call pnet.  Stops at the first error,
 * which it returns.  Nothing kept is success.
 */
pmix_status_t rdp_pnet_for_each_value(const char *nspace,
                                      rdp_pnet_value_fn_t fn, void *arg);

/**
 * True if what is kept for @a nspace gives the job an isolation domain of
 * its own on the fabric (opa's job key, ib's partition key, sshot's
 * VNIs): its collectives' payloads may then travel without a MAC
 * ("trust follows the fabric", docs/design.md).
 */
bool rdp_pnet_job_isolated(const char *nspace);

/** True if module @a name gives every job it sets up an isolation domain
 * of its own (what rdp_pnet_job_isolated then finds): opa, ib, sshot. */
bool rdp_pnet_module_isolates(const char *name);

/**
 * Each node, at register_nspace: if nothing was set up for @a nspace
 * (no rdp_pnet_setup_local before), every module that can derive the
 * job's values on its own (opa with a site secret) does, and they are
 * kept as if setup_local had brought them (a later setup_local replaces
 * them).  Nothing to derive is success; a module's error is returned.
 */
pmix_status_t rdp_pnet_derive(const char *nspace);

/** The job ended on this node: release and wipe what is kept for it. */
void rdp_pnet_job_end(const char *nspace);

/**
 * Apply one environment directive (@a key one of PMIX_SET_ENVAR,
 * PMIX_ADD_ENVAR, PMIX_UNSET_ENVAR, PMIX_PREPEND_ENVAR, PMIX_APPEND_ENVAR,
 * PMIX_FIRST_ENVAR) to *@a env.  Other keys: PMIX_ERR_BAD_PARAM.
 */
pmix_status_t rdp_pnet_envar_apply(const char *key, const pmix_value_t *val,
                                   char ***env);

/** Overwrite the bytes of a string, envar or byte-object value (before it
 * is freed: it may hold a key).  Other types are left alone. */
void rdp_pnet_wipe_value(pmix_value_t *val);

/** True if @a key is one of the environment directives above. */
int rdp_pnet_is_envar_key(const char *key);

/**
 * A printable fingerprint of a secret (the first 8 hex digits of a hash,
 * not reversible to the secret) into @a buf (at least 9 bytes).
 */
void rdp_pnet_fingerprint(const void *secret, size_t len, char *buf);

#endif
