/* pnet.c - module selection and the per-job lifecycle of RFC0012 */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/topo/topo_near.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* every module, in the order they run; a site selects with RDPMIX_PNET */
static const rdp_pnet_module_t *const all_modules[] = {
    &rdp_pnet_opa_module,
    &rdp_pnet_ib_module,
    &rdp_pnet_sshot_module,
    &rdp_pnet_tcp_module,
    &rdp_pnet_simptest_module,
};
#define NMODULES (sizeof(all_modules) / sizeof(all_modules[0]))

static const rdp_pnet_module_t *selected[NMODULES];
/* the nspaces whose setup_application succeeded in this process: only
 * they hold pool values to give back (every other server's job end would
 * otherwise open the pools' state files for nothing) */
static rdp_hash_t minted;
static size_t nselected;
static char selected_names[256];

/* ---- selection ---- */

static const rdp_pnet_module_t *module_named(const char *name, size_t len)
{
    for (size_t i = 0; i < NMODULES; i++) {
        if (strlen(all_modules[i]->name) == len
            && strncmp(all_modules[i]->name, name, len) == 0) {
            return all_modules[i];
        }
    }
    return NULL;
}

/* Is @a m named in the comma list @a list?  Unknown names: *bad_p. */
static bool listed(const char *list, const rdp_pnet_module_t *m, bool *bad_p)
{
    bool found = false;

    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");

        if (len > 0 && module_named(p, len) == NULL) {
            rdp_log_error(PNET, "RDPMIX_PNET names no module '%.*s'", (int)len,
                          p);
            *bad_p = true;
        } else if (len > 0 && module_named(p, len) == m) {
            found = true;
        }
        p += len + (p[len] == ',');
    }
    return found;
}

pmix_status_t rdp_pnet_select(const char *spec)
{
    bool exclude     = (spec != NULL && spec[0] == '^');
    const char *list = (spec == NULL) ? "" : spec + (exclude ? 1 : 0);
    bool all = (list[0] == '\0'), bad = false;

    nselected         = 0;
    selected_names[0] = '\0';
    if (strcmp(list, "none") == 0 && !exclude) {
        return PMIX_SUCCESS;
    }
    for (size_t i = 0; i < NMODULES; i++) {
        const rdp_pnet_module_t *m = all_modules[i];
        bool named                 = all ? false : listed(list, m, &bad);

        if (bad) {
            nselected = 0;
            return PMIX_ERR_BAD_PARAM;
        }
        if (!all && named == exclude) {
            continue;
        }
        /* a module a site names is used; the others only where their own
         * query says they can serve */
        if (!(named && !exclude) && m->usable != NULL && !m->usable()) {
            rdp_log_info(PNET, "module %s cannot serve here", m->name);
            continue;
        }
        selected[nselected++] = m;
        if (selected_names[0] != '\0') {
            strncat(selected_names, ",",
                    sizeof(selected_names) - strlen(selected_names) - 1);
        }
        strncat(selected_names, m->name,
                sizeof(selected_names) - strlen(selected_names) - 1);
    }
    rdp_log_debug(PNET, "modules: %s",
                  selected_names[0] ? selected_names : "(none)");
    return PMIX_SUCCESS;
}

const char *rdp_pnet_selected(void)
{
    return selected_names;
}

/* Append to buf what fits, counting what it needed in *used */
static void describe_add(char *buf, size_t len, size_t *used,
                         const char *text)
{
    size_t n = strlen(text);

    if (*used < len) {
        snprintf(buf + *used, len - *used, "%s", text);
    }
    *used += n;
}

static void describe_module(const rdp_pnet_module_t *m, char *buf,
                            size_t len, size_t *used)
{
    const char *sep = " (";
    char value[512];

    describe_add(buf, len, used, m->name);
    for (size_t k = 0; m->settings != NULL && m->settings[k] != NULL; k++) {
        if (rdp_pnet_conf_get(m->settings[k], value, sizeof(value))) {
            describe_add(buf, len, used, sep);
            describe_add(buf, len, used, m->settings[k]);
            describe_add(buf, len, used, "=");
            describe_add(buf, len, used, value);
            sep = ", ";
        }
    }
    if (sep[0] == ',') {
        describe_add(buf, len, used, ")");
    }
}

