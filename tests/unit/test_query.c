/* test_query.c - the query answers shared by the client and the server
 * library: qualifiers, overall status, attribute support, rendezvous
 * files of available servers, memory of a process */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmix.h>

#include "core/util/directive.h"
#include "core/util/query.h"

static const pmix_info_t *find(const pmix_info_t *info, size_t n,
                               const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], key)) {
            return &info[i];
        }
    }
    return NULL;
}

/* ---- qualifiers and status ---- */

static void test_status(void **state)
{
    (void)state;
    assert_int_equal(rdp_qry_status(3, 3), PMIX_SUCCESS);
    assert_int_equal(rdp_qry_status(3, 1), PMIX_QUERY_PARTIAL_SUCCESS);
    assert_int_equal(rdp_qry_status(3, 0), PMIX_ERR_NOT_FOUND);
    assert_int_equal(rdp_qry_status(0, 0), PMIX_ERR_NOT_FOUND);
}

static void test_qualifiers(void **state)
{
    pmix_info_t q[4];
    pmix_query_t query = {.qualifiers = q, .nqual = 0};
    pmix_rank_t r      = 7;
    pmix_proc_t p;
    bool yes = true, no = false;

    (void)state;
    assert_false(rdp_qry_flag(&query, PMIX_QUERY_LOCAL_ONLY));
    assert_int_equal(rdp_qry_rank(&query), PMIX_RANK_WILDCARD);
    assert_null(rdp_qry_hostname(&query));

    PMIX_INFO_LOAD(&q[0], PMIX_QUERY_LOCAL_ONLY, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q[1], PMIX_QUERY_REPORT_AVG, &no, PMIX_BOOL);
    PMIX_INFO_LOAD(&q[2], PMIX_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&q[3], PMIX_HOSTNAME, "node3", PMIX_STRING);
    query.nqual = 4;
    assert_true(rdp_qry_flag(&query, PMIX_QUERY_LOCAL_ONLY));
    assert_false(rdp_qry_flag(&query, PMIX_QUERY_REPORT_AVG));
    assert_int_equal(rdp_qry_rank(&query), 7);
    assert_string_equal(rdp_qry_hostname(&query), "node3");
    PMIX_INFO_DESTRUCT(&q[2]);

    /* a PMIX_PROCID names the rank too */
    PMIX_LOAD_PROCID(&p, "ns", 3);
    PMIX_INFO_LOAD(&q[2], PMIX_PROCID, &p, PMIX_PROC);
    assert_int_equal(rdp_qry_rank(&query), 3);
    for (int i = 0; i < 4; i++) {
        PMIX_INFO_DESTRUCT(&q[i]);
    }
}

/* ---- attribute support ---- */

static void test_sides(void **state)
{
    pmix_info_t q[2];
    pmix_query_t query = {.qualifiers = q, .nqual = 0};

    (void)state;
    assert_int_equal(rdp_qry_attr_sides(&query), RDP_QRY_CLIENT | RDP_QRY_SERVER
                                                     | RDP_QRY_TOOL
                                                     | RDP_QRY_HOST);
    PMIX_INFO_LOAD(&q[0], PMIX_CLIENT_FUNCTIONS, "", PMIX_STRING);
    PMIX_INFO_LOAD(&q[1], PMIX_HOST_ATTRIBUTES, "all", PMIX_STRING);
    query.nqual = 1;
    assert_int_equal(rdp_qry_attr_sides(&query), RDP_QRY_CLIENT);
    query.nqual = 2;
    assert_int_equal(rdp_qry_attr_sides(&query), RDP_QRY_CLIENT | RDP_QRY_HOST);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);
}

