"""One job on the fabric: host selection, rank mapping, the host-pair demand, routing and link loads.

PFSim's counting rules (../shared/pfsim-data/README.md): rank pairs are folded into host pairs
(pairs inside one host add nothing), host pairs are routed one at a time, heaviest first (ties in
the order the rank matrix lists them, row by row), each on one shortest path, and each pair's
bytes / capacity are added to every switch-to-switch link of its path. ``max_link_bytes`` is the
maximum over those links; ``max_link_flows`` the largest number of rank pairs on one of them.
"""
import logging
import random

import networkx as nx
import numpy as np

from ..primitives import PAIR_ROUTERS, pairs, paths, reroute, seeding
from . import timemodel

LOG = logging.getLogger(__name__)

HOST_POLICIES = ("linear", "random")
MAPPINGS = ("block", "cyclic", "random")
DEFAULT_LINK_BW = 10e9 / 8  # bytes/s: 10 Gbit/s, when the topology has no bandwidth
#: routers whose paths depend only on the graph, the demand and the load (not on ``seed``): a
#: scenario may reuse their routes for the same placement on an empty fabric. Any other router
#: (``random``, the job-routing planners) is run for every job, so that results do not depend on
#: which scenarios share a process.
SEEDLESS = frozenset({"dmodk", "single", "ecmp", "greedy", "greedy2"})


class SimError(ValueError):
    """A job or scenario that cannot be simulated; the message is one line."""


def router_of(name):
    try:
        return PAIR_ROUTERS[name]
    except KeyError:
        raise SimError(f"unknown router {name!r} (known: {', '.join(sorted(PAIR_ROUTERS))})") from None


def select_hosts(hosts, pes, free, n_procs, policy, rng):
    """PFSim's host selectors over ``hosts`` (fabric order); ``free`` is a set of free hosts.

    linear: the smallest block of consecutive free hosts with enough processing elements, else
    the largest blocks first; random: distinct free hosts drawn at random until the job fits,
    returned in fabric order."""
    available = sum(pes[h] for h in hosts if h in free)
    if available < n_procs:
        raise SimError(f"the job has {n_procs} ranks but only {available} processing elements are free")
    if policy == "linear":
        blocks, block = [], []
        for h in hosts:
            if h in free:
                block.append(h)
            elif block:
                blocks.append(block)
                block = []
        if block:
            blocks.append(block)
        fitting = sorted((b for b in blocks if sum(pes[h] for h in b) >= n_procs), key=len)
        order = fitting or sorted(blocks, key=len, reverse=True)
        candidates = [h for b in order for h in b]
    elif policy == "random":
        candidates = [h for h in hosts if h in free]
        rng.shuffle(candidates)
    else:
        raise SimError(f"unknown host selection {policy!r} (known: {', '.join(HOST_POLICIES)})")
    chosen, togo = [], n_procs
    for h in candidates:
        if togo <= 0:
            break
        chosen.append(h)
        togo -= pes[h]
    if policy == "random":
        position = {h: i for i, h in enumerate(hosts)}
        chosen.sort(key=position.__getitem__)
    return chosen


def map_ranks(chosen, pes, n_procs, policy, rng):
    """Rank -> host: block (ranks 0..pes-1 on the first host, ...), cyclic (round-robin over the
    hosts' free slots) or random (the hosts shuffled, then block)."""
    if policy == "block" or policy == "random":
        order = list(chosen)
        if policy == "random":
            rng.shuffle(order)
        slots = [h for h in order for _ in range(pes[h])]
    elif policy == "cyclic":
        most = max(pes[h] for h in chosen)
        slots = [h for r in range(most) for h in chosen if r < pes[h]]
    else:
        raise SimError(f"unknown mapping {policy!r} (known: {', '.join(MAPPINGS)})")
    return slots[:n_procs]