size_t rdp_pnet_describe(char *buf, size_t len)
{
    size_t used = 0;

    if (len > 0) {
        buf[0] = '\0';
    }
    if (nselected == 0) {
        describe_add(buf, len, &used, "none");
    }
    for (size_t i = 0; i < nselected; i++) {
        if (i > 0) {
            describe_add(buf, len, &used, ", ");
        }
        describe_module(selected[i], buf, len, &used);
    }
    return used;
}

/* ---- setup_application (head node) ---- */

/* Add the environment directive @a directive (PMIX_SET_ENVAR, ...) */
static pmix_status_t out_envar(rdp_pnet_out_t *out, const char *directive,
                               const char *name, const char *value)
{
    pmix_envar_t ev = {
        .envar = (char *)name, .value = (char *)value, .separator = ':'};

    if (!out->envars) {
        return PMIX_SUCCESS;
    }
    return PMIx_Info_list_add(out->list, directive, &ev, PMIX_ENVAR);
}

pmix_status_t rdp_pnet_out_setenv(rdp_pnet_out_t *out, const char *name,
                                  const char *value)
{
    return out_envar(out, PMIX_SET_ENVAR, name, value);
}

pmix_status_t rdp_pnet_out_addenv(rdp_pnet_out_t *out, const char *name,
                                  const char *value)
{
    return out_envar(out, PMIX_ADD_ENVAR, name, value);
}

pmix_status_t rdp_pnet_out_value(rdp_pnet_out_t *out, const char *key,
                                 const void *value, pmix_data_type_t type)
{
    if (!out->values) {
        return PMIX_SUCCESS;
    }
    return PMIx_Info_list_add(out->list, key, value, type);
}

/* Which halves of the answer the host asked for */
static void wanted_parts(const pmix_info_t *dirs, size_t ndirs,
                         rdp_pnet_out_t *out)
{
    bool env = false, values = false;

    for (size_t i = 0; i < ndirs; i++) {
        if (!PMIX_INFO_TRUE(&dirs[i])) {
            continue;
        }
        if (PMIX_CHECK_KEY(&dirs[i], PMIX_SETUP_APP_ENVARS)) {
            env = true;
        } else if (PMIX_CHECK_KEY(&dirs[i], PMIX_SETUP_APP_NONENVARS)) {
            values = true;
        } else if (PMIX_CHECK_KEY(&dirs[i], PMIX_SETUP_APP_ALL)) {
            env = values = true;
        }
    }
    out->envars = env || !values;
    out->values = values || !env;
}

static void release_app_upto(const char *nspace, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (selected[i]->release_app != NULL) {
            selected[i]->release_app(nspace);
        }
    }
}

size_t rdp_pnet_nselected(void)
{
    return nselected;
}

const rdp_pnet_module_t *rdp_pnet_selected_module(size_t i)
{
    return selected[i];
}

pmix_status_t rdp_pnet_out_finish(rdp_pnet_out_t *out, pmix_info_t **info_p,
                                  size_t *ninfo_p)
{
    pmix_data_array_t da = {0};
    pmix_status_t status = PMIx_Info_list_convert(out->list, &da);

    if (status == PMIX_ERR_EMPTY) {
        *info_p  = NULL;
        *ninfo_p = 0;
        return PMIX_SUCCESS;
    }
    if (status == PMIX_SUCCESS) {
        *info_p  = da.array;
        *ninfo_p = da.size;
    }
    return status;
}

pmix_status_t rdp_pnet_setup_app(const char *nspace, const pmix_info_t *dirs,
                                 size_t ndirs, pmix_info_t **info_p,
                                 size_t *ninfo_p)
{
    rdp_pnet_out_t out   = {.list = PMIx_Info_list_start()};
    pmix_status_t status = PMIX_SUCCESS;
    size_t nrun;

    if (out.list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    wanted_parts(dirs, ndirs, &out);
    /* nrun: the modules that ran, the failing one included (it may hold
     * part of what it took) */
    for (nrun = 0; nrun < nselected && status == PMIX_SUCCESS; nrun++) {
        const rdp_pnet_module_t *m = selected[nrun];

        if (m->setup_app == NULL) {
            continue;
        }
        status = m->setup_app(nspace, &out);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(PNET, "%s: module %s cannot set up the job: %s",
                          nspace, m->name, rdp_status_name(status));
        }
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_finish(&out, info_p, ninfo_p);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set_str(&minted, nspace, &minted, NULL);
        if (status != PMIX_SUCCESS) {
            rdp_info_array_free(*info_p, *ninfo_p);
        }
    }
    if (status != PMIX_SUCCESS) {
        release_app_upto(nspace, nrun);
    }
    PMIx_Info_list_release(out.list);
    return status;
}

