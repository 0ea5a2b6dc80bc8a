#!/usr/bin/env python3
"""Can the learned classifier flag a pair at its first, partial interval (age 0) without losing the
accuracy goal? (issue 16; docs/flows.md, "A flag at the first poll, re-examined".) The shipped model
(version 8, ``min_age`` 1) decides from a pair's first whole interval on; here its flags are joined
by an age-0 rule: a pair is also flagged at the poll that ends its first busy interval (`flows.BUSY`
of the link, age 0) when that partial interval carried >= F of the link and the pair held >= S of
its endpoints' bytes in it (a partial interval's bytes bound the pair's rate from below: a pair
that carried F of the link in part of an interval ran at >= F). (F, S) is chosen like version 8's
floor: the best mean timely accuracy over the training patterns (each weighing the same), never
over the held-out ones; ties go to the rule that flags less. As that measure counts a flag at an
elephant's 1st or 2nd poll alike, the earliest rule at version 8's training timely accuracy is
printed too. Then every pattern's figures, held out and trained, against version 8's own.

    .venv/bin/python bench/flowdetect_age0.py [--all-logs] [--rules F:S,...]

Data: the shipped command's (simulated runs of every pattern, 12 instances, seed 0, and its four
Mininet counter folders, rescaled). ``--all-logs`` also scores every recorded counter log under
bench/results, by recorded rate (`counterlogs.folders_at`: the 40/20 Mbit/s logs of
`counterlogs.RECORDED_RATE` and the 5/5 Mbit/s logs since 2026-11-29 22:40). Offline, no lock;
about a minute niced.
"""
import argparse
import glob
import os
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)

from sdnmpi import flows
from sdnmpi.flows import classify
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
COMMAND_LOGS = ("flowdetect-20261128T072002Z", "flowdetect-20261128T080439Z",
                "flowdetect-20261128T080700Z", "flowdetect-20261128T095015Z")
LINK_BOUND = (625000.0, 1.0)        # the 5/5 Mbit/s bench's link rate B/s and interval s
FLOORS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)   # F: the partial interval's share of the link
SHARES = (0.0, 0.5, 0.8, 0.95)                          # S: the pair's share of its endpoints' bytes
NONE = None                                             # no age-0 rule: version 8 as shipped


class Age0:
    """``flags`` of ``model`` joined by the age-0 rule (F, S) (``rule`` None: the model's own);
    the model's flags, ages and shares of a run are computed once (``memo``)."""

    def __init__(self, model, rule, memo):
        self.model, self.rule, self.memo = model, rule, memo

    def flags(self, counts, totals=None):
        key = id(counts)
        if key not in self.memo:
            link = self.model.link_rate * self.model.interval
            share = np.divide(counts[..., None], totals, out=np.zeros_like(totals), where=totals > 0).min(axis=2)
            score = self.model.probability(counts, totals) >= self.model.cutoff
            self.memo[key] = (self.model.flags(counts, totals), self.model.ages(counts), counts / link, share, score)
        hit, ages, r0, share, score = self.memo[key]
        if self.rule is NONE:
            return hit
        floor, least = self.rule
        young = (ages == 0) & (r0 >= floor) & (r0 >= classify.BUSY)
        # S < 0: the model's own score at age 0 instead of a share (its weights never saw age 0)
        return hit | (young & (score if least < 0 else share >= least))


def command_data():
    """{pattern: runs} of the shipped command (simulated and the command's Mininet logs), and the
    held-out patterns."""
    link = flows.DEFAULT_LINK_RATE * flows.DEFAULT_INTERVAL
    logs, rate, interval = counterlogs.dataset([os.path.join(RESULTS, d, "counters") for d in COMMAND_LOGS])
    data = dict(train_flows.dataset(sorted(flowtraffic.PATTERNS), train_flows.DEFAULT_INSTANCES, 0,
                                    flows.DEFAULT_LINK_RATE, flows.DEFAULT_INTERVAL, train_flows.TRACE_DIR),
                **counterlogs.rescaled(logs, rate * interval, link))
    tests = set(train_flows.TEST_PATTERNS) | {counterlogs.PREFIX + p for p in counterlogs.TEST_PATTERNS}
    tests |= {v for v, b in flowtraffic.VARIANT_OF.items() if b in tests}
    return data, tests


def choose(model, data, train):
    """({rule: mean timely accuracy over the training patterns}, {rule: their mean share of elephants
    flagged at the first poll}, the rule the issue's measure chooses, the earliest rule): the first
    is the best timely accuracy (ties: no rule, then the rule that flags less: higher floor, then
    higher share); the timely accuracy counts an elephant flagged at its 1st or 2nd poll alike, so
    it cannot prefer an earlier flag. The earliest is the rule with the most elephants flagged at
    the first poll among those whose training timely accuracy is version 8's (none lower)."""
    memos = {p: {} for p in train}
    acc, early = {}, {}
    for rule in [NONE] + [(f, s) for f in FLOORS for s in SHARES]:
        scores = [scored(Age0(model, rule, memos[p]), data[p]) for p in train]
        acc[rule] = float(np.mean([s["timely_accuracy"] for s in scores]))
        early[rule] = float(np.mean([s["delay1"] / s["elephants"] for s in scores if s["elephants"]]))
    best = max(acc, key=lambda r: (round(acc[r], 12), r is NONE, r or (0, 0)))
    kept = [r for r in acc if round(acc[r], 12) >= round(acc[NONE], 12)]
    earliest = max(kept, key=lambda r: (round(early[r], 12), r is NONE, r or (0, 0)))
    return acc, early, best, earliest


