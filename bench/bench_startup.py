"""The start-up rows (issue 17, "Start-up and first-call cost"; bench/README.md): jobs of coll_bench
--collective startup at p = 8 and 16, the records they give and their table.

One mpirun gives one SDN_MPI_Init sample and one first-plan sample (each only happens once per
job), so a row's repeats are separate jobs. p larger than the fabric's hosts puts several ranks
on a host (slots). The cached call is timed call by call against the same algorithm without the
library around it (sdnmpi_test_allreduce_direct); each SDN sample says whether it ran the
reconnect agreement step (libsdnmpi/src/reconnect.c)."""
import statistics

import benchcore

NPROCS = (8, 16)

INIT_PARTS = ("init_mpi", "init_rpc", "init_rtts", "init_ctrl")
PLAN_PARTS = ("plan_mpi", "plan_locate", "plan_request", "plan_rtts", "plan_ctrl", "plan_ctrl_plan",
              "plan_ctrl_install")
# (metric, row label, breakdown slots in the order shown); "_warm": after every pair of ranks has
# exchanged a message (coll_bench --warm: Open MPI's lazy TCP connections are open)
PHASES = (
    ("init", "SDN_MPI_Init, cold", INIT_PARTS),
    ("init_warm", "SDN_MPI_Init, warm", INIT_PARTS),
    ("first_allreduce", "first SDN_MPI_Allreduce, cold", PLAN_PARTS),
    ("first_allreduce_warm", "first SDN_MPI_Allreduce, warm", PLAN_PARTS),
)
PART_LABELS = {
    "init_mpi": "MPI exchange", "init_rpc": "RPC", "init_rtts": "round trips", "init_ctrl": "controller",
    "plan_mpi": "MPI side", "plan_locate": "locate", "plan_request": "plan RPC", "plan_rtts": "round trips",
    "plan_ctrl": "controller", "plan_ctrl_plan": "planning", "plan_ctrl_install": "install + barrier",
}


