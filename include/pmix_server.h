/* pmix_server.h - PMIx Standard v4 server API and host upcalls
 *
 * A host (resource manager daemon) fills a pmix_server_module_t with the
 * upcalls it supports (NULL for the others) and passes it to
 * PMIx_server_init.  The struct is copied whole, so hosts must be compiled
 * against this header.  Upcall conventions: PMIX_SUCCESS means the host
 * will call cbfunc exactly once; PMIX_OPERATION_SUCCEEDED means done, no
 * callback; any error means no callback.  Arrays passed to an upcall stay
 * valid until its cbfunc is called.
 */
#ifndef PMIx_SERVER_API_H
#define PMIx_SERVER_API_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* ---- upcalls into the host ------------------------------------------- */

/* a registered client connected */
typedef pmix_status_t (*pmix_server_client_connected_fn_t)(
    const pmix_proc_t *proc, void *server_object, pmix_op_cbfunc_t cbfunc,
    void *cbdata);

/* the same with the client's info (preferred when set) */
typedef pmix_status_t (*pmix_server_client_connected2_fn_t)(
    const pmix_proc_t *proc, void *server_object, pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* a client called PMIx_Finalize */
typedef pmix_status_t (*pmix_server_client_finalized_fn_t)(
    const pmix_proc_t *proc, void *server_object, pmix_op_cbfunc_t cbfunc,
    void *cbdata);

/* a client called PMIx_Abort */
typedef pmix_status_t (*pmix_server_abort_fn_t)(
    const pmix_proc_t *proc, void *server_object, int status,
    const char msg[], pmix_proc_t procs[], size_t nprocs,
    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* all local participants of a fence arrived: exchange @a data with the
 * other servers and return the concatenation through cbfunc */
typedef pmix_status_t (*pmix_server_fencenb_fn_t)(
    const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
    size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
    void *cbdata);

/* fetch the data a remote process committed (direct modex) */
typedef pmix_status_t (*pmix_server_dmodex_req_fn_t)(
    const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
    pmix_modex_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_publish_fn_t)(
    const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* @a keys is NULL-terminated */
typedef pmix_status_t (*pmix_server_lookup_fn_t)(
    const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
    size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_unpublish_fn_t)(
    const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_spawn_fn_t)(
    const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
    const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
    void *cbdata);

typedef pmix_status_t (*pmix_server_connect_fn_t)(
    const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_disconnect_fn_t)(
    const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_register_events_fn_t)(
    pmix_status_t *codes, size_t ncodes, const pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_deregister_events_fn_t)(
    pmix_status_t *codes, size_t ncodes, pmix_op_cbfunc_t cbfunc,
    void *cbdata);

/* deliver an event to processes outside this server */
typedef pmix_status_t (*pmix_server_notify_event_fn_t)(
    pmix_status_t code, const pmix_proc_t *source, pmix_data_range_t range,
    pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* the host accepted a connection on a socket it listens on for us */
typedef void (*pmix_connection_cbfunc_t)(int incoming_sd, void *cbdata);

/* ask the host to listen on @a listening_sd for us */
typedef pmix_status_t (*pmix_server_listener_fn_t)(
    int listening_sd, pmix_connection_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_query_fn_t)(
    pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
    pmix_info_cbfunc_t cbfunc, void *cbdata);

/* the host's answer to a tool connection: the identity it assigned */
typedef void (*pmix_tool_connection_cbfunc_t)(pmix_status_t status,
                                              pmix_proc_t *proc, void *cbdata);

typedef void (*pmix_server_tool_connection_fn_t)(
    pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
    void *cbdata);

typedef void (*pmix_server_log_fn_t)(
    const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
    const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
    void *cbdata);

typedef pmix_status_t (*pmix_server_alloc_fn_t)(
    const pmix_proc_t *client, pmix_alloc_directive_t directive,
    const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc,
    void *cbdata);

typedef pmix_status_t (*pmix_server_job_control_fn_t)(
    const pmix_proc_t *requestor, const pmix_proc_t targets[],
    size_t ntargets, const pmix_info_t directives[], size_t ndirs,
    pmix_info_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_monitor_fn_t)(
    const pmix_proc_t *requestor, const pmix_info_t *monitor,
    pmix_status_t error, const pmix_info_t directives[], size_t ndirs,
    pmix_info_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_get_cred_fn_t)(
    const pmix_proc_t *proc, const pmix_info_t directives[], size_t ndirs,
    pmix_credential_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_validate_cred_fn_t)(
    const pmix_proc_t *proc, const pmix_byte_object_t *cred,
    const pmix_info_t directives[], size_t ndirs,
    pmix_validation_cbfunc_t cbfunc, void *cbdata);

/* forward the given output channels of @a procs to this server */
typedef pmix_status_t (*pmix_server_iof_fn_t)(
    const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[],
    size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
    void *cbdata);

/* deliver stdin data from @a source to @a targets */
typedef pmix_status_t (*pmix_server_stdin_fn_t)(
    const pmix_proc_t *source, const pmix_proc_t targets[], size_t ntargets,
    const pmix_info_t directives[], size_t ndirs,
    const pmix_byte_object_t *bo, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* group construct/destruct across servers (a fence plus group data) */
typedef pmix_status_t (*pmix_server_grp_fn_t)(
    pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
    size_t nprocs, const pmix_info_t directives[], size_t ndirs,
    pmix_info_cbfunc_t cbfunc, void *cbdata);

typedef pmix_status_t (*pmix_server_fabric_fn_t)(
    const pmix_proc_t *requestor, pmix_fabric_operation_t op,
    const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
    void *cbdata);

/* The host's upcall table: 28 entries, 224 bytes, in this exact order
 * (the order and size are ABI). */
typedef struct pmix_server_module_4_0_0_t {
    /* since v1 */
    pmix_server_client_connected_fn_t client_connected;
    pmix_server_client_finalized_fn_t client_finalized;
    pmix_server_abort_fn_t abort;
    pmix_server_fencenb_fn_t fence_nb;
    pmix_server_dmodex_req_fn_t direct_modex;
    pmix_server_publish_fn_t publish;
    pmix_server_lookup_fn_t lookup;
    pmix_server_unpublish_fn_t unpublish;
    pmix_server_spawn_fn_t spawn;
    pmix_server_connect_fn_t connect;
    pmix_server_disconnect_fn_t disconnect;
    pmix_server_register_events_fn_t register_events;
    pmix_server_deregister_events_fn_t deregister_events;
    pmix_server_listener_fn_t listener;
    /* since v2 */
    pmix_server_notify_event_fn_t notify_event;
    pmix_server_query_fn_t query;
    pmix_server_tool_connection_fn_t tool_connected;
    pmix_server_log_fn_t log;
    pmix_server_alloc_fn_t allocate;
    pmix_server_job_control_fn_t job_control;
    pmix_server_monitor_fn_t monitor;
    /* since v3 */
    pmix_server_get_cred_fn_t get_credential;
    pmix_server_validate_cred_fn_t validate_credential;
    pmix_server_iof_fn_t iof_pull;
    pmix_server_stdin_fn_t push_stdin;
    /* since v4 */
    pmix_server_grp_fn_t group;
    pmix_server_fabric_fn_t fabric;
    pmix_server_client_connected2_fn_t client_connected2;
} pmix_server_module_t;

/* ---- server API ------------------------------------------------------- */

/* @a module is copied; NULL means no upcalls */
PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module,
                                           pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_server_finalize(void);

/* compress a comma-separated node list / a ";"-separated list of
 * per-node rank lists into a string the library understands
 * (*@a regex / *@a ppn are malloc'ed) */
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input,
                                              char **regex);
PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn);

/* describe a job (nspace) with @a nlocalprocs processes on this node */
PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(
    const pmix_nspace_t nspace, int nlocalprocs, pmix_info_t info[],
    size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace,
                                               pmix_op_cbfunc_t cbfunc,
                                               void *cbdata);

/* allow a local process to connect; @a server_object is passed back to
 * the host's upcalls for that process */
PMIX_EXPORT pmix_status_t PMIx_server_register_client(
    const pmix_proc_t *proc, uid_t uid, gid_t gid, void *server_object,
    pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc,
                                               pmix_op_cbfunc_t cbfunc,
                                               void *cbdata);

/* add what a child needs to find this server to *@a env */
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc,
                                                 char ***env);

/* answer to PMIx_server_dmodex_request: @a data is valid only during the
 * call */
typedef void (*pmix_dmodex_response_fn_t)(pmix_status_t status, char *data,
                                          size_t sz, void *cbdata);

/* the host asks this server for the data a local client committed */
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(
    const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata);

/* result of PMIx_server_setup_application: the host calls cbfunc(cbdata)
 * once it no longer needs @a info */
typedef void (*pmix_setup_application_cbfunc_t)(
    pmix_status_t status, pmix_info_t info[], size_t ninfo,
    void *provided_cbdata, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* collect per-job setup data (fabric credentials, environment) on the
 * launching node, to be passed to setup_local_support on every node */
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(
    const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
    pmix_setup_application_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(
    const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* hand forwarded output to the tools that asked for it */
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(
    const pmix_proc_t *source, pmix_iof_channel_t channel,
    const pmix_byte_object_t *bo, const pmix_info_t info[], size_t ninfo,
    pmix_op_cbfunc_t cbfunc, void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(
    pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
    void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(
    pmix_info_t info[], size_t ninfo, pmix_info_t directives[], size_t ndirs,
    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* declare the attributes the host supports for API @a function */
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function,
                                                   char *attrs[]);

/* *@a locality / *@a cpuset_string are malloc'ed */
PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(
    const pmix_cpuset_t *cpuset, char **locality);
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(
    const pmix_cpuset_t *cpuset, char **cpuset_string);

PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(
    const pmix_proc_t *members, size_t nmembers, const char *pset_name);
PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name);

/* register / remove information not tied to an nspace (nodes, ...) */
PMIX_EXPORT pmix_status_t PMIx_server_register_resources(
    pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(
    pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_SERVER_API_H */
