"""sdnmpi.mininet_topos without Mininet running: the topologies' structure, the address scheme,
and the controller-process helpers against a fake controller (a tiny HTTP server, `sleep` standing
in for ryu-manager). tests/integration/test_topos.py runs the fabric itself."""
import http.server
import json
import signal
import socket
import subprocess
import threading

import pytest

from sdnmpi.mininet_topos import controller_proc
from sdnmpi.mininet_topos.fattree import FatTreeTopo, LeafSpineTopo, host_ip, host_mac


# --- pure topology tests -----------------------------------------------------------------------

def test_leafspine_structure():
    topo = LeafSpineTopo(spines=2, leaves=4, hosts_per_leaf=2)
    assert topo.host_names == ["h%d" % i for i in range(1, 9)]
    assert topo.spine_names == ["s1", "s2"] and topo.leaf_names == ["l1", "l2", "l3", "l4"]
    assert sorted(topo.switches()) == sorted(topo.switch_names)
    assert topo.expected_switch_links == 8
    assert len(topo.links()) == 8 + 8
    assert topo.dpids["s2"] == "0000000000000102" and topo.dpids["l3"] == "0000000000000203"
    assert topo.nodeInfo("l4")["dpid"] == "0000000000000204"
    # leaf: hosts on 1..H, spine j on H+j; spine: port i to leaf i
    assert topo.port("h3", "l2") == (0, 1) and topo.port("h4", "l2") == (0, 2)
    assert topo.port("l3", "s2") == (4, 3) and topo.port("l1", "s1") == (3, 1)
    info = topo.linkInfo("l1", "s1")
    assert info["bw"] == 20 and info["txo"] is False and info["rxo"] is False
    assert topo.linkInfo("h1", "l1")["bw"] == 40
    assert topo.nodeInfo("h8") == {"ip": "10.0.0.8/8", "mac": "00:00:00:00:00:08"}


def test_leafspine_unlimited_and_prefix():
    topo = LeafSpineTopo(spines=1, leaves=2, hosts_per_leaf=1, host_bw=None, fabric_bw=None,
                         prefix="x9")
    assert topo.switch_names == ["x9s1", "x9l1", "x9l2"]
    assert "bw" not in topo.linkInfo("x9l1", "x9s1")
    assert "bw" not in topo.linkInfo("h1", "x9l1")
    with pytest.raises(ValueError, match="longer than 15"):
        LeafSpineTopo(spines=1, leaves=1, hosts_per_leaf=1, prefix="abcdefghi")


def test_fattree_structure():
    topo = FatTreeTopo(k=4)
    assert len(topo.host_names) == 16
    assert (len(topo.core_names), len(topo.agg_names), len(topo.edge_names)) == (4, 8, 8)
    assert len(topo.switches()) == 20
    assert topo.expected_switch_links == 32
    assert len(topo.links()) == 32 + 16
    assert len(set(topo.dpids.values())) == 20
    assert topo.dpids["c1"] == "0000000000000301" and topo.dpids["e8"] == "0000000000000108"
    # edge: hosts 1..2, aggs 3..4; agg: edges 1..2, cores 3..4; core port p -> pod p
    assert topo.port("h1", "e1") == (0, 1) and topo.port("h16", "e8") == (0, 2)
    assert topo.port("e2", "a1") == (3, 2) and topo.port("e2", "a2") == (4, 2)
    assert topo.port("a1", "c1") == (3, 1) and topo.port("a2", "c4") == (4, 1)
    assert topo.port("a8", "c3") == (3, 4) and topo.port("a5", "c2") == (4, 3)
    ports = {}
    for node1, node2, info in topo.links(withInfo=True):
        ports.setdefault(node1, []).append(info["port1"])
        ports.setdefault(node2, []).append(info["port2"])
    for sw in topo.switch_names:
        assert sorted(ports[sw]) == [1, 2, 3, 4]          # k ports everywhere, numbered 1..k


