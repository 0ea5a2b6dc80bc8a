"""The recursive-doubling schedule and the step-balanced allreduce planner (pure, no Ryu)."""
import random

import networkx as nx
import pytest

from sdnmpi.primitives import ALLREDUCE_PLANNERS, allreduce, fabric, fattree, schedule
from sdnmpi.primitives.colouring import bipartite_edge_colouring


def simulate_recursive_doubling(p):
    """Runs the schedule on sets: each rank must end up holding every rank's contribution."""
    have = [{r} for r in range(p)]
    for step in schedule.recursive_doubling_steps(p):
        receivers = [b for _a, b in step]
        assert len(receivers) == len(set(receivers)), "a rank receives twice in one step"
        incoming = {b: set(have[a]) for a, b in step}
        for b, data in incoming.items():
            have[b] |= data
    return have


@pytest.mark.parametrize("p", list(range(1, 70)) + [127, 128, 129, 1000, 4096])
def test_schedule_reduces_everything_everywhere(p):
    steps = schedule.recursive_doubling_steps(p)
    assert all(h == set(range(p)) for h in simulate_recursive_doubling(p))
    pof2 = 1 << (p.bit_length() - 1)
    assert len(steps) == (pof2.bit_length() - 1) + (2 if p != pof2 else 0)
    for step in steps:
        for a, b in step:
            assert 0 <= a < p and 0 <= b < p and a != b


@pytest.mark.parametrize("p", [0, -1])
def test_schedule_rejects_bad_p(p):
    with pytest.raises(ValueError):
        schedule.recursive_doubling_steps(p)


@pytest.mark.parametrize("k,nleaves", [(2, 2), (2, 4), (4, 4), (8, 2), (1, 8)])
def test_hierarchical_cross_pairs_of_equal_power_of_two_leaves_are_recursive_doublings(k, nleaves):
    """libsdnmpi asks for no extra steps there: the pairs are already routed."""
    sizes = [k] * nleaves
    rd = {pair for step in schedule.recursive_doubling_steps(k * nleaves) for pair in step}
    cross = schedule.hierarchical_cross_steps(sizes)
    assert len(cross) == nleaves.bit_length() - 1
    assert all(pair in rd for step in cross for pair in step)
    assert not schedule.hierarchical_routes_needed(sizes)


def test_hierarchical_cross_steps_of_uneven_leaves():
    # 3, 3, 2 ranks: 2 lanes per leaf; leaf 2 (ranks 6, 7) folds into leaf 0 (ranks 0, 1) and back,
    # then leaves 0 and 1 (ranks 3, 4) exchange lane by lane
    assert schedule.hierarchical_cross_steps([3, 3, 2]) == [
        [(0, 6), (1, 7), (6, 0), (7, 1)], [(0, 3), (1, 4), (3, 0), (4, 1)]]
    assert schedule.hierarchical_routes_needed([3, 3, 2])
    assert schedule.hierarchical_routes_needed([3, 3])           # lanes at rank distance 3
    assert schedule.hierarchical_routes_needed([2, 2, 2])        # three leaves
    # five leaves of 1, 2, 2, 2, 1: one lane, leaf 4 (rank 7) folds into leaf 0 (rank 0)
    steps = schedule.hierarchical_cross_steps([1, 2, 2, 2, 1])
    assert steps[0] == [(0, 7), (7, 0)]
    assert steps[1:] == [[(0, 1), (1, 0), (3, 5), (5, 3)], [(0, 3), (1, 5), (3, 0), (5, 1)]]


@pytest.mark.parametrize("sizes", [[], [4], [2, 0]])
def test_hierarchical_cross_steps_reject_bad_layouts(sizes):
    with pytest.raises(ValueError):
        schedule.hierarchical_cross_steps(sizes)


def test_host_steps_drop_same_host_pairs_and_count_duplicates():
    hosts = ["a", "a", "b", "b"]  # two ranks per host
    steps = schedule.host_steps(schedule.recursive_doubling_steps(4), hosts)
    assert steps[0] == []                              # distance 1: ranks on one host
    assert steps[1] == [(("a", "b"), 2), (("b", "a"), 2)]


