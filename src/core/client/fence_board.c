/* fence_board.c - whole-job fences answered through the job's board */
#include "config.h"
#include "core/client/client_int.h"
#include "core/ipc/bcast.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/wire/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/*
 * A server that sets RDP_ENV_FENCE_BOARD hands its clients the job's
 * eventfd and board (core/ipc/bcast.h).  The loop watches the eventfd
 * edge-triggered; each wake-up looks up the whole-job fences in flight in
 * the board.  A fence the server answered on the socket instead completes
 * the usual way and is forgotten here.  Loop thread only, but for the
 * tickets below.
 *
 * A blocking PMIx_Fence waits on the board itself (a ticket): its thread
 * watches the eventfd in an epoll set of its own (edge-triggered, so the
 * count nobody reads does not keep it awake) with a private eventfd the
 * loop writes when it completes the fence instead, and stores the result
 * and returns as soon as the board shows it: one thread woken per client
 * instead of the loop thread and then the caller.  The loop stops
 * watching the eventfd while every fence it waits for has a ticket.
 *
 * The epoll set and the private eventfd are the thread's (a waiter), made
 * once: by PMIx_Init for its caller, else by the thread's first blocking
 * fence.  The board's eventfd joins every waiter's set when the board
 * opens (board_reply, or a waiter made later) and leaves it before it is
 * closed (rdp_client_board_close, which also frees the idle waiters; one
 * in use is freed by its thread when its fence ends); a thread's waiter is
 * freed when the thread exits.  A fence so costs no descriptor and no
 * set-up call: made per fence, they were 6 calls more than waiting for the
 * loop thread, and the set's first wait returned at once (the eventfd's
 * count, never read, is an edge to a new set), which made the one-shot
 * fence slower with tickets (bench/RESULTS.md, helper board6).
 * Whoever claims the ticket first (under bd_lock) completes the fence:
 * TK_CALLER, the caller stored the result, and the loop later only drops
 * the request (its callback, ticket_cb, then does nothing); TK_LOOP, the
 * loop stores it and ticket_cb hands the status to the caller (TK_FINAL).
 * A fence answered by message, failed or timed out ends in ticket_cb.
 *
 * Invariants (every interleaving is forced by a test in
 * tests/unit/test_client_api.c, board_*, through RDP_BOARD_HOOK):
 * 1. One claim: WAITING -> CALLER or WAITING -> LOOP, only under bd_lock;
 *    only the claimer stores (the caller under the lock), so a fence is
 *    stored and completed exactly once.  The request ending any other way
 *    (reply, error, timeout, lost connection) claims it for the loop too
 *    (rdp_client_board_ticket_claim, fence_finish).
 * 2. In order: the caller stores fence n only when no earlier waited-for
 *    fence is unstored (earlier_open); the loop stores from the head of
 *    bd.waits (sorted by n) and stops at the first the board does not
 *    show; a fence leaving the list otherwise rechecks after its callback.
 * 3. No lost wake-up: the caller's epoll holds the board's eventfd before
 *    the fence is posted; it checks under bd_lock and sleeps after
 *    unlocking, and everything that can let it proceed (a publish, ticket_cb,
 *    an earlier fence leaving bd.waits: nudge_after) leaves an event in
 *    its set.  EINTR only makes it look again.
 * 4. A ticket in bd.waits is alive: the entry leaves the list before the
 *    request's callback drops the request's reference.  bd.waits changes
 *    (and grows) only under bd_lock; the loop reads it without.
 * 5. A fence's slot is not reused while its entry is in bd.waits (the
 *    "done" of later requests stays below it); entries leave after the
 *    claimer's store (board_reap for the caller's).
 */

enum {
    TK_WAITING,
    TK_LOOP,
    TK_CALLER,
    TK_FINAL
};

struct rdp_board_ticket {
    int refs;   /* the caller's and the request's */
    int state;  /* TK_* */
    int have_n; /* the fence went to the server on the board as n */
    uint64_t n;
    pmix_status_t status;   /* TK_FINAL */
    struct board_waiter *w; /* its caller's: woken by ticket_cb */
};

