"""Writing a scenario file's results: a table on stdout, and per scenario a directory with
``result.txt`` and CSV time series (PFSim's layout: ``<output>/<scenario id>/``)."""
import csv
import logging
import os

LOG = logging.getLogger(__name__)

COLUMNS = ("id", "topology", "host_selector", "process_mapper", "router", "jobs_started",
           "jobs_finished", "max_congestion", "mean_job_max_link_bytes", "mean_wait_s")
SERIES = {"max_congestion": "Maximum Congestion", "stddev_congestion": "Congestion StdDev",
          "max_flows": "Maximum Number of Flows"}
JOB_COLUMNS = ("job", "trace", "ranks", "hosts", "submitted", "started", "finished", "max_link_bytes")


def _fmt(value):
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3f}"
    return str(value)


def table(results):
    """The summary table (one row per scenario) as text."""
    rows = [[_fmt(r.summary[c]) for c in COLUMNS] for r in results]
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c)
              for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))]
    lines += ["  ".join(v.rjust(w) if v[:1].isdigit() else v.ljust(w) for v, w in zip(row, widths))
              for row in rows]
    return "\n".join(lines)


def write(directory, results):
    """Writes ``directory``/summary.csv and ``directory``/<id>/{result.txt, <series>.csv, jobs.csv}."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "summary.csv"), "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in results:
            writer.writerow([r.summary[c] for c in COLUMNS])
    for r in results:
        sub = os.path.join(directory, str(r.spec.id))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "result.txt"), "w") as f:
            for key, value in r.summary.items():
                f.write(f"{key:<24} {value}\n")
        for name, series in r.series.items():
            with open(os.path.join(sub, name + ".csv"), "w", newline="") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(["time", SERIES[name]])
                writer.writerows(series)
        with open(os.path.join(sub, "jobs.csv"), "w", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(JOB_COLUMNS)
            for row in r.rows:
                writer.writerow(["" if row[c] is None else row[c] for c in JOB_COLUMNS])
