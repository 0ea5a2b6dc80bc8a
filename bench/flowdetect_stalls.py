#!/usr/bin/env python3
"""Where a pattern's time goes, from counter logs recorded on Mininet (bench/bench_flowdetect.py's
counters/), offline: per run, the seconds in which the job moved data, the seconds it stalled
(between its first and last busy poll, polls in which all its pairs together moved under
``--stall`` of one host link), and the pairs that crawled through the stall (data segments in at
least ``--crawl-polls`` stalled polls: a pair that holds up the round's end). With the run's own
time from the folder's results.json, the spread of the runs can be split into data moved and
stall (a pattern's own pauses, as two-phases', count as stalled). With the folder's
logs/*-sockets.txt (`bench_flowdetect.py --sockets-every`), one line a file on the hosts' TCP:
slow handshakes and sockets that crawled with data to send. No lock needed.

    .venv/bin/python bench/flowdetect_stalls.py DIR [DIR ...] [--patterns alltoall] [--stall 0.5]

DIR: a results folder of bench/bench_flowdetect.py (counters/ and results.json).
"""
import argparse
import collections
import glob
import json
import os
import re
import sys

import numpy as np

import benchcore  # noqa: F401  (puts the tree on sys.path)
import ss_sockets

from sdnmpi.flows import counterlog
from sdnmpi.simulator import counterlogs

BUSY_LINKS = 1.0      # a poll in which the job moved this many host-link intervals is busy
SEGMENT = 1000        # bytes a packet: at or above, a pair's packets in an interval carry data


