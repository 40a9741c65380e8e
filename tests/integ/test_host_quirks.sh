#!/bin/sh
# test_host_quirks.sh - rdpmix's server under a host with the habits real
# hosts have (tests/integ/rm_host.c; Slurm 22.05 has every one of them):
# each habit alone and all together, on 1, 2 and 3 nodes.  A hang is a
# failure: rm_host kills everything after RM_HOST_TIMEOUT seconds.  Every
# scenario also proves the host saw no call into it from inside one of its
# own callbacks (rm_host counts them).
builddir=${top_builddir:-.}
host="$builddir/tests/integ/rm_host"
client="$builddir/tests/integ/rm_client"
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
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]; then
        echo "ok $n - $nodes nodes x $ppn, host quirks: $quirks"
    else
        echo "not ok $n - $nodes nodes x $ppn, host quirks: $quirks:" \
             "exit $rc, $oks of $np ok"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
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
echo "1..$n"
exit $fail
