"""Scoring sliding windows offline (``sdnmpi-sim score-flows --span``; docs/flows.md "Sliding
windows"): a weights file and the threshold judged at polls of ``interval`` s over windows of
``span`` s ending at every poll (`flows.sliding.Sliding`), against the same classifiers polled at
``span`` s.

Simulated (`dataset`): each instance is the one `train_flows.dataset` draws at ``span`` s (the same
seeds, sends, time model and labels as the model's "Results" at 1 s; its traffic's units, the
lead-in, jitters and pauses, in ``span``-s intervals), its counters read every ``interval`` s
(`flowtraffic.counters`, with its poll jitter and N(1, 0.1) rate noise per reading, drawn from a
stream of its own) and its elephants' starts dated in those polls. At ``interval`` == ``span`` the
runs are `train_flows.dataset`'s own, so the 1-s rows are "Results"' figures.

Recorded (`log_runs`): counter logs polled at ``interval``; a pair's label over windows
(`window_label`: a whole window of ``span`` s at >= 10 % of the link with busy polls on both sides;
`counterlog.label` at one poll a window), and, for the polls of ``span`` s those logs would have
given, each phase's series of windows (`phase_runs`: what a ``span``-s poller would have read).

`extras` adds to `train_flows.score` the delays in seconds and "within 2 spans" (an elephant
flagged by the poll that ends the second ``span`` after the start of the poll interval its heavy
run began in: at ``interval`` == ``span`` the issue's "within 2 polls")."""
import numpy as np

from .. import flows
from ..flows import counterlog
from ..flows.sliding import Sliding, sliding_flags, window_polls, window_sums
from ..primitives import fattree
from . import counterlogs, flowtraffic, train_flows

POLL_STREAM = 0x5A1DE      # the counters at another interval: their own generator (seed, this)


def dataset(patterns, instances, seed, link_rate, interval, span, trace_dir, label_seconds=None):
    """({pattern: [flowtraffic.Run, ...]}, {pattern: [began per pair, s]}): see the module's doc;
    ``label_seconds`` (default ``span``): the label's heavy run."""
    graph = fattree.kary(4)
    heavy = (label_seconds or span) / span
    data, began = {}, {}
    for p in patterns:
        for i in range(instances):
            s = train_flows.instance_seed(seed, p, i)
            sim = flowtraffic.simulated(p, s, link_rate, span, trace_dir, graph, heavy)
            every = sorted({(x.src, x.dst) for x in sim.sends})
            rows = [every.index(pair) for pair in sim.run.pairs]
            cum = sim.cum[rows]
            start_s = flowtraffic.heavy_starts(sim.times, cum, link_rate, span, length=heavy)
            run = sim.run
            if interval != span:
                counts = flowtraffic.counters(sim.times, cum, interval, np.random.default_rng([s, POLL_STREAM]))
                starts = np.where(run.labels, np.floor(np.nan_to_num(start_s) / interval), -1).astype(int)
                run = run._replace(counts=counts, starts=starts)
            data.setdefault(p, []).append(run)
            began.setdefault(p, []).append(start_s)
    return data, began


class Phase(Sliding):
    """A poller of the span at one phase (`sliding_flags`' ``phases``; no still rule): windows ending at
    polls ``phase``, ``phase`` + ``polls``, ... only."""

    def __init__(self, classifier, polls, phase):
        super().__init__(classifier, polls)
        self.phase = phase

    def flags(self, counts, totals=None):
        return sliding_flags(self.classifier, counts, self.polls, totals if self.needs_totals else None,
                             phases=(self.phase,), still=False)