def run_times(folder):
    """{(pattern, mode, rep): seconds} from a results folder's results.json ({} without one)."""
    path = os.path.join(folder, "results.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        results = json.load(f).get("results") or {}
    return {(pattern, mode, run["rep"]): run["seconds"]
            for pattern, modes in results.items() for mode, runs in modes.items()
            for run in runs if "rep" in run and "seconds" in run}


def stalls(lines, stall=0.5, crawl_polls=3):
    """The header and {"moving_s", "stalled_s", "crawlers": [(src, dst, median data packets a
    stalled poll, its reverse pair's median packets or None)]} of one counter log's lines; None when
    the job never had a busy poll."""
    header, pairs, counts, packets, times, _flags = counterlog.read_log(lines)
    link = header["link_rate_Bps"]
    seconds = np.diff(times, prepend=times[0] - header["interval_s"]) if len(times) else times
    rate = counts.sum(axis=0) / (link * np.maximum(seconds, 1e-9))
    busy = np.nonzero(rate >= BUSY_LINKS)[0]
    if not len(busy):
        return header, None
    span = np.arange(busy[0], busy[-1] + 1)
    stalled = span[rate[span] < stall]
    data = (counts >= SEGMENT * np.nan_to_num(packets, nan=0.0)) & (counts >= SEGMENT)
    index = {p: i for i, p in enumerate(pairs)}
    crawlers = []
    for i in np.nonzero(data[:, stalled].sum(axis=1) >= crawl_polls)[0]:
        src, dst = pairs[i]
        own = packets[i, stalled][data[i, stalled]]
        back = index.get((dst, src))
        reverse = None if back is None else float(np.nanmedian(packets[back, stalled]))
        crawlers.append((src, dst, float(np.nanmedian(own)), reverse))
    return header, {"moving_s": float(seconds[span].sum() - seconds[stalled].sum()),
                    "stalled_s": float(seconds[stalled].sum()), "crawlers": crawlers}


SLOW_PACING = 100e3   # bit/s: a socket with unsent data paced under this crawls
SLOW_HANDSHAKE = 500  # ms: a minimum RTT over this came from a handshake that waited or was lost
SAMPLE_RE = re.compile(r"^## t=([0-9.]+) (\S+)", re.M)


def socket_samples(text):
    """[(t, host, local, peer, {field: value})] of each established socket in a
    `--sockets-every` file (``ss -tni state established`` per host under ``## t=T HOST`` lines: no
    State column; sockets listed with one, and those without -i's information, are not read): the
    congestion control ("cc"), and as numbers Send-Q, minrtt (ms), cwnd and pacing_rate (bit/s) where
    given."""
    out = []
    heads = list(SAMPLE_RE.finditer(text))
    for n, head in enumerate(heads):
        body = text[head.end():heads[n + 1].start() if n + 1 < len(heads) else len(text)]
        for sock in ss_sockets.sockets(body):
            if sock["state"] is None and sock["cc"] is not None:
                fields = {key: sock[key] for key in ("cc", "send_q", "minrtt", "cwnd", "pacing_rate") if key in sock}
                out.append((float(head.group(1)), head.group(2), sock["local"], sock["peer"], fields))
    return out


def socket_summary(text):
    """One line of a `--sockets-every` file: congestion controls seen, samples, those with a
    minimum RTT over SLOW_HANDSHAKE ms (and the highest), and the sockets that held unsent data
    while paced under SLOW_PACING bit/s (and the most samples one did)."""
    samples = socket_samples(text)
    if not samples:
        return "no socket samples"
    cc = sorted({s[4]["cc"] for s in samples})
    rtts = [s[4]["minrtt"] for s in samples if "minrtt" in s[4]]
    crawl = collections.Counter((s[1], s[2], s[3]) for s in samples
                                if s[4]["send_q"] > 0 and s[4].get("pacing_rate", SLOW_PACING) < SLOW_PACING)
    slow = sum(r > SLOW_HANDSHAKE for r in rtts)
    return (f"congestion control {', '.join(cc)}; {len(samples)} socket samples, {slow} with a minimum RTT "
            f"over {SLOW_HANDSHAKE} ms (highest {max(rtts, default=0):.0f} ms); {len(crawl)} sockets held unsent "
            f"data paced under {SLOW_PACING / 1e3:g} kbit/s, for up to {max(crawl.values(), default=0)} samples")


def rows(folders, patterns=None, stall=0.5, crawl_polls=3):
    """One dict a counter log of ``folders`` (the ``patterns`` only, if given)."""
    out = []
    for folder in folders:
        times = run_times(folder)
        for path in counterlogs.log_files(counterlogs.counters_folder(folder)):
            header, found = counterlog.from_file(path, lambda lines: stalls(lines, stall, crawl_polls))
            if found is None or (patterns and header.get("pattern") not in patterns):
                continue
            key = (header.get("pattern"), header.get("mode"), header.get("rep"))
            out.append(dict(found, folder=os.path.basename(os.path.normpath(folder)), pattern=key[0],
                            mode=key[1], rep=key[2], run_s=times.get(key)))
    return out


def report(found):
    """Markdown lines: a row a run, then per pattern and mode the medians and, over every run
    with its time, how the run's seconds follow the stalled and the moving seconds."""
    lines = ["| folder | pattern | mode | rep | run s | moving s | stalled s | crawling pairs (data packets / "
             "reverse packets a stalled poll) |", "|---|---|---|---:|---:|---:|---:|---|"]
    for r in found:
        crawl = ", ".join(f"{s} > {d} ({n:g} / {'-' if b is None else f'{b:g}'})"
                          for s, d, n, b in r["crawlers"]) or "-"
        run = "-" if r["run_s"] is None else f"{r['run_s']:.1f}"
        lines.append(f"| {r['folder']} | {r['pattern']} | {r['mode']} | {r['rep']} | {run} | "
                     f"{r['moving_s']:.1f} | {r['stalled_s']:.1f} | {crawl} |")
    groups = collections.defaultdict(list)
    for r in found:
        groups[(r["pattern"], r["mode"])].append(r)
    lines.append("")
    for (pattern, mode), rs in sorted(groups.items()):
        lines.append(f"- {pattern} {mode}: {len(rs)} runs, moving {np.median([r['moving_s'] for r in rs]):.1f} s, "
                     f"stalled {np.median([r['stalled_s'] for r in rs]):.1f} s (medians)")
    timed = [r for r in found if r["run_s"] is not None]
    if len(timed) >= 3:
        run = np.array([r["run_s"] for r in timed])
        for what in ("stalled_s", "moving_s"):
            other = np.array([r[what] for r in timed])
            corr = np.corrcoef(run, other)[0, 1] if other.std() > 0 and run.std() > 0 else float("nan")
            lines.append(f"- run seconds against {what[:-2]} seconds, {len(timed)} runs: correlation {corr:.2f}; "
                         f"{what[:-2]} spans {other.min():.1f}-{other.max():.1f} s")
    return lines


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", metavar="DIR")
    ap.add_argument("--patterns", default="", help="comma-separated patterns (default: all)")
    ap.add_argument("--stall", type=float, default=0.5,
                    help="a poll with the job's bytes under this many host-link intervals is stalled")
    ap.add_argument("--crawl-polls", type=int, default=3,
                    help="a pair with data in this many stalled polls crawled")
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    patterns = {p for p in args.patterns.split(",") if p}
    try:
        found = rows(args.folders, patterns, args.stall, args.crawl_polls)
    except counterlog.CounterLogError as exc:
        print(f"flowdetect_stalls: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report(found)))
    for folder in args.folders:
        for path in sorted(glob.glob(os.path.join(folder, "logs", "*-sockets.txt"))):
            with open(path, encoding="utf-8") as f:
                summary = socket_summary(f.read())
            print(f"- {os.path.basename(os.path.normpath(folder))} {os.path.basename(path)}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
