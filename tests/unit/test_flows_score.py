"""``sdnmpi-sim score-flows`` (simulator/score_flows.py): a weights file scored without training on
the simulator's held-out patterns at any poll interval, and on counter logs (pure Python, no lock)."""
import json
import os
import re

import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.simulator import cli, flowtraffic, score_flows, train_flows

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOC = os.path.join(ROOT, "docs", "flows.md")
LOGS_05 = os.path.join(ROOT, "bench", "results", "flowdetect-20261130T085106Z", "counters")
# the documented tables print 3 decimals: a figure agrees when it is within half of the last digit
ROUNDING = 0.0005
# the columns after pattern, split (or interval) and classifier; the second delay column (p95 in
# "Results", max in the 0.5 s table) is not compared
COLUMNS = ("pairs", "elephants", "accuracy", "precision", "recall", "delay_median", None, "within_2",
           "timely_accuracy")


def _number(text):
    return None if text.strip() == "-" else float(text)


def documented(section, intervals=False):
    """{(pattern, classifier, interval s): {column: value}} of the simulated held-out rows of
    docs/flows.md's ``section`` table (one whose rows start | pattern | split | classifier |, or
    | pattern | interval | classifier | with ``intervals``)."""
    text = open(DOC, encoding="utf-8").read()
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 + len(COLUMNS) or cells[0] not in flowtraffic.PATTERNS:
            continue
        if intervals:
            key = (cells[0], cells[2], float(re.sub(r"\s*s$", "", cells[1])))
        elif cells[1] == "test":
            key = (cells[0], cells[2], 1.0)
        else:
            continue
        rows[key] = {k: _number(c) for k, c in zip(COLUMNS, cells[3:]) if k}
    return rows


def _agrees(doc, got):
    for column, value in doc.items():
        if value is None:
            assert got[column] is None, column
        else:
            assert got[column] == pytest.approx(value, abs=ROUNDING), column


def test_the_shipped_model_scored_at_1_s_reproduces_the_documented_held_out_results():
    """The "Results" table of docs/flows.md (written by train-flows) for every simulated held-out
    pattern, both classifiers: score-flows regenerates the data from the model's training record
    (seed, instances, link rate, interval) and scores without training, so every figure agrees to
    the table's rounding; a wrong seed, interval or label gives other pairs or elephants."""
    doc = documented("Results (the command above")
    assert {p for p, _, _ in doc} == set(score_flows.held_out_patterns(score_flows.trained(flows.DEFAULT_MODEL)))
    report = score_flows.simulated(flows.DEFAULT_MODEL, 1.0)
    for (pattern, classifier, _), row in doc.items():
        _agrees(row, report[pattern][classifier])


def test_the_documented_half_second_table_is_what_score_flows_gives():
    """docs/flows.md, "0.5 s polls in the simulator": every row (both intervals, both classifiers)."""
    doc = documented("0.5 s polls in the simulator", intervals=True)
    assert {i for _, _, i in doc} == {0.5, 1.0} and len(doc) >= 20
    for interval in (0.5, 1.0):
        report = score_flows.simulated(flows.DEFAULT_MODEL, interval)
        for (pattern, classifier, at), row in doc.items():
            if at == interval:
                _agrees(row, report[pattern][classifier])


def test_the_label_is_per_poll_unless_told_otherwise():
    """At 0.5 s the default label is a heavy run of one interval (0.5 s); a 1 s run
    (--label-seconds 1) keeps a subset of those elephants, each starting in the same poll or later,
    and the same mice; the counters are the same."""
    per_poll = train_flows.dataset(["permutation"], 3, 0, 125e6, 0.5, train_flows.TRACE_DIR)["permutation"]
    same = train_flows.dataset(["permutation"], 3, 0, 125e6, 0.5, train_flows.TRACE_DIR,
                               heavy_intervals=1.0)["permutation"]
    per_second = train_flows.dataset(["permutation"], 3, 0, 125e6, 0.5, train_flows.TRACE_DIR,
                                     heavy_intervals=2.0)["permutation"]
    fewer = 0
    for a, b, c in zip(per_poll, same, per_second):
        assert np.array_equal(a.labels, b.labels) and np.array_equal(a.counts, c.counts)
        assert not (c.labels & ~a.labels).any()
        assert (c.starts[c.labels] >= a.starts[c.labels]).all()
        fewer += int(a.labels.sum() - c.labels.sum())
    assert fewer > 0


def test_score_flows_cli_on_a_small_set_and_on_half_second_counter_logs(tmp_path, capsys):
    rep = tmp_path / "r.json"
    argv = ["score-flows", "--interval", "0.5", "--patterns", "permutation,halo3d", "--instances", "2"]
    assert cli.main(argv + ["--report", str(rep)]) == 0
    out = capsys.readouterr().out
    assert "| permutation | test | learned |" in out and "delay max" in out
    report = json.loads(rep.read_text())["patterns"]
    assert set(report) == {"permutation", "halo3d", "all held-out"}
    assert report["all held-out"]["learned"]["pairs"] == sum(report[p]["learned"]["pairs"]
                                                             for p in ("permutation", "halo3d"))
    # the same runs labelled per second: no more elephants than per poll
    assert cli.main(argv + ["--label-seconds", "1", "--report", str(rep)]) == 0
    capsys.readouterr()
    assert json.loads(rep.read_text())["patterns"]["permutation"]["learned"]["elephants"] <= \
        report["permutation"]["learned"]["elephants"]
    # the 0.5 s Mininet logs, scored at their own interval: every elephant within 2 polls
    got = score_flows.recorded(flows.DEFAULT_MODEL, [LOGS_05])
    assert set(got) == {"permutation", "two-phases", "all held-out"}
    assert got["all held-out"]["learned"]["within_2"] == 1.0 and got["all held-out"]["learned"]["accuracy"] >= 0.95


@pytest.mark.parametrize("argv, words", [
    (["--patterns", "spiral"], "unknown pattern"),
    (["--model", "/nonexistent/model.json"], "cannot read the model"),
    (["--counter-logs", "/nonexistent"], "no counter logs"),
])
def test_score_flows_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert cli.main(["score-flows", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err
