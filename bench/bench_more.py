"""Benchmark rows of SDN_MPI_Allgather, SDN_MPI_Reduce and SDN_MPI_Alltoall (issue 17): their jobs
and their any-algorithm limits. `bytes` of a row is what each rank receives (allgather), sends
(alltoall) or reduces (reduce, to rank 0), as coll_bench's run_more measures it."""
import benchcore
import bounds

COLLECTIVES = ("allgather", "reduce", "alltoall")


def row_bound(collective, fab, hosts, nbytes, root=0):
    """bench/bounds.py's {"host", "cut", "bound"} of a benchmark row of any collective, with the
    row's bytes turned into that module's sizes: coll_bench passes each rank p blocks of
    nbytes / p (allgather, alltoall), else the whole vector (allreduce, reduce, bcast)."""
    size = nbytes // max(len(hosts), 1) if collective in ("allgather", "alltoall") else nbytes
    return bounds.bound(collective, fab, hosts, size, root or 0)


def limits(fab, hosts, collective, nbytes):
    """{"host": s, "cut": s, "any": s} of a row: its any-algorithm bound (row_bound, the one
    derivation, bench/README.md)."""
    got = row_bound(collective, fab, hosts, nbytes)
    return {"host": got["host"], "cut": got["cut"], "any": got["bound"]}


def plan_jobs(args, fab, routings, placements, sizes, nprocs):
    """One job per (collective in args.collectives, routing, placement, p): both implementations
    alternating, as allreduce's jobs."""
    settle = getattr(args, "settle_calls", 0) or 0   # after each of <= 2 switches a point
    idle_ms = getattr(args, "idle_ms", 0) or 0
    jobs = []
    for collective in [c for c in COLLECTIVES if c in args.collectives]:
        for routing in routings:
            for placement, p, hosts in benchcore.placed_hosts(placements, nprocs, fab.hosts, args.seed):
                work = job_work(args, fab, collective, hosts, sizes, settle, idle_ms)
                jobs.append(dict(benchcore.job_head(collective, routing, placement, p, hosts, args.reps),
                                 sizes=sizes, nimpl=2, work=work, settle_calls=settle, idle_ms=idle_ms))
    return jobs


def job_work(args, fab, collective, hosts, sizes, settle, idle_ms):
    """A job's estimated seconds (its timeout, the ETA): each size's calls at twice its any-algorithm
    limit, the route switches (0.7 s each) and the idle gaps."""
    est = [2.0 * (limits(fab, hosts, collective, s)["any"] or 0.0) + 0.02 for s in sizes]
    work = sum(e * ((2 + 2 * settle) * args.reps + 2) for e in est) + \
        (2 + len(sizes) * (args.reps + 1)) * 0.7 + 4
    return work + 2 * len(sizes) * args.reps * idle_ms / 1000.0
