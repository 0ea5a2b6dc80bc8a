"""results.md's section of a --rotate-routings run: sdnmpi against the best of Open MPI's routings,
measured in one job per placement (bench_rotate.py, rotate_compare.py)."""
import statistics

from benchcore import ROUTING_ORDER, fmt_bytes, fmt_seconds
import rotate_compare


def _ratio(value, interval=None):
    if value is None:
        return "-"
    text = "%.2f" % value
    if interval is not None:
        text += " (%.2f-%.2f)" % interval
    return text


def _mark(verdicts):
    """"**slower** (the rules that say so)", else "no" (the rules that had an interval), else "-"."""
    named = (("every", verdicts["every"]), ("cross-fit", verdicts["cross_fit"]))
    rules = [name for name, hit in named if hit]
    if rules:
        return "**slower** (%s)" % ", ".join(rules)
    judged = [name for name, hit in named if hit is not None]
    return "no" if len(judged) == 2 else ("no (%s)" % judged[0] if judged else "-")


def table(rows, routings):
    """The markdown table of ``rows`` ({(placement, bytes): compare_row})."""
    head = ["placement", "size", "rounds", "sdnmpi", "sdnmpi under %s" % "/".join(routings)] + \
        ["Open MPI %s" % r for r in routings] + \
        ["O %s / S (95 %%)" % r for r in routings] + ["min of three", "cross-fitted (95 %)", "chosen",
                                                        "slower than the best beyond the noise"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 4) + "---|" * 2]
    for (placement, nbytes), row in rows.items():
        cells = [placement, fmt_bytes(nbytes), str(row["rounds"]), fmt_seconds(row["sdnmpi_median_s"]),
                 " / ".join(fmt_seconds(row["sdnmpi_by_routing_s"].get(r)) for r in routings)]
        cells += [fmt_seconds(row["openmpi_median_s"].get(r)) for r in routings]
        cells += [_ratio(row["every"].get(r, {}).get("ratio"), row["every"].get(r, {}).get("interval"))
                  for r in routings]
        cells += [_ratio(row["min_of_three"]) + (" (%s)" % row["best_by_medians"] if row["best_by_medians"] else ""),
                  _ratio(row["cross_fit"], row["cross_fit_interval"]), "/".join(row["cross_fit_chosen"]) or "-",
                  _mark(rotate_compare.verdict(row))]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


ALLREDUCE_MIN_BYTES = 2048    # libsdnmpi/src/env.h SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES


def pmpi_below(sdn_env):
    """The size below which SDN_MPI_Allreduce calls PMPI_Allreduce: SDN_MPI_MIN_BYTES of the jobs'
    environment (``sdn_env``, results.json's mpirun.sdn_env; digits with an optional k/m/g, as
    libsdnmpi's env.c reads it; anything else it ignores), else the library's default, 2 KiB."""
    text = str((sdn_env or {}).get("SDN_MPI_MIN_BYTES", "")).strip()
    shift = {"k": 10, "m": 20, "g": 30}.get(text[-1:].lower(), 0)
    digits = text[:-1] if shift else text
    return int(digits) << shift if digits.isdigit() else ALLREDUCE_MIN_BYTES


def deployed_table(rows, min_bytes):
    """The deployed view's table: sdnmpi's median in the default routing's blocks against the
    cross-fitted best routing's Open MPI (rotate_compare.compare_row's "deployed")."""
    out = ["| placement | size | rounds | sdnmpi's call | sdnmpi under the default routing | chosen for Open MPI | "
           "O best / S default, cross-fitted (95 %) | beyond the noise |", "|---|---|---:|---|---:|---|---:|---|"]
    for (placement, nbytes), row in rows.items():
        dep = row.get("deployed")
        if not dep:
            continue
        out.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
            placement, fmt_bytes(nbytes), row["rounds"], "PMPI (fallback)" if nbytes < min_bytes else "SDN path",
            fmt_seconds(dep["sdnmpi_median_s"]), "/".join(dep["chosen"]) or "-",
            _ratio(dep["ratio"], dep["interval"]),
            {"slower": "**slower**", None: "-"}.get(rotate_compare.deployed_verdict(row),
                                                  rotate_compare.deployed_verdict(row))))
    return "\n".join(out)


