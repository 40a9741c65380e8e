/* query.c - answers to PMIx_Query_info keys shared by the client and the
 * server library (see query.h) */
#include "config.h"
#include "core/util/query.h"

#include "core/util/alloc.h"
#include "core/util/attr_type.h"
#include "core/util/directive.h"
#include "core/util/value.h"

#include <pmix.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- qualifiers ---- */

static const pmix_info_t *qualifier(const pmix_query_t *q, const char *key)
{
    for (size_t i = 0; q->qualifiers != NULL && i < q->nqual; i++) {
        if (PMIX_CHECK_KEY(&q->qualifiers[i], key)) {
            return &q->qualifiers[i];
        }
    }
    return NULL;
}

bool rdp_qry_flag(const pmix_query_t *q, const char *key)
{
    const pmix_info_t *i = qualifier(q, key);

    return i != NULL && PMIX_INFO_TRUE(i);
}

pmix_rank_t rdp_qry_rank(const pmix_query_t *q)
{
    const pmix_info_t *i = qualifier(q, PMIX_RANK);

    if (i != NULL && i->value.type == PMIX_PROC_RANK) {
        return i->value.data.rank;
    }
    i = qualifier(q, PMIX_PROCID);
    if (i != NULL && i->value.type == PMIX_PROC && i->value.data.proc != NULL) {
        return i->value.data.proc->rank;
    }
    return PMIX_RANK_WILDCARD;
}

const char *rdp_qry_hostname(const pmix_query_t *q)
{
    const pmix_info_t *i = qualifier(q, PMIX_HOSTNAME);

    if (i != NULL && i->value.type == PMIX_STRING) {
        return i->value.data.string;
    }
    return NULL;
}

pmix_status_t rdp_qry_status(size_t asked, size_t answered)
{
    if (answered == 0) {
        return PMIX_ERR_NOT_FOUND;
    }
    return answered < asked ? PMIX_QUERY_PARTIAL_SUCCESS : PMIX_SUCCESS;
}

/* ---- attribute support ---- */

/* One function and the attributes rdpmix honours in it. */
typedef struct fn_attrs {
    const char *function;
    const char *const *attrs; /* attribute names, NULL-terminated */
} fn_attrs_t;

#define ATTRS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE       ((const char *const[]){NULL})

