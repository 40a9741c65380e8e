/* datapeer.h - GLOBAL publish/lookup between rdpmix-run launchers */
#ifndef RDP_RUN_DATAPEER_H
#define RDP_RUN_DATAPEER_H

#include <pmix_common.h>

#include <stddef.h>

#include "core/loop/loop.h"
#include "run/chan.h"
#include "run/datasvc.h"

/*
 * Launchers of one user find each other in a private directory (0700,
 * owned by the user; RDPMIX_PEER_DIR, else $XDG_RUNTIME_DIR/rdpmix, else
 * /tmp/rdpmix-UID) where each listens on a unix socket named after its
 * pid.  Only the user's processes may connect (SO_PEERCRED, both ways).
 * Data stays with the launcher it was published to; a lookup of range
 * GLOBAL asks the other launchers for the GLOBAL keys it did not find at
 * home (PEER_LOOKUP, 132, answered by PUBSUB_REPLY, 131; sent and
 * answered on the loop, each question over a connection of its own, an
 * answer awaited up to 1 s, so launchers asking each other at once never
 * block each other).  A GLOBAL lookup that waits
 * asks again every 0.2 s until it has enough keys, its PMIX_TIMEOUT
 * passes or its requester ends; the keys it found meanwhile are kept
 * for it.  Loop thread only.
 */

typedef struct rdp_run_peers rdp_run_peers_t;

/**
 * Listen for the other launchers, answering from @a ds (borrowed; it
 * must outlive the peers).  @a dir NULL: the default directory.  On
 * failure *@a why (of @a whylen bytes) says why (e.g. the directory is
 * not private), and the job runs without sharing GLOBAL data.
 */
pmix_status_t rdp_run_peers_create(rdp_loop_t *loop, rdp_ds_t *ds,
                                   const char *dir, char *why, size_t whylen,
                                   rdp_run_peers_t **peers_p);
/** Stop listening, remove the socket; pending lookups are answered
 * PMIX_ERR_LOST_CONNECTION.  Accepts NULL. */
void rdp_run_peers_destroy(rdp_run_peers_t *peers);

/**
 * A lookup of range GLOBAL: as rdp_ds_lookup (same reply contract), but
 * also searching the other launchers.
 */
pmix_status_t rdp_run_peers_lookup(rdp_run_peers_t *peers,
                                   const rdp_ds_who_t *who, char *const *keys,
                                   const pmix_info_t *info, size_t ninfo,
                                   rdp_ds_reply_cb_t reply_cb, void *arg);

/** Another launcher's XOFFER or XEVENT (@a cmd, xconn.h): the handler
 * returns an error when it refuses it (the channel is then closed). */
typedef pmix_status_t (*rdp_run_peers_offer_fn)(uint16_t cmd,
                                                const void *payload, size_t len,
                                                void *arg);
void rdp_run_peers_on_offer(rdp_run_peers_t *peers, rdp_run_peers_offer_fn fn,
                            void *arg);

/**
 * A channel to the launcher of pid @a pid, for one-way messages (XOFFER);
 * @a close_cb tells when it goes away.  PMIX_ERR_UNREACH when no such
 * launcher of ours listens.
 */
pmix_status_t rdp_run_peers_open(rdp_run_peers_t *peers, long pid,
                                 rdp_run_chan_close_cb_t close_cb, void *arg,
                                 rdp_run_chan_t **chan_p);

/** @a proc ended: its waiting GLOBAL lookups are answered
 * PMIX_ERR_LOST_CONNECTION. */
void rdp_run_peers_proc_ended(rdp_run_peers_t *peers, const pmix_proc_t *proc);

#endif
