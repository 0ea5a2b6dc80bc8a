"""``sdnmpi-sim train-flows``: train the learned elephant classifier (sdnmpi.flows) on counter
series of pattern traffic (flowtraffic.py), split by pattern, and score both classifiers on every
pattern. Deterministic for a seed. See docs/flows.md."""
import logging
import os

import numpy as np

from .. import flows
from ..flows import classify
from ..primitives import fattree
from . import counterlogs, flowtraffic

LOG = logging.getLogger(__name__)

TEST_PATTERNS = ("permutation", "halo3d", "two-phases", "barrier-mice", "cg")
DEFAULT_WINDOW = 32                # intervals of history the model sees (flows.early_features)
DEFAULT_RECENT = 4                 # of which the latest are inputs one by one
MIN_AGE = 1                        # the model decides from a pair's second poll on (a whole interval seen)
GOAL_POLLS = 2                     # issue 16: elephants flagged within 2 polls of their start
DEFAULT_INSTANCES = 12
TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "tests", "data", "pfsim", "traces")


class TrainError(ValueError):
    """Training cannot run (one line)."""


def instance_seed(seed, pattern, i):
    """The seed of `dataset`'s instance ``i`` of ``pattern``: seed * 100003 + j * 1009 + i with j
    the pattern's number in `flowtraffic.SEED_ORDER`, so adding a pattern does not change the
    others' data."""
    return seed * 100003 + flowtraffic.SEED_ORDER.index(pattern) * 1009 + i


def dataset(patterns, instances, seed, link_rate, interval, trace_dir, heavy_intervals=flowtraffic.HEAVY_INTERVALS,
            phase=False):
    """{pattern: [(counts, labels), ...]}, instance i of each seeded by `instance_seed`; an
    elephant is heavy for ``heavy_intervals`` polling intervals (`flowtraffic.instance`; ``phase``:
    its sends at a random phase of the polls)."""
    graph = fattree.kary(4)
    return {p: [flowtraffic.instance(p, instance_seed(seed, p, i), link_rate,
                                     interval, trace_dir, graph, heavy_intervals, phase)
                for i in range(instances)]
            for p in patterns}


def totals(run):
    """The endpoint totals of a run's pairs (`flows.endpoint_totals`), or None for a run without
    its pair list."""
    return None if run.pairs is None else flows.endpoint_totals(run.counts, run.pairs)


def windows(runs, window, recent, link_bytes, min_age=MIN_AGE):
    """(X, y): one row of the model's features (version `flows.VERSION`: `flows.host_features`,
    ages from the first busy interval) per pair and poll at which the pair sent bytes and is at
    least ``min_age`` intervals past its first busy interval (the polls the model decides at)."""
    floor = classify.AGE_FLOOR.get(flows.VERSION, 0.0)
    xs, ys = [], []
    for run in runs:
        counts, labels = run.counts, run.labels
        x = classify.features(flows.VERSION, counts, window, recent, link_bytes, totals(run))
        sent = (counts > 0) & (flows.pair_ages(counts, window, link_bytes, floor) >= min_age)
        xs.append(x[sent])
        ys.append(np.broadcast_to(labels[:, None], counts.shape)[sent])
    return np.concatenate(xs), np.concatenate(ys)


def design(groups, window, recent, link_bytes):
    """(X, y, sample weights) of the training runs (`windows`), labelled with the pair's label.
    ``groups``: the runs of each training pattern (a list of run lists); every pattern weighs the
    same, however many rows it has (alltoall's 240 pairs, or the few runs of a counter log, would
    otherwise weigh by their size)."""
    parts = [windows(runs, window, recent, link_bytes) for runs in groups]
    parts = [(x, y) for x, y in parts if len(y)]
    if not parts:
        raise TrainError("no training rows: train on more patterns or instances")
    x = np.concatenate([x for x, _ in parts])
    y = np.concatenate([y for _, y in parts])
    w = np.concatenate([np.full(len(y_), len(y) / (len(parts) * len(y_))) for _, y_ in parts])
    if len(np.unique(y)) < 2:
        raise TrainError("the training patterns hold only one class (elephants or mice): "
                         "train on more patterns or instances")
    return x, y, w


