#!/usr/bin/env python3
"""summarize_short.py - a short, plain summary of a compare.sh or
compare_nodes.sh raw CSV: per phase, each stack's median over launches of
the per-launch median over ranks (the typical rank), and rdpmix's ratio to
OpenPMIx when both ran.  For people reading a terminal (quickstart.sh run).
"""

import collections
import csv
import statistics
import sys

ORDER = ["init", "fence", "put", "commit", "fence_collect",
         "fence_nocollect", "get", "fence_collect_rep", "connect",
         "disconnect",
         "group_construct", "group_destruct", "wall"]
WHAT = {"init": "PMIx_Init", "fence": "barrier (PMIx_Fence, no data)",
        "put": "PMIx_Put", "commit": "PMIx_Commit",
        "fence_collect": "modex (PMIx_Fence + collect)",
        "fence_nocollect": "fence without data (direct modex)",
        "get": "PMIx_Get of every peer",
        "fence_collect_rep": "modex fence, median of K",
        "connect": "PMIx_Connect (job)",
        "disconnect": "PMIx_Disconnect (job)",
        "group_construct": "PMIx_Group_construct (job)",
        "group_destruct": "PMIx_Group_destruct", "wall": "whole launch (wall)"}


def main(path):
    vals = collections.defaultdict(list)
    config = set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["median_us"] == "unsupported":
                continue  # pmix-bench: the host lacks that call
            vals[(row["phase"], row["stack"])].append(float(row["median_us"]))
            config.add((row.get("M", "1"), row["N"], row["S"]))
    stacks = sorted({st for _, st in vals}, key=lambda s: s != "rdpmix")
    phases = sorted({ph for ph, _ in vals},
                    key=lambda p: ORDER.index(p) if p in ORDER else 99)
    for m, n, s in sorted(config):
        print("%s ranks on %s node%s, %s bytes per rank; median ms over %d "
              "launch%s:" % (n, m, "" if m == "1" else "s", s,
                             len(vals[(phases[0], stacks[0])]),
                             "" if len(vals[(phases[0], stacks[0])]) == 1
                             else "es"))
    head = "%-36s" % "phase" + "".join("%14s" % st for st in stacks)
    both = "rdpmix" in stacks and "openpmix" in stacks
    if both:
        head += "%18s" % "rdpmix/OpenPMIx"
    print(head)
    for ph in phases:
        line = "%-36s" % WHAT.get(ph, ph)
        med = {}
        for st in stacks:
            v = vals.get((ph, st))
            if v:
                med[st] = statistics.median(v) / 1000.0
                line += "%14.3f" % med[st]
            else:
                line += "%14s" % "-"
        if both and med.get("openpmix"):
            line += "%18.2f" % (med.get("rdpmix", 0) / med["openpmix"])
        print(line)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize_short.py RAW.csv")
    sys.exit(main(sys.argv[1]))
