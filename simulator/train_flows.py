"""``sdnmpi-sim train-flows``: train the learned elephant classifier (sdnmpi.flows) on counter
series of pattern traffic (flowtraffic.py), split by pattern, and score both classifiers on every
pattern. Deterministic for a seed. See docs/flows.md."""
import logging
import os

import numpy as np

from .. import flows
from ..primitives import fattree
from . import flowtraffic

LOG = logging.getLogger(__name__)

TEST_PATTERNS = ("permutation", "halo3d", "two-phases", "barrier-mice", "cg")
DEFAULT_WINDOW = 32                # intervals of history the model sees (flows.pair_features)
DEFAULT_RECENT = 8                 # of which the latest are inputs one by one
DEFAULT_INSTANCES = 12
TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "tests", "data", "pfsim", "traces")


class TrainError(ValueError):
    """Training cannot run (one line)."""


def dataset(patterns, instances, seed, link_rate, interval, trace_dir):
    """{pattern: [(counts, labels), ...]}; instance i of pattern number j uses seed
    seed * 100003 + j * 1009 + i, so adding a pattern does not change the others' data."""
    graph = fattree.kary(4)
    names = sorted(flowtraffic.PATTERNS)
    return {p: [flowtraffic.instance(p, seed * 100003 + names.index(p) * 1009 + i, link_rate,
                                     interval, trace_dir, graph)
                for i in range(instances)]
            for p in patterns}


def windows(runs, window, recent, link_bytes):
    """(X, y): one row of `flows.pair_features` per pair and poll at which the pair sent bytes."""
    xs, ys = [], []
    for counts, labels in runs:
        x = flows.pair_features(counts, window, recent, link_bytes)
        sent = counts > 0
        xs.append(x[sent])
        ys.append(np.broadcast_to(labels[:, None], counts.shape)[sent])
    return np.concatenate(xs), np.concatenate(ys)


def fit(runs, window, recent, link_bytes, seed):
    """(weights, bias) of a logistic regression (one dense unit, sigmoid, cross-entropy) over
    the features of every (pair, poll) of the training runs, labelled with the pair's label."""
    from sklearn.linear_model import LogisticRegression
    x, y = windows(runs, window, recent, link_bytes)
    if len(np.unique(y)) < 2:
        raise TrainError("the training patterns hold only one class (elephants or mice): "
                         "train on more patterns or instances")
    model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed)
    model.fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


CUTOFFS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


def _learned(weights, bias, link_rate, interval, cutoff, window, recent):
    return flows.LearnedClassifier(weights, bias, link_rate, interval, cutoff=cutoff, history=window,
                                   recent=recent)


def curve(weights, bias, runs, link_rate, interval, window, recent):
    """{cutoff: scores over ``runs``} of the model for every cutoff of `CUTOFFS`."""
    return {c: score(_learned(weights, bias, link_rate, interval, c, window, recent), runs) for c in CUTOFFS}


def choose_cutoff(data, train_patterns, link_rate, interval, window, recent, seed):
    """The cutoff of `CUTOFFS` with the best pair-level accuracy on the training patterns, each
    scored by a model fitted on the other training patterns (leave one pattern out: the cutoff
    is chosen on patterns its model never saw, as the held-out patterns will be, and never on
    the held-out patterns), and that {cutoff: accuracy} curve; a fold whose training part holds
    one class only is skipped. A pair polled many times gets many chances to be flagged, so 0.5
    over-flags mice."""
    folds = []
    for held in train_patterns:
        rest = [r for p in train_patterns if p != held for r in data[p]]
        try:
            weights, bias = fit(rest, window, recent, link_rate * interval, seed)
        except TrainError:
            LOG.warning("cutoff: no fold without %s (the others hold one class only)", held)
            continue
        folds.append(curve(weights, bias, data[held], link_rate, interval, window, recent))
    if not folds:
        raise TrainError("no training fold holds both classes: train on more patterns or instances")
    acc = {c: sum(f[c]["tp"] + f[c]["tn"] for f in folds) / sum(f[c]["pairs"] for f in folds) for c in CUTOFFS}
    return max(CUTOFFS, key=lambda c: (acc[c], -c)), acc


