"""The two classifiers. Both take ``counts``: a pairs x intervals array of bytes counted per
polling interval (column t = bytes between poll t-1 and poll t), and return a bool array of the
same shape: True where the pair is an elephant as judged at poll t from columns <= t only.

Bytes are compared with what the host link can carry in one interval (``link_rate`` bytes/s x
``interval`` s), so neither classifier depends on the link speed.
"""
import logging

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import numeric

LOG = logging.getLogger(__name__)

DEFAULT_LINK_RATE = 1e9 / 8  # bytes/s of a host link (1 Gbit/s); pass the fabric's real rate
DEFAULT_INTERVAL = 1.0       # s of one classifier interval (the poll interval, or the sliding window it judges)
DEFAULT_WINDOW = 2           # threshold: intervals summed
DEFAULT_FRACTION = 0.1       # threshold: share of the link over the window (Hedera's 10 %)


def _counts(counts):
    counts = np.asarray(counts, dtype=float)
    if counts.ndim == 1:
        counts = counts[None, :]
    if counts.ndim != 2:
        raise ValueError(f"counts must be pairs x intervals, got shape {counts.shape}")
    return counts


def scaled_windows(counts, window, link_bytes):
    """pairs x intervals x ``window``: entry [p, t, k] = bytes of pair p in interval
    t - window + 1 + k, divided by ``link_bytes`` and clipped to [0, 1] (min-max scaling with
    the physical bounds: nothing, a full link); intervals before the first are 0."""
    counts = _counts(counts)
    padded = np.concatenate([np.zeros((counts.shape[0], window - 1)), counts], axis=1)
    return np.clip(sliding_window_view(padded, window, axis=1) / link_bytes, 0.0, 1.0)


N_SUMMARY = 8                # pair_features: summary features after the recent intervals


def pair_features(counts, history, recent, link_bytes):
    """pairs x intervals x (``recent`` + N_SUMMARY): what the learned model (version 2) sees of
    pair p at poll t, from its last ``history`` intervals only (so that a poller keeping
    ``history`` intervals sees the same): the last ``recent`` scaled intervals (oldest first);
    then, with cum = the scaled bytes of the ``history`` intervals (link-intervals) and age = the
    intervals since the pair's first bytes among them: min(cum, 2), cum >= 1, age == 0, 1, 2,
    >= 3 (one-hot), cum / (age + 1) (the mean rate since its start) and
    log(1 + 100 cum) / log(201)."""
    x = scaled_windows(counts, history, link_bytes)
    sent = x > 0
    first = np.where(sent.any(axis=2), sent.argmax(axis=2), history - 1)
    age = history - 1 - first
    cum = x.sum(axis=2)
    summary = [np.minimum(cum, 2.0), cum >= 1.0, age == 0, age == 1, age == 2, age >= 3,
               cum / (age + 1), np.log1p(100.0 * cum) / np.log(201.0)]
    return np.concatenate([x[..., history - recent:], np.stack(summary, axis=2).astype(float)], axis=2)


N_EARLY = 14                 # early_features: features after the recent intervals


BUSY = 0.01                  # version 4: an interval with this share of the link starts a pair's age


def _ages(x, floor=0.0):
    """pairs x intervals: intervals since the pair's first interval with more than ``floor``
    (scaled bytes) within each window of ``x`` (as `scaled_windows` gives it); 0 at that
    interval (and where none has)."""
    history = x.shape[2]
    sent = x > floor
    return history - 1 - np.where(sent.any(axis=2), sent.argmax(axis=2), history - 1)


def pair_ages(counts, history, link_bytes=1.0, floor=0.0):
    """pairs x intervals: the age the learned model sees (`_ages` over ``history`` intervals):
    from the first bytes (``floor`` 0, versions <= 3) or the first busy interval (version 4)."""
    return _ages(scaled_windows(counts, history, link_bytes), floor)


def _log_share(v):
    """log(1 + 100 v) / log(101): a share of the link (0 .. 1) on a log scale (0 .. 1)."""
    return np.log1p(100.0 * v) / np.log(101.0)


