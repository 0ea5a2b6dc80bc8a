"""controller/core.py against fake datapaths and simulated switches: base flows, discovery, default
routes for every policy, failures, IPv4 learning, robustness against garbage, and the Ryu app's
error wrapper."""
import collections
import logging
import math
import random
import struct
import types

import networkx as nx
import pytest
from ryu.lib.packet import lldp as ryu_lldp
from ryu.lib.packet.packet import Packet as RyuPacket
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import app, lldp, ofmsgs, options
from sdnmpi.controller import constants as C
from sdnmpi.controller.core import Core
from sdnmpi.primitives import DEFAULT_ROUTING, fabric, fattree

from conftest import (FakeDatapath, SwitchError, SwitchSim, arp_frame, ip_int, ipv4_frame, lldp_host_frame, mac_bytes,
                      match_key, packet_fields, port_hw_addr)

POLICIES = sorted(DEFAULT_ROUTING)
GRAPHS = {
    "leafspine-2x4x2": lambda: fattree.leaf_spine(2, 4, 2),
    "leafspine-3x4x4": lambda: fattree.leaf_spine(3, 4, 4),
    "kary4": lambda: fattree.kary(4),
}


def flow_mods(msgs):
    return [m for m in msgs if isinstance(m, PARSER.OFPFlowMod)]


def packet_outs(msgs):
    return [m for m in msgs if isinstance(m, PARSER.OFPPacketOut)]


def out_ports(msg):
    return [a.port for a in msg.actions]


def assert_all_pairs_routed(sim, avoid=()):
    """Traces every (src, dst) host pair through the simulated tables: each way the packet can go
    ends at dst, along a shortest path of the live fabric, and never crosses a port in ``avoid``."""
    hosts = sim.hosts()
    live = sim.core.topology.graph()
    for src in hosts:
        lengths = nx.single_source_shortest_path_length(live, src)
        for dst in hosts:
            if src == dst:
                continue
            results = sim.trace(src, sim.host_ip[dst])
            assert results, (src, dst)
            for outcome, hops in results:
                assert outcome == ("host", dst), "%s -> %s: %s via %s" % (src, dst, outcome, hops)
                switches = [dpid for dpid, _, _ in hops]
                assert len(set(switches)) == len(switches), "loop: %s" % hops
                assert len(hops) + 1 == lengths[dst], "not shortest: %s" % hops
                for dpid, in_port, out_port in hops:
                    assert (dpid, in_port) not in avoid and (dpid, out_port) not in avoid, hops
    return True


def route_snapshot(sim):
    return {dpid: sim.switches[dpid].route_flows() for dpid in sim.switch_ids}


# ---------------------------------------------------------------------------------------------
# switch connection
def test_switch_enter_base_flows_and_probes():
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    ports = {1: port_hw_addr(0x201, 1), 2: port_hw_addr(0x201, 2), 3: port_hw_addr(0x201, 3),
             OFP.OFPP_LOCAL: "0a:00:00:00:00:fe"}
    msgs = core.switch_enter(dp, ports)
    for msg in msgs:
        assert msg.datapath is dp
        dp.send_msg(msg)   # every message encodes

    # 1. a clean slate: every flow (any cookie, any table) and every group deleted, before anything else
    first, second = msgs[0], msgs[1]
    assert isinstance(first, PARSER.OFPFlowMod) and first.command == OFP.OFPFC_DELETE
    assert (first.table_id, first.cookie_mask, first.out_port, first.out_group) == (
        OFP.OFPTT_ALL, 0, OFP.OFPP_ANY, OFP.OFPG_ANY)
    assert list(first.match.items()) == []
    assert isinstance(second, PARSER.OFPGroupMod) and second.command == OFP.OFPGC_DELETE
    assert second.group_id == OFP.OFPG_ALL

    # 2. the fixed flows
    adds = {(m.priority, match_key(m.match)): m for m in flow_mods(msgs)
            if m.command == OFP.OFPFC_ADD and m.table_id == C.TABLE}
    # the counting table (flow detection) hands every packet it has no entry for on to routing
    miss, = [m for m in flow_mods(msgs) if m.command == OFP.OFPFC_ADD and m.table_id == C.TABLE_COUNT]
    assert (miss.priority, list(miss.match.items()), miss.cookie) == (C.PRIORITY_TABLE_MISS, [], C.COOKIE_CONTROL)
    assert [(type(i), i.table_id) for i in miss.instructions] == [(PARSER.OFPInstructionGotoTable, C.TABLE)]
    to_ctl = (("output", OFP.OFPP_CONTROLLER),)

    def actions(m):
        return tuple(("output", a.port) for inst in m.instructions for a in inst.actions)

    expected = {
        (C.PRIORITY_TABLE_MISS, ()): (),
        (C.PRIORITY_CONTROL, (("eth_type", C.ETH_TYPE_LLDP, None),)): to_ctl,
        (C.PRIORITY_CONTROL, (("eth_type", C.ETH_TYPE_ARP, None),)): to_ctl,
        (C.PRIORITY_DROP_MULTICAST, (("eth_dst", 1 << 40, 1 << 40),)): (),
        (C.PRIORITY_IPV4_MISS, (("eth_type", C.ETH_TYPE_IPV4, None),)): to_ctl,
    }
    assert {k: actions(m) for k, m in adds.items()} == expected
    for m in adds.values():
        assert m.cookie == C.COOKIE_CONTROL and m.table_id == C.TABLE
        assert (m.idle_timeout, m.hard_timeout, m.buffer_id) == (0, 0, OFP.OFP_NO_BUFFER)
        for inst in m.instructions:
            for act in inst.actions:
                assert act.max_len == OFP.OFPCML_NO_BUFFER   # the whole packet, never a buffer id
    assert max(i for i, m in enumerate(msgs) if isinstance(m, (PARSER.OFPFlowMod, PARSER.OFPGroupMod))) < \
        min(i for i, m in enumerate(msgs) if isinstance(m, PARSER.OFPPacketOut))

    # 3. one probe per physical port, none out of LOCAL
    probes = packet_outs(msgs)
    assert sorted(out_ports(p)[0] for p in probes) == [1, 2, 3]
    for p in probes:
        port = out_ports(p)[0]
        assert lldp.parse(p.data) == lldp.SwitchProbe(0x201, port)
        # TTL: the link timeout rounded up; 0 would mean "forget me" to any LLDP agent
        assert RyuPacket(bytes(p.data)).get_protocol(ryu_lldp.lldp).tlvs[2].ttl == math.ceil(
            options.Settings().link_timeout)
        assert p.data[6:12] == mac_bytes(port_hw_addr(0x201, port))
        assert p.in_port == OFP.OFPP_CONTROLLER and p.buffer_id == OFP.OFP_NO_BUFFER


