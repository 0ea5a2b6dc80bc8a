#!/usr/bin/env python3
"""Flow detection without hints (issue 16): the pattern programs on the 16-host k=4 fat-tree under
no detection, threshold detection, learned detection and hints; median time and detection delay.

    make bench-flowdetect                        # or, under the machine's lock:
    flock /tmp/sdnmpi-mininet.lock .venv/bin/python bench/bench_flowdetect.py [--repeats 3] [--quick]
    .venv/bin/python bench/bench_flowdetect.py --report DIR [DIR ...]   # one table of several runs

One Mininet fabric (FatTreeTopo k=4, userspace OVS, D-mod-K default routes) per controller set-up:
``--sdnmpi-flow-detection none`` (runs "none", and "hints": the program declares each exchange's
sends with SDN_MPI_Flow_hints), ``threshold`` and ``learned``. Every run is one mpirun of
libsdnmpi/tests/traffic_patterns over all 16 hosts under LD_PRELOAD=libsdnmpi-preload.so, so the
job is registered (and released at MPI_Finalize) in every mode. Modes alternate within a repeat.
Mode "learned-noseed" (not run by default) is learned detection on its own fabric whose controller
plans detected pairs from scratch (``--nosdnmpi-flow-seed``), for an A/B of primitives/seeding.py.
Modes "threshold" and "learned" judge windows of --interval (1 s: ``--sdnmpi-flow-span 0``, the
controller's default until 2026-11-30); "learned-slide" (run by default) and "threshold-slide" (not)
poll every 0.5 s with 1-s sliding windows (``--sdnmpi-flow-interval 0.5 --sdnmpi-flow-span 1``, the
controller's default since, whatever --interval), each on its own fabric.
``--interleave`` starts every set-up's fabric at once (each with its own prefix, management subnet
and controller) and runs the modes in turn within each repeat, the first mode rotating from one
repeat to the next, so that a slow spell of a shared machine falls on every mode alike.

Reported per pattern and mode: the program's own time (the sum of its exchanges, pauses excluded;
median over the repeats), the pairs detected and the detection delay in polls (from the
controller's log: polls from a pair's first counted bytes to its flag, both counted). The
threshold and learned controllers log their counters (--sdnmpi-flow-log); each run's slice goes
to counters/PATTERN-MODE-REP.jsonl.gz for ``sdnmpi-sim train-flows --counter-logs``. Results: a
folder flowdetect-STAMP in --out-dir (results.json, results.md, counters/, logs/) and the
markdown table on stdout (docs/flows.md), then, for learned against threshold and against hints,
the ratio of the median times with a 95 % bootstrap interval (benchcore.speedup_interval, from 5
runs a mode).

A run that fails or stalls is recorded (results.json ``failed_runs``: pattern, mode, rep, reason,
output tail, files) and the next one runs; the table counts it ("2 + 1 failed") and its medians are
over the runs that finished. At a stall (--timeout passed) each host's ``ss -tni``, every switch's
flows and ports and the controller's last lines go to logs/PATTERN-MODE-REP-stall-* before mpirun
is killed (bench/flowdetect_runs.py). --max-consecutive-failures failures in a row stop the bench;
the exit status is 1 if any run failed, after results are written.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import bench_common
import benchcore
import emulation
import flowdetect_runs
import host_cc
from flowdetect_fabric import (HOSTS, K, LIB, LLDPD, MGMT_SUBNETS, PREFIXES, PRELOAD, PROGRAM, ROOT, Fabric,
                               setup_args)

from sdnmpi.flows import counterlog
from sdnmpi.mininet_topos.net import ensure_ovs

MODES = ("none", "threshold", "learned", "hints", "learned-noseed", "learned-slide", "threshold-slide")
DEFAULT_MODES = ("none", "threshold", "learned", "learned-slide", "hints")
DETECTION = {"none": "none", "hints": "none", "threshold": "threshold", "learned": "learned",
             "learned-noseed": "learned-noseed", "learned-slide": "learned-slide",
             "threshold-slide": "threshold-slide"}
POLL_S = {"learned-slide": 0.5, "threshold-slide": 0.5}     # a mode's poll interval, s (others: --interval)


MICE_ROUNDS = 10
# "perm-phases": random permutations (traffic_patterns.c's `perm SEED`) back to back, each a new
# set of pairs, chosen where D-mod-K puts 3 flows on one link with the ranks in host order
# (bench/jobroute_report.model_loads; SDN-optimal: 1), so each phase's first polls matter.
PERM_PHASES = (51, 18, 41, 24)
# "perm-phases-paused": the first 3 of them with a compute pause between, long enough for the job to
# go idle (controller/jobidle.py: under 1 Mbit/s for 5 s, port stats every 2 s), so detection
# forgets the last phase's pairs and every phase starts on the default routes.
PAUSED_PHASES, PAUSE_MS = 3, 8000
def patterns(nbytes):
    """{name: program steps}: the job routing issue's patterns (two phases: a shift, a 3 s pause,
    a permutation, each marked with MPI_Pcontrol as phases 1 and 2, as the job routing bench's
    program does: hints go to the rank's current phase and add up in it, so without the marks the
    permutation's hints joined the shift's and that phase ran as on the default routes), then
    "mice" and "halo2d" (not run by default: recorded for training the learned model): MICE_ROUNDS
    small all-to-alls (1/64 of the bytes per pair) 0.5 s apart, every pair busy at a few % of its
    link; a 4 x 4 periodic grid's halo exchange (4 neighbours); and
    "perm-phases" (not run by default): the PERM_PHASES permutations back to back, no pause, as a
    code whose partners change at every phase (a redistribution after each load balancing);
    "perm-phases-paused" (not run by default): the first PAUSED_PHASES of them, PAUSE_MS of
    computation between (the program's time leaves the pauses out). halo3d sends a quarter of
    ``nbytes`` per neighbour and alltoall a 32nd per peer, so that each of the five takes about
    half a minute to a minute on the default 5/5 Mbit/s fabric."""
    b = str(nbytes)
    return {"shift": ["shift", "4", b], "permutation": ["perm", "7", b], "halo3d": ["halo3d", str(max(1, nbytes // 4))],
            "alltoall": ["alltoall", str(max(1, nbytes // 32))],
            "two-phases": ["phase", "1", "shift", "4", b, "phase", "0", "pause", "3000", "phase", "2", "perm", "7", b,
                           "phase", "0"],
            "mice": ["alltoall", str(max(1, nbytes // 64)), "pause", "500"] * MICE_ROUNDS,
            "halo2d": ["halo2d", b],
            "perm-phases": [x for seed in PERM_PHASES for x in ("perm", str(seed), b)],
            "perm-phases-paused": [x for seed in PERM_PHASES[:PAUSED_PHASES]
                                   for x in ("pause", str(PAUSE_MS), "perm", str(seed), b)][2:]}


DEFAULT_PATTERNS = ("shift", "permutation", "halo3d", "alltoall", "two-phases")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/bench_flowdetect.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--repeats", type=int, default=3, help="runs per pattern and mode")
    p.add_argument("--bytes", type=int, default=4 << 20,
                   help="bytes per pair and exchange (halo3d: 1/4, alltoall: 1/32)")
    p.add_argument("--reps", type=int, default=2, help="the program's --reps (each exchange repeated)")
    p.add_argument("--patterns", default=",".join(DEFAULT_PATTERNS),
                   help="comma-separated, of: " + ", ".join(patterns(1)))
    p.add_argument("--modes", default=",".join(DEFAULT_MODES), help="comma-separated: " + ", ".join(MODES))
    p.add_argument("--host-bw", type=float, default=5,
                   help="host links, Mbit/s (5/5 as the job routing bench's k=4 fabric: link-bound on 2 cores; "
                        "at 40/20 this emulation is CPU-bound and routing barely shows)")
    p.add_argument("--fabric-bw", type=float, default=5, help="switch links, Mbit/s")
    p.add_argument("--interval", type=float, default=1.0, help="--sdnmpi-flow-interval, s")
    p.add_argument("--queue-packets", type=int, default=0,
                   help="every rate-limited interface's queue, packets (0: the kernel's, its txqueuelen)")
    p.add_argument("--timeout", type=float, default=300,
                   help="s per mpirun; a run still going then is a stall: its diagnostics go to logs/ and mpirun "
                        "is killed %d s later (a run that ends meanwhile counts)" % flowdetect_runs.DIAG_GRACE_S)
    emulation.add_arguments(p)      # on by default since 2026-11-30 06:00, as in the other benches; runs before: off
    p.add_argument("--cc", choices=host_cc.CHOICES, default=None,
                   help="the hosts' TCP congestion control (per network namespace; default: the machine's; "
                        "cubic is put on tcp_allowed_congestion_control for the run: bench/host_cc.py)")
    p.add_argument("--preconnect", action="store_true",
                   help="Open MPI opens every rank pair's connection in MPI_Init (mpi_preconnect_mpi), before the "
                        "timed exchanges, instead of at a pair's first message")
    p.add_argument("--sockets-every", type=float, default=0, metavar="S",
                   help="every S s of a run, each host's `ss -tni` to logs/PATTERN-MODE-REP-sockets.txt (0: never)")
    p.add_argument("--max-consecutive-failures", type=int, default=flowdetect_runs.MAX_CONSECUTIVE_FAILURES,
                   metavar="N", help="a failed run is recorded and the next one runs; N failed runs in a row stop "
                                     "the bench (the fabric is probably broken); 0: never")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    p.add_argument("--model", default="", help="--sdnmpi-flow-model for the learned runs (default: shipped)")
    p.add_argument("--interleave", action="store_true",
                   help="every set-up's fabric at once, the modes in turn within each repeat (see above)")
    p.add_argument("--dry-run", action="store_true", help="print the fabrics and the runs in order; run nothing")
    p.add_argument("--stop-after", type=float, default=0, metavar="S",
                   help="start no run once S seconds have passed since the start (0: no limit); the runs "
                        "done are reported, and the table says how many were skipped")
    p.add_argument("--quick", action="store_true", help="permutation and two-phases, 1 repeat (make bench QUICK=1)")
    p.add_argument("--report", nargs="+", metavar="DIR", help="print one table of these results folders; run nothing")
    args = p.parse_args(argv)
    if args.quick:
        args.patterns, args.repeats = "permutation,two-phases", 1
    args.patterns = [x for x in args.patterns.split(",") if x]
    args.modes = [x for x in args.modes.split(",") if x]
    bad = [x for x in args.patterns if x not in patterns(1)] + [x for x in args.modes if x not in MODES]
    if bad or args.repeats < 1 or args.bytes < 1 or args.reps < 1 or args.max_consecutive_failures < 0:
        p.error("unknown pattern/mode %s or a count below 1" % ", ".join(bad))
    if args.sockets_every < 0:
        p.error("--sockets-every must be >= 0")
    if args.queue_packets < 0:
        p.error("--queue-packets must be >= 0")
    if args.queue_packets and args.ack_class == "on":
        p.error("--queue-packets and --ack-class on both set the links' queues: choose one")
    return args


def schedule(modes, pattern_names, repeats, interleave=False):
    """[(detection set-ups, [(rep, pattern, mode), ...]), ...]: the fabrics to start together and
    the runs on them, in order (reps from 1). By default one block per set-up, in the order of
    ``modes`` (its modes alternate within each repeat); with ``interleave`` one block of every
    set-up, where repeat r runs the modes from the (r-1)-th on (mod their number), so every mode is
    first, second, ... about equally often."""
    blocks = []
    setups = list(dict.fromkeys(DETECTION[m] for m in modes))
    if interleave:
        runs = [(rep + 1, p, modes[(rep + k) % len(modes)])
                for rep in range(repeats) for p in pattern_names for k in range(len(modes))]
        return [(setups, runs)] if runs else []
    for detection in setups:
        mine = [m for m in modes if DETECTION[m] == detection]
        blocks.append(([detection], [(rep + 1, p, m) for rep in range(repeats) for p in pattern_names for m in mine]))
    return blocks


def plan_text(args):
    """What a run of ``args`` would do (--dry-run): per block its fabrics, then its runs."""
    lines, steps = [], patterns(args.bytes)
    for detections, runs in schedule(args.modes, args.patterns, args.repeats, args.interleave):
        lines.append("fabrics at once: " + ", ".join(
            "%s (--sdnmpi-flow-detection %s, prefix %s, management %s)" % (
                "/".join(m for m in args.modes if DETECTION[m] == d), " ".join((setup_args(d)[0],) + setup_args(d)[1]),
                PREFIXES[i], MGMT_SUBNETS[i])
            for i, d in enumerate(detections)))
        lines += ["  %s %s #%d: traffic_patterns --reps %d %s" % (p, m, rep, args.reps, " ".join(steps[p]))
                  for rep, p, m in runs]
    return "\n".join(lines)


def add_counter_scores(results, folder, rescore=False):
    """Each detection run's `counterlog.score` from its counter log in ``folder`` (if there); with
    ``rescore`` also for runs that hold one (scored by the current label). A log it cannot read
    (version 1 and 2 are read) gives the run ``counters_error`` (one line, also on stderr) instead."""
    for p, by_mode in results.items():
        for mode, runs in by_mode.items():
            for index, run in enumerate(runs, 1):
                rep = run.get("rep", index)        # results from before failed runs were recorded: in order
                path = os.path.join(folder, "counters", "%s-%s-%d.jsonl.gz" % (p, mode, rep))
                if ("counters" not in run or rescore) and os.path.exists(path):
                    try:
                        run["counters"] = counterlog.from_file(path, counterlog.score)
                    except counterlog.CounterLogError as exc:
                        run.pop("counters", None)
                        run["counters_error"] = str(exc)
                        print("bench_flowdetect: %s" % run["counters_error"], file=sys.stderr)


def summary(results, pattern_names, modes, failed=()):
    """The markdown table. Detection columns from the runs' counter logs (elephants: a whole
    interval at >= 10 % of the host link, as counted; delay from its start, `counterlog.label`).
    With ``failed`` runs (records of `flowdetect_runs.run_blocks`) "runs" reads "2 + 1 failed":
    medians and columns are over the runs that finished ("-" where none did)."""
    rows = ["| pattern | mode | runs | median s | vs none | vs hints | pairs flagged (median) "
            "| elephants (counters) | precision | delay from the label's start: median, polls | max "
            "| within 2 polls |",
            "|" + "---|" * 12]

    def median_of(p, mode):
        runs = results.get(p, {}).get(mode)
        return statistics.median(r["seconds"] for r in runs) if runs else None

    def versus(med, base):
        return "%+.0f %%" % (100 * (med / base - 1)) if base and med is not None else "-"

    for p in pattern_names:
        for mode in modes:
            runs = results.get(p, {}).get(mode, [])
            lost = sum(1 for r in failed if (r["pattern"], r["mode"]) == (p, mode))
            if not runs and not lost:
                continue
            med = median_of(p, mode)
            scored = [r["counters"] for r in runs if "counters" in r]
            delays = [d for s in scored for d in s["delays"]]
            elephants = sum(s["elephants"] for s in scored)
            flagged = sum(s["flagged"] for s in scored)
            rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                p, mode, "%d + %d failed" % (len(runs), lost) if lost else len(runs),
                "%.2f" % med if runs else "-", versus(med, median_of(p, "none")), versus(med, median_of(p, "hints")),
                statistics.median(len(r["detected"]) for r in runs) if runs and DETECTION[mode] != "none"
                else "-",
                elephants if scored else "-",
                "%.2f" % (sum(s["true_flags"] for s in scored) / flagged) if flagged else "-",
                statistics.median(delays) if delays else "-", max(delays) if delays else "-",
                "%.0f %%" % (100 * sum(s["within_2"] for s in scored) / elephants) if elephants else "-"))
    return "\n".join(rows)


RATIOS = (("learned", "threshold"), ("learned", "hints"), ("threshold", "hints"), ("learned", "learned-noseed"),
          ("learned-noseed", "hints"), ("learned-slide", "hints"), ("learned-slide", "learned"),
          ("threshold-slide", "hints"), ("learned-slide", "threshold-slide"))


def ratio_lines(results, pattern_names):
    """Per pattern, for each of RATIOS whose modes both ran: the ratio of the median times (< 1: the
    first mode faster) and its 95 % bootstrap interval (benchcore.speedup_interval: both modes' runs
    resampled; none under 5 runs a mode). An interval wholly under 1 is "faster beyond the noise"."""
    lines = []
    for p in pattern_names:
        for a, b in RATIOS:
            ta = [r["seconds"] for r in results.get(p, {}).get(a, [])]
            tb = [r["seconds"] for r in results.get(p, {}).get(b, [])]
            if not ta or not tb:
                continue
            ratio = statistics.median(ta) / statistics.median(tb)
            iv = benchcore.speedup_interval({"samples_s": ta}, {"samples_s": tb})
            verdict = "no interval (under %d runs a mode)" % benchcore.INTERVAL_MIN_SAMPLES if iv is None else \
                "95 %% interval %.3f-%.3f: %s" % (iv[0], iv[1], "faster beyond the noise" if iv[1] < 1 else
                                                   "slower beyond the noise" if iv[0] > 1 else "not resolved")
            lines.append("- %s: %s / %s median time %.3f (%+.1f %%; %d and %d runs), %s" % (
                p, a, b, ratio, 100 * (ratio - 1), len(ta), len(tb), verdict))
    return "\n".join(lines)


def delay_lines(results, pattern_names, modes, interval):
    """Per pattern and detection mode: the controller's flag delays (its log's "after N polls": polls
    from a pair's first counted bytes to its flag, both counted) over every run, in polls and in
    seconds (N x the mode's poll interval: `POLL_S`, else ``interval``)."""
    lines = []
    for p in pattern_names:
        for mode in modes:
            delays = [d[2] for r in results.get(p, {}).get(mode, []) for d in r.get("detected", [])]
            if DETECTION[mode] == "none" or not delays:
                continue
            poll = POLL_S.get(mode, interval)
            median = statistics.median(delays)
            lines.append("- %s %s: %d flags, delay from the first counted bytes (the controller's log) median "
                         "%g polls (%.2f s), p90 %g (%.2f s), max %d (%.2f s) at %g s polls"
                         % (p, mode, len(delays), median, poll * median, _p90(delays), poll * _p90(delays),
                            max(delays), poll * max(delays), poll))
    return "\n".join(lines)


def _p90(values):
    return sorted(values)[min(len(values) - 1, int(0.9 * len(values)))]


def tables(results, pattern_names, modes, failed=(), interval=1.0):
    """The results' markdown: `summary`'s table, the failed runs (`flowdetect_runs.failures_md`),
    the runs past --timeout (`flowdetect_runs.late_md`), then `ratio_lines` (over the runs that
    finished) and `delay_lines` (``interval``: --interval, the poll of the modes without their own)."""
    lost = flowdetect_runs.failures_md(failed)
    return "\n\n".join(x for x in (summary(results, pattern_names, modes, failed), lost,
                                    flowdetect_runs.late_md(results), ratio_lines(results, pattern_names),
                                    delay_lines(results, pattern_names, modes, interval)) if x)


def report(folders):
    """One table over the results.json of ``folders`` (runs of the same pattern and mode pooled; the
    detection columns scored again from the counter logs by the current label; failed runs pooled,
    and each folder's early stop, if any, said)."""
    results, names, modes, failed, stops, interval = {}, [], [], [], [], None
    for folder in folders:
        path = os.path.join(folder, "results.json") if os.path.isdir(folder) else folder
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as exc:
            raise SystemExit("bench_flowdetect: %s: %s" % (path, exc))
        add_counter_scores(doc["results"], os.path.dirname(path), rescore=True)
        interval = interval or doc.get("args", {}).get("interval")
        failed += doc.get("failed_runs", [])         # none in results from before they were recorded
        stops += ["%s: stopped early: %s" % (folder, doc["error"])] if doc.get("error") else []
        for p, by_mode in doc["results"].items():
            names += [p] if p not in names else []
            for mode, runs in by_mode.items():
                modes += [mode] if mode not in modes else []
                results.setdefault(p, {}).setdefault(mode, []).extend(runs)
        for r in doc.get("failed_runs", []):
            names += [r["pattern"]] if r["pattern"] not in names else []
            modes += [r["mode"]] if r["mode"] not in modes else []
    return "\n\n".join([tables(results, names, [m for m in MODES if m in modes], failed, interval or 1.0)] + stops)


def past_stop(args, started):
    """True once --stop-after (seconds; 0: never) has passed since ``started`` (time.monotonic)."""
    return bool(args.stop_after) and time.monotonic() - started >= args.stop_after


def run_schedule(args, steps, log_dir, counter_dir, started):
    """Runs `schedule`'s blocks (`flowdetect_runs.run_blocks`): (results {pattern: {mode: [run,
    ...]}}, failed runs, runs skipped, the error that stopped it or None, runs not run after it).
    Each block's fabrics start together and close at its end; no run starts past --stop-after; a
    failed run is recorded and the next one runs; --max-consecutive-failures failed runs in a row,
    or a fabric that does not start, stop it, keeping what ran."""
    def start_fabric(i, detection):
        print("# controller --sdnmpi-flow-detection %s: %s" % (
            detection, ", ".join(m for m in args.modes if DETECTION[m] == detection)), file=sys.stderr)
        return Fabric(args, detection, log_dir, PREFIXES[i], MGMT_SUBNETS[i])

    def run_one(fabric, rep, p, mode):
        tags = {"pattern": p, "mode": mode, "rep": rep, "steps": steps[p]}
        seconds, found = fabric.run(args, steps[p], hints=(mode == "hints"), tags=tags,
                                    counters_to=os.path.join(counter_dir, "%s-%s-%d.jsonl.gz" % (p, mode, rep)))
        print("%s %s #%d: %.2f s, %d detected" % (p, mode, rep, seconds, len(found)), file=sys.stderr)
        record = {"seconds": seconds, "detected": found, "exchanges": getattr(fabric, "last_exchanges", [])}
        if getattr(fabric, "last_stall", None):       # ended between --timeout and the kill
            record["past_timeout_files"] = fabric.last_stall
        return record

    return flowdetect_runs.run_blocks(
        schedule(args.modes, args.patterns, args.repeats, args.interleave), DETECTION, start_fabric, run_one,
        lambda: time.monotonic() - started, lambda: past_stop(args, started), args.max_consecutive_failures,
        log=lambda line: print(line, file=sys.stderr))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.report:
        print(report(args.report))
        return 0
    if args.dry_run:
        print(plan_text(args))
        return 0
    res = subprocess.run(["make", "-C", LIB, "tests/traffic_patterns", "libsdnmpi-preload.so"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("bench_flowdetect: building the pattern program failed: %s" % res.stderr.strip()[-500:])
    for path in (PROGRAM, PRELOAD, LLDPD):
        if not os.path.exists(path):
            raise SystemExit("bench_flowdetect: %s missing (make setup)" % path)
    ensure_ovs()
    os.makedirs(args.out_dir, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    software = bench_common.software_versions()      # the code as the run starts
    folder = os.path.join(args.out_dir, "flowdetect-%s" % stamp)
    log_dir, counter_dir = os.path.join(folder, "logs"), os.path.join(folder, "counters")
    os.makedirs(log_dir, exist_ok=True)
    os.makedirs(counter_dir, exist_ok=True)
    steps = patterns(args.bytes)
    started = time.monotonic()
    results, failed, skipped, error, not_run = run_schedule(args, steps, log_dir, counter_dir, started)
    for run in failed + [r for by_mode in results.values() for runs in by_mode.values() for r in runs]:
        for key in ("files", "past_timeout_files"):      # relative to the results folder
            if key in run:
                run[key] = [os.path.relpath(x, folder) for x in run[key]]
    doc = {"schema": 1, "started": stamp, "command": [sys.executable] + sys.argv, "wall_s": time.monotonic() - started,
           "args": {k: v for k, v in vars(args).items()}, "patterns": {p: steps[p] for p in args.patterns},
           "fabric": {"k": K, "hosts": HOSTS, "host_mbit": args.host_bw, "fabric_mbit": args.fabric_bw},
           "skipped_runs": skipped, "error": error, "not_run": not_run, "failed_runs": failed, "results": results,
           "software": software}
    add_counter_scores(results, folder)
    path = os.path.join(folder, "results.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    table = "sdnmpi %s\n\n" % (doc["software"]["sdnmpi_git"] or "(no git commit found)")
    table += tables(results, args.patterns, args.modes, failed, args.interval)
    tail = flowdetect_runs.failures_md((), skipped, args.stop_after, error, not_run)
    table += "\n\n" + tail if tail else ""
    with open(os.path.join(folder, "results.md"), "w", encoding="utf-8") as f:
        f.write(table + "\n")
    print(table)
    print("results: %s (controller logs: %s, counter logs: %s)" % (path, log_dir, counter_dir))
    return 1 if error or failed else 0


if __name__ == "__main__":
    sys.exit(main())
