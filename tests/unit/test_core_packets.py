"""controller/core.py on a simulated fabric: IPv4 packet-ins (learning hosts on edge ports,
delivery) and robustness against garbage frames (nothing raises, nothing changes)."""
import random
import struct

import pytest
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import lldp
from sdnmpi.controller import constants as C
from sdnmpi.primitives import fattree

from core_checks import assert_all_pairs_routed, out_ports
from frame_builders import arp_frame, ipv4_frame, lldp_host_frame, lldpdu_end, mac_bytes, port_hw_addr


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
        real.append((lldp_frame, lldpdu_end(lldp_frame), None))
        real.append((arp_frame(1, src, sim.host_ip[src], "00:00:00:00:00:00", sim.host_ip[dst]), 42, src))
        real.append((arp_frame(2, src, sim.host_ip[src], dst, sim.host_ip[dst]), 42, src))
        real.append((ipv4_frame(src, dst, sim.host_ip[src], sim.host_ip[dst]), 34, src))
    probe = lldp.build_probe(0x201, 3, port_hw_addr(0x201, 3), 4)
    real.append((probe, lldpdu_end(probe), None))

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
