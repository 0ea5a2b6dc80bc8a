"""bench/: coll_bench compiled and run under mpirun on localhost (no Mininet, no controller), and a
tiny planner-scale run."""
import math
import os
import shutil
import subprocess

import pytest

from bench_setup import BENCH, ROOT

import bench_cli
import bench_flows
import benchcore
import planner_scale


# --- coll_bench (compiled and run under mpirun on localhost, no Mininet, no controller) --------

MPICC, MPIRUN = shutil.which("mpicc"), shutil.which("mpirun")
LIBSDNMPI = os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a")
COLL_BENCH_SRCS = ("coll_bench.c", "coll_bench_io.c", "coll_bench_more.c",   # as bench/Makefile's SRCS
                   "coll_bench_startup.c", "coll_bench_algs.c")


def build_coll_bench(tmp_path, have):
    out = tmp_path / ("coll_bench%d" % have)
    subprocess.run([MPICC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    "-DHAVE_SDN_BCAST=%d" % have, "-I" + os.path.join(ROOT, "libsdnmpi", "include"),
                    "-o", str(out)] + [os.path.join(BENCH, src) for src in COLL_BENCH_SRCS] + [LIBSDNMPI, "-lmsgpackc", "-lz", "-pthread"],
                   check=True, capture_output=True, text=True)
    return out


