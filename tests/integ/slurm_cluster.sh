# slurm_cluster.sh - a private Slurm cluster of N nodes on this machine, for
# running `srun --mpi=pmix` with OpenPMIx or with rdpmix as the PMIx server
# in slurmstepd (sourced by tests/integ/test_slurm.sh and by benchmarks;
# POSIX sh; needs root, Debian's slurmctld, slurmd, slurm-client, munge).
#
#   slurm_cluster_usable        0 if this machine can run the cluster (root,
#                               the Slurm and munge programs, a munge user,
#                               UTS namespaces); else 1, the reason in
#                               SLURM_CLUSTER_WHY.  Adds /usr/sbin and /sbin
#                               to PATH
#   slurm_cluster_start [LIB]   start munged, slurmctld and one slurmd per
#                               node (n1, n2, ...; each in its own UTS
#                               namespace, so its tasks see its name) and
#                               wait until every node is idle.  LIB, if
#                               given, is a libpmix.so.2 preloaded into
#                               every slurmstepd (rdpmix's); without it the
#                               Slurm plugin uses OpenPMIx.  Returns 0, or 1
#                               with the reason on stderr.
#   slurm_cluster_use [LIB]     change the preload for the steps started from
#                               now on (the daemons keep running)
#   slurm_cluster_reset         after a failed or hung step: cancel every
#                               job, SIGKILL the steps' slurmstepd and tasks
#                               left behind, wait until the nodes are idle
#   slurm_cluster_idle [SECS]   wait (default 60 s) until no job is queued
#                               or running and every node is idle: a new
#                               allocation then gets the first nodes
#                               (Slurm skips a node still completing the
#                               previous job); 1 if not in time
#   slurm_cluster_ps            the steps' processes still running (slurmstepd,
#                               tasks): PID, state, kernel wait channel,
#                               command line; for diagnosing a hung step
#   slurm_cluster_leftovers     print what of this cluster still exists
#                               (processes, its directory, files its steps
#                               may have left in /tmp or /dev/shm); prints
#                               nothing when clean
#   slurm_cluster_stop          stop everything it started, by PID, remove
#                               its files; safe to call twice, or after a
#                               failed start
#   slurm_cluster_logs [N]      last N lines of every daemon log, '# '-prefixed
#
# Set before starting (all optional):
#   SLURM_CLUSTER_NODES    number of nodes (default 2)
#   SLURM_CLUSTER_CPUS     CPUs each node declares (default 32)
#   SLURM_CLUSTER_TMP      where the cluster's directory is made (default
#                          /tmp: the PMIx servers' UNIX socket paths live
#                          below it and must stay under 108 bytes)
#   SLURM_CLUSTER_DEBUG    SlurmdDebug/SlurmctldDebug level (default info)
#   SLURM_CLUSTER_STEPD_ENV  extra VAR=value words for slurmstepd's
#                          environment (the server's RDPMIX_* settings;
#                          its stderr, and so its log, is lost in
#                          slurmstepd)
#   SLURM_CLUSTER_KEEP     1: slurm_cluster_stop keeps the directory (logs)
#
# After a successful start, SLURM_CONF is exported (srun, sinfo, scancel use
# it) and the cluster's directory is $SLURM_CLUSTER_DIR.  Everything the
# cluster writes stays in that directory: Slurm's state, spool and TmpFS,
# the munge socket, the logs, and the tasks' TMPDIR
# ($SLURM_CLUSTER_DIR/tasktmp) when srun runs with this environment
# (slurm_cluster_start exports nothing else; pass TMPDIR yourself).
#
# How processes are found: the daemons by the PIDs recorded at start; a
# step's slurmstepd and tasks (which Slurm double-forks, so they are nobody's
# children here) by the UTS namespace of their node's slurmd while that
# slurmd runs, and by SLURM_CONF=<this cluster>/slurm.conf in their
# environment (bin/slurmstepd sets it for slurmstepd; srun passes it to
# tasks).

