/* chan.h - framed, nonblocking stream channel driven by the loop */
#ifndef RDP_RUN_CHAN_H
#define RDP_RUN_CHAN_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "core/loop/loop.h"
#include "core/wire/wire.h"

/*
 * The launcher <-> daemon control channel: whole frames (rdp_msg_hdr_t +
 * payload) over a connected stream socket (TCP today).  Reads and writes
 * are nonblocking and driven by loop fd watchers; sends are queued, so a
 * slow peer never blocks the loop.  A frame with a bad header or a length
 * above the channel's limit ends the channel with PMIX_ERR_UNPACK_FAILURE.
 * Loop thread only.
 */
typedef struct rdp_run_chan rdp_run_chan_t;

/** A whole frame arrived; @a payload is borrowed for the call only.  The
 * callback may send, shut down or destroy the channel. */
typedef void (*rdp_run_chan_msg_cb_t)(rdp_run_chan_t *chan, uint16_t cmd,
                                      const void *payload, size_t len,
                                      void *arg);
/** The channel ended: peer closed (PMIX_ERR_LOST_CONNECTION), an I/O or
 * protocol error, or a requested shutdown finished (PMIX_SUCCESS).
 * Called at most once, never from inside a chan function; the channel
 * stays allocated until rdp_run_chan_destroy. */
typedef void (*rdp_run_chan_close_cb_t)(rdp_run_chan_t *chan, pmix_status_t why,
                                        void *arg);
/** The send queue fell to the low-water mark after being above it. */
typedef void (*rdp_run_chan_drain_cb_t)(rdp_run_chan_t *chan, void *arg);

/**
 * Wrap the connected socket @a fd (ownership passes to the channel, even
 * on failure), make it nonblocking and start reading.
 * @param [in] max_msg  largest payload accepted
 */
pmix_status_t rdp_run_chan_create(rdp_loop_t *loop, int fd, size_t max_msg,
                                  rdp_run_chan_msg_cb_t msg_cb,
                                  rdp_run_chan_close_cb_t close_cb, void *arg,
                                  rdp_run_chan_t **chan_p);
/** Close the fd and free, without calling close_cb. Accepts NULL. Safe
 * inside the channel's own callbacks (freed when they return). */
void rdp_run_chan_destroy(rdp_run_chan_t *chan);

void rdp_run_chan_set_max_msg(rdp_run_chan_t *chan, size_t max_msg);
void rdp_run_chan_set_arg(rdp_run_chan_t *chan, void *arg);
void rdp_run_chan_set_drain_cb(rdp_run_chan_t *chan, size_t low_water,
                               rdp_run_chan_drain_cb_t cb);

/**
 * Queue a frame; takes the bytes of @a buf (left empty) whether or not it
 * succeeds (@a buf may be NULL for an empty payload).
 * PMIX_ERR_UNREACH once the channel is closing or closed.
 */
pmix_status_t rdp_run_chan_send(rdp_run_chan_t *chan, uint16_t cmd,
                                rdp_buf_t *buf);
/** Bytes queued and not yet written. */
size_t rdp_run_chan_queued(const rdp_run_chan_t *chan);
/** True until close_cb has been called (or is about to be). */
int rdp_run_chan_is_open(const rdp_run_chan_t *chan);

/** Stop reading; once the queue is written, close and call close_cb with
 * PMIX_SUCCESS. */
void rdp_run_chan_shutdown(rdp_run_chan_t *chan);

/**
 * Write what is queued, blocking up to @a timeout seconds (for a process
 * about to exit, outside the loop).  Returns PMIX_SUCCESS when the queue
 * is empty.
 */
pmix_status_t rdp_run_chan_flush_blocking(rdp_run_chan_t *chan, double timeout);

#endif
