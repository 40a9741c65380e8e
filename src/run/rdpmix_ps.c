/* rdpmix_ps.c - rdpmix-ps: a node's jobs and their processes, like ps */
#include "config.h"

#include <pmix_tool.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A PMIx tool written against the Standard API only: it attaches to one
 * server (a daemon by pid or nspace, a URI, the system server, or the one
 * session server it can find), asks for the namespaces it hosts and the
 * proc table of each, and prints them as a table or as JSON.
 */

typedef struct ps_opts {
    pmix_info_t info[8];
    size_t ninfo;
    const char *job; /* only this nspace */
    bool json;
} ps_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: rdpmix-ps [options]\n"
            "\n"
            "Attach to a PMIx server on this node and print its jobs and\n"
            "their processes (nspace, rank, host, pid, state, exit code,\n"
            "executable).\n"
            "\n"
            "Which server (default: the only session server found):\n"
            "  --pid PID          the server (rdpmixd) with this pid\n"
            "  --nspace NS        the server of this namespace\n"
            "  --uri URI          this server URI (or file:RENDEZVOUS-FILE)\n"
            "  --system           the node's system server only\n"
            "  --system-first     the system server if there is one\n"
            "  --tmpdir DIR       where servers publish their rendezvous\n"
            "                     files (PMIX_SYSTEM_TMPDIR; default $TMPDIR\n"
            "                     or /tmp)\n"
            "  --retries N        try N more times when no server is found\n"
            "  --retry-delay S    seconds between tries (default 1)\n"
            "Output:\n"
            "  --job NS           only this job\n"
            "  --json             one JSON document, for scripts\n"
            "  -h, --help         this text\n");
}

static const char *arg_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "rdpmix-ps: %s needs a value\n", argv[*i]);
        exit(2);
    }
    return argv[++(*i)];
}

static void add_info(ps_opts_t *o, const char *key, const void *val,
                     pmix_data_type_t type)
{
    if (o->ninfo == sizeof(o->info) / sizeof(o->info[0])) {
        fprintf(stderr, "rdpmix-ps: too many options\n");
        exit(2);
    }
    PMIX_INFO_LOAD(&o->info[o->ninfo], key, val, type);
    o->ninfo++;
}

static uint32_t arg_u32(const char *opt, const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);

    if (end == s || *end != '\0' || v > UINT32_MAX) {
        fprintf(stderr, "rdpmix-ps: %s wants a number, not '%s'\n", opt, s);
        exit(2);
    }
    return (uint32_t)v;
}

