#!/bin/sh
# test_run_fence_board.sh - fences over a whole job answered through the
# server's fence board (one eventfd write wakes every local client;
# src/core/ipc/bcast.h) under rdpmix-run on 1 and 2 nodes: new data every
# round for more rounds than the board has slots, results in a board
# slot, in the result's memfd and in a memfd of their own, two fences in flight, a fence that times out for all;
# with every client on the board, with half of them answered by message,
# and with the board switched off in the servers; blocking fences
# completed by their calling thread from the board (and, with that off,
# by the library's thread); on 2 nodes each local rank's part of a large
# result written as it arrives, and not, and the server's contribution to
# the exchange built as the ranks arrive (also on 3 nodes), a section that
# local and remote peers see alike packed once for both, the other
# servers' large sections written into the result from their blocks.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"

# log_count PATTERN: lines of the servers' and clients' logs matching it;
# log_sum TEXT: the sum of the numbers just before TEXT in those lines
log_count() {
    cat "$tmp"/srv.* 2>/dev/null | grep -c "$1"
}
log_sum() {
    cat "$tmp"/srv.* 2>/dev/null |
        sed -n "s/.* \([0-9][0-9]*\) $1.*/\1/p" |
        awk '{ n += $1 } END { print n + 0 }'
}

# board_job NODES MODE [VAR=VALUE]: run_client nodes MODE on NODES nodes
# with VAR set; $oks = ranks that passed, $nb = fences the servers' debug
# log says went through the board, $nc = fences the clients' log says
# their callers completed, $np = results whose local part was written as
# the ranks arrived, $nk = contributions built as the ranks arrived, $no =
# sections packed once for both (result and contribution), $nd = other
# servers' sections written into results from their blocks, $nf = own
# contributions freed once sent
board_job() {
    rm -f "$tmp"/srv.*
    RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server,client
    RDPMIX_LOG_FILE="$tmp/srv.%p"
    export RDPMIX_LOG_LEVEL RDPMIX_LOG_SUBSYS RDPMIX_LOG_FILE
    [ -n "${3:-}" ] && export "${3?}"
    job 180 --nodes "$1" -n 5 "$client" nodes "$2"
    unset RDPMIX_LOG_LEVEL RDPMIX_LOG_SUBSYS RDPMIX_LOG_FILE
    [ -n "${3:-}" ] && unset "${3%%=*}"
    oks=$(grep -c "^rank [0-4] of 5 $2 ok$" "$tmp/out")
    nb=$(log_count "answered through the fence board")
    nc=$(log_count "completed by its caller")
    np=$(log_count "local sections .* written as they arrived")
    nk=$(log_count "contribution of .* built as they arrived")
    no=$(log_sum "packed once for the result and the contribution")
    nf=$(log_count "this server's block .* freed once sent")
    nd=$(log_sum "other servers' sections written from their blocks")
}

for m in 1 2 3; do
    board_job "$m" board
    check_that "whole-job fences through the board on $m nodes: every round's data, two in flight, a timeout ($nb answered so, $nc by the caller)" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$nb" -ge $((300 * m)) ] && [ "$nc" -gt 0 ]'
    # across nodes the exchange took each server's large contribution as
    # its ranks' arrivals built it (fence.c, fence_take_contribution)
    if [ "$m" -gt 1 ]; then
        check_that "$m nodes: the servers' contributions to large results built as the ranks arrived ($nk times)" \
            '[ "$nk" -ge 20 ]'
        # large sections of the other servers went into the results'
        # memfds straight from the received blocks (fence.c,
        # pack_deferred_direct)
        check_that "$m nodes: large sections of the other servers written into the results from their blocks ($nd)" \
            '[ "$nd" -ge 20 ]'
    fi
    # the large results (memfd) had this node's part written as its ranks
    # arrived (fence.c, fence_arrived)
    if [ "$m" -eq 2 ]; then
        check_that "2 nodes: this node's part of large results written as its ranks arrived ($np times)" \
            '[ "$np" -ge 20 ]'
        # the ranks' keys are all global: every prepared result had its
        # arrivals after the first packed once, for the result and the
        # contribution alike (fence.c, arrived_once; 2 and 3 ranks a node)
        check_that "2 nodes: sections seen alike locally and remotely packed once for both ($no, $np results)" \
            '[ "$np" -ge 20 ] && [ "$no" -ge "$np" ]'
        # between 2 servers each one's large contribution was freed once
        # sent (the fence never reads its own block back:
        # rdp_coll_args_t.own_unneeded)
        check_that "2 nodes: each server's contribution to large results freed once sent ($nf times)" \
            '[ "$nf" -ge 20 ]'
    fi
    # among 3 servers no contribution is freed before the end (2: below)
    if [ "$m" -eq 3 ]; then
        check_that "3 nodes: no contribution freed before the end ($nf)" \
            '[ "$nf" -eq 0 ]'
    fi
done

board_job 2 board RDPMIX_FENCE_PREPARE=0
check_that "RDPMIX_FENCE_PREPARE=0: the same rounds pass, every result packed after the exchange ($np prepared, $nk contributions built early)" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$np" -eq 0 ] && [ "$nk" -eq 0 ]'

board_job 2 board RDPMIX_FENCE_BOARD_CALLER=0
check_that "RDPMIX_FENCE_BOARD_CALLER=0: the same rounds pass, no fence completed by its caller ($nb through the board)" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$nb" -ge 600 ] && [ "$nc" -eq 0 ]'

# results kept inline up to 1 MiB: those larger than a slot's data area
# go to a memfd of their own
board_job 2 board RDPMIX_SHM_MIN=1048576
check_that "inline results larger than a board slot, through the board ($nb answered so)" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$nb" -ge 600 ]'

# a thread that fenced exits after the library was dlclosed (Open MPI
# 4.1 unloads pmix/ext3x in MPI_Finalize): its waiter's cleanup must not
# run code that is gone
# (no leak check there: libevent's global locks, made once per process by
# evthread_use_pthreads, are unreachable once libevent is unmapped with
# us, and LeakSanitizer reports the 2 x 40 bytes; freeing them with
# libevent_global_shutdown would break a program that uses libevent too)
asan_saved="${ASAN_OPTIONS-}"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
job 120 --nodes 2 -n 4 "$builddir/tests/integ/board_unload" "$builddir/.libs/libpmix.so.2"
ASAN_OPTIONS="$asan_saved"
oks=$(grep -c "^rank [0-3] unload ok$" "$tmp/out")
check_that "a thread that fenced exits after the library was unloaded ($oks of 4 ranks survived)" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 4 ]'

board_job 2 boardmix
check_that "odd ranks without the board, even ranks on it: the same rounds pass ($nb answered through the board)" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$nb" -ge 300 ]'

board_job 2 board RDPMIX_FENCE_BOARD=0
check_that "RDPMIX_FENCE_BOARD=0: every fence answered by message" \
    '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ] && [ "$nb" -eq 0 ]'

finish
