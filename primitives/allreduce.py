"""Allreduce route planners: one path per (sender host, receiver host) pair of a job's schedule.

The steps of recursive doubling run one after another, so flows of different steps never compete:
what matters is the busiest link *within each step*. `balanced` minimises it per step:

- On a complete 2-tier leaf-spine fabric it is an edge colouring. A step's inter-leaf flows form a
  bipartite multigraph (sending leaves x receiving leaves) of maximum degree D; König's theorem
  colours it with D colours, i.e. D matchings, and matching c crosses spine c mod S. Every leaf
  uplink and downlink then carries at most ceil(D / S) flows, which is the lower bound.
- Elsewhere (3-tier trees, a fabric with failed links, or pairs repeated with multiplicity) it is
  greedy: flow by flow, the shortest path whose busiest link is least loaded so far in this step
  (then the least total load), and that path's links gain the flow's weight.

A pair that occurs in several steps keeps one path (routes match host pairs); later steps count it
as already placed. `dmodk` and `single` give the default routes' paths, as baselines.

Input: the graph of primitives/fabric.py and steps as from `schedule.host_steps`: a list of steps,
each a list of ((src mac, dst mac), count). Output: a `Plan`.
"""
import dataclasses
import math

from . import fabric, routing
from .colouring import bipartite_edge_colouring
from .leastload import LeastLoadRouter, NoPathError


@dataclasses.dataclass(frozen=True)
class Plan:
    paths: dict             # (src mac, dst mac) -> tuple of switch dpids, src leaf ... dst leaf
    max_load: tuple         # per step: flows on the busiest directed switch link
    lower_bound: tuple      # per step: the least possible max_load


class PlanError(ValueError):
    """The steps name hosts that are not in the topology, or hosts with no path between them."""


def step_loads(graph, step, paths):
    """{(u, v) directed switch link: flows} of one step under ``paths``."""
    loads = {}
    for (src, dst), count in step:
        path = paths.get((src, dst), ())
        for link in zip(path, path[1:]):
            loads[link] = loads.get(link, 0) + count
    return loads


def lower_bound(graph, step):
    """Max over leaves of ceil(inter-leaf flows it sends or receives / its uplinks)."""
    sent, received = {}, {}
    for (src, dst), count in step:
        a, b = fabric.attachment(graph, src)[0], fabric.attachment(graph, dst)[0]
        if a != b:
            sent[a] = sent.get(a, 0) + count
            received[b] = received.get(b, 0) + count
    height = fabric.heights(graph)
    bound = 0
    for leaf, flows in list(sent.items()) + list(received.items()):
        ups = sum(1 for n in fabric.switch_graph(graph).neighbors(leaf) if height.get(n, 0) > 0) or 1
        bound = max(bound, math.ceil(flows / ups))
    return bound


def balanced(graph, steps):
    _check_hosts(graph, steps)
    spines = _complete_leaf_spine(graph)
    paths = {}
    for step in steps:
        todo = [(pair, count) for pair, count in step if pair not in paths]
        inter = [(pair, count) for pair, count in todo if _leaf(graph, pair[0]) != _leaf(graph, pair[1])]
        for pair, _count in todo:
            if _leaf(graph, pair[0]) == _leaf(graph, pair[1]):
                paths[pair] = (_leaf(graph, pair[0]),)
        if spines and all(count == 1 for _pair, count in inter) and not _fixed_in_step(step, todo, paths):
            paths.update(_colour_leaf_spine(graph, [pair for pair, _c in inter], spines))
        else:
            paths.update(_greedy(graph, step, inter, paths))
    return _plan(graph, steps, paths)


def dmodk(graph, steps):
    return _from_routes(graph, steps, routing.dmodk(graph))


def single(graph, steps):
    return _from_routes(graph, steps, routing.single(graph))


# -- internals -----------------------------------------------------------------------------------
def _leaf(graph, mac):
    return fabric.attachment(graph, mac)[0]


