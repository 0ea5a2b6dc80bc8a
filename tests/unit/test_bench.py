"""bench/: placements, the limit model, parsing and aggregation of coll_bench's output, and the
report. Pure and fast: no Mininet, no MPI, no root."""
import json
import random
import statistics

import pytest

from bench_setup import small_fabric

import bench_cli
import bench_limits
import benchcore
import planner_scale
import report


MIB = 1 << 20


def seconds(nbytes, mbit):
    return nbytes * 8 / (mbit * 1e6)


@pytest.fixture
def fab():
    return small_fabric()


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
    assert "untimed allreduce call" not in text
    settled = fake_results(fab)
    settled["method"]["settle_calls"] = 1   # --settle-calls: said in the header
    assert "After each route switch, 1 allreduce, allgather, reduce or alltoall call(s)" in report.render_markdown(settled)


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
    results = fake_results(fab)
    report.write_report(results, str(tmp_path))
    assert (tmp_path / "results.md").read_text().startswith("# sdnmpi benchmark")
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "allreduce_time_dmodk.png" in pngs and "allreduce_speedup.png" in pngs
    assert "bcast_time_vs_p.png" in pngs and "planner_scale.png" in pngs
    assert all((tmp_path / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    json.dumps(results)   # still serialisable


def test_report_puts_the_first_calls_after_a_switch_next_to_the_samples(fab):
    """report_settle: per row and variant, the first calls' median / the samples' median, and the
    speedup from the samples and from the first calls alone; nothing without first-call records."""
    import report_settle
    results = fake_results(fab)
    assert report_settle.section(results) == []
    hosts = list(range(1, 9))
    for impl, times in (("first:openmpi", [2.2, 2.2]), ("first:sdnmpi", [1.5, 1.3, 1.4])):
        results["records"].append(benchcore.make_record("allreduce", impl, "dmodk", "random", 8, MIB, None, times,
                                                        benchcore.allreduce_limit(fab, hosts, MIB)))
    ratios = {impl: round(r, 3) for _key, impl, r, _n, _m in report_settle.first_call_ratios(results["records"])}
    assert ratios == {"openmpi": 1.1, "sdnmpi": 1.4}
    text = "\n".join(report_settle.section(results))
    assert "| allreduce | dmodk | random | 8 | 1 MiB | sdnmpi | 1.400 | 3 / 3 | 2.00 | 1.57 |" in text
    assert "openmpi 1.100 over 1 rows" in text
    assert "The first call after a route switch" in report.render_markdown(results)
    # the tables and pairs leave the first calls out
    assert all(o["impl"] == "openmpi" and (s is None or s["impl"] == "sdnmpi")
               for o, s in benchcore.pair_records(results["records"], "allreduce") if o)


def test_speedup_interval_resamples_blocks_whole_when_calls_share_their_noise():
    # Five blocks a side; each block's calls share one level (the machine's state while it ran),
    # as coll_bench's tiny calls between two route switches do. Call by call, 100 samples look
    # like plenty and give a narrow interval; block by block there are only five draws.
    rng = random.Random(5)

    def rec(impl, levels):
        return {"impl": impl, "samples_s": [lvl * rng.uniform(0.98, 1.02) for lvl in levels for _ in range(20)]}
    o = rec("openmpi", [2.5, 9.0, 3.0, 12.0, 2.8])
    s = rec("sdnmpi", [3.0, 2.6, 10.0, 11.0, 2.9])
    calls = benchcore.speedup_interval(o, s)
    blocks = benchcore.speedup_interval(dict(o, sample_block=20), dict(s, sample_block=20))
    assert blocks[1] - blocks[0] > 2 * (calls[1] - calls[0])
    assert blocks[0] < 1.0 < blocks[1]
    # four blocks are too few draws for an interval, whatever the number of calls
    assert benchcore.speedup_interval(dict(o, samples_s=o["samples_s"][:80], sample_block=20),
                                      dict(s, sample_block=20)) is None
