"""results.md's "Against the any-algorithm bound" section: every collective row's median / the bound no
algorithm can beat on that fabric and placement (bounds.py, bench/README.md), and, for jobs that also
timed the library's allreduce algorithms one by one (impl "sdnmpi:ALG"), whether the library's own
choice landed within 5 % of the best of them.

Works on any results.json: a record without "bound_s" gets its bound from the run's fabric and its
job's hosts.
"""
import statistics

import bench_jobcheck
import bench_more
import benchcore  # noqa: F401 (Fabric, row_key)
import bounds
from benchcore import fmt_bytes, fmt_seconds

MIN_BYTES = 64 << 10        # smaller rows are latency, where a bandwidth bound says nothing
CHOICE_TOLERANCE = 0.05     # the selection rule's check: the choice within 5 % of the best algorithm


def _fabric(results):
    fab = results.get("fabric") or {}
    return benchcore.Fabric(fab.get("spines", 2), fab.get("leaves", 4), fab.get("hosts_per_leaf", 2),
                            fab.get("host_bw_mbit") or 0, fab.get("fabric_bw_mbit") or 0)


def record_bound(results, rec):
    """{"host", "cut", "bound"} of a record (stored, or computed from its job's hosts); None if unknown."""
    if rec.get("bound_s"):
        return rec["bound_s"]
    hosts = {j["name"]: j.get("hosts") for j in results.get("jobs", [])}.get(rec.get("job"))
    if not hosts or rec.get("collective") not in bounds.COLLECTIVES:
        return None
    return bench_more.row_bound(rec["collective"], _fabric(results), hosts, rec["bytes"], rec.get("root") or 0)


def _ratio_cell(rec, bound_s, jobs=None):
    """median / bound, with "†" when the record's job (or its implementation's phase) was judged
    switch-bound (bench_jobcheck.py): then the ratio measures the emulator, not the algorithm."""
    value = bounds.ratio((rec or {}).get("median_s"), bound_s)
    if value is None:
        return "-"
    job = (jobs or {}).get(rec.get("job"))
    mark = " †" if job and bench_jobcheck.record_verdict(job, rec.get("impl", "")) == "switch" else ""
    return "%.2fx%s" % (value, mark)


def _rows(records, min_bytes=MIN_BYTES):
    """{row key: {impl: record}} of the collective rows (not init, not superseded) >= min_bytes."""
    rows = {}
    for rec in records:
        if rec.get("superseded") or rec.get("collective") not in bounds.COLLECTIVES:
            continue
        if (rec.get("bytes") or 0) < min_bytes:
            continue
        rows.setdefault(benchcore.row_key(rec), {})[rec["impl"]] = rec
    return rows


def _order(key):
    coll, routing, placement, nprocs, nbytes, root = key
    return (coll, benchcore.ROUTING_ORDER.get(routing, 9), placement, nprocs, -1 if root is None else root, nbytes)


