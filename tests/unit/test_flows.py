"""sdnmpi.flows: the threshold and learned classifiers on counter series with known labels,
detection-delay bookkeeping, and the weights file's error handling (pure Python, no lock)."""
import json
import logging
import os

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
    assert flows.detection_delays(counts, f).tolist() == [1, -1, 2, -1]  # polls, the flagging one counted
    assert flows.detection_delays(counts, f, starts=[1, -1, 2, 0]).tolist() == [-1, -1, 1, -1]


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
    doc = {"format": flows.FORMAT, "version": 1, "scaling": "link-interval",
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
    ({"version": 9}, "version 9, this code reads 1, 2, 3, 4, 5, 6, 7, 8"),
    ({"version": 8, "recent": 2, "weights": [0.0] * 21, "min_age": 1}, "floor must be a list of 2"),   # no floor
    ({"version": 8, "recent": 2, "weights": [0.0] * 21, "min_age": 1, "floor": [0.1]}, "floor must be a list of 2"),
    ({"version": 8, "recent": 2, "weights": [0.0] * 21, "min_age": 1, "floor": [0.02, "x"]}, "floor[1]"),
    ({"version": 8, "recent": 2, "weights": [0.0] * 21, "min_age": 1, "floor": [0.02, 1.0]}, "floor must be shares"),
    ({"version": True}, "version True"),
    ({"version": 2}, "recent must be an integer in 1..3"),                        # v2 without recent
    ({"version": 2, "recent": 2}, "list of 10 numbers (recent + 8)"),
    ({"version": 2, "recent": 4, "weights": [0.0] * 12}, "recent must be an integer in 1..3"),
    ({"version": 3, "recent": 2, "weights": [0.0] * 10}, "list of 16 numbers (recent + 14)"),
    ({"version": 3, "recent": 2, "weights": [0.0] * 16, "window": 20, "min_age": 20}, "min_age must be"),
    ({"version": 3, "recent": 2, "weights": [0.0] * 16, "window": 20, "min_age": -1}, "min_age must be"),
    ({"version": 3, "recent": 2, "weights": [0.0] * 16, "window": 20, "min_age": 1.5}, "min_age must be"),
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


def test_features_see_the_history_only_and_a_v2_model_round_trips(tmp_path):
    # one pair: 3 intervals at half the link, then 3 idle, then a full one (history 4, recent 2)
    counts = np.array([[50, 50, 50, 0, 0, 0, 100]], dtype=float)
    f = flows.pair_features(counts, 4, 2, LINK)
    assert f.shape == (1, 7, 2 + 8)
    # poll 2: recent [0.5, 0.5], cum 1.5 (>= 1), age 2, mean rate 0.5
    assert f[0, 2].tolist() == pytest.approx([0.5, 0.5, 1.5, 1, 0, 0, 1, 0, 0.5, np.log(151) / np.log(201)])
    # poll 6: the first three intervals are out of the history: cum 1, age 0 (a new start)
    assert f[0, 6, :8].tolist() == pytest.approx([0.0, 1.0, 1.0, 1, 1, 0, 0, 0])
    weights = np.linspace(-1, 1, 10)
    flows.save_model(tmp_path / "m.json", weights, 0.5, cutoff=0.7, history=4, recent=2, version=2)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.window, clf.recent, clf.cutoff) == (4, 2, 0.7)
    assert clf.probability(counts) == pytest.approx(1 / (1 + np.exp(-(f @ weights + 0.5))))


def test_early_features_exist_from_a_pairs_first_polls_and_a_v3_model_round_trips(tmp_path):
    # one pair: idle, a partial first interval (30 %), then 20 % a poll (history 8, recent 2)
    counts = np.array([[0, 30, 20, 20, 20, 20]], dtype=float)
    f = flows.early_features(counts, 8, 2, LINK)
    assert f.shape == (1, 6, 2 + 14)
    L = lambda v: np.log1p(100 * v) / np.log(101)  # noqa: E731
    assert flows.pair_ages(counts, 8)[0].tolist() == [0, 0, 1, 2, 3, 4]  # idle pairs have age 0
    # poll 1 (age 0): recent [0, 0.3]; only the age-0 flag and the cumulative features are set
    assert f[0, 1].tolist() == pytest.approx([0, 0.3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.3, L(0.3)])
    # poll 2 (age 1): the first whole interval (0.2) and the partial one (0.3)
    assert f[0, 2, 2:8].tolist() == pytest.approx([0, 1, 0, 0, L(0.2), L(0.3)])
    # poll 5 (age >= 3): latest, means over 3 and 4 intervals, the smaller of the last two
    assert f[0, 5, 5:14].tolist() == pytest.approx([1, 0, 0, 0, 0, L(0.2), L(0.2), L(0.2), L(0.2)])
    assert f[0, 5, 14:].tolist() == pytest.approx([1.1, L(1.1 / 5)])
    weights = np.zeros(16)
    weights[7] = 20.0                       # flag at age 1 on the first whole interval only
    flows.save_model(tmp_path / "m.json", weights, -10.0, cutoff=0.5, history=8, recent=2, min_age=1, version=3)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.window, clf.recent, clf.min_age) == (3, 8, 2, 1)
    # age 1 with a whole interval at 20 %: L(0.2) * 20 - 10 > 0; never before age 1
    assert clf.flags(counts).tolist() == [[False, False, True, False, False, False]]
    gated = flows.LearnedClassifier(np.zeros(16), 5.0, link_rate=LINK, history=8, recent=2, version=3, min_age=2)
    assert flows.first_flags(gated.flags(counts)).tolist() == [3]   # every poll passes; age 2 at poll 3


