#!/usr/bin/env python3
"""Cross-pair inputs for the learned classifier, and the counter label examined (issue 16, halo3d
within 2 polls; docs/flows-mininet.md). Offline, no lock (seconds of CPU per variant: run it niced).

    .venv/bin/python bench/flowdetect_context.py [--only NAME ...]   # inputs: one row per variant
    .venv/bin/python bench/flowdetect_context.py --labels           # the counter label's rules
    .venv/bin/python bench/flowdetect_context.py --only none --counter-labelled
    .venv/bin/python bench/flowdetect_context.py --misses           # the shipped model's late elephants

**Inputs.** The controller reads every counted pair of a job in one poll, so a pair's features may
use the others'. Each variant adds inputs to version 5's 21 (`flows.host_features`), from the
pair's reverse (B -> A), the job's busiest pair and the pair's hosts' other pairs in the same
interval (`context`), and is trained and judged like the shipped model: the same simulated runs
and Mininet logs, every training pattern weighing the same, the cutoff by
`train_flows.choose_cutoff`'s leave-one-training-pattern-out rule, halo3d never trained on. Rows
as bench/flowdetect_nonlinear.py's, at the rule's cutoff and at the shipped 0.6. "none" is version
5's inputs, "line share" version 6's, "line aged" version 7's (the shipped model's, `SHIPPED`).

**Labels.** ``--labels``: rules that mark an elephant on counters (`flows.counterlog.label`: one
whole interval at >= 10 % of the link; or two consecutive ones; or two whose mean is), each
compared with the simulator's exact label on the simulated runs' counters (pairs the counter rule
alone calls elephants / the exact label alone), and the threshold's and the shipped model's
figures on every Mininet log under each rule. ``--counter-labelled`` trains and judges with the
simulated runs labelled by the counter label too (one rule for both sources). ``--misses``: per
pattern of every Mininet log, the shipped model's late elephants (not flagged within 2 polls): the
median rate of their busy stretch, their heavy intervals, and within 2 polls for the elephants
whose busy stretch runs at >= 10 % of the link (median) and for those under it.
"""
import argparse
import contextlib
import glob
import os
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)
import flowdetect_nonlinear as nl

from sdnmpi import flows
from sdnmpi.flows import classify, counterlog
from sdnmpi.simulator import counterlogs, train_flows

VERSION = 90            # the variants' inputs, registered while one is judged (`inputs`)
SIDES = 10              # context columns
L = classify._log_share


def context(counts, pairs, link_bytes):
    """pairs x intervals x `SIDES` of what a poll shows beside the pair: 0, 1 its endpoint totals
    (`flows.endpoint_totals`); 2 its reverse pair's bytes (0 when not counted); 3 the busiest
    pair's bytes; 4, 5 the busy pairs (>= `classify.BUSY` of the link) of its source and of its
    destination, itself included; 6, 7 the busiest pair's bytes among its source's and its
    destination's pairs; 8, 9 the busiest pair's bytes among the other pairs of its source, of its
    destination, that are busy and whose busy stretch began in the same interval as its own (a
    halo's neighbours start together)."""
    counts = np.asarray(counts, dtype=float)
    out = np.zeros(counts.shape + (SIDES,))
    out[..., :2] = flows.endpoint_totals(counts, pairs)
    row = {p: i for i, p in enumerate(pairs)}
    for i, (src, dst) in enumerate(pairs):
        if (dst, src) in row:
            out[i, :, 2] = counts[row[(dst, src)]]
    out[..., 3] = counts.max(axis=0)
    busy = counts >= classify.BUSY * link_bytes
    began = np.arange(counts.shape[1])[None, :] - stretch_ages(counts / link_bytes)
    for side, n_col, max_col in ((0, 4, 6), (1, 5, 7)):
        hosts = [p[side] for p in pairs]
        for h in set(hosts):
            rows = [i for i, x in enumerate(hosts) if x == h]
            out[rows, :, n_col] = busy[rows].sum(axis=0)
            out[rows, :, max_col] = counts[rows].max(axis=0)
            for k, i in enumerate(rows):
                others = [j for j in rows if j != i]
                if others:
                    same = busy[others] & busy[i] & (began[others] == began[i])
                    out[i, :, max_col + 2] = np.where(same, counts[others], 0.0).max(axis=0)
    return out