SLURM_CLUSTER_DIR=
# "NAME PID" lines of the daemons started (munged, slurmctld, slurmd.nI),
# and the directory: both kept after slurm_cluster_stop, for
# slurm_cluster_leftovers
sc_rec=
sc_last_dir=
sc_t0=

# sc_record NAME PID
sc_record() {
    sc_rec="$sc_rec$1 $2
"
    echo "$1 $2" >>"$SLURM_CLUSTER_DIR/pids"
}

# sc_fail MESSAGE: report a failed start
sc_fail() {
    echo "slurm_cluster: $*" >&2
    return 1
}

# sc_poll SECONDS 'CONDITION': true as soon as CONDITION holds, false
# once SECONDS have passed without it
sc_poll() {
    sc_end=$(($(date +%s) + $1))
    while ! eval "$2"; do
        [ "$(date +%s)" -ge "$sc_end" ] && return 1
        sleep 0.1
    done
    return 0
}

# sc_alive PID: PID exists and is not a zombie
sc_alive() {
    [ -r "/proc/$1/stat" ] || return 1
    sc_state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ -n "$sc_state" ] && [ "$sc_state" != Z ]
}

# sc_free_ports N: N distinct TCP ports that nothing listens on now, picked
# at random below the kernel's ephemeral range (outgoing connections, e.g.
# srun's, cannot take them between the check and slurmd's bind)
sc_free_ports() {
    python3 -c '
import random, socket, sys
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    eph_lo, eph_hi = map(int, f.read().split())
lo, hi = (10000, eph_lo - 1) if eph_lo > 12000 else (eph_hi + 1, 65535)
ports = []
while len(ports) < int(sys.argv[1]):
    p = random.randint(lo, hi)
    if p in ports:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        ports.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, ports)))
' "$1"
}

# sc_preload_words LIB: the LD_PRELOAD value for LIB (a sanitizer build's
# library needs its ASan runtime loaded first)
sc_preload_words() {
    sc_asan=$(ldd "$1" 2>/dev/null | sed -n 's/^[[:space:]]*libasan[^ ]* => \([^ ]*\) .*/\1/p')
    if [ -n "$sc_asan" ]; then
        echo "$sc_asan $1"
    else
        echo "$1"
    fi
}

slurm_cluster_usable() {
    SLURM_CLUSTER_WHY=
    if [ "$(id -u)" -ne 0 ]; then
        SLURM_CLUSTER_WHY="needs root (munged runs as the munge user, each slurmd in its own UTS namespace)"
        return 1
    fi
    PATH="$PATH:/usr/sbin:/sbin"
    for sc_cmd in munged slurmctld slurmd slurmstepd srun salloc scontrol \
        sinfo squeue scancel setpriv unshare python3; do
        if ! command -v "$sc_cmd" >/dev/null 2>&1; then
            SLURM_CLUSTER_WHY="$sc_cmd not found (Debian: slurmctld slurmd slurm-client munge)"
            return 1
        fi
    done
    if ! getent passwd munge >/dev/null; then
        SLURM_CLUSTER_WHY="no munge user (Debian: munge)"
        return 1
    fi
    if ! unshare --uts true 2>/dev/null; then
        SLURM_CLUSTER_WHY="cannot make UTS namespaces here (unshare --uts)"
        return 1
    fi
    return 0
}

