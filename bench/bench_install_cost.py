"""Install cost of a collective plan (no Mininet, no switches): what the controller spends between
receiving ``plan_allreduce`` and waiting for the barrier replies (issue 17, start-up cost).

A real `Core` (controller/core.py) discovers a synthetic fabric (primitives/fattree.py, simulated
by the unit tests' tests/unit/fabric_sim.py) and installs its default routes; an `RpcService` with the real `Confirmer` (controller/barriers.py) then plans
and installs the world communicator of a job, as at SDN_MPI_Init with plan-ahead. The datapaths
are fakes that do what Ryu's ``Datapath.send_msg`` does in the controller's thread (encode the
message) and answer each barrier at once, so the time is the controller's CPU work: planning
(``plan_s``), building the flow-mods (``build_s``) and encoding/sending them plus the barriers
(``send_s``). Median (min-max) over ``--repeats`` fresh jobs.

    .venv/bin/python bench/bench_install_cost.py [--repeats N] [--routing dmodk|ecmp] [--json OUT]
    .venv/bin/python bench/bench_install_cost.py --profile CASE   # cProfile of one case's install
    .venv/bin/python bench/bench_install_cost.py --controller-dir DIR   # an older controller/ (before)

Cases: the bench's 8-host 2:1 leaf-spine (2 spines, 4 leaves; p=8 one rank per host, p=16 two)
and the 16-host k=4 fat-tree (p=16). Ranks are placed leaf by leaf (block, as libsdnmpi orders
them), or by a seeded shuffle ("-random"), and the world's steps are recursive doubling mapped to
host pairs (primitives/schedule.py). ``--elide`` runs the controller with
--sdnmpi-elide-default-hops (controller/jobroutes.py; the controller's default), without it every
hop is installed (as with --nosdnmpi-elide-default-hops).
"""
import argparse
import cProfile
import dataclasses
import json
import logging
import os
import pstats
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, os.path.join(ROOT, "tests", "unit")):
    if path not in sys.path:
        sys.path.insert(0, path)


def _use_controller_dir(argv):
    """``--controller-dir DIR``: import sdnmpi.controller from DIR (e.g. `git archive main controller`
    unpacked), so that the same script times an older controller: before/after on one machine."""
    if "--controller-dir" not in argv:
        return
    import importlib.util
    where = os.path.abspath(argv[argv.index("--controller-dir") + 1])
    spec = importlib.util.spec_from_file_location("sdnmpi.controller", os.path.join(where, "__init__.py"),
                                                  submodule_search_locations=[where])
    module = importlib.util.module_from_spec(spec)
    sys.modules["sdnmpi.controller"] = module
    spec.loader.exec_module(module)


_use_controller_dir(sys.argv)

from ryu.ofproto import ofproto_v1_3, ofproto_v1_3_parser  # noqa: E402

from fabric_sim import FabricSim  # noqa: E402
from sdnmpi.controller import options, rpc  # noqa: E402
from sdnmpi.controller.barriers import Confirmer  # noqa: E402
from sdnmpi.primitives import fabric, fattree, schedule  # noqa: E402

CASES = {   # name: (fabric, ranks per host, placement seed: None = block, leaf by leaf)
    "leafspine8-p8": (lambda: fattree.leaf_spine(2, 4, 2), 1, None),
    "leafspine8-p16": (lambda: fattree.leaf_spine(2, 4, 2), 2, None),
    "leafspine8-p8-random": (lambda: fattree.leaf_spine(2, 4, 2), 1, 1),
    "kary4-p16": (lambda: fattree.kary(4), 1, None),
    "kary4-p16-random": (lambda: fattree.kary(4), 1, 1),
}


class BenchDatapath:
    """What the controller uses of a Ryu datapath: ``send_msg`` encodes like Ryu's; a barrier is
    answered at once (through the Confirmer, as app.py's barrier-reply handler does)."""

    def __init__(self, dpid, confirmer):
        self.id, self.ofproto, self.ofproto_parser = dpid, ofproto_v1_3, ofproto_v1_3_parser
        self.confirmer, self.xid, self.sent = confirmer, 0, 0

    def set_xid(self, msg):
        self.xid += 1
        msg.set_xid(self.xid)
        return self.xid

    def send_msg(self, msg):
        if msg.xid is None:
            self.set_xid(msg)
        msg.serialize()
        self.sent += 1
        if isinstance(msg, ofproto_v1_3_parser.OFPBarrierRequest):
            self.confirmer.barrier_reply(self.id, msg.xid)
        return True


def controller(graph, routing, elide):
    """(RpcService, Core): the unit tests' simulated fabric (tests/unit/fabric_sim.py) discovered
    by a real Core, which then sends to `BenchDatapath`s through the real Confirmer."""
    # explicit either way (elision is the controller's default since issue 17); a controller from
    # before the option (--controller-dir) never elides
    known = "elide_default_hops" in {f.name for f in dataclasses.fields(options.Settings)}
    if elide and not known:
        raise SystemExit("bench_install_cost: this controller has no --sdnmpi-elide-default-hops")
    sim = FabricSim(graph, routing=routing, **({"elide_default_hops": elide} if known else {}))
    sim.discover()
    confirmer = Confirmer(timeout=5.0)
    sim.core.datapaths = {dpid: BenchDatapath(dpid, confirmer) for dpid in sim.core.datapaths}
    return rpc.RpcService(sim.core, confirmer.confirm), sim.core