def extras(classifier, runs, interval, polls, began=None):
    """Beside `train_flows.score`: ``within_2_spans`` (share of all elephants flagged within 2
    ``polls`` x 2 polls of their start's poll interval), and the caught elephants' delays in s:
    ``delay_s`` (polls x ``interval``, from the start of their start's poll interval) and, with
    ``began`` (per run, per pair: the heavy run's start, s), ``delay_exact_s`` (from that start to
    the flagging poll's end, (column + 1) x ``interval``): median, p95, max."""
    polls_late, exact = [], []
    for k, run in enumerate(runs):
        first = flows.first_flags(classifier.flags(run.counts, train_flows.totals(run)))
        late = np.where(first >= 0, np.maximum(first - run.starts + 1, 1), -1)[run.labels]
        polls_late.append(late)
        if began is not None:
            hit = run.labels & (first >= 0)
            exact.append((first[hit] + 1) * interval - np.asarray(began[k])[hit])
    d = np.concatenate(polls_late) if polls_late else np.zeros(0)
    caught = d[d >= 0]
    timely = int(((d >= 1) & (d <= 2 * polls)).sum())
    out = {"timely_spans": timely, "within_2_spans": timely / len(d) if len(d) else None,
           "delay_s": _spread(caught * interval)}
    if began is not None:
        out["delay_exact_s"] = _spread(np.concatenate(exact) if exact else np.zeros(0))
    return out


def _spread(values):
    if not len(values):
        return None
    return {"median": float(np.median(values)), "p95": float(np.percentile(values, 95)), "max": float(np.max(values))}


def classifiers(model, link_rate, interval, span, phases=False):
    """({name: classifier}, polls a window): learned (``model``) and the default threshold, at windows
    of ``span`` s sliding every ``interval`` s (`Sliding`; plain when they are equal); with ``phases``
    also learned as a poller of ``span`` s at each phase alone (`Phase`: "learned, phase k")."""
    polls = window_polls(span, interval)
    base = {"learned": flows.load_model(model, link_rate=link_rate, interval=span),
            "threshold": flows.ThresholdClassifier(link_rate=link_rate, interval=span)}
    out = {k: c if polls == 1 else Sliding(c, polls) for k, c in base.items()}
    if phases and polls > 1:
        out.update((f"learned, phase {k}", Phase(base["learned"], polls, k)) for k in range(polls))
    return out, polls


def report(clfs, data, held, interval, polls, began=None):
    """{pattern and "all held-out": {split, name: scores}} of every classifier of ``clfs``:
    `train_flows.score` with `extras` and ``timely_accuracy_spans`` ((elephants within 2 spans + mice
    never flagged) / pairs)."""
    groups = {p: (data[p], None if began is None else began[p]) for p in sorted(data)}
    groups["all held-out"] = ([r for p in held for r in data[p]],
                              None if began is None else [b for p in held for b in began[p]])
    out = {}
    for name, (runs, times) in groups.items():
        out[name] = {"split": "test" if name in held or name == "all held-out" else "train"}
        for kind, clf in clfs.items():
            s = train_flows.score(clf, runs)
            s.update(extras(clf, runs, interval, polls, times))
            s["timely_accuracy_spans"] = (s["timely_spans"] + s["tn"]) / s["pairs"] if s["pairs"] else None
            out[name][kind] = s
    return out


def simulated(model, interval, span, patterns, seeds, instances, link_rate, trace_dir, label_seconds=None):
    """`report` of ``model`` and the threshold on the simulated ``patterns`` (all held out)."""
    clfs, polls = classifiers(model, link_rate, interval, span, phases=True)
    data, began = {p: [] for p in patterns}, {p: [] for p in patterns}
    for s in seeds:
        d, b = dataset(patterns, instances, s, link_rate, interval, span, trace_dir, label_seconds)
        for p in patterns:
            data[p] += d[p]
            began[p] += b[p]
    return report(clfs, data, patterns, interval, polls, began)


