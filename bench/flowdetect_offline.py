#!/usr/bin/env python3
"""The classifiers on counter logs recorded on Mininet (bench/bench_flowdetect.py's counters/),
offline: per pattern and classifier, accuracy, precision, recall, the detection delay and the
elephants flagged within 2 polls (docs/flows.md), and why the late ones were late. No lock needed.

    .venv/bin/python bench/flowdetect_offline.py DIR [DIR ...] [--model NAME=PATH ...]

Labels and starts come from the counters (`flows.counterlog.label`), as for training. A late
elephant (flagged after its second poll, or never) is counted by what its first two busy intervals
held: both under 10 % of the link (no classifier that waits for one whole interval and flags
nothing under the label's 10 % can be in time), or the first whole one at >= 10 %.
"""
import argparse
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)

from sdnmpi import flows
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows


def late_causes(classifier, runs, link_bytes):
    """{cause: elephants} of the elephants ``classifier`` flags after their second poll."""
    out = {"first whole interval < 10 %": 0, "first whole interval >= 10 %": 0}
    for run in runs:
        first = flows.first_flags(classifier.flags(run.counts, train_flows.totals(run)))
        x = run.counts / link_bytes
        for i in np.nonzero(run.labels)[0]:
            s = run.starts[i]
            if 0 <= first[i] <= s + 1:
                continue
            whole = max(x[i, s], x[i, s + 1] if s + 1 < x.shape[1] else 0.0)
            out["first whole interval " + ("< 10 %" if whole < flowtraffic.HEAVY_FRACTION else ">= 10 %")] += 1
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", help="counters/ folders of bench_flowdetect.py results")
    p.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                   help="a learned model to score (default: the shipped one as 'learned')")
    args = p.parse_args(argv)
    try:
        data, rate, interval = counterlogs.dataset(args.dirs)
        models = [m.split("=", 1) for m in args.model] or [["learned", flows.DEFAULT_MODEL]]
        classifiers = [("threshold", flows.ThresholdClassifier(link_rate=rate, interval=interval))]
        classifiers += [(name, flows.load_model(path, link_rate=rate, interval=interval)) for name, path in models]
    except (ValueError, flows.CounterLogError) as exc:   # ModelError is a ValueError
        print(f"flowdetect_offline: {exc}", file=sys.stderr)
        return 2
    f = train_flows._fmt
    print("| pattern | runs | classifier | pairs with bytes | elephants | accuracy | precision | recall "
          "| delay median | delay max | within 2 polls | late: first whole interval < 10 % | late: >= 10 % |")
    print("|" + "---|" * 13)
    for pattern, runs in sorted(data.items()):
        for name, clf in classifiers:
            s = train_flows.score(clf, runs)
            late = late_causes(clf, runs, rate * interval)
            print(f"| {pattern} | {len(runs)} | {name} | {s['pairs']} | {s['elephants']} | {f(s['accuracy'])} | "
                  f"{f(s['precision'])} | {f(s['recall'])} | {f(s['delay_median'])} | {f(s['delay_max'])} | "
                  f"{f(s['within_2'])} | {late['first whole interval < 10 %']} | "
                  f"{late['first whole interval >= 10 %']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
