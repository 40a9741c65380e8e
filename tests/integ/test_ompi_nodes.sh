#!/bin/sh
# test_ompi_nodes.sh - Debian's Open MPI 4.1.4 program, unmodified, under
# rdpmix-run --nodes 4 -n 16: its ranks on four simulated nodes, the modex
# across nodes done by the daemons' engine.  Each simulated node has a
# hostname of its own (a UTS namespace), so Open MPI sees four nodes: its
# shared-memory BTL within each, TCP between them, with its default
# transport choice; MPI_Get_processor_name names the rank's node.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

. "${top_srcdir:-.}/tests/integ/ompi_env.sh"
prog="$builddir/tests/integ/mpi_basic"
ourlib=$(cd "$builddir/.libs" && pwd)

export OMPI_MCA_pml=ob1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
host=$(hostname -s)
export UCX_NET_DEVICES=lo UCX_TLS=${UCX_TLS:-tcp}

for map in block node; do
    job 180 --nodes 4 -n 16 --map-by "$map" "$prog" 16
    oks=$(grep -c "^rank [0-9]* of 16 ok" "$tmp/out")
    check_that "Open MPI on 4 nodes, 16 ranks by $map: MPI_Init, Allreduce, Allgather, Barrier, ring, Finalize" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 16 ]'
    libs=$(sed -n 's/.* libpmix=\([^ ]*\).*/\1/p' "$tmp/out" | sort -u)
    check_that "every rank loaded rdpmix's libpmix ($map)" \
        '[ "$libs" = "$ourlib/libpmix.so.2.0.0" ] || [ "$libs" = "$ourlib/libpmix.so.2" ]'
    # by block, ranks 4i..4i+3 are on node i; by node, rank r on r mod 4
    wrong=0
    for r in $(seq 0 15); do
        if [ "$map" = block ]; then i=$((r / 4)); else i=$((r % 4)); fi
        grep -q "^rank $r of 16 ok .* node=$host-n$i\$" "$tmp/out" \
            || wrong=$((wrong + 1))
    done
    check_that "MPI_Get_processor_name gives every rank its node ($map)" \
        '[ "$wrong" -eq 0 ]'
done
check "the daemons removed their tmpdirs" tmpdir_clean

finish
