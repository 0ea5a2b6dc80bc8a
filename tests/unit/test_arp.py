"""ARP without flooding: controller/arp.py and the controller's ARP handling on a simulated fabric."""
import pytest
from ryu.lib.packet import arp as ryu_arp
from ryu.lib.packet import packet
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import arp
from sdnmpi.primitives import fattree

from conftest import arp_frame, parse_arp

PROBE_MAC = "02:5d:4d:50:49:01"
ZERO_MAC = "00:00:00:00:00:00"


def pkt(frame):
    return packet.Packet(bytes(frame))


# ---------------------------------------------------------------------------------------------
# arp.py
def test_parse_request_and_reply():
    req = arp.parse(pkt(arp_frame(1, "00:00:00:00:00:01", "10.0.0.1", ZERO_MAC, "10.0.0.2")))
    assert req == arp.Arp(1, "00:00:00:00:00:01", "10.0.0.1", ZERO_MAC, "10.0.0.2", "00:00:00:00:00:01")
    assert req.is_request and not req.is_gratuitous
    rep = arp.parse(pkt(arp_frame(2, "AA:00:00:00:00:02".lower(), "10.0.0.2", "00:00:00:00:00:01", "10.0.0.1",
                                  eth_src="02:00:00:00:00:99")))
    assert not rep.is_request and rep.eth_src == "02:00:00:00:00:99" and rep.src_mac == "aa:00:00:00:00:02"
    garp = arp.parse(pkt(arp_frame(1, "00:00:00:00:00:01", "10.0.0.1", ZERO_MAC, "10.0.0.1")))
    assert garp.is_gratuitous


@pytest.mark.parametrize("kwargs", [
    dict(hlen=8), dict(plen=16), dict(hwtype=6), dict(proto=0x86DD), dict(opcode=7), dict(opcode=0),
    dict(src_mac="01:00:5e:00:00:01"), dict(src_mac="ff:ff:ff:ff:ff:ff"), dict(src_mac=ZERO_MAC),
], ids=lambda kw: ",".join("%s=%s" % kv for kv in kw.items()))
def test_parse_rejects(kwargs):
    args = dict(opcode=1, src_mac="00:00:00:00:00:01", src_ip="10.0.0.1", dst_mac=ZERO_MAC, dst_ip="10.0.0.2")
    args.update(kwargs)
    opcode = args.pop("opcode")
    with pytest.raises(arp.ArpError):
        arp.parse(pkt(arp_frame(opcode, args.pop("src_mac"), args.pop("src_ip"), args.pop("dst_mac"),
                                args.pop("dst_ip"), eth_src="00:00:00:00:00:01", **args)))


def test_parse_rejects_truncated_and_non_arp():
    frame = arp_frame(1, "00:00:00:00:00:01", "10.0.0.1", ZERO_MAC, "10.0.0.2")
    for length in range(42):
        with pytest.raises(arp.ArpError):
            arp.parse(pkt(frame[:length] or b"\x01"))
    with pytest.raises(arp.ArpError):
        arp.parse(pkt(frame[:12] + b"\x08\x00" + frame[14:]))


def test_build_reply_and_probe():
    eth_dst, eth_src, rep = parse_arp(arp.build_reply("00:00:00:00:00:05", "10.0.0.5", "00:00:00:00:00:01", "10.0.0.1"))
    assert (eth_dst, eth_src) == ("00:00:00:00:00:01", "00:00:00:00:00:05")
    assert (rep.opcode, rep.src_mac, rep.src_ip, rep.dst_mac, rep.dst_ip) == (
        2, "00:00:00:00:00:05", "10.0.0.5", "00:00:00:00:00:01", "10.0.0.1")
    eth_dst, eth_src, probe = parse_arp(arp.build_probe(PROBE_MAC, "10.0.0.9"))
    assert (eth_dst, eth_src) == ("ff:ff:ff:ff:ff:ff", PROBE_MAC)
    assert (probe.opcode, probe.src_mac, probe.src_ip, probe.dst_mac, probe.dst_ip) == (
        1, PROBE_MAC, "0.0.0.0", ZERO_MAC, "10.0.0.9")
    assert (probe.hwtype, probe.proto, probe.hlen, probe.plen) == (1, 0x0800, 6, 4)


def test_usable_sender_ip():
    assert arp.usable_sender_ip("10.0.0.1") and arp.usable_sender_ip("192.168.1.254")
    for ip in ("0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255"):
        assert not arp.usable_sender_ip(ip)


# ---------------------------------------------------------------------------------------------
# the controller
@pytest.fixture
def sim(make_fabric):
    """leaf-spine, 2 spines x 3 leaves x 2 hosts; links discovered; every host but the last known."""
    s = make_fabric(fattree.leaf_spine(2, 3, 2), probe_mac=PROBE_MAC)
    s.connect_all()
    s.probe_round()
    for mac in s.hosts()[:-1]:
        s.advertise(mac)
    s.recompute()
    s.inbox.clear()
    return s


def request(sim, src, dst_ip, **kw):
    return arp_frame(1, src, sim.host_ip[src], ZERO_MAC, dst_ip, **kw)


