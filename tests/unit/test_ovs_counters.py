"""bench/ovs_counters.py: Open vSwitch's counters per phase, parsed from texts Open vSwitch 3.1
printed on this project's machine (bench/results/*/raw and counters/ captures)."""
import gzip
import json
import os
import socket
import tempfile
import threading
import time

import bench_setup  # noqa: F401  (bench/ on sys.path)
import ovs_counters as oc  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results")
PROBE = os.path.join(ROOT, "rate-probe-20261128-164539", "raw")
# captured while the 16-host allreduce job ran (bench/ovs_capture.sh)
RUN = os.path.join(ROOT, "20261130-195102", "counters")


def _section(path, name):
    """One "== name" section of a capture (rate_probe's or capture.sh's)."""
    with gzip.open(path, "rt") as f:
        text = f.read()
    return text.split("== %s\n" % name, 1)[1].split("\n== ", 1)[0]


def test_pmd_counters_of_a_real_capture_and_their_delta():
    before = oc.pmd_counters(_section(os.path.join(PROBE, "counters-perm-sndbuf-r1-before.txt.gz"), "pmd"))
    after = oc.pmd_counters(_section(os.path.join(PROBE, "counters-perm-sndbuf-r1-after.txt.gz"), "pmd"))
    assert after["packets received"] == 763034 and after["emc hits"] == 204404
    assert after["megaflow hits"] == 558164 and after["miss with success upcall"] == 458
    assert set(after) == set(oc.PMD_KEYS)     # the float lines (averages) are left out
    acc = {}
    oc.add_delta(acc, {"t": 1.0, "pmd": before}, {"t": 3.5, "pmd": after})
    assert acc["seconds"] == 2.5 and acc["reads"] == 1
    assert acc["pmd"]["packets received"] == after["packets received"] - before["packets received"] > 0
    assert "packet recirculations" not in acc["pmd"]      # zero deltas are not kept


def test_the_counters_of_one_capture_during_a_job_agree():
    path = os.path.join(RUN, "ovs-4-195150.txt.gz")
    pmd = oc.pmd_counters(_section(path, "dpif-netdev/pmd-stats-show"))
    dp = oc.dpctl_show(_section(path, "dpctl/show"))
    assert dp == {"hit": 1183486, "missed": 514, "lost": 0, "flows": 242}
    # dpctl/show's lookups are the main thread's: hits = EMC + megaflow (+ simple match) hits, misses =
    # upcalls; pmd-stats-show was read a moment later, with a few more packets forwarded
    hits = pmd["emc hits"] + pmd["megaflow hits"] + pmd["simple match hits"]
    assert 0 < hits - dp["hit"] < 1000 and pmd["packets received"] == hits + pmd["miss with success upcall"]
    assert pmd["miss with success upcall"] == dp["missed"]
    assert oc.upcall_show(_section(path, "upcall/show")) == {"flows": 242, "flows_avg": 242, "flows_max": 318,
                                                               "flow_limit": 160000, "dump_ms": 1}
    cov = oc.coverage_totals(_section(path, "coverage/show"))
    assert cov["netdev_received"] == 500451 and cov["poll_create_node"] == 10623362 and cov["dpif_flow_put"] == 97


def test_no_datapath_yet():
    path = os.path.join(RUN, "ovs-1-195105.txt.gz")     # ovs-vswitchd up, the fabric not yet
    assert oc.dpctl_show(_section(path, "dpctl/show")) is None
    assert oc.dpctl_show("") is None and oc.upcall_show("") is None
    two = "\n".join(["netdev@ovs-netdev:", "  lookups: hit:5 missed:4 lost:2", "  flows: 17",
                     "system@ovs-system:", "  lookups: hit:1 missed:1 lost:0", "  flows: 3"])
    assert oc.dpctl_show(two) == {"hit": 6, "missed": 5, "lost": 2, "flows": 20}


def test_context_switches_of_this_thread_grow_when_it_sleeps():
    path = "/proc/self/task/%d/status" % threading.get_native_id()
    with open(path) as f:
        before = oc.context_switches(f.read())
    time.sleep(0.01)
    with open(path) as f:
        after = oc.context_switches(f.read())
    assert set(before) == {"voluntary", "nonvoluntary"}
    assert after["voluntary"] > before["voluntary"]


