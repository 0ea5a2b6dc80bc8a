"""bench/flowdetect_trees.py: its models see version 6's inputs, its cached classifier judges a
logistic model exactly as bench/flowdetect_lopo.py's (and so `train-flows`), and the gated and
OR-ed inputs act on the step x share input only where the share reaches the fraction
(docs/flows-mininet.md). Pure Python, no lock."""
import numpy as np
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_context as fc
import flowdetect_lopo as lopo
import flowdetect_trees as trees
from sdnmpi.simulator import train_flows


def _data():
    import flowdetect_nonlinear as nl
    return train_flows.dataset(["shift", "alltoall", "halo3d"], 1, 5, nl.LINK, nl.INTERVAL, train_flows.TRACE_DIR)


def test_a_logistic_model_flags_as_the_cached_unit():
    data = _data()
    train = ["shift", "alltoall"]
    unit = lopo.Cached(fc.VERSION6, data)
    models = trees.Models(fc.VERSION6, data, trees.MODELS["logistic (version 6)"])
    (rule, cv), (want, want_cv) = models.choose_cutoff(data, train), unit.choose_cutoff(data, train)
    assert rule == want and cv == pytest.approx(want_cv)
    model, _ = models.fit(train)
    w, b = unit.fit(train)
    for cutoff in (0.5, 0.7):
        got = train_flows.score(models.classifier(model, None, cutoff), data["halo3d"])
        assert got == train_flows.score(unit.classifier(w, b, cutoff), data["halo3d"])
    assert got["elephants"] > 0


def test_the_gate_and_the_rule_act_where_the_share_reaches_the_fraction():
    rng = np.random.default_rng(0)
    x = rng.random((200, 22))
    x[:100, -1] = 0.1                       # step x share under 0.25 (an all-to-all burst's)
    x[100:, -1] = 0.35                      # a halo pair's rise
    y = (np.arange(200) % 3 == 0).astype(int)   # unrelated to the last input
    w = np.ones(200)
    gated = trees.Gated(0.25).fit(x, y, w)
    added = gated._x(x)[:, -1]
    assert (added[:100] == 0).all() and (added[100:] == 0.35).all()
    assert (trees.Gated(0.25, times=False)._x(x)[:, -1] == np.repeat([0.0, 1.0], 100)).all()
    either = trees.Either(0.25).fit(x, y, w)
    p = either.predict_proba(x)[:, 1]
    assert (p[100:] == 1.0).all() and (p[:100] < 1.0).all()


def test_shares_report_puts_alltoall_steps_under_a_halos(capsys):
    data = _data()
    trees.shares_report(trees.Models(fc.VERSION6, data, None), data)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in capsys.readouterr().out.splitlines()}
    halo, alltoall = rows["halo3d"], rows["alltoall"]
    assert int(halo[1]) > 0 and int(alltoall[1]) > 0
    # a simulated all-to-all pair steps at 1/8 of its hosts' bytes, a halo3d pair at 1/4
    assert float(alltoall[2].split(" / ")[0]) < 0.2 < float(halo[2].split(" / ")[0])
    assert float(alltoall[3]) < 0.25 < float(halo[3])
