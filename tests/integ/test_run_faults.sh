#!/bin/sh
# test_run_faults.sh - rdpmix-run --nodes M under faults: diagnostics of
# the daemons and of UCX stay off the job's stdout; a job ended before it
# started (a daemon dying at start-up, SIGINT, the start-up timeout) or
# with a stopped daemon ends with one message, its healthy daemons exit
# cleanly (none is killed for not exiting) and nothing is left behind; a
# slow end of the daemons is not cut short; a launch the machine cannot
# host is refused up front; SIGTERM to a daemon fails the job naming it.
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

# ---- ending a job before it started, or with a stopped daemon ----

# The daemons of these jobs run as $tmp/bin/rdpmixd (a link, so that what
# is left of them can be found) behind a wrapper: node $WRAP_STOP stops
# itself before it starts (it connects once the test continues it).
mkdir -p "$tmp/bin"
ln -s "$builddir/src/run/rdpmixd" "$tmp/bin/rdpmixd"
cat >"$tmp/bin/wrapper" <<WRAPPER
#!/bin/sh
case " \$* " in
*" --node-id \${WRAP_STOP:-none} "*) kill -STOP \$\$ ;;
esac
exec "$tmp/bin/rdpmixd" "\$@"
WRAPPER
chmod +x "$tmp/bin/wrapper"
daemons="$tmp/bin/"

# nothing of the job is left: daemons, ranks, directories
all_gone() {
    poll '! pgrep -f "^(/bin/sh )?$daemons" >/dev/null' && none_left "$marker" \
        && tmpdir_clean
}

# exactly one message from rdpmix-run, and it is this one
one_message() {
    [ "$(grep -c "^rdpmix-run: " "$tmp/err")" -eq 1 ] \
        && grep -q "^rdpmix-run: $1\$" "$tmp/err"
}

# no daemon had to be killed for not exiting
none_killed() {
    ! grep -q "did not exit; killing it" "$tmp/err"
}

# bg ARGS...: rdpmix-run ARGS in the background (under timeout(1)); sets
# pid (timeout's) and rpid (rdpmix-run's)
bg() {
    : >"$tmp/out"
    : >"$tmp/err"
    timeout -k 5 60 "$RUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    poll '[ -n "$(pgrep -P $pid)" ]'
    rpid=$(pgrep -P $pid)
}

# the daemon (or its wrapper) of node $1 of this test's jobs
daemon_of() {
    pgrep -f "^(/bin/sh )?$daemons(rdpmixd|wrapper) .*--node-id $1 "
}

# connected A B: nodes A and B said hello (rdpmix-run says so at debug
# level)
connected() {
    grep -q "run debug: node $1 (daemon pid [0-9]*) connected" "$tmp/err" \
        && grep -q "run debug: node $2 (daemon pid [0-9]*) connected" "$tmp/err"
}

# a command line no other process has
marker="sleep 7$$.25"
export RDPMIX_DAEMON="$tmp/bin/wrapper"
export RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=run

# a daemon dies during start-up, after the others connected: they go at
# once, cleanly
WRAP_STOP=1 bg --nodes 3 -n 3 sh -c "exec $marker"
poll 'connected 0 2'
dpid=$(daemon_of 1)
kill -KILL "$dpid"
wait $pid
rc=$?
check_that "a daemon dying at start-up fails the job with one message" \
    '[ "$rc" -eq 1 ] && one_message "node 1 (daemon pid $dpid) died; terminating the job"'
check "no daemon is killed after a daemon died at start-up" none_killed
check "nothing is left after a daemon died at start-up" all_gone

# SIGINT while node 2 has not connected yet (nodes 0 and 1 have)
WRAP_STOP=2 bg --nodes 3 -n 3 sh -c "exec $marker"
poll 'connected 0 1'
kill -INT "$rpid"
wait $pid
rc=$?
check_that "SIGINT during start-up ends the job with 130 and one message" \
    '[ "$rc" -eq 130 ] && one_message "received signal 2 (Interrupt); killing the job"'
