/* attr_type.h - the Standard's value type of integer and boolean
 * attributes, and lossless conversion of a value to it */
#ifndef RDP_CORE_UTIL_ATTR_TYPE_H
#define RDP_CORE_UTIL_ATTR_TYPE_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stdint.h>

/**
 * The type the Standard gives the value of attribute string @a key
 * ("pmix.appnum" -> PMIX_UINT32), for the integer and boolean attributes of
 * pmix_common.h; PMIX_UNDEF for every other key.  Any thread.
 */
pmix_data_type_t rdp_attr_std_type(const char *key);

/**
 * The number an integer-typed value holds (any signed or unsigned integer
 * type, size, rank, pid, status, byte), as a sign and a magnitude.  False
 * for every other type (strings, booleans, ...).
 */
bool rdp_value_integer(const pmix_value_t *v, bool *negative_p,
                       uint64_t *magnitude_p);

/**
 * Convert the integer or boolean value @a src to @a type (an integer type,
 * PMIX_PROC_RANK, PMIX_PID, PMIX_STATUS or PMIX_BOOL) when no information is
 * lost: the number fits, and a boolean is 0 or 1 as a number.  A value of
 * type PMIX_UNDEF converts to true, as the Standard's PMIX_INFO_TRUE reads
 * it.  Returns PMIX_SUCCESS with *@a dst_p filled, or
 * PMIX_ERR_TYPE_MISMATCH (not a number, negative for an unsigned type, too
 * large, or @a type is not one of the above).  Nothing is allocated.
 */
pmix_status_t rdp_value_convert_scalar(const pmix_value_t *src,
                                       pmix_data_type_t type,
                                       pmix_value_t *dst_p);

#endif
