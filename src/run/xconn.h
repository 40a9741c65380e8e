/* xconn.h - connect/disconnect across launchers: messages */
#ifndef RDP_RUN_XCONN_H
#define RDP_RUN_XCONN_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

#include "core/wire/wire.h"
#include "run/ctl.h"

/*
 * A PMIx_Connect / PMIx_Disconnect naming another launcher's job
 * (docs/design.md, "Connect and disconnect"): the servers pass it to
 * rdpmixd's connect/disconnect upcall, each daemon to rdpmix-run (XCONN),
 * which waits for every daemon that hosts participants of its job, then
 * sends its offer to the launcher of the other job (XOFFER, over the peer
 * directory's sockets, datapeer.h) and waits for that launcher's offer.
 * Then each daemon gets XCONN_DONE with the other job's launch
 * description and committed data.
 *
 *   XCONN      d->l  u32 reqid, u8 op, i32 local status (an error: a
 *                    participant here left), str id ("" none), u32 n,
 *                    n x (str nspace, u32 rank), bytes data
 *   XCONN_DONE l->d  u32 reqid, i32 status, bytes launch (a LAUNCH
 *                    payload without secrets; empty for a disconnect or
 *                    a failure), bytes data (the other job's bundles)
 *   XOFFER     l->l  str to (the receiver's nspace), str from, str key,
 *                    bytes launch, bytes data
 *   XEVENT     l->l  a NOTIFY payload (ctl.h): a rank of the sender's job
 *                    ended abnormally while connected to the receiver's;
 *                    the receiver relays it to its daemons
 */
enum rdp_xconn_cmd {
    RDP_CTL_XCONN      = 160,
    RDP_CTL_XCONN_DONE = 161,
    RDP_CTL_XOFFER     = 162,
    RDP_CTL_XEVENT     = 163
};

enum rdp_xconn_op {
    RDP_XCONN_CONNECT    = 1,
    RDP_XCONN_DISCONNECT = 2
};

typedef struct rdp_xconn_req {
    uint32_t reqid;
    uint8_t op;
    int32_t lstatus;
    char *id;           /* owned; NULL: none */
    pmix_proc_t *procs; /* owned */
    size_t nprocs;
    void *data; /* owned; NULL when ndata is 0 */
    size_t ndata;
} rdp_xconn_req_t;

typedef struct rdp_xconn_done {
    uint32_t reqid;
    int32_t status;
    const void *launch; /* borrowed from the payload */
    size_t nlaunch;
    const void *data; /* borrowed from the payload */
    size_t ndata;
} rdp_xconn_done_t;

typedef struct rdp_xconn_offer {
    char *to;     /* owned */
    char *from;   /* owned */
    char *key;    /* owned */
    void *launch; /* owned */
    size_t nlaunch;
    void *data; /* owned */
    size_t ndata;
} rdp_xconn_offer_t;

pmix_status_t rdp_xconn_req_pack(rdp_buf_t *buf, const rdp_xconn_req_t *m);
pmix_status_t rdp_xconn_req_unpack(const void *payload, size_t len,
                                   rdp_xconn_req_t *m_p);
void rdp_xconn_req_cleanup(rdp_xconn_req_t *m);

pmix_status_t rdp_xconn_done_pack(rdp_buf_t *buf, const rdp_xconn_done_t *m);
/** Zero-copy: launch and data point into @a payload. */
pmix_status_t rdp_xconn_done_unpack(const void *payload, size_t len,
                                    rdp_xconn_done_t *m_p);

pmix_status_t rdp_xconn_offer_pack(rdp_buf_t *buf, const rdp_xconn_offer_t *m);
pmix_status_t rdp_xconn_offer_unpack(const void *payload, size_t len,
                                     rdp_xconn_offer_t *m_p);
void rdp_xconn_offer_cleanup(rdp_xconn_offer_t *m);

#endif