check "no daemon is killed after SIGINT during start-up" none_killed
check "nothing is left after SIGINT during start-up" all_gone

# the start-up timeout while node 2 has not connected
WRAP_STOP=2 RDPMIX_STARTUP_TIMEOUT=3 job 60 --nodes 3 -n 3 sh -c "exec $marker"
check_that "the start-up timeout ends the job with one message" \
    '[ "$rc" -eq 1 ] && one_message "the job did not start within 3 seconds ([0-2] of 3 daemons connected, 0 received the job, 0 ready); giving up (RDPMIX_STARTUP_TIMEOUT sets the limit)"'
check "no daemon is killed after the start-up timeout" none_killed
check "nothing is left after the start-up timeout" all_gone

# the start-up timeout covers the launch, the engine's connection
# included: node 1 is stopped once it has connected, then node 2 may
# connect, so that every daemon is connected but node 1 never launches;
# ending the job continues the stopped daemon, which then exits cleanly
WRAP_STOP=2 RDPMIX_STARTUP_TIMEOUT=10 bg --nodes 3 -n 3 sh -c "exec $marker"
poll 'connected 0 1'
kill -STOP "$(daemon_of 1)"
kill -CONT "$(daemon_of 2)"
wait $pid
rc=$?
check_that "the start-up timeout covers the launch on every node" \
    '[ "$rc" -eq 1 ] && one_message "the job did not start within 10 seconds (3 of 3 daemons connected, 2 received the job, 0 ready); giving up (RDPMIX_STARTUP_TIMEOUT sets the limit)"'
check "no daemon is killed after a launch timed out" none_killed
check "nothing is left after a launch timed out" all_gone

# no daemon starts the job before every daemon has it (one busy with the
# job would take the processor from rdpmix-run while it sends the others
# theirs): node 1 is stopped once it connected, nodes 0 and 2 get the
# launch but start no rank until node 1 is continued and has it too
has_launch() {
    grep -q "run debug: node $1 (daemon pid [0-9]*) has the launch" "$tmp/err"
}
WRAP_STOP=2 bg --nodes 3 -n 3 sh -c "exec $marker"
poll 'connected 0 1'
kill -STOP "$(daemon_of 1)"
kill -CONT "$(daemon_of 2)"
poll 'has_launch 0 && has_launch 2'
early=$(pgrep -fx "$marker" | wc -l)
kill -CONT "$(daemon_of 1)"
wait_for "$marker" 3
kill -INT "$rpid"
wait $pid
rc=$?
check_that "no rank starts before every daemon has the launch" \
    'has_launch 0 && has_launch 2 && [ "$early" -eq 0 ]'
check_that "then the job starts on every node" \
    '[ "$rc" -eq 130 ] && has_launch 1 && none_killed'
check "nothing is left of a job that waited for a daemon" all_gone
reap "$marker"
unset RDPMIX_LOG_LEVEL RDPMIX_LOG_SUBSYS

# a running job with a stopped daemon is ended by SIGINT: the stopped
# daemon is continued and ends its rank; no daemon has to be killed
bg --nodes 3 -n 3 sh -c "exec $marker"
wait_for "$marker" 3
kill -STOP "$(daemon_of 1)"
kill -INT "$rpid"
wait $pid
rc=$?
check_that "SIGINT ends a job with a stopped daemon (130, one message)" \
    '[ "$rc" -eq 130 ] && one_message "received signal 2 (Interrupt); forwarding it to the job"'
check "no daemon is killed when a stopped daemon's job ends" none_killed
check "nothing is left of a job with a stopped daemon" all_gone
reap "$marker"

# ---- a slow end is not cut short ----

# the daemons of 5 nodes exit 0, 3, 6, 9 and 12 seconds after they cleaned
# up, as many daemons sharing few cores would:
# one exits every 3 s, so none is killed, although the last takes longer
# than the 10 s rdpmix-run allows a daemon after the one before it
# (tests/integ/slow_shim.c; an ASan build must let it load first)
shim="$builddir/tests/integ/.libs/libslowshim.so"
asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
LD_PRELOAD=$shim ASAN_OPTIONS=$asan SLOW_EXIT_STEP=3 \
    job 60 --nodes 5 -n 5 true
