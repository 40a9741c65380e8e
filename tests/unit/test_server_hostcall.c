/* test_server_hostcall.c - the marker that catches a call into the host
 * from inside one of the host's callbacks */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- stderr, where the server's warnings go ---- */

static FILE *captured;
static int saved_stderr = -1;

static void capture_stderr(void)
{
    fflush(stderr);
    captured = tmpfile(); /* already unlinked */
    assert_non_null(captured);
    saved_stderr = dup(STDERR_FILENO);
    assert_true(saved_stderr >= 0);
    assert_true(dup2(fileno(captured), STDERR_FILENO) >= 0);
}

/* Restore stderr; returns how many captured lines contain @a text. */
static int captured_lines_with(const char *text)
{
    char line[1024];
    int n = 0;

    fflush(stderr);
    assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
    close(saved_stderr);
    saved_stderr = -1;
    rewind(captured);
    while (fgets(line, sizeof(line), captured) != NULL) {
        fputs(line, stderr); /* keep it visible in the test's log */
        if (strstr(line, text) != NULL) {
            n++;
        }
    }
    fclose(captured);
    captured = NULL;
    return n;
}

/* ---- a fake host: its functions answer from inside the upcall ---- */

static int released;
static char host_blob[] = "the host's bytes";
static pmix_info_t host_info;
static pmix_server_module_t module; /* what the server calls (wrapped) */

static void host_release(void *cbdata)
{
    assert_ptr_equal(cbdata, host_blob);
    released++;
}

static void host_release_info(void *cbdata)
{
    assert_ptr_equal(cbdata, &host_info);
    released++;
}

static pmix_status_t host_direct_modex(const pmix_proc_t *proc,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc;
    (void)info;
    (void)ninfo;
    cbfunc(PMIX_SUCCESS, host_blob, sizeof(host_blob), cbdata, host_release,
           host_blob);
    return PMIX_SUCCESS;
}

static pmix_status_t host_fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   char *data, size_t ndata,
                                   pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    (void)data;
    (void)ndata;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_status_t
host_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                 size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)requestor;
    (void)targets;
    (void)ntargets;
    (void)directives;
    (void)ndirs;
    cbfunc(PMIX_SUCCESS, &host_info, 1, cbdata, host_release_info, &host_info);
    return PMIX_SUCCESS;
}

/* ---- callbacks written the wrong way ---- */

/* A direct-modex callback that gives the host's buffer back at once, as
 * dmdx_cb did before the fix: it calls its release_fn parameter directly */
static void releasing_dmodex_cb(pmix_status_t status, const char *data,
                                size_t ndata, void *cbdata,
                                pmix_release_cbfunc_t release_fn,
                                void *release_cbdata)
{
    rdp_srv_host_reply_t reply;

    memset(&reply, 0, sizeof(reply));
    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_DMODEX, &reply, release_fn,
                                  release_cbdata);
    (void)status;
    (void)data;
    (void)ndata;
    (void)cbdata;
    release_fn(release_cbdata);
    RDP_SRV_HOST_CB_LEAVE();
}

/* The same through the server's helper, without the guard */
static void helper_releasing_dmodex_cb(pmix_status_t status, const char *data,
                                       size_t ndata, void *cbdata,
                                       pmix_release_cbfunc_t release_fn,
                                       void *release_cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_GROUP_FENCE);
    rdp_srv_host_reply_t reply;

    (void)cbdata;
    rdp_srv_host_reply_keep(&reply, status, data, ndata, release_fn,
                            release_cbdata);
    rdp_srv_host_reply_release(&reply);
    RDP_SRV_HOST_CB_LEAVE();
}

/* An info callback that makes another upcall */
static void upcalling_info_cb(pmix_status_t status, pmix_info_t *info,
                              size_t ninfo, void *cbdata,
                              pmix_release_cbfunc_t release_fn,
                              void *release_cbdata)
{
    RDP_SRV_HOST_CB_ENTER(RDP_SRV_CB_INFO);
    (void)status;
    (void)info;
    (void)ninfo;
    (void)cbdata;
    (void)module.fence_nb(NULL, 0, NULL, 0, NULL, 0, NULL, NULL);
    RDP_SRV_HOST_CB_LEAVE();
    release_fn(release_cbdata); /* after leaving: not counted */
}

