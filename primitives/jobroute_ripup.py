"""Rip-up and re-route: sdn-optimal-bytes' last pass (issue 15) and the allreduce planner's greedy
fallback (primitives/allreduce.py, on flow counts).

``improve`` takes a routing of a demand (paths of flows checked by pairs.checked) and lowers the
load of its busiest links, by bytes (or flows) per link, while never raising the largest number
of flows on a link (so SDN-optimal's NL_D bound on full-bisection fat-trees survives). Each round
looks only at the flows on the busiest links (load ``top``) and tries, flow by flow:

- a **move**: the flow takes the least-loaded shortest path (leastload.py) if every link of that
  path, with the flow, stays below ``top`` and at most at the flow cap (the largest number of
  flows on a link when the pass started);
- else a **move with ejections** (a swap when an ejected flow takes the moved flow's place): the
  flow takes the least-loaded shortest path that avoids its busiest links; every link of it that
  the flow would push to ``top`` or over the flow cap is cleared by ejecting one other flow, no
  heavier than the flow, from it: the lightest of the first few that clear the link and take
  their own least-loaded path avoiding it, whose blocked links are in turn cleared the same way,
  one level deeper (``EJECT_TRIES``: how many are tried per level). If some blocked link cannot
  be cleared, nothing moves.

Every accepted step takes a flow off a busiest link and loads no link up to ``top``, so the number
of links at ``top`` falls; the rounds stop when a round lowers neither ``top`` nor that number.
Pure and deterministic. On flow counts (``by_bytes`` False) a flow weighs its ``counts`` (how
many flows its pair stands for, 1 by default) and the moves alone are the allreduce planner's old
single-move pass; the moves with ejections come on top.
"""
import collections
import logging
import math

from . import pairs
from .leastload import LeastLoadRouter

LOG = logging.getLogger(__name__)

#: flows tried for ejection from one blocked link (the lightest that clear it), per level: a flow
#: ejected from a blocked link may eject flows from its own blocked links, one level deeper. Bounds
#: the time on dense demands, where a blocked link carries many flows. (8, 2): PFSim's CG at or
#: under Greedy2 in 252/252 placements of bench/jobroute_sweep.py; (8,): 251.
EJECT_TRIES = (8, 2)


def improve(graph, flows, paths, load=None, by_bytes=False, rounds=64, counts=None, eject=True,
            router=None):
    """Lowers the busiest load of ``flows`` routed on ``paths`` ({(src, dst): path}, updated and
    returned) on top of ``load`` (a pairs.LinkLoad of other jobs, or None). ``by_bytes``: the load
    is bytes per capacity, else flows. ``counts``: {(src, dst): flows the pair stands for} where
    that is not 1. ``eject``: False for the moves alone. ``router``: the graph's LeastLoadRouter,
    if the caller has one. Neither the busiest load nor the largest number of flows on a link ever
    rises. At most ``rounds`` rounds (see the module docstring)."""
    moves = _Moves(graph, flows, paths, load, by_bytes, counts or {}, router or LeastLoadRouter(graph))
    for _round in range(rounds):
        top, at_top = moves.busiest()
        for n in sorted({n for link in at_top for n in moves.on_link[link]}):
            if moves.worst(n) >= top and not moves.move(n, top) and eject:
                moves.move_ejecting(n, top)
        after, after_top = moves.busiest()
        if (after, len(after_top)) >= (top, len(at_top)):
            break
    return paths


def _links(path):
    """The directed switch links of a host-to-host path (pairs.switch_links: its inner hops)."""
    return list(zip(path[1:-2], path[2:-1]))


class _Avoiding:
    """A link-load mapping for LeastLoadRouter.best_path in which ``links`` are unusable."""

    def __init__(self, loads, links):
        self.loads, self.links = loads, links

    def get(self, link, default=0):
        return math.inf if link in self.links else self.loads.get(link, default)


