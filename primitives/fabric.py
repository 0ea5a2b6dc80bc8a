"""The topology graph that every planner reads, and small queries over it.

The controller builds one `networkx.Graph` per topology snapshot (controller/topology.py) and
tests build the same graph from synthetic fat-trees (primitives/fattree.py). Convention:

- a switch is the node ``int(dpid)`` with attribute ``kind="switch"``;
- a host is the node ``mac`` (a lower-case ``"aa:bb:..."`` string) with attributes ``kind="host"``,
  ``ip`` (dotted IPv4 string, or None) and ``name`` (or None);
- every edge has the attribute ``ports``: a dict from each *switch* end to its port number. A
  host-to-switch edge has one entry, a switch-to-switch edge has two.

Parallel links between the same two switches are not modelled (a fat-tree has none).
"""
import ipaddress
import logging

import networkx as nx

LOG = logging.getLogger(__name__)

SWITCH = "switch"
HOST = "host"


def new_graph():
    return nx.Graph()


def add_switch(graph, dpid):
    graph.add_node(int(dpid), kind=SWITCH)


def add_link(graph, dpid_a, port_a, dpid_b, port_b):
    graph.add_edge(int(dpid_a), int(dpid_b), ports={int(dpid_a): int(port_a), int(dpid_b): int(port_b)})


def add_host(graph, mac, ip, dpid, port, name=None):
    graph.add_node(mac, kind=HOST, ip=ip, name=name)
    graph.add_edge(mac, int(dpid), ports={int(dpid): int(port)})


def switches(graph):
    """Switch dpids, sorted."""
    return sorted(n for n, d in graph.nodes(data=True) if d.get("kind") == SWITCH)


def hosts(graph):
    """Host MACs that have an IPv4 address, in *destination index* order: by IP, then MAC.

    The destination index used by D-mod-K is a host's position in this list."""
    found = [n for n, d in graph.nodes(data=True) if d.get("kind") == HOST and d.get("ip")]
    return sorted(found, key=lambda mac: (ipaddress.IPv4Address(graph.nodes[mac]["ip"]), mac))


def attachment(graph, mac):
    """(dpid, port) where host ``mac`` is attached."""
    for sw, edge in graph._adj[mac].items():  # noqa: SLF001 (plain dicts: planners call this per flow)
        return sw, edge["ports"][sw]
    raise KeyError(mac)


def port_towards(graph, node, neighbour):
    """The port on switch ``node`` of the link to ``neighbour``."""
    return graph.edges[node, neighbour]["ports"][node]


def switch_graph(graph):
    """The subgraph of switches and switch-to-switch links (a view, not a copy)."""
    return graph.subgraph(switches(graph))


def leaves(graph):
    """Switches with at least one host (with an IPv4 address) attached."""
    return sorted({attachment(graph, n)[0] for n, d in graph.nodes(data=True)
                   if d.get("kind") == HOST and d.get("ip")})


def heights(graph):
    """Switch -> hops from the nearest leaf (leaf 0, spine or aggregation 1, core 2, ...)."""
    sg = switch_graph(graph)
    sources = [leaf for leaf in leaves(graph) if leaf in sg]
    if not sources:
        return {}
    return dict(nx.multi_source_dijkstra_path_length(sg, sources, weight=None))


def next_hops_towards(graph, dst_switch):
    """For every switch that can reach ``dst_switch``: its equal-cost next-hop switches.

    Returns {dpid: [neighbour dpid, ...]}, neighbours sorted by dpid. ``dst_switch`` itself maps to
    an empty list. A neighbour qualifies when it is one hop closer to ``dst_switch``."""
    sg = switch_graph(graph)
    if dst_switch not in sg:
        return {}
    dist = nx.single_source_shortest_path_length(sg, dst_switch)
    return {sw: sorted(n for n in sg.neighbors(sw) if dist.get(n) == d - 1) for sw, d in dist.items()}


def uplinks_per_level(graph, height):
    """{level: the largest number of upward neighbours of a switch at that level}."""
    sg = switch_graph(graph)
    per_level = {}
    for sw, h in height.items():
        ups = sum(1 for n in sg.neighbors(sw) if height.get(n, -1) > h)
        per_level[h] = max(per_level.get(h, 0), ups)
    return per_level
