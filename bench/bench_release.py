#!/usr/bin/env python3
"""A wrong profile against no profile and the right one, on Mininet (issues 15 and 16): how long the
pattern takes, and when flow detection releases the wrong profile's routes
(controller/flowdetect.py `_check_declared`, docs/flows.md "A declaration that does not match the
live traffic").

    flock /tmp/sdnmpi-mininet.lock .venv/bin/python bench/bench_release.py [--rounds 3] [--bytes 6291456]
        [--live "perm 10"] [--wrong "shift 1"] [--out-dir bench/results]

The job routing bench's 8-host 2:1 leaf-spine, placement and machinery (bench_jobroute_mininet:
RouteBench, its emulation choices and bounded MPI transport; D-mod-K default routes), one
controller with threshold flow detection (``--sdnmpi-flow-interval`` INTERVAL) and dynamic phase
detection off, so a job's routes go only by the mismatch check. The pattern program runs the live
pattern (no phase markers: a trace of it is one whole-run demand, installed at MPI_Init). Two
profiled runs give the traces: the live pattern's ("right") and another pattern's ("wrong", whose
sdn-optimal routes, installed because they beat D-mod-K on its own pairs, put two of the live
pattern's flows on one link where D-mod-K puts one). Each round runs, in a rotated order:

- wrong: SDN_MPI_TRAFFIC=<the wrong trace> (sdn-optimal), withdrawn after MISMATCH_S (3 s) of polls
  (then detection routes the job's elephants, as under none);
- none: no profile (detection routes the elephants it finds);
- right: SDN_MPI_TRAFFIC=<the live pattern's trace> (sdn-optimal), never released.

Per run: the program's own time of the pattern, mpirun's wall time, and for each release of the
job (GET /sdnmpi/flowdetect `released`) the polls from the first poll that saw the job registered
and the seconds from mpirun's start. Results: bench/results/release-STAMP/ (results.json,
results.md, logs/).
"""
import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_jobroute_mininet as bjm  # noqa: E402
from bench_common import HERE, FABRIC_SUBNET, write_json  # noqa: E402

CONDITIONS = ("wrong", "none", "right")
INTERVAL = 1.0


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/bench_release.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--live", default="perm 10", help="the pattern the job runs: 'shift D' or 'perm SEED'")
    p.add_argument("--wrong", default="shift 1", help="the pattern of the wrong profile")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each running every condition once")
    p.add_argument("--bytes", type=int, default=6 << 20, help="bytes per pair and repetition")
    p.add_argument("--reps", type=int, default=2, help="traffic_patterns --reps")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args, rest = p.parse_known_args(argv)
    if args.rounds < 1 or args.bytes < 1 or args.reps < 1:
        p.error("--rounds, --bytes and --reps must be >= 1")
    # the job routing bench's options (emulation, MPI transport) at their defaults, or as given
    args.jr = bjm.parse_args(["--fabrics", "leafspine", "--prefix", "rl", "--mgmt-subnet", "172.31.0.0/16"] + rest)
    return args


def program(args, pattern, nbytes):
    name, value = pattern.split()
    return [bjm.PATTERNS, "--reps", str(args.reps), name, value, str(nbytes)]


def run(bench, args, pattern, env, lib, log):
    """(record, mpirun start time): one mpirun of ``pattern`` with ``lib`` preloaded."""
    wdir = tempfile.mkdtemp(prefix="rl-", dir=bench.fabric.tmpdir)
    prog = program(args, pattern, args.bytes)
    started = time.time()
    rc, out, wall, _stopped = bench.mpirun(prog, env, lib, args.jr.job_timeout, wdir=wdir)
    log.write("$ %s\n%s\n[rc %s, %.1f s]\n" % (" ".join(prog), out, rc, wall))
    log.flush()
    parsed = bjm.parse_patterns(out) if rc == 0 else None
    if parsed is None:
        raise RuntimeError("%s failed (rc %s): see %s" % (pattern, rc, log.name))
    return {"rc": rc, "wall_s": wall, "seconds": parsed["total"]["seconds"],
            "traffic_lines": [ln for ln in out.splitlines() if "traffic phase=" in ln][:4]}, started


def profile(bench, args, pattern, trace_dir, log):
    name = pattern.replace(" ", "-")
    env = {"SDN_MPI_PROF_DIR": trace_dir, "SDN_MPI_PROF_JOB": name, "SDN_MPI_PROF_SOURCE": "pmpi"}
    run(bench, args, pattern, env, bjm.PROF, log)
    path = os.path.join(trace_dir, name + ".tar.gz")
    if not os.path.isfile(path):
        raise RuntimeError("profiling %s left no trace: see %s" % (pattern, log.name))
    return path


