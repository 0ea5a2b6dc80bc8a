"""bench/bench_jobs.py's run_mpi_job with Mininet, mpirun, the route switch and the sampler replaced by
fakes: the coll_bench command line, the ranks' environment, the log and the job's record pinned; and
run_job_with_retries and run_all over fakes: the retry decisions, the results and progress lines.
No Mininet, no MPI, no root."""
import json
import types

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)

import bench_jobs
import benchcore
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

    def __init__(self, toggle_dir, switch_names, spine_ports, hide, on_end, on_phase):
        self.toggle_dir, self.hide, self.on_end, self.on_phase = toggle_dir, hide, on_end, on_phase
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
        self.announced = []

    def phase_changed(self, label):
        self.announced.append(label)

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
    # the switch announces its phase changes to the job's monitor (which reads Open vSwitch's counters then)
    switch, = FakeSwitch.made
    assert isinstance(switch.on_phase.__self__, FakeMonitor) and switch.on_phase.__self__.phase() == "openmpi"
    assert env == {"SDN_MPI_CONTROLLER": "192.168.7.1:4321", "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET,
                   "SDN_MPI_TIMEOUT_MS": "2000"}
    assert meta["argv"][:3] == ["mpirun", "-np", "8"]


# run_job_with_retries and run_all driven with fakes: run_mpi_job, job_records, write_json, the
# controller/fabric calls, iperf3 and the CPU monitor replaced; their decisions, results and
# progress lines pinned.

RETRY_JOB = {"name": "bcast-dmodk-block-p4", "label": "dmodk/block p=4", "collective": "bcast", "routing": "dmodk",
             "placement": "block", "nprocs": 4, "hosts": [1, 2, 3, 4], "roots": [0, 2], "work": 10.0,
             "work_per_byte": 0.5}


def fake_meta(disrupted=(), rc=0, timed_out=False, errors=(), cpu=None):
    """A run_mpi_job meta dict as run_job_with_retries reads it."""
    return {"name": "x", "rc": rc, "timed_out": timed_out, "wall_s": 75.0, "disrupted": list(disrupted),
            "cpu": cpu if cpu is not None else
            {"busiest_link_weighted_pct": 81.0, "ovs_main_runnable_weighted_pct": 55.4,
             "foreign_cpu_pct_of_one_cpu": {"median": 3.2}},
            "routes": {"toggles": 6, "toggle_s_total": 4.25, "revalidate_wait_s_total": 2.5,
                       "job_flows_hidden": True, "errors": list(errors)},
            "log": "logs/x.log"}


@pytest.fixture
def retry_bench(monkeypatch, tmp_path):
    """(bench, progress, calls, written, said, added): run_mpi_job answers from bench.metas in turn, each
    call's job (copied as passed) in calls; written: copies of what write_json wrote; said and added: the
    progress lines and work."""
    calls, written, said, added = [], [], [], []
    bench = types.SimpleNamespace(args=types.SimpleNamespace(retry_disrupted=1, discovery_timeout=12.0),
                                  have_sdn_bcast=True, out_dir=str(tmp_path), metas=[], waits=[])
    bench.wait_ready = bench.waits.append

    def run_mpi_job(bench_, job, progress):
        calls.append(dict(job))
        job["done_work"] = 1.5   # what the progress lines counted of it (_show)
        events, meta = bench.metas.pop(0)
        return events, meta

    def job_records(bench_, job, events, meta):
        return [{"metric": "m%d" % k, "job": job["name"]} for k in range(2)]

    monkeypatch.setattr(bench_jobs, "run_mpi_job", run_mpi_job)
    monkeypatch.setattr(bench_jobs, "job_records", job_records)
    monkeypatch.setattr(bench_jobs, "write_json",
                        lambda path, data: written.append((path, json.loads(json.dumps(data)))))
    progress = types.SimpleNamespace(say=said.append, add=added.append)
    return bench, progress, calls, written, said, added


