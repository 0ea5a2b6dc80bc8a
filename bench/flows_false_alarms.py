#!/usr/bin/env python3
"""What a classifier's false alarms (mice it flags) are on a simulated pattern, pooled over seeds:
per false alarm its instance, pair, the sends on that pair (the pattern's phase, its bytes in
link-intervals, its start), the counted series around the flag in shares of the link, the exact
(noise-free) series of the time model, its longest run at >= the label's line and its peak rate
(of its sends without the wire-ups), and whether `counterlog.label` (Mininet's label) calls its
counted series an elephant; and a count per kind (`kind`), burst length and phase. Offline, no
lock (docs/flows.md "two-phases' false alarms over 5 seeds").

    .venv/bin/python bench/flows_false_alarms.py --pattern two-phases --seeds 0,1,2,3,4 [--json OUT]
    .venv/bin/python bench/flows_false_alarms.py --counter-logs DIR [DIR ...]

The instances are `train_flows.dataset`'s (the same seeds, so the same runs as
``sdnmpi-sim score-flows --seed ...``).
"""
import argparse
import collections
import json
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)

from sdnmpi import flows
from sdnmpi.flows import counterlog
from sdnmpi.primitives import fattree
from sdnmpi.simulator import counterlogs, flowtraffic, train_flows

KINDS = ("burst under one interval, flagged on its tail (< 10 % counted)",
         "burst under one interval, flagged at >= 10 % counted", "near the line", "other")
NEAR = 0.8   # kind: a pair whose exact rate peaks at >= NEAR x the line, and never reaches it, is "near the line"
LENGTHS = (0.5, 0.8, 0.9, 1.0)   # bins of a burst's longest heavy run, intervals


def longest_heavy(times, row, link_rate, fraction=flowtraffic.HEAVY_FRACTION):
    """(longest run at >= ``fraction`` of the link, s, without a break; peak rate share; the time that
    run began, NaN without one) of one pair's cumulative bytes ``row`` at the time model's event
    ``times`` (rates are constant between)."""
    dt = np.diff(times)
    keep = dt > 0
    share = np.diff(row)[keep] / (link_rate * dt[keep])
    best = run = 0.0
    began = at = np.nan
    for heavy, d, t in zip(share >= fraction * (1 - 1e-9), dt[keep], np.asarray(times)[:-1][keep]):
        at = (t if run == 0.0 else at) if heavy else np.nan
        run = run + d if heavy else 0.0
        if run > best:
            best, began = run, at
    return best, float(share.max()) if len(share) else 0.0, began


def exact_series(times, row, interval, polls):
    """Bytes per interval of one pair at the polls k * interval (no jitter, no noise)."""
    read = np.interp(np.arange(1, polls + 1) * interval, times, row)
    return np.diff(read, prepend=0.0)


def kind(longest, peak, interval, flag_share):
    """The kind of a false alarm from its exact rates (the longest heavy run, s; the peak share)
    and the counted share of the link in the interval it was flagged at."""
    if peak < flowtraffic.HEAVY_FRACTION * (1 - 1e-9):
        return KINDS[2] if peak >= NEAR * flowtraffic.HEAVY_FRACTION else KINDS[3]
    if longest >= interval:
        return KINDS[3]
    return KINDS[0] if flag_share < flowtraffic.HEAVY_FRACTION else KINDS[1]


PHASE = 0.3   # flowtraffic: a bulk send starts 0-0.3 of an interval after a poll (LEAD_IN + _jitter) ...


def phase_bin(t):
    """Where in its polling interval (``t`` in intervals) a burst's heavy run began: in the first
    `PHASE` of it, as every bulk send of the training patterns does, or later (two-phases' second
    phase starts at any point of an interval)."""
    return f"< {PHASE}" if t % 1.0 < PHASE else f">= {PHASE}"


def length_bin(longest_intervals):
    """The bin of `LENGTHS` (its upper edge, as text) of a burst's longest heavy run."""
    lo = 0.0
    for hi in LENGTHS:
        if longest_intervals < hi:
            return f"{lo:.1f}-{hi:.1f}"
        lo = hi
    return f">= {LENGTHS[-1]:.1f}"


