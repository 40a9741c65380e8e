#!/bin/sh
# conformance.sh - build OpenPMIx 4.2.2's example and test/simple programs
# against rdpmix and against Debian's OpenPMIx 4.2.2, run them under
# rdpmix-run and under Open MPI 4.1.4's mpirun, and compare the results.
#
# Usage: conformance.sh [options] OPENPMIX_SRC
#        conformance.sh [options] --download DIR
# Options:
#   --build-dir DIR  rdpmix's build directory (default $RDPMIX_BUILD_DIR,
#                    else _build under the source tree)
#   --work DIR       where binaries and logs go (default: a new directory
#                    under $TMPDIR, removed at the end unless --keep)
#   --keep           keep the work directory
#   --timeout S      limit of each run in seconds (default 60)
#   --only LIST      run only these programs (comma-separated names)
#   --stacks LIST    rdpmix,openpmix (default both)
#   --no-2nodes      skip the two-node layouts
#   --download DIR   fetch Debian's pmix_4.2.2.orig.tar.xz into DIR and
#                    extract it there (DIR/pmix-4.2.2); a second run
#                    reuses both
#
# One line per (program, stack, layout):  RESULT PROGRAM STACK LAYOUT [why]
# with RESULT PASS, FAIL, TIMEOUT or SKIP; then a summary. The exit status
# is 1 when a program that passes on OpenPMIx under mpirun fails on rdpmix
# in the same layout and tests/conformance/expected-differences.txt does
# not list it, 2 on usage errors, else 0. docs/conformance.md explains the
# layouts and what "pass" means.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
manifest="$here/programs.txt"
expected="$here/expected-differences.txt"
tarball_url=http://deb.debian.org/debian/pool/main/p/pmix/pmix_4.2.2.orig.tar.xz
openpmix_libdir=/usr/lib/x86_64-linux-gnu/pmix2/lib

build_dir=${RDPMIX_BUILD_DIR:-$top/_build}
work=
keep=0
limit=60
only=
stacks=rdpmix,openpmix
two_nodes=1
download=
src=

usage() {
    sed -n '/^# Usage:/,/^# One line/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

parse_args() {
    while [ $# -gt 0 ]; do
        case $1 in
        --build-dir) build_dir=${2:?}; shift ;;
        --work) work=${2:?}; shift ;;
        --keep) keep=1 ;;
        --timeout) limit=${2:?}; shift ;;
        --only) only=${2:?}; shift ;;
        --stacks) stacks=${2:?}; shift ;;
        --no-2nodes) two_nodes=0 ;;
        --download) download=${2:?}; shift ;;
        -h | --help) usage ;;
        -*) echo "conformance.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$src" ] || usage; src=$1 ;;
        esac
        shift
    done
    if [ -n "$download" ]; then
        [ -z "$src" ] || usage
        src=$(fetch_openpmix "$download") || exit 1
    fi
    [ -n "$src" ] || usage
    if [ ! -f "$src/examples/hello.c" ] || [ ! -d "$src/test/simple" ]; then
        echo "conformance.sh: $src is not an OpenPMIx source tree" >&2
        exit 2
    fi
    src=$(cd "$src" && pwd)
    case $limit in '' | *[!0-9]*) echo "conformance.sh: bad --timeout" >&2; exit 2 ;; esac
}

# Download and extract Debian's orig tarball (its top directory is
# pmix-4.2.2); print the tree's path.
fetch_openpmix() {
    dir=$1
    mkdir -p "$dir" || return 1
    tar="$dir/pmix_4.2.2.orig.tar.xz"
    if [ ! -s "$tar" ]; then
        echo "conformance.sh: downloading $tarball_url" >&2
        if command -v curl >/dev/null 2>&1; then
            curl -fsSL -o "$tar.part" "$tarball_url" || return 1
        else
            wget -q -O "$tar.part" "$tarball_url" || return 1
        fi
        mv "$tar.part" "$tar"
    fi
    top_dir=$(tar -tJf "$tar" | head -n 1 | cut -d/ -f1)
    tree="$dir/$top_dir"
    if [ -z "$top_dir" ] || [ ! -f "$tree/examples/hello.c" ]; then
        tar -C "$dir" -xJf "$tar" || return 1
    fi
    [ -n "$top_dir" ] && [ -f "$tree/examples/hello.c" ] || {
        echo "conformance.sh: $tar has no examples/hello.c" >&2
        return 1
    }
    echo "$tree"
}

