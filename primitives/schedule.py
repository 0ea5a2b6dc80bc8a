"""Communication schedules of MPI collective algorithms: which ranks exchange data in which step.

The C library (libsdnmpi/) runs exactly these schedules; the planners route them. Ranks are
0..p-1 of a communicator.
"""
from .errors import PlanRefused


def recursive_doubling_steps(p):
    """The rank pairs of recursive doubling (and of recursive halving/doubling, Rabenseifner, which
    exchanges between the same pairs), for any p >= 1, as a list of steps; a step is a list of
    directed (sender, receiver) rank pairs.

    For p not a power of two (p = 2^m + r), the first 2r ranks are folded first: each even rank
    2i < 2r sends its data to 2i+1 and sits out. The remaining 2^m ranks run log2(2^m) exchange steps
    (distance 1, 2, 4, ...), and at the end each odd rank 2i+1 < 2r sends the result back to 2i.
    """
    if p < 1:
        raise PlanRefused("p must be >= 1, got %r" % (p,))
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    steps = []
    if rem:
        steps.append([(2 * i, 2 * i + 1) for i in range(rem)])
    # Participants: the odd ranks of the folded prefix, then every rank from 2*rem on.
    participants = [2 * i + 1 for i in range(rem)] + list(range(2 * rem, p))
    distance = 1
    while distance < pof2:
        steps.append([(participants[v], participants[v ^ distance]) for v in range(pof2)])
        distance <<= 1
    if rem:
        steps.append([(2 * i + 1, 2 * i) for i in range(rem)])
    return steps


def host_steps(rank_steps, rank_hosts):
    """Maps rank pairs to host pairs with multiplicity, dropping pairs on the same host.

    Returns a list of steps, each a sorted list of ((src host, dst host), count)."""
    out = []
    for step in rank_steps:
        counts = {}
        for a, b in step:
            ha, hb = rank_hosts[a], rank_hosts[b]
            if ha != hb:
                counts[(ha, hb)] = counts.get((ha, hb), 0) + 1
        out.append(sorted(counts.items()))
    return out


def hierarchical_cross_steps(leaf_sizes):
    """The cross-leaf rank pairs of the hierarchical allreduce (libsdnmpi/src/hier_layout.h) for
    ranks ordered leaf by leaf, leaf g holding ``leaf_sizes[g]`` (>= 1) of them, as a list of
    steps of directed (sender, receiver) rank pairs: what libsdnmpi appends to its plan's
    recursive-doubling steps when these pairs are not among them.

    With m = the smallest leaf (the lanes per leaf) and P the largest power of two <= the number
    of leaves L: if L > P, first lane j of leaf P+e and lane j of leaf e (both ways: the fold and,
    on the allgather side, the unfold); then per halving level d = 1, 2, ..., P/2, lane j of leaf g
    and lane j of leaf g ^ d, g < P (both ways)."""
    if len(leaf_sizes) < 2 or min(leaf_sizes) < 1:
        raise PlanRefused("want two or more non-empty leaves, got %r" % (leaf_sizes,))
    start = [0]
    for k in leaf_sizes:
        start.append(start[-1] + k)
    nleaves, m = len(leaf_sizes), min(leaf_sizes)
    pof2 = 1 << (nleaves.bit_length() - 1)
    steps = []
    if nleaves > pof2:
        fold = []
        for e in range(nleaves - pof2):
            fold += [(start[pof2 + e] + j, start[e] + j) for j in range(m)]
        steps.append(sorted(fold + [(b, a) for a, b in fold]))
    d = 1
    while d < pof2:
        steps.append(sorted((start[g] + j, start[g ^ d] + j) for g in range(pof2) for j in range(m)))
        d <<= 1
    return steps


def hierarchical_routes_needed(leaf_sizes):
    """Whether :func:`hierarchical_cross_steps` has pairs recursive doubling lacks, i.e. unless the
    leaves are equal, of a power-of-two size, and a power of two of them."""
    k, nleaves = leaf_sizes[0], len(leaf_sizes)
    return any(s != k for s in leaf_sizes) or k & (k - 1) != 0 or nleaves & (nleaves - 1) != 0