def test_base_flows_wipe_a_dirty_switch_and_classify_packets():
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    sw = SwitchSim(0x201, [1, 2, 3])
    # leftovers of an earlier controller: a group and flows with foreign cookies
    sw.apply(PARSER.OFPGroupMod(dp, OFP.OFPGC_ADD, OFP.OFPGT_SELECT, 7,
                                [PARSER.OFPBucket(1, OFP.OFPP_ANY, OFP.OFPG_ANY, [PARSER.OFPActionOutput(1)])]))
    for cookie, match in ((0x1234, PARSER.OFPMatch(eth_type=0x800, ipv4_dst="10.0.0.1")), (0, PARSER.OFPMatch())):
        sw.apply(PARSER.OFPFlowMod(dp, table_id=C.TABLE, cookie=cookie, command=OFP.OFPFC_ADD, priority=5000,
                                   match=match, instructions=[PARSER.OFPInstructionActions(
                                       OFP.OFPIT_APPLY_ACTIONS, [PARSER.OFPActionGroup(7)])]))
        sw.apply(PARSER.OFPFlowMod(dp, table_id=C.TABLE_COUNT, cookie=cookie, command=OFP.OFPFC_ADD, priority=7,
                                   match=match, instructions=[PARSER.OFPInstructionGotoTable(C.TABLE)]))
    for msg in core.switch_enter(dp, {1: "0a:00:00:00:00:01", 2: "0a:00:00:00:00:02", 3: "0a:00:00:00:00:03"}):
        if not isinstance(msg, PARSER.OFPPacketOut):
            sw.apply(msg)
    assert sw.groups == {}
    assert {f.priority for f in sw.flows.values()} == {0, 10, 20, 60000}
    assert all(f.cookie == C.COOKIE_CONTROL for f in sw.flows.values())
    assert [(f.priority, f.key, f.cookie) for f in sw.counting.values()] == [(0, (), C.COOKIE_CONTROL)]

    def verdict(frame):
        flow = sw.lookup(packet_fields(frame, 1))
        return "controller" if flow.actions == (("output", OFP.OFPP_CONTROLLER),) else "drop"

    h1, h2 = "00:00:00:00:00:01", "00:00:00:00:00:02"
    assert verdict(lldp_host_frame(h1, "10.0.0.1", "h1")) == "controller"          # multicast dst, still LLDP
    assert verdict(lldp.build_probe(5, 1, "0a:00:00:00:00:01", 4)) == "controller"
    assert verdict(arp_frame(1, h1, "10.0.0.1", "00:00:00:00:00:00", "10.0.0.2")) == "controller"  # broadcast
    assert verdict(ipv4_frame(h1, h2, "10.0.0.1", "10.0.0.2")) == "controller"     # unknown destination
    assert verdict(ipv4_frame(h1, "ff:ff:ff:ff:ff:ff", "10.0.0.1", "10.0.0.255")) == "drop"   # never flooded
    assert verdict(ipv4_frame(h1, "01:00:5e:00:00:fb", "10.0.0.1", "224.0.0.251")) == "drop"
    other = mac_bytes(h2) + mac_bytes(h1) + b"\x86\xdd" + bytes(60)
    assert verdict(other) == "drop"                                                   # table miss


