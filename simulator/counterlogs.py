"""Training runs from counter logs recorded on Mininet (``--sdnmpi-flow-log``, sliced per run by
bench/bench_flowdetect.py into *.jsonl.gz; plain *.jsonl is read too): one file per run, its
header naming the pattern. Labels and starts come from the counters themselves
(`flows.counterlog.label`: a whole interval at >= 10 % of the host link), as no simulator truth
exists for a real run; pairs that sent nothing are left out. See docs/flows.md."""
import glob
import os

from .. import flows
from ..flows import counterlog
from . import flowtraffic

# the bench's patterns left out of training (its shift, alltoall and mice are trained on)
TEST_PATTERNS = ("permutation", "halo3d", "two-phases")
PREFIX = "mininet-"     # names the logs' patterns when they are trained on with simulated runs


RECORDED_RATE = (5e6, 1.0)   # link rate B/s and interval s of the bench's fabric until 2026-11-29 22:40
                             # (40/20 Mbit/s); its 5/5 Mbit/s runs since log 625000 B/s


def log_files(folder):
    """The counter logs of ``folder``, sorted (*.jsonl and *.jsonl.gz)."""
    return sorted(glob.glob(os.path.join(folder, "*.jsonl")) + glob.glob(os.path.join(folder, "*.jsonl.gz")))


def counters_folder(folder):
    """``folder``'s counters/ when it has one (a bench results folder), else ``folder``."""
    sub = os.path.join(folder, "counters")
    return sub if os.path.isdir(sub) else folder


def folders_at(folders, link_rate, interval):
    """The counter-log folders among ``folders`` whose first log was recorded at ``link_rate`` B/s
    and ``interval`` s (`dataset` reads logs of one rate only), by its header alone
    (`counterlog.read_header`). A folder without logs, or whose first log's file cannot be read
    (missing, a broken or unfinished gzip stream, not UTF-8: `counterlog.LogFileError`), is left
    out. A first log that reads but whose header is not a counter log's this code takes (not JSON,
    another format or version, no positive rate or interval) or that is empty raises
    flows.CounterLogError (one line, naming the file), as `dataset` would: leaving it out would
    drop that data from an analysis without a word."""
    out = []
    for folder in folders:
        found = log_files(folder)
        if not found:
            continue
        try:
            header = counterlog.read_header(found[0])
        except counterlog.LogFileError:
            continue
        if (header["link_rate_Bps"], header["interval_s"]) == (link_rate, interval):
            out.append(folder)
    return out


def dataset(folders):
    """({pattern: [flowtraffic.Run, ...]}, link rate B/s, interval s) of the logs in ``folders``
    (one folder or a list); raises flows.CounterLogError (one line) for a folder without logs, an
    unreadable log or logs that disagree."""
    Error = flows.CounterLogError
    paths = []
    for folder in [folders] if isinstance(folders, str) else folders:
        found = log_files(folder)
        if not found:
            raise Error(f"{folder}: no counter logs (*.jsonl, *.jsonl.gz)")
        paths += found
    data, link_rate, interval = {}, None, None
    for path in paths:
        header, pairs, counts = counterlog.from_file(path, counterlog.read)
        pattern = header.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise Error(f"{path}: the header names no pattern")
        rate, ival = float(header["link_rate_Bps"]), float(header["interval_s"])
        if link_rate is None:
            link_rate, interval = rate, ival
        elif (rate, ival) != (link_rate, interval):
            raise Error(f"{path}: link rate {rate:g} B/s, interval {ival:g} s differ from the other logs' "
                             f"{link_rate:g} B/s, {interval:g} s")
        sent = counts.sum(axis=1) > 0                # a pair that sent nothing asks for no decision
        counts, pairs = counts[sent], [p for p, s in zip(pairs, sent) if s]
        labels, starts = counterlog.label(counts, rate * ival, flowtraffic.HEAVY_FRACTION)
        data.setdefault(pattern, []).append(flowtraffic.Run(counts, labels, starts, pairs))
    return data, link_rate, interval


def rescaled(data, link_bytes, to_link_bytes, prefix=PREFIX):
    """``data`` (`dataset`'s runs, ``link_bytes`` per interval) as runs on a link carrying
    ``to_link_bytes`` per interval, patterns renamed ``prefix + pattern``: the features scale bytes
    by the link's, so a run keeps its shares of the link and its labels."""
    factor = to_link_bytes / link_bytes
    return {prefix + p: [r._replace(counts=r.counts * factor) for r in runs]
            for p, runs in data.items()}
