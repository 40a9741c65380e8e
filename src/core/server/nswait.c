/* nswait.c - work held until its nspace is registered here (nswait.h) */
#include "config.h"
#include "core/server/nswait.h"

#include "core/common/runtime.h"
#include "core/loop/loop.h"
#include "core/util/alloc.h"

typedef struct held {
    struct held *next;
    const rdp_srv_nswait_ops_t *ops;
    void *arg;
    double expires; /* rdp_time_now() */
} held_t;

static held_t *held_list; /* in arrival order */
static size_t nheld;
static rdp_timer_t *expiry; /* armed for the earliest deadline */
static bool pass_posted;

static void arm_expiry(double now)
{
    double first = 0;

    for (const held_t *h = held_list; h != NULL; h = h->next) {
        if (h == held_list || h->expires < first) {
            first = h->expires;
        }
    }
    if (held_list == NULL) {
        rdp_timer_cancel(expiry);
    } else {
        rdp_timer_start(expiry, first > now ? first - now : 0);
    }
}

/* Offer each held item a run, or let it go when its deadline passed.
 * The list is taken whole first: a run may hold new items or discard. */
static void offer_all(bool registered)
{
    double now      = rdp_time_now();
    held_t *pending = held_list, *keep = NULL, **keep_tail = &keep;

    held_list = NULL;
    while (pending != NULL) {
        held_t *h = pending;
        bool done;

        pending = h->next;
        h->next = NULL;
        if (registered && h->ops->try_run(h->arg)) {
            done = true;
        } else if (h->expires <= now) {
            h->ops->expired(h->arg);
            done = true;
        } else {
            done = false;
        }
        if (done) {
            rdp_free(h);
            nheld--;
        } else {
            *keep_tail = h;
            keep_tail  = &h->next;
        }
    }
    *keep_tail = held_list; /* what the runs held meanwhile comes after */
    held_list  = keep;
    if (expiry != NULL) {
        arm_expiry(now);
    }
}

static void expiry_fired(void *arg)
{
    (void)arg;
    offer_all(false);
}

static void registration_pass(void *arg)
{
    (void)arg;
    pass_posted = false;
    offer_all(true);
}

pmix_status_t rdp_srv_nswait_hold(const rdp_srv_nswait_ops_t *ops, void *arg,
                                  double keep_s)
{
    held_t *h, **tail = &held_list;
    pmix_status_t status;

    if (expiry == NULL) {
        status = rdp_timer_create(rdp_rt.loop, expiry_fired, NULL, &expiry);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    h = rdp_calloc(1, sizeof(*h));
    if (h == NULL) {
        return PMIX_ERR_NOMEM;
    }
    h->ops     = ops;
    h->arg     = arg;
    h->expires = rdp_time_now() + keep_s;
    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    *tail = h;
    nheld++;
    arm_expiry(rdp_time_now());
    return PMIX_SUCCESS;
}

void rdp_srv_nswait_registered(void)
{
    if (held_list != NULL && !pass_posted
        && rdp_loop_post(rdp_rt.loop, registration_pass, NULL)
               == PMIX_SUCCESS) {
        pass_posted = true;
    }
}

void rdp_srv_nswait_discard(const rdp_srv_nswait_ops_t *ops)
{
    held_t **pp = &held_list;

    while (*pp != NULL) {
        held_t *h = *pp;

        if (h->ops != ops) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        h->ops->discard(h->arg);
        rdp_free(h);
        nheld--;
    }
    if (held_list == NULL) {
        /* the last owner closed: nothing may fire into a closed server */
        rdp_timer_destroy(expiry);
        expiry = NULL;
    } else {
        arm_expiry(rdp_time_now());
    }
}

size_t rdp_srv_nswait_count(void)
{
    return nheld;
}
