"""The Bcast tree planner (pure): every member reached exactly once, no loops, spine chosen by load."""
import random

import pytest

from sdnmpi.primitives import bcast, fabric, fattree


def deliveries(graph, tree):
    """Follows a packet from the root's leaf through the tree's out-ports; returns {host mac: copies}
    and asserts that no switch is entered twice (no loop)."""
    root_leaf = fabric.attachment(graph, tree.root)[0]
    got, seen, frontier = {}, set(), [root_leaf]
    while frontier:
        sw = frontier.pop()
        assert sw not in seen, "loop at %x" % sw
        seen.add(sw)
        for port in tree.out_ports.get(sw, ()):
            peer = next(n for n in graph.neighbors(sw) if graph.edges[sw, n]["ports"].get(sw) == port)
            if graph.nodes[peer]["kind"] == fabric.HOST:
                got[peer] = got.get(peer, 0) + 1
            else:
                frontier.append(peer)
    return got


@pytest.mark.parametrize("graph", [fattree.leaf_spine(2, 4, 2), fattree.leaf_spine(3, 5, 3), fattree.kary(4),
                                   fattree.kary(6)], ids=["ls-2-4-2", "ls-3-5-3", "k4", "k6"])
def test_every_member_gets_exactly_one_copy(graph):
    rng = random.Random(1)
    hosts = fabric.hosts(graph)
    for _ in range(40):
        members = rng.sample(hosts, rng.randint(1, len(hosts)))
        root = rng.choice(members)
        tree = bcast.tree(graph, root, members)
        assert deliveries(graph, tree) == {m: 1 for m in members if m != root}
        # the tree crosses at most one top switch, and only switches it needs
        tops = {sw for sw in tree.out_ports if sw == tree.top}
        assert len(tops) <= 1


def test_local_members_are_served_by_the_leaf_only():
    graph = fattree.leaf_spine(2, 4, 2)
    h = fabric.hosts(graph)
    tree = bcast.tree(graph, h[0], [h[0], h[1]])
    assert tree.top is None and tree.out_ports == {0x201: (2,)}


def test_root_uplink_carries_one_copy_whatever_the_member_count():
    graph = fattree.leaf_spine(2, 4, 4)
    h = fabric.hosts(graph)
    tree = bcast.tree(graph, h[0], h)
    uplinks = [p for p in tree.out_ports[0x201] if p > 4]
    assert len(uplinks) == 1
    assert sorted(p for p in tree.out_ports[0x201] if p <= 4) == [2, 3, 4]


def test_top_switch_is_chosen_by_load_then_dpid():
    graph = fattree.leaf_spine(3, 4, 2)
    h = fabric.hosts(graph)
    assert bcast.tree(graph, h[0], h).top == 0x101
    assert bcast.tree(graph, h[0], h, load={0x101: 2, 0x102: 1}).top == 0x103
    assert bcast.tree(graph, h[0], h, load={0x101: 1, 0x102: 1, 0x103: 1}).top == 0x101
    k4 = fattree.kary(4)
    hk = fabric.hosts(k4)
    tops = set()
    load = {}
    for _ in range(4):
        t = bcast.tree(k4, hk[0], hk, load)
        tops.add(t.top)
        load[t.top] = load.get(t.top, 0) + 1
    assert len(tops) == 4  # four concurrent trees use all four cores


def test_unknown_hosts_are_refused():
    graph = fattree.leaf_spine(2, 2, 1)
    h = fabric.hosts(graph)
    with pytest.raises(bcast.TreeError):
        bcast.tree(graph, h[0], [h[0], "00:00:00:00:77:77"])


def test_a_failed_link_is_avoided():
    graph = fattree.leaf_spine(2, 4, 2)
    graph.remove_edge(0x101, 0x203)  # spine 1 lost leaf 3
    h = fabric.hosts(graph)
    tree = bcast.tree(graph, h[0], h)
    assert tree.top == 0x102
    assert deliveries(graph, tree) == {m: 1 for m in h[1:]}