/* What the client library supports (docs/status.md, client API row). */
static const fn_attrs_t client_fns[] = {
    {"PMIx_Init", ATTRS("PMIX_PROGRAMMING_MODEL", "PMIX_MODEL_LIBRARY_NAME",
                        "PMIX_MODEL_LIBRARY_VERSION")},
    {"PMIx_Finalize", NONE},
    {"PMIx_Abort", NONE},
    {"PMIx_Put", NONE},
    {"PMIx_Commit", NONE},
    {"PMIx_Fence", ATTRS("PMIX_COLLECT_DATA", "PMIX_TIMEOUT")},
    {"PMIx_Get", ATTRS("PMIX_OPTIONAL", "PMIX_IMMEDIATE", "PMIX_TIMEOUT")},
    {"PMIx_Publish", ATTRS("PMIX_RANGE", "PMIX_PERSISTENCE")},
    {"PMIx_Lookup", ATTRS("PMIX_RANGE", "PMIX_WAIT", "PMIX_TIMEOUT")},
    {"PMIx_Unpublish", ATTRS("PMIX_RANGE")},
    {"PMIx_Connect", ATTRS("PMIX_TIMEOUT")},
    {"PMIx_Disconnect", ATTRS("PMIX_TIMEOUT")},
    {"PMIx_Register_event_handler",
     ATTRS("PMIX_EVENT_HDLR_NAME", "PMIX_EVENT_HDLR_FIRST",
           "PMIX_EVENT_HDLR_LAST", "PMIX_EVENT_HDLR_BEFORE",
           "PMIX_EVENT_HDLR_AFTER")},
    {"PMIx_Notify_event", ATTRS("PMIX_EVENT_ACTION_COMPLETE")},
    {"PMIx_Query_info",
     ATTRS("PMIX_QUERY_REFRESH_CACHE", "PMIX_QUERY_LOCAL_ONLY",
           "PMIX_QUERY_REPORT_AVG", "PMIX_QUERY_REPORT_MINMAX", "PMIX_NSPACE",
           "PMIX_RANK", "PMIX_PROCID", "PMIX_HOSTNAME", "PMIX_CLIENT_FUNCTIONS",
           "PMIX_SERVER_FUNCTIONS", "PMIX_TOOL_FUNCTIONS",
           "PMIX_HOST_FUNCTIONS", "PMIX_CLIENT_ATTRIBUTES",
           "PMIX_SERVER_ATTRIBUTES", "PMIX_TOOL_ATTRIBUTES",
           "PMIX_HOST_ATTRIBUTES")},
    {"PMIx_Log", ATTRS("PMIX_LOG_STDOUT", "PMIX_LOG_STDERR", "PMIX_LOG_SYSLOG",
                       "PMIX_LOG_LOCAL_SYSLOG", "PMIX_LOG_GLOBAL_SYSLOG",
                       "PMIX_LOG_SYSLOG_PRI", "PMIX_LOG_ONCE")},
    {"PMIx_Job_control",
     ATTRS("PMIX_JOB_CTRL_SIGNAL", "PMIX_JOB_CTRL_TERMINATE",
           "PMIX_JOB_CTRL_KILL", "PMIX_REGISTER_CLEANUP",
           "PMIX_REGISTER_CLEANUP_DIR")},
    {"PMIx_Process_monitor",
     ATTRS("PMIX_MONITOR_HEARTBEAT", "PMIX_MONITOR_ID",
           "PMIX_MONITOR_HEARTBEAT_TIME", "PMIX_MONITOR_HEARTBEAT_DROPS",
           "PMIX_MONITOR_CANCEL")},
    {NULL, NULL}};

/* What the server library supports (docs/status.md, server API row). */
static const fn_attrs_t server_fns[] = {
    {"PMIx_server_init", ATTRS("PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR",
                               "PMIX_SERVER_NSPACE", "PMIX_SERVER_RANK")},
    {"PMIx_server_finalize", NONE},
    {"PMIx_server_register_nspace",
     ATTRS("PMIX_JOB_SIZE", "PMIX_UNIV_SIZE", "PMIX_LOCAL_SIZE",
           "PMIX_LOCAL_PEERS", "PMIX_NODE_MAP", "PMIX_PROC_MAP",
           "PMIX_HOSTNAME", "PMIX_NODEID", "PMIX_APPNUM")},
    {"PMIx_server_deregister_nspace", NONE},
    {"PMIx_server_register_client", NONE},
    {"PMIx_server_deregister_client", NONE},
    {"PMIx_server_setup_fork", NONE},
    {"PMIx_server_dmodex_request", NONE},
    {"PMIx_server_setup_application", NONE},
    {"PMIx_server_setup_local_support", NONE},
    {"PMIx_generate_regex", NONE},
    {"PMIx_generate_ppn", NONE},
    {"PMIx_Register_attributes", NONE},
    {NULL, NULL}};


/* The host's registrations (PMIx_Register_attributes), any thread. */
typedef struct host_fn {
    char *function;
    char **attrs;
} host_fn_t;

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static host_fn_t *host_fns;
static size_t nhost_fns;

