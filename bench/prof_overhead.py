#!/usr/bin/env python3
"""The traffic profiler's overhead: point-to-point latency and bandwidth between two ranks on this
machine, with and without LD_PRELOAD=libsdnmpi_prof.so, 8 B to 4 MiB; prints a markdown table.

    make bench-prof                               # or:
    .venv/bin/python bench/prof_overhead.py [--reps 7] [--seconds 0.2] [--btl vader|tcp]

Runs alternate (baseline, profiled, baseline, ...) so that drifts of a shared machine hit both
sides alike. Each run of libsdnmpi/tests/prof_pingpong measures every size for --seconds (half
ping-pong latency, half a windowed bandwidth test). Per size and side, the median over the runs;
the 95 % intervals are bootstrap intervals of the ratio of medians (benchcore.speedup_interval).
"""
import argparse
import os
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


def interval_pct(base, prof, invert):
    """95 % interval of the profiled side's cost in percent: latency overhead (prof/base - 1) or,
    with invert, bandwidth loss (1 - prof/base); from bootstrap ratios of medians."""
    if invert:  # bandwidth: base/prof of times = prof_bw/base_bw
        ci = benchcore.speedup_interval({"samples_s": [1 / b for b in base]}, {"samples_s": [1 / p for p in prof]})
        return None if ci is None else ((1 - ci[1]) * 100, (1 - ci[0]) * 100)
    ci = benchcore.speedup_interval({"samples_s": base}, {"samples_s": prof})
    return None if ci is None else ((1 / ci[1] - 1) * 100, (1 / ci[0] - 1) * 100)


def table(samples, sizes):
    """The markdown table from samples[side][size] = [(lat, bw), ...]."""
    med = benchcore.statistics.median
    rows = ["| size | latency (us) | with profiler | overhead [95 % CI] | bandwidth (MB/s) | with profiler "
            "| loss [95 % CI] |", "|---:|---:|---:|---|---:|---:|---|"]
    for size in sizes:
        b_lat = [s[0] for s in samples[False][size]]
        p_lat = [s[0] for s in samples[True][size]]
        b_bw = [s[1] for s in samples[False][size]]
        p_bw = [s[1] for s in samples[True][size]]
        lat_ci, bw_ci = interval_pct(b_lat, p_lat, False), interval_pct(b_bw, p_bw, True)
        fmt_ci = lambda ci: "" if ci is None else " [%+.1f, %+.1f]" % ci  # noqa: E731
        rows.append("| %s | %.2f | %.2f | %+.1f %%%s | %.0f | %.0f | %+.1f %%%s |" % (
            benchcore.fmt_bytes(size), med(b_lat) * 1e6, med(p_lat) * 1e6, (med(p_lat) / med(b_lat) - 1) * 100,
            fmt_ci(lat_ci), med(b_bw) / 1e6, med(p_bw) / 1e6, (1 - med(p_bw) / med(b_bw)) * 100, fmt_ci(bw_ci)))
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="runs per side (default 7)")
    parser.add_argument("--seconds", type=float, default=0.2, help="seconds per size and run (default 0.2)")
    parser.add_argument("--btl", choices=("vader", "tcp"), default="vader",
                        help="Open MPI transport between the two ranks (default vader, shared memory)")
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=4 << 20)
    parser.add_argument("--scratch", default="/tmp/sdnmpi-prof-bench", help="where the profiled runs' traces go")
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
