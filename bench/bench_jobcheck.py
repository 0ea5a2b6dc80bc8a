"""The bottleneck check per job: did the emulated links limit a job's transfers, or the emulator?

The run-wide check (bench_limits.finish_cpu_check) measures the fabric with iperf3 at the start:
one flow, then one flow per fabric link and one per leaf at once. A collective on 16 hosts asks
more of ovs-vswitchd than that: every host sends at once, and each byte costs the forwarding thread
one pass per switch it crosses (docs/bench-notebook.md, "Per job: links or the switch?"). So every job is
judged on its own figures, taken while it moved data (bench_sampling.CpuMonitor): the busiest
link's load and the forwarding thread's run + wait-for-CPU %, both weighted by the traffic, and
where the sampler kept them apart (results since 2026-11-29, ``cpu.phases``) for each
implementation's calls separately, since the route switch runs them on different routes:

- **links**: the busiest link ran at >= LINK_MIN_PCT % of its rate (the link-bound collectives
  measured here: 83-98 %; the counters include headers, gaps between an algorithm's steps keep it
  below 100 %);
- **switch**: below that, while the forwarding thread was busy >= SWITCH_BUSY_PCT % of the time:
  the links had room and the switch had little, so the times measure the emulator's CPU;
- **other**: below, and the forwarding thread had room too (gaps in the algorithm, latency, the
  ranks' own CPU).

The thread's busy % alone proves nothing: it was 93-98 % also while Open MPI's calls filled the
links (bench/README.md), so the verdict rests on the links' %; the thread's % only rules the
switch out when it had idle time.

Pure: works on results.json's job records, old ones included (they have only the job's figures).
"""

LINK_MIN_PCT = 80.0
SWITCH_BUSY_PCT = 80.0
UNJUDGED = ("init", "startup")     # collectives whose jobs move too few bytes to judge
IMPL_PHASES = ("openmpi", "sdnmpi")   # RouteSwitch's states while an implementation's calls run
MiB = float(1 << 20)


def judge(link_pct, switch_pct):
    """"links", "switch", "other", or None without a link figure."""
    if link_pct is None:
        return None
    if link_pct >= LINK_MIN_PCT:
        return "links"
    if switch_pct is not None and switch_pct >= SWITCH_BUSY_PCT:
        return "switch"
    return "other"


def crossing_bytes(job):
    """Bytes x switches crossed during the job: recorded (``cpu.crossing_bytes_total``), or, for
    older results on a 2-tier fabric, derived from what they kept: the link counters count a byte
    once per link it used (2 within a leaf, 4 across the spines) and the spines' counters once per
    cross-leaf byte, so crossings (1 within, 3 across) = link bytes / 2 + spine bytes. None if
    neither is there."""
    cpu = job.get("cpu") or {}
    if cpu.get("crossing_bytes_total") is not None:
        return cpu["crossing_bytes_total"]
    spread = (job.get("routes") or {}).get("spine_tx_bytes")
    if cpu.get("link_bytes_total") is None or not spread:
        return None
    spine = sum(sum((phase.get("bytes") or {}).values()) for phase in spread.values())
    return cpu["link_bytes_total"] / 2.0 + spine


def scopes(job):
    """[(scope, link %, switch %, crossings MiB/s or None)]: one per implementation phase that moved
    data when the job has them, else one for the whole job ("job")."""
    cpu = job.get("cpu") or {}
    phases = cpu.get("phases") or {}
    out = [(name, phases[name].get("busiest_link_weighted_pct"), phases[name].get("ovs_main_runnable_weighted_pct"),
            phases[name].get("crossing_mib_s_weighted"))
           for name in IMPL_PHASES if (phases.get(name) or {}).get("link_bytes")]
    if out:
        return out
    return [("job", cpu.get("busiest_link_weighted_pct"), cpu.get("ovs_main_runnable_weighted_pct"),
             cpu.get("crossing_mib_s_weighted"))]


def verdicts(job):
    """{scope: verdict} (see ``scopes``)."""
    return {scope: judge(link, switch) for scope, link, switch, _rate in scopes(job)}


def record_verdict(job, impl):
    """The verdict that applies to one record of the job: its implementation's phase if the job has
    phases ("sdnmpi:ALG" and "first:..." records run in the sdnmpi / openmpi phase), else the job's."""
    got = verdicts(job)
    if "job" in got:
        return got["job"]
    base = impl.split(":", 2)[1] if impl.startswith(("first:", "settle")) else impl.split(":", 1)[0]
    return got.get(base)


def cell(job):
    """The Jobs table's "bound by" cell, e.g. "switch (link 64%, switch 91%)" or, per implementation,
    "openmpi: links (93%); sdnmpi: switch (link 66%, switch 95%, 44 MiB/s crossed)". Init and
    start-up jobs move too few bytes for either to limit them: "- (latency)"."""
    if job.get("collective") in UNJUDGED:
        return "- (latency)"
    parts = []
    for scope, link, switch, rate in scopes(job):
        label = judge(link, switch)
        if label is None:
            continue
        figures = ["link %.0f%%" % link]
        if switch is not None:
            figures.append("switch %.0f%%" % switch)
        if rate is not None:
            figures.append("%.0f MiB/s crossed" % rate)
        parts.append(("" if scope == "job" else scope + ": ") + "%s (%s)" % (label, ", ".join(figures)))
    return "; ".join(parts) or "-"


def switch_bound(jobs):
    """[(job name, scope, link %, switch %)] of the jobs (not init/startup, not superseded) or their
    implementation phases judged "switch"."""
    out = []
    for job in jobs:
        if job.get("collective") in UNJUDGED or job.get("superseded"):
            continue
        for scope, link, switch, _rate in scopes(job):
            if judge(link, switch) == "switch":
                out.append((job["name"], scope, link, switch))
    return out


def criterion(jobs):
    """(ok, text) of the bottleneck check's 4th criterion: no job was switch-bound."""
    bad = switch_bound(jobs)
    if not bad:
        return True, ("(4) per job: no job ran its busiest link below %.0f%% of its rate while ovs-vswitchd's "
                      "forwarding thread was busy >= %.0f%% (Jobs table, \"bound by\")" % (
                          LINK_MIN_PCT, SWITCH_BUSY_PCT))
    return False, ("(4) per job: %d job(s) or implementation(s) ran their busiest link below %.0f%% of its rate while "
                   "ovs-vswitchd's forwarding thread was busy >= %.0f%%, i.e. the emulator, not the links, limited "
                   "them: %s" % (len(bad), LINK_MIN_PCT, SWITCH_BUSY_PCT, "; ".join(
                       "%s%s (link %.0f%%, switch %.0f%%)" % (name, "" if scope == "job" else " " + scope, link, switch)
                       for name, scope, link, switch in bad)))
