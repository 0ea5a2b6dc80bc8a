"""primitives/reverse.py: the reverse pairs of a routed demand (TCP's ACKs) and 2-cycles."""
import collections
import os
import random
import sys

import pytest

from sdnmpi.primitives import PAIR_ROUTERS, fattree, pairs, reverse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench"))
import jobroute_report  # noqa: E402


def streams(graph, paths, back):
    """Per directed switch link: (data flows, ACK streams). A flow's ACKs follow its reverse
    pair's route: ``paths`` if the reverse is routed there, else ``back``."""
    data, acks = collections.Counter(), collections.Counter()
    for (src, dst), path in paths.items():
        data.update(pairs.switch_links(graph, path))
        acks.update(pairs.switch_links(graph, paths.get((dst, src)) or back[dst, src]))
    return data, acks


def crowded(data, acks):
    """Links carrying data and more than one ACK stream."""
    return sorted(link for link in acks if acks[link] > 1 and data[link])


def bench_demand(graph, pattern):
    spec = dict(jobroute_report.FABRIC_MODELS["k4"], placement=jobroute_report.bench_placement(16))
    hosts, n = spec["placement"], 16
    to = ([(i + spec["shift"]) % n for i in range(n)] if pattern == "shift"
          else jobroute_report.pattern_perm(spec["perm"], n))
    return [pairs.Flow(fattree.host_mac(hosts[i]), fattree.host_mac(hosts[to[i]]), 1) for i in range(n) if to[i] != i]


def test_reverse_paths_turn_every_pair_whose_reverse_is_not_routed():
    graph, a, b = two_cycle_fabric()
    c = sorted(h for h in graph if graph.nodes[h].get("kind") == "host")[5]
    ab, ac = nx_paths(graph, a, b)[0], nx_paths(graph, a, c)[0]
    assert reverse.reverse_paths(graph, {(a, b): ab, (a, c): ac}) == {(b, a): ab[::-1], (c, a): ac[::-1]}
    assert reverse.reverse_paths(graph, {(a, b): ab, (b, a): ab[::-1]}) == {}
    assert reverse.reverse_paths(graph, {}) == {}


def test_reverse_paths_steer_acks_off_a_two_cycles_data_paths():
    """The bench's k=4 permutation has one 2-cycle (h5 <-> h15) whose sdn-optimal paths are not
    mutual reverses and cannot be turned (every turned pair of paths meets another flow): each
    direction's ACKs ride on the other's data path. Plain reversal of the other pairs would add a
    second ACK stream to 8 of those links; reverse_paths takes other shortest paths there."""
    graph = fattree.kary(4)
    demand = bench_demand(graph, "perm")
    paths = PAIR_ROUTERS["sdn-optimal"](graph, demand)
    assert reverse.symmetric(graph, demand, paths) == paths
    plain = {(d, s): p[::-1] for (s, d), p in paths.items() if (d, s) not in paths}
    assert len(crowded(*streams(graph, paths, plain))) == 8
    got = reverse.reverse_paths(graph, paths)
    assert set(got) == set(plain) and sum(got[k] != plain[k] for k in got) >= 1
    data, acks = streams(graph, paths, got)
    assert not crowded(data, acks) and max(data.values()) == 1


def test_the_measured_cause_dmodk_reverse_routes_stack_two_ack_streams_on_the_bench_shift():
    """The bench's k=4 shift under sdn-optimal: with D-mod-K for the reverse pairs, the 6 switch
    links Mininet showed at 1.09 flows (jte2>jta2, jte3>jta3, jte5>jta6, jte7>jta7, jta2>jtc4,
    jta6>jtc4: bench/results/jobroute-rate-k4-20261128-225632) carry a flow's data and two ACK
    streams; with the reversed paths none does."""
    graph = fattree.kary(4)
    demand = bench_demand(graph, "shift")
    paths = PAIR_ROUTERS["sdn-optimal"](graph, demand)
    dmodk = PAIR_ROUTERS["dmodk"](graph, [pairs.Flow(f.dst, f.src, 1) for f in demand])
    assert crowded(*streams(graph, paths, dmodk)) == [(258, 514), (259, 515), (261, 518), (263, 519), (514, 772),
                                                       (518, 772)]
    data, acks = streams(graph, paths, reverse.reverse_paths(graph, paths))
    assert max(data.values()) == 1 and max(acks.values()) == 1


