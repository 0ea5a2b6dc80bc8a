"""bench/: the limit model, placements, parsing and aggregation of coll_bench's output, the report
and a tiny planner-scale run. Pure and fast: no Mininet, no MPI, no root."""
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import bench_cli  # noqa: E402
import bench_common  # noqa: E402
import bench_fabric  # noqa: E402
import bench_flows  # noqa: E402
import bench_jobs  # noqa: E402
import bench_limits  # noqa: E402
import bench_sampling  # noqa: E402
import benchcore  # noqa: E402
import planner_scale  # noqa: E402
import report  # noqa: E402

MIB = 1 << 20


def seconds(nbytes, mbit):
    return nbytes * 8 / (mbit * 1e6)


@pytest.fixture
def fab():
    return benchcore.Fabric(spines=2, leaves=4, hosts_per_leaf=2, host_bw=40, fabric_bw=20)


# --- placements -------------------------------------------------------------------------------

def test_block_placement_is_rank_order_and_random_is_a_seeded_permutation():
    assert benchcore.placement_hosts("block", 8, 8) == list(range(1, 9))
    assert benchcore.placement_hosts("block", 8, 3) == [1, 2, 3]
    a = benchcore.placement_hosts("random", 16, 16, seed=7)
    assert sorted(a) == list(range(1, 17)) and a != list(range(1, 17))
    assert a == benchcore.placement_hosts("random", 16, 16, seed=7)
    assert benchcore.placement_hosts("random", 16, 4, seed=7) == a[:4]
    with pytest.raises(ValueError):
        benchcore.placement_hosts("block", 4, 5)
    with pytest.raises(ValueError):
        benchcore.placement_hosts("diagonal", 4, 4)


def test_bcast_roots_are_rank_0_and_the_first_rank_on_another_leaf(fab):
    assert benchcore.bcast_roots(fab, [1, 2, 3, 4]) == [0, 2]
    assert benchcore.bcast_roots(fab, [1, 2]) == [0]          # one leaf: only rank 0
    assert benchcore.bcast_roots(fab, [7, 8, 3, 5]) == [0, 2]


# --- the limit model ------------------------------------------------------------------------

def test_allreduce_limits_block_placement_by_hand(fab):
    """8 hosts, 2 per leaf, block: distance 1 stays on the leaf (host link, 40 Mbit/s); distances 2
    and 4 cross the spines with 2 flows per leaf over 2 uplinks, i.e. 1 per 20 Mbit/s link."""
    hosts = list(range(1, 9))
    lim = benchcore.allreduce_limits(fab, hosts, MIB)
    host, fabric = seconds(MIB, 40), seconds(MIB, 20)
    assert lim["rd"] == pytest.approx(host + 2 * fabric)
    # distance halving: n/8 at d=1, n/4 at d=2, n/2 at d=4, twice each
    assert lim["rabenseifner_dh"] == pytest.approx(2 * (host / 8 + fabric / 4 + fabric / 2))
    # distance doubling (Open MPI): n/2 at d=1, n/4 at d=2, n/8 at d=4, twice each
    assert lim["rabenseifner_dd"] == pytest.approx(2 * (host / 2 + fabric / 4 + fabric / 8))
    # ring: 2 n 7/8 over the busiest link, one ring flow per uplink
    assert lim["ring"] == pytest.approx(2 * 7 / 8 * fabric)
    assert benchcore.allreduce_limit(fab, hosts, MIB) == pytest.approx(min(lim.values()))


def test_allreduce_limits_scale_with_bytes_and_placement_matters(fab):
    block = list(range(1, 9))
    spread = [1, 3, 5, 7, 2, 4, 6, 8]   # distance 4 partners share a leaf, 1 and 2 do not
    for name in benchcore.LIMIT_SCHEDULES:
        small = benchcore.allreduce_limits(fab, block, 4096)[name]
        assert benchcore.allreduce_limits(fab, block, 4096 * 256)[name] == pytest.approx(256 * small)
    assert benchcore.allreduce_limits(fab, spread, MIB)["rabenseifner_dh"] < \
        benchcore.allreduce_limits(fab, block, MIB)["rabenseifner_dh"]


def test_allreduce_limits_non_power_of_two_and_degenerate_cases(fab):
    six = benchcore.allreduce_limits(fab, [1, 2, 3, 4, 5, 6], MIB)
    steps = benchcore.allreduce_steps(fab, [1, 2, 3, 4, 5, 6])
    assert [s[0] for s in steps] == ["fold", "exchange", "exchange", "unfold"]
    assert six["rd"] > six["rabenseifner_dh"] > 0
    same_leaf = benchcore.allreduce_limits(fab, [1, 2], MIB)
    assert same_leaf["rd"] == pytest.approx(seconds(MIB, 40))
    assert benchcore.allreduce_limits(fab, [3], MIB)["rd"] == 0.0
    unlimited = benchcore.Fabric(host_bw=0, fabric_bw=0)
    assert benchcore.allreduce_limit(unlimited, [1, 2, 3, 4], MIB) is None
    host_only = benchcore.Fabric(host_bw=40, fabric_bw=0)
    assert benchcore.allreduce_limits(host_only, list(range(1, 9)), MIB)["rd"] == pytest.approx(3 * seconds(MIB, 40))


def test_bcast_limits(fab):
    # one leaf: the host links only
    assert benchcore.bcast_limits(fab, [1, 2], 0, MIB) == {"any": pytest.approx(seconds(MIB, 40)),
                                                         "tree": pytest.approx(seconds(MIB, 40))}
    # across leaves: any algorithm can split over both spines (2 x 20 = 40 Mbit/s); one tree cannot
    lim = benchcore.bcast_limits(fab, [1, 2, 3, 4], 2, MIB)
    assert lim["any"] == pytest.approx(seconds(MIB, 40))
    assert lim["tree"] == pytest.approx(seconds(MIB, 20))
    assert benchcore.bcast_limit(fab, [1, 2, 3, 4], 0, MIB) == lim["any"]
    thin = benchcore.Fabric(spines=1, host_bw=40, fabric_bw=10)
    assert benchcore.bcast_limits(thin, [1, 3], 0, MIB)["any"] == pytest.approx(seconds(MIB, 10))
    assert benchcore.bcast_limits(fab, [5], 0, MIB)["any"] == 0.0