/* A thread's means to sleep until the board or the loop wakes it. */
typedef struct board_waiter {
    struct board_waiter *next; /* in waiters (bd_lock) */
    int ep_fd;                 /* wake_fd, and efd edge-triggered */
    int wake_fd;               /* written by the loop for its ticket */
    int efd;                   /* the board's eventfd in ep_fd, or -1 */
    int busy;                  /* its thread waits for a fence */
    int orphan;                /* released while busy: its thread frees it */
} board_waiter_t;

enum {
    EV_WAKE, /* epoll data of wake_fd */
    EV_BOARD /* of the board's eventfd */
};

typedef struct board_wait {
    uint64_t n;
    uint32_t tag;
    rdp_board_ticket_t *ticket; /* a caller waits on the board too */
} board_wait_t;

/* bd.board, bd.efd, bd.pid, changes to bd.waits (the loop reads it
 * without) and every ticket's fields; held while storing a result (the
 * store's lock inside it), never taken inside the store's lock.  A caller
 * completes its fence only when every earlier fence on the board is
 * stored, so results are stored in order. */
static pthread_mutex_t bd_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef RDP_TEST_HOOKS
void (*rdp_client_board_hook)(rdp_board_point_t at, uint64_t n);
#endif
static uint64_t caller_done; /* fences the caller completed (bd_lock) */

/* Every thread's waiter (bd_lock); waiter_gen changes when they are all
 * released, which makes every thread's my_waiter stale (never read then). */
static board_waiter_t *waiters;
static uint64_t waiter_gen = 1;
static __thread board_waiter_t *my_waiter;
static __thread uint64_t my_gen;
static pthread_once_t waiter_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t waiter_key;
static int waiter_key_ok;

static struct {
    const rdp_bcast_board_t *board;
    pid_t pid;
    int efd;
    rdp_fdwatch_t *watch;
    uint64_t base; /* the server's count of them before we connected */
    uint64_t sent; /* whole-job fences asked for since we connected */
    board_wait_t *waits;
    size_t nwaits, cap;
} bd = {.efd = -1};

static void waiter_free(board_waiter_t *w)
{
    close(w->ep_fd);
    close(w->wake_fd);
    rdp_free(w);
}

/* Put the board's eventfd into @a w's set (bd_lock). */
static int waiter_watch_board(board_waiter_t *w)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = EV_BOARD};

    if (w->efd >= 0 || bd.efd < 0) {
        return w->efd >= 0;
    }
    if (epoll_ctl(w->ep_fd, EPOLL_CTL_ADD, bd.efd, &ev) != 0) {
        rdp_log_debug(CLIENT, "cannot watch the fence board: %m");
        return 0;
    }
    w->efd = bd.efd;
    return 1;
}

/* Release every waiter: unlink them, free those not in use (bd_lock). */
static void waiters_release(void)
{
    while (waiters != NULL) {
        board_waiter_t *w = waiters;

        waiters = w->next;
        if (w->efd >= 0) {
            /* a set keeps a descriptor it watches while the file lives
             * (the server holds the eventfd too): take it out first */
            epoll_ctl(w->ep_fd, EPOLL_CTL_DEL, w->efd, NULL);
            w->efd = -1;
        }
        if (w->busy > 0) {
            w->orphan = 1;
        } else {
            waiter_free(w);
        }
    }
    waiter_gen++;
}

void rdp_client_board_close(void)
{
    pthread_mutex_lock(&bd_lock);
    waiters_release();
    rdp_fdwatch_destroy(bd.watch);
    if (bd.efd >= 0) {
        close(bd.efd);
    }
    rdp_bcast_unmap(bd.board);
    rdp_free(bd.waits); /* the requests of tickets end with the connection */
    memset(&bd, 0, sizeof(bd));
    bd.efd = -1;
    pthread_mutex_unlock(&bd_lock);
}

/* The loop watches the eventfd only for fences without a ticket. */
static void board_watch_update(void)
{
    for (size_t i = 0; i < bd.nwaits; i++) {
        if (bd.waits[i].ticket == NULL) {
            rdp_fdwatch_enable(bd.watch);
            return;
        }
    }
    rdp_fdwatch_disable(bd.watch);
}

/* Wake the callers of fences after @a n: they may wait for it
 * (bd_lock held). */