def score(classifier, runs):
    """Pair-level scores of ``classifier`` over ``runs`` plus detection delays of the elephants
    it caught (polls after the pair's first counted interval)."""
    labels, flagged, delays = [], [], []
    for counts, lab in runs:
        f = classifier.flags(counts)
        labels.append(lab)
        flagged.append(f.any(axis=1))
        d = flows.detection_delays(counts, f)
        delays.append(d[lab & (d >= 0)])
    result = flows.pair_scores(np.concatenate(labels), np.concatenate(flagged))
    d = np.concatenate(delays)
    result["delay_median"] = float(np.median(d)) if len(d) else None
    result["delay_p95"] = float(np.percentile(d, 95)) if len(d) else None
    result["delay_max"] = int(d.max()) if len(d) else None
    result["within_2"] = float((d <= 2).mean()) if len(d) else None
    return result


def train(out, seed=0, instances=DEFAULT_INSTANCES, window=DEFAULT_WINDOW, recent=DEFAULT_RECENT,
          link_rate=flows.DEFAULT_LINK_RATE, interval=flows.DEFAULT_INTERVAL,
          test_patterns=TEST_PATTERNS, trace_dir=TRACE_DIR, threshold=None):
    """Trains, writes the model to ``out`` and returns (report {pattern: {split, learned,
    threshold}}, {cutoff: held-out scores} of the trained weights, for the record only)."""
    if not 1 <= recent <= window:
        raise TrainError(f"--recent {recent} must be between 1 and --window {window}")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise TrainError(f"cannot write {out}: no writable folder {folder}")
    unknown = sorted(set(test_patterns) - set(flowtraffic.PATTERNS))
    if unknown:
        raise TrainError(f"unknown test pattern(s) {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(flowtraffic.PATTERNS))})")
    train_patterns = [p for p in sorted(flowtraffic.PATTERNS) if p not in test_patterns]
    if not train_patterns:
        raise TrainError("every pattern is a test pattern: nothing left to train on")
    if "cg" in flowtraffic.PATTERNS and not os.path.exists(os.path.join(trace_dir, flowtraffic.CG_TRACE)):
        raise TrainError(f"{trace_dir}: no {flowtraffic.CG_TRACE} (pass --trace-dir)")
    data = dataset(sorted(flowtraffic.PATTERNS), instances, seed, link_rate, interval, trace_dir)
    train_runs = [r for p in train_patterns for r in data[p]]
    if len(train_patterns) < 2:
        raise TrainError("the cutoff is chosen by leaving one training pattern out: train on 2 or more")
    cutoff, cv = choose_cutoff(data, train_patterns, link_rate, interval, window, recent, seed)
    weights, bias = fit(train_runs, window, recent, link_rate * interval, seed)
    learned = _learned(weights, bias, link_rate, interval, cutoff, window, recent)
    thresh = flows.ThresholdClassifier(link_rate=link_rate, interval=interval, **(threshold or {}))
    report = {}
    for p in sorted(data):
        report[p] = {"split": "test" if p in test_patterns else "train",
                     "learned": score(learned, data[p]), "threshold": score(thresh, data[p])}
    held = [r for p in test_patterns for r in data[p]]
    report["all held-out"] = {"split": "test", "learned": score(learned, held),
                              "threshold": score(thresh, held)}
    held_curve = curve(weights, bias, held, link_rate, interval, window, recent)
    for c, s in held_curve.items():
        s["cv_accuracy"] = cv[c]
    trained = {"seed": seed, "instances": instances, "train_patterns": train_patterns,
               "test_patterns": list(test_patterns), "interval_s": interval,
               "link_rate_Bps": link_rate, "elephant_link_seconds": flowtraffic.ELEPHANT_LINK_SECONDS,
               "cutoff_cv_accuracy": {str(c): a for c, a in cv.items()},
               "held_out_accuracy": report["all held-out"]["learned"]["accuracy"]}
    try:
        flows.save_model(out, weights, bias, cutoff=cutoff, trained=trained, history=window, recent=recent)
    except OSError as exc:
        raise TrainError(f"cannot write {out}: {exc.strerror}") from None
    return report, held_curve


