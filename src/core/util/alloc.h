/* alloc.h - allocation wrappers; memory that crosses the PMIx API is libc's */
#ifndef RDP_CORE_UTIL_ALLOC_H
#define RDP_CORE_UTIL_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The Standard's create/free macros expand to malloc/calloc/free inside the
 * caller, so everything handed across the API must come from libc too.  The
 * wrappers exist so that allocation sites are greppable and can be made to
 * fail in tests. */
static inline void *rdp_malloc(size_t size)
{
    return malloc(size);
}

/* From this size up, rdp_malloc_to_fill maps a block's pages in one call. */
#define RDP_POPULATE_MIN ((size_t)16384)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Map the pages of [p, p + size) that a caller is about to write, in
 * one call (see rdp_malloc_to_fill); from RDP_POPULATE_MIN bytes on. */
static inline void rdp_populate_write(void *p, size_t size)
{
    if (p != NULL && size >= RDP_POPULATE_MIN) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo   = (uintptr_t)p & ~(page - 1);
        uintptr_t hi   = ((uintptr_t)p + size + page - 1) & ~(page - 1);

        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
    }
}

/*
 * malloc for a block the caller fills completely right away (a value
 * copied out to a PMIx caller).  A large block of fresh heap otherwise
 * takes one page fault per page as the copy first writes it; one
 * MADV_POPULATE_WRITE maps them all without the faults (a third less CPU
 * for a 64 KiB copy, bench/RESULTS.md).  The pages rounded outwards lie
 * in the block's own mapping, and populating never changes their
 * contents; kernels without it (EINVAL) just fault as before.
 */
static inline void *rdp_malloc_to_fill(size_t size)
{
    void *p = malloc(size);

    rdp_populate_write(p, size);
    return p;
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