def bound_table(results):
    """Markdown table, or "" if no row has a bound."""
    rows = _rows(results.get("records", []))
    jobs = {j["name"]: j for j in results.get("jobs", []) if not j.get("superseded")}
    algs = sorted({impl for row in rows.values() for impl in row if impl.startswith("sdnmpi:")})
    head = ["collective", "routing", "placement", "p", "root", "size", "host bound", "cut bound", "bound",
            "Open MPI / bound", "sdnmpi / bound"] + ["%s / bound" % a for a in algs]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(rows, key=_order):
        row = rows[key]
        any_rec = next(iter(row.values()))
        b = record_bound(results, any_rec)
        if not b or not b.get("bound"):
            continue
        coll, routing, placement, nprocs, nbytes, root = key
        lines.append("| " + " | ".join([
            coll, routing, placement, str(nprocs), "-" if root is None else str(root), fmt_bytes(nbytes),
            fmt_seconds(b.get("host")), fmt_seconds(b.get("cut")), fmt_seconds(b["bound"]),
            _ratio_cell(row.get("openmpi"), b["bound"], jobs), _ratio_cell(row.get("sdnmpi"), b["bound"], jobs)]
            + [_ratio_cell(row.get(a), b["bound"], jobs) for a in algs]) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


def choice_check(records, tolerance=CHOICE_TOLERANCE):
    """[(key, chosen, chosen median, best alg, best median, within)] for rows that timed the
    algorithms one by one. When the library's calls report the one algorithm they took
    (rec["sdn_paths"]), its samples are pooled with that algorithm's forced ones (the same code), and
    the choice is judged by that algorithm's median against the best; otherwise the library's own
    median is."""
    out = []
    for key, row in sorted(_rows(records, 0).items(), key=lambda kv: _order(kv[0])):
        forced = {impl.split(":", 1)[1]: list(rec.get("samples_s") or [rec["median_s"]])
                  for impl, rec in row.items() if impl.startswith("sdnmpi:") and rec.get("median_s")}
        auto = row.get("sdnmpi")
        if not forced or not auto or not auto.get("median_s"):
            continue
        paths = auto.get("sdn_paths") or []
        chosen = paths[0] if len(paths) == 1 else "?"
        if chosen != "?":   # the library's calls are samples of the algorithm they took
            forced[chosen] = forced.get(chosen, []) + list(auto.get("samples_s") or [])
        medians = {alg: statistics.median(samples) for alg, samples in forced.items()}
        best = min(medians, key=medians.get)
        chosen_s = medians[chosen] if chosen in medians else auto["median_s"]
        out.append((key, chosen, chosen_s, best, medians[best], chosen_s <= medians[best] * (1 + tolerance)))
    return out


def choice_table(records, tolerance=CHOICE_TOLERANCE):
    checks = choice_check(records, tolerance)
    if not checks:
        return ""
    lines = ["| routing | placement | p | size | library's choice (median) | best algorithm (median) | "
             "choice / best | within %d %% |" % round(100 * tolerance), "|---|---|---:|---:|---|---|---:|---|"]
    for (coll, routing, placement, nprocs, nbytes, root), chosen, chosen_s, best, best_s, ok in checks:
        lines.append("| %s | %s | %d | %s | %s (%s) | %s (%s) | %.2f | %s |" % (
            routing, placement, nprocs, fmt_bytes(nbytes), chosen, fmt_seconds(chosen_s), best,
            fmt_seconds(best_s), chosen_s / best_s, "yes" if ok else "**no**"))
    misses = sum(1 for c in checks if not c[5])
    lines += ["", "%d of %d rows within %d %% of the best measured algorithm." % (
        len(checks) - misses, len(checks), round(100 * tolerance))]
    return "\n".join(lines)


def section(results):
    """The lines of the section (empty if nothing to show)."""
    table = bound_table(results)
    if not table:
        return []
    out = ["", "## Against the any-algorithm bound", "",
           "Bound = max(host-link bound, cut bound): what no algorithm without in-network computation can "
           "beat on this fabric and placement (bench/README.md derives both per collective). \"/ bound\" = "
           "median / bound (1.00x = at the bound). Rows from %s on. \"†\": the job (or that implementation's "
           "calls in it) ran its busiest link below %.0f%% of its rate while ovs-vswitchd's forwarding thread was "
           "busy >= %.0f%% (Jobs table, \"bound by\"): the emulator, not the links, set that time, so the ratio "
           "measures this machine, not the algorithm." % (fmt_bytes(MIN_BYTES), bench_jobcheck.LINK_MIN_PCT,
                                                          bench_jobcheck.SWITCH_BUSY_PCT), "", table]
    choice = choice_table([r for r in results.get("records", []) if not r.get("superseded")])
    if choice:
        out += ["", "### The library's allreduce choice against each algorithm timed alone", "",
                "sdnmpi:ALG = SDN_MPI_Allreduce forced to one algorithm (coll_bench --sdn-algs), timed in the "
                "same job, alternating with the others. The library's own calls report the algorithm they took; "
                "their samples are pooled with that algorithm's (the same code), so the check compares "
                "algorithms, not two samples of one.", "", choice]
    return out


def median_ratio(results, collective, impl="sdnmpi", min_bytes=256 << 10):
    """Median over rows of median / bound for one implementation at >= min_bytes (README tables)."""
    values = []
    for key, row in _rows(results.get("records", [])).items():
        if key[0] != collective or key[4] < min_bytes or impl not in row:
            continue
        b = record_bound(results, row[impl])
        r = bounds.ratio(row[impl].get("median_s"), (b or {}).get("bound"))
        if r is not None:
            values.append(r)
    return statistics.median(values) if values else None
