"""Host-pair routers in PFSim's style (the contract of primitives/pairs.py).

    router(graph, demand, load=None, seed=None) -> {(src, dst): path}

Every router routes the merged demand (`pairs.merge`: one flow per pair, heaviest first, ties in
first-appearance order) one pair at a time on one shortest path:

- ``dmodk``: the controller's D-mod-K (primitives/routing.py) followed hop by hop: at a switch of
  height h with u equal-cost next hops sorted by dpid, destination index d takes
  ``(d // D_h) mod u``. On a two-tier fabric (PFSim's milk and pepsi) that is exactly PFSim's
  "index ``addr(dst) mod count`` among the sorted next nodes wherever paths diverge".
- ``single``: always the first equal-cost next hop (lowest dpid), as routing.single installs.
- ``ecmp``: a hash of the pair (CRC-32 of ``"src>dst"``) picks one of the equal-cost paths, as a
  switch hashing each flow would; repeatable without a seed.
- ``random``: a uniformly random shortest path per pair, from ``random.Random(seed)``.
- ``greedy``: PFSim's GreedyRouter, the path with the least *sum* of the current switch-link load.
- ``greedy2``: PFSim's GreedyRouter2 (the paper's "dynamic"), the least *maximum* load.

Greedy loads are bytes / capacity on switch-to-switch links (the figure PFSim reports; PFSim's own
greedy compares raw bytes, identical when capacities are equal along the candidate links), start
from ``load`` (other jobs) and grow as the job's pairs are placed; ties go to the first path in
``networkx.all_shortest_paths`` order (primitives/paths.py).
"""
import logging
import random as _random
import zlib

import numpy as np

from . import pairs, paths, routing

LOG = logging.getLogger(__name__)


def _walk(graph, demand, name, choose):
    """Routes each pair by walking next hops towards the destination leaf; ``choose(sw, hops,
    dst_index)`` picks one of the sorted equal-cost next hops. The switch path of (source leaf,
    destination) is deterministic, so it is memoised in the graph's PathIndex under ``name``."""
    idx = paths.index(graph)
    dst_index = idx.host_index
    memo = idx.memo.setdefault(name, {})
    out = {}
    for flow in pairs.merge(demand):
        src_leaf = idx.leaf[flow.src]
        middle = memo.get((src_leaf, flow.dst))
        if middle is None:
            dst_leaf = idx.leaf[flow.dst]
            hops = idx.next_hops(dst_leaf)
            if src_leaf not in hops:
                raise ValueError(f"no path from {flow.src} to {flow.dst}")
            middle, sw = [src_leaf], src_leaf
            while sw != dst_leaf:
                sw = choose(sw, hops[sw], dst_index[flow.dst])
                middle.append(sw)
            memo[src_leaf, flow.dst] = middle
        out[flow.src, flow.dst] = [flow.src] + middle + [flow.dst]
    return out


def dmodk(graph, demand, load=None, seed=None):
    """D-mod-K, the controller's per-destination rule applied to each pair."""
    height = paths.index(graph).heights()
    pick = routing.dmodk_pick(graph, height)
    return _walk(graph, demand, "dmodk",
                 lambda sw, hops, d: hops[pick(d, height.get(sw, 0), len(hops))])


def single(graph, demand, load=None, seed=None):
    """Single path: the lowest-dpid equal-cost next hop everywhere."""
    return _walk(graph, demand, "single", lambda sw, hops, d: hops[0])


def _each_pair(graph, demand, pick):
    """Routes each merged pair on ``idx.host_paths(src, dst)[pick(flow, candidates)]``."""
    idx = paths.index(graph)
    out = {}
    for flow in pairs.merge(demand):
        cands = idx.host_paths(flow.src, flow.dst)
        out[flow.src, flow.dst] = cands[pick(flow, len(cands)) if len(cands) > 1 else 0]
    return out


def ecmp(graph, demand, load=None, seed=None):
    """ECMP: a fixed hash of (src, dst) onto the equal-cost paths."""
    return _each_pair(graph, demand,
                      lambda f, n: zlib.crc32(f"{f.src}>{f.dst}".encode()) % n)


def random(graph, demand, load=None, seed=None):
    """A random shortest path per pair (repeatable with ``seed``)."""
    rng = _random.Random(seed)
    return _each_pair(graph, demand, lambda f, n: rng.randrange(n))


def _greedy(graph, demand, load, cost):
    idx = paths.index(graph)
    current = idx.load_array(load)
    out = {}
    for flow in pairs.merge(demand):
        src_leaf, dst_leaf = idx.leaf[flow.src], idx.leaf[flow.dst]
        links = idx.switch_link_array(src_leaf, dst_leaf)
        best = 0
        if links.shape[0] > 1:
            best = int(np.argmin(cost(current[links])))
        chosen = links[best]
        current[chosen] += flow.bytes / idx.capacity[chosen]
        out[flow.src, flow.dst] = [flow.src] + idx.switch_paths(src_leaf, dst_leaf)[best] + [flow.dst]
    return out


def greedy(graph, demand, load=None, seed=None):
    """PFSim's Greedy: the shortest path with the least sum of current switch-link load."""
    return _greedy(graph, demand, load, lambda loads: loads.sum(axis=1))


def greedy2(graph, demand, load=None, seed=None):
    """PFSim's Greedy2 ("dynamic"): the shortest path with the least maximum switch-link load."""
    return _greedy(graph, demand, load, lambda loads: loads.max(axis=1))
