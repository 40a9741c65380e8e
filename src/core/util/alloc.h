/* alloc.h - allocation wrappers; memory that crosses the PMIx API is libc's */
#ifndef RDP_CORE_UTIL_ALLOC_H
#define RDP_CORE_UTIL_ALLOC_H

#include <stdlib.h>
#include <string.h>

/* The Standard's create/free macros expand to malloc/calloc/free inside the
 * caller, so everything handed across the API must come from libc too.  The
 * wrappers exist so that allocation sites are greppable and can be made to
 * fail in tests. */
static inline void *rdp_malloc(size_t size)
{
    return malloc(size);
}

static inline void *rdp_calloc(size_t n, size_t size)
{
    return calloc(n, size);
}

static inline void *rdp_realloc(void *ptr, size_t size)
{
    return realloc(ptr, size);
}

static inline char *rdp_strdup(const char *s)
{
    return strdup(s);
}

static inline void rdp_free(void *ptr)
{
    free(ptr);
}

#endif