/* ---- setup_local_support, setup_fork, job end (each node) ----
 * setup_fork may run in a forked child between fork and exec (Slurm's
 * slurmstepd), where the loop thread is gone: the kept directives live
 * under a plain mutex that a pthread_atfork handler holds across fork, so
 * the child finds them consistent and unlocked (as client.c's fork view). */

typedef struct job_env {
    pmix_info_t *envars; /* the environment directives, in order */
    size_t n;
    pmix_info_t *values; /* the job-level values (the job's own only) */
    size_t nvalues;
} job_env_t;

static struct {
    pthread_mutex_t lock;
    bool ready;
    rdp_hash_t jobs; /* nspace -> job_env_t */
} kept                          = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void kept_lock(void)
{
    pthread_mutex_lock(&kept.lock);
}

static void kept_unlock(void)
{
    pthread_mutex_unlock(&kept.lock);
}

static void kept_init_once(void)
{
    if (pthread_atfork(kept_lock, kept_unlock, kept_unlock) != 0) {
        rdp_log_warn(PNET, "cannot register a fork handler: setup_fork in "
                           "a forked child may block");
    }
}

void rdp_pnet_lock(void)
{
    pthread_once(&kept_once, kept_init_once);
    kept_lock();
}

void rdp_pnet_unlock(void)
{
    kept_unlock();
}

/* Wipe secrets from the directives before they are freed. */
static void job_env_destroy(job_env_t *je)
{
    if (je == NULL) {
        return;
    }
    for (size_t i = 0; i < je->n; i++) {
        rdp_pnet_wipe_value(&je->envars[i].value);
    }
    for (size_t i = 0; i < je->nvalues; i++) {
        rdp_pnet_wipe_value(&je->values[i].value);
    }
    rdp_info_array_free(je->envars, je->n);
    rdp_info_array_free(je->values, je->nvalues);
    rdp_free(je);
}

/* Copy the entries of @a info into @a je: environment directives to
 * envars, the rest to values (room is there) */
static pmix_status_t job_env_add(job_env_t *je, const pmix_info_t *info,
                                 size_t ninfo)
{
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < ninfo && status == PMIX_SUCCESS; i++) {
        if (rdp_pnet_is_envar_key(info[i].key)) {
            status = rdp_info_copy(&je->envars[je->n], &info[i]);
            je->n += (status == PMIX_SUCCESS);
        } else {
            status = rdp_info_copy(&je->values[je->nvalues], &info[i]);
            je->nvalues += (status == PMIX_SUCCESS);
        }
    }
    return status;
}

/* A new job_env_t with copies of the environment directives and the
 * job-level values of @a info, then of @a node (this node's own) */
static pmix_status_t job_env_create(const pmix_info_t *info, size_t ninfo,
                                    const pmix_info_t *node, size_t nnode,
                                    job_env_t **je_p)
{
    job_env_t *je        = rdp_calloc(1, sizeof(*je));
    size_t cap           = ninfo + nnode;
    pmix_status_t status = PMIX_SUCCESS;

    if (je == NULL
        || (cap > 0
            && ((je->envars = rdp_calloc(cap, sizeof(pmix_info_t))) == NULL
                || (je->values = rdp_calloc(cap, sizeof(pmix_info_t)))
                       == NULL))) {
        if (je != NULL) {
            rdp_free(je->envars);
        }
        rdp_free(je);
        return PMIX_ERR_NOMEM;
    }
    status = job_env_add(je, info, ninfo);
    if (status == PMIX_SUCCESS) {
        status = job_env_add(je, node, nnode);
    }
    if (status != PMIX_SUCCESS) {
        job_env_destroy(je);
        return status;
    }
    *je_p = je;
    return PMIX_SUCCESS;
}

/* Keep @a je for @a nspace (NULL: forget), destroying what was kept. */
static pmix_status_t kept_replace(const char *nspace, job_env_t *je)
{
    pmix_status_t status = PMIX_SUCCESS;
    void *old            = NULL;

    pthread_once(&kept_once, kept_init_once);
    kept_lock();
    status = rdp_pnet_table_swap(&kept.jobs, &kept.ready, nspace, je, &old);
    kept_unlock();
    job_env_destroy(old);
    return status;
}

