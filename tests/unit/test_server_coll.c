/* test_server_coll.c - tracker keys; xchg and p2p without the engine */
#include "config.h"
#include "core/server/server_int.h"
#include "core/server/connect.h"
#include "core/server/coll.h"
#include "core/server/p2p.h"

#include <rdpmix.h>

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

/* Signature of a participant list after canonicalization. */
static void sig_of(uint8_t op, pmix_proc_t *procs, size_t n, uint8_t **sig_p,
                   size_t *len_p)
{
    n = rdp_srv_procs_canonical(procs, n);
    assert_int_equal(rdp_srv_coll_signature(op, procs, n, sig_p, len_p),
                     PMIX_SUCCESS);
}

static bool same_sig(uint8_t opa, pmix_proc_t *a, size_t na, uint8_t opb,
                     pmix_proc_t *b, size_t nb)
{
    uint8_t *sa, *sb;
    size_t la, lb;
    bool eq;

    sig_of(opa, a, na, &sa, &la);
    sig_of(opb, b, nb, &sb, &lb);
    eq = la == lb && memcmp(sa, sb, la) == 0;
    free(sa);
    free(sb);
    return eq;
}

static void canonical_sorts_and_dedups(void **state)
{
    pmix_proc_t p[5];
    size_t n;

    load(&p[0], "b", 1);
    load(&p[1], "a", 2);
    load(&p[2], "a", 0);
    load(&p[3], "a", 2);
    load(&p[4], "b", 1);
    n = rdp_srv_procs_canonical(p, 5);
    assert_int_equal(n, 3);
    assert_string_equal(p[0].nspace, "a");
    assert_int_equal(p[0].rank, 0);
    assert_int_equal(p[1].rank, 2);
    assert_string_equal(p[2].nspace, "b");
    assert_int_equal(rdp_srv_procs_canonical(p, 0), 0);
}

static void wildcard_covers_its_nspace(void **state)
{
    pmix_proc_t p[4];
    size_t n;

    load(&p[0], "a", 3);
    load(&p[1], "a", PMIX_RANK_WILDCARD);
    load(&p[2], "a", 0);
    load(&p[3], "c", 5);
    n = rdp_srv_procs_canonical(p, 4);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].nspace, "a");
    assert_int_equal(p[0].rank, PMIX_RANK_WILDCARD);
    assert_string_equal(p[1].nspace, "c");
}

static void order_does_not_change_the_key(void **state)
{
    pmix_proc_t a[3], b[3];

    load(&a[0], "job", 0);
    load(&a[1], "job", 1);
    load(&a[2], "other", 7);
    load(&b[0], "other", 7);
    load(&b[1], "job", 1);
    load(&b[2], "job", 0);
    assert_true(same_sig(1, a, 3, 1, b, 3));
}

static void different_sets_and_ops_get_different_keys(void **state)
{
    pmix_proc_t a[2], b[2];

    load(&a[0], "job", 0);
    load(&a[1], "job", 1);
    load(&b[0], "job", 0);
    load(&b[1], "job", 2);
    assert_false(same_sig(1, a, 2, 1, b, 2));

    load(&a[0], "job", 0);
    load(&a[1], "job", 1);
    load(&b[0], "job", 0);
    load(&b[1], "job", 1);
    assert_false(same_sig(1, a, 2, 2, b, 2)); /* fence vs connect */

    /* a subset is another set */
    load(&a[0], "job", 0);
    load(&b[0], "job", 0);
    load(&b[1], "job", 1);
    assert_false(same_sig(1, a, 1, 1, b, 2));

    /* nspace boundaries are unambiguous */
    load(&a[0], "ab", 0);
    load(&b[0], "a", 0);
    load(&b[1], "b", 0);
    assert_false(same_sig(1, a, 1, 1, b, 2));

    /* WILDCARD is not rank 0 */
    load(&a[0], "job", PMIX_RANK_WILDCARD);
    load(&b[0], "job", 0);
    assert_false(same_sig(1, a, 1, 1, b, 1));
}

static void wildcard_and_explicit_ranks_share_a_key(void **state)
{
    pmix_proc_t a[1], b[3];

    load(&a[0], "job", PMIX_RANK_WILDCARD);
    load(&b[0], "job", 4);
    load(&b[1], "job", PMIX_RANK_WILDCARD);
    load(&b[2], "job", 1);
    assert_true(same_sig(1, a, 1, 1, b, 3));
}

/* The first sequence key of (connect, ns:*) with id @a id (NULL: none)
 * for a fresh client. */
static void sig_with_id(const char *id, uint8_t **key_p, size_t *len_p)
{
    rdp_srv_client_t client;
    pmix_proc_t p;

    memset(&client, 0, sizeof(client));
    assert_int_equal(rdp_hash_init(&client.coll_seq, 8), PMIX_SUCCESS);
    load(&p, "ns", PMIX_RANK_WILDCARD);
    assert_int_equal(rdp_srv_coll_key_seq_id(&client, RDP_SRV_COLL_CONNECT, &p,
                                             1, id, id != NULL ? strlen(id) : 0,
                                             key_p, len_p),
                     PMIX_SUCCESS);
    rdp_hash_cleanup(&client.coll_seq);
}

