/* test_server_group.c - group blocks: packing, membership, context ids;
 * votes for a new leader */
#include "config.h"
#include "core/server/group.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void load(pmix_proc_t *p, const char *ns, pmix_rank_t r)
{
    memset(p, 0, sizeof(*p));
    PMIX_LOAD_PROCID(p, ns, r);
}

/* Pack a block of @a n entries of nspace "ns" (ranks given), with the
 * given joined flags, and unpack it as server @a origin. */
static void make_block(uint32_t origin, bool want, uint64_t cid,
                       const pmix_rank_t *ranks, const bool *joined, size_t n,
                       rdp_buf_t *buf, rdp_srv_group_block_t *blk)
{
    rdp_srv_group_entry_t e[8];

    assert_true(n <= 8);
    memset(e, 0, sizeof(e));
    for (size_t i = 0; i < n; i++) {
        load(&e[i].proc, "ns", ranks[i]);
        e[i].joined = joined[i];
    }
    rdp_buf_init(buf);
    assert_int_equal(rdp_srv_group_block_pack(buf, want, cid, e, n, NULL, 0),
                     PMIX_SUCCESS);
    assert_int_equal(
        rdp_srv_group_block_unpack(buf->data, buf->size, origin, blk),
        PMIX_SUCCESS);
}

static void test_cid_make(void **state)
{
    (void)state;
    assert_int_equal(rdp_srv_group_cid_make(0, 1), 1);
    assert_int_equal(rdp_srv_group_cid_make(3, 7), (3ULL << 32) | 7);
    /* different servers never give the same id for any counter */
    assert_true(rdp_srv_group_cid_make(1, 5) != rdp_srv_group_cid_make(2, 5));
}

static void test_roundtrip_with_info_and_bundle(void **state)
{
    rdp_srv_group_entry_t e;
    rdp_srv_group_block_t blk;
    pmix_info_t gi;
    size_t v            = 1234;
    const char bundle[] = "opaque bundle";
    rdp_buf_t buf;

    (void)state;
    memset(&e, 0, sizeof(e));
    load(&e.proc, "nsA", 5);
    e.joined = true;
    PMIX_INFO_LOAD(&gi, "k", &v, PMIX_SIZE);
    e.ginfo  = &gi;
    e.nginfo = 1;
    rdp_buf_init(&buf);
    assert_int_equal(
        rdp_srv_group_block_pack(&buf, true, 42, &e, 1, bundle, sizeof(bundle)),
        PMIX_SUCCESS);
    assert_int_equal(rdp_srv_group_block_unpack(buf.data, buf.size, 9, &blk),
                     PMIX_SUCCESS);
    assert_int_equal(blk.origin, 9);
    assert_true(blk.want_cid);
    assert_int_equal(blk.cid, 42);
    assert_int_equal(blk.nentries, 1);
    assert_string_equal(blk.entries[0].proc.nspace, "nsA");
    assert_int_equal(blk.entries[0].proc.rank, 5);
    assert_true(blk.entries[0].joined);
    assert_int_equal(blk.entries[0].nginfo, 1);
    assert_string_equal(blk.entries[0].ginfo[0].key, "k");
    assert_int_equal(blk.entries[0].ginfo[0].value.data.size, 1234);
    assert_int_equal(blk.bundlelen, sizeof(bundle));
    assert_memory_equal(blk.bundle, bundle, sizeof(bundle));
    assert_false(blk.entries[0].leads);
    rdp_srv_group_block_clear(&blk);

    /* a member that declared itself leader: told with its entry (both
     * flags survive) */
    {
        rdp_buf_t lb;

        e.leads = true;
        rdp_buf_init(&lb);
        assert_int_equal(
            rdp_srv_group_block_pack(&lb, false, 0, &e, 1, NULL, 0),
            PMIX_SUCCESS);
        assert_int_equal(rdp_srv_group_block_unpack(lb.data, lb.size, 1, &blk),
                         PMIX_SUCCESS);
        assert_true(blk.entries[0].joined);
        assert_true(blk.entries[0].leads);
        rdp_srv_group_block_clear(&blk);
        rdp_buf_cleanup(&lb);
        e.leads = false;
    }

    /* truncated blocks are refused, whatever the cut */
    for (size_t cut = 0; cut < buf.size; cut++) {
        assert_int_not_equal(rdp_srv_group_block_unpack(buf.data, cut, 0, &blk),
                             PMIX_SUCCESS);
    }
    rdp_buf_cleanup(&buf);
}

/* Membership keeps the order of the members given, across blocks. */
/* A block packed piece by piece, its bundle in place, is the block
 * rdp_srv_group_block_pack makes of the same parts, byte for byte. */
