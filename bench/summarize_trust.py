#!/usr/bin/env python3
# summarize_trust.py DIR - tables of a bench/trust_compare.sh run: per
# (M, size) each stack's time (median over launches, min-max) and the
# ratios of issue 11's targets, paired within each launch (the three
# stacks ran back to back): open/MPI, full/MPI and full/(MPI + floor),
# min / median / max over launches.
#
# floor(M, n) = M^2 x floor(n) / min(M, 2): every process MACs its own
# block and checks the M - 1 it receives (M n bytes), M processes on at
# most 2 cores (bench/RESULTS.md, "the authentication floor"); floor(n)
# is the lower of mac-floor's two runs (before and after), which makes
# the target stricter.
import collections
import csv
import glob
import os
import statistics as st
import sys

STACKS = {'rdpmix-ucx': 'full', 'rdpmix-ucx-open': 'open', 'ompi-ucx': 'mpi'}


def read_floor(d):
    best = {}
    for f in glob.glob(os.path.join(d, 'floor-*.csv')):
        rows = [l for l in open(f) if l.strip() and not l.startswith('#')]
        for r in csv.DictReader(rows):
            n, v = int(r['bytes']), float(r['floor_us'])
            best[n] = min(v, best.get(n, v))
    return best


def read_runs(d):
    t = collections.defaultdict(dict)  # (M, size, launch) -> stack -> us
    for f in glob.glob(os.path.join(d, 'ag-*.csv')):
        if f.endswith(('.launches.csv', '.picked.csv')):
            continue
        for r in csv.DictReader(open(f)):
            s = STACKS.get(r['impl'])
            if s is not None:
                key = (int(r['M']), int(r['size']), int(r['launch']))
                t[key][s] = float(r['median_us'])
    return t


def mmm(xs, fmt='%.2f'):
    return '%s / %s / %s' % (fmt % min(xs), fmt % st.median(xs), fmt % max(xs))


def main(d):
    floor = read_floor(d)
    runs = read_runs(d)
    cells = sorted({(m, n) for m, n, _ in runs})
    print('| M | size (B) | full (us) | open (us) | MPI (us) | floor(M, n) (us) '
          '| open / MPI | full / MPI | full / (MPI + floor) | launches |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for m, n in cells:
        ls = [v for (mm, nn, _), v in runs.items()
              if (mm, nn) == (m, n) and len(v) == 3]
        if not ls:
            continue
        fl = floor.get(n)
        flm = fl * m * m / min(m, 2) if fl is not None else None

        def col(s):
            xs = [v[s] for v in ls]
            return '%.1f (%.1f-%.1f)' % (st.median(xs), min(xs), max(xs))
        full_floor = ([v['full'] / (v['mpi'] + flm) for v in ls]
                      if flm is not None else None)
        print('| %d | %d | %s | %s | %s | %s | %s | %s | %s | %d |' % (
            m, n, col('full'), col('open'), col('mpi'),
            '%.1f' % flm if flm is not None else '-',
            mmm([v['open'] / v['mpi'] for v in ls]),
            mmm([v['full'] / v['mpi'] for v in ls]),
            mmm(full_floor) if full_floor else '-', len(ls)))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: summarize_trust.py DIR')
    main(sys.argv[1])
