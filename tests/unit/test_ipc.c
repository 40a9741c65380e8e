/* test_ipc.c - UNIX-socket transport: framing, echo, hostile frames */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/ipc/ipc.h"
#include "core/util/alloc.h"

typedef struct {
    rdp_loop_t *loop;
    rdp_ipc_listener_t *listener;
    char path[108];
    char dir[64];
    rdp_wait_t closed;
    pmix_status_t close_why;
    int accepted;
    uid_t peer_uid;
} srv_t;

static void echo_msg(rdp_ipc_conn_t *conn, const rdp_msg_hdr_t *hdr,
                     const void *payload, size_t len, void *arg)
{
    rdp_ipc_send_copy(conn, (uint16_t)(hdr->cmd + 1), hdr->tag, payload,
                      len);
}

static void on_close(rdp_ipc_conn_t *conn, pmix_status_t why, void *arg)
{
    srv_t *srv     = arg;
    srv->close_why = why;
    rdp_wait_signal(&srv->closed, why);
}

static void on_accept(rdp_ipc_conn_t *conn, const rdp_ipc_cred_t *cred,
                      void *arg)
{
    srv_t *srv = arg;

    srv->accepted++;
    srv->peer_uid = cred->uid;
    rdp_ipc_conn_start(conn, echo_msg, on_close, srv);
}


typedef struct {
    srv_t *srv;
    rdp_wait_t done;
    pmix_status_t status;
} listen_req_t;

static void do_listen(void *arg)
{
    listen_req_t *req = arg;

    req->status = rdp_ipc_listen(req->srv->loop, req->srv->path, on_accept,
                                 req->srv, &req->srv->listener);
    rdp_wait_signal(&req->done, req->status);
}

static void do_unlisten(void *arg)
{
    listen_req_t *req = arg;

    rdp_ipc_listener_destroy(req->srv->listener);
    rdp_wait_signal(&req->done, PMIX_SUCCESS);
}

static void run_on_loop(srv_t *srv, rdp_loop_fn_t fn)
{
    listen_req_t req = {srv};

    rdp_wait_init(&req.done);
    assert_int_equal(rdp_loop_post(srv->loop, fn, &req), PMIX_SUCCESS);
    assert_int_equal(rdp_wait_wait(&req.done), PMIX_SUCCESS);
    rdp_wait_cleanup(&req.done);
}

static int setup(void **state)
{
    srv_t *srv = calloc(1, sizeof(*srv));

    snprintf(srv->dir, sizeof(srv->dir), "/tmp/rdp-ipc-XXXXXX");
    assert_non_null(mkdtemp(srv->dir));
    snprintf(srv->path, sizeof(srv->path), "%s/sock", srv->dir);
    rdp_wait_init(&srv->closed);
    assert_int_equal(rdp_loop_create(&srv->loop), PMIX_SUCCESS);
    assert_int_equal(rdp_loop_start_thread(srv->loop), PMIX_SUCCESS);
    run_on_loop(srv, do_listen);
    *state = srv;
    return 0;
}

static int teardown(void **state)
{
    srv_t *srv = *state;

    run_on_loop(srv, do_unlisten);
    rdp_loop_destroy(srv->loop);
    rdp_wait_cleanup(&srv->closed);
    rmdir(srv->dir);
    free(srv);
    return 0;
}

static void close_client(srv_t *srv, rdp_ipc_conn_t *conn)
{
    rdp_ipc_conn_close(conn, PMIX_SUCCESS);
}

static void echo_roundtrip(srv_t *srv, rdp_ipc_conn_t *conn, size_t len,
                           uint32_t tag)
{
    rdp_buf_t buf;
    rdp_msg_hdr_t hdr;
    void *reply;
    uint8_t *data = malloc(len + 1);

    for (size_t i = 0; i < len; i++) {
        data[i] = (uint8_t)(i * 31 + tag);
    }
    rdp_buf_init(&buf);
    assert_int_equal(rdp_buf_append(&buf, data, len), PMIX_SUCCESS);
    assert_int_equal(rdp_ipc_sync_request(conn, 40, tag, &buf, &hdr, &reply,
                                          30.0),
                     PMIX_SUCCESS);
    assert_int_equal(hdr.cmd, 41);
    assert_int_equal(hdr.tag, tag);
    assert_int_equal(hdr.length, len);
    assert_memory_equal(reply, data, len);
    free(reply);
    free(data);
    rdp_buf_cleanup(&buf);
}

