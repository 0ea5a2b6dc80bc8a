"""bench/bench_flowdetect.py's failed and stalled runs without a fabric (bench/flowdetect_runs.py):
a failed run is recorded and the schedule goes on, N failures in a row stop it, a stall's
diagnostics are taken while mpirun still runs, and results.md / the exit status say so."""
import json
import re
import threading

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import bench_flowdetect
import emulation
import flowdetect_fabric
import flowdetect_runs


class Fabric:
    """A fake set-up: each run's outcome from ``plan`` ({(pattern, mode, rep): "ok" | "fail" |
    "stall"}, default ok); records starts, runs and closes in ``log``."""
    log, plan = [], {}

    def __init__(self, args, detection, log_dir, prefix, mgmt_subnet):
        self.detection, self.last_exchanges = detection, [1.0]
        Fabric.log.append(("start", detection))

    def run(self, args, steps, hints, counters_to=None, tags=None):
        key = (tags["pattern"], tags["mode"], tags["rep"])
        Fabric.log.append(("run",) + key)
        outcome = Fabric.plan.get(key, "ok")
        if outcome == "fail":
            raise flowdetect_runs.RunFailed("mpirun exit status 1", "...rank 3 died", ["/r/logs/x-output.txt"])
        if outcome == "stall":
            raise flowdetect_runs.RunFailed("stalled: still running 300 s in, killed 30 s later", "...still running",
                                            ["/r/logs/x-stall-ss.txt", "/r/logs/x-stall-ovs.txt"])
        return {"none": 10.0, "hints": 8.0}.get(tags["mode"], 9.0) + tags["rep"], [("h1", "h2", 2)]

    def close(self):
        Fabric.log.append(("close", self.detection))


def _run(monkeypatch, argv, plan):
    Fabric.log, Fabric.plan = [], plan
    monkeypatch.setattr(bench_flowdetect, "Fabric", Fabric)
    args = bench_flowdetect.parse_args(argv)
    return bench_flowdetect.run_schedule(args, bench_flowdetect.patterns(10), "logs", "counters",
                                         bench_flowdetect.time.monotonic())


def test_a_failed_and_a_stalled_run_are_recorded_and_every_later_run_still_runs(monkeypatch):
    plan = {("alltoall", "hints", 1): "stall", ("shift", "none", 2): "fail"}
    results, failed, skipped, error, not_run = _run(
        monkeypatch, ["--patterns", "shift,alltoall", "--modes", "none,hints", "--repeats", "3"], plan)
    assert (skipped, error, not_run) == (0, None, 0)
    runs = [e[1:] for e in Fabric.log if e[0] == "run"]
    assert len(runs) == 2 * 2 * 3 and runs[-1] == ("alltoall", "hints", 3)        # nothing lost after them
    assert [(r["pattern"], r["mode"], r["rep"]) for r in failed] == [("alltoall", "hints", 1), ("shift", "none", 2)]
    assert failed[0]["reason"].startswith("stalled") and failed[0]["tail"] == "...still running"
    assert failed[0]["files"] == ["/r/logs/x-stall-ss.txt", "/r/logs/x-stall-ovs.txt"]
    assert failed[1]["reason"] == "mpirun exit status 1" and "started_s" in failed[1]
    assert [r["rep"] for r in results["shift"]["none"]] == [1, 3]
    assert [r["rep"] for r in results["alltoall"]["hints"]] == [2, 3]
    assert len(results["shift"]["hints"]) == 3
    assert Fabric.log[-1] == ("close", "none")


def test_n_failures_in_a_row_stop_the_bench_and_a_success_between_resets_the_count(monkeypatch):
    argv = ["--patterns", "shift", "--modes", "threshold", "--repeats", "8"]
    fails = {("shift", "threshold", r): "fail" for r in (1, 2, 4, 5, 6)}
    results, failed, skipped, error, not_run = _run(monkeypatch, argv, fails)
    assert [r["rep"] for r in failed] == [1, 2, 4, 5, 6]          # 1, 2 then a success: no stop
    assert "3 runs in a row failed" in error and "probably broken" in error
    assert not_run == 2 and skipped == 0
    assert [r["rep"] for r in results["shift"]["threshold"]] == [3]
    assert Fabric.log[-1] == ("close", "threshold")
    _results, failed, _skipped, error, not_run = _run(monkeypatch, argv + ["--max-consecutive-failures", "0"], fails)
    assert (len(failed), error, not_run) == (5, None, 0)
    _results, _failed, _skipped, error, not_run = _run(monkeypatch, argv + ["--max-consecutive-failures", "2"], fails)
    assert error.startswith("2 runs in a row failed") and not_run == 6


