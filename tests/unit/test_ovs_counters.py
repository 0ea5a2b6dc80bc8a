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


def _section(path, name):
    """One "== name" section of a rate_probe counters capture."""
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


def test_coverage_of_a_real_capture():
    cov = oc.coverage_totals(_section(os.path.join(PROBE, "counters-perm-sndbuf-r1-after.txt.gz"), "coverage"))
    assert cov["netdev_received"] == 14778923 and cov["xlate_actions"] == 1205174
    assert cov["dpif_flow_put"] == 4242


DPCTL = """netdev@ovs-netdev:
  lookups: hit:5021 missed:40 lost:2
  flows: 17
  port 0: ovs-netdev (tap)
  port 1: s1 (tap)
  port 2: s1-eth1
"""
UPCALL = """netdev@ovs-netdev:
  flows         : (current 17) (avg 12) (max 30) (limit 10000)
  dump duration : 2ms
  ufid enabled : true

  0: (keys 17)
"""


def test_dpctl_and_upcall_show():
    assert oc.dpctl_show(DPCTL) == {"hit": 5021, "missed": 40, "lost": 2, "flows": 17}
    two = DPCTL + DPCTL.replace("netdev@ovs-netdev", "system@ovs-system").replace("flows: 17", "flows: 3")
    assert oc.dpctl_show(two) == {"hit": 10042, "missed": 80, "lost": 4, "flows": 20}
    assert oc.dpctl_show("ovs-vswitchd: no datapaths") is None
    assert oc.upcall_show(UPCALL) == {"flows": 17, "flows_avg": 12, "flows_max": 30, "flow_limit": 10000,
                                      "dump_ms": 2}
    assert oc.upcall_show("") is None


def test_context_switches():
    status = "Name:\tovs-vswitchd\nState:\tR (running)\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n"
    assert oc.context_switches(status) == {"voluntary": 1234, "nonvoluntary": 56}


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


def test_phase_counters_read_at_each_phase_change_over_one_connection():
    with tempfile.TemporaryDirectory() as d:
        fake = FakeVswitchd(os.path.join(d, "ovs-vswitchd.%d.ctl" % os.getpid()))
        labels = iter(["start"] * 3 + ["openmpi"] * 5 + ["sdnmpi"] * 5 + ["openmpi"] * 1000)
        with oc.PhaseCounters(os.getpid(), lambda: next(labels), poll_s=0.002, rundir=d) as pc:
            time.sleep(0.2)
        out = pc.summary()
    # 5 reads (start, 3 changes, stop) of 4 commands each, all on one connection (an error reply
    # to one command does not end it)
    assert fake.requests.count("dpctl/show") == 5 and len(fake.requests) == 20
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
        with oc.PhaseCounters(os.getpid(), lambda: "x", poll_s=0.002, rundir=d) as pc:
            time.sleep(0.02)
        out = pc.summary()
    assert "ovs-vswitchd" in out["error"] and out["phases"]["x"]["reads"] == 1
    assert "pmd" not in out["phases"]["x"]