def _reverse(r0, ctx, link_bytes):
    rev = np.clip(ctx[..., 2] / link_bytes, 0.0, 1.0)
    return [L(rev), L((r0 + rev) / 2)]


def _job_max(r0, ctx, link_bytes):
    rel = np.divide(r0 * link_bytes, ctx[..., 3], out=np.zeros_like(r0), where=ctx[..., 3] > 0)
    return [rel, rel * L(r0)]


def _degree(r0, ctx, link_bytes):
    inv = [np.divide(1.0, ctx[..., k], out=np.zeros_like(r0), where=ctx[..., k] > 0) for k in (4, 5)]
    return inv + [np.minimum(*inv) * L(r0)]


def _siblings(r0, ctx, link_bytes):
    on = (r0 > 0).astype(float)
    return [L(np.clip(ctx[..., k] / link_bytes, 0.0, 1.0)) * on for k in (6, 7)]


def stretch_ages(r0):
    """pairs x intervals: intervals since the pair's current busy stretch (consecutive intervals
    at >= `classify.BUSY` of the link) began, 0 in its first interval and where idle."""
    busy = r0 >= classify.BUSY
    out = np.zeros(r0.shape, dtype=int)
    for t in range(1, r0.shape[1]):
        out[:, t] = np.where(busy[:, t] & busy[:, t - 1], out[:, t - 1] + 1, 0)
    return out


def _stretch(r0, ctx, link_bytes):
    b = stretch_ages(r0)
    before = np.concatenate([np.zeros((len(r0), 1)), r0[:, :-1]], axis=1)
    return [(b == 1).astype(float), (b == 2).astype(float), L(r0) * (b == 1), L(r0) * (b == 2),
            L((r0 + before) / 2) * (b == 2)]


def _co_started(r0, ctx, link_bytes):
    on = (r0 > 0).astype(float)
    return [L(np.clip(ctx[..., k] / link_bytes, 0.0, 1.0)) * on for k in (8, 9)]


def _line(r0, ctx, link_bytes):
    """Which side of the label's line (10 % of the link) the latest interval falls, after a busy
    one (the label's own test, `flows.counterlog.label`), and that times the pair's share s of its
    endpoints' bytes: a step one logistic unit cannot build from L(r0)."""
    before = np.concatenate([np.zeros((len(r0), 1)), r0[:, :-1]], axis=1)
    step = ((r0 >= 0.1) & (before >= classify.BUSY)).astype(float)
    share = np.divide((r0 * link_bytes)[..., None], ctx[..., :2], out=np.zeros(ctx.shape[:2] + (2,)),
                      where=ctx[..., :2] > 0).min(axis=2)
    return [step, step * share]


def _line_share(r0, ctx, link_bytes):
    """`_line`'s step times the share only (no bare step)."""
    return _line(r0, ctx, link_bytes)[1:]


def _line_aged(r0, ctx, link_bytes):
    """`_line_share` split by the pair's age (version 5's, from its first busy interval in the
    history): young (age <= 2) and old (age >= 3), so that a rise inside a long stretch can weigh
    otherwise than a flow's first whole interval."""
    step_s = _line_share(r0, ctx, link_bytes)[0]
    age = classify._ages(classify.scaled_windows(r0, 32, 1.0), classify.BUSY)
    return [step_s * (age <= 2), step_s * (age >= 3)]