has_stack() {
    case ",$stacks," in *",$1,"*) return 0 ;; esac
    return 1
}

selected() {
    [ -z "$only" ] && return 0
    case ",$only," in *",$1,"*) return 0 ;; esac
    return 1
}

# --- building ---------------------------------------------------------------

# Each stack gets an include directory in which "include/pmix.h" (what
# test/simple's programs include) is that stack's header, never the
# OpenPMIx source tree's own.
prepare_includes() {
    mkdir -p "$work/inc-rdpmix" "$work/inc-openpmix"
    ln -sfn "$top/include" "$work/inc-rdpmix/include"
    ln -sfn "$(pkg-config --variable=includedir pmix 2>/dev/null ||
        echo /usr/lib/x86_64-linux-gnu/pmix2/include)" \
        "$work/inc-openpmix/include"
}

stack_flags() {
    case $1 in
    rdpmix)
        echo "-I$work/inc-rdpmix -I$top/include" \
            "-L$build_dir/.libs -lpmix -Wl,-rpath,$build_dir/.libs"
        ;;
    openpmix)
        echo "-I$work/inc-openpmix $(pkg-config --cflags --libs pmix)" \
            "-Wl,-rpath,$openpmix_libdir"
        ;;
    esac
}

# build STACK NAME SOURCE: compile into $work/bin/STACK/NAME; the compiler's
# messages go to $work/log/build-STACK-NAME.log.
build() {
    stack=$1 name=$2 file=$3
    out="$work/bin/$stack/$name"
    [ -x "$out" ] && return 0
    dir=$(dirname "$src/$file")
    # shellcheck disable=SC2046 # the flags are words
    nice ${CC:-cc} -g -O0 -w -I"$dir" -o "$out" "$src/$file" \
        $(stack_flags "$stack") -lpthread \
        >"$work/log/build-$stack-$name.log" 2>&1
}

# build_also STACK CHECK...: build the programs an also=NAME check names
# (a program this one starts, e.g. dynamic.c's ./client), from the
# manifest's line for NAME, even when --only leaves NAME out.
build_also() {
    stack=$1
    shift
    for c in "$@"; do
        case $c in
        also=*)
            also_file=$(awk -v n="${c#also=}" '$1 == n { print $2; exit }' "$manifest")
            # a subshell: build() sets name and file, which callers use
            [ -n "$also_file" ] && (build "$stack" "${c#also=}" "$also_file")
            ;;
        esac
    done
    return 0
}

# --- running ----------------------------------------------------------------

# Several "nodes" for mpirun (docs/conformance.md): made-up host names in a
# hostfile, and an rsh agent that drops the host name and runs orted here,
# with a temporary directory of its own per host name.
prepare_mpirun_nodes() {
    printf 'cfnode1 slots=2\ncfnode2 slots=2\n' >"$work/hostfile"
    cat >"$work/fake-rsh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case \$1 in -*) shift ;; *) break ;; esac
done
host=\$1; shift
mkdir -p "$work/orte-\$host"
OMPI_MCA_orte_tmpdir_base="$work/orte-\$host" exec sh -c "\$*"
EOF
    chmod +x "$work/fake-rsh"
}

# launch STACK LAYOUT NP PROG [ARG]: the command line of one run.
launch_cmd() {
    stack=$1 layout=$2 np=$3
    shift 3
    case $stack-$layout in
    rdpmix-1node) echo "$run -n $np $*" ;;
    rdpmix-2nodes) echo "$run --nodes 2 -n $np $*" ;;
    openpmix-1node) echo "mpirun --oversubscribe -np $np $*" ;;
    openpmix-2nodes)
        echo "mpirun --hostfile $work/hostfile --mca plm_rsh_agent" \
            "$work/fake-rsh --mca btl self,tcp -np $np $*"
        ;;
    *-alone) echo "$*" ;;
    esac
}

