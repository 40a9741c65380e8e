#!/bin/sh
# check_error_strings.sh - PMIx_Error_string of the built libpmix.so.2
# says what OpenPMIx 4.2.2's says for every status code from -4000 to
# 4000 that it knows (scripts and test suites compare these strings): against the
# checked-in table always, and against OpenPMIx's own library when it is
# installed.  The codes are read through gen_error_strings.sh's dumper.
builddir=${top_builddir:-.}
srcdir=${top_srcdir:-.}
ours=$builddir/.libs/libpmix.so.2
gen=$srcdir/src/core/util/gen_error_strings.sh
# OpenPMIx's library: libpmix-dev's pkg-config file, else where Debian's
# libpmix2 (a dependency of Open MPI) puts it
libdir=$(pkg-config --variable=libdir pmix 2>/dev/null)
[ -n "$libdir" ] || libdir=/usr/lib/$(cc -print-multiarch 2>/dev/null)/pmix2/lib
theirs=${OPENPMIX_LIB:-$libdir/libpmix.so.2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a sanitizer build's library needs its runtime loaded first into the
# (uninstrumented) dumper that opens it
asan=$(ldd "$ours" 2>/dev/null | sed -n 's/.*libasan[^ ]* => \([^ ]*\).*/\1/p')
if [ -n "$asan" ]; then
    LD_PRELOAD=$asan
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export LD_PRELOAD ASAN_OPTIONS
fi

echo "1..2"
# the table lines only (the header comment names the library)
# codes of our headers that OpenPMIx 4.2.2 does not know read as their
# constant's name ("PMIX_ERR_IOF_XOFF"; test_pretty checks each): left out
"$gen" "$ours" | grep '^    {' | grep -v ', "PMIX_' >"$tmp/ours" 2>"$tmp/err"
grep '^    {' "$srcdir/src/core/util/error_strings.h" >"$tmp/table"
if [ -s "$tmp/ours" ] && cmp -s "$tmp/ours" "$tmp/table"; then
    echo "ok 1 - PMIx_Error_string gives the checked-in table, and 'ERROR STRING NOT FOUND' elsewhere"
else
    echo "not ok 1 - PMIx_Error_string gives the checked-in table, and 'ERROR STRING NOT FOUND' elsewhere"
    diff "$tmp/table" "$tmp/ours" | head -20 | sed 's/^/# /'
    sed 's/^/# /' "$tmp/err"
fi
if [ ! -f "$theirs" ] || ! "$gen" "$theirs" 2>/dev/null | grep '^    {' >"$tmp/theirs"; then
    echo "ok 2 # SKIP no OpenPMIx library at $theirs"
elif cmp -s "$tmp/ours" "$tmp/theirs"; then
    echo "ok 2 - every string is OpenPMIx's ($theirs)"
else
    echo "not ok 2 - every string is OpenPMIx's ($theirs)"
    diff "$tmp/theirs" "$tmp/ours" | head -20 | sed 's/^/# /'
fi