# name -> inputs added to version 5's (each a pairs x intervals array); "a+b" adds both
EXTRAS = {
    "reverse": _reverse,        # L(reverse's bytes), L(mean of the pair's and its reverse's)
    "job max": _job_max,        # bytes / the job's busiest pair's, and x L(r0)
    "degree": _degree,          # 1 / busy pairs of the source, of the destination, min of both x L(r0)
    "siblings": _siblings,      # L(busiest pair of the source), L(of the destination)
    "co-started": _co_started,  # L(busiest other pair of the source that began with it), of the destination
    "line": _line,              # r0 >= 10 % after a busy interval (0/1), and x s
    "line share": _line_share,  # that step x s only
    "line aged": _line_aged,    # that, young and old apart
    "stretch": _stretch,        # current busy stretch 1 or 2 intervals old (one-hot), L(r0) at each, L(mean r0, r1) at 2
}
UNCLIPPED = ("line", "line share", "line aged")    # variants given the pair's bytes / the link's unclipped
SHIPPED = "line aged"   # the variant whose inputs are the shipped model's (version 7: `classify.aged_features`)
VERSION6 = "line share"  # version 6's (`classify.line_features`)
VARIANTS = ("none", "reverse", "job max", "degree", "siblings", "reverse+job max", "job max+degree",
            "reverse+degree", "siblings+degree", "reverse+job max+degree", "stretch",
            "stretch+job max", "stretch+reverse+job max+degree", "co-started", "co-started+degree",
            "co-started+reverse", "line", "line+degree", "line+reverse",
            "line share", "line share+stretch", "line share+reverse", "line aged")


def extra_inputs(name, counts, ctx, link_bytes):
    """The variant's added inputs, pairs x intervals x k (k = 0 for "none")."""
    raw = np.asarray(counts, dtype=float) / link_bytes
    r0 = np.clip(raw, 0.0, 1.0)
    # the line's share: the pair's bytes over its endpoints', unclipped (as `flows.line_features`)
    cols = [] if name == "none" else [c for part in name.split("+")
                                      for c in EXTRAS[part](raw if part in UNCLIPPED else r0, ctx, link_bytes)]
    return np.stack(cols, axis=2) if cols else np.zeros(r0.shape + (0,))


@contextlib.contextmanager
def inputs(name):
    """While inside: model version `VERSION` = version 5's inputs + the variant ``name``'s, the
    one `train_flows` trains and scores (its runs' "totals" become their `context`); restored on
    exit."""
    n_extra = extra_inputs(name, np.zeros((1, 1)), np.zeros((1, 1, SIDES)), 1.0).shape[2]

    def features(counts, history, recent, link_bytes, ctx):
        base = classify.host_features(counts, history, recent, link_bytes, ctx[..., :2])
        return np.concatenate([base, extra_inputs(name, counts, ctx, link_bytes)], axis=2)

    cache = {}

    def totals(run):
        if id(run.counts) not in cache:
            cache[id(run.counts)] = (run.counts, context(run.counts, run.pairs, nl.LINK * nl.INTERVAL))
        return cache[id(run.counts)][1]

    saved = (flows.VERSION, classify.NEEDS_TOTALS, train_flows.totals)
    classify.FEATURES[VERSION] = (features, classify.N_EARLY + classify.N_HOST + n_extra)
    classify.AGE_FLOOR[VERSION] = classify.BUSY
    classify.NEEDS_TOTALS = saved[1] + (VERSION,)
    flows.VERSION, train_flows.totals = VERSION, totals
    try:
        yield
    finally:
        flows.VERSION, classify.NEEDS_TOTALS, train_flows.totals = saved
        del classify.FEATURES[VERSION], classify.AGE_FLOOR[VERSION]


def evaluate(name, data, every, train, held, cutoffs=train_flows.CUTOFFS):
    """{cutoff: row} at the rule's cutoff and 0.6, and the rule's cutoff, of the variant ``name``."""
    w, r, link = train_flows.DEFAULT_WINDOW, train_flows.DEFAULT_RECENT, nl.LINK * nl.INTERVAL
    with inputs(name):
        rule, cv = train_flows.choose_cutoff(data, train, nl.LINK, nl.INTERVAL, w, r, 0, cutoffs=cutoffs)
        weights, bias = train_flows.fit([data[p] for p in train], w, r, link, 0)
        rows = {c: nl.row(train_flows._learned(weights, bias, nl.LINK, nl.INTERVAL, c, w, r), cv[c], data, every, held)
                for c in sorted({rule, 0.6})}
    return rows, rule


