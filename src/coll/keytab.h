/* keytab.h - private to src/coll: a chained hash table of collective keys
 * whose nodes live inside their owners (no allocation per entry, no key
 * copy, a hash of three words instead of a byte-wise one) */
#ifndef RDP_COLL_KEYTAB_H
#define RDP_COLL_KEYTAB_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

typedef struct coll_key {
    uint64_t sig;
    uint64_t opid;
    uint32_t kind;
    uint32_t zero; /* padding, always 0 so the key bytes are defined */
} coll_key_t;

/* Embedded in what the table holds (a collective, an early-arrival queue,
 * a remembered key); the owner fills key before inserting it. */
typedef struct keytab_node {
    struct keytab_node *next;
    /* what points at this node (its bucket, or the previous node's next):
     * removal unlinks without walking the chain, whose nodes may be cold
     * (the finished-key memory's are) */
    struct keytab_node **pprev;
    coll_key_t key;
    int linked; /* in a table */
} keytab_node_t;

typedef struct keytab {
    keytab_node_t **buckets;
    size_t nbuckets; /* a power of 2 */
    size_t count;
} keytab_t;

static inline int rdp_coll_key_eq(const coll_key_t *a, const coll_key_t *b)
{
    return a->sig == b->sig && a->opid == b->opid && a->kind == b->kind;
}

/** Embedded init with at least @a nbuckets buckets (0: a small default).
 * PMIX_SUCCESS or PMIX_ERR_NOMEM. */
pmix_status_t rdp_keytab_init(keytab_t *t, size_t nbuckets);
/** Frees the buckets, not the nodes (their owners free them).  Accepts a
 * zeroed struct. */
void rdp_keytab_cleanup(keytab_t *t);
/** The node holding @a key (borrowed), or NULL. */
keytab_node_t *rdp_keytab_find(const keytab_t *t, const coll_key_t *key);
/** Link @a node (borrowed until removed; its key is not in @a t yet).
 * Never fails: when the buckets cannot grow, chains get longer. */
void rdp_keytab_insert(keytab_t *t, keytab_node_t *node);
/** Unlink @a node if it is linked. */
void rdp_keytab_remove(keytab_t *t, keytab_node_t *node);
/** Start loading into the cache the bucket @a key would go to (nothing
 * else happens): for an insert known in advance. */
void rdp_keytab_prefetch(const keytab_t *t, const coll_key_t *key);
/** Some linked node (borrowed), or NULL when empty: for draining. */
keytab_node_t *rdp_keytab_any(const keytab_t *t);

#endif
