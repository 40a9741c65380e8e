/* rdpmixd_pubsub.c - publish/lookup/unpublish: forwarded to rdpmix-run */
#include "config.h"
#include "run/rdpmixd_int.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <string.h>

/*
 * The data lives in rdpmix-run (datasvc.c), so that every node and, for
 * SESSION and GLOBAL data, other jobs of the user see it.  An upcall
 * packs the request on the server's thread and posts it to the loop,
 * which sends it (PUBSUB) and keeps the callback until the PUBSUB_REPLY
 * with its id comes back.  A waiting lookup may stay here long; it ends
 * with the reply, or PMIX_ERR_UNREACH when the launcher is gone.
 */

typedef struct pending {
    rdp_list_t link;
    uint32_t id;
    uint8_t op;
    pmix_op_cbfunc_t op_cb;
    pmix_lookup_cbfunc_t lookup_cb;
    void *cbdata;
    rdp_buf_t msg; /* until sent */
} pending_t;

static daemon_t *const dm = &rdp_run_dmn;
static rdp_list_t pending = {&pending, &pending}; /* loop thread only */
static uint32_t next_id;                          /* atomic */

static void complete(pending_t *p, pmix_status_t status, pmix_pdata_t *pd,
                     size_t npd)
{
    if (p->op == RDP_CTL_LOOKUP) {
        p->lookup_cb(status, pd, npd, p->cbdata);
    } else if (p->op_cb != NULL) {
        p->op_cb(status, p->cbdata);
    }
    rdp_buf_cleanup(&p->msg);
    rdp_free(p);
}

/* On the loop: send it, or fail it when nobody would answer. */
static void send_request(void *arg)
{
    pending_t *p = arg;

    if (dm->chan == NULL || !rdp_run_chan_is_open(dm->chan) || dm->lost_launcher
        || dm->stopping) {
        complete(p, PMIX_ERR_UNREACH, NULL, 0);
        return;
    }
    rdp_list_push_back(&pending, &p->link);
    rdp_run_dmn_send(RDP_CTL_PUBSUB, &p->msg);
    rdp_buf_init(&p->msg);
}

/* Any thread: pack the request and hand it to the loop. */
static pmix_status_t forward(uint8_t op, const pmix_proc_t *proc, char **keys,
                             const pmix_info_t info[], size_t ninfo,
                             pending_t *p)
{
    rdp_ctl_pubsub_t m = {.op = op, .proc = *proc, .keys = keys};
    pmix_status_t status;

    m.info  = (pmix_info_t *)info;
    m.ninfo = info != NULL ? ninfo : 0;
    m.id = p->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    p->op        = op;
    rdp_buf_init(&p->msg);
    status = rdp_ctl_pubsub_pack(&p->msg, &m);
    if (status == PMIX_SUCCESS) {
        status = rdp_loop_post(dm->loop, send_request, p);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(&p->msg);
        rdp_free(p);
    }
    return status;
}

static pmix_status_t forward_op(uint8_t op, const pmix_proc_t *proc,
                                char **keys, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                void *cbdata)
{
    pending_t *p = rdp_calloc(1, sizeof(*p));

    if (p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    p->op_cb  = cbfunc;
    p->cbdata = cbdata;
    return forward(op, proc, keys, info, ninfo, p);
}

pmix_status_t rdp_run_dmn_publish(const pmix_proc_t *proc,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return forward_op(RDP_CTL_PUBLISH, proc, NULL, info, ninfo, cbfunc, cbdata);
}

pmix_status_t rdp_run_dmn_unpublish(const pmix_proc_t *proc, char **keys,
                                    const pmix_info_t info[], size_t ninfo,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* an empty key list means every key, as NULL does */
    if (keys != NULL && keys[0] == NULL) {
        keys = NULL;
    }
    return forward_op(RDP_CTL_UNPUBLISH, proc, keys, info, ninfo, cbfunc,
                      cbdata);
}

pmix_status_t rdp_run_dmn_lookup(const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    pending_t *p;

    if (keys == NULL || keys[0] == NULL || cbfunc == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    p = rdp_calloc(1, sizeof(*p));
    if (p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    p->lookup_cb = cbfunc;
    p->cbdata    = cbdata;
    return forward(RDP_CTL_LOOKUP, proc, keys, info, ninfo, p);
}

/* PUBSUB_REPLY from rdpmix-run. */
void rdp_run_dmn_pubsub_reply(const void *payload, size_t len)
{
    pmix_pdata_t *pd = NULL;
    size_t npd       = 0;
    pmix_status_t status;
    uint32_t id;
    pending_t *p;

    if (rdp_ctl_pubsub_reply_unpack(payload, len, &id, &status, &pd, &npd)
        != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed publish/lookup reply");
        return;
    }
    rdp_list_for_each(p, &pending, link) {
        if (p->id == id) {
            rdp_list_del(&p->link);
            complete(p, status, pd, npd);
            break;
        }
    }
    PMIX_PDATA_FREE(pd, npd);
}

void rdp_run_dmn_pubsub_fail_all(void)
{
    pending_t *p;

    while (!rdp_list_is_empty(&pending)) {
        p = rdp_container_of(rdp_list_pop_front(&pending), pending_t, link);
        complete(p, PMIX_ERR_UNREACH, NULL, 0);
    }
}
