#!/bin/bash
# launch_compare.sh - one program under several launchers and PMIx servers,
# alternating, on this machine: rdpmix-run vs mpirun (OpenPMIx), and on a
# private Slurm cluster (tests/integ/slurm_cluster.sh) srun --mpi=pmix with
# OpenPMIx vs with rdpmix's library in slurmstepd, and rdpmix-run inside an
# allocation.  Every launch runs under timeout; hangs and failures are
# counted, never fatal.  Raw CSV for summarize_launch.py.
set -u

usage() {
    cat <<EOF
usage: launch_compare.sh [options]
  -p PROG     hello (bench/mpi-hello: MPI_Init + MPI_Finalize; the wall
              time counts) or bench (pmix-bench: its phases and the wall
              time); default bench
  -S STACKS   any of: rdpmix openpmix (one node, this machine)
              rdpmix-base (rdpmix-run of the build in BASEDIR: paired
              before/after runs) rdpmix-allmtl (this build with
              RDPMIX_OMPI_SKIP_MTL=0: Open MPI loads its MTLs again)
              srun-openpmix srun-rdpmix alloc-rdpmix (Slurm cluster)
              alloc-rdpmix-base (rdpmix-run of BASEDIR's build in the
              allocation: paired before/after runs there);
              default "rdpmix openpmix"
  -n "LIST"   process counts (default "2 4 8 16 32 64")
  -N "LIST"   node counts for the Slurm stacks (default "1 2"); the
              one-node stacks run once per N whatever this says
  -s "LIST"   pmix-bench payload sizes (default "8"); ignored for hello
  -k K        pmix-bench barrier repetitions (default 5)
  -L          pmix-bench -l: untimed barriers between timed phases (also
              between the modex fence and its gets), for every stack
  -l L        launches per stack and configuration (default 5)
  -t SECONDS  timeout per launch (default 120)
  -o FILE     raw CSV (default launch-raw-<date>.csv); outcomes in
              FILE.launches.csv
environment: BUILDDIR (rdpmix's build directory, default: the current
  directory if it has src/run/rdpmix-run, else _build next to this script);
  BASEDIR (another build of rdpmix, for the rdpmix-base stack; its own
  bench/mpi-hello or pmix-bench is not used: every stack runs BUILDDIR's)
EOF
}

prog=bench
stacks="rdpmix openpmix"
nlist="2 4 8 16 32 64"
nodelist="1 2"
slist="8"
reps=5
line_up=no
launches=5
tmo=120
out=""
while getopts "p:S:n:N:s:k:Ll:t:o:h" opt; do
    case $opt in
    p) prog=$OPTARG ;;
    S) stacks=$OPTARG ;;
    n) nlist=$OPTARG ;;
    N) nodelist=$OPTARG ;;
    s) slist=$OPTARG ;;
    k) reps=$OPTARG ;;
    L) line_up=yes ;;
    l) launches=$OPTARG ;;
    t) tmo=$OPTARG ;;
    o) out=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
die() {
    echo "launch_compare.sh: $*" >&2
    exit 1
}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
if [ -z "${BUILDDIR:-}" ]; then
    if [ -x src/run/rdpmix-run ]; then BUILDDIR=$PWD; else BUILDDIR=$top/_build; fi
fi
BUILDDIR=$(cd "$BUILDDIR" && pwd) || die "no build directory"
RUN=$BUILDDIR/src/run/rdpmix-run
LIBDIR=$BUILDDIR/.libs
case $prog in
hello) exe=$BUILDDIR/bench/mpi-hello ;;
bench) exe=$BUILDDIR/bench/pmix-bench ;;
*) die "-p is hello or bench" ;;
esac
[ -x "$exe" ] || die "$exe not built"
[ -x "$RUN" ] && [ -e "$LIBDIR/libpmix.so.2" ] || die "rdpmix is not built in $BUILDDIR"
[ "$prog" = hello ] && slist=0

