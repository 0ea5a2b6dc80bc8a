"""``sdnmpi-sim score-flows --span`` (simulator/slidescore.py): at the span itself the runs and the
scores are `train_flows`' own (so the 1 s rows are "Results"'); at half the span the same
instances are read twice as often; `window_label` at one poll a window is the counters' label; the
CLI prints its tables and refuses a span that is no whole multiple of the interval in one line."""
import json

import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.flows import counterlog, sliding
from sdnmpi.simulator import cli, score_flows, slidescore, train_flows

RATE = flows.DEFAULT_LINK_RATE


def test_at_the_span_itself_the_runs_are_train_flows_own():
    mine, began = slidescore.dataset(["permutation"], 2, 0, RATE, 1.0, 1.0, train_flows.TRACE_DIR)
    theirs = train_flows.dataset(["permutation"], 2, 0, RATE, 1.0, train_flows.TRACE_DIR)
    for a, b, t in zip(mine["permutation"], theirs["permutation"], began["permutation"]):
        assert (a.counts == b.counts).all() and (a.labels == b.labels).all() and (a.starts == b.starts).all()
        assert (np.isnan(t) == ~a.labels).all()
        assert (np.floor(t[a.labels]) == a.starts[a.labels]).all()     # the start's poll interval


def test_at_half_the_span_the_same_instances_are_read_twice_as_often():
    one, began = slidescore.dataset(["halo3d"], 1, 0, RATE, 1.0, 1.0, train_flows.TRACE_DIR)
    half, began2 = slidescore.dataset(["halo3d"], 1, 0, RATE, 0.5, 1.0, train_flows.TRACE_DIR)
    a, b = one["halo3d"][0], half["halo3d"][0]
    assert a.pairs == b.pairs and (a.labels == b.labels).all()
    assert np.allclose(np.nan_to_num(began["halo3d"][0]), np.nan_to_num(began2["halo3d"][0]))
    assert b.counts.shape[1] in (2 * a.counts.shape[1] - 3, 2 * a.counts.shape[1] - 2)
    # the same bytes in all (the noise is per reading: within a few %)
    assert b.counts.sum() == pytest.approx(a.counts.sum(), rel=0.05)
    assert (b.starts[b.labels] == np.floor(began2["halo3d"][0][b.labels] / 0.5)).all()


def test_the_scores_at_the_span_are_the_results():
    report = slidescore.simulated(flows.DEFAULT_MODEL, 1.0, 1.0, ["permutation"], [0], 12, RATE, train_flows.TRACE_DIR)
    s = report["permutation"]["learned"]
    # "Results" (docs/flows.md): permutation, learned: 524 pairs, 87 elephants, 0.989, 0.935
    assert (s["pairs"], s["elephants"], round(s["accuracy"], 3), round(s["precision"], 3)) == (524, 87, 0.989, 0.935)
    assert s["within_2_spans"] == s["within_2"] and s["timely_accuracy_spans"] == s["timely_accuracy"]
    assert 1.0 < s["delay_exact_s"]["median"] < 2.0 and s["delay_exact_s"]["max"] <= 2.0


def test_window_label_at_one_poll_is_the_counters_label():
    rng = np.random.default_rng(3)
    counts = np.where(rng.random((30, 25)) < 0.6, rng.uniform(0, 1, (30, 25)), 0.0) * 1000
    for got, want in zip(slidescore.window_label(counts, 1000.0, 1), counterlog.label(counts, 1000.0)):
        assert (got == want).all()


def test_window_label_needs_a_whole_window_at_the_line():
    link = 1000.0
    # 1000 bytes a poll's link, 2 polls a window: a window at 10 % holds 200 bytes; a burst of one
    # poll (250) fills such a window but has no busy poll on both sides of any window holding it
    short = np.array([[20, 0, 250, 0, 0, 0.0]])
    assert not slidescore.window_label(short, link, 2)[0].any()
    long_ = np.array([[20, 60, 150, 150, 150, 20.0]])
    labels, starts = slidescore.window_label(long_, link, 2)
    assert labels.tolist() == [True] and starts.tolist() == [0]


def test_the_cli_prints_the_sliding_tables(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["score-flows", "--interval", "0.5", "--span", "1", "--patterns", "permutation",
                     "--instances", "2", "--report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "polls every 0.5 s, windows of 1 s" in text and "| permutation | learned, phase 1 |" in text
    doc = json.loads(out.read_text())
    assert doc["span_s"] == 1.0 and set(doc["patterns"]["permutation"]) >= {"learned", "threshold", "split"}


def test_a_span_that_is_no_multiple_is_one_line(capsys):
    assert cli.main(["score-flows", "--interval", "0.5", "--span", "0.7", "--patterns", "permutation",
                     "--instances", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--sdnmpi-flow-span 0.7 s is not a whole multiple" in err and "\n" not in err


@pytest.mark.parametrize("argv, words", [
    (["--patterns", "spiral"], "unknown pattern"),
    (["--model", "/nonexistent/model.json"], "cannot read the model"),
])
def test_span_bad_input_is_one_line_as_without_it(argv, words, capsys):
    """score-flows --span takes its settings and reports its errors as score-flows does without it."""
    assert cli.main(["score-flows", "--interval", "0.5", "--span", "1", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_sliding_scores_one_run_as_the_controller_would():
    """`Sliding` (the offline classifier of score-flows --span) is `sliding_flags` with the run's totals."""
    data, _began = slidescore.dataset(["two-phases"], 1, 0, RATE, 0.5, 1.0, train_flows.TRACE_DIR)
    run = data["two-phases"][0]
    clf = flows.load_model(flows.DEFAULT_MODEL, link_rate=RATE, interval=1.0)
    got = sliding.Sliding(clf, 2).flags(run.counts, train_flows.totals(run))
    assert (got == sliding.sliding_flags(clf, run.counts, 2, flows.endpoint_totals(run.counts, run.pairs))).all()
    assert got.any() and score_flows.slidescore is slidescore
