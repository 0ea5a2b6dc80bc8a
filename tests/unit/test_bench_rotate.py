"""--rotate-routings: the schedule of routing blocks, the comparison with the best routing's Open MPI
and its intervals, the records per block, the switch's answer to a routing request, the plan and
the report (pure; no Mininet, no controller). coll_bench's side: test_bench_coll.py."""
import collections
import math
import random

import pytest

from bench_setup import small_fabric

import bench_cli
import bench_jobs
import bench_rotate
import report_rotate
import rotate_compare

ROUTINGS = ["single", "dmodk", "ecmp"]


# --- the schedule ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [3, 4, 5])
def test_block_schedule_balances_positions_and_predecessors_and_never_repeats_a_routing(n):
    routings = ["r%d" % k for k in range(n)]
    blocks = rotate_compare.block_schedule(routings, 2 * n)
    assert len(blocks) == 2 * n * n
    rounds = [blocks[k:k + n] for k in range(0, len(blocks), n)]
    assert all(sorted(r) == sorted(routings) for r in rounds)
    assert all(a != b for a, b in zip(blocks, blocks[1:]))
    positions = collections.Counter((pos, r) for rnd in rounds for pos, r in enumerate(rnd))
    assert set(positions.values()) == {2}     # every routing twice in every position
    within = collections.Counter((a, b) for rnd in rounds for a, b in zip(rnd, rnd[1:]))
    assert len(within) == n * (n - 1) if n == 3 else len(within) >= 2 * (n - 1)


def test_block_schedule_with_three_routings_and_the_fallbacks():
    assert rotate_compare.block_schedule(["s", "d", "e"], 6) == list("sdedesesdedsdsesed")
    assert rotate_compare.block_schedule(["a", "b"], 3) == list("ababab")
    assert rotate_compare.block_schedule(["a"], 2) == ["a", "a"]
    with pytest.raises(ValueError):
        rotate_compare.block_schedule(["a", "a"], 2)
    with pytest.raises(ValueError):
        rotate_compare.block_schedule(["a", "b", "c"], 0)


# --- the comparison ----------------------------------------------------------------------------

def _records(medians, rounds=12, calls=4, noise=0.05, seed=0, schedule=None):
    """Records of a rotation with lognormal noise around ``medians`` {(impl, routing): seconds}."""
    rng = random.Random(seed)
    schedule = schedule or rotate_compare.block_schedule(ROUTINGS, rounds)
    recs = {}
    for block, routing in enumerate(schedule):
        for impl in ("openmpi", "sdnmpi"):
            rec = recs.setdefault((impl, routing), {"collective": "allreduce", "impl": impl, "routing": routing,
                                                   "placement": "block", "bytes": 4096, "samples_s": [],
                                                   "rotation_blocks": []})
            for _ in range(calls):
                rec["samples_s"].append(medians[(impl, routing)] * math.exp(rng.gauss(0, noise)))
                rec["rotation_blocks"].append(block)
    return list(recs.values())


def _row(medians, **kwargs):
    rows = rotate_compare.compare(_records(medians, **kwargs), 3, draws=400)
    assert list(rows) == [("block", 4096)]
    return rows[("block", 4096)]


def test_a_routing_faster_than_sdnmpi_is_found_by_both_rules():
    medians = {("openmpi", "single"): 1.5, ("openmpi", "dmodk"): 1.0, ("openmpi", "ecmp"): 1.3}
    medians.update({("sdnmpi", r): 1.2 for r in ROUTINGS})
    row = _row(medians)
    assert row["rounds"] == 12 and row["best_by_medians"] == "dmodk"
    assert row["cross_fit_chosen"] == ["dmodk", "dmodk"]
    assert row["cross_fit"] == pytest.approx(1.0 / 1.2, rel=0.05)
    assert row["every"]["dmodk"]["interval"][1] < 1.0 < row["every"]["single"]["interval"][0]
    assert rotate_compare.verdict(row) == {"every": True, "cross_fit": True}
    assert rotate_compare.verdict(row, threshold=0.8) == {"every": False, "cross_fit": False}


def test_sdnmpi_faster_than_every_routing_is_not_slower():
    medians = {("openmpi", r): 1.0 for r in ROUTINGS}
    medians.update({("sdnmpi", r): 0.5 for r in ROUTINGS})
    row = _row(medians)
    assert row["min_of_three"] == pytest.approx(2.0, rel=0.05)
    assert rotate_compare.verdict(row) == {"every": False, "cross_fit": False}


