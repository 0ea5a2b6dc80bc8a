#!/usr/bin/env python3
"""Small nonlinear models in place of the learned classifier's one logistic unit, trained and
judged exactly like the shipped model (docs/flows.md): the shipped model's inputs (version 6:
`flows.line_features`; version 5's when the previous round ran these),
the same simulated runs and Mininet counter logs, every training pattern weighing the same, the
cutoff of `train_flows.CUTOFFS` with the best leave-one-training-pattern-out timely accuracy, the
held-out patterns never seen. No lock needed (minutes of CPU per model: run it niced).

    .venv/bin/python bench/flowdetect_nonlinear.py [--only NAME ...] [--curve] [--halo2d]

One row per model: the cutoff the rule picks; at it, halo3d's elephants flagged within 2 polls on
every Mininet halo3d log under bench/results (held out), the held-out patterns' (simulated and
the command's Mininet logs) within 2 polls, accuracy, precision and recall, the Mininet alltoall
mice flagged (every log; a mouse is a false alarm) and the simulated CG precision. ``--curve``
prints every cutoff, ``--halo2d`` also trains on the Mininet halo2d logs (never halo3d).
"""
import argparse
import glob
import os
import sys

import numpy as np

import benchcore

from sdnmpi import flows
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows

RESULTS = os.path.join(benchcore.HERE, "results")
# the Mininet logs of the shipped model's command (docs/flows.md), and the halo2d ones
COMMAND = ("20261128T072002Z", "20261128T080439Z", "20261128T080700Z", "20261128T095015Z")
HALO2D = "20261128T154742Z"
LINK, INTERVAL = flows.DEFAULT_LINK_RATE, flows.DEFAULT_INTERVAL


def _logistic(seed):
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=1.0, max_iter=5000, random_state=seed)


def _mlp(hidden, activation, alpha):
    def make(seed):
        from sklearn.neural_network import MLPClassifier
        return MLPClassifier(hidden_layer_sizes=hidden, activation=activation, alpha=alpha, max_iter=300,
                             random_state=seed)
    return make


def _boosted(depth, trees):
    def make(seed):
        from sklearn.ensemble import GradientBoostingClassifier
        return GradientBoostingClassifier(max_depth=depth, n_estimators=trees, random_state=seed)
    return make


class Mean:
    """The mean of the probabilities of several models."""
    def __init__(self, makers, seed):
        self.models = [m(seed) for m in makers]

    def fit(self, x, y, sample_weight):
        for m in self.models:
            m.fit(x, y, sample_weight=sample_weight)
        return self

    def predict_proba(self, x):
        return np.mean([m.predict_proba(x) for m in self.models], axis=0)


# name -> (model maker(seed), seed)
MODELS = {
    "logistic (shipped)": (_logistic, 0),
    "MLP 8 relu": (_mlp((8,), "relu", 1e-4), 0),
    "MLP 16 relu": (_mlp((16,), "relu", 1e-4), 0),
    "MLP 8 tanh, alpha 1e-3": (_mlp((8,), "tanh", 1e-3), 0),
    "MLP 8 tanh, alpha 1e-3, seed 1": (_mlp((8,), "tanh", 1e-3), 1),
    "MLP 4 tanh, alpha 1e-3": (_mlp((4,), "tanh", 1e-3), 0),
    "MLP 8 tanh, alpha 1e-2": (_mlp((8,), "tanh", 1e-2), 0),
    "MLP 8 tanh, alpha 0.1": (_mlp((8,), "tanh", 1e-1), 0),
    "MLP 16 tanh, alpha 1e-2": (_mlp((16,), "tanh", 1e-2), 0),
    "mean of logistic and MLP 8 tanh, alpha 1e-3": (lambda s: Mean([_logistic, _mlp((8,), "tanh", 1e-3)], s), 0),
    "gradient-boosted trees, depth 2, 100": (_boosted(2, 100), 0),
}


class Scored(flows.LearnedClassifier):
    """The learned classifier's gates (bytes now, min_age, version 8's ``floor``: none unless
    given; this script's rule chooses the cutoff alone, `train_flows.choose_cutoff`) and inputs
    (the shipped version's, `flows.VERSION`) around a scikit-learn model's probability."""
    def __init__(self, model, cutoff, floor=train_flows.NO_FLOOR):
        super().__init__(np.zeros(train_flows.DEFAULT_RECENT + flows.classify.FEATURES[flows.VERSION][1]), 0.0,
                         LINK, INTERVAL, cutoff=cutoff, history=train_flows.DEFAULT_WINDOW,
                         recent=train_flows.DEFAULT_RECENT, version=flows.VERSION, min_age=train_flows.MIN_AGE,
                         floor=floor)
        self.model = model

    def probability(self, counts, totals=None):
        x = self.inputs(counts, totals)
        return self.model.predict_proba(x.reshape(-1, x.shape[-1]))[:, 1].reshape(x.shape[:2])