static void parse_args(int argc, char **argv, ps_opts_t *o)
{
    bool yes       = true;
    uint32_t delay = 1;

    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--pid") == 0) {
            pid_t pid = (pid_t)arg_u32(a, arg_value(argc, argv, &i));

            add_info(o, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        } else if (strcmp(a, "--nspace") == 0) {
            add_info(o, PMIX_SERVER_NSPACE, arg_value(argc, argv, &i),
                     PMIX_STRING);
        } else if (strcmp(a, "--uri") == 0) {
            add_info(o, PMIX_SERVER_URI, arg_value(argc, argv, &i),
                     PMIX_STRING);
        } else if (strcmp(a, "--system") == 0) {
            add_info(o, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
        } else if (strcmp(a, "--system-first") == 0) {
            add_info(o, PMIX_CONNECT_SYSTEM_FIRST, &yes, PMIX_BOOL);
        } else if (strcmp(a, "--tmpdir") == 0) {
            add_info(o, PMIX_SYSTEM_TMPDIR, arg_value(argc, argv, &i),
                     PMIX_STRING);
        } else if (strcmp(a, "--retries") == 0) {
            uint32_t n = arg_u32(a, arg_value(argc, argv, &i));

            add_info(o, PMIX_CONNECT_MAX_RETRIES, &n, PMIX_UINT32);
            add_info(o, PMIX_CONNECT_RETRY_DELAY, &delay, PMIX_UINT32);
        } else if (strcmp(a, "--retry-delay") == 0) {
            delay = arg_u32(a, arg_value(argc, argv, &i));
            add_info(o, PMIX_CONNECT_RETRY_DELAY, &delay, PMIX_UINT32);
        } else if (strcmp(a, "--job") == 0) {
            o->job = arg_value(argc, argv, &i);
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else {
            fprintf(stderr, "rdpmix-ps: unknown option %s\n", a);
            usage(stderr);
            exit(2);
        }
    }
}

/* ---- asking the server ---- */

/* One key about one nspace (NULL: about the server's whole view). */
static pmix_status_t query_one(const char *key, const char *nspace,
                               pmix_info_t **results, size_t *nresults)
{
    pmix_query_t q;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    if (nspace != NULL) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    }
    rc = PMIx_Query_info(&q, 1, results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

static char *namespaces(void)
{
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    char *list       = NULL;
    pmix_status_t rc = query_one(PMIX_QUERY_NAMESPACES, NULL, &res, &nres);

    if (rc == PMIX_SUCCESS && nres > 0 && res[0].value.type == PMIX_STRING
        && res[0].value.data.string != NULL) {
        list = strdup(res[0].value.data.string);
    } else if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND) {
        fprintf(stderr, "rdpmix-ps: query of the namespaces failed: %s\n",
                PMIx_Error_string(rc));
    }
    PMIX_INFO_FREE(res, nres);
    return list;
}

/* ---- printing ---- */

static const char *or_dash(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "-";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static void print_proc(const ps_opts_t *o, const pmix_proc_info_t *p,
                       bool first)
{
    if (!o->json) {
        printf("%-24s %5u %-16s %8d %-18s %5d %s\n", p->proc.nspace,
               p->proc.rank, or_dash(p->hostname), (int)p->pid,
               PMIx_Proc_state_string(p->state), p->exit_code,
               or_dash(p->executable_name));
        return;
    }
    printf("%s\n      {\"rank\": %u, \"host\": ", first ? "" : ",",
           p->proc.rank);
    json_string(p->hostname);
    printf(", \"pid\": %d, \"state\": ", (int)p->pid);
    json_string(PMIx_Proc_state_string(p->state));
    printf(", \"exit_code\": %d, \"executable\": ", p->exit_code);
    json_string(p->executable_name);
    printf("}");
}

static int print_job(const ps_opts_t *o, const char *nspace, bool first)
{
    pmix_info_t *res = NULL;
    size_t nres      = 0;
    pmix_status_t rc = query_one(PMIX_QUERY_PROC_TABLE, nspace, &res, &nres);
    const pmix_data_array_t *da = NULL;

    if (rc == PMIX_SUCCESS && nres > 0 && res[0].value.type == PMIX_DATA_ARRAY
        && res[0].value.data.darray != NULL
        && res[0].value.data.darray->type == PMIX_PROC_INFO) {
        da = res[0].value.data.darray;
    } else {
        fprintf(
            stderr, "rdpmix-ps: no proc table for %s: %s\n", nspace,
            PMIx_Error_string(rc == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : rc));
    }
    if (o->json) {
        printf("%s\n    {\"nspace\": ", first ? "" : ",");
        json_string(nspace);
        printf(", \"procs\": [");
    }
    for (size_t i = 0; da != NULL && i < da->size; i++) {
        print_proc(o, &((const pmix_proc_info_t *)da->array)[i], i == 0);
    }
    if (o->json) {
        printf("%s]}", da != NULL && da->size > 0 ? "\n    " : "");
    }
    PMIX_INFO_FREE(res, nres);
    return da != NULL ? 0 : 1;
}

static int print_all(const ps_opts_t *o, const pmix_proc_t *server)
{
    char *list = namespaces();
    char *save = NULL;
    bool first = true;
    int bad    = 0;

    if (o->json) {
        printf("{\"server\": {\"nspace\": ");
        json_string(server->nspace);
        printf(", \"rank\": %u},\n  \"jobs\": [", server->rank);
    } else {
        printf("%-24s %5s %-16s %8s %-18s %5s %s\n", "NSPACE", "RANK", "HOST",
               "PID", "STATE", "EXIT", "EXECUTABLE");
    }
    for (char *ns       = list != NULL ? strtok_r(list, ",", &save) : NULL;
         ns != NULL; ns = strtok_r(NULL, ",", &save)) {
        if (o->job != NULL && strcmp(ns, o->job) != 0) {
            continue;
        }
        bad |= print_job(o, ns, first);
        first = false;
    }
    if (o->json) {
        printf("%s]}\n", first ? "" : "\n  ");
    }
    free(list);
    return bad;
}

int main(int argc, char **argv)
{
    ps_opts_t o;
    pmix_proc_t me, *servers = NULL;
    size_t nservers = 0;
    pmix_status_t rc;
    int bad;

    parse_args(argc, argv, &o);
    rc = PMIx_tool_init(&me, o.info, o.ninfo);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rdpmix-ps: cannot attach to a server: %s\n",
                PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_tool_get_servers(&servers, &nservers);
    if (rc != PMIX_SUCCESS || nservers == 0) {
        fprintf(stderr, "rdpmix-ps: attached to no server\n");
        PMIx_tool_finalize();
        return 1;
    }
    bad = print_all(&o, &servers[0]);
    fflush(stdout);
    PMIX_PROC_FREE(servers, nservers);
    PMIx_tool_finalize();
    for (size_t i = 0; i < o.ninfo; i++) {
        PMIX_INFO_DESTRUCT(&o.info[i]);
    }
    return bad;
}
