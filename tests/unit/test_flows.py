"""sdnmpi.flows: the threshold and learned classifiers on counter series with known labels,
detection-delay bookkeeping, and the weights file's error handling (pure Python, no lock)."""
import json
import logging

import numpy as np
import pytest

from sdnmpi import flows

LINK = 100.0  # bytes per second of the host link; interval 1 s, so a full interval is 100 bytes


def test_scaled_windows_pad_with_zeros_and_clip_to_the_link():
    counts = np.array([[50.0, 100.0, 250.0]])
    x = flows.scaled_windows(counts, 2, LINK)
    assert x.shape == (1, 3, 2)
    assert x[0].tolist() == [[0.0, 0.5], [0.5, 1.0], [1.0, 1.0]]


def test_threshold_flags_by_window_bytes_against_the_link_share():
    clf = flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=2, fraction=0.1)
    counts = np.array([
        [100, 100, 100, 0],  # full rate: over 10 % of the window's capacity at once
        [5, 5, 5, 5],        # 5 %: never
        [0, 15, 15, 0],      # 15 %: 15 of 20 allowed after one interval, 30 after two
        [0, 0, 0, 0],        # idle
    ], dtype=float)
    f = clf.flags(counts)
    assert f.shape == counts.shape
    assert flows.first_flags(f).tolist() == [0, -1, 2, -1]
    assert flows.start_intervals(counts).tolist() == [0, 0, 1, -1]
    assert flows.detection_delays(counts, f).tolist() == [0, -1, 1, -1]


@pytest.mark.parametrize("kwargs", [{"window": 0}, {"window": 1.5}, {"fraction": 0},
                                    {"fraction": 1.5}, {"link_rate": -1}, {"interval": 0}])
def test_threshold_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        flows.ThresholdClassifier(**kwargs)


def test_learned_is_a_sigmoid_unit_gated_on_current_bytes():
    # p = sigmoid(10 * mean(last 4 scaled intervals) - 5): flagged once the mean reaches 0.5
    clf = flows.LearnedClassifier([2.5] * 4, -5.0, link_rate=LINK, interval=1.0)
    counts = np.array([[100, 100, 100, 0, 100], [40, 40, 40, 40, 40]], dtype=float)
    p = clf.probability(counts)
    assert p[0, 1] == pytest.approx(0.5) and p[0, 2] > 0.5 and p[0, 0] < 0.5
    assert clf.flags(counts).tolist() == [[False, True, True, False, True],
                                          [False, False, False, False, False]]
    always = flows.LearnedClassifier([0.0] * 4, 5.0, link_rate=LINK, interval=1.0)
    assert not always.flags(np.zeros((1, 3))).any()  # an idle pair is never flagged


def test_pair_scores_count_ever_flagged_pairs():
    labels = np.array([True, True, False, False])
    flagged = np.array([[False, True], [False, False], [True, False], [False, False]])
    s = flows.pair_scores(labels, flagged)
    assert (s["tp"], s["fn"], s["fp"], s["tn"]) == (1, 1, 1, 1)
    assert s["accuracy"] == 0.5 and s["precision"] == 0.5 and s["recall"] == 0.5
    none = flows.pair_scores(np.array([False]), np.array([[False]]))
    assert none["precision"] is None and none["recall"] is None and none["accuracy"] == 1.0


def _model(tmp_path, **changes):
    doc = {"format": flows.FORMAT, "version": flows.VERSION, "scaling": "link-interval",
           "window": 3, "weights": [1.0, 2.0, 3.0], "bias": -1.0, "cutoff": 0.5}
    doc.update(changes)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_valid_model_file_loads(tmp_path):
    clf = flows.load_model(_model(tmp_path), link_rate=LINK, interval=1.0)
    assert isinstance(clf, flows.LearnedClassifier) and clf.window == 3
    assert clf.weights.tolist() == [1.0, 2.0, 3.0] and clf.bias == -1.0


@pytest.mark.parametrize("changes, words", [
    ({"format": "pickle"}, "not an sdnmpi-flows-model"),
    ({"version": 2}, "version 2"),
    ({"scaling": "per-series"}, "scaling"),
    ({"window": 4}, "list of 4 numbers"),
    ({"window": 0}, "window must be"),
    ({"weights": [1.0, "x", 3.0]}, "weights[1]"),
    ({"weights": [1.0, float("nan"), 3.0]}, "weights[1]"),
    ({"bias": None}, "bias"),
    ({"cutoff": 1.0}, "cutoff"),
])
def test_mismatched_model_files_are_one_line_errors(tmp_path, changes, words):
    with pytest.raises(flows.ModelError) as err:
        flows.load_model(_model(tmp_path, **changes))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_missing_and_malformed_files_are_one_line_errors(tmp_path):
    for path, words in [(tmp_path / "absent.json", "cannot read"),
                        (tmp_path / "bad.json", "not a JSON model"),
                        (tmp_path / "bin.json", "not a JSON model"),
                        (tmp_path / "list.json", "format field")]:
        if path.name == "bad.json":
            path.write_text('{"format": "sdnmpi-flows-model",\n "weights": [1,')
        elif path.name == "bin.json":
            path.write_bytes(b"\x80\x04\x95pickle")
        elif path.name == "list.json":
            path.write_text("[1, 2]")
        with pytest.raises(flows.ModelError) as err:
            flows.load_model(path)
        assert words in str(err.value) and "\n" not in str(err.value)


def test_load_or_fallback_logs_one_line_and_returns_the_threshold(tmp_path, caplog):
    bad = _model(tmp_path, window=5)
    with caplog.at_level(logging.WARNING, logger="sdnmpi.flows"):
        clf = flows.load_or_fallback(bad, link_rate=LINK, interval=2.0, window=3, fraction=0.2)
    assert isinstance(clf, flows.ThresholdClassifier)
    assert (clf.window, clf.fraction, clf.link_rate, clf.interval) == (3, 0.2, LINK, 2.0)
    records = [r for r in caplog.records if r.name.startswith("sdnmpi.flows")]
    assert len(records) == 1 and "\n" not in records[0].getMessage()
    assert str(bad) in records[0].getMessage() and "falling back" in records[0].getMessage()
    caplog.clear()
    good = flows.load_or_fallback(_model(tmp_path), link_rate=LINK)
    assert isinstance(good, flows.LearnedClassifier) and not caplog.records


def test_the_shipped_model_loads():
    clf = flows.load_model(flows.DEFAULT_MODEL)
    assert isinstance(clf, flows.LearnedClassifier) and clf.window >= 2
