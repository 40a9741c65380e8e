/* xconnect.h - rdpmix-run's part of a connect across launchers */
#ifndef RDP_RUN_XCONNECT_H
#define RDP_RUN_XCONNECT_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "core/loop/loop.h"
#include "core/wire/wire.h"
#include "run/ctl.h"
#include "run/datapeer.h"

/*
 * The launcher's side of xconn.h: it gathers the XCONN requests of its
 * daemons that host participants of its job (one group per operation:
 * op, id and participants), then sends its offer (its launch description
 * without secrets and the daemons' committed data) to the launcher of
 * the other job, found in the peer directory by the pid in that job's
 * nspace ("rdpmix.PID.HEX"), and completes once it holds that launcher's
 * offer too: each side sends, neither waits for an answer, so two
 * launchers offering at once cannot block each other.  The other
 * launcher's end (its socket closed before its offer came) fails the
 * operation with PMIX_ERR_UNREACH.  Loop thread only.
 */

typedef struct rdp_run_xconn rdp_run_xconn_t;

/** Send @a cmd with @a buf (taken) to the daemon of node @a node. */
typedef void (*rdp_run_xconn_send_fn)(uint32_t node, uint16_t cmd,
                                      rdp_buf_t *buf, void *arg);

typedef struct rdp_run_xconn_cfg {
    rdp_loop_t *loop;
    rdp_run_peers_t *peers;      /* NULL: every operation fails */
    const char *nspace;          /* our job */
    const rdp_ctl_node_t *nodes; /* the job's map (borrowed) */
    uint32_t nnodes;
    const void *launch; /* our LAUNCH without secrets (copied) */
    size_t nlaunch;
    rdp_run_xconn_send_fn send;
    void *arg;
} rdp_run_xconn_cfg_t;

pmix_status_t rdp_run_xconn_create(const rdp_run_xconn_cfg_t *cfg,
                                   rdp_run_xconn_t **x_p);
/** Pending operations are answered PMIX_ERR_LOST_CONNECTION (their
 * daemons may be gone: sends are best effort).  Accepts NULL. */
void rdp_run_xconn_destroy(rdp_run_xconn_t *x);

/** Rank @a rank of our job ended abnormally (@a exit_code): the launchers
 * of the jobs it is connected to get PMIX_ERR_PROC_ABORTED and
 * PMIX_EVENT_PROC_TERMINATED for their processes (XEVENT). */
void rdp_run_xconn_rank_failed(rdp_run_xconn_t *x, pmix_rank_t rank,
                               int exit_code);

/** An XCONN from the daemon of @a node. */
void rdp_run_xconn_request(rdp_run_xconn_t *x, uint32_t node,
                           const void *payload, size_t len);

#endif