# The environment of one run: OpenPMIx's programs and mpirun must not see
# rdpmix's library, and everything stays on loopback.
run_env() {
    case $1 in
    openpmix) echo "env -u LD_LIBRARY_PATH -u LD_PRELOAD" ;;
    *) echo "env" ;;
    esac
}

# count_np SPEC NP: a "need" count (np, np-1 or a number).
count_np() {
    case $1 in
    np) echo "$2" ;;
    np-1) echo $(($2 - 1)) ;;
    *) echo "$1" ;;
    esac
}

# judge RC OUTFILE NP CHECK...: print PASS or "FAIL why".
judge() {
    rc=$1 outf=$2 np=$3
    shift 3
    [ "$timed_out" -eq 1 ] && { echo "TIMEOUT after ${limit} s"; return; }
    for c in "$@"; do
        case $c in
        exit=0) [ "$rc" -eq 0 ] || { echo "FAIL exit status $rc"; return; } ;;
        exit=nonzero) [ "$rc" -ne 0 ] || { echo "FAIL exit status 0"; return; } ;;
        bad=*)
            line=$(grep -E -m1 -e "${c#bad=}" "$outf")
            [ -z "$line" ] || { echo "FAIL printed: $(echo "$line" | cut -c1-100)"; return; }
            ;;
        need=*)
            spec=${c#need=}
            want=$(count_np "${spec%%:*}" "$np")
            got=$(grep -E -c -e "${spec#*:}" "$outf")
            [ "$got" -ge "$want" ] ||
                { echo "FAIL $got of $want lines match '${spec#*:}'"; return; }
            ;;
        esac
    done
    echo PASS
}

# run_one NAME STACK LAYOUT NP ARG CHECK...: one run, one result line.
run_one() {
    name=$1 stack=$2 layout=$3 np=$4 arg=$5
    shift 5
    [ "$arg" = - ] && arg=
    prog="$work/bin/$stack/$name"
    log="$work/log/$name.$stack.$layout.log"
    if [ ! -x "$prog" ]; then
        report SKIP "$name" "$stack" "$layout" \
            "did not build (see $work/log/build-$stack-$name.log)"
        return
    fi
    cmd=$(launch_cmd "$stack" "$layout" "$np" "$prog" $arg)
    # the programs' cwd is their bin directory: dynamic.c spawns ./client;
    # the group's redirection also catches the shell's own "Killed"
    t0=$(date +%s)
    {
        (cd "$work/bin/$stack" &&
            $(run_env "$stack") timeout -k 10 "$limit" nice $cmd) </dev/null >"$log" 2>&1
        rc=$?
    } 2>>"$log"
    timed_out=0
    if [ "$rc" -eq 124 ] ||
        { [ "$rc" -eq 137 ] && [ $(($(date +%s) - t0)) -ge "$limit" ]; }; then
        timed_out=1
    fi
    result=$(judge "$rc" "$log" "$np" "$@")
    report "${result%% *}" "$name" "$stack" "$layout" \
        "$(echo "$result" | sed -n 's/^[A-Z]* //p')"
}

report() {
    printf '%-7s %-18s %-8s %-7s %s\n' "$1" "$2" "$3" "$4" "$5"
    printf '%s %s %s %s\n' "$1" "$2" "$3" "$4" >>"$work/results"
}

layouts_for() {
    case $1 in
    tool) echo alone ;;
    *) [ "$two_nodes" -eq 1 ] && echo "1node 2nodes" || echo 1node ;;
    esac
}

stacks_list() { echo "$stacks" | tr ',' ' '; }

