#!/usr/bin/env python3
"""Time of one flow-detection routing decision (issue 16), offline: no Mininet, no lock needed.

Counter logs recorded on Mininet (bench/bench_flowdetect.py's counters/) are replayed poll by poll
through learned detection on the unit tests' simulated k=4 fat-tree (tests/unit/fabric_sim.py,
D-mod-K), as tests/unit/test_flowdetect_seed.py replays them. Every `FlowDetection._route` call
is one decision (the routing choice, controller/flowchoice.py, and the declaration it installs):
its wall time and its CPU time (this process's: less sensitive to a busy machine), both less the
time spent in the simulated switches (``service.confirm``), the flow
router's runs in it (seeded and unseeded plans count one each), and whether it routed. A digest
of every flow-mod confirmed per log tells whether two controllers installed the same.

    nice .venv/bin/python bench/flowdetect_decision_time.py run --label after --json /tmp/a.json [LOG ...]
    nice .venv/bin/python bench/flowdetect_decision_time.py run --controller-dir DIR --label before ...
    .venv/bin/python bench/flowdetect_decision_time.py summary /tmp/a.json /tmp/b.json ... --out DIR

``--controller-dir DIR``: import sdnmpi.controller from DIR (``git archive main controller``
unpacked; bench_install_cost.py's loader), so one script times both controllers on one machine.
``summary`` writes DIR/results.json (every run) and DIR/results.md: per label, the median and max
ms per decision (routed decisions, and all), the router runs per decision, and per log whether
every label's flow-mods agree.
"""
import argparse
import functools
import glob
import hashlib
import json
import os
import statistics
import sys
import time
import types

import bench_install_cost  # noqa: F401  (imported first: its --controller-dir loader, tests/unit on sys.path)

from sdnmpi import flows  # noqa: E402
from sdnmpi.controller import flowdetect, jobtraffic  # noqa: E402
from sdnmpi.controller import jobs as jobs_module  # noqa: E402
from sdnmpi.controller.jobs import JobTable  # noqa: E402
from sdnmpi.flows import counterlog  # noqa: E402
from sdnmpi.primitives import fattree  # noqa: E402

from fabric_sim import FabricSim  # noqa: E402
from test_flowdetect import poll, poll_recorded  # noqa: E402  (answers the polls' flow-stats requests)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
LOGS = ["flowdetect-20261129T224040Z/counters/%s-learned-%d.jsonl.gz" % (p, r)
        for p in ("permutation", "shift", "two-phases") for r in range(1, 6)] + \
       ["flowdetect-20261129T233016Z/counters/two-phases-learned-%d.jsonl.gz" % r for r in range(1, 6)] + \
       ["flowdetect-20261129T235201Z/counters/%s-learned-1.jsonl.gz" % p for p in ("alltoall", "halo3d")]
ROUTER = flowdetect.DEFAULT_ROUTER
KINDS = ("routed", "all", "routed_cpu", "all_cpu")   # decisions summarized: routed or all, wall or CPU ms
JOB_ID = 4242                     # fixed, so that the cookies (and the digest) do not vary by run


class Recorder:
    """Times every `_route` call and counts the flow router's runs while installed (`start`, `stop`)."""

    def __init__(self):
        self.decisions, self.sent, self.runs = [], [], 0
        self._saved = None

    def start(self):
        route, routers = flowdetect.FlowDetection._route, jobtraffic.PAIR_ROUTERS   # pylint: disable=protected-access
        self._saved = (route, routers)
        inner = routers[ROUTER]

        @functools.wraps(inner)          # keeps the signature: seeding.takes_previous reads it
        def counted(*args, **kwargs):
            self.runs += 1
            return inner(*args, **kwargs)
        jobtraffic.PAIR_ROUTERS = dict(routers, **{ROUTER: counted})
        flowdetect.FlowDetection._route = lambda fd, service, job, new: self._timed(route, fd, service, job, new)

    def stop(self):
        flowdetect.FlowDetection._route, jobtraffic.PAIR_ROUTERS = self._saved

    def _timed(self, route, fd, service, job, new):
        confirm, switches = service.confirm, [0.0, 0.0]

        def timed_confirm(msgs):
            t, c = time.perf_counter(), time.process_time()
            self.sent.extend(str(m) for m in msgs)
            out = confirm(msgs)
            switches[0] += time.perf_counter() - t
            switches[1] += time.process_time() - c
            return out
        service.confirm, self.runs, routed = timed_confirm, 0, []
        declare = fd._declare                                          # pylint: disable=protected-access

        def declared(service_, job_, detected, demand, *args, **kwargs):   # routed: a demand declared
            ok = declare(service_, job_, detected, demand, *args, **kwargs)
            routed.append(bool(ok and demand))
            return ok
        fd._declare = declared                                         # pylint: disable=protected-access
        t, c = time.perf_counter(), time.process_time()
        try:
            route(fd, service, job, new)
        finally:
            total, cpu = time.perf_counter() - t, time.process_time() - c
            service.confirm = confirm
            del fd._declare                                            # pylint: disable=protected-access
        self.decisions.append({"ms": round(1e3 * (total - switches[0]), 3),
                               "cpu_ms": round(1e3 * (cpu - switches[1]), 3),
                               "ms_with_switches": round(1e3 * total, 3), "runs": self.runs,
                               "routed": any(routed)})


