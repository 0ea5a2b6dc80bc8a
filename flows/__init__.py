"""sdnmpi.flows: hint-free elephant-flow identification from per-host-pair byte counters.

    counts = np.array(...)                      # pairs x intervals, bytes per polling interval
    clf = flows.load_or_fallback(flows.DEFAULT_MODEL, link_rate=125e6, interval=1.0)
    totals = flows.endpoint_totals(counts, pairs)   # pairs: [(src, dst), ...] of the rows
    flagged = clf.flags(counts, totals)         # pairs x intervals, True where flagged
    first = flows.first_flags(flagged)          # per pair: first flagged interval or -1
    book = flows.PairCounters(clf)              # the controller's side: one call per poll
    newly = book.poll({(a, b): byte_count})     # -> {pair: delay in polls}, once per pair

Pure numpy (no Ryu, no scikit-learn at run time). See docs/flows.md.
"""
from .classify import (DEFAULT_FRACTION, DEFAULT_INTERVAL, DEFAULT_LINK_RATE, DEFAULT_WINDOW,
                       LearnedClassifier, ThresholdClassifier, aged_features, busy_features, early_features,
                       endpoint_totals, host_features, line_features, pair_ages, pair_features, scaled_windows)
from .cost import counting_entries, poll_bytes
from .counterlog import CounterLog, CounterLogError
from .detect import detection_delays, first_flags, pair_scores, start_intervals
from .model import (DEFAULT_MODEL, FORMAT, VERSION, VERSIONS, ModelError, load_model, load_or_fallback,
                    save_model)
from .tracker import PairCounters

__all__ = ["CounterLog", "CounterLogError", "DEFAULT_FRACTION", "DEFAULT_INTERVAL", "DEFAULT_LINK_RATE",
           "DEFAULT_MODEL", "DEFAULT_WINDOW", "FORMAT", "VERSION", "LearnedClassifier", "ModelError",
           "PairCounters", "ThresholdClassifier", "VERSIONS", "aged_features", "busy_features", "counting_entries",
           "detection_delays", "early_features", "endpoint_totals", "first_flags", "host_features", "line_features",
           "load_model", "load_or_fallback", "pair_ages", "pair_features", "pair_scores", "poll_bytes", "save_model",
           "scaled_windows", "start_intervals"]
