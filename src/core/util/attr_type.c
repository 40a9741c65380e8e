/* attr_type.c - the Standard's value type of integer and boolean
 * attributes, and lossless conversion of a value to it */
#include "config.h"
#include "core/util/attr_type.h"

#include <pthread.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct attr_type {
    const char *string; /* "pmix.appnum" */
    pmix_data_type_t type;
} attr_type_t;

static attr_type_t attr_types[] = {
#define RDP_ATTR_TYPE(name, type) {name, type},
#include "core/util/attr_types.h"
#undef RDP_ATTR_TYPE
};
#define NTYPES (sizeof(attr_types) / sizeof(attr_types[0]))

static pthread_once_t sort_once = PTHREAD_ONCE_INIT;

static int cmp_string(const void *a, const void *b)
{
    return strcmp(((const attr_type_t *)a)->string,
                  ((const attr_type_t *)b)->string);
}

static void sort_table(void)
{
    qsort(attr_types, NTYPES, sizeof(attr_types[0]), cmp_string);
}

pmix_data_type_t rdp_attr_std_type(const char *key)
{
    attr_type_t probe = {key, PMIX_UNDEF};
    const attr_type_t *hit;

    if (key == NULL) {
        return PMIX_UNDEF;
    }
    pthread_once(&sort_once, sort_table);
    hit =
        bsearch(&probe, attr_types, NTYPES, sizeof(attr_types[0]), cmp_string);
    return hit == NULL ? PMIX_UNDEF : hit->type;
}

bool rdp_value_integer(const pmix_value_t *v, bool *negative_p,
                       uint64_t *magnitude_p)
{
    int64_t s;

    *negative_p = false;
    switch (v->type) {
    case PMIX_BYTE:
        *magnitude_p = v->data.byte;
        return true;
    case PMIX_UINT8:
        *magnitude_p = v->data.uint8;
        return true;
    case PMIX_UINT16:
        *magnitude_p = v->data.uint16;
        return true;
    case PMIX_UINT32:
        *magnitude_p = v->data.uint32;
        return true;
    case PMIX_UINT64:
        *magnitude_p = v->data.uint64;
        return true;
    case PMIX_UINT:
        *magnitude_p = v->data.uint;
        return true;
    case PMIX_SIZE:
        *magnitude_p = v->data.size;
        return true;
    case PMIX_PROC_RANK:
        *magnitude_p = v->data.rank;
        return true;
    case PMIX_INT8:
        s = v->data.int8;
        break;
    case PMIX_INT16:
        s = v->data.int16;
        break;
    case PMIX_INT32:
        s = v->data.int32;
        break;
    case PMIX_INT64:
        s = v->data.int64;
        break;
    case PMIX_INT:
        s = v->data.integer;
        break;
    case PMIX_PID:
        s = v->data.pid;
        break;
    case PMIX_STATUS:
        s = v->data.status;
        break;
    default:
        return false;
    }
    *negative_p  = s < 0;
    *magnitude_p = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return true;
}

/* An integer, or a boolean as 0/1 (PMIX_UNDEF reads as true, as the
 * Standard's PMIX_INFO_TRUE reads it). */
static bool value_number(const pmix_value_t *v, bool *negative_p,
                         uint64_t *magnitude_p)
{
    if (v->type == PMIX_BOOL || v->type == PMIX_UNDEF) {
        *negative_p  = false;
        *magnitude_p = v->type == PMIX_UNDEF || v->data.flag ? 1 : 0;
        return true;
    }
    return rdp_value_integer(v, negative_p, magnitude_p);
}

/* The number as an int64_t, if it is one. */
static bool as_int64(bool neg, uint64_t mag, int64_t *v_p)
{
    if (!neg) {
        if (mag > (uint64_t)INT64_MAX) {
            return false;
        }
        *v_p = (int64_t)mag;
        return true;
    }
    if (mag > (uint64_t)INT64_MAX + 1) {
        return false;
    }
    *v_p = mag == 0 ? 0 : -(int64_t)(mag - 1) - 1;
    return true;
}

pmix_status_t rdp_value_convert_scalar(const pmix_value_t *src,
                                       pmix_data_type_t type,
                                       pmix_value_t *dst_p)
{
    pmix_value_t out;
    bool neg;
    uint64_t mag;
    int64_t v     = 0;
    uint64_t umax = 0;
    int64_t smin = 0, smax = 0;

    if (!value_number(src, &neg, &mag)) {
        return PMIX_ERR_TYPE_MISMATCH;
    }
    switch (type) {
    case PMIX_BOOL:
        umax = 1;
        break;
    case PMIX_UINT16:
        umax = UINT16_MAX;
        break;
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
        umax = UINT32_MAX;
        break;
    case PMIX_UINT64:
        umax = UINT64_MAX;
        break;
    case PMIX_SIZE:
        umax = SIZE_MAX;
        break;
    case PMIX_INT:
    case PMIX_STATUS:
    case PMIX_PID: /* pid_t is int on Linux */
        smin = INT_MIN;
        smax = INT_MAX;
        break;
    case PMIX_INT32:
        smin = INT32_MIN;
        smax = INT32_MAX;
        break;
    default:
        return PMIX_ERR_TYPE_MISMATCH;
    }
    if (umax != 0 ? (neg || mag > umax)
                  : (!as_int64(neg, mag, &v) || v < smin || v > smax)) {
        return PMIX_ERR_TYPE_MISMATCH;
    }
    memset(&out, 0, sizeof(out));
    out.type = type;
    switch (type) {
    case PMIX_BOOL:
        out.data.flag = mag == 1;
        break;
    case PMIX_UINT16:
        out.data.uint16 = (uint16_t)mag;
        break;
    case PMIX_UINT32:
        out.data.uint32 = (uint32_t)mag;
        break;
    case PMIX_PROC_RANK:
        out.data.rank = (pmix_rank_t)mag;
        break;
    case PMIX_UINT64:
        out.data.uint64 = mag;
        break;
    case PMIX_SIZE:
        out.data.size = (size_t)mag;
        break;
    case PMIX_INT:
        out.data.integer = (int)v;
        break;
    case PMIX_STATUS:
        out.data.status = (pmix_status_t)v;
        break;
    case PMIX_PID:
        out.data.pid = (pid_t)v;
        break;
    default: /* PMIX_INT32 */
        out.data.int32 = (int32_t)v;
        break;
    }
    *dst_p = out;
    return PMIX_SUCCESS;
}
