"""controller/topology.py, directly and as discovered by the controller on a simulated fabric."""
import logging
import re

import networkx as nx
import pytest

from sdnmpi.controller import sparselog
from sdnmpi.controller import topology as T
from sdnmpi.primitives import fabric, fattree

from conftest import lldp_host_frame, port_hw_addr

A, B, S = 0x201, 0x202, 0x101   # two leaves and a spine
HOST1, HOST2, HOST3 = "00:00:00:00:00:01", "00:00:00:00:00:02", "00:00:00:00:00:03"


def ports(dpid, n):
    return {p: port_hw_addr(dpid, p) for p in range(1, n + 1)}


@pytest.fixture
def topo():
    """Leaves A and B (ports 1-2 hosts, 3 uplink) and spine S (port 1 to A, 2 to B), links known."""
    t = T.Topology()
    t.add_switch(A, ports(A, 3))
    t.add_switch(B, ports(B, 3))
    t.add_switch(S, ports(S, 2))
    now = 10.0
    assert t.saw_probe((A, 3), (S, 1), now)
    assert t.saw_probe((S, 1), (A, 3), now)
    assert t.saw_probe((B, 3), (S, 2), now)
    assert t.saw_probe((S, 2), (B, 3), now)
    return t


# ---------------------------------------------------------------------------------------------
# switches, ports and links
def test_reserved_ports_are_not_switch_ports():
    t = T.Topology()
    t.add_switch(A, {1: "x", 2: "y", 0xFFFFFFFE: "local", 0xFFFFFFFD: "controller", 0xFFFFFF00: "max"})
    assert t.ports(A) == [1, 2, 0xFFFFFF00]
    assert t.port_up(A, 0xFFFFFFFE, "z") is False
    assert t.ports(A) == [1, 2, 0xFFFFFF00]
    assert t.port_up(A, 3, "w") is False and t.ports(A) == [1, 2, 3, 0xFFFFFF00]
    assert t.port_up(0x999, 1, "w") is False and 0x999 not in t.switches


def test_links_from_probes(topo):
    assert set(topo.links) == {(A, 3), (S, 1), (B, 3), (S, 2)}
    assert (topo.links[(A, 3)].dpid, topo.links[(A, 3)].port) == (S, 1)
    # the same probe again is no change, but refreshes the link
    assert topo.saw_probe((A, 3), (S, 1), 20.0) is False
    assert topo.links[(A, 3)].seen == 20.0


def test_probe_from_or_to_unknown_switch_is_ignored(topo):
    assert topo.saw_probe((0x999, 1), (A, 1), 10.0) is False
    assert topo.saw_probe((A, 1), (0x999, 1), 10.0) is False
    assert (A, 1) not in topo.links and (0x999, 1) not in topo.links


def test_undirected_links_each_once(topo):
    assert topo.undirected_links() == [((S, 1), (A, 3)), ((S, 2), (B, 3))]
    # a link seen in one direction only is listed too
    topo.add_switch(0x102, ports(0x102, 2))
    topo.saw_probe((A, 2), (0x102, 1), 11.0)
    assert ((0x102, 1), (A, 2)) in topo.undirected_links()
    assert len(topo.undirected_links()) == 3


def test_edge_and_fabric_ports(topo):
    assert topo.fabric_ports() == {(A, 3), (S, 1), (B, 3), (S, 2)}
    assert topo.edge_ports() == [(A, 1), (A, 2), (B, 1), (B, 2)]
    assert topo.is_fabric_port(S, 1) and not topo.is_fabric_port(A, 1)
    # one direction of a link is enough to make both ends fabric ports
    t = T.Topology()
    t.add_switch(A, ports(A, 2))
    t.add_switch(B, ports(B, 2))
    t.saw_probe((A, 2), (B, 2), 1.0)
    assert t.is_fabric_port(B, 2) and t.edge_ports() == [(A, 1), (B, 1)]


