#!/bin/sh
# test_mpirun_host.sh - Debian's Open MPI 4.1.4 `mpirun` as the PMIx host:
# ORTE loads rdpmix's libpmix.so.2 as its PMIx server library (and calls
# client-side functions such as PMIx_Store_internal/PMIx_Get in the same
# process), the unmodified ranks load it as their client library.
builddir=${top_builddir:-.}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integ/ompi_env.sh"
prog="$builddir/tests/integ/mpi_basic"
n=0
fail=0

if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$prog" ]; then
    echo "1..0 # SKIP mpirun or tests/integ/mpi_basic not available"
    exit 0
fi
ourlib=$(cd "$builddir/.libs" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# our library for mpirun and, through its environment, for the ranks;
# loopback only, so the test never touches another interface
LD_LIBRARY_PATH="$ourlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=lo UCX_TLS=self,sm,tcp
# mpirun refuses to run as root unless told (CI containers)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# In the sanitizer build our library needs the ASan runtime loaded first,
# and Debian's mpirun is not built with it: preload it (ranks inherit it)
asan_rt=$(ldd "$ourlib/libpmix.so.2" 2>/dev/null | awk '/libasan/ { print $3 }')
if [ -n "$asan_rt" ]; then
    LD_PRELOAD="$asan_rt${LD_PRELOAD:+:$LD_PRELOAD}"
    export LD_PRELOAD
fi

is_ours() {
    [ "$1" = "$ourlib/libpmix.so.2.0.0" ] || [ "$1" = "$ourlib/libpmix.so.2" ]
}

# mpirun itself: its only child reads the parent's mappings
n=$((n + 1))
if timeout -k 5 60 mpirun -np 1 sh -c \
    'grep -o "/[^ ]*libpmix\.so[^ ]*" "/proc/$PPID/maps" | sort -u' \
    >"$tmp/out" 2>"$tmp/err"
then rc=0; else rc=$?; fi
libs=$(sort -u "$tmp/out")
if [ "$rc" -eq 0 ] && is_ours "$libs"; then
    echo "ok $n - mpirun runs its PMIx server on rdpmix's libpmix ($libs)"
else
    echo "not ok $n - mpirun: exit $rc, libpmix '$libs'"
    sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
    fail=1
fi

check_job() {
    np=$1
    n=$((n + 1))
    if timeout -k 5 120 mpirun --oversubscribe -np "$np" "$prog" "$np" \
        >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]; then
        echo "ok $n - mpirun -np $np: MPI_Init/Allreduce/Allgather/Barrier/ring/Finalize"
    else
        echo "not ok $n - mpirun -np $np: exit $rc, $oks of $np ranks ok"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
    n=$((n + 1))
    libs=$(sed -n 's/.* libpmix=\([^ ]*\).*/\1/p' "$tmp/out" | sort -u)
    if [ -n "$libs" ] && is_ours "$libs"; then
        echo "ok $n - every rank of mpirun -np $np loaded rdpmix's libpmix"
    else
        echo "not ok $n - mpirun -np $np ranks loaded '$libs'"
        fail=1
    fi
}

for np in 1 2 4; do
    check_job "$np"
done
echo "1..$n"
exit $fail
