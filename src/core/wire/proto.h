/* proto.h - client<->server commands and payload layouts */
#ifndef RDP_CORE_WIRE_PROTO_H
#define RDP_CORE_WIRE_PROTO_H

#include <pmix_common.h>

#include <endian.h>
#include <string.h>

#include "core/wire/wire.h"

/*
 * Every message is an rdp_msg_hdr_t plus a payload packed with wire.h.
 * A request carries a non-zero tag chosen by the client; the reply (the
 * *_ACK command) echoes it.  Server-initiated messages have tag 0.
 * Replies always begin with an i32 pmix_status_t; on error nothing else
 * follows.  Notation: str = string, procs = proc array, infos = info array,
 * strs = u32 count + that many str.
 *
 * "bundle": the one format in which the server hands data to a client
 * (job info at connect, fetched data, fence results):
 *   bundle  := u32 nsets, nsets x set
 *   set     := str nspace, u32 nsections, nsections x section
 *   section := u8 kind (enum rdp_sect_kind), u32 id, str name,
 *              u64 kvlen, kvlen bytes of kv list
 *   kv list := u32 nkv, nkv x (u8 scope, str key, value)
 *   (the kv list is exactly what rdp_kvs_pack_rank writes; kvlen lets a
 *   reader keep or skip a section without parsing its values)
 * A PROC section with nkv == 0 says "this rank exists/committed nothing".
 * A PROC section carries every key the server holds of the rank that the
 * client may see, and the server never forgets a key of a live rank: a
 * newer section of a rank holds every key of an older one (the client
 * drops the older section unread).
 */
enum rdp_sect_kind {
    RDP_SECT_JOB  = 0, /* id unused (PMIX_RANK_WILDCARD); job-level keys */
    RDP_SECT_APP  = 1, /* id = appnum; app-level keys */
    RDP_SECT_NODE = 2, /* id = nodeid, name = hostname; node-level keys */
    RDP_SECT_PROC = 3  /* id = rank; that rank's keys */
};

enum rdp_cmd {
    RDP_CMD_INVALID = 0,

    /* str nspace, u32 rank, u32 pid, str token (may be NULL), infos
     * (the client's init info)   ->  status, bundle (its job's info) */
    RDP_CMD_CONNECT     = 1,
    RDP_CMD_CONNECT_ACK = 2,

    /* (empty)  ->  status.  The server then closes the connection. */
    RDP_CMD_FINALIZE     = 3,
    RDP_CMD_FINALIZE_ACK = 4,

    /* i32 status, str message (may be NULL), procs  ->  status */
    RDP_CMD_ABORT     = 5,
    RDP_CMD_ABORT_ACK = 6,

    /* u32 nkv, nkv x (u8 scope, str key, value).  No reply: the stream
     * is ordered, so a later fence or get sees the data. */
    RDP_CMD_COMMIT = 7,

    /* procs (never empty: the client expands NULL to its own nspace with
     * PMIX_RANK_WILDCARD), infos  ->  status, u8 has_bundle
     * (enum rdp_fence_bundle), then for INLINE the bundle, for MEMFD a
     * u64 size: the bundle is in a sealed memfd of at least that many
     * bytes passed with this message (SCM_RIGHTS).  The bundle holds a
     * PROC section for every participant that committed data, when
     * PMIX_COLLECT_DATA was true.  A client that opened the fence board
     * (FENCE_BOARD) adds to a fence over its whole nspace u64 n (how many
     * such fences the server counted for it before) and u64 done (how
     * many of those have completed for it); the server may then answer it through the
     * board instead of a FENCE_ACK (core/ipc/bcast.h). */
    RDP_CMD_FENCE     = 8,
    RDP_CMD_FENCE_ACK = 9,

    /* str nspace, u32 rank, str key (may be NULL), infos
     * ->  status, bundle (all keys of that rank visible to the client, or
     *     the job info of that nspace for rank WILDCARD / unknown nspace) */
    RDP_CMD_GET     = 10,
    RDP_CMD_GET_ACK = 11,

    /* i32 status, proc source, u8 range, infos  ->  status */
    RDP_CMD_NOTIFY     = 12,
    RDP_CMD_NOTIFY_ACK = 13,
    /* server -> client, tag 0: i32 status, proc source, infos */
    RDP_CMD_EVENT = 14,

    /* procs targets, infos  ->  status, infos (results) */
    RDP_CMD_JOB_CONTROL     = 15,
    RDP_CMD_JOB_CONTROL_ACK = 16,

