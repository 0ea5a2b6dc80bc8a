"""The synthetic fat-tree graphs of primitives/fattree.py: distinct DPIDs at every size, the shape
that the planners assume."""
import collections

import pytest

from sdnmpi.primitives import fabric, fattree, jobroute_optimal


@pytest.mark.parametrize("k", [4, 22, 24, 26, 32])
def test_kary_has_distinct_switches_and_the_right_shape(k):
    half = k // 2
    graph = fattree.kary(k)
    switches = fabric.switches(graph)
    assert len(switches) == len(set(switches)) == 5 * k * k // 4
    assert len(fabric.hosts(graph)) == k ** 3 // 4
    height = fabric.heights(graph)
    assert collections.Counter(height.values()) == {0: k * half, 1: k * half, 2: half * half}
    sg = fabric.switch_graph(graph)
    assert all(sg.degree(sw) == k for sw in switches if height[sw] > 0)
    assert all(sg.degree(sw) == half for sw in switches if height[sw] == 0)
    tree = jobroute_optimal.Tree(graph)
    assert [len(set(block.values())) for block in tree.block] == [k * half, k, 1]


def test_kary_keeps_the_mininet_numbering_up_to_k_22():
    graph = fattree.kary(22)
    height = fabric.heights(graph)
    assert {sw >> 8 for sw, h in height.items()} == {1, 2, 3}
    assert all((sw >> 8) == h + 1 for sw, h in height.items())
    wide = fattree.kary(24)
    assert all((sw >> 16) == h + 1 for sw, h in fabric.heights(wide).items())


@pytest.mark.parametrize("spines,leaves", [(2, 4), (255, 3), (3, 300), (300, 2)])
def test_leaf_spine_has_distinct_switches(spines, leaves):
    graph = fattree.leaf_spine(spines, leaves, 1)
    switches = fabric.switches(graph)
    assert len(switches) == len(set(switches)) == spines + leaves
    assert len(fabric.leaves(graph)) == leaves
    sg = fabric.switch_graph(graph)
    assert sg.number_of_edges() == spines * leaves
