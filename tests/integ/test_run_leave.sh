#!/bin/sh
# test_run_leave.sh - a participant leaves while the others fence, on 1, 2
# and 3 nodes: it finalizes without joining the fence, exits without
# finalizing, or is killed; it shares a node with waiters or is alone on
# its node; it leaves before the others fence or while they wait.  Every
# waiter's fence must end with PMIX_ERR_PROC_TERM_WO_SYNC (docs/design.md,
# "Collectives"), with and without PMIX_COLLECT_DATA, and with a
# PMIX_TIMEOUT far longer than the job's own timeout: a fence that waited
# for it would end with PMIX_ERR_TIMEOUT or not at all, never with this.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
# PMIX_ERR_PROC_TERM_WO_SYNC (pmix_common.h)
want=-200

# fence_lines NP LEAVER: the fence statuses every rank but LEAVER should
# print, sorted
fence_lines() {
    _r=0
    while [ "$_r" -lt "$1" ]; do
        [ "$_r" -ne "$2" ] && echo "rank $_r fence $want"
        _r=$((_r + 1))
    done
}

# leave NODES NP HOW LEAVER collect|barrier TIMEOUT early|late
leave() {
    job 60 --nodes "$1" -n "$2" "$client" leave "$3" "$4" "$5" "$6" "$7"
    grep '^rank [0-9]* fence ' "$tmp/out" | sort -n -k2 >"$tmp/got"
    fence_lines "$2" "$4" >"$tmp/want"
}

desc() {
    echo "rank $4 of $2 on $1 node(s) $3 ($7), the others fence ($5," \
        "timeout $6): all get PROC_TERM_WO_SYNC"
}

for c in \
    "1 4 fin 0 barrier 0 late" \
    "1 4 fin 2 collect 30 early" \
    "1 4 exit 1 barrier 0 early" \
    "2 4 fin 0 barrier 0 late" \
    "2 4 fin 0 collect 30 early" \
    "2 4 exit 3 collect 0 late" \
    "2 3 fin 2 barrier 30 early" \
    "2 3 fin 2 collect 0 late" \
    "2 3 exit 2 barrier 0 late" \
    "3 3 fin 1 barrier 0 late" \
    "3 3 fin 1 collect 30 early" \
    "3 3 exit 0 barrier 30 late" \
    "3 5 fin 4 collect 0 late"; do
    # shellcheck disable=SC2086
    set -- $c
    leave "$@"
    check_that "$(desc "$@")" \
        '[ "$rc" -eq 0 ] && cmp -s "$tmp/want" "$tmp/got"'
    [ "$rc" -eq 0 ] || reap "$client leave $3 $4 $5 $6 $7"
done

# A killed participant ends the job (rdpmix-run's rule); waiters that
# still see their fence end see it fail with the same status.
for c in "2 4 kill 0 barrier 0 late" "3 3 kill 1 collect 0 late"; do
    # shellcheck disable=SC2086
    set -- $c
    leave "$@"
    check_that "rank $4 of $2 on $1 nodes killed while the others fence: \
the job ends (137), no fence succeeds or times out" \
        '[ "$rc" -eq 137 ] && ! grep -v " fence $want\$" "$tmp/got" >/dev/null'
    check "no client is left after rank $4 was killed" \
        none_left "$client leave $3 $4 $5 $6 $7"
    reap "$client leave $3 $4 $5 $6 $7"
done

# With --enable-recovery a killed participant does not end the job: every
# waiter, on every node, sees its fence end with the same status.
for c in "2 4 kill 0 collect 0 late" "3 3 kill 1 barrier 0 late"; do
    # shellcheck disable=SC2086
    set -- $c
    job 60 --enable-recovery --nodes "$1" -n "$2" "$client" leave "$3" "$4" \
        "$5" "$6" "$7"
    grep '^rank [0-9]* fence ' "$tmp/out" | sort -n -k2 >"$tmp/got"
    fence_lines "$2" "$4" >"$tmp/want"
    check_that "rank $4 of $2 on $1 nodes killed, --enable-recovery: every \
waiter's fence ends with PROC_TERM_WO_SYNC" \
        '[ "$rc" -eq 137 ] && cmp -s "$tmp/want" "$tmp/got"'
    reap "$client leave $3 $4 $5 $6 $7"
done

finish
