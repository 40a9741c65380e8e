#!/usr/bin/env python3
"""summarize_coll.py - engine_compare.sh's raw CSV -> Markdown tables.

    bench/summarize_coll.py RAW.csv [--stat min|median|max] [--tie PCT]

For every transport, process count M and block size: the median across
launches of each launch's figure (default: the median over iterations of
the per-iteration max over processes, column median_us) for every engine
algorithm and every Open MPI run, the ratio engine/MPI (< 1: the engine is
faster), the best engine algorithm, and from those the suggested
crossover thresholds.  Reads RAW's companions when present:
RAW.launches.csv (outcome of every launch) and RAW.picked.csv (what the
engine's auto selection chose).  Python 3, standard library only.
"""

import argparse
import csv
import os
import statistics
import sys

ENGINE = "rdpmix-ucx"
ALGS = ["recursive_doubling", "bruck", "ring"]
SHORT = {"recursive_doubling": "rd", "bruck": "bruck", "ring": "ring"}


def fmt_time(us):
    if us is None:
        return "-"
    if us >= 10000:
        return "%.1f ms" % (us / 1000)
    if us >= 1000:
        return "%.2f ms" % (us / 1000)
    return "%.1f us" % us


def fmt_size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def companion(raw, suffix):
    base = raw[:-4] if raw.endswith(".csv") else raw
    path = base + suffix
    return path if os.path.exists(path) else None


def read_rows(path):
    try:
        with open(path, newline="") as f:
            lines = [l for l in f if l.strip() and not l.startswith("#")]
    except OSError as e:
        sys.exit("summarize_coll: %s" % e)
    return list(csv.DictReader(lines))


def load(raw, stat):
    """{(tls, M, size): {column: [values across launches]}}"""
    col = stat + "_us"
    data = {}
    for r in read_rows(raw):
        try:
            key = (r["tls"], int(r["M"]), int(r["size"]))
            val = float(r[col])
        except (KeyError, ValueError):
            sys.exit("summarize_coll: %s: bad row %r" % (raw, r))
        if r["impl"] == ENGINE:
            name = r["alg"]
        else:
            name = "mpi:" + r["alg"]
        data.setdefault(key, {}).setdefault(name, []).append(val)
    return data