slurm_cluster_use() {
    sc_env="$SLURM_CLUSTER_DIR/stepd.env"
    {
        echo "# sourced by bin/slurmstepd before it execs slurmstepd"
        echo "SLURM_CONF='$SLURM_CLUSTER_DIR/slurm.conf'; export SLURM_CONF"
        for sc_w in $SLURM_CLUSTER_STEPD_ENV; do
            echo "export '$sc_w'"
        done
        if [ -n "${1:-}" ]; then
            echo "LD_PRELOAD='$(sc_preload_words "$1")'; export LD_PRELOAD"
            # a sanitizer build: reports go to files the test can show;
            # Slurm's own leaks are not ours to report.  No quarantine: GCC
            # 12's ASan allocator is not fork-safe, and slurmstepd forks
            # its tasks while other threads allocate; the quarantine's
            # batches take allocator locks most often (a forked task blocked
            # on one in free() in 2 of 10 steps with it, 0 of 25 without)
            echo "ASAN_OPTIONS='log_path=$SLURM_CLUSTER_DIR/log/asan.stepd:detect_leaks=0:quarantine_size_mb=0:thread_local_quarantine_size_kb=0'; export ASAN_OPTIONS"
            echo "UBSAN_OPTIONS='log_path=$SLURM_CLUSTER_DIR/log/ubsan.stepd:print_stacktrace=1'; export UBSAN_OPTIONS"
        fi
    } >"$sc_env.new" && mv "$sc_env.new" "$sc_env"
}

sc_write_conf() {
    sc_d=$SLURM_CLUSTER_DIR
    sc_nodes=$(seq -s, -f 'n%g' 1 "$sc_n")
    cat >"$sc_d/slurm.conf" <<EOF
# written by tests/integ/slurm_cluster.sh for this run only
ClusterName=rdpmixtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmUser=root
SlurmdUser=root
MailProg=/bin/true
AuthType=auth/munge
AuthInfo=socket=$sc_d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$sc_d/state
SlurmdSpoolDir=$sc_d/spool/%n
TmpFS=$sc_d/tmp/%n
SlurmctldPidFile=$sc_d/run/slurmctld.pid
SlurmdPidFile=$sc_d/run/slurmd.%n.pid
SlurmctldLogFile=$sc_d/log/slurmctld.log
SlurmdLogFile=$sc_d/log/slurmd.%n.log
SlurmctldDebug=${SLURM_CLUSTER_DEBUG:-info}
SlurmdDebug=${SLURM_CLUSTER_DEBUG:-info}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SlurmdParameters=config_overrides
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
EOF
    sc_i=1
    for sc_p in $2; do
        echo "NodeName=n$sc_i NodeAddr=127.0.0.1 Port=$sc_p CPUs=${SLURM_CLUSTER_CPUS:-32} State=UNKNOWN"
        sc_i=$((sc_i + 1))
    done >>"$sc_d/slurm.conf"
    echo "PartitionName=all Nodes=$sc_nodes Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP" \
        >>"$sc_d/slurm.conf"
}

# every node idle (and there are sc_n of them)
sc_all_idle() {
    [ "$(sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle$')" -eq "$sc_n" ]
}

# every recorded daemon runs
sc_daemons_alive() {
    for sc_p in $(sc_daemon_pids); do
        sc_alive "$sc_p" || return 1
    done
    return 0
}

slurm_cluster_start() {
    for sc_try in 1 2 3; do
        sc_start_once "${1:-}"
        case $? in
            0) return 0 ;;
            2) ;;
            *) return 1 ;;
        esac
        # a daemon died while starting: most likely another program took
        # one of its ports; start again with other ports
        echo "slurm_cluster: a daemon died while starting:" >&2
        slurm_cluster_logs 3 >&2
        slurm_cluster_stop
    done
    sc_fail "could not start after 3 tries"
}

