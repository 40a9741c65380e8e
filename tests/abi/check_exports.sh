#!/bin/sh
# check_exports.sh - the built libpmix.so.2 can stand in for OpenPMIx's:
# SONAME libpmix.so.2 and every function Debian's Open MPI 4.1.4 imports
# (ABI.md §5.2).  TAP output: one test point for the SONAME, one per symbol.
builddir=${top_builddir:-.}
lib=$builddir/.libs/libpmix.so.2
export LC_ALL=C

# ABI.md §5.2: the 48 symbols mca_pmix_ext3x.so imports from libpmix.so.2
needed="PMIx_Abort PMIx_Commit PMIx_Connect PMIx_Connect_nb
PMIx_Deregister_event_handler PMIx_Disconnect PMIx_Disconnect_nb PMIx_Fence
PMIx_Fence_nb PMIx_Finalize PMIx_Get PMIx_Get_nb PMIx_Get_version PMIx_Init
PMIx_Job_control_nb PMIx_Log_nb PMIx_Lookup PMIx_Lookup_nb PMIx_Notify_event
PMIx_Publish PMIx_Publish_nb PMIx_Put PMIx_Query_info_nb
PMIx_Register_event_handler PMIx_Resolve_nodes PMIx_Resolve_peers PMIx_Spawn
PMIx_Spawn_nb PMIx_Unpublish PMIx_Unpublish_nb
PMIx_Info_load PMIx_Value_destruct
PMIx_Store_internal PMIx_generate_regex PMIx_generate_ppn
PMIx_server_init PMIx_server_finalize PMIx_server_register_nspace
PMIx_server_deregister_nspace PMIx_server_register_client
PMIx_server_deregister_client PMIx_server_setup_fork
PMIx_server_dmodex_request PMIx_server_setup_application
PMIx_server_setup_local_support PMIx_server_IOF_deliver
PMIx_tool_init PMIx_tool_finalize"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
if [ -f "$lib" ]; then
    soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u \
        > "$tmp/exports"
else
    soname="(no $lib)"
    : > "$tmp/exports"
fi

n=$((n + 1))
if [ "$soname" = libpmix.so.2 ]; then
    echo "ok $n - SONAME is libpmix.so.2"
else
    echo "not ok $n - SONAME is libpmix.so.2 (found: $soname)"
fi

missing=0
for sym in $needed; do
    n=$((n + 1))
    if grep -qx "$sym" "$tmp/exports"; then
        echo "ok $n - exports $sym"
    else
        echo "not ok $n - exports $sym"
        missing=$((missing + 1))
    fi
done
echo "# $missing of 48 symbols Open MPI 4.1.4 needs are missing"

# for information: how much of OpenPMIx 4.2.2's export list we cover
system=/usr/lib/x86_64-linux-gnu/libpmix.so.2
if [ -f "$system" ] && [ "$(readlink -f "$system")" != "$(readlink -f "$lib")" ]; then
    nm -D --defined-only "$system" | awk '$2 == "T" && $3 ~ /^PMIx_/ { print $3 }' \
        | sort -u > "$tmp/theirs"
    have=$(comm -12 "$tmp/theirs" "$tmp/exports" | wc -l)
    echo "# we export $have of the $(wc -l < "$tmp/theirs") PMIx_ functions OpenPMIx 4.2.2 exports"
    # a program linked against OpenPMIx must never fail to load on ours
    n=$((n + 1))
    lacking=$(comm -23 "$tmp/theirs" "$tmp/exports" | tr '\n' ' ')
    if [ -z "$lacking" ]; then
        echo "ok $n - exports every PMIx_ function OpenPMIx 4.2.2 exports"
    else
        echo "not ok $n - exports every PMIx_ function OpenPMIx 4.2.2 exports (missing: $lacking)"
    fi
fi

# clients load libpmix.so.2 only: UCX and libcrypto (5 M instructions of
# dynamic linking and constructors per process) come with the engine's
# module, which exports nothing but its entry point
n=$((n + 1))
heavy=$(readelf -d "$lib" 2>/dev/null \
    | sed -n 's/.*(NEEDED).*\[\(libuc[a-z]*\|libcrypto\)[^]]*\].*/\1/p' \
    | tr '\n' ' ')
if [ -f "$lib" ] && [ -z "$heavy" ]; then
    echo "ok $n - libpmix.so.2 needs neither UCX nor libcrypto"
else
    echo "not ok $n - libpmix.so.2 needs neither UCX nor libcrypto (needs: $heavy)"
fi
module=$builddir/.libs/rdpmix_ucx.so
n=$((n + 1))
mexports=$(nm -D --defined-only "$module" 2>/dev/null \
    | awk '$2 == "T" { print $3 }' | tr '\n' ' ')
if [ "$mexports" = "rdpmix_ucx_module_init " ]; then
    echo "ok $n - the UCX module exports only rdpmix_ucx_module_init"
else
    echo "not ok $n - the UCX module exports only rdpmix_ucx_module_init (exports: $mexports)"
fi
echo "1..$n"
