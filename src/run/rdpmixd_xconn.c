/* rdpmixd_xconn.c - rdpmixd's connect, disconnect and direct_modex upcalls
 * for connects across launchers (xconn.h) */
#include "config.h"
#include "run/rdpmixd_int.h"

#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "run/jobinfo.h"
#include "run/xconn.h"

#include <rdpmix.h>

#include <pthread.h>
#include <string.h>

/*
 * The server calls connect/disconnect only for operations that name
 * another launcher's job (docs/design.md, "Connect and disconnect"); they
 * go to rdpmix-run as XCONN and are answered when XCONN_DONE comes back.
 * A successful connect brings the other job's launch description, which
 * is registered here (no local ranks, no node info), and its committed
 * data, kept here and handed to the server when it asks for a rank of
 * that job through direct_modex.  Everything the server passes is copied
 * during the upcall (RDPMIX_CONNECT_DATA is valid only then).
 */

static daemon_t *const dm = &rdp_run_dmn;

typedef struct xreq {
    rdp_list_t link;
    rdp_xconn_req_t m; /* what goes to rdpmix-run */
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} xreq_t;

/* Another launcher's job we connected to, and its committed data. */
typedef struct foreign {
    rdp_list_t link;
    pmix_nspace_t nspace;
    void *data; /* bundles, one after the other */
    size_t ndata;
} foreign_t;

static rdp_list_t pending  = RDP_LIST_INIT(pending);
static uint32_t next_reqid = 1;
/* foreigns is read by direct_modex on the server's thread */
static pthread_mutex_t foreign_lock = PTHREAD_MUTEX_INITIALIZER;
static rdp_list_t foreigns          = RDP_LIST_INIT(foreigns);

static void xreq_free(xreq_t *r)
{
    rdp_list_del(&r->link);
    rdp_xconn_req_cleanup(&r->m);
    rdp_free(r);
}

static void xreq_answer(xreq_t *r, pmix_status_t status)
{
    if (r->cbfunc != NULL) {
        r->cbfunc(status, r->cbdata);
    }
    xreq_free(r);
}

static void xreq_send(void *arg)
{
    xreq_t *r = arg;
    rdp_buf_t buf;

    if (dm->chan == NULL || !rdp_run_chan_is_open(dm->chan)
        || dm->lost_launcher) {
        xreq_answer(r, PMIX_ERR_UNREACH);
        return;
    }
    r->m.reqid = next_reqid++;
    rdp_buf_init(&buf);
    if (rdp_xconn_req_pack(&buf, &r->m) != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        xreq_answer(r, PMIX_ERR_NOMEM);
        return;
    }
    rdp_run_dmn_send(RDP_CTL_XCONN, &buf);
    rdp_buf_cleanup(&buf);
    rdp_free(r->m.data); /* sent: not needed any more */
    r->m.data  = NULL;
    r->m.ndata = 0;
    rdp_list_push_back(&pending, &r->link);
}

/* Copy what the request needs out of the server's arguments. */
static pmix_status_t read_request(xreq_t *r, uint8_t op,
                                  const pmix_proc_t *procs, size_t nprocs,
                                  const pmix_info_t *info, size_t ninfo)
{
    r->m.op     = op;
    r->m.procs  = rdp_malloc((nprocs + 1) * sizeof(*procs));
    r->m.nprocs = nprocs;
    if (r->m.procs == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(r->m.procs, procs, nprocs * sizeof(*procs));
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];

        if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_ID)
            && in->value.type == PMIX_STRING && r->m.id == NULL) {
            r->m.id = rdp_strdup(in->value.data.string);
            if (r->m.id == NULL) {
                return PMIX_ERR_NOMEM;
            }
        } else if (PMIX_CHECK_KEY(in, PMIX_LOCAL_COLLECTIVE_STATUS)
                   && in->value.type == PMIX_STATUS) {
            r->m.lstatus = in->value.data.status;
        } else if (PMIX_CHECK_KEY(in, RDPMIX_CONNECT_DATA)
                   && in->value.type == PMIX_BYTE_OBJECT
                   && in->value.data.bo.size > 0 && r->m.data == NULL) {
            r->m.data = rdp_malloc(in->value.data.bo.size);
            if (r->m.data == NULL) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(r->m.data, in->value.data.bo.bytes, in->value.data.bo.size);
            r->m.ndata = in->value.data.bo.size;
        }
    }
    return PMIX_SUCCESS;
}

static bool names_other_job(const pmix_proc_t procs[], size_t nprocs)
{
    for (size_t i = 0; i < nprocs; i++) {
        if (!PMIX_CHECK_NSPACE(procs[i].nspace, dm->nspace)) {
            return true;
        }
    }
    return false;
}

/* connect and disconnect: any thread (the server's) */
static pmix_status_t post_request(uint8_t op, const pmix_proc_t procs[],
                                  size_t nprocs, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
    xreq_t *r;
    pmix_status_t status;

    if (!names_other_job(procs, nprocs)) {
        /* our job alone: the server (one node) or the engine did it all */
        return PMIX_OPERATION_SUCCEEDED;
    }
    r = rdp_calloc(1, sizeof(*r));
    if (r == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_list_init(&r->link);
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
    status    = read_request(r, op, procs, nprocs, info, ninfo);
    if (status == PMIX_SUCCESS) {
        status = rdp_loop_post(dm->loop, xreq_send, r);
    }
    if (status != PMIX_SUCCESS) {
        xreq_free(r);
    }
    return status;
}

pmix_status_t rdp_run_dmn_connect(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return post_request(RDP_XCONN_CONNECT, procs, nprocs, info, ninfo, cbfunc,
                        cbdata);
}

pmix_status_t rdp_run_dmn_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return post_request(RDP_XCONN_DISCONNECT, procs, nprocs, info, ninfo,
                        cbfunc, cbdata);
}