# sc_start_once [LIB]: 0 started, 1 failed, 2 a daemon died (try again)
sc_start_once() {
    sc_n=${SLURM_CLUSTER_NODES:-2}
    sc_base=${SLURM_CLUSTER_TMP:-/tmp}
    SLURM_CLUSTER_DIR=$(mktemp -d "$sc_base/rdpmix-slurm.XXXXXX") \
        || { sc_fail "cannot make a directory in $sc_base"; return 1; }
    sc_d=$SLURM_CLUSTER_DIR
    sc_last_dir=$sc_d
    sc_rec=
    sc_t0=$(($(date +%s) - 1))
    echo "# slurm_cluster: $sc_d" >"$sc_d/pids"
    # munged insists that no directory on the way to its socket and key is
    # writable by others
    chmod 755 "$sc_d"
    mkdir -p "$sc_d/munge" "$sc_d/state" "$sc_d/run" "$sc_d/log" \
        "$sc_d/bin" "$sc_d/tasktmp"
    chmod 1777 "$sc_d/tasktmp"
    for sc_i in $(seq 1 "$sc_n"); do
        mkdir -p "$sc_d/spool/n$sc_i" "$sc_d/tmp/n$sc_i"
    done
    export SLURM_CONF="$sc_d/slurm.conf"

    # munged, as the munge user, with a key of its own
    dd if=/dev/urandom of="$sc_d/munge/munge.key" bs=1024 count=1 2>/dev/null
    chown -R munge:munge "$sc_d/munge"
    chmod 0755 "$sc_d/munge"
    chmod 0400 "$sc_d/munge/munge.key"
    env -u SLURM_CONF setsid setpriv --reuid=munge --regid=munge --clear-groups \
        /usr/sbin/munged -F --key-file="$sc_d/munge/munge.key" \
        --socket="$sc_d/munge/munge.sock" \
        --pid-file="$sc_d/munge/munged.pid" \
        --log-file="$sc_d/munge/munged.log" \
        --seed-file="$sc_d/munge/munged.seed" \
        </dev/null >"$sc_d/log/munged.out" 2>&1 &
    sc_record munged $!
    if ! sc_poll 10 '[ -S "$sc_d/munge/munge.sock" ] || ! sc_daemons_alive'; then
        sc_fail "munged did not start"
        return 1
    fi
    sc_daemons_alive || { sc_fail "munged did not start"; return 1; }

    # SlurmctldPort, then one port per slurmd
    sc_ports=$(sc_free_ports $((sc_n + 1)))
    [ -n "$sc_ports" ] || { sc_fail "no free ports"; return 1; }
    sc_write_conf "${sc_ports%% *}" "${sc_ports#* }"

    # slurmd execs this instead of slurmstepd: the preload can change
    # between steps (slurm_cluster_use)
    cat >"$sc_d/bin/slurmstepd" <<EOF
#!/bin/sh
. '$sc_d/stepd.env'
exec /usr/sbin/slurmstepd "\$@"
EOF
    chmod 755 "$sc_d/bin/slurmstepd"
    slurm_cluster_use "${1:-}"

    env -u SLURM_CONF setsid /usr/sbin/slurmctld -D \
        -f "$sc_d/slurm.conf" </dev/null >"$sc_d/log/slurmctld.out" 2>&1 &
    sc_record slurmctld $!

    for sc_i in $(seq 1 "$sc_n"); do
        env -u SLURM_CONF TMPDIR="$sc_d/tmp/n$sc_i" setsid \
            unshare --uts /bin/sh -c 'hostname "$1" && shift && exec "$@"' sh "n$sc_i" \
            /usr/sbin/slurmd -D -N "n$sc_i" -f "$sc_d/slurm.conf" \
            -d "$sc_d/bin/slurmstepd" \
            </dev/null >"$sc_d/log/slurmd.n$sc_i.out" 2>&1 &
        sc_record "slurmd.n$sc_i" $!
    done

    sc_poll 30 'sc_all_idle || ! sc_daemons_alive'
    sc_daemons_alive || return 2
    if ! sc_all_idle; then
        sinfo -N >&2 2>&1
        sc_fail "the nodes did not become idle in 30 s"
        return 1
    fi
    return 0
}

# PIDs of our slurmd processes still running slurmd
sc_slurmd_pids() {
    for sc_p in $(echo "$sc_rec" | sed -n 's/^slurmd\.[^ ]* //p'); do
        sc_alive "$sc_p" || continue
        case $(readlink "/proc/$sc_p/exe" 2>/dev/null) in
            */slurmd | */slurmd-wlm) echo "$sc_p" ;;
        esac
    done
}

# sc_daemon_pids: the PIDs recorded at start, one line
sc_daemon_pids() {
    echo "$sc_rec" | sed -n 's/^[^ ]* //p' | tr '\n' ' '
}