def test_results_md_counts_failures_with_medians_over_the_finished_runs_and_lists_them():
    results = {"alltoall": {"none": [{"seconds": s, "detected": []} for s in (10.0, 12.0)],
                            "hints": [{"seconds": 9.0, "detected": []}]}}
    failed = [{"pattern": "alltoall", "mode": "hints", "rep": 1, "started_s": 12.5, "reason": "stalled: x",
               "tail": "t", "files": ["logs/alltoall-hints-1-stall-ss.txt"]},
              {"pattern": "alltoall", "mode": "hints", "rep": 3, "reason": "mpirun exit status 1", "tail": "t",
               "files": []},
              {"pattern": "alltoall", "mode": "threshold", "rep": 1, "reason": "r", "tail": "", "files": []}]
    text = bench_flowdetect.tables(results, ["alltoall"], ["none", "threshold", "hints"], failed)
    rows = {line.split(" | ")[1]: line.split(" | ") for line in text.splitlines() if line.startswith("| alltoall")}
    assert rows["none"][2:5] == ["2", "11.00", "+0 %"]
    assert rows["hints"][2:5] == ["1 + 2 failed", "9.00", "-18 %"]
    assert rows["threshold"][2:6] == ["0 + 1 failed", "-", "-", "-"]
    assert "Failed runs: 3 " in text
    assert "- alltoall hints #1 (at 12.5 s): stalled: x; files: logs/alltoall-hints-1-stall-ss.txt" in text
    assert "- alltoall hints #3: mpirun exit status 1\n" in text
    assert "Failed runs" not in bench_flowdetect.tables(results, ["alltoall"], ["none", "hints"])


def test_main_writes_the_failures_and_the_stop_then_exits_1(monkeypatch, tmp_path, capsys):
    class Done:
        returncode = 0
    monkeypatch.setattr(bench_flowdetect.subprocess, "run", lambda *a, **k: Done())
    monkeypatch.setattr(bench_flowdetect, "ensure_ovs", lambda: None)
    monkeypatch.setattr(bench_flowdetect.bench_common, "software_versions", lambda: {"sdnmpi_git": "0123abc"})
    for name in ("PROGRAM", "PRELOAD", "LLDPD"):
        monkeypatch.setattr(bench_flowdetect, name, __file__)
    Fabric.log, Fabric.plan = [], {("shift", "learned", r): "fail" for r in (2, 3, 4)}
    monkeypatch.setattr(bench_flowdetect, "Fabric", Fabric)
    assert bench_flowdetect.main(["--patterns", "shift", "--modes", "learned", "--repeats", "6",
                                  "--out-dir", str(tmp_path)]) == 1
    (folder,) = tmp_path.iterdir()
    doc = json.loads((folder / "results.json").read_text())
    assert [r["rep"] for r in doc["failed_runs"]] == [2, 3, 4] and doc["not_run"] == 2
    assert "probably broken" in doc["error"]
    assert [r["rep"] for r in doc["results"]["shift"]["learned"]] == [1]
    md = (folder / "results.md").read_text()
    assert doc["software"]["sdnmpi_git"] == "0123abc" and md.startswith("sdnmpi 0123abc\n")   # the code it ran
    assert "| shift | learned | 1 + 3 failed | 10.00 |" in md
    assert "stopped early: 3 runs in a row failed" in md and md.rstrip().endswith("; 2 runs not run")
    assert md in capsys.readouterr().out
    report = bench_flowdetect.report([str(folder)])           # --report pools them too
    assert "| shift | learned | 1 + 3 failed |" in report and "probably broken" in report
    Fabric.plan = {}
    assert bench_flowdetect.main(["--patterns", "shift", "--modes", "learned", "--repeats", "1",
                                  "--out-dir", str(tmp_path / "ok")]) == 0


class _Host:
    def __init__(self, name):
        self.pid = int(name[1:]) + 1000


class _Mininet:
    """Fake FabricNet: mpirun waits for the stall diagnostics (so they run while it does) and then
    ends as MpiJob does at its timeout, or with a result."""

    class mgmt:
        root_ip = "172.30.255.254"

    def __init__(self, diagnosed, result):
        self.diagnosed, self.result, self.calls = diagnosed, result, []

    def host(self, name):
        return _Host(name)

    def bridge_names(self):
        return ["fds1", "fds2"]

    def mpirun(self, hosts, argv, env=None, timeout=None):
        self.calls.append(timeout)
        seen = self.diagnosed.wait(10)
        return (None, "[sdnmpi] mpirun timed out\n") if self.result is None else (0, self.result if seen else "")


class _Controller:
    def log_text(self):
        return "".join("line %d\n" % n for n in range(1000))


