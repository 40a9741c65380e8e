#!/bin/bash
# compare_nodes.sh - pmix-bench across M simulated nodes on this machine:
# rdpmix-run --nodes M vs mpirun (OpenPMIx) with M fake hosts
#
#   bench/compare_nodes.sh [-l L] [-m "2 4 8 16"] [-p "1 2 4"] [-s "8 65536"]
#                          [-c CAP] [-k K] [-t SEC] [-o FILE]
#                          [-S "rdpmix openpmix"] [-- more pmix-bench options]
#
# For every M nodes and P ranks per node (N = M*P; configurations with
# N > CAP are skipped), every payload S and L launches per stack, one
# launch of each stack, alternating which goes first.  Both stacks place
# the ranks by slot: node i runs ranks i*P .. i*P+P-1.
#   rdpmix:   UCX_TLS=tcp UCX_NET_DEVICES=lo
#             rdpmix-run --nodes M --map-by slot --slots-per-node P -n N
#   OpenPMIx: mpirun --hostfile <M fake hosts 127.0.1.x, slots=P each>
#             --mca plm_rsh_agent bench/fake-rsh --map-by slot
#             --bind-to none --mca btl self,tcp -np N
#             (one orted = one PMIx server per fake name; OOB over lo)
# Run it from the build directory, like compare.sh (same PMIX_BENCH,
# RDPMIX_RUN, RDPMIX_LIBDIR, MPIRUN, RDPMIX_RUN_ARGS, MPIRUN_ARGS
# variables).  bench/README.md explains the outputs; summarize with
# bench/summarize_nodes.py FILE.
set -u

LAUNCHES=5
MLIST="2 4 8 16"
PLIST="1 2 4"
SLIST="8 65536"
CAP=64
REPS=10
TMO=120
OUT=""
STACKS="rdpmix openpmix"

usage() {
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF
  -l L       launches per stack and configuration     (default $LAUNCHES)
  -m LIST    node counts M (1..1024)                  (default "$MLIST")
  -p LIST    ranks per node P                         (default "$PLIST")
  -s LIST    payload bytes per rank S                 (default "$SLIST")
  -c CAP     skip configurations with M*P > CAP       (default $CAP)
  -k K       barrier repetitions per launch           (default $REPS)
  -t SEC     timeout of one launch                    (default $TMO)
  -o FILE    raw CSV (default nodes-raw-<date>.csv); launch outcomes in
             FILE.launches.csv, logs of launches that were not ok in
             FILE.logs/
  -S LIST    stacks: rdpmix, openpmix                 (default "$STACKS")
EOF
}

while getopts "l:m:p:s:c:k:t:o:S:h" opt; do
    case $opt in
    l) LAUNCHES=$OPTARG ;;
    m) MLIST=$OPTARG ;;
    p) PLIST=$OPTARG ;;
    s) SLIST=$OPTARG ;;
    c) CAP=$OPTARG ;;
    k) REPS=$OPTARG ;;
    t) TMO=$OPTARG ;;
    o) OUT=$OPTARG ;;
    S) STACKS=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
BENCH_ARGS=("$@")

die() { echo "compare_nodes: $*" >&2; exit 1; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; return 0; }

for v in "$LAUNCHES" "$CAP" "$REPS" "$TMO"; do
    isnum "$v" && [ "$v" -ge 1 ] || die "bad number '$v' (see -h)"
done
for m in $MLIST; do
    isnum "$m" && [ "$m" -ge 1 ] && [ "$m" -le 1024 ] || die "bad M '$m'"
done
for p in $PLIST; do
    isnum "$p" && [ "$p" -ge 1 ] || die "bad P '$p'"
done
for s in $SLIST; do
    isnum "$s" || die "bad S '$s'"
done
RUN=()
for st in $STACKS; do
    case $st in
    rdpmix | openpmix) RUN+=("$st") ;;
    *) die "unknown stack '$st' (rdpmix, openpmix)" ;;
    esac
