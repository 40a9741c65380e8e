#!/bin/sh
# test_run_query.sh - PMIx_Query_info of every key on 1, 2 and 3 nodes
# (run_client nodes queryall checks the answers inside each rank; here the
# proc table rank 0 saw is held against what each rank says of itself, and
# the end of the last rank against the launcher's record).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

# fake rendezvous files of servers a tool could attach to
rv="$tmp/rendezvous"
mkdir -p "$rv/sub"
printf 'fakens.3;tcp4://127.0.0.1:5000\nv4.2.2\n4242\n1000:1001\nThu Nov 26 00:00:00 2026\n' \
    >"$rv/pmix.node1.tool.4242"
printf 'other.0;tcp4://127.0.0.1:5001\n' >"$rv/sub/pmix.node1.tool.99"
printf 'no uri here\n' >"$rv/pmix.node1.tool.bad"
printf 'ignored.1;tcp4://127.0.0.1:5002\n' >"$rv/not-pmix.file"

for m in 1 2 3; do
    np=$((m + 2))
    RUN_CLIENT_RVDIR="$rv" job 120 --nodes "$m" -n "$np" "$client" nodes queryall
    check_that "$m nodes: every rank's queries are answered (rc 0)" \
        '[ "$rc" -eq 0 ] && every_rank "$np" "$tmp/out" "rank %r queryall ok"'
    # rank 0's proc table holds each rank's pid, host and program as the
    # rank reports them, and RUNNING (5)
    r=0
    good=0
    while [ "$r" -lt "$np" ]; do
        self=$(sed -n "s/^rank $r pid \([0-9]*\) host \([^ ]*\) exe \(.*\)$/\1 host \2 state 5 exe \3/p" "$tmp/out")
        [ -n "$self" ] && grep -qx "table $r pid $self" "$tmp/out" &&
            good=$((good + 1))
        r=$((r + 1))
    done
    check_that "$m nodes: the proc table has every rank's pid, host and program" \
        '[ "$good" -eq "$np" ]'
    hosts=$(sed -n 's/^table [0-9]* pid [0-9]* host \([^ ]*\) .*/\1/p' "$tmp/out" | sort -u | wc -l)
    check_that "$m nodes: the proc table spans $m host(s)" '[ "$hosts" -eq "$m" ]'
    check "$m nodes: the last rank ended normally (TERMINATED, exit 0)" \
        grep -qx "rank $((np - 1)) ended state 20 exit 0" "$tmp/out"
    check "$m nodes: nothing is left" none_left "$client nodes queryall"
    reap "$client nodes queryall"
done

finish
