"""Counter logs: the per-poll counters the controller read, one JSON line a poll, so that the
learned model can be trained on what a real fabric (Mininet) counted and the ACK rule checked on it
(docs/flows.md).

    {"format": "sdnmpi-flow-counters", "version": 2, "interval_s": 1.0, "link_rate_Bps": 5e6,
     "classifier": "learned", ...}                                   # first line: the header
    {"poll": 17, "t": 1764310000.25, "complete": true,
     "counts": [["10.0.0.1", "10.0.0.3", 5, 123456, 95], ...],       # src, dst, job, cumulative
                                                                     # bytes, packets (null: none)
     "flagged": [["10.0.0.1", "10.0.0.3", 2]]}                       # newly flagged: src, dst, polls

Version 2 (written now) adds each count's cumulative packets, null when the switch reported none
(it keeps none: the counter reads all ones); version 1's counts are [src, dst, job, bytes]. Both are
read alike. `CounterLog` writes it (the controller, ``--sdnmpi-flow-log``); a write error is one
warning line and the log stops, detection goes on. `read` parses a log (or a slice of one with its
header) into per-interval byte counts, pairs x polls, the way `PairCounters` differences them;
`read_packets` adds the packets per interval, counted the way the controller counts them
(`PairCounters.poll` with packets), NaN where unknown (every interval of a version 1 log); `read_log`
adds each poll's time and flags (one parse for the tools that need them too); `parse` gives the
header and the poll lines as written (the replays feed them to detection poll by poll). A line
that is not JSON or not of the format, or another version, is a `CounterLogError` naming the line.
`open_log` opens a log's file (gzip'ed or plain) and `file_lines` reads its lines (a file it cannot
read: a `LogFileError`, a `CounterLogError` naming it); `from_file` applies a reader to them, its
errors naming the file; `read_header` reads a log's header only, its errors named alike.
`label` marks the
pairs the counters show as elephants: an interval with >= ``fraction`` of the link's bytes inside
a busy stretch (>= ``fraction`` / 10 of the link in the intervals before and after it, so the pair
sent through the whole interval; less is start-up chatter such as MPI's connection set-up); their
start is the interval in which that heavy run can have begun: the busy interval just before the
first such interval (it may hold the run's partial beginning), else that interval itself.
"""
import collections
import gzip
import json
import logging
import time

import numpy as np

from .. import numeric
from .tracker import interval_count, packets_counted

LOG = logging.getLogger(__name__)

FORMAT = "sdnmpi-flow-counters"
VERSION = 2                  # written
VERSIONS = (1, 2)            # read
FIELDS = {1: "[src, dst, job, bytes]", 2: "[src, dst, job, bytes, packets]"}
Log = collections.namedtuple("Log", "header pairs counts packets times flags")     # read_log


class CounterLogError(ValueError):
    """A counter log cannot be read (one line)."""


class LogFileError(CounterLogError):
    """The file of a counter log cannot be read (missing, unreadable, a broken gzip stream, not
    UTF-8), whatever its lines hold: `file_lines`, `from_file` and `read_header` raise it."""


class CounterLog:
    """Appends one line per poll to ``path`` (header first)."""

    def __init__(self, path, **header):
        self.path = path
        self._file = None
        try:
            self._file = open(path, "a", encoding="utf-8")
            self._write({"format": FORMAT, "version": VERSION, "started": time.time(), **header})
        except OSError as exc:
            self._fail(exc)

    def _write(self, doc):
        self._file.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self._file.flush()

    def _fail(self, exc):
        LOG.warning("flow detection: counter log %s: %s; not logging counters", self.path, exc.strerror or exc)
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
        self._file = None

    @property
    def active(self):
        return self._file is not None

    def poll(self, number, readings, job_of, flagged, complete=True, packets=None):
        """One poll: ``readings`` {(src, dst): cumulative bytes}, ``packets`` {(src, dst): cumulative
        packets} of the pairs whose switch reported a packet count (others: null), ``job_of``
        {(src, dst): job id}, ``flagged`` {(src, dst): polls} of the pairs flagged now."""
        if self._file is None:
            return
        packets = packets or {}
        counts = []
        for (s, d), b in sorted(readings.items()):
            n = packets.get((s, d))
            counts.append([s, d, job_of.get((s, d)), int(b), None if n is None else int(n)])
        doc = {"poll": number, "t": round(time.time(), 3), "complete": bool(complete), "counts": counts,
               "flagged": [[s, d, int(n)] for (s, d), n in sorted(flagged.items())]}
        try:
            self._write(doc)
        except OSError as exc:
            self._fail(exc)

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


_MAX_COUNTER = 2 ** 64        # a switch's counters are 64-bit


def _bad_count(c, width):
    """True unless ``c`` is a count of ``width`` fields: names src and dst (strings), a job (an
    integer, a string or null), non-negative numbers of bytes (and packets, or null)."""
    if type(c) is not list or len(c) != width or type(c[0]) is not str or type(c[1]) is not str \
            or not (c[2] is None or type(c[2]) in (int, str)):
        return True
    return not all(numeric.within(n, 0, _MAX_COUNTER) or (n is None and i == 4) for i, n in enumerate(c[3:], 3))


