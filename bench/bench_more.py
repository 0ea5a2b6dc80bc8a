"""Benchmark rows of SDN_MPI_Allgather, SDN_MPI_Reduce and SDN_MPI_Alltoall (issue 17): their jobs
and their any-algorithm limits. `bytes` of a row is what each rank receives (allgather), sends
(alltoall) or reduces (reduce, to rank 0), as coll_bench's run_more measures it."""
import collections

import benchcore

COLLECTIVES = ("allgather", "reduce", "alltoall")


def _seconds(nbytes, mbit):
    return nbytes * 8.0 / (mbit * 1e6)


def limits(fab, hosts, collective, nbytes):
    """{"host": s, "cut": s, "any": s}: no algorithm (without in-network computation) beats them.

    host: bytes the busiest host link must carry / host_bw: (p-1)/p nbytes into every host
    (allgather, alltoall; also out of every host for alltoall), nbytes into the root (reduce).
    cut: bytes that must cross the busiest leaf's S uplinks (or downlinks) / (S fabric_bw): a leaf
    with k of the p ranks takes k (p-k)/p nbytes in (allgather) or sends that out (alltoall); the
    root's leaf takes nbytes in if some rank is elsewhere (reduce). One rank per host."""
    p = len(hosts)
    if p < 2 or (not fab.host_bw and not fab.fabric_bw):
        zero = 0.0 if p < 2 else None
        return {"host": zero, "cut": zero, "any": zero}
    share = nbytes * (p - 1) / p
    if collective == "reduce":
        host = nbytes
        remote = any(fab.leaf_of(h) != fab.leaf_of(hosts[0]) for h in hosts[1:])
        cut = nbytes if remote else 0.0
    else:
        host = share
        per_leaf = collections.Counter(fab.leaf_of(h) for h in hosts)
        cut = max(k * (p - k) / p * nbytes for k in per_leaf.values())
    out = {"host": _seconds(host, fab.host_bw) if fab.host_bw else 0.0,
           "cut": _seconds(cut, fab.spines * fab.fabric_bw) if fab.fabric_bw else 0.0}
    out["any"] = max(out.values())
    return out


def plan_jobs(args, fab, routings, placements, sizes, nprocs):
    """One job per (collective in args.collectives, routing, placement, p): both implementations
    alternating, as allreduce's jobs."""
    jobs = []
    for collective in [c for c in COLLECTIVES if c in args.collectives]:
        for routing in routings:
            for placement in placements:
                for p in nprocs:
                    hosts = benchcore.placement_hosts(placement, fab.hosts, p, args.seed)
                    est = [2.0 * (limits(fab, hosts, collective, s)["any"] or 0.0) + 0.02 for s in sizes]
                    work = sum(e * (2 * args.reps + 2) for e in est) + (2 + len(sizes) * (args.reps + 1)) * 0.7 + 4
                    jobs.append({"name": "%s-%s-%s-p%d" % (collective, routing, placement, p),
                                 "collective": collective, "routing": routing, "placement": placement,
                                 "nprocs": p, "hosts": hosts, "reps": args.reps, "sizes": sizes, "nimpl": 2,
                                 "work": work})
    return jobs
