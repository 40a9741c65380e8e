/* test_run_ctl.c - control channel payloads of rdpmix-run <-> rdpmixd */
#include "config.h"
#include "run/ctl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint32_t ranks0[] = {0, 2, 4};
static uint32_t ranks1[] = {1, 3};
static char *argv_ok[]   = {"/bin/prog", "-v", "x y", NULL};
static char *env_ok[]    = {"A=1", "B=", "JSM_JSRUN_PORT=rdpmix", NULL};

static void fill_launch(rdp_ctl_launch_t *m, rdp_ctl_node_t nodes[2])
{
    memset(m, 0, sizeof(*m));
    memset(nodes, 0, 2 * sizeof(*nodes));
    nodes[0].name   = "node-a";
    nodes[0].nranks = 3;
    nodes[0].ranks  = ranks0;
    nodes[1].name   = "node-b";
    nodes[1].nranks = 2;
    nodes[1].ranks  = ranks1;
    m->nspace       = "rdpmix.1.abcd";
    m->job_size     = 5;
    m->nnodes       = 2;
    m->nodes        = nodes;
    m->mapby        = "by-slot";
    m->rankby       = "by-slot";
    m->argv         = argv_ok;
    m->env          = env_ok;
    m->cwd          = "/tmp";
    m->flags        = RDP_CTL_FLAG_TAG_OUTPUT;
}

static void launch_roundtrip_keeps_every_field(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t in, out;
    rdp_buf_t buf;

    fill_launch(&in, nodes);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_string_equal(out.nspace, in.nspace);
    assert_int_equal(out.job_size, 5);
    assert_int_equal(out.nnodes, 2);
    assert_string_equal(out.nodes[1].name, "node-b");
    assert_int_equal(out.nodes[0].nranks, 3);
    assert_int_equal(out.nodes[0].ranks[2], 4);
    assert_int_equal(out.nodes[1].ranks[1], 3);
    assert_string_equal(out.mapby, "by-slot");
    assert_string_equal(out.argv[2], "x y");
    assert_null(out.argv[3]);
    assert_string_equal(out.env[2], "JSM_JSRUN_PORT=rdpmix");
    assert_null(out.env[3]);
    assert_string_equal(out.cwd, "/tmp");
    assert_int_equal(out.flags, RDP_CTL_FLAG_TAG_OUTPUT);
    assert_int_equal(out.nnet, 0);
    rdp_ctl_launch_cleanup(&out);
    rdp_buf_cleanup(&buf);
}

/* The job's network setup (pnet) travels with the launch, intact */
static void launch_carries_the_network_setup(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t in, out;
    pmix_envar_t ev = {"KEY", "0123-4567", ':'};
    pmix_info_t net[2];
    rdp_buf_t buf;

    fill_launch(&in, nodes);
    PMIX_INFO_LOAD(&net[0], PMIX_SET_ENVAR, &ev, PMIX_ENVAR);
    PMIX_INFO_LOAD(&net[1], PMIX_CREDENTIAL, "0123-4567", PMIX_STRING);
    in.net  = net;
    in.nnet = 2;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.nnet, 2);
    assert_true(PMIX_CHECK_KEY(&out.net[0], PMIX_SET_ENVAR));
    assert_string_equal(out.net[0].value.data.envar.envar, "KEY");
    assert_string_equal(out.net[0].value.data.envar.value, "0123-4567");
    assert_string_equal(out.net[1].value.data.string, "0123-4567");
    rdp_ctl_launch_cleanup(&out);
    /* cut anywhere inside the setup: refused */
    for (size_t cut = 1; cut < 40; cut++) {
        assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, buf.size - cut,
                                                   &out),
                             PMIX_SUCCESS);
    }
    rdp_buf_cleanup(&buf);
    PMIX_INFO_DESTRUCT(&net[0]);
    PMIX_INFO_DESTRUCT(&net[1]);
}

static pmix_status_t launch_status(rdp_ctl_launch_t *m)
{
    rdp_ctl_launch_t out;
    rdp_buf_t buf;
    pmix_status_t status;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, m), PMIX_SUCCESS);
    status = rdp_ctl_launch_unpack(buf.data, buf.size, &out);
    if (status == PMIX_SUCCESS) {
        rdp_ctl_launch_cleanup(&out);
    }
    rdp_buf_cleanup(&buf);
    return status;
}

