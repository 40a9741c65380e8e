/* loop.c - the library's event loop thread, mailbox, timers, fd watchers */
#include "config.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/list.h"
#include "core/util/log.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/thread.h>

struct rdp_loop {
    struct event_base *base;
    struct event *mailbox_ev;
    pthread_mutex_t lock;     /* protects queue and stopping */
    rdp_list_t queue;         /* posted rdp_post_t items */
    pthread_t thread;         /* valid while has_thread */
    pthread_t runner;         /* thread inside rdp_loop_run */
    int has_thread;
    int running;
    int stopping;
};

typedef struct rdp_post {
    rdp_list_t link;
    rdp_loop_fn_t fn;
    void *arg;
} rdp_post_t;

struct rdp_timer {
    struct event *ev;
    rdp_loop_fn_t fn;
    void *arg;
};

struct rdp_fdwatch {
    struct event *ev;
    rdp_fdwatch_cb_t cb;
    void *arg;
    int enabled;
};

struct rdp_sigwatch {
    struct event *ev;
    rdp_sigwatch_cb_t cb;
    void *arg;
};

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;
static int evthread_status;

static void evthread_setup(void)
{
    evthread_status = evthread_use_pthreads();
}

/* Drain the mailbox in FIFO order; posts made while draining are run in
 * the next activation so one busy poster cannot starve the fds. */
static void mailbox_cb(evutil_socket_t fd, short what, void *arg)
{
    rdp_loop_t *loop = arg;
    rdp_list_t batch;
    rdp_list_t *item;

    rdp_list_init(&batch);
    pthread_mutex_lock(&loop->lock);
    if (!rdp_list_is_empty(&loop->queue)) {
        batch.next       = loop->queue.next;
        batch.prev       = loop->queue.prev;
        batch.next->prev = &batch;
        batch.prev->next = &batch;
        rdp_list_init(&loop->queue);
    }
    pthread_mutex_unlock(&loop->lock);

    while ((item = rdp_list_pop_front(&batch)) != NULL) {
        rdp_post_t *post = rdp_container_of(item, rdp_post_t, link);
        post->fn(post->arg);
        rdp_free(post);
    }
}

pmix_status_t rdp_loop_create(rdp_loop_t **loop_p)
{
    rdp_loop_t *loop;

    pthread_once(&evthread_once, evthread_setup);
    if (evthread_status != 0) {
        rdp_log_error(CORE, "libevent has no pthreads support");
        return PMIX_ERR_INIT;
    }
    loop = rdp_calloc(1, sizeof(*loop));
    if (loop == NULL) {
        return PMIX_ERR_NOMEM;
    }
    loop->base = event_base_new();
    if (loop->base == NULL) {
        rdp_log_error(CORE, "cannot create event base");
        goto err_free;
    }
    loop->mailbox_ev = event_new(loop->base, -1, 0, mailbox_cb, loop);
    if (loop->mailbox_ev == NULL) {
        goto err_base;
    }
    pthread_mutex_init(&loop->lock, NULL);
    rdp_list_init(&loop->queue);
    *loop_p = loop;
    return PMIX_SUCCESS;

err_base:
    event_base_free(loop->base);
err_free:
    rdp_free(loop);
    return PMIX_ERR_INIT;
}

