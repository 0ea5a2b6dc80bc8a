#!/usr/bin/env python3
"""Every pattern held out in turn (issue 16: ">= 95 % on patterns left out of its training"): for
each pattern P, the learned classifier is trained exactly like the shipped model (the same
simulated runs and Mininet logs, every training pattern weighing the same, the cutoff by
`train_flows.choose_cutoff`'s leave-one-training-pattern-out rule) on every pattern but P (its
simulated runs AND its Mininet logs left out), then scored on P: accuracy, precision, recall,
delay and elephants within 2 polls, on P's simulated runs and on every Mininet log of P under
bench/results. Offline, no lock; 10-15 minutes per variant on this loaded 2-core machine (run it
niced).

    .venv/bin/python bench/flowdetect_lopo.py [--variant NAME ...] [--patterns P,Q] [--split]

``--variant``: "none" (version 5's inputs) or a bench/flowdetect_context.py variant ("line share"
is version 6's). Each run's features are computed once (`Cached`), so the ~15 fits per held-out
pattern cost only the fits. The threshold classifier's row is printed beside each for reference.
``--split``: the shipped command's split only (its held-out patterns at once), to check that this
script judges as `train-flows` does. ``--without-variants``: version 6's data (no simulated fabric
variant, `flowtraffic.VARIANT_OF`); a variant is held out with the pattern it varies.
"""
import argparse
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)
import flowdetect_context as ctx
import flowdetect_nonlinear as nl

from sdnmpi import flows
from sdnmpi.flows import classify
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows

W, R = train_flows.DEFAULT_WINDOW, train_flows.DEFAULT_RECENT


class Cached:
    """The variant's features and gates (bytes in the interval, `train_flows.MIN_AGE` past the first
    busy one) of every run, computed once; `design` and `fit` as `train_flows`'s, `classifier` a
    `flags(counts, totals)` object as `train_flows.score` needs, from the cached features."""

    def __init__(self, variant, data):
        self.rows, self.design_rows = {}, {}
        link = nl.LINK * nl.INTERVAL
        with ctx.inputs(variant):
            for name, runs in data.items():
                parts = []
                for run in runs:
                    x = classify.features(flows.VERSION, run.counts, W, R, link, train_flows.totals(run))
                    ages = flows.pair_ages(run.counts, W, link, classify.BUSY)
                    gate = (run.counts > 0) & (ages >= train_flows.MIN_AGE)
                    self.rows[id(run.counts)] = (x, gate)
                    parts.append((x[gate], np.broadcast_to(run.labels[:, None], run.counts.shape)[gate]))
                self.design_rows[name] = (np.concatenate([p[0] for p in parts]),
                                          np.concatenate([p[1] for p in parts]))

    def design(self, names):
        """(inputs, labels, sample weights) of the patterns ``names`` as `train_flows.design`'s:
        every pattern weighing the same."""
        parts = [self.design_rows[n] for n in names if len(self.design_rows[n][1])]
        x = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        w = np.concatenate([np.full(len(y_), len(y) / (len(parts) * len(y_))) for _, y_ in parts])
        if len(np.unique(y)) < 2:
            raise train_flows.TrainError("one class only")
        return x, y, w

    def fit(self, names, seed=0):
        """(weights, bias) as `train_flows.fit` on the patterns ``names``."""
        from sklearn.linear_model import LogisticRegression
        x, y, w = self.design(names)
        model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed).fit(x, y, sample_weight=w)
        return model.coef_[0], float(model.intercept_[0])

    def classifier(self, weights, bias, cutoff):
        rows = self.rows

        class Clf:
            def flags(self, counts, totals=None):
                x, gate = rows[id(counts)]
                return (1.0 / (1.0 + np.exp(-(x @ weights + bias))) >= cutoff) & gate
        return Clf()

    def folds(self, train):
        """(held pattern, weights, bias) of every leave-one-pattern-out fold of ``train`` (`fit` on
        the others; a fold whose other patterns hold one class only is skipped)."""
        for held in train:
            try:
                w, b = self.fit([p for p in train if p != held])
            except train_flows.TrainError:
                continue
            yield held, w, b

    def choose_cutoff(self, data, train):
        """`train_flows.choose_cutoff`'s rule on the cached features."""
        folds = []
        for held, w, b in self.folds(train):
            folds.append({c: train_flows.score(self.classifier(w, b, c), data[held])["timely_accuracy"]
                          for c in train_flows.CUTOFFS})
        acc = {c: float(np.mean([f[c] for f in folds])) for c in train_flows.CUTOFFS}
        return max(train_flows.CUTOFFS, key=lambda c: (acc[c], -c)), acc


