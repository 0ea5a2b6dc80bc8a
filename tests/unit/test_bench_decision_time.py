"""bench/flowdetect_decision_time.py: a recorded counter log replayed, every routing decision timed
with the router's runs counted, and the summary of several runs."""
import json
import os

import bench_setup  # noqa: F401  (bench/ on sys.path)

import flowdetect_decision_time as tool

from test_flowdetect_hold import PERMUTATION
from test_flows_hold import RESULTS


def test_the_parser_takes_run_and_summary():
    args = tool.build_parser().parse_args(["run", "a.jsonl.gz", "--label", "after", "--json", "out.json"])
    assert (args.command, args.logs, args.label, args.json, args.controller_dir) == \
        ("run", ["a.jsonl.gz"], "after", "out.json", None)
    args = tool.build_parser().parse_args(["summary", "a.json", "b.json", "--out", "dir"])
    assert (args.command, args.runs, args.out, args.note) == ("summary", ["a.json", "b.json"], "dir", "")
    assert all(os.path.exists(os.path.join(RESULTS, name)) for name in tool.LOGS)


def test_a_replay_times_every_decision_and_restores_the_controller(tmp_path):
    route = tool.flowdetect.FlowDetection._route                   # pylint: disable=protected-access
    routers = tool.jobtraffic.PAIR_ROUTERS
    out = tmp_path / "after.json"
    assert tool.main(["run", os.path.join(RESULTS, PERMUTATION), "--label", "after", "--json", str(out)]) == 0
    assert tool.flowdetect.FlowDetection._route is route and tool.jobtraffic.PAIR_ROUTERS is routers
    doc = json.loads(out.read_text())
    [entry] = doc["logs"]
    assert entry["log"] == PERMUTATION and entry["routed"] > 10 and len(entry["digest"]) == 16
    decisions = entry["decisions"]
    assert sum(d["routed"] for d in decisions) > 5
    assert all(d["runs"] == 2 for d in decisions if d["routed"])             # seeded: one decision, one plan
    assert all(0 <= d["ms"] <= d["ms_with_switches"] and d["cpu_ms"] >= 0 for d in decisions)
    # the same log again: the same flow-mods (the job id is fixed), so the summary says they agree
    again = tmp_path / "again.json"
    tool.main(["run", os.path.join(RESULTS, PERMUTATION), "--label", "again", "--json", str(again)])
    assert tool.main(["summary", str(out), str(again), "--out", str(tmp_path / "res"), "--note", "busy"]) == 0
    res = json.loads((tmp_path / "res" / "results.json").read_text())
    assert res["agree"] == {PERMUTATION: True} and set(res["table"]) == {"after", "again"}
    assert res["table"]["after"]["routed"]["n"] == sum(d["routed"] for d in decisions)
    md = (tmp_path / "res" / "results.md").read_text()
    assert "| after (wall) |" in md and "| again (CPU) |" in md and "1 of 1 logs" in md and "busy" in md


def test_the_summary_tells_differing_flow_mods():
    runs = [{"label": label, "logs": [{"log": "x", "digest": digest, "decisions": [
        {"ms": ms, "cpu_ms": ms, "runs": runs, "routed": True},
        {"ms": 1.0, "cpu_ms": 1.0, "runs": 0, "routed": False}]}]}
        for label, digest, ms, runs in (("before", "aa", 8.0, 4), ("after", "bb", 4.0, 2))]
    table, agree = tool.summarize(runs)
    assert agree == {"x": False}
    assert table["before"]["routed"] == {"n": 1, "median": 8.0, "max": 8.0} and table["before"]["runs_max"] == 4
    assert table["after"]["all"] == {"n": 2, "median": 2.5, "max": 4.0} and table["after"]["runs_max"] == 2
    assert "- x differs" in tool.markdown(runs, table, agree)
