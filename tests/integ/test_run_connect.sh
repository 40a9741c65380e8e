#!/bin/sh
# test_run_connect.sh - PMIx_Connect / PMIx_Disconnect (RFC0003, the
# Standard's signatures) under rdpmix-run on 1, 2, 3 and 4 nodes: the whole
# job and subsets, blocking and non-blocking, keys of the other
# participants read after connect, concurrent operations over the same
# ranks told apart by RDPMIX_CONNECT_ID, PMIX_TIMEOUT, notify-each and
# notify-request events, a participant that leaves during a connect (and
# during one with RDPMIX_CONNECT_OPTIONAL, which goes on without it), and
# connects between two rdpmix-runs' jobs that share no server
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
    "3 3 all" "3 3 ids" "3 3 notify" \
    "4 4 all" "4 4 subsets" "4 4 ids" "4 4 notify" "4 4 request" \
    "4 5 all" "4 5 subsets"; do
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
for c in "1 4 2" "2 4 0" "2 3 2" "3 3 1" "3 5 4" "4 4 1" "4 5 4"; do
    # shellcheck disable=SC2086
    set -- $c
    job 120 --nodes "$1" -n "$2" "$client" connect die "$3"
    others=$(($2 - 1))
    check_that "connect: rank $3 of $2 on $1 node(s) leaves, the others' \
connect fails with PROC_TERM_WO_SYNC" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect die $term\$" "$tmp/out")" -eq "$others" ]'
    [ "$rc" -eq 0 ] || reap "$client connect die $3"
done

# RDPMIX_CONNECT_OPTIONAL: rank L exits without finalizing; the others'
# optional connect and disconnect of the whole job succeed (with 3 ranks
# on 3 nodes rank L is alone on its node: its server takes part for it;
# L = 9: nobody leaves, everyone's succeed)
for c in "1 4 2" "2 4 0" "2 3 2" "3 3 1" "3 5 4" "1 3 9" "3 3 9" \
    "4 4 2" "4 4 9"; do
    # shellcheck disable=SC2086
    set -- $c
    job 120 --nodes "$1" -n "$2" "$client" connect optional "$3"
    others=$(($2 - 1))
    [ "$3" -lt "$2" ] || others=$2
    check_that "optional connect: rank $3 of $2 on $1 node(s) leaves, the \
others' connect and disconnect succeed" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect optional 0 0\$" "$tmp/out")" -eq "$others" ]'
    [ "$rc" -eq 0 ] || reap "$client connect optional $3"
done

# RFC0003's rendezvous: two rdpmix-runs (A: NODES_A nodes, NP_A ranks; B
# likewise) publish "cluster:nspace" (with PMIX_CLUSTER_ID), look each
# other up and connect both jobs; HOW says what B does (run_client_connect.c,
# mode_cross).  Each job ends when the other is done (files), every wait
# bounded.
cross() {
    rm -f "$tmp/a_done" "$tmp/b_done"
    # a peer directory of this test's own: other test runs of this user
    # publish the same keys
    mkdir -p "$tmp/peers" && chmod 700 "$tmp/peers"
    RDPMIX_PEER_DIR="$tmp/peers"
    export RDPMIX_PEER_DIR
    (
        RUN_CLIENT_WAIT_FILE="$tmp/a_done" timeout -k 5 90 "$RUN" \
            --nodes "$3" -n "$4" -x RUN_CLIENT_WAIT_FILE \
            "$client" connect cross B "$2" "$5" \
            >"$tmp/b_out" 2>"$tmp/b_err" </dev/null
        echo $? >"$tmp/b_rc"
        touch "$tmp/b_done"
    ) &
    RUN_CLIENT_WAIT_FILE="$tmp/b_done" job 120 --nodes "$1" -n "$2" \
        -x RUN_CLIENT_WAIT_FILE "$client" connect cross A "$4" "$5"
    touch "$tmp/a_done"
    wait
    b_rc=$(cat "$tmp/b_rc")
    [ "$b_rc" -eq 0 ] || sed 's/^/# b: /' "$tmp/b_err" | head -20
    if [ "$rc" -ne 0 ] || [ "$b_rc" -ne 0 ]; then
        reap "$client connect cross A $4 $5"
        reap "$client connect cross B $2 $5"
    fi
}

# every rank of both jobs connected, read the other job's size, cluster
# id and each of its ranks' committed key, and disconnected
for c in "1 2 1 3" "2 4 2 3" "3 5 3 5" "1 3 3 4" "3 3 1 2" "2 3 3 3" \
    "4 4 1 2" "2 3 4 5"; do
    # shellcheck disable=SC2086
    set -- $c
    cross "$1" "$2" "$3" "$4" join
    np_a=$2
    np_b=$4
    check_that "two rdpmix-runs ($2 ranks on $1 node(s), $4 on $3) meet \
through publish/lookup, connect, read each other's job info and keys, \
disconnect" \
        '[ "$rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect cross A joined$" "$tmp/out")" -eq "$np_a" ] && [ "$(grep -c "^rank [0-9]* connect cross B joined$" "$tmp/b_out")" -eq "$np_b" ]'
done

# B ends (its launcher too) before joining: A's connect fails at once
# with PMIX_ERR_UNREACH (-25) and a message naming B's job
for c in "1 2 1 2" "2 3 3 4"; do
    # shellcheck disable=SC2086
    set -- $c
    cross "$1" "$2" "$3" "$4" leave
    np_a=$2
    check_that "the other job ($4 ranks on $3 node(s)) ended before \
joining: all $2 ranks on $1 node(s) get PMIX_ERR_UNREACH, told why" \
        '[ "$rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect cross A: -25$" "$tmp/out")" -eq "$np_a" ] && grep -q "no launcher of rdpmix\.[0-9]*\.[0-9a-f]* is running" "$tmp/err"'
done

# after both connected, A's last rank exits with status 3 (A's job ends,
# rdpmix-run's status 3): every rank of B gets PMIX_ERR_PROC_ABORTED
# naming that rank, with its exit code, through the launchers
for c in "1 2 1 2" "2 3 3 3" "3 4 1 2"; do
    # shellcheck disable=SC2086
    set -- $c
    cross "$1" "$2" "$3" "$4" abort
    np_b=$4
    last=$(($2 - 1))
    check_that "a rank of the other job ($2 ranks on $1 node(s)) fails \
after the connect: all $4 ranks on $3 node(s) get PMIX_ERR_PROC_ABORTED" \
        '[ "$rc" -eq 3 ] && [ "$b_rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect cross B saw A:$last end with 3$" "$tmp/b_out")" -eq "$np_b" ]'
done

# B runs but never joins: A's connect with PMIX_TIMEOUT 5 s gives
# PMIX_ERR_TIMEOUT (-24) on every node
for c in "1 2 1 2" "3 3 2 2"; do
    # shellcheck disable=SC2086
    set -- $c
    cross "$1" "$2" "$3" "$4" idle
    np_a=$2
    check_that "the other job never joins: all $2 ranks on $1 node(s) \
time out" \
        '[ "$rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* connect cross A: -24$" "$tmp/out")" -eq "$np_a" ]'
done

finish