def test_v4_ages_count_from_the_first_busy_interval_so_connection_set_up_does_not_age_a_pair(tmp_path):
    # a few bytes of set-up (0.2 % of the link) two polls ahead of a bulk send at 30 %, then 20 %
    counts = np.array([[0, 0.2, 0, 30, 20, 20]], dtype=float)
    assert flows.pair_ages(counts, 8).tolist() == [[0, 0, 1, 2, 3, 4]]          # from the first bytes
    assert flows.pair_ages(counts, 8, LINK, 0.01).tolist() == [[0, 0, 0, 0, 1, 2]]   # from the first busy one
    v3, v4 = flows.early_features(counts, 8, 2, LINK), flows.busy_features(counts, 8, 2, LINK)
    assert v4.shape == v3.shape == (1, 6, 16)
    L = lambda v: np.log1p(100 * v) / np.log(101)  # noqa: E731
    # poll 4: age 1, as version 3 sees a pair without set-up bytes
    assert v4[0, 4, 2:8].tolist() == pytest.approx([0, 1, 0, 0, L(0.2), L(0.3)])
    assert v3[0, 4, 2:6].tolist() == [0, 0, 0, 1]                                   # v3: age >= 3 already
    weights = np.zeros(16)
    weights[7] = 20.0                       # flag at age 1 on the partial first interval (30 %)
    flows.save_model(tmp_path / "m.json", weights, -10.0, cutoff=0.5, history=8, recent=2, min_age=1, version=4)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.min_age) == (4, 1)
    assert clf.flags(counts).tolist() == [[False, False, False, False, True, False]]
    # min_age counts from the first busy interval too: not at poll 3 (age 0), whatever the weights
    eager = flows.LearnedClassifier(np.zeros(16), 5.0, link_rate=LINK, history=8, recent=2, version=4, min_age=1)
    assert flows.first_flags(eager.flags(counts)).tolist() == [4]


def test_the_shipped_model_loads():
    clf = flows.load_model(flows.DEFAULT_MODEL)
    assert isinstance(clf, flows.LearnedClassifier) and clf.window >= 2


def test_v5_shares_of_the_endpoints_bytes():
    # a -> b and a -> c share a's link, a -> b and d -> b share b's; e -> f is alone
    pairs = [("a", "b"), ("a", "c"), ("d", "b"), ("e", "f")]
    counts = np.array([[0, 30], [0, 10], [0, 30], [20, 20]], dtype=float)
    totals = flows.endpoint_totals(counts, pairs)
    assert totals[:, 1].tolist() == [[40, 60], [40, 10], [30, 60], [20, 20]]
    assert totals[3, 0].tolist() == [20, 20] and totals[0, 0].tolist() == [0, 0]
    x = flows.host_features(counts, 4, 2, LINK, totals)
    assert x.shape == (4, 2, 2 + 14 + 3)
    assert (x[..., :16] == flows.busy_features(counts, 4, 2, LINK)).all()    # version 4's first
    L = lambda v: np.log1p(100 * v) / np.log(101)  # noqa: E731
    # the smaller of the shares of the source's and of the destination's bytes; 0 when idle
    share = [0.5, 0.25, 0.5, 1.0]
    assert x[:, 1, 16].tolist() == pytest.approx(share)
    assert x[:, 1, 17].tolist() == pytest.approx([0.25, 0.125, 0.25, 1.0])     # mean with the idle one before
    assert x[:, 1, 18].tolist() == pytest.approx([s * L(c / LINK) for s, c in zip(share, counts[:, 1])])
    assert x[:3, 0, 16:].tolist() == [[0.0] * 3] * 3
    with pytest.raises(ValueError, match="4 pairs for 3 rows"):
        flows.endpoint_totals(counts[:3], pairs)