def fit(groups, window, recent, link_bytes, seed):
    """(weights, bias) of a logistic regression (one dense unit, sigmoid, cross-entropy) over
    `design`'s rows of the training patterns ``groups``."""
    from sklearn.linear_model import LogisticRegression
    x, y, w = design(groups, window, recent, link_bytes)
    model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed)
    model.fit(x, y, sample_weight=w)
    return model.coef_[0], float(model.intercept_[0])


CUTOFFS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
# model version 8: the floors (shares of the link in the latest interval) the rule chooses among,
# (young, old) pairs of these (`flows.LearnedClassifier`); none above the label's line, which would
# refuse a pair at an interval the label calls heavy (docs/flows-mininet.md: with 12 % among them,
# the rule picked it with halo3d held out, and Mininet halo3d fell to 76 % within 2 polls)
FLOOR_STEPS = (0.0, 0.02, 0.05, 0.08, 0.09, flowtraffic.HEAVY_FRACTION)
FLOORS = tuple((young, old) for young in FLOOR_STEPS for old in FLOOR_STEPS)
NO_FLOOR = (0.0, 0.0)


def _learned(weights, bias, link_rate, interval, cutoff, window, recent, floor=NO_FLOOR):
    return flows.LearnedClassifier(weights, bias, link_rate, interval, cutoff=cutoff, history=window,
                                   recent=recent, version=flows.VERSION, min_age=MIN_AGE, floor=floor)


def curve(weights, bias, runs, link_rate, interval, window, recent, floor=NO_FLOOR):
    """{cutoff: scores over ``runs``} of the model for every cutoff of `CUTOFFS` (at ``floor``)."""
    return {c: score(_learned(weights, bias, link_rate, interval, c, window, recent, floor), runs)
            for c in CUTOFFS}


class _Floored:
    """``flags`` of a classifier where the latest interval also carried at least ``floor`` (young,
    old: `flows.LearnedClassifier`'s) of the link (``link_bytes`` a link-interval, ages over
    ``window`` intervals); the classifier's own flags of a run and its ages are computed once in
    ``memo`` ({id(counts): (flags, ages)}), so that every floor is scored at the cost of one."""

    def __init__(self, classifier, floor, link_bytes, window, memo):
        self.classifier, self.floor, self.memo = classifier, floor, memo
        self.link_bytes, self.window = link_bytes, window

    def flags(self, counts, totals=None):
        if id(counts) not in self.memo:
            self.memo[id(counts)] = (self.classifier.flags(counts, totals),
                                     flows.pair_ages(counts, self.window, self.link_bytes, classify.BUSY))
        hit, ages = self.memo[id(counts)]
        if not any(self.floor):
            return hit
        return hit & (np.asarray(counts) >= np.where(ages < classify.FLOOR_AGE, *self.floor) * self.link_bytes)


def logistic_factory(link_rate, interval, window, recent, seed):
    """The classifier factory of the shipped model for `choose_cutoff`: fits the logistic unit
    (`fit`) on a fold's training runs and returns {cutoff -> `flows.LearnedClassifier`}."""
    def make(groups):
        weights, bias = fit(groups, window, recent, link_rate * interval, seed)
        return lambda cutoff: _learned(weights, bias, link_rate, interval, cutoff, window, recent)
    return make


def choose_cutoff(data, train_patterns, link_rate, interval, window, recent, seed, classifier=None,
                  cutoffs=CUTOFFS):
    """`choose_decision` without a floor (the pair sent bytes): (cutoff, {cutoff: training folds'
    timely accuracy})."""
    _floor, cutoff, acc = choose_decision(data, train_patterns, link_rate, interval, window, recent, seed,
                                          classifier, cutoffs, floors=(NO_FLOOR,))
    return cutoff, {c: acc[(NO_FLOOR, c)] for c in cutoffs}


