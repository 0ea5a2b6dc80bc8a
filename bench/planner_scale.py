"""Planner scale (no Mininet): time and quality of the allreduce planners on large synthetic fabrics.

For every fabric (2-tier leaf-spines and 3-tier k-ary fat-trees of 16 to 4096 hosts, built by
primitives/fattree.py) and rank placement (block: rank r on host r; random: a seeded permutation),
the recursive-doubling schedule of p = all hosts is mapped to host pairs (primitives/schedule.py)
and planned by

- ``balanced`` (primitives.allreduce.balanced: what the controller runs for ``plan_allreduce``), and
- ``dmodk`` (primitives.allreduce.dmodk: the paths of the default D-mod-K routes, the baseline).

Reported per run: the planner's wall time (for ``dmodk`` it includes building the D-mod-K route
table, which is also timed on its own as ``route_table_s``), the number of flows per step
(host pairs), and the quality: per step, the flows on the busiest directed switch link
(``max_load``) against the least possible (``lower_bound``: the cut bound, max over tree levels
and blocks — a leaf, a pod — of ceil(flows it sends or receives across its uplinks / its uplinks)). ``ratio`` is the worst step's
max_load / lower_bound (1.0 = optimal in every step); ``sum_ratio`` is sum(max_load) /
sum(lower_bound), which is what the bandwidth term of a recursive-doubling allreduce scales with.

    .venv/bin/python bench/planner_scale.py [--quick] [--json OUT] [--max-hosts N] [--seed S]

The time is what the controller spends on ``plan_s`` for one communicator (it also builds its graph
and installs flows, which this does not measure). Comparing it with a collective's duration says
where the controller becomes the bottleneck: a plan is made once per communicator, so it must be
small next to the job's collectives, not next to one call.
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
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from benchcore import fmt_seconds  # noqa: E402
from sdnmpi.primitives import ALLREDUCE_PLANNERS, fabric, fattree, routing, schedule  # noqa: E402

# (kind, parameters): hosts = leaves * hosts_per_leaf, or k^3/4 * (hosts_per_edge / (k/2)).
# Leaf-spines are 2:1 oversubscribed (hosts per leaf = 2 x spines), like the Mininet default.
FABRICS = [
    ("leaf_spine", {"spines": 2, "leaves": 4, "hosts_per_leaf": 4}),        # 16
    ("leaf_spine", {"spines": 4, "leaves": 8, "hosts_per_leaf": 8}),        # 64
    ("leaf_spine", {"spines": 8, "leaves": 16, "hosts_per_leaf": 16}),      # 256
    ("leaf_spine", {"spines": 16, "leaves": 32, "hosts_per_leaf": 32}),     # 1024
    ("leaf_spine", {"spines": 32, "leaves": 64, "hosts_per_leaf": 64}),     # 4096
    ("kary", {"k": 4}),                                                     # 16
    ("kary", {"k": 8}),                                                     # 128
    ("kary", {"k": 12}),                                                    # 432
    ("kary", {"k": 16}),                                                    # 1024
    ("kary", {"k": 16, "hosts_per_edge": 16}),                              # 2048 (2:1)
    ("kary", {"k": 16, "hosts_per_edge": 32}),                              # 4096 (4:1)
    ("kary", {"k": 24}),                                                    # 3456 (full bisection)
]
QUICK_MAX_HOSTS = 256
PLANNERS = ("balanced", "dmodk")


def fabric_hosts(kind, params):
    """Number of hosts of a fabric description."""
    if kind == "leaf_spine":
        return params["leaves"] * params["hosts_per_leaf"]
    k = params["k"]
    return (k * k // 2) * params.get("hosts_per_edge", k // 2)


def build(kind, params):
    """The networkx graph of primitives/fabric.py for a fabric description."""
    if kind == "leaf_spine":
        return fattree.leaf_spine(**params)
    return fattree.kary(**params)


def fabric_name(kind, params):
    if kind == "leaf_spine":
        return "leaf-spine %ds/%dl/%dh" % (params["spines"], params["leaves"], params["hosts_per_leaf"])
    hpe = params.get("hosts_per_edge", params["k"] // 2)
    return "k=%d fat-tree, %d hosts/edge" % (params["k"], hpe)


def placements(hosts, seed):
    """{name: list of host macs in rank order}."""
    block = list(hosts)
    shuffled = list(hosts)
    random.Random(seed).shuffle(shuffled)
    return {"block": block, "random": shuffled}


def quality(plan):
    """(worst step ratio, sum ratio) of a Plan; 1.0 when a step has no inter-leaf flows."""
    ratios = [m / b if b else (1.0 if m == 0 else float("inf")) for m, b in zip(plan.max_load, plan.lower_bound)]
    total_bound = sum(plan.lower_bound)
    return (max(ratios) if ratios else 1.0,
            sum(plan.max_load) / total_bound if total_bound else 1.0)


def run_one(kind, params, seed=7, planners=PLANNERS, placement_names=("block", "random")):
    """Rows (one per placement x planner) for one fabric."""
    t0 = time.perf_counter()
    graph = build(kind, params)
    build_s = time.perf_counter() - t0
    hosts = fabric.hosts(graph)
    p = len(hosts)
    steps_ranks = schedule.recursive_doubling_steps(p)
    rows = []
    route_table_s = None
    for pname, order in placements(hosts, seed).items():
        if pname not in placement_names:
            continue
        steps = schedule.host_steps(steps_ranks, order)
        for planner in planners:
            extra = {}
            if planner == "dmodk":
                if route_table_s is None:
                    t0 = time.perf_counter()
                    routing.dmodk(graph)
                    route_table_s = time.perf_counter() - t0
                extra["route_table_s"] = route_table_s
            t0 = time.perf_counter()
            plan = ALLREDUCE_PLANNERS[planner](graph, steps)
            plan_s = time.perf_counter() - t0
            worst, summed = quality(plan)
            rows.append(dict({
                "fabric": fabric_name(kind, params), "kind": kind, "params": params, "hosts": p,
                "switches": len(fabric.switches(graph)), "placement": pname, "planner": planner,
                "steps": len(steps), "pairs": sum(len(s) for s in steps), "plan_s": plan_s,
                "graph_build_s": build_s, "max_load": list(plan.max_load),
                "lower_bound": list(plan.lower_bound), "ratio": worst, "sum_ratio": summed,
            }, **extra))
    return rows


def run(quick=False, max_hosts=None, seed=7, progress=None, fabrics=None):
    """Rows for every fabric up to ``max_hosts`` hosts (QUICK_MAX_HOSTS with ``quick``)."""
    limit = max_hosts if max_hosts is not None else (QUICK_MAX_HOSTS if quick else None)
    rows = []
    for kind, params in fabrics or FABRICS:
        if limit is not None and fabric_hosts(kind, params) > limit:
            continue
        t0 = time.perf_counter()
        new = run_one(kind, params, seed=seed)
        rows.extend(new)
        if progress:
            progress("planner scale: %s (%d hosts) in %.1f s: %s" % (
                fabric_name(kind, params), fabric_hosts(kind, params), time.perf_counter() - t0,
                ", ".join("%s/%s %.3f s ratio %.2f" % (r["placement"], r["planner"], r["plan_s"], r["ratio"])
                          for r in new)))
    return rows


def format_table(rows):
    """Markdown table of planner-scale rows."""
    out = ["| fabric | hosts | placement | planner | steps | pairs | plan time | max load per step | lower bound | worst ratio | sum ratio |",
           "|---|---:|---|---|---:|---:|---:|---|---|---:|---:|"]
    for r in rows:
        out.append("| %s | %d | %s | %s | %d | %d | %s | %s | %s | %.2f | %.2f |" % (
            r["fabric"], r["hosts"], r["placement"], r["planner"], r["steps"], r["pairs"],
            fmt_seconds(r["plan_s"]), _short(r["max_load"]), _short(r["lower_bound"]), r["ratio"], r["sum_ratio"]))
    return "\n".join(out)


def _short(values, limit=8):
    values = list(values)
    text = ",".join(str(v) for v in values[:limit])
    return "[%s%s]" % (text, ",..." if len(values) > limit else "")


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fabrics of at most %d hosts" % QUICK_MAX_HOSTS)
    parser.add_argument("--max-hosts", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the rows to this file")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    rows = run(quick=args.quick, max_hosts=args.max_hosts, seed=args.seed,
               progress=lambda msg: print(msg, flush=True))
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
