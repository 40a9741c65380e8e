#!/bin/sh
# test_tool.sh - tools (RFC0010): a tool attaches to the daemons of a
# running job (rdpmix-run --nodes 1 and 3) by search, server pid, server
# nspace, URI; queries namespaces and proc tables (rdpmix-ps, checked
# against what the ranks say of themselves); logs into the job's output;
# gets job info; required directives of PMIx_tool_init / set_server;
# a tool of another user is refused; several session
# servers and none chosen is an error; rdpmixd --system with a private
# PMIX_SYSTEM_TMPDIR (system only, system first, retries until it appears).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"
. "${top_srcdir:-.}/tests/integ/test_tool_common.sh"

ps="$builddir/src/run/rdpmix-ps"
rdpmixd="$builddir/src/run/rdpmixd"

# every rank's line "NSPACE RANK HOST PID" is in rdpmix-ps output $1
ps_lists_ranks() {
    _ns=$(job_nspace)
    sed -n 's/^tool-target rank \([0-9]*\) pid \([0-9]*\) host \([^ ]*\) .*/\1 \2 \3/p' \
        "$tmp/out" | while read -r _r _p _h; do
        grep -Eq "^$_ns +$_r +$_h +$_p +" "$1" || { echo "# rank $_r missing"; exit 1; }
    done
}

# ---- one node: every way to name the one server ----
start_job 1 2
ns=$(job_nspace)
set -- $(daemon_files | head -1)
dfile=$1
dpid=$2
check_that "1 node: the daemon publishes pmix.<host>.tool.<pid> in its tmpdir" \
    '[ -n "$dpid" ] && kill -0 "$dpid"'
check_that "1 node: ... with OpenPMIx's layout (URI, version, pid, uid:gid)" \
    '[ "$(sed -n 3p "$dfile")" = "$dpid" ] && [ "$(sed -n 4p "$dfile")" = "$(id -u):$(id -g)" ] && sed -n 1p "$dfile" | grep -q ";unix:/"'
"$tool" ident >"$tmp/t1" 2>&1
check_that "1 node: a tool finds the one session server by search" \
    'grep -q "^tool tool\.[^ ]*:0 server rdpmixd\.[^ ]*:0$" "$tmp/t1"'
"$ps" >"$tmp/ps1" 2>&1
check_that "1 node: rdpmix-ps (search) lists the job's ranks, pids and hosts" \
    'ps_lists_ranks "$tmp/ps1"'
check_that "1 node: ... as running, with their executable" \
    '[ "$(grep -c "PROC EXECUTING.*run_client" "$tmp/ps1")" -eq 2 ]'
"$tool" ident sysfirst >"$tmp/t1" 2>&1
check_that "1 node: system-first without a system server falls back to the session server" \
    'grep -q "server rdpmixd\." "$tmp/t1"'
"$tool" ident toolns=mytool.x toolrank=3 >"$tmp/t1" 2>&1
check_that "1 node: a tool may bring its own identity (PMIX_TOOL_NSPACE/RANK)" \
    'grep -q "^tool mytool\.x:3 " "$tmp/t1"'
"$tool" ident toolns="$ns" >"$tmp/t1" 2>&1
check_that "1 node: ... but not a job's nspace" \
    'grep -q "^tool_init: " "$tmp/t1"'
"$tool" ident timeout=5 reqd >"$tmp/t1" 2>&1
check_that "1 node: a required directive PMIx_tool_init does not support: NOT-SUPPORTED" \
    'grep -qx "tool_init: NOT-SUPPORTED" "$tmp/t1"'
"$tool" ident timeout=5 >"$tmp/t1" 2>&1
check_that "1 node: ... the same directive optional: ignored" \
    'grep -q "^tool .* server rdpmixd\." "$tmp/t1"'
"$tool" ident pid="$dpid" reqd >"$tmp/t1" 2>&1
check_that "1 node: ... a required directive it supports (PMIX_SERVER_PIDINFO): attached" \
    'grep -q "^tool .* server rdpmixd\." "$tmp/t1"'
"$tool" setserver >"$tmp/t1" 2>&1
check_that "1 node: PMIx_tool_set_server: a required unsupported directive fails, an optional one not" \
    'grep -qx "set_server reqd NOT-SUPPORTED" "$tmp/t1" && grep -qx "set_server optional SUCCESS" "$tmp/t1"'
"$tool" get "$ns" >"$tmp/t1" 2>&1
check_that "1 node: a tool gets the job's PMIX_JOB_SIZE" \
    'grep -qx "job size 2" "$tmp/t1"'