@pytest.mark.parametrize("k,seed", [(4, s) for s in range(12)] + [(6, s) for s in range(4)] + [(8, s) for s in range(3)])
@pytest.mark.parametrize("router", ["sdn-optimal", "sdn-greedy", "sdn-adaptive"])
def test_on_a_permutation_each_link_carries_at_most_one_data_flow_and_one_ack_stream(k, seed, router):
    """Random permutations without 2-cycles: a link's ACK streams are the data flows of its
    reverse, so never more than the busiest link's data; sdn-optimal's (and sdn-adaptive's)
    contention-free permutations get at most one data flow and one ACK stream per link."""
    graph = fattree.kary(k)
    hosts = sorted(h for h in graph if graph.nodes[h].get("kind") == "host")
    rng = random.Random(seed)
    while True:
        order = hosts[:]
        rng.shuffle(order)
        to = dict(zip(hosts, order))
        if all(to[to[h]] != h for h in hosts if to[h] != h):
            break
    demand = [pairs.Flow(h, to[h], rng.randint(1, 9)) for h in hosts if to[h] != h]
    paths = PAIR_ROUTERS[router](graph, demand)
    assert reverse.symmetric(graph, demand, paths) == paths          # no 2-cycle: nothing to turn
    data, acks = streams(graph, paths, reverse.reverse_paths(graph, paths))
    assert max(acks.values()) <= max(data.values())
    if router != "sdn-greedy":
        assert max(data.values()) == 1


def two_cycle_fabric():
    graph = fattree.kary(4)
    hosts = sorted(h for h in graph if graph.nodes[h].get("kind") == "host")
    return graph, hosts[0], hosts[-1]


def test_symmetric_turns_a_two_cycle_where_the_links_are_free():
    graph, a, b = two_cycle_fabric()
    ways = sorted(nx_paths(graph, a, b))
    there = ways[0]
    back = next(list(reversed(p)) for p in ways if set(p[1:-1]) != set(there[1:-1]))   # another agg and core
    demand = [pairs.Flow(a, b, 5), pairs.Flow(b, a, 3)]
    out = reverse.symmetric(graph, demand, {(a, b): there, (b, a): back})
    assert out == {(a, b): there, (b, a): list(reversed(there))}          # the heavier direction's path kept
    assert pairs.link_load(graph, demand, out).max_flows() == 1


def test_symmetric_keeps_a_two_cycle_whose_turned_paths_would_share_a_link():
    """Another job on every switch link but the pair's own: any turn would put two flows on a link."""
    graph, a, b = two_cycle_fabric()
    ways = sorted(nx_paths(graph, a, b))
    there = ways[0]
    back = next(list(reversed(p)) for p in ways if set(p[1:-1]) != set(there[1:-1]))
    own = set(pairs.switch_links(graph, there)) | set(pairs.switch_links(graph, back))
    base = pairs.LinkLoad()
    for u, v in graph.edges:
        for link in ((u, v), (v, u)):
            if pairs.switch_links(graph, list(link)) and link not in own:
                base.add_path(graph, list(link), 1)
    demand = [pairs.Flow(a, b, 5), pairs.Flow(b, a, 3)]
    paths = {(a, b): there, (b, a): back}
    assert reverse.symmetric(graph, demand, paths, load=base) == paths
    assert reverse.symmetric(graph, demand, paths) != paths            # the same pair turns on an empty fabric


def nx_paths(graph, a, b):
    import networkx as nx  # pylint: disable=import-outside-toplevel
    return list(nx.all_shortest_paths(graph, a, b))


