#!/usr/bin/env python3
"""project.py - projected cost of the engine's collectives at 1k-16k servers.

    bench/project.py [--alpha US --bw GBS | --pingpong FILE | --fit RAW.csv]
                     [--hmac GBS] [--overhead US]
                     [--nodes 1024,2048,4096,8192,16384]
                     [--sizes 8,64,512,4k,16k,64k]

A Hockney model (each message costs alpha + bytes * beta, one message in
and one out per server per step, no contention) with a LogP-style
per-message CPU overhead o on each side, evaluated on the exact step
structure of the engine's schedules (src/coll/sched_*.c, docs/coll.md),
printed as Markdown with the formulas.

Where alpha and beta come from (first that applies):
  --alpha/--bw    given (e.g. a fabric's numbers from ucx_perftest)
  --pingpong F    bench/ucx_pingpong's CSV: alpha = the lowest one-way
                  latency of 8-512 B (one noisy row does not skew it),
                  beta = 1 / bandwidth of its largest size (both
                  through the transport, HMAC included)
  --fit RAW       least-squares fit of coll-bench rows (engine_compare.sh
                  raw CSV, forced algorithms, M <= --fit-max-m) to the
                  same model: T = steps * alpha + bytes * beta
  default         docs/ucx.md's tcp loopback numbers: 9 us, 1.04 GB/s
--hmac GBS adds the authenticator's per-byte cost (sender and receiver)
when alpha/beta are a raw fabric's; --overhead adds o per message per side.
Python 3, standard library only.
"""

import argparse
import csv
import math
import sys

HDR = 52  # engine header bytes per message (docs/coll.md)
BLK = 12  # per-block framing: origin u32 + length u64
DEFAULT_ALPHA_US = 9.0
DEFAULT_BW_GBS = 1.04


def parse_size(s):
    s = s.strip()
    mult = 1
    if s[-1:] in ("k", "K"):
        mult, s = 1 << 10, s[:-1]
    elif s[-1:] in ("m", "M"):
        mult, s = 1 << 20, s[:-1]
    v = int(s) * mult
    if v < 0:
        raise ValueError(s)
    return v


def parse_list(text, what):
    try:
        vals = [parse_size(x) for x in text.split(",") if x.strip()]
    except ValueError:
        sys.exit("project: bad %s list '%s'" % (what, text))
    if not vals:
        sys.exit("project: empty %s list" % what)
    return vals


def fmt_size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def fmt_time(s):
    if s >= 1.0:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.2f ms" % (s * 1e3)
    return "%.1f us" % (s * 1e6)


# ---- the schedules' critical path: a list of blocks moved per step ----

def steps_rd(p):
    """Recursive doubling with fold/unfold (sched_rd.c)."""
    q = 1 << (p.bit_length() - 1)
    e = p - q
    out = [1] if e else []  # fold: extra q+i hands its block to i
    k = 1
    while k < q:
        # exchange the aligned group of k core ranks; the group holding
        # the most also carries min(e, k) blocks of extras
        out.append(k + min(e, k))
        k <<= 1
    if e:
        out.append(p - 1)  # unfold: every block but its own to q+i
    return out


def steps_bruck(p):
    out, k = [], 1
    while k < p:
        out.append(min(k, p - k))
        k <<= 1
    return out


def steps_ring(p):
    return [1] * (p - 1)


def steps_dissem(p):
    return [0] * (p - 1).bit_length()


ALGS = [("recursive_doubling", steps_rd), ("bruck", steps_bruck),
        ("ring", steps_ring)]


def cost(steps, n, alpha, beta, o):
    """Sum over steps of alpha + 2o + message bytes * beta."""
    t = 0.0
    for blocks in steps:
        t += alpha + 2 * o + (HDR + blocks * (BLK + n)) * beta
    return t


# ---- inputs ----

