"""bench/flowdetect_context.py: cross-pair inputs for the learned classifier are computed from one
poll's pairs as documented, judged exactly like the shipped model, and the counter label's rules
differ where documented (docs/flows-mininet.md). Pure Python, no lock."""
import numpy as np
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_context as fc
import flowdetect_nonlinear as nl
from sdnmpi import flows
from sdnmpi.flows import classify, counterlog
from sdnmpi.simulator import flowtraffic, train_flows

# a -> b and its reverse, a -> c, c -> b; two intervals, bytes of a 100-byte link-interval
PAIRS = [("a", "b"), ("b", "a"), ("a", "c"), ("c", "b")]
COUNTS = np.array([[20.0, 10.0],
                   [5.0, 0.0],
                   [0.5, 30.0],
                   [40.0, 0.0]])


def test_context_of_one_poll():
    ctx = fc.context(COUNTS, PAIRS, 100.0)
    assert ctx.shape == (4, 2, fc.SIDES)
    assert (ctx[..., :2] == flows.endpoint_totals(COUNTS, PAIRS)).all()
    assert ctx[:, 0, 2].tolist() == [5.0, 20.0, 0.0, 0.0]            # the reverse pair's bytes
    assert ctx[:, :, 3].tolist() == [[40.0, 30.0]] * 4                 # the busiest pair's
    # busy (>= 1 % of the link) pairs of the source: a sends to b and c (0.5 is not busy), then both
    assert ctx[0, :, 4].tolist() == [1.0, 2.0] and ctx[2, :, 4].tolist() == [1.0, 2.0]
    assert ctx[0, :, 5].tolist() == [2.0, 1.0]                         # b receives from a and c, then a
    assert ctx[0, :, 6].tolist() == [20.0, 30.0] and ctx[0, :, 7].tolist() == [40.0, 10.0]
    # the other pairs of the host that began their busy stretch with it: a -> c began later; c -> b
    # and a -> b both began at interval 0
    assert ctx[0, :, 8].tolist() == [0.0, 0.0] and ctx[2, :, 8].tolist() == [0.0, 0.0]
    assert ctx[0, :, 9].tolist() == [40.0, 0.0] and ctx[3, :, 9].tolist() == [20.0, 0.0]


def test_extra_inputs():
    ctx = fc.context(COUNTS, PAIRS, 100.0)
    assert fc.extra_inputs("none", COUNTS, ctx, 100.0).shape == (4, 2, 0)
    x = fc.extra_inputs("reverse+job max", COUNTS, ctx, 100.0)
    assert x.shape == (4, 2, 4)
    L = classify._log_share
    assert x[0, 0] == pytest.approx([L(0.05), L(0.125), 0.5, 0.5 * L(0.2)])
    assert x[2, 0, 0] == 0.0                                           # a -> c has no reverse counted
    assert fc.stretch_ages(np.array([[0.0, 0.02, 0.5, 0.005, 0.3, 0.3, 0.3]])).tolist() == [[0, 0, 1, 0, 0, 1, 2]]


def test_the_shipped_variant_judges_like_train_flows_and_restores_the_model_code():
    patterns = ["shift", "alltoall", "allreduce-mice", "halo3d", "cg"]
    data = train_flows.dataset(patterns, 1, 5, nl.LINK, nl.INTERVAL, train_flows.TRACE_DIR)
    train, held = ["shift", "alltoall", "allreduce-mice"], ["halo3d", "cg"]
    every = {"mininet-halo3d": data["halo3d"], "mininet-alltoall": data["alltoall"]}
    totals, version = train_flows.totals, flows.VERSION
    rows, rule = fc.evaluate(fc.SHIPPED, data, every, train, held)
    assert (train_flows.totals, flows.VERSION, fc.VERSION in classify.FEATURES) == (totals, version, False)
    want, cv = train_flows.choose_cutoff(data, train, nl.LINK, nl.INTERVAL, train_flows.DEFAULT_WINDOW,
                                         train_flows.DEFAULT_RECENT, 0)
    assert rule == want and rows[rule]["cv"] == pytest.approx(cv[rule])
    weights, bias = train_flows.fit([data[p] for p in train], train_flows.DEFAULT_WINDOW,
                                    train_flows.DEFAULT_RECENT, nl.LINK * nl.INTERVAL, 0)
    learned = train_flows._learned(weights, bias, nl.LINK, nl.INTERVAL, rule, train_flows.DEFAULT_WINDOW,
                                   train_flows.DEFAULT_RECENT)
    assert rows[rule]["halo3d"] == pytest.approx(train_flows.score(learned, data["halo3d"])["within_2"])
    more, _ = fc.evaluate("none", data, every, train, held)              # version 5's inputs, other weights
    assert more[0.6] != rows[0.6]


