/* test_regex.c - node-map and proc-map strings: round trips, hostile input */
#include "config.h"
#include "core/server/regex.h"

#include <pmix.h>
#include <pmix_server.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* Generate from a comma list, parse back, compare with the input. */
static void roundtrip_nodes(const char *input, const char *expect)
{
    char *regex  = NULL;
    char **names = NULL;
    size_t n     = 0;
    char *joined;

    assert_int_equal(rdp_server_regex_generate(input, &regex), PMIX_SUCCESS);
    if (expect != NULL) {
        assert_string_equal(regex, expect);
    }
    assert_int_equal(rdp_server_regex_parse(regex, &names, &n), PMIX_SUCCESS);
    joined = pmix_argv_join(names, ',');
    assert_non_null(joined);
    assert_string_equal(joined, input);
    assert_int_equal(n, (size_t)pmix_argv_count(names));
    free(joined);
    pmix_argv_free(names);
    free(regex);
}

static void node_ranges_compress_numeric_suffixes(void **state)
{
    roundtrip_nodes("node01,node02,node03,node10", "rdpmix:node[2:1-3,10]");
    roundtrip_nodes("n9,n10,n11", "rdpmix:n[1:9-11]");
    roundtrip_nodes("a1,b1,a2", "rdpmix:a1,b1,a2");
    roundtrip_nodes("login", "rdpmix:login");
    roundtrip_nodes("x001,x002,x3,x004", NULL);
    roundtrip_nodes("c3,c2,c1", "rdpmix:c[1:3,2,1]");
    roundtrip_nodes("n1,n01,n001", NULL);
    roundtrip_nodes("123,124,node", "rdpmix:[3:123-124],node");
    roundtrip_nodes("host.example.com,host2.example.com", NULL);
    roundtrip_nodes("n1234567890,n1234567891", NULL); /* too many digits */
    roundtrip_nodes("n999999999,n999999998", NULL);
}

static void node_list_long_roundtrip(void **state)
{
    size_t cap = 200000, len = 0;
    char *in    = malloc(cap);
    char *regex = NULL;

    assert_non_null(in);
    in[0] = '\0';
    for (int i = 0; i < 5000; i++) {
        len += (size_t)snprintf(in + len, cap - len, "%srack%d-n%04d",
                                i == 0 ? "" : ",", i / 100, i % 250);
    }
    roundtrip_nodes(in, NULL);
    assert_int_equal(rdp_server_regex_generate(in, &regex), PMIX_SUCCESS);
    assert_true(strlen(regex) < len / 4);
    free(regex);
    free(in);
}

static void plain_node_list_parses(void **state)
{
    char **names = NULL;
    size_t n     = 0;

    assert_int_equal(rdp_server_regex_parse("a,b,c", &names, &n), PMIX_SUCCESS);
    assert_int_equal(n, 3);
    assert_string_equal(names[2], "c");
    assert_null(names[3]);
    pmix_argv_free(names);
}

static void bad_node_input_is_rejected(void **state)
{
    static const char *const bad_gen[]   = {"",    "a,,b", ",a",  "a,",  "a[1]",
                                            "a]b", "a b",  "a;b", "a\tb"};
    static const char *const bad_parse[] = {
        "rdpmix:",
        "rdpmix:a,",
        "rdpmix:,a",
        "rdpmix:n[",
        "rdpmix:n[]",
        "rdpmix:n[2]",
        "rdpmix:n[2:]",
        "rdpmix:n[:1]",
        "rdpmix:n[0:1]",
        "rdpmix:n[10:1]",
        "rdpmix:n[2:1-]",
        "rdpmix:n[2:-1]",
        "rdpmix:n[2:3-1]",
        "rdpmix:n[2:1,]",
        "rdpmix:n[2:1,,2]",
        "rdpmix:n[2:1]x",
        "rdpmix:n[2:1]]",
        "rdpmix:n[2:[1]]",
        "rdpmix:n]2:1[",
        "rdpmix:n[2:1x]",
        "rdpmix:n[2:1234567890]",
        "rdpmix:n[2:0-999999999]", /* expands beyond the bound */
        "rdpmix:n[1:0-600000],m[1:0-600000]",
        "rdpmix:a b",
        "a,,b",
    };
    char *out    = (char *)0x1;
    char **names = (char **)0x1;
    size_t n     = 7;

    for (size_t i = 0; i < sizeof(bad_gen) / sizeof(bad_gen[0]); i++) {
        assert_int_equal(rdp_server_regex_generate(bad_gen[i], &out),
                         PMIX_ERR_BAD_PARAM);
        assert_ptr_equal(out, (char *)0x1);
    }
    for (size_t i = 0; i < sizeof(bad_parse) / sizeof(bad_parse[0]); i++) {
        assert_int_equal(rdp_server_regex_parse(bad_parse[i], &names, &n),
                         PMIX_ERR_BAD_PARAM);
        assert_ptr_equal(names, (char **)0x1);
        assert_int_equal(n, 7);
    }
    assert_int_equal(rdp_server_regex_generate(NULL, &out), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_server_regex_parse(NULL, &names, &n),
                     PMIX_ERR_BAD_PARAM);
}

/* ---- proc maps ---- */

