#!/bin/sh
# test_run_slurm.sh - rdpmix-run inside a Slurm allocation, on a private
# three-node Slurm 22.05 cluster on this machine (slurm_cluster.sh): under
# salloc, rdpmix-run starts one rdpmixd per allocated node with one srun
# and the daemons run the engine between them.  Nodes, slots, host names
# and the default -n come from Slurm: every rank's host name is its Slurm
# node.  PMIx job info, fences and gets on 2 and 3 nodes, an Open MPI
# program, --launch slurm given explicitly, the ranks' environment, a
# daemon that dies, and nothing left behind (processes, Slurm steps,
# directories).
#
# Needs root, Debian's slurmctld slurmd slurm-client munge and UTS
# namespaces; otherwise skipped with the reason.  Every salloc runs under
# timeout(1); a step that fails is followed by a cluster reset.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"
. "${top_srcdir:-.}/tests/integ/ompi_env.sh"
. "${top_srcdir:-.}/tests/integ/slurm_cluster.sh"

client="$builddir/tests/integ/run_client"
mpi_prog="$builddir/tests/integ/mpi_basic"

slurm_cluster_usable || skip_all "$SLURM_CLUSTER_WHY"

# outside an allocation --launch slurm is a usage error
job 10 --launch slurm true
check_that "--launch slurm outside an allocation is a usage error" \
    '[ "$rc" -eq 2 ] && grep -q "not inside a Slurm allocation (SLURM_JOB_ID is not set)" "$tmp/err"'

cleanup() {
    slurm_cluster_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
SLURM_CLUSTER_NODES=3
export SLURM_CLUSTER_NODES
slurm_cluster_start 2>"$tmp/start.err" || {
    sed 's/^/# /' "$tmp/start.err"
    slurm_cluster_stop
    skip_all "the Slurm cluster did not start"
}

# the engine between the daemons, and Open MPI: TCP on loopback (the
# nodes are all this machine)
export UCX_TLS=tcp UCX_NET_DEVICES=lo
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export RUN_CLIENT_CHECK_HOSTNAME=1

# every check names the nodes it expects: an allocation starts once the
# previous job has left every node, or Slurm would give it the nodes
# still free (salloc -N 2 got n1 and n3 at load 15)
wait_idle() {
    slurm_cluster_idle 60 && return 0
    echo "# the nodes were not idle within 60 s:"
    sinfo -N 2>&1 | sed 's/^/#   /'
}

# alloc [SECS] SALLOC_OPTIONS... -- RDPMIX_RUN_ARGS...: rdpmix-run inside
# an allocation; sets rc, fills $tmp/out and $tmp/err; after a failure the
# next alloc starts from a reset cluster
need_reset=0
alloc() {
    secs=60
    case $1 in [0-9]*) secs=$1; shift ;; esac
    _opts=
    while [ "$1" != -- ]; do
        _opts="$_opts $1"
        shift
    done
    shift
    if [ "$need_reset" = 1 ]; then
        slurm_cluster_reset >/dev/null 2>&1
        need_reset=0
    fi
    wait_idle
    # shellcheck disable=SC2086 # salloc options are words
    timeout -k 5 "$secs" salloc -Q $_opts "$RUN" "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    [ "$rc" -eq 0 ] || need_reset=1
}

# no step of ours is running (srun, slurmstepd, daemons, ranks); Slurm
# ends a step's slurmstepd on its own time, which on a loaded machine
# can take long after the job ended.  Only this test's daemons count:
# any rdpmixd on the machine (another test's, another user's job) made
# this fail.  What is left is listed.
no_steps() {
    poll_for 60 '[ -z "$(slurm_cluster_ps)" ] && [ -z "$(our_daemons)" ]' \
        && return 0
    slurm_cluster_ps | sed 's/^/# step process left: /'
    for _p in $(our_daemons); do
        echo "# daemon left: $_p $({ tr '\0' ' ' <"/proc/$_p/cmdline"; } 2>/dev/null)"
    done
    return 1
}

# --- PMIx job info, fences and gets ------------------------------------------
alloc -N 2 -- -n 8 "$client" nodes fence
check_that "salloc -N 2, -n 8: every rank fences and gets every peer's data" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-7] of 8 fence ok$" "$tmp/out")" -eq 8 ]'
check_placement "salloc -N 2: node i is Slurm's i-th node, each rank's host name its node" \
    n1:0,1,2,3 n2:4,5,6,7

alloc -N 3 -n 5 -- "$client" nodes fence
check_that "salloc -N 3 -n 5: -n is Slurm's, every rank fences with every peer" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^rank [0-4] of 5 fence ok$" "$tmp/out")" -eq 5 ]'
check_placement "salloc -N 3 -n 5: the ranks on the nodes as Slurm spread its tasks (3,1,1)" \
    n1:0,1,2 n2:3 n3:4

alloc -N 3 -- --launch slurm -n 6 --map-by node "$client" nodes info
check_placement "--launch slurm given, --map-by node on 3 nodes" \
    n1:0,3 n2:1,4 n3:2,5

