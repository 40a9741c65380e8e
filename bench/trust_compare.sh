#!/bin/bash
# trust_compare.sh - issue 11's targets from one run: the engine allgather
# with authenticated payloads (full mode) and with open payloads (isolated
# mode) against MPI_Allgather over UCX, launches alternating
# (bench/engine_compare.sh), with the authentication floor
# (bench/mac-floor) measured in the same run, before and after
#
#   bench/trust_compare.sh [-l L] [-m "2 4"] [-o DIR] [-- coll/mpi options]
#
# Run it from the build directory.  DIR gets meta.txt (date, commit, load
# averages), floor-before.csv / floor-after.csv, ag-M.csv (and
# engine_compare's other files) per M; bench/summarize_trust.py DIR turns
# them into the tables of bench/RESULTS.md.
set -u

LAUNCHES=5
MLIST="2 4"
OUT=trust-$(date +%Y%m%d-%H%M%S)
while getopts "l:m:o:h" opt; do
    case $opt in
    l) LAUNCHES=$OPTARG ;;
    m) MLIST=$OPTARG ;;
    o) OUT=$OPTARG ;;
    h) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(-l 8,1k,64k,256k,1m -a auto -k 100 -K 20)

here=$(cd "$(dirname "$0")" && pwd)
[ -x ./bench/mac-floor ] || { echo "trust_compare: run from the build directory" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

load() { cut -d' ' -f1-3 /proc/loadavg; }
floor() { # the floor, pinned like bench/RESULTS.md's (CPU time)
    taskset -c 1 ./bench/mac-floor 1048576 7 >"$OUT/floor-$1.csv" ||
        { echo "trust_compare: mac-floor failed" >&2; exit 1; }
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "commit: $(git -C "$here" describe --always --dirty 2>/dev/null)"
    echo "command: bench/trust_compare.sh -l $LAUNCHES -m \"$MLIST\" -- ${ARGS[*]}"
    echo "load before: $(load)"
} >"$OUT/meta.txt"
floor before
for m in $MLIST; do
    echo "load before M=$m: $(load)" >>"$OUT/meta.txt"
    "$here/engine_compare.sh" -S "engine open mpi" -m "$m" -l "$LAUNCHES" \
        -z 0 -o "$OUT/ag-$m.csv" -- "${ARGS[@]}"
done
floor after
echo "load after: $(load)" >>"$OUT/meta.txt"
echo "date end: $(date -u '+%Y-%m-%d %H:%M:%S UTC')" >>"$OUT/meta.txt"
cat "$OUT/meta.txt"
