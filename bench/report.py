"""results.md (tables) and PNG plots from a bench results.json.

    .venv/bin/python bench/report.py [bench/results/latest]

bench_cli.py calls ``write_report`` at the end of a run; running this script again regenerates the
report from the JSON (e.g. after changing the report code). Nothing is edited or filtered: every
record of results.json appears in a table, and a row where sdnmpi is slower shows a speedup < 1.
"""
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import bench_jobcheck  # noqa: E402
import benchcore  # noqa: E402
from bench_common import pct_text  # noqa: E402
from benchcore import fmt_bytes, fmt_seconds  # noqa: E402
from report_plots import plot_all  # noqa: E402
import report_bounds  # noqa: E402
import report_method  # noqa: E402
import report_rotate  # noqa: E402
import report_settle  # noqa: E402
import report_ovs  # noqa: E402
import bench_startup  # noqa: E402

# --- tables ---------------------------------------------------------------------------------

def _range(rec):
    if not rec or rec.get("median_s") is None:
        return "-"
    return "%s (%s-%s)" % (fmt_seconds(rec["median_s"]), fmt_seconds(rec["min_s"]), fmt_seconds(rec["max_s"]))


def _ratio(value, digits=2):
    return "-" if value is None else ("%.*f" % (digits, value))


def _interval(iv):
    return "-" if iv is None else "%.2f-%.2f" % iv


def _pct(value):
    return "-" if value is None else "%.0f%%" % (100 * value)


SCHEDULE_NAMES = {"rd": "rec. doubling", "rabenseifner_dh": "Rabenseifner, dist. halving",
                  "rabenseifner_dd": "Rabenseifner, dist. doubling", "ring": "ring",
                  "hierarchical": "hierarchical",
                  "any": "any algorithm", "tree": "one tree"}


def _limit_cell(rec):
    """The limit and the schedule that gives it."""
    limits = {k: v for k, v in (rec.get("limits_s") or {}).items() if v is not None}
    if rec.get("limit_s") is None:
        return "-"
    best = [k for k, v in limits.items() if v == rec["limit_s"]]
    return fmt_seconds(rec["limit_s"]) + (" (%s)" % SCHEDULE_NAMES.get(best[0], best[0]) if best else "")


def _sort_key(pair):
    rec = pair[0] or pair[1]
    return (benchcore.ROUTING_ORDER.get(rec["routing"], 9), rec["placement"], rec["nprocs"],
            -1 if rec.get("root") is None else rec["root"], rec["bytes"])


def _tree_cells(rec, sdn):
    """A bcast row's single-tree limit (one pass through the slowest link of one tree: what an
    algorithm that, like sdnmpi's, sends everything through one spine can reach) and sdnmpi's
    fraction of it."""
    tree = (rec.get("limits_s") or {}).get("tree")
    if tree is None:
        return ["-", "-"]
    frac = tree / sdn["median_s"] if sdn and sdn.get("median_s") else None
    return [fmt_seconds(tree), _pct(frac)]


