"""SDN-greedy pair routers (issue 15): a whole job's heavy flows, one at a time.

The flows of the demand are placed heaviest first (bytes, ties by pair); each takes the shortest
path whose most-loaded link is least loaded so far (then the least total load), counting the load
``load`` that other jobs already put on the fabric and the flows of this demand placed before it.

- ``sdn_greedy``: load = flows per directed switch link (the issue's SDN-greedy).
- ``sdn_greedy_bytes``: load = bytes per capacity; better when flow sizes differ, since bytes, not
  flow counts, set the finish time.

Contract: primitives/pairs.py. Deterministic (``seed`` is ignored).
"""
import collections
import logging

from . import pairs
from .leastload import LeastLoadRouter, NoPathError

LOG = logging.getLogger(__name__)


def sdn_greedy(graph, demand, load=None, seed=None):
    return place(graph, pairs.checked(graph, demand), load, by_bytes=False)


def sdn_greedy_bytes(graph, demand, load=None, seed=None):
    return place(graph, pairs.checked(graph, demand), load, by_bytes=True)


def place(graph, flows, load=None, by_bytes=False):
    """Greedy placement of ``flows`` (checked, merged: see pairs.checked) in the order given."""
    total = load.copy() if load is not None else pairs.LinkLoad()
    metric = total.bytes if by_bytes else total.flows
    router = LeastLoadRouter(graph)
    paths, leaf = {}, pairs.leaves_of(graph, flows)
    for flow in flows:
        a, b = leaf[flow.src], leaf[flow.dst]
        try:
            switches = router.best_path(a, b, metric)
        except NoPathError as err:
            raise pairs.DemandError("%s -> %s: %s" % (flow.src, flow.dst, err)) from None
        path = [flow.src, *switches, flow.dst]
        total.add_path(graph, path, flow.bytes)
        paths[flow.src, flow.dst] = path
    return paths


def improve(graph, flows, paths, load=None, by_bytes=False, rounds=64):
    """Rip-up and re-route: each flow of ``flows`` on a busiest link (its ``paths``, on top of
    ``load``) moves to the least-loaded shortest path when that path, with the flow, stays below
    the busiest load; repeated while a round lowers the busiest load or the number of links
    that carry it (at most ``rounds``). Updates and returns ``paths``; the busiest load never
    rises, nor does the number of flows on the busiest link (by bytes, a move that would put a
    flow on a link already at the most flows is not made). Each round looks only at the flows on
    the busiest links."""
    total = pairs.link_load(graph, flows, paths, base=load)
    metric = total.bytes if by_bytes else total.flows
    cap = total.max_flows()
    router, leaf = LeastLoadRouter(graph), pairs.leaves_of(graph, flows)
    on_link = collections.defaultdict(set)
    for n, flow in enumerate(flows):
        for link in pairs.switch_links(graph, paths[flow.src, flow.dst]):
            on_link[link].add(n)

    def busiest():
        top = max(metric.values(), default=0)
        return top, sorted(link for link, v in metric.items() if v >= top)

    for _round in range(rounds):
        top, links = busiest()
        for n in sorted({n for link in links for n in on_link[link]}):
            flow = flows[n]
            path = paths[flow.src, flow.dst]
            old = pairs.switch_links(graph, path)
            if max(metric[link] for link in old) < top:
                continue
            total.add_path(graph, path, -flow.bytes, flows=-1)
            other = [flow.src, *router.best_path(leaf[flow.src], leaf[flow.dst], metric), flow.dst]
            new = pairs.switch_links(graph, other)
            weight = [flow.bytes / graph.edges[link].get("capacity", 1) if by_bytes else 1 for link in new]
            if (max(metric[link] + w for link, w in zip(new, weight)) < top
                    and max(total.flows[link] + 1 for link in new) <= cap):
                for link in old:
                    on_link[link].discard(n)
                for link in new:
                    on_link[link].add(n)
                path = other
            total.add_path(graph, path, flow.bytes)
            paths[flow.src, flow.dst] = path
        after, after_links = busiest()
        if (after, len(after_links)) >= (top, len(links)):
            break
    return paths