def test_the_minimum_of_three_is_biased_low_and_the_cross_fit_is_not():
    """The same distribution everywhere (an A/A test): the minimum of three medians lies below 1 in
    most data sets; the cross-fitted ratio scatters around 1 and its interval holds 1."""
    medians = {(i, r): 1.0 for i in ("openmpi", "sdnmpi") for r in ROUTINGS}
    rows = [_row(medians, noise=0.3, seed=seed) for seed in range(40)]
    naive = [math.log(r["min_of_three"]) for r in rows]
    fitted = [math.log(r["cross_fit"]) for r in rows]
    assert sum(1 for x in naive if x < 0) >= 24
    assert sum(naive) / len(naive) < sum(fitted) / len(fitted) - 0.02
    assert abs(sum(fitted) / len(fitted)) < 0.025
    # "slower beyond the noise" where nothing differs: the cross-fit rarely; three intervals more often
    fit_alarms = sum(1 for r in rows if rotate_compare.verdict(r)["cross_fit"])
    assert fit_alarms <= 2 and sum(1 for r in rows if rotate_compare.verdict(r)["every"]) >= fit_alarms
    assert all(r["cross_fit_interval"][0] < r["cross_fit"] < r["cross_fit_interval"][1] for r in rows)


def test_too_few_rounds_give_no_interval_and_incomplete_rounds_are_left_out():
    medians = {(i, r): 1.0 for i in ("openmpi", "sdnmpi") for r in ROUTINGS}
    row = _row(medians, rounds=4)
    assert row["rounds"] == 4 and row["cross_fit_interval"] is None
    assert _row(medians, rounds=1)["cross_fit"] is None     # one round: no halves to cross
    assert all(v["interval"] is None for v in row["every"].values())
    assert rotate_compare.verdict(row) == {"every": None, "cross_fit": None}
    assert _row(medians, rounds=5)["every"]["dmodk"]["interval"] is not None
    # the last round lacks ecmp: 12 complete rounds of 13
    schedule = rotate_compare.block_schedule(ROUTINGS, 13)
    schedule = schedule[:-3] + [r for r in schedule[-3:] if r != "ecmp"]
    rows = rotate_compare.compare(_records(medians, schedule=schedule), 3, draws=50)
    assert rows[("block", 4096)]["rounds"] == 12


# --- the harness side --------------------------------------------------------------------------

def test_records_follow_the_blocks_and_drop_a_failed_block():
    events = [{"bench": "sample", "collective": "allreduce", "impl": "openmpi", "bytes": 8, "root": -1, "t_s": 9.0}]
    for block, routing in enumerate(["single", "dmodk", "single"]):
        events.append({"bench": "routing", "routing": routing, "block": block})
        events.append({"bench": "settle", "collective": "allreduce", "impl": "sdnmpi", "bytes": 8, "call": 0,
                       "t_s": 5.0 + block})
        for impl, t in (("sdnmpi", 1.0), ("openmpi", 2.0)):
            events.append({"bench": "sample", "collective": "allreduce", "impl": impl, "bytes": 8, "root": -1,
                           "rep": block, "t_s": t + block})
    blocks = [{"block": 0, "routing": "single"}, {"block": 1, "routing": "dmodk", "error": "refused"},
              {"block": 2, "routing": "single"}]
    recs = bench_rotate.records(events, {"placement": "random", "nprocs": 8}, blocks, lambda *a: 0.5)
    by = {(r["impl"], r["routing"]): r for r in recs}
    assert set(by) == {("openmpi", "single"), ("sdnmpi", "single"), ("first:sdnmpi", "single")}
    assert by[("openmpi", "single")]["samples_s"] == [2.0, 4.0]
    assert by[("openmpi", "single")]["rotation_blocks"] == [0, 2]
    assert by[("first:sdnmpi", "single")]["samples_s"] == [5.0, 7.0]
    assert all(r["placement"] == "random" and r["limit_s"] == 0.5 and r["root"] is None for r in recs)


def test_plan_fingerprint_ignores_the_order_and_counts_what_is_installed():
    routes = [{"dpid": "01", "src": "a", "dst": "b", "port": 2, "installed": True},
              {"dpid": "02", "src": "a", "dst": "b", "port": 3, "installed": False}]
    one = bench_rotate.plan_fingerprint([{"routes": routes}])
    assert one == dict(bench_rotate.plan_fingerprint([{"routes": routes[::-1]}]), routes=2, installed=1)
    moved = [dict(routes[0], port=4), routes[1]]
    assert bench_rotate.plan_fingerprint([{"routes": moved}])["digest"] != one["digest"]


