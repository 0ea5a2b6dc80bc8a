#!/usr/bin/env python3
"""Replays counter logs recorded with sliding windows (``--sdnmpi-flow-span``; bench_flowdetect's
modes learned-slide and threshold-slide) through today's `flows.sliding.SlidingCounters`, poll by
poll, and compares each pair's first flag with the one the controller logged: a change of the
sliding code since the run (e.g. a rule added) that flags nothing otherwise on those runs leaves
every first flag where it was. Also prints the logged flags' delays, in polls and in seconds, and
per mode the seconds from each flagged elephant's estimated onset to its flag (`onset_delays`).

    .venv/bin/python bench/flowdetect_slide.py bench/results/flowdetect-STAMP/counters [--span 1]

A log without ``window_s`` in its header is replayed at ``--span`` (default: its own interval, no
sliding); the classifier is the header's (learned: the shipped model, or ``--model``).
"""
import argparse
import statistics
import sys

from sdnmpi import flows
from sdnmpi.flows import counterlog, sliding
from sdnmpi.simulator import counterlogs


def replay(header, polls, model=flows.DEFAULT_MODEL, span=None):
    """{pair: poll index} of each pair's first flag when ``polls`` (a log's poll lines) are fed to
    today's book for the log's classifier and window."""
    interval, rate = header["interval_s"], header["link_rate_Bps"]
    span = header.get("window_s") or span or interval
    n = sliding.window_polls(span, interval)
    if header.get("classifier") == "learned":
        clf = flows.load_model(model, link_rate=rate, interval=span)
    else:
        clf = flows.ThresholdClassifier(link_rate=rate, interval=span)
    book = sliding.counters(clf, n)
    first = {}
    for t, poll in enumerate(polls):
        for pair in book.poll({(c[0], c[1]): c[3] for c in poll.get("counts", ())}):
            first.setdefault(pair, t)
    return first


def compare(path, model=flows.DEFAULT_MODEL, span=None):
    """(logged first flags, replayed first flags, logged delays in polls, poll interval s) of one log."""
    header, polls = counterlog.from_file(path, counterlog.parse)
    logged, delays = {}, []
    for t, poll in enumerate(polls):
        for src, dst, n in poll.get("flagged", ()):
            if (src, dst) not in logged:
                logged[(src, dst)] = t
                delays.append(int(n))
    return logged, replay(header, polls, model, span), delays, header["interval_s"]


def onset_delays(lines):
    """Seconds from each flagged elephant's onset to the poll that flagged it (the poll lines' "t"),
    elephants by the log's own label (`counterlog.label`). The onset is estimated inside the
    interval its heavy run can have begun in (``k``): that interval's end less the share of an
    interval the pair would have needed for its bytes there at the next interval's rate (at most a
    whole interval), so 1 s and 0.5 s polls are measured alike."""
    log = counterlog.read_log(lines, with_packets=False)
    interval = log.header["interval_s"]
    labels, starts = counterlog.label(log.counts, log.header["link_rate_Bps"] * interval)
    first = counterlog.first_flags(log.flags)
    out = []
    for i, pair in enumerate(log.pairs):
        if not labels[i] or pair not in first:
            continue
        k = int(starts[i])
        after = log.counts[i, k + 1] if k + 1 < log.counts.shape[1] else 0.0
        share = min(1.0, log.counts[i, k] / after) if after > 0 else 1.0
        out.append(float(log.times[first[pair]] - (log.times[k] - share * interval)))
    return out


def build_parser():
    p = argparse.ArgumentParser(prog="bench/flowdetect_slide.py", description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", help="counter-log folders (a results folder's counters/)")
    p.add_argument("--span", type=float, help="window, s, of logs that do not name theirs")
    p.add_argument("--model", default=flows.DEFAULT_MODEL)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    total = same = 0
    per, onsets = {}, {}
    for folder in args.folders:
        for path in counterlogs.log_files(counterlogs.counters_folder(folder)):
            logged, replayed, delays, interval = compare(path, args.model, args.span)
            moved = sorted(set(logged.items()) ^ set(replayed.items()))
            total += len(set(logged) | set(replayed))
            same += len(set(logged) | set(replayed)) - len({pair for pair, _t in moved})
            header = counterlog.read_header(path)
            key = (header.get("pattern"), header.get("mode"), interval)
            per.setdefault(key, []).extend(delays)
            onsets.setdefault(key[:2], []).extend(counterlog.from_file(path, onset_delays))
            if moved:
                print("%s: first flags differ: %s" % (path, moved[:6]))
    for (pattern, mode, interval), delays in sorted(per.items(), key=str):
        if delays:
            print("%s %s: %d flags, delay median %g polls (%.2f s), max %d (%.2f s) at %g s polls" % (
                pattern, mode, len(delays), statistics.median(delays), interval * statistics.median(delays),
                max(delays), interval * max(delays), interval))
    for (pattern, mode), secs in sorted(onsets.items(), key=str):
        if secs:
            q = sorted(secs)
            p10, p90 = q[int(0.1 * len(q))], q[min(len(q) - 1, int(0.9 * len(q)))]
            print("%s %s: %d elephants flagged, onset to flag: median %.2f s, p10-p90 %.2f-%.2f s, max %.2f s" % (
                pattern, mode, len(q), statistics.median(q), p10, p90, q[-1]))
    print("pairs whose first flag the replay puts where the controller logged it: %d of %d" % (same, total))
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
