/* host_done.h - test hosts: wait on a PMIx server-library callback */
#ifndef RDP_TESTS_INTEG_HOST_DONE_H
#define RDP_TESTS_INTEG_HOST_DONE_H

#include <pmix_common.h>

#include <pthread.h>

/* The server API completes registrations through callbacks on the
 * library's thread; the test hosts wait for each one before going on. */
typedef struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
} done_t;

static inline void done_init(done_t *d)
{
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    d->done = 0;
}

/* a pmix_op_cbfunc_t */
static inline void done_cb(pmix_status_t status, void *cbdata)
{
    done_t *d = cbdata;

    pthread_mutex_lock(&d->lock);
    d->status = status;
    d->done   = 1;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

static inline pmix_status_t done_wait(done_t *d)
{
    pthread_mutex_lock(&d->lock);
    while (!d->done) {
        pthread_cond_wait(&d->cond, &d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return d->status;
}

#endif
