/* store.c - what a client knows: bundles from the server and Get lookups */
#include "config.h"
#include "core/client/store.h"
#include "core/ipc/ipc.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/util/status.h"

#include <pmix.h>

#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Locking: every exported function takes st->lock for its whole run, so
 * an API thread can look up (and unpack lazy sections) while the loop
 * thread stores what the server sends.  Static helpers expect the lock
 * to be held.
 */
#define LOCK(_st)   pthread_mutex_lock(&(_st)->lock)
#define UNLOCK(_st) pthread_mutex_unlock(&(_st)->lock)


/* Keys the Standard defines at node level: with rank WILDCARD they are
 * answered from our own node's section before the job section. */
static const char *const node_keys[] = {PMIX_LOCAL_PEERS,
                                        PMIX_LOCAL_SIZE,
                                        PMIX_LOCALLDR,
                                        PMIX_NODE_SIZE,
                                        PMIX_AVAIL_PHYS_MEMORY,
                                        PMIX_LOCAL_CPUSETS,
                                        PMIX_LOCAL_PROCS,
                                        PMIX_NODE_OVERSUBSCRIBED,
                                        PMIX_HOSTNAME_ALIASES,
                                        PMIX_HOSTNAME,
                                        PMIX_NODEID,
                                        NULL};

