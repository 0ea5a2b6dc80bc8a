"""Prometheus metrics on the Mininet fabric, scraped by a real Prometheus server (Debian's) every
second: during an iperf3 flow, PromQL gives the rate of the link the flow crosses within 20 % of
what iperf3 measured, and it counts a job registered and released over the RPC service."""
import json
import os

import pytest

from sdnmpi.mininet_topos.fattree import LeafSpineTopo

import ofdump
from fabric_helpers import HPL, LEAVES, N, SPINES, bridge, ip, leaf_dpid, leaf_spine_fabric
from operator_helpers import RPC_ALLOW_LOCAL, BackgroundIperf, RpcClient, prometheus_server, route_port, wait_until

LINK_BPS = 20e6
IPERF_SECONDS = 12
WINDOW = 8   # seconds of the flow's middle that the queries look at


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    topo = LeafSpineTopo(spines=SPINES, leaves=LEAVES, hosts_per_leaf=HPL, host_bw=20, fabric_bw=20)
    args = ("--sdnmpi-stats-interval", "1", "--sdnmpi-link-capacity", "%g" % LINK_BPS) + RPC_ALLOW_LOCAL
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("prometheus"), topo=topo, extra_args=args) as (ctl, fab):
        yield ctl, fab


@pytest.fixture(scope="module")
def prom(fabric, tmp_path_factory):
    ctl, _fab = fabric
    with prometheus_server(ctl.wsapi_port, tmp_path_factory.mktemp("prometheus-data")) as server:
        yield server


def peer_of(ctl, dpid, port):
    for link in ctl.rest("/sdnmpi/links"):
        for here, there in ((link["src"], link["dst"]), (link["dst"], link["src"])):
            if (here["dpid"], here["port"]) == (dpid, port):
                return there["dpid"], there["port"]
    raise AssertionError("no link at %s:%d" % (dpid, port))


def test_promql_link_rate_matches_iperf3(fabric, prom):
    ctl, fab = fabric
    leaf = leaf_dpid(1)
    uplink = route_port(fab, bridge(fab, leaf), ip(N))   # h1 -> hN leaves leaf 1 here
    spine, spine_port = peer_of(ctl, leaf, uplink)
    flow = BackgroundIperf(fab, "h1", "h%d" % N, seconds=IPERF_SECONDS)
    measured = flow.join() * 1e6
    assert measured > 0.5 * LINK_BPS, "iperf3 got %.1f Mbit/s over a %g Mbit/s link" % (measured / 1e6, LINK_BPS / 1e6)
    at = flow.end - 2   # the window [at - WINDOW, at] lies inside the flow
    out = 'switch="%s",port="%d",direction="tx"' % (leaf, uplink)
    into = 'switch="%s",port="%d",direction="rx"' % (spine, spine_port)
    rates = {
        "leaf uplink counter rate": prom.scalar("rate(sdnmpi_port_bytes_total{%s}[%ds]) * 8" % (out, WINDOW), at),
        "spine port counter rate": prom.scalar("rate(sdnmpi_port_bytes_total{%s}[%ds]) * 8" % (into, WINDOW), at),
        "leaf uplink rate gauge": prom.scalar("avg_over_time(sdnmpi_port_bytes_per_second{%s}[%ds]) * 8" % (out, WINDOW), at),
        "utilisation x capacity": prom.scalar("avg_over_time(sdnmpi_port_utilization_ratio{%s}[%ds]) * %g"
                                              % (out, WINDOW, LINK_BPS), at),
    }
    for what, got in rates.items():
        assert got == pytest.approx(measured, rel=0.2), "%s %.2f Mbit/s, iperf3 %.2f Mbit/s" % (what, got / 1e6, measured / 1e6)
    # The other uplink of leaf 1 carried nearly nothing meanwhile.
    other = 'switch="%s",port!="%d",direction="tx"' % (leaf, uplink)
    idle = [v for labels, v in prom.query("rate(sdnmpi_port_bytes_total{%s}[%ds]) * 8" % (other, WINDOW), at)
            if int(labels["port"]) > HPL]
    assert idle and max(idle) < 0.05 * measured


def test_promql_counts_jobs_topology_and_flow_entries(fabric, prom):
    ctl, fab = fabric
    assert prom.scalar("sdnmpi_jobs_active") == 0
    assert (prom.scalar("sdnmpi_switches"), prom.scalar("sdnmpi_links"), prom.scalar("sdnmpi_hosts")) == (SPINES + LEAVES, SPINES * LEAVES, N)
    client = RpcClient(ctl.rpc_port)
    try:
        job = client.register_and_plan([ip(n) for n in range(1, N + 1)])
        wait_until(lambda: prom.scalar("sdnmpi_jobs_active") == 1, 15, "Prometheus to see one active job")
        assert prom.scalar("sdnmpi_jobs_registered_total") == 1
        wait_until(lambda: prom.scalar('sdnmpi_plan_duration_seconds_count{planner="balanced"}') == 1, 15,
                   "one balanced plan in the latency histogram")
        assert prom.scalar('sdnmpi_rpc_requests_total{op="plan_allreduce"}') == 1
        client.call("release", job=job)
        wait_until(lambda: prom.scalar("sdnmpi_jobs_active") == 0, 15, "Prometheus to see no active job")
        wait_until(lambda: prom.scalar('sdnmpi_jobs_released_total{reason="client"}') == 1, 15, "one release")
    finally:
        client.close()
    # Per-switch flow entries: what OVS holds (the release changed the tables; polls catch up).
    for sw in fab.net.switches:
        wait_until(lambda sw=sw: prom.scalar('sdnmpi_switch_flow_entries{switch="%s"}' % sw.dpid)
                   == len(ofdump.flows(sw.name)), 15, "flow entries of %s" % sw.name)


def test_grafana_dashboard_queries_run_on_prometheus(fabric, prom):
    """Every query of docs/grafana-dashboard.json parses and evaluates on this Prometheus, and
    the topology panels have data."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "grafana-dashboard.json")
    with open(path) as f:
        panels = json.load(f)["panels"]
    results = {t["expr"]: prom.query(t["expr"]) for p in panels for t in p["targets"]}
    assert len(results) >= 20
    assert results["sdnmpi_switches"] and results["sdnmpi_hosts"] and results["topk(10, rate(sdnmpi_port_bytes_total[1m]))"]
