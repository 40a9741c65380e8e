#!/bin/bash
# pair_nodes.sh BEFORE_BUILD AFTER_BUILD OUTDIR [ROUNDS] [-- compare_nodes.sh options]
# Paired before/after runs of compare_nodes.sh (rdpmix only): ROUNDS rounds
# (default 3), each one launch of every configuration with each build,
# alternating which build goes first; OUTDIR/{before,after}.rN.csv, and
# the 1-minute load average every 30 s in OUTDIR/load.txt.  Summarize with
# bench/pair_nodes.py OUTDIR.  Default configurations: -m "2 4 8 16"
# -p "1 2" -s "8 1024" -k 20 -- -p fence,modex_rep,group.
set -u
[ $# -ge 3 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
BEFORE=$(readlink -f "$1") AFTER=$(readlink -f "$2") OUT=$(readlink -f "$3")
ROUNDS=${4:-3}
shift $(($# >= 4 ? 4 : 3))
[ "${1:-}" = -- ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(-m "2 4 8 16" -p "1 2" -s "8 1024" -k 20 -t 120
    -- -p fence,modex_rep,group)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT" || exit 1
(while :; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1 /proc/loadavg)"; sleep 30; done) \
    >"$OUT/load.txt" &
LOADPID=$!
trap 'kill $LOADPID' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
    order="before after"
    [ $((r % 2)) -eq 0 ] && order="after before"
    for b in $order; do
        dir=$BEFORE
        [ "$b" = after ] && dir=$AFTER
        (cd "$dir" && "$HERE/compare_nodes.sh" -S rdpmix -l 1 -o "$OUT/$b.r$r.csv" \
            "${ARGS[@]}") >"$OUT/$b.r$r.out" 2>&1
    done
done
