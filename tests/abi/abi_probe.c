/* abi_probe.c - print the layout and constants of the PMIx headers it is
 * compiled against, one "category name value" line each.  Built once with
 * rdpmix's include/ and once with OpenPMIx's headers; check_abi.sh diffs the
 * two outputs.  Uses only names both header sets define. */
#include <stddef.h>
#include <stdio.h>

#include <pmix_server.h>
#include <pmix_tool.h>

#define SIZE(t)   printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))
#define ENUM(e)   printf("enum %s %d\n", #e, (int)(e))

static void scalar_types(void)
{
    SIZE(pmix_nspace_t);
    SIZE(pmix_key_t);
    SIZE(pmix_rank_t);
    SIZE(pmix_status_t);
    SIZE(pmix_data_type_t);
    SIZE(pmix_scope_t);
    SIZE(pmix_data_range_t);
    SIZE(pmix_persistence_t);
    SIZE(pmix_info_directives_t);
    SIZE(pmix_proc_state_t);
    SIZE(pmix_job_state_t);
    SIZE(pmix_alloc_directive_t);
    SIZE(pmix_iof_channel_t);
    SIZE(pmix_coord_view_t);
    SIZE(pmix_link_state_t);
    SIZE(pmix_bind_envelope_t);
    SIZE(pmix_locality_t);
    SIZE(pmix_device_type_t);
    SIZE(pmix_storage_medium_t);
    SIZE(pmix_storage_accessibility_t);
    SIZE(pmix_storage_persistence_t);
    SIZE(pmix_storage_access_type_t);
    SIZE(pmix_value_cmp_t);
    SIZE(pmix_group_opt_t);
    SIZE(pmix_group_operation_t);
    SIZE(pmix_boolean_t);
    SIZE(pmix_fabric_operation_t);
}

static void value_layout(void)
{
    SIZE(pmix_value_t);
    OFF(pmix_value_t, type);
    OFF(pmix_value_t, data);
    printf("sizeof pmix_value_t.data %zu\n", sizeof(((pmix_value_t *)0)->data));
    OFF(pmix_value_t, data.flag);
    OFF(pmix_value_t, data.byte);
    OFF(pmix_value_t, data.string);
    OFF(pmix_value_t, data.size);
    OFF(pmix_value_t, data.pid);
    OFF(pmix_value_t, data.integer);
    OFF(pmix_value_t, data.int8);
    OFF(pmix_value_t, data.int16);
    OFF(pmix_value_t, data.int32);
    OFF(pmix_value_t, data.int64);
    OFF(pmix_value_t, data.uint);
    OFF(pmix_value_t, data.uint8);
    OFF(pmix_value_t, data.uint16);
    OFF(pmix_value_t, data.uint32);
    OFF(pmix_value_t, data.uint64);
    OFF(pmix_value_t, data.fval);
    OFF(pmix_value_t, data.dval);
    OFF(pmix_value_t, data.tv);
    OFF(pmix_value_t, data.time);
    OFF(pmix_value_t, data.status);
    OFF(pmix_value_t, data.rank);
    OFF(pmix_value_t, data.nspace);
    OFF(pmix_value_t, data.proc);
    OFF(pmix_value_t, data.bo);
    OFF(pmix_value_t, data.persist);
    OFF(pmix_value_t, data.scope);
    OFF(pmix_value_t, data.range);
    OFF(pmix_value_t, data.state);
    OFF(pmix_value_t, data.pinfo);
    OFF(pmix_value_t, data.darray);
    OFF(pmix_value_t, data.ptr);
    OFF(pmix_value_t, data.adir);
    OFF(pmix_value_t, data.envar);
    OFF(pmix_value_t, data.coord);
    OFF(pmix_value_t, data.linkstate);
    OFF(pmix_value_t, data.jstate);
    OFF(pmix_value_t, data.topo);
    OFF(pmix_value_t, data.cpuset);
    OFF(pmix_value_t, data.locality);
    OFF(pmix_value_t, data.geometry);
    OFF(pmix_value_t, data.devtype);
    OFF(pmix_value_t, data.devdist);
    OFF(pmix_value_t, data.endpoint);
    OFF(pmix_value_t, data.dbuf);
    OFF(pmix_value_t, data.pstats);
    OFF(pmix_value_t, data.dkstats);
    OFF(pmix_value_t, data.netstats);
    OFF(pmix_value_t, data.ndstats);
}

