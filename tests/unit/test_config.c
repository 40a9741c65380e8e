/* test_config.c - the RDPMIX_* settings table: types, bad values, defaults */
#include "config.h"
#include "core/util/config_table.h"
#include "coll/select.h"
#include "core/ipc/ipc.h"
#include "core/wire/proto.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Every row is complete, named RDPMIX_*, once, and its default (if any)
 * parses as its own type. */
static void every_row_is_complete_and_defaults_parse(void **state)
{
    char why[256];
    double v;

    for (unsigned i = 0; i < RDP_CFG_COUNT; i++) {
        const rdp_cfg_setting_t *st = rdp_cfg_setting((rdp_cfg_id_t)i);
        rdp_cfg_id_t id;

        assert_non_null(st);
        assert_non_null(st->name);
        assert_int_equal(strncmp(st->name, "RDPMIX_", 7), 0);
        assert_non_null(st->help);
        assert_true(strlen(st->help) > 10);
        assert_ptr_equal(rdp_cfg_find(st->name, &id), st);
        assert_int_equal(id, i);
        if (st->dflt != NULL && st->type != RDP_CFG_STRING) {
            if (rdp_cfg_parse(id, st->dflt, &v, why, sizeof(why))
                != PMIX_SUCCESS) {
                fail_msg("%s: default does not parse: %s", st->name, why);
            }
        }
    }
    assert_null(rdp_cfg_setting(RDP_CFG_COUNT));
    assert_null(rdp_cfg_find("RDPMIX_NO_SUCH_THING", NULL));
}

/* The modules' numeric defaults are the table's. */
static void module_defaults_agree_with_the_table(void **state)
{
    uint64_t v;

    unsetenv("RDPMIX_IPC_MAX_MSG");
    unsetenv("RDPMIX_SHM_MIN");
    unsetenv("RDPMIX_COLL_SEG_BYTES");
    assert_int_equal(rdp_cfg_uint(RDP_CFG_IPC_MAX_MSG, &v), PMIX_SUCCESS);
    assert_int_equal(v, RDP_IPC_DEFAULT_MAX_MSG);
    assert_int_equal(rdp_cfg_uint(RDP_CFG_SHM_MIN, &v), PMIX_SUCCESS);
    assert_int_equal(v, RDP_FENCE_SHM_MIN_DEFAULT);
    assert_int_equal(rdp_cfg_uint(RDP_CFG_COLL_SEG_BYTES, &v), PMIX_SUCCESS);
    assert_int_equal(v, RDP_COLL_SEG_BYTES_DEFAULT);
    assert_true(rdp_cfg_setting(RDP_CFG_COLL_SEG_BYTES)->max
                == (double)RDP_COLL_SEG_BYTES_MAX);
}

typedef struct {
    rdp_cfg_id_t id;
    const char *text;
    double want; /* < 0: must be refused */
} case_t;

/* Each type reads what it documents and refuses the rest. */
static void types_parse_and_refuse(void **state)
{
    static const case_t cases[] = {
        {RDP_CFG_NODE_UTS, "1", 1},
        {RDP_CFG_NODE_UTS, "no", 0},
        {RDP_CFG_NODE_UTS, "TRUE", 1},
        {RDP_CFG_NODE_UTS, "off", 0},
        {RDP_CFG_NODE_UTS, "maybe", -1},
        {RDP_CFG_NODE_UTS, "2", -1},
        {RDP_CFG_IPC_MAX_MSG, "0x10", 16},
        {RDP_CFG_IPC_MAX_MSG, "4096", 4096},
        {RDP_CFG_IPC_MAX_MSG, "0", -1},
        {RDP_CFG_IPC_MAX_MSG, "-5", -1},
        {RDP_CFG_IPC_MAX_MSG, "4294967296", -1},
        {RDP_CFG_IPC_MAX_MSG, "12k", -1},
        {RDP_CFG_SHM_MIN, "0", 0},
        {RDP_CFG_COLL_SEG_BYTES, "64k", 65536},
        {RDP_CFG_COLL_SEG_BYTES, "1M", 1048576},
        {RDP_CFG_COLL_SEG_BYTES, "0x10", -1},
        {RDP_CFG_COLL_SEG_BYTES, "1025m", -1},
        {RDP_CFG_COLL_SEG_BYTES, " 5", -1},
        {RDP_CFG_KILL_GRACE, "0.5", 0.5},
        {RDP_CFG_KILL_GRACE, "-1", -1},
        {RDP_CFG_KILL_GRACE, "3s", -1},
        {RDP_CFG_KILL_GRACE, "nan", -1},
        {RDP_CFG_KILL_GRACE, "2e6", -1},
        {RDP_CFG_UCX_SPIN_US, "0", 0},
        {RDP_CFG_UCX_SPIN_US, "12.5", 12.5},
        {RDP_CFG_UCX_SPIN_US, "x", -1},
    };
    char why[256];
    double v;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const case_t *c = &cases[i];
        pmix_status_t status =
            rdp_cfg_parse(c->id, c->text, &v, why, sizeof(why));

        if (c->want < 0) {
            if (status != PMIX_ERR_BAD_PARAM) {
                fail_msg("%s=\"%s\" accepted", rdp_cfg_setting(c->id)->name,
                         c->text);
            }
            /* the reason names the setting and the text */
            assert_non_null(strstr(why, rdp_cfg_setting(c->id)->name));
            assert_non_null(strstr(why, c->text));
        } else {
            if (status != PMIX_SUCCESS) {
                fail_msg("%s", why);
            }
            assert_true(v == c->want);
        }
    }
}