pmix_status_t rdp_qry_host_attrs_register(const char *function,
                                          char *const attrs[])
{
    pmix_status_t status = PMIX_SUCCESS;
    host_fn_t *grown;

    if (function == NULL || attrs == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&host_lock);
    for (size_t i = 0; i < nhost_fns; i++) {
        if (strcmp(host_fns[i].function, function) == 0) {
            status = PMIX_ERR_REPEAT_ATTR_REGISTRATION;
            goto out_unlock;
        }
    }
    grown = rdp_realloc(host_fns, (nhost_fns + 1) * sizeof(*grown));
    if (grown == NULL) {
        status = PMIX_ERR_NOMEM;
        goto out_unlock;
    }
    host_fns                     = grown;
    host_fns[nhost_fns].function = rdp_strdup(function);
    host_fns[nhost_fns].attrs    = pmix_argv_copy((char **)attrs);
    if (host_fns[nhost_fns].function == NULL
        || host_fns[nhost_fns].attrs == NULL) {
        rdp_free(host_fns[nhost_fns].function);
        pmix_argv_free(host_fns[nhost_fns].attrs);
        status = PMIX_ERR_NOMEM;
        goto out_unlock;
    }
    nhost_fns++;
out_unlock:
    pthread_mutex_unlock(&host_lock);
    return status;
}

void rdp_qry_host_attrs_clear(void)
{
    pthread_mutex_lock(&host_lock);
    for (size_t i = 0; i < nhost_fns; i++) {
        rdp_free(host_fns[i].function);
        pmix_argv_free(host_fns[i].attrs);
    }
    rdp_free(host_fns);
    host_fns  = NULL;
    nhost_fns = 0;
    pthread_mutex_unlock(&host_lock);
}

/* A growing list of answer entries. */
typedef struct entries {
    pmix_info_t *info;
    size_t n, cap;
} entries_t;

static pmix_info_t *entry_add(entries_t *e)
{
    if (e->n == e->cap) {
        size_t cap        = e->cap == 0 ? 8 : 2 * e->cap;
        pmix_info_t *more = rdp_realloc(e->info, cap * sizeof(*more));

        if (more == NULL) {
            return NULL;
        }
        e->info = more;
        e->cap  = cap;
    }
    memset(&e->info[e->n], 0, sizeof(e->info[e->n]));
    return &e->info[e->n++];
}

static void entries_free(entries_t *e)
{
    for (size_t i = 0; i < e->n; i++) {
        PMIX_INFO_DESTRUCT(&e->info[i]);
    }
    rdp_free(e->info);
    *e = (entries_t){0};
}

/* Load @a e into @a out as @a key: a PMIX_DATA_ARRAY of PMIX_INFO that
 * takes the entries over (@a e is emptied, also on failure). */
static pmix_status_t load_entries(pmix_info_t *out, const char *key,
                                  entries_t *e)
{
    pmix_data_array_t *da = rdp_calloc(1, sizeof(*da));

    if (da == NULL) {
        entries_free(e);
        return PMIX_ERR_NOMEM;
    }
    *da =
        (pmix_data_array_t){.type = PMIX_INFO, .size = e->n, .array = e->info};
    *e = (entries_t){0};
    PMIX_INFO_CONSTRUCT(out); /* callers may hand in an unset info */
    PMIX_LOAD_KEY(out->key, key);
    out->value.type        = PMIX_DATA_ARRAY;
    out->value.data.darray = da;
    return PMIX_SUCCESS;
}

/* A function's attributes as a PMIX_DATA_ARRAY of PMIX_REGATTR. */
static pmix_status_t load_regattrs(pmix_info_t *out, const char *function,
                                   const char *const *attrs)
{
    size_t n = 0;
    pmix_regattr_t *ra;
    pmix_data_array_t *da;

    while (attrs[n] != NULL) {
        n++;
    }
    PMIX_DATA_ARRAY_CREATE(da, n, PMIX_REGATTR);
    if (da == NULL) {
        return PMIX_ERR_NOMEM;
    }
    ra = da->array;
    for (size_t i = 0; i < n; i++) {
        const char *string = PMIx_Get_attribute_string(attrs[i]);
        pmix_data_type_t t = rdp_attr_std_type(string);

        ra[i].name = rdp_strdup(attrs[i]);
        PMIX_LOAD_KEY(ra[i].string, string);
        ra[i].type = t != PMIX_UNDEF ? t : PMIX_STRING;
        pmix_argv_append_nosize(&ra[i].description, "supported by rdpmix");
        if (ra[i].name == NULL || ra[i].description == NULL) {
            PMIX_DATA_ARRAY_FREE(da);
            return PMIX_ERR_NOMEM;
        }
    }
    PMIX_LOAD_KEY(out->key, function);
    out->value.type        = PMIX_DATA_ARRAY;
    out->value.data.darray = da;
    return PMIX_SUCCESS;
}