def test_fabric_json_reports_oversubscription(fab):
    assert fab.to_json()["oversubscription"] == pytest.approx(2.0)
    assert fab.hosts == 8 and fab.leaf_of(1) == 1 and fab.leaf_of(3) == 2


# --- coll_bench output and aggregation ------------------------------------------------------

def test_parse_line_accepts_prefixed_objects_and_ignores_the_rest():
    line = 'garbage from another rank{"bench": "sample", "impl": "openmpi", "t_s": 0.5}\n'
    assert benchcore.parse_line(line) == {"bench": "sample", "impl": "openmpi", "t_s": 0.5}
    assert benchcore.parse_line("sdnmpi[0]: plan comm=0 ...") is None
    assert benchcore.parse_line('{"bench": "sample", "t_s": ') is None
    assert benchcore.parse_line('{"other": 1}') is None


def sample(impl, nbytes, t, rep=0, root=-1, coll="allreduce"):
    return {"bench": "sample", "collective": coll, "impl": impl, "bytes": nbytes, "root": root,
            "rep": rep, "t_s": t}


def test_aggregate_samples_median_min_max_and_limits():
    events = [sample("openmpi", 4096, t, i) for i, t in enumerate([3.0, 1.0, 2.0])]
    events += [sample("sdnmpi", 4096, t, i) for i, t in enumerate([1.0, 1.5])]
    events += [sample("openmpi", 64, 0.01, root=2, coll="bcast"), {"bench": "init", "t_s": 9}]
    recs = benchcore.aggregate_samples(events, "dmodk", "block", 8,
                                       lambda coll, n, root: 42.0 if coll == "allreduce" else None)
    by = {(r["collective"], r["impl"]): r for r in recs}
    o = by[("allreduce", "openmpi")]
    assert (o["median_s"], o["min_s"], o["max_s"], o["samples_s"]) == (2.0, 1.0, 3.0, [3.0, 1.0, 2.0])
    assert o["root"] is None and o["limit_s"] == 42.0 and o["routing"] == "dmodk" and o["nprocs"] == 8
    assert by[("allreduce", "sdnmpi")]["median_s"] == 1.25
    assert by[("bcast", "openmpi")]["root"] == 2 and by[("bcast", "openmpi")]["limit_s"] is None
    pairs = benchcore.pair_records(recs, "allreduce")
    assert len(pairs) == 1 and benchcore.speedup(*pairs[0]) == pytest.approx(1.6)
    assert benchcore.fraction_of_limit(o) == pytest.approx(21.0)
    assert benchcore.speedup(o, None) is None


def test_speedup_interval_brackets_the_speedup_and_narrows_with_samples():
    rng = random.Random(3)

    def rec(impl, centre, n):
        return {"impl": impl, "samples_s": [centre * rng.uniform(0.7, 1.3) for _ in range(n)]}
    few = benchcore.speedup_interval(rec("openmpi", 2.0, 6), rec("sdnmpi", 1.0, 6))
    many = benchcore.speedup_interval(rec("openmpi", 2.0, 200), rec("sdnmpi", 1.0, 200))
    assert few[0] < few[1] and many[0] < 2.0 < many[1]
    assert many[1] - many[0] < few[1] - few[0]           # more samples, a narrower interval
    o, s = rec("openmpi", 2.0, 20), rec("sdnmpi", 1.0, 20)
    assert benchcore.speedup_interval(o, s) == benchcore.speedup_interval(o, s)   # seeded
    lo, hi = benchcore.speedup_interval(o, s)
    assert lo <= benchcore.speedup(dict(o, median_s=statistics.median(o["samples_s"])),
                                   dict(s, median_s=statistics.median(s["samples_s"]))) <= hi
    assert benchcore.speedup_interval(rec("openmpi", 2.0, 4), s) is None        # too few samples
    assert benchcore.speedup_interval(o, None) is None


def test_floor_verdict_tells_a_loss_beyond_the_noise_from_one_within_it():
    def pair(o_times, s_times):
        return tuple(benchcore.make_record("allreduce", impl, "dmodk", "block", 8, 4096, None, t, None)
                     for impl, t in (("openmpi", o_times), ("sdnmpi", s_times)))
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    assert report.floor_verdict(*pair(steady, [2 * t for t in steady])) == "below"
    assert report.floor_verdict(*pair(steady, [0.5 * t for t in steady])) == "met"
    noisy_o, noisy_s = [1.0, 0.5, 1.5, 0.7, 1.3, 1.0], [1.1, 0.6, 1.6, 0.8, 1.4, 1.1]
    assert report.floor_verdict(*pair(noisy_o, noisy_s)) == "unresolved"
    assert report.floor_verdict(*pair([1.0], [1.2])) == "unresolved"     # no interval from 1 sample
    assert report.floor_verdict(pair(steady, steady)[0], None) is None
    text = report.speedup_summary(list(pair(steady, [2 * t for t in steady])), "allreduce")
    assert "| dmodk | block | 8 | 1 | 0.50 | 0.50 | 0.50 | 4 KiB | 4 KiB | none |" in text


