#!/usr/bin/env python3
"""call_timeline.py DIR - summarize the two largest timelines that
bench/call_timeline.c wrote in DIR (the two processes of a 2-process
benchmark): per process, over the middle 80 % of its sends, the calls per
iteration (2 sends = 1 barrier + 1 allgather), each call's duration, the
"hop" (a receive that returned data -> the process's next send call: the
work between a message and the next collective's first send) and how long
the data waited after the peer's send returned before a read began.
Quantiles are p10 / median / p90 in microseconds."""
import bisect
import glob
import os
import sys

SEND, RECV, EPOLL, YIELD = 1, 2, 3, 4


def load(path):
    with open(path) as f:
        head = f.readline().split()
        ghz = float(head[2])
        calls = [tuple(int(x) for x in line.split()) for line in f]
    return ghz, calls


def q(xs):
    if not xs:
        return '-'
    xs = sorted(xs)
    n = len(xs)
    return '%.2f / %.2f / %.2f' % (xs[n // 10], xs[n // 2], xs[n * 9 // 10])


def main():
    files = sorted(glob.glob(os.path.join(sys.argv[1], 'tl.*')),
                   key=os.path.getsize)[-2:]
    procs = [load(f) for f in files]
    for i, (ghz, calls) in enumerate(procs):
        us = lambda t: t / ghz / 1000.0
        sends = [c for c in calls if c[2] == SEND and c[3] > 0]
        lo, hi = sends[len(sends) // 10][0], sends[len(sends) * 9 // 10][0]
        win = [c for c in calls if lo <= c[0] <= hi]
        n = sum(1 for c in win if c[2] == SEND and c[3] > 0) / 2.0
        per = lambda k, data=None: sum(
            1 for c in win if c[2] == k and (data is None or (c[3] > 0) == data)) / n
        print('%s: %.0f iterations; per iteration: sends %.2f, receives with '
              'data %.2f, epoll_wait %.2f, sched_yield %.2f' %
              (os.path.basename(files[i]), n, per(SEND, True), per(RECV, True),
               per(EPOLL), per(YIELD)))
        for k, name in ((SEND, 'send'), (RECV, 'receive (data)'),
                        (EPOLL, 'epoll_wait'), (YIELD, 'sched_yield')):
            print('  %-15s %s us' % (name, q([us(c[1] - c[0]) for c in win
                                               if c[2] == k and (k in (EPOLL, YIELD) or c[3] > 0)])))
        hops, last = [], None
        for c in win:
            if c[2] == RECV and c[3] > 0:
                last = c
            elif c[2] == SEND and c[3] > 0:
                if last is not None:
                    hops.append(us(c[0] - last[1]))
                last = None
        print('  hop             %s us' % q(hops))
        # the peer's sends: when did our read of the data begin?
        pghz, pcalls = procs[1 - i]
        if abs(pghz - ghz) / ghz < 0.01:
            psends = [c for c in pcalls if c[2] == SEND and c[3] > 0]
            pstart = [c[0] for c in psends]
            inside, waits = 0, []
            for c in win:
                if c[2] != RECV or c[3] <= 0:
                    continue
                k = bisect.bisect_right(pstart, c[1]) - 1
                if k < 0:
                    continue
                if c[0] < psends[k][1]:
                    inside += 1
                else:
                    waits.append(us(c[0] - psends[k][1]))
            total = inside + len(waits)
            print('  reads begun inside the peer\'s send %.0f %%; after it '
                  'returned, waited %s us' % (100.0 * inside / total, q(waits)))


if __name__ == '__main__':
    main()
