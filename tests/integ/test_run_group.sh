#!/bin/sh
# test_run_group.sh - PMIx groups (RFC0033) under rdpmix-run on 1, 2, 3
# and 4 nodes: construct/destruct (blocking and _nb), results (context id,
# membership), concurrent groups over the same processes, group info and
# endpoint data, PMIX_TIMEOUT, bad requests; a member that finalizes or
# exits before joining fails a construct unless PMIX_GROUP_OPTIONAL;
# invite/join/leave with their events (answers by join, or by the
# PMIX_GROUP_INVITED handler's status: 1, 3 and 4 nodes); faults: a leader that exits (a new
# one chosen by a handler, none chosen, a handler that aborts, a chosen
# one that leaves too: 1, 3 and 4 nodes), a
# construct's PMIX_GROUP_LEADER, PMIX_GROUP_FT_COLLECTIVE destructs and
# fences (members killed during the fence; a member that never calls
# one, alone on its node, killed during the others' next: 1, 2, 3 and 4
# nodes), a leader that aborts its invitation (1, 3 and 4), a replacement
# invited for a decliner (1, 3 and 4), concurrent
# constructs while a member exits.  Every rank's outcome is
# checked: its "ok" line, or its absence for the ranks that exit.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
np=4

# ranks_ok MODE R...: the job ended with status $want_rc (0: the others
# exited on purpose; 137: one was killed by SIGKILL), exactly ranks R...
# printed "rank R group MODE ok"
want_rc=0
ranks_ok() {
    _mode=$1
    shift
    [ "$rc" -eq "$want_rc" ] || return 1
    [ "$(grep -c "^rank [0-9]* group $_mode ok$" "$tmp/out")" -eq $# ] || return 1
    for _r in "$@"; do
        grep -q "^rank $_r group $_mode ok$" "$tmp/out" || return 1
    done
}

# fault MODE DESCRIPTION R...: run mode MODE on $m nodes; ranks R... end
# well, the others exit on purpose
fault() {
    _fm=$1
    _fd=$2
    shift 2
    job 120 --enable-recovery --nodes "$m" -n "$np" "$client" group "$_fm"
    check_that "$_fd, on $m node(s)" "ranks_ok $_fm $*"
}

nodes=${RDPMIX_TEST_GROUP_NODES:-1 2 3 4}
for m in $nodes; do
    job 120 --nodes "$m" -n "$np" "$client" group basic
    check_that "construct/destruct, concurrent groups, context ids on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group basic ok$" "$tmp/out")" -eq "$np" ]'
    job 120 --nodes "$m" -n "$np" "$client" group invite
    check_that "invite, accept, decline, construct-complete and left events, leave on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group invite ok$" "$tmp/out")" -eq "$np" ]'
    job 120 --enable-recovery --nodes "$m" -n "$np" "$client" group leader
    check_that "a leader that exits before the invitees answer: PMIX_GROUP_LEADER_FAILED, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group leader ok$" "$tmp/out")" -eq $((np - 1)) ]'
    job 120 --enable-recovery --nodes "$m" -n "$np" "$client" group term
    check_that "PMIX_GROUP_NOTIFY_TERMINATION: a member's exit is an event and destruct goes on, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group term ok$" "$tmp/out")" -eq $((np - 1)) ]'
    for how in fin exit; do
        job 120 --enable-recovery --nodes "$m" -n "$np" "$client" group "$how"
        check_that "a member that leaves ($how) fails a construct, optional goes on, every participant hears PMIX_GROUP_INVITE_FAILED about it for both, on $m node(s)" \
            '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group $how ok$" "$tmp/out")" -eq $((np - 1)) ]'
    done
    fault select "a leader exits during its invitation, a handler chooses a new one (PMIX_GROUP_LEADER_SELECTED)" 1 2 3
    fault abort "a leader exits, a handler returns PMIX_GROUP_CONSTRUCT_ABORT: everyone aborts" 1 2 3
    fault cleader "PMIX_GROUP_LEADER in a construct: failures to the leader, a new leader after it exits" 1 2
    fault ftdestruct "PMIX_GROUP_FT_COLLECTIVE: a destruct goes on without a member that exited" 0 1 2
    fault conc "concurrent constructs over the same processes while one exits" 0 1 2
    case " 1 3 4 " in *" $m "*) ;; *) continue ;; esac
    job 120 --nodes "$m" -n "$np" "$client" group hinvite
    check_that "invitations answered by the handlers' status (INVITE_ACCEPTED / _DECLINED): the leader hears both, the decliner is no member, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group hinvite ok$" "$tmp/out")" -eq "$np" ]'
    job 120 --nodes "$m" -n "$np" "$client" group replace
    check_that "an invitee declines, the leader's INVITE_DECLINED handler invites a replacement (a second PMIx_Group_invite): both invites and the members end with the group without the decliner, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group replace ok$" "$tmp/out")" -eq "$np" ]'
    fault freplace "an invitee exits, the leader's INVITE_FAILED handler invites a replacement: the group is made with it" 0 2 3
    fault select2 "the leader chosen after the first one exits leaves too: PMIX_GROUP_LEADER_FAILED again, a second new leader, the rest make the group" 2 3
    job 120 --nodes "$m" -n "$np" "$client" group iabort
    check_that "the leader aborts its invitation (its INVITE_DECLINED / _ACCEPTED handler returns PMIX_GROUP_CONSTRUCT_ABORT, it raises the event): every invite and join ends with it, every invitee hears it, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group iabort ok$" "$tmp/out")" -eq "$np" ]'
    want_rc=137
    fault ftfence "a member killed during a fence over the group: fails without PMIX_GROUP_FT_COLLECTIVE, completes with the others' data with it (twice)" 0 1
    # the last rank is alone on its node on 3 and 4 nodes
    fault ftgone "a member that never calls an FT fence (the others' times out) killed during their next: it completes with their data" 0 1 2
    want_rc=0
