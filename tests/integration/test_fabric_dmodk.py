"""2-tier fabric, policy dmodk, hosts running lldpd: discovery, pingall without storms, TCP,
D-mod-K paths in the flow tables, link failure."""
import subprocess
import time

import pytest

from sdnmpi.controller import constants as C
from sdnmpi.mininet_topos import controller_proc

import ofdump
from fabric_helpers import (HPL, LEAVES, N, PING_TIMEOUT, SPINES, bridge, iperf, ip, leaf_dpid, leaf_of,
                            leaf_spine_fabric, spine_dpid, wait_for, wait_for_routes)


@pytest.fixture(scope="module")
def dmodk(tmp_path_factory):
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("dmodk")) as (ctl, fab):
        yield ctl, fab


def test_every_switch_link_and_host_is_discovered(dmodk):
    ctl, _fab = dmodk
    topo = ctl.rest("/sdnmpi/topology")
    assert sorted(s["dpid"] for s in topo["switches"]) == sorted(
        [spine_dpid(s) for s in range(1, SPINES + 1)] + [leaf_dpid(l) for l in range(1, LEAVES + 1)])
    links = {tuple(sorted(((l["src"]["dpid"], l["src"]["port"]), (l["dst"]["dpid"], l["dst"]["port"]))))
             for l in topo["links"]}
    expected = {tuple(sorted(((leaf_dpid(l), HPL + s), (spine_dpid(s), l))))
                for l in range(1, LEAVES + 1) for s in range(1, SPINES + 1)}
    assert links == expected
    hosts = {h["ip"]: h for h in topo["hosts"]}
    assert sorted(hosts) == sorted(ip(n) for n in range(1, N + 1))
    for n in range(1, N + 1):
        h = hosts[ip(n)]
        assert h["mac"] == "00:00:00:00:00:%02x" % n
        assert (h["dpid"], h["port"]) == (leaf_dpid(leaf_of(n)), (n - 1) % HPL + 1)
        assert h["source"] == "lldp"


def test_pingall_loses_nothing_and_never_storms(dmodk):
    ctl, fab = dmodk
    before = ctl.rest("/sdnmpi/stats")["packet_in"]
    t0 = time.monotonic()
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    elapsed = time.monotonic() - t0
    after = ctl.rest("/sdnmpi/stats")["packet_in"]
    non_lldp = sum(after[k] - before[k] for k in ("arp", "ipv4", "other"))
    # Without flooding, each ordered host pair costs at most a few ARP packet-ins; a storm costs
    # thousands. LLDP: one frame per host and one probe per switch port end per second.
    assert non_lldp <= 4 * N * (N - 1), (before, after)
    lldp_sources = N + 2 * SPINES * LEAVES + N
    assert after["lldp"] - before["lldp"] <= lldp_sources * (elapsed + 3) * 1.5, (before, after, elapsed)
    assert ctl.rest("/sdnmpi/stats")["handler_errors"] == 0


def test_tcp_between_leaves(dmodk):
    _ctl, fab = dmodk
    h1, hn = fab.net.get("h1"), fab.net.get("h%d" % N)
    assert leaf_of(1) != leaf_of(N)
    assert iperf(fab, h1, hn) > 1_000_000


def test_dmodk_flows_follow_destination_mod_spines(dmodk):
    _ctl, fab = dmodk
    for leaf in range(1, LEAVES + 1):
        routes = ofdump.routes(bridge(fab, leaf_dpid(leaf)), C.PRIORITY_ROUTE)
        assert len(routes) == N
        for n in range(1, N + 1):
            if leaf_of(n) == leaf:
                assert routes[ip(n)] == "output:%d" % ((n - 1) % HPL + 1)
            else:  # destination index n-1 (hosts sorted by IP) mod number of spines
                assert routes[ip(n)] == "output:%d" % (HPL + 1 + (n - 1) % SPINES)
    for spine in range(1, SPINES + 1):
        routes = ofdump.routes(bridge(fab, spine_dpid(spine)), C.PRIORITY_ROUTE)
        assert routes == {ip(n): "output:%d" % leaf_of(n) for n in range(1, N + 1)}


def test_link_down_reroutes_and_pingall_still_loses_nothing(dmodk):
    ctl, fab = dmodk
    leaf, spine = bridge(fab, leaf_dpid(1)), bridge(fab, spine_dpid(1))
    fab.net.configLinkStatus(leaf, spine, "down")
    try:
        controller_proc.wait_for_links(ctl, SPINES * LEAVES - 1)
        wait_for(lambda: "output:%d" % (HPL + 1) not in ofdump.routes(leaf, C.PRIORITY_ROUTE).values(), 10,
                 "routes off the failed uplink")
        assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    finally:
        fab.net.configLinkStatus(leaf, spine, "up")
    controller_proc.wait_for_links(ctl, SPINES * LEAVES)
    wait_for(lambda: "output:%d" % (HPL + 1) in ofdump.routes(leaf, C.PRIORITY_ROUTE).values(), 10,
             "routes back on the uplink")
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0


def test_switch_down_and_up_updates_topology_and_routes(dmodk):
    ctl, fab = dmodk
    spine = bridge(fab, spine_dpid(1))
    target = subprocess.run(["ovs-vsctl", "get-controller", spine], check=True, capture_output=True,
                            text=True).stdout.split()
    subprocess.run(["ovs-vsctl", "del-controller", spine], check=True)  # the controller loses the switch
    try:
        wait_for(lambda: len(ctl.rest("/sdnmpi/switches")) == SPINES + LEAVES - 1
                 and len(ctl.rest("/sdnmpi/links")) == (SPINES - 1) * LEAVES, 15, "the spine to leave")
        for leaf in range(1, LEAVES + 1):
            wait_for(lambda: "output:%d" % (HPL + 1) not in ofdump.routes(bridge(fab, leaf_dpid(leaf)),
                                                                            C.PRIORITY_ROUTE).values(),
                     10, "routes off the lost spine")
        assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    finally:
        subprocess.run(["ovs-vsctl", "set-controller", spine, *target], check=True)
    wait_for(lambda: len(ctl.rest("/sdnmpi/switches")) == SPINES + LEAVES
             and len(ctl.rest("/sdnmpi/links")) == SPINES * LEAVES, 20, "the spine to come back")
    wait_for_routes(fab, N)
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
