"""``sdnmpi-sim``: replay one profiled job (``job``) or a PFSim scenario file (``scenario``).

Bad input (topology, trace, router, scenario file, scheduler address) is one line on stderr and
exit code 2, never a traceback.
"""
import argparse
import json
import logging
import os
import random
import sys

from .. import numeric, pipes, traces
from ..primitives import PAIR_ROUTERS
from . import job, output, parallel, plot, scenario, score_flows, topology, train_flows

LOG = logging.getLogger(__name__)

_ERRORS = (traces.TraceError, topology.TopologyError, job.SimError, scenario.ScenarioError,
           parallel.ClusterError, train_flows.TrainError)


def _positive(text):
    return numeric.positive(text, "", argparse.ArgumentTypeError, convert=True)   # argparse names the option


def _count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def parser():
    p = argparse.ArgumentParser(prog="sdnmpi-sim", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    j = sub.add_parser("job", help="replay one job")
    j.add_argument("--topology", required=True,
                   help="a .graphml file, kary:k=4, leafspine:spines=2,leaves=4,hosts=2, xgft:m=4/4,w=1/2")
    j.add_argument("--trace", required=True, help="a .tar.gz, a directory or one oxton-result json")
    j.add_argument("--hosts", choices=job.HOST_POLICIES, default="linear")
    j.add_argument("--mapping", choices=job.MAPPINGS, default="block")
    j.add_argument("--router", default="dmodk", help="one of: " + ", ".join(sorted(PAIR_ROUTERS)))
    j.add_argument("--fabric-default", metavar="ROUTER",
                   help="model the controller: the router's plan only where it beats this default "
                        "routing's (dmodk, ecmp, single), as it installs a declared demand")
    j.add_argument("--detected", action="store_true",
                   help="model flow detection's plan of the demand (with --fabric-default): its pairs run on the "
                        "default routes when flagged, and the plan keeps each on its default path wherever its "
                        "busiest link allows (dmodk, single; --sdnmpi-flow-seed)")
    j.add_argument("--seed", type=int, default=0)
    j.add_argument("--phase", type=int, default=0, help="trace phase (0 = whole run)")
    j.add_argument("--link-bw", type=_positive, default=job.DEFAULT_LINK_BW,
                   help="bytes/s of a capacity-1 link without its own bandwidth (default 10 Gbit/s)")
    j.add_argument("--json", action="store_true", help="print one JSON object")
    j.add_argument("--plot", metavar="PNG", help="draw the per-link loads")
    s = sub.add_parser("scenario", help="run a PFSim scenario file")
    s.add_argument("file")
    s.add_argument("-j", "--jobs", type=_count, default=1, help="local processes")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a Dask distributed scheduler")
    s.add_argument("--outdir", help="write under this directory instead of the file's folder")
    s.add_argument("--link-bw", type=_positive, default=job.DEFAULT_LINK_BW)
    s.add_argument("--plot", metavar="PNG", help="draw the congestion time series")
    train_flows.add_parser(sub, _positive, _count)
    score_flows.add_parser(sub, _positive, _count)
    return p


def run_job(args):
    graph = topology.from_spec(args.topology)
    trace = traces.load(args.trace)
    if not 0 <= args.phase < len(trace.phases):
        raise job.SimError(f"{args.trace}: no phase {args.phase} (the trace has {len(trace.phases)})")
    phase = trace.phases[args.phase]
    job.router_of(args.router)
    rng = random.Random(args.seed)
    placement = job.place(graph, trace.n_procs, args.hosts, args.mapping, rng=rng)
    demand, flows = job.host_demand(phase.traffic_matrix(), phase.tx_messages > 0,
                                    placement.rank_host, trace.file_order)
    routed = job.route(graph, demand, flows, args.router, seed=args.seed, fabric_default=args.fabric_default,
                       detected=args.detected)
    max_bytes, max_flows = job.maxima(graph, routed.link_bytes, routed.link_flows)
    links = job.link_report(graph, routed.link_bytes, routed.link_flows)
    name = {n: d.get("name") or n for n, d in graph.nodes(data=True)}
    result = {"topology": graph.graph.get("name", args.topology), "trace": args.trace,
              "n_procs": trace.n_procs, "phase": args.phase, "router": args.router,
              "fabric_default": args.fabric_default, "detected": args.detected,
              "hosts": args.hosts, "mapping": args.mapping, "seed": args.seed,
              "host_list": [name[h] for h in placement.hosts], "host_pairs": len(demand),
              "max_link_bytes": max_bytes, "max_link_flows": max_flows,
              "completion_s": routed.completion_s(args.link_bw), "links": links}
    if args.plot:
        plot.link_loads(links, args.plot, f"{os.path.basename(args.trace)}: {args.router}, "
                                          f"{args.hosts}/{args.mapping}")
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['trace']} ({trace.n_procs} ranks) on {result['topology']}: "
          f"{len(placement.hosts)} hosts ({args.hosts}), mapping {args.mapping}, router {args.router}")
    print(f"max_link_bytes  {max_bytes:,.0f}")
    print(f"max_link_flows  {max_flows}")
    print(f"completion_s    {result['completion_s']:.6g}")
    for row in links[:10]:
        print(f"  {row['src']} -> {row['dst']}: {row['bytes']:,.0f} bytes, {row['flows']} flows")


def run_scenarios(args):
    outdir, specs = scenario.load(args.file, seed=args.seed, link_bw=args.link_bw)
    if args.outdir:
        outdir = os.path.join(args.outdir, os.path.relpath(outdir, os.path.dirname(
            os.path.abspath(args.file))))
    for spec in specs:
        job.router_of(spec.router)
    results = parallel.run_all(specs, jobs=args.jobs, scheduler=args.scheduler)
    try:
        output.write(outdir, results)
    except OSError as exc:
        raise job.SimError(f"cannot write results under {outdir}: {exc.strerror} "
                           "(use --outdir)") from None
    print(output.table(results))
    print(f"results: {outdir}")
    if args.plot:
        plot.congestion(results, args.plot)


def main(argv=None):
    logging.basicConfig(level=os.environ.get("SDNMPI_LOG", "WARNING"),
                        format="%(levelname)s %(name)s: %(message)s")
    args = parser().parse_args(argv)
    try:
        if args.command == "job":
            run_job(args)
        elif args.command == "train-flows":
            train_flows.run(args)
        elif args.command == "score-flows":
            score_flows.run(args)
        else:
            run_scenarios(args)
    except _ERRORS as exc:
        print(f"sdnmpi-sim: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout closed early (``| head``): stop quietly
        pipes.silence()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
