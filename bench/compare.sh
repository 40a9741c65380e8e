#!/bin/bash
# compare.sh - run pmix-bench under rdpmix-run and mpirun+OpenPMIx, alternating
#
# For every N and S, L launches per stack; within a launch pair the stack
# that goes first alternates, so slow drift of the machine hits both stacks
# alike.  Every launch runs under `timeout`; hangs and failures are counted
# per stack and recorded, never fatal.  See bench/README.md.
set -u

usage() {
    cat <<EOF
usage: compare.sh [options] [-- pmix-bench options]
  -l L        launches per stack and configuration (default 10)
  -n "LIST"   process counts (default "2 4 8 16 32 64")
  -s "LIST"   payload sizes in bytes (default "8 1024 65536")
  -k K        barrier repetitions per launch (default 10)
  -t SECONDS  timeout per launch (default 60)
  -o FILE     raw CSV output (default bench-raw-<date>.csv); launch
              outcomes go to FILE with .csv replaced by .launches.csv
  -S STACKS   which stacks: "rdpmix openpmix" (default), or one of them
  -h          this help
environment:
  PMIX_BENCH     the pmix-bench binary (default: bench/pmix-bench below the
                 current directory, else pmix-bench in PATH)
  RDPMIX_RUN     rdpmix's launcher (default: src/run/rdpmix-run below the
                 current directory or next to PMIX_BENCH's build, else
                 rdpmix-run in PATH); not found: only OpenPMIx runs
  RDPMIX_LIBDIR  directory holding rdpmix's libpmix.so.2, put first in
                 LD_LIBRARY_PATH under rdpmix-run (default: the build's
                 .libs, else <prefix>/lib/rdpmix next to RDPMIX_RUN)
  RDPMIX_RUN_ARGS, MPIRUN_ARGS  extra launcher options
  MPIRUN         Open MPI's launcher (default mpirun)
EOF
}

launches=10
nlist="2 4 8 16 32 64"
slist="8 1024 65536"
reps=10
tmo=60
out=""
stacks="rdpmix openpmix"
while getopts "l:n:s:k:t:o:S:h" opt; do
    case $opt in
    l) launches=$OPTARG ;;
    n) nlist=$OPTARG ;;
    s) slist=$OPTARG ;;
    k) reps=$OPTARG ;;
    t) tmo=$OPTARG ;;
    o) out=$OPTARG ;;
    S) stacks=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
extra_args=("$@")

die() {
    echo "compare.sh: $*" >&2
    exit 1
}

# --- locate the pieces ------------------------------------------------------
if [ -z "${PMIX_BENCH:-}" ]; then
    if [ -x bench/pmix-bench ]; then
        PMIX_BENCH=$PWD/bench/pmix-bench
    else
        PMIX_BENCH=$(command -v pmix-bench) || die "pmix-bench not found; set PMIX_BENCH"
    fi
fi
[ -x "$PMIX_BENCH" ] || die "PMIX_BENCH=$PMIX_BENCH is not executable"
PMIX_BENCH=$(readlink -f "$PMIX_BENCH")
builddir=$(dirname "$(dirname "$PMIX_BENCH")")

if [ -z "${RDPMIX_RUN:-}" ]; then
    for c in "$PWD/src/run/rdpmix-run" "$builddir/src/run/rdpmix-run"; do
        if [ -x "$c" ]; then
            RDPMIX_RUN=$c
            break
        fi
    done
    [ -n "${RDPMIX_RUN:-}" ] || RDPMIX_RUN=$(command -v rdpmix-run || true)
fi
if [ -n "${RDPMIX_RUN:-}" ] && [ -z "${RDPMIX_LIBDIR:-}" ]; then
    run_dir=$(dirname "$(readlink -f "$RDPMIX_RUN")")
    for c in "$builddir/.libs" "$run_dir/../../.libs" "$run_dir/../lib/rdpmix"; do
        if [ -e "$c/libpmix.so.2" ]; then
            RDPMIX_LIBDIR=$(readlink -f "$c")
            break
        fi
    done
fi
MPIRUN=${MPIRUN:-mpirun}

want() { case " $stacks " in *" $1 "*) return 0 ;; esac; return 1; }
run_stacks=()
if want rdpmix; then
    if [ -z "${RDPMIX_RUN:-}" ] || [ ! -x "$RDPMIX_RUN" ]; then
        echo "compare.sh: rdpmix-run not found (set RDPMIX_RUN): running only the OpenPMIx side" >&2
    elif [ -z "${RDPMIX_LIBDIR:-}" ]; then
        echo "compare.sh: rdpmix's libpmix.so.2 not found (set RDPMIX_LIBDIR): running only the OpenPMIx side" >&2
    else
        run_stacks+=(rdpmix)
    fi
fi
if want openpmix; then
    command -v "$MPIRUN" >/dev/null || die "$MPIRUN not found"
    run_stacks+=(openpmix)
fi
[ ${#run_stacks[@]} -gt 0 ] || die "no stack to run"

[ -n "$out" ] || out=bench-raw-$(date +%Y%m%d-%H%M%S).csv
case $out in
*.csv) outl=${out%.csv}.launches.csv ;;
*) outl=$out.launches ;;
esac
logdir=${out%.csv}.logs
mkdir -p "$logdir" || die "cannot create $logdir"
echo "stack,launch,impl,N,S,phase,reps,min_us,median_us,max_us" >"$out" || die "cannot write $out"
echo "stack,launch,N,S,result,rc,wall_s" >"$outl"

