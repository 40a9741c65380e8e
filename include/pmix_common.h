/* pmix_common.h - PMIx Standard v4 types, constants, attributes and helpers
 *
 * Written for rdpmix from the PMIx Standard v4.  Every numeric value,
 * attribute string and struct layout equals the one of OpenPMIx 4.2.2 on
 * x86_64 LP64 (the values binaries built against libpmix.so.2 were compiled
 * with); tests/abi checks this mechanically.  Memory that crosses the API
 * is always allocated with the C library's malloc/calloc and released with
 * free, so callers may allocate or free these structures themselves.
 */
#ifndef PMIx_COMMON_H
#define PMIx_COMMON_H
/* the deprecated declarations live in this header too */
#define PMIx_DEPRECATED_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

extern char **environ;

/* symbols of the public API are always exported from libpmix */
#define PMIX_HAVE_VISIBILITY 1
#define PMIX_EXPORT          __attribute__((__visibility__("default")))

#include <pmix_version.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* ==================================================================== */
/*  Identifiers                                                         */
/* ==================================================================== */

#define PMIX_MAX_NSLEN  255
#define PMIX_MAX_KEYLEN 511

typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];

typedef uint32_t pmix_rank_t;

/* special rank values */
#define PMIX_RANK_UNDEF       UINT32_MAX         /* rank not known / job level */
#define PMIX_RANK_WILDCARD    (UINT32_MAX - 1)   /* every rank of the nspace */
#define PMIX_RANK_LOCAL_NODE  (UINT32_MAX - 2)   /* every rank on this node */
#define PMIX_RANK_INVALID     (UINT32_MAX - 3)
#define PMIX_RANK_LOCAL_PEERS (UINT32_MAX - 4)   /* nspace peers on this node */
/* real ranks are strictly below this boundary */
#define PMIX_RANK_VALID       (UINT32_MAX - 50)
#define PMIX_RANK_IS_VALID(r) ((r) < PMIX_RANK_VALID)

/* an app number meaning "every app of the job" */
#define PMIX_APP_WILDCARD UINT32_MAX

/* environment variable names with a Standard meaning */
#define PMIX_LAUNCHER_RNDZ_URI  "PMIX_LAUNCHER_RNDZ_URI"
#define PMIX_LAUNCHER_RNDZ_FILE "PMIX_LAUNCHER_RNDZ_FILE"
#define PMIX_KEEPALIVE_PIPE     "PMIX_KEEPALIVE_PIPE"

/* ==================================================================== */
/*  Attributes (reserved keys).  The comment names the value's type.    */
/* ==================================================================== */

#define PMIX_ATTR_UNDEF                          "pmix.undef"

#define PMIX_EXTERNAL_PROGRESS                   "pmix.evext"        /* bool */
#define PMIX_SERVER_TOOL_SUPPORT                 "pmix.srvr.tool"    /* bool */
#define PMIX_SERVER_REMOTE_CONNECTIONS           "pmix.srvr.remote"  /* bool */
#define PMIX_SERVER_SYSTEM_SUPPORT               "pmix.srvr.sys"     /* bool */
#define PMIX_SERVER_SESSION_SUPPORT              "pmix.srvr.sess"    /* bool */
#define PMIX_SERVER_TMPDIR                       "pmix.srvr.tmpdir"  /* char* */
#define PMIX_SYSTEM_TMPDIR                       "pmix.sys.tmpdir"   /* char* */
#define PMIX_SERVER_SHARE_TOPOLOGY               "pmix.srvr.share"   /* bool */
#define PMIX_SERVER_ENABLE_MONITORING            "pmix.srv.monitor"  /* bool */
#define PMIX_SERVER_NSPACE                       "pmix.srv.nspace"   /* char* */
#define PMIX_SERVER_RANK                         "pmix.srv.rank"     /* pmix_rank_t */
#define PMIX_SERVER_GATEWAY                      "pmix.srv.gway"     /* bool */
#define PMIX_SERVER_SCHEDULER                    "pmix.srv.sched"    /* bool */
#define PMIX_SERVER_START_TIME                   "pmix.srv.strtime"  /* char* */
#define PMIX_HOMOGENEOUS_SYSTEM                  "pmix.homo"         /* bool */
#define PMIX_SINGLETON                           "pmix.singleton"    /* char* */
#define PMIX_BIND_PROGRESS_THREAD                "pmix.bind.pt"      /* char* */
#define PMIX_BIND_REQUIRED                       "pmix.bind.reqd"    /* bool */

#define PMIX_TOOL_NSPACE                         "pmix.tool.nspace"  /* char* */
#define PMIX_TOOL_RANK                           "pmix.tool.rank"    /* uint32_t */
#define PMIX_SERVER_PIDINFO                      "pmix.srvr.pidinfo" /* pid_t */
#define PMIX_CONNECT_TO_SYSTEM                   "pmix.cnct.sys"     /* bool */
#define PMIX_CONNECT_SYSTEM_FIRST                "pmix.cnct.sys.first" /* bool */
#define PMIX_SERVER_URI                          "pmix.srvr.uri"     /* char* */
#define PMIX_MYSERVER_URI                        "pmix.mysrvr.uri"   /* char* */
#define PMIX_SERVER_HOSTNAME                     "pmix.srvr.host"    /* char* */
#define PMIX_CONNECT_MAX_RETRIES                 "pmix.tool.mretries" /* uint32_t */
#define PMIX_CONNECT_RETRY_DELAY                 "pmix.tool.retry"   /* uint32_t */
#define PMIX_TOOL_DO_NOT_CONNECT                 "pmix.tool.nocon"   /* bool */
#define PMIX_TOOL_CONNECT_OPTIONAL               "pmix.tool.conopt"  /* bool */
#define PMIX_LAUNCHER                            "pmix.tool.launcher" /* bool */
#define PMIX_LAUNCHER_RENDEZVOUS_FILE            "pmix.tool.lncrnd"  /* char* */
#define PMIX_TOOL_ATTACHMENT_FILE                "pmix.tool.attach"  /* char* */
#define PMIX_PRIMARY_SERVER                      "pmix.pri.srvr"     /* bool */
#define PMIX_NOHUP                               "pmix.nohup"        /* bool */
#define PMIX_LAUNCHER_DAEMON                     "pmix.lnch.dmn"     /* char* */
#define PMIX_EXEC_AGENT                          "pmix.exec.agnt"    /* char* */
#define PMIX_LAUNCH_DIRECTIVES                   "pmix.lnch.dirs"    /* pmix_data_array_t* */

#define PMIX_USERID                              "pmix.euid"         /* uint32_t */
#define PMIX_GRPID                               "pmix.egid"         /* uint32_t */
#define PMIX_VERSION_INFO                        "pmix.version"      /* char* */
#define PMIX_REQUESTOR_IS_TOOL                   "pmix.req.tool"     /* bool */
#define PMIX_REQUESTOR_IS_CLIENT                 "pmix.req.client"   /* bool */
#define PMIX_PSET_NAME                           "pmix.pset.nm"      /* char* */
#define PMIX_PSET_NAMES                          "pmix.pset.nms"     /* pmix_data_array_t* */
#define PMIX_PSET_MEMBERS                        "pmix.pset.mems"    /* pmix_data_array_t* */
#define PMIX_REINCARNATION                       "pmix.reinc"        /* uint32_t */

#define PMIX_PROGRAMMING_MODEL                   "pmix.pgm.model"    /* char* */
#define PMIX_MODEL_LIBRARY_NAME                  "pmix.mdl.name"     /* char* */
#define PMIX_MODEL_LIBRARY_VERSION               "pmix.mld.vrs"      /* char* */
#define PMIX_THREADING_MODEL                     "pmix.threads"      /* char* */
#define PMIX_MODEL_NUM_THREADS                   "pmix.mdl.nthrds"   /* uint64_t */
#define PMIX_MODEL_NUM_CPUS                      "pmix.mdl.ncpu"     /* uint64_t */
#define PMIX_MODEL_CPU_TYPE                      "pmix.mdl.cputype"  /* char* */
#define PMIX_MODEL_PHASE_NAME                    "pmix.mdl.phase"    /* char* */
#define PMIX_MODEL_PHASE_TYPE                    "pmix.mdl.ptype"    /* char* */
#define PMIX_MODEL_AFFINITY_POLICY               "pmix.mdl.tap"      /* char* */

#define PMIX_TCP_REPORT_URI                      "pmix.tcp.repuri"   /* char* */
#define PMIX_TCP_URI                             "pmix.tcp.uri"      /* char* */
#define PMIX_TCP_IF_INCLUDE                      "pmix.tcp.ifinclude" /* char* */
#define PMIX_TCP_IF_EXCLUDE                      "pmix.tcp.ifexclude" /* char* */
#define PMIX_TCP_IPV4_PORT                       "pmix.tcp.ipv4"     /* int */
#define PMIX_TCP_IPV6_PORT                       "pmix.tcp.ipv6"     /* int */
#define PMIX_TCP_DISABLE_IPV4                    "pmix.tcp.disipv4"  /* bool */
#define PMIX_TCP_DISABLE_IPV6                    "pmix.tcp.disipv6"  /* bool */

#define PMIX_CPUSET                              "pmix.cpuset"       /* char* */
#define PMIX_CPUSET_BITMAP                       "pmix.bitmap"       /* pmix_cpuset_t* */
#define PMIX_CREDENTIAL                          "pmix.cred"         /* char* */
#define PMIX_SPAWNED                             "pmix.spawned"      /* bool */
#define PMIX_NODE_OVERSUBSCRIBED                 "pmix.ndosub"       /* bool */

#define PMIX_TMPDIR                              "pmix.tmpdir"       /* char* */
#define PMIX_NSDIR                               "pmix.nsdir"        /* char* */
#define PMIX_PROCDIR                             "pmix.pdir"         /* char* */
#define PMIX_TDIR_RMCLEAN                        "pmix.tdir.rmclean" /* bool */

#define PMIX_CLUSTER_ID                          "pmix.clid"         /* char* */
#define PMIX_PROCID                              "pmix.procid"       /* pmix_proc_t* */
#define PMIX_NSPACE                              "pmix.nspace"       /* char* */
#define PMIX_JOBID                               "pmix.jobid"        /* char* */
#define PMIX_APPNUM                              "pmix.appnum"       /* uint32_t */
#define PMIX_RANK                                "pmix.rank"         /* pmix_rank_t */
#define PMIX_GLOBAL_RANK                         "pmix.grank"        /* pmix_rank_t */
#define PMIX_APP_RANK                            "pmix.apprank"      /* pmix_rank_t */
#define PMIX_NPROC_OFFSET                        "pmix.offset"       /* pmix_rank_t */
#define PMIX_LOCAL_RANK                          "pmix.lrank"        /* uint16_t */
#define PMIX_NODE_RANK                           "pmix.nrank"        /* uint16_t */
#define PMIX_PACKAGE_RANK                        "pmix.pkgrank"      /* uint16_t */
#define PMIX_LOCALLDR                            "pmix.lldr"         /* pmix_rank_t */
#define PMIX_APPLDR                              "pmix.aldr"         /* pmix_rank_t */
#define PMIX_PROC_PID                            "pmix.ppid"         /* pid_t */
#define PMIX_SESSION_ID                          "pmix.session.id"   /* uint32_t */
#define PMIX_NODE_LIST                           "pmix.nlist"        /* char* */
#define PMIX_ALLOCATED_NODELIST                  "pmix.alist"        /* char* */
#define PMIX_HOSTNAME                            "pmix.hname"        /* char* */
#define PMIX_HOSTNAME_ALIASES                    "pmix.alias"        /* char* */
#define PMIX_HOSTNAME_KEEP_FQDN                  "pmix.fqdn"         /* bool */
#define PMIX_NODEID                              "pmix.nodeid"       /* uint32_t */
#define PMIX_LOCAL_PEERS                         "pmix.lpeers"       /* char* */
#define PMIX_LOCAL_PROCS                         "pmix.lprocs"       /* pmix_data_array_t* */
#define PMIX_LOCAL_CPUSETS                       "pmix.lcpus"        /* char* */
#define PMIX_PARENT_ID                           "pmix.parent"       /* pmix_proc_t* */
#define PMIX_EXIT_CODE                           "pmix.exit.code"    /* int */

#define PMIX_UNIV_SIZE                           "pmix.univ.size"    /* uint32_t */
#define PMIX_JOB_SIZE                            "pmix.job.size"     /* uint32_t */
#define PMIX_JOB_NUM_APPS                        "pmix.job.napps"    /* uint32_t */
#define PMIX_APP_SIZE                            "pmix.app.size"     /* uint32_t */
#define PMIX_LOCAL_SIZE                          "pmix.local.size"   /* uint32_t */
#define PMIX_NODE_SIZE                           "pmix.node.size"    /* uint32_t */
#define PMIX_MAX_PROCS                           "pmix.max.size"     /* uint32_t */
#define PMIX_NUM_SLOTS                           "pmix.num.slots"    /* uint32_t */
#define PMIX_NUM_NODES                           "pmix.num.nodes"    /* uint32_t */
#define PMIX_NUM_ALLOCATED_NODES                 "pmix.num.anodes"   /* uint32_t */

#define PMIX_AVAIL_PHYS_MEMORY                   "pmix.pmem"         /* uint64_t */
#define PMIX_DAEMON_MEMORY                       "pmix.dmn.mem"      /* float */
#define PMIX_CLIENT_AVG_MEMORY                   "pmix.cl.mem.avg"   /* float */

#define PMIX_TOPOLOGY2                           "pmix.topo2"        /* pmix_topology_t* */
#define PMIX_LOCALITY_STRING                     "pmix.locstr"       /* char* */

#define PMIX_COLLECT_DATA                        "pmix.collect"      /* bool */
#define PMIX_ALL_CLONES_PARTICIPATE              "pmix.clone.part"   /* bool */
#define PMIX_COLLECT_GENERATED_JOB_INFO          "pmix.collect.gen"  /* bool */
#define PMIX_TIMEOUT                             "pmix.timeout"      /* int */
#define PMIX_IMMEDIATE                           "pmix.immediate"    /* bool */
#define PMIX_WAIT                                "pmix.wait"         /* int */
#define PMIX_NOTIFY_COMPLETION                   "pmix.notecomp"     /* bool */
#define PMIX_RANGE                               "pmix.range"        /* pmix_data_range_t */
#define PMIX_PERSISTENCE                         "pmix.persist"      /* pmix_persistence_t */
#define PMIX_DATA_SCOPE                          "pmix.scope"        /* pmix_scope_t */
#define PMIX_OPTIONAL                            "pmix.optional"     /* bool */
#define PMIX_GET_STATIC_VALUES                   "pmix.get.static"   /* bool */
#define PMIX_GET_POINTER_VALUES                  "pmix.get.pntrs"    /* bool */
#define PMIX_EMBED_BARRIER                       "pmix.embed.barrier" /* bool */
#define PMIX_JOB_TERM_STATUS                     "pmix.job.term.status" /* pmix_status_t */
#define PMIX_PROC_TERM_STATUS                    "pmix.proc.term.status" /* pmix_status_t */
#define PMIX_PROC_STATE_STATUS                   "pmix.proc.state"   /* pmix_proc_state_t */
#define PMIX_GET_REFRESH_CACHE                   "pmix.get.refresh"  /* bool */
#define PMIX_ACCESS_PERMISSIONS                  "pmix.aperms"       /* pmix_data_array_t* */
#define PMIX_ACCESS_USERIDS                      "pmix.auids"        /* pmix_data_array_t* */
#define PMIX_ACCESS_GRPIDS                       "pmix.agids"        /* pmix_data_array_t* */
#define PMIX_WAIT_FOR_CONNECTION                 "pmix.wait.conn"    /* bool */
#define PMIX_QUALIFIED_VALUE                     "pmix.qual.val"     /* pmix_data_array_t* */

#define PMIX_REGISTER_NODATA                     "pmix.reg.nodata"   /* bool */
#define PMIX_NODE_MAP                            "pmix.nmap"         /* char* */
#define PMIX_NODE_MAP_RAW                        "pmix.nmap.raw"     /* char* */
#define PMIX_PROC_MAP                            "pmix.pmap"         /* char* */
#define PMIX_PROC_MAP_RAW                        "pmix.pmap.raw"     /* char* */
#define PMIX_ANL_MAP                             "pmix.anlmap"       /* char* */
#define PMIX_APP_MAP_TYPE                        "pmix.apmap.type"   /* char* */
#define PMIX_APP_MAP_REGEX                       "pmix.apmap.regex"  /* char* */
#define PMIX_REQUIRED_KEY                        "pmix.req.key"      /* char* */
#define PMIX_LOCAL_COLLECTIVE_STATUS             "pmix.loc.col.st"   /* pmix_status_t */
#define PMIX_SORTED_PROC_ARRAY                   "pmix.sorted.parr"  /* bool */

#define PMIX_EVENT_HDLR_NAME                     "pmix.evname"       /* char* */
#define PMIX_EVENT_HDLR_FIRST                    "pmix.evfirst"      /* bool */
#define PMIX_EVENT_HDLR_LAST                     "pmix.evlast"       /* bool */
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY        "pmix.evfirstcat"   /* bool */
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY         "pmix.evlastcat"    /* bool */
#define PMIX_EVENT_HDLR_BEFORE                   "pmix.evbefore"     /* char* */
#define PMIX_EVENT_HDLR_AFTER                    "pmix.evafter"      /* char* */
#define PMIX_EVENT_HDLR_PREPEND                  "pmix.evprepend"    /* bool */
#define PMIX_EVENT_HDLR_APPEND                   "pmix.evappend"     /* bool */
#define PMIX_EVENT_CUSTOM_RANGE                  "pmix.evrange"      /* pmix_data_array_t* */
#define PMIX_EVENT_AFFECTED_PROC                 "pmix.evproc"       /* pmix_proc_t* */
#define PMIX_EVENT_AFFECTED_PROCS                "pmix.evaffected"   /* pmix_data_array_t* */
#define PMIX_EVENT_NON_DEFAULT                   "pmix.evnondef"     /* bool */
#define PMIX_EVENT_RETURN_OBJECT                 "pmix.evobject"     /* void* */
#define PMIX_EVENT_DO_NOT_CACHE                  "pmix.evnocache"    /* bool */
#define PMIX_EVENT_SILENT_TERMINATION            "pmix.evsilentterm" /* bool */
#define PMIX_EVENT_PROXY                         "pmix.evproxy"      /* pmix_proc_t* */
#define PMIX_EVENT_TEXT_MESSAGE                  "pmix.evtext"       /* char* */
#define PMIX_EVENT_TIMESTAMP                     "pmix.evtstamp"     /* time_t */
#define PMIX_EVENT_ONESHOT                       "pmix.evone"        /* bool */

