"""The start-up rows of the bench (issue 17, "Start-up and first-call cost"): coll_bench
--collective startup under mpirun on localhost against the stub controller, and the records and
table bench/ makes of its output."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from libsdnmpi_harness import BCAST_TIMINGS, PLAN_TIMINGS, fake_hosts, mpirun

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import benchcore  # noqa: E402  pylint: disable=wrong-import-position
import bench_startup  # noqa: E402  pylint: disable=wrong-import-position

AGREE_EVERY = 8   # libsdnmpi/src/reconnect.h SDNMPI_AGREE_EVERY


@pytest.fixture(scope="module")
def coll_bench():
    subprocess.run(["make", "-s", "-C", BENCH], check=True, capture_output=True, text=True)
    return os.path.join(BENCH, "build", "coll_bench")


def run_startup(prog, stub, np, reps, tmp_path, *extra):
    toggle = tmp_path / "toggle"
    toggle.mkdir()
    import bench_flows  # noqa: E402  pylint: disable=import-outside-toplevel
    switch = bench_flows.RouteSwitch(str(toggle), bridges=[], spine_ports={}, hide=True,
                                     on_end=lambda: None, wait=lambda: (0.0, None))
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np)}
    with switch:
        proc, _ = mpirun(np, [prog, "--collective", "startup", "--tiny-reps", str(reps), "--toggle", str(toggle),
                              "--startup-bcast-bytes", "65536", *extra], env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [e for e in (benchcore.parse_line(l) for l in proc.stdout.splitlines()) if e]


@pytest.mark.usefixtures("mpirun_path")
def test_startup_rows_carry_the_library_breakdown(built, stub_factory, coll_bench, tmp_path):
    stub = stub_factory(leaves=2)
    events = run_startup(coll_bench, stub, 4, 12, tmp_path)
    rows = {e["metric"]: e for e in events if e["bench"] == "startup" and e["metric"] != "cached"}
    init, first = rows["init"], rows["first_allreduce"]
    # Init: one round trip with the stub (register carries hello and locate), its MPI side timed
    assert init["parts"]["init_rtts"] == 1
    assert 0 < init["parts"]["init_rpc"] <= init["parts"]["init"] <= init["t_s"]
    assert 0 < init["parts"]["init_mpi"] < init["parts"]["init"]
    # Init sent the world's plan request (plan-ahead, the default); the first call: no locate
    # (register's locality is cached), no round trip of its own (it took the reply of the request
    # sent at Init), and the controller's own timings as the stub reported them
    assert init["parts"]["init_ahead"] > 0
    parts = first["parts"]
    assert parts["plan_rtts"] == 0 and parts["plan_locate"] == 0
    assert parts["plan_ahead"] == 1 and parts["plan_ahead_age"] > 0
    assert parts["plan_ctrl"] == PLAN_TIMINGS["total_s"]
    assert parts["plan_ctrl_plan"] == PLAN_TIMINGS["plan_s"]
    assert parts["plan_ctrl_install"] == PLAN_TIMINGS["install_s"]
    assert parts["plan_request"] > 0
    assert parts["plan_mpi"] == pytest.approx(parts["plan"] - parts["plan_request"])
    assert parts["plan"] <= first["t_s"]
    # the job's connection, then the floor's three controller round trips, each on its own connection
    assert [r["op"] for _, r in stub.requests()] == ["register", "plan_allreduce", "plan_bcast", "release"] + \
        ["hello"] * 3
    assert [i for i, _ in stub.requests("hello")] == [1, 2, 3]
    # the plan's steps: the order changed (the stub's leaves of hosts .1-.4 are 1, 0, 1, 0), so a
    # Scatter; the leaf layout (2 leaves) takes its Bcast; the steps' largest over the ranks are
    # reported at the job's end
    assert 0 < parts["plan_layout"] and 0 < parts["plan_allreduce"] and 0 < parts["plan_scatter"]
    assert 0 < parts["plan_split"] <= parts["plan"]
    steps = {e["of"]: e["max"] for e in events if e.get("metric") == "steps"}
    assert set(steps) == {"init", "first_allreduce"}
    assert steps["init"]["init_gather"] >= init["parts"]["init_gather"] > 0
    assert init["parts"]["init_allreduce"] == 0   # two collectives: no memory agreement below 4096 ranks
    assert steps["init"]["init_bcast"] >= init["parts"]["init_bcast"] > 0
    assert steps["init"]["call"] == pytest.approx(init["t_s"])   # the slowest rank's own time
    assert steps["first_allreduce"]["plan_layout"] > 0
    assert steps["first_allreduce"]["plan"] <= steps["first_allreduce"]["call"] == pytest.approx(first["t_s"])
    # the floor: three of each kind; its messages are as large as Init's and the plan's
    floors = {m: [e for e in events if e.get("metric") == m] for m in bench_startup.FLOORS}
    assert [len(v) for v in floors.values()] == [3, 3, 3]
    assert all(e["parts"]["connect"] > 0 and e["parts"]["hello"] > 0
               and e["t_s"] == pytest.approx(e["parts"]["connect"] + e["parts"]["hello"]) for e in floors["floor_rtt"])
    assert all(0 < max(e["parts"].values()) <= e["t_s"] and e["bytes"] > 0 for e in floors["floor_first"])
    assert len({e["bytes"] for e in floors["floor_init_mpi"]}) == 1 and floors["floor_init_mpi"][0]["bytes"] > 4 * 4
    # the first Bcast: the communicator's state, then the tree (its request inside), the
    # controller's timings as the stub reported them; the second call is timed too
    bparts = rows["first_bcast"]["parts"]
    assert 0 < bparts["bcast_request"] < bparts["bcast_tree"] <= rows["first_bcast"]["t_s"]
    assert bparts["bcast_setup"] > 0
    assert bparts["bcast_ctrl"] == BCAST_TIMINGS["total_s"]
    assert bparts["bcast_ctrl_install"] == BCAST_TIMINGS["install_s"]
    assert rows["second_bcast"]["parts"] == {} and rows["second_bcast"]["t_s"] > 0
    assert [h for _, r in stub.requests("register") for h in r["hosts"]] == fake_hosts(4, 4)
    # cached calls: both variants alternate; the SDN ones run the agreement step on every 8th
    # SDN call on the world communicator (the first call above was the first of them)
    cached = [e for e in events if e["bench"] == "startup" and e["metric"] == "cached"]
    assert sorted(e["variant"] for e in cached) == ["direct"] * 12 + ["sdnmpi"] * 12
    assert all(cached[2 * k]["variant"] != cached[2 * k + 1]["variant"] for k in range(12))
    sdn = [e for e in cached if e["variant"] == "sdnmpi"]
    assert [e["agree"] for e in sdn] == [int((k + 1) % AGREE_EVERY == 0) for k in range(12)]
    assert all(e["agree"] == 0 for e in cached if e["variant"] == "direct")


def test_startup_records_and_table():
    def startup(metric, t, **parts):
        return {"bench": "startup", "metric": metric, "t_s": t, "parts": parts}

    jobs = []
    for n, p in enumerate((8, 16)):
        for rep in range(3):
            events = [startup("init", 0.004 + rep * 0.001, init=0.004, init_mpi=0.001, init_rpc=0.002,
                              init_rtts=1, init_ctrl=0.0005),
                      startup("first_allreduce", 0.015, plan=0.014, plan_mpi=0.004, plan_request=0.01,
                              plan_rtts=1, plan_ctrl=0.009, plan_ctrl_plan=0.002, plan_ctrl_install=0.006)]
            for k in range(16):
                events.append({"bench": "startup", "metric": "cached", "variant": "direct", "agree": 0,
                               "rep": k, "t_s": 100e-6 + n * 1e-6})
                events.append({"bench": "startup", "metric": "cached", "variant": "sdnmpi",
                               "agree": int(k % 8 == 0), "rep": k, "t_s": (400e-6 if k % 8 == 0 else 105e-6)})
            jobs.append(bench_startup.job_records({"routing": "dmodk", "placement": "block", "nprocs": p,
                                                   "name": "startup-p%d-%d" % (p, rep)}, events))
    records = [r for recs in jobs for r in recs]
    init8 = [r for r in records if r["metric"] == "init" and r["nprocs"] == 8]
    assert [s for r in init8 for s in r["samples_s"]] == pytest.approx([0.004, 0.005, 0.006])   # one per job
    assert all(r["parts"]["init_rpc"] == pytest.approx([0.002]) for r in init8)
    table = bench_startup.table(records)
    assert "| SDN_MPI_Init, cold | 8 | 3 | 5.0 ms | 4.0 ms-6.0 ms | 1.0 ms | 2.0 ms | 1 | 500 us | - |" in table
    assert "| SDN_MPI_Init, cold | 16 |" in table
    # the cached call: sdnmpi without the agreement step against the direct algorithm, and the step
    over = [r for r in records if r["metric"] == "cached_overhead" and r["nprocs"] == 8]
    assert len(over) == 3 and over[0]["median_s"] == pytest.approx(5e-6)
    agree = [r for r in records if r["metric"] == "agree_step" and r["nprocs"] == 8]
    assert agree[0]["median_s"] == pytest.approx(295e-6)
    # p=16's direct calls took 1 us longer: 4 us of overhead; 2 of 16 SDN calls ran the step
    assert "| 16 | 101 us | 105 us | 400 us | +4 us | +295 us | +41 us |" in table
    assert "without a network" not in table   # no dispatch samples in these jobs
    events = [{"bench": "startup", "metric": "dispatch", "variant": v, "rep": k, "t_s": t}
              for k in range(3) for v, t in (("direct", 20e-9), ("sdnmpi", 66e-9 + k * 1e-9))]
    recs = bench_startup.job_records({"routing": "dmodk", "placement": "block", "nprocs": 8, "name": "d"}, events)
    assert [r["samples_s"] for r in recs if r["metric"] == "dispatch_overhead"] == [[pytest.approx(47e-9)]]
    assert "calls, SDN_MPI_Allreduce minus the direct algorithm; median and range over the jobs): +47 ns" \
        in bench_startup.table(records + recs)


def test_startup_variants_and_bcast_table():
    """Each variant's jobs (bench_startup.VARIANTS) carry their own metric names; the Bcast table
    shows the first call, the second, their difference and the first call's breakdown."""
    planned = bench_startup.plan_jobs(SimpleNamespace(startup_reps=1, seed=1, startup_calls=4),
                                      SimpleNamespace(hosts=8), "dmodk")
    assert len(planned) == len(bench_startup.NPROCS) * 4
    jobs = {job["name"].rsplit("-", 1)[1]: job for job in planned if job["nprocs"] == 8}
    assert set(jobs) == {"cold1", "warm1", "warm_noahead1", "warm_gap1"}
    assert jobs["warm_noahead1"]["env"] == {"SDN_MPI_PLAN_AHEAD": "0"} and jobs["warm_noahead1"]["warm"]
    assert jobs["warm_gap1"]["gap_ms"] == bench_startup.GAP_MS and "env" not in jobs["warm_gap1"]
    assert all(job["startup_bcast_bytes"] == bench_startup.BCAST_BYTES for job in jobs.values())
    records = []
    for rep in range(3):
        events = [{"bench": "startup", "metric": "first_bcast_warm_gap", "t_s": 0.05 + rep * 0.01,
                   "parts": {"bcast_setup": 0.01, "bcast_tree": 0.02, "bcast_request": 0.015, "bcast_ctrl": 0.012,
                             "bcast_ctrl_install": 0.009}},
                  {"bench": "startup", "metric": "second_bcast_warm_gap", "t_s": 0.03, "parts": {}},
                  {"bench": "startup", "metric": "first_allreduce_warm_gap", "t_s": 0.009,
                   "parts": {"plan_ahead": 1, "plan_ahead_age": 0.1, "plan_rtts": 0}}]
        records += bench_startup.job_records({"routing": "dmodk", "placement": "block", "nprocs": 8,
                                              "name": "startup-dmodk-p8-warm_gap%d" % rep}, events)
    bc = [r for r in records if r["metric"] == "first_bcast_warm_gap"]
    assert len(bc) == 3 and all(r["bytes"] == bench_startup.BCAST_BYTES for r in bc)
    table = bench_startup.table(records)
    assert ("| first SDN_MPI_Bcast, warm, first call 100 ms after Init (65536 B) | 8 | 3 | 60.0 ms | "
            "50.0 ms-70.0 ms | 30.0 ms | +30.0 ms | 10.0 ms | 20.0 ms | 15.0 ms | 12.0 ms | 9.0 ms |") in table
    assert "| first SDN_MPI_Allreduce, warm, first call 100 ms after Init | 8 | 3 | 9.0 ms |" in table
    assert "| 9.0 ms-9.0 ms | - | - | - | 0 | 1 | 100.0 ms | - | - | - |" in table


