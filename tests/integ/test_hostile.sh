#!/bin/sh
# test_hostile.sh - rank 0 of a job sends malformed and forged messages to
# its server while the good ranks still complete a fence with data (TAP;
# every scenario has a timeout).
builddir=${top_builddir:-.}
host="$builddir/tests/integ/mini_host"
client="$builddir/tests/integ/hostile_client"
n=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "1..6"

scenario() {
    np=$1
    what=$2
    n=$((n + 1))
    if timeout -k 5 90 "$host" "$np" "$client" "$np" \
        >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    refused=$(grep -c "as expected" "$tmp/out")
    note="$refused attacks refused"
    if [ -n "$HOSTILE_LEAVER" ]; then refused=1; note="no hang"; fi
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ] && [ "$refused" -gt 0 ]; then
        echo "ok $n - $np ranks, $what ($note)"
    else
        echo "not ok $n - $np ranks, $what: exit $rc, $oks of $np ok"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | tail -40
        fail=1
    fi
}

export MINI_HOST_TIMEOUT=80
MINI_HOST_FENCE_UPCALL=0 scenario 1 "fences in the server"
touch "$tmp/keep"
HOSTILE_CLEANUP_DIR="$tmp/cleanme" HOSTILE_CLEANUP_KEEP="$tmp/keep" \
    MINI_HOST_FENCE_UPCALL=0 scenario 4 "fences in the server, cleanup"
unset HOSTILE_CLEANUP_DIR HOSTILE_CLEANUP_KEEP
if [ -e "$tmp/cleanme" ] || [ ! -f "$tmp/keep" ]; then
    echo "# registered cleanup: directory left behind or link target removed"
    ls -lR "$tmp" | sed 's/^/# /'
    fail=1
fi
MINI_HOST_FENCE_UPCALL=1 scenario 2 "fences through the host"
MINI_HOST_FENCE_UPCALL=1 scenario 6 "fences through the host"
HOSTILE_LEAVER=1 MINI_HOST_FENCE_UPCALL=0 scenario 3 "a rank leaves, the fence fails"
HOSTILE_LEAVER=1 MINI_HOST_FENCE_UPCALL=1 scenario 4 "a rank leaves, the host fence fails"
unset HOSTILE_LEAVER
exit $fail