def collective_table(records, collective, flagged=()):
    """Markdown rows for one collective: both implementations side by side. Rows measured in a
    job of ``flagged`` (job names: the fabric's topology changed during the job) get a '!' mark."""
    pairs = sorted(benchcore.pair_records(records, collective), key=_sort_key)
    if not pairs:
        return None
    head = ["routing", "placement", "p"] + (["root"] if collective == "bcast" else []) + [
        "size", "Open MPI median (min-max)", "sdnmpi median (min-max)", "speedup", "95% interval", "limit",
        "Open MPI / limit", "sdnmpi / limit"] + (
        ["one-tree limit", "sdnmpi / one-tree limit"] if collective == "bcast" else []) + ["n"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for ompi, sdn in pairs:
        rec = ompi or sdn
        s = benchcore.speedup(ompi, sdn)
        mark = " (slower)" if s is not None and s < 1 else ""
        cells = [rec["routing"], rec["placement"], str(rec["nprocs"])]
        if collective == "bcast":
            cells.append(str(rec.get("root")))
        cells += [fmt_bytes(rec["bytes"]), _range(ompi), _range(sdn), _ratio(s) + mark,
                  _interval(benchcore.speedup_interval(ompi, sdn)), _limit_cell(rec),
                  _pct(benchcore.fraction_of_limit(ompi)), _pct(benchcore.fraction_of_limit(sdn))]
        if collective == "bcast":
            cells += _tree_cells(rec, sdn)
        cells += ["/".join(str(len(r["samples_s"])) for r in (ompi, sdn) if r)
                  + (" !" if any(r and r.get("job") in flagged for r in (ompi, sdn)) else "")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


TEXT_HEAD = ("collective", "size", "p", "routing/placement", "Open MPI", "sdnmpi", "speedup", "limit",
             "Open MPI/limit", "sdnmpi/limit")


def text_table(records, collectives=("allreduce", "bcast")):
    """A short plain-text table (a list of lines, columns aligned) for a terminal, e.g. the end of
    ``make demo``: per row the collective (and the bcast root), size, p, routing/placement, both
    medians, the speedup (Open MPI / sdnmpi; "(slower)" below 1), the limit and each
    implementation's limit / median. Superseded attempts are left out; rows from a disrupted job
    are marked "!". None if there is no row."""
    current = [r for r in records if not r.get("superseded")]
    rows = []
    for collective in collectives:
        for ompi, sdn in sorted(benchcore.pair_records(current, collective), key=_sort_key):
            rec = ompi or sdn
            s = benchcore.speedup(ompi, sdn)
            name = collective if rec.get("root") is None else "%s root %d" % (collective, rec["root"])
            mark = " !" if any(r and r.get("disrupted") for r in (ompi, sdn)) else ""
            rows.append((name + mark, fmt_bytes(rec["bytes"]), str(rec["nprocs"]),
                         "%s/%s" % (rec["routing"], rec["placement"]),
                         fmt_seconds((ompi or {}).get("median_s")), fmt_seconds((sdn or {}).get("median_s")),
                         _ratio(s) + (" (slower)" if s is not None and s < 1 else ""),
                         fmt_seconds(rec.get("limit_s")), _pct(benchcore.fraction_of_limit(ompi)),
                         _pct(benchcore.fraction_of_limit(sdn))))
    if not rows:
        return None
    widths = [max(len(row[i]) for row in rows + [TEXT_HEAD]) for i in range(len(TEXT_HEAD))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [TEXT_HEAD] + rows]


FLOOR = 0.95   # issue 3: never below 0.95x of the baseline


def floor_verdict(ompi, sdn, floor=FLOOR):
    """Where a row stands against ``floor``: "below" (the whole 95 % interval of the speedup is
    below it: slower beyond the noise), "unresolved" (the median speedup is below it but the
    interval reaches it, or too few samples for an interval), or "met"; None without a speedup."""
    s = benchcore.speedup(ompi, sdn)
    if s is None:
        return None
    iv = benchcore.speedup_interval(ompi, sdn)
    if iv is not None and iv[1] < floor:
        return "below"
    return "unresolved" if s < floor else "met"


def speedup_summary(records, collective, min_bytes=0, floor=FLOOR):
    """Per (routing, placement[, p]): geometric mean speedup over sizes >= min_bytes, the rows
    where sdnmpi is slower, and the rows below ``floor`` beyond the noise or only within it."""
    groups = {}
    for ompi, sdn in benchcore.pair_records(records, collective):
        s = benchcore.speedup(ompi, sdn)
        if s is None or ompi["bytes"] < min_bytes:
            continue
        key = (ompi["routing"], ompi["placement"], ompi["nprocs"])
        groups.setdefault(key, []).append((s, ompi["bytes"], floor_verdict(ompi, sdn, floor)))
    if not groups:
        return None
    lines = ["| routing | placement | p | sizes | geometric mean speedup | min | max | rows where sdnmpi is slower "
             "| below %.2fx beyond the noise | below %.2fx within the noise |" % (floor, floor),
             "|---|---|---|---:|---:|---:|---:|---|---|---|"]

    def sizes(vals, verdict=None):
        picked = [fmt_bytes(b) for v, b, got in vals if (got == verdict if verdict else v < 1)]
        return ", ".join(picked) if picked else "none"
    for key in sorted(groups, key=lambda k: (benchcore.ROUTING_ORDER.get(k[0], 9), k[1], k[2])):
        vals = groups[key]
        gm = math.exp(sum(math.log(v) for v, _, _ in vals) / len(vals))
        lines.append("| %s | %s | %d | %d | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            key[0], key[1], key[2], len(vals), gm, min(v for v, _, _ in vals), max(v for v, _, _ in vals),
            sizes(vals), sizes(vals, "below"), sizes(vals, "unresolved")))
    return "\n".join(lines)


INIT_METRICS = [
    ("sdn_init", "SDN_MPI_Init (register the job), slowest rank"),
    ("first_allreduce", "first SDN_MPI_Allreduce (8 B): plan request + route install + the call"),
    ("plan_rtt", "plan request round trip seen by rank 0 (library log)"),
    ("controller_total", "controller: whole plan_allreduce request"),
    ("controller_plan", "controller: planning"),
    ("controller_install", "controller: installing flows until the barrier replies"),
    ("first_bcast", "first SDN_MPI_Bcast per root (tree request + install + the call)"),
]


def overhead_table(records):
    init = [r for r in records if r.get("collective") == "init"]
    tiny = {}
    for r in records:
        if r.get("collective") == "allreduce" and r.get("bytes", 0) <= 64:
            tiny.setdefault((r["routing"], r["placement"], r["nprocs"], r["bytes"]), {})[r["impl"]] = r
    if not init and not tiny:
        return None
    lines = ["| what | routing | samples | median | min | max |", "|---|---|---:|---:|---:|---:|"]
    for metric, text in INIT_METRICS:
        by_routing = {}
        for r in init:
            if r.get("metric") == metric:
                by_routing.setdefault(r["routing"], []).extend(r["samples_s"])
        for routing in sorted(by_routing, key=lambda x: benchcore.ROUTING_ORDER.get(x, 9)):
            s = by_routing[routing]
            lines.append("| %s | %s | %d | %s | %s | %s |" % (text, routing, len(s), fmt_seconds(statistics.median(s)),
                                                             fmt_seconds(min(s)), fmt_seconds(max(s))))
    out = "\n".join(lines)
    if tiny:
        t = ["", "Per-call cost once the plan is cached (tiny allreduce, blocks of calls alternating; sdnmpi's "
             "calls follow the library's rule, i.e. PMPI_Allreduce below SDN_MPI_MIN_BYTES, 2 KiB unset). The "
             "library runs the same code for these calls whatever the routes, so the last row pools every "
             "job's samples; a route switch slows the next several calls, so a block after one starts after an "
             "idle pause (--tiny-idle-ms; bench/README.md, \"The 8-byte rows\"):", "",
             "| routing | placement | p | size | Open MPI median | sdnmpi median | sdnmpi - Open MPI "
             "| speedup (95% interval) |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
        rows = [(key[0], key[1], str(key[2]), key[3], tiny[key].get("openmpi"), tiny[key].get("sdnmpi"))
                for key in sorted(tiny, key=lambda k: (benchcore.ROUTING_ORDER.get(k[0], 9), k[1], k[2], k[3]))]
        for nbytes in sorted({r[3] for r in rows}):
            same = [r for r in rows if r[3] == nbytes]
            if len(same) > 1:
                rows.append(("all jobs", "pooled", "-", nbytes) + tuple(
                    _pooled([r[4 + i] for r in same]) for i in range(2)))
        for routing, placement, p, nbytes, o, s in rows:
            diff = (s["median_s"] - o["median_s"]) if o and s else None
            sp, iv = benchcore.speedup(o, s), benchcore.speedup_interval(o, s)
            t.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                routing, placement, p, fmt_bytes(nbytes), fmt_seconds(o and o["median_s"]),
                fmt_seconds(s and s["median_s"]),
                "-" if diff is None else ("%s%s" % ("-" if diff < 0 else "+", fmt_seconds(abs(diff)))),
                _ratio(sp) + ("" if iv is None else " (%s)" % _interval(iv))))
        out += "\n" + "\n".join(t)
    return out


