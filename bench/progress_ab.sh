#!/bin/bash
# progress_ab.sh - the engine allgather with open payloads (isolated mode)
# from a base build, from this build, from this build with busy polling
# (RDPMIX_UCX_BUSY_US), and MPI_Allgather over UCX: one launch each per
# round, in an order that rotates round by round (paired on a loaded
# machine); bench/summarize_progress_ab.py DIR makes the table
#
#   bench/progress_ab.sh -b BASE_BUILD [-l L] [-m "2 4"] [-u US] [-o DIR]
#                        [-c "base new busy mpi"] [-e VAR=VALUE]
#                        [-- coll/mpi options]
#
# Configuration "env": this build with VAR=VALUE from -e in the
# environment (e.g. -e RDPMIX_UCX_FAST_GMAC=0).
# Run it from the build directory; BASE_BUILD is another build directory
# (e.g. of a worktree at the base commit).
set -u

BASE=""
LAUNCHES=6
MLIST="2 4"
BUSY_US=5000
OUT=progress-ab-$(date +%Y%m%d-%H%M%S)
CFGS="base new busy mpi"
ENV_AB=""
while getopts "b:l:m:u:o:c:e:h" opt; do
    case $opt in
    b) BASE=$OPTARG ;;
    l) LAUNCHES=$OPTARG ;;
    m) MLIST=$OPTARG ;;
    u) BUSY_US=$OPTARG ;;
    o) OUT=$OPTARG ;;
    c) CFGS=$OPTARG ;;
    e) ENV_AB=$OPTARG ;;
    h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(-l 8,1k,64k -a auto -k 100 -K 20)

here=$(cd "$(dirname "$0")" && pwd)
[ -x ./bench/coll-bench ] || { echo "progress_ab: run from the build directory" >&2; exit 1; }
read -r -a cfgs <<<"$CFGS"
case " $CFGS " in
*" base "*) [ -x "$BASE/bench/coll-bench" ] ||
    { echo "progress_ab: -b BASE_BUILD needed (no $BASE/bench/coll-bench)" >&2; exit 1; } ;;
esac
mkdir -p "$OUT" || exit 1
load() { cut -d' ' -f1-3 /proc/loadavg; }
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "commit: $(git -C "$here" describe --always --dirty 2>/dev/null)"
    echo "base: $BASE ($(git -C "$BASE/.." describe --always --dirty 2>/dev/null))"
    echo "command: bench/progress_ab.sh -l $LAUNCHES -m \"$MLIST\" -u $BUSY_US -c \"$CFGS\" -e \"$ENV_AB\" -- ${ARGS[*]}"
    echo "load before: $(load)"
} >"$OUT/meta.txt"

run() { # cfg M launch
    local c=$1 m=$2 l=$3 o="$OUT/$1-M$2-L$3.csv"
    case $c in
    base) COLL_BENCH=$BASE/bench/coll-bench "$here/engine_compare.sh" -S open \
        -m "$m" -l 1 -z 0 -o "$o" -- "${ARGS[@]}" ;;
    new) COLL_BENCH=./bench/coll-bench "$here/engine_compare.sh" -S open \
        -m "$m" -l 1 -z 0 -o "$o" -- "${ARGS[@]}" ;;
    busy) RDPMIX_UCX_BUSY_US=$BUSY_US COLL_BENCH=./bench/coll-bench \
        "$here/engine_compare.sh" -S open -m "$m" -l 1 -z 0 -o "$o" -- \
        "${ARGS[@]}" ;;
    env) env "$ENV_AB" COLL_BENCH=./bench/coll-bench \
        "$here/engine_compare.sh" -S open -m "$m" -l 1 -z 0 -o "$o" -- \
        "${ARGS[@]}" ;;
    mpi) "$here/engine_compare.sh" -S mpi -m "$m" -l 1 -z 0 -o "$o" -- \
        "${ARGS[@]}" ;;
    *) echo "progress_ab: unknown configuration '$c'" >&2; exit 1 ;;
    esac >/dev/null 2>>"$OUT/stderr.txt"
}

for m in $MLIST; do
    for ((l = 1; l <= LAUNCHES; l++)); do
        for ((k = 0; k < ${#cfgs[@]}; k++)); do
            run "${cfgs[$(((k + l) % ${#cfgs[@]}))]}" "$m" "$l"
        done
        echo "M=$m round $l: load $(load)" >>"$OUT/meta.txt"
    done
done
echo "load after: $(load)" >>"$OUT/meta.txt"
echo "date end: $(date -u '+%Y-%m-%d %H:%M:%S UTC')" >>"$OUT/meta.txt"
cat "$OUT/meta.txt"