def test_baseline_variants(tmp_path):
    """--startup-baseline BIN: the cold, warm and warm-gap jobs again, interleaved, each with that
    coll_bench (another library), its rows labelled "baseline library"; without it, none; a path
    that is not an executable is a one-line usage error."""
    import bench_cli  # noqa: E402  pylint: disable=import-outside-toplevel
    prog = tmp_path / "coll_bench"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    args = bench_cli.parse_args(["--startup-reps", "2", "--startup-baseline", str(prog)])
    planned = bench_startup.plan_jobs(args, SimpleNamespace(hosts=8), "dmodk")
    names = [job["name"].rsplit("-", 1)[1] for job in planned if job["nprocs"] == 8]
    assert names == [v + str(rep) for rep in (1, 2) for v in ("cold", "warm", "warm_noahead", "warm_gap", "base",
                                                               "warm_base", "warm_gap_base")]
    base = [job for job in planned if "base" in job["name"]]
    assert all(job["coll_bench"] == str(prog) and "baseline" not in job for job in base)
    assert all("coll_bench" not in job for job in planned if "base" not in job["name"])
    gap = [job for job in base if "gap" in job["name"]]
    assert all(job["gap_ms"] == bench_startup.GAP_MS and job["warm"] for job in gap)
    labels = {metric: label for metric, label, _ in bench_startup.PHASES}
    assert labels["init_warm_gap_base"] == "SDN_MPI_Init, warm, first call 100 ms after Init, baseline library"
    plain = bench_startup.plan_jobs(bench_cli.parse_args(["--startup-reps", "2"]), SimpleNamespace(hosts=8), "dmodk")
    assert not [job for job in plain if "base" in job["name"]]
    with pytest.raises(SystemExit) as exc:
        bench_cli.parse_args(["--startup-baseline", str(tmp_path / "missing")])
    assert exc.value.code == 2


