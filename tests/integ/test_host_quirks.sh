#!/bin/sh
# test_host_quirks.sh - rdpmix's server under a host with the habits real
# hosts have (tests/integ/rm_host.c; Slurm 22.05 has every one of them):
# each habit alone and all together, on 1, 2 and 3 nodes.  A hang is a
# failure: rm_host kills everything after RM_HOST_TIMEOUT seconds.  Every
# scenario also proves the host saw no call into it from inside one of its
# own callbacks (rm_host counts them).  A fence participant that leaves:
# the server passes the failed fence up with PMIX_LOCAL_COLLECTIVE_STATUS,
# which rm_host, like a host that honours the Standard, hands to every
# node's fence (docs/design.md, "Departures in host-delegated mode").
# Connect and groups across nodes run through the host too: its fence_nb,
# or its group upcall (docs/design.md, "Groups").  And the server itself
# never warned that it called into the host from inside one of the host's
# callbacks (its marker, docs/design.md "Calls into the host"): whatever
# the host's lock catches, the server must not have seen either.
builddir=${top_builddir:-.}
host="$builddir/tests/integ/rm_host"
client="$builddir/tests/integ/rm_client"
run_client="$builddir/tests/integ/run_client"
n=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RM_HOST_TIMEOUT=40
# the server's warnings go to stderr: kept for the checks below
export RDPMIX_LOG_LEVEL=warn

scenario() {
    nodes=$1
    ppn=$2
    quirks=$3
    np=$((nodes * ppn))
    n=$((n + 1))
    if RM_HOST_QUIRKS=$quirks timeout -k 5 60 "$host" "$nodes" "$ppn" \
        "$client" "$nodes" "$ppn" >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    oks=$(grep -c "^rank [0-9]* of $np ok$" "$tmp/out")
    if [ "$quirks" = fork-setup ] && grep -q "fork-setup quirk off" "$tmp/err"
    then
        # a sanitizer build (rm_host.c, drop_unsafe_quirks): the habit
        # alone is tested in the regular build
        echo "ok $n # SKIP $nodes nodes x $ppn, host quirks: $quirks" \
             "(AddressSanitizer's allocator is not fork-safe)"
    elif [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ] && [ -z "$(inside_cb)" ]
    then
        echo "ok $n - $nodes nodes x $ppn, host quirks: $quirks"
    else
        echo "not ok $n - $nodes nodes x $ppn, host quirks: $quirks:" \
             "exit $rc, $oks of $np ok, $(inside_cb | wc -l) calls into" \
             "the host from inside its callbacks"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
}

