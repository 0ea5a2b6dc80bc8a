"""Topologies for the simulator, all in the fabric-graph convention of primitives/fabric.py.

- PFSim GraphML (`from_graphml`): directed, node ``typ`` host/switch; hosts carry ``capacity``
  (processing elements) and ``mac``, switches ``dpid``; edges ``capacity`` and ``port``.
- Parameterised fat-trees (`from_spec`): ``kary:k=4``, ``leafspine:spines=2,leaves=4,hosts=2``
  (primitives/fattree.py, numbered as mininet_topos/fattree.py) and ``xgft:m=4/4,w=1/2`` (PFSim's
  XGFT generator), each with optional ``pes=`` (processing elements per host, default 1) and
  ``host_bw=`` / ``fabric_bw=`` (Mbit/s, as mininet_topos' fat-trees take them).

Every host gets ``pes`` and an IPv4 address in input order, so ``fabric.hosts(graph)`` (D-mod-K's
destination index, PFSim's ``addr``) is the GraphML host order. Every edge gets ``capacity``
(PFSim's divisor for load, default 1) and, when the topology says so, ``bw`` in bytes/s for the
time model (otherwise the model uses ``capacity x --link-bw``).
"""
import logging
import os
import xml.etree.ElementTree as ET

import networkx as nx

from .. import numeric
from ..primitives import fabric, fattree

LOG = logging.getLogger(__name__)


class TopologyError(ValueError):
    """A topology that cannot be used; the message is one line."""


def from_graphml(path):
    """The fabric graph of a PFSim GraphML file."""
    try:
        src = nx.read_graphml(path)
    except (OSError, ET.ParseError, nx.NetworkXError, KeyError, ValueError) as exc:
        raise TopologyError(f"{path}: not a readable GraphML topology ({' '.join(str(exc).split())})") from None
    name = os.path.basename(path)
    kinds = {}
    for node, data in src.nodes(data=True):
        typ = data.get("typ")
        if typ not in (fabric.HOST, fabric.SWITCH):
            raise TopologyError(f"{name}: node {node!r} has no 'typ' host or switch (got {typ!r})")
        kinds[node] = typ
    switches = [n for n in src if kinds[n] == fabric.SWITCH]
    dpids = [src.nodes[n].get("dpid") for n in switches]
    if None in dpids or len(set(dpids)) != len(dpids):
        # no (unique) dpids: number the switches in the order of their names, so that sorting
        # next hops by dpid sorts them as PFSim sorts node names
        dpid_of = {n: i + 1 for i, n in enumerate(sorted(switches))}
    else:
        dpid_of = {n: numeric.whole(d, f"{name}: switch {n!r}: dpid", TopologyError, 0, convert=True)
                   for n, d in zip(switches, dpids)}
    g = fabric.new_graph()
    g.graph["name"] = src.graph.get("name", name)
    node_of = {}
    n_host = 0
    for node in src:
        data = src.nodes[node]
        if kinds[node] == fabric.SWITCH:
            node_of[node] = dpid_of[node]
            g.add_node(dpid_of[node], kind=fabric.SWITCH, name=node)
        else:
            n_host += 1
            mac = str(data.get("mac") or fattree.host_mac(n_host)).lower()
            if mac in g:
                raise TopologyError(f"{name}: host {node!r} repeats MAC {mac}")
            node_of[node] = mac
            g.add_node(mac, kind=fabric.HOST, ip=fattree.host_ip(n_host), name=node,
                       pes=numeric.whole(data.get("capacity", 1), f"{name}: host {node!r}: capacity", TopologyError,
                                         1, convert=True))
    next_port = {}
    for u, v, data in src.edges(data=True):
        a, b = node_of[u], node_of[v]
        where = f"{name}: edge {u!r}->{v!r}"
        port = numeric.whole(data["port"], f"{where}: port", TopologyError, 1, convert=True) if "port" in data else None
        capacity = numeric.positive(data.get("capacity", 1), f"{where}: capacity", TopologyError, convert=True)
        if g.has_edge(a, b):
            if kinds[u] == fabric.SWITCH and port is not None:
                g.edges[a, b]["ports"][a] = port
            continue
        ports = {}
        for end, orig in ((a, u), (b, v)):
            if kinds[orig] == fabric.SWITCH:
                next_port[end] = next_port.get(end, 0) + 1
                ports[end] = next_port[end]
        if kinds[u] == fabric.SWITCH and port is not None:
            ports[a] = port
        g.add_edge(a, b, ports=ports, capacity=capacity)
    _check(g, name)
    return g


