#!/usr/bin/env python3
"""CPU time of the Bcast tree planner (`primitives.bcast.trees`) for a communicator of every host
of the 4096-host fabrics of bench/planner_scale.py, root = the first host (`primitives.fabric.hosts`
order), 1, 2 and 8 trees.

    .venv/bin/python bench/bcast_tree_time.py [--repeat 5] [--max-hosts N]

Prints one line per fabric and tree count: the median, min and max of --repeat calls' process CPU
time (the first call warms networkx's caches and is the max)."""
import argparse
import statistics
import time

import planner_scale
from sdnmpi.primitives import bcast, fabric

TREES = (1, 2, 8)


def time_trees(graph, count, repeat):
    """Seconds of CPU of ``repeat`` calls of bcast.trees over every host of ``graph``, with the trees."""
    hosts, times, built = fabric.hosts(graph), [], None
    for _ in range(repeat):
        start = time.process_time()
        built = bcast.trees(graph, hosts[0], hosts, count)
        times.append(time.process_time() - start)
    return times, built


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-hosts", type=int, default=4096, help="the largest fabrics up to this many hosts")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.max_hosts < 2:
        parser.error("--repeat must be >= 1 and --max-hosts >= 2")
    sizes = [planner_scale.fabric_hosts(k, p) for k, p in planner_scale.FABRICS]
    top = max([n for n in sizes if n <= args.max_hosts], default=None)
    if top is None:
        parser.error("no fabric of bench/planner_scale.py has at most %d hosts" % args.max_hosts)
    for (kind, params), nhosts in zip(planner_scale.FABRICS, sizes):
        if nhosts != top:
            continue
        graph = planner_scale.build(kind, params)
        for count in TREES:
            times, built = time_trees(graph, count, args.repeat)
            print("%s, %d hosts, %d tree(s) asked, %d built: median %.1f ms CPU (min %.1f, max %.1f)" % (
                planner_scale.fabric_name(kind, params), nhosts, count, len(built),
                1e3 * statistics.median(times), 1e3 * min(times), 1e3 * max(times)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