def deployed_lines(rows, min_bytes):
    """The deployed view's heading paragraph, table and count."""
    routing = next((row["deployed"]["routing"] for row in rows.values() if row.get("deployed")), None)
    if routing is None:
        return []
    verdicts = [rotate_compare.deployed_verdict(row) for row in rows.values() if row.get("deployed")]
    return ["", "### Deployed: sdnmpi under the default routing (%s) against the best routing's Open MPI" % routing, "",
            "Deployed, sdnmpi runs under the controller's default routing (--sdnmpi-default-routing, %s) and no "
            "harness switches routes between calls. In the %s blocks sdnmpi's host-pair routes are the default "
            "ones (none installed: see the plan digests), so the bench's switch to and from Open MPI's routes "
            "changes no flow there and sdnmpi's calls pay no switch's tail; under the other routings every "
            "switch adds or removes override flows. So sdnmpi's median in the %s blocks is the deployed one "
            "(this assumes its routes stay all elided, as the digests show; where they are not, the %s "
            "blocks switch too). Sizes below %s are PMPI fallbacks (SDN_MPI_MIN_BYTES, unset: 2 KiB): "
            "there sdnmpi's column is Open MPI's own call on the default routes. Open MPI's side: the routing "
            "fastest for it on one half of the rounds, judged on the other, both ways (geometric mean), the "
            "selection redone in every draw, the draws paired with the tables above." % (
                routing, routing, routing, routing, fmt_bytes(min_bytes)), "",
            deployed_table(rows, min_bytes), "",
            "- deployed view, beyond the noise: sdnmpi slower in %d of %d rows, faster in %d, within the noise in "
            "%d, no interval in %d" % (verdicts.count("slower"), len(verdicts), verdicts.count("faster"),
                                       verdicts.count("within"), verdicts.count(None))]


def summary(rows):
    """How many rows each rule finds sdnmpi slower than the best, at 1 and at the bench's 0.95x floor."""
    out = []
    for threshold in (1.0, 0.95):
        verdicts = [rotate_compare.verdict(row, threshold) for row in rows.values()]
        naive = sum(1 for row in rows.values() if row["min_of_three"] is not None and row["min_of_three"] < threshold)
        out.append("- below %.2fx: min of three (medians, no interval) %d of %d rows; beyond the noise: some "
                   "routing's interval wholly below it in %d, the cross-fitted interval in %d" % (
                       threshold, naive, len(rows), sum(1 for v in verdicts if v["every"]),
                       sum(1 for v in verdicts if v["cross_fit"])))
    return out


def blocks_lines(jobs):
    """Per rotation job: its blocks, the routing changes and their time, and sdnmpi's plan per block."""
    out = []
    for job in jobs:
        blocks = (job.get("routes") or {}).get("rotation")
        if not blocks:
            continue
        changed = [b for b in blocks if b.get("changed")]
        errors = [b for b in blocks if b.get("error")]
        digests = {}
        for b in blocks:
            plan = b.get("plan") or {}
            key = "%s (%s routes, %s installed)" % (plan.get("digest"), plan.get("routes"), plan.get("installed"))
            digests.setdefault(b.get("routing"), {}).setdefault(key, 0)
            digests[b.get("routing")][key] += 1
        secs = [b["s"] for b in changed if b.get("s") is not None]
        out.append("- %s: %d blocks (%s), %d routing changes, each %s (median; REST, the confirmed route pass and "
                   "the datapath's revalidation), %d failed%s. sdnmpi's host-pair routes per routing: %s." % (
                       job.get("name"), len(blocks), " ".join(b["routing"][0] for b in blocks), len(changed),
                       fmt_seconds(statistics.median(secs)) if secs else "-", len(errors),
                       (" (%s)" % errors[0]["error"]) if errors else "",
                       "; ".join("%s: %s" % (r, ", ".join("%s x%d" % kv for kv in sorted(d.items())))
                                 for r, d in sorted(digests.items(), key=lambda kv: ROUTING_ORDER.get(kv[0], 9)))))
    return out


def section(results):
    """The section's lines ([] when the run has no rotation job)."""
    schedule = (results.get("method") or {}).get("rotation")
    if not schedule:
        return []
    routings = sorted(set(schedule), key=lambda r: ROUTING_ORDER.get(r, 9))
    records = [r for r in results.get("records", []) if not r.get("superseded")]
    rows = rotate_compare.compare(records, len(routings))
    out = ["", "## Against the best of Open MPI's routings, in one job (--rotate-routings)", "",
           "One allreduce job per placement; its %d blocks (%d rounds of one block per routing, in the order %s) "
           "each ran every size with both implementations alternating call by call; between blocks the "
           "controller's default routing changed (PUT /sdnmpi/routing, the override flows removed first, then "
           "the confirmed route pass and revalidator/wait). sdnmpi = its median over every block; O R / S = "
           "Open MPI's median under routing R / sdnmpi's (> 1: sdnmpi faster). Intervals: 95 %%, %d bootstrap "
           "draws of whole rounds (a round brings both implementations' blocks). Min of three: the fastest "
           "routing's ratio by the medians (biased towards 'slower'). Cross-fitted: the routing fastest for "
           "Open MPI on the even rounds judged on the odd ones and the other way round, the geometric mean of "
           "the two ratios, its interval redoing the selection in every draw (rotate_compare.py). Slower beyond "
           "the noise: 'every' if some routing's interval lies wholly below 1, 'cross-fit' if the cross-fitted "
           "one does." % (len(schedule), len(schedule) // len(routings), " ".join(schedule[:2 * len(routings)]),
                          rotate_compare.DRAWS), "",
           table(rows, routings) if rows else "(no rotation records)", ""]
    out += summary(rows) + blocks_lines(results.get("jobs") or [])
    return out + deployed_lines(rows, pmpi_below((results.get("mpirun") or {}).get("sdn_env")))
