/* nsinfo_shape.h - PMIX_QUERY_NAMESPACE_INFO's answer walked the way
 * OpenPMIx 4.2.2's examples/tool.c walks it, for the query tests
 * (run_client_query.c, run_client_hostops.c, run_tool_query.c).
 *
 * The shape (tool.c's and PRRTE's): the value is a pmix_data_array_t of
 * PMIX_INFO, one pmix_info_t per job; each job's value is a non-empty
 * pmix_data_array_t of PMIX_INFO whose members are all strings (tool.c
 * prints each as one), among them PMIX_NSPACE and PMIX_CMD_LINE. rdpmixd
 * keys each job PMIX_JOB_INFO_ARRAY, as PRRTE does (tool.c ignores it). */
#ifndef RDP_TESTS_INTEG_NSINFO_SHAPE_H
#define RDP_TESTS_INTEG_NSINFO_SHAPE_H

#include <pmix_common.h>

#include <stddef.h>
#include <string.h>

/** The job entries of answer @a i (borrowed), their count in @a n_p; NULL
 * when @a i is not an array of pmix_info_t. */
static inline const pmix_info_t *nsinfo_jobs(const pmix_info_t *i, size_t *n_p)
{
    const pmix_data_array_t *a;

    if (i == NULL || i->value.type != PMIX_DATA_ARRAY
        || (a = i->value.data.darray) == NULL || a->type != PMIX_INFO
        || (a->size > 0 && a->array == NULL)) {
        return NULL;
    }
    *n_p = a->size;
    return a->array;
}

/** Job entry @a job's string member @a key (borrowed); NULL when the entry
 * is not shaped as above, or has no @a key. */
static inline const char *nsinfo_job_string(const pmix_info_t *job,
                                            const char *key)
{
    const pmix_data_array_t *a = job->value.data.darray;
    const pmix_info_t *e;
    const char *found = NULL;

    if (!PMIX_CHECK_KEY(job, PMIX_JOB_INFO_ARRAY)
        || job->value.type != PMIX_DATA_ARRAY || a == NULL
        || a->type != PMIX_INFO || a->size == 0 || a->array == NULL) {
        return NULL;
    }
    e = a->array;
    for (size_t m = 0; m < a->size; m++) {
        if (e[m].value.type != PMIX_STRING || e[m].value.data.string == NULL) {
            return NULL;
        }
        if (PMIX_CHECK_KEY(&e[m], key)) {
            found = e[m].value.data.string;
        }
    }
    return found;
}

/** Answer @a i holds exactly one job entry: its PMIX_NSPACE and PMIX_CMD_LINE
 * (borrowed) in @a ns_p and @a cmd_p. Returns NULL, or what is wrong. */
static inline const char *nsinfo_one_job(const pmix_info_t *i,
                                         const char **ns_p, const char **cmd_p)
{
    const pmix_info_t *jobs;
    size_t n = 0;

    jobs = nsinfo_jobs(i, &n);
    if (jobs == NULL || n != 1) {
        return "is not one job's info array";
    }
    *ns_p  = nsinfo_job_string(&jobs[0], PMIX_NSPACE);
    *cmd_p = nsinfo_job_string(&jobs[0], PMIX_CMD_LINE);
    if (*ns_p == NULL || *cmd_p == NULL) {
        return "has a misshapen job entry";
    }
    return NULL;
}

#endif
