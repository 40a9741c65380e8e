/* ucx_load.c - find the UCX transport: the one this program registered,
 * else the module rdpmix_ucx.so next to this library (ucx.h says why the
 * shared library does not link UCX).  Needs neither UCX nor libcrypto. */
#include "config.h"
#include "ucx/ucx.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rdp_ucx_api_t *registered;
static const rdp_ucx_api_t *loaded;

static void log_line(int level, int subsys, const char *file, int line,
                     const char *msg)
{
    rdp_log_emit(level, (enum rdp_log_subsys)subsys, file, line, "%s", msg);
}

static const rdp_ucx_services_t services = {
    .abi             = RDP_UCX_MODULE_ABI,
    .log_levels      = rdp_log_levels,
    .log_line        = log_line,
    .on_loop         = rdp_loop_on_loop,
    .fdwatch_create  = rdp_fdwatch_create,
    .fdwatch_enable  = rdp_fdwatch_enable,
    .fdwatch_disable = rdp_fdwatch_disable,
    .fdwatch_destroy = rdp_fdwatch_destroy,
    .timer_create    = rdp_timer_create,
    .timer_start     = rdp_timer_start,
    .timer_destroy   = rdp_timer_destroy,
    .time_now        = rdp_time_now,
};

void rdp_ucx_api_register(const rdp_ucx_api_t *api)
{
    registered = api;
}

/* RDPMIX_UCX_MODULE, else rdpmix_ucx.so in this library's directory;
 * malloc'ed, NULL if neither is known. */
static char *module_path(void)
{
    const char *env = rdp_cfg_env(RDP_CFG_UCX_MODULE);
    Dl_info info;
    const char *slash;
    char *path;
    size_t dirlen;

    if (env != NULL && env[0] != '\0') {
        return rdp_strdup(env);
    }
    if (dladdr((void *)rdp_ucx_api_get, &info) == 0 || info.dli_fname == NULL) {
        return NULL;
    }
    slash  = strrchr(info.dli_fname, '/');
    dirlen = slash == NULL ? 1 : (size_t)(slash - info.dli_fname);
    path   = rdp_malloc(dirlen + sizeof(RDP_UCX_MODULE_FILE) + 1);
    if (path == NULL) {
        return NULL;
    }
    if (slash == NULL) {
        path[0] = '.';
    } else {
        memcpy(path, info.dli_fname, dirlen);
    }
    path[dirlen] = '/';
    memcpy(path + dirlen + 1, RDP_UCX_MODULE_FILE, sizeof(RDP_UCX_MODULE_FILE));
    return path;
}

static pmix_status_t load_module(const rdp_ucx_api_t **api_p)
{
    char *path = module_path();
    rdp_ucx_module_init_fn_t init;
    void *handle;
    pmix_status_t status;

    if (path == NULL) {
        rdp_log_error(UCX, "cannot tell where the UCX transport module is: "
                           "set RDPMIX_UCX_MODULE");
        return PMIX_ERR_NOT_AVAILABLE;
    }
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        rdp_log_error(UCX, "cannot load the UCX transport module: %s",
                      dlerror());
        rdp_free(path);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    init   = (rdp_ucx_module_init_fn_t)dlsym(handle, RDP_UCX_MODULE_INIT);
    status = init == NULL ? PMIX_ERR_NOT_AVAILABLE : init(&services, api_p);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(UCX, "%s is not a usable UCX transport module: %s", path,
                      init == NULL ? "no entry point"
                                   : rdp_status_name(status));
        dlclose(handle);
        rdp_free(path);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    rdp_log_debug(UCX, "UCX transport loaded from %s", path);
    rdp_free(path);
    /* kept loaded: UCX does not support being unloaded and reloaded */
    return PMIX_SUCCESS;
}

pmix_status_t rdp_ucx_api_get(const rdp_ucx_api_t **api_p)
{
    pmix_status_t status;

    if (registered != NULL) {
        *api_p = registered;
        return PMIX_SUCCESS;
    }
    if (loaded == NULL) {
        status = load_module(&loaded);
        if (status != PMIX_SUCCESS) {
            loaded = NULL;
            return status;
        }
    }
    *api_p = loaded;
    return PMIX_SUCCESS;
}
