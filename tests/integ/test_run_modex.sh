#!/bin/sh
# test_run_modex.sh - PMIx_Get of data that is not there yet, under
# rdpmix-run on 1, 2 and 3 nodes: keys committed after the server already
# holds data of the rank (per-key waits on local ranks, fetches from the
# owning server for remote ones, bounded by PMIX_TIMEOUT and by the peer's
# finalize), reserved keys nobody provides (not found at once), the
# reserved keys the library derives (PMIX_NODE_LIST, PMIX_SERVER_URI), and
# the newest values after repeated put/commit/fence rounds.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

for m in 1 2 3; do
    job 120 --nodes "$m" -n 5 "$client" nodes late
    oks=$(grep -c "^rank [0-4] of 5 late ok$" "$tmp/out")
    check_that "late commits are found on $m nodes (per-key waits, fetch, timeout, finalize)" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'

    # 'job 60' is the bound: a reserved key that waits for a commit
    # never returns
    job 60 --nodes "$m" -n 5 "$client" nodes reserved
    oks=$(grep -c "^rank [0-4] reserved ok$" "$tmp/out")
    check_that "reserved keys on $m nodes: absent ones not found at once, PMIX_NODE_LIST, PMIX_SERVER_URI" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'

    # new values at every collecting fence, some fences' results never
    # looked at (their packed sections are replaced unread)
    job 120 --nodes "$m" -n 5 "$client" nodes refence
    oks=$(grep -c "^rank [0-4] of 5 refence ok$" "$tmp/out")
    check_that "repeated put/commit/fence on $m nodes: Get returns every peer's newest values" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'
done

# Every fence result through a memfd, from the first section on (the
# server streams a large result into the memfd in 64 KiB pieces and
# patches the counts at its start afterwards: the 100 KiB rounds above
# already cross a piece; here also the small rounds go through it).
export RDPMIX_SHM_MIN=1
job 120 --nodes 2 -n 5 "$client" nodes refence
unset RDPMIX_SHM_MIN
oks=$(grep -c "^rank [0-4] of 5 refence ok$" "$tmp/out")
check_that "repeated put/commit/fence, every result in shared memory: Get returns every peer's newest values" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'

finish
