#!/bin/bash
# engine_compare.sh - the collective engine (coll-bench) vs Open MPI's
# MPI_Allgather over UCX (mpi-allgather), alternating, raw CSV to a file
#
#   bench/engine_compare.sh [-l L] [-m "2 4 8 16"] [-T "tcp shm"] [-t SEC]
#                           [-o FILE] [-S "engine open mpi"]
#                           [-A "default ring"]
#                           [-z SEC]
#                           [-- options for both programs: -l SIZES -k K ...]
#
# Run it from the build directory (it finds bench/coll-bench and
# bench/mpi-allgather there) or set COLL_BENCH, MPI_ALLGATHER, MPIRUN,
# MPIRUN_ARGS (default: --bind-to none).  bench/COLL.md explains the
# method and the outputs; bench/summarize_coll.py turns FILE into tables.
set -u

LAUNCHES=3
MLIST="2 4 8 16"
TLSLIST="tcp"
TMO=600
OUT=""
STACKS="engine mpi"
MPI_ALGS="default"
SETTLE=1

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF
  -l L       launches per (transport, M, stack)      (default $LAUNCHES)
  -m LIST    process counts M                        (default "$MLIST")
  -T LIST    UCX transports: tcp (UCX_TLS=tcp for the engine, tcp,self for
             MPI, UCX_NET_DEVICES=lo) and/or shm (sm / sm,self)
                                                     (default "$TLSLIST")
  -t SEC     timeout of one launch                   (default $TMO)
  -o FILE    raw CSV                     (default coll-raw-<date>.csv)
  -S LIST    stacks to run: engine, open (the engine with payloads
             without a MAC, coll-bench -O, impl rdpmix-ucx-open), mpi
                                                     (default "$STACKS")
  -A LIST    Open MPI allgather algorithms, one launch each: default
             (Open MPI's own choice), linear, bruck, recursive_doubling,
             ring, neighbor (coll_tuned_allgather_algorithm)
                                                     (default "$MPI_ALGS")
  -z SEC     pause before every launch, so that the previous launch's
             processes are gone and the machine settles  (default $SETTLE)
EOF
}

while getopts "l:m:T:t:o:S:A:z:h" opt; do
    case $opt in
    l) LAUNCHES=$OPTARG ;;
    m) MLIST=$OPTARG ;;
    T) TLSLIST=$OPTARG ;;
    t) TMO=$OPTARG ;;
    o) OUT=$OPTARG ;;
    S) STACKS=$OPTARG ;;
    A) MPI_ALGS=$OPTARG ;;
    z) SETTLE=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
BENCH_ARGS=("$@")

die() { echo "engine_compare: $*" >&2; exit 1; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; return 0; }

inrange() { isnum "$1" && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

inrange "$LAUNCHES" 1 100000 || die "bad -l '$LAUNCHES'"
inrange "$TMO" 1 86400 || die "bad -t '$TMO'"
inrange "$SETTLE" 0 3600 || die "bad -z '$SETTLE'"
for m in $MLIST; do
    inrange "$m" 2 1024 || die "bad M '$m'"
done
for t in $TLSLIST; do
    case $t in tcp | shm) ;; *) die "unknown transport '$t' (tcp, shm)" ;; esac
done
RUN_ENGINE=0
RUN_OPEN=0
RUN_MPI=0
for s in $STACKS; do
    case $s in
    engine) RUN_ENGINE=1 ;;
    open) RUN_OPEN=1 ;;
    mpi) RUN_MPI=1 ;;
    *) die "unknown stack '$s' (engine, open, mpi)" ;;
    esac
done
mpi_alg_number() {
    case $1 in
    default) echo "" ;;
    linear) echo 1 ;;
    bruck) echo 2 ;;
    recursive_doubling) echo 3 ;;
    ring) echo 4 ;;
    neighbor) echo 5 ;;
    *) return 1 ;;
    esac
}
for a in $MPI_ALGS; do
    mpi_alg_number "$a" >/dev/null || die "unknown MPI algorithm '$a'"
done

