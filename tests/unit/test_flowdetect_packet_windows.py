"""controller/flowdetect.py: the ACK rule's packets per interval (`FlowDetection.packets`) and the
flags, poll by poll, at a span of one poll and of two polls (--sdnmpi-flow-span = interval and
2 x interval), from made-up cumulative readings with every irregularity the counting entries have:
a switch that reports no packet count (OpenFlow's all ones), a switch whose reply is missing, a
counter that restarted (the entry was re-installed) and a job that ended and came back (its
pairs forgotten and counted anew). The packets are differenced over the window ending at the
poll, by the bytes' rules (flows.tracker.packets_counted). On a simulated k=4 fat-tree
(conftest.FabricSim)."""
import pytest

from sdnmpi import flows
from sdnmpi.controller import flowcount, flowdetect

from test_flowdetect import FRAME, LINK, answer, fab, register  # noqa: F401  (fab: the fixture)

U = flowcount.UNAVAILABLE
# per poll: a's share of the link and its cumulative packets (U: its switch keeps none this poll);
# c sends at 0.6 of the link throughout, its switch silent at poll 3
A_SHARE = [0, 0.6, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0.6, 0.9, 0.9]
A_PACKETS = [0, 10, 30, 60, U, 100, 5, 20, 20, 20, 25, 50, 80, 120]
C_SHARE, C_SILENT = 0.6, 3


def _edge_of(sim, pair):
    """The switch whose counting table holds ``pair``'s entry."""
    from test_flowdetect import _ip
    for dpid, sw in sim.switches.items():
        for flow in sw.counting.values():
            fields = {name: value for name, value, _mask in flow.key}
            if "ipv4_src" in fields and (_ip(fields["ipv4_src"]), _ip(fields["ipv4_dst"])) == pair:
                return dpid
    raise AssertionError("no counting entry for %r" % (pair,))


def _poll(sim, jobs, service, fd, sent, packets, silent=None):
    """One poll answered from ``sent`` / ``packets``; the switch ``silent`` does not reply."""
    sim.run(fd.poll(sim.core, jobs))
    if silent is None:
        answer(sim, fd, sent, packets)
    else:
        saved = sim.switches.pop(silent)
        try:
            answer(sim, fd, sent, packets)
        finally:
            sim.switches[silent] = saved
    return fd.detect(service)


def _run(fab, polls):
    """Flags and packets per poll: a (host 0 -> host 8) at A_SHARE of the link with A_PACKETS, c
    (host 4 -> host 12) at C_SHARE in full frames, its switch silent at poll C_SILENT; then the job
    ends and comes back with a and c counted anew. Also returns the detection's counters."""
    sim, jobs, service = fab
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    ip = sim.host_ip
    a, c = (ip[hosts[0]], ip[hosts[8]]), (ip[hosts[4]], ip[hosts[12]])
    clf = flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=2, fraction=0.1)
    fd = flowdetect.FlowDetection(clf, window_polls=polls)
    _poll(sim, jobs, service, fd, {}, {})
    silent = _edge_of(sim, c)
    assert silent != _edge_of(sim, a)
    sent = {a: 0, c: 0}
    c_packets = 0
    flags, packets = [], []
    for k, (share, a_packets) in enumerate(zip(A_SHARE, A_PACKETS)):
        sent[a] += int(share * LINK / polls)
        sent[c] += int(C_SHARE * LINK / polls)
        c_packets += _frames(polls)
        found = _poll(sim, jobs, service, fd, dict(sent), {a: a_packets, c: c_packets},
                      silent if k == C_SILENT else None)
        flags.append(sorted((s, d, delay) for s, d, delay in found.get(job.id, [])))
        packets.append((fd.packets.get(a), fd.packets.get(c)))
    jobs.remove(job.id, "ended")
    _poll(sim, jobs, service, fd, {}, {})
    again = register(sim, jobs, hosts)
    found = _poll(sim, jobs, service, fd, {a: 500 * FRAME, c: 9 * FRAME}, {a: 500, c: 9})
    flags.append(sorted((s, d, delay) for s, d, delay in found.get(again.id, [])))
    packets.append((fd.packets.get(a), fd.packets.get(c)))
    return a, c, flags, packets, fd.counters


def _frames(polls):
    """c's packets per poll."""
    return -(-int(C_SHARE * LINK / polls) // FRAME)


def test_packets_and_flags_at_a_span_of_one_poll(fab):
    a, c, flags, packets, counters = _run(fab, 1)
    # a: unknown at the poll without a count and the one after; a restart (poll 6) counts its reading
    assert [p[0] for p in packets] == [0, 10, 20, 30, None, None, 5, 15, 0, 0, 5, 25, 30, 40, 500]
    # c: its first reading is all of it; the poll its switch is silent, nothing; the next poll the
    # difference from its last reading (two polls' packets); counted anew after the job came back
    f = _frames(1)
    assert [p[1] for p in packets] == [f, f, f, None, 2 * f] + [f] * 9 + [9]
    # c at its first poll, a at its first bytes; a quiet for 3 polls (polls 4-6: stale, rearmed) is
    # flagged again at its next bytes (poll 11)
    assert flags == [[(*c, 1)], [(*a, 1)]] + [[]] * 9 + [[(*a, 1)]] + [[]] * 3
    assert (counters["stale_pairs"], counters["elephants"]) == (1, 3)


def test_packets_and_flags_at_a_span_of_two_polls(fab):
    a, c, flags, packets, counters = _run(fab, 2)
    # each phase's readings differenced: polls 0, 2, 4, ... and 1, 3, 5, ...: unknown at poll 4 (no
    # count) and at poll 6 (its phase had none at poll 4); a restart (poll 7, 20 after 100) counts
    # its reading. The rearm at poll 10 (a stale) sets every phase's readings to poll 10's, packets
    # as bytes: poll 11's packets are the difference from poll 10's reading (25), not poll 9's (20)
    assert [p[0] for p in packets] == [0, 10, 30, 50, None, 40, None, 20, 15, 0, 5, 25, 55, 70, 500]
    # c's switch silent at poll 3: poll 3 unknown, poll 5 differenced from poll 1 (four polls' packets)
    f = _frames(2)
    assert [p[1] for p in packets] == [f, 2 * f, 2 * f, None, 2 * f, 4 * f] + [2 * f] * 8 + [9]
    # a quiet for 6 polls (the windows ending at polls 5-10: stale at 10, rearmed) is flagged again
    # at poll 11, from the bytes after poll 10
    assert flags == [[(*c, 1)], [(*a, 1)]] + [[]] * 9 + [[(*a, 1)]] + [[]] * 3
    assert (counters["stale_pairs"], counters["elephants"]) == (1, 3)


@pytest.mark.parametrize("polls", [1, 2])
def test_the_packets_of_an_interval_follow_the_book_through_forget(fab, polls):
    """After the job ended and came back its pairs are counted anew: their first reading is all of it."""
    _a, _c, _flags, packets, _counters = _run(fab, polls)
    assert packets[-1] == (500, 9)
