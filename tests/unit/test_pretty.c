/* test_pretty.c - every value of every enumeration of the public headers
 * that has a *_string function (the list is generated from pmix_common.h
 * at build time: enum_values.h) gets a distinct, known string, and the
 * string OpenPMIx 4.2.2 gives where it has one.  OpenPMIx's library is
 * asked in a child process (this program with --dump LIB), skipped when
 * it is not installed. */
#include "config.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <pmix.h>

typedef struct {
    const char *family; /* "proc_state" */
    const char *name;   /* "PMIX_PROC_STATE_RUNNING" */
    long long value;
} enum_value_t;

static const enum_value_t values[] = {
#define RDP_ENUM(f, n) {#f, #n, (long long)(n)},
#include "enum_values.h"
#undef RDP_ENUM
};
#define NVALUES (sizeof(values) / sizeof(values[0]))

/* the *_string functions of one library */
typedef struct {
    const char *(*proc_state)(pmix_proc_state_t);
    const char *(*job_state)(pmix_job_state_t);
    const char *(*status)(pmix_status_t);
    const char *(*value_cmp)(pmix_value_cmp_t);
    const char *(*data_type)(pmix_data_type_t);
    const char *(*scope)(pmix_scope_t);
    const char *(*data_range)(pmix_data_range_t);
    const char *(*persistence)(pmix_persistence_t);
    char *(*info_directives)(pmix_info_directives_t);
    const char *(*alloc_directive)(pmix_alloc_directive_t);
    const char *(*iof_channel)(pmix_iof_channel_t);
    const char *(*link_state)(pmix_link_state_t);
    const char *(*device_type)(pmix_device_type_t);
} lib_t;

static const lib_t ours = {
    PMIx_Proc_state_string,      PMIx_Job_state_string,
    PMIx_Error_string,           PMIx_Value_comparison_string,
    PMIx_Data_type_string,       PMIx_Scope_string,
    PMIx_Data_range_string,      PMIx_Persistence_string,
    PMIx_Info_directives_string, PMIx_Alloc_directive_string,
    PMIx_IOF_channel_string,     PMIx_Link_state_string,
    PMIx_Device_type_string,
};

/* A value no header defines, for each family: what "unknown" reads as. */
static long long undefined_value(const char *family)
{
    if (strcmp(family, "status") == 0) {
        return -2999;
    }
    if (strcmp(family, "iof_channel") == 0) {
        return 0x100;
    }
    if (strcmp(family, "device_type") == 0) {
        return 0x10000;
    }
    if (strcmp(family, "data_type") == 0) {
        return 499;
    }
    return 100; /* every uint8 family leaves 100 free (alloc: < EXTERNAL) */
}