COLL_BENCH=${COLL_BENCH:-./bench/coll-bench}
MPI_ALLGATHER=${MPI_ALLGATHER:-./bench/mpi-allgather}
MPIRUN=${MPIRUN:-mpirun}
read -r -a MPIRUN_EXTRA <<<"${MPIRUN_ARGS:---bind-to none}"
if [ $((RUN_ENGINE + RUN_OPEN)) -gt 0 ] && [ ! -x "$COLL_BENCH" ]; then
    die "no $COLL_BENCH: run from the build directory or set COLL_BENCH"
fi
if [ $RUN_MPI = 1 ]; then
    [ -x "$MPI_ALLGATHER" ] || die "no $MPI_ALLGATHER (built only when \
configure found mpicc): set MPI_ALLGATHER, or -S engine"
    command -v "$MPIRUN" >/dev/null || die "no $MPIRUN: set MPIRUN"
fi

OUT=${OUT:-coll-raw-$(date +%Y%m%d-%H%M%S).csv}
case $OUT in *.csv) BASE=${OUT%.csv} ;; *) BASE=$OUT ;; esac
LAUNCH_CSV=$BASE.launches.csv
PICKED_CSV=$BASE.picked.csv
LOGDIR=$BASE.logs
mkdir -p "$LOGDIR" || die "cannot create $LOGDIR"
echo "tls,launch,impl,alg,M,size,reps,min_us,median_us,max_us" >"$OUT"
echo "tls,launch,stack,alg,M,result,rc,wall_s" >"$LAUNCH_CSV"
echo "tls,launch,M,size,picked" >"$PICKED_CSV"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/engine_compare.XXXXXX") || die "mktemp"
trap 'rm -rf "$WORK"' EXIT

# Loopback only, for both stacks; no UCX memory hooks (nobody forks).
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export UCX_NET_DEVICES=lo UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset RDPMIX_COLL_ALG

engine_tls() { [ "$1" = tcp ] && echo tcp || echo sm; }
mpi_tls() { [ "$1" = tcp ] && echo tcp,self || echo sm,self; }

mpirun_cmd() { # M tls alg -> the mpirun command line in MPI_CMD
    local m=$1 tls=$2 alg=$3 num
    num=$(mpi_alg_number "$alg")
    MPI_CMD=("$MPIRUN" --allow-run-as-root --oversubscribe "${MPIRUN_EXTRA[@]}"
        -np "$m" --mca pml ucx --mca pml_ucx_tls any
        --mca pml_ucx_devices any -x "UCX_TLS=$(mpi_tls "$tls")"
        -x UCX_NET_DEVICES=lo)
    if [ -n "$num" ]; then
        MPI_CMD+=(--mca coll_tuned_use_dynamic_rules 1
            --mca coll_tuned_allgather_algorithm "$num")
    fi
}

# Open MPI silently falls back to ob1 unless the UCX pml accepts the
# transports: check once per transport that it is really selected.
check_mpi_pml() {
    local tls=$1 log=$WORK/pmlcheck.$1
    mpirun_cmd 2 "$tls" default
    timeout -k 5 "$TMO" "${MPI_CMD[@]}" --mca pml_base_verbose 10 \
        "$MPI_ALLGATHER" -l 8 -w 1 -k 1 --no-header >"$log" 2>&1
    if ! grep -q "select: component ucx selected" "$log"; then
        cp "$log" "$LOGDIR/pmlcheck-$tls.log"
        die "Open MPI did not select the UCX pml over $tls \
(see $LOGDIR/pmlcheck-$tls.log)"
    fi
    if grep -q "component ob1 selected" "$log"; then
        die "Open MPI selected ob1 over $tls"
    fi
    echo "# Open MPI pml check ($tls): ucx selected on both ranks" >&2
}

now() { date +%s.%N; }

