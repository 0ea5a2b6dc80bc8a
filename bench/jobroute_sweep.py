"""Issue 15's simulator criterion on PFSim's traces: is SDN-optimal's busiest link at or under
PFSim's Greedy2's and D-mod-K's? (No Mininet: sdnmpi-sim's job model, simulator/job.py.)

For every topology x host selection (``linear``, or ``random`` with each seed) x rank mapping, the
trace's whole-run phase is placed as ``sdnmpi-sim job --topology T --trace F --hosts H --seed S
--mapping M`` places it, routed by every ``--routers`` name, and the busiest switch link (bytes /
capacity and rank-pair flows, simulator/job.maxima) and the simulated completion time recorded.
Then, per router and baseline, the count of cases where the router is at or under the baseline
(within ``TIE``, relative), and the cases where it is over, by how much.

    .venv/bin/python bench/jobroute_sweep.py [--topology T ...] [--seeds 1-6] [--json OUT] [--no-time]

Defaults: PFSim's cg-c-128 trace (tests/data/pfsim, a copy of ../shared/pfsim-data) on milk and
pepsi, seeds 1-6, block/random/cyclic mapping: 42 cases (``linear`` hosts use the first seed, which
only the random mapping draws from). Results: docs/jobroute.md, "Sweep over placements".
"""
import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sdnmpi import traces  # noqa: E402
from sdnmpi.simulator import job as simjob  # noqa: E402
from sdnmpi.simulator import topology as simtopo  # noqa: E402

# The repository's copy of ../shared/pfsim-data (the same files).
PFSIM = os.path.join(ROOT, "tests", "data", "pfsim")
TRACE = os.path.join(PFSIM, "traces", "cg-c-128.tar.gz")
TOPOLOGIES = [os.path.join(PFSIM, "topologies", "milk.graphml"),
              os.path.join(PFSIM, "topologies", "pepsi.graphml")]
ROUTERS = ("sdn-optimal-bytes", "sdn-optimal", "greedy2", "dmodk")
BASELINES = ("greedy2", "dmodk")
MAPPINGS = ("block", "random", "cyclic")
# Two figures closer than this (relative) count as equal.
TIE = 1e-4


def cases(topologies, seeds, mappings=MAPPINGS):
    """(topology, hosts, seed, mapping) of the sweep: linear hosts once (first seed), random per seed."""
    for topo in topologies:
        for hosts, host_seeds in (("linear", seeds[:1]), ("random", seeds)):
            for seed in host_seeds:
                for mapping in mappings:
                    yield topo, hosts, seed, mapping


def run_case(graph, trace, hosts, seed, mapping, routers, timed=True):
    """{router: {max_link_bytes, max_link_flows, completion_s, plan_s}} for one placement, as
    simulator/cli.py's run_job places and routes it (phase 0)."""
    phase = trace.phases[0]
    placement = simjob.place(graph, trace.n_procs, hosts, mapping, rng=random.Random(seed))
    demand, flows = simjob.host_demand(phase.traffic_matrix(), phase.tx_messages > 0,
                                       placement.rank_host, trace.file_order)
    out = {}
    for router in routers:
        start = time.process_time()
        routed = simjob.route(graph, demand, flows, router, seed=seed)
        plan_s = time.process_time() - start
        max_bytes, max_flows = simjob.maxima(graph, routed.link_bytes, routed.link_flows)
        out[router] = {"max_link_bytes": max_bytes, "max_link_flows": max_flows, "plan_s": plan_s,
                       "completion_s": routed.completion_s() if timed else None}
    return out


def at_or_under(value, baseline):
    return value <= baseline * (1 + TIE) + 1e-12


def summary(rows, routers, baselines=BASELINES):
    """{router: {baseline: {metric: [at-or-under count, cases, [(case, ratio) over]]}}}."""
    out = {}
    for router in routers:
        if router in baselines:
            continue
        per = out.setdefault(router, {})
        for base in (b for b in baselines if b in routers):
            per[base] = {}
            for metric in ("max_link_bytes", "max_link_flows", "completion_s"):
                ok, over = 0, []
                timed = [row for row in rows if row["routers"][router][metric] is not None]
                for row in timed:
                    mine, theirs = row["routers"][router][metric], row["routers"][base][metric]
                    if at_or_under(mine, theirs):
                        ok += 1
                    else:
                        over.append((row["case"], mine / theirs if theirs else float("inf")))
                if timed:
                    per[base][metric] = [ok, len(timed), over]
    return out


def _seeds(text):
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", default=TRACE)
    p.add_argument("--topology", action="append",
                   help="a .graphml file or a spec (kary:k=8, leafspine:...); repeatable (default: milk, pepsi)")
    p.add_argument("--seeds", default="1-6", type=_seeds, help="e.g. 1-6 or 1,4,5")
    p.add_argument("--mappings", default=",".join(MAPPINGS))
    p.add_argument("--routers", default=",".join(ROUTERS))
    p.add_argument("--no-time", action="store_true", help="skip the simulated completion times")
    p.add_argument("--json", help="write the rows and the summary here")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    routers = args.routers.split(",")
    trace = traces.load(args.trace)
    rows = []
    for topo_spec in args.topology or TOPOLOGIES:
        graph = simtopo.from_spec(topo_spec)
        name = graph.graph.get("name") or os.path.basename(topo_spec)
        for _topo, hosts, seed, mapping in cases([topo_spec], args.seeds, args.mappings.split(",")):
            result = run_case(graph, trace, hosts, seed, mapping, routers, timed=not args.no_time)
            case = "%s %s/%d/%s" % (name, hosts, seed, mapping)
            rows.append({"case": case, "routers": result})
            cells = " ".join("%s=%.4g/%d" % (r, v["max_link_bytes"] / 1e9, v["max_link_flows"])
                             for r, v in result.items())
            print("%-34s %s" % (case, cells), flush=True)
    summ = summary(rows, routers)
    for router, per in summ.items():
        for base, metrics in per.items():
            for metric, (ok, n, over) in metrics.items():
                worst = ", ".join("%s %+.1f%%" % (c, 100 * (r - 1)) for c, r in over)
                print("%s <= %s in %s: %d/%d%s" % (router, base, metric, ok, n,
                                                    ("  over: " + worst) if over else ""))
    if rows:
        print("planner CPU s, max over cases: %s" % ", ".join(
            "%s %.2f" % (r, max(row["routers"][r]["plan_s"] for row in rows)) for r in routers))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"argv": sys.argv[1:], "rows": rows, "summary": summ}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