pmix_status_t rdp_loop_run(rdp_loop_t *loop)
{
    int rc;

    /* on_loop() may be called from other threads at any time */
    __atomic_store_n(&loop->runner, pthread_self(), __ATOMIC_RELEASE);
    __atomic_store_n(&loop->running, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&loop->lock);
    /* work posted before the loop started still has to run */
    if (!rdp_list_is_empty(&loop->queue)) {
        event_active(loop->mailbox_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&loop->lock);
    rc = event_base_loop(loop->base, EVLOOP_NO_EXIT_ON_EMPTY);
    __atomic_store_n(&loop->running, 0, __ATOMIC_RELEASE);
    return (rc < 0) ? PMIX_ERROR : PMIX_SUCCESS;
}

static void *loop_thread_main(void *arg)
{
    rdp_loop_run(arg);
    return NULL;
}

pmix_status_t rdp_loop_start_thread(rdp_loop_t *loop)
{
    int rc = pthread_create(&loop->thread, NULL, loop_thread_main, loop);

    if (rc != 0) {
        rdp_log_error(CORE, "cannot start loop thread: %s", strerror(rc));
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    loop->has_thread = 1;
    return PMIX_SUCCESS;
}

static void stop_on_loop(void *arg)
{
    rdp_loop_t *loop = arg;

    event_base_loopbreak(loop->base);
}

void rdp_loop_stop(rdp_loop_t *loop)
{
    if (rdp_loop_post(loop, stop_on_loop, loop) != PMIX_SUCCESS) {
        /* out of memory: loopbreak is thread-safe with evthread */
        event_base_loopbreak(loop->base);
    }
}

void rdp_loop_destroy(rdp_loop_t *loop)
{
    rdp_list_t *item;

    if (loop == NULL) {
        return;
    }
    if (loop->has_thread) {
        rdp_loop_stop(loop);
        pthread_join(loop->thread, NULL);
        loop->has_thread = 0;
    }
    while ((item = rdp_list_pop_front(&loop->queue)) != NULL) {
        rdp_free(rdp_container_of(item, rdp_post_t, link));
    }
    event_free(loop->mailbox_ev);
    event_base_free(loop->base);
    pthread_mutex_destroy(&loop->lock);
    rdp_free(loop);
}

pmix_status_t rdp_loop_post(rdp_loop_t *loop, rdp_loop_fn_t fn, void *arg)
{
    rdp_post_t *post = rdp_malloc(sizeof(*post));
    int was_empty;

    if (post == NULL) {
        return PMIX_ERR_NOMEM;
    }
    post->fn  = fn;
    post->arg = arg;
    pthread_mutex_lock(&loop->lock);
    was_empty = rdp_list_is_empty(&loop->queue);
    rdp_list_push_back(&loop->queue, &post->link);
    if (was_empty) {
        event_active(loop->mailbox_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&loop->lock);
    return PMIX_SUCCESS;
}

int rdp_loop_on_loop(const rdp_loop_t *loop)
{
    return __atomic_load_n(&loop->running, __ATOMIC_ACQUIRE)
           && pthread_equal(__atomic_load_n(&loop->runner, __ATOMIC_ACQUIRE),
                            pthread_self());
}

/* ---- timers ---- */

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    rdp_timer_t *timer = arg;

    timer->fn(timer->arg);
}

pmix_status_t rdp_timer_create(rdp_loop_t *loop, rdp_loop_fn_t fn, void *arg,
                               rdp_timer_t **timer_p)
{
    rdp_timer_t *timer = rdp_calloc(1, sizeof(*timer));

    if (timer == NULL) {
        return PMIX_ERR_NOMEM;
    }
    timer->ev = evtimer_new(loop->base, timer_cb, timer);
    if (timer->ev == NULL) {
        rdp_free(timer);
        return PMIX_ERR_NOMEM;
    }
    timer->fn  = fn;
    timer->arg = arg;
    *timer_p   = timer;
    return PMIX_SUCCESS;
}

void rdp_timer_start(rdp_timer_t *timer, double seconds)
{
    struct timeval tv;

    if (seconds < 0) {
        seconds = 0;
    }
    tv.tv_sec  = (time_t)seconds;
    tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
    evtimer_add(timer->ev, &tv);
}

void rdp_timer_fire_soon(rdp_timer_t *timer)
{
    /* active at once: libevent runs it in its current pass over active
     * callbacks, before it polls again */
    evtimer_del(timer->ev);
    event_active(timer->ev, EV_TIMEOUT, 0);
}

void rdp_timer_cancel(rdp_timer_t *timer)
{
    evtimer_del(timer->ev);
}

void rdp_timer_destroy(rdp_timer_t *timer)
{
    if (timer == NULL) {
        return;
    }
    event_free(timer->ev);
    rdp_free(timer);
}

/* ---- fd watchers ---- */

static void fdwatch_cb(evutil_socket_t fd, short what, void *arg)
{
    rdp_fdwatch_t *watch = arg;
    int events = 0;

    if (what & EV_READ) {
        events |= RDP_FD_READ;
    }
    if (what & EV_WRITE) {
        events |= RDP_FD_WRITE;
    }
    watch->cb((int)fd, events, watch->arg);
}

pmix_status_t rdp_fdwatch_create(rdp_loop_t *loop, int fd, int events,
                                 rdp_fdwatch_cb_t cb, void *arg,
                                 rdp_fdwatch_t **watch_p)
{
    rdp_fdwatch_t *watch = rdp_calloc(1, sizeof(*watch));
    short what = EV_PERSIST;

    if (watch == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (events & RDP_FD_READ) {
        what |= EV_READ;
    }
    if (events & RDP_FD_WRITE) {
        what |= EV_WRITE;
    }
    if (events & RDP_FD_EDGE) {
        what |= EV_ET;
    }
    watch->ev = event_new(loop->base, fd, what, fdwatch_cb, watch);
    if (watch->ev == NULL) {
        rdp_free(watch);
        return PMIX_ERR_NOMEM;
    }
    watch->cb  = cb;
    watch->arg = arg;
    *watch_p   = watch;
    return PMIX_SUCCESS;
}

int rdp_loop_has_edge(rdp_loop_t *loop)
{
    return (event_base_get_features(loop->base) & EV_FEATURE_ET) != 0;
}

void rdp_fdwatch_enable(rdp_fdwatch_t *watch)
{
    if (!watch->enabled) {
        event_add(watch->ev, NULL);
        watch->enabled = 1;
    }
}

void rdp_fdwatch_disable(rdp_fdwatch_t *watch)
{
    if (watch->enabled) {
        event_del(watch->ev);
        watch->enabled = 0;
    }
}

void rdp_fdwatch_destroy(rdp_fdwatch_t *watch)
{
    if (watch == NULL) {
        return;
    }
    event_free(watch->ev);
    rdp_free(watch);
}

/* ---- signals ---- */

static void sigwatch_cb(evutil_socket_t signo, short what, void *arg)
{
    rdp_sigwatch_t *watch = arg;

    watch->cb((int)signo, watch->arg);
}

pmix_status_t rdp_sigwatch_create(rdp_loop_t *loop, int signo,
                                  rdp_sigwatch_cb_t cb, void *arg,
                                  rdp_sigwatch_t **watch_p)
{
    rdp_sigwatch_t *watch = rdp_calloc(1, sizeof(*watch));

    if (watch == NULL) {
        return PMIX_ERR_NOMEM;
    }
    watch->ev = evsignal_new(loop->base, signo, sigwatch_cb, watch);
    if (watch->ev == NULL || event_add(watch->ev, NULL) != 0) {
        if (watch->ev != NULL) {
            event_free(watch->ev);
        }
        rdp_free(watch);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    watch->cb  = cb;
    watch->arg = arg;
    *watch_p   = watch;
    return PMIX_SUCCESS;
}

void rdp_sigwatch_destroy(rdp_sigwatch_t *watch)
{
    if (watch == NULL) {
        return;
    }
    event_free(watch->ev);
    rdp_free(watch);
}

/* ---- waits ---- */

void rdp_wait_init(rdp_wait_t *w)
{
    pthread_condattr_t attr;

    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &attr);
    pthread_condattr_destroy(&attr);
    w->done   = 0;
    w->status = PMIX_SUCCESS;
}

void rdp_wait_cleanup(rdp_wait_t *w)
{
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

void rdp_wait_signal(rdp_wait_t *w, pmix_status_t status)
{
    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done   = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

pmix_status_t rdp_wait_wait(rdp_wait_t *w)
{
    pmix_status_t status;

    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    status = w->status;
    pthread_mutex_unlock(&w->lock);
    return status;
}

pmix_status_t rdp_wait_wait_for(rdp_wait_t *w, double seconds)
{
    struct timespec deadline;
    pmix_status_t status = PMIX_ERR_TIMEOUT;
    double whole;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += (long)(modf(seconds, &whole) * 1e9);
    deadline.tv_sec += (time_t)whole + deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &deadline)
            == ETIMEDOUT) {
            break;
        }
    }
    if (w->done) {
        status = w->status;
    }
    pthread_mutex_unlock(&w->lock);
    return status;
}

double rdp_time_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
