"""Sliding windows (issue 16, docs/flows.md "Sliding windows"): the counters are polled every
``--sdnmpi-flow-interval`` s, but the classifiers see intervals of ``--sdnmpi-flow-span`` s, a whole
number ``polls`` of polls: at every poll, the pair's history as windows of ``polls`` polls ending at
that poll (the bytes between the poll ``polls`` before and this one; the windows before it ending
``polls``, 2 ``polls``, ... polls earlier). That is exactly what a poller of ``span`` s sees, at the
phase of the current poll: version 8's model (trained and scored at 1 s) keeps its inputs at 0.5 s
polls, and a flow's first whole 1-s window ends 1.0-1.5 s after its start instead of 1-2 s.

Offline, `sliding_flags` applies a classifier so to a pairs x polls matrix of per-poll bytes; on
the controller, `SlidingCounters` does it poll by poll with `PairCounters`' interface: one
`PairCounters` per phase (poll number mod ``polls``), each fed every ``polls``-th poll's cumulative
readings, so each differences them into windows of ``span`` s exactly as a ``span``-s poller
would (a missing reading, a restarted counter: `tracker.interval_count`'s rules over the window).
The same classifier judges one phase's windows at a poll: the model's work per poll is a 1-s
poller's, so twice as many polls cost twice the CPU (and the control traffic) of 1-s polls. Pure
numpy, no Ryu.
"""
import numpy as np

from .classify import _counts, endpoint_totals
from .tracker import PairCounters

DIGITS = 6          # span / interval is rounded to this many decimals before the whole-number test


def window_polls(span, interval):
    """The polls of ``interval`` s that a window of ``span`` s sums: span / interval, a whole number
    >= 1; ``span`` 0 or None: 1 (the interval itself). A span that is not a whole multiple of the
    interval is a ValueError with a one-line message naming both options."""
    if not interval or interval <= 0:
        raise ValueError(f"--sdnmpi-flow-interval must be > 0 s, got {interval!r}")
    if not span:
        return 1
    ratio = round(span / interval, DIGITS)
    if span < 0 or ratio < 1 or ratio != int(ratio):
        raise ValueError(f"--sdnmpi-flow-span {span:g} s is not a whole multiple (1, 2, ...) of "
                         f"--sdnmpi-flow-interval {interval:g} s")
    return int(ratio)


def window_sums(counts, polls):
    """pairs x polls: entry t = the bytes of polls t - ``polls`` + 1 .. t (those before the first: 0)."""
    counts = _counts(counts)
    cum = np.cumsum(np.concatenate([np.zeros((len(counts), polls)), counts], axis=1), axis=1)
    return cum[:, polls:] - cum[:, :-polls]


def sliding_flags(classifier, counts, polls, pairs=None):
    """pairs x polls, True where ``classifier`` (interval: the window's span) flags the pair at poll
    t from the windows of ``polls`` polls ending at t, t - ``polls``, ... (`window_sums`; ``pairs``:
    the rows' (src, dst), for a classifier that needs the endpoint totals, which are summed over the
    same windows). ``polls`` 1: the classifier's own flags."""
    counts = _counts(counts)
    sums = window_sums(counts, polls)
    out = np.zeros(counts.shape, dtype=bool)
    for phase in range(min(polls, counts.shape[1])):
        cols = np.arange(phase, counts.shape[1], polls)
        series = sums[:, cols]
        totals = endpoint_totals(series, pairs) if getattr(classifier, "needs_totals", False) else None
        out[:, cols] = classifier.flags(series, totals)
    return out


class _Never:
    """A classifier that flags nothing: `SlidingCounters`' per-poll book only counts."""
    window = 1

    def flags(self, counts, totals=None):
        return np.zeros(np.shape(counts), dtype=bool)


class SlidingCounters:
    """`PairCounters`' interface over windows of ``polls`` polls (the classifier's ``interval`` is
    the window's span): ``poll`` -> {pair: delay in polls} once per pair, the delay counted in polls
    (of the poll interval) from the pair's first bytes to the flag, both counted; ``latest`` the
    bytes of the window ending at the latest poll; ``rearm`` and ``forget`` as `PairCounters`'."""

    def __init__(self, classifier, polls):
        if int(polls) != polls or polls < 1:
            raise ValueError(f"polls must be a whole number >= 1, got {polls!r}")
        self.classifier = classifier
        self.polls = int(polls)
        self.phases = [PairCounters(classifier) for _ in range(self.polls)]   # windows ending at phase k
        self.each = PairCounters(_Never())      # every poll: the pairs' ages in polls (delays)
        self.flagged = set()
        self.count = 0                          # polls so far

    def poll(self, readings):
        """One poll: {pair: cumulative bytes}. Returns {pair: delay in polls} of the pairs flagged now
        for the first time."""
        self.each.poll(readings)
        book = self.phases[self.count % self.polls]
        self.count += 1
        found = book.poll(readings)
        ages = self.each._age        # a window may hold bytes only before a rearm's poll: then 1
        newly = {p: (ages.get(p) or 0) + 1 for p in sorted(found, key=repr)}
        self.flagged |= set(newly)
        for other in self.phases:
            other.flagged |= set(newly)
        return newly

    def rearm(self, pairs):
        """As `PairCounters.rearm`: the next windows count only the bytes after the latest poll
        (every phase's last reading becomes that poll's)."""
        for book in self.phases + [self.each]:
            book.rearm(pairs)
        last = self.each._last
        for book in self.phases:
            book._last.update((p, last[p]) for p in pairs if p in last)
        self.flagged -= set(pairs)

    def forget(self, pairs):
        for book in self.phases + [self.each]:
            book.forget(pairs)
        self.flagged -= set(pairs)

    def latest(self):
        """{pair: bytes of the window ending at the latest poll} of every pair with a history there."""
        return self.phases[(self.count - 1) % self.polls].latest() if self.count else {}

    def pairs(self):
        return set().union(*(b.pairs() for b in self.phases + [self.each]))

    def __len__(self):
        return len(self.each)


def counters(classifier, polls=1):
    """The controller's per-poll book: `PairCounters` at one poll a window, else `SlidingCounters`."""
    return PairCounters(classifier) if polls == 1 else SlidingCounters(classifier, polls)
