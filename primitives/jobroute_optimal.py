"""SDN-optimal pair routers (issue 15): contention-free routing of a whole job's demand on
fat-trees, by edge colouring one tree level at a time.

A fat-tree (2-tier leaf-spine, 3-tier k-ary, tapered or not) is a multi-rooted tree: every link
joins adjacent levels, and the leaves below the switches of a level form blocks (a leaf, a pod, the
whole tree) whose switches all see the same leaves. A flow between leaves a and b climbs to the
lowest level where a and b share a block and comes down again. At each level, the ``U`` upward
neighbours of every switch are taken in dpid order and the flow goes up the g-th uplink on the
source side and comes down the g-th downlink on the destination side (in a k-ary tree: the g-th
aggregation of both pods; in a leaf-spine: spine g). The fabric builders of this project number
switches so that these meet (checked, see below).

Level by level, the flows still climbing form a bipartite multigraph (source-side switch,
destination-side switch) of maximum degree D; König's theorem colours it with D colours, each
colour a matching, and the colours are dealt out to the U uplinks (``c mod U``), so each uplink and
each downlink of the level carries at most ceil(D / U) flows of the demand. With no other load this
is the least possible on a leaf's links, and on the upper levels of the trees built here it stays
under that (``lower_bound`` is the cut bound that tests compare with):

- full bisection (uplinks >= hosts per leaf at every level): max link flows <= NL_D (pairs.py), for
  any demand; a permutation (NL_D = 1) is routed without any contention. This is the issue's
  "NL_D permutations, each contention-free", with the split done per switch level instead of per
  host, which is never worse (it also packs flows of different permutations where they fit);
- tapered at the leaves (more hosts than uplinks, e.g. PFSim's milk and pepsi): max link flows =
  max over leaves of ceil(inter-leaf flows / uplinks), the cut lower bound.

With ``load`` (other jobs' routes) or in the byte-weighted variant, the colour classes are dealt
out instead heaviest first to the uplink whose busiest link (with that load) is least loaded, still
at most ceil(D / U) colours per uplink, so the flow bound above holds for the job's own flows.

Trees tapered above the leaves (aggregations with fewer cores than edges; not built by
primitives/fattree.py) are harder: the colours are then dealt looking one level ahead, the result
is compared with SDN-greedy's and the better one kept. Measured on random demands: within 1 flow
of the cut bound, never above D-mod-K (tests/unit/test_jobroute.py); not proven.

On a fabric that is not such a tree (a failed link, uneven uplinks, switches numbered so that the
g-th uplinks do not meet) the router falls back to SDN-greedy (jobroute_greedy.py) and logs it.
Contract: primitives/pairs.py. Deterministic (``seed`` is ignored).
"""
import collections
import logging
import math

import numpy

from . import fabric, pairs
from .errors import PlanRefused
from .colouring import bipartite_edge_colouring, colour_classes
from .jobroute_greedy import place
from . import jobroute_incremental as incremental
from .jobroute_ripup import improve

LOG = logging.getLogger(__name__)


def sdn_optimal(graph, demand, load=None, seed=None, previous=None):
    """``previous``: the paths ({(src, dst): host path}) of this demand's earlier plan, if any: the
    pairs that still fit keep them where an optimal plan allows (jobroute_incremental.py)."""
    return _route(graph, demand, load, by_bytes=False, previous=previous)


def sdn_optimal_bytes(graph, demand, load=None, seed=None, previous=None):
    return _route(graph, demand, load, by_bytes=True, previous=previous)


class NotATree(PlanRefused):
    """The fabric is not a multi-rooted tree that level-by-level colouring can route."""


