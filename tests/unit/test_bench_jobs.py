"""bench/bench_jobs.py's run_mpi_job with Mininet, mpirun, the route switch and the sampler replaced by
fakes: the coll_bench command line, the ranks' environment, the log and the job's record pinned.
No Mininet, no MPI, no root."""
import types

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)

import bench_jobs
from bench_common import FABRIC_SUBNET
from sdnmpi.mininet_topos import net, procs

PLAN_LINE = ("sdnmpi[0]: plan comm=0 ranks=4 hosts=4 steps=2 pairs=8: ok flows=12 max_load=[1,2] in 0.050s "
             "(controller total 0.040s plan 0.010s install 0.030s)\n")
OUTPUT = ['{"bench": "meta", "have_sdn_bcast": true}\n', PLAN_LINE, "other output\n",
          '{"bench": "init", "metric": "sdn_init", "t_s": 0.25}\n', '{"bench": "done"}\n']


class FakeMpiJob:
    """MpiJob without a fabric: records what run_mpi_job asks of it."""
    made = []

    def __init__(self, fabric, hosts, slots=1):
        self.hosts, self.slots, self.dir = hosts, slots, fabric.mpi_dir
        self.calls = {}
        FakeMpiJob.made.append(self)

    def mpirun_argv(self, prog, np=None, env=None, mca=()):
        self.calls["mpirun_argv"] = (list(prog), np, dict(env), mca, list(env))
        return ["mpirun", "-np", np] + list(prog)

    def environment(self, env):
        return dict(env, PATH="/fake")


class FakeSwitch:
    """RouteSwitch: the end request comes (on_end) when the program's output is read."""
    made = []

    def __init__(self, toggle_dir, switch_names, spine_ports, hide, on_end):
        self.toggle_dir, self.hide, self.on_end = toggle_dir, hide, on_end
        self.state, self.ended = "openmpi", False
        FakeSwitch.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.on_end()
        self.ended = True

    def summary(self):
        return {"toggles": 3}


class FakeMonitor:
    def __init__(self, links, phase):
        self.links, self.phase = links, phase

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def summary(self):
        return {"stalls": [], "phase_seen": self.phase()}


class FakePopen:
    made = []

    def __init__(self, argv, **kwargs):
        self.argv, self.kwargs, self.returncode = argv, kwargs, None
        self.stdout = iter(OUTPUT)
        FakePopen.made.append(self)

    def wait(self):
        self.returncode = 0


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    FakeMpiJob.made, FakePopen.made, FakeSwitch.made = [], [], []
    monkeypatch.setattr(net, "MpiJob", FakeMpiJob)
    monkeypatch.setattr(bench_jobs, "RouteSwitch", FakeSwitch)
    monkeypatch.setattr(bench_jobs, "CpuMonitor", FakeMonitor)
    monkeypatch.setattr(bench_jobs.subprocess, "Popen", FakePopen)
    killed = []
    monkeypatch.setattr(procs, "in_host", lambda host, argv: ["mnexec", host.name] + [str(a) for a in argv])
    monkeypatch.setattr(procs, "kill_by_environ", killed.append)
    (tmp_path / "mpi").mkdir()
    (tmp_path / "logs").mkdir()
    fabric = types.SimpleNamespace(tmpdir=str(tmp_path), mpi_dir=str(tmp_path / "mpi"),
                                   mgmt=types.SimpleNamespace(root_ip="192.168.7.1"),
                                   host=lambda name: types.SimpleNamespace(name=name))
    stats = iter([{"jobs_registered": 4, "allreduce_plans": 2, "route_recomputes": 1},
                  {"jobs_registered": 5, "allreduce_plans": 3, "bcast_trees": 1, "errors": 0,
                   "route_recomputes": 1}])
    bench = types.SimpleNamespace(
        args=types.SimpleNamespace(mca=[("btl_tcp_sndbuf", "0")], no_hide_job_flows=False, sdn_timeout_ms=2000,
                                   bcast_rate_mbps=15, sdn_env=["SDN_MPI_TRACE=1"]),
        fabric=fabric, coll_bench="/bin/coll_bench", ports={"rpc": 4321}, log_dir=str(tmp_path / "logs"),
        out_dir=str(tmp_path), host_names=lambda hosts: ["h%d" % h for h in hosts],
        topo=types.SimpleNamespace(switch_names=["s1", "l1"], dpids={"s1": 1}),
        ctl=types.SimpleNamespace(rest=lambda path: [{"comms": {"0": {"planner": "rd", "max_load": 2,
                                                                      "lower_bound": 1, "flows": 12}},
                                                      "routes": [1, 2], "trees": []}]),
        rpc_stats=lambda: next(stats), spine_ports=lambda: {}, link_directions=lambda: [("l1-eth1", "tx", 30)],
        wait_no_jobs=lambda: True)
    return bench, killed