pmix_status_t rdp_pnet_table_swap(rdp_hash_t *table, bool *ready,
                                  const char *nspace, void *value,
                                  void **old_p)
{
    pmix_status_t status = PMIX_SUCCESS;

    *old_p = NULL;
    if (!*ready) {
        status = rdp_hash_init(table, 16);
        *ready = (status == PMIX_SUCCESS);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    if (value != NULL) {
        return rdp_hash_set_str(table, nspace, value, old_p);
    }
    *old_p = rdp_hash_remove_str(table, nspace);
    return PMIX_SUCCESS;
}

/* Check every directive before anything is kept: a bad one would
 * otherwise fail every fork of the job, one process at a time. */
static pmix_status_t check_envars(const char *nspace, const pmix_info_t *info,
                                  size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        char **scratch = NULL;
        pmix_status_t status;

        if (!rdp_pnet_is_envar_key(info[i].key)) {
            continue;
        }
        status = rdp_pnet_envar_apply(info[i].key, &info[i].value, &scratch);
        pmix_argv_free(scratch);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(PNET, "%s: bad environment directive %s (entry %zu)",
                          nspace, info[i].key, i);
            return status;
        }
    }
    return PMIX_SUCCESS;
}

static void job_end_upto(const char *nspace, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (selected[i]->job_end != NULL) {
            selected[i]->job_end(nspace);
        }
    }
}

/* Run every module's setup_local; *@a nrun_p: how many ran (the failing
 * one included) */
static pmix_status_t setup_local_all(const char *nspace, const pmix_info_t *info,
                                     size_t ninfo, rdp_pnet_out_t *node,
                                     size_t *nrun_p)
{
    pmix_status_t status = PMIX_SUCCESS;
    size_t nrun;

    for (nrun = 0; nrun < nselected && status == PMIX_SUCCESS; nrun++) {
        const rdp_pnet_module_t *m = selected[nrun];

        if (m->setup_local != NULL) {
            status = m->setup_local(nspace, info, ninfo, node);
            if (status != PMIX_SUCCESS) {
                rdp_log_error(PNET, "%s: module %s cannot set up this node: %s",
                              nspace, m->name, rdp_status_name(status));
            }
        }
    }
    *nrun_p = nrun;
    return status;
}

pmix_status_t rdp_pnet_setup_local(const char *nspace, const pmix_info_t *info,
                                   size_t ninfo)
{
    rdp_pnet_out_t node = {.list = NULL, .envars = true, .values = true};
    pmix_info_t *extra  = NULL;
    size_t nextra = 0, nrun = 0;
    job_env_t *je = NULL;
    pmix_status_t status;

    status = check_envars(nspace, info, ninfo);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    node.list = PMIx_Info_list_start();
    if (node.list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = setup_local_all(nspace, info, ninfo, &node, &nrun);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_finish(&node, &extra, &nextra);
    }
    PMIx_Info_list_release(node.list);
    if (status == PMIX_SUCCESS) {
        status = job_env_create(info, ninfo, extra, nextra, &je);
    }
    rdp_info_array_free(extra, nextra);
    if (status == PMIX_SUCCESS) {
        status = kept_replace(nspace, je);
    }
    if (status != PMIX_SUCCESS) {
        job_end_upto(nspace, nrun);
    }
    return status;
}

pmix_status_t rdp_pnet_setup_fork(const char *nspace, pmix_rank_t rank,
                                  char ***env)
{
    pmix_status_t status = PMIX_SUCCESS;
    job_env_t *je;

    pthread_once(&kept_once, kept_init_once);
    kept_lock();
    je = kept.ready ? rdp_hash_get_str(&kept.jobs, nspace) : NULL;
    for (size_t i = 0; je != NULL && i < je->n && status == PMIX_SUCCESS; i++) {
        status =
            rdp_pnet_envar_apply(je->envars[i].key, &je->envars[i].value, env);
    }
    kept_unlock();
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_proc_setup_fork(nspace, rank, env);
    }
    return status;
}

static bool kept_has(const char *nspace)
{
    bool has;

    pthread_once(&kept_once, kept_init_once);
    kept_lock();
    has = kept.ready && rdp_hash_get_str(&kept.jobs, nspace) != NULL;
    kept_unlock();
    return has;
}

/* Run every module's derive into @a out; the first error stops */
static pmix_status_t derive_all(const char *nspace, rdp_pnet_out_t *out)
{
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < nselected && status == PMIX_SUCCESS; i++) {
        if (selected[i]->derive != NULL) {
            status = selected[i]->derive(nspace, out);
            if (status != PMIX_SUCCESS) {
                rdp_log_error(PNET, "%s: module %s cannot derive the job's "
                                    "values: %s",
                              nspace, selected[i]->name,
                              rdp_status_name(status));
            }
        }
    }
    return status;
}