@pytest.mark.usefixtures("mpirun_path")
def test_new_communicator_rows(built, stub_factory, coll_bench, tmp_path):
    """--startup-comms 1: after the world's rows, the first call on a dup of the world (its routes
    reused: no round trip, plan_ahead 2), on halves made with SDN_MPI_Comm_split (each leader sent
    its request at creation: no round trip, plan_ahead 1) and on the same halves made with plain
    PMPI_Comm_split (each asks at its first call: one round trip, plan_ahead 0), each with the time
    it took to make the communicator (world rank 0's breakdown: it leads a half)."""
    stub = stub_factory(leaves=2)
    events = run_startup(coll_bench, stub, 4, 2, tmp_path, "--startup-comms", "1", "--gap-ms", "50")
    rows = {e["metric"]: e for e in events if e["bench"] == "startup" and e["metric"].startswith("comm_")}
    assert set(rows) == {"comm_%s_%s" % (how, what) for how in ("dup", "split", "lazy") for what in ("create", "first")}
    assert all(rows["comm_%s_create" % how]["t_s"] > 0 and rows["comm_%s_create" % how]["parts"] == {}
               for how in ("dup", "split", "lazy"))
    dup, split, lazy = (rows["comm_%s_first" % how]["parts"] for how in ("dup", "split", "lazy"))
    assert (dup["plan_ahead"], dup["plan_rtts"]) == (2, 0)
    assert (split["plan_ahead"], split["plan_rtts"], split["plan_locate"]) == (1, 0, 0)
    assert split["plan_ahead_age"] >= 0.05
    assert (lazy["plan_ahead"], lazy["plan_rtts"]) == (0, 1) and "plan_ahead_age" not in lazy
    # world, bcast tree, then the halves: split's at creation, lazy's at their first calls
    ops = [r["op"] for _, r in stub.requests()]
    assert ops.count("plan_allreduce") == 5 and ops.count("release") == 1
    assert len({r["comm"] for _, r in stub.requests("plan_allreduce")}) == 5