static void launch_with_a_bad_map_is_rejected(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t m;
    uint32_t dup[] = {0, 1};
    uint32_t big[] = {1, 7};
    char *noargv[] = {NULL};
    char *badenv[] = {"NOEQUALS", NULL};

    fill_launch(&m, nodes);
    m.job_size = 6; /* rank 5 on no node */
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    nodes[1].ranks = dup; /* rank 0 twice */
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    nodes[1].ranks = big; /* rank 7 >= job size */
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    nodes[1].name = "node-a"; /* two nodes of one name */
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    m.argv = noargv;
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    m.env = badenv;
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes);
    m.job_size      = 0;
    nodes[0].nranks = 0;
    nodes[1].nranks = 0;
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);
}

/* Every proper prefix of a valid payload fails cleanly (ASan sees leaks
 * and over-reads), and so does the payload with a byte appended. */
static void truncated_payloads_fail_cleanly(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t in, out;
    rdp_ctl_hello_t hello = {.node_id = 3, .pid = 42};
    rdp_ctl_hello_t hout;
    rdp_ctl_report_t rep = {.rank   = 1,
                            .pid    = 9,
                            .how    = RDP_CTL_ABORTED,
                            .value  = 5,
                            .detail = "bye"};
    rdp_ctl_report_t rout;
    rdp_buf_t buf;

    fill_launch(&in, nodes);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &in), PMIX_SUCCESS);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, len, &out),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_pack_u8(&buf, 0), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    memset(hello.secret, 0xab, sizeof(hello.secret));
    hello.node_name = "n0";
    hello.tmpdir    = "/tmp/rdpmixd.x";
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_hello_pack(&buf, &hello), PMIX_SUCCESS);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_hello_unpack(buf.data, len, &hout),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_ctl_hello_unpack(buf.data, buf.size, &hout),
                     PMIX_SUCCESS);
    assert_memory_equal(hout.secret, hello.secret, sizeof(hello.secret));
    assert_int_equal(hout.node_id, 3);
    assert_int_equal(hout.pid, 42);
    assert_string_equal(hout.node_name, "n0");
    assert_string_equal(hout.tmpdir, "/tmp/rdpmixd.x");
    rdp_ctl_hello_cleanup(&hout);
    rdp_buf_cleanup(&buf);

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_report_pack(&buf, &rep), PMIX_SUCCESS);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_report_unpack(buf.data, len, &rout),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_ctl_report_unpack(buf.data, buf.size, &rout),
                     PMIX_SUCCESS);
    assert_int_equal(rout.how, RDP_CTL_ABORTED);
    assert_int_equal(rout.value, 5);
    assert_string_equal(rout.detail, "bye");
    rdp_ctl_report_cleanup(&rout);
    rdp_buf_cleanup(&buf);
}

static void hello_with_a_short_secret_is_rejected(void **state)
{
    rdp_ctl_hello_t out;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_bytes(&buf, "short", 5), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&buf, 0), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&buf, 1), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, "n0"), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(&buf, NULL), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_bytes(&buf, NULL, 0), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_hello_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

static void io_roundtrip_is_zero_copy_and_checks_the_channel(void **state)
{
    rdp_ctl_io_t m;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_io_pack(&buf, 7, RDP_CTL_STDERR, "abc", 3),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_io_unpack(buf.data, buf.size, &m), PMIX_SUCCESS);
    assert_int_equal(m.rank, 7);
    assert_int_equal(m.channel, RDP_CTL_STDERR);
    assert_int_equal(m.len, 3);
    assert_memory_equal(m.data, "abc", 3);
    assert_true((const uint8_t *)m.data > buf.data
                && (const uint8_t *)m.data < buf.data + buf.size);
    rdp_buf_cleanup(&buf);

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_io_pack(&buf, 7, 3, "abc", 3), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_io_unpack(buf.data, buf.size, &m),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    /* end of file: an empty chunk */
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_io_pack(&buf, 1, RDP_CTL_STDOUT, NULL, 0),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_io_unpack(buf.data, buf.size, &m), PMIX_SUCCESS);
    assert_int_equal(m.len, 0);
    rdp_buf_cleanup(&buf);
}