[ -n "$out" ] || out=launch-raw-$(date +%Y%m%d-%H%M%S).csv
outl=${out%.csv}.launches.csv
logdir=${out%.csv}.logs
mkdir -p "$logdir" || die "cannot create $logdir"
echo "stack,launch,impl,N,nodes,S,phase,reps,min_us,median_us,max_us" >"$out"
echo "stack,launch,N,nodes,S,result,rc,wall_s" >"$outl"

# loopback only, for every stack (PEERS.md)
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export UCX_NET_DEVICES=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# whatever selects a libpmix.so.2 is set per stack below
unset LD_LIBRARY_PATH LD_PRELOAD

want_slurm=no
for st in $stacks; do
    case $st in
    rdpmix | openpmix | rdpmix-allmtl) ;;
    alloc-rdpmix-base)
        want_slurm=yes
        [ -n "${BASEDIR:-}" ] && [ -x "$BASEDIR/src/run/rdpmix-run" ] \
            || die "alloc-rdpmix-base needs BASEDIR, a build of rdpmix"
        BASEDIR=$(cd "$BASEDIR" && pwd) ;;
    rdpmix-base)
        [ -n "${BASEDIR:-}" ] && [ -x "$BASEDIR/src/run/rdpmix-run" ] \
            || die "rdpmix-base needs BASEDIR, a build of rdpmix"
        BASEDIR=$(cd "$BASEDIR" && pwd) ;;
    srun-openpmix | srun-rdpmix | alloc-rdpmix) want_slurm=yes ;;
    *) die "unknown stack $st" ;;
    esac
done
if [ $want_slurm = yes ]; then
    set +u # slurm_cluster.sh reads optional settings
    . "$top/tests/integ/slurm_cluster.sh"
    SLURM_CLUSTER_NODES=$(echo "$nodelist" | tr ' ' '\n' | sort -n | tail -1)
    export SLURM_CLUSTER_NODES
    slurm_cluster_start || die "cannot start the Slurm cluster"
    trap 'slurm_cluster_stop' EXIT
    echo "launch_compare.sh: Slurm cluster of $SLURM_CLUSTER_NODES nodes in $SLURM_CLUSTER_DIR" >&2
fi

# the implementation a stack's ranks must load (PMIx_Get_version's start)
impl_of() {
    case $1 in
    openpmix | srun-openpmix) echo OpenPMIx ;;
    *) echo rdpmix ;;
    esac
}

