"""bench/flowdetect_evidence.py: the evidence gate on hand-made series (a reading over the line
within the wobble of a pair's own mean under it is refused, a rise from a crawl and a pair whose
mean is at the line are not, a pair's first whole interval is never gated), its means against a
plain loop, and its rule with no gate judges as `train-flows` judges version 8 (the same floor,
cutoff and fold scores). Pure Python, no lock."""
import numpy as np
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_context as fc
import flowdetect_evidence as ev
import flowdetect_lopo as lopo
import flowdetect_nonlinear as nl
from sdnmpi import flows
from sdnmpi.simulator import train_flows

LB = ev.LINK_BYTES
GATES = [("ratio", 0.2), ("ratio", 0.5), ("z", 1.0), ("z", 3.0)]


def _last(series, gate):
    counts = np.array([series]) * LB
    return bool(ev.passes(gate, *ev.evidence(counts))[0, -1])


@pytest.mark.parametrize("gate", GATES)
def test_a_noisy_reading_of_a_pair_under_the_line_is_refused(gate):
    # a pair paced at about 9.4 % of its link (simulated cg), one reading at 10.5 %
    assert not _last([0.06, 0.094, 0.090, 0.098, 0.105], gate)
    assert _last([0.06, 0.094, 0.090, 0.098, 0.105], None)


@pytest.mark.parametrize("gate", GATES)
def test_a_rise_from_a_crawl_a_pair_at_the_line_and_a_first_whole_interval_pass(gate):
    assert _last([0.03, 0.05, 0.05, 0.05, 0.105], gate)          # crawl at 5 %, then 10.5 %
    assert _last([0.08, 0.105, 0.11, 0.104, 0.102], gate)        # mean of its whole intervals over 10 %
    assert _last([0.06, 0.105], gate)                            # age 1: never gated
    assert not _last([0.06, 0.096, 0.099, 0.0995], gate)         # steady a little under the line


def test_the_means_are_those_of_the_whole_intervals_since_the_first_busy_one():
    rng = np.random.default_rng(3)
    counts = rng.uniform(0, 0.3, (5, 45)) * LB
    counts[:, :4] = 0.0
    counts[1, 10:14] = 0.001 * LB                    # set-up bytes under the busy line do not start the age
    ages, r0, before, pooled = ev.evidence(counts)
    assert ages.max() == train_flows.DEFAULT_WINDOW - 1       # the window the controller keeps
    x = np.clip(counts / LB, 0, 1)
    for i in range(5):
        for t in range(45):
            a = ages[i, t]
            whole = x[i, t - a + 1:t] if a >= 1 else x[i, :0]
            assert before[i, t] == pytest.approx(whole.mean() if len(whole) else 0.0)
            assert pooled[i, t] == pytest.approx(np.append(whole, x[i, t]).mean())


def test_without_a_gate_the_rule_is_train_flows_version_8():
    patterns = ["shift", "alltoall", "allreduce-mice", "halo3d"]
    data = train_flows.dataset(patterns, 1, 5, nl.LINK, nl.INTERVAL, train_flows.TRACE_DIR)
    train = ["shift", "alltoall", "allreduce-mice"]
    cache = lopo.Cached(fc.SHIPPED, data)
    best, acc, _folds = ev.choose(cache, data, train, gates=(None,))
    floor, cutoff, want = train_flows.choose_decision(data, train, nl.LINK, nl.INTERVAL, train_flows.DEFAULT_WINDOW,
                                                      train_flows.DEFAULT_RECENT, 0)
    assert best == (floor, cutoff, None)
    assert {k: acc[(k[0], k[1], None)] for k in want} == pytest.approx(want)
    weights, bias = cache.fit(train)
    learned = train_flows._learned(weights, bias, nl.LINK, nl.INTERVAL, cutoff, train_flows.DEFAULT_WINDOW,
                                   train_flows.DEFAULT_RECENT, floor)
    got = train_flows.score(ev.Gated(cache, weights, bias).at(cutoff, floor, None), data["halo3d"])
    assert learned.version == flows.VERSION and got == train_flows.score(learned, data["halo3d"])
    assert got["elephants"] > 0
