/* pmix.h - PMIx Standard v4 client API (also used by servers and tools)
 *
 * Conventions of every non-blocking call: input arrays stay owned by the
 * caller and must stay valid until the callback runs; PMIX_SUCCESS means
 * the callback will run exactly once (never inside the call itself), an
 * error return means it will not run.  PMIX_OPERATION_SUCCEEDED means the
 * request completed immediately and the callback will not run.
 */
#ifndef PMIx_H
#define PMIx_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* ---- initialization ------------------------------------------------- */

/* Connect to the local server and return this process's identity in
 * @a proc (may be NULL).  Calls are reference counted. */
PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[],
                                    size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[],
                                        size_t ninfo);
/* non-zero while initialized */
PMIX_EXPORT int PMIx_Initialized(void);

/* ask the host to abort @a procs (NULL: the caller's whole nspace) */
PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[],
                                     pmix_proc_t procs[], size_t nprocs);

/* ---- key/value exchange ---------------------------------------------- */

/* stage a copy of @a val under @a key (sent to the server by Commit) */
PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[],
                                   pmix_value_t *val);
PMIX_EXPORT pmix_status_t PMIx_Commit(void);

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[],
                                        size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata);

/* *@a val is a malloc'ed value the caller releases (PMIX_VALUE_RELEASE) */
PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_value_t **val);
PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc,
                                      const char key[],
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc,
                                      void *cbdata);

/* ---- publish / lookup ------------------------------------------------ */

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[],
                                          size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc,
                                          void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata,
                                      const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[],
                                         size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc,
                                         void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[],
                                         size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys,
                                            const pmix_info_t info[],
                                            size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc,
                                            void *cbdata);

/* ---- process management ---------------------------------------------- */

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[],
                                     size_t ninfo, const pmix_app_t apps[],
                                     size_t napps, pmix_nspace_t nspace);
PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[],
                                        size_t ninfo, const pmix_app_t apps[],
                                        size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc,
                                        void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[],
                                       size_t nprocs, const pmix_info_t info[],
                                       size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[],
                                          size_t nprocs,
                                          const pmix_info_t info[],
                                          size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc,
                                          void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[],
                                          size_t nprocs,
                                          const pmix_info_t info[],
                                          size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t ranges[],
                                             size_t nprocs,
                                             const pmix_info_t info[],
                                             size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc,
                                             void *cbdata);

/* *@a procs is malloc'ed (PMIX_PROC_FREE); *@a nodelist is a malloc'ed
 * comma-separated string */
PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename,
                                             const pmix_nspace_t nspace,
                                             pmix_proc_t **procs,
                                             size_t *nprocs);
PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace,
                                             char **nodelist);

/* ---- queries, logging, allocation, job control, monitoring ----------- */

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[],
                                          size_t nqueries,
                                          pmix_info_t **results,
                                          size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[],
                                             size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc,
                                             void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[],
                                   size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                      void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(
    pmix_alloc_directive_t directive, pmix_info_t *info, size_t ninfo,
    pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(
    pmix_alloc_directive_t directive, pmix_info_t *info, size_t ninfo,
    pmix_info_cbfunc_t cbfunc, void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[],
                                           size_t ntargets,
                                           const pmix_info_t directives[],
                                           size_t ndirs, pmix_info_t **results,
                                           size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[],
                                              size_t ntargets,
                                              const pmix_info_t directives[],
                                              size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc,
                                              void *cbdata);

PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor,
                                               pmix_status_t error,
                                               const pmix_info_t directives[],
                                               size_t ndirs,
                                               pmix_info_t **results,
                                               size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(
    const pmix_info_t *monitor, pmix_status_t error,
    const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
    void *cbdata);

/* send one heartbeat to the server's monitor */
#define PMIx_Heartbeat()                                                       \
    do {                                                                       \
        pmix_info_t _hb;                                                       \
        PMIX_INFO_CONSTRUCT(&_hb);                                             \
        PMIX_INFO_LOAD(&_hb, PMIX_SEND_HEARTBEAT, NULL, PMIX_POINTER);         \
        PMIx_Process_monitor_nb(&_hb, PMIX_SUCCESS, NULL, 0, NULL, NULL);      \
        PMIX_INFO_DESTRUCT(&_hb);                                              \
    } while (0)

/* ---- security credentials -------------------------------------------- */

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[],
                                              size_t ninfo,
                                              pmix_byte_object_t *credential);
PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[],
                                                 size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc,
                                                 void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential(
    const pmix_byte_object_t *cred, const pmix_info_t info[], size_t ninfo,
    pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(
    const pmix_byte_object_t *cred, const pmix_info_t info[], size_t ninfo,
    pmix_validation_cbfunc_t cbfunc, void *cbdata);

/* ---- process groups -------------------------------------------------- */

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[],
                                               const pmix_proc_t procs[],
                                               size_t nprocs,
                                               const pmix_info_t directives[],
                                               size_t ndirs,
                                               pmix_info_t **results,
                                               size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[],
                                                  const pmix_proc_t procs[],
                                                  size_t nprocs,
                                                  const pmix_info_t info[],
                                                  size_t ninfo,
                                                  pmix_info_cbfunc_t cbfunc,
                                                  void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[],
                                            const pmix_proc_t procs[],
                                            size_t nprocs,
                                            const pmix_info_t info[],
                                            size_t ninfo,
                                            pmix_info_t **results,
                                            size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[],
                                               const pmix_proc_t procs[],
                                               size_t nprocs,
                                               const pmix_info_t info[],
                                               size_t ninfo,
                                               pmix_info_cbfunc_t cbfunc,
                                               void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[],
                                          const pmix_proc_t *leader,
                                          pmix_group_opt_t opt,
                                          const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results,
                                          size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[],
                                             const pmix_proc_t *leader,
                                             pmix_group_opt_t opt,
                                             const pmix_info_t info[],
                                             size_t ninfo,
                                             pmix_info_cbfunc_t cbfunc,
                                             void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[],
                                           const pmix_info_t info[],
                                           size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[],
                                              const pmix_info_t info[],
                                              size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[],
                                              const pmix_info_t info[],
                                              size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[],
                                                 const pmix_info_t info[],
                                                 size_t ninfo,
                                                 pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata);

