/* datapeer.c - GLOBAL publish/lookup between rdpmix-run launchers */
#include "config.h"
#include "run/datapeer.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/list.h"
#include "core/util/log.h"
#include "core/util/value.h"
#include "run/chan.h"
#include "run/ctl.h"
#include "run/xconn.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define PEER_MAX_MSG  (1u << 20)
#define PEER_MAX_OFFER RDP_CTL_MAX_MSG /* an XOFFER carries committed data */
#define PEER_POLL     0.2 /* seconds between the tries of a waiting lookup */
#define SOCKET_SUFFIX ".sock"

/*
 * Seconds a launcher has to answer a question.  Questions are sent and
 * answered on the loop (each over a channel of its own), so a launcher
 * never blocks in one: two launchers asking each other at the same moment
 * both answer (they once blocked in their questions and, with equal
 * waits, gave up together for ever: test_run_connect.sh's cross case).
 */
#define PEER_ANSWER_WAIT 1.0

/* A GLOBAL lookup in progress: what it found so far is kept here. */
typedef struct xlook {
    rdp_list_t link;
    rdp_ds_who_t who;
    char **keys;
    size_t nkeys;
    pmix_pdata_t *found; /* one slot a key; key[0] set once found */
    size_t nfound;
    size_t want; /* 0: answer after the first try */
    double deadline;
    pmix_info_t *info; /* the request's, without PMIX_WAIT/PMIX_TIMEOUT */
    size_t ninfo;
    rdp_ds_reply_cb_t reply_cb;
    void *arg;
    struct rdp_run_peers *peers;
    rdp_list_t questions; /* of this try, not answered yet */
    double round_end;     /* questions left then are given up */
} xlook_t;

/* One question of a lookup to another launcher. */
typedef struct question {
    rdp_list_t link;
    xlook_t *x;
    rdp_run_chan_t *chan;
} question_t;

/* Another launcher asking us. */
typedef struct guest {
    rdp_list_t link;
    rdp_run_chan_t *chan;
    struct rdp_run_peers *peers;
} guest_t;

struct rdp_run_peers {
    rdp_loop_t *loop;
    rdp_ds_t *ds;
    char *dir;
    char *path; /* our socket */
    char name[64];
    int fd;
    rdp_fdwatch_t *watch;
    rdp_list_t guests;
    rdp_list_t looks;
    rdp_timer_t *timer;
    rdp_run_peers_offer_fn offer_fn;
    void *offer_arg;
};

/* ---- the directory and our socket ---- */

static char *default_dir(void)
{
    const char *dir = rdp_cfg_env(RDP_CFG_PEER_DIR);
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char buf[4096];

    if (dir != NULL && dir[0] != '\0') {
        return rdp_strdup(dir);
    }
    if (xdg != NULL && xdg[0] == '/') {
        snprintf(buf, sizeof(buf), "%s/rdpmix", xdg);
    } else {
        snprintf(buf, sizeof(buf), "/tmp/rdpmix-%u", (unsigned)geteuid());
    }
    return rdp_strdup(buf);
}

/* The directory must be ours and closed to everyone else: whoever can
 * put a socket there is believed to be a launcher of ours. */
static pmix_status_t check_dir(const char *dir, char *why, size_t whylen)
{
    struct stat st;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if (lstat(dir, &st) != 0) {
        snprintf(why, whylen, "cannot use %s: %s", dir, strerror(errno));
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()
        || (st.st_mode & 077) != 0) {
        snprintf(why, whylen,
                 "%s is not a private directory of this user (mode %04o, "
                 "owner %u)",
                 dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    return PMIX_SUCCESS;
}

static int make_addr(const char *path, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path)) {
        return -1;
    }
    strcpy(sa->sun_path, path);
    return 0;
}

/* Is the process at the other end of @a fd ours? */
static int same_user(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0
           && cred.uid == geteuid();
}

/* ---- answering other launchers ---- */

static void guest_free(guest_t *g)
{
    rdp_list_del(&g->link);
    rdp_run_chan_destroy(g->chan);
    rdp_free(g);
}

static void guest_close_cb(rdp_run_chan_t *chan, pmix_status_t why, void *arg)
{
    guest_free(arg);
}

