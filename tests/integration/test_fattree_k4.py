"""The fabric on a 3-tier k=4 fat-tree (16 hosts, 20 switches) with a real ryu-manager."""
import pytest

from sdnmpi.controller import constants as C
from sdnmpi.mininet_topos import controller_proc
from sdnmpi.mininet_topos.fattree import FatTreeTopo

import ofdump
from conftest import running_fabric
from fabric_helpers import PING_TIMEOUT, wait_for_routes

K = 4
SWITCHES, LINKS, HOSTS = 5 * K * K // 4, K ** 3 // 2, K ** 3 // 4


@pytest.fixture(scope="module")
def fattree(tmp_path_factory):
    topo = FatTreeTopo(k=K, host_bw=40, fabric_bw=40)
    with running_fabric(topo, "dmodk", tmp_path_factory.mktemp("k4")) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SWITCHES, links=LINKS, hosts=HOSTS, timeout=120)
        wait_for_routes(fab, HOSTS)
        yield ctl, fab, topo


def test_k4_everything_discovered(fattree):
    ctl, fab, _topo = fattree
    topo = ctl.rest("/sdnmpi/topology")
    assert len(topo["switches"]) == SWITCHES and len(topo["links"]) == LINKS
    by_ip = {h["ip"]: h for h in topo["hosts"]}
    for host in fab.net.hosts:
        entry = by_ip[host.IP()]
        assert entry["mac"] == host.MAC()
        sw, port = host.defaultIntf().link.intf2.node, host.defaultIntf().link.intf2
        assert entry["dpid"] == sw.dpid and entry["port"] == sw.ports[port]


def test_k4_pingall_and_every_switch_routes_every_host(fattree):
    _ctl, fab, _topo = fattree
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    for sw in fab.net.switches:
        assert len(ofdump.routes(sw.name, C.PRIORITY_ROUTE)) == HOSTS


def test_k4_link_failure_keeps_every_pair_connected(fattree):
    ctl, fab, _topo = fattree
    edge = fab.net.get("h1").defaultIntf().link.intf2.node
    peers = [l.intf2.node if l.intf1.node is edge else l.intf1.node for l in fab.net.links
             if edge in (l.intf1.node, l.intf2.node)]
    agg = min((p for p in peers if p not in fab.net.hosts), key=lambda node: node.name)
    fab.net.configLinkStatus(edge.name, agg.name, "down")
    try:
        controller_proc.wait_for_links(ctl, LINKS - 1)
        assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    finally:
        fab.net.configLinkStatus(edge.name, agg.name, "up")
    controller_proc.wait_for_links(ctl, LINKS)
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