def progress_log():
    said = []
    return said, types.SimpleNamespace(say=said.append, add=lambda work: None)


FULL_JOB = {"name": "allreduce-dmodk-block-p4", "label": "allreduce dmodk/block p=4", "collective": "allreduce",
            "reps": 5, "sizes": [8, 65536], "calls": [10, 1], "roots": [0, 2], "sdn_algs": ["rd", "hier"],
            "settle_calls": 1, "idle_ms": 3, "tiny_idle_ms": 0, "tiny_reps": 40, "lib_verbose": True,
            "warm": True, "gap_ms": 5, "startup_bcast_bytes": 0, "startup_comms": 2, "variant": "planahead",
            "env": {"SDN_MPI_MIN_BYTES": "0", "SDN_MPI_TRACE": "2"}, "nprocs": 4, "hosts": [1, 2, 3, 4],
            "timeout_s": 60}


def full_prog(toggle):
    """FULL_JOB's coll_bench command line: every option in coll_bench's order, numbers left as numbers."""
    return ["/bin/coll_bench", "--collective", "allreduce", "--reps", 5, "--sizes", "8,65536",
            "--calls", "10,1", "--roots", "0,2", "--sdn-algs", "rd,hier", "--settle", 1, "--idle-ms", 3,
            "--tiny-reps", 40, "--tiny-block", 10, "--toggle", toggle, "--lib-verbose", "--warm",
            "--gap-ms", 5, "--startup-comms", 2, "--startup-variant", "planahead"]


# FULL_JOB's ranks' environment: the job's own SDN_MPI_TRACE overrides --sdn-env's
FULL_ENV = {"SDN_MPI_CONTROLLER": "192.168.7.1:4321", "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET,
            "SDN_MPI_TIMEOUT_MS": "2000", "SDN_MPI_BCAST_RATE_MBPS": "15", "SDN_MPI_TRACE": "2",
            "SDN_MPI_MIN_BYTES": "0"}


def test_coll_bench_argv_and_job_env_of_a_job_dict(fakes):
    bench, _killed = fakes
    assert bench_jobs.coll_bench_argv(bench, FULL_JOB, "/tmp/toggle-x") == full_prog("/tmp/toggle-x")
    assert bench_jobs.job_env(bench, FULL_JOB) == FULL_ENV
    assert FakeMpiJob.made == [] and FakePopen.made == []


