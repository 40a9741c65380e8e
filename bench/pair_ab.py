#!/usr/bin/env python3
# pair_ab.py DIR - paired before/after comparison of engine_compare.sh runs
# saved as DIR/{before,after}-M-PAIR.csv: per cell the median over pairs of
# after/before (ratio of each launch's median), geometric mean per M.
import sys, csv, glob, statistics as st, math, collections, re
d = collections.defaultdict(dict)  # (side,M,pair) -> {(alg,size): median}
for f in glob.glob(sys.argv[1] + '/*-*-*.csv'):
    m = re.match(r'.*/(before|after)-(\d+)-(\d+)\.csv$', f)
    if not m: continue
    side, M, pair = m.group(1), int(m.group(2)), int(m.group(3))
    for r in csv.DictReader(open(f)):
        d[(side, M, pair)][(r['alg'], int(r['size']))] = float(r['median_us'])
ratios = collections.defaultdict(list)
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for (side, M, pair), cells in d.items():
    if side != 'after' or ('before', M, pair) not in d: continue
    b = d[('before', M, pair)]
    for c, v in cells.items():
        if c in b:
            ratios[(M,) + c].append(v / b[c])
for (side, M, pair), cells in d.items():
    for c, v in cells.items():
        vals[(M,) + c][side].append(v)
def fmt(us):
    return '%.1f us' % us if us < 1000 else '%.2f ms' % (us / 1000)
perM = collections.defaultdict(list)
allr = []
print('| M | size | alg | before (16): min / median / max | after (1): min / median / max | after/before (paired median) |')
print('| --- | --- | --- | --- | --- | --- |')
for k in sorted(ratios):
    M, alg, size = k
    r = st.median(ratios[k]); perM[M].append(r); allr.append(r)
    if alg == 'auto' or True:
        b = vals[k]['before']; a = vals[k]['after']
        if alg in ('auto',):
            print('| %d | %s | %s | %s / %s / %s | %s / %s / %s | %.2f |' % (M, size, alg, fmt(min(b)), fmt(st.median(b)), fmt(max(b)), fmt(min(a)), fmt(st.median(a)), fmt(max(a)), r))
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
for M in sorted(perM):
    print('M=%d: geomean of paired ratios over %d cells: %.3f (cells %.2f-%.2f), pairs %d' % (M, len(perM[M]), gm(perM[M]), min(perM[M]), max(perM[M]), len(ratios[next(k for k in ratios if k[0]==M)])))
print('all: %.3f over %d cells' % (gm(allr), len(allr)))