def test_tiny_call_table_pools_every_jobs_samples():
    recs = [benchcore.make_record("allreduce", impl, routing, "block", 8, 8, None, times, 0.0)
            for routing, impl, times in (("single", "openmpi", [4.0, 5.0, 6.0, 7.0, 8.0]),
                                         ("single", "sdnmpi", [1.0, 2.0, 3.0, 4.0, 5.0]),
                                         ("dmodk", "openmpi", [9.0, 10.0, 11.0, 12.0, 13.0]),
                                         ("dmodk", "sdnmpi", [6.0, 7.0, 8.0, 9.0, 10.0]))]
    text = report.overhead_table(recs)
    # pooled: Open MPI's median of 10 samples is 8.5 s, sdnmpi's 5.5 s
    pooled = [l for l in text.splitlines() if l.startswith("| all jobs | pooled |")]
    assert len(pooled) == 1 and "| 8.50 s | 5.50 s | -3.00 s | 1.55 (" in pooled[0]
    assert "| single | block | 8 | 8 B | 6.00 s | 3.00 s | -3.00 s | 2.00 (" in text


def test_short_allreduce_points_get_back_to_back_calls():
    assert bench_limits.calls_per_point(0.02, 0.5, 8) == 8
    assert bench_limits.calls_per_point(0.2, 0.5, 8) == 3
    assert bench_limits.calls_per_point(2.0, 0.5, 8) == 1
    assert bench_limits.calls_per_point(0.02, 0, 8) == 1
    full = bench_limits.plan_jobs(bench_cli.parse_args([]), benchcore.Fabric(), True)
    for job in (j for j in full if j["collective"] == "allreduce"):
        assert len(job["calls"]) == len(job["sizes"]) and job["calls"][0] == 8 and job["calls"][-1] == 1
        assert job["calls"] == sorted(job["calls"], reverse=True)
    one = bench_limits.plan_jobs(bench_cli.parse_args(["--point-seconds", "0"]), benchcore.Fabric(), True)
    assert all(c == 1 for j in one if j["collective"] == "allreduce" for c in j["calls"])


def test_parse_sizes_and_formatting():
    assert benchcore.parse_sizes("4k..4m") == [4096 << i for i in range(11)]
    assert benchcore.parse_sizes("8,64k,1m") == [8, 65536, MIB]
    with pytest.raises(ValueError):
        benchcore.parse_sizes("0")
    assert benchcore.fmt_bytes(MIB) == "1 MiB" and benchcore.fmt_bytes(4096) == "4 KiB"
    assert benchcore.fmt_seconds(1.5) == "1.50 s" and benchcore.fmt_seconds(0.0123) == "12.3 ms"


# --- the report -----------------------------------------------------------------------------

def fake_results(fab):
    hosts = list(range(1, 9))
    recs = []
    for impl, times in (("openmpi", [2.0, 2.2, 1.8]), ("sdnmpi", [1.0, 1.1, 0.9])):
        recs.append(benchcore.make_record("allreduce", impl, "dmodk", "random", 8, MIB, None, times,
                                          benchcore.allreduce_limit(fab, hosts, MIB),
                                          limits_s=benchcore.allreduce_limits(fab, hosts, MIB)))
    # a row where sdnmpi loses must show it
    recs.append(benchcore.make_record("allreduce", "openmpi", "ecmp", "block", 8, 4096, None, [0.01], 0.001))
    recs.append(benchcore.make_record("allreduce", "sdnmpi", "ecmp", "block", 8, 4096, None, [0.02], 0.001))
    recs.append(benchcore.make_record("bcast", "openmpi", "dmodk", "block", 4, MIB, 2, [1.0, 1.2], 0.2))
    recs.append(benchcore.make_record("init", "sdnmpi", "dmodk", "block", 8, 0, None, [0.05, 0.07], None,
                                      metric="sdn_init"))
    return {"started": "t0", "finished": "t1", "wall_s": 10.0, "quick": True, "fabric": fab.to_json(),
            "software": {"openmpi": "Open MPI v4.1.4"}, "method": {"have_sdn_bcast": False, "hide_job_flows": True},
            "cpu_check": {"verdict": "fine"}, "records": recs, "notes": ["a note"],
            "jobs": [{"name": "allreduce-dmodk-random-p8", "hosts": hosts, "wall_s": 5.0, "rc": 0,
                      "cpu": {}, "controller_rpc": {}, "collective": "allreduce",
                      "routes": {"toggles": 3, "job_flows_hidden": 48,
                                 "spine_tx_bytes": {"openmpi": {"bytes": {"s1": 100, "s2": 0},
                                                                "share": {"s1": 1.0, "s2": 0.0}}}}}],
            "planner_scale": planner_scale.run(fabrics=[("leaf_spine", {"spines": 2, "leaves": 2, "hosts_per_leaf": 2})])}


def test_report_tables_show_every_row_and_losses(fab):
    text = report.render_markdown(fake_results(fab))
    assert "| dmodk | random | 8 | 1 MiB | 2.00 s (1.80 s-2.20 s) | 1.00 s (900.0 ms-1.10 s) | 2.00 |" in text
    assert "0.50 (slower)" in text
    assert "Open MPI only" in text                      # no SDN_MPI_Bcast in this build
    assert "| dmodk | block | 4 | 2 | 1 MiB | 1.10 s (1.00 s-1.20 s) | - | - |" in text
    assert "SDN_MPI_Init" in text and "a note" in text and "fine" in text
    assert "Rabenseifner, dist." in text or "ring" in text
    assert "s1 100%" in text and "Planner scale" in text


def test_bcast_table_shows_the_one_tree_limit_and_sdnmpis_fraction_of_it(fab):
    hosts = list(range(1, 9))
    limits = benchcore.bcast_limits(fab, hosts, 0, MIB)
    recs = [benchcore.make_record("bcast", impl, "dmodk", "block", 8, MIB, 0, times, limits["any"], limits_s=limits)
            for impl, times in (("openmpi", [1.6]), ("sdnmpi", [0.5]))]
    table = report.collective_table(recs, "bcast")
    head, _rule, row = table.splitlines()
    assert head.split(" | ")[-3:] == ["one-tree limit", "sdnmpi / one-tree limit", "n |"]
    # 40/20 fabric: one pass over a 20 Mbit/s tree link; 1 MiB / 2.5 MB/s = 419.4 ms, 84 % of 0.5 s
    assert limits["tree"] > limits["any"]
    assert row.split(" | ")[-3:] == ["419.4 ms", "84%", "1/1 |"]


