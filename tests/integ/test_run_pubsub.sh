#!/bin/sh
# test_run_pubsub.sh - PMIx_Publish/Lookup/Unpublish answered by
# rdpmix-run's data service, on 1, 2 and 3 nodes: every rank's key seen by
# all with its publisher, a PMIX_WAIT lookup made before the publish, one
# that times out, FIRST_READ, PROC and INDEF persistence, duplicates,
# ranges, unpublish of one and of every key.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

for m in 1 2 3; do
    job 120 --nodes "$m" -n 5 "$client" pub all
    oks=$(grep -c "^rank [0-4] pub all ok$" "$tmp/out")
    check_that "publish, lookup (also waiting), unpublish on $m nodes" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'

    job 120 --nodes "$m" -n 4 "$client" pub proc
    oks=$(grep -c "^rank [0-3] pub proc ok$" "$tmp/out")
    check_that "PERSIST_PROC data ends with its publisher on $m nodes" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 4 ]'
done

finish