def test_port_down_removes_links_in_both_directions_and_hosts(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    assert topo.port_down(S, 1) is True
    assert set(topo.links) == {(B, 3), (S, 2)}
    assert S in topo.switches and 1 not in topo.switches[S]
    assert topo.port_down(A, 1) is True
    assert HOST1 not in topo.hosts
    assert topo.port_down(A, 2) is False  # nothing was there


def test_remove_switch_removes_its_links_and_hosts(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    topo.learn_host(HOST2, "10.0.0.2", B, 1, T.SOURCE_ARP, 10.0)
    assert topo.remove_switch(A) is True
    assert A not in topo.switches and set(topo.links) == {(B, 3), (S, 2)}
    assert set(topo.hosts) == {HOST2}
    assert topo.remove_switch(A) is False


def test_switch_reconnect_forgets_its_old_state(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    topo.add_switch(A, ports(A, 3))
    assert HOST1 not in topo.hosts and (A, 3) not in topo.links and (S, 1) not in topo.links


def test_link_timeout(topo):
    link_timeout = 3.5
    assert topo.expire(13.5, link_timeout) is False   # exactly at the timeout: kept
    topo.saw_probe((B, 3), (S, 2), 12.0)
    topo.saw_probe((S, 2), (B, 3), 12.0)
    assert topo.expire(13.6, link_timeout) is True
    assert set(topo.links) == {(B, 3), (S, 2)}
    assert topo.expire(13.7, link_timeout) is False
    assert topo.expire(15.6, link_timeout) is True and topo.links == {}


def test_moved_cable_replaces_the_link(topo):
    topo.add_switch(0x102, ports(0x102, 2))
    assert topo.saw_probe((A, 3), (0x102, 1), 11.0) is True
    assert (topo.links[(A, 3)].dpid, topo.links[(A, 3)].port) == (0x102, 1)


# ---------------------------------------------------------------------------------------------
# hosts
def test_learn_host(topo):
    assert topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0) is True
    host = topo.hosts[HOST1]
    assert (host.ip, host.dpid, host.port, host.source, host.expires) == ("10.0.0.1", A, 1, "arp", None)
    assert topo.host_by_ip("10.0.0.1") is host and topo.host_by_ip("10.0.0.9") is None
    # the same again: nothing changes
    assert topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_IPV4, 11.0) is False


def test_host_without_ip_then_ip(topo):
    assert topo.learn_host(HOST1, None, A, 1, T.SOURCE_LLDP, 10.0, name="n1", ttl=120) is True
    assert topo.hosts[HOST1].ip is None
    assert topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 11.0) is True
    assert topo.hosts[HOST1].ip == "10.0.0.1" and topo.hosts[HOST1].name == "n1"


@pytest.mark.parametrize("source", [T.SOURCE_LLDP, T.SOURCE_ARP, T.SOURCE_IPV4])
def test_a_confirmed_host_moves_only_after_its_port_went_down(topo, source):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    assert topo.learn_host(HOST1, "10.0.0.1", B, 2, source, 11.0, ttl=120) is False   # refused
    assert topo.learn_host(HOST1, None, B, 2, source, 11.0, ttl=120) is False
    assert (topo.hosts[HOST1].dpid, topo.hosts[HOST1].port) == (A, 1) and topo.refused == 2
    assert topo.port_down(A, 1) is True and HOST1 not in topo.hosts
    assert topo.learn_host(HOST1, "10.0.0.1", B, 2, source, 12.0, ttl=120) is True     # re-cabled
    assert (topo.hosts[HOST1].dpid, topo.hosts[HOST1].port) == (B, 2) and len(topo.hosts) == 1


@pytest.mark.parametrize("source", [T.SOURCE_LLDP, T.SOURCE_ARP, T.SOURCE_IPV4])
def test_a_confirmed_hosts_ip_is_not_taken_from_another_port(topo, source):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    topo.learn_host(HOST2, "10.0.0.2", B, 1, T.SOURCE_ARP, 10.0)
    assert topo.learn_host(HOST2, "10.0.0.1", B, 1, source, 11.0, ttl=120) is False    # HOST2 claims HOST1's IP
    assert topo.learn_host(HOST3, "10.0.0.1", B, 2, source, 11.0, ttl=120) is False    # a new MAC does
    assert topo.host_by_ip("10.0.0.1").mac == HOST1 and topo.hosts[HOST2].ip == "10.0.0.2"
    assert HOST3 not in topo.hosts and topo.refused == 2


