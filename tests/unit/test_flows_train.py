"""The training side of flow identification: the counter simulator (simulator/flowtraffic.py),
``sdnmpi-sim train-flows`` and the shipped model's held-out accuracy (pure Python, no lock)."""
import gzip
import json
import os

import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.primitives import fattree
from sdnmpi.simulator import cli, counterlogs, flowtraffic, train_flows
from sdnmpi.simulator.flowtraffic import Send

RATE = 1000.0  # bytes/s of every link
HELD_OUT_FLOOR = 0.95  # issue 16's goal: the shipped model's pair accuracy on its held-out patterns
RESULTS = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results")
# the Mininet counter logs the shipped model is trained on (with the simulated runs; docs/flows.md)
MODEL_LOGS = [os.path.join(RESULTS, "flowdetect-%s" % stamp, "counters")
              for stamp in ("20261128T072002Z", "20261128T080439Z", "20261128T080700Z", "20261128T095015Z")]


@pytest.fixture(scope="module")
def graph():
    return fattree.kary(4)


def test_two_sends_from_one_host_share_its_link_and_a_cap_holds(graph):
    sends = [Send(0, 5, 2000.0, 0.0, np.inf), Send(0, 9, 1000.0, 0.0, np.inf),
             Send(3, 4, 500.0, 1.0, 100.0)]
    pairs, times, cum = flowtraffic.simulate(graph, sends, RATE)
    assert pairs == [(0, 5), (0, 9), (3, 4)]
    # 0->5 and 0->9 split host 0's link: 500 B/s each until 0->9 ends at 2 s, then 0->5 alone
    assert np.interp(2.0, times, cum[1]) == pytest.approx(1000.0)
    assert np.interp(2.0, times, cum[0]) == pytest.approx(1000.0)
    assert np.interp(3.0, times, cum[0]) == pytest.approx(2000.0)
    # the capped send starts at 1 s and moves 100 B/s: done at 6 s
    assert np.interp(1.0, times, cum[2]) == 0.0
    assert np.interp(3.5, times, cum[2]) == pytest.approx(250.0)
    assert times[-1] == pytest.approx(6.0) and cum[2, -1] == pytest.approx(500.0)


def test_counters_without_noise_add_up_to_the_bytes_sent(graph):
    sends = [Send(0, 5, 2500.0, 0.3, np.inf), Send(2, 7, 700.0, 0.0, 200.0)]
    _, times, cum = flowtraffic.simulate(graph, sends, RATE)
    counts = flowtraffic.counters(times, cum, 1.0, np.random.default_rng(0), poll_jitter=0.0,
                                  rate_noise=0.0)
    assert counts.sum(axis=1) == pytest.approx([2500.0, 700.0])
    assert counts[0, :4].tolist() == pytest.approx([700.0, 1000.0, 800.0, 0.0])
    assert (counts >= 0).all()


def test_a_slower_fabric_throttles_only_the_flows_that_cross_it(graph):
    # hosts 0 and 1 hang off one edge switch (one hop, host links only); 2 -> 5 crosses switch links
    sends = [Send(0, 1, 1000.0, 0.0, np.inf), Send(2, 5, 1000.0, 0.0, np.inf)]
    _, times, cum = flowtraffic.simulate(graph, sends, RATE, fabric_rate=RATE / 4)
    assert np.interp(1.0, times, cum[0]) == pytest.approx(1000.0)     # the host link's rate
    assert np.interp(1.0, times, cum[1]) == pytest.approx(250.0)      # the fabric's
    assert times[-1] == pytest.approx(4.0)
    assert flowtraffic.cross_edge(graph, [(0, 1), (2, 5), (1, 0), (1, 2)]).tolist() == [False, True, False, True]


def _rises(run, link=125e6):
    """(mean rate of the 2 intervals before, share of its hosts' counted bytes the interval after)
    of every elephant of ``run`` that crawled busy under 10 % of the link for the 2 intervals before
    its start (the time model's exact label): a rise from a crawl."""
    c = run.counts / link
    totals = flows.endpoint_totals(run.counts, run.pairs)
    share = np.divide(run.counts[..., None], totals, out=np.zeros_like(totals), where=totals > 0).min(axis=2)
    out = []
    for i in np.nonzero(run.labels)[0]:
        k = run.starts[i]
        crawl = c[i, max(0, k - 2):k]
        if k >= 2 and k + 1 < c.shape[1] and ((crawl >= 0.01) & (crawl < 0.1)).all():
            out.append((float(crawl.mean()), float(share[i, k + 1])))
    return out


