"""bench/flowdetect_lopo.py: its cached features judge as `train-flows` judges the shipped model
(the same cutoff, fold scores and weights), so its every-pattern-held-out table is the shipped
model's rule applied per pattern (docs/flows-mininet.md). Pure Python, no lock."""
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_context as fc
import flowdetect_lopo as lopo
import flowdetect_nonlinear as nl
from sdnmpi import flows
from sdnmpi.simulator import counterlogs, train_flows


def test_cached_features_judge_like_train_flows():
    patterns = ["shift", "alltoall", "allreduce-mice", "halo3d"]
    data = train_flows.dataset(patterns, 1, 5, nl.LINK, nl.INTERVAL, train_flows.TRACE_DIR)
    train = ["shift", "alltoall", "allreduce-mice"]
    cache = lopo.Cached(fc.SHIPPED, data)
    rule, cv = cache.choose_cutoff(data, train)
    want, want_cv = train_flows.choose_cutoff(data, train, nl.LINK, nl.INTERVAL, train_flows.DEFAULT_WINDOW,
                                              train_flows.DEFAULT_RECENT, 0)
    assert rule == want and cv == pytest.approx(want_cv)
    weights, bias = cache.fit(train)
    shipped_w, shipped_b = train_flows.fit([data[p] for p in train], train_flows.DEFAULT_WINDOW,
                                           train_flows.DEFAULT_RECENT, nl.LINK * nl.INTERVAL, 0)
    assert weights == pytest.approx(shipped_w, rel=1e-6, abs=1e-9) and bias == pytest.approx(shipped_b)
    learned = train_flows._learned(weights, bias, nl.LINK, nl.INTERVAL, rule, train_flows.DEFAULT_WINDOW,
                                   train_flows.DEFAULT_RECENT)
    assert learned.version == flows.VERSION
    got = train_flows.score(cache.classifier(weights, bias, rule), data["halo3d"])
    assert got == train_flows.score(learned, data["halo3d"]) and got["elephants"] > 0


def test_a_pattern_and_its_mininet_logs_are_held_out_together():
    assert lopo.base_of(counterlogs.PREFIX + "halo3d") == lopo.base_of("halo3d") == "halo3d"
    # a simulated fabric variant is held out with the pattern it varies
    assert lopo.base_of("halo2d-contended") == lopo.base_of(counterlogs.PREFIX + "halo2d") == "halo2d"
    assert lopo.base_of("alltoall-contended") == "alltoall"