def early_features(counts, history, recent, link_bytes, floor=0.0):
    """pairs x intervals x (``recent`` + N_EARLY): what the learned model (version 3) sees of
    pair p at poll t, built to decide from a pair's first polls. From the last ``history``
    intervals only: the last ``recent`` scaled intervals (oldest first); then, with r0 the latest
    scaled interval, r1, r2, r3 the ones before, L(v) = log(1 + 100 v) / log(101) and age = the
    intervals since the pair's first bytes: age == 0, 1, 2, >= 3 (one-hot); at age 1: L(r0) (the
    first whole interval), L(r1) (the partial first one); at age 2: L(r0), L(mean r0..r1); at age
    >= 3: L(r0), L(mean r0..r2), L(mean r0..r3), L(min(r0, r1)); min(cum, 2) and L(cum / (age + 1))
    (cum = the scaled bytes of the history). Version 4 (``floor`` BUSY): the age counts from the
    first interval with more than ``floor`` of the link, so that a few kB of connection set-up
    ahead of a bulk send do not age the pair."""
    x = scaled_windows(counts, history, link_bytes)
    age = _ages(x, floor)
    r0, r1 = x[..., -1], x[..., -2] if history > 1 else np.zeros(x.shape[:2])
    r2 = x[..., -3] if history > 2 else np.zeros(x.shape[:2])
    r3 = x[..., -4] if history > 3 else np.zeros(x.shape[:2])
    a0, a1, a2, a3 = age == 0, age == 1, age == 2, age >= 3
    cum = x.sum(axis=2)
    L = _log_share
    summary = [a0, a1, a2, a3, L(r0) * a1, L(r1) * a1, L(r0) * a2, L((r0 + r1) / 2) * a2, L(r0) * a3,
               L((r0 + r1 + r2) / 3) * a3, L((r0 + r1 + r2 + r3) / 4) * a3, L(np.minimum(r0, r1)) * a3,
               np.minimum(cum, 2.0), L(cum / (age + 1))]
    return np.concatenate([x[..., history - recent:], np.stack(summary, axis=2).astype(float)], axis=2)


class ThresholdClassifier:
    """Elephant when the bytes of the last ``window`` intervals exceed ``fraction`` of what the
    host link carries in that window."""
    name = "threshold"

    def __init__(self, link_rate=DEFAULT_LINK_RATE, interval=DEFAULT_INTERVAL,
                 window=DEFAULT_WINDOW, fraction=DEFAULT_FRACTION):
        self.link_rate = numeric.positive(link_rate, "link_rate", ValueError, convert=True)
        self.interval = numeric.positive(interval, "interval", ValueError, convert=True)
        if int(window) != window or window < 1:
            raise ValueError(f"window must be a whole number of intervals >= 1, got {window!r}")
        self.window = int(window)
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
        self.fraction = float(fraction)

    def flags(self, counts, totals=None):     # totals: unused (the learned classifier's argument)
        sums = scaled_windows(counts, self.window, self.link_rate * self.interval).sum(axis=2)
        return sums > self.fraction * self.window

    def __repr__(self):
        return (f"ThresholdClassifier(window={self.window}, fraction={self.fraction}, "
                f"link_rate={self.link_rate:g}, interval={self.interval:g})")


def busy_features(counts, history, recent, link_bytes):
    """Version 4: `early_features` with ages from the first busy interval (BUSY)."""
    return early_features(counts, history, recent, link_bytes, floor=BUSY)


N_HOST = 3                   # host_features: features after busy_features'


def endpoint_totals(counts, pairs):
    """pairs x intervals x 2: for row i (pair ``pairs[i]`` = (source, destination)), the bytes of
    every row with its source (column 0) and of every row with its destination (column 1) in each
    interval, its own included: what the source sent and the destination received over the pairs
    counted."""
    counts = _counts(counts)
    if len(pairs) != len(counts):
        raise ValueError(f"{len(pairs)} pairs for {len(counts)} rows of counts")
    out = np.zeros(counts.shape + (2,))
    for side in (0, 1):
        hosts = [p[side] for p in pairs]
        index = {h: k for k, h in enumerate(dict.fromkeys(hosts))}
        rows = np.array([index[h] for h in hosts], dtype=int)
        sums = np.zeros((len(index), counts.shape[1]))
        np.add.at(sums, rows, counts)
        out[..., side] = sums[rows]
    return out


