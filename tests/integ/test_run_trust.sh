#!/bin/sh
# test_run_trust.sh - trust follows the fabric (docs/design.md): with
# RDPMIX_TRUSTED_NETWORK=1 (the site trusts the network between servers)
# the daemons send collective payloads without a MAC, and every rank
# still gets every peer's bytes intact (pmix-bench verifies them) on 2 and
# 3 nodes, with every allgather algorithm and 64 KiB per rank (ring
# pieces, blocks that would otherwise be sealed).  Without it no server
# says it sends payloads open.  A job whose pnet module gives it an
# isolation domain (opa) runs open by itself.  Forged open payloads on an authenticating
# job: tests/unit/test_coll_engine.c and test_ucx_tl.c.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

bench="$builddir/bench/pmix-bench"
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo} UCX_TLS=${UCX_TLS:-tcp}
export RDPMIX_LOG_LEVEL=info RDPMIX_LOG_SUBSYS=server

for m in 2 3; do
    for alg in rd bruck ring; do
        RDPMIX_TRUSTED_NETWORK=1 RDPMIX_COLL_ALG=$alg \
            job 120 --nodes "$m" -n $((2 * m)) "$bench" -k 2 -s 65536 \
            -p modex,modex_rep --no-header
        said=$(grep -c "collective payloads between servers travel without a MAC" "$tmp/err")
        check_that "open payloads, $alg on $m nodes: every peer's 64 KiB verified" \
            '[ "$rc" -eq 0 ] && [ "$(grep -c "^rdpmix" "$tmp/out")" -ge 4 ]'
        check_that "every server of the $m said it sends payloads open ($alg)" \
            '[ "$said" -ge "$m" ]'
    done
    job 120 --nodes "$m" -n $((2 * m)) "$bench" -k 2 -s 65536 \
        -p modex --no-header
    check_that "authenticated payloads on $m nodes: verified, nothing sent open" \
        '[ "$rc" -eq 0 ] && ! grep -q "without a MAC" "$tmp/err"'
done

# A job that pnet gives an isolation domain (opa's job key) runs open,
# one with only a port block (tcp) does not
export RDPMIX_PNET_STATE_DIR="$tmp/pnet-state"
export RDPMIX_PNET_CONF="$tmp/pnet.conf"
printf 'tcp_ports = 42000-42063\ntcp_ports_per_job = 32\n' >"$RDPMIX_PNET_CONF"
for m in 2 3; do
    job 120 --nodes "$m" -n "$m" --pnet opa "$bench" -k 2 -s 65536 \
        -p modex --no-header
    said=$(grep -c "its fabric isolates it; collective payloads" "$tmp/err")
    check_that "a job with an OPA job key on $m nodes runs open, data verified" \
        '[ "$rc" -eq 0 ] && [ "$said" -ge "$m" ]'
    job 120 --nodes "$m" -n "$m" --pnet tcp "$bench" -k 2 -s 65536 \
        -p modex --no-header
    check_that "a job with only a port block on $m nodes stays authenticated" \
        '[ "$rc" -eq 0 ] && ! grep -q "without a MAC" "$tmp/err"'
done

finish
