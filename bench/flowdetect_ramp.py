"""How fast rerouted pairs take the link their new route frees (issue 16; docs/flows.md, "The
senders' congestion control").

For every pair a detection run flagged, its share of the host link (bytes counted in the interval
/ what the link carries in one polling interval) in the intervals around its flag, from the run's
counter log; printed per run folder as the median over pairs and runs of each interval after the
flag, and the intervals until a pair first carries >= --full of the link. A pair the flag moved off
a shared link should reach the full link at the next interval; a sender's congestion control that
probes for bandwidth slowly (BBR's 25 % steps) shows as several intervals between.

    .venv/bin/python bench/flowdetect_ramp.py bench/results/flowdetect-A bench/results/flowdetect-B
        [--patterns permutation] [--modes learned,threshold] [--after 5] [--full 0.9]
"""
import argparse
import glob
import os
import statistics
import sys

from sdnmpi.flows import counterlog


def pair_ramps(lines, after):
    """[(interval shares from the flag's poll on, up to ``after`` more)] of the flagged pairs of
    one counter log; the flag's own interval first."""
    log = counterlog.read_log(lines, with_packets=False)
    link = log.header["link_rate_Bps"] * log.header["interval_s"]
    row = {pair: i for i, pair in enumerate(log.pairs)}
    out = []
    for pair, t in sorted(counterlog.first_flags(log.flags).items()):
        if pair in row:
            out.append([float(v) / link for v in log.counts[row[pair], t:t + after + 1]])
    return out


def to_full(ramp, full):
    """Intervals after the flag's until the pair carries >= ``full`` of the link (None: never)."""
    return next((k for k, share in enumerate(ramp) if share >= full), None)


def summary(ramps, after, full):
    """{'pairs', 'median_share': [per interval after the flag], 'median_to_full', 'never'}."""
    cols = [[r[k] for r in ramps if len(r) > k] for k in range(after + 1)]
    reach = [to_full(r, full) for r in ramps]
    reached = [k for k in reach if k is not None]
    return {"pairs": len(ramps),
            "median_share": [round(statistics.median(c), 3) if c else None for c in cols],
            "median_to_full": statistics.median(reached) if reached else None,
            "never": reach.count(None)}


def run_logs(folder, patterns, modes):
    """Counter logs of ``folder`` (counters/PATTERN-MODE-REP.jsonl.gz) of the patterns and modes."""
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "counters", "*.jsonl.gz"))):
        pattern, mode, _rep = os.path.basename(path)[:-len(".jsonl.gz")].rsplit("-", 2)
        if (not patterns or pattern in patterns) and (not modes or mode in modes):
            out.append(path)
    return out


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("folders", nargs="+", help="bench_flowdetect results folders")
    p.add_argument("--patterns", default="permutation", help="comma-separated ('' for all)")
    p.add_argument("--modes", default="learned,threshold", help="comma-separated ('' for all)")
    p.add_argument("--after", type=int, default=5, help="intervals after the flag's")
    p.add_argument("--full", type=float, default=0.9, help="share of the link that counts as full")
    return p


def main(argv=None):
    a = build_parser().parse_args(argv)
    patterns = {x for x in a.patterns.split(",") if x}
    modes = {x for x in a.modes.split(",") if x}
    for folder in a.folders:
        ramps = []
        try:
            for path in run_logs(folder, patterns, modes):
                ramps += counterlog.from_file(path, lambda lines: pair_ramps(lines, a.after))
        except counterlog.CounterLogError as exc:
            print(f"flowdetect_ramp: {exc}", file=sys.stderr)
            return 2
        if not ramps:
            print(f"{folder}: no flagged pair in the chosen runs", file=sys.stderr)
            continue
        s = summary(ramps, a.after, a.full)
        shares = " ".join("-" if v is None else f"{v:.2f}" for v in s["median_share"])
        print(f"{os.path.basename(folder.rstrip('/'))}: {s['pairs']} flagged pairs; median share of the link "
              f"from the flag's interval on: {shares}; intervals to >= {a.full:g}: median "
              f"{s['median_to_full']}, never {s['never']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
