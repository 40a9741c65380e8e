#!/bin/sh
# test_run_engine.sh - rdpmix-run --nodes M with the servers' collective
# engine between the daemons: a barrier, a fence that collects data and a
# get of every peer's value across nodes (2 to 8 nodes, 1 to 8 ranks per
# node), each allgather algorithm forced in turn, over UCX's TCP and over
# its shared memory transports; a daemon killed in the middle of a fence
# ends the job with a clear message and leaves nothing behind.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
# UCX over loopback TCP by default; "sm" selects shared memory
tls_tcp=tcp
tls_sm=posix,sysv,cma

# fence TLS M NP MAP [ALG]: every rank passes the fences and gets every
# peer's value
fence() {
    tls=$1 m=$2 np=$3 map=$4 alg=${5:-auto}
    eval "UCX_TLS=\$tls_$tls"
    export UCX_TLS
    # the engine says at debug level which algorithm each collective runs
    RDPMIX_COLL_ALG=$alg RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=coll \
        job 120 --nodes "$m" -n "$np" --map-by "$map" "$client" nodes fence
    oks=$(grep -c "^rank [0-9]* of $np fence ok$" "$tmp/out")
    check_that "fence, collect and get across $m nodes, $np ranks by $map ($alg over $tls)" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]'
    if [ "$alg" != auto ]; then
        used=$(grep -o "allgather [^ ]*: $m participants, rank [0-9]*, [a-z_]*," "$tmp/err" |
            sed 's/.*, //; s/,$//' | sort -u | tr '\n' ' ')
        check_that "every server ran $alg ($m nodes over $tls)" \
            '[ "$used" = "$alg " ]'
    fi
}

# 2, 3, 4 and 8 nodes; 1 to 8 ranks per node
fence tcp 2 2 block
fence tcp 2 16 node
fence tcp 3 7 block
fence tcp 4 8 node
fence tcp 8 8 block
fence tcp 8 64 block
fence sm 4 12 slot
check "the daemons removed their tmpdirs" tmpdir_clean

# warm-up (engine.c): as the engine connects, each server sends the next
# one a message of RDPMIX_ENGINE_WARMUP bytes, which it drops, so that the
# first fence's exchange does not pay for the transport's first large
# message; the barriers afterwards reach every server of 3, so each has
# received its warm-up by the time the job ends
warmup() {
    if [ -n "$1" ]; then export RDPMIX_ENGINE_WARMUP="$1"; fi
    UCX_TLS=$tls_tcp RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
        job 120 --nodes 3 -n 3 "$client" nodes fence
    unset RDPMIX_ENGINE_WARMUP
    sent=$(grep -c "engine warm-up: $2 bytes to server [0-2]: PMIX_SUCCESS" "$tmp/err")
    got=$(grep -c "engine warm-up: $2 bytes from server [0-2] dropped" "$tmp/err")
}
warmup "" 65536
check_that "each of 3 servers sent and dropped a 64 KiB warm-up message ($sent sent, $got dropped)" \
    '[ "$rc" -eq 0 ] && [ "$sent" -eq 3 ] && [ "$got" -eq 3 ]'
warmup 100k 102400
check_that "RDPMIX_ENGINE_WARMUP sets its size ($sent sent, $got dropped)" \
    '[ "$rc" -eq 0 ] && [ "$sent" -eq 3 ] && [ "$got" -eq 3 ]'
warmup 0 "[0-9]*"
check_that "RDPMIX_ENGINE_WARMUP=0: no warm-up ($sent sent, $got dropped)" \
    '[ "$rc" -eq 0 ] && [ "$sent" -eq 0 ] && [ "$got" -eq 0 ]'

# every algorithm, over TCP and over shared memory, with a power-of-two
# and an odd number of servers
for tls in tcp sm; do
    for alg in recursive_doubling bruck ring; do
        fence "$tls" 4 8 node "$alg"
        fence "$tls" 3 9 block "$alg"
    done
done

# direct modex across nodes: pmix-bench fences WITHOUT collecting data,
# then gets (and checks byte for byte) every peer's value, so each remote
# value is fetched from its rank's server over the engine transport;
# 100 KiB values take UCX's rendezvous path
bench="$builddir/bench/pmix-bench"
for tls in tcp sm; do
    for size in 8 102400; do
        eval "UCX_TLS=\$tls_$tls"
        export UCX_TLS
        job 120 --nodes 4 -n 8 --map-by node "$bench" -m direct -s "$size" -k 1
        got=$(grep -c ",8,$size,get," "$tmp/out")
        check_that "direct modex of $size-byte values across 4 nodes over $tls" \
            '[ "$rc" -eq 0 ] && [ "$got" -eq 1 ]'
    done
done

# a daemon SIGKILLed while its ranks and every other node's ranks are in
# fences: the job ends with status 1 and says which node died
marker="$client nodes loop"
for tls in tcp sm; do
    eval "UCX_TLS=\$tls_$tls"
    export UCX_TLS
    # empty the output first: the job's own redirection may run after the
    # first poll, which would then see the previous round's lines
    : >"$tmp/out"
    "$RUN" --nodes 4 -n 8 "$client" nodes loop >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    poll_for 60 '[ "$(grep -c "^rank [0-9]* looping$" "$tmp/out")" -eq 8 ]'
    dpid=$(pgrep -P $pid -f -- "--node-id 2 ")
    if [ -n "$dpid" ]; then
        kill -KILL $dpid
    else
        kill -TERM $pid # the check below fails; never wait for ever
    fi
    wait $pid
    rc=$?
    check_that "a daemon killed in a fence fails the job ($tls)" \
        '[ -n "$dpid" ] && [ "$rc" -eq 1 ]'
    check "the dead node is named ($tls)" \
        grep -q "^rdpmix-run: node 2 (daemon pid $dpid) died; terminating the job$" "$tmp/err"
    check "no rank of any node is left ($tls)" none_left "$marker"
    check "no daemon is left ($tls)" \
        poll '[ -z "$(pgrep -P $pid)" ] && ! kill -0 $pid 2>/dev/null'
    check "every tmpdir is removed ($tls)" tmpdir_clean
    reap "$marker"
done

finish
