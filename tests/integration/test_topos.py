"""Tests of sdnmpi.mininet_topos on a running fabric: FabricNet, management network, mpirun,
lldpd handling (the parts without Mininet are in tests/unit/test_topology_builders.py). Needs
root and Open vSwitch (started if needed); does not need the sdnmpi controller or lldpd: the
fabric runs in the test-only standalone mode and lldpd is replaced by a stub with the same
command line.

    /work/main/.venv/bin/python -m pytest tests/integration/test_topos.py -q
"""
import ipaddress
import json
import os
import random
import re
import socket
import subprocess
import threading
import time

import pytest

from sdnmpi.mininet_topos import controller_proc, procs
from sdnmpi.mininet_topos.fattree import FatTreeTopo, LeafSpineTopo
from sdnmpi.mininet_topos.mgmt import MgmtNetwork, link_names, overlapping_addresses
from sdnmpi.mininet_topos.net import FabricNet, ensure_ovs, ovs_bridges
from sdnmpi.mininet_topos.polling import poll_until

MPI_HELLO = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define N 16384
int main(int argc, char **argv) {
    static int buf[N], sum[N];
    int rank, size, i;
    const char *tag = getenv("SDNMPI_TEST_TAG");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < N; i++) buf[i] = 1;
    MPI_Allreduce(buf, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("hello rank %d of %d sum %d tag %s\n", rank, size, sum[N - 1], tag ? tag : "-");
    MPI_Finalize();
    return 0;
}
"""

LLDPD_STUB = """#!/bin/sh
# Stand-in for sdnmpi-lldpd: BINARY -f -I IFACE -i SECONDS. Records its arguments and whether
# IFACE exists in its namespace, then runs until SIGTERM (or ignores it if STUBBORN is set).
out="{out}/$3.args"
if [ -n "{stubborn}" ]; then trap '' TERM; else trap 'exit 0' TERM; fi
echo "$$ $*" > "$out.tmp"
ip -o link show "$3" >/dev/null 2>&1 && echo "iface-present" >> "$out.tmp"
mv "$out.tmp" "$out"
while :; do sleep 0.1; done
"""


# --- helpers ---------------------------------------------------------------------------------

def unique_prefix(tag):
    """Switch-name prefix unique to this test process (names stay <= 15 chars)."""
    return "%s%04x" % (tag, os.getpid() & 0xFFFF)


def free_subnet(second_octets=(28, 29)):
    """A random 172.{28,29}.X.0/24 that no address in the root namespace overlaps."""
    for _ in range(200):
        subnet = ipaddress.ip_network("172.%d.%d.0/24" % (random.choice(second_octets),
                                                          random.randint(1, 254)))
        if not overlapping_addresses(subnet):
            return str(subnet)
    raise RuntimeError("no free management subnet")


def alive(pid):
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_file(path, timeout=10.0):
    """Wait for a file to appear; return its text."""
    poll_until(lambda: os.path.exists(path), timeout, "%s to appear" % path, interval=0.05)
    with open(path) as f:
        return f.read()


def write_stub(path, out_dir, stubborn=False):
    """Write the lldpd stand-in script."""
    with open(path, "w") as f:
        f.write(LLDPD_STUB.format(out=out_dir, stubborn="1" if stubborn else ""))
    os.chmod(path, 0o755)
    return path


def port_rx_bytes(intf):
    """rx_bytes of a root-namespace interface."""
    with open("/sys/class/net/%s/statistics/rx_bytes" % intf) as f:
        return int(f.read())


# --- the emulated fabric (standalone mode: no controller needed) ---------------------------

@pytest.fixture(scope="module")
def fabric():
    """A loop-free standalone fabric: 1 spine, 2 leaves, 2 hosts per leaf, with mgmt network."""
    ensure_ovs()
    topo = LeafSpineTopo(spines=1, leaves=2, hosts_per_leaf=2, prefix=unique_prefix("ta"))
    net = FabricNet(topo, standalone=True, mgmt=True, mgmt_prefix=free_subnet())
    net.start()
    try:
        yield net
    finally:
        net.stop()


def test_fabric_started(fabric):
    assert set(fabric.bridge_names()) <= set(ovs_bridges())
    for br in fabric.bridge_names():
        fail_mode = subprocess.run(["ovs-vsctl", "get", "bridge", br, "fail_mode"],
                                   stdout=subprocess.PIPE, universal_newlines=True).stdout
        dp_type = subprocess.run(["ovs-vsctl", "get", "bridge", br, "datapath_type"],
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout
        assert fail_mode.strip() == "standalone" and dp_type.strip() == "netdev"
    h1 = fabric.hosts[0]
    assert h1.IP() == "10.0.0.1" and h1.MAC() == "00:00:00:00:00:01"
    assert "h1-mgmt" in h1.cmd("ip -o link show")
    # No pre-populated ARP entries
    assert fabric.hosts[0].cmd("ip neigh show dev h1-eth0").strip() == ""


def test_pingall(fabric):
    assert fabric.net.pingAll(timeout=2) == 0


def test_mgmt_tcp_roundtrip(fabric):
    """A host reaches a TCP server bound to the root-namespace management IP."""
    root_ip = fabric.mgmt.root_ip
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.settimeout(20)
    srv.bind((root_ip, 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    replies = []

    def serve():
        for _ in range(2):
            conn, addr = srv.accept()
            with conn:
                data = conn.recv(1024)
                conn.sendall(b"echo:" + data + b":" + addr[0].encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = ("import socket; s=socket.create_connection(('%s', %d), timeout=10); "
              "s.sendall(b'ping-%%s'); print(s.recv(1024).decode())")
    try:
        for host in (fabric.hosts[0], fabric.hosts[-1]):
            out = host.cmd("python3 -c \"%s\"" % (client % (root_ip, port) % host.name))
            replies.append(out.strip())
        thread.join(10)
    finally:
        srv.close()
    ips = fabric.mgmt_ips()
    assert fabric.mgmt.bridge.startswith("sdnmgmt") and len(fabric.mgmt.bridge) <= 15
    assert replies == ["echo:ping-h1:%s" % ips["h1"], "echo:ping-h4:%s" % ips["h4"]]


def test_mgmt_refuses_subnet_in_use(fabric):
    other = MgmtNetwork([], subnet=fabric.mgmt.subnet)
    with pytest.raises(RuntimeError, match="overlaps"):
        other.start()
    assert other.bridge not in link_names()


@pytest.fixture(scope="module")
def mpi_hello(tmp_path_factory):
    """An MPI program compiled with mpicc."""
    work = tmp_path_factory.mktemp("mpi")
    src = work / "hello.c"
    src.write_text(MPI_HELLO)
    subprocess.run(["mpicc", "-O1", "-o", str(work / "hello"), str(src)], check=True)
    return str(work / "hello")


def test_mpirun_hello(fabric, mpi_hello):
    """5 ranks (h1 with 2 slots) over the fabric; Allreduce data crosses the switch ports."""
    leaf_ports = ["%s-eth%d" % (leaf, p) for leaf in fabric.topo.leaf_names for p in (1, 2)]
    before = {intf: port_rx_bytes(intf) for intf in leaf_ports}
    rc, out = fabric.mpirun(["h1", "h2", "h3", "h4"], [mpi_hello], slots={"h1": 2},
                            env={"SDNMPI_TEST_TAG": "xyz"}, timeout=90)
    assert rc == 0, out
    for rank in range(5):
        assert "hello rank %d of 5 sum 5 tag xyz" % rank in out, out
    grown = {intf: port_rx_bytes(intf) - before[intf] for intf in leaf_ports}
    # every host sent at least part of its 64 KB vector into its leaf (no shared memory)
    assert all(delta > 16384 for delta in grown.values()), grown


def test_mpirun_np_subset(fabric, mpi_hello):
    rc, out = fabric.mpirun(["h2", "h4"], [mpi_hello], np=2, timeout=90)
    assert rc == 0, out
    assert "hello rank 0 of 2 sum 2" in out and "hello rank 1 of 2 sum 2" in out


def test_mpirun_timeout_kills_the_whole_job_and_names_the_survivors(fabric):
    """A job that never ends (its ranks ignore SIGTERM): run() returns None after the timeout,
    says which processes were still alive and where, and leaves none of them behind."""
    tag = "hang-%d" % os.getpid()
    rc, out = fabric.mpirun(["h1", "h2"], ["sh", "-c", "trap '' TERM; sleep 600"],
                            env={"SDNMPI_TEST_TAG": tag}, timeout=5)
    assert rc is None and "mpirun timed out after 5 s; still running were:" in out, out
    survivors = out.split("still running were:", 1)[1]
    assert re.search(r"pid \d+ \S+ wchan=\S+ h1 mpirun ", survivors), survivors
    assert all(re.search(r"h%d sleep 600" % n, survivors) for n in (1, 2)), survivors
    assert procs.pids_with_environ(tag) == []


def test_second_fabric_with_same_names_is_refused(fabric):
    """Starting a fabric whose switch names are taken must fail without touching the first."""
    clash = FabricNet(LeafSpineTopo(spines=1, leaves=2, hosts_per_leaf=2,
                                    prefix=fabric.topo.prefix), standalone=True, mgmt=False)
    with pytest.raises(RuntimeError, match="already in use"):
        clash.start()
    clash.stop()
    assert set(fabric.bridge_names()) <= set(ovs_bridges())
    assert fabric.net.pingAll(timeout=2) == 0


def test_lldpd_start_stop(fabric, tmp_path):
    stub = write_stub(str(tmp_path / "lldpd-stub"), str(tmp_path))
    started = fabric.start_lldpd(stub, interval=1.0)
    assert len(started) == 4
    for host in fabric.hosts:
        text = wait_file(str(tmp_path / ("%s-eth0.args" % host.name)))
        pid, args = text.splitlines()[0].split(" ", 1)
        assert args == "-f -I %s-eth0 -i 1" % host.name
        assert "iface-present" in text            # runs in the host's namespace
        assert int(pid) in [p.pid for p in started]
    fabric.stop_lldpd()
    assert not any(alive(p.pid) for p in started)
    assert fabric.lldpd_processes == []


def test_lldpd_sigkill_fallback(fabric, tmp_path):
    stub = write_stub(str(tmp_path / "lldpd-stubborn"), str(tmp_path), stubborn=True)
    started = fabric.start_lldpd(stub, interval=0.5)
    wait_file(str(tmp_path / "h4-eth0.args"))
    assert "-i 0.5" in wait_file(str(tmp_path / "h1-eth0.args"))
    t0 = time.monotonic()
    fabric.stop_lldpd(timeout=1.0)
    assert time.monotonic() - t0 < 5
    assert not any(alive(p.pid) for p in started)


def ovs_interface_ofports():
    """OVS interface name -> OpenFlow port number."""
    out = subprocess.run(["ovs-vsctl", "--format=json", "--columns=name,ofport", "list",
                          "Interface"], stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    return {row[0]: row[1] for row in json.loads(out)["data"]}


def test_fattree_secure_mode_without_controller():
    """k=4 fat-tree in the product mode: secure, OpenFlow13, remote controller, no forwarding
    without it; OpenFlow port numbers follow the topology."""
    topo = FatTreeTopo(k=4, prefix=unique_prefix("tc"))
    port = controller_proc.free_port()   # nobody listens there: the fabric must find no controller
    net = FabricNet(topo, controller_port=port, mgmt=False)
    try:
        net.start()
        assert net.mgmt is None and net.mgmt_ips() == {}
        assert set(topo.switch_names) <= set(ovs_bridges())
        core = topo.core_names[0]
        settings = subprocess.run(["ovs-vsctl", "get", "bridge", core, "fail_mode", "protocols",
                                   "other_config:datapath-id"], stdout=subprocess.PIPE,
                                  universal_newlines=True, check=True).stdout.split()
        assert settings == ["secure", "[OpenFlow13]", '"0000000000000301"']
        target = subprocess.run(["ovs-vsctl", "get-controller", core], stdout=subprocess.PIPE,
                                universal_newlines=True, check=True).stdout.strip()
        assert target == "tcp:127.0.0.1:%d" % port
        ofports = ovs_interface_ofports()
        for node1, node2, info in topo.links(withInfo=True):
            for node, num in ((node1, info["port1"]), (node2, info["port2"])):
                if topo.isSwitch(node):
                    assert ofports["%s-eth%d" % (node, num)] == num
        h1 = net.hosts[0]
        assert "100% packet loss" in h1.cmd("ping -c1 -W1 10.0.0.16")
        assert h1.cmd("ip neigh show 10.0.0.16 dev h1-eth0").split()[-1:] != ["REACHABLE"]
    finally:
        net.stop()
    assert not set(topo.switch_names) & set(ovs_bridges())
    assert not set(net.interface_names()) & link_names()


def test_stop_removes_everything(mpi_hello, tmp_path):
    """A second fabric: after stop() (twice) none of its bridges, veths or processes remain."""
    topo = LeafSpineTopo(spines=1, leaves=2, hosts_per_leaf=1, prefix=unique_prefix("tb"))
    net = FabricNet(topo, standalone=True, mgmt=True, mgmt_prefix=free_subnet())
    try:
        net.start()
        stub = write_stub(str(tmp_path / "lldpd-stub"), str(tmp_path))
        lldpd = net.start_lldpd(stub)
        wait_file(str(tmp_path / "h2-eth0.args"))
        rc, out = net.mpirun(["h1", "h2"], [mpi_hello], timeout=90)
        assert rc == 0, out
        bridges, intfs = net.bridge_names(), net.interface_names()
        mgmt_bridge, tmpdir = net.mgmt.bridge, net.tmpdir
        node_pids = [n.pid for n in net.net.hosts + net.net.switches]
        assert set(bridges) <= set(ovs_bridges())
        assert mgmt_bridge in link_names() and set(intfs) <= link_names()
        assert len(intfs) == 3 + 6 + 1 + 2          # bridges, switch ports, mgmt bridge+veths
    finally:
        net.stop()
    net.stop()                                       # idempotent
    assert not set(bridges) & set(ovs_bridges())
    assert not set(intfs) & link_names()
    assert not any(alive(pid) for pid in node_pids + [p.pid for p in lldpd])
    assert not os.path.exists(tmpdir)
    assert procs.pids_with_environ(tmpdir) == []
