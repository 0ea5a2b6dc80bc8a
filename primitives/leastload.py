"""Least-loaded shortest paths between switches, shared by the greedy planners (allreduce.py,
jobroute.py).

`LeastLoadRouter.best_path(a, b, loads)` returns, among all shortest switch paths from ``a`` to
``b``, one whose busiest link is least loaded (then the least total load, then the smallest dpids):
dynamic programming over the layers of the shortest-path DAG, cheaper than enumerating every
shortest path of a large fat-tree. ``loads`` maps a directed link (u, v) to a number (flows, or
bytes per capacity); links that are not in it count as 0.
"""
from . import fabric
from .errors import PlanRefused


class NoPathError(PlanRefused):
    """Two switches have no path between them."""


class LeastLoadRouter:
    """Least-loaded shortest paths over the switch graph of one topology (BFS distances cached per
    destination switch)."""

    def __init__(self, graph):
        sg = fabric.switch_graph(graph)
        self.adj = {sw: sorted(sg.neighbors(sw)) for sw in sg.nodes}
        self._dist, self._toward = {}, {}

    def _distances(self, dst):
        if dst not in self._dist:
            dist, frontier = {dst: 0}, [dst]
            while frontier:
                nxt = []
                for u in frontier:
                    for v in self.adj[u]:
                        if v not in dist:
                            dist[v] = dist[u] + 1
                            nxt.append(v)
                frontier = nxt
            self._dist[dst] = dist
            # the next hops of shortest paths to dst, in dpid order
            self._toward[dst] = {u: [v for v in self.adj[u] if dist.get(v) == du - 1] for u, du in dist.items()}
        return self._dist[dst]

    def best_path(self, a, b, loads):
        """The tuple of switches a ... b (see the module docstring)."""
        dist = self._distances(b)
        if a not in dist:
            raise NoPathError("no path between switches %016x and %016x" % (a, b))
        toward = self._toward[b]
        frontier = {a: (0, 0, (a,))}
        for _hop in range(dist[a]):
            nxt = {}
            for u, (worst, total, path) in frontier.items():
                for v in toward[u]:
                    load = loads.get((u, v), 0)
                    candidate = (max(worst, load), total + load, path + (v,))
                    if v not in nxt or candidate < nxt[v]:
                        nxt[v] = candidate
            frontier = nxt
        return frontier[b][2]
