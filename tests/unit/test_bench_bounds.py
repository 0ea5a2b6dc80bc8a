"""bench/bounds.py: the any-algorithm bound of every collective, against hand-computed cases on the
bench's default fabric (2 spines, 4 leaves x 2 hosts, host links 30 Mbit/s, fabric links 15 Mbit/s)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import benchcore  # noqa: E402
import bounds  # noqa: E402

MIB = 1 << 20
FAB = benchcore.Fabric()                    # 30 / 15 Mbit/s, 2 spines, 4 leaves x 2 hosts
ALL8 = list(range(1, 9))
RANDOM8 = benchcore.placement_hosts("random", 8, 8, 7)


def secs(nbytes, mbit):
    return nbytes * 8.0 / (mbit * 1e6)


def test_allreduce_8_hosts_is_host_bound():
    b = bounds.allreduce_bound(FAB, ALL8, MIB)
    assert b["host"] == pytest.approx(0.48934, abs=1e-5)        # issue 17: 0.49 s
    assert b["cut"] == pytest.approx(0.27962, abs=1e-5)          # 1 MiB over 2 x 15 Mbit/s
    assert b["bound"] == b["host"]
    # the placement does not change it: every leaf still holds some but not all ranks
    assert bounds.allreduce_bound(FAB, RANDOM8, MIB) == b


def test_allreduce_small_cases():
    one_leaf = bounds.allreduce_bound(FAB, [1, 2], MIB)
    assert one_leaf == {"host": pytest.approx(secs(MIB, 30)), "cut": 0.0, "bound": pytest.approx(secs(MIB, 30))}
    two_leaves = bounds.allreduce_bound(FAB, [1, 3], MIB)
    assert two_leaves["host"] == pytest.approx(secs(MIB, 30)) and two_leaves["cut"] == pytest.approx(secs(MIB, 30))
    assert bounds.allreduce_bound(FAB, [5], MIB) == {"host": 0.0, "cut": 0.0, "bound": 0.0}
    # 4 ranks on one leaf of a 4-host leaf: no cut
    fab = benchcore.Fabric(leaves=2, hosts_per_leaf=4)
    assert bounds.allreduce_bound(fab, [1, 2, 3, 4], 3000)["cut"] == 0.0
    assert bounds.allreduce_bound(fab, [1, 2, 3, 4], 3000)["host"] == pytest.approx(secs(2 * 3 / 4 * 3000, 30))


def test_a_thin_fabric_makes_the_cut_the_bound():
    fab = benchcore.Fabric(spines=2, leaves=4, hosts_per_leaf=2, host_bw=30, fabric_bw=2)
    b = bounds.allreduce_bound(fab, ALL8, MIB)
    assert b["cut"] == pytest.approx(secs(MIB, 4)) and b["bound"] == b["cut"] > b["host"]


def test_unlimited_links():
    fab = benchcore.Fabric(host_bw=0, fabric_bw=15)
    b = bounds.allreduce_bound(fab, ALL8, MIB)
    assert b["host"] is None and b["bound"] == b["cut"] == pytest.approx(secs(MIB, 30))
    fab = benchcore.Fabric(host_bw=0, fabric_bw=0)
    assert bounds.allreduce_bound(fab, ALL8, MIB)["bound"] is None


def test_bcast_equals_the_existing_any_limit():
    b = bounds.bcast_bound(FAB, ALL8, 0, MIB)
    assert b["bound"] == pytest.approx(0.27962, abs=1e-5)        # results.md: 279.6 ms (any algorithm)
    for hosts in (ALL8, RANDOM8, [1, 2], [1, 3, 5], [2, 7]):
        for root in range(len(hosts)):
            assert bounds.bcast_bound(FAB, hosts, root, 4 * MIB)["bound"] == pytest.approx(
                benchcore.bcast_limits(FAB, hosts, root, 4 * MIB)["any"])


def test_reduce():
    b = bounds.reduce_bound(FAB, ALL8, 3, MIB)
    assert b["host"] == pytest.approx(secs(MIB, 30)) and b["cut"] == pytest.approx(secs(MIB, 30))
    assert bounds.reduce_bound(FAB, [1, 2], 0, MIB)["cut"] == 0.0
    with pytest.raises(ValueError):
        bounds.reduce_bound(FAB, ALL8, 8, MIB)


def test_allgather():
    block = 128 << 10
    b = bounds.allgather_bound(FAB, ALL8, block)
    assert b["host"] == pytest.approx(secs(7 * block, 30))       # 0.2447 s: 7 blocks in
    assert b["cut"] == pytest.approx(secs(6 * block, 30))        # a leaf of 2 takes 6 blocks in
    assert b["bound"] == b["host"]
    # 2 leaves x 4 hosts: 4 blocks each way over 2 x 15 Mbit/s
    fab = benchcore.Fabric(leaves=2, hosts_per_leaf=4)
    assert bounds.allgather_bound(fab, ALL8, block)["cut"] == pytest.approx(secs(4 * block, 30))
    # 3 ranks, two on leaf 1: that leaf sends 2 blocks out, the other takes 2 in
    assert bounds.allgather_bound(FAB, [1, 2, 3], block)["cut"] == pytest.approx(secs(2 * block, 30))


def test_alltoall_is_cut_bound_on_the_default_fabric():
    block = 64 << 10
    b = bounds.alltoall_bound(FAB, ALL8, block)
    assert b["host"] == pytest.approx(secs(7 * block, 30))
    assert b["cut"] == pytest.approx(secs(2 * 6 * block, 30))   # 2 ranks x 6 outside partners
    assert b["bound"] == b["cut"] == pytest.approx(0.20972, abs=1e-5)
    fab = benchcore.Fabric(leaves=2, hosts_per_leaf=4)
    assert bounds.alltoall_bound(fab, ALL8, block)["cut"] == pytest.approx(secs(16 * block, 30))


def test_dispatch_and_errors():
    for coll in bounds.COLLECTIVES:
        assert bounds.bound(coll, FAB, ALL8, MIB)["bound"] > 0
    with pytest.raises(ValueError):
        bounds.bound("scan", FAB, ALL8, MIB)
    with pytest.raises(ValueError):
        bounds.allreduce_bound(FAB, [1, 1, 2], MIB)              # one rank per host
    assert bounds.ratio(0.98, 0.49) == pytest.approx(2.0)
    assert bounds.ratio(None, 0.49) is None and bounds.ratio(1.0, 0.0) is None


def test_no_algorithm_limit_beats_the_bound():
    """The per-schedule limits (benchcore) are limits of particular algorithms: never below the bound."""
    for hosts in (ALL8, RANDOM8, [1, 2, 3, 5, 8], [2, 4, 6]):
        for nbytes in (4096, MIB):
            lim = benchcore.allreduce_limit(FAB, hosts, nbytes)
            assert lim >= bounds.allreduce_bound(FAB, hosts, nbytes)["bound"] * (1 - 1e-9)


# --- results.md's section (report_bounds.py) -----------------------------------------------------

import report_bounds  # noqa: E402


def _rec(impl, median, nbytes=MIB, routing="dmodk", placement="block", job="allreduce-dmodk-block-p8"):
    return {"collective": "allreduce", "impl": impl, "routing": routing, "placement": placement, "nprocs": 8,
            "bytes": nbytes, "root": None, "median_s": median, "samples_s": [median], "job": job}


RESULTS = {"fabric": {"spines": 2, "leaves": 4, "hosts_per_leaf": 2, "host_bw_mbit": 30, "fabric_bw_mbit": 15},
           "jobs": [{"name": "allreduce-dmodk-block-p8", "hosts": ALL8}]}


def test_bound_table_computes_bounds_from_the_jobs_hosts():
    results = dict(RESULTS, records=[_rec("openmpi", 1.61), _rec("sdnmpi", 0.98), _rec("sdnmpi", 0.01, nbytes=8)])
    table = report_bounds.bound_table(results)
    rows = [line for line in table.splitlines() if line.startswith("| allreduce")]
    assert len(rows) == 1                                        # 8 B is below MIN_BYTES
    assert "489.3 ms" in rows[0] and "279.6 ms" in rows[0]
    assert "| 3.29x | 2.00x |" in rows[0]                        # 1.61 / 0.4893, 0.98 / 0.4893
    assert report_bounds.median_ratio(results, "allreduce") == pytest.approx(0.98 / 0.48934, rel=1e-4)


def test_choice_check_within_five_percent():
    recs = [_rec("sdnmpi", 1.04), _rec("sdnmpi:rd", 2.0), _rec("sdnmpi:hier", 1.0),
            _rec("sdnmpi", 1.10, nbytes=256 << 10), _rec("sdnmpi:hier", 1.0, nbytes=256 << 10),
            _rec("openmpi", 3.0, nbytes=512 << 10)]
    checks = report_bounds.choice_check(recs)
    assert [(c[0][4], c[1], c[3], c[5]) for c in checks] == [(256 << 10, "?", "hier", False), (MIB, "?", "hier", True)]
    text = report_bounds.choice_table(recs)
    assert "1 of 2 rows within 5 %" in text and "**no**" in text
    # the library reports its algorithm: its samples join that algorithm's
    recs[0].update(sdn_paths=["hier"], samples_s=[1.04, 1.06, 1.08])
    recs[2].update(samples_s=[0.9, 1.0, 1.0])
    recs[1].update(samples_s=[1.0, 1.01, 1.02])
    recs[1]["impl"] = "sdnmpi:rabenseifner"
    checks = report_bounds.choice_check(recs)
    assert checks[1][1:] == ("hier", pytest.approx(1.02), "rabenseifner", pytest.approx(1.01), True)


def test_forced_algorithms_are_planned_and_passed_to_coll_bench():
    import bench_cli
    import bench_jobs
    import bench_limits
    base = ["--quick", "--collectives", "allreduce", "--routings", "dmodk"]
    plain = bench_limits.plan_jobs(bench_cli.parse_args(base), benchcore.Fabric(), True)
    forced = bench_limits.plan_jobs(bench_cli.parse_args(base + ["--sdn-algs", "rd,hier"]), benchcore.Fabric(), True)
    assert [j["sdn_algs"] for j in forced] == [["rd", "hier"]] * len(plain) and all(j["nimpl"] == 4 for j in forced)
    assert all(f["work"] > p["work"] for f, p in zip(forced, plain))
    # the hierarchical algorithm at a pipeline depth of its own (coll_bench's hier-dN)
    depths = bench_limits.plan_jobs(bench_cli.parse_args(base + ["--sdn-algs", "hier-d1,hier-d8,hier-d16"]),
                                    benchcore.Fabric(), True)
    assert [j["sdn_algs"] for j in depths] == [["hier-d1", "hier-d8", "hier-d16"]] * len(plain)
    # calls after each route switch: by default one, planned for coll_bench (--settle), counted in the
    # estimate; --settle-calls 0 turns them off
    unsettled = bench_limits.plan_jobs(bench_cli.parse_args(base + ["--settle-calls", "0"]), benchcore.Fabric(), True)
    assert all(j["settle_calls"] == 1 and j["work"] > u["work"] for j, u in zip(plain, unsettled))
    assert all(j["settle_calls"] == 0 for j in unsettled)
    more = ["--quick", "--collectives", "alltoall", "--routings", "dmodk"]
    assert all(j["settle_calls"] == 1 for j in bench_limits.plan_jobs(bench_cli.parse_args(more), benchcore.Fabric(), True))
    assert all(j["settle_calls"] == 0 for j in bench_limits.plan_jobs(
        bench_cli.parse_args(more + ["--settle-calls", "0"]), benchcore.Fabric(), True))
    args = bench_cli.parse_args(base + ["--sdn-env", "SDN_MPI_HIER_SEGMENT=32768"])
    assert bench_jobs.sdn_env(args)["SDN_MPI_HIER_SEGMENT"] == "32768"
    # a boolean controller option's negative form (oslo.config) passes, anything else does not
    off = bench_cli.parse_args(base + ["--controller-arg=--nosdnmpi-elide-default-hops"])
    assert off.controller_arg == ["--nosdnmpi-elide-default-hops"]
    for bad in (["--sdn-algs", "ring"], ["--sdn-algs", "hier-d5"], ["--sdn-env", "FOO=1"], ["--settle-calls", "-1"],
                ["--controller-arg=--verbose"]):
        with pytest.raises(SystemExit):
            bench_cli.parse_args(base + bad)


def test_the_hierarchical_limit_meets_the_bound_where_its_layout_fits():
    lim = benchcore.allreduce_limits(FAB, ALL8, MIB)
    assert lim["hierarchical"] == pytest.approx(bounds.allreduce_bound(FAB, ALL8, MIB)["bound"])
    assert benchcore.allreduce_limit(FAB, RANDOM8, MIB) == pytest.approx(0.48934, abs=1e-5)
    # 2 leaves x 4: uplinks carry 2 (2-1)/2 n = n over 2 x 15 Mbit/s, host links 1.75 n over 30
    fab = benchcore.Fabric(leaves=2, hosts_per_leaf=4)
    assert benchcore.hierarchical_limit(fab, ALL8, MIB) == pytest.approx(secs(1.75 * MIB, 30))
    for hosts in ([1, 2, 3], [1, 3, 5, 7], [1, 2, 3, 4, 5, 6]):   # 2+1; one per leaf; 3 leaves
        assert benchcore.allreduce_limits(FAB, hosts, MIB)["hierarchical"] is None


def test_a_row_s_bytes_are_per_rank_for_allgather_and_alltoall():
    """coll_bench's alltoall row of 1 MiB sends 8 blocks of 128 KiB per rank: the bound of a
    128 KiB block (cut: 2 x 6 blocks over the leaf's 2 x 15 Mbit/s), not of a 1 MiB one; the
    bound_s of every record and results.md's table use this conversion (bench_more.row_bound)."""
    import bench_more
    got = bench_more.row_bound("alltoall", FAB, ALL8, MIB)
    assert got == bounds.alltoall_bound(FAB, ALL8, MIB // 8)
    assert got["bound"] == pytest.approx(secs(12 * MIB // 8, 30), rel=1e-9)   # 0.419 s
    assert bench_more.row_bound("allgather", FAB, ALL8, MIB) == bounds.allgather_bound(FAB, ALL8, MIB // 8)
    assert bench_more.row_bound("allreduce", FAB, ALL8, MIB) == bounds.allreduce_bound(FAB, ALL8, MIB)
    assert bench_more.limits(FAB, ALL8, "alltoall", MIB)["any"] == got["bound"]


def test_tiny_call_records_carry_their_block_for_the_interval():
    import types
    import bench_jobs
    fab = benchcore.Fabric()
    job = {"collective": "allreduce", "routing": "dmodk", "placement": "block", "nprocs": 8, "name": "j",
           "hosts": list(range(1, 9)), "tiny_reps": 4, "tiny_block": 2}
    events = [{"bench": "sample", "collective": "allreduce", "impl": impl, "bytes": nbytes, "rep": k, "t_s": 0.01}
              for nbytes in (benchcore.TINY_BYTES, 4096) for impl in ("openmpi", "sdnmpi") for k in range(4)]
    recs = bench_jobs.job_records(types.SimpleNamespace(fab_model=fab), job, events, {})
    blocks = {(r["bytes"], r["impl"]): r.get("sample_block") for r in recs if r["collective"] == "allreduce"}
    assert blocks == {(8, "openmpi"): 2, (8, "sdnmpi"): 2, (4096, "openmpi"): None, (4096, "sdnmpi"): None}
    # without tiny calls in the job, an 8-byte size of the size list is sampled call by call
    plain = bench_jobs.job_records(types.SimpleNamespace(fab_model=fab), dict(job, tiny_reps=0), events, {})
    assert all("sample_block" not in r for r in plain)
