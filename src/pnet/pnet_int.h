/* pnet_int.h - the pnet module interface (private to src/pnet) */
#ifndef RDP_PNET_PNET_INT_H
#define RDP_PNET_PNET_INT_H

#include <pmix_common.h>

#include "core/util/hash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What a module adds to setup_application's answer: environment
 * directives (PMIX_SET_ENVAR, ...) and job-level values.  The host's
 * PMIX_SETUP_APP_ENVARS / _NONENVARS choice decides which of the two are
 * kept (the other adds are accepted and dropped), so modules need not know.
 */
typedef struct rdp_pnet_out {
    void *list;  /* PMIx_Info_list handle */
    bool envars; /* keep environment directives */
    bool values; /* keep the rest */
} rdp_pnet_out_t;

/** Add PMIX_SET_ENVAR @a name=@a value (copied). */
pmix_status_t rdp_pnet_out_setenv(rdp_pnet_out_t *out, const char *name,
                                  const char *value);

/** Add PMIX_ADD_ENVAR @a name=@a value (copied): set unless already set. */
pmix_status_t rdp_pnet_out_addenv(rdp_pnet_out_t *out, const char *name,
                                  const char *value);

/** Add a job-level value @a key (copied) of @a type. */
pmix_status_t rdp_pnet_out_value(rdp_pnet_out_t *out, const char *key,
                                 const void *value, pmix_data_type_t type);

/*
 * A module.  Every hook may be NULL (nothing to do at that step).  Hooks
 * run on the server's loop thread; none may block for long.
 */
typedef struct rdp_pnet_module {
    const char *name;
    /* the names of its site settings (NULL-terminated; none secret: a
     * secret lives in a file they name), for rdp_pnet_describe */
    const char *const *settings;
    /* can the module serve on this machine (hardware, configuration)? */
    bool (*usable)(void);
    /* head node: mint what job @a nspace needs into @a out */
    pmix_status_t (*setup_app)(const char *nspace, rdp_pnet_out_t *out);
    /* head node: setup_app of another module failed, or the job ended:
     * give back what setup_app took */
    void (*release_app)(const char *nspace);
    /* each node, before forks: program this node for the job from the
     * whole setup_application answer; what only this node's processes
     * get (a CXI service id) goes to @a node */
    pmix_status_t (*setup_local)(const char *nspace, const pmix_info_t *info,
                                 size_t ninfo, rdp_pnet_out_t *node);
    /* each node, at register_nspace, when no setup_local came for the
     * job (a host without a head-node step: Slurm's srun): derive what
     * every node of the job must agree on from site settings and the
     * nspace alone, into @a out */
    pmix_status_t (*derive)(const char *nspace, rdp_pnet_out_t *out);
    /* each node: the job ended here */
    void (*job_end)(const char *nspace);
    /* each node, at register_nspace, for every process the host gave a
     * binding: what that process alone gets (ib: UCX_NET_DEVICES, its
     * nearest HCAs), as environment directives into @a out.  The binding
     * is @a cpuset (PMIX_CPUSET), else @a locality (PMIX_LOCALITY_STRING);
     * one of them is set */
    pmix_status_t (*setup_proc)(const char *nspace, pmix_rank_t rank,
                                const char *cpuset, const char *locality,
                                rdp_pnet_out_t *out);
} rdp_pnet_module_t;

/* ---- the selection (pnet.c) ---- */

/** How many modules are selected */
size_t rdp_pnet_nselected(void);

/** The @a i-th selected module, in running order */
const rdp_pnet_module_t *rdp_pnet_selected_module(size_t i);

/** @a out's list as a new array (NULL, 0 when empty); the list is kept */
pmix_status_t rdp_pnet_out_finish(rdp_pnet_out_t *out, pmix_info_t **info_p,
                                  size_t *ninfo_p);

/** pnet's lock over what setup_fork reads; a pthread_atfork handler holds
 * it across fork, so a forked child finds it free and the tables whole */
void rdp_pnet_lock(void);
void rdp_pnet_unlock(void);

/**
 * Under the caller's lock: keep @a value for @a nspace in @a table
 * (initialised on first use, *@a ready then set; @a value NULL: forget);
 * *@a old_p gets what was kept before (NULL if nothing), for the caller
 * to destroy once unlocked.
 */
pmix_status_t rdp_pnet_table_swap(rdp_hash_t *table, bool *ready,
                                  const char *nspace, void *value,
                                  void **old_p);