def test_a_flood_of_refused_claims_is_logged_sparsely(topo, caplog):
    """A host at another port claiming HOST1's MAC (and a new MAC HOST1's IP) on every frame: each
    claim is refused and counted, but only sparselog's few are logged."""
    caplog.set_level(logging.WARNING, logger="sdnmpi.controller.topology")
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    for i in range(500):
        assert topo.learn_host(HOST1, "10.0.0.1", B, 1, T.SOURCE_ARP, 11.0) is False
        assert topo.learn_host(HOST2, "10.0.0.1", B, 1, T.SOURCE_IPV4, 11.0) is False
    assert topo.refused == 1000 and HOST2 not in topo.hosts
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused (")]
    assert len(refused) == sum(sparselog.due(n) for n in range(1, 1001)) == 109
    assert refused[0] == "refused (1 so far): host %s is at 0000000000000201:1, not at " \
                         "0000000000000202:1 (arp)" % HOST1
    assert refused[-1].startswith("refused (1000 so far): IP 10.0.0.1 belongs to %s" % HOST1)


def test_ip_reassignment_on_the_same_port_newest_claim_wins(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    assert topo.learn_host(HOST2, "10.0.0.1", A, 1, T.SOURCE_ARP, 11.0) is True      # a new NIC, same port
    assert topo.hosts[HOST1].ip is None and topo.hosts[HOST2].ip == "10.0.0.1"
    assert topo.host_by_ip("10.0.0.1").mac == HOST2
    # a host's own new address replaces its old one
    assert topo.learn_host(HOST2, "10.0.0.2", A, 1, T.SOURCE_IPV4, 12.0) is True
    assert topo.host_by_ip("10.0.0.1") is None and topo.host_by_ip("10.0.0.2").mac == HOST2
    assert topo.refused == 0


def test_lldp_advertised_addresses_are_kept(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_LLDP, 10.0, ttl=120, advertised=("10.0.0.1", "172.30.0.1"))
    assert topo.hosts[HOST1].advertised == {"10.0.0.1", "172.30.0.1"}
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 11.0)           # ARP does not clear them
    assert topo.hosts[HOST1].advertised == {"10.0.0.1", "172.30.0.1"}
    # a refused claim from another port adds nothing
    topo.learn_host(HOST1, "10.0.0.1", B, 1, T.SOURCE_LLDP, 12.0, ttl=120, advertised=("172.30.0.9",))
    assert topo.hosts[HOST1].advertised == {"10.0.0.1", "172.30.0.1"}


def test_lldp_management_address_does_not_override_a_data_plane_address(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_ARP, 10.0)
    assert topo.learn_host(HOST1, "192.168.0.1", A, 1, T.SOURCE_LLDP, 11.0, ttl=120) is False
    assert topo.hosts[HOST1].ip == "10.0.0.1"
    # ... but an LLDP-learned address follows later LLDP adverts
    topo.learn_host(HOST2, "10.0.0.2", B, 1, T.SOURCE_LLDP, 10.0, ttl=120)
    assert topo.learn_host(HOST2, "10.0.0.3", B, 1, T.SOURCE_LLDP, 11.0, ttl=120) is True
    assert topo.hosts[HOST2].ip == "10.0.0.3"


def test_lldp_ttl_expiry(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_LLDP, 10.0, ttl=4)
    topo.learn_host(HOST2, "10.0.0.2", B, 1, T.SOURCE_ARP, 10.0)
    assert topo.hosts[HOST1].expires == 14.0
    assert topo.expire(14.0, 1e9) is False and HOST1 in topo.hosts
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_LLDP, 12.0, ttl=4)   # refreshed
    assert topo.expire(15.0, 1e9) is False
    assert topo.expire(16.5, 1e9) is True
    assert set(topo.hosts) == {HOST2}                                    # ARP-learned hosts do not expire
    assert topo.expire(1e6, 1e9) is False and set(topo.hosts) == {HOST2}


