#!/usr/bin/env python3
"""The traffic profiler's overhead: point-to-point latency and bandwidth between two ranks on this
machine, with and without LD_PRELOAD=libsdnmpi_prof.so, 8 B to 4 MiB; prints a markdown table.

    make bench-prof                               # or:
    .venv/bin/python bench/prof_overhead.py [--reps 7] [--seconds 0.2] [--btl vader|tcp]

Runs alternate (baseline, profiled, baseline, ...) so that drifts of a shared machine hit both
sides alike. Each run of libsdnmpi/tests/prof_pingpong measures every size for --seconds (half
ping-pong latency, half a windowed bandwidth test) and reports its fastest batch. Per size and
side the table gives the best run, and the cost computed from the medians over the runs.
"""
import argparse
import os
import statistics
import subprocess
import sys

import benchcore

LIB = os.path.join(benchcore.ROOT, "libsdnmpi")
PINGPONG = os.path.join(LIB, "tests", "prof_pingpong")
PROF = os.path.join(LIB, "libsdnmpi_prof.so")


def run_once(args, profiled):
    """{bytes: (latency_s, bandwidth_Bps)} of one prof_pingpong run."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "-np", "2", "--bind-to", "none", "--mca", "btl", "self,%s" % args.btl]
    if profiled:
        cmd += ["-x", "LD_PRELOAD=%s" % PROF, "-x", "SDN_MPI_PROF_DIR=%s" % args.scratch]
    cmd += [PINGPONG, str(args.min_bytes), str(args.max_bytes), str(args.seconds)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise SystemExit("prof_overhead: %s failed (rc %d): %s" % (PINGPONG, res.returncode,
                                                                   res.stderr.strip()[-500:]))
    out = {}
    for line in res.stdout.splitlines():
        size, lat_us, bw_mbs = line.split()
        out[int(size)] = (float(lat_us) * 1e-6, float(bw_mbs) * 1e6)
    return out


def pct(base, prof, higher_is_better):
    """The profiled side's cost in percent: latency overhead or bandwidth loss."""
    return (1 - prof / base) * 100 if higher_is_better else (prof / base - 1) * 100


def table(samples, sizes):
    """The markdown table from samples[profiled][size] = [(lat, bw), ...]: per side the best run
    (lowest latency, highest bandwidth: preemption by other processes only ever makes a run
    slower) and, for the spread, the cost computed from the medians over the runs."""
    med = statistics.median
    rows = ["| size | latency (us) | with profiler | overhead | bandwidth (MB/s) | with profiler | loss "
            "| overhead, medians | loss, medians |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in sizes:
        b_lat, p_lat = ([s[0] for s in samples[side][size]] for side in (False, True))
        b_bw, p_bw = ([s[1] for s in samples[side][size]] for side in (False, True))
        rows.append("| %s | %.3f | %.3f | %+.1f %% | %.0f | %.0f | %+.1f %% | %+.1f %% | %+.1f %% |" % (
            benchcore.fmt_bytes(size), min(b_lat) * 1e6, min(p_lat) * 1e6, pct(min(b_lat), min(p_lat), False),
            max(b_bw) / 1e6, max(p_bw) / 1e6, pct(max(b_bw), max(p_bw), True),
            pct(med(b_lat), med(p_lat), False), pct(med(b_bw), med(p_bw), True)))
    return "\n".join(rows)


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9, help="runs per side (default 9)")
    parser.add_argument("--seconds", type=float, default=0.4, help="seconds per size and run (default 0.4)")
    parser.add_argument("--btl", choices=("vader", "tcp"), default="vader",
                        help="Open MPI transport between the two ranks (default vader, shared memory)")
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=4 << 20)
    parser.add_argument("--scratch", default="/tmp/sdnmpi-prof-bench", help="where the profiled runs' traces go")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.reps < 1 or args.seconds <= 0 or not 0 < args.min_bytes <= args.max_bytes:
        parser.error("--reps >= 1, --seconds > 0 and 0 < --min-bytes <= --max-bytes")
    subprocess.run(["make", "-s", "-C", LIB, "libsdnmpi_prof.so", "tests/prof_pingpong"], check=True)
    os.makedirs(args.scratch, exist_ok=True)
    samples = {False: {}, True: {}}
    for rep in range(args.reps):
        for profiled in (False, True):
            for size, value in run_once(args, profiled).items():
                samples[profiled].setdefault(size, []).append(value)
        print("run %d/%d done" % (rep + 1, args.reps), file=sys.stderr)
    sizes = sorted(samples[False])
    print("Point-to-point between 2 ranks, Open MPI btl %s, %d runs per side, %.2f s per size and run; "
          "profiler source pmpi.\n" % (args.btl, args.reps, args.seconds))
    print(table(samples, sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
