#!/bin/bash
# exchange_matrix.sh - issue 11's 2-server experiment: bench/ucx-exchange
# under each switch, Open MPI's MPI_Allgather (bench/mpi-exchange, with its
# barrier's skew) and the engine (coll-bench -O), rounds in rotating order
#
#   bench/exchange_matrix.sh [-r ROUNDS] [-n REPS] [-o FILE] [-c "CFG ..."]
#                            [-b BASE_BUILD]
#
# Run from the build directory.  FILE (CSV) gets one row per launch:
# round,config, then ucx-exchange's columns (bench/ucx_exchange.c); the
# engine rows have only the max-over-ranks column (coll-bench's).
# bench/summarize_exchange.py FILE makes the table.  -b adds "enginebase":
# coll-bench -O of another build.  PIN=1 in the environment pins every
# program's two processes to cores 0 and 1 (taskset; mpirun --bind-to
# core), which takes the scheduler's placement out of the comparison.
set -u
ROUNDS=5
REPS=5000
OUT=exchange-$(date +%Y%m%d-%H%M%S).csv
BASE=""
CFGS="mpi mpilike enginelike tag none nowake spin arm yield multi p16 noimm nocb noeager h0 shmbar self engine"
while getopts "r:n:o:c:b:h" opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    n) REPS=$OPTARG ;;
    o) OUT=$OPTARG ;;
    c) CFGS=$OPTARG ;;
    b) BASE=$OPTARG ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
[ -x ./bench/ucx-exchange ] || { echo "run from the build directory" >&2; exit 1; }
[ -n "$BASE" ] && CFGS="$CFGS enginebase"
export UCX_NET_DEVICES=lo UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
# the engine's switches (src/ucx/ucx_tl.c): active messages with a user
# header and the eager flag, peer error mode, wakeup, loop-style waiting,
# UCX_TCP_MAX_POLL=1, single thread, send callback
ENG=(-s am -H 100 -E -e peer -F -W loop -P 1 -T single -c cb)

exch() { # label, then switches that override ENG's
    local label=$1
    shift
    UCX_TLS=${TLS:-tcp} "$here/ucx_exchange.sh" -L "$label" -n "$REPS" "$@"
}

pin() { if [ -n "${PIN:-}" ]; then echo "taskset -c $1"; fi; }

run_cfg() {
    case $1 in
    mpi)
        mpirun --allow-run-as-root --oversubscribe \
            --bind-to "$([ -n "${PIN:-}" ] && echo core || echo none)" -np 2 \
            --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
            -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo \
            ./bench/mpi-exchange "$REPS" 1000 8 mpi 2>/dev/null | grep '^mpi,' ;;
    # Open MPI 4.1's pml ucx: tag send + receive posted first, no error
    # handling, no wakeup, busy progress, tcp,self
    mpilike) TLS=tcp,self exch mpilike -s tag -e none -W spin -T single -c cb ;;
    enginelike) exch enginelike "${ENG[@]}" ;;
    tag) exch tag "${ENG[@]}" -s tag ;;
    none) exch none "${ENG[@]}" -e none ;;
    nowake) exch nowake -s am -H 100 -E -e peer -W loop -P 1 ;;
    # both production needs removed at once: no wakeup, no peer error mode
    nowakenone) exch nowakenone -s am -H 100 -E -e none -W loop -P 1 ;;
    spin) exch spin "${ENG[@]}" -W spin ;;
    # the engine's settings plus its measured CPU around a message (0.5 us
    # before the send, 0.9 us from the receive to the completion)
    burn) exch burn "${ENG[@]}" -B 0.5 -A 0.9 ;;
    # the same switches one at a time with spin waiting (no yield mode)
    spintag) exch spintag "${ENG[@]}" -W spin -s tag ;;
    spinnone) exch spinnone "${ENG[@]}" -W spin -e none ;;
    spinnowake) exch spinnowake -s am -H 100 -E -e peer -W spin -P 1 ;;
    spinp16) exch spinp16 -s am -H 100 -E -e peer -F -W spin ;;
    spinself) TLS=tcp,self exch spinself "${ENG[@]}" -W spin ;;
    arm) exch arm "${ENG[@]}" -W arm ;;
    yield) exch yield "${ENG[@]}" -W yield ;;
    multi) exch multi "${ENG[@]}" -T multi ;;
    p16) exch p16 -s am -H 100 -E -e peer -F -W loop ;;
    noimm) exch noimm "${ENG[@]}" -c noimm ;;
    nocb) exch nocb "${ENG[@]}" -c nocb ;;
    noeager) exch noeager -s am -H 100 -e peer -F -W loop -P 1 ;;
    h0) exch h0 "${ENG[@]}" -H 0 ;;
    shmbar) exch shmbar "${ENG[@]}" -b shm ;;
    self) TLS=tcp,self exch self "${ENG[@]}" ;;
    engine | enginebase)
        local b=. d
        [ "$1" = enginebase ] && b=$BASE
        d=$(mktemp -d "${TMPDIR:-/tmp}/exchange_matrix.XXXXXX")
        UCX_TLS=tcp $(pin 1) "$b/bench/coll-bench" -i 1 -n 2 -d "$d" --no-header -O \
            -l 8 -a auto -k "$REPS" -w 1000 >/dev/null 2>"$d/err.1" &
        UCX_TLS=tcp $(pin 0) "$b/bench/coll-bench" -i 0 -n 2 -d "$d" --no-header -O \
            -l 8 -a auto -k "$REPS" -w 1000 2>"$d/err.0" |
            awk -F, -v l="$1" '!/^#/ && $4 == 8 { print l ",8," $5 "," $6 "," $7 "," $8 }'
        wait
        rm -rf "$d" ;;
    *) echo "unknown config $1" >&2 ;;
    esac
}

read -r -a cfgs <<<"$CFGS"
n=${#cfgs[@]}
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC') commit $(git -C "$here" describe --always --dirty) load $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT"
for ((r = 1; r <= ROUNDS; r++)); do
    for ((k = 0; k < n; k++)); do
        c=${cfgs[$(((k + r - 1) % n))]}
        run_cfg "$c" | sed "s/^/$r,/" >>"$OUT"
    done
    echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
done
cat "$OUT" | head -3 >&2
