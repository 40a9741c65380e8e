#!/bin/sh
# test_run_hosts.sh - rdpmix-run --hosts / --hostfile across real network
# stacks: hosts h1..h3 in network namespaces joined by veth pairs to a
# bridge (tests/integ/netns_hosts.sh), each with its own address and host
# name; rdpmix-run runs on a login host h0 and starts one rdpmixd on each
# host through an ssh-like launch agent that enters the host's namespace
# with a login environment of its own.  The daemons find rdpmix-run at its
# address on the bridge, and their engine runs over UCX tcp on the veth
# links (UCX_TLS=tcp UCX_NET_DEVICES=eth0: there is no other way between
# the namespaces).  PMIx job info, fences and gets across 2 and 3 hosts,
# placement by hosts and hostfile slots, the environment the ranks get, an
# Open MPI program over TCP on eth0, and the failures: a host the agent
# cannot reach, a host that never connects back, a remote daemon that dies,
# rdpmix-run killed.  At the end no namespace, process or file is left.
#
# Needs root, iproute2 (ip netns) and unshare; skipped otherwise.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"
. "${top_srcdir:-.}/tests/integ/netns_hosts.sh"
. "${top_srcdir:-.}/tests/integ/ompi_env.sh"

client="$builddir/tests/integ/run_client"
mpi_prog="$builddir/tests/integ/mpi_basic"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (network and UTS namespaces)"
command -v ip >/dev/null 2>&1 || skip_all "no ip (iproute2)"
unshare --uts true 2>/dev/null || skip_all "cannot make UTS namespaces"

cleanup() {
    netns_hosts_down
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# the agent script goes to $tmp, not to the daemons' TMPDIR (checked empty)
td=$TMPDIR
TMPDIR=$tmp
netns_hosts_up 3 >"$tmp/up.err" 2>&1 || {
    netns_hosts_down
    skip_all "cannot make network namespaces: $(head -n 1 "$tmp/up.err")"
}
TMPDIR=$td
tag=$NETNS_TAG

# the engine between the daemons and Open MPI between the ranks: TCP over
# the veth links
export UCX_TLS=tcp UCX_NET_DEVICES=eth0
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0

# hjob [timeout] ARGS...: rdpmix-run ARGS on the login host h0, with the
# netns agent; sets rc, fills $tmp/out and $tmp/err
hjob() {
    secs=60
    case $1 in [0-9]*) secs=$1; shift ;; esac
    netns_hosts_run h0 timeout -k 5 "$secs" "$RUN" \
        --launch-agent "$NETNS_AGENT" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# pids of the processes in host H's namespace whose command line matches
# the extended regular expression RE
host_pids() {
    for _p in $(ip netns pids "$tag-$1" 2>/dev/null); do
        tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null | grep -Eq "$2" \
            && echo "$_p"
    done
}

# nothing of ours runs in any host's namespace any more (allowing 30 s:
# daemons clean up on their own time on a loaded machine)
hosts_idle() {
    poll_for 30 '[ -z "$(for _h in h0 h1 h2 h3; do host_pids $_h "rdpmix|$marker"; done)" ]'
}

marker="sleep 8$$.25"

# hjob_running HOSTS N: rdpmix-run --hosts HOSTS -n N of a rank that runs
# $marker, in the background (pid), until all N markers run
hjob_running() {
    netns_hosts_run h0 "$RUN" --launch-agent "$NETNS_AGENT" --hosts "$1" \
        -n "$2" sh -c "$marker; true" >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    _hosts=$(echo "$1" | tr , " ")
    _want=$2
    poll_for 60 '[ "$(for _h in $_hosts; do host_pids $_h "^$marker"; done | wc -l)" -eq "$_want" ]'
}

# --- PMIx job info, fences and gets across hosts ----------------------------
hjob --hosts h1,h2 -n 4 -x RUN_CLIENT_CHECK_HOSTNAME=1 "$client" nodes fence
check_that "2 hosts: every rank fences and gets every peer's data" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-3] of 4 fence ok$" "$tmp/out")" -eq 4 ]'
check_placement "2 hosts: node i is the i-th host, named as it names itself, the ranks in blocks" \
    h1:0,1 h2:2,3

hjob --hosts h1,h2,h3 -n 7 --map-by node -x RUN_CLIENT_CHECK_HOSTNAME=1 \
    "$client" nodes fence
check_that "3 hosts: every rank fences and gets every peer's data" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-6] of 7 fence ok$" "$tmp/out")" -eq 7 ]'
check_placement "3 hosts, --map-by node: round robin over the hosts" \
    h1:0,3,6 h2:1,4 h3:2,5

# slots: on --hosts, and in a hostfile; the default -n is their sum
printf '# three hosts\nh3 slots=1\nh1 slots=3   # the big one\n\nh2 slots=2\n' \
    >"$tmp/hostfile"
hjob --hostfile "$tmp/hostfile" "$client" nodes info
check_placement "--hostfile: the hosts in its order, as many ranks as slots, each host's slots filled" \
    h3:0 h1:1,2,3 h2:4,5
hjob --hosts h2:1,h1:3 --map-by slot "$client" nodes info
check_placement "--hosts with slots: the default -n is their sum" h2:0 h1:1,2,3
hjob --hosts h1:2,h2:2 -n 5 true
check_that "more ranks than the hosts' slots is a usage error" \
    '[ "$rc" -eq 2 ] && grep -q "^rdpmix-run: 5 ranks do not fit in the 4 slots of 2 hosts$" "$tmp/err"'