def _bad_flag(f):
    """True unless ``f`` is a flag [src, dst, polls]: two names and a whole number of polls."""
    return type(f) is not list or len(f) != 3 or type(f[0]) is not str or type(f[1]) is not str \
        or type(f[2]) is not int or f[2] < 0


def parse_header(line):
    """The header of a counter log (its first line), checked: format, a version it reads, positive
    interval and link rate."""
    try:
        header = json.loads(line)
    except ValueError as exc:
        raise CounterLogError(f"line 1: not a counter log: {' '.join(str(exc).split())}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CounterLogError(f"line 1: not an {FORMAT} log (header line)")
    if header.get("version") not in VERSIONS:
        raise CounterLogError(f"line 1: {FORMAT} version {header.get('version')!r:.20}: this code reads versions "
                              f"{', '.join(map(str, VERSIONS))} (header line)")
    for key in ("interval_s", "link_rate_Bps"):
        numeric.positive(header.get(key), f"line 1: header: {key}", CounterLogError)
    return header


def open_log(path):
    """The counter log at ``path`` opened for reading as text, gzip'ed (*.gz) or plain."""
    return (gzip.open if str(path).endswith(".gz") else open)(path, "rt", encoding="utf-8")


def _from_open(path, take):
    """``take`` applied to the counter log at ``path`` opened (`open_log`); a file it cannot read is a
    `LogFileError` "<path>: <reason>"."""
    try:
        with open_log(path) as f:
            return take(f)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise LogFileError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def _named(path, reader, lines):
    """``reader(lines)``, a `CounterLogError` of the lines naming ``path``."""
    try:
        return reader(lines)
    except CounterLogError as exc:
        raise CounterLogError(f"{path}: {exc}") from None


def file_lines(path):
    """The lines of the counter log at ``path`` (`open_log`), for `parse`, `read_log`, `score` and
    the like. A file it cannot read (missing, unreadable, a broken gzip stream, not UTF-8) is a
    `LogFileError` (a `CounterLogError`) "<path>: <reason>"."""
    return _from_open(path, lambda f: f.readlines())


def from_file(path, reader):
    """``reader`` (`parse`, `read`, `read_log`, `score`, ...) applied to the lines of the counter log
    at ``path``: any `CounterLogError`, of the file or of its lines, names the path."""
    return _named(path, reader, file_lines(path))


def _header_of(lines):
    """`parse_header` of the first of ``lines`` that is not blank, the lines after it not read (an
    open file is read up to its header); an empty log is a `CounterLogError`."""
    first = next((ln for ln in lines if ln.strip()), None)
    if first is None:
        raise CounterLogError("empty counter log")
    return parse_header(first)


def read_header(path):
    """The header of the counter log at ``path`` (checked by `parse_header`; leading blank lines
    skipped, as `parse` does), the polls after it not read. Its errors name the path as `from_file`'s
    do: a `LogFileError` for a file it cannot read, a `CounterLogError` for a header it cannot take."""
    return _from_open(path, lambda f: _named(path, _header_of, f))


def parse(lines):
    """(header, [poll doc, ...]) of a counter log's lines (blank ones skipped), every line checked:
    a `CounterLogError` naming the first bad one. The polls as the controller wrote them, for the
    tools that replay a log poll by poll (`read_log` has the per-interval matrices)."""
    numbered = [(n, ln) for n, ln in enumerate(lines, 1) if ln.strip()]
    header = _header_of(ln for _n, ln in numbered)
    width, polls = len(FIELDS[header["version"]].split(",")), []
    for n, line in numbered[1:]:
        try:
            doc = json.loads(line)
        except ValueError as exc:
            raise CounterLogError(f"line {n}: not JSON: {' '.join(str(exc).split())}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("counts", []), list) \
                or not isinstance(doc.get("flagged", []), list):
            raise CounterLogError(f"line {n}: not a poll (an object with lists counts and flagged)")
        for c in doc.get("counts", ()):
            if _bad_count(c, width):
                raise CounterLogError(f"line {n}: count {json.dumps(c)[:60]} is not {FIELDS[header['version']]} "
                                      f"(version {header['version']})")
        if any(_bad_flag(f) for f in doc.get("flagged", ())):
            raise CounterLogError(f"line {n}: flagged entries are not [src, dst, polls]")
        polls.append(doc)
    return header, polls


def _matrices(header, polls, with_packets=True):
    """(pairs, bytes, packets) per interval, pairs x polls, of a parsed log (`read`, `read_packets`,
    `read_log`); packets None unless ``with_packets``."""
    pairs = sorted({(c[0], c[1]) for p in polls for c in p.get("counts", ())})
    index = {p: i for i, p in enumerate(pairs)}
    counts = np.zeros((len(pairs), len(polls)))
    packets = np.zeros((len(pairs), len(polls))) if with_packets else None
    last, last_packets = {}, {}
    for t, poll in enumerate(polls):
        for c in poll.get("counts", ()):
            pair, reading = (c[0], c[1]), c[3]
            i = index[pair]
            counts[i, t] = interval_count(last.get(pair), reading)
            last[pair] = reading
            if not with_packets:
                continue
            n = packets_counted(last_packets, pair, c[4] if len(c) > 4 else None)
            packets[i, t] = np.nan if n is None else n
    return pairs, counts, packets


def read(lines):
    """(header, [(src, dst), ...], counts pairs x polls) from the lines of a counter log (version 1
    or 2): bytes per interval, a pair's first reading counted whole (its entry was installed since
    the poll before), a lower reading than the last (entry re-installed) counted whole, a missing
    one 0."""
    log = read_log(lines, with_packets=False)
    return log.header, log.pairs, log.counts


def read_packets(lines):
    """(header, pairs, counts, packets) of `read` with the packets per interval (pairs x polls),
    counted the same way; NaN where unknown: no packet count (version 1, or the switch reported
    none), or the interval after one without (its packets would span both intervals)."""
    log = read_log(lines)
    return log.header, log.pairs, log.counts, log.packets


def read_log(lines, with_packets=True):
    """A `Log` of a counter log's lines, parsed once: `read_packets`' header, pairs, counts and
    packets (None unless ``with_packets``), and per poll (a column of counts) its time (the line's
    "t", s since the epoch; NaN where it has none) and its newly flagged pairs [(src, dst, polls)]."""
    header, polls = parse(lines)
    pairs, counts, packets = _matrices(header, polls, with_packets)
    times = np.array([p["t"] if isinstance(p.get("t"), (int, float)) else np.nan for p in polls], dtype=float)
    flags = [[tuple(f) for f in p.get("flagged", ())] for p in polls]
    return Log(header, pairs, counts, packets, times, flags)


def cut(lines, first, tags):
    """The lines of a slice of a counter log: its header with ``tags`` added, then ``lines[first:]``
    (the header line never twice). A `CounterLogError` for a header it cannot read."""
    header = dict(parse_header(lines[0]), **tags)
    return [json.dumps(header) + "\n"] + list(lines[max(first, 1):])


def label(counts, link_bytes, fraction=0.1):
    """(labels, starts) per pair of ``counts`` (pairs x intervals): an elephant has an interval with
    >= ``fraction`` x ``link_bytes`` and busy intervals (>= ``fraction`` / 10 of the link) on both
    sides of it; its start is the interval in which its heavy run can have begun, as the
    simulator's label dates it (`flowtraffic.heavy_starts`): the interval before the first such
    one when that was busy (a run of one whole interval at ``fraction`` that began earlier would
    have made it heavy too), else the first such one (-1 for a mouse). Busy intervals further back,
    below ``fraction`` (a halo pair at 3-8 % of its link for 10 polls before other flows end and it
    speeds up), are not part of the elephant: no poll-based detector can tell them from a mouse."""
    counts = np.asarray(counts, dtype=float)
    busy = counts >= fraction / 10 * link_bytes
    heavy = np.zeros_like(busy)
    heavy[:, 1:-1] = (counts[:, 1:-1] >= fraction * link_bytes) & busy[:, :-2] & busy[:, 2:]
    return heavy_label(heavy, busy)


def heavy_label(heavy, busy):
    """(labels, starts) of `label` from its heavy and busy intervals (pairs x intervals, bool): an
    elephant has a heavy interval; its start is the busy interval before the first, else that one."""
    labels = heavy.any(axis=1)
    starts = np.full(len(heavy), -1)
    for i in np.nonzero(labels)[0]:
        k = int(heavy[i].argmax())
        starts[i] = k - 1 if k > 0 and busy[i, k - 1] else k
    return labels, starts


def first_flags(flags):
    """{(src, dst): poll index (column of `read`'s counts)} of the pairs the controller flagged,
    each pair's first, from per-poll flags (`read_log`'s ``flags``: [(src, dst, polls), ...] a poll)."""
    out = {}
    for t, poll in enumerate(flags):
        for src, dst, _polls in poll:
            out.setdefault((src, dst), t)
    return out


def score(lines, fraction=0.1):
    """What the controller's flags in a counter log were worth against the counters' own labels
    (`label`): {pairs, elephants, flagged, true_flags, within_2 (elephants flagged by the second poll
    after their start), delays [polls from the start to the flag, both counted, of the caught
    elephants]}."""
    log = read_log(lines, with_packets=False)
    pairs = log.pairs
    labels, starts = label(log.counts, log.header["link_rate_Bps"] * log.header["interval_s"], fraction)
    at = first_flags(log.flags)
    delays = [max(1, at[p] - int(starts[i]) + 1) for i, p in enumerate(pairs) if labels[i] and p in at]
    return {"pairs": len(pairs), "elephants": int(labels.sum()), "flagged": len(at),
            "true_flags": sum(1 for i, p in enumerate(pairs) if labels[i] and p in at),
            "within_2": sum(1 for d in delays if d <= 2), "delays": delays}
