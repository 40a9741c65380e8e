#!/usr/bin/env bash
# quickstart.sh - install build dependencies if missing, build, then either
# run the main job (pmix-bench under rdpmix-run) or the whole test suite.
#
#   ./quickstart.sh run                 # build and run pmix-bench under rdpmix-run
#                                       # (8 ranks on 2 simulated nodes, next
#                                       # to OpenPMIx under mpirun) and print
#                                       # a summary
#   ./quickstart.sh test                # build and run `make check`
#   ./quickstart.sh test --sanitize     # the same in an ASan+UBSan build
#
# Works as root on a fresh Debian bookworm machine (uses sudo otherwise).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-run}
shift || true
sanitize=no
for arg in "$@"; do
    case "$arg" in
        --sanitize) sanitize=yes ;;
        *) echo "quickstart.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

# Build tools and libraries (Debian package names).  libpmix-dev and
# openmpi-bin are test/benchmark-only: the ABI probe compares against
# OpenPMIx's headers and the integration tests run Open MPI programs.
# slurmctld, slurmd, slurm-client and munge are test-only too:
# tests/integ/test_slurm.sh starts its own private two-node Slurm cluster
# with rdpmix's library inside slurmstepd.  python3-matplotlib is
# benchmark-only: bench/summarize_launch.py --plots draws the sweeps.
deps=(build-essential autoconf automake libtool pkg-config
      libucx-dev ucx-utils libevent-dev libhwloc-dev libssl-dev
      libcmocka-dev libpmix-dev libpmix-bin openmpi-bin libopenmpi-dev
      procps python3 python3-matplotlib slurmctld slurmd slurm-client munge)

install_deps() {
    local missing=()
    for p in "${deps[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "quickstart: installing ${missing[*]}"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"
}

build() {
    local dir=$1; shift
    cd "$here"
    if [ ! -x configure ] || [ configure.ac -nt configure ]; then
        autoreconf -fi
    fi
    mkdir -p "$dir"
    cd "$dir"
    if [ ! -f Makefile ]; then
        "$here/configure" -q "$@"
    fi
    make -j2
}

install_deps
case "$mode" in
    run)
        build "$here/_build"
        cd "$here/_build"
        # the main job: the PMIx benchmark, 8 ranks on 2 simulated nodes
        # (two rdpmixd daemons whose servers run the modex over UCX), three
        # launches, each next to the peer: the same under Open MPI's mpirun
        # with OpenPMIx on two fake hosts (bench/README.md)
        raw=$(mktemp --suffix=.csv "${TMPDIR:-/tmp}/rdpmix-run.XXXXXX")
        "$here/bench/compare_nodes.sh" -l 3 -m 2 -p 4 -s 1024 -o "$raw"
        echo
        python3 "$here/bench/summarize_short.py" "$raw"
        rm -rf "$raw" "${raw%.csv}.launches.csv" "${raw%.csv}.logs"
        ;;
    test)
        if [ "$sanitize" = yes ]; then
            build "$here/_build-asan" --enable-sanitizers=address,undefined \
                --enable-debug CFLAGS="-O1 -g"
            cd "$here/_build-asan"
            export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
            export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
            export LSAN_OPTIONS=suppressions=$here/tests/supp/lsan.supp
        else
            build "$here/_build"
            cd "$here/_build"
        fi
        export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
        make -j2 check
        ;;
    *)
        echo "usage: $0 run | test [--sanitize]" >&2
        exit 2
        ;;
esac