def test_the_switch_takes_its_overrides_off_before_a_routing_change(tmp_path):
    calls, waits = [], []
    answers = {"dmodk": {"changed": True, "pass_s": 0.3}, "single": {"changed": False, "pass_s": 0.1}}

    def control(routing):
        calls.append((routing, switch.hidden))
        if routing == "ecmp":
            raise TimeoutError("not confirmed")
        return answers[routing]
    switch = bench_rotate.RotatingSwitch(str(tmp_path), [], {}, control, read_jobs=lambda: [{"routes": []}],
                                         wait=lambda: (waits.append(1), (0.0, None))[1])
    switch.hidden = True                  # Open MPI's overrides were on when the block ended
    switch.handle("routing:dmodk")
    assert calls == [("dmodk", False)] and switch.state == "sdnmpi" and len(waits) == 1
    switch.handle("routing:single")       # no change, no overrides: nothing to revalidate
    assert len(waits) == 1
    with pytest.raises(TimeoutError):
        switch.handle("routing:ecmp")
    switch.handle("openmpi")              # the usual requests still work
    assert switch.hidden and switch.toggles == 1
    blocks = switch.summary()["rotation"]
    assert [b["routing"] for b in blocks] == ["dmodk", "single", "ecmp"]
    assert blocks[0]["changed"] and blocks[0]["plan"]["routes"] == 0 and blocks[2]["error"] == "not confirmed"
    assert bench_rotate.expected_recomputes(blocks) == 1
    counts = bench_jobs.controller_counts({"route_recomputes": 3}, {"route_recomputes": 4}, expected=1)
    assert counts["route_recomputes"] == 0 and not counts["fabric_disrupted"]
    assert bench_jobs.controller_counts({"route_recomputes": 3}, {"route_recomputes": 5}, 1)["fabric_disrupted"]


def test_plan_replaces_the_allreduce_jobs_with_one_rotation_per_placement():
    args = bench_cli.parse_args(["--collectives", "allreduce", "--rotate-routings", "4",
                                 "--allreduce-sizes", "8,4k,16k", "--placements", "block,random"])
    jobs = bench_cli._plan(args, small_fabric(), True)
    assert [j["name"] for j in jobs] == ["allreduce-rotate-block-p8", "allreduce-rotate-random-p8"]
    for job in jobs:
        assert job["rotation"] == rotate_compare.block_schedule(ROUTINGS, 4) and job["reps"] == 12
        assert job["routing"] == "single" and job["tiny_reps"] == 0 and job["sizes"] == [8, 4096, 16384]
        argv = bench_jobs.coll_bench_argv(type("B", (), {"coll_bench": "cb"})(), job, "/t")
        assert argv[argv.index("--routing-blocks") + 1] == ",".join(job["rotation"])
        assert argv[argv.index("--reps") + 1] == 12
    for bad in (["--rotate-routings", "22"], ["--rotate-routings", "2", "--sdn-algs", "rd"],
                ["--rotate-routings", "2", "--collectives", "bcast"]):
        with pytest.raises(SystemExit):
            bench_cli.parse_args(bad)


def test_the_report_section_names_the_rows_and_the_verdicts():
    medians = {("openmpi", "single"): 1.5, ("openmpi", "dmodk"): 1.0, ("openmpi", "ecmp"): 1.3}
    medians.update({("sdnmpi", r): 1.2 for r in ROUTINGS})
    schedule = rotate_compare.block_schedule(ROUTINGS, 10)
    results = {"method": {"rotation": schedule}, "records": _records(medians, rounds=10),
               "jobs": [{"name": "allreduce-rotate-block-p8",
                         "routes": {"rotation": [{"block": k, "routing": r, "changed": True, "s": 1.0,
                                                  "plan": {"digest": "abc", "routes": 10, "installed": 4}}
                                                 for k, r in enumerate(schedule)]}}]}
    text = "\n".join(report_rotate.section(results))
    assert "| block | 4 KiB | 10 | 1.19 s | 1.20 s / 1.21 s / 1.19 s | 1.52 s |" in text
    assert "**slower** (every, cross-fit)" in text
    assert "min of three (medians, no interval) 1 of 1 rows" in text
    assert "dmodk: abc (10 routes, 4 installed) x10" in text
    assert report_rotate.section({"method": {}}) == []
    assert report_rotate._mark({"every": False, "cross_fit": None}) == "no (every)"
    assert report_rotate._mark({"every": None, "cross_fit": None}) == "-"
    assert report_rotate._mark({"every": False, "cross_fit": False}) == "no"