def test_hosts_are_never_learned_on_fabric_ports(topo):
    for source in (T.SOURCE_LLDP, T.SOURCE_ARP, T.SOURCE_IPV4):
        assert topo.learn_host(HOST1, "10.0.0.1", S, 1, source, 10.0, ttl=120) is False
        assert topo.learn_host(HOST1, "10.0.0.1", A, 3, source, 10.0, ttl=120) is False
    assert topo.hosts == {}
    assert topo.learn_host(HOST1, "10.0.0.1", 0x999, 1, T.SOURCE_ARP, 10.0) is False  # unknown switch
    assert topo.hosts == {}


def test_host_port_that_turns_out_to_be_a_link(topo):
    topo.add_switch(0x102, ports(0x102, 2))
    topo.learn_host(HOST1, "10.0.0.1", A, 2, T.SOURCE_ARP, 10.0)
    topo.learn_host(HOST2, "10.0.0.2", 0x102, 1, T.SOURCE_ARP, 10.0)
    assert topo.saw_probe((A, 2), (0x102, 1), 11.0) is True
    assert topo.hosts == {}   # both ends of the new link had a (wrong) host


# ---------------------------------------------------------------------------------------------
# views
def test_graph_follows_fabric_conventions(topo):
    topo.learn_host(HOST1, "10.0.0.1", A, 1, T.SOURCE_LLDP, 10.0, name="h1", ttl=120)
    topo.learn_host(HOST2, None, B, 2, T.SOURCE_LLDP, 10.0, ttl=120)
    g = topo.graph()
    expected = fabric.new_graph()
    for dpid in (A, B, S):
        fabric.add_switch(expected, dpid)
    fabric.add_link(expected, A, 3, S, 1)
    fabric.add_link(expected, B, 3, S, 2)
    fabric.add_host(expected, HOST1, "10.0.0.1", A, 1, "h1")
    fabric.add_host(expected, HOST2, None, B, 2, None)
    assert_same_graph(g, expected)
    assert fabric.hosts(g) == [HOST1]   # no IP: not a destination
    assert fabric.attachment(g, HOST1) == (A, 1)
    assert fabric.port_towards(g, S, B) == 2


def assert_same_graph(g, expected):
    assert dict(g.nodes(data=True)) == dict(expected.nodes(data=True))
    edges = {frozenset((u, v)): d for u, v, d in g.edges(data=True)}
    assert edges == {frozenset((u, v)): d for u, v, d in expected.edges(data=True)}
    assert nx.utils.graphs_equal(g, expected)


@pytest.mark.parametrize("graph", [fattree.leaf_spine(2, 4, 2), fattree.leaf_spine(3, 4, 4), fattree.kary(4)],
                         ids=["leafspine-2x4x2", "leafspine-3x4x4", "kary4"])
def test_discovered_graph_is_the_synthetic_fabric(make_fabric, graph):
    sim = make_fabric(graph)
    sim.discover()
    topo = sim.core.topology
    assert_same_graph(topo.graph(), graph)
    assert topo.undirected_links() == sim.links()
    assert sorted(topo.fabric_ports()) == sim.fabric_ports()
    assert topo.edge_ports() == sim.edge_ports()


