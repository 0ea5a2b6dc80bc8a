"""Bookkeeping over flag matrices: when a pair started, when it was first flagged, the delay in
polling intervals, and pair-level scores against known labels."""
import numpy as np


def _first_true(matrix):
    matrix = np.asarray(matrix, dtype=bool)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    first = matrix.argmax(axis=1)
    return np.where(matrix.any(axis=1), first, -1)


def first_flags(flags):
    """Per pair, the first interval flagged, or -1 if never."""
    return _first_true(flags)


def start_intervals(counts):
    """Per pair, the first interval with bytes, or -1 for a pair that sent nothing."""
    return _first_true(np.asarray(counts) > 0)


def detection_delays(counts, flags, starts=None):
    """Per pair, the polls from its start until it is flagged, the flagging poll included: 1 when
    the first poll after its start flags it, 2 one poll later, ...; -1 when never flagged (or
    flagged before its start). The start is the pair's first interval with bytes, or ``starts``
    (per pair: the interval in which its elephant traffic began, -1 for none)."""
    start = start_intervals(counts) if starts is None else np.asarray(starts)
    first = first_flags(flags)
    return np.where((first >= 0) & (start >= 0) & (first >= start), first - start + 1, -1)


def pair_scores(labels, flags):
    """Pair-level accuracy, precision and recall of 'ever flagged' against ``labels`` (True =
    elephant), with the counts behind them. Precision is None without any flagged pair, recall
    None without any elephant."""
    labels = np.asarray(labels, dtype=bool)
    predicted = np.asarray(flags, dtype=bool).reshape(len(labels), -1).any(axis=1)
    tp = int((predicted & labels).sum())
    fp = int((predicted & ~labels).sum())
    fn = int((~predicted & labels).sum())
    tn = int((~predicted & ~labels).sum())
    n = len(labels)
    return {"pairs": n, "elephants": int(labels.sum()), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "accuracy": (tp + tn) / n if n else None,
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None}