def local_mpirun(prog, *args):
    """(environment, argv) of ``prog`` with ``args`` on 2 local ranks, the library off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SDN_MPI_DISABLE="1")
    return env, [MPIRUN, "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle",
                 "1", "-x", "SDN_MPI_DISABLE", str(prog)] + list(args)


@pytest.fixture(scope="module")
def coll_tools(built, mpirun_path):
    """mpicc, mpirun and libsdnmpi.a as `built` makes it: a missing one fails the tests, never skips them."""
    if MPICC is None:
        pytest.fail("mpicc is missing: scripts/install-deps.sh installs it (libopenmpi-dev)")
    assert os.path.exists(LIBSDNMPI), LIBSDNMPI


@pytest.mark.usefixtures("coll_tools")
@pytest.mark.parametrize("collective", ["allreduce", "bcast", "bcast-without-sdn", "init"])
def test_coll_bench_alternates_the_implementations_and_talks_to_the_harness(tmp_path, collective):
    assert bench_cli._have_sdn_bcast_symbol()     # libsdnmpi.a has SDN_MPI_Bcast: "bcast" tests it
    have = 0 if collective == "bcast-without-sdn" else 1
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


@pytest.mark.usefixtures("coll_tools")
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


@pytest.mark.usefixtures("coll_tools")
@pytest.mark.parametrize("collective", ["allreduce", "alltoall"])
def test_coll_bench_settles_after_each_route_switch(tmp_path, collective):
    """--settle 1: one call of the same implementation and size right after every route switch of
    the timed loop (each reported, with its time, as a "settle" event and not as a sample), none
    where the routes stayed; none without it. run.py records them as "first:IMPL"."""
    prog = build_coll_bench(tmp_path, 0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SDN_MPI_DISABLE="1")
    base = [MPIRUN, "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1",
            "-x", "SDN_MPI_DISABLE", str(prog), "--collective", collective, "--reps", "3",
            "--sizes", "4096,65536", "--tiny-reps", "0"]
    for settle in (0, 1):
        toggle = tmp_path / ("toggle%d" % settle)
        toggle.mkdir()
        switch = bench_flows.RouteSwitch(str(toggle), bridges=[], spine_ports={}, hide=True,
                                         on_end=lambda: None, wait=lambda: (0.0, None))
        with switch:
            proc = subprocess.run(base + ["--settle", str(settle), "--toggle", str(toggle)], env=env,
                                  capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        events = [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]
        seq = [e for e in events if e["bench"] in ("sample", "settle")]
        first = next(k for k, e in enumerate(seq) if e["bench"] == "sample")
        samples = [k for k in range(first, len(seq)) if seq[k]["bench"] == "sample"]
        assert len(samples) == 2 * 3 * 2
        switched = 0
        for prev, k in zip(samples, samples[1:]):
            changed = seq[prev]["impl"] != seq[k]["impl"]
            switched += changed
            settles = seq[prev + 1:k]
            assert len(settles) == (settle if changed else 0)
            assert all(e["impl"] == seq[k]["impl"] and e["bytes"] == seq[k]["bytes"] and e["t_s"] > 0
                       and e["collective"] == collective for e in settles)
        assert switched >= 6   # O S | S O | O S ...: a switch inside every point
        # none in the warm-up and checks: before the first sample at most its own switch's
        assert len(seq[:first]) <= settle and all(e["impl"] == seq[first]["impl"] for e in seq[:first])
        records = benchcore.aggregate_samples(events, "dmodk", "block", 2, lambda *a: None)
        firsts = [r for r in records if r["impl"].startswith("first:")]
        assert sum(len(r["samples_s"]) for r in firsts) == settle * switched + first
        assert {r["impl"] for r in firsts} <= {"first:openmpi", "first:sdnmpi"}


@pytest.mark.usefixtures("coll_tools")
def test_coll_bench_tiny_blocks_settle_and_idle_after_each_route_switch(tmp_path):
    """--tiny-idle-ms: each block of 8-byte calls that follows a route switch starts after --settle
    calls of its variant (reported as "settle" events, not samples) and an idle pause; a block that
    keeps the routes gets neither, and without --tiny-idle-ms no block does (the earlier method)."""
    prog = build_coll_bench(tmp_path, 0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SDN_MPI_DISABLE="1")
    base = [MPIRUN, "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1",
            "-x", "SDN_MPI_DISABLE", str(prog), "--collective", "allreduce", "--reps", "1", "--sizes", "4096",
            "--tiny-reps", "6", "--tiny-block", "2", "--settle", "1"]
    for idle_ms in (0, 200):
        toggle = tmp_path / ("toggle%d" % idle_ms)
        toggle.mkdir()
        switch = bench_flows.RouteSwitch(str(toggle), bridges=[], spine_ports={}, hide=True,
                                         on_end=lambda: None, wait=lambda: (0.0, None))
        with switch:
            proc = subprocess.run(base + ["--tiny-idle-ms", str(idle_ms), "--toggle", str(toggle)], env=env,
                                  capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        events = [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]
        tiny = [e for e in events if e["bench"] in ("sample", "settle") and e["bytes"] == 8]
        samples = [e for e in tiny if e["bench"] == "sample"]
        assert [e["impl"] for e in samples] == ["openmpi"] * 2 + ["sdnmpi"] * 4 + ["openmpi"] * 4 + ["sdnmpi"] * 2
        settles = [k for k, e in enumerate(tiny) if e["bench"] == "settle"]
        if not idle_ms:
            assert settles == []
            continue
        # the first call sdnmpi-routed, then O O | S S S S | O O O O | S S: a switch before blocks 0, 1, 3, 5
        assert settles == [0, 3, 8, 13]
        assert all(tiny[k]["impl"] == tiny[k + 1]["impl"] and tiny[k]["call"] == 0 and tiny[k]["t_s"] > 0
                   for k in settles)
    bad = subprocess.run(base + ["--tiny-idle-ms", "20000"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--tiny-idle-ms 0..10000" in bad.stderr


@pytest.mark.usefixtures("coll_tools")
def test_coll_bench_asks_for_each_blocks_routing_and_reroutes_after_it(tmp_path):
    """--routing-blocks: before every repetition a "routing:NAME" request (answered by
    bench_rotate.RotatingSwitch), then a "routing" event; the first call after it asks for its
    implementation's routes again (the switch took the overrides off), with its settle call; the
    records land per block's routing. A list that does not match --reps is refused."""
    import bench_rotate
    env, base = local_mpirun(build_coll_bench(tmp_path, 0), "--collective", "allreduce", "--reps", "3",
                             "--sizes", "8,4096", "--calls", "2,1", "--tiny-reps", "0", "--settle", "1")
    toggle = tmp_path / "toggle"
    toggle.mkdir()
    asked = []
    switch = bench_rotate.RotatingSwitch(str(toggle), [], {}, lambda r: (asked.append(r), {"changed": True})[1],
                                         hide=True, on_end=lambda: None, wait=lambda: (0.0, None))
    with switch:
        proc = subprocess.run(base + ["--routing-blocks", "dmodk,ecmp,single", "--toggle", str(toggle)], env=env,
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert asked == ["dmodk", "ecmp", "single"]
    events = [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]
    marks = [k for k, e in enumerate(events) if e["bench"] == "routing"]
    assert [events[k]["routing"] for k in marks] == asked and [events[k]["block"] for k in marks] == [0, 1, 2]
    assert not any(e["bench"] == "sample" for e in events[:marks[0]])
    for k in marks:   # the block starts with a route request: its first call is a settle call
        assert events[k + 1]["bench"] == "settle"
    records = bench_rotate.records(events, {"placement": "block", "nprocs": 2}, switch.blocks, lambda *a: None)
    by = {(r["impl"], r["routing"], r["bytes"]): r for r in records}
    for block, routing in enumerate(asked):
        assert by[("openmpi", routing, 8)]["rotation_blocks"] == [block, block]
        assert by[("sdnmpi", routing, 4096)]["rotation_blocks"] == [block]
    bad = subprocess.run(base + ["--routing-blocks", "dmodk,ecmp"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "one entry per repetition" in bad.stderr


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
