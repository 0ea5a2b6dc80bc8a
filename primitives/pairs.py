"""Host-pair routing: the contract shared by the job-routing planners and the simulator.

A *demand* is a list of ``Flow(src, dst, bytes)``: host nodes of the fabric graph
(primitives/fabric.py; MACs in the controller, whatever node ids the simulator's graph uses),
``src != dst``, ``bytes > 0``. A *pair router* is a pure function

    router(graph, demand, load=None, seed=None) -> {(src, dst): path}

where ``path`` is the list of nodes of one shortest path from ``src`` to ``dst`` (both hosts
included) and ``load`` is an optional ``LinkLoad`` already on the fabric (other jobs' routes) that
the router may take into account. Routers are registered by name in ``primitives.PAIR_ROUTERS``,
the one registry that the controller and the simulator both read. ``seed`` makes randomised
routers repeatable; deterministic routers ignore it.

A router may return a ``FabricRoutes`` (a dict subclass, same contract) instead of a plain dict:
then its paths only *model* what the fabric's default routing (``.policy``, a key of
``primitives.DEFAULT_ROUTING``, e.g. "ecmp") does with those pairs. The simulator uses the paths;
the controller installs nothing for them and leaves the pairs to the default routes.
Bad input raises ``DemandError`` (an ``errors.PlanRefused``): a host not in the graph; hosts with no
path raise it or networkx's ``NetworkXNoPath`` (from primitives/paths.py). Anything else is a bug.

Link load is directional: a switch-to-switch edge carries load ``u -> v`` and ``v -> u``
separately. Bytes are divided by the edge's ``capacity`` attribute (default 1), as PFSim does.
"""
import collections
import logging

from . import fabric
from .errors import PlanRefused

LOG = logging.getLogger(__name__)

Flow = collections.namedtuple("Flow", "src dst bytes")


class DemandError(PlanRefused):
    """A demand names a host that is not in the graph, or hosts that have no path between them."""


class FabricRoutes(dict):
    """{(src, dst): path} that the fabric's default routing ``policy`` takes by itself (see above)."""

    def __init__(self, paths, policy):
        super().__init__(paths)
        self.policy = policy


class LinkLoad:
    """Per directed switch-to-switch link: flows and bytes/capacity."""

    def __init__(self):
        self.flows = collections.Counter()
        self.bytes = collections.Counter()

    def copy(self):
        other = LinkLoad()
        other.flows = self.flows.copy()
        other.bytes = self.bytes.copy()
        return other

    def add_path(self, graph, path, nbytes, flows=1):
        for u, v in switch_links(graph, path):
            self.flows[u, v] += flows
            self.bytes[u, v] += nbytes / graph.edges[u, v].get("capacity", 1)

    def max_flows(self):
        return max(self.flows.values(), default=0)

    def max_bytes(self):
        return max(self.bytes.values(), default=0)


def switch_links(graph, path):
    """The directed switch-to-switch links of ``path`` (host access links excluded)."""
    kinds = [graph.nodes[n].get("kind") for n in path]
    return [(path[i], path[i + 1]) for i in range(len(path) - 1)
            if kinds[i] == fabric.SWITCH and kinds[i + 1] == fabric.SWITCH]


def link_load(graph, demand, paths, base=None):
    """The LinkLoad of ``demand`` routed on ``paths`` ({(src, dst): path}), on top of ``base``."""
    load = base.copy() if base is not None else LinkLoad()
    for flow in demand:
        load.add_path(graph, paths[flow.src, flow.dst], flow.bytes)
    return load


def node_load(demand):
    """NL_D: the largest number of flows out of or into one host. No single-path routing of the
    demand on a fat-tree can put fewer flows than this on its busiest link."""
    out = collections.Counter(f.src for f in demand)
    into = collections.Counter(f.dst for f in demand)
    return max(list(out.values()) + list(into.values()), default=0)


def merge(demand):
    """One Flow per (src, dst), bytes added up, pairs with src == dst or no bytes dropped,
    heaviest first; ties keep the order in which their pairs first appear in ``demand`` (PFSim's
    order: a stable sort of the pairs as the rank traffic matrix lists them), so the order is
    repeatable for a given demand."""
    total = {}
    for f in demand:
        if f.src != f.dst and f.bytes > 0:
            total[f.src, f.dst] = total.get((f.src, f.dst), 0) + f.bytes
    return [Flow(s, d, b) for (s, d), b in sorted(total.items(), key=lambda kv: -kv[1])]


def checked(graph, demand):
    """``merge(demand)``, after checking that every host is a host node of ``graph``."""
    merged = merge(demand)
    for host in {f.src for f in merged} | {f.dst for f in merged}:
        if host not in graph or graph.nodes[host].get("kind") != fabric.HOST:
            raise DemandError("host %s is not in the topology" % (host,))
    return merged


def leaves_of(graph, demand):
    """{host: the switch it is attached to} for the hosts of ``demand``."""
    hosts = {f.src for f in demand} | {f.dst for f in demand}
    return {h: fabric.attachment(graph, h)[0] for h in hosts}
