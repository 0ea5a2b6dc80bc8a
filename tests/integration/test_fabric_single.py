"""2-tier fabric, policy single, hosts that send no LLDP (learned from ARP and IPv4) and one that
runs Debian's standard lldpd instead of ours."""
import os
import subprocess

import pytest

from sdnmpi.controller import constants as C

import ofdump
from fabric_helpers import (HPL, LEAVES, N, PING_TIMEOUT, bridge, ip, leaf_dpid, leaf_of, leaf_spine_fabric,
                            spine_dpid, wait_for)


@pytest.fixture(scope="module")
def single_no_lldp(tmp_path_factory):
    """Policy `single`, and hosts that send no LLDP: they are learned from ARP and IPv4."""
    with leaf_spine_fabric("single", tmp_path_factory.mktemp("single"), lldpd=False) as (ctl, fab):
        yield ctl, fab


def test_a_standard_lldp_agent_is_discovered(single_no_lldp):
    """Debian's lldpd (not ours) on h1: the controller learns h1's MAC, IP and attachment from it,
    before h1 sends any traffic, and forgets it when the agent shuts down (its TTL-0 frame)."""
    ctl, fab = single_no_lldp
    h1 = fab.net.get("h1")
    sock = "/tmp/sdnmpi-test-lldpd-%d.sock" % os.getpid()  # a short path lldpd's privsep can reach
    agent = h1.popen(["lldpd", "-d", "-u", sock, "-I", h1.defaultIntf().name, "-m", h1.IP()],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: h1.cmd("lldpcli -u %s resume && lldpcli -u %s configure lldp tx-interval 1 "
                                "&& echo resumed" % (sock, sock)).strip().endswith("resumed"), 10, "lldpd to start")
        entry = wait_for(lambda: next((h for h in ctl.rest("/sdnmpi/hosts") if h["mac"] == h1.MAC()), None), 15,
                         "the controller to learn h1 from Debian's lldpd")
        assert (entry["ip"], entry["source"]) == (h1.IP(), "lldp")
        assert (entry["dpid"], entry["port"]) == (leaf_dpid(1), 1)
    finally:
        agent.terminate()
        agent.communicate(timeout=10)   # reaps it and closes its stderr pipe
        if os.path.exists(sock):
            os.unlink(sock)
    wait_for(lambda: all(h["mac"] != h1.MAC() for h in ctl.rest("/sdnmpi/hosts")), 20, "h1 to be forgotten")


def test_hosts_without_lldp_are_learned_from_arp(single_no_lldp):
    ctl, fab = single_no_lldp
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    hosts = ctl.rest("/sdnmpi/topology")["hosts"]
    assert sorted(h["ip"] for h in hosts) == sorted(ip(n) for n in range(1, N + 1))
    assert {h["source"] for h in hosts} <= {"arp", "ipv4"}


def test_single_path_uses_one_spine(single_no_lldp):
    ctl, fab = single_no_lldp
    fab.net.pingAll(timeout=PING_TIMEOUT)  # hosts that send no LLDP become known once they talk
    wait_for(lambda: len(ctl.rest("/sdnmpi/hosts")) == N, 30, "every host to be learned")
    for leaf in range(1, LEAVES + 1):
        routes = ofdump.routes(bridge(fab, leaf_dpid(leaf)), C.PRIORITY_ROUTE)
        assert {routes[ip(n)] for n in range(1, N + 1) if leaf_of(n) != leaf} == {"output:%d" % (HPL + 1)}
    spine2 = bridge(fab, spine_dpid(2))
    before = sum(f["packets"] for f in ofdump.flows(spine2) if f["priority"] == C.PRIORITY_ROUTE)
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    after = sum(f["packets"] for f in ofdump.flows(spine2) if f["priority"] == C.PRIORITY_ROUTE)
    assert after == before  # nothing crossed the second spine
    spine1 = bridge(fab, spine_dpid(1))
    assert sum(f["packets"] for f in ofdump.flows(spine1) if f["priority"] == C.PRIORITY_ROUTE) > 0
