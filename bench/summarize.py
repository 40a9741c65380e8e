#!/usr/bin/env python3
"""summarize.py - Markdown table from compare.sh's raw CSV (stdlib only).

For every (N, S, phase) and stack, each launch contributes ONE number: by
default its max over ranks (max_us: the time until the slowest rank was
done, which is what a job waits for), with --stat median its median over
ranks (median_us).  The table shows the median of those numbers across
launches, with their min and max, the number of launches, and the ratio of
the rdpmix median to the OpenPMIx median (< 1 means rdpmix is faster).
Failed and hung launches contribute nothing; if FILE.launches.csv exists
next to the raw CSV their counts are listed below the table.  A phase the
host did not support (pmix-bench's "unsupported" rows) shows as
"unsupported".
"""

import argparse
import csv
import os
import signal
import statistics
import sys

PHASE_ORDER = ["init", "fence", "put", "commit", "fence_collect",
               "fence_nocollect", "get", "fence_collect_rep", "connect",
               "disconnect",
               "group_construct", "group_destruct", "wall"]
# pmix-bench's value columns for a call the host does not support
UNSUPPORTED = "unsupported"
STACK_ORDER = ["openpmix", "rdpmix"]
STACK_TITLE = {"openpmix": "OpenPMIx", "rdpmix": "rdpmix"}


def fmt_ms(us):
    ms = us / 1000.0
    if ms < 1:
        return "%.3f" % ms
    if ms < 10:
        return "%.2f" % ms
    return "%.1f" % ms


def stack_key(name):
    if name in STACK_ORDER:
        return (STACK_ORDER.index(name), name)
    return (len(STACK_ORDER), name)


def phase_key(name):
    if name in PHASE_ORDER:
        return (PHASE_ORDER.index(name), name)
    return (len(PHASE_ORDER), name)


def stat_cells(by_stack, stacks, ratio):
    """Table cells for {stack: [per-launch value]}: per stack "median
    (min-max)" and the count, then (if ratio) rdpmix/OpenPMIx medians.
    None in a list is a launch whose host did not support the phase."""
    cells = []
    med = {}
    for s in stacks:
        vals = [v for v in by_stack.get(s, []) if v is not None]
        if not vals:
            cells += [UNSUPPORTED if by_stack.get(s) else "-", "0"]
            continue
        med[s] = statistics.median(vals)
        cells += ["%s (%s-%s)" % (fmt_ms(med[s]), fmt_ms(min(vals)),
                                  fmt_ms(max(vals))), str(len(vals))]
    if ratio:
        if med.get("openpmix", 0) > 0 and "rdpmix" in med:
            r = med["rdpmix"] / med["openpmix"]
            cells.append("%.2f" % r if r >= 0.1 else "%.2g" % r)
        else:
            cells.append("-")
    return cells


def raw_key(row):
    return (int(row["N"]), int(row["S"]), row["phase"])


def launch_key(row):
    return (int(row["N"]), int(row["S"]))


def read_raw(path, column, key_of=raw_key):
    """{key_of(row), by default (N, S, phase): {stack: [per-launch value]}},
    and impl names; an unsupported phase's value is None."""
    data = {}
    impls = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                key = key_of(row)
                val = None if row[column] == UNSUPPORTED else \
                    float(row[column])
            except (KeyError, TypeError, ValueError):
                print("summarize.py: skipping malformed row: %r" % row,
                      file=sys.stderr)
                continue
            data.setdefault(key, {}).setdefault(row["stack"], []).append(val)
            impls.setdefault(row["stack"], set()).add(row["impl"])
    return data, impls


def read_launches(path, key_of=launch_key):
    """{key_of(row), by default (N, S): {stack: {result: count}}}"""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                key = key_of(row)
            except (KeyError, TypeError, ValueError):
                continue
            res = out.setdefault(key, {}).setdefault(row["stack"], {})
            res[row["result"]] = res.get(row["result"], 0) + 1
    return out


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="raw CSV written by compare.sh")
    ap.add_argument("--stat", choices=["max", "median"], default="max",
                    help="per-launch value: max (default) or median over "
                         "ranks")
    ap.add_argument("--phases", default=None,
                    help="comma-separated phases to show (default: all)")
    args = ap.parse_args()

    column = "max_us" if args.stat == "max" else "median_us"
    try:
        data, impls = read_raw(args.raw, column)
    except OSError as e:
        sys.exit("summarize.py: %s" % e)
    if not data:
        sys.exit("summarize.py: no data in %s" % args.raw)
    phases = set(args.phases.split(",")) if args.phases else None

    stacks = sorted({s for v in data.values() for s in v}, key=stack_key)
    ratio = "openpmix" in stacks and "rdpmix" in stacks

    print("Times in ms. Per launch: the %s over ranks; per cell: median "
          "across launches (min-max), n = launches." %
          ("max" if args.stat == "max" else "median"))
    for s in stacks:
        print("%s: %s." % (STACK_TITLE.get(s, s),
                           ", ".join(sorted(impls.get(s, [])))))
    print()
    head = ["N", "S (B)", "phase"]
    for s in stacks:
        head += ["%s median (min-max)" % STACK_TITLE.get(s, s), "n"]
    if ratio:
        head.append("rdpmix/OpenPMIx")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")

    keys = sorted(data, key=lambda k: (phase_key(k[2]), k[0], k[1]))
    for key in keys:
        n, size, phase = key
        if phases is not None and phase not in phases:
            continue
        cells = [str(n), str(size), phase] + \
            stat_cells(data[key], stacks, ratio)
        print("| " + " | ".join(cells) + " |")

    root, ext = os.path.splitext(args.raw)
    lpath = (root if ext == ".csv" else args.raw) + ".launches" + \
        (".csv" if ext == ".csv" else "")
    if not os.path.exists(lpath):
        return
    launches = read_launches(lpath)
    print()
    print("Launch outcomes (ok / hung / failed) from %s:" %
          os.path.basename(lpath))
    print()
    head = ["N", "S (B)"] + [STACK_TITLE.get(s, s) for s in stacks]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    for key in sorted(launches):
        cells = [str(key[0]), str(key[1])]
        for s in stacks:
            res = launches[key].get(s, {})
            ok = res.get("ok", 0)
            hung = res.get("hang", 0)
            failed = sum(v for k, v in res.items() if k not in ("ok", "hang"))
            cells.append("%d / %d / %d" % (ok, hung, failed))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