def test_new_communicator_table():
    """The new communicators' rows sit in the first-call table, each with its making's median."""
    jobs = bench_startup.plan_jobs(SimpleNamespace(startup_reps=1, seed=1, startup_calls=4),
                                   SimpleNamespace(hosts=8), "dmodk")
    assert all(job["startup_comms"] == 1 for job in jobs)
    records = []
    for p in (8, 16):
        for rep in range(3):
            events = [{"bench": "startup", "metric": "comm_split_create_warm", "t_s": p * 0.001 + rep * 0.001,
                       "parts": {}},
                      {"bench": "startup", "metric": "comm_split_first_warm", "t_s": 0.008,
                       "parts": {"plan_ahead": 1, "plan_ahead_age": 0.001, "plan_rtts": 0}}]
            records += bench_startup.job_records({"routing": "dmodk", "placement": "block", "nprocs": p,
                                                  "name": "startup-dmodk-p%d-warm%d" % (p, rep)}, events)
    table = bench_startup.table(records)
    for p, made in ((8, "9.0 ms"), (16, "17.0 ms")):
        assert ("| first SDN_MPI_Allreduce on SDN_MPI_Comm_split halves, warm (making it: %s) | %d | 3 | 8.0 ms | "
                "8.0 ms-8.0 ms | - | - | - | 0 | 1 | 1.0 ms | - | - | - |" % (made, p)) in table
    assert "making it, warm |" not in table    # (no row of its own)


