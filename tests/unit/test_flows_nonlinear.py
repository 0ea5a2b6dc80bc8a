"""bench/flowdetect_nonlinear.py: nonlinear candidates for the learned classifier are judged with
the shipped model's inputs, gates and cutoff rule (docs/flows-mininet.md). Pure Python, no lock."""
import os

import numpy as np
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_nonlinear as nl
from sdnmpi import flows
from sdnmpi.flows import counterlog
from sdnmpi.simulator import train_flows

RECORDED = os.path.join(os.path.dirname(__file__), "..", "data", "flows", "mininet-two-phases.jsonl.gz")


def test_a_wrapped_logistic_regression_is_the_shipped_classifier():
    from sklearn.linear_model import LogisticRegression
    shipped = flows.load_model(flows.DEFAULT_MODEL, link_rate=nl.LINK, interval=nl.INTERVAL)
    model = LogisticRegression()
    model.classes_ = np.array([False, True])
    model.coef_, model.intercept_ = shipped.weights[None, :], np.array([shipped.bias])
    wrapped = nl.Scored(model, shipped.cutoff, shipped.floor)
    header, pairs, counts = counterlog.read(counterlog.file_lines(RECORDED))
    counts = counts * nl.LINK / header["link_rate_Bps"]        # the log's shares of its link, on LINK
    totals = flows.endpoint_totals(counts, pairs)
    assert wrapped.probability(counts, totals) == pytest.approx(shipped.probability(counts, totals))
    flags = wrapped.flags(counts, totals)
    assert (flags == shipped.flags(counts, totals)).all() and flags.any() and not flags.all()
    model.intercept_ = np.array([shipped.bias - 50.0])        # the gates stay, the model decides
    assert not wrapped.flags(counts, totals).any()


def test_the_rule_picks_the_cutoff_train_flows_picks():
    patterns = ["shift", "alltoall", "allreduce-mice", "halo3d", "cg"]
    data = train_flows.dataset(patterns, 1, 5, nl.LINK, nl.INTERVAL, train_flows.TRACE_DIR)
    train, held = ["shift", "alltoall", "allreduce-mice"], ["halo3d", "cg"]
    every = {"mininet-halo3d": data["halo3d"], "mininet-alltoall": data["alltoall"]}
    rows, cutoff = nl.evaluate(nl._logistic, 0, data, train, held, every, train_flows.CUTOFFS)
    want, cv = train_flows.choose_cutoff(data, train, nl.LINK, nl.INTERVAL, train_flows.DEFAULT_WINDOW,
                                         train_flows.DEFAULT_RECENT, 0)
    assert cutoff == want
    assert {c: r["cv"] for c, r in rows.items()} == pytest.approx(cv)
    weights, bias = train_flows.fit([data[p] for p in train], train_flows.DEFAULT_WINDOW,
                                    train_flows.DEFAULT_RECENT, nl.LINK * nl.INTERVAL, 0)
    learned = train_flows._learned(weights, bias, nl.LINK, nl.INTERVAL, cutoff, train_flows.DEFAULT_WINDOW,
                                   train_flows.DEFAULT_RECENT)
    s = train_flows.score(learned, data["halo3d"] + data["cg"])
    assert (rows[cutoff]["accuracy"], rows[cutoff]["within_2"]) == pytest.approx((s["accuracy"], s["within_2"]))
    assert rows[cutoff]["halo3d"] == pytest.approx(train_flows.score(learned, data["halo3d"])["within_2"])
