/* nswait.h - work another server sent before this one registered its job
 *
 * A server's host can register a job's nspace later than the other
 * servers' hosts (a slow node).  What those servers send for the job in
 * the meantime -- a direct-modex request, a group OPEN -- is held here
 * until a registration makes it runnable, and given up after a deadline.
 * Every holder decides for itself whether it can run now, so one pass
 * after each registration serves every kind of held work.  Loop thread
 * only. */
#ifndef RDP_SRV_NSWAIT_H
#define RDP_SRV_NSWAIT_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct rdp_srv_nswait_ops {
    /* A registration happened: run @a arg and return true if what it
     * waits for is here now; false keeps it held. */
    bool (*try_run)(void *arg);
    /* Its deadline passed first: answer or drop @a arg (it is let go). */
    void (*expired)(void *arg);
    /* The server closes: free @a arg without running it. */
    void (*discard)(void *arg);
} rdp_srv_nswait_ops_t;

/* Hold @a arg for at most @a keep_s seconds.  On failure nothing is
 * held and @a arg is still the caller's. */
pmix_status_t rdp_srv_nswait_hold(const rdp_srv_nswait_ops_t *ops, void *arg,
                                  double keep_s);

/* An nspace was registered here: a later loop pass (after the host heard
 * of the registration) offers every held item a run. */
void rdp_srv_nswait_registered(void);

/* Discard everything held with @a ops (its owner closes). */
void rdp_srv_nswait_discard(const rdp_srv_nswait_ops_t *ops);

/* How many items are held (tests, logs). */
size_t rdp_srv_nswait_count(void);

#endif