#define PMIX_EVENT_TERMINATE_SESSION             "pmix.evterm.sess"  /* bool */
#define PMIX_EVENT_TERMINATE_JOB                 "pmix.evterm.job"   /* bool */
#define PMIX_EVENT_TERMINATE_NODE                "pmix.evterm.node"  /* bool */
#define PMIX_EVENT_TERMINATE_PROC                "pmix.evterm.proc"  /* bool */
#define PMIX_EVENT_ACTION_TIMEOUT                "pmix.evtimeout"    /* int */

#define PMIX_PERSONALITY                         "pmix.pers"         /* char* */
#define PMIX_HOST                                "pmix.host"         /* char* */
#define PMIX_HOSTFILE                            "pmix.hostfile"     /* char* */
#define PMIX_ADD_HOST                            "pmix.addhost"      /* char* */
#define PMIX_ADD_HOSTFILE                        "pmix.addhostfile"  /* char* */
#define PMIX_PREFIX                              "pmix.prefix"       /* char* */
#define PMIX_WDIR                                "pmix.wdir"         /* char* */
#define PMIX_WDIR_USER_SPECIFIED                 "pmix.wdir.user"    /* bool */
#define PMIX_DISPLAY_MAP                         "pmix.dispmap"      /* bool */
#define PMIX_DISPLAY_MAP_DETAILED                "pmix.dispmapdet"   /* bool */
#define PMIX_DISPLAY_ALLOCATION                  "pmix.dispalloc"    /* bool */
#define PMIX_DISPLAY_TOPOLOGY                    "pmix.disptopo"     /* char* */
#define PMIX_PPR                                 "pmix.ppr"          /* char* */
#define PMIX_MAPBY                               "pmix.mapby"        /* char* */
#define PMIX_RANKBY                              "pmix.rankby"       /* char* */
#define PMIX_BINDTO                              "pmix.bindto"       /* char* */
#define PMIX_PRELOAD_BIN                         "pmix.preloadbin"   /* bool */
#define PMIX_PRELOAD_FILES                       "pmix.preloadfiles" /* char* */
#define PMIX_STDIN_TGT                           "pmix.stdin"        /* pmix_proc_t* */
#define PMIX_DEBUGGER_DAEMONS                    "pmix.debugger"     /* bool */
#define PMIX_COSPAWN_APP                         "pmix.cospawn"      /* bool */
#define PMIX_COLOCATE_PROCS                      "pmix.colproc"      /* pmix_data_array_t* */
#define PMIX_COLOCATE_NPERPROC                   "pmix.colnum.proc"  /* uint16_t */
#define PMIX_COLOCATE_NPERNODE                   "pmix.colnum.node"  /* uint16_t */
#define PMIX_SET_SESSION_CWD                     "pmix.ssncwd"       /* bool */
#define PMIX_INDEX_ARGV                          "pmix.indxargv"     /* bool */
#define PMIX_CPUS_PER_PROC                       "pmix.cpuperproc"   /* uint32_t */
#define PMIX_NO_PROCS_ON_HEAD                    "pmix.nolocal"      /* bool */
#define PMIX_NO_OVERSUBSCRIBE                    "pmix.noover"       /* bool */
#define PMIX_REPORT_BINDINGS                     "pmix.repbind"      /* bool */
#define PMIX_CPU_LIST                            "pmix.cpulist"      /* char* */
#define PMIX_JOB_RECOVERABLE                     "pmix.recover"      /* bool */
#define PMIX_JOB_CONTINUOUS                      "pmix.continuous"   /* bool */
#define PMIX_MAX_RESTARTS                        "pmix.maxrestarts"  /* uint32_t */
#define PMIX_FWD_STDIN                           "pmix.fwd.stdin"    /* bool */
#define PMIX_FWD_STDOUT                          "pmix.fwd.stdout"   /* bool */
#define PMIX_FWD_STDERR                          "pmix.fwd.stderr"   /* bool */
#define PMIX_FWD_STDDIAG                         "pmix.fwd.stddiag"  /* bool */
#define PMIX_SPAWN_TOOL                          "pmix.spwn.tool"    /* bool */
#define PMIX_CMD_LINE                            "pmix.cmd.line"     /* char* */
#define PMIX_FORKEXEC_AGENT                      "pmix.fe.agnt"      /* char* */
#define PMIX_JOB_TIMEOUT                         "pmix.job.time"     /* int */
#define PMIX_SPAWN_TIMEOUT                       "pmix.sp.time"      /* int */
#define PMIX_TIMEOUT_STACKTRACES                 "pmix.tim.stack"    /* bool */
#define PMIX_TIMEOUT_REPORT_STATE                "pmix.tim.state"    /* bool */
#define PMIX_APP_ARGV                            "pmix.app.argv"     /* char* */
#define PMIX_NOTIFY_JOB_EVENTS                   "pmix.note.jev"     /* bool */
#define PMIX_NOTIFY_PROC_TERMINATION             "pmix.noteproc"     /* bool */
#define PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION    "pmix.noteabproc"   /* bool */
#define PMIX_ENVARS_HARVESTED                    "pmix.evar.hvstd"   /* bool */
#define PMIX_RUNTIME_OPTIONS                     "pmix.runopt"       /* char* */
#define PMIX_ABORT_NON_ZERO_TERM                 "pmix.abnz"         /* bool */
#define PMIX_DO_NOT_LAUNCH                       "pmix.dnl"          /* bool */
#define PMIX_SHOW_LAUNCH_PROGRESS                "pmix.showprog"     /* bool */
#define PMIX_AGGREGATE_HELP                      "pmix.agg.help"     /* bool */
#define PMIX_REPORT_CHILD_SEP                    "pmix.rptchildsep"  /* bool */

#define PMIX_QUERY_SUPPORTED_KEYS                "pmix.qry.keys"     /* char* */
#define PMIX_QUERY_NAMESPACES                    "pmix.qry.ns"       /* char* */
#define PMIX_QUERY_NAMESPACE_INFO                "pmix.qry.nsinfo"   /* pmix_data_array_t* */
#define PMIX_QUERY_JOB_STATUS                    "pmix.qry.jst"      /* pmix_status_t */
#define PMIX_QUERY_QUEUE_LIST                    "pmix.qry.qlst"     /* char* */
#define PMIX_QUERY_QUEUE_STATUS                  "pmix.qry.qst"      /* pmix_data_array_t* */
#define PMIX_QUERY_PROC_TABLE                    "pmix.qry.ptable"   /* pmix_data_array_t* */
#define PMIX_QUERY_LOCAL_PROC_TABLE              "pmix.qry.lptable"  /* pmix_data_array_t* */
#define PMIX_QUERY_AUTHORIZATIONS                "pmix.qry.auths"    /* pmix_data_array_t* */
#define PMIX_QUERY_SPAWN_SUPPORT                 "pmix.qry.spawn"    /* char* */
#define PMIX_QUERY_DEBUG_SUPPORT                 "pmix.qry.debug"    /* char* */
#define PMIX_QUERY_MEMORY_USAGE                  "pmix.qry.mem"      /* pmix_data_array_t* */
#define PMIX_QUERY_ALLOC_STATUS                  "pmix.query.alloc"  /* char* */
#define PMIX_TIME_REMAINING                      "pmix.time.remaining" /* uint32_t */
#define PMIX_QUERY_NUM_PSETS                     "pmix.qry.psetnum"  /* size_t */
#define PMIX_QUERY_PSET_NAMES                    "pmix.qry.psets"    /* char* */
#define PMIX_QUERY_PSET_MEMBERSHIP               "pmix.qry.pmems"    /* pmix_data_array_t* */
#define PMIX_QUERY_NUM_GROUPS                    "pmix.qry.pgrpnum"  /* size_t */
#define PMIX_QUERY_GROUP_NAMES                   "pmix.qry.pgrp"     /* pmix_data_array_t* */
#define PMIX_QUERY_GROUP_MEMBERSHIP              "pmix.qry.pgrpmems" /* pmix_data_array_t* */
#define PMIX_QUERY_ATTRIBUTE_SUPPORT             "pmix.qry.attrs"    /* pmix_data_array_t* */
#define PMIX_CLIENT_FUNCTIONS                    "pmix.client.fns"   /* char* */
#define PMIX_SERVER_FUNCTIONS                    "pmix.srvr.fns"     /* char* */
#define PMIX_TOOL_FUNCTIONS                      "pmix.tool.fns"     /* char* */
#define PMIX_HOST_FUNCTIONS                      "pmix.host.fns"     /* char* */
#define PMIX_QUERY_AVAIL_SERVERS                 "pmix.qry.asrvrs"   /* pmix_data_array_t* */
#define PMIX_QUERY_QUALIFIERS                    "pmix.qry.quals"    /* pmix_data_array_t* */
#define PMIX_QUERY_RESULTS                       "pmix.qry.res"      /* pmix_data_array_t* */

#define PMIX_QUERY_REFRESH_CACHE                 "pmix.qry.rfsh"     /* bool */
#define PMIX_QUERY_LOCAL_ONLY                    "pmix.qry.local"    /* bool */
#define PMIX_QUERY_REPORT_AVG                    "pmix.qry.avg"      /* bool */
#define PMIX_QUERY_REPORT_MINMAX                 "pmix.qry.minmax"   /* bool */
#define PMIX_CLIENT_ATTRIBUTES                   "pmix.client.attrs" /* char* */
#define PMIX_SERVER_ATTRIBUTES                   "pmix.srvr.attrs"   /* char* */
#define PMIX_HOST_ATTRIBUTES                     "pmix.host.attrs"   /* char* */
#define PMIX_TOOL_ATTRIBUTES                     "pmix.tool.attrs"   /* char* */
#define PMIX_QUERY_SUPPORTED_QUALIFIERS          "pmix.qry.quals"    /* bool */

#define PMIX_SESSION_INFO                        "pmix.ssn.info"     /* bool */
#define PMIX_JOB_INFO                            "pmix.job.info"     /* bool */
#define PMIX_APP_INFO                            "pmix.app.info"     /* bool */
#define PMIX_NODE_INFO                           "pmix.node.info"    /* bool */

#define PMIX_SESSION_INFO_ARRAY                  "pmix.ssn.arr"      /* pmix_data_array_t* */
#define PMIX_JOB_INFO_ARRAY                      "pmix.job.arr"      /* pmix_data_array_t* */
#define PMIX_APP_INFO_ARRAY                      "pmix.app.arr"      /* pmix_data_array_t* */
#define PMIX_PROC_INFO_ARRAY                     "pmix.pdata"        /* pmix_data_array_t* */
#define PMIX_NODE_INFO_ARRAY                     "pmix.node.arr"     /* pmix_data_array_t* */
#define PMIX_SERVER_INFO_ARRAY                   "pmix.srv.arr"      /* pmix_data_array_t* */

#define PMIX_LOG_SOURCE                          "pmix.log.source"   /* pmix_proc_t* */
#define PMIX_LOG_STDERR                          "pmix.log.stderr"   /* char* */
#define PMIX_LOG_STDOUT                          "pmix.log.stdout"   /* char* */
#define PMIX_LOG_SYSLOG                          "pmix.log.syslog"   /* char* */
#define PMIX_LOG_LOCAL_SYSLOG                    "pmix.log.lsys"     /* char* */
#define PMIX_LOG_GLOBAL_SYSLOG                   "pmix.log.gsys"     /* char* */
#define PMIX_LOG_SYSLOG_PRI                      "pmix.log.syspri"   /* int */

#define PMIX_LOG_TIMESTAMP                       "pmix.log.tstmp"    /* time_t */
#define PMIX_LOG_GENERATE_TIMESTAMP              "pmix.log.gtstmp"   /* bool */
#define PMIX_LOG_TAG_OUTPUT                      "pmix.log.tag"      /* bool */
#define PMIX_LOG_TIMESTAMP_OUTPUT                "pmix.log.tsout"    /* bool */
#define PMIX_LOG_XML_OUTPUT                      "pmix.log.xml"      /* bool */
#define PMIX_LOG_ONCE                            "pmix.log.once"     /* bool */
#define PMIX_LOG_MSG                             "pmix.log.msg"      /* pmix_byte_object_t */
#define PMIX_LOG_KEY                             "pmix.log.key"      /* char* */
#define PMIX_LOG_VAL                             "pmix.log.val"      /* char* */
#define PMIX_LOG_AGG                             "pmix.log.agg"      /* bool */

#define PMIX_LOG_EMAIL                           "pmix.log.email"    /* pmix_data_array_t* */
#define PMIX_LOG_EMAIL_ADDR                      "pmix.log.emaddr"   /* char* */
#define PMIX_LOG_EMAIL_SENDER_ADDR               "pmix.log.emfaddr"  /* char* */
#define PMIX_LOG_EMAIL_SUBJECT                   "pmix.log.emsub"    /* char* */
#define PMIX_LOG_EMAIL_MSG                       "pmix.log.emmsg"    /* char* */
#define PMIX_LOG_EMAIL_SERVER                    "pmix.log.esrvr"    /* char* */
#define PMIX_LOG_EMAIL_SRVR_PORT                 "pmix.log.esrvrprt" /* int32_t */

#define PMIX_LOG_GLOBAL_DATASTORE                "pmix.log.gstore"   /* bool */
#define PMIX_LOG_JOB_RECORD                      "pmix.log.jrec"     /* bool */
#define PMIX_LOG_PROC_TERMINATION                "pmix.logproc"      /* bool */
#define PMIX_LOG_PROC_ABNORMAL_TERMINATION       "pmix.logabproc"    /* bool */
#define PMIX_LOG_JOB_EVENTS                      "pmix.log.jev"      /* bool */
#define PMIX_LOG_COMPLETION                      "pmix.logcomp"      /* bool */

#define PMIX_DEBUG_STOP_ON_EXEC                  "pmix.dbg.exec"     /* varies */
#define PMIX_DEBUG_STOP_IN_INIT                  "pmix.dbg.init"     /* varies */
#define PMIX_DEBUG_STOP_IN_APP                   "pmix.dbg.notify"   /* varies */
#define PMIX_BREAKPOINT                          "pmix.brkpnt"       /* char* */
#define PMIX_DEBUG_TARGET                        "pmix.dbg.tgt"      /* pmix_proc_t* */
#define PMIX_DEBUG_DAEMONS_PER_PROC              "pmix.dbg.dpproc"   /* uint16_t */
#define PMIX_DEBUG_DAEMONS_PER_NODE              "pmix.dbg.dpnd"     /* uint16_t */

#define PMIX_RM_NAME                             "pmix.rm.name"      /* char* */
#define PMIX_RM_VERSION                          "pmix.rm.version"   /* char* */

#define PMIX_SET_ENVAR                           "pmix.envar.set"    /* pmix_envar_t* */
#define PMIX_ADD_ENVAR                           "pmix.envar.add"    /* pmix_envar_t* */
#define PMIX_UNSET_ENVAR                         "pmix.envar.unset"  /* char* */
#define PMIX_PREPEND_ENVAR                       "pmix.envar.prepnd" /* pmix_envar_t* */
#define PMIX_APPEND_ENVAR                        "pmix.envar.appnd"  /* pmix_envar_t* */
#define PMIX_FIRST_ENVAR                         "pmix.envar.first"  /* pmix_envar_t* */

#define PMIX_ALLOC_REQ_ID                        "pmix.alloc.reqid"  /* char* */
#define PMIX_ALLOC_ID                            "pmix.alloc.id"     /* char* */
#define PMIX_ALLOC_NUM_NODES                     "pmix.alloc.nnodes" /* uint64_t */
#define PMIX_ALLOC_NODE_LIST                     "pmix.alloc.nlist"  /* char* */
#define PMIX_ALLOC_NUM_CPUS                      "pmix.alloc.ncpus"  /* uint64_t */
#define PMIX_ALLOC_NUM_CPU_LIST                  "pmix.alloc.ncpulist" /* char* */
#define PMIX_ALLOC_CPU_LIST                      "pmix.alloc.cpulist" /* char* */
#define PMIX_ALLOC_MEM_SIZE                      "pmix.alloc.msize"  /* float */
#define PMIX_ALLOC_FABRIC                        "pmix.alloc.net"    /* pmix_data_array_t* */
#define PMIX_ALLOC_FABRIC_ID                     "pmix.alloc.netid"  /* char* */
#define PMIX_ALLOC_BANDWIDTH                     "pmix.alloc.bw"     /* float */
#define PMIX_ALLOC_FABRIC_QOS                    "pmix.alloc.netqos" /* char* */
#define PMIX_ALLOC_TIME                          "pmix.alloc.time"   /* uint32_t */
#define PMIX_ALLOC_FABRIC_TYPE                   "pmix.alloc.nettype" /* char* */
#define PMIX_ALLOC_FABRIC_PLANE                  "pmix.alloc.netplane" /* char* */
#define PMIX_ALLOC_FABRIC_ENDPTS                 "pmix.alloc.endpts" /* size_t */
#define PMIX_ALLOC_FABRIC_ENDPTS_NODE            "pmix.alloc.endpts.nd" /* size_t */
#define PMIX_ALLOC_FABRIC_SEC_KEY                "pmix.alloc.nsec"   /* pmix_byte_object_t */
#define PMIX_ALLOC_QUEUE                         "pmix.alloc.queue"  /* char* */

#define PMIX_JOB_CTRL_ID                         "pmix.jctrl.id"     /* char* */
#define PMIX_JOB_CTRL_PAUSE                      "pmix.jctrl.pause"  /* bool */
#define PMIX_JOB_CTRL_RESUME                     "pmix.jctrl.resume" /* bool */
#define PMIX_JOB_CTRL_CANCEL                     "pmix.jctrl.cancel" /* char* */
#define PMIX_JOB_CTRL_KILL                       "pmix.jctrl.kill"   /* bool */
#define PMIX_JOB_CTRL_RESTART                    "pmix.jctrl.restart" /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT                 "pmix.jctrl.ckpt"   /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT_EVENT           "pmix.jctrl.ckptev" /* bool */
#define PMIX_JOB_CTRL_CHECKPOINT_SIGNAL          "pmix.jctrl.ckptsig" /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT         "pmix.jctrl.ckptsig" /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_METHOD          "pmix.jctrl.ckmethod" /* pmix_data_array_t* */
#define PMIX_JOB_CTRL_SIGNAL                     "pmix.jctrl.sig"    /* int */
#define PMIX_JOB_CTRL_PROVISION                  "pmix.jctrl.pvn"    /* char* */
#define PMIX_JOB_CTRL_PROVISION_IMAGE            "pmix.jctrl.pvnimg" /* char* */
#define PMIX_JOB_CTRL_PREEMPTIBLE                "pmix.jctrl.preempt" /* bool */
#define PMIX_JOB_CTRL_TERMINATE                  "pmix.jctrl.term"   /* bool */
#define PMIX_REGISTER_CLEANUP                    "pmix.reg.cleanup"  /* char* */
#define PMIX_REGISTER_CLEANUP_DIR                "pmix.reg.cleanupdir" /* char* */
#define PMIX_CLEANUP_RECURSIVE                   "pmix.clnup.recurse" /* bool */
#define PMIX_CLEANUP_EMPTY                       "pmix.clnup.empty"  /* bool */
#define PMIX_CLEANUP_IGNORE                      "pmix.clnup.ignore" /* char* */
#define PMIX_CLEANUP_LEAVE_TOPDIR                "pmix.clnup.lvtop"  /* bool */