"$tool" log "tool says hello" pid="$dpid" >"$tmp/t1" 2>&1
check_that "1 node: PMIx_Log_nb from a tool succeeds" 'grep -qx "log SUCCESS" "$tmp/t1"'
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$tool" ident uri="$(sed -n 1p "$dfile")" >"$tmp/t1" 2>&1
    check_that "1 node: a tool of another user is refused by the job's daemon" \
        'grep -q "^tool_init: " "$tmp/t1" && ! grep -q "$ns" "$tmp/t1"'
else
    skip "not root or no setpriv: cannot run a tool as another user"
fi
stop_job
check_that "1 node: the job ends normally" '[ "$rc" -eq 0 ]'
check_that "1 node: the tool's log line is in the job's output, with its timestamp" \
    'grep -Eq "^\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\] tool says hello$" "$tmp/out" "$tmp/err"'
check_that "1 node: ... once (PMIX_LOG_ONCE): not on stderr too" \
    '! grep -q "tool says hello twice" "$tmp/out" "$tmp/err"'
check_that "1 node: the rendezvous files are gone with the daemon" \
    '[ -z "$(daemon_files)" ]'

# ---- three nodes ----
start_job 3 5
ns=$(job_nspace)
"$tool" ident >"$tmp/t3" 2>"$tmp/t3err"
check_that "3 nodes: no server chosen among several: a clear error" \
    'grep -qx "tool_init: BAD-PARAM" "$tmp/t3" && grep -q "3 servers match" "$tmp/t3err"'
n=0
daemon_files >"$tmp/dfiles"
while read -r f p; do
    "$ps" --pid "$p" >"$tmp/ps3" 2>&1
    check_that "3 nodes: rdpmix-ps --pid of daemon $n lists every rank of every node" \
        'ps_lists_ranks "$tmp/ps3"'
    uri=$(sed -n 1p "$f")
    id=${uri%%;*}
    "$tool" ident uri="$uri" >"$tmp/t3" 2>&1
    check_that "3 nodes: a tool reaches daemon $n by its URI" \
        'grep -qx "tool .* server ${id%.*}:${id##*.}" "$tmp/t3"'
    n=$((n + 1))
done <"$tmp/dfiles"
check_that "3 nodes: three daemons published rendezvous files" '[ "$n" -eq 3 ]'
dns=$(sed -n 's/^\([^;]*\)\.[0-9]*;.*/\1/p' "$(head -1 "$tmp/dfiles" | cut -d' ' -f1)")
"$tool" ident ns="$dns" >"$tmp/t3" 2>"$tmp/t3err"
check_that "3 nodes: by nspace alone (the daemons share one): several, an error" \
    'grep -qx "tool_init: BAD-PARAM" "$tmp/t3"'
node1=$(sed -n 's/^tool-target rank [0-9]* pid [0-9]* host \([^ ]*\) .*/\1/p' "$tmp/out" | sort -u | sed -n 2p)
PMIX_HOSTNAME="$node1" "$tool" ident ns="$dns" >"$tmp/t3" 2>&1
check_that "3 nodes: by nspace from node $node1: that node's daemon" \
    'grep -q "server $dns:[12]$" "$tmp/t3"'
PMIX_HOSTNAME="$node1" "$ps" --nspace "$dns" --json >"$tmp/ps3.json" 2>&1
if command -v python3 >/dev/null 2>&1; then
    check_that "3 nodes: rdpmix-ps --json names the job and its 5 ranks with pids" \
        'python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