    /* infos (data + directives)  ->  status */
    RDP_CMD_PUBLISH     = 17,
    RDP_CMD_PUBLISH_ACK = 18,
    /* strs keys, infos  ->  status, pdata array */
    RDP_CMD_LOOKUP     = 19,
    RDP_CMD_LOOKUP_ACK = 20,
    /* strs keys, infos  ->  status */
    RDP_CMD_UNPUBLISH     = 21,
    RDP_CMD_UNPUBLISH_ACK = 22,

    /* infos job_info, app array  ->  status, str nspace */
    RDP_CMD_SPAWN     = 23,
    RDP_CMD_SPAWN_ACK = 24,

    /* procs, infos  ->  status */
    RDP_CMD_CONNECT_PROCS        = 25,
    RDP_CMD_CONNECT_PROCS_ACK    = 26,
    RDP_CMD_DISCONNECT_PROCS     = 27,
    RDP_CMD_DISCONNECT_PROCS_ACK = 28,

    /* query array  ->  status, infos */
    RDP_CMD_QUERY     = 29,
    RDP_CMD_QUERY_ACK = 30,

    /* infos data, infos directives  ->  status */
    RDP_CMD_LOG     = 31,
    RDP_CMD_LOG_ACK = 32,

    /* infos monitor (exactly one), i32 error, infos directives
     *   ->  status, infos (results) */
    RDP_CMD_MONITOR     = 33,
    RDP_CMD_MONITOR_ACK = 34,

    /* Groups (RFC0033; src/core/server/group.c).
     * str group id, procs (the members in group-rank order; never
     * empty), infos (directives)  ->  status, infos (results:
     * PMIX_GROUP_CONTEXT_ID when one was assigned, PMIX_GROUP_MEMBERSHIP),
     * bundle (the members' data: job sections of their nspaces, their
     * committed data, what they gave in PMIX_GROUP_INFO) */
    RDP_CMD_GROUP_CONSTRUCT     = 35,
    RDP_CMD_GROUP_CONSTRUCT_ACK = 36,
    /* str group id, infos  ->  status */
    RDP_CMD_GROUP_DESTRUCT     = 37,
    RDP_CMD_GROUP_DESTRUCT_ACK = 38,
    /* str group id, procs (invited; the caller leads), infos
     *   ->  as GROUP_CONSTRUCT_ACK, once the invited have answered */
    RDP_CMD_GROUP_INVITE     = 39,
    RDP_CMD_GROUP_INVITE_ACK = 40,
    /* str group id, proc leader, u8 pmix_group_opt_t, infos
     *   ->  accept: as GROUP_CONSTRUCT_ACK once the group is complete;
     *       decline: status */
    RDP_CMD_GROUP_JOIN     = 41,
    RDP_CMD_GROUP_JOIN_ACK = 42,
    /* str group id, infos  ->  status */
    RDP_CMD_GROUP_LEAVE     = 43,
    RDP_CMD_GROUP_LEAVE_ACK = 44,
    /* A member's answer to PMIX_GROUP_LEADER_FAILED, sent by the library
     * when the event's handlers are done: str group id, u8 vote
     * (0 none, 1 the caller leads, 2 abort)  ->  status */
    RDP_CMD_GROUP_LEADER_VOTE     = 45,
    RDP_CMD_GROUP_LEADER_VOTE_ACK = 46,
    /* PMIx_Fence over a whole group with PMIX_GROUP_FT_COLLECTIVE: a
     * group operation (it goes on without members that leave or
     * terminate): str group id, infos  ->  as FENCE_ACK (status, u8
     * enum rdp_fence_bundle, bundle of the remaining members' data) */
    RDP_CMD_GROUP_FENCE     = 47,
    RDP_CMD_GROUP_FENCE_ACK = 48,
    /* The leader of an invitation aborts it (its INVITE_ACCEPTED /
     * _DECLINED / _FAILED handler completed with
     * PMIX_GROUP_CONSTRUCT_ABORT, or it raised that event with
     * PMIX_GROUP_ID): str group id, infos (none)  ->  status */
    RDP_CMD_GROUP_ABORT     = 61,
    RDP_CMD_GROUP_ABORT_ACK = 62,
    /* The leader of an invitation: its handlers of an INVITE_DECLINED /
     * _FAILED are done (any replacement it invited was sent before): str
     * group id, infos (none)  ->  status */
    RDP_CMD_GROUP_ANSWERED     = 63,
    RDP_CMD_GROUP_ANSWERED_ACK = 64,

    /* Tools (RFC0010; src/core/server/tool.c).  Sent instead of CONNECT
     * by PMIx_tool_init: str nspace (NULL: the server assigns one),
     * u32 rank, u32 pid, infos (the tool's init info)
     *   ->  status, str nspace, u32 rank (the tool's identity),
     *       str nspace, u32 rank (the server's), bundle (the tool's job) */
    RDP_CMD_TOOL_CONNECT     = 51,
    RDP_CMD_TOOL_CONNECT_ACK = 52,

