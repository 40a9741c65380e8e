/* wire.c - bounded pack/unpack of PMIx Standard types; message framing */
#include "config.h"
#include "core/wire/wire.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

/*
 * Layout of the code: a type table says how each pmix_data_type_t is held
 * in memory (element size, whether it is a fixed-width scalar) and how
 * small its encoding can be.  pack_elems/unpack_elems move n contiguous
 * elements of one type (the storage of a data array); a value is a type
 * code plus one element, held inline in the value's union or, for
 * struct types, behind the union's pointer (then a u8 presence flag comes
 * first so that a NULL pointer survives the trip).
 *
 * Unpack writes into zeroed storage only, so a half-filled element is
 * always in a state the value.h destructors accept; whoever allocated the
 * storage frees it on error.
 */

/* The wire widths below are the LP64 sizes of the C types (see ABI.md). */
_Static_assert(sizeof(bool) == 1, "bool is one byte");
_Static_assert(sizeof(int) == 4, "int is 32 bits");
_Static_assert(sizeof(pid_t) == 4, "pid_t is 32 bits");
_Static_assert(sizeof(size_t) == 8, "size_t is 64 bits");
_Static_assert(sizeof(time_t) == 8, "time_t is 64 bits");
_Static_assert(sizeof(float) == 4, "float is 32 bits");
_Static_assert(sizeof(double) == 8, "double is 64 bits");
_Static_assert(sizeof(struct timeval) == 16, "timeval is two 64-bit fields");

#define BUF_MIN_CAP 256

/* Sticky status: run @a _call only while every earlier step succeeded. */
#define STEP(_st, _call)             \
    do {                             \
        if ((_st) == PMIX_SUCCESS) { \
            (_st) = (_call);         \
        }                            \
    } while (0)

/* Status for "this message claims more bytes than it holds". */
#define ERR_SHORT PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER

/* ------------------------------------------------------------------ */
/* growable pack buffer                                                 */
/* ------------------------------------------------------------------ */

void rdp_buf_init(rdp_buf_t *buf)
{
    buf->data = NULL;
    buf->size = 0;
    buf->cap  = 0;
}

void rdp_buf_cleanup(rdp_buf_t *buf)
{
    if (buf == NULL) {
        return;
    }
    rdp_free(buf->data);
    rdp_buf_init(buf);
}

static pmix_status_t buf_grow(rdp_buf_t *buf, size_t extra)
{
    size_t need;
    size_t ncap;
    uint8_t *p;

    if (extra > SIZE_MAX - buf->size) {
        rdp_log_error(CORE, "pack buffer would exceed the address space");
        return PMIX_ERR_NOMEM;
    }
    need = buf->size + extra;
    ncap = (buf->cap != 0) ? buf->cap : BUF_MIN_CAP;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    p = rdp_realloc(buf->data, ncap);
    if (p == NULL) {
        rdp_log_error(CORE, "cannot grow pack buffer to %zu bytes", ncap);
        return PMIX_ERR_NOMEM;
    }
    buf->data = p;
    buf->cap  = ncap;
    /* the caller writes the @a extra bytes next: a large run of fresh
     * pages mapped in one call, not a fault per page (a value packed for
     * a commit, a contribution reserved for its sections) */
    rdp_populate_write(buf->data + buf->size, extra);
    return PMIX_SUCCESS;
}

pmix_status_t rdp_buf_reserve(rdp_buf_t *buf, size_t extra)
{
    if (extra <= buf->cap - buf->size) {
        return PMIX_SUCCESS;
    }
    return buf_grow(buf, extra);
}

pmix_status_t rdp_buf_append(rdp_buf_t *buf, const void *data, size_t len)
{
    pmix_status_t st;

    if (len == 0) {
        return PMIX_SUCCESS;
    }
    st = rdp_buf_reserve(buf, len);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    memcpy(buf->data + buf->size, data, len);
    buf->size += len;
    return PMIX_SUCCESS;
}

void *rdp_buf_take(rdp_buf_t *buf, size_t *size_p)
{
    void *data = buf->data;

    if (size_p != NULL) {
        *size_p = buf->size;
    }
    rdp_buf_init(buf);
    return data;
}

/* ------------------------------------------------------------------ */
/* fixed-width integers                                                 */
/* ------------------------------------------------------------------ */

