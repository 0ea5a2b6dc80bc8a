"""A host forging frames from its own port (audit 44): the hosts it can add at its port are capped
(topology.MAX_HOSTS_PER_PORT), and the ARP probes it can cause are bounded (arp.ProbeBudget), so
its flood neither grows the controller's tables nor fills the switches' flow tables."""
import logging

import pytest
from ryu.lib import dpid as dpid_lib

from conftest import FabricSim, arp_frame, lldp_host_frame
from operator_harness import Operated
from sdnmpi.controller import arp, sparselog
from sdnmpi.controller import topology as T
from sdnmpi.primitives import fattree

FORGED = 2000


def forged(i):
    """A unicast source MAC and an IP no real host has, the i-th of a forging host's claims."""
    return "02:00:00:%02x:%02x:%02x" % (i >> 16 & 255, i >> 8 & 255, i & 255), "10.99.%d.%d" % (i // 250, i % 250 + 1)


def placement(sim):
    return {mac: (h.dpid, h.port, h.ip) for mac, h in sim.core.topology.hosts.items()}


def test_forged_macs_on_one_port_are_capped(caplog):
    op = Operated()
    sim, core = op.fab, op.core
    attacker, victims = sim.hosts()[0], sim.hosts()[1:]
    before = placement(sim)
    assert len(before) == 8
    caplog.set_level(logging.WARNING, logger="sdnmpi.controller.topology")
    for i in range(FORGED):
        mac, ip = forged(i)
        sim.host_send(attacker, arp_frame(2, mac, ip, attacker, sim.host_ip[attacker], eth_src=mac))
    hosts = core.topology.hosts
    assert len(hosts) <= 8 + T.MAX_HOSTS_PER_PORT
    assert core.topology.hosts_at(*sim.host_port[attacker]) == T.MAX_HOSTS_PER_PORT
    after = placement(sim)
    assert {m: after[m] for m in before} == before   # every host kept, the attacker's own too
    assert {p[:2] for m, p in after.items() if m not in before} == {sim.host_port[attacker]}
    refused = FORGED - (T.MAX_HOSTS_PER_PORT - 1)
    stats = core.stats_json()
    assert stats["hosts_refused_port_full"] == refused and stats["host_claims_refused"] == 0
    scraped = op.metrics.exposition().decode()
    assert "sdnmpi_hosts_refused_port_full_total %.1f" % refused in scraped
    full = [r for r in caplog.records if "full ports" in r.getMessage()]
    assert len(full) == sum(sparselog.due(n) for n in range(1, refused + 1)) == 118   # not one per frame
    assert all("\n" not in r.getMessage() for r in full)
    # one route pass: a route per switch for each of the port's extra hosts, not one per forged frame
    msgs = core.recompute_routes()
    assert 0 < len(msgs) <= (T.MAX_HOSTS_PER_PORT - 1) * len(sim.switch_ids)
    sim.run(msgs)
    for src in victims[:2]:
        for dst in victims:
            if dst != src:
                assert {outcome for outcome, _hops in sim.trace(src, sim.host_ip[dst])} == {("host", dst)}


def test_a_full_port_keeps_its_hosts_and_frees_slots_when_they_leave():
    topo = T.Topology()
    topo.add_switch(1, {1: "a", 2: "b"})
    macs = [forged(i)[0] for i in range(T.MAX_HOSTS_PER_PORT + 1)]
    for i, mac in enumerate(macs[:-1]):
        assert topo.learn_host(mac, "10.0.1.%d" % (i + 1), 1, 1, T.SOURCE_ARP, 10.0) is True
    for source in (T.SOURCE_LLDP, T.SOURCE_ARP, T.SOURCE_IPV4):
        assert topo.learn_host(macs[-1], "10.0.1.99", 1, 1, source, 11.0, ttl=120) is False
    assert macs[-1] not in topo.hosts and topo.port_full == 3 and topo.refused == 0
    # the port's own hosts still update; the other port is not affected
    assert topo.learn_host(macs[0], "10.0.1.50", 1, 1, T.SOURCE_IPV4, 12.0) is True
    assert topo.learn_host(macs[1], None, 1, 1, T.SOURCE_LLDP, 12.0, name="vm1", ttl=120) is False
    assert topo.hosts[macs[1]].source == T.SOURCE_LLDP and topo.hosts[macs[1]].expires == 132.0
    assert topo.learn_host(macs[-1], "10.0.2.1", 1, 2, T.SOURCE_ARP, 12.0) is True
    # a host leaving (its LLDP hold expiring) frees its slot
    assert topo.expire(200.0, 1000) is True and macs[1] not in topo.hosts
    assert topo.learn_host("02:aa:00:00:00:01", "10.0.1.98", 1, 1, T.SOURCE_ARP, 201.0) is True
    assert topo.port_full == 3


def test_a_host_moving_to_a_port_is_still_learned():
    """Hosts that moved (their old port went down) are learned at the new port; the cap only
    counts the hosts at that one port."""
    sim = FabricSim(fattree.leaf_spine(2, 4, 2))
    sim.discover()
    topo = sim.core.topology
    mover, other = sim.hosts()[-1], sim.hosts()[0]
    dpid, port = sim.host_port[mover]
    sim.run(sim.core.port_status(sim.dps[dpid], port, sim.ports[dpid][port], False))
    sim.host_send(other, lldp_host_frame(mover, sim.host_ip[mover], "moved"))
    assert (topo.hosts[mover].dpid, topo.hosts[mover].port) == sim.host_port[other]
    assert topo.port_full == 0 and topo.hosts_at(*sim.host_port[other]) == 2


def test_arp_probe_table_is_bounded(caplog):
    caplog.set_level(logging.WARNING, logger="sdnmpi.controller.core")
    sim = FabricSim(fattree.leaf_spine(2, 4, 2))
    sim.discover()
    core = sim.core
    hosts = sim.hosts()
    asker = hosts[0]

    def ask(host, target):
        sim.now += 0.0001
        sim.host_send(host, arp_frame(1, host, sim.host_ip[host], "00:00:00:00:00:00", target))

    for i in range(5000):
        ask(asker, "10.200.%d.%d" % (i // 250, i % 250 + 1))
    per_port, most = arp.PROBES_PER_PORT, arp.PROBES_MAX
    assert core.counters["arp_probes"] == per_port and core.counters["arp_probes_limited"] == 5000 - per_port
    assert len(core.probes) == per_port
    assert core.stats_json()["arp_probes_limited"] == 5000 - per_port
    limited = [r.getMessage() for r in caplog.records if "over the probe budget" in r.getMessage()]
    assert len(limited) == sum(sparselog.due(n) for n in range(1, 5001 - per_port)) == 148   # not one per request
    assert limited[0] == "ARP probes refused over the probe budget (1 so far): probe for 10.200.0.%d asked by " \
                         "%s:%d" % (per_port + 1, dpid_lib.dpid_to_str(sim.host_port[asker][0]), sim.host_port[asker][1])
    # another host's request is still probed: one port's flood uses only its own budget
    probes = core.counters["arp_probes"]
    ask(hosts[1], "10.201.0.1")
    assert core.counters["arp_probes"] == probes + 1
    # every port at once: at most PROBES_MAX per window in all
    for n, host in enumerate(hosts):
        for i in range(per_port):
            ask(host, "10.202.%d.%d" % (n, i + 1))
    assert len(core.probes) == most and core.counters["arp_probes"] == most
    # a quiet window later the table holds only the newest probe, and the asker is served again
    sim.now += arp.PROBE_HOLDOFF
    ask(asker, "10.203.0.1")
    assert len(core.probes) == 1 and core.counters["arp_probes"] == most + 1
    # the same IP again within the hold-off is held, not counted as limited
    limited = core.counters["arp_probes_limited"]
    ask(hosts[2], "10.203.0.1")
    assert core.counters["arp_probes"] == most + 1 and core.counters["arp_probes_limited"] == limited


@pytest.mark.parametrize("gap", [0.0, 0.5])
def test_probe_budget_holds_off_each_ip_for_a_window(gap):
    budget = arp.ProbeBudget()
    assert budget.take("10.0.0.9", (1, 1), 5.0) == arp.PROBE
    assert budget.take("10.0.0.9", (1, 2), 5.0 + gap) == arp.PROBE_HELD
    assert budget.take("10.0.0.9", (1, 2), 5.0 + arp.PROBE_HOLDOFF) == arp.PROBE
    assert len(budget) == 1 and dict(budget.per_port) == {(1, 2): 1}
