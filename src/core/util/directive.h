/* directive.h - required info directives (PMIX_INFO_REQD) and the table of
 * the attributes each public function supports.
 *
 * Every public API function taking an info array starts with
 *     RDP_CHECK_DIRECTIVES(info, ninfo);
 * which fails the call with PMIX_ERR_NOT_SUPPORTED when an entry marked
 * required names an attribute that function does not support (logged at
 * debug with the key); optional entries are never looked at.
 *
 * The same table answers PMIX_QUERY_ATTRIBUTE_SUPPORT (walk it with
 * rdp_attr_function_name / rdp_attr_supported_by) and rdpmix-info. */
#ifndef RDP_CORE_UTIL_DIRECTIVE_H
#define RDP_CORE_UTIL_DIRECTIVE_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>

/** Which API a function belongs to (the Standard's PMIX_CLIENT_FUNCTIONS,
 * PMIX_SERVER_FUNCTIONS, PMIX_TOOL_FUNCTIONS). */
typedef enum rdp_api_kind {
    RDP_API_CLIENT,
    RDP_API_SERVER,
    RDP_API_TOOL
} rdp_api_kind_t;

/**
 * Check the required entries of @a info (@a ninfo; NULL/0 is fine) of a
 * call to public function @a function ("PMIx_Fence"; a "_nb" suffix is
 * ignored, both forms share one list).  Returns PMIX_SUCCESS, or
 * PMIX_ERR_NOT_SUPPORTED for the first required attribute @a function does
 * not support.  Functions whose info carries the caller's data (PMIx_Publish,
 * PMIx_Notify_event, ...) take keys that are not the Standard's or rdpmix's
 * attributes as data, never as directives.  Any thread; allocates nothing.
 */
pmix_status_t rdp_directives_check(const char *function,
                                   const pmix_info_t *info, size_t ninfo);

/** At the entry of a public function: return its status on failure. */
#define RDP_CHECK_DIRECTIVES(info, ninfo)                    \
    do {                                                     \
        pmix_status_t _rdp_dir_status =                      \
            rdp_directives_check(__func__, (info), (ninfo)); \
        if (_rdp_dir_status != PMIX_SUCCESS) {               \
            return _rdp_dir_status;                          \
        }                                                    \
    } while (0)

/** True if @a function (with or without "_nb") supports attribute string
 * @a key ("pmix.timeout"), or takes any key (host data). */
bool rdp_attr_is_supported(const char *function, const char *key);

/** The @a i-th function of the table ("PMIx_Fence"), NULL past the end;
 * with *@a kind_p (may be NULL) set to its API. */
const char *rdp_attr_function_name(size_t i, rdp_api_kind_t *kind_p);

/** True if @a function is in the table only to check its directives: it
 * returns PMIX_ERR_NOT_SUPPORTED whatever it is given (IOF today). */
bool rdp_attr_is_stub(const char *function);

/** True if @a function takes any key (its info is the host's data, which
 * rdpmix stores or passes on without reading it as directives). */
bool rdp_attr_takes_any(const char *function);

/**
 * The @a i-th attribute string ("pmix.timeout") @a function supports, NULL
 * past the end or for a function not in the table.  Iterate from 0:
 *     for (i = 0; (a = rdp_attr_supported_by("PMIx_Get", i)) != NULL; i++)
 * PMIx_Get_attribute_name(a) gives its name, rdp_attr_std_type (attr_type.h)
 * the type of the integer and boolean ones.
 */
const char *rdp_attr_supported_by(const char *function, size_t i);

#endif
