"""``sdnmpi-sim score-flows``: a given weights file (default: the shipped model) and the threshold
classifier scored, without training, on the simulator's patterns at any ``--interval`` (by default
the patterns the model was held out of, with its training's seed, instances and link rate) or on
recorded counter logs. The data and the scores are `train_flows`' (`dataset`, `score`,
`pattern_report`), so at the model's own interval this reproduces its "Results" (docs/flows.md).

The label at another interval: an elephant is heavy (>= 10 % of its link) without a break for one
polling interval (``--label-seconds``, default: one interval): per poll, as the counters' label
(`flows.counterlog.label`) and the controller's windows are.

``--span S``: sliding windows (`slidescore`): the classifiers judge windows of S s ending at every
poll of ``--interval`` s, as the controller does with ``--sdnmpi-flow-span``; the simulated instances
are those drawn at S s (the label's run: S s unless ``--label-seconds``), read every ``--interval``
s; counter logs are scored so and, read every S s at each phase, as a poller of S s would have."""
import argparse
import json
import logging

from .. import flows
from . import counterlogs, flowtraffic, slidescore, train_flows

LOG = logging.getLogger(__name__)


def trained(model):
    """The ``trained`` record of the weights file ``model`` ({} when it has none)."""
    flows.load_model(model)     # one line (ModelError) for a file the controller would refuse
    with open(model, encoding="utf-8") as f:
        return json.load(f).get("trained") or {}


def held_out_patterns(record):
    """The simulated patterns a model's ``trained`` record holds out, variants included."""
    return [p for p in record.get("test_patterns", train_flows.TEST_PATTERNS) if p in flowtraffic.PATTERNS]


def classifiers(model, link_rate, interval):
    """(learned from ``model``, the controller's default threshold) at ``link_rate`` and ``interval``."""
    return (flows.load_model(model, link_rate=link_rate, interval=interval),
            flows.ThresholdClassifier(link_rate=link_rate, interval=interval))


def simulation(record, patterns=None, seed=None, instances=None, link_rate=None):
    """(patterns, seeds, instances, link rate) of a simulated scoring: ``patterns``, ``seed`` (one, or
    several whose instances are pooled), ``instances`` and ``link_rate`` default to the model's
    training ``record``; an unknown pattern is one TrainError line."""
    patterns = list(patterns or held_out_patterns(record))
    unknown = sorted(set(patterns) - set(flowtraffic.PATTERNS))
    if unknown:
        raise train_flows.TrainError(f"unknown pattern(s) {', '.join(unknown)} "
                                     f"(known: {', '.join(sorted(flowtraffic.PATTERNS))})")
    seeds = [record.get("seed", 0)] if seed is None else [seed] if isinstance(seed, int) else list(seed)
    instances = record.get("instances", train_flows.DEFAULT_INSTANCES) if instances is None else instances
    link_rate = record.get("link_rate_Bps", flows.DEFAULT_LINK_RATE) if link_rate is None else link_rate
    return patterns, seeds, instances, link_rate


def simulated(model, interval, patterns=None, seed=None, instances=None, link_rate=None, label_seconds=None,
              trace_dir=train_flows.TRACE_DIR):
    """{pattern: {split, learned, threshold}} and "all held-out" of ``model`` and the threshold on
    simulated runs polled every ``interval`` s (`simulation`'s settings); the label's heavy run lasts
    ``label_seconds`` (default: one interval)."""
    patterns, seeds, instances, link_rate = simulation(trained(model), patterns, seed, instances, link_rate)
    length = flowtraffic.HEAVY_INTERVALS if label_seconds is None else label_seconds / interval
    data = {p: [] for p in patterns}
    for s in seeds:    # several seeds: their instances pooled per pattern
        for p, runs in train_flows.dataset(patterns, instances, s, link_rate, interval, trace_dir,
                                           heavy_intervals=length).items():
            data[p] += runs
    return train_flows.pattern_report(*classifiers(model, link_rate, interval), data, patterns)


def recorded(model, folders, patterns=counterlogs.TEST_PATTERNS):
    """The same report on the counter logs in ``folders`` (one link rate and interval, the logs';
    labels from the counters, `counterlogs.dataset`); "all held-out": ``patterns`` among them."""
    try:
        data, rate, interval = counterlogs.dataset(folders)
    except flows.CounterLogError as exc:
        raise train_flows.TrainError(str(exc)) from None
    held = [p for p in patterns if p in data]
    return train_flows.pattern_report(*classifiers(model, rate, interval), data, held)