def host_features(counts, history, recent, link_bytes, totals):
    """Version 5: `busy_features`, then, with s = the pair's share of its endpoints' bytes in an
    interval (the smaller of its share of what its source sent and of what its destination
    received, from ``totals``: `endpoint_totals`; 0 in an idle interval): s of the latest
    interval, the mean s of the latest two, and s x L(r0). A pair that carries all its hosts'
    traffic (a shift, a permutation) has s = 1 from its first interval; a pair of an all-to-all
    has 1/15, whatever its rate."""
    counts = _counts(counts)
    totals = np.asarray(totals, dtype=float)
    if totals.shape != counts.shape + (2,):
        raise ValueError(f"endpoint totals of shape {totals.shape} for counts of shape {counts.shape}")
    share = np.divide(counts[..., None], totals, out=np.zeros_like(totals), where=totals > 0).min(axis=2)
    before = np.concatenate([np.zeros((len(counts), 1)), share[:, :-1]], axis=1)
    r0 = np.clip(counts / link_bytes, 0.0, 1.0)
    extra = np.stack([share, (share + before) / 2, share * _log_share(r0)], axis=2)
    return np.concatenate([busy_features(counts, history, recent, link_bytes), extra], axis=2)


LINE = 0.1                   # version 6: the label's line, a share of the link (flowtraffic.HEAVY_FRACTION)
N_LINE = 1                   # line_features: features after host_features'


def line_features(counts, history, recent, link_bytes, totals):
    """Version 6: `host_features`, then the label's own test on the latest interval times the
    pair's share s of its endpoints' bytes: s when the latest interval carried >= `LINE` of the
    link after a busy one (>= `BUSY`: the pair sent through the whole interval), else 0. The
    counter label (`counterlog.label`) calls a pair an elephant from one such interval; version 5's
    inputs are smooth in the rate (logs, means over the pair's age), so one unit could only
    approximate that step with a slope, and a pair that crawled at 5 % of its link and rises past
    10 % when its neighbours' flows end (Mininet halo3d) scored low for its history."""
    counts = _counts(counts)
    base = host_features(counts, history, recent, link_bytes, totals)
    r0 = counts / link_bytes
    before = np.concatenate([np.zeros((len(counts), 1)), r0[:, :-1]], axis=1)
    step = (r0 >= LINE) & (before >= BUSY)
    return np.concatenate([base, (step * base[..., -3])[..., None]], axis=2)


OLD = 3                      # aged_features: a pair this many intervals past its first busy one is old
FLOOR_AGE = 2                # version 8: a pair this many intervals past its first busy one has the old floor


def aged_features(counts, history, recent, link_bytes, totals):
    """Version 7: `line_features` with its last input (the label's step x the share s) split by
    the pair's age (`pair_ages` from its first busy interval, as the age one-hot): young (age <=
    2: a flow's first whole intervals) and old (age >= `OLD`: a rise inside a running stretch), so
    that a pair that crawled under the line for polls and passes it can weigh otherwise than a
    burst's first whole interval (an all-to-all pair at a third of its hosts' bytes)."""
    base = line_features(counts, history, recent, link_bytes, totals)
    step_s = base[..., -1]
    age = pair_ages(counts, history, link_bytes, BUSY)
    split = np.stack([step_s * (age < OLD), step_s * (age >= OLD)], axis=2)
    return np.concatenate([base[..., :-1], split], axis=2)


FEATURES = {2: (pair_features, N_SUMMARY), 3: (early_features, N_EARLY),     # model version -> inputs
            4: (busy_features, N_EARLY), 5: (host_features, N_EARLY + N_HOST),
            6: (line_features, N_EARLY + N_HOST + N_LINE),
            7: (aged_features, N_EARLY + N_HOST + N_LINE + 1),
            8: (aged_features, N_EARLY + N_HOST + N_LINE + 1)}   # version 8: version 7's inputs and a floor
# versions whose age (and min_age) counts from the first busy interval
AGE_FLOOR = {4: BUSY, 5: BUSY, 6: BUSY, 7: BUSY, 8: BUSY}
NEEDS_TOTALS = (5, 6, 7, 8)  # versions whose features need `endpoint_totals`


