"""Faults during operation on the 2-tier fabric (issue 12): a switch restarted with
``ovs-vsctl del-br`` and re-added with the same ports, as Mininet builds it."""
import time

import pytest

from sdnmpi.mininet_topos import controller_proc

from fabric_helpers import (LEAVES, N, PING_TIMEOUT, SPINES, bridge, leaf_dpid, leaf_spine_fabric, spine_dpid,
                            wait_for, wait_for_routes)

RECOVERY = 10.0  # seconds from re-adding the bridge until pingall must be clean (issue 12)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("faults")) as (ctl, fab):
        yield ctl, fab


def _switches(ctl):
    return {s["dpid"] for s in ctl.rest("/sdnmpi/topology")["switches"]}


@pytest.mark.parametrize("dpid", [leaf_dpid(1), spine_dpid(2)], ids=["leaf", "spine"])
def test_restarted_switch_recovers_within_10s(fabric, dpid):
    """The bridge is deleted (its flows, ports and connection go) and re-added: the controller
    rediscovers its links and hosts, reinstalls routes on it, and pingall is clean within 10 s."""
    ctl, fab = fabric
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    name = bridge(fab, dpid)
    fab.delete_bridge(name)
    wait_for(lambda: dpid not in _switches(ctl), 10, "the controller to notice that %s left" % name)
    start = time.monotonic()
    fab.readd_bridge(name)
    controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N,
                                      timeout=RECOVERY)
    wait_for_routes(fab, N, timeout=max(0.0, RECOVERY - (time.monotonic() - start)))
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    elapsed = time.monotonic() - start
    assert elapsed <= RECOVERY, "pingall clean only %.1f s after the switch came back" % elapsed
