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
GAP_MS = 100           # the warm_gap variant's work between Init and the first collective
BCAST_BYTES = 65536    # the first SDN_MPI_Bcast's size: SDN_MPI_BCAST_MIN_BYTES's default

INIT_PARTS = ("init_mpi", "init_rpc", "init_rtts", "init_ctrl", "init_ahead")
PLAN_PARTS = ("plan_mpi", "plan_locate", "plan_request", "plan_rtts", "plan_ahead", "plan_ahead_age", "plan_ctrl",
              "plan_ctrl_plan", "plan_ctrl_install")
BCAST_PARTS = ("bcast_setup", "bcast_tree", "bcast_request", "bcast_ctrl", "bcast_ctrl_install")
# (metric suffix, label, job settings): cold jobs call Init first thing; "_warm" ones after every
# pair of ranks has exchanged a message (coll_bench --warm: Open MPI's lazy TCP connections are
# open). Plan-ahead is the library's default; "noahead" turns it off (SDN_MPI_PLAN_AHEAD=0), "gap"
# waits GAP_MS between Init and the first call, as an application that works before its first
# collective. Every other variant makes its first call right after Init.
VARIANTS = (
    ("", "cold", {"warm": False}),
    ("_warm", "warm", {"warm": True}),
    ("_warm_noahead", "warm, SDN_MPI_PLAN_AHEAD=0", {"warm": True, "variant": "noahead",
                                                     "env": {"SDN_MPI_PLAN_AHEAD": "0"}}),
    ("_warm_gap", "warm, first call %d ms after Init" % GAP_MS, {"warm": True, "variant": "gap", "gap_ms": GAP_MS}),
    # --startup-baseline BIN: the same jobs with another library (coll_bench links it statically)
    ("_base", "cold, baseline library", {"warm": False, "variant": "base", "baseline": True}),
    ("_warm_base", "warm, baseline library", {"warm": True, "variant": "base", "baseline": True}),
    ("_warm_gap_base", "warm, first call %d ms after Init, baseline library" % GAP_MS,
     {"warm": True, "variant": "gap_base", "gap_ms": GAP_MS, "baseline": True}),
)
# A new communicator's first SDN_MPI_Allreduce (coll_bench_startup.c, --startup-comms), by how it
# was made: (HOW, label) for the metrics comm_HOW_create and comm_HOW_first.
COMM_HOWS = (("dup", "an SDN_MPI_Comm_dup of the world"), ("split", "SDN_MPI_Comm_split halves"),
             ("lazy", "PMPI_Comm_split halves"))
# (metric, row label, breakdown slots in the order shown)
PHASES = tuple((base + suffix, "%s, %s" % (what, label), parts)
               for base, what, parts in (("init", "SDN_MPI_Init", INIT_PARTS),
                                         ("first_allreduce", "first SDN_MPI_Allreduce", PLAN_PARTS),
                                         ("first_bcast", "first SDN_MPI_Bcast", BCAST_PARTS),
                                         ("second_bcast", "second SDN_MPI_Bcast", ()))
                                        + tuple(("comm_%s_first" % how, "first SDN_MPI_Allreduce on %s" % what,
                                                 PLAN_PARTS) for how, what in COMM_HOWS)
                                        + tuple(("comm_%s_create" % how, "making it", ()) for how, _ in COMM_HOWS)
               for suffix, label, _ in VARIANTS)
# The floor (bench/README.md, "The floor"): measured in every job after its first call (coll_bench_startup.c
# floors()), FLOOR_REPS times each; pooled per p over the run's jobs.
FLOORS = ("floor_init_mpi", "floor_rtt", "floor_first")
# The steps of the profile (the "steps" events: largest over the ranks; parts: world rank 0's), in order.
INIT_STEPS = ("init_allreduce", "init_allgather", "init_gather", "init_rpc", "init_ahead", "init_bcast", "init_libcomm",
              "init")
PLAN_STEPS = ("plan_decide", "plan_request", "plan_allreduce", "plan_scatter", "plan_split", "plan_layout", "plan",
              "call")