run_program() {
    name=$1 file=$2 kind=$3
    shift 3
    case $kind in
    internal | na)
        for s in $(stacks_list); do
            report SKIP "$name" "$s" - "$kind: $*"
        done
        return
        ;;
    esac
    np=$1 arg=$2
    shift 2
    for s in $(stacks_list); do
        build "$s" "$name" "$file"
        build_also "$s" "$@"
        for l in $(layouts_for "$kind"); do
            run_one "$name" "$s" "$l" "$np" "$arg" "$@"
        done
    done
}

# --- comparing --------------------------------------------------------------

# expected_diff NAME LAYOUT: the reason rdpmix may differ there, if listed.
expected_diff() {
    awk -v n="$1" -v l="$2" '
        /^#/ || NF < 3 { next }
        $1 == n && ($2 == l || $2 == "*") {
            $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit
        }' "$expected"
}

result_of() {
    awk -v n="$1" -v s="$2" -v l="$3" '$2 == n && $3 == s && $4 == l { print $1 }' \
        "$work/results"
}

# Every program that passes on OpenPMIx under mpirun and does not on rdpmix
# in the same layout is a regression unless expected-differences.txt names
# it.
compare() {
    regressions=0
    has_stack rdpmix && has_stack openpmix || return 0
    echo
    echo "Differences (passes on OpenPMIx under mpirun, not on rdpmix):"
    awk '$3 == "openpmix" && $1 == "PASS" { print $2, $4 }' "$work/results" |
        while read -r name layout; do
            ours=$(result_of "$name" rdpmix "$layout")
            [ "$ours" = PASS ] && continue
            why=$(expected_diff "$name" "$layout")
            if [ -n "$why" ]; then
                echo "  expected   $name $layout: $ours ($why)"
            else
                echo "  REGRESSION $name $layout: $ours"
            fi
        done | tee "$work/diffs"
    grep -q REGRESSION "$work/diffs" && regressions=1
    [ -s "$work/diffs" ] || echo "  none"
}

summary() {
    echo
    echo "Summary:"
    awk '{ c[$3 " " $4 " " $1]++; k[$3 " " $4] = 1 }
         END { for (x in k) printf "  %-17s PASS %d FAIL %d TIMEOUT %d SKIP %d\n",
               x, c[x " PASS"], c[x " FAIL"], c[x " TIMEOUT"], c[x " SKIP"] }' \
        "$work/results" | sort
    echo "  logs: $work/log"
}

check_tools() {
    if has_stack rdpmix; then
        run="$build_dir/src/run/rdpmix-run"
        [ -x "$run" ] && [ -e "$build_dir/.libs/libpmix.so" ] || {
            echo "conformance.sh: no rdpmix build in $build_dir" \
                "(--build-dir or RDPMIX_BUILD_DIR)" >&2
            exit 2
        }
        build_dir=$(cd "$build_dir" && pwd)
        run="$build_dir/src/run/rdpmix-run"
    fi
    if has_stack openpmix; then
        if ! pkg-config --exists pmix 2>/dev/null || ! command -v mpirun >/dev/null; then
            echo "conformance.sh: no OpenPMIx (pkg-config pmix) or mpirun;" \
                "running rdpmix only" >&2
            stacks=rdpmix
        fi
    fi
}

main() {
    set -f
    regressions=0
    parse_args "$@"
    check_tools
    if [ -z "$work" ]; then
        work=$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX") || exit 1
        [ "$keep" -eq 1 ] || trap 'rm -rf "$work"' EXIT
    fi
    mkdir -p "$work/log" "$work/bin/rdpmix" "$work/bin/openpmix" || exit 1
    : >"$work/results"
    prepare_includes
    prepare_mpirun_nodes
    # mpirun as root, on loopback only (/work/shared/PEERS.md)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
    export UCX_NET_DEVICES=lo

    echo "OpenPMIx source: $src"
    echo "rdpmix build:    $build_dir"
    grep -v '^#' "$manifest" | while read -r name file kind rest; do
        [ -n "$name" ] || continue
        selected "$name" || continue
        # shellcheck disable=SC2086 # the fields are words
        run_program "$name" "$file" "$kind" $rest
    done
    summary
    compare
    return $regressions
}

main "$@"
