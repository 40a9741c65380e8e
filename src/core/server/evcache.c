/* evcache.c - events kept for clients that connect after them */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <string.h>

/*
 * Every event the server sends to its clients is kept, as OpenPMIx 4.2.2
 * keeps it: at most EVCACHE_MAX (the oldest goes first) for at most
 * EVCACHE_SECONDS, never one marked PMIX_EVENT_DO_NOT_CACHE.  A client
 * that connects later is sent each kept event in its range, except its
 * own; the client library keeps what no handler takes until one is
 * registered.  A client connected when the event went out got it then,
 * so nobody gets an event twice.  Loop thread only.
 */
#define EVCACHE_MAX     512
#define EVCACHE_SECONDS 120.0

typedef struct kept_ev {
    rdp_list_t link;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info; /* for the range check */
    size_t ninfo;
    rdp_ipc_blob_t *blob; /* the EVENT payload */
    double since;
} kept_ev_t;

static struct {
    int ready;
    rdp_list_t list;
    size_t n;
} evc;

static void kept_drop(kept_ev_t *k)
{
    rdp_list_del(&k->link);
    evc.n--;
    rdp_info_array_free(k->info, k->ninfo);
    rdp_ipc_blob_unref(k->blob);
    rdp_free(k);
}

static void evcache_expire(void)
{
    double now = rdp_time_now();
    kept_ev_t *k, *tmp;

    rdp_list_for_each_safe(k, tmp, &evc.list, link) {
        if (now - k->since <= EVCACHE_SECONDS && evc.n <= EVCACHE_MAX) {
            break; /* oldest first */
        }
        kept_drop(k);
    }
}

void rdp_srv_evcache_keep(pmix_status_t code, const pmix_proc_t *source,
                          pmix_data_range_t range, const pmix_info_t *info,
                          size_t ninfo, rdp_ipc_blob_t *blob)
{
    kept_ev_t *k;

    if (rdp_event_do_not_cache(info, ninfo)
        || (k = rdp_calloc(1, sizeof(*k))) == NULL) {
        rdp_ipc_blob_unref(blob);
        return;
    }
    if (rdp_info_array_copy(&k->info, info, ninfo) != PMIX_SUCCESS) {
        rdp_log_warn(SERVER, "out of memory keeping event %d", code);
        rdp_ipc_blob_unref(blob);
        rdp_free(k);
        return;
    }
    if (!evc.ready) {
        rdp_list_init(&evc.list);
        evc.ready = 1;
    }
    k->source = *source;
    k->range  = range;
    k->ninfo  = ninfo;
    k->blob   = blob;
    k->since  = rdp_time_now();
    rdp_list_push_back(&evc.list, &k->link);
    evc.n++;
    evcache_expire();
}

void rdp_srv_evcache_replay(rdp_srv_peer_t *peer)
{
    const pmix_proc_t *me;
    kept_ev_t *k;

    if (!evc.ready || peer->client == NULL) {
        return;
    }
    evcache_expire();
    me = &peer->client->proc;
    rdp_list_for_each(k, &evc.list, link) {
        if ((strncmp(k->source.nspace, me->nspace, PMIX_MAX_NSLEN) == 0
             && k->source.rank == me->rank)
            || !rdp_srv_event_in_range(k->range, &k->source, k->info, k->ninfo,
                                       me)) {
            continue;
        }
        rdp_ipc_send_blob(peer->conn, RDP_CMD_EVENT, 0, k->blob);
    }
}

void rdp_srv_evcache_cleanup(void)
{
    if (!evc.ready) {
        return;
    }
    while (!rdp_list_is_empty(&evc.list)) {
        kept_drop(rdp_container_of(evc.list.next, kept_ev_t, link));
    }
    evc.ready = 0;
}