def _fabric(tmp_path, monkeypatch, result):
    diagnosed, ran = threading.Event(), []

    def fake_cmd(argv, timeout):
        ran.append(list(argv))
        if argv[0] == "ovs-ofctl":
            diagnosed.set() if argv[-1] == "fds2" and argv[3] == "dump-ports" else None
            return 0, "cookie=0x0, table=0 %s\n" % argv[-1]
        return 0, "ESTAB 0 0 cwnd:10\n"
    monkeypatch.setattr(flowdetect_runs, "_run_cmd", fake_cmd)
    fab = flowdetect_fabric.Fabric.__new__(flowdetect_fabric.Fabric)
    fab.fab, fab.ctl, fab.log_dir, fab.counter_log = _Mininet(diagnosed, result), _Controller(), str(tmp_path), None
    fab.rpc_port = 1
    return fab, ran


def test_a_stall_is_diagnosed_before_mpirun_ends_and_raises_with_the_files(tmp_path, monkeypatch):
    fab, ran = _fabric(tmp_path, monkeypatch, None)
    args = bench_flowdetect.parse_args(["--timeout", "0.05"])
    with pytest.raises(flowdetect_runs.RunFailed) as exc:
        fab.run(args, ["alltoall", "10"], hints=True, tags={"pattern": "alltoall", "mode": "hints", "rep": 2})
    assert fab.fab.calls == [0.05 + flowdetect_runs.DIAG_GRACE_S]
    assert exc.value.reason.startswith("stalled: still running 0.05 s in")
    stem = str(tmp_path / "alltoall-hints-2")
    assert exc.value.files == [stem + "-stall-ss.txt", stem + "-stall-ovs.txt", stem + "-stall-controller.log",
                               stem + "-output.txt"]
    ss = (tmp_path / "alltoall-hints-2-stall-ss.txt").read_text()
    assert [a for a in ran if a[0] == "mnexec"] == [["mnexec", "-a", str(1000 + h), "ss", "-tni"] for h in range(1, 17)]
    assert ss.count("ESTAB 0 0 cwnd:10") == 16 and "## h16: mnexec -a 1016 ss -tni (exit 0)" in ss
    ovs = (tmp_path / "alltoall-hints-2-stall-ovs.txt").read_text()
    assert "## fds1 dump-flows: ovs-ofctl -O OpenFlow13 dump-flows fds1 (exit 0)" in ovs and "fds2 dump-ports" in ovs
    log = (tmp_path / "alltoall-hints-2-stall-controller.log").read_text().splitlines()
    assert len(log) == flowdetect_runs.CONTROLLER_LINES and log[-1] == "line 999"
    assert (tmp_path / "alltoall-hints-2-output.txt").read_text() == "[sdnmpi] mpirun timed out\n"
    assert exc.value.tail == "[sdnmpi] mpirun timed out\n"


def test_a_run_that_ends_in_the_grace_counts_and_keeps_its_diagnostics(tmp_path, monkeypatch):
    fab, _ran = _fabric(tmp_path, monkeypatch, "traffic_patterns: ranks=16 ok seconds=301.5\n")
    args = bench_flowdetect.parse_args(["--timeout", "0.05"])
    seconds, found = fab.run(args, ["shift", "4", "10"], hints=False,
                             tags={"pattern": "shift", "mode": "none", "rep": 1})
    assert (seconds, found) == (301.5, [])
    assert [p.rsplit("-", 1)[1] for p in fab.last_stall] == ["ss.txt", "ovs.txt", "controller.log"]


def test_capture_stall_leaves_out_what_is_past_its_budget_and_cuts_long_output(tmp_path, monkeypatch):
    ticks = iter(range(100))
    long_output = "x" * (flowdetect_runs.DIAG_CMD_MAX_BYTES + 5)
    monkeypatch.setattr(flowdetect_runs, "_run_cmd", lambda argv, timeout: (0, long_output))
    cmds = flowdetect_runs.stall_commands(lambda h, argv: ["in", h] + argv, ["h1", "h2", "h3"], ["s1"])
    files = flowdetect_runs.capture_stall(str(tmp_path / "r"), cmds, None, budget_s=2.5, clock=lambda: next(ticks))
    assert files == [str(tmp_path / "r-ss.txt"), str(tmp_path / "r-ovs.txt")]
    ss = (tmp_path / "r-ss.txt").read_text()
    assert "## h2: in h2 ss -tni" in ss and "## h3:" not in ss and "[cut: 5 more characters]" in ss
    assert "## left out (diagnostics budget of 2.5 s spent): h3" in ss
    ovs = (tmp_path / "r-ovs.txt").read_text()
    assert "## left out (diagnostics budget of 2.5 s spent): s1 dump-flows, s1 dump-ports" in ovs


