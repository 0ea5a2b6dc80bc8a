"""The route switch announces each change of the bench's phase label (bench_flows.RouteSwitch.state,
also where bench_rotate.RotatingSwitch sets it) to ``on_phase``, and the job's CpuMonitor reads Open
vSwitch's counters then (phase_changed -> ovs_counters.PhaseCounters.changed), in the switch's
thread before the request is acknowledged: no polling of the label. Open vSwitch is a fake unixctl
server (test_ovs_counters.FakeVswitchd); no switch, flow table or lock."""
import functools
import os
import tempfile

import bench_setup  # noqa: F401  (bench/ on sys.path)
import bench_flows  # noqa: E402
import bench_rotate  # noqa: E402
import bench_sampling  # noqa: E402
import ovs_counters  # noqa: E402

from test_ovs_counters import FakeVswitchd


def _switch(tmp_path, announced, cls=bench_flows.RouteSwitch, **kwargs):
    return cls(str(tmp_path), [], {}, hide=True, wait=lambda: (0.0, None), on_phase=announced.append, **kwargs)


def test_each_change_of_the_route_switchs_state_is_announced_once(tmp_path):
    announced = []
    switch = _switch(tmp_path, announced)
    assert switch.state == "start" and announced == []
    for what in ("sdnmpi", "openmpi", "openmpi", "sdnmpi", "end"):
        switch.handle(what)
        assert switch.state == what and announced[-1] == what
    assert announced == ["sdnmpi", "openmpi", "sdnmpi", "end"]      # the same label again: no change
    switch.state = "end"
    assert len(announced) == 4


def test_a_failing_phase_reader_is_logged_and_the_switch_goes_on(tmp_path, caplog):
    """The sampler runs in the route switch's thread: its exception must not stop the request, the
    state change or the later announcements."""
    calls = []

    def broken(label):
        calls.append(label)
        raise RuntimeError("unixctl gone")
    switch = bench_flows.RouteSwitch(str(tmp_path), [], {}, hide=True, wait=lambda: (0.0, None), on_phase=broken)
    with caplog.at_level("ERROR"):
        switch.handle("sdnmpi")
        switch.handle("openmpi")
    assert switch.state == "openmpi" and calls == ["sdnmpi", "openmpi"]
    assert caplog.text.count("the phase change to") == 2 and "unixctl gone" in caplog.text


def test_the_rotating_switch_announces_the_change_it_makes(tmp_path):
    """RotatingSwitch sets the state to "sdnmpi" when it takes Open MPI's overrides off for a
    routing change: announced as every change."""
    announced = []
    switch = _switch(tmp_path, announced, bench_rotate.RotatingSwitch,
                     control=lambda routing: {"changed": False, "pass_s": 0.0})
    switch.handle("openmpi")
    switch.handle("routing:dmodk")
    assert switch.state == "sdnmpi" and announced == ["openmpi", "sdnmpi"]
    switch.handle("routing:single")                   # no overrides on: no change
    assert announced == ["openmpi", "sdnmpi"]


def test_a_job_monitor_reads_the_counters_at_each_announced_change(tmp_path, monkeypatch):
    """CpuMonitor's PhaseCounters (built for a phase and an ovs-vswitchd pid) is read when the switch
    announces a change, by the time the switch's state is set; the summary has every phase's deltas."""
    with tempfile.TemporaryDirectory() as d:
        fake = FakeVswitchd(os.path.join(d, "ovs-vswitchd.%d.ctl" % os.getpid()))
        monkeypatch.setattr(bench_sampling, "ovs_vswitchd_pid", os.getpid)
        monkeypatch.setattr(bench_sampling, "PhaseCounters", functools.partial(ovs_counters.PhaseCounters, rundir=d))
        switch = None
        monitor = bench_sampling.CpuMonitor(interval=60.0, phase=lambda: switch.state)
        switch = _switch(tmp_path, [])
        switch.on_phase = monitor.phase_changed
        reads = []
        with monitor:
            reads.append(len(fake.requests))
            for what in ("openmpi", "sdnmpi", "sdnmpi", "openmpi", "end"):
                switch.handle(what)
                reads.append(len(fake.requests))
        out = monitor.summary()["ovs_counters"]
    assert reads == [4, 8, 12, 12, 16, 20] and len(fake.requests) == 24
    phases = out["phases"]
    assert {name: acc["reads"] for name, acc in phases.items()} == {"start": 1, "openmpi": 2, "sdnmpi": 1, "end": 1}
    assert phases["sdnmpi"]["pmd"]["packets received"] == 400 and phases["openmpi"]["pmd"]["packets received"] == 800
    assert phases["openmpi"]["derived"]["datapath_packets"] == 800 and out["job"]["pmd"]["packets received"] == 2000
    assert out["error"] is None
