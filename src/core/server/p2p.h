/* p2p.h - point-to-point messages between servers, by channel */
#ifndef RDP_CORE_SERVER_P2P_H
#define RDP_CORE_SERVER_P2P_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/wire/wire.h"

/*
 * In engine mode servers also send each other messages: requests and
 * answers of direct modex, departures, and those of the operations that
 * are not a single allgather (group invitations).  Each kind has its own
 * channel and one handler; a failed server is told to every handler.
 * Messages may be sent at once (rdp_srv_p2p_send) or batched
 * (rdp_srv_p2p_batch*): the entries queued for one (server, channel)
 * during one loop pass travel as one message, [u32 count][entries].
 * Everything here belongs to the loop thread; handlers run on it, never
 * inside rdp_srv_p2p_send.
 */

enum rdp_srv_p2p_channel {
    RDP_SRV_CH_DMDX_REQ = 1, /* batched (nspace, rank, key) wants */
    RDP_SRV_CH_DMDX_RSP = 2, /* batched answers with bundles */
    RDP_SRV_CH_DEPART   = 3, /* batched departures (depart.c) */
    /* 4-6 reserved for connect and groups */
    RDP_SRV_CH_GROUP_INVITE = 4,
    RDP_SRV_CH_GROUP_CTL    = 5,
    RDP_SRV_CH_WARMUP       = 7, /* one message at connect (engine.c) */
    RDP_SRV_CH_MAX          = 8 /* channels are 1 .. RDP_SRV_CH_MAX - 1 */
};

typedef struct rdp_srv_p2p_handler {
    /** A message from server @a server on the handler's channel; @a rb
     * covers it (borrowed for the call). */
    void (*recv)(uint32_t server, rdp_rbuf_t *rb);
    /** Server @a server failed, or a message to it was lost; may be told
     * more than once per server.  NULL: not interested. */
    void (*peer_failed)(uint32_t server, pmix_status_t status);
    /** A batch of @a count entries (@a rb covers them, without the count)
     * could not be sent to @a server: @a status.  NULL: logged only. */
    void (*unsent)(uint32_t server, uint32_t count, rdp_rbuf_t *rb,
                   pmix_status_t status);
} rdp_srv_p2p_handler_t;

/**
 * Handle @a channel with @a handler (NULL: drop its messages again).
 * Registrations outlive engine restarts; register before messages can
 * come (engine.c registers the built-in channels when the engine starts).
 * PMIX_ERR_BAD_PARAM for a channel out of range.
 * @param [in] handler  borrowed; must stay valid while registered
 */
pmix_status_t rdp_srv_p2p_register(uint32_t channel,
                                   const rdp_srv_p2p_handler_t *handler);

/**
 * Send the bytes of @a buf to server @a server on @a channel now (copied
 * before return).  PMIX_ERR_INIT without the engine, PMIX_ERR_BAD_PARAM
 * for this server or one out of range, PMIX_ERR_UNREACH when it is known
 * to have failed, else the engine's errors (rdp_coll_p2p_send).  A later
 * loss is told through peer_failed.
 */
pmix_status_t rdp_srv_p2p_send(uint32_t server, uint32_t channel,
                               const rdp_buf_t *buf);

/** The batch of (@a server, @a channel) to pack one entry into (NULL
 * without the engine or out of range).  Pack after its current end; on an
 * error set its size back; on success call rdp_srv_p2p_batch_add. */
rdp_buf_t *rdp_srv_p2p_batch(uint32_t server, uint32_t channel);
/** One more entry was packed into the batch: it leaves on this pass. */
void rdp_srv_p2p_batch_add(uint32_t server, uint32_t channel);

/** True once @a server was reported failed. */
bool rdp_srv_p2p_peer_failed(uint32_t server);

/* ---- lifetime (engine.c) ---- */
/** Carry the channels over @a engine, as server @a me of @a n. */
pmix_status_t rdp_srv_p2p_open(rdp_coll_engine_t *engine, uint32_t me,
                               uint32_t n);
/** Drop unsent batches; messages are no longer sent nor handled. */
void rdp_srv_p2p_close(void);

#endif