def base_of(name):
    """The pattern a data set belongs to: a Mininet log's pattern, a simulated fabric variant's
    (`flowtraffic.VARIANT_OF`: held out with it)."""
    name = name[len(counterlogs.PREFIX):] if name.startswith(counterlogs.PREFIX) else name
    return flowtraffic.VARIANT_OF.get(name, name)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", action="append", choices=ctx.VARIANTS,
                   help="inputs: version 5's ('none', default) or a flowdetect_context.py variant (repeatable)")
    p.add_argument("--patterns", help="comma-separated base patterns to hold out (default: every one)")
    p.add_argument("--split", action="store_true", help="the shipped command's split only")
    p.add_argument("--without-variants", action="store_true",
                   help="leave the simulated fabric variants out of training (version 6's data)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        data, every = nl.load(False, variants=not args.without_variants)
    except flows.CounterLogError as exc:
        print(f"flowdetect_lopo: {exc}", file=sys.stderr)
        return 2
    tests = {k: v for k, v in every.items()}                  # every Mininet log, by pattern
    bases = sorted({base_of(n) for n in list(data) + list(tests)})
    wanted = [b.strip() for b in args.patterns.split(",")] if args.patterns else bases
    f = train_flows._fmt
    thresh = flows.ThresholdClassifier(link_rate=nl.LINK, interval=nl.INTERVAL)
    print_header()
    for variant in args.variant or ["none"]:
        cache = Cached(variant, {**data, **{"every " + k: v for k, v in tests.items()}})
        if args.split:
            train, held = nl.split(data)
            cutoff, cv = cache.choose_cutoff(data, train)
            w, b = cache.fit(train)
            clf = cache.classifier(w, b, cutoff)
            s = train_flows.score(clf, [r for h in held for r in data[h]])
            print(f"split: cutoff {cutoff}, folds' timely accuracy {cv[cutoff]:.3f}, held-out within 2 "
                  f"{f(s['within_2'])}, accuracy {f(s['accuracy'])}, precision {f(s['precision'])}; every "
                  f"Mininet halo3d log within 2 {f(train_flows.score(clf, tests['mininet-halo3d'])['within_2'])}")
            continue
        held_out_rows(cache, data, tests, wanted, f"learned ({variant})", thresh)
    return 0


def print_header():
    print("| held out | data | runs | classifier | cutoff | pairs | elephants | accuracy | precision | recall "
          "| delay median | delay max | within 2 polls | timely accuracy |")
    print("|" + "---|" * 14)


def held_out_rows(cache, data, tests, wanted, label, thresh=None):
    """Prints, for each base pattern of ``wanted``, ``cache``'s classifier trained (weights and
    cutoff rule) without it and scored on its simulated runs and every Mininet log of it (and the
    threshold classifier ``thresh``'s row beside, when given)."""
    f = train_flows._fmt
    for base in wanted:
        train = [n for n in sorted(data) if base_of(n) != base]
        cutoff, _cv = cache.choose_cutoff(data, train)
        w, b = cache.fit(train)
        clf = cache.classifier(w, b, cutoff)
        runs_of = {n: data[n] for n in data if n == base}
        if counterlogs.PREFIX + base in tests:
            runs_of[counterlogs.PREFIX + base] = tests[counterlogs.PREFIX + base]
        for name, runs in sorted(runs_of.items()):
            rows = [(label, train_flows.score(clf, runs), cutoff)]
            if thresh is not None:
                rows.append(("threshold", train_flows.score(thresh, runs), "-"))
            for lab, sc, c in rows:
                print(f"| {base} | {name} | {len(runs)} | {lab} | {c} | {sc['pairs']} | {sc['elephants']} "
                      f"| {f(sc['accuracy'])} | {f(sc['precision'])} | {f(sc['recall'])} "
                      f"| {f(sc['delay_median'])} | {f(sc['delay_max'])} | {f(sc['within_2'])} "
                      f"| {f(sc['timely_accuracy'])} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