static void nudge_after(uint64_t n)
{
    uint64_t one = 1;

    for (size_t i = 0; i < bd.nwaits; i++) {
        rdp_board_ticket_t *t = bd.waits[i].ticket;

        if (t != NULL && bd.waits[i].n > n && t->state == TK_WAITING
            && write(t->w->wake_fd, &one, sizeof(one)) < 0) {
            rdp_log_error(CLIENT, "cannot wake a fence's caller: %m");
        }
    }
}

static void waits_remove(size_t i)
{
    uint64_t n = bd.waits[i].n;

    pthread_mutex_lock(&bd_lock);
    memmove(&bd.waits[i], &bd.waits[i + 1],
            (bd.nwaits - i - 1) * sizeof(*bd.waits));
    bd.nwaits--;
    nudge_after(n);
    pthread_mutex_unlock(&bd_lock);
}

/* Whether a fence before @a n on the board is not stored yet (bd_lock). */
static int earlier_open(uint64_t n)
{
    for (size_t i = 0; i < bd.nwaits; i++) {
        const rdp_board_ticket_t *t = bd.waits[i].ticket;

        if (bd.waits[i].n < n && (t == NULL || t->state != TK_CALLER)) {
            return 1;
        }
    }
    return 0;
}

/* The bundle fence @a n's slot names: copied from the slot's data area,
 * or mapped from the server's memfd, and stored. */
static pmix_status_t take_slot(uint64_t n, const rdp_bcast_slot_t *slot)
{
    int32_t status = slot->status;
    int32_t fd     = slot->fd;
    uint64_t size  = slot->size;
    int lfd;

    RDP_BOARD_HOOK(RDP_BOARD_AT_STORE, n);
    if (status != PMIX_SUCCESS || fd == -1) {
        return status;
    }
    if (fd == RDP_BCAST_FD_INLINE) {
        if (size == 0 || size > RDP_BCAST_DATA) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        return rdp_client_fence_keep(rdp_bcast_data(bd.board, n), (size_t)size,
                                     0);
    }
    if (fd < 0 || size == 0 || size > SIZE_MAX) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    lfd = rdp_bcast_open_remote(bd.pid, fd);
    if (lfd < 0) {
        rdp_log_error(CLIENT,
                      "cannot open the fence result of server "
                      "pid %d: %m",
                      (int)bd.pid);
        return PMIX_ERR_UNREACH;
    }
    return rdp_client_fence_keep_fd(lfd, (size_t)size);
}

/* Loop: drop the requests of fences their callers completed. */
static void board_reap(void)
{
    size_t i = 0;

    while (i < bd.nwaits) {
        board_wait_t w = bd.waits[i];
        int mine;

        if (w.ticket == NULL) {
            i++;
            continue;
        }
        pthread_mutex_lock(&bd_lock);
        mine = w.ticket->state == TK_CALLER;
        pthread_mutex_unlock(&bd_lock);
        if (!mine) {
            i++;
            continue;
        }
        waits_remove(i);
        /* ticket_cb ignores it; fence_finish forgets n (gone already) */
        rdp_client_request_complete(w.tag, PMIX_SUCCESS);
        i = 0;
    }
}

/* Loop: claim fence @a w for the loop unless its caller has. */
static int loop_claims(const board_wait_t *w)
{
    int ok = 1;

    if (w->ticket != NULL) {
        pthread_mutex_lock(&bd_lock);
        ok = w->ticket->state == TK_WAITING;
        if (ok) {
            w->ticket->state = TK_LOOP;
        }
        pthread_mutex_unlock(&bd_lock);
    }
    return ok;
}

static void board_check(void)
{
    board_reap();
    /* waits are in fence order: stop at the first the board does not show
     * yet, so that results are stored in fence order (a later fence's
     * result must not be overwritten by an earlier one's) */
    while (bd.nwaits > 0 && bd.board != NULL) {
        const rdp_bcast_slot_t *slot;
        board_wait_t w       = bd.waits[0];
        pmix_status_t status = PMIX_SUCCESS;

        RDP_BOARD_HOOK(RDP_BOARD_AT_LOOP_LOOKS, w.n);
        if (!rdp_bcast_ready(bd.board, w.n, &slot)) {
            break;
        }
        if (rdp_client_request_pending(w.tag) && loop_claims(&w)) {
            status = take_slot(w.n, slot);
        }
        waits_remove(0); /* after the store: later callers wait for it */
        if (rdp_client_request_pending(w.tag)) {
            /* its callback may start fences: the list may change */
            rdp_client_request_complete(w.tag, status);
        }
    }
    if (bd.watch != NULL) {
        board_watch_update();
    }
}