# --- environments ------------------------------------------------------------
# Loopback only (PEERS.md), for both stacks.
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export UCX_NET_DEVICES=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# mpirun must load Debian's OpenPMIx: drop every LD_LIBRARY_PATH entry that
# holds a libpmix.so.2, so the default search path finds the system one.
mpi_ldpath=""
IFS=: read -r -a ldp <<<"${LD_LIBRARY_PATH:-}"
for d in "${ldp[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/libpmix.so.2" ] && mpi_ldpath=${mpi_ldpath:+$mpi_ldpath:}$d
done
rdp_ldpath=${RDPMIX_LIBDIR:-}${mpi_ldpath:+:$mpi_ldpath}

read -r -a rdp_args <<<"${RDPMIX_RUN_ARGS:-}"
# --bind-to none: rdpmix-run does not bind either, and with N > nproc
# Open MPI binds only some runs (N <= 2), which would skew the small ones.
read -r -a mpi_args <<<"${MPIRUN_ARGS---bind-to none}"

echo "compare.sh: pmix-bench $PMIX_BENCH" >&2
echo "compare.sh: stacks ${run_stacks[*]}; N: $nlist; S: $slist; L=$launches; timeout ${tmo}s" >&2
[ -n "${RDPMIX_RUN:-}" ] && echo "compare.sh: rdpmix-run $RDPMIX_RUN, libpmix from $RDPMIX_LIBDIR" >&2

# --- one launch ----------------------------------------------------------------
declare -A n_ok n_hang n_fail
for st in "${run_stacks[@]}"; do
    n_ok[$st]=0
    n_hang[$st]=0
    n_fail[$st]=0
done

# kill what a timed-out launch left behind: only processes carrying our tag
reap() {
    local tag=$1 p
    for p in /proc/[0-9]*; do
        if grep -qzx "PMIX_BENCH_TAG=$tag" "$p/environ" 2>/dev/null; then
            kill -KILL "${p#/proc/}" 2>/dev/null
        fi
    done
}

launch_id=0
run_one() {
    local st=$1 n=$2 s=$3 tag res rc t0 t1 wall impl log outf
    launch_id=$((launch_id + 1))
    tag=$$-$launch_id
    log=$logdir/$st-n$n-s$s-$launch_id.err
    outf=$logdir/$st-n$n-s$s-$launch_id.out
    local bench=("$PMIX_BENCH" -s "$s" -k "$reps" --no-header "${extra_args[@]}")
    t0=$(date +%s.%N)
    if [ "$st" = rdpmix ]; then
        env PMIX_BENCH_TAG="$tag" LD_LIBRARY_PATH="$rdp_ldpath" \
            timeout -k 5 "$tmo" "$RDPMIX_RUN" "${rdp_args[@]}" -n "$n" \
            "${bench[@]}" >"$outf" 2>"$log"
    else
        env PMIX_BENCH_TAG="$tag" LD_LIBRARY_PATH="$mpi_ldpath" \
            timeout -k 5 "$tmo" "$MPIRUN" --oversubscribe "${mpi_args[@]}" \
            -np "$n" "${bench[@]}" >"$outf" 2>"$log"
    fi
    rc=$?
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    reap "$tag"

    impl=$(grep -v '^#' "$outf" | head -1 | cut -d, -f1)
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        res=hang
    elif [ $rc -ne 0 ]; then
        res=fail
    elif ! grep -q '^[^#,]*,[0-9]*,[0-9]*,init,' "$outf" ||
        [ "$(grep -vc '^#' "$outf")" -lt 2 ]; then
        # init and at least one phase (-p may select only one group)
        res=nooutput
    elif [ "$st" = openpmix ] && [[ $impl != OpenPMIx* ]]; then
        res=wronglib # mpirun's job did not load OpenPMIx
    elif [ "$st" = rdpmix ] && [[ $impl == OpenPMIx* ]]; then
        res=wronglib # rdpmix-run's job did not load rdpmix's library
    else
        res=ok
    fi
    echo "$st,$launch_id,$n,$s,$res,$rc,$wall" >>"$outl"
    if [ $res = ok ]; then
        n_ok[$st]=$((n_ok[$st] + 1))
        grep -v '^#' "$outf" | sed "s/^/$st,$launch_id,/" >>"$out"
        # the launcher's wall time, from fork to exit, as one more phase
        awk -v p="$st,$launch_id,$impl,$n,$s" -v w="$wall" \
            'BEGIN { us = w * 1e6; printf "%s,wall,1,%.1f,%.1f,%.1f\n", p, us, us, us }' >>"$out"
        rm -f "$outf" "$log"
    elif [ $res = hang ]; then
        n_hang[$st]=$((n_hang[$st] + 1))
    else
        n_fail[$st]=$((n_fail[$st] + 1))
    fi
    printf 'N=%-3s S=%-6s %-8s #%-4s %-8s %6.2fs\n' "$n" "$s" "$st" \
        "$launch_id" "$res" "$wall" >&2
}

# --- the sweep -----------------------------------------------------------------
for n in $nlist; do
    for s in $slist; do
        for ((l = 1; l <= launches; l++)); do
            order=("${run_stacks[@]}")
            if [ $((l % 2)) -eq 0 ] && [ ${#order[@]} -eq 2 ]; then
                order=("${order[1]}" "${order[0]}")
            fi
            for st in "${order[@]}"; do
                run_one "$st" "$n" "$s"
            done
        done
    done
done

echo "compare.sh: raw CSV in $out, launch outcomes in $outl, logs of failed launches in $logdir" >&2
for st in "${run_stacks[@]}"; do
    echo "compare.sh: $st: ${n_ok[$st]} ok, ${n_hang[$st]} hung, ${n_fail[$st]} failed" >&2
done
rmdir "$logdir" 2>/dev/null
exit 0
