"""Shortest-path structure of a fabric graph, computed once per graph and shared by the pair routers.

`index(graph)` returns the graph's `PathIndex`, memoised in ``graph.graph`` (the graph's own
attribute dict; the controller builds a new graph per topology snapshot, and the memo is dropped
when the node or edge count changes). Directed links get integer ids so that routers and the
simulator can keep loads in numpy arrays.

Equal-cost paths between two leaves are listed in exactly the order of
``networkx.all_shortest_paths`` on the same graph (BFS predecessors from the source in adjacency
order, paths built backwards from the target), so "ties go to the first path" means the same thing
here as in PFSim. Hosts must hang off exactly one switch (as in every fat-tree).
"""
import logging

import networkx as nx
import numpy as np

from . import fabric
from .errors import PlanRefused

LOG = logging.getLogger(__name__)

_MEMO = "_sdnmpi_path_index"


class PathIndex:
    """Link ids, host attachment, and lazily computed leaf-to-leaf shortest paths of one graph."""

    def __init__(self, graph):
        self.graph = graph
        self.kind = {n: d.get("kind") for n, d in graph.nodes(data=True)}
        self.links = []
        self.link_id = {}
        for u, v in graph.edges():
            for a, b in ((u, v), (v, u)):
                self.link_id[a, b] = len(self.links)
                self.links.append((a, b))
        self.capacity = np.array([float(graph.edges[u, v].get("capacity", 1)) for u, v in self.links])
        self.switch_link = np.array([self.kind[u] == fabric.SWITCH and self.kind[v] == fabric.SWITCH
                                     for u, v in self.links], dtype=bool)
        self.leaf = {}
        for n, k in self.kind.items():
            if k == fabric.HOST:
                ups = [s for s in graph.neighbors(n) if self.kind.get(s) == fabric.SWITCH]
                if len(ups) != 1:
                    raise PlanRefused(f"host {n} must be attached to exactly one switch, not {len(ups)}")
                self.leaf[n] = ups[0]
        self._pred = {}
        self._paths = {}
        self._arrays = {}
        self._towards = {}
        #: fabric.hosts(graph), the destination-index order, and each host's position in it
        self.hosts = fabric.hosts(graph)
        self.host_index = {h: i for i, h in enumerate(self.hosts)}
        self.height = None
        #: memo of deterministic results that callers key themselves (e.g. router walks, allreduce's Tree)
        self.memo = {}

    def load_array(self, load=None):
        """A LinkLoad's bytes/capacity as an array over link ids (zeros without ``load``)."""
        out = np.zeros(len(self.links))
        if load is not None:
            for link, value in load.bytes.items():
                out[self.link_id[link]] += value
        return out

    def _predecessors(self, src_leaf):
        pred = self._pred.get(src_leaf)
        if pred is None:
            pred = {src_leaf: []}
            seen = {src_leaf: 0}
            level, this = 0, [src_leaf]
            while this:
                level += 1
                nxt = []
                for v in this:
                    for w in self.graph[v]:
                        if self.kind[w] != fabric.SWITCH:
                            continue
                        if w not in seen:
                            seen[w] = level
                            pred[w] = [v]
                            nxt.append(w)
                        elif seen[w] == level:
                            pred[w].append(v)
                this = nxt
            self._pred[src_leaf] = pred
        return pred

    def switch_paths(self, src_leaf, dst_leaf):
        """Every shortest switch path from ``src_leaf`` to ``dst_leaf``, in networkx order."""
        key = (src_leaf, dst_leaf)
        paths = self._paths.get(key)
        if paths is None:
            pred = self._predecessors(src_leaf)
            if dst_leaf not in pred:
                raise nx.NetworkXNoPath(f"no path from switch {src_leaf} to switch {dst_leaf}")
            paths = []
            stack = [(dst_leaf, [dst_leaf])]
            # depth-first, predecessors in list order: the order of all_shortest_paths
            while stack:
                node, tail = stack.pop()
                if node == src_leaf:
                    paths.append(tail[::-1])
                    continue
                for p in reversed(pred[node]):
                    stack.append((p, tail + [p]))
            self._paths[key] = paths
        return paths

    def host_paths(self, src, dst):
        """Every shortest path between hosts ``src`` and ``dst`` (both included), networkx order."""
        return [[src] + p + [dst] for p in self.switch_paths(self.leaf[src], self.leaf[dst])]

    def switch_link_array(self, src_leaf, dst_leaf):
        """(paths x hops) int array of the switch-to-switch link ids of `switch_paths`."""
        key = (src_leaf, dst_leaf)
        arr = self._arrays.get(key)
        if arr is None:
            paths = self.switch_paths(src_leaf, dst_leaf)
            arr = np.array([[self.link_id[p[i], p[i + 1]] for i in range(len(p) - 1)] for p in paths],
                           dtype=np.intp).reshape(len(paths), len(paths[0]) - 1)
            self._arrays[key] = arr
        return arr

    def path_links(self, path):
        """Link ids of a node path (host links included)."""
        link_id = self.link_id
        return [link_id[a, b] for a, b in zip(path, path[1:])]

    def next_hops(self, dst_leaf):
        """{switch: equal-cost next-hop switches towards ``dst_leaf``, sorted}: the result of
        fabric.next_hops_towards, read off this index's breadth-first search from ``dst_leaf``
        (a switch's predecessors there are its neighbours one hop closer) instead of a search
        over a networkx subgraph view, which costs milliseconds per leaf on large fabrics."""
        hops = self._towards.get(dst_leaf)
        if hops is None:
            hops = {sw: sorted(closer) for sw, closer in self._predecessors(dst_leaf).items()}
            self._towards[dst_leaf] = hops
        return hops

    def heights(self):
        if self.height is None:
            self.height = fabric.heights(self.graph)
        return self.height


def index(graph):
    """The memoised `PathIndex` of ``graph``."""
    memo = graph.graph.get(_MEMO)
    # node count and adjacency entries (2 x edges): the same test as number_of_edges() without
    # networkx's per-node degree views, since routers look the index up on every call
    stamp = (len(graph), sum(map(len, graph._adj.values())))  # noqa: SLF001 (plain dicts: fast)
    if memo is None or memo[0] != stamp:
        memo = (stamp, PathIndex(graph))
        graph.graph[_MEMO] = memo
    return memo[1]