/* A query that names no side gets every side's function list. */
static void test_no_side(void **state)
{
    bool yes = true;
    pmix_info_t q, out;
    pmix_query_t query = {.qualifiers = &q, .nqual = 1};
    const pmix_data_array_t *e;

    (void)state;
    PMIX_INFO_LOAD(&q, PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    assert_int_equal(rdp_qry_attr_sides(&query), RDP_QRY_CLIENT | RDP_QRY_SERVER
                                                     | RDP_QRY_TOOL
                                                     | RDP_QRY_HOST);
    assert_int_equal(
        rdp_qry_attr_support(&query, rdp_qry_attr_sides(&query), &out),
        PMIX_SUCCESS);
    e = out.value.data.darray;
    assert_non_null(find(e->array, e->size, PMIX_CLIENT_FUNCTIONS));
    assert_non_null(find(e->array, e->size, PMIX_SERVER_FUNCTIONS));
    PMIX_INFO_DESTRUCT(&out);
    PMIX_INFO_DESTRUCT(&q);
}

/* The answer's entries: an info array under PMIX_QUERY_ATTRIBUTE_SUPPORT. */
static const pmix_data_array_t *entries(const pmix_info_t *out)
{
    assert_true(PMIX_CHECK_KEY(out, PMIX_QUERY_ATTRIBUTE_SUPPORT));
    assert_int_equal(out->value.type, PMIX_DATA_ARRAY);
    assert_int_equal(out->value.data.darray->type, PMIX_INFO);
    return out->value.data.darray;
}

static void test_functions(void **state)
{
    pmix_info_t q, out;
    pmix_query_t query = {.qualifiers = &q, .nqual = 1};
    const pmix_data_array_t *e;
    const pmix_info_t *list;

    (void)state;
    PMIX_INFO_LOAD(&q, PMIX_CLIENT_FUNCTIONS, "", PMIX_STRING);
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_CLIENT, &out),
                     PMIX_SUCCESS);
    e = entries(&out);
    assert_int_equal(e->size, 1);
    list = find(e->array, e->size, PMIX_CLIENT_FUNCTIONS);
    assert_non_null(list);
    assert_int_equal(list->value.type, PMIX_STRING);
    assert_non_null(strstr(list->value.data.string, "PMIx_Get,"));
    assert_non_null(strstr(list->value.data.string, "PMIx_Query_info"));
    PMIX_INFO_DESTRUCT(&out);

    /* a side this process does not serve adds nothing */
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_SERVER, &out),
                     PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&q);
}

static void test_attributes(void **state)
{
    pmix_info_t q, out;
    pmix_query_t query = {.qualifiers = &q, .nqual = 1};
    const pmix_data_array_t *e, *ra;
    const pmix_info_t *get;
    const pmix_regattr_t *attrs;
    bool timeout = false;

    (void)state;
    PMIX_INFO_LOAD(&q, PMIX_CLIENT_ATTRIBUTES, "PMIx_Get,PMIx_Nosuch",
                   PMIX_STRING);
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_CLIENT, &out),
                     PMIX_SUCCESS);
    e = entries(&out);
    assert_int_equal(e->size, 1); /* the unknown function has no entry */
    get = find(e->array, e->size, "PMIx_Get");
    assert_non_null(get);
    assert_int_equal(get->value.type, PMIX_DATA_ARRAY);
    ra = get->value.data.darray;
    assert_int_equal(ra->type, PMIX_REGATTR);
    attrs = ra->array;
    for (size_t i = 0; i < ra->size; i++) {
        assert_string_equal(attrs[i].string,
                            PMIx_Get_attribute_string(attrs[i].name));
        assert_non_null(attrs[i].description);
        if (strcmp(attrs[i].name, "PMIX_TIMEOUT") == 0) {
            timeout = true;
            assert_string_equal(attrs[i].string, PMIX_TIMEOUT);
            assert_int_equal(attrs[i].type, PMIX_INT);
        }
    }
    assert_true(timeout);
    PMIX_INFO_DESTRUCT(&out);
    PMIX_INFO_DESTRUCT(&q);

    /* "all": every client function */
    PMIX_INFO_LOAD(&q, PMIX_CLIENT_ATTRIBUTES, "all", PMIX_STRING);
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_CLIENT, &out),
                     PMIX_SUCCESS);
    assert_true(entries(&out)->size > 10);
    assert_non_null(
        find(entries(&out)->array, entries(&out)->size, "PMIx_Fence"));
    PMIX_INFO_DESTRUCT(&out);
    PMIX_INFO_DESTRUCT(&q);

    /* a list of functions must be a string */
    PMIX_INFO_LOAD(&q, PMIX_CLIENT_ATTRIBUTES, &timeout, PMIX_BOOL);
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_CLIENT, &out),
                     PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&q);
}

/* The tool side: the tool functions that work (not the IOF stubs), with
 * the attributes their directive checks accept. */
