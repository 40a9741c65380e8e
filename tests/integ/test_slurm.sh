#!/bin/sh
# test_slurm.sh - rdpmix's library as the PMIx server inside Slurm 22.05's
# slurmstepd, under `srun --mpi=pmix`, on a private three-node Slurm cluster
# on this machine (tests/integ/slurm_cluster.sh): Open MPI programs with the
# full and with the direct modex, a PMIx Standard-API program checking its
# job info against what srun launched (tests/integ/slurm_client.c),
# pmix-bench, and PMIx groups and connect/disconnect across nodes, which
# run as Slurm's fences (tests/integ/run_client group host, connect all /
# subsets / ids; over processes on only some of the nodes they fail as not
# supported; rdpmix only).  Every rank proves which libpmix.so.2 it
# loaded, and the ranks prove which one their slurmstepd loaded.  No
# server's log may say that it called into Slurm from inside one of
# Slurm's callbacks (tests/integ/REVERTS.md says what that catches).
#
# Needs root, Debian's slurmctld slurmd slurm-client munge and UTS
# namespaces; otherwise the whole test is skipped with the reason.  Environment:
#   RDPMIX_TEST_SLURM_SERVER=openpmix  run the same steps with OpenPMIx as
#       the server and client library (nothing preloaded), to check the
#       harness itself; default rdpmix
#   RDPMIX_TEST_SLURM_STEP_TIMEOUT     bound of one step in seconds (30)
#   RDPMIX_TEST_SLURM_BUDGET           bound of all steps together (210);
#       steps that no longer fit fail as not run
#   RDPMIX_TEST_SLURM_STEPD_ENV        VAR=value words for slurmstepd's
#       environment (the server's RDPMIX_* settings; its log is lost:
#       slurmstepd keeps its stderr to itself)
#   SLURM_CLUSTER_KEEP=1               keep the cluster's directory (logs)
#   RDPMIX_TEST_SLURM_ASAN=0           skip the test in a sanitizer build
#       (see below)
# Every step runs under timeout(1); a step that hangs fails, and its
# slurmstepd and tasks are killed before the next step.
srcdir=${top_srcdir:-$(dirname "$0")/../..}
builddir=$(cd "${top_builddir:-.}" && pwd)
. "$srcdir/tests/integ/ompi_env.sh"
. "$srcdir/tests/integ/slurm_cluster.sh"

server=${RDPMIX_TEST_SLURM_SERVER:-rdpmix}
step_secs=${RDPMIX_TEST_SLURM_STEP_TIMEOUT:-30}
budget=${RDPMIX_TEST_SLURM_BUDGET:-210}
ourlib="$builddir/.libs"
mpi_prog="$builddir/tests/integ/mpi_basic"
client="$builddir/tests/integ/slurm_client"
bench="$builddir/bench/pmix-bench"
run_client="$builddir/tests/integ/run_client"

skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

