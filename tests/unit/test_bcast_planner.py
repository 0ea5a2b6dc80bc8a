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


def tree_links(graph, tree):
    """The directed switch-to-switch links a packet of ``tree`` crosses."""
    links = set()
    for sw, ports in tree.out_ports.items():
        for port in ports:
            peer = next(n for n in graph.neighbors(sw) if graph.edges[sw, n]["ports"].get(sw) == port)
            if graph.nodes[peer]["kind"] == fabric.SWITCH:
                links.add((sw, peer))
    return links


@pytest.mark.parametrize("graph,uplinks", [(fattree.leaf_spine(2, 4, 2), 2), (fattree.leaf_spine(4, 5, 3), 4),
                                           (fattree.kary(4), 2), (fattree.kary(6), 3), (fattree.kary(8, 2), 4)],
                         ids=["ls-2-4-2", "ls-4-5-3", "k4", "k6", "k8-2"])
def test_several_trees_cover_every_member_once_each_on_disjoint_links(graph, uplinks):
    rng = random.Random(uplinks)
    hosts = fabric.hosts(graph)
    for _ in range(30):
        members = rng.sample(hosts, rng.randint(2, len(hosts)))
        root = rng.choice(members)
        count = rng.randint(1, uplinks + 2)
        got = bcast.trees(graph, root, members, count)
        want = {m: 1 for m in members if m != root}
        remote = {fabric.attachment(graph, m)[0] for m in members} - {fabric.attachment(graph, root)[0]}
        assert len(got) == (min(count, uplinks) if remote else 1)
        for t in got:
            assert t.root == root and deliveries(graph, t) == want
        # the trees share no link anywhere, so they leave the root's leaf by different uplinks
        links = [tree_links(graph, t) for t in got]
        for i in range(len(got)):
            for j in range(i):
                assert not links[i] & links[j]
        assert len({t.top for t in got}) == len(got)


def test_two_trees_on_the_bench_fabric_use_both_spines_and_the_least_loaded_first():
    graph = fattree.leaf_spine(2, 4, 2)
    h = fabric.hosts(graph)
    got = bcast.trees(graph, h[0], h, 4)
    assert [t.top for t in got] == [0x101, 0x102]
    assert [t.out_ports[0x201] for t in got] == [(2, 3), (2, 4)]   # host 2, then uplink to spine 1 / 2
    assert [t.top for t in bcast.trees(graph, h[0], h, 2, load={0x101: 1})] == [0x102, 0x101]
    local = bcast.trees(graph, h[0], h[:2], 4)
    assert len(local) == 1 and local[0].top is None
