"""primitives/routing.py: the default routing policies, as pure functions over synthetic fat-trees."""
import collections
import random

import networkx as nx
import pytest

from sdnmpi.primitives import DEFAULT_ROUTING, fabric, fattree, routing

GRAPHS = {
    "leafspine-2x4x2": lambda: fattree.leaf_spine(2, 4, 2),
    "leafspine-3x4x4": lambda: fattree.leaf_spine(3, 4, 4),     # 3 spines, 16 hosts
    "leafspine-4x3x3": lambda: fattree.leaf_spine(4, 3, 3),
    "leafspine-1x3x2": lambda: fattree.leaf_spine(1, 3, 2),
    "leafspine-3x8x2": lambda: fattree.leaf_spine(3, 8, 2),
    "kary4": lambda: fattree.kary(4),
    "kary6": lambda: fattree.kary(6),
}
POLICIES = sorted(DEFAULT_ROUTING)


def neighbour_on_port(graph, sw, port):
    for n in graph.neighbors(sw):
        if graph.edges[sw, n]["ports"][sw] == port:
            return n
    raise AssertionError("switch %#x has no port %d" % (sw, port))


def walks(graph, table, src, dst):
    """Every hop-by-hop walk over ``table`` from host ``src`` to host ``dst`` (one per choice among
    several ports). Each walk is the list of switches visited; loops and dead ends fail the test."""
    done = []

    def step(sw, path):
        assert sw not in path, "loop %s -> %#x towards %s" % ([hex(s) for s in path], sw, dst)
        path = path + [sw]
        assert dst in table[sw], "switch %#x has no route to %s" % (sw, dst)
        ports = table[sw][dst]
        assert ports and len(set(ports)) == len(ports)
        for port in ports:
            nxt = neighbour_on_port(graph, sw, port)
            if graph.nodes[nxt]["kind"] == fabric.HOST:
                assert nxt == dst, "%s delivered to %s" % (dst, nxt)
                done.append(path)
            else:
                step(nxt, path)

    step(fabric.attachment(graph, src)[0], [])
    return done


@pytest.fixture(params=sorted(GRAPHS))
def graph_name(request):
    return request.param


@pytest.mark.parametrize("policy", POLICIES)
def test_every_pair_reaches_its_destination_on_a_shortest_path(graph_name, policy):
    graph = GRAPHS[graph_name]()
    table = DEFAULT_ROUTING[policy](graph)
    hosts = fabric.hosts(graph)
    for src in hosts:
        lengths = nx.single_source_shortest_path_length(graph, src)
        for dst in hosts:
            if src == dst:
                continue
            paths = walks(graph, table, src, dst)
            assert paths
            for path in paths:
                assert len(path) + 1 == lengths[dst], "not a shortest path: %s" % path
            if policy != "ecmp":
                assert len(paths) == 1


@pytest.mark.parametrize("policy", POLICIES)
def test_one_entry_per_host_on_every_switch(graph_name, policy):
    graph = GRAPHS[graph_name]()
    table = DEFAULT_ROUTING[policy](graph)
    hosts = set(fabric.hosts(graph))
    assert set(table) == set(fabric.switches(graph))
    for sw, routes in table.items():
        assert set(routes) == hosts, "switch %#x" % sw
        for ports in routes.values():
            assert isinstance(ports, tuple) and all(isinstance(p, int) for p in ports)


def test_hosts_without_ip_are_not_destinations():
    graph = fattree.leaf_spine(2, 2, 2)
    fabric.add_host(graph, "00:00:00:00:99:99", None, 0x201, 9)
    for policy in POLICIES:
        table = DEFAULT_ROUTING[policy](graph)
        assert all("00:00:00:00:99:99" not in routes for routes in table.values())


def test_leaf_delivers_to_its_own_hosts_directly():
    graph = fattree.leaf_spine(3, 4, 4)
    for policy in POLICIES:
        table = DEFAULT_ROUTING[policy](graph)
        for mac in fabric.hosts(graph):
            leaf, port = fabric.attachment(graph, mac)
            assert table[leaf][mac] == (port,)