typedef struct guest_reply {
    guest_t *guest;
    uint32_t id;
} guest_reply_t;

/* a foreign lookup never waits: this runs inside rdp_ds_lookup */
static void guest_reply_cb(pmix_status_t status, const pmix_pdata_t *pd,
                           size_t npd, void *arg)
{
    guest_reply_t *r = arg;
    rdp_buf_t buf;

    rdp_buf_init(&buf);
    if (rdp_ctl_pubsub_reply_pack(&buf, r->id, status, pd, npd)
        == PMIX_SUCCESS) {
        rdp_run_chan_send(r->guest->chan, RDP_CTL_PUBSUB_REPLY, &buf);
    } else {
        rdp_buf_cleanup(&buf);
    }
}

static void guest_msg_cb(rdp_run_chan_t *chan, uint16_t cmd,
                         const void *payload, size_t len, void *arg)
{
    guest_t *g         = arg;
    rdp_run_peers_t *P = g->peers;
    guest_reply_t r    = {.guest = g};
    rdp_ds_who_t who   = {.foreign = 1};
    rdp_ctl_pubsub_t m;
    pmix_status_t status;

    if (cmd == RDP_CTL_XOFFER || cmd == RDP_CTL_XEVENT) {
        /* the channel stays open: its end tells the offer's sender went */
        if (P->offer_fn == NULL
            || P->offer_fn(cmd, payload, len, P->offer_arg) != PMIX_SUCCESS) {
            rdp_run_chan_shutdown(chan);
        }
        return;
    }
    if (cmd != RDP_CTL_PEER_LOOKUP
        || rdp_ctl_pubsub_unpack(payload, len, &m) != PMIX_SUCCESS) {
        rdp_log_warn(RUN, "malformed request from another launcher");
        rdp_run_chan_shutdown(chan);
        return;
    }
    who.proc = m.proc;
    r.id     = m.id;
    status   = m.op == RDP_CTL_LOOKUP
                   ? rdp_ds_lookup(P->ds, &who, m.keys, m.info, m.ninfo,
                                   rdp_time_now(), guest_reply_cb, &r)
                   : PMIX_ERR_BAD_PARAM;
    if (status != PMIX_SUCCESS) {
        guest_reply_cb(status, NULL, 0, &r);
    }
    rdp_ctl_pubsub_cleanup(&m);
    /* one question a connection: close once the answer is written */
    rdp_run_chan_shutdown(chan);
}

static void accept_cb(int fd, int events, void *arg)
{
    rdp_run_peers_t *P = arg;

    for (;;) {
        int s = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        guest_t *g;

        if (s < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                rdp_log_warn(RUN, "accept on %s failed: %m", P->path);
            }
            return;
        }
        if (!same_user(s)) {
            rdp_log_warn(RUN, "refused a connection of another user on %s",
                         P->path);
            close(s);
            continue;
        }
        g = rdp_calloc(1, sizeof(*g));
        if (g == NULL) {
            close(s);
            continue;
        }
        g->peers = P;
        if (rdp_run_chan_create(P->loop, s, PEER_MAX_OFFER, guest_msg_cb,
                                guest_close_cb, g, &g->chan)
            != PMIX_SUCCESS) {
            rdp_free(g);
            continue;
        }
        rdp_list_push_back(&P->guests, &g->link);
    }
}

