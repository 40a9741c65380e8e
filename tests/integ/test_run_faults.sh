#!/bin/sh
# test_run_faults.sh - rdpmix-run --nodes M under faults: diagnostics of
# the daemons and of UCX stay off the job's stdout.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

# the engine between the daemons: TCP on loopback unless the caller chose
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

# ---- diagnostics never reach the job's stdout ----

# UCX prints its errors on stdout by default: a daemon whose UCX cannot
# start must not put them in the job's output
UCX_TLS=bogus job 60 --nodes 2 -n 2 /bin/true
check_that "UCX errors of the daemons stay off stdout" \
    '[ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "UCX  ERROR" "$tmp/err"'

# a working job with chatty UCX and rdpmix logs: stdout is the ranks' only
UCX_LOG_LEVEL=info RDPMIX_LOG_LEVEL=debug \
    job 60 --nodes 2 -n 2 sh -c 'echo "out $PMIX_RANK"'
check_that "stdout carries the ranks' output and nothing else" \
    '[ "$rc" -eq 0 ] && [ "$(sort "$tmp/out" | tr "\n" " ")" = "out 0 out 1 " ] && grep -q "UCX  INFO" "$tmp/err"'

finish