done
[ ${#RUN[@]} -gt 0 ] || die "no stack to run"

# --- the programs ---------------------------------------------------------------
SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FAKE_RSH=$SRCDIR/fake-rsh
[ -x "$FAKE_RSH" ] || die "$FAKE_RSH is missing or not executable"

if [ -z "${PMIX_BENCH:-}" ]; then
    [ -x bench/pmix-bench ] && PMIX_BENCH=$PWD/bench/pmix-bench
    [ -n "${PMIX_BENCH:-}" ] || PMIX_BENCH=$(command -v pmix-bench) ||
        die "no pmix-bench: run from the build directory or set PMIX_BENCH"
fi
[ -x "$PMIX_BENCH" ] || die "PMIX_BENCH=$PMIX_BENCH is not executable"
PMIX_BENCH=$(readlink -f "$PMIX_BENCH")
BUILD=$(dirname "$(dirname "$PMIX_BENCH")")
MPIRUN=${MPIRUN:-mpirun}

for st in "${RUN[@]}"; do
    if [ "$st" = openpmix ]; then
        command -v "$MPIRUN" >/dev/null || die "no $MPIRUN: set MPIRUN"
        continue
    fi
    if [ -z "${RDPMIX_RUN:-}" ]; then
        RDPMIX_RUN=$BUILD/src/run/rdpmix-run
        [ -x "$RDPMIX_RUN" ] || RDPMIX_RUN=$(command -v rdpmix-run) ||
            die "no rdpmix-run: set RDPMIX_RUN, or -S openpmix"
    fi
    if [ -z "${RDPMIX_LIBDIR:-}" ]; then
        d=$(dirname "$(readlink -f "$RDPMIX_RUN")")
        for c in "$BUILD/.libs" "$d/../../.libs" "$d/../lib/rdpmix"; do
            [ -e "$c/libpmix.so.2" ] && RDPMIX_LIBDIR=$(readlink -f "$c") &&
                break
        done
    fi
    [ -e "${RDPMIX_LIBDIR:-}/libpmix.so.2" ] ||
        die "rdpmix's libpmix.so.2 not found: set RDPMIX_LIBDIR"
done

# --- outputs ----------------------------------------------------------------------
OUT=${OUT:-nodes-raw-$(date +%Y%m%d-%H%M%S).csv}
case $OUT in *.csv) BASE=${OUT%.csv} ;; *) BASE=$OUT ;; esac
LAUNCH_CSV=$BASE.launches.csv
LOGDIR=$BASE.logs
mkdir -p "$LOGDIR" || die "cannot create $LOGDIR"
echo "stack,launch,M,P,impl,N,S,phase,reps,min_us,median_us,max_us" \
    >"$OUT" || die "cannot write $OUT"
echo "stack,launch,M,P,N,S,result,rc,wall_s" >"$LAUNCH_CSV"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/compare_nodes.XXXXXX") || die "mktemp"
trap 'rm -rf "$WORK"' EXIT

# --- environments -----------------------------------------------------------------
# Loopback only (PEERS.md); the engine between rdpmix's daemons over UCX tcp.
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export UCX_NET_DEVICES=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# fake-rsh gives every fake host its own Open MPI session directory below it
export FAKE_RSH_TMPDIR=$WORK/hosts

# Under mpirun, Debian's OpenPMIx must be loaded: drop every LD_LIBRARY_PATH
# entry that holds a libpmix.so.2.  Under rdpmix-run, rdpmix's goes first.
MPI_LDPATH=""
IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/libpmix.so.2" ] &&
        MPI_LDPATH=${MPI_LDPATH:+$MPI_LDPATH:}$d
done
RDP_LDPATH=${RDPMIX_LIBDIR:-}${MPI_LDPATH:+:$MPI_LDPATH}
read -r -a RDP_EXTRA <<<"${RDPMIX_RUN_ARGS:-}"
read -r -a MPI_EXTRA <<<"${MPIRUN_ARGS---bind-to none}"

# The fake host names are loopback addresses 127.0.1.1, 127.0.1.2, ...
# (127.0.1.254, then 127.0.2.1 ...), not made-up words: mpirun resolves
# every name of its hostfile, and a made-up name goes to DNS, where a lost
# query costs the resolver's 5 s timeout (seen here: 1 lookup in ~30,
# mpirun's wall time 5-11 s at M = 8-16 instead of < 1 s).  An address
# needs no lookup, and only 127.0.0.1/localhost are folded into mpirun's
# own node, so every address gets an orted (check_fake_nodes checks it).
fake_host() { echo "127.0.$((($1 - 1) / 254 + 1)).$((($1 - 1) % 254 + 1))"; }