def test_port_status():
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    core.switch_enter(dp, {1: "0a:00:00:00:00:01"})
    msgs = core.port_status(dp, 5, "0a:00:00:00:00:05", True)
    assert [out_ports(m) for m in packet_outs(msgs)] == [[5]] and len(msgs) == 1
    assert lldp.parse(msgs[0].data) == lldp.SwitchProbe(0x201, 5)
    assert msgs[0].data[6:12] == mac_bytes("0a:00:00:00:00:05")
    assert core.topology.ports(0x201) == [1, 5]
    assert core.port_status(dp, 5, "0a:00:00:00:00:05", False) == []
    assert core.topology.ports(0x201) == [1]


def test_port_status_of_reserved_ports_sends_no_probe():
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    core.switch_enter(dp, {1: "0a:00:00:00:00:01"})
    assert core.port_status(dp, OFP.OFPP_LOCAL, "0a:00:00:00:00:fe", True) == []
    assert core.topology.ports(0x201) == [1]


def test_switch_leave_of_an_old_connection_is_ignored():
    core = Core(options.Settings())
    old, new = FakeDatapath(0x201), FakeDatapath(0x201)
    core.switch_enter(old, {1: "0a:00:00:00:00:01"})
    core.switch_enter(new, {1: "0a:00:00:00:00:01"})
    assert core.switch_leave(old) == []
    assert core.datapaths[0x201] is new and 0x201 in core.topology.switches
    core.switch_leave(new)
    assert 0x201 not in core.datapaths and 0x201 not in core.topology.switches and 0x201 not in core.routes


# ---------------------------------------------------------------------------------------------
# discovery
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_probes_discover_every_link(make_fabric, name):
    sim = make_fabric(GRAPHS[name]())
    order = list(sim.switch_ids)
    random.Random(3).shuffle(order)
    sim.connect_all(order)
    topo = sim.core.topology
    # Each switch's first probes reach the switches that connected before it: every link is known
    # in at least one direction, so both ends are already fabric ports.
    assert topo.undirected_links() == sim.links()
    assert sorted(topo.fabric_ports()) == sim.fabric_ports()
    sim.probe_round()
    assert len(topo.links) == len(sim.fabric_ports())                  # both directions now
    for (dpid, port), end in topo.links.items():
        assert sim.peer[(dpid, port)] == (end.dpid, end.port)
    assert topo.hosts == {}                                              # probes never make hosts
    assert sim.lost == []
    # a probe round later, nothing changes
    sim.core.routes_dirty = False
    sim.tick(1.0)
    assert not sim.core.routes_dirty and len(topo.links) == len(sim.fabric_ports())


def test_discovered_hosts(make_fabric):
    sim = make_fabric(fattree.leaf_spine(3, 4, 4))
    sim.discover()
    hosts = sim.core.topology.hosts
    assert set(hosts) == set(sim.hosts())
    for mac, host in hosts.items():
        assert (host.dpid, host.port) == sim.host_port[mac]
        assert (host.ip, host.name, host.source) == (sim.host_ip[mac], sim.host_name[mac], "lldp")


# ---------------------------------------------------------------------------------------------
# default routes
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_routes_reach_every_host(make_fabric, name, policy):
    sim = make_fabric(GRAPHS[name](), routing=policy)
    sim.discover()
    sim.check_tables_consistent()
    assert_all_pairs_routed(sim)
    # exactly what the policy plans for the same graph, one flow per (switch, host)
    table = DEFAULT_ROUTING[policy](sim.graph)
    for dpid in sim.switch_ids:
        expected = {ip_int(sim.host_ip[mac]): tuple(sorted(ports)) for mac, ports in table[dpid].items()}
        assert sim.switches[dpid].route_flows() == expected
        assert len(expected) == len(sim.hosts())
    for dpid in sim.switch_ids:
        for flow in sim.switches[dpid].flows.values():
            if flow.priority == C.PRIORITY_ROUTE:
                assert flow.cookie == C.COOKIE_ROUTE
    n_paths = {len(sim.trace(sim.hosts()[0], sim.host_ip[dst])) for dst in sim.hosts()[1:]}
    if policy == "ecmp":
        assert max(n_paths) > 1
    else:
        assert n_paths == {1}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_ecmp_select_groups_span_all_uplinks(make_fabric, name):
    sim = make_fabric(GRAPHS[name](), routing="ecmp")
    sim.discover()
    heights = fabric.heights(sim.graph)
    top = max(heights.values())
    for dpid in sim.switch_ids:
        sw = sim.switches[dpid]
        uplinks = sorted(fabric.port_towards(sim.graph, dpid, n) for n in sim.graph.neighbors(dpid)
                         if heights.get(n, -1) > heights[dpid])
        if heights[dpid] == top:
            assert sw.groups == {}
            continue
        assert len(sw.groups) == 1, hex(dpid)
        (gid, (gtype, buckets)), = sw.groups.items()
        assert gtype == OFP.OFPGT_SELECT and C.GROUP_ECMP_BASE <= gid <= C.GROUP_ECMP_MAX
        assert sorted(p for bucket in buckets for _, p in bucket) == uplinks
        assert all(len(bucket) == 1 for bucket in buckets)
        # every destination not below this switch goes through the group
        through_group = [f for f in sw.flows.values() if ("group", gid) in f.actions]
        below = [m for m in sim.hosts() if sim.host_port[m][0] == dpid] if heights[dpid] == 0 else None
        if below is not None:
            assert len(through_group) == len(sim.hosts()) - len(below)