def test_a_disrupted_job_is_run_again_and_its_first_attempt_superseded(retry_bench, capsys):
    bench, progress, calls, written, said, added = retry_bench
    events = [{"bench": "meta", "have_sdn_bcast": True}, {"bench": "check", "ok": True}, {"bench": "sample"}]
    bench.metas = [(events, fake_meta(disrupted=["the machine stalled"])), ([], fake_meta())]
    results = {"jobs": [], "records": [], "notes": []}
    job = dict(RETRY_JOB)
    bench_jobs.run_job_with_retries(bench, job, progress, results, "/r/results.json")
    assert bench.waits == [12.0, 12.0]
    assert [c["work_per_byte"] for c in calls] == [0.5, 0.0] and all(c["done_work"] == 0.0 for c in calls)
    assert job["done_work"] == 1.5 and job["work_per_byte"] == 0.5   # the second attempt ran a copy
    assert added == [10.0 - 1.5]
    first, second = results["jobs"]
    common = {"collective": "bcast", "routing": "dmodk", "placement": "block", "nprocs": 4, "hosts": [1, 2, 3, 4],
              "roots": [0, 2]}
    assert first == dict(fake_meta(disrupted=["the machine stalled"]), attempt=1, superseded=True,
                         program=events[:2], **common)
    assert second == dict(fake_meta(), attempt=2, program=[], **common)
    assert results["records"] == [
        {"metric": "m0", "job": RETRY_JOB["name"], "attempt": 1, "disrupted": True, "superseded": True},
        {"metric": "m1", "job": RETRY_JOB["name"], "attempt": 1, "disrupted": True, "superseded": True},
        {"metric": "m0", "job": RETRY_JOB["name"], "attempt": 2},
        {"metric": "m1", "job": RETRY_JOB["name"], "attempt": 2}]
    assert [path for path, _ in written] == ["/r/results.json"] * 2
    assert [len(data["jobs"]) for _, data in written] == [1, 2] and written[1][1] == results
    assert results["notes"] == []
    done = ("job bcast-dmodk-block-p4 done in 1m15s (ok); busiest link at 81% of its rate and ovs-vswitchd's "
            "forwarding thread 55% busy while data moved, other processes 3% of a CPU; route switches 6 (4.2 s, of "
            "which 2.5 s waiting for OVS revalidation), job routes overridden for Open MPI: True")
    assert said == ["job bcast-dmodk-block-p4: dmodk/block p=4, ranks on hosts [1, 2, 3, 4], roots [0, 2]", done,
                    "job bcast-dmodk-block-p4 DISRUPTED: the machine stalled: running it again",
                    "job bcast-dmodk-block-p4 (attempt 2): dmodk/block p=4, ranks on hosts [1, 2, 3, 4], roots [0, 2]",
                    done]
    assert capsys.readouterr().out == ""


def test_the_last_attempt_is_kept_even_when_disrupted(retry_bench):
    bench, progress, calls, _written, said, added = retry_bench
    bench.args.retry_disrupted = -3   # as 0: one attempt
    bench.metas = [([], fake_meta(disrupted=["a", "b"], cpu={}))]
    results = {"jobs": [], "records": [], "notes": []}
    bench_jobs.run_job_with_retries(bench, dict(RETRY_JOB, roots=None), progress, results, "/r/results.json")
    assert len(calls) == 1 and added == [8.5]
    meta, = results["jobs"]
    assert "superseded" not in meta and meta["roots"] is None
    assert results["records"] == [{"metric": "m%d" % k, "job": RETRY_JOB["name"], "attempt": 1, "disrupted": True}
                                  for k in range(2)]
    assert said[0] == "job bcast-dmodk-block-p4: dmodk/block p=4, ranks on hosts [1, 2, 3, 4]"
    assert "busiest link at - of its rate and ovs-vswitchd's forwarding thread - busy while data moved, other " \
           "processes - of a CPU" in said[1]
    assert said[2:] == ["job bcast-dmodk-block-p4 DISRUPTED: a; b"]


@pytest.mark.parametrize("timed_out, status", [(False, "rc=3"), (True, "TIMED OUT")])
def test_a_failed_job_is_not_run_again_and_its_log_is_shown(retry_bench, capsys, timed_out, status):
    """A failed mpirun (rc != 0) is not re-run even when disrupted: its log's tail is printed; route switch
    errors and a have_sdn_bcast that differs from the build's are said."""
    bench, progress, calls, _written, said, _added = retry_bench
    with open(bench.out_dir + "/x.log", "w") as log:
        log.write("head\n" + "y" * 3000 + "TAIL\n")
    bench.metas = [([{"bench": "meta", "have_sdn_bcast": False}],
                    dict(fake_meta(disrupted=["lost links"], rc=3, timed_out=timed_out, errors=["s1: x", "s2: y"]),
                         log="x.log"))]
    results = {"jobs": [], "records": [], "notes": []}
    bench_jobs.run_job_with_retries(bench, dict(RETRY_JOB), progress, results, "/r/results.json")
    assert len(calls) == 1 and "superseded" not in results["jobs"][0]
    assert results["notes"] == ["job bcast-dmodk-block-p4: coll_bench says have_sdn_bcast=False, the build "
                                "detected True"]
    assert "(%s)" % status in said[1]
    assert said[2:] == ["job bcast-dmodk-block-p4: route switch errors: s1: x; s2: y",
                        "job bcast-dmodk-block-p4 DISRUPTED: lost links"]
    assert capsys.readouterr().out == ("y" * 2995 + "TAIL\n") + "\n"


