"""Job-routing pair routers (issue 15): SDN-optimal, SDN-greedy, SDN-adaptive and their byte
variants, on random demands over k-ary fat-trees and leaf-spines (seeded hypothesis runs)."""
import functools
import math
import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi.primitives import PAIR_ROUTERS, fabric, fattree, jobroute
from sdnmpi.primitives import pair_routing, pairs, routing
from sdnmpi.primitives.jobroute_greedy import sdn_greedy, sdn_greedy_bytes
from sdnmpi.primitives.jobroute_optimal import NotATree, Tree, lower_bound, sdn_optimal, sdn_optimal_bytes

SDN_ROUTERS = {name: router for name, router in PAIR_ROUTERS.items() if name.startswith("sdn-")}
SEEDED = settings(derandomize=True, deadline=None, max_examples=25)

# (builder name, arguments): full bisection has uplinks >= hosts below at every level.
FULL = [("kary", (4,)), ("kary", (6,)), ("kary", (8,)), ("kary", (12,)), ("kary", (16,)),
        ("leaf_spine", (2, 4, 2)), ("leaf_spine", (4, 8, 4)), ("leaf_spine", (6, 5, 4)),
        ("leaf_spine", (16, 32, 16))]
TAPERED = [("kary", (4, 3)), ("kary", (8, 6)), ("kary", (6, 7)), ("leaf_spine", (2, 4, 5)),
           ("leaf_spine", (2, 4, 7)), ("leaf_spine", (3, 6, 8))]


@functools.lru_cache(maxsize=None)
def topology(spec):
    name, args = spec
    return getattr(fattree, name)(*args)


@functools.lru_cache(maxsize=None)
def distances(spec):
    graph = topology(spec)
    return {h: nx.single_source_shortest_path_length(graph, h) for h in fabric.hosts(graph)}


def random_demand(graph, rng, density, sparse=0.0):
    """``density`` random permutations (minus fixed points), each flow kept with probability
    1 - sparse, random sizes."""
    hosts = fabric.hosts(graph)
    flows = []
    for _ in range(density):
        perm = hosts[:]
        rng.shuffle(perm)
        flows += [pairs.Flow(a, b, rng.randint(1, 1000)) for a, b in zip(hosts, perm)
                  if a != b and rng.random() >= sparse]
    return pairs.merge(flows)


def max_flows(graph, demand, paths):
    return pairs.link_load(graph, demand, paths).max_flows()


def assert_valid_paths(spec, demand, paths):
    """One path per pair of the demand, from src to dst over real links, shortest."""
    graph, dist = topology(spec), distances(spec)
    assert set(paths) == {(f.src, f.dst) for f in demand}
    for (src, dst), path in paths.items():
        assert path[0] == src and path[-1] == dst
        assert all(graph.has_edge(u, v) for u, v in zip(path, path[1:]))
        assert all(graph.nodes[n]["kind"] == fabric.SWITCH for n in path[1:-1])
        assert len(path) - 1 == dist[src][dst]


demands = st.tuples(st.integers(0, 2 ** 32), st.integers(1, 4), st.sampled_from([0.0, 0.3, 0.8]))


def check_optimal(spec, seed, density, sparse):
    """Full bisection: max link flows = the cut bound <= NL_D. Tapered at the leaves: the cut
    bound, which is then above NL_D when the leaves' uplinks are the bottleneck."""
    graph = topology(spec)
    demand = random_demand(graph, random.Random(seed), density, sparse)
    paths = sdn_optimal(graph, demand)
    assert_valid_paths(spec, demand, paths)
    bound = lower_bound(graph, demand)
    assert max_flows(graph, demand, paths) == bound
    assert bound <= pairs.node_load(demand) or spec in TAPERED


@SEEDED
@given(st.sampled_from(FULL + TAPERED), demands)
def test_optimal_reaches_the_cut_bound_and_nl_d_on_random_demands(spec, draw):
    check_optimal(spec, *draw)


@pytest.mark.parametrize("spec", FULL + TAPERED)
@pytest.mark.parametrize("density", [1, 2, 4])
def test_optimal_reaches_the_cut_bound_on_every_topology_up_to_1024_hosts(spec, density):
    check_optimal(spec, density, density, 0.0)


