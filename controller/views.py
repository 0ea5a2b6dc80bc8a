"""Read-only views of the controller's state for operators: link load, the fabric in tiers, jobs
with their per-step routes. The web view, ``sdnmpi-ctl`` (both over JSON, controller/web.py) and
the Prometheus metrics (controller/metrics.py) all read them, so they always agree.

Rates are bit/s. A port's capacity is ``--sdnmpi-link-capacity`` if set, else the speed the switch
reports for the port; utilisation is the busier direction's rate over the capacity (None if the
capacity is unknown).
"""
import logging

from ryu.lib import dpid as dpid_lib

from sdnmpi.primitives import fabric

from .topology import MAX_PHYSICAL_PORT

LOG = logging.getLogger(__name__)


def _dpid(dpid):
    return dpid_lib.dpid_to_str(dpid)


def end_id(dpid, port):
    """The text id of a switch port, as links and routes name it: ``DPID:PORT``."""
    return "%s:%d" % (_dpid(dpid), port)


def port_capacity(core, dpid, port):
    """The port's capacity in bit/s, or None if neither the option nor the switch tells."""
    if core.settings.link_capacity > 0:
        return float(core.settings.link_capacity)
    desc = (getattr(core.datapaths.get(dpid), "ports", None) or {}).get(port)
    speed_kbps = getattr(desc, "curr_speed", 0) or 0
    return speed_kbps * 1000.0 if speed_kbps > 0 else None


def utilization(bps, capacity):
    return None if not capacity else bps / capacity


def port_loads(core):
    """Every physical port with a statistics sample: [{dpid, port, rx_bps, tx_bps, capacity_bps,
    counters}] (dpid an int, counters the switch's raw counters)."""
    out = []
    for (dpid, port), sample in sorted(core.port_stats.samples.items()):
        if port > MAX_PHYSICAL_PORT:
            continue  # LOCAL and other reserved ports carry no fabric traffic
        out.append({"dpid": dpid, "port": port, "rx_bps": sample.rx_bps, "tx_bps": sample.tx_bps,
                    "capacity_bps": port_capacity(core, dpid, port), "counters": sample.counters})
    return out


def _rates(sample):
    return (sample.rx_bps, sample.tx_bps) if sample is not None else (0.0, 0.0)


def link_loads(core):
    """Each link once, switch links first then host links:
    {id, kind ("fabric"/"host"), a: {dpid, port}, b: {dpid, port} or {host: mac}, bps: [a->b, b->a],
    utilization}. A switch link's a->b rate is a's transmit rate (b's receive rate if a has no sample)."""
    samples = core.port_stats.samples
    out = []
    for a, b in core.topology.undirected_links():
        (a_rx, a_tx), (b_rx, b_tx) = _rates(samples.get(a)), _rates(samples.get(b))
        ab = a_tx if a in samples else b_rx
        ba = b_tx if b in samples else a_rx
        caps = [c for c in (port_capacity(core, *a), port_capacity(core, *b)) if c]
        out.append({"id": "%s-%s" % (end_id(*a), end_id(*b)), "kind": "fabric",
                    "a": {"dpid": _dpid(a[0]), "port": a[1]}, "b": {"dpid": _dpid(b[0]), "port": b[1]},
                    "bps": [round(ab, 1), round(ba, 1)],
                    "utilization": utilization(max(ab, ba), min(caps) if caps else None)})
    for host in sorted(core.topology.hosts.values(), key=lambda h: (h.dpid, h.port, h.mac)):
        rx, tx = _rates(samples.get((host.dpid, host.port)))
        out.append({"id": "%s-%s" % (end_id(host.dpid, host.port), host.mac), "kind": "host",
                    "a": {"dpid": _dpid(host.dpid), "port": host.port}, "b": {"host": host.mac},
                    "bps": [round(tx, 1), round(rx, 1)],
                    "utilization": utilization(max(tx, rx), port_capacity(core, host.dpid, host.port))})
    return out


def switch_tiers(core):
    """{dpid: tier}: 0 for leaves (switches with hosts), 1 for the switches above them, ...;
    a switch reaching no leaf is put one tier above the highest."""
    heights = fabric.heights(core.topology.graph())
    top = max(heights.values(), default=-1) + 1
    return {dpid: heights.get(dpid, top) for dpid in core.topology.switches}


def switches_json(core):
    tiers = switch_tiers(core)
    tables = core.table_stats
    return [{"dpid": _dpid(d), "tier": tiers[d], "ports": core.topology.ports(d),
             "flows": tables.flows.get(d), "groups": tables.groups.get(d)}
            for d in sorted(core.topology.switches)]


def job_summary(job):
    ranks = {}
    for rank, ip in enumerate(job.hosts):
        ranks.setdefault(ip, []).append(rank)
    return {"job": job.id, "hosts": job.hosts, "ranks": ranks, "comms": sorted(job.plans),
            "trees": len(job.trees), "flows": len(job.flows())}


def _ordered_hops(core, src_ip, ports_by_switch):
    """The pair's switches in path order (from the sender's switch along the links), as
    [{dpid, port}]; switches the walk does not reach (a stale plan) come last, by dpid."""
    left = dict(ports_by_switch)
    hops = []
    host = core.topology.host_by_ip(src_ip)
    here = host.dpid if host is not None else None
    while here in left:
        port = left.pop(here)
        hops.append((here, port))
        peer = core.topology.links.get((here, port))
        here = peer.dpid if peer is not None else None
    hops += sorted(left.items())
    return [{"dpid": _dpid(d), "port": p} for d, p in hops]


def comm_steps(core, plan):
    """Per step of an Allreduce plan: [{src, dst, count, hops}] (hops empty: the pair shares a
    leaf and uses the default route)."""
    by_pair = {}
    for (dpid, src, dst), port in plan.flows.items():
        by_pair.setdefault((src, dst), {})[dpid] = port
    return [[{"src": src, "dst": dst, "count": count, "hops": _ordered_hops(core, src, by_pair.get((src, dst), {}))}
             for (src, dst), count in step]
            for step in plan.steps]


def job_detail(core, job):
    """Everything about one job: its JSON (controller/jobs.py), ranks, and per communicator the
    plan's steps with each pair's hops in path order."""
    out = job.to_json()
    out["ranks"] = job_summary(job)["ranks"]
    for comm, plan in job.plans.items():
        out["comms"][str(comm)]["steps"] = comm_steps(core, plan)
    return out


def view_json(core, rpc_service, job_id=None):
    """The web view's whole state in one answer (it polls this once a second); with ``job_id``
    also that job's `job_detail` (None once the job is gone), consistent with the rest."""
    job = rpc_service.jobs.jobs.get(job_id) if job_id is not None else None
    return {"routing": core.stats_json()["routing"],
            "job": job_detail(core, job) if job is not None else None,
            "switches": switches_json(core),
            "hosts": core.topology.to_json()["hosts"],
            "links": link_loads(core),
            "jobs": [job_summary(j) for _id, j in sorted(rpc_service.jobs.jobs.items())],
            "counters": dict(core.stats_json(), rpc=rpc_service.stats_json(),
                             switch_errors=core.counters["switch_errors"])}
