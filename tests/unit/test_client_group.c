/* test_client_group.c - the groups a client remembers: (group id, group
 * rank) addressing of members from one or several nspaces */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <pmix.h>

#include "core/client/client_int.h"

static void load(pmix_proc_t *p, const char *nspace, pmix_rank_t rank)
{
    memset(p, 0, sizeof(*p));
    PMIX_LOAD_PROCID(p, nspace, rank);
}

static void assert_proc(const pmix_proc_t *p, const char *nspace,
                        pmix_rank_t rank)
{
    assert_string_equal(p->nspace, nspace);
    assert_int_equal(p->rank, rank);
}

static int teardown(void **state)
{
    (void)state;
    rdp_client_group_cleanup();
    return 0;
}

/* Members of three nspaces, interleaved, and one whose nspace has the
 * longest name allowed: every group rank names its member. */
static void members_of_several_nspaces_keep_their_order(void **state)
{
    char longest[PMIX_MAX_NSLEN + 1];
    pmix_proc_t m[6], p, *out = NULL;
    size_t nout = 0;

    (void)state;
    memset(longest, 'n', PMIX_MAX_NSLEN);
    longest[PMIX_MAX_NSLEN] = '\0';
    load(&m[0], "job.A", 3);
    load(&m[1], "job.B", 0);
    load(&m[2], "job.A", 1);
    load(&m[3], "job.C", 7);
    load(&m[4], longest, 2);
    load(&m[5], "job.B", 5);
    rdp_client_group_remember("g", m, 6);

    for (pmix_rank_t r = 0; r < 6; r++) {
        load(&p, "g", r);
        rdp_client_group_resolve(&p);
        assert_proc(&p, m[r].nspace, m[r].rank);
    }
    load(&p, "g", 6); /* out of range: stays */
    rdp_client_group_resolve(&p);
    assert_proc(&p, "g", 6);

    load(&p, "g", PMIX_RANK_WILDCARD);
    assert_int_equal(rdp_client_group_expand(&p, 1, &out, &nout), PMIX_SUCCESS);
    assert_int_equal(nout, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_memory_equal(&out[i], &m[i], sizeof(m[i]));
    }
    free(out);
}

/* A proc of no group stays as it is next to a group rank; a group rank
 * out of range is an error; a group of the same id replaces the older. */
static void expand_mixes_groups_and_procs(void **state)
{
    pmix_proc_t m[2], procs[2], *out = NULL;
    size_t nout = 0;

    (void)state;
    load(&m[0], "job.A", 0);
    load(&m[1], "job.B", 4);
    rdp_client_group_remember("g", m, 2);
    load(&procs[0], "job.X", 1);
    load(&procs[1], "g", 1);
    assert_int_equal(rdp_client_group_expand(procs, 2, &out, &nout),
                     PMIX_SUCCESS);
    assert_int_equal(nout, 2);
    assert_proc(&out[0], "job.X", 1);
    assert_proc(&out[1], "job.B", 4);
    free(out);

    load(&procs[1], "g", 2);
    out = NULL;
    assert_int_equal(rdp_client_group_expand(procs, 2, &out, &nout),
                     PMIX_ERR_BAD_PARAM);
    assert_null(out);

    load(&m[0], "job.C", 9);
    rdp_client_group_remember("g", m, 1);
    load(&procs[0], "g", 0);
    rdp_client_group_resolve(&procs[0]);
    assert_proc(&procs[0], "job.C", 9);
    load(&procs[0], "g", 1);
    rdp_client_group_resolve(&procs[0]);
    assert_proc(&procs[0], "g", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(members_of_several_nspaces_keep_their_order,
                                  teardown),
        cmocka_unit_test_teardown(expand_mixes_groups_and_procs, teardown),
    };

    return cmocka_run_group_tests_name("client_group", tests, NULL, NULL);
}