def ask(sim, src, dst_ip, now=None):
    dpid, port = sim.host_port[src]
    return sim.core.packet_in(sim.dps[dpid], port, request(sim, src, dst_ip), sim.now if now is None else now)


def test_request_for_a_known_ip_is_answered_on_the_in_port(sim):
    h1, h5 = sim.hosts()[0], sim.hosts()[4]
    msgs = ask(sim, h1, sim.host_ip[h5])
    (out,) = msgs
    assert isinstance(out, PARSER.OFPPacketOut)
    assert out.datapath.id == sim.host_port[h1][0] and [a.port for a in out.actions] == [sim.host_port[h1][1]]
    eth_dst, eth_src, rep = parse_arp(out.data)
    assert (eth_dst, eth_src) == (h1, h5)
    assert (rep.opcode, rep.src_mac, rep.src_ip, rep.dst_mac, rep.dst_ip) == (
        ryu_arp.ARP_REPLY, h5, sim.host_ip[h5], h1, sim.host_ip[h1])
    assert sim.core.counters["arp_replies"] == 1
    # through the fabric: only the requester hears anything, nothing is flooded
    sim.host_send(h1, request(sim, h1, sim.host_ip[h5]))
    assert {m: len(f) for m, f in sim.inbox.items() if f} == {h1: 1}
    assert parse_arp(sim.inbox[h1][0])[2].src_mac == h5


def test_request_for_own_ip_gets_no_answer(sim):
    h1 = sim.hosts()[0]
    assert ask(sim, h1, sim.host_ip[h1]) == []


def test_unknown_ip_is_probed_on_edge_ports_only_and_rate_limited(sim):
    h1 = sim.hosts()[0]
    target = "10.0.0.77"
    msgs = ask(sim, h1, target)
    where = sorted((m.datapath.id, m.actions[0].port) for m in msgs)
    assert where == sim.edge_ports()   # one per edge port, none on a switch link
    assert all(isinstance(m, PARSER.OFPPacketOut) and len(m.actions) == 1 for m in msgs)
    for m in msgs:
        eth_dst, eth_src, probe = parse_arp(m.data)
        assert (eth_dst, eth_src) == ("ff:ff:ff:ff:ff:ff", PROBE_MAC)
        assert (probe.opcode, probe.src_mac, probe.src_ip, probe.dst_mac, probe.dst_ip) == (
            1, PROBE_MAC, "0.0.0.0", ZERO_MAC, target)
    assert sim.core.counters["arp_probes"] == 1
    assert ask(sim, h1, target, now=sim.now + 0.5) == []       # held off
    assert ask(sim, sim.hosts()[2], target, now=sim.now + 0.99) == []
    assert len(ask(sim, h1, "10.0.0.78", now=sim.now + 0.5)) == len(sim.edge_ports())   # per target IP
    assert len(ask(sim, h1, target, now=sim.now + 1.0)) == len(sim.edge_ports())
    assert sim.core.counters["arp_probes"] == 3


def test_probe_reply_is_learned_and_the_retry_answered(sim):
    h1, silent = sim.hosts()[0], sim.hosts()[-1]
    assert silent not in sim.core.topology.hosts
    to_controller = sim.to_controller
    sim.host_send(h1, request(sim, h1, sim.host_ip[silent]))
    # every host (the silent one included) heard exactly one probe; no probe came back in from a link
    assert {m: len(f) for m, f in sim.inbox.items() if f} == {m: 1 for m in sim.hosts()}
    assert sim.to_controller == to_controller + 1
    eth_dst, _, probe = parse_arp(sim.inbox[silent][0])
    assert probe.dst_ip == sim.host_ip[silent] and probe.src_ip == "0.0.0.0"
    # the silent host answers the probe as Linux does: to the probe's sender
    sim.inbox.clear()
    sim.host_send(silent, arp_frame(2, silent, sim.host_ip[silent], PROBE_MAC, "0.0.0.0"))
    host = sim.core.topology.hosts[silent]
    assert (host.ip, host.dpid, host.port, host.source) == (sim.host_ip[silent], *sim.host_port[silent], "arp")
    assert not any(sim.inbox.values())   # a reply is answered by nobody
    sim.now += 0.2
    sim.host_send(h1, request(sim, h1, sim.host_ip[silent]))
    (frame,) = sim.inbox[h1]
    assert parse_arp(frame)[2].src_mac == silent
    assert {m for m, f in sim.inbox.items() if f} == {h1}


def test_requester_is_learned_from_its_request(sim):
    silent = sim.hosts()[-1]
    dpid, port = sim.host_port[silent]
    sim.core.routes_dirty = False
    sim.core.packet_in(sim.dps[dpid], port, request(sim, silent, sim.host_ip[sim.hosts()[0]]), sim.now)
    assert sim.core.topology.hosts[silent].ip == sim.host_ip[silent]
    assert sim.core.routes_dirty