@pytest.mark.parametrize("policy", POLICIES)
def test_recompute_with_nothing_changed_sends_nothing(make_fabric, policy):
    sim = make_fabric(fattree.kary(4), routing=policy)
    sim.discover()
    assert sim.core.recompute_routes() == []
    sim.tick(1.0)
    sim.advertise_all()
    assert sim.core.recompute_routes() == []
    sim.core.routes_dirty = True   # even a forced recompute finds nothing to change
    assert sim.core.recompute_routes() == []
    assert sim.core.counters["route_recomputes"] == 2


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name,a,b", [("leafspine-3x4x4", 0x201, 0x101), ("kary4", 0x101, 0x201),
                                      ("kary4", 0x201, 0x301)])
def test_link_down_moves_routes_off_the_link(make_fabric, policy, name, a, b):
    sim = make_fabric(GRAPHS[name](), routing=policy)
    sim.discover()
    before = route_snapshot(sim)
    pa, pb = sim.cut_link(a, b)
    assert ((a, pa), (b, pb)) not in sim.core.topology.undirected_links()
    assert ((b, pb), (a, pa)) not in sim.core.topology.undirected_links()
    msgs = sim.recompute()
    assert msgs
    sim.check_tables_consistent()   # no dangling or missing groups
    assert_all_pairs_routed(sim, avoid={(a, pa), (b, pb)})
    for dpid, dead in ((a, pa), (b, pb)):   # no flow or group bucket still points at the dead ports
        for flow in sim.switches[dpid].flows.values():
            assert all(dead not in ports for ports in sim.switches[dpid].expand(flow.actions))
    # the cable comes back: the same routes as before
    sim.restore_link(a, b)
    sim.recompute()
    sim.check_tables_consistent()
    assert route_snapshot(sim) == before
    assert_all_pairs_routed(sim)


def test_link_down_reported_by_one_end_only(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 3, 2), routing="ecmp")
    sim.discover()
    pa, pb = sim.cut_link(0x201, 0x101, notify=False)
    sim.run(sim.core.port_status(sim.dps[0x101], pb, port_hw_addr(0x101, pb), False))
    sim.recompute()
    sim.check_tables_consistent()
    assert_all_pairs_routed(sim, avoid={(0x201, pa), (0x101, pb)})


def test_silent_link_failure_times_out(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 3, 2), routing="dmodk", link_timeout=3.5)
    sim.discover()
    pa, pb = sim.cut_link(0x202, 0x102, notify=False)   # no port-status: only LLDP can tell
    for _ in range(3):
        sim.tick(1.0)
    assert ((0x102, pb), (0x202, pa)) in sim.core.topology.undirected_links()
    sim.tick(1.0)   # last confirmed 4 s ago > 3.5 s
    assert ((0x102, pb), (0x202, pa)) not in sim.core.topology.undirected_links()
    assert len(sim.core.topology.undirected_links()) == len(sim.links())
    sim.recompute()
    sim.check_tables_consistent()
    assert_all_pairs_routed(sim, avoid={(0x202, pa), (0x102, pb)})


def test_switch_reconnect(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 3, 2), routing="ecmp")
    sim.discover()
    before = route_snapshot(sim)
    sim.core.switch_leave(sim.dps[0x202])
    sim.connected.discard(0x202)
    sim.recompute()
    sim.check_tables_consistent()
    on_202 = {m for m in sim.hosts() if sim.host_port[m][0] == 0x202}
    assert set(sim.core.topology.hosts) == set(sim.hosts()) - on_202
    for dpid in sim.connected:
        assert {ip_int(sim.host_ip[m]) for m in on_202}.isdisjoint(sim.switches[dpid].route_flows())
    sim.dps[0x202] = FakeDatapath(0x202)   # a new connection
    sim.connect(0x202)
    sim.probe_round()
    for mac in on_202:
        sim.advertise(mac)
    sim.recompute()
    sim.check_tables_consistent()
    assert route_snapshot(sim) == before
    assert_all_pairs_routed(sim)


# ---------------------------------------------------------------------------------------------
# IPv4 packet-ins
@pytest.fixture
def links_only(make_fabric):
    """A leaf-spine fabric with every link discovered and no host known yet."""
    sim = make_fabric(fattree.leaf_spine(2, 3, 2))
    sim.connect_all()
    sim.probe_round()
    return sim


