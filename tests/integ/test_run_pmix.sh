#!/bin/sh
# test_run_pmix.sh - PMIx clients under rdpmix-run: the job info rdpmixd
# registers (sizes, ranks, local peers), a fence with data exchange between
# every pair of ranks, and PMIx_Abort ending the job.
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

job 60 -n 3 "$client" 3 abort 7
check "PMIx_Abort(7) ends the job with status 7" [ "$rc" -eq 7 ]
check "PMIx_Abort is reported with its rank and message" \
    grep -q "^rdpmix-run: rank 2 (pid [0-9]*) called PMIx_Abort with status 7: run_client was asked to abort; terminating the job$" "$tmp/err"
check "no client is left after PMIx_Abort" none_left "$client 3 abort 7"
check "the daemon removed its tmpdir" tmpdir_clean
reap "$client 3 abort 7"

finish
