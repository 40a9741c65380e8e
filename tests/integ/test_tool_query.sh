#!/bin/sh
# test_tool_query.sh - a tool queries every key of issue 12 from a running
# job of 1, 2 and 3 nodes (run_tool query, one fact a line), through each
# daemon by its pid, and by search, URI, server nspace and the system
# server; every answer is held against what was launched: the ranks' own
# pids, hosts and nspace, the command line, the daemons' rendezvous files
# and the memory /proc shows for the ranks and the daemon.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"
. "${top_srcdir:-.}/tests/integ/test_tool_common.sh"

rdpmixd="$builddir/src/run/rdpmixd"
info="$builddir/src/run/rdpmix-info"
# rdpmix-info --query --json: the answer names the tool side's functions
json_tool_fns='
import json, sys
q = json.load(open(sys.argv[1]))["query"]
assert q["status"] == "SUCCESS", q
a = q["pmix.qry.attrs"]
assert "pmix.tool.fns" in a and "PMIx_tool_init," in a and "IOF" not in a, a
'

# the ranks as they report themselves: "RANK PID HOST" lines
ranks() {
    sed -n 's/^tool-target rank \([0-9]*\) pid \([0-9]*\) host \([^ ]*\) .*/\1 \2 \3/p' \
        "$tmp/out"
}

# table_is FILE LABEL [HOST]: FILE has one LABEL line per rank (of HOST
# only, when given) with its pid, host, running state, program and nspace,
# and no other LABEL line
table_is() {
    _want=0
    _ns=$(job_nspace)
    while read -r _r _p _h; do
        [ -n "$3" ] && [ "$_h" != "$3" ] && continue
        grep -qx "$2 $_r pid $_p host $_h state PROC EXECUTING exe $client ns $_ns" "$1" ||
            { echo "# $2: rank $_r missing"; return 1; }
        _want=$((_want + 1))
    done <<EOF
$(ranks)
EOF
    [ "$_want" -gt 0 ] && [ "$(grep -c "^$2 " "$1")" -eq "$_want" ]
}

# rss_mb PID: its resident megabytes, as /proc says
rss_mb() {
    awk '/^VmRSS:/ { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"
}

# memory_is FILE DAEMON-PID HOST: the daemon's megabytes are its own (give
# or take 2 MB: it may grow while answering); the ranks' least, average
# and most lie within what /proc shows for HOST's ranks (0.2 MB rounding)
memory_is() {
    _d=$(rss_mb "$2")
    _lo=$(ranks | awk -v h="$3" '$3 == h { print $2 }' | while read -r _p; do
        rss_mb "$_p"; done | sort -n | head -1)
    _hi=$(ranks | awk -v h="$3" '$3 == h { print $2 }' | while read -r _p; do
        rss_mb "$_p"; done | sort -n | tail -1)
    sed -n 's/^memory daemon \([-0-9.]*\) avg \([-0-9.]*\) min \([-0-9.]*\) max \([-0-9.]*\)$/\1 \2 \3 \4/p' \
        "$1" | awk -v d="$_d" -v lo="$_lo" -v hi="$_hi" '
        { ok = $1 > 0 && $1 - d < 2 && d - $1 < 2 &&
               $3 >= lo - 0.2 && $4 <= hi + 0.2 &&
               $3 <= $2 && $2 <= $4; n++ }
        END { exit !(n == 1 && ok) }'
}

# servers_are FILE: the available servers are the daemons, by pid
servers_are() {
    [ "$(sed -n 's/^server .* pid \([0-9]*\)$/\1/p' "$1" | sort)" = \
        "$(daemon_files | cut -d' ' -f2 | sort)" ]
}

# query_ok FILE DAEMON-PID HOST WHAT: every key of the tool's query
query_ok() {
    _f=$1
    _dpid=$2
    _dhost=$3
    check_that "$4: every key is answered" 'grep -qx "all SUCCESS n 10" "$_f"'
    check_that "$4: PMIX_QUERY_NAMESPACES is the job" \
        'grep -qx "namespaces $(job_nspace)" "$_f"'
    check_that "$4: PMIX_QUERY_NAMESPACE_INFO, read as OpenPMIx's tool.c: the job and its command line" \
        'grep -qx "nsinfo $(job_nspace) cmd $client wait $tmp/go $job_secs" "$_f" && [ "$(grep -c "^nsinfo " "$_f")" -eq 1 ]'
    check_that "$4: PMIX_QUERY_JOB_STATUS: running" \
        'grep -qx "jobstatus SUCCESS" "$_f"'
    check_that "$4: PMIX_QUERY_PROC_TABLE: every rank of every node" \
        'table_is "$_f" table'
    check_that "$4: PMIX_QUERY_LOCAL_PROC_TABLE: the ranks on $3" \
        'table_is "$_f" local "$_dhost"'
    check_that "$4: no spawn or debugger support, no process sets" \
        'grep -qx "spawn \[\]" "$_f" && grep -qx "debug \[\]" "$_f" && grep -qx "psets 0 \[\]" "$_f"'
    check_that "$4: PMIX_QUERY_MEMORY_USAGE: the daemon's and $3's ranks'" \
        'memory_is "$_f" "$_dpid" "$_dhost"'
    check_that "$4: attribute support of the host (through the server)" \
        'grep -q "^hostfns .*PMIx_Query_info" "$_f"'
    check_that "$4: attribute support of the tool: its functions, no IOF" \
        'grep -q "^toolfns PMIx_tool_init,.*PMIx_tool_get_servers" "$_f" && ! grep -q "^toolfns .*IOF" "$_f"'
    check_that "$4: ... and the ways PMIx_tool_init connects" \
        'grep -Eq "^toolattrs PMIx_tool_init .*PMIX_SERVER_PIDINFO,.*PMIX_CONNECT_TO_SYSTEM" "$_f"'
    check_that "$4: PMIX_QUERY_AVAIL_SERVERS: the job's daemons" \
        'servers_are "$_f"'
    check_that "$4: a known and an unknown key: PMIX_QUERY_PARTIAL_SUCCESS" \
        'grep -qx "partial QUERY-PARTIAL-SUCCESS n 1" "$_f" && grep -qx "notfound NOT-FOUND n 0" "$_f"'
}