def label_two(counts, link_bytes, fraction=0.1):
    """Elephant: two consecutive whole intervals at >= ``fraction`` of the link, busy around them."""
    counts = np.asarray(counts, dtype=float)
    busy, hot = counts >= fraction / 10 * link_bytes, counts >= fraction * link_bytes
    heavy = np.zeros_like(busy)
    heavy[:, 1:-2] = hot[:, 1:-2] & hot[:, 2:-1] & busy[:, :-3] & busy[:, 3:]
    return counterlog.heavy_label(heavy, busy)


def label_mean_two(counts, link_bytes, fraction=0.1):
    """Elephant: two consecutive busy whole intervals whose mean is >= ``fraction``, busy around them."""
    counts = np.asarray(counts, dtype=float)
    busy = counts >= fraction / 10 * link_bytes
    mean = (counts[:, 1:-2] + counts[:, 2:-1]) / 2
    heavy = np.zeros_like(busy)
    heavy[:, 1:-2] = (mean >= fraction * link_bytes) & busy[:, 1:-2] & busy[:, 2:-1] & busy[:, :-3] & busy[:, 3:]
    return counterlog.heavy_label(heavy, busy)


RULES = {"one whole interval (the label)": counterlog.label, "two consecutive": label_two,
         "mean of two consecutive": label_mean_two}


def _stretch_around(x, start):
    """(first, last) interval of the busy stretch (>= `classify.BUSY`) holding ``start``."""
    busy = x >= classify.BUSY
    a = e = start
    while a > 0 and busy[a - 1]:
        a -= 1
    while e + 1 < len(x) and busy[e + 1]:
        e += 1
    return a, e


def misses(runs, classifier, link_bytes):
    """{"late"|"on time": [(busy stretch median, heavy intervals, two consecutive heavy ones), ...]}
    of the elephants of ``runs`` (scaled to ``link_bytes``), late = not flagged within 2 polls."""
    out = {"late": [], "on time": []}
    for run in runs:
        first = flows.first_flags(classifier.flags(run.counts, train_flows.totals(run)))
        x = run.counts / link_bytes
        busy, hot = x >= classify.BUSY, x >= 0.1
        for i in np.nonzero(run.labels)[0]:
            a, e = _stretch_around(x[i], run.starts[i])
            heavy = int((hot[i, 1:-1] & busy[i, :-2] & busy[i, 2:]).sum())
            out["on time" if 0 <= first[i] <= run.starts[i] + 1 else "late"].append(
                (float(np.median(x[i, a:e + 1])), heavy, bool((hot[i, :-1] & hot[i, 1:]).any())))
    return out


def misses_report(dirs):
    """Prints the ``--misses`` table."""
    data, rate, interval = counterlogs.dataset(dirs)
    v5 = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=interval)
    print("| pattern | elephants | version 5 late | busy stretch median % of link, late: p25 / p50 / p75 "
          "| on time | heavy intervals, late: median | late with two consecutive heavy | within 2, stretch median "
          ">= 10 % | within 2, < 10 % |")
    print("|" + "---|" * 9)
    for p, runs in sorted(data.items()):
        m = misses(runs, v5, rate * interval)
        if not m["late"] + m["on time"]:
            continue
        late, ok = np.array(m["late"] or [(np.nan, 0, False)]), np.array(m["on time"] or [(np.nan, 0, False)])
        q = " / ".join(f"{v:.1f}" for v in np.percentile(100 * late[:, 0], [25, 50, 75])) if m["late"] else "-"
        clear = [(r[0] >= 0.1, k == "on time") for k in m for r in m[k]]

        def within(c):
            hit = [t for cl, t in clear if cl == c]
            return f"{np.mean(hit):.3f} of {len(hit)}" if hit else "-"
        print(f"| {p} | {len(clear)} | {len(m['late'])} | {q} "
              f"| {np.nanmedian(100 * ok[:, 0]):.1f} | {np.median(late[:, 1]) if m['late'] else '-'} "
              f"| {int(late[:, 2].sum()) if m['late'] else 0} | {within(True)} | {within(False)} |")


