"""Shared helpers of the 2-tier fabric integration tests (2 spines, 4 leaves, 2 hosts each).

Each test_fabric_*.py module runs one fabric with one routing policy; pytest tears a module's fabric
down before the next module starts, so two fabrics never coexist."""
import contextlib
import re

from sdnmpi.controller import constants as C
from sdnmpi.mininet_topos import controller_proc
from sdnmpi.mininet_topos.fattree import LeafSpineTopo
from sdnmpi.mininet_topos.polling import poll_until as wait_for  # the tests import it from here

import ofdump
from conftest import running_fabric


SPINES, LEAVES, HPL = 2, 4, 2
PING_TIMEOUT = 5  # seconds per ping: generous, since CI shares 2 cores with userspace OVS
N = LEAVES * HPL


def make_topo():
    return LeafSpineTopo(spines=SPINES, leaves=LEAVES, hosts_per_leaf=HPL, host_bw=40, fabric_bw=20)


def ip(n):
    return "10.0.0.%d" % n


def leaf_of(n):
    return (n - 1) // HPL + 1


def leaf_dpid(leaf):
    return "%016x" % (0x200 + leaf)


def spine_dpid(spine):
    return "%016x" % (0x100 + spine)


def bridge(fab, dpid):
    """The OVS bridge name of a dpid (hex string)."""
    for sw in fab.net.switches:
        if sw.dpid == dpid:
            return sw.name
    raise KeyError(dpid)


def wait_for_routes(fab, hosts, timeout=30):
    """Until every switch of ``fab`` holds a default route for each of ``hosts`` host IPs."""
    wait_for(lambda: all(len(ofdump.routes(sw.name, C.PRIORITY_ROUTE)) == hosts for sw in fab.net.switches),
             timeout, "routes to all %d hosts on every switch" % hosts)


@contextlib.contextmanager
def leaf_spine_fabric(routing, tmp_path, lldpd=True, topo=None, extra_args=()):
    """The 2-tier fabric with controller and (by default) lldpd, once every switch link and host
    is discovered and every switch routes every host. Without lldpd, hosts are not waited for.
    ``topo``: another LeafSpineTopo of the same shape (e.g. other bandwidths); ``extra_args``:
    more controller flags."""
    with running_fabric(topo or make_topo(), routing, tmp_path, lldpd=lldpd, extra_args=extra_args) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES,
                                          hosts=N if lldpd else 0, timeout=90)
        if lldpd:
            wait_for_routes(fab, N)
        yield ctl, fab


def iperf(fab, client, server, seconds=3, streams=1):
    """TCP bytes received by ``server`` from ``client`` (host objects)."""
    server.cmd("iperf3 -s -1 -D -p 5201")   # -D returns before the daemon listens
    wait_for(lambda: server.cmd("ss -Hltn 'sport = :5201'").strip(), 10, "iperf3 to listen on %s" % server.name)
    out = client.cmd("iperf3 -c %s -p 5201 -t %d -P %d -J" % (server.IP(), seconds, streams))
    m = re.search(r'"sum_received":\s*\{[^}]*"bytes":\s*(\d+)', out)
    assert m, "iperf3 failed: %s" % out[-2000:]
    return int(m.group(1))