def _check(g, name):
    for mac in (n for n, d in g.nodes(data=True) if d["kind"] == fabric.HOST):
        ups = list(g.neighbors(mac))
        if len(ups) != 1 or g.nodes[ups[0]]["kind"] != fabric.SWITCH:
            raise TopologyError(f"{name}: host {g.nodes[mac]['name']!r} must have one link, to a switch")
    if g.number_of_nodes() and not nx.is_connected(g):
        raise TopologyError(f"{name}: the topology is not connected")
    if not any(d["kind"] == fabric.HOST for _, d in g.nodes(data=True)):
        raise TopologyError(f"{name}: no hosts")


def _params(spec, text, allowed):
    params = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in allowed:
            raise TopologyError(f"{spec}: unknown parameter {item!r} (known: {', '.join(allowed)})")
        params[key] = value
    return params


def _int(spec, params, key, default):
    try:
        value = int(params.get(key, default))
    except ValueError:
        raise TopologyError(f"{spec}: {key} must be an integer") from None
    if value < 1:
        raise TopologyError(f"{spec}: {key} must be at least 1")
    return value


def _mbit(spec, params, key):
    if key not in params:
        return None
    return numeric.positive(params[key], f"{spec}: {key} (Mbit/s)", TopologyError, convert=True) * 1e6 / 8


def from_spec(spec):
    """A GraphML path, or a parameterised fat-tree ``kind:key=value,...``."""
    kind, sep, text = spec.partition(":")
    common = ("pes", "host_bw", "fabric_bw")
    if not sep and os.path.exists(spec):
        return from_graphml(spec)
    if kind == "kary":
        p = _params(spec, text, ("k", "hosts") + common)
        k = _int(spec, p, "k", 4)
        if k % 2:
            raise TopologyError(f"{spec}: k must be even")
        g = fattree.kary(k, _int(spec, p, "hosts", k // 2))
    elif kind == "leafspine":
        p = _params(spec, text, ("spines", "leaves", "hosts") + common)
        g = fattree.leaf_spine(_int(spec, p, "spines", 2), _int(spec, p, "leaves", 4),
                               _int(spec, p, "hosts", 2))
    elif kind == "xgft":
        p = _params(spec, text, ("m", "w") + common)
        g = xgft(spec, p.get("m", "4/4"), p.get("w", "1/2"))
    elif spec.endswith(".graphml"):
        raise TopologyError(f"{spec}: no such topology file")
    else:
        raise TopologyError(f"{spec}: unknown topology (a .graphml file, kary:k=4, "
                            "leafspine:spines=2,leaves=4,hosts=2 or xgft:m=4/4,w=1/2)")
    pes = _int(spec, p, "pes", 1)
    host_bw, fabric_bw = _mbit(spec, p, "host_bw"), _mbit(spec, p, "fabric_bw")
    for n, d in g.nodes(data=True):
        if d["kind"] == fabric.HOST:
            d["pes"] = pes
    for u, v, d in g.edges(data=True):
        d.setdefault("capacity", 1.0)
        is_host = fabric.HOST in (g.nodes[u]["kind"], g.nodes[v]["kind"])
        bw = host_bw if is_host else fabric_bw
        if bw is not None:
            d["bw"] = bw
    g.graph["name"] = spec
    _check(g, spec)
    return g


def xgft(spec, m_text, w_text):
    """PFSim's XGFT(h; m; w): each level-l subtree of ``m[l-1]`` children shares ``w`` products of
    spines, every child of the subtree linked to every spine of its group."""
    try:
        m = [int(x) for x in m_text.split("/")]
        w = [int(x) for x in w_text.split("/")]
    except ValueError:
        raise TopologyError(f"{spec}: m and w are /-separated integers, e.g. m=4/4,w=1/2") from None
    if len(m) != len(w) or not m or min(m + w) < 1:
        raise TopologyError(f"{spec}: m and w need the same number (h) of positive integers")
    g = fabric.new_graph()
    counter = {"host": 0, "switch": 0}

    def build(h):
        if h == 0:
            counter["host"] += 1
            n = counter["host"]
            mac = fattree.host_mac(n)
            g.add_node(mac, kind=fabric.HOST, ip=fattree.host_ip(n), name="h%d" % n)
            return [mac]
        width = 1
        for x in w[:h]:
            width *= x
        tops = []
        for _ in range(width):
            counter["switch"] += 1
            tops.append(counter["switch"])
            fabric.add_switch(g, counter["switch"])
        for _ in range(m[h - 1]):
            for child in build(h - 1):
                for top in tops:
                    _link(g, child, top)
        return tops

    build(len(m))
    return g


def _link(g, a, b):
    ports = {}
    for end in (a, b):
        if g.nodes[end]["kind"] == fabric.SWITCH:
            ports[end] = g.degree(end) + 1
    g.add_edge(a, b, ports=ports, capacity=1.0)