class Tree:
    """The levels of a multi-rooted tree: ``ups[switch]`` (upward neighbours, by dpid),
    ``block[h][leaf]`` (the block id of a leaf's ancestors at level h) and ``uplinks[h][block id]``
    (the upward links out of that block). Raises NotATree."""

    def __init__(self, graph):
        height = fabric.heights(graph)
        sg = fabric.switch_graph(graph)
        self.ups = {}
        by_level = collections.defaultdict(list)
        for sw, h in height.items():
            ups = []
            for n in sg.neighbors(sw):
                if abs(height.get(n, -9) - h) != 1:
                    raise NotATree("link %s-%s does not join adjacent levels" % (sw, n))
                if height[n] > h:
                    ups.append(n)
            self.ups[sw] = sorted(ups)
            by_level[h].append(sw)
        #: True if some switch above the leaves has fewer uplinks than downlinks (e.g. a pod's
        #: aggregations with fewer cores than edges): then the colours are dealt looking ahead.
        self.tapered_above = any(0 < len(self.ups[sw]) < len(list(sg.neighbors(sw))) - len(self.ups[sw])
                                 for sw, h in height.items() if h > 0)
        down = {}
        self.block, self.uplinks = [], []
        for h in range(len(by_level)):
            ids, block, uplinks = {}, {}, collections.Counter()
            for sw in sorted(by_level[h]):
                if h == 0:
                    down[sw] = frozenset((sw,))
                else:
                    down[sw] = frozenset().union(*(down[n] for n in sg.neighbors(sw) if height[n] < h))
                b = ids.setdefault(down[sw], len(ids))
                uplinks[b] += len(self.ups[sw])
                for leaf in down[sw]:
                    if block.setdefault(leaf, b) != b:
                        raise NotATree("the switches above leaf %s at level %d see different leaves" % (leaf, h))
            self.block.append(block)
            self.uplinks.append(uplinks)

        #: {(leaf a, leaf b): meet_level(a, b)}, filled as pairs are asked for
        self.meets = {}

    def meet_level(self, a, b):
        """The lowest level where leaves a and b share a block (the height of their shortest path's
        turning point). Memoised per leaf pair: the planners ask for the same pairs step after step."""
        h = self.meets.get((a, b))
        if h is None:
            for h, block in enumerate(self.block):
                if a in block and block.get(a) == block.get(b):
                    break
            else:
                raise pairs.DemandError("no path between leaves %016x and %016x" % (a, b))
            self.meets[a, b] = h
        return h


def lower_bound(graph, demand, tree=None):
    """The cut bound: max over levels and blocks of ceil(flows leaving (or entering) the block /
    its uplinks). No single-path routing of ``demand`` puts fewer flows on its busiest link."""
    merged = pairs.merge(demand)
    leaf = pairs.leaves_of(graph, merged)
    return cut_bound(tree or Tree(graph), [(leaf[f.src], leaf[f.dst], 1) for f in merged])


def cut_bound(tree, leaf_flows):
    """``lower_bound`` of flows given as (source leaf, destination leaf, number of flows)."""
    bound = 0
    for h, block in enumerate(tree.block):
        out, into = collections.Counter(), collections.Counter()
        for a, b, count in leaf_flows:
            ba, bb = block.get(a), block.get(b)
            if ba != bb:
                out[ba] += count
                into[bb] += count
        for counts in (out, into):
            for b, n in counts.items():
                if tree.uplinks[h][b]:
                    bound = max(bound, math.ceil(n / tree.uplinks[h][b]))
    return bound


def _route(graph, demand, load, by_bytes, previous=None):
    return route_checked(graph, pairs.checked(graph, demand), load, by_bytes, previous=previous)


def route_checked(graph, flows, load=None, by_bytes=False, tree=None, leaf=None, previous=None):
    """The router on ``flows`` already checked and merged (pairs.checked); ``tree``: the graph's
    `Tree` if the caller has it (None: built here; False: the graph is known not to be a tree);
    ``leaf``: {host: its switch} for the flows' hosts if the caller has it (None: looked up here);
    ``previous``: as for `sdn_optimal`."""
    try:
        if tree is False:
            raise NotATree("not a multi-rooted tree")
        tree = tree or Tree(graph)
        paths = _colour_levels(graph, tree, flows, load, by_bytes, leaf, previous)
    except NotATree as err:
        LOG.info("not a fat-tree (%s): greedy routing instead", err)
        return place(graph, flows, load, by_bytes)
    if tree.tapered_above:
        # The level-by-level colouring is not optimal there: keep greedy's paths if they are better.
        greedy = place(graph, flows, load, by_bytes)
        if _busiest(graph, flows, greedy, load, by_bytes) < _busiest(graph, flows, paths, load, by_bytes):
            return greedy
    if by_bytes:
        # Dealing whole colour classes cannot always keep a mouse off an elephant's link: moves
        # that lower the busiest link's bytes and keep its flow count (NL_D on full bisection).
        paths = improve(graph, flows, paths, load, by_bytes)
    if previous is not None:
        # Nothing new (the rip-up's or another router's paths need not be a colouring's): the
        # previous paths stay if they load the busiest link no more, in flows and (by_bytes) bytes,
        # with the other jobs' load and without (the job's own flows keep the plan's bound).
        same = incremental.unchanged(tree, flows, leaf or pairs.leaves_of(graph, flows), previous)
        if same is not None and all(_busiest(graph, flows, same, base, b) <= _busiest(graph, flows, paths, base, b)
                                    * (1 + 1e-9) for b in {False, by_bytes} for base in (None, load)):
            return same
    return paths