def test_to_json_schema(topo):
    topo.learn_host(HOST2, "10.0.0.2", B, 1, T.SOURCE_ARP, 10.0)
    topo.learn_host(HOST1, "10.0.0.1", A, 2, T.SOURCE_LLDP, 10.0, name="h1", ttl=120)
    doc = topo.to_json()
    assert set(doc) == {"switches", "links", "hosts"}
    hexdpid = re.compile(r"^[0-9a-f]{16}$")
    assert [s["dpid"] for s in doc["switches"]] == ["%016x" % d for d in sorted((A, B, S))]
    for sw in doc["switches"]:
        assert set(sw) == {"dpid", "ports"} and hexdpid.match(sw["dpid"])
        assert sw["ports"] == sorted(sw["ports"]) and all(isinstance(p, int) for p in sw["ports"])
    assert doc["links"] == [
        {"src": {"dpid": "%016x" % S, "port": 1}, "dst": {"dpid": "%016x" % A, "port": 3}},
        {"src": {"dpid": "%016x" % S, "port": 2}, "dst": {"dpid": "%016x" % B, "port": 3}},
    ]
    assert doc["hosts"] == [
        {"mac": HOST1, "ip": "10.0.0.1", "name": "h1", "dpid": "%016x" % A, "port": 2, "source": "lldp"},
        {"mac": HOST2, "ip": "10.0.0.2", "name": None, "dpid": "%016x" % B, "port": 1, "source": "arp"},
    ]


# ---------------------------------------------------------------------------------------------
# the same rules, driven by LLDP through the controller
def test_lldp_ttl_zero_removes_the_host_only_from_its_own_port(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 2))
    sim.discover()
    core, h1 = sim.core, sim.hosts()[0]
    dpid, port = sim.host_port[h1]
    other = sim.dps[sim.host_port[sim.hosts()[1]][0]]
    core.routes_dirty = False
    # a shutdown advert for h1 heard somewhere else is ignored
    core.packet_in(other, sim.host_port[sim.hosts()[1]][1], lldp_host_frame(h1, sim.host_ip[h1], "x", ttl=0), sim.now)
    assert h1 in core.topology.hosts and not core.routes_dirty
    core.packet_in(sim.dps[dpid], port, lldp_host_frame(h1, sim.host_ip[h1], "x", ttl=0), sim.now)
    assert h1 not in core.topology.hosts and core.routes_dirty
    # and a shutdown advert from an unknown host is harmless
    core.routes_dirty = False
    core.packet_in(sim.dps[dpid], port, lldp_host_frame("00:00:00:00:99:99", "10.9.9.9", "x", ttl=0), sim.now)
    assert "00:00:00:00:99:99" not in core.topology.hosts and not core.routes_dirty


def test_lldp_ttl_expiry_through_the_controller(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1), host_hold=0)
    sim.connect_all()
    sim.probe_round()
    h1, h2 = sim.hosts()
    sim.advertise(h1, ttl=3)
    sim.advertise(h2, ttl=30)
    assert set(sim.core.topology.hosts) == {h1, h2}
    for _ in range(3):
        sim.tick(1.0)
    assert set(sim.core.topology.hosts) == {h1, h2}
    sim.tick(1.0)   # h1's agent has been silent for 4 s > TTL 3
    assert set(sim.core.topology.hosts) == {h2}
    assert sim.core.topology.undirected_links() == sim.links()   # probes kept the links alive meanwhile


def test_host_lldp_on_a_fabric_port_is_not_learned(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1))
    sim.discover()
    (dpid, port) = sim.fabric_ports()[0]
    sim.core.packet_in(sim.dps[dpid], port, lldp_host_frame("00:00:00:00:77:77", "10.7.7.7", "x"), sim.now)
    assert "00:00:00:00:77:77" not in sim.core.topology.hosts


def test_host_hold_outlasts_a_short_ttl(make_fabric):
    """A controller slowed down by load may handle frames late: hosts are held for host_hold."""
    sim = make_fabric(fattree.leaf_spine(2, 2, 1), host_hold=10)
    sim.connect_all()
    sim.probe_round()
    h1, _h2 = sim.hosts()
    sim.advertise(h1, ttl=3)
    for _ in range(9):
        sim.tick(1.0)
    assert h1 in sim.core.topology.hosts          # TTL 3 passed long ago, the hold has not
    for _ in range(2):
        sim.tick(1.0)
    assert h1 not in sim.core.topology.hosts