#define PMIX_MONITOR_ID                          "pmix.monitor.id"   /* char* */
#define PMIX_MONITOR_CANCEL                      "pmix.monitor.cancel" /* char* */
#define PMIX_MONITOR_APP_CONTROL                 "pmix.monitor.appctrl" /* bool */
#define PMIX_MONITOR_HEARTBEAT                   "pmix.monitor.mbeat" /* bool */
#define PMIX_SEND_HEARTBEAT                      "pmix.monitor.beat" /* bool */
#define PMIX_MONITOR_HEARTBEAT_TIME              "pmix.monitor.btime" /* uint32_t */
#define PMIX_MONITOR_HEARTBEAT_DROPS             "pmix.monitor.bdrop" /* uint32_t */
#define PMIX_MONITOR_FILE                        "pmix.monitor.fmon" /* char* */
#define PMIX_MONITOR_FILE_SIZE                   "pmix.monitor.fsize" /* bool */
#define PMIX_MONITOR_FILE_ACCESS                 "pmix.monitor.faccess" /* char* */
#define PMIX_MONITOR_FILE_MODIFY                 "pmix.monitor.fmod" /* char* */
#define PMIX_MONITOR_FILE_CHECK_TIME             "pmix.monitor.ftime" /* uint32_t */
#define PMIX_MONITOR_FILE_DROPS                  "pmix.monitor.fdrop" /* uint32_t */

#define PMIX_CRED_TYPE                           "pmix.sec.ctype"    /* char* */
#define PMIX_CRYPTO_KEY                          "pmix.sec.key"      /* pmix_byte_object_t */

#define PMIX_IOF_CACHE_SIZE                      "pmix.iof.csize"    /* uint32_t */
#define PMIX_IOF_DROP_OLDEST                     "pmix.iof.old"      /* bool */
#define PMIX_IOF_DROP_NEWEST                     "pmix.iof.new"      /* bool */
#define PMIX_IOF_BUFFERING_SIZE                  "pmix.iof.bsize"    /* uint32_t */
#define PMIX_IOF_BUFFERING_TIME                  "pmix.iof.btime"    /* uint32_t */
#define PMIX_IOF_COMPLETE                        "pmix.iof.cmp"      /* bool */
#define PMIX_IOF_PUSH_STDIN                      "pmix.iof.stdin"    /* bool */
#define PMIX_IOF_TAG_OUTPUT                      "pmix.iof.tag"      /* bool */
#define PMIX_IOF_TAG_DETAILED_OUTPUT             "pmix.iof.tagdet"   /* bool */
#define PMIX_IOF_TAG_FULLNAME_OUTPUT             "pmix.iof.tagfull"  /* bool */
#define PMIX_IOF_RANK_OUTPUT                     "pmix.iof.rank"     /* bool */
#define PMIX_IOF_TIMESTAMP_OUTPUT                "pmix.iof.ts"       /* bool */
#define PMIX_IOF_MERGE_STDERR_STDOUT             "pmix.iof.mrg"      /* bool */
#define PMIX_IOF_XML_OUTPUT                      "pmix.iof.xml"      /* bool */
#define PMIX_IOF_OUTPUT_TO_FILE                  "pmix.iof.file"     /* char* */
#define PMIX_IOF_FILE_PATTERN                    "pmix.iof.fpt"      /* bool */
#define PMIX_IOF_OUTPUT_TO_DIRECTORY             "pmix.iof.dir"      /* char* */
#define PMIX_IOF_FILE_ONLY                       "pmix.iof.fonly"    /* bool */
#define PMIX_IOF_COPY                            "pmix.iof.cpy"      /* bool */
#define PMIX_IOF_REDIRECT                        "pmix.iof.redir"    /* bool */
#define PMIX_IOF_LOCAL_OUTPUT                    "pmix.iof.local"    /* bool */
#define PMIX_IOF_OUTPUT_RAW                      "pmix.iof.raw"      /* bool */

#define PMIX_SETUP_APP_ENVARS                    "pmix.setup.env"    /* bool */
#define PMIX_SETUP_APP_NONENVARS                 "pmix.setup.nenv"   /* bool */
#define PMIX_SETUP_APP_ALL                       "pmix.setup.all"    /* bool */

#define PMIX_GROUP_ID                            "pmix.grp.id"       /* char* */
#define PMIX_GROUP_LEADER                        "pmix.grp.ldr"      /* bool */
#define PMIX_GROUP_OPTIONAL                      "pmix.grp.opt"      /* bool */
#define PMIX_GROUP_NOTIFY_TERMINATION            "pmix.grp.notterm"  /* bool */
#define PMIX_GROUP_FT_COLLECTIVE                 "pmix.grp.ftcoll"   /* bool */
#define PMIX_GROUP_MEMBERSHIP                    "pmix.grp.mbrs"     /* pmix_data_array_t* */
#define PMIX_GROUP_ASSIGN_CONTEXT_ID             "pmix.grp.actxid"   /* bool */
#define PMIX_GROUP_CONTEXT_ID                    "pmix.grp.ctxid"    /* size_t */
#define PMIX_GROUP_LOCAL_ONLY                    "pmix.grp.lcl"      /* bool */
#define PMIX_GROUP_ENDPT_DATA                    "pmix.grp.endpt"    /* pmix_byte_object_t */
#define PMIX_GROUP_NAMES                         "pmix.pgrp.nm"      /* pmix_data_array_t* */
#define PMIX_GROUP_INFO                          "pmix.grp.info"     /* pmix_data_array_t* */
#define PMIX_GROUP_LOCAL_CID                     "pmix.grp.lclid"    /* size_t */
#define PMIX_GROUP_ADD_MEMBERS                   "pmix.grp.add"      /* pmix_data_array_t* */

#define PMIX_QUERY_STORAGE_LIST                  "pmix.strg.list"    /* char* */
#define PMIX_STORAGE_CAPACITY_LIMIT              "pmix.strg.cap"     /* uint64_t */
#define PMIX_STORAGE_OBJECT_LIMIT                "pmix.strg.obj"     /* uint64_t */

#define PMIX_STORAGE_ID                          "pmix.strg.id"      /* char* */
#define PMIX_STORAGE_PATH                        "pmix.strg.path"    /* char* */
#define PMIX_STORAGE_TYPE                        "pmix.strg.type"    /* char* */
#define PMIX_STORAGE_ACCESSIBILITY               "pmix.strg.access"  /* pmix_storage_accessibility_t */
#define PMIX_STORAGE_ACCESS_TYPE                 "pmix.strg.atype"   /* pmix_storage_access_type_t */
#define PMIX_STORAGE_BW_CUR                      "pmix.strg.bwcur"   /* double */
#define PMIX_STORAGE_BW_MAX                      "pmix.strg.bwmax"   /* double */
#define PMIX_STORAGE_CAPACITY_USED               "pmix.strg.capuse"  /* double */
#define PMIX_STORAGE_IOPS_CUR                    "pmix.strg.iopscur" /* double */
#define PMIX_STORAGE_IOPS_MAX                    "pmix.strg.iopsmax" /* double */
#define PMIX_STORAGE_MEDIUM                      "pmix.strg.medium"  /* pmix_storage_medium_t */
#define PMIX_STORAGE_MINIMAL_XFER_SIZE           "pmix.strg.minxfer" /* double */
#define PMIX_STORAGE_OBJECTS_USED                "pmix.strg.objuse"  /* uint64_t */
#define PMIX_STORAGE_PERSISTENCE                 "pmix.strg.persist" /* pmix_storage_persistence_t */
#define PMIX_STORAGE_SUGGESTED_XFER_SIZE         "pmix.strg.sxfer"   /* double */
#define PMIX_STORAGE_VERSION                     "pmix.strg.ver"     /* char* */

#define PMIX_FABRIC_COST_MATRIX                  "pmix.fab.cm"       /* pointer */
#define PMIX_FABRIC_GROUPS                       "pmix.fab.grps"     /* char* */
#define PMIX_FABRIC_VENDOR                       "pmix.fab.vndr"     /* char* */
#define PMIX_FABRIC_IDENTIFIER                   "pmix.fab.id"       /* char* */
#define PMIX_FABRIC_INDEX                        "pmix.fab.idx"      /* size_t */
#define PMIX_FABRIC_COORDINATES                  "pmix.fab.coord"    /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_VENDORID              "pmix.fabdev.vendid" /* char* */
#define PMIX_FABRIC_NUM_DEVICES                  "pmix.fab.nverts"   /* size_t */
#define PMIX_FABRIC_DIMS                         "pmix.fab.dims"     /* uint32_t */

#define PMIX_FABRIC_PLANE                        "pmix.fab.plane"    /* char* */

#define PMIX_FABRIC_SWITCH                       "pmix.fab.switch"   /* char* */

#define PMIX_FABRIC_ENDPT                        "pmix.fab.endpt"    /* pmix_data_array_t* */

#define PMIX_FABRIC_SHAPE                        "pmix.fab.shape"    /* pmix_data_array_t* */

#define PMIX_FABRIC_SHAPE_STRING                 "pmix.fab.shapestr" /* char* */

#define PMIX_SWITCH_PEERS                        "pmix.speers"       /* char* */
#define PMIX_FABRIC_DEVICE                       "pmix.fabdev"       /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICES                      "pmix.fab.devs"     /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_NAME                  "pmix.fabdev.nm"    /* char* */
#define PMIX_FABRIC_DEVICE_INDEX                 "pmix.fabdev.idx"   /* uint32_t */

#define PMIX_FABRIC_DEVICE_VENDOR                "pmix.fabdev.vndr"  /* char* */
#define PMIX_FABRIC_DEVICE_BUS_TYPE              "pmix.fabdev.btyp"  /* char* */
#define PMIX_FABRIC_DEVICE_DRIVER                "pmix.fabdev.driver" /* char* */
#define PMIX_FABRIC_DEVICE_FIRMWARE              "pmix.fabdev.fmwr"  /* char* */
#define PMIX_FABRIC_DEVICE_ADDRESS               "pmix.fabdev.addr"  /* char* */
#define PMIX_FABRIC_DEVICE_COORDINATES           "pmix.fab.coord"    /* pmix_geometry_t */
#define PMIX_FABRIC_DEVICE_MTU                   "pmix.fabdev.mtu"   /* size_t */
#define PMIX_FABRIC_DEVICE_SPEED                 "pmix.fabdev.speed" /* size_t */
#define PMIX_FABRIC_DEVICE_STATE                 "pmix.fabdev.state" /* pmix_link_state_t */
#define PMIX_FABRIC_DEVICE_TYPE                  "pmix.fabdev.type"  /* char* */
#define PMIX_FABRIC_DEVICE_PCI_DEVID             "pmix.fabdev.pcidevid" /* char* */

#define PMIX_DEVICE_DISTANCES                    "pmix.dev.dist"     /* pmix_data_array_t* */
#define PMIX_DEVICE_TYPE                         "pmix.dev.type"     /* pmix_device_type_t */
#define PMIX_DEVICE_ID                           "pmix.dev.id"       /* char* */

#define PMIX_MAX_VALUE                           "pmix.descr.maxval" /* varies */
#define PMIX_MIN_VALUE                           "pmix.descr.minval" /* varies */
#define PMIX_ENUM_VALUE                          "pmix.descr.enum"   /* char* */
#define PMIX_QUERY_STABLE_ABI_VERSION            "pmix.qry.stabiver" /* char* */
#define PMIX_QUERY_PROVISIONAL_ABI_VERSION       "pmix.qry.prabiver" /* char* */

#define PMIX_EVENT_BASE                          "pmix.evbase"       /* struct event_base * */
#define PMIX_TOPOLOGY                            "pmix.topo"         /* hwloc_topology_t */
#define PMIX_DEBUG_JOB                           "pmix.dbg.job"      /* char* */
#define PMIX_RECONNECT_SERVER                    "pmix.cnct.recon"   /* bool */

#define PMIX_USOCK_DISABLE                       "pmix.usock.disable" /* bool */
#define PMIX_SOCKET_MODE                         "pmix.sockmode"     /* uint32_t */
#define PMIX_SINGLE_LISTENER                     "pmix.sing.listnr"  /* bool */
#define PMIX_ALLOC_NETWORK                       "pmix.alloc.net"    /* pmix_data_array_t* */
#define PMIX_ALLOC_NETWORK_ID                    "pmix.alloc.netid"  /* char* */
#define PMIX_ALLOC_NETWORK_QOS                   "pmix.alloc.netqos" /* char* */
#define PMIX_ALLOC_NETWORK_TYPE                  "pmix.alloc.nettype" /* char* */
#define PMIX_ALLOC_NETWORK_PLANE                 "pmix.alloc.netplane" /* char* */
#define PMIX_ALLOC_NETWORK_ENDPTS                "pmix.alloc.endpts" /* size_t */
#define PMIX_ALLOC_NETWORK_ENDPTS_NODE           "pmix.alloc.endpts.nd" /* size_t */
#define PMIX_ALLOC_NETWORK_SEC_KEY               "pmix.alloc.nsec"   /* pmix_byte_object_t */
#define PMIX_PROC_DATA                           "pmix.pdata"        /* pmix_data_array_t* */
#define PMIX_LOCALITY                            "pmix.loc"          /* uint16_t */

#define PMIX_LOCAL_TOPO                          "pmix.ltopo"        /* char* */
#define PMIX_TOPOLOGY_XML                        "pmix.topo.xml"     /* char* */
#define PMIX_TOPOLOGY_FILE                       "pmix.topo.file"    /* char* */
#define PMIX_TOPOLOGY_SIGNATURE                  "pmix.toposig"      /* char* */
#define PMIX_HWLOC_SHMEM_ADDR                    "pmix.hwlocaddr"    /* size_t */
#define PMIX_HWLOC_SHMEM_SIZE                    "pmix.hwlocsize"    /* size_t */
#define PMIX_HWLOC_SHMEM_FILE                    "pmix.hwlocfile"    /* char* */
#define PMIX_HWLOC_XML_V1                        "pmix.hwlocxml1"    /* char* */
#define PMIX_HWLOC_XML_V2                        "pmix.hwlocxml2"    /* char* */
#define PMIX_HWLOC_SHARE_TOPO                    "pmix.hwlocsh"      /* bool */
#define PMIX_HWLOC_HOLE_KIND                     "pmix.hwlocholek"   /* char* */
#define PMIX_DSTPATH                             "pmix.dstpath"      /* char* */
#define PMIX_COLLECTIVE_ALGO                     "pmix.calgo"        /* char* */
#define PMIX_COLLECTIVE_ALGO_REQD                "pmix.calreqd"      /* bool */
#define PMIX_PROC_BLOB                           "pmix.pblob"        /* pmix_byte_object_t */
#define PMIX_MAP_BLOB                            "pmix.mblob"        /* pmix_byte_object_t */
#define PMIX_MAPPER                              "pmix.mapper"       /* char* */
#define PMIX_NON_PMI                             "pmix.nonpmi"       /* bool */
#define PMIX_PROC_URI                            "pmix.puri"         /* char* */
#define PMIX_ARCH                                "pmix.arch"         /* uint32_t */

#define PMIX_DEBUG_JOB_DIRECTIVES                "pmix.dbg.jdirs"    /* pmix_data_array_t* */
#define PMIX_DEBUG_APP_DIRECTIVES                "pmix.dbg.adirs"    /* pmix_data_array_t* */
#define PMIX_EVENT_NO_TERMINATION                "pmix.evnoterm"     /* bool */
#define PMIX_EVENT_WANT_TERMINATION              "pmix.evterm"       /* bool */
#define PMIX_TAG_OUTPUT                          "pmix.tagout"       /* bool */
#define PMIX_TIMESTAMP_OUTPUT                    "pmix.tsout"        /* bool */
#define PMIX_MERGE_STDERR_STDOUT                 "pmix.mergeerrout"  /* bool */
#define PMIX_OUTPUT_TO_FILE                      "pmix.outfile"      /* char* */
#define PMIX_OUTPUT_TO_DIRECTORY                 "pmix.outdir"       /* char* */
#define PMIX_OUTPUT_NOCOPY                       "pmix.nocopy"       /* bool */

#define PMIX_GDS_MODULE                          "pmix.gds.mod"      /* char* */
#define PMIX_BFROPS_MODULE                       "pmix.bfrops.mod"   /* char* */
#define PMIX_PNET_SETUP_APP                      "pmix.pnet.setapp"  /* pmix_byte_object_t */

#define PMIX_IOF_STOP                            "pmix.iof.stop"     /* bool */
#define PMIX_NOTIFY_LAUNCH                       "pmix.note.lnch"    /* bool */

/* ==================================================================== */
/*  Process and job states                                              */
/* ==================================================================== */

