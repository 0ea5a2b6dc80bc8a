"""The two classifiers. Both take ``counts``: a pairs x intervals array of bytes counted per
polling interval (column t = bytes between poll t-1 and poll t), and return a bool array of the
same shape: True where the pair is an elephant as judged at poll t from columns <= t only.

Bytes are compared with what the host link can carry in one interval (``link_rate`` bytes/s x
``interval`` s), so neither classifier depends on the link speed.
"""
import logging

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

LOG = logging.getLogger(__name__)

DEFAULT_LINK_RATE = 1e9 / 8  # bytes/s of a host link (1 Gbit/s); pass the fabric's real rate
DEFAULT_INTERVAL = 1.0       # s between two counter polls
DEFAULT_WINDOW = 2           # threshold: intervals summed
DEFAULT_FRACTION = 0.1       # threshold: share of the link over the window (Hedera's 10 %)


def _counts(counts):
    counts = np.asarray(counts, dtype=float)
    if counts.ndim == 1:
        counts = counts[None, :]
    if counts.ndim != 2:
        raise ValueError(f"counts must be pairs x intervals, got shape {counts.shape}")
    return counts


def _positive(name, value):
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return value


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
        self.link_rate = _positive("link_rate", link_rate)
        self.interval = _positive("interval", interval)
        if int(window) != window or window < 1:
            raise ValueError(f"window must be a whole number of intervals >= 1, got {window!r}")
        self.window = int(window)
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
        self.fraction = float(fraction)

    def flags(self, counts):
        sums = scaled_windows(counts, self.window, self.link_rate * self.interval).sum(axis=2)
        return sums > self.fraction * self.window

    def __repr__(self):
        return (f"ThresholdClassifier(window={self.window}, fraction={self.fraction}, "
                f"link_rate={self.link_rate:g}, interval={self.interval:g})")


def busy_features(counts, history, recent, link_bytes):
    """Version 4: `early_features` with ages from the first busy interval (BUSY)."""
    return early_features(counts, history, recent, link_bytes, floor=BUSY)


FEATURES = {2: (pair_features, N_SUMMARY), 3: (early_features, N_EARLY),     # model version -> inputs
            4: (busy_features, N_EARLY)}
AGE_FLOOR = {4: BUSY}        # versions whose age (and min_age) counts from the first busy interval


class LearnedClassifier:
    """One dense unit with a sigmoid; elephant when the output reaches ``cutoff``, the pair sent
    bytes in the latest interval (an idle pair is never newly flagged) and it is at least
    ``min_age`` intervals past its first bytes. Its inputs: the last ``len(weights)`` intervals
    scaled as in `scaled_windows` (``history`` None, model version 1), or over ``history``
    intervals with the last ``recent`` one by one: `pair_features` (version 2) or
    `early_features` (version 3)."""
    name = "learned"

    def __init__(self, weights, bias, link_rate=DEFAULT_LINK_RATE, interval=DEFAULT_INTERVAL,
                 cutoff=0.5, history=None, recent=None, version=2, min_age=0):
        self.weights = np.asarray(weights, dtype=float).reshape(-1)
        self.bias = float(bias)
        self.link_rate = _positive("link_rate", link_rate)
        self.interval = _positive("interval", interval)
        self.cutoff = float(cutoff)
        self.history, self.recent = history, recent
        self.version = 1 if history is None else version
        self.min_age = int(min_age)
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

    def inputs(self, counts):
        link_bytes = self.link_rate * self.interval
        if self.history is None:
            return scaled_windows(counts, self.window, link_bytes)
        return FEATURES[self.version][0](counts, self.history, self.recent, link_bytes)

    def probability(self, counts):
        return 1.0 / (1.0 + np.exp(-(self.inputs(counts) @ self.weights + self.bias)))

    def ages(self, counts):
        """pairs x intervals: the ages ``min_age`` applies to."""
        return pair_ages(counts, self.window, self.link_rate * self.interval, AGE_FLOOR.get(self.version, 0.0))

    def flags(self, counts):
        counts = _counts(counts)
        hit = (self.probability(counts) >= self.cutoff) & (counts > 0)
        return hit & (self.ages(counts) >= self.min_age) if self.min_age else hit

    def __repr__(self):
        return (f"LearnedClassifier(version={self.version}, window={self.window}, inputs={len(self.weights)}, "
                f"link_rate={self.link_rate:g}, interval={self.interval:g})")
