/* config_table.c - every RDPMIX_* setting in one table, read in one place */
#include "config.h"
#include "core/util/config_table.h"
#include "core/util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef RDP_PNET_CONF_FILE
#define RDP_PNET_CONF_FILE "/etc/rdpmix/pnet.conf"
#endif
#ifndef RDP_PNET_STATE_DIR
#define RDP_PNET_STATE_DIR "/var/lib/rdpmix/pnet"
#endif

/* numbers travel as doubles: exact up to 2^53 */
#define RDP_CFG_NUM_MAX 9007199254740992.0

#define S(id, type, dflt, min, max, help) \
    [RDP_CFG_##id] = {"RDPMIX_" #id, RDP_CFG_##type, dflt, min, max, help}

/* Defaults that modules also hold as numbers (RDP_IPC_DEFAULT_MAX_MSG,
 * RDP_FENCE_SHM_MIN_DEFAULT, RDP_COLL_SEG_BYTES_DEFAULT/_MAX) appear here as
 * text: core/util includes no other layer; test_config checks they agree. */
static const rdp_cfg_setting_t table[RDP_CFG_COUNT] = {
    S(LOG_LEVEL, STRING, NULL, 0, 0,
      "log threshold: none, error, warn, info, debug, trace, data or 0-6 "
      "(unset: warn)"),
    S(LOG_SUBSYS, STRING, NULL, 0, 0,
      "comma-separated subsystems RDPMIX_LOG_LEVEL applies to (unset: all)"),
    S(LOG_FILE, STRING, NULL, 0, 0,
      "file to append log lines to instead of stderr (%p pid, %h host)"),
    S(SYSLOG_SOCKET, STRING, "/dev/log", 0, 0,
      "syslog socket PMIx_Log's syslog channel writes to"),
    S(IPC_MAX_MSG, UINT, "1073741824", 1, UINT32_MAX,
      "largest client/server message accepted, in bytes"),
    S(SHM_MIN, UINT, "65536", 0, RDP_CFG_NUM_MAX,
      "fence data from this many bytes on goes to clients through shared "
      "memory (0: always)"),
    S(FENCE_BOARD, BOOL, "1", 0, 0,
      "a fence over a whole job wakes the job's local clients at once "
      "through shared memory and one eventfd (0: one message each)"),
    S(FENCE_BOARD_CALLER, BOOL, "1", 0, 0,
      "a blocking fence on the board completes in the calling thread when "
      "the board shows its result (0: through the library's thread)"),

    S(FENCE_PREPARE, BOOL, "1", 0, 0,
      "a large collecting fence writes each local rank's part of its "
      "result into shared memory as the rank arrives (0: all at the end)"),
    S(ENGINE_WARMUP, BYTES, "64k", 0, 16777216,
      "bytes each server sends the next one as the engine connects, so that "
      "the transport's buffers exist before the first fence (0: none)"),
    S(COLL_ALG, STRING, "auto", 0, 0,
      "collective algorithm: recursive_doubling, bruck, ring or auto"),
    S(COLL_SEG_BYTES, BYTES, "0", 0, 1073741824,
      "ring blocks are sent in pieces of this size (0: whole blocks)"),
    S(UCX_MODULE, STRING, NULL, 0, 0,
      "path of the UCX engine module (unset: rdpmix_ucx.so beside "
      "libpmix.so.2)"),
    S(UCX_EAGER_MAX, BYTES, NULL, 0, RDP_CFG_NUM_MAX,
      "eager/rendezvous threshold of every engine endpoint (unset: UCX's)"),
    S(UCX_SPIN_US, NUMBER, "200", 0, 1e9,
      "microseconds the engine spins before it sleeps (0: never spins)"),
    S(UCX_REPOLL_US, NUMBER, "50", 0, 1e9,
      "microseconds a chain of collectives, each started as the last one "
      "ended, polls on without a loop pass between (0: one poll again)"),
    S(UCX_BUSY_US, NUMBER, "0", 0, 1e9,
      "microseconds the engine busy-polls, without yielding, after activity "
      "while a collective is in flight (0: never; opt-in)"),
    S(UCX_WIDE_GHASH, BOOL, "1", 0, 0,
      "seals' MACs use the engine's own GHASH where the CPU has VPCLMULQDQ "
      "and AVX-512 (0: libcrypto's)"),
    S(UCX_FAST_GMAC, BOOL, "1", 0, 0,
      "MACs over at most 512 bytes use the engine's own AES-NI/PCLMULQDQ "
      "GMAC where the CPU has them (0: libcrypto's)"),
    S(UCX_LOCAL_ZCOPY, STRING, "auto", 0, 0,
      "endpoints to servers on this machine, whose processes the engine "
      "watches, leave failure detection to that watch and get UCX's "
      "zero-copy rendezvous for payloads over 512 KiB: 1, 0 (UCX peer "
      "error handling everywhere) or auto (1 unless this machine's "
      "servers outnumber its CPUs, the default); the same on every server"),
    S(TRUSTED_NETWORK, BOOL, "0", 0, 0,
      "the site trusts the network between servers: collective payloads "
      "travel without a MAC"),
    S(PNET, STRING, NULL, 0, 0,
      "fabric credential modules (list, ^list or none; unset: every usable "
      "one)"),
    S(PNET_CONF, STRING, RDP_PNET_CONF_FILE, 0, 0,
      "the pnet pools' configuration file"),
    S(PNET_STATE_DIR, STRING, RDP_PNET_STATE_DIR, 0, 0,
      "directory of the pnet pools' allocation state"),
    S(PNET_SIMPTEST_FAIL, STRING, NULL, 0, 0,
      "tests only: the simptest pnet module step that fails"),
    S(PNET_IB_TOPOLOGY, STRING, NULL, 0, 0,
      "hwloc XML file of this node's CPUs and HCAs for the ib pnet module's "
      "UCX_NET_DEVICES (unset: ib_topology in pnet.conf, else discovered)"),
    S(LIBDIR, STRING, NULL, 0, 0,
      "directory of the libpmix.so.2 ranks load (unset: this build's)"),
    S(DAEMON, STRING, NULL, 0, 0,
      "path of rdpmixd the launcher starts (unset: beside rdpmix-run)"),
    S(NODE_UTS, BOOL, "1", 0, 0,
      "give each simulated node its host name in a UTS namespace"),
    S(PEER_DIR, STRING, NULL, 0, 0,
      "directory of the launchers' rendezvous sockets (unset: "
      "$XDG_RUNTIME_DIR/rdpmix or /tmp/rdpmix-UID)"),
    S(CTL_IF, STRING, NULL, 0, 0,
      "interfaces or subnets remote daemons reach rdpmix-run on (--ctl-if)"),
    S(LAUNCH_AGENT, STRING, "ssh", 0, 0,
      "command that runs a daemon on a host (--launch-agent)"),
    S(STARTUP_TIMEOUT, SECONDS, "60", 0, 1e6, "seconds the job has to start"),
    S(KILL_GRACE, SECONDS, "3", 0, 1e6,
      "seconds between SIGTERM and SIGKILL when ranks are stopped"),
    S(SHUTDOWN_WARN, SECONDS, "8", 0, 1e6,
      "seconds a daemon waits for its ranks before it says so"),
    S(GROUP_OPEN_DELAY, SECONDS, "0.05", 0, 1e6,
      "seconds a group construct/destruct runs before its server announces "
      "it to the other servers (0: at once)"),
    S(TOPO_XML, BOOL, "1", 0, 0,
      "rdpmixd gives Open MPI's ranks its node's topology as hwloc XML "
      "(2 or more ranks on the node)"),
    S(OMPI_SKIP_MTL, BOOL, "1", 0, 0,
      "Open MPI's ranks on a node with no fabric device get "
      "OMPI_MCA_mtl=^psm,psm2,ofi unless an MTL or PML was chosen"),
};
#undef S

static const char *const type_names[] = {
    [RDP_CFG_STRING] = "string",   [RDP_CFG_BOOL] = "bool",
    [RDP_CFG_UINT] = "uint",       [RDP_CFG_BYTES] = "bytes",
    [RDP_CFG_SECONDS] = "seconds", [RDP_CFG_NUMBER] = "number",
};

const rdp_cfg_setting_t *rdp_cfg_setting(rdp_cfg_id_t id)
{
    if ((unsigned)id >= RDP_CFG_COUNT) {
        return NULL;
    }
    return &table[id];
}

const rdp_cfg_setting_t *rdp_cfg_find(const char *name, rdp_cfg_id_t *id_p)
{
    for (unsigned i = 0; name != NULL && i < RDP_CFG_COUNT; i++) {
        if (strcmp(table[i].name, name) == 0) {
            if (id_p != NULL) {
                *id_p = (rdp_cfg_id_t)i;
            }
            return &table[i];
        }
    }
    return NULL;
}

const char *rdp_cfg_type_name(rdp_cfg_type_t type)
{
    if ((unsigned)type >= sizeof(type_names) / sizeof(type_names[0])) {
        return "?";
    }
    return type_names[type];
}

/* the one place RDPMIX_* settings are read from the environment */
const char *rdp_cfg_env(rdp_cfg_id_t id)
{
    const char *v;

    if ((unsigned)id >= RDP_CFG_COUNT) {
        return NULL;
    }
    v = getenv(table[id].name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

const char *rdp_cfg_string(rdp_cfg_id_t id)
{
    const char *v = rdp_cfg_env(id);

    if (v == NULL && (unsigned)id < RDP_CFG_COUNT) {
        v = table[id].dflt;
    }
    return v;
}

const char *rdp_cfg_source(rdp_cfg_id_t id)
{
    return rdp_cfg_env(id) != NULL ? "environment" : "default";
}

static bool parse_bool(const char *s, double *v_p)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[]  = {"0", "no", "false", "off"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *v_p = 1;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *v_p = 0;
            return true;
        }
    }
    return false;
}

/* decimal digits only, then an optional k/K or m/M multiplier */
static bool parse_bytes(const char *s, double max, double *v_p)
{
    unsigned long long v, mult = 1;
    char *end;

    if (s[0] < '0' || s[0] > '9') {
        return false;
    }
    errno = 0;
    v     = strtoull(s, &end, 10);
    if (errno != 0) {
        return false;
    }
    if (*end == 'k' || *end == 'K') {
        mult = 1024u;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        mult = 1024u * 1024u;
        end++;
    }
    if (*end != '\0' || (double)v > max / (double)mult) {
        return false;
    }
    *v_p = (double)(v * mult);
    return true;
}

/* any C unsigned constant (decimal, 0x hex, 0 octal) */
static bool parse_uint(const char *s, double min, double max, double *v_p)
{
    unsigned long long v;
    char *end;

    if (s[0] < '0' || s[0] > '9') {
        return false;
    }
    errno = 0;
    v     = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || (double)v < min || (double)v > max) {
        return false;
    }
    *v_p = (double)v;
    return true;
}

