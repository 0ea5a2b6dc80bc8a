"""Hostile LLDP, ARP and IPv4 frames from a host port, against the core on a simulated fabric
(issue 12, "Hostile input, measured"): hypothesis generates them (derandomized). A host the
controller has confirmed never moves, nor loses its IP, whatever another port sends; forged switch
probes (foreign chassis ids) make no link; malformed TLVs change nothing; and every other host
stays reachable. Only a port going down lets a host show up elsewhere."""
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import LLDP_DST, FabricSim, arp_frame, ipv4_frame, lldp_host_frame, mac_bytes, tlv
from sdnmpi.controller import constants as C
from sdnmpi.controller import lldp
from sdnmpi.primitives import fattree

GRAPH = fattree.leaf_spine(2, 2, 3)
PROBE = struct.Struct("!I")
SETTINGS = settings(max_examples=600, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


def discovered():
    sim = FabricSim(GRAPH)
    sim.discover()
    return sim


SIM = discovered()
HOSTS = SIM.hosts()
ATTACKER = HOSTS[0]
VICTIMS = HOSTS[1:]
IPS = [SIM.host_ip[m] for m in HOSTS]
SWITCH_PORTS = sorted((d, p) for d in SIM.switch_ids for p in SIM.ports[d])

macs = st.one_of(st.sampled_from(HOSTS), st.binary(min_size=6, max_size=6).map(
    lambda b: ":".join("%02x" % x for x in b)))
ips = st.one_of(st.sampled_from(IPS), st.ip_addresses(v=4).map(str))


def probe_frame(dpid, port, signature, src):
    """A frame that looks like the controller's probe for (dpid, port), with a made-up signature."""
    tlvs = [tlv(1, bytes([7]) + b"dpid:%016x" % dpid), tlv(2, bytes([2]) + PROBE.pack(port)), tlv(3, b"\x00\x78")]
    if signature is not None:
        tlvs.append(tlv(127, lldp.PROBE_OUI + bytes([lldp.PROBE_SIGNATURE_SUBTYPE]) + signature))
    return LLDP_DST + mac_bytes(src) + struct.pack("!H", C.ETH_TYPE_LLDP) + b"".join(tlvs) + tlv(0)


def raw_lldp(src, tlvs):
    """An LLDPDU of arbitrary TLVs: (type, length field, payload) each, the length possibly lying."""
    body = b"".join(struct.pack("!H", (t << 9) | (length & 0x1FF)) + payload for t, length, payload in tlvs)
    return LLDP_DST + mac_bytes(src) + struct.pack("!H", C.ETH_TYPE_LLDP) + body


def mutate(frame, edits):
    out = bytearray(frame)
    for where, byte, how in edits:
        i = 14 + where % max(1, len(out) - 14)   # keep the Ethernet header: the frame stays LLDP/ARP
        if how == "flip" and i < len(out):
            out[i] ^= byte or 1
        elif how == "insert":
            out[i:i] = bytes([byte])
        elif how == "cut":
            del out[i:]
    return bytes(out)


edits = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255), st.sampled_from(["flip", "insert", "cut"])),
                 min_size=1, max_size=5)
host_adverts = st.builds(lambda mac, ip, name, ttl: lldp_host_frame(mac, ip, name, ttl=ttl),
                         macs, st.one_of(st.none(), ips), st.text(max_size=12), st.integers(0, 65535))
frames = st.one_of(
    host_adverts,                                                         # someone else's MAC / IP / TTL 0
    st.builds(probe_frame, st.sampled_from([d for d, _p in SWITCH_PORTS]), st.integers(0, 2 ** 32 - 1),
              st.one_of(st.none(), st.binary(min_size=16, max_size=16), st.binary(max_size=40)), macs),
    st.builds(lambda dp, sig, src: probe_frame(dp[0], dp[1], sig, src), st.sampled_from(SWITCH_PORTS),
              st.one_of(st.none(), st.binary(min_size=16, max_size=16)), macs),  # foreign chassis ids
    st.builds(raw_lldp, macs, st.lists(st.tuples(st.integers(0, 127), st.integers(0, 511), st.binary(max_size=40)),
                                       max_size=8)),                      # malformed TLVs
    st.builds(mutate, host_adverts, edits),
    st.builds(mutate, st.builds(lambda dp: lldp.build_probe(dp[0], dp[1], "0a:00:00:00:00:01", 4, SIM.core.probe_key),
                                st.sampled_from(SWITCH_PORTS)), edits),   # a probe signed with another key
    st.builds(lambda mac, ip: arp_frame(1, mac, ip, "00:00:00:00:00:00", ip), macs, ips),  # gratuitous ARP
    st.builds(lambda op, smac, sip, dmac, dip, esrc: arp_frame(op, smac, sip, dmac, dip, eth_src=esrc),
              st.integers(0, 5), macs, ips, macs, ips, macs),
    st.builds(lambda mac, ip, hlen, plen: arp_frame(1, mac, ip, "00:00:00:00:00:00", ip, hlen=hlen, plen=plen),
              macs, ips, st.integers(0, 255), st.integers(0, 255)),
    st.builds(mutate, st.builds(lambda mac, ip: arp_frame(2, mac, ip, HOSTS[1], IPS[1]), macs, ips), edits),
    st.builds(lambda src, dst, sip, dip: ipv4_frame(src, dst, sip, dip), macs, macs, ips, ips),
)