pmix_status_t rdp_pnet_derive(const char *nspace)
{
    rdp_pnet_out_t out = {
        .list = NULL, .envars = true, .values = true};
    pmix_info_t *info  = NULL;
    size_t ninfo       = 0;
    job_env_t *je      = NULL;
    pmix_status_t status;

    if (nselected == 0 || kept_has(nspace)) {
        return PMIX_SUCCESS;
    }
    out.list = PMIx_Info_list_start();
    if (out.list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = derive_all(nspace, &out);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_finish(&out, &info, &ninfo);
    }
    PMIx_Info_list_release(out.list);
    if (status == PMIX_SUCCESS && ninfo > 0) {
        status = job_env_create(info, ninfo, NULL, 0, &je);
    }
    if (status == PMIX_SUCCESS && je != NULL) {
        status = kept_replace(nspace, je);
        if (status != PMIX_SUCCESS) {
            job_env_destroy(je);
        }
    }
    for (size_t i = 0; i < ninfo; i++) {
        rdp_pnet_wipe_value(&info[i].value);
    }
    rdp_info_array_free(info, ninfo);
    return status;
}

bool rdp_pnet_is_private_key(const char *key)
{
    return key != NULL
           && (strcmp(key, PMIX_CREDENTIAL) == 0
               || strncmp(key, RDP_PNET_KEY_PREFIX,
                          sizeof(RDP_PNET_KEY_PREFIX) - 1)
                      == 0);
}

pmix_status_t rdp_pnet_for_each_value(const char *nspace,
                                      rdp_pnet_value_fn_t fn, void *arg)
{
    pmix_status_t status = PMIX_SUCCESS;
    job_env_t *je;

    pthread_once(&kept_once, kept_init_once);
    kept_lock();
    je = kept.ready ? rdp_hash_get_str(&kept.jobs, nspace) : NULL;
    for (size_t i = 0; je != NULL && i < je->nvalues && status == PMIX_SUCCESS;
         i++) {
        status = fn(&je->values[i], arg);
    }
    kept_unlock();
    return status;
}

/* The modules that give a job an isolation domain of its own on the
 * fabric, and the job value that says a job got one: opa's job key
 * (PMIX_CREDENTIAL), ib's partition key, sshot's VNIs. */
static const struct {
    const char *module;
    const char *key;
} isolating[] = {
    {"opa", PMIX_CREDENTIAL},
    {"ib", RDP_PNET_KEY_PREFIX "ib.pkey"},
    {"sshot", RDP_PNET_KEY_PREFIX "sshot.vnis"},
};

static pmix_status_t note_isolating(const pmix_info_t *value, void *arg)
{
    for (size_t i = 0; i < sizeof(isolating) / sizeof(isolating[0]); i++) {
        if (strcmp(value->key, isolating[i].key) == 0) {
            *(bool *)arg = true;
        }
    }
    return PMIX_SUCCESS;
}

bool rdp_pnet_module_isolates(const char *name)
{
    for (size_t i = 0; i < sizeof(isolating) / sizeof(isolating[0]); i++) {
        if (name != NULL && strcmp(name, isolating[i].module) == 0) {
            return true;
        }
    }
    return false;
}

bool rdp_pnet_job_isolated(const char *nspace)
{
    bool isolated = false;

    (void)rdp_pnet_for_each_value(nspace, note_isolating, &isolated);
    return isolated;
}

void rdp_pnet_job_end(const char *nspace)
{
    job_end_upto(nspace, nselected);
    if (rdp_hash_remove_str(&minted, nspace) != NULL) {
        release_app_upto(nspace, nselected);
    }
    (void)kept_replace(nspace, NULL);
    rdp_pnet_procs_forget(nspace);
}

void rdp_pnet_cleanup(void)
{
    rdp_hash_entry_t *e;
    size_t i;

    kept_lock();
    if (kept.ready) {
        rdp_hash_for_each(e, &kept.jobs, i) {
            job_env_destroy(e->value);
        }
        rdp_hash_cleanup(&kept.jobs);
        kept.ready = false;
    }
    kept_unlock();
    rdp_pnet_procs_cleanup();
    rdp_topo_near_cleanup();
    rdp_hash_cleanup(&minted);
    nselected         = 0;
    selected_names[0] = '\0';
}