# --- can this machine run the cluster? -------------------------------------
slurm_cluster_usable || skip_all "$SLURM_CLUSTER_WHY"
plugin=$(ls /usr/lib/*/slurm-wlm/mpi_pmix.so 2>/dev/null | head -n 1)
[ -n "$plugin" ] || skip_all "Slurm's mpi/pmix plugin is not installed"
[ -x "$client" ] && [ -x "$bench" ] || skip_all "slurm_client or pmix-bench not built"

case $server in
    rdpmix)
        preload="$ourlib/libpmix.so.2"
        client_opts=
        # A sanitizer build's library brings GCC 12's ASan runtime into
        # slurmstepd, whose allocator is not fork-safe: slurmstepd forks
        # its tasks while its other threads (ours among them) allocate, and
        # a forked child can block for ever on an allocator mutex before it
        # execs.  slurm_cluster.sh turns the quarantine off in slurmstepd,
        # which made that go from 2 in 10 steps to none in 133; the
        # residue is rare, but it is why this can be switched off
        if ldd "$preload" 2>/dev/null | grep -q libasan \
            && [ "${RDPMIX_TEST_SLURM_ASAN:-1}" = 0 ]; then
            skip_all "sanitizer build and RDPMIX_TEST_SLURM_ASAN=0"
        fi
        ;;
    openpmix)
        # nothing preloaded: the plugin dlopens OpenPMIx's library, and the
        # ranks' loader finds OpenPMIx's libpmix.so.2
        preload=
        client_opts=--openpmix
        ;;
    *)
        echo "test_slurm.sh: RDPMIX_TEST_SLURM_SERVER is rdpmix or openpmix" >&2
        exit 2
        ;;
esac

# --- TAP ---------------------------------------------------------------------
tnum=0
tfail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdpmix-test-slurm.XXXXXX")

ok() {
    tnum=$((tnum + 1))
    echo "ok $tnum - $1"
}

# a failed check marks its step bad: the step's output and the daemons'
# logs are shown, and the cluster is reset, once its checks are done
not_ok() {
    tnum=$((tnum + 1))
    tfail=1
    step_bad=1
    echo "not ok $tnum - $1"
}

skip() {
    tnum=$((tnum + 1))
    echo "ok $tnum # SKIP $1"
}

# check_that DESCRIPTION 'SHELL CONDITION'
check_that() {
    if eval "$2"; then ok "$1"; else not_ok "$1"; fi
}

cleanup() {
    slurm_cluster_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the library a process loaded --------------------------------------------
is_ours() {
    [ "$1" = "$ourlib/libpmix.so.2.0.0" ] || [ "$1" = "$ourlib/libpmix.so.2" ]
}

# is_expected PATH: the libpmix.so.2 the ranks must load with this server
is_expected() {
    case $server in
        rdpmix) is_ours "$1" ;;
        openpmix) [ "$1" != none ] && ! is_ours "$1" ;;
    esac
}

# all_expected FILE: every "libpmix=PATH" in FILE is the expected library
all_expected() {
    _libs=$(sed -n 's/.* libpmix=\([^ ]*\).*/\1/p' "$1" | sort -u)
    [ -n "$_libs" ] || return 1
    for _l in $_libs; do
        is_expected "$_l" || return 1
    done
    return 0
}

# --- steps -------------------------------------------------------------------
deadline=$(($(date +%s) + budget))
cluster_ok=no

# show FILE...: the files, '#'-prefixed, at most 30 lines each
show() {
    for _f in "$@"; do
        [ -s "$_f" ] && head -n 30 "$_f" | sed "s|^|# ${_f##*/}: |"
    done
    return 0
}

# hang_report: a hung step's processes and, from gdb, every thread's
# stack; and the tail of every server log the step wrote
hang_report() {
    echo "processes of the hung step (PID, state, wait channel, command):"
    slurm_cluster_ps
    if command -v gdb >/dev/null 2>&1; then
        for _p in $(slurm_cluster_ps | cut -d' ' -f1); do
            echo "stacks of $_p:"
            timeout 20 gdb -batch -nx -p "$_p" -ex 'thread apply all bt 12' \
                2>/dev/null | grep -E '^(Thread|#)' | head -n 60
        done
    fi
    for _f in $(find "$tmp" -maxdepth 1 -name 'server.*' -newer "$tmp/logmark"); do
        echo "last lines of ${_f##*/}:"
        tail -n 15 "$_f"
    done
}

# step DESCRIPTION COMMAND...: run one step, bounded; sets rc (124 or 137:
# it hung) and secs, fills $tmp/out and $tmp/err.  Returns 1 without
# running it when the cluster is gone or the budget is spent.
step() {
    _desc=$1
    shift
    : >"$tmp/out"
    : >"$tmp/err"
    _left=$((deadline - $(date +%s)))
    if [ "$cluster_ok" != yes ]; then
        rc=none
        echo "$_desc: not run, the cluster is not usable" >"$tmp/err"
        return 1
    fi
    if [ "$_left" -lt 10 ]; then
        rc=none
        echo "$_desc: not run, the test's ${budget} s are spent" >"$tmp/err"
        return 1
    fi
    _bound=$step_secs
    [ "$_left" -lt "$_bound" ] && _bound=$_left
    # where each daemon log ends now: a failure shows what the step added
    for _f in "$SLURM_CLUSTER_DIR"/log/*.log; do
        [ -f "$_f" ] && echo "$(wc -c <"$_f") $_f"
    done >"$tmp/logmark"
    : >"$tmp/hang"
    _t0=$(date +%s%N)
    # the outer timeout is only a backstop: a hang is caught below while
    # its processes still hang, so their stacks show where
    timeout -k 5 "$((_bound + 30))" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
    _pid=$!
    _end=$(($(date +%s) + _bound))
    while kill -0 "$_pid" 2>/dev/null && [ "$(date +%s)" -lt "$_end" ]; do
        sleep 0.2
    done
    if kill -0 "$_pid" 2>/dev/null; then
        hang_report >"$tmp/hang" 2>&1
        kill -TERM "$_pid" 2>/dev/null
        wait "$_pid"
        rc=124
    else
        wait "$_pid"
        rc=$?
    fi
    secs=$(awk -v a="$_t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    case $rc in
        124 | 137) echo "# $_desc: hung, killed after $_bound s" ;;
        *) echo "# $_desc: exit $rc after $secs s" ;;
    esac
    return 0
}

# step_logs: what slurmctld and the slurmds logged during the step, and
# any sanitizer report from slurmstepd
step_logs() {
    while read -r _size _f; do
        tail -c +$((_size + 1)) "$_f" | head -n 40 \
            | sed "s|^|# ${_f##*/}: |"
    done <"$tmp/logmark"
    for _f in "$SLURM_CLUSTER_DIR"/log/asan.stepd* \
        "$SLURM_CLUSTER_DIR"/log/ubsan.stepd*; do
        [ -s "$_f" ] && show "$_f"
    done
    return 0
}