static void launched_carries_the_pids(void **state)
{
    uint32_t ranks[] = {4, 5}, pids[] = {100, 101};
    uint32_t *r = NULL, *p = NULL, n = 0;
    pmix_status_t st;
    char *error = NULL;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(
        rdp_ctl_launched_pack(&buf, PMIX_SUCCESS, NULL, ranks, pids, 2),
        PMIX_SUCCESS);
    assert_int_equal(
        rdp_ctl_launched_unpack(buf.data, buf.size, &st, &error, &r, &p, &n),
        PMIX_SUCCESS);
    assert_int_equal(st, PMIX_SUCCESS);
    assert_null(error);
    assert_int_equal(n, 2);
    assert_int_equal(r[1], 5);
    assert_int_equal(p[1], 101);
    free(r);
    free(p);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(
            rdp_ctl_launched_unpack(buf.data, len, &st, &error, &r, &p, &n),
            PMIX_SUCCESS);
    }
    rdp_buf_cleanup(&buf);

    rdp_buf_init(&buf);
    assert_int_equal(
        rdp_ctl_launched_pack(&buf, PMIX_ERR_NOMEM, "oops", NULL, NULL, 0),
        PMIX_SUCCESS);
    assert_int_equal(
        rdp_ctl_launched_unpack(buf.data, buf.size, &st, &error, &r, &p, &n),
        PMIX_SUCCESS);
    assert_int_equal(st, PMIX_ERR_NOMEM);
    assert_string_equal(error, "oops");
    assert_int_equal(n, 0);
    free(error);
    rdp_buf_cleanup(&buf);
}

static void kill_orders_check_mode_and_signal(void **state)
{
    rdp_ctl_kill_t in = {.mode = RDP_CTL_KILL_SIGNAL, .signo = 15}, out;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_kill_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_kill_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.mode, RDP_CTL_KILL_SIGNAL);
    assert_int_equal(out.signo, 15);
    rdp_buf_cleanup(&buf);

    in.signo = 0;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_kill_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_kill_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    in.mode = 9;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_kill_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_kill_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* GOT_SIGNAL carries one signal number of this system, nothing more */
static void signal_reports_take_one_valid_signal(void **state)
{
    rdp_buf_t buf;
    int32_t signo = 0;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_got_signal_pack(&buf, 15), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_got_signal_unpack(buf.data, buf.size, &signo),
                     PMIX_SUCCESS);
    assert_int_equal(signo, 15);
    /* a trailing byte, a truncated number */
    assert_int_equal(rdp_buf_append(&buf, "x", 1), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_got_signal_unpack(buf.data, buf.size, &signo),
                         PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_got_signal_unpack(buf.data, 2, &signo),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    for (int32_t bad = -1; bad <= 65; bad += 66) {
        rdp_buf_init(&buf);
        assert_int_equal(rdp_ctl_got_signal_pack(&buf, bad), PMIX_SUCCESS);
        signo = 7;
        assert_int_not_equal(
            rdp_ctl_got_signal_unpack(buf.data, buf.size, &signo),
            PMIX_SUCCESS);
        assert_int_equal(signo, 7); /* untouched on failure */
        rdp_buf_cleanup(&buf);
    }
}

static void events_roundtrip_and_truncations_fail(void **state)
{
    pmix_info_t info[2];
    int code           = 7;
    rdp_ctl_event_t in = {
        .code = -3101, .range = PMIX_RANGE_CUSTOM, .info = info, .ninfo = 2};
    rdp_ctl_event_t out;
    rdp_buf_t buf;

    PMIX_LOAD_PROCID(&in.source, "job.ns", 3);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &in.source, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EXIT_CODE, &code, PMIX_INT);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_event_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_event_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.code, -3101);
    assert_int_equal(out.range, PMIX_RANGE_CUSTOM);
    assert_string_equal(out.source.nspace, "job.ns");
    assert_int_equal(out.source.rank, 3);
    assert_int_equal(out.ninfo, 2);
    assert_true(PMIX_CHECK_KEY(&out.info[1], PMIX_EXIT_CODE));
    assert_int_equal(out.info[1].value.data.integer, 7);
    assert_int_equal(out.info[0].value.data.proc->rank, 3);
    rdp_ctl_event_cleanup(&out);
    /* every truncation and a trailing byte fail, leaving nothing */
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_event_unpack(buf.data, len, &out),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_buf_append(&buf, "x", 1), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_event_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static uint8_t addr_a[] = {1, 2, 3, 4, 5};
static uint8_t addr_b[] = {9, 8, 7};

