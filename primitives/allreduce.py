"""Allreduce route planners: one path per (sender host, receiver host) pair of a job's schedule.

The steps of recursive doubling run one after another, so flows of different steps never compete:
what matters is the busiest link *within each step*. `balanced` minimises it per step:

- On a multi-rooted tree (2-tier leaf-spine, 3-tier k-ary fat-tree, tapered or not) a step's
  inter-leaf flows are routed by edge colouring one tree level at a time (König's theorem;
  primitives/jobroute_optimal.py, the job-routing planner, does it): each level's flows form a
  bipartite multigraph of maximum degree D, coloured with D matchings that are dealt out to the
  uplinks. Every link then carries at most the step's cut bound (`lower_bound`) on fabrics with
  full bisection or tapered only at the leaves; a permutation step is contention-free. Time is
  linear in the flows times the levels (4096 hosts: well under a second), no path enumeration.
- Elsewhere (a fabric with failed links, pairs repeated with multiplicity, or a step where some
  pair already has its path from an earlier step) it is greedy: flow by flow, the shortest path
  whose busiest link is least loaded so far in this step (then the least total load), and that
  path's links gain the flow's weight; then the job planners' rip-up pass (jobroute_ripup.py, on
  flow counts, the pairs placed in earlier steps held fixed) moves flows off the step's busiest
  links while no link reaches their load.

A pair that occurs in several steps keeps one path (routes match host pairs); later steps count it
as already placed. `dmodk` and `single` give the default routes' paths, as baselines.

Input: the graph of primitives/fabric.py and steps as from `schedule.host_steps`: a list of steps,
each a list of ((src mac, dst mac), count). Output: a `Plan`.
"""
import collections
import dataclasses
import itertools
import math
import operator

from . import fabric, jobroute_optimal, jobroute_ripup, pairs, routing
from .errors import PlanRefused
from .paths import index as path_index
from .leastload import LeastLoadRouter, NoPathError

_FIRST, _SECOND, _TAIL = operator.itemgetter(0), operator.itemgetter(1), operator.itemgetter(slice(1, None))


@dataclasses.dataclass(frozen=True)
class Plan:
    paths: dict             # (src mac, dst mac) -> tuple of switch dpids, src leaf ... dst leaf
    max_load: tuple         # per step: flows on the busiest directed switch link
    lower_bound: tuple      # per step: the least possible max_load


class PlanError(PlanRefused):
    """The steps name hosts that are not in the topology, or hosts with no path between them."""


def step_loads(graph, step, paths):
    """{(u, v) directed switch link: flows} of one step under ``paths``."""
    if all(count == 1 for _pair, count in step):     # the usual case: counted in C
        found = list(map(paths.get, map(_FIRST, step), itertools.repeat(())))
        return dict(collections.Counter(itertools.chain.from_iterable(map(zip, found, map(_TAIL, found)))))
    loads = {}
    for (src, dst), count in step:
        path = paths.get((src, dst), ())
        for link in zip(path, path[1:]):
            loads[link] = loads.get(link, 0) + count
    return loads


def lower_bound(graph, step, tree=None):
    """The cut bound of one step: max over tree levels and blocks (a leaf, a pod, ...) of
    ceil(flows it sends or receives across its uplinks / its uplinks). On a fabric that is not a
    multi-rooted tree: max over leaves of ceil(inter-leaf flows it sends or receives / its uplinks)."""
    leaf = path_index(graph).leaf
    # flows per (source leaf, destination leaf), counted in C: fewer items for cut_bound's levels
    found = list(map(_FIRST, step))
    by_leaves = collections.Counter(zip(map(leaf.__getitem__, map(_FIRST, found)),
                                        map(leaf.__getitem__, map(_SECOND, found))))
    if any(count != 1 for _pair, count in step):
        for ((src, dst), count) in step:
            by_leaves[leaf[src], leaf[dst]] += count - 1
    flows = [(a, b, count) for (a, b), count in by_leaves.items()]
    if tree is None:
        tree = _tree(graph)
    if tree:
        return jobroute_optimal.cut_bound(tree, flows)
    sent, received = collections.Counter(), collections.Counter()
    for a, b, count in flows:
        if a != b:
            sent[a] += count
            received[b] += count
    height = path_index(graph).heights()
    sg = fabric.switch_graph(graph)
    bound = 0
    for leaf_sw, n in list(sent.items()) + list(received.items()):
        ups = sum(1 for x in sg.neighbors(leaf_sw) if height.get(x, 0) > 0) or 1
        bound = max(bound, math.ceil(n / ups))
    return bound


def balanced(graph, steps):
    index = path_index(graph)
    _check_hosts(index, steps)
    tree = _tree(graph)
    leaf = index.leaf
    planned, router = {}, None
    for step in steps:
        if planned.keys().isdisjoint(map(_FIRST, step)):   # the usual case: no pair seen before
            todo, fixed = step, False
        else:
            todo = [(pair, count) for pair, count in step if pair not in planned]
            new = {pair for pair, _c in todo}
            fixed = any(len(planned[pair]) > 1 for pair, _c in step if pair not in new)
        inter, ends = [], []
        for pair, count in todo:
            a, b = leaf[pair[0]], leaf[pair[1]]
            if a == b:
                planned[pair] = (a,)
            else:
                inter.append((pair, count))
                ends.append((a, b))
        if tree and not fixed and all(count == 1 for _pair, count in inter):
            planned.update(_coloured(graph, tree, leaf, inter, ends))
        else:
            router = router or LeastLoadRouter(graph)
            planned.update(_greedy(graph, step, inter, planned, router))
    return _plan(graph, steps, planned, tree)