def test_a_v5_model_needs_the_endpoint_totals(tmp_path):
    weights = np.zeros(2 + 14 + 3)
    weights[16] = 20.0                       # an elephant: the only pair of its hosts
    flows.save_model(tmp_path / "m.json", weights, -15.0, cutoff=0.5, history=8, recent=2, min_age=1, version=5)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.needs_totals) == (5, True)
    pairs = [("a", "b"), ("c", "b"), ("c", "d")]
    counts = np.array([[0, 30, 30], [0, 0, 30], [0, 30, 30]], dtype=float)
    flags = clf.flags(counts, flows.endpoint_totals(counts, pairs))
    # at poll 2, a -> b and c -> d carry half of b's and of c's bytes: not flagged (c -> b: age 0)
    assert flags[:, 1].tolist() == [False, False, False]       # age 0: min_age 1
    assert flags[:, 2].tolist() == [False, False, False]
    # without c's pairs, a -> b carries all of a's and b's bytes: flagged at its age 1
    assert flows.first_flags(clf.flags(counts[:1], flows.endpoint_totals(counts[:1], pairs[:1]))).tolist() == [2]
    with pytest.raises(ValueError, match="needs the endpoint totals"):
        clf.flags(counts)
    assert not flows.ThresholdClassifier(link_rate=LINK).flags(counts, None)[:, 0].any()


def test_v6_marks_the_labels_line_times_the_share(tmp_path):
    # a -> b crosses 10 % of the link after a busy interval at poll 2; at poll 1 it was not busy before
    pairs = [("a", "b"), ("a", "c")]
    counts = np.array([[0.5, 12, 12, 5], [0, 0, 36, 5]], dtype=float)
    totals = flows.endpoint_totals(counts, pairs)
    x = flows.line_features(counts, 4, 2, LINK, totals)
    assert x.shape == (2, 4, 2 + 14 + 3 + 1)
    assert (x[..., :-1] == flows.host_features(counts, 4, 2, LINK, totals)).all()    # version 5's first
    # poll 0: under the line; poll 1: 12 % after 0.5 % (not busy); poll 2: 12 % after 12 %, a -> b
    # carries 12 of a's 48 bytes (s = 0.25); poll 3: under the line again
    assert x[0, :, -1].tolist() == [0.0, 0.0, 0.25, 0.0]
    assert x[1, :, -1].tolist() == [0.0, 0.0, 0.0, 0.0]       # 36 % after an idle interval
    weights = np.zeros(2 + 14 + 3 + 1)
    weights[-1] = 40.0                       # an elephant: over the line with a share above 1/8
    flows.save_model(tmp_path / "m.json", weights, -5.0, cutoff=0.5, history=4, recent=2, min_age=1, version=6)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.needs_totals) == (6, True)
    assert flows.first_flags(clf.flags(counts, totals)).tolist() == [2, -1]


HALO_PAIRS = [("a", "b"), ("a", "c"), ("a", "d"), ("e", "b"), ("f", "b")]


def halo_rise():
    """Mininet halo3d's late elephants in small (docs/flows-mininet.md): a -> b shares its hosts'
    links with 2 more pairs each, all at 5 % of the link, until the others end and it runs at
    11.5-12 % from poll 7: an elephant by the counter label, from poll 6 (the busy interval
    before its first heavy one), so flagged within 2 polls only if flagged at poll 7."""
    pct = [0, 2, 5, 5, 5, 5, 5, 11.5, 12, 12, 12, 0]
    other = [0, 2, 5, 5, 5, 5, 5, 5, 2, 0, 0, 0]
    return np.array([pct] + [other] * 4, dtype=float)


def test_the_shipped_model_flags_a_halo_pair_at_its_first_heavy_interval():
    counts = halo_rise()
    labels, starts = flows.counterlog.label(counts, LINK)
    assert labels.tolist() == [True, False, False, False, False] and starts[0] == 6
    clf = flows.load_model(flows.DEFAULT_MODEL, link_rate=LINK, interval=1.0)
    first = flows.first_flags(clf.flags(counts, flows.endpoint_totals(counts, HALO_PAIRS)))
    # version 5 flagged it one poll later (poll 8: 3 polls); the others are mice
    assert first.tolist() == [7, -1, -1, -1, -1]


