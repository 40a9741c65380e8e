/* tool.c - tools (RFC0010) in the server: rendezvous files, TOOL_CONNECT */
#include "config.h"
#include "core/server/server_int.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * A server started with PMIX_SERVER_TOOL_SUPPORT writes, in its session
 * tmpdir (PMIX_SERVER_TMPDIR), the rendezvous files OpenPMIx 4.2.2 names
 * pmix.<host>.tool.<pid> and pmix.<host>.tool.<server nspace>; one with
 * PMIX_SERVER_SYSTEM_SUPPORT also writes the node's one system-level file
 * <PMIX_SYSTEM_TMPDIR>/pmix.sys.<host> (and accepts tools of other users
 * on its socket, to refuse them by their credentials).  Every file holds,
 * one per line: the URI "<nspace>.<rank>;unix:<socket>", the version, the
 * server's pid, "uid:gid", the time it was written.
 *
 * A tool that connects becomes a client of a one-process job of its own
 * (its nspace is kept here, not among the registered jobs, so it never
 * appears in a job list or a collective); requests then take the same
 * paths as a client's.  It must run as the server's user (or root): a
 * tool of another uid is refused before it learns anything.
 */

#define RDP_SRV_TOOL_MAX_FILES 3

static struct {
    bool tool_support;
    bool system_support;
    char *files[RDP_SRV_TOOL_MAX_FILES]; /* written by us, removed at fini */
    size_t nfiles;
    rdp_list_t nspaces; /* rdp_srv_nspace_t of connected tools */
    uint32_t next_tool; /* to name tools that bring no nspace */
} tools;

/* ---- rendezvous files ---- */

static pmix_status_t write_rendezvous(const char *path, mode_t mode)
{
    char tmp[PATH_MAX];
    char when[64];
    time_t now = time(NULL);
    FILE *fp;
    int fd, n;

    n = snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        rdp_log_error(SERVER, "rendezvous file name %s is too long", path);
        return PMIX_ERR_BAD_PARAM;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0 || (fp = fdopen(fd, "w")) == NULL) {
        rdp_log_error(SERVER, "cannot write rendezvous file %s: %m", tmp);
        if (fd >= 0) {
            close(fd);
        }
        return PMIX_ERR_FILE_OPEN_FAILURE;
    }
    strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime(&now));
    fprintf(fp, "%s.%u;unix:%s\n%s\n%d\n%u:%u\n%s\n", rdp_rt.myproc.nspace,
            rdp_rt.myproc.rank, rdp_srv.socket_path, PACKAGE_VERSION,
            (int)getpid(), (unsigned)geteuid(), (unsigned)getegid(), when);
    /* the umask must not decide who may read it */
    if (fchmod(fd, mode) != 0 || fclose(fp) != 0) {
        rdp_log_error(SERVER, "cannot write rendezvous file %s: %m", tmp);
        unlink(tmp);
        return PMIX_ERR_FILE_WRITE_FAILURE;
    }
    if (rename(tmp, path) != 0) {
        rdp_log_error(SERVER, "cannot publish rendezvous file %s: %m", path);
        unlink(tmp);
        return PMIX_ERR_FILE_WRITE_FAILURE;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t publish(const char *dir, const char *name, mode_t mode)
{
    char *path = NULL;
    pmix_status_t status;

    if (tools.nfiles == RDP_SRV_TOOL_MAX_FILES
        || asprintf(&path, "%s/%s", dir, name) < 0) {
        return PMIX_ERR_NOMEM;
    }
    status = write_rendezvous(path, mode);
    if (status != PMIX_SUCCESS) {
        free(path);
        return status;
    }
    rdp_log_debug(SERVER, "tool rendezvous file %s written", path);
    tools.files[tools.nfiles++] = path;
    return PMIX_SUCCESS;
}

/* A host name as one file name component. */
static void host_component(char *out, size_t size)
{
    snprintf(out, size, "%s", rdp_srv.hostname);
    for (char *s = out; *s != '\0'; s++) {
        if (*s == '/' || (unsigned char)*s < 0x20) {
            *s = '_';
        }
    }
}

/* Tools of other users must reach the socket to be refused politely:
 * the directory becomes traversable and the socket connectable. */
static void open_socket_to_all(void)
{
    if (chmod(rdp_srv.rendezvous_dir, 0711) != 0
        || chmod(rdp_srv.socket_path, 0777) != 0) {
        rdp_log_warn(SERVER,
                     "tools of other users cannot reach %s (%m); they "
                     "are refused either way",
                     rdp_srv.socket_path);
    }
}

static void read_flags(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_TOOL_SUPPORT)) {
            tools.tool_support = PMIX_INFO_TRUE(&info[i]);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_SERVER_SYSTEM_SUPPORT)) {
            tools.system_support = PMIX_INFO_TRUE(&info[i]);
        }
    }
}