class Template:
    """A job's host-pair demand in terms of host *positions* (0 = the first chosen host, ...), in
    PFSim's routing order: heaviest first, ties by first appearance when the rank matrix is walked
    row by row in ``row_order``. Arrays ``src``, ``dst`` (positions), ``bytes``, ``rank_pairs``."""

    def __init__(self, tm, counts, rank_pos, row_order=None):
        rank_pos = np.asarray(rank_pos)
        n_pos = int(rank_pos.max()) + 1 if len(rank_pos) else 0
        rows = np.arange(len(rank_pos)) if row_order is None else np.asarray(row_order)
        src, dst = np.nonzero(counts[rows])
        src = rows[src]
        hs, hd = rank_pos[src], rank_pos[dst]
        keep = hs != hd
        src, dst, hs, hd = src[keep], dst[keep], hs[keep], hd[keep]
        key = hs * n_pos + hd
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        total = np.bincount(inverse, weights=tm[src, dst].astype(float), minlength=len(uniq))
        count = np.bincount(inverse, minlength=len(uniq))
        order = np.argsort(first, kind="stable")
        order = order[np.argsort(-total[order], kind="stable")]
        self.src, self.dst = uniq[order] // max(n_pos, 1), uniq[order] % max(n_pos, 1)
        self.bytes, self.rank_pairs = total[order], count[order]

    def demand(self, hosts):
        """(demand, flows) on the chosen ``hosts``: Flows with bytes (PFSim's order) and
        {(src, dst): rank pairs folded into the pair}."""
        src = [hosts[i] for i in self.src.tolist()]
        dst = [hosts[i] for i in self.dst.tolist()]
        flows = dict(zip(zip(src, dst), self.rank_pairs.tolist()))
        demand = [pairs.Flow(s, d, int(round(b)))
                  for s, d, b in zip(src, dst, self.bytes.tolist()) if b > 0]
        return demand, flows


def host_demand(tm, counts, rank_host, row_order=None):
    """Folds a rank matrix into host pairs. ``tm``: rank bytes (n x n, PFSim's traffic matrix),
    ``counts``: True where the rank pair exchanged messages; ``rank_host``: host of each rank;
    ``row_order``: the order in which to walk the rows (``Trace.file_order``, as PFSim does).
    Returns `Template.demand`'s (demand, flows)."""
    hosts = list(dict.fromkeys(rank_host))
    position = {h: i for i, h in enumerate(hosts)}
    return Template(tm, counts, [position[h] for h in rank_host], row_order).demand(hosts)


class Placement:
    """Where a job runs: ``hosts`` (chosen, fabric order), ``rank_host`` (host of each rank) and
    ``rank_pos`` (each rank's host as a position in ``hosts``)."""

    def __init__(self, hosts, rank_host):
        self.hosts = hosts
        self.rank_host = rank_host
        position = {h: i for i, h in enumerate(hosts)}
        self.rank_pos = tuple(position[h] for h in rank_host)


def place(graph, n_procs, host_policy="linear", mapping="block", free=None, rng=None):
    rng = rng or random.Random(0)
    hosts = paths.index(graph).hosts
    pes = {h: int(graph.nodes[h].get("pes", 1)) for h in hosts}
    free = set(hosts) if free is None else free
    chosen = select_hosts(hosts, pes, free, n_procs, host_policy, rng)
    return Placement(chosen, map_ranks(chosen, pes, n_procs, mapping, rng))