# ---------------------------------------------------------------------------------------------
# D-mod-K
@pytest.mark.parametrize("spines,leaves,per_leaf", [(2, 4, 2), (3, 4, 4), (4, 3, 3), (3, 8, 2), (1, 3, 2)])
def test_dmodk_two_tier(spines, leaves, per_leaf):
    graph = fattree.leaf_spine(spines, leaves, per_leaf)
    table = routing.dmodk(graph)
    hosts = fabric.hosts(graph)
    assert hosts == [fattree.host_mac(n) for n in range(1, len(hosts) + 1)]   # index d = host d+1
    for d, dst in enumerate(hosts):
        dst_leaf = fabric.attachment(graph, dst)[0]
        for leaf in range(0x201, 0x201 + leaves):
            if leaf != dst_leaf:
                # uplink to spine (d mod S): port H + 1 + (d mod S) on every leaf
                assert table[leaf][dst] == (per_leaf + 1 + d % spines,), (hex(leaf), d)
    # each spine's downlinks carry only the destinations congruent to the spine's index mod S
    carried = collections.defaultdict(set)
    for src in hosts:
        for dst in hosts:
            if fabric.attachment(graph, src)[0] != fabric.attachment(graph, dst)[0]:
                (path,) = walks(graph, table, src, dst)
                assert len(path) == 3
                carried[path[1]].add(hosts.index(dst))
    for spine_index in range(spines):
        indexes = carried[0x101 + spine_index]
        assert indexes and all(d % spines == spine_index for d in indexes)
    assert set().union(*carried.values()) == set(range(len(hosts)))


