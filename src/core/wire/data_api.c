/* data_api.c - the Standard's data buffer API (pack/unpack, load/unload) */
#include "config.h"

#include "core/wire/wire.h"

#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/value.h"

#include <pmix.h>

#include <stdint.h>
#include <string.h>

/*
 * A pmix_data_buffer_t holds our wire bytes in one libc allocation:
 * [base_ptr, base_ptr + bytes_used) is packed data, pack_ptr is
 * base_ptr + bytes_used, unpack_ptr lies between base_ptr and pack_ptr, and
 * bytes_allocated >= bytes_used.  An empty buffer is all zero (the
 * Standard's CONSTRUCT/DESTRUCT macros).  A buffer breaking these rules is
 * refused with PMIX_ERR_BAD_PARAM.
 *
 * One PMIx_Data_pack call writes one item, encoded as a data array of the
 * given type (wire.h: u16 type, u64 count, the elements), so every item
 * carries its type and PMIx_Data_unpack of another type fails with
 * PMIX_ERR_PACK_MISMATCH without consuming anything.  There is a single
 * encoding, so the target/source process arguments are ignored.
 *
 * PMIx_Data_unpack returns at most *max_num_values values of one item.
 * When the item holds more, the caller gets the first *max_num_values of
 * them, PMIX_ERR_UNPACK_INADEQUATE_SPACE, and the rest of that item is
 * discarded, so the next unpack starts at the next item (the reference
 * library instead leaves its buffer unusable).  Past the last item it
 * returns PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER.
 *
 * cpuset and topology values travel as their source only (wire.h): they
 * unpack with a NULL bitmap/topology.
 */

static pmix_status_t dbuf_check(const pmix_data_buffer_t *b)
{
    uintptr_t base, pack, unpack;

    if (b->base_ptr == NULL) {
        if (b->pack_ptr != NULL || b->unpack_ptr != NULL || b->bytes_used != 0
            || b->bytes_allocated != 0) {
            goto err_corrupt;
        }
        return PMIX_SUCCESS;
    }
    base   = (uintptr_t)b->base_ptr;
    pack   = (uintptr_t)b->pack_ptr;
    unpack = (uintptr_t)b->unpack_ptr;
    if (b->bytes_used > b->bytes_allocated || pack != base + b->bytes_used
        || unpack < base || unpack > pack) {
        goto err_corrupt;
    }
    return PMIX_SUCCESS;

err_corrupt:
    rdp_log_error(CORE, "data buffer is corrupt (not constructed, or its "
                        "fields were changed by hand)");
    return PMIX_ERR_BAD_PARAM;
}

static size_t dbuf_unread(const pmix_data_buffer_t *b)
{
    return (b->base_ptr == NULL) ? 0 : (size_t)(b->pack_ptr - b->unpack_ptr);
}

static size_t dbuf_read_offset(const pmix_data_buffer_t *b)
{
    return (b->base_ptr == NULL) ? 0 : (size_t)(b->unpack_ptr - b->base_ptr);
}

/* Point @a b at @a data (libc allocation of @a cap bytes, @a used packed,
 * cursor at @a roff); NULL data makes it empty. */
static void dbuf_set(pmix_data_buffer_t *b, uint8_t *data, size_t cap,
                     size_t used, size_t roff)
{
    if (data == NULL) {
        memset(b, 0, sizeof(*b));
        return;
    }
    b->base_ptr        = (char *)data;
    b->bytes_allocated = cap;
    b->bytes_used      = used;
    b->pack_ptr        = b->base_ptr + used;
    b->unpack_ptr      = b->base_ptr + roff;
}

/* Borrow the buffer's bytes as a wire pack buffer. */
static void dbuf_to_wire(const pmix_data_buffer_t *b, rdp_buf_t *wb)
{
    wb->data = (uint8_t *)b->base_ptr;
    wb->size = b->bytes_used;
    wb->cap  = b->bytes_allocated;
}

/* Give the (possibly reallocated) bytes back to the buffer. */
static void dbuf_from_wire(pmix_data_buffer_t *b, rdp_buf_t *wb, size_t roff)
{
    dbuf_set(b, wb->data, wb->cap, wb->size, roff);
}

