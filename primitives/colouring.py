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
    path, node, colour = [], start, a
    while colour in at[node]:
        e = at[node][colour]
        path.append(e)
        x, y = edges[e]
        node = y if node == x else x
        colour = b if colour == a else a
    for e in path:
        for end in edges[e]:
            del at[end][colours[e]]
    for e in path:
        colours[e] = b if colours[e] == a else a
        for end in edges[e]:
            at[end][colours[e]] = e
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
