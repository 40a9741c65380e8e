#!/bin/sh
# check_layering.sh - the layer DAG of DESIGN.md §2, read from #include lines.
# TAP output: one test point per rule.
srcdir=${top_srcdir:-$(dirname "$0")/../..}
cd "$srcdir/src" || exit 1

# layer -> layers it may include (besides itself and public headers)
allowed() {
    case "$1" in
        core/util)   echo "" ;;
        core/wire)   echo "core/util" ;;
        core/kvs)    echo "core/util core/wire" ;;
        core/loop)   echo "core/util" ;;
        core/ipc)    echo "core/util core/loop core/wire" ;;
        core/topo)   echo "core/util" ;;
        core/common) echo "core/util core/wire core/kvs core/loop core/ipc core/topo" ;;
        coll)        echo "core/util core/wire core/loop" ;;
        # ib picks each process's HCAs by hwloc distance (topo_near.h)
        pnet)        echo "core/util core/wire core/loop core/topo/topo_near.h" ;;
        ucx)         echo "core/util core/wire core/loop coll/tl.h" ;;
        core/client|core/server)
                     echo "core/util core/wire core/kvs core/loop core/ipc core/topo core/common coll pnet ucx" ;;
        # a tool connects through the client machinery (attach.h only)
        core/tool)   echo "core/util core/wire core/kvs core/loop core/ipc core/topo core/common coll pnet ucx core/client/attach.h" ;;
        run)         echo "core/util core/wire core/kvs core/loop core/ipc core/topo core/common coll pnet ucx core/client core/server core/tool" ;;
        *)           echo "UNKNOWN" ;;
    esac
}

layer_of() {
    case "$1" in
        core/*) echo "$1" | cut -d/ -f1-2 ;;
        *)      echo "$1" | cut -d/ -f1 ;;
    esac
}

n=0
fail=0
violations=""
for f in $(find . -name '*.[ch]' | sed 's|^\./||' | sort); do
    layer=$(layer_of "$(dirname "$f")")
    ok_list=$(allowed "$layer")
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        case "$inc" in
            config.h|*/*) ;;
            *) continue ;;  # same-directory header
        esac
        [ "$inc" = config.h ] && continue
        target=$(layer_of "$(dirname "$inc")")
        [ "$target" = "$layer" ] && continue
        good=no
        for a in $ok_list; do
            if [ "$a" = "$target" ] || [ "$a" = "$inc" ]; then good=yes; fi
        done
        if [ $good = no ]; then
            violations="$violations
$f includes $inc ($layer may not depend on $target)"
        fi
    done
done
n=$((n + 1))
if [ -z "$violations" ]; then
    echo "ok $n - every #include follows the layer DAG"
else
    echo "not ok $n - layer DAG violations:"
    echo "$violations" | sed 's/^/# /'
    fail=1
fi

check_only() {
    # $1 = pattern of the system header, $2 = the only directories allowed
    pat=$1; shift
    bad=$(grep -rlE "^#include <$pat" --include='*.[ch]' . | sed 's|^\./||' \
          | while read -r f; do
                ok=no
                for d in "$@"; do
                    case "$f" in "$d"/*) ok=yes ;; esac
                done
                [ $ok = no ] && echo "$f"
            done)
    n=$((n + 1))
    if [ -z "$bad" ]; then
        echo "ok $n - only $* include <$pat...>"
    else
        echo "not ok $n - <$pat...> included outside $*: $bad"
        fail=1
    fi
}
check_only 'event2/' core/loop core/ipc
check_only 'hwloc' core/topo
check_only 'ucp/' ucx
check_only 'uct/' ucx
echo "1..$n"
exit $fail