def one(bench, args, condition, traces, log):
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (bench.fabric.mgmt.root_ip, bench.ports["rpc"]),
           "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET, "SDN_MPI_VERBOSE": "1", **bjm.NO_COLLECTIVES}
    if condition != "none":
        env.update({"SDN_MPI_TRAFFIC": traces[condition], "SDN_MPI_TRAFFIC_PLANNER": "sdn-optimal"})
    before = bench.ctl.rest("/sdnmpi/flowdetect")
    seen = {(e["job"], e["poll"]) for e in before["released"]}
    rec, started = run(bench, args, args.live, env, bjm.PRELOAD, log)
    if not bench.wait_no_jobs(timeout=30):
        raise RuntimeError("the controller still holds a job 30 s after the run")
    after = bench.ctl.rest("/sdnmpi/flowdetect")
    rec["releases"] = [dict(e, seconds_from_start=e["time"] - started) for e in after["released"]
                       if (e["job"], e["poll"]) not in seen]
    rec["counters"] = {k: v - before["counters"].get(k, 0) for k, v in after["counters"].items()
                       if v != before["counters"].get(k, 0)}
    return rec


def markdown(doc):
    rows = ["| condition | runs | pattern s (median) | each run | mpirun wall s (median) | released in | "
            "release: polls since seen | release: s from mpirun start |", "|" + "---|" * 8]
    for c in CONDITIONS:
        runs = doc["runs"].get(c, [])
        if not runs:
            continue
        rel = [e for r in runs for e in r["releases"]]
        rows.append("| %s | %d | %.2f | %s | %.1f | %d of %d | %s | %s |" % (
            c, len(runs), statistics.median(r["seconds"] for r in runs),
            ", ".join("%.2f" % r["seconds"] for r in runs), statistics.median(r["wall_s"] for r in runs),
            sum(1 for r in runs if r["releases"]), len(runs),
            ", ".join(str(e["polls_since_seen"]) for e in rel) or "-",
            ", ".join("%.1f" % e["seconds_from_start"] for e in rel) or "-"))
    return "\n".join(rows) + "\n"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0 or not bjm.build_programs():
        print("bench_release.py needs root and the built programs (make setup)", file=sys.stderr)
        return 2
    from sdnmpi.mininet_topos.net import ensure_ovs
    ensure_ovs()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = os.path.join(args.out_dir, "release-" + stamp)
    work, trace_dir = os.path.join(out_dir, "logs"), os.path.join(out_dir, "traces")
    os.makedirs(work)
    os.makedirs(trace_dir)
    spec = bjm.fabric_spec("leafspine", args.jr)
    doc = {"schema": 1, "started": stamp, "command": [sys.executable] + sys.argv,
           "load_at_start": os.getloadavg(), "live": args.live, "wrong": args.wrong, "bytes": args.bytes,
           "reps": args.reps, "interval_s": INTERVAL,
           "fabric": {k: spec[k] for k in ("hosts", "host_bw", "fabric_bw", "placement")}, "runs": {}}
    bench = bjm.RouteBench(spec, args.jr, work)
    t0 = time.monotonic()
    try:
        bench.start_controller("dmodk", extra=(
            "--sdnmpi-flow-detection", "threshold", "--sdnmpi-flow-interval", str(INTERVAL),
            "--sdnmpi-link-capacity", str(spec["host_bw"] * 1e6)))
        bench.start_fabric()
        bench.wait_ready(args.jr.discovery_timeout)
        with open(os.path.join(work, "runs.log"), "w") as log:
            traces = {"wrong": profile(bench, args, args.wrong, trace_dir, log),
                      "right": profile(bench, args, args.live, trace_dir, log)}
            for rnd in range(args.rounds):
                for c in CONDITIONS[rnd % 3:] + CONDITIONS[:rnd % 3]:
                    rec = one(bench, args, c, traces, log)
                    doc["runs"].setdefault(c, []).append(dict(rec, round=rnd))
                    print("round %d %s: %.2f s, releases %s" % (rnd + 1, c, rec["seconds"], [
                        (e["polls_since_seen"], round(e["seconds_from_start"], 1)) for e in rec["releases"]]), flush=True)
                    write_json(os.path.join(out_dir, "results.json"), doc)
    finally:
        bench.stop_controller()
        bench.stop_fabric()
    doc["wall_s"] = time.monotonic() - t0
    doc["load_at_end"] = os.getloadavg()
    write_json(os.path.join(out_dir, "results.json"), doc)
    text = markdown(doc)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write("%s (wrong profile: %s), %d rounds, 1-min load %.1f at start, %.1f at end\n\n%s" % (
            args.live, args.wrong, args.rounds, doc["load_at_start"][0], doc["load_at_end"][0], text))
    print(text + "results: %s" % out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
