"""A job's host-pair routes as Open vSwitch really forwards them (issue 17: elided hops).

With --sdnmpi-elide-default-hops (the controller's default) a planned hop whose switch's default
route already sends the pair out of that port gets no job flow. GET /sdnmpi/jobs lists every
planned hop (`routes`: dpid, src, dst, port, `installed`). `check_job` proves, from the bridges'
own flow dumps, that
- the flows with the job's cookie are exactly its installed hops (switch, pair, output port), and
- each planned pair, walked switch by switch over the controller's links through the flow an IPv4
  packet of the pair hits (the highest priority among the routing table's flows that match it by
  address), takes exactly the planned hops out of the planned ports to its host: through the
  job's flow where the hop is installed, through the switch's default route where it is elided.
`carried` gives the packet counters of the flows a pair's packets take, hop by hop, so a test can
see its traffic on them (an elided hop's packets count on the default route).
"""
import re

from sdnmpi.controller import constants as C
from sdnmpi.controller.topology import Topology

import ofdump

PAIR_FIELDS = {"ip", "nw_src", "nw_dst"}   # the fields a flow matching an IPv4 packet by address tests
MAX_HOPS = 8


def topology(ctl):
    """The controller's view, rebuilt from /sdnmpi/topology (the graph its planners see)."""
    doc = ctl.rest("/sdnmpi/topology")
    topo = Topology()
    for sw in doc["switches"]:
        topo.add_switch(int(sw["dpid"], 16), {p: "00:00:00:00:00:00" for p in sw["ports"]})
    for link in doc["links"]:
        a = (int(link["src"]["dpid"], 16), link["src"]["port"])
        b = (int(link["dst"]["dpid"], 16), link["dst"]["port"])
        topo.saw_probe(a, b, 0.0)
        topo.saw_probe(b, a, 0.0)
    for h in doc["hosts"]:
        topo.learn_host(h["mac"], h["ip"], int(h["dpid"], 16), h["port"], "lldp", 0.0)
    return topo


def job_doc(ctl, job):
    """The job's entry of GET /sdnmpi/jobs (None once it is gone)."""
    return next((j for j in ctl.rest("/sdnmpi/jobs") if j["job"] == job), None)


def tables(fab):
    """{dpid: [flow, ...]} of every bridge (ofdump.flows), one snapshot."""
    return {int(sw.dpid, 16): ofdump.flows(sw.name) for sw in fab.net.switches}


def out_port(flow):
    m = re.fullmatch(r"output:(\d+)", flow["actions"])
    assert m, "not a single output port: %s" % flow
    return int(m.group(1))


def winner(flows, src, dst):
    """The routing-table flow (not table 0's counting entries, which go on to it) an IPv4 packet
    src -> dst hits among one bridge's ``flows``."""
    hits = [f for f in flows if not f["actions"].startswith("goto_table") and set(f["match"]) <= PAIR_FIELDS
            and f["match"].get("nw_src", src) == src and f["match"].get("nw_dst", dst) == dst]
    assert hits, "no flow for %s -> %s" % (src, dst)
    top = max(f["priority"] for f in hits)
    best = [f for f in hits if f["priority"] == top]
    assert len(best) == 1, "ambiguous flows for %s -> %s: %s" % (src, dst, best)
    return best[0]


def job_entries(tabs, job):
    """{(dpid, src ip, dst ip): out port} of the host-pair route flows with the job's cookie in
    ``tabs`` (its Bcast trees' flows, in the multicast band above, are not routes)."""
    out = {}
    for dpid, flows in tabs.items():
        for f in flows:
            if f["cookie"] == C.COOKIE_JOB | job and f["priority"] < C.PRIORITY_JOB_MULTICAST:
                assert f["priority"] >= C.PRIORITY_JOB_ROUTE, f
                assert set(f["match"]) == PAIR_FIELDS, f
                out[(dpid, f["match"]["nw_src"], f["match"]["nw_dst"])] = out_port(f)
    return out


def walk(topo, tabs, src, dst):
    """[(dpid, out port, flow)] of a packet src -> dst from src's edge switch through the flows it
    hits in ``tabs`` to dst's port (``topo``: links and hosts)."""
    target, dpid, hops = topo.host_by_ip(dst), topo.host_by_ip(src).dpid, []
    for _ in range(MAX_HOPS):
        flow = winner(tabs[dpid], src, dst)
        port = out_port(flow)
        hops.append((dpid, port, flow))
        if (dpid, port) == (target.dpid, target.port):
            return hops
        peer = topo.links.get((dpid, port))
        assert peer is not None, "%s -> %s leaves switch %#x by port %d, no switch link" % (src, dst, dpid, port)
        dpid = peer.dpid
    raise AssertionError("%s -> %s: not at its host after %d hops: %s" % (src, dst, MAX_HOPS, hops))


def check_job(ctl, fab, job, topo=None):
    """Checks the job's routes against OVS (module docstring); returns {(src, dst): [(dpid, port),
    ...]}, the way each planned pair's packets go."""
    doc = job_doc(ctl, job)
    assert doc is not None, "job %d is not live" % job
    topo = topo or topology(ctl)
    tabs = tables(fab)
    routes = {(int(r["dpid"], 16), r["src"], r["dst"]): r for r in doc["routes"]}
    held, installed = job_entries(tabs, job), {k: r["port"] for k, r in routes.items() if r["installed"]}
    assert held == installed, "job %d: OVS holds %s, the controller installed %s" % (job, held, installed)
    by_pair = {}
    for (dpid, src, dst), r in routes.items():
        by_pair.setdefault((src, dst), {})[dpid] = r["port"]
    ways = {}
    for (src, dst), hops in sorted(by_pair.items()):
        way = walk(topo, tabs, src, dst)
        assert {d: p for d, p, _f in way} == hops, (src, dst, way, hops)
        for d, _p, flow in way:
            if routes[(d, src, dst)]["installed"]:
                assert flow["cookie"] & C.COOKIE_KIND_MASK == C.COOKIE_JOB, (src, dst, d, flow)
            else:
                assert (flow["cookie"], flow["priority"]) == (C.COOKIE_ROUTE, C.PRIORITY_ROUTE), (src, dst, d, flow)
        ways[(src, dst)] = [(d, p) for d, p, _f in way]
    return ways


def switches(ways):
    """{(src, dst): [dpid, ...]} of `check_job`'s ways."""
    return {pair: [d for d, _p in way] for pair, way in ways.items()}


def ends(ways, pairs=None):
    """{"DPID:PORT"} (the web view's and REST's notation) of the ways of ``pairs`` (all: None)."""
    return {"%016x:%d" % hop for pair, way in ways.items() if pairs is None or pair in pairs for hop in way}


def carried(fab, topo, src, dst):
    """[(dpid, packets)] of the flows a packet src -> dst takes, hop by hop (an elided hop's: the
    default route's)."""
    return [(d, f["packets"]) for d, _p, f in walk(topo, tables(fab), src, dst)]