hostfile() { # M P -> path of a hostfile of M fake names with P slots each
    local f=$WORK/hosts.$1.$2 i
    if [ ! -e "$f" ]; then
        for ((i = 1; i <= $1; i++)); do
            echo "$(fake_host "$i") slots=$2"
        done >"$f"
    fi
    echo "$f"
}

# The command of one launch of STACK with M nodes, P per node, payload S.
launch_cmd() {
    local st=$1 m=$2 p=$3 s=$4 n=$(($2 * $3))
    local bench=("$PMIX_BENCH" -s "$s" -k "$REPS" --no-header "${BENCH_ARGS[@]}")
    if [ "$st" = rdpmix ]; then
        CMD=(env LD_LIBRARY_PATH="$RDP_LDPATH" UCX_TLS=tcp "$RDPMIX_RUN"
            "${RDP_EXTRA[@]}" --nodes "$m" --map-by slot
            --slots-per-node "$p" -n "$n" "${bench[@]}")
    else
        # shellcheck disable=SC2054 # "self,tcp" is one argument
        CMD=(env LD_LIBRARY_PATH="$MPI_LDPATH" "$MPIRUN" "${MPI_EXTRA[@]}"
            --hostfile "$(hostfile "$m" "$p")" --mca plm_rsh_agent "$FAKE_RSH"
            --mca btl self,tcp --map-by slot -np "$n" "${bench[@]}")
    fi
}

# Check once that mpirun really starts one orted per fake name: M ranks
# mapped by node must see M different session directories.
check_fake_nodes() {
    local m=$1 got
    CMD=(env LD_LIBRARY_PATH="$MPI_LDPATH" "$MPIRUN" "${MPI_EXTRA[@]}"
        --hostfile "$(hostfile "$m" 1)" --mca plm_rsh_agent "$FAKE_RSH"
        --map-by node -np "$m" sh -c 'echo "$OMPI_MCA_orte_tmpdir_base"')
    got=$(timeout -k 5 "$TMO" "${CMD[@]}" 2>"$WORK/check.err" | sort -u |
        grep -c "^$FAKE_RSH_TMPDIR/127\\.0\\.")
    if [ "$got" != "$m" ]; then
        cp "$WORK/check.err" "$LOGDIR/fake-nodes-check.err"
        die "mpirun with $m fake hosts: ranks saw $got node directories," \
            "not $m (see $LOGDIR/fake-nodes-check.err)"
    fi
    echo "compare_nodes: mpirun starts one orted per fake host ($m of $m)" >&2
}

# kill what a timed-out launch left behind: only processes carrying our tag
reap() {
    local p
    for p in /proc/[0-9]*; do
        grep -qzx "PMIX_BENCH_TAG=$1" "$p/environ" 2>/dev/null &&
            kill -KILL "${p#/proc/}" 2>/dev/null
    done
}

declare -A NOK NHANG NFAIL
for st in "${RUN[@]}"; do
    NOK[$st]=0 NHANG[$st]=0 NFAIL[$st]=0
done
LAUNCH=0