# sc_scan steps|all: PIDs of this cluster's processes other than the
# recorded daemons and this shell.  steps: a step's slurmstepd and tasks,
# found by their node's UTS namespace (while its slurmd runs, the namespace
# cannot be another's).  all: also processes with this cluster's SLURM_CONF
# in their environment (slurmstepd gets it from bin/slurmstepd, tasks and
# srun from srun's environment: found even after their slurmd is gone) and
# the daemons' helpers, found by their session (each daemon leads its own).
# Reading every process's environment is slow on a busy machine (a second
# for a thousand processes), so only "all" does.
sc_scan() (
    [ -n "$sc_last_dir" ] || exit 0
    sc_mark="SLURM_CONF=$sc_last_dir/slurm.conf"
    # the scan's own commands must not carry the mark
    unset SLURM_CONF
    sc_ns=$(for sc_p in $(sc_slurmd_pids); do
        readlink "/proc/$sc_p/ns/uts"
    done | tr '\n' ' ')
    {
        cat /proc/[0-9]*/stat 2>/dev/null | sed 's/^/P /'
        stat -c 'U %n %N' /proc/[0-9]*/ns/uts 2>/dev/null
        if [ "$1" = all ]; then
            grep -lzxF "$sc_mark" /proc/[0-9]*/environ 2>/dev/null \
                | sed 's/^/E /'
        fi
    } | awk -v me="$$" -v daemons=" $(sc_daemon_pids) " -v ns=" $sc_ns " \
        -v mode="$1" '
        function pid_of(path,  f) { split(path, f, "/"); return f[3] }
        # /proc/PID/stat: "PID (COMM) STATE PPID PGRP SESSION ...", where
        # COMM may hold spaces and parentheses
        $1 == "P" {
            rest = $0
            sub(/.*\) /, "", rest)
            split(rest, f, " ")
            live[$2] = (f[1] != "Z")
            sid[$2] = f[4]
        }
        $1 == "U" { t = $NF; gsub(/\047/, "", t); uts[pid_of($2)] = t }
        $1 == "E" { marked[pid_of($2)] = 1 }
        END {
            for (p in live) {
                if (!live[p] || p == me || index(daemons, " " p " ")) continue
                if ((p in uts) && index(ns, " " uts[p] " ")) print p
                else if (p in marked) print p
                else if (mode == "all" && index(daemons, " " sid[p] " ")) print p
            }
        }'
)

sc_kill_steps() {
    for sc_round in 1 2 3 4 5; do
        sc_left=$(sc_scan steps)
        [ -z "$sc_left" ] && return 0
        for sc_p in $sc_left; do
            kill -KILL "$sc_p" 2>/dev/null
        done
        sleep 0.2
    done
    [ -z "$(sc_scan steps)" ]
}

slurm_cluster_idle() {
    [ -n "$SLURM_CLUSTER_DIR" ] || return 1
    sc_n=${SLURM_CLUSTER_NODES:-2}
    sc_poll "${1:-60}" '[ -z "$(squeue -h -o %i 2>/dev/null)" ] && sc_all_idle'
}

slurm_cluster_reset() {
    [ -n "$SLURM_CLUSTER_DIR" ] || return 0
    sc_n=${SLURM_CLUSTER_NODES:-2}
    scancel --quiet --user=root 2>/dev/null
    # give slurmstepd the chance to end its tasks and report
    sc_poll 5 '[ -z "$(sc_scan steps)" ]' || sc_kill_steps
    if ! sc_poll 30 '[ -z "$(squeue -h -o %i 2>/dev/null)" ] && sc_all_idle'; then
        echo "slurm_cluster: jobs or nodes still busy after 30 s:" >&2
        squeue >&2 2>&1
        sinfo -N >&2 2>&1
        return 1
    fi
    return 0
}

