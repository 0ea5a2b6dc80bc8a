"""The balanced allreduce planner after its speed-up (issue 17, planner scale): same plans, same quality.

balanced routes a usual step through jobroute_optimal.colour_paths directly (switch tuples, no Flow
objects or host paths); the job planners' route_checked runs the same colouring. These tests pin
that both give the same routes, that the plans meet the cut bound in every step, and that the
plans are the ones stage33's planner (before the speed-up) made.
"""
import hashlib
import random

import networkx as nx
import pytest

from sdnmpi.primitives import allreduce, fabric, fattree, jobroute_optimal, pairs, schedule

FABRICS = [
    ("leaf_spine", {"spines": 4, "leaves": 8, "hosts_per_leaf": 8}),
    ("leaf_spine", {"spines": 3, "leaves": 6, "hosts_per_leaf": 5}),
    ("kary", {"k": 4}),
    ("kary", {"k": 8}),
    ("kary", {"k": 6, "hosts_per_edge": 6}),
]


def build(kind, params):
    return getattr(fattree, kind)(**params)


def shuffled_steps(graph, seed, p=None):
    order = fabric.hosts(graph)
    random.Random(seed).shuffle(order)
    order = order[:p] if p else order
    return schedule.host_steps(schedule.recursive_doubling_steps(len(order)), order)


def assert_walks(graph, plan):
    for (src, dst), path in plan.paths.items():
        assert path[0] == fabric.attachment(graph, src)[0]
        assert path[-1] == fabric.attachment(graph, dst)[0]
        assert all(graph.has_edge(u, v) for u, v in zip(path, path[1:]))


@pytest.mark.parametrize("kind,params", FABRICS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_step_meets_the_cut_bound_on_random_placements(kind, params, seed):
    graph = build(kind, params)
    hosts = len(fabric.hosts(graph))
    for p in (hosts, hosts - 3):                 # a power of two or not (fold steps)
        steps = shuffled_steps(graph, seed, p)
        plan = allreduce.balanced(graph, steps)
        assert plan.max_load == plan.lower_bound
        assert set(plan.paths) == {pair for step in steps for pair, _c in step}
        assert_walks(graph, plan)


@pytest.mark.parametrize("kind,params", FABRICS)
def test_the_direct_colouring_gives_the_job_routers_paths(kind, params):
    graph = build(kind, params)
    leaf = {h: fabric.attachment(graph, h)[0] for h in fabric.hosts(graph)}
    for step in shuffled_steps(graph, 5):
        inter = [(pair, c) for pair, c in step if leaf[pair[0]] != leaf[pair[1]]]
        ends = [(leaf[s], leaf[d]) for (s, d), _c in inter]
        direct = allreduce._coloured(graph, jobroute_optimal.Tree(graph), leaf, inter, ends)
        routed = jobroute_optimal.route_checked(graph, [pairs.Flow(s, d, 1) for (s, d), _c in inter])
        assert list(direct.items()) == [(pair, tuple(path[1:-1])) for pair, path in routed.items()]


def test_uplinks_that_do_not_meet_fall_back_to_the_job_routers_greedy_paths():
    # pod 1's two aggregations swap dpids: its uplink g no longer meets the other pods' uplink g
    graph = nx.relabel_nodes(fattree.kary(4), {0x203: 0x204, 0x204: 0x203})
    tree = jobroute_optimal.Tree(graph)
    leaf = {h: fabric.attachment(graph, h)[0] for h in fabric.hosts(graph)}
    step = max(shuffled_steps(graph, 2), key=lambda s: len({(leaf[a], leaf[b]) for (a, b), _c in s}))
    inter = [(pair, c) for pair, c in step if leaf[pair[0]] != leaf[pair[1]]]
    ends = [(leaf[s], leaf[d]) for (s, d), _c in inter]
    with pytest.raises(jobroute_optimal.NotATree):
        jobroute_optimal.colour_paths(graph, tree, ends)
    direct = allreduce._coloured(graph, tree, leaf, inter, ends)
    routed = jobroute_optimal.route_checked(graph, [pairs.Flow(s, d, 1) for (s, d), _c in inter], tree=tree)
    assert direct == {pair: tuple(path[1:-1]) for pair, path in routed.items()}


# sha256 of repr(list(plan.paths.items())) of stage33's balanced planner (before the speed-up) on
# the recursive doubling of all hosts, placed by random.Random(7).shuffle of fabric.hosts
STAGE33_PLANS = [
    ("leaf_spine", {"spines": 8, "leaves": 16, "hosts_per_leaf": 16}, "4f744bcb227eed7a"),
    ("kary", {"k": 8}, "f38d061dab4c0992"),
    ("kary", {"k": 8, "hosts_per_edge": 8}, "e67be7582503a34a"),
]


@pytest.mark.parametrize("kind,params,digest", STAGE33_PLANS)
def test_plans_are_the_ones_made_before_the_speed_up(kind, params, digest):
    graph = build(kind, params)
    plan = allreduce.balanced(graph, shuffled_steps(graph, 7))
    assert hashlib.sha256(repr(list(plan.paths.items())).encode()).hexdigest()[:16] == digest
