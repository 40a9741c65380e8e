/* kvs.h - nspace -> rank -> key -> value store (owns deep copies) */
#ifndef RDP_CORE_KVS_KVS_H
#define RDP_CORE_KVS_KVS_H

#include <pmix_common.h>

#include "core/wire/wire.h"

/*
 * One store serves both sides: the server keeps committed process data and
 * registered job data in it; a client keeps job info, its own puts, and the
 * data fetched from its server.  Ranks include PMIX_RANK_WILDCARD (job
 * level).  Every stored value is a deep copy owned by the store.
 * Lookups are O(1) expected.  Not thread-safe: loop thread only.
 */
typedef struct rdp_kvs rdp_kvs_t;

pmix_status_t rdp_kvs_create(rdp_kvs_t **kvs_p);
/** Frees everything; accepts NULL. */
void rdp_kvs_destroy(rdp_kvs_t *kvs);

/**
 * Store a copy of @a val under (nspace, rank, key), replacing any previous
 * value of that key.  @a scope is kept with it (PMIX_SCOPE_UNDEF if none).
 * @param [in] nspace, key  borrowed; copied
 * @param [in] val          borrowed; deep-copied
 */
pmix_status_t rdp_kvs_put(rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank,
                          const char *key, pmix_scope_t scope,
                          const pmix_value_t *val);
/** As rdp_kvs_put but steals the contents of @a val (left PMIX_UNDEF). */
pmix_status_t rdp_kvs_put_take(rdp_kvs_t *kvs, const char *nspace,
                               pmix_rank_t rank, const char *key,
                               pmix_scope_t scope, pmix_value_t *val);

/** Borrowed pointer, valid until that key is replaced or removed; NULL if
 * absent. */
const pmix_value_t *rdp_kvs_peek(const rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, const char *key);
/** Scope stored with the key, PMIX_SCOPE_UNDEF when absent. */
pmix_scope_t rdp_kvs_scope(const rdp_kvs_t *kvs, const char *nspace,
                           pmix_rank_t rank, const char *key);

/** True if anything is stored for (nspace, rank) — including an empty
 * marker made by rdp_kvs_touch_rank. */
int rdp_kvs_has_rank(const rdp_kvs_t *kvs, const char *nspace,
                     pmix_rank_t rank);
/** Create the (nspace, rank) entry with no keys (e.g. "rank committed
 * nothing"), so has_rank is true. */
pmix_status_t rdp_kvs_touch_rank(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank);
int rdp_kvs_has_nspace(const rdp_kvs_t *kvs, const char *nspace);
/** Number of keys stored for (nspace, rank). */
size_t rdp_kvs_count(const rdp_kvs_t *kvs, const char *nspace,
                     pmix_rank_t rank);

/** Visit every key of (nspace, rank) in insertion order; a non-zero return
 * from @a cb stops the walk. */
typedef int (*rdp_kvs_visit_cb_t)(const char *key, pmix_scope_t scope,
                                  const pmix_value_t *val, void *arg);
void rdp_kvs_for_each(const rdp_kvs_t *kvs, const char *nspace,
                      pmix_rank_t rank, rdp_kvs_visit_cb_t cb, void *arg);
/** Visit every rank stored for @a nspace (any order). */
typedef int (*rdp_kvs_rank_cb_t)(pmix_rank_t rank, void *arg);
void rdp_kvs_for_each_rank(const rdp_kvs_t *kvs, const char *nspace,
                           rdp_kvs_rank_cb_t cb, void *arg);

/* Scope masks for packing: bit (1 << scope). */
#define RDP_SCOPE_BIT(_s) (1u << (_s))
#define RDP_SCOPES_ALL    0xffffffffu
/* What a process on another node may see: remote and global data. */
#define RDP_SCOPES_REMOTE                                                    \
    (RDP_SCOPE_BIT(PMIX_REMOTE) | RDP_SCOPE_BIT(PMIX_GLOBAL)                 \
     | RDP_SCOPE_BIT(PMIX_SCOPE_UNDEF))
/* What a process on the same node may see: local and global data. */
#define RDP_SCOPES_LOCAL                                                     \
    (RDP_SCOPE_BIT(PMIX_LOCAL) | RDP_SCOPE_BIT(PMIX_GLOBAL)                  \
     | RDP_SCOPE_BIT(PMIX_SCOPE_UNDEF))

/**
 * Append the keys of (nspace, rank) whose scope is in @a scope_mask to
 * @a buf as: u32 count, then count x (u8 scope, key string, value).
 */
pmix_status_t rdp_kvs_pack_rank(const rdp_kvs_t *kvs, const char *nspace,
                                pmix_rank_t rank, uint32_t scope_mask,
                                rdp_buf_t *buf);
/**
 * Inverse of rdp_kvs_pack_rank: store every key read from @a rb under
 * (nspace, rank) and mark the rank present even when count is 0.  On a
 * malformed buffer returns an error; keys stored before the error stay.
 */
pmix_status_t rdp_kvs_unpack_rank(rdp_kvs_t *kvs, const char *nspace,
                                  pmix_rank_t rank, rdp_rbuf_t *rb);

/**
 * Memory holding packed kv lists that the store keeps unparsed
 * (rdp_kvs_put_packed): @a release runs when the last reference goes.
 */
typedef struct rdp_kvs_backing rdp_kvs_backing_t;
struct rdp_kvs_backing {
    size_t refs;
    void (*release)(rdp_kvs_backing_t *bk);
};
/** Drop a reference; accepts NULL. */
void rdp_kvs_backing_unref(rdp_kvs_backing_t *bk);

/**
 * Keep the kv list @a kv (@a len bytes, as rdp_kvs_pack_rank writes it)
 * of (nspace, rank) packed inside @a bk (a reference is taken) instead of
 * copies of its values: it is unpacked the first time anything but
 * has_rank, count and an all-scopes rdp_kvs_pack_rank (which appends the
 * bytes as they are) reads or changes the rank.  The list replaces a
 * packed one with no more keys; when the rank holds unpacked keys, or a
 * packed list with more keys, it is unpacked now and merged (keys
 * replace keys) as by rdp_kvs_unpack_rank.  The values are not checked
 * here: a malformed list shows when it is unpacked (logged; the keys
 * read before the error stay).
 */
pmix_status_t rdp_kvs_put_packed(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, const void *kv, size_t len,
                                 rdp_kvs_backing_t *bk);

void rdp_kvs_remove_rank(rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank);
void rdp_kvs_remove_nspace(rdp_kvs_t *kvs, const char *nspace);

#endif
