#!/usr/bin/env python3
"""Short-lived flags (flows/hold.py, docs/flows.md "Short-lived flags") on counter logs recorded on
Mininet (bench/bench_flowdetect.py's counters/), offline: per pattern and link rate, the share of
the live flags whose pair stayed busy (>= BUSY_SHARE of the link; ACK streams not told apart) at
each of the next ``--polls`` polls, the worst log's share, and what `flows.hold.FlagHold` would
have left to the fabric (flags arriving while the job was short-lived) against what it would have
routed. No lock needed.

    .venv/bin/python bench/flowdetect_hold.py DIR [DIR ...] [--polls 1,2,3] [--share 0.5]

DIR: a results folder (its counters/) or a folder of *.jsonl[.gz] logs.
"""
import argparse
import collections
import os
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)

from sdnmpi.flows import counterlog
from sdnmpi.flows.acks import BUSY_SHARE
from sdnmpi.flows.hold import HOLD_SHARE, FlagHold
from sdnmpi.simulator import counterlogs


def logs(folders):
    for d in folders:
        yield from counterlogs.log_files(counterlogs.counters_folder(d))


def read(path):
    """(pattern, link rate B/s, per poll: (busy pairs, pairs flagged live))."""
    header, names, counts, _packets, _times, flags = counterlog.from_file(
        path, lambda lines: counterlog.read_log(lines, with_packets=False))
    line = BUSY_SHARE * header["link_rate_Bps"] * header["interval_s"]
    pattern = header.get("pattern") or os.path.basename(path).split("-")[0]
    return pattern, header["link_rate_Bps"], [
        ({names[i] for i in np.nonzero(counts[:, t] >= line)[0]}, [(s, d) for s, d, _n in flagged])
        for t, flagged in enumerate(flags)]


def held_share(polls, k):
    """(held, judged): live flags whose pair is busy at each of the next k polls (flags too close to
    the log's end are not judged)."""
    held = judged = 0
    for t, (_busy, flagged) in enumerate(polls):
        if t + k >= len(polls):
            continue
        for pair in flagged:
            judged += 1
            held += all(pair in polls[t + j][0] for j in range(1, k + 1))
    return held, judged


def left(polls, share, k):
    """(flags left to the fabric, flags routed) under FlagHold(share, polls=k), one job."""
    hold, out, routed = FlagHold(share, polls=k), 0, 0
    for busy, flagged in polls:
        hold.judge(busy)
        if flagged:
            if hold.short_lived(1):
                out += len(flagged)
            else:
                routed += len(flagged)
            hold.flagged(1, flagged)
    return out, routed


def table(paths, ks, share):
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in paths:
        pattern, rate, polls = read(path)
        for k in ks:
            rows[(pattern, rate)][k].append((held_share(polls, k), left(polls, share, k)))
    out = ["| pattern | link B/s | logs | polls | flags held / judged | share | worst log | left to the fabric "
           "(logs) | routed |", "|---|---:|---:|---:|---|---:|---:|---|---:|"]
    for (pattern, rate), by_k in sorted(rows.items()):
        for k in ks:
            runs = by_k[k]
            held = sum(h for (h, _), _ in runs)
            judged = sum(n for (_, n), _ in runs)
            worst = min((h / n for (h, n), _ in runs if n), default=float("nan"))
            gone = sum(o for _, (o, _r) in runs)
            out.append("| %s | %d | %d | %d | %d / %d | %.2f | %.2f | %d (%d) | %d |" % (
                pattern, rate, len(runs), k, held, judged, held / judged if judged else float("nan"), worst, gone,
                sum(1 for _, (o, _r) in runs if o), sum(r for _, (_o, r) in runs)))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--polls", default="1,%d,3" % FlagHold().polls, help="comma-separated: polls a flag must stay busy")
    ap.add_argument("--share", type=float, default=HOLD_SHARE, help="FlagHold's share")
    args = ap.parse_args(argv)
    ks = sorted({int(k) for k in args.polls.split(",")})
    try:
        text = table(list(logs(args.dirs)), ks, args.share)
    except counterlog.CounterLogError as exc:
        print(f"flowdetect_hold: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
