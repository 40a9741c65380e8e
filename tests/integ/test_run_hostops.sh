#!/bin/sh
# test_run_hostops.sh - rdpmixd's log, job_control and query upcalls on 1,
# 2 and 3 nodes: PMIx_Log(_nb) from every rank to stdout, stderr and a
# private syslog socket (local and global syslog, PMIX_LOG_ONCE,
# unsupported channels); signals, terminate and kill by PMIx_Job_control
# reaching the right ranks on every node; queries (namespaces, job size,
# nodes, job status, proc tables, namespace info) against the real layout.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

# a syslog daemon of our own: one line per datagram in $tmp/syslog
syslog_start() {
    rm -f "$tmp/syslog" "$tmp/syslog.sock"
    python3 -c '
import socket, sys, signal
signal.alarm(300)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode(errors="replace") + "\n")
        f.flush()
' "$tmp/syslog.sock" "$tmp/syslog" &
    syslog_pid=$!
    poll '[ -S "$tmp/syslog.sock" ]'
}

syslog_stop() {
    kill "$syslog_pid" 2>/dev/null
    wait "$syslog_pid" 2>/dev/null
}

have_python=1
command -v python3 >/dev/null 2>&1 || have_python=0

for m in 1 2 3; do
    np=$((m + 2))
    # ---- log ----
    if [ "$have_python" -eq 1 ]; then
        syslog_start
        RDPMIX_SYSLOG_SOCKET="$tmp/syslog.sock" RUN_CLIENT_SYSLOG=1 \
            job 120 --nodes "$m" -n "$np" "$client" nodes log
        poll '[ "$(grep -c "syslog global from" "$tmp/syslog")" -ge "$np" ]'
        syslog_stop
        check_that "$m nodes: every rank logs (rc 0)" '[ "$rc" -eq 0 ]'
        check "$m nodes: PMIx_Log to stdout reaches rdpmix-run's stdout" \
            every_rank "$np" "$tmp/out" "hostops log stdout from rank %r"
        check "$m nodes: PMIx_Log_nb to stderr reaches rdpmix-run's stderr" \
            every_rank "$np" "$tmp/err" "hostops log stderr from rank %r"
        check "$m nodes: PMIX_LOG_ONCE writes the first channel that works" \
            every_rank "$np" "$tmp/out" "hostops log once from rank %r"
        check_that "$m nodes: ... and no other" \
            '! grep -q "hostops log twice" "$tmp/out" "$tmp/err"'
        check "$m nodes: a partial success still writes stdout" \
            every_rank "$np" "$tmp/out" "hostops log partial from rank %r"
        check "$m nodes: local syslog, with the priority asked for (user.warning)" \
            every_rank "$np" "$tmp/syslog" \
            "<12>.* rdpmixd\[[0-9]*\]: \[[^]]*:%r\] hostops syslog local from rank %r"
        check "$m nodes: global syslog through rdpmix-run" \
            every_rank "$np" "$tmp/syslog" \
            "<12>.* rdpmix-run\[[0-9]*\]: \[[^]]*:%r\] hostops syslog global from rank %r"
        check "$m nodes: syslog first with PMIX_LOG_ONCE: syslog ..." \
            every_rank "$np" "$tmp/syslog" \
            "<14>.* rdpmixd\[[0-9]*\]: \[[^]]*:%r\] hostops syslog-or-stdout from rank %r"
        check_that "$m nodes: ... and not stdout" \
            '! grep -q "syslog-or-stdout" "$tmp/out"'
    else
        skip "no python3 for a private syslog socket"
    fi
    # no syslog daemon: the status says so, ONCE falls back to stdout
    RDPMIX_SYSLOG_SOCKET="$tmp/nosuch.sock" \
        job 120 --nodes "$m" -n "$np" "$client" nodes log
    check_that "$m nodes: without syslog the job still succeeds" \
        '[ "$rc" -eq 0 ] && every_rank "$np" "$tmp/out" "rank %r log ok"'
    check "$m nodes: local syslog without a syslog daemon is not available" \
        every_rank "$np" "$tmp/out" "rank %r syslog local NOT_AVAILABLE"
    check "$m nodes: PMIX_LOG_ONCE falls back from syslog to stdout" \
        every_rank "$np" "$tmp/out" "hostops syslog-or-stdout from rank %r"

    # ---- job control ----
    job 120 --nodes "$m" -n "$np" "$client" nodes jctrl
    check_that "$m nodes: signals, terminate and kill leave the job's status 0" \
        '[ "$rc" -eq 0 ] && ! grep -q "^rdpmix-run:" "$tmp/err"'
    r=0
    good=0
    while [ "$r" -lt "$np" ]; do
        grep -qx "rank $r usr1 2 usr2 $((r % 2))" "$tmp/out" && good=$((good + 1))
        r=$((r + 1))
    done
    check_that "$m nodes: every rank got the signals meant for it, on every node" \
        '[ "$good" -eq "$np" ]'
    check "$m nodes: a terminated rank ends by SIGTERM, as killed by command" \
        grep -qx "rank 0 saw rank $((np - 1)) killed by cmd (exit 15)" "$tmp/out"
    check "$m nodes: a killed rank ends by SIGKILL, as killed by command" \
        grep -qx "rank 0 saw rank $((np - 2)) killed by cmd (exit 9)" "$tmp/out"
    check_that "$m nodes: the others end normally" \
        '[ "$(grep -c "^rank [0-9]* jctrl ok$" "$tmp/out")" -eq $((np - 2)) ]'
    check "$m nodes: nothing is left" none_left "$client nodes jctrl"
    reap "$client nodes jctrl"

    # ---- query ----
    job 120 --nodes "$m" -n "$np" "$client" nodes query
    check_that "$m nodes: every rank's queries are answered" \
        '[ "$rc" -eq 0 ] && every_rank "$np" "$tmp/out" "rank %r query ok"'
    # the table's pid and host of each rank are what it says itself
    r=0
    good=0
    while [ "$r" -lt "$np" ]; do
        pid=$(sed -n "s/^rank $r pid \([0-9]*\)$/\1/p" "$tmp/out")
        host=$(sed -n "s/^rank $r node [0-9]* host \([^ ]*\) .*/\1/p" "$tmp/out")
        grep -qx "table $r pid $pid host $host state 5" "$tmp/out" &&
            good=$((good + 1))
        r=$((r + 1))
    done
    check_that "$m nodes: the proc table has every rank's pid and host" \
        '[ "$good" -eq "$np" ]'