def phases(pattern, rng_seed, link_rate, interval, sends, n_pairs):
    """Per send of ``sends`` (`flowtraffic.pattern_sends`) its origin: wire-up, the pattern's
    (two-phases: shift, permutation) or allreduce mice."""
    gen = flowtraffic.PATTERNS[pattern]
    rng = np.random.default_rng(rng_seed)
    own = gen(rng, link_rate, interval, train_flows.TRACE_DIR) if pattern == "cg" else gen(rng, link_rate, interval)
    tags = ["wire-up"] * n_pairs
    if pattern == "two-phases":
        half = len(own) // 2
        tags += ["shift"] * half + ["permutation"] * (len(own) - half)
    else:
        tags += [pattern] * len(own)
    return tags + ["mice"] * (len(sends) - len(tags))


def false_alarms(pattern, seeds, instances, link_rate, interval, model):
    """(false alarm records, {kind: count}, {burst length bin: count}, {phase: count}, pairs, mice,
    {(start phase bin, flagged): mice whose rate ever reached the line (bursts)}) over ``seeds`` x
    ``instances`` of ``pattern``."""
    clf = flows.load_model(model, link_rate=link_rate, interval=interval)
    graph = fattree.kary(4)
    link_bytes = link_rate * interval
    out, counts, lengths, where, pairs, mice = [], collections.Counter(), collections.Counter(), \
        collections.Counter(), 0, 0
    bursts = collections.Counter()
    for seed in seeds:
        for i in range(instances):
            s = train_flows.instance_seed(seed, pattern, i)
            run, sends, times, cum = flowtraffic.simulated(pattern, s, link_rate, interval, train_flows.TRACE_DIR,
                                                           graph)
            pair_list = run.pairs
            assert len(cum) == len(pair_list), "a contended variant keeps only some of its pairs"
            tags = phases(pattern, s, link_rate, interval, sends, len(pair_list))
            # the kind is judged on the rates without the wire-ups (a few kB at full rate, before each pair's
            # first send, that would make every pair's peak the whole link for a few ms)
            bare = flowtraffic.simulate(graph, sends[len(pair_list):], link_rate)
            assert bare[0] == pair_list
            flagged = clf.flags(run.counts, train_flows.totals(run))
            first = flows.first_flags(flagged)
            pairs += len(pair_list)
            mice += int((~run.labels).sum())
            mininet, _ = counterlog.label(run.counts, link_bytes)
            hit = flagged.any(axis=1)
            for p in np.nonzero(~run.labels)[0]:     # every mouse that ran over the line for a while: a burst
                _longest, peak, began = longest_heavy(bare[1], bare[2][p], link_rate)
                if peak >= flowtraffic.HEAVY_FRACTION * (1 - 1e-9):
                    bursts[(phase_bin(began / interval), bool(hit[p]))] += 1
            for p in np.nonzero(hit & ~run.labels)[0]:
                longest, peak, _began = longest_heavy(bare[1], bare[2][p], link_rate)
                f = int(first[p])
                k = kind(longest, peak, interval, run.counts[p, f] / link_bytes)
                counts[k] += 1
                if k in KINDS[:2]:
                    lengths[length_bin(longest / interval)] += 1
                lo, hi = max(0, f - 3), min(run.counts.shape[1], f + 2)
                exact = exact_series(times, cum[p], interval, run.counts.shape[1]) / link_bytes
                on = [(t, round(x.bytes / link_bytes, 3), round(x.start / interval, 2))
                      for x, t in zip(sends, tags) if (x.src, x.dst) == pair_list[p] and t != "wire-up"]
                phase = "+".join(sorted({t for t, _b, start in on if t != "mice" and start <= f + 1})) or "mice"
                where[phase] += 1
                out.append({"seed": seed, "instance": i, "pair": list(pair_list[p]), "kind": k, "phase": phase,
                            "mininet_label": bool(mininet[p]),
                            "sends (phase, link-intervals, start)": on, "flag_poll": f,
                            "polls": [lo, hi], "counted": np.round(run.counts[p, lo:hi] / link_bytes, 3).tolist(),
                            "exact": np.round(exact[lo:hi], 3).tolist(),
                            "longest_heavy_intervals": round(longest / interval, 3), "peak_share": round(peak, 3)})
    return out, dict(counts), dict(lengths), dict(where), pairs, mice, bursts