static void struct_layouts(void)
{
    SIZE(pmix_proc_t);
    OFF(pmix_proc_t, nspace);
    OFF(pmix_proc_t, rank);

    SIZE(pmix_info_t);
    OFF(pmix_info_t, key);
    OFF(pmix_info_t, flags);
    OFF(pmix_info_t, value);

    SIZE(pmix_pdata_t);
    OFF(pmix_pdata_t, proc);
    OFF(pmix_pdata_t, key);
    OFF(pmix_pdata_t, value);

    SIZE(pmix_data_array_t);
    OFF(pmix_data_array_t, type);
    OFF(pmix_data_array_t, size);
    OFF(pmix_data_array_t, array);

    SIZE(pmix_byte_object_t);
    OFF(pmix_byte_object_t, bytes);
    OFF(pmix_byte_object_t, size);

    SIZE(pmix_envar_t);
    OFF(pmix_envar_t, envar);
    OFF(pmix_envar_t, value);
    OFF(pmix_envar_t, separator);

    SIZE(pmix_app_t);
    OFF(pmix_app_t, cmd);
    OFF(pmix_app_t, argv);
    OFF(pmix_app_t, env);
    OFF(pmix_app_t, cwd);
    OFF(pmix_app_t, maxprocs);
    OFF(pmix_app_t, info);
    OFF(pmix_app_t, ninfo);

    SIZE(pmix_query_t);
    OFF(pmix_query_t, keys);
    OFF(pmix_query_t, qualifiers);
    OFF(pmix_query_t, nqual);

    SIZE(pmix_proc_info_t);
    OFF(pmix_proc_info_t, proc);
    OFF(pmix_proc_info_t, hostname);
    OFF(pmix_proc_info_t, executable_name);
    OFF(pmix_proc_info_t, pid);
    OFF(pmix_proc_info_t, exit_code);
    OFF(pmix_proc_info_t, state);

    SIZE(pmix_data_buffer_t);
    OFF(pmix_data_buffer_t, base_ptr);
    OFF(pmix_data_buffer_t, pack_ptr);
    OFF(pmix_data_buffer_t, unpack_ptr);
    OFF(pmix_data_buffer_t, bytes_allocated);
    OFF(pmix_data_buffer_t, bytes_used);

    SIZE(pmix_regattr_t);
    OFF(pmix_regattr_t, name);
    OFF(pmix_regattr_t, string);
    OFF(pmix_regattr_t, type);
    OFF(pmix_regattr_t, description);

    SIZE(pmix_fabric_t);
    OFF(pmix_fabric_t, name);
    OFF(pmix_fabric_t, index);
    OFF(pmix_fabric_t, info);
    OFF(pmix_fabric_t, ninfo);
    OFF(pmix_fabric_t, module);

    SIZE(pmix_coord_t);
    OFF(pmix_coord_t, view);
    OFF(pmix_coord_t, coord);
    OFF(pmix_coord_t, dims);

    SIZE(pmix_topology_t);
    OFF(pmix_topology_t, source);
    OFF(pmix_topology_t, topology);

    SIZE(pmix_cpuset_t);
    OFF(pmix_cpuset_t, source);
    OFF(pmix_cpuset_t, bitmap);

    SIZE(pmix_geometry_t);
    OFF(pmix_geometry_t, fabric);
    OFF(pmix_geometry_t, uuid);
    OFF(pmix_geometry_t, osname);
    OFF(pmix_geometry_t, coordinates);
    OFF(pmix_geometry_t, ncoords);

    SIZE(pmix_device_distance_t);
    OFF(pmix_device_distance_t, uuid);
    OFF(pmix_device_distance_t, osname);
    OFF(pmix_device_distance_t, type);
    OFF(pmix_device_distance_t, mindist);
    OFF(pmix_device_distance_t, maxdist);

    SIZE(pmix_endpoint_t);
    OFF(pmix_endpoint_t, uuid);
    OFF(pmix_endpoint_t, osname);
    OFF(pmix_endpoint_t, endpt);

    SIZE(pmix_proc_stats_t);
    OFF(pmix_proc_stats_t, node);
    OFF(pmix_proc_stats_t, proc);
    OFF(pmix_proc_stats_t, pid);
    OFF(pmix_proc_stats_t, cmd);
    OFF(pmix_proc_stats_t, state);
    OFF(pmix_proc_stats_t, time);
    OFF(pmix_proc_stats_t, percent_cpu);
    OFF(pmix_proc_stats_t, priority);
    OFF(pmix_proc_stats_t, num_threads);
    OFF(pmix_proc_stats_t, pss);
    OFF(pmix_proc_stats_t, vsize);
    OFF(pmix_proc_stats_t, rss);
    OFF(pmix_proc_stats_t, peak_vsize);
    OFF(pmix_proc_stats_t, processor);
    OFF(pmix_proc_stats_t, sample_time);

    SIZE(pmix_disk_stats_t);
    OFF(pmix_disk_stats_t, disk);
    OFF(pmix_disk_stats_t, num_reads_completed);
    OFF(pmix_disk_stats_t, weighted_milliseconds_io);

    SIZE(pmix_net_stats_t);
    OFF(pmix_net_stats_t, net_interface);
    OFF(pmix_net_stats_t, num_bytes_recvd);
    OFF(pmix_net_stats_t, num_send_errs);

    SIZE(pmix_node_stats_t);
    OFF(pmix_node_stats_t, node);
    OFF(pmix_node_stats_t, la);
    OFF(pmix_node_stats_t, mapped);
    OFF(pmix_node_stats_t, sample_time);
    OFF(pmix_node_stats_t, diskstats);
    OFF(pmix_node_stats_t, ndiskstats);
    OFF(pmix_node_stats_t, netstats);
    OFF(pmix_node_stats_t, nnetstats);
}