@pytest.mark.parametrize("k", [4, 6])
def test_dmodk_kary_spreads_destinations_evenly_over_cores(k):
    graph = fattree.kary(k)
    table = routing.dmodk(graph)
    hosts = fabric.hosts(graph)
    half = k // 2
    cores = [0x301 + c for c in range(half * half)]
    pod = {mac: (fabric.attachment(graph, mac)[0] - 0x101) // half for mac in hosts}
    for src in hosts:
        per_core = collections.defaultdict(set)
        for dst in hosts:
            if pod[dst] == pod[src]:
                continue
            (path,) = walks(graph, table, src, dst)
            assert len(path) == 5
            assert path[2] in cores
            per_core[path[2]].add(dst)
        off_pod = len(hosts) - len(hosts) // k
        # every core carries exactly 1/(k/2)^2 of the destinations outside the source's pod
        assert sorted(per_core) == cores
        assert all(len(d) == off_pod // len(cores) for d in per_core.values()), {hex(c): len(d) for c, d in per_core.items()}
    # and a destination always comes down through the same core, whoever sends to it
    for dst in hosts:
        via = {walks(graph, table, src, dst)[0][2] for src in hosts if pod[src] != pod[dst]}
        assert len(via) == 1


# ---------------------------------------------------------------------------------------------
# ECMP and single path
@pytest.mark.parametrize("spines,leaves,per_leaf", [(2, 4, 2), (3, 4, 4), (4, 3, 3)])
def test_ecmp_two_tier(spines, leaves, per_leaf):
    graph = fattree.leaf_spine(spines, leaves, per_leaf)
    table = routing.ecmp(graph)
    uplinks = tuple(per_leaf + 1 + s for s in range(spines))
    for dst in fabric.hosts(graph):
        dst_leaf = fabric.attachment(graph, dst)[0]
        for leaf in range(0x201, 0x201 + leaves):
            if leaf != dst_leaf:
                assert table[leaf][dst] == uplinks
        for spine in range(0x101, 0x101 + spines):
            assert table[spine][dst] == (dst_leaf - 0x200,)   # down: one path


def test_ecmp_kary4():
    graph = fattree.kary(4)
    table = routing.ecmp(graph)
    for dst in fabric.hosts(graph):
        dst_edge = fabric.attachment(graph, dst)[0]
        dst_pod = (dst_edge - 0x101) // 2
        for edge in range(0x101, 0x109):
            if edge != dst_edge:
                assert table[edge][dst] == (3, 4)                       # both aggregation switches
        for agg in range(0x201, 0x209):
            if (agg - 0x201) // 2 == dst_pod:
                assert table[agg][dst] == ((dst_edge - 0x101) % 2 + 1,)  # down: one path
            else:
                assert table[agg][dst] == (3, 4)                        # both cores
        for core in range(0x301, 0x305):
            assert table[core][dst] == (dst_pod + 1,)


@pytest.mark.parametrize("spines,leaves,per_leaf", [(2, 4, 2), (3, 4, 4), (4, 3, 3)])
def test_single_two_tier_uses_the_lowest_spine(spines, leaves, per_leaf):
    graph = fattree.leaf_spine(spines, leaves, per_leaf)
    table = routing.single(graph)
    hosts = fabric.hosts(graph)
    for src in hosts:
        for dst in hosts:
            if fabric.attachment(graph, src)[0] != fabric.attachment(graph, dst)[0]:
                (path,) = walks(graph, table, src, dst)
                assert path[1] == 0x101


def test_single_kary_takes_the_lowest_next_hop_everywhere():
    graph = fattree.kary(4)
    table = routing.single(graph)
    ecmp = routing.ecmp(graph)
    for sw, routes in table.items():
        for mac, ports in routes.items():
            assert ports == ecmp[sw][mac][:1]
            candidates = [neighbour_on_port(graph, sw, p) for p in ecmp[sw][mac]]
            assert neighbour_on_port(graph, sw, ports[0]) == min(candidates, key=lambda n: (isinstance(n, str), n))


def test_policies_agree_on_candidate_sets():
    """dmodk and single pick one of ECMP's candidates everywhere."""
    for name in ("leafspine-3x4x4", "kary4", "kary6"):
        graph = GRAPHS[name]()
        ecmp = routing.ecmp(graph)
        for policy in (routing.dmodk, routing.single):
            for sw, routes in policy(graph).items():
                for mac, ports in routes.items():
                    assert len(ports) == 1 and ports[0] in ecmp[sw][mac]


# ---------------------------------------------------------------------------------------------
# determinism
def shuffled_copy(graph, seed):
    rng = random.Random(seed)
    nodes = list(graph.nodes(data=True))
    edges = list(graph.edges(data=True))
    rng.shuffle(nodes)
    rng.shuffle(edges)
    g = nx.Graph()
    for n, d in nodes:
        g.add_node(n, **d)
    for u, v, d in edges:
        if rng.random() < 0.5:
            u, v = v, u
        g.add_edge(u, v, **d)
    return g


def as_ordered(table):
    """The table with its iteration order made explicit, so that order differences show."""
    return sorted((sw, sorted(routes.items())) for sw, routes in table.items())


@pytest.mark.parametrize("policy", POLICIES)
def test_deterministic(graph_name, policy):
    graph = GRAPHS[graph_name]()
    first = DEFAULT_ROUTING[policy](graph)
    assert DEFAULT_ROUTING[policy](GRAPHS[graph_name]()) == first
    for seed in range(3):
        assert as_ordered(DEFAULT_ROUTING[policy](shuffled_copy(graph, seed))) == as_ordered(first)


def test_registry_is_read_only():
    with pytest.raises(TypeError):
        DEFAULT_ROUTING["bogus"] = routing.single   # type: ignore[index]
    assert set(DEFAULT_ROUTING) == {"dmodk", "ecmp", "single"}


def test_graph_without_hosts_gives_empty_routes():
    g = fabric.new_graph()
    fabric.add_switch(g, 1)
    fabric.add_switch(g, 2)
    fabric.add_link(g, 1, 1, 2, 1)
    for policy in POLICIES:
        assert DEFAULT_ROUTING[policy](g) == {1: {}, 2: {}}


def test_disconnected_destination_is_unreachable_not_an_error():
    """A leaf cut off from the spines: nobody else gets a route to its hosts (no black-hole ports)."""
    graph = fattree.leaf_spine(2, 3, 1)
    graph.remove_edge(0x203, 0x101)
    graph.remove_edge(0x203, 0x102)
    cut_off = fattree.host_mac(3)
    for policy in POLICIES:
        table = DEFAULT_ROUTING[policy](graph)
        assert table[0x203][cut_off] == (1,)
        assert all(cut_off not in table[sw] for sw in table if sw != 0x203)
        assert set(table[0x203]) == {cut_off}