def _check_hosts(graph, steps):
    for step in steps:
        for (src, dst), count in step:
            for mac in (src, dst):
                if mac not in graph or graph.nodes[mac].get("kind") != fabric.HOST:
                    raise PlanError("host %s is not in the topology" % (mac,))
            if not isinstance(count, int) or count < 1:
                raise PlanError("bad multiplicity %r for %s -> %s" % (count, src, dst))


def _complete_leaf_spine(graph):
    """The spines (sorted) if the switches form a complete 2-tier leaf-spine, else None."""
    sg = fabric.switch_graph(graph)
    leaves = set(fabric.leaves(graph))
    spines = sorted(set(sg.nodes) - leaves)
    if not spines or not leaves:
        return None
    for leaf in leaves:
        if set(sg.neighbors(leaf)) != set(spines):
            return None
    for spine in spines:
        if not set(sg.neighbors(spine)) <= leaves:
            return None
    return spines


def _fixed_in_step(step, todo, paths):
    """True if some inter-leaf pair of the step already has a path from an earlier step."""
    todo_pairs = {pair for pair, _c in todo}
    return any(pair in paths and pair not in todo_pairs and len(paths[pair]) > 1 for pair, _c in step)


def _colour_leaf_spine(graph, pairs, spines):
    """Edge-colours the bipartite multigraph of ``pairs`` (sending leaf, receiving leaf)."""
    edges = [(("out", _leaf(graph, s)), ("in", _leaf(graph, d))) for s, d in pairs]
    colours = bipartite_edge_colouring(edges)
    return {pair: (edge[0][1], spines[colour % len(spines)], edge[1][1])
            for pair, edge, colour in zip(pairs, edges, colours)}


def _greedy(graph, step, inter, paths):
    """Places ``inter`` flows one by one on the shortest path whose busiest link is least loaded so
    far in this step (then least total load), then rips up and re-routes flows that sit on the
    busiest link while that lowers it. Returns {pair: path}."""
    router = LeastLoadRouter(graph)
    loads = step_loads(graph, [(p, c) for p, c in step if p in paths], paths)
    placed, weight = {}, {}
    for (src, dst), count in sorted(inter, key=lambda item: (-item[1], item[0])):
        try:
            path = router.best_path(_leaf(graph, src), _leaf(graph, dst), loads)
        except NoPathError as err:
            raise PlanError(str(err)) from None
        _add_load(loads, path, count)
        placed[(src, dst)], weight[(src, dst)] = path, count
    for _round in range(8):
        if not loads or not _improve(router, loads, placed, weight):
            break
    return placed


def _improve(router, loads, placed, weight):
    """One rip-up-and-reroute pass over the flows on a busiest link; True if the busiest load fell."""
    top = max(loads.values())
    improved = False
    for pair in sorted(placed):
        path, count = placed[pair], weight[pair]
        if max(loads.get(link, 0) for link in zip(path, path[1:])) < top:
            continue
        _add_load(loads, path, -count)
        alternative = router.best_path(path[0], path[-1], loads)
        if max(loads.get(link, 0) for link in zip(alternative, alternative[1:])) + count < top:
            path = alternative
        _add_load(loads, path, count)
        placed[pair] = path
    if max(loads.values()) < top:
        improved = True
    return improved


def _add_load(loads, path, count):
    for link in zip(path, path[1:]):
        loads[link] = loads.get(link, 0) + count


def _from_routes(graph, steps, table):
    _check_hosts(graph, steps)
    pairs = list(dict.fromkeys(pair for step in steps for pair, _count in step))
    try:
        host_paths = routing.paths_from_table(graph, table, pairs)
    except routing.NoRouteError as err:
        raise PlanError(str(err)) from None
    return _plan(graph, steps, {pair: tuple(path[1:-1]) for pair, path in host_paths.items()})


def _plan(graph, steps, paths):
    max_loads = tuple(max(step_loads(graph, step, paths).values(), default=0) for step in steps)
    bounds = tuple(lower_bound(graph, step) for step in steps)
    return Plan(paths=paths, max_load=max_loads, lower_bound=bounds)