def test_counter_label_rules():
    link = 100.0
    lone = [[0.0, 8.0, 8.0, 11.0, 8.0, 8.0, 0.0]]        # one interval over 10 % in a run at 8 %
    two = [[0.0, 3.0, 12.0, 11.0, 6.0, 0.0, 0.0]]        # two over 10 %
    mean = [[0.0, 3.0, 14.0, 7.0, 6.0, 0.0, 0.0]]        # one over, a mean of two over
    got = {name: [rule(np.array(c), link)[0][0] for c in (lone, two, mean)] for name, rule in fc.RULES.items()}
    assert got == {"one whole interval (the label)": [True, True, True], "two consecutive": [False, True, False],
                   "mean of two consecutive": [False, True, True]}
    assert fc.label_two(np.array(two), link)[1][0] == counterlog.label(np.array(two), link)[1][0] == 1


def test_counter_labelled_relabels_simulated_runs_only():
    link = nl.LINK * nl.INTERVAL
    # a pair at 9 % of its link whose counter reads 11 % once: a mouse by its exact rate
    near = flowtraffic.Run(np.array([[0.0, 0.09, 0.09, 0.11, 0.09, 0.0]]) * link, np.array([False]),
                           np.array([-1]), [("a", "b")])
    out = fc.counter_labelled({"cg": [near], "mininet-shift": [near]}, link)
    assert out["cg"][0].labels.tolist() == [True] and out["cg"][0].starts.tolist() == [2]
    assert out["mininet-shift"][0] is near                 # a counter log keeps its (counter) labels


def test_both_scripts_judge_the_shipped_model_alike(capsys):
    """The scripts' tables over the recorded data (bench/results): the logistic unit of
    flowdetect_nonlinear and the shipped variant here (version 7) are the shipped model, at its cutoff."""
    assert nl.main(["--only", "logistic (shipped)"]) == 0
    unit = capsys.readouterr().out.splitlines()[-1].split("|")[2:]
    assert fc.main(["--only", fc.SHIPPED]) == 0
    none = capsys.readouterr().out.splitlines()[-1].split("|")[2:]
    shipped = flows.load_model(flows.DEFAULT_MODEL)
    assert unit == none and float(unit[0]) == shipped.cutoff


def test_misses_sorts_elephants_by_when_they_were_flagged():
    counts = np.array([[0.0, 50.0, 50.0, 50.0, 0.0, 0.0, 0.0],      # flagged by its first poll
                       [0.0, 5.0, 5.0, 11.0, 5.0, 5.0, 0.0]])       # one interval over 10 %: never
    labels, starts = counterlog.label(counts, 100.0)
    run = flowtraffic.Run(counts, labels, starts, [("a", "b"), ("c", "d")])
    got = fc.misses([run], flows.ThresholdClassifier(link_rate=100.0, interval=1.0), 100.0)
    assert got == {"late": [(0.05, 1, False)], "on time": [(0.5, 1, True)]}


def test_the_line_variants_are_version_6s_input_and_version_7s_split_by_age():
    counts = np.array([[0.5, 12.0, 12.0, 5.0, 5.0, 5.0, 12.0], [0.0, 0.0, 36.0, 5.0, 5.0, 5.0, 5.0]])
    pairs = [("a", "b"), ("a", "c")]
    ctx = fc.context(counts, pairs, 100.0)
    share = fc.extra_inputs(fc.VERSION6, counts, ctx, 100.0)
    v6 = flows.line_features(counts, 32, 4, 100.0, flows.endpoint_totals(counts, pairs))[..., -1]
    assert share[..., 0] == pytest.approx(v6) and share[0, :, 0].tolist() == pytest.approx(
        [0, 0, 0.25, 0, 0, 0, 12 / 17])
    aged = fc.extra_inputs(fc.SHIPPED, counts, ctx, 100.0)
    v7 = flows.aged_features(counts, 32, 4, 100.0, flows.endpoint_totals(counts, pairs))[..., -2:]
    assert fc.SHIPPED == "line aged" and aged == pytest.approx(v7)      # version 7's last two inputs
    # a -> b's first busy interval is poll 1: poll 2 is age 1 (young), poll 6 age 5 (old)
    assert aged[0, :, 0].tolist() == pytest.approx([0, 0, 0.25, 0, 0, 0, 0])
    assert aged[0, :, 1].tolist() == pytest.approx([0, 0, 0, 0, 0, 0, 12 / 17])


def test_a_recorded_log_it_cannot_take_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """A first log whose header this code does not take (another version) stops every mode, --misses
    too, with one line naming it (counterlogs.folders_at), not a traceback."""
    folder = tmp_path / "flowdetect-x" / "counters"
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"format": "%s", "version": 99}\n' % counterlog.FORMAT)
    monkeypatch.setattr(nl, "RESULTS", str(tmp_path))
    for argv in (["--misses"], ["--labels"]):
        assert fc.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("flowdetect_context: " + str(folder / "a.jsonl")) and err.count("\n") == 1
