#!/bin/bash
# ucx_exchange.sh - run bench/ucx-exchange's two ranks once with the same
# switches, the environment of bench/engine_compare.sh (UCX over tcp on lo)
#
#   bench/ucx_exchange.sh [ucx-exchange switches]   (from the build directory)
#
# Prints rank 0's CSV line (bench/ucx_exchange.c: -h lists the switches
# and the columns).  UCX_TLS defaults to tcp, as the engine's; PIN=1 pins
# the ranks to cores 0 and 1.
set -u
exe=${UCX_EXCHANGE:-./bench/ucx-exchange}
[ -x "$exe" ] || { echo "ucx_exchange.sh: no $exe" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ucx_exchange.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
# PIN=1: rank 0 on core 0, rank 1 on core 1 (taskset)
pin() { if [ -n "${PIN:-}" ]; then echo "taskset -c $1"; fi; }
$(pin 1) timeout -k 5 120 "$exe" -i 1 -d "$dir" "$@" >"$dir/out.1" 2>"$dir/err.1" &
pid=$!
$(pin 0) timeout -k 5 120 "$exe" -i 0 -d "$dir" "$@" 2>"$dir/err.0"
rc=$?
wait $pid
rc1=$?
if [ $rc != 0 ] || [ $rc1 != 0 ]; then
    echo "ucx_exchange.sh: rc $rc / $rc1: $*" >&2
    cat "$dir"/err.* >&2
    exit 1
fi
