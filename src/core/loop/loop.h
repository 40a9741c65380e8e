/* loop.h - the library's event loop thread, mailbox, timers, fd watchers */
#ifndef RDP_CORE_LOOP_LOOP_H
#define RDP_CORE_LOOP_LOOP_H

#include <pmix_common.h>

#include <assert.h>
#include <pthread.h>

/*
 * All library state belongs to one loop thread.  Other threads hand work to
 * it with rdp_loop_post(); blocking API calls wait on an rdp_wait_t that the
 * loop signals.  Nothing here blocks the loop thread.
 */
typedef struct rdp_loop rdp_loop_t;
typedef void (*rdp_loop_fn_t)(void *arg);

/** Create a loop (not yet running). */
pmix_status_t rdp_loop_create(rdp_loop_t **loop_p);
/** Start a private thread that runs the loop until rdp_loop_destroy. */
pmix_status_t rdp_loop_start_thread(rdp_loop_t *loop);
/** Run the loop in the calling thread until rdp_loop_stop (daemons). */
pmix_status_t rdp_loop_run(rdp_loop_t *loop);
/** Ask the loop to return from rdp_loop_run / end its thread. Any thread. */
void rdp_loop_stop(rdp_loop_t *loop);
/** Stop (if running), join the thread, run no more posted work, free. */
void rdp_loop_destroy(rdp_loop_t *loop);

/** Queue @a fn(@a arg) to run on the loop thread, in post order. Any
 * thread, never runs fn inline. Returns PMIX_ERR_NOMEM or PMIX_SUCCESS. */
pmix_status_t rdp_loop_post(rdp_loop_t *loop, rdp_loop_fn_t fn, void *arg);
/** True on the thread currently running @a loop. */
int rdp_loop_on_loop(const rdp_loop_t *loop);

#define RDP_ASSERT_ON_LOOP(_loop) assert(rdp_loop_on_loop(_loop))

/* ---- timers (loop thread only) ---- */
typedef struct rdp_timer rdp_timer_t;
pmix_status_t rdp_timer_create(rdp_loop_t *loop, rdp_loop_fn_t fn, void *arg,
                               rdp_timer_t **timer_p);
/** (Re)arm a one-shot timer @a seconds from now. */
void rdp_timer_start(rdp_timer_t *timer, double seconds);
/** Run the timer's function as soon as the callback in progress returns,
 * before the loop polls its fds again (cancels a pending start).  Saves a
 * poll for work due now; never use it for work that re-arms itself, which
 * would keep the loop from polling. */
void rdp_timer_fire_soon(rdp_timer_t *timer);
void rdp_timer_cancel(rdp_timer_t *timer);
/** Cancels and frees; accepts NULL. */
void rdp_timer_destroy(rdp_timer_t *timer);

/* ---- fd watchers (loop thread only) ---- */
enum {
    RDP_FD_READ  = 0x1,
    RDP_FD_WRITE = 0x2,
    RDP_FD_EDGE  = 0x4 /* edge-triggered (rdp_loop_has_edge) */
};
typedef struct rdp_fdwatch rdp_fdwatch_t;
typedef void (*rdp_fdwatch_cb_t)(int fd, int events, void *arg);
/** Persistent watcher of @a events on @a fd; created disabled. The fd stays
 * the caller's. */
pmix_status_t rdp_fdwatch_create(rdp_loop_t *loop, int fd, int events,
                                 rdp_fdwatch_cb_t cb, void *arg,
                                 rdp_fdwatch_t **watch_p);
void rdp_fdwatch_enable(rdp_fdwatch_t *watch);
/** Whether the loop's backend honours RDP_FD_EDGE (epoll does). */
int rdp_loop_has_edge(rdp_loop_t *loop);
void rdp_fdwatch_disable(rdp_fdwatch_t *watch);
/** Disables and frees; accepts NULL. Does not close the fd. */
void rdp_fdwatch_destroy(rdp_fdwatch_t *watch);

/* ---- signals (loop thread only; for daemons) ---- */
typedef struct rdp_sigwatch rdp_sigwatch_t;
typedef void (*rdp_sigwatch_cb_t)(int signo, void *arg);
pmix_status_t rdp_sigwatch_create(rdp_loop_t *loop, int signo,
                                  rdp_sigwatch_cb_t cb, void *arg,
                                  rdp_sigwatch_t **watch_p);
void rdp_sigwatch_destroy(rdp_sigwatch_t *watch);

/* ---- waiting for a loop result from another thread ---- */
typedef struct rdp_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
} rdp_wait_t;

void rdp_wait_init(rdp_wait_t *w);
void rdp_wait_cleanup(rdp_wait_t *w);
/** Record @a status and wake the waiter. Any thread; call exactly once. */
void rdp_wait_signal(rdp_wait_t *w, pmix_status_t status);
/** Block until signalled; returns the status given to rdp_wait_signal. */
pmix_status_t rdp_wait_wait(rdp_wait_t *w);
/** As rdp_wait_wait with a bound; PMIX_ERR_TIMEOUT when it passes. */
pmix_status_t rdp_wait_wait_for(rdp_wait_t *w, double seconds);

/** Monotonic seconds, for timeouts and benchmarks. */
double rdp_time_now(void);

#endif