def test_ipv4_learns_hosts_on_edge_ports_and_delivers(links_only):
    sim, core = links_only, links_only.core
    h1, h2 = sim.hosts()[0], sim.hosts()[-1]
    sim.inbox.clear()   # the switches' LLDP probes
    frame = ipv4_frame(h1, h2, sim.host_ip[h1], sim.host_ip[h2])
    sim.host_send(h1, frame)                       # h2 unknown: learned h1, nothing delivered
    assert core.topology.hosts[h1].ip == sim.host_ip[h1] and core.topology.hosts[h1].source == "ipv4"
    assert (core.topology.hosts[h1].dpid, core.topology.hosts[h1].port) == sim.host_port[h1]
    assert sum(len(v) for v in sim.inbox.values()) == 0
    back = ipv4_frame(h2, h1, sim.host_ip[h2], sim.host_ip[h1])
    dpid, port = sim.host_port[h2]
    msgs = core.packet_in(sim.dps[dpid], port, back, sim.now)
    assert h2 in core.topology.hosts
    (out,) = msgs
    assert isinstance(out, PARSER.OFPPacketOut) and out.datapath.id == sim.host_port[h1][0]
    assert out_ports(out) == [sim.host_port[h1][1]] and bytes(out.data) == back
    sim.run(msgs)
    assert sim.inbox[h1] == [back]
    assert core.routes_dirty
    sim.recompute()
    sim.check_tables_consistent()
    assert [o for o, _ in sim.trace(h1, sim.host_ip[h2])] == [("host", h2)]


def test_ipv4_on_fabric_ports_teaches_nothing(links_only):
    sim, core = links_only, links_only.core
    core.routes_dirty = False
    stranger = "00:00:00:00:42:42"
    for dpid, port in sim.fabric_ports():
        core.packet_in(sim.dps[dpid], port, ipv4_frame(stranger, "00:00:00:00:00:01", "10.4.2.42", "10.0.0.1"),
                       sim.now)
    assert core.topology.hosts == {}
    assert not core.routes_dirty


def test_ipv4_unusable_source_is_not_learned_and_no_hairpin(links_only):
    sim, core = links_only, links_only.core
    h1 = sim.hosts()[0]
    dpid, port = sim.host_port[h1]
    core.packet_in(sim.dps[dpid], port, ipv4_frame(h1, "ff:ff:ff:ff:ff:ff", "0.0.0.0", "255.255.255.255"), sim.now)
    assert core.topology.hosts == {}
    core.packet_in(sim.dps[dpid], port, ipv4_frame(h1, "00:00:00:00:00:09", "10.0.0.1", "10.0.0.9"), sim.now)
    # a packet for h1 that arrived on h1's own port is not sent back there
    assert core.packet_in(sim.dps[dpid], port, ipv4_frame("00:00:00:00:00:09", h1, "10.0.0.9", "10.0.0.1"),
                          sim.now) == []


# ---------------------------------------------------------------------------------------------
# robustness
def _snapshot(core):
    topo = core.topology
    return (sorted((src, end.dpid, end.port) for src, end in topo.links.items()),
            sorted((h.mac, h.ip, h.dpid, h.port, h.source, h.name, h.ip_source, h.expires) for h in topo.hosts.values()),
            {d: dict(p) for d, p in topo.switches.items()})


def _vlan(frame, vid=5):
    return frame[:12] + struct.pack("!HH", 0x8100, vid) + frame[12:]


