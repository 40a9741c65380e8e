#!/bin/sh
# test_run_events.sh - PMIx events under rdpmix-run on 1, 2 and 3 nodes:
# every range reaches exactly the processes it names, on every node, once;
# handler chains keep their order and PMIX_EVENT_ACTION_COMPLETE ends them;
# events raised before a handler exists (PMIX_MODEL_DECLARED, user events,
# an event raised before a client connected) reach the first matching
# handler registered later, once; with --enable-recovery a rank's failure
# is told to every other rank and the job goes on.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
np=6

# expected_counts RANK NODE NODE0: proc-local, local, namespace, session,
# global, custom (ranks 1 and np-1), global from rank np-1
expected_counts() {
    pl=0; [ "$1" -eq 0 ] && pl=1
    lo=0; [ "$2" -eq "$3" ] && lo=1
    cu=0; { [ "$1" -eq 1 ] || [ "$1" -eq $((np - 1)) ]; } && cu=1
    echo "$pl $lo 1 1 1 $cu 1"
}

# every rank printed the counts the range rules give it
counts_right() {
    n=0
    while read -r _ r _ node _ node0 _ counts; do
        [ "$counts" = "$(expected_counts "$r" "$node" "$node0")" ] || return 1
        n=$((n + 1))
    done <<EOF
$(grep "^rank [0-9]* node [0-9]* of [0-9]* counts" "$tmp/out")
EOF
    [ "$n" -eq "$np" ]
}

for m in 1 2 3; do
    job 120 --nodes "$m" -n "$np" "$client" events ranges
    check_that "every range reaches exactly its processes once on $m node(s)" \
        '[ "$rc" -eq 0 ] && counts_right'
    nodes=$(grep "^rank [0-9]* node" "$tmp/out" | awk '{print $4}' | sort -u | wc -l)
    check_that "the job really spans $m node(s)" '[ "$nodes" -eq "$m" ]'
    # namespace event: B (prepended) A (single code) D (multi-code)
    # C (default); session event: E completes the chain
    check_that "handler chains in order, ACTION_COMPLETE ends them ($m node(s))" \
        '[ "$(grep -c "^rank [0-9]* chain BADC E$" "$tmp/out")" -eq "$np" ]'

    job 120 --nodes "$m" -n "$np" -x RUN_CLIENT_FLAG="$tmp/flag.$m" \
        "$client" events cache
    check_that "events raised before their handler arrive once, on $m node(s)" \
        '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-9]* cache 1 1 0 1 0$" "$tmp/out")" -eq "$np" ]'

    job 120 --nodes "$m" -n "$np" --enable-recovery "$client" events recovery
    last=$((np - 1))
    check_that "--enable-recovery: the job ends with the failed rank's status ($m node(s))" \
        '[ "$rc" -eq 5 ]'
    check "--enable-recovery: the failure is reported, the job continues ($m node(s))" \
        grep -q "^rdpmix-run: rank $last (pid [0-9]*) exited with status 5; the job continues (--enable-recovery)$" "$tmp/err"
    check_that "every other rank is told once of each event ($m node(s))" \
        '[ "$(grep -c "^rank [0-9]* saw rank $last end with status 5: aborted 1 terminated 1$" "$tmp/out")" -eq "$last" ]'
done

# without --enable-recovery a failing rank still ends the job
job 60 --nodes 2 -n 4 "$client" events recovery
check "without --enable-recovery a failing rank ends the job" \
    grep -q "^rdpmix-run: rank 3 (pid [0-9]*) exited with status 5; terminating the job$" "$tmp/err"
check_that "... with its status and no rank reporting events" \
    '[ "$rc" -eq 5 ] && ! grep -q "saw rank" "$tmp/out"'

# --enable-recovery does not keep a job the user interrupts: a rank that
# dies of the forwarded SIGINT ends it, also when another ignores SIGINT
marker="sleep 9$$.75"
signal_job INT 2 -n 2 --enable-recovery sh -c \
    "if [ \$PMIX_RANK = 1 ]; then trap '' INT; fi; $marker; true"
check "--enable-recovery: SIGINT still ends the job with 130" [ "$rc" -eq 130 ]
check "--enable-recovery: nothing is left after SIGINT" none_left "$marker"
reap "$marker"

finish