launch_id=0
run_one() {
    local st=$1 n=$2 nodes=$3 s=$4 log outf t0 t1 rc res wall args
    launch_id=$((launch_id + 1))
    log=$logdir/$st-n$n-N$nodes-s$s-$launch_id.err
    outf=$logdir/$st-n$n-N$nodes-s$s-$launch_id.out
    if [ "$prog" = bench ]; then
        # its impl column names the library it loaded (PMIx_Get_version)
        args=("$exe" -s "$s" -k "$reps" --no-header)
        [ "$line_up" = yes ] && args+=(-l)
    else
        args=("$exe")
    fi
    case $st in
    srun-openpmix) slurm_cluster_use ;;
    srun-rdpmix) slurm_cluster_use "$LIBDIR/libpmix.so.2" ;;
    esac
    t0=$(date +%s.%N)
    case $st in
    rdpmix)
        env LD_LIBRARY_PATH="$LIBDIR" timeout -k 5 "$tmo" \
            "$RUN" -n "$n" "${args[@]}" >"$outf" 2>"$log" ;;
    rdpmix-allmtl)
        env LD_LIBRARY_PATH="$LIBDIR" RDPMIX_OMPI_SKIP_MTL=0 \
            timeout -k 5 "$tmo" "$RUN" -n "$n" "${args[@]}" \
            >"$outf" 2>"$log" ;;
    rdpmix-base)
        env LD_LIBRARY_PATH="$BASEDIR/.libs" timeout -k 5 "$tmo" \
            "$BASEDIR/src/run/rdpmix-run" -n "$n" "${args[@]}" \
            >"$outf" 2>"$log" ;;
    openpmix)
        timeout -k 5 "$tmo" mpirun --oversubscribe --bind-to none \
            -np "$n" "${args[@]}" >"$outf" 2>"$log" ;;
    srun-openpmix)
        env TMPDIR="$SLURM_CLUSTER_DIR/tasktmp" timeout -k 5 "$tmo" \
            srun --mpi=pmix -N "$nodes" -n "$n" "${args[@]}" \
            >"$outf" 2>"$log" ;;
    srun-rdpmix)
        env TMPDIR="$SLURM_CLUSTER_DIR/tasktmp" LD_LIBRARY_PATH="$LIBDIR" \
            timeout -k 5 "$tmo" srun --mpi=pmix -N "$nodes" -n "$n" \
            "${args[@]}" >"$outf" 2>"$log" ;;
    alloc-rdpmix)
        env TMPDIR="$SLURM_CLUSTER_DIR/tasktmp" LD_LIBRARY_PATH="$LIBDIR" \
            timeout -k 5 "$tmo" salloc -Q -N "$nodes" "$RUN" -n "$n" \
            "${args[@]}" >"$outf" 2>"$log" ;;
    alloc-rdpmix-base)
        env TMPDIR="$SLURM_CLUSTER_DIR/tasktmp" \
            LD_LIBRARY_PATH="$BASEDIR/.libs" timeout -k 5 "$tmo" \
            salloc -Q -N "$nodes" "$BASEDIR/src/run/rdpmix-run" -n "$n" \
            "${args[@]}" >"$outf" 2>"$log" ;;
    esac
    rc=$?
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        res=hang
        case $st in srun-* | alloc-*) slurm_cluster_reset ;; esac
    elif [ $rc -ne 0 ]; then
        res=fail
    elif [ "$prog" = bench ] && [ "$(grep -c "^[^#,]*,$n,$s," "$outf")" -lt 6 ]; then
        res=nooutput
    elif [ "$prog" = bench ] \
        && grep -v '^#' "$outf" | grep -qv "^$(impl_of "$st")"; then
        res=wronglib # a rank did not load the stack's library
    elif [ "$prog" = hello ] && [ "$(grep -c '^hello from rank' "$outf")" -ne "$n" ]; then
        res=nooutput
    else
        res=ok
    fi
    echo "$st,$launch_id,$n,$nodes,$s,$res,$rc,$wall" >>"$outl"
    if [ $res = ok ]; then
        if [ "$prog" = bench ]; then
            grep "^[^#,]*,$n,$s," "$outf" | awk -F, -v p="$st,$launch_id" \
                -v nodes="$nodes" \
                '{ printf "%s,%s,%s,%s,%s", p, $1, $2, nodes, $3
                   for (i = 4; i <= NF; i++) printf ",%s", $i
                   printf "\n" }' >>"$out"
        fi
        awk -v p="$st,$launch_id,$(impl_of "$st"),$n,$nodes,$s" -v w="$wall" \
            'BEGIN { us = w * 1e6; printf "%s,wall,1,%.1f,%.1f,%.1f\n", p, us, us, us }' >>"$out"
        rm -f "$outf" "$log"
    fi
    printf 'N=%-3s nodes=%s S=%-6s %-14s #%-4s %-8s %6.2fs\n' "$n" "$nodes" \
        "$s" "$st" "$launch_id" "$res" "$wall" >&2
}

for n in $nlist; do
    for nodes in $nodelist; do
        # the one-node stacks run once per N, with the first node count
        sts=()
        for st in $stacks; do
            case $st in
            rdpmix | openpmix | rdpmix-base | rdpmix-allmtl)
                [ "$nodes" = "$(echo $nodelist | cut -d' ' -f1)" ] && sts+=("$st") ;;
            *)
                [ "$n" -ge "$nodes" ] && sts+=("$st") ;;
            esac
        done
        [ ${#sts[@]} -gt 0 ] || continue
        for s in $slist; do
            for ((l = 0; l < launches; l++)); do
                # rotate the order: drift of the machine hits every stack
                k=$((l % ${#sts[@]}))
                order=("${sts[@]:k}" "${sts[@]:0:k}")
                for st in "${order[@]}"; do
                    run_one "$st" "$n" "$nodes" "$s"
                done
            done
        done
    done
done
rmdir "$logdir" 2>/dev/null
echo "launch_compare.sh: raw CSV in $out, outcomes in $outl" >&2
