#!/usr/bin/env python3
"""The classifiers on counter logs recorded on Mininet (bench/bench_flowdetect.py's counters/),
offline: per pattern and classifier, accuracy, precision, recall, the detection delay and the
elephants flagged within 2 polls (docs/flows.md), and why the late ones were late. No lock needed.

    .venv/bin/python bench/flowdetect_offline.py DIR [DIR ...] [--model NAME=PATH ...]

Labels and starts come from the counters (`flows.counterlog.label`), as for training. A late
elephant (flagged after its second poll, or never) is counted by its first heavy interval (the
first whole one at >= 10 % of the link): under 15 % (within the counters' wobble of the label's
line) or above. ``--pairs PATTERN`` prints, per elephant of that pattern, its start, the polls to
its flag, its bytes (% of the link), its share of its endpoints' bytes and the model's score in
the polls around its start (the last --model, or the shipped one). ``--onset``
prints instead how elephants begin: their first busy (partial) and first whole interval against
their steady rate (the median of their busy stretch after the first interval), and how often an
interval inside the stretch is as low (and what the next one holds: a counter that lags and
catches up would make it high), with the spacing of the polls.
"""
import argparse
import glob
import gzip
import json
import os
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)

from sdnmpi import flows
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows


NEAR = 1.5   # late_causes: a first heavy interval under NEAR x the label's fraction is "near the line"
LATE = ("first heavy interval < 15 %", "first heavy interval >= 15 %")


def _first_heavy(x, start):
    """The first interval at or after ``start`` at >= the label's fraction (scaled bytes ``x``)."""
    heavy = np.nonzero(x[start:] >= flowtraffic.HEAVY_FRACTION)[0]
    return start + int(heavy[0]) if len(heavy) else len(x) - 1


def late_causes(classifier, runs, link_bytes):
    """{cause: elephants} of the elephants ``classifier`` flags after their second poll."""
    out = dict.fromkeys(LATE, 0)
    for run in runs:
        first = flows.first_flags(classifier.flags(run.counts, train_flows.totals(run)))
        x = run.counts / link_bytes
        for i in np.nonzero(run.labels)[0]:
            if 0 <= first[i] <= run.starts[i] + 1:
                continue
            k = _first_heavy(x[i], run.starts[i])
            out[LATE[int(x[i, k] >= NEAR * flowtraffic.HEAVY_FRACTION)]] += 1
    return out


def pairs_table(classifier, runs, link_bytes, before=2, after=4):
    """Prints, per elephant of ``runs``: run, pair, start, polls to its flag (- never), and from
    ``before`` polls ahead of its start to ``after`` past it: % of the link, share of its
    endpoints' bytes, the classifier's score."""
    print("| run | pair | start | polls to flag | % of link | share | score |")
    print("|" + "---|" * 7)
    for r, run in enumerate(runs):
        totals = train_flows.totals(run)
        first = flows.first_flags(classifier.flags(run.counts, totals))
        score = classifier.probability(run.counts, totals)
        share = np.divide(run.counts[..., None], totals, out=np.zeros_like(totals), where=totals > 0).min(axis=2)
        x = run.counts / link_bytes
        for i in np.nonzero(run.labels)[0]:
            s = run.starts[i]
            cols = slice(max(0, s - before), s + after + 1)
            polls = "-" if first[i] < 0 else max(1, first[i] - s + 1)
            row = [" ".join(f"{v:{fmt}}" for v in a[i, cols]) for a, fmt in ((100 * x, ".1f"), (share, ".2f"),
                                                                              (score, ".2f"))]
            print(f"| {r} | {run.pairs[i][0]} -> {run.pairs[i][1]} | {s} | {polls} | " + " | ".join(row) + " |")