static bool listed(char **fns, const char *function)
{
    for (size_t i = 0; fns != NULL && fns[i] != NULL; i++) {
        if (strcmp(fns[i], function) == 0 || strcmp(fns[i], "all") == 0) {
            return true;
        }
    }
    return false;
}

/* One entry per function of @a table named in @a wanted. */
static pmix_status_t add_attrs(entries_t *e, const fn_attrs_t *table,
                               const char *wanted)
{
    char **fns           = pmix_argv_split(wanted, ',');
    pmix_status_t status = PMIX_SUCCESS;

    for (size_t i = 0; status == PMIX_SUCCESS && table[i].function != NULL;
         i++) {
        pmix_info_t *out;

        if (!listed(fns, table[i].function)) {
            continue;
        }
        out    = entry_add(e);
        status = out == NULL
                     ? PMIX_ERR_NOMEM
                     : load_regattrs(out, table[i].function, table[i].attrs);
        if (status != PMIX_SUCCESS && out != NULL) {
            e->n--; /* nothing loaded into it */
        }
    }
    pmix_argv_free(fns);
    return status;
}

/* One entry @a key with the comma-separated names of @a table. */
static pmix_status_t add_fns(entries_t *e, const char *key,
                             const fn_attrs_t *table)
{
    char **fns = NULL;
    char *joined;
    pmix_info_t *out;

    for (size_t i = 0; table[i].function != NULL; i++) {
        pmix_argv_append_nosize(&fns, table[i].function);
    }
    if (fns == NULL) {
        return PMIX_SUCCESS; /* no function: no entry */
    }
    joined = pmix_argv_join(fns, ',');
    pmix_argv_free(fns);
    out = joined != NULL ? entry_add(e) : NULL;
    if (out == NULL) {
        free(joined);
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(out, key, joined, PMIX_STRING);
    free(joined);
    return PMIX_SUCCESS;
}

/* The host's registrations as a table (borrowed; caller holds host_lock
 * until done, frees the array only). */
static fn_attrs_t *host_table(void)
{
    fn_attrs_t *t = rdp_calloc(nhost_fns + 1, sizeof(*t));

    for (size_t i = 0; t != NULL && i < nhost_fns; i++) {
        t[i].function = host_fns[i].function;
        t[i].attrs    = (const char *const *)host_fns[i].attrs;
    }
    return t;
}

static void tool_free(fn_attrs_t *t)
{
    for (size_t i = 0; t != NULL && t[i].function != NULL; i++) {
        rdp_free((void *)t[i].attrs);
    }
    rdp_free(t);
}

/* The names of the attributes @a fn's directive check accepts. */
static const char **attr_names_of(const char *fn)
{
    size_t n = 0;
    const char **names;

    while (rdp_attr_supported_by(fn, n) != NULL) {
        n++;
    }
    names = rdp_calloc(n + 1, sizeof(*names));
    for (size_t k = 0; names != NULL && k < n; k++) {
        /* static strings */
        names[k] = PMIx_Get_attribute_name(rdp_attr_supported_by(fn, k));
    }
    return names;
}

/* The tool side, from the directive table (directive.c), which lists what
 * each tool function's directive check accepts: every tool function but
 * the stubs (IOF), with its attributes by name.  Free with tool_free. */
static fn_attrs_t *tool_table(void)
{
    size_t nfn = 0, n = 0;
    rdp_api_kind_t kind;
    const char *fn;
    fn_attrs_t *t;

    while (rdp_attr_function_name(nfn, NULL) != NULL) {
        nfn++;
    }
    t = rdp_calloc(nfn + 1, sizeof(*t));
    for (size_t i = 0; t != NULL && i < nfn; i++) {
        fn = rdp_attr_function_name(i, &kind);
        if (kind != RDP_API_TOOL || rdp_attr_is_stub(fn)) {
            continue;
        }
        t[n].attrs = attr_names_of(fn);
        if (t[n].attrs == NULL) {
            tool_free(t);
            return NULL;
        }
        t[n++].function = fn;
    }
    return t;
}

typedef struct side_keys {
    unsigned side;
    const char *fns_key;
    const char *attrs_key;
} side_keys_t;

static const side_keys_t side_keys[] = {
    {RDP_QRY_CLIENT, PMIX_CLIENT_FUNCTIONS, PMIX_CLIENT_ATTRIBUTES},
    {RDP_QRY_SERVER, PMIX_SERVER_FUNCTIONS, PMIX_SERVER_ATTRIBUTES},
    {RDP_QRY_TOOL, PMIX_TOOL_FUNCTIONS, PMIX_TOOL_ATTRIBUTES},
    {RDP_QRY_HOST, PMIX_HOST_FUNCTIONS, PMIX_HOST_ATTRIBUTES}};

/* The sides @a q names in its qualifiers. */
static unsigned sides_named(const pmix_query_t *q)
{
    unsigned sides = 0;

    for (size_t i = 0; i < sizeof(side_keys) / sizeof(side_keys[0]); i++) {
        if (qualifier(q, side_keys[i].fns_key) != NULL
            || qualifier(q, side_keys[i].attrs_key) != NULL) {
            sides |= side_keys[i].side;
        }
    }
    return sides;
}

unsigned rdp_qry_attr_sides(const pmix_query_t *q)
{
    unsigned sides = sides_named(q);

    /* no side named: every side's function list */
    return sides != 0
               ? sides
               : RDP_QRY_CLIENT | RDP_QRY_SERVER | RDP_QRY_TOOL | RDP_QRY_HOST;
}

static const fn_attrs_t *side_table(unsigned side, fn_attrs_t *host,
                                    fn_attrs_t *tool)
{
    switch (side) {
    case RDP_QRY_CLIENT:
        return client_fns;
    case RDP_QRY_SERVER:
        return server_fns;
    case RDP_QRY_TOOL:
        return tool;
    default:
        return host;
    }
}

/* The entries one side contributes: its function list when asked (or
 * when nothing was qualified), its attributes for the functions asked. */
static pmix_status_t add_side(entries_t *e, const pmix_query_t *q,
                              bool unqualified, const side_keys_t *sk,
                              const fn_attrs_t *t)
{
    const pmix_info_t *fq = qualifier(q, sk->fns_key);
    const pmix_info_t *aq = qualifier(q, sk->attrs_key);
    pmix_status_t status  = PMIX_SUCCESS;

    if (fq != NULL || unqualified) {
        status = add_fns(e, sk->fns_key, t);
    }
    if (status == PMIX_SUCCESS && aq != NULL) {
        if (aq->value.type != PMIX_STRING || aq->value.data.string == NULL) {
            return PMIX_ERR_BAD_PARAM;
        }
        status = add_attrs(e, t, aq->value.data.string);
    }
    return status;
}

pmix_status_t rdp_qry_attr_support(const pmix_query_t *q, unsigned sides,
                                   pmix_info_t *out)
{
    entries_t e          = {0};
    pmix_status_t status = PMIX_SUCCESS;
    fn_attrs_t *host, *tool = tool_table();
    /* no side qualifier: list the functions of every side asked */
    bool unqualified = sides_named(q) == 0;

    pthread_mutex_lock(&host_lock);
    host = host_table();
    if (host == NULL || tool == NULL) {
        status = PMIX_ERR_NOMEM;
    }
    for (size_t i = 0;
         status == PMIX_SUCCESS && i < sizeof(side_keys) / sizeof(side_keys[0]);
         i++) {
        if ((sides & side_keys[i].side) != 0) {
            status = add_side(&e, q, unqualified, &side_keys[i],
                              side_table(side_keys[i].side, host, tool));
        }
    }
    pthread_mutex_unlock(&host_lock);
    rdp_free(host);
    tool_free(tool);
    if (status == PMIX_SUCCESS && e.n == 0) {
        status = PMIX_ERR_NOT_FOUND;
    }
    if (status != PMIX_SUCCESS) {
        entries_free(&e);
        return status;
    }
    return load_entries(out, PMIX_QUERY_ATTRIBUTE_SUPPORT, &e);
}

/* ---- available servers ---- */

/* The next line of @a fp without its newline (static buffer), or NULL. */
static char *next_line(FILE *fp, char *buf, size_t len)
{
    if (fgets(buf, (int)len, fp) == NULL) {
        return NULL;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

/* "nspace.rank;uri" -> nspace, rank. */
static bool parse_server_uri(char *line, char *nspace, pmix_rank_t *rank_p)
{
    char *semi = strchr(line, ';');
    char *dot, *end;
    unsigned long r;

    if (semi == NULL) {
        return false;
    }
    *semi = '\0';
    dot   = strrchr(line, '.');
    if (dot == NULL || dot == line || (size_t)(dot - line) > PMIX_MAX_NSLEN) {
        return false;
    }
    errno = 0;
    r     = strtoul(dot + 1, &end, 10);
    if (errno != 0 || end == dot + 1 || *end != '\0' || r > UINT32_MAX) {
        return false;
    }
    *dot = '\0';
    pmix_strncpy(nspace, line, PMIX_MAX_NSLEN);
    *rank_p = (pmix_rank_t)r;
    return true;
}

/* The rest of a rendezvous file after its URI: version, pid, uid:gid,
 * start time, each optional (older writers stop early). */
static pmix_status_t add_server_details(entries_t *e, FILE *fp)
{
    char line[1024];
    uint32_t u32;
    char *colon;

    if (next_line(fp, line, sizeof(line)) == NULL) {
        return PMIX_SUCCESS;
    }
    if (entry_add(e) == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(&e->info[e->n - 1], PMIX_VERSION_INFO, line, PMIX_STRING);
    if (next_line(fp, line, sizeof(line)) == NULL || entry_add(e) == NULL) {
        return PMIX_SUCCESS;
    }
    u32 = (uint32_t)strtoul(line, NULL, 10);
    PMIX_INFO_LOAD(&e->info[e->n - 1], PMIX_SERVER_PIDINFO, &u32, PMIX_UINT32);
    if (next_line(fp, line, sizeof(line)) == NULL
        || (colon = strchr(line, ':')) == NULL) {
        return PMIX_SUCCESS;
    }
    *colon = '\0';
    if (entry_add(e) == NULL) {
        return PMIX_ERR_NOMEM;
    }
    u32 = (uint32_t)strtoul(line, NULL, 10);
    PMIX_INFO_LOAD(&e->info[e->n - 1], PMIX_USERID, &u32, PMIX_UINT32);
    if (entry_add(e) == NULL) {
        return PMIX_ERR_NOMEM;
    }
    u32 = (uint32_t)strtoul(colon + 1, NULL, 10);
    PMIX_INFO_LOAD(&e->info[e->n - 1], PMIX_GRPID, &u32, PMIX_UINT32);
    if (next_line(fp, line, sizeof(line)) == NULL) {
        return PMIX_SUCCESS;
    }
    if (entry_add(e) == NULL) {
        return PMIX_ERR_NOMEM;
    }
    PMIX_INFO_LOAD(&e->info[e->n - 1], PMIX_SERVER_START_TIME, line,
                   PMIX_STRING);
    return PMIX_SUCCESS;
}

/* Whether @a servers already lists (@a nspace, @a rank). */
static bool known_server(const entries_t *servers, const char *nspace,
                         pmix_rank_t rank)
{
    for (size_t i = 0; i < servers->n; i++) {
        const pmix_info_t *d = servers->info[i].value.data.darray->array;

        if (strcmp(d[0].value.data.string, nspace) == 0
            && d[1].value.data.rank == rank) {
            return true;
        }
    }
    return false;
}

/* Read one rendezvous file into a PMIX_SERVER_INFO_ARRAY entry. */
static pmix_status_t read_server_file(entries_t *servers, const char *path)
{
    FILE *fp = fopen(path, "r");
    char line[1024], nspace[PMIX_MAX_NSLEN + 1];
    pmix_rank_t rank;
    entries_t e = {0};
    pmix_status_t status;
    pmix_info_t *out;

    if (fp == NULL) {
        return PMIX_SUCCESS; /* gone meanwhile, or not ours to read */
    }
    if (next_line(fp, line, sizeof(line)) == NULL
        || !parse_server_uri(line, nspace, &rank)
        || known_server(servers, nspace, rank)) {
        fclose(fp);
        return PMIX_SUCCESS;
    }
    status = entry_add(&e) == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
    if (status == PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&e.info[0], PMIX_SERVER_NSPACE, nspace, PMIX_STRING);
        status = entry_add(&e) == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
    }
    if (status == PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&e.info[1], PMIX_SERVER_RANK, &rank, PMIX_PROC_RANK);
        status = add_server_details(&e, fp);
    }
    fclose(fp);
    out = status == PMIX_SUCCESS ? entry_add(servers) : NULL;
    if (out == NULL) {
        entries_free(&e);
        return PMIX_ERR_NOMEM;
    }
    status = load_entries(out, PMIX_SERVER_INFO_ARRAY, &e);
    if (status != PMIX_SUCCESS) {
        servers->n--; /* nothing loaded into it */
    }
    return status;
}

static pmix_status_t scan_dir(entries_t *servers, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    pmix_status_t status = PMIX_SUCCESS;

    if (d == NULL) {
        return PMIX_SUCCESS; /* nothing there to attach to */
    }
    while (status == PMIX_SUCCESS && (de = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;

        if (de->d_name[0] == '.'
            || snprintf(path, sizeof(path), "%s/%s", dir, de->d_name)
                   >= (int)sizeof(path)
            || stat(path, &st) != 0) {
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0) {
                status = scan_dir(servers, path, depth - 1);
            }
        } else if (S_ISREG(st.st_mode)
                   && strncmp(de->d_name, "pmix.", 5) == 0) {
            status = read_server_file(servers, path);
        }
    }
    closedir(d);
    return status;
}

pmix_status_t rdp_qry_servers_in(const char *dir, pmix_info_t **info_p,
                                 size_t *n_p)
{
    entries_t found = {0};
    pmix_info_t *all;
    pmix_status_t status = scan_dir(&found, dir, 2);

    if (status != PMIX_SUCCESS || found.n == 0) {
        entries_free(&found);
        return status;
    }
    all = rdp_realloc(*info_p, (*n_p + found.n) * sizeof(*all));
    if (all == NULL) {
        entries_free(&found);
        return PMIX_ERR_NOMEM;
    }
    memcpy(&all[*n_p], found.info, found.n * sizeof(*all)); /* moved */
    *info_p = all;
    *n_p += found.n;
    rdp_free(found.info);
    return PMIX_SUCCESS;
}

const char *rdp_qry_servers_dir(void)
{
    const char *d = getenv("PMIX_SYSTEM_TMPDIR");

    if (d == NULL || d[0] == '\0') {
        d = getenv("TMPDIR");
    }
    return d != NULL && d[0] != '\0' ? d : "/tmp";
}

/* ---- memory ---- */

pmix_status_t rdp_qry_rss_mb(pid_t pid, float *mb_p)
{
    char path[64], line[256];
    FILE *fp;
    unsigned long kb;

    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    fp = fopen(path, "r");
    if (fp == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    while (fgets(line, sizeof(line), fp) != NULL) {
        if (sscanf(line, "VmRSS: %lu kB", &kb) == 1) {
            fclose(fp);
            *mb_p = (float)kb / 1024.0f;
            return PMIX_SUCCESS;
        }
    }
    fclose(fp);
    return PMIX_ERR_NOT_FOUND; /* a zombie has no VmRSS */
}
