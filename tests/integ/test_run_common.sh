# test_run_common.sh - helpers sourced by the test_run_*.sh TAP scripts
# (rdpmix-run and rdpmixd).  Every job runs under timeout(1).
builddir=${top_builddir:-.}
builddir=$(cd "$builddir" && pwd)
RUN=${RDPMIX_TEST_RUN:-$builddir/src/run/rdpmix-run}
tnum=0
tfail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdpmix-test.XXXXXX")
# the daemons' tmpdirs go here, so tests can check they are removed
export TMPDIR="$tmp/td"
mkdir -p "$TMPDIR"
trap 'rm -rf "$tmp"' EXIT
# the launchers of this test share GLOBAL publish data only with each
# other and leave no per-user directory behind (docs/run.md, "Publish and
# lookup")
export RDPMIX_PEER_DIR="$tmp/launchers"
mkdir -m 0700 "$RDPMIX_PEER_DIR"
# fast escalation in tests
export RDPMIX_KILL_GRACE=${RDPMIX_KILL_GRACE:-1}

ok() {
    tnum=$((tnum + 1))
    echo "ok $tnum - $1"
}

not_ok() {
    tnum=$((tnum + 1))
    echo "not ok $tnum - $1"
    tfail=1
    for f in out err; do
        [ -s "$tmp/$f" ] && sed "s/^/# $f: /" "$tmp/$f" | head -20
    done
    echo "# exit status: $rc"
}

# check DESCRIPTION COMMAND...: ok if COMMAND succeeds
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# check_that DESCRIPTION 'SHELL CONDITION': for compound conditions
check_that() {
    if eval "$2"; then ok "$1"; else not_ok "$1"; fi
}

# job [timeout] ARGS...: run rdpmix-run ARGS; sets rc, fills $tmp/out, err
job() {
    secs=60
    case $1 in [0-9]*) secs=$1; shift ;; esac
    timeout -k 5 "$secs" "$RUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# poll 'CONDITION': true as soon as CONDITION holds, false after 10 s
poll() {
    poll_for 10 "$1"
}

# poll_for SECONDS 'CONDITION': the same, false after SECONDS
poll_for() {
    _i=0
    until eval "$2"; do
        _i=$((_i + 1))
        [ $_i -ge $(($1 * 10)) ] && return 1
        sleep 0.1
    done
    return 0
}

# no process with exactly this command line is left (allowing 10 s)
none_left() {
    _pat=$1
    poll '! pgrep -fx "$_pat" >/dev/null 2>&1'
}

# our_daemons [PATTERN]: the pids of this test's rdpmixd daemons whose
# command line matches PATTERN (an extended regex, default: any daemon),
# told apart by their TMPDIR, which is this test's: make check runs other
# tests' jobs alongside, and other users run theirs on the machine
our_daemons() {
    for _p in $(pgrep -f "rdpmixd .*--daemon-nspace"); do
        if { tr '\0' ' ' <"/proc/$_p/cmdline"; } 2>/dev/null \
            | grep -Eq -- "${1:-.}" \
            && { tr '\0' '\n' <"/proc/$_p/environ"; } 2>/dev/null \
            | grep -qxF "TMPDIR=$TMPDIR"; then
            echo "$_p"
        fi
    done
}

# the daemons removed their directories
tmpdir_clean() {
    [ -z "$(ls -A "$TMPDIR")" ]
}

# tmpdir_clean_within SECONDS: TMPDIR empties within SECONDS; if it does
# not, the log says what was left behind
tmpdir_clean_within() {
    poll_for "$1" tmpdir_clean && return 0
    find "$TMPDIR" -mindepth 1 -printf '# left behind: %P (%y, %s bytes)\n' | head -20
    return 1
}

# wait until N processes have exactly this command line
wait_for() {
    _pat=$1
    _n=$2
    poll '[ "$(pgrep -fx "$_pat" | wc -l)" -ge "$_n" ]'
}

# signal_job SIG N ARGS...: run rdpmix-run ARGS in the background, wait
# until N processes run "$marker", send SIG to rdpmix-run (not to
# timeout(1)) and wait for it; sets rc, fills $tmp/out, err
signal_job() {
    _sig=$1
    _n=$2
    shift 2
    timeout -k 5 60 "$RUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
    _pid=$!
    wait_for "$marker" "$_n"
    kill "-$_sig" "$(pgrep -P $_pid)"
    wait $_pid
    rc=$?
}

# every_rank N FILE FORMAT: FORMAT (with %r for the rank) is a whole line
# of FILE for each of the N ranks
every_rank() {
    _r=0
    while [ "$_r" -lt "$1" ]; do
        _line=$(echo "$3" | sed "s/%r/$_r/g")
        grep -qx -- "$_line" "$2" || return 1
        _r=$((_r + 1))
    done
}

# kill leftovers of a failed test (exact command line only)
reap() {
    for p in $(pgrep -fx "$1"); do kill -KILL "$p" 2>/dev/null; done
}

# skip REASON: one check that cannot run here
skip() {
    tnum=$((tnum + 1))
    echo "ok $tnum # SKIP $1"
}

# skip_all REASON: the whole test is skipped (a TAP plan of 0)
skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

# want_placement HOST:R,R,... ...: "RANK NODE HOST" lines, node i being
# the i-th word, sorted by rank
want_placement() {
    _n=0
    for _w in "$@"; do
        for _r in $(echo "${_w#*:}" | tr ',' ' '); do
            echo "$_r $_n ${_w%%:*}"
        done
        _n=$((_n + 1))
    done | sort -n
}

# check_placement DESCRIPTION HOST:R,R,... ...: the job succeeded and the
# placement lines run_client nodes info printed in $tmp/out are these
check_placement() {
    _desc=$1
    shift
    sed -n 's/^rank \([0-9]*\) node \([0-9]*\) host \([^ ]*\) .*/\1 \2 \3/p' \
        "$tmp/out" | sort -n >"$tmp/got"
    want_placement "$@" >"$tmp/want"
    if [ "$rc" -eq 0 ] && cmp -s "$tmp/got" "$tmp/want"; then
        ok "$_desc"
    else
        not_ok "$_desc"
        diff "$tmp/want" "$tmp/got" | head -10 | sed 's/^/# /'
    fi
}

# mpi_ranks_on NODE...: tests/integ/mpi_basic succeeded (rc) with N ranks,
# N the number of NODEs, and rank r printed that it loaded rdpmix's
# libpmix.so.2 and runs on the r-th NODE (MPI_Get_processor_name)
mpi_ranks_on() {
    _np=$#
    _r=0
    _bad=0
    for _node in "$@"; do
        grep -q "^rank $_r of $_np ok libpmix=$builddir/.libs/libpmix.so.2[.0]* node=$_node\$" \
            "$tmp/out" || _bad=$((_bad + 1))
        _r=$((_r + 1))
    done
    [ "$rc" -eq 0 ] && [ "$_bad" -eq 0 ]
}

finish() {
    echo "1..$tnum"
    exit $tfail
}