def _row(name, split, rule, s):
    f = train_flows._fmt
    d1 = s["delay1"] / s["elephants"] if s["elephants"] else None
    return (f"| {name} | {split} | {rule} | {s['pairs']} | {s['elephants']} | {f(s['accuracy'])} | "
            f"{f(s['precision'])} | {f(s['recall'])} | {f(d1)} | {f(s['within_2'])} | {f(s['timely_accuracy'])} |")


def scored(clf, runs):
    """`train_flows.score` plus ``delay1``: elephants flagged at the first poll after their start."""
    s = train_flows.score(clf, runs)
    d1 = 0
    for run in runs:
        first = flows.first_flags(clf.flags(run.counts, train_flows.totals(run)))
        d1 += int(((first >= 0) & (first - run.starts + 1 <= 1) & run.labels).sum())
    s["delay1"] = d1
    return s


HEADER = ("| pattern | split | age-0 rule (F, S) | pairs | elephants | accuracy | precision | recall "
          "| flagged at the 1st poll | within 2 polls | timely accuracy |\n" + "|" + "---|" * 11)


def table(model, data, tests, rules):
    print(HEADER)
    for p in sorted(data):
        memo = {}
        for rule in rules:
            print(_row(p, "test" if p in tests else "train", rule, scored(Age0(model, rule, memo), data[p])))
    held = [r for p in sorted(tests) if p in data for r in data[p]]
    if not held:
        return
    memo = {}
    for rule in rules:
        print(_row("all held-out", "test", rule, scored(Age0(model, rule, memo), held)))


def all_logs(rules):
    """Every recorded counter log, by rate, scored per pattern at its own link rate."""
    folders = [counterlogs.counters_folder(d) for d in sorted(glob.glob(os.path.join(RESULTS, "flowdetect-*")))]
    for rate in (counterlogs.RECORDED_RATE, LINK_BOUND):
        at = counterlogs.folders_at(folders, *rate)
        if not at:
            continue
        data, link_rate, interval = counterlogs.dataset(at)
        model = flows.load_model(flows.DEFAULT_MODEL, link_rate=link_rate, interval=interval)
        print(f"\nEvery recorded log at {link_rate * 8 / 1e6:g} Mbit/s ({len(at)} folders, "
              f"{sum(len(r) for r in data.values())} runs):\n")
        table(model, data, set(), rules)
        print("\nAn elephant's first busy (partial) interval, % of the link: p10, p25, median, p75, p90\n")
        for pattern, runs in sorted(data.items()):
            v = first_busy(runs, link_rate * interval)
            if v:
                print(f"- {pattern} ({len(v)} elephants): " + ", ".join(f"{q:.1f}" for q in
                                                                      np.percentile(v, [10, 25, 50, 75, 90]) * 100))


def first_busy(runs, link_bytes):
    """The scaled bytes of each elephant's last age-0 interval (first busy one, `classify.BUSY`) up to
    the poll after its start: the partial interval an age-0 rule judges."""
    out = []
    for run in runs:
        ages = flows.pair_ages(run.counts, train_flows.DEFAULT_WINDOW, link_bytes, classify.BUSY)
        x = run.counts / link_bytes
        for i in np.nonzero(run.labels)[0]:
            young = np.nonzero((ages[i] == 0) & (x[i] >= classify.BUSY))[0]
            young = young[young <= run.starts[i] + 1]
            if len(young):
                out.append(x[i, young[-1]])
    return out


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--all-logs", action="store_true", help="also score every recorded counter log")
    p.add_argument("--rules", default="", help="extra rules F:S,F:S to print beside the chosen ones "
                   "(S < 0: the model's own score at age 0 instead of a share)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    model = flows.load_model(flows.DEFAULT_MODEL)
    try:
        data, tests = command_data()
    except flows.CounterLogError as exc:
        print(f"flowdetect_age0: {exc}", file=sys.stderr)
        return 2
    train = [p for p in sorted(data) if p not in tests]
    acc, early, best, earliest = choose(model, data, train)
    print("Training patterns' mean timely accuracy, and share of elephants flagged at the first poll, per "
          "age-0 rule (F, S):\n")
    print("| F \\ S | " + " | ".join(str(s) for s in SHARES) + " |\n|" + "---|" * (len(SHARES) + 1))
    for f in FLOORS:
        print(f"| {f} | " + " | ".join(f"{acc[(f, s)]:.4f}, {early[(f, s)]:.3f}" for s in SHARES) + " |")
    print(f"\nversion 8 as shipped: {acc[NONE]:.4f}, {early[NONE]:.3f}; chosen by timely accuracy: {best}; "
          f"earliest at version 8's timely accuracy: {earliest}\n")
    extra = [tuple(float(v) for v in r.split(":")) for r in args.rules.split(",") if r]
    rules = list(dict.fromkeys([NONE, best, earliest] + extra))
    table(model, data, tests, rules)
    if args.all_logs:
        try:
            all_logs(rules)
        except flows.CounterLogError as exc:
            print(f"flowdetect_age0: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