def log_bursts(folders, model):
    """Per counter-log folder and pattern (Mininet): [folder, pattern, link Mbit/s, interval, mice,
    mice with an interval at >= the line (bursts, as the simulated false alarms are), mice flagged]."""
    rows = []
    for folder in folders:
        data, rate, interval = counterlogs.dataset([folder])
        clf = flows.load_model(model, link_rate=rate, interval=interval)
        for pattern, runs in sorted(data.items()):
            mice = burst = hit = 0
            for run in runs:
                peak = run.counts.max(axis=1) / (rate * interval)
                flagged = clf.flags(run.counts, train_flows.totals(run)).any(axis=1)
                mice += int((~run.labels).sum())
                burst += int(((peak >= flowtraffic.HEAVY_FRACTION) & ~run.labels).sum())
                hit += int((flagged & ~run.labels).sum())
            rows.append([folder, pattern, rate * 8 / 1e6, interval, mice, burst, hit])
    return rows


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pattern", default="two-phases", choices=sorted(flowtraffic.PATTERNS))
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--instances", type=int, default=train_flows.DEFAULT_INSTANCES)
    ap.add_argument("--interval", type=float, default=flows.DEFAULT_INTERVAL)
    ap.add_argument("--link-rate", type=float, default=flows.DEFAULT_LINK_RATE)
    ap.add_argument("--model", default=flows.DEFAULT_MODEL)
    ap.add_argument("--json", help="also write the records as JSON")
    ap.add_argument("--counter-logs", metavar="DIR", nargs="+",
                    help="instead: per recorded log folder and pattern, its mice, those with an interval at >= the "
                         "line, and those flagged")
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.counter_logs:
        print("| folder | pattern | link Mbit/s | interval s | mice | mice with an interval >= 10 % | mice flagged |")
        print("|" + "---|" * 7)
        for row in log_bursts(args.counter_logs, args.model):
            print("| " + " | ".join(str(v) for v in row) + " |")
        return 0
    seeds = [int(t) for t in args.seeds.split(",") if t.strip()]
    recs, counts, lengths, where, pairs, mice, bursts = false_alarms(
        args.pattern, seeds, args.instances, args.link_rate, args.interval, args.model)
    print(f"{args.pattern}, seeds {args.seeds}, {args.instances} instances each: {pairs} pairs, {mice} mice, "
          f"{len(recs)} flagged; {sum(bursts.values())} mice ran at >= the line for a while (bursts)")
    for ph in sorted({b for b, _ in bursts}):
        print(f"  bursts whose heavy run began at {ph} of an interval: {bursts[(ph, True)] + bursts[(ph, False)]}, "
              f"flagged {bursts[(ph, True)]}")
    for k in KINDS:
        print(f"  {k}: {counts.get(k, 0)}")
    print("  bursts' longest heavy run, intervals: " + ", ".join(f"{b}: {n}" for b, n in sorted(lengths.items())))
    print("  phase: " + ", ".join(f"{b}: {n}" for b, n in sorted(where.items())))
    print(f"  elephants by the Mininet label (counterlog.label on the counted series): "
          f"{sum(r['mininet_label'] for r in recs)}")
    for r in recs:
        print(f"seed {r['seed']} inst {r['instance']} pair {tuple(r['pair'])} [{r['kind']}] flag at poll "
              f"{r['flag_poll']} ({r['phase']}; Mininet label {r['mininet_label']}), longest heavy "
              f"{r['longest_heavy_intervals']} intervals, peak {r['peak_share']}")
        print(f"   sends {r['sends (phase, link-intervals, start)']}")
        print(f"   polls {r['polls'][0]}..{r['polls'][1] - 1} counted {r['counted']} exact {r['exact']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"pattern": args.pattern, "seeds": seeds, "instances": args.instances,
                       "interval": args.interval, "pairs": pairs, "mice": mice,
                       "burst_mice": [{"phase": b, "flagged": f, "mice": n} for (b, f), n in sorted(bursts.items())],
                       "kinds": counts,
                       "longest_heavy_bins": lengths, "phases": where,
                       "false_alarms": recs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
