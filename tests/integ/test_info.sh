#!/bin/sh
# test_info.sh - rdpmix-info runs; --config lists every setting of the
# table (read from config_table.c) with its value and source; --json is
# JSON; required directives on real calls under rdpmix-run on 1-3 nodes;
# no RDPMIX_* setting is read outside the table.
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