def walk_ok(graph, plan):
    for (src, dst), path in plan.paths.items():
        assert path[0] == fabric.attachment(graph, src)[0]
        assert path[-1] == fabric.attachment(graph, dst)[0]
        for u, v in zip(path, path[1:]):
            assert graph.has_edge(u, v)
        assert len(path) == len(nx.shortest_path(fabric.switch_graph(graph), path[0], path[-1]))


def random_steps(graph, rng, p=None, ranks_per_host=1):
    hosts = fabric.hosts(graph)
    ranks = [h for h in hosts for _ in range(ranks_per_host)]
    rng.shuffle(ranks)
    if p is not None:
        ranks = ranks[:p]
    return schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)


@pytest.mark.parametrize("spines,leaves,hpl", [(2, 4, 2), (2, 4, 4), (3, 6, 4), (4, 8, 4), (2, 3, 3), (4, 4, 8)])
def test_balanced_meets_the_per_step_lower_bound_on_2_tier(spines, leaves, hpl):
    graph = fattree.leaf_spine(spines, leaves, hpl)
    rng = random.Random(spines * 100 + leaves * 10 + hpl)
    hosts = fabric.hosts(graph)
    placements = [hosts[:]]  # block
    for _ in range(30):
        perm = hosts[:]
        rng.shuffle(perm)
        placements.append(perm[:rng.randint(2, len(perm))])  # random placement, any p
    for ranks in placements:
        steps = schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)
        plan = allreduce.balanced(graph, steps)
        walk_ok(graph, plan)
        assert plan.max_load == plan.lower_bound, ranks
        baseline = allreduce.dmodk(graph, steps)
        assert all(b >= m for b, m in zip(baseline.max_load, plan.max_load))


def test_balanced_beats_dmodk_somewhere_and_single_is_worst():
    graph = fattree.leaf_spine(2, 4, 2)
    rng = random.Random(7)
    better = 0
    for _ in range(20):
        steps = random_steps(graph, rng)
        b, d, s = (ALLREDUCE_PLANNERS[n](graph, steps) for n in ("balanced", "dmodk", "single"))
        better += sum(d.max_load) > sum(b.max_load)
        assert sum(s.max_load) >= sum(d.max_load) >= sum(b.max_load)
    assert better > 5


def test_each_step_spreads_over_all_spines():
    graph = fattree.leaf_spine(2, 4, 2)
    hosts = fabric.hosts(graph)
    steps = schedule.host_steps(schedule.recursive_doubling_steps(8), hosts)
    plan = allreduce.balanced(graph, steps)
    for step in steps:
        spines_used = {plan.paths[pair][1] for pair, _c in step if len(plan.paths[pair]) == 3}
        if spines_used:
            assert spines_used == {0x101, 0x102}


FULL_BISECTION = {
    "ls-2-4-2": lambda: fattree.leaf_spine(2, 4, 2), "ls-4-6-4": lambda: fattree.leaf_spine(4, 6, 4),
    "ls-8-9-5": lambda: fattree.leaf_spine(8, 9, 5), "k4": lambda: fattree.kary(4),
    "k6": lambda: fattree.kary(6), "k8": lambda: fattree.kary(8), "k8-3": lambda: fattree.kary(8, 3),
}


@pytest.mark.parametrize("name", sorted(FULL_BISECTION))
def test_balanced_meets_the_cut_bound_on_every_full_bisection_case(name):
    """One rank per host, block and seeded random placements, any p: every step's busiest link
    carries exactly the cut bound (1 flow when some flow leaves a leaf: a contention-free step)."""
    graph = FULL_BISECTION[name]()
    rng = random.Random(name)
    hosts = fabric.hosts(graph)
    placements = [hosts[:]]
    for _ in range(12):
        perm = hosts[:]
        rng.shuffle(perm)
        placements.append(perm[:rng.randint(2, len(perm))])
    for ranks in placements:
        steps = schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)
        plan = allreduce.balanced(graph, steps)
        walk_ok(graph, plan)
        assert plan.max_load == plan.lower_bound, ranks
        assert set(plan.max_load) <= {0, 1}
        assert all(b >= m for b, m in zip(allreduce.dmodk(graph, steps).max_load, plan.max_load))


