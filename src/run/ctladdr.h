/* ctladdr.h - addresses of rdpmix-run's control listener, and reaching it */
#ifndef RDP_RUN_CTLADDR_H
#define RDP_RUN_CTLADDR_H

#include <pmix_common.h>

#include <netinet/in.h>
#include <stddef.h>

/*
 * Daemons on other hosts reach rdpmix-run at one of its addresses.  It
 * offers every IPv4 address of this machine's interfaces that are up
 * (loopback only if nothing else is there, or if the filter asks for it),
 * and each daemon tries them in turn.  A filter (--ctl-if,
 * RDPMIX_CTL_IF) restricts them: a comma-separated list of interface
 * names and IPv4 subnets ("eth0", "10.1.0.0/16", "192.168.1.7").
 */

/** 0 if @a filter is well formed; else -1 and @a err says why. */
int rdp_run_ctl_filter_check(const char *filter, char *err, size_t errlen);

/** 1 if an interface @a ifname with address @a addr (network order)
 * matches @a filter (NULL matches everything but loopback). */
int rdp_run_ctl_filter_match(const char *filter, const char *ifname,
                             struct in_addr addr, int loopback);

/**
 * This machine's IPv4 addresses that @a filter lets through, in the
 * order of its interfaces, without duplicates.  *addrs_p is malloc'ed;
 * *n_p may be 0.  PMIX_ERR_NOMEM, or PMIX_ERR_IN_ERRNO if the interfaces
 * cannot be read.
 */
pmix_status_t rdp_run_ctl_local_addrs(const char *filter,
                                      struct in_addr **addrs_p, size_t *n_p);

/**
 * Connect to the first of "HOST:PORT,HOST:PORT,..." (IPv6 literals in
 * brackets) that accepts, each attempt bounded by @a timeout seconds.
 * Returns a connected, blocking, close-on-exec socket; or -1 with @a err
 * listing what every address gave.
 */
int rdp_run_ctl_connect(const char *spec, double timeout, char *err,
                        size_t errlen);

#endif