def choose_decision(data, train_patterns, link_rate, interval, window, recent, seed, classifier=None,
                    cutoffs=CUTOFFS, floors=FLOORS):
    """The cutoff of ``cutoffs`` with the best timely accuracy (`score`: an elephant counts as
    right only when flagged within `GOAL_POLLS` polls of its start), averaged over the training
    patterns (each weighs the same: alltoall's 240 pairs per instance would outweigh the rest),
    each scored by a model fitted on the other training patterns (leave one pattern out: the
    cutoff is chosen on patterns its model never saw, as the held-out patterns will be, and never
    on the held-out patterns), and that {cutoff: timely accuracy} curve; a fold whose training
    part holds one class only (`TrainError`) is skipped. ``classifier``: a factory, called with a
    fold's training runs (a list of run lists), that fits a model and returns a function cutoff ->
    classifier (`flags`); default `logistic_factory`, the shipped model's. Version 8: the floor of
    ``floors`` (the shares of the link the latest interval must carry, young and old,
    `flows.LearnedClassifier`) is chosen with the cutoff, by the same rule: (floor, cutoff,
    {(floor, cutoff): timely accuracy}); ties go to the lower floors (young, then old: a floor must
    do better on the folds than none), then to the lower cutoff."""
    make = classifier or logistic_factory(link_rate, interval, window, recent, seed)
    link_bytes = link_rate * interval
    folds = []
    for held in train_patterns:
        rest = [data[p] for p in train_patterns if p != held]
        try:
            at = make(rest)
        except TrainError:
            LOG.warning("cutoff: no fold without %s (the others hold one class only)", held)
            continue
        fold = {}
        for c in cutoffs:
            clf, memo = at(c), {}
            for f in floors:
                fold[(f, c)] = score(_Floored(clf, f, link_bytes, window, memo), data[held])["timely_accuracy"]
        folds.append(fold)
    if not folds:
        raise TrainError("no training fold holds both classes: train on more patterns or instances")
    acc = {k: float(np.mean([f[k] for f in folds])) for k in folds[0]}
    floor, cutoff = max(acc, key=lambda k: (acc[k], -k[0][0], -k[0][1], -k[1]))
    return floor, cutoff, acc


def score(classifier, runs):
    """Pair-level scores of ``classifier`` over ``runs`` (`flows.pair_scores`: a pair is
    predicted an elephant when ever flagged) and the delays of the elephants: polls from the
    start of its elephant traffic until flagged, the flagging poll included (1 = the first poll
    after its start; a pair flagged before that counts 1). ``within_2``: share of ALL elephants
    flagged within `GOAL_POLLS` polls (a missed one counts as late); ``timely``: those elephants;
    ``timely_accuracy``: (timely + mice never flagged) / pairs, the issue's goal in one number."""
    labels, flagged, delays = [], [], []
    for run in runs:
        counts, lab, starts = run.counts, run.labels, run.starts
        f = classifier.flags(counts, totals(run))
        labels.append(lab)
        flagged.append(f.any(axis=1))
        first = flows.first_flags(f)
        polls = np.where(first >= 0, np.maximum(first - starts + 1, 1), -1)
        delays.append(polls[lab])
    result = flows.pair_scores(np.concatenate(labels), np.concatenate(flagged))
    d = np.concatenate(delays)
    caught = d[d >= 0]
    result["delay_median"] = float(np.median(caught)) if len(caught) else None
    result["delay_p95"] = float(np.percentile(caught, 95)) if len(caught) else None
    result["delay_max"] = int(caught.max()) if len(caught) else None
    result["timely"] = int(((d >= 1) & (d <= GOAL_POLLS)).sum())
    result["within_2"] = result["timely"] / len(d) if len(d) else None
    result["timely_accuracy"] = (result["timely"] + result["tn"]) / result["pairs"] if result["pairs"] else None
    return result


def pattern_report(learned, thresh, data, test_patterns):
    """{pattern: {split, learned, threshold}} of the two classifiers (`score`) on every pattern of
    ``data`` ({pattern: runs}) and on all ``test_patterns`` together ("all held-out")."""
    report = {}
    for p in sorted(data):
        report[p] = {"split": "test" if p in test_patterns else "train",
                     "learned": score(learned, data[p]), "threshold": score(thresh, data[p])}
    held = [r for p in test_patterns for r in data[p]]
    report["all held-out"] = {"split": "test", "learned": score(learned, held),
                              "threshold": score(thresh, held)}
    return report