PART_LABELS = {
    "init_mpi": "MPI exchange", "init_rpc": "RPC", "init_rtts": "round trips", "init_ctrl": "controller",
    "init_ahead": "plan sent ahead",
    "plan_mpi": "MPI side", "plan_locate": "locate", "plan_request": "plan RPC (wait)", "plan_rtts": "round trips",
    "plan_ahead": "sent ahead", "plan_ahead_age": "since sent",
    "plan_ctrl": "controller", "plan_ctrl_plan": "planning", "plan_ctrl_install": "install + barrier",
    "bcast_setup": "comm state (dup, addresses)", "bcast_tree": "tree (request, sockets, agreement)",
    "bcast_request": "tree RPC", "bcast_ctrl": "controller", "bcast_ctrl_install": "install + barrier",
    "init_allreduce": "Allreduce (memory)", "init_allgather": "Allgather (addresses)",
    "init_gather": "Gather (addresses, memory)", "init_bcast": "Bcast (agreement, addresses)",
    "init_libcomm": "library comm",
    "init": "Init", "plan_decide": "leader decides", "plan_allreduce": "Allreduce (outcome)",
    "plan_scatter": "Scatter / order",
    "plan_split": "private comm", "plan_layout": "layout Bcast", "plan": "plan", "call": "whole call",
}


