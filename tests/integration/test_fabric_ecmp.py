"""2-tier fabric, policy ecmp: SELECT groups (ofmsgs.select_slots: each uplink equally often, in an order of
the switch's own), and flows spread over both spines."""
import pytest

from sdnmpi.controller import constants as C

import ofdump
from fabric_helpers import (HPL, LEAVES, N, PING_TIMEOUT, SPINES, bridge, iperf, ip, leaf_dpid, leaf_of,
                            leaf_spine_fabric)


@pytest.fixture(scope="module")
def ecmp(tmp_path_factory):
    with leaf_spine_fabric("ecmp", tmp_path_factory.mktemp("ecmp")) as (ctl, fab):
        yield ctl, fab


def test_ecmp_select_groups_spread_flows_over_both_spines(ecmp):
    _ctl, fab = ecmp
    uplinks = [HPL + s for s in range(1, SPINES + 1)]
    for leaf in range(1, LEAVES + 1):
        br = bridge(fab, leaf_dpid(leaf))
        groups = ofdump.groups(br)
        routes = ofdump.routes(br, C.PRIORITY_ROUTE)
        for n in range(1, N + 1):
            if leaf_of(n) == leaf:
                assert routes[ip(n)] == "output:%d" % ((n - 1) % HPL + 1)
            else:
                gid = int(routes[ip(n)].split(":")[1])
                assert routes[ip(n)].startswith("group:")
                kind, buckets = groups[gid]   # each uplink equally often, in this switch's order
                assert kind == "select" and list(dict.fromkeys(buckets)) == uplinks
                assert len({buckets.count(p) for p in uplinks}) == 1 and buckets != sorted(buckets)
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0   # the first pings through fresh SELECT groups
    br = bridge(fab, leaf_dpid(1))
    before = ofdump.port_tx_bytes(br)
    got = iperf(fab, fab.net.get("h1"), fab.net.get("h%d" % N), seconds=4, streams=16)
    after = ofdump.port_tx_bytes(br)
    sent = {p: after[p] - before[p] for p in uplinks}
    assert got > 1_000_000
    for p in uplinks:  # 16 flows hashed over 2 uplinks: each carries a real share
        assert sent[p] > 0.1 * got, sent
