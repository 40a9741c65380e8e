#!/usr/bin/env python3
"""launch_ab.py ROUNDS N S 'LABEL|VAR=VALUE ...|BUILD' ... [-- pmix-bench args]

Paired A/B of pmix-bench under rdpmix-run --nodes 2 (simulated nodes) across
settings: each round launches N ranks once per setting (environment
variables, and the build whose rdpmix-run and library run them), the order
reversed every other round; every launch runs the first setting's
bench/pmix-bench.  Per phase: each setting's min / median / max over rounds
of pmix-bench's median (and max) over ranks, and every pair of settings'
per-round ratio (min / median / max, and how many rounds below 1).
ABJSON=FILE also writes the raw values and the 1-minute load per round.

    bench/launch_ab.py 40 16 8 "off|RDPMIX_FENCE_BOARD_CALLER=0|$PWD" \\
        "on|RDPMIX_FENCE_BOARD_CALLER=1|$PWD" -- -p modex,modex_rep -k 20
"""
import json
import os
import statistics
import subprocess
import sys


def launch(build, bench, n, s, env_kv, bargs):
    """pmix-bench's rows of one launch: phase -> (median_us, max_us)"""
    env = dict(os.environ)
    for kv in env_kv.split():
        k, v = kv.split('=', 1)
        env[k] = v
    env['LD_LIBRARY_PATH'] = os.path.join(build, '.libs')
    cmd = ['nice', 'timeout', '120', os.path.join(build, 'src/run/rdpmix-run'),
           '--nodes', '2', '-n', n, bench, '-s', s, '--no-header'] + bargs
    out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split(',')
        if len(f) >= 8 and f[1] == n:
            try:
                rows[f[3]] = (float(f[6]), float(f[7]))
            except ValueError:
                pass  # unsupported phase
    return rows


def spread(v):
    return '%.2f/%.2f/%.2f' % (min(v), statistics.median(v), max(v))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, n, s = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    cut = rest.index('--') if '--' in rest else len(rest)
    cfgs = [c.split('|') for c in rest[:cut]]
    bargs = rest[cut + 1:]
    bench = os.path.join(cfgs[0][2], 'bench', 'pmix-bench')
    res = {c[0]: [] for c in cfgs}
    loads = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for lab, kv, build in (cfgs if r % 2 == 0 else cfgs[::-1]):
            res[lab].append(launch(build, bench, n, s, kv, bargs))
    if os.environ.get('ABJSON'):
        with open(os.environ['ABJSON'], 'w') as f:
            json.dump({'loads': loads, 'res': res}, f)
    labs = [c[0] for c in cfgs]
    print('N=%s S=%s rounds=%d load %s' % (n, s, rounds, spread(loads)))
    phases = sorted(set().union(*[set(d) for d in res[labs[0]]]))
    for ph in phases:
        for idx, stat in ((0, 'median'), (1, 'max')):
            line = '%s %s (us):' % (ph, stat)
            for lab in labs:
                v = [d[ph][idx] for d in res[lab] if ph in d]
                if v:
                    line += ' %s %.0f/%.0f/%.0f' % (lab, min(v),
                                                   statistics.median(v), max(v))
            for i, lb in enumerate(labs):
                for la in labs[i + 1:]:
                    q = [x[ph][idx] / y[ph][idx]
                         for x, y in zip(res[la], res[lb])
                         if ph in x and ph in y and y[ph][idx] > 0]
                    if q:
                        line += ' | %s/%s %s (%d<1 of %d)' % (
                            la, lb, spread(q), sum(v < 1 for v in q), len(q))
            print(line)


if __name__ == '__main__':
    main()
