/* client_testgen.h - write data bundles (proto.h) in client tests */
#ifndef RDP_TESTS_CLIENT_TESTGEN_H
#define RDP_TESTS_CLIENT_TESTGEN_H

#include <pmix.h>

#include <string.h>

#include "core/util/value.h"
#include "core/wire/proto.h"
#include "core/wire/wire.h"

/* Include after <cmocka.h>: the helpers assert on every step.
 *
 * A section's kv list is written after its header (w_section, then w_kv
 * calls), so its length is patched when the section is closed: by the
 * next w_section or w_set on the same buffer, or by w_end, which every
 * bundle needs before it is read or sent. */

static rdp_buf_t *w_open_buf;
static size_t w_open_mark;

/* Close the open section of @a b, if any. */
static inline void w_end(rdp_buf_t *b)
{
    if (w_open_buf == b) {
        rdp_sect_pack_end(b, w_open_mark);
        w_open_buf = NULL;
    }
}

static inline void w_section(rdp_buf_t *b, uint8_t kind, uint32_t id,
                             const char *name, uint32_t nkv)
{
    w_end(b);
    assert_int_equal(rdp_sect_pack_begin(b, kind, id, name, &w_open_mark),
                     PMIX_SUCCESS);
    w_open_buf = b;
    assert_int_equal(rdp_pack_u32(b, nkv), PMIX_SUCCESS);
}

static inline void w_kv(rdp_buf_t *b, const char *key, pmix_data_type_t type,
                        const void *data)
{
    pmix_value_t v;

    memset(&v, 0, sizeof(v));
    assert_int_equal(PMIx_Value_load(&v, data, type), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u8(b, PMIX_GLOBAL), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_string(b, key), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_value(b, &v), PMIX_SUCCESS);
    rdp_value_destruct(&v);
}

static inline void w_u32(rdp_buf_t *b, const char *key, uint32_t u)
{
    w_kv(b, key, PMIX_UINT32, &u);
}

static inline void w_str(rdp_buf_t *b, const char *key, const char *s)
{
    w_kv(b, key, PMIX_STRING, s);
}

/* u32 nsets is the caller's; this starts one set. */
static inline void w_set(rdp_buf_t *b, const char *nspace, uint32_t nsections)
{
    w_end(b);
    assert_int_equal(rdp_pack_string(b, nspace), PMIX_SUCCESS);
    assert_int_equal(rdp_pack_u32(b, nsections), PMIX_SUCCESS);
}

#endif
