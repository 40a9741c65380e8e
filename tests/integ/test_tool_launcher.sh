#!/bin/sh
# test_tool_launcher.sh - a tool that initialises as a launcher
# (PMIX_LAUNCHER) may call PMIx_server_setup_application (RFC0012's
# head-node step, as OpenPMIx's simpvni does) and gets what a server's
# host gets from the same pnet modules; a plain tool is refused.
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

prog="$builddir/tests/integ/run_tool_launcher"
export RDPMIX_PNET=simptest
srvdir="$tmp/srv"
mkdir -p "$srvdir"

run() { timeout -k 5 30 "$prog" "$@" 2>"$tmp/err"; }

run launcher job.a >"$tmp/la"
run server="$srvdir" job.a >"$tmp/sa"
check_that "a launcher tool initialises and its setup_application succeeds" \
    'sed -n 1,2p "$tmp/la" | tr "\n" " " | grep -qx "init SUCCESS setup SUCCESS "'
check_that "... with simptest's job key, as an envar and as a job-level value" \
    'grep -Eq "^pmix.envar.set RDPMIX_PNET_SIMPTEST_KEY=simptest-[0-9a-f]{8}$" "$tmp/la" &&
     grep -Eq "^rdpmix.pnet.simptest.key simptest-[0-9a-f]{8}$" "$tmp/la" &&
     [ "$(sed -n "s/^pmix.envar.set RDPMIX_PNET_SIMPTEST_KEY=//p" "$tmp/la")" = \
       "$(sed -n "s/^rdpmix.pnet.simptest.key //p" "$tmp/la")" ]'
check_that "... the same answer a server gets for the same nspace" \
    'grep -qx "setup SUCCESS" "$tmp/sa" && cmp -s "$tmp/la" "$tmp/sa"'

run launcher job.b >"$tmp/lb"
check_that "another nspace gets another key" \
    'grep -q "^rdpmix.pnet.simptest.key " "$tmp/lb" &&
     [ "$(grep "^rdpmix" "$tmp/la")" != "$(grep "^rdpmix" "$tmp/lb")" ]'

run launcher job.a envars >"$tmp/le"
check_that "PMIX_SETUP_APP_ENVARS: only the environment directive" \
    '[ -n "$(sed 1,2d "$tmp/le")" ] &&
     [ "$(sed 1,2d "$tmp/le")" = "$(grep "^pmix.envar.set " "$tmp/la")" ]'
run launcher job.a nonenvars >"$tmp/ln"
check_that "PMIX_SETUP_APP_NONENVARS: only the job-level value" \
    '[ -n "$(sed 1,2d "$tmp/ln")" ] &&
     [ "$(sed 1,2d "$tmp/ln")" = "$(grep "^rdpmix.pnet.simptest.key " "$tmp/la")" ]'

run launcher-required job.a >"$tmp/lr"
check_that "PMIX_LAUNCHER as a required directive of PMIx_tool_init is supported" \
    'cmp -s "$tmp/la" "$tmp/lr"'

run plain job.a >"$tmp/pa"
check_that "a tool that is no launcher is refused, and told why" \
    'grep -qx "setup INIT" "$tmp/pa" && grep -q "PMIX_LAUNCHER" "$tmp/err"'

RDPMIX_PNET=nosuchmodule run launcher job.a >"$tmp/bad"
check_that "a launcher with an RDPMIX_PNET naming no module fails to init" \
    '! grep -qx "init SUCCESS" "$tmp/bad" && grep -q nosuchmodule "$tmp/err"'

echo "1..$tnum"
exit $tfail
