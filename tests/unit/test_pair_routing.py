"""primitives/pair_routing.py and primitives/paths.py: PFSim-style host-pair routers."""
import os

import networkx as nx
import pytest

from sdnmpi.primitives import PAIR_ROUTERS, fabric, fattree, pair_routing, pairs, paths, routing
from sdnmpi.simulator import topology

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "pfsim", "topologies")


def graphs():
    return {"milk": topology.from_graphml(os.path.join(DATA, "milk.graphml")),
            "pepsi": topology.from_graphml(os.path.join(DATA, "pepsi.graphml")),
            "kary4": fattree.kary(4), "leafspine": fattree.leaf_spine(3, 4, 2)}


def test_registry_has_the_pfsim_routers():
    for name in ("dmodk", "single", "ecmp", "random", "greedy", "greedy2"):
        assert PAIR_ROUTERS[name] is getattr(pair_routing, name)


@pytest.mark.parametrize("name", ["milk", "pepsi"])
def test_path_order_is_networkx_order_on_the_pfsim_digraph(name):
    # PFSim enumerates nx.all_shortest_paths on the directed GraphML graph: same paths, same order
    raw = nx.read_graphml(os.path.join(DATA, name + ".graphml"))
    g = graphs()[name]
    idx = paths.index(g)
    node = {d["name"]: n for n, d in g.nodes(data=True)}
    hosts = [n for n, d in raw.nodes(data=True) if d["typ"] == "host"]
    for s in hosts[::3]:
        for t in hosts:
            if s != t:
                want = [[node[x] for x in p] for p in nx.all_shortest_paths(raw, s, t)]
                assert idx.host_paths(node[s], node[t]) == want


@pytest.mark.parametrize("name", ["kary4", "leafspine"])
def test_path_order_is_networkx_order_on_fat_trees(name):
    g = graphs()[name]
    idx = paths.index(g)
    hosts = fabric.hosts(g)
    for s in hosts[::2]:
        for t in hosts:
            if s != t:
                assert idx.host_paths(s, t) == list(nx.all_shortest_paths(g, s, t))


def all_pairs(g, nbytes=1):
    hosts = fabric.hosts(g)
    return [pairs.Flow(s, d, nbytes) for s in hosts for d in hosts if s != d]


@pytest.mark.parametrize("router", sorted(PAIR_ROUTERS))
@pytest.mark.parametrize("name", ["milk", "kary4"])
def test_every_router_gives_one_shortest_path_per_pair(router, name):
    g = graphs()[name]
    demand = all_pairs(g)
    routes = PAIR_ROUTERS[router](g, demand, seed=3)
    assert set(routes) == {(f.src, f.dst) for f in demand}
    for (s, d), path in routes.items():
        assert path[0] == s and path[-1] == d
        assert len(path) - 1 == nx.shortest_path_length(g, s, d)
        assert all(g.has_edge(path[i], path[i + 1]) for i in range(len(path) - 1))


@pytest.mark.parametrize("name", ["kary4", "leafspine", "milk", "pepsi"])
def test_next_hops_are_fabrics(name):
    g = graphs()[name]
    idx = paths.index(g)
    for leaf in fabric.leaves(g):
        assert idx.next_hops(leaf) == fabric.next_hops_towards(g, leaf)


def follow(g, table, src, dst):
    """The path a packet takes through a per-destination RouteTable."""
    leaf, _ = fabric.attachment(g, src)
    path, sw = [src, leaf], leaf
    while True:
        (port,) = table[sw][dst]
        nxt = next(n for n in g.neighbors(sw) if g.edges[sw, n]["ports"].get(sw) == port)
        path.append(nxt)
        if nxt == dst:
            return path
        sw = nxt


@pytest.mark.parametrize("name", ["kary4", "leafspine", "milk"])
@pytest.mark.parametrize("router", ["dmodk", "single"])
def test_dmodk_and_single_are_what_the_controller_installs(name, router):
    g = graphs()[name]
    table = getattr(routing, router)(g)
    routes = PAIR_ROUTERS[router](g, all_pairs(g))
    for (s, d), path in routes.items():
        assert path == follow(g, table, s, d)