static pmix_status_t listen_on(rdp_run_peers_t *P, char *why, size_t whylen)
{
    struct sockaddr_un sa;
    size_t len = strlen(P->dir) + strlen(P->name) + 2;

    P->path = rdp_malloc(len);
    if (P->path == NULL) {
        return PMIX_ERR_NOMEM;
    }
    snprintf(P->path, len, "%s/%s", P->dir, P->name);
    if (make_addr(P->path, &sa) != 0) {
        snprintf(why, whylen, "%s is too long for a socket", P->path);
        return PMIX_ERR_BAD_PARAM;
    }
    P->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (P->fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    unlink(P->path); /* left by a dead launcher that had our pid */
    if (bind(P->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || chmod(P->path, 0600) != 0 || listen(P->fd, 64) != 0) {
        snprintf(why, whylen, "cannot listen on %s: %s", P->path,
                 strerror(errno));
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (rdp_fdwatch_create(P->loop, P->fd, RDP_FD_READ, accept_cb, P, &P->watch)
        != PMIX_SUCCESS) {
        snprintf(why, whylen, "cannot watch %s", P->path);
        return PMIX_ERR_NOMEM;
    }
    rdp_fdwatch_enable(P->watch);
    return PMIX_SUCCESS;
}

/* ---- asking other launchers ---- */

/* Connect to the launcher listening at @a path; -1 if it is not there
 * (a dead launcher's socket is removed) or not ours. */
static int connect_peer(const char *path)
{
    struct sockaddr_un sa;
    int fd;

    if (make_addr(path, &sa) != 0) {
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno == ECONNREFUSED) {
            unlink(path);
        }
        close(fd);
        return -1;
    }
    if (!same_user(fd)) {
        rdp_log_warn(RUN, "%s belongs to another user: not asked", path);
        close(fd);
        return -1;
    }
    return fd;
}

/* Put what a lookup returned into the free slots of its keys. */
static void take(xlook_t *x, const pmix_pdata_t *pd, size_t npd)
{
    for (size_t i = 0; i < npd; i++) {
        for (size_t k = 0; k < x->nkeys; k++) {
            if (x->found[k].key[0] == '\0'
                && strncmp(x->keys[k], pd[i].key, PMIX_MAX_KEYLEN) == 0
                && rdp_value_copy(&x->found[k].value, &pd[i].value)
                       == PMIX_SUCCESS) {
                x->found[k].proc = pd[i].proc;
                PMIX_LOAD_KEY(x->found[k].key, x->keys[k]);
                x->nfound++;
                break;
            }
        }
    }
}

static void take_cb(pmix_status_t status, const pmix_pdata_t *pd, size_t npd,
                    void *arg)
{
    if (status == PMIX_SUCCESS) {
        take(arg, pd, npd);
    }
}

/* The keys not found yet (NULL-terminated, borrowed from @a x). */
static char **missing_keys(const xlook_t *x)
{
    char **keys = rdp_calloc(x->nkeys + 1, sizeof(char *));
    size_t n    = 0;

    for (size_t k = 0; keys != NULL && k < x->nkeys; k++) {
        if (x->found[k].key[0] == '\0') {
            keys[n++] = x->keys[k];
        }
    }
    return keys;
}

static void xlook_round_done(rdp_run_peers_t *P, xlook_t *x);

static void question_free(question_t *q)
{
    rdp_list_del(&q->link);
    rdp_run_chan_destroy(q->chan);
    rdp_free(q);
}

/* The question is over (answered or not); the try ends with the last. */
static void question_done(question_t *q)
{
    xlook_t *x = q->x;

    question_free(q);
    if (rdp_list_is_empty(&x->questions)) {
        xlook_round_done(x->peers, x);
    }
}

static void question_msg_cb(rdp_run_chan_t *chan, uint16_t cmd,
                            const void *payload, size_t len, void *arg)
{
    question_t *q    = arg;
    pmix_pdata_t *pd = NULL;
    size_t npd       = 0;
    pmix_status_t status;
    uint32_t id;

    (void)chan;
    if (cmd == RDP_CTL_PUBSUB_REPLY
        && rdp_ctl_pubsub_reply_unpack(payload, len, &id, &status, &pd, &npd)
               == PMIX_SUCCESS) {
        if (status == PMIX_SUCCESS) {
            take(q->x, pd, npd);
        }
        PMIX_PDATA_FREE(pd, npd);
    } else {
        rdp_log_debug(RUN, "a launcher answered a lookup with message %u", cmd);
    }
    question_done(q);
}

static void question_close_cb(rdp_run_chan_t *chan, pmix_status_t why,
                              void *arg)
{
    (void)chan;
    (void)why;
    rdp_log_debug(RUN, "a launcher did not answer a lookup");
    question_done(arg);
}

/* Send the lookup of the keys @a x still misses to the launcher at
 * @a path; its answer comes to question_msg_cb. */
static void ask_peer(xlook_t *x, const char *path, char **keys)
{
    rdp_ctl_pubsub_t req = {.op    = RDP_CTL_LOOKUP,
                            .proc  = x->who.proc,
                            .keys  = keys,
                            .info  = x->info,
                            .ninfo = x->ninfo};
    question_t *q;
    rdp_buf_t buf;
    int fd = connect_peer(path);

    if (fd < 0) {
        return;
    }
    q = rdp_calloc(1, sizeof(*q));
    if (q == NULL) {
        close(fd);
        return;
    }
    q->x = x;
    rdp_list_init(&q->link);
    if (rdp_run_chan_create(x->peers->loop, fd, PEER_MAX_MSG, question_msg_cb,
                            question_close_cb, q, &q->chan)
        != PMIX_SUCCESS) {
        rdp_free(q);
        return;
    }
    rdp_buf_init(&buf);
    if (rdp_ctl_pubsub_pack(&buf, &req) != PMIX_SUCCESS
        || rdp_run_chan_send(q->chan, RDP_CTL_PEER_LOOKUP, &buf)
               != PMIX_SUCCESS) {
        rdp_buf_cleanup(&buf);
        question_free(q);
        return;
    }
    rdp_buf_cleanup(&buf);
    rdp_list_push_back(&x->questions, &q->link);
}

static int is_peer_socket(const rdp_run_peers_t *P, const char *name)
{
    size_t len = strlen(name), slen = strlen(SOCKET_SUFFIX);

    return len > slen && strcmp(name + len - slen, SOCKET_SUFFIX) == 0
           && strcmp(name, P->name) != 0;
}

/* Ask every other launcher in the directory for the keys still missing. */
static void ask_peers(rdp_run_peers_t *P, xlook_t *x)
{
    DIR *d = opendir(P->dir);
    struct dirent *e;
    char path[4096];

    while (d != NULL && x->nfound < x->nkeys && (e = readdir(d)) != NULL) {
        char **keys;

        if (!is_peer_socket(P, e->d_name)) {
            continue;
        }
        keys = missing_keys(x);
        if (keys == NULL) {
            break;
        }
        snprintf(path, sizeof(path), "%s/%s", P->dir, e->d_name);
        ask_peer(x, path, keys);
        rdp_free(keys);
    }
    if (d != NULL) {
        closedir(d);
    }
}

/* ---- GLOBAL lookups ---- */

static void xlook_finish(xlook_t *x, pmix_status_t status)
{
    pmix_pdata_t *pd = rdp_calloc(x->nkeys, sizeof(*pd));
    size_t n         = 0;

    for (size_t k = 0; pd != NULL && k < x->nkeys; k++) {
        if (x->found[k].key[0] != '\0') {
            pd[n++] = x->found[k];
        }
    }
    if (status == PMIX_SUCCESS && (pd == NULL || n == 0)) {
        status = pd == NULL ? PMIX_ERR_NOMEM : PMIX_ERR_NOT_FOUND;
    }
    while (!rdp_list_is_empty(&x->questions)) {
        question_free(rdp_container_of(x->questions.next, question_t, link));
    }
    rdp_list_del(&x->link);
    x->reply_cb(status, status == PMIX_SUCCESS ? pd : NULL,
                status == PMIX_SUCCESS ? n : 0, x->arg);
    rdp_free(pd);
    PMIX_PDATA_FREE(x->found, x->nkeys);
    rdp_ctl_strv_free(x->keys);
    rdp_info_array_free(x->info, x->ninfo);
    rdp_free(x);
}

/* Every question of this try is over: answer, or wait for the next. */
static void xlook_round_done(rdp_run_peers_t *P, xlook_t *x)
{
    if (x->want == 0 || x->nfound >= x->want) {
        xlook_finish(x, PMIX_SUCCESS);
    } else if (x->deadline > 0 && rdp_time_now() >= x->deadline) {
        xlook_finish(x, PMIX_ERR_TIMEOUT);
    } else {
        rdp_timer_start(P->timer, PEER_POLL);
    }
}

/* One try: home first, then the others (answers come on the loop). */
static void xlook_try(rdp_run_peers_t *P, xlook_t *x)
{
    char **keys = missing_keys(x);

    if (keys != NULL && keys[0] != NULL) {
        rdp_ds_lookup(P->ds, &x->who, keys, x->info, x->ninfo, rdp_time_now(),
                      take_cb, x);
    }
    rdp_free(keys);
    ask_peers(P, x);
    x->round_end = rdp_time_now() + PEER_ANSWER_WAIT;
    if (rdp_list_is_empty(&x->questions)) {
        xlook_round_done(P, x);
    } else {
        rdp_timer_start(P->timer, PEER_POLL);
    }
}

/* A try whose questions are not all answered in time gives them up. */
static void xlook_give_up(xlook_t *x)
{
    while (!rdp_list_is_empty(&x->questions)) {
        question_t *q = rdp_container_of(x->questions.next, question_t, link);

        rdp_log_debug(RUN, "a launcher did not answer a lookup in %.1f s",
                      PEER_ANSWER_WAIT);
        question_free(q);
    }
    xlook_round_done(x->peers, x);
}

static void poll_cb(void *arg)
{
    rdp_run_peers_t *P = arg;
    double now         = rdp_time_now();
    xlook_t *x, *tmp;

    rdp_list_for_each_safe(x, tmp, &P->looks, link) {
        if (rdp_list_is_empty(&x->questions)) {
            xlook_try(P, x);
        } else if (now >= x->round_end
                   || (x->deadline > 0 && now >= x->deadline)) {
            xlook_give_up(x);
        }
    }
    if (!rdp_list_is_empty(&P->looks)) {
        rdp_timer_start(P->timer, PEER_POLL);
    }
}

/* The request's directives, less the waiting ones (each try is a lookup
 * that answers at once). */
static pmix_status_t copy_directives(xlook_t *x, const pmix_info_t *info,
                                     size_t ninfo)
{
    size_t n = 0;

    x->info = rdp_calloc(ninfo + 1, sizeof(pmix_info_t));
    if (x->info == NULL) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)
            || PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            continue;
        }
        if (rdp_info_copy(&x->info[n], &info[i]) != PMIX_SUCCESS) {
            x->ninfo = n;
            return PMIX_ERR_NOMEM;
        }
        n++;
    }
    x->ninfo = n;
    return PMIX_SUCCESS;
}