def _pooled(recs):
    """One record holding the samples of ``recs`` (None entries skipped), or None."""
    samples = [x for r in recs if r for x in r["samples_s"]]
    block = max([r.get("sample_block") or 1 for r in recs if r] or [1])
    return {"samples_s": samples, "median_s": statistics.median(samples), "sample_block": block} if samples else None


def spine_table(jobs):
    lines = ["| job | implementation | bytes sent down by each spine | share per spine |", "|---|---|---|---|"]
    rows = 0
    for job in jobs:
        spread = (job.get("routes") or {}).get("spine_tx_bytes") or {}
        for impl in ("openmpi", "sdnmpi"):
            if impl not in spread:
                continue
            per = spread[impl]
            if not sum(per["bytes"].values()):
                continue
            spines = sorted(per["bytes"])
            lines.append("| %s | %s | %s | %s |" % (
                job["name"] + ("" if job.get("attempt", 1) == 1 else " (attempt %d)" % job["attempt"])
                + (" (superseded)" if job.get("superseded") else ""), impl, ", ".join("%s %.1f MB" % (s, per["bytes"][s] / 1e6) for s in spines),
                ", ".join("%s %s" % (s, _pct(per["share"][s])) for s in spines)))
            rows += 1
    return "\n".join(lines) if rows else None