def from_pingpong(path):
    lat, bw = None, None
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    except OSError as e:
        sys.exit("project: %s" % e)
    for r in rows:
        try:
            size = int(r["bytes"])
            if r["test"] == "latency" and size <= 512:
                v = float(r["one_way_us"]) * 1e-6
                lat = v if lat is None else min(lat, v)
            if r["test"] == "bandwidth" and (bw is None or size > bw[0]):
                bw = (size, float(r["MB_per_s"]) * 1e6)
        except (KeyError, ValueError):
            sys.exit("project: %s is not ucx_pingpong output" % path)
    if lat is None or bw is None:
        sys.exit("project: %s lacks a small-message latency or a bandwidth "
                 "row"
                 % path)
    return lat, 1.0 / bw[1], ("ucx_pingpong %s: lowest one-way latency of "
                               "8-512 B, bandwidth at %s"
                               % (path, fmt_size(bw[0])))


def from_fit(path, tls, max_m):
    xs = []
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    except OSError as e:
        sys.exit("project: %s" % e)
    fn = dict(ALGS)
    for r in rows:
        try:
            if (r["impl"] != "rdpmix-ucx" or r["alg"] not in fn
                    or (tls and r["tls"] != tls) or int(r["M"]) > max_m):
                continue
            m, n = int(r["M"]), int(r["size"])
            t = float(r["median_us"]) * 1e-6
        except (KeyError, ValueError):
            sys.exit("project: %s is not engine_compare.sh raw CSV" % path)
        st = fn[r["alg"]](m)
        xs.append((len(st), sum(HDR + b * (BLK + n) for b in st), t))
    if len(xs) < 2:
        sys.exit("project: fewer than 2 usable rows in %s (tls %s, M <= %d)"
                 % (path, tls or "any", max_m))
    # least squares for t = a * steps + b * bytes (normal equations)
    s11 = sum(a * a for a, _, _ in xs)
    s12 = sum(a * b for a, b, _ in xs)
    s22 = sum(b * b for _, b, _ in xs)
    r1 = sum(a * t for a, _, t in xs)
    r2 = sum(b * t for _, b, t in xs)
    det = s11 * s22 - s12 * s12
    if det <= 0:
        sys.exit("project: the rows of %s do not determine alpha and beta "
                 "(need several sizes)" % path)
    alpha = (r1 * s22 - r2 * s12) / det
    beta = (s11 * r2 - s12 * r1) / det
    if alpha <= 0 or beta <= 0:
        sys.exit("project: the fit gave alpha %.3g s, beta %.3g s/B: the "
                 "data are too noisy; pass --alpha/--bw" % (alpha, beta))
    return alpha, beta, ("fit of %d coll-bench rows of %s (M <= %d%s)"
                         % (len(xs), path, max_m,
                            ", tls " + tls if tls else ""))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alpha", type=float, help="per-message latency, us")
    ap.add_argument("--bw", type=float, help="bandwidth, GB/s (beta = 1/bw)")
    ap.add_argument("--pingpong", help="bench/ucx_pingpong CSV")
    ap.add_argument("--fit", help="engine_compare.sh raw CSV")
    ap.add_argument("--tls", default="", help="with --fit: tls column")
    ap.add_argument("--fit-max-m", type=int, default=2,
                    help="with --fit: largest M used (default 2: beyond the "
                    "core count the runs measure scheduling)")
    ap.add_argument("--hmac", type=float, default=0.0,
                    help="authenticator throughput, GB/s per side (adds "
                    "2 / hmac per byte); default 0: included in beta")
    ap.add_argument("--overhead", type=float, default=0.0,
                    help="LogP o: CPU per message per side, us (default 0)")
    ap.add_argument("--nodes", default="1024,2048,4096,8192,16384")
    ap.add_argument("--sizes", default="8,64,512,4k,16k,64k")
    a = ap.parse_args()

    if (a.alpha is None) != (a.bw is None):
        sys.exit("project: give both --alpha and --bw")
    if a.alpha is not None:
        if a.alpha <= 0 or a.bw <= 0:
            sys.exit("project: --alpha and --bw must be positive")
        alpha, beta = a.alpha * 1e-6, 1.0 / (a.bw * 1e9)
        src = "given"
    elif a.pingpong:
        alpha, beta, src = from_pingpong(a.pingpong)
    elif a.fit:
        alpha, beta, src = from_fit(a.fit, a.tls, a.fit_max_m)
    else:
        alpha, beta = DEFAULT_ALPHA_US * 1e-6, 1.0 / (DEFAULT_BW_GBS * 1e9)
        src = "docs/ucx.md defaults (tcp loopback, 2-core VM)"
    if a.hmac < 0 or a.overhead < 0:
        sys.exit("project: --hmac and --overhead must not be negative")
    if a.hmac > 0:
        beta += 2.0 / (a.hmac * 1e9)
    o = a.overhead * 1e-6
    nodes = parse_list(a.nodes, "node")
    sizes = parse_list(a.sizes, "size")
    if min(nodes) < 2 or max(nodes) > (1 << 24):
        sys.exit("project: node counts must be 2 .. 16M")

    print("# Projected allgather and barrier cost of the engine\n")
    print("Parameters: alpha = %.2f us, beta = %.4g ns/B (%.3g GB/s), "
          "o = %.2f us; source: %s.\n"
          % (alpha * 1e6, beta * 1e9, 1e-9 / beta, o * 1e6, src))
    print("Model (Hockney, LogP overhead): a message of b bytes costs "
          "alpha + 2o + b*beta; a step costs one message (every server "
          "sends one and receives one, concurrently); no contention, no "
          "topology. A message moving k blocks of n bytes is "
          "b = %d + k*(%d + n) bytes (header, per-block origin and length)."
          " P servers:\n" % (HDR, BLK))
    print("- recursive doubling, P = 2^m: sum_{i<m} [2^i blocks] = "
          "m(alpha+2o) + ~(P-1)n*beta. Otherwise q = 2^floor(log2 P), "
          "e = P-q: fold [1 block] + sum_{i<log2 q} [2^i + min(e, 2^i) "
          "blocks] + unfold [P-1 blocks] = (log2 q + 2)(alpha+2o) + "
          "~(q + S + P - 1)n*beta, S = sum_i min(e, 2^i)")
    print("- Bruck: sum_{i<ceil(log2 P)} [min(2^i, P-2^i) blocks] = "
          "ceil(log2 P)(alpha+2o) + ~(P-1)n*beta")
    print("- ring: (P-1) steps of 1 block = (P-1)(alpha + 2o + b(1))")
    print("- dissemination barrier: ceil(log2 P) header-only messages = "
          "ceil(log2 P)(alpha + 2o + %d*beta)\n" % HDR)

    print("| servers | block | total gathered | recursive doubling | Bruck "
          "| ring | best | ring / best |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for p in nodes:
        for n in sizes:
            t = {name: cost(fn(p), n, alpha, beta, o) for name, fn in ALGS}
            low = min(t.values())
            best = " = ".join({"recursive_doubling": "rd"}.get(k, k)
                              for k in t if t[k] <= low * (1 + 1e-9))
            print("| %d | %s | %s | %s | %s | %s | %s | %.1f |"
                  % (p, fmt_size(n), fmt_size(p * n) if p * n < (1 << 30)
                     else "%.1f GiB" % (p * n / float(1 << 30)),
                     fmt_time(t["recursive_doubling"]), fmt_time(t["bruck"]),
                     fmt_time(t["ring"]), best, t["ring"] / low))
    print("\n| servers | dissemination barrier | steps |")
    print("| --- | --- | --- |")
    for p in nodes:
        st = steps_dissem(p)
        print("| %d | %s | %d |"
              % (p, fmt_time(cost(st, 0, alpha, beta, o)), len(st)))
    print("\nAt these scales the bandwidth term (P-1)n*beta is the same for "
          "the three algorithms; ring pays (P-1) latencies instead of "
          "log2 P, so it only wins where contention (ignored here) slows "
          "the long-distance exchanges of recursive doubling and Bruck. "
          "Recursive doubling on a non-power of two pays the unfold: "
          "(P-1) more blocks on the critical path.")


if __name__ == "__main__":
    main()
