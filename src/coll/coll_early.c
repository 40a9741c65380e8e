/* coll_early.c - early arrivals: messages for collectives not started
 * here yet, queued (bounded) until they start */
#include "config.h"
#include "coll/coll_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <pmix.h>

#include <string.h>

/* An empty queue for @a key (not linked yet): the kept one, or a new one;
 * NULL without memory. */
static early_t *early_get(rdp_coll_engine_t *engine, const coll_key_t *key)
{
    early_t *e = engine->spare_early;

    if (e != NULL) {
        engine->spare_early = NULL;
        engine->stats.early_reused++;
        memset(e, 0, sizeof(*e));
    } else {
        e = rdp_calloc(1, sizeof(*e));
        if (e == NULL) {
            return NULL;
        }
    }
    e->node.key = *key;
    rdp_list_init(&e->msgs);
    return e;
}

/* @a e, unlinked and emptied, is kept for the next queue (about every
 * other message of a small collective at 2 servers comes before its local
 * start) or freed. */
static void early_put(rdp_coll_engine_t *engine, early_t *e)
{
    if (engine->spare_early == NULL) {
        engine->spare_early = e;
    } else {
        rdp_free(e);
    }
}

/* Unlink and return the queue for @a key, or NULL. */
static early_t *early_take(rdp_coll_engine_t *engine, const coll_key_t *key)
{
    keytab_node_t *node;

    if (engine->early.count == 0) {
        return NULL;
    }
    node = rdp_keytab_find(&engine->early, key);
    if (node == NULL) {
        return NULL;
    }
    rdp_keytab_remove(&engine->early, node);
    return rdp_container_of(node, early_t, node);
}

void rdp_coll_early_drop(rdp_coll_engine_t *engine, const coll_key_t *key)
{
    early_t *e = early_take(engine, key);
    rx_t *rx;
    rx_t *tmp;

    if (e == NULL) {
        return;
    }
    rdp_list_for_each_safe(rx, tmp, &e->msgs, link) {
        engine->early_msgs--;
        engine->early_bytes -= rx->len;
        rdp_coll_rx_free(rx);
    }
    early_put(engine, e);
}

enum rdp_tl_rx_disp rdp_coll_early_enqueue(rdp_coll_engine_t *engine,
                                           const rdp_coll_hdr_t *h,
                                           const rdp_tl_rx_t *trx)
{
    enum rdp_tl_rx_disp disp = RDP_TL_RX_DONE;
    coll_key_t key;
    keytab_node_t *node;
    early_t *e;
    rx_t *rx;

    rdp_coll_make_key(&key, h->kind, h->sig, h->opid);
    if (engine->early_msgs + 1 > engine->early_max_msgs
        || trx->len > engine->early_max_bytes - engine->early_bytes) {
        rdp_log_warn(COLL,
                     "early-arrival queue full (%zu messages, %zu bytes): "
                     "%s %016llx:%llu loses a message from %u and will fail",
                     engine->early_msgs, engine->early_bytes,
                     rdp_coll_kind_name(h->kind), (unsigned long long)h->sig,
                     (unsigned long long)h->opid, h->sender);
        engine->stats.early_overflow++;
        rdp_coll_keymem_add(&engine->poisoned, &key);
        rdp_coll_early_drop(engine, &key);
        return RDP_TL_RX_DONE;
    }
    node = rdp_keytab_find(&engine->early, &key);
    if (node != NULL) {
        e = rdp_container_of(node, early_t, node);
    } else {
        e = early_get(engine, &key);
        if (e == NULL) {
            goto err_nomem;
        }
        rdp_keytab_insert(&engine->early, &e->node);
    }
    rx = rdp_coll_rx_create(engine, h, trx);
    if (rx == NULL) {
        goto err_nomem;
    }
    if (rdp_coll_rx_take_payload(rx, trx, &disp) != PMIX_SUCCESS) {
        rdp_free(rx->buf);
        rdp_free(rx->seals);
        rdp_free(rx);
        goto err_nomem;
    }
    rdp_list_push_back(&e->msgs, &rx->link);
    engine->early_msgs++;
    engine->early_bytes += rx->len;
    return disp;

err_nomem:
    /* losing a message is as fatal for its collective as an overflow */
    rdp_coll_keymem_add(&engine->poisoned, &key);
    rdp_coll_early_drop(engine, &key);
    return disp;
}

/* Hand the messages queued for @a coll, which just started, over to it,
 * in arrival order.  Returns whether there were any. */
int rdp_coll_early_hand_over(rdp_coll_engine_t *engine, coll_t *coll)
{
    early_t *early;

    early = early_take(engine, &coll->node.key);
    if (early != NULL) {
        rdp_list_t *item;

        while ((item = rdp_list_pop_front(&early->msgs)) != NULL) {
            rx_t *rx = rdp_container_of(item, rx_t, link);

            engine->early_msgs--;
            engine->early_bytes -= rx->len;
            rdp_coll_attach_rx(coll, rx);
        }
        early_put(engine, early);
    }
    return early != NULL;
}

/* Free every queued message without telling the transport (after
 * unbind). */
void rdp_coll_early_free_unbound(rdp_coll_engine_t *engine)
{
    rdp_list_t *item;
    keytab_node_t *node;

    while ((node = rdp_keytab_any(&engine->early)) != NULL) {
        early_t *e = rdp_container_of(node, early_t, node);

        rdp_keytab_remove(&engine->early, node);
        while ((item = rdp_list_pop_front(&e->msgs)) != NULL) {
            rdp_coll_rx_free_unbound(rdp_container_of(item, rx_t, link));
        }
        rdp_free(e);
    }
    rdp_free(engine->spare_early);
    engine->spare_early = NULL;
}
