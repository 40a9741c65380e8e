/* fuzz_unpack.c - libFuzzer target: every wire unpacker on arbitrary bytes */
#include "config.h"
#include "core/wire/wire.h"
#include "core/kvs/kvs.h"
#include "core/util/value.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Free a counted array of a struct type through a data array wrapper. */
static void free_array(pmix_data_type_t type, void *array, size_t n)
{
    rdp_elems_destruct(type, array, n);
    free(array);
}

/* Pack what was unpacked: must succeed, since the unpacker accepted it. */
static void repack_value(const pmix_value_t *v)
{
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_pack_value(&buf, v) != PMIX_SUCCESS) {
        abort();
    }
    rdp_buf_cleanup(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size heap copy so ASan catches any read past the end */
    uint8_t *copy = malloc(size != 0 ? size : 1);
    rdp_rbuf_t rb;
    pmix_value_t v;
    pmix_info_t *info;
    pmix_proc_t *procs;
    pmix_app_t *apps;
    pmix_query_t *q;
    pmix_pdata_t *pd;
    pmix_data_array_t *da;
    rdp_msg_hdr_t hdr;
    rdp_kvs_t *kvs;
    size_t n;

    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);

    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_value(&rb, &v) == PMIX_SUCCESS) {
        repack_value(&v);
        rdp_value_destruct(&v);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_info_array(&rb, &info, &n) == PMIX_SUCCESS) {
        rdp_info_array_free(info, n);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_data_array(&rb, &da) == PMIX_SUCCESS) {
        rdp_data_array_free(da);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_proc_array(&rb, &procs, &n) == PMIX_SUCCESS) {
        free(procs);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_app_array(&rb, &apps, &n) == PMIX_SUCCESS) {
        free_array(PMIX_APP, apps, n);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_query_array(&rb, &q, &n) == PMIX_SUCCESS) {
        free_array(PMIX_QUERY, q, n);
    }
    rdp_rbuf_init(&rb, copy, size);
    if (rdp_unpack_pdata_array(&rb, &pd, &n) == PMIX_SUCCESS) {
        free_array(PMIX_PDATA, pd, n);
    }
    if (size >= RDP_MSG_HDR_LEN) {
        (void)rdp_msg_hdr_decode(copy, &hdr);
    }
    if (rdp_kvs_create(&kvs) == PMIX_SUCCESS) {
        rdp_rbuf_init(&rb, copy, size);
        (void)rdp_kvs_unpack_rank(kvs, "fuzz", 0, &rb);
        rdp_kvs_destroy(kvs);
    }
    free(copy);
    return 0;
}
