/* pages_mapped.h - whether a block's pages are mapped (unit tests; include
 * after cmocka.h) */
#ifndef RDP_TEST_PAGES_MAPPED_H
#define RDP_TEST_PAGES_MAPPED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Whether every page of [p, p + size) is mapped; skips the test on a
 * kernel without MADV_POPULATE_WRITE (before 5.14). */
static bool all_pages_mapped(void *p, size_t size)
{
    long page          = sysconf(_SC_PAGESIZE);
    uintptr_t lo       = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t npages      = (size + ((uintptr_t)p - lo) + page - 1) / page;
    unsigned char *vec = calloc(npages, 1);
    size_t mapped      = 0;
    void *probe        = mmap(NULL, page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    assert_non_null(vec);
    assert_true(probe != MAP_FAILED);
    if (madvise(probe, page, MADV_POPULATE_WRITE) != 0) {
        munmap(probe, page);
        free(vec);
        skip();
    }
    munmap(probe, page);
    assert_int_equal(mincore((void *)lo, npages * page, vec), 0);
    for (size_t i = 0; i < npages; i++) {
        mapped += vec[i] & 1;
    }
    free(vec);
    return mapped == npages;
}

#endif
