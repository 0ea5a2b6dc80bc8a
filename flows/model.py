"""The learned classifier's weights file: plain JSON, never pickle.

    {"format": "sdnmpi-flows-model", "version": 1, "window": 8, "scaling": "link-interval",
     "weights": [8 numbers], "bias": number, "cutoff": 0.5, "trained": {...}}

`load_model` raises `ModelError` with one line for a missing, malformed or mismatched file;
`load_or_fallback` turns that into one log line and the threshold classifier.
"""
import json
import logging
import math
import os

from .classify import (DEFAULT_INTERVAL, DEFAULT_LINK_RATE, LearnedClassifier,
                       ThresholdClassifier)

LOG = logging.getLogger(__name__)

FORMAT = "sdnmpi-flows-model"
VERSION = 1
SCALING = "link-interval"
MAX_WINDOW = 1000
DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.json")  # shipped


class ModelError(ValueError):
    """The weights file cannot be used (one line)."""


def _number(path, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelError(f"{path}: {key} must be a finite number, got {value!r}")
    return float(value)


def load_model(path, link_rate=DEFAULT_LINK_RATE, interval=DEFAULT_INTERVAL):
    """A `LearnedClassifier` from the JSON file at ``path``."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the model: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not a JSON model: {' '.join(str(exc).split())}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"{path}: not an {FORMAT} file (format field missing or wrong)")
    if doc.get("version") != VERSION:
        raise ModelError(f"{path}: model version {doc.get('version')!r}, this code reads {VERSION}")
    if doc.get("scaling") != SCALING:
        raise ModelError(f"{path}: scaling {doc.get('scaling')!r}, this code reads {SCALING!r}")
    window, weights = doc.get("window"), doc.get("weights")
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_WINDOW:
        raise ModelError(f"{path}: window must be an integer in 1..{MAX_WINDOW}, got {window!r}")
    if not isinstance(weights, list) or len(weights) != window:
        got = len(weights) if isinstance(weights, list) else type(weights).__name__
        raise ModelError(f"{path}: weights must be a list of {window} numbers (the window), got {got}")
    weights = [_number(path, f"weights[{i}]", w) for i, w in enumerate(weights)]
    bias = _number(path, "bias", doc.get("bias"))
    cutoff = _number(path, "cutoff", doc.get("cutoff", 0.5))
    if not 0 < cutoff < 1:
        raise ModelError(f"{path}: cutoff must be in (0, 1), got {cutoff}")
    return LearnedClassifier(weights, bias, link_rate=link_rate, interval=interval, cutoff=cutoff)


def save_model(path, weights, bias, cutoff=0.5, trained=None):
    doc = {"format": FORMAT, "version": VERSION, "scaling": SCALING, "window": len(weights),
           "weights": [float(w) for w in weights], "bias": float(bias), "cutoff": float(cutoff),
           "trained": trained or {}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def load_or_fallback(path, link_rate=DEFAULT_LINK_RATE, interval=DEFAULT_INTERVAL, **threshold):
    """The learned classifier from ``path``, or (one warning line) the threshold classifier built
    with ``threshold`` (window, fraction)."""
    try:
        return load_model(path, link_rate=link_rate, interval=interval)
    except ModelError as exc:
        fallback = ThresholdClassifier(link_rate=link_rate, interval=interval, **threshold)
        LOG.warning("flow detection: %s; falling back to %r", exc, fallback)
        return fallback
