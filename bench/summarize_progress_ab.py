#!/usr/bin/env python3
"""summarize_progress_ab.py DIR [CFGS] - bench/progress_ab.sh's table:
per process count and size, min / median / max over the rounds of each
configuration's median (us), and of the ratios paired within a round
(to MPI, and to base).  CFGS: comma-separated (default base,new,busy,mpi);
only rounds where every one of them has a result count."""
import csv
import glob
import os
import re
import statistics
import sys


def mmm(v):
    return "%.2f / %.2f / %.2f" % (min(v), statistics.median(v), max(v))


def main():
    d = sys.argv[1]
    cfgs = (sys.argv[2] if len(sys.argv) > 2 else "base,new,busy,mpi").split(",")
    data = {}
    for f in glob.glob(os.path.join(d, "*-M*-L*.csv")):
        m = re.match(r"(\w+)-M(\d+)-L(\d+)\.csv$", os.path.basename(f))
        if not m:
            continue
        for row in csv.DictReader(open(f)):
            key = (m.group(1), int(m.group(2)), int(m.group(3)), int(row["size"]))
            data[key] = float(row["median_us"])
    eng = [c for c in cfgs if c != "mpi"]
    refs = [r for r in ("mpi", "base") if r in cfgs]
    hdr = ["M", "size (B)", "rounds"] + ["%s (us)" % c for c in cfgs]
    hdr += ["%s / %s" % (c, r) for r in refs for c in eng if c != r]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for M in sorted({k[1] for k in data}):
        for s in sorted({k[3] for k in data}):
            rounds = sorted({k[2] for k in data
                             if k[1] == M and k[3] == s
                             and all((c, M, k[2], s) in data for c in cfgs)})
            if not rounds:
                continue
            cells = [str(M), str(s), str(len(rounds))]
            cells += [mmm([data[(c, M, L, s)] for L in rounds]) for c in cfgs]
            cells += [mmm([data[(c, M, L, s)] / data[(r, M, L, s)] for L in rounds])
                      for r in refs for c in eng if c != r]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