def test_only_the_contended_variants_have_elephants_that_rise_from_a_crawl(graph):
    """The halo rise of Mininet (docs/flows-mininet.md): none on the simulator's non-blocking fabric,
    where a host's flows share only its own link and end together; on the contended fabric, halo
    pairs crawl under the line, at a third to a half of their hosts' counted bytes, then rise."""
    rises = {}
    for p in ("halo2d", "halo3d", "halo2d-contended", "alltoall-contended"):
        runs = [flowtraffic.instance(p, seed, 125e6, 1.0, train_flows.TRACE_DIR, graph) for seed in range(6)]
        rises[p] = [r for run in runs for r in _rises(run)]
        if p in flowtraffic.VARIANT_OF:     # counted as the controller counts: no pair on one edge switch
            assert all(flowtraffic.cross_edge(graph, run.pairs).all() for run in runs)
    assert rises["halo2d"] == rises["halo3d"] == []
    halo = rises["halo2d-contended"]
    assert len(halo) >= 20 and np.median([r for r, _ in halo]) < 0.09
    assert 0.3 <= np.median([s for _, s in halo]) <= 0.55
    assert len(rises["alltoall-contended"]) >= 20


def test_the_variants_are_seeded_after_the_other_patterns():
    """Adding a pattern kept the others' data (train_flows.dataset seeds by `SEED_ORDER`)."""
    first = ("allreduce-mice", "alltoall", "barrier-mice", "cg", "halo2d", "halo3d", "permutation", "shift",
             "two-phases")
    assert flowtraffic.SEED_ORDER[:len(first)] == first and set(flowtraffic.SEED_ORDER) == set(flowtraffic.PATTERNS)
    assert set(flowtraffic.VARIANT_OF) == set(flowtraffic.SEED_ORDER[len(first):])


@pytest.mark.parametrize("pattern", sorted(flowtraffic.PATTERNS))
def test_every_pattern_yields_labelled_series(pattern):
    counts, labels, starts, _pairs = flowtraffic.instance(pattern, 7, 125e6, 1.0, train_flows.TRACE_DIR)
    assert counts.ndim == 2 and counts.shape[0] == len(labels) == len(starts) and (counts >= 0).all()
    assert (counts.sum(axis=1) > 0).all()  # every pair sent something
    assert ((starts >= 0) == labels).all()
    # an elephant sends >= 10 % of the link through a whole interval from its start: the counters
    # show >= 10 % (rate noise aside) one or two intervals on; a mouse never sends that much
    # through two whole intervals in a row
    heavy = counts / 125e6 >= 0.9 * flowtraffic.HEAVY_FRACTION
    idx = np.arange(len(counts))
    last = counts.shape[1] - 1
    seen = heavy[idx, np.minimum(starts + 1, last)] | heavy[idx, np.minimum(starts + 2, last)]
    assert not labels.any() or seen[labels].mean() > 0.85
    two = counts[:, 1:] / 125e6 >= 1.1 * flowtraffic.HEAVY_FRACTION
    assert not ((two[:, 1:] & two[:, :-1]).any(axis=1) & ~labels).mean() > 0.05


def test_the_label_is_a_run_of_one_interval_at_a_tenth_of_the_link():
    times = np.array([0.0, 0.5, 1.0, 1.6, 2.0, 3.0, 4.0])
    cum = np.cumsum(np.array([
        [0, 50, 50, 60, 40, 0, 0],     # 100 B/s from 0 to 2 s: a run of 2 s
        [0, 50, 0, 60, 0, 0, 0],       # 0.5 s and 0.6 s at 100 B/s, broken: no run of 1 s
        [0, 0, 0, 0, 0, 9, 9],         # 9 B/s (9 %): never heavy
        [0, 0, 0, 6, 4, 10, 0],        # 10 B/s from 1 s to 3 s: a run from 1 s
    ], dtype=float), axis=1)
    began = flowtraffic.heavy_starts(times, cum, 100.0, 1.0)
    assert began[0] == 0.0 and np.isnan(began[1]) and np.isnan(began[2]) and began[3] == 1.0


