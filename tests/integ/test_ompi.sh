#!/bin/sh
# test_ompi.sh - Debian's Open MPI 4.1.4 programs, unmodified, under
# rdpmix-run with rdpmix's libpmix.so.2 loaded instead of OpenPMIx.
builddir=${top_builddir:-.}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integ/ompi_env.sh"
run="$builddir/src/run/rdpmix-run"
prog="$builddir/tests/integ/mpi_basic"
ourlib=$(cd "$builddir/.libs" && pwd)
n=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the launchers of this test share GLOBAL publish data only with each
# other and leave no per-user directory behind (docs/run.md, "Publish and
# lookup")
export RDPMIX_PEER_DIR="$tmp/launchers"
mkdir -m 0700 "$RDPMIX_PEER_DIR"

# Open MPI must not need anything special from the user: only loopback
# transports are pinned so the test never touches another interface.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=lo UCX_TLS=self,sm,tcp

check_job() {
    np=$1
    n=$((n + 1))
    if timeout -k 5 120 "$run" -n "$np" "$prog" "$np" >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ]; then
        echo "ok $n - MPI_Init/Allreduce/Allgather/Barrier/ring/Finalize on $np ranks"
    else
        echo "not ok $n - $np ranks: exit $rc, $oks of $np ranks ok"
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -40
        fail=1
    fi
    n=$((n + 1))
    libs=$(sed -n 's/.* libpmix=\([^ ]*\).*/\1/p' "$tmp/out" | sort -u)
    if [ -n "$libs" ] && [ "$libs" = "$ourlib/libpmix.so.2.0.0" ] \
        || [ "$libs" = "$ourlib/libpmix.so.2" ]; then
        echo "ok $n - every rank of the $np-rank job loaded rdpmix's libpmix ($libs)"
    else
        echo "not ok $n - $np ranks loaded: '$libs', expected $ourlib/libpmix.so.2*"
        fail=1
    fi
}

# Open MPI's MPI_Init loads the node's topology from PMIX_HWLOC_XML_V2,
# which rdpmixd registers for two or more local ranks, instead of
# discovering the machine in every rank (hwloc_base_verbose 1 says which)
check_topology() {
    np=$1 want=$2
    shift 2
    n=$((n + 1))
    if env "$@" timeout -k 5 120 "$run" -x OMPI_MCA_hwloc_base_verbose=1 \
        -n "$np" "$prog" "$np" >"$tmp/out" 2>"$tmp/err"
    then rc=0; else rc=$?; fi
    got=$(grep -c "hwloc:base $want" "$tmp/out" "$tmp/err" \
        | awk -F: '{ s += $NF } END { print s + 0 }')
    oks=$(grep -c "^rank [0-9]* of $np ok" "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$oks" -eq "$np" ] && [ "$got" -eq "$np" ]; then
        echo "ok $n - $np ranks $*: every rank's Open MPI says \"$want\""
    else
        echo "not ok $n - $np ranks $*: exit $rc, $oks ranks ok, $got of $np say \"$want\""
        sed 's/^/# /' "$tmp/out" "$tmp/err" | grep -v "^# rank" | head -20
        fail=1
    fi
}

# On a node without a device for any MTL (run/fabric.h) the Open MPI
# personality leaves the psm, psm2 and ofi MTLs out, unless the user or
# the site chose an MTL or a PML; with a device it leaves them alone
check_mtl() {
    want=$1 what=$2
    shift 2
    n=$((n + 1))
    got=$(env "$@" timeout -k 5 60 "$run" $xopt -n 1 /usr/bin/env 2>"$tmp/err" \
        | sed -n 's/^OMPI_MCA_mtl=//p')
    if [ "$got" = "$want" ]; then
        echo "ok $n - $what: OMPI_MCA_mtl='$got'"
    else
        echo "not ok $n - $what: OMPI_MCA_mtl='$got', expected '$want'"
        sed 's/^/# /' "$tmp/err" | head -5
        fail=1
    fi
}
fabric=
for d in /sys/class/infiniband/* /dev/hfi1_* /dev/ipath* /dev/cxi*; do
    [ -e "$d" ] && fabric=$d
done
if [ -z "$fabric" ]; then
    xopt= check_mtl "^psm,psm2,ofi" "no fabric device here"
else
    xopt= check_mtl "" "fabric device $fabric"
fi
xopt="-x OMPI_MCA_mtl=ofi" check_mtl "ofi" "-x OMPI_MCA_mtl=ofi is kept"
xopt= check_mtl "" "OMPI_MCA_pml chosen by the user" OMPI_MCA_pml=ob1
xopt=--no-ompi check_mtl "" "--no-ompi"
xopt= check_mtl "" "RDPMIX_OMPI_SKIP_MTL=0" RDPMIX_OMPI_SKIP_MTL=0
mkdir -p "$tmp/home/.openmpi"
echo "mtl = psm2" >"$tmp/home/.openmpi/mca-params.conf"
xopt= check_mtl "" "the user's parameter file chooses an MTL" HOME="$tmp/home"

for np in 1 2 4 8; do
    check_job "$np"
done
check_topology 4 "loading topology from XML"
check_topology 4 "discovering topology" RDPMIX_TOPO_XML=0
# ... and only for a program linked with Open MPI: any other would only
# wait for the daemon's discovery (its debug log says when it gives one)
check_topo_log() {
    prog_=$1 want=$2
    n=$((n + 1))
    got=$(env RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=run timeout -k 5 60 \
        "$run" -n 2 "$prog_" 2>&1 >/dev/null | grep -c "this node's topology")
    if [ "$got" -eq "$want" ]; then
        echo "ok $n - 2 ranks of $(basename "$prog_"): topology given $got time(s)"
    else
        echo "not ok $n - 2 ranks of $(basename "$prog_"): topology given $got time(s), expected $want"
        fail=1
    fi
}
check_topo_log "$prog" 1
check_topo_log /bin/true 0
echo "1..$n"
exit $fail