# after a failed step: its output, the daemons' logs, and a clean cluster
after_failure() {
    show "$tmp/out" "$tmp/err"
    [ "$rc" = none ] && return 0
    case $rc in
        124 | 137)
            sed 's/^/#   /' "$tmp/hang"
            echo "# processes the step left (PID, state, wait channel, command):"
            slurm_cluster_ps | sed 's/^/#   /'
            ;;
    esac
    step_logs
    _t0=$(date +%s)
    if ! slurm_cluster_reset 2>"$tmp/reset.err"; then
        show "$tmp/reset.err"
        echo "# the cluster did not recover: the remaining steps are not run"
        cluster_ok=no
    fi
    echo "# cluster reset in $(($(date +%s) - _t0)) s"
}

# end_step: after the checks of a step
end_step() {
    [ "$step_bad" = 1 ] && after_failure
    step_bad=0
}

# mpi_step NODES NPROCS full|direct
mpi_step() {
    _what="Open MPI, srun -N $1 -n $2, $3 modex"
    if [ ! -x "$mpi_prog" ]; then
        skip "$_what: tests/integ/mpi_basic is not built (no mpicc)"
        skip "$_what: every rank loaded $server's libpmix"
        return
    fi
    if [ "$3" = direct ]; then
        _env="OMPI_MCA_pmix_base_async_modex=1 OMPI_MCA_pmix_base_collect_data=0"
    else
        _env=
    fi
    np=$2
    # shellcheck disable=SC2086 # _env is words
    step "$_what" env $_env srun --mpi=pmix -N "$1" -n "$np" "$mpi_prog" "$np"
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    check_that "$_what: MPI_Init, Allreduce, Allgather, Barrier, ring, Finalize ($oks of $np ranks ok)" \
        '[ "$rc" = 0 ] && [ "$oks" -eq "$np" ]'
    check_that "$_what: every rank loaded $server's libpmix" \
        '[ "$oks" -eq "$np" ] && all_expected "$tmp/out"'
    end_step
}

# stepd_loaded FILE: every rank's parent is slurmstepd, and it mapped
# rdpmix's library (rdpmix) or not (openpmix)
stepd_loaded() {
    sed -n 's/.* server=\([^ ]*\) parent=\(.*\)/\2 \1/p' "$1" | sort -u >"$tmp/servers"
    [ -s "$tmp/servers" ] || return 1
    while read -r _parent _libs; do
        [ "$_parent" = slurmstepd ] || return 1
        _mine=no
        for _l in $(echo "$_libs" | tr ',' ' '); do
            is_ours "$_l" && _mine=yes
        done
        case $server in
            rdpmix) [ "$_mine" = yes ] || return 1 ;;
            openpmix) [ "$_mine" = no ] || return 1 ;;
        esac
    done <"$tmp/servers"
    return 0
}