jobs = [j for j in d[\"jobs\"] if j[\"nspace\"] == sys.argv[2]]
ranks = sorted(p[\"rank\"] for p in jobs[0][\"procs\"])
assert ranks == list(range(5)), ranks
assert all(p[\"pid\"] > 0 and p[\"state\"] for p in jobs[0][\"procs\"])
" "$tmp/ps3.json" "$ns"'
else
    skip "no python3 to read JSON"
fi
set -- $(sed -n 2p "$tmp/dfiles")
"$tool" log "tool log on node 1" pid="$2" >"$tmp/t3" 2>&1
check_that "3 nodes: a tool logs through daemon 1" 'grep -qx "log SUCCESS" "$tmp/t3"'
"$tool" get "$ns" pid="$2" >"$tmp/t3" 2>&1
check_that "3 nodes: a tool gets the job's size from daemon 1" \
    'grep -qx "job size 5" "$tmp/t3"'
stop_job
check_that "3 nodes: the job ends normally" '[ "$rc" -eq 0 ]'
check_that "3 nodes: the tool's log line is in the job's output, with its timestamp" \
    'grep -Eq "^\[[0-9-]{10}T[0-9:]{8}Z\] tool log on node 1$" "$tmp/out" "$tmp/err"'
check_that "3 nodes: ... once (PMIX_LOG_ONCE)" \
    '! grep -q "tool log on node 1 twice" "$tmp/out" "$tmp/err"'

# ---- the system server ----
# a system tmpdir others can read, so another user's tool reaches it
sys=$(mktemp -d /tmp/rdpmix-sys.XXXXXX)
chmod 755 "$sys"
systd=$(mktemp -d /tmp/rdpmix-systd.XXXXXX)
chmod 711 "$systd"
trap 'rm -rf "$tmp" "$sys" "$systd"' EXIT
"$tool" ident system tmpdir="$sys" retries=30 delay=1 >"$tmp/tr" 2>&1 &
retry_pid=$!
sleep 1
TMPDIR="$systd" timeout -k 5 120 "$rdpmixd" --system --system-tmpdir "$sys" \
    >"$tmp/sysout" 2>"$tmp/syserr" &
sys_pid=$!
poll '[ -n "$(ls "$sys"/pmix.sys.* 2>/dev/null)" ]'
check_that "system: rdpmixd --system publishes pmix.sys.<host> in PMIX_SYSTEM_TMPDIR" \
    '[ -f "$sys/pmix.sys.$(hostname)" ]'
wait "$retry_pid"
check_that "system: a tool that started first finds it by retrying" \
    'grep -q "server rdpmixd-system\.[0-9]*:0$" "$tmp/tr"'
"$tool" ident system tmpdir="$sys" >"$tmp/ts" 2>&1
check_that "system: PMIX_CONNECT_TO_SYSTEM reaches it" \
    'grep -q "server rdpmixd-system\.[0-9]*:0$" "$tmp/ts"'
"$ps" --system --tmpdir "$sys" >"$tmp/pss" 2>&1
psrc=$?
check_that "system: rdpmix-ps --system lists no job" \
    '[ "$psrc" -eq 0 ] && [ "$(wc -l <"$tmp/pss")" -eq 1 ] && grep -q "^NSPACE" "$tmp/pss"'
"$tool" log "system tool log" system tmpdir="$sys" >"$tmp/ts" 2>&1
check_that "system: a tool logs to the system server's stdout" \
    'grep -qx "log SUCCESS" "$tmp/ts" && poll "grep -q \"system tool log\" \"$tmp/sysout\""'
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$tool" ident system tmpdir="$sys" >"$tmp/ts" 2>"$tmp/tserr"
    check_that "system: a tool of another user is refused by its credentials" \
        'grep -qx "tool_init: NO-PERMISSIONS" "$tmp/ts"'
else
    skip "not root or no setpriv: cannot run a tool as another user"
fi
"$tool" ident system tmpdir="$tmp/nosys" >"$tmp/ts" 2>&1
check_that "system: no system server there: unreachable" \
    'grep -qx "tool_init: UNREACHABLE" "$tmp/ts"'
kill -TERM "$sys_pid"
wait "$sys_pid"
check_that "system: rdpmixd --system ends on SIGTERM and removes its file" \
    '[ -z "$(ls "$sys")" ]'

# a job's fabric credential (--pnet opa) is its own processes': a tool
# attached to any of its daemons gets PMIX_ERR_NO_PERMISSIONS, while the
# same tool reads the job's size (docs/pnet.md, "Secrets")
job_opts="--pnet opa"
for nodes in 1 3; do
    start_job $nodes 3
    ns=$(job_nspace)
    daemon_files | while read -r _f dpid; do
        "$tool" cred "$ns" pid="$dpid" >"$tmp/tc.$dpid" 2>&1
        "$tool" get "$ns" pid="$dpid" >>"$tmp/tc.$dpid" 2>&1
    done
    stop_job
    ndaemons=$(ls "$tmp"/tc.* 2>/dev/null | wc -l)
    nrefused=$(grep -lx "cred NO-PERMISSIONS" "$tmp"/tc.* 2>/dev/null | wc -l)
    nsized=$(grep -lx "job size 3" "$tmp"/tc.* 2>/dev/null | wc -l)
    check_that "--nodes $nodes --pnet opa: a tool may not read the job's credential from any of its $ndaemons daemons ($nrefused refused, $nsized read the job size)" \
        '[ $rc -eq 0 ] && [ "$ndaemons" -eq $nodes ] && [ "$nrefused" -eq $nodes ] && [ "$nsized" -eq $nodes ]'
    rm -f "$tmp"/tc.*
done
job_opts=

echo "1..$tnum"
exit $tfail
