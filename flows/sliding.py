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
poller's, so twice as many polls cost twice the CPU (and the control traffic) of 1-s polls.

One rule more than a ``span``-s poller has (with more than one poll a window): a pair is flagged at a
poll only when that poll alone carried at least STILL_SHARE of the link, i.e. the pair still sends at
the end of its window. Without it, a burst shorter than the span that straddles a window boundary
reads as two windows at part of the link, the first one partial, the second one "whole": the look
of a slow elephant's start, which version 8 flags (on the simulated held-out permutation at 0.5 s
polls and 1 s windows: accuracy 0.870 against 0.990 with the rule; docs/flows.md "Sliding
windows"). A ``span``-s poller whose polls fall mid-burst is fooled the same way. Pure numpy, no Ryu.
"""
import numpy as np

from .classify import _counts
from .tracker import PairCounters

DIGITS = 6          # span / interval is rounded to this many decimals before the whole-number test
STILL_SHARE = 0.02  # a new flag's poll (with > 1 poll a window) carries this share of the link at least:
                    # version 8's floor at a pair's first whole interval (its young floor)


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
                         f"--sdnmpi-flow-interval {interval:g} s (make the span one, or 0: the interval itself)")
    return int(ratio)


def window_sums(counts, polls):
    """pairs x polls: entry t = the bytes of polls t - ``polls`` + 1 .. t (those before the first: 0)."""
    counts = _counts(counts)
    cum = np.cumsum(np.concatenate([np.zeros((len(counts), polls)), counts], axis=1), axis=1)
    return cum[:, polls:] - cum[:, :-polls]


def still_bytes(classifier, polls):
    """The bytes a new flag's poll must carry (STILL_SHARE of a poll's link bytes; 0 at one poll a
    window: the classifier's own rule)."""
    return 0.0 if polls == 1 else STILL_SHARE * classifier.link_rate * classifier.interval / polls


def sliding_flags(classifier, counts, polls, totals=None, phases=None, still=True):
    """pairs x polls, True where ``classifier`` (interval: the window's span) flags the pair at poll
    t from the windows of ``polls`` polls ending at t, t - ``polls``, ... (`window_sums`) and poll t
    alone carried `still_bytes`. ``totals``: the per-poll `endpoint_totals` of the rows (pairs x polls
    x 2), for a classifier that needs them; they are summed over the same windows (a sum of the
    pairs' sums). ``polls`` 1: the classifier's own flags. For the offline comparisons: ``phases``
    (default: all) judges only the windows ending at those phases (poll number mod ``polls``: one
    phase alone is a poller of the span at that phase), ``still`` False leaves out the poll's rule."""
    counts = _counts(counts)
    sums = window_sums(counts, polls)
    if totals is not None:
        totals = np.stack([window_sums(totals[..., side], polls) for side in (0, 1)], axis=2)
    out = np.zeros(counts.shape, dtype=bool)
    for phase in range(polls) if phases is None else phases:
        cols = np.arange(phase, counts.shape[1], polls)
        out[:, cols] = classifier.flags(sums[:, cols], None if totals is None else totals[:, cols])
    return out & (counts >= still_bytes(classifier, polls)) if polls > 1 and still else out


class Sliding:
    """``classifier`` judged over sliding windows of ``polls`` polls (`sliding_flags`), with the
    classifiers' ``flags(counts, totals)`` (per-poll counts and totals), for the offline scorers."""

    def __init__(self, classifier, polls):
        self.classifier, self.polls = classifier, polls

    @property
    def needs_totals(self):
        return getattr(self.classifier, "needs_totals", False)

    def flags(self, counts, totals=None):
        return sliding_flags(self.classifier, counts, self.polls, totals if self.needs_totals else None)

    def __repr__(self):
        return f"Sliding({self.classifier!r}, polls={self.polls})"


class _Never:
    """A classifier that flags nothing: `SlidingCounters`' per-poll book only counts."""
    window = 1

    def flags(self, counts, totals=None):
        return np.zeros(np.shape(counts), dtype=bool)


class SlidingCounters:
    """`PairCounters`' interface over windows of ``polls`` polls (the classifier's ``interval`` is
    the window's span): ``poll`` -> {pair: delay in polls} once per pair (a flag whose poll carried
    under `still_bytes` is dropped, the pair judged again later), the delay counted in polls
    (of the poll interval) from the pair's first bytes to the flag, both counted; ``latest`` the
    bytes of the window ending at the latest poll, ``latest_packets`` its packets (given the
    packet counts); ``rearm`` and ``forget`` as `PairCounters`'."""

    def __init__(self, classifier, polls):
        if int(polls) != polls or polls < 1:
            raise ValueError(f"polls must be a whole number >= 1, got {polls!r}")
        self.classifier = classifier
        self.polls = int(polls)
        self.phases = [PairCounters(classifier) for _ in range(self.polls)]   # windows ending at phase k
        self.each = PairCounters(_Never())      # every poll: its bytes and the pairs' ages in polls (delays)
        self.still = still_bytes(classifier, self.polls)
        self.flagged = set()
        self.count = 0                          # polls so far

    def poll(self, readings, packets=None):
        """One poll: {pair: cumulative bytes} (and ``packets`` as `PairCounters.poll`'s). Returns
        {pair: delay in polls} of the pairs flagged now for the first time."""
        self.each.poll(readings, packets)      # its last packet readings: a rearm's starting point
        book = self.phases[self.count % self.polls]
        self.count += 1
        found = book.poll(readings, packets)
        now = self.each.latest()
        late = [p for p in found if now.get(p, 0.0) < self.still]     # not sending at the window's end
        book.unflag(late)                                                # judged again at later polls
        found = set(found) - set(late)
        # a window may hold bytes only before a rearm's poll (no age since): then 1
        newly = {p: (self.each.age(p) or 0) + 1 for p in sorted(found, key=repr)}
        self.flagged |= set(newly)
        for other in self.phases:
            other.mark_flagged(newly)
        return newly

    def rearm(self, pairs):
        """As `PairCounters.rearm`: the next windows count only the bytes and packets after the
        latest poll (every phase's last readings become that poll's), so that the ACK rule's packets
        cover the same span as the bytes."""
        for book in self.phases + [self.each]:
            book.rearm(pairs)
        last, packets = self.each.last_readings(pairs), self.each.last_packet_readings(pairs)
        for book in self.phases:
            book.count_from(last, packets)
        self.flagged -= set(pairs)

    def forget(self, pairs):
        for book in self.phases + [self.each]:
            book.forget(pairs)
        self.flagged -= set(pairs)

    def latest(self):
        """{pair: bytes of the window ending at the latest poll} of every pair with a history there."""
        return self._latest_book().latest()

    def latest_packets(self):
        """{pair: packets of the window ending at the latest poll}, where counted."""
        return self._latest_book().latest_packets()

    def _latest_book(self):
        """The phase's book whose window ends at the latest poll (before the first: one not polled yet)."""
        return self.phases[(self.count - 1) % self.polls]

    def pairs(self):
        return set().union(*(b.pairs() for b in self.phases + [self.each]))

    def __len__(self):
        return len(self.each)


def counters(classifier, polls=1):
    """The controller's per-poll book: `PairCounters` at one poll a window, else `SlidingCounters`."""
    return PairCounters(classifier) if polls == 1 else SlidingCounters(classifier, polls)
