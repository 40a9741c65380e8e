/* run_client_board.c - run_client nodes board|boardmix: whole-job fences
 * (answered through the server's fence board where both sides can; rank 1
 * connects a second late) with new data every round, more rounds than the board has slots, results
 * inline and in shared memory, two fences in flight, and a fence that
 * fails for everybody (one rank comes too late) */
#include "run_client.h"

#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BOARD_ROUNDS 150 /* > 2 x RDP_BCAST_SLOTS: every slot reused */
#define BOARD_BIG    (70 * 1024)

bool is_board_mode(const char *mode)
{
    return strcmp(mode, "board") == 0 || strcmp(mode, "boardmix") == 0;
}

void board_setenv(const char *mode)
{
    const char *rank = getenv("PMIX_RANK");

    /* boardmix: odd ranks never open the board (answered by message) */
    if (strcmp(mode, "boardmix") == 0 && rank != NULL && atoi(rank) % 2 == 1) {
        setenv("RDPMIX_FENCE_BOARD", "0", 1);
    }
    /* rank 1 connects late: the others' first fence waits for it */
    if (rank != NULL && atoi(rank) == 1) {
        sleep(1);
    }
}

static char board_byte(unsigned round, pmix_rank_t rank)
{
    return (char)('a' + (round * 7 + rank) % 26);
}

static size_t board_len(unsigned round)
{
    return round % 5 == 4 ? BOARD_BIG : 8 + round;
}

static void board_put(const char *key, unsigned round)
{
    size_t len = board_len(round);
    pmix_value_t val;
    pmix_status_t rc;

    val.type          = PMIX_BYTE_OBJECT;
    val.data.bo.size  = len;
    val.data.bo.bytes = malloc(len);
    if (val.data.bo.bytes == NULL) {
        fail("out of memory");
    }
    memset(val.data.bo.bytes, board_byte(round, me.rank), len);
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    free(val.data.bo.bytes);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
    }
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));
    }
}

static void board_check(const char *key, unsigned round, unsigned size)
{
    size_t len = board_len(round);

    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        pmix_value_t *val;

        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        val = get(&peer, key);
        if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len) {
            fail("round %u: rank %u's %s has %zu bytes, not %zu", round, r, key,
                 val->type == PMIX_BYTE_OBJECT ? val->data.bo.size : 0, len);
        }
        for (size_t i = 0; i < len; i++) {
            if (val->data.bo.bytes[i] != board_byte(round, r)) {
                fail("round %u: rank %u's %s is not this round's", round, r,
                     key);
            }
        }
        PMIX_VALUE_RELEASE(val);
    }
}

typedef struct nb_done {
    volatile int done;
    pmix_status_t status;
    int order;
} nb_done_t;

static volatile int nb_order;

static void nb_cb(pmix_status_t status, void *cbdata)
{
    nb_done_t *d = cbdata;

    d->status = status;
    d->order  = __atomic_add_fetch(&nb_order, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

/* Two collecting fences posted before either completes; the second's
 * data is committed between them, so it must be what Get sees. */
static void two_in_flight(unsigned size)
{
    pmix_info_t info;
    bool yes    = true;
    nb_done_t a = {0}, b = {0};
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    board_put("rdpmix.test.bd.nb", 1000);
    rc = PMIx_Fence_nb(NULL, 0, &info, 1, nb_cb, &a);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence_nb (first): %s", PMIx_Error_string(rc));
    }
    board_put("rdpmix.test.bd.nb", 1001);
    rc = PMIx_Fence_nb(NULL, 0, &info, 1, nb_cb, &b);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence_nb (second): %s", PMIx_Error_string(rc));
    }
    PMIX_INFO_DESTRUCT(&info);
    while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)
           || !__atomic_load_n(&b.done, __ATOMIC_ACQUIRE)) {
        usleep(1000);
    }
    if (a.status != PMIX_SUCCESS || b.status != PMIX_SUCCESS) {
        fail("fences in flight: %s, %s", PMIx_Error_string(a.status),
             PMIx_Error_string(b.status));
    }
    if (a.order != 1 || b.order != 2) {
        fail("fences in flight completed out of order");
    }
    board_check("rdpmix.test.bd.nb", 1001, size);
}

/* A collecting Fence_nb still in flight when a blocking collecting fence
 * starts: the library's thread watches the board for the first while the
 * caller watches it for the second, and either may complete the second
 * (exactly once; its data is what Get sees afterwards). */
static void nb_then_blocking(unsigned size)
{
    pmix_info_t info;
    bool yes    = true;
    nb_done_t a = {0};
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    for (unsigned k = 0; k < 20; k++) {
        memset(&a, 0, sizeof(a));
        nb_order = 0;
        board_put("rdpmix.test.bd.mix", 2000 + 2 * k);
        rc = PMIx_Fence_nb(NULL, 0, &info, 1, nb_cb, &a);
        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Fence_nb (mixed): %s", PMIx_Error_string(rc));
        }
        board_put("rdpmix.test.bd.mix", 2001 + 2 * k);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Fence after a Fence_nb: %s", PMIx_Error_string(rc));
        }
        while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
            usleep(1000);
        }
        if (a.status != PMIX_SUCCESS) {
            fail("Fence_nb before a PMIx_Fence: %s",
                 PMIx_Error_string(a.status));
        }
        board_check("rdpmix.test.bd.mix", 2001 + 2 * k, size);
        fence_collect(0);
    }
    PMIX_INFO_DESTRUCT(&info);
}

/* The last rank arrives after the others' PMIX_TIMEOUT: everybody gets
 * the timeout (the others through the board, the late one on arrival). */
static void timed_out(unsigned size)
{
    pmix_info_t info;
    int tmo = 1;
    pmix_status_t rc;

    if (me.rank == size - 1) {
        sleep(3);
    }
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_INT);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    expect_status("the fence a rank came too late to", rc, PMIX_ERR_TIMEOUT);
}

void board_main(unsigned size)
{
    for (unsigned round = 0; round < BOARD_ROUNDS; round++) {
        board_put("rdpmix.test.bd.data", round);
        fence_collect(1);
        board_check("rdpmix.test.bd.data", round, size);
        /* nobody commits the next round while a peer still reads */
        fence_collect(0);
    }
    two_in_flight(size);
    fence_collect(0);
    nb_then_blocking(size);
    if (size > 1) {
        timed_out(size);
    }
    /* and fences go on afterwards */
    board_put("rdpmix.test.bd.data", 7);
    fence_collect(1);
    board_check("rdpmix.test.bd.data", 7, size);
    fence_collect(0);
}
