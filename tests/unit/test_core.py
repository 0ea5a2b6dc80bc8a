"""controller/core.py against fake datapaths and simulated switches: base flows, port status,
discovery, default routes for every policy, link and switch failures. IPv4 learning and garbage
frames: test_core_packets.py; the JSON views and the Ryu app's error wrapper: test_core_app.py."""
import math
import random

import pytest
from ryu.lib.packet import lldp as ryu_lldp
from ryu.lib.packet.packet import Packet as RyuPacket
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import lldp, options
from sdnmpi.controller import constants as C
from sdnmpi.controller.core import Core
from sdnmpi.primitives import DEFAULT_ROUTING, fabric, fattree

from core_checks import assert_all_pairs_routed, out_ports
from frame_builders import arp_frame, ip_int, ipv4_frame, lldp_host_frame, mac_bytes, port_hw_addr
from switch_sim import FakeDatapath, SwitchSim, match_key, packet_fields

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
        assert all(len(bucket) == 1 for bucket in buckets)
        spread = [p for bucket in buckets for _, p in bucket]   # each uplink equally often (select_slots)
        assert sorted(set(spread)) == uplinks and {spread.count(p) for p in uplinks} == {len(spread) // len(uplinks)}
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
