/* ctladdr.c - addresses of rdpmix-run's control listener, and reaching it */
#include "config.h"
#include "run/ctladdr.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* One filter entry: a subnet (@a is_net) or an interface name. */
typedef struct filter_entry {
    int is_net;
    struct in_addr net; /* network order */
    uint32_t mask;      /* host order */
    char name[IF_NAMESIZE + 1];
} filter_entry_t;

/* Parse the entry of @a len bytes at @a s; 0 or -1. */
static int entry_parse(const char *s, size_t len, filter_entry_t *e)
{
    char buf[64];
    char *slash;
    unsigned long bits = 32;

    if (len == 0 || len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(e, 0, sizeof(*e));
    if (buf[0] < '0' || buf[0] > '9') {
        /* an interface name */
        if (len > IF_NAMESIZE - 1 || strpbrk(buf, " /") != NULL) {
            return -1;
        }
        memcpy(e->name, buf, len + 1);
        return 0;
    }
    slash = strchr(buf, '/');
    if (slash != NULL) {
        char *end;

        *slash = '\0';
        errno  = 0;
        bits   = strtoul(slash + 1, &end, 10);
        if (slash[1] == '\0' || *end != '\0' || errno != 0 || bits > 32) {
            return -1;
        }
    }
    if (inet_pton(AF_INET, buf, &e->net) != 1) {
        return -1;
    }
    e->is_net = 1;
    e->mask   = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    return 0;
}

int rdp_run_ctl_filter_check(const char *filter, char *err, size_t errlen)
{
    const char *p = filter;
    filter_entry_t e;

    if (filter == NULL || filter[0] == '\0') {
        snprintf(err, errlen, "an empty interface list");
        return -1;
    }
    for (;;) {
        size_t len = strcspn(p, ",");

        if (entry_parse(p, len, &e) != 0) {
            snprintf(err, errlen,
                     "'%.*s' is neither an interface name nor an IPv4 "
                     "address or subnet (a.b.c.d/n)",
                     (int)len, p);
            return -1;
        }
        if (p[len] == '\0') {
            return 0;
        }
        p += len + 1;
    }
}

int rdp_run_ctl_filter_match(const char *filter, const char *ifname,
                             struct in_addr addr, int loopback)
{
    const char *p = filter;
    filter_entry_t e;

    if (filter == NULL) {
        return !loopback;
    }
    for (;;) {
        size_t len = strcspn(p, ",");

        if (entry_parse(p, len, &e) == 0) {
            if (e.is_net) {
                if (((ntohl(addr.s_addr) ^ ntohl(e.net.s_addr)) & e.mask)
                    == 0) {
                    return 1;
                }
            } else if (ifname != NULL && strcmp(e.name, ifname) == 0) {
                return 1;
            }
        }
        if (p[len] == '\0') {
            return 0;
        }
        p += len + 1;
    }
}

static int addr_listed(const struct in_addr *v, size_t n, struct in_addr a)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].s_addr == a.s_addr) {
            return 1;
        }
    }
    return 0;
}

pmix_status_t rdp_run_ctl_local_addrs(const char *filter,
                                      struct in_addr **addrs_p, size_t *n_p)
{
    struct ifaddrs *ifs, *ifa;
    struct in_addr *v;
    size_t n = 0, cap = 0;

    if (getifaddrs(&ifs) != 0) {
        rdp_log_error(RUN, "cannot list the network interfaces: %m");
        return PMIX_ERR_IN_ERRNO;
    }
    for (ifa = ifs; ifa != NULL; ifa = ifa->ifa_next) {
        cap++;
    }
    v = rdp_calloc(cap + 1, sizeof(*v));
    if (v == NULL) {
        freeifaddrs(ifs);
        return PMIX_ERR_NOMEM;
    }
    /* without a filter, loopback only if there is nothing else */
    for (int pass = 0; pass < 2 && n == 0; pass++) {
        for (ifa = ifs; ifa != NULL; ifa = ifa->ifa_next) {
            struct in_addr a;
            int lo;

            if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET
                || !(ifa->ifa_flags & IFF_UP)) {
                continue;
            }
            a  = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
            lo = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
            if (pass == 0
                    ? !rdp_run_ctl_filter_match(filter, ifa->ifa_name, a, lo)
                    : (filter != NULL || !lo)) {
                continue;
            }
            if (!addr_listed(v, n, a)) {
                v[n++] = a;
            }
        }
    }
    freeifaddrs(ifs);
    *addrs_p = v;
    *n_p     = n;
    return PMIX_SUCCESS;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One nonblocking connect bounded by @a timeout; the fd or -1 (errno). */
