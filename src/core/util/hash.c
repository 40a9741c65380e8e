/* hash.c - chained hash table keyed by byte strings, owning key copies */
#include "config.h"
#include "core/util/hash.h"
#include "core/util/alloc.h"

#include <string.h>

#define RDP_HASH_DEFAULT_BUCKETS 16

/* FNV-1a: short keys dominate (PMIx keys, ranks), so a simple byte hash
 * with good dispersion is enough. */
uint64_t rdp_hash_bytes(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

pmix_status_t rdp_hash_init(rdp_hash_t *h, size_t nbuckets_hint)
{
    size_t n = RDP_HASH_DEFAULT_BUCKETS;

    while (n < nbuckets_hint) {
        n <<= 1;
    }
    h->buckets = rdp_calloc(n, sizeof(*h->buckets));
    if (h->buckets == NULL) {
        return PMIX_ERR_NOMEM;
    }
    h->nbuckets = n;
    h->count    = 0;
    return PMIX_SUCCESS;
}

void rdp_hash_clear(rdp_hash_t *h)
{
    if (h == NULL || h->buckets == NULL) {
        return;
    }
    for (size_t i = 0; i < h->nbuckets; i++) {
        rdp_hash_entry_t *e = h->buckets[i];
        while (e != NULL) {
            rdp_hash_entry_t *next = e->next;
            rdp_free(e);
            e = next;
        }
        h->buckets[i] = NULL;
    }
    h->count = 0;
}

void rdp_hash_cleanup(rdp_hash_t *h)
{
    if (h == NULL || h->buckets == NULL) {
        return;
    }
    rdp_hash_clear(h);
    rdp_free(h->buckets);
    h->buckets  = NULL;
    h->nbuckets = 0;
    h->count    = 0;
}

static rdp_hash_entry_t **find_slot(const rdp_hash_t *h, const void *key,
                                    size_t keylen, uint64_t hv)
{
    rdp_hash_entry_t **pp = &h->buckets[hv & (h->nbuckets - 1)];

    while (*pp != NULL) {
        rdp_hash_entry_t *e = *pp;
        if (e->hashval == hv && e->keylen == keylen
            && memcmp(e->key, key, keylen) == 0) {
            return pp;
        }
        pp = &e->next;
    }
    return pp;
}

/* Double the bucket array when the load factor passes 1; on allocation
 * failure keep the old (slower but correct) table. */
static void maybe_grow(rdp_hash_t *h)
{
    rdp_hash_entry_t **nb;
    size_t nn;

    if (h->count < h->nbuckets) {
        return;
    }
    nn = h->nbuckets * 2;
    nb = rdp_calloc(nn, sizeof(*nb));
    if (nb == NULL) {
        return;
    }
    for (size_t i = 0; i < h->nbuckets; i++) {
        rdp_hash_entry_t *e = h->buckets[i];
        while (e != NULL) {
            rdp_hash_entry_t *next = e->next;
            e->next = nb[e->hashval & (nn - 1)];
            nb[e->hashval & (nn - 1)] = e;
            e = next;
        }
    }
    rdp_free(h->buckets);
    h->buckets  = nb;
    h->nbuckets = nn;
}

pmix_status_t rdp_hash_set(rdp_hash_t *h, const void *key, size_t keylen,
                           void *value, void **old_p)
{
    uint64_t hv = rdp_hash_bytes(key, keylen);
    rdp_hash_entry_t **pp;
    rdp_hash_entry_t *e;

    if (h->buckets == NULL) {
        pmix_status_t st = rdp_hash_init(h, 0);
        if (st != PMIX_SUCCESS) {
            return st;
        }
    }
    pp = find_slot(h, key, keylen, hv);
    if (*pp != NULL) {
        if (old_p != NULL) {
            *old_p = (*pp)->value;
        }
        (*pp)->value = value;
        return PMIX_SUCCESS;
    }
    e = rdp_malloc(sizeof(*e) + keylen + 1);
    if (e == NULL) {
        return PMIX_ERR_NOMEM;
    }
    e->next    = NULL;
    e->hashval = hv;
    e->keylen  = keylen;
    e->value   = value;
    memcpy(e->key, key, keylen);
    e->key[keylen] = '\0';
    *pp            = e;
    h->count++;
    if (old_p != NULL) {
        *old_p = NULL;
    }
    maybe_grow(h);
    return PMIX_SUCCESS;
}

void *rdp_hash_get(const rdp_hash_t *h, const void *key, size_t keylen)
{
    rdp_hash_entry_t **pp;

    if (h->buckets == NULL) {
        return NULL;
    }
    pp = find_slot(h, key, keylen, rdp_hash_bytes(key, keylen));
    return (*pp != NULL) ? (*pp)->value : NULL;
}

void *rdp_hash_remove(rdp_hash_t *h, const void *key, size_t keylen)
{
    rdp_hash_entry_t **pp;
    rdp_hash_entry_t *e;
    void *value;

    if (h->buckets == NULL) {
        return NULL;
    }
    pp = find_slot(h, key, keylen, rdp_hash_bytes(key, keylen));
    e  = *pp;
    if (e == NULL) {
        return NULL;
    }
    *pp   = e->next;
    value = e->value;
    rdp_free(e);
    h->count--;
    return value;
}
