#!/usr/bin/env python3
"""Small non-linear models on version 6's inputs (issue 16, halo3d within 2 polls;
docs/flows-mininet.md "halo3d within 2 polls: trees, stumps and a gated share"). Can a model
that splits on the label's step AND the pair's share separate Mininet halo3d's rises from a crawl
(share about 1/3) from all-to-all's one-interval bursts (share about 1/15), where version 6's one
logistic unit cannot? Offline, no lock (run it niced).

    .venv/bin/python bench/flowdetect_trees.py [--only NAME ...]            # the shipped split
    .venv/bin/python bench/flowdetect_trees.py --lopo [--patterns P,Q] [--only NAME ...]
    .venv/bin/python bench/flowdetect_trees.py --shares     # step x s where elephants begin

Every model is trained on version 6's 22 inputs (`flows.line_features`, the flowdetect_context.py
variant "line share") with the learned classifier's gates (bytes in the interval, `MIN_AGE`),
every training pattern weighing the same, and its cutoff picked by `train_flows.choose_cutoff`'s
leave-one-training-pattern-out rule (bench/flowdetect_lopo.py's `Cached`, which reproduces
`sdnmpi-sim train-flows`). Default: the shipped command's split; one row per model (held-out
figures, halo3d within 2 polls on every Mininet halo3d log, Mininet alltoall mice flagged,
simulated CG precision), then every Mininet pattern's within 2 polls and accuracy on every log.
``--lopo``: every pattern held out in turn, as bench/flowdetect_lopo.py. ``--shares``: where
each pattern's elephants begin, version 6's step x share input, and its mice that reach 0.25.
"""
import argparse
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)
import flowdetect_context as ctx
import flowdetect_lopo as lopo
import flowdetect_nonlinear as nl

from sdnmpi import flows
from sdnmpi.simulator import counterlogs, train_flows


class Gated:
    """Logistic regression on version 6's inputs and one more: the step x share input (the last)
    where it is >= ``fraction`` (the step AND a share of at least ``fraction``), else 0 (``times``
    True), or the bare indicator of that (``times`` False): a monotone interaction one unit on
    the 22 inputs cannot build."""

    def __init__(self, fraction, times=True, seed=0):
        from sklearn.linear_model import LogisticRegression
        self.fraction, self.times = fraction, times
        self.model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed)

    def _x(self, x):
        gate = (x[:, -1] >= self.fraction).astype(float)
        return np.column_stack([x, gate * x[:, -1] if self.times else gate])

    def fit(self, x, y, sample_weight):
        self.model.fit(self._x(x), y, sample_weight=sample_weight)
        return self

    def predict_proba(self, x):
        return self.model.predict_proba(self._x(x))


class Either(Gated):
    """Version 6's logistic unit, OR the rule "the step AND a share >= ``fraction``" (probability 1
    there): the rule's reach with the unit's flags elsewhere, no weight to trade them off."""

    def fit(self, x, y, sample_weight):
        self.model.fit(x, y, sample_weight=sample_weight)
        return self

    def predict_proba(self, x):
        p = self.model.predict_proba(x)
        p[x[:, -1] >= self.fraction] = (0.0, 1.0)
        return p


class Rule(Gated):
    """The rule alone: "the step AND a share >= ``fraction``" (nothing fitted)."""

    def fit(self, x, y, sample_weight):
        return self

    def predict_proba(self, x):
        hit = (x[:, -1] >= self.fraction).astype(float)
        return np.column_stack([1.0 - hit, hit])


def _tree(depth):
    def make(seed):
        from sklearn.tree import DecisionTreeClassifier
        return DecisionTreeClassifier(max_depth=depth, min_samples_leaf=20, random_state=seed)
    return make


MODELS = {
    "logistic (version 6)": nl._logistic,
    "tree depth 2": _tree(2),
    "tree depth 3": _tree(3),
    "tree depth 5": _tree(5),
    "stumps 50": nl._boosted(1, 50),
    "stumps 200": nl._boosted(1, 200),
    "boosted depth 2, 50": nl._boosted(2, 50),
    "logistic + step x s x [s >= 0.15]": lambda seed: Gated(0.15, seed=seed),
    "logistic + step x s x [s >= 0.2]": lambda seed: Gated(0.2, seed=seed),
    "logistic + step x s x [s >= 0.25]": lambda seed: Gated(0.25, seed=seed),
    "logistic + [step and s >= 0.2]": lambda seed: Gated(0.2, times=False, seed=seed),
    "logistic + [step and s >= 0.25]": lambda seed: Gated(0.25, times=False, seed=seed),
    "[step and s >= 0.25] alone": lambda seed: Rule(0.25, seed=seed),
    "version 6 OR [step and s >= 0.2]": lambda seed: Either(0.2, seed=seed),
    "version 6 OR [step and s >= 0.25]": lambda seed: Either(0.25, seed=seed),
    "version 6 OR [step and s >= 0.3]": lambda seed: Either(0.3, seed=seed),
}