static pmix_status_t xlook_create(const rdp_ds_who_t *who, char *const *keys,
                                  size_t nkeys, const pmix_info_t *info,
                                  size_t ninfo, xlook_t **x_p)
{
    xlook_t *x = rdp_calloc(1, sizeof(*x));

    if (x == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rdp_list_init(&x->link);
    rdp_list_init(&x->questions);
    x->who   = *who;
    x->nkeys = nkeys;
    x->keys  = rdp_calloc(nkeys + 1, sizeof(char *));
    x->found = rdp_calloc(nkeys, sizeof(pmix_pdata_t));
    for (size_t k = 0; x->keys != NULL && k < nkeys; k++) {
        x->keys[k] = rdp_strdup(keys[k]);
        if (x->keys[k] == NULL) {
            break;
        }
    }
    if (x->keys == NULL || x->found == NULL || x->keys[nkeys - 1] == NULL
        || copy_directives(x, info, ninfo) != PMIX_SUCCESS) {
        PMIX_PDATA_FREE(x->found, x->nkeys);
        rdp_ctl_strv_free(x->keys);
        rdp_info_array_free(x->info, x->ninfo);
        rdp_free(x);
        return PMIX_ERR_NOMEM;
    }
    *x_p = x;
    return PMIX_SUCCESS;
}

pmix_status_t rdp_run_peers_lookup(rdp_run_peers_t *P, const rdp_ds_who_t *who,
                                   char *const *keys, const pmix_info_t *info,
                                   size_t ninfo, rdp_ds_reply_cb_t reply_cb,
                                   void *arg)
{
    size_t nkeys = 0, want;
    double timeout;
    int global;
    xlook_t *x;
    pmix_status_t status;

    while (keys != NULL && keys[nkeys] != NULL) {
        nkeys++;
    }
    if (nkeys == 0 || (info == NULL && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    status = rdp_ds_read_wait(info, ninfo, nkeys, &global, &want, &timeout);
    if (status == PMIX_SUCCESS) {
        status = xlook_create(who, keys, nkeys, info, ninfo, &x);
    }
    if (status != PMIX_SUCCESS) {
        return status;
    }
    x->want     = want;
    x->deadline = timeout > 0 ? rdp_time_now() + timeout : 0;
    x->reply_cb = reply_cb;
    x->arg      = arg;
    x->peers    = P;
    rdp_list_push_back(&P->looks, &x->link);
    xlook_try(P, x);
    return PMIX_SUCCESS;
}

void rdp_run_peers_proc_ended(rdp_run_peers_t *P, const pmix_proc_t *proc)
{
    xlook_t *x, *tmp;

    if (P == NULL) {
        return;
    }
    rdp_list_for_each_safe(x, tmp, &P->looks, link) {
        if (PMIX_CHECK_PROCID(&x->who.proc, proc)) {
            xlook_finish(x, PMIX_ERR_LOST_CONNECTION);
        }
    }
}

/* ---- one-way channels (connect across launchers) ---- */

void rdp_run_peers_on_offer(rdp_run_peers_t *P, rdp_run_peers_offer_fn fn,
                            void *arg)
{
    P->offer_fn  = fn;
    P->offer_arg = arg;
}

static void out_msg_cb(rdp_run_chan_t *chan, uint16_t cmd, const void *payload,
                       size_t len, void *arg)
{
    (void)payload;
    (void)len;
    (void)arg;
    rdp_log_warn(RUN, "unexpected message %u from another launcher", cmd);
    rdp_run_chan_shutdown(chan);
}

pmix_status_t rdp_run_peers_open(rdp_run_peers_t *P, long pid,
                                 rdp_run_chan_close_cb_t close_cb, void *arg,
                                 rdp_run_chan_t **chan_p)
{
    char *path;
    size_t len;
    int fd;

    if (P == NULL || pid <= 0) {
        return PMIX_ERR_UNREACH;
    }
    len  = strlen(P->dir) + 32;
    path = rdp_malloc(len);
    if (path == NULL) {
        return PMIX_ERR_NOMEM;
    }
    snprintf(path, len, "%s/%ld%s", P->dir, pid, SOCKET_SUFFIX);
    fd = connect_peer(path);
    rdp_free(path);
    if (fd < 0) {
        return PMIX_ERR_UNREACH;
    }
    return rdp_run_chan_create(P->loop, fd, PEER_MAX_OFFER, out_msg_cb,
                               close_cb, arg, chan_p);
}

/* ---- life ---- */

pmix_status_t rdp_run_peers_create(rdp_loop_t *loop, rdp_ds_t *ds,
                                   const char *dir, char *why, size_t whylen,
                                   rdp_run_peers_t **peers_p)
{
    rdp_run_peers_t *P = rdp_calloc(1, sizeof(*P));
    pmix_status_t status;

    if (P == NULL) {
        snprintf(why, whylen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    P->loop = loop;
    P->ds   = ds;
    P->fd   = -1;
    rdp_list_init(&P->guests);
    rdp_list_init(&P->looks);
    snprintf(P->name, sizeof(P->name), "%d%s", (int)getpid(), SOCKET_SUFFIX);
    P->dir = dir != NULL ? rdp_strdup(dir) : default_dir();
    if (P->dir == NULL) {
        status = PMIX_ERR_NOMEM;
        snprintf(why, whylen, "out of memory");
    } else {
        status = check_dir(P->dir, why, whylen);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_timer_create(loop, poll_cb, P, &P->timer);
    }
    if (status == PMIX_SUCCESS) {
        status = listen_on(P, why, whylen);
    }
    if (status != PMIX_SUCCESS) {
        rdp_run_peers_destroy(P);
        return status;
    }
    *peers_p = P;
    return PMIX_SUCCESS;
}

void rdp_run_peers_destroy(rdp_run_peers_t *P)
{
    xlook_t *x;
    guest_t *g;

    if (P == NULL) {
        return;
    }
    while (!rdp_list_is_empty(&P->looks)) {
        x = rdp_container_of(P->looks.next, xlook_t, link);
        xlook_finish(x, PMIX_ERR_LOST_CONNECTION);
    }
    while (!rdp_list_is_empty(&P->guests)) {
        g = rdp_container_of(P->guests.next, guest_t, link);
        guest_free(g);
    }
    rdp_fdwatch_destroy(P->watch);
    if (P->fd >= 0) {
        close(P->fd);
        unlink(P->path);
    }
    rdp_timer_destroy(P->timer);
    rdp_free(P->path);
    rdp_free(P->dir);
    rdp_free(P);
}