static void fill_engine_launch(rdp_ctl_launch_t *m, rdp_ctl_node_t nodes[2])
{
    fill_launch(m, nodes);
    m->flags |= RDP_CTL_FLAG_ENGINE;
    nodes[0].engine_addr     = addr_a;
    nodes[0].engine_addr_len = sizeof(addr_a);
    nodes[1].engine_addr     = addr_b;
    nodes[1].engine_addr_len = sizeof(addr_b);
    for (size_t i = 0; i < sizeof(m->engine_key); i++) {
        m->engine_key[i] = (uint8_t)(0xa0 + i);
    }
}

static void engine_launch_carries_addresses_and_key(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t in, out;
    rdp_buf_t buf;

    fill_engine_launch(&in, nodes);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.flags, RDP_CTL_FLAG_TAG_OUTPUT | RDP_CTL_FLAG_ENGINE);
    assert_int_equal(out.nodes[0].engine_addr_len, sizeof(addr_a));
    assert_memory_equal(out.nodes[0].engine_addr, addr_a, sizeof(addr_a));
    assert_int_equal(out.nodes[1].engine_addr_len, sizeof(addr_b));
    assert_memory_equal(out.nodes[1].engine_addr, addr_b, sizeof(addr_b));
    assert_memory_equal(out.engine_key, in.engine_key, sizeof(in.engine_key));
    rdp_ctl_launch_cleanup(&out);
    /* cleanup wipes the key */
    for (size_t i = 0; i < sizeof(out.engine_key); i++) {
        assert_int_equal(out.engine_key[i], 0);
    }
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, len, &out),
                             PMIX_SUCCESS);
    }
    rdp_buf_cleanup(&buf);

    /* without the flag, neither key nor addresses travel */
    fill_launch(&in, nodes);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_null(out.nodes[0].engine_addr);
    assert_int_equal(out.nodes[1].engine_addr_len, 0);
    rdp_ctl_launch_cleanup(&out);
    rdp_buf_cleanup(&buf);
}

static void engine_launch_needs_every_address(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t m;

    fill_engine_launch(&m, nodes);
    nodes[1].engine_addr     = NULL; /* a node without an address */
    nodes[1].engine_addr_len = 0;
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);

    fill_launch(&m, nodes); /* an address without engine mode */
    nodes[0].engine_addr     = addr_a;
    nodes[0].engine_addr_len = sizeof(addr_a);
    assert_int_not_equal(launch_status(&m), PMIX_SUCCESS);
}

static void engine_launch_with_a_short_key_is_rejected(void **state)
{
    rdp_ctl_node_t nodes[2];
    rdp_ctl_launch_t m, out;
    rdp_buf_t buf;

    /* engine flag, but the payload ends with an empty key */
    fill_engine_launch(&m, nodes);
    m.flags &= ~RDP_CTL_FLAG_ENGINE;
    nodes[0].engine_addr_len = 0;
    nodes[1].engine_addr_len = 0;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_launch_pack(&buf, &m), PMIX_SUCCESS);
    /* set the flag in the packed flags: the little-endian u32 before the
     * empty key's 8-byte length */
    buf.data[buf.size - 8 - 4] |= RDP_CTL_FLAG_ENGINE;
    assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

static void hello_carries_the_engine_address(void **state)
{
    uint8_t big[RDP_CTL_MAX_ADDR + 1];
    rdp_ctl_hello_t in = {.node_id = 1, .pid = 7}, out;
    rdp_buf_t buf;

    memset(in.secret, 0x5a, sizeof(in.secret));
    in.node_name       = "h-n1";
    in.tmpdir          = "/tmp/rdpmixd.y";
    in.engine_addr     = addr_a;
    in.engine_addr_len = sizeof(addr_a);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_hello_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_hello_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.engine_addr_len, sizeof(addr_a));
    assert_memory_equal(out.engine_addr, addr_a, sizeof(addr_a));
    rdp_ctl_hello_cleanup(&out);
    assert_null(out.engine_addr);
    rdp_buf_cleanup(&buf);

    /* an oversized address is refused */
    memset(big, 1, sizeof(big));
    in.engine_addr     = big;
    in.engine_addr_len = sizeof(big);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_hello_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_hello_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* A hostile count must not make the unpacker allocate for it. */
static void huge_counts_are_rejected_before_allocating(void **state)
{
    rdp_ctl_launch_t out;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_pack_string(&buf, "ns"), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&buf, 1u << 30), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(&buf, 0xffffffffu), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_launch_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* PUBSUB keeps requester, keys and directives; its key rules hold */