static bool parse_number(const char *s, double min, double max, double *v_p)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end != '\0' || !(v >= min) || v > max) {
        return false;
    }
    *v_p = v;
    return true;
}

static const char *expects(const rdp_cfg_setting_t *st, char *buf, size_t len)
{
    switch (st->type) {
    case RDP_CFG_BOOL:
        return "a boolean (1/0, yes/no, true/false, on/off)";
    case RDP_CFG_UINT:
        snprintf(buf, len, "an integer from %.0f to %.0f", st->min, st->max);
        return buf;
    case RDP_CFG_BYTES:
        snprintf(buf, len,
                 "a byte count from %.0f to %.0f (suffixes k and m allowed)",
                 st->min, st->max);
        return buf;
    case RDP_CFG_SECONDS:
        snprintf(buf, len, "a number of seconds from %g to %g", st->min,
                 st->max);
        return buf;
    case RDP_CFG_NUMBER:
        snprintf(buf, len, "a number from %g to %g", st->min, st->max);
        return buf;
    case RDP_CFG_STRING:
    default:
        return "not a number";
    }
}

pmix_status_t rdp_cfg_parse(rdp_cfg_id_t id, const char *text, double *v_p,
                            char *why, size_t why_len)
{
    const rdp_cfg_setting_t *st = rdp_cfg_setting(id);
    char range[128];
    bool ok = false;

    if (st == NULL || text == NULL) {
        snprintf(why, why_len, "no such setting or no text");
        return PMIX_ERR_BAD_PARAM;
    }
    switch (st->type) {
    case RDP_CFG_BOOL:
        ok = parse_bool(text, v_p);
        break;
    case RDP_CFG_UINT:
        ok = parse_uint(text, st->min, st->max, v_p);
        break;
    case RDP_CFG_BYTES:
        ok = parse_bytes(text, st->max, v_p);
        break;
    case RDP_CFG_SECONDS:
    case RDP_CFG_NUMBER:
        ok = parse_number(text, st->min, st->max, v_p);
        break;
    case RDP_CFG_STRING:
        break;
    }
    if (!ok) {
        snprintf(why, why_len, "%s: \"%s\" is not %s", st->name, text,
                 expects(st, range, sizeof(range)));
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

/* the default of a numeric setting (it parses: test_config checks) */
static double default_number(const rdp_cfg_setting_t *st, rdp_cfg_id_t id)
{
    char why[256];
    double v = 0;

    if (st->dflt != NULL) {
        (void)rdp_cfg_parse(id, st->dflt, &v, why, sizeof(why));
    }
    return v;
}

pmix_status_t rdp_cfg_double(rdp_cfg_id_t id, double *v_p)
{
    const rdp_cfg_setting_t *st = rdp_cfg_setting(id);
    const char *text            = rdp_cfg_env(id);
    char why[256];

    if (st == NULL) {
        *v_p = 0;
        return PMIX_ERR_BAD_PARAM;
    }
    if (text == NULL) {
        *v_p = default_number(st, id);
        return PMIX_SUCCESS;
    }
    if (rdp_cfg_parse(id, text, v_p, why, sizeof(why)) != PMIX_SUCCESS) {
        rdp_log_error(CORE, "%s (the default is %s)", why,
                      st->dflt != NULL ? st->dflt : "none");
        *v_p = default_number(st, id);
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_cfg_uint(rdp_cfg_id_t id, uint64_t *v_p)
{
    double v;
    pmix_status_t status = rdp_cfg_double(id, &v);

    *v_p = (uint64_t)v;
    return status;
}

double rdp_cfg_seconds(rdp_cfg_id_t id)
{
    double v;

    (void)rdp_cfg_double(id, &v);
    return v;
}

bool rdp_cfg_bool(rdp_cfg_id_t id)
{
    double v;

    (void)rdp_cfg_double(id, &v);
    return v != 0;
}
