/* value.h - deep copy, destruction and comparison of PMIx Standard data */
#ifndef RDP_CORE_UTIL_VALUE_H
#define RDP_CORE_UTIL_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include <pmix_common.h>

/*
 * Every function here works on the public Standard types and allocates with
 * libc (memory crosses the API).  "Owned" memory of a value is everything
 * reachable from it: strings, byte objects, and for the struct types the
 * union holds by pointer (proc, info, data array, ...) the struct and its
 * contents.  PMIX_POINTER values are never followed: the pointer is copied
 * as is and never freed.
 *
 * Elements of a data array of type T have the layout given by
 * rdpmix_darray_elem_size(T) (pmix_common.h): scalars inline, pointer-held
 * types (proc, info, cpuset, ...) as arrays of the structs themselves.
 *
 * The hwloc objects behind pmix_cpuset_t.bitmap and pmix_topology_t.topology
 * are opaque here: they are copied and freed only through the hooks set by
 * rdp_value_set_opaque_ops (src/core/topo registers them).  Without hooks a
 * copy gets a NULL bitmap/topology (the source string is copied) and a
 * destruct leaves them to whoever created them.
 */

/**
 * Deep copy @a src into @a dst (any previous contents of @a dst are ignored,
 * not freed).  On error @a dst is left PMIX_UNDEF with nothing allocated.
 * Returns PMIX_SUCCESS, PMIX_ERR_NOMEM, or PMIX_ERR_UNKNOWN_DATA_TYPE /
 * PMIX_ERR_NOT_SUPPORTED for types that cannot be copied.
 * @param [out] dst  caller storage, may be uninitialised
 * @param [in]  src  borrowed
 */
pmix_status_t rdp_value_copy(pmix_value_t *dst, const pmix_value_t *src);

/** Free everything @a v owns and leave it PMIX_UNDEF with zeroed data.
 * Accepts NULL and partially filled values (NULL pointers inside). */
void rdp_value_destruct(pmix_value_t *v);

/** Deep equality (same type and same contents). */
bool rdp_value_equal(const pmix_value_t *a, const pmix_value_t *b);

/** Standard ordering of two values (PMIx_Value_compare). */
pmix_value_cmp_t rdp_value_compare(const pmix_value_t *a,
                                   const pmix_value_t *b);

/**
 * Deep copy key, flags and value of @a src into @a dst.  The copy always
 * owns its value, so PMIX_INFO_PERSISTENT is cleared on it (unlike
 * PMIx_Info_xfer, which shares a persistent source's value as the Standard
 * library does).  On error @a dst is a valid empty info.
 */
pmix_status_t rdp_info_copy(pmix_info_t *dst, const pmix_info_t *src);

/**
 * Deep copy an info array.  *@a dst_p is a malloc'ed array of @a n (NULL for
 * 0) with the PMIX_INFO_ARRAY_END flag on its last element; release it with
 * rdp_info_array_free.
 */
pmix_status_t rdp_info_array_copy(pmix_info_t **dst_p, const pmix_info_t *src,
                                  size_t n);

/** Destruct @a n infos (honouring PMIX_INFO_PERSISTENT) and free the array.
 * Accepts NULL. */
void rdp_info_array_free(pmix_info_t *info, size_t n);

/** The PMIX_NSPACE qualifier of @a q (a borrowed string), else @a dflt. */
const char *rdp_query_nspace(const pmix_query_t *q, const char *dflt);

/**
 * Allocate *@a dst_p and deep copy @a src (any element type, nested arrays
 * included) into it.  Release with rdp_data_array_free.
 */
pmix_status_t rdp_data_array_copy(pmix_data_array_t **dst_p,
                                  const pmix_data_array_t *src);

/** Free the elements of @a da (deeply) and reset it to an empty array of
 * the same type; the struct itself is not freed.  Accepts NULL. */
void rdp_data_array_destruct(pmix_data_array_t *da);

/** rdp_data_array_destruct, then free @a da itself.  Accepts NULL. */
void rdp_data_array_free(pmix_data_array_t *da);

/**
 * Deep copy @a n elements of @a type from @a src into @a dst (caller
 * storage of n * rdpmix_darray_elem_size(type) bytes, contents ignored).
 * On error @a dst is zeroed with nothing allocated.
 */
pmix_status_t rdp_elems_copy(pmix_data_type_t type, void *dst, const void *src,
                             size_t n);

/** Free what @a n elements of @a type at @a elems own (not the storage
 * itself) and zero them.  Elements may be zeroed or partially filled. */
void rdp_elems_destruct(pmix_data_type_t type, void *elems, size_t n);

/** True for the types pmix_value_t holds behind its union pointer (one
 * element of the struct, e.g. PMIX_PROC, PMIX_INFO, PMIX_DATA_ARRAY);
 * false for types held in the union itself (scalars, strings, byte
 * objects, envars, PMIX_POINTER). */
bool rdp_value_held_by_pointer(pmix_data_type_t type);

/** Hooks for the opaque hwloc objects (see above).  Each may be NULL. */
typedef struct rdp_value_opaque_ops {
    /** Return a copy of cpuset bitmap @a bitmap of library @a source. */
    void *(*cpuset_copy)(const char *source, const void *bitmap);
    void (*cpuset_free)(const char *source, void *bitmap);
    /** Return a copy of (or a new reference to) @a topology. */
    void *(*topology_copy)(const char *source, void *topology);
    void (*topology_free)(const char *source, void *topology);
} rdp_value_opaque_ops_t;

/** Install hooks (borrowed, must stay valid; NULL removes them).  Call once
 * at start-up before values containing such objects are copied. */
void rdp_value_set_opaque_ops(const rdp_value_opaque_ops_t *ops);

/**
 * Render @a n elements of @a type at @a elems as text into a malloc'ed
 * string (values separated by ", ").  NULL only when out of memory.
 */
char *rdp_elems_print(pmix_data_type_t type, const void *elems, size_t n);

/** Render a value as "TYPE: text" (malloc'ed; NULL only on ENOMEM). */
char *rdp_value_print(const pmix_value_t *v);

#endif