def test_v7_splits_the_line_input_by_the_pairs_age(tmp_path):
    # a -> b: busy from poll 0, under the line at polls 3-5, over it again at poll 6 (age 6: old);
    # a -> c: idle, then 36 % and 12 % at polls 4 and 5 (its first busy interval is poll 4: age 1)
    pairs = [("a", "b"), ("a", "c")]
    counts = np.array([[5, 12, 12, 5, 5, 5, 12], [0, 0, 0, 0, 36, 12, 0]], dtype=float)
    totals = flows.endpoint_totals(counts, pairs)
    v6 = flows.line_features(counts, 8, 2, LINK, totals)
    x = flows.aged_features(counts, 8, 2, LINK, totals)
    assert x.shape == (2, 7, 2 + 14 + 3 + 2)
    assert (x[..., :-2] == v6[..., :-1]).all()                      # version 6's first 21
    assert (x[..., -2] + x[..., -1] == v6[..., -1]).all()           # its last, split in two
    # a -> b crosses the line at poll 1 (age 1: young), poll 2 (age 2: young) and poll 6 (age 6: old)
    assert x[0, :, -2].tolist() == pytest.approx([0, 1, 1, 0, 0, 0, 0])
    assert x[0, :, -1].tolist() == pytest.approx([0, 0, 0, 0, 0, 0, 1])
    # a -> c at poll 5: 12 % after 36 %, age 1, 12 of a's 17 bytes
    assert x[1, :, -2].tolist() == pytest.approx([0, 0, 0, 0, 0, 12 / 17, 0]) and not x[1, :, -1].any()
    weights = np.zeros(2 + 14 + 3 + 2)
    weights[-1] = 40.0                       # only a rise inside a running stretch
    flows.save_model(tmp_path / "m.json", weights, -5.0, cutoff=0.5, history=8, recent=2, min_age=1, version=7)
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.needs_totals, len(clf.weights)) == (7, True, 21)
    assert flows.first_flags(clf.flags(counts, totals)).tolist() == [6, -1]


def test_version_8_floors_a_finished_burst_and_a_pair_under_the_line(tmp_path):
    """Version 8: version 7's inputs and a floor (young, old): a pair is newly flagged only when its
    latest interval carries that share of the link, young at its first whole interval (age 1),
    old from age 2 on. A unit that flags every busy pair (bias 5) shows the floor alone."""
    # a -> b: a burst of 60 % that ended, 1 % left at its first whole interval (age 1);
    # a -> c: 5 %, 1.5 % (age 1), 9 % (age 2), 11 % (age 3), 9 %: over the line at poll 3 only
    pairs = [("a", "b"), ("a", "c")]
    counts = np.array([[0, 60, 1, 1, 0], [5, 1.5, 9, 11, 9]], dtype=float)
    totals = flows.endpoint_totals(counts, pairs)
    weights = np.zeros(2 + 14 + 3 + 2)
    flows.save_model(tmp_path / "m.json", weights, 5.0, cutoff=0.5, history=8, recent=2, min_age=1,
                     floor=(0.02, 0.1))
    assert json.loads((tmp_path / "m.json").read_text())["floor"] == [0.02, 0.1]
    clf = flows.load_model(tmp_path / "m.json", link_rate=LINK, interval=1.0)
    assert (clf.version, clf.floor, clf.needs_totals) == (8, (0.02, 0.1), True)
    assert (clf.inputs(counts, totals) == flows.aged_features(counts, 8, 2, LINK, totals)).all()
    assert flows.first_flags(clf.flags(counts, totals)).tolist() == [-1, 3]
    bare = flows.LearnedClassifier(weights, 5.0, link_rate=LINK, history=8, recent=2, version=8, min_age=1)
    assert bare.floor == (0.0, 0.0)
    assert flows.first_flags(bare.flags(counts, totals)).tolist() == [2, 1]    # at age 1 both
    with pytest.raises(ValueError):
        flows.LearnedClassifier(weights, 5.0, history=8, recent=2, version=8, floor=(0.1, 1.0))


def test_the_shipped_model_is_version_8():
    clf = flows.load_model(flows.DEFAULT_MODEL)
    assert clf.version == flows.VERSION == 8 and clf.floor == (0.02, 0.1)


# a halo3d pair recorded on Mininet (held out of training): 10.0.0.11 -> 10.0.0.9 crawls at 4-5 %
# of its link for 4 intervals, then runs at 14 % holding 0.36 of its hosts' counted bytes
RECORDED = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results", "flowdetect-20261128T080700Z",
                        "counters", "halo3d-learned-1.jsonl.gz")


def test_the_shipped_model_flags_a_recorded_halo3d_rise_within_2_polls():
    header, pairs, counts = flows.counterlog.read(flows.counterlog.file_lines(RECORDED))
    link = header["link_rate_Bps"] * header["interval_s"]
    i = pairs.index(("10.0.0.11", "10.0.0.9"))
    labels, starts = flows.counterlog.label(counts, link)
    assert labels[i] and starts[i] == 9
    assert (counts[i, 6:10] / link).round(2).tolist() == [0.05, 0.05, 0.05, 0.04]
    assert round(counts[i, 10] / link, 2) == 0.14
    clf = flows.load_model(flows.DEFAULT_MODEL, link_rate=header["link_rate_Bps"], interval=header["interval_s"])
    first = flows.first_flags(clf.flags(counts, flows.endpoint_totals(counts, pairs)))
    # flagged at its first heavy interval, poll 10: 2 polls from its start (version 6: poll 11, 3 polls)
    assert first[i] == 10