/* The string of @a v in @a family from @a lib, copied into @a buf. */
static void string_of(const lib_t *lib, const char *family, long long v,
                      char *buf, size_t len)
{
    const char *s = NULL;
    char *owned   = NULL;

#define CASE(f, type)              \
    if (strcmp(family, #f) == 0) { \
        s = lib->f((type)v);       \
    }
    CASE(proc_state, pmix_proc_state_t)
    CASE(job_state, pmix_job_state_t)
    CASE(status, pmix_status_t)
    CASE(value_cmp, pmix_value_cmp_t)
    CASE(data_type, pmix_data_type_t)
    CASE(scope, pmix_scope_t)
    CASE(data_range, pmix_data_range_t)
    CASE(persistence, pmix_persistence_t)
    CASE(alloc_directive, pmix_alloc_directive_t)
    CASE(iof_channel, pmix_iof_channel_t)
    CASE(link_state, pmix_link_state_t)
    CASE(device_type, pmix_device_type_t)
#undef CASE
    if (strcmp(family, "info_directives") == 0) {
        s = owned = lib->info_directives((pmix_info_directives_t)v);
    }
    snprintf(buf, len, "%s", s != NULL ? s : "(null)");
    free(owned);
}

/* ---- OpenPMIx's answers, from a child process ---- */

#define LINE 256

/* --dump LIB (a process of its own, so two libraries never meet): one
 * line per value, LIB's string of it, a tab, and LIB's string for the
 * family's undefined value. */
static int dump(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    lib_t lib;
    char s[LINE], u[LINE];

    if (h == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
#define SYM(f, name) *(void **)&lib.f = dlsym(h, name)
    SYM(proc_state, "PMIx_Proc_state_string");
    SYM(job_state, "PMIx_Job_state_string");
    SYM(status, "PMIx_Error_string");
    SYM(value_cmp, "PMIx_Value_comparison_string");
    SYM(data_type, "PMIx_Data_type_string");
    SYM(scope, "PMIx_Scope_string");
    SYM(data_range, "PMIx_Data_range_string");
    SYM(persistence, "PMIx_Persistence_string");
    SYM(info_directives, "PMIx_Info_directives_string");
    SYM(alloc_directive, "PMIx_Alloc_directive_string");
    SYM(iof_channel, "PMIx_IOF_channel_string");
    SYM(link_state, "PMIx_Link_state_string");
    SYM(device_type, "PMIx_Device_type_string");
#undef SYM
    for (size_t i = 0; i < NVALUES; i++) {
        string_of(&lib, values[i].family, values[i].value, s, sizeof(s));
        string_of(&lib, values[i].family, undefined_value(values[i].family), u,
                  sizeof(u));
        printf("%s\t%s\n", s, u);
    }
    return 0;
}

static const char *openpmix_path(void)
{
    const char *env = getenv("OPENPMIX_LIB");

    return env != NULL ? env
                       : "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2";
}

/* theirs[i] = OpenPMIx's string of values[i], or NULL where it has none */
static char *theirs[NVALUES];

static int read_theirs(void)
{
    char cmd[1024], line[2 * LINE + 2];
    FILE *p;
    size_t i = 0;

    snprintf(cmd, sizeof(cmd), "/proc/%d/exe --dump '%s'", (int)getpid(),
             openpmix_path());
    p = popen(cmd, "r");
    if (p == NULL) {
        return -1;
    }
    while (i < NVALUES && fgets(line, sizeof(line), p) != NULL) {
        char *tab = strchr(line, '\t');

        line[strcspn(line, "\n")] = '\0';
        if (tab == NULL) {
            break;
        }
        *tab = '\0';
        /* their "unknown" answer is no text of theirs */
        theirs[i++] = strcmp(line, tab + 1) == 0 ? NULL : strdup(line);
    }
    return pclose(p) == 0 && i == NVALUES ? 0 : -1;
}

/* ---- the checks ---- */

/* constants whose own name says "unknown" or "none" (PMIX_LINK_STATE_UNKNOWN,
 * PMIX_FWD_NO_CHANNELS) rightly read like the unknown answer */
static bool names_unknown(const char *name)
{
    return strstr(name, "UNKNOWN") != NULL || strstr(name, "_NO_") != NULL;
}

static void every_value_has_a_known_string(void **state)
{
    char s[LINE], u[LINE];
    int bad = 0;

    assert_true(NVALUES > 300);
    for (size_t i = 0; i < NVALUES; i++) {
        const enum_value_t *e = &values[i];

        string_of(&ours, e->family, e->value, s, sizeof(s));
        string_of(&ours, e->family, undefined_value(e->family), u, sizeof(u));
        if (names_unknown(e->name)
            || strcmp(e->family, "info_directives") == 0) {
            continue; /* "UNKNOWN" is its name; directives compose */
        }
        if (strcmp(s, u) == 0 || s[0] == '\0') {
            print_message("# %s (%lld): \"%s\" is the unknown answer\n",
                          e->name, e->value, s);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* Different values of a family read differently (aliases share). */
static void different_values_read_differently(void **state)
{
    char a[LINE], b[LINE];
    int bad = 0;

    for (size_t i = 0; i < NVALUES; i++) {
        for (size_t j = i + 1; j < NVALUES; j++) {
            if (strcmp(values[i].family, values[j].family) != 0
                || values[i].value == values[j].value) {
                continue;
            }
            string_of(&ours, values[i].family, values[i].value, a, sizeof(a));
            string_of(&ours, values[j].family, values[j].value, b, sizeof(b));
            if (strcmp(a, b) == 0) {
                print_message("# %s and %s both read \"%s\"\n", values[i].name,
                              values[j].name, a);
                bad++;
            }
        }
    }
    assert_int_equal(bad, 0);
}

/* The sanitizer runtimes refuse dlopen with RTLD_DEEPBIND (which keeps
 * OpenPMIx's symbols from binding to ours): the comparison is a test of
 * the normal build only (not registered in a sanitized one). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RDP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RDP_TEST_SANITIZED 1
#endif
#endif

static void strings_are_openpmix_ones(void **state)
{
    char s[LINE];
    int bad = 0, compared = 0;

    if (access(openpmix_path(), R_OK) != 0) {
        skip();
    }
    assert_int_equal(read_theirs(), 0);
    for (size_t i = 0; i < NVALUES; i++) {
        if (theirs[i] == NULL) {
            continue;
        }
        compared++;
        string_of(&ours, values[i].family, values[i].value, s, sizeof(s));
        if (strcmp(s, theirs[i]) != 0) {
            print_message("# %s: ours \"%s\", OpenPMIx \"%s\"\n",
                          values[i].name, s, theirs[i]);
            bad++;
        }
        free(theirs[i]);
    }
    print_message("# %d values compared with %s\n", compared, openpmix_path());
    assert_true(compared > 200);
    assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_value_has_a_known_string),
        cmocka_unit_test(different_values_read_differently),
#ifndef RDP_TEST_SANITIZED
        cmocka_unit_test(strings_are_openpmix_ones),
#endif
    };

#ifdef RDP_TEST_SANITIZED
    (void)strings_are_openpmix_ones;
#endif

    if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
        return dump(argv[2]);
    }
    return cmocka_run_group_tests_name("pretty", tests, NULL, NULL);
}