typedef uint8_t pmix_proc_state_t;
#define PMIX_PROC_STATE_UNDEF           0
#define PMIX_PROC_STATE_PREPPED         1  /* ready to be launched */
#define PMIX_PROC_STATE_LAUNCH_UNDERWAY 2
#define PMIX_PROC_STATE_RESTART         3
#define PMIX_PROC_STATE_TERMINATE       4  /* marked for termination */
#define PMIX_PROC_STATE_RUNNING         5  /* forked by its local daemon */
#define PMIX_PROC_STATE_CONNECTED       6  /* connected to its PMIx server */
/* every state below this one means "not terminated" */
#define PMIX_PROC_STATE_UNTERMINATED    15
#define PMIX_PROC_STATE_TERMINATED      20 /* normal termination */
/* every state from here on means abnormal termination */
#define PMIX_PROC_STATE_ERROR                 50
#define PMIX_PROC_STATE_KILLED_BY_CMD         (PMIX_PROC_STATE_ERROR + 1)
#define PMIX_PROC_STATE_ABORTED               (PMIX_PROC_STATE_ERROR + 2)
#define PMIX_PROC_STATE_FAILED_TO_START       (PMIX_PROC_STATE_ERROR + 3)
#define PMIX_PROC_STATE_ABORTED_BY_SIG        (PMIX_PROC_STATE_ERROR + 4)
#define PMIX_PROC_STATE_TERM_WO_SYNC          (PMIX_PROC_STATE_ERROR + 5)
#define PMIX_PROC_STATE_COMM_FAILED           (PMIX_PROC_STATE_ERROR + 6)
#define PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED (PMIX_PROC_STATE_ERROR + 7)
#define PMIX_PROC_STATE_CALLED_ABORT          (PMIX_PROC_STATE_ERROR + 8)
#define PMIX_PROC_STATE_HEARTBEAT_FAILED      (PMIX_PROC_STATE_ERROR + 9)
#define PMIX_PROC_STATE_MIGRATING             (PMIX_PROC_STATE_ERROR + 10)
#define PMIX_PROC_STATE_CANNOT_RESTART        (PMIX_PROC_STATE_ERROR + 11)
#define PMIX_PROC_STATE_TERM_NON_ZERO         (PMIX_PROC_STATE_ERROR + 12)
#define PMIX_PROC_STATE_FAILED_TO_LAUNCH      (PMIX_PROC_STATE_ERROR + 13)

typedef uint8_t pmix_job_state_t;
#define PMIX_JOB_STATE_UNDEF           0
#define PMIX_JOB_STATE_AWAITING_ALLOC  1
#define PMIX_JOB_STATE_PREPPED         1 /* deprecated name */
#define PMIX_JOB_STATE_LAUNCH_UNDERWAY 2
#define PMIX_JOB_STATE_RUNNING         3
#define PMIX_JOB_STATE_SUSPENDED       4
#define PMIX_JOB_STATE_CONNECTED       5
/* every state below this one means "not terminated" */
#define PMIX_JOB_STATE_UNTERMINATED          15
#define PMIX_JOB_STATE_TERMINATED            20
#define PMIX_JOB_STATE_TERMINATED_WITH_ERROR 50

/* ==================================================================== */
/*  Status and event codes: 0 is success, errors and events are < 0.    */
/*  Aliases (deprecated names) share the value of their replacement.    */
/* ==================================================================== */

typedef int pmix_status_t;

#define PMIX_SUCCESS                             0
#define PMIX_ERROR                               -1
#define PMIX_ERR_SILENT                          -2
#define PMIX_DEBUGGER_RELEASE                    -3
#define PMIX_ERR_DEBUGGER_RELEASE                -3
#define PMIX_ERR_PROC_RESTART                    -4
#define PMIX_ERR_PROC_CHECKPOINT                 -5
#define PMIX_ERR_PROC_MIGRATE                    -6
#define PMIX_ERR_PROC_ABORTED                    -7
#define PMIX_ERR_PROC_REQUESTED_ABORT            -8
#define PMIX_ERR_PROC_ABORTING                   -9
#define PMIX_ERR_SERVER_FAILED_REQUEST           -10
#define PMIX_ERR_EXISTS                          -11
#define PMIX_EXISTS                              -11
#define PMIX_ERR_INVALID_CRED                    -12
#define PMIX_ERR_HANDSHAKE_FAILED                -13
#define PMIX_ERR_READY_FOR_HANDSHAKE             -14
#define PMIX_ERR_WOULD_BLOCK                     -15
#define PMIX_ERR_UNKNOWN_DATA_TYPE               -16
#define PMIX_ERR_PROC_ENTRY_NOT_FOUND            -17
#define PMIX_ERR_TYPE_MISMATCH                   -18
#define PMIX_ERR_UNPACK_INADEQUATE_SPACE         -19
#define PMIX_ERR_UNPACK_FAILURE                  -20
#define PMIX_ERR_PACK_FAILURE                    -21
#define PMIX_ERR_PACK_MISMATCH                   -22
#define PMIX_ERR_NO_PERMISSIONS                  -23
#define PMIX_ERR_TIMEOUT                         -24
#define PMIX_ERR_UNREACH                         -25
#define PMIX_ERR_IN_ERRNO                        -26
#define PMIX_ERR_BAD_PARAM                       -27
#define PMIX_ERR_RESOURCE_BUSY                   -28
#define PMIX_ERR_OUT_OF_RESOURCE                 -29
#define PMIX_ERR_DATA_VALUE_NOT_FOUND            -30
#define PMIX_ERR_INIT                            -31
#define PMIX_ERR_NOMEM                           -32
#define PMIX_ERR_INVALID_ARG                     -33
#define PMIX_ERR_INVALID_KEY                     -34
#define PMIX_ERR_INVALID_KEY_LENGTH              -35
#define PMIX_ERR_INVALID_VAL                     -36
#define PMIX_ERR_INVALID_VAL_LENGTH              -37
#define PMIX_ERR_INVALID_LENGTH                  -38
#define PMIX_ERR_INVALID_NUM_ARGS                -39
#define PMIX_ERR_INVALID_ARGS                    -40
#define PMIX_ERR_INVALID_NUM_PARSED              -41
#define PMIX_ERR_INVALID_KEYVALP                 -42
#define PMIX_ERR_INVALID_SIZE                    -43
#define PMIX_ERR_INVALID_NAMESPACE               -44
#define PMIX_ERR_SERVER_NOT_AVAIL                -45
#define PMIX_ERR_NOT_FOUND                       -46
#define PMIX_ERR_NOT_SUPPORTED                   -47
#define PMIX_ERR_NOT_IMPLEMENTED                 -48
#define PMIX_ERR_COMM_FAILURE                    -49
#define PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER  -50
#define PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES  -51
#define PMIX_ERR_PARTIAL_SUCCESS                 -52
#define PMIX_ERR_DUPLICATE_KEY                   -53
#define PMIX_PROCESS_SET_DEFINE                  -55
#define PMIX_PROCESS_SET_DELETE                  -56
#define PMIX_DEBUG_WAITING_FOR_NOTIFY            -58
#define PMIX_READY_FOR_DEBUG                     -58
#define PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED       -59
#define PMIX_ERR_EMPTY                           -60
#define PMIX_ERR_LOST_CONNECTION                 -61
#define PMIX_ERR_EXISTS_OUTSIDE_SCOPE            -62
#define PMIX_ERR_FATAL                           -63
#define PMIX_ERR_NOT_AVAILABLE                   -64
#define PMIX_ERR_VALUE_OUT_OF_BOUNDS             -65
#define PMIX_ERR_NOT_A_MEMBER                    -66   /* newer Standard */
#define PMIX_ERR_FILE_OPEN_FAILURE               -67
#define PMIX_ERR_FILE_READ_FAILURE               -68
#define PMIX_ERR_FILE_WRITE_FAILURE              -69
#define PMIX_ERR_SYS_LIMITS_PIPES                -70
#define PMIX_ERR_SYS_LIMITS_CHILDREN             -71
#define PMIX_ERR_PIPE_SETUP_FAILURE              -72
#define PMIX_ERR_EXE_NOT_ACCESSIBLE              -73
#define PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE         -74
#define PMIX_ERR_SYS_LIMITS_FILES                -75
#define PMIX_ERR_LOST_CONNECTION_TO_SERVER       -101
#define PMIX_ERR_LOST_PEER_CONNECTION            -102
#define PMIX_ERR_LOST_CONNECTION_TO_CLIENT       -103
#define PMIX_QUERY_PARTIAL_SUCCESS               -104
#define PMIX_NOTIFY_ALLOC_COMPLETE               -105
#define PMIX_JCTRL_CHECKPOINT                    -106
#define PMIX_JCTRL_CHECKPOINT_COMPLETE           -107
#define PMIX_JCTRL_PREEMPT_ALERT                 -108
#define PMIX_MONITOR_HEARTBEAT_ALERT             -109
#define PMIX_MONITOR_FILE_ALERT                  -110
#define PMIX_PROC_TERMINATED                     -111
#define PMIX_ERR_INVALID_TERMINATION             -112
#define PMIX_FABRIC_UPDATE_ENDPOINTS             -113
#define PMIX_MONITOR_RESUSAGE_UPDATE             -114  /* newer Standard */
#define PMIX_ERR_EVENT_REGISTRATION              -144
#define PMIX_ERR_JOB_TERMINATED                  -145
#define PMIX_EVENT_JOB_END                       -145
#define PMIX_ERR_UPDATE_ENDPOINTS                -146
#define PMIX_MODEL_DECLARED                      -147
#define PMIX_GDS_ACTION_COMPLETE                 -148
#define PMIX_PROC_HAS_CONNECTED                  -149
#define PMIX_CONNECT_REQUESTED                   -150
#define PMIX_MODEL_RESOURCES                     -151
#define PMIX_OPENMP_PARALLEL_ENTERED             -152
#define PMIX_OPENMP_PARALLEL_EXITED              -153
#define PMIX_LAUNCHER_READY                      -155
#define PMIX_OPERATION_IN_PROGRESS               -156
#define PMIX_OPERATION_SUCCEEDED                 -157
#define PMIX_ERR_INVALID_OPERATION               -158
#define PMIX_GROUP_INVITED                       -159
#define PMIX_GROUP_LEFT                          -160
#define PMIX_GROUP_INVITE_ACCEPTED               -161
#define PMIX_GROUP_INVITE_DECLINED               -162
#define PMIX_GROUP_INVITE_FAILED                 -163
#define PMIX_GROUP_MEMBERSHIP_UPDATE             -164
#define PMIX_GROUP_CONSTRUCT_ABORT               -165
#define PMIX_GROUP_CONSTRUCT_COMPLETE            -166
#define PMIX_GROUP_LEADER_SELECTED               -167
#define PMIX_GROUP_LEADER_FAILED                 -168
#define PMIX_GROUP_CONTEXT_ID_ASSIGNED           -169
#define PMIX_GROUP_MEMBER_FAILED                 -170
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION        -171
#define PMIX_ERR_IOF_FAILURE                     -172
#define PMIX_ERR_IOF_COMPLETE                    -173
#define PMIX_LAUNCH_COMPLETE                     -174
#define PMIX_FABRIC_UPDATED                      -175
#define PMIX_FABRIC_UPDATE_PENDING               -176
#define PMIX_ERR_JOB_APP_NOT_EXECUTABLE          -177
#define PMIX_ERR_JOB_NO_EXE_SPECIFIED            -178
#define PMIX_ERR_JOB_FAILED_TO_MAP               -179
#define PMIX_ERR_JOB_CANCELED                    -180
#define PMIX_ERR_JOB_FAILED_TO_LAUNCH            -181
#define PMIX_ERR_JOB_ABORTED                     -182
#define PMIX_ERR_JOB_KILLED_BY_CMD               -183
#define PMIX_ERR_JOB_ABORTED_BY_SIG              -184
#define PMIX_ERR_JOB_TERM_WO_SYNC                -185
#define PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED       -186
#define PMIX_ERR_JOB_NON_ZERO_TERM               -187
#define PMIX_ERR_JOB_ALLOC_FAILED                -188
#define PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT        -189
#define PMIX_ERR_JOB_EXE_NOT_FOUND               -190
#define PMIX_EVENT_JOB_START                     -191
#define PMIX_EVENT_SESSION_START                 -192
#define PMIX_EVENT_SESSION_END                   -193
#define PMIX_ALLOC_TIMEOUT_WARNING               -194  /* newer Standard */
#define PMIX_DVM_IS_READY                        -195  /* newer Standard */
#define PMIX_ERR_DVM_MOD                         -196  /* newer Standard */
#define PMIX_ERR_PROC_TERM_WO_SYNC               -200
#define PMIX_EVENT_PROC_TERMINATED               -201
#define PMIX_ERR_LOST_PRECISION                  -202  /* newer Standard */
#define PMIX_ERR_CHANGE_SIGN                     -203  /* newer Standard */
#define PMIX_ERR_SYS_BASE                        PMIX_EVENT_SYS_BASE
#define PMIX_EVENT_SYS_BASE                      -230
#define PMIX_ERR_NODE_DOWN                       -231
#define PMIX_EVENT_NODE_DOWN                     -231
#define PMIX_ERR_NODE_OFFLINE                    -232
#define PMIX_EVENT_NODE_OFFLINE                  -232
#define PMIX_ERR_JOB_WDIR_NOT_FOUND              -233
#define PMIX_ERR_JOB_INSUFFICIENT_RESOURCES      -234
#define PMIX_ERR_JOB_SYS_OP_FAILED               -235
#define PMIX_ERR_SYS_OTHER                       PMIX_EVENT_SYS_OTHER
#define PMIX_EVENT_SYS_OTHER                     -330
#define PMIX_EVENT_NO_ACTION_TAKEN               -331
#define PMIX_EVENT_PARTIAL_ACTION_TAKEN          -332
#define PMIX_EVENT_ACTION_DEFERRED               -333
#define PMIX_EVENT_ACTION_COMPLETE               -334
#define PMIX_ERR_PROC_KILLED_BY_CMD              -400
#define PMIX_ERR_PROC_FAILED_TO_START            -401
#define PMIX_ERR_PROC_ABORTED_BY_SIG             -402
#define PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED      -403
#define PMIX_ERR_EXIT_NONZERO_TERM               -404
#define PMIX_ERR_IOF_XOFF                        -405  /* newer Standard */
#define PMIX_EXTERNAL_ERR_BASE                   -3000

/* true for a code in the range reserved for system events */
#define PMIX_SYSTEM_EVENT(a) \
    ((a) <= PMIX_EVENT_SYS_BASE && PMIX_EVENT_SYS_OTHER <= (a))

/* result of PMIx_Value_compare */
typedef enum {
    PMIX_EQUAL,
    PMIX_VALUE1_GREATER,
    PMIX_VALUE2_GREATER,
    PMIX_VALUE_TYPE_DIFFERENT,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS,
    PMIX_VALUE_COMPARISON_NOT_AVAIL
} pmix_value_cmp_t;

/* ==================================================================== */
/*  Data types                                                          */
/* ==================================================================== */

typedef uint16_t pmix_data_type_t;
#define PMIX_UNDEF                  0
#define PMIX_BOOL                   1  /* bool */
#define PMIX_BYTE                   2  /* uint8_t */
#define PMIX_STRING                 3  /* char*, NUL-terminated */
#define PMIX_SIZE                   4  /* size_t */
#define PMIX_PID                    5  /* pid_t */
#define PMIX_INT                    6
#define PMIX_INT8                   7
#define PMIX_INT16                  8
#define PMIX_INT32                  9
#define PMIX_INT64                  10
#define PMIX_UINT                   11
#define PMIX_UINT8                  12
#define PMIX_UINT16                 13
#define PMIX_UINT32                 14
#define PMIX_UINT64                 15
#define PMIX_FLOAT                  16
#define PMIX_DOUBLE                 17
#define PMIX_TIMEVAL                18 /* struct timeval */
#define PMIX_TIME                   19 /* time_t */
#define PMIX_STATUS                 20 /* pmix_status_t */
#define PMIX_VALUE                  21
#define PMIX_PROC                   22
#define PMIX_APP                    23
#define PMIX_INFO                   24
#define PMIX_PDATA                  25
#define PMIX_BUFFER                 26 /* deprecated */
#define PMIX_BYTE_OBJECT            27
#define PMIX_KVAL                   28
/* 29 is unused (was MODEX) */
#define PMIX_PERSIST                30
#define PMIX_POINTER                31
#define PMIX_SCOPE                  32
#define PMIX_DATA_RANGE             33
#define PMIX_COMMAND                34
#define PMIX_INFO_DIRECTIVES        35
#define PMIX_DATA_TYPE              36
#define PMIX_PROC_STATE             37
#define PMIX_PROC_INFO              38
#define PMIX_DATA_ARRAY             39
#define PMIX_PROC_RANK              40
#define PMIX_QUERY                  41
#define PMIX_COMPRESSED_STRING      42
#define PMIX_ALLOC_DIRECTIVE        43
/* 44 is unused (was INFO_ARRAY) */
#define PMIX_IOF_CHANNEL            45
#define PMIX_ENVAR                  46
#define PMIX_COORD                  47
#define PMIX_REGATTR                48
#define PMIX_REGEX                  49
#define PMIX_JOB_STATE              50
#define PMIX_LINK_STATE             51
#define PMIX_PROC_CPUSET            52
#define PMIX_GEOMETRY               53
#define PMIX_DEVICE_DIST            54
#define PMIX_ENDPOINT               55
#define PMIX_TOPO                   56
#define PMIX_DEVTYPE                57
#define PMIX_LOCTYPE                58
#define PMIX_COMPRESSED_BYTE_OBJECT 59
#define PMIX_PROC_NSPACE            60
#define PMIX_PROC_STATS             61
#define PMIX_DISK_STATS             62
#define PMIX_NET_STATS              63
#define PMIX_NODE_STATS             64
#define PMIX_DATA_BUFFER            65
#define PMIX_STOR_MEDIUM            66
#define PMIX_STOR_ACCESS            67
#define PMIX_STOR_PERSIST           68
#define PMIX_STOR_ACCESS_TYPE       69
/* implementations may define their own types above this value */
#define PMIX_DATA_TYPE_MAX 500

/* ==================================================================== */
/*  Scope, range, persistence, directives, allocation, IO channels      */
/* ==================================================================== */

/* who may see a value stored with PMIx_Put */
typedef uint8_t pmix_scope_t;
#define PMIX_SCOPE_UNDEF 0
#define PMIX_LOCAL       1 /* processes on the same node */
#define PMIX_REMOTE      2 /* processes on other nodes */
#define PMIX_GLOBAL      3 /* everyone */
#define PMIX_INTERNAL    4 /* this process only (library tables) */

/* who may see published data or receive an event */
typedef uint8_t pmix_data_range_t;
#define PMIX_RANGE_UNDEF      0
#define PMIX_RANGE_RM         1 /* the host resource manager */
#define PMIX_RANGE_LOCAL      2 /* this node */
#define PMIX_RANGE_NAMESPACE  3 /* the caller's nspace */
#define PMIX_RANGE_SESSION    4 /* the caller's session */
#define PMIX_RANGE_GLOBAL     5 /* everyone */
#define PMIX_RANGE_CUSTOM     6 /* given by a PMIX_EVENT_CUSTOM_RANGE info */
#define PMIX_RANGE_PROC_LOCAL 7 /* the caller itself */
#define PMIX_RANGE_INVALID    UINT8_MAX

