/* pmix_version.h - PMIx release level and capability flags of rdpmix
 *
 * rdpmix implements the PMIx Standard v4 interface at the ABI level of
 * OpenPMIx 4.2.2 (see docs/design.md), so it reports that release.
 */
#ifndef PMIx_VERSION_H
#define PMIx_VERSION_H

#define PMIX_VERSION_MAJOR   4L
#define PMIX_VERSION_MINOR   2L
#define PMIX_VERSION_RELEASE 2L

/* 0x00MMmmrr: major, minor, release */
#define PMIX_NUMERIC_VERSION 0x00040202

/*
 * Capability flags.  Only the presence of a name matters (its value is
 * irrelevant): a defined PMIX_CAP_<x> promises that behaviour.  We define
 * only what this library really provides at the 4.2.2 interface level.
 * Deliberately absent because the 4.2.2 ABI has no room for them:
 * UPCALLS2 (needs the 256-byte server module), STOP_PRGTHRD,
 * GET_NUMBER_FN, REGEX2, GROUP_FT, CLI_*, IOF_*, TOOL_FINALIZED,
 * GROUP_JOIN_COMPLETES, DEVICE_ENUM, MCA_FW_VERSION, DATA_DELETE.
 */
#define PMIX_CAP_BASE      0
#define PMIX_CAP_LTO       1
#define PMIX_CAP_INMEMHELP 2

/* legacy aggregate for consumers that still test it */
#define PMIX_CAPABILITIES (PMIX_CAP_BASE | PMIX_CAP_LTO | PMIX_CAP_INMEMHELP)

#endif /* PMIx_VERSION_H */