pmix_status_t PMIx_Data_pack(const pmix_proc_t *target,
                             pmix_data_buffer_t *buffer, void *src,
                             int32_t num_vals, pmix_data_type_t type)
{
    pmix_data_array_t item;
    rdp_buf_t wb;
    size_t roff;
    pmix_status_t st;

    if (buffer == NULL || num_vals < 0 || (src == NULL && num_vals != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = dbuf_check(buffer);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    item.type  = type;
    item.size  = (size_t)num_vals;
    item.array = src;
    roff       = dbuf_read_offset(buffer);
    dbuf_to_wire(buffer, &wb);
    /* on failure wire restores the used size; the allocation may have grown,
     * which the buffer keeps (invisible to the caller) */
    st = rdp_pack_data_array(&wb, &item);
    dbuf_from_wire(buffer, &wb, roff);
    return st;
}

pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source,
                               pmix_data_buffer_t *buffer, void *dest,
                               int32_t *max_num_values, pmix_data_type_t type)
{
    pmix_data_array_t *item;
    rdp_rbuf_t rb;
    rdp_rbuf_t peek;
    uint16_t stored;
    size_t esize, nkeep;
    pmix_status_t st;

    if (buffer == NULL || dest == NULL || max_num_values == NULL
        || *max_num_values <= 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = dbuf_check(buffer);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    rdp_rbuf_init(&rb, buffer->unpack_ptr, dbuf_unread(buffer));
    peek = rb;
    st   = rdp_unpack_u16(&peek, &stored);
    if (st != PMIX_SUCCESS) {
        /* nothing (or not even a type) left: the normal end of a loop */
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (stored != type) {
        rdp_log_debug(CORE, "unpack: next item is %s, not %s",
                      PMIx_Data_type_string(stored),
                      PMIx_Data_type_string(type));
        return PMIX_ERR_PACK_MISMATCH;
    }
    st = rdp_unpack_data_array(&rb, &item);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    esize = rdpmix_darray_elem_size(type);
    nkeep = item->size;
    if (item->size > (size_t)*max_num_values) {
        nkeep = (size_t)*max_num_values;
        st    = PMIX_ERR_UNPACK_INADEQUATE_SPACE;
        rdp_log_debug(CORE,
                      "unpack: room for %zu of %zu values; the rest of "
                      "the item is dropped",
                      nkeep, item->size);
    }
    if (nkeep != 0) {
        /* move the first nkeep elements (they keep what they own) */
        memcpy(dest, item->array, nkeep * esize);
    }
    if (item->size > nkeep) {
        rdp_elems_destruct(type, (uint8_t *)item->array + nkeep * esize,
                           item->size - nkeep);
    }
    *max_num_values = (int32_t)nkeep;
    rdp_free(item->array);
    rdp_free(item);
    buffer->unpack_ptr = (char *)rb.ptr;
    return st;
}

pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest,
                                     pmix_data_buffer_t *src)
{
    rdp_buf_t wb;
    size_t n, soff, roff;
    pmix_status_t st;

    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = dbuf_check(dest);
    if (st == PMIX_SUCCESS) {
        st = dbuf_check(src);
    }
    if (st != PMIX_SUCCESS) {
        return st;
    }
    n = dbuf_unread(src);
    if (n == 0) {
        return PMIX_SUCCESS;
    }
    /* offsets, not pointers: dest may be src, and may move */
    soff = dbuf_read_offset(src);
    roff = dbuf_read_offset(dest);
    dbuf_to_wire(dest, &wb);
    st = rdp_buf_reserve(&wb, n);
    dbuf_from_wire(dest, &wb, roff);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    memcpy(dest->pack_ptr, src->base_ptr + soff, n);
    dest->bytes_used += n;
    dest->pack_ptr += n;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                               pmix_byte_object_t *payload)
{
    size_t n;
    pmix_status_t st;

    if (buffer == NULL || payload == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    st = dbuf_check(buffer);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    n = dbuf_unread(buffer);
    if (n == 0) {
        rdp_free(buffer->base_ptr);
        payload->bytes = NULL;
        payload->size  = 0;
    } else {
        /* hand the allocation over, unread bytes first */
        if (buffer->unpack_ptr != buffer->base_ptr) {
            memmove(buffer->base_ptr, buffer->unpack_ptr, n);
        }
        payload->bytes = buffer->base_ptr;
        payload->size  = n;
    }
    dbuf_set(buffer, NULL, 0, 0, 0);
    return PMIX_SUCCESS;
}

/* Common checks of load and embed. */
static pmix_status_t payload_check(const pmix_data_buffer_t *buffer,
                                   const pmix_byte_object_t *payload)
{
    if (buffer == NULL || payload == NULL
        || (payload->bytes == NULL && payload->size != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    return dbuf_check(buffer);
}

/* Replace the buffer's contents with @a data (libc allocation of @a size
 * bytes, taken; freed when size is 0). */
static void dbuf_adopt(pmix_data_buffer_t *buffer, void *data, size_t size)
{
    rdp_free(buffer->base_ptr);
    if (size == 0) {
        rdp_free(data);
        data = NULL;
    }
    dbuf_set(buffer, data, size, size, 0);
}

pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer,
                             pmix_byte_object_t *payload)
{
    pmix_status_t st;

    st = payload_check(buffer, payload);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    dbuf_adopt(buffer, payload->bytes, payload->size);
    payload->bytes = NULL;
    payload->size  = 0;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer,
                              const pmix_byte_object_t *payload)
{
    uint8_t *copy = NULL;
    pmix_status_t st;

    st = payload_check(buffer, payload);
    if (st != PMIX_SUCCESS) {
        return st;
    }
    if (payload->size != 0) {
        copy = rdp_malloc(payload->size);
        if (copy == NULL) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, payload->bytes, payload->size);
    }
    /* like PMIx_Data_load, the buffer's previous contents are replaced */
    dbuf_adopt(buffer, copy, payload->size);
    return PMIX_SUCCESS;
}

/* rdpmix links no compression library, so nothing is ever compressed:
 * the Standard lets PMIx_Data_compress answer false ("not compressed"),
 * and a decompress of anything is then necessarily foreign data. */
bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                        size_t *nbytes)
{
    return false;
}

bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size,
                          uint8_t **outbytes, size_t *nbytes)
{
    return false;
}
