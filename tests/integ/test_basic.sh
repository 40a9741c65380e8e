#!/bin/sh
# test_basic.sh - client_basic under mini_host: real server, real sockets,
# N client processes (TAP; every scenario has a timeout).
builddir=${top_builddir:-.}
host="$builddir/tests/integ/mini_host"
client="$builddir/tests/integ/client_basic"
n=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "1..6"

scenario() {
    np=$1
    what=$2
    n=$((n + 1))
    if timeout -k 5 60 "$host" "$np" "$client" "$np" \
        >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]; then
        echo "ok $n - $np ranks, $what"
    else
        echo "not ok $n - $np ranks, $what: exit $rc, $oks of $np ok"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
}

export MINI_HOST_TIMEOUT=45
for np in 1 2 4; do
    MINI_HOST_FENCE_UPCALL=0 scenario "$np" "fences in the server"
done
for np in 1 3 8; do
    MINI_HOST_FENCE_UPCALL=1 scenario "$np" "fences through the host"
done
exit $fail
