/* query.h - answers to PMIx_Query_info keys that the client and the server
 * library both build: qualifiers, attribute support, available servers,
 * memory of a process, the overall status */
#ifndef RDP_CORE_UTIL_QUERY_H
#define RDP_CORE_UTIL_QUERY_H

#include <pmix_common.h>

#include <stdbool.h>
#include <sys/types.h>

/** Who asks for PMIX_QUERY_ATTRIBUTE_SUPPORT: which kinds of function this
 * process can answer for (the rest must be asked of a server). */
enum rdp_qry_side {
    RDP_QRY_CLIENT = 0x1, /* PMIX_CLIENT_FUNCTIONS / _ATTRIBUTES */
    RDP_QRY_SERVER = 0x2, /* PMIX_SERVER_FUNCTIONS / _ATTRIBUTES */
    RDP_QRY_TOOL   = 0x4, /* PMIX_TOOL_FUNCTIONS / _ATTRIBUTES */
    RDP_QRY_HOST   = 0x8  /* PMIX_HOST_FUNCTIONS / _ATTRIBUTES */
};

/** The boolean qualifier @a key of @a q (false when absent). */
bool rdp_qry_flag(const pmix_query_t *q, const char *key);

/** The rank named by @a q's PMIX_RANK or PMIX_PROCID qualifier, else
 * PMIX_RANK_WILDCARD (every rank). */
pmix_rank_t rdp_qry_rank(const pmix_query_t *q);

/** The PMIX_HOSTNAME qualifier of @a q (borrowed), else NULL. */
const char *rdp_qry_hostname(const pmix_query_t *q);

/** The overall status of a query of @a asked keys of which @a answered got
 * an answer: SUCCESS, PMIX_QUERY_PARTIAL_SUCCESS or PMIX_ERR_NOT_FOUND. */
pmix_status_t rdp_qry_status(size_t asked, size_t answered);

/** The sides (enum rdp_qry_side) that PMIX_QUERY_ATTRIBUTE_SUPPORT in
 * @a q asks about; a query naming no side asks for every side's function
 * list. */
unsigned rdp_qry_attr_sides(const pmix_query_t *q);

/**
 * Record @a attrs (NULL-terminated attribute names such as
 * "PMIX_TIMEOUT") as the host's support of @a function
 * (PMIx_Register_attributes).  Copied; a second registration of the same
 * function is PMIX_ERR_REPEAT_ATTR_REGISTRATION.
 */
pmix_status_t rdp_qry_host_attrs_register(const char *function,
                                          char *const attrs[]);
/** Forget every host registration (server finalize, tests). */
void rdp_qry_host_attrs_clear(void);

/**
 * The answer to PMIX_QUERY_ATTRIBUTE_SUPPORT of @a q for the sides in
 * @a sides, loaded into @a out (key PMIX_QUERY_ATTRIBUTE_SUPPORT, a
 * PMIX_DATA_ARRAY of PMIX_INFO: for each *_FUNCTIONS qualifier the
 * qualifier's key with a comma-separated string of functions, for each
 * *_ATTRIBUTES qualifier ("all" or a comma-separated list of functions)
 * one entry per function named after it holding a PMIX_DATA_ARRAY of
 * PMIX_REGATTR).  PMIX_ERR_NOT_FOUND when nothing matched.
 */
pmix_status_t rdp_qry_attr_support(const pmix_query_t *q, unsigned sides,
                                   pmix_info_t *out);

/**
 * The servers whose rendezvous files ("pmix.*", first line
 * "nspace.rank;uri", then version, pid, "uid:gid", start time) lie under
 * @a dir (searched two directory levels deep): one PMIX_SERVER_INFO_ARRAY
 * info per server (PMIX_SERVER_NSPACE, PMIX_SERVER_RANK, PMIX_VERSION_INFO,
 * and PMIX_SERVER_PIDINFO, PMIX_USERID, PMIX_GRPID,
 * PMIX_SERVER_START_TIME when the file has them), appended to *@a info_p
 * (an array of *@a n_p, reallocated).  Unreadable or malformed files are
 * skipped.  PMIX_SUCCESS (maybe none found) or PMIX_ERR_NOMEM.
 */
pmix_status_t rdp_qry_servers_in(const char *dir, pmix_info_t **info_p,
                                 size_t *n_p);

/** The directory PMIX_QUERY_AVAIL_SERVERS searches: PMIX_SYSTEM_TMPDIR,
 * else TMPDIR, else /tmp (borrowed). */
const char *rdp_qry_servers_dir(void);

/** Resident memory of process @a pid in megabytes (from /proc).
 * PMIX_ERR_NOT_FOUND when the process is gone or unreadable. */
pmix_status_t rdp_qry_rss_mb(pid_t pid, float *mb_p);

#endif
