"""Several --rotate-routings runs pooled by rounds: sdnmpi against the best of Open MPI's routings
over all their complete rounds (one job takes at most 21 rounds of three routings).

    .venv/bin/python bench/rotate_pool.py RUN_DIR RUN_DIR ... [--placements block] [--out DIR]

Reads each run's results.json and keeps its rotation jobs' allreduce records (of --placements;
default: every run's placements, which must then be the same). Every run must have the same
allreduce sizes, placements (the same hosts), fabric, routings and PMPI threshold, else one error
line and exit status 1. Per placement and size, rotate_compare.compare_pooled compares over every
complete round of every run, each draw resampling each run's rounds within that run (a run holds one
job per placement), with the views of a single run's results.md and the deployed one; a pooled median
is the runs' medians' geometric mean weighted by their rounds (rotate_compare._median). Writes
results.md and pool.json (the rows) into bench/results/rotate-pool-<UTC stamp>/ (or --out).
"""
import argparse
import json
import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from benchcore import ROUTING_ORDER, fmt_bytes  # noqa: E402
import report_rotate  # noqa: E402
import rotate_compare  # noqa: E402


def load_run(path):
    """(the run's folder, its results.json) for a folder or a results.json."""
    folder = os.path.dirname(path) if path.endswith(".json") else path
    with open(os.path.join(folder, "results.json")) as src:
        return folder.rstrip("/"), json.load(src)


def facts(results, placements=None):
    """What must agree between pooled runs: sizes, placements' hosts, fabric, routings, the PMPI
    threshold. ``placements``: the ones to keep (None: the run's)."""
    method = results.get("method") or {}
    if not method.get("rotation"):
        raise ValueError("not a --rotate-routings run (no method.rotation)")
    hosts = method.get("placements") or {}
    keep = sorted(hosts) if placements is None else placements
    missing = [p for p in keep if p not in hosts]
    if missing:
        raise ValueError("no %s placement (it has %s)" % (", ".join(missing), ", ".join(sorted(hosts)) or "none"))
    return {"sizes": method.get("allreduce_sizes"), "placements": {p: hosts[p] for p in keep},
            "fabric": results.get("fabric"), "routings": sorted(set(method["rotation"])),
            "pmpi_below": report_rotate.pmpi_below((results.get("mpirun") or {}).get("sdn_env"))}


def check(runs, placements=None):
    """The runs' common facts; ValueError (one line, naming the run and what differs) if any differ."""
    first = None
    for folder, results in runs:
        try:
            these = facts(results, placements)
        except ValueError as exc:
            raise ValueError("%s: %s" % (folder, exc)) from None
        if first is None:
            first = (folder, these)
            continue
        for key, value in these.items():
            if value != first[1][key]:
                raise ValueError("%s has %s %s, %s has %s: pool runs of the same sizes, placements, fabric, "
                                 "routings and PMPI threshold" % (folder, key, _text(value), first[0],
                                                                   _text(first[1][key])))
    return first[1]


