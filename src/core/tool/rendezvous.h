/* rendezvous.h - reading the rendezvous files servers leave for tools */
#ifndef RDP_CORE_TOOL_RENDEZVOUS_H
#define RDP_CORE_TOOL_RENDEZVOUS_H

#include <pmix_common.h>

#include <sys/types.h>

/* A server found for a tool (src/core/server/tool.c writes the files). */
typedef struct rdp_rndz {
    char *path; /* its UNIX socket */
    char *uri;  /* its URI as published (NULL if only a path is known) */
    pid_t pid;  /* 0 if unknown */
} rdp_rndz_t;

/* What rdp_rndz_find looks for under each root and one level below. */
typedef struct rdp_rndz_query {
    const char *roots[2]; /* NULL entries are skipped */
    const char *host;     /* this node: breaks ties between nspace files */
    pid_t pid;            /* the server with this pid (0: not asked) */
    const char *nspace;   /* the server of this nspace (NULL: not asked) */
} rdp_rndz_query_t;

/** The server of an explicit URI: "<id>;unix:<socket>" or "file:<path of
 * a rendezvous file>".  PMIX_ERR_BAD_PARAM for anything else. */
pmix_status_t rdp_rndz_from_uri(const char *uri, rdp_rndz_t *out);
/** The system server: <dir>/pmix.sys.<host>.  PMIX_ERR_NOT_FOUND. */
pmix_status_t rdp_rndz_system(const char *dir, const char *host,
                              rdp_rndz_t *out);
/** A server named by our environment (PMIX_SERVER_URI*, a tool started by
 * a server).  PMIX_ERR_NOT_FOUND when none. */
pmix_status_t rdp_rndz_from_env(rdp_rndz_t *out);
/**
 * Session servers' files (pmix.<host>.tool.<pid or nspace>) of live
 * servers.  With neither pid nor nspace every server counts.  Exactly one
 * must match: PMIX_ERR_NOT_FOUND for none, PMIX_ERR_BAD_PARAM (logged, with
 * the candidates' pids) for several and nothing to choose between them.
 */
pmix_status_t rdp_rndz_find(const rdp_rndz_query_t *q, rdp_rndz_t *out);
/** Free what *r holds (not r itself). */
void rdp_rndz_cleanup(rdp_rndz_t *r);

#endif
