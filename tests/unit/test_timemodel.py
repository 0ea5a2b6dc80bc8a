"""simulator/timemodel.py: max-min fair progressive filling, on hand-computable cases."""
import numpy as np
import pytest

from sdnmpi.simulator import timemodel


def incidence(flow_links):
    flows = [f for f, links in enumerate(flow_links) for _ in links]
    links = [l for links in flow_links for l in links]
    return np.array(flows, dtype=np.intp), np.array(links, dtype=np.intp)


def test_one_flow_alone_takes_bytes_over_bandwidth():
    ef, el = incidence([[0, 1, 2]])
    bw = np.array([100.0, 50.0, 100.0])  # the 50 B/s link is the bottleneck
    assert timemodel.completion([1000], ef, el, bw) == pytest.approx([20.0])


def test_two_flows_sharing_a_link_take_twice_as_long():
    ef, el = incidence([[0, 1], [2, 1]])
    bw = np.array([100.0, 100.0, 100.0])
    assert timemodel.completion([1000, 1000], ef, el, bw) == pytest.approx([20.0, 20.0])
    ef, el = incidence([[0], [2]])
    assert timemodel.completion([1000, 1000], ef, el, bw) == pytest.approx([10.0, 10.0])


def test_three_flow_max_min_rates():
    # link 0 (10 B/s): flows a, b; link 1 (30 B/s): flows b, c.
    # progressive filling: link 0 saturates first at 5 each, then c rises to 30 - 5 = 25
    ef, el = incidence([[0], [0, 1], [1]])
    rates = timemodel.maxmin_rates(ef, el, 3, np.array([10.0, 30.0]))
    assert rates == pytest.approx([5.0, 5.0, 25.0])


def test_rates_are_recomputed_when_a_flow_finishes():
    # same three flows; a has 50 B, b 100 B, c 500 B.
    # until t=10: a, b at 5, c at 25 (a done, b has 50 left, c 250 left);
    # then link 0 carries b alone: b may take 10 but link 1 is shared max-min: b 10, c 20;
    # b finishes at t=15 (c has 150 left), then c alone at 30: t = 15 + 5 = 20
    ef, el = incidence([[0], [0, 1], [1]])
    done = timemodel.completion([50, 100, 500], ef, el, np.array([10.0, 30.0]))
    assert done == pytest.approx([10.0, 15.0, 20.0])


def test_a_flow_on_no_link_is_instant_and_zero_bytes_take_no_time():
    ef, el = incidence([[0], []])
    assert timemodel.maxmin_rates(ef, el, 2, np.array([10.0]))[1] == np.inf
    assert timemodel.completion([0, 0], ef, el, np.array([10.0])) == pytest.approx([0.0, 0.0])


@pytest.mark.parametrize("seed", range(20))
def test_random_instances_are_feasible_and_max_min_fair(seed):
    # the defining property: no link is over-full, and every flow has a bottleneck link that is
    # full and on which no other flow gets more than it does
    rng = np.random.default_rng(seed)
    n_links, n_flows = int(rng.integers(2, 12)), int(rng.integers(1, 25))
    bw = rng.choice([10.0, 25.0, 40.0, 100.0], size=n_links)
    flow_links = [sorted(rng.choice(n_links, size=int(rng.integers(1, min(4, n_links) + 1)),
                                    replace=False).tolist()) for _ in range(n_flows)]
    ef, el = incidence(flow_links)
    rates = timemodel.maxmin_rates(ef, el, n_flows, bw)
    load = np.bincount(el, weights=rates[ef], minlength=n_links)
    assert (load <= bw * (1 + 1e-9)).all()
    for f, links in enumerate(flow_links):
        assert rates[f] > 0
        assert any(load[l] >= bw[l] * (1 - 1e-9)
                   and all(rates[g] <= rates[f] * (1 + 1e-9)
                           for g, other in enumerate(flow_links) if l in other)
                   for l in links), f"flow {f} has no bottleneck"