static void pubsub_roundtrip_checks_the_keys(void **state)
{
    char *keys[]     = {"a", "b", NULL};
    pmix_info_t info = {.key = "pmix.range"};
    rdp_ctl_pubsub_t in, out;
    rdp_buf_t buf;

    memset(&in, 0, sizeof(in));
    in.id    = 77;
    in.op    = RDP_CTL_LOOKUP;
    in.keys  = keys;
    in.info  = &info;
    in.ninfo = 1;
    strcpy(in.proc.nspace, "job");
    in.proc.rank          = 3;
    info.value.type       = PMIX_DATA_RANGE;
    info.value.data.range = PMIX_RANGE_GLOBAL;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_pubsub_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_pubsub_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.id, 77);
    assert_int_equal(out.op, RDP_CTL_LOOKUP);
    assert_string_equal(out.proc.nspace, "job");
    assert_int_equal(out.proc.rank, 3);
    assert_string_equal(out.keys[1], "b");
    assert_null(out.keys[2]);
    assert_int_equal(out.ninfo, 1);
    assert_int_equal(out.info[0].value.data.range, PMIX_RANGE_GLOBAL);
    rdp_ctl_pubsub_cleanup(&out);
    rdp_buf_cleanup(&buf);

    /* a publish with keys, a lookup without, an unknown op */
    for (int i = 0; i < 3; i++) {
        in.op   = i == 0 ? RDP_CTL_PUBLISH : i == 1 ? RDP_CTL_LOOKUP : 9;
        in.keys = i == 1 ? NULL : keys;
        rdp_buf_init(&buf);
        assert_int_equal(rdp_ctl_pubsub_pack(&buf, &in), PMIX_SUCCESS);
        assert_int_not_equal(rdp_ctl_pubsub_unpack(buf.data, buf.size, &out),
                             PMIX_SUCCESS);
        rdp_buf_cleanup(&buf);
    }
    /* an unpublish of every key has none */
    in.op   = RDP_CTL_UNPUBLISH;
    in.keys = NULL;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_pubsub_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_pubsub_unpack(buf.data, buf.size - 1, &out) != 0,
                     1);
    assert_int_equal(rdp_ctl_pubsub_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_null(out.keys);
    rdp_ctl_pubsub_cleanup(&out);
    rdp_buf_cleanup(&buf);
}

