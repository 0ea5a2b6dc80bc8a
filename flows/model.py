"""The learned classifier's weights file: plain JSON, never pickle.

    {"format": "sdnmpi-flows-model", "version": 8, "window": 32, "recent": 4, "min_age": 1,
     "floor": [0.02, 0.1], "scaling": "link-interval", "weights": [4 + 19 numbers], "bias": number,
     "cutoff": 0.5, "trained": {...}}

Version 8: version 7's inputs, and a ``floor`` [young, old]: a pair is newly flagged only when its
latest interval carries at least that share of the link, young at its first whole interval, old
after (`classify.LearnedClassifier`, `classify.FLOOR_AGE`). Version 7:
version 6's inputs with the last one split by the pair's age, young and old
(`classify.aged_features`). Version 6: version 5's inputs, then the label's test on the latest
interval (>= 10 % of the link after a busy one) times the pair's share of its endpoints' bytes
(`classify.line_features`).
Version 5: version 4's inputs, then three of the pair's share of its endpoints' bytes
(`classify.host_features`; the classifier needs the pairs' `classify.endpoint_totals`).
Version 4: the inputs are `classify.busy_features` over ``window`` intervals (``recent`` of them
raw, then features that exist from a pair's first polls), ages counted from the pair's first busy
interval (`classify.BUSY` of the link); no flag before ``min_age`` intervals past it. Still read:
version 3 (`classify.early_features`: the same with ages from the pair's first bytes), version 2
(`classify.pair_features`, no min_age) and version 1 (the last ``window`` scaled intervals, one
weight each).

`load_model` raises `ModelError` with one line for a missing, malformed or mismatched file;
`load_or_fallback` turns that into one log line and the threshold classifier.
"""
import json
import logging
import os

from .. import numeric
from .classify import DEFAULT_INTERVAL, DEFAULT_LINK_RATE, FEATURES, LearnedClassifier, ThresholdClassifier

LOG = logging.getLogger(__name__)

FORMAT = "sdnmpi-flows-model"
VERSION = 8                 # what save_model writes
VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8)  # what load_model reads
SCALING = "link-interval"
MAX_WINDOW = 1000
DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.json")  # shipped


class ModelError(ValueError):
    """The weights file cannot be used (one line)."""


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
    version = doc.get("version")
    if isinstance(version, bool) or version not in VERSIONS:
        raise ModelError(f"{path}: model version {version!r}, this code reads "
                         f"{', '.join(map(str, VERSIONS))}")
    if doc.get("scaling") != SCALING:
        raise ModelError(f"{path}: scaling {doc.get('scaling')!r}, this code reads {SCALING!r}")
    window, weights = doc.get("window"), doc.get("weights")
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_WINDOW:
        raise ModelError(f"{path}: window must be an integer in 1..{MAX_WINDOW}, got {window!r}")
    recent = doc.get("recent") if version >= 2 else None
    if version >= 2 and (isinstance(recent, bool) or not isinstance(recent, int) or not 1 <= recent <= window):
        raise ModelError(f"{path}: recent must be an integer in 1..{window} (the window), got {recent!r}")
    extra = FEATURES[version][1] if recent is not None else 0
    inputs, what = (window, "the window") if recent is None else (recent + extra, f"recent + {extra}")
    if not isinstance(weights, list) or len(weights) != inputs:
        got = len(weights) if isinstance(weights, list) else type(weights).__name__
        raise ModelError(f"{path}: weights must be a list of {inputs} numbers ({what}), got {got}")
    weights = [numeric.finite(w, f"{path}: weights[{i}]", ModelError) for i, w in enumerate(weights)]
    bias = numeric.finite(doc.get("bias"), f"{path}: bias", ModelError)
    cutoff = numeric.finite(doc.get("cutoff", 0.5), f"{path}: cutoff", ModelError)
    if not 0 < cutoff < 1:
        raise ModelError(f"{path}: cutoff must be in (0, 1), got {cutoff}")
    min_age = doc.get("min_age", 0) if version >= 3 else 0
    if isinstance(min_age, bool) or not isinstance(min_age, int) or not 0 <= min_age < window:
        raise ModelError(f"{path}: min_age must be an integer in 0..{window - 1}, got {min_age!r}")
    floor = doc.get("floor") if version >= 8 else [0.0, 0.0]
    if not isinstance(floor, list) or len(floor) != 2:
        raise ModelError(f"{path}: floor must be a list of 2 shares of the link (young, old), got {floor!r}")
    floor = [numeric.finite(f, f"{path}: floor[{i}]", ModelError) for i, f in enumerate(floor)]
    if not all(0 <= f < 1 for f in floor):
        raise ModelError(f"{path}: floor must be shares of the link in [0, 1), got {floor}")
    return LearnedClassifier(weights, bias, link_rate=link_rate, interval=interval, cutoff=cutoff,
                             history=window if recent is not None else None, recent=recent, version=version,
                             min_age=min_age, floor=floor)


def save_model(path, weights, bias, cutoff=0.5, trained=None, history=None, recent=None, version=VERSION,
               min_age=0, floor=(0.0, 0.0)):
    """Writes a model of ``version`` (2 to 8: ``history``, ``recent`` given) or a version 1 one."""
    doc = {"format": FORMAT, "version": 1 if history is None else version, "scaling": SCALING,
           "window": len(weights) if history is None else history,
           "weights": [float(w) for w in weights], "bias": float(bias), "cutoff": float(cutoff),
           "trained": trained or {}}
    if history is not None:
        doc["recent"] = recent
    if history is not None and version >= 3:
        doc["min_age"] = int(min_age)
    if history is not None and version >= 8:
        doc["floor"] = [float(f) for f in floor]
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
