/* depart.c - participants that left on other servers (engine mode) */
#include "config.h"
#include "core/server/p2p.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/*
 * When a client finalizes or terminates, its server tells the other
 * servers of the engine (channel RDP_SRV_CH_DEPART, batched per loop pass
 * like direct modex) which collectives it joined: for every
 * collective signature it used, how many of them it called.  A tracker
 * here whose key is (signature, n) then waits for a process that will
 * never come when that process joined fewer than n collectives of that
 * signature (finalized or terminated alike: one it joined has its whole
 * contribution): such a tracker fails at once with PMIX_ERR_PROC_TERM_WO_SYNC,
 * on every server, instead of waiting for ever.  Records are kept until
 * their nspace is deregistered, so trackers made later fail too.
 *
 * Wire form of one departure: string nspace, u32 rank, u8 terminated,
 * u32 n, n x (bytes signature, u64 count).
 *
 * Loop thread only.
 */

typedef struct departed {
    pmix_proc_t proc;
    bool terminated;
    rdp_hash_t joined; /* signature -> (void *)count */
} departed_t;

static rdp_hash_t departed_procs; /* rank key -> departed_t */
static bool departed_ready;

static void departed_free(departed_t *d)
{
    if (d == NULL) {
        return;
    }
    rdp_hash_cleanup(&d->joined);
    rdp_free(d);
}

pmix_status_t rdp_srv_depart_pack(const rdp_srv_client_t *client,
                                  rdp_buf_t *buf)
{
    size_t start         = buf->size;
    bool terminated      = client->state != RDP_SRV_CLIENT_FINALIZED;
    pmix_status_t status = rdp_pack_string(buf, client->proc.nspace);
    rdp_hash_entry_t *ent;
    size_t i;

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, client->proc.rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u8(buf, terminated ? 1 : 0);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, (uint32_t)client->coll_seq.count);
    }
    rdp_hash_for_each(ent, &client->coll_seq, i) {
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_bytes(buf, ent->key, ent->keylen);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_pack_u64(buf, (uint64_t)(uintptr_t)ent->value);
        }
    }
    if (status != PMIX_SUCCESS) {
        buf->size = start;
    }
    return status;
}

static pmix_status_t unpack_joined(rdp_rbuf_t *rb, departed_t *d)
{
    uint32_t n;
    pmix_status_t status = rdp_unpack_u32(rb, &n);

    for (uint32_t k = 0; status == PMIX_SUCCESS && k < n; k++) {
        const void *sig;
        size_t siglen;
        uint64_t count;

        status = rdp_unpack_bytes_view(rb, &sig, &siglen);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &count);
        }
        if (status == PMIX_SUCCESS && (siglen == 0 || count > UINTPTR_MAX)) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_hash_set(&d->joined, sig, siglen,
                                  (void *)(uintptr_t)count, NULL);
        }
    }
    return status;
}

pmix_status_t rdp_srv_depart_unpack(rdp_rbuf_t *rb)
{
    char key[RDP_SRV_RANK_KEY_MAX];
    departed_t *d, *old = NULL;
    uint32_t rank;
    uint8_t terminated;
    pmix_status_t status;

    if (!departed_ready) {
        status = rdp_hash_init(&departed_procs, 0);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        departed_ready = true;
    }
    d = rdp_calloc(1, sizeof(*d));
    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = rdp_hash_init(&d->joined, 0);
    if (status == PMIX_SUCCESS) {
        status =
            rdp_unpack_string_into(rb, d->proc.nspace, sizeof(d->proc.nspace));
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u8(rb, &terminated);
    }
    if (status == PMIX_SUCCESS && rank >= PMIX_RANK_VALID) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS) {
        status = unpack_joined(rb, d);
    }
    if (status == PMIX_SUCCESS) {
        d->proc.rank  = rank;
        d->terminated = terminated != 0;
        status        = rdp_hash_set(&departed_procs, key,
                                     rdp_srv_rank_key(d->proc.nspace, rank, key), d,
                                     (void **)&old);
    }
    if (status != PMIX_SUCCESS) {
        departed_free(d);
        return status;
    }
    departed_free(old);
    rdp_log_debug(SERVER, "%s:%u left on another node (%s)", d->proc.nspace,
                  d->proc.rank, d->terminated ? "terminated" : "finalized");
    return PMIX_SUCCESS;
}

/* True when @a d will never join the collective of tracker key @a key
 * (signature followed by the sequence number, coll.c). */
static bool departed_misses(const departed_t *d, const uint8_t *key,
                            size_t keylen)
{
    size_t siglen = keylen - sizeof(uint64_t);
    uint64_t seq, joined;

    /* a collective it joined has its whole contribution (a FENCE carries
     * the data), so only later ones are doomed, however it left */
    memcpy(&seq, key + siglen, sizeof(seq));
    joined = (uint64_t)(uintptr_t)rdp_hash_get(&d->joined, key, siglen);
    return joined < seq;
}

