/* trust.h - which trust mode this machine's settings give (rdpmix-info) */
#ifndef RDP_CORE_SERVER_TRUST_H
#define RDP_CORE_SERVER_TRUST_H

#include <stddef.h>

/* How a job's collective payloads travel between servers ("trust follows
 * the fabric", docs/design.md); headers and control data are always
 * authenticated. */
enum rdp_trust_mode {
    RDP_TRUST_FULL,     /* every payload authenticated */
    RDP_TRUST_ISOLATED, /* open for a job a selected pnet module isolates */
    RDP_TRUST_TRUSTED,  /* open for every job: RDPMIX_TRUSTED_NETWORK=1 */
};

/**
 * The trust mode this machine's settings give a job that rdpmix-run (or a
 * host through rdpmix's pnet) sets up: RDPMIX_TRUSTED_NETWORK, else the
 * pnet modules selected now (rdp_pnet_select was called).  For
 * RDP_TRUST_ISOLATED, the isolating modules' names (comma-separated) are
 * written to @a mods (truncated to @a len; "" otherwise).  A host may
 * still mark a job isolated itself (RDPMIX_FABRIC_ISOLATED).
 */
enum rdp_trust_mode rdp_srv_trust_mode(char *mods, size_t len);

/** "full", "isolated by pnet" or "trusted network". */
const char *rdp_srv_trust_mode_name(enum rdp_trust_mode mode);

#endif