class _Moves:
    """The routing being improved: per-link load (``metric``: bytes per capacity or flows, and
    ``count``: flows), the flows on each link and each flow's switch links."""

    def __init__(self, graph, flows, paths, load, by_bytes, counts, router):
        total = load.copy() if load is not None else pairs.LinkLoad()
        self.graph, self.flows, self.paths, self.by_bytes = graph, flows, paths, by_bytes
        self.router, self.leaf = router, pairs.leaves_of(graph, flows)
        self.mult = [counts.get((flow.src, flow.dst), 1) for flow in flows]
        self.capacity = {}
        self.links, self.on_link = [], collections.defaultdict(set)
        for n, flow in enumerate(flows):
            self.links.append(_links(paths[flow.src, flow.dst]))
            for link in self.links[n]:
                total.flows[link] += self.mult[n]
                if by_bytes:
                    total.bytes[link] += flow.bytes / self._capacity(link)
                self.on_link[link].add(n)
        self.count = total.flows
        # on flow counts the metric starts equal to ``count`` but is its own counter (both change)
        self.metric = total.bytes if by_bytes else total.flows.copy()
        self.cap = total.max_flows()

    def busiest(self):
        top = max(self.metric.values(), default=0)
        return top, [link for link, v in self.metric.items() if v >= top]

    def _capacity(self, link):
        if link not in self.capacity:
            self.capacity[link] = self.graph.edges[link].get("capacity", 1)
        return self.capacity[link]

    def weight(self, n, link):
        return self.flows[n].bytes / self._capacity(link) if self.by_bytes else self.mult[n]

    def worst(self, n):
        return max((self.metric[link] for link in self.links[n]), default=0)

    def lift(self, n):
        """Takes flow n off its links; returns its path."""
        for link in self.links[n]:
            self.metric[link] -= self.weight(n, link)
            self.count[link] -= self.mult[n]
            self.on_link[link].discard(n)
        flow = self.flows[n]
        return self.paths[flow.src, flow.dst]

    def put(self, n, path):
        flow = self.flows[n]
        self.paths[flow.src, flow.dst] = path
        self.links[n] = _links(path)
        for link in self.links[n]:
            self.metric[link] += self.weight(n, link)
            self.count[link] += self.mult[n]
            self.on_link[link].add(n)

    def route(self, n, avoid=()):
        """Flow n's least-loaded shortest path (it must be lifted) avoiding ``avoid``, or None."""
        flow = self.flows[n]
        loads = _Avoiding(self.metric, avoid) if avoid else self.metric
        switches = self.router.best_path(self.leaf[flow.src], self.leaf[flow.dst], loads)
        if avoid and any(link in avoid for link in zip(switches, switches[1:])):
            return None
        return [flow.src, *switches, flow.dst]

    def fits(self, n, path, top):
        """Flow n (lifted) on ``path`` keeps every link below ``top`` and within the flow cap."""
        return all(self.metric[link] + self.weight(n, link) < top and self.count[link] + self.mult[n] <= self.cap
                   for link in _links(path))

    def blocked(self, n, top):
        return [link for link in self.links[n] if self.metric[link] >= top or self.count[link] > self.cap]

    def move(self, n, top):
        old = self.lift(n)
        new = self.route(n)
        if self.fits(n, new, top):
            self.put(n, new)
            return True
        self.put(n, old)
        return False

    def move_ejecting(self, n, top):
        """The move with ejections (module docstring); True if made."""
        old = self.lift(n)
        new = self.route(n, avoid={link for link in _links(old)
                                   if self.metric[link] + self.weight(n, link) >= top})
        if new is None:
            self.put(n, old)
            return False
        self.put(n, new)
        undo = [(n, old)]
        if self._clear(n, top, undo, 0):
            return True
        self._undo(undo, 0)
        return False

    def _clear(self, n, top, undo, level):
        """Clears flow n's blocked links, each by ejecting one flow (whose own blocked links are
        cleared the same way, one level deeper, while EJECT_TRIES has levels); True if none is
        left blocked."""
        blocked = self.blocked(n, top)
        while blocked and level < len(EJECT_TRIES) and self._eject(blocked[0], top, undo, level, self.flows[n].bytes):
            blocked = self.blocked(n, top)
        return not blocked

    def _eject(self, link, top, undo, level, most):
        """Moves one flow not moved yet (not in ``undo``) and of at most ``most`` bytes off
        ``link`` so that the link is below ``top`` and within the cap: the lightest of the first
        EJECT_TRIES[level] that clear it and find a path (``_clear``). Records the moves in
        ``undo``."""
        excess = self.metric[link] - top
        moved = {m for m, _path in undo}
        candidates = sorted((self.flows[m].bytes, m) for m in self.on_link[link]
                            if m not in moved and self.weight(m, link) > excess and self.flows[m].bytes <= most)
        for _bytes, m in candidates[:EJECT_TRIES[level]]:
            old = self.lift(m)
            new = self.route(m, avoid={link}) if self.count[link] <= self.cap else None
            if new is None:
                self.put(m, old)
                continue
            mark = len(undo)
            self.put(m, new)
            undo.append((m, old))
            if self._clear(m, top, undo, level + 1):
                return True
            self._undo(undo, mark)
        return False

    def _undo(self, undo, mark):
        """Puts the flows moved since ``undo[mark]`` back, last first."""
        for m, path in reversed(undo[mark:]):
            self.lift(m)
            self.put(m, path)
        del undo[mark:]
