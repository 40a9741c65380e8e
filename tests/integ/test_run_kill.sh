#!/bin/sh
# test_run_kill.sh - a failing, signalled, timed-out or interrupted job
# ends completely: the others are killed, nothing is left running, the
# daemon removes its directory, the exit status and message are right.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

# a command line no other process has
marker="sleep 9$$.25"

# rank 1 crashes; the others run a grandchild (not exec'ed) that must die too
job -n 3 sh -c "if [ \$PMIX_RANK = 1 ]; then kill -SEGV \$\$; fi; $marker; true"
check "a crash gives 128+11" [ "$rc" -eq 139 ]
check "a crash is reported" \
    grep -q "^rdpmix-run: rank 1 (pid [0-9]*) killed by signal 11 (Segmentation fault); terminating the job$" "$tmp/err"
check "no process of the crashed job is left" none_left "$marker"
check "the daemon removed its tmpdir after a crash" tmpdir_clean
reap "$marker"

# a rank exiting non-zero ends the others
job -n 3 sh -c "if [ \$PMIX_RANK = 2 ]; then exit 3; fi; exec $marker"
check "an early non-zero exit ends the job with its status" [ "$rc" -eq 3 ]
check "no process is left after a non-zero exit" none_left "$marker"
reap "$marker"

# the job is terminated while ranks are still being forked: a signal that
# reaches a child before it dropped the daemon's handlers must not be
# taken for a signal to the daemon
bad=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    job -n 16 sh -c "if [ \$PMIX_RANK = 0 ]; then exit 3; fi; exec $marker"
    if [ "$rc" -ne 3 ] || grep -q rdpmixd "$tmp/err"; then bad=$((bad + 1)); fi
done
check "terminating a job that is still starting (10 x 16 ranks)" [ "$bad" -eq 0 ]
check "no process is left after terminating a starting job" none_left "$marker"
reap "$marker"

# ranks that ignore SIGTERM get SIGKILL after the grace period
job -n 2 sh -c "trap '' TERM; if [ \$PMIX_RANK = 0 ]; then exit 5; fi; $marker; true"
check "ranks ignoring SIGTERM are killed after the grace period" \
    [ "$rc" -eq 5 ]
check "no process ignoring SIGTERM is left" none_left "$marker"
reap "$marker"

job -n 2 --timeout 2 sh -c "exec $marker"
check "--timeout gives exit status 124" [ "$rc" -eq 124 ]
check "--timeout is reported" \
    grep -q "^rdpmix-run: the job did not finish within 2 seconds; terminating it$" "$tmp/err"
check "no process is left after --timeout" none_left "$marker"
reap "$marker"

# SIGTERM to rdpmix-run reaches the ranks
signal_job TERM 2 -n 2 sh -c "trap 'echo got TERM; exit 3' TERM; $marker & wait"
check "SIGTERM is forwarded to every rank" [ "$(grep -c '^got TERM$' "$tmp/out")" -eq 2 ]
check "the job's status after a forwarded SIGTERM is the ranks' (3)" [ "$rc" -eq 3 ]
check "forwarding is reported" grep -q "forwarding it to the job" "$tmp/err"
check "no process is left after SIGTERM" none_left "$marker"
reap "$marker"

# the job ends (rank 0 exits 3 on the forwarded SIGTERM) while rank 1 is
# still in its SIGTERM handler: rank 1 is not sent SIGTERM again (its
# handler would run twice)
signal_job TERM 2 -n 2 sh -c "trap 'echo got TERM; [ \$PMIX_RANK = 1 ] && sleep 1; exit 3' TERM; $marker & wait"
check "a rank handling a forwarded SIGTERM does not get another one" \
    [ "$(grep -c '^got TERM$' "$tmp/out")" -eq 2 ]
check "no process is left after a slow SIGTERM handler" none_left "$marker"
reap "$marker"

# SIGINT to rdpmix-run: ranks die of it, status 128+2
signal_job INT 2 -n 2 sh -c "exec $marker"
check "SIGINT ends the job with 130" [ "$rc" -eq 130 ]
check "no process is left after SIGINT" none_left "$marker"
reap "$marker"

# timeout(1) delivers its SIGTERM twice (child and group): still one
# forwarded signal, so the ranks' trap runs and decides the status.
# timeout(1) is sent SIGTERM once both ranks run (it passes it on as when
# its time is up); a fixed time limit could expire before the ranks had
# set their trap on a loaded machine.
timeout -k 5 60 "$RUN" -n 2 sh -c "trap 'echo got TERM; exit 4' TERM; $marker & wait" \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "$marker" 2
kill -TERM $pid
wait $pid
rc=$?
check_that "a doubled SIGTERM from timeout(1) is forwarded once" \
    '[ "$(grep -c "^got TERM$" "$tmp/out")" -eq 2 ] && ! grep -q "killing the job" "$tmp/err"'
check "no process is left after timeout(1)" none_left "$marker"
reap "$marker"

# rdpmix-run killed outright: the daemon notices and cleans up
"$RUN" -n 3 sh -c "$marker; true" >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "$marker" 3
kill -KILL $pid
wait $pid 2>/dev/null
check "no rank survives rdpmix-run being killed" none_left "$marker"
check "the daemon cleans up after rdpmix-run is killed" poll tmpdir_clean
reap "$marker"

# the daemon killed outright: the ranks and what they started die,
# rdpmix-run reports it and removes the daemon's directory
"$RUN" -n 2 sh -c "$marker; true" >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "$marker" 2
dpid=$(pgrep -P $pid)
kill -KILL $dpid
wait $pid
rc=$?
check "a killed daemon fails the job" [ "$rc" -eq 1 ]
check "a killed daemon is reported" \
    grep -q "^rdpmix-run: node 0 (daemon pid $dpid) died; terminating the job$" "$tmp/err"
check "no rank survives its daemon" none_left "$marker"
check "rdpmix-run removes a killed daemon's directory" tmpdir_clean
reap "$marker"

finish
