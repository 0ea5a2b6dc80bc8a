"""Prometheus metrics, served as ``GET /metrics`` on the controller's web port (controller/web.py).

Each `Metrics` has its own `CollectorRegistry` (no process-wide state), so several controllers can
live in one process, as in the unit tests. Two kinds of metric:

- state read at scrape time by `_StateCollector`: topology, per-port traffic (from the port-stats
  poller), per-switch flow and group entries, jobs, and the counters the core and the RPC service
  keep anyway;
- events counted as they happen: RPC requests and errors per op and reason, planning latency per
  planner, plan cache hits, job releases and expiries (controller/rpcmetrics.py), OpenFlow errors
  received (controller/app.py).

Names: ``sdnmpi_`` prefix, base units (bytes, seconds, ratios), ``_total`` for counters. The full
list is in docs/operator.md.
"""
import logging

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from ryu.lib import dpid as dpid_lib
from ryu.ofproto import ofproto_v1_3 as OFP

from . import views

LOG = logging.getLogger(__name__)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # the classic text format generate_latest writes
PLAN_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
RPC_BUCKETS = PLAN_BUCKETS
OFP_ERROR_TYPES = {getattr(OFP, name): name[len("OFPET_"):].lower() for name in dir(OFP) if name.startswith("OFPET_")}
PACKET_IN_KINDS = ("lldp", "arp", "ipv4", "other")
DIRECTIONS = (("rx", "rx_"), ("tx", "tx_"))


class Metrics:
    """The controller's metrics. ``rpc_service`` may be attached later (`attach_rpc`)."""

    def __init__(self, core, rpc_service=None):
        self.core = core
        self.rpc = rpc_service
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.rpc_requests = Counter("sdnmpi_rpc_requests",
                                    "RPC requests received, per op ('invalid': did not decode or validate)",
                                    ["op"], registry=reg)
        self.rpc_errors = Counter("sdnmpi_rpc_errors", "RPC requests answered with an error, per op and reason",
                                  ["op", "reason"], registry=reg)
        self.rpc_seconds = Histogram("sdnmpi_rpc_request_duration_seconds", "Time to answer an RPC request, per op",
                                     ["op"], buckets=RPC_BUCKETS, registry=reg)
        self.plan_seconds = Histogram("sdnmpi_plan_duration_seconds",
                                      "Time to compute a plan, per planner (Bcast trees: 'bcast')",
                                      ["planner"], buckets=PLAN_BUCKETS, registry=reg)
        self.install_seconds = Histogram("sdnmpi_plan_install_duration_seconds",
                                         "Time for the switches to confirm a new plan's flows, per op",
                                         ["op"], buckets=PLAN_BUCKETS, registry=reg)
        self.plan_cache_hits = Counter("sdnmpi_plan_cache_hits", "Plan requests answered from the job's plan cache",
                                       ["op"], registry=reg)
        self.plan_cache_misses = Counter("sdnmpi_plan_cache_misses", "Plan requests that computed a new plan",
                                         ["op"], registry=reg)
        self.jobs_released = Counter("sdnmpi_jobs_released",
                                     "Jobs released: by the client, by its disconnection, or by the operator (REST)",
                                     ["reason"], registry=reg)
        self.jobs_expired = Counter("sdnmpi_jobs_expired", "Jobs released because their lease expired", registry=reg)
        self.openflow_errors = Counter("sdnmpi_openflow_errors", "OpenFlow error messages received from switches",
                                       ["type"], registry=reg)
        reg.register(_StateCollector(self))

    def attach_rpc(self, rpc_service):
        self.rpc = rpc_service

    def openflow_error(self, err_type):
        self.openflow_errors.labels(type=OFP_ERROR_TYPES.get(err_type, str(err_type))).inc()

    def exposition(self):
        """The text exposition format of every metric (the body of GET /metrics)."""
        return generate_latest(self.registry)


class _StateCollector:
    """Reads the controller's state at each scrape."""

    def __init__(self, metrics):
        self.metrics = metrics

    def describe(self):
        return []  # names vary with the state; nothing to check at registration

    def collect(self):
        core = self.metrics.core
        yield from _topology(core)
        yield from _ports(core)
        yield from _tables(core)
        yield from _controller(core)
        if self.metrics.rpc is not None:
            yield from _jobs(self.metrics.rpc)


def _gauge(name, doc, value):
    return GaugeMetricFamily(name, doc, value=value)


def _topology(core):
    topo = core.topology
    yield _gauge("sdnmpi_switches", "Switches connected and known", len(topo.switches))
    yield _gauge("sdnmpi_links", "Switch-to-switch links discovered (each counted once)", len(topo.undirected_links()))
    yield _gauge("sdnmpi_hosts", "Hosts known", len(topo.hosts))
    info = GaugeMetricFamily("sdnmpi_routing_policy_info", "The default routing policy", labels=["policy"])
    info.add_metric([core.stats_json()["routing"]], 1)
    yield info