    /* A client asks for its job's fence board (core/ipc/bcast.h): no
     * payload  ->  status, u32 server pid, i32 the board's descriptor
     * number in the server, u64 cookie[2], u64 how many whole-job fences
     * the server counted for this rank before (the client numbers its
     * next ones from there: a rank that connects again goes on counting);
     * the job's eventfd is passed
     * with this message (SCM_RIGHTS).  PMIX_ERR_NOT_SUPPORTED when the
     * server has none for it. */
    RDP_CMD_FENCE_BOARD     = 71,
    RDP_CMD_FENCE_BOARD_ACK = 72,

    RDP_CMD_MAX
};

enum rdp_fence_bundle {
    RDP_FENCE_NO_BUNDLE     = 0,
    RDP_FENCE_BUNDLE_INLINE = 1,
    RDP_FENCE_BUNDLE_MEMFD  = 2
};
/* Bundles from this size on travel in shared memory (RDPMIX_SHM_MIN
 * overrides; 0 = never). */
#define RDP_FENCE_SHM_MIN_DEFAULT (64 * 1024)

/* ---- sections (bundle helpers shared by every producer and reader) ---- */

/** Write a section header with a kvlen placeholder; *mark_p remembers it
 * for rdp_sect_pack_end, called after the kv list is appended. */
static inline pmix_status_t rdp_sect_pack_begin(rdp_buf_t *buf, uint8_t kind,
                                                uint32_t id, const char *name,
                                                size_t *mark_p)
{
    size_t start         = buf->size;
    pmix_status_t status = rdp_pack_u8(buf, kind);

    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, id);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, name);
    }
    if (status == PMIX_SUCCESS) {
        *mark_p = buf->size;
        status  = rdp_pack_u64(buf, 0);
    }
    if (status != PMIX_SUCCESS) {
        buf->size = start;
    }
    return status;
}

/** Patch the kvlen of the section begun at @a mark. */
static inline void rdp_sect_pack_end(rdp_buf_t *buf, size_t mark)
{
    uint64_t le = htole64((uint64_t)(buf->size - mark - sizeof(uint64_t)));

    memcpy(buf->data + mark, &le, sizeof(le));
}

/** One section read from a bundle; name and kv point into the bundle. */
typedef struct rdp_sect {
    uint8_t kind;
    uint32_t id;
    const char *name; /* NULL when none */
    rdp_rbuf_t kv;    /* exactly the kv list */
} rdp_sect_t;

/** Read a section header and step @a rb past its kv list (unparsed).
 * PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER when kvlen overruns. */
static inline pmix_status_t rdp_sect_unpack(rdp_rbuf_t *rb, rdp_sect_t *sect)
{
    rdp_rbuf_t save      = *rb;
    uint64_t kvlen       = 0;
    pmix_status_t status = rdp_unpack_u8(rb, &sect->kind);

    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &sect->id);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_string_view(rb, &sect->name);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u64(rb, &kvlen);
    }
    if (status == PMIX_SUCCESS && kvlen > rb->left) {
        status = PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (status != PMIX_SUCCESS) {
        *rb = save;
        return status;
    }
    rdp_rbuf_init(&sect->kv, rb->ptr, (size_t)kvlen);
    rb->ptr += kvlen;
    rb->left -= (size_t)kvlen;
    return PMIX_SUCCESS;
}

/* Environment the server's setup_fork adds for a client, beyond the
 * Standard/legacy names (PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI, ...):
 * a per-client secret proving the client is the process the host forked. */
#define RDP_ENV_CLIENT_TOKEN "RDPMIX_CLIENT_TOKEN"
/* The rendezvous socket path, also encoded in PMIX_SERVER_URI. */
#define RDP_ENV_SERVER_PATH "RDPMIX_SERVER_PATH"
/* "1": the server answers FENCE_BOARD (a server without it would drop a
 * client that asks). */
#define RDP_ENV_FENCE_BOARD "RDPMIX_SERVER_FENCE_BOARD"

/** The socket path in an rdpmix URI ("<id>;unix:<path>", also with
 * "unix://"); borrowed from @a uri, NULL if it names none. */
static inline const char *rdp_uri_socket_path(const char *uri)
{
    const char *s = strstr(uri, ";unix:");

    if (s == NULL) {
        return NULL;
    }
    s += strlen(";unix:");
    if (strncmp(s, "//", 2) == 0 && s[2] == '/') {
        s += 2;
    }
    return s[0] != '\0' ? s : NULL;
}

#endif