def train(out, seed=0, instances=DEFAULT_INSTANCES, window=DEFAULT_WINDOW, recent=DEFAULT_RECENT,
          link_rate=flows.DEFAULT_LINK_RATE, interval=flows.DEFAULT_INTERVAL,
          test_patterns=TEST_PATTERNS, trace_dir=TRACE_DIR, threshold=None, data=None, source="simulator"):
    """Trains, writes the model to ``out`` and returns (report {pattern: {split, learned,
    threshold}}, {cutoff: held-out scores} of the trained weights, for the record only). The runs
    are simulated (flowtraffic.py) unless ``data`` ({pattern: [flowtraffic.Run, ...]}, e.g. from
    counter logs: counterlogs.py) is given."""
    if not 1 <= recent <= window:
        raise TrainError(f"--recent {recent} must be between 1 and --window {window}")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise TrainError(f"cannot write {out}: no writable folder {folder}")
    known = sorted(flowtraffic.PATTERNS if data is None else data)
    # a fabric variant is held out with the pattern it varies (flowtraffic.VARIANT_OF)
    test_patterns = tuple(test_patterns) + tuple(v for v, b in flowtraffic.VARIANT_OF.items()
                                                 if b in test_patterns and v in known and v not in test_patterns)
    unknown = sorted(set(test_patterns) - set(known))
    if unknown:
        raise TrainError(f"unknown test pattern(s) {', '.join(unknown)} (known: {', '.join(known)})")
    train_patterns = [p for p in known if p not in test_patterns]
    if not train_patterns:
        raise TrainError("every pattern is a test pattern: nothing left to train on")
    if data is None:
        if not os.path.exists(os.path.join(trace_dir, flowtraffic.CG_TRACE)):
            raise TrainError(f"{trace_dir}: no {flowtraffic.CG_TRACE} (pass --trace-dir)")
        data = dataset(known, instances, seed, link_rate, interval, trace_dir)
    if len(train_patterns) < 2:
        raise TrainError("the cutoff is chosen by leaving one training pattern out: train on 2 or more")
    floor, cutoff, cv = choose_decision(data, train_patterns, link_rate, interval, window, recent, seed)
    weights, bias = fit([data[p] for p in train_patterns], window, recent, link_rate * interval, seed)
    learned = _learned(weights, bias, link_rate, interval, cutoff, window, recent, floor)
    thresh = flows.ThresholdClassifier(link_rate=link_rate, interval=interval, **(threshold or {}))
    report = pattern_report(learned, thresh, data, test_patterns)
    held = [r for p in test_patterns for r in data[p]]
    held_curve = curve(weights, bias, held, link_rate, interval, window, recent, floor)
    for c, s in held_curve.items():
        s["cv_timely_accuracy"] = cv[(floor, c)]
    trained = {"source": source, "seed": seed, "instances": instances, "train_patterns": train_patterns,
               "test_patterns": list(test_patterns), "interval_s": interval,
               "link_rate_Bps": link_rate,
               "label": {"heavy_fraction": flowtraffic.HEAVY_FRACTION, "heavy_intervals": flowtraffic.HEAVY_INTERVALS},
               "cutoff_cv_timely_accuracy": {str(c): cv[(floor, c)] for c in CUTOFFS},
               "floor_cv_timely_accuracy": {f"{y} {o}": cv[((y, o), cutoff)] for y, o in FLOORS},
               "held_out_accuracy": report["all held-out"]["learned"]["accuracy"],
               "held_out_within_2": report["all held-out"]["learned"]["within_2"],
               "held_out_timely_accuracy": report["all held-out"]["learned"]["timely_accuracy"]}
    try:
        flows.save_model(out, weights, bias, cutoff=cutoff, trained=trained, history=window, recent=recent,
                         min_age=MIN_AGE, floor=floor)
    except OSError as exc:
        raise TrainError(f"cannot write {out}: {exc.strerror}") from None
    return report, held_curve


