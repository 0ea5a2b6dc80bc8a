"""bench/flows_false_alarms.py, `flowtraffic.pattern_sends` and `flowtraffic.simulated`: the sends an
instance runs are the ones `pattern_sends` draws and the ones `simulated` returns (so the script sees
the same runs as training and score-flows), the longest heavy run and peak of exact cumulative bytes,
and the kinds a false alarm is sorted into (a burst under one interval, flagged on its tail or over
the line; a pair paced just under the line). Pure Python, no lock."""
import numpy as np

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flows_false_alarms as fa
from sdnmpi.primitives import fattree
from sdnmpi.simulator import flowtraffic, train_flows

RATE = 125e6


def test_pattern_sends_are_the_instances_sends():
    graph = fattree.kary(4)
    run = flowtraffic.instance("two-phases", 7, RATE, 1.0, train_flows.TRACE_DIR, graph)
    sends = flowtraffic.pattern_sends("two-phases", np.random.default_rng(7), RATE, 1.0, train_flows.TRACE_DIR)
    pair_list, times, cum = flowtraffic.simulate(graph, sends, RATE)
    assert pair_list == run.pairs
    labels = ~np.isnan(flowtraffic.heavy_starts(times, cum, RATE, 1.0))
    assert (labels == run.labels).all()
    # `simulated` hands the script those sends and that time model with the run (no second simulation)
    sim = flowtraffic.simulated("two-phases", 7, RATE, 1.0, train_flows.TRACE_DIR, graph)
    assert sim.sends == sends and (sim.times == times).all() and (sim.cum == cum).all()
    assert (sim.run.counts == run.counts).all() and sim.run.pairs == run.pairs


def test_simulated_at_a_random_phase_returns_the_delayed_sends_it_ran():
    graph = fattree.kary(4)
    plain = flowtraffic.simulated("shift", 5, RATE, 1.0, train_flows.TRACE_DIR, graph)
    late = flowtraffic.simulated("shift", 5, RATE, 1.0, train_flows.TRACE_DIR, graph, phase=True)
    offsets = {round(b.start - a.start, 9) for a, b in zip(plain.sends, late.sends)}
    assert len(offsets) == 1 and 0 < offsets.pop() < 1.0
    assert flowtraffic.simulate(graph, late.sends, RATE)[2].tolist() == late.cum.tolist()
    assert (late.run.labels == ~np.isnan(flowtraffic.heavy_starts(late.times, late.cum, RATE, 1.0))).all()


def test_phases_tag_wire_ups_shift_permutation_and_mice():
    sends = flowtraffic.pattern_sends("two-phases", np.random.default_rng(3), RATE, 1.0, train_flows.TRACE_DIR)
    n_pairs = len({(s.src, s.dst) for s in sends})
    tags = fa.phases("two-phases", 3, RATE, 1.0, sends, n_pairs)
    assert tags[:n_pairs] == ["wire-up"] * n_pairs
    assert tags.count("shift") == 16 and tags.count("permutation") == 16
    assert tags[-1] == "mice" and len(tags) == len(sends)
    # the permutation starts after the shift (a pause of 2-6 intervals after it)
    first_perm = min(s.start for s, t in zip(sends, tags) if t == "permutation")
    assert first_perm > max(s.start for s, t in zip(sends, tags) if t == "shift")


def test_longest_heavy_run_and_peak():
    times = np.array([0.0, 0.5, 1.2, 1.4, 3.0])
    # 0-0.5 s idle, 0.5-1.2 s at the full link, 1.2-1.4 s at 5 %, 1.4-3.0 s at 12 %
    rates = np.array([0.0, 1.0, 0.05, 0.12]) * RATE
    row = np.concatenate([[0.0], np.cumsum(rates * np.diff(times))])
    longest, peak, began = fa.longest_heavy(times, row, RATE)
    assert np.isclose(longest, 1.6) and np.isclose(peak, 1.0) and np.isclose(began, 1.4)
    longest, _, began = fa.longest_heavy(times[:3], row[:3], RATE)
    assert np.isclose(longest, 0.7) and np.isclose(began, 0.5)


def test_kinds():
    assert fa.kind(0.7, 1.0, 1.0, 0.05) == fa.KINDS[0]      # a 0.7 s burst flagged on its 5 % tail
    assert fa.kind(0.96, 1.0, 1.0, 0.23) == fa.KINDS[1]     # a 0.96 s burst flagged at 23 %
    assert fa.kind(0.0, 0.094, 1.0, 0.11) == fa.KINDS[2]    # paced at 9.4 %: near the line
    assert fa.kind(0.0, 0.05, 1.0, 0.11) == fa.KINDS[3]     # never near it
    assert fa.length_bin(0.3) == "0.0-0.5" and fa.length_bin(0.95) == "0.9-1.0"


def test_two_phases_false_alarms_are_bursts():
    """One seed, a few instances: every two-phases false alarm is a burst under one interval;
    none is a pair paced under the line."""
    recs, counts, _lengths, _where, pairs, mice, bursts = fa.false_alarms(
        "two-phases", [0], 2, RATE, 1.0, fa.flows.DEFAULT_MODEL)
    assert recs and set(counts) <= set(fa.KINDS[:2]) and sum(bursts.values()) >= len(recs)
    assert all(r["longest_heavy_intervals"] <= 1.0 and r["peak_share"] >= 0.1 for r in recs)
    assert pairs > mice > 0


def test_phase_moves_the_polls_not_the_traffic():
    """instance(phase=True): the same sends, pairs and labels (one offset for all sends changes no
    rate), the polls at another point of them: some elephant's start poll moves, and the counters
    differ; the other draws of the instance stay as they were."""
    graph = fattree.kary(4)
    moved = 0
    for seed in range(12):
        plain = flowtraffic.instance("shift", seed, RATE, 1.0, train_flows.TRACE_DIR, graph)
        shifted = flowtraffic.instance("shift", seed, RATE, 1.0, train_flows.TRACE_DIR, graph, phase=True)
        assert plain.pairs == shifted.pairs and (plain.labels == shifted.labels).all()
        assert abs(plain.counts.sum() / shifted.counts.sum() - 1) < 0.05     # the same bytes, other noise
        moved += int((plain.starts != shifted.starts).any())
    assert moved > 0