def _busiest(graph, flows, paths, load, by_bytes):
    total = pairs.link_load(graph, flows, paths, base=load)
    return total.max_bytes() if by_bytes else total.max_flows()


def _colour_levels(graph, tree, flows, load, by_bytes, leaf=None, previous=None):
    leaf = pairs.leaves_of(graph, flows) if leaf is None else leaf
    paths, inter = {}, []
    for flow in flows:
        a, b = leaf[flow.src], leaf[flow.dst]
        if a == b:
            paths[flow.src, flow.dst] = [flow.src, a, flow.dst]
        else:
            inter.append(flow)
    ends = [(leaf[flow.src], leaf[flow.dst]) for flow in inter]
    weights = [flow.bytes for flow in inter] if by_bytes else None
    if previous is not None:
        previous = [_switches(previous.get((flow.src, flow.dst)), flow) for flow in inter]
    for i, switches in colour_paths(graph, tree, ends, load, by_bytes, weights, previous).items():
        flow = inter[i]
        paths[flow.src, flow.dst] = [flow.src, *switches, flow.dst]
    return paths


def _switches(path, flow):
    """The switch part of a previous host path of ``flow``, or None if it is not one of its paths."""
    if not path or len(path) < 3 or path[0] != flow.src or path[-1] != flow.dst:
        return None
    return tuple(path[1:-1])


def colour_paths(graph, tree, ends, load=None, by_bytes=False, weights=None, previous=None):
    """The level-by-level colouring of flows between leaves ``ends`` [(source leaf, destination
    leaf), a != b], ``weights`` their bytes (with ``by_bytes``). Returns {flow index: switch path
    tuple, source leaf ... destination leaf}, in the order the flows reach their turning point.
    ``previous``: per flow, its switch path in an earlier plan or None; a level where some flow
    still has its previous path's uplink is coloured incrementally (jobroute_incremental.py), the
    others as without ``previous``. Raises NotATree (the caller falls back to
    greedy) and DemandError (leaves with no path)."""
    aware = by_bytes or (load is not None and bool(load.flows)) or tree.tapered_above
    total = load.copy() if load is not None else pairs.LinkLoad()
    meet_level, tree_ups, done = tree.meet_level, tree.ups, {}
    known = tree.meets
    missing = set(ends).difference(known)
    for a, b in filter(missing.__contains__, ends):   # in order: a DemandError names the first
        meet_level(a, b)
    meet = list(map(known.__getitem__, ends))
    kept = None if previous is None else incremental.previous_uplinks(tree, ends, meet, previous)
    # climbed[i]: the switches flow i went up through on the source side (leaf first) and, top
    # first, on the destination side, once it has climbed a level
    climbed, active, here, there, level = {}, range(len(ends)), [a for a, _b in ends], [b for _a, b in ends], 0
    while active:
        ups = _uplinks(tree, here, there)
        # left nodes: source-side switches (dpids, ints >= 0); right: ~dpid of destination-side ones
        edges = list(zip(here, [~sw for sw in there]))
        level_kept = [kept[i] and kept[i][level] for i in active] if kept else ()
        if any(g is not None for g in level_kept):
            colours, group = incremental.colour_level(edges, ups, level_kept, balanced=not aware)
            fixed = {c: g for c, g in enumerate(group) if g is not None}
        else:                                   # nothing to keep at this level: the fresh colouring
            colours, group, fixed = bipartite_edge_colouring(edges), None, {}
        if aware:
            group = _deal_by_load(graph, tree, (here, there), [weights[i] if by_bytes else 1 for i in active],
                                  [meet[i] > level + 1 for i in active], colours, ups, total, by_bytes, fixed)
        elif group is None:
            group = [c % ups for c in range(max(colours, default=-1) + 1)]
        climbing, level = ([], [], []), level + 1
        for i, s, d, c in zip(active, here, there, colours):
            g = group[c]
            if kept is not None and kept[i] and kept[i][level - 1] != g:
                kept[i] = None                   # moved: new switches above, nothing kept there
            u, v = tree_ups[s][g], tree_ups[d][g]
            if level < meet[i]:
                lo, hi = climbed.get(i) or ((s,), (d,))
                climbed[i] = (lo + (u,), (v,) + hi)
                climbing[0].append(i)
                climbing[1].append(u)
                climbing[2].append(v)
            elif u != v:
                raise NotATree("uplink %d of %s and %s do not meet" % (g, s, d))
            elif level == 1:
                done[i] = (s, u, d)
            else:
                lo, hi = climbed[i]
                done[i] = (*lo, u, *hi)
        active, here, there = climbing
    return done