/* how long published data is kept */
typedef uint8_t pmix_persistence_t;
#define PMIX_PERSIST_INDEF      0 /* until explicitly removed */
#define PMIX_PERSIST_FIRST_READ 1 /* until first lookup */
#define PMIX_PERSIST_PROC       2 /* until the publisher terminates */
#define PMIX_PERSIST_APP        3 /* until its application terminates */
#define PMIX_PERSIST_SESSION    4 /* until its session ends */
#define PMIX_PERSIST_INVALID    UINT8_MAX

/* bit flags of pmix_info_t.flags */
typedef uint32_t pmix_info_directives_t;
#define PMIX_INFO_REQD           0x00000001
#define PMIX_INFO_ARRAY_END      0x00000002 /* last element (PMIX_INFO_CREATE) */
#define PMIX_INFO_REQD_PROCESSED 0x00000004
#define PMIX_INFO_QUALIFIER      0x00000008
#define PMIX_INFO_PERSISTENT     0x00000010 /* destruct leaves the value */
/* the upper 16 bits belong to the implementation */
#define PMIX_INFO_DIR_RESERVED   0xffff0000

typedef uint8_t pmix_alloc_directive_t;
#define PMIX_ALLOC_NEW       1
#define PMIX_ALLOC_EXTEND    2
#define PMIX_ALLOC_RELEASE   3
#define PMIX_ALLOC_REAQUIRE  4
/* implementations may define their own directives from here on */
#define PMIX_ALLOC_EXTERNAL  128

/* IO forwarding channels: bit flags that may be OR'ed */
typedef uint16_t pmix_iof_channel_t;
#define PMIX_FWD_NO_CHANNELS     0x0000
#define PMIX_FWD_STDIN_CHANNEL   0x0001
#define PMIX_FWD_STDOUT_CHANNEL  0x0002
#define PMIX_FWD_STDERR_CHANNEL  0x0004
#define PMIX_FWD_STDDIAG_CHANNEL 0x0008
#define PMIX_FWD_ALL_CHANNELS    0x00ff

/* answers to a group invitation (PMIx_Group_join) */
typedef enum {
    PMIX_GROUP_DECLINE,
    PMIX_GROUP_ACCEPT
} pmix_group_opt_t;

/* operations passed to the host's group upcall */
typedef enum {
    PMIX_GROUP_CONSTRUCT,
    PMIX_GROUP_DESTRUCT
} pmix_group_operation_t;

/* storage descriptions: bit flags */
typedef uint64_t pmix_storage_medium_t;
#define PMIX_STORAGE_MEDIUM_UNKNOWN 0x0000000000000001
#define PMIX_STORAGE_MEDIUM_TAPE    0x0000000000000002
#define PMIX_STORAGE_MEDIUM_HDD     0x0000000000000004
#define PMIX_STORAGE_MEDIUM_SSD     0x0000000000000008
#define PMIX_STORAGE_MEDIUM_NVME    0x0000000000000010
#define PMIX_STORAGE_MEDIUM_PMEM    0x0000000000000020
#define PMIX_STORAGE_MEDIUM_RAM     0x0000000000000040

typedef uint64_t pmix_storage_accessibility_t;
#define PMIX_STORAGE_ACCESSIBILITY_NODE    0x0000000000000001
#define PMIX_STORAGE_ACCESSIBILITY_SESSION 0x0000000000000002
#define PMIX_STORAGE_ACCESSIBILITY_JOB     0x0000000000000004
#define PMIX_STORAGE_ACCESSIBILITY_RACK    0x0000000000000008
#define PMIX_STORAGE_ACCESSIBILITY_CLUSTER 0x0000000000000010
#define PMIX_STORAGE_ACCESSIBILITY_REMOTE  0x0000000000000020

typedef uint64_t pmix_storage_persistence_t;
#define PMIX_STORAGE_PERSISTENCE_TEMPORARY 0x0000000000000001
#define PMIX_STORAGE_PERSISTENCE_NODE      0x0000000000000002
#define PMIX_STORAGE_PERSISTENCE_SESSION   0x0000000000000004
#define PMIX_STORAGE_PERSISTENCE_JOB       0x0000000000000008
#define PMIX_STORAGE_PERSISTENCE_SCRATCH   0x0000000000000010
#define PMIX_STORAGE_PERSISTENCE_PROJECT   0x0000000000000020
#define PMIX_STORAGE_PERSISTENCE_ARCHIVE   0x0000000000000040

typedef uint16_t pmix_storage_access_type_t;
#define PMIX_STORAGE_ACCESS_RD   0x0001
#define PMIX_STORAGE_ACCESS_WR   0x0002
#define PMIX_STORAGE_ACCESS_RDWR 0x0003

/* ==================================================================== */
/*  Allocation hooks: everything that crosses the API uses libc         */
/* ==================================================================== */

static inline void *pmix_malloc(size_t n)
{
    return malloc(n);
}

static inline void pmix_free(void *m)
{
    free(m);
}

static inline void *pmix_calloc(size_t n, size_t m)
{
    return calloc(n, m);
}

/* Allocate @a n zeroed elements of type @a t into @a m (NULL for 0). */
#define RDPMIX_CALLOC_ARRAY(m, n, t)                                           \
    do {                                                                       \
        (m) = (0 == (n)) ? NULL : (t *)pmix_calloc((n), sizeof(t));            \
    } while (0)

/* Destruct the @a n elements of @a m with @a D (loop index @a i), free the
 * array and reset @a m to NULL. */