def plan_jobs(args, fab, routing):
    """args.startup_reps jobs per p in NPROCS and variant (cold, warm; interleaved), block
    placement, under `routing`."""
    jobs = []
    for p in NPROCS:
        slots = -(-p // fab.hosts)
        hosts = benchcore.placement_hosts("block", fab.hosts, min(p, fab.hosts), args.seed)
        for rep in range(args.startup_reps):
            for warm in (False, True):
                jobs.append({"name": "startup-%s-p%d-%s%d" % (routing, p, "warm" if warm else "cold", rep + 1),
                             "collective": "startup", "routing": routing, "placement": "block", "nprocs": p,
                             "hosts": hosts, "slots": slots, "warm": warm, "reps": 1,
                             "tiny_reps": args.startup_calls, "nimpl": 1, "work": 3.0, "work_per_byte": 0.0})
    return jobs


def _record(job, metric, samples, **extra):
    rec = {"collective": "startup", "impl": "sdnmpi", "metric": metric, "routing": job["routing"],
           "placement": job["placement"], "nprocs": job["nprocs"], "bytes": 8, "root": None,
           "samples_s": samples, "median_s": statistics.median(samples) if samples else None, "job": job["name"]}
    rec.update(extra)
    return rec


def job_records(job, events):
    """results.json records of one startup job: init and first_allreduce (one sample each, with the
    breakdown of world rank 0), cached call samples per variant, and the two differences the goals
    name: cached_overhead (SDN call without the agreement step minus the direct algorithm, medians)
    and agree_step (SDN call with it minus without, medians)."""
    ev = [e for e in events if e.get("bench") == "startup"]
    out = []
    for metric, _label, _parts in PHASES:
        rows = [e for e in ev if e.get("metric") == metric]
        if rows:
            out.append(_record(job, metric, [e["t_s"] for e in rows],
                               parts={k: [e["parts"].get(k) for e in rows] for k in rows[0].get("parts", {})}))
    dispatch = {}
    for e in ev:
        if e.get("metric") == "dispatch":
            dispatch.setdefault(e["variant"], []).append(e["t_s"])
    if "sdnmpi" in dispatch and "direct" in dispatch:
        out.append(_record(job, "dispatch_overhead", [statistics.median(dispatch["sdnmpi"])
                                                      - statistics.median(dispatch["direct"])],
                           direct_s=statistics.median(dispatch["direct"])))
    cached = {}
    for e in ev:
        if e.get("metric") == "cached":
            key = e["variant"] + ("_agree" if e.get("agree") else "")
            cached.setdefault(key, []).append(e["t_s"])
    for key, samples in sorted(cached.items()):
        out.append(_record(job, "cached_" + key, samples))
    med = {k: statistics.median(v) for k, v in cached.items()}
    if "sdnmpi" in med and "direct" in med:
        out.append(_record(job, "cached_overhead", [med["sdnmpi"] - med["direct"]]))
    if "sdnmpi" in med and "sdnmpi_agree" in med:
        out.append(_record(job, "agree_step", [med["sdnmpi_agree"] - med["sdnmpi"]]))
    return out


def _pooled(records, metric, p):
    return [x for r in records if r.get("metric") == metric and r["nprocs"] == p for x in r["samples_s"]]


def _span(samples):
    if not samples:
        return "-", "-"
    return (benchcore.fmt_seconds(statistics.median(samples)),
            "%s-%s" % (benchcore.fmt_seconds(min(samples)), benchcore.fmt_seconds(max(samples))))


def _part(records, metric, p, name):
    vals = [v for r in records if r.get("metric") == metric and r["nprocs"] == p
            for v in (r.get("parts") or {}).get(name, []) if v is not None and v >= 0]
    if not vals:
        return "-"
    med = statistics.median(vals)
    return "%g" % med if name.endswith("_rtts") else benchcore.fmt_seconds(med)


def table(records):
    """The startup section's markdown (None without startup records): per phase and p the median
    and range over the jobs, and the medians of the breakdown; then the cached call."""
    records = [r for r in records if r.get("collective") == "startup" and not r.get("superseded")]
    if not records:
        return None
    nprocs = sorted({r["nprocs"] for r in records})
    lines = []
    for parts in (INIT_PARTS, PLAN_PARTS):
        lines += ["| what | p | jobs | median | range | %s |" % " | ".join(PART_LABELS[k] for k in parts),
                  "|---|---:|---:|---:|---|%s" % ("---:|" * len(parts))]
        for metric, label, _parts in [ph for ph in PHASES if ph[2] == parts]:
            for p in nprocs:
                samples = _pooled(records, metric, p)
                if samples:
                    med, rng = _span(samples)
                    lines.append("| %s | %d | %d | %s | %s | %s |" % (
                        label, p, len(samples), med, rng, " | ".join(_part(records, metric, p, k) for k in parts)))
        lines.append("")
    lines += ["Cached 8-byte call (slowest rank per call; medians over the jobs' calls): the direct algorithm "
              "(recursive doubling on the plan's communicator, no library around it), SDN_MPI_Allreduce on the "
              "calls without the reconnect agreement step and on those with it (every 8th call on a "
              "world-spanning communicator), and the differences.", "",
              "| p | direct | sdnmpi | sdnmpi, agreement step | overhead (sdnmpi - direct) | agreement step | "
              "amortised per call |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for p in nprocs:
        direct, sdn, agree = (_pooled(records, "cached_" + k, p) for k in ("direct", "sdnmpi", "sdnmpi_agree"))
        if not direct or not sdn:
            continue
        md, ms = statistics.median(direct), statistics.median(sdn)
        ma = statistics.median(agree) if agree else None
        amort = (statistics.mean(sdn + agree) - statistics.mean(direct)) if agree else None
        lines.append("| %d | %s | %s | %s | %s | %s | %s |" % (
            p, benchcore.fmt_seconds(md), benchcore.fmt_seconds(ms), benchcore.fmt_seconds(ma),
            _signed(ms - md), _signed(None if ma is None else ma - ms), _signed(amort)))
    dispatch = [x for r in records if r.get("metric") == "dispatch_overhead" for x in r["samples_s"]]
    if dispatch:
        lines += ["", "What the library itself adds per call, without a network (world rank 0 alone on MPI_COMM_SELF, "
                  "blocks of %s back-to-back calls, SDN_MPI_Allreduce minus the direct algorithm; median and range "
                  "over the jobs): %s (%s to %s)." % (
                      "1000", _ns(statistics.median(dispatch)), _ns(min(dispatch)), _ns(max(dispatch)))]
    return "\n".join(lines)


def _ns(x):
    return "%+.0f ns" % (x * 1e9)


def _signed(x):
    if x is None:
        return "-"
    return ("-" if x < 0 else "+") + benchcore.fmt_seconds(abs(x))