def test_garbage_never_raises_nor_changes_anything(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 2))
    sim.discover()
    core = sim.core
    rng = random.Random(0xF422)
    hosts = sim.hosts()
    all_ports = sim.edge_ports() + sim.fabric_ports()

    real = []   # (frame, length below which it is garbage, where it may be delivered once complete)
    for i, src in enumerate(hosts):
        dst = hosts[(i + 1) % len(hosts)]
        lldp_frame = lldp_host_frame(src, sim.host_ip[src], sim.host_name[src])
        real.append((lldp_frame, _lldpdu_end(lldp_frame), None))
        real.append((arp_frame(1, src, sim.host_ip[src], "00:00:00:00:00:00", sim.host_ip[dst]), 42, src))
        real.append((arp_frame(2, src, sim.host_ip[src], dst, sim.host_ip[dst]), 42, src))
        real.append((ipv4_frame(src, dst, sim.host_ip[src], sim.host_ip[dst]), 34, src))
    probe = lldp.build_probe(0x201, 3, port_hw_addr(0x201, 3), 4)
    real.append((probe, _lldpdu_end(probe), None))

    frames = []   # (frame, (dpid, port))
    for _ in range(2500):   # random bytes
        frames.append((bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 160))), rng.choice(all_ports)))
    for ethertype in (C.ETH_TYPE_LLDP, C.ETH_TYPE_ARP, C.ETH_TYPE_IPV4, 0x86DD, 0x8100, 0x88A8, 0x8847, 0x9000,
                      0x0000, 0x05DC, 0xFFFF):
        for _ in range(300):   # random payloads behind a real-looking Ethernet header
            head = bytes(rng.getrandbits(8) for _ in range(12)) + struct.pack("!H", ethertype)
            frames.append((head + bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120))),
                           rng.choice(all_ports)))
    for frame, garbage_below, _origin in real:   # every truncation that loses part of a header
        for length in range(garbage_below):
            frames.append((frame[:length], rng.choice(all_ports)))
    for frame, _, _ in real:   # VLAN-tagged copies of real frames: not ours, never learned from
        for port in all_ports:
            frames.append((_vlan(frame), port))
    rng.shuffle(frames)

    before = _snapshot(core)
    core.routes_dirty = False
    base = dict(core.counters)
    categories = ("packet_in_lldp", "packet_in_arp", "packet_in_ipv4", "packet_in_other")
    unparseable = 0
    for frame, (dpid, port) in frames:
        counts = {k: core.counters[k] for k in categories + ("packet_in", "malformed")}
        msgs = core.packet_in(sim.dps[dpid], port, frame, sim.now)
        assert msgs == [], "garbage %s at %#x:%d produced %r" % (frame.hex(), dpid, port, msgs)
        delta = {k: core.counters[k] - v for k, v in counts.items()}
        assert delta["packet_in"] == 1
        assert delta["malformed"] in (0, 1)
        # every frame is accounted for exactly once: under its ethertype, or as unparseable
        if not any(delta[k] for k in categories):
            assert delta["malformed"] == 1, frame.hex()
            unparseable += 1
        else:
            assert sum(delta[k] for k in categories) == 1, (frame.hex(), delta)
        kind = {C.ETH_TYPE_LLDP: "packet_in_lldp", C.ETH_TYPE_ARP: "packet_in_arp",
                C.ETH_TYPE_IPV4: "packet_in_ipv4"}.get(int.from_bytes(frame[12:14], "big") if len(frame) >= 14 else -1)
        counted = [k for k in categories if delta[k]]
        if counted and kind:
            assert counted == [kind], (frame.hex(), counted)
        if counted and counted[0] in ("packet_in_lldp", "packet_in_arp"):
            assert delta["malformed"] == 1, "garbage accepted as %s: %s" % (counted[0], frame.hex())
    assert _snapshot(core) == before
    assert not core.routes_dirty and core.recompute_routes() == []
    added = {k: core.counters[k] - base.get(k, 0) for k in categories + ("packet_in", "malformed")}
    assert added["packet_in"] == len(frames) == sum(added[k] for k in categories) + unparseable
    assert unparseable <= added["malformed"] <= len(frames) - added["packet_in_other"]
    stats = core.stats_json()
    assert stats["packet_in"]["total"] == core.counters["packet_in"]
    assert stats["malformed"] == core.counters["malformed"]
    # the fabric still works
    assert_all_pairs_routed(sim)


def _lldpdu_end(frame):
    off = 14
    while True:
        head = struct.unpack("!H", frame[off:off + 2])[0]
        off += 2 + (head & 0x1FF)
        if head >> 9 == 0:
            return off


def test_real_frames_truncated_after_the_ip_header_at_their_own_port(make_fabric):
    """A damaged IPv4 frame still carries its sender's real addresses: seen at the sender's own
    port it changes nothing; seen on a fabric port it teaches nothing."""
    sim = make_fabric(fattree.leaf_spine(2, 2, 2))
    sim.discover()
    core = sim.core
    before = _snapshot(core)
    core.routes_dirty = False
    hosts = sim.hosts()
    for i, src in enumerate(hosts):
        dst = hosts[(i + 1) % len(hosts)]
        frame = ipv4_frame(src, dst, sim.host_ip[src], sim.host_ip[dst])
        for length in range(34, len(frame)):
            dpid, port = sim.host_port[src]
            for msg in core.packet_in(sim.dps[dpid], port, frame[:length], sim.now):
                assert (msg.datapath.id, out_ports(msg)) == (sim.host_port[dst][0], [sim.host_port[dst][1]])
            fdpid, fport = sim.fabric_ports()[length % len(sim.fabric_ports())]
            core.packet_in(sim.dps[fdpid], fport, frame[:length], sim.now)
    assert _snapshot(core) == before and not core.routes_dirty


def test_ipv4_garbage_is_not_learned(make_fabric):
    """IPv4 headers that no host sends: wrong version, bad checksum, group or zero source MAC."""
    sim = make_fabric(fattree.leaf_spine(2, 2, 2))
    sim.discover()
    core = sim.core
    h1, h2 = sim.hosts()[0], sim.hosts()[1]
    dpid, port = sim.host_port[h1]
    good = ipv4_frame("02:00:00:00:42:42", h2, "10.42.0.1", sim.host_ip[h2])
    bad = {
        "version 6": good[:14] + bytes([0x65]) + good[15:],
        "bad checksum": good[:24] + bytes([good[24] ^ 0xFF]) + good[25:],
        "header length 4": good[:14] + bytes([0x44]) + good[15:],
        "multicast source": good[:6] + mac_bytes("01:00:5e:01:02:03") + good[12:],
        "zero source": good[:6] + bytes(6) + good[12:],
    }
    before = _snapshot(core)
    core.routes_dirty = False
    for name, frame in bad.items():
        core.packet_in(sim.dps[dpid], port, frame, sim.now)
        assert _snapshot(core) == before, name
    assert not core.routes_dirty
    core.packet_in(sim.dps[dpid], port, good, sim.now)   # the control: a real one is learned
    assert "02:00:00:00:42:42" in core.topology.hosts