class FakeCpu:
    """CpuMonitor for run_all: a fixed summary per use."""
    used = []

    def __init__(self, links):
        FakeCpu.used.append(links)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def summary(self):
        return {"busiest_link_weighted_pct": 91.0, "ovs_main_runnable_pct": {"median": 60.0},
                "foreign_cpu_pct_of_one_cpu": {"median": 2.0}}


@pytest.fixture
def all_bench(monkeypatch):
    """(bench, log, said): every controller, fabric, iperf3 and job call in order in log."""
    from sdnmpi.mininet_topos import demo
    log, said = [], []
    FakeCpu.used = []
    clock = iter(float(t) for t in range(0, 1000, 3))
    monkeypatch.setattr(bench_jobs, "now_s", lambda: next(clock))
    monkeypatch.setattr(net, "ensure_ovs", lambda: log.append("ensure_ovs"))
    monkeypatch.setattr(bench_jobs, "CpuMonitor", FakeCpu)
    hosts = [types.SimpleNamespace(name="h%d" % k) for k in range(1, 9)]
    fabric = types.SimpleNamespace(hosts=hosts, host_ips=lambda: {"h8": "10.0.0.8"})

    def iperf3(server, client, ip, seconds):
        log.append(("iperf3", server.name, client.name, ip, seconds))
        answer = bench.iperf_answers.pop(0) if bench.iperf_answers else 19.0
        if isinstance(answer, Exception):
            raise answer
        return answer

    def parallel(bench_, seconds):
        log.append(("parallel", seconds))
        if bench.parallel_fails:
            raise RuntimeError("iperf3 missing")
        return {"flows": [1, 2, 3], "mbit_s": 140.0, "offered_mbit_s": 144.0}

    monkeypatch.setattr(demo, "iperf3", iperf3)
    monkeypatch.setattr(bench_jobs, "parallel_iperf", parallel)
    monkeypatch.setattr(bench_jobs, "run_job_with_retries",
                        lambda bench_, job, progress, results, path: log.append(("job", job["name"], path)))
    bench = types.SimpleNamespace(
        args=types.SimpleNamespace(iperf_seconds=5, quick=False, discovery_timeout=30.0), fabric=None,
        fab_model=benchcore.Fabric(2, 4, 2, 40, 20), iperf_answers=[], parallel_fails=False,
        stop_controller=lambda: log.append("stop"), start_controller=lambda r: log.append(("start", r)),
        wait_ready=lambda t: log.append(("wait", t)), link_directions=lambda: ["l1-eth1"])

    def start_fabric():
        log.append("fabric")
        bench.fabric = fabric
    bench.start_fabric = start_fabric
    return bench, log, types.SimpleNamespace(say=said.append, add=None), said


RUN_JOBS = [{"name": n, "routing": n.split("-")[0]} for n in ("dmodk-1", "single-1", "dmodk-2", "ecmp-1")]
IPERF_LINE = ("iperf3 h1 -> h8 (different leaves) under %s: %s Mbit/s (fabric links 20 Mbit/s); busiest link at 91%% "
              "of its rate, ovs-vswitchd forwarding thread busy 60%%, other processes 2%% of a CPU")


