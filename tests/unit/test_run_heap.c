/* test_run_heap.c - the daemon's malloc keeps what it frees
 * (src/run/util.c, rdp_run_malloc_keep_freed) */
#include "config.h"
#include "run/util.h"

#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_large_freed_block_serves_the_next),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
