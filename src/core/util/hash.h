/* hash.h - chained hash table keyed by byte strings, owning key copies */
#ifndef RDP_CORE_UTIL_HASH_H
#define RDP_CORE_UTIL_HASH_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct rdp_hash_entry {
    struct rdp_hash_entry *next;
    uint64_t hashval;
    size_t keylen;
    void *value;   /* not owned: the caller frees values */
    char key[];    /* copy of the key, NUL-terminated for convenience */
} rdp_hash_entry_t;

typedef struct rdp_hash {
    rdp_hash_entry_t **buckets;
    size_t nbuckets;
    size_t count;
} rdp_hash_t;

/** Embedded init; @a nbuckets_hint of 0 picks a small default. */
pmix_status_t rdp_hash_init(rdp_hash_t *h, size_t nbuckets_hint);
/** Frees entries (not values). Accepts a zeroed struct. */
void rdp_hash_cleanup(rdp_hash_t *h);
/** Frees entries (not values) and keeps the buckets: an empty table,
 * ready for use, with no allocation. */
void rdp_hash_clear(rdp_hash_t *h);

/** Insert or replace. On replace *old_p (if non-NULL) gets the old value.
 * @param [in] key  borrowed; copied */
pmix_status_t rdp_hash_set(rdp_hash_t *h, const void *key, size_t keylen,
                           void *value, void **old_p);
/** Borrowed value or NULL. */
void *rdp_hash_get(const rdp_hash_t *h, const void *key, size_t keylen);
/** Remove; returns the value that was stored, or NULL. */
void *rdp_hash_remove(rdp_hash_t *h, const void *key, size_t keylen);

/* string-key and integer-key conveniences */
static inline pmix_status_t rdp_hash_set_str(rdp_hash_t *h, const char *key,
                                             void *value, void **old_p)
{
    return rdp_hash_set(h, key, strlen(key), value, old_p);
}
static inline void *rdp_hash_get_str(const rdp_hash_t *h, const char *key)
{
    return rdp_hash_get(h, key, strlen(key));
}
static inline void *rdp_hash_remove_str(rdp_hash_t *h, const char *key)
{
    return rdp_hash_remove(h, key, strlen(key));
}
static inline pmix_status_t rdp_hash_set_u64(rdp_hash_t *h, uint64_t key,
                                             void *value, void **old_p)
{
    return rdp_hash_set(h, &key, sizeof(key), value, old_p);
}
static inline void *rdp_hash_get_u64(const rdp_hash_t *h, uint64_t key)
{
    return rdp_hash_get(h, &key, sizeof(key));
}
static inline void *rdp_hash_remove_u64(rdp_hash_t *h, uint64_t key)
{
    return rdp_hash_remove(h, &key, sizeof(key));
}

/* Iterate every entry; the body must not insert or remove. */
#define rdp_hash_for_each(_ent, _h, _i)                                      \
    for ((_i) = 0; (_i) < (_h)->nbuckets; (_i)++)                            \
        for ((_ent) = (_h)->buckets[_i]; (_ent) != NULL;                     \
             (_ent) = (_ent)->next)

uint64_t rdp_hash_bytes(const void *key, size_t len);

#endif