def test_the_shipped_model_meets_its_documented_floor_on_held_out_patterns():
    doc = json.loads(open(flows.DEFAULT_MODEL, encoding="utf-8").read())
    trained = doc["trained"]
    held = trained["test_patterns"]
    assert held and not set(held) & set(trained["train_patterns"])
    # no pattern is held out in one source and trained on in the other
    base = {p[len(counterlogs.PREFIX):] if p.startswith(counterlogs.PREFIX) else p for p in held}
    assert not {counterlogs.PREFIX + p for p in base} & set(trained["train_patterns"])
    simulated = [p for p in held if p in flowtraffic.PATTERNS]
    assert set(simulated) == set(train_flows.TEST_PATTERNS)
    data = train_flows.dataset(simulated, trained["instances"], trained["seed"], trained["link_rate_Bps"],
                               trained["interval_s"], train_flows.TRACE_DIR)
    runs = [r for p in simulated for r in data[p]]
    learned = flows.load_model(flows.DEFAULT_MODEL, link_rate=trained["link_rate_Bps"],
                               interval=trained["interval_s"])
    threshold = flows.ThresholdClassifier(link_rate=trained["link_rate_Bps"],
                                          interval=trained["interval_s"])
    got, base = train_flows.score(learned, runs), train_flows.score(threshold, runs)
    assert got["accuracy"] >= HELD_OUT_FLOOR
    # per pattern: every simulated held-out pattern but cg (0.947: pairs astride the 10 % line,
    # docs/flows.md "What remains"); version 7 missed two-phases too (0.929), so this fails on it
    each = {p: train_flows.score(learned, data[p])["accuracy"] for p in simulated}
    assert {p for p, a in each.items() if a < HELD_OUT_FLOOR} <= {"cg"}
    assert got["accuracy"] > base["accuracy"]
    assert trained["held_out_accuracy"] >= HELD_OUT_FLOOR
    # within 2 polls: an elephant counts as right only when flagged by the second poll after its start
    assert got["within_2"] >= HELD_OUT_FLOOR
    assert got["timely_accuracy"] >= HELD_OUT_FLOOR and got["timely_accuracy"] > base["timely_accuracy"]
    assert got["delay_median"] <= 2
    # the held-out patterns recorded on Mininet: every pair right but a few, no mouse flagged, and
    # more elephants within 2 polls than the threshold (short of the goal: docs/flows.md)
    logs, rate, interval = counterlogs.dataset(MODEL_LOGS)
    runs = [r for p in counterlogs.TEST_PATTERNS for r in logs[p]]
    learned = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=interval)
    got = train_flows.score(learned, runs)
    base = train_flows.score(flows.ThresholdClassifier(link_rate=rate, interval=interval), runs)
    assert got["accuracy"] >= HELD_OUT_FLOOR and got["fp"] == 0
    assert got["within_2"] > base["within_2"] and got["timely_accuracy"] > base["timely_accuracy"]
    assert train_flows.score(learned, logs["mice"])["fp"] == 0


def test_the_shipped_model_on_every_recorded_halo3d_log():
    """halo3d (held out) on every log recorded so far (20 runs, docs/flows-mininet.md): version 7
    flags 97 % of its elephants within 2 polls (version 6: 88 %, version 5: 75 %, the threshold
    64 %), nearly all in the end, and few mice (those of runs on a loaded machine, where pairs
    hovered under the line)."""
    logs, rate, interval = counterlogs.dataset(counterlogs.folders_at(sorted(
        os.path.join(RESULTS, d, "counters") for d in os.listdir(RESULTS)
        if d.startswith("flowdetect-") and os.path.isdir(os.path.join(RESULTS, d, "counters"))),
        *counterlogs.RECORDED_RATE))
    runs = logs["halo3d"]
    assert len(runs) >= 14
    learned = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=interval)
    got = train_flows.score(learned, runs)
    base = train_flows.score(flows.ThresholdClassifier(link_rate=rate, interval=interval), runs)
    assert got["recall"] >= 0.99 and got["precision"] >= 0.95
    assert got["within_2"] >= 0.95 > 0.70 > base["within_2"]


def test_the_shipped_model_is_what_the_documented_command_writes(tmp_path):
    out = tmp_path / "model.json"
    assert cli.main(["train-flows", "--counter-logs", *MODEL_LOGS, "--with-simulated", "--out", str(out),
                     "--seed", "0"]) == 0
    made = json.loads(out.read_text())
    shipped = json.loads(open(flows.DEFAULT_MODEL, encoding="utf-8").read())
    assert (made["version"], made["window"], made["recent"], made["cutoff"], made["min_age"]) == (
        shipped["version"], shipped["window"], shipped["recent"], shipped["cutoff"], shipped["min_age"])
    assert made["trained"]["cutoff_cv_timely_accuracy"] == pytest.approx(
        shipped["trained"]["cutoff_cv_timely_accuracy"], abs=1e-3)
    assert made["weights"] == pytest.approx(shipped["weights"], rel=1e-3, abs=1e-6)  # lbfgs across versions
    assert made["bias"] == pytest.approx(shipped["bias"], rel=1e-3)