#define RDPMIX_FREE_ARRAY(m, n, D, i)                                          \
    do {                                                                       \
        size_t i;                                                              \
        if (NULL != (m)) {                                                     \
            for (i = 0; i < (size_t)(n); i++) {                                \
                D(&(m)[i]);                                                    \
            }                                                                  \
            pmix_free((m));                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

/* Destruct the @a n elements of @a m with function @a fn(m, n), free the
 * array and reset @a m to NULL (for element types that own arrays). */
#define RDPMIX_FREE_ARRAY_FN(m, n, fn)                                         \
    do {                                                                       \
        fn((m), (n));                                                          \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

/* ==================================================================== */
/*  Bounded string helpers                                              */
/* ==================================================================== */

/* Copy at most len characters of src into dest and always terminate it;
 * dest must hold len + 1 bytes.  src need not be terminated. */
static inline void pmix_strncpy(char *dest, const char *src, size_t len)
{
    size_t n = 0;

    while (n < len && src[n] != '\0') {
        dest[n] = src[n];
        n++;
    }
    dest[n] = '\0';
}

/* length of a string, looking at no more than max + 1 bytes */
static inline size_t rdpmix_bounded_len(const char *s, size_t max)
{
    size_t n = 0;

    if (s == NULL) {
        return 0;
    }
    while (n <= max && s[n] != '\0') {
        n++;
    }
    return n;
}

static inline size_t pmix_keylen(const char *src)
{
    return rdpmix_bounded_len(src, PMIX_MAX_KEYLEN);
}

static inline size_t pmix_nslen(const char *src)
{
    return rdpmix_bounded_len(src, PMIX_MAX_NSLEN);
}

/* does info/pdata @a a carry key @a b? */
#define PMIX_CHECK_KEY(a, b) (0 == strncmp((a)->key, (b), PMIX_MAX_KEYLEN))

/* is @a a a key reserved for the Standard ("pmix" prefix)? */
#define PMIX_CHECK_RESERVED_KEY(a) (0 == strncmp((a), "pmix", 4))

/* zero a pmix_key_t and copy @a b (may be NULL) into it */
#define PMIX_LOAD_KEY(a, b)                                                    \
    do {                                                                       \
        memset((a), 0, PMIX_MAX_KEYLEN + 1);                                   \
        if (NULL != (b)) {                                                     \
            pmix_strncpy((char *)(a), (const char *)(b), PMIX_MAX_KEYLEN);     \
        }                                                                      \
    } while (0)

/* zero a pmix_nspace_t and copy @a b (may be NULL) into it */
#define PMIX_LOAD_NSPACE(a, b)                                                 \
    do {                                                                       \
        memset((a), 0, PMIX_MAX_NSLEN + 1);                                    \
        if (NULL != (b)) {                                                     \
            pmix_strncpy((char *)(a), (const char *)(b), PMIX_MAX_NSLEN);      \
        }                                                                      \
    } while (0)

/* a NULL or empty nspace */
#define PMIX_NSPACE_INVALID(a) (NULL == (a) || 0 == pmix_nslen((a)))

/* nspaces match; an invalid (empty) nspace on either side matches anything */
#define PMIX_CHECK_NSPACE(a, b)                                                \
    (PMIX_NSPACE_INVALID((a)) || PMIX_NSPACE_INVALID((b))                      \
     || 0 == strncmp((a), (b), PMIX_MAX_NSLEN))

#define PMIX_LOAD_PROCID(a, b, c)                                              \
    do {                                                                       \
        PMIX_LOAD_NSPACE((a)->nspace, (b));                                    \
        (a)->rank = (c);                                                       \
    } while (0)

#define PMIX_XFER_PROCID(a, b) memcpy((a), (b), sizeof(pmix_proc_t))
#define PMIX_PROCID_XFER(a, b) PMIX_XFER_PROCID(a, b)

/* ranks match; PMIX_RANK_WILDCARD on either side matches anything */
#define PMIX_CHECK_RANK(a, b)                                                  \
    ((a) == (b) || (PMIX_RANK_WILDCARD == (a) || PMIX_RANK_WILDCARD == (b)))

#define PMIX_CHECK_PROCID(a, b)                                                \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace)                               \
     && PMIX_CHECK_RANK((a)->rank, (b)->rank))

#define PMIX_PROCID_INVALID(a)                                                 \
    (PMIX_NSPACE_INVALID((a)->nspace) || PMIX_RANK_INVALID == (a)->rank)

/* ==================================================================== */
/*  NULL-terminated string arrays ("argv")                              */
/* ==================================================================== */

static inline int pmix_argv_count(char **argv)
{
    int n = 0;

    if (argv == NULL) {
        return 0;
    }
    while (argv[n] != NULL) {
        n++;
    }
    return n;
}

/* append a copy of @a arg, creating the array if *argv is NULL */
static inline pmix_status_t pmix_argv_append_nosize(char ***argv,
                                                    const char *arg)
{
    int n = pmix_argv_count(*argv);
    char **grown;
    char *copy;

    copy = strdup(arg);
    if (copy == NULL) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    grown = (char **)realloc(*argv, (size_t)(n + 2) * sizeof(char *));
    if (grown == NULL) {
        free(copy);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    grown[n]     = copy;
    grown[n + 1] = NULL;
    *argv        = grown;
    return PMIX_SUCCESS;
}

/* insert a copy of @a arg in front, creating the array if needed */
static inline pmix_status_t pmix_argv_prepend_nosize(char ***argv,
                                                     const char *arg)
{
    int n = pmix_argv_count(*argv);
    char **grown;
    char *copy;

    copy = strdup(arg);
    if (copy == NULL) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    grown = (char **)realloc(*argv, (size_t)(n + 2) * sizeof(char *));
    if (grown == NULL) {
        free(copy);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    memmove(&grown[1], &grown[0], (size_t)n * sizeof(char *));
    grown[0]     = copy;
    grown[n + 1] = NULL;
    *argv        = grown;
    return PMIX_SUCCESS;
}

/* append a copy of @a arg unless an equal string is already present */
static inline pmix_status_t pmix_argv_append_unique_nosize(char ***argv,
                                                           const char *arg)
{
    int i;

    for (i = 0; *argv != NULL && (*argv)[i] != NULL; i++) {
        if (strcmp((*argv)[i], arg) == 0) {
            return PMIX_SUCCESS;
        }
    }
    return pmix_argv_append_nosize(argv, arg);
}

static inline void pmix_argv_free(char **argv)
{
    int i;

    if (argv == NULL) {
        return;
    }
    for (i = 0; argv[i] != NULL; i++) {
        free(argv[i]);
    }
    free(argv);
}

/* Split @a src at every @a delimiter.  Empty fields are dropped unless
 * @a include_empty; a trailing delimiter never yields a field.  Returns
 * NULL for a NULL or empty string (or when out of memory). */
static inline char **pmix_argv_split_inter(const char *src, int delimiter,
                                           bool include_empty)
{
    char **argv = NULL;
    const char *end;
    char *field;
    size_t len;

    while (src != NULL && *src != '\0') {
        end = src;
        while (*end != '\0' && *end != delimiter) {
            end++;
        }
        len = (size_t)(end - src);
        if (len > 0 || include_empty) {
            field = (char *)malloc(len + 1);
            if (field == NULL) {
                pmix_argv_free(argv);
                return NULL;
            }
            memcpy(field, src, len);
            field[len] = '\0';
            if (pmix_argv_append_nosize(&argv, field) != PMIX_SUCCESS) {
                free(field);
                pmix_argv_free(argv);
                return NULL;
            }
            free(field);
        }
        src = (*end == '\0') ? end : end + 1;
    }
    return argv;
}

static inline char **pmix_argv_split_with_empty(const char *src, int delimiter)
{
    return pmix_argv_split_inter(src, delimiter, true);
}

static inline char **pmix_argv_split(const char *src, int delimiter)
{
    return pmix_argv_split_inter(src, delimiter, false);
}

/* join the strings with @a delimiter; "" for a NULL or empty array */
static inline char *pmix_argv_join(char **argv, int delimiter)
{
    size_t total = 0, pos = 0, len;
    char *str;
    int i;

    if (argv == NULL || argv[0] == NULL) {
        return strdup("");
    }
    for (i = 0; argv[i] != NULL; i++) {
        total += strlen(argv[i]) + 1;
    }
    str = (char *)malloc(total);
    if (str == NULL) {
        return NULL;
    }
    for (i = 0; argv[i] != NULL; i++) {
        len = strlen(argv[i]);
        memcpy(str + pos, argv[i], len);
        pos += len;
        str[pos++] = (char)delimiter;
    }
    str[total - 1] = '\0';
    return str;
}

/* deep copy; NULL stays NULL, an empty array gives an empty array */
static inline char **pmix_argv_copy(char **argv)
{
    char **dup;
    int i;

    if (argv == NULL) {
        return NULL;
    }
    dup = (char **)calloc(1, sizeof(char *));
    if (dup == NULL) {
        return NULL;
    }
    for (i = 0; argv[i] != NULL; i++) {
        if (pmix_argv_append_nosize(&dup, argv[i]) != PMIX_SUCCESS) {
            pmix_argv_free(dup);
            return NULL;
        }
    }
    return dup;
}

#define PMIX_ARGV_COUNT(r, a)         (r) = pmix_argv_count(a)
#define PMIX_ARGV_APPEND(r, a, b)     (r) = pmix_argv_append_nosize(&(a), (b))
#define PMIX_ARGV_PREPEND(r, a, b)    (r) = pmix_argv_prepend_nosize(&(a), b)
/* note: @a a is the address of the array here (as in OpenPMIx 4.2) */
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b)                                       \
    (r) = pmix_argv_append_unique_nosize(a, b)
#define PMIX_ARGV_FREE(a)             pmix_argv_free(a)
#define PMIX_ARGV_SPLIT(a, b, c)      (a) = pmix_argv_split(b, c)
#define PMIX_ARGV_JOIN(a, b, c)       (a) = pmix_argv_join(b, c)
#define PMIX_ARGV_COPY(a, b)          (a) = pmix_argv_copy(b)

/*
 * Set NAME=VALUE in the environment array *env.  When *env is the process
 * environment (environ) this uses setenv/unsetenv (a NULL value unsets).
 * Otherwise a NULL value stores "NAME=", an existing entry is replaced only
 * if @a overwrite (else PMIX_ERR_EXISTS), and a new entry is appended.
 */
static inline pmix_status_t pmix_setenv(const char *name, const char *value,
                                        bool overwrite, char ***env)
{
    size_t nlen, vlen;
    pmix_status_t rc;
    char *entry;
    int i;

    if (env == NULL || name == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (*env == environ) {
        if (value == NULL) {
            unsetenv(name);
        } else {
            setenv(name, value, overwrite ? 1 : 0);
        }
        return PMIX_SUCCESS;
    }
    nlen  = strlen(name);
    vlen  = (value == NULL) ? 0 : strlen(value);
    entry = (char *)malloc(nlen + vlen + 2);
    if (entry == NULL) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    memcpy(entry, name, nlen);
    entry[nlen] = '=';
    if (vlen > 0) {
        memcpy(entry + nlen + 1, value, vlen);
    }
    entry[nlen + vlen + 1] = '\0';

    for (i = 0; *env != NULL && (*env)[i] != NULL; i++) {
        if (strncmp((*env)[i], entry, nlen + 1) == 0) {
            if (!overwrite) {
                free(entry);
                return PMIX_ERR_EXISTS;
            }
            free((*env)[i]);
            (*env)[i] = entry;
            return PMIX_SUCCESS;
        }
    }
    rc = pmix_argv_append_nosize(env, entry);
    free(entry);
    return rc;
}

#define PMIX_SETENV(r, a, b, c) (r) = pmix_setenv((a), (b), true, (c))

/* ==================================================================== */
/*  Fabric coordinates, link state, cpusets, topologies, locality       */
/* ==================================================================== */

typedef uint8_t pmix_coord_view_t;
#define PMIX_COORD_VIEW_UNDEF    0x00
#define PMIX_COORD_LOGICAL_VIEW  0x01
#define PMIX_COORD_PHYSICAL_VIEW 0x02

typedef struct pmix_coord {
    pmix_coord_view_t view;
    uint32_t *coord; /* dims entries, malloc'ed */
    size_t dims;
} pmix_coord_t;

#define PMIX_COORD_STATIC_INIT                                                 \
    {                                                                          \
        .view = PMIX_COORD_VIEW_UNDEF, .coord = NULL, .dims = 0                \
    }

#define PMIX_COORD_CONSTRUCT(m)                                                \
    do {                                                                       \
        (m)->view  = PMIX_COORD_VIEW_UNDEF;                                    \
        (m)->coord = NULL;                                                     \
        (m)->dims  = 0;                                                        \
    } while (0)

#define PMIX_COORD_DESTRUCT(m)                                                 \
    do {                                                                       \
        (m)->view = PMIX_COORD_VIEW_UNDEF;                                     \
        if (NULL != (m)->coord) {                                              \
            pmix_free((m)->coord);                                             \
            (m)->coord = NULL;                                                 \
            (m)->dims  = 0;                                                    \
        }                                                                      \
    } while (0)

/* allocate @a d coordinates of @a n zeroed dimensions each */
#define PMIX_COORD_CREATE(m, d, n)                                             \
    do {                                                                       \
        pmix_coord_t *_cc = NULL;                                              \
        size_t _ci;                                                            \
        if (0 != (d)) {                                                        \
            _cc = (pmix_coord_t *)pmix_calloc((d), sizeof(pmix_coord_t));      \
            for (_ci = 0; NULL != _cc && _ci < (size_t)(d); _ci++) {           \
                _cc[_ci].dims = (n);                                           \
                if (0 != (n)) {                                                \
                    _cc[_ci].coord =                                           \
                        (uint32_t *)pmix_calloc((n), sizeof(uint32_t));        \
                }                                                              \
            }                                                                  \
        }                                                                      \
        (m) = _cc;                                                             \
    } while (0)

#define PMIX_COORD_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_COORD_DESTRUCT, _cf)

typedef uint8_t pmix_link_state_t;
#define PMIX_LINK_STATE_UNKNOWN 0
#define PMIX_LINK_DOWN          1
#define PMIX_LINK_UP            2

/* a set of processing units; source names the library owning the bitmap */
typedef struct {
    char *source;
    void *bitmap;
} pmix_cpuset_t;

#define PMIX_CPUSET_STATIC_INIT                                                \
    {                                                                          \
        .source = NULL, .bitmap = NULL                                         \
    }

#define PMIX_CPUSET_CONSTRUCT(m) memset((m), 0, sizeof(pmix_cpuset_t))

#define PMIX_CPUSET_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_cpuset_t)

/* whether a cpuset refers to the process or to the calling thread */
typedef uint8_t pmix_bind_envelope_t;
#define PMIX_CPUBIND_PROCESS 0
#define PMIX_CPUBIND_THREAD  1

/* a hardware topology; source names the library owning the object */
typedef struct {
    char *source;
    void *topology;
} pmix_topology_t;

#define PMIX_TOPOLOGY_STATIC_INIT                                              \
    {                                                                          \
        .source = NULL, .topology = NULL                                       \
    }

#define PMIX_TOPOLOGY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_topology_t))

#define PMIX_TOPOLOGY_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_topology_t)

/* relative locality of two processes: bit flags */
typedef uint16_t pmix_locality_t;
#define PMIX_LOCALITY_UNKNOWN        0x0000
#define PMIX_LOCALITY_NONLOCAL       0x8000
#define PMIX_LOCALITY_SHARE_HWTHREAD 0x0001
#define PMIX_LOCALITY_SHARE_CORE     0x0002
#define PMIX_LOCALITY_SHARE_L1CACHE  0x0004
#define PMIX_LOCALITY_SHARE_L2CACHE  0x0008
#define PMIX_LOCALITY_SHARE_L3CACHE  0x0010
#define PMIX_LOCALITY_SHARE_PACKAGE  0x0020
#define PMIX_LOCALITY_SHARE_NUMA     0x0040
#define PMIX_LOCALITY_SHARE_NODE     0x4000

/* a device's position in a fabric, in each available coordinate view */
typedef struct pmix_geometry {
    size_t fabric;
    char *uuid;
    char *osname;
    pmix_coord_t *coordinates;
    size_t ncoords;
} pmix_geometry_t;

#define PMIX_GEOMETRY_STATIC_INIT                                              \
    {                                                                          \
        .fabric = 0, .uuid = NULL, .osname = NULL, .coordinates = NULL,        \
        .ncoords = 0                                                           \
    }

#define PMIX_GEOMETRY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_geometry_t))

#define PMIX_GEOMETRY_DESTRUCT(m)                                              \
    do {                                                                       \
        if (NULL != (m)->uuid) {                                               \
            pmix_free((m)->uuid);                                              \
            (m)->uuid = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->osname) {                                             \
            pmix_free((m)->osname);                                            \
            (m)->osname = NULL;                                                \
        }                                                                      \
        if (NULL != (m)->coordinates) {                                        \
            PMIX_COORD_FREE((m)->coordinates, (m)->ncoords);                   \
            (m)->ncoords = 0;                                                  \
        }                                                                      \
    } while (0)

#define PMIX_GEOMETRY_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_geometry_t)

#define PMIX_GEOMETRY_FREE(m, n)                                               \
    do {                                                                       \
        size_t _gf;                                                            \
        if (NULL != (m)) {                                                     \
            for (_gf = 0; _gf < (size_t)(n); _gf++) {                          \
                PMIX_GEOMETRY_DESTRUCT(&(m)[_gf]);                             \
            }                                                                  \
            pmix_free((m));                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

/* ==================================================================== */
/*  Devices and distances                                               */
/* ==================================================================== */

typedef uint64_t pmix_device_type_t;
#define PMIX_DEVTYPE_UNKNOWN     0x00
#define PMIX_DEVTYPE_BLOCK       0x01
#define PMIX_DEVTYPE_GPU         0x02
#define PMIX_DEVTYPE_NETWORK     0x04
#define PMIX_DEVTYPE_OPENFABRICS 0x08
#define PMIX_DEVTYPE_DMA         0x10
#define PMIX_DEVTYPE_COPROC      0x20

typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t;

#define PMIX_DEVICE_DIST_STATIC_INIT                                           \
    {                                                                          \
        .uuid = NULL, .osname = NULL, .type = PMIX_DEVTYPE_UNKNOWN,            \
        .mindist = 0, .maxdist = 0                                             \
    }

/* distances start out as "unknown" (UINT16_MAX) */
#define PMIX_DEVICE_DIST_CONSTRUCT(m)                                          \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_device_distance_t));                        \
        (m)->mindist = UINT16_MAX;                                             \
        (m)->maxdist = UINT16_MAX;                                             \
    } while (0)

#define PMIX_DEVICE_DIST_DESTRUCT(m)                                           \
    do {                                                                       \
        if (NULL != (m)->uuid) {                                               \
            pmix_free((m)->uuid);                                              \
            (m)->uuid = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->osname) {                                             \
            pmix_free((m)->osname);                                            \
            (m)->osname = NULL;                                                \
        }                                                                      \
    } while (0)

#define PMIX_DEVICE_DIST_CREATE(m, n)                                          \
    do {                                                                       \
        pmix_device_distance_t *_dd = NULL;                                    \
        size_t _di;                                                            \
        if (0 != (n)) {                                                        \
            _dd = (pmix_device_distance_t *)pmix_calloc(                       \
                (n), sizeof(pmix_device_distance_t));                          \
            for (_di = 0; NULL != _dd && _di < (size_t)(n); _di++) {           \
                _dd[_di].mindist = UINT16_MAX;                                 \
                _dd[_di].maxdist = UINT16_MAX;                                 \
            }                                                                  \
        }                                                                      \
        (m) = _dd;                                                             \
    } while (0)

#define PMIX_DEVICE_DIST_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_DEVICE_DIST_DESTRUCT, _df)

/* ==================================================================== */
/*  Byte objects, endpoints, environment variable directives            */
/* ==================================================================== */

typedef struct pmix_byte_object {
    char *bytes; /* malloc'ed */
    size_t size;
} pmix_byte_object_t;

#define PMIX_BYTE_OBJECT_STATIC_INIT                                           \
    {                                                                          \
        .bytes = NULL, .size = 0                                               \
    }

#define PMIX_BYTE_OBJECT_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_byte_object_t)

#define PMIX_BYTE_OBJECT_CONSTRUCT(m)                                          \
    do {                                                                       \
        (m)->bytes = NULL;                                                     \
        (m)->size  = 0;                                                        \
    } while (0)

#define PMIX_BYTE_OBJECT_DESTRUCT(m)                                           \
    do {                                                                       \
        if (NULL != (m)->bytes) {                                              \
            pmix_free((m)->bytes);                                             \
        }                                                                      \
        (m)->bytes = NULL;                                                     \
        (m)->size  = 0;                                                        \
    } while (0)

#define PMIX_BYTE_OBJECT_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_BYTE_OBJECT_DESTRUCT, _bf)

/* take ownership of buffer @a d of size @a s (both are reset) */
#define PMIX_BYTE_OBJECT_LOAD(b, d, s)                                         \
    do {                                                                       \
        (b)->bytes = (char *)(d);                                              \
        (d)        = NULL;                                                     \
        (b)->size  = (s);                                                      \
        (s)        = 0;                                                        \
    } while (0)

typedef struct pmix_endpoint {
    char *uuid;
    char *osname;
    pmix_byte_object_t endpt;
} pmix_endpoint_t;

#define PMIX_ENDPOINT_STATIC_INIT                                              \
    {                                                                          \
        .uuid = NULL, .osname = NULL, .endpt = PMIX_BYTE_OBJECT_STATIC_INIT    \
    }

#define PMIX_ENDPOINT_CONSTRUCT(m) memset((m), 0, sizeof(pmix_endpoint_t))

#define PMIX_ENDPOINT_DESTRUCT(m)                                              \
    do {                                                                       \
        if (NULL != (m)->uuid) {                                               \
            pmix_free((m)->uuid);                                              \
            (m)->uuid = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->osname) {                                             \
            pmix_free((m)->osname);                                            \
            (m)->osname = NULL;                                                \
        }                                                                      \
        PMIX_BYTE_OBJECT_DESTRUCT(&(m)->endpt);                                \
    } while (0)

#define PMIX_ENDPOINT_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_endpoint_t)

#define PMIX_ENDPOINT_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_ENDPOINT_DESTRUCT, _ef)

/* a modification of an environment variable (set/prepend/append) */
typedef struct {
    char *envar;
    char *value;
    char separator;
} pmix_envar_t;

#define PMIX_ENVAR_STATIC_INIT                                                 \
    {                                                                          \
        .envar = NULL, .value = NULL, .separator = '\0'                        \
    }

#define PMIX_ENVAR_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_envar_t)

#define PMIX_ENVAR_CONSTRUCT(m)                                                \
    do {                                                                       \
        (m)->envar     = NULL;                                                 \
        (m)->value     = NULL;                                                 \
        (m)->separator = '\0';                                                 \
    } while (0)

#define PMIX_ENVAR_DESTRUCT(m)                                                 \
    do {                                                                       \
        if (NULL != (m)->envar) {                                              \
            pmix_free((m)->envar);                                             \
            (m)->envar = NULL;                                                 \
        }                                                                      \
        if (NULL != (m)->value) {                                              \
            pmix_free((m)->value);                                             \
            (m)->value = NULL;                                                 \
        }                                                                      \
    } while (0)

#define PMIX_ENVAR_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_ENVAR_DESTRUCT, _vf)

/* copies @a e and @a v (either may be NULL) */
#define PMIX_ENVAR_LOAD(m, e, v, s)                                            \
    do {                                                                       \
        if (NULL != (e)) {                                                     \
            (m)->envar = strdup(e);                                            \
        }                                                                      \
        if (NULL != (v)) {                                                     \
            (m)->value = strdup(v);                                            \
        }                                                                      \
        (m)->separator = (s);                                                  \
    } while (0)

/* ==================================================================== */
/*  Process identifiers and descriptions                                */
/* ==================================================================== */

typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t;

#define PMIX_PROC_STATIC_INIT                                                  \
    {                                                                          \
        .nspace = {0}, .rank = PMIX_RANK_UNDEF                                 \
    }

#define PMIX_PROC_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_proc_t)

#define PMIX_PROC_CONSTRUCT(m)                                                 \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_proc_t));                                   \
    } while (0)

/* a pmix_proc_t owns no memory */
#define PMIX_PROC_DESTRUCT(m)

#define PMIX_PROC_RELEASE(m)                                                   \
    do {                                                                       \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

#define PMIX_PROC_FREE(m, n)                                                   \
    do {                                                                       \
        if (NULL != (m)) {                                                     \
            pmix_free((m));                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

#define PMIX_PROC_LOAD(m, n, r)                                                \
    do {                                                                       \
        PMIX_PROC_CONSTRUCT((m));                                              \
        pmix_strncpy((char *)(m)->nspace, (n), PMIX_MAX_NSLEN);                \
        (m)->rank = (r);                                                       \
    } while (0)

/* "cluster:nspace" multi-cluster names: build @a t from @a c and @a n */
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)                            \
    do {                                                                       \
        size_t _cl = pmix_nslen((c));                                          \
        memset((t), 0, PMIX_MAX_NSLEN + 1);                                    \
        if (_cl + pmix_nslen((n)) < PMIX_MAX_NSLEN) {                          \
            pmix_strncpy((char *)(t), (c), PMIX_MAX_NSLEN);                    \
            (t)[_cl] = ':';                                                    \
            pmix_strncpy((char *)&(t)[_cl + 1], (n), PMIX_MAX_NSLEN - _cl);    \
        }                                                                      \
    } while (0)

/* split "cluster:nspace" @a t into @a c and @a n (callers zero them) */
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n)                                \
    do {                                                                       \
        size_t _pi = 0, _pj = 0;                                               \
        while (_pi <= PMIX_MAX_NSLEN && '\0' != (t)[_pi]                       \
               && ':' != (t)[_pi]) {                                           \
            (c)[_pi] = (t)[_pi];                                               \
            _pi++;                                                             \
        }                                                                      \
        _pi++;                                                                 \
        while (_pi <= PMIX_MAX_NSLEN && '\0' != (t)[_pi]) {                    \
            (n)[_pj++] = (t)[_pi++];                                           \
        }                                                                      \
    } while (0)

typedef struct pmix_proc_info {
    pmix_proc_t proc;
    char *hostname;
    char *executable_name;
    pid_t pid;
    int exit_code;
    pmix_proc_state_t state;
} pmix_proc_info_t;

#define PMIX_PROC_INFO_STATIC_INIT                                             \
    {                                                                          \
        .proc = PMIX_PROC_STATIC_INIT, .hostname = NULL,                       \
        .executable_name = NULL, .pid = 0, .exit_code = 0,                     \
        .state = PMIX_PROC_STATE_UNDEF                                         \
    }

#define PMIX_PROC_INFO_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_proc_info_t)

#define PMIX_PROC_INFO_CONSTRUCT(m)                                            \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_proc_info_t));                              \
    } while (0)

#define PMIX_PROC_INFO_DESTRUCT(m)                                             \
    do {                                                                       \
        if (NULL != (m)->hostname) {                                           \
            pmix_free((m)->hostname);                                          \
            (m)->hostname = NULL;                                              \
        }                                                                      \
        if (NULL != (m)->executable_name) {                                    \
            pmix_free((m)->executable_name);                                   \
            (m)->executable_name = NULL;                                       \
        }                                                                      \
    } while (0)

#define PMIX_PROC_INFO_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_PROC_INFO_DESTRUCT, _pf)

#define PMIX_PROC_INFO_RELEASE(m)                                              \
    do {                                                                       \
        PMIX_PROC_INFO_FREE((m), 1);                                           \
    } while (0)

/* ==================================================================== */
/*  Data arrays and buffers                                             */
/* ==================================================================== */

/* @a size elements of @a type stored contiguously at @a array */
typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t;

#define PMIX_DATA_ARRAY_STATIC_INIT                                            \
    {                                                                          \
        .type = PMIX_UNDEF, .size = 0, .array = NULL                           \
    }

/* an opaque packed buffer (PMIx_Data_pack/unpack) */
typedef struct pmix_data_buffer {
    char *base_ptr;         /* start of the allocation */
    char *pack_ptr;         /* where the next pack writes */
    char *unpack_ptr;       /* where the next unpack reads */
    size_t bytes_allocated; /* size of the allocation */
    size_t bytes_used;      /* bytes of packed data */
} pmix_data_buffer_t;

#define PMIX_DATA_BUFFER_STATIC_INIT                                           \
    {                                                                          \
        .base_ptr = NULL, .pack_ptr = NULL, .unpack_ptr = NULL,                \
        .bytes_allocated = 0, .bytes_used = 0                                  \
    }

#define PMIX_DATA_BUFFER_CREATE(m)                                             \
    do {                                                                       \
        (m) = (pmix_data_buffer_t *)pmix_calloc(1,                             \
                                                sizeof(pmix_data_buffer_t));   \
    } while (0)

#define PMIX_DATA_BUFFER_CONSTRUCT(m) memset((m), 0, sizeof(pmix_data_buffer_t))

#define PMIX_DATA_BUFFER_DESTRUCT(m)                                           \
    do {                                                                       \
        if (NULL != (m)->base_ptr) {                                           \
            pmix_free((m)->base_ptr);                                          \
            (m)->base_ptr = NULL;                                              \
        }                                                                      \
        (m)->pack_ptr        = NULL;                                           \
        (m)->unpack_ptr      = NULL;                                           \
        (m)->bytes_allocated = 0;                                              \
        (m)->bytes_used      = 0;                                              \
    } while (0)

#define PMIX_DATA_BUFFER_RELEASE(m)                                            \
    do {                                                                       \
        if (NULL != (m)->base_ptr) {                                           \
            pmix_free((m)->base_ptr);                                          \
        }                                                                      \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

/* hand @a s bytes at @a d to the buffer (see PMIx_Data_load) */
#define PMIX_DATA_BUFFER_LOAD(b, d, s)                                         \
    do {                                                                       \
        pmix_byte_object_t _lbo;                                               \
        _lbo.bytes = (char *)(d);                                              \
        _lbo.size  = (s);                                                      \
        PMIx_Data_load((b), &_lbo);                                            \
    } while (0)

/* take the buffer's payload (see PMIx_Data_unload); NULL/0 on failure */
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)                                       \
    do {                                                                       \
        pmix_byte_object_t _ubo;                                               \
        if (PMIX_SUCCESS == PMIx_Data_unload((b), &_ubo)) {                    \
            (d) = _ubo.bytes;                                                  \
            (s) = _ubo.size;                                                   \
        } else {                                                               \
            (d) = NULL;                                                        \
            (s) = 0;                                                           \
        }                                                                      \
    } while (0)

/* ==================================================================== */
/*  Resource usage statistics (OpenPMIx 4.2 value types)                */
/* ==================================================================== */

typedef struct pmix_proc_stats {
    char *node;
    pmix_proc_t proc;
    pid_t pid;
    char *cmd;
    char state;
    struct timeval time;
    float percent_cpu;
    int32_t priority;
    uint16_t num_threads;
    float pss;        /* MB */
    float vsize;      /* MB */
    float rss;        /* MB */
    float peak_vsize; /* MB */
    uint16_t processor;
    struct timeval sample_time;
} pmix_proc_stats_t;

#define PMIX_PROC_STATS_STATIC_INIT                                            \
    {                                                                          \
        .node = NULL, .proc = PMIX_PROC_STATIC_INIT, .pid = 0, .cmd = NULL,    \
        .state = '\0', .time = {0, 0}, .percent_cpu = 0.0, .priority = 0,      \
        .num_threads = 0, .pss = 0.0, .vsize = 0.0, .rss = 0.0,                \
        .peak_vsize = 0.0, .processor = 0, .sample_time = {0, 0}               \
    }

#define PMIX_PROC_STATS_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_proc_stats_t)

#define PMIX_PROC_STATS_CONSTRUCT(m)                                           \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_proc_stats_t));                             \
    } while (0)

#define PMIX_PROC_STATS_DESTRUCT(m)                                            \
    do {                                                                       \
        if (NULL != (m)->node) {                                               \
            pmix_free((m)->node);                                              \
            (m)->node = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->cmd) {                                                \
            pmix_free((m)->cmd);                                               \
            (m)->cmd = NULL;                                                   \
        }                                                                      \
    } while (0)

/* destruct @a n elements (does not free the array) */
static inline void pmix_proc_stats_free(pmix_proc_stats_t *ps, size_t n)
{
    size_t k;

    for (k = 0; ps != NULL && k < n; k++) {
        PMIX_PROC_STATS_DESTRUCT(&ps[k]);
    }
}

#define PMIX_PROC_STATS_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_proc_stats_free)

#define PMIX_PROC_STATS_RELEASE(m)                                             \
    do {                                                                       \
        PMIX_PROC_STATS_FREE((m), 1);                                          \
    } while (0)

typedef struct {
    char *disk;
    uint64_t num_reads_completed;
    uint64_t num_reads_merged;
    uint64_t num_sectors_read;
    uint64_t milliseconds_reading;
    uint64_t num_writes_completed;
    uint64_t num_writes_merged;
    uint64_t num_sectors_written;
    uint64_t milliseconds_writing;
    uint64_t num_ios_in_progress;
    uint64_t milliseconds_io;
    uint64_t weighted_milliseconds_io;
} pmix_disk_stats_t;

#define PMIX_DISK_STATS_STATIC_INIT                                            \
    {                                                                          \
        .disk = NULL, .num_reads_completed = 0, .num_reads_merged = 0,         \
        .num_sectors_read = 0, .milliseconds_reading = 0,                      \
        .num_writes_completed = 0, .num_writes_merged = 0,                     \
        .num_sectors_written = 0, .milliseconds_writing = 0,                   \
        .num_ios_in_progress = 0, .milliseconds_io = 0,                        \
        .weighted_milliseconds_io = 0                                          \
    }

#define PMIX_DISK_STATS_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_disk_stats_t)

#define PMIX_DISK_STATS_CONSTRUCT(m)                                           \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_disk_stats_t));                             \
    } while (0)

#define PMIX_DISK_STATS_DESTRUCT(m)                                            \
    do {                                                                       \
        if (NULL != (m)->disk) {                                               \
            pmix_free((m)->disk);                                              \
            (m)->disk = NULL;                                                  \
        }                                                                      \
    } while (0)

static inline void pmix_disk_stats_free(pmix_disk_stats_t *d, size_t n)
{
    size_t k;

    for (k = 0; d != NULL && k < n; k++) {
        PMIX_DISK_STATS_DESTRUCT(&d[k]);
    }
}

#define PMIX_DISK_STATS_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_disk_stats_free)

#define PMIX_DISK_STATS_RELEASE(m)                                             \
    do {                                                                       \
        PMIX_DISK_STATS_FREE((m), 1);                                          \
    } while (0)

typedef struct {
    char *net_interface;
    uint64_t num_bytes_recvd;
    uint64_t num_packets_recvd;
    uint64_t num_recv_errs;
    uint64_t num_bytes_sent;
    uint64_t num_packets_sent;
    uint64_t num_send_errs;
} pmix_net_stats_t;

#define PMIX_NET_STATS_STATIC_INIT                                             \
    {                                                                          \
        .net_interface = NULL, .num_bytes_recvd = 0, .num_packets_recvd = 0,   \
        .num_recv_errs = 0, .num_bytes_sent = 0, .num_packets_sent = 0,        \
        .num_send_errs = 0                                                     \
    }

#define PMIX_NET_STATS_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_net_stats_t)

#define PMIX_NET_STATS_CONSTRUCT(m)                                            \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_net_stats_t));                              \
    } while (0)

#define PMIX_NET_STATS_DESTRUCT(m)                                             \
    do {                                                                       \
        if (NULL != (m)->net_interface) {                                      \
            pmix_free((m)->net_interface);                                     \
            (m)->net_interface = NULL;                                         \
        }                                                                      \
    } while (0)

static inline void pmix_net_stats_free(pmix_net_stats_t *nst, size_t n)
{
    size_t k;

    for (k = 0; nst != NULL && k < n; k++) {
        PMIX_NET_STATS_DESTRUCT(&nst[k]);
    }
}

#define PMIX_NET_STATS_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_net_stats_free)

#define PMIX_NET_STATS_RELEASE(m)                                              \
    do {                                                                       \
        PMIX_NET_STATS_FREE((m), 1);                                           \
    } while (0)

typedef struct {
    char *node;
    float la;   /* load averages: 1, 5 and 15 minutes */
    float la5;
    float la15;
    float total_mem; /* MB */
    float free_mem;
    float buffers;
    float cached;
    float swap_cached;
    float swap_total;
    float swap_free;
    float mapped;
    struct timeval sample_time;
    pmix_disk_stats_t *diskstats;
    size_t ndiskstats;
    pmix_net_stats_t *netstats;
    size_t nnetstats;
} pmix_node_stats_t;

#define PMIX_NODE_STATS_STATIC_INIT                                            \
    {                                                                          \
        .node = NULL, .la = 0, .la5 = 0, .la15 = 0, .total_mem = 0.0,          \
        .free_mem = 0.0, .buffers = 0.0, .cached = 0.0, .swap_cached = 0.0,    \
        .swap_total = 0.0, .swap_free = 0.0, .mapped = 0.0,                    \
        .sample_time = {0, 0}, .diskstats = NULL, .ndiskstats = 0,             \
        .netstats = NULL, .nnetstats = 0                                       \
    }

#define PMIX_NODE_STATS_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_node_stats_t)

#define PMIX_NODE_STATS_CONSTRUCT(m)                                           \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_node_stats_t));                             \
    } while (0)