def world_steps(graph, per_host, seed):
    ips = [graph.nodes[m]["ip"] for m in fabric.hosts(graph)]
    if seed is not None:
        random.Random(seed).shuffle(ips)
    ranks = [ip for ip in ips for _ in range(per_host)]
    host_steps = schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)
    return [[((s, d), c) for (s, d), c in step] for step in host_steps], ips


class TimedConfirm:
    """Wraps the service's confirm: how many messages one install sent, and how long sending them
    and waiting for the barriers took (the rest of ``install_s`` built them)."""

    def __init__(self, service):
        self.service, self.inner, self.sent, self.send_s = service, service.confirm, 0, 0.0
        service.confirm = self.confirm

    def confirm(self, msgs):
        self.sent = len(msgs)
        t = time.perf_counter()
        self.inner(msgs)
        self.send_s = time.perf_counter() - t

    def restore(self):
        self.service.confirm = self.inner


def run_case(name, routing, repeats, elide=False):
    make, per_host, seed = CASES[name]
    graph = make()
    service, _core = controller(graph, routing, elide)
    steps, ips = world_steps(graph, per_host, seed)
    timer = TimedConfirm(service)
    rows = {"plan_s": [], "build_s": [], "send_s": [], "install_s": []}
    flows = msgs = 0
    try:
        for _ in range(repeats):
            job = service.jobs.register(ips, 60.0, None, 0.0)
            t0 = time.perf_counter()
            fields, timings = service._plan_allreduce(job, {"comm": 0, "steps": steps, "planner": "balanced"})
            t1 = time.perf_counter()
            rows["plan_s"].append(timings["plan_s"])
            rows["install_s"].append(timings["install_s"])
            rows["send_s"].append(timer.send_s)
            rows["build_s"].append(timings["install_s"] - timer.send_s)
            flows, msgs = fields["flows"], timer.sent
            assert t1 - t0 >= timings["install_s"]
            service.release(job, "bench")
    finally:
        timer.restore()
    out = {"case": name, "controller": os.path.dirname(rpc.__file__), "routing": routing, "elide": elide, "ranks": len(ips) * per_host, "hosts": len(ips),
           "plan_flows": flows, "messages": msgs, "repeats": repeats}
    for key, values in rows.items():
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def profile(name, routing, repeats, elide):
    prof = cProfile.Profile()
    prof.enable()
    run_case(name, routing, repeats, elide)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def summarize(paths):
    """One table from several runs' --json files (e.g. before/after rounds, interleaved): per
    (label, routing, elide, case), the median over the runs of each run's median, and the runs'
    range of medians."""
    groups = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for row in json.load(fh):
                key = (row.get("label", ""), row["routing"], row["elide"], row["case"])
                groups.setdefault(key, []).append(row)
    print("| controller | routing | elide | case | plan flows | messages | runs | planning | build | send | install |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (label, routing, elide, case), rows in sorted(groups.items()):
        cells = []
        for k in ("plan_s", "build_s", "send_s", "install_s"):
            meds = [r[k]["median"] * 1e6 for r in rows]
            cells.append("%.0f us (%.0f-%.0f)" % (statistics.median(meds), min(meds), max(meds)))
        print("| %s | %s | %s | %s | %d | %d | %d | %s |" % (label, routing, "yes" if elide else "no", case,
                                                         rows[0]["plan_flows"], rows[0]["messages"], len(rows),
                                                         " | ".join(cells)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--routing", default="dmodk", choices=("dmodk", "ecmp", "single"))
    ap.add_argument("--elide", action="store_true", help="controller with --sdnmpi-elide-default-hops (its default); "
                    "without: every hop installed, as with --nosdnmpi-elide-default-hops")
    ap.add_argument("--json", help="write the rows to this file too")
    ap.add_argument("--controller-dir", help="time the controller package in this directory instead")
    ap.add_argument("--label", default="", help="a name for this run's rows (e.g. before, after)")
    ap.add_argument("--summarize", nargs="+", metavar="JSON", help="print one table from these --json files")
    ap.add_argument("--profile", choices=sorted(CASES), help="cProfile one case instead")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        print("bench_install_cost: --repeats must be >= 1", file=sys.stderr)
        return 2
    logging.disable(logging.INFO)   # as in a controller without --verbose
    if args.summarize:
        summarize(args.summarize)
        return 0
    if args.profile:
        profile(args.profile, args.routing, args.repeats, args.elide)
        return 0
    results = [dict(run_case(name, args.routing, args.repeats, args.elide), label=args.label) for name in CASES]
    print("| case | routing | elide | ranks | plan flows | messages | planning | build | send (encode + barrier) | install |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print("| %s | %s | %s | %d | %d | %d | %s |" % (
            r["case"], r["routing"], "yes" if r["elide"] else "no", r["ranks"], r["plan_flows"], r["messages"],
            " | ".join("%.0f us (%.0f-%.0f)" % (r[k]["median"] * 1e6, r[k]["min"] * 1e6, r[k]["max"] * 1e6)
                       for k in ("plan_s", "build_s", "send_s", "install_s"))))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