check_that "a slow but steady end of the daemons is not cut short" \
    '[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && tmpdir_clean'

# 24 daemons on one core all take 12 s to exit, together (as a thousand
# on two cores do): rdpmix-run allows 10 s plus half a second per daemon
# per core before it decides they are hung
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')
LD_PRELOAD=$shim ASAN_OPTIONS=$asan SLOW_EXIT_ALL=12 \
    timeout -k 5 60 taskset -c "$cpu" "$RUN" --nodes 24 -n 24 true \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
check_that "many daemons cleaning up together on few cores are not killed" \
    '[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && tmpdir_clean'

# a daemon slow to end says which step holds it before rdpmix-run would
# kill it (RDPMIX_SHUTDOWN_WARN), and only that daemon does
LD_PRELOAD=$shim ASAN_OPTIONS=$asan SLOW_RMDIR_NODE=1 SLOW_RMDIR_SECS=3 \
    RDPMIX_SHUTDOWN_WARN=1 job 60 --nodes 2 -n 2 true
check_that "a daemon slow to shut down names the step it is in" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "still shutting down" "$tmp/err")" -eq 1 ] && grep -Eq "^rdpmixd \(node [^)]*\): still shutting down after 1 s, in (PMIx_server_finalize|removing the session directory)$" "$tmp/err" && none_killed'
check "nothing is left of a slow shutdown" all_gone

# the start-up timeout counts from the first daemon's start: here starting
# the three daemons takes 6 s (a thousand sharing two cores take that long)
LD_PRELOAD=$shim ASAN_OPTIONS=$asan SLOW_FORK=2 \
    RDPMIX_STARTUP_TIMEOUT=4 job 60 --nodes 3 -n 3 true
check_that "the start-up timeout includes starting the daemons" \
    '[ "$rc" -eq 1 ] && one_message "the job did not start within 4 seconds ([0-3] of 3 daemons connected, 0 received the job, 0 ready); giving up (RDPMIX_STARTUP_TIMEOUT sets the limit)" && none_killed'
check "nothing is left when starting the daemons took too long" all_gone

# a daemon still busy launching when the start-up timeout ends the job
# (its launch hangs here) is killed at once; the others, which started
# the job, exit cleanly
LD_PRELOAD=$shim ASAN_OPTIONS=$asan SLOW_LAUNCH_NODE=1 \
    RDPMIX_STARTUP_TIMEOUT=3 job 60 --nodes 3 -n 3 sh -c "exec $marker"
check_that "a daemon stuck in its launch does not hold up the end" \
    '[ "$rc" -eq 1 ] && one_message "the job did not start within 3 seconds (3 of 3 daemons connected, 3 received the job, 2 ready); giving up (RDPMIX_STARTUP_TIMEOUT sets the limit)" && none_killed'
check "nothing is left of a launch that hung" all_gone
reap "$marker"

# ---- a launch this machine cannot host is refused up front ----

