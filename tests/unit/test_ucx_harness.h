/* test_ucx_harness.h - UCX transports in one process, one loop thread each */
#ifndef RDP_TESTS_UNIT_TEST_UCX_HARNESS_H
#define RDP_TESTS_UNIT_TEST_UCX_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/loop/loop.h"
#include "ucx/ucx.h"

/*
 * Every test node owns a loop thread; the test thread runs code on it with
 * on_loop() (post + wait), as a server would.  UCX_TLS and UCX_NET_DEVICES
 * are pinned by ucx_pin() before the transports are created.
 */

#define UCX_TEST_WAIT 20.0 /* seconds: generous bound on any single wait */

typedef struct ucx_job {
    void (*fn)(void *);
    void *arg;
    rdp_wait_t w;
} ucx_job_t;

static inline void ucx_job_run(void *p)
{
    ucx_job_t *job = p;

    job->fn(job->arg);
    rdp_wait_signal(&job->w, PMIX_SUCCESS);
}

/* Run fn(arg) on @a loop and wait for it; returns 0 on success. */
static inline int on_loop(rdp_loop_t *loop, void (*fn)(void *), void *arg)
{
    ucx_job_t job = {.fn = fn, .arg = arg};
    pmix_status_t st;

    rdp_wait_init(&job.w);
    if (rdp_loop_post(loop, ucx_job_run, &job) != PMIX_SUCCESS) {
        rdp_wait_cleanup(&job.w);
        return -1;
    }
    st = rdp_wait_wait_for(&job.w, UCX_TEST_WAIT);
    if (st != PMIX_SUCCESS) {
        /* the job still references our stack: do not return */
        fprintf(stderr, "loop job timed out\n");
        abort();
    }
    rdp_wait_cleanup(&job.w);
    return 0;
}

static inline void ucx_pin(const char *tls)
{
    setenv("UCX_TLS", tls, 1);
    setenv("UCX_NET_DEVICES", "lo", 1);
}

static inline void ucx_test_key(uint8_t key[RDP_UCX_KEY_LEN], uint8_t seed)
{
    for (int i = 0; i < RDP_UCX_KEY_LEN; i++) {
        key[i] = (uint8_t)(seed * 53 + i * 7 + 1);
    }
}

/* ---- create / connect / destroy on a node's loop ---- */

typedef struct ucx_boot {
    rdp_loop_t *loop;
    rdp_ucx_params_t params;
    rdp_ucx_tl_t *tl;
    pmix_status_t status;
    const void *addr;
    size_t addr_len;
    uint32_t me;
    uint32_t n;
    const rdp_iov_t *table;
} ucx_boot_t;

static inline void ucx_boot_create(void *arg)
{
    ucx_boot_t *b = arg;

    b->status = rdp_ucx_tl_create(b->loop, &b->params, &b->tl);
    if (b->status == PMIX_SUCCESS) {
        b->status = rdp_ucx_tl_address(b->tl, &b->addr, &b->addr_len);
    }
}

static inline void ucx_boot_connect(void *arg)
{
    ucx_boot_t *b = arg;

    b->status = rdp_ucx_tl_connect(b->tl, b->me, b->n, b->table);
}

static inline void ucx_boot_destroy(void *arg)
{
    ucx_boot_t *b = arg;

    rdp_ucx_tl_destroy(b->tl);
    b->tl = NULL;
}

#endif
