/* run_client.h - what run_client.c shares with its other mode files */
#ifndef RDP_TESTS_INTEG_RUN_CLIENT_H
#define RDP_TESTS_INTEG_RUN_CLIENT_H

#include <pmix.h>

#include <stdbool.h>

extern pmix_proc_t me;

/** Print "rank R: FAILED ..." on stderr and exit 1. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/** PMIx_Fence of the whole job, collecting data if @a collect. */
void fence_collect(int collect);
/** PMIx_Get or fail; the caller releases the value. */
pmix_value_t *get(const pmix_proc_t *proc, const char *key);
/** A string PMIx_Get or fail; malloc'ed. */
char *get_string(const pmix_proc_t *proc, const char *key);

/** Fail unless @a got is @a want ("@a what: GOT, not WANT"). */
void expect_status(const char *what, pmix_status_t got, pmix_status_t want);
/** The info @a key of @a res (n entries), or fail. */
const pmix_info_t *info_of(const pmix_info_t *res, size_t n, const char *key);

/* run_client_hostops.c: run_client nodes log|jctrl|query */
bool is_hostops_mode(const char *mode);
void hostops_main(const char *mode, unsigned size);

/* run_client_board.c: run_client nodes board|boardmix */
bool is_board_mode(const char *mode);
/** Before PMIx_Init: what the mode needs in the environment. */
void board_setenv(const char *mode);
void board_main(unsigned size);

/* run_client_query.c: run_client nodes queryall */
void query_main(unsigned size);

#endif
