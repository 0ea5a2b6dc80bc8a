"""Host-pair routers in PFSim's style (the contract of primitives/pairs.py).

    router(graph, demand, load=None, seed=None) -> {(src, dst): path}

Every router routes the merged demand (`pairs.merge`: one flow per pair, heaviest first, ties in
first-appearance order) one pair at a time on one shortest path:

- ``dmodk``: the controller's D-mod-K (primitives/routing.py) followed hop by hop: at a switch of
  height h with u equal-cost next hops sorted by dpid, destination index d takes
  ``(d // D_h) mod u``. On a two-tier fabric (PFSim's milk and pepsi) that is exactly PFSim's
  "index ``addr(dst) mod count`` among the sorted next nodes wherever paths diverge".
- ``single``: always the first equal-cost next hop (lowest dpid), as routing.single installs.
- ``ecmp``: a hash of the pair (BLAKE2b of ``"src>dst"``) picks one of the equal-cost paths, as a
  switch hashing each flow would; repeatable without a seed. The one ECMP model of the project:
  the simulator's ``ecmp`` and sdn-adaptive's dense case (primitives/jobroute.py) both use it.
  OpenFlow does not specify the switch's hash, so the model is a uniform choice per pair. CRC-32
  (the earlier model) is linear, and on structured demands it spreads pairs like a modulo rule:
  measured on shifts (k=4, k=8 and 8-spine leaf-spine fabrics, 12 shift distances) it gave max
  loads of 2-3 where a uniform choice averages 2.6-4.3, so ECMP looked better than hashing is.
- ``random``: a uniformly random shortest path per pair, from ``random.Random(seed)``.
- ``greedy``: PFSim's GreedyRouter, the path with the least *sum* of the current switch-link load.
- ``greedy2``: PFSim's GreedyRouter2 (the paper's "dynamic"), the least *maximum* load.

Greedy loads are bytes / capacity on switch-to-switch links (the figure PFSim reports; PFSim's own
greedy compares raw bytes, identical when capacities are equal along the candidate links), start
from ``load`` (other jobs) and grow as the job's pairs are placed; ties go to the first path in
``networkx.all_shortest_paths`` order (primitives/paths.py).
"""
import hashlib
import logging
import random as _random

from . import pairs, paths, routing

LOG = logging.getLogger(__name__)

__all__ = ["dmodk", "single", "ecmp", "random", "greedy", "greedy2"]


def _merged(idx, demand):
    """`pairs.merge` of ``demand``; pairs.DemandError (one line) if a pair names a node that is not
    a host of the graph."""
    merged = pairs.merge(demand)
    for flow in merged:
        for host in (flow.src, flow.dst):
            if host not in idx.leaf:
                raise pairs.DemandError(f"host {host} is not in the topology")
    return merged


def _walk(graph, demand, name, choose):
    """Routes each pair by walking next hops towards the destination leaf; ``choose(sw, hops,
    dst_index)`` picks one of the sorted equal-cost next hops. The switch path of (source leaf,
    destination) is deterministic, so it is memoised in the graph's PathIndex under ``name``."""
    idx = paths.index(graph)
    dst_index = idx.host_index
    memo = idx.memo.setdefault(name, {})
    out = {}
    for flow in _merged(idx, demand):
        src_leaf = idx.leaf[flow.src]
        middle = memo.get((src_leaf, flow.dst))
        if middle is None:
            dst_leaf = idx.leaf[flow.dst]
            hops = idx.next_hops(dst_leaf)
            if src_leaf not in hops:
                raise pairs.DemandError(f"no path from {flow.src} to {flow.dst}")
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
    for flow in _merged(idx, demand):
        cands = idx.host_paths(flow.src, flow.dst)
        out[flow.src, flow.dst] = cands[pick(flow, len(cands)) if len(cands) > 1 else 0]
    return out


def ecmp(graph, demand, load=None, seed=None):
    """ECMP: a fixed hash of (src, dst) onto the equal-cost paths (``seed`` is ignored: the
    fabric's hash does not change between runs)."""
    return _each_pair(graph, demand, lambda f, n: pair_hash(f.src, f.dst) % n)


def pair_hash(src, dst):
    """A stable 64-bit hash of a host pair (BLAKE2b of ``"src>dst"``; see ``ecmp``)."""
    return int.from_bytes(hashlib.blake2b(f"{src}>{dst}".encode(), digest_size=8).digest(), "big")


def random(graph, demand, load=None, seed=None):
    """A random shortest path per pair (repeatable with ``seed``)."""
    rng = _random.Random(seed)
    return _each_pair(graph, demand, lambda f, n: rng.randrange(n))


def _greedy(graph, demand, load, cost):
    idx = paths.index(graph)
    current = idx.load_array(load)
    leaf, capacity = idx.leaf, idx.capacity
    out = {}
    for flow in _merged(idx, demand):
        src_leaf, dst_leaf = leaf[flow.src], leaf[flow.dst]
        if src_leaf == dst_leaf:  # one path, no switch-to-switch link
            out[flow.src, flow.dst] = [flow.src, src_leaf, flow.dst]
            continue
        links = idx.switch_link_array(src_leaf, dst_leaf)
        best = int(cost(current[links]).argmin()) if len(links) > 1 else 0
        chosen = links[best]
        current[chosen] += flow.bytes / capacity[chosen]
        out[flow.src, flow.dst] = [flow.src] + idx.switch_paths(src_leaf, dst_leaf)[best] + [flow.dst]
    return out


def greedy(graph, demand, load=None, seed=None):
    """PFSim's Greedy: the shortest path with the least sum of current switch-link load."""
    return _greedy(graph, demand, load, lambda loads: loads.sum(axis=1))


def greedy2(graph, demand, load=None, seed=None):
    """PFSim's Greedy2 ("dynamic"): the shortest path with the least maximum switch-link load."""
    return _greedy(graph, demand, load, lambda loads: loads.max(axis=1))
