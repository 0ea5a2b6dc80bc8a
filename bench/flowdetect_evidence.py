#!/usr/bin/env python3
"""Version 8 with a noise-aware evidence gate on a pair's later intervals (issue 16, simulated cg
at 0.947 held out: docs/flows-mininet.md, "cg's near-line mice and an evidence gate"), judged as
`train-flows` judges the shipped model: the same simulated runs and Mininet logs, version 8's
weights, and the gate chosen with the floor and the cutoff by the training folds (leave one
training pattern out, timely accuracy), never by the held-out patterns. No lock; a few minutes of
CPU (run it niced).

    .venv/bin/python bench/flowdetect_evidence.py [--folds] [--hold-out PATTERN]

The gate: a pair at least `classify.FLOOR_AGE` intervals past its first busy one (its first whole
interval is not gated) is newly flagged only when the mean of its whole intervals so far, the
latest included, reaches the label's line (`classify.LINE`), or its latest interval r0 rose above
the mean m of the n whole ones before it by more than the counters' wobble: r0 >= (1 + d) m
("ratio", d), or r0 - m >= z x `WOBBLE` x sqrt(r0^2 + m^2 / n) ("z", z: z standard deviations
of the difference of one reading and a mean of n, each reading off its rate by `WOBBLE`). A
reading over the line within that wobble of a pair's own mean under the line is taken as noise.
One row per gate: the floor and cutoff the folds pick with it, the folds' timely accuracy, and
the held-out figures (for the record); the first row is the rule's choice over every gate.
``--folds`` prints each fold's timely accuracy at the version 8 rule and the folds' choice.
``--hold-out P`` holds out P alone instead of the command's split (its simulated runs, fabric
variant and Mininet logs: `flowdetect_lopo.base_of`) and prints, at version 8's rule and at the
folds' choice, P's simulated runs and every Mininet log of P.
"""
import argparse
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)
import flowdetect_context as fc
import flowdetect_lopo as lopo
import flowdetect_nonlinear as nl

from sdnmpi import flows
from sdnmpi.flows import classify
from sdnmpi.simulator import train_flows

WOBBLE = 0.1     # sd of one interval's reading around the pair's rate, a share of it (flowtraffic.counters' rate_noise)
GATES = ((None,) + tuple(("ratio", d) for d in (0.2, 0.3, 0.4, 0.5))
         + tuple(("z", z) for z in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)))
LINK_BYTES = nl.LINK * nl.INTERVAL


def evidence(counts, link_bytes=LINK_BYTES, window=train_flows.DEFAULT_WINDOW):
    """pairs x intervals arrays (ages, r0, before, pooled) over the last ``window`` intervals, as
    the controller keeps them: the pair's age (`flows.pair_ages` from its first busy interval), its
    latest interval r0 (a share of the link), the mean of its whole intervals before the latest
    (ages 1 .. age - 1; 0 when none) and the mean of its whole intervals with the latest."""
    sc = np.clip(np.asarray(counts, dtype=float) / link_bytes, 0.0, 1.0)
    ages = flows.pair_ages(counts, window, link_bytes, classify.BUSY)
    rows = np.arange(len(sc))[:, None]
    t = np.arange(sc.shape[1])[None, :]
    cum = np.concatenate([np.zeros((len(sc), 1)), np.cumsum(sc, axis=1)], axis=1)
    n = np.maximum(ages - 1, 0)
    total = cum[rows, t] - cum[rows, np.clip(t - n, 0, None)]
    before = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
    return ages, sc, before, (total + sc) / (n + 1)


def passes(gate, ages, r0, before, pooled):
    """Bool per pair and poll: the evidence ``gate`` (None: version 8, no gate; ("ratio", d); ("z",
    z)) lets the pair be newly flagged there."""
    if gate is None:
        return np.ones(np.shape(r0), dtype=bool)
    kind, v = gate
    if kind == "ratio":
        rise = r0 >= (1.0 + v) * before
    else:
        n = np.maximum(ages - 1, 1)
        rise = r0 - before >= v * WOBBLE * np.sqrt(r0 ** 2 + before ** 2 / n)
    return (ages < classify.FLOOR_AGE) | (pooled >= classify.LINE) | rise


class Gated:
    """`flags` of a unit (weights, bias) over `lopo.Cached` inputs at (cutoff, floor, gate), set
    with `at`; each run's probabilities and evidence are computed once."""

    def __init__(self, cache, weights, bias):
        self.cache, self.weights, self.bias, self.memo, self.key = cache, weights, bias, {}, None

    def at(self, cutoff, floor, gate):
        self.key = (cutoff, floor, gate)
        return self

    def flags(self, counts, totals=None):
        if id(counts) not in self.memo:
            x, ok = self.cache.rows[id(counts)]
            self.memo[id(counts)] = (1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias))), ok, evidence(counts))
        prob, ok, (ages, r0, before, pooled) = self.memo[id(counts)]
        cutoff, floor, gate = self.key
        return ((prob >= cutoff) & ok & (r0 >= np.where(ages < classify.FLOOR_AGE, *floor))
                & passes(gate, ages, r0, before, pooled))