def test_schedstat_of_this_thread_counts_its_cpu_time():
    path = "/proc/self/task/%d/schedstat" % threading.get_native_id()
    with open(path) as f:
        before = oc.schedstat(f.read())
    t0 = time.thread_time()
    while time.thread_time() - t0 < 0.02:   # 20 ms of this thread's CPU (process_time counts every thread's)
        pass
    with open(path) as f:
        after = oc.schedstat(f.read())
    assert after["run_ns"] - before["run_ns"] >= 15e6 and after["slices"] >= before["slices"]


def test_add_delta_keeps_flows_as_a_level_and_the_lowest_flow_limit():
    acc = {}
    snap = lambda t, hit, flows, limit: {"t": t, "dp": {"hit": hit, "missed": 1, "lost": 0, "flows": flows},
                                         "upcall": {"flows": flows, "flows_avg": 0, "flows_max": 0,
                                                    "flow_limit": limit, "dump_ms": t},
                                         "switches": {"voluntary": 10 * t, "nonvoluntary": 0}}
    oc.add_delta(acc, snap(0, 100, 5, 10000), snap(2, 300, 40, 9000))
    oc.add_delta(acc, snap(5, 400, 12, 10000), snap(6, 450, 8, 10000))
    assert acc["dp"] == {"hit": 250}                      # missed and lost did not change
    assert acc["dp_flows_max"] == 40 and acc["flow_limit_min"] == 9000 and acc["dump_ms_max"] == 6
    assert acc["switches"] == {"voluntary": 30} and acc["seconds"] == 3 and acc["reads"] == 2
    oc.add_delta(acc, {"t": 6, "dp": None}, snap(7, 500, 9, 10000))     # a failed read adds nothing
    assert acc["dp"] == {"hit": 250} and acc["reads"] == 3


def test_derived_ratios():
    acc = {"pmd": {"packets received": 2000, "emc hits": 900, "megaflow hits": 1080, "miss with success upcall": 20},
           "coverage": {"netdev_received": 400}, "switches": {"voluntary": 1000}}
    d = oc.derived(acc, crossing_bytes=2 << 20)
    assert d["upcalls"] == 20 and d["upcalls_per_1000_packets"] == 10.0
    assert abs(d["emc_share_of_hits"] - 900 / 1980.0) < 1e-12
    assert d["packets_per_rx_batch"] == 5.0 and d["packets_per_wakeup"] == 2.0
    assert d["upcalls_per_mib"] == 10.0 and d["datapath_packets_per_mib"] == 1000.0
    assert oc.derived({})["upcalls_per_1000_packets"] is None and "upcalls_per_mib" not in oc.derived({})
    assert "thread_busy_us_per_packet" not in d
    acc["thread"] = {"run_ns": 40_000_000, "wait_ns": 10_000_000, "slices": 3}
    d = oc.derived(acc)
    assert d["thread_run_us_per_packet"] == 20.0 and d["thread_busy_us_per_packet"] == 25.0


DPCTL = _section(os.path.join(RUN, "ovs-4-195150.txt.gz"), "dpctl/show")
UPCALL = _section(os.path.join(RUN, "ovs-4-195150.txt.gz"), "upcall/show")


class FakeVswitchd:
    """A unixctl server on a temporary socket that answers like ovs-vswitchd 3.1 (several requests
    on one connection, replies sent in two pieces), counting the packets per request."""

    def __init__(self, path):
        self.path = path
        self.packets = 0
        self.requests = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.server.accept()
        buf, dec = "", json.JSONDecoder()
        while True:
            data = conn.recv(4096)
            if not data:
                return
            buf += data.decode()
            while buf.strip():
                try:
                    req, end = dec.raw_decode(buf.lstrip())
                except ValueError:
                    break
                buf = buf.lstrip()[end:]
                self.requests.append(req["method"])
                self.packets += 100
                reply = {"error": None, "id": req["id"], "result": self.text(req["method"])}
                if req["method"] == "coverage/show":
                    reply = {"error": "unknown command", "id": req["id"], "result": None}
                raw = json.dumps(reply).encode()
                conn.sendall(raw[:7])
                time.sleep(0.001)
                conn.sendall(raw[7:])

    def text(self, method):
        if method == "dpif-netdev/pmd-stats-show":
            return "main thread:\n  packets received: %d\n  emc hits: %d\n  avg. datapath passes per packet: 1.00\n" % (
                self.packets, self.packets)
        return DPCTL if method == "dpctl/show" else UPCALL