def fitted(make, seed, groups):
    x, y, w = train_flows.design(groups, train_flows.DEFAULT_WINDOW, train_flows.DEFAULT_RECENT, LINK * INTERVAL)
    return make(seed).fit(x, y, sample_weight=w)


def factory(make, seed):
    """`train_flows.choose_cutoff`'s classifier factory for the model ``make(seed)``: fitted once per
    fold (`fitted`), wrapped in the learned classifier's gates (`Scored`) at each cutoff."""
    def fold(groups):
        model = fitted(make, seed, groups)
        return lambda cutoff: Scored(model, cutoff)
    return fold


def evaluate(make, seed, data, train, held, every, cutoffs):
    """{cutoff: row} and the rule's cutoff (`train_flows.choose_cutoff`'s leave-one-training-pattern-out
    rule, run with this model)."""
    rule, cv = train_flows.choose_cutoff(data, train, LINK, INTERVAL, train_flows.DEFAULT_WINDOW,
                                         train_flows.DEFAULT_RECENT, seed, classifier=factory(make, seed),
                                         cutoffs=cutoffs)
    model = fitted(make, seed, [data[p] for p in train])
    return {c: row(Scored(model, c), cv[c], data, every, held) for c in cutoffs}, rule


def row(clf, cv, data, every, held):
    """The columns of one table row: ``clf`` on the held-out runs of ``data``, on every Mininet
    halo3d log (within 2 polls) and alltoall log (mice flagged), and on the simulated CG runs."""
    s = train_flows.score(clf, [r for p in held for r in data[p]])
    return dict(cv=cv, halo3d=train_flows.score(clf, every["mininet-halo3d"])["within_2"],
                within_2=s["within_2"], accuracy=s["accuracy"], precision=s["precision"], recall=s["recall"],
                alltoall_fp=train_flows.score(clf, every["mininet-alltoall"])["fp"],
                cg_precision=train_flows.score(clf, data["cg"])["precision"])


def split(data):
    """(training patterns, held-out patterns) of ``data`` as the shipped model's command splits them."""
    held = list(train_flows.TEST_PATTERNS) + [counterlogs.PREFIX + t for t in counterlogs.TEST_PATTERNS]
    return [p for p in sorted(data) if p not in held], held


def print_header(first):
    print(f"| {first} | cutoff | training folds' timely accuracy | halo3d within 2 (every log) | held-out within 2 "
          "| held-out accuracy | precision | recall | Mininet alltoall mice flagged | simulated cg precision |")
    print("|" + "---|" * 10)


def print_row(name, cutoff, r):
    f = train_flows._fmt
    print(f"| {name} | {cutoff} | {f(r['cv'])} | {f(r['halo3d'])} | {f(r['within_2'])} | {f(r['accuracy'])} "
          f"| {f(r['precision'])} | {f(r['recall'])} | {r['alltoall_fp']} | {f(r['cg_precision'])} |", flush=True)


def load(halo2d, variants=True):
    """(data {pattern: runs} as the shipped model's command builds it, every Mininet log by pattern);
    ``variants`` False leaves the simulated fabric variants out (`flowtraffic.VARIANT_OF`: version
    6's data)."""
    names = sorted(p for p in flowtraffic.PATTERNS if variants or p not in flowtraffic.VARIANT_OF)
    data = train_flows.dataset(names, train_flows.DEFAULT_INSTANCES, 0, LINK, INTERVAL, train_flows.TRACE_DIR)
    folders = [os.path.join(RESULTS, f"flowdetect-{s}", "counters") for s in COMMAND + ((HALO2D,) if halo2d else ())]
    logs, rate, interval = counterlogs.dataset(folders)
    data.update(counterlogs.rescaled(logs, rate * interval, LINK * INTERVAL))
    every, rate, interval = counterlogs.dataset(counterlogs.folders_at(
        sorted(glob.glob(os.path.join(RESULTS, "flowdetect-*", "counters"))), *counterlogs.RECORDED_RATE))
    return data, counterlogs.rescaled(every, rate * interval, LINK * INTERVAL)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=sorted(MODELS), help="this model only (repeatable)")
    p.add_argument("--curve", action="store_true", help="a row for every cutoff, not only the rule's")
    p.add_argument("--halo2d", action="store_true", help="also train on the Mininet halo2d logs")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        data, every = load(args.halo2d)
    except flows.CounterLogError as exc:
        print(f"flowdetect_nonlinear: {exc}", file=sys.stderr)
        return 2
    train, held = split(data)
    print_header("model")
    for name in args.only or MODELS:
        make, seed = MODELS[name]
        rows, rule = evaluate(make, seed, data, train, held, every, train_flows.CUTOFFS)
        for c in train_flows.CUTOFFS if args.curve else (rule,):
            print_row(f"{name}{' (rule)' if args.curve and c == rule else ''}", c, rows[c])
    return 0


if __name__ == "__main__":
    sys.exit(main())