def _plan_cell(job):
    """The job's allreduce plan (busiest link per step vs the bound) and bcast trees' top switches."""
    plan = job.get("plan") or {}
    parts = []
    for key in sorted(k for k in plan if k.startswith("comm ")):
        p = plan[key] or {}
        parts.append("%s: max load %s, bound %s, %s flows" % (
            key, p.get("max_load"), p.get("lower_bound"), p.get("flows")))
    trees = plan.get("trees")
    if isinstance(trees, list) and trees:
        parts.append("trees: " + ", ".join("root %s via %s" % (t.get("root"), t.get("top")) for t in trees))
    elif isinstance(trees, int) and trees:
        parts.append("%d trees" % trees)
    return "; ".join(parts) or "-"


def _stat(job, field, key="median"):
    return ((job.get("cpu") or {}).get(field) or {}).get(key)


def jobs_table(jobs):
    lines = ["| job | ranks on hosts | wall | exit | busiest link while data moved (% of its rate) | ovs-vswitchd forwarding thread while data moved: ran / waited for a CPU | ovs-vswitchd all threads (% of a core) | other processes (% of a CPU) | machine CPU busy | route switches (s) | job flows overridden | controller: jobs/plans/trees/errors | route recomputes (! = disrupted) | plan | bound by (links / switch / other; bench/README.md) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|"]
    for j in jobs:
        rpc = j.get("controller_rpc", {})
        routes = j.get("routes", {})
        exit_text = "ok" if j.get("rc") == 0 else ("timeout" if j.get("timed_out") else "rc=%s" % j.get("rc"))
        cpu = j.get("cpu") or {}
        run_, wait = cpu.get("ovs_main_run_weighted_pct"), cpu.get("ovs_main_wait_weighted_pct")
        if run_ is None:
            run_, wait = _stat(j, "ovs_main_run_pct"), _stat(j, "ovs_main_wait_pct")
        if run_ is None and _stat(j, "ovs_vswitchd_cpu_wait_pct") is not None:   # results of older runs
            ovs_main = "- / %s (all threads)" % pct_text(_stat(j, "ovs_vswitchd_cpu_wait_pct"))
        else:
            ovs_main = "%s / %s" % (pct_text(run_), pct_text(wait))
        switches = routes.get("toggles", "-")
        if routes.get("toggle_s_total") is not None:
            switches = "%s (%.1f)" % (switches, routes["toggle_s_total"])
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s/%s/%s | %s | %s | %s |" % (
            j["name"] + ("" if j.get("attempt", 1) == 1 else " (attempt %d)" % j["attempt"])
            + (" (superseded)" if j.get("superseded") else ""),
            ",".join(str(h) for h in j.get("hosts", [])), fmt_seconds(j.get("wall_s")), exit_text,
            pct_text((j.get("cpu") or {}).get("busiest_link_weighted_pct")), ovs_main,
            pct_text(_stat(j, "ovs_vswitchd_pct_of_one_core")), pct_text(_stat(j, "foreign_cpu_pct_of_one_cpu")),
            pct_text(_stat(j, "machine_busy_pct")), switches,
            routes.get("job_flows_hidden", "-"), rpc.get("jobs_registered", "-"), rpc.get("allreduce_plans", "-"),
            rpc.get("bcast_trees", "-"), rpc.get("errors", "-"),
            ("%s !" % j.get("route_recomputes", "?")) if report_method.is_disrupted(j) else j.get("route_recomputes", "-"),
            _plan_cell(j), bench_jobcheck.cell(j)))
    return "\n".join(lines)


def render_markdown(results):
    """results.md's text: the opening paragraphs (report_method.py), then every section in order."""
    disrupted = report_method.disrupted_names(results.get("jobs", []))
    all_records = results.get("records", [])
    records = [r for r in all_records if not r.get("superseded")]
    out = report_method.intro(results, disrupted)
    out += allreduce_section(records, disrupted)
    out += report_rotate.section(results)
    out += bcast_section(records, disrupted, results.get("method", {}).get("have_sdn_bcast", True))
    out += report_bounds.section(results)
    out += more_sections(records, disrupted)
    out += report_settle.section(results)
    out += overhead_section(records)
    out += superseded_section(all_records)
    out += spine_section(results.get("jobs", []))
    out += report_ovs.section(results)
    out += planner_section(results.get("planner_scale"))
    out += jobs_section(results.get("jobs")) + plots_section(results.get("plots"))
    out.append("")
    return "\n".join(out)