def _fmt(v):
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def table(report, delay="p95"):
    """A markdown table: one row per pattern and classifier; ``delay``: the second delay column,
    "p95" or "max"."""
    rows = ["| pattern | split | classifier | pairs | elephants | accuracy | precision | recall "
            f"| delay median, polls | delay {delay} | elephants within 2 polls | timely accuracy |", "|" + "---|" * 12]
    for p, r in report.items():
        for c in ("learned", "threshold"):
            s = r[c]
            rows.append(f"| {p} | {r['split']} | {c} | {s['pairs']} | {s['elephants']} | "
                        f"{_fmt(s['accuracy'])} | {_fmt(s['precision'])} | {_fmt(s['recall'])} | "
                        f"{_fmt(s['delay_median'])} | {_fmt(s['delay_' + delay])} | {_fmt(s['within_2'])} | "
                        f"{_fmt(s['timely_accuracy'])} |")
    return "\n".join(rows)


def curve_table(curve):
    rows = ["| cutoff | training folds' timely accuracy | held-out accuracy | precision | recall "
            "| delay median | within 2 polls | timely accuracy |", "|" + "---|" * 8]
    for c, s in curve.items():
        rows.append(f"| {c} | {_fmt(s.get('cv_timely_accuracy'))} | {_fmt(s['accuracy'])} | "
                    f"{_fmt(s['precision'])} | {_fmt(s['recall'])} | {_fmt(s['delay_median'])} | "
                    f"{_fmt(s['within_2'])} | {_fmt(s['timely_accuracy'])} |")
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
    t.add_argument("--counter-logs", metavar="DIR", nargs="+",
                   help="train on the counter logs in DIR ... (*.jsonl[.gz], one run each, recorded on Mininet by "
                        "bench/bench_flowdetect.py) instead of simulated runs; --test-patterns then names "
                        "their patterns; --interval and --link-mbit come from the logs")
    t.add_argument("--with-simulated", action="store_true",
                   help="with --counter-logs: train on the simulated runs AND the logs (patterns named "
                        f"{counterlogs.PREFIX}PATTERN, bytes rescaled to --link-mbit); --test-patterns "
                        "holds a pattern out of both")
    return t


def run(args):
    """Runs ``sdnmpi-sim train-flows``; prints the per-pattern table."""
    import json
    tests = tuple(p.strip() for p in args.test_patterns.split(",") if p.strip())
    link_rate, interval, data, source = args.link_mbit * 1e6 / 8, args.interval, None, "simulator"
    if args.with_simulated and not args.counter_logs:
        raise TrainError("--with-simulated needs --counter-logs")
    if args.counter_logs:
        try:
            logs, log_rate, log_interval = counterlogs.dataset(args.counter_logs)
        except flows.CounterLogError as exc:
            raise TrainError(str(exc)) from None
        source = "counter logs " + " ".join(args.counter_logs)
        if args.with_simulated:
            logs = counterlogs.rescaled(logs, log_rate * log_interval, link_rate * interval)
            tests += tuple(counterlogs.PREFIX + p for p in tests if counterlogs.PREFIX + p in logs)
            if not os.path.exists(os.path.join(args.trace_dir, flowtraffic.CG_TRACE)):
                raise TrainError(f"{args.trace_dir}: no {flowtraffic.CG_TRACE} (pass --trace-dir)")
            data = dict(dataset(sorted(flowtraffic.PATTERNS), args.instances, args.seed, link_rate, interval,
                                args.trace_dir), **logs)
            source = "simulator + " + source
        else:
            if args.test_patterns == ",".join(TEST_PATTERNS):
                tests = counterlogs.TEST_PATTERNS
            data, link_rate, interval = logs, log_rate, log_interval
    report, curve = train(args.out, seed=args.seed, instances=args.instances, window=args.window,
                          recent=args.recent, link_rate=link_rate, interval=interval,
                          test_patterns=tests, trace_dir=args.trace_dir, data=data, source=source)
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