def test_run_mpi_job_builds_the_coll_bench_command_environment_and_record(fakes):
    bench, killed = fakes
    said, progress = progress_log()
    events, meta = bench_jobs.run_mpi_job(bench, dict(FULL_JOB), progress)
    mpi, = FakeMpiJob.made
    prog, np, env, mca, env_order = mpi.calls["mpirun_argv"]
    toggle = prog[prog.index("--toggle") + 1]
    assert toggle.startswith(bench.fabric.tmpdir + "/toggle-")
    switch, = FakeSwitch.made
    assert (switch.toggle_dir, switch.hide) == (toggle, True)
    assert prog == full_prog(toggle)
    assert (np, mca, [h.name for h in mpi.hosts], mpi.slots) == (4, [("btl_tcp_sndbuf", "0")], ["h1", "h2", "h3", "h4"], 1)
    assert env_order == ["SDN_MPI_CONTROLLER", "SDN_MPI_FABRIC_SUBNET", "SDN_MPI_TIMEOUT_MS",
                         "SDN_MPI_BCAST_RATE_MBPS", "SDN_MPI_TRACE", "SDN_MPI_MIN_BYTES"]
    assert env == FULL_ENV
    argv = ["mpirun", "-np", 4] + prog
    popen, = FakePopen.made
    assert popen.argv == ["mnexec", "h1"] + [str(a) for a in argv]
    assert popen.kwargs["env"] == dict(env, PATH="/fake") and popen.kwargs["start_new_session"]
    assert killed == [mpi.dir]
    with open(bench.log_dir + "/allreduce-dmodk-block-p4.log") as log:
        assert log.read() == " ".join(str(a) for a in argv) + "\n" + "".join(OUTPUT)
    assert events == [{"bench": "meta", "have_sdn_bcast": True}, {"bench": "init", "metric": "sdn_init", "t_s": 0.25},
                      {"bench": "done"}]
    assert said == ["  allreduce dmodk/block p=4 sdn_init: 250.0 ms"]
    assert list(meta) == ["name", "argv", "rc", "timed_out", "wall_s", "cpu", "routes", "plan", "log",
                          "controller_rpc", "route_recomputes", "fabric_disrupted", "disrupted", "lib_plan"]
    assert meta["argv"] == [str(a) for a in argv] and meta["wall_s"] >= 0
    assert {k: meta[k] for k in ("name", "rc", "timed_out", "cpu", "routes", "log", "controller_rpc",
                                 "route_recomputes", "fabric_disrupted", "disrupted", "lib_plan")} == {
        "name": "allreduce-dmodk-block-p4", "rc": 0, "timed_out": False,
        "cpu": {"stalls": [], "phase_seen": "openmpi"}, "routes": {"toggles": 3},
        "log": "logs/allreduce-dmodk-block-p4.log",
        "controller_rpc": {"jobs_registered": 1, "allreduce_plans": 1, "bcast_trees": 1, "errors": 0},
        "route_recomputes": 0, "fabric_disrupted": False, "disrupted": [],
        "lib_plan": {"rtt_s": 0.05, "controller_total_s": 0.04, "controller_plan_s": 0.01,
                     "controller_install_s": 0.03, "flows": 12, "max_load": "1,2"}}
    assert meta["plan"] == {"jobs": 1, "routes": 2, "trees": [],
                            "comm 0": {"planner": "rd", "max_load": 2, "lower_bound": 1, "flows": 12}}


def test_run_mpi_job_defaults_and_slots(fakes):
    """A job with no options: only the always-present ones; more ranks than hosts (slots) passes -np."""
    bench, _killed = fakes
    bench.args.bcast_rate_mbps, bench.args.sdn_env, bench.args.no_hide_job_flows = None, None, True
    _said, progress = progress_log()
    job = {"name": "startup-p8", "label": "startup", "collective": "startup", "reps": 2, "nprocs": 8,
           "hosts": [1, 2], "slots": 4, "timeout_s": 60, "coll_bench": "/other/coll_bench"}
    _events, meta = bench_jobs.run_mpi_job(bench, job, progress)
    mpi, = FakeMpiJob.made
    prog, np, env, _mca, _order = mpi.calls["mpirun_argv"]
    assert prog == ["/other/coll_bench", "--collective", "startup", "--reps", 2, "--tiny-reps", 0,
                    "--tiny-block", 10, "--toggle", prog[-1]]
    assert (np, mpi.slots) == (8, 4)
    assert FakeSwitch.made[0].hide is False
    assert env == {"SDN_MPI_CONTROLLER": "192.168.7.1:4321", "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET,
                   "SDN_MPI_TIMEOUT_MS": "2000"}
    assert meta["argv"][:3] == ["mpirun", "-np", "8"]