def permutation_with_two_cycles(graph, seed, used=1.0):
    """A random permutation of ``used`` of the hosts (the rest send nothing): 2-cycles on half of
    them and one long cycle."""
    hosts = sorted(h for h in graph if graph.nodes[h].get("kind") == "host")
    hosts = hosts[:max(4, int(len(hosts) * used))]
    rng = random.Random(seed)
    order = hosts[:]
    rng.shuffle(order)
    to = {}
    for i in range(0, len(order) // 2, 2):
        to[order[i]], to[order[i + 1]] = order[i + 1], order[i]
    rest = order[len(order) // 2:]
    for a, b in zip(rest, rest[1:] + rest[:1]):
        to[a] = b
    return [pairs.Flow(a, b, rng.randint(1, 9)) for a, b in to.items()]


def turned(graph, demand, router):
    """(paths, symmetric's paths, how many pairs it moved), after checking that it loads no link
    more and that a moved pair's paths are mutual reverses."""
    paths = PAIR_ROUTERS[router](graph, demand)
    out = reverse.symmetric(graph, demand, paths)
    before, after = pairs.link_load(graph, demand, paths), pairs.link_load(graph, demand, out)
    assert after.max_flows() <= before.max_flows() and after.max_bytes() <= before.max_bytes() + 1e-9
    moved = [pair for pair, path in out.items() if path != paths[pair]]
    for pair in moved:
        assert out[pair[1], pair[0]] == list(reversed(out[pair]))
    return paths, out, len(moved)


@pytest.mark.parametrize("k,seed", [(4, s) for s in range(12)] + [(6, s) for s in range(6)])
@pytest.mark.parametrize("router", ["sdn-greedy", "sdn-optimal"])
@pytest.mark.parametrize("used", [1.0, 0.33])
def test_symmetric_never_loads_the_busiest_link_more(k, seed, router, used):
    graph = fattree.kary(k)
    turned(graph, permutation_with_two_cycles(graph, seed, used), router)


def test_symmetric_turns_two_cycles_of_partial_permutations_only():
    """A full permutation on a full-bisection tree fills every uplink, so sdn-optimal's 2-cycles have
    no free path to turn to (their ACKs are steered by reverse_paths instead); on a third of the
    hosts some turn."""
    graph = fattree.kary(6)
    full = [turned(graph, permutation_with_two_cycles(graph, seed), "sdn-optimal")[2] for seed in range(4)]
    part = [turned(graph, permutation_with_two_cycles(graph, seed, used=0.33), "sdn-optimal")[2] for seed in range(4)]
    assert sum(full) == 0 and sum(part) > 0


def test_a_dense_demand_keeps_its_paths_and_plain_reversals():
    """NL_D > 1: no search (the planner's time); reverse pairs on the paths reversed."""
    graph = fattree.kary(4)
    hosts = sorted(h for h in graph if graph.nodes[h].get("kind") == "host")
    demand = [pairs.Flow(a, b, 1) for a in hosts[:4] for b in hosts[8:12]] + [pairs.Flow(hosts[8], hosts[0], 1)]
    paths = PAIR_ROUTERS["sdn-optimal"](graph, demand)
    assert reverse.symmetric(graph, demand, paths) == paths
    got = reverse.reverse_paths(graph, paths)
    assert got == {(d, s): p[::-1] for (s, d), p in paths.items() if (d, s) not in paths}


@pytest.mark.parametrize("seed", range(40))
def test_reverse_paths_leave_no_stack_on_any_order_of_the_bench_permutation(seed):
    """The controller's demand order depends on the trace (ties in bytes): in most orders of the
    bench permutation the greedy pass alone left links with data and two ACK streams (the Mininet
    run bench/results/jobroute-rate-k4-20261129-012225 had 5); the search leaves none."""
    from jobroute_iperf import pattern_pairs  # noqa: E402  pylint: disable=import-outside-toplevel
    graph = fattree.kary(4)
    todo = pattern_pairs(jobroute_report.bench_placement(16), perm=jobroute_report.pattern_perm(12, 16))
    random.Random(seed).shuffle(todo)
    demand = pairs.merge(pairs.Flow(fattree.host_mac(a), fattree.host_mac(b), 1) for a, b in todo)
    paths = reverse.symmetric(graph, demand, PAIR_ROUTERS["sdn-optimal"](graph, demand))
    data, acks = streams(graph, paths, reverse.reverse_paths(graph, paths))
    assert not crowded(data, acks) and max(data.values()) == 1


def test_the_search_gives_up_past_its_budget():
    from jobroute_iperf import pattern_pairs  # noqa: E402  pylint: disable=import-outside-toplevel
    graph = fattree.kary(4)
    todo = pattern_pairs(jobroute_report.bench_placement(16), perm=jobroute_report.pattern_perm(12, 16))
    for seed in range(40):                                     # an order where the greedy pass stacks
        order = todo[:]
        random.Random(seed).shuffle(order)
        demand = pairs.merge(pairs.Flow(fattree.host_mac(a), fattree.host_mac(b), 1) for a, b in order)
        paths = reverse.symmetric(graph, demand, PAIR_ROUTERS["sdn-optimal"](graph, demand))
        greedy = {(d, s): p[::-1] for (s, d), p in paths.items() if (d, s) not in paths}
        data, cycle_acks = reverse._loads(graph, paths)  # pylint: disable=protected-access
        found = reverse._search(graph, paths, greedy, data, cycle_acks, 16)  # pylint: disable=protected-access
        if found is not None and found != greedy:
            assert reverse._search(graph, paths, greedy, data, cycle_acks, 16, budget=1) is None  # pylint: disable=protected-access
            return
    pytest.fail("no order needed the search")