pmix_status_t rdp_srv_tool_open(const pmix_info_t *info, size_t ninfo)
{
    char host[256], name[PATH_MAX];
    pmix_status_t status = PMIX_SUCCESS;

    memset(&tools, 0, sizeof(tools));
    rdp_list_init(&tools.nspaces);
    read_flags(info, ninfo);
    if (!tools.tool_support && !tools.system_support) {
        return PMIX_SUCCESS;
    }
    host_component(host, sizeof(host));
    snprintf(name, sizeof(name), "pmix.%s.tool.%d", host, (int)getpid());
    status = publish(rdp_srv.tmpdir, name, 0600);
    if (status == PMIX_SUCCESS) {
        snprintf(name, sizeof(name), "pmix.%s.tool.%s", host,
                 rdp_rt.myproc.nspace);
        status = publish(rdp_srv.tmpdir, name, 0600);
    }
    if (status == PMIX_SUCCESS && tools.system_support) {
        snprintf(name, sizeof(name), "pmix.sys.%s", host);
        status = publish(rdp_srv.system_tmpdir, name, 0644);
        if (status == PMIX_SUCCESS) {
            open_socket_to_all();
        }
    }
    if (status != PMIX_SUCCESS) {
        /* clients do not need the files: the host keeps its server, and
         * tools can still come by URI (OpenPMIx fails init instead) */
        rdp_log_warn(SERVER,
                     "rendezvous files not written (%s): tools can only "
                     "reach this server by its URI",
                     rdp_status_name(status));
    }
    return PMIX_SUCCESS;
}

/* ---- connected tools ---- */

static void tool_nspace_destroy(rdp_srv_nspace_t *ns)
{
    rdp_list_del(&ns->link);
    rdp_srv_nspace_destroy(ns);
}

void rdp_srv_tool_close(void)
{
    rdp_srv_nspace_t *ns, *tmp;

    for (size_t i = 0; i < tools.nfiles; i++) {
        if (unlink(tools.files[i]) != 0 && errno != ENOENT) {
            rdp_log_warn(SERVER, "cannot remove %s: %m", tools.files[i]);
        }
        free(tools.files[i]);
        tools.files[i] = NULL;
    }
    tools.nfiles = 0;
    if (tools.nspaces.next != NULL) {
        rdp_list_for_each_safe(ns, tmp, &tools.nspaces, link) {
            tool_nspace_destroy(ns);
        }
    }
    tools.tool_support   = false;
    tools.system_support = false;
}

bool rdp_srv_tool_is(const rdp_srv_client_t *client)
{
    return client != NULL && client->ns != NULL && client->ns->is_tool;
}

void rdp_srv_tool_gone(rdp_srv_client_t *client)
{
    if (!rdp_srv_tool_is(client)) {
        return;
    }
    rdp_log_debug(SERVER, "tool %s:%u gone", client->proc.nspace,
                  client->proc.rank);
    rdp_srv_monitor_client_gone(&client->proc);
    tool_nspace_destroy(client->ns);
}

typedef struct tool_req {
    pmix_nspace_t nspace; /* empty: assign one */
    uint32_t rank;
    uint32_t pid;
} tool_req_t;