# ---------------------------------------------------------------------------------------------
# views
def test_routes_and_stats_json(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1), routing="ecmp")
    sim.discover()
    routes = sim.core.routes_json()
    assert sorted(routes) == ["%016x" % d for d in sim.switch_ids]
    assert routes["%016x" % 0x201] == {sim.host_ip[sim.hosts()[0]]: [1], sim.host_ip[sim.hosts()[1]]: [2, 3]}
    stats = sim.core.stats_json()
    assert stats["routing"] == "ecmp" and stats["route_recomputes"] == 1 and stats["handler_errors"] == 0
    assert set(stats) == {"routing", "packet_in", "malformed", "arp_replies", "arp_probes", "route_recomputes",
                          "routes_pending", "handler_errors", "host_claims_refused"}
    assert stats["host_claims_refused"] == 0
    assert stats["packet_in"]["total"] == sim.to_controller
    kinds = collections.Counter((m.datapath.id, type(m).__name__) for m in sim.core.stats_requests())
    assert kinds == {(d, kind): 1 for d in sim.switch_ids
                     for kind in ("OFPPortStatsRequest", "OFPAggregateStatsRequest", "OFPGroupStatsRequest")}


# ---------------------------------------------------------------------------------------------
# the Ryu app's handler wrapper
def test_logged_logs_and_counts_instead_of_raising(caplog):
    holder = types.SimpleNamespace(core=Core(options.Settings()))

    @app._logged
    def handler(self, value):
        if value == "boom":
            raise RuntimeError("kaboom")
        return value * 2

    assert handler.__name__ == "handler"
    assert handler(holder, 21) == 42 and holder.core.counters["handler_errors"] == 0
    with caplog.at_level(logging.ERROR, logger=app.LOG.name):
        assert handler(holder, "boom") is None
        assert handler(holder, "boom") is None
    assert holder.core.counters["handler_errors"] == 2
    records = [r for r in caplog.records if r.name == app.LOG.name]
    assert len(records) == 2 and records[0].levelno == logging.ERROR
    assert "handler" in records[0].getMessage() and isinstance(records[0].exc_info[1], RuntimeError)
    assert holder.core.stats_json()["handler_errors"] == 2


def test_app_packet_in_handler_survives_a_failing_core(monkeypatch, caplog):
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    core.switch_enter(dp, {1: "0a:00:00:00:00:01", 2: "0a:00:00:00:00:02"})
    holder = types.SimpleNamespace(core=core, _send=app.SdnMpiApp._send)
    h1, h2 = "00:00:00:00:00:01", "00:00:00:00:00:02"
    core.packet_in(dp, 2, arp_frame(2, h2, "10.0.0.2", h1, "10.0.0.1"), 0.0)   # h2 known

    def event(data):
        return types.SimpleNamespace(msg=types.SimpleNamespace(datapath=dp, match={"in_port": 1}, data=data))

    app.SdnMpiApp._packet_in(holder, event(arp_frame(1, h1, "10.0.0.1", "00:00:00:00:00:00", "10.0.0.2")))
    (reply,) = dp.sent   # the handler sent the core's answer
    assert isinstance(reply, PARSER.OFPPacketOut) and out_ports(reply) == [1]

    def broken(*_args):
        raise KeyError("core bug")

    monkeypatch.setattr(core, "packet_in", broken)
    with caplog.at_level(logging.ERROR, logger=app.LOG.name):
        assert app.SdnMpiApp._packet_in(holder, event(b"x" * 60)) is None
        app.SdnMpiApp._run(holder, lambda: 1 / 0)
    assert core.counters["handler_errors"] == 2
    assert len(dp.sent) == 1


def test_port_is_up():
    port = types.SimpleNamespace(state=0, config=0)
    dp = FakeDatapath(1)
    assert app._port_is_up(dp, port)
    assert not app._port_is_up(dp, types.SimpleNamespace(state=OFP.OFPPS_LINK_DOWN, config=0))
    assert not app._port_is_up(dp, types.SimpleNamespace(state=0, config=OFP.OFPPC_PORT_DOWN))


# ---------------------------------------------------------------------------------------------
# the simulated switch itself (conftest.SwitchSim): the route tests are only as good as it is
def _flow(dp, priority, match, actions, cookie=C.COOKIE_ROUTE, command=OFP.OFPFC_ADD, **kw):
    inst = [PARSER.OFPInstructionActions(OFP.OFPIT_APPLY_ACTIONS, actions)] if actions else []
    return PARSER.OFPFlowMod(dp, table_id=kw.pop("table_id", C.TABLE), cookie=cookie, command=command,
                             priority=priority, match=match, instructions=inst, out_port=kw.pop("out_port", OFP.OFPP_ANY),
                             out_group=kw.pop("out_group", OFP.OFPG_ANY), **kw)