static int is_node_key(const char *key)
{
    for (size_t i = 0; node_keys[i] != NULL; i++) {
        if (strcmp(key, node_keys[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

pmix_status_t rdp_client_store_init(rdp_client_store_t *st, rdp_kvs_t *kvs,
                                    const pmix_proc_t *me, const char *hostname)
{
    pmix_status_t status;

    memset(st, 0, sizeof(*st));
    st->kvs = kvs;
    st->me  = *me;
    if (pthread_mutex_init(&st->lock, NULL) != 0) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    st->lock_ok = 1;
    status      = rdp_kvs_create(&st->apps);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    status = rdp_kvs_create(&st->nodes);
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    status = rdp_hash_init(&st->nspaces, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_init(&st->lazy, 0);
    }
    if (status != PMIX_SUCCESS) {
        goto err;
    }
    st->hostname = rdp_strdup(hostname != NULL ? hostname : "localhost");
    if (st->hostname == NULL) {
        status = PMIX_ERR_NOMEM;
        goto err;
    }
    return PMIX_SUCCESS;

err:
    rdp_client_store_cleanup(st);
    return status;
}

static void lazy_free(lazy_t *lz);

void rdp_client_store_cleanup(rdp_client_store_t *st)
{
    rdp_hash_entry_t *e;
    size_t i;

    if (st->lazy.buckets != NULL) {
        rdp_hash_for_each(e, &st->lazy, i) {
            lazy_free(e->value);
        }
    }
    rdp_hash_cleanup(&st->lazy);
    rdp_kvs_destroy(st->apps);
    rdp_kvs_destroy(st->nodes);
    rdp_hash_cleanup(&st->nspaces);
    rdp_free(st->hostname);
    if (st->lock_ok) {
        pthread_mutex_destroy(&st->lock);
    }
    memset(st, 0, sizeof(*st));
}

static pmix_status_t add_nspace(rdp_client_store_t *st, const char *nspace)
{
    if (rdp_hash_get_str(&st->nspaces, nspace) != NULL) {
        return PMIX_SUCCESS;
    }
    return rdp_hash_set_str(&st->nspaces, nspace, (void *)st, NULL);
}

pmix_status_t rdp_client_store_add_nspace(rdp_client_store_t *st,
                                          const char *nspace)
{
    pmix_status_t status;

    LOCK(st);
    status = add_nspace(st, nspace);
    UNLOCK(st);
    return status;
}

static int knows(const rdp_client_store_t *st, const char *nspace)
{
    return rdp_hash_get_str(&st->nspaces, nspace) != NULL;
}

int rdp_client_store_knows(rdp_client_store_t *st, const char *nspace)
{
    int known;

    LOCK(st);
    known = knows(st, nspace);
    UNLOCK(st);
    return known;
}

/* ---------------------------------------------------------------- */
/* lazy sections                                                    */

struct rdp_client_backing {
    int refs;
    const uint8_t *data;
    size_t len;
    int mapped; /* data is a mapping to unmap, else malloc'ed */
};

pmix_status_t rdp_client_backing_create(const void *data, size_t len,
                                        int mapped, rdp_client_backing_t **bk_p)
{
    rdp_client_backing_t *bk = rdp_calloc(1, sizeof(*bk));
    void *copy;

    if (bk == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (!mapped) {
        copy = rdp_malloc(len > 0 ? len : 1);
        if (copy == NULL) {
            rdp_free(bk);
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, data, len);
        data = copy;
    }
    bk->refs   = 1;
    bk->data   = data;
    bk->len    = len;
    bk->mapped = mapped;
    *bk_p      = bk;
    return PMIX_SUCCESS;
}

const void *rdp_client_backing_data(const rdp_client_backing_t *bk,
                                    size_t *len_p)
{
    *len_p = bk->len;
    return bk->data;
}

/* Callers hold the store lock (or own the only reference). */
static void backing_unref(rdp_client_backing_t *bk)
{
    if (bk == NULL || --bk->refs > 0) {
        return;
    }
    if (bk->mapped) {
        rdp_ipc_memfd_unmap(bk->data, bk->len);
    } else {
        rdp_free((void *)bk->data);
    }
    rdp_free(bk);
}

void rdp_client_backing_unref(rdp_client_store_t *st, rdp_client_backing_t *bk)
{
    LOCK(st);
    backing_unref(bk);
    UNLOCK(st);
}

/* (nspace, rank) -> a PROC section's kv list, still packed in a bundle
 * kept alive by the backing reference. */
struct lazy {
    rdp_client_backing_t *bk;
    rdp_rbuf_t kv;         /* the whole kv list */
    uint32_t nkv;          /* >= 1 */
    const char *first_key; /* points into the bundle */
    rdp_rbuf_t first_val;  /* from the first key's value on */
    pmix_rank_t rank;
    char nspace[PMIX_MAX_NSLEN + 1];
};

#define LAZY_KEY_MAX (PMIX_MAX_NSLEN + 1 + sizeof(uint32_t))

static size_t lazy_key(const char *nspace, pmix_rank_t rank, char *key)
{
    size_t n = strnlen(nspace, PMIX_MAX_NSLEN);

    memcpy(key, nspace, n);
    key[n] = '\0';
    memcpy(key + n + 1, &rank, sizeof(rank));
    return n + 1 + sizeof(rank);
}

static lazy_t *lazy_find(const rdp_client_store_t *st, const char *nspace,
                         pmix_rank_t rank)
{
    char key[LAZY_KEY_MAX];
    size_t len;

    if (st->lazy.count == 0) {
        return NULL;
    }
    len = lazy_key(nspace, rank, key);
    return rdp_hash_get(&st->lazy, key, len);
}

static void lazy_free(lazy_t *lz)
{
    if (lz != NULL) {
        backing_unref(lz->bk);
        rdp_free(lz);
    }
}

static void lazy_forget(rdp_client_store_t *st, lazy_t *lz)
{
    char key[LAZY_KEY_MAX];
    size_t len = lazy_key(lz->nspace, lz->rank, key);

    rdp_hash_remove(&st->lazy, key, len);
    lazy_free(lz);
}

/* Unpack a lazy section into the kvs (its keys replace what is there)
 * and forget it.  On a malformed section the keys read so far stay. */
static pmix_status_t lazy_materialize(rdp_client_store_t *st, lazy_t *lz)
{
    rdp_rbuf_t rb = lz->kv;
    pmix_status_t status;

    status = rdp_kvs_unpack_rank(st->kvs, lz->nspace, lz->rank, &rb);
    if (status == PMIX_SUCCESS && rb.left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed data of %s:%u from server: %s",
                      lz->nspace, lz->rank, rdp_status_name(status));
    }
    lazy_forget(st, lz);
    return status;
}

static pmix_status_t materialize_rank(rdp_client_store_t *st,
                                      const char *nspace, pmix_rank_t rank)
{
    lazy_t *lz = lazy_find(st, nspace, rank);

    return lz != NULL ? lazy_materialize(st, lz) : PMIX_SUCCESS;
}

/* Every lazy section of @a nspace (NULL: of every nspace). */
static void materialize_nspace(rdp_client_store_t *st, const char *nspace)
{
    rdp_hash_entry_t *e;
    size_t i;
    lazy_t *lz;

    while (st->lazy.count > 0) {
        lz = NULL;
        rdp_hash_for_each(e, &st->lazy, i) {
            lazy_t *cand = e->value;

            if (nspace == NULL
                || strncmp(cand->nspace, nspace, PMIX_MAX_NSLEN) == 0) {
                lz = cand;
                break;
            }
        }
        if (lz == NULL) {
            return;
        }
        /* an error is logged; the rank keeps what could be read */
        (void)lazy_materialize(st, lz);
    }
}

enum probe {
    PROBE_ABSENT, /* the section does not hold the key */
    PROBE_FIRST,  /* it is the section's first key */
    PROBE_UNKNOWN /* only parsing the values would tell */
};

static enum probe lazy_probe(const lazy_t *lz, const char *key)
{
    if (strcmp(lz->first_key, key) == 0) {
        return PROBE_FIRST;
    }
    return lz->nkv == 1 ? PROBE_ABSENT : PROBE_UNKNOWN;
}

/* Make sure the kvs answers for what a lookup may read of (nspace,
 * rank): every key when @a all, else @a key (if not NULL) and the keys
 * the lookup rules consult (node, host name, app). */
static pmix_status_t prepare_rank(rdp_client_store_t *st, const char *nspace,
                                  pmix_rank_t rank, const char *key, int all)
{
    static const char *const rule_keys[] = {PMIX_NODEID, PMIX_HOSTNAME,
                                            PMIX_APPNUM};
    lazy_t *lz                           = lazy_find(st, nspace, rank);

    if (lz == NULL) {
        return PMIX_SUCCESS;
    }
    if (all || (key != NULL && lazy_probe(lz, key) != PROBE_ABSENT)) {
        return lazy_materialize(st, lz);
    }
    for (size_t i = 0; i < sizeof(rule_keys) / sizeof(rule_keys[0]); i++) {
        if (lazy_probe(lz, rule_keys[i]) != PROBE_ABSENT) {
            return lazy_materialize(st, lz);
        }
    }
    return PMIX_SUCCESS;
}

/* Whether a packed section of @a nkv keys replaces @a older unread.
 * The server sends every key it holds of a rank that this client may
 * see, and its data of a rank only grows (proto.h), so a newer section
 * of the rank holds every key of the older one: decoding the older
 * would only make garbage (a 64 KiB value copied for nothing at every
 * collecting fence).  A newer section with fewer keys breaks that rule:
 * then the older one is unpacked first, so that no key disappears. */
static bool lazy_supersedes(const lazy_t *older, uint32_t nkv)
{
    return nkv >= older->nkv;
}

/* Forget the packed section of (nspace, rank) that one of @a nkv keys
 * replaces, unpacking it first unless superseded (lazy_supersedes). */
static void lazy_replace(rdp_client_store_t *st, const char *nspace,
                         pmix_rank_t rank, uint32_t nkv)
{
    lazy_t *older = lazy_find(st, nspace, rank);

    if (older == NULL) {
        return;
    }
    if (lazy_supersedes(older, nkv)) {
        st->superseded++;
        lazy_forget(st, older);
        return;
    }
    /* a malformed one is logged and forgotten: it does not spoil the
     * new data */
    (void)lazy_materialize(st, older);
}

/* Keep a PROC section whose kv list @a kvlist (inside @a bk) holds
 * @a nkv >= 1 keys packed: its values are unpacked when looked up.  A
 * packed section it replaces is dropped unread (lazy_replace). */
static pmix_status_t lazy_add(rdp_client_store_t *st, const char *nspace,
                              pmix_rank_t rank, uint32_t nkv,
                              const rdp_rbuf_t *kvlist,
                              rdp_client_backing_t *bk)
{
    rdp_rbuf_t rb = *kvlist;
    char key[LAZY_KEY_MAX];
    size_t len;
    uint32_t count;
    uint8_t scope;
    lazy_t *lz;
    pmix_status_t status;

    lz = rdp_calloc(1, sizeof(*lz));
    if (lz == NULL) {
        return PMIX_ERR_NOMEM;
    }
    /* read up to the first key only: the values stay packed */
    status = rdp_unpack_u32(&rb, &count);
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(&rb, &scope);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string_view(&rb, &lz->first_key);
    }
    if (status == PMIX_SUCCESS
        && (count != nkv || lz->first_key == NULL
            || strnlen(lz->first_key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN
            || lz->first_key[0] == '\0')) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status != PMIX_SUCCESS) {
        rdp_free(lz);
        return status;
    }
    lazy_replace(st, nspace, rank, nkv);
    lz->kv        = *kvlist;
    lz->first_val = rb;
    lz->nkv       = nkv;
    lz->rank      = rank;
    PMIX_LOAD_NSPACE(lz->nspace, nspace);
    len    = lazy_key(nspace, rank, key);
    status = rdp_hash_set(&st->lazy, key, len, lz, NULL);
    if (status != PMIX_SUCCESS) {
        rdp_free(lz);
        return status;
    }
    bk->refs++;
    lz->bk = bk;
    return PMIX_SUCCESS;
}

/* A lookup of @a key in the proc data of (nspace, rank) that a lazy
 * section can answer by itself: PMIX_SUCCESS with the value unpacked
 * straight from the bundle, PMIX_ERR_NOT_FOUND when the kvs must answer
 * (after unpacking the section if needed), or an error. */
static pmix_status_t lazy_lookup(rdp_client_store_t *st, const char *nspace,
                                 pmix_rank_t rank, const char *key,
                                 pmix_value_t **val_p)
{
    lazy_t *lz = lazy_find(st, nspace, rank);
    rdp_rbuf_t rb;
    pmix_value_t *val;
    pmix_status_t status;

    if (lz == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    if (lazy_probe(lz, key) != PROBE_FIRST) {
        status = prepare_rank(st, nspace, rank, key, 0);
        return status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status;
    }
    val = rdp_calloc(1, sizeof(*val));
    if (val == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rb     = lz->first_val;
    status = rdp_unpack_value(&rb, val);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(CLIENT, "malformed %s of %s:%u from server: %s", key,
                      nspace, rank, rdp_status_name(status));
        rdp_free(val);
        return status;
    }
    *val_p = val;
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* bundles                                                          */

static pmix_status_t store_node_names(rdp_client_store_t *st,
                                      const char *nspace, uint32_t id,
                                      const char *name)
{
    pmix_value_t v;
    pmix_status_t status;

    if (name != NULL
        && rdp_kvs_peek(st->nodes, nspace, id, PMIX_HOSTNAME) == NULL) {
        v.type        = PMIX_STRING;
        v.data.string = (char *)name;
        status        = rdp_kvs_put(st->nodes, nspace, id, PMIX_HOSTNAME,
                                    PMIX_SCOPE_UNDEF, &v);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    if (rdp_kvs_peek(st->nodes, nspace, id, PMIX_NODEID) == NULL) {
        v.type        = PMIX_UINT32;
        v.data.uint32 = id;
        return rdp_kvs_put(st->nodes, nspace, id, PMIX_NODEID, PMIX_SCOPE_UNDEF,
                           &v);
    }
    return PMIX_SUCCESS;
}

/* A PROC section: kept packed when its bundle stays (@a bk), else
 * unpacked now, after any packed section it replaces. */
static pmix_status_t store_proc(rdp_client_store_t *st, const char *nspace,
                                pmix_rank_t rank, rdp_rbuf_t *kv,
                                rdp_client_backing_t *bk)
{
    rdp_rbuf_t peek = *kv;
    uint32_t nkv    = 0;
    pmix_status_t status;

    if (bk != NULL && rdp_unpack_u32(&peek, &nkv) == PMIX_SUCCESS && nkv > 0) {
        status = lazy_add(st, nspace, rank, nkv, kv, bk);
        if (status == PMIX_SUCCESS) {
            kv->ptr += kv->left;
            kv->left = 0;
        }
        return status;
    }
    (void)materialize_rank(st, nspace, rank); /* as in lazy_add */
    return rdp_kvs_unpack_rank(st->kvs, nspace, rank, kv);
}

static pmix_status_t store_set(rdp_client_store_t *st, rdp_rbuf_t *rb,
                               rdp_client_backing_t *bk)
{
    char nspace[PMIX_MAX_NSLEN + 1];
    uint32_t nsections;
    pmix_status_t status;

    status = rdp_unpack_string_into(rb, nspace, sizeof(nspace));
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (nspace[0] == '\0') {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    status = rdp_unpack_u32(rb, &nsections);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (uint32_t s = 0; s < nsections; s++) {
        rdp_sect_t sect;

        status = rdp_sect_unpack(rb, &sect);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        switch (sect.kind) {
        case RDP_SECT_JOB:
            status = rdp_kvs_unpack_rank(st->kvs, nspace, PMIX_RANK_WILDCARD,
                                         &sect.kv);
            if (status == PMIX_SUCCESS) {
                status = add_nspace(st, nspace);
            }
            break;
        case RDP_SECT_APP:
            status = rdp_kvs_unpack_rank(st->apps, nspace, sect.id, &sect.kv);
            break;
        case RDP_SECT_NODE:
            status = rdp_kvs_unpack_rank(st->nodes, nspace, sect.id, &sect.kv);
            if (status == PMIX_SUCCESS) {
                status = store_node_names(st, nspace, sect.id, sect.name);
            }
            break;
        case RDP_SECT_PROC:
            if (sect.id >= PMIX_RANK_VALID) {
                rdp_log_error(CLIENT, "bundle section for invalid rank %u",
                              sect.id);
                return PMIX_ERR_UNPACK_FAILURE;
            }
            status = store_proc(st, nspace, sect.id, &sect.kv, bk);
            break;
        default:
            rdp_log_error(CLIENT, "bundle section of unknown kind %u",
                          (unsigned)sect.kind);
            return PMIX_ERR_UNPACK_FAILURE;
        }
        if (status == PMIX_SUCCESS && sect.kv.left != 0) {
            rdp_log_error(CLIENT, "bundle section has %zu trailing bytes",
                          sect.kv.left);
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t store_bundle(rdp_client_store_t *st, rdp_rbuf_t *rb,
                                  rdp_client_backing_t *bk)
{
    uint32_t nsets;
    pmix_status_t status;

    status = rdp_unpack_u32(rb, &nsets);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    for (uint32_t i = 0; i < nsets; i++) {
        status = store_set(st, rb, bk);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "malformed data bundle from server: %s",
                          rdp_status_name(status));
            return status;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_client_store_bundle(rdp_client_store_t *st, rdp_rbuf_t *rb)
{
    pmix_status_t status;

    LOCK(st);
    status = store_bundle(st, rb, NULL);
    UNLOCK(st);
    return status;
}

pmix_status_t rdp_client_store_bundle_keep(rdp_client_store_t *st,
                                           rdp_client_backing_t *bk)
{
    rdp_rbuf_t rb;
    pmix_status_t status;

    LOCK(st);
    rdp_rbuf_init(&rb, bk->data, bk->len);
    status = store_bundle(st, &rb, bk);
    if (status == PMIX_SUCCESS && rb.left != 0) {
        rdp_log_error(CLIENT,
                      "data bundle from server has %zu trailing "
                      "bytes",
                      rb.left);
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    UNLOCK(st);
    return status;
}

/* ---------------------------------------------------------------- */
/* singleton                                                        */

static pmix_status_t put_u32(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                             const char *key, uint32_t u)
{
    pmix_value_t v = {.type = PMIX_UINT32};

    v.data.uint32 = u;
    return rdp_kvs_put(kvs, ns, rank, key, PMIX_SCOPE_UNDEF, &v);
}

static pmix_status_t put_u16(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                             const char *key, uint16_t u)
{
    pmix_value_t v = {.type = PMIX_UINT16};

    v.data.uint16 = u;
    return rdp_kvs_put(kvs, ns, rank, key, PMIX_SCOPE_UNDEF, &v);
}

static pmix_status_t put_rank(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                              const char *key, pmix_rank_t r)
{
    pmix_value_t v = {.type = PMIX_PROC_RANK};

    v.data.rank = r;
    return rdp_kvs_put(kvs, ns, rank, key, PMIX_SCOPE_UNDEF, &v);
}

static pmix_status_t put_str(rdp_kvs_t *kvs, const char *ns, pmix_rank_t rank,
                             const char *key, const char *s)
{
    pmix_value_t v = {.type = PMIX_STRING};

    v.data.string = (char *)s;
    return rdp_kvs_put(kvs, ns, rank, key, PMIX_SCOPE_UNDEF, &v);
}

pmix_status_t rdp_client_store_load_singleton(rdp_client_store_t *st)
{
    const char *ns      = st->me.nspace;
    const pmix_rank_t w = PMIX_RANK_WILDCARD;
    const pmix_rank_t r = st->me.rank;
    pmix_status_t s     = PMIX_SUCCESS;

    LOCK(st);
    /* job */
    s = s ?: put_u32(st->kvs, ns, w, PMIX_JOB_SIZE, 1);
    s = s ?: put_u32(st->kvs, ns, w, PMIX_UNIV_SIZE, 1);
    s = s ?: put_u32(st->kvs, ns, w, PMIX_MAX_PROCS, 1);
    s = s ?: put_u32(st->kvs, ns, w, PMIX_NUM_NODES, 1);
    s = s ?: put_u32(st->kvs, ns, w, PMIX_JOB_NUM_APPS, 1);
    s = s ?: put_str(st->kvs, ns, w, PMIX_JOBID, ns);
    s = s ?: put_str(st->kvs, ns, w, PMIX_NODE_LIST, st->hostname);
    /* node-level data at job level too, as single-node hosts register it */
    s = s ?: put_u32(st->kvs, ns, w, PMIX_LOCAL_SIZE, 1);
    s = s ?: put_str(st->kvs, ns, w, PMIX_LOCAL_PEERS, "0");
    s = s ?: put_rank(st->kvs, ns, w, PMIX_LOCALLDR, 0);
    /* app 0 */
    s = s ?: put_u32(st->apps, ns, 0, PMIX_APP_SIZE, 1);
    s = s ?: put_rank(st->apps, ns, 0, PMIX_APPLDR, 0);
    s = s ?: put_u32(st->apps, ns, 0, PMIX_APPNUM, 0);
    /* node 0 */
    s = s ?: put_str(st->nodes, ns, 0, PMIX_HOSTNAME, st->hostname);
    s = s ?: put_u32(st->nodes, ns, 0, PMIX_NODEID, 0);
    s = s ?: put_u32(st->nodes, ns, 0, PMIX_LOCAL_SIZE, 1);
    s = s ?: put_u32(st->nodes, ns, 0, PMIX_NODE_SIZE, 1);
    s = s ?: put_str(st->nodes, ns, 0, PMIX_LOCAL_PEERS, "0");
    s = s ?: put_rank(st->nodes, ns, 0, PMIX_LOCALLDR, 0);
    /* our proc */
    s = s ?: put_rank(st->kvs, ns, r, PMIX_RANK, r);
    s = s ?: put_rank(st->kvs, ns, r, PMIX_GLOBAL_RANK, r);
    s = s ?: put_u32(st->kvs, ns, r, PMIX_APP_RANK, r);
    s = s ?: put_u32(st->kvs, ns, r, PMIX_APPNUM, 0);
    s = s ?: put_u16(st->kvs, ns, r, PMIX_LOCAL_RANK, 0);
    s = s ?: put_u16(st->kvs, ns, r, PMIX_NODE_RANK, 0);
    s = s ?: put_u32(st->kvs, ns, r, PMIX_NODEID, 0);
    s = s ?: put_str(st->kvs, ns, r, PMIX_HOSTNAME, st->hostname);
    s = s ?: add_nspace(st, ns);
    UNLOCK(st);
    return s;
}

/* ---------------------------------------------------------------- */
/* qualifiers                                                       */

static int value_to_u32(const pmix_value_t *v, uint32_t *out)
{
    switch (v->type) {
    case PMIX_UINT32:
        *out = v->data.uint32;
        return 1;
    case PMIX_UINT16:
        *out = v->data.uint16;
        return 1;
    case PMIX_UINT8:
        *out = v->data.uint8;
        return 1;
    case PMIX_UINT:
        *out = v->data.uint;
        return 1;
    case PMIX_PROC_RANK:
        *out = v->data.rank;
        return 1;
    case PMIX_INT:
        if (v->data.integer < 0) {
            return 0;
        }
        *out = (uint32_t)v->data.integer;
        return 1;
    case PMIX_INT32:
        if (v->data.int32 < 0) {
            return 0;
        }
        *out = (uint32_t)v->data.int32;
        return 1;
    case PMIX_UINT64:
        if (v->data.uint64 > UINT32_MAX) {
            return 0;
        }
        *out = (uint32_t)v->data.uint64;
        return 1;
    case PMIX_SIZE:
        if (v->data.size > UINT32_MAX) {
            return 0;
        }
        *out = (uint32_t)v->data.size;
        return 1;
    default:
        return 0;
    }
}

static int value_to_seconds(const pmix_value_t *v, double *out)
{
    uint32_t u;

    if (v->type == PMIX_DOUBLE) {
        *out = v->data.dval;
        return 1;
    }
    if (v->type == PMIX_FLOAT) {
        *out = v->data.fval;
        return 1;
    }
    if (value_to_u32(v, &u)) {
        *out = u;
        return 1;
    }
    return 0;
}

pmix_status_t rdp_client_get_quals_parse(rdp_get_quals_t *q,
                                         const pmix_info_t *info, size_t ninfo)
{
    memset(q, 0, sizeof(*q));
    if (info == NULL && ninfo > 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (PMIX_CHECK_KEY(in, PMIX_OPTIONAL)) {
            q->optional = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_IMMEDIATE)) {
            q->immediate = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_GET_REFRESH_CACHE)) {
            q->refresh = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_APP_INFO)) {
            q->app_info = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_NODE_INFO)) {
            q->node_info = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_SESSION_INFO)) {
            q->session_info = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_GET_STATIC_VALUES)) {
            q->static_values = PMIX_INFO_TRUE(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_APPNUM)) {
            if (!value_to_u32(&in->value, &q->appnum)) {
                rdp_log_error(CLIENT, "get qualifier %s has type %s", in->key,
                              PMIx_Data_type_string(in->value.type));
                return PMIX_ERR_BAD_PARAM;
            }
            q->have_appnum = 1;
        } else if (PMIX_CHECK_KEY(in, PMIX_NODEID)) {
            if (!value_to_u32(&in->value, &q->nodeid)) {
                rdp_log_error(CLIENT, "get qualifier %s has type %s", in->key,
                              PMIx_Data_type_string(in->value.type));
                return PMIX_ERR_BAD_PARAM;
            }
            q->have_nodeid = 1;
        } else if (PMIX_CHECK_KEY(in, PMIX_HOSTNAME)) {
            if (in->value.type != PMIX_STRING
                || in->value.data.string == NULL) {
                rdp_log_error(CLIENT, "get qualifier %s is not a string",
                              in->key);
                return PMIX_ERR_BAD_PARAM;
            }
            q->hostname = in->value.data.string;
        } else if (PMIX_CHECK_KEY(in, PMIX_TIMEOUT)) {
            if (!value_to_seconds(&in->value, &q->timeout) || q->timeout < 0) {
                rdp_log_error(CLIENT, "get qualifier %s has type %s", in->key,
                              PMIx_Data_type_string(in->value.type));
                return PMIX_ERR_BAD_PARAM;
            }
        }
    }
    /* a node or app named without the directive still selects it */
    if (!q->app_info && !q->node_info
        && (q->hostname != NULL || q->have_nodeid)) {
        q->node_info = 1;
    }
    if (!q->app_info && !q->node_info && q->have_appnum) {
        q->app_info = 1;
    }
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* lookups                                                          */

typedef struct name_search {
    const rdp_client_store_t *st;
    const char *nspace;
    const char *name;
    int found;
    uint32_t id;
} name_search_t;

static int name_search_cb(pmix_rank_t id, void *arg)
{
    name_search_t *ns = arg;
    const pmix_value_t *v;

    v = rdp_kvs_peek(ns->st->nodes, ns->nspace, id, PMIX_HOSTNAME);
    if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL
        && strcmp(v->data.string, ns->name) == 0) {
        ns->found = 1;
        ns->id    = id;
        return 1;
    }
    return 0;
}

/* Node section of @a nspace for host @a name. */
static int node_by_name(const rdp_client_store_t *st, const char *nspace,
                        const char *name, uint32_t *id_p)
{
    name_search_t ns = {st, nspace, name, 0, 0};

    rdp_kvs_for_each_rank(st->nodes, nspace, name_search_cb, &ns);
    if (ns.found) {
        *id_p = ns.id;
    }
    return ns.found;
}

static int is_me(const rdp_client_store_t *st, const char *nspace,
                 pmix_rank_t rank)
{
    return rank == st->me.rank
           && strncmp(nspace, st->me.nspace, PMIX_MAX_NSLEN) == 0;
}

/* Our own node's section in @a nspace. */
static int my_node(const rdp_client_store_t *st, const char *nspace,
                   uint32_t *id_p)
{
    const pmix_value_t *v;
    uint32_t id;

    v = rdp_kvs_peek(st->kvs, st->me.nspace, st->me.rank, PMIX_NODEID);
    if (v != NULL && value_to_u32(v, &id)
        && rdp_kvs_has_rank(st->nodes, nspace, id)) {
        /* node ids are the host's, shared by every nspace */
        *id_p = id;
        return 1;
    }
    return node_by_name(st, nspace, st->hostname, id_p);
}

/* The node section of proc (nspace, rank), a real rank. */
static int proc_node(const rdp_client_store_t *st, const char *nspace,
                     pmix_rank_t rank, uint32_t *id_p)
{
    const pmix_value_t *v;
    uint32_t id;

    if (is_me(st, nspace, rank)) {
        return my_node(st, nspace, id_p);
    }
    v = rdp_kvs_peek(st->kvs, nspace, rank, PMIX_NODEID);
    if (v != NULL && value_to_u32(v, &id)
        && rdp_kvs_has_rank(st->nodes, nspace, id)) {
        *id_p = id;
        return 1;
    }
    v = rdp_kvs_peek(st->kvs, nspace, rank, PMIX_HOSTNAME);
    if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
        return node_by_name(st, nspace, v->data.string, id_p);
    }
    return 0;
}

/* The app a proc belongs to; ours for WILDCARD; 0 when unknown. */
static uint32_t proc_app(const rdp_client_store_t *st, const char *nspace,
                         pmix_rank_t rank)
{
    const pmix_value_t *v = NULL;
    uint32_t appnum;

    if (rank == PMIX_RANK_WILDCARD || rank == PMIX_RANK_UNDEF) {
        if (strncmp(nspace, st->me.nspace, PMIX_MAX_NSLEN) == 0) {
            v = rdp_kvs_peek(st->kvs, nspace, st->me.rank, PMIX_APPNUM);
        }
    } else {
        v = rdp_kvs_peek(st->kvs, nspace, rank, PMIX_APPNUM);
    }
    if (v != NULL && value_to_u32(v, &appnum)) {
        return appnum;
    }
    return 0;
}

static pmix_status_t value_dup(const pmix_value_t *src, pmix_value_t **val_p)
{
    pmix_value_t *val = rdp_calloc(1, sizeof(*val));
    pmix_status_t status;

    if (val == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = rdp_value_copy(val, src);
    if (status != PMIX_SUCCESS) {
        rdp_free(val);
        return status;
    }
    *val_p = val;
    return PMIX_SUCCESS;
}

typedef struct all_keys {
    pmix_info_t *info;
    size_t n;
    pmix_status_t status;
} all_keys_t;

static int all_keys_cb(const char *key, pmix_scope_t scope,
                       const pmix_value_t *val, void *arg)
{
    all_keys_t *ak    = arg;
    pmix_info_t *info = &ak->info[ak->n];

    PMIX_LOAD_KEY(info->key, key);
    ak->status = rdp_value_copy(&info->value, val);
    if (ak->status != PMIX_SUCCESS) {
        return 1;
    }
    ak->n++;
    return 0;
}

/* Every key of one (nspace, id) entry as a data array of infos. */
static pmix_status_t all_keys(const rdp_kvs_t *kvs, const char *nspace,
                              pmix_rank_t id, pmix_value_t **val_p)
{
    size_t count;
    all_keys_t ak = {NULL, 0, PMIX_SUCCESS};
    pmix_data_array_t *da;
    pmix_value_t *val;

    if (!rdp_kvs_has_rank(kvs, nspace, id)) {
        return PMIX_ERR_NOT_FOUND;
    }
    count = rdp_kvs_count(kvs, nspace, id);
    val   = rdp_calloc(1, sizeof(*val));
    da    = rdp_calloc(1, sizeof(*da));
    if (val == NULL || da == NULL) {
        goto err_nomem;
    }
    if (count > 0) {
        ak.info = rdp_calloc(count, sizeof(pmix_info_t));
        if (ak.info == NULL) {
            goto err_nomem;
        }
        rdp_kvs_for_each(kvs, nspace, id, all_keys_cb, &ak);
        if (ak.status != PMIX_SUCCESS) {
            rdp_info_array_free(ak.info, ak.n);
            rdp_free(da);
            rdp_free(val);
            return ak.status;
        }
        if (ak.n > 0) {
            ak.info[ak.n - 1].flags |= PMIX_INFO_ARRAY_END;
        }
    }
    da->type         = PMIX_INFO;
    da->size         = ak.n;
    da->array        = ak.info;
    val->type        = PMIX_DATA_ARRAY;
    val->data.darray = da;
    *val_p           = val;
    return PMIX_SUCCESS;

err_nomem:
    rdp_free(da);
    rdp_free(val);
    return PMIX_ERR_NOMEM;
}

/* One key, or all keys when @a key is NULL, of one entry. */
static pmix_status_t from_entry(const rdp_kvs_t *kvs, const char *nspace,
                                pmix_rank_t id, const char *key,
                                pmix_value_t **val_p)
{
    const pmix_value_t *v;

    if (key == NULL) {
        return all_keys(kvs, nspace, id, val_p);
    }
    v = rdp_kvs_peek(kvs, nspace, id, key);
    if (v == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    return value_dup(v, val_p);
}

static pmix_status_t lookup_node(const rdp_client_store_t *st,
                                 const char *nspace, pmix_rank_t rank,
                                 const char *key, const rdp_get_quals_t *q,
                                 pmix_value_t **val_p)
{
    uint32_t id;
    int found, ours;
    pmix_status_t status;

    if (q->have_nodeid) {
        uint32_t mine;
        const pmix_value_t *v;

        id    = q->nodeid;
        found = rdp_kvs_has_rank(st->nodes, nspace, id);
        v     = rdp_kvs_peek(st->kvs, st->me.nspace, st->me.rank, PMIX_NODEID);
        ours  = (v != NULL && value_to_u32(v, &mine) && mine == id)
               || (my_node(st, nspace, &mine) && mine == id);
    } else if (q->hostname != NULL) {
        found = node_by_name(st, nspace, q->hostname, &id);
        ours  = strcmp(q->hostname, st->hostname) == 0;
    } else if (rank < PMIX_RANK_VALID && !is_me(st, nspace, rank)) {
        found = proc_node(st, nspace, rank, &id);
        ours  = 0;
    } else {
        found = my_node(st, nspace, &id);
        ours  = 1;
    }
    if (found) {
        status = from_entry(st->nodes, nspace, id, key, val_p);
        if (status != PMIX_ERR_NOT_FOUND) {
            return status;
        }
    }
    /* single-node style hosts keep our node's data at job level */
    if (ours && key != NULL) {
        return from_entry(st->kvs, nspace, PMIX_RANK_WILDCARD, key, val_p);
    }
    return PMIX_ERR_NOT_FOUND;
}

static pmix_status_t lookup_app(const rdp_client_store_t *st,
                                const char *nspace, pmix_rank_t rank,
                                const char *key, const rdp_get_quals_t *q,
                                pmix_value_t **val_p)
{
    uint32_t appnum;
    pmix_status_t status;

    appnum = q->have_appnum ? q->appnum : proc_app(st, nspace, rank);
    status = from_entry(st->apps, nspace, appnum, key, val_p);
    if (status != PMIX_ERR_NOT_FOUND || key == NULL) {
        return status;
    }
    /* a job with one app may carry app data at job level */
    if (appnum == proc_app(st, nspace, PMIX_RANK_WILDCARD)) {
        return from_entry(st->kvs, nspace, PMIX_RANK_WILDCARD, key, val_p);
    }
    return PMIX_ERR_NOT_FOUND;
}

static pmix_status_t lookup_wildcard(const rdp_client_store_t *st,
                                     const char *nspace, const char *key,
                                     pmix_value_t **val_p)
{
    uint32_t id;
    pmix_status_t status;
    const pmix_rank_t w = PMIX_RANK_WILDCARD;

    if (key == NULL) {
        return all_keys(st->kvs, nspace, w, val_p);
    }
    if (is_node_key(key) && my_node(st, nspace, &id)) {
        status = from_entry(st->nodes, nspace, id, key, val_p);
        if (status != PMIX_ERR_NOT_FOUND) {
            return status;
        }
    }
    status = from_entry(st->kvs, nspace, w, key, val_p);
    if (status != PMIX_ERR_NOT_FOUND) {
        return status;
    }
    if (!is_node_key(key) && my_node(st, nspace, &id)) {
        status = from_entry(st->nodes, nspace, id, key, val_p);
        if (status != PMIX_ERR_NOT_FOUND) {
            return status;
        }
    }
    return from_entry(st->apps, nspace, proc_app(st, nspace, w), key, val_p);
}

typedef struct undef_search {
    const rdp_client_store_t *st;
    const char *nspace;
    const char *key;
    const pmix_value_t *found;
} undef_search_t;

static int undef_search_cb(pmix_rank_t rank, void *arg)
{
    undef_search_t *us = arg;

    if (rank == PMIX_RANK_WILDCARD) {
        return 0;
    }
    us->found = rdp_kvs_peek(us->st->kvs, us->nspace, rank, us->key);
    return us->found != NULL;
}

static pmix_status_t lookup_proc(const rdp_client_store_t *st,
                                 const char *nspace, pmix_rank_t rank,
                                 const char *key, pmix_value_t **val_p)
{
    uint32_t id;
    pmix_status_t status;

    if (key == NULL) {
        return all_keys(st->kvs, nspace, rank, val_p);
    }
    status = from_entry(st->kvs, nspace, rank, key, val_p);
    if (status != PMIX_ERR_NOT_FOUND) {
        return status;
    }
    /* data the host registered for the proc's app, node or job */
    status =
        from_entry(st->apps, nspace, proc_app(st, nspace, rank), key, val_p);
    if (status != PMIX_ERR_NOT_FOUND) {
        return status;
    }
    if (proc_node(st, nspace, rank, &id)) {
        status = from_entry(st->nodes, nspace, id, key, val_p);
        if (status != PMIX_ERR_NOT_FOUND) {
            return status;
        }
    }
    return from_entry(st->kvs, nspace, PMIX_RANK_WILDCARD, key, val_p);
}

static pmix_status_t lookup(const rdp_client_store_t *st,
                            const pmix_proc_t *proc, const char *key,
                            const rdp_get_quals_t *q, pmix_value_t **val_p)
{
    const char *nspace = proc->nspace[0] != '\0' ? proc->nspace : st->me.nspace;
    pmix_rank_t rank   = proc->rank;

    if (q->node_info) {
        return lookup_node(st, nspace, rank, key, q, val_p);
    }
    if (q->app_info) {
        return lookup_app(st, nspace, rank, key, q, val_p);
    }
    if (q->session_info || rank == PMIX_RANK_WILDCARD) {
        /* no session store of our own: sessions hold one job here */
        return lookup_wildcard(st, nspace, key, val_p);
    }
    if (rank == PMIX_RANK_UNDEF && key != NULL) {
        undef_search_t us = {st, nspace, key, NULL};

        rdp_kvs_for_each_rank(st->kvs, nspace, undef_search_cb, &us);
        if (us.found != NULL) {
            return value_dup(us.found, val_p);
        }
        return lookup_wildcard(st, nspace, key, val_p);
    }
    if (rank >= PMIX_RANK_VALID) {
        return PMIX_ERR_BAD_PARAM;
    }
    return lookup_proc(st, nspace, rank, key, val_p);
}

pmix_status_t rdp_client_store_lookup(rdp_client_store_t *st,
                                      const pmix_proc_t *proc, const char *key,
                                      const rdp_get_quals_t *q,
                                      pmix_value_t **val_p)
{
    const char *nspace = proc->nspace[0] != '\0' ? proc->nspace : st->me.nspace;
    pmix_rank_t rank   = proc->rank;
    pmix_status_t status = PMIX_SUCCESS;

    LOCK(st);
    if (st->lazy.count > 0) {
        int proc_data = !q->node_info && !q->app_info && !q->session_info;

        if (proc_data && rank < PMIX_RANK_VALID && key != NULL) {
            /* the common case: a peer's key, straight from the bundle */
            status = lazy_lookup(st, nspace, rank, key, val_p);
            if (status != PMIX_ERR_NOT_FOUND) {
                UNLOCK(st);
                return status;
            }
            status = PMIX_SUCCESS;
        } else if (proc_data && rank == PMIX_RANK_UNDEF) {
            materialize_nspace(st, nspace);
        } else if (rank < PMIX_RANK_VALID) {
            status =
                prepare_rank(st, nspace, rank, key, proc_data && key == NULL);
        }
        /* the rules may read our own node and app */
        if (status == PMIX_SUCCESS) {
            status = prepare_rank(st, st->me.nspace, st->me.rank, NULL, 0);
        }
    }
    if (status == PMIX_SUCCESS) {
        status = lookup(st, proc, key, q, val_p);
    }
    UNLOCK(st);
    return status;
}

static int should_fetch(const rdp_client_store_t *st, const pmix_proc_t *proc,
                        const rdp_get_quals_t *q)
{
    const char *nspace = proc->nspace[0] != '\0' ? proc->nspace : st->me.nspace;

    if (q->optional) {
        return 0;
    }
    if (!knows(st, nspace)) {
        return 1;
    }
    if (q->refresh) {
        return !is_me(st, nspace, proc->rank);
    }
    if (q->node_info || q->app_info || q->session_info
        || proc->rank >= PMIX_RANK_VALID) {
        return 0; /* job data of a known nspace came whole */
    }
    return !is_me(st, nspace, proc->rank);
}

int rdp_client_store_should_fetch(rdp_client_store_t *st,
                                  const pmix_proc_t *proc,
                                  const rdp_get_quals_t *q)
{
    int fetch;

    LOCK(st);
    fetch = should_fetch(st, proc, q);
    UNLOCK(st);
    return fetch;
}

pmix_status_t rdp_client_store_synthesize(const rdp_client_store_t *st,
                                          const pmix_proc_t *proc,
                                          const char *key, pmix_value_t **val_p)
{
    pmix_value_t *val;

    if (key == NULL || strcmp(key, PMIX_APPNUM) != 0) {
        return PMIX_ERR_NOT_FOUND;
    }
    /* hosts with a single app (ORTE) do not register the app number */
    val = rdp_calloc(1, sizeof(*val));
    if (val == NULL) {
        return PMIX_ERR_NOMEM;
    }
    val->type        = PMIX_UINT32;
    val->data.uint32 = 0;
    *val_p           = val;
    return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- */
/* resolve                                                          */

typedef struct proc_list {
    pmix_proc_t *procs;
    size_t n;
    size_t cap;
    pmix_status_t status;
} proc_list_t;

static int proc_list_add(proc_list_t *pl, const char *nspace, pmix_rank_t r)
{
    pmix_proc_t *grown;

    for (size_t i = 0; i < pl->n; i++) {
        if (pl->procs[i].rank == r
            && strncmp(pl->procs[i].nspace, nspace, PMIX_MAX_NSLEN) == 0) {
            return 1;
        }
    }
    if (pl->n == pl->cap) {
        size_t cap = pl->cap == 0 ? 16 : 2 * pl->cap;

        grown = rdp_realloc(pl->procs, cap * sizeof(*grown));
        if (grown == NULL) {
            pl->status = PMIX_ERR_NOMEM;
            return 0;
        }
        pl->procs = grown;
        pl->cap   = cap;
    }
    memset(&pl->procs[pl->n], 0, sizeof(pmix_proc_t));
    PMIX_LOAD_NSPACE(pl->procs[pl->n].nspace, nspace);
    pl->procs[pl->n].rank = r;
    pl->n++;
    return 1;
}

/* Parse a PMIX_LOCAL_PEERS string ("0,1,2") into the list. */
static int add_peer_string(proc_list_t *pl, const char *nspace,
                           const pmix_value_t *v)
{
    const char *p;
    char *end;

    if (v == NULL || v->type != PMIX_STRING || v->data.string == NULL) {
        return 0;
    }
    for (p = v->data.string; *p != '\0';) {
        unsigned long r = strtoul(p, &end, 10);

        if (end == p || r >= PMIX_RANK_VALID) {
            rdp_log_warn(CLIENT, "bad %s value '%s' for %s", PMIX_LOCAL_PEERS,
                         v->data.string, nspace);
            return 1;
        }
        if (!proc_list_add(pl, nspace, (pmix_rank_t)r)) {
            return 1;
        }
        p = end;
        while (*p == ',' || *p == ' ') {
            p++;
        }
    }
    return 1;
}

typedef struct host_search {
    const rdp_client_store_t *st;
    const char *nspace;
    const char *host;
    proc_list_t *pl;
} host_search_t;

static int host_search_cb(pmix_rank_t rank, void *arg)
{
    host_search_t *hs = arg;
    const pmix_value_t *v;
    uint32_t id;

    if (rank >= PMIX_RANK_VALID) {
        return 0;
    }
    v = rdp_kvs_peek(hs->st->kvs, hs->nspace, rank, PMIX_HOSTNAME);
    if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
        if (strcmp(v->data.string, hs->host) == 0) {
            proc_list_add(hs->pl, hs->nspace, rank);
        }
    } else if (proc_node(hs->st, hs->nspace, rank, &id)) {
        v = rdp_kvs_peek(hs->st->nodes, hs->nspace, id, PMIX_HOSTNAME);
        if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL
            && strcmp(v->data.string, hs->host) == 0) {
            proc_list_add(hs->pl, hs->nspace, rank);
        }
    }
    return hs->pl->status != PMIX_SUCCESS;
}

static int cmp_rank(const void *a, const void *b)
{
    const pmix_proc_t *pa = a, *pb = b;
    int c = strncmp(pa->nspace, pb->nspace, PMIX_MAX_NSLEN);

    if (c != 0) {
        return c;
    }
    return pa->rank < pb->rank ? -1 : pa->rank > pb->rank;
}

static void resolve_one(const rdp_client_store_t *st, const char *host,
                        int local, const char *nspace, proc_list_t *pl)
{
    uint32_t id;
    host_search_t hs = {st, nspace, host, pl};
    size_t before    = pl->n;

    if (node_by_name(st, nspace, host, &id)
        && add_peer_string(
            pl, nspace,
            rdp_kvs_peek(st->nodes, nspace, id, PMIX_LOCAL_PEERS))) {
        return;
    }
    if (local
        && add_peer_string(pl, nspace,
                           rdp_kvs_peek(st->kvs, nspace, PMIX_RANK_WILDCARD,
                                        PMIX_LOCAL_PEERS))) {
        return;
    }
    rdp_kvs_for_each_rank(st->kvs, nspace, host_search_cb, &hs);
    if (pl->n > before + 1) {
        qsort(&pl->procs[before], pl->n - before, sizeof(pmix_proc_t),
              cmp_rank);
    }
}

static pmix_status_t resolve_peers(const rdp_client_store_t *st,
                                   const char *nodename, const char *nspace,
                                   pmix_proc_t **procs_p, size_t *nprocs_p)
{
    proc_list_t pl = {NULL, 0, 0, PMIX_SUCCESS};
    int local;
    const char *host;
    rdp_hash_entry_t *e;
    size_t i;

    local = nodename == NULL || strcmp(nodename, st->hostname) == 0;
    host  = local ? st->hostname : nodename;
    if (nspace != NULL && nspace[0] != '\0') {
        resolve_one(st, host, local, nspace, &pl);
    } else {
        rdp_hash_for_each(e, &st->nspaces, i) {
            resolve_one(st, host, local, e->key, &pl);
        }
    }
    if (pl.status != PMIX_SUCCESS) {
        rdp_free(pl.procs);
        return pl.status;
    }
    if (pl.n == 0) {
        rdp_free(pl.procs);
        return PMIX_ERR_NOT_FOUND;
    }
    *procs_p  = pl.procs;
    *nprocs_p = pl.n;
    return PMIX_SUCCESS;
}

typedef struct name_list {
    char **names;
    size_t n;
    size_t cap;
    pmix_status_t status;
} name_list_t;

static void name_list_add(name_list_t *nl, const pmix_value_t *v)
{
    char **grown;

    if (v == NULL || v->type != PMIX_STRING || v->data.string == NULL
        || nl->status != PMIX_SUCCESS) {
        return;
    }
    for (size_t i = 0; i < nl->n; i++) {
        if (strcmp(nl->names[i], v->data.string) == 0) {
            return;
        }
    }
    if (nl->n == nl->cap) {
        size_t cap = nl->cap == 0 ? 8 : 2 * nl->cap;

        grown = rdp_realloc(nl->names, cap * sizeof(*grown));
        if (grown == NULL) {
            nl->status = PMIX_ERR_NOMEM;
            return;
        }
        nl->names = grown;
        nl->cap   = cap;
    }
    nl->names[nl->n] = rdp_strdup(v->data.string);
    if (nl->names[nl->n] == NULL) {
        nl->status = PMIX_ERR_NOMEM;
        return;
    }
    nl->n++;
}

typedef struct node_walk {
    const rdp_client_store_t *st;
    const char *nspace;
    name_list_t *nl;
    int procs; /* walking procs (1) or node sections (0) */
} node_walk_t;

static int node_walk_cb(pmix_rank_t id, void *arg)
{
    node_walk_t *nw = arg;

    if (nw->procs) {
        if (id < PMIX_RANK_VALID) {
            name_list_add(nw->nl, rdp_kvs_peek(nw->st->kvs, nw->nspace, id,
                                               PMIX_HOSTNAME));
        }
    } else {
        name_list_add(
            nw->nl, rdp_kvs_peek(nw->st->nodes, nw->nspace, id, PMIX_HOSTNAME));
    }
    return nw->nl->status != PMIX_SUCCESS;
}

static void nodes_of(const rdp_client_store_t *st, const char *nspace,
                     name_list_t *nl)
{
    node_walk_t nw = {st, nspace, nl, 0};
    const pmix_value_t *v;

    rdp_kvs_for_each_rank(st->nodes, nspace, node_walk_cb, &nw);
    nw.procs = 1;
    rdp_kvs_for_each_rank(st->kvs, nspace, node_walk_cb, &nw);
    if (nl->n == 0) {
        /* a host may give only the list */
        v = rdp_kvs_peek(st->kvs, nspace, PMIX_RANK_WILDCARD, PMIX_NODE_LIST);
        if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
            char *copy = rdp_strdup(v->data.string);
            char *save = NULL;

            if (copy == NULL) {
                nl->status = PMIX_ERR_NOMEM;
                return;
            }
            for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
                 tok       = strtok_r(NULL, ",", &save)) {
                pmix_value_t tv = {.type = PMIX_STRING};

                tv.data.string = tok;
                name_list_add(nl, &tv);
            }
            rdp_free(copy);
        }
    }
}

static pmix_status_t resolve_nodes(const rdp_client_store_t *st,
                                   const char *nspace, char **nodelist_p)
{
    name_list_t nl = {NULL, 0, 0, PMIX_SUCCESS};
    rdp_hash_entry_t *e;
    size_t i, len = 0;
    char *out = NULL;

    if (nspace != NULL && nspace[0] != '\0') {
        nodes_of(st, nspace, &nl);
    } else {
        rdp_hash_for_each(e, &st->nspaces, i) {
            nodes_of(st, e->key, &nl);
        }
    }
    if (nl.status == PMIX_SUCCESS && nl.n == 0) {
        nl.status = PMIX_ERR_NOT_FOUND;
    }
    if (nl.status == PMIX_SUCCESS) {
        for (i = 0; i < nl.n; i++) {
            len += strlen(nl.names[i]) + 1;
        }
        out = rdp_malloc(len);
        if (out == NULL) {
            nl.status = PMIX_ERR_NOMEM;
        } else {
            out[0] = '\0';
            for (i = 0; i < nl.n; i++) {
                if (i > 0) {
                    strcat(out, ",");
                }
                strcat(out, nl.names[i]);
            }
            *nodelist_p = out;
        }
    }
    for (i = 0; i < nl.n; i++) {
        rdp_free(nl.names[i]);
    }
    rdp_free(nl.names);
    return nl.status;
}

pmix_status_t rdp_client_store_resolve_peers(rdp_client_store_t *st,
                                             const char *nodename,
                                             const char *nspace,
                                             pmix_proc_t **procs_p,
                                             size_t *nprocs_p)
{
    pmix_status_t status;

    LOCK(st);
    /* the walk reads every rank's proc data */
    materialize_nspace(st,
                       (nspace != NULL && nspace[0] != '\0') ? nspace : NULL);
    status = resolve_peers(st, nodename, nspace, procs_p, nprocs_p);
    UNLOCK(st);
    return status;
}

pmix_status_t rdp_client_store_resolve_nodes(rdp_client_store_t *st,
                                             const char *nspace,
                                             char **nodelist_p)
{
    pmix_status_t status;

    LOCK(st);
    materialize_nspace(st,
                       (nspace != NULL && nspace[0] != '\0') ? nspace : NULL);
    status = resolve_nodes(st, nspace, nodelist_p);
    UNLOCK(st);
    return status;
}

/* ---------------------------------------------------------------- */
/* the process's own data                                           */

/*
 * The keys put since the last commit, packed at the put as the COMMIT
 * carries them ([u32 count][u8 scope][string key][value]...), so that the
 * commit hands the bytes to the connection without packing them again
 * (a 64 KiB value: one copy into fresh memory less per rank; the loop
 * thread's commit took ~75 us of which ~50 the packing; bench/RESULTS.md,
 * helper modex8).  A key put again leaves its earlier item dead; dead
 * bytes are squeezed out at the commit, or at a put once they are more
 * than the live ones (a key put again and again without a commit).
 * Items of a type the wire cannot carry are not queued: they stay local,
 * as rdp_kvs_pack_rank leaves them.  Under the store's lock.
 */
typedef struct {
    size_t off, len; /* in buf; len 0 once dead and squeezed out */
    bool dead;       /* superseded by a later put of its key */
} pend_item_t;

struct rdp_client_pending {
    rdp_buf_t buf;
    pend_item_t *items;
    size_t nitems, cap;
    size_t ndead;
    size_t dead_bytes; /* of dead items still in buf */
    rdp_hash_t index;  /* key -> item number + 1 */
};

/* Squeeze out dead bytes below this only at the commit. */
#define PEND_SQUEEZE_MIN ((size_t)64 << 10)

pmix_status_t rdp_client_pending_create(rdp_client_pending_t **pend_p)
{
    rdp_client_pending_t *pd = rdp_calloc(1, sizeof(*pd));
    pmix_status_t status;

    if (pd == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_buf_init(&pd->buf);
    status = rdp_hash_init(&pd->index, 0);
    if (status != PMIX_SUCCESS) {
        rdp_free(pd);
        return status;
    }
    *pend_p = pd;
    return PMIX_SUCCESS;
}

static void pending_reset(rdp_client_pending_t *pd)
{
    rdp_buf_cleanup(&pd->buf);
    pd->nitems = pd->ndead = pd->dead_bytes = 0;
    rdp_hash_clear(&pd->index);
}

void rdp_client_pending_destroy(rdp_client_pending_t *pd)
{
    if (pd == NULL) {
        return;
    }
    rdp_buf_cleanup(&pd->buf);
    rdp_hash_cleanup(&pd->index);
    rdp_free(pd->items);
    rdp_free(pd);
}

size_t rdp_client_pending_count(const rdp_client_pending_t *pd)
{
    return pd->nitems - pd->ndead;
}

const void *rdp_client_pending_bytes(const rdp_client_pending_t *pd,
                                     size_t *len_p)
{
    *len_p = pd->buf.size;
    return pd->buf.data;
}

/* The live items moved together behind the count. */
static void pending_squeeze(rdp_client_pending_t *pd)
{
    size_t w = sizeof(uint32_t);

    for (size_t i = 0; i < pd->nitems; i++) {
        pend_item_t *it = &pd->items[i];

        if (it->dead) {
            it->len = 0;
            continue;
        }
        if (it->off != w) {
            memmove(pd->buf.data + w, pd->buf.data + it->off, it->len);
            it->off = w;
        }
        w += it->len;
    }
    pd->buf.size   = w;
    pd->dead_bytes = 0;
}

static pmix_status_t pending_add(rdp_client_pending_t *pd, const char *key,
                                 pmix_scope_t scope, const pmix_value_t *val)
{
    size_t at;
    void *old;
    bool unsupported;
    pmix_status_t status = PMIX_SUCCESS;

    if (pd->nitems == pd->cap) {
        size_t ncap     = pd->cap > 0 ? 2 * pd->cap : 8;
        pend_item_t *it = rdp_realloc(pd->items, ncap * sizeof(*it));

        if (it == NULL) {
            return PMIX_ERR_NOMEM;
        }
        pd->items = it;
        pd->cap   = ncap;
    }
    if (pd->buf.size == 0) {
        status = rdp_pack_u32(&pd->buf, 0); /* the count, set at the take */
    }
    at = pd->buf.size;
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(&pd->buf, (uint8_t)scope);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(&pd->buf, key);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_value(&pd->buf, val);
    }
    unsupported = status == PMIX_ERR_NOT_SUPPORTED
                  || status == PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (status != PMIX_SUCCESS && !unsupported) {
        pd->buf.size = at;
        return status;
    }
    old = rdp_hash_remove_str(&pd->index, key); /* item number + 1 */
    if (old != NULL) {
        pd->items[(uintptr_t)old - 1].dead = true;
        pd->ndead++;
        pd->dead_bytes += pd->items[(uintptr_t)old - 1].len;
    }
    if (unsupported) { /* the new value replaces the old one, unsent */
        rdp_log_warn(CLIENT, "%s has type %u, which stays local", key,
                     (unsigned)val->type);
        pd->buf.size = at;
        return PMIX_SUCCESS;
    }
    status = rdp_hash_set_str(&pd->index, key,
                              (void *)(uintptr_t)(pd->nitems + 1), NULL);
    if (status != PMIX_SUCCESS) {
        pd->buf.size = at;
        return status;
    }
    pd->items[pd->nitems].off  = at;
    pd->items[pd->nitems].len  = pd->buf.size - at;
    pd->items[pd->nitems].dead = false;
    pd->nitems++;
    if (pd->dead_bytes > PEND_SQUEEZE_MIN
        && pd->dead_bytes > pd->buf.size - pd->dead_bytes) {
        pending_squeeze(pd);
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_client_store_put(rdp_client_store_t *st,
                                   rdp_client_pending_t *pending,
                                   const char *nspace, pmix_rank_t rank,
                                   const char *key, pmix_scope_t scope,
                                   pmix_value_t *val)
{
    pmix_status_t status;

    LOCK(st);
    /* a packed section holding the key would hide the new value */
    status = prepare_rank(st, nspace, rank, key, 0);
    if (status == PMIX_SUCCESS && pending != NULL) {
        status = pending_add(pending, key, scope, val);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "cannot queue key %s for commit: %s", key,
                          rdp_status_name(status));
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_kvs_put_take(st->kvs, nspace, rank, key, scope, val);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(CLIENT, "cannot store key %s: %s", key,
                          rdp_status_name(status));
        }
    }
    UNLOCK(st);
    return status;
}

pmix_status_t rdp_client_store_take_pending(rdp_client_store_t *st,
                                            rdp_client_pending_t *pending,
                                            rdp_buf_t *buf)
{
    pmix_status_t status = PMIX_SUCCESS;
    uint32_t le;

    LOCK(st);
    if (buf != NULL && pending->buf.size == 0) {
        status = rdp_pack_u32(buf, 0); /* nothing was put */
    } else if (buf != NULL) {
        if (pending->dead_bytes > 0) {
            pending_squeeze(pending);
        }
        le = htole32((uint32_t)rdp_client_pending_count(pending));
        memcpy(pending->buf.data, &le, sizeof(le));
        rdp_buf_cleanup(buf);
        *buf = pending->buf; /* the bytes change hands, not copied */
        rdp_buf_init(&pending->buf);
    }
    pending_reset(pending);
    UNLOCK(st);
    return status;
}