def test_fattree_k6_counts():
    topo = FatTreeTopo(k=6, host_bw=None)
    assert len(topo.host_names) == 54 and len(topo.switch_names) == 45
    assert topo.expected_switch_links == 6 ** 3 // 2


def test_ip_mac_scheme():
    assert host_ip(1) == "10.0.0.1" and host_ip(254) == "10.0.0.254"
    assert host_ip(256) == "10.0.1.0" and host_ip(300) == "10.0.1.44"
    assert host_mac(1) == "00:00:00:00:00:01" and host_mac(300) == "00:00:00:00:01:2c"
    topo = LeafSpineTopo(spines=2, leaves=20, hosts_per_leaf=16)
    ips = topo.host_ips()
    assert len(ips) == 320 and len(set(ips.values())) == 320
    assert ips["h300"] == "10.0.1.44"


# --- controller-process helpers without a controller ----------------------------------------

class _FakeCtl:
    """Stands in for ControllerProcess: returns queued topology answers."""

    def __init__(self, answers):
        self.answers = list(answers)

    def rest(self, _path):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _topo_json(switches, links, hosts):
    return {"switches": [{"dpid": "%016x" % (0x201 + i), "ports": [1, 2, 3]}
                         for i in range(switches)],
            "links": [{"src": {"dpid": "0000000000000201", "port": 3},
                       "dst": {"dpid": "0000000000000101", "port": 1}}] * links,
            "hosts": [{"mac": host_mac(i + 1), "ip": host_ip(i + 1), "name": "h%d" % (i + 1),
                       "dpid": "0000000000000201", "port": i + 1, "source": "lldp"}
                      for i in range(hosts)]}


def test_wait_for_topology_and_format():
    ctl = _FakeCtl([_topo_json(1, 0, 0), _topo_json(3, 1, 0), _topo_json(3, 2, 2)])
    found = controller_proc.wait_for_topology(ctl, 3, 2, 2, timeout=5, interval=0.01)
    text = controller_proc.format_topology(found)
    assert "Switches (3)" in text and "Links (2)" in text and "Hosts (2)" in text
    assert "0000000000000201:3 <-> 0000000000000101:1" in text
    assert "10.0.0.2" in text and "00:00:00:00:00:02" in text and "0000000000000201:2" in text
    with pytest.raises(TimeoutError, match="switches=3 links=2 hosts=2"):
        controller_proc.wait_for_topology(_FakeCtl([found]), 3, 2, 5, timeout=0.2,
                                          interval=0.01)


def test_controller_process_rest_and_stop(tmp_path):
    """ControllerProcess against a tiny HTTP server, with `sleep` standing in for ryu."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = json.dumps({"path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    log = tmp_path / "ctl.log"
    log.write_text("controller says hi\n")
    popen = subprocess.Popen(["sleep", "60"], start_new_session=True)
    ctl = controller_proc.ControllerProcess(popen, 0, server.server_address[1], str(log), False)
    try:
        assert ctl.wait_rest_ready(timeout=5) == {"path": "/sdnmpi/stats"}
        assert ctl.rest("/sdnmpi/ports") == {"path": "/sdnmpi/ports"}
        assert "controller says hi" in ctl.log_text()
    finally:
        ctl.stop(timeout=5)
        ctl.stop(timeout=5)
        server.shutdown()
        server.server_close()
    assert popen.returncode == -signal.SIGTERM
    assert controller_proc.ryu_manager_path().endswith("/bin/ryu-manager")


def test_free_port_is_below_the_ephemeral_range_bindable_and_never_repeated():
    with open(controller_proc.EPHEMERAL_RANGE) as ports:
        first_ephemeral = int(ports.read().split()[0])
    got = [controller_proc.free_port() for _ in range(50)]
    assert len(set(got)) == 50
    assert all(controller_proc.SERVER_PORTS_FROM <= p < first_ephemeral for p in got)
    for port in got[:5]:
        with socket.socket() as sock:   # the server that asked for it can bind it
            sock.bind(("0.0.0.0", port))
            sock.listen(1)
