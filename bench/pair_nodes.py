#!/usr/bin/env python3
# pair_nodes.py OUTDIR: per configuration and build, min/median/max across
# launches of each launch's max over ranks (ms) and of the ratios
# construct / fence_collect_rep and destruct / fence taken within a launch.
#
# pair_nodes.py OUTDIR --modex: the whole modex instead (put + commit +
# fence_collect, each launch counted with its median over ranks, the
# typical rank, and with its max over ranks), and fence_collect alone:
# per configuration each build's median over rounds and the after/before
# ratio paired within a round (min / median / max).
import csv, glob, statistics as st, sys
from collections import defaultdict

MODEX_PARTS = ('put', 'commit', 'fence_collect')


def modex_tables(outdir):
    per = defaultdict(dict)  # (build, round, M, P, S) -> (phase, stat) -> ms
    for f in [g for g in glob.glob(outdir + '/*.r*.csv') if 'launches' not in g]:
        build = f.split('/')[-1].split('.')[0]
        rnd = f.split('.r')[1].split('.')[0]
        for r in csv.DictReader(open(f)):
            for stat in ('median', 'max'):
                try:
                    per[(build, rnd, int(r['M']), int(r['P']), int(r['S']))][
                        (r['phase'], stat)] = float(r[stat + '_us']) / 1000
                except ValueError:
                    pass
    def value(v, what, stat):
        parts = MODEX_PARTS if what == 'modex' else (what,)
        if all((p, stat) in v for p in parts):
            return sum(v[(p, stat)] for p in parts)
        return None
    cfgs = sorted({k[2:] for k in per}, key=lambda c: (c[2], c[0], c[1]))
    rounds = sorted({k[1] for k in per})
    for what in ('modex', 'fence_collect'):
        for stat in ('median', 'max'):
            print(f'#### {what}, per launch the {stat} over ranks (ms), after / before paired by round\n')
            print('| M | N | S (B) | pairs | before | after | after/before min / median / max |')
            print('|---|---|---|---|---|---|---|')
            for (M, P, S) in cfgs:
                xb, xa = [], []
                for r in rounds:
                    b = per.get(('before', r, M, P, S))
                    a = per.get(('after', r, M, P, S))
                    vb = value(b, what, stat) if b else None
                    va = value(a, what, stat) if a else None
                    if vb and va:
                        xb.append(vb)
                        xa.append(va)
                if not xb:
                    continue
                q = [x / y for x, y in zip(xa, xb)]
                print(f'| {M} | {M * P} | {S} | {len(q)} | {st.median(xb):.3g} | {st.median(xa):.3g} | '
                      f'{min(q):.2f} / {st.median(q):.2f} / {max(q):.2f} |')
            print()


if len(sys.argv) > 2 and sys.argv[2] == '--modex':
    modex_tables(sys.argv[1])
    sys.exit(0)
d = defaultdict(dict)  # (build, round, M, P, S) -> phase -> max_us
for f in [g for g in glob.glob(sys.argv[1] + '/*.r*.csv') if 'launches' not in g]:
    build = f.split('/')[-1].split('.')[0]
    rnd = f.split('.r')[1].split('.')[0]
    for r in csv.DictReader(open(f)):
        d[(build, rnd, int(r['M']), int(r['P']), int(r['S']))][r['phase']] = float(r['max_us']) / 1000
cfgs = sorted({k[2:] for k in d})
def fmt(xs):
    if not xs: return '-'
    return '%.2f (%.2f-%.2f)' % (st.median(xs), min(xs), max(xs))
print('| S (B) | M | P | N | n | build | fence | fence_collect_rep | construct | destruct | construct / fence_collect_rep | destruct / fence |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|')
for (M, P, S) in sorted(cfgs, key=lambda c: (c[2], c[0], c[1])):
    for b in ('before', 'after'):
        runs = [v for k, v in d.items() if k[0] == b and k[2:] == (M, P, S)
                and all(p in v for p in ('fence', 'fence_collect_rep', 'group_construct', 'group_destruct'))]
        col = lambda p: [v[p] for v in runs]
        rc = [v['group_construct'] / v['fence_collect_rep'] for v in runs]
        rd = [v['group_destruct'] / v['fence'] for v in runs]
        print(f"| {S} | {M} | {P} | {M*P} | {len(runs)} | {b} | {fmt(col('fence'))} | {fmt(col('fence_collect_rep'))} | {fmt(col('group_construct'))} | {fmt(col('group_destruct'))} | {fmt(rc)} | {fmt(rd)} |")

print()
PHASES = ('fence', 'fence_collect_rep', 'group_construct', 'group_destruct')
def mmm(xs):
    return '%.2f / %.2f / %.2f' % (min(xs), st.median(xs), max(xs)) if xs else '-'
print('| cells | build | launches | construct / fence_collect_rep min / median / max | destruct / fence min / median / max |')
print('|---|---|---|---|---|')
for sel, name in ((lambda M: True, 'all'), (lambda M: M <= 4, 'M <= 4'),
                  (lambda M: M >= 8, 'M >= 8'), (lambda M: M == 16, 'M = 16')):
    for b in ('before', 'after'):
        runs = [v for k, v in d.items() if k[0] == b and sel(k[2]) and all(p in v for p in PHASES)]
        rc = [v['group_construct'] / v['fence_collect_rep'] for v in runs]
        rd = [v['group_destruct'] / v['fence'] for v in runs]
        print(f'| {name} | {b} | {len(runs)} | {mmm(rc)} | {mmm(rd)} |')