@pytest.mark.parametrize("k,hosts_per_edge", [(4, 4), (6, 6), (8, 8)])
def test_balanced_meets_the_cut_bound_on_3_tier_trees_tapered_at_the_edge(k, hosts_per_edge):
    graph = fattree.kary(k, hosts_per_edge)
    rng = random.Random(k)
    for _ in range(5):
        steps = random_steps(graph, rng)
        plan = allreduce.balanced(graph, steps)
        walk_ok(graph, plan)
        assert plan.max_load == plan.lower_bound


def test_lower_bound_counts_every_level_of_a_3_tier_tree():
    """Four flows from the hosts of one k=4 pod to another pod: each leaf sends 2 flows over its 2
    uplinks (bound 1 there), but the pod sends 4 over its 4 core links, and the receiving edge
    takes 4 flows on 2 uplinks: 2."""
    graph = fattree.kary(4)
    hosts = fabric.hosts(graph)          # 4 hosts per pod, 2 per edge
    step = [((hosts[i], hosts[4 + (i % 2)]), 1) for i in range(4)]
    assert allreduce.lower_bound(graph, step) == 2
    step = [((hosts[i], hosts[4 + i]), 1) for i in range(4)]
    assert allreduce.lower_bound(graph, step) == 1


def test_balanced_on_a_fabric_that_is_not_a_tree_falls_back_to_greedy():
    graph = fattree.leaf_spine(2, 4, 2)
    graph.remove_edge(0x201, 0x102)       # leaf 1 lost an uplink
    steps = random_steps(graph, random.Random(4))
    plan = allreduce.balanced(graph, steps)
    walk_ok(graph, plan)
    assert all(lb <= m for m, lb in zip(plan.max_load, plan.lower_bound))


def test_several_ranks_per_host_and_repeated_pairs_keep_one_path_per_pair():
    graph = fattree.leaf_spine(2, 4, 2)
    steps = random_steps(graph, random.Random(3), ranks_per_host=3)
    plan = allreduce.balanced(graph, steps)
    walk_ok(graph, plan)
    pairs = {pair for step in steps for pair, _c in step}
    assert set(plan.paths) == pairs
    assert all(m >= lb for m, lb in zip(plan.max_load, plan.lower_bound))


def test_plan_is_deterministic():
    graph = fattree.leaf_spine(3, 6, 4)
    steps = random_steps(graph, random.Random(11))
    assert allreduce.balanced(graph, steps) == allreduce.balanced(graph, steps)


def test_unknown_hosts_and_bad_counts_are_refused():
    graph = fattree.leaf_spine(2, 2, 1)
    a, b = fabric.hosts(graph)
    with pytest.raises(allreduce.PlanError):
        allreduce.balanced(graph, [[((a, "00:00:00:00:99:99"), 1)]])
    with pytest.raises(allreduce.PlanError):
        allreduce.balanced(graph, [[((a, b), 0)]])


@pytest.mark.parametrize("name", sorted(ALLREDUCE_PLANNERS))
def test_a_leaf_cut_off_from_the_fabric_is_a_plan_error(name):
    """The controller turns PlanError into an RPC error and drops the plan after a topology
    change; any other exception would escape both."""
    graph = fattree.leaf_spine(2, 4, 2)
    hosts = fabric.hosts(graph)
    leaf = next(iter(graph.neighbors(hosts[0])))
    for sw in [n for n in graph.neighbors(leaf) if graph.nodes[n].get("kind") == "switch"]:
        graph.remove_edge(leaf, sw)
    with pytest.raises(allreduce.PlanError):
        ALLREDUCE_PLANNERS[name](graph, [[((hosts[0], hosts[-1]), 1), ((hosts[-1], hosts[0]), 1)]])


def test_bipartite_edge_colouring_is_proper_with_max_degree_colours():
    rng = random.Random(5)
    for _ in range(200):
        edges = [(("L", rng.randrange(6)), ("R", rng.randrange(6))) for _ in range(rng.randrange(1, 40))]
        colours = bipartite_edge_colouring(edges)
        degree = {}
        for u, v in edges:
            degree[u] = degree.get(u, 0) + 1
            degree[v] = degree.get(v, 0) + 1
        assert max(colours) < max(degree.values())
        seen = set()
        for (u, v), c in zip(edges, colours):
            assert (u, c) not in seen and (v, c) not in seen
            seen.update({(u, c), (v, c)})