def test_report_marks_disrupted_rows_and_lists_re_run_attempts_apart(fab):
    results = fake_results(fab)
    old = [dict(r, superseded=True, attempt=1, job="allreduce-dmodk-random-p8", median_s=r["median_s"] * 10)
           for r in results["records"] if r["collective"] == "allreduce" and r["bytes"] == MIB]
    for r in results["records"]:
        if r["collective"] == "allreduce" and r["routing"] == "ecmp":
            r["job"] = "allreduce-ecmp-block-p8"
    results["records"] += old
    results["jobs"] += [
        {"name": "allreduce-dmodk-random-p8", "attempt": 1, "superseded": True, "rc": 0, "hosts": [1, 2],
         "disrupted": ["the machine stalled 1 time(s), longest 65.0 s (at 20 s into the job)"], "cpu": {}},
        {"name": "allreduce-ecmp-block-p8", "attempt": 2, "rc": 0, "hosts": [1, 2], "route_recomputes": 1,
         "disrupted": ["the controller recomputed its routes 1 time(s)"], "cpu": {}}]
    text = report.render_markdown(results)
    main, _sep, rest = text.partition("## Disrupted attempts")
    assert "| dmodk | random | 8 | 1 MiB | 2.00 s (1.80 s-2.20 s) | 1.00 s (900.0 ms-1.10 s) | 2.00 |" in main
    assert "20.00 s" not in main and "20.00 s" in rest          # the superseded attempt is apart
    assert "0.50 (slower)" in main and "| 1/1 ! |" in main      # the ecmp rows come from a disrupted job
    assert "**Re-run jobs.**" in text and "**Disrupted.**" in text and "65.0 s" in text
    assert "allreduce-ecmp-block-p8 (attempt 2)" in text and "(superseded)" in text


