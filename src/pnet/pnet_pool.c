/* pnet_pool.c - numbered resources (pkeys, VNIs, ports) handed to live jobs */
#include "config.h"
#include "pnet/pnet_int.h"
#include "core/util/alloc.h"
#include "core/util/config_table.h"
#include "core/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * One state file per pool, <state dir>/<pool>.state, one line per value
 * in use: "<value> <nspace> <owner pid> <owner start time>".  Every change
 * holds flock(LOCK_EX) on the file from read to write, so concurrent
 * launches (processes) never hand out the same value, and the file
 * outlives a launcher restart.  The owner is the process that took the
 * values; when it is gone (its pid no longer runs the same process: the
 * start time tells a reused pid apart), its values are free again, so a
 * crashed launcher's job gives its values back at the next take.
 */

#define LINE_MAX_LEN (32 + PMIX_MAX_NSLEN + 64)

typedef struct entry {
    uint32_t value;
    char nspace[PMIX_MAX_NSLEN + 1];
    long pid;
    unsigned long long start;
} entry_t;

typedef struct state {
    entry_t *e;
    size_t n, cap;
} state_t;

const char *rdp_pnet_state_dir(void)
{
    return rdp_cfg_string(RDP_CFG_PNET_STATE_DIR);
}

/* The start time of @a pid (clock ticks since boot), 0 if it is gone */
static unsigned long long start_time_of(long pid)
{
    char path[64], buf[1024], *p;
    unsigned long long start = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL) {
        /* after "pid (comm)": state is field 3, starttime field 22 */
        int field = 2;

        for (char *tok = strtok(p + 1, " "); tok != NULL;
             tok       = strtok(NULL, " ")) {
            if (++field == 22) {
                start = strtoull(tok, NULL, 10);
                break;
            }
        }
    }
    fclose(f);
    return start;
}

static bool owner_alive(const entry_t *e)
{
    if (kill((pid_t)e->pid, 0) != 0 && errno == ESRCH) {
        return false;
    }
    return start_time_of(e->pid) == e->start;
}

static pmix_status_t state_add(state_t *st, const entry_t *e)
{
    if (st->n == st->cap) {
        size_t cap   = st->cap ? 2 * st->cap : 16;
        entry_t *tmp = rdp_realloc(st->e, cap * sizeof(*tmp));

        if (tmp == NULL) {
            return PMIX_ERR_NOMEM;
        }
        st->e   = tmp;
        st->cap = cap;
    }
    st->e[st->n++] = *e;
    return PMIX_SUCCESS;
}

/* Read the live entries of the locked file @a fd (dead owners dropped) */
static pmix_status_t state_read(int fd, state_t *st)
{
    char line[LINE_MAX_LEN];
    pmix_status_t status = PMIX_SUCCESS;
    FILE *f;
    int dupfd = dup(fd);

    if (dupfd < 0 || (f = fdopen(dupfd, "r")) == NULL) {
        if (dupfd >= 0) {
            close(dupfd);
        }
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    rewind(f);
    while (status == PMIX_SUCCESS && fgets(line, sizeof(line), f) != NULL) {
        entry_t e = {0};

        if (sscanf(line, "%" SCNu32 " %255s %ld %llu", &e.value, e.nspace,
                   &e.pid, &e.start)
            != 4) {
            continue; /* a torn or foreign line: not ours to keep */
        }
        if (owner_alive(&e)) {
            status = state_add(st, &e);
        }
    }
    fclose(f);
    return status;
}

static pmix_status_t state_write(int fd, const state_t *st)
{
    char line[LINE_MAX_LEN];
    off_t off = 0;

    for (size_t i = 0; i < st->n; i++) {
        int len = snprintf(line, sizeof(line), "%" PRIu32 " %s %ld %llu\n",
                           st->e[i].value, st->e[i].nspace, st->e[i].pid,
                           st->e[i].start);

        if (pwrite(fd, line, (size_t)len, off) != len) {
            rdp_log_error(PNET, "cannot write a pool state file: %m");
            return PMIX_ERR_FILE_WRITE_FAILURE;
        }
        off += len;
    }
    if (ftruncate(fd, off) != 0 || fsync(fd) != 0) {
        rdp_log_error(PNET, "cannot write a pool state file: %m");
        return PMIX_ERR_FILE_WRITE_FAILURE;
    }
    return PMIX_SUCCESS;
}

/* mkdir -p, the new directories private to their owner */
static int mkdir_p(const char *dir)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s", dir);
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    return (mkdir(path, 0700) != 0 && errno != EEXIST) ? -1 : 0;
}

