/* store.h - what a client knows: bundles from the server and Get lookups */
#ifndef RDP_CORE_CLIENT_STORE_H
#define RDP_CORE_CLIENT_STORE_H

#include <pmix_common.h>

#include "core/kvs/kvs.h"
#include "core/util/hash.h"
#include "core/wire/wire.h"

/*
 * The client keeps the sections of every bundle (proto.h) it receives:
 * job-level data under (nspace, PMIX_RANK_WILDCARD) and proc data under
 * (nspace, rank) in the runtime kvs; app sections under (nspace, appnum)
 * and node sections under (nspace, nodeid) in two kvs of its own.  The
 * lookup rules of PMIx_Get live here, below the socket, so they can be
 * tested without a server.  Loop thread only.
 */
typedef struct rdp_client_store {
    rdp_kvs_t *kvs;     /* borrowed: job and proc data */
    rdp_kvs_t *apps;    /* owned: (nspace, appnum) */
    rdp_kvs_t *nodes;   /* owned: (nspace, nodeid) */
    rdp_hash_t nspaces; /* names of the nspaces we have job data for */
    pmix_proc_t me;
    char *hostname; /* owned; our node's name */
} rdp_client_store_t;

/**
 * @param [in] kvs       borrowed; must outlive the store
 * @param [in] me        copied
 * @param [in] hostname  copied
 */
pmix_status_t rdp_client_store_init(rdp_client_store_t *st, rdp_kvs_t *kvs,
                                    const pmix_proc_t *me,
                                    const char *hostname);
/** Frees the app/node stores (not the borrowed kvs); accepts a zeroed st. */
void rdp_client_store_cleanup(rdp_client_store_t *st);

/** Store every section of a bundle read from @a rb (proto.h format).
 * On a malformed bundle returns an error; sections read before stay. */
pmix_status_t rdp_client_store_bundle(rdp_client_store_t *st, rdp_rbuf_t *rb);

/** Remember @a nspace as known (job data present); used by the singleton
 * set-up and by tests. */
pmix_status_t rdp_client_store_add_nspace(rdp_client_store_t *st,
                                          const char *nspace);

/** Synthesize the job info of a singleton (size 1, rank 0, one node). */
pmix_status_t rdp_client_store_load_singleton(rdp_client_store_t *st);

/* Get qualifiers (PMIX_INFO_TRUE semantics for booleans). */
typedef struct rdp_get_quals {
    int optional;
    int immediate;
    int refresh;
    int app_info;
    int node_info;
    int session_info;
    int static_values;
    int have_appnum;
    uint32_t appnum;
    int have_nodeid;
    uint32_t nodeid;
    const char *hostname; /* borrowed from the caller's info */
    double timeout;
} rdp_get_quals_t;

/** Read qualifiers; PMIX_ERR_BAD_PARAM for one of the wrong type. */
pmix_status_t rdp_client_get_quals_parse(rdp_get_quals_t *q,
                                         const pmix_info_t *info, size_t ninfo);

/**
 * Look @a key up for @a proc in what we hold.  @a key NULL returns every
 * key of that proc (or of the job, node or app section selected) as a
 * PMIX_DATA_ARRAY of PMIX_INFO.  Returns PMIX_SUCCESS with *val_p a
 * malloc'ed deep copy (caller frees with PMIX_VALUE_RELEASE), or
 * PMIX_ERR_NOT_FOUND.
 * @param [in] proc  borrowed; an empty nspace means ours
 */
pmix_status_t rdp_client_store_lookup(const rdp_client_store_t *st,
                                      const pmix_proc_t *proc, const char *key,
                                      const rdp_get_quals_t *q,
                                      pmix_value_t **val_p);

/** After a local miss: is the server worth asking?  (Not for optional
 * gets, our own data, or job/node/app data of an nspace we know.) */
int rdp_client_store_should_fetch(const rdp_client_store_t *st,
                                  const pmix_proc_t *proc,
                                  const rdp_get_quals_t *q);

/** Values the library makes up when nobody registered them (PMIX_APPNUM
 * 0).  PMIX_SUCCESS with a malloc'ed *val_p, or PMIX_ERR_NOT_FOUND. */
pmix_status_t rdp_client_store_synthesize(const rdp_client_store_t *st,
                                          const pmix_proc_t *proc,
                                          const char *key,
                                          pmix_value_t **val_p);

/** True if job data of @a nspace is held. */
int rdp_client_store_knows(const rdp_client_store_t *st, const char *nspace);

/**
 * Procs of @a nspace (NULL or empty: every known nspace) on @a nodename
 * (NULL or ours: our node).  *procs_p is malloc'ed (PMIX_PROC_FREE).
 * PMIX_ERR_NOT_FOUND when there are none.
 */
pmix_status_t rdp_client_store_resolve_peers(const rdp_client_store_t *st,
                                             const char *nodename,
                                             const char *nspace,
                                             pmix_proc_t **procs_p,
                                             size_t *nprocs_p);
/** Comma-separated malloc'ed list of the nodes hosting @a nspace (NULL or
 * empty: every known nspace); PMIX_ERR_NOT_FOUND when none are known. */
pmix_status_t rdp_client_store_resolve_nodes(const rdp_client_store_t *st,
                                             const char *nspace,
                                             char **nodelist_p);

#endif