static void test_tool_side(void **state)
{
    pmix_info_t q[2], out;
    pmix_query_t query = {.qualifiers = q, .nqual = 2};
    const pmix_data_array_t *e, *ra;
    const pmix_info_t *list, *init;
    const pmix_regattr_t *attrs;
    size_t found = 0;

    (void)state;
    PMIX_INFO_LOAD(&q[0], PMIX_TOOL_FUNCTIONS, "", PMIX_STRING);
    PMIX_INFO_LOAD(&q[1], PMIX_TOOL_ATTRIBUTES, "PMIx_tool_init", PMIX_STRING);
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_TOOL, &out),
                     PMIX_SUCCESS);
    e    = entries(&out);
    list = find(e->array, e->size, PMIX_TOOL_FUNCTIONS);
    assert_non_null(list);
    assert_int_equal(list->value.type, PMIX_STRING);
    assert_non_null(strstr(list->value.data.string, "PMIx_tool_init,"));
    assert_non_null(strstr(list->value.data.string, "PMIx_tool_get_servers"));
    assert_null(strstr(list->value.data.string, "PMIx_IOF"));
    init = find(e->array, e->size, "PMIx_tool_init");
    assert_non_null(init);
    ra    = init->value.data.darray;
    attrs = ra->array;
    for (size_t i = 0; i < ra->size; i++) {
        assert_true(rdp_attr_is_supported("PMIx_tool_init", attrs[i].string));
        found += strcmp(attrs[i].name, "PMIX_SERVER_PIDINFO") == 0
                 || strcmp(attrs[i].name, "PMIX_CONNECT_TO_SYSTEM") == 0;
    }
    assert_int_equal(found, 2);
    PMIX_INFO_DESTRUCT(&out);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);
}

static void test_host_registration(void **state)
{
    char *attrs[] = {"PMIX_LOG_STDOUT", "PMIX_LOG_ONCE", NULL};
    pmix_info_t q[2], out;
    pmix_query_t query = {.qualifiers = q, .nqual = 2};
    const pmix_data_array_t *e;
    const pmix_info_t *fns, *log;

    (void)state;
    assert_int_equal(rdp_qry_host_attrs_register("PMIx_Log", attrs),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_qry_host_attrs_register("PMIx_Log", attrs),
                     PMIX_ERR_REPEAT_ATTR_REGISTRATION);
    assert_int_equal(rdp_qry_host_attrs_register(NULL, attrs),
                     PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&q[0], PMIX_HOST_FUNCTIONS, "", PMIX_STRING);
    PMIX_INFO_LOAD(&q[1], PMIX_HOST_ATTRIBUTES, "PMIx_Log", PMIX_STRING);
    assert_int_equal(
        rdp_qry_attr_support(&query, rdp_qry_attr_sides(&query), &out),
        PMIX_SUCCESS);
    e   = entries(&out);
    fns = find(e->array, e->size, PMIX_HOST_FUNCTIONS);
    log = find(e->array, e->size, "PMIx_Log");
    assert_non_null(fns);
    assert_string_equal(fns->value.data.string, "PMIx_Log");
    assert_non_null(log);
    assert_int_equal(log->value.data.darray->size, 2);
    PMIX_INFO_DESTRUCT(&out);

    /* after the server's finalize the host has said nothing */
    rdp_qry_host_attrs_clear();
    assert_int_equal(rdp_qry_attr_support(&query, RDP_QRY_HOST, &out),
                     PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);
}

/* ---- available servers ---- */

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char path[256];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static const pmix_data_array_t *server(const pmix_info_t *info, size_t n,
                                       const char *nspace)
{
    for (size_t i = 0; i < n; i++) {
        const pmix_data_array_t *d = info[i].value.data.darray;

        assert_true(PMIX_CHECK_KEY(&info[i], PMIX_SERVER_INFO_ARRAY));
        assert_int_equal(d->type, PMIX_INFO);
        if (strcmp(((pmix_info_t *)d->array)[0].value.data.string, nspace)
            == 0) {
            return d;
        }
    }
    return NULL;
}

