#!/bin/sh
# test_run_connect.sh - PMIx_Connect / PMIx_Disconnect (RFC0003, the
# Standard's signatures) under rdpmix-run on 1, 2 and 3 nodes: the whole
# job and subsets, blocking and non-blocking, keys of the other
# participants read after connect, concurrent operations over the same
# ranks told apart by RDPMIX_CONNECT_ID, PMIX_TIMEOUT, notify-each and
# notify-request events, and a participant that leaves during a connect
# (run_client_connect.c says what each mode checks).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
# PMIX_ERR_PROC_TERM_WO_SYNC (pmix_common.h)
term=-200

# every rank printed "rank R connect MODE ok"
all_ok() {
    [ "$rc" -eq 0 ] \
        && [ "$(grep -c "^rank [0-9]* connect $1 ok\$" "$tmp/out")" -eq "$2" ]
}

# NODES NP MODE; with 3 ranks on 3 nodes rank 0 is alone on its node, so
# the connect nobody else joins (ids) times out across servers
for c in "1 4 all" "1 4 subsets" "1 4 ids" "1 4 notify" "1 4 request" \
    "2 4 all" "2 4 subsets" "2 4 ids" "2 4 notify" "2 4 request" \
    "2 3 all" "2 3 ids" \
    "3 4 all" "3 4 subsets" "3 4 ids" "3 4 notify" "3 4 request" \
    "3 3 all" "3 3 ids" "3 3 notify"; do
    # shellcheck disable=SC2086
    set -- $c
    np=$2
    mode=$3
    job 120 --nodes "$1" -n "$np" "$client" connect "$mode"
    check_that "connect $mode: $np ranks on $1 node(s)" 'all_ok "$mode" "$np"'
    [ "$rc" -eq 0 ] || reap "$client connect $mode"
done

# rank L exits without finalizing while the others connect: every other
# rank's connect ends with PROC_TERM_WO_SYNC (not a timeout, not a hang)
for c in "1 4 2" "2 4 0" "2 3 2" "3 3 1" "3 5 4"; do
    # shellcheck disable=SC2086
    set -- $c
    job 120 --nodes "$1" -n "$2" "$client" connect die "$3"
    others=$(($2 - 1))
    check_that "connect: rank $3 of $2 on $1 node(s) leaves, the others' \
connect fails with PROC_TERM_WO_SYNC" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect die $term\$" "$tmp/out")" -eq "$others" ]'
    [ "$rc" -eq 0 ] || reap "$client connect die $3"
done

# RFC0003's rendezvous: two rdpmix-runs publish "cluster:nspace" (with
# PMIX_CLUSTER_ID), look each other up and connect their jobs.  Jobs that
# share no server cannot connect yet: both get PMIX_ERR_NOT_SUPPORTED
# (-47) at once, neither hangs (docs/status.md)
for m in 1 2; do
    rm -f "$tmp/b_done"
    (
        timeout -k 5 90 "$RUN" --nodes "$m" -n 2 "$client" connect cross B \
            >"$tmp/b_out" 2>"$tmp/b_err" </dev/null
        echo $? >"$tmp/b_rc"
        touch "$tmp/b_done"
    ) &
    RUN_CLIENT_WAIT_FILE="$tmp/b_done" job 120 --nodes "$m" -n 2 \
        -x RUN_CLIENT_WAIT_FILE "$client" connect cross A
    wait
    b_rc=$(cat "$tmp/b_rc")
    check_that "two rdpmix-runs on $m node(s) meet through publish/lookup; \
their connect is refused as not supported" \
        '[ "$rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && grep -q "^rank 0 connect cross A with a cluster id: -47$" "$tmp/out" && grep -q "^rank 0 connect cross B with a cluster id: -47$" "$tmp/b_out"'
    [ "$b_rc" -eq 0 ] || sed 's/^/# b: /' "$tmp/b_err" | head -20
done

finish
