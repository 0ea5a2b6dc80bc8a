"""Incremental colouring for SDN-optimal (jobroute_optimal.py): a phase planned again with more
pairs keeps its running pairs on their paths wherever an optimal plan allows.

Flow detection declares a job's phase 0 again each time it flags new pairs, and hints do so as they
accumulate; a plan made from scratch gives the running pairs new paths ("moves": at 5 Mbit/s a moved
flow loses 1-2 s getting back to full rate, docs/flows.md). With the previous plan's paths
(``previous=``), each level's colouring starts from the colours those paths stand for and colours
only the new flows, flipping Kempe chains (colouring.extend_colouring) that move the fewest old
flows to another uplink. Every uplink gets ceil(D / U) colours (D the level's max degree, U its
uplinks), so no switch sends more than ceil(D / U) flows up one uplink: the fresh plan's bound on
flows per link (tests/unit/test_jobroute_incremental.py; moves measured in bench/replan_moves.py,
docs/jobroute.md, "Re-planning a phase with more pairs").

A previous path that the colouring could not have given on this tree (a host that moved, a link
that is gone, a path of another router) counts as no previous path: that pair is planned anew.
"""
import collections
import math

from .colouring import bipartite_edge_colouring, extend_colouring


def previous_uplinks(tree, ends, meet, previous):
    """Per flow: the uplink index its previous switch path ``previous[i]`` (source leaf ... destination
    leaf, or None) takes at each level, or None when that path is not an up-down path of ``tree``
    between the flow's leaves ``ends[i]`` that turns at level ``meet[i]`` with the g-th uplinks of
    both sides meeting."""
    return [_uplinks_of(tree, a, b, m, path) for (a, b), m, path in zip(ends, meet, previous)]


def _uplinks_of(tree, a, b, m, path):
    if path is None or len(path) != 2 * m + 1 or path[0] != a or path[-1] != b:
        return None
    here, there, out = a, b, []
    for level in range(m):
        up, down = path[level + 1], path[2 * m - level - 1]
        ups, theirs = tree.ups.get(here, ()), tree.ups.get(there, ())
        if up not in ups:
            return None
        g = ups.index(up)
        if g >= len(theirs) or theirs[g] != down:
            return None
        out.append(g)
        here, there = up, down
    return out


def colour_level(edges, ups, kept_uplinks, balanced):
    """Colours of one level's bipartite multigraph ``edges`` [(source-side node, destination-side
    node)] and ``group``: the uplink index (0 .. ``ups``-1) each colour stands for. Max degree D:
    every uplink gets cap = ceil(D / ups) colours, so it carries at most cap flows of every switch,
    the bound of the fresh plan's D colours (which leave some uplinks floor(D / ups)); the slack
    keeps old flows where D colours could not. ``kept_uplinks[i]``: the uplink flow i took in the
    previous plan (None: a new flow, or one already moved below this level). Old flows keep their
    uplinks up to cap per switch; the others are coloured by Kempe flips that move the fewest old
    ones. ``balanced``: every colour gets its uplink here; otherwise colours that no old flow needs
    get None, for the caller to deal by load (at most cap per uplink)."""
    degree = collections.Counter(end for edge in edges for end in edge)
    cap = math.ceil(max(degree.values(), default=0) / ups)
    kept, count = [None] * len(edges), collections.Counter()
    for i, g in enumerate(kept_uplinks):
        if g is not None and g < ups and all(count[end, g] < cap for end in edges[i]):
            kept[i] = g
            for end in edges[i]:
                count[end, g] += 1
    need = [max((n for (_end, h), n in count.items() if h == g), default=0) for g in range(ups)]
    group = [g for g in range(ups) for _ in range(need[g])]
    if balanced:
        group += [g for g in range(ups) for _ in range(cap - need[g])]
    else:
        group += [None] * (cap * ups - len(group))
    keep = [None] * len(edges)
    for g in range(ups):
        members = [i for i, h in enumerate(kept) if h == g]
        ids = [c for c, h in enumerate(group) if h == g]
        for i, slot in zip(members, bipartite_edge_colouring([edges[i] for i in members])):
            keep[i] = ids[slot]
    return extend_colouring(edges, cap * ups, keep, group), group


def unchanged(tree, flows, leaf, previous):
    """{(src, dst): previous path} when ``previous`` has a path for every flow of ``flows`` that the
    tree's up-down routing could give (a demand with nothing new), else None."""
    out = {}
    for flow in flows:
        path = previous.get((flow.src, flow.dst))
        a, b = leaf[flow.src], leaf[flow.dst]
        if not path or path[0] != flow.src or path[-1] != flow.dst:
            return None
        switches = tuple(path[1:-1])
        if a == b:
            if switches != (a,):
                return None
        elif _uplinks_of(tree, a, b, tree.meet_level(a, b), switches) is None:
            return None
        out[flow.src, flow.dst] = list(path)
    return out