static int setup(void **state)
{
    pmix_server_module_t host;

    (void)state;
    setenv("RDPMIX_LOG_LEVEL", "warn", 1);
    unsetenv("RDPMIX_LOG_FILE");
    rdp_log_init();
    memset(&host, 0, sizeof(host));
    host.direct_modex = host_direct_modex;
    host.fence_nb     = host_fence_nb;
    host.job_control  = host_job_control;
    rdp_srv_host_module_wrap(&host, &module);
    PMIX_INFO_LOAD(&host_info, "fake.host", "yes", PMIX_STRING);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    PMIX_INFO_DESTRUCT(&host_info);
    return 0;
}

static void wrapping_keeps_absent_entries_absent(void **state)
{
    (void)state;
    assert_non_null(module.direct_modex);
    assert_ptr_not_equal(module.direct_modex, host_direct_modex);
    assert_non_null(module.job_control);
    assert_null(module.query);
    assert_null(module.client_connected);
    assert_null(module.group);
}

static void calls_outside_callbacks_are_not_counted(void **state)
{
    rdp_srv_host_reply_t reply;
    uint64_t before = rdp_srv_host_cb_violations();

    (void)state;
    released = 0;
    assert_int_equal(module.fence_nb(NULL, 0, NULL, 0, NULL, 0, NULL, NULL),
                     PMIX_ERR_NOT_SUPPORTED);
    rdp_srv_host_reply_keep(&reply, PMIX_SUCCESS, host_blob, sizeof(host_blob),
                            host_release, host_blob);
    rdp_srv_host_reply_release(&reply);
    assert_int_equal(released, 1);
    assert_int_equal(rdp_srv_host_cb_violations(), before);
}

static void the_marker_nests_and_restores(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();
    rdp_srv_host_cb_t outer, inner;

    (void)state;
    outer = rdp_srv_host_cb_enter(RDP_SRV_CB_FENCE);
    assert_int_equal(outer, RDP_SRV_CB_NONE);
    inner = rdp_srv_host_cb_enter(RDP_SRV_CB_OP);
    assert_int_equal(inner, RDP_SRV_CB_FENCE);
    rdp_srv_host_cb_leave(inner);
    rdp_srv_host_cb_leave(outer);
    rdp_srv_host_call_check(RDP_SRV_HOSTFN_RELEASE);
    assert_int_equal(rdp_srv_host_cb_violations(), before);
}

static void release_from_inside_a_callback_warns_once_and_counts(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();

    (void)state;
    released = 0;
    capture_stderr();
    assert_int_equal(
        module.direct_modex(NULL, NULL, 0, releasing_dmodex_cb, NULL),
        PMIX_SUCCESS);
    assert_int_equal(
        module.direct_modex(NULL, NULL, 0, releasing_dmodex_cb, NULL),
        PMIX_SUCCESS);
    assert_int_equal(captured_lines_with("called the host's release_fn from "
                                         "inside its dmodex callback (hosts "
                                         "hold their locks there)"),
                     1);
    assert_int_equal(released, 2);
    assert_int_equal(rdp_srv_host_cb_violations(), before + 2);
}

static void the_release_helper_checks_too(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();

    (void)state;
    released = 0;
    capture_stderr();
    assert_int_equal(
        module.direct_modex(NULL, NULL, 0, helper_releasing_dmodex_cb, NULL),
        PMIX_SUCCESS);
    assert_int_equal(captured_lines_with("called the host's release_fn from "
                                         "inside its group fence callback"),
                     1);
    assert_int_equal(released, 1);
    assert_int_equal(rdp_srv_host_cb_violations(), before + 1);
}

