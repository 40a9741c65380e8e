# netns_hosts.sh - separate "hosts" on this machine: network namespaces
# joined by veth pairs to a bridge, each with its own address and (through
# the agent) its own hostname.  For testing what crosses a real network
# (rdpmix-run --hosts, the engine over UCX tcp) without leaving the machine:
# every address lives only inside the namespaces made here.  Sourced (POSIX
# sh); needs root and iproute2.
#
#   netns_hosts_up N     make hosts h1..hN and a launch host h0 (a login
#                        node: on the same network, not a compute host);
#                        host hI has address 10.213.0.(I+1) on its eth0.
#                        Returns 0, or 1 with the reason on stderr.
#   netns_hosts_down     remove every namespace made here (idempotent)
#   netns_hosts_run H CMD...
#                        run CMD on host H (h0..hN): in its namespace and a
#                        UTS namespace named H
#   netns_hosts_cut H    from now on, whatever host H sends to h0 is
#                        lost on the way (h0 seems to be there but never
#                        answers, as behind a firewall that drops)
#   NETNS_AGENT          path of an ssh-like agent for rdpmix-run
#                        (--launch-agent): "AGENT HOST COMMAND..." runs
#                        COMMAND... through sh -c on HOST, as ssh does: with
#                        the agent's stdin, in a login environment of its
#                        own (PATH, HOME, and the variables named in
#                        NETNS_LOGIN_KEEP with the values the agent has;
#                        default "TMPDIR ASAN_OPTIONS UBSAN_OPTIONS
#                        LSAN_OPTIONS"); an unknown HOST fails with 255
#   NETNS_ADDR_h<I>      each host's address
#
# Namespace names carry this shell's PID, so several runs never collide;
# a run that died without netns_hosts_down leaves namespaces named
# rdpnet-<pid>-*, which netns_hosts_down of a later run does not touch:
# remove them with `ip netns del`.

NETNS_TAG="rdpnet-$$"
NETNS_SUBNET="10.213.0"
netns_hosts_made=""
NETNS_AGENT=""

netns_name() {
    echo "$NETNS_TAG-$1"
}

netns_add() {
    ip netns add "$1" || return 1
    netns_hosts_made="$netns_hosts_made $1"
    ip -n "$1" link set lo up
}

netns_hosts_up() {
    _n=$1
    _br=$(netns_name br)
    netns_add "$_br" || { echo "netns_hosts: cannot add namespaces (root?)" >&2; return 1; }
    ip -n "$_br" link add br0 type bridge || return 1
    ip -n "$_br" link set br0 up || return 1
    _i=0
    while [ $_i -le "$_n" ]; do
        _ns=$(netns_name "h$_i")
        netns_add "$_ns" || return 1
        # the pair is made in the bridge's namespace, its host end moved
        ip -n "$_br" link add "v$_i" type veth peer name eth0 netns "$_ns" \
            || return 1
        ip -n "$_br" link set "v$_i" master br0 up || return 1
        ip -n "$_ns" addr add "$NETNS_SUBNET.$((_i + 1))/24" dev eth0 || return 1
        ip -n "$_ns" link set eth0 up || return 1
        eval "NETNS_ADDR_h$_i=$NETNS_SUBNET.$((_i + 1))"
        _i=$((_i + 1))
    done
    # every bridge port forwards before anything starts (STP is off, so
    # that is at once; wait for the links to be up all the same)
    _tries=0
    while bridge -n "$_br" link show 2>/dev/null | grep -v -q "forwarding" \
        || [ "$(bridge -n "$_br" link show 2>/dev/null | grep -c forwarding)" \
            -lt $((_n + 1)) ]; do
        _tries=$((_tries + 1))
        if [ $_tries -ge 50 ]; then
            echo "netns_hosts: the bridge's ports do not forward" >&2
            bridge -n "$_br" link show >&2
            return 1
        fi
        sleep 0.1
    done
    NETNS_AGENT=$(mktemp "${TMPDIR:-/tmp}/rdpnet-agent.XXXXXX") || return 1
    # ssh-like: AGENT HOST WORDS... -> sh -c "WORDS..." on HOST, in a
    # login environment (ssh does not pass on the caller's environment)
    {
        echo '#!/bin/sh'
        echo "tag='$NETNS_TAG'"
        cat <<'EOF'
host=$1
shift
cmd="$*"
if ! ip netns pids "$tag-$host" >/dev/null 2>&1; then
    echo "netns agent: Could not resolve hostname $host" >&2
    exit 255
fi
set -- PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "HOME=${HOME:-/}"
for v in ${NETNS_LOGIN_KEEP-TMPDIR ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS}; do
    if eval "[ -n \"\${$v+set}\" ]"; then
        eval "set -- \"\$@\" \"$v=\${$v}\""
    fi
done
exec ip netns exec "$tag-$host" unshare --uts env -i "$@" \
    sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$cmd"
EOF
    } >"$NETNS_AGENT"
    chmod 700 "$NETNS_AGENT"
    return 0
}

netns_hosts_cut() {
    # a neighbour entry for h0 that no interface has: frames to h0 go
    # nowhere, and no error comes back
    ip -n "$(netns_name "$1")" neigh replace "$NETNS_SUBNET.1" \
        lladdr 02:00:00:00:00:01 dev eth0 nud permanent
}

netns_hosts_run() {
    _h=$1
    shift
    ip netns exec "$(netns_name "$_h")" unshare --uts sh -c \
        'hostname "$0" && exec "$@"' "$_h" "$@"
}

netns_hosts_down() {
    for _ns in $netns_hosts_made; do
        # processes still in the namespace keep it alive: end them first
        for _p in $(ip netns pids "$_ns" 2>/dev/null); do
            kill -KILL "$_p" 2>/dev/null
        done
        ip netns del "$_ns" 2>/dev/null
    done
    netns_hosts_made=""
    [ -n "$NETNS_AGENT" ] && rm -f "$NETNS_AGENT"
    NETNS_AGENT=""
}