/* Open and lock @a pool's state file; -1 (logged) on failure */
static int pool_lock(const char *pool)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/%s.state", rdp_pnet_state_dir(), pool);
    if (mkdir_p(rdp_pnet_state_dir()) != 0) {
        rdp_log_error(PNET, "cannot create %s: %m", rdp_pnet_state_dir());
        return -1;
    }
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rdp_log_error(PNET, "cannot open %s: %m", path);
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            rdp_log_error(PNET, "cannot lock %s: %m", path);
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void pool_unlock(int fd)
{
    (void)flock(fd, LOCK_UN);
    close(fd);
}

static bool in_use(const state_t *st, uint32_t v)
{
    for (size_t i = 0; i < st->n; i++) {
        if (st->e[i].value == v) {
            return true;
        }
    }
    return false;
}

/* Add @a count free values of [lo, hi] for @a nspace to @a st, into
 * @a values; PMIX_ERR_OUT_OF_RESOURCE (nothing added) if too few are free */
static pmix_status_t take_free(state_t *st, uint32_t lo, uint32_t hi,
                               const char *nspace, size_t count,
                               uint32_t *values)
{
    entry_t e  = {.pid = (long)getpid()};
    size_t got = 0, n0 = st->n;
    pmix_status_t status = PMIX_SUCCESS;

    e.start = start_time_of(e.pid);
    snprintf(e.nspace, sizeof(e.nspace), "%s", nspace);
    for (uint64_t v = lo; v <= hi && got < count && status == PMIX_SUCCESS;
         v++) {
        if (!in_use(st, (uint32_t)v)) {
            e.value       = (uint32_t)v;
            values[got++] = (uint32_t)v;
            status        = state_add(st, &e);
        }
    }
    if (status == PMIX_SUCCESS && got < count) {
        status = PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (status != PMIX_SUCCESS) {
        st->n = n0;
    }
    return status;
}

pmix_status_t rdp_pnet_pool_take(const char *pool, uint32_t lo, uint32_t hi,
                                 const char *nspace, size_t count,
                                 uint32_t *values)
{
    state_t st = {0};
    pmix_status_t status;
    int fd = pool_lock(pool);

    if (fd < 0) {
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    status = state_read(fd, &st);
    if (status == PMIX_SUCCESS) {
        status = take_free(&st, lo, hi, nspace, count, values);
        if (status == PMIX_ERR_OUT_OF_RESOURCE) {
            rdp_log_error(PNET,
                          "%s: pool %s is exhausted: %zu wanted, range "
                          "%" PRIu32 "-%" PRIu32 " has %zu in use",
                          nspace, pool, count, lo, hi, st.n);
        }
    }
    if (status == PMIX_SUCCESS) {
        status = state_write(fd, &st);
    }
    pool_unlock(fd);
    rdp_free(st.e);
    return status;
}

void rdp_pnet_pool_give_back(const char *pool, const char *nspace)
{
    state_t st = {0};
    size_t k   = 0;
    int fd     = pool_lock(pool);

    if (fd < 0) {
        return;
    }
    if (state_read(fd, &st) == PMIX_SUCCESS) {
        for (size_t i = 0; i < st.n; i++) {
            if (strcmp(st.e[i].nspace, nspace) != 0) {
                st.e[k++] = st.e[i];
            }
        }
        st.n = k;
        (void)state_write(fd, &st);
    }
    pool_unlock(fd);
    rdp_free(st.e);
}

size_t rdp_pnet_pool_in_use(const char *pool)
{
    state_t st = {0};
    size_t n   = 0;
    int fd     = pool_lock(pool);

    if (fd < 0) {
        return 0;
    }
    if (state_read(fd, &st) == PMIX_SUCCESS) {
        n = st.n;
    }
    pool_unlock(fd);
    rdp_free(st.e);
    return n;
}