def test_dmodk_on_milk_is_pfsims_rule():
    # two-tier: at the source edge switch, core index addr(dst) mod 2 among the sorted cores
    g = graphs()["milk"]
    hosts = fabric.hosts(g)
    cores = sorted(n for n, d in g.nodes(data=True) if d.get("name", "").startswith("core"))
    routes = pair_routing.dmodk(g, all_pairs(g))
    for (s, d), path in routes.items():
        if len(path) == 5:
            assert path[2] == cores[hosts.index(d) % 2]


def test_greedy_spreads_and_greedy2_minimises_the_maximum():
    g = fattree.leaf_spine(2, 2, 2)
    h = fabric.hosts(g)
    spines = sorted(n for n in fabric.switches(g) if n < 0x200)
    demand = [pairs.Flow(h[0], h[2], 100), pairs.Flow(h[1], h[3], 100)]
    for router in (pair_routing.greedy, pair_routing.greedy2):
        routes = router(g, demand)
        assert {routes[h[0], h[2]][2], routes[h[1], h[3]][2]} == set(spines)
        assert routes[h[0], h[2]][2] == spines[0]  # the heavier-or-first pair takes the first path
    # single ignores load: both pairs on the first spine
    routes = pair_routing.single(g, demand)
    assert routes[h[0], h[2]][2] == routes[h[1], h[3]][2] == spines[0]


def test_greedy_sum_and_greedy2_max_differ():
    # path A: loads (5, 0), sum 5, max 5; path B: loads (3, 3), sum 6, max 3
    g = nx.Graph()
    for n in ("a", "b"):
        g.add_node(n, kind=fabric.HOST, ip="10.0.0.%d" % (1 + (n == "b")))
    for s in (1, 2, 3, 4):
        g.add_node(s, kind=fabric.SWITCH)
    for u, v in (("a", 1), (1, 2), (2, 4), (1, 3), (3, 4), (4, "b")):
        g.add_edge(u, v, ports={x: 1 for x in (u, v) if isinstance(x, int)})
    load = pairs.LinkLoad()
    load.bytes[1, 2] = 5
    load.bytes[1, 3] = 3
    load.bytes[3, 4] = 3
    demand = [pairs.Flow("a", "b", 1)]
    assert pair_routing.greedy(g, demand, load=load)["a", "b"] == ["a", 1, 2, 4, "b"]
    assert pair_routing.greedy2(g, demand, load=load)["a", "b"] == ["a", 1, 3, 4, "b"]


def test_random_is_repeatable_with_a_seed_and_ecmp_is_fixed():
    g = graphs()["kary4"]
    demand = all_pairs(g)
    assert pair_routing.random(g, demand, seed=7) == pair_routing.random(g, demand, seed=7)
    assert pair_routing.random(g, demand, seed=7) != pair_routing.random(g, demand, seed=8)
    assert pair_routing.ecmp(g, demand) == pair_routing.ecmp(g, list(reversed(demand)))
    # a hash spreads: the pairs between two pods use all four cores
    cores = {p[3] for (s, d), p in pair_routing.ecmp(g, demand).items() if len(p) == 7}
    assert len(cores) == 4


def test_merge_keeps_first_appearance_order_for_ties():
    demand = [pairs.Flow("b", "c", 5), pairs.Flow("a", "c", 5), pairs.Flow("x", "y", 9),
              pairs.Flow("b", "c", 0), pairs.Flow("a", "a", 100)]
    assert pairs.merge(demand) == [pairs.Flow("x", "y", 9), pairs.Flow("b", "c", 5),
                                   pairs.Flow("a", "c", 5)]


def test_path_index_is_memoised_per_graph_and_renewed_on_change():
    g = fattree.leaf_spine(2, 2, 1)
    first = paths.index(g)
    assert paths.index(g) is first
    fabric.add_switch(g, 0x999)
    fabric.add_link(g, 0x999, 1, 0x201, 9)
    assert paths.index(g) is not first