static void an_upcall_from_inside_a_callback_is_caught(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();

    (void)state;
    released = 0;
    capture_stderr();
    assert_int_equal(
        module.job_control(NULL, NULL, 0, NULL, 0, upcalling_info_cb, NULL),
        PMIX_SUCCESS);
    assert_int_equal(captured_lines_with("called the host's fence_nb from "
                                         "inside its info callback"),
                     1);
    assert_int_equal(released, 1);
    assert_int_equal(rdp_srv_host_cb_violations(), before + 1);
}

/* The server's own info callback keeps the host's reply for the loop: no
 * release inside it (without a loop the operation is dropped, unreleased) */
static void the_servers_info_callback_never_releases_inline(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();
    rdp_srv_hostop_t *op;

    (void)state;
    released = 0;
    op       = rdp_srv_hostop_create(NULL, RDP_CMD_INVALID, 0);
    assert_non_null(op);
    assert_int_equal(
        module.job_control(NULL, NULL, 0, NULL, 0, rdp_srv_hostop_info_cb, op),
        PMIX_SUCCESS);
    assert_int_equal(released, 0);
    assert_int_equal(rdp_srv_host_cb_violations(), before);
}

/* An operation whose own data keeps the host's answer, as a query does:
 * free_fn gives it back, drop_fn forgets it */
typedef struct {
    rdp_srv_host_reply_t host;
    int dropped;
} kept_answer_t;

static void kept_answer_free(void *arg)
{
    kept_answer_t *ka = arg;

    rdp_srv_host_reply_release(&ka->host);
}

static void kept_answer_drop(void *arg)
{
    kept_answer_t *ka = arg;

    rdp_srv_host_reply_drop(&ka->host);
    ka->dropped++;
}

/* Keeps the answer in the operation's data (query.c's host_answer_cb). */
static void keeping_info_cb(pmix_status_t status, pmix_info_t *info,
                            size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn,
                            void *release_cbdata)
{
    rdp_srv_hostop_t *op = cbdata;
    kept_answer_t *ka    = op->ctx;

    RDP_SRV_HOST_CB_ENTER_RELEASE(RDP_SRV_CB_QUERY, &ka->host, release_fn,
                                  release_cbdata);
    rdp_srv_host_reply_keep(&ka->host, status, info, ninfo, release_fn,
                            release_cbdata);
    rdp_srv_hostop_complete(op, status); /* no loop: dropped at once */
    RDP_SRV_HOST_CB_LEAVE();
}

/* Without a loop (the server is gone) an operation answered from inside
 * the host's callback is freed there: what its data keeps of the host's
 * is dropped first, not released under the host's lock */
static void an_answer_after_shutdown_is_dropped_not_released(void **state)
{
    uint64_t before = rdp_srv_host_cb_violations();
    kept_answer_t ka;
    rdp_srv_hostop_t *op;

    (void)state;
    memset(&ka, 0, sizeof(ka));
    released = 0;
    op       = rdp_srv_hostop_create(NULL, RDP_CMD_INVALID, 0);
    assert_non_null(op);
    op->ctx     = &ka;
    op->free_fn = kept_answer_free;
    op->drop_fn = kept_answer_drop;
    assert_int_equal(
        module.job_control(NULL, NULL, 0, NULL, 0, keeping_info_cb, op),
        PMIX_SUCCESS);
    assert_int_equal(ka.dropped, 1);
    assert_int_equal(released, 0);
    assert_int_equal(rdp_srv_host_cb_violations(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrapping_keeps_absent_entries_absent),
        cmocka_unit_test(calls_outside_callbacks_are_not_counted),
        cmocka_unit_test(the_marker_nests_and_restores),
        cmocka_unit_test(release_from_inside_a_callback_warns_once_and_counts),
        cmocka_unit_test(the_release_helper_checks_too),
        cmocka_unit_test(an_upcall_from_inside_a_callback_is_caught),
        cmocka_unit_test(the_servers_info_callback_never_releases_inline),
        cmocka_unit_test(an_answer_after_shutdown_is_dropped_not_released),
    };

    return cmocka_run_group_tests_name("server_hostcall", tests, setup,
                                       teardown);
}