static void test_piecewise_pack(void **state)
{
    rdp_srv_group_entry_t e[2];
    const char bundle[] = "bundle packed in place";
    rdp_buf_t whole, parts;
    rdp_srv_group_block_t blk;
    size_t mark = 0;

    (void)state;
    memset(e, 0, sizeof(e));
    load(&e[0].proc, "nsA", 1);
    e[0].joined = true;
    load(&e[1].proc, "nsB", 7);
    e[1].leads = true;
    rdp_buf_init(&whole);
    rdp_buf_init(&parts);
    assert_int_equal(rdp_srv_group_block_pack(&whole, true, 77, e, 2, bundle,
                                              sizeof(bundle)),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_group_block_pack_head(&parts, true, 77, 2),
                     PMIX_SUCCESS);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(rdp_srv_group_block_pack_entry(&parts, &e[i]),
                         PMIX_SUCCESS);
    }
    assert_int_equal(rdp_srv_group_block_bundle_begin(&parts, &mark),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_buf_append(&parts, bundle, sizeof(bundle)),
                     PMIX_SUCCESS);
    rdp_srv_group_block_bundle_end(&parts, mark);
    assert_int_equal(parts.size, whole.size);
    assert_memory_equal(parts.data, whole.data, whole.size);
    assert_int_equal(
        rdp_srv_group_block_unpack(parts.data, parts.size, 3, &blk),
        PMIX_SUCCESS);
    assert_int_equal(blk.nentries, 2);
    assert_true(blk.entries[1].leads);
    assert_int_equal(blk.bundlelen, sizeof(bundle));
    assert_memory_equal(blk.bundle, bundle, sizeof(bundle));
    rdp_srv_group_block_clear(&blk);

    /* an empty bundle: its length 0 */
    rdp_buf_cleanup(&parts);
    rdp_buf_init(&parts);
    assert_int_equal(rdp_srv_group_block_pack_head(&parts, false, 0, 0),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_group_block_bundle_begin(&parts, &mark),
                     PMIX_SUCCESS);
    rdp_srv_group_block_bundle_end(&parts, mark);
    assert_int_equal(
        rdp_srv_group_block_unpack(parts.data, parts.size, 0, &blk),
        PMIX_SUCCESS);
    assert_int_equal(blk.nentries, 0);
    assert_int_equal(blk.bundlelen, 0);
    rdp_srv_group_block_clear(&blk);
    rdp_buf_cleanup(&parts);
    rdp_buf_cleanup(&whole);
}

static void test_membership_order(void **state)
{
    const pmix_rank_t r0[] = {0, 2}, r1[] = {3, 1};
    const bool yes[] = {true, true};
    rdp_srv_group_block_t blk[2];
    rdp_buf_t b0, b1;
    pmix_proc_t members[4], *final = NULL;
    size_t nfinal;
    bool have_cid;
    uint64_t cid;

    (void)state;
    make_block(1, false, 11, r0, yes, 2, &b0, &blk[0]);
    make_block(0, false, 22, r1, yes, 2, &b1, &blk[1]);
    load(&members[0], "ns", 3);
    load(&members[1], "ns", 0);
    load(&members[2], "ns", 1);
    load(&members[3], "ns", 2);
    assert_int_equal(rdp_srv_group_resolve(members, 4, blk, 2, false, &final,
                                           &nfinal, &have_cid, &cid),
                     PMIX_SUCCESS);
    assert_int_equal(nfinal, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(final[i].rank, members[i].rank);
    }
    assert_false(have_cid); /* nobody asked */
    free(final);
    rdp_srv_group_block_clear(&blk[0]);
    rdp_srv_group_block_clear(&blk[1]);
    rdp_buf_cleanup(&b0);
    rdp_buf_cleanup(&b1);
}

/* The lowest-indexed server's candidate wins, whoever asked. */
static void test_cid_lowest_server(void **state)
{
    const pmix_rank_t r0[] = {0}, r1[] = {1}, r2[] = {2};
    const bool yes[] = {true};
    rdp_srv_group_block_t blk[3];
    rdp_buf_t b[3];
    pmix_proc_t members[3], *final = NULL;
    size_t nfinal;
    bool have_cid;
    uint64_t cid = 0;

    (void)state;
    make_block(5, false, rdp_srv_group_cid_make(5, 1), r0, yes, 1, &b[0],
               &blk[0]);
    make_block(2, false, rdp_srv_group_cid_make(2, 9), r1, yes, 1, &b[1],
               &blk[1]);
    make_block(7, true, rdp_srv_group_cid_make(7, 4), r2, yes, 1, &b[2],
               &blk[2]);
    for (pmix_rank_t r = 0; r < 3; r++) {
        load(&members[r], "ns", r);
    }
    assert_int_equal(rdp_srv_group_resolve(members, 3, blk, 3, false, &final,
                                           &nfinal, &have_cid, &cid),
                     PMIX_SUCCESS);
    assert_true(have_cid);
    assert_int_equal(cid, rdp_srv_group_cid_make(2, 9));
    free(final);
    for (int i = 0; i < 3; i++) {
        rdp_srv_group_block_clear(&blk[i]);
        rdp_buf_cleanup(&b[i]);
    }
}