def plan_jobs(args, fab, routing):
    """args.startup_reps jobs per p in NPROCS and variant (VARIANTS, interleaved), block placement,
    under `routing`."""
    jobs = []
    for p in NPROCS:
        slots = -(-p // fab.hosts)   # ranks per host: p above the fabric's hosts shares them
        hosts = benchcore.placement_hosts("block", fab.hosts, min(p, fab.hosts), args.seed)
        for rep in range(args.startup_reps):
            for suffix, _label, settings in VARIANTS:
                if settings.get("baseline") and not getattr(args, "startup_baseline", None):
                    continue
                jobs.append(variant_job(args, routing, p, slots, hosts, rep, suffix, settings))
    return jobs


def variant_job(args, routing, p, slots, hosts, rep, suffix, settings):
    """Repeat ``rep`` (from 0) of a VARIANTS entry at p ranks, ``slots`` a host."""
    job = {"name": "startup-%s-p%d-%s%d" % (routing, p, suffix.lstrip("_") or "cold", rep + 1),
           "collective": "startup", "routing": routing, "placement": "block", "nprocs": p,
           "hosts": hosts, "slots": slots, "warm": False, "reps": 1, "tiny_reps": args.startup_calls,
           "nimpl": 1, "work": 3.0, "work_per_byte": 0.0, "startup_bcast_bytes": BCAST_BYTES,
           "startup_comms": 1}
    job.update((k, v) for k, v in settings.items() if k != "baseline")
    if settings.get("baseline"):
        job["coll_bench"] = args.startup_baseline
    return job


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
            extra = {"bytes": BCAST_BYTES, "root": 0} if "bcast" in metric else {}
            out.append(_record(job, metric, [e["t_s"] for e in rows],
                               parts={k: [e["parts"].get(k) for e in rows] for k in rows[0].get("parts", {})},
                               **extra))
    for metric in FLOORS:
        rows = [e for e in ev if e.get("metric") == metric]
        if rows:
            out.append(_record(job, metric, [e["t_s"] for e in rows],
                               parts={k: [e["parts"].get(k) for e in rows] for k in rows[0].get("parts", {})}))
    for e in ev:
        if e.get("metric") == "steps" and e.get("max"):
            out.append(_record(job, "steps_" + e["of"], [e["max"].get("call", e["max"].get("init", 0.0))],
                               steps={k: [v] for k, v in e["max"].items()}))
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
    return "%g" % med if name.endswith("_rtts") or name == "plan_ahead" else benchcore.fmt_seconds(med)


def table(records):
    """The startup section's markdown (None without startup records): per phase and p the median
    and range over the jobs, and the medians of the breakdown; then the cached call."""
    records = [r for r in records if r.get("collective") == "startup" and not r.get("superseded")]
    if not records:
        return None
    nprocs = sorted({r["nprocs"] for r in records})
    lines = []
    for parts in (INIT_PARTS, PLAN_PARTS, BCAST_PARTS):
        bcast = parts == BCAST_PARTS   # with the second call, and the first call's extra cost
        extra = ["second call", "first - second"] if bcast else []
        lines += ["| what | p | jobs | median | range | %s |" % " | ".join(extra + [PART_LABELS[k] for k in parts]),
                  "|---|---:|---:|---:|---|%s" % ("---:|" * (len(parts) + len(extra)))]
        for metric, label, _parts in [ph for ph in PHASES if ph[2] == parts]:
            for p in nprocs:
                samples = _pooled(records, metric, p)
                if not samples:
                    continue
                med, rng = _span(samples)
                cols = [_part(records, metric, p, k) for k in parts]
                what = label
                if metric.startswith("comm_"):   # with the making of the communicator
                    made = _pooled(records, metric.replace("_first", "_create", 1), p)
                    what = "%s (making it: %s)" % (label, _span(made)[0])
                if bcast:
                    second = _pooled(records, metric.replace("first_", "second_", 1), p)
                    cols = [_span(second)[0], _signed(statistics.median(samples) - statistics.median(second))
                            if second else "-"] + cols
                lines.append("| %s (%d B) | %d | %d | %s | %s | %s |" % (what, BCAST_BYTES, p, len(samples), med, rng,
                                                                       " | ".join(cols)) if bcast else
                             "| %s | %d | %d | %s | %s | %s |" % (what, p, len(samples), med, rng, " | ".join(cols)))
        lines.append("")
    lines += floor_table(records, nprocs) + steps_table(records, nprocs)
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


def floors_of(records, p):
    """The floor at p (medians pooled over the run's jobs): {"init": Gather + Bcast + connect + hello, "init_mpi",
    "rtt", "first": Bcast + dup + call}, each None when not measured."""
    med = {}
    for metric in FLOORS:
        samples = _pooled(records, metric, p)
        med[metric] = statistics.median(samples) if samples else None
    init = None if med["floor_init_mpi"] is None or med["floor_rtt"] is None else med["floor_init_mpi"] + med["floor_rtt"]
    return {"init": init, "init_mpi": med["floor_init_mpi"], "rtt": med["floor_rtt"], "first": med["floor_first"]}


def _floor_parts(records, p, metric, names):
    return ", ".join("%s %s" % (n, _part(records, metric, p, n)) for n in names)


def floor_table(records, nprocs):
    """Warm Init and first-call rows against the floor of their p: median, floor, ours = median - floor."""
    out = []
    for p in nprocs:
        fl = floors_of(records, p)
        if fl["init"] is None and fl["first"] is None:
            continue
        if not out:
            out = ["The floor (bench/README.md, \"The floor\"; medians over the run's jobs, measured in each job after "
                   "its first call) and what is ours (median - floor). Warm rows only: the floor runs on open "
                   "connections.", "",
                   "| what | p | jobs | median | floor | ours | floor's parts |", "|---|---:|---:|---:|---:|---:|---|"]
        for metric, label, _parts in PHASES:
            if "_warm" not in metric or not metric.startswith(("init", "first_allreduce")):
                continue
            samples = _pooled(records, metric, p)
            floor = fl["init"] if metric.startswith("init") else fl["first"]
            if not samples or floor is None:
                continue
            med = statistics.median(samples)
            parts = ("Gather + Bcast %s, connect %s + hello %s" % (
                benchcore.fmt_seconds(fl["init_mpi"]), _part(records, "floor_rtt", p, "connect"),
                _part(records, "floor_rtt", p, "hello")) if metric.startswith("init")
                     else _floor_parts(records, p, "floor_first", ("bcast", "dup", "call")))
            out.append("| %s | %d | %d | %s | %s | %s | %s |" % (label, p, len(samples), benchcore.fmt_seconds(med),
                                                                 benchcore.fmt_seconds(floor), _signed(med - floor),
                                                                 parts))
    return out + [""] if out else []


def _step(records, metric, p, name, key):
    vals = [v for r in records if r.get("metric") == metric and r["nprocs"] == p
            for v in (r.get(key) or {}).get(name, []) if v is not None and v >= 0]
    return benchcore.fmt_seconds(statistics.median(vals)) if vals else "-"


def steps_table(records, nprocs):
    """The profile: per phase (Init, the first call) and p, each step's median time on world rank 0 and on the
    rank that spent longest in it (the "steps" events)."""
    out = []
    for phase, steps in (("init", INIT_STEPS), ("first_allreduce", PLAN_STEPS)):
        rows = []
        for metric, label, _parts in PHASES:
            if not metric.startswith(phase):
                continue
            for p in nprocs:
                n = len([r for r in records if r.get("metric") == "steps_" + metric and r["nprocs"] == p])
                if n:
                    rows.append("| %s | %d | %d | %s |" % (label, p, n, " | ".join(
                        "%s / %s" % ("-" if k == "call" else _part(records, metric, p, k),
                                     _step(records, "steps_" + metric, p, k, "steps")) for k in steps)))
        if rows:
            out += ["Steps of %s, medians over the jobs: world rank 0 / the largest over the ranks (each step's "
                    "own largest)." % ("SDN_MPI_Init" if phase == "init" else "the first SDN_MPI_Allreduce"), "",
                    "| what | p | jobs | %s |" % " | ".join(PART_LABELS.get(k, k) for k in steps),
                    "|---|---:|---:|%s" % ("---:|" * len(steps))] + rows + [""]
    return out
