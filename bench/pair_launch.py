#!/usr/bin/env python3
"""pair_launch.py RAW.csv A B [PHASE]: paired ratios from launch_compare.sh.

launch_compare.sh runs the stacks of a configuration in rounds, one launch
each, back to back (the order rotates).  This pairs the k-th launch of
stack A with the k-th launch of stack B in the same (nodes, N, S), so that
both saw about the same load, and prints per configuration the number of
pairs, each stack's median (ms) and the min / median / max of the per-pair
ratio A/B.  PHASE is a pmix-bench phase or "modex" (put + commit +
fence_collect, the default); each launch counts with its median over ranks
and, in a second table, its max over ranks.
"""

import collections
import csv
import statistics
import sys

MODEX_PARTS = ("put", "commit", "fence_collect")


def launches(path, phase, stat):
    """(stack, nodes, N, S) -> [ms of each launch, in launch order]"""
    per = collections.defaultdict(dict)  # (stack, nodes, N, S, launch) -> phase -> us
    for r in csv.DictReader(open(path)):
        key = (r["stack"], int(r["nodes"]), int(r["N"]), int(r["S"]),
               int(r["launch"]))
        try:
            per[key][r["phase"]] = float(r[stat + "_us"])
        except ValueError:
            pass  # a phase the implementation does not support
    out = collections.defaultdict(list)
    for key in sorted(per, key=lambda k: k[4]):
        p = per[key]
        parts = MODEX_PARTS if phase == "modex" else (phase,)
        if all(x in p for x in parts):
            out[key[:4]].append(sum(p[x] for x in parts) / 1000)
    return out


def table(path, a, b, phase, stat):
    data = launches(path, phase, stat)
    print("#### %s, %s / %s, per launch the %s over ranks (ms)\n"
          % (phase, a, b, stat))
    print("| nodes | N | S (B) | pairs | %s | %s | %s/%s min / median / max |"
          % (a, b, a, b))
    print("|---|---|---|---|---|---|---|")
    for cfg in sorted({k[1:] for k in data}, key=lambda c: (c[2], c[0], c[1])):
        xa, xb = data.get((a,) + cfg, []), data.get((b,) + cfg, [])
        n = min(len(xa), len(xb))
        if n == 0:
            continue
        q = [x / y for x, y in zip(xa[:n], xb[:n]) if y > 0]
        print("| %d | %d | %d | %d | %.3g | %.3g | %.2f / %.2f / %.2f |"
              % (cfg + (n, statistics.median(xa[:n]), statistics.median(xb[:n]),
                        min(q), statistics.median(q), max(q))))
    print()


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    phase = sys.argv[4] if len(sys.argv) == 5 else "modex"
    for stat in ("median", "max"):
        table(sys.argv[1], sys.argv[2], sys.argv[3], phase, stat)


if __name__ == "__main__":
    main()