@pytest.mark.parametrize("spec", FULL)
@pytest.mark.parametrize("density", [1, 3])
def test_optimal_max_load_equals_nl_d_when_every_flow_leaves_its_leaf(spec, density):
    """Shifts by whole leaves: every host sends and receives ``density`` flows and all of them
    leave their leaf, so a leaf's uplinks carry per_leaf * NL_D flows: NL_D each where the leaf has
    as many uplinks as hosts (a permutation then runs without any contention), fewer with more."""
    graph = topology(spec)
    hosts = fabric.hosts(graph)
    leaf = fabric.leaves(graph)[0]
    per_leaf = len(hosts) // len(fabric.leaves(graph))
    uplinks = len(list(fabric.switch_graph(graph).neighbors(leaf)))
    demand = [pairs.Flow(h, hosts[(i + per_leaf * (1 + s)) % len(hosts)], 1)
              for i, h in enumerate(hosts) for s in range(density)]
    assert pairs.node_load(demand) == density
    expected = math.ceil(per_leaf * density / uplinks)
    assert expected == density or uplinks > per_leaf
    assert max_flows(graph, demand, sdn_optimal(graph, demand)) == expected


def upper_tapered(k, cores_per_aggregation):
    """A k-ary fat-tree whose aggregations keep only their first ``cores_per_aggregation`` cores:
    oversubscribed between pods and cores, not at the leaves."""
    graph = fattree.kary(k)
    half = k // 2
    graph.remove_nodes_from([0x300 + a * half + m + 1 for a in range(half) for m in range(cores_per_aggregation, half)])
    return graph


UPPER = [(4, 1), (8, 2), (8, 1), (12, 3), (12, 1)]


@pytest.mark.parametrize("k, cores", UPPER)
def test_trees_tapered_above_the_leaves_stay_within_one_flow_of_the_bound_and_under_dmodk(k, cores):
    graph = upper_tapered(k, cores)
    assert Tree(graph).tapered_above and not Tree(fattree.kary(k)).tapered_above
    dist = {h: nx.single_source_shortest_path_length(graph, h) for h in fabric.hosts(graph)}
    table = routing.dmodk(graph)
    for seed in range(30):
        demand = random_demand(graph, random.Random(seed), 1 + seed % 4, [0.0, 0.5][seed % 2])
        paths = sdn_optimal(graph, demand)
        assert all(len(path) - 1 == dist[src][dst] for (src, dst), path in paths.items())
        baseline = routing.paths_from_table(graph, table, [(f.src, f.dst) for f in demand])
        got = max_flows(graph, demand, paths)
        assert got <= lower_bound(graph, demand) + 1, seed
        assert got <= max_flows(graph, demand, baseline), seed


def test_the_cut_bound_is_a_real_bound():
    """No path choice beats lower_bound: brute force over every shortest-path assignment."""
    spec = ("kary", (4,))
    graph = topology(spec)
    rng = random.Random(3)
    hosts = fabric.hosts(graph)
    for _ in range(20):
        demand = pairs.merge(pairs.Flow(*rng.sample(hosts, 2), 1) for _ in range(4))
        choices = [list(nx.all_shortest_paths(graph, f.src, f.dst)) for f in demand]
        best = min(max_flows(graph, demand, {(f.src, f.dst): p for f, p in zip(demand, combo)})
                   for combo in _product(choices))
        assert best >= lower_bound(graph, demand)
        assert max_flows(graph, demand, sdn_optimal(graph, demand)) == best


def _product(choices):
    if not choices:
        yield ()
        return
    for first in choices[0]:
        for rest in _product(choices[1:]):
            yield (first,) + rest


SUITE = [("kary", (4,)), ("kary", (8,)), ("kary", (8, 6)), ("leaf_spine", (4, 8, 4)),
         ("leaf_spine", (2, 4, 5)), ("leaf_spine", (3, 6, 8))]


@pytest.mark.parametrize("spec", SUITE)
def test_greedy_and_optimal_never_exceed_dmodk_on_the_seeded_suite(spec):
    graph = topology(spec)
    table = routing.dmodk(graph)
    for seed in range(10):
        demand = random_demand(graph, random.Random(seed), 1 + seed % 4, 0.3 * (seed % 3))
        baseline = routing.paths_from_table(graph, table, [(f.src, f.dst) for f in demand])
        worst = max_flows(graph, demand, baseline)
        for router in (sdn_greedy, sdn_optimal):
            assert max_flows(graph, demand, router(graph, demand)) <= worst, (router.__name__, seed)