def window_label(counts, link_bytes, polls, fraction=flowtraffic.HEAVY_FRACTION):
    """(labels, starts) per pair of per-poll ``counts`` (``link_bytes``: one poll's worth of the link):
    an elephant has a window of ``polls`` polls (`window_sums`) at >= ``fraction`` of the link over
    it, with a busy poll (>= ``fraction`` / 10) just before and just after the window; its start, as
    `counterlog.label` dates it: the busy poll before its first such window, else the window's first
    poll. At ``polls`` 1, `counterlog.label`."""
    counts = np.asarray(counts, dtype=float)
    busy = counts >= fraction / 10 * link_bytes
    sums = window_sums(counts, polls)
    heavy = np.zeros_like(busy)
    n = counts.shape[1]
    for t in range(polls, n - 1):        # window t - polls + 1 .. t, busy polls t - polls and t + 1
        heavy[:, t - polls + 1] = (sums[:, t] >= fraction * polls * link_bytes) & busy[:, t - polls] & busy[:, t + 1]
    return counterlog.heavy_label(heavy, busy)


def log_runs(folders, span):
    """({pattern: [Run]} of the counter logs in ``folders`` polled every interval, labelled by
    `window_label` over windows of ``span`` s; link rate B/s; interval s; polls a window)."""
    data, rate, interval = counterlogs.dataset(folders)
    polls = window_polls(span, interval)
    link_bytes = rate * interval
    out = {}
    for p, runs in data.items():
        for r in runs:
            labels, starts = window_label(r.counts, link_bytes, polls)
            out.setdefault(p, []).append(r._replace(labels=labels, starts=starts))
    return out, rate, interval, polls


def phase_runs(data, polls):
    """{pattern: [Run]}: each run of ``data`` as the ``polls`` series of windows a poller every
    ``polls`` polls would have read, one a phase (windows ending at phase, phase + polls, ...),
    labelled at that resolution (`counterlog.label` over its windows; the link bytes are the
    caller's, per window: `recorded` passes them)."""
    out = {}
    for p, runs in data.items():
        for r in runs:
            sums = window_sums(r.counts, polls)
            for phase in range(polls):
                out.setdefault(p, []).append(r._replace(counts=sums[:, phase::polls]))
    return out


def recorded(model, folders, span, patterns=counterlogs.TEST_PATTERNS):
    """{"sliding": report of the logs at their polls with windows of ``span`` s, "phases": report of
    the same logs read every ``span`` s at each phase (plain classifiers; labels by `counterlog.label`
    over those windows)}."""
    data, rate, interval, polls = log_runs(folders, span)
    held = [p for p in patterns if p in data]
    clfs, _ = classifiers(model, rate, interval, span, phases=True)
    out = {"sliding": report(clfs, data, held, interval, polls)}
    phased = phase_runs(data, polls)
    for runs in phased.values():
        for k, r in enumerate(runs):
            labels, starts = counterlog.label(r.counts, rate * span, flowtraffic.HEAVY_FRACTION)
            runs[k] = r._replace(labels=labels, starts=starts)
    plain, _ = classifiers(model, rate, span, span)
    out["phases"] = report(plain, phased, held, span, 1)
    return out, interval, polls


def _f(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def table(report, title=""):
    """A markdown table of a `report`: per pattern and classifier the pair scores, the delay median
    in polls, the elephants within 2 polls and within 2 spans, the delays in s and the timely accuracy
    by 2 spans."""
    rows = [f"| {title or 'pattern'} | classifier | pairs | elephants | accuracy | precision | recall "
            "| delay median, polls | within 2 polls | within 2 spans | delay median, s (polls) "
            "| delay from the run's start, s: median / p95 / max | timely accuracy (2 spans) |", "|" + "---|" * 13]
    for p, r in report.items():
        for c in (k for k in r if k != "split"):
            s = r[c]
            exact = s.get("delay_exact_s")
            exact = "-" if not exact else "%.2f / %.2f / %.2f" % (exact["median"], exact["p95"], exact["max"])
            rows.append(f"| {p} | {c} | {s['pairs']} | {s['elephants']} | {_f(s['accuracy'])} | {_f(s['precision'])} "
                        f"| {_f(s['recall'])} | {_f(s['delay_median'], 1)} | {_f(s['within_2'])} "
                        f"| {_f(s['within_2_spans'])} | {_f((s['delay_s'] or {}).get('median'), 2)} "
                        f"| {exact} "
                        f"| {_f(s['timely_accuracy_spans'])} |")
    return "\n".join(rows)