def _uplinks(tree, here, there):
    """The number of uplinks every switch of this level has (NotATree if they differ or are 0)."""
    counts = {len(tree.ups[s]) for s in set(here).union(there)}
    if len(counts) != 1 or 0 in counts:
        raise NotATree("switches of one level have %s uplinks" % sorted(counts))
    return counts.pop()


def _deal_by_load(graph, tree, ends, weights, climbs, colours, ups, total, by_bytes, fixed=None):
    """{colour: uplink index}: ``fixed`` ({colour: uplink index}) as given, then the other colour
    classes heaviest first, each to the uplink index whose busiest link (existing load plus the
    class's flows) is least loaded, at most ceil(D / U) per index (D the level's max degree: the
    number of colours of a fresh colouring). Loads of the level's links are numpy matrices (switch
    x uplink index). Flows that climb further also count, per switch of the next level, against
    that switch's uplinks (so on a tree tapered above the leaves the flows that leave the pod are
    spread over its aggregations first).
    ``ends``: the flows' (source-side, destination-side) switches at this level as two lists;
    ``weights``: their bytes or 1; ``climbs``: whether each flow climbs further."""
    classes = colour_classes(colours)
    cap = math.ceil(max(max(collections.Counter(side).values(), default=0) for side in ends) / ups)
    metric = total.bytes if by_bytes else total.flows
    weight = numpy.array(weights, dtype=float)
    climbs = numpy.array(climbs, dtype=bool)
    sides, ahead = [], []          # per side: (flow -> switch row, link load, capacity); next level
    for side, switches in zip(("up", "down"), ends):
        index = {sw: i for i, sw in enumerate(dict.fromkeys(switches))}
        links = [[(sw, up) if side == "up" else (up, sw) for up in tree.ups[sw]] for sw in index]
        load = numpy.array([[metric.get(link, 0) for link in row] for row in links], dtype=float)
        capacity = numpy.array([[_capacity(graph, link) if by_bytes else 1 for link in row] for row in links],
                               dtype=float)
        at = numpy.array([index[sw] for sw in switches])
        sides.append((at, load, capacity))
        above = {n: i for i, n in enumerate(dict.fromkeys(n for sw in index for n in tree.ups[sw]))}
        ahead.append((at, numpy.array([[above[n] for n in tree.ups[sw]] for sw in index]),
                      numpy.array([max(len(tree.ups[n]), 1) for n in above], dtype=float),
                      numpy.zeros(len(above))))
    taken, group, fixed = numpy.zeros(ups), {}, fixed or {}
    order = sorted(classes, key=lambda c: (c not in fixed, -weight[classes[c]].sum(), c))
    for c in order:
        members = numpy.array(classes[c])
        climbing = members[climbs[members]]
        if c in fixed:
            g = fixed[c]
        else:
            worst = numpy.where(taken >= cap, numpy.inf, 0.0)
            for at, load, capacity in sides:
                rows = at[members]
                worst = numpy.maximum(worst, (load[rows] + weight[members, None] / capacity[rows]).max(axis=0))
            for at, above, uplinks, count in ahead:
                if len(climbing):
                    nxt = above[at[climbing]]
                    worst = numpy.maximum(worst, ((count[nxt] + weight[climbing, None]) / uplinks[nxt]).max(axis=0))
            g = int(numpy.argmin(worst))
        taken[g] += 1
        group[c] = g
        for at, load, capacity in sides:
            rows = at[members]       # a colour class is a matching: each switch at most once
            load[rows, g] += weight[members] / capacity[rows, g]
        for at, above, _uplinks, count in ahead:
            numpy.add.at(count, above[at[climbing], g], weight[climbing])
    return group


def _capacity(graph, link):
    return graph.edges[link].get("capacity", 1)
