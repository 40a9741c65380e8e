#!/bin/bash
# build_diag.sh - build a DIAGNOSTIC coll-bench whose transport does not
# authenticate payloads, to measure what authentication costs
#
#   bench/build_diag.sh [DIR]      (default DIR: /tmp/rdpmix-diag)
#
# Never use the result for anything but that measurement: its servers
# accept forged payloads.  It checks out the current commit of this
# repository into DIR/src (git worktree), changes mac_payload in
# src/ucx/ucx_wire.c so that no payload byte enters a MAC (mac_msg covers
# the header prefix only, seals nothing; both sides skip the same bytes,
# so messages still verify), builds it in
# DIR/build and prints the path of its coll-bench.  Then, for example:
#
#   COLL_BENCH=$(bench/build_diag.sh) bench/engine_compare.sh -o diag.csv ...
#
# bench/RESULTS.md ("authentication split") has the measurement.
set -eu

DIR=${1:-/tmp/rdpmix-diag}
TOP=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
SRC=$DIR/src
BUILD=$DIR/build

die() { echo "build_diag: $*" >&2; exit 1; }

mkdir -p "$DIR"
if [ -e "$SRC" ]; then
    git -C "$TOP" worktree remove --force "$SRC" >/dev/null 2>&1 || rm -rf "$SRC"
    git -C "$TOP" worktree prune
fi
git -C "$TOP" worktree add -q --detach "$SRC" HEAD || die "git worktree add failed"

# mac_payload, where payload bytes enter the message MAC and the seals
FILE=$SRC/src/ucx/ucx_wire.c
PATTERN='    return mac_update(g, p, len);'
[ "$(grep -cF "$PATTERN" "$FILE")" = 1 ] ||
    die "mac_payload in $FILE changed: update this script"
sed -i "s/^    return mac_update(g, p, len);/    return PMIX_SUCCESS; \/* DIAGNOSTIC: payload not authenticated *\//" "$FILE"
grep -q 'DIAGNOSTIC: payload not authenticated' "$FILE" || die "could not patch $FILE"

(cd "$SRC" && autoreconf -fi >"$DIR/autoreconf.log" 2>&1) ||
    die "autoreconf failed (see $DIR/autoreconf.log)"
mkdir -p "$BUILD"
(cd "$BUILD" && "$SRC/configure" -q >"$DIR/configure.log" 2>&1) ||
    die "configure failed (see $DIR/configure.log)"
make -C "$BUILD" -j2 bench/coll-bench >"$DIR/make.log" 2>&1 ||
    die "make failed (see $DIR/make.log)"
echo "$BUILD/bench/coll-bench"
