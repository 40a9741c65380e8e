/* pnet_proc.c - what one process of a job gets alone (its own HCAs) */
#include "config.h"
#include "pnet/pnet.h"
#include "pnet/pnet_int.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"
#include "core/util/log.h"
#include "core/util/status.h"
#include "core/util/value.h"

#include <stdbool.h>
#include <string.h>

/*
 * Decided at register_nspace (on the server's loop thread, where hwloc may
 * load a topology), applied at setup_fork (any thread, or a forked child:
 * the table lives under pnet.c's lock, which a pthread_atfork handler
 * holds across fork).
 *
 * nspace -> job_procs_t: rank (u64 key) -> proc_env_t.
 */

typedef struct proc_env {
    pmix_info_t *dirs; /* environment directives, in order */
    size_t n;
} proc_env_t;

typedef struct job_procs {
    rdp_hash_t ranks;
} job_procs_t;

/* under pnet.c's lock (rdp_pnet_lock), which fork cannot leave held */
static struct {
    bool ready;
    rdp_hash_t jobs;
} procs;

static void job_procs_destroy(job_procs_t *jp)
{
    rdp_hash_entry_t *e;
    size_t i;

    if (jp == NULL) {
        return;
    }
    rdp_hash_for_each(e, &jp->ranks, i) {
        proc_env_t *pe = e->value;

        rdp_info_array_free(pe->dirs, pe->n);
        rdp_free(pe);
    }
    rdp_hash_cleanup(&jp->ranks);
    rdp_free(jp);
}

/* ---- deciding (register_nspace) ---- */

typedef struct binding {
    pmix_rank_t rank;
    const char *cpuset;   /* PMIX_CPUSET, borrowed */
    const char *locality; /* PMIX_LOCALITY_STRING, borrowed */
} binding_t;

static const char *string_of(const pmix_info_t *in)
{
    return in->value.type == PMIX_STRING ? in->value.data.string : NULL;
}

/* The rank and binding of one PMIX_PROC_DATA array; false without a rank */
static bool binding_of(const pmix_info_t *arr, size_t n, binding_t *b)
{
    bool ranked = false;

    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < n; i++) {
        const pmix_info_t *in = &arr[i];

        if (PMIX_CHECK_KEY(in, PMIX_RANK)
            && (in->value.type == PMIX_PROC_RANK
                || in->value.type == PMIX_UINT32)) {
            /* pmix_rank_t is a uint32_t: either member reads it */
            b->rank = in->value.data.rank;
            ranked  = true;
        } else if (PMIX_CHECK_KEY(in, PMIX_CPUSET)) {
            b->cpuset = string_of(in);
        } else if (PMIX_CHECK_KEY(in, PMIX_LOCALITY_STRING)) {
            b->locality = string_of(in);
        }
    }
    if (b->cpuset != NULL && b->cpuset[0] == '\0') {
        b->cpuset = NULL;
    }
    if (b->locality != NULL && b->locality[0] == '\0') {
        b->locality = NULL;
    }
    return ranked;
}

/* Every module's step for one process into @a out */
static pmix_status_t modules_for(const char *nspace, const binding_t *b,
                                 rdp_pnet_out_t *out)
{
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < rdp_pnet_nselected() && status == PMIX_SUCCESS;
         i++) {
        const rdp_pnet_module_t *m = rdp_pnet_selected_module(i);

        if (m->setup_proc != NULL) {
            status =
                m->setup_proc(nspace, b->rank, b->cpuset, b->locality, out);
            if (status != PMIX_SUCCESS) {
                rdp_log_error(PNET, "%s: module %s cannot set up rank %u: %s",
                              nspace, m->name, b->rank,
                              rdp_status_name(status));
            }
        }
    }
    return status;
}