static pmix_status_t unpack_request(rdp_rbuf_t *rb, tool_req_t *req)
{
    pmix_info_t *info = NULL;
    size_t ninfo      = 0;
    const char *ns    = NULL;
    pmix_status_t status;

    memset(req, 0, sizeof(*req));
    status = rdp_unpack_string_view(rb, &ns);
    if (status == PMIX_SUCCESS && ns != NULL) {
        if (ns[0] == '\0' || strlen(ns) > PMIX_MAX_NSLEN) {
            return PMIX_ERR_BAD_PARAM;
        }
        PMIX_LOAD_NSPACE(req->nspace, ns);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &req->rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_unpack_u32(rb, &req->pid);
    }
    if (status == PMIX_SUCCESS) {
        /* the tool's init info: nothing in it concerns the server yet */
        status = rdp_unpack_info_array(rb, &info, &ninfo);
        PMIX_INFO_FREE(info, ninfo);
    }
    if (status == PMIX_SUCCESS && rb->left != 0) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && req->rank >= PMIX_RANK_VALID) {
        req->rank = 0; /* "any": a tool is rank 0 of its own job */
    }
    return status;
}

static bool nspace_taken(const char *name)
{
    rdp_srv_nspace_t *ns;

    if (rdp_srv_nspace_find(name) != NULL
        || strncmp(name, rdp_rt.myproc.nspace, PMIX_MAX_NSLEN) == 0) {
        return true;
    }
    rdp_list_for_each(ns, &tools.nspaces, link) {
        if (strncmp(ns->name, name, PMIX_MAX_NSLEN) == 0) {
            return true;
        }
    }
    return false;
}

static pmix_status_t pick_identity(rdp_srv_peer_t *peer, tool_req_t *req)
{
    if (req->nspace[0] != '\0') {
        if (nspace_taken(req->nspace)) {
            rdp_log_error(SERVER,
                          "tool pid %d asks for nspace %s, which is "
                          "taken: refused",
                          (int)peer->cred.pid, req->nspace);
            return PMIX_ERR_EXISTS;
        }
        return PMIX_SUCCESS;
    }
    do {
        snprintf(req->nspace, sizeof(req->nspace), "tool.%s.%d.%u",
                 rdp_srv.hostname, (int)peer->cred.pid, tools.next_tool++);
    } while (nspace_taken(req->nspace));
    req->rank = 0;
    return PMIX_SUCCESS;
}

/* A job of one process (the tool) on this node, kept off the job list. */
static pmix_status_t make_tool_client(rdp_srv_peer_t *peer,
                                      const tool_req_t *req,
                                      rdp_srv_client_t **client_p)
{
    pmix_info_t info[1];
    uint32_t one = 1;
    rdp_srv_nspace_t *ns;
    rdp_srv_client_t *client;
    pmix_status_t status;

    status = rdp_srv_nspace_get(req->nspace, &ns);
    if (status != PMIX_SUCCESS) {
        return status;
    }
    rdp_list_del(&ns->link);
    rdp_list_push_back(&tools.nspaces, &ns->link);
    ns->is_tool = true;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &one, PMIX_UINT32);
    status = rdp_srv_nspace_ingest(ns, 1, info, 1);
    client = status == PMIX_SUCCESS ? rdp_calloc(1, sizeof(*client)) : NULL;
    if (client == NULL) {
        tool_nspace_destroy(ns);
        return status == PMIX_SUCCESS ? PMIX_ERR_NOMEM : status;
    }
    status = rdp_hash_init(&client->coll_seq, 0);
    if (status == PMIX_SUCCESS) {
        status = rdp_hash_set_u64(&ns->clients, req->rank, client, NULL);
    }
    if (status != PMIX_SUCCESS) {
        rdp_hash_cleanup(&client->coll_seq);
        rdp_free(client);
        tool_nspace_destroy(ns);
        return status;
    }
    PMIX_LOAD_PROCID(&client->proc, req->nspace, req->rank);
    client->ns    = ns;
    client->uid   = peer->cred.uid;
    client->gid   = peer->cred.gid;
    client->pid   = peer->cred.pid;
    client->state = RDP_SRV_CLIENT_CONNECTED;
    *client_p     = client;
    return PMIX_SUCCESS;
}

