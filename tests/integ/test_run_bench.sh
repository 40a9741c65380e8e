#!/bin/sh
# test_run_bench.sh - pmix-bench's phases under rdpmix-run on 1, 2 and 3
# nodes: every phase (barrier, modex, repeated modex fence, connect, group
# construct/destruct)
# gives one CSV row with numbers; -p runs only the phase groups it names;
# a bad -p is refused.  Under Debian's mpirun + OpenPMIx 4.2.2 (ORTE has no
# group support) the group rows are marked "unsupported" and the other
# phases still run (skipped without mpirun).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

bench="$builddir/bench/pmix-bench"
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo} UCX_TLS=${UCX_TLS:-tcp}
all="init fence put commit fence_collect get fence_collect_rep connect disconnect group_construct group_destruct"

# phases_are "PHASES": the rows of $tmp/out name exactly these phases, in
# this order
phases_are() {
    [ "$(grep -v '^impl,' "$tmp/out" | cut -d, -f4 | tr '\n' ' ')" = "$1 " ]
}

# numbers N K: every row is of an N-rank job, has numeric times, and the
# repeated phases have K reps
numbers() {
    awk -F, -v n="$1" -v k="$2" '
        $1 == "impl" { next }
        { rows++ }
        $2 != n || NF != 8 { bad++ }
        $4 ~ /^(fence|fence_collect_rep|connect|disconnect|group_[a-z]*)$/ &&
            $5 != k { bad++ }
        $6 !~ /^[0-9.]+$/ || $7 !~ /^[0-9.]+$/ || $8 !~ /^[0-9.]+$/ { bad++ }
        END { exit !(rows > 0 && bad == 0) }' "$tmp/out"
}

for m in 1 2 3; do
    job 120 --nodes "$m" -n 4 "$bench" -k 2 -s 100
    check_that "every phase on $m node(s): exit 0, one row each" \
        '[ "$rc" -eq 0 ] && phases_are "$all"'
    check "every row has numbers and K reps ($m node(s))" numbers 4 2

    job 120 --nodes "$m" -n 4 "$bench" -k 2 -p group,connect --no-header
    check_that "-p group,connect on $m node(s) runs only those" \
        '[ "$rc" -eq 0 ] && phases_are "init connect disconnect group_construct group_destruct"'
    check "their rows have numbers ($m node(s))" numbers 4 2
done

job 120 --nodes 2 -n 3 "$bench" -k 2 -p fence,modex -m direct
check_that "-p fence,modex -m direct: no connect or group rows" \
    '[ "$rc" -eq 0 ] && phases_are "init fence put commit fence_nocollect get"'
job 120 --nodes 2 -n 3 "$bench" -k 3 -p modex_rep
check_that "-p modex_rep: the repeated modex fence alone, K reps" \
    '[ "$rc" -eq 0 ] && phases_are "init fence_collect_rep" && numbers 3 3'

# -l lines the ranks up between the modex fence and its gets too: the
# server answers one more collective than without it (the line-up before
# the modex, the modex, the one before verification, the report)
fences_answered() {
    grep -c "collective [0-9]*: answer packed" "$tmp/err"
}
for opt in "" -l; do
    RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
        job 120 --nodes 1 -n 3 "$bench" -p modex -s 100 $opt
    eval "fences_${opt#-}=\$(fences_answered)"
    check_that "-p modex ${opt:-without -l}: exit 0, one row per phase" \
        '[ "$rc" -eq 0 ] && phases_are "init put commit fence_collect get"'
done
check_that "-l adds the line-up before the gets (fences: $fences_ without, $fences_l with)" \
    '[ "$fences_" -ge 4 ] && [ "$fences_l" -eq $((fences_ + 1)) ]'

"$bench" -p fence,bogus >"$tmp/out" 2>"$tmp/err"
rc=$?
check_that "an unknown -p name is refused" \
    '[ "$rc" -eq 1 ] && grep -q "bad -p .fence,bogus." "$tmp/err"'

# OpenPMIx under ORTE: PMIx_Group_construct answers PMIX_ERR_NOT_SUPPORTED
ompi_pmix=$(pkg-config --variable=libdir pmix 2>/dev/null)
if command -v mpirun >/dev/null 2>&1 && [ -e "$ompi_pmix/libpmix.so.2" ]; then
    rc=0
    # Debian's library, not ours: no LD_LIBRARY_PATH; Open MPI leaks at exit
    env -u LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo \
        OMPI_MCA_btl_tcp_if_include=lo \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        timeout -k 5 120 mpirun --oversubscribe --bind-to none -np 2 \
        "$bench" -k 2 -p connect,group >"$tmp/out" 2>"$tmp/err" </dev/null ||
        rc=$?
    check_that "under mpirun + OpenPMIx: exit 0, the group rows unsupported" \
        '[ "$rc" -eq 0 ] && grep -q "^OpenPMIx" "$tmp/out" &&
         [ "$(grep -c ",group_[a-z]*,0,unsupported,unsupported,unsupported$" "$tmp/out")" -eq 2 ]'
    check_that "under mpirun + OpenPMIx: connect and disconnect measured" \
        '[ "$(grep -c ",\(dis\)\{0,1\}connect,2,[0-9.]*,[0-9.]*,[0-9.]*$" "$tmp/out")" -eq 2 ]'
else
    skip "mpirun or Debian's OpenPMIx not available (unsupported rows)"
fi

finish