/* ---- events ---------------------------------------------------------- */

/* @a cbfunc receives the handler's reference id (for deregistration) */
PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(
    pmix_status_t codes[], size_t ncodes, pmix_info_t info[], size_t ninfo,
    pmix_notification_fn_t evhdlr, pmix_hdlr_reg_cbfunc_t cbfunc,
    void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref,
                                                        pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status,
                                            const pmix_proc_t *source,
                                            pmix_data_range_t range,
                                            const pmix_info_t info[],
                                            size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc,
                                            void *cbdata);

/* ---- fabric ---------------------------------------------------------- */

PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                               const pmix_info_t directives[],
                                               size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(
    pmix_fabric_t *fabric, const pmix_info_t directives[], size_t ndirs,
    pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric,
                                                pmix_op_cbfunc_t cbfunc,
                                                void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric,
                                                    pmix_op_cbfunc_t cbfunc,
                                                    void *cbdata);

/* ---- topology and locality ------------------------------------------- */

/* *@a distances is malloc'ed (PMIX_DEVICE_DIST_FREE) */
PMIX_EXPORT pmix_status_t PMIx_Compute_distances(
    pmix_topology_t *topo, pmix_cpuset_t *cpuset, pmix_info_t info[],
    size_t ninfo, pmix_device_distance_t *distances[], size_t *ndist);
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(
    pmix_topology_t *topo, pmix_cpuset_t *cpuset, pmix_info_t info[],
    size_t ninfo, pmix_device_dist_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo);
PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo);
PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset);
PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset,
                                          pmix_bind_envelope_t ref);
PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);
PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1,
                                                     const char *locality2,
                                                     pmix_locality_t *locality);

/* drive the library's progress when PMIX_EXTERNAL_PROGRESS was given */
PMIX_EXPORT void PMIx_Progress(void);

/* ---- printable names (static strings, never NULL) -------------------- */

PMIX_EXPORT const char *PMIx_Error_string(pmix_status_t status);
PMIX_EXPORT const char *PMIx_Proc_state_string(pmix_proc_state_t state);
PMIX_EXPORT const char *PMIx_Scope_string(pmix_scope_t scope);
PMIX_EXPORT const char *PMIx_Persistence_string(pmix_persistence_t persist);
PMIX_EXPORT const char *PMIx_Data_range_string(pmix_data_range_t range);
PMIX_EXPORT const char *PMIx_Data_type_string(pmix_data_type_t type);
PMIX_EXPORT const char *PMIx_Alloc_directive_string(
    pmix_alloc_directive_t directive);
PMIX_EXPORT const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel);
PMIX_EXPORT const char *PMIx_Job_state_string(pmix_job_state_t state);
/* "PMIX_JOB_SIZE" -> "pmix.job.size" */
PMIX_EXPORT const char *PMIx_Get_attribute_string(const char *attribute);
/* "pmix.job.size" -> "PMIX_JOB_SIZE" */
PMIX_EXPORT const char *PMIx_Get_attribute_name(const char *attrstring);
PMIX_EXPORT const char *PMIx_Link_state_string(pmix_link_state_t state);
PMIX_EXPORT const char *PMIx_Device_type_string(pmix_device_type_t type);
PMIX_EXPORT const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp);

/* these return malloc'ed strings the caller frees */
PMIX_EXPORT char *PMIx_Info_string(const pmix_info_t *info);
PMIX_EXPORT char *PMIx_Value_string(const pmix_value_t *value);
PMIX_EXPORT char *PMIx_Info_directives_string(
    pmix_info_directives_t directives);

/* library version string (static) */
PMIX_EXPORT const char *PMIx_Get_version(void);

/* store a copy of @a val locally for @a proc (not shared with anyone) */
PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc,
                                              const char key[],
                                              pmix_value_t *val);

/* ---- data packing ---------------------------------------------------- */

PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *target,
                                         pmix_data_buffer_t *buffer, void *src,
                                         int32_t num_vals,
                                         pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source,
                                           pmix_data_buffer_t *buffer,
                                           void *dest, int32_t *max_num_values,
                                           pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src,
                                         pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix,
                                          void *src, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest,
                                                 pmix_data_buffer_t *src);
/* move the unread payload into @a payload (the buffer is emptied) */
PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload);
/* take over @a payload's bytes (the byte object is emptied) */
PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer,
                                         pmix_byte_object_t *payload);
/* copy @a payload into the buffer (the byte object is left alone) */
PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer,
                                          const pmix_byte_object_t *payload);
/* true (with malloc'ed *@a outbytes) only if the result is smaller */
PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *inbytes, size_t size,
                                    uint8_t **outbytes, size_t *nbytes);
PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size,
                                      uint8_t **outbytes, size_t *nbytes);

/* The Standard's function forms of the PMIX_INFO_* directive macros of
 * pmix_common.h (OpenPMIx 4.2.2 has only the macros). */
PMIX_EXPORT void PMIx_Info_required(pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t *p);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_H */
