/* util.c - small helpers of the server library (ids, keys, posting) */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/attr_type.h"
#include "core/util/log.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

uint64_t rdp_srv_next_id(void)
{
    return ++rdp_srv.next_id;
}

typedef struct op_cb_post {
    pmix_op_cbfunc_t cbfunc;
    pmix_status_t status;
    void *cbdata;
} op_cb_post_t;

static void op_cb_on_loop(void *arg)
{
    op_cb_post_t *p = arg;

    p->cbfunc(p->status, p->cbdata);
    rdp_free(p);
}

void rdp_srv_post_op_cb(pmix_op_cbfunc_t cbfunc, pmix_status_t status,
                        void *cbdata)
{
    op_cb_post_t *p;

    if (cbfunc == NULL) {
        return;
    }
    p = rdp_calloc(1, sizeof(*p));
    if (p == NULL || rdp_rt.loop == NULL) {
        rdp_log_error(SERVER, "cannot queue a completion callback");
        rdp_free(p);
        return;
    }
    p->cbfunc = cbfunc;
    p->status = status;
    p->cbdata = cbdata;
    if (rdp_loop_post(rdp_rt.loop, op_cb_on_loop, p) != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "cannot queue a completion callback");
        rdp_free(p);
    }
}

bool rdp_srv_value_to_u64(const pmix_value_t *val, uint64_t *out_p)
{
    bool negative;
    uint64_t u;

    if (!rdp_value_integer(val, &negative, &u) || negative) {
        return false;
    }
    *out_p = u;
    return true;
}

size_t rdp_srv_rank_key(const char *nspace, pmix_rank_t rank, char *key)
{
    size_t len = strnlen(nspace, PMIX_MAX_NSLEN);

    memcpy(key, nspace, len);
    key[len] = '\0';
    memcpy(key + len + 1, &rank, sizeof(rank));
    return len + 1 + sizeof(rank);
}

size_t rdp_srv_want_key(const char *nspace, pmix_rank_t rank, const char *key,
                        char *out)
{
    size_t len  = rdp_srv_rank_key(nspace, rank, out);
    size_t klen = key != NULL ? strnlen(key, PMIX_MAX_KEYLEN) : 0;

    memcpy(out + len, key, klen);
    return len + klen;
}

bool rdp_srv_host_eq(const char *a, const char *b)
{
    const char *da, *db;
    size_t la, lb;

    if (a == NULL || b == NULL) {
        return false;
    }
    if (strcmp(a, b) == 0) {
        return true;
    }
    da = strchr(a, '.');
    db = strchr(b, '.');
    if (da != NULL && db != NULL) {
        return false; /* both fully qualified and different */
    }
    la = da == NULL ? strlen(a) : (size_t)(da - a);
    lb = db == NULL ? strlen(b) : (size_t)(db - b);
    return la == lb && la > 0 && memcmp(a, b, la) == 0;
}

/* Known by the program the server runs in (/proc/self/exe: slurmstepd
 * rewrites its argv for its process title; Debian installs it as
 * slurmstepd-wlm).  Asked once: the program does not change. */
bool rdp_srv_host_is_slurmstepd(void)
{
    static int known = -1;
    char exe[PATH_MAX];
    ssize_t len;
    const char *base;

    if (known >= 0) {
        return known == 1;
    }
    len   = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    known = 0;
    if (len > 0) {
        exe[len] = '\0';
        base     = strrchr(exe, '/');
        known = strncmp(base != NULL ? base + 1 : exe, "slurmstepd", 10) == 0;
    }
    return known == 1;
}