static void ppn_roundtrip(const char *input, const char *expect)
{
    char *ppn = NULL;
    rdp_server_ppn_t a, b;

    assert_int_equal(rdp_server_ppn_generate(input, &ppn), PMIX_SUCCESS);
    if (expect != NULL) {
        assert_string_equal(ppn, expect);
    }
    assert_int_equal(rdp_server_ppn_parse(ppn, &a), PMIX_SUCCESS);
    assert_int_equal(rdp_server_ppn_parse(input, &b), PMIX_SUCCESS);
    assert_int_equal(a.nnodes, b.nnodes);
    assert_int_equal(a.nranks, b.nranks);
    assert_memory_equal(a.first, b.first, (a.nnodes + 1) * sizeof(size_t));
    if (a.nranks > 0) {
        assert_memory_equal(a.ranks, b.ranks, a.nranks * sizeof(pmix_rank_t));
    }
    rdp_server_ppn_cleanup(&a);
    rdp_server_ppn_cleanup(&b);
    free(ppn);
}

static void ppn_compresses_runs_and_keeps_order(void **state)
{
    rdp_server_ppn_t p;

    ppn_roundtrip("0,1,2;3,4", "rdpmix-ppn:0-2;3-4");
    ppn_roundtrip("0,2,4;1,3,5", "rdpmix-ppn:0,2,4;1,3,5");
    ppn_roundtrip("7", "rdpmix-ppn:7");
    ppn_roundtrip("0;;1", "rdpmix-ppn:0;;1");
    ppn_roundtrip("5,4,3", "rdpmix-ppn:5,4,3");

    assert_int_equal(rdp_server_ppn_parse("rdpmix-ppn:0-2;3,4", &p),
                     PMIX_SUCCESS);
    assert_int_equal(p.nnodes, 2);
    assert_int_equal(p.first[1], 3);
    assert_int_equal(p.ranks[4], 4);
    rdp_server_ppn_cleanup(&p);
    rdp_server_ppn_cleanup(&p); /* harmless twice */
}

static void bad_ppn_input_is_rejected(void **state)
{
    static const char *const bad[] = {
        "a",          "0,,1",
        "0,",         ",0",
        "1-0",        "0-",
        "-1",         "0;x",
        "0 1",        "rdpmix-ppn:0;1,",
        "4294967295", "1234567890",
        "0-16777216", "rdpmix-ppn:rdpmix-ppn:0",
    };
    rdp_server_ppn_t p;
    char *out = NULL;

    memset(&p, 0x5a, sizeof(p));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(rdp_server_ppn_parse(bad[i], &p), PMIX_ERR_BAD_PARAM);
        assert_int_equal(p.nnodes, (size_t)0x5a5a5a5a5a5a5a5aull);
    }
    assert_int_equal(rdp_server_ppn_generate("", &out), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_server_ppn_generate("rdpmix-ppn:0", &out),
                     PMIX_ERR_BAD_PARAM);
    assert_null(out);
}

/* Random bytes and mutations of valid strings never crash or leak, and
 * whatever parses round-trips to the same expansion. */
static void random_input_never_crashes(void **state)
{
    static const char alphabet[] = "rdpmix-n:[]0123456789,;-ab";
    unsigned seed                = (unsigned)time(NULL);
    char buf[64];

    printf("# seed %u\n", seed);
    srand(seed);
    for (int iter = 0; iter < 20000; iter++) {
        size_t len   = (size_t)(rand() % (int)(sizeof(buf) - 1));
        char **names = NULL;
        size_t n     = 0;
        rdp_server_ppn_t p;

        for (size_t i = 0; i < len; i++) {
            buf[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
        }
        buf[len] = '\0';
        if (rdp_server_regex_parse(buf, &names, &n) == PMIX_SUCCESS) {
            char *joined = pmix_argv_join(names, ',');
            char *regen  = NULL;
            char **again = NULL;
            size_t n2    = 0;

            assert_true(n > 0);
            assert_int_equal(rdp_server_regex_generate(joined, &regen),
                             PMIX_SUCCESS);
            assert_int_equal(rdp_server_regex_parse(regen, &again, &n2),
                             PMIX_SUCCESS);
            assert_int_equal(n, n2);
            for (size_t i = 0; i < n; i++) {
                assert_string_equal(names[i], again[i]);
            }
            pmix_argv_free(again);
            free(regen);
            free(joined);
            pmix_argv_free(names);
        }
        if (rdp_server_ppn_parse(buf, &p) == PMIX_SUCCESS) {
            rdp_server_ppn_cleanup(&p);
        }
    }
}

static void api_needs_server_init(void **state)
{
    char *out = NULL;

    assert_int_equal(PMIx_generate_regex("a,b", &out), PMIX_ERR_INIT);
    assert_int_equal(PMIx_generate_ppn("0;1", &out), PMIX_ERR_INIT);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_ranges_compress_numeric_suffixes),
        cmocka_unit_test(node_list_long_roundtrip),
        cmocka_unit_test(plain_node_list_parses),
        cmocka_unit_test(bad_node_input_is_rejected),
        cmocka_unit_test(ppn_compresses_runs_and_keeps_order),
        cmocka_unit_test(bad_ppn_input_is_rejected),
        cmocka_unit_test(random_input_never_crashes),
        cmocka_unit_test(api_needs_server_init),
    };

    return cmocka_run_group_tests_name("regex", tests, NULL, NULL);
}
