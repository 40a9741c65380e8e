#!/bin/sh
# test_run_nodes.sh - rdpmix-run --nodes M: M daemons, each a simulated
# node.  Placement (--map-by block|slot|node, --slots-per-node) as every
# rank sees it through PMIx (node id, host name, local rank, local peers,
# node map, proc map), each node's own tmpdir, output and exit statuses
# from every node, and a failing rank or a killed daemon ending the whole
# job.  No collective crosses nodes here (test_run_engine.sh does that).
. "${top_srcdir:-.}/tests/integ/test_run_common.sh"

client="$builddir/tests/integ/run_client"
host=$(hostname | cut -d. -f1)
[ -n "$host" ] || host=localhost
# the engine between the daemons: TCP on loopback unless the caller chose
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

# expected NP M MAP [K]: the placement lines run_client nodes info prints, sorted
expected() {
    awk -v np="$1" -v m="$2" -v map="$3" -v k="${4:-0}" -v host="$host" '
    BEGIN {
        if (k == 0) k = int((np + m - 1) / m)
        base = int(np / m); extra = np % m
        for (r = 0; r < np; r++) {
            if (map == "block") {
                if (r < extra * (base + 1)) n = int(r / (base + 1))
                else n = extra + int((r - extra * (base + 1)) / base)
            } else if (map == "slot") n = int(r / k)
            else n = r % m
            node[r] = n
            lr[r] = cnt[n]++
            list[n] = lr[r] ? list[n] "," r : r
        }
        for (r = 0; r < np; r++) {
            n = node[r]
            split(list[n], first, ",")
            printf "rank %d node %d host %s-n%d local %d noderank %d peers %s size %d ldr %d nodes %d\n", \
                r, n, host, n, lr[r], lr[r], list[n], cnt[n], first[1], m
        }
    }' | sort
}

# placement M NP MAP [K]
placement() {
    m=$1 np=$2 map=$3 k=${4:-}
    opts="--nodes $m -n $np --map-by $map${k:+ --slots-per-node $k}"
    # shellcheck disable=SC2086
    job 120 $opts "$client" nodes info
    grep "^rank " "$tmp/out" | sort >"$tmp/got"
    expected "$np" "$m" "$map" "$k" >"$tmp/want"
    if [ "$rc" -eq 0 ] && cmp -s "$tmp/got" "$tmp/want"; then
        ok "placement: $opts"
    else
        not_ok "placement: $opts"
        diff "$tmp/want" "$tmp/got" | head -10 | sed 's/^/# /'
    fi
}

placement 2 2 block
placement 2 16 node
placement 3 7 block
placement 3 7 node
placement 4 5 slot
placement 4 6 slot 4
placement 4 16 block
placement 8 8 node
placement 8 20 slot
check "the daemons removed their tmpdirs" tmpdir_clean

# each node has its own server directory, which is also its ranks' TMPDIR
job 60 --nodes 3 -n 6 sh -c 'echo "$PMIX_RANK $PMIX_HOSTNAME $PMIX_SERVER_TMPDIR $TMPDIR"'
dirs=$(awk '{print $2, $3}' "$tmp/out" | sort -u | wc -l)
tmps=$(awk '$3 == $4 {print $3}' "$tmp/out" | sort -u | wc -l)
check_that "every node has its own tmpdir, the TMPDIR of its ranks" \
    '[ "$rc" -eq 0 ] && [ "$dirs" -eq 3 ] && [ "$tmps" -eq 3 ]'

# output of every rank on every node, untagged and tagged
job 60 --nodes 4 -n 8 sh -c 'echo "out $PMIX_RANK"; echo "err $PMIX_RANK" >&2'
check_that "stdout and stderr of every rank of 4 nodes arrive" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^out [0-7]$" "$tmp/out")" -eq 8 ] && [ "$(grep -c "^err [0-7]$" "$tmp/err")" -eq 8 ]'
job 60 --nodes 3 -n 9 --map-by node --tag-output sh -c 'echo "line of $PMIX_RANK"'
check_that "--tag-output across nodes" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "^\[\([0-8]\)\] line of \1$" "$tmp/out")" -eq 9 ]'

# usage errors
job 10 --nodes 2 -n 4 --map-by core true
check_that "an unknown --map-by is a usage error" \
    '[ "$rc" -eq 2 ] && grep -q "map-by needs block, slot or node" "$tmp/err"'
job 10 --nodes 2 -n 5 --slots-per-node 2 true
check_that "more ranks than slots is a usage error" \
    '[ "$rc" -eq 2 ] && grep -q "5 ranks do not fit in 2 nodes of 2 slots" "$tmp/err"'

# a command line no other process has
marker="sleep 8$$.25"

# a rank on node 2 fails: every node's ranks are ended
job 60 --nodes 3 -n 6 sh -c "if [ \$PMIX_RANK = 5 ]; then exit 3; fi; exec $marker"
check "a failing rank on node 2 ends the job with its status" [ "$rc" -eq 3 ]
check "the failing rank is reported" \
    grep -q "^rdpmix-run: rank 5 (pid [0-9]*) exited with status 3; terminating the job$" "$tmp/err"
check "no rank of any node is left" none_left "$marker"
check "every daemon removed its tmpdir" tmpdir_clean
reap "$marker"

# a daemon killed outright: its ranks die with it, the other nodes' ranks
# are terminated, rdpmix-run says which node died
"$RUN" --nodes 4 -n 8 sh -c "$marker; true" >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "$marker" 8
dpid=$(pgrep -P $pid -f -- "--node-id 2 ")
kill -KILL $dpid
wait $pid
rc=$?
check "a killed daemon fails the job" [ "$rc" -eq 1 ]
check "the killed daemon is reported with its node" \
    grep -q "^rdpmix-run: node 2 (daemon pid $dpid) died; terminating the job$" "$tmp/err"
check "no rank of any node survives" none_left "$marker"
check "no daemon survives" poll '[ -z "$(pgrep -P $pid)" ] && ! kill -0 $pid 2>/dev/null'
check "every tmpdir is removed, the killed daemon's too" tmpdir_clean
reap "$marker"

# every simulated node's ranks see the node's name as their host name
# (a UTS namespace per node, as root); one node keeps the machine's name
host=$(hostname -s)
job --nodes 3 -n 6 --map-by node --tag-output hostname
check_that "ranks see their simulated node's host name" \
    '[ "$rc" -eq 0 ] && [ "$(sort "$tmp/out" | tr "\n" " ")" = "[0] $host-n0 [1] $host-n1 [2] $host-n2 [3] $host-n0 [4] $host-n1 [5] $host-n2 " ]'
job -n 2 --tag-output hostname
check_that "a single node keeps this machine's name" \
    '[ "$rc" -eq 0 ] && [ "$(grep -c "$(hostname)\$" "$tmp/out")" -eq 2 ]'

# a rank's departure is told only to the servers that host ranks of its
# job: a node without ranks (node 3 here) hears of none, so no server
# connects to it as the job ends (UCX 1.13 aborts in ucp_worker_destroy
# when a connection is still being set up then); 5 ranks on 3 nodes give
# at most 5 x 2 such messages (before: 5 x 3)
RDPMIX_LOG_LEVEL=debug RDPMIX_LOG_SUBSYS=server \
    job --nodes 4 -n 5 --map-by slot "$client" nodes info
told=$(grep -c "left on another node (finalized)" "$tmp/err")
check_that "departures go only to the nodes that host the job ($told told)" \
    '[ "$rc" -eq 0 ] && [ "$told" -gt 0 ] && [ "$told" -le 10 ]'

finish
