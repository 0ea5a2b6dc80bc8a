"""Job-routing planner scale (no Mininet): time and quality of the pair routers of issue 15.

For every fabric (leaf-spines and k-ary fat-trees up to 4096 hosts, primitives/fattree.py) and
demand (``perm``: one random permutation; ``shift``: every host sends to the same position one
leaf further, so every flow leaves its leaf; ``dense``: the union of 16 random permutations,
~16 x hosts flows), every router of ``primitives.PAIR_ROUTERS`` plans the demand (the default
routes' models ``dmodk`` and ``ecmp`` of primitives/pair_routing.py among them).

Reported per row: the planner's time (best of ``--repeat`` runs, wall and CPU: the machine is
shared, CPU time is the steadier figure), the busiest directed switch link in flows
(``max_flows``) and in bytes (``max_bytes``, random sizes 1..1000), the demand's node load NL_D and
the cut lower bound (jobroute_optimal.lower_bound: no single-path routing does better).

    .venv/bin/python bench/jobroute_scale.py [--quick] [--routers a,b] [--json OUT] [--repeat N]

The target of issue 15 is SDN-optimal under 1 s for 4096 hosts and a dense demand.
"""
import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

from benchcore import fmt_seconds  # noqa: E402
from planner_scale import build, fabric_hosts, fabric_name  # noqa: E402
from sdnmpi.primitives import PAIR_ROUTERS, fabric, pairs  # noqa: E402
from sdnmpi.primitives.jobroute_optimal import lower_bound  # noqa: E402

FABRICS = [
    ("kary", {"k": 8}),                                                     # 128
    ("leaf_spine", {"spines": 16, "leaves": 32, "hosts_per_leaf": 16}),     # 512
    ("kary", {"k": 16}),                                                    # 1024
    ("kary", {"k": 22}),                                                    # 2662
    ("leaf_spine", {"spines": 64, "leaves": 64, "hosts_per_leaf": 64}),     # 4096
    ("leaf_spine", {"spines": 32, "leaves": 64, "hosts_per_leaf": 64}),     # 4096 (2:1)
    ("kary", {"k": 16, "hosts_per_edge": 32}),                              # 4096 (4:1)
]
QUICK_MAX_HOSTS = 1024
DENSE = 16


def demands(graph, seed):
    """{name: merged demand} (see the module docstring)."""
    rng = random.Random(seed)
    hosts = fabric.hosts(graph)
    per_leaf = len(hosts) // len(fabric.leaves(graph))

    def permutations(count):
        flows = []
        for _ in range(count):
            order = hosts[:]
            rng.shuffle(order)
            flows += [pairs.Flow(a, b, rng.randint(1, 1000)) for a, b in zip(hosts, order)]
        return pairs.merge(flows)

    shift = [pairs.Flow(h, hosts[(i + per_leaf) % len(hosts)], rng.randint(1, 1000)) for i, h in enumerate(hosts)]
    return {"perm": permutations(1), "shift": pairs.merge(shift), "dense": permutations(DENSE)}


def timed(fn, repeat):
    """(result, best wall seconds, best CPU seconds) of ``repeat`` calls."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
    return result, wall, cpu


def run_one(kind, params, routers, repeat=3, seed=7):
    graph = build(kind, params)
    rows = []
    for dname, demand in demands(graph, seed).items():
        bound, nld = lower_bound(graph, demand), pairs.node_load(demand)
        for name in routers:
            fn = lambda: PAIR_ROUTERS[name](graph, demand, seed=seed)  # noqa: E731
            paths, wall, cpu = timed(fn, repeat)
            load = pairs.link_load(graph, demand, paths)
            rows.append({"fabric": fabric_name(kind, params), "hosts": len(fabric.hosts(graph)),
                         "demand": dname, "flows": len(demand), "router": name, "wall_s": wall,
                         "cpu_s": cpu, "max_flows": load.max_flows(), "max_bytes": load.max_bytes(),
                         "nl_d": nld, "lower_bound": bound,
                         "fabric_routes": isinstance(paths, pairs.FabricRoutes)})
    return rows


def fmt_row(row):
    return "%-34s %5d %-5s %6d  %-17s %8s %8s  %4d %4d %4d  %9.0f" % (
        row["fabric"], row["hosts"], row["demand"], row["flows"], row["router"] + ("*" if row["fabric_routes"] else ""),
        fmt_seconds(row["wall_s"]), fmt_seconds(row["cpu_s"]), row["max_flows"], row["lower_bound"],
        row["nl_d"], row["max_bytes"])


HEADER = "%-34s %5s %-5s %6s  %-17s %8s %8s  %4s %4s %4s  %9s" % (
    "fabric", "hosts", "dem.", "flows", "router", "wall", "cpu", "max", "LB", "NL_D", "max bytes")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fabrics up to %d hosts" % QUICK_MAX_HOSTS)
    parser.add_argument("--routers", default=",".join(sorted(PAIR_ROUTERS)),
                        help="comma-separated routers (default: all registered)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, the best is kept (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    args.routers = [r for r in args.routers.split(",") if r]
    unknown = [r for r in args.routers if r not in PAIR_ROUTERS]
    if unknown or args.repeat < 1:
        parser.error("unknown router(s) %s" % ", ".join(unknown) if unknown else "--repeat must be >= 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = []
    print(HEADER)
    for kind, params in FABRICS:
        if args.quick and fabric_hosts(kind, params) > QUICK_MAX_HOSTS:
            continue
        for row in run_one(kind, params, args.routers, args.repeat, args.seed):
            print(fmt_row(row), flush=True)
            rows.append(row)
    print("(* = FabricRoutes: left to the default ECMP routes; max/LB/NL_D in flows per directed link)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
