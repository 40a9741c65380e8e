#!/bin/sh
# test_conformance.sh - `make check` entry of conformance.sh: OpenPMIx
# 4.2.2's example and test/simple programs on rdpmix and on OpenPMIx under
# mpirun. Skipped unless RDPMIX_OPENPMIX_SRC names an OpenPMIx 4.2.2 source
# tree (the test never downloads anything); RDPMIX_CONFORMANCE_ARGS adds
# options (e.g. "--only hello,client --timeout 30").
srcdir=${top_srcdir:-$(dirname "$0")/../..}
builddir=${top_builddir:-.}

if [ -z "${RDPMIX_OPENPMIX_SRC:-}" ]; then
    echo "1..0 # SKIP RDPMIX_OPENPMIX_SRC (an OpenPMIx 4.2.2 source tree) not set"
    exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086 # the extra options are words
"$srcdir/tests/conformance/conformance.sh" --build-dir "$builddir" \
    ${RDPMIX_CONFORMANCE_ARGS:-} "$RDPMIX_OPENPMIX_SRC" >"$out" 2>&1
rc=$?
echo "1..1"
sed 's/^/# /' "$out"
case $rc in
0) echo "ok 1 - no program that passes on OpenPMIx under mpirun fails on rdpmix" ;;
1) echo "not ok 1 - programs pass on OpenPMIx under mpirun but not on rdpmix (REGRESSION lines)" ;;
*) echo "not ok 1 - conformance.sh exited with status $rc" ;;
esac
exit 0