def test_write_report_makes_markdown_and_png_plots(fab, tmp_path):
    pytest.importorskip("matplotlib")
    results = fake_results(fab)
    report.write_report(results, str(tmp_path))
    assert (tmp_path / "results.md").read_text().startswith("# sdnmpi benchmark")
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "allreduce_time_dmodk.png" in pngs and "allreduce_speedup.png" in pngs
    assert "bcast_time_vs_p.png" in pngs and "planner_scale.png" in pngs
    assert all((tmp_path / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    json.dumps(results)   # still serialisable


# --- the harness's pure parts ---------------------------------------------------------------

def test_cookie_and_priority_constants_match_the_controller():
    from sdnmpi.controller import constants as C
    assert bench_common.COOKIE_JOB == C.COOKIE_JOB and bench_common.COOKIE_KIND_MASK == C.COOKIE_KIND_MASK
    assert bench_common.PRIORITY_ROUTE == C.PRIORITY_ROUTE
    assert bench_common.PRIORITY_JOB_ROUTE == C.PRIORITY_JOB_ROUTE and bench_common.PRIORITY_JOB_MULTICAST == C.PRIORITY_JOB_MULTICAST
    # the override flows sit above every job route (2000 + job id mod 1000) and below control flows,
    # and carry a cookie of no kind the controller uses
    assert C.PRIORITY_JOB_ROUTE + 999 < bench_flows.PRIORITY_OVERRIDE < C.PRIORITY_CONTROL
    kinds = {c & C.COOKIE_KIND_MASK for c in (C.COOKIE_CONTROL, C.COOKIE_ROUTE, C.COOKIE_JOB)}
    assert bench_flows.BENCH_COOKIE & C.COOKIE_KIND_MASK not in kinds


def test_planned_jobs_quick_full_and_16_hosts():
    quick = bench_limits.plan_jobs(bench_cli.parse_args(["--quick"]), benchcore.Fabric(), True)
    kinds = [(j["collective"], j["routing"], j["placement"], j["nprocs"]) for j in quick]
    assert ("allreduce", "single", "random", 8) in kinds and ("bcast", "dmodk", "block", 4) in kinds
    assert {j["routing"] for j in quick} == {"single", "dmodk", "ecmp"}
    assert all(j["timeout_s"] > j["work"] for j in quick)
    full = bench_limits.plan_jobs(bench_cli.parse_args([]), benchcore.Fabric(), True)
    assert {j["nprocs"] for j in full if j["collective"] == "bcast"} == {2, 4, 8}
    assert all(j["sizes"] == [65536 << i for i in range(7)] for j in full if j["collective"] == "bcast")
    assert all(j["sizes"] == [4096 << i for i in range(11)] for j in full if j["collective"] == "allreduce")
    args = bench_cli.parse_args(["--leaves", "4", "--hosts-per-leaf", "4"])
    big = bench_limits.plan_jobs(args, benchcore.Fabric(2, 4, 4), False)
    assert {j["nprocs"] for j in big if j["collective"] == "bcast"} == {2, 4, 8, 16}
    assert all(j["nimpl"] == 1 for j in big if j["collective"] == "bcast")
    assert bench_common.parse_nprocs("pow2", 8) == [2, 4, 8] and bench_common.parse_nprocs("3,all", 8) == [3, 8]
    with pytest.raises(ValueError):
        bench_common.parse_nprocs("9", 8)
    assert bench_cli.main(["--quick", "--dry-run"]) == 0


def test_mca_option_is_validated_and_recorded():
    args = bench_cli.parse_args(["--ompi-mca", "coll_tuned_use_dynamic_rules=1",
                           "--ompi-mca", "OMPI_MCA_coll_tuned_allreduce_algorithm=4"])
    assert args.mca == [("coll_tuned_use_dynamic_rules", "1"), ("coll_tuned_allreduce_algorithm", "4")]
    for bad in ("novalue", "btl=tcp,self,vader", "mpi_yield_when_idle=0", "=1", "a b=1"):
        with pytest.raises(ValueError):
            bench_cli.parse_mca([bad])
    with pytest.raises(SystemExit):
        bench_cli.parse_args(["--ompi-mca", "btl_tcp_if_include=lo"])
    fixed = bench_common.coll_tuned_note({"coll_tuned_use_dynamic_rules": "false"})
    assert "fixed decision rules" in fixed
    forced = bench_common.coll_tuned_note({"coll_tuned_use_dynamic_rules": "true", "coll_tuned_allreduce_algorithm": "ring",
                                  "coll_tuned_bcast_algorithm": "ignore"},
                                 [("coll_tuned_use_dynamic_rules", "1")])
    assert "forced: allreduce ring, bcast ignore" in forced and "--ompi-mca coll_tuned_use_dynamic_rules=1" in forced


def test_bcast_rate_follows_the_slowest_link_unless_given():
    assert bench_limits.bcast_rate("auto", 40, 20) == 18          # the library's default on the default fabric
    assert bench_limits.bcast_rate("auto", 40, 10) == 9
    assert bench_limits.bcast_rate("auto", 0, 0) is None
    assert bench_limits.bcast_rate("lib", 40, 20) is None
    assert bench_limits.bcast_rate("30", 40, 20) == 30
    with pytest.raises(ValueError):
        bench_limits.bcast_rate("0", 40, 20)
    args = bench_cli.parse_args(["--fabric-bw", "10"])
    assert bench_jobs.sdn_env(args) == {"SDN_MPI_TIMEOUT_MS": "30000", "SDN_MPI_BCAST_RATE_MBPS": "9"}
    assert bench_jobs.sdn_env(bench_cli.parse_args(["--host-bw", "40", "--fabric-bw", "20"]))["SDN_MPI_BCAST_RATE_MBPS"] == "18"
    assert "SDN_MPI_BCAST_RATE_MBPS" not in bench_jobs.sdn_env(bench_cli.parse_args(["--sdn-bcast-rate", "lib"]))


DUMP = """\
 cookie=0x5d4d504901000000, priority=60000,arp actions=CONTROLLER:65535
 cookie=0x5d4d504903000004, priority=3000,udp,nw_src=10.0.0.1,nw_dst=239.77.0.1,tp_dst=47001 actions=group:65536
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.1,nw_dst=10.0.0.5 actions=output:4
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.2,nw_dst=10.0.0.6 actions=output:4
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.3,nw_dst=10.0.0.9 actions=output:4
 cookie=0x5d4d504902000000, priority=1000,ip,nw_dst=10.0.0.5 actions=output:3
 cookie=0x5d4d504902000000, priority=1000,ip,nw_dst=10.0.0.6 actions=group:4097
 cookie=0x5d4d504901000000, priority=10,ip actions=CONTROLLER:65535
 priority=0 actions=drop
"""


def test_override_flows_copy_the_default_route_of_each_job_pair():
    flows, missing = bench_flows.override_flows(DUMP.splitlines())
    assert flows == [
        "cookie=0x%x,priority=%d,ip,nw_src=10.0.0.1,nw_dst=10.0.0.5,actions=output:3" % (bench_flows.BENCH_COOKIE, bench_flows.PRIORITY_OVERRIDE),
        "cookie=0x%x,priority=%d,ip,nw_src=10.0.0.2,nw_dst=10.0.0.6,actions=group:4097" % (bench_flows.BENCH_COOKIE, bench_flows.PRIORITY_OVERRIDE)]
    assert missing == ["ip,nw_src=10.0.0.3,nw_dst=10.0.0.9"]   # no default route to copy
    assert bench_flows.override_flows([l for l in DUMP.splitlines() if "priority=2001" not in l]) == ([], [])
    assert bench_flows.parse_flow(" priority=0 actions=drop") is None or bench_flows.parse_flow(" priority=0 actions=drop")[1] == 0


def request(tmp_path, seq, what):
    (tmp_path / "req.tmp").write_text("%d %s\n" % (seq, what))
    os.rename(tmp_path / "req.tmp", tmp_path / "req")
    for _ in range(2000):
        if (tmp_path / "ack").exists() and (tmp_path / "ack").read_text().split() == [str(seq)]:
            return True
        time.sleep(0.005)
    return False


def test_route_switch_answers_requests_in_order_and_reads_the_plan_at_the_end(tmp_path):
    """The --toggle protocol without switches: every request is acknowledged, "end" runs on_end."""
    ended = []
    switch = bench_flows.RouteSwitch(str(tmp_path), bridges=[], spine_ports={}, hide=True,
                             on_end=lambda: ended.append(True), wait=lambda: (0.0, None))
    with switch:
        for seq, what in enumerate(["sdnmpi", "openmpi", "sdnmpi", "openmpi", "end"], start=1):
            assert request(tmp_path, seq, what)
            assert switch.state == what
    summary = switch.summary()
    assert summary["toggles"] == 4 and summary["ended"] and ended == [True]
    assert summary["hide_job_flows"] is True and summary["errors"] == []
    assert summary["revalidate_wait_s_total"] == 0.0   # no flow table changed, so no waiting


def test_route_switch_waits_for_revalidation_only_after_a_change(tmp_path, monkeypatch):
    waits, calls = [], []

    def fake_ofctl(*argv, stdin=None):
        calls.append((argv, stdin))
        out = DUMP if argv[:2] == ("--no-stats", "dump-flows") else ""
        return subprocess.CompletedProcess(argv, 0, out, None)
    monkeypatch.setattr(bench_flows, "ofctl", fake_ofctl)
    switch = bench_flows.RouteSwitch(str(tmp_path), bridges=["bnl1", "bns1"], spine_ports={}, hide=True,
                             wait=lambda: waits.append(1) or (0.5, None))
    with switch:
        for seq, what in enumerate(["sdnmpi", "openmpi", "openmpi", "sdnmpi", "openmpi", "end"], start=1):
            assert request(tmp_path, seq, what)
    # hide (2 changes: one per switch), restore, hide, and "end" removes the overrides again
    assert len(waits) == 4 and switch.summary()["job_flows_hidden"] == 4
    adds = [c for c in calls if c[0][0] == "add-flows"]
    dels = [c for c in calls if c[0][0] == "del-flows"]
    assert len(adds) == 4 and all("priority=%d" % bench_flows.PRIORITY_OVERRIDE in c[1] for c in adds)
    assert len(dels) == 4 and all(c[0][2] == "cookie=0x%x/-1" % bench_flows.BENCH_COOKIE for c in dels)
    assert not switch.hidden


def test_summarize_jobs_and_disruption_reasons():
    jobs = [{"job": 3, "comms": {"0": {"planner": "balanced", "max_load": [0, 1, 1], "lower_bound": [0, 1, 1],
                                        "flows": 48}},
             "routes": [{}] * 48,
             "trees": [{"comm": 0, "root": "10.0.0.1", "members": ["a", "b"], "top": "0000000000000102",
                        "switches": {"x": [1], "y": [2]}}]}]
    class Topo:
        dpids = {"bns2": "0000000000000102"}
    out = bench_jobs.summarize_jobs(jobs, Topo())
    assert out["comm 0"]["max_load"] == [0, 1, 1] and out["routes"] == 48
    assert out["trees"] == [{"comm": 0, "root": "10.0.0.1", "members": 2, "top": "bns2", "switches": 2}]
    assert bench_jobs.disruption_reasons({"cpu": {"stalls": []}, "route_recomputes": 0}) == []
    reasons = bench_jobs.disruption_reasons({"cpu": {"stalls": [{"at_s": 20.0, "length_s": 65.4}]}, "route_recomputes": 2})
    assert len(reasons) == 2 and "65.4 s" in reasons[0] and "2 time(s)" in reasons[1]


def test_process_accounting_counts_only_foreign_processes():
    prev = {1: (0, 100), 2000: (1, 50), 2001: (2000, 10), 3000: (1, 5), 4000: (1, 7)}
    cur = {1: (0, 100), 2000: (1, 60), 2001: (2000, 30), 3000: (1, 25), 5000: (1, 4)}
    ours = bench_sampling.descendants(cur, 2000)
    assert ours == {2000, 2001}
    # 3000 grew by 20, 5000 is new (4 ticks); 4000 vanished; 1 did not grow; ours and 1 excluded
    assert bench_sampling.foreign_ticks(prev, cur, ours, excluded={1}) == 24
    assert bench_sampling.weighted_mean([100, 50], [3, 1]) == 87.5 and bench_sampling.weighted_mean([1], [0]) is None


def test_cpu_monitor_samples_this_machine():
    """Waits for the samples themselves, not a fixed time: on a loaded machine the sampler runs late."""
    with bench_sampling.CpuMonitor(interval=0.1, link_interval=0.05, links=[("lo", "tx", 1000.0)]) as mon:
        deadline = time.monotonic() + 60
        while (len(mon.busy) < 2 or len(mon.link_util) < 4) and time.monotonic() < deadline:
            time.sleep(0.02)
    summary = mon.summary()
    assert summary["machine_busy_pct"]["samples"] >= 2
    # the sampler may really be held off for stall_s on a loaded machine: only the records' form is checked
    assert all(s["length_s"] >= 2.0 and s["at_s"] >= 0 for s in summary["stalls"])
    assert summary["foreign_cpu_pct_of_one_cpu"]["median"] >= 0
    assert summary["busiest_link_pct"]["samples"] >= 4


def test_link_directions_cover_every_direction_of_every_link():
    from sdnmpi.mininet_topos.fattree import LeafSpineTopo
    bench = bench_fabric.Bench.__new__(bench_fabric.Bench)
    bench.topo = LeafSpineTopo(spines=2, leaves=4, hosts_per_leaf=2, host_bw=40, fabric_bw=20, prefix="zz")
    links = bench.link_directions()
    assert len(links) == 2 * (8 + 8) and len(set(links)) == len(links)
    assert ("zzl1-eth1", "tx", 40) in links and ("zzl1-eth1", "rx", 40) in links
    assert ("zzl1-eth3", "tx", 20) in links and ("zzs1-eth1", "tx", 20) in links


def verdict_results(iperf=19.0, parallel=142.0, foreign=1, disrupted=()):
    def job(name, collective="allreduce", **extra):
        return dict({"name": name, "collective": collective,
                     "cpu": {"machine_busy_pct": {"median": 100}, "steal_pct": {"median": 0},
                             "ovs_vswitchd_pct_of_one_core": {"median": 80},
                             "ovs_main_run_weighted_pct": 75, "ovs_main_wait_weighted_pct": 10,
                             "ovs_main_runnable_weighted_pct": 85, "busiest_link_weighted_pct": 80.0,
                             "foreign_cpu_pct_of_one_cpu": {"median": foreign}}}, **extra)
    jobs = [job("a"), job("b"), job("init", collective="init", disrupted=[])]
    jobs += [job(name, disrupted=["the machine stalled"]) for name in disrupted]
    jobs += [job("old", disrupted=["the machine stalled"], superseded=True)]
    flows = [{"client": "h%d" % (2 * k + 1), "server": "h3", "mbit_s": parallel / 8, "offered_mbit_s": 18.0,
              "fair_share_mbit_s": 20.0, "across_spines": k % 2 == 0} for k in range(8)]
    return {"fabric": {"fabric_bw_mbit": 20},
            "cpu_check": {"iperf": [{"client": "h1", "server": "h8", "seconds": 5, "mbit_s": iperf,
                                     "fraction_of_fabric_bw": iperf / 20, "foreign_cpu_pct": foreign}],
                          "parallel": {"protocol": "udp", "seconds": 5, "load": 0.9, "flows": flows,
                                       "mbit_s": parallel, "offered_mbit_s": 144.0,
                                       "fraction_received": parallel / 144.0,
                                       "cpu": {"foreign_cpu_pct_of_one_cpu": {"median": foreign}}}},
            "jobs": jobs}


def test_cpu_verdict():
    good = verdict_results()
    bench_limits.finish_cpu_check(good)
    check = good["cpu_check"]
    assert check["link_bound"] and "VERDICT: link-bound" in check["verdict"], check["verdict"]
    assert check["criteria"] == {"iperf": True, "parallel": True, "stable": True}
    assert "1 attempt(s) re-run" in check["verdict"] and check["jobs_rerun"] == ["old"]
    assert "8 UDP flows at once (4 across the spines, 4 within leaves" in check["verdict"]
    assert "142.0 of the 144.0 Mbit/s offered arrived = 99%" in check["verdict"]
    for bad, failing in ((verdict_results(iperf=12.0), "iperf"), (verdict_results(parallel=100.0), "parallel"),
                         (verdict_results(disrupted=["c"]), "stable")):
        bench_limits.finish_cpu_check(bad)
        check = bad["cpu_check"]
        assert not check["link_bound"] and check["criteria"][failing] is False
        assert "VERDICT: NOT shown to be link-bound" in check["verdict"]
    assert "c: the machine stalled" in bad["cpu_check"]["verdict"]
    quiet_but_slow = verdict_results(parallel=100.0)
    bench_limits.finish_cpu_check(quiet_but_slow)
    assert "lower --host-bw/--fabric-bw" in quiet_but_slow["cpu_check"]["verdict"]
    shared = verdict_results(parallel=100.0, foreign=60)
    bench_limits.finish_cpu_check(shared)
    assert shared["cpu_check"]["machine_shared"] and "re-run on a quiet machine" in shared["cpu_check"]["verdict"]
    empty = {"fabric": {"fabric_bw_mbit": 20}, "cpu_check": {"iperf": []}, "jobs": []}
    bench_limits.finish_cpu_check(empty)
    assert not empty["cpu_check"]["link_bound"] and "no data for criterion iperf" in empty["cpu_check"]["verdict"]


def test_parallel_check_pairs_load_every_first_host_link_and_one_flow_per_fabric_link():
    fab = benchcore.Fabric(host_bw=40, fabric_bw=20)
    pairs = bench_limits.parallel_pairs(fab)
    assert pairs == [(1, 3, 20.0), (2, 1, 20.0), (3, 5, 20.0), (4, 3, 20.0), (5, 7, 20.0), (6, 5, 20.0),
                     (7, 1, 20.0), (8, 7, 20.0)]
    for leaf in range(1, 5):   # one flow up and one down per leaf across the spines
        assert sum(1 for s, d, _ in pairs if fab.leaf_of(s) == leaf and fab.leaf_of(d) != leaf) == 1
        assert sum(1 for s, d, _ in pairs if fab.leaf_of(d) == leaf and fab.leaf_of(s) != leaf) == 1
    wide = bench_limits.parallel_pairs(benchcore.Fabric(spines=2, leaves=2, hosts_per_leaf=2, host_bw=40, fabric_bw=40))
    assert [r for _s, _d, r in wide] == [20.0, 20.0, 20.0, 20.0]
    thin = bench_limits.parallel_pairs(benchcore.Fabric(host_bw=40, fabric_bw=10))
    assert {r for _s, _d, r in thin} == {10.0, 30.0}
    assert bench_limits.parallel_pairs(benchcore.Fabric(leaves=1, hosts_per_leaf=2, host_bw=40)) == [(2, 1, 40.0)]
    default = bench_cli.parse_args([])
    assert (default.host_bw, default.fabric_bw) == (benchcore.Fabric().host_bw, benchcore.Fabric().fabric_bw) == (30, 15)
    assert default.bcast_rate_mbps == 13
    assert bench_common.mbit("20") == 20 and bench_common.mbit("2.5") == 2.5
    assert bench_limits.udp_received_mbit(json.dumps({"end": {"sum": {"bits_per_second": 18e6, "lost_percent": 10.0}}})) \
        == pytest.approx(16.2)
    assert bench_limits.udp_received_mbit(json.dumps({"end": {"sum": {"bits_per_second": 18e6, "lost_percent": 10.0},
                                                     "sum_received": {"bits_per_second": 17e6}}})) == pytest.approx(17)


# --- coll_bench (compiled and run under mpirun on localhost, no Mininet, no controller) --------

MPICC, MPIRUN = shutil.which("mpicc"), shutil.which("mpirun")
LIBSDNMPI = os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a")
COLL_BENCH_SRCS = ("coll_bench.c", "coll_bench_io.c", "coll_bench_more.c")   # as bench/Makefile's SRCS
COLL_BENCH_SRCS += ("coll_bench_startup.c",)


def build_coll_bench(tmp_path, have):
    out = tmp_path / ("coll_bench%d" % have)
    subprocess.run([MPICC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    "-DHAVE_SDN_BCAST=%d" % have, "-I" + os.path.join(ROOT, "libsdnmpi", "include"),
                    "-o", str(out)] + [os.path.join(BENCH, src) for src in COLL_BENCH_SRCS] + [LIBSDNMPI, "-lmsgpackc", "-lz", "-pthread"],
                   check=True, capture_output=True, text=True)
    return out


@pytest.mark.skipif(not (MPICC and MPIRUN and os.path.exists(LIBSDNMPI)),
                    reason="needs mpicc, mpirun and a built libsdnmpi.a")
@pytest.mark.parametrize("collective", ["allreduce", "bcast", "bcast-without-sdn", "init"])
def test_coll_bench_alternates_the_implementations_and_talks_to_the_harness(tmp_path, collective):
    have = 0 if collective == "bcast-without-sdn" or not bench_cli._have_sdn_bcast_symbol() else 1
    prog = build_coll_bench(tmp_path, have)
    toggle = tmp_path / "toggle"
    toggle.mkdir()
    ended = []
    switch = bench_flows.RouteSwitch(str(toggle), bridges=[], spine_ports={}, hide=True,
                             on_end=lambda: ended.append(True), wait=lambda: (0.0, None))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SDN_MPI_DISABLE="1")
    argv = [MPIRUN, "--oversubscribe", "-np", "3", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1",
            "-x", "SDN_MPI_DISABLE", str(prog), "--collective", collective.split("-")[0], "--reps", "2",
            "--sizes", "4096,65536", "--roots", "0,2", "--tiny-reps", "4", "--tiny-block", "2", "--toggle", str(toggle)]
    with switch:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]
    assert events[0]["bench"] == "meta" and events[0]["have_sdn_bcast"] is bool(have)
    assert events[-1] == {"bench": "done"} and ended == [True]
    assert all(e["ok"] for e in events if e["bench"] == "check")
    samples = [e for e in events if e["bench"] == "sample" and e["bytes"] > 8]
    if collective == "init":
        assert {e["metric"] for e in events if e["bench"] == "init"} == {"sdn_init", "first_allreduce", "cached_allreduce"}
        return
    impls = ("openmpi", "sdnmpi") if have or collective == "allreduce" else ("openmpi",)
    points = {}
    for e in samples:
        points.setdefault((e["rep"], e["bytes"], e["root"]), []).append(e["impl"])
    roots = [0, 2] if collective.startswith("bcast") else [-1]
    assert sorted(points) == sorted((rep, b, r) for rep in range(2) for b in (4096, 65536) for r in roots)
    assert all(sorted(order) == sorted(impls) for order in points.values())
    if len(impls) == 2:
        # which implementation goes first alternates from point to point and from rep to rep
        for rep in range(2):
            firsts = [points[k][0] for k in sorted((k for k in points if k[0] == rep),
                                                   key=lambda k: (roots.index(k[2]), k[1]))]
            assert all(x != y for x, y in zip(firsts, firsts[1:]))
        for b in (4096, 65536):
            for r in roots:
                assert points[(0, b, r)][0] != points[(1, b, r)][0]
        # consecutive calls mostly share an implementation: one route switch per point at most
        assert switch.summary()["toggles"] <= 2 * len(points) + 8
    recs = benchcore.aggregate_samples(samples, "dmodk", "block", 3, lambda *a: None)
    assert {r["impl"] for r in recs} == set(impls) and all(len(r["samples_s"]) == 2 for r in recs)


