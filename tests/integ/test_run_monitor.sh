#!/bin/sh
# test_run_monitor.sh - heartbeat monitors (PMIx_Process_monitor) under
# rdpmix-run on 1, 2 and 3 nodes: bad requests are refused, a beating
# process raises no alert, a stalled one gets PMIX_MONITOR_HEARTBEAT_ALERT
# about itself, cancels succeed and a cancelled monitor raises nothing.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
np=4

for m in 1 2 3; do
    job 120 --nodes "$m" -n "$np" "$client" monitor
    check_that "every rank's monitors behave on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* monitor bad ok beating 0 stalled 1 cancelled 0 cancel ok$" "$tmp/out")" -eq "$np" ]'
done

finish
