#!/bin/sh
# test_run_pnet.sh - fabric credentials through rdpmix-run (RFC0012,
# docs/pnet.md): two concurrent jobs over 3 nodes each get their own key
# and port block, no key reaches a log, the pools are full again after
# both end (also when one was killed), and an empty pool stops a job
# before anything is launched.
. "${srcdir:-.}/tests/integ/test_run_common.sh"

export RDPMIX_PNET_STATE_DIR="$tmp/pnet-state"
export RDPMIX_PNET_CONF="$tmp/pnet.conf"
printf 'tcp_ports = 41000-41063\ntcp_ports_per_job = 32\n' >"$RDPMIX_PNET_CONF"
export RDPMIX_LOG_LEVEL=debug

# what every rank prints: its rank, its job's key and its port block; then
# it waits (bounded) until the test lets it go
marker="$tmp/hold"
rank_prog='echo "rank=$PMIX_RANK key=$OMPI_MCA_orte_precondition_transports ports=$RDPMIX_TCP_PORTS"; i=0; while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done'

in_use() {
    cat "$RDPMIX_PNET_STATE_DIR/$1.state" 2>/dev/null | wc -l
}

# start_job NAME NODES NP: rdpmix-run in the background, outputs in
# $tmp/NAME.out / .err, its pid in $tmp/NAME.pid
start_job() {
    timeout -k 5 90 "$RUN" --nodes "$2" -n "$3" --pnet opa,tcp \
        /bin/sh -c "$rank_prog" sh "$marker" \
        >"$tmp/$1.out" 2>"$tmp/$1.err" </dev/null &
    echo $! >"$tmp/$1.pid"
}

# the single key and the single port block of a job's ranks (and N lines)
keys_of() { sed -n 's/.*key=\([^ ]*\) .*/\1/p' "$tmp/$1.out" | sort -u; }
ports_of() { sed -n 's/.*ports=\(.*\)$/\1/p' "$tmp/$1.out" | sort -u; }
nlines() { grep -c '^rank=' "$tmp/$1.out"; }

start_job A 3 4
start_job B 3 5
poll_for 60 '[ "$(nlines A)" -eq 4 ] && [ "$(nlines B)" -eq 5 ]'
check_that "two concurrent jobs on 3 nodes: every rank started" \
    '[ "$(nlines A)" -eq 4 ] && [ "$(nlines B)" -eq 5 ]'
check_that "every rank of a job has the job's one key, in Open MPI's format" \
    '[ "$(keys_of A | wc -l)" -eq 1 ] && [ "$(keys_of B | wc -l)" -eq 1 ] &&
     keys_of A | grep -Eqx "[0-9a-f]{16}-[0-9a-f]{16}"'
check_that "the two jobs' keys differ" '[ "$(keys_of A)" != "$(keys_of B)" ]'
check_that "the two jobs hold disjoint port blocks, both of the pool" \
    '[ "$(ports_of A | wc -l)" -eq 1 ] && [ "$(ports_of B | wc -l)" -eq 1 ] &&
     [ "$(ports_of A)" != "$(ports_of B)" ] &&
     ports_of A | grep -Eqx "410(00-41031|32-41063)"'
check_that "the pool records both live jobs" '[ "$(in_use tcp_block)" -eq 2 ]'

# the pool is empty: a third job stops before it launches anything
job 60 --nodes 2 -n 2 --pnet opa,tcp /bin/echo launched
check_that "an empty pool stops a job before launch, naming the problem" \
    '[ $rc -ne 0 ] && ! grep -q launched "$tmp/out" &&
     grep -q "cannot set up the job.s network" "$tmp/err" &&
     grep -q "tcp_block is exhausted" "$tmp/err"'

# A ends normally, B's launcher is killed
touch "$marker"
wait "$(cat "$tmp/A.pid")"
rcA=$?
kill -KILL "$(pgrep -P "$(cat "$tmp/B.pid")")" 2>/dev/null
wait "$(cat "$tmp/B.pid")"
check_that "the first job ends normally" '[ $rcA -eq 0 ]'
check_that "no key appears in any log, at debug level" \
    '! grep -qF "$(keys_of A)" "$tmp/A.err" "$tmp/B.err" &&
     ! grep -qF "$(keys_of B)" "$tmp/A.err" "$tmp/B.err"'
rm -f "$marker"
# B's daemons notice their launcher is gone and end (A's ended with A;
# this waited for nothing: no daemon's command line is its path alone)
check_that "the killed launcher's daemons end" \
    'poll_for 30 "[ -z \"\$(our_daemons)\" ]"'
# a job after both: the killed launcher's block is free again
job 60 --nodes 3 -n 3 --pnet tcp /bin/sh -c 'echo "ports=$RDPMIX_TCP_PORTS"'
check_that "after both ended (one killed) the pool serves a new job" \
    '[ $rc -eq 0 ] && [ "$(grep -c "^ports=410" "$tmp/out")" -eq 3 ]'