@pytest.mark.parametrize("opcode", [1, 2])
def test_gratuitous_arp_is_learned_without_reply(sim, opcode):
    h1 = sim.hosts()[0]
    dpid, port = sim.host_port[h1]
    sim.core.routes_dirty = False
    garp = arp_frame(opcode, h1, "10.0.9.1", "ff:ff:ff:ff:ff:ff" if opcode == 2 else ZERO_MAC, "10.0.9.1",
                     eth_dst="ff:ff:ff:ff:ff:ff")
    assert sim.core.packet_in(sim.dps[dpid], port, garp, sim.now) == []
    assert sim.core.topology.hosts[h1].ip == "10.0.9.1"
    assert sim.core.routes_dirty
    # the silent host announces itself
    silent = sim.hosts()[-1]
    sdpid, sport = sim.host_port[silent]
    garp = arp_frame(opcode, silent, sim.host_ip[silent], ZERO_MAC, sim.host_ip[silent], eth_dst="ff:ff:ff:ff:ff:ff")
    assert sim.core.packet_in(sim.dps[sdpid], sport, garp, sim.now) == []
    assert sim.core.topology.hosts[silent].ip == sim.host_ip[silent]
    assert sim.core.counters["arp_replies"] == sim.core.counters["arp_probes"] == 0


def test_gratuitous_arp_with_unspecified_address_sends_nothing(sim):
    h1 = sim.hosts()[0]
    dpid, port = sim.host_port[h1]
    assert sim.core.packet_in(sim.dps[dpid], port, arp_frame(1, h1, "0.0.0.0", ZERO_MAC, "0.0.0.0"), sim.now) == []
    assert sim.core.counters["arp_probes"] == 0


def test_arp_on_fabric_ports_and_our_own_probes_are_ignored(sim):
    core = sim.core
    before = {m: (h.ip, h.dpid, h.port) for m, h in core.topology.hosts.items()}
    h1 = sim.hosts()[0]
    for dpid, port in sim.fabric_ports():
        # a stray request (e.g. a host's ARP forwarded before the link was discovered)
        assert core.packet_in(sim.dps[dpid], port, request(sim, h1, sim.host_ip[sim.hosts()[1]]), sim.now) == []
        assert core.packet_in(sim.dps[dpid], port, arp_frame(1, "00:00:00:00:99:01", "10.0.99.1", ZERO_MAC,
                                                             "10.0.0.1"), sim.now) == []
    dpid, port = sim.host_port[h1]
    assert core.packet_in(sim.dps[dpid], port, arp_frame(1, PROBE_MAC, "0.0.0.0", ZERO_MAC, "10.0.0.50"),
                          sim.now) == []
    assert {m: (h.ip, h.dpid, h.port) for m, h in core.topology.hosts.items()} == before
    assert core.counters["arp_probes"] == core.counters["arp_replies"] == 0


@pytest.mark.parametrize("name", ["hlen 8", "opcode 7", "multicast sender", "zero sender", "truncated"])
def test_bogus_arp_is_malformed_and_unanswered(sim, name):
    h1, h5 = sim.hosts()[0], sim.hosts()[4]
    good = dict(opcode=1, src_mac="02:00:00:00:00:aa", src_ip="10.0.0.170", dst_mac=ZERO_MAC,
                dst_ip=sim.host_ip[h5], eth_src="02:00:00:00:00:aa")
    frames = {
        "hlen 8": arp_frame(**good, hlen=8),
        "opcode 7": arp_frame(**{**good, "opcode": 7}),
        "multicast sender": arp_frame(**{**good, "src_mac": "01:00:5e:00:00:01"}),
        "zero sender": arp_frame(**{**good, "src_mac": ZERO_MAC}),
        "truncated": arp_frame(**good)[:41],
    }
    dpid, port = sim.host_port[h1]
    core = sim.core
    hosts_before = set(core.topology.hosts)
    malformed = core.counters["malformed"]
    assert core.packet_in(sim.dps[dpid], port, frames[name], sim.now) == []
    assert core.counters["malformed"] == malformed + 1
    assert core.counters["packet_in_arp"] == 1
    assert set(core.topology.hosts) == hosts_before
    assert core.counters["arp_replies"] == core.counters["arp_probes"] == 0
    # the same request, well-formed, is answered: the rejection was about the defect
    assert len(core.packet_in(sim.dps[dpid], port, arp_frame(**good), sim.now)) == 1


def test_dad_probe_from_a_host_for_a_used_address(sim):
    """RFC 5227: a host checking whether an address is free sends sender IP 0.0.0.0. The controller
    answers for the owner (so the host sees the conflict) and learns nothing from it."""
    h1, h5 = sim.hosts()[0], sim.hosts()[4]
    newcomer = "02:00:00:00:00:bb"
    dpid, port = sim.host_port[h1]
    msgs = sim.core.packet_in(sim.dps[dpid], port, arp_frame(1, newcomer, "0.0.0.0", ZERO_MAC, sim.host_ip[h5]),
                              sim.now)
    (out,) = msgs
    eth_dst, eth_src, rep = parse_arp(out.data)
    assert (eth_dst, rep.src_mac, rep.src_ip, rep.dst_mac) == (newcomer, h5, sim.host_ip[h5], newcomer)
    assert newcomer not in sim.core.topology.hosts