class Models(lopo.Cached):
    """`lopo.Cached` (version 6's features of every run computed once) with a scikit-learn model
    ``make(seed)`` in place of the logistic unit: `fit` returns (model, None), `classifier` flags
    where its probability reaches the cutoff, within the same gates."""

    def __init__(self, variant, data, make):
        super().__init__(variant, data)
        self.make = make
        self.models, self.proba = [], {}

    def fit(self, names, seed=0):
        x, y, w = self.design(names)
        self.models.append(self.make(seed).fit(x, y, sample_weight=w))   # kept: ids stay unique
        return self.models[-1], None

    def classifier(self, model, _bias, cutoff):
        rows, proba = self.rows, self.proba

        class Clf:
            def flags(self, counts, totals=None):
                key = (id(model), id(counts))
                if key not in proba:
                    x, _gate = rows[id(counts)]
                    proba[key] = model.predict_proba(x.reshape(-1, x.shape[-1]))[:, 1].reshape(x.shape[:2])
                return (proba[key] >= cutoff) & rows[id(counts)][1]
        return Clf()


def split_rows(name, cache, data, tests, by_pattern):
    """Prints the shipped split's row of the model in ``cache``; adds its every-log figures per
    Mininet pattern to ``by_pattern``."""
    train, held = nl.split(data)
    cutoff, cv = cache.choose_cutoff(data, train)
    model, _ = cache.fit(train)
    clf = cache.classifier(model, None, cutoff)
    s = train_flows.score(clf, [r for h in held for r in data[h]])
    r = dict(cv=cv[cutoff], halo3d=train_flows.score(clf, tests["mininet-halo3d"])["within_2"],
             within_2=s["within_2"], accuracy=s["accuracy"], precision=s["precision"], recall=s["recall"],
             alltoall_fp=train_flows.score(clf, tests["mininet-alltoall"])["fp"],
             cg_precision=train_flows.score(clf, data["cg"])["precision"])
    nl.print_row(name, cutoff, r)
    simulated = {p: runs for p, runs in data.items() if not p.startswith(counterlogs.PREFIX)}
    for p, runs in sorted({**tests, **simulated}.items()):
        sc = train_flows.score(clf, runs)
        by_pattern.setdefault(p, []).append((name, sc))
    cache.proba.clear()


def print_by_pattern(by_pattern):
    f = train_flows._fmt
    print()
    print("| pattern (Mininet: every log) | model | elephants | within 2 polls | accuracy | precision | recall "
          "| timely accuracy |")
    print("|" + "---|" * 8)
    for p, rows in sorted(by_pattern.items()):
        for name, sc in rows:
            print(f"| {p} | {name} | {sc['elephants']} | {f(sc['within_2'])} | {f(sc['accuracy'])} "
                  f"| {f(sc['precision'])} | {f(sc['recall'])} | {f(sc['timely_accuracy'])} |")


def shares_report(cache, runs_by_name, fraction=0.25):
    """Prints, per pattern, step x s (version 6's last input) where its elephants become ones (the
    label's start or the next interval: within 2 polls), and its mice whose step x s ever reaches
    ``fraction`` within the learned classifier's gates."""
    print(f"| data | elephants | step x s within 2 polls: median (p25-p75) | >= {fraction} | mice "
          f"| mice reaching {fraction} |")
    print("|" + "---|" * 6)
    for name, runs in sorted(runs_by_name.items()):
        at, mice, reach = [], 0, 0
        for run in runs:
            x, gate = cache.rows[id(run.counts)]
            for i, big in enumerate(run.labels):
                if big:
                    at.append(x[i, run.starts[i]:run.starts[i] + 2, -1].max(initial=0.0))
                else:
                    mice += 1
                    reach += int((x[i, gate[i], -1] >= fraction).any())
        at = np.array(at)
        q = (" / ".join(f"{v:.2f}" for v in np.percentile(at, [50, 25, 75])) if len(at) else "-")
        print(f"| {name} | {len(at)} | {q} | {np.mean(at >= fraction) if len(at) else 0:.2f} | {mice} | {reach} |")


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=sorted(MODELS), help="this model only (repeatable)")
    p.add_argument("--lopo", action="store_true", help="every pattern held out in turn")
    p.add_argument("--patterns", help="with --lopo: comma-separated base patterns to hold out")
    p.add_argument("--shares", action="store_true", help="step x s where each pattern's elephants begin")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    try:
        data, tests = nl.load(False)
    except flows.CounterLogError as exc:
        p.error(str(exc))                   # exits with status 2
    names = args.only or list(MODELS)
    cache = Models(ctx.VERSION6, {**data, **{"every " + k: v for k, v in tests.items()}}, None)
    if args.shares:
        shares_report(cache, {**{k: v for k, v in data.items() if not k.startswith(counterlogs.PREFIX)}, **tests})
        return 0
    if args.lopo:
        bases = sorted({lopo.base_of(n) for n in list(data) + list(tests)})
        wanted = [b.strip() for b in args.patterns.split(",")] if args.patterns else bases
        lopo.print_header()
        for name in names:
            cache.make = lambda seed, m=MODELS[name]: m(seed)
            lopo.held_out_rows(cache, data, tests, wanted, name)
            cache.models.clear()
            cache.proba.clear()
        return 0
    nl.print_header("model (version 6's inputs)")
    by_pattern = {}
    for name in names:
        cache.make = MODELS[name]
        split_rows(name, cache, data, tests, by_pattern)
        cache.models.clear()
    print_by_pattern(by_pattern)
    return 0


if __name__ == "__main__":
    sys.exit(main())