check_that "and is full again after it" '[ "$(in_use tcp_block)" -eq 0 ]'

# A job's pnet values are its own: every rank Gets its job's credential
# and port block (the ones in its environment); asking for the other
# job's gives PMIX_ERR_NO_PERMISSIONS (the nspaces meet through files)
client="$builddir/tests/integ/run_client"
for nodes in 1 2 3; do
    rm -f "$tmp/nsA" "$tmp/nsB"
    for j in A B; do
        other=B; [ $j = B ] && other=A
        timeout -k 5 90 "$RUN" --nodes $nodes -n 3 --pnet opa,tcp \
            /bin/sh -c 'echo "env key=$OMPI_MCA_orte_precondition_transports ports=$RDPMIX_TCP_PORTS"; exec "$0" "$@"' \
            "$client" pnet "$tmp/ns$j" "$tmp/ns$other" \
            >"$tmp/g$j.out" 2>"$tmp/g$j.err" </dev/null &
        echo $! >"$tmp/g$j.pid"
    done
    wait "$(cat "$tmp/gA.pid")"; rcA=$?
    wait "$(cat "$tmp/gB.pid")"; rcB=$?
    # what a failure shows: both jobs' messages (failed once at 3 nodes
    # in a full make check; most likely a daemon that UCX 1.13 aborted
    # in its shutdown, which 3 servers or more can meet: see
    # docs/design.md, "The worker is flushed before it is destroyed")
    grep -hv ' debug: ' "$tmp/gA.err" "$tmp/gB.err" >"$tmp/err"
    rc="$rcA $rcB"
    check_that "--nodes $nodes: two concurrent jobs end normally" \
        '[ $rcA -eq 0 ] && [ $rcB -eq 0 ]'
    for j in A B; do
        check_that "--nodes $nodes: job $j's ranks Get its key and port block, those of their environment" \
            '[ "$(grep -c "^rank=[0-9]* cred=" "$tmp/g$j.out")" -eq 3 ] &&
             [ "$(sed -n "s/^rank=[0-9]* cred=\([^ ]*\) ports=\(.*\)$/key=\1 ports=\2/p" "$tmp/g$j.out" | sort -u)" = \
               "$(sed -n "s/^env //p" "$tmp/g$j.out" | sort -u)" ]'
        check_that "--nodes $nodes: job $j may not read the other job's credential or ports" \
            '[ "$(grep -c "other_cred=NO-PERMISSIONS other_ports=NO-PERMISSIONS$" "$tmp/g$j.out")" -eq 3 ]'
    done
    check_that "--nodes $nodes: the two jobs' credentials differ" \
        '[ "$(grep -h "^env " "$tmp/gA.out" | sort -u)" != "$(grep -h "^env " "$tmp/gB.out" | sort -u)" ] &&
         [ "$(grep -h "^env " "$tmp/gA.out" "$tmp/gB.out" | sort -u | wc -l)" -eq 2 ]'
done

# sshot: VNIs from the pool, a CXI service per node through the site's
# command (which records its calls), released at the job's end
cat >"$tmp/svc.sh" <<EOF
#!/bin/sh
echo "\$1 \$2 \$3 \$4 \$5 env=\$RDPMIX_PNET_NSPACE,\$RDPMIX_PNET_UID,\$RDPMIX_PNET_VNIS" >>"$tmp/svc.log"
[ "\$1" = setup ] && [ -e "$tmp/svc.fail" ] && exit 3
[ "\$1" = setup ] && echo "svc_ids=5\$(hostname | tr -dc 0-9)"
exit 0
EOF
chmod +x "$tmp/svc.sh"
export RDPMIX_PNET_SSHOT_VNIS=1024-1027 RDPMIX_PNET_SSHOT_VNIS_PER_JOB=2
export RDPMIX_PNET_SSHOT_SVC_COMMAND="$tmp/svc.sh"
sshot_prog='echo "vnis=$SLINGSHOT_VNIS dev=$SLINGSHOT_DEVICES tcs=$SLINGSHOT_TCS svc=$SLINGSHOT_SVC_IDS"'
for nodes in 1 3; do
    rm -f "$tmp/svc.log"
    job 60 --nodes $nodes -n 3 --pnet sshot /bin/sh -c "$sshot_prog"
    vn=$(sed -n 's/^vnis=\([^ ]*\) .*/\1/p' "$tmp/out" | sort -u)
    check_that "sshot --nodes $nodes: every rank has the job's 2 VNIs of the pool, the devices and classes" \
        '[ $rc -eq 0 ] && [ "$(grep -c "^vnis=" "$tmp/out")" -eq 3 ] &&
         echo "$vn" | grep -Eqx "102[4-7],102[4-7]" &&
         [ "$(grep -c " dev=cxi0 tcs=0x1 " "$tmp/out")" -eq 3 ]'
    check_that "sshot --nodes $nodes: the site command set up one service per node with the job, uid and VNIs, and released it" \
        '[ "$(grep -c "^setup rdpmix\.[^ ]* $(id -u) $vn cxi0 env=rdpmix\.[^,]*,$(id -u),$vn$" "$tmp/svc.log")" -eq $nodes ] &&
         [ "$(grep -c "^release rdpmix\.[^ ]* $(id -u) $vn cxi0 " "$tmp/svc.log")" -eq $nodes ]'
    check_that "sshot --nodes $nodes: each rank has its node's service id" \
        '[ "$(grep -c " svc=[0-9][0-9]*$" "$tmp/out")" -eq 3 ]'
    check_that "sshot --nodes $nodes: the VNIs are back in the pool" \
        '[ "$(in_use sshot_vni)" -eq 0 ]'
done
touch "$tmp/svc.fail"
rm -f "$tmp/svc.log"
job 60 --nodes 2 -n 2 --pnet sshot /bin/echo launched
check_that "sshot: a failing site command aborts the launch" \
    '[ $rc -ne 0 ] && ! grep -q launched "$tmp/out" &&
     grep -q "sshot_svc_command .* setup failed" "$tmp/err"'
check_that "sshot: and every VNI is back in the pool" '[ "$(in_use sshot_vni)" -eq 0 ]'
rm -f "$tmp/svc.fail"
unset RDPMIX_PNET_SSHOT_VNIS RDPMIX_PNET_SSHOT_VNIS_PER_JOB RDPMIX_PNET_SSHOT_SVC_COMMAND

# ib: each rank's UCX_NET_DEVICES names the HCA nearest the cpus it runs
# on (tests/data/ib2pkg.xml: PU 0 on package 0 with mlx5_0, PU 1 on
# package 1 with mlx5_1).  rdpmix binds nothing, so a rank runs where its
# daemon may (here: where taskset put rdpmix-run), and the daemon
# registers that binding as the ranks' PMIX_CPUSET.
export RDPMIX_PNET_IB_PKEYS=0x8001-0x8004
ib_prog='echo "rank=$PMIX_RANK pkey=$UCX_IB_PKEY dev=[$UCX_NET_DEVICES]"'
# ib_job TOPOLOGY NODES [PU]: a 3-rank ib job, bound to PU when given
ib_job() {
    _bind=""
    [ -n "$3" ] && _bind="taskset -c $3"
    RDPMIX_PNET_IB_TOPOLOGY="$srcdir/tests/data/$1" timeout -k 5 60 \
        $_bind "$RUN" --nodes "$2" -n 3 --pnet ib /bin/sh -c "$ib_prog" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
# how many ranks printed exactly dev=[$1] with a partition key
ranks_with() { grep -c "^rank=[0-9] pkey=0x800[1-4] dev=\[$1\]$" "$tmp/out"; }
if taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null; then
    for nodes in 1 2 3; do
        ib_job ib2pkg.xml $nodes 0
        check_that "ib --nodes $nodes: ranks bound to package 0 get mlx5_0:1" \
            '[ $rc -eq 0 ] && [ "$(ranks_with mlx5_0:1)" -eq 3 ]'
        ib_job ib2pkg.xml $nodes 1
        check_that "ib --nodes $nodes: ranks bound to package 1 get mlx5_1:1" \
            '[ $rc -eq 0 ] && [ "$(ranks_with mlx5_1:1)" -eq 3 ]'
        ib_job nohca2pkg.xml $nodes 1
        check_that "ib --nodes $nodes: without an HCA nothing is set" \
            '[ $rc -eq 0 ] && [ "$(ranks_with "")" -eq 3 ]'
    done
else
    skip "ib by binding: this machine has no PUs 0 and 1"
fi
ib_job ib2pkg.xml 2
check_that "ib: unbound ranks get no UCX_NET_DEVICES" \
    '[ $rc -eq 0 ] && [ "$(ranks_with "")" -eq 3 ]'
check_that "ib: the partition keys are back in the pool" \
    '[ "$(in_use ib_pkey)" -eq 0 ]'
unset RDPMIX_PNET_IB_PKEYS

# a module name that does not exist
job 30 --nodes 1 -n 1 --pnet opa,nosuch /bin/echo launched
check_that "--pnet with an unknown module is refused before launch" \
    '[ $rc -ne 0 ] && ! grep -q launched "$tmp/out" &&
     grep -q "nosuch" "$tmp/err"'

# without --pnet nothing is set (no fabric here: no module volunteers)
unset RDPMIX_PNET
job 30 --nodes 2 -n 2 /bin/sh -c 'echo "key=[$OMPI_MCA_orte_precondition_transports]"'
check_that "without --pnet on a machine without fabric: no key" \
    '[ $rc -eq 0 ] && [ "$(grep -c "^key=\[\]$" "$tmp/out")" -eq 2 ]'

echo "1..$tnum"
exit $tfail
