"""Counter logs: the per-poll byte counters the controller read, one JSON line a poll, so that the
learned model can be trained on what a real fabric (Mininet) counted (docs/flows.md).

    {"format": "sdnmpi-flow-counters", "version": 1, "interval_s": 1.0, "link_rate_Bps": 5e6,
     "classifier": "learned", ...}                                   # first line: the header
    {"poll": 17, "t": 1764310000.25, "complete": true,
     "counts": [["10.0.0.1", "10.0.0.3", 5, 123456], ...],           # src, dst, job, cumulative bytes
     "flagged": [["10.0.0.1", "10.0.0.3", 2]]}                       # newly flagged: src, dst, polls

`CounterLog` writes it (the controller, ``--sdnmpi-flow-log``); a write error is one warning line
and the log stops, detection goes on. `read` parses a log (or a slice of one with its header) into
per-interval byte counts, pairs x polls, the way `PairCounters` differences them. `label` marks the
pairs the counters show as elephants: an interval with >= ``fraction`` of the link's bytes inside
a busy stretch (>= ``fraction`` / 10 of the link in the intervals before and after it, so the pair
sent through the whole interval; less is start-up chatter such as MPI's connection set-up); their
start is the interval in which that heavy run can have begun: the busy interval just before the
first such interval (it may hold the run's partial beginning), else that interval itself.
"""
import json
import logging
import time

import numpy as np

LOG = logging.getLogger(__name__)

FORMAT = "sdnmpi-flow-counters"
VERSION = 1


class CounterLogError(ValueError):
    """A counter log cannot be read (one line)."""


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

    def poll(self, number, readings, job_of, flagged, complete=True):
        """One poll: ``readings`` {(src, dst): cumulative bytes}, ``job_of`` {(src, dst): job id},
        ``flagged`` {(src, dst): polls} of the pairs flagged now."""
        if self._file is None:
            return
        doc = {"poll": number, "t": round(time.time(), 3), "complete": bool(complete),
               "counts": [[s, d, job_of.get((s, d)), int(b)] for (s, d), b in sorted(readings.items())],
               "flagged": [[s, d, int(n)] for (s, d), n in sorted(flagged.items())]}
        try:
            self._write(doc)
        except OSError as exc:
            self._fail(exc)

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


def read(lines):
    """(header, [(src, dst), ...], counts pairs x polls) from the lines of a counter log: bytes
    per interval, a pair's first reading counted whole (its entry was installed since the poll
    before), a lower reading than the last (entry re-installed) counted whole, a missing one 0."""
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise CounterLogError("empty counter log")
    try:
        docs = [json.loads(ln) for ln in lines]
    except ValueError as exc:
        raise CounterLogError(f"not a counter log: {' '.join(str(exc).split())}") from None
    header, polls = docs[0], docs[1:]
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
        raise CounterLogError(f"not an {FORMAT} version {VERSION} log (header line)")
    for key in ("interval_s", "link_rate_Bps"):
        if not isinstance(header.get(key), (int, float)) or header[key] <= 0:
            raise CounterLogError(f"header: {key} must be a positive number")
    pairs = sorted({(c[0], c[1]) for p in polls for c in p.get("counts", ())})
    index = {p: i for i, p in enumerate(pairs)}
    counts = np.zeros((len(pairs), len(polls)))
    last = {}
    for t, poll in enumerate(polls):
        for src, dst, _job, reading in poll.get("counts", ()):
            prev = last.get((src, dst))
            counts[index[(src, dst)], t] = reading if prev is None or reading < prev else reading - prev
            last[(src, dst)] = reading
    return header, pairs, counts


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


def flagged(lines):
    """{(src, dst): poll index (column of `read`'s counts)} of the pairs the controller flagged,
    from the ``flagged`` field of a counter log's poll lines."""
    out = {}
    for t, line in enumerate(ln for ln in lines[1:] if ln.strip()):
        for src, dst, _polls in json.loads(line).get("flagged", ()):
            out.setdefault((src, dst), t)
    return out


def score(lines, fraction=0.1):
    """What the controller's flags in a counter log were worth against the counters' own labels
    (`label`): {pairs, elephants, flagged, true_flags, within_2 (elephants flagged by the second poll
    after their start), delays [polls from the start to the flag, both counted, of the caught
    elephants]}."""
    header, pairs, counts = read(lines)
    labels, starts = label(counts, header["link_rate_Bps"] * header["interval_s"], fraction)
    at = flagged(lines)
    delays = [max(1, at[p] - int(starts[i]) + 1) for i, p in enumerate(pairs) if labels[i] and p in at]
    return {"pairs": len(pairs), "elephants": int(labels.sum()), "flagged": len(at),
            "true_flags": sum(1 for i, p in enumerate(pairs) if labels[i] and p in at),
            "within_2": sum(1 for d in delays if d <= 2), "delays": delays}