static inline void put16(uint8_t *p, uint16_t v)
{
    v = htole16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put32(uint8_t *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put64(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t get16(const uint8_t *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof(v));
    return le16toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return le32toh(v);
}

static inline uint64_t get64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return le64toh(v);
}

pmix_status_t rdp_pack_u8(rdp_buf_t *buf, uint8_t v)
{
    if (buf->size == buf->cap && buf_grow(buf, 1) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    buf->data[buf->size++] = v;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pack_u16(rdp_buf_t *buf, uint16_t v)
{
    if (rdp_buf_reserve(buf, 2) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put16(buf->data + buf->size, v);
    buf->size += 2;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pack_u32(rdp_buf_t *buf, uint32_t v)
{
    if (rdp_buf_reserve(buf, 4) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put32(buf->data + buf->size, v);
    buf->size += 4;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pack_u64(rdp_buf_t *buf, uint64_t v)
{
    if (rdp_buf_reserve(buf, 8) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put64(buf->data + buf->size, v);
    buf->size += 8;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pack_i32(rdp_buf_t *buf, int32_t v)
{
    return rdp_pack_u32(buf, (uint32_t)v);
}

pmix_status_t rdp_unpack_u8(rdp_rbuf_t *rb, uint8_t *v_p)
{
    if (rb->left < 1) {
        return ERR_SHORT;
    }
    *v_p = rb->ptr[0];
    rb->ptr++;
    rb->left--;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_u16(rdp_rbuf_t *rb, uint16_t *v_p)
{
    if (rb->left < 2) {
        return ERR_SHORT;
    }
    *v_p = get16(rb->ptr);
    rb->ptr += 2;
    rb->left -= 2;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_u32(rdp_rbuf_t *rb, uint32_t *v_p)
{
    if (rb->left < 4) {
        return ERR_SHORT;
    }
    *v_p = get32(rb->ptr);
    rb->ptr += 4;
    rb->left -= 4;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_u64(rdp_rbuf_t *rb, uint64_t *v_p)
{
    if (rb->left < 8) {
        return ERR_SHORT;
    }
    *v_p = get64(rb->ptr);
    rb->ptr += 8;
    rb->left -= 8;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_i32(rdp_rbuf_t *rb, int32_t *v_p)
{
    uint32_t u;
    pmix_status_t st;

    st = rdp_unpack_u32(rb, &u);
    if (st == PMIX_SUCCESS) {
        *v_p = (int32_t)u;
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* strings and bytes                                                    */
/* ------------------------------------------------------------------ */

/* Append a string whose length (without NUL) is already known. */
static pmix_status_t pack_strn(rdp_buf_t *buf, const char *s, size_t len)
{
    if (len >= UINT32_MAX) {
        rdp_log_error(CORE, "cannot pack a string of %zu bytes", len);
        return PMIX_ERR_BAD_PARAM;
    }
    if (rdp_buf_reserve(buf, 4 + len + 1) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put32(buf->data + buf->size, (uint32_t)(len + 1));
    memcpy(buf->data + buf->size + 4, s, len);
    buf->data[buf->size + 4 + len] = '\0';
    buf->size += 4 + len + 1;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_pack_string(rdp_buf_t *buf, const char *s)
{
    if (s == NULL) {
        return rdp_pack_u32(buf, 0);
    }
    return pack_strn(buf, s, strlen(s));
}

/* A key or nspace held in a fixed array: must be NUL-terminated within
 * @a maxlen + 1 bytes. */
static pmix_status_t pack_fixed_str(rdp_buf_t *buf, const char *s,
                                    size_t maxlen)
{
    size_t len = strnlen(s, maxlen + 1);

    if (len > maxlen) {
        rdp_log_error(CORE, "cannot pack a key/nspace longer than %zu chars",
                      maxlen);
        return PMIX_ERR_BAD_PARAM;
    }
    return pack_strn(buf, s, len);
}

pmix_status_t rdp_pack_bytes(rdp_buf_t *buf, const void *data, size_t len)
{
    if (data == NULL && len != 0) {
        rdp_log_error(CORE, "cannot pack %zu bytes from a NULL pointer", len);
        return PMIX_ERR_BAD_PARAM;
    }
    if (rdp_buf_reserve(buf, 8 + len) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put64(buf->data + buf->size, (uint64_t)len);
    if (len != 0) {
        memcpy(buf->data + buf->size + 8, data, len);
    }
    buf->size += 8 + len;
    return PMIX_SUCCESS;
}

/* Read a string header and check the bytes: on success *s_p points into
 * the buffer (NULL for a packed NULL), *len_p is the length without NUL,
 * and the cursor has moved past the string.  With @a maxlen != 0 a longer
 * string is rejected before the bytes are looked at. */
static pmix_status_t string_view(rdp_rbuf_t *rb, const char **s_p,
                                 size_t *len_p, size_t maxlen)
{
    uint32_t n;
    const char *s;

    if (rb->left < 4) {
        return ERR_SHORT;
    }
    n = get32(rb->ptr);
    if (n == 0) {
        rb->ptr += 4;
        rb->left -= 4;
        *s_p   = NULL;
        *len_p = 0;
        return PMIX_SUCCESS;
    }
    if (maxlen != 0 && (size_t)n - 1 > maxlen) {
        rdp_log_debug(CORE, "unpack: string of %u bytes exceeds %zu", n - 1,
                      maxlen);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if ((size_t)n > rb->left - 4) {
        return ERR_SHORT;
    }
    s = (const char *)rb->ptr + 4;
    if (s[n - 1] != '\0' || memchr(s, '\0', n - 1) != NULL) {
        rdp_log_debug(CORE, "unpack: malformed string");
        return PMIX_ERR_UNPACK_FAILURE;
    }
    rb->ptr += 4 + (size_t)n;
    rb->left -= 4 + (size_t)n;
    *s_p   = s;
    *len_p = n - 1;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_string_view(rdp_rbuf_t *rb, const char **s_p)
{
    rdp_rbuf_t save = *rb;
    const char *s;
    size_t len;
    pmix_status_t st;

    st = string_view(rb, &s, &len, 0);
    if (st != PMIX_SUCCESS) {
        *rb = save;
        return st;
    }
    *s_p = s;
    return PMIX_SUCCESS;
}

/* Internal: cursor may have moved on error (callers restore it). */
static pmix_status_t unpack_string(rdp_rbuf_t *rb, char **s_p)
{
    const char *s;
    size_t len;
    char *copy;
    pmix_status_t st;

    st = string_view(rb, &s, &len, 0);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (s == NULL) {
        *s_p = NULL;
        return PMIX_SUCCESS;
    }
    copy = rdp_malloc(len + 1);
    if (copy == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(copy, s, len + 1);
    *s_p = copy;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_string(rdp_rbuf_t *rb, char **s_p)
{
    rdp_rbuf_t save = *rb;
    pmix_status_t st;

    st = unpack_string(rb, s_p);
    if (st != PMIX_SUCCESS) {
        *rb = save;
    }
    return st;
}

/* Internal: a packed NULL becomes the empty string. */
static pmix_status_t unpack_string_into(rdp_rbuf_t *rb, char *dst, size_t cap)
{
    const char *s;
    size_t len;
    pmix_status_t st;

    if (cap == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = string_view(rb, &s, &len, cap - 1);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (s == NULL) {
        dst[0] = '\0';
    } else {
        memcpy(dst, s, len + 1);
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_string_into(rdp_rbuf_t *rb, char *dst, size_t cap)
{
    rdp_rbuf_t save = *rb;
    pmix_status_t st;

    st = unpack_string_into(rb, dst, cap);
    if (st != PMIX_SUCCESS) {
        *rb = save;
    }
    return st;
}

static pmix_status_t bytes_view(rdp_rbuf_t *rb, const void **data_p,
                                size_t *len_p)
{
    uint64_t n;

    if (rb->left < 8) {
        return ERR_SHORT;
    }
    n = get64(rb->ptr);
    if (n > rb->left - 8) {
        return ERR_SHORT;
    }
    *data_p = (n != 0) ? rb->ptr + 8 : NULL;
    *len_p  = (size_t)n;
    rb->ptr += 8 + (size_t)n;
    rb->left -= 8 + (size_t)n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_bytes_view(rdp_rbuf_t *rb, const void **data_p,
                                    size_t *len_p)
{
    rdp_rbuf_t save = *rb;
    const void *d;
    size_t n;
    pmix_status_t st;

    st = bytes_view(rb, &d, &n);
    if (st != PMIX_SUCCESS) {
        *rb = save;
        return st;
    }
    *data_p = d;
    *len_p  = n;
    return PMIX_SUCCESS;
}

static pmix_status_t unpack_bytes(rdp_rbuf_t *rb, void **data_p, size_t *len_p)
{
    const void *d;
    size_t n;
    void *copy = NULL;
    pmix_status_t st;

    st = bytes_view(rb, &d, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (n != 0) {
        copy = rdp_malloc_to_fill(n);
        if (copy == NULL) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, d, n);
    }
    *data_p = copy;
    *len_p  = n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_bytes(rdp_rbuf_t *rb, void **data_p, size_t *len_p)
{
    rdp_rbuf_t save = *rb;
    pmix_status_t st;

    st = unpack_bytes(rb, data_p, len_p);
    if (st != PMIX_SUCCESS) {
        *rb = save;
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* the type table                                                       */
/* ------------------------------------------------------------------ */

enum type_class {
    TC_UNKNOWN = 0, /* not a 4.2.2 type code */
    TC_UNSUP,       /* known, but cannot travel (pointer, deprecated) */
    TC_NONE,        /* PMIX_UNDEF: no payload */
    TC_SCALAR,      /* fixed-width little-endian lanes, bulk copied */
    TC_BOOL,        /* one byte, 0 or 1 */
    TC_COMPLEX      /* encoded field by field */
};

typedef struct type_info {
    uint8_t cls;
    uint8_t lane;     /* TC_SCALAR: width of one integer lane */
    uint16_t esize;   /* bytes of one element in memory */
    uint16_t minwire; /* smallest encoding of one element */
    uint8_t in_value; /* how a pmix_value_t holds it: 0 inline, 1 by ptr */
} type_info_t;

/* clang-format off */
#define T_SCALAR(_c, _lane)     {TC_SCALAR, _lane, sizeof(_c), sizeof(_c), 0}
#define T_INLINE(_ctype, _min)  {TC_COMPLEX, 0, sizeof(_ctype), _min, 0}
#define T_BYPTR(_ctype, _min)   {TC_COMPLEX, 0, sizeof(_ctype), _min, 1}
#define T_UNSUP                 {TC_UNSUP, 0, 0, 0, 0}
/* clang-format on */

/* Minimum encodings: string 4, bytes 8, key 4, proc 4 + 4, value 2,
 * info 4 + 4 + 2, arrays 8. */
static const type_info_t type_table[] = {
    [PMIX_UNDEF]             = {TC_NONE, 0, 0, 0, 0},
    [PMIX_BOOL]              = {TC_BOOL, 1, sizeof(bool), 1, 0},
    [PMIX_BYTE]              = T_SCALAR(uint8_t, 1),
    [PMIX_STRING]            = T_INLINE(char *, 4),
    [PMIX_SIZE]              = T_SCALAR(size_t, 8),
    [PMIX_PID]               = T_SCALAR(pid_t, 4),
    [PMIX_INT]               = T_SCALAR(int, 4),
    [PMIX_INT8]              = T_SCALAR(int8_t, 1),
    [PMIX_INT16]             = T_SCALAR(int16_t, 2),
    [PMIX_INT32]             = T_SCALAR(int32_t, 4),
    [PMIX_INT64]             = T_SCALAR(int64_t, 8),
    [PMIX_UINT]              = T_SCALAR(unsigned int, 4),
    [PMIX_UINT8]             = T_SCALAR(uint8_t, 1),
    [PMIX_UINT16]            = T_SCALAR(uint16_t, 2),
    [PMIX_UINT32]            = T_SCALAR(uint32_t, 4),
    [PMIX_UINT64]            = T_SCALAR(uint64_t, 8),
    [PMIX_FLOAT]             = T_SCALAR(float, 4),
    [PMIX_DOUBLE]            = T_SCALAR(double, 8),
    [PMIX_TIMEVAL]           = T_SCALAR(struct timeval, 8),
    [PMIX_TIME]              = T_SCALAR(time_t, 8),
    [PMIX_STATUS]            = T_SCALAR(pmix_status_t, 4),
    [PMIX_VALUE]             = T_BYPTR(pmix_value_t, 2),
    [PMIX_PROC]              = T_BYPTR(pmix_proc_t, 8),
    [PMIX_APP]               = T_BYPTR(pmix_app_t, 4 + 8 + 8 + 4 + 4 + 8),
    [PMIX_INFO]              = T_BYPTR(pmix_info_t, 10),
    [PMIX_PDATA]             = T_BYPTR(pmix_pdata_t, 8 + 4 + 2),
    [PMIX_BUFFER]            = T_UNSUP,
    [PMIX_BYTE_OBJECT]       = T_INLINE(pmix_byte_object_t, 8),
    [PMIX_KVAL]              = T_UNSUP,
    [PMIX_PERSIST]           = T_SCALAR(pmix_persistence_t, 1),
    [PMIX_POINTER]           = T_UNSUP,
    [PMIX_SCOPE]             = T_SCALAR(pmix_scope_t, 1),
    [PMIX_DATA_RANGE]        = T_SCALAR(pmix_data_range_t, 1),
    [PMIX_COMMAND]           = T_UNSUP,
    [PMIX_INFO_DIRECTIVES]   = T_SCALAR(pmix_info_directives_t, 4),
    [PMIX_DATA_TYPE]         = T_SCALAR(pmix_data_type_t, 2),
    [PMIX_PROC_STATE]        = T_SCALAR(pmix_proc_state_t, 1),
    [PMIX_PROC_INFO]         = T_BYPTR(pmix_proc_info_t, 8 + 4 + 4 + 4 + 4 + 1),
    [PMIX_DATA_ARRAY]        = T_BYPTR(pmix_data_array_t, 2 + 8),
    [PMIX_PROC_RANK]         = T_SCALAR(pmix_rank_t, 4),
    [PMIX_QUERY]             = T_BYPTR(pmix_query_t, 8 + 8),
    [PMIX_COMPRESSED_STRING] = T_INLINE(pmix_byte_object_t, 8),
    [PMIX_ALLOC_DIRECTIVE]   = T_SCALAR(pmix_alloc_directive_t, 1),
    [PMIX_IOF_CHANNEL]       = T_SCALAR(pmix_iof_channel_t, 2),
    [PMIX_ENVAR]             = T_INLINE(pmix_envar_t, 4 + 4 + 1),
    [PMIX_COORD]             = T_BYPTR(pmix_coord_t, 1 + 8),
    [PMIX_REGATTR]           = T_BYPTR(pmix_regattr_t, 4 + 4 + 2 + 8),
    [PMIX_REGEX]             = T_INLINE(pmix_byte_object_t, 8),
    [PMIX_JOB_STATE]         = T_SCALAR(pmix_job_state_t, 1),
    [PMIX_LINK_STATE]        = T_SCALAR(pmix_link_state_t, 1),
    [PMIX_PROC_CPUSET]       = T_BYPTR(pmix_cpuset_t, 4),
    [PMIX_GEOMETRY]          = T_BYPTR(pmix_geometry_t, 8 + 4 + 4 + 8),
    [PMIX_DEVICE_DIST]       = T_BYPTR(pmix_device_distance_t, 4 + 4 + 8 + 4),
    [PMIX_ENDPOINT]          = T_BYPTR(pmix_endpoint_t, 4 + 4 + 8),
    [PMIX_TOPO]              = T_BYPTR(pmix_topology_t, 4),
    [PMIX_DEVTYPE]           = T_SCALAR(pmix_device_type_t, 8),
    [PMIX_LOCTYPE]           = T_SCALAR(pmix_locality_t, 2),
    [PMIX_COMPRESSED_BYTE_OBJECT] = T_INLINE(pmix_byte_object_t, 8),
    [PMIX_PROC_NSPACE]            = T_BYPTR(pmix_nspace_t, 4),
    [PMIX_PROC_STATS]             = T_BYPTR(pmix_proc_stats_t, 101),
    [PMIX_DISK_STATS]             = T_BYPTR(pmix_disk_stats_t, 4 + 11 * 8),
    [PMIX_NET_STATS]              = T_BYPTR(pmix_net_stats_t, 4 + 6 * 8),
    [PMIX_NODE_STATS]             = T_BYPTR(pmix_node_stats_t, 80),
    [PMIX_DATA_BUFFER]            = T_BYPTR(pmix_data_buffer_t, 8),
    [PMIX_STOR_MEDIUM]            = T_SCALAR(uint64_t, 8),
    [PMIX_STOR_ACCESS]            = T_SCALAR(uint64_t, 8),
    [PMIX_STOR_PERSIST]           = T_SCALAR(uint64_t, 8),
    [PMIX_STOR_ACCESS_TYPE]       = T_SCALAR(uint16_t, 2),
};

#define NTYPES (sizeof(type_table) / sizeof(type_table[0]))

static const type_info_t *type_lookup(pmix_data_type_t type)
{
    static const type_info_t unknown = {TC_UNKNOWN, 0, 0, 0, 0};

    if (type >= NTYPES) {
        return &unknown;
    }
    return &type_table[type];
}

/* Status for a type that cannot be (un)packed. */
static pmix_status_t type_error(const type_info_t *ti, pmix_data_type_t type)
{
    if (ti->cls == TC_UNSUP) {
        rdp_log_debug(CORE, "wire: data type %u cannot be transported",
                      (unsigned)type);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    rdp_log_debug(CORE, "wire: unknown data type %u", (unsigned)type);
    return PMIX_ERR_UNKNOWN_DATA_TYPE;
}

/* Free @a n elements of @a type at @a array, and the array itself.  The
 * elements may be partially filled (zeroed storage). */
static void elems_free(pmix_data_type_t type, void *array, size_t n)
{
    if (array == NULL) {
        return;
    }
    rdp_elems_destruct(type, array, n);
    rdp_free(array);
}

/* ------------------------------------------------------------------ */
/* packing                                                              */
/* ------------------------------------------------------------------ */

static pmix_status_t pack_elems(rdp_buf_t *buf, pmix_data_type_t type,
                                const void *base, size_t n, int depth);
static pmix_status_t pack_value_d(rdp_buf_t *buf, const pmix_value_t *val,
                                  int depth);
static pmix_status_t pack_darray_d(rdp_buf_t *buf, const pmix_data_array_t *da,
                                   int depth);

static pmix_status_t pack_scalars(rdp_buf_t *buf, const type_info_t *ti,
                                  const void *base, size_t n)
{
    size_t total;
    uint8_t *dst;

    if (n > SIZE_MAX / ti->esize) {
        return PMIX_ERR_BAD_PARAM;
    }
    total = n * ti->esize;
    if (rdp_buf_reserve(buf, total) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    dst = buf->data + buf->size;
    if (ti->cls == TC_BOOL) {
        const bool *b = base;
        for (size_t i = 0; i < n; i++) {
            dst[i] = b[i] ? 1 : 0;
        }
    } else {
#if __BYTE_ORDER == __LITTLE_ENDIAN
        memcpy(dst, base, total);
#else
        const uint8_t *src = base;
        for (size_t off = 0; off < total; off += ti->lane) {
            switch (ti->lane) {
            case 1:
                dst[off] = src[off];
                break;
            case 2: {
                uint16_t v;
                memcpy(&v, src + off, 2);
                put16(dst + off, v);
                break;
            }
            case 4: {
                uint32_t v;
                memcpy(&v, src + off, 4);
                put32(dst + off, v);
                break;
            }
            default: {
                uint64_t v;
                memcpy(&v, src + off, 8);
                put64(dst + off, v);
                break;
            }
            }
        }
#endif
    }
    buf->size += total;
    return PMIX_SUCCESS;
}

/* argv-style NULL-terminated string list: u64 count, strings */
static pmix_status_t pack_argv(rdp_buf_t *buf, char *const *argv)
{
    size_t n = 0;
    pmix_status_t st;

    if (argv != NULL) {
        while (argv[n] != NULL) {
            n++;
        }
    }
    st = rdp_pack_u64(buf, n);
    for (size_t i = 0; i < n && st == PMIX_SUCCESS; i++) {
        st = rdp_pack_string(buf, argv[i]);
    }
    return st;
}

static pmix_status_t pack_counted(rdp_buf_t *buf, pmix_data_type_t type,
                                  const void *base, size_t n, int depth)
{
    pmix_status_t st;

    if (base == NULL && n != 0) {
        rdp_log_error(CORE, "cannot pack %zu elements from a NULL array", n);
        return PMIX_ERR_BAD_PARAM;
    }
    st = rdp_pack_u64(buf, n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    return pack_elems(buf, type, base, n, depth);
}

static pmix_status_t pack_proc_d(rdp_buf_t *buf, const pmix_proc_t *p)
{
    pmix_status_t st;

    st = pack_fixed_str(buf, p->nspace, PMIX_MAX_NSLEN);
    STEP(st, rdp_pack_u32(buf, p->rank));
    return st;
}

static pmix_status_t pack_info_d(rdp_buf_t *buf, const pmix_info_t *info,
                                 int depth)
{
    pmix_status_t st;

    st = pack_fixed_str(buf, info->key, PMIX_MAX_KEYLEN);
    STEP(st,
         rdp_pack_u32(
             buf, info->flags & ~(pmix_info_directives_t)PMIX_INFO_PERSISTENT));
    STEP(st, pack_value_d(buf, &info->value, depth));
    return st;
}

static pmix_status_t pack_coord(rdp_buf_t *buf, const pmix_coord_t *c)
{
    pmix_status_t st;

    if (c->coord == NULL && c->dims != 0) {
        rdp_log_error(CORE, "cannot pack a coord with NULL coordinates");
        return PMIX_ERR_BAD_PARAM;
    }
    st = rdp_pack_u8(buf, (uint8_t)c->view);
    STEP(st, rdp_pack_u64(buf, c->dims));
    STEP(st, pack_elems(buf, PMIX_UINT32, c->coord, c->dims, 0));
    return st;
}

static pmix_status_t pack_f32(rdp_buf_t *buf, float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    return rdp_pack_u32(buf, u);
}

static pmix_status_t pack_tv(rdp_buf_t *buf, const struct timeval *tv)
{
    pmix_status_t st;

    st = rdp_pack_u64(buf, (uint64_t)tv->tv_sec);
    STEP(st, rdp_pack_u64(buf, (uint64_t)tv->tv_usec));
    return st;
}

static pmix_status_t pack_proc_stats(rdp_buf_t *buf,
                                     const pmix_proc_stats_t *ps)
{
    pmix_status_t st;

    st = rdp_pack_string(buf, ps->node);
    STEP(st, pack_proc_d(buf, &ps->proc));
    STEP(st, rdp_pack_i32(buf, ps->pid));
    STEP(st, rdp_pack_string(buf, ps->cmd));
    STEP(st, rdp_pack_u8(buf, (uint8_t)ps->state));
    STEP(st, pack_tv(buf, &ps->time));
    STEP(st, pack_f32(buf, ps->percent_cpu));
    STEP(st, rdp_pack_i32(buf, ps->priority));
    STEP(st, rdp_pack_u16(buf, ps->num_threads));
    STEP(st, pack_f32(buf, ps->pss));
    STEP(st, pack_f32(buf, ps->vsize));
    STEP(st, pack_f32(buf, ps->rss));
    STEP(st, pack_f32(buf, ps->peak_vsize));
    STEP(st, rdp_pack_u16(buf, ps->processor));
    STEP(st, pack_tv(buf, &ps->sample_time));
    return st;
}

static pmix_status_t pack_node_stats(rdp_buf_t *buf,
                                     const pmix_node_stats_t *nd, int depth)
{
    const float f[] = {nd->la,        nd->la5,         nd->la15,
                       nd->total_mem, nd->free_mem,    nd->buffers,
                       nd->cached,    nd->swap_cached, nd->swap_total,
                       nd->swap_free, nd->mapped};
    pmix_status_t st;

    st = rdp_pack_string(buf, nd->node);
    STEP(st, pack_elems(buf, PMIX_FLOAT, f, 11, 0));
    STEP(st, pack_tv(buf, &nd->sample_time));
    STEP(st, pack_counted(buf, PMIX_DISK_STATS, nd->diskstats, nd->ndiskstats,
                          depth));
    STEP(st,
         pack_counted(buf, PMIX_NET_STATS, nd->netstats, nd->nnetstats, depth));
    return st;
}

/* One element of a non-scalar type. */
static pmix_status_t pack_one(rdp_buf_t *buf, pmix_data_type_t type,
                              const void *elem, int depth)
{
    pmix_status_t st;

    switch (type) {
    case PMIX_STRING:
        return rdp_pack_string(buf, *(char *const *)elem);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
        const pmix_byte_object_t *bo = elem;
        return rdp_pack_bytes(buf, bo->bytes, bo->size);
    }
    case PMIX_PROC_NSPACE:
        return pack_fixed_str(buf, (const char *)elem, PMIX_MAX_NSLEN);
    case PMIX_PROC:
        return pack_proc_d(buf, elem);
    case PMIX_VALUE:
        return pack_value_d(buf, elem, depth);
    case PMIX_INFO:
        return pack_info_d(buf, elem, depth);
    case PMIX_DATA_ARRAY:
        return pack_darray_d(buf, elem, depth);
    case PMIX_PDATA: {
        const pmix_pdata_t *pd = elem;
        st                     = pack_proc_d(buf, &pd->proc);
        STEP(st, pack_fixed_str(buf, pd->key, PMIX_MAX_KEYLEN));
        STEP(st, pack_value_d(buf, &pd->value, depth));
        return st;
    }
    case PMIX_APP: {
        const pmix_app_t *app = elem;
        st                    = rdp_pack_string(buf, app->cmd);
        STEP(st, pack_argv(buf, app->argv));
        STEP(st, pack_argv(buf, app->env));
        STEP(st, rdp_pack_string(buf, app->cwd));
        STEP(st, rdp_pack_i32(buf, app->maxprocs));
        STEP(st, pack_counted(buf, PMIX_INFO, app->info, app->ninfo, depth));
        return st;
    }
    case PMIX_QUERY: {
        const pmix_query_t *q = elem;
        st                    = pack_argv(buf, q->keys);
        STEP(st, pack_counted(buf, PMIX_INFO, q->qualifiers, q->nqual, depth));
        return st;
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *pi = elem;
        st                         = pack_proc_d(buf, &pi->proc);
        STEP(st, rdp_pack_string(buf, pi->hostname));
        STEP(st, rdp_pack_string(buf, pi->executable_name));
        STEP(st, rdp_pack_i32(buf, pi->pid));
        STEP(st, rdp_pack_i32(buf, pi->exit_code));
        STEP(st, rdp_pack_u8(buf, pi->state));
        return st;
    }
    case PMIX_ENVAR: {
        const pmix_envar_t *ev = elem;
        st                     = rdp_pack_string(buf, ev->envar);
        STEP(st, rdp_pack_string(buf, ev->value));
        STEP(st, rdp_pack_u8(buf, (uint8_t)ev->separator));
        return st;
    }
    case PMIX_COORD:
        return pack_coord(buf, elem);
    case PMIX_REGATTR: {
        const pmix_regattr_t *ra = elem;
        st                       = rdp_pack_string(buf, ra->name);
        STEP(st, pack_fixed_str(buf, ra->string, PMIX_MAX_KEYLEN));
        STEP(st, rdp_pack_u16(buf, ra->type));
        STEP(st, pack_argv(buf, ra->description));
        return st;
    }
    case PMIX_PROC_CPUSET:
        /* the hwloc bitmap is process-local: only its source travels */
        return rdp_pack_string(buf, ((const pmix_cpuset_t *)elem)->source);
    case PMIX_TOPO:
        /* the hwloc topology is process-local: only its source travels */
        return rdp_pack_string(buf, ((const pmix_topology_t *)elem)->source);
    case PMIX_GEOMETRY: {
        const pmix_geometry_t *g = elem;
        st                       = rdp_pack_u64(buf, g->fabric);
        STEP(st, rdp_pack_string(buf, g->uuid));
        STEP(st, rdp_pack_string(buf, g->osname));
        STEP(st,
             pack_counted(buf, PMIX_COORD, g->coordinates, g->ncoords, depth));
        return st;
    }
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *d = elem;
        st                              = rdp_pack_string(buf, d->uuid);
        STEP(st, rdp_pack_string(buf, d->osname));
        STEP(st, rdp_pack_u64(buf, d->type));
        STEP(st, rdp_pack_u16(buf, d->mindist));
        STEP(st, rdp_pack_u16(buf, d->maxdist));
        return st;
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *ep = elem;
        st                        = rdp_pack_string(buf, ep->uuid);
        STEP(st, rdp_pack_string(buf, ep->osname));
        STEP(st, rdp_pack_bytes(buf, ep->endpt.bytes, ep->endpt.size));
        return st;
    }
    case PMIX_PROC_STATS:
        return pack_proc_stats(buf, elem);
    case PMIX_DISK_STATS: {
        const pmix_disk_stats_t *d = elem;
        const uint64_t f[]         = {
                    d->num_reads_completed,     d->num_reads_merged,
                    d->num_sectors_read,        d->milliseconds_reading,
                    d->num_writes_completed,    d->num_writes_merged,
                    d->num_sectors_written,     d->milliseconds_writing,
                    d->num_ios_in_progress,     d->milliseconds_io,
                    d->weighted_milliseconds_io};
        st = rdp_pack_string(buf, d->disk);
        STEP(st, pack_elems(buf, PMIX_UINT64, f, 11, 0));
        return st;
    }
    case PMIX_NET_STATS: {
        const pmix_net_stats_t *ns = elem;
        const uint64_t f[] = {ns->num_bytes_recvd,  ns->num_packets_recvd,
                              ns->num_recv_errs,    ns->num_bytes_sent,
                              ns->num_packets_sent, ns->num_send_errs};
        st                 = rdp_pack_string(buf, ns->net_interface);
        STEP(st, pack_elems(buf, PMIX_UINT64, f, 6, 0));
        return st;
    }
    case PMIX_NODE_STATS:
        return pack_node_stats(buf, elem, depth);
    case PMIX_DATA_BUFFER: {
        /* the used bytes travel; the receiver reads from the start */
        const pmix_data_buffer_t *db = elem;
        return rdp_pack_bytes(buf, db->base_ptr, db->bytes_used);
    }
    default:
        return type_error(type_lookup(type), type);
    }
}

static pmix_status_t pack_elems(rdp_buf_t *buf, pmix_data_type_t type,
                                const void *base, size_t n, int depth)
{
    const type_info_t *ti = type_lookup(type);
    const uint8_t *p      = base;
    pmix_status_t st;

    if (n == 0) {
        return PMIX_SUCCESS;
    }
    switch (ti->cls) {
    case TC_SCALAR:
    case TC_BOOL:
        return pack_scalars(buf, ti, base, n);
    case TC_COMPLEX:
        break;
    case TC_NONE:
        rdp_log_error(CORE, "cannot pack %zu elements of type PMIX_UNDEF", n);
        return PMIX_ERR_BAD_PARAM;
    default:
        return type_error(ti, type);
    }
    for (size_t i = 0; i < n; i++) {
        st = pack_one(buf, type, p + i * ti->esize, depth);
        if (st != PMIX_SUCCESS) {
            return st;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t pack_darray_d(rdp_buf_t *buf, const pmix_data_array_t *da,
                                   int depth)
{
    const type_info_t *ti = type_lookup(da->type);
    pmix_status_t st;

    if (depth >= RDP_WIRE_MAX_DEPTH) {
        rdp_log_error(CORE, "cannot pack: nesting deeper than %d",
                      RDP_WIRE_MAX_DEPTH);
        return PMIX_ERR_PACK_FAILURE;
    }
    if (ti->cls == TC_UNKNOWN || ti->cls == TC_UNSUP) {
        return type_error(ti, da->type);
    }
    if (da->array == NULL && da->size != 0) {
        rdp_log_error(CORE, "cannot pack a data array with a NULL array");
        return PMIX_ERR_BAD_PARAM;
    }
    if (rdp_buf_reserve(buf, 10) != PMIX_SUCCESS) {
        return PMIX_ERR_NOMEM;
    }
    put16(buf->data + buf->size, da->type);
    put64(buf->data + buf->size + 2, da->size);
    buf->size += 10;
    st = pack_elems(buf, da->type, da->array, da->size, depth + 1);
    return st;
}

static pmix_status_t pack_value_d(rdp_buf_t *buf, const pmix_value_t *val,
                                  int depth)
{
    const type_info_t *ti = type_lookup(val->type);
    const void *payload;
    pmix_status_t st;

    if (depth >= RDP_WIRE_MAX_DEPTH) {
        rdp_log_error(CORE, "cannot pack: nesting deeper than %d",
                      RDP_WIRE_MAX_DEPTH);
        return PMIX_ERR_PACK_FAILURE;
    }
    if (ti->cls == TC_UNKNOWN || ti->cls == TC_UNSUP) {
        return type_error(ti, val->type);
    }
    st = rdp_pack_u16(buf, val->type);
    if (st != PMIX_SUCCESS || ti->cls == TC_NONE) {
        return st;
    }
    if (!ti->in_value) {
        return pack_elems(buf, val->type, &val->data, 1, depth + 1);
    }
    /* held behind the union's pointer: u8 present, then the element */
    payload = val->data.ptr;
    st      = rdp_pack_u8(buf, payload != NULL);
    if (st != PMIX_SUCCESS || payload == NULL) {
        return st;
    }
    return pack_elems(buf, val->type, payload, 1, depth + 1);
}

/* Public pack entry points: on failure the buffer is rolled back to where
 * it was, so a failed pack leaves no half-written item behind. */
#define PACK_GUARDED(_buf, _expr)    \
    do {                             \
        size_t mark_ = (_buf)->size; \
        pmix_status_t st_;           \
        st_ = (_expr);               \
        if (st_ != PMIX_SUCCESS) {   \
            (_buf)->size = mark_;    \
        }                            \
        return st_;                  \
    } while (0)

pmix_status_t rdp_pack_value(rdp_buf_t *buf, const pmix_value_t *val)
{
    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PACK_GUARDED(buf, pack_value_d(buf, val, 0));
}

pmix_status_t rdp_pack_info(rdp_buf_t *buf, const pmix_info_t *info)
{
    if (info == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PACK_GUARDED(buf, pack_info_d(buf, info, 0));
}

pmix_status_t rdp_pack_info_array(rdp_buf_t *buf, const pmix_info_t *info,
                                  size_t ninfo)
{
    PACK_GUARDED(buf, pack_counted(buf, PMIX_INFO, info, ninfo, 0));
}

pmix_status_t rdp_pack_proc(rdp_buf_t *buf, const pmix_proc_t *proc)
{
    if (proc == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PACK_GUARDED(buf, pack_proc_d(buf, proc));
}

pmix_status_t rdp_pack_proc_array(rdp_buf_t *buf, const pmix_proc_t *procs,
                                  size_t nprocs)
{
    PACK_GUARDED(buf, pack_counted(buf, PMIX_PROC, procs, nprocs, 0));
}

pmix_status_t rdp_pack_data_array(rdp_buf_t *buf,
                                  const pmix_data_array_t *darray)
{
    if (darray == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PACK_GUARDED(buf, pack_darray_d(buf, darray, 0));
}

pmix_status_t rdp_pack_app_array(rdp_buf_t *buf, const pmix_app_t *apps,
                                 size_t napps)
{
    PACK_GUARDED(buf, pack_counted(buf, PMIX_APP, apps, napps, 0));
}

pmix_status_t rdp_pack_query_array(rdp_buf_t *buf, const pmix_query_t *q,
                                   size_t nq)
{
    PACK_GUARDED(buf, pack_counted(buf, PMIX_QUERY, q, nq, 0));
}

pmix_status_t rdp_pack_pdata_array(rdp_buf_t *buf, const pmix_pdata_t *pd,
                                   size_t npd)
{
    PACK_GUARDED(buf, pack_counted(buf, PMIX_PDATA, pd, npd, 0));
}

/* ------------------------------------------------------------------ */
/* unpacking                                                            */
/* ------------------------------------------------------------------ */

static pmix_status_t unpack_elems(rdp_rbuf_t *rb, pmix_data_type_t type,
                                  size_t n, int depth, void **array_p);
static pmix_status_t unpack_value_d(rdp_rbuf_t *rb, pmix_value_t *val,
                                    int depth);
static pmix_status_t unpack_darray_d(rdp_rbuf_t *rb, pmix_data_array_t *da,
                                     int depth);

/* Read a u64 element count and check that @a n elements of at least
 * @a minwire bytes each can still follow. */
static pmix_status_t unpack_count(rdp_rbuf_t *rb, size_t minwire, size_t *n_p)
{
    uint64_t n;
    pmix_status_t st;

    st = rdp_unpack_u64(rb, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (minwire == 0) {
        minwire = 1;
    }
    if (n > rb->left / minwire) {
        rdp_log_debug(CORE,
                      "unpack: count %" PRIu64 " exceeds the %zu bytes "
                      "left",
                      n, rb->left);
        return ERR_SHORT;
    }
    *n_p = (size_t)n;
    return PMIX_SUCCESS;
}

static pmix_status_t unpack_scalars(rdp_rbuf_t *rb, const type_info_t *ti,
                                    void *base, size_t n)
{
    size_t total = n * ti->esize; /* n was checked against rb->left */

    if (total > rb->left) {
        return ERR_SHORT;
    }
    if (ti->cls == TC_BOOL) {
        bool *b = base;
        for (size_t i = 0; i < n; i++) {
            if (rb->ptr[i] > 1) {
                rdp_log_debug(CORE, "unpack: bool byte %u", rb->ptr[i]);
                return PMIX_ERR_UNPACK_FAILURE;
            }
            b[i] = rb->ptr[i] != 0;
        }
    } else {
#if __BYTE_ORDER == __LITTLE_ENDIAN
        memcpy(base, rb->ptr, total);
#else
        uint8_t *dst = base;
        for (size_t off = 0; off < total; off += ti->lane) {
            switch (ti->lane) {
            case 1:
                dst[off] = rb->ptr[off];
                break;
            case 2: {
                uint16_t v = get16(rb->ptr + off);
                memcpy(dst + off, &v, 2);
                break;
            }
            case 4: {
                uint32_t v = get32(rb->ptr + off);
                memcpy(dst + off, &v, 4);
                break;
            }
            default: {
                uint64_t v = get64(rb->ptr + off);
                memcpy(dst + off, &v, 8);
                break;
            }
            }
        }
#endif
    }
    rb->ptr += total;
    rb->left -= total;
    return PMIX_SUCCESS;
}

/* NULL-terminated string list; *argv_p is NULL for a count of 0. */
static pmix_status_t unpack_argv(rdp_rbuf_t *rb, char ***argv_p)
{
    size_t n;
    char **argv;
    pmix_status_t st;

    st = unpack_count(rb, 4, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (n == 0) {
        *argv_p = NULL;
        return PMIX_SUCCESS;
    }
    argv = rdp_calloc(n + 1, sizeof(*argv));
    if (argv == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        st = unpack_string(rb, &argv[i]);
        if (st == PMIX_SUCCESS && argv[i] == NULL) {
            rdp_log_debug(CORE, "unpack: NULL entry inside a string list");
            st = PMIX_ERR_UNPACK_FAILURE;
        }
        if (st != PMIX_SUCCESS) {
            for (size_t j = 0; j < i; j++) {
                rdp_free(argv[j]);
            }
            rdp_free(argv);
            return st;
        }
    }
    *argv_p = argv;
    return PMIX_SUCCESS;
}

static pmix_status_t unpack_counted(rdp_rbuf_t *rb, pmix_data_type_t type,
                                    int depth, void **array_p, size_t *n_p)
{
    const type_info_t *ti = type_lookup(type);
    size_t n;
    pmix_status_t st;

    st = unpack_count(rb, ti->minwire, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    st = unpack_elems(rb, type, n, depth, array_p);
    if (st == PMIX_SUCCESS) {
        *n_p = n;
    }
    return st;
}

static pmix_status_t unpack_proc_d(rdp_rbuf_t *rb, pmix_proc_t *p)
{
    pmix_status_t st;

    st = unpack_string_into(rb, p->nspace, sizeof(p->nspace));
    STEP(st, rdp_unpack_u32(rb, &p->rank));
    return st;
}

static pmix_status_t unpack_info_d(rdp_rbuf_t *rb, pmix_info_t *info, int depth)
{
    pmix_status_t st;

    st = unpack_string_into(rb, info->key, sizeof(info->key));
    STEP(st, rdp_unpack_u32(rb, &info->flags));
    /* "persistent" says a local owner keeps the value; an unpacked info
     * owns its value, so the flag must not survive the trip */
    info->flags &= ~(pmix_info_directives_t)PMIX_INFO_PERSISTENT;
    STEP(st, unpack_value_d(rb, &info->value, depth));
    return st;
}

static pmix_status_t unpack_coord(rdp_rbuf_t *rb, pmix_coord_t *c)
{
    uint8_t view;
    size_t dims;
    void *arr = NULL;
    pmix_status_t st;

    st = rdp_unpack_u8(rb, &view);
    STEP(st, unpack_count(rb, 4, &dims));
    STEP(st, unpack_elems(rb, PMIX_UINT32, dims, 0, &arr));
    if (st == PMIX_SUCCESS) {
        c->view  = view;
        c->dims  = dims;
        c->coord = arr;
    }
    return st;
}

static pmix_status_t unpack_f32(rdp_rbuf_t *rb, float *f_p)
{
    uint32_t u;
    pmix_status_t st;

    st = rdp_unpack_u32(rb, &u);
    if (st == PMIX_SUCCESS) {
        memcpy(f_p, &u, sizeof(u));
    }
    return st;
}

static pmix_status_t unpack_tv(rdp_rbuf_t *rb, struct timeval *tv)
{
    uint64_t sec;
    uint64_t usec;
    pmix_status_t st;

    st = rdp_unpack_u64(rb, &sec);
    STEP(st, rdp_unpack_u64(rb, &usec));
    if (st == PMIX_SUCCESS) {
        tv->tv_sec  = (time_t)sec;
        tv->tv_usec = (suseconds_t)usec;
    }
    return st;
}

static pmix_status_t unpack_proc_stats(rdp_rbuf_t *rb, pmix_proc_stats_t *ps)
{
    int32_t pid;
    uint8_t state;
    pmix_status_t st;

    st = unpack_string(rb, &ps->node);
    STEP(st, unpack_proc_d(rb, &ps->proc));
    STEP(st, rdp_unpack_i32(rb, &pid));
    if (st == PMIX_SUCCESS) {
        ps->pid = pid;
        st      = unpack_string(rb, &ps->cmd);
    }
    STEP(st, rdp_unpack_u8(rb, &state));
    if (st == PMIX_SUCCESS) {
        ps->state = (char)state;
        st        = unpack_tv(rb, &ps->time);
    }
    STEP(st, unpack_f32(rb, &ps->percent_cpu));
    STEP(st, rdp_unpack_i32(rb, &ps->priority));
    STEP(st, rdp_unpack_u16(rb, &ps->num_threads));
    STEP(st, unpack_f32(rb, &ps->pss));
    STEP(st, unpack_f32(rb, &ps->vsize));
    STEP(st, unpack_f32(rb, &ps->rss));
    STEP(st, unpack_f32(rb, &ps->peak_vsize));
    STEP(st, rdp_unpack_u16(rb, &ps->processor));
    STEP(st, unpack_tv(rb, &ps->sample_time));
    return st;
}

/* @a n consecutive u64 fields into @a dst */
static pmix_status_t unpack_u64s(rdp_rbuf_t *rb, uint64_t *dst, size_t n)
{
    pmix_status_t st = PMIX_SUCCESS;

    for (size_t i = 0; i < n && st == PMIX_SUCCESS; i++) {
        st = rdp_unpack_u64(rb, &dst[i]);
    }
    return st;
}

static pmix_status_t unpack_disk_stats(rdp_rbuf_t *rb, pmix_disk_stats_t *d)
{
    uint64_t f[11];
    pmix_status_t st;

    st = unpack_string(rb, &d->disk);
    STEP(st, unpack_u64s(rb, f, 11));
    if (st == PMIX_SUCCESS) {
        d->num_reads_completed      = f[0];
        d->num_reads_merged         = f[1];
        d->num_sectors_read         = f[2];
        d->milliseconds_reading     = f[3];
        d->num_writes_completed     = f[4];
        d->num_writes_merged        = f[5];
        d->num_sectors_written      = f[6];
        d->milliseconds_writing     = f[7];
        d->num_ios_in_progress      = f[8];
        d->milliseconds_io          = f[9];
        d->weighted_milliseconds_io = f[10];
    }
    return st;
}

static pmix_status_t unpack_net_stats(rdp_rbuf_t *rb, pmix_net_stats_t *ns)
{
    uint64_t f[6];
    pmix_status_t st;

    st = unpack_string(rb, &ns->net_interface);
    STEP(st, unpack_u64s(rb, f, 6));
    if (st == PMIX_SUCCESS) {
        ns->num_bytes_recvd   = f[0];
        ns->num_packets_recvd = f[1];
        ns->num_recv_errs     = f[2];
        ns->num_bytes_sent    = f[3];
        ns->num_packets_sent  = f[4];
        ns->num_send_errs     = f[5];
    }
    return st;
}

static pmix_status_t unpack_node_stats(rdp_rbuf_t *rb, pmix_node_stats_t *nd,
                                       int depth)
{
    float *const f[] = {&nd->la,        &nd->la5,         &nd->la15,
                        &nd->total_mem, &nd->free_mem,    &nd->buffers,
                        &nd->cached,    &nd->swap_cached, &nd->swap_total,
                        &nd->swap_free, &nd->mapped};
    void *disks      = NULL;
    void *nets       = NULL;
    pmix_status_t st;

    st = unpack_string(rb, &nd->node);
    for (size_t i = 0; i < 11 && st == PMIX_SUCCESS; i++) {
        st = unpack_f32(rb, f[i]);
    }
    STEP(st, unpack_tv(rb, &nd->sample_time));
    if (st == PMIX_SUCCESS) {
        st =
            unpack_counted(rb, PMIX_DISK_STATS, depth, &disks, &nd->ndiskstats);
    }
    if (st == PMIX_SUCCESS) {
        nd->diskstats = disks;
        st = unpack_counted(rb, PMIX_NET_STATS, depth, &nets, &nd->nnetstats);
    }
    if (st == PMIX_SUCCESS) {
        nd->netstats = nets;
    }
    return st;
}

/* Fill one zeroed element of a non-scalar type.  On error the element may
 * hold partial (destructible) content. */
static pmix_status_t unpack_one(rdp_rbuf_t *rb, pmix_data_type_t type,
                                void *elem, int depth)
{
    pmix_status_t st;

    switch (type) {
    case PMIX_STRING:
        return unpack_string(rb, (char **)elem);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
        pmix_byte_object_t *bo = elem;
        void *d;
        st = unpack_bytes(rb, &d, &bo->size);
        if (st == PMIX_SUCCESS) {
            bo->bytes = d;
        }
        return st;
    }
    case PMIX_PROC_NSPACE:
        return unpack_string_into(rb, (char *)elem, sizeof(pmix_nspace_t));
    case PMIX_PROC:
        return unpack_proc_d(rb, elem);
    case PMIX_VALUE:
        return unpack_value_d(rb, elem, depth);
    case PMIX_INFO:
        return unpack_info_d(rb, elem, depth);
    case PMIX_DATA_ARRAY:
        return unpack_darray_d(rb, elem, depth);
    case PMIX_PDATA: {
        pmix_pdata_t *pd = elem;
        st               = unpack_proc_d(rb, &pd->proc);
        STEP(st, unpack_string_into(rb, pd->key, sizeof(pd->key)));
        STEP(st, unpack_value_d(rb, &pd->value, depth));
        return st;
    }
    case PMIX_APP: {
        pmix_app_t *app = elem;
        int32_t maxprocs;
        void *info = NULL;
        st         = unpack_string(rb, &app->cmd);
        STEP(st, unpack_argv(rb, &app->argv));
        STEP(st, unpack_argv(rb, &app->env));
        STEP(st, unpack_string(rb, &app->cwd));
        STEP(st, rdp_unpack_i32(rb, &maxprocs));
        if (st == PMIX_SUCCESS) {
            app->maxprocs = maxprocs;
            st = unpack_counted(rb, PMIX_INFO, depth, &info, &app->ninfo);
        }
        if (st == PMIX_SUCCESS) {
            app->info = info;
        }
        return st;
    }
    case PMIX_QUERY: {
        pmix_query_t *q = elem;
        void *qual      = NULL;
        st              = unpack_argv(rb, &q->keys);
        STEP(st, unpack_counted(rb, PMIX_INFO, depth, &qual, &q->nqual));
        if (st == PMIX_SUCCESS) {
            q->qualifiers = qual;
        }
        return st;
    }
    case PMIX_PROC_INFO: {
        pmix_proc_info_t *pi = elem;
        int32_t pid;
        uint8_t state;
        st = unpack_proc_d(rb, &pi->proc);
        STEP(st, unpack_string(rb, &pi->hostname));
        STEP(st, unpack_string(rb, &pi->executable_name));
        STEP(st, rdp_unpack_i32(rb, &pid));
        if (st == PMIX_SUCCESS) {
            pi->pid = pid;
            st      = rdp_unpack_i32(rb, &pi->exit_code);
        }
        STEP(st, rdp_unpack_u8(rb, &state));
        if (st == PMIX_SUCCESS) {
            pi->state = state;
        }
        return st;
    }
    case PMIX_ENVAR: {
        pmix_envar_t *ev = elem;
        uint8_t sep;
        st = unpack_string(rb, &ev->envar);
        STEP(st, unpack_string(rb, &ev->value));
        STEP(st, rdp_unpack_u8(rb, &sep));
        if (st == PMIX_SUCCESS) {
            ev->separator = (char)sep;
        }
        return st;
    }
    case PMIX_COORD:
        return unpack_coord(rb, elem);
    case PMIX_REGATTR: {
        pmix_regattr_t *ra = elem;
        st                 = unpack_string(rb, &ra->name);
        STEP(st, unpack_string_into(rb, ra->string, sizeof(ra->string)));
        STEP(st, rdp_unpack_u16(rb, &ra->type));
        STEP(st, unpack_argv(rb, &ra->description));
        return st;
    }
    case PMIX_PROC_CPUSET:
        return unpack_string(rb, &((pmix_cpuset_t *)elem)->source);
    case PMIX_TOPO:
        return unpack_string(rb, &((pmix_topology_t *)elem)->source);
    case PMIX_GEOMETRY: {
        pmix_geometry_t *g = elem;
        uint64_t fabric;
        void *coords = NULL;
        st           = rdp_unpack_u64(rb, &fabric);
        if (st == PMIX_SUCCESS) {
            g->fabric = (size_t)fabric;
            st        = unpack_string(rb, &g->uuid);
        }
        STEP(st, unpack_string(rb, &g->osname));
        STEP(st, unpack_counted(rb, PMIX_COORD, depth, &coords, &g->ncoords));
        if (st == PMIX_SUCCESS) {
            g->coordinates = coords;
        }
        return st;
    }
    case PMIX_DEVICE_DIST: {
        pmix_device_distance_t *d = elem;
        uint64_t dtype;
        st = unpack_string(rb, &d->uuid);
        STEP(st, unpack_string(rb, &d->osname));
        STEP(st, rdp_unpack_u64(rb, &dtype));
        if (st == PMIX_SUCCESS) {
            d->type = dtype;
            st      = rdp_unpack_u16(rb, &d->mindist);
        }
        STEP(st, rdp_unpack_u16(rb, &d->maxdist));
        return st;
    }
    case PMIX_ENDPOINT: {
        pmix_endpoint_t *ep = elem;
        void *d;
        st = unpack_string(rb, &ep->uuid);
        STEP(st, unpack_string(rb, &ep->osname));
        STEP(st, unpack_bytes(rb, &d, &ep->endpt.size));
        if (st == PMIX_SUCCESS) {
            ep->endpt.bytes = d;
        }
        return st;
    }
    case PMIX_PROC_STATS:
        return unpack_proc_stats(rb, elem);
    case PMIX_DISK_STATS:
        return unpack_disk_stats(rb, elem);
    case PMIX_NET_STATS:
        return unpack_net_stats(rb, elem);
    case PMIX_NODE_STATS:
        return unpack_node_stats(rb, elem, depth);
    case PMIX_DATA_BUFFER: {
        pmix_data_buffer_t *db = elem;
        void *d;
        size_t n;
        st = unpack_bytes(rb, &d, &n);
        if (st == PMIX_SUCCESS) {
            db->base_ptr        = d;
            db->pack_ptr        = (d != NULL) ? (char *)d + n : NULL;
            db->unpack_ptr      = d;
            db->bytes_allocated = n;
            db->bytes_used      = n;
        }
        return st;
    }
    default:
        return type_error(type_lookup(type), type);
    }
}

/* Allocate and fill an array of @a n elements; on error everything is
 * freed.  *array_p is NULL for n == 0. */
static pmix_status_t unpack_elems(rdp_rbuf_t *rb, pmix_data_type_t type,
                                  size_t n, int depth, void **array_p)
{
    const type_info_t *ti = type_lookup(type);
    uint8_t *array;
    pmix_status_t st = PMIX_SUCCESS;

    switch (ti->cls) {
    case TC_SCALAR:
    case TC_BOOL:
    case TC_COMPLEX:
        break;
    case TC_NONE:
        if (n == 0) {
            break;
        }
        rdp_log_debug(CORE, "unpack: %zu elements of type PMIX_UNDEF", n);
        return PMIX_ERR_UNPACK_FAILURE;
    default:
        return type_error(ti, type);
    }
    if (n == 0) {
        *array_p = NULL;
        return PMIX_SUCCESS;
    }
    /* the caller checked n against the bytes left; this is belt and braces
     * against a size_t overflow of the allocation */
    if (n > rb->left || n > SIZE_MAX / ti->esize) {
        return ERR_SHORT;
    }
    array = rdp_calloc(n, ti->esize);
    if (array == NULL) {
        rdp_log_error(CORE, "cannot allocate %zu elements of type %u", n,
                      (unsigned)type);
        return PMIX_ERR_NOMEM;
    }
    if (ti->cls != TC_COMPLEX) {
        st = unpack_scalars(rb, ti, array, n);
        if (st != PMIX_SUCCESS) {
            rdp_free(array);
            return st;
        }
        *array_p = array;
        return PMIX_SUCCESS;
    }
    for (size_t i = 0; i < n; i++) {
        st = unpack_one(rb, type, array + i * ti->esize, depth);
        if (st != PMIX_SUCCESS) {
            /* element i may be partial; i+1..n-1 are still zero */
            elems_free(type, array, i + 1);
            return st;
        }
    }
    *array_p = array;
    return PMIX_SUCCESS;
}

static pmix_status_t unpack_darray_d(rdp_rbuf_t *rb, pmix_data_array_t *da,
                                     int depth)
{
    const type_info_t *ti;
    uint16_t type;
    size_t n;
    void *array = NULL;
    pmix_status_t st;

    if (depth >= RDP_WIRE_MAX_DEPTH) {
        rdp_log_debug(CORE, "unpack: nesting deeper than %d",
                      RDP_WIRE_MAX_DEPTH);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    st = rdp_unpack_u16(rb, &type);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    ti = type_lookup(type);
    if (ti->cls == TC_UNKNOWN || ti->cls == TC_UNSUP) {
        return type_error(ti, type);
    }
    st = unpack_count(rb, ti->minwire, &n);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    st = unpack_elems(rb, type, n, depth + 1, &array);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    da->type  = type;
    da->size  = n;
    da->array = array;
    return PMIX_SUCCESS;
}

static pmix_status_t unpack_value_d(rdp_rbuf_t *rb, pmix_value_t *val,
                                    int depth)
{
    const type_info_t *ti;
    uint16_t type;
    uint8_t present;
    void *payload;
    pmix_status_t st;

    if (depth >= RDP_WIRE_MAX_DEPTH) {
        rdp_log_debug(CORE, "unpack: nesting deeper than %d",
                      RDP_WIRE_MAX_DEPTH);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    st = rdp_unpack_u16(rb, &type);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    ti = type_lookup(type);
    switch (ti->cls) {
    case TC_NONE:
        val->type = PMIX_UNDEF;
        return PMIX_SUCCESS;
    case TC_SCALAR:
    case TC_BOOL:
        st = unpack_scalars(rb, ti, &val->data, 1);
        if (st == PMIX_SUCCESS) {
            val->type = type;
        }
        return st;
    case TC_COMPLEX:
        break;
    default:
        return type_error(ti, type);
    }
    if (!ti->in_value) {
        /* inline (string, byte object, envar): fill the union in place;
         * the type is set only once the payload is complete */
        st = unpack_one(rb, type, &val->data, depth + 1);
        if (st != PMIX_SUCCESS) {
            pmix_value_t tmp = *val;
            tmp.type         = type;
            rdp_value_destruct(&tmp);
            memset(&val->data, 0, sizeof(val->data));
            return st;
        }
        val->type = type;
        return PMIX_SUCCESS;
    }
    st = rdp_unpack_u8(rb, &present);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (present > 1) {
        rdp_log_debug(CORE, "unpack: presence flag %u", present);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    payload = NULL;
    if (present) {
        st = unpack_elems(rb, type, 1, depth + 1, &payload);
        if (st != PMIX_SUCCESS) {
            return st;
        }
    }
    val->type     = type;
    val->data.ptr = payload;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_value(rdp_rbuf_t *rb, pmix_value_t *val)
{
    rdp_rbuf_t save = *rb;
    pmix_value_t tmp;
    pmix_status_t st;

    memset(&tmp, 0, sizeof(tmp));
    st = unpack_value_d(rb, &tmp, 0);
    if (st != PMIX_SUCCESS) {
        *rb = save;
        return st;
    }
    *val = tmp;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_info(rdp_rbuf_t *rb, pmix_info_t *info)
{
    rdp_rbuf_t save = *rb;
    pmix_info_t tmp;
    pmix_status_t st;

    memset(&tmp, 0, sizeof(tmp));
    st = unpack_info_d(rb, &tmp, 0);
    if (st != PMIX_SUCCESS) {
        rdp_value_destruct(&tmp.value);
        *rb = save;
        return st;
    }
    *info = tmp;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_proc(rdp_rbuf_t *rb, pmix_proc_t *proc)
{
    rdp_rbuf_t save = *rb;
    pmix_proc_t tmp;
    pmix_status_t st;

    memset(&tmp, 0, sizeof(tmp));
    st = unpack_proc_d(rb, &tmp);
    if (st != PMIX_SUCCESS) {
        *rb = save;
        return st;
    }
    *proc = tmp;
    return PMIX_SUCCESS;
}

/* Shared body of the public counted-array unpackers. */
static pmix_status_t unpack_array_pub(rdp_rbuf_t *rb, pmix_data_type_t type,
                                      void **array_p, size_t *n_p)
{
    rdp_rbuf_t save = *rb;
    void *array     = NULL;
    size_t n        = 0;
    pmix_status_t st;

    st = unpack_counted(rb, type, 0, &array, &n);
    if (st != PMIX_SUCCESS) {
        *rb = save;
        return st;
    }
    *array_p = array;
    *n_p     = n;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_unpack_info_array(rdp_rbuf_t *rb, pmix_info_t **info_p,
                                    size_t *ninfo_p)
{
    return unpack_array_pub(rb, PMIX_INFO, (void **)info_p, ninfo_p);
}

pmix_status_t rdp_unpack_proc_array(rdp_rbuf_t *rb, pmix_proc_t **procs_p,
                                    size_t *nprocs_p)
{
    return unpack_array_pub(rb, PMIX_PROC, (void **)procs_p, nprocs_p);
}

pmix_status_t rdp_unpack_app_array(rdp_rbuf_t *rb, pmix_app_t **apps_p,
                                   size_t *napps_p)
{
    return unpack_array_pub(rb, PMIX_APP, (void **)apps_p, napps_p);
}

pmix_status_t rdp_unpack_query_array(rdp_rbuf_t *rb, pmix_query_t **q_p,
                                     size_t *nq_p)
{
    return unpack_array_pub(rb, PMIX_QUERY, (void **)q_p, nq_p);
}

pmix_status_t rdp_unpack_pdata_array(rdp_rbuf_t *rb, pmix_pdata_t **pd_p,
                                     size_t *npd_p)
{
    return unpack_array_pub(rb, PMIX_PDATA, (void **)pd_p, npd_p);
}

pmix_status_t rdp_unpack_data_array(rdp_rbuf_t *rb,
                                    pmix_data_array_t **darray_p)
{
    rdp_rbuf_t save = *rb;
    pmix_data_array_t *da;
    pmix_status_t st;

    da = rdp_calloc(1, sizeof(*da));
    if (da == NULL) {
        return PMIX_ERR_NOMEM;
    }
    st = unpack_darray_d(rb, da, 0);
    if (st != PMIX_SUCCESS) {
        rdp_free(da);
        *rb = save;
        return st;
    }
    *darray_p = da;
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* message framing                                                      */
/* ------------------------------------------------------------------ */

void rdp_msg_hdr_encode(const rdp_msg_hdr_t *hdr, uint8_t out[RDP_MSG_HDR_LEN])
{
    put32(out, hdr->magic);
    put16(out + 4, hdr->version);
    put16(out + 6, hdr->cmd);
    put32(out + 8, hdr->tag);
    put32(out + 12, hdr->length);
}

pmix_status_t rdp_msg_hdr_decode(const uint8_t in[RDP_MSG_HDR_LEN],
                                 rdp_msg_hdr_t *hdr)
{
    rdp_msg_hdr_t h;

    h.magic   = get32(in);
    h.version = get16(in + 4);
    h.cmd     = get16(in + 6);
    h.tag     = get32(in + 8);
    h.length  = get32(in + 12);
    if (h.magic != RDP_MSG_MAGIC) {
        rdp_log_debug(CORE, "message header: bad magic 0x%08x", h.magic);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (h.version != RDP_MSG_VERSION) {
        rdp_log_debug(CORE, "message header: unsupported version %u",
                      (unsigned)h.version);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    *hdr = h;
    return PMIX_SUCCESS;
}