def replay(path):
    """{"log", "decisions", "digest", "routed"} of the counter log at ``path`` replayed."""
    header, polls = counterlog.from_file(path, counterlog.parse)
    sim = FabricSim(fattree.kary(4), routing="dmodk")
    sim.discover()
    jobs = JobTable()
    service = types.SimpleNamespace(core=sim.core, jobs=jobs, confirm=sim.run, resync=lambda job: None)
    clf = flows.load_or_fallback(flows.DEFAULT_MODEL, link_rate=header["link_rate_Bps"], interval=header["interval_s"])
    fd = flowdetect.FlowDetection(clf)
    randbelow = jobs_module.secrets.randbelow
    jobs_module.secrets.randbelow = lambda n: JOB_ID - 1
    try:
        jobs.register([sim.host_ip[m] for m in sim.hosts()], 60.0, owner=object(), now=0.0)
    finally:
        jobs_module.secrets.randbelow = randbelow
    rec = Recorder()
    rec.start()
    try:
        poll(sim, jobs, service, fd, {})
        for p in polls:
            poll_recorded(sim, jobs, service, fd, p)
    finally:
        rec.stop()
    digest = hashlib.sha256("\n".join(rec.sent).encode()).hexdigest()[:16]
    return {"log": os.path.relpath(path, RESULTS) if path.startswith(RESULTS) else path,
            "decisions": rec.decisions, "digest": digest, "routed": fd.counters.get("routed", 0)}


def _stats(values):
    return {"n": len(values), "median": round(statistics.median(values), 2) if values else None,
            "max": round(max(values), 2) if values else None}


def summarize(runs):
    """{label: {"routed": stats, "all": stats, "runs_max", "runs_routed"}} and {log: agree} of ``runs``."""
    labels, digests = {}, {}
    for run in runs:
        for entry in run["logs"]:
            digests.setdefault(entry["log"], set()).add(entry["digest"])
            acc = labels.setdefault(run["label"], {kind: [] for kind in KINDS + ("runs",)})
            for d in entry["decisions"]:
                acc["runs"].append(d["runs"])
                for kind in ("all", "routed") if d["routed"] else ("all",):
                    acc[kind].append(d["ms"])
                    acc[kind + "_cpu"].append(d["cpu_ms"])
    table = {label: dict({kind: _stats(acc[kind]) for kind in KINDS},
                         runs_max=max(acc["runs"]), runs_median=statistics.median(acc["runs"]))
             for label, acc in sorted(labels.items())}
    return table, {log: len(d) == 1 for log, d in sorted(digests.items())}


def markdown(runs, table, agree):
    lines = ["# Flow detection: time per routing decision (offline replay)", "",
             "Recorded counter logs replayed through learned detection on the simulated k=4 fat-tree "
             "(bench/flowdetect_decision_time.py); ms of controller work per `_route` call (the "
             "simulated switches' time left out). Runs, in order: %s." % ", ".join(r["label"] for r in runs), "",
             "| controller | routed decisions | median ms | max ms | all decisions | median ms | max ms "
             "| router runs per decision (max) |", "|---|---|---|---|---|---|---|---|"]
    for label, row in table.items():
        for clock in ("", "_cpu"):
            routed, every = row["routed" + clock], row["all" + clock]
            lines.append("| %s | %d | %s | %s | %d | %s | %s | %d |" % (
                label + (" (CPU)" if clock else " (wall)"), routed["n"], routed["median"], routed["max"], every["n"],
                every["median"], every["max"], row["runs_max"]))
    lines += ["", "Flow-mods confirmed, the same under every controller: %d of %d logs." % (
        sum(agree.values()), len(agree))]
    lines += ["- %s differs" % log for log, same in agree.items() if not same]
    return "\n".join(lines) + "\n"


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="replay logs, time every decision")
    run.add_argument("logs", nargs="*", help="counter logs (.jsonl.gz; default: %d recorded ones)" % len(LOGS))
    run.add_argument("--label", required=True, help="the controller's name in the summary")
    run.add_argument("--json", required=True, help="where to write this run's decisions")
    run.add_argument("--controller-dir", help="import sdnmpi.controller from this directory")
    summary = sub.add_parser("summary", help="results.json and results.md of several runs")
    summary.add_argument("runs", nargs="+", help="run JSON files, in the order they ran")
    summary.add_argument("--out", required=True, help="results folder")
    summary.add_argument("--note", default="", help="a line for results.md (e.g. the machine was busy)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "run":
        logs = args.logs or [os.path.join(RESULTS, name) for name in LOGS]
        paths = sorted(p for pattern in logs for p in (glob.glob(pattern) or [pattern]))
        try:
            replayed = [replay(p) for p in paths]
        except counterlog.CounterLogError as exc:
            print(f"flowdetect_decision_time: {exc}", file=sys.stderr)
            return 2
        doc = {"label": args.label, "controller": os.path.dirname(flowdetect.__file__), "logs": replayed}
        with open(args.json, "w") as out:
            json.dump(doc, out)
        table, _agree = summarize([doc])
        print(json.dumps(table[args.label]))
        return 0
    runs = []
    for path in args.runs:
        with open(path) as f:
            runs.append(json.load(f))
    table, agree = summarize(runs)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as out:
        json.dump({"table": table, "agree": agree, "runs": runs}, out, indent=1)
    text = markdown(runs, table, agree) + ("\n" + args.note + "\n" if args.note else "")
    with open(os.path.join(args.out, "results.md"), "w") as out:
        out.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