done

# a host without a log upcall (mini_host): the server library writes
# stdout, stderr and the local syslog itself
host="$builddir/tests/integ/mini_host"
if [ "$have_python" -eq 1 ]; then
    syslog_start
    sock="$tmp/syslog.sock"
else
    sock="$tmp/nosuch.sock"
fi
RDPMIX_SYSLOG_SOCKET="$sock" MINI_HOST_TIMEOUT=45 \
    timeout -k 5 60 "$host" 3 "$client" nodes log >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$have_python" -eq 1 ] && syslog_stop
check_that "no log upcall: the ranks' logs succeed" \
    '[ "$rc" -eq 0 ] && every_rank 3 "$tmp/out" "rank %r log ok"'
check "no log upcall: the server writes stdout" \
    every_rank 3 "$tmp/out" "hostops log stdout from rank %r"
check "no log upcall: the server writes stderr" \
    every_rank 3 "$tmp/err" "hostops log stderr from rank %r"
check "no log upcall: no global syslog without a gateway" \
    every_rank 3 "$tmp/out" "rank %r syslog global NOT-SUPPORTED"
if [ "$have_python" -eq 1 ]; then
    check "no log upcall: the server writes the local syslog" \
        every_rank 3 "$tmp/syslog" \
        "<12>.* rdpmix\[[0-9]*\]: \[[^]]*:%r\] hostops syslog local from rank %r"
else
    skip "no python3 for a private syslog socket"
fi

# --tag-output prefixes logged lines as the rank's own
job 120 --nodes 2 -n 2 --tag-output "$client" nodes log
check_that "logged lines carry the rank's tag" \
    '[ "$rc" -eq 0 ] && grep -qx "\[1\] hostops log stdout from rank 1" "$tmp/out" && grep -qx "\[0\] hostops log stderr from rank 0" "$tmp/err"'

finish
