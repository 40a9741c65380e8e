/* test_run_heap.c - the daemon's malloc keeps what it frees
 * (src/run/util.c, rdp_run_malloc_keep_freed) */
#include "config.h"
#include "run/util.h"

#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A sanitizer's runtime replaces glibc's malloc, whose settings and
 * statistics this test reads: it is a test of the normal build only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RDP_TEST_OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RDP_TEST_OWN_MALLOC 1
#endif
#endif

/* A 2 MiB block (an exchange's block at 64 KiB x 32 ranks) comes from
 * the heap, and once freed its pages serve the next one of its size:
 * not a mapping of its own, returned to the kernel at the free. */
static void a_large_freed_block_serves_the_next(void **state)
{
    const size_t len = 2u << 20;
    struct mallinfo2 mi;
    uint8_t *a, *b;

    (void)state;
    rdp_run_malloc_keep_freed();
    a = malloc(len);
    assert_non_null(a);
    mi = mallinfo2();
    assert_int_equal(mi.hblks, 0); /* no chunk of its own mapping */
    memset(a, 1, len);
    free(a);
    mi = mallinfo2();
    assert_true(mi.fordblks >= len); /* kept, not trimmed */
    b = malloc(len + 512);           /* a header more, as UCP's */
    assert_non_null(b);
    assert_ptr_equal(b, a);
    free(b);
}

int main(void)
{
#ifdef RDP_TEST_OWN_MALLOC
    /* TAP's skip of the whole file (cmocka reports a skipped test as
     * "not ok", which the driver counts as a failure) */
    printf("1..0 # SKIP the sanitizer's malloc is not glibc's\n");
    return 0;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_large_freed_block_serves_the_next),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