def dmodk(graph, steps):
    return _from_routes(graph, steps, routing.dmodk(graph))


def single(graph, steps):
    return _from_routes(graph, steps, routing.single(graph))


# -- internals -----------------------------------------------------------------------------------
def _tree(graph):
    """The graph's level structure (jobroute_optimal.Tree), or False if it is not a multi-rooted tree;
    memoised with the graph's PathIndex (dropped with it when the graph changes)."""
    memo = path_index(graph).memo
    if _TREE not in memo:
        try:
            memo[_TREE] = jobroute_optimal.Tree(graph)
        except jobroute_optimal.NotATree:
            memo[_TREE] = False
    return memo[_TREE]


_TREE = ("allreduce", "tree")


def _check_hosts(index, steps):
    kind, host = index.kind, fabric.HOST
    for step in steps:
        counts = list(map(_SECOND, step))
        if (set(map(kind.get, set(itertools.chain.from_iterable(map(_FIRST, step))))) <= {host}
                and all(map(isinstance, counts, itertools.repeat(int))) and min(counts, default=1) >= 1):
            continue                                  # the usual case, checked in C; else find the culprit
        for (src, dst), count in step:
            if kind.get(src) != host or kind.get(dst) != host:
                mac = src if kind.get(src) != host else dst
                raise PlanError("host %s is not in the topology" % (mac,))
            if not isinstance(count, int) or count < 1:
                raise PlanError("bad multiplicity %r for %s -> %s" % (count, src, dst))


def _coloured(graph, tree, leaf, inter, ends):
    """The step's inter-leaf ``inter`` flows routed by jobroute_optimal's level-by-level colouring:
    {pair: switch path}. On a tree tapered above the leaves, or where the colouring finds that the
    fabric is not such a tree after all, route_checked decides (greedy's paths if better, or
    greedy alone, as for the job planners). ``ends``: their (source leaf, destination leaf)."""
    try:
        if not tree.tapered_above:
            try:
                return {inter[i][0]: path for i, path in jobroute_optimal.colour_paths(graph, tree, ends).items()}
            except jobroute_optimal.NotATree:
                pass                                # route_checked logs it and routes greedily
        flows = [pairs.Flow(src, dst, 1) for (src, dst), _c in inter]
        routed = jobroute_optimal.route_checked(graph, flows, tree=tree, leaf=leaf)
    except pairs.DemandError as err:                # a leaf cut off from the others
        raise PlanError(str(err)) from None
    return {pair: tuple(path[1:-1]) for pair, path in routed.items()}


def _greedy(graph, step, inter, paths, router):
    """Places ``inter`` flows one by one on the shortest path whose busiest link is least loaded so
    far in this step (then least total load), then lowers the step's busiest link by rip-up and
    re-route (jobroute_ripup.improve on flow counts; the step's pairs in ``paths`` stay where they
    are). ``router``: the graph's LeastLoadRouter. Returns {pair: path}."""
    leaf = path_index(graph).leaf
    loads = step_loads(graph, [(p, c) for p, c in step if p in paths], paths)
    fixed = pairs.LinkLoad()
    fixed.flows.update(loads)
    placed, weight = {}, {}
    for (src, dst), count in sorted(inter, key=lambda item: (-item[1], item[0])):
        try:
            path = router.best_path(leaf[src], leaf[dst], loads)
        except NoPathError as err:
            raise PlanError(str(err)) from None
        _add_load(loads, path, count)
        placed[(src, dst)], weight[(src, dst)] = path, count
    # moves alone, at most 8 rounds: ejections lower more steps to their bound but cost 1.4-7x the
    # time at 1024-4096 hosts (docs/jobroute.md, "The allreduce planner's greedy fallback")
    # on flow counts improve() reads no bytes: each pair's multiplicity goes in ``counts``
    flows = [pairs.Flow(src, dst, 0) for src, dst in sorted(weight)]
    host_paths = {(src, dst): [src, *path, dst] for (src, dst), path in placed.items()}
    jobroute_ripup.improve(graph, flows, host_paths, fixed, rounds=8, counts=weight, eject=False, router=router)
    return {pair: tuple(path[1:-1]) for pair, path in host_paths.items()}


def _add_load(loads, path, count):
    for link in zip(path, path[1:]):
        loads[link] = loads.get(link, 0) + count


def _from_routes(graph, steps, table):
    _check_hosts(path_index(graph), steps)
    wanted = list(dict.fromkeys(pair for step in steps for pair, _count in step))
    try:
        host_paths = routing.paths_from_table(graph, table, wanted)
    except routing.NoRouteError as err:
        raise PlanError(str(err)) from None
    return _plan(graph, steps, {pair: tuple(path[1:-1]) for pair, path in host_paths.items()})


def _plan(graph, steps, paths, tree=None):
    tree = _tree(graph) if tree is None else tree
    max_loads = tuple(max(step_loads(graph, step, paths).values(), default=0) for step in steps)
    bounds = tuple(lower_bound(graph, step, tree) for step in steps)
    return Plan(paths=paths, max_load=max_loads, lower_bound=bounds)
