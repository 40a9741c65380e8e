/* store.h - what a client knows: bundles from the server and Get lookups */
#ifndef RDP_CORE_CLIENT_STORE_H
#define RDP_CORE_CLIENT_STORE_H

#include <pmix_common.h>

#include <pthread.h>

#include "core/kvs/kvs.h"
#include "core/util/hash.h"
#include "core/wire/wire.h"

/*
 * The client keeps the sections of every bundle (proto.h) it receives:
 * job-level data under (nspace, PMIX_RANK_WILDCARD) and proc data under
 * (nspace, rank) in the runtime kvs; app sections under (nspace, appnum)
 * and node sections under (nspace, nodeid) in two kvs of its own.  The
 * lookup rules of PMIx_Get live here, below the socket, so they can be
 * tested without a server.
 *
 * Lazy sections: a PROC section of a bundle the store may keep
 * (rdp_client_store_bundle_keep: fence results, inline or in shared
 * memory) is not unpacked when it arrives.  The store remembers where its
 * kv list lies in the bundle; a Get of its first key unpacks that value
 * straight from the bundle, and anything else (another key of a
 * multi-key section, all keys or a put for that rank) unpacks the whole
 * section into the kvs once; a newer section of the rank replaces it
 * unread (the server sends all it holds of a rank, see store.c).  A lazy section shadows
 * the kvs entries of its rank for the keys it holds.  Each lazy section
 * holds a reference on its bundle's backing (heap copy or read-only
 * mapping), so a mapping lives until its last lazy section is unpacked or
 * replaced, or the store is cleaned up (PMIx_Finalize).
 *
 * Threads: every function takes st->lock for its whole run (any thread),
 * so PMIx_Get and PMIx_Put can work on the caller's thread while the loop
 * thread stores what the server sends.  The borrowed kvs is accessed only
 * through the store (under that lock) while the store exists.
 */
typedef struct lazy lazy_t;
typedef struct rdp_client_backing rdp_client_backing_t;

typedef struct rdp_client_store {
    pthread_mutex_t lock;
    int lock_ok;        /* lock initialised */
    rdp_kvs_t *kvs;     /* borrowed: job and proc data */
    rdp_kvs_t *apps;    /* owned: (nspace, appnum) */
    rdp_kvs_t *nodes;   /* owned: (nspace, nodeid) */
    rdp_hash_t nspaces; /* names of the nspaces we have job data for */
    rdp_hash_t lazy;    /* "nspace\0" rank -> lazy_t (owned) */
    size_t superseded;  /* lazy sections dropped unread (a newer one came) */
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

/**
 * The bytes of one bundle, kept while lazy sections point into them.
 * @a mapped: @a data is a read-only mapping (rdp_ipc_memfd_map) that the
 * backing takes over and unmaps at the end; otherwise @a data is
 * borrowed and copied.  The caller gets one reference.
 */
pmix_status_t rdp_client_backing_create(const void *data, size_t len,
                                        int mapped,
                                        rdp_client_backing_t **bk_p);
/** Drop the caller's reference (under the store's lock). */
void rdp_client_backing_unref(rdp_client_store_t *st, rdp_client_backing_t *bk);

/** Store the whole bundle held by @a bk, keeping its PROC sections
 * packed (lazy).  Each lazy section takes its own reference on @a bk; the
 * caller keeps (and drops) its own.  Same error rules as
 * rdp_client_store_bundle; trailing bytes are an error. */
pmix_status_t rdp_client_store_bundle_keep(rdp_client_store_t *st,
                                           rdp_client_backing_t *bk);

/** The keys of our own put since the last commit, packed for it. */
typedef struct rdp_client_pending rdp_client_pending_t;
pmix_status_t rdp_client_pending_create(rdp_client_pending_t **pend_p);
void rdp_client_pending_destroy(rdp_client_pending_t *pending);
/** Keys the next commit carries. */
size_t rdp_client_pending_count(const rdp_client_pending_t *pending);
/** Where the pending keys are packed, and *len_p bytes of it (NULL:
 * none yet; tests). */
const void *rdp_client_pending_bytes(const rdp_client_pending_t *pending,
                                     size_t *len_p);

/**
 * A put of our own (PMIx_Put, PMIx_Store_internal): store @a val (its
 * contents are taken, left PMIX_UNDEF on success) under (nspace, rank,
 * key), and when @a pending is not NULL also pack it there for the next
 * commit (replacing an earlier put of the key).  Any thread.
 */
pmix_status_t rdp_client_store_put(rdp_client_store_t *st,
                                   rdp_client_pending_t *pending,
                                   const char *nspace, pmix_rank_t rank,
                                   const char *key, pmix_scope_t scope,
                                   pmix_value_t *val);
/** The pending keys as rdp_kvs_pack_rank packs a rank ([u32 count]
 * then the items) into @a buf (empty; NULL: dropped), then forgotten. */
pmix_status_t rdp_client_store_take_pending(rdp_client_store_t *st,
                                            rdp_client_pending_t *pending,
                                            rdp_buf_t *buf);

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
pmix_status_t rdp_client_store_lookup(rdp_client_store_t *st,
                                      const pmix_proc_t *proc, const char *key,
                                      const rdp_get_quals_t *q,
                                      pmix_value_t **val_p);

/** After a local miss: is the server worth asking?  (Not for optional
 * gets, our own data, or job/node/app data of an nspace we know.) */
int rdp_client_store_should_fetch(rdp_client_store_t *st,
                                  const pmix_proc_t *proc,
                                  const rdp_get_quals_t *q);

/** Values the library makes up when nobody registered them (PMIX_APPNUM
 * 0).  PMIX_SUCCESS with a malloc'ed *val_p, or PMIX_ERR_NOT_FOUND. */
pmix_status_t rdp_client_store_synthesize(const rdp_client_store_t *st,
                                          const pmix_proc_t *proc,
                                          const char *key,
                                          pmix_value_t **val_p);

/** True if job data of @a nspace is held. */
int rdp_client_store_knows(rdp_client_store_t *st, const char *nspace);

/**
 * Procs of @a nspace (NULL or empty: every known nspace) on @a nodename
 * (NULL or ours: our node).  *procs_p is malloc'ed (PMIX_PROC_FREE).
 * PMIX_ERR_NOT_FOUND when there are none.
 */
pmix_status_t rdp_client_store_resolve_peers(rdp_client_store_t *st,
                                             const char *nodename,
                                             const char *nspace,
                                             pmix_proc_t **procs_p,
                                             size_t *nprocs_p);
/** Comma-separated malloc'ed list of the nodes hosting @a nspace (NULL or
 * empty: every known nspace); PMIX_ERR_NOT_FOUND when none are known. */
pmix_status_t rdp_client_store_resolve_nodes(rdp_client_store_t *st,
                                             const char *nspace,
                                             char **nodelist_p);

#endif
