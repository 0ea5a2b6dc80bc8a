"""bench/jobroute_scale.py: the job-routing planner benchmark, on small fabrics."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import jobroute_scale  # noqa: E402


def test_rows_cover_every_router_and_demand_with_their_quality():
    routers = ["sdn-optimal", "sdn-greedy", "sdn-adaptive", "dmodk", "ecmp"]
    rows = jobroute_scale.run_one("kary", {"k": 4}, routers, repeat=1, seed=3)
    assert [(r["demand"], r["router"]) for r in rows] == [(d, r) for d in ("perm", "shift", "dense") for r in routers]
    by = {(r["demand"], r["router"]): r for r in rows}
    for demand in ("perm", "shift", "dense"):
        optimal = by[demand, "sdn-optimal"]
        assert optimal["max_flows"] == optimal["lower_bound"] <= optimal["nl_d"]
        assert optimal["max_flows"] <= by[demand, "dmodk"]["max_flows"]
        assert optimal["cpu_s"] > 0 and not optimal["fabric_routes"]
    assert by["perm", "sdn-optimal"]["max_flows"] == 1
    assert by["dense", "sdn-adaptive"]["fabric_routes"] and by["dense", "sdn-adaptive"]["nl_d"] > 1
    assert by["dense", "sdn-optimal"]["flows"] > 8 * by["perm", "sdn-optimal"]["flows"]


def test_main_prints_a_table_and_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(jobroute_scale, "FABRICS", [("leaf_spine", {"spines": 2, "leaves": 2, "hosts_per_leaf": 2})])
    out = tmp_path / "rows.json"
    assert jobroute_scale.main(["--routers", "sdn-optimal,dmodk", "--repeat", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("sdn-optimal") == 3 and "max bytes" in text.splitlines()[0]
    assert len(json.loads(out.read_text())) == 6


@pytest.mark.parametrize("argv", [["--routers", "fastest"], ["--repeat", "0"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        jobroute_scale.main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err
