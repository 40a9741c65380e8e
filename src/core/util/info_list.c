/* info_list.c - PMIx_Info_list_*: building info arrays incrementally */
#include "config.h"
#include "core/util/value.h"
#include "core/util/alloc.h"

#include <string.h>

#include <pmix.h>

/* The opaque list handle: a growable array of infos the list owns, except
 * entries added with PMIx_Info_list_insert, which are shallow copies marked
 * PMIX_INFO_PERSISTENT (their values stay the caller's). */
typedef struct info_list {
    pmix_info_t *items;
    size_t n;
    size_t cap;
} info_list_t;

void *PMIx_Info_list_start(void)
{
    return rdp_calloc(1, sizeof(info_list_t));
}

/* Make room for one more entry of list @a ptr (which must not be NULL,
 * nor @a arg) and return the zeroed slot; NULL with *@a st_p set if not. */
static pmix_info_t *next_slot(void *ptr, const void *arg, pmix_status_t *st_p)
{
    info_list_t *l = ptr;
    pmix_info_t *items;
    size_t cap;

    if (l == NULL || arg == NULL) {
        *st_p = PMIX_ERR_BAD_PARAM;
        return NULL;
    }
    if (l->n == l->cap) {
        cap   = (l->cap == 0) ? 8 : 2 * l->cap;
        items = rdp_realloc(l->items, cap * sizeof(*items));
        if (items == NULL) {
            *st_p = PMIX_ERR_NOMEM;
            return NULL;
        }
        l->items = items;
        l->cap   = cap;
    }
    PMIX_INFO_CONSTRUCT(&l->items[l->n]);
    return &l->items[l->n];
}

/* The slot returned by next_slot now holds an entry. */
static void commit_slot(void *ptr)
{
    ((info_list_t *)ptr)->n++;
}

pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                 pmix_data_type_t type)
{
    pmix_info_t *slot;
    pmix_status_t st;

    slot = next_slot(ptr, key, &st);
    if (slot == NULL) {
        return st;
    }
    st = PMIx_Info_load(slot, key, value, type);
    if (st == PMIX_SUCCESS) {
        commit_slot(ptr);
    }
    return st;
}

pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info)
{
    pmix_info_t *slot;
    pmix_status_t st;

    slot = next_slot(ptr, info, &st);
    if (slot == NULL) {
        return st;
    }
    *slot = *info;
    PMIX_INFO_SET_PERSISTENT(slot);
    commit_slot(ptr);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info)
{
    pmix_info_t *slot;
    pmix_status_t st;

    slot = next_slot(ptr, info, &st);
    if (slot == NULL) {
        return st;
    }
    st = PMIx_Info_xfer(slot, info);
    if (st == PMIX_SUCCESS) {
        slot->flags &= ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END;
        commit_slot(ptr);
    }
    return st;
}

pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par)
{
    info_list_t *l = ptr;
    pmix_info_t *array;
    pmix_status_t st;
    size_t i;

    if (l == NULL || par == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (l->n == 0) {
        return PMIX_ERR_EMPTY;
    }
    array = rdp_calloc(l->n, sizeof(*array));
    if (array == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (i = 0; i < l->n; i++) {
        /* inserted (persistent) entries stay shared, as in the list */
        st = PMIx_Info_xfer(&array[i], &l->items[i]);
        if (st != PMIX_SUCCESS) {
            rdp_info_array_free(array, i);
            return st;
        }
    }
    PMIX_INFO_SET_END(&array[l->n - 1]);
    par->type  = PMIX_INFO;
    par->size  = l->n;
    par->array = array;
    return PMIX_SUCCESS;
}

void PMIx_Info_list_release(void *ptr)
{
    info_list_t *l = ptr;

    if (l == NULL) {
        return;
    }
    rdp_info_array_free(l->items, l->n);
    rdp_free(l);
}