/* ---- the other job ---- */

static foreign_t *foreign_find(const char *nspace)
{
    foreign_t *f;

    rdp_list_for_each(f, &foreigns, link) {
        if (PMIX_CHECK_NSPACE(f->nspace, nspace)) {
            return f;
        }
    }
    return NULL;
}

static pmix_status_t register_foreign(const rdp_ctl_launch_t *launch)
{
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    pmix_status_t status;

    status = rdp_run_jobinfo_build_foreign(launch, &info, &ninfo);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    status = rdp_run_dmn_register_nspace(launch->nspace, 0, info, ninfo);
    if (status != PMIX_ERR_TIMEOUT) { /* else still in use: leaked */
        PMIX_INFO_FREE(info, ninfo);
    }
    return status;
}

/* Register the other job once (later connects find it registered) and
 * keep its latest committed data. */
static pmix_status_t take_foreign(const rdp_xconn_done_t *m,
                                  const pmix_proc_t *procs, size_t nprocs)
{
    rdp_ctl_launch_t launch;
    foreign_t *f;
    void *data = NULL;
    bool named = false;
    pmix_status_t status;

    status = rdp_ctl_launch_unpack(m->launch, m->nlaunch, &launch);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(RUN, "malformed launch description of another job");
        return status;
    }
    for (size_t i = 0; i < nprocs; i++) {
        named = named || PMIX_CHECK_NSPACE(procs[i].nspace, launch.nspace);
    }
    if (!named || PMIX_CHECK_NSPACE(launch.nspace, dm->nspace)) {
        rdp_log_error(RUN,
                      "the other launcher described job %s, which the "
                      "connect does not name",
                      launch.nspace);
        rdp_ctl_launch_cleanup(&launch);
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&foreign_lock);
    f = foreign_find(launch.nspace);
    pthread_mutex_unlock(&foreign_lock);
    if (f == NULL) {
        f      = rdp_calloc(1, sizeof(*f));
        status = f != NULL ? register_foreign(&launch) : PMIX_ERR_NOMEM;
        if (status != PMIX_SUCCESS) {
            rdp_free(f);
            rdp_ctl_launch_cleanup(&launch);
            return status;
        }
        PMIX_LOAD_NSPACE(f->nspace, launch.nspace);
        pthread_mutex_lock(&foreign_lock);
        rdp_list_push_back(&foreigns, &f->link);
        pthread_mutex_unlock(&foreign_lock);
    }
    rdp_ctl_launch_cleanup(&launch);
    if (m->ndata > 0 && (data = rdp_malloc(m->ndata)) == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (data != NULL) {
        memcpy(data, m->data, m->ndata);
    }
    pthread_mutex_lock(&foreign_lock);
    rdp_free(f->data);
    f->data  = data;
    f->ndata = m->ndata;
    pthread_mutex_unlock(&foreign_lock);
    return PMIX_SUCCESS;
}

void rdp_run_dmn_xconn_done(const void *payload, size_t len)
{
    rdp_xconn_done_t m;
    xreq_t *r;
    pmix_status_t status;

    if (rdp_xconn_done_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed connect answer");
        return;
    }
    rdp_list_for_each(r, &pending, link) {
        if (r->m.reqid == m.reqid) {
            break;
        }
    }
    if (&r->link == &pending) {
        rdp_log_warn(RUN, "connect answer %u for no request", m.reqid);
        return;
    }
    status = m.status;
    if (status == PMIX_SUCCESS && r->m.op == RDP_XCONN_CONNECT) {
        status = m.nlaunch > 0 ? take_foreign(&m, r->m.procs, r->m.nprocs)
                               : PMIX_ERR_BAD_PARAM;
    }
    xreq_answer(r, status);
}

void rdp_run_dmn_xconn_fail_all(pmix_status_t why)
{
    while (!rdp_list_is_empty(&pending)) {
        xreq_answer(rdp_container_of(pending.next, xreq_t, link), why);
    }
}

void rdp_run_dmn_xconn_cleanup(void)
{
    rdp_run_dmn_xconn_fail_all(PMIX_ERR_LOST_CONNECTION);
    pthread_mutex_lock(&foreign_lock);
    while (!rdp_list_is_empty(&foreigns)) {
        foreign_t *f = rdp_container_of(foreigns.next, foreign_t, link);

        rdp_list_del(&f->link);
        rdp_free(f->data);
        rdp_free(f);
    }
    pthread_mutex_unlock(&foreign_lock);
}

/* ---- direct modex: the other job's data ---- */

static void free_copy(void *cbdata)
{
    rdp_free(cbdata);
}

/* Any thread (the server's).  Only ranks of a connected job of another
 * launcher reach here (the engine serves our own job's). */
pmix_status_t rdp_run_dmn_direct_modex(const pmix_proc_t *proc,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    foreign_t *f;
    void *copy = NULL;
    size_t n   = 0;

    (void)info;
    (void)ninfo;
    pthread_mutex_lock(&foreign_lock);
    f = foreign_find(proc->nspace);
    if (f != NULL && f->ndata > 0) {
        n    = f->ndata;
        copy = rdp_malloc(n);
        if (copy != NULL) {
            memcpy(copy, f->data, n);
        }
    }
    pthread_mutex_unlock(&foreign_lock);
    if (copy == NULL) {
        return n == 0 ? PMIX_ERR_NOT_FOUND : PMIX_ERR_NOMEM;
    }
    /* every rank of that job at once: the server keeps what it finds */
    cbfunc(PMIX_SUCCESS, copy, n, cbdata, free_copy, copy);
    return PMIX_SUCCESS;
}