# the ranks' environment: the host's login environment (the agent gives
# PATH, HOME, TMPDIR), our OMPI_* settings, -x variables and UCX_*/RDPMIX_*
# settings; nothing else of rdpmix-run's environment
export HOSTS_TEST_NOT_FORWARDED=1 OMPI_MCA_rdpmix_test=fwd
hjob --hosts h1,h2 -n 2 --tag-output -x RDPMIX_TEST_X=x1 sh -c \
    'echo "$(hostname) ${HOSTS_TEST_NOT_FORWARDED:-unset} $OMPI_MCA_rdpmix_test $RDPMIX_TEST_X $UCX_NET_DEVICES ${TMPDIR%/rdpmixd.*}"'
unset HOSTS_TEST_NOT_FORWARDED OMPI_MCA_rdpmix_test
check_that "the ranks get the login environment, OMPI_*, -x and UCX_* settings, not the rest" \
    '[ "$rc" -eq 0 ] && [ "$(sort "$tmp/out" | tr "\n" " ")" = "[0] h1 unset fwd x1 eth0 $td [1] h2 unset fwd x1 eth0 $td " ]'

# --- Open MPI ----------------------------------------------------------------
if [ -x "$mpi_prog" ]; then
    hjob 120 --hosts h1,h2 -n 4 "$mpi_prog" 4
    check "Open MPI on 2 hosts (4 ranks) over TCP, our libpmix in every rank" \
        mpi_ranks_on h1 h1 h2 h2
    hjob 120 --hosts h1,h2,h3 -n 6 --map-by node "$mpi_prog" 6
    check "Open MPI on 3 hosts (6 ranks by node): MPI_Get_processor_name is each rank's host" \
        mpi_ranks_on h1 h2 h3 h1 h2 h3
else
    skip "Open MPI programs are not built (no mpicc)"
fi
check "the daemons removed their directories" tmpdir_clean

# --- failures ----------------------------------------------------------------
hjob --hosts h1,nosuch -n 2 hostname
check_that "a host the agent cannot reach: status 1 and one message naming it" \
    '[ "$rc" -eq 1 ] && grep -q "^rdpmix-run: cannot start the daemon of node 1 (nosuch): the launch agent exited with status 255; terminating the job$" "$tmp/err" && [ "$(grep -c "^rdpmix-run:" "$tmp/err")" -eq 1 ]'
check "... and nothing is left on the other host" hosts_idle
check "... nor on disk" tmpdir_clean

# an agent that exits at once, before reading the job secret from its
# stdin: still exactly one message (the secret was once written after
# the fork, and under load that write met a closed pipe: a second
# message, "cannot hand the secret ...: Broken pipe")
printf '#!/bin/sh\nexit 255\n' >"$tmp/gone-agent"
chmod +x "$tmp/gone-agent"
gone_ok=0
for i in 1 2 3 4 5; do
    netns_hosts_run h0 timeout -k 5 60 "$RUN" --launch-agent "$tmp/gone-agent" \
        --hosts h1,h2 -n 2 true >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" -eq 1 ] && [ "$(grep -c "^rdpmix-run:" "$tmp/err")" -eq 1 ] &&
        grep -q "the launch agent exited with status 255" "$tmp/err"; then
        gone_ok=$((gone_ok + 1))
    else
        echo "# run $i: exit $rc"; sed 's/^/# err: /' "$tmp/err"
    fi
done
check_that "an agent that exits before reading its stdin: status 1 and one message, 5 of 5 times" \
    '[ "$gone_ok" -eq 5 ]'

# a remote daemon killed outright: its ranks die with it, the other
# host's ranks are terminated, its directory is removed on its host
hjob_running h1,h2 4
dpid=$(host_pids h2 "rdpmixd .*--node-id 1 ")
kill -KILL $dpid
wait $pid
rc=$?
check_that "a remote daemon that dies fails the job, naming its host" \
    '[ "$rc" -eq 1 ] && grep -q "^rdpmix-run: node 1 (h2, daemon pid $dpid) died; terminating the job$" "$tmp/err"'
check "... no rank and no daemon is left on any host" hosts_idle
check "... and its directory was removed on its host" poll_for 30 tmpdir_clean

# rdpmix-run killed: each daemon loses its control connection and ends the
# job on its host
hjob_running h1,h2,h3 3
rpid=$(host_pids h0 "^$RUN ")
kill -KILL $rpid
wait $pid
check "rdpmix-run killed: nothing is left running on any host" hosts_idle
check "... nor on disk" poll_for 30 tmpdir_clean

# a host that never answers: h3's packets to h0 are lost, its daemon never
# connects; the start-up timeout ends the job
netns_hosts_cut h3
export RDPMIX_STARTUP_TIMEOUT=3
hjob --hosts h1,h3 -n 2 hostname
unset RDPMIX_STARTUP_TIMEOUT
check_that "a host that never connects back: the start-up timeout ends the job, saying how far it got" \
    '[ "$rc" -eq 1 ] && grep -q "^rdpmix-run: the job did not start within 3 seconds (1 of 2 daemons connected, 0 received the job, 0 ready); giving up" "$tmp/err"'
check "... and nothing is left on any host" hosts_idle
check "... nor on disk" tmpdir_clean

for h in h0 h1 h2 h3; do reap_pids=$(host_pids $h "rdpmix|$marker"); [ -n "$reap_pids" ] && kill -KILL $reap_pids; done
agent=$NETNS_AGENT
netns_hosts_down
check_that "no namespace and no agent script is left" \
    '! ip netns list | grep -q "^$tag-" && [ ! -e "$agent" ]'

finish
