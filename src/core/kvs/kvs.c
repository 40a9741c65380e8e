/* kvs.c - nspace -> rank -> key -> value store (owns deep copies) */
#include "config.h"
#include "core/kvs/kvs.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <endian.h>
#include <stdint.h>
#include <string.h>

/*
 * Three levels of hash tables: nspace name -> nspace, rank -> rank entry,
 * key -> kv.  Each rank entry also links its kvs in insertion order, which
 * is the order for_each and pack_rank walk.  Replacing a key keeps its
 * place in that order.  Removing a rank keeps its nspace (job-level data
 * usually lives on under PMIX_RANK_WILDCARD); remove_nspace drops it all.
 */

typedef struct kvs_kv {
    rdp_list_t link; /* in kvs_rank.order */
    pmix_scope_t scope;
    pmix_value_t value;
    char key[]; /* NUL-terminated copy */
} kvs_kv_t;

typedef struct kvs_rank {
    pmix_rank_t rank;
    rdp_hash_t keys; /* key -> kvs_kv_t */
    rdp_list_t order;
    /* a kv list kept packed (rdp_kvs_put_packed; then keys is empty) */
    rdp_kvs_backing_t *bk;
    const uint8_t *packed;
    size_t packed_len;
    uint32_t packed_nkv;
} kvs_rank_t;

typedef struct kvs_nspace {
    rdp_hash_t ranks; /* u64 rank -> kvs_rank_t */
} kvs_nspace_t;

struct rdp_kvs {
    rdp_hash_t nspaces; /* name -> kvs_nspace_t */
};

/* A string is a valid key/nspace when non-empty and short enough. */
static int name_ok(const char *s, size_t maxlen)
{
    return s != NULL && s[0] != '\0' && strnlen(s, maxlen + 1) <= maxlen;
}

static void kv_free(kvs_kv_t *kv)
{
    rdp_value_destruct(&kv->value);
    rdp_free(kv);
}

void rdp_kvs_backing_unref(rdp_kvs_backing_t *bk)
{
    if (bk != NULL && --bk->refs == 0) {
        bk->release(bk);
    }
}

static void rank_drop_packed(kvs_rank_t *r)
{
    rdp_kvs_backing_unref(r->bk);
    r->bk         = NULL;
    r->packed     = NULL;
    r->packed_len = 0;
    r->packed_nkv = 0;
}

static void rank_free(kvs_rank_t *r)
{
    kvs_kv_t *kv;
    kvs_kv_t *tmp;

    if (r == NULL) {
        return;
    }
    rank_drop_packed(r);
    rdp_list_for_each_safe(kv, tmp, &r->order, link) {
        rdp_list_del(&kv->link);
        kv_free(kv);
    }
    rdp_hash_cleanup(&r->keys);
    rdp_free(r);
}

static void nspace_free(kvs_nspace_t *ns)
{
    rdp_hash_entry_t *e;
    size_t i;

    if (ns == NULL) {
        return;
    }
    if (ns->ranks.buckets != NULL) {
        rdp_hash_for_each(e, &ns->ranks, i) {
            rank_free(e->value);
        }
    }
    rdp_hash_cleanup(&ns->ranks);
    rdp_free(ns);
}

