#!/usr/bin/env python3
# env_ab.py - paired A/B of the engine allgather (coll-bench over UCX tcp)
# under several settings: per round one launch of M processes for each
# setting, the order reversed every other round; per setting the median
# over rounds of each launch's median (rank 0's), and the ratio to the
# first setting paired within each round (median [min-max])
#
#   bench/env_ab.py ROUNDS M SIZE 'LABEL|VAR=VALUE ...|coll-bench options' ...
#
# Run it from the build directory.  BUILD=DIR among the variables runs
# DIR/bench/coll-bench instead of ./bench/coll-bench (a base build);
# the other variables go to the processes' environment.  Example (pieces
# of 60 KiB against whole blocks, and open payloads):
#
#   ../bench/env_ab.py 8 4 1m 'whole||-K 20' \
#       'seg60k|RDPMIX_COLL_SEG_BYTES=61440|-K 20' 'open||-K 20 -O'
import os
import statistics
import subprocess
import sys
import tempfile


def launch(build, m, size, env, args):
    """One launch of m coll-bench processes; rank 0's median (us)."""
    with tempfile.TemporaryDirectory(prefix='env-ab.') as d:
        procs = []
        for i in range(m):
            cmd = ['nice', 'timeout', '-k', '5', '300',
                   os.path.join(build, 'bench', 'coll-bench'), '-i', str(i),
                   '-n', str(m), '-d', d, '-v', '--no-header', '-l', size,
                   '-a', 'auto'] + args
            out = open(os.path.join(d, 'out.%d' % i), 'w')
            procs.append(subprocess.Popen(cmd, env=env, stdout=out,
                                          stderr=subprocess.DEVNULL))
        for p in procs:
            p.wait()
        rows = [l for l in open(os.path.join(d, 'out.0'))
                if l.startswith('rdpmix')]
    return float(rows[-1].split(',')[6]) if rows else float('nan')


def main():
    if len(sys.argv) < 5:
        sys.exit(open(__file__).read().split('\nimport')[0])
    rounds, m, size = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    cfgs = [c.split('|') for c in sys.argv[4:]]
    times = {c[0]: [] for c in cfgs}
    for r in range(rounds):
        for label, assigns, args in (cfgs if r % 2 == 0 else cfgs[::-1]):
            env = dict(os.environ, UCX_TLS='tcp')
            build = '.'
            for kv in assigns.split():
                k, v = kv.split('=', 1)
                if k == 'BUILD':
                    build = v
                else:
                    env[k] = v
            times[label].append(launch(build, m, size, env, args.split()))
    load = ' '.join(open('/proc/loadavg').read().split()[:3])
    print('M=%d size=%s rounds=%d load after: %s' % (m, size, rounds, load))
    base = times[cfgs[0][0]]
    for label, _, _ in cfgs:
        v = times[label]
        ok = [t for t in v if t == t]
        ratios = [a / b for a, b in zip(v, base) if a == a and b == b]
        print('  %-14s median %9.1f us (%9.1f-%9.1f), %d/%d ok; / %s %.2f '
              '[%.2f-%.2f]' % (label, statistics.median(ok), min(ok),
                               max(ok), len(ok), len(v), cfgs[0][0],
                               statistics.median(ratios), min(ratios),
                               max(ratios)))


if __name__ == '__main__':
    main()
