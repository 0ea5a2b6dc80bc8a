"""Default (per-destination) IPv4 routing policies: D-mod-K, ECMP and single path.

Each policy is a pure function ``policy(graph) -> RouteTable`` over the graph of
primitives/fabric.py. A RouteTable maps ``dpid -> {host mac: (port, ...)}``: the ports a switch
sends a packet for that destination host out of. One port means a plain output; several mean
"spread flows over these equal-cost ports" (the controller installs an OpenFlow SELECT group).
Every switch gets an entry for every host it can reach, so a switch holds O(hosts) routes.
"""
import logging

from . import fabric
from .errors import PlanRefused

LOG = logging.getLogger(__name__)


def _per_destination(graph, choose):
    """Builds a RouteTable. ``choose(switch, candidate_ports, dst_index, height)`` picks the ports
    of one switch towards one destination from its equal-cost candidates (sorted by neighbour)."""
    table = {sw: {} for sw in fabric.switches(graph)}
    height = fabric.heights(graph)
    dsts = fabric.hosts(graph)
    hops_by_leaf = {}
    for index, mac in enumerate(dsts):
        leaf, host_port = fabric.attachment(graph, mac)
        if leaf not in hops_by_leaf:
            hops_by_leaf[leaf] = fabric.next_hops_towards(graph, leaf)
        for sw, neighbours in hops_by_leaf[leaf].items():
            if sw == leaf:
                table[sw][mac] = (host_port,)
            elif neighbours:
                ports = [fabric.port_towards(graph, sw, n) for n in neighbours]
                table[sw][mac] = tuple(choose(sw, ports, index, height.get(sw, 0)))
    return table


def dmodk(graph):
    """D-mod-K: the standard static fat-tree routing.

    A switch at level h (leaves are level 0) with u equal-cost next hops towards destination index d
    takes next hop ``(d // D_h) mod u``, where D_h is the product of the uplink counts of the levels
    below h. On a 2-tier leaf-spine fabric that is simply ``d mod spines``: destination d always
    enters its leaf through the same spine, and a leaf's hosts are spread over all spines."""
    pick = dmodk_pick(graph)

    def choose(_sw, ports, index, h):
        return (ports[pick(index, h, len(ports))],)

    return _per_destination(graph, choose)


def dmodk_pick(graph, height=None):
    """D-mod-K's choice: ``pick(dst_index, switch_height, count)`` -> the position among ``count``
    equal-cost next hops (sorted by neighbour) that destination ``dst_index`` takes at a switch of
    that height. Shared by `dmodk` and the host-pair router of primitives/pair_routing.py."""
    per_level = fabric.uplinks_per_level(graph, fabric.heights(graph) if height is None else height)
    divisors = {}

    def pick(index, h, count):
        if h not in divisors:
            product = 1
            for level in range(h):
                product *= max(per_level.get(level, 1), 1)
            divisors[h] = product
        return (index // divisors[h]) % count

    return pick


def ecmp(graph):
    """ECMP: every equal-cost next hop; the switch hashes each flow onto one of them."""
    return _per_destination(graph, lambda _sw, ports, _i, _h: ports)


def single(graph):
    """Single path: the first equal-cost next hop (lowest neighbour dpid) everywhere, so every pair
    takes one deterministic shortest path and all inter-leaf traffic crosses the same spine, as on
    a spanning-tree Ethernet."""
    return _per_destination(graph, lambda _sw, ports, _i, _h: ports[:1])


class NoRouteError(PlanRefused):
    """A RouteTable has no route for a pair (a host outside the topology, or a partitioned fabric)."""


def paths_from_table(graph, table, pairs, pick=None):
    """The paths that packets of ``pairs`` ((src host, dst host), ...) take under RouteTable
    ``table``, followed port by port: {(src, dst): [src, switch, ..., switch, dst]}.

    Where the table gives several ports (ECMP), ``pick(switch, ports, src, dst)`` chooses the one
    the pair hashes to (default: the first)."""
    neighbour = {}
    for u, v, data in graph.edges(data=True):
        for sw, port in data["ports"].items():
            neighbour[sw, port] = v if sw == u else u
    paths = {}
    for src, dst in pairs:
        try:
            node = fabric.attachment(graph, src)[0]
        except KeyError:
            raise NoRouteError("host %s is not in the topology" % (src,)) from None
        path = [src]
        for _hop in range(len(table) + 1):
            path.append(node)
            ports = table.get(node, {}).get(dst)
            if not ports:
                raise NoRouteError("no route from %s to %s at switch %016x" % (src, dst, node))
            port = ports[0] if pick is None or len(ports) == 1 else pick(node, ports, src, dst)
            node = neighbour[node, port]
            if node == dst:
                path.append(dst)
                break
        else:
            raise NoRouteError("routing loop from %s to %s" % (src, dst))
        paths[src, dst] = path
    return paths