/* A member that did not join: an error, or left out when optional. */
static void test_member_missing(void **state)
{
    const pmix_rank_t r[] = {0, 1, 2};
    const bool joined[]   = {true, false, true};
    rdp_srv_group_block_t blk;
    rdp_buf_t b;
    pmix_proc_t members[4], *final = NULL;
    size_t nfinal = 0;
    bool have_cid;
    uint64_t cid;

    (void)state;
    make_block(0, true, 1, r, joined, 3, &b, &blk);
    for (pmix_rank_t k = 0; k < 3; k++) {
        load(&members[k], "ns", k);
    }
    assert_int_equal(rdp_srv_group_resolve(members, 3, &blk, 1, false, &final,
                                           &nfinal, &have_cid, &cid),
                     PMIX_ERR_PROC_TERM_WO_SYNC);
    assert_int_equal(rdp_srv_group_resolve(members, 3, &blk, 1, true, &final,
                                           &nfinal, &have_cid, &cid),
                     PMIX_SUCCESS);
    assert_int_equal(nfinal, 2);
    assert_int_equal(final[0].rank, 0);
    assert_int_equal(final[1].rank, 2);
    free(final);
    /* a member no block reports (its server never answered for it) */
    load(&members[3], "ns", 3);
    assert_int_equal(rdp_srv_group_resolve(members, 4, &blk, 1, false, &final,
                                           &nfinal, &have_cid, &cid),
                     PMIX_ERR_PROC_TERM_WO_SYNC);
    rdp_srv_group_block_clear(&blk);
    rdp_buf_cleanup(&b);
}

/* Pack @a n votes of nspace "ns" (ranks, votes) and append them. */
static void add_votes(const pmix_rank_t *ranks, const uint8_t *kinds, size_t n,
                      rdp_srv_group_vote_t **votes, size_t *nvotes)
{
    rdp_srv_group_vote_t v[8];
    rdp_buf_t buf;

    assert_true(n <= 8);
    memset(v, 0, sizeof(v));
    for (size_t i = 0; i < n; i++) {
        load(&v[i].proc, "ns", ranks[i]);
        v[i].vote = kinds[i];
    }
    rdp_buf_init(&buf);
    assert_int_equal(rdp_srv_group_votes_pack(&buf, v, n), PMIX_SUCCESS);
    assert_int_equal(
        rdp_srv_group_votes_unpack(buf.data, buf.size, votes, nvotes),
        PMIX_SUCCESS);
    rdp_buf_cleanup(&buf);
}

static void members_of(pmix_proc_t *members, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        load(&members[r], "ns", (pmix_rank_t)r);
    }
}

/* Two servers' votes: the chooser with the lowest group rank leads,
 * whatever order the servers' votes come in. */
static void test_votes_choose_lowest(void **state)
{
    const pmix_rank_t a[] = {3, 1}, b[] = {2, 0};
    const uint8_t va[]          = {RDP_GROUP_VOTE_SELF, RDP_GROUP_VOTE_NONE};
    const uint8_t vb[]          = {RDP_GROUP_VOTE_SELF, RDP_GROUP_VOTE_NONE};
    rdp_srv_group_vote_t *votes = NULL;
    size_t n                    = 0;
    pmix_proc_t members[4], leader;

    (void)state;
    members_of(members, 4);
    add_votes(a, va, 2, &votes, &n);
    add_votes(b, vb, 2, &votes, &n);
    assert_int_equal(n, 4);
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, votes, n, &leader),
                     PMIX_SUCCESS);
    assert_int_equal(leader.rank, 2);
    free(votes);
    votes = NULL;
    n     = 0;
    add_votes(b, vb, 2, &votes, &n);
    add_votes(a, va, 2, &votes, &n);
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, votes, n, &leader),
                     PMIX_SUCCESS);
    assert_int_equal(leader.rank, 2);
    free(votes);
}