static void test_servers(void **state)
{
    char cmd[128];
    pmix_info_t *info;
    size_t n = 1;
    const pmix_data_array_t *d;

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/rdp_test_query.XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_file("pmix.h1.tool.1", "ns.a.2;tcp4://127.0.0.1:1\nv4.2.2\n17\n"
                                 "5:6\nyesterday\n");
    write_file("pmix.h1.tool.2", "ns.a.2;tcp4://127.0.0.1:1\n"); /* same */
    write_file("pmix.h1.tool.3", "plain.0;unix:/tmp/x\n");
    write_file("pmix.bad.1", "no-semicolon\n");
    write_file("pmix.bad.2", "norank;uri\n");
    write_file("pmix.bad.3", "ns.x;uri\n");
    write_file("other.ns.1", "other.1;uri\n");
    snprintf(cmd, sizeof(cmd), "%s/a", dir);
    assert_int_equal(mkdir(cmd, 0700), 0);
    snprintf(cmd, sizeof(cmd), "%s/a/b", dir);
    assert_int_equal(mkdir(cmd, 0700), 0);
    snprintf(cmd, sizeof(cmd), "%s/a/b/c", dir);
    assert_int_equal(mkdir(cmd, 0700), 0);
    write_file("a/pmix.sub.1", "deep.4;uri\n");
    write_file("a/b/c/pmix.too.deep", "deeper.5;uri\n");

    /* appended after what the caller has */
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], "before", "x", PMIX_STRING);
    assert_int_equal(rdp_qry_servers_in(dir, &info, &n), PMIX_SUCCESS);
    assert_int_equal(n, 4);
    assert_true(PMIX_CHECK_KEY(&info[0], "before"));
    d = server(&info[1], n - 1, "ns.a");
    assert_non_null(d);
    assert_int_equal(d->size, 7);
    assert_int_equal(find(d->array, d->size, PMIX_SERVER_RANK)->value.data.rank,
                     2);
    assert_string_equal(
        find(d->array, d->size, PMIX_VERSION_INFO)->value.data.string,
        "v4.2.2");
    assert_int_equal(
        find(d->array, d->size, PMIX_SERVER_PIDINFO)->value.data.uint32, 17);
    assert_int_equal(find(d->array, d->size, PMIX_USERID)->value.data.uint32,
                     5);
    assert_int_equal(find(d->array, d->size, PMIX_GRPID)->value.data.uint32, 6);
    assert_string_equal(
        find(d->array, d->size, PMIX_SERVER_START_TIME)->value.data.string,
        "yesterday");
    d = server(&info[1], n - 1, "plain");
    assert_non_null(d);
    assert_int_equal(d->size, 2); /* an URI alone: nspace and rank */
    assert_non_null(server(&info[1], n - 1, "deep"));
    assert_null(server(&info[1], n - 1, "deeper"));
    PMIX_INFO_FREE(info, n);

    /* a missing directory lists nothing */
    info = NULL;
    n    = 0;
    assert_int_equal(rdp_qry_servers_in("/nonexistent/rdp", &info, &n),
                     PMIX_SUCCESS);
    assert_int_equal(n, 0);
    assert_null(info);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_servers_dir(void **state)
{
    (void)state;
    setenv("PMIX_SYSTEM_TMPDIR", "/sys/tmp", 1);
    assert_string_equal(rdp_qry_servers_dir(), "/sys/tmp");
    unsetenv("PMIX_SYSTEM_TMPDIR");
    setenv("TMPDIR", "/my/tmp", 1);
    assert_string_equal(rdp_qry_servers_dir(), "/my/tmp");
    unsetenv("TMPDIR");
    assert_string_equal(rdp_qry_servers_dir(), "/tmp");
}

/* ---- memory ---- */

static void test_rss(void **state)
{
    float mb = 0;
    pid_t child;

    (void)state;
    assert_int_equal(rdp_qry_rss_mb(getpid(), &mb), PMIX_SUCCESS);
    assert_true(mb > 0);
    /* a process that is gone has no memory to report */
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        _exit(0);
    }
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(rdp_qry_rss_mb(child, &mb), PMIX_ERR_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_qualifiers),
        cmocka_unit_test(test_sides),
        cmocka_unit_test(test_no_side),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_tool_side),
        cmocka_unit_test(test_host_registration),
        cmocka_unit_test(test_servers),
        cmocka_unit_test(test_servers_dir),
        cmocka_unit_test(test_rss),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
