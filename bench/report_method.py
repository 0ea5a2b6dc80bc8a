"""results.md's opening paragraphs, before the tables: the run, the fabric and its rates, the software,
the mpirun and controller settings, how the routes were switched (method), the bottleneck check, the
notes, and the jobs that were re-run or disrupted."""
import bench_rates
from benchcore import fmt_seconds


def is_disrupted(job):
    """Whether the job was disrupted: the machine stalled or the fabric's topology changed."""
    return bool(job.get("disrupted") or job.get("fabric_disrupted"))


def reasons(job):
    """Why the job counts as disrupted (texts)."""
    return job.get("disrupted") or (["topology changed"] if job.get("fabric_disrupted") else [])


def disrupted_names(jobs):
    """The names of the disrupted jobs whose rows are in the tables (not superseded), sorted."""
    return sorted(j["name"] for j in jobs if is_disrupted(j) and not j.get("superseded"))


def intro(results, disrupted):
    """Every paragraph before the first table, in results.md's order (lines)."""
    jobs = results.get("jobs", [])
    return (run_lines(results) + fabric_lines(results) + software_lines(results) + mpirun_lines(results)
            + method_lines(results.get("method", {})) + check_lines(results) + rerun_lines(jobs)
            + disrupted_lines(jobs, disrupted))


def run_lines(results):
    """The title and the paragraph on the run: when, how long, how rows are measured and compared."""
    return ["# sdnmpi benchmark%s" % (" (QUICK subset)" if results.get("quick") else ""), "",
            "Run %s to %s (%s wall). One fabric, one run: Open MPI and sdnmpi alternate call by call "
            "inside each mpirun; time = slowest rank; median (min-max) over the repetitions. "
            "Speedup = Open MPI median / sdnmpi median (> 1: sdnmpi faster). "
            "Limit = physical lower bound of the row (bench/README.md); \"/ limit\" = limit / median "
            "(100%% = at the limit)." % (results.get("started", "?"), results.get("finished", "?"),
                                        fmt_seconds(results.get("wall_s")))]


def fabric_lines(results):
    """The fabric's shape and link rates, and how the rates were chosen (bench_rates.py)."""
    fab = results.get("fabric", {})
    return ["", "Fabric: %s spines, %s leaves, %s hosts/leaf (%s hosts); host links %s Mbit/s, fabric links "
            "%s Mbit/s%s." % (
                fab.get("spines"), fab.get("leaves"), fab.get("hosts_per_leaf"), fab.get("hosts"),
                fab.get("host_bw_mbit") or "unlimited", fab.get("fabric_bw_mbit") or "unlimited",
                (" (%.0f:1 at the leaves)" % fab["oversubscription"]) if fab.get("oversubscription") else "")
            ] + bench_rates.markdown(results.get("rate_choice"))


def software_lines(results):
    """The software versions and Open MPI's coll/tuned settings."""
    sw = results.get("software", {})
    out = ["", "Software: %s; %s; Ryu %s; Mininet %s; kernel %s; Python %s; sdnmpi %s." % (
        sw.get("openmpi"), sw.get("openvswitch"), sw.get("ryu"), sw.get("mininet"), sw.get("kernel"),
        sw.get("python"), sw.get("sdnmpi_git"))]
    tuned = results.get("coll_tuned", {})
    if tuned:
        vals = tuned.get("values", {})
        out += ["", "Open MPI coll/tuned: %s (coll_tuned_priority=%s, allreduce_algorithm=%s, bcast_algorithm=%s; "
                "all lines in results.json)." % (tuned.get("note", ""), vals.get("coll_tuned_priority"),
                                                vals.get("coll_tuned_allreduce_algorithm"),
                                                vals.get("coll_tuned_bcast_algorithm"))]
    return out


def _pairs(settings):
    """NAME=VALUE, ... of a dict, sorted by name."""
    return ", ".join("%s=%s" % kv for kv in sorted(settings.items()))


def mpirun_lines(results):
    """mpirun's MCA parameters, the library's settings and the controller's options ([] if unrecorded)."""
    mpirun = results.get("mpirun") or {}
    if not mpirun:
        return []
    extra = mpirun.get("extra_mca") or {}
    out = ["", "mpirun: one rank per host, MCA %s%s. sdnmpi settings: %s." % (
        _pairs(mpirun.get("mca") or {}), (" (extra, from --ompi-mca: %s)" % _pairs(extra)) if extra else "",
        _pairs(mpirun.get("sdn_env") or {}) or "library defaults")]
    if mpirun.get("controller_args"):
        out.append("Controller options: %s." % " ".join(mpirun["controller_args"]))
    return out


def method_lines(method):
    """Which routes Open MPI's calls used, and the settle calls and idle pauses around route switches."""
    out = ["", "Routes during Open MPI's calls: %s." % (
        "the controller's default routing only (for Open MPI's calls the harness overrides the job's sdnmpi "
        "host-pair routes with flows that forward as the default routes do, and removes them for sdnmpi's "
        "calls, outside the timed region; bench/README.md)" if method.get("hide_job_flows", True)
        else "the job's sdnmpi flows stay installed (--no-hide-job-flows): Open MPI's traffic between the "
             "planned host pairs also uses them")]
    if method.get("settle_calls"):
        out.append("After each route switch, %d allreduce, allgather, reduce or alltoall call(s) of the same variant "
                   "and size precede the timed one (--settle-calls; timed apart: \"The first call after a route "
                   "switch\" below)." % method["settle_calls"])
    if method.get("idle_ms"):
        out.append("Before every timed call of those loops all ranks idled %d ms (--idle-ms, an experiment)."
                   % method["idle_ms"])
    if method.get("tiny_idle_ms") and method.get("tiny_reps") and not method.get("rotation"):   # blocks of 8 B ran
        out.append("Before each block of 8-byte calls that follows a route switch: the settle calls, then all ranks "
                   "idled %d ms (--tiny-idle-ms)." % method["tiny_idle_ms"])
    return out


def check_lines(results):
    """The bottleneck check's verdict (bench_limits.finish_cpu_check) and the run's notes."""
    out = []
    check = results.get("cpu_check", {})
    if check.get("verdict"):
        out += ["", "**Bottleneck check.** " + check["verdict"]]
    for note in results.get("notes", []):
        out += ["", "**Note.** " + note]
    return out


def rerun_lines(jobs):
    """The job attempts that were disrupted and run again, with why ([] if none)."""
    superseded = [j for j in jobs if j.get("superseded")]
    if not superseded:
        return []
    return ["", "**Re-run jobs.** %d job attempt(s) were disrupted and run again (the rule ignores the times: "
            "the machine stalled, or the controller lost and found links, switches or hosts): %s. Their "
            "records are listed under \"Disrupted attempts\" below, not in the tables." % (
                len(superseded), "; ".join("%s attempt %s: %s" % (j["name"], j.get("attempt", 1),
                                                                 ", ".join(reasons(j))) for j in superseded))]


def disrupted_lines(jobs, disrupted):
    """The warning about disrupted jobs whose rows are in the tables ([] if none)."""
    if not disrupted:
        return []
    return ["", "**Disrupted.** During %d job(s) whose rows are in the tables (%s) the machine stalled or the "
            "controller lost and found links, switches or hosts (this VM's CPUs at times stop for seconds to "
            "minutes; then LLDP probes and OpenFlow echo replies come too late). Their rows are marked \"!\" "
            "in the n column: do not trust them." % (len(disrupted), "; ".join(
                "%s: %s" % (j["name"], ", ".join(reasons(j))) for j in jobs
                if j["name"] in disrupted and not j.get("superseded")))]