static int connect_one(const struct addrinfo *ai, double timeout)
{
    double deadline = now() + timeout;
    int fd, flags, soerr = 0;
    socklen_t slen = sizeof(soerr);

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                ai->ai_protocol);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            goto err_close;
        }
        for (;;) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            double left       = deadline - now();
            int rc;

            if (left <= 0) {
                errno = ETIMEDOUT;
                goto err_close;
            }
            rc = poll(&pfd, 1, (int)(left * 1000) + 1);
            if (rc > 0) {
                break;
            }
            if (rc < 0 && errno != EINTR) {
                goto err_close;
            }
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen) != 0) {
            goto err_close;
        }
        if (soerr != 0) {
            errno = soerr;
            goto err_close;
        }
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        goto err_close;
    }
    return fd;

err_close : {
    int saved = errno;

    close(fd);
    errno = saved;
}
    return -1;
}

/* append "; what" to @a err */
static void err_add(char *err, size_t errlen, const char *entry, size_t elen,
                    const char *what)
{
    size_t used = strlen(err);

    if (used < errlen) {
        snprintf(err + used, errlen - used, "%s%.*s: %s", used > 0 ? "; " : "",
                 (int)elen, entry, what);
    }
}

int rdp_run_ctl_connect(const char *spec, double timeout, char *err,
                        size_t errlen)
{
    const char *p = spec;

    if (errlen > 0) {
        err[0] = '\0';
    }
    if (spec == NULL || spec[0] == '\0') {
        snprintf(err, errlen, "no address");
        return -1;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        char host[256];
        const char *colon = NULL;
        struct addrinfo hints, *res = NULL, *ai;
        int rc, fd                  = -1;
        char what[128];

        for (size_t i = len; i-- > 0;) {
            if (p[i] == ':') {
                colon = p + i;
                break;
            }
        }
        if (colon == NULL || colon == p || (size_t)(colon - p) >= sizeof(host)
            || colon + 1 == p + len) {
            err_add(err, errlen, p, len, "not HOST:PORT");
        } else {
            char port[16];
            size_t hlen = (size_t)(colon - p);
            size_t plen = len - hlen - 1;

            memcpy(host, p, hlen);
            host[hlen] = '\0';
            if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
                memmove(host, host + 1, hlen - 2);
                host[hlen - 2] = '\0';
            }
            snprintf(port, sizeof(port), "%.*s",
                     (int)(plen < sizeof(port) - 1 ? plen : sizeof(port) - 1),
                     colon + 1);
            memset(&hints, 0, sizeof(hints));
            hints.ai_family   = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            rc                = getaddrinfo(host, port, &hints, &res);
            if (rc != 0) {
                err_add(err, errlen, p, len, gai_strerror(rc));
            }
            for (ai = res; rc == 0 && ai != NULL && fd < 0; ai = ai->ai_next) {
                fd = connect_one(ai, timeout);
                if (fd < 0) {
                    if (errno == ETIMEDOUT) {
                        snprintf(what, sizeof(what), "no answer within %g s",
                                 timeout);
                    } else {
                        snprintf(what, sizeof(what), "%s", strerror(errno));
                    }
                    err_add(err, errlen, p, len, what);
                }
            }
            if (res != NULL) {
                freeaddrinfo(res);
            }
            if (fd >= 0) {
                return fd;
            }
        }
        if (p[len] == '\0') {
            return -1;
        }
        p += len + 1;
    }
}
