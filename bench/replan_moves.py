"""Route moves when a phase is planned again with more pairs (no Mininet): fresh plan vs incremental.

Flow detection declares a job's phase 0 again each time it flags new pairs (hints do the same as
they accumulate), and the controller plans the phase again. A running pair whose path changes is
*moved* (at 5 Mbit/s a moved flow loses 1-2 s getting back to full rate, docs/flows.md). For each
case: a random demand (a permutation without fixed points, or ``density`` of them merged) with
random byte counts, its pairs in a random arrival order cut into ``batches`` equal batches; after
each batch the demand so far is planned

- ``fresh``: from scratch (the router alone, as before ``previous=``),
- ``incremental``: with the previous plan's paths passed as ``previous=`` (jobroute_incremental.py),
  what the controller does for a declared phase (hints adding up; controller/jobtraffic.py), and
- ``seeded``: the same, and the pairs not planned yet seeded with their D-mod-K paths (where they
  run on the default routes until then), the better of that and ``incremental`` by moves
  (primitives.seeding.plan): what the controller does for flow detection's plans
  (--sdnmpi-flow-seed, on by default) and ``sdnmpi-sim job --detected``,

and the pairs of the earlier batches whose path differs from the previous plan's (in that mode) are
counted as moved (first table), the new pairs whose path differs from their D-mod-K path too (second
table, with the seeded plans that are the unseeded one because the seeds alone moved more).
``--least``: for the rows without another job's load, also the least number of moves of
earlier pairs that any routing with the fresh plan's busiest link (flows) could make from the
incremental mode's previous plan, by an integer program over every pair's shortest paths
(scipy.optimize.milp). Every plan's busiest link (flows, and bytes for the byte variant, with the
other job's load) is compared with the fresh plan's of the same demand and with the cut bound
(jobroute_optimal.lower_bound, the demand alone). Rows with "other job": another job's random
permutation, planned by the same router, is on the fabric first (the planner then deals colours to
uplinks by load, ``_deal_by_load``).

    nice -n 19 .venv/bin/python bench/replan_moves.py [--cases 200] [--seed 1] [--least] [--json OUT]
    nice -n 19 .venv/bin/python bench/replan_moves.py --scale      # 1024-4096 hosts, CPU time

The tables it prints are in docs/jobroute.md ("Re-planning a phase with more pairs").
"""
import argparse
import os
import random
import sys
import time