#define PMIX_NODE_STATS_DESTRUCT(m)                                            \
    do {                                                                       \
        if (NULL != (m)->node) {                                               \
            pmix_free((m)->node);                                              \
            (m)->node = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->diskstats) {                                          \
            PMIX_DISK_STATS_FREE((m)->diskstats, (m)->ndiskstats);             \
            (m)->ndiskstats = 0;                                               \
        }                                                                      \
        if (NULL != (m)->netstats) {                                           \
            PMIX_NET_STATS_FREE((m)->netstats, (m)->nnetstats);                \
            (m)->nnetstats = 0;                                                \
        }                                                                      \
    } while (0)

static inline void pmix_node_stats_free(pmix_node_stats_t *nd, size_t n)
{
    size_t k;

    for (k = 0; nd != NULL && k < n; k++) {
        PMIX_NODE_STATS_DESTRUCT(&nd[k]);
    }
}

#define PMIX_NODE_STATS_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_node_stats_free)

/* note: like OpenPMIx 4.2 this only destructs (the struct is not freed) */
#define PMIX_NODE_STATS_RELEASE(m) pmix_node_stats_free(m, 1)

/* ==================================================================== */
/*  Values and info                                                     */
/* ==================================================================== */

/* a typed value; pointer members are owned by the value (malloc'ed) */
typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_persistence_t persist;
        pmix_scope_t scope;
        pmix_data_range_t range;
        pmix_proc_state_t state;
        pmix_proc_info_t *pinfo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_alloc_directive_t adir;
        pmix_envar_t envar;
        pmix_coord_t *coord;
        pmix_link_state_t linkstate;
        pmix_job_state_t jstate;
        pmix_topology_t *topo;
        pmix_cpuset_t *cpuset;
        pmix_locality_t locality;
        pmix_geometry_t *geometry;
        pmix_device_type_t devtype;
        pmix_device_distance_t *devdist;
        pmix_endpoint_t *endpoint;
        pmix_data_buffer_t *dbuf;
        pmix_proc_stats_t *pstats;
        pmix_disk_stats_t *dkstats;
        pmix_net_stats_t *netstats;
        pmix_node_stats_t *ndstats;
    } data;
} pmix_value_t;

#define PMIX_VALUE_STATIC_INIT                                                 \
    {                                                                          \
        .type = PMIX_UNDEF, .data.ptr = NULL                                   \
    }

#define PMIX_VALUE_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_value_t)

#define PMIX_VALUE_CONSTRUCT(m)                                                \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_value_t));                                  \
        (m)->type = PMIX_UNDEF;                                                \
    } while (0)

/* convert a numeric value to @a t into @a n; @a s is PMIX_SUCCESS or
 * PMIX_ERR_BAD_PARAM for a non-numeric type */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                      \
    do {                                                                       \
        (s) = PMIX_SUCCESS;                                                    \
        switch ((m)->type) {                                                   \
        case PMIX_SIZE:                                                        \
            (n) = (t)((m)->data.size);                                         \
            break;                                                             \
        case PMIX_INT:                                                         \
            (n) = (t)((m)->data.integer);                                      \
            break;                                                             \
        case PMIX_INT8:                                                        \
            (n) = (t)((m)->data.int8);                                         \
            break;                                                             \
        case PMIX_INT16:                                                       \
            (n) = (t)((m)->data.int16);                                        \
            break;                                                             \
        case PMIX_INT32:                                                       \
            (n) = (t)((m)->data.int32);                                        \
            break;                                                             \
        case PMIX_INT64:                                                       \
            (n) = (t)((m)->data.int64);                                        \
            break;                                                             \
        case PMIX_UINT:                                                        \
            (n) = (t)((m)->data.uint);                                         \
            break;                                                             \
        case PMIX_UINT8:                                                       \
            (n) = (t)((m)->data.uint8);                                        \
            break;                                                             \
        case PMIX_UINT16:                                                      \
            (n) = (t)((m)->data.uint16);                                       \
            break;                                                             \
        case PMIX_UINT32:                                                      \
            (n) = (t)((m)->data.uint32);                                       \
            break;                                                             \
        case PMIX_UINT64:                                                      \
            (n) = (t)((m)->data.uint64);                                       \
            break;                                                             \
        case PMIX_FLOAT:                                                       \
            (n) = (t)((m)->data.fval);                                         \
            break;                                                             \
        case PMIX_DOUBLE:                                                      \
            (n) = (t)((m)->data.dval);                                         \
            break;                                                             \
        case PMIX_PID:                                                         \
            (n) = (t)((m)->data.pid);                                          \
            break;                                                             \
        case PMIX_PROC_RANK:                                                   \
            (n) = (t)((m)->data.rank);                                         \
            break;                                                             \
        default:                                                               \
            (s) = PMIX_ERR_BAD_PARAM;                                          \
            break;                                                             \
        }                                                                      \
    } while (0)

/* a key, directive flags and a value */
typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t;

#define PMIX_INFO_STATIC_INIT                                                  \
    {                                                                          \
        .key = {0}, .flags = 0, .value = PMIX_VALUE_STATIC_INIT                \
    }

#define PMIX_INFO_CONSTRUCT(m)                                                 \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_info_t));                                   \
        (m)->value.type = PMIX_UNDEF;                                          \
    } while (0)

/* zeroed array of @a n; the last element carries PMIX_INFO_ARRAY_END */
#define PMIX_INFO_CREATE(m, n)                                                 \
    do {                                                                       \
        pmix_info_t *_ic = NULL;                                               \
        if (0 != (n)) {                                                        \
            _ic = (pmix_info_t *)pmix_calloc((n), sizeof(pmix_info_t));        \
            if (NULL != _ic) {                                                 \
                _ic[(n) - 1].flags = PMIX_INFO_ARRAY_END;                      \
            }                                                                  \
        }                                                                      \
        (m) = _ic;                                                             \
    } while (0)

#define PMIX_INFO_REQUIRED(m)       ((m)->flags |= PMIX_INFO_REQD)
#define PMIX_INFO_OPTIONAL(m)       ((m)->flags &= ~PMIX_INFO_REQD)
#define PMIX_INFO_IS_REQUIRED(m)    ((m)->flags & PMIX_INFO_REQD)
#define PMIX_INFO_IS_OPTIONAL(m)    (!((m)->flags & PMIX_INFO_REQD))
#define PMIX_INFO_PROCESSED(m)      ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m)  ((m)->flags & PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_SET_END(m)        ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m)         ((m)->flags & PMIX_INFO_ARRAY_END)
#define PMIX_INFO_SET_QUALIFIER(i)  ((i)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(i)   ((i)->flags & PMIX_INFO_QUALIFIER)
#define PMIX_INFO_SET_PERSISTENT(i) ((i)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(i)  ((i)->flags & PMIX_INFO_PERSISTENT)

typedef enum {
    PMIX_BOOL_TRUE,
    PMIX_BOOL_FALSE,
    PMIX_NON_BOOL
} pmix_boolean_t;

/*
 * Interpret a value as a boolean.  A value without data (PMIX_UNDEF) or a
 * NULL/blank string means "true" (an attribute given without a value is a
 * request to turn the feature on).  Strings: a number (non-zero is true),
 * or a word starting with yes/true/no/false in any case.  Anything else is
 * PMIX_NON_BOOL.
 */
static inline pmix_boolean_t pmix_check_true(const pmix_value_t *value)
{
    const char *s;

    if (value->type == PMIX_UNDEF) {
        return PMIX_BOOL_TRUE;
    }
    if (value->type == PMIX_BOOL) {
        return value->data.flag ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    }
    if (value->type != PMIX_STRING) {
        return PMIX_NON_BOOL;
    }
    s = value->data.string;
    if (s == NULL) {
        return PMIX_BOOL_TRUE;
    }
    while (isspace((unsigned char)*s)) {
        s++;
    }
    if (*s == '\0') {
        return PMIX_BOOL_TRUE;
    }
    if (isdigit((unsigned char)*s)) {
        return (atoi(s) != 0) ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    }
    if (strncasecmp(s, "yes", 3) == 0 || strncasecmp(s, "true", 4) == 0) {
        return PMIX_BOOL_TRUE;
    }
    if (strncasecmp(s, "no", 2) == 0 || strncasecmp(s, "false", 5) == 0) {
        return PMIX_BOOL_FALSE;
    }
    return PMIX_NON_BOOL;
}

#define PMIX_CHECK_TRUE(a)                                                     \
    (PMIX_BOOL_TRUE == pmix_check_true(a) ? true : false)
#define PMIX_CHECK_BOOL(a) (PMIX_NON_BOOL == pmix_check_true(a) ? false : true)
#define PMIX_INFO_TRUE(m)                                                      \
    (PMIX_BOOL_TRUE == pmix_check_true(&(m)->value) ? true : false)

/* ==================================================================== */
/*  Lookup results, applications, queries, attribute registrations      */
/* ==================================================================== */

typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t;

#define PMIX_LOOKUP_STATIC_INIT                                                \
    {                                                                          \
        .proc = PMIX_PROC_STATIC_INIT, .key = {0},                             \
        .value = PMIX_VALUE_STATIC_INIT                                        \
    }

#define PMIX_PDATA_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_pdata_t)

#define PMIX_PDATA_CONSTRUCT(m)                                                \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_pdata_t));                                  \
        (m)->value.type = PMIX_UNDEF;                                          \
    } while (0)

/* one application of a spawn request */
typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t;

#define PMIX_APP_STATIC_INIT                                                   \
    {                                                                          \
        .cmd = NULL, .argv = NULL, .env = NULL, .cwd = NULL, .maxprocs = 0,    \
        .info = NULL, .ninfo = 0                                               \
    }

#define PMIX_APP_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_app_t)

#define PMIX_APP_INFO_CREATE(m, n)                                             \
    do {                                                                       \
        (m)->ninfo = (n);                                                      \
        PMIX_INFO_CREATE((m)->info, (m)->ninfo);                               \
    } while (0)

#define PMIX_APP_CONSTRUCT(m)                                                  \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_app_t));                                    \
    } while (0)

/* one query: NULL-terminated keys plus qualifiers */
typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t;

#define PMIX_QUERY_STATIC_INIT                                                 \
    {                                                                          \
        .keys = NULL, .qualifiers = NULL, .nqual = 0                           \
    }

#define PMIX_QUERY_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_query_t)

#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)                                     \
    do {                                                                       \
        (m)->nqual = (n);                                                      \
        PMIX_INFO_CREATE((m)->qualifiers, (m)->nqual);                         \
    } while (0)

#define PMIX_QUERY_CONSTRUCT(m)                                                \
    do {                                                                       \
        memset((m), 0, sizeof(pmix_query_t));                                  \
    } while (0)

#define PMIX_QUERY_DESTRUCT(m)                                                 \
    do {                                                                       \
        if (NULL != (m)->keys) {                                               \
            pmix_argv_free((m)->keys);                                         \
            (m)->keys = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->qualifiers) {                                         \
            PMIX_INFO_FREE((m)->qualifiers, (m)->nqual);                       \
            (m)->qualifiers = NULL;                                            \
            (m)->nqual      = 0;                                               \
        }                                                                      \
    } while (0)

