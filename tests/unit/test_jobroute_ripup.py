"""sdn-optimal-bytes' rip-up pass (primitives/jobroute_ripup.py): moves, moves with an ejection
(swaps) and room made below the busiest links, on constructed demands, random demands and PFSim's
CG trace (the cases where the single-move pass stayed over Greedy2)."""
import os
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdnmpi import traces
from sdnmpi.primitives import fabric, fattree, jobroute_optimal, jobroute_ripup, pairs
from sdnmpi.primitives.jobroute_optimal import Tree, sdn_optimal
from sdnmpi.simulator import job as simjob
from sdnmpi.simulator.topology import from_spec as topology_of_file
from test_jobroute import FULL, SEEDED, TAPERED, assert_valid_paths, random_demand, topology

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "pfsim")


def test_a_swap_lowers_the_busiest_link_where_no_single_move_can():
    """Leaf-spine, 2 spines, 2 leaves of 2 hosts: 5 + 5 bytes over spine 1, 4 + 3 over spine 2.
    Moving any flow off spine 1 puts 12 (or more) bytes on spine 2's links and a third flow on a
    link that carries 2; swapping a 5 with the 3 gives 8 / 9 bytes, 2 flows on every link."""
    graph = fattree.leaf_spine(2, 2, 2)
    h1, h2, h3, h4 = fabric.hosts(graph)
    s1, s2, leaf1, leaf2 = 0x101, 0x102, 0x201, 0x202
    over = {(h1, h3): 5, (h2, h4): 5, (h1, h4): 4, (h2, h3): 3}
    demand = pairs.checked(graph, [pairs.Flow(s, d, b) for (s, d), b in over.items()])
    spine = {(h1, h3): s1, (h2, h4): s1, (h1, h4): s2, (h2, h3): s2}
    paths = {(f.src, f.dst): [f.src, leaf1, spine[f.src, f.dst], leaf2, f.dst] for f in demand}
    before = pairs.link_load(graph, demand, paths)
    assert (before.max_bytes(), before.max_flows()) == (10, 2)
    for f in demand:            # no single move helps: the other spine's links reach 10 or more
        if spine[f.src, f.dst] == s1:
            assert before.bytes[leaf1, s2] + f.bytes >= 10 and before.flows[leaf1, s2] + 1 > 2
    after = jobroute_ripup.improve(graph, demand, dict(paths), by_bytes=True)
    assert_valid_paths(("leaf_spine", (2, 2, 2)), demand, after)
    load = pairs.link_load(graph, demand, after)
    assert (load.max_bytes(), load.max_flows()) == (9, 2)
    assert sorted(load.bytes[leaf1, s] for s in (s1, s2)) == [8, 9]


@pytest.mark.parametrize("eject", [True, False])
def test_on_flow_counts_a_pair_weighs_the_flows_it_stands_for(eject):
    """The allreduce planner's use (primitives/allreduce.py: host pairs with multiplicity): two
    pairs of 1 flow and one of 2 all over spine 1 (4 flows on leaf 1's uplink). Moving both pairs
    of 1 to spine 2 leaves 2 flows on every link; counted as 1 flow each, the pair of 2 would keep
    a pair of 1 beside it on spine 1 (3 flows)."""
    graph = fattree.leaf_spine(2, 2, 2)
    h1, h2, h3, h4 = fabric.hosts(graph)
    s1, s2, leaf1, leaf2 = 0x101, 0x102, 0x201, 0x202
    counts = {(h1, h3): 1, (h1, h4): 1, (h2, h4): 2}
    demand = [pairs.Flow(s, d, c) for (s, d), c in sorted(counts.items())]
    paths = {pair: [pair[0], leaf1, s1, leaf2, pair[1]] for pair in counts}
    after = jobroute_ripup.improve(graph, demand, paths, counts=counts, eject=eject)
    load = pairs.LinkLoad()
    for pair, path in after.items():
        load.add_path(graph, path, 1, flows=counts[pair])
    assert load.max_flows() == 2
    assert after[h1, h3][2] == after[h1, h4][2] == s2 and after[h2, h4][2] == s1



@SEEDED
@given(spec=st.sampled_from(FULL[:6] + TAPERED[:4]), seed=st.integers(0, 10 ** 6),
       density=st.integers(1, 3))
