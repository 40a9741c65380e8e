/* client_check.h - test clients: PMIx calls that end the test on failure */
#ifndef RDP_TESTS_INTEG_CLIENT_CHECK_H
#define RDP_TESTS_INTEG_CLIENT_CHECK_H

#include <pmix.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by the program: its name in failure messages, and a PMIX_TIMEOUT in
 * seconds for every get (0: none). */
static const char *check_prog = "client";
static uint32_t check_get_timeout;
static pmix_proc_t me;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s rank %u: FAILED ", check_prog, me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* PMIx_Get that must succeed with a value of @a type (caller releases). */
static pmix_value_t *get(const pmix_proc_t *proc, const char *key,
                         pmix_data_type_t type)
{
    pmix_value_t *val = NULL;
    pmix_info_t info;
    size_t ninfo = 0;
    uint32_t t   = check_get_timeout;
    pmix_status_t rc;

    if (t > 0) {
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &t, PMIX_UINT32);
        ninfo = 1;
    }
    rc = PMIx_Get(proc, key, ninfo > 0 ? &info : NULL, ninfo, &val);
    if (ninfo > 0) {
        PMIX_INFO_DESTRUCT(&info);
    }
    if (rc != PMIX_SUCCESS || val == NULL) {
        fail("PMIx_Get(%s:%u, %s): %s", proc->nspace, proc->rank, key,
             PMIx_Error_string(rc));
    }
    if (val->type != type) {
        fail("PMIx_Get(%s:%u, %s): type %s, expected %s", proc->nspace,
             proc->rank, key, PMIx_Data_type_string(val->type),
             PMIx_Data_type_string(type));
    }
    return val;
}

static uint32_t get_u32(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = get(proc, key, PMIX_UINT32);
    uint32_t u      = v->data.uint32;

    PMIX_VALUE_RELEASE(v);
    return u;
}

static void check_str(const pmix_proc_t *proc, const char *key,
                      const char *want)
{
    pmix_value_t *v = get(proc, key, PMIX_STRING);

    if (strcmp(v->data.string, want) != 0) {
        /* values can be large: print them only when short */
        if (strlen(want) < 80 && strlen(v->data.string) < 80) {
            fail("%s of %s:%u is '%s', expected '%s'", key, proc->nspace,
                 proc->rank, v->data.string, want);
        }
        fail("%s of %s:%u differs (%zu bytes, expected %zu)", key, proc->nspace,
             proc->rank, strlen(v->data.string), strlen(want));
    }
    PMIX_VALUE_RELEASE(v);
}

static void put_str(pmix_scope_t scope, const char *key, const char *s)
{
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&v, s, PMIX_STRING);
    rc = PMIx_Put(scope, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
    }
}

#endif