static void board_wake(int fd, int events, void *arg)
{
    (void)fd;
    (void)events;
    (void)arg;
    board_check(); /* never read: the other clients' epoll needs the count */
}

static void board_reply(pmix_status_t status, rdp_rbuf_t *rb, void *arg)
{
    uint64_t cookie[2], base;
    uint32_t pid;
    int32_t bfd;
    int efd                        = -1;
    const rdp_bcast_board_t *board = NULL;

    (void)arg;
    if (status == PMIX_SUCCESS && rb != NULL && rdp_client.conn != NULL) {
        efd    = rdp_ipc_conn_take_fd(rdp_client.conn);
        status = rdp_unpack_u32(rb, &pid);
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_i32(rb, &bfd);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &cookie[0]);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &cookie[1]);
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_unpack_u64(rb, &base);
        }
        if (status == PMIX_SUCCESS && efd < 0) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status == PMIX_SUCCESS) {
            status = rdp_bcast_map((pid_t)pid, bfd, cookie, &board);
        }
        if (status == PMIX_SUCCESS) {
            status =
                rdp_fdwatch_create(rdp_rt.loop, efd, RDP_FD_READ | RDP_FD_EDGE,
                                   board_wake, NULL, &bd.watch);
        }
    } else if (status == PMIX_SUCCESS) {
        status = PMIX_ERR_UNREACH;
    }
    if (status != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "fences answered by message: %s",
                      rdp_status_name(status));
        rdp_bcast_unmap(board);
        rdp_fdwatch_destroy(bd.watch);
        bd.watch = NULL;
        if (efd >= 0) {
            close(efd);
        }
        return;
    }
    pthread_mutex_lock(&bd_lock);
    bd.board = board;
    bd.pid   = (pid_t)pid;
    bd.efd   = efd;
    for (board_waiter_t *w = waiters; w != NULL; w = w->next) {
        waiter_watch_board(w); /* else its thread's fences wait the usual way */
    }
    pthread_mutex_unlock(&bd_lock);
    bd.base = base; /* the fences sent meanwhile came after the request */
    board_watch_update();
}

/* Whether this client asks its server for the board. */
static int board_wanted(void)
{
    const char *env = getenv(RDP_ENV_FENCE_BOARD);

    return env != NULL && strcmp(env, "1") == 0
           && rdp_cfg_bool(RDP_CFG_FENCE_BOARD) && rdp_rt.loop != NULL
           && rdp_loop_has_edge(rdp_rt.loop);
}

void rdp_client_board_open(void)
{
    rdp_buf_t buf;

    if (!board_wanted()) {
        return;
    }
    rdp_buf_init(&buf);
    if (rdp_client_request(RDP_CMD_FENCE_BOARD, &buf, 0, board_reply, NULL)
        != PMIX_SUCCESS) {
        rdp_log_debug(CLIENT, "cannot ask for the fence board");
    }
}

int rdp_client_board_tail(rdp_buf_t *payload, uint64_t *n_p)
{
    uint64_t n    = bd.base + bd.sent++;
    uint64_t done = n;

    *n_p = n;
    if (bd.watch == NULL) {
        return 0;
    }
    board_reap(); /* their slots are free for the server to reuse */
    if (bd.nwaits == bd.cap) {
        size_t cap = bd.cap == 0 ? 4 : 2 * bd.cap;
        board_wait_t *more;

        /* under the lock: a caller may be reading the old array */
        pthread_mutex_lock(&bd_lock);
        more = rdp_realloc(bd.waits, cap * sizeof(*more));
        if (more != NULL) {
            bd.waits = more;
            bd.cap   = cap;
        }
        pthread_mutex_unlock(&bd_lock);
        if (more == NULL) {
            return 0; /* this one by message */
        }
    }
    /* every fence below the oldest still waiting has completed */
    for (size_t i = 0; i < bd.nwaits; i++) {
        if (bd.waits[i].n < done) {
            done = bd.waits[i].n;
        }
    }
    if (rdp_pack_u64(payload, n) != PMIX_SUCCESS
        || rdp_pack_u64(payload, done) != PMIX_SUCCESS) {
        return -1;
    }
    return 1;
}