static pmix_status_t pack_ack(const rdp_srv_client_t *client, rdp_buf_t *buf)
{
    pmix_status_t status;

    rdp_buf_init(buf);
    status = rdp_pack_i32(buf, PMIX_SUCCESS);
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, client->proc.nspace);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, client->proc.rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_string(buf, rdp_rt.myproc.nspace);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, rdp_rt.myproc.rank);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_pack_u32(buf, 1);
    }
    if (status == PMIX_SUCCESS) {
        status = rdp_srv_nspace_pack_set(client->ns, NULL, 0, buf);
    }
    if (status != PMIX_SUCCESS) {
        rdp_buf_cleanup(buf);
    }
    return status;
}

static void refuse(rdp_srv_peer_t *peer, uint32_t tag, pmix_status_t status)
{
    rdp_srv_reply_status(peer, RDP_CMD_TOOL_CONNECT_ACK, tag, status);
    rdp_srv_peer_drop(peer, status);
}

/* Only the server's own user (or root) may attach: SO_PEERCRED decides,
 * before the tool learns anything about a job. */
static bool may_attach(const rdp_srv_peer_t *peer)
{
    return peer->cred.uid == geteuid() || peer->cred.uid == 0;
}

void rdp_srv_tool_handle_connect(rdp_srv_peer_t *peer, uint32_t tag,
                                 rdp_rbuf_t *rb)
{
    tool_req_t req;
    rdp_srv_client_t *client;
    rdp_buf_t buf;
    pmix_status_t status;

    status = unpack_request(rb, &req);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER,
                      "malformed TOOL_CONNECT from pid %d (uid %u): %s; "
                      "connection closed",
                      (int)peer->cred.pid, (unsigned)peer->cred.uid,
                      rdp_status_name(status));
        rdp_srv_peer_drop(peer, status);
        return;
    }
    if (!tools.tool_support && !tools.system_support) {
        rdp_log_info(SERVER,
                     "tool pid %d refused: this server was started "
                     "without tool support",
                     (int)peer->cred.pid);
        refuse(peer, tag, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    if (!may_attach(peer)) {
        rdp_log_error(SERVER,
                      "tool pid %d runs as uid %u gid %u, not as this "
                      "server's uid %u: refused",
                      (int)peer->cred.pid, (unsigned)peer->cred.uid,
                      (unsigned)peer->cred.gid, (unsigned)geteuid());
        refuse(peer, tag, PMIX_ERR_NO_PERMISSIONS);
        return;
    }
    status = pick_identity(peer, &req);
    if (status == PMIX_SUCCESS) {
        status = make_tool_client(peer, &req, &client);
    }
    if (status == PMIX_SUCCESS) {
        status = pack_ack(client, &buf);
        if (status != PMIX_SUCCESS) {
            rdp_srv_tool_gone(client);
        }
    }
    if (status != PMIX_SUCCESS) {
        refuse(peer, tag, status);
        return;
    }
    client->peer = peer;
    peer->client = client;
    peer->state  = RDP_SRV_PEER_READY;
    rdp_srv_reply_buf(peer, RDP_CMD_TOOL_CONNECT_ACK, tag, &buf);
    rdp_srv_evcache_replay(peer);
    rdp_log_debug(SERVER, "tool %s:%u connected (pid %d uid %u)",
                  client->proc.nspace, client->proc.rank, (int)peer->cred.pid,
                  (unsigned)peer->cred.uid);
}

/* A tool's FINALIZE: no host upcall (the host never registered it). */
void rdp_srv_tool_handle_finalize(rdp_srv_peer_t *peer, uint32_t tag,
                                  rdp_rbuf_t *rb)
{
    if (rb->left != 0) {
        rdp_srv_peer_drop(peer, PMIX_ERR_UNPACK_FAILURE);
        return;
    }
    peer->client->state = RDP_SRV_CLIENT_FINALIZED;
    rdp_srv_reply_status(peer, RDP_CMD_FINALIZE_ACK, tag, PMIX_SUCCESS);
    rdp_srv_peer_drop(peer, PMIX_SUCCESS);
}