# record TLS LAUNCH STACK ALG M RC T0 STDOUT STDERR-FILES...
record() {
    local tls=$1 launch=$2 stack=$3 alg=$4 m=$5 rc=$6 t0=$7 out=$8
    shift 8
    local wall result lines log=$LOGDIR/$tls-$stack-$alg-M$m-L$launch
    wall=$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    # CSV rows only: UCX prints its warnings on stdout too
    awk -F, 'NF == 8 && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/' "$out" \
        >"$WORK/rows"
    lines=$(wc -l <"$WORK/rows")
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        result=hang
    elif [ "$rc" != 0 ]; then
        result=fail
    elif [ "$lines" = 0 ]; then
        result=nooutput
    else
        result=ok
    fi
    echo "$tls,$launch,$stack,$alg,$m,$result,$rc,$wall" >>"$LAUNCH_CSV"
    if [ $result = ok ]; then
        sed "s/^/$tls,$launch,/" "$WORK/rows" >>"$OUT"
        grep '^# picked,' "$out" | awk -F, -v t="$tls" -v l="$launch" \
            '{print t "," l "," $3 "," $4 "," $5}' >>"$PICKED_CSV"
        if [ "$(grep -c -v '^#' "$out")" != "$lines" ]; then
            grep -v '^#' "$out" | awk -F, \
                '!(NF == 8 && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/)' \
                >"$log.stray"
        fi
    else
        cp "$out" "$log.out"
        cat "$@" >"$log.err" 2>/dev/null
        echo "# $stack $alg M=$m launch $launch over $tls: $result (rc $rc)," \
            "logs in $log.*" >&2
    fi
}

run_engine() { # tls M launch [open]
    local tls=$1 m=$2 launch=$3 dir i rc=0 r t0 pids=() extra=() stack=engine
    if [ "${4:-}" = open ]; then
        extra=(-O -I rdpmix-ucx-open)
        stack=open
    fi
    dir=$(mktemp -d "$WORK/rdv.XXXXXX")
    sleep "$SETTLE"
    t0=$(now)
    for ((i = 0; i < m; i++)); do
        UCX_TLS=$(engine_tls "$tls") timeout -k 5 "$TMO" "$COLL_BENCH" \
            -i "$i" -n "$m" -d "$dir" -v --no-header "${BENCH_ARGS[@]}" \
            "${extra[@]}" \
            >"$dir/out.$i" 2>"$dir/err.$i" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        r=$?
        # the first failure is the cause; the others follow from it
        if [ $rc = 0 ] && [ $r != 0 ]; then rc=$r; fi
        if [ $r = 124 ] || [ $r = 137 ]; then rc=$r; fi
    done
    record "$tls" "$launch" "$stack" all "$m" "$rc" "$t0" "$dir/out.0" \
        "$dir"/err.*
    rm -rf "$dir"
}

run_mpi() { # tls M launch alg
    local tls=$1 m=$2 launch=$3 alg=$4 rc t0
    mpirun_cmd "$m" "$tls" "$alg"
    sleep "$SETTLE"
    t0=$(now)
    timeout -k 5 "$TMO" "${MPI_CMD[@]}" "$MPI_ALLGATHER" -a "$alg" \
        --no-header "${BENCH_ARGS[@]}" >"$WORK/mpi.out" 2>"$WORK/mpi.err"
    rc=$?
    record "$tls" "$launch" mpi "$alg" "$m" "$rc" "$t0" "$WORK/mpi.out" \
        "$WORK/mpi.err"
}

run_stacks() { # tls M launch: every stack, in an order that alternates
    local tls=$1 m=$2 launch=$3 a
    if [ $((launch % 2)) = 1 ]; then
        [ $RUN_ENGINE = 1 ] && run_engine "$tls" "$m" "$launch"
        [ $RUN_OPEN = 1 ] && run_engine "$tls" "$m" "$launch" open
        if [ $RUN_MPI = 1 ]; then
            for a in $MPI_ALGS; do run_mpi "$tls" "$m" "$launch" "$a"; done
        fi
    else
        if [ $RUN_MPI = 1 ]; then
            for a in $MPI_ALGS; do run_mpi "$tls" "$m" "$launch" "$a"; done
        fi
        [ $RUN_OPEN = 1 ] && run_engine "$tls" "$m" "$launch" open
        [ $RUN_ENGINE = 1 ] && run_engine "$tls" "$m" "$launch"
    fi
    return 0
}

if [ $RUN_MPI = 1 ]; then
    for tls in $TLSLIST; do check_mpi_pml "$tls"; done
fi
for tls in $TLSLIST; do
    for m in $MLIST; do
        for ((launch = 1; launch <= LAUNCHES; launch++)); do
            echo "# $tls M=$m launch $launch/$LAUNCHES" >&2
            run_stacks "$tls" "$m" "$launch"
        done
    done
done
echo "# raw: $OUT  launches: $LAUNCH_CSV  auto's picks: $PICKED_CSV" >&2
