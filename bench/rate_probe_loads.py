"""The rate probe's loads side by side (issue 17; bench/README.md, "Link rates chosen per machine"):
on one fabric, every rung of a ladder, and at each rung every load of bench_rates.LOADS in turn,
each as bench_rates.probe_rung runs it for ``--rates link-bound`` (same sampler, same verdict).
Which load refuses the rungs where the 16-host jobs are switch-bound and still passes those where
the 8-host jobs are link-bound?

    flock /tmp/sdnmpi-mininet.lock timeout -s INT 600 .venv/bin/python bench/rate_probe_loads.py \\
        [--loads ring,peers,...] [--rounds 1] [--leaves 4 --hosts-per-leaf 4] [--rate-ladder 30/15,20/10,12/6]
        [--rate-probe-seconds 5]

Every option but --loads is bench/run.py's (bench_cli.parse_args, as --rates link-bound reads
them). The controller runs under dmodk, the fabric with the bench's emulation choices. Outputs
bench/results/rate-loads-<timestamp>/: results.json (per rung and load, bench_rates.rung_record)
and results.md (one table); logs/ (the controller's, Mininet's).
"""
import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_common import csv_list, pct_text, software_versions, write_json  # noqa: E402
import bench_cli  # noqa: E402
import bench_rates  # noqa: E402


def parse_args(argv):
    """(this script's args, bench/run.py's args with --rates link-bound)."""
    p = argparse.ArgumentParser(prog="bench/rate_probe_loads.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--loads", default=",".join(bench_rates.LOADS),
                   help="comma-separated, of %s (all)" % ", ".join(bench_rates.LOADS))
    p.add_argument("--rounds", type=int, default=1, help="every load this many times a rung, in turn (1)")
    args, rest = p.parse_known_args(argv)
    try:
        args.loads = csv_list(args.loads, bench_rates.LOADS)
    except ValueError as exc:
        p.error(str(exc))
    return args, bench_cli.parse_args(["--rates", "link-bound"] + rest)


def _kind(rung, kind):
    k = (rung.get("streams") or {}).get(kind)
    if not k or k.get("of_fair_share") is None:
        return "-"
    return "%s (slowest %s)" % (pct_text(100 * k["of_fair_share"]), pct_text(100 * k["slowest_of_fair_share"]))


def markdown(results):
    """results.md's lines: the fabric, then one row per rung and load."""
    fab = results["fabric"]
    out = ["# Rate probe loads side by side", "",
           "Run %s to %s; %d spines, %d leaves, %d hosts a leaf; %s routing; %d s a load and rung; every load "
           "%d time(s) per rung, in the order of the table (bench/rate_probe_loads.py)." % (
               results["started"], results.get("finished") or "-", fab["spines"], fab["leaves"],
               fab["hosts_per_leaf"], results["routing"], results["seconds"], results.get("rounds", 1)), "",
           "| host / fabric Mbit/s | load | streams | received, of what the links allow | across (slowest) | "
           "within (slowest) | forwarding thread ran + waited | switch crossings, of what the load asks | "
           "other processes | verdict |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for rung in results["rungs"]:
        out.append("| %g / %g | %s | %d | %s | %s | %s | %s + %s | %s | %s of a CPU | %s |" % (
            rung["host_bw_mbit"], rung["fabric_bw_mbit"], rung["load"], rung["streams_n"],
            pct_text(rung.get("delivered_pct")), _kind(rung, "across"), _kind(rung, "within"),
            pct_text(rung.get("ovs_main_run_weighted_pct")), pct_text(rung.get("ovs_main_wait_weighted_pct")),
            bench_rates.crossings_text(rung), pct_text(rung.get("foreign_cpu_pct")),
            rung.get("verdict") or "no figures"))
    out += ["", "Notes: %s" % ("; ".join(results["notes"]) if results["notes"] else "none")]
    return out


def main(argv=None):
    args, bargs = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        print("bench/rate_probe_loads.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2
    from bench_fabric import Bench
    from sdnmpi.mininet_topos.net import ensure_ovs
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(bargs.out_dir, "rate-loads-" + stamp)
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    bench = Bench(bargs)
    bench.out_dir, bench.log_dir = out_dir, os.path.join(out_dir, "logs")
    results = {"started": datetime.datetime.now().isoformat(timespec="seconds"), "command": sys.argv,
               "software": software_versions(), "fabric": bench.fab_model.to_json(), "routing": "dmodk",
               "loads": args.loads, "rounds": args.rounds, "ladder": [list(r) for r in bargs.rate_ladder],
               "seconds": bargs.rate_probe_seconds, "rungs": [], "notes": []}
    path = os.path.join(out_dir, "results.json")
    try:
        ensure_ovs()
        bench.start_controller("dmodk")
        bench.start_fabric()
        results["emulation"] = bench.emulation.record
        bench.wait_ready(bargs.discovery_timeout)
        for host_bw, fabric_bw in bargs.rate_ladder:
            bench.set_rates(host_bw, fabric_bw)
            for load in [load for _round in range(args.rounds) for load in args.loads]:
                rung = bench_rates.probe_rung(bench, bargs.rate_probe_seconds, load)
                rung["streams_n"] = len(bench_rates.load_pairs(bench.fab_model, load))
                results["rungs"].append(rung)
                write_json(path, results)
                print(markdown(results)[-3], flush=True)
    except KeyboardInterrupt:
        results["notes"].append("interrupted: the results are partial")
    finally:
        bench.stop_controller()
        bench.stop_fabric()
    results["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    write_json(path, results)
    with open(os.path.join(out_dir, "results.md"), "w") as md:
        md.write("\n".join(markdown(results)) + "\n")
    print("results: %s" % out_dir, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