/* Decide process @a b's environment into @a jp (nothing to add: none) */
static pmix_status_t decide_proc(const char *nspace, const binding_t *b,
                                 job_procs_t *jp)
{
    rdp_pnet_out_t out = {.list = NULL, .envars = true, .values = false};
    proc_env_t pe      = {NULL, 0};
    proc_env_t *kept;
    void *old = NULL;
    pmix_status_t status;

    out.list = PMIx_Info_list_start();
    if (out.list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = modules_for(nspace, b, &out);
    if (status == PMIX_SUCCESS) {
        status = rdp_pnet_out_finish(&out, &pe.dirs, &pe.n);
    }
    PMIx_Info_list_release(out.list);
    if (status != PMIX_SUCCESS || pe.n == 0) {
        return status;
    }
    kept = rdp_malloc(sizeof(*kept));
    if (kept == NULL) {
        rdp_info_array_free(pe.dirs, pe.n);
        return PMIX_ERR_NOMEM;
    }
    *kept  = pe;
    status = rdp_hash_set_u64(&jp->ranks, b->rank, kept, &old);
    if (status != PMIX_SUCCESS) {
        rdp_info_array_free(pe.dirs, pe.n);
        rdp_free(kept);
    } else if (old != NULL) { /* a rank given twice: the last one counts */
        proc_env_t *was = old;

        rdp_info_array_free(was->dirs, was->n);
        rdp_free(was);
    }
    return status;
}

static bool any_proc_module(void)
{
    for (size_t i = 0; i < rdp_pnet_nselected(); i++) {
        if (rdp_pnet_selected_module(i)->setup_proc != NULL) {
            return true;
        }
    }
    return false;
}

static bool is_proc_data(const pmix_info_t *in)
{
    return PMIX_CHECK_KEY(in, PMIX_PROC_DATA)
           && in->value.type == PMIX_DATA_ARRAY && in->value.data.darray != NULL
           && in->value.data.darray->type == PMIX_INFO;
}

/* Decide every bound process of @a info into @a jp */
static pmix_status_t decide_all(const char *nspace, const pmix_info_t *info,
                                size_t ninfo, job_procs_t *jp)
{
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; i < ninfo && status == PMIX_SUCCESS; i++) {
        const pmix_data_array_t *da;
        binding_t b;

        if (!is_proc_data(&info[i])) {
            continue;
        }
        da = info[i].value.data.darray;
        if (binding_of(da->array, da->size, &b)
            && (b.cpuset != NULL || b.locality != NULL)) {
            status = decide_proc(nspace, &b, jp);
        }
    }
    return status;
}

/* Keep @a jp for @a nspace (NULL: forget), destroying what was kept */
static pmix_status_t procs_replace(const char *nspace, job_procs_t *jp)
{
    pmix_status_t status;
    void *old = NULL;

    rdp_pnet_lock();
    status = rdp_pnet_table_swap(&procs.jobs, &procs.ready, nspace, jp, &old);
    rdp_pnet_unlock();
    job_procs_destroy(old);
    return status;
}

pmix_status_t rdp_pnet_setup_procs(const char *nspace, const pmix_info_t *info,
                                   size_t ninfo)
{
    job_procs_t *jp;
    pmix_status_t status;

    if (!any_proc_module()) {
        return PMIX_SUCCESS;
    }
    jp = rdp_calloc(1, sizeof(*jp));
    if (jp == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = rdp_hash_init(&jp->ranks, 16);
    if (status != PMIX_SUCCESS) {
        rdp_free(jp);
        return status;
    }
    status = decide_all(nspace, info, ninfo, jp);
    if (status == PMIX_SUCCESS && jp->ranks.count == 0) {
        job_procs_destroy(jp);
        return procs_replace(nspace, NULL);
    }
    if (status == PMIX_SUCCESS) {
        return procs_replace(nspace, jp);
    }
    job_procs_destroy(jp);
    return status;
}

/* ---- applying (setup_fork), forgetting (job end) ---- */

pmix_status_t rdp_pnet_proc_setup_fork(const char *nspace, pmix_rank_t rank,
                                       char ***env)
{
    pmix_status_t status = PMIX_SUCCESS;
    job_procs_t *jp;
    proc_env_t *pe = NULL;

    rdp_pnet_lock();
    jp = procs.ready ? rdp_hash_get_str(&procs.jobs, nspace) : NULL;
    if (jp != NULL) {
        pe = rdp_hash_get_u64(&jp->ranks, rank);
    }
    for (size_t i = 0; pe != NULL && i < pe->n && status == PMIX_SUCCESS; i++) {
        status = rdp_pnet_envar_apply(pe->dirs[i].key, &pe->dirs[i].value, env);
    }
    rdp_pnet_unlock();
    return status;
}

void rdp_pnet_procs_forget(const char *nspace)
{
    (void)procs_replace(nspace, NULL);
}

void rdp_pnet_procs_cleanup(void)
{
    rdp_hash_entry_t *e;
    size_t i;

    rdp_pnet_lock();
    if (procs.ready) {
        rdp_hash_for_each(e, &procs.jobs, i) {
            job_procs_destroy(e->value);
        }
        rdp_hash_cleanup(&procs.jobs);
        procs.ready = false;
    }
    rdp_pnet_unlock();
}