run_one() { # STACK M P S
    local st=$1 m=$2 p=$3 s=$4 n=$(($2 * $3))
    local tag out err t0 rc wall impl size res
    LAUNCH=$((LAUNCH + 1))
    tag=nodes-$$-$LAUNCH
    out=$WORK/out err=$WORK/err
    launch_cmd "$st" "$m" "$p" "$s"
    t0=$(date +%s.%N)
    PMIX_BENCH_TAG=$tag timeout -k 5 "$TMO" "${CMD[@]}" >"$out" 2>"$err"
    rc=$?
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.6f", b - a }')
    reap "$tag"

    impl=$(grep -v '^#' "$out" | head -1 | cut -d, -f1)
    size=$(grep -v '^#' "$out" | head -1 | cut -d, -f2)
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        res=hang
    elif [ $rc -ne 0 ]; then
        res=fail
    elif ! grep -q '^[^#,]*,[0-9]*,[0-9]*,init,' "$out" ||
        [ "$(grep -vc '^#' "$out")" -lt 2 ]; then
        # init and at least one phase (-p may select only one group)
        res=nooutput
    elif [ "$st" = openpmix ] && [[ $impl != OpenPMIx* ]]; then
        res=wronglib # mpirun's job did not load OpenPMIx
    elif [ "$st" = rdpmix ] && [[ $impl != rdpmix* ]]; then
        res=wronglib # rdpmix-run's job did not load rdpmix's library
    elif [ "$size" != "$n" ]; then
        res=wrongsize
    else
        res=ok
    fi
    echo "$st,$LAUNCH,$m,$p,$n,$s,$res,$rc,$wall" >>"$LAUNCH_CSV"
    case $res in
    ok)
        NOK[$st]=$((NOK[$st] + 1))
        {
            grep -v '^#' "$out"
            awk -v p="$impl,$n,$s" -v w="$wall" 'BEGIN { us = w * 1e6;
                printf "%s,wall,1,%.1f,%.1f,%.1f\n", p, us, us, us }'
        } | sed "s/^/$st,$LAUNCH,$m,$p,/" >>"$OUT"
        ;;
    hang) NHANG[$st]=$((NHANG[$st] + 1)) ;;
    *) NFAIL[$st]=$((NFAIL[$st] + 1)) ;;
    esac
    if [ $res != ok ]; then
        {
            printf '%q ' "${CMD[@]}"
            echo
        } >"$LOGDIR/$st-M$m-P$p-S$s-$LAUNCH.cmd"
        mv "$out" "$LOGDIR/$st-M$m-P$p-S$s-$LAUNCH.out"
        mv "$err" "$LOGDIR/$st-M$m-P$p-S$s-$LAUNCH.err"
    fi
    printf 'M=%-3s P=%-2s N=%-3s S=%-6s %-8s #%-4s %-9s %6.2fs\n' "$m" "$p" \
        "$n" "$s" "$st" "$LAUNCH" "$res" "$wall" >&2
}

echo "compare_nodes: pmix-bench $PMIX_BENCH; stacks ${RUN[*]}" >&2
echo "compare_nodes: M: $MLIST; P: $PLIST; S: $SLIST; N <= $CAP;" \
    "L=$LAUNCHES; timeout ${TMO}s" >&2
[ -n "${RDPMIX_RUN:-}" ] &&
    echo "compare_nodes: rdpmix-run $RDPMIX_RUN, libpmix from $RDPMIX_LIBDIR" >&2
if [[ " ${RUN[*]} " == *" openpmix "* ]]; then
    mmax=0
    for m in $MLIST; do [ "$m" -gt "$mmax" ] && mmax=$m; done
    check_fake_nodes "$mmax"
fi

# --- the sweep ----------------------------------------------------------------------
for m in $MLIST; do
    for p in $PLIST; do
        if [ $((m * p)) -gt "$CAP" ]; then
            echo "compare_nodes: skipping M=$m P=$p: N=$((m * p)) > $CAP" >&2
            continue
        fi
        for s in $SLIST; do
            for ((l = 1; l <= LAUNCHES; l++)); do
                order=("${RUN[@]}")
                if [ $((l % 2)) -eq 0 ] && [ ${#order[@]} -eq 2 ]; then
                    order=("${order[1]}" "${order[0]}")
                fi
                for st in "${order[@]}"; do
                    run_one "$st" "$m" "$p" "$s"
                done
            done
        done
    done
done

echo "compare_nodes: raw CSV in $OUT, launch outcomes in $LAUNCH_CSV" >&2
for st in "${RUN[@]}"; do
    echo "compare_nodes: $st: ${NOK[$st]} ok, ${NHANG[$st]} hung," \
        "${NFAIL[$st]} failed" >&2
done
rmdir "$LOGDIR" 2>/dev/null || echo "compare_nodes: logs of launches" \
    "that were not ok in $LOGDIR" >&2
exit 0