/* ---- per-process environment (pnet_proc.c) ---- */

/** Apply what was kept for process @a rank of @a nspace to *@a env */
pmix_status_t rdp_pnet_proc_setup_fork(const char *nspace, pmix_rank_t rank,
                                       char ***env);

/** Forget (and wipe) what was kept for @a nspace's processes */
void rdp_pnet_procs_forget(const char *nspace);

/** Forget every nspace's processes */
void rdp_pnet_procs_cleanup(void);

/* ---- pools (pnet_pool.c): values of [lo, hi] held by live jobs ---- */

/** The directory of the pools' state files (RDPMIX_PNET_STATE_DIR, else
 * <localstatedir>/lib/rdpmix/pnet).  Borrowed. */
const char *rdp_pnet_state_dir(void);

/**
 * Take @a count values of [@a lo, @a hi] that no live job holds, for
 * @a nspace, into @a values (lowest first).  PMIX_ERR_OUT_OF_RESOURCE
 * (logged, nothing taken) when too few are free.  Safe across processes.
 */
pmix_status_t rdp_pnet_pool_take(const char *pool, uint32_t lo, uint32_t hi,
                                 const char *nspace, size_t count,
                                 uint32_t *values);

/** Give back every value @a nspace holds in @a pool. */
void rdp_pnet_pool_give_back(const char *pool, const char *nspace);

/** How many values of @a pool live jobs hold (tests, rdpmix-info). */
size_t rdp_pnet_pool_in_use(const char *pool);

/* ---- site settings (pnet_conf.c) ---- */

/** The settings file (RDPMIX_PNET_CONF, else <sysconfdir>/rdpmix/pnet.conf) */
const char *rdp_pnet_conf_path(void);

/** Setting @a name (RDPMIX_PNET_<NAME> first, then the file) into @a buf. */
bool rdp_pnet_conf_get(const char *name, char *buf, size_t len);

/** Setting @a name as a range "LOW-HIGH" (decimal or 0x hex). */
pmix_status_t rdp_pnet_conf_range(const char *name, uint32_t *lo_p,
                                  uint32_t *hi_p);

/** Setting @a name as a positive count, @a dflt when absent. */
pmix_status_t rdp_pnet_conf_count(const char *name, uint32_t dflt,
                                  uint32_t *n_p);

/* ---- CXI services through libcxi (pnet_cxi.c; sshot) ---- */

#define RDP_PNET_CXI_MAX_DEVICES 16

typedef struct rdp_pnet_cxi rdp_pnet_cxi_t;

/**
 * dlopen libcxi at @a path ("libcxi.so.1", or a file) and find its service
 * functions.  PMIX_ERR_NOT_FOUND when it cannot be loaded (the node has
 * none: debug log), PMIX_ERR_NOT_SUPPORTED when it lacks a function
 * (warned).  Release with rdp_pnet_cxi_unload.
 */
pmix_status_t rdp_pnet_cxi_load(const char *path, rdp_pnet_cxi_t **cxi_p);

void rdp_pnet_cxi_unload(rdp_pnet_cxi_t *cxi);

/**
 * On every device of @a devices ("cxi0,cxi1"), allocate a service only
 * @a uid may use, with only @a vnis (1 to 4 of them); their ids, in the
 * devices' order, into @a svc_ids ("5,6").  On failure (logged) the
 * services already allocated are destroyed.
 */
pmix_status_t rdp_pnet_cxi_setup(const rdp_pnet_cxi_t *cxi, const char *devices,
                                 uid_t uid, const uint32_t *vnis, size_t nvnis,
                                 char *svc_ids, size_t len);

/** Destroy the services @a svc_ids of rdp_pnet_cxi_setup on @a devices */
void rdp_pnet_cxi_release(const rdp_pnet_cxi_t *cxi, const char *devices,
                          const char *svc_ids);

extern const rdp_pnet_module_t rdp_pnet_simptest_module;
extern const rdp_pnet_module_t rdp_pnet_opa_module;
extern const rdp_pnet_module_t rdp_pnet_ib_module;
extern const rdp_pnet_module_t rdp_pnet_tcp_module;
extern const rdp_pnet_module_t rdp_pnet_sshot_module;

/** simptest: how many nspaces hold an application setup (@a local 0) or a
 * node setup (@a local 1) here; for tests. */
size_t rdp_pnet_simptest_live(int local);

#endif