def placement(sim):
    return {mac: (h.dpid, h.port, h.ip) for mac, h in sim.core.topology.hosts.items()}


def test_hostile_frames_never_move_a_confirmed_host():
    sent = []

    @SETTINGS
    @given(st.lists(frames, min_size=12, max_size=60))
    def burst_from_one_port(burst):
        sim = discovered()
        before, links = placement(sim), dict(sim.core.topology.links)
        for frame in burst:
            sim.host_send(ATTACKER, frame)
        sent.append(len(burst))
        sim.tick(1.0)
        sim.recompute()
        after = placement(sim)
        for mac in VICTIMS:
            assert after.get(mac) == before[mac], mac
        assert {m: p for m, p in after.items() if p[:2] != sim.host_port[ATTACKER]} == {m: before[m] for m in VICTIMS}
        assert {k: (v.dpid, v.port) for k, v in sim.core.topology.links.items()} == \
            {k: (v.dpid, v.port) for k, v in links.items()}
        for src in VICTIMS[:2]:
            for dst in VICTIMS:
                if dst != src:
                    assert {outcome for outcome, _hops in sim.trace(src, sim.host_ip[dst])} == {("host", dst)}

    burst_from_one_port()
    print("\nhostile frames: %d in %d bursts" % (sum(sent), len(sent)))
    assert sum(sent) >= 10000


def test_a_signed_probe_replayed_at_its_own_port_makes_no_link():
    sim = discovered()
    dpid, port = sim.host_port[ATTACKER]
    replay = lldp.build_probe(dpid, port, "0a:00:00:00:00:01", 4, sim.core.probe_key)
    sim.host_send(ATTACKER, replay)
    assert (dpid, port) not in sim.core.topology.links and ATTACKER in sim.core.topology.hosts


def test_a_forged_probe_is_refused_and_counted():
    sim = discovered()
    victim_port = sim.host_port[VICTIMS[0]]
    malformed = sim.core.counters["malformed"]
    for signature in (None, bytes(16), lldp.probe_signature(b"another key", *victim_port)):
        sim.host_send(ATTACKER, probe_frame(*victim_port, signature, ATTACKER))
    assert sim.core.counters["malformed"] == malformed + 3
    assert VICTIMS[0] in sim.core.topology.hosts and victim_port not in sim.core.topology.links


@pytest.mark.parametrize("claim", ["lldp", "arp"])
def test_a_host_shows_up_elsewhere_only_after_its_port_went_down(claim):
    sim = discovered()
    victim = VICTIMS[-1]
    ip = sim.host_ip[victim]
    frame = lldp_host_frame(victim, ip, "moved") if claim == "lldp" else arp_frame(1, victim, ip, "00:00:00:00:00:00", ip)
    sim.host_send(ATTACKER, frame)
    topo = sim.core.topology
    assert (topo.hosts[victim].dpid, topo.hosts[victim].port) == sim.host_port[victim]
    refused = topo.refused
    assert refused > 0 and sim.core.stats_json()["host_claims_refused"] == refused
    dpid, port = sim.host_port[victim]
    sim.run(sim.core.port_status(sim.dps[dpid], port, sim.ports[dpid][port], False))
    assert victim not in topo.hosts
    sim.host_send(ATTACKER, frame)
    assert (topo.hosts[victim].dpid, topo.hosts[victim].port) == sim.host_port[ATTACKER]
    assert topo.host_by_ip(ip).mac == victim