def test_floor_and_steps_tables():
    """The floor (pooled per p over the run's jobs: Gather + Bcast + connect + hello for Init; Bcast + dup +
    call for the first call) against the warm rows, ours = median - floor; cold rows get none. The steps
    table: world rank 0's time and the largest over the ranks, per step."""
    def ev(metric, t, **kw):
        return dict({"bench": "startup", "metric": metric, "t_s": t}, **kw)

    records = []
    for rep in range(3):
        events = [ev("init_warm", 0.010 + rep * 0.001, parts={"init": 0.009, "init_allreduce": 0.002,
                                                              "init_bcast": 0.004}),
                  ev("init", 0.030, parts={"init": 0.03}),
                  ev("first_allreduce_warm", 0.020, parts={"plan": 0.015, "plan_split": 0.006, "plan_layout": 0.0}),
                  ev("steps", 0, of="init_warm", max={"init": 0.0105, "init_allreduce": 0.003, "init_bcast": 0.005,
                                                      "call": 0.011}),
                  ev("steps", 0, of="first_allreduce_warm", max={"plan": 0.016, "plan_split": 0.008,
                                                                 "plan_layout": 0.0, "call": 0.02})]
        for k in range(3):
            events += [ev("floor_init_mpi", 0.004 + k * 0.001, rep=k, bytes=300),
                       ev("floor_rtt", 0.0015, rep=k, parts={"connect": 0.0005, "hello": 0.001}),
                       ev("floor_first", 0.012, rep=k, parts={"bcast": 0.003, "dup": 0.006, "call": 0.002})]
        records += bench_startup.job_records({"routing": "dmodk", "placement": "block", "nprocs": 16,
                                              "name": "startup-dmodk-p16-warm%d" % rep}, events)
    assert bench_startup.floors_of(records, 16) == pytest.approx({"init": 0.0065, "init_mpi": 0.005, "rtt": 0.0015,
                                                                  "first": 0.012})
    assert bench_startup.floors_of(records, 8) == {"init": None, "init_mpi": None, "rtt": None, "first": None}
    table = bench_startup.table(records)
    assert "| SDN_MPI_Init, warm | 16 | 3 | 11.0 ms | 6.5 ms | +4.5 ms | Gather + Bcast 5.0 ms, connect 500 us + " \
           "hello 1.0 ms |" in table
    assert "| first SDN_MPI_Allreduce, warm | 16 | 3 | 20.0 ms | 12.0 ms | +8.0 ms | bcast 3.0 ms, dup 6.0 ms, " \
           "call 2.0 ms |" in table
    assert "| SDN_MPI_Init, cold | 16 | 3 | 30.0 ms | 6.5 ms" not in table   # cold: no floor
    assert "| SDN_MPI_Init, warm | 16 | 3 | 2.0 ms / 3.0 ms | - / - | - / - | - / - | - / - | 4.0 ms / 5.0 ms | " \
           "- / - | 9.0 ms / 10.5 ms |" in table   # (no library comm recorded)
    assert "| 6.0 ms / 8.0 ms | 0 us / 0 us | 15.0 ms / 16.0 ms | - / 20.0 ms |" in table
