"""`make bench`: Open MPI's collectives against sdnmpi's on an emulated fat-tree, in one run.

bench/run.py's command line: its options and main() (the first line above is --help's description)."""

import argparse
import datetime
import logging
import os
import re
import signal
import sys
import traceback

from bench_common import (FABRIC_SUBNET, FULL, HERE, LOG, Progress, QUICK, ROOT, ROUTINGS, write_json, build_programs,
                       coll_tuned_settings, csv_list, fmt_duration, mbit, now_s, run_text,
                       software_versions)
from bench_flows import BENCH_COOKIE, PRIORITY_OVERRIDE
from bench_fabric import Bench
from bench_limits import SDN_ALGS, finish_cpu_check, bcast_rate, bcast_trees, plan_jobs
from bench_jobs import run_all, sdn_env
import bench_rates
import bench_rotate
import benchcore
import emulation
import planner_scale
import report

DEFAULT_RATES = (30, 15)   # --host-bw, --fabric-bw Mbit/s without --rates link-bound


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a subset that finishes in about 5 minutes (fewer sizes, reps, bcast configs)")
    g = parser.add_argument_group("fabric")
    g.add_argument("--spines", type=int, default=2)
    g.add_argument("--leaves", type=int, default=4)
    g.add_argument("--hosts-per-leaf", type=int, default=2)
    # 30/15 rather than the 40/20 of `make demo`: on this 2-core machine with userspace OVS, 40/20
    # fails the bottleneck check's parallel part even when the machine is quiet (docs/bench-notebook.md).
    g.add_argument("--host-bw", type=mbit, help="host links, Mbit/s (0: unlimited) (%g)" % DEFAULT_RATES[0])
    g.add_argument("--fabric-bw", type=mbit, help="leaf-spine links, Mbit/s (0: unlimited) (%g)" % DEFAULT_RATES[1])
    g.add_argument("--rates", choices=("fixed", "link-bound"), default="fixed",
                   help="fixed: --host-bw/--fabric-bw; link-bound: before the jobs, probe the fabric under a "
                        "job-like load at each rung of --rate-ladder, fastest first, and run at the first one where "
                        "the links, not ovs-vswitchd, limit the traffic (the bottleneck check's 4th criterion; "
                        "bench/README.md, \"Link rates chosen per machine\")")
    g.add_argument("--rate-ladder", default=bench_rates.DEFAULT_LADDER, metavar="H/F,...",
                   help="--rates link-bound: host/fabric Mbit/s per rung, fastest first")
    g.add_argument("--rate-probe-seconds", type=int, default=bench_rates.DEFAULT_SECONDS,
                   help="--rates link-bound: each rung's TCP streams run this long (after a 1-s start)")
    g.add_argument("--rate-probe-all", action="store_true",
                   help="--rates link-bound: probe every rung, not only until one is link-bound (for the record; "
                        "the choice is the same)")
    g = parser.add_argument_group("what to measure (defaults: full run; --quick changes them)")
    g.add_argument("--collectives", default="init,startup,allreduce,bcast")
    g.add_argument("--routings", help="default routing policies for allreduce (%s)" % FULL["routings"])
    g.add_argument("--placements", help="rank placements for allreduce (%s)" % FULL["placements"])
    g.add_argument("--allreduce-sizes", help="bytes: list or LO..HI powers of two (%s)" % FULL["allreduce_sizes"])
    g.add_argument("--allreduce-nprocs", default="all", help="process counts: list, 'all', 'pow2'")
    g.add_argument("--more-sizes", default="64k,1m,4m",
                   help="allgather, reduce, alltoall (opt-in via --collectives): bytes per rank (64k,1m,4m)")
    g.add_argument("--more-nprocs", default="all", help="their process counts: list, 'all', 'pow2' (all)")
    g.add_argument("--bcast-sizes", help="(%s)" % FULL["bcast_sizes"])
    g.add_argument("--bcast-nprocs", help="(%s: 2, 4, 8, ... up to the hosts)" % FULL["bcast_nprocs"])
    g.add_argument("--bcast-routings", help="(%s)" % FULL["bcast_routings"])
    g.add_argument("--bcast-placements", help="(%s)" % FULL["bcast_placements"])
    g.add_argument("--bcast-roots", default="auto",
                   help="bcast roots: 'auto' (rank 0 and the first rank on another leaf) or ranks, e.g. 0")
    g.add_argument("--reps", type=int, help="timed calls per implementation and point (%d)" % FULL["reps"])
    g.add_argument("--tiny-reps", type=int, help="8-byte allreduce calls per implementation (%d)" % FULL["tiny_reps"])
    g.add_argument("--tiny-block", type=int, help="8-byte calls per block between switches (%d)" % FULL["tiny_block"])
    g.add_argument("--tiny-idle-ms", type=int,
                   help="after the route switch before a block of 8-byte calls: the settle calls, then all ranks "
                        "idle this long, so that the switch's slow calls pass outside the block (%d)"
                   % FULL["tiny_idle_ms"])
    g.add_argument("--point-seconds", type=float,
                   help="allreduce: per repetition and point, each implementation makes back-to-back calls "
                        "for about this long (estimated; 0: one call) (%g)" % FULL["point_seconds"])
    g.add_argument("--max-calls", type=int, default=8, help="at most this many back-to-back calls (8)")
    g.add_argument("--settle-calls", type=int,
                   help="allreduce, allgather, reduce, alltoall: after each route switch, this many calls of the "
                        "same variant and size before the timed one, timed apart (records 'first:IMPL'; the first "
                        "call after a switch ran slower; bench/README.md) (%d)" % FULL["settle_calls"])
    g.add_argument("--idle-ms", type=int, default=0,
                   help="an experiment: all ranks idle this long before every timed call of those loops (after "
                        "its settle calls), to tell an idle pause's cost from a route switch's (0)")
    g.add_argument("--init-reps", type=int, help="extra init-only jobs per routing (%d)" % FULL["init_reps"])
    g.add_argument("--startup-reps", type=int, help="startup rows: jobs per p (%d)" % FULL["startup_reps"])
    g.add_argument("--startup-calls", type=int,
                   help="startup rows: cached 8-byte calls per variant and job (%d)" % FULL["startup_calls"])
    g.add_argument("--startup-baseline", metavar="COLL_BENCH",
                   help="startup rows: also run the cold, warm and warm-gap variants with this coll_bench "
                        "binary (built against another libsdnmpi), interleaved, rows marked 'baseline'")
    g.add_argument("--seed", type=int, default=7, help="seed of the random placement")
    g.add_argument("--sdn-algs", default="",
                   help="also time SDN_MPI_Allreduce forced to each of these algorithms (rd, rabenseifner, "
                        "hier; hier-dN, N 1-4, 6, 8, 12 or 16: the hierarchical one with N segments in its pipeline's first step; "
                        "hier-sNk, N 4, 8, 16 or 32: with N KiB segments; "
                        "comma-separated; records 'sdnmpi:ALG'), to check the library's choice")
    g.add_argument("--rotate-routings", type=int, default=0, metavar="ROUNDS",
                   help="allreduce: one job per placement instead of one per routing; its repetitions are blocks, "
                        "ROUNDS of one block per --routings routing each, and between blocks the controller's default "
                        "routing is changed over REST (bench_rotate.py; results.md compares sdnmpi with the best "
                        "routing's Open MPI). --reps is ignored; put 8 in --allreduce-sizes for 8-byte rows (0: off)")
    g.add_argument("--no-hide-job-flows", action="store_true",
                   help="do not override sdnmpi's job routes during Open MPI's calls (Open MPI then "
                        "also rides on them)")
    g.add_argument("--planner-max-hosts", type=int, help="planner scale: largest fabric (%d; 0: skip)"
                   % FULL["planner_max_hosts"])
    g.add_argument("--iperf-seconds", type=int)
    g.add_argument("--retry-disrupted", type=int, default=1,
                   help="re-run a job this many times if the machine stalled or the fabric's topology changed "
                        "during it (all attempts are kept and reported)")
    g = parser.add_argument_group("plumbing")
    g.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    g.add_argument("--prefix", default="bn", help="switch name prefix (unique among running fabrics)")
    g.add_argument("--mgmt-subnet", default="172.31.0.0/16", help="management network (unique)")
    g.add_argument("--ofp-port", type=int, default=0, help="0: a free port")
    g.add_argument("--wsapi-port", type=int, default=0, help="0: a free port")
    g.add_argument("--rpc-port", type=int, default=0, help="0: a free port")
    g.add_argument("--ompi-mca", action="append", default=[], metavar="NAME=VALUE",
                   help="extra Open MPI MCA parameter for every mpirun (repeatable; recorded, and "
                        "ompi_info's coll tuned settings are read with it), e.g. --ompi-mca "
                        "coll_tuned_use_dynamic_rules=1 --ompi-mca coll_tuned_allreduce_algorithm=4. "
                        "Not allowed: %s (the harness sets them)" % ", ".join(sorted(MCA_RESERVED)))
    g.add_argument("--sdn-env", action="append", default=[], metavar="SDN_MPI_X=VALUE",
                   help="an extra libsdnmpi setting for every job (repeatable), e.g. SDN_MPI_HIER_SEGMENT=32768")
    g.add_argument("--controller-arg", action="append", default=[], metavar="--[no]sdnmpi-FLAG[=VALUE]",
                   help="an extra controller option (repeatable; write it with '=': "
                        "--controller-arg=--nosdnmpi-elide-default-hops); recorded in results.md")
    g.add_argument("--sdn-timeout-ms", type=int, default=30000, help="SDN_MPI_TIMEOUT_MS for the jobs")
    g.add_argument("--sdn-bcast-rate", default="auto", metavar="MBIT|auto|lib",
                   help="SDN_MPI_BCAST_RATE_MBPS for the jobs (the multicast root's sending rate per tree): "
                        "auto = each tree's share of its slowest link (a fabric link, or a host link / the "
                        "trees: 15 on the default 30/15 fabric with 2 trees), lib = leave it to the library"),
    g.add_argument("--job-timeout", type=float, default=0, help="seconds per mpirun (0: from the estimate)")
    g.add_argument("--discovery-timeout", type=float, default=120)
    g.add_argument("--dry-run", action="store_true", help="print the planned jobs and the estimate, then exit")
    emulation.add_arguments(parser)
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for key, value in defaults.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    args.collectives = csv_list(args.collectives, ("init", "allreduce", "bcast", "allgather", "reduce", "alltoall",
                                                   "startup"))
    try:
        args.rate_ladder = bench_rates.parse_ladder(args.rate_ladder)
        if args.rates == "link-bound":
            if args.host_bw is not None or args.fabric_bw is not None:
                raise ValueError("--rates link-bound takes the rates from --rate-ladder: leave out --host-bw and "
                                 "--fabric-bw")
            args.host_bw, args.fabric_bw = args.rate_ladder[0]   # the fabric starts at the first rung
        if args.rate_probe_seconds < 1:
            raise ValueError("--rate-probe-seconds wants at least 1, got %d" % args.rate_probe_seconds)
        args.host_bw = DEFAULT_RATES[0] if args.host_bw is None else args.host_bw
        args.fabric_bw = DEFAULT_RATES[1] if args.fabric_bw is None else args.fabric_bw
        args.mca = parse_mca(args.ompi_mca)
        args.bcast_rate_mbps = bcast_rate(args.sdn_bcast_rate, args.host_bw, args.fabric_bw,
                                      bcast_trees(args.spines, args.sdn_env))
        bad = [e for e in args.sdn_env if not e.startswith("SDN_MPI_") or "=" not in e]
        if bad:
            raise ValueError("--sdn-env wants SDN_MPI_NAME=VALUE, got %s" % bad[0])
        csv_list(args.sdn_algs, SDN_ALGS)
        if not 0 <= args.settle_calls <= 4:
            raise ValueError("--settle-calls wants 0 to 4, got %d" % args.settle_calls)
        for name in ("idle_ms", "tiny_idle_ms"):
            if not 0 <= getattr(args, name) <= 10000:
                raise ValueError("--%s wants 0 to 10000, got %d" % (name.replace("_", "-"), getattr(args, name)))
        bad = [a for a in args.controller_arg if not a.startswith(("--sdnmpi-", "--nosdnmpi-"))]
        if bad:
            raise ValueError("--controller-arg wants a --sdnmpi-* (or --nosdnmpi-*) option, got %s" % bad[0])
        if args.rotate_routings:
            blocks = args.rotate_routings * len(csv_list(args.routings, ROUTINGS))
            if args.rotate_routings < 0 or blocks > 64 or "allreduce" not in args.collectives or args.sdn_algs:
                raise ValueError("--rotate-routings wants 1 to 64 blocks (rounds x routings, got %d), the allreduce "
                                 "collective and no --sdn-algs" % blocks)
            args.tiny_reps = 0   # no blocks of 8-byte calls in a rotation (recorded so in results.json)
        if args.startup_baseline:
            if not os.access(args.startup_baseline, os.X_OK):
                raise ValueError("--startup-baseline: %s is not an executable file" % args.startup_baseline)
            args.startup_baseline = os.path.abspath(args.startup_baseline)
    except ValueError as exc:
        parser.error(str(exc))
    return args