def _seeds(text):
    try:
        return [int(t) for t in text.split(",") if t.strip()] or None
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a seed or comma-separated seeds: {text!r}") from None


def add_parser(sub, positive, count):
    """The ``score-flows`` subcommand of sdnmpi-sim."""
    s = sub.add_parser("score-flows", help="score a learned elephant-flow model without training")
    s.add_argument("--model", default=flows.DEFAULT_MODEL, help="weights file (default: the shipped one)")
    s.add_argument("--interval", type=positive, default=None,
                   help="poll interval, s (default: the model's training interval)")
    s.add_argument("--patterns", help="comma-separated simulated patterns (default: the model's held-out ones)")
    s.add_argument("--seed", type=_seeds, help="a seed, or comma-separated seeds whose instances are pooled "
                   "(default: the model's training seed)")
    s.add_argument("--instances", type=count, help="runs per pattern (default: the model's training's)")
    s.add_argument("--label-seconds", type=positive,
                   help="the label's heavy run lasts this long (default: one polling interval)")
    s.add_argument("--trace-dir", default=train_flows.TRACE_DIR, help=f"folder holding {flowtraffic.CG_TRACE}")
    s.add_argument("--counter-logs", metavar="DIR", nargs="+",
                   help="score the counter logs in DIR ... instead (their interval and link rate; labels from the "
                        "counters; --interval, --patterns, --seed, --instances, --label-seconds do not apply)")
    s.add_argument("--span", type=positive,
                   help="sliding windows: the classifiers judge windows of SPAN s (a whole multiple of --interval) "
                        "ending at every poll; simulated instances drawn at SPAN s, read every --interval s "
                        "(docs/flows.md, \"Sliding windows\")")
    s.add_argument("--report", metavar="JSON", help="also write the report as JSON")
    return s


def run(args):
    """Runs ``sdnmpi-sim score-flows``; prints the per-pattern table (delay median and max, polls)."""
    if args.span:
        return run_span(args)
    try:
        if args.counter_logs:
            report = recorded(args.model, args.counter_logs)
        else:
            interval = args.interval or trained(args.model).get("interval_s", flows.DEFAULT_INTERVAL)
            patterns = args.patterns and [p.strip() for p in args.patterns.split(",") if p.strip()]
            report = simulated(args.model, interval, patterns, args.seed, args.instances,
                               label_seconds=args.label_seconds, trace_dir=args.trace_dir)
    except flows.ModelError as exc:
        raise train_flows.TrainError(str(exc)) from None
    print(train_flows.table(report, delay="max"))
    write_report(args.report, {"model": args.model, "patterns": report})


def write_report(path, doc):
    """--report: ``doc`` as JSON to ``path`` (nothing without one); a failed write is one TrainError line."""
    if not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    except OSError as exc:
        raise train_flows.TrainError(f"cannot write {path}: {exc.strerror}") from None


def run_span(args):
    """``score-flows --span``: `slidescore`'s tables (and --report's JSON)."""
    try:
        if args.counter_logs:
            out, interval, polls = slidescore.recorded(args.model, args.counter_logs, args.span)
            text = (f"counter logs at {interval:g} s polls, windows of {args.span:g} s ({polls} polls):\n\n"
                    + slidescore.table(out["sliding"]) + f"\n\nthe same logs read every {args.span:g} s, "
                    "both phases:\n\n" + slidescore.table(out["phases"]))
        else:
            record = trained(args.model)
            interval = args.interval or record.get("interval_s", flows.DEFAULT_INTERVAL)
            patterns, seeds, instances, link_rate = simulation(
                record, args.patterns and [p.strip() for p in args.patterns.split(",") if p.strip()],
                args.seed, args.instances)
            out = slidescore.simulated(args.model, interval, args.span, patterns, seeds, instances, link_rate,
                                       args.trace_dir, args.label_seconds)
            text = (f"simulated, polls every {interval:g} s, windows of {args.span:g} s, seeds "
                    f"{','.join(map(str, seeds))}, {instances} instances a pattern:\n\n" + slidescore.table(out))
    except (flows.ModelError, flows.CounterLogError, ValueError) as exc:
        raise train_flows.TrainError(str(exc).splitlines()[0]) from None
    print(text)
    write_report(args.report, {"model": args.model, "span_s": args.span, "patterns": out})
