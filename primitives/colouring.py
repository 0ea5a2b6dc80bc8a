"""Edge colouring of bipartite multigraphs (König's theorem), shared by the planners.

A bipartite multigraph of maximum degree D can be edge-coloured with D colours: every colour class
is a matching. Planners use it to split traffic into contention-free rounds (allreduce.py) and to
spread the flows leaving and entering each switch over its uplinks (jobroute_optimal.py).
"""
import collections
import itertools


def bipartite_edge_colouring(edges):
    """Colours a bipartite multigraph's edges with max-degree colours (König), so that no two edges
    at one node share a colour. ``edges``: (left node, right node) pairs (left and right node names
    must not overlap); returns a colour in 0 .. D-1 for each edge, in order.

    Each edge takes a colour free at both ends if there is one, else (a free at u, b at v) the a/b
    alternating path from v is flipped first (in a bipartite graph it never reaches u). Free
    colours are kept per node: an edge costs a scan of the smaller free set or a flipped path."""
    degree = collections.Counter(itertools.chain.from_iterable(edges))
    delta = max(degree.values(), default=0)
    at = {node: {} for node in degree}                         # node -> {colour: edge index}
    free = {node: set(range(delta)) for node in degree}        # node -> colours not used there
    colours = [None] * len(edges)
    for i, (u, v) in enumerate(edges):
        fu, fv = free[u], free[v]
        small, large = (fu, fv) if len(fu) <= len(fv) else (fv, fu)
        for a in small:
            if a in large:
                break
        else:
            a, b = next(iter(fu)), next(iter(fv))
            _flip(edges, colours, at, free, v, a, b)
        colours[i] = a
        at[u][a] = at[v][a] = i
        fu.discard(a)
        fv.discard(a)
    return colours


def _flip(edges, colours, at, free, start, a, b):
    """Swaps colours a and b along the alternating path that leaves ``start`` with colour a."""
    path = _alternating_path(edges, at, start, a, b)
    _swap(edges, colours, at, path, a, b)
    node = start
    for e in path:
        x, y = edges[e]
        node = y if node == x else x
    # Only the two ends of the path change which of a, b they use.
    for end in (start, node):
        for c in (a, b):
            if c in at[end]:
                free[end].discard(c)
            else:
                free[end].add(c)


def colour_classes(colours):
    """{colour: [edge index, ...]} of a colouring, colours ascending."""
    classes = collections.defaultdict(list)
    for i, c in enumerate(colours):
        classes[c].append(i)
    return dict(sorted(classes.items()))


def extend_colouring(edges, delta, keep, group):
    """A proper colouring of ``edges`` with colours 0 .. ``delta``-1 (``delta`` >= the max degree)
    that keeps a given partial colouring where it can: ``keep[i]``, edge i's colour so far (None: a
    new edge); kept colours must be proper (no two edges at one node share one). The new edges are
    coloured one by one as in `bipartite_edge_colouring`; when no colour is free at both ends, of
    the a/b alternating paths that would free one (from either end, over a few free colours a and
    b) the one that moves the fewest kept edges is flipped. ``group[c]``: what colour c stands for
    (an uplink; None: nothing yet): a kept edge *moves* when its colour's group is no longer its
    kept colour's, so a flip between two colours of one group moves none. Returns the colours.
    Kept colours that are not proper are the caller's bug (AssertionError), not input to refuse."""
    at = collections.defaultdict(dict)                      # node -> {colour: edge index}
    colours = list(keep)
    for i, c in enumerate(keep):
        if c is not None:
            for end in edges[i]:
                if c in at[end] or not 0 <= c < delta:
                    raise AssertionError("extend_colouring: kept colour %d of edge %d is not proper (a bug in "
                                         "the caller's colouring)" % (c, i))
                at[end][c] = i
    origin = [None if c is None else group[c] for c in keep]
    for i, c in enumerate(keep):
        if c is not None:
            continue
        u, v = edges[i]
        fu = [c for c in range(delta) if c not in at[u]]
        fv = set(c for c in range(delta) if c not in at[v])
        common = [c for c in fu if c in fv]
        if common:
            a = common[0]
        else:
            a = _cheapest_flip(edges, colours, at, group, origin, u, v, fu, sorted(fv))
        colours[i] = a
        at[u][a] = at[v][a] = i
    return colours


_CANDIDATES = 6          # free colours tried at each end when a path must be flipped


def _cheapest_flip(edges, colours, at, group, origin, u, v, fu, fv):
    """Flips the alternating path that frees a colour at both u and v at the least cost (kept edges
    moved, then path length); returns that colour."""
    best = None
    for start, mine, theirs in ((v, fu, fv), (u, fv, fu)):
        # a colour free at the other end, b free here: the a/b path from ``start`` frees a here
        for a in mine[:_CANDIDATES]:
            for b in theirs[:_CANDIDATES]:
                path = _alternating_path(edges, at, start, a, b)
                moved = sum(_moved(group, origin[e], b if colours[e] == a else a)
                            - _moved(group, origin[e], colours[e]) for e in path)
                key = (moved, len(path))
                if best is None or key < best[0]:
                    best = (key, path, a, b)
    _key, path, a, b = best
    _swap(edges, colours, at, path, a, b)
    return a


def _alternating_path(edges, at, start, a, b):
    """The edges of the a/b alternating path that leaves ``start`` with colour a, in order."""
    path, node, colour = [], start, a
    while colour in at[node]:
        e = at[node][colour]
        path.append(e)
        x, y = edges[e]
        node = y if node == x else x
        colour = b if colour == a else a
    return path


def _swap(edges, colours, at, path, a, b):
    """Swaps colours a and b on the edges of ``path`` (an alternating path)."""
    for e in path:
        for end in edges[e]:
            del at[end][colours[e]]
    for e in path:
        colours[e] = b if colours[e] == a else a
        for end in edges[e]:
            at[end][colours[e]] = e


def _moved(group, origin, colour):
    return origin is not None and (group[colour] is None or group[colour] != origin)
