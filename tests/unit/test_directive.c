/* test_directive.c - required info directives (PMIX_INFO_REQD): a required
 * directive the function does not support fails the call with
 * PMIX_ERR_NOT_SUPPORTED, optional ones are ignored; the table of supported
 * attributes; the Standard's flag helpers */
#include "config.h"
#include "core/util/directive.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <pmix.h>
#include <pmix_server.h>

/* a key no function of rdpmix reads */
#define UNSUPPORTED PMIX_ALLOC_BANDWIDTH

static void load(pmix_info_t *info, const char *key, bool required)
{
    bool yes = true;

    PMIX_INFO_CONSTRUCT(info);
    PMIX_INFO_LOAD(info, key, &yes, PMIX_BOOL);
    if (required) {
        PMIx_Info_required(info);
    }
}

/* Real calls (no server: past the check they fail with PMIX_ERR_INIT, or
 * with the status they give without a directive). */
static void required_unsupported_fails_the_call(void **state)
{
    pmix_info_t info[2];
    pmix_value_t *val = NULL;

    load(&info[0], PMIX_TIMEOUT, false);
    load(&info[1], UNSUPPORTED, true);
    assert_int_equal(PMIx_Fence(NULL, 0, info, 2), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Fence_nb(NULL, 0, info, 2, NULL, NULL),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Get(NULL, PMIX_JOB_SIZE, info, 2, &val),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Publish(info, 2), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(PMIx_Notify_event(PMIX_ERR_PROC_ABORTED, NULL,
                                       PMIX_RANGE_LOCAL, info, 2, NULL, NULL),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_null(val);
}

static void optional_unsupported_is_ignored(void **state)
{
    pmix_info_t info[2];
    pmix_value_t *val = NULL;

    load(&info[0], PMIX_TIMEOUT, true); /* supported by both */
    load(&info[1], UNSUPPORTED, false);
    assert_int_equal(PMIx_Fence(NULL, 0, info, 2), PMIX_ERR_INIT);
    assert_int_equal(PMIx_Get(NULL, PMIX_JOB_SIZE, info, 2, &val),
                     PMIX_ERR_INIT);
    /* the same request without the directive gives the same answer */
    assert_int_equal(PMIx_Fence(NULL, 0, NULL, 0), PMIX_ERR_INIT);
}

/* Publish and Notify_event carry the caller's data: its own keys are not
 * directives even when flagged required; a Standard attribute is. */
static void data_keys_are_not_directives(void **state)
{
    pmix_info_t info;

    load(&info, "my.app.key", true);
    assert_int_equal(rdp_directives_check("PMIx_Publish", &info, 1),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_directives_check("PMIx_Notify_event", &info, 1),
                     PMIX_SUCCESS);
    assert_int_equal(rdp_directives_check("PMIx_Fence", &info, 1),
                     PMIX_ERR_NOT_SUPPORTED);
    load(&info, UNSUPPORTED, true);
    assert_int_equal(rdp_directives_check("PMIx_Publish_nb", &info, 1),
                     PMIX_ERR_NOT_SUPPORTED);
    /* the host's job data is never read as directives */
    assert_int_equal(
        rdp_directives_check("PMIx_server_register_nspace", &info, 1),
        PMIX_SUCCESS);
    /* a function the table does not know supports nothing */
    assert_int_equal(rdp_directives_check("PMIx_No_such", &info, 1),
                     PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(rdp_directives_check("PMIx_No_such", NULL, 3),
                     PMIX_SUCCESS);
}

/* The iterator walks each function's list; _nb shares it. */
static void table_walks(void **state)
{
    const char *fn, *a;
    size_t i, n = 0;
    rdp_api_kind_t kind;
    bool seen_server = false, seen_tool = false, seen_timeout = false;

    for (i = 0; (fn = rdp_attr_function_name(i, &kind)) != NULL; i++) {
        assert_int_equal(strncmp(fn, "PMIx_", 5), 0);
        seen_server |= kind == RDP_API_SERVER;
        seen_tool |= kind == RDP_API_TOOL;
        n++;
    }
    assert_true(n > 30);
    assert_true(seen_server && seen_tool);
    for (i = 0; (a = rdp_attr_supported_by("PMIx_Fence_nb", i)) != NULL; i++) {
        assert_true(rdp_attr_is_supported("PMIx_Fence", a));
        seen_timeout |= strcmp(a, PMIX_TIMEOUT) == 0;
    }
    assert_true(seen_timeout);
    assert_null(rdp_attr_supported_by("PMIx_No_such", 0));
    assert_false(rdp_attr_is_supported("PMIx_Fence", UNSUPPORTED));
    assert_true(rdp_attr_takes_any("PMIx_server_register_nspace"));
    assert_false(rdp_attr_takes_any("PMIx_Get"));
}

/* The Standard's helpers agree with the macros. */
static void flag_helpers(void **state)
{
    pmix_info_t info;

    PMIX_INFO_CONSTRUCT(&info);
    assert_true(PMIx_Info_is_optional(&info));
    PMIx_Info_required(&info);
    assert_true(PMIx_Info_is_required(&info));
    assert_true(PMIX_INFO_IS_REQUIRED(&info));
    assert_false(PMIx_Info_is_optional(&info));
    PMIx_Info_optional(&info);
    assert_false(PMIx_Info_is_required(&info));
    assert_false(PMIx_Info_was_processed(&info));
    PMIx_Info_processed(&info);
    assert_true(PMIx_Info_was_processed(&info));
    assert_false(PMIx_Info_is_end(&info));
    PMIx_Info_set_end(&info);
    assert_true(PMIx_Info_is_end(&info));
    PMIx_Info_qualifier(&info);
    assert_true(PMIx_Info_is_qualifier(&info));
    PMIx_Info_persistent(&info);
    assert_true(PMIx_Info_is_persistent(&info));
    assert_int_equal(info.flags, PMIX_INFO_REQD_PROCESSED | PMIX_INFO_ARRAY_END
                                     | PMIX_INFO_QUALIFIER
                                     | PMIX_INFO_PERSISTENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(required_unsupported_fails_the_call),
        cmocka_unit_test(optional_unsupported_is_ignored),
        cmocka_unit_test(data_keys_are_not_directives),
        cmocka_unit_test(table_walks),
        cmocka_unit_test(flag_helpers),
    };

    return cmocka_run_group_tests_name("directive", tests, NULL, NULL);
}