def _ports(core):
    labels = ["switch", "port", "direction"]
    rate = GaugeMetricFamily("sdnmpi_port_bytes_per_second", "Port throughput between the last two polls",
                             labels=labels)
    util = GaugeMetricFamily("sdnmpi_port_utilization_ratio",
                             "Port throughput over its capacity (only where the capacity is known)", labels=labels)
    capacity = GaugeMetricFamily("sdnmpi_port_capacity_bytes_per_second",
                                 "Port capacity (--sdnmpi-link-capacity or the switch's reported speed)",
                                 labels=["switch", "port"])
    totals = {counter: CounterMetricFamily("sdnmpi_port_" + name, doc, labels=labels) for counter, name, doc in (
        ("bytes", "bytes", "Bytes through the port, as the switch counts them"),
        ("packets", "packets", "Packets through the port"),
        ("dropped", "dropped_packets", "Packets the switch dropped at the port"),
        ("errors", "errors", "Receive or transmit errors at the port"))}
    for load in views.port_loads(core):
        switch, port = dpid_lib.dpid_to_str(load["dpid"]), str(load["port"])
        counters, cap = load["counters"], load["capacity_bps"]
        if cap:
            capacity.add_metric([switch, port], cap / 8)
        for direction, prefix in DIRECTIONS:
            bps = load[prefix + "bps"]
            key = [switch, port, direction]
            rate.add_metric(key, bps / 8)
            if cap:
                util.add_metric(key, views.utilization(bps, cap))
            for counter, family in totals.items():
                family.add_metric(key, counters[prefix + counter])
    yield rate
    yield util
    yield capacity
    yield from totals.values()


def _tables(core):
    flows = GaugeMetricFamily("sdnmpi_switch_flow_entries", "Flow entries in the switch, all tables", labels=["switch"])
    groups = GaugeMetricFamily("sdnmpi_switch_group_entries", "Group entries in the switch", labels=["switch"])
    for family, table in ((flows, core.table_stats.flows), (groups, core.table_stats.groups)):
        for dpid, count in sorted(table.items()):
            family.add_metric([dpid_lib.dpid_to_str(dpid)], count)
    yield flows
    yield groups


def _controller(core):
    c = core.counters
    packet_in = CounterMetricFamily("sdnmpi_packet_in", "Packet-ins handled, per kind", labels=["kind"])
    for kind in PACKET_IN_KINDS:
        packet_in.add_metric([kind], c["packet_in_" + kind])
    yield packet_in
    for name, key, doc in (("malformed_packets", "malformed", "Malformed packet-ins dropped"),
                           ("arp_replies", "arp_replies", "ARP requests answered by the controller"),
                           ("arp_probes", "arp_probes", "ARP probes sent for unknown hosts"),
                           ("arp_probes_limited", "arp_probes_limited",
                            "ARP probes not sent: over a port's or the controller's probe budget"),
                           ("route_recomputes", "route_recomputes", "Default route recomputations"),
                           ("handler_errors", "handler_errors", "Unexpected exceptions caught in handlers")):
        yield CounterMetricFamily("sdnmpi_" + name, doc, value=c[key])
    yield CounterMetricFamily("sdnmpi_hosts_refused_port_full",
                              "New hosts refused at an edge port that has the most hosts one port may have",
                              value=core.topology.port_full)


def _jobs(rpc_service):
    yield _gauge("sdnmpi_jobs_active", "MPI jobs registered and not yet released", len(rpc_service.jobs.jobs))
    c = rpc_service.counters
    yield CounterMetricFamily("sdnmpi_jobs_registered", "MPI jobs registered", value=c["jobs_registered"])
    yield CounterMetricFamily("sdnmpi_rpc_connections", "RPC client connections accepted", value=c["connections"])
    yield _gauge("sdnmpi_rpc_open_connections", "RPC client connections open now", rpc_service.open_connections)
    closed = CounterMetricFamily("sdnmpi_rpc_connections_closed", "RPC connections the controller closed or refused",
                                 labels=["reason"])
    for reason, key in (("limit", "connections_refused"), ("idle", "idle_closed"), ("slow", "slow_closed")):
        closed.add_metric([reason], c[key])
    yield closed
    yield CounterMetricFamily("sdnmpi_allreduce_plans", "Allreduce plans computed and installed",
                              value=c["allreduce_plans"])
    yield CounterMetricFamily("sdnmpi_bcast_trees", "Bcast trees computed and installed", value=c["bcast_trees"])
