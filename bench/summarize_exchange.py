#!/usr/bin/env python3
"""summarize_exchange.py - the table of bench/exchange_matrix.sh's CSV

  bench/summarize_exchange.py FILE [FILE ...]

Per configuration, over the rounds: min / median / max of each launch's
median max-over-ranks time (us); the median over rounds of rank 0's and
rank 1's own medians, of the barrier skew, of the later send call and of
the detection time; and the paired ratio to `mpi` in the same round
(min / median / max).
"""
import statistics
import sys
from collections import defaultdict


def main():
    rows = defaultdict(dict)  # cfg -> round -> fields
    order = []
    for path in sys.argv[1:]:
        for line in open(path):
            if line.startswith('#') or not line.strip():
                continue
            f = line.strip().split(',')
            key = (path, int(f[0]))
            cfg = f[1]
            if cfg not in order:
                order.append(cfg)
            vals = [None if x == '-' else float(x) for x in f[4:]]
            rows[cfg][key] = vals
    mpi = rows.get('mpi', {})

    def fmt(v):
        return '-' if v is None else '%.2f' % v

    def med_col(cfg, col):
        v = [r[col] for r in rows[cfg].values()
             if len(r) > col and r[col] is not None]
        return statistics.median(v) if v else None

    print('| config | rounds | max over ranks (us) | rank 0 | rank 1 '
          '| skew | later send call | detection | / mpi (paired) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for cfg in order:
        r = rows[cfg]
        meds = sorted(v[1] for v in r.values())
        ratios = sorted(v[1] / mpi[k][1] for k, v in r.items() if k in mpi)
        rat = ('%.2f / %.2f / %.2f' % (ratios[0], statistics.median(ratios),
                                       ratios[-1])) if ratios else '-'
        print('| %s | %d | %.2f / %.2f / %.2f | %s | %s | %s | %s | %s | %s |'
              % (cfg, len(meds), meds[0], statistics.median(meds), meds[-1],
                 fmt(med_col(cfg, 4)), fmt(med_col(cfg, 7)),
                 fmt(med_col(cfg, 10)), fmt(med_col(cfg, 13)),
                 fmt(med_col(cfg, 16)), rat))


if __name__ == '__main__':
    main()