class Routed:
    """A routed job: per routed host pair its path, bytes and rank-pair count, plus per-link
    arrays over the graph's link ids (primitives/paths.py): ``link_bytes`` (bytes / capacity),
    ``link_flows`` (rank pairs)."""

    def __init__(self, graph, demand, flows, routes):
        idx = paths.index(graph)
        self.graph, self.index = graph, idx
        self.pairs = [(f.src, f.dst) for f in demand]
        self.paths = [routes[p] for p in self.pairs]
        self.bytes = np.array([f.bytes for f in demand], dtype=float)
        self.rank_pairs = np.array([flows[p] for p in self.pairs], dtype=float)
        links = [idx.path_links(p) for p in self.paths]
        self.entry_flow = np.repeat(np.arange(len(links)), [len(ls) for ls in links])
        self.entry_link = np.array([l for ls in links for l in ls], dtype=np.intp)
        n = len(idx.links)
        self.link_bytes = np.bincount(self.entry_link, weights=self.bytes[self.entry_flow],
                                      minlength=n) / idx.capacity
        self.link_flows = np.bincount(self.entry_link, weights=self.rank_pairs[self.entry_flow],
                                      minlength=n)

    def completion_s(self, link_bw=DEFAULT_LINK_BW):
        """When the last byte arrives if all pairs start together (timemodel.completion)."""
        if not len(self.pairs):
            return 0.0
        return float(timemodel.completion(self.bytes, self.entry_flow, self.entry_link,
                                          bandwidths(self.graph, link_bw)).max())


def bandwidths(graph, link_bw=DEFAULT_LINK_BW):
    """Bytes/s of every link id: the edge's ``bw`` if the topology has one, else capacity x link_bw."""
    idx = paths.index(graph)
    return np.array([float(graph.edges[u, v].get("bw", idx.capacity[i] * link_bw))
                     for i, (u, v) in enumerate(idx.links)])


def route(graph, demand, flows, router="dmodk", seed=None, base=None, fabric_default=None, detected=False):
    """Routes ``demand`` with the registered pair router on top of ``base`` (link-id array of
    bytes / capacity already on the fabric). With ``fabric_default`` (a router's name: the
    controller's default routing), the routes are what the controller installs for a declared
    demand on such a fabric: the plan only where it beats the default routes
    (primitives.reroute.unless_default_as_good), else the default paths. ``detected`` (needs
    ``fabric_default``): the demand's pairs were flagged by flow detection while running on the
    default routes, so the plan is seeded with their default paths as the controller's is
    (primitives.seeding.plan, --sdnmpi-flow-seed; no seeds on ECMP) and keeps them there
    wherever its busiest link allows."""
    fn = router_of(router)
    if fabric_default is not None:
        router_of(fabric_default)
    elif detected:
        raise SimError("a detected demand runs on the default routes: give --fabric-default")
    load = None
    if base is not None and base.any():
        idx = paths.index(graph)
        load = pairs.LinkLoad()
        for i in np.nonzero(base)[0]:
            if idx.switch_link[i]:
                load.bytes[idx.links[i]] = float(base[i])
    try:
        if detected:
            routes = seeding.plan(fn, graph, pairs.merge(demand), fabric_default, load=load)
        else:
            routes = fn(graph, demand, load=load, seed=seed)
        if fabric_default is not None:
            routes, _ = reroute.unless_default_as_good(graph, demand, routes, fabric_default, load)
    except (ValueError, nx.NetworkXException) as exc:  # e.g. hosts without a path between them
        raise SimError(f"router {router}: {' '.join(str(exc).split())}") from None
    return Routed(graph, demand, flows, routes)


def link_report(graph, link_bytes, link_flows):
    """The switch-to-switch links carrying load: [{src, dst, bytes, flows}], heaviest first."""
    idx = paths.index(graph)
    name = {n: d.get("name") or n for n, d in graph.nodes(data=True)}
    rows = [{"src": name[u], "dst": name[v], "bytes": float(link_bytes[i]),
             "flows": int(link_flows[i])}
            for i, (u, v) in enumerate(idx.links) if idx.switch_link[i] and link_flows[i] > 0]
    return sorted(rows, key=lambda r: (-r["bytes"], str(r["src"]), str(r["dst"])))


def maxima(graph, link_bytes, link_flows):
    idx = paths.index(graph)
    sw = idx.switch_link
    if not sw.any():
        return 0.0, 0
    return float(link_bytes[sw].max()), int(link_flows[sw].max())