@pytest.mark.skipif(not (MPICC and MPIRUN and os.path.exists(LIBSDNMPI)),
                    reason="needs mpicc, mpirun and a built libsdnmpi.a")
def test_coll_bench_makes_back_to_back_calls_per_point_with_one_route_switch(tmp_path):
    prog = build_coll_bench(tmp_path, 0)
    toggle = tmp_path / "toggle"
    toggle.mkdir()
    switch = bench_flows.RouteSwitch(str(toggle), bridges=[], spine_ports={}, hide=True,
                             on_end=lambda: None, wait=lambda: (0.0, None))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SDN_MPI_DISABLE="1")
    base = [MPIRUN, "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1",
            "-x", "SDN_MPI_DISABLE", str(prog), "--collective", "allreduce", "--reps", "2",
            "--sizes", "4096,65536", "--tiny-reps", "0"]
    with switch:
        proc = subprocess.run(base + ["--calls", "3,1", "--toggle", str(toggle)], env=env, capture_output=True,
                              text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]
    samples = [(e["impl"], e["bytes"], e["rep"]) for e in events if e["bench"] == "sample"]
    for impl in ("openmpi", "sdnmpi"):
        assert sorted(r for i, b, r in samples if i == impl and b == 4096) == list(range(6))
        assert sorted(r for i, b, r in samples if i == impl and b == 65536) == [0, 1]
    # each implementation's calls at a point are consecutive: 2 reps x 2 sizes x 2 implementations = 8 runs
    runs = [k for k, (a, b) in enumerate(zip(samples, samples[1:])) if a[:2] != b[:2]]
    assert len(runs) + 1 == 8
    assert switch.summary()["toggles"] <= 8 + 4
    bad = subprocess.run(base + ["--calls", "3"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--calls has 1 entries for 2 sizes" in bad.stderr


# --- planner scale --------------------------------------------------------------------------

def test_planner_scale_tiny_run():
    rows = planner_scale.run(fabrics=[("leaf_spine", {"spines": 2, "leaves": 4, "hosts_per_leaf": 4}),
                                      ("kary", {"k": 4})])
    assert len(rows) == 2 * 2 * 2   # fabrics x placements x planners
    for r in rows:
        assert r["hosts"] == 16 and r["plan_s"] >= 0 and len(r["max_load"]) == r["steps"] == 4
        assert all(m >= b for m, b in zip(r["max_load"], r["lower_bound"]))
        if r["planner"] == "balanced" and r["kind"] == "leaf_spine":
            assert r["ratio"] == 1.0 and r["sum_ratio"] == 1.0
    assert planner_scale.fabric_hosts("kary", {"k": 16, "hosts_per_edge": 32}) == 4096
    assert planner_scale.fabric_hosts("leaf_spine", {"spines": 32, "leaves": 64, "hosts_per_leaf": 64}) == 4096
    assert planner_scale.run(max_hosts=8) == []
    assert "| leaf-spine 2s/4l/4h | 16 |" in planner_scale.format_table(rows)
    assert math.isfinite(rows[0]["sum_ratio"])
