"""The any-algorithm bound of a collective on a 2-tier leaf-spine (bench/README.md, "The any-algorithm
bound"): the time no algorithm without in-network computation can beat on that fabric and placement.

Two parts, each a lower bound on its own, so the bound is the larger:

- host: the bytes that must enter or leave the busiest host over its link, / the host-link rate;
- cut: the bytes that must cross the busiest leaf's uplinks (in or out), / their total rate
  (uplinks x fabric-link rate), i.e. the leaf-to-spine cut with the data split over all spines.

Links are full duplex: "in" and "out" are separate budgets, each bound is the larger direction.
Latency and header bytes are ignored. One rank per host (the bench's placement). Pure Python, no
imports from the rest of bench/; ``fab`` is anything with ``host_bw``, ``fabric_bw`` (Mbit/s, 10^6
bit/s, falsy = unlimited), ``spines`` and ``leaf_of(host)`` (benchcore.Fabric).

Sizes per collective (MPI's own arguments, in bytes):
- allreduce, reduce, bcast: ``nbytes`` = the vector (count x type size);
- allgather: ``block`` = each rank's contribution (sendcount x type size), the result is p blocks;
- alltoall: ``block`` = what each rank sends to each other rank (sendcount x type size).
"""

COLLECTIVES = ("allreduce", "bcast", "reduce", "allgather", "alltoall")


def _seconds(nbytes, mbit):
    """nbytes over a link of mbit Mbit/s; 0 for no bytes, None for an unlimited link."""
    if not nbytes:
        return 0.0
    if not mbit:
        return None
    return nbytes * 8.0 / (mbit * 1e6)


def _leaf_counts(fab, hosts):
    if len(set(hosts)) != len(hosts):
        raise ValueError("the bound assumes one rank per host, got hosts %s" % (list(hosts),))
    counts = {}
    for host in hosts:
        leaf = fab.leaf_of(host)
        counts[leaf] = counts.get(leaf, 0) + 1
    return counts


def _result(fab, host_bytes, cut_bytes):
    """{"host", "cut", "bound"} in seconds from the bytes over the busiest host link (one direction)
    and over the busiest leaf's uplinks (one direction). A part is None if its links are unlimited;
    the bound is None only if both are."""
    host = _seconds(host_bytes, fab.host_bw)
    cut = _seconds(cut_bytes, fab.spines * fab.fabric_bw if fab.fabric_bw else 0)
    parts = [v for v in (host, cut) if v is not None]
    return {"host": host, "cut": cut, "bound": max(parts) if parts else None}


def _split_leaves(fab, hosts):
    """Leaf counts and p; the cut matters only for a leaf holding some but not all ranks."""
    counts = _leaf_counts(fab, hosts)
    p = len(hosts)
    return {leaf: k for leaf, k in counts.items() if 0 < k < p}, p


def allreduce_bound(fab, hosts, nbytes):
    """Host: every rank sends and receives at least 2 (p-1)/p nbytes (the reduce-scatter half of the
    data out and the other ranks' shares in, then the allgather's; Patarasuk and Yuan 2009).
    Cut: a leaf with some but not all ranks needs the reduction of the outside's data, nbytes in,
    and the outside needs the leaf's, nbytes out (the sides can pre-reduce, so no more is needed)."""
    split, p = _split_leaves(fab, hosts)
    if p < 2:
        return _result(fab, 0, 0)
    return _result(fab, 2.0 * (p - 1) / p * nbytes, nbytes if split else 0)


def _rooted(fab, hosts, root, nbytes):
    """nbytes through the root's host link and, if a rank is on another leaf, across the cut."""
    if not 0 <= root < len(hosts):
        raise ValueError("root %d out of range for %d ranks" % (root, len(hosts)))
    split, p = _split_leaves(fab, hosts)
    if p < 2:
        return _result(fab, 0, 0)
    return _result(fab, nbytes, nbytes if split else 0)


def bcast_bound(fab, hosts, root, nbytes):
    """Host: every receiver takes nbytes in (and the root sends at least nbytes). Cut: the root's
    leaf sends nbytes out and every other leaf with a receiver takes nbytes in."""
    return _rooted(fab, hosts, root, nbytes)


def reduce_bound(fab, hosts, root, nbytes):
    """Host: the root takes at least nbytes in (the reduction of the others' data), and every other
    rank's data must leave its host: nbytes out. Cut: the root's leaf takes nbytes in if a rank is
    outside it, and every other leaf with a rank sends nbytes out (pre-reduced)."""
    return _rooted(fab, hosts, root, nbytes)


def allgather_bound(fab, hosts, block):
    """Host: every rank takes the other p-1 blocks in, (p-1) block (and sends its own at least once).
    Cut: a leaf with k of the p ranks takes the (p-k) outside blocks in and sends its k blocks out:
    max(k, p-k) block over its uplinks, the busiest such leaf. Blocks are distinct: nothing reduces."""
    split, p = _split_leaves(fab, hosts)
    cut = max((max(k, p - k) for k in split.values()), default=0)
    return _result(fab, (p - 1) * block, cut * block)


def alltoall_bound(fab, hosts, block):
    """Host: every rank sends p-1 blocks and takes p-1 in. Cut: a leaf with k ranks sends k (p-k)
    blocks out and takes as many in (every pair across the cut has its own block)."""
    split, p = _split_leaves(fab, hosts)
    cut = max((k * (p - k) for k in split.values()), default=0)
    return _result(fab, (p - 1) * block, cut * block)


def bound(collective, fab, hosts, nbytes, root=0):
    """{"host", "cut", "bound"} of one benchmark row (see the module doc for what nbytes is)."""
    if collective == "allreduce":
        return allreduce_bound(fab, hosts, nbytes)
    if collective == "bcast":
        return bcast_bound(fab, hosts, root or 0, nbytes)
    if collective == "reduce":
        return reduce_bound(fab, hosts, root or 0, nbytes)
    if collective == "allgather":
        return allgather_bound(fab, hosts, nbytes)
    if collective == "alltoall":
        return alltoall_bound(fab, hosts, nbytes)
    raise ValueError("no bound for collective %r" % (collective,))


def ratio(median_s, bound_s):
    """median / bound (1.0 = at the bound; >= 1 always, up to measurement), or None."""
    if not median_s or not bound_s:
        return None
    return median_s / bound_s