# client_step NODES NPROCS [SRUN OPTION...]
client_step() {
    nn=$1
    np=$2
    shift 2
    _what="PMIx client, srun -N $nn -n $np${1:+ $*}"
    # shellcheck disable=SC2086 # client_opts is words
    step "$_what" srun --mpi=pmix -N "$nn" -n "$np" "$@" "$client" \
        $client_opts "$np" "$nn"
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    check_that "$_what: job size, node ids, host names, local peers, local and node ranks, appnum; put, commit, fence, get of every peer ($oks of $np ranks ok)" \
        '[ "$rc" = 0 ] && [ "$oks" -eq "$np" ]'
    check_that "$_what: every rank loaded $server's libpmix" \
        '[ "$oks" -eq "$np" ] && all_expected "$tmp/out"'
    check_that "$_what: slurmstepd loaded $server's libpmix on every node" \
        '[ "$oks" -eq "$np" ] && stepd_loaded "$tmp/out"'
    end_step
}

# bench_loaded DIR N: N processes wrote a loader log in DIR, and every one
# loaded the expected libpmix.so.2 and no other
bench_loaded() {
    [ "$(ls "$1" | wc -l)" -eq "$2" ] || return 1
    for _f in "$1"/*; do
        _l=$(sed -n 's/.*calling init: \(.*\/libpmix\.so[^ ]*\)$/\1/p' "$_f")
        [ "$(echo "$_l" | wc -l)" -eq 1 ] && is_expected "$_l" || return 1
    done
    return 0
}

# bench_step NODES NPROCS collect|direct
bench_step() {
    _what="pmix-bench -m $3, srun -N $1 -n $2"
    np=$2
    ld="$tmp/ld.$3"
    mkdir -p "$ld"
    # the loader's log of every rank (one file per process) shows which
    # libpmix.so.2 it loaded
    step "$_what" srun --mpi=pmix -N "$1" -n "$2" \
        env LD_DEBUG=files LD_DEBUG_OUTPUT="$ld/rank" \
        "$bench" -m "$3" -s 1024 -k 5 -p fence,modex
    # the six phases of the modex (-p: no connect or group phases)
    phases=$(grep -c "^[^,]*,$np,1024," "$tmp/out")
    check_that "$_what: every phase measured and every value verified ($phases phases)" \
        '[ "$rc" = 0 ] && [ "$phases" -eq 6 ]'
    check_that "$_what: every rank loaded $server's libpmix" \
        'bench_loaded "$ld" "$np"'
    end_step
}

# run_client_step NODES NPROCS WANT ARGS...: tests/integ/run_client ARGS
# on every rank; each must print "rank R WANT" (run_client_group.c and
# run_client_connect.c say what each mode checks).  Under Slurm groups
# and connects across nodes have no engine and no host upcall: they run
# as Slurm's fence_nb (group_host.c, conndisc.c, slurmfence.h)
run_client_step() {
    nn=$1
    np=$2
    want=$3
    shift 3
    _what="run_client $*, srun -N $nn -n $np"
    if [ "$server" != rdpmix ] || [ ! -x "$run_client" ]; then
        skip "$_what: rdpmix's own test client"
        return
    fi
    step "$_what" srun --mpi=pmix -N "$nn" -n "$np" "$run_client" "$@"
    oks=$(grep -c "^rank [0-9]* $want\$" "$tmp/out")
    check_that "$_what: every rank's checks passed ($oks of $np ranks)" \
        '[ "$rc" = 0 ] && [ "$oks" -eq "$np" ]'
    end_step
}

# group_step NODES NPROCS: run_client group host, and every rank printed
# the same context id for hA
group_step() {
    run_client_step "$1" "$2" "group host ok" group host
    [ "$server" = rdpmix ] || return 0
    cids=$(sed -n 's/^rank [0-9]* group host cid \([0-9]*\)$/\1/p' "$tmp/out" | sort -u)
    ncid=$(sed -n '/^rank [0-9]* group host cid /p' "$tmp/out" | wc -l)
    gnp=$2
    check_that "group host, srun -N $1 -n $2: all $2 ranks printed one context id ($ncid lines, ids: $(echo $cids))" \
        '[ "$ncid" -eq "$gnp" ] && [ "$(echo "$cids" | wc -l)" -eq 1 ] && [ -n "$cids" ]'
}

# connect_die_step NODES NPROCS L: rank L exits without finalizing while
# the others connect the whole job; under Slurm too every other rank's
# connect fails with PROC_TERM_WO_SYNC (-200) instead of waiting (its
# server's frame carries the failure through Slurm's ring: conndisc.c).
# L must share its node: the step of a node whose last task ended is
# gone, and Slurm's ring then waits for it (docs/status.md)
connect_die_step() {
    _what="run_client connect die $3, srun -N $1 -n $2"
    if [ "$server" != rdpmix ] || [ ! -x "$run_client" ]; then
        skip "$_what: rdpmix's own test client"
        return
    fi
    step "$_what" srun --mpi=pmix -N "$1" -n "$2" "$run_client" connect die "$3"
    dies=$(grep -c "^rank [0-9]* connect die -200\$" "$tmp/out")
    others=$(($2 - 1))
    check_that "$_what: the other ranks' connect failed with PROC_TERM_WO_SYNC ($dies of $others)" \
        '[ "$rc" != 124 ] && [ "$rc" != 137 ] && [ "$dies" -eq "$others" ]'
    end_step
}

# pnet_step NODES NPROCS TAG: every rank prints the opa key of its
# environment and the PMIX_CREDENTIAL it Gets (run_client pnet); all agree,
# are HMAC-SHA256(site secret, label || nspace) as computed here by
# Python, and another job's credential is refused.  The key goes to
# $tmp/key.TAG.
pnet_step() {
    _what="pnet: srun -N $1 -n $2, the opa key derived on every node"
    if [ "$server" != rdpmix ] || [ ! -x "$run_client" ]; then
        skip "$_what: rdpmix only"
        return
    fi
    pnp=$2
    rm -f "$tmp/ns.$3"
    echo "slurm.pmix.0.0" >"$tmp/ns.none"
    step "$_what" srun --mpi=pmix -N "$1" -n "$2" /bin/sh -c \
        'echo "env key=$OMPI_MCA_orte_precondition_transports"; exec "$0" "$@"' \
        "$run_client" pnet "$tmp/ns.$3" "$tmp/ns.none"
    envk=$(sed -n 's/^env key=//p' "$tmp/out" | sort -u)
    gotk=$(sed -n 's/^rank=[0-9]* cred=\([^ ]*\) .*/\1/p' "$tmp/out" | sort -u)
    nget=$(grep -c "^rank=[0-9]* cred=" "$tmp/out")
    want=$(python3 -c '
import hashlib, hmac, sys
secret = open(sys.argv[1], "rb").read()
msg = b"rdpmix pnet opa job key\n" + open(sys.argv[2]).read().strip().encode()
d = hmac.new(secret, msg, hashlib.sha256).hexdigest()
print(d[:16] + "-" + d[16:32])' "$tmp/opa.secret" "$tmp/ns.$3" 2>/dev/null)
    echo "$envk" >"$tmp/key.$3"
    check_that "$_what: all $2 ranks' environment and PMIx_Get agree ($nget ranks)" \
        '[ "$rc" = 0 ] && [ "$nget" -eq "$pnp" ] && [ -n "$envk" ] &&
         [ "$(echo "$envk" | wc -l)" -eq 1 ] && [ "$envk" = "$gotk" ]'
    check_that "$_what: the key is HMAC-SHA256 of the site secret and the nspace" \
        '[ -n "$want" ] && [ "$envk" = "$want" ]'
    check_that "$_what: another job's credential is refused" \
        '[ "$(grep -c "other_cred=NO-PERMISSIONS" "$tmp/out")" -eq "$pnp" ]'
    end_step
}

# --- the run -----------------------------------------------------------------
echo "# server library: $server${preload:+ ($preload preloaded into slurmstepd)}"
SLURM_CLUSTER_STEPD_ENV=${RDPMIX_TEST_SLURM_STEPD_ENV:-}
if [ "$server" = rdpmix ]; then
    # slurmstepd keeps its stderr to itself: the server logs to a file per
    # node and process instead, where its warnings can be checked
    SLURM_CLUSTER_STEPD_ENV="RDPMIX_LOG_FILE=$tmp/server.%h.%p $SLURM_CLUSTER_STEPD_ENV"
    # pnet without a head-node step: every node derives the job's opa key
    # from this site secret and the nspace (docs/pnet.md)
    head -c 32 /dev/urandom >"$tmp/opa.secret"
    chmod 600 "$tmp/opa.secret"
    SLURM_CLUSTER_STEPD_ENV="RDPMIX_PNET=opa RDPMIX_PNET_OPA_SECRET_FILE=$tmp/opa.secret $SLURM_CLUSTER_STEPD_ENV"
fi
SLURM_CLUSTER_NODES=3
t_start=$(date +%s)
if slurm_cluster_start "$preload" 2>"$tmp/start.err"; then
    cluster_ok=yes
    ok "a three-node Slurm cluster started ($(($(date +%s) - t_start)) s): $SLURM_CLUSTER_DIR"
else
    not_ok "a three-node Slurm cluster started"
    show "$tmp/start.err"
    slurm_cluster_logs 15
fi
step_bad=0

# the tasks' files (Open MPI's session directory and shared-memory
# segments) stay in the cluster's directory
if [ "$cluster_ok" = yes ]; then
    export TMPDIR="$SLURM_CLUSTER_DIR/tasktmp"
    export OMPI_MCA_btl_vader_backing_directory="$SLURM_CLUSTER_DIR/tasktmp"
fi
# loopback only, so the test never touches another interface
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=lo UCX_TLS=self,sm,tcp
if [ "$server" = rdpmix ]; then
    # the ranks load our library (Open MPI's and pmix-bench's dependency)
    LD_LIBRARY_PATH="$ourlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
fi

# Each program on two nodes first: if steps hang, the budget still covers
# one step of every kind before it is spent
client_step 2 4
if [ "$server" = rdpmix ]; then
    # Slurm's contradictory node ids and int appnum were accepted with a
    # warning (RDPMIX_LOG_FILE), on both nodes
    for n in n1 n2; do
        check_that "the server on $n warned of Slurm's contradictory node ids and int appnum" \
            'cat "$tmp"/server.$n.* 2>/dev/null | grep -q "contradict its hostnames" \
             && cat "$tmp"/server.$n.* | grep -q "registers pmix.appnum as PMIX_INT"'
    done
fi
# pnet: two steps, each derives one key on both nodes; they differ
pnet_step 2 4 a
pnet_step 2 4 b
if [ "$server" = rdpmix ]; then
    check_that "pnet: two steps got different keys" \
        '[ -s "$tmp/key.a" ] && [ -s "$tmp/key.b" ] &&
         [ "$(cat "$tmp/key.a")" != "$(cat "$tmp/key.b")" ]'
    check_that "pnet: no key in the servers' logs" \
        '! grep -qF "$(cat "$tmp/key.a")" "$tmp"/server.* &&
         ! grep -qF "$(cat "$tmp/key.b")" "$tmp"/server.*'
fi
# groups and connect across two nodes through Slurm's fence
group_step 2 4
run_client_step 2 4 "connect all ok" connect all
run_client_step 2 4 "connect subsets ok" connect subsets
run_client_step 2 4 "connect ids ok" connect ids
connect_die_step 2 4 0
mpi_step 2 4 full
mpi_step 2 4 direct
bench_step 2 8 collect
client_step 1 8
mpi_step 1 8 full
mpi_step 1 8 direct
client_step 2 8
mpi_step 2 8 full
mpi_step 2 8 direct
client_step 2 8 --distribution=cyclic
group_step 2 8
bench_step 2 8 direct
# one rank per node on three nodes: a group or a connect over every rank
# runs as Slurm's fence, one over ranks 0 and 2 only (n1 and n3) fails at
# once (slurm_client)
client_step 3 3
run_client_step 3 3 "connect all ok" connect all
client_step 3 6 --distribution=cyclic
if [ "$server" = rdpmix ]; then
    # the server never called into Slurm from inside one of Slurm's
    # callbacks, which its marker reports whether or not that function of
    # Slurm's takes a lock (docs/design.md, "Calls into the host")
    inside=$(grep -h "from inside its .* callback" "$tmp"/server.* 2>/dev/null)
    check_that "no server called into Slurm from inside one of Slurm's callbacks" \
        '[ -z "$inside" ]'
    [ -n "$inside" ] && echo "$inside" | sed 's/^.* warn: //; s/ (\.\..*$//' \
        | sort | uniq -c | sed 's/^/# /'
fi

# --- teardown ----------------------------------------------------------------
t_stop=$(date +%s)
slurm_cluster_stop
left=$(slurm_cluster_leftovers)
check_that "the cluster stopped and left nothing behind ($(($(date +%s) - t_stop)) s)" \
    '[ -z "$left" ]'
[ -n "$left" ] && echo "$left" | sed 's/^/# left: /'
echo "# total $(($(date +%s) - t_start)) s"
echo "1..$tnum"
exit $tfail