# under ulimit -n 128 a daemon of 64 nodes may need more (src/run/limits.h)
(ulimit -n 128 && exec timeout -k 5 60 "$RUN" --nodes 64 -n 64 true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
check_that "a launch the machine cannot host is refused up front" \
    '[ "$rc" -eq 1 ] && one_message "this machine cannot host 64 nodes: a daemon may need [0-9]* open files, but the limit is 128 (ulimit -n); at most [0-9]* fit"'
check_that "no daemon started for a refused launch" \
    'tmpdir_clean && ! grep -q rdpmixd "$tmp/err"'
(ulimit -n 128 && exec timeout -k 5 60 "$RUN" --nodes 4 -n 4 true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
check "a launch that fits runs under the same limit" [ "$rc" -eq 0 ]

# without UCX_TLS the daemons leave out UCX's shared memory transports
# (the engine cannot use them; they cost memory and System V segments);
# the ranks do not inherit that setting
env -u UCX_TLS timeout -k 5 60 "$RUN" --nodes 2 -n 2 \
    sh -c "echo \"tls \${UCX_TLS-unset}\"; exec $marker" \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "$marker" 2
rpid=$(pgrep -P $pid)
tls=$(for d in $(pgrep -P "$rpid"); do
    tr '\0' '\n' <"/proc/$d/environ" | grep "^UCX_TLS="
done | sort -u)
kill -TERM "$rpid"
wait $pid
check_that "the daemons leave out shared memory unless UCX_TLS says" \
    '[ "$tls" = "UCX_TLS=^sm" ] && [ "$(grep -c "^tls unset$" "$tmp/out")" -eq 2 ]'
check "nothing is left after a job without UCX_TLS" all_gone
reap "$marker"

# ---- SIGTERM to one daemon ----

# the daemon ends its ranks and tells rdpmix-run, which names the node
# (not a rank killed by the SIGTERM the daemon sent it) and exits 1
bg --nodes 3 -n 3 sh -c "exec $marker"
wait_for "$marker" 3
dpid=$(daemon_of 1)
kill -TERM "$dpid"
wait $pid
rc=$?
check_that "SIGTERM to a daemon ends the job with 1, naming the node" \
    '[ "$rc" -eq 1 ] && one_message "node 1 (daemon pid $dpid) received signal 15 (Terminated); terminating the job" && ! grep -q "^rdpmixd" "$tmp/err"'
check "no daemon is killed after SIGTERM to a daemon" none_killed
check "nothing is left after SIGTERM to a daemon" all_gone

# a rank's stderr ends mid-line when rdpmix-run has something to say: its
# message still starts a line of its own (CI once saw it glued to a
# rank's "rank 2: FAILED ")
# (no debug lines, which would end the half line first)
RDPMIX_LOG_LEVEL=warn
bg --nodes 2 -n 2 sh -c "[ \$PMIX_RANK = 0 ] && printf 'half a line' >&2; exec $marker"
RDPMIX_LOG_LEVEL=debug
wait_for "$marker" 2
poll 'grep -q "half a line" "$tmp/err"'
dpid=$(daemon_of 1)
kill -KILL "$dpid"
wait $pid
rc=$?
check_that "rdpmix-run's message starts its own line after a rank's half line" \
    '[ "$rc" -eq 1 ] && grep -qx "half a line" "$tmp/err" && one_message "node 1 (daemon pid $dpid) died; terminating the job"'
check "nothing is left after the half line" all_gone
reap "$marker"

# ---- at a scale the suite can afford ----

# 64 daemons (with UCX's shared memory transports open, so that they make
# System V segments and /dev/shm files if they make any): every rank
# fences and gets every peer's data across nodes; nothing is left behind
client="$builddir/tests/integ/run_client"
# (files of UCX or rdpmix only: other programs may use /dev/shm meanwhile)
shm_files() {
    ls /dev/shm | grep -i -e ucx -e rdpmix
}
shm_files >"$tmp/shm.before"
UCX_TLS=tcp,sysv,posix bg --nodes 64 -n 128 "$client" nodes fence
poll '[ "$(pgrep -P "$rpid" | wc -l)" -ge 64 ]'
dpids=" $(pgrep -P "$rpid" | tr '\n' ' ')"
wait $pid
rc=$?
check_that "a 64-node job fences across every node" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* of 128 fence ok$" "$tmp/out")" -eq 128 ]'
check "nothing is left of the 64-node job" all_gone
segs=$(ipcs -m -p | awk '$3 ~ /^[0-9]+$/ { print $3 }' | while read -r c; do
    case "$dpids" in *" $c "*) echo "$c" ;; esac
done)
check_that "no shared memory of the 64-node job is left" \
    '[ -z "$segs" ] && shm_files | cmp -s - "$tmp/shm.before"'
unset RDPMIX_DAEMON

finish
