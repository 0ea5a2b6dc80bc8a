"""primitives/colouring.py: König edge colouring of bipartite multigraphs."""
import collections

from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi.primitives.colouring import bipartite_edge_colouring, colour_classes

multigraphs = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=300)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(multigraphs)
def test_colouring_is_proper_with_max_degree_colours(pairs):
    edges = [(("L", a), ("R", b)) for a, b in pairs]
    colours = bipartite_edge_colouring(edges)
    degree = collections.Counter(end for edge in edges for end in edge)
    assert len(colours) == len(edges)
    assert all(0 <= c < max(degree.values()) for c in colours)
    seen = set()
    for edge, c in zip(edges, colours):
        for end in edge:
            assert (end, c) not in seen
            seen.add((end, c))


def test_a_regular_multigraph_splits_into_perfect_matchings():
    """A d-regular bipartite multigraph (here 3 parallel copies of a 4-cycle's edges plus a perfect
    matching) gets d colour classes, each a perfect matching."""
    base = [(0, 0), (0, 1), (1, 1), (1, 0)] * 3 + [(0, 0), (1, 1)]
    edges = [(("L", a), ("R", b)) for a, b in base]
    classes = colour_classes(bipartite_edge_colouring(edges))
    assert len(classes) == 7
    for members in classes.values():
        assert sorted(edges[i][0][1] for i in members) == [0, 1]
        assert sorted(edges[i][1][1] for i in members) == [0, 1]