def _text(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def job_records(results, placements):
    return [r for r in results.get("records", [])
            if not r.get("superseded") and r.get("placement") in placements and r.get("rotation_blocks")]


def run_lines(runs, common, out):
    """Per run: its folder (linked from ``out``), start, its complete rounds per row, each rotation
    job's wall time and the CPU that other processes used (median and p90 of the 1 s samples)."""
    lines = []
    placements = common["placements"]
    for j, (folder, results) in enumerate(runs):
        data = rotate_compare.rounds_of(job_records(results, placements), len(common["routings"]))
        rounds = sorted({len(rotate_compare.complete_rounds(d)) for d in data.values()})
        jobs = []
        for job in results.get("jobs") or []:
            if job.get("placement") not in placements or not (job.get("routes") or {}).get("rotation") \
                    or job.get("superseded"):
                continue
            other = (job.get("cpu") or {}).get("foreign_cpu_pct_of_one_cpu") or {}
            jobs.append("%s %.0f s, other processes %s / %s %% of a CPU (median / p90)" % (
                job.get("name"), job.get("wall_s") or 0, _pct(other.get("median")), _pct(other.get("p90"))))
        lines.append("- run %d: [%s](%s) (started %s; complete rounds per row %s): %s" % (
            j, os.path.basename(folder), os.path.relpath(os.path.join(folder, "results.md"), out),
            results.get("started"), "/".join(str(r) for r in rounds) or "none", "; ".join(jobs) or "no rotation job"))
    return lines


def _pct(value):
    return "-" if value is None else "%.0f" % value


def render(runs, common, rows, command, out):
    routings = sorted(common["routings"], key=lambda r: ROUTING_ORDER.get(r, 9))
    placements = sorted(common["placements"])
    total = sorted({row["rounds"] for row in rows.values()})
    lines = ["# Against the best of Open MPI's routings, %d rotation runs pooled by rounds" % len(runs), "",
           "Command: `%s`" % command, "",
           "Runs pooled (placements %s, sizes %s, routings %s; sdnmpi calls PMPI below %s):" % (
               ", ".join(placements), ", ".join(fmt_bytes(s) for s in common["sizes"] or []), ", ".join(routings),
               fmt_bytes(common["pmpi_below"])), ""]
    lines += run_lines(runs, common, out)
    lines += ["", "## Pooled (%s complete rounds per row)" % "/".join(str(t) for t in total), "",
            "As in one run's section (report_rotate.py), over the complete rounds of every run, but a pooled "
            "median is each run's median, their geometric mean weighted by the run's rounds (the runs ran on "
            "different levels of the machine; a median of all their samples would fall between them): sdnmpi = "
            "that over every block; O R / S = Open MPI's under routing R / sdnmpi's (> 1: sdnmpi faster), i.e. "
            "the runs' own ratios' weighted geometric mean. Intervals 95 %%, %d bootstrap draws; each draw "
            "resamples each run's rounds within that run (stratified by job; a drawn round brings both "
            "implementations' blocks). Cross-fitted: the halves are each run's even and odd rounds." %
            rotate_compare.DRAWS, "",
            report_rotate.table(rows, routings), ""]
    lines += report_rotate.summary(rows)
    for folder, results in runs:
        jobs = [job for job in results.get("jobs") or [] if job.get("placement") in placements]
        lines += ["- %s: %s" % (os.path.basename(folder), line[2:]) for line in report_rotate.blocks_lines(jobs)]
    return lines + report_rotate.deployed_lines(rows, common["pmpi_below"]) + [""]


def rows_json(rows):
    return [dict(row, placement=key[0], bytes=key[1]) for key, row in rows.items()]


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="--rotate-routings runs (folders or results.json)")
    parser.add_argument("--placements", help="comma-separated placements to pool (default: every run's)")
    parser.add_argument("--out", help="output folder (default bench/results/rotate-pool-<UTC stamp>)")
    parser.add_argument("--draws", type=int, default=rotate_compare.DRAWS)
    parser.add_argument("--seed", type=int, default=1)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    placements = args.placements.split(",") if args.placements else None
    try:
        runs = [load_run(path) for path in args.runs]
        common = check(runs, placements)
        rows = rotate_compare.compare_pooled(
            [job_records(results, common["placements"]) for _folder, results in runs],
            len(common["routings"]), seed=args.seed, draws=args.draws)
    except (OSError, ValueError) as exc:
        sys.exit("rotate_pool: %s" % exc)
    out = args.out or os.path.join(HERE, "results", "rotate-pool-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    command = shlex.join([os.path.relpath(sys.executable), "bench/rotate_pool.py"]
                         + list(sys.argv[1:] if argv is None else argv))
    with open(os.path.join(out, "results.md"), "w") as dst:
        dst.write("\n".join(render(runs, common, rows, command, out)))
    with open(os.path.join(out, "pool.json"), "w") as dst:
        json.dump({"command": command, "runs": [folder for folder, _r in runs], "common": common,
                   "rows": rows_json(rows)}, dst, indent=1)
    print(os.path.join(out, "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
