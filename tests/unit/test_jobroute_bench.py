"""The job-routing bench's pure parts (bench/jobroute_sim.py, bench/jobroute_report.py) and issue
15's simulator criterion: on every shipped trace (PFSim's CG in tests/data/pfsim, the pattern
program and hpcc profiled on Mininet in tests/data/jobroute) SDN-optimal's maximum link load is
<= Greedy2's and <= D-mod-K's."""
import glob
import json
import os
import sys

import pytest

from sdnmpi import traces
from sdnmpi.primitives import fattree
from sdnmpi.simulator import cli

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import jobroute_report  # noqa: E402
import jobroute_sim  # noqa: E402
import jobroute_sweep  # noqa: E402

PFSIM = os.path.join(ROOT, "tests", "data", "pfsim")
CG = os.path.join(PFSIM, "traces", "cg-c-128.tar.gz")
PROFILED = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "jobroute", "*.tar.gz")))
# The fabrics the profiled traces were measured on (bench_jobroute_mininet.FABRICS), by rank count.
FABRIC_OF = {16: "kary:k=4", 8: "leafspine:spines=2,leaves=4,hosts=2"}


def sim_job(capsys, *argv):
    assert cli.main(["job", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("topology", [os.path.join(PFSIM, "topologies", "milk.graphml"),
                                      os.path.join(PFSIM, "topologies", "pepsi.graphml"),
                                      "kary:k=8", "leafspine:spines=4,leaves=8,hosts=16"])
def test_sdn_optimal_is_no_worse_than_greedy2_and_dmodk_on_the_pfsim_trace(capsys, topology):
    """sdnmpi-sim job, linear hosts, block mapping: max flows per link (the issue's load)."""
    out = {r: sim_job(capsys, "--topology", topology, "--trace", CG, "--router", r)["max_link_flows"]
           for r in ("sdn-optimal", "greedy2", "dmodk")}
    assert out["sdn-optimal"] <= min(out["greedy2"], out["dmodk"]), out


def test_the_sweep_places_as_sdnmpi_sim_does_and_counts_the_cases(capsys, tmp_path):
    """bench/jobroute_sweep.py: linear hosts once, random hosts per seed; its figures are
    sdnmpi-sim job's; sdn-optimal-bytes at or under Greedy2's and D-mod-K's bytes on these cases
    (milk random hosts seed 5 cyclic was 10 % over Greedy2 with single moves only)."""
    out = tmp_path / "sweep.json"
    milk = os.path.join(PFSIM, "topologies", "milk.graphml")
    assert jobroute_sweep.main(["--topology", milk, "--seeds", "4-5", "--mappings", "cyclic", "--no-time",
                                "--routers", "sdn-optimal-bytes,greedy2,dmodk", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["case"].split()[-1] for r in data["rows"]] == ["linear/4/cyclic", "random/4/cyclic", "random/5/cyclic"]
    row = data["rows"][-1]["routers"]
    capsys.readouterr()
    cli_out = sim_job(capsys, "--topology", milk, "--trace", CG, "--hosts", "random", "--seed", "5",
                      "--mapping", "cyclic", "--router", "greedy2")
    assert row["greedy2"]["max_link_bytes"] == cli_out["max_link_bytes"]
    summary = data["summary"]["sdn-optimal-bytes"]
    assert summary["greedy2"]["max_link_bytes"][:2] == [3, 3] and summary["dmodk"]["max_link_bytes"][:2] == [3, 3]
    assert "completion_s" not in summary["greedy2"]


def test_the_sweep_summary_counts_ties_as_at_or_under():
    rows = [{"case": c, "routers": {"a": {"max_link_bytes": a, "max_link_flows": 1, "completion_s": None},
                                    "greedy2": {"max_link_bytes": g, "max_link_flows": 2, "completion_s": None}}}
            for c, a, g in (("x", 1.00005, 1.0), ("y", 1.1, 1.0), ("z", 0.5, 1.0))]
    got = jobroute_sweep.summary(rows, ["a", "greedy2"], baselines=("greedy2",))
    ok, n, over = got["a"]["greedy2"]["max_link_bytes"]
    assert (ok, n) == (2, 3) and [c for c, _r in over] == ["y"] and over[0][1] == pytest.approx(1.1)
    assert got["a"]["greedy2"]["max_link_flows"][:2] == [3, 3]


def test_the_profiled_traces_are_shipped():
    names = {os.path.basename(p) for p in PROFILED}
    assert {"k4-patterns.tar.gz", "leafspine-patterns.tar.gz"} <= names, names


@pytest.mark.parametrize("path", PROFILED, ids=os.path.basename)
@pytest.mark.parametrize("min_share", [0, jobroute_sim.MIN_SHARE])
def test_sdn_optimal_is_no_worse_than_greedy2_and_dmodk_on_the_profiled_traces(path, min_share):
    """Every phase of every trace profiled on Mininet, on its fabric, with the ranks where the bench
    put them and with ranks in order, on the whole demand and on the heavy pairs the library sends."""
    n = traces.load(path).n_procs
    spec = FABRIC_OF[n]
    for hosts in (list(range(1, n + 1)), jobroute_report.bench_placement(n)):
        sim = jobroute_sim.simulate(path, spec, hosts, ("sdn-optimal", "greedy2", "dmodk"), min_share=min_share)
        for phase, row in sim.items():
            opt = row["sdn-optimal"]["max_link_flows"]
            assert opt <= min(row["greedy2"]["max_link_flows"], row["dmodk"]["max_link_flows"]), (phase, hosts, row)


def test_the_pattern_programs_permutation_is_the_profiled_one():
    """jobroute_report.pattern_perm (the model's permutation) is traffic_patterns.c's `perm SEED`:
    phase 2 of the leaf-spine trace is `perm 2` on 8 ranks."""
    path = [p for p in PROFILED if p.endswith("leafspine-patterns.tar.gz")][0]
    ph = traces.load(path).phases[2]
    tm = ph.traffic_matrix()
    perm = jobroute_report.pattern_perm(2, 8)
    heavy = {(i, j) for i in range(8) for j in range(8) if tm[i][j] >= 1 << 20}
    assert heavy == {(i, perm[i]) for i in range(8) if perm[i] != i}


def test_the_model_loads_show_where_dmodk_collides():
    spec = dict(jobroute_report.FABRIC_MODELS["k4"], placement=jobroute_report.bench_placement(16))
    loads = jobroute_report.model_loads(spec)
    assert loads["shift 9"]["dmodk"] == 3 and loads["shift 9"]["sdn-optimal"] == 1
    assert loads["perm 12"]["dmodk"] == 2 and loads["perm 12"]["sdn-optimal"] == 1


def test_the_rate_controls_shift_is_contention_free_between_leaves():
    """bench/jobroute_rate.py's control: ranks in host order, CONTROL_SHIFT, D-mod-K routes."""
    import jobroute_rate  # noqa: E402  pylint: disable=import-outside-toplevel
    for name, shift in jobroute_rate.CONTROL_SHIFT.items():
        n = jobroute_report.FABRIC_MODELS[name]["hosts"]
        spec = dict(jobroute_report.FABRIC_MODELS[name], placement=list(range(1, n + 1)), shift=shift)
        loads = jobroute_report.model_loads(spec, routers=("dmodk",))["shift %d" % shift]
        assert loads == {"dmodk": 1}
        graph = jobroute_report._graph(spec)  # pylint: disable=protected-access
        leaf = {h: fattree_leaf(graph, h) for h in range(1, n + 1)}
        assert all(leaf[h] != leaf[(h - 1 + shift) % n + 1] for h in range(1, n + 1))


def fattree_leaf(graph, host_number):
    from sdnmpi.primitives import fabric  # pylint: disable=import-outside-toplevel
    return fabric.attachment(graph, fattree.host_mac(host_number))[0]


def test_ranking_agreement_counts_clear_pairs_only():
    sim = {"dmodk": 4.0, "ecmp": 4.1, "sdn-optimal": 2.0, "sdn-greedy": 3.0}
    measured = {"dmodk": 5.0, "ecmp": 4.0, "sdn-optimal": 2.5, "sdn-greedy": 2.55}
    a = jobroute_sim.ranking_agreement(sim, measured)
    # dmodk/ecmp: a simulated tie, not counted; greedy/optimal: measured within 5 %: a tie
    assert (a["pairs"], a["agree"], a["contradict"], a["measured_tie"]) == (5, 4, 0, 1)
    a = jobroute_sim.ranking_agreement(sim, dict(measured, **{"sdn-optimal": 6.0}))
    assert a["contradict"] == 3 and ("dmodk", "sdn-optimal") in a["contradictions"]
    assert a["sim_order"][0] == "sdn-optimal" and a["measured_order"][-1] == "sdn-optimal"


def test_heavy_keeps_what_the_library_sends():
    macs = [fattree.host_mac(i) for i in (1, 2, 3)]
    from sdnmpi.primitives import pairs
    demand = [pairs.Flow(macs[0], macs[1], 4 << 20), pairs.Flow(macs[1], macs[2], 8),
              pairs.Flow(macs[2], macs[0], 41944)]
    flows = {(f.src, f.dst): 1 for f in demand}
    kept, kept_flows = jobroute_sim.heavy(demand, flows, 1)
    assert kept == [demand[0], demand[2]] and set(kept_flows) == {(f.src, f.dst) for f in kept}
    assert jobroute_sim.heavy(demand, flows, 0) == (demand, flows)


def _runs(times):
    return [{"policy": p, "rc": 0, "round": i, "wall_s": 20.0,
             "patterns": {"shift": {"bytes": 1 << 20, "reps": 2, "seconds": t}, "total": {"seconds": t}}}
            for p, ts in times.items() for i, t in enumerate(ts)]


def test_report_medians_ratios_rates_and_goals():
    spec = dict(jobroute_report.FABRIC_MODELS["k4"], name="k4", placement=list(range(1, 17)), host_bw=10, fabric_bw=10)
    runs = _runs({"dmodk": [5.0, 6.0, 5.5], "sdn-optimal": [1.8, 1.7, 9.0]}) + [
        {"policy": "dmodk", "rc": 1, "round": 3, "wall_s": 1.0, "patterns": None}]
    results = {"fabrics": {"k4": {"spec": spec, "model": {}, "programs": {"patterns": {"runs": runs}}}}}
    rows = jobroute_report.pattern_rows(results["fabrics"]["k4"])
    assert rows["shift"]["medians"] == {"dmodk": (5.5, 3), "sdn-optimal": (1.8, 3)}
    assert rows["shift"]["ratio"]["sdn-optimal"] == pytest.approx(5.5 / 1.8)
    # 2 MiB in 1.8 s = 9.32 Mbit/s of 10
    assert rows["shift"]["rate"]["sdn-optimal"] == pytest.approx((2 << 20) * 8 / 1.8 / 1e7)
    text = jobroute_report.markdown(results)
    assert "| shift | 5.50, 31% | 1.80 (3.06x), 93% |" in text
    assert "per-flow rate 93% of that link (goal >= 90%: met), 3.06x D-mod-K (goal >= 1.5x: met)" in text


def test_merge_unites_pieces():
    a = {"fabrics": {"k4": {"spec": {"x": 1}, "programs": {"patterns": {"runs": [1]}}}}, "started": "a"}
    b = {"fabrics": {"k4": {"spec": {"x": 1}, "programs": {"hpcc": {"runs": [2]}}},
                     "leafspine": {"spec": {"y": 2}, "programs": {}}}, "failed": "boom"}
    c = {"fabrics": {"k4": {"spec": {"x": 1}, "programs": {"patterns": {"runs": [3], "trace": "later"}}}}}
    m = jobroute_report.merge([a, b, c])
    assert set(m["fabrics"]) == {"k4", "leafspine"} and set(m["fabrics"]["k4"]["programs"]) == {"patterns", "hpcc"}
    assert m["fabrics"]["k4"]["programs"]["patterns"] == {"runs": [1, 3]}
    assert m["failed"] == "boom (the piece started None)" and len(m["pieces"]) == 3