def test_a_hanging_diagnostic_command_is_cut_at_its_timeout():
    status, _out = flowdetect_runs._run_cmd(["sleep", "30"], 0.2)
    assert status == "timed out after 0.2 s"
    assert flowdetect_runs._run_cmd(["/nonexistent/cmd"], 1)[0].startswith("not run: ")


def test_stall_watch_does_not_fire_for_a_run_that_ends_in_time():
    calls = []
    with flowdetect_runs.StallWatch(60, lambda: calls.append(1) or ["f"]) as watch:
        pass
    assert not watch.fired and watch.files == [] and calls == [] and not watch._timer.is_alive()


def test_results_md_lists_runs_that_went_past_the_timeout_and_ended_in_the_grace():
    results = {"shift": {"none": [{"seconds": 301.5, "detected": [], "rep": 2,
                                   "past_timeout_files": ["logs/shift-none-2-stall-ss.txt"]},
                                  {"seconds": 20.0, "detected": [], "rep": 3}]}}
    text = bench_flowdetect.tables(results, ["shift"], ["none"])
    assert "| shift | none | 2 | 160.75 |" in text
    assert "Runs past --timeout that ended before the kill: 1 (counted above):\n" \
           "- shift none #2: 301.50 s; files: logs/shift-none-2-stall-ss.txt" in text
    results["shift"]["none"][0].pop("past_timeout_files")
    assert "past --timeout" not in bench_flowdetect.tables(results, ["shift"], ["none"])


def test_socket_sampler_writes_each_command_under_a_timed_title_until_the_run_ends(tmp_path, monkeypatch):
    calls, two_rounds = [], threading.Event()

    def fake_cmd(argv, timeout):
        calls.append(argv)
        if len(calls) >= 4:
            two_rounds.set()
        return 0, "ESTAB x"
    monkeypatch.setattr(flowdetect_runs, "_run_cmd", fake_cmd)
    path = str(tmp_path / "r-sockets.txt")
    with flowdetect_runs.SocketSampler(path, [("h1", ["ss", "1"]), ("h2", ["ss", "2"])], 0.05) as sampler:
        assert two_rounds.wait(30), calls        # two rounds of both commands, at 0.05 s intervals
    # the run's end stops the sampler: its thread is over, so no command runs after this
    assert not sampler._thread.is_alive() and sampler.files == [path]  # pylint: disable=protected-access
    rounds = len(calls)
    text = open(path).read()
    assert re.search(r"^## t=\d+\.\d{3} h1 \(exit 0\)\nESTAB x$", text, re.M)
    assert text.count("## t=") == rounds and text.index(" h1 ") < text.index(" h2 ")


def test_socket_sampler_off_runs_nothing_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(flowdetect_runs, "_run_cmd", lambda argv, timeout: pytest.fail("ran %s" % argv))
    with flowdetect_runs.SocketSampler(str(tmp_path / "s.txt"), [("h1", ["ss"])], 0) as sampler:
        assert sampler._thread is None           # pylint: disable=protected-access  (nothing started)
    assert sampler.files == [] and not (tmp_path / "s.txt").exists()


class SharedOvs:
    """One ovs-vswitchd send socket for every fabric (bench/ovs_sendbuf.py's calls)."""
    def __init__(self, size):
        self.size = size

    def ovs_pid(self):
        return 42

    def read_send_socket(self, pid):
        return 7, {"tb": self.size}

    def set_send_buffer(self, pid, fd, nbytes):
        old, self.size = self.size, nbytes
        return old, nbytes


def test_interleaved_fabrics_close_last_first_and_leave_the_shared_send_buffer_as_found(monkeypatch):
    ovs = SharedOvs(212992)

    class EmulatedFabric(Fabric):
        def __init__(self, *a):
            super().__init__(*a)
            self.emulation = emulation.Emulation(ack_class=False, sendbuf=emulation.SendBuffer(4 << 20, ovs=ovs))
            self.emulation.apply([])

        def close(self):
            self.emulation.restore(tc=False)
            super().close()

    monkeypatch.setattr(bench_flowdetect, "Fabric", EmulatedFabric)
    Fabric.log, Fabric.plan = [], {}
    args = bench_flowdetect.parse_args(["--patterns", "shift", "--repeats", "1", "--interleave"])
    bench_flowdetect.run_schedule(args, bench_flowdetect.patterns(10), "logs", "counters",
                                  bench_flowdetect.time.monotonic())
    starts = [d for kind, *rest in Fabric.log if kind == "start" for d in rest]
    closes = [d for kind, *rest in Fabric.log if kind == "close" for d in rest]
    setups = {bench_flowdetect.DETECTION[m] for m in bench_flowdetect.DEFAULT_MODES}   # hints shares none's
    assert len(starts) == len(setups) == 4 and closes == starts[::-1]
    assert ovs.size == 212992                   # closed in start order, the last would put back 4 MiB
