"""Bcast tree planner: multicast trees from the root's host to every member host.

The tree goes from the root's leaf up to one top-tier switch (a spine, or a core of a 3-tier tree)
and down to every member leaf; members on the root's own leaf are served by the leaf itself. The
top switch is the least loaded (fewest trees already crossing it), ties broken by dpid, so
concurrent trees spread over the spines. In a fat-tree the downward path from a top switch to each
leaf is unique, so the union of those paths is a tree.

`tree` returns a `Tree`: for every switch on it, the output ports a packet of the group leaves by
(switch links towards the members, and host ports of members), oriented away from the root.

`trees` plans up to ``count`` such trees for one message split over them (issue 17), each through
a different top switch reached from the root's leaf by a different uplink: a spine each on a
leaf-spine, a core of a different core group (a different aggregation switch of the root's pod)
on a k-ary fat-tree. Their links are then disjoint (in a fat-tree the path between a top switch
and a leaf is unique, and tops reached by different uplinks share no link), so the root's leaf
sends over all its uplinks at once and every tree delivers one copy to every member.
"""
import dataclasses

import networkx as nx

from . import fabric
from .errors import PlanRefused
from .paths import index as path_index


class TreeError(PlanRefused):
    """Unknown hosts, or members the root cannot reach."""


@dataclasses.dataclass(frozen=True)
class Tree:
    root: str               # root host mac
    top: int                # the top switch the tree crosses (None: all members on the root's leaf)
    out_ports: dict         # dpid -> tuple of output ports, sorted
    switches: tuple         # switches on the tree, in BFS order from the root's leaf


def tree(graph, root, members, load=None):
    """``members``: host macs (the root may be among them; it receives nothing). ``load``: {top
    switch dpid: trees already on it}."""
    return trees(graph, root, members, 1, load)[0]


def trees(graph, root, members, count, load=None):
    """Up to ``count`` (>= 1) `Tree`s through distinct top switches whose paths from the root's
    leaf start with distinct uplinks, the least loaded first (``load`` as in `tree`). One tree
    (top None) if every member is on the root's leaf."""
    load = load or {}
    for mac in [root, *members]:
        if mac not in graph or graph.nodes[mac].get("kind") != fabric.HOST:
            raise TreeError("host %s is not in the topology" % (mac,))
    receivers = sorted(set(members) - {root})
    root_leaf = fabric.attachment(graph, root)[0]
    remote = sorted({fabric.attachment(graph, m)[0] for m in receivers} - {root_leaf})
    if not remote:
        return [_build(graph, root, root_leaf, receivers, None, [])]
    index = path_index(graph)
    height = index.heights()
    top_height = max(height.values())
    tops = sorted((sw for sw, h in height.items() if h == top_height), key=lambda sw: (load.get(sw, 0), sw))
    towards_root = index.next_hops(root_leaf)
    out, uplinks = [], set()
    for top in tops:
        up = _paths_down(towards_root, root_leaf, [top], top_height)
        if up is None or up[0][1] in uplinks:     # [root leaf, its uplink, ..., top]
            continue
        paths = _paths_down(index.next_hops(top), top, [root_leaf, *remote], top_height)
        if paths is None:
            continue
        uplink = paths[0][-2]           # the root leaf's neighbour on the way up to ``top``
        if uplink in uplinks:
            continue
        uplinks.add(uplink)
        out.append(_build(graph, root, root_leaf, receivers, top, paths))
        if len(out) == count:
            break
    if not out:
        raise TreeError("no spine reaches every member leaf")
    return out


def _paths_down(hops, top, leaves, top_height):
    """[top ... leaf] for each leaf (shortest; unique in a fat-tree), or None if some leaf is not
    ``top_height`` hops from ``top``. ``hops``: paths.PathIndex.next_hops(top). (Also used the
    other way round: from the root's leaf to a top switch.)"""
    out = []
    for leaf in leaves:
        path, node = [leaf], leaf
        while node != top:
            closer = hops.get(node)
            if not closer or len(path) > top_height:
                return None
            node = closer[0]
            path.append(node)
        if len(path) - 1 != top_height:
            return None
        out.append(path[::-1])
    return out


def _build(graph, root, root_leaf, receivers, top, paths):
    edges = {link for path in paths for link in zip(path, path[1:])}
    t = nx.Graph()
    t.add_node(root_leaf)
    t.add_edges_from(edges)
    if not nx.is_tree(t):
        raise TreeError("the paths from spine %016x do not form a tree" % top)
    out = {sw: [] for sw in t.nodes}
    order = list(nx.bfs_tree(t, root_leaf))
    for parent, child in nx.bfs_edges(t, root_leaf):
        out[parent].append(fabric.port_towards(graph, parent, child))
    for mac in receivers:
        leaf, port = fabric.attachment(graph, mac)
        out[leaf].append(port)
    return Tree(root=root, top=top, out_ports={sw: tuple(sorted(set(p))) for sw, p in out.items() if p},
                switches=tuple(order))
