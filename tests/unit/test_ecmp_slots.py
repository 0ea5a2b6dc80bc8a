"""ECMP SELECT groups decorrelated per switch (ofmsgs.select_slots): each port equally often, an
order of its own on every switch, so that two switches in a row that hash the same value (OVS's
dp_hash: one symmetric L3/L4 hash, the same on every bridge) do not make the same choice."""
import collections

import pytest
from ryu.ofproto import ofproto_v1_3 as OFP

from sdnmpi.controller import ofmsgs
from sdnmpi.primitives import fabric, fattree

from frame_builders import ipv4_frame
from switch_sim import FakeDatapath


@pytest.mark.parametrize("ports", [(2, 3), (1, 2, 3), (4, 3, 2, 1), (7,)])
def test_select_slots_balanced_ports_first_and_salted(ports):
    slots = ofmsgs.select_slots(ports, 0x101)
    assert slots[:len(ports)] == ports                      # readers find the port set in order
    counts = collections.Counter(slots)
    assert set(counts) == set(ports) and len(set(counts.values())) == 1   # equal weights per port
    assert len(slots) == len(ports) * (ofmsgs.ECMP_HASH_SLOTS // len(ports))
    assert ofmsgs.select_slots(ports, 0x101) == slots        # the same switch: the same group
    if len(ports) > 1:
        others = {ofmsgs.select_slots(ports, salt) for salt in range(0x102, 0x10a)}
        assert len(others - {slots}) >= 7                    # other switches: other orders


def test_group_select_buckets_follow_the_switch_slots():
    dp = FakeDatapath(0x20304)
    msg = ofmsgs.group_select(dp, OFP.OFPGC_ADD, 0x1000, (2, 3))
    assert msg.type == OFP.OFPGT_SELECT and msg.group_id == 0x1000
    assert tuple(b.actions[0].port for b in msg.buckets) == ofmsgs.select_slots((2, 3), 0x20304)
    assert {b.weight for b in msg.buckets} == {1} and all(len(b.actions) == 1 for b in msg.buckets)


def _cores_used(make_fabric, flows=64):
    """{core dpid: flows} of ``flows`` packets (different payloads: different hashes) from the
    first host to a host in another pod of a k=4 tree under ECMP, as the simulated fabric forwards
    them (a SELECT group takes bucket crc32(frame) % buckets: one hash, the same on every switch)."""
    sim = make_fabric(fattree.kary(4), routing="ecmp")
    sim.discover()
    heights = fabric.heights(sim.graph)
    cores = {d for d in sim.switch_ids if heights[d] == max(heights.values())}
    src, dst = sim.hosts()[0], sim.hosts()[-1]
    seen = collections.Counter()
    arrive = sim._arrive

    def spy(dpid, in_port, data, hops):
        if dpid in cores:
            seen[dpid] += 1
        arrive(dpid, in_port, data, hops)

    sim._arrive = spy
    before = len(sim.inbox[dst])
    for n in range(flows):
        sim.host_send(src, ipv4_frame(src, dst, sim.host_ip[src], sim.host_ip[dst], b"flow %d" % n))
    assert len(sim.inbox[dst]) - before == flows           # every packet delivered
    return cores, seen


def test_ecmp_spreads_flows_over_every_core(make_fabric):
    cores, seen = _cores_used(make_fabric)
    assert set(seen) == cores, seen
    assert max(seen.values()) <= 2 * 64 // len(cores), seen


def test_one_bucket_per_port_polarises(make_fabric, monkeypatch):
    """The cause it removes: with one bucket per port (ports in order) the edge and aggregation
    switches choose alike, and half the cores carry nothing."""
    monkeypatch.setattr(ofmsgs, "select_slots", lambda ports, salt: tuple(ports))
    cores, seen = _cores_used(make_fabric)
    assert len(seen) == len(cores) // 2, seen