def features(version, counts, history, recent, link_bytes, totals=None):
    """The inputs of a model of ``version`` (2 and up) at every (pair, interval)."""
    fn = FEATURES[version][0]
    if version not in NEEDS_TOTALS:
        return fn(counts, history, recent, link_bytes)
    if totals is None:
        raise ValueError(f"model version {version} needs the endpoint totals of the pairs (endpoint_totals)")
    return fn(counts, history, recent, link_bytes, totals)


class LearnedClassifier:
    """One dense unit with a sigmoid; elephant when the output reaches ``cutoff``, the pair sent
    bytes in the latest interval (an idle pair is never newly flagged), at least ``floor`` of the
    link in it (version 8: (young, old), young for a pair under `FLOOR_AGE` intervals past its
    first busy one, i.e. at its first whole interval, old after; so that a burst that has ended,
    or a pair that runs a little under the line, is not flagged for its history or its share) and
    it is at least ``min_age`` intervals past its first bytes. Its inputs: the last ``len(weights)`` intervals
    scaled as in `scaled_windows` (``history`` None, model version 1), or over ``history``
    intervals with the last ``recent`` one by one: `pair_features` (version 2),
    `early_features` (version 3), `busy_features` (version 4), `host_features` (version 5),
    `line_features` (version 6) or `aged_features` (versions 7 and 8; 5-8 also need the pairs'
    `endpoint_totals`)."""
    name = "learned"

    def __init__(self, weights, bias, link_rate=DEFAULT_LINK_RATE, interval=DEFAULT_INTERVAL,
                 cutoff=0.5, history=None, recent=None, version=2, min_age=0, floor=0.0):
        self.weights = np.asarray(weights, dtype=float).reshape(-1)
        self.bias = float(bias)
        self.link_rate = numeric.positive(link_rate, "link_rate", ValueError, convert=True)
        self.interval = numeric.positive(interval, "interval", ValueError, convert=True)
        self.cutoff = float(cutoff)
        self.history, self.recent = history, recent
        self.version = 1 if history is None else version
        self.min_age = int(min_age)
        pair = floor if isinstance(floor, (tuple, list)) else (floor, floor)
        self.floor = tuple(float(f) for f in pair)
        if len(self.floor) != 2 or not all(0 <= f < 1 for f in self.floor):
            raise ValueError(f"floor must be a share of the link in [0, 1) or a (young, old) pair, got {floor!r}")
        if history is not None:
            if version not in FEATURES:
                raise ValueError(f"no features for model version {version!r}")
            extra = FEATURES[version][1]
            if not (1 <= recent <= history and len(self.weights) == recent + extra):
                raise ValueError(f"{len(self.weights)} weights for history {history}, recent {recent}")

    @property
    def window(self):
        """Intervals of history the classifier needs."""
        return len(self.weights) if self.history is None else self.history

    @property
    def needs_totals(self):
        """True when `flags` needs the endpoint totals (versions 5-8)."""
        return self.version in NEEDS_TOTALS

    def inputs(self, counts, totals=None):
        link_bytes = self.link_rate * self.interval
        if self.history is None:
            return scaled_windows(counts, self.window, link_bytes)
        return features(self.version, counts, self.history, self.recent, link_bytes, totals)

    def probability(self, counts, totals=None):
        return 1.0 / (1.0 + np.exp(-(self.inputs(counts, totals) @ self.weights + self.bias)))

    def ages(self, counts):
        """pairs x intervals: the ages ``min_age`` applies to."""
        return pair_ages(counts, self.window, self.link_rate * self.interval, AGE_FLOOR.get(self.version, 0.0))

    def flags(self, counts, totals=None):
        """``totals``: `endpoint_totals` of the pairs (versions 5-8 need them; others ignore them)."""
        counts = _counts(counts)
        hit = (self.probability(counts, totals) >= self.cutoff) & (counts > 0)
        if not (self.min_age or any(self.floor)):
            return hit
        ages = self.ages(counts)
        if any(self.floor):
            hit &= counts >= np.where(ages < FLOOR_AGE, *self.floor) * self.link_rate * self.interval
        return hit & (ages >= self.min_age) if self.min_age else hit

    def __repr__(self):
        return (f"LearnedClassifier(version={self.version}, window={self.window}, inputs={len(self.weights)}, "
                f"link_rate={self.link_rate:g}, interval={self.interval:g})")