# the server warned of a call into the host from inside the host's
# callback (src/core/server/hostcall.c) in FILES (default: stderr)
inside_cb() {
    [ $# -gt 0 ] || set -- "$tmp/err"
    grep -h "from inside its .* callback" "$@" 2>/dev/null
}
# stderr of the last scenario mentions PATTERN
said() {
    n=$((n + 1))
    if grep -q "$1" "$tmp/err"; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        sed 's/^/# /' "$tmp/err" | head -20
        fail=1
    fi
}

for q in none fork-setup v4-connected locked-cbs bad-nodeid int-appnum; do
    scenario 2 2 "$q"
done
scenario 3 2 bad-nodeid
said "contradict its hostnames" \
     "contradictory node ids are reported once, not refused"
scenario 2 2 int-appnum
said "registers pmix.appnum as PMIX_INT where the Standard says PMIX_UINT32" \
     "an int appnum is converted to the Standard's uint32, with a warning"
for nodes in 1 2 3; do
    scenario "$nodes" 3 all
done

# leave NODES PPN HOW LEAVER collect|barrier early|late: every other rank's
# fence ends with PMIX_ERR_PROC_TERM_WO_SYNC (-200)
leave() {
    np=$(($1 * $2))
    n=$((n + 1))
    if timeout -k 5 60 "$host" "$1" "$2" "$run_client" leave "$3" "$4" "$5" \
        0 "$6" >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    got=$(grep -c "^rank [0-9]* fence -200$" "$tmp/out")
    others=$(grep -c "^rank [0-9]* fence " "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$got" -eq $((np - 1)) ] \
        && [ "$others" -eq "$got" ] && [ -z "$(inside_cb)" ]; then
        echo "ok $n - $1 nodes x $2, host quirks: all; rank $4 $3 ($6)," \
             "the others' fences ($5) end with PROC_TERM_WO_SYNC"
    else
        echo "not ok $n - $1 nodes x $2, rank $4 $3 ($6), fences ($5):" \
             "exit $rc, $got of $((np - 1)) got PROC_TERM_WO_SYNC," \
             "$(inside_cb | wc -l) calls into the host from inside its callbacks"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
}
leave 2 2 fin 0 barrier late
leave 2 2 fin 3 collect early
leave 2 2 exit 1 collect late
leave 3 2 fin 2 barrier early

# connect and disconnect under a host without those upcalls (Slurm 22.05
# has none): they run as fences without data over the same processes
# (tests/integ/run_client_connect.c says what each mode checks); a
# participant that leaves fails them on every node, as a fence
hconnect() {
    np=$(($1 * $2))
    n=$((n + 1))
    want="^rank [0-9]* connect $3 ok\$"
    count=$np
    if [ "$3" = die ]; then
        want="^rank [0-9]* connect die -200\$"
        count=$((np - 1))
    fi
    if timeout -k 5 60 "$host" "$1" "$2" "$run_client" connect "$3" $4 \
        >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    got=$(grep -c "$want" "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$got" -eq "$count" ] && [ -z "$(inside_cb)" ]
    then
        echo "ok $n - $1 nodes x $2, host quirks: all; connect $3${4:+ $4} as fences"
    else
        echo "not ok $n - $1 nodes x $2, connect $3${4:+ $4}: exit $rc," \
             "$got of $count as expected, $(inside_cb | wc -l) calls into" \
             "the host from inside its callbacks"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
}
hconnect 2 2 all
hconnect 3 1 all
hconnect 2 2 subsets
hconnect 2 2 die 0
hconnect 2 2 die 3
# groups across nodes without the engine (tests/integ/run_client_group.c
# says what each mode checks): under a host with only fence_nb they run as
# its fences carrying each server's block; RM_HOST_GROUP=1 gives the host a
# group upcall, which the server then calls instead (each node reports how
# often).  "exit": the last rank exits without finalizing, and the failure
# reaches the other nodes through the host's collective
hgroup() {
    np=$(($1 * $2))
    n=$((n + 1))
    count=$np
    [ "$4" = exit ] && count=$((np - 1))
    # through the host a failed construct's culprit (the member that left)
    # is told on its own node only (docs/status.md, groups, part)
    if RUN_CLIENT_GROUP_NO_REMOTE_CULPRIT=1 \
        RM_HOST_GROUP=$3 timeout -k 5 60 "$host" "$1" "$2" "$run_client" \
        group "$4" >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    got=$(grep -c "^rank [0-9]* group $4 ok\$" "$tmp/out")
    cids=$(sed -n 's/^rank [0-9]* group host cid //p' "$tmp/out" | sort -u | wc -l)
    upcalls=$(grep -c "group upcalls: [1-9]" "$tmp/err")
    how=fences
    [ "$3" = 1 ] && how="the group upcall"
    if [ "$rc" -eq 0 ] && [ "$got" -eq "$count" ] \
        && { [ "$4" != host ] || [ "$cids" -eq 1 ]; } \
        && { [ "$3" != 1 ] || [ "$1" -eq 1 ] || [ "$upcalls" -eq "$1" ]; } \
        && [ -z "$(inside_cb)" ]
    then
        echo "ok $n - $1 nodes x $2, host quirks: all; group $4 through $how"
    else
        echo "not ok $n - $1 nodes x $2, group $4 through $how: exit $rc," \
             "$got of $count ok, $cids context ids, $upcalls nodes called the upcall," \
             "$(inside_cb | wc -l) calls into the host from inside its callbacks"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
}
for nodes in 1 2 3; do
    hgroup "$nodes" 2 0 host
    hgroup "$nodes" 2 1 host
done
hgroup 2 2 0 exit
hgroup 3 2 0 exit
hgroup 2 2 1 exit

# large collecting fences through the host: the contribution is not
# built as the ranks arrive (the host's fence_nb gets it packed at the
# end; only the engine takes an early one: fence.c, fence_arrived)
n=$((n + 1))
if RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
    RDPMIX_LOG_FILE="$tmp/srv.%p" timeout -k 5 60 "$host" 2 3 \
    "$builddir/bench/pmix-bench" -s 65536 -k 1 -p modex,modex_rep \
    >"$tmp/out" 2>"$tmp/err"
then rc=0; else rc=$?; fi
# pmix-bench exits non-zero when a get returned other bytes
oks=$(grep -c ",6,65536,fence_collect" "$tmp/out")
early=$(cat "$tmp"/srv.* 2>/dev/null | grep -c "contribution to the exchange started")
if [ "$rc" -eq 0 ] && [ "$oks" -eq 2 ] && [ "$early" -eq 0 ] \
    && [ -z "$(inside_cb "$tmp/err" "$tmp"/srv.*)" ]; then
    echo "ok $n - 2 nodes x 3, large fences through the host: no contribution built as the ranks arrive"
else
    echo "not ok $n - 2 nodes x 3, large fences through the host: exit $rc," \
         "$oks of 2 fence lines, $early contributions built as the ranks arrived," \
         "$(inside_cb "$tmp/err" "$tmp"/srv.* | wc -l) calls into the host from inside its callbacks"
    sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
    fail=1
fi
echo "1..$n"
exit $fail
