#!/bin/bash
# build_diag.sh - build a DIAGNOSTIC coll-bench whose transport does not
# authenticate payloads, to measure what authentication costs
#
#   bench/build_diag.sh [DIR]      (default DIR: /tmp/rdpmix-diag)
#
# Never use the result for anything but that measurement: its servers
# accept forged payloads.  It checks out the current commit of this
# repository into DIR/src (git worktree), changes one loop in
# src/ucx/ucx_wire.c so that mac_msg covers the header prefix only (both
# sides skip the payload, so messages still verify), builds it in
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

# the payload loop of rdp_ucx_auth_msg, and only it
FILE=$SRC/src/ucx/ucx_wire.c
PATTERN='for (size_t i = 0; i < iovcnt; i++) {'
[ "$(grep -cF "$PATTERN" "$FILE")" = 1 ] ||
    die "the payload loop in $FILE changed: update this script"
sed -i "s/for (size_t i = 0; i < iovcnt; i++) {/for (size_t i = 0; i < iovcnt \&\& 0; i++) { \/* DIAGNOSTIC *\//" "$FILE"
grep -q 'iovcnt && 0; i++' "$FILE" || die "could not patch $FILE"

(cd "$SRC" && autoreconf -fi >"$DIR/autoreconf.log" 2>&1) ||
    die "autoreconf failed (see $DIR/autoreconf.log)"
mkdir -p "$BUILD"
(cd "$BUILD" && "$SRC/configure" -q >"$DIR/configure.log" 2>&1) ||
    die "configure failed (see $DIR/configure.log)"
make -C "$BUILD" -j2 bench/coll-bench >"$DIR/make.log" 2>&1 ||
    die "make failed (see $DIR/make.log)"
echo "$BUILD/bench/coll-bench"
