#!/usr/bin/env python3
"""summarize_nodes.py - Markdown tables from compare_nodes.sh's raw CSV.

One table per phase (default: fence, fence_collect, get), one row per
(S, M nodes, P ranks per node, N).  As in summarize.py, each launch
contributes ONE number, by default its max over ranks (--stat median: its
median over ranks); a cell is the median of those numbers across launches
with their min and max, n the number of launches, and the last column the
ratio of the rdpmix median to the OpenPMIx median (< 1: rdpmix faster).
Then, for every --ratios A/B (default group_construct over fence_collect
and over fence_collect_rep, group_destruct/fence, connect/fence), a table of A over B within each launch (same processes,
same payload), median (min-max) across launches per stack.  Below the
tables, from FILE.launches.csv: ok / hung / failed launches per
configuration and stack.  Python 3, stdlib only.
"""

import argparse
import csv
import os
import statistics
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import (STACK_TITLE, UNSUPPORTED,  # noqa: E402
                       phase_key, read_launches, read_raw, stack_key,
                       stat_cells)

DEFAULT_PHASES = "fence,fence_collect,get"
DEFAULT_RATIOS = ("group_construct/fence_collect,"
                  "group_construct/fence_collect_rep,group_destruct/fence,"
                  "connect/fence")


def config_of(row):
    """(S, M, P, N) of a CSV row, as ints; ValueError if malformed."""
    return tuple(int(row[c]) for c in ("S", "M", "P", "N"))


def by_phase(data):
    """{(S, M, P, N, phase): x} -> {phase: {(S, M, P, N): x}}"""
    out = {}
    for key, cell in data.items():
        out.setdefault(key[-1], {})[key[:-1]] = cell
    return out


def read_per_launch(path, column):
    """{(stack, launch): (config, {phase: value or None if unsupported})}"""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                key = (row["stack"], row["launch"])
                conf = config_of(row)
                val = None if row[column] == UNSUPPORTED else \
                    float(row[column])
            except (KeyError, TypeError, ValueError):
                continue
            out.setdefault(key, (conf, {}))[1][row["phase"]] = val
    return out


def ratio_rows(per_launch, num, den, stacks):
    """Rows (S, M, P, N, per stack "median (min-max)", n) of num/den taken
    within each launch."""
    cells = {}
    for (stack, _), (conf, phases) in per_launch.items():
        if num not in phases or den not in phases:
            continue
        a, b = phases[num], phases[den]
        lst = cells.setdefault(conf, {}).setdefault(stack, [])
        lst.append(None if a is None or b is None or b <= 0 else a / b)
    for conf in sorted(cells):
        row = [str(v) for v in conf]
        for s in stacks:
            vals = [v for v in cells[conf].get(s, []) if v is not None]
            if not vals:
                row += [UNSUPPORTED if cells[conf].get(s) else "-", "0"]
                continue
            row += ["%.2f (%.2f-%.2f)" % (statistics.median(vals), min(vals),
                                          max(vals)), str(len(vals))]
        yield row


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def phase_rows(cells_by_key, stacks, ratio):
    for key in sorted(cells_by_key):
        yield [str(v) for v in key] + \
            stat_cells(cells_by_key[key], stacks, ratio)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="raw CSV written by compare_nodes.sh")
    ap.add_argument("--stat", choices=["max", "median"], default="max",
                    help="per-launch value: max (default) or median over "
                         "ranks")
    ap.add_argument("--phases", default=DEFAULT_PHASES,
                    help="comma-separated phases, or 'all' (default: %s)" %
                         DEFAULT_PHASES)
    ap.add_argument("--ratios", default=DEFAULT_RATIOS,
                    help="comma-separated A/B phase pairs, taken within "
                         "each launch, or 'none' (default: %s)" %
                         DEFAULT_RATIOS)
    args = ap.parse_args()

    column = "max_us" if args.stat == "max" else "median_us"
    try:
        data, impls = read_raw(args.raw, column,
                               lambda r: config_of(r) + (r["phase"],))
        data = by_phase(data)
    except OSError as e:
        sys.exit("summarize_nodes.py: %s" % e)
    if not data:
        sys.exit("summarize_nodes.py: no data in %s" % args.raw)
    if args.phases == "all":
        phases = sorted(data, key=phase_key)
    else:
        phases = [p for p in args.phases.split(",") if p]
    lpath = (args.raw[:-4] if args.raw.endswith(".csv") else args.raw) + \
        ".launches.csv"
    launches = read_launches(lpath, config_of) \
        if os.path.exists(lpath) else {}
    # a stack whose launches all failed has no times but has outcomes
    stacks = sorted({s for cells in data.values() for c in cells.values()
                     for s in c} | {s for c in launches.values() for s in c},
                    key=stack_key)
    ratio = "openpmix" in stacks and "rdpmix" in stacks

    print("Times in ms. Per launch: the %s over ranks; per cell: median "
          "across launches (min-max), n = launches. M nodes, P ranks per "
          "node, N = M*P ranks, S bytes per rank." % args.stat)
    for s in stacks:
        print("%s: %s." % (STACK_TITLE.get(s, s),
                           ", ".join(sorted(impls.get(s, [])))))
    head = ["S (B)", "M", "P", "N"]
    for s in stacks:
        head += ["%s median (min-max)" % STACK_TITLE.get(s, s), "n"]
    if ratio:
        head.append("rdpmix/OpenPMIx")
    for phase in phases:
        print()
        print("### %s" % phase)
        print()
        if phase not in data:
            print("(no data)")
            continue
        table(head, phase_rows(data[phase], stacks, ratio))

    if args.ratios != "none":
        per_launch = read_per_launch(args.raw, column)
        for pair in [p for p in args.ratios.split(",") if p]:
            num, _, den = pair.partition("/")
            print()
            print("### %s / %s (within each launch)" % (num, den))
            print()
            rows = list(ratio_rows(per_launch, num, den, stacks))
            if not rows:
                print("(no data)")
                continue
            rhead = ["S (B)", "M", "P", "N"]
            for s in stacks:
                rhead += ["%s median (min-max)" % STACK_TITLE.get(s, s), "n"]
            table(rhead, rows)

    if not launches:
        return
    print()
    print("Launch outcomes (ok / hung / failed) from %s:" %
          os.path.basename(lpath))
    print()
    rows = []
    for key in sorted(launches):
        cells = [str(v) for v in key]
        for s in stacks:
            res = launches[key].get(s, {})
            ok, hung = res.get("ok", 0), res.get("hang", 0)
            cells.append("%d / %d / %d" % (ok, hung,
                                           sum(res.values()) - ok - hung))
        rows.append(cells)
    table(["S (B)", "M", "P", "N"] + [STACK_TITLE.get(s, s) for s in stacks],
          rows)


if __name__ == "__main__":
    main()
