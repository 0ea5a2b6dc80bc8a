"""bench/bench_more.py: the any-algorithm limits and the jobs of the Allgather, Reduce and Alltoall
rows (issue 17), and their place in the bench's CLI and job plan."""
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import bench_cli  # noqa: E402
import bench_limits  # noqa: E402
import bench_more  # noqa: E402
import benchcore  # noqa: E402

MIB = 1 << 20


def test_limits_on_the_bench_fabric():
    fab = benchcore.Fabric()   # 2 spines, 4 leaves x 2 hosts, 30 / 15 Mbit/s
    hosts = list(range(1, 9))  # block placement: two ranks per leaf
    ag = bench_more.limits(fab, hosts, "allgather", MIB)
    # host link: 7 of 8 blocks of 1/8 MiB in at 30 Mbit/s; cut: a leaf with 2 of 8 ranks takes the
    # 6 outside blocks in over 2 x 15 Mbit/s (each distinct block crosses once)
    assert ag["host"] == pytest.approx(MIB * 7 / 8 * 8 / 30e6)
    assert ag["cut"] == pytest.approx(6 / 8 * MIB * 8 / 30e6)
    assert ag["any"] == max(ag["host"], ag["cut"])
    # alltoall: the same host part; the leaf's 2 ranks each send 6 distinct blocks out of it
    a2a = bench_more.limits(fab, hosts, "alltoall", MIB)
    assert a2a["host"] == ag["host"] and a2a["cut"] == pytest.approx(2 * 6 / 8 * MIB * 8 / 30e6)
    red = bench_more.limits(fab, hosts, "reduce", MIB)
    assert red["host"] == pytest.approx(MIB * 8 / 30e6) and red["cut"] == pytest.approx(MIB * 8 / 30e6)
    # all ranks on one leaf: no cut
    assert bench_more.limits(fab, [1, 2], "reduce", MIB)["cut"] == 0.0
    assert bench_more.limits(fab, [1], "allgather", MIB)["any"] == 0.0
    assert bench_more.limits(benchcore.Fabric(host_bw=0, fabric_bw=0), hosts, "alltoall", MIB)["any"] is None


def test_rows_are_opt_in_and_grouped_by_routing():
    args = bench_cli.parse_args(["--quick"])
    fab = benchcore.Fabric()
    assert not [j for j in bench_limits.plan_jobs(args, fab, True) if j["collective"] in bench_more.COLLECTIVES]
    args = bench_cli.parse_args(["--quick", "--collectives", "allreduce,allgather,reduce,alltoall",
                                 "--more-sizes", "1m,4m"])
    jobs = bench_limits.plan_jobs(args, fab, True)
    more = [j for j in jobs if j["collective"] in bench_more.COLLECTIVES]
    assert {j["collective"] for j in more} == set(bench_more.COLLECTIVES)
    assert all(j["sizes"] == [MIB, 4 * MIB] and j["nprocs"] == 8 and j["nimpl"] == 2 for j in more)
    routings = [j["routing"] for j in jobs]
    assert routings == sorted(routings, key=routings.index)   # each routing's jobs together