def _no_thread(*args, **kwargs):
    raise AssertionError("PhaseCounters started a thread")


def test_phase_counters_read_at_each_announced_change_over_one_connection(monkeypatch):
    """No thread of its own and no polling: the counters are read at start, within the call that
    announces a change (`changed`), and at stop."""
    with tempfile.TemporaryDirectory() as d:
        fake = FakeVswitchd(os.path.join(d, "ovs-vswitchd.%d.ctl" % os.getpid()))
        monkeypatch.setattr(oc.threading, "Thread", _no_thread)
        pc = oc.PhaseCounters(os.getpid(), lambda: "start", rundir=d)
        pc.changed("openmpi")                                  # before start: nothing to read
        assert fake.requests == []
        seen = []
        with pc:
            seen.append(len(fake.requests))
            for label in ("openmpi", "openmpi", "sdnmpi", "openmpi"):
                pc.changed(label)
                seen.append(len(fake.requests))                # read by the time the call returns
        pc.changed("sdnmpi")                                   # after stop: nothing
        out = pc.summary()
    # 5 reads (start, 3 changes, stop) of 4 commands each, all on one connection (an error reply
    # to one command does not end it); the same label again reads nothing
    assert seen == [4, 8, 8, 12, 16] and fake.requests.count("dpctl/show") == 5 and len(fake.requests) == 20
    phases = out["phases"]
    assert set(phases) == {"start", "openmpi", "sdnmpi"}
    assert phases["openmpi"]["reads"] == 2 and phases["sdnmpi"]["reads"] == 1
    # each read of pmd-stats-show came 400 "packets" (4 requests) after the one before
    assert phases["sdnmpi"]["pmd"] == {"packets received": 400, "emc hits": 400}
    assert phases["openmpi"]["pmd"]["packets received"] == 800
    assert "coverage" not in phases["openmpi"] and out["job"]["pmd"]["packets received"] == 1600
    assert out["error"] is None


def test_phase_counters_without_vswitchd_record_the_error():
    with tempfile.TemporaryDirectory() as d:
        with oc.PhaseCounters(os.getpid(), lambda: "x", rundir=d) as pc:
            pc.changed("y")
        out = pc.summary()
    assert "ovs-vswitchd" in out["error"] and out["phases"]["x"]["reads"] == 1 and out["phases"]["y"]["reads"] == 1
    assert "pmd" not in out["phases"]["x"]


def test_report_section_of_a_run_with_the_counters():
    import report_ovs
    with open(os.path.join(RUN, "..", "results.json")) as f:
        results = json.load(f)
    rows = report_ovs.rows(results["jobs"])
    assert [(job, impl) for job, impl, _f in rows] == [
        ("allreduce-dmodk-random-p16", "sdnmpi"), ("allreduce-dmodk-random-p16", "openmpi"),
        ("allreduce-dmodk-block-p16", "sdnmpi"), ("allreduce-dmodk-block-p16", "openmpi")]
    for job, impl, fig in rows:
        acc = next(j for j in results["jobs"] if j["name"] == job)["cpu"]["ovs_counters"]["phases"][impl]
        assert fig["upcalls"] == acc["pmd"].get("miss with success upcall", 0)
        assert abs(fig["upcalls_per_mib"] * fig["mib"] - fig["upcalls"]) < 1e-6
        assert fig["polls"] == acc["coverage"]["poll_create_node"] / float(acc["pmd"]["packets received"])
    lines = report_ovs.section(results)
    assert lines[1] == "## Open vSwitch's counters per implementation" and len(lines) == 7 + len(rows)
    assert report_ovs.section({"jobs": [{"name": "x", "cpu": {}}]}) == []