void rdp_client_board_wait(uint64_t n, uint32_t tag, rdp_board_ticket_t *ticket)
{
    /* room was made by rdp_client_board_tail */
    pthread_mutex_lock(&bd_lock);
    bd.waits[bd.nwaits].n      = n;
    bd.waits[bd.nwaits].tag    = tag;
    bd.waits[bd.nwaits].ticket = ticket;
    bd.nwaits++;
    pthread_mutex_unlock(&bd_lock);
    board_check();
}

int rdp_client_board_forget(uint64_t n)
{
    for (size_t i = 0; i < bd.nwaits; i++) {
        if (bd.waits[i].n == n) {
            waits_remove(i);
            return 1;
        }
    }
    return 0;
}

void rdp_client_board_recheck(void)
{
    board_check();
}

/* ---- tickets: a blocking fence completed by its own thread ---- */

static void ticket_unref(rdp_board_ticket_t *t)
{
    if (--t->refs == 0) {
        rdp_free(t);
    }
}

/* Thread exit: free the thread's waiter unless all were released. */
static void waiter_thread_exit(void *arg)
{
    pthread_mutex_lock(&bd_lock);
    if (arg == my_waiter && my_gen == waiter_gen) {
        board_waiter_t **pp = &waiters;

        while (*pp != NULL && *pp != my_waiter) {
            pp = &(*pp)->next;
        }
        if (*pp != NULL) {
            *pp = my_waiter->next;
            waiter_free(my_waiter);
        }
    }
    my_waiter = NULL;
    pthread_mutex_unlock(&bd_lock);
}

static void waiter_key_create(void)
{
    waiter_key_ok = pthread_key_create(&waiter_key, waiter_thread_exit) == 0;
}

/* Open MPI reaches this library through a component it dlcloses in
 * MPI_Finalize; a thread that fenced and exits after that must not call
 * waiter_thread_exit, which is gone with the library.  Its waiter's
 * descriptors are left to the process. */
__attribute__((destructor)) static void waiter_key_unload(void)
{
    if (waiter_key_ok) {
        pthread_key_delete(waiter_key);
        waiter_key_ok = 0;
    }
}

/* The calling thread's waiter, made if it has none (bd_lock). */
static board_waiter_t *waiter_get(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = EV_WAKE};
    board_waiter_t *w;

    if (my_waiter != NULL && my_gen == waiter_gen) {
        return my_waiter;
    }
    pthread_once(&waiter_key_once, waiter_key_create);
    if (!waiter_key_ok) {
        return NULL; /* it could not be freed when the thread exits */
    }
    w = rdp_calloc(1, sizeof(*w));
    if (w == NULL) {
        return NULL;
    }
    w->efd     = -1;
    w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    w->ep_fd   = epoll_create1(EPOLL_CLOEXEC);
    if (w->wake_fd < 0 || w->ep_fd < 0
        || epoll_ctl(w->ep_fd, EPOLL_CTL_ADD, w->wake_fd, &ev) != 0
        || pthread_setspecific(waiter_key, w) != 0) {
        rdp_log_debug(CLIENT, "no waiter for the fence board: %m");
        if (w->ep_fd >= 0) {
            close(w->ep_fd);
        }
        if (w->wake_fd >= 0) {
            close(w->wake_fd);
        }
        rdp_free(w);
        return NULL;
    }
    w->next   = waiters;
    waiters   = w;
    my_waiter = w;
    my_gen    = waiter_gen;
    return w;
}

void rdp_client_board_prepare(void)
{
    if (!board_wanted() || !rdp_cfg_bool(RDP_CFG_FENCE_BOARD_CALLER)) {
        return;
    }
    pthread_mutex_lock(&bd_lock);
    if (waiter_get() != NULL) {
        waiter_watch_board(my_waiter);
    }
    pthread_mutex_unlock(&bd_lock);
}

rdp_board_ticket_t *rdp_client_board_ticket(void)
{
    rdp_board_ticket_t *t;
    board_waiter_t *w;

    if (!rdp_cfg_bool(RDP_CFG_FENCE_BOARD_CALLER)) {
        return NULL;
    }
    t = rdp_calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->refs = 2;
    pthread_mutex_lock(&bd_lock);
    w = bd.board != NULL ? waiter_get() : NULL;
    if (w != NULL && waiter_watch_board(w)) {
        /* the board's eventfd is in its set before the fence is posted */
        w->busy++;
        t->w = w;
        pthread_mutex_unlock(&bd_lock);
        return t;
    }
    pthread_mutex_unlock(&bd_lock);
    rdp_free(t);
    return NULL; /* wait the usual way */
}

