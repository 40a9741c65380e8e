#!/bin/sh
# test_run_pmix.sh - PMIx clients under rdpmix-run: the job info rdpmixd
# registers (sizes, ranks, local peers), a fence with data exchange between
# every pair of ranks, the ABI version queries on 1-3 nodes, and PMIx_Abort
# ending the job.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

for np in 1 2 4 8; do
    job 120 -n "$np" "$client" "$np"
    oks=$(grep -c "^rank [0-9]* of $np ok$" "$tmp/out")
    check_that "$np ranks see the job info and exchange data with every peer" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]'
done

job 120 -n 4 --tag-output "$client" 4
check_that "a PMIx job with --tag-output" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^\[[0-3]\] rank [0-3] of 4 ok$" "$tmp/out")" -eq 4 ]'

# the Standard's ABI versions, answered by the library itself (blocking
# and non-blocking) on every rank of 1, 2 and 3 nodes
for m in 1 2 3; do
    job 120 --nodes "$m" -n 4 "$client" nodes abi
    abis=$(grep -c "^rank [0-3] abi 0.0 0.0 nb 0.0 0.0$" "$tmp/out")
    check_that "ABI version queries on $m nodes, blocking and non-blocking" \
        '[ "$rc" -eq 0 ] && [ "$abis" -eq 4 ]'
    mixed=$(grep -c "^rank [0-3] mixed query ok$" "$tmp/out")
    check_that "a query of an ABI version and the namespaces on $m nodes \
answers both" '[ "$rc" -eq 0 ] && [ "$mixed" -eq 4 ]'
done

job 60 -n 3 "$client" 3 abort 7
check "PMIx_Abort(7) ends the job with status 7" [ "$rc" -eq 7 ]
check "PMIx_Abort is reported with its rank and message" \
    grep -q "^rdpmix-run: rank 2 (pid [0-9]*) called PMIx_Abort with status 7: run_client was asked to abort; terminating the job$" "$tmp/err"
check "no client is left after PMIx_Abort" none_left "$client 3 abort 7"
check "the daemon removed its tmpdir" tmpdir_clean
reap "$client 3 abort 7"

finish