bool rdp_srv_depart_dooms(const pmix_proc_t *procs, size_t nprocs,
                          const uint8_t *key, size_t keylen)
{
    rdp_hash_entry_t *ent;
    size_t i;

    if (!departed_ready || keylen <= sizeof(uint64_t)) {
        return false;
    }
    rdp_hash_for_each(ent, &departed_procs, i) {
        const departed_t *d = ent->value;

        if (rdp_srv_procs_contain(procs, nprocs, &d->proc)
            && departed_misses(d, key, keylen)) {
            return true;
        }
    }
    return false;
}

/* Remove every record for which @a nspace is NULL or its nspace. */
static void depart_drop(const char *nspace)
{
    rdp_hash_entry_t *ent;
    departed_t **drop;
    size_t i, n = 0;

    if (!departed_ready) {
        return;
    }
    drop = rdp_calloc(departed_procs.count + 1, sizeof(*drop));
    if (drop == NULL) {
        rdp_log_error(SERVER, "out of memory dropping departure records");
        return;
    }
    rdp_hash_for_each(ent, &departed_procs, i) {
        departed_t *d = ent->value;

        if (nspace == NULL
            || strncmp(d->proc.nspace, nspace, PMIX_MAX_NSLEN) == 0) {
            drop[n++] = d;
        }
    }
    for (i = 0; i < n; i++) {
        char key[RDP_SRV_RANK_KEY_MAX];

        rdp_hash_remove(
            &departed_procs, key,
            rdp_srv_rank_key(drop[i]->proc.nspace, drop[i]->proc.rank, key));
        departed_free(drop[i]);
    }
    rdp_free(drop);
}

void rdp_srv_depart_nspace_gone(const char *nspace)
{
    depart_drop(nspace);
}

void rdp_srv_depart_cleanup(void)
{
    depart_drop(NULL);
    if (departed_ready) {
        rdp_hash_cleanup(&departed_procs);
        departed_ready = false;
    }
}

/* ---- the channel ---- */

/*
 * Does server @a s host a rank of @a ns (true when the job's nodes are not
 * known)?  Only those servers can hold collectives that wait for a process
 * of the job.  Telling the others too opened connections to them at the
 * very end of a job, as the daemons shut down, and UCX 1.13 aborts when a
 * worker is destroyed while such a connection is still being set up
 * (ucp_request.c: "got REP message", seen with a node that had no rank).
 */
static bool hosts_job_of(const rdp_srv_nspace_t *ns, uint32_t s)
{
    uint32_t n   = rdp_srv_xchg_nservers();
    bool counted = false;

    for (size_t i = 0; ns != NULL && i < ns->nnodes; i++) {
        if (ns->nodes[i].id >= n) {
            return true; /* a node without a valid id could be any server */
        }
        if (ns->nodes[i].nranks > 0) {
            counted = true;
            if (ns->nodes[i].id == s) {
                return true;
            }
        }
    }
    return !counted; /* where the ranks are is not known */
}

void rdp_srv_depart_announce(rdp_srv_client_t *client)
{
    uint32_t n = rdp_srv_xchg_nservers(), me = rdp_srv_xchg_me();
    rdp_buf_t one;
    pmix_status_t status;

    /* a client that never connected joined nothing and waits for nothing;
     * one that finalized and is then deregistered was announced once */
    if (n < 2 || client->pid == 0 || client->departure_told) {
        return;
    }
    client->departure_told = true;
    rdp_buf_init(&one);
    status = rdp_srv_depart_pack(client, &one);
    for (uint32_t s = 0; status == PMIX_SUCCESS && s < n; s++) {
        rdp_buf_t *b = NULL;

        if (s != me && hosts_job_of(client->ns, s)) {
            b = rdp_srv_p2p_batch(s, RDP_SRV_CH_DEPART);
        }
        if (b == NULL) {
            continue;
        }
        status = rdp_buf_append(b, one.data, one.size);
        if (status == PMIX_SUCCESS) {
            rdp_srv_p2p_batch_add(s, RDP_SRV_CH_DEPART);
        }
    }
    rdp_buf_cleanup(&one);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(
            SERVER, "cannot tell the other servers that %s:%u left: %s",
            client->proc.nspace, client->proc.rank, rdp_status_name(status));
    }
}

static void handle_departures(uint32_t peer, rdp_rbuf_t *rb)
{
    uint32_t count;
    pmix_status_t status = rdp_unpack_u32(rb, &count);

    for (uint32_t i = 0; status == PMIX_SUCCESS && i < count; i++) {
        status = rdp_srv_depart_unpack(rb);
    }
    if (status != PMIX_SUCCESS || rb->left != 0) {
        rdp_log_error(SERVER, "malformed departures from server %u: %s", peer,
                      rdp_status_name(status));
    }
    /* the records that were read count, even after a malformed one */
    rdp_srv_coll_remote_gone();
}

static const rdp_srv_p2p_handler_t depart_handler = {
    .recv = handle_departures,
};

void rdp_srv_depart_open(void)
{
    rdp_srv_p2p_register(RDP_SRV_CH_DEPART, &depart_handler);
}