for m in 1 2 3; do
    np=$((m + 2))
    # many tools attach one after the other: time for a loaded machine
    start_job "$m" "$np" 400
    daemon_files >"$tmp/dfiles"
    n=0
    while read -r f p; do
        h=$(basename "$f")
        h=${h#pmix.}
        h=${h%.tool.*}
        timeout -k 5 60 "$tool" query pid="$p" >"$tmp/q" 2>&1
        query_ok "$tmp/q" "$p" "$h" "$m nodes, daemon $n by pid"
        n=$((n + 1))
    done <"$tmp/dfiles"
    check_that "$m nodes: $m daemons were asked" '[ "$n" -eq "$m" ]'
    set -- $(tail -1 "$tmp/dfiles")
    h=$(basename "$1")
    h=${h#pmix.}
    h=${h%.tool.*}
    uri=$(sed -n 1p "$1")
    timeout -k 5 60 "$tool" query uri="$uri" >"$tmp/q" 2>&1
    check_that "$m nodes: by URI: the proc table" 'table_is "$tmp/q" table'
    check_that "$m nodes: by URI: the local proc table of $h" \
        'table_is "$tmp/q" local "$h"'
    dns=${uri%%;*}
    dns=${dns%.*}
    PMIX_HOSTNAME="$h" timeout -k 5 60 "$tool" query ns="$dns" \
        qns="$(job_nspace)" >"$tmp/q" 2>&1
    check_that "$m nodes: by server nspace on $h, PMIX_NSPACE named: the tables" \
        'table_is "$tmp/q" table && table_is "$tmp/q" local "$h"'
    timeout -k 5 60 "$tool" query pid="$2" qns=rdpmix.nosuch >"$tmp/q" 2>&1
    check_that "$m nodes: another job named: no table, status or memory of ranks" \
        'grep -q "^all QUERY-PARTIAL-SUCCESS " "$tmp/q" && grep -qx "table none" "$tmp/q" && grep -qx "jobstatus none" "$tmp/q"'
    check_that "$m nodes: another job named: no namespace info (PMIX_NSPACE picks whose)" \
        'grep -qx "nsinfo none" "$tmp/q"'
    if [ "$m" -eq 1 ]; then
        timeout -k 5 60 "$tool" query >"$tmp/q" 2>&1
        query_ok "$tmp/q" "$2" "$h" "1 node, by search"
    fi
    timeout -k 5 60 "$info" --query >"$tmp/i" 2>"$tmp/ierr"
    irc=$?
    if [ "$m" -eq 1 ]; then
        check_that "1 node: rdpmix-info --query: the functions of each side" \
            '[ "$irc" -eq 0 ] && grep -Eq "^ *status +SUCCESS$" "$tmp/i" && grep -q "PMIx_Get," "$tmp/i" && grep -q "PMIx_server_init" "$tmp/i" && grep -q "PMIx_tool_init," "$tmp/i"'
        timeout -k 5 60 "$info" --query --json >"$tmp/i" 2>"$tmp/ierr"
        if command -v python3 >/dev/null 2>&1; then
            check_that "1 node: rdpmix-info --query --json: the tool side's functions" \
                'python3 -c "$json_tool_fns" "$tmp/i"'
        else
            skip "no python3 to read JSON"
        fi
    else
        check_that "$m nodes: rdpmix-info --query with several servers: an error" \
            '[ "$irc" -eq 1 ] && grep -q "no server to ask" "$tmp/ierr"'
    fi
    if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups \
            "$tool" query uri="$uri" >"$tmp/q" 2>&1
        check_that "$m nodes: a tool of another user learns nothing" \
            'grep -q "^tool_init: " "$tmp/q" && ! grep -q "$(job_nspace)" "$tmp/q"'
    else
        skip "not root or no setpriv: cannot run a tool as another user"
    fi
    stop_job
    check_that "$m nodes: the job ends normally" '[ "$rc" -eq 0 ]'
done

# the system server hosts no job: what it knows without one
sys=$(mktemp -d /tmp/rdpmix-sys.XXXXXX)
trap 'rm -rf "$tmp" "$sys"' EXIT
timeout -k 5 120 "$rdpmixd" --system --system-tmpdir "$sys" \
    >"$tmp/sysout" 2>"$tmp/syserr" &
sys_pid=$!
poll '[ -n "$(ls "$sys"/pmix.sys.* 2>/dev/null)" ]'
timeout -k 5 60 "$tool" query system tmpdir="$sys" >"$tmp/q" 2>&1
check_that "system: no job: no namespace, no proc table, a partial answer" \
    'grep -q "^all QUERY-PARTIAL-SUCCESS " "$tmp/q" && grep -qx "namespaces " "$tmp/q" && grep -qx "table none" "$tmp/q"'
check_that "system: its own memory" \
    'grep -Eq "^memory daemon [1-9][0-9.]* avg -1.0 min -1.0 max -1.0$" "$tmp/q"'
kill -TERM "$sys_pid"
wait "$sys_pid"

finish
