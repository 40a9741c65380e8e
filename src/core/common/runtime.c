/* runtime.c - the one library instance shared by client, server and tool */
#include "config.h"
#include "core/common/runtime.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <string.h>

rdp_runtime_t rdp_rt = {
    .lock     = PTHREAD_MUTEX_INITIALIZER,
    .refcount = 0,
    .role     = RDP_ROLE_NONE,
    .loop     = NULL,
    .kvs      = NULL,
};

rdp_runtime_fetch_fn_t rdp_runtime_fetch;
void (*rdp_runtime_embedded_cleanup)(void);

pmix_status_t rdp_runtime_acquire(enum rdp_role role)
{
    pmix_status_t status;
    rdp_loop_t *loop = NULL;
    rdp_kvs_t *kvs   = NULL;

    if (role == RDP_ROLE_NONE) {
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&rdp_rt.lock);
    if (rdp_rt.refcount > 0) {
        if (rdp_rt.role != role) {
            rdp_log_error(CORE,
                          "library already initialised in another role "
                          "(%d, asked for %d)",
                          (int)rdp_rt.role, (int)role);
            status = PMIX_ERR_INIT;
            goto err_unlock;
        }
        rdp_rt.refcount++;
        pthread_mutex_unlock(&rdp_rt.lock);
        return PMIX_SUCCESS;
    }

    rdp_log_init();
    status = rdp_kvs_create(&kvs);
    if (status != PMIX_SUCCESS) {
        goto err_unlock;
    }
    status = rdp_loop_create(&loop);
    if (status != PMIX_SUCCESS) {
        goto err_kvs;
    }
    /* kvs and role are in place before the loop thread can run anything */
    rdp_rt.kvs  = kvs;
    rdp_rt.role = role;
    status      = rdp_loop_start_thread(loop);
    if (status != PMIX_SUCCESS) {
        goto err_loop;
    }
    rdp_rt.loop     = loop;
    rdp_rt.refcount = 1;
    pthread_mutex_unlock(&rdp_rt.lock);
    return PMIX_SUCCESS;

err_loop:
    rdp_rt.kvs  = NULL;
    rdp_rt.role = RDP_ROLE_NONE;
    rdp_loop_destroy(loop);
err_kvs:
    rdp_kvs_destroy(kvs);
err_unlock:
    pthread_mutex_unlock(&rdp_rt.lock);
    return status;
}

void rdp_runtime_release(void)
{
    rdp_loop_t *loop;

    pthread_mutex_lock(&rdp_rt.lock);
    if (rdp_rt.refcount <= 0) {
        pthread_mutex_unlock(&rdp_rt.lock);
        rdp_log_warn(CORE, "runtime released more often than acquired");
        return;
    }
    if (--rdp_rt.refcount > 0) {
        pthread_mutex_unlock(&rdp_rt.lock);
        return;
    }
    loop        = rdp_rt.loop;
    rdp_rt.loop = NULL;
    /* joins the loop thread: from here on this thread owns all state */
    rdp_loop_destroy(loop);
    if (rdp_runtime_embedded_cleanup != NULL) {
        rdp_runtime_embedded_cleanup();
        rdp_runtime_embedded_cleanup = NULL;
    }
    rdp_event_cleanup();
    rdp_kvs_destroy(rdp_rt.kvs);
    rdp_rt.kvs  = NULL;
    rdp_rt.role = RDP_ROLE_NONE;
    memset(&rdp_rt.myproc, 0, sizeof(rdp_rt.myproc));
    pthread_mutex_unlock(&rdp_rt.lock);
}

int rdp_runtime_active(void)
{
    int active;

    pthread_mutex_lock(&rdp_rt.lock);
    active = rdp_rt.refcount > 0;
    pthread_mutex_unlock(&rdp_rt.lock);
    return active;
}

static bool launcher_flag;

bool rdp_runtime_is_launcher(void)
{
    return __atomic_load_n(&launcher_flag, __ATOMIC_ACQUIRE);
}

void rdp_runtime_set_launcher(bool launcher)
{
    __atomic_store_n(&launcher_flag, launcher, __ATOMIC_RELEASE);
}

typedef struct runtime_call {
    rdp_runtime_call_fn_t fn;
    void *arg;
    rdp_wait_t wait;
} runtime_call_t;

static void runtime_call_on_loop(void *arg)
{
    runtime_call_t *call = arg;

    call->fn(call->arg, &call->wait);
}

pmix_status_t rdp_runtime_call(rdp_runtime_call_fn_t fn, void *arg)
{
    runtime_call_t call;
    rdp_loop_t *loop = rdp_rt.loop;
    pmix_status_t status;

    if (loop == NULL) {
        return PMIX_ERR_INIT;
    }
    if (rdp_loop_on_loop(loop)) {
        rdp_log_debug(CORE, "blocking call made on the loop thread refused");
        return PMIX_ERR_WOULD_BLOCK;
    }
    call.fn  = fn;
    call.arg = arg;
    rdp_wait_init(&call.wait);
    status = rdp_loop_post(loop, runtime_call_on_loop, &call);
    if (status == PMIX_SUCCESS) {
        status = rdp_wait_wait(&call.wait);
    }
    rdp_wait_cleanup(&call.wait);
    return status;
}

typedef struct runtime_sync_call {
    rdp_runtime_sync_fn_t fn;
    void *arg;
} runtime_sync_call_t;

static void runtime_sync_on_loop(void *arg, rdp_wait_t *wait)
{
    runtime_sync_call_t *call = arg;

    rdp_wait_signal(wait, call->fn(call->arg));
}

pmix_status_t rdp_runtime_call_sync(rdp_runtime_sync_fn_t fn, void *arg)
{
    runtime_sync_call_t call = {fn, arg};
    rdp_loop_t *loop         = rdp_rt.loop;

    if (loop == NULL) {
        return PMIX_ERR_INIT;
    }
    if (rdp_loop_on_loop(loop)) {
        return fn(arg);
    }
    return rdp_runtime_call(runtime_sync_on_loop, &call);
}