done
# ... and on 2 nodes with 3 ranks (2 + 1)
m=2
np=3
want_rc=137
fault ftgone "a member that never calls an FT fence (the others' times out) killed during their next: it completes with their data" 0 1
want_rc=0
np=4

# What an operation costs between the servers: CTL_OPEN goes through one
# relay (at most 2 (k - 1) messages per operation over k servers, not
# k (k - 1); each of the k logs the operation once, so 2 (m - 1) / m per
# line at most, however many servers each operation spans), a
# destruct is a barrier (no blocks).  The servers say both at debug level:
# "group control message 3 to server S" per CTL_OPEN sent, "group ID
# KIND: allgather|barrier between the servers" once per operation each.
# A construct or destruct sends its OPEN only when it still runs after
# RDPMIX_GROUP_OPEN_DELAY (docs/design.md, "Groups"): 0 sends it at once.
m=4
RDPMIX_GROUP_OPEN_DELAY=0 RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
    job 120 --nodes "$m" -n "$m" "$client" group basic
opens=$(grep -c "group control message 3 to server" "$tmp/err")
xops=$(grep -c "group .* \(construct\|destruct\): [a-z]* between the servers" "$tmp/err")
dbar=$(grep -c "group .* destruct: barrier between the servers" "$tmp/err")
dall=$(grep -c "group .* destruct: [a-z]* between the servers" "$tmp/err")
check_that "construct/destruct on $m nodes, OPEN at once: $opens CTL_OPEN, $xops operation lines, destructs are barriers ($dbar of $dall)" \
    '[ "$rc" -eq 0 ] && [ "$xops" -ge "$m" ] && [ "$opens" -ge 1 ] &&
     [ "$opens" -le $((2 * xops * (m - 1) / m)) ] &&
     [ "$dall" -ge "$m" ] && [ "$dbar" -eq "$dall" ]'
# with the default delay an OPEN still goes through the relay when sent
RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
    job 120 --nodes "$m" -n "$m" "$client" group basic
opens=$(grep -c "group control message 3 to server" "$tmp/err")
xops=$(grep -c "group .* \(construct\|destruct\): [a-z]* between the servers" "$tmp/err")
check_that "construct/destruct on $m nodes, OPEN deferred: $opens CTL_OPEN, $xops operation lines" \
    '[ "$rc" -eq 0 ] && [ "$xops" -ge "$m" ] &&
     [ "$opens" -le $((2 * xops * (m - 1) / m)) ]'
# The OPEN at once, and one deferred longer than the operations take: a
# member that leaves alone on its node before calling still fails the
# construct everywhere (its server hears of the operation only from the
# OPEN), concurrent constructs still meet.
for d in 0 1; do
    for how in exit conc; do
        RDPMIX_GROUP_OPEN_DELAY=$d \
            job 120 --enable-recovery --nodes 4 -n "$np" "$client" group "$how"
        check_that "RDPMIX_GROUP_OPEN_DELAY=$d: group $how on 4 nodes" \
            '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group $how ok$" "$tmp/out")" -eq $((np - 1)) ]'
    done
done

finish
