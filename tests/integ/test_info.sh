#!/bin/sh
# test_info.sh - rdpmix-info runs; --config lists every setting of the
# table (read from config_table.c) with its value and source; --json is
# JSON; the trust mode follows RDPMIX_TRUSTED_NETWORK and the isolating
# pnet modules selected; required directives on real calls under
# rdpmix-run on 1-3 nodes; no RDPMIX_* setting is read outside the table.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"
srcdir=${top_srcdir:-.}
INFO=$builddir/src/run/rdpmix-info

info() {
    timeout -k 5 30 "$INFO" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

info
check_that "rdpmix-info runs and names its version" \
    '[ "$rc" -eq 0 ] && grep -q "^  rdpmix  *[0-9]" "$tmp/out"'
check_that "it prints the attributes PMIx_Fence supports" \
    'sed -n "/^  PMIx_Fence (client)/,/^  PMIx_Get/p" "$tmp/out" \
        | grep -q "PMIX_COLLECT_DATA  *pmix.collect"'

# every S(NAME, ...) row of the table
sed -n 's/^ *S(\([A-Z_0-9]*\),.*/RDPMIX_\1/p' "$srcdir/src/core/util/config_table.c" \
    | sort -u >"$tmp/table"
unset RDPMIX_SHM_MIN
RDPMIX_UCX_SPIN_US=42 info --config
missing=""
for name in $(cat "$tmp/table"); do
    grep -q "^  $name=" "$tmp/out" || missing="$missing $name"
done
check_that "--config lists all $(wc -l <"$tmp/table") settings of the table${missing:+ (missing:$missing)}" \
    '[ "$rc" -eq 0 ] && [ -z "$missing" ] && [ "$(wc -l <"$tmp/table")" -gt 20 ]'
check_that "--config shows a value from the environment and its source" \
    'grep -q "^  RDPMIX_UCX_SPIN_US=42  (number, environment)" "$tmp/out"'
check_that "--config shows a default and its source" \
    'grep -q "^  RDPMIX_SHM_MIN=65536  (uint, default)" "$tmp/out"'

info --config --attrs --json
if command -v python3 >/dev/null; then
    check_that "--json prints one JSON object with every setting" \
        '[ "$rc" -eq 0 ] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
names = open(sys.argv[2]).read().split()
assert sorted(d[\"config\"]) == names, sorted(d[\"config\"])
assert \"pmix.collect\" in d[\"attributes\"][\"PMIx_Fence\"][\"supports\"]
" "$tmp/out" "$tmp/table"'
else
    skip "--json (no python3)"
fi

info --bogus
check_that "an unknown option is refused with usage" \
    '[ "$rc" -eq 2 ] && grep -q "unknown option --bogus" "$tmp/err"'

# the trust mode the settings give a job's collective payloads
trust_mode() { sed -n 's/^  mode  *//p' "$tmp/out"; }
RDPMIX_PNET=none RDPMIX_TRUSTED_NETWORK=0 info
check_that "trust: no isolating pnet module, untrusted network -> full" \
    '[ "$rc" -eq 0 ] && [ "$(trust_mode)" = full ] \
        && grep -q "^  payloads  *every collective payload carries a MAC" "$tmp/out"'
RDPMIX_PNET=tcp RDPMIX_TRUSTED_NETWORK=0 info
check_that "trust: tcp ports isolate nothing -> full" \
    '[ "$rc" -eq 0 ] && [ "$(trust_mode)" = full ]'
RDPMIX_PNET=tcp,ib RDPMIX_TRUSTED_NETWORK=0 info
check_that "trust: ib selected -> isolated by pnet, names ib" \
    '[ "$rc" -eq 0 ] && [ "$(trust_mode)" = "isolated by pnet" ] \
        && grep -q "^  isolating_modules  *ib$" "$tmp/out" \
        && grep -q "^  RDPMIX_PNET  *tcp,ib$" "$tmp/out"'
RDPMIX_PNET=none RDPMIX_TRUSTED_NETWORK=1 info
check_that "trust: RDPMIX_TRUSTED_NETWORK=1 -> trusted network" \
    '[ "$rc" -eq 0 ] && [ "$(trust_mode)" = "trusted network" ] \
        && grep -q "^  RDPMIX_TRUSTED_NETWORK  *1$" "$tmp/out"'
RDPMIX_PNET=bogus RDPMIX_TRUSTED_NETWORK=0 info
check_that "trust: an invalid RDPMIX_PNET gives no mode" \
    '[ "$(trust_mode)" = "unknown (RDPMIX_PNET is invalid)" ]'
if command -v python3 >/dev/null; then
    RDPMIX_PNET=opa,sshot RDPMIX_TRUSTED_NETWORK=0 info --json
    check_that "trust in --json: opa and sshot isolate" \
        '[ "$rc" -eq 0 ] && python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))[\"trust\"]
assert t[\"mode\"] == \"isolated by pnet\", t
assert sorted(t[\"isolating_modules\"].split(\",\")) == [\"opa\", \"sshot\"], t
" "$tmp/out"'
fi
# (a shell may keep assignments made for a function call)
unset RDPMIX_PNET RDPMIX_TRUSTED_NETWORK

# required directives on real calls across 1, 2 and 3 nodes: unsupported
# ones fail the call, optional ones are ignored, supported ones work
client="$builddir/tests/integ/run_client"
for m in 1 2 3; do
    job 60 --nodes "$m" -n 4 "$client" nodes directives
    oks=$(grep -c "^rank [0-3] directives ok$" "$tmp/out")
    check_that "required directives on $m nodes: unsupported -> NOT_SUPPORTED, optional ignored" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 4 ]'
done

# the settings are read in one place: every getenv of an RDPMIX_ name in
# src is config_table.c's (new ones from other branches carry a
# "config: RDPMIX_X" comment until they are folded into the table)
grep -rn 'getenv("RDPMIX_' "$srcdir/src" | grep -v 'config: RDPMIX_' \
    >"$tmp/stray" || true
check_that "no RDPMIX_ setting is read outside the table" \
    '[ ! -s "$tmp/stray" ] || { sed "s/^/# /" "$tmp/stray"; false; }'
finish