import networkx as nx
import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (ROOT, HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from bench_common import write_json  # noqa: E402
from sdnmpi.primitives import PAIR_ROUTERS, fabric, fattree, pair_routing, pairs, seeding  # noqa: E402
from sdnmpi.primitives.jobroute_optimal import lower_bound, sdn_optimal  # noqa: E402

# (label, builder, arguments)
FABRICS = {
    "k4": ("k=4 fat-tree (16 hosts)", "kary", (4,)),
    "k4-3": ("k=4, 3 hosts per edge (tapered 3:2)", "kary", (4, 3)),
    "k6": ("k=6 fat-tree (54 hosts)", "kary", (6,)),
    "ls": ("leaf-spine 2 spines x 4 leaves x 4 hosts (2:1)", "leaf_spine", (2, 4, 4)),
}
MODES = ("fresh", "incremental", "seeded")
# (fabric, router, batches, density, load)
DEFAULT_RUNS = [
    ("k4", "sdn-optimal", 2, 1, False),
    ("k4", "sdn-optimal", 3, 1, False),
    ("k4", "sdn-optimal", 4, 1, False),
    ("k4", "sdn-optimal", 2, 2, False),
    ("k4", "sdn-optimal", 2, 1, True),
    ("k4", "sdn-optimal-bytes", 2, 1, False),
    ("k4-3", "sdn-optimal", 2, 1, False),
    ("k6", "sdn-optimal", 2, 1, False),
    ("k6", "sdn-optimal", 4, 1, False),
    ("ls", "sdn-optimal", 2, 1, False),
    ("ls", "sdn-optimal", 2, 2, False),
]


def random_demand(hosts, rng, density):
    flows = []
    for _ in range(density):
        perm = hosts[:]
        rng.shuffle(perm)
        flows += [pairs.Flow(a, b, rng.randint(1, 1000)) for a, b in zip(hosts, perm) if a != b]
    merged = pairs.merge(flows)
    rng.shuffle(merged)
    return merged


def least_moves(graph, demand, previous, bound):
    """The fewest pairs of ``previous`` ({pair: path}) that any routing of ``demand`` on shortest
    paths with at most ``bound`` flows on every directed switch link must move (an integer program;
    each pair picks one of its shortest paths)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    columns, cost = [], []                 # per variable: (flow index, path); cost 1 = a move
    for i, f in enumerate(demand):
        for path in nx.all_shortest_paths(graph, f.src, f.dst):
            columns.append((i, path))
            old = previous.get((f.src, f.dst))
            cost.append(1.0 if old is not None and old != path else 0.0)
    links = {}
    rows, cols = [], []
    for j, (i, path) in enumerate(columns):
        rows.append(i)
        cols.append(j)
    one = numpy.zeros((len(demand), len(columns)))
    one[rows, cols] = 1
    for j, (i, path) in enumerate(columns):
        for link in pairs.switch_links(graph, path):
            links.setdefault(link, []).append(j)
    cap = numpy.zeros((len(links), len(columns)))
    for r, js in enumerate(links.values()):
        cap[r, js] = 1
    result = milp(numpy.array(cost), integrality=numpy.ones(len(columns)), bounds=Bounds(0, 1),
                  constraints=[LinearConstraint(one, 1, 1), LinearConstraint(cap, 0, bound)])
    if not result.success:
        raise RuntimeError("no routing within %d flows per link: %s" % (bound, result.message))
    return round(result.fun)


def busiest(graph, demand, paths, load, by_bytes):
    total = pairs.link_load(graph, demand, paths, base=load)
    return (total.max_flows(), round(total.max_bytes(), 6)) if by_bytes else (total.max_flows(),)


def empty():
    return {"old": 0, "new": 0, "replans": 0, "plans": 0, "least": 0, "fallback": 0,
            **{key: dict.fromkeys(MODES, 0) for key in ("moved", "moved_new", "above_bound", "worse", "better")}}


def run_case(graph, router, batches, density, with_load, rng, least=False):
    """One case: moves and quality checks of each mode, summed over its plans (see `empty`)."""
    hosts = fabric.hosts(graph)
    route = PAIR_ROUTERS[router]
    by_bytes = router.endswith("-bytes")
    load = None
    if with_load:
        other = random_demand(hosts, rng, 1)
        load = pairs.link_load(graph, other, route(graph, other))
    order = random_demand(hosts, rng, density)
    cuts = [round(len(order) * b / batches) for b in range(1, batches + 1)]
    out, before, old = empty(), dict.fromkeys(MODES, {}), 0
    for cut in cuts:
        demand = pairs.merge(order[:cut])
        default = pair_routing.dmodk(graph, demand)        # where a pair not yet planned runs
        plans = {"fresh": route(graph, demand, load=load),
                 "incremental": route(graph, demand, load=load, previous=before["incremental"]),
                 "seeded": seeding.plan(route, graph, demand, "dmodk", load=load, previous=before["seeded"] or None)}
        bound = lower_bound(graph, demand)
        if least and before["incremental"]:
            out["least"] += least_moves(graph, demand, before["incremental"],
                                        pairs.link_load(graph, demand, plans["fresh"]).max_flows())
        fresh = busiest(graph, demand, plans["fresh"], load, by_bytes)
        seeds = seeding.running_paths(graph, demand, "dmodk", before["seeded"])
        out["fallback"] += plans["seeded"] != route(graph, demand, load=load, previous=seeds)
        for mode, paths in plans.items():
            now = {**default, **before[mode]}
            out["moved"][mode] += sum(1 for p in before[mode] if paths[p] != now[p])
            out["moved_new"][mode] += sum(1 for p in default if p not in before[mode] and paths[p] != now[p])
            out["above_bound"][mode] += pairs.link_load(graph, demand, paths).max_flows() > bound
            mine = busiest(graph, demand, paths, load, by_bytes)
            out["worse"][mode] += mine > fresh
            out["better"][mode] += mine < fresh
            before[mode] = dict(paths)
        out["old"] += old                # the pairs of the earlier batches (``order`` has no repeats)
        out["new"] += cut - old
        out["replans"] += cut != cuts[0]
        out["plans"] += 1
        old = cut
    return out


def run(spec, router, batches, density, with_load, cases, seed, least=False):
    label, builder, args = FABRICS[spec]
    graph = getattr(fattree, builder)(*args)
    rng = random.Random("%s/%s/%d/%d/%s/%d" % (spec, router, batches, density, with_load, seed))
    total = empty()
    least = least and not with_load
    for _ in range(cases):
        one = run_case(graph, router, batches, density, with_load, rng, least)
        for key, value in one.items():
            if isinstance(value, dict):
                for mode in value:
                    total[key][mode] += value[mode]
            else:
                total[key] += value
    total.update(fabric=label, router=router, batches=batches, density=density, load=with_load, cases=cases)
    if not least:
        total["least"] = None
    return total


def _pct(n, of):
    return "%d (%.1f %%)" % (n, 100.0 * n / max(of, 1))


def _row_head(r):
    return "| %s | %s | %s | %d | %s |" % (
        r["fabric"], r["router"], "permutation" if r["density"] == 1 else "%d permutations" % r["density"],
        r["batches"], "yes" if r["load"] else "no")


def table(results):
    """Moves of the earlier batches' pairs, fresh against incremental, and the quality checks."""
    lines = ["| fabric | router | demand | batches | other job | re-plans | old pairs | moved: fresh | "
             "moved: incremental | least possible | fewer | incremental worse / better than fresh | "
             "above the cut bound (fresh / incremental) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        fresh, inc = r["moved"]["fresh"], r["moved"]["incremental"]
        lines.append("%s %d | %d | %s | %s | %s | %.0f %% | %d / %d | %d / %d of %d |" % (
            _row_head(r), r["replans"], r["old"], _pct(fresh, r["old"]), _pct(inc, r["old"]),
            "-" if r["least"] is None else _pct(r["least"], r["old"]), 100 * (1 - inc / fresh) if fresh else 0,
            r["worse"]["incremental"], r["better"]["incremental"],
            r["above_bound"]["fresh"], r["above_bound"]["incremental"], r["plans"]))
    return "\n".join(lines)


def seeded_table(results):
    """Every running pair's moves, the new ones' counted from their D-mod-K paths, in all 3 modes."""
    lines = ["| fabric | router | demand | batches | other job | new pairs moved off D-mod-K: fresh / incremental / "
             "seeded | old pairs moved: fresh / incremental / seeded | all moves: fresh / incremental / seeded | "
             "seeded plans that kept the unseeded one (it moved fewer) | "
             "seeded worse / better than fresh | seeded above the cut bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        every = {m: r["moved"][m] + r["moved_new"][m] for m in MODES}
        lines.append("%s %s | %s | %s | %d | %d / %d | %d of %d |" % (
            _row_head(r), " / ".join(_pct(r["moved_new"][m], r["new"]) for m in MODES),
            " / ".join(_pct(r["moved"][m], r["old"]) for m in MODES),
            " / ".join(_pct(every[m], r["new"] + r["old"]) for m in MODES),
            r["fallback"],
            r["worse"]["seeded"], r["better"]["seeded"], r["above_bound"]["seeded"], r["plans"]))
    return "\n".join(lines)


# (label, builder, arguments) of the --scale rows: one demand each, half its pairs first
SCALE_FABRICS = [("k=16 fat-tree (1024 hosts)", "kary", (16,)),
                 ("k=24 fat-tree (3456 hosts)", "kary", (24,)),
                 ("leaf-spine 32 x 64 x 64 (4096 hosts, 2:1)", "leaf_spine", (32, 64, 64))]


def scale(seed):
    """Large trees: one random order of a demand of 1 and of 4 permutations, half its pairs first,
    then all: moved old pairs and the planner's CPU time, fresh and incremental."""
    lines = ["| fabric | demand | old pairs | moved: fresh | moved: incremental | CPU s: fresh / incremental | "
             "busiest link (flows): fresh / incremental |", "|---|---|---|---|---|---|---|"]
    for label, builder, args in SCALE_FABRICS:
        graph = getattr(fattree, builder)(*args)
        for density in (1, 4):
            order = random_demand(fabric.hosts(graph), random.Random("%s/%d/%d" % (label, density, seed)), density)
            half = pairs.merge(order[:len(order) // 2])
            demand = pairs.merge(order)
            before = sdn_optimal(graph, half)
            plans, cpu = {}, {}
            for mode, previous in (("fresh", None), ("incremental", before)):
                start = time.process_time()
                plans[mode] = sdn_optimal(graph, demand, previous=previous)
                cpu[mode] = time.process_time() - start
            moved = {m: sum(1 for p in before if plans[m][p] != before[p]) for m in plans}
            lines.append("| %s | %s | %d | %s | %s | %.2f / %.2f | %d / %d |" % (
                label, "permutation" if density == 1 else "%d permutations" % density, len(half),
                _pct(moved["fresh"], len(half)), _pct(moved["incremental"], len(half)), cpu["fresh"],
                cpu["incremental"], *(pairs.link_load(graph, demand, plans[m]).max_flows() for m in plans)))
            print(lines[-1], flush=True)
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="random demands per row (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--scale", action="store_true",
                        help="only the large trees (1024-4096 hosts): moves and the planner's CPU time")
    parser.add_argument("--least", action="store_true",
                        help="also the least possible moves (an integer program per re-plan; minutes)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.scale:
        text = scale(args.seed)
        print()
        print(text)
        return 0
    results = []
    for spec, router, batches, density, with_load in DEFAULT_RUNS:
        results.append(run(spec, router, batches, density, with_load, args.cases, args.seed, args.least))
        print(table(results[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(results))
    print()
    print(seeded_table(results))
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