def test_switch_sim_semantics():
    dp = FakeDatapath(1)
    sw = SwitchSim(1, [1, 2, 3])
    m1 = PARSER.OFPMatch(eth_type=0x800, ipv4_dst="10.0.0.1")
    out = PARSER.OFPActionOutput
    sw.apply(_flow(dp, 1000, m1, [out(1)]))
    sw.apply(_flow(dp, 1000, PARSER.OFPMatch(eth_type=0x800, ipv4_dst="10.0.0.1"), [out(2)]))   # ADD overwrites
    assert [f.actions for f in sw.flows.values()] == [(("output", 2),)]
    sw.apply(_flow(dp, 999, m1, [out(3)]))                                    # another priority: a second flow
    assert sw.lookup(packet_fields(ipv4_frame("00:00:00:00:00:02", "00:00:00:00:00:01", "10.0.0.2", "10.0.0.1"),
                                   3)).priority == 1000
    sw.apply(ofmsgs.flow_delete_strict(dp, 999, m1))
    assert [f.priority for f in sw.flows.values()] == [1000]
    sw.apply(_flow(dp, 5, PARSER.OFPMatch(), [out(1)], cookie=C.COOKIE_CONTROL))
    sw.apply(ofmsgs.flow_delete_cookie(dp, C.COOKIE_ROUTE))                   # by cookie: only route flows
    assert [f.cookie for f in sw.flows.values()] == [C.COOKIE_CONTROL]
    sw.apply(_flow(dp, 7, PARSER.OFPMatch(), [out(1)], cookie=C.COOKIE_JOB | 5))
    sw.apply(ofmsgs.flow_delete_cookie(dp, C.COOKIE_JOB, C.COOKIE_KIND_MASK))  # by cookie and mask
    assert [f.cookie for f in sw.flows.values()] == [C.COOKIE_CONTROL]
    sw.apply(_flow(dp, 5, PARSER.OFPMatch(), [], command=OFP.OFPFC_DELETE, out_port=2))   # out_port filter
    assert len(sw.flows) == 1
    # groups: add, refuse duplicates, flows pointing at them, deleting one deletes its flows
    sw.apply(ofmsgs.group_select(dp, OFP.OFPGC_ADD, 0x1000, (2, 3)))
    with pytest.raises(SwitchError):
        sw.apply(ofmsgs.group_select(dp, OFP.OFPGC_ADD, 0x1000, (1, 2)))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, m1, [PARSER.OFPActionGroup(0x1001)]))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, m1, [out(9)]))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, PARSER.OFPMatch(ipv4_dst="10.0.0.1"), [out(1)]))   # missing prerequisite
    sw.apply(_flow(dp, 1000, m1, [PARSER.OFPActionGroup(0x1000)]))
    assert sw.expand(sw.flows[(1000, match_key(m1))].actions) == [[2], [3]]
    assert sw.route_flows() == {ip_int("10.0.0.1"): (2, 3)}
    sw.apply(ofmsgs.group_delete(dp, 0x1000))
    assert sw.groups == {} and (1000, match_key(m1)) not in sw.flows
    # overlapping flows at one priority are ambiguous: the simulator refuses to guess
    sw.apply(_flow(dp, 50, PARSER.OFPMatch(eth_type=0x800), [out(1)]))
    sw.apply(_flow(dp, 50, PARSER.OFPMatch(in_port=3), [out(2)]))
    with pytest.raises(SwitchError):
        sw.lookup(packet_fields(ipv4_frame("00:00:00:00:00:02", "00:00:00:00:00:01", "10.0.0.2", "10.0.0.1"), 3))


def test_fabric_sim_detects_forwarding_loops(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1))   # leaves: host port 1, uplinks 2 (0x101) and 3 (0x102)
    sim.discover()
    h1, h2 = sim.hosts()
    assert assert_all_pairs_routed(sim)
    # a cycle 0x201 -> 0x101 -> 0x202 -> 0x102 -> 0x201 -> ... for h2's address
    for dpid, port in ((0x201, 2), (0x101, 2), (0x202, 3), (0x102, 1)):
        sim.switches[dpid].apply(_flow(sim.dps[dpid], C.PRIORITY_ROUTE,
                                       PARSER.OFPMatch(eth_type=0x800, ipv4_dst=sim.host_ip[h2]),
                                       [PARSER.OFPActionOutput(port)]))
    outcomes = [o[0] for o, _ in sim.trace(h1, sim.host_ip[h2])]
    assert outcomes == ["loop"]
    with pytest.raises(AssertionError):
        assert_all_pairs_routed(sim)
    with pytest.raises(AssertionError, match="forwarding loop"):
        sim.host_send(h1, ipv4_frame(h1, h2, sim.host_ip[h1], sim.host_ip[h2]))