def choose(cache, data, train, floors=train_flows.FLOORS, gates=GATES, cutoffs=train_flows.CUTOFFS):
    """((floor, cutoff, gate), {(floor, cutoff, gate): mean timely accuracy}, [(pattern, {key: its
    fold's})]): `train_flows.choose_decision`'s rule with the gate chosen too; ties go to no gate
    (a gate must do better on the folds than none), then as there: the lower floors, the lower
    cutoff, then the earlier gate of ``gates``."""
    folds = []
    for held, weights, bias in cache.folds(train):
        clf = Gated(cache, weights, bias)
        folds.append((held, {(f, c, g): train_flows.score(clf.at(c, f, g), data[held])["timely_accuracy"]
                             for g in gates for f in floors for c in cutoffs}))
    acc = {k: float(np.mean([f[k] for _, f in folds])) for k in folds[0][1]}
    best = max(acc, key=lambda k: (acc[k], k[2] is None, -k[0][0], -k[0][1], -k[1], -gates.index(k[2])))
    return best, acc, folds


def best_at(acc, gate):
    """The (floor, cutoff, gate) of ``gate`` with the folds' best accuracy in ``acc``; ties to the
    lower floors, then the lower cutoff (`train_flows.choose_decision`'s order)."""
    return max((k for k in acc if k[2] == gate), key=lambda k: (acc[k], -k[0][0], -k[0][1], -k[1]))


def row(clf, data, every, held):
    """The held-out columns of ``clf`` (a `Gated` set at a key)."""
    f = train_flows._fmt
    s = train_flows.score(clf, [r for p in held for r in data[p]])
    cg, two = train_flows.score(clf, data["cg"]), train_flows.score(clf, data["two-phases"])
    mininet = train_flows.score(clf, [r for p in held if p.startswith("mininet-") for r in data[p]])
    halo = [train_flows.score(clf, runs)["within_2"] for runs in (data["mininet-halo3d"], every["mininet-halo3d"])]
    return (f"{f(s['within_2'])} | {f(s['accuracy'])} | {f(s['precision'])} | {cg['accuracy']:.4f} / "
            f"{f(cg['precision'])} / {f(cg['recall'])} / {f(cg['within_2'])} | {f(two['accuracy'])} | "
            f"{f(mininet['accuracy'])}, {mininet['fp']} | {f(halo[0])} / {f(halo[1])} | "
            f"{train_flows.score(clf, every['mininet-alltoall'])['fp']}")


def held_alone(clf, acc, keys, data, every, pattern):
    """Prints ``clf`` at each (floor, cutoff, gate) of ``keys`` on ``pattern``'s simulated runs and
    every Mininet log of it."""
    f = train_flows._fmt
    print("| held out | data | gate | floor | cutoff | folds' timely accuracy | pairs | elephants | accuracy "
          "| precision | recall | within 2 polls | mice flagged |")
    print("|" + "---|" * 13)
    sets = [(n, data[n]) for n in sorted(data) if n == pattern]
    sets += [(f"every {n}", every[n]) for n in sorted(every) if lopo.base_of(n) == pattern]
    for name, runs in sets:
        for floor, cutoff, gate in keys:
            s = train_flows.score(clf.at(cutoff, floor, gate), runs)
            print(f"| {pattern} | {name} | {gate} | {floor} | {cutoff} | {acc[(floor, cutoff, gate)]:.4f} | "
                  f"{s['pairs']} | {s['elephants']} | {f(s['accuracy'])} | {f(s['precision'])} | {f(s['recall'])} "
                  f"| {f(s['within_2'])} | {s['fp']} |", flush=True)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folds", action="store_true", help="also each fold's timely accuracy")
    p.add_argument("--hold-out", metavar="PATTERN", help="hold out this pattern alone (and its variant, logs)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        data, every = nl.load(False)
    except flows.CounterLogError as exc:
        print(f"flowdetect_evidence: {exc}", file=sys.stderr)
        return 2
    train, held = nl.split(data)
    if args.hold_out:
        train = [n for n in sorted(data) if lopo.base_of(n) != args.hold_out]
    cache = lopo.Cached(fc.SHIPPED, {**data, **{"every " + k: v for k, v in every.items()}})
    best, acc, folds = choose(cache, data, train)
    clf = Gated(cache, *cache.fit(train))
    v8 = best_at(acc, None)
    if args.hold_out:
        held_alone(clf, acc, (v8, best), data, every, args.hold_out)
        return 0
    print("| gate | floor (young, old) | cutoff | folds' timely accuracy | held-out within 2 | accuracy | precision "
          "| cg accuracy / precision / recall / within 2 | two-phases accuracy | Mininet held-out accuracy, mice "
          "flagged | Mininet halo3d within 2 (command's logs / every log) | Mininet alltoall mice flagged |")
    print("|" + "---|" * 12)
    for gate in (best[2],) + tuple(g for g in GATES if g != best[2]):
        key = best_at(acc, gate)
        name = "none (version 8)" if gate is None else f"{gate[0]} {gate[1]}"
        print(f"| {name}{' (the rule)' if key == best else ''} | {key[0]} | {key[1]} | {acc[key]:.4f} | "
              f"{row(clf.at(key[1], key[0], gate), data, every, held)} |", flush=True)
    if args.folds:
        for name, fold in folds:
            print(f"fold {name}: version 8 {fold[v8]:.4f}, the rule {fold[best]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
