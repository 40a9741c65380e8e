#!/bin/sh
# test_run_basic.sh - rdpmix-run with programs that do not use PMIx:
# output, exit statuses, environment, options and usage errors.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

job -n 3 sh -c 'echo out $PMIX_RANK; echo err $PMIX_RANK >&2'
check "3 ranks run and exit 0" [ "$rc" -eq 0 ]
check "stdout of every rank arrives" \
    [ "$(sort "$tmp/out" | tr '\n' ' ')" = "out 0 out 1 out 2 " ]
check "stderr of every rank arrives on stderr" \
    [ "$(sort "$tmp/err" | tr '\n' ' ')" = "err 0 err 1 err 2 " ]
check "the daemon removed its tmpdir" tmpdir_clean

job -n 3 sh -c 'case $PMIX_RANK in 1) exit 7 ;; esac; exit 0'
check "the exit status is the failing rank's (7)" [ "$rc" -eq 7 ]
check "a failing rank is named" \
    grep -q "^rdpmix-run: rank 1 (pid [0-9]*) exited with status 7; terminating the job$" "$tmp/err"

job -n 4 sh -c 'exit $((PMIX_RANK + 3))'
check_that "with several failures the status is one of theirs" \
    '[ "$rc" -ge 3 ] && [ "$rc" -le 6 ]'

job -n 2 false
check "false gives 1" [ "$rc" -eq 1 ]

job -n 4 --tag-output sh -c 'echo a; echo b >&2; printf c'
check "--tag-output exits 0" [ "$rc" -eq 0 ]
check "--tag-output prefixes stdout lines" \
    [ "$(sort "$tmp/out" | tr '\n' ' ')" = "[0] a [0] c [1] a [1] c [2] a [2] c [3] a [3] c " ]
check "--tag-output prefixes stderr lines" \
    [ "$(sort "$tmp/err" | tr '\n' ' ')" = "[0] b [1] b [2] b [3] b " ]

long=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
job -n 4 --tag-output sh -c "i=0; while [ \$i -lt 300 ]; do echo \"line \$i of rank \$PMIX_RANK $long\"; i=\$((i + 1)); done"
bad=$(grep -cv "^\[\([0-3]\)\] line [0-9]* of rank \1 $long\$" "$tmp/out")
check_that "tagged lines of 4 ranks never mix (1200 lines)" \
    '[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1200 ]'

FOO=bar job -n 1 -x FOO -x BAZ=qux sh -c 'echo "$FOO $BAZ"'
check "-x exports variables" [ "$(cat "$tmp/out")" = "bar qux" ]

job -n 1 -x NOT_SET_ANYWHERE_42 true
check "-x of an unset variable is a usage error" [ "$rc" -eq 2 ]

job -n 1 sh -c 'echo "${JSM_JSRUN_PORT:-unset}"'
check "Open MPI personality: JSM_JSRUN_PORT set by default" \
    [ "$(cat "$tmp/out")" = "rdpmix" ]
job -n 1 --no-ompi sh -c 'echo "${JSM_JSRUN_PORT:-unset}"'
check "--no-ompi leaves JSM_JSRUN_PORT unset" [ "$(cat "$tmp/out")" = "unset" ]
# as mpirun does, the personality tells Open MPI's ranks when their node
# has more of them than CPUs (they then yield instead of spinning)
ncpus=$(nproc)
job -n $((ncpus + 1)) sh -c 'echo "${OMPI_MCA_mpi_oversubscribe:-unset}"'
check_that "an oversubscribed node's ranks get OMPI_MCA_mpi_oversubscribe=1" \
    '[ "$rc" -eq 0 ] && [ "$(sort -u "$tmp/out")" = 1 ]'
job -n "$ncpus" sh -c 'echo "${OMPI_MCA_mpi_oversubscribe:-unset}"'
check_that "a node with a CPU per rank leaves it unset" \
    '[ "$rc" -eq 0 ] && [ "$(sort -u "$tmp/out")" = unset ]'
job -n $((ncpus + 1)) --no-ompi sh -c 'echo "${OMPI_MCA_mpi_oversubscribe:-unset}"'
check_that "--no-ompi leaves OMPI_MCA_mpi_oversubscribe unset" \
    '[ "$rc" -eq 0 ] && [ "$(sort -u "$tmp/out")" = unset ]'