/* From the environment: set values win, empty means unset, a bad value
 * gives PMIX_ERR_BAD_PARAM and the default; the source follows. */
static void environment_values_and_sources(void **state)
{
    uint64_t v;

    unsetenv("RDPMIX_SHM_MIN");
    assert_string_equal(rdp_cfg_source(RDP_CFG_SHM_MIN), "default");
    setenv("RDPMIX_SHM_MIN", "", 1);
    assert_null(rdp_cfg_env(RDP_CFG_SHM_MIN));
    assert_string_equal(rdp_cfg_source(RDP_CFG_SHM_MIN), "default");
    setenv("RDPMIX_SHM_MIN", "100", 1);
    assert_string_equal(rdp_cfg_source(RDP_CFG_SHM_MIN), "environment");
    assert_int_equal(rdp_cfg_uint(RDP_CFG_SHM_MIN, &v), PMIX_SUCCESS);
    assert_int_equal(v, 100);
    setenv("RDPMIX_SHM_MIN", "lots", 1);
    assert_int_equal(rdp_cfg_uint(RDP_CFG_SHM_MIN, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(v, RDP_FENCE_SHM_MIN_DEFAULT);
    unsetenv("RDPMIX_SHM_MIN");

    setenv("RDPMIX_KILL_GRACE", "soon", 1);
    assert_true(rdp_cfg_seconds(RDP_CFG_KILL_GRACE) == 3.0);
    setenv("RDPMIX_KILL_GRACE", "7.5", 1);
    assert_true(rdp_cfg_seconds(RDP_CFG_KILL_GRACE) == 7.5);
    unsetenv("RDPMIX_KILL_GRACE");

    setenv("RDPMIX_NODE_UTS", "sometimes", 1);
    assert_true(rdp_cfg_bool(RDP_CFG_NODE_UTS)); /* the default: on */
    setenv("RDPMIX_NODE_UTS", "0", 1);
    assert_false(rdp_cfg_bool(RDP_CFG_NODE_UTS));
    unsetenv("RDPMIX_NODE_UTS");

    unsetenv("RDPMIX_LAUNCH_AGENT");
    assert_string_equal(rdp_cfg_string(RDP_CFG_LAUNCH_AGENT), "ssh");
    assert_null(rdp_cfg_env(RDP_CFG_LAUNCH_AGENT));
    setenv("RDPMIX_LAUNCH_AGENT", "rsh -x", 1);
    assert_string_equal(rdp_cfg_string(RDP_CFG_LAUNCH_AGENT), "rsh -x");
    unsetenv("RDPMIX_LAUNCH_AGENT");
    unsetenv("RDPMIX_LOG_FILE");
    assert_null(rdp_cfg_string(RDP_CFG_LOG_FILE)); /* no default: stderr */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_complete_and_defaults_parse),
        cmocka_unit_test(module_defaults_agree_with_the_table),
        cmocka_unit_test(types_parse_and_refuse),
        cmocka_unit_test(environment_values_and_sources),
    };

    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
