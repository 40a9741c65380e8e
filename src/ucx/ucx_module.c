/* ucx_module.c - rdpmix_ucx.so: the UCX transport as a module that
 * libpmix.so.2 loads when a server enables the engine (ucx.h says why).
 *
 * The transport's code is the same as in programs that link it; what it
 * uses of the core (logging, the loop) is forwarded here to the library
 * that loaded the module, so there is one log configuration and one loop.
 */
#include "config.h"
#include "ucx/ucx.h"
#include "core/loop/loop.h"
#include "core/util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const rdp_ucx_services_t *svc;

int rdp_log_levels[RDP_SUBSYS_COUNT];

void rdp_log_emit(int level, enum rdp_log_subsys subsys, const char *file,
                  int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    svc->log_line(level, (int)subsys, file, line, msg);
}

int rdp_loop_on_loop(const rdp_loop_t *loop)
{
    return svc->on_loop(loop);
}

pmix_status_t rdp_fdwatch_create(rdp_loop_t *loop, int fd, int events,
                                 rdp_fdwatch_cb_t cb, void *arg,
                                 rdp_fdwatch_t **watch_p)
{
    return svc->fdwatch_create(loop, fd, events, cb, arg, watch_p);
}

void rdp_fdwatch_enable(rdp_fdwatch_t *watch)
{
    svc->fdwatch_enable(watch);
}

void rdp_fdwatch_disable(rdp_fdwatch_t *watch)
{
    svc->fdwatch_disable(watch);
}

void rdp_fdwatch_destroy(rdp_fdwatch_t *watch)
{
    svc->fdwatch_destroy(watch);
}

pmix_status_t rdp_timer_create(rdp_loop_t *loop, rdp_loop_fn_t fn, void *arg,
                               rdp_timer_t **timer_p)
{
    return svc->timer_create(loop, fn, arg, timer_p);
}

void rdp_timer_start(rdp_timer_t *timer, double seconds)
{
    svc->timer_start(timer, seconds);
}

void rdp_timer_destroy(rdp_timer_t *timer)
{
    svc->timer_destroy(timer);
}

double rdp_time_now(void)
{
    return svc->time_now();
}

pmix_status_t rdpmix_ucx_module_init(const rdp_ucx_services_t *services,
                                     const rdp_ucx_api_t **api_p)
{
    if (services == NULL || api_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (services->abi != RDP_UCX_MODULE_ABI) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    svc = services;
    memcpy(rdp_log_levels, services->log_levels, sizeof(rdp_log_levels));
    *api_p = &rdp_ucx_builtin_api;
    return PMIX_SUCCESS;
}
