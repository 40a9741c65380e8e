/* regex.h - rdpmix node-map and proc-map strings (generate and parse) */
#ifndef RDP_CORE_SERVER_REGEX_H
#define RDP_CORE_SERVER_REGEX_H

#include <pmix_common.h>

#include <stddef.h>

/*
 * PMIx_generate_regex / PMIx_generate_ppn produce strings that a host hands
 * back to PMIx_server_register_nspace as PMIX_NODE_MAP / PMIX_PROC_MAP.
 * Only this library reads them, so the format is ours:
 *
 *   node map  "rdpmix:" item ("," item)*
 *             item := name | prefix "[" width ":" range ("," range)* "]"
 *             range := N | N "-" M        (N <= M, decimal, < 10^9)
 *             a group expands, in order, to prefix + N printed with
 *             at least `width` digits (zero padded), e.g.
 *             "node01,node02,node03,node10" -> "rdpmix:node[2:1-3,10]"
 *   proc map  "rdpmix-ppn:" ranks (";" ranks)*    one group per node,
 *             in node-map order; ranks := empty | range ("," range)*
 *             e.g. "0,1,2;3,4" -> "rdpmix-ppn:0-2;3-4"
 *
 * Both parsers also accept the plain input forms (no prefix), are bounded
 * (RDP_REGEX_MAX_NODES names, RDP_PPN_MAX_RANKS ranks, RDP_REGEX_MAX_LEN
 * input bytes) and reject anything malformed with PMIX_ERR_BAD_PARAM.
 */

#define RDP_REGEX_PREFIX    "rdpmix:"
#define RDP_PPN_PREFIX      "rdpmix-ppn:"
#define RDP_REGEX_MAX_NODES (1u << 20)
#define RDP_PPN_MAX_RANKS   (1u << 24)
#define RDP_REGEX_MAX_LEN   (64u << 20)
/* longest host name accepted in a node list */
#define RDP_REGEX_MAX_NAME 1024

/**
 * Compress a comma-separated list of node names.
 * @param [in]  input     borrowed
 * @param [out] regex_p   malloc'ed string; the caller frees it
 */
pmix_status_t rdp_server_regex_generate(const char *input, char **regex_p);

/**
 * Expand a node map (ours or a plain comma list).
 * @param [out] names_p  malloc'ed NULL-terminated array of malloc'ed
 *                       names (free with pmix_argv_free / PMIX_ARGV_FREE)
 * @param [out] n_p      number of names
 */
pmix_status_t rdp_server_regex_parse(const char *regex, char ***names_p,
                                     size_t *n_p);

/** A parsed proc map: ranks of node i are ranks[first[i] .. first[i+1]). */
typedef struct rdp_server_ppn {
    size_t nnodes;
    size_t nranks;
    size_t *first;      /* nnodes + 1 entries */
    pmix_rank_t *ranks; /* nranks entries */
} rdp_server_ppn_t;

/**
 * Compress a proc map ("0,1,2;3,4": ranks per node, nodes separated by
 * ';').
 * @param [out] ppn_p  malloc'ed; the caller frees it
 */
pmix_status_t rdp_server_ppn_generate(const char *input, char **ppn_p);

/**
 * Expand a proc map (ours or the plain form) into @a ppn (caller-provided,
 * filled only on success; release with rdp_server_ppn_cleanup).
 */
pmix_status_t rdp_server_ppn_parse(const char *str, rdp_server_ppn_t *ppn);
/** Free what rdp_server_ppn_parse allocated; accepts a zeroed struct. */
void rdp_server_ppn_cleanup(rdp_server_ppn_t *ppn);

#endif