# the ranks' environment: the allocation's SLURM_* (as rdpmix-run has
# them), not the daemons' step's (SLURM_PROCID, SLURM_STEP_ID ...)
alloc -N 2 -n 3 -- --tag-output sh -c \
    'echo "$(hostname) ${SLURM_NTASKS:-none} ${SLURM_PROCID:-none} ${SLURM_STEP_ID:-none} ${SLURM_JOB_NUM_NODES:-none}"'
check_that "the ranks see the allocation's SLURM_* variables, not those of the daemons' step" \
    '[ "$rc" -eq 0 ] && [ "$(sort "$tmp/out" | tr "\n" " ")" = "[0] n1 3 none none 2 [1] n1 3 none none 2 [2] n2 3 none none 2 " ]'

# --nodes still simulates nodes on this machine inside an allocation
host=$(hostname -s)
alloc -N 2 -- --nodes 2 -n 2 --tag-output hostname
check_that "--nodes in an allocation still runs simulated nodes here" \
    '[ "$rc" -eq 0 ] && [ "$(sort "$tmp/out" | tr "\n" " ")" = "[0] $host-n0 [1] $host-n1 " ]'

# --- Open MPI ----------------------------------------------------------------
if [ -x "$mpi_prog" ]; then
    alloc 120 -N 2 -- -n 4 "$mpi_prog" 4
    check "Open MPI, salloc -N 2 -n 4: our libpmix in every rank, 2 ranks on each node" \
        mpi_ranks_on n1 n1 n2 n2
    alloc 120 -N 3 -- -n 6 "$mpi_prog" 6
    check "Open MPI, salloc -N 3 -n 6: MPI_Get_processor_name is each rank's Slurm node" \
        mpi_ranks_on n1 n1 n2 n2 n3 n3
else
    skip "Open MPI programs are not built (no mpicc)"
fi
check "no step is left running" no_steps
check "the daemons removed their directories" tmpdir_clean_within 10

# --- a daemon that dies ------------------------------------------------------
marker="sleep 8$$.25"
wait_idle
timeout -k 5 60 salloc -Q -N 2 "$RUN" -n 4 sh -c "$marker; true" \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
# (salloc, srun and the daemons may take long to start on a loaded machine)
poll_for 60 '[ "$(pgrep -fx "$marker" | wc -l)" -ge 4 ]'
dpid=$(our_daemons "--node-id-env SLURM_NODEID" | while read -r p; do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_NODEID=1" \
        && echo "$p"
done)
kill -KILL $dpid
wait $pid
rc=$?
check_that "a daemon that dies fails the job, naming its node" \
    '[ "$rc" -eq 1 ] && grep -q "^rdpmix-run: lost the connection to node 1 (n2, daemon pid $dpid); terminating the job$" "$tmp/err"'
check "... no rank is left" none_left "$marker"
check "... no step is left running" no_steps
check "... its directory was removed on its node" tmpdir_clean_within 10
reap "$marker"

# --- a daemon that dies in its shutdown ----------------------------------------
# The daemon of node 1 runs behind a wrapper that, once the daemon has
# ended normally, puts its directory back and aborts: as a daemon that
# dies in its shutdown before it removes its directory (UCX 1.13 aborted
# so in ucp_worker_destroy).  Its channel closed after SHUTDOWN as in a
# clean exit: the job ended with status 0 and the directory stayed.  The
# ranks wait (bounded) until the wrapper has seen the directory.
cat >"$tmp/dwrap" <<EOF
#!/bin/sh
[ "\$SLURM_NODEID" = 1 ] || exec "$builddir/src/run/rdpmixd" "\$@"
exec 3<&0
"$builddir/src/run/rdpmixd" "\$@" <&3 3<&- &
d=
i=0
while [ -z "\$d" ] && [ \$i -lt 600 ]; do
    d=\$(ls -d "\$TMPDIR"/rdpmixd.*/rdpmix.*.\$! 2>/dev/null)
    [ -n "\$d" ] || sleep 0.1
    i=\$((i + 1))
done
d=\${d%/*}
echo "\$d" >"$tmp/dwrap.dir"
wait \$!
[ -n "\$d" ] && mkdir -p "\$d/left"
kill -ABRT \$\$
EOF
chmod +x "$tmp/dwrap"
rm -f "$tmp/dwrap.dir"
RDPMIX_DAEMON="$tmp/dwrap" alloc -N 2 -- -n 2 sh -c \
    'i=0; while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' \
    sh "$tmp/dwrap.dir"
check_that "a daemon that dies in its shutdown fails the job, saying so" \
    '[ "$rc" -eq 1 ] && grep -q "^/.*/rdpmixd\.[^/]*$" "$tmp/dwrap.dir" &&
     grep -q "^rdpmix-run: the launch agent of the daemons (pid [0-9]*) .* after they were told to end: a daemon failed in its shutdown$" "$tmp/err"'
check "... no step is left running" no_steps
check "... and what it left is removed" tmpdir_clean_within 10

slurm_cluster_stop
left=$(slurm_cluster_leftovers)
check_that "nothing of the cluster is left" '[ -z "$left" ]'
[ -n "$left" ] && echo "$left" | sed 's/^/# /'

finish