def allreduce_section(records, disrupted):
    """## Allreduce: the table and the speedup summary over every size."""
    out = ["", "## Allreduce", "", collective_table(records, "allreduce", disrupted) or "(no allreduce results)"]
    summary = speedup_summary(records, "allreduce")
    if summary:
        out += ["", "Summary over every size. The 95 %% interval of a row's speedup comes from its samples "
                "(bootstrap, bench/README.md). A row is below %.2fx beyond the noise when its whole interval "
                "is below %.2fx, and within the noise when only its median is." % (FLOOR, FLOOR), "", summary]
    return out


def bcast_section(records, disrupted, have_sdn_bcast):
    """## Bcast: the table (Open MPI only without SDN_MPI_Bcast) and the speedup summary."""
    out = ["", "## Bcast", ""]
    if not have_sdn_bcast:
        out += ["libsdnmpi provides no SDN_MPI_Bcast in this build (nm libsdnmpi.a): Open MPI only, no speedups.", ""]
    out.append(collective_table(records, "bcast", disrupted) or "(no bcast results)")
    summary = speedup_summary(records, "bcast")
    if summary:
        out += ["", summary]
    return out


def more_sections(records, disrupted):
    """## Allgather, ## Reduce, ## Alltoall (issue 17, bench/bench_more.py): those that have rows."""
    out = []
    for collective in ("allgather", "reduce", "alltoall"):
        table = collective_table(records, collective, disrupted)
        if table:
            out += ["", "## " + collective.capitalize(), "", "Limit: the any-algorithm bound (host link or leaf "
                    "cut, bench/bench_more.py).", "", table]
    return out


def overhead_section(records):
    """## Overheads, and the start-up and first-call costs (bench/bench_startup.py) if measured."""
    out = ["", "## Overheads", "", overhead_table(records) or "(none measured)"]
    startup = bench_startup.table(records)
    if startup:
        out += ["", "## Start-up and first-call cost", "", startup]
    return out


def superseded_section(all_records):
    """The superseded (disrupted, re-run) attempts' allreduce and bcast tables ([] if none)."""
    old = [r for r in all_records if r.get("superseded")]
    if not old:
        return []
    out = ["", "## Disrupted attempts (re-run; not in the tables above)", ""]
    for collective in ("allreduce", "bcast"):
        table = collective_table(old, collective)
        if table:
            out += [table, ""]
    return out


def spine_section(jobs):
    """## Where the traffic went: the bytes each spine sent per job and implementation ([] if none)."""
    spines = spine_table(jobs)
    if not spines:
        return []
    return ["", "## Where the traffic went", "",
            "Bytes the spines sent towards the leaves while each implementation was running "
            "(switch interface counters, including warm-up and check calls).", "", spines]


def planner_section(scale):
    """## Planner scale: planner_scale.py's table ([] if the run has none)."""
    if not scale:
        return []
    import planner_scale
    return ["", "## Planner scale (no Mininet)", "",
            "Allreduce planner time and quality for the recursive-doubling schedule of p = all hosts. "
            "Ratio = busiest link's flows / lower bound per step (worst step; sum over steps). On 3-tier "
            "fat-trees the bound only counts edge uplinks, so a ratio > 1 there is not proof of a worse plan.",
            "", planner_scale.format_table(scale)]


def jobs_section(jobs):
    """## Jobs: one row per job attempt ([] without jobs)."""
    return ["", "## Jobs", "", jobs_table(jobs)] if jobs else []


def plots_section(plots):
    """## Plots: the PNGs as images ([] without plots)."""
    return ["", "## Plots", ""] + ["![%s](%s)" % (p, p) for p in plots] if plots else []


def write_report(results, out_dir):
    """results.md and the plots into ``out_dir``; returns the markdown."""
    try:
        results["plots"] = plot_all(results, out_dir)
    except ImportError as exc:
        results["plots"] = []
        results.setdefault("notes", []).append("no plots: %s (pip install matplotlib)" % exc)
    text = render_markdown(results)
    with open(os.path.join(out_dir, "results.md"), "w") as out:
        out.write(text)
    return text


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    target = argv[0] if argv else os.path.join(HERE, "results", "latest")
    path = target if target.endswith(".json") else os.path.join(target, "results.json")
    with open(path) as f:
        results = json.load(f)
    write_report(results, os.path.dirname(os.path.abspath(path)))
    print(os.path.join(os.path.dirname(os.path.abspath(path)), "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