static void messages_of_every_size_echo_back_intact(void **state)
{
    srv_t *srv = *state;
    rdp_ipc_conn_t *conn;

    assert_int_equal(rdp_ipc_connect(srv->loop, srv->path, &conn),
                     PMIX_SUCCESS);
    echo_roundtrip(srv, conn, 0, 1);
    echo_roundtrip(srv, conn, 1, 2);
    echo_roundtrip(srv, conn, 65536 - 16, 3);
    echo_roundtrip(srv, conn, 65536, 4);
    echo_roundtrip(srv, conn, 8u << 20, 5);
    assert_int_equal(srv->peer_uid, getuid());
    close_client(srv, conn);
    assert_int_equal(rdp_wait_wait(&srv->closed), PMIX_ERR_LOST_CONNECTION);
}

static int raw_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd                = socket(AF_UNIX, SOCK_STREAM, 0);

    strcpy(sa.sun_path, path);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void a_bad_magic_closes_only_that_connection(void **state)
{
    srv_t *srv = *state;
    uint8_t junk[RDP_MSG_HDR_LEN];
    rdp_ipc_conn_t *good;
    int fd;

    assert_int_equal(rdp_ipc_connect(srv->loop, srv->path, &good),
                     PMIX_SUCCESS);
    echo_roundtrip(srv, good, 10, 9);
    fd = raw_connect(srv->path);
    memset(junk, 0xa5, sizeof(junk));
    assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
    assert_int_equal(rdp_wait_wait(&srv->closed), PMIX_ERR_UNPACK_FAILURE);
    /* the server keeps serving the other connection */
    echo_roundtrip(srv, good, 1000, 10);
    close(fd);
    rdp_wait_cleanup(&srv->closed);
    rdp_wait_init(&srv->closed);
    close_client(srv, good);
    assert_int_equal(rdp_wait_wait(&srv->closed), PMIX_ERR_LOST_CONNECTION);
}

static void an_oversized_length_closes_the_connection(void **state)
{
    srv_t *srv        = *state;
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, 40, 1, 0xfffffff0u};
    uint8_t raw[RDP_MSG_HDR_LEN];
    int fd;

    setenv("RDPMIX_IPC_MAX_MSG", "1048576", 1);
    fd = raw_connect(srv->path);
    rdp_msg_hdr_encode(&hdr, raw);
    assert_int_equal(write(fd, raw, sizeof(raw)), sizeof(raw));
    assert_int_equal(rdp_wait_wait(&srv->closed), PMIX_ERR_BAD_PARAM);
    unsetenv("RDPMIX_IPC_MAX_MSG");
    close(fd);
}

static void a_truncated_frame_then_hangup_is_a_lost_connection(void **state)
{
    srv_t *srv        = *state;
    rdp_msg_hdr_t hdr = {RDP_MSG_MAGIC, RDP_MSG_VERSION, 40, 1, 100};
    uint8_t raw[RDP_MSG_HDR_LEN + 10] = {0};
    int fd;

    fd = raw_connect(srv->path);
    rdp_msg_hdr_encode(&hdr, raw);
    assert_int_equal(write(fd, raw, sizeof(raw)), sizeof(raw));
    close(fd);
    assert_int_equal(rdp_wait_wait(&srv->closed), PMIX_ERR_LOST_CONNECTION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            messages_of_every_size_echo_back_intact, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_bad_magic_closes_only_that_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(
            an_oversized_length_closes_the_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_truncated_frame_then_hangup_is_a_lost_connection, setup,
            teardown),
    };
    return cmocka_run_group_tests_name("ipc", tests, NULL, NULL);
}
