#!/bin/sh
# exit_loop.sh - repeat multi-node rdpmix-run jobs and count the ones whose
# daemons did not end cleanly (a non-zero status, or UCX's "got REP
# message" abort in ucp_worker_destroy).  Several build trees alternate
# job by job, so that every tree sees the same machine load.
#
#   bench/exit_loop.sh N SCENARIO BUILDDIR... 
#
# SCENARIO: nodes8 (test_run_nodes.sh's "placement 8 20 slot"), nodes3
# (3 nodes, 6 ranks of run_client nodes info), true3 (3 nodes, /bin/true).
# run_client is taken from the first BUILDDIR that has it (make check
# builds it; only the daemons and the launcher differ between trees).  Prints per tree: jobs, failures, aborts
# (failures whose stderr shows the abort), and the load average before and
# after, and the jobs' wall times (min/median/max).  Failing stderr files are kept under $EXIT_LOOP_KEEP if set;
# EXIT_LOOP_WRAP is put before every rdpmix-run (e.g. "taskset -c 0": all
# daemons on one core, which makes the shutdown races far more likely).
set -u
n=$1
scen=$2
shift 2
client=
for b in "$@"; do
    if [ -z "$client" ] && [ -x "$b/tests/integ/run_client" ]; then
        client="$(cd "$b" && pwd)/tests/integ/run_client"
    fi
done
[ -n "$client" ] || { echo "no BUILDDIR has tests/integ/run_client" >&2; exit 2; }
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
export RDPMIX_KILL_GRACE=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exit_loop.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp/td" RDPMIX_PEER_DIR="$tmp/launchers"
mkdir -p "$TMPDIR"
mkdir -m 0700 "$RDPMIX_PEER_DIR"
case $scen in
nodes8) args="--nodes 8 -n 20 --map-by slot $client nodes info" ;;
nodes3) args="--nodes 3 -n 6 $client nodes info" ;;
true3) args="--nodes 3 -n 6 /bin/true" ;;
*) echo "unknown scenario $scen" >&2; exit 2 ;;
esac
echo "# $(date -u +%FT%TZ) scenario $scen ($args), $n jobs per tree"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
t=0
for b in "$@"; do
    t=$((t + 1))
    eval "fail_$t=0 abort_$t=0"
done
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    t=0
    for b in "$@"; do
        t=$((t + 1))
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout -k 5 120 ${EXIT_LOOP_WRAP:-} "$b/src/run/rdpmix-run" $args >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        echo "$t0 $(date +%s.%N)" | awk '{printf "%.4f\n", $2 - $1}' >>"$tmp/times.$t"
        if [ "$rc" -ne 0 ]; then
            eval "fail_$t=\$((fail_$t + 1))"
            if grep -q "got REP message\|ucp_worker_destroy" "$tmp/err"; then
                eval "abort_$t=\$((abort_$t + 1))"
            fi
            if [ -n "${EXIT_LOOP_KEEP:-}" ]; then
                mkdir -p "$EXIT_LOOP_KEEP"
                cp "$tmp/err" "$EXIT_LOOP_KEEP/err.$t.$i"
            fi
        fi
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
t=0
for b in "$@"; do
    t=$((t + 1))
    eval "echo \"tree $t ($b): $n jobs, \$fail_$t failed, \$abort_$t aborted in ucp_worker_destroy\""
    sort -n "$tmp/times.$t" | awk '{v[NR] = $1} END {
        printf "tree %d job seconds: min %.3f median %.3f max %.3f\n", t, v[1], v[int((NR + 1) / 2)], v[NR] }' t="$t"
done
