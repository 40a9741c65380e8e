#!/usr/bin/env python3
"""summarize_launch.py - tables and plots from launch_compare.sh's raw CSV.

For every pair of stacks (A/B, e.g. srun-rdpmix/srun-openpmix) and every
phase, one Markdown table: a row per (nodes, N, S) with each stack's median
across launches (min-max, number of launches) and the ratio of the medians
A/B (< 1: A is faster).  Each launch contributes one number: its median
over ranks (--stat median, default: the typical rank) or its max over
ranks (--stat max: the slowest rank); the launcher's wall time is one
number anyway.  With --plots DIR, one PNG per pair and phase: the ratio
against N, a line per (nodes, S) (needs python3-matplotlib).
"""

import argparse
import collections
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import fmt_ms  # noqa: E402

PHASES = ["wall", "init", "fence", "put", "commit", "fence_collect",
          "fence_nocollect", "get", "modex"]
# the whole modex of one launch: what a rank spends making its data
# available to every peer (the "put + commit + fence")
MODEX_PARTS = ("put", "commit", "fence_collect")
PAIRS = ["rdpmix/openpmix", "rdpmix-base/openpmix", "rdpmix-allmtl/openpmix",
         "rdpmix/rdpmix-base", "srun-rdpmix/srun-openpmix",
         "alloc-rdpmix/srun-openpmix", "alloc-rdpmix-base/srun-openpmix",
         "alloc-rdpmix/alloc-rdpmix-base"]


def fmt_ratio(r):
    return "%.2f" % r if r >= 0.1 else "%.2g" % r


def read_raw(path, stat):
    """{(stack, phase): {(nodes, N, S): [value per launch]}}; the phase
    "modex" is the sum of a launch's MODEX_PARTS (each its stat over
    ranks, so with --stat median the typical rank's modex)"""
    column = "median_us" if stat == "median" else "max_us"
    data = collections.defaultdict(lambda: collections.defaultdict(list))
    launches = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["nodes"]), int(row["N"]), int(row["S"]))
            if row[column] == "unsupported":
                continue  # pmix-bench: the host lacks that call
            value = float(row[column])
            data[(row["stack"], row["phase"])][key].append(value)
            launches[(row["stack"], row["launch"], key)][row["phase"]] = value
    for (stack, _, key), phases in sorted(launches.items()):
        if all(p in phases for p in MODEX_PARTS):
            data[(stack, "modex")][key].append(
                sum(phases[p] for p in MODEX_PARTS))
    return data


def read_outcomes(path):
    """{stack: Counter(result)}"""
    out = collections.defaultdict(collections.Counter)
    if not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out[row["stack"]][row["result"]] += 1
    return out


def cell(vals):
    if not vals:
        return "-", "0"
    return ("%s (%s-%s)" % (fmt_ms(statistics.median(vals)),
                            fmt_ms(min(vals)), fmt_ms(max(vals))),
            str(len(vals)))


def pair_rows(data, a, b, phase):
    """[(key, a_vals, b_vals, ratio or None)] for one pair and phase."""
    da, db = data.get((a, phase), {}), data.get((b, phase), {})
    rows = []
    for key in sorted(set(da) | set(db)):
        va, vb = da.get(key, []), db.get(key, [])
        r = None
        if va and vb and statistics.median(vb) > 0:
            r = statistics.median(va) / statistics.median(vb)
        rows.append((key, va, vb, r))
    return rows


def table(data, a, b, phase):
    rows = pair_rows(data, a, b, phase)
    if not any(va or vb for _, va, vb, _ in rows):
        return None
    lines = ["| nodes | N | S (B) | %s | n | %s | n | %s/%s |" % (a, b, a, b),
             "|---|---|---|---|---|---|---|---|"]
    for (nodes, n, s), va, vb, r in rows:
        ca, na = cell(va)
        cb, nb = cell(vb)
        lines.append("| %d | %d | %d | %s | %s | %s | %s | %s |" % (
            nodes, n, s, ca, na, cb, nb, "-" if r is None else fmt_ratio(r)))
    return "\n".join(lines)


def plot(data, a, b, phase, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = collections.defaultdict(list)
    for (nodes, n, s), _, _, r in pair_rows(data, a, b, phase):
        if r is not None:
            series[(nodes, s)].append((n, r))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for (nodes, s), pts in sorted(series.items()):
        pts.sort()
        label = "%d node%s" % (nodes, "" if nodes == 1 else "s")
        if s > 0:
            label += ", S=%d B" % s
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                label=label)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("processes (N)")
    ax.set_ylabel("%s / %s (median)" % (a, b))
    ax.set_title("%s: %s vs %s" % (phase, a, b))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw")
    ap.add_argument("--stat", choices=["median", "max"], default="median")
    ap.add_argument("--pair", action="append",
                    help="A/B (repeatable); default: every known pair "
                         "present in the data")
    ap.add_argument("--plots", metavar="DIR",
                    help="write one PNG per pair and phase here")
    ap.add_argument("--prefix", default="launch",
                    help="file name prefix of the plots")
    args = ap.parse_args()

    if args.plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            # Debian's python3-matplotlib is for Debian's python3, which
            # need not be the python3 first in PATH
            if os.path.exists("/usr/bin/python3") \
                    and os.path.realpath(sys.executable) != \
                    os.path.realpath("/usr/bin/python3"):
                os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
            sys.exit("summarize_launch.py: --plots needs matplotlib "
                     "(Debian: python3-matplotlib)")
    data = read_raw(args.raw, args.stat)
    stacks = {st for st, _ in data}
    pairs = args.pair or [p for p in PAIRS
                          if set(p.split("/")) <= stacks]
    phases = sorted({ph for _, ph in data},
                    key=lambda p: (PHASES.index(p) if p in PHASES else 99, p))
    if args.plots:
        os.makedirs(args.plots, exist_ok=True)
    for pair in pairs:
        a, b = pair.split("/")
        for phase in phases:
            t = table(data, a, b, phase)
            if t is None:
                continue
            print("#### %s: %s vs %s (ms; per launch the %s over ranks)\n"
                  % (phase, a, b, args.stat))
            print(t)
            if args.plots:
                name = "%s-%s-vs-%s-%s.png" % (args.prefix, a, b, phase)
                if plot(data, a, b, phase, os.path.join(args.plots, name)):
                    print("\n![%s %s](%s)" % (phase, pair, name))
            print()
    outcomes = read_outcomes(args.raw[:-4] + ".launches.csv"
                             if args.raw.endswith(".csv") else
                             args.raw + ".launches.csv")
    if outcomes:
        print("Launch outcomes: " + "; ".join(
            "%s %s" % (st, ", ".join("%d %s" % (c, r)
                                     for r, c in sorted(cnt.items())))
            for st, cnt in sorted(outcomes.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