static void server_module_layout(void)
{
    SIZE(pmix_server_module_t);
    OFF(pmix_server_module_t, client_connected);
    OFF(pmix_server_module_t, client_finalized);
    OFF(pmix_server_module_t, abort);
    OFF(pmix_server_module_t, fence_nb);
    OFF(pmix_server_module_t, direct_modex);
    OFF(pmix_server_module_t, publish);
    OFF(pmix_server_module_t, lookup);
    OFF(pmix_server_module_t, unpublish);
    OFF(pmix_server_module_t, spawn);
    OFF(pmix_server_module_t, connect);
    OFF(pmix_server_module_t, disconnect);
    OFF(pmix_server_module_t, register_events);
    OFF(pmix_server_module_t, deregister_events);
    OFF(pmix_server_module_t, listener);
    OFF(pmix_server_module_t, notify_event);
    OFF(pmix_server_module_t, query);
    OFF(pmix_server_module_t, tool_connected);
    OFF(pmix_server_module_t, log);
    OFF(pmix_server_module_t, allocate);
    OFF(pmix_server_module_t, job_control);
    OFF(pmix_server_module_t, monitor);
    OFF(pmix_server_module_t, get_credential);
    OFF(pmix_server_module_t, validate_credential);
    OFF(pmix_server_module_t, iof_pull);
    OFF(pmix_server_module_t, push_stdin);
    OFF(pmix_server_module_t, group);
    OFF(pmix_server_module_t, fabric);
    OFF(pmix_server_module_t, client_connected2);
}

static void enumerations(void)
{
    ENUM(PMIX_EQUAL);
    ENUM(PMIX_VALUE1_GREATER);
    ENUM(PMIX_VALUE2_GREATER);
    ENUM(PMIX_VALUE_TYPE_DIFFERENT);
    ENUM(PMIX_VALUE_INCOMPATIBLE_OBJECTS);
    ENUM(PMIX_VALUE_COMPARISON_NOT_AVAIL);
    ENUM(PMIX_GROUP_DECLINE);
    ENUM(PMIX_GROUP_ACCEPT);
    ENUM(PMIX_GROUP_CONSTRUCT);
    ENUM(PMIX_GROUP_DESTRUCT);
    ENUM(PMIX_BOOL_TRUE);
    ENUM(PMIX_BOOL_FALSE);
    ENUM(PMIX_NON_BOOL);
    ENUM(PMIX_FABRIC_REQUEST_INFO);
    ENUM(PMIX_FABRIC_UPDATE_INFO);
}

static void constants(void)
{
#define ABI_NUM(n) printf("const %s %lld\n", #n, (long long)(n));
#define ABI_STR(n) printf("string %s %s\n", #n, n);
#include "abi_names.h"
#undef ABI_NUM
#undef ABI_STR
}

int main(void)
{
    scalar_types();
    value_layout();
    struct_layouts();
    server_module_layout();
    enumerations();
    constants();
    return 0;
}