/* PUBSUB_REPLY carries the status and the publishers' data */
static void pubsub_reply_carries_status_and_data(void **state)
{
    pmix_pdata_t pd   = {.proc = {.nspace = "job", .rank = 2}, .key = "k"};
    pmix_pdata_t *out = NULL;
    size_t nout       = 0;
    uint32_t id       = 0;
    pmix_status_t st  = 0;
    rdp_buf_t buf;

    pd.value.type         = PMIX_INT;
    pd.value.data.integer = 5;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_pubsub_reply_pack(&buf, 9, PMIX_SUCCESS, &pd, 1),
                     PMIX_SUCCESS);
    assert_int_equal(
        rdp_ctl_pubsub_reply_unpack(buf.data, buf.size, &id, &st, &out, &nout),
        PMIX_SUCCESS);
    assert_int_equal(id, 9);
    assert_int_equal(st, PMIX_SUCCESS);
    assert_int_equal(nout, 1);
    assert_string_equal(out[0].key, "k");
    assert_int_equal(out[0].proc.rank, 2);
    assert_int_equal(out[0].value.data.integer, 5);
    PMIX_PDATA_FREE(out, nout);
    assert_int_not_equal(rdp_ctl_pubsub_reply_unpack(buf.data, buf.size - 1,
                                                     &id, &st, &out, &nout),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* JCTRL: action, signal and ranks survive; a bad action or signal, a
 * count that does not match the bytes, a truncation are rejected */
static void jctrl_roundtrip_checks_action_signal_and_ranks(void **state)
{
    uint32_t ranks[]   = {1, 3, 7};
    rdp_ctl_jctrl_t in = {.origin = 2,
                          .reqid  = 77,
                          .action = RDP_CTL_JCTRL_SIGNAL,
                          .signo  = 10,
                          .nranks = 3,
                          .ranks  = ranks};
    rdp_ctl_jctrl_t out;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_jctrl_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_jctrl_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.origin, 2);
    assert_int_equal(out.reqid, 77);
    assert_int_equal(out.action, RDP_CTL_JCTRL_SIGNAL);
    assert_int_equal(out.signo, 10);
    assert_int_equal(out.nranks, 3);
    assert_memory_equal(out.ranks, ranks, sizeof(ranks));
    free(out.ranks);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_jctrl_unpack(buf.data, len, &out),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_pack_u8(&buf, 0), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_jctrl_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    /* every rank (no list), terminate: no signal needed */
    in.action = RDP_CTL_JCTRL_TERMINATE;
    in.signo  = 0;
    in.nranks = 0;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_jctrl_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_jctrl_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.nranks, 0);
    assert_null(out.ranks);
    rdp_buf_cleanup(&buf);

    in.action = RDP_CTL_JCTRL_SIGNAL; /* signal 0 */
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_jctrl_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_jctrl_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);

    in.action = 7;
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_jctrl_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_jctrl_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* PROCS: every entry survives; truncations and trailing bytes fail */
static void procs_roundtrip_keeps_every_entry(void **state)
{
    rdp_ctl_procent_t ents[] = {{.pid = 100, .state = 5, .exit_code = 0},
                                {.pid = 101, .state = 51, .exit_code = 15}};
    rdp_ctl_procs_t in       = {
              .reqid = 9, .job_status = PMIX_SUCCESS, .n = 2, .ents = ents};
    rdp_ctl_procs_t out;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_procs_pack(&buf, &in), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_procs_unpack(buf.data, buf.size, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.reqid, 9);
    assert_int_equal(out.n, 2);
    assert_int_equal(out.ents[1].pid, 101);
    assert_int_equal(out.ents[1].state, 51);
    assert_int_equal(out.ents[1].exit_code, 15);
    free(out.ents);
    for (size_t len = 0; len < buf.size; len++) {
        assert_int_not_equal(rdp_ctl_procs_unpack(buf.data, len, &out),
                             PMIX_SUCCESS);
    }
    assert_int_equal(rdp_pack_u8(&buf, 0), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_procs_unpack(buf.data, buf.size, &out),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

/* SYSLOG: priority and message; a missing message is malformed */
static void syslog_roundtrip_needs_a_message(void **state)
{
    rdp_buf_t buf;
    int32_t pri;
    char *msg;

    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_syslog_pack(&buf, 12, "hello"), PMIX_SUCCESS);
    assert_int_equal(rdp_ctl_syslog_unpack(buf.data, buf.size, &pri, &msg),
                     PMIX_SUCCESS);
    assert_int_equal(pri, 12);
    assert_string_equal(msg, "hello");
    free(msg);
    rdp_buf_cleanup(&buf);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_ctl_syslog_pack(&buf, 12, NULL), PMIX_SUCCESS);
    assert_int_not_equal(rdp_ctl_syslog_unpack(buf.data, buf.size, &pri, &msg),
                         PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_roundtrip_keeps_every_field),
        cmocka_unit_test(launch_with_a_bad_map_is_rejected),
        cmocka_unit_test(launch_carries_the_network_setup),
        cmocka_unit_test(truncated_payloads_fail_cleanly),
        cmocka_unit_test(hello_with_a_short_secret_is_rejected),
        cmocka_unit_test(io_roundtrip_is_zero_copy_and_checks_the_channel),
        cmocka_unit_test(launched_carries_the_pids),
        cmocka_unit_test(kill_orders_check_mode_and_signal),
        cmocka_unit_test(signal_reports_take_one_valid_signal),
        cmocka_unit_test(events_roundtrip_and_truncations_fail),
        cmocka_unit_test(huge_counts_are_rejected_before_allocating),
        cmocka_unit_test(engine_launch_carries_addresses_and_key),
        cmocka_unit_test(engine_launch_needs_every_address),
        cmocka_unit_test(engine_launch_with_a_short_key_is_rejected),
        cmocka_unit_test(hello_carries_the_engine_address),
        cmocka_unit_test(pubsub_roundtrip_checks_the_keys),
        cmocka_unit_test(pubsub_reply_carries_status_and_data),
        cmocka_unit_test(jctrl_roundtrip_checks_action_signal_and_ranks),
        cmocka_unit_test(procs_roundtrip_keeps_every_entry),
        cmocka_unit_test(syslog_roundtrip_needs_a_message),
    };

    return cmocka_run_group_tests_name("run_ctl", tests, NULL, NULL);
}