job -n $((ncpus + 1)) -x OMPI_MCA_mpi_oversubscribe=0 sh -c 'echo "$OMPI_MCA_mpi_oversubscribe"'
check_that "-x overrides it" \
    '[ "$rc" -eq 0 ] && [ "$(sort -u "$tmp/out")" = 0 ]'


job -n 2 sh -c 'echo "$PMIX_RANK $PMIX_NAMESPACE"'
ranks=$(cut -d' ' -f1 "$tmp/out" | sort | tr '\n' ' ')
nss=$(cut -d' ' -f2 "$tmp/out" | sort -u)
check_that "ranks get PMIX_RANK and PMIX_NAMESPACE" \
    '[ "$ranks" = "0 1 " ] && [ -n "$nss" ] && [ "$(echo "$nss" | wc -l)" -eq 1 ]'

PMIX_STALE_FROM_ELSEWHERE=1 job -n 1 sh -c 'echo "${PMIX_STALE_FROM_ELSEWHERE:-unset}"'
check "inherited PMIX_* variables are not passed on" \
    [ "$(cat "$tmp/out")" = "unset" ]

libdir=$(cd "$builddir/.libs" 2>/dev/null && pwd)
LD_LIBRARY_PATH=/somewhere job -n 1 sh -c 'echo "$LD_LIBRARY_PATH"'
check "LD_LIBRARY_PATH starts with the build's library directory" \
    [ "$(cat "$tmp/out")" = "$libdir:/somewhere" ]
RDPMIX_LIBDIR=/opt/elsewhere job -n 1 sh -c 'echo "$LD_LIBRARY_PATH"'
check "RDPMIX_LIBDIR overrides the library directory" \
    [ "$(cut -d: -f1 "$tmp/out")" = "/opt/elsewhere" ]

echo "this must not reach the ranks" | timeout 30 "$RUN" -n 2 sh -c 'cat; echo end' >"$tmp/out" 2>"$tmp/err"
check "ranks read stdin from /dev/null" [ "$(cat "$tmp/out")" = "end
end" ]

# the reader of our output goes away: the job ends like a pipeline would
(timeout -k 5 30 "$RUN" -n 2 yes </dev/null 2>"$tmp/err"; echo $? >"$tmp/rc") \
    | head -1 >"$tmp/out"
check_that "a closed output pipe ends the job with 141 (rdpmix-run yes | head -1)" \
    '[ "$(cat "$tmp/out")" = "y" ] && [ "$(cat "$tmp/rc")" -eq 141 ] && [ ! -s "$tmp/err" ]'

job -n 1 sh -c 'pwd'
check "ranks start in rdpmix-run's directory" [ "$(cat "$tmp/out")" = "$(pwd)" ]

job -n 2 no-such-program-rdpmix-42
check "a missing program exits 127" [ "$rc" -eq 127 ]
check "a missing program is reported clearly" \
    [ "$(cat "$tmp/err")" = "rdpmix-run: cannot execute 'no-such-program-rdpmix-42': No such file or directory" ]

printf 'not a program\n' >"$tmp/noexec"
chmod 644 "$tmp/noexec"
job -n 1 "$tmp/noexec"
check_that "a non-executable file exits 126" \
    '[ "$rc" -eq 126 ] && grep -q "cannot execute .$tmp/noexec.: Permission denied" "$tmp/err"'

job --nodes 0 -n 2 true
check_that "--nodes 0 is a usage error" \
    '[ "$rc" -eq 2 ] && grep -q "^rdpmix-run: --nodes needs a number of nodes from 1 to 1024, not .0.$" "$tmp/err"'
job --nodes 1 -n 1 true
check "--nodes 1 works" [ "$rc" -eq 0 ]

job -n 0 true
check "-n 0 is a usage error" [ "$rc" -eq 2 ]
job -n 2
check "a missing program is a usage error" [ "$rc" -eq 2 ]
job --bogus-option true
check "an unknown option is a usage error" [ "$rc" -eq 2 ]
job --help
check_that "--help prints usage and exits 0" \
    '[ "$rc" -eq 0 ] && grep -q "^Usage: rdpmix-run" "$tmp/out"'
job --version
check_that "--version exits 0" '[ "$rc" -eq 0 ] && grep -q "^rdpmix-run" "$tmp/out"'
job -np 2 sh -c 'echo x'
check_that "-np is accepted like -n" \
    '[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ]'

check "no daemon directory is left behind" tmpdir_clean
finish