@SEEDED
@given(st.sampled_from(FULL[:4] + TAPERED[:3]), demands, st.sampled_from(sorted(PAIR_ROUTERS)))
def test_every_registered_router_returns_valid_shortest_paths(spec, draw, name):
    seed, density, sparse = draw
    graph = topology(spec)
    demand = random_demand(graph, random.Random(seed), density, sparse)
    assert_valid_paths(spec, demand, PAIR_ROUTERS[name](graph, demand, seed=seed))


def test_duplicate_pairs_self_pairs_and_empty_flows_are_merged_away():
    graph = topology(("leaf_spine", (2, 4, 2)))
    a, b, c = fabric.hosts(graph)[:3]
    demand = [pairs.Flow(a, c, 5), pairs.Flow(a, c, 7), pairs.Flow(b, b, 9), pairs.Flow(b, c, 0)]
    for name, router in sorted(PAIR_ROUTERS.items()):
        assert list(router(graph, demand)) == [(a, c)], name
        assert router(graph, []) == {}, name


def test_unknown_hosts_are_refused():
    graph = topology(("kary", (4,)))
    a = fabric.hosts(graph)[0]
    for name, router in sorted(SDN_ROUTERS.items()):
        with pytest.raises(pairs.DemandError, match="not in the topology"):
            router(graph, [pairs.Flow(a, "00:00:00:99:99:99", 1)])
        with pytest.raises(pairs.DemandError):
            router(graph, [pairs.Flow(a, 0x101, 1)])     # a switch is not a host


def shared_spine_jobs():
    """Two one-flow jobs between the same two leaves of a 2-spine leaf-spine."""
    graph = fattree.leaf_spine(2, 2, 2)
    h1, h2, h3, h4 = fabric.hosts(graph)
    return graph, [pairs.Flow(h1, h3, 10)], [pairs.Flow(h2, h4, 10)]


@pytest.mark.parametrize("router", [sdn_greedy, sdn_greedy_bytes, sdn_optimal, sdn_optimal_bytes])
def test_a_second_job_sees_the_first_jobs_load(router):
    graph, first, second = shared_spine_jobs()
    first_paths = router(graph, first)
    load = pairs.link_load(graph, first, first_paths)
    alone = pairs.link_load(graph, second, router(graph, second), base=load)
    together = pairs.link_load(graph, second, router(graph, second, load=load), base=load)
    assert alone.max_flows() == 2          # planned blind, both jobs take the same spine
    assert together.max_flows() == 1      # planned together, they take one spine each
    assert load.max_flows() == 1          # the first job's load is not modified


@pytest.mark.parametrize("spec", [("kary", (8,)), ("leaf_spine", (4, 8, 4))])
def test_optimal_with_load_keeps_its_own_bound_and_lowers_the_total(spec):
    graph = topology(spec)
    totals = {"blind": 0, "aware": 0}
    for seed in range(8):
        rng = random.Random(seed)
        first, second = random_demand(graph, rng, 2, 0.5), random_demand(graph, rng, 2, 0.5)
        load = pairs.link_load(graph, first, sdn_optimal(graph, first))
        aware = sdn_optimal(graph, second, load=load)
        assert max_flows(graph, second, aware) <= pairs.node_load(second)
        totals["aware"] += pairs.link_load(graph, second, aware, base=load).max_flows()
        totals["blind"] += pairs.link_load(graph, second, sdn_optimal(graph, second), base=load).max_flows()
    assert totals["aware"] < totals["blind"], totals


