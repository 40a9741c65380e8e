#!/bin/sh
# test_run_connect.sh - PMIx_Connect / PMIx_Disconnect (RFC0003, the
# Standard's signatures) under rdpmix-run on 1, 2 and 3 nodes: the whole
# job and subsets, blocking and non-blocking, keys of the other
# participants read after connect, concurrent operations over the same
# ranks told apart by RDPMIX_CONNECT_ID, PMIX_TIMEOUT, notify-each and
# notify-request events, and a participant that leaves during a connect
# (run_client_connect.c says what each mode checks).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
# PMIX_ERR_PROC_TERM_WO_SYNC (pmix_common.h)
term=-200

# every rank printed "rank R connect MODE ok"
all_ok() {
    [ "$rc" -eq 0 ] \
        && [ "$(grep -c "^rank [0-9]* connect $1 ok\$" "$tmp/out")" -eq "$2" ]
}

for m in 1 2 3; do
    for np in 3 4; do
        for mode in all subsets ids notify request; do
            job 120 --nodes "$m" -n "$np" "$client" connect "$mode"
            check_that "connect $mode: $np ranks on $m node(s)" \
                'all_ok "$mode" "$np"'
            [ "$rc" -eq 0 ] || reap "$client connect $mode"
        done
    done
done

# rank L exits without finalizing while the others connect: every other
# rank's connect ends with PROC_TERM_WO_SYNC (not a timeout, not a hang)
for c in "1 4 2" "2 4 0" "2 3 2" "3 3 1" "3 5 4"; do
    # shellcheck disable=SC2086
    set -- $c
    job 120 --nodes "$1" -n "$2" "$client" connect die "$3"
    check_that "connect: rank $3 of $2 on $1 node(s) leaves, the others' \
connect fails with PROC_TERM_WO_SYNC" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect die $term\$" "$tmp/out")" -eq $(($2 - 1)) ]'
    [ "$rc" -eq 0 ] || reap "$client connect die $3"
done

finish