def outcomes(path):
    rows = read_rows(path)
    table = {}
    for r in rows:
        k = (r["tls"], r["stack"], r["alg"], int(r["M"]))
        table.setdefault(k, {}).setdefault(r["result"], 0)
        table[k][r["result"]] += 1
    out = ["| tls | stack | alg | M | ok | hang | fail | other |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in sorted(table):
        c = table[k]
        other = sum(v for r, v in c.items() if r not in ("ok", "hang", "fail"))
        out.append("| %s | %s | %s | %d | %d | %d | %d | %d |"
                   % (k + (c.get("ok", 0), c.get("hang", 0), c.get("fail", 0),
                           other)))
    return out


def picks(path):
    """{(tls, M, size): set of algorithms auto picked}"""
    if path is None:
        return {}
    p = {}
    for r in read_rows(path):
        k = (r["tls"], int(r["M"]), int(r["size"]))
        p.setdefault(k, set()).add(r["picked"])
    return p


def best_of(cells, tie):
    """(best algorithm, the ones within tie of it)"""
    meds = {a: statistics.median(cells[a]) for a in ALGS if a in cells}
    if not meds:
        return None, []
    best = min(meds, key=meds.get)
    close = sorted((a for a in meds
                    if a != best and meds[a] <= meds[best] * (1 + tie)),
                   key=meds.get)
    return best, close


def crossovers(best_by_m):
    """Per M, runs of consecutive sizes won by one algorithm."""
    out = []
    for (tls, m), seq in sorted(best_by_m.items()):
        runs = []
        for size, alg in seq:
            if runs and runs[-1][2] == alg:
                runs[-1][1] = size
            else:
                runs.append([size, size, alg])
        text = "; ".join(
            "%s%s: %s" % (fmt_size(a), "" if a == b else " - " + fmt_size(b),
                          SHORT[alg]) for a, b, alg in runs)
        out.append("- %s, M=%d: %s" % (tls, m, text))
    return out


def suggestions(best_by_m):
    """Thresholds in the shape of src/coll/select.h."""
    ring_from = {}
    for (tls, m), seq in sorted(best_by_m.items()):
        if m <= 2:
            continue  # one exchange: the three algorithms are the same
        # smallest size from which ring wins at every larger size
        start = None
        for size, alg in seq:
            if alg == "ring":
                start = size if start is None else start
            else:
                start = None
        if start is not None:
            ring_from.setdefault(tls, []).append((m, start))
    out = []
    for tls, lst in sorted(ring_from.items()):
        ms = [m for m, _ in lst]
        sizes = sorted(s for _, s in lst)
        out.append("- %s: ring wins at every size from %s up; suggested "
                   "RDP_COLL_LARGE_MIN_BLOCK (the ring starts there) at "
                   "most %s (median over those M), "
                   "RDP_COLL_RING_MAX_PEERS >= %d"
                   % (tls, ", ".join("%s (M=%d)" % (fmt_size(s), m)
                                     for m, s in lst),
                      fmt_size(int(statistics.median_low(sizes))),
                      max(ms)))
    if not out:
        out.append("- ring never wins (M > 2) up to the largest size: "
                   "keep rd/Bruck (raise RDP_COLL_LARGE_MIN_BLOCK above "
                   "the largest size measured)")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw")
    ap.add_argument("--stat", choices=["min", "median", "max"],
                    default="median",
                    help="per-launch figure (over iterations of the "
                    "per-iteration max over processes); default median")
    ap.add_argument("--ref", default="default",
                    help="MPI alg column the ratios use (default: default, "
                    "else the first)")
    ap.add_argument("--tie", type=float, default=10.0,
                    help="percent within which algorithms count as tied "
                    "(default 10)")
    a = ap.parse_args()
    tie = a.tie / 100.0
    data = load(a.raw, a.stat)
    picked = picks(companion(a.raw, ".picked.csv"))
    mpis = sorted({n for cells in data.values() for n in cells
                   if n.startswith("mpi:")})

    print("# Collective engine vs MPI_Allgather: %s\n" % a.raw)
    print("Per cell: median across launches of each launch's %s over "
          "iterations of the per-iteration max over the M processes. "
          "Ratio < 1: the engine is faster. `best` is the fastest forced "
          "engine algorithm (+ those within %g%% of it).\n"
          % (a.stat, a.tie))
    launches = companion(a.raw, ".launches.csv")
    if launches:
        print("## Launches\n")
        print("\n".join(outcomes(launches)))
        print()

    ref = None
    if mpis:
        ref = "mpi:" + a.ref if "mpi:" + a.ref in mpis else mpis[0]
        print("Ratios are against MPI `%s`.\n" % ref[4:])
    refs = [ref] if ref else []
    head = (["tls", "M", "size"] + [SHORT[x] for x in ALGS] + ["auto"]
            + ["MPI " + SHORT.get(m[4:], m[4:]) for m in mpis] + ["best"]
            + ["best/MPI" for _ in refs] + ["auto/MPI" for _ in refs]
            + ["n"])
    print("## Times\n")
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    best_by_m = {}
    for key in sorted(data):
        tls, m, size = key
        cells = data[key]
        med = {n: statistics.median(v) for n, v in cells.items()}
        best, close = best_of(cells, tie)
        if best is not None:
            best_by_m.setdefault((tls, m), []).append((size, best))
        auto = fmt_time(med.get("auto"))
        if key in picked and "auto" in med:
            auto += " (%s)" % "/".join(SHORT.get(p, p)
                                       for p in sorted(picked[key]))
        row = [tls, str(m), fmt_size(size)]
        row += [fmt_time(med.get(x)) for x in ALGS] + [auto]
        row += [fmt_time(med.get(x)) for x in mpis]
        row.append("-" if best is None else
                   SHORT[best] + "".join(" ~" + SHORT[c] for c in close))
        for which in ("best", "auto"):
            for x in refs:
                v = med.get(best) if which == "best" and best else med.get(which)
                row.append("%.3g" % (v / med[x])
                           if v is not None and med.get(x) else "-")
        row.append(str(max(len(v) for v in cells.values())))
        print("| " + " | ".join(row) + " |")
    print("\n## Best engine algorithm by size\n")
    print("\n".join(crossovers(best_by_m)))
    print("\n## Suggested thresholds (src/coll/select.h)\n")
    print("\n".join(suggestions(best_by_m)))
    print("\nSelection today (src/coll/select.c): ring for blocks of "
          "RDP_COLL_LARGE_MIN_BLOCK and more over 3..RDP_COLL_RING_MAX_PEERS "
          "participants, else Bruck. Differences within the tie margin are "
          "noise on an oversubscribed machine: confirm with more launches.")


if __name__ == "__main__":
    main()
