#!/bin/sh
# test_run_group.sh - PMIx groups (RFC0033) under rdpmix-run on 1, 2 and 3
# nodes: construct/destruct (blocking and _nb), results (context id,
# membership), concurrent groups over the same processes, group info and
# endpoint data, PMIX_TIMEOUT, bad requests; a member that finalizes or
# exits before joining fails a construct unless PMIX_GROUP_OPTIONAL;
# invite/join/leave with their events.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
np=4

nodes=${RDPMIX_TEST_GROUP_NODES:-1 2 3}
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
        check_that "a member that leaves ($how) fails a construct, optional goes on, on $m node(s)" \
            '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* group $how ok$" "$tmp/out")" -eq $((np - 1)) ]'
    done
done

finish
