/* query_keys.h - the keys a server answers for a job, which the query
 * tests (run_client_query.c, run_tool_query.c) ask all at once */
#ifndef RDP_TESTS_INTEG_QUERY_KEYS_H
#define RDP_TESTS_INTEG_QUERY_KEYS_H

#include <pmix_common.h>

/* ten keys, for a char *[] initializer (add the NULL) */
#define JOB_QUERY_KEYS                                                    \
    PMIX_QUERY_NAMESPACES, PMIX_QUERY_NAMESPACE_INFO,                     \
        PMIX_QUERY_JOB_STATUS, PMIX_QUERY_PROC_TABLE,                     \
        PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT,            \
        PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_MEMORY_USAGE,                \
        PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES

#endif