/* Nobody chooses itself, or one member aborts: the construct aborts. */
static void test_votes_abort(void **state)
{
    const pmix_rank_t r[]       = {1, 2, 3};
    const uint8_t none[]        = {RDP_GROUP_VOTE_NONE, RDP_GROUP_VOTE_NONE,
                                   RDP_GROUP_VOTE_NONE};
    const uint8_t mixed[]       = {RDP_GROUP_VOTE_SELF, RDP_GROUP_VOTE_ABORT,
                                   RDP_GROUP_VOTE_NONE};
    rdp_srv_group_vote_t *votes = NULL;
    size_t n                    = 0;
    pmix_proc_t members[4], leader;

    (void)state;
    members_of(members, 4);
    add_votes(r, none, 3, &votes, &n);
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, votes, n, &leader),
                     PMIX_GROUP_CONSTRUCT_ABORT);
    free(votes);
    votes = NULL;
    n     = 0;
    add_votes(r, mixed, 3, &votes, &n);
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, votes, n, &leader),
                     PMIX_GROUP_CONSTRUCT_ABORT);
    free(votes);
    /* no votes at all (every member gone) */
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, NULL, 0, &leader),
                     PMIX_GROUP_CONSTRUCT_ABORT);
}

/* A non-member's vote counts for nothing; a truncated block is refused. */
static void test_votes_strangers_and_truncation(void **state)
{
    const pmix_rank_t r[]       = {7, 1};
    const uint8_t v[]           = {RDP_GROUP_VOTE_SELF, RDP_GROUP_VOTE_NONE};
    rdp_srv_group_vote_t *votes = NULL, one;
    size_t n                    = 0;
    pmix_proc_t members[4], leader;
    rdp_buf_t buf;

    (void)state;
    members_of(members, 4);
    add_votes(r, v, 2, &votes, &n);
    assert_int_equal(rdp_srv_group_votes_resolve(members, 4, votes, n, &leader),
                     PMIX_GROUP_CONSTRUCT_ABORT);
    free(votes);
    votes = NULL;
    n     = 0;
    memset(&one, 0, sizeof(one));
    load(&one.proc, "ns", 1);
    rdp_buf_init(&buf);
    assert_int_equal(rdp_srv_group_votes_pack(&buf, &one, 1), PMIX_SUCCESS);
    assert_true(rdp_srv_group_votes_unpack(buf.data, buf.size - 1, &votes, &n)
                != PMIX_SUCCESS);
    assert_int_equal(n, 0);
    free(votes);
    rdp_buf_cleanup(&buf);
}

/* Entries are found from where the last lookup ended, in any order,
 * wrapping around; a proc no block reports is not found (and leaves the
 * cursor where it was); the nspace counts, not only the rank. */
static void test_find_entry_cursor(void **state)
{
    const pmix_rank_t r0[] = {0, 2, 4}, r1[] = {1, 3};
    const bool yes[] = {true, true, true};
    rdp_srv_group_block_t blk[2];
    rdp_buf_t b0, b1;
    const pmix_rank_t order[] = {0, 2, 4, 1, 3, 3, 1, 4, 0, 2};
    const rdp_srv_group_entry_t *e;
    pmix_proc_t p;
    size_t at = 0, was;

    (void)state;
    make_block(0, false, 0, r0, yes, 3, &b0, &blk[0]);
    make_block(1, false, 0, r1, yes, 2, &b1, &blk[1]);
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        load(&p, "ns", order[i]);
        e = rdp_srv_group_find_entry(blk, 2, &p, &at);
        assert_non_null(e);
        assert_int_equal(e->proc.rank, order[i]);
        assert_true(at >= 1 && at <= 5);
        /* without a cursor: the same entry */
        assert_ptr_equal(rdp_srv_group_find_entry(blk, 2, &p, NULL), e);
    }
    was = at;
    load(&p, "ns", 5);
    assert_null(rdp_srv_group_find_entry(blk, 2, &p, &at));
    assert_int_equal(at, was);
    load(&p, "other", 2);
    assert_null(rdp_srv_group_find_entry(blk, 2, &p, &at));
    /* a cursor past the end still finds everything */
    at = 7;
    load(&p, "ns", 0);
    e = rdp_srv_group_find_entry(blk, 2, &p, &at);
    assert_non_null(e);
    assert_int_equal(e->proc.rank, 0);
    assert_int_equal(at, 1);
    rdp_srv_group_block_clear(&blk[0]);
    rdp_srv_group_block_clear(&blk[1]);
    rdp_buf_cleanup(&b0);
    rdp_buf_cleanup(&b1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cid_make),
        cmocka_unit_test(test_roundtrip_with_info_and_bundle),
        cmocka_unit_test(test_piecewise_pack),
        cmocka_unit_test(test_membership_order),
        cmocka_unit_test(test_cid_lowest_server),
        cmocka_unit_test(test_member_missing),
        cmocka_unit_test(test_votes_choose_lowest),
        cmocka_unit_test(test_votes_abort),
        cmocka_unit_test(test_votes_strangers_and_truncation),
        cmocka_unit_test(test_find_entry_cursor),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
