"""Communication schedules of MPI collective algorithms: which ranks exchange data in which step.

The C library (libsdnmpi/) runs exactly these schedules; the planners route them. Ranks are
0..p-1 of a communicator.
"""


def recursive_doubling_steps(p):
    """The rank pairs of recursive doubling (and of recursive halving/doubling, Rabenseifner, which
    exchanges between the same pairs), for any p >= 1, as a list of steps; a step is a list of
    directed (sender, receiver) rank pairs.

    For p not a power of two (p = 2^m + r), the first 2r ranks are folded first: each even rank
    2i < 2r sends its data to 2i+1 and sits out. The remaining 2^m ranks run log2(2^m) exchange steps
    (distance 1, 2, 4, ...), and at the end each odd rank 2i+1 < 2r sends the result back to 2i.
    """
    if p < 1:
        raise ValueError("p must be >= 1, got %r" % (p,))
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