def onset(dirs, fraction=flowtraffic.HEAVY_FRACTION):
    """Prints the onset table of the logs in ``dirs`` (see the module docstring)."""
    rows, spacing = {}, []
    for path in sorted(g for d in dirs for g in glob.glob(os.path.join(d, "*.jsonl.gz"))):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = f.readlines()
        header, _pairs, counts = flows.counterlog.read(lines)
        spacing += np.diff([json.loads(ln)["t"] for ln in lines[1:] if ln.strip()]).tolist()
        x = counts / (header["link_rate_Bps"] * header["interval_s"])
        labels, starts = flows.counterlog.label(counts, header["link_rate_Bps"] * header["interval_s"], fraction)
        for i in np.nonzero(labels)[0]:
            s = e = starts[i]
            while e + 1 < x.shape[1] and x[i, e + 1] >= fraction / 10:
                e += 1
            if e - s < 5:                        # too short for a steady rate
                continue
            steady = np.median(x[i, s + 1:e])
            r = rows.setdefault(header["pattern"], {"first": [], "whole": [], "inside": [], "after_low": []})
            r["first"].append(x[i, s] / steady)
            r["whole"].append(x[i, s + 1] / steady)
            inside = x[i, s + 2:e - 1] / steady
            r["inside"] += inside.tolist()
            r["after_low"] += inside[1:][inside[:-1] < 2 / 3].tolist()
    print(f"poll spacing: median {np.median(spacing):.3f} s, p5 {np.percentile(spacing, 5):.3f}, "
          f"p95 {np.percentile(spacing, 95):.3f}, max {max(spacing):.3f}")
    print("| pattern | elephants | first (partial) interval / steady, median | first whole interval / steady: "
          "p10, p25, median | first whole < 2/3 steady | inside the stretch < 2/3 steady "
          "| the interval after such a low one / steady, median |")
    print("|" + "---|" * 7)
    for pattern, r in sorted(rows.items()):
        whole = np.percentile(r["whole"], [10, 25, 50])
        print(f"| {pattern} | {len(r['whole'])} | {np.median(r['first']):.2f} | "
              f"{whole[0]:.2f}, {whole[1]:.2f}, {whole[2]:.2f} | {np.mean(np.array(r['whole']) < 2 / 3):.2f} | "
              f"{np.mean(np.array(r['inside']) < 2 / 3):.2f} | {np.median(r['after_low']):.2f} |")


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", help="counters/ folders of bench_flowdetect.py results")
    p.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                   help="a learned model to score (default: the shipped one as 'learned')")
    p.add_argument("--onset", action="store_true", help="print how the elephants begin instead")
    p.add_argument("--pairs", metavar="PATTERN", help="print every elephant of PATTERN around its start instead")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.onset:
        missing = [d for d in args.dirs if not glob.glob(os.path.join(d, "*.jsonl.gz"))]
        if missing:
            print(f"flowdetect_offline: {missing[0]}: no counter logs (*.jsonl.gz)", file=sys.stderr)
            return 2
        onset(args.dirs)
        return 0
    try:
        data, rate, interval = counterlogs.dataset(args.dirs)
        models = [m.split("=", 1) for m in args.model] or [["learned", flows.DEFAULT_MODEL]]
        classifiers = [("threshold", flows.ThresholdClassifier(link_rate=rate, interval=interval))]
        classifiers += [(name, flows.load_model(path, link_rate=rate, interval=interval)) for name, path in models]
    except (ValueError, flows.CounterLogError) as exc:   # ModelError is a ValueError
        print(f"flowdetect_offline: {exc}", file=sys.stderr)
        return 2
    if args.pairs:
        if args.pairs not in data or not isinstance(classifiers[-1][1], flows.LearnedClassifier):
            print(f"flowdetect_offline: no {args.pairs} logs, or no learned model to score", file=sys.stderr)
            return 2
        pairs_table(classifiers[-1][1], data[args.pairs], rate * interval)
        return 0
    f = train_flows._fmt
    print("| pattern | runs | classifier | pairs with bytes | elephants | accuracy | precision | recall "
          f"| delay median | delay max | within 2 polls | late: {LATE[0]} | late: >= 15 % |")
    print("|" + "---|" * 13)
    for pattern, runs in sorted(data.items()):
        for name, clf in classifiers:
            s = train_flows.score(clf, runs)
            late = late_causes(clf, runs, rate * interval)
            print(f"| {pattern} | {len(runs)} | {name} | {s['pairs']} | {s['elephants']} | {f(s['accuracy'])} | "
                  f"{f(s['precision'])} | {f(s['recall'])} | {f(s['delay_median'])} | {f(s['delay_max'])} | "
                  f"{f(s['within_2'])} | {late[LATE[0]]} | {late[LATE[1]]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