def _fmt(v):
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def table(report):
    """A markdown table: one row per pattern and classifier."""
    rows = ["| pattern | split | classifier | pairs | elephants | accuracy | precision | recall "
            "| delay median | delay p95 | caught within 2 |", "|" + "---|" * 11]
    for p, r in report.items():
        for c in ("learned", "threshold"):
            s = r[c]
            rows.append(f"| {p} | {r['split']} | {c} | {s['pairs']} | {s['elephants']} | "
                        f"{_fmt(s['accuracy'])} | {_fmt(s['precision'])} | {_fmt(s['recall'])} | "
                        f"{_fmt(s['delay_median'])} | {_fmt(s['delay_p95'])} | {_fmt(s['within_2'])} |")
    return "\n".join(rows)


def curve_table(curve):
    rows = ["| cutoff | training folds' accuracy | held-out accuracy | precision | recall "
            "| delay median | delay p95 | caught within 2 |", "|" + "---|" * 8]
    for c, s in curve.items():
        rows.append(f"| {c} | {_fmt(s.get('cv_accuracy'))} | {_fmt(s['accuracy'])} | {_fmt(s['precision'])} "
                    f"| {_fmt(s['recall'])} | {_fmt(s['delay_median'])} | {_fmt(s['delay_p95'])} "
                    f"| {_fmt(s['within_2'])} |")
    return "\n".join(rows)


def add_parser(sub, positive, count):
    """The ``train-flows`` subcommand of sdnmpi-sim."""
    t = sub.add_parser("train-flows", help="train the learned elephant-flow classifier")
    t.add_argument("--out", default="flows/model.json", help="weights file to write (JSON)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--instances", type=count, default=DEFAULT_INSTANCES, help="runs per pattern")
    t.add_argument("--window", type=count, default=DEFAULT_WINDOW, help="intervals of history the model sees")
    t.add_argument("--recent", type=count, default=DEFAULT_RECENT,
                   help="latest intervals given to the model one by one (<= --window)")
    t.add_argument("--interval", type=positive, default=flows.DEFAULT_INTERVAL, help="poll interval, s")
    t.add_argument("--link-mbit", type=positive, default=flows.DEFAULT_LINK_RATE * 8 / 1e6,
                   help="host link rate, Mbit/s")
    t.add_argument("--test-patterns", default=",".join(TEST_PATTERNS),
                   help="comma-separated patterns left out of training; known: "
                        + ", ".join(sorted(flowtraffic.PATTERNS)))
    t.add_argument("--trace-dir", default=TRACE_DIR, help=f"folder holding {flowtraffic.CG_TRACE}")
    t.add_argument("--report", metavar="JSON", help="also write the report as JSON")
    return t


def run(args):
    """Runs ``sdnmpi-sim train-flows``; prints the per-pattern table."""
    import json
    tests = tuple(p.strip() for p in args.test_patterns.split(",") if p.strip())
    report, curve = train(args.out, seed=args.seed, instances=args.instances, window=args.window,
                          recent=args.recent,
                          link_rate=args.link_mbit * 1e6 / 8, interval=args.interval,
                          test_patterns=tests, trace_dir=args.trace_dir)
    print(table(report))
    print()
    print(curve_table(curve))
    print(f"model: {args.out}")
    if args.report:
        try:
            with open(args.report, "w", encoding="utf-8") as f:
                json.dump({"patterns": report, "cutoffs": {str(k): v for k, v in curve.items()}}, f,
                          indent=1)
        except OSError as exc:
            raise TrainError(f"cannot write {args.report}: {exc.strerror}") from None