slurm_cluster_leftovers() {
    [ -n "$sc_last_dir" ] || return 0
    for sc_p in $(sc_daemon_pids) $(sc_scan all); do
        if sc_alive "$sc_p"; then
            echo "process $sc_p: $(tr '\0' ' ' 2>/dev/null <"/proc/$sc_p/cmdline")"
        fi
    done
    if [ -z "$SLURM_CLUSTER_DIR" ] && [ -e "$sc_last_dir" ] \
        && [ "${SLURM_CLUSTER_KEEP:-0}" != 1 ]; then
        echo "directory $sc_last_dir"
    fi
    # what Slurm's PMIx plugin, a PMIx server or Open MPI would make outside
    # the cluster's directory if TmpFS or TMPDIR were not honoured (names
    # carry the node names n1, n2, ...); only what appeared since the start
    find /tmp /dev/shm -maxdepth 1 -newermt "@$sc_t0" \( \
        -name 'spmix_appdir_*' -o -name 'ompi.n[0-9]*' \
        -o -name 'vader_segment.n[0-9]*' -o -name 'rdpmix.n[0-9]*' \
        -o -name 'pmix*.n[0-9]*' \) 2>/dev/null | sed 's/^/file /'
    return 0
}

slurm_cluster_ps() {
    for sc_p in $(sc_scan steps | sort -n); do
        printf '%s %s %s %s\n' "$sc_p" \
            "$(sed 's/.*) //' "/proc/$sc_p/stat" 2>/dev/null | cut -d' ' -f1)" \
            "$(cat "/proc/$sc_p/wchan" 2>/dev/null)" \
            "$(tr '\0' ' ' 2>/dev/null <"/proc/$sc_p/cmdline")"
    done
}

# sc_stop_pid NAME: SIGTERM the daemon recorded as NAME, SIGKILL after 5 s
sc_stop_pid() {
    sc_p=$(echo "$sc_rec" | sed -n "s/^$1 //p")
    [ -n "$sc_p" ] || return 0
    sc_alive "$sc_p" || return 0
    kill -TERM "$sc_p" 2>/dev/null
    sc_poll 5 '! sc_alive "$sc_p"' && return 0
    kill -KILL "$sc_p" 2>/dev/null
    sc_poll 5 '! sc_alive "$sc_p"'
}

slurm_cluster_stop() {
    [ -n "$SLURM_CLUSTER_DIR" ] || return 0
    [ -d "$SLURM_CLUSTER_DIR" ] || { SLURM_CLUSTER_DIR=; return 0; }
    sc_n=${SLURM_CLUSTER_NODES:-2}
    if [ -n "$(sc_slurmd_pids)" ]; then
        scancel --quiet --user=root 2>/dev/null
        sc_poll 5 '[ -z "$(sc_scan steps)" ]'
    fi
    # steps first, while their slurmd still marks their namespace
    sc_kill_steps
    for sc_name in $(echo "$sc_rec" | sed -n 's/^\(slurmd\.[^ ]*\) .*/\1/p'); do
        sc_stop_pid "$sc_name"
    done
    sc_kill_steps
    sc_stop_pid slurmctld
    sc_stop_pid munged
    if [ "${SLURM_CLUSTER_KEEP:-0}" = 1 ]; then
        echo "slurm_cluster: kept $SLURM_CLUSTER_DIR" >&2
    else
        rm -rf "$SLURM_CLUSTER_DIR"
    fi
    unset SLURM_CONF
    SLURM_CLUSTER_DIR=
}

slurm_cluster_logs() {
    [ -n "$SLURM_CLUSTER_DIR" ] && [ -d "$SLURM_CLUSTER_DIR/log" ] || return 0
    for sc_f in "$SLURM_CLUSTER_DIR"/log/* "$SLURM_CLUSTER_DIR/munge/munged.log"; do
        [ -s "$sc_f" ] || continue
        echo "# ==> ${sc_f#"$SLURM_CLUSTER_DIR"/} <=="
        tail -n "${1:-20}" "$sc_f" | sed 's/^/# /'
    done
}
