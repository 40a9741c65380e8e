# test_tool_common.sh - helpers of the tool tests (test_tool*.sh), sourced
# after test_run_common.sh: a job of run_client ranks that wait for tools,
# and the daemons' rendezvous files

client="$builddir/tests/integ/run_client"
tool="$builddir/tests/integ/run_tool"

# start_job M N [SECS]: N ranks on M nodes that wait for $tmp/go (at most
# SECS, default 120), with rdpmix-run's options $job_opts; returns once
# every rank said who it is
start_job() {
    rm -f "$tmp/go"
    # emptied here, not by the job's redirection: that happens in the child,
    # and until it does the poll below would count the previous job's ranks
    # (a loaded machine: the tool then found no daemon of this job)
    : >"$tmp/out"
    job_secs=${3:-120}
    # shellcheck disable=SC2086 # $job_opts: extra rdpmix-run options
    timeout -k 5 $((job_secs + 30)) "$RUN" --nodes "$1" -n "$2" $job_opts "$client" \
        wait "$tmp/go" "$job_secs" >"$tmp/out" 2>"$tmp/err" </dev/null &
    jobpid=$!
    job_ranks=$2
    poll_for 60 '[ "$(grep -c "^tool-target " "$tmp/out")" -ge "$job_ranks" ]'
}

stop_job() {
    touch "$tmp/go"
    wait "$jobpid"
    rc=$?
}

# the daemons' pid rendezvous files: "FILE PID" per daemon
daemon_files() {
    for f in "$TMPDIR"/*/pmix.*.tool.*; do
        case ${f##*.tool.} in *[!0-9]*) continue ;; esac
        echo "$f ${f##*.tool.}"
    done
}

# the job's nspace, as its ranks print it
job_nspace() {
    sed -n 's/^tool-target .* nspace \([^ ]*\)$/\1/p' "$tmp/out" | head -1
}