static void connect_ids_get_keys_of_their_own(void **state)
{
    const char *ids[] = {NULL, "A", "B", "AB"};
    uint8_t *sig[4];
    size_t len[4];

    (void)state;
    for (int i = 0; i < 4; i++) {
        sig_with_id(ids[i], &sig[i], &len[i]);
    }
    for (int i = 0; i < 4; i++) {
        for (int j = i + 1; j < 4; j++) {
            assert_false(len[i] == len[j]
                         && memcmp(sig[i], sig[j], len[i]) == 0);
        }
    }
    for (int i = 0; i < 4; i++) {
        free(sig[i]);
    }
}

static pmix_status_t dirs_of(const char *key, const void *val,
                             pmix_data_type_t type, rdp_srv_cnct_dirs_t *d)
{
    pmix_info_t info;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, key, val, type);
    rc = rdp_srv_connect_dirs(&info, 1, d);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void connect_directives_are_checked(void **state)
{
    rdp_srv_cnct_dirs_t d = {0};
    pmix_info_t info[3];
    bool t  = true;
    int one = 1;

    (void)state;
    assert_int_equal(dirs_of(RDPMIX_CONNECT_ID, &one, PMIX_INT, &d),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(dirs_of(RDPMIX_CONNECT_ID, "", PMIX_STRING, &d),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(dirs_of(RDPMIX_CONNECT_NOTIFY_EACH, "y", PMIX_STRING, &d),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(dirs_of(RDPMIX_CONNECT_OPTIONAL, &t, PMIX_BOOL, &d),
                     PMIX_SUCCESS);
    assert_true(d.optional);
    assert_int_equal(dirs_of(RDPMIX_CONNECT_OPTIONAL, "y", PMIX_STRING, &d),
                     PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], RDPMIX_CONNECT_ID, "x", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], RDPMIX_CONNECT_NOTIFY_REQ, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_TIMEOUT, &one, PMIX_INT);
    assert_int_equal(rdp_srv_connect_dirs(info, 3, &d), PMIX_SUCCESS);
    assert_string_equal(d.id, "x");
    assert_true(d.notify_req);
    assert_false(d.notify_each);
    for (int i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

/* Keys of operations named by an id (connect, groups): the signature of
 * (op, procs), then 8 bytes that only the id decides, where xchg.c reads
 * the operation's number. */
static void id_keys_end_with_the_id(void **state)
{
    pmix_proc_t p[2];
    uint8_t *ka, *kb, *kc, *sig;
    size_t la, lb, lc, siglen;

    load(&p[0], "job", 0);
    load(&p[1], "job", 1);
    assert_int_equal(rdp_srv_coll_key_id(RDP_SRV_COLL_CONNECT, p, 2, "id-a", 4,
                                         &ka, &la),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_coll_key_id(RDP_SRV_COLL_CONNECT, p, 2, "id-b", 4,
                                         &kb, &lb),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_coll_key_id(RDP_SRV_COLL_CONNECT, p, 2, "id-a", 4,
                                         &kc, &lc),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_srv_coll_signature(RDP_SRV_COLL_CONNECT, p, 2, &sig,
                                            &siglen),
                     PMIX_SUCCESS);
    assert_int_equal(la, siglen + 8);
    assert_int_equal(lb, la);
    assert_memory_equal(ka, sig, siglen);
    assert_memory_equal(kb, sig, siglen);
    assert_memory_not_equal(ka + siglen, kb + siglen, 8);
    assert_int_equal(lc, la);
    assert_memory_equal(ka, kc, la);
    free(ka);
    free(kb);
    free(kc);
    free(sig);
}

/* Without the engine: no exchange, no channel traffic, and bad channels
 * are refused. */
static void no_engine_no_exchange(void **state)
{
    static const rdp_srv_p2p_handler_t h = {0};
    rdp_buf_t buf;

    assert_int_equal(rdp_srv_xchg_me(), UINT32_MAX);
    assert_int_equal(rdp_srv_xchg_nservers(), 0);
    assert_false(rdp_srv_xchg_cancel(1, PMIX_ERR_TIMEOUT));
    assert_null(rdp_srv_p2p_batch(0, RDP_SRV_CH_DMDX_REQ));
    rdp_buf_init(&buf);
    assert_int_equal(rdp_srv_p2p_send(0, RDP_SRV_CH_DEPART, &buf),
                     PMIX_ERR_INIT);
    assert_int_equal(rdp_srv_p2p_register(0, &h), PMIX_ERR_BAD_PARAM);
    assert_int_equal(rdp_srv_p2p_register(RDP_SRV_CH_MAX, &h),
                     PMIX_ERR_BAD_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_sorts_and_dedups),
        cmocka_unit_test(wildcard_covers_its_nspace),
        cmocka_unit_test(order_does_not_change_the_key),
        cmocka_unit_test(different_sets_and_ops_get_different_keys),
        cmocka_unit_test(wildcard_and_explicit_ranks_share_a_key),
        cmocka_unit_test(connect_ids_get_keys_of_their_own),
        cmocka_unit_test(connect_directives_are_checked),
        cmocka_unit_test(id_keys_end_with_the_id),
        cmocka_unit_test(no_engine_no_exchange),
    };

    return cmocka_run_group_tests_name("server_coll", tests, NULL, NULL);
}