def test_rip_up_and_reroute_never_raises_the_busiest_links_bytes_or_flows(spec, seed, density):
    """improve on the level colouring's paths: valid paths, the busiest link's bytes and flows
    never higher (so NL_D stays on full bisection), and on skewed sizes lower somewhere in the
    suite (tests below)."""
    graph = topology(spec)
    rng = random.Random(seed)
    demand = pairs.checked(graph, pairs.merge(pairs.Flow(f.src, f.dst, rng.choice([1, 10, 1000]))
                                              for f in random_demand(graph, rng, density)))
    before = sdn_optimal(graph, demand)
    load = pairs.link_load(graph, demand, before)
    after = jobroute_ripup.improve(graph, demand, dict(before), by_bytes=True)
    assert_valid_paths(spec, demand, after)
    moved = pairs.link_load(graph, demand, after)
    assert moved.max_bytes() <= load.max_bytes() and moved.max_flows() <= load.max_flows()
    if spec in FULL:
        assert moved.max_flows() <= pairs.node_load(demand)


def cg(topology_name, hosts, seed, mapping):
    """(graph, demand, flows) of PFSim's CG trace placed as ``sdnmpi-sim job`` places it."""
    spec = topology_name if ":" in topology_name else os.path.join(DATA, "topologies", topology_name + ".graphml")
    graph = topology_of_file(spec)
    trace = traces.load(os.path.join(DATA, "traces", "cg-c-128.tar.gz"))
    placement = simjob.place(graph, trace.n_procs, hosts, mapping, rng=random.Random(seed))
    phase = trace.phases[0]
    demand, flows = simjob.host_demand(phase.traffic_matrix(), phase.tx_messages > 0,
                                       placement.rank_host, trace.file_order)
    return graph, demand, flows


def _maxima(graph, demand, flows, router):
    routed = simjob.route(graph, demand, flows, router, seed=1)
    return simjob.maxima(graph, routed.link_bytes, routed.link_flows)


def test_sdn_optimal_bytes_reaches_greedy2_on_cg_where_whole_colour_classes_did_not():
    """PFSim's CG on pepsi, random hosts and mapping (seed 1): dealing whole colour classes put
    1.26 GB on the busiest link against Greedy2's 1.19 GB; the rip-up pass reaches Greedy2's
    figure (within 0.01 %, as docs/jobroute.md counts), with no more rank pairs on a link."""
    graph, demand, flows = cg("pepsi", "random", 1, "random")
    got = {r: _maxima(graph, demand, flows, r) for r in ("greedy2", "sdn-optimal-bytes", "dmodk")}
    colouring = simjob.Routed(graph, demand, flows, jobroute_optimal._colour_levels(
        graph, Tree(graph), pairs.checked(graph, demand), None, True))
    before = simjob.maxima(graph, colouring.link_bytes, colouring.link_flows)
    assert before[0] > got["greedy2"][0] * 1.05            # the case: 6 % over Greedy2 before
    assert got["sdn-optimal-bytes"][0] <= got["greedy2"][0] * 1.0001 < got["dmodk"][0]   # within 0.01 %
    assert got["sdn-optimal-bytes"][1] <= before[1]


@pytest.mark.parametrize("case", [("milk", "random", 4, "cyclic"), ("milk", "random", 5, "cyclic"),
                                  ("pepsi", "random", 3, "block"), ("pepsi", "random", 3, "cyclic"),
                                  ("leafspine:spines=4,leaves=8,hosts=16", "random", 17, "random")])
def test_moves_with_ejections_reach_greedy2_where_single_moves_stayed_over(case):
    """The 4 cases of bench/jobroute_sweep.py's 42 where single moves left sdn-optimal-bytes
    1.4-11 % over Greedy2's busiest link (flows on it could only move onto a link at the flow cap
    or to ``top``), and the one of its 252 where one level of ejections stayed 5.3 % over (the
    flow cap reached on nearly every link): with ejections it is at or under Greedy2's bytes
    (within 0.01 %), under D-mod-K's, and its host pairs per link stay at the colouring's maximum."""
    graph, demand, flows = cg(*case)
    got = {r: _maxima(graph, demand, flows, r) for r in ("greedy2", "sdn-optimal-bytes", "dmodk")}
    assert got["sdn-optimal-bytes"][0] <= got["greedy2"][0] * 1.0001
    assert got["sdn-optimal-bytes"][0] < got["dmodk"][0]
    checked = pairs.checked(graph, demand)
    colouring = jobroute_optimal._colour_levels(graph, Tree(graph), checked, None, True)
    bytes_paths = jobroute_optimal.sdn_optimal_bytes(graph, demand)
    assert (pairs.link_load(graph, checked, bytes_paths).max_flows()
            <= pairs.link_load(graph, checked, colouring).max_flows())