# Open MPI MCA parameters run.py sets itself (net.MpiJob): overriding them would take the traffic off
# the emulated fabric, break the launch or let polling ranks starve Open vSwitch (and Open MPI
# merges repeated --mca values of one name into a list, so they cannot simply be given twice).
MCA_RESERVED = ("btl", "btl_tcp_if_include", "btl_tcp_if_exclude", "oob_tcp_if_include",
                "oob_tcp_if_exclude", "plm_rsh_agent", "mpi_yield_when_idle", "async_mpi_finalize")


def parse_mca(items):
    """['NAME=VALUE', ...] -> [(name, value)]; ValueError for a malformed or reserved entry."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if name.startswith("OMPI_MCA_"):
            name = name[len("OMPI_MCA_"):]
        if not sep or not name or not re.match(r"^[A-Za-z0-9_]+$", name):
            raise ValueError("--ompi-mca wants NAME=VALUE, got %r" % item)
        if name in MCA_RESERVED:
            raise ValueError("--ompi-mca %s: the harness sets this one itself" % name)
        out.append((name, value.strip()))
    return out


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    fab = benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf, args.host_bw, args.fabric_bw)
    if fab.hosts < 2:
        print("need at least 2 hosts", file=sys.stderr)
        return 2
    have_sdn_bcast_guess = _have_sdn_bcast_symbol()
    jobs = _plan(args, fab, have_sdn_bcast_guess)
    estimate = sum(j["work"] for j in jobs) + 15 * len(set(j["routing"] for j in jobs)) + 20
    if args.rates == "link-bound":
        estimate += len(args.rate_ladder) * (args.rate_probe_seconds + 15)   # the probe's worst case, all rungs
    if args.dry_run:
        for job in jobs:
            print("%-36s hosts %s sizes %s roots %s ~%s" % (job["name"], job["hosts"], job.get("sizes", "-"),
                                                          job.get("roots", "-"), fmt_duration(job["work"])))
        if args.rates == "link-bound":
            print("link rates: chosen before the jobs from %s (host/fabric Mbit/s, fastest first; %d s a rung); the "
                  "jobs and the estimate above are at the first rung, a slower rung takes longer" % (
                      ", ".join("%g/%g" % r for r in args.rate_ladder), args.rate_probe_seconds))
        print("%d jobs, estimated %s (plus planner scale)" % (len(jobs), fmt_duration(estimate)))
        return 0
    if os.geteuid() != 0:
        print("bench/run.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(args.out_dir, stamp)
    log_dir = os.path.join(out_dir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    bench = Bench(args)
    bench.out_dir, bench.log_dir = out_dir, log_dir
    print("sdnmpi bench%s: results in %s" % (" (QUICK)" if args.quick else "", out_dir), flush=True)
    with open(os.path.join(log_dir, "build.log"), "w") as build_log:
        bench.coll_bench, have_sdn_bcast = build_programs(build_log)
    bench.have_sdn_bcast = have_sdn_bcast
    if have_sdn_bcast != have_sdn_bcast_guess:
        jobs = _plan(args, fab, have_sdn_bcast)
    notes = []
    if not have_sdn_bcast and "bcast" in args.collectives:
        notes.append("libsdnmpi has no SDN_MPI_Bcast (nm libsdnmpi.a): bcast rows are Open MPI only.")
        print("NOTE: " + notes[-1], flush=True)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    results = {
        "schema": 1, "started": started, "quick": args.quick, "command": [sys.executable] + sys.argv,
        "fabric": fab.to_json(),
        "software": software_versions(),
        "coll_tuned": coll_tuned_settings(args.mca),
        "mpirun": {"mca": {"btl": "tcp,self", "btl_tcp_if_include": FABRIC_SUBNET,
                           "oob_tcp_if_include": args.mgmt_subnet, "mpi_yield_when_idle": "1",
                           **dict(args.mca)},
                   "extra_mca": dict(args.mca),
                   "ranks_per_host": 1, "sdn_env": sdn_env(args), "controller_args": list(args.controller_arg)},
        "method": {"reps": args.reps, "tiny_reps": args.tiny_reps, "tiny_block": args.tiny_block,
                   "tiny_idle_ms": args.tiny_idle_ms, "point_seconds": args.point_seconds, "max_calls": args.max_calls, "seed": args.seed,
                   "settle_calls": args.settle_calls, "idle_ms": args.idle_ms,
                   "hide_job_flows": not args.no_hide_job_flows, "have_sdn_bcast": have_sdn_bcast,
                   "route_switch": ("for Open MPI's calls, override flows (priority %d, cookie 0x%x) forward the job's "
                                    "host pairs as the default routes do; removed for sdnmpi's; after each change "
                                    "ovs-appctl revalidator/wait" % (PRIORITY_OVERRIDE, BENCH_COOKIE)),
                   "retry_disrupted": args.retry_disrupted, "sdn_bcast_rate": args.sdn_bcast_rate,
                   "allreduce_sizes": benchcore.parse_sizes(args.allreduce_sizes),
                   "bcast_sizes": benchcore.parse_sizes(args.bcast_sizes),
                   "placements": {p: benchcore.placement_hosts(p, fab.hosts, fab.hosts, args.seed)
                                  for p in ("block", "random")},
                   "collectives": args.collectives, "rates": args.rates,
                   "rotation": next((j["rotation"] for j in jobs if j.get("rotation")), None)},
        "cpu_check": {"iperf": []},
        "jobs": [], "records": [], "planner_scale": [], "notes": notes,
    }
    bench.results = results
    results_path = os.path.join(out_dir, "results.json")
    progress = Progress(sum(j["work"] for j in jobs))
    print("%d mpirun jobs planned, estimated %s" % (len(jobs), fmt_duration(estimate)), flush=True)
    run_t0 = now_s()
    interrupted = False
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    token_dir = bench_rotate.operator_token(args) if args.rotate_routings else None
    try:
        if args.rates == "link-bound":
            jobs = _choose_rates(bench, jobs, progress, results)
        run_all(bench, jobs, progress, results, results_path)
    except KeyboardInterrupt as exc:
        interrupted = True
        by = str(exc) or "SIGINT"   # _raise_interrupt names the signal; Ctrl-C raises it bare
        notes.append("interrupted (%s): the results are partial" % by)
        print("interrupted by %s, cleaning up" % by, flush=True)
        traceback.print_exc(limit=4)
    except Exception as exc:  # pylint: disable=broad-except
        LOG.exception("bench failed")
        notes.append("failed: %s" % exc)
        print("FAILED: %s" % exc, flush=True)
        if bench.ctl is not None:
            print("controller log tail:\n%s" % bench.ctl.log_tail(), flush=True)
    finally:
        bench.stop_controller()
        bench.stop_fabric()
        bench_rotate.remove_token(token_dir)
        signal.signal(signal.SIGTERM, old_term)
    if not interrupted and args.planner_max_hosts:
        progress.say("planner scale (no Mininet), fabrics up to %d hosts" % args.planner_max_hosts)
        try:
            results["planner_scale"] = planner_scale.run(max_hosts=args.planner_max_hosts, seed=args.seed,
                                                         progress=progress.say)
        except Exception as exc:  # pylint: disable=broad-except
            LOG.exception("planner scale failed")
            notes.append("planner scale failed: %s" % exc)
    results["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    results["wall_s"] = now_s() - run_t0
    finish_cpu_check(results)
    write_json(results_path, results)
    report.write_report(results, out_dir)
    latest = os.path.join(args.out_dir, "latest")
    try:
        if os.path.islink(latest) or os.path.exists(latest):
            os.unlink(latest)
        os.symlink(stamp, latest)
    except OSError as exc:
        print("cannot update %s: %s" % (latest, exc))
    with open(os.path.join(out_dir, "results.md")) as md:
        print(md.read())
    print("results: %s (wall %s)" % (out_dir, fmt_duration(results["wall_s"])), flush=True)
    ok = not interrupted and not any(n.startswith("failed") for n in notes) and \
        all(j.get("rc") == 0 for j in results["jobs"])
    return 0 if ok else 1


def _plan(args, fab, have_sdn_bcast):
    """plan_jobs, and with --rotate-routings the allreduce jobs as rotations (bench_rotate.py)."""
    jobs = plan_jobs(args, fab, have_sdn_bcast)
    return bench_rotate.plan_jobs(args, fab, jobs) if args.rotate_routings else jobs


def _choose_rates(bench, jobs, progress, results):
    """--rates link-bound: the fabric probed rung by rung and left at the chosen rates
    (bench_rates.choose_on_fabric; under dmodk when the run has it, as its spread routes load the
    switch most), then everything derived from the rates re-made: the fabric record, the bcast rate,
    the jobs' plans and the ETA. Returns the jobs."""
    args = bench.args
    routings = [j["routing"] for j in jobs]
    routing = "dmodk" if "dmodk" in routings or not routings else routings[0]
    progress.say("choosing the link rates: probing %s Mbit/s under %s" % (
        ", ".join("%g/%g" % r for r in args.rate_ladder), routing))
    choice = bench_rates.choose_on_fabric(bench, args.rate_ladder, args.rate_probe_seconds, routing,
                                          args.discovery_timeout, say=progress.say, every_rung=args.rate_probe_all)
    results["rate_choice"] = choice
    if not choice["link_bound"]:
        results["notes"].append("--rates link-bound: no rung of the ladder was link-bound; the run uses the slowest, "
                                "%g/%g Mbit/s" % tuple(choice["chosen"]))
    args.bcast_rate_mbps = bcast_rate(args.sdn_bcast_rate, args.host_bw, args.fabric_bw,
                                      bcast_trees(args.spines, args.sdn_env))
    results["fabric"] = bench.fab_model.to_json()
    results["mpirun"]["sdn_env"] = sdn_env(args)
    jobs = _plan(args, bench.fab_model, bench.have_sdn_bcast)
    progress.planned = max(sum(j["work"] for j in jobs), 1e-9)
    progress.say("link rates %g/%g Mbit/s (%s); %d mpirun jobs planned at them" % (
        args.host_bw, args.fabric_bw, "link-bound" if choice["link_bound"] else "none of the ladder was link-bound",
        len(jobs)))
    return jobs


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _have_sdn_bcast_symbol():
    out = run_text(["nm", os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a")])
    return bool(re.search(r" T SDN_MPI_Bcast$", out, re.M))