pmix_status_t rdp_kvs_create(rdp_kvs_t **kvs_p)
{
    rdp_kvs_t *kvs;
    pmix_status_t st;

    if (kvs_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    kvs = rdp_calloc(1, sizeof(*kvs));
    if (kvs == NULL) {
        rdp_log_error(KVS, "cannot allocate kvs");
        return PMIX_ERR_NOMEM;
    }
    st = rdp_hash_init(&kvs->nspaces, 0);
    if (st != PMIX_SUCCESS) {
        rdp_log_error(KVS, "cannot allocate kvs nspace table");
        goto err_free_kvs;
    }
    *kvs_p = kvs;
    return PMIX_SUCCESS;

err_free_kvs:
    rdp_free(kvs);
    return st;
}

void rdp_kvs_destroy(rdp_kvs_t *kvs)
{
    rdp_hash_entry_t *e;
    size_t i;

    if (kvs == NULL) {
        return;
    }
    if (kvs->nspaces.buckets != NULL) {
        rdp_hash_for_each(e, &kvs->nspaces, i) {
            nspace_free(e->value);
        }
    }
    rdp_hash_cleanup(&kvs->nspaces);
    rdp_free(kvs);
}

static kvs_nspace_t *find_nspace(const rdp_kvs_t *kvs, const char *nspace)
{
    if (kvs == NULL || nspace == NULL) {
        return NULL;
    }
    return rdp_hash_get_str(&kvs->nspaces, nspace);
}

/* The rank entry as it is (a packed kv list stays packed). */
static kvs_rank_t *lookup_rank(const rdp_kvs_t *kvs, const char *nspace,
                               pmix_rank_t rank)
{
    kvs_nspace_t *ns = find_nspace(kvs, nspace);

    if (ns == NULL) {
        return NULL;
    }
    return rdp_hash_get_u64(&ns->ranks, rank);
}

static pmix_status_t unpack_list(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, rdp_rbuf_t *rb);

/* Unpack the packed kv list of @a r into its keys (errors are logged:
 * the keys read before stay). */
static void rank_unpack_packed(rdp_kvs_t *kvs, const char *nspace,
                               kvs_rank_t *r)
{
    rdp_kvs_backing_t *bk = r->bk;
    rdp_rbuf_t rb;
    pmix_status_t st;

    rdp_rbuf_init(&rb, r->packed, r->packed_len);
    r->bk = NULL; /* the rank is plain from here on; bk stays alive */
    rank_drop_packed(r);
    st = unpack_list(kvs, nspace, r->rank, &rb);
    if (st == PMIX_SUCCESS && rb.left != 0) {
        st = PMIX_ERR_UNPACK_FAILURE;
    }
    if (st != PMIX_SUCCESS) {
        rdp_log_error(KVS, "packed data of %s:%u is malformed: %d", nspace,
                      r->rank, st);
    }
    rdp_kvs_backing_unref(bk);
}

/* The rank entry with its keys unpacked.  Unpacking changes the store
 * behind a const pointer: the store is not thread-safe anyway (loop
 * thread only), and nothing a caller holds is invalidated by it. */
static kvs_rank_t *find_rank(const rdp_kvs_t *kvs, const char *nspace,
                             pmix_rank_t rank)
{
    kvs_rank_t *r = lookup_rank(kvs, nspace, rank);

    if (r != NULL && r->packed != NULL) {
        rank_unpack_packed((rdp_kvs_t *)kvs, nspace, r);
    }
    return r;
}

static kvs_kv_t *find_kv(const rdp_kvs_t *kvs, const char *nspace,
                         pmix_rank_t rank, const char *key)
{
    kvs_rank_t *r = find_rank(kvs, nspace, rank);

    if (r == NULL || key == NULL) {
        return NULL;
    }
    return rdp_hash_get_str(&r->keys, key);
}

/* Find or create (nspace, rank).  *created_ns_p tells whether the nspace
 * entry is new, so that a caller failing later can undo it. */
static pmix_status_t get_rank(rdp_kvs_t *kvs, const char *nspace,
                              pmix_rank_t rank, kvs_rank_t **r_p,
                              int *created_ns_p)
{
    kvs_nspace_t *ns;
    kvs_rank_t *r;
    int created_ns = 0;
    pmix_status_t st;

    ns = rdp_hash_get_str(&kvs->nspaces, nspace);
    if (ns != NULL && (r = rdp_hash_get_u64(&ns->ranks, rank)) != NULL
        && r->packed != NULL) {
        rank_unpack_packed(kvs, nspace, r);
    }
    if (ns == NULL) {
        ns = rdp_calloc(1, sizeof(*ns));
        if (ns == NULL) {
            rdp_log_error(KVS, "cannot allocate nspace %s", nspace);
            return PMIX_ERR_NOMEM;
        }
        st = rdp_hash_init(&ns->ranks, 0);
        if (st == PMIX_SUCCESS) {
            st = rdp_hash_set_str(&kvs->nspaces, nspace, ns, NULL);
        }
        if (st != PMIX_SUCCESS) {
            rdp_log_error(KVS, "cannot allocate nspace %s", nspace);
            nspace_free(ns);
            return st;
        }
        created_ns = 1;
    }
    r = rdp_hash_get_u64(&ns->ranks, rank);
    if (r == NULL) {
        r = rdp_calloc(1, sizeof(*r));
        if (r == NULL) {
            st = PMIX_ERR_NOMEM;
            goto err_undo_ns;
        }
        r->rank = rank;
        rdp_list_init(&r->order);
        st = rdp_hash_init(&r->keys, 0);
        if (st == PMIX_SUCCESS) {
            st = rdp_hash_set_u64(&ns->ranks, rank, r, NULL);
        }
        if (st != PMIX_SUCCESS) {
            rank_free(r);
            goto err_undo_ns;
        }
    }
    *r_p          = r;
    *created_ns_p = created_ns;
    return PMIX_SUCCESS;

err_undo_ns:
    rdp_log_error(KVS, "cannot allocate rank %s:%u", nspace, rank);
    if (created_ns) {
        rdp_hash_remove_str(&kvs->nspaces, nspace);
        nspace_free(ns);
    }
    return st;
}

/* Drop a rank entry that get_rank created for a put that then failed. */
static void undo_new_rank(rdp_kvs_t *kvs, const char *nspace, kvs_rank_t *r,
                          int created_ns)
{
    kvs_nspace_t *ns;

    if (!rdp_list_is_empty(&r->order)) {
        return;
    }
    ns = rdp_hash_get_str(&kvs->nspaces, nspace);
    if (ns == NULL) {
        return;
    }
    rdp_hash_remove_u64(&ns->ranks, r->rank);
    rank_free(r);
    if (created_ns) {
        rdp_hash_remove_str(&kvs->nspaces, nspace);
        nspace_free(ns);
    }
}

/* Store @a val (already owned by us) under key; on failure @a val is left
 * to the caller. */
static pmix_status_t put_owned(rdp_kvs_t *kvs, const char *nspace,
                               pmix_rank_t rank, const char *key,
                               pmix_scope_t scope, pmix_value_t *val)
{
    kvs_rank_t *r;
    kvs_kv_t *kv;
    int created_ns;
    int new_rank;
    size_t klen;
    pmix_status_t st;

    if (kvs == NULL || val == NULL || !name_ok(nspace, PMIX_MAX_NSLEN)
        || !name_ok(key, PMIX_MAX_KEYLEN)) {
        rdp_log_error(KVS, "put: bad nspace, key or value");
        return PMIX_ERR_BAD_PARAM;
    }
    new_rank = find_rank(kvs, nspace, rank) == NULL;
    st       = get_rank(kvs, nspace, rank, &r, &created_ns);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    kv = rdp_hash_get_str(&r->keys, key);
    if (kv != NULL) {
        /* replace in place: the key keeps its position */
        rdp_value_destruct(&kv->value);
        kv->value = *val;
        kv->scope = scope;
        return PMIX_SUCCESS;
    }
    klen = strlen(key);
    kv   = rdp_malloc(sizeof(*kv) + klen + 1);
    if (kv == NULL) {
        st = PMIX_ERR_NOMEM;
        goto err_undo_rank;
    }
    memcpy(kv->key, key, klen + 1);
    kv->scope = scope;
    st        = rdp_hash_set(&r->keys, key, klen, kv, NULL);
    if (st != PMIX_SUCCESS) {
        rdp_free(kv);
        goto err_undo_rank;
    }
    kv->value = *val;
    rdp_list_push_back(&r->order, &kv->link);
    return PMIX_SUCCESS;

err_undo_rank:
    rdp_log_error(KVS, "cannot store %s for %s:%u", key, nspace, rank);
    if (new_rank) {
        undo_new_rank(kvs, nspace, r, created_ns);
    }
    return st;
}

pmix_status_t rdp_kvs_put(rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank,
                          const char *key, pmix_scope_t scope,
                          const pmix_value_t *val)
{
    pmix_value_t copy;
    pmix_status_t st;

    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = rdp_value_copy(&copy, val);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    st = put_owned(kvs, nspace, rank, key, scope, &copy);
    if (st != PMIX_SUCCESS) {
        rdp_value_destruct(&copy);
    }
    return st;
}

pmix_status_t rdp_kvs_put_take(rdp_kvs_t *kvs, const char *nspace,
                               pmix_rank_t rank, const char *key,
                               pmix_scope_t scope, pmix_value_t *val)
{
    pmix_value_t moved;
    pmix_status_t st;

    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    moved = *val;
    st    = put_owned(kvs, nspace, rank, key, scope, &moved);
    if (st == PMIX_SUCCESS) {
        memset(val, 0, sizeof(*val));
        val->type = PMIX_UNDEF;
    }
    return st;
}

const pmix_value_t *rdp_kvs_peek(const rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, const char *key)
{
    kvs_kv_t *kv = find_kv(kvs, nspace, rank, key);

    return (kv != NULL) ? &kv->value : NULL;
}

pmix_scope_t rdp_kvs_scope(const rdp_kvs_t *kvs, const char *nspace,
                           pmix_rank_t rank, const char *key)
{
    kvs_kv_t *kv = find_kv(kvs, nspace, rank, key);

    return (kv != NULL) ? kv->scope : PMIX_SCOPE_UNDEF;
}

int rdp_kvs_has_rank(const rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank)
{
    return lookup_rank(kvs, nspace, rank) != NULL;
}

pmix_status_t rdp_kvs_touch_rank(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank)
{
    kvs_rank_t *r;
    int created_ns;

    if (kvs == NULL || !name_ok(nspace, PMIX_MAX_NSLEN)) {
        rdp_log_error(KVS, "touch: bad nspace");
        return PMIX_ERR_BAD_PARAM;
    }
    return get_rank(kvs, nspace, rank, &r, &created_ns);
}

int rdp_kvs_has_nspace(const rdp_kvs_t *kvs, const char *nspace)
{
    return find_nspace(kvs, nspace) != NULL;
}

size_t rdp_kvs_count(const rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank)
{
    kvs_rank_t *r = lookup_rank(kvs, nspace, rank);

    if (r == NULL) {
        return 0;
    }
    /* a packed list holds distinct keys (rdp_kvs_pack_rank wrote it) */
    return r->packed != NULL ? r->packed_nkv : r->keys.count;
}

void rdp_kvs_for_each(const rdp_kvs_t *kvs, const char *nspace,
                      pmix_rank_t rank, rdp_kvs_visit_cb_t cb, void *arg)
{
    kvs_rank_t *r = find_rank(kvs, nspace, rank);
    kvs_kv_t *kv;

    if (r == NULL || cb == NULL) {
        return;
    }
    rdp_list_for_each(kv, &r->order, link) {
        if (cb(kv->key, kv->scope, &kv->value, arg) != 0) {
            return;
        }
    }
}

void rdp_kvs_for_each_rank(const rdp_kvs_t *kvs, const char *nspace,
                           rdp_kvs_rank_cb_t cb, void *arg)
{
    kvs_nspace_t *ns = find_nspace(kvs, nspace);
    rdp_hash_entry_t *e;
    size_t i;

    if (ns == NULL || cb == NULL || ns->ranks.buckets == NULL) {
        return;
    }
    rdp_hash_for_each(e, &ns->ranks, i) {
        const kvs_rank_t *r = e->value;

        if (cb(r->rank, arg) != 0) {
            return;
        }
    }
}

static int scope_in(uint32_t mask, pmix_scope_t scope)
{
    return scope < 32 && (mask & RDP_SCOPE_BIT(scope)) != 0;
}

/* Values that cannot travel (PMIX_POINTER, ...) are process-local: they are
 * left out with a warning instead of failing the whole rank, and the count
 * written first is patched to what was really packed. */
pmix_status_t rdp_kvs_pack_rank(const rdp_kvs_t *kvs, const char *nspace,
                                pmix_rank_t rank, uint32_t scope_mask,
                                rdp_buf_t *buf)
{
    kvs_rank_t *r;
    kvs_kv_t *kv;
    size_t mark;
    size_t item;
    uint32_t n = 0;
    uint32_t le;
    pmix_status_t st;

    if (kvs == NULL || buf == NULL || nspace == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    r = lookup_rank(kvs, nspace, rank);
    if (r != NULL && r->packed != NULL && scope_mask == RDP_SCOPES_ALL) {
        return rdp_buf_append(buf, r->packed, r->packed_len);
    }
    mark = buf->size;
    st   = rdp_pack_u32(buf, 0);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    r = find_rank(kvs, nspace, rank);
    if (r == NULL) {
        return PMIX_SUCCESS;
    }
    rdp_list_for_each(kv, &r->order, link) {
        if (!scope_in(scope_mask, kv->scope)) {
            continue;
        }
        item = buf->size;
        st   = rdp_pack_u8(buf, kv->scope);
        if (st == PMIX_SUCCESS) {
            st = rdp_pack_string(buf, kv->key);
        }
        if (st == PMIX_SUCCESS) {
            st = rdp_pack_value(buf, &kv->value);
        }
        if (st == PMIX_ERR_NOT_SUPPORTED || st == PMIX_ERR_UNKNOWN_DATA_TYPE) {
            rdp_log_warn(KVS, "%s of %s:%u has type %u, which stays local",
                         kv->key, nspace, rank, (unsigned)kv->value.type);
            buf->size = item;
            continue;
        }
        if (st != PMIX_SUCCESS) {
            rdp_log_error(KVS, "cannot pack %s of %s:%u: %d", kv->key, nspace,
                          rank, st);
            buf->size = mark;
            return st;
        }
        n++;
    }
    le = htole32(n);
    memcpy(buf->data + mark, &le, sizeof(le));
    return PMIX_SUCCESS;
}

/* smallest encoding of one (scope, key, value) triple */
#define KV_MIN_WIRE (1 + 4 + 2)

pmix_status_t rdp_kvs_unpack_rank(rdp_kvs_t *kvs, const char *nspace,
                                  pmix_rank_t rank, rdp_rbuf_t *rb)
{
    return unpack_list(kvs, nspace, rank, rb);
}

static pmix_status_t unpack_list(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, rdp_rbuf_t *rb)
{
    uint32_t n;
    uint8_t scope;
    pmix_key_t key;
    pmix_value_t val;
    pmix_status_t st;

    if (kvs == NULL || rb == NULL || !name_ok(nspace, PMIX_MAX_NSLEN)) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = rdp_unpack_u32(rb, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (n > rb->left / KV_MIN_WIRE) {
        rdp_log_debug(KVS, "unpack %s:%u: %u keys cannot fit in %zu bytes",
                      nspace, rank, n, rb->left);
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    st = rdp_kvs_touch_rank(kvs, nspace, rank);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    for (uint32_t i = 0; i < n; i++) {
        st = rdp_unpack_u8(rb, &scope);
        if (st == PMIX_SUCCESS) {
            st = rdp_unpack_string_into(rb, key, sizeof(key));
        }
        if (st == PMIX_SUCCESS) {
            st = rdp_unpack_value(rb, &val);
        }
        if (st != PMIX_SUCCESS) {
            rdp_log_debug(KVS, "unpack %s:%u: key %u of %u is malformed",
                          nspace, rank, i, n);
            return st;
        }
        if (key[0] == '\0') {
            rdp_log_debug(KVS, "unpack %s:%u: key %u of %u is empty", nspace,
                          rank, i, n);
            rdp_value_destruct(&val);
            return PMIX_ERR_UNPACK_FAILURE;
        }
        st = rdp_kvs_put_take(kvs, nspace, rank, key, scope, &val);
        if (st != PMIX_SUCCESS) {
            rdp_value_destruct(&val);
            return st;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_kvs_put_packed(rdp_kvs_t *kvs, const char *nspace,
                                 pmix_rank_t rank, const void *kv, size_t len,
                                 rdp_kvs_backing_t *bk)
{
    rdp_rbuf_t rb;
    kvs_rank_t *r;
    uint32_t nkv;
    int created_ns;
    pmix_status_t st;

    if (kvs == NULL || kv == NULL || bk == NULL
        || !name_ok(nspace, PMIX_MAX_NSLEN)) {
        return PMIX_ERR_BAD_PARAM;
    }
    rdp_rbuf_init(&rb, kv, len);
    st = rdp_unpack_u32(&rb, &nkv);
    if (st != PMIX_SUCCESS || nkv > rb.left / KV_MIN_WIRE) {
        return st != PMIX_SUCCESS ? st
                                  : PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    r = lookup_rank(kvs, nspace, rank);
    if (r != NULL
        && (!rdp_list_is_empty(&r->order)
            || (r->packed != NULL && r->packed_nkv > nkv))) {
        /* merge: what is there may hold keys the list lacks */
        rdp_rbuf_init(&rb, kv, len);
        st = rdp_kvs_unpack_rank(kvs, nspace, rank, &rb);
        return (st == PMIX_SUCCESS && rb.left != 0) ? PMIX_ERR_UNPACK_FAILURE
                                                    : st;
    }
    if (r == NULL) {
        st = get_rank(kvs, nspace, rank, &r, &created_ns);
        if (st != PMIX_SUCCESS) {
            return st;
        }
    }
    bk->refs++;
    rank_drop_packed(r); /* an older list with no more keys */
    r->bk         = bk;
    r->packed     = kv;
    r->packed_len = len;
    r->packed_nkv = nkv;
    return PMIX_SUCCESS;
}

void rdp_kvs_remove_rank(rdp_kvs_t *kvs, const char *nspace, pmix_rank_t rank)
{
    kvs_nspace_t *ns = find_nspace(kvs, nspace);

    if (ns == NULL) {
        return;
    }
    rank_free(rdp_hash_remove_u64(&ns->ranks, rank));
}

void rdp_kvs_remove_nspace(rdp_kvs_t *kvs, const char *nspace)
{
    if (kvs == NULL || nspace == NULL) {
        return;
    }
    nspace_free(rdp_hash_remove_str(&kvs->nspaces, nspace));
}
