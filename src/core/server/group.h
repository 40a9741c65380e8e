/* group.h - PMIx groups in the server (RFC0033): what servers exchange */
#ifndef RDP_CORE_SERVER_GROUP_H
#define RDP_CORE_SERVER_GROUP_H

#include <pmix_common.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/server/server_int.h"
#include "core/wire/wire.h"

/*
 * A group construct or destruct is a collective over the servers that
 * host the members.  Each server contributes one *block* saying which of
 * its local members joined, what they gave in PMIX_GROUP_INFO, whether
 * one asked for a context id, this server's candidate context id, and
 * (constructs across servers) a bundle of its members' committed data.
 * Every server resolves the same blocks to the same final membership and
 * context id (group_block.c, pure functions, unit-tested).
 *
 *   block := u8 want_cid, u64 cid candidate, u32 n, n x entry,
 *            u64 bundle length, bundle bytes
 *   entry := proc, u8 flags (1: joined, 2: leads), infos (the member's
 *            PMIX_GROUP_INFO)
 */

/** One member as its server reports it. */
typedef struct rdp_srv_group_entry {
    pmix_proc_t proc;
    bool joined;        /* false: it left before joining (optional) */
    bool leads;         /* it gave PMIX_GROUP_LEADER to construct */
    pmix_info_t *ginfo; /* what it gave in PMIX_GROUP_INFO */
    size_t nginfo;
} rdp_srv_group_entry_t;

/** One server's block, unpacked. */
typedef struct rdp_srv_group_block {
    uint32_t origin; /* the server's engine index */
    bool want_cid;
    uint64_t cid;
    rdp_srv_group_entry_t *entries; /* owned (ginfo too) */
    size_t nentries;
    const uint8_t *bundle; /* borrowed from the packed block */
    size_t bundlelen;
} rdp_srv_group_block_t;

/** The context id server @a server hands out for its @a counter-th
 * request (counter from 1): unique across servers, never 0. */
uint64_t rdp_srv_group_cid_make(uint32_t server, uint32_t counter);

pmix_status_t rdp_srv_group_block_pack(rdp_buf_t *buf, bool want_cid,
                                       uint64_t cid,
                                       const rdp_srv_group_entry_t *entries,
                                       size_t nentries, const void *bundle,
                                       size_t bundlelen);
/* The same block packed piece by piece (no array of entries, the bundle
 * packed in place): the head, @a nentries entries, then the bundle
 * between _begin and _end (_end writes its length at @a mark). */
pmix_status_t rdp_srv_group_block_pack_head(rdp_buf_t *buf, bool want_cid,
                                            uint64_t cid, size_t nentries);
pmix_status_t rdp_srv_group_block_pack_entry(rdp_buf_t *buf,
                                             const rdp_srv_group_entry_t *e);
pmix_status_t rdp_srv_group_block_bundle_begin(rdp_buf_t *buf, size_t *mark_p);
void rdp_srv_group_block_bundle_end(rdp_buf_t *buf, size_t mark);
/** Unpack a block; the bundle stays in @a data. */
pmix_status_t rdp_srv_group_block_unpack(const void *data, size_t len,
                                         uint32_t origin,
                                         rdp_srv_group_block_t *blk);
void rdp_srv_group_block_clear(rdp_srv_group_block_t *blk);

/**
 * Resolve the blocks of every participating server: the final membership
 * (@a members in their order, without those that did not join; malloc'ed)
 * and, when any block asks for one, the context id: the candidate of the
 * lowest-indexed server.  A member that did not join, or that no block
 * reports, is PMIX_ERR_PROC_TERM_WO_SYNC unless @a optional.
 */
pmix_status_t rdp_srv_group_resolve(const pmix_proc_t *members, size_t n,
                                    const rdp_srv_group_block_t *blocks,
                                    size_t nblocks, bool optional,
                                    pmix_proc_t **final_p, size_t *nfinal_p,
                                    bool *have_cid_p, uint64_t *cid_p);

/**
 * The entry of @a proc in @a blocks, or NULL.  With @a at (not NULL; 0
 * at first) the search starts where the last one through @a at ended and
 * wraps around: members looked up in the order the blocks list them (a
 * group's order, servers by index) cost one step each, not a scan.
 */
const rdp_srv_group_entry_t *
rdp_srv_group_find_entry(const rdp_srv_group_block_t *blocks, size_t nblocks,
                         const pmix_proc_t *proc, size_t *at);

/*
 * Choosing a new leader (RFC0033): after PMIX_GROUP_LEADER_FAILED every
 * remaining member's library answers with a vote (RDP_CMD_GROUP_LEADER_VOTE),
 * and the servers exchange their members' votes:
 *
 *   votes := u32 n, n x (proc, u8 vote)
 */
enum rdp_srv_group_vote_kind {
    RDP_GROUP_VOTE_NONE  = 0, /* no handler chose anything */
    RDP_GROUP_VOTE_SELF  = 1, /* a handler returned PMIX_GROUP_LEADER */
    RDP_GROUP_VOTE_ABORT = 2 /* a handler returned PMIX_GROUP_CONSTRUCT_ABORT */
};

typedef struct rdp_srv_group_vote {
    pmix_proc_t proc;
    uint8_t vote;
} rdp_srv_group_vote_t;

pmix_status_t rdp_srv_group_votes_pack(rdp_buf_t *buf,
                                       const rdp_srv_group_vote_t *votes,
                                       size_t n);
/** Unpack one server's votes and append them to *votes_p (realloc'ed). */
pmix_status_t rdp_srv_group_votes_unpack(const void *data, size_t len,
                                         rdp_srv_group_vote_t **votes_p,
                                         size_t *n_p);
/**
 * The outcome of a vote, the same on every server: PMIX_GROUP_CONSTRUCT_ABORT
 * when any member voted abort or none chose itself, else PMIX_SUCCESS and
 * @a leader = the chooser with the lowest group rank (the Standard allows
 * one; this keeps several deterministic).  Votes of non-members and
 * unknown vote values are ignored.
 */
pmix_status_t rdp_srv_group_votes_resolve(const pmix_proc_t *members,
                                          size_t nmembers,
                                          const rdp_srv_group_vote_t *votes,
                                          size_t nvotes, pmix_proc_t *leader);

/* ---- group.c: trackers and the API of the server ---- */
/** GROUP_CONSTRUCT / GROUP_DESTRUCT from a client (conn.c). */
void rdp_srv_handle_group(rdp_srv_peer_t *peer, uint16_t cmd, uint32_t tag,
                          rdp_rbuf_t *rb);
/** A connect (@a connect) or disconnect with RDPMIX_CONNECT_OPTIONAL by
 * @a peer's client over @a procs (canonical; borrowed, as @a info), with
 * RDPMIX_CONNECT_ID @a cid (NULL: none): run as a group operation,
 * answered later with @a ack and a status.  An error return is the
 * caller's to answer. */
pmix_status_t rdp_srv_group_connect(rdp_srv_peer_t *peer, bool connect,
                                    uint32_t tag, uint16_t ack,
                                    pmix_proc_t *procs, size_t nprocs,
                                    const char *cid, pmix_info_t *info,
                                    size_t ninfo);
/** A local client finalized or left: group operations waiting for it
 * fail, or go on without it where that was allowed. */
void rdp_srv_group_client_gone(rdp_srv_client_t *client);
/** Handle the servers' group channel (server init). */
void rdp_srv_group_open(void);
/** Drop every group and tracker (server finalize). */
void rdp_srv_group_cleanup(void);

#endif