def test_run_all_goes_through_the_routings_in_job_order(all_bench):
    bench, log, progress, said = all_bench
    bench.iperf_answers = [19.0, RuntimeError("no route"), RuntimeError("no route")]
    results = {"notes": [], "cpu_check": {"iperf": []}}
    bench_jobs.run_all(bench, RUN_JOBS, progress, results, "/r/results.json")
    iperf = ("iperf3", "h8", "h1", "10.0.0.8", 5)
    assert log == ["ensure_ovs",
                   "stop", ("start", "dmodk"), "fabric", ("wait", 30.0), iperf, ("parallel", 5),
                   ("job", "dmodk-1", "/r/results.json"), ("job", "dmodk-2", "/r/results.json"), "stop",
                   "stop", ("start", "single"), ("wait", 30.0), iperf, ("job", "single-1", "/r/results.json"), "stop",
                   "stop", ("start", "ecmp"), ("wait", 30.0), iperf, ("job", "ecmp-1", "/r/results.json"), "stop"]
    assert FakeCpu.used == [["l1-eth1"]] * 4
    cpu = FakeCpu(None).summary()
    entry = {"routing": "dmodk", "client": "h1", "server": "h8", "seconds": 5, "mbit_s": 19.0,
             "fraction_of_fabric_bw": 19.0 / 20, "foreign_cpu_pct": 2.0, "ovs_main_runnable_pct": 60.0,
             "busiest_link_weighted_pct": 91.0, "cpu": cpu}
    failed = dict(entry, mbit_s=None, fraction_of_fabric_bw=None)
    assert results["cpu_check"]["iperf"] == [entry, dict(failed, routing="single"), dict(failed, routing="ecmp")]
    assert results["cpu_check"]["parallel"] == {"flows": [1, 2, 3], "mbit_s": 140.0, "offered_mbit_s": 144.0,
                                                "cpu": cpu, "routing": "dmodk"}
    assert results["notes"] == ["iperf3 failed under single: no route", "iperf3 failed under ecmp: no route"]
    assert said == [
        "starting the fabric: 2 spines, 4 leaves, 2 hosts/leaf, host links 40 Mbit/s, fabric links 20 Mbit/s",
        "controller up with routing dmodk; fabric discovered and routed in 3.0 s", IPERF_LINE % ("dmodk", "19.0"),
        "iperf3, 3 UDP flows at once (dmodk): 140.0 Mbit/s of the 144 Mbit/s offered received; busiest link at 91% "
        "of its rate, ovs-vswitchd forwarding thread busy 60%, other processes 2% of a CPU",
        "controller up with routing single; fabric discovered and routed in 3.0 s", IPERF_LINE % ("single", "-"),
        "controller up with routing ecmp; fabric discovered and routed in 3.0 s", IPERF_LINE % ("ecmp", "-")]


def test_run_all_quick_and_without_iperf(all_bench):
    """--quick: iperf3 under the first routing only; a failed parallel check is recorded as its error; no
    parallel check on unlimited host links; --iperf-seconds 0: none at all."""
    bench, log, progress, said = all_bench
    bench.args.quick, bench.parallel_fails = True, True
    results = {"notes": [], "cpu_check": {"iperf": []}}
    bench_jobs.run_all(bench, RUN_JOBS, progress, results, "/r/results.json")
    assert [e for e in log if e[0] in ("iperf3", "parallel")] == [("iperf3", "h8", "h1", "10.0.0.8", 5),
                                                                  ("parallel", 5)]
    assert [e["routing"] for e in results["cpu_check"]["iperf"]] == ["dmodk"]
    assert results["cpu_check"]["parallel"] == {"error": "iperf3 missing", "cpu": FakeCpu(None).summary(),
                                                "routing": "dmodk"}
    assert said[3] == ("iperf3, 0 UDP flows at once (dmodk): iperf3 missing of the 0 Mbit/s offered received; busiest "
                       "link at 91% of its rate, ovs-vswitchd forwarding thread busy 60%, other processes 2% of a CPU")
    for fab, iperf_seconds, expected in ((benchcore.Fabric(2, 4, 2, 0, 20), 5, ["iperf3"]),
                                         (benchcore.Fabric(2, 4, 2, 40, 20), 0, [])):
        del log[:], said[:]
        bench.fab_model, bench.args.iperf_seconds, bench.fabric = fab, iperf_seconds, None
        results = {"notes": [], "cpu_check": {"iperf": []}}
        bench_jobs.run_all(bench, RUN_JOBS[:1], progress, results, "/r/results.json")
        assert [e[0] for e in log if e[0] in ("iperf3", "parallel")] == expected
        assert "parallel" not in results["cpu_check"]
    assert said[0] == ("starting the fabric: 2 spines, 4 leaves, 2 hosts/leaf, host links 40 Mbit/s, fabric links "
                       "20 Mbit/s")