void rdp_client_board_ticket_number(rdp_board_ticket_t *t, int on_board,
                                    uint64_t n)
{
    pthread_mutex_lock(&bd_lock);
    t->have_n = on_board;
    t->n      = n;
    pthread_mutex_unlock(&bd_lock);
}

int rdp_client_board_ticket_claim(rdp_board_ticket_t *t)
{
    uint64_t n;
    int taken;

    if (t == NULL) {
        return 0;
    }
    pthread_mutex_lock(&bd_lock);
    taken = t->state == TK_CALLER;
    if (t->state == TK_WAITING) {
        t->state = TK_LOOP;
    }
    n = t->n;
    pthread_mutex_unlock(&bd_lock);
    RDP_BOARD_HOOK(RDP_BOARD_AT_LOOP_CLAIMED, n);
    return taken;
}

void rdp_client_board_ticket_cb(pmix_status_t status, void *cbdata)
{
    rdp_board_ticket_t *t = cbdata;
    uint64_t one          = 1;

    pthread_mutex_lock(&bd_lock);
    if (t->state != TK_CALLER) {
        t->status = status;
        t->state  = TK_FINAL;
        if (write(t->w->wake_fd, &one, sizeof(one)) < 0) {
            rdp_log_error(CLIENT, "cannot wake a fence's caller: %m");
        }
    }
    ticket_unref(t);
    pthread_mutex_unlock(&bd_lock);
}

pmix_status_t rdp_client_board_ticket_wait(rdp_board_ticket_t *t, int posted)
{
    pmix_status_t status = PMIX_ERR_INIT;
    board_waiter_t *w    = t->w;
    struct epoll_event evs[2];
    uint64_t count;
    int nev;

    pthread_mutex_lock(&bd_lock);
    if (!posted) {
        t->refs--; /* no callback will come */
    }
    while (posted) {
        const rdp_bcast_slot_t *slot;
        uint64_t n = t->have_n ? t->n : UINT64_MAX;

        pthread_mutex_unlock(&bd_lock);
        RDP_BOARD_HOOK(RDP_BOARD_AT_CALLER_LOOKS, n);
        pthread_mutex_lock(&bd_lock);
        if (t->state == TK_FINAL) {
            status = t->status;
            break;
        }
        if (t->state == TK_WAITING && t->have_n && bd.board != NULL
            && rdp_bcast_ready(bd.board, t->n, &slot) && !earlier_open(t->n)) {
            t->state = TK_CALLER;
            status   = take_slot(t->n, slot);
            caller_done++;
            nudge_after(t->n);
            rdp_log_debug(CLIENT, "fence %" PRIu64 " completed by its caller",
                          t->n);
            break;
        }
        n = t->have_n ? t->n : UINT64_MAX;
        pthread_mutex_unlock(&bd_lock);
        RDP_BOARD_HOOK(RDP_BOARD_AT_CALLER_SLEEPS, n);
        nev = epoll_wait(w->ep_fd, evs, 2, -1);
        if (nev < 0 && errno != EINTR) {
            usleep(1000); /* not expected: look again later */
        }
        for (int i = 0; i < nev; i++) {
            /* the board's count stays (other clients' sets need it) */
            if (evs[i].data.u32 == EV_WAKE
                && read(w->wake_fd, &count, sizeof(count)) < 0) {
                rdp_log_debug(CLIENT, "fence wake-up not read: %m");
            }
        }
        pthread_mutex_lock(&bd_lock);
    }
    w->busy--;
    if (w->orphan && w->busy == 0) {
        waiter_free(w); /* released meanwhile (rdp_client_board_close) */
    }
    ticket_unref(t);
    pthread_mutex_unlock(&bd_lock);
    return status;
}

uint64_t rdp_client_board_caller_done(void)
{
    uint64_t n;

    pthread_mutex_lock(&bd_lock);
    n = caller_done;
    pthread_mutex_unlock(&bd_lock);
    return n;
}
