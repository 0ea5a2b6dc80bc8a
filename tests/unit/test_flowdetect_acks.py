"""controller/flowdetect.py `_data_pairs`: which busy pairs carry data and which only carry the TCP
ACKs of their reverse pair's data, judged from the payload in the counting entries' bytes and
packets (one ACK_FRAME of headers per packet), and what that changes for the choice among planned,
installed and default routes (`_choice`), on a simulated k=4 fat-tree (conftest.FabricSim). The
mismatch check's side: test_flowdetect_declared.py."""
import logging
import random

import pytest

from sdnmpi.controller import flowcount, flowdetect
from sdnmpi.primitives import PAIR_ROUTERS, fabric, pairs, reroute

from test_flowdetect import FRAME, LINK, Tcp, fab, poll, register, threshold  # noqa: F401  (fab: the fixture)

SEED = 37     # a random permutation of the 16 hosts (random.Random(SEED).shuffle) with 11 pairs across edges


def _permutation(sim):
    order = sim.hosts()
    random.Random(SEED).shuffle(order)
    edge = {h: fabric.attachment(sim.graph, h)[0] for h in sim.hosts()}
    return [pairs.Flow(a, b, 1) for a, b in zip(sim.hosts(), order) if edge[a] != edge[b]]


def _unknown(fd):
    """Packet counts of switches that keep none (all ones, as OpenFlow has it)."""
    return {p: flowcount.UNAVAILABLE for p in fd.counting.job_of}


@pytest.mark.parametrize("packets", ["kept", "not kept"])
def test_a_permutation_with_its_ack_streams_is_planned(fab, caplog, packets):
    """Every pair of a permutation is flagged at once, at 90 % of its link; its reverse pair
    carries its ACKs (2 % of the link: busy). D-mod-K puts 2 of its flows on a link, the planner 1.
    Scored as flows, the ACK streams made the plan look as loaded as D-mod-K (2 flows each) and the
    busy set as dense as an all-to-all (every host sends two streams), so the tie went to the
    default routes (found on Mininet: bench/results/release-20261129T041525Z)."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal")
    job = register(sim, jobs, sim.hosts())
    perm = _permutation(sim)
    graph = sim.core.topology.graph()
    default = PAIR_ROUTERS["dmodk"](graph, perm)
    assert len(perm) == 11 and reroute.busiest(graph, perm, {}, default) == 2
    ip = {f: (sim.host_ip[f.src], sim.host_ip[f.dst]) for f in perm}
    tcp = Tcp().send({ip[f]: int(0.9 * LINK) for f in perm})
    acks = {p[::-1] for p in ip.values()} - set(ip.values())
    assert acks
    poll(sim, jobs, service, fd, {})
    with caplog.at_level(logging.INFO, logger="sdnmpi.controller.flowdetect"):
        found, _ = poll(sim, jobs, service, fd, tcp.bytes, tcp.packets if packets == "kept" else _unknown(fd))
    assert any("%d busy pairs carry only TCP ACKs: left out of the routing choice" % len(acks) in r.getMessage()
               for r in caplog.records)
    assert sorted(found[job.id]) == sorted((*p, 1) for p in ip.values())
    assert acks <= set(fd._busy(job.id)) and fd._data_pairs(fd._busy(job.id)) == sorted(ip.values())
    # routed: the planner's paths, 1 flow on the busiest link
    assert fd.counters["routed"] == 11 and "left_to_fabric" not in fd.counters
    routes = job.traffic.routes[0]
    assert routes.router == "sdn-optimal" and routes.fabric_policy is None and job.flows()
    assert reroute.busiest(graph, perm, routes.paths, default) == 1
    sim.check_job_routes(job)
    sim.check_tables_consistent()


def test_the_payload_tells_an_ack_stream_from_a_data_pair(fab):
    """a -> b at 90 % of the link: b -> a carries only its ACKs. c -> d at 5 %, d -> c at 90 % (a halo
    pair next to a heavy one): c -> d carries its data and d -> c's ACKs, 7 % of the link in all,
    under ACK_SHARE of d -> c's bytes, but 4.8 % in payload. Only the packets tell the two apart:
    a switch that keeps no packet counts leaves the byte ratio, which takes c -> d for ACKs."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    job = register(sim, jobs, sim.hosts())
    a, b, c, d = (sim.host_ip[h] for h in sim.hosts()[0:16:4])
    tcp = Tcp()
    poll(sim, jobs, service, fd, {})
    for _ in range(2):
        tcp.send({(a, b): int(0.9 * LINK), (c, d): int(0.05 * LINK), (d, c): int(0.9 * LINK)})
        poll(sim, jobs, service, fd, tcp.bytes, tcp.packets)
        busy = fd._busy(job.id)
        assert busy == sorted([(a, b), (b, a), (c, d), (d, c)])
        latest = fd.book.latest()
        assert latest[c, d] < flowdetect.ACK_SHARE * latest[d, c] and latest[b, a] > 0.01 * LINK
        assert fd._data_pairs(busy) == sorted([(a, b), (c, d), (d, c)])
    # a switch without packet counts: the byte ratio
    tcp.send({(a, b): int(0.9 * LINK), (c, d): int(0.05 * LINK), (d, c): int(0.9 * LINK)})
    poll(sim, jobs, service, fd, tcp.bytes, _unknown(fd))
    assert fd.packets == {} and fd._data_pairs(fd._busy(job.id)) == sorted([(a, b), (d, c)])
    # packet counts again: the first interval is still unknown (the packets since the last count
    # span the interval without one), the next is judged by its payload
    for known in (False, True):
        tcp.send({(a, b): int(0.9 * LINK), (c, d): int(0.05 * LINK), (d, c): int(0.9 * LINK)})
        poll(sim, jobs, service, fd, tcp.bytes, tcp.packets)
        assert bool(fd.packets) == known and ((c, d) in fd.packets) == known
        assert fd._data_pairs(fd._busy(job.id)) == sorted([(a, b), (d, c)] + [(c, d)] * known)
    frames = -(-int(0.9 * LINK) // FRAME)
    assert fd.packets[b, a] == -(-frames // 2) and fd.packets[a, b] == frames     # ACKs, data frames


def test_a_poll_reads_the_counting_tables_once(fab, monkeypatch):
    """`detect` copies the poll's readings once and hands them to the book, which counts the packets
    (`PairCounters.poll`); the packets per interval are what they were: the first poll's whole, then the
    difference, unknown without a count and in the interval after one."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    register(sim, jobs, sim.hosts())
    a, b = (sim.host_ip[h] for h in sim.hosts()[0:8:4])
    calls = []
    for name in ("readings", "packet_readings"):
        real = getattr(fd.counting, name)
        monkeypatch.setattr(fd.counting, name, lambda real=real, name=name: calls.append(name) or real())
    tcp = Tcp()
    seen = []
    for known in (True, True, False, True, True):
        tcp.send({(a, b): int(0.5 * LINK)})
        calls.clear()
        poll(sim, jobs, service, fd, tcp.bytes, tcp.packets if known else _unknown(fd))
        assert sorted(calls) == ["packet_readings", "readings"]
        seen.append(fd.packets.get((a, b)))
    frames = -(-int(0.5 * LINK) // FRAME)
    assert seen == [frames, frames, None, None, frames]