def test_train_flows_is_deterministic_and_reports_every_pattern(tmp_path, capsys):
    a, b, rep = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "r.json"
    argv = ["train-flows", "--instances", "2", "--seed", "3", "--window", "4", "--recent", "2"]
    assert cli.main(argv + ["--out", str(a), "--report", str(rep)]) == 0
    assert cli.main(argv + ["--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert (flows.load_model(a).window, flows.load_model(a).recent) == (4, 2)
    report = json.loads(rep.read_text())["patterns"]
    assert set(report) == set(flowtraffic.PATTERNS) | {"all held-out"}
    assert {report[p]["split"] for p in train_flows.TEST_PATTERNS} == {"test"}
    assert {report[v]["split"] for v in flowtraffic.VARIANT_OF} == {"train"}
    assert "| shift | train | learned |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["--test-patterns", "spiral"], "unknown test pattern"),
    (["--test-patterns", ",".join(flowtraffic.PATTERNS)], "nothing left to train on"),
    (["--trace-dir", "/nonexistent"], "no cg-c-128.tar.gz"),
    (["--out", "/nonexistent/dir/model.json", "--instances", "1"], "cannot write"),
    (["--window", "3", "--out", "/nonexistent/model.json"], "--recent 4 must be between 1 and --window 3"),
])
def test_train_flows_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert cli.main(["train-flows", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["--window", "0"], ["--instances", "x"], ["--interval", "-1"]])
def test_train_flows_bad_numbers_exit_2(argv):
    with pytest.raises(SystemExit) as err:
        cli.main(["train-flows", *argv])
    assert err.value.code == 2


def test_a_fabric_variant_is_held_out_with_its_pattern(tmp_path):
    data = train_flows.dataset(["shift", "alltoall", "allreduce-mice", "halo2d", "halo2d-contended"], 1, 5, 125e6,
                               1.0, train_flows.TRACE_DIR)
    report, _ = train_flows.train(str(tmp_path / "m.json"), window=4, recent=2, test_patterns=("halo2d",), data=data)
    assert (report["halo2d"]["split"], report["halo2d-contended"]["split"]) == ("test", "test")
    assert json.loads((tmp_path / "m.json").read_text())["trained"]["test_patterns"] == ["halo2d", "halo2d-contended"]


def test_folders_at_keeps_the_logs_of_one_rate(tmp_path):
    """The recorded-log analyses read the logs of one link rate (counterlogs.dataset refuses a mix):
    the folders of another rate, and folders without logs, are left out."""
    made = {}
    for name, rate in (("a", 5e6), ("b", 625000.0), ("c", 5e6)):
        folder = tmp_path / name
        folder.mkdir()
        log = flows.CounterLog(str(folder / "x.jsonl"), interval_s=1.0, link_rate_Bps=rate)
        log.poll(1, {}, {}, {})
        log.close()
        made[name] = str(folder)
    (tmp_path / "empty").mkdir()
    every = sorted(made.values()) + [str(tmp_path / "empty")]
    assert counterlogs.folders_at(every, 5e6, 1.0) == [made["a"], made["c"]]
    assert counterlogs.folders_at(every, 625000.0, 1.0) == [made["b"]]
    assert counterlogs.folders_at(every, 5e6, 0.5) == []


def test_folders_at_leaves_out_an_unreadable_log_and_refuses_a_header_it_cannot_take(tmp_path):
    """A folder whose first log's file cannot be read (a cut gzip stream, as while the bench writes it)
    is left out; one whose first log reads but is not a counter log this code takes (another version)
    is flows.CounterLogError naming the file, one line, as counterlogs.dataset would say: leaving it
    out would drop its runs from an analysis silently."""
    good, cut, newer = (tmp_path / n for n in ("good", "cut", "newer"))
    for folder in (good, cut, newer):
        folder.mkdir()
        log = flows.CounterLog(str(folder / "x.jsonl"), interval_s=1.0, link_rate_Bps=5e6)
        log.poll(1, {}, {}, {})
        log.close()
    first = (good / "x.jsonl").read_text().splitlines()[0]
    (cut / "a.jsonl.gz").write_bytes(gzip.compress(first.encode())[:12])   # sorts before x.jsonl
    assert counterlogs.folders_at([str(good), str(cut)], 5e6, 1.0) == [str(good)]
    (newer / "a.jsonl").write_text(json.dumps(dict(json.loads(first), version=99)) + "\n")
    with pytest.raises(flows.CounterLogError) as err:
        counterlogs.folders_at([str(good), str(cut), str(newer)], 5e6, 1.0)
    assert str(err.value).startswith(str(newer / "a.jsonl") + ": ") and "version 99" in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(flows.CounterLogError, match="version 99"):
        counterlogs.dataset([str(newer)])
