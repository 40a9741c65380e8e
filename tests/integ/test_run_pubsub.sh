#!/bin/sh
# test_run_pubsub.sh - PMIx_Publish/Lookup/Unpublish answered by
# rdpmix-run's data service, on 1, 2 and 3 nodes: every rank's key seen by
# all with its publisher, a PMIX_WAIT lookup made before the publish, one
# that times out, FIRST_READ, PROC and INDEF persistence, duplicates,
# ranges, unpublish of one and of every key.  Two jobs at once exchange
# GLOBAL data (a waiting lookup made before the other job started, FIRST
# READ across jobs) and see none of each other's NAMESPACE or SESSION
# data; a directory others can enter, or a socket of another user in it,
# is not trusted.  OpenPMIx's examples/pub.c and test/simple/simppub.c
# (RDPMIX_OPENPMIX_SRC, default /work/openpmix-4.2.2) run on 1-3 nodes.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
# launchers of this test find each other here, and nobody else's
export RDPMIX_PEER_DIR="$tmp/peers"
mkdir -m 0700 "$RDPMIX_PEER_DIR"

for m in 1 2 3; do
    job 120 --nodes "$m" -n 5 "$client" pub all
    oks=$(grep -c "^rank [0-4] pub all ok$" "$tmp/out")
    check_that "publish, lookup (also waiting), unpublish on $m nodes" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 5 ]'

    job 120 --nodes "$m" -n 4 "$client" pub proc
    oks=$(grep -c "^rank [0-3] pub proc ok$" "$tmp/out")
    check_that "PERSIST_PROC data ends with its publisher on $m nodes" \
        '[ "$rc" -eq 0 ] && [ "$oks" -eq 4 ]'
done

# two jobs: B waits for A's GLOBAL key, A stays until B is done
for m in 1 2 3; do
    rm -f "$tmp/b_done"
    (
        timeout -k 5 90 "$RUN" --nodes "$m" -n 2 "$client" pub xb \
            >"$tmp/b_out" 2>"$tmp/b_err" </dev/null
        echo $? >"$tmp/b_rc"
        touch "$tmp/b_done"
    ) &
    sleep 0.5
    RUN_CLIENT_WAIT_FILE="$tmp/b_done" job 120 --nodes "$m" -n 2 \
        -x RUN_CLIENT_WAIT_FILE "$client" pub xa
    wait
    b_rc=$(cat "$tmp/b_rc")
    check_that "two jobs on $m nodes share GLOBAL data and nothing else" \
        '[ "$rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && grep -q "^rank 0 pub xb ok$" "$tmp/b_out"'
    [ "$b_rc" -eq 0 ] || sed 's/^/# b: /' "$tmp/b_err" | head -20
done

# a peer directory others can enter is not used; the job still runs
mkdir -m 0755 "$tmp/open"
RDPMIX_PEER_DIR="$tmp/open" job 60 -n 3 "$client" pub all
check_that "an open peer directory is refused with a message" \
    '[ "$rc" -eq 0 ] && grep -q "^rdpmix-run: GLOBAL publish/lookup data stays within this job: $tmp/open is not a private directory" "$tmp/err"'

# a launcher socket of another user (bound in our directory by root,
# listening as nobody) is never sent a question
if [ "$(id -u)" -eq 0 ] && command -v python3 >/dev/null 2>&1; then
    python3 - "$RDPMIX_PEER_DIR/1.sock" >"$tmp/got" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.setgid(65534)
os.setuid(65534)
s.listen(4)
s.settimeout(30)
c, _ = s.accept()
c.settimeout(5)
try:
    data = c.recv(65536)
except OSError:
    data = b""
print(len(data))
PY
    poll '[ -S "$RDPMIX_PEER_DIR/1.sock" ]'
    job 60 -n 1 "$client" pub xnone
    wait # the listener gives up after 35 s at most
    check_that "a launcher socket of another user is not asked" \
        '[ "$rc" -eq 0 ] && [ "$(cat "$tmp/got")" = 0 ]'
else
    skip "needs root and python3 to listen as another user"
fi

# OpenPMIx's own publish/lookup programs (examples/pub.c,
# test/simple/simppub.c), built against our headers and library; the
# latter's internal helpers are stood in for by three tiny headers here
ompix=${RDPMIX_OPENPMIX_SRC:-/work/openpmix-4.2.2}
if [ -f "$ompix/examples/pub.c" ] && [ -f "$ompix/test/simple/simppub.c" ] \
    && command -v cc >/dev/null 2>&1; then
    shim="$tmp/shim"
    mkdir -p "$shim/src/include" "$shim/src/class" "$shim/src/util"
    for h in src/include/pmix_config.h src/class/pmix_object.h \
        src/util/pmix_argv.h src/util/pmix_printf.h; do
        : >"$shim/$h"
    done
    echo '#define PMIX_HIDE_UNUSED_PARAMS(...) do {} while (0)' \
        >"$shim/src/include/pmix_globals.h"
    printf '%s\n' '#include <stdio.h>' \
        '#define pmix_output(id, ...) (fprintf(stderr, __VA_ARGS__), fputc(10, stderr))' \
        >"$shim/src/util/pmix_output.h"
    src=$(cd "${top_srcdir:-.}" && pwd)
    # a sanitizer build's library wants its runtimes linked in first; the
    # leaks of these programs are not ours to report
    san=
    libs=$(ldd "$builddir/.libs/libpmix.so" 2>/dev/null)
    case $libs in *libasan*) san="$san -fsanitize=address" ;; esac
    case $libs in *libubsan*) san="$san -fsanitize=undefined" ;; esac
    for prog in examples/pub.c test/simple/simppub.c; do
        exe="$tmp/$(basename "$prog" .c)"
        # shellcheck disable=SC2086
        cc $san -o "$exe" "$ompix/$prog" -I"$shim" -I"$src" -I"$src/include" \
            -L"$builddir/.libs" -lpmix -Wl,-rpath,"$builddir/.libs" \
            2>"$tmp/cc_err"
        for m in 1 2 3; do
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                job 120 --nodes "$m" -n 4 --tag-output "$exe"
            oks=$(cat "$tmp/out" "$tmp/err" \
                | grep -o "PUBLISH-LOOKUP SUCCEEDED" | wc -l)
            check_that "OpenPMIx's $prog on $m nodes" \
                '[ "$rc" -eq 0 ] && [ "$oks" -eq 3 ]'
        done
    done
else
    skip "OpenPMIx's examples/pub.c and test/simple/simppub.c not found ($ompix)"
fi

finish