def counter_labelled(data, link_bytes):
    """``data`` with its simulated runs labelled by the counter label (`flows.counterlog.label` on
    their counters) instead of the simulator's exact one, as the Mininet logs are."""
    out = {}
    for p, runs in data.items():
        if p.startswith(counterlogs.PREFIX):
            out[p] = runs
        else:
            out[p] = [r._replace(labels=lab, starts=start)
                      for r in runs for lab, start in [counterlog.label(r.counts, link_bytes)]]
    return out


def labels_report(sim, dirs):
    """Prints the ``--labels`` tables."""
    link = nl.LINK * nl.INTERVAL
    patterns = sorted(sim)
    print("| counter rule | " + " | ".join(patterns) + " |")
    print("|" + "---|" * (len(patterns) + 1))
    for name, rule in RULES.items():
        cells = []
        for p in patterns:
            only_counter = only_exact = 0
            for run in sim[p]:
                got = rule(run.counts, link, 0.1)[0]
                only_counter += int((got & ~run.labels).sum())
                only_exact += int((~got & run.labels).sum())
            cells.append(f"{only_counter} / {only_exact}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    f = train_flows._fmt
    print("| counter rule | pattern | runs | elephants | threshold within 2 | version 5 within 2 "
          "| threshold accuracy / precision | version 5 accuracy / precision |")
    print("|" + "---|" * 8)
    for name, rule in RULES.items():
        saved, counterlog.label = counterlog.label, rule
        try:
            data, rate, interval = counterlogs.dataset(dirs)
        finally:
            counterlog.label = saved
        v5 = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=interval)
        th = flows.ThresholdClassifier(link_rate=rate, interval=interval)
        for p, runs in sorted(data.items()):
            a, b = train_flows.score(th, runs), train_flows.score(v5, runs)
            print(f"| {name} | {p} | {len(runs)} | {b['elephants']} | {f(a['within_2'])} | {f(b['within_2'])} "
                  f"| {f(a['accuracy'])} / {f(a['precision'])} | {f(b['accuracy'])} / {f(b['precision'])} |")


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=VARIANTS, help="this variant only (repeatable)")
    p.add_argument("--labels", action="store_true", help="compare the counter label's rules instead")
    p.add_argument("--misses", action="store_true", help="the shipped model's late elephants on every log")
    p.add_argument("--counter-labelled", action="store_true",
                   help="label the simulated runs by the counter label too (training and held-out figures)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        logs = counterlogs.folders_at(sorted(glob.glob(os.path.join(nl.RESULTS, "flowdetect-*", "counters"))),
                                      *counterlogs.RECORDED_RATE)
        if args.misses:
            misses_report(logs)
            return 0
        data, every = nl.load(False)
    except flows.CounterLogError as exc:
        print(f"flowdetect_context: {exc}", file=sys.stderr)
        return 2
    if args.labels:
        sim = {k: v for k, v in data.items() if not k.startswith(counterlogs.PREFIX)}
        labels_report(sim, logs)
        return 0
    if args.counter_labelled:
        data = counter_labelled(data, nl.LINK * nl.INTERVAL)
    train, held = nl.split(data)
    nl.print_header("added inputs")
    for name in args.only or VARIANTS:
        rows, rule = evaluate(name, data, every, train, held)
        for c, r in rows.items():
            nl.print_row(f"{name}{' (rule)' if c == rule else ''}", c, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
