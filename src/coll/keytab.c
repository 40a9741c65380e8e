/* keytab.c - chained hash table of collective keys with embedded nodes */
#include "config.h"

#include "coll/keytab.h"

#include "core/util/alloc.h"

#include <string.h>

#define KEYTAB_MIN_BUCKETS 16u

static size_t key_hash(const coll_key_t *key)
{
    uint64_t h = key->sig ^ (key->opid * 0x9e3779b97f4a7c15ULL)
                 ^ ((uint64_t)key->kind << 59);

    h ^= h >> 31;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return (size_t)h;
}

pmix_status_t rdp_keytab_init(keytab_t *t, size_t nbuckets)
{
    size_t n = KEYTAB_MIN_BUCKETS;

    while (n < nbuckets) {
        n <<= 1;
    }
    memset(t, 0, sizeof(*t));
    t->buckets = rdp_calloc(n, sizeof(*t->buckets));
    if (t->buckets == NULL) {
        return PMIX_ERR_NOMEM;
    }
    t->nbuckets = n;
    return PMIX_SUCCESS;
}

void rdp_keytab_cleanup(keytab_t *t)
{
    rdp_free(t->buckets);
    memset(t, 0, sizeof(*t));
}

keytab_node_t *rdp_keytab_find(const keytab_t *t, const coll_key_t *key)
{
    keytab_node_t *n;

    if (t->nbuckets == 0) {
        return NULL;
    }
    n = t->buckets[key_hash(key) & (t->nbuckets - 1)];
    while (n != NULL && !rdp_coll_key_eq(&n->key, key)) {
        n = n->next;
    }
    return n;
}

/* Link @a node at the head of @a bucket. */
static void link_head(keytab_node_t **bucket, keytab_node_t *node)
{
    node->next = *bucket;
    if (node->next != NULL) {
        node->next->pprev = &node->next;
    }
    node->pprev = bucket;
    *bucket     = node;
}

/* Twice the buckets; on failure the table keeps its size. */
static void grow(keytab_t *t)
{
    size_t nb               = t->nbuckets * 2;
    keytab_node_t **buckets = rdp_calloc(nb, sizeof(*buckets));

    if (buckets == NULL) {
        return;
    }
    for (size_t i = 0; i < t->nbuckets; i++) {
        keytab_node_t *n = t->buckets[i];

        while (n != NULL) {
            keytab_node_t *next = n->next;

            link_head(&buckets[key_hash(&n->key) & (nb - 1)], n);
            n = next;
        }
    }
    rdp_free(t->buckets);
    t->buckets  = buckets;
    t->nbuckets = nb;
}

void rdp_keytab_insert(keytab_t *t, keytab_node_t *node)
{
    size_t b;

    if (t->nbuckets == 0) {
        if (rdp_keytab_init(t, 0) != PMIX_SUCCESS) {
            node->linked = 0;
            return; /* not findable: the caller's lookups miss it */
        }
    }
    if (t->count >= t->nbuckets) {
        grow(t);
    }
    b = key_hash(&node->key) & (t->nbuckets - 1);
    link_head(&t->buckets[b], node);
    node->linked = 1;
    t->count++;
}

void rdp_keytab_remove(keytab_t *t, keytab_node_t *node)
{
    if (!node->linked) {
        return;
    }
    *node->pprev = node->next;
    if (node->next != NULL) {
        node->next->pprev = node->pprev;
    }
    t->count--;
    node->next   = NULL;
    node->pprev  = NULL;
    node->linked = 0;
}

void rdp_keytab_prefetch(const keytab_t *t, const coll_key_t *key)
{
    if (t->nbuckets > 0) {
        __builtin_prefetch(&t->buckets[key_hash(key) & (t->nbuckets - 1)], 1);
    }
}

keytab_node_t *rdp_keytab_any(const keytab_t *t)
{
    if (t->count == 0) {
        return NULL;
    }
    for (size_t i = 0; i < t->nbuckets; i++) {
        if (t->buckets[i] != NULL) {
            return t->buckets[i];
        }
    }
    return NULL;
}