def test_byte_variants_lower_the_busiest_links_bytes_on_skewed_sizes():
    """Elephants and mice: the byte variants put fewer bytes on the busiest link (summed over a
    seeded suite) and the optimal one keeps the flow-count bound."""
    totals = {name: 0 for name in ("greedy", "greedy-bytes", "optimal", "optimal-bytes")}
    for spec in [("kary", (8,)), ("leaf_spine", (4, 8, 4)), ("leaf_spine", (2, 4, 5))]:
        graph = topology(spec)
        for seed in range(6):
            rng = random.Random(seed)
            demand = pairs.merge(pairs.Flow(f.src, f.dst, 1000 if rng.random() < 0.2 else 1)
                                 for f in random_demand(graph, rng, 2))
            for name, router in [("greedy", sdn_greedy), ("greedy-bytes", sdn_greedy_bytes),
                                 ("optimal", sdn_optimal), ("optimal-bytes", sdn_optimal_bytes)]:
                paths = router(graph, demand)
                totals[name] += pairs.link_load(graph, demand, paths).max_bytes()
            assert max_flows(graph, demand, sdn_optimal_bytes(graph, demand)) == lower_bound(graph, demand)
    assert totals["greedy-bytes"] < totals["greedy"], totals
    assert totals["optimal-bytes"] < totals["optimal"], totals


def test_adaptive_routes_a_permutation_optimally_and_leaves_dense_demands_to_ecmp():
    spec = ("kary", (8,))
    graph = topology(spec)
    permutation = random_demand(graph, random.Random(1), 1)
    paths = jobroute.sdn_adaptive(graph, permutation)
    assert not isinstance(paths, pairs.FabricRoutes)
    assert paths == sdn_optimal(graph, permutation)
    dense = random_demand(graph, random.Random(1), 3)
    paths = jobroute.sdn_adaptive(graph, dense, seed=4)
    assert isinstance(paths, pairs.FabricRoutes) and paths.policy == "ecmp"
    assert dict(paths) == pair_routing.ecmp(graph, dense)      # the one ECMP model
    assert_valid_paths(spec, dense, paths)


def test_ecmp_paths_follow_the_ecmp_table_and_spread_pairs():
    graph = topology(("leaf_spine", (4, 8, 4)))
    table = routing.ecmp(graph)
    demand = random_demand(graph, random.Random(2), 2)
    paths = pair_routing.ecmp(graph, demand)
    spines = set()
    for (src, dst), path in paths.items():
        for sw, nxt in zip(path[1:-1], path[2:]):
            nxt_port = fabric.port_towards(graph, sw, nxt) if nxt in fabric.switches(graph) \
                else fabric.attachment(graph, dst)[1]
            assert nxt_port in table[sw][dst]
        spines.update(path[2:3] if len(path) == 5 else [])
    assert len(spines) == 4


def test_dmodk_paths_follow_the_dmodk_table():
    graph = topology(("kary", (4,)))
    table = routing.dmodk(graph)
    demand = random_demand(graph, random.Random(0), 2)
    for (src, dst), path in pair_routing.dmodk(graph, demand).items():
        for sw, nxt in zip(path[1:-2], path[2:-1]):
            assert table[sw][dst] == (fabric.port_towards(graph, sw, nxt),)


def test_optimal_falls_back_to_greedy_off_a_tree():
    """A failed link leaves the cores above different leaves: greedy paths, still shortest."""
    graph = fattree.kary(4)
    graph.remove_edge(0x201, 0x301)
    with pytest.raises(NotATree):
        Tree(graph)
    demand = random_demand(graph, random.Random(0), 2)
    paths = sdn_optimal(graph, demand)
    assert paths == sdn_greedy(graph, demand)
    dist = {h: nx.single_source_shortest_path_length(graph, h) for h in fabric.hosts(graph)}
    assert all(len(path) - 1 == dist[src][dst] for (src, dst), path in paths.items())


def test_switches_numbered_so_that_uplinks_do_not_meet_fall_back_to_greedy():
    """Pod 0's first aggregation renumbered last: the g-th aggregations of pods 0 and 1 reach
    different cores, which the router notices (then routes greedily, on shortest paths)."""
    graph = nx.relabel_nodes(fattree.kary(4), {0x201: 0x2FF}, copy=True)
    for data in graph.edges.values():
        data["ports"] = {(0x2FF if sw == 0x201 else sw): p for sw, p in data["ports"].items()}
    Tree(graph)                                    # still a tree, only the numbering differs
    demand = random_demand(graph, random.Random(0), 2)
    paths = sdn_optimal(graph, demand)
    assert paths == sdn_greedy(graph, demand)
    dist = {h: nx.single_source_shortest_path_length(graph, h) for h in fabric.hosts(graph)}
    assert all(len(path) - 1 == dist[src][dst] for (src, dst), path in paths.items())