#define PMIX_QUERY_FREE(m, n)                                                  \
    do {                                                                       \
        size_t _qf;                                                            \
        if (NULL != (m)) {                                                     \
            for (_qf = 0; _qf < (size_t)(n); _qf++) {                          \
                PMIX_QUERY_DESTRUCT(&(m)[_qf]);                                \
            }                                                                  \
            pmix_free((m));                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

#define PMIX_QUERY_RELEASE(m)                                                  \
    do {                                                                       \
        PMIX_QUERY_DESTRUCT((m));                                              \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

/* description of a supported attribute (PMIx_Register_attributes) */
typedef struct pmix_regattr_t {
    char *name;                /* e.g. "PMIX_JOB_SIZE" */
    pmix_key_t string;         /* e.g. "pmix.job.size" */
    pmix_data_type_t type;
    char **description;        /* NULL-terminated lines */
} pmix_regattr_t;

#define PMIX_REGATTR_STATIC_INIT                                               \
    {                                                                          \
        .name = NULL, .string = {0}, .type = PMIX_UNDEF, .description = NULL   \
    }

#define PMIX_REGATTR_CONSTRUCT(a)                                              \
    do {                                                                       \
        if (NULL != (a)) {                                                     \
            memset((a), 0, sizeof(pmix_regattr_t));                            \
            (a)->type = PMIX_UNDEF;                                            \
        }                                                                      \
    } while (0)

#define PMIX_REGATTR_LOAD(a, n, k, t, v)                                       \
    do {                                                                       \
        if (NULL != (n)) {                                                     \
            (a)->name = strdup((n));                                           \
        }                                                                      \
        if (NULL != (k)) {                                                     \
            PMIX_LOAD_KEY((a)->string, (k));                                   \
        }                                                                      \
        (a)->type = (t);                                                       \
        if (NULL != (v)) {                                                     \
            (void)pmix_argv_append_nosize(&(a)->description, (v));             \
        }                                                                      \
    } while (0)

#define PMIX_REGATTR_DESTRUCT(a)                                               \
    do {                                                                       \
        if (NULL != (a)) {                                                     \
            if (NULL != (a)->name) {                                           \
                pmix_free((a)->name);                                          \
                (a)->name = NULL;                                              \
            }                                                                  \
            if (NULL != (a)->description) {                                    \
                pmix_argv_free((a)->description);                              \
                (a)->description = NULL;                                       \
            }                                                                  \
        }                                                                      \
    } while (0)

#define PMIX_REGATTR_CREATE(m, n) RDPMIX_CALLOC_ARRAY(m, n, pmix_regattr_t)

#define PMIX_REGATTR_FREE(m, n)                                                \
    do {                                                                       \
        pmix_regattr_t *_rf = (pmix_regattr_t *)(m);                           \
        size_t _ri;                                                            \
        if (NULL != _rf) {                                                     \
            for (_ri = 0; _ri < (size_t)(n); _ri++) {                          \
                PMIX_REGATTR_DESTRUCT(&_rf[_ri]);                              \
            }                                                                  \
            pmix_free(_rf);                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

/* deep copy @a b into @a a */
#define PMIX_REGATTR_XFER(a, b)                                                \
    do {                                                                       \
        PMIX_REGATTR_CONSTRUCT((a));                                           \
        if (NULL != (b)->name) {                                               \
            (a)->name = strdup((b)->name);                                     \
        }                                                                      \
        PMIX_LOAD_KEY((a)->string, (b)->string);                               \
        (a)->type = (b)->type;                                                 \
        if (NULL != (b)->description) {                                        \
            (a)->description = pmix_argv_copy((b)->description);              \
        }                                                                      \
    } while (0)

/* ==================================================================== */
/*  Fabric registration                                                 */
/* ==================================================================== */

typedef struct pmix_fabric_s {
    char *name;        /* set by the caller */
    size_t index;      /* set by the library */
    pmix_info_t *info; /* fabric description, owned by the library */
    size_t ninfo;
    void *module;      /* library-private */
} pmix_fabric_t;

#define PMIX_FABRIC_STATIC_INIT                                                \
    {                                                                          \
        .name = NULL, .index = 0, .info = NULL, .ninfo = 0, .module = NULL     \
    }

#define PMIX_FABRIC_CONSTRUCT(x) memset(x, 0, sizeof(pmix_fabric_t))

typedef enum {
    PMIX_FABRIC_REQUEST_INFO,
    PMIX_FABRIC_UPDATE_INFO
} pmix_fabric_operation_t;

/* ==================================================================== */
/*  Callbacks of the non-blocking API                                   */
/* ==================================================================== */

/* lets the receiver of data tell its provider that it may be freed */
typedef void (*pmix_release_cbfunc_t)(void *cbdata);

/* completion of a fence or direct modex: @a data stays valid until
 * release_fn(release_cbdata) is called (if release_fn is not NULL) */
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status, const char *data,
                                    size_t ndata, void *cbdata,
                                    pmix_release_cbfunc_t release_fn,
                                    void *release_cbdata);

/* completion of PMIx_Spawn_nb with the new job's nspace */
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status, pmix_nspace_t nspace,
                                    void *cbdata);

/* completion of an operation that returns only a status */
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);

/* completion of PMIx_Lookup_nb; @a data belongs to the library */
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status, pmix_pdata_t data[],
                                     size_t ndata, void *cbdata);

/* called by an event handler when it is done with an event */
typedef void (*pmix_event_notification_cbfunc_fn_t)(
    pmix_status_t status, pmix_info_t *results, size_t nresults,
    pmix_op_cbfunc_t cbfunc, void *thiscbdata, void *notification_cbdata);

/* an event handler */
typedef void (*pmix_notification_fn_t)(
    size_t evhdlr_registration_id, pmix_status_t status,
    const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
    pmix_info_t *results, size_t nresults,
    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata);

/* completion of a handler registration with its reference id */
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid,
                                       void *cbdata);
/* older name of the same */
typedef void (*pmix_evhdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid,
                                         void *cbdata);

/* completion of PMIx_Get_nb; @a kv belongs to the library */
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status, pmix_value_t *kv,
                                    void *cbdata);

/* completion returning an info array that stays valid until
 * release_fn(release_cbdata) is called (if release_fn is not NULL) */
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status, pmix_info_t *info,
                                   size_t ninfo, void *cbdata,
                                   pmix_release_cbfunc_t release_fn,
                                   void *release_cbdata);

/* completion of PMIx_Get_credential_nb */
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status,
                                         pmix_byte_object_t *credential,
                                         pmix_info_t info[], size_t ninfo,
                                         void *cbdata);

/* completion of PMIx_Validate_credential_nb */
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status,
                                         pmix_info_t info[], size_t ninfo,
                                         void *cbdata);

/* completion of PMIx_Compute_distances_nb */
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status,
                                          pmix_device_distance_t *dist,
                                          size_t ndist, void *cbdata,
                                          pmix_release_cbfunc_t release_fn,
                                          void *release_cbdata);

/* ==================================================================== */
/*  Data array construction                                             */
/* ==================================================================== */

/* Size of one element of a pmix_data_array_t of @a type, 0 if arrays of
 * that type are not supported.  Pointer-valued types (e.g. PMIX_PROC_CPUSET)
 * are stored as arrays of the structs, not of pointers. */
static inline size_t rdpmix_darray_elem_size(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_BOOL:
        return sizeof(bool);
    case PMIX_BYTE:
    case PMIX_INT8:
    case PMIX_UINT8:
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_JOB_STATE:
    case PMIX_LINK_STATE:
        return 1;
    case PMIX_INT16:
    case PMIX_UINT16:
    case PMIX_DATA_TYPE:
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_STOR_ACCESS_TYPE:
        return 2;
    case PMIX_INT32:
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES:
        return 4;
    case PMIX_INT64:
    case PMIX_UINT64:
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST:
        return 8;
    case PMIX_INT:
    case PMIX_UINT:
    case PMIX_STATUS:
        return sizeof(int);
    case PMIX_SIZE:
        return sizeof(size_t);
    case PMIX_PID:
        return sizeof(pid_t);
    case PMIX_FLOAT:
        return sizeof(float);
    case PMIX_DOUBLE:
        return sizeof(double);
    case PMIX_TIMEVAL:
        return sizeof(struct timeval);
    case PMIX_TIME:
        return sizeof(time_t);
    case PMIX_STRING:
    case PMIX_POINTER:
        return sizeof(void *);
    case PMIX_VALUE:
        return sizeof(pmix_value_t);
    case PMIX_PROC:
        return sizeof(pmix_proc_t);
    case PMIX_APP:
        return sizeof(pmix_app_t);
    case PMIX_INFO:
        return sizeof(pmix_info_t);
    case PMIX_PDATA:
        return sizeof(pmix_pdata_t);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        return sizeof(pmix_byte_object_t);
    case PMIX_PROC_INFO:
        return sizeof(pmix_proc_info_t);
    case PMIX_DATA_ARRAY:
        return sizeof(pmix_data_array_t);
    case PMIX_QUERY:
        return sizeof(pmix_query_t);
    case PMIX_ENVAR:
        return sizeof(pmix_envar_t);
    case PMIX_COORD:
        return sizeof(pmix_coord_t);
    case PMIX_REGATTR:
        return sizeof(pmix_regattr_t);
    case PMIX_PROC_CPUSET:
        return sizeof(pmix_cpuset_t);
    case PMIX_GEOMETRY:
        return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST:
        return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT:
        return sizeof(pmix_endpoint_t);
    case PMIX_TOPO:
        return sizeof(pmix_topology_t);
    case PMIX_PROC_NSPACE:
        return sizeof(pmix_nspace_t);
    case PMIX_PROC_STATS:
        return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS:
        return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS:
        return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS:
        return sizeof(pmix_node_stats_t);
    case PMIX_DATA_BUFFER:
        return sizeof(pmix_data_buffer_t);
    default:
        return 0;
    }
}

#define PMIX_DATA_ARRAY_INIT(m, t)                                             \
    do {                                                                       \
        (m)->array = NULL;                                                     \
        (m)->type  = (t);                                                      \
        (m)->size  = 0;                                                        \
    } while (0)

/* Give @a m @a n zeroed elements of type @a t (an info array gets the
 * array-end flag on its last element, distances start "unknown").  An
 * unsupported type leaves the array empty (NULL, size 0). */
static inline void rdpmix_darray_construct(pmix_data_array_t *m, size_t n,
                                           pmix_data_type_t t)
{
    size_t esize = rdpmix_darray_elem_size(t);
    size_t i;

    m->type  = t;
    m->size  = n;
    m->array = NULL;
    if (n == 0) {
        return;
    }
    if (esize == 0) {
        m->size = 0;
        return;
    }
    m->array = pmix_calloc(n, esize);
    if (m->array == NULL) {
        return;
    }
    if (t == PMIX_INFO) {
        ((pmix_info_t *)m->array)[n - 1].flags = PMIX_INFO_ARRAY_END;
    } else if (t == PMIX_DEVICE_DIST) {
        for (i = 0; i < n; i++) {
            ((pmix_device_distance_t *)m->array)[i].mindist = UINT16_MAX;
            ((pmix_device_distance_t *)m->array)[i].maxdist = UINT16_MAX;
        }
    }
}

#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) rdpmix_darray_construct((m), (n), (t))

#define PMIX_DATA_ARRAY_CREATE(m, n, t)                                        \
    do {                                                                       \
        (m) = (pmix_data_array_t *)pmix_calloc(1, sizeof(pmix_data_array_t));  \
        if (NULL != (m)) {                                                     \
            PMIX_DATA_ARRAY_CONSTRUCT((m), (n), (t));                          \
        }                                                                      \
    } while (0)

/* ==================================================================== */
/*  Deprecated API still exported by the library                        */
/* ==================================================================== */

PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc,
                                                      pmix_info_t info[],
                                                      size_t ninfo);

/* ==================================================================== */
/*  Value and info helpers (exported functions)                         */
/* ==================================================================== */

/* Load a copy of *@a data (for PMIX_STRING: the string itself; for the
 * pointer-valued struct types: a pointer to the struct) into @a val.
 * A NULL @a data loads the type with empty data. */
PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
                                          pmix_data_type_t type);

/* Return a malloc'ed copy of the data in *@a data and its size in *@a sz.
 * Scalars are returned in storage the caller supplies at *@a data when it
 * is not NULL, otherwise in newly malloc'ed storage. */
PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data,
                                            size_t *sz);

/* free everything @a val owns; the value itself is not freed */
PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *val);

/* deep copy @a src into @a dest */
PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest,
                                          const pmix_value_t *src);

PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1,
                                                pmix_value_t *v2);

/* free the elements of @a d and reset it (the struct is not freed) */
PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d);

/* set @a key and load a copy of @a data (see PMIx_Value_load) */
PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
                                         const void *data,
                                         pmix_data_type_t type);

/* deep copy key, flags and value of @a src into @a dest */
PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest,
                                         const pmix_info_t *src);

/* Build an info array incrementally: start a list, add/insert/xfer
 * entries, convert it to a PMIX_INFO data array, release the list. */
PMIX_EXPORT void *PMIx_Info_list_start(void);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key,
                                             const void *value,
                                             pmix_data_type_t type);
/* takes @a info's contents by reference (a shallow copy kept until release;
 * the caller keeps ownership) */
PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr,
                                              const pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr,
                                                 pmix_data_array_t *par);
PMIX_EXPORT void PMIx_Info_list_release(void *ptr);

#define PMIX_VALUE_LOAD(v, d, t) PMIx_Value_load((v), (d), (t))
#define PMIX_VALUE_UNLOAD(r, k, d, s) (r) = PMIx_Value_unload((k), (d), (s))

/* deep copy @a s into @a v, allocating @a v when it is NULL */
#define PMIX_VALUE_XFER(r, v, s)                                               \
    do {                                                                       \
        if (NULL == (v)) {                                                     \
            (v) = (pmix_value_t *)pmix_malloc(sizeof(pmix_value_t));           \
        }                                                                      \
        if (NULL == (v)) {                                                     \
            (r) = PMIX_ERR_NOMEM;                                              \
        } else {                                                               \
            (r) = PMIx_Value_xfer((v), (s));                                   \
        }                                                                      \
    } while (0)

#define PMIX_VALUE_XFER_DIRECT(r, v, s) (r) = PMIx_Value_xfer((v), (s))

#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct(m)

#define PMIX_VALUE_RELEASE(m)                                                  \
    do {                                                                       \
        PMIX_VALUE_DESTRUCT((m));                                              \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

#define PMIX_VALUE_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_VALUE_DESTRUCT, _vv)

#define PMIX_INFO_LOAD(i, k, d, t) (void)PMIx_Info_load(i, k, d, t)
#define PMIX_INFO_XFER(d, s)       (void)PMIx_Info_xfer(d, s)

/* a persistent info does not own its value */
#define PMIX_INFO_DESTRUCT(m)                                                  \
    do {                                                                       \
        if (!PMIX_INFO_IS_PERSISTENT((m))) {                                   \
            PMIX_VALUE_DESTRUCT(&(m)->value);                                  \
        }                                                                      \
    } while (0)

#define PMIX_INFO_FREE(m, n) RDPMIX_FREE_ARRAY(m, n, PMIX_INFO_DESTRUCT, _is)

#define PMIX_PDATA_LOAD(m, p, k, v, t)                                         \
    do {                                                                       \
        if (NULL != (m)) {                                                     \
            memset((m), 0, sizeof(pmix_pdata_t));                              \
            PMIX_LOAD_NSPACE((m)->proc.nspace, (p)->nspace);                   \
            (m)->proc.rank = (p)->rank;                                        \
            PMIX_LOAD_KEY((m)->key, k);                                        \
            PMIx_Value_load(&(m)->value, (v), (t));                            \
        }                                                                      \
    } while (0)

#define PMIX_PDATA_XFER(d, s)                                                  \
    do {                                                                       \
        if (NULL != (d)) {                                                     \
            memset((d), 0, sizeof(pmix_pdata_t));                              \
            PMIX_LOAD_NSPACE((d)->proc.nspace, (s)->proc.nspace);              \
            (d)->proc.rank = (s)->proc.rank;                                   \
            PMIX_LOAD_KEY((d)->key, (s)->key);                                 \
            PMIx_Value_xfer(&(d)->value, &(s)->value);                         \
        }                                                                      \
    } while (0)

#define PMIX_PDATA_DESTRUCT(m)                                                 \
    do {                                                                       \
        PMIX_VALUE_DESTRUCT(&(m)->value);                                      \
    } while (0)

#define PMIX_PDATA_RELEASE(m)                                                  \
    do {                                                                       \
        PMIX_VALUE_DESTRUCT(&(m)->value);                                      \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

static inline void pmix_pdata_free(pmix_pdata_t *pd, size_t n)
{
    size_t k;

    for (k = 0; pd != NULL && k < n; k++) {
        PMIX_PDATA_DESTRUCT(&pd[k]);
    }
}

#define PMIX_PDATA_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_pdata_free)

#define PMIX_APP_DESTRUCT(m)                                                   \
    do {                                                                       \
        if (NULL != (m)->cmd) {                                                \
            pmix_free((m)->cmd);                                               \
            (m)->cmd = NULL;                                                   \
        }                                                                      \
        if (NULL != (m)->argv) {                                               \
            pmix_argv_free((m)->argv);                                         \
            (m)->argv = NULL;                                                  \
        }                                                                      \
        if (NULL != (m)->env) {                                                \
            pmix_argv_free((m)->env);                                          \
            (m)->env = NULL;                                                   \
        }                                                                      \
        if (NULL != (m)->cwd) {                                                \
            pmix_free((m)->cwd);                                               \
            (m)->cwd = NULL;                                                   \
        }                                                                      \
        if (NULL != (m)->info) {                                               \
            PMIX_INFO_FREE((m)->info, (m)->ninfo);                             \
            (m)->info  = NULL;                                                 \
            (m)->ninfo = 0;                                                    \
        }                                                                      \
    } while (0)

static inline void pmix_app_free(pmix_app_t *ap, size_t n)
{
    size_t k;

    for (k = 0; ap != NULL && k < n; k++) {
        PMIX_APP_DESTRUCT(&ap[k]);
    }
}

#define PMIX_APP_FREE(m, n) RDPMIX_FREE_ARRAY_FN(m, n, pmix_app_free)

#define PMIX_APP_RELEASE(m)                                                    \
    do {                                                                       \
        PMIX_APP_DESTRUCT((m));                                                \
        pmix_free((m));                                                        \
        (m) = NULL;                                                            \
    } while (0)

#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct(m)

#define PMIX_DATA_ARRAY_FREE(m)                                                \
    do {                                                                       \
        if (NULL != (m)) {                                                     \
            PMIX_DATA_ARRAY_DESTRUCT(m);                                       \
            pmix_free((m));                                                    \
            (m) = NULL;                                                        \
        }                                                                      \
    } while (0)

#define PMIX_INFO_LIST_START(p)              (p) = PMIx_Info_list_start()
#define PMIX_INFO_LIST_ADD(r, p, a, v, t)    (r) = PMIx_Info_list_add((p), (a), (v), (t))
#define PMIX_INFO_LIST_INSERT(r, p, i)       (r) = PMIx_Info_list_insert((p), (i))
#define PMIX_INFO_LIST_XFER(r, p, a)         (r) = PMIx_Info_list_xfer((p), (a))
#define PMIX_INFO_LIST_CONVERT(r, p, m)      (r) = PMIx_Info_list_convert((p), (m))
#define PMIX_INFO_LIST_RELEASE(p)            PMIx_Info_list_release((p))

#define PMIX_TOPOLOGY_DESTRUCT(x) PMIx_Topology_destruct(x)

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_COMMON_H */
